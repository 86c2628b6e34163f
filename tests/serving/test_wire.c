/* test_wire.c -- the server's wire formats without sockets: HTTP request
 * heads (http.c), percent-coding and queries, response heads as the client
 * parses them (http_client.c), RESP commands and replies (resp.c), base64
 * and JSON (storage/query/json.c), and row-cache images (rowcache.c). Round
 * trips use random bytes with a printed seed (replay with KILN_TEST_SEED=N).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "serving/http.h"
#include "serving/http_client.h"
#include "serving/resp.h"
#include "serving/rowcache.h"
#include "storage/query/json.h"

static unsigned wire_seed;

static uint64_t
wire_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Parse a complete head given as a C string. */
static int
wire_parse(const char *text, http_request *req, http_error *e)
{
    static http_header headers[8];
    size_t scan = 0;
    size_t head = http_head_end((const uint8_t *)text, strlen(text), &scan);
    if (head == 0) {
        e->status = 0;
        return -2;
    }
    return http_parse_request((const uint8_t *)text, head, headers, 8, req, e);
}

static int
wire_slice_is(kslice s, const char *lit)
{
    return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

static void
http_parses_request_line_and_headers(void **state)
{
    (void)state;
    http_request req;
    http_error e;
    assert_int_equal(wire_parse("GET /t/row%2F1?v=2&column=f:q HTTP/1.1\r\nHost: x\r\n"
                                "Accept: application/octet-stream, */*;q=0.1\r\n"
                                "X-Other:  spaced value \t\r\n\r\n",
                                &req, &e),
                     0);
    assert_true(wire_slice_is(req.method, "GET"));
    assert_true(wire_slice_is(req.path, "/t/row%2F1"));
    assert_true(wire_slice_is(req.query, "v=2&column=f:q"));
    assert_int_equal(req.version_minor, 1);
    assert_true(req.keep_alive);
    assert_true(wire_slice_is(req.host, "x"));
    assert_true(http_accepts(req.accept, "application/octet-stream"));
    assert_false(http_accepts(req.accept, "application/json"));
    assert_true(wire_slice_is(http_header_get(&req, "x-other"), "spaced value"));
    assert_null(http_header_get(&req, "missing").p);
    assert_int_equal(req.header_count, 3);

    assert_int_equal(wire_parse("HEAD / HTTP/1.0\r\n\r\n", &req, &e), 0);
    assert_true(req.head_only);
    assert_false(req.keep_alive);
    assert_int_equal(req.query.n, 0);
    assert_int_equal(wire_parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &req, &e), 0);
    assert_true(req.keep_alive);
    assert_int_equal(wire_parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: x, close\r\n\r\n", &req,
                                &e),
                     0);
    assert_false(req.keep_alive);
    assert_int_equal(wire_parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", &req,
                                &e),
                     0);
}

/* Scan a whole chunked body, then decode it; -2 while incomplete. */
static int
wire_chunked(const char *enc, size_t max_body, char *out, size_t *out_len, int *status)
{
    size_t n = strlen(enc), consumed = 0, body = 0;
    http_error e = {0, NULL};
    int r = http_chunked_scan((const uint8_t *)enc, n, max_body, &consumed, &body, &e);
    *status = e.status;
    if (r <= 0)
        return r == 0 ? -2 : -1;
    uint8_t *copy = malloc(n);
    memcpy(copy, enc, n);
    *out_len = http_chunked_decode(copy, consumed);
    assert_int_equal(*out_len, body);
    memcpy(out, copy, body);
    out[body] = '\0';
    free(copy);
    return (int)consumed;
}

static void
http_chunked_bodies(void **state)
{
    (void)state;
    char out[256];
    size_t len;
    int status;
    const char *ok = "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\nNEXT";
    assert_int_equal(wire_chunked(ok, 100, out, &len, &status), (int)strlen(ok) - 4);
    assert_string_equal(out, "hello, world");
    /* upper-case hex, a trailer field, an empty body */
    assert_true(wire_chunked("A\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n", 100, out, &len,
                             &status) > 0);
    assert_string_equal(out, "0123456789");
    assert_true(wire_chunked("0\r\n\r\n", 100, out, &len, &status) > 0);
    assert_int_equal(len, 0);
    /* every proper prefix of a good body is incomplete, never an error */
    for (size_t cut = 0; cut < strlen(ok) - 4; cut++) {
        char pre[128];
        memcpy(pre, ok, cut);
        pre[cut] = '\0';
        assert_int_equal(wire_chunked(pre, 100, out, &len, &status), -2);
    }
    /* malformed: no hex, junk after the size, data not followed by CRLF,
     * bare LF, a size of 17 hex digits, a long extension line */
    const char *bad[] = {"\r\nx\r\n", "g\r\n", "5x\r\nhello\r\n0\r\n\r\n",
                         "5\r\nhelloXY0\r\n\r\n", "5\nhello\r\n0\r\n\r\n",
                         "00000000000000001\r\nx\r\n0\r\n\r\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(wire_chunked(bad[i], 100, out, &len, &status), -1);
        assert_int_equal(status, 400);
    }
    char longext[1200] = "1;";
    memset(longext + 2, 'e', 1100);
    strcpy(longext + 1102, "\r\nx\r\n0\r\n\r\n");
    assert_int_equal(wire_chunked(longext, 100, out, &len, &status), -1);
    /* over the body limit: 413, before the data arrives */
    assert_int_equal(wire_chunked("10\r\n", 15, out, &len, &status), -1);
    assert_int_equal(status, 413);
    assert_int_equal(wire_chunked("8\r\n12345678\r\n8\r\n", 15, out, &len, &status), -1);
    assert_int_equal(status, 413);

    /* the head: chunked is accepted, other codings are 501, both headers 400 */
    http_request req;
    http_error e;
    assert_int_equal(wire_parse("POST /t/scanner HTTP/1.1\r\nHost: a\r\n"
                                "Transfer-Encoding: Chunked\r\n\r\n", &req, &e), 0);
    assert_true(req.chunked);
    assert_int_equal(wire_parse("POST /t/scanner HTTP/1.1\r\nHost: a\r\n"
                                "Transfer-Encoding: gzip, chunked\r\n\r\n", &req, &e), -1);
    assert_int_equal(e.status, 501);
    assert_int_equal(wire_parse("POST /t/scanner HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n"
                                "Transfer-Encoding: chunked\r\n\r\n", &req, &e), -1);
    assert_int_equal(e.status, 400);
}

static void
http_rejects_malformed_heads(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int status;
    } cases[] = {
        {"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
        {"GET / HTTP/1.1 x\r\nHost: a\r\n\r\n", 400},
        {"GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505},
        {"GET / HTTX/1.1\r\nHost: a\r\n\r\n", 400},
        {"GET relative HTTP/1.1\r\nHost: a\r\n\r\n", 400},
        {"G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\n\r\n", 400},                               /* no Host */
        {"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: a\r\nX: a\x01 b\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 2000000\r\n\r\n", 413},
        {"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
        {"GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\nF: 6\r\nG: 7\r\nH: 8\r\n\r\n",
         431},
        {"\r\n\r\n", 400},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        http_request req;
        http_error e;
        int rc = wire_parse(cases[i].text, &req, &e);
        if (rc != -1 || e.status != cases[i].status)
            fail_msg("case %zu: rc %d status %d, want -1 and %d", i, rc, e.status,
                     cases[i].status);
        assert_non_null(e.reason);
    }
}

static void
http_head_end_is_incremental(void **state)
{
    (void)state;
    const char *text = "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /x";
    size_t full = strlen("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    size_t scan = 0, got = 0;
    for (size_t n = 1; n <= strlen(text); n++) {
        got = http_head_end((const uint8_t *)text, n, &scan);
        if (n < full)
            assert_int_equal(got, 0);
        else
            break;
    }
    assert_int_equal(got, full);
    assert_int_equal(http_oversize_status((const uint8_t *)"GET /aaaa", 9), 414);
    assert_int_equal(http_oversize_status((const uint8_t *)"GET / HTTP/1.1\r\nX: a", 20), 431);
}

static void
http_percent_coding_round_trips(void **state)
{
    (void)state;
    kbuf out = KBUF_INIT;
    assert_int_equal(http_pct_decode(kslice_str("a%2Fb%3a+c%00"), 1, &out), 0);
    assert_int_equal(out.len, 7);
    assert_memory_equal(out.data, "a/b: c\0", 7);
    buf_reset(&out);
    assert_int_equal(http_pct_decode(kslice_str("a+b"), 0, &out), 0);
    assert_memory_equal(out.data, "a+b", 3);
    const char *bad[] = {"%", "%2", "%zz", "a%g1", "%%"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        buf_reset(&out);
        assert_int_equal(http_pct_decode(kslice_str(bad[i]), 0, &out), -1);
    }
    uint64_t s = wire_seed;
    kbuf raw = KBUF_INIT, enc = KBUF_INIT;
    for (int iter = 0; iter < 500; iter++) {
        buf_reset(&raw);
        buf_reset(&enc);
        buf_reset(&out);
        size_t n = wire_rand(&s) % 40;
        for (size_t i = 0; i < n; i++)
            buf_append_u8(&raw, (uint8_t)wire_rand(&s));
        http_pct_encode(&enc, raw.data, raw.len);
        for (size_t i = 0; i < enc.len; i++)
            assert_true(strchr("/?&=:,+# ", enc.data[i]) == NULL || enc.data[i] == 0);
        assert_int_equal(http_pct_decode(buf_slice(&enc), 1, &out), 0);
        assert_int_equal(out.len, raw.len);
        if (n)
            assert_memory_equal(out.data, raw.data, n);
    }
    buf_free(&raw);
    buf_free(&enc);
    buf_free(&out);
}

static void
http_query_pairs(void **state)
{
    (void)state;
    kslice q = kslice_str("a=1&&b&c=&=d&row=x%26y");
    kslice n, v;
    const char *want[][2] = {{"a", "1"}, {"b", ""}, {"c", ""}, {"", "d"}, {"row", "x%26y"}};
    size_t k = 0;
    while (http_query_next(&q, &n, &v)) {
        assert_true(k < 5);
        assert_true(wire_slice_is(n, want[k][0]));
        assert_true(wire_slice_is(v, want[k][1]));
        k++;
    }
    assert_int_equal(k, 5);
}

static void
http_client_parses_response_heads(void **state)
{
    (void)state;
    http_client_response r;
    kiln_err err;
    const char *ok = "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
                     "Content-Length: 12\r\nX-Kiln-Version: 7\r\nX-Timestamp: -5\r\n\r\n";
    status_clear(&err);
    assert_int_equal(http_client_parse_head((const uint8_t *)ok, strlen(ok), &r, &err), KILN_OK);
    assert_int_equal(r.status, 404);
    assert_int_equal(r.content_length, 12);
    assert_true(r.has_version);
    assert_int_equal(r.version, 7);
    assert_int_equal(r.timestamp, -5);
    assert_string_equal(r.content_type, "application/json");
    assert_false(r.close);
    const char *bad[] = {
        "HTTP/1.1 200 OK\r\n\r\n",                                       /* no length */
        "HTTP/1.1 2x0 OK\r\nContent-Length: 1\r\n\r\n",
        "FTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
        "HTTP/1.1 200 OK\r\nbroken\r\nContent-Length: 1\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        status_clear(&err);
        if (http_client_parse_head((const uint8_t *)bad[i], strlen(bad[i]), &r, &err) == KILN_OK)
            fail_msg("accepted bad head %zu", i);
    }
}

static void
resp_parses_commands(void **state)
{
    (void)state;
    kslice argv[8];
    size_t argc, used;
    const char *why;
    const char *mb = "*2\r\n$3\r\nGET\r\n$5\r\na\r\nb\0\r\n*1\r\n$4\r\nPING\r\n";
    size_t mbn = 24 + 14;
    assert_int_equal(resp_parse((const uint8_t *)mb, mbn, argv, 8, 1024, &argc, &used, &why),
                     RESP_COMMAND);
    assert_int_equal(argc, 2);
    assert_int_equal(used, 24);
    assert_true(resp_arg_is(argv[0], "get"));
    assert_int_equal(argv[1].n, 5);
    assert_memory_equal(argv[1].p, "a\r\nb\0", 5);
    /* every strict prefix of the first command is incomplete */
    for (size_t n = 0; n < 24; n++)
        assert_int_equal(resp_parse((const uint8_t *)mb, n, argv, 8, 1024, &argc, &used, &why),
                         RESP_INCOMPLETE);
    assert_int_equal(resp_parse((const uint8_t *)"PING  hello\r\n", 13, argv, 8, 1024, &argc,
                                &used, &why),
                     RESP_COMMAND);
    assert_int_equal(argc, 2);
    assert_true(wire_slice_is(argv[1], "hello"));
    assert_int_equal(resp_parse((const uint8_t *)"\r\n", 2, argv, 8, 1024, &argc, &used, &why),
                     RESP_EMPTY);
    assert_int_equal(used, 2);
    assert_int_equal(resp_parse((const uint8_t *)"*0\r\n", 4, argv, 8, 1024, &argc, &used, &why),
                     RESP_EMPTY);
    const char *bad[] = {"*x\r\n", "*2\r\n:1\r\n", "*1\r\n$-1\r\n", "*1\r\n$3\r\nabcd\r\n",
                         "*9\r\n", "*1\r\n$2000\r\n", "*1\r\n$1\rx"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        resp_parse_result r = resp_parse((const uint8_t *)bad[i], strlen(bad[i]), argv, 8, 1024,
                                         &argc, &used, &why);
        if (r != RESP_ERROR)
            fail_msg("bad command %zu parsed as %d", i, (int)r);
        assert_non_null(why);
    }
}

static void
resp_writes_replies(void **state)
{
    (void)state;
    kbuf b = KBUF_INIT;
    resp_add_simple(&b, "OK");
    resp_add_error(&b, "ERR a\r\nb");
    resp_add_int(&b, -42);
    resp_add_bulk(&b, "x\0y", 3);
    resp_add_nil(&b);
    resp_add_array(&b, 2);
    resp_add_bulk(&b, "", 0);
    const char want[] = "+OK\r\n-ERR ab\r\n:-42\r\n$3\r\nx\0y\r\n$-1\r\n*2\r\n$0\r\n\r\n";
    assert_int_equal(b.len, sizeof want - 1);
    assert_memory_equal(b.data, want, sizeof want - 1);
    buf_free(&b);
}

static void
json_numbers_print_exactly(void **state)
{
    (void)state;
    static const struct {
        int64_t v;
        const char *s;
    } cases[] = {{0, "0"}, {7, "7"}, {10, "10"}, {99, "99"}, {100, "100"}, {101, "101"},
                 {1700000000000, "1700000000000"}, {-1, "-1"}, {-100, "-100"},
                 {INT64_MAX, "9223372036854775807"}, {INT64_MIN, "-9223372036854775808"}};
    kbuf b = KBUF_INIT;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf_reset(&b);
        json_i64(&b, cases[i].v);
        assert_int_equal(b.len, strlen(cases[i].s));
        assert_memory_equal(b.data, cases[i].s, b.len);
    }
    buf_reset(&b);
    json_u64(&b, UINT64_MAX);
    assert_int_equal(b.len, 20);
    assert_memory_equal(b.data, "18446744073709551615", 20);
    char want[32];
    for (uint64_t v = 0; v < 100000; v += 7) {
        buf_reset(&b);
        json_u64(&b, v * 1000003);
        int n = snprintf(want, sizeof want, "%llu", (unsigned long long)(v * 1000003));
        assert_int_equal(b.len, (size_t)n);
        assert_memory_equal(b.data, want, (size_t)n);
    }
    buf_free(&b);
}

/* RFC 4648 base64 one bit at a time: the oracle for json_b64_append. */
static size_t
base64_by_bits(const uint8_t *p, size_t n, char *out)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0, bits = 8 * n;
    for (size_t at = 0; at < bits; at += 6) {
        unsigned v = 0;
        for (size_t k = at; k < at + 6; k++) {
            unsigned bit = k < bits ? (p[k / 8] >> (7 - k % 8)) & 1 : 0;
            v = v << 1 | bit;
        }
        out[o++] = tab[v];
    }
    while (o % 4 != 0)
        out[o++] = '=';
    return o;
}

/* The encoder against the oracle at every length to 300 (the 16-byte
 * steps and every tail), over random bytes, all-zero and all-one bytes, and
 * each byte value at each position of a 48-byte input. */
static void
json_base64_against_bits(void **state)
{
    (void)state;
    uint64_t s = wire_seed + 2;
    uint8_t raw[300];
    char want[404];
    kbuf e = KBUF_INIT;
    for (size_t n = 0; n <= sizeof raw; n++) {
        for (int kind = 0; kind < 4; kind++) {
            for (size_t i = 0; i < n; i++)
                raw[i] = kind == 0 ? 0 : kind == 1 ? 0xFF : (uint8_t)wire_rand(&s);
            buf_reset(&e);
            json_b64_append(&e, raw, n);
            size_t wn = base64_by_bits(raw, n, want);
            assert_int_equal(e.len, wn);
            assert_memory_equal(e.data, want, wn);
        }
    }
    for (size_t at = 0; at < 48; at++) {
        for (unsigned b = 0; b < 256; b++) {
            memset(raw, 0x5A, 48);
            raw[at] = (uint8_t)b;
            buf_reset(&e);
            json_b64_append(&e, raw, 48);
            size_t wn = base64_by_bits(raw, 48, want);
            assert_int_equal(e.len, wn);
            assert_memory_equal(e.data, want, wn);
        }
    }
    buf_free(&e);
}

static void
json_base64_round_trips(void **state)
{
    (void)state;
    kbuf e = KBUF_INIT, d = KBUF_INIT;
    json_b64_append(&e, (const uint8_t *)"foobar", 6);
    assert_int_equal(e.len, 8);
    assert_memory_equal(e.data, "Zm9vYmFy", 8);
    buf_reset(&e);
    json_b64_append(&e, (const uint8_t *)"fo", 2);
    assert_memory_equal(e.data, "Zm8=", 4);
    uint64_t s = wire_seed + 1;
    for (int iter = 0; iter < 500; iter++) {
        kbuf raw = KBUF_INIT;
        size_t n = wire_rand(&s) % 50;
        for (size_t i = 0; i < n; i++)
            buf_append_u8(&raw, (uint8_t)wire_rand(&s));
        buf_reset(&e);
        buf_reset(&d);
        json_b64_append(&e, raw.data, raw.len);
        assert_int_equal(e.len, json_b64_len(n));
        assert_int_equal(json_b64_decode((const char *)e.data, e.len, &d), 0);
        assert_int_equal(d.len, n);
        if (n)
            assert_memory_equal(d.data, raw.data, n);
        buf_free(&raw);
    }
    assert_int_equal(json_b64_decode("a", 1, &d), -1);
    assert_int_equal(json_b64_decode("ab!c", 4, &d), -1);
    buf_free(&e);
    buf_free(&d);
}

static void
json_parses_documents(void **state)
{
    (void)state;
    const char *text = " {\"Row\":[{\"key\":\"YQ==\",\"Cell\":[{\"column\":\"Zjpx\","
                       "\"timestamp\":-9223372036854775808,\"$\":\"\"}]}],"
                       "\"s\":\"a\\\"\\\\\\/\\n\\u00e9\\ud83d\\ude00\",\"n\":1.5e2,"
                       "\"t\":true,\"f\":false,\"z\":null,\"e\":{},\"a\":[]} ";
    json_doc *d;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(json_parse(text, strlen(text), &d, &err), KILN_OK);
    const json_node *root = json_root(d);
    assert_int_equal(json_node_type(root), JSON_OBJECT);
    const json_node *rows = json_get(root, "Row");
    assert_int_equal(json_len(rows), 1);
    const json_node *cell = json_at(json_get(json_at(rows, 0), "Cell"), 0);
    int64_t ts;
    assert_int_equal(json_int(json_get(cell, "timestamp"), &ts), 0);
    assert_true(ts == INT64_MIN);
    size_t n;
    const char *sv = json_str(json_get(root, "s"), &n);
    assert_int_equal(n, 11);
    assert_memory_equal(sv, "a\"\\/\n\xc3\xa9\xf0\x9f\x98\x80", 11);
    double num;
    assert_int_equal(json_num(json_get(root, "n"), &num), 0);
    assert_true(num == 150.0);
    assert_int_equal(json_int(json_get(root, "n"), &ts), -1);
    assert_int_equal(json_node_type(json_get(root, "t")), JSON_TRUE);
    assert_int_equal(json_node_type(json_get(root, "z")), JSON_NULL);
    assert_int_equal(json_len(json_get(root, "e")), 0);
    assert_string_equal(json_key(json_at(root, 1)), "s");
    assert_null(json_get(root, "missing"));
    json_doc_free(d);
    const char *bad[] = {"", "{", "[1,]", "{\"a\"}", "{\"a\":1,}", "\"abc", "01", "1.", "-",
                         "tru", "[1] 2", "\"\\x\"", "\"a\x01\"", "{1:2}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        status_clear(&err);
        if (json_parse(bad[i], strlen(bad[i]), &d, &err) == KILN_OK)
            fail_msg("accepted bad JSON %zu: %s", i, bad[i]);
        assert_int_equal(err.code, KILN_CORRUPTION);
    }
    /* nesting beyond the limit is refused, not a stack overflow */
    char deep[JSON_DEPTH_MAX * 2 + 8];
    memset(deep, '[', JSON_DEPTH_MAX + 1);
    memset(deep + JSON_DEPTH_MAX + 1, ']', JSON_DEPTH_MAX + 1);
    status_clear(&err);
    assert_int_equal(json_parse(deep, 2 * (JSON_DEPTH_MAX + 1), &d, &err), KILN_CORRUPTION);
    kbuf w = KBUF_INIT;
    json_str_append(&w, "a\"\\\x01\n", 5);
    assert_int_equal(w.len, strlen("\"a\\\"\\\\\\u0001\\n\""));
    assert_memory_equal(w.data, "\"a\\\"\\\\\\u0001\\n\"", w.len);
    buf_free(&w);
}

static void
rowcache_images_and_eviction(void **state)
{
    (void)state;
    kiln_cell cells[2];
    memset(cells, 0, sizeof cells);
    cells[0].family = (const uint8_t *)"f";
    cells[0].family_len = 1;
    cells[0].qualifier = (const uint8_t *)"";
    cells[0].ts = -1;
    cells[0].value = (const uint8_t *)"v\0x";
    cells[0].value_len = 3;
    cells[1].family = (const uint8_t *)"g";
    cells[1].family_len = 1;
    cells[1].qualifier = (const uint8_t *)"q\xff";
    cells[1].qualifier_len = 2;
    cells[1].ts = INT64_MAX;
    store_row r = {kslice_str("row"), cells, 2};
    kbuf img = KBUF_INIT;
    rowcache_encode(&r, &img);
    kiln_cell *out = NULL;
    size_t cap = 0;
    assert_int_equal(rowcache_decode(img.data, img.len, kslice_str("row"), &out, &cap), 2);
    assert_int_equal(out[0].ts, -1);
    assert_memory_equal(out[0].value, "v\0x", 3);
    assert_int_equal(out[1].qualifier_len, 2);
    assert_true(out[1].ts == INT64_MAX);
    for (size_t cut = 0; cut < img.len; cut++)
        assert_int_equal(rowcache_decode(img.data, cut, kslice_str("row"), &out, &cap), -1);

    rowcache_pool *pool = rowcache_pool_new(64 * 1024);
    rowcache *c = rowcache_new(pool);
    kbuf got = KBUF_INIT;
    char key[32];
    for (int i = 0; i < 2000; i++) {
        int n = snprintf(key, sizeof key, "k%d", i);
        rowcache_put(c, (const uint8_t *)key, (size_t)n, img.data, img.len, ROWCACHE_NO_EXPIRY);
        assert_true(rowcache_pool_used(pool) <= 64 * 1024);
    }
    assert_int_equal(rowcache_get(c, (const uint8_t *)"k1999", 5, 0, &got), 1);
    assert_int_equal(got.len, img.len);
    assert_int_equal(rowcache_get(c, (const uint8_t *)"k0", 2, 0, &got), 0);
    rowcache_put(c, (const uint8_t *)"exp", 3, img.data, img.len, 100);
    assert_int_equal(rowcache_get(c, (const uint8_t *)"exp", 3, 99, &got), 1);
    assert_int_equal(rowcache_get(c, (const uint8_t *)"exp", 3, 100, &got), 0);
    kbuf keys = KBUF_INIT;
    size_t nk = rowcache_hot_keys(c, 10, &keys);
    assert_int_equal(nk, 10);
    rowcache_stats st;
    rowcache_get_stats(c, &st);
    assert_true(st.evictions > 0);
    assert_int_equal(st.hits, 2);
    /* a cache being warmed beside a full one does not evict; afterwards it does */
    rowcache *next = rowcache_new(pool);
    rowcache_set_warming(next, 1);
    for (int i = 0; i < 100; i++) {
        int n = snprintf(key, sizeof key, "n%d", i);
        rowcache_put(next, (const uint8_t *)key, (size_t)n, img.data, img.len,
                     ROWCACHE_NO_EXPIRY);
    }
    rowcache_set_warming(next, 0);
    rowcache_stats ns;
    rowcache_get_stats(next, &ns);
    assert_int_equal(ns.evictions, 0);
    assert_int_equal(ns.entries, 100);
    assert_true(rowcache_pool_used(pool) > 64 * 1024);
    rowcache_free(c);
    c = rowcache_new(pool);
    assert_true(rowcache_pool_used(pool) <= 64 * 1024);
    for (int i = 100; i < 3000; i++) {
        int n = snprintf(key, sizeof key, "n%d", i);
        rowcache_put(next, (const uint8_t *)key, (size_t)n, img.data, img.len,
                     ROWCACHE_NO_EXPIRY);
        assert_true(rowcache_pool_used(pool) <= 64 * 1024);
    }
    rowcache_get_stats(next, &ns);
    assert_true(ns.evictions > 0);
    rowcache_free(c);
    rowcache_free(next);
    assert_int_equal(rowcache_pool_used(pool), 0);
    rowcache_pool_free(pool);
    assert_null(rowcache_new(NULL));
    free(out);
    buf_free(&img);
    buf_free(&got);
    buf_free(&keys);
}

/* A cache of many slabs in every shard (about 175 MiB), entries of every
 * size class and some of a mapping of their own: every entry reads back
 * intact, nothing is evicted under the budget, and freeing the cache gives
 * all of the pool back. */
static void
rowcache_large_cache_round_trips(void **state)
{
    (void)state;
    rowcache_pool *pool = rowcache_pool_new((size_t)512 << 20);
    rowcache *c = rowcache_new(pool);
    enum { N = 90000 };
    uint8_t img[6000];
    for (size_t i = 0; i < sizeof img; i++)
        img[i] = (uint8_t)(i * 131 + 7);
    char key[32];
    kbuf got = KBUF_INIT;
    /* sizes cycle through the classes up to 4 KiB; every 1000th is larger */
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "big%06d", i);
        size_t len = i % 1000 == 0 ? 5000 : (size_t)(i * 37) % 3900;
        rowcache_put(c, (const uint8_t *)key, (size_t)n, img + i % 50, len, ROWCACHE_NO_EXPIRY);
    }
    rowcache_stats st;
    rowcache_get_stats(c, &st);
    assert_int_equal(st.entries, N);
    assert_int_equal(st.evictions, 0);
    assert_true(st.bytes > (size_t)128 << 20);   /* over 4 MiB of slabs per shard */
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "big%06d", i);
        size_t len = i % 1000 == 0 ? 5000 : (size_t)(i * 37) % 3900;
        assert_int_equal(rowcache_get(c, (const uint8_t *)key, (size_t)n, 0, &got), 1);
        assert_int_equal(got.len, len);
        assert_memory_equal(got.data, img + i % 50, len);
    }
    rowcache_free(c);
    assert_int_equal(rowcache_pool_used(pool), 0);
    rowcache_pool_free(pool);
    buf_free(&got);
}

/* A cache reserved for N rows takes them without doubling any shard's hash
 * (each doubling rehashes a shard under its lock), where an unreserved one
 * doubles many times; reserving a cache that holds rows keeps every row;
 * the buckets count against the pool, capped at an eighth of it. */
static void
rowcache_reserve_presizes(void **state)
{
    (void)state;
    enum { N = 50000 };
    rowcache_pool *pool = rowcache_pool_new((size_t)256 << 20);
    rowcache *plain = rowcache_new(pool), *sized = rowcache_new(pool);
    char key[32];
    kbuf got = KBUF_INIT;
    /* A few rows first: the reserve rehashes them. */
    for (int i = 0; i < 100; i++) {
        int n = snprintf(key, sizeof key, "row%06d", i);
        rowcache_put(sized, (const uint8_t *)key, (size_t)n, (const uint8_t *)key, (size_t)n,
                     ROWCACHE_NO_EXPIRY);
    }
    uint64_t before = rowcache_pool_used(pool);
    rowcache_reserve(sized, N);
    assert_true(rowcache_pool_used(pool) >= before + (N / 2) * sizeof(void *));
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "row%06d", i);
        rowcache_put(plain, (const uint8_t *)key, (size_t)n, (const uint8_t *)key, (size_t)n,
                     ROWCACHE_NO_EXPIRY);
        rowcache_put(sized, (const uint8_t *)key, (size_t)n, (const uint8_t *)key, (size_t)n,
                     ROWCACHE_NO_EXPIRY);
    }
    rowcache_stats ps, ss;
    rowcache_get_stats(plain, &ps);
    rowcache_get_stats(sized, &ss);
    print_message("hash doublings: %llu unreserved, %llu reserved\n",
                  (unsigned long long)ps.growths, (unsigned long long)ss.growths);
    assert_int_equal(ss.entries, N);
    assert_int_equal(ss.growths, 0);
    assert_true(ps.growths >= 32);   /* every shard doubled at least once */
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "row%06d", i);
        assert_int_equal(rowcache_get(sized, (const uint8_t *)key, (size_t)n, 0, &got), 1);
        assert_int_equal(got.len, (size_t)n);
        assert_memory_equal(got.data, key, (size_t)n);
    }
    /* Far more rows than the pool could ever index: an eighth of it. */
    rowcache *huge = rowcache_new(pool);
    before = rowcache_pool_used(pool);
    rowcache_reserve(huge, (size_t)1 << 40);
    assert_true(rowcache_pool_used(pool) - before <= ((size_t)256 << 20) / 8);
    rowcache_reserve(NULL, N);
    rowcache_free(huge);
    rowcache_free(plain);
    rowcache_free(sized);
    assert_int_equal(rowcache_pool_used(pool), 0);
    rowcache_pool_free(pool);
    buf_free(&got);
}

/* A retired cache (its version swapped out) leaves the pool's count at
 * once: the next version's cache fills the whole budget beside it without
 * evicting, while the retired one still answers and takes nothing new;
 * freeing both gives the pool back exactly. */
static void
rowcache_retire_frees_the_budget(void **state)
{
    (void)state;
    enum { N = 3000 };
    const size_t budget = (size_t)4 << 20;
    rowcache_pool *pool = rowcache_pool_new(budget);
    rowcache *old = rowcache_new(pool);
    uint8_t img[900];
    memset(img, 'v', sizeof img);
    char key[32];
    kbuf got = KBUF_INIT;
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "k%06d", i);
        rowcache_put(old, (const uint8_t *)key, (size_t)n, img, sizeof img, ROWCACHE_NO_EXPIRY);
    }
    rowcache_stats os;
    rowcache_get_stats(old, &os);
    assert_true(rowcache_pool_used(pool) > budget / 2);   /* most of the budget */

    rowcache_retire(old);
    assert_true(rowcache_pool_used(pool) < budget / 64);
    int n = snprintf(key, sizeof key, "k%06d", N - 1);
    int had = rowcache_get(old, (const uint8_t *)key, (size_t)n, 0, &got);
    n = snprintf(key, sizeof key, "fresh");
    rowcache_put(old, (const uint8_t *)key, (size_t)n, img, sizeof img, ROWCACHE_NO_EXPIRY);
    assert_int_equal(rowcache_get(old, (const uint8_t *)key, (size_t)n, 0, &got), 0);
    rowcache_stats rs;
    rowcache_get_stats(old, &rs);
    assert_int_equal(rs.entries, os.entries);
    assert_int_equal(had, 1);

    /* The next version's cache fills as much as the old one had, unevicted. */
    rowcache *next = rowcache_new(pool);
    for (int i = 0; i < N; i++) {
        n = snprintf(key, sizeof key, "k%06d", i);
        rowcache_put(next, (const uint8_t *)key, (size_t)n, img, sizeof img, ROWCACHE_NO_EXPIRY);
    }
    rowcache_stats ns;
    rowcache_get_stats(next, &ns);
    print_message("old cache %llu rows, next %llu rows (%llu evicted)\n",
                  (unsigned long long)os.entries, (unsigned long long)ns.entries,
                  (unsigned long long)ns.evictions);
    assert_int_equal(ns.entries, os.entries);
    assert_int_equal(ns.evictions, os.evictions);
    rowcache_retire(old);   /* twice changes nothing */
    uint64_t used = rowcache_pool_used(pool);
    rowcache_free(old);
    assert_int_equal(rowcache_pool_used(pool), used);
    rowcache_free(next);
    assert_int_equal(rowcache_pool_used(pool), 0);
    rowcache_retire(NULL);
    rowcache_pool_free(pool);
    buf_free(&got);
}

/* A freed cache's slabs stay with the pool, within its capacity, and the
 * next cache writes its rows into them rather than into new mappings; what
 * they held before never shows through. */
static void
freed_slabs_serve_the_next_cache(void **state)
{
    (void)state;
    enum { N = 40000 };
    const size_t budget = (size_t)256 << 20;
    const uint64_t ramp = (uint64_t)32 * (2 << 20);   /* each shard's first, smaller slabs */
    rowcache_pool *pool = rowcache_pool_new(budget);
    rowcache *old = rowcache_new(pool);
    uint8_t img[3000];
    char key[32];
    kbuf got = KBUF_INIT;
    memset(img, 'v', sizeof img);
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "k%06d", i);
        rowcache_put(old, (const uint8_t *)key, (size_t)n, img, sizeof img, ROWCACHE_NO_EXPIRY);
    }
    assert_int_equal(rowcache_pool_spare_bytes(pool), 0);
    rowcache_retire(old);
    rowcache_free(old);
    uint64_t kept = rowcache_pool_spare_bytes(pool);
    print_message("%llu MiB of slabs kept\n", (unsigned long long)(kept >> 20));
    /* every full-size slab of the rows: all but the first 2 MiB of each shard */
    assert_true(kept + ramp >= (uint64_t)N * sizeof img);
    assert_true(kept > 0);
    assert_int_equal(kept % ((size_t)2 << 20), 0);
    assert_true(rowcache_pool_used(pool) + kept <= budget);

    rowcache *next = rowcache_new(pool);
    memset(img, 'w', sizeof img);
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "k%06d", i);
        img[0] = (uint8_t)i;
        rowcache_put(next, (const uint8_t *)key, (size_t)n, img, sizeof img, ROWCACHE_NO_EXPIRY);
    }
    uint64_t left = rowcache_pool_spare_bytes(pool);
    /* the next rows past the first slabs went there */
    assert_true(left + ((uint64_t)N * sizeof img - ramp) / 2 < kept);
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "k%06d", i);
        assert_int_equal(rowcache_get(next, (const uint8_t *)key, (size_t)n, 0, &got), 1);
        assert_int_equal(got.len, sizeof img);
        assert_int_equal(got.data[0], (uint8_t)i);
        for (size_t k = 1; k < got.len; k++)
            if (got.data[k] != 'w')
                fail_msg("row %d: byte %zu is '%c', not the next cache's 'w'", i, k, got.data[k]);
    }
    rowcache_free(next);
    assert_int_equal(rowcache_pool_used(pool), 0);
    assert_true(rowcache_pool_spare_bytes(pool) <= budget);
    rowcache_pool_free(pool);
    buf_free(&got);
}

/* rowcache_put_new links a row without looking for one to replace: every
 * row of a fill is found after it, chains of many rows a bucket included,
 * and a later plain put still replaces what it put. */
static void
put_new_rows_are_found_and_replaced(void **state)
{
    (void)state;
    enum { N = 20000 };
    rowcache_pool *pool = rowcache_pool_new((size_t)64 << 20);
    rowcache *c = rowcache_new(pool);
    char key[32], img[32];
    kbuf got = KBUF_INIT;
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "row%07d", i);
        int m = snprintf(img, sizeof img, "v%d", i);
        rowcache_put_new(c, (const uint8_t *)key, (size_t)n, (const uint8_t *)img, (size_t)m,
                         ROWCACHE_NO_EXPIRY);
    }
    rowcache_stats st;
    rowcache_get_stats(c, &st);
    assert_int_equal(st.entries, N);
    assert_true(st.growths > 0);   /* chains were rehashed as the rows came in */
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "row%07d", i);
        int m = snprintf(img, sizeof img, "v%d", i);
        assert_int_equal(rowcache_get(c, (const uint8_t *)key, (size_t)n, 0, &got), 1);
        assert_int_equal(got.len, (size_t)m);
        assert_memory_equal(got.data, img, (size_t)m);
    }
    for (int i = 0; i < N; i += 7) {
        int n = snprintf(key, sizeof key, "row%07d", i);
        rowcache_put(c, (const uint8_t *)key, (size_t)n, (const uint8_t *)"new", 3,
                     ROWCACHE_NO_EXPIRY);
    }
    rowcache_get_stats(c, &st);
    assert_int_equal(st.entries, N);
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "row%07d", i);
        assert_int_equal(rowcache_get(c, (const uint8_t *)key, (size_t)n, 0, &got), 1);
        if (i % 7 == 0)
            assert_memory_equal(got.data, "new", 3);
        else
            assert_int_equal(got.data[0], 'v');
    }
    rowcache_free(c);
    rowcache_pool_free(pool);
    buf_free(&got);
}

/* The pool keeps a freed cache's slabs only as far as the caches still in
 * use leave room in its capacity: the memory it holds stays within budget. */
static void
kept_slabs_stay_within_the_budget(void **state)
{
    (void)state;
    enum { N = 27000 };
    const size_t budget = (size_t)192 << 20;
    rowcache_pool *pool = rowcache_pool_new(budget);
    rowcache *a = rowcache_new(pool), *b = rowcache_new(pool);
    uint8_t img[3000];
    memset(img, 'a', sizeof img);
    char key[32];
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "a%06d", i);
        rowcache_put(a, (const uint8_t *)key, (size_t)n, img, sizeof img, ROWCACHE_NO_EXPIRY);
        n = snprintf(key, sizeof key, "b%06d", i);
        rowcache_put(b, (const uint8_t *)key, (size_t)n, img, sizeof img, ROWCACHE_NO_EXPIRY);
    }
    uint64_t used_b;
    rowcache_stats bs;
    rowcache_get_stats(b, &bs);
    used_b = bs.bytes;
    assert_true(used_b > budget / 4);   /* b holds a good part of the budget */
    rowcache_free(a);
    uint64_t kept = rowcache_pool_spare_bytes(pool);
    print_message("b holds %llu KiB; %llu KiB of a's slabs kept of %zu KiB\n",
                  (unsigned long long)(used_b >> 10), (unsigned long long)(kept >> 10),
                  budget >> 10);
    assert_true(kept > 0);
    assert_true(rowcache_pool_used(pool) + kept <= budget);
    rowcache_free(b);
    assert_true(rowcache_pool_spare_bytes(pool) <= budget);
    assert_int_equal(rowcache_pool_used(pool), 0);
    rowcache_pool_free(pool);
}

/* The process's resident memory (bytes), from /proc/self/statm. */
static uint64_t
resident_bytes(void)
{
    unsigned long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%lu %lu", &size, &resident), 2);
    fclose(f);
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* A cache maps about what the pool counts for it, at every size: its
 * shards start with small slabs and double them, so a cache of a few rows
 * does not hold a 2 MiB slab (a huge page, once touched) in each of its 32
 * shards. Checked on the cache's own count of what it maps, and on the
 * process's resident memory for caches of a few rows each. */
static void
caches_map_about_what_they_count(void **state)
{
    (void)state;
    enum { N = 30000, SMALL = 16, ROWS = 200 };
    rowcache_pool *pool = rowcache_pool_new((size_t)256 << 20);
    uint8_t img[1000];
    memset(img, 'm', sizeof img);
    char key[32];
    rowcache *c = rowcache_new(pool);
    rowcache_stats st;
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "m%06d", i);
        rowcache_put(c, (const uint8_t *)key, (size_t)n, img, sizeof img, ROWCACHE_NO_EXPIRY);
        if (i % 500 != 0)
            continue;
        rowcache_get_stats(c, &st);
        /* doubling: at most twice what is counted, plus a first slab and a
         * slab's unusable tail per shard */
        if (st.mapped > 2 * st.bytes + (uint64_t)32 * (128 << 10))
            fail_msg("%d rows: %llu bytes mapped for %llu counted", i + 1,
                     (unsigned long long)st.mapped, (unsigned long long)st.bytes);
    }
    rowcache_get_stats(c, &st);
    print_message("%d rows: %llu KiB mapped, %llu KiB counted\n", N,
                  (unsigned long long)(st.mapped >> 10), (unsigned long long)(st.bytes >> 10));
    assert_true(st.mapped >= (uint64_t)N * sizeof img);
    rowcache_free(c);

    /* SMALL caches of ROWS rows each: every shard touched, a first slab each */
    uint64_t before = resident_bytes();
    rowcache *small[SMALL];
    for (int k = 0; k < SMALL; k++) {
        small[k] = rowcache_new(pool);
        for (int i = 0; i < ROWS; i++) {
            int n = snprintf(key, sizeof key, "s%02d-%04d", k, i);
            rowcache_put(small[k], (const uint8_t *)key, (size_t)n, img, 100,
                         ROWCACHE_NO_EXPIRY);
        }
        rowcache_get_stats(small[k], &st);
        assert_true(st.mapped <= (uint64_t)32 * (64 << 10));
    }
    uint64_t grew = resident_bytes() - before;
    print_message("%d caches of %d rows: resident memory grew by %llu KiB\n", SMALL, ROWS,
                  (unsigned long long)(grew >> 10));
    assert_true(grew < (uint64_t)SMALL * (2 << 20));   /* 2 MiB per shard would be 64 MiB each */
    for (int k = 0; k < SMALL; k++)
        rowcache_free(small[k]);
    assert_int_equal(rowcache_pool_used(pool), 0);

    /* A cache told to expect a full slab a shard or more (a swap's fill)
     * takes full slabs from its first row, from the kept ones, and hands
     * them all back when freed: nothing it mapped is unmapped. */
    rowcache *big = rowcache_new(pool);
    rowcache_expect_bytes(big, (uint64_t)32 * (2 << 20) - 1);   /* under: no change */
    rowcache_put(big, (const uint8_t *)"k", 1, img, 100, ROWCACHE_NO_EXPIRY);
    rowcache_get_stats(big, &st);
    assert_int_equal(st.mapped, 64 << 10);
    rowcache_free(big);
    uint64_t kept = rowcache_pool_spare_bytes(pool);
    big = rowcache_new(pool);
    rowcache_expect_bytes(big, (uint64_t)32 * (2 << 20));
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "b%06d", i);
        rowcache_put(big, (const uint8_t *)key, (size_t)n, img, sizeof img, ROWCACHE_NO_EXPIRY);
    }
    rowcache_get_stats(big, &st);
    assert_int_equal(st.mapped % (2 << 20), 0);
    assert_true(rowcache_pool_spare_bytes(pool) < kept || kept == 0);
    uint64_t mapped = st.mapped;
    rowcache_free(big);
    print_message("expecting cache: %llu KiB mapped, %llu KiB kept after its free\n",
                  (unsigned long long)(mapped >> 10),
                  (unsigned long long)(rowcache_pool_spare_bytes(pool) >> 10));
    assert_int_equal(rowcache_pool_spare_bytes(pool), mapped);
    rowcache_expect_bytes(NULL, 1);
    rowcache_pool_free(pool);
}

/* rowcache_contains answers without counting a hit or a miss; room lent to
 * the pool lets a second cache fill beside a full one without evicting
 * either, and evictions resume once it is repaid. */
static void
rowcache_contains_and_lent_room(void **state)
{
    (void)state;
    enum { N = 2000 };
    const size_t budget = (size_t)2 << 20;
    rowcache_pool *pool = rowcache_pool_new(budget);
    rowcache *a = rowcache_new(pool), *b = rowcache_new(pool);
    uint8_t img[700];
    memset(img, 'v', sizeof img);
    char key[32];
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "k%06d", i);
        rowcache_put(a, (const uint8_t *)key, (size_t)n, img, sizeof img, ROWCACHE_NO_EXPIRY);
    }
    uint64_t used = rowcache_pool_used(pool);
    assert_true(used > budget / 2 && used <= budget);
    assert_int_equal(rowcache_contains(a, (const uint8_t *)"k000007", 7), 1);
    assert_int_equal(rowcache_contains(a, (const uint8_t *)"k00000", 6), 0);
    assert_int_equal(rowcache_contains(b, (const uint8_t *)"k000007", 7), 0);
    /* looking ahead at present and absent keys, in either cache, is a hint only */
    const char *ahead[] = {"k000007", "k001999", "k00000", "nothing"};
    for (int step = 0; step < 2; step++) {
        for (size_t i = 0; i < 4; i++) {
            rowcache_prefetch(a, (const uint8_t *)ahead[i], strlen(ahead[i]), step);
            rowcache_prefetch(b, (const uint8_t *)ahead[i], strlen(ahead[i]), step);
        }
    }
    assert_int_equal(rowcache_pool_used(pool), used);
    rowcache_stats as;
    rowcache_get_stats(a, &as);
    assert_int_equal(as.hits, 0);
    assert_int_equal(as.misses, 0);
    assert_int_equal(as.evictions, 0);
    assert_int_equal(as.entries, N);

    rowcache_pool_lend(pool, budget);
    assert_int_equal(rowcache_pool_limit(pool), 2 * budget);
    for (int i = 0; i < N; i++) {
        int n = snprintf(key, sizeof key, "k%06d", i);
        rowcache_put(b, (const uint8_t *)key, (size_t)n, img, sizeof img, ROWCACHE_NO_EXPIRY);
    }
    rowcache_stats bs;
    rowcache_get_stats(a, &as);
    rowcache_get_stats(b, &bs);
    assert_int_equal(as.evictions + bs.evictions, 0);
    assert_int_equal(bs.entries, N);
    rowcache_pool_repay(pool, budget);
    assert_int_equal(rowcache_pool_limit(pool), budget);
    int n = snprintf(key, sizeof key, "more");
    rowcache_put(b, (const uint8_t *)key, (size_t)n, img, sizeof img, ROWCACHE_NO_EXPIRY);
    rowcache_get_stats(b, &bs);
    assert_true(bs.evictions > 0);
    rowcache_retire(a);   /* as a swap does before it repays */
    assert_true(rowcache_pool_used(pool) <= budget);
    rowcache_free(a);
    rowcache_free(b);
    rowcache_pool_free(pool);
}

int
main(void)
{
    const char *env = getenv("KILN_TEST_SEED");
    wire_seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
    printf("seed=%u\n", wire_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(http_parses_request_line_and_headers),
        cmocka_unit_test(http_rejects_malformed_heads),
        cmocka_unit_test(http_chunked_bodies),
        cmocka_unit_test(http_head_end_is_incremental),
        cmocka_unit_test(http_percent_coding_round_trips),
        cmocka_unit_test(http_query_pairs),
        cmocka_unit_test(http_client_parses_response_heads),
        cmocka_unit_test(resp_parses_commands),
        cmocka_unit_test(resp_writes_replies),
        cmocka_unit_test(json_base64_round_trips),
        cmocka_unit_test(json_base64_against_bits),
        cmocka_unit_test(json_numbers_print_exactly),
        cmocka_unit_test(json_parses_documents),
        cmocka_unit_test(rowcache_images_and_eviction),
        cmocka_unit_test(rowcache_large_cache_round_trips),
        cmocka_unit_test(rowcache_reserve_presizes),
        cmocka_unit_test(rowcache_retire_frees_the_budget),
        cmocka_unit_test(freed_slabs_serve_the_next_cache),
        cmocka_unit_test(kept_slabs_stay_within_the_budget),
        cmocka_unit_test(caches_map_about_what_they_count),
        cmocka_unit_test(put_new_rows_are_found_and_replaced),
        cmocka_unit_test(rowcache_contains_and_lent_room),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
