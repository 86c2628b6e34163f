/* http_client.c -- blocking keep-alive HTTP/1.1 GETs (http_client.h). The
 * head is read into a buffer until the blank line, parsed strictly, then
 * the body is read to its Content-Length. A request that fails before any
 * byte of its response arrived on a reused connection is retried once on a
 * fresh one (the server may have closed an idle connection).
 */
#include "serving/http_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serving/http.h"
#include "serving/net.h"

struct http_client {
    net_addr addr;
    int timeout_ms;
    int fd;
    int used;                     /* requests answered on this connection */
    kbuf in;                      /* received bytes not consumed yet */
    kbuf body;
    kbuf req;
};

static int
http_client_digits(kslice s, uint64_t *out)
{
    if (s.n == 0 || s.n > 19)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (s.p[i] < '0' || s.p[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s.p[i] - '0');
    }
    *out = v;
    return 0;
}

static kslice
http_client_trim(kslice s)
{
    while (s.n > 0 && (s.p[0] == ' ' || s.p[0] == '\t')) {
        s.p++;
        s.n--;
    }
    while (s.n > 0 && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t'))
        s.n--;
    return s;
}

kiln_status
http_client_parse_head(const uint8_t *p, size_t head_len, http_client_response *out,
                       kiln_err *err)
{
    memset(out, 0, sizeof *out);
    if (head_len < 16 || memcmp(p, "HTTP/1.", 7) != 0 || p[7] < '0' || p[7] > '9' ||
        p[8] != ' ')
        return status_set(err, KILN_CORRUPTION, "response: not an HTTP/1.x status line");
    uint64_t status;
    if (http_client_digits(kslice_make(p + 9, 3), &status) != 0 || status < 100 ||
        (p[12] != ' ' && p[12] != '\r'))
        return status_set(err, KILN_CORRUPTION, "response: bad status code");
    out->status = (int)status;
    out->close = p[7] == '0';
    int have_length = 0;
    const uint8_t *end = p + head_len;
    const uint8_t *cur = memchr(p, '\n', head_len);
    if (cur == NULL)
        return status_set(err, KILN_CORRUPTION, "response: no line end");
    cur++;
    while (cur < end) {
        const uint8_t *nl = memchr(cur, '\n', (size_t)(end - cur));
        if (nl == NULL)
            return status_set(err, KILN_CORRUPTION, "response: unterminated header");
        kslice line = kslice_make(cur, (size_t)(nl - cur));
        cur = nl + 1;
        if (line.n > 0 && line.p[line.n - 1] == '\r')
            line.n--;
        if (line.n == 0)
            break;
        const uint8_t *colon = memchr(line.p, ':', line.n);
        if (colon == NULL || colon == line.p)
            return status_set(err, KILN_CORRUPTION, "response: malformed header");
        kslice name = kslice_make(line.p, (size_t)(colon - line.p));
        kslice value = http_client_trim(kslice_make(colon + 1, line.n - name.n - 1));
        uint64_t v;
        if (http_slice_ieq(name, "content-length")) {
            if (http_client_digits(value, &v) != 0 || (have_length && v != out->content_length))
                return status_set(err, KILN_CORRUPTION, "response: bad Content-Length");
            out->content_length = v;
            have_length = 1;
        } else if (http_slice_ieq(name, "transfer-encoding")) {
            return status_set(err, KILN_UNSUPPORTED, "response: chunked bodies are not read");
        } else if (http_slice_ieq(name, "connection")) {
            if (http_slice_ieq(value, "close"))
                out->close = 1;
            else if (http_slice_ieq(value, "keep-alive"))
                out->close = 0;
        } else if (http_slice_ieq(name, "x-kiln-version")) {
            if (http_client_digits(value, &v) != 0)
                return status_set(err, KILN_CORRUPTION, "response: bad X-Kiln-Version");
            out->has_version = 1;
            out->version = v;
        } else if (http_slice_ieq(name, "x-timestamp")) {
            int neg = value.n > 0 && value.p[0] == '-';
            if (http_client_digits(kslice_make(value.p + neg, value.n - (size_t)neg), &v) != 0 ||
                v > (uint64_t)INT64_MAX)
                return status_set(err, KILN_CORRUPTION, "response: bad X-Timestamp");
            out->has_timestamp = 1;
            out->timestamp = neg ? -(int64_t)v : (int64_t)v;
        } else if (http_slice_ieq(name, "content-type")) {
            size_t n = value.n < sizeof out->content_type - 1 ? value.n
                                                               : sizeof out->content_type - 1;
            memcpy(out->content_type, value.p, n);
            out->content_type[n] = '\0';
        }
    }
    if (!have_length)
        return status_set(err, KILN_CORRUPTION, "response: no Content-Length");
    if (out->content_length > HTTP_CLIENT_BODY_MAX)
        return status_set(err, KILN_CORRUPTION, "response: body of %llu bytes is too large",
                          (unsigned long long)out->content_length);
    return KILN_OK;
}

kiln_status
http_client_open(const char *addr, int timeout_ms, http_client **out, kiln_err *err)
{
    *out = NULL;
    http_client *c = kiln_calloc(1, sizeof *c);
    c->fd = -1;
    c->timeout_ms = timeout_ms;
    kiln_status st = net_parse_addr(addr, &c->addr, err);
    if (st == KILN_OK)
        st = net_connect(&c->addr, timeout_ms, timeout_ms, &c->fd, err);
    if (st != KILN_OK) {
        http_client_close(c);
        return st;
    }
    *out = c;
    return KILN_OK;
}

void
http_client_close(http_client *c)
{
    if (c == NULL)
        return;
    if (c->fd >= 0)
        close(c->fd);
    buf_free(&c->in);
    buf_free(&c->body);
    buf_free(&c->req);
    free(c);
}

static kiln_status
http_client_send_all(http_client *c, kiln_err *err)
{
    size_t off = 0;
    while (off < c->req.len) {
        ssize_t n = send(c->fd, c->req.data + off, c->req.len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return status_set_errno(err, n < 0 ? errno : EPIPE, "server %s: send",
                                    c->addr.text);
        off += (size_t)n;
    }
    return KILN_OK;
}

/* Read more bytes into c->in. 0 bytes (EOF) is KILN_IO "connection closed". */
static kiln_status
http_client_fill(http_client *c, kiln_err *err)
{
    buf_reserve(&c->in, 64 * 1024);
    for (;;) {
        ssize_t n = recv(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len, 0);
        if (n > 0) {
            c->in.len += (size_t)n;
            return KILN_OK;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            return status_set(err, KILN_IO, "server %s: connection closed", c->addr.text);
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return status_set(err, KILN_IO, "server %s: no answer within %d ms", c->addr.text,
                              c->timeout_ms);
        return status_set_errno(err, errno, "server %s: recv", c->addr.text);
    }
}

static kiln_status
http_client_exchange(http_client *c, http_client_response *out, int *got_bytes, kiln_err *err)
{
    *got_bytes = 0;
    kiln_status st = http_client_send_all(c, err);
    if (st != KILN_OK)
        return st;
    size_t scan = 0, head;
    while ((head = http_head_end(c->in.data, c->in.len, &scan)) == 0) {
        if (c->in.len >= HTTP_CLIENT_HEAD_MAX)
            return status_set(err, KILN_CORRUPTION, "server %s: response head too large",
                              c->addr.text);
        st = http_client_fill(c, err);
        if (st != KILN_OK)
            return st;
        *got_bytes = 1;
    }
    *got_bytes = 1;
    st = http_client_parse_head(c->in.data, head, out, err);
    if (st != KILN_OK)
        return st;
    size_t need = head + (size_t)out->content_length;
    while (c->in.len < need) {
        buf_reserve(&c->in, need - c->in.len);
        st = http_client_fill(c, err);
        if (st != KILN_OK)
            return st;
    }
    buf_reset(&c->body);
    buf_append(&c->body, c->in.data + head, (size_t)out->content_length);
    memmove(c->in.data, c->in.data + need, c->in.len - need);
    c->in.len -= need;
    out->body = buf_slice(&c->body);
    return KILN_OK;
}

static void
http_client_str(kbuf *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

kiln_status
http_client_get(http_client *c, const char *target, const char *accept,
                http_client_response *out, kiln_err *err)
{
    buf_reset(&c->req);
    http_client_str(&c->req, "GET ");
    http_client_str(&c->req, target);
    http_client_str(&c->req, " HTTP/1.1\r\nHost: ");
    http_client_str(&c->req, c->addr.text);
    http_client_str(&c->req, "\r\nUser-Agent: kiln/" KILN_VERSION "\r\n");
    if (accept != NULL) {
        http_client_str(&c->req, "Accept: ");
        http_client_str(&c->req, accept);
        http_client_str(&c->req, "\r\n");
    }
    http_client_str(&c->req, "\r\n");
    for (int attempt = 0;; attempt++) {
        if (c->fd < 0) {
            buf_reset(&c->in);
            c->used = 0;
            kiln_status st = net_connect(&c->addr, c->timeout_ms, c->timeout_ms, &c->fd, err);
            if (st != KILN_OK)
                return st;
        }
        int got = 0;
        kiln_err e2;
        status_clear(&e2);
        kiln_status st = http_client_exchange(c, out, &got, &e2);
        if (st == KILN_OK) {
            c->used++;
            if (out->close) {
                close(c->fd);
                c->fd = -1;
            }
            return KILN_OK;
        }
        int retry = attempt == 0 && c->used > 0 && !got && st == KILN_IO;
        close(c->fd);
        c->fd = -1;
        if (!retry)
            return status_set(err, e2.code, "%s", e2.msg);
    }
}
