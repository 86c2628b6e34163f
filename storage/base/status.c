/* status.c -- error codes and the first-error-wins error record. */
#include "storage/base/status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

void
status_clear(kiln_err *err)
{
    if (err == NULL)
        return;
    err->code = KILN_OK;
    err->sys_errno = 0;
    err->msg[0] = '\0';
}

static void
status_vset(kiln_err *err, kiln_status code, int errnum, const char *fmt, va_list ap)
{
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    if (n < 0)
        err->msg[0] = '\0';
    if (errnum != 0) {
        size_t used = strnlen(err->msg, sizeof err->msg);
        snprintf(err->msg + used, sizeof err->msg - used, ": %s", strerror(errnum));
    }
    err->code = code;
    err->sys_errno = errnum;
}

kiln_status
status_set(kiln_err *err, kiln_status code, const char *fmt, ...)
{
    if (err == NULL || err->code != KILN_OK || code == KILN_OK)
        return code;
    va_list ap;
    va_start(ap, fmt);
    status_vset(err, code, 0, fmt, ap);
    va_end(ap);
    return code;
}

kiln_status
status_set_errno(kiln_err *err, int errnum, const char *fmt, ...)
{
    kiln_status code = errnum == ENOMEM ? KILN_NOMEM : KILN_IO;
    if (errnum == ENOENT)
        code = KILN_NOT_FOUND;
    else if (errnum == EEXIST)
        code = KILN_EXISTS;
    if (err == NULL || err->code != KILN_OK)
        return code;
    va_list ap;
    va_start(ap, fmt);
    status_vset(err, code, errnum, fmt, ap);
    va_end(ap);
    return code;
}

const char *
status_name(kiln_status code)
{
    switch (code) {
    case KILN_OK:          return "ok";
    case KILN_NOT_FOUND:   return "not found";
    case KILN_CORRUPTION:  return "corruption";
    case KILN_IO:          return "io error";
    case KILN_INVALID:     return "invalid argument";
    case KILN_NOMEM:       return "out of memory";
    case KILN_UNSUPPORTED: return "unsupported";
    case KILN_EXISTS:      return "already exists";
    case KILN_BUSY:        return "busy";
    case KILN_INTERNAL:    return "internal error";
    case KILN_CANCELLED:   return "cancelled";
    }
    return "unknown";
}

int
status_exit_code(kiln_status code)
{
    switch (code) {
    case KILN_OK:          return 0;
    case KILN_NOT_FOUND:   return EX_NOINPUT;
    case KILN_CORRUPTION:  return EX_DATAERR;
    case KILN_IO:          return EX_IOERR;
    case KILN_INVALID:     return EX_USAGE;
    case KILN_NOMEM:       return EX_OSERR;
    case KILN_UNSUPPORTED: return EX_DATAERR;
    case KILN_EXISTS:      return EX_CANTCREAT;
    case KILN_BUSY:        return EX_TEMPFAIL;
    case KILN_INTERNAL:    return EX_SOFTWARE;
    case KILN_CANCELLED:   return EX_TEMPFAIL;
    }
    return EX_SOFTWARE;
}
