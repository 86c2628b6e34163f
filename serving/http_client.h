/* http_client.h -- a small blocking HTTP/1.1 client for kiln-server: one
 * keep-alive connection, GET requests, responses framed by Content-Length
 * (what the server sends). `kiln --server HOST:PORT` is built on it.
 *
 * http_client_parse_head parses a response head on its own, so that tests
 * and the fuzzer can reach it without a socket.
 *
 * Thread-safety: a client belongs to one thread.
 */
#ifndef KILN_HTTP_CLIENT_H
#define KILN_HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "storage/buf.h"
#include "storage/status.h"

#define HTTP_CLIENT_HEAD_MAX (64 * 1024)
#define HTTP_CLIENT_BODY_MAX ((uint64_t)1 << 30)

typedef struct http_client_response {
    int status;                   /* 200, 404, ... */
    uint64_t content_length;
    int close;                    /* the server will close the connection */
    int has_version;
    uint64_t version;             /* X-Kiln-Version */
    int has_timestamp;
    int64_t timestamp;            /* X-Timestamp */
    char content_type[128];
    kslice body;                  /* valid until the next request */
} http_client_response;

/* Parse a response head of head_len bytes (status line to the blank line).
 * KILN_CORRUPTION for anything that is not a well-formed HTTP/1.x response
 * with a Content-Length (chunked bodies are refused). */
kiln_status http_client_parse_head(const uint8_t *p, size_t head_len, http_client_response *out,
                                   kiln_err *err);

typedef struct http_client http_client;

/* Resolve and connect to "HOST:PORT". timeout_ms bounds the connect and
 * every read or write. KILN_INVALID for a bad address, KILN_IO if the server
 * cannot be reached (the message names the address). */
kiln_status http_client_open(const char *addr, int timeout_ms, http_client **out, kiln_err *err);
void http_client_close(http_client *c);   /* c may be NULL */

/* GET target (an already encoded path and query). accept may be NULL. If the
 * kept-alive connection was closed by the server before the request was
 * answered, the request is sent again once on a new connection. */
kiln_status http_client_get(http_client *c, const char *target, const char *accept,
                            http_client_response *out, kiln_err *err);

#endif
