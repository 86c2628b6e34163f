/* http.c -- request-head parsing and URL coding of http.h. The grammar is
 * RFC 9112's, held strictly: CRLF line ends, a token method, an origin-form
 * target, "HTTP/1.x", token header names directly followed by ':', values
 * without control bytes, no obsolete line folding, one Host in HTTP/1.1 and
 * consistent Content-Length headers. Nothing is copied; every slice points
 * into the caller's buffer.
 */
#include "serving/http.h"

#include <string.h>

/* RFC 9110 tchar. */
static int
http_is_tchar(uint8_t c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return 1;
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int
http_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

int
http_slice_ieq(kslice s, const char *lit)
{
    size_t n = strlen(lit);
    if (s.n != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (http_lower(s.p[i]) != http_lower((unsigned char)lit[i]))
            return 0;
    }
    return 1;
}

size_t
http_head_end(const uint8_t *p, size_t n, size_t *scan)
{
    size_t i = *scan > 3 ? *scan - 3 : 0;
    for (; i + 4 <= n; i++) {
        const uint8_t *q = memchr(p + i, '\r', n - i);
        if (q == NULL)
            break;
        i = (size_t)(q - p);
        if (i + 4 <= n && q[1] == '\n' && q[2] == '\r' && q[3] == '\n')
            return i + 4;
    }
    *scan = n;
    return 0;
}

int
http_oversize_status(const uint8_t *p, size_t n)
{
    return memchr(p, '\n', n) == NULL ? 414 : 431;
}

static int
http_fail(http_error *e, int status, const char *reason)
{
    e->status = status;
    e->reason = reason;
    return -1;
}

/* Trim optional whitespace (SP / HTAB) on both ends. */
static kslice
http_trim(kslice s)
{
    while (s.n > 0 && (s.p[0] == ' ' || s.p[0] == '\t')) {
        s.p++;
        s.n--;
    }
    while (s.n > 0 && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t'))
        s.n--;
    return s;
}

/* Does the comma-separated token list hold tok (case-insensitive)? */
static int
http_list_has(kslice v, const char *tok)
{
    while (v.n > 0) {
        const uint8_t *comma = memchr(v.p, ',', v.n);
        size_t len = comma ? (size_t)(comma - v.p) : v.n;
        if (http_slice_ieq(http_trim(kslice_make(v.p, len)), tok))
            return 1;
        if (comma == NULL)
            break;
        v.p += len + 1;
        v.n -= len + 1;
    }
    return 0;
}

static int
http_parse_u64(kslice s, uint64_t *out)
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

/* Parse "METHOD SP TARGET SP HTTP/1.x" (line without its CRLF). */
static int
http_parse_request_line(kslice line, http_request *req, http_error *e)
{
    size_t i = 0;
    while (i < line.n && http_is_tchar(line.p[i]))
        i++;
    if (i == 0 || i >= line.n || line.p[i] != ' ')
        return http_fail(e, 400, "malformed request line");
    req->method = kslice_make(line.p, i);
    size_t t0 = ++i;
    while (i < line.n && line.p[i] > ' ' && line.p[i] != 0x7F)
        i++;
    if (i == t0 || i >= line.n || line.p[i] != ' ')
        return http_fail(e, 400, "malformed request line");
    req->target = kslice_make(line.p + t0, i - t0);
    kslice v = kslice_make(line.p + i + 1, line.n - i - 1);
    if (v.n != 8 || memcmp(v.p, "HTTP/", 5) != 0 || v.p[6] != '.' || v.p[5] < '0' ||
        v.p[5] > '9' || v.p[7] < '0' || v.p[7] > '9')
        return http_fail(e, 400, "malformed HTTP version");
    if (v.p[5] != '1')
        return http_fail(e, 505, "HTTP version not supported");
    req->version_minor = v.p[7] - '0';
    if (req->target.p[0] != '/')
        return http_fail(e, 400, "request target must be an absolute path");
    const uint8_t *q = memchr(req->target.p, '?', req->target.n);
    if (q != NULL) {
        req->path = kslice_make(req->target.p, (size_t)(q - req->target.p));
        req->query = kslice_make(q + 1, req->target.n - req->path.n - 1);
    } else {
        req->path = req->target;
        req->query = kslice_make(req->target.p + req->target.n, 0);
    }
    return 0;
}

int
http_parse_request(const uint8_t *p, size_t head_len, http_header *headers, size_t max_headers,
                   http_request *req, http_error *e)
{
    memset(req, 0, sizeof *req);
    req->headers = headers;
    e->status = 0;
    e->reason = NULL;
    if (head_len < 4)
        return http_fail(e, 400, "malformed request");
    const uint8_t *end = p + head_len - 2;   /* the final CRLF */
    const uint8_t *cur = p;
    int line_no = 0, hosts = 0, conn_close = 0, conn_keep = 0, have_len = 0, have_te = 0;
    uint64_t content_length = 0;
    while (cur < end) {
        const uint8_t *cr = memchr(cur, '\r', (size_t)(end - cur));
        if (cr == NULL || cr + 1 >= p + head_len || cr[1] != '\n')
            return http_fail(e, 400, "bare CR or LF in the request head");
        kslice line = kslice_make(cur, (size_t)(cr - cur));
        if (memchr(line.p, '\n', line.n) != NULL)
            return http_fail(e, 400, "bare LF in the request head");
        cur = cr + 2;
        if (line_no++ == 0) {
            if (http_parse_request_line(line, req, e) != 0)
                return -1;
            continue;
        }
        if (line.n == 0 || line.p[0] == ' ' || line.p[0] == '\t')
            return http_fail(e, 400, "obsolete header line folding");
        size_t i = 0;
        while (i < line.n && http_is_tchar(line.p[i]))
            i++;
        if (i == 0 || i >= line.n || line.p[i] != ':')
            return http_fail(e, 400, "malformed header");
        kslice name = kslice_make(line.p, i);
        kslice value = http_trim(kslice_make(line.p + i + 1, line.n - i - 1));
        for (size_t k = 0; k < value.n; k++) {
            uint8_t c = value.p[k];
            if ((c < 0x20 && c != '\t') || c == 0x7F)
                return http_fail(e, 400, "control byte in a header value");
        }
        if (req->header_count == max_headers)
            return http_fail(e, 431, "too many headers");
        headers[req->header_count].name = name;
        headers[req->header_count].value = value;
        req->header_count++;
        if (http_slice_ieq(name, "host")) {
            hosts++;
            req->host = value;
        } else if (http_slice_ieq(name, "accept")) {
            if (req->accept.p == NULL)
                req->accept = value;
        } else if (http_slice_ieq(name, "content-type")) {
            req->content_type = value;
        } else if (http_slice_ieq(name, "connection")) {
            conn_close |= http_list_has(value, "close");
            conn_keep |= http_list_has(value, "keep-alive");
        } else if (http_slice_ieq(name, "content-length")) {
            uint64_t v;
            if (http_parse_u64(value, &v) != 0 || (have_len && v != content_length))
                return http_fail(e, 400, "bad Content-Length");
            have_len = 1;
            content_length = v;
        } else if (http_slice_ieq(name, "transfer-encoding")) {
            if (have_te || !http_slice_ieq(value, "chunked"))
                return http_fail(e, 501, "the only transfer coding accepted is chunked");
            have_te = 1;
        }
    }
    if (line_no == 0)
        return http_fail(e, 400, "malformed request");
    if (req->version_minor >= 1 && hosts != 1)
        return http_fail(e, 400, hosts ? "more than one Host header" : "missing Host header");
    if (have_te && have_len)
        return http_fail(e, 400, "both Content-Length and Transfer-Encoding");
    if (content_length > HTTP_BODY_MAX)
        return http_fail(e, 413, "request body too large");
    req->chunked = have_te;
    req->content_length = (size_t)content_length;
    req->keep_alive = req->version_minor >= 1 ? !conn_close : conn_keep && !conn_close;
    req->head_only = req->method.n == 4 && memcmp(req->method.p, "HEAD", 4) == 0;
    req->head_len = head_len;
    return 0;
}

/* ------------------------------------------------------------------ chunked bodies */

#define HTTP_CHUNK_LINE_MAX 1024   /* a size line with its extensions */

static int http_hex(uint8_t c);

/* One CRLF-ended line at p[*at..n): its length without the CRLF in *len.
 * 1 found, 0 incomplete, -1 too long or a bare CR/LF. */
static int
http_chunk_line(const uint8_t *p, size_t n, size_t at, size_t *len)
{
    size_t lim = n - at < HTTP_CHUNK_LINE_MAX + 2 ? n - at : HTTP_CHUNK_LINE_MAX + 2;
    const uint8_t *lf = memchr(p + at, '\n', lim);
    if (lf == NULL)
        return n - at >= HTTP_CHUNK_LINE_MAX + 2 ? -1 : 0;
    size_t l = (size_t)(lf - (p + at));
    if (l == 0 || p[at + l - 1] != '\r' || memchr(p + at, '\r', l - 1) != NULL)
        return -1;
    *len = l - 1;
    return 1;
}

int
http_chunked_scan(const uint8_t *p, size_t n, size_t max_body, size_t *consumed,
                  size_t *body_len, http_error *e)
{
    size_t at = 0, body = 0;
    for (;;) {
        size_t len;
        int r = http_chunk_line(p, n, at, &len);
        if (r < 0)
            return http_fail(e, 400, "malformed chunk size line");
        if (r == 0)
            return 0;
        uint64_t size = 0;
        size_t i = 0;
        for (; i < len && http_hex(p[at + i]) >= 0; i++) {
            if (i == 16)
                return http_fail(e, 400, "chunk size too long");
            size = size << 4 | (uint64_t)http_hex(p[at + i]);
        }
        if (i == 0 || (i < len && p[at + i] != ';' && p[at + i] != ' ' && p[at + i] != '\t'))
            return http_fail(e, 400, "malformed chunk size");
        at += len + 2;
        if (size == 0)
            break;
        if (size > max_body - body)
            return http_fail(e, 413, "request body too large");
        if (n - at < size + 2)
            return 0;
        if (p[at + size] != '\r' || p[at + size + 1] != '\n')
            return http_fail(e, 400, "chunk data not followed by CRLF");
        body += (size_t)size;
        at += (size_t)size + 2;
    }
    /* trailer fields, then the empty line */
    for (;;) {
        size_t len;
        if (n - at >= 2 && p[at] == '\r' && p[at + 1] == '\n') {
            *consumed = at + 2;
            *body_len = body;
            return 1;
        }
        int r = http_chunk_line(p, n, at, &len);
        if (r < 0)
            return http_fail(e, 400, "malformed trailer field");
        if (r == 0)
            return 0;
        at += len + 2;
    }
}

size_t
http_chunked_decode(uint8_t *p, size_t consumed)
{
    size_t at = 0, out = 0;
    while (at < consumed) {
        uint64_t size = 0;
        while (http_hex(p[at]) >= 0)
            size = size << 4 | (uint64_t)http_hex(p[at++]);
        const uint8_t *lf = memchr(p + at, '\n', consumed - at);
        at = (size_t)(lf - p) + 1;
        if (size == 0)
            break;
        memmove(p + out, p + at, (size_t)size);
        out += (size_t)size;
        at += (size_t)size + 2;
    }
    return out;
}

kslice
http_header_get(const http_request *req, const char *name)
{
    for (size_t i = 0; i < req->header_count; i++) {
        if (http_slice_ieq(req->headers[i].name, name))
            return req->headers[i].value;
    }
    return kslice_make(NULL, 0);
}

int
http_accepts(kslice accept, const char *type)
{
    while (accept.n > 0) {
        const uint8_t *comma = memchr(accept.p, ',', accept.n);
        size_t len = comma ? (size_t)(comma - accept.p) : accept.n;
        kslice item = kslice_make(accept.p, len);
        const uint8_t *semi = memchr(item.p, ';', item.n);
        if (semi != NULL)
            item.n = (size_t)(semi - item.p);
        if (http_slice_ieq(http_trim(item), type))
            return 1;
        if (comma == NULL)
            break;
        accept.p += len + 1;
        accept.n -= len + 1;
    }
    return 0;
}

static int
http_hex(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int
http_pct_decode(kslice s, int plus_space, kbuf *out)
{
    buf_reserve(out, s.n);
    for (size_t i = 0; i < s.n; i++) {
        uint8_t c = s.p[i];
        if (c == '%') {
            int hi, lo;
            if (i + 2 >= s.n || (hi = http_hex(s.p[i + 1])) < 0 ||
                (lo = http_hex(s.p[i + 2])) < 0)
                return -1;
            c = (uint8_t)(hi << 4 | lo);
            i += 2;
        } else if (c == '+' && plus_space) {
            c = ' ';
        }
        out->data[out->len++] = c;
    }
    return 0;
}

void
http_pct_encode(kbuf *out, const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    buf_reserve(out, 3 * n);
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            out->data[out->len++] = c;
        } else {
            out->data[out->len++] = '%';
            out->data[out->len++] = (uint8_t)hex[c >> 4];
            out->data[out->len++] = (uint8_t)hex[c & 15];
        }
    }
}

int
http_query_next(kslice *query, kslice *name, kslice *value)
{
    while (query->n > 0) {
        const uint8_t *amp = memchr(query->p, '&', query->n);
        size_t len = amp ? (size_t)(amp - query->p) : query->n;
        kslice pair = kslice_make(query->p, len);
        query->p += amp ? len + 1 : len;
        query->n -= amp ? len + 1 : len;
        if (len == 0)
            continue;
        const uint8_t *eq = memchr(pair.p, '=', pair.n);
        if (eq != NULL) {
            *name = kslice_make(pair.p, (size_t)(eq - pair.p));
            *value = kslice_make(eq + 1, pair.n - name->n - 1);
        } else {
            *name = pair;
            *value = kslice_make(pair.p + pair.n, 0);
        }
        return 1;
    }
    return 0;
}

const char *
http_status_text(int status)
{
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default:  return "Unknown";
    }
}
