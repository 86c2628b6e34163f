/* http_client.h -- the response-head parser the serving tests read
 * kiln-server's answers with (tests/serving/serving_fixture.h), fuzzed by
 * fuzz/fuzz_http.c. `kiln --server` does not use it: its transport is
 * libcurl (cli/rest_http.h).
 *
 * Thread-safety: pure function of its input.
 */
#ifndef KILN_HTTP_CLIENT_H
#define KILN_HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"

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

#endif
