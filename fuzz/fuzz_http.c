/* fuzz_http.c -- libFuzzer target for the HTTP side of kiln-server and its
 * client.
 *
 * The first byte picks the side. Even: the rest is a byte stream a client
 * sent; every complete request in it (head, then a Content-Length or
 * chunked body) is parsed (http.c) and answered
 * by the API (http_api.c) over a small real table (fuzz_http_fixture.h), as
 * a pipelined connection would be. A parse error must name a 4xx/5xx
 * status; an answer must carry a status between 200 and 599 and, when it is
 * JSON, parse as JSON (errors as one line with a "code"). Odd: the rest is
 * what a server sent back: a response head for the client's parser
 * (http_client.c) and a body for the JSON parser (storage/query/json.c),
 * whose strings are then base64-decoded. Any other outcome traps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_http_fixture.h"
#include "serving/http.h"
#include "serving/http_api.h"
#include "serving/http_client.h"
#include "serving/metrics.h"
#include "serving/slog.h"
#include "storage/query/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static http_api_env fuzz_env;
static http_api *fuzz_api;

static void
fuzz_http_setup(void)
{
    if (fuzz_api != NULL)
        return;
    slog_set_quiet(1);
    fuzz_fixture_open();
    fuzz_env.views = fuzz_views;
    fuzz_env.metrics = metrics_new();
    snprintf(fuzz_env.listen, sizeof fuzz_env.listen, "127.0.0.1:1");
    fuzz_env.threads = 1;
    fuzz_env.page_rows = 3;
    fuzz_env.page_bytes = 4096;
    fuzz_env.count_rows = 2;
    fuzz_env.deadline_ms = 1000;
    fuzz_env.max_reply_bytes = 1 << 20;
    fuzz_env.scan_max_bytes = 1 << 20;
    fuzz_api = http_api_new(&fuzz_env, fuzz_reader, fuzz_ctx);
}

static void
fuzz_http_check_reply(const http_api_reply *r)
{
    if (r->status < 200 || r->status > 599 || r->body == NULL || r->content_type == NULL)
        abort();
    if (strcmp(r->content_type, "application/json") != 0)
        return;
    json_doc *d = NULL;
    if (json_parse((const char *)r->body->data, r->body->len, &d, NULL) != KILN_OK)
        abort();   /* the server wrote JSON that does not parse */
    if (r->status >= 400) {
        if (json_str(json_get(json_root(d), "code"), NULL) == NULL ||
            memchr(r->body->data, '\n', r->body->len - 1) != NULL)
            abort();
    }
    json_doc_free(d);
}

static void
fuzz_http_server(const uint8_t *p, size_t n)
{
    http_header headers[16];
    size_t pos = 0;
    while (pos < n) {
        size_t scan = 0;
        size_t head = http_head_end(p + pos, n - pos, &scan);
        if (head == 0)
            return;   /* incomplete: the server waits for more (or answers 414/431) */
        http_request req;
        http_error e;
        if (http_parse_request(p + pos, head, headers, 16, &req, &e) != 0) {
            if (e.status < 400 || e.status > 599 || e.reason == NULL)
                abort();
            http_api_reply r;
            http_api_error(fuzz_api, e.status, "bad_request", e.reason, &r);
            fuzz_http_check_reply(&r);
            return;   /* the server closes the connection here */
        }
        if (req.head_len != head || req.path.n == 0 || req.path.p[0] != '/')
            abort();
        size_t take = 0;
        uint8_t *body = NULL;
        if (req.chunked) {
            size_t consumed, body_len;
            int rc = http_chunked_scan(p + pos + head, n - pos - head, HTTP_BODY_MAX, &consumed,
                                       &body_len, &e);
            if (rc < 0 && (e.status != 400 && e.status != 413))
                abort();
            if (rc <= 0)
                return;   /* an error closes the connection; incomplete waits */
            if (consumed > n - pos - head || body_len > consumed)
                abort();
            body = malloc(consumed ? consumed : 1);
            memcpy(body, p + pos + head, consumed);
            if (http_chunked_decode(body, consumed) != body_len)
                abort();
            req.body = kslice_make(body, body_len);
            take = consumed;
        } else if (req.content_length > 0) {
            if (req.content_length > n - pos - head)
                return;   /* the body is still coming */
            req.body = kslice_make(p + pos + head, req.content_length);
            take = req.content_length;
        }
        http_api_reply r;
        http_api_handle(fuzz_api, &req, &r);
        while (r.yield)   /* a scanner GET past the deadline goes on, as the server's loop does */
            http_api_handle(fuzz_api, &req, &r);
        fuzz_http_check_reply(&r);
        free(body);
        pos += head + take;
    }
}

static void
fuzz_http_client(const uint8_t *p, size_t n)
{
    size_t scan = 0;
    size_t head = http_head_end(p, n, &scan);
    if (head > 0) {
        http_client_response r;
        kiln_err err;
        status_clear(&err);
        if (http_client_parse_head(p, head, &r, &err) == KILN_OK &&
            (r.status < 100 || r.content_length > HTTP_CLIENT_BODY_MAX))
            abort();
        p += head;
        n -= head;
    }
    json_doc *d = NULL;
    kiln_err err;
    status_clear(&err);
    if (json_parse((const char *)p, n, &d, &err) != KILN_OK) {
        if (err.code != KILN_CORRUPTION)
            abort();
        return;
    }
    /* walk one level and decode every string as base64, as the client does */
    const json_node *root = json_root(d);
    kbuf out = KBUF_INIT;
    for (size_t i = 0; i < json_len(root); i++) {
        size_t len;
        const char *s = json_str(json_at(root, i), &len);
        if (s != NULL) {
            buf_reset(&out);
            if (json_b64_decode(s, len, &out) == 0 && out.len > len)
                abort();
        }
        int64_t v;
        json_int(json_at(root, i), &v);
    }
    buf_free(&out);
    json_doc_free(d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    fuzz_http_setup();
    if (data[0] & 1)
        fuzz_http_client(data + 1, size - 1);
    else
        fuzz_http_server(data + 1, size - 1);
    return 0;
}
