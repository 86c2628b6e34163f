/* http.h -- the HTTP/1.1 wire format of the server: a zero-copy request-head
 * parser (request line and headers, RFC 9112), percent-decoding of paths and
 * query strings, and status texts for responses.
 *
 * The parser works on the bytes received so far. http_head_end finds the end
 * of the head incrementally (so a head that trickles in byte by byte is
 * scanned once); http_parse_request then parses the complete head into
 * slices that borrow from the caller's buffer: they stay valid while those
 * bytes do. A request body is announced by Content-Length (at most
 * HTTP_BODY_MAX bytes; the server's --max-request-bytes bounds head and body
 * together); the server reads it after the head and hands it over in
 * http_request.body. A chunked body (Transfer-Encoding: chunked) is
 * scanned with http_chunked_scan and decoded in place with
 * http_chunked_decode.
 *
 * Thread-safety: stateless functions; a request belongs to one thread.
 */
#ifndef KILN_HTTP_H
#define KILN_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"

#define HTTP_HEADERS_MAX_DEFAULT 64
#define HTTP_BODY_MAX ((size_t)1 << 20)

typedef struct http_header {
    kslice name;
    kslice value;
} http_header;

typedef struct http_request {
    kslice method;
    kslice target;            /* raw request-target ("/t/row?v=2") */
    kslice path;              /* target before '?' */
    kslice query;             /* target after '?', without it; may be empty */
    int version_minor;        /* HTTP/1.<minor> */
    http_header *headers;     /* the caller's array */
    size_t header_count;
    int keep_alive;           /* from the version and Connection */
    kslice host;
    kslice accept;            /* empty if absent */
    int head_only;            /* method HEAD */
    size_t head_len;          /* bytes of the head, final CRLF included */
    size_t content_length;    /* body bytes announced (0: none) */
    int chunked;              /* Transfer-Encoding: chunked */
    kslice body;              /* the body, once the server has it (borrowed) */
    kslice content_type;      /* empty if absent */
} http_request;

/* Parse errors carry the status to answer with and a short reason. */
typedef struct http_error {
    int status;               /* 400, 413, 414, 431, 501 or 505 */
    const char *reason;       /* static text, e.g. "malformed request line" */
} http_error;

/* Look for the blank line ending the head in p[0..n), starting at *scan
 * (which the call advances so that later calls skip what was searched).
 * Returns the head length (> 0) or 0 if it is not complete yet. */
size_t http_head_end(const uint8_t *p, size_t n, size_t *scan);

/* Parse a complete head of head_len bytes (as http_head_end returned).
 * headers has room for max_headers entries. Returns 0 and fills req, or -1
 * and fills e: 400 malformed syntax or a missing Host in HTTP/1.1, 413 a
 * body over HTTP_BODY_MAX, 431 more than max_headers headers, 501 a transfer
 * coding other than chunked, 505 an HTTP major version other than 1; 400
 * for both Content-Length and Transfer-Encoding (a request smuggled past a
 * proxy looks like that). */
int http_parse_request(const uint8_t *p, size_t head_len, http_header *headers,
                       size_t max_headers, http_request *req, http_error *e);

/* A chunked body at p[0..n) (RFC 9112 7.1: hex size [;ext] CRLF, data CRLF,
 * ..., 0 CRLF, trailer fields, CRLF). Returns 1 when it is complete, with
 * *consumed its encoded length and *body_len the decoded one; 0 while more
 * bytes are needed; -1 with e (400 malformed, 413 a body over max_body or
 * a size or extension line too long). Reads only. */
int http_chunked_scan(const uint8_t *p, size_t n, size_t max_body, size_t *consumed,
                      size_t *body_len, http_error *e);
/* Decode a body http_chunked_scan found complete, in place: the data moves
 * to p[0..body_len). Returns body_len. */
size_t http_chunked_decode(uint8_t *p, size_t consumed);

/* The status a head that does not fit in limit bytes gets: 414 if even the
 * request line is incomplete, else 431. */
int http_oversize_status(const uint8_t *p, size_t n);

/* Case-insensitive comparison of a slice with a NUL-terminated ASCII string. */
int http_slice_ieq(kslice s, const char *lit);
/* The value of the first header named name (case-insensitive), or an empty
 * slice with p == NULL. */
kslice http_header_get(const http_request *req, const char *name);
/* 1 if the Accept header lists media type `type` (exactly, ignoring
 * parameters and case). */
int http_accepts(kslice accept, const char *type);

/* Append the percent-decoding of s to out ('+' becomes a space when
 * plus_space). Returns 0, or -1 for a '%' not followed by two hex digits. */
int http_pct_decode(kslice s, int plus_space, kbuf *out);
/* Append s percent-encoded: every byte outside [A-Za-z0-9-._~] as %XX. */
void http_pct_encode(kbuf *out, const uint8_t *p, size_t n);

/* Iterate "a=1&b=2": the next raw name and value (both undecoded; value
 * empty if there is no '='). Returns 1 while pairs remain. Empty pairs
 * ("a=1&&b") are skipped. */
int http_query_next(kslice *query, kslice *name, kslice *value);

/* "OK", "Not Found", ... ("Unknown" for others). */
const char *http_status_text(int status);

#endif
