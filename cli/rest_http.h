/* rest_http.h -- the HTTP transport of `kiln --server`: one libcurl easy
 * handle per client, so one kept-alive connection (HTTP/1.1, chunked or
 * Content-Length bodies, TLS for https:// addresses) reused by every request.
 *
 * A server is "HOST:PORT" (plain HTTP) or a URL "http[s]://HOST[:PORT][/PATH]";
 * PATH prefixes every request (a gateway behind a proxy). Every error names
 * the server as host:port. A response body is read into memory up to
 * REST_HTTP_BODY_MAX bytes; a longer one, a truncated chunked body or a
 * connection that stalls for the timeout is a KILN_IO error, never a partial
 * answer.
 *
 * TLS: certificates are verified against the system's CA store, or the file
 * named by $KILN_CA_FILE; $KILN_INSECURE_TLS=1 turns verification off.
 *
 * Ownership: the response and its body belong to the client and stay valid
 * until its next request. Thread-safety: a client belongs to one thread.
 */
#ifndef KILN_CLI_REST_HTTP_H
#define KILN_CLI_REST_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"

#define REST_HTTP_BODY_MAX ((size_t)1 << 30)
#define REST_HTTP_URL_MAX 2048

typedef struct rest_http_response {
    long status;                  /* 200, 204, 404, ... */
    char content_type[128];       /* lowercased media type without parameters; "" if none */
    int has_location;
    char location[REST_HTTP_URL_MAX];   /* Location header, as sent */
    int has_version;
    uint64_t version;             /* X-Kiln-Version (Kiln's servers only) */
    kbuf body;
} rest_http_response;

typedef struct rest_http rest_http;

/* Parse the server address and set up the client (no connection yet: the
 * first request connects). timeout_ms bounds connecting and any stall of a
 * transfer. KILN_INVALID for an address that is neither HOST:PORT nor an
 * http/https URL; KILN_INTERNAL if libcurl cannot start. */
kiln_status rest_http_open(const char *server, int timeout_ms, rest_http **out, kiln_err *err);
void rest_http_close(rest_http *h);   /* h may be NULL */

/* "host:port" of the server, for messages. */
const char *rest_http_name(const rest_http *h);

/* Send METHOD target. target is an encoded path and query below the
 * server's base ("/t/row?v=2"), or an absolute http(s) URL (a scanner's
 * Location). accept and content_type may be NULL; body may be NULL. Any
 * status is KILN_OK (the caller judges it); KILN_IO for a transfer that
 * failed (connect, TLS, timeout, truncated or oversized body), the message
 * naming host:port and the cause. */
kiln_status rest_http_request(rest_http *h, const char *method, const char *target,
                              const char *accept, const char *content_type, const char *body,
                              size_t body_len, const rest_http_response **out, kiln_err *err);

#endif
