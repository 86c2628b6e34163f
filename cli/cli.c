/* cli.c -- the helpers every kiln subcommand shares: a buffered writer that
 * keeps the first write error, usage-error reporting with sysexits codes,
 * strict number parsers (bad numbers are usage errors, never silently 0), and
 * a bump arena so that commands holding millions of cells in memory do one
 * allocation per megabyte instead of one per cell.
 */
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "storage/hfile/cell.h"

/* ------------------------------------------------------------------ output */

void
cli_out_init(cli_out *o, int fd)
{
    o->fd = fd;
    buf_init(&o->buf);
    o->err_errno = 0;
}

kiln_status
cli_out_flush(cli_out *o, kiln_err *err)
{
    size_t off = 0;
    while (o->err_errno == 0 && off < o->buf.len) {
        ssize_t n = write(o->fd, o->buf.data + off, o->buf.len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            o->err_errno = errno;
            break;
        }
        off += (size_t)n;
    }
    buf_reset(&o->buf);
    if (o->err_errno != 0) {
        return status_set_errno(err, o->err_errno, "%s: write failed",
                                o->fd == STDOUT_FILENO ? "stdout" : "output");
    }
    return KILN_OK;
}

kiln_status
cli_out_close(cli_out *o, kiln_err *err)
{
    kiln_status st = cli_out_flush(o, err);
    buf_free(&o->buf);
    return st;
}

void
cli_out_write(cli_out *o, const void *p, size_t n)
{
    buf_append(&o->buf, p, n);
}

void
cli_out_str(cli_out *o, const char *s)
{
    buf_append(&o->buf, s, strlen(s));
}

void
cli_out_printf(cli_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    buf_reserve(&o->buf, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf((char *)o->buf.data + o->buf.len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    o->buf.len += (size_t)n;
}

void
cli_out_binary(cli_out *o, const uint8_t *p, size_t n)
{
    cell_to_string_binary(&o->buf, p, n);
}

/* ------------------------------------------------------------------ errors */

int
cli_usage_error(const char *context, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", CLI_PROG);
    if (context != NULL)
        fprintf(stderr, "%s: ", context);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s%s%s --help'.\n", CLI_PROG, context ? " " : "",
            context ? context : "");
    return EX_USAGE;
}

int
cli_report(const kiln_err *err)
{
    fprintf(stderr, "%s: %s\n", CLI_PROG,
            err->msg[0] != '\0' ? err->msg : status_name(err->code));
    return status_exit_code(err->code);
}

/* ------------------------------------------------------------------ parsing */

int
cli_parse_u64(const char *s, uint64_t *out)
{
    if (s == NULL || *s == '\0')
        return -1;
    uint64_t v = 0;
    for (const char *p = s; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int
cli_parse_i64(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (n > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == n)
        return -1;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (limit - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

int
cli_parse_size(const char *s, uint64_t *out)
{
    if (s == NULL || *s == '\0')
        return -1;
    size_t n = strlen(s);
    unsigned shift = 0;
    switch (s[n - 1]) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    default: break;
    }
    char digits[32];
    size_t dn = shift ? n - 1 : n;
    if (dn == 0 || dn >= sizeof digits)
        return -1;
    memcpy(digits, s, dn);
    digits[dn] = '\0';
    uint64_t v;
    if (cli_parse_u64(digits, &v) != 0 || v > (UINT64_MAX >> shift))
        return -1;
    *out = v << shift;
    return 0;
}

/* ------------------------------------------------------------------ arena */

struct cli_arena_chunk {
    cli_arena_chunk *next;
    size_t size, used;
    _Alignas(8) uint8_t data[];
};

void
cli_arena_init(cli_arena *a, size_t chunk_size)
{
    a->head = NULL;
    a->chunk_size = chunk_size ? chunk_size : (1u << 20);
    a->bytes = 0;
}

void *
cli_arena_alloc(cli_arena *a, size_t n)
{
    size_t need = (n + 7) & ~(size_t)7;
    cli_arena_chunk *c = a->head;
    if (c == NULL || c->size - c->used < need) {
        size_t size = need > a->chunk_size ? need : a->chunk_size;
        c = kiln_malloc(sizeof *c + size);
        c->size = size;
        c->used = 0;
        /* An oversized string gets a chunk of its own behind the current one,
         * so the room left in the current chunk is not thrown away. */
        if (need > a->chunk_size && a->head != NULL) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = c->data + c->used;
    c->used += need;
    a->bytes += n;
    return p;
}

void
cli_arena_free(cli_arena *a)
{
    cli_arena_chunk *c = a->head;
    while (c != NULL) {
        cli_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->bytes = 0;
}
