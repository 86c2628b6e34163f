/* resp.c -- RESP2 command parsing and reply writing (resp.h). Multibulk
 * requests are "*<argc>\r\n" followed by argc "$<len>\r\n<bytes>\r\n"; an
 * inline command is one line of space-separated words. Lengths are decimal
 * without sign or leading '+', bounded before any arithmetic can overflow.
 */
#include "serving/resp.h"

#include <stdio.h>
#include <string.h>

/* Parse a decimal at p up to the CRLF ending the line. Returns the index
 * just after the CRLF, 0 if the line is incomplete, -1 if malformed. */
static long
resp_line_number(const uint8_t *p, size_t n, size_t at, long long *out)
{
    const uint8_t *cr = memchr(p + at, '\r', n - at);
    if (cr == NULL) {
        /* A number line longer than 20 digits cannot be valid. */
        return n - at > 24 ? -1 : 0;
    }
    size_t end = (size_t)(cr - p);
    if (end + 1 >= n)
        return 0;
    if (cr[1] != '\n')
        return -1;
    size_t i = at;
    int neg = 0;
    if (i < end && p[i] == '-') {
        neg = 1;
        i++;
    }
    if (i == end || end - i > 18)
        return -1;
    long long v = 0;
    for (; i < end; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    *out = neg ? -v : v;
    return (long)(end + 2);
}

static resp_parse_result
resp_parse_inline(const uint8_t *p, size_t n, kslice *argv, size_t max_args, size_t max_bulk,
                  size_t *argc, size_t *consumed, const char **why)
{
    const uint8_t *nl = memchr(p, '\n', n);
    if (nl == NULL) {
        if (n > max_bulk) {
            *why = "Protocol error: too big inline request";
            return RESP_ERROR;
        }
        return RESP_INCOMPLETE;
    }
    size_t len = (size_t)(nl - p);
    *consumed = len + 1;
    if (len > 0 && p[len - 1] == '\r')
        len--;
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && (p[i] == ' ' || p[i] == '\t'))
            i++;
        if (i == len)
            break;
        size_t s = i;
        while (i < len && p[i] != ' ' && p[i] != '\t')
            i++;
        if (k == max_args) {
            *why = "Protocol error: too many arguments";
            return RESP_ERROR;
        }
        argv[k++] = kslice_make(p + s, i - s);
    }
    *argc = k;
    return k == 0 ? RESP_EMPTY : RESP_COMMAND;
}

resp_parse_result
resp_parse(const uint8_t *p, size_t n, kslice *argv, size_t max_args, size_t max_bulk,
           size_t *argc, size_t *consumed, const char **why)
{
    *argc = 0;
    *consumed = 0;
    *why = NULL;
    if (n == 0)
        return RESP_INCOMPLETE;
    if (p[0] != '*')
        return resp_parse_inline(p, n, argv, max_args, max_bulk, argc, consumed, why);
    long long count;
    long at = resp_line_number(p, n, 1, &count);
    if (at == 0)
        return RESP_INCOMPLETE;
    if (at < 0 || count > (long long)max_args) {
        *why = at < 0 ? "Protocol error: invalid multibulk length"
                      : "Protocol error: too many arguments";
        return RESP_ERROR;
    }
    if (count <= 0) {
        *consumed = (size_t)at;
        return RESP_EMPTY;
    }
    size_t pos = (size_t)at;
    for (long long k = 0; k < count; k++) {
        if (pos >= n)
            return RESP_INCOMPLETE;
        if (p[pos] != '$') {
            *why = "Protocol error: expected '$'";
            return RESP_ERROR;
        }
        long long len;
        long next = resp_line_number(p, n, pos + 1, &len);
        if (next == 0)
            return RESP_INCOMPLETE;
        if (next < 0 || len < 0 || (unsigned long long)len > max_bulk) {
            *why = "Protocol error: invalid bulk length";
            return RESP_ERROR;
        }
        pos = (size_t)next;
        if (n - pos < (size_t)len + 2)
            return RESP_INCOMPLETE;
        if (p[pos + (size_t)len] != '\r' || p[pos + (size_t)len + 1] != '\n') {
            *why = "Protocol error: bulk string not ended by CRLF";
            return RESP_ERROR;
        }
        argv[k] = kslice_make(p + pos, (size_t)len);
        pos += (size_t)len + 2;
    }
    *argc = (size_t)count;
    *consumed = pos;
    return RESP_COMMAND;
}

int
resp_arg_is(kslice arg, const char *name)
{
    size_t n = strlen(name);
    if (arg.n != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        int c = arg.p[i];
        if (c >= 'a' && c <= 'z')
            c -= 32;
        int d = (unsigned char)name[i];
        if (d >= 'a' && d <= 'z')
            d -= 32;
        if (c != d)
            return 0;
    }
    return 1;
}

static void
resp_add_line(kbuf *out, char type, const char *s, size_t n)
{
    buf_reserve(out, n + 3);
    out->data[out->len++] = (uint8_t)type;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\r' && s[i] != '\n')
            out->data[out->len++] = (uint8_t)s[i];
    }
    out->data[out->len++] = '\r';
    out->data[out->len++] = '\n';
}

void
resp_add_simple(kbuf *out, const char *s)
{
    resp_add_line(out, '+', s, strlen(s));
}

void
resp_add_error(kbuf *out, const char *msg)
{
    resp_add_line(out, '-', msg, strlen(msg));
}

/* Append "<type><decimal>\r\n". */
static void
resp_add_number(kbuf *out, char type, int64_t v)
{
    char tmp[24];
    int neg = v < 0;
    uint64_t u = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    size_t k = sizeof tmp;
    do {
        tmp[--k] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (neg)
        tmp[--k] = '-';
    buf_reserve(out, sizeof tmp - k + 3);
    out->data[out->len++] = (uint8_t)type;
    memcpy(out->data + out->len, tmp + k, sizeof tmp - k);
    out->len += sizeof tmp - k;
    out->data[out->len++] = '\r';
    out->data[out->len++] = '\n';
}

void
resp_add_int(kbuf *out, int64_t v)
{
    resp_add_number(out, ':', v);
}

void
resp_add_bulk(kbuf *out, const void *p, size_t n)
{
    resp_add_number(out, '$', (int64_t)n);
    buf_reserve(out, n + 2);
    if (n > 0)
        memcpy(out->data + out->len, p, n);
    out->len += n;
    out->data[out->len++] = '\r';
    out->data[out->len++] = '\n';
}

void
resp_add_nil(kbuf *out)
{
    buf_append(out, "$-1\r\n", 5);
}

void
resp_add_array(kbuf *out, size_t n)
{
    resp_add_number(out, '*', (int64_t)n);
}
