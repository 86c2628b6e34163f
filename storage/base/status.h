/* status.h -- error codes and the caller-owned error record.
 *
 * Every fallible function in Kiln returns a kiln_status (0 = OK) and takes a
 * kiln_err * last. The first error recorded wins: later status_set() calls on
 * an err that already holds an error are ignored, so the message names the
 * root cause. Messages read "context: detail", e.g.
 * "part-00003.hfile: block checksum mismatch at offset 1048576".
 *
 * Thread-safety: a kiln_err belongs to one thread at a time.
 */
#ifndef KILN_STATUS_H
#define KILN_STATUS_H

#include <stddef.h>

typedef enum kiln_status {
    KILN_OK = 0,
    KILN_NOT_FOUND,     /* key, file or table absent */
    KILN_CORRUPTION,    /* bytes on disk or on the wire are not what the format says */
    KILN_IO,            /* a system call failed; err->sys_errno holds errno */
    KILN_INVALID,       /* bad argument or bad user input */
    KILN_NOMEM,         /* allocation failed */
    KILN_UNSUPPORTED,   /* valid but not implemented (a codec, an encoding) */
    KILN_EXISTS,        /* target already exists */
    KILN_BUSY,          /* locked by someone else */
    KILN_INTERNAL,      /* a broken invariant that is not the caller's fault */
    KILN_CANCELLED      /* stopped on request (a stop callback) before it finished */
} kiln_status;

#define STATUS_MSG_MAX 512

typedef struct kiln_err {
    kiln_status code;
    int sys_errno;               /* errno captured at the failing call, or 0 */
    char msg[STATUS_MSG_MAX];    /* "context: detail", NUL-terminated */
} kiln_err;

/* Reset err to OK. err may be NULL. */
void status_clear(kiln_err *err);

/* Record an error unless one is already recorded (first error wins).
 * Returns code, so callers can write `return status_set(err, ...)`.
 * err may be NULL (the code is still returned). */
kiln_status status_set(kiln_err *err, kiln_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like status_set with KILN_IO, appending ": strerror(errnum)" and saving errnum. */
kiln_status status_set_errno(kiln_err *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Short lower-case name of a code ("corruption", "io error", ...). */
const char *status_name(kiln_status code);

/* The sysexits.h exit code a main() should use for this status. */
int status_exit_code(kiln_status code);

#endif
