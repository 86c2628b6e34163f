/* test_server.c -- kiln-server end to end through loopback sockets: an
 * in-process server over a temporary data directory answers every HTTP
 * route (tables, version, schema, regions, rows, multiget, scans paged to
 * the end in both directions, count, metrics, healthz, status), keys with
 * '/', ':', ',', spaces and binary bytes percent-encoded, 404s, malformed and
 * oversized requests, limits (connections, idle timeout), keep-alive and
 * pipelining, HEAD, paths that try to leave the data directory, and the
 * Redis protocol (GET, MGET, EXISTS, PING, INFO, SELECT, TABLE/ROW keys,
 * pipelining, protocol errors), connections handed between workers as one
 * parks and comes back, and connections gathered on the worker of their
 * client's CPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>

#include "serving/server.h"
#include "serving/slog.h"
#include "storage/query/json.h"
#include "tests/serving/serving_fixture.h"

#define SCAN_ROWS 500
#define PAGE_ROWS 100

static char data_dir[512];
static server *srv;
static int http_port, resp_port;

/* Keys that need percent-encoding, each with f:q = "v:" + key. */
static const struct {
    const char *key;
    size_t n;
} odd_keys[] = {
    {"a/b", 3}, {"c:d", 3}, {"e,f", 3}, {"sp ace", 6}, {"pct%25", 6}, {"bin\0\xff", 5},
    {"schema", 6}, {"*", 1}, {"q?x&y=z#", 8}, {"plus+", 5}, {"\xff\xfe", 2}, {"..", 2},
};
#define ODD_KEYS (sizeof odd_keys / sizeof odd_keys[0])

static void
build_data(void)
{
    fx_tmpdir(data_dir, sizeof data_dir, "server-test");
    static const char *const tfams[] = {"f:versions=3", "g:bloom=rowcol,compression=none", NULL};
    kslice splits[] = {kslice_str("g"), kslice_make("m\0", 2), kslice_str("row0250"),
                       kslice_str("s")};
    fx_create(data_dir, "t", tfams, splits, 4);
    fx_cells cs = {0};
    char row[32], val[64];
    for (int i = 0; i < SCAN_ROWS; i++) {
        int rn = snprintf(row, sizeof row, "row%04d", i);
        int vn = snprintf(val, sizeof val, "val-%d", i);
        fx_add(&cs, row, (size_t)rn, "f", "q", 1, 1000, val, (size_t)vn);
        if (i % 2 == 0) {
            vn = snprintf(val, sizeof val, "x-%d", i);
            fx_add(&cs, row, (size_t)rn, "g", "x", 1, 1000, val, (size_t)vn);
        }
    }
    for (size_t i = 0; i < ODD_KEYS; i++) {
        kbuf v = KBUF_INIT;
        buf_append(&v, "v:", 2);
        buf_append(&v, odd_keys[i].key, odd_keys[i].n);
        fx_add(&cs, odd_keys[i].key, odd_keys[i].n, "f", "q", 1, 1000, v.data, v.len);
        buf_free(&v);
    }
    fx_add(&cs, "multi", 5, "f", "q", 1, 300, "v3", 2);
    fx_add(&cs, "multi", 5, "f", "q", 1, 200, "v2", 2);
    fx_add(&cs, "multi", 5, "f", "q", 1, 100, "v1", 2);
    fx_add(&cs, "multi", 5, "f", "r", 1, 100, "r1", 2);
    fx_add(&cs, "multi", 5, "g", "q\xff:x", 4, 100, "bin-qual", 8);
    fx_publish(data_dir, "t", &cs);
    fx_cells_free(&cs);

    static const char *const ofams[] = {"d", NULL};
    fx_create(data_dir, "ns1:other", ofams, NULL, 0);
    fx_add(&cs, "k1", 2, "d", "a", 1, 5, "one-a", 5);
    fx_add(&cs, "k1", 2, "d", "b", 1, 5, "one-b", 5);
    fx_add(&cs, "k2", 2, "d", "b", 1, 5, "two-b", 5);
    fx_publish(data_dir, "ns1:other", &cs);
    fx_cells_free(&cs);

    static const char *const efams[] = {"e", NULL};
    fx_create(data_dir, "empty", efams, NULL, 0);
}

/* A read-only server of the test's data on ephemeral loopback ports. */
static void
test_config(server_config *cfg)
{
    server_config_init(cfg);
    cfg->data_dir = data_dir;
    cfg->listen = "127.0.0.1:0";
    cfg->resp_listen = "127.0.0.1:0";
    cfg->threads = 2;
    cfg->cache_bytes = 8u << 20;
    cfg->read_only = 1;   /* the read API; writes are write_test.sh's */
}

/* Start a server of cfg, failing the test if it does not start. */
static server *
start(const server_config *cfg)
{
    server *s;
    kiln_err err;
    status_clear(&err);
    fx_must(server_start(cfg, &s, &err), &err, "server_start");
    return s;
}

static void
stop(server *s)
{
    server_shutdown(s);
    server_wait(s);
    server_free(s);
}

static int
setup(void **state)
{
    (void)state;
    slog_set_quiet(1);
    build_data();
    server_config cfg;
    test_config(&cfg);
    cfg.max_request_bytes = 8192;
    cfg.max_headers = 16;
    cfg.page_rows = PAGE_ROWS;
    static const char *const cols[] = {"ns1:other=d:b"};
    cfg.resp_columns = cols;
    cfg.resp_column_count = 1;
    srv = start(&cfg);
    http_port = server_http_port(srv);
    resp_port = server_resp_port(srv);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    stop(srv);
    tu_rmrf(data_dir);
    return 0;
}

/* ------------------------------------------------------------------ helpers */

static void
get(const char *target, const char *extra, fx_resp *r)
{
    fx_get(http_port, target, extra, r);
}

static json_doc *
body_json(const fx_resp *r)
{
    json_doc *d;
    kiln_err err;
    status_clear(&err);
    if (json_parse((const char *)r->body.data, r->body.len, &d, &err) != KILN_OK)
        fail_msg("body is not JSON (%s): %.*s", err.msg, (int)r->body.len, r->body.data);
    return d;
}

static void
expect_status(const char *target, int status, const char *code)
{
    fx_resp r = {0};
    get(target, NULL, &r);
    if (r.h.status != status)
        fail_msg("GET %s: status %d, want %d: %.*s", target, r.h.status, status,
                 (int)r.body.len, r.body.data);
    if (code != NULL) {
        json_doc *d = body_json(&r);
        const char *c = json_str(json_get(json_root(d), "code"), NULL);
        if (c == NULL || strcmp(c, code) != 0)
            fail_msg("GET %s: code %s, want %s", target, c ? c : "(none)", code);
        /* one line of JSON */
        assert_int_equal(r.body.data[r.body.len - 1], '\n');
        assert_null(memchr(r.body.data, '\n', r.body.len - 1));
        json_doc_free(d);
    }
    fx_resp_free(&r);
}

static void
b64_field(const json_node *v, kbuf *out)
{
    size_t n;
    const char *s = json_str(v, &n);
    assert_non_null(s);
    buf_reset(out);
    assert_int_equal(json_b64_decode(s, n, out), 0);
}

/* The row keys of a CellSet body, appended to keys (4-byte length + bytes). */
static size_t
row_keys(const json_doc *d, kbuf *keys)
{
    const json_node *rows = json_get(json_root(d), "Row");
    kbuf k = KBUF_INIT;
    for (size_t i = 0; i < json_len(rows); i++) {
        b64_field(json_get(json_at(rows, i), "key"), &k);
        uint32_t n = (uint32_t)k.len;
        buf_append(keys, &n, 4);
        buf_append(keys, k.data, k.len);
    }
    buf_free(&k);
    return json_len(rows);
}

static void
pct(kbuf *b, const void *p, size_t n)
{
    http_pct_encode(b, p, n);
    buf_append_u8(b, '\0');
    b->len--;
}

/* ------------------------------------------------------------------ tests */

static void
tables_version_health(void **state)
{
    (void)state;
    fx_resp r = {0};
    get("/", NULL, &r);
    assert_int_equal(r.h.status, 200);
    assert_string_equal(r.h.content_type, "application/json");
    json_doc *d = body_json(&r);
    const json_node *list = json_get(json_root(d), "table");
    assert_int_equal(json_len(list), 3);
    assert_string_equal(json_str(json_get(json_at(list, 0), "name"), NULL), "empty");
    assert_string_equal(json_str(json_get(json_at(list, 1), "name"), NULL), "t");
    assert_string_equal(json_str(json_get(json_at(list, 2), "name"), NULL), "ns1:other");
    json_doc_free(d);
    get("/version", NULL, &r);
    d = body_json(&r);
    assert_string_equal(json_str(json_get(json_root(d), "Kiln"), NULL), KILN_VERSION);
    assert_non_null(json_str(json_get(json_root(d), "REST"), NULL));
    json_doc_free(d);
    get("/version/cluster", NULL, &r);
    assert_int_equal(r.h.status, 200);
    get("/healthz", NULL, &r);
    assert_int_equal(r.h.status, 200);
    d = body_json(&r);
    assert_string_equal(json_str(json_get(json_root(d), "status"), NULL), "ok");
    json_doc_free(d);
    fx_resp_free(&r);
}

static void
schema_and_regions(void **state)
{
    (void)state;
    fx_resp r = {0};
    get("/t/schema", NULL, &r);
    assert_int_equal(r.h.status, 200);
    assert_true(r.h.has_version);
    assert_int_equal(r.h.version, 1);
    json_doc *d = body_json(&r);
    const json_node *root = json_root(d);
    assert_string_equal(json_str(json_get(root, "name"), NULL), "t");
    assert_string_equal(json_str(json_get(root, "REGIONS"), NULL), "5");
    assert_string_equal(json_str(json_get(root, "VERSION"), NULL), "1");
    const json_node *fams = json_get(root, "ColumnSchema");
    assert_int_equal(json_len(fams), 2);
    assert_string_equal(json_str(json_get(json_at(fams, 0), "name"), NULL), "f");
    assert_string_equal(json_str(json_get(json_at(fams, 0), "VERSIONS"), NULL), "3");
    assert_string_equal(json_str(json_get(json_at(fams, 1), "BLOOMFILTER"), NULL), "ROWCOL");
    assert_string_equal(json_str(json_get(json_at(fams, 1), "COMPRESSION"), NULL), "NONE");
    json_doc_free(d);
    get("/t/regions", NULL, &r);
    d = body_json(&r);
    const json_node *regs = json_get(json_root(d), "Region");
    assert_int_equal(json_len(regs), 5);
    kbuf k = KBUF_INIT;
    b64_field(json_get(json_at(regs, 0), "startKey"), &k);
    assert_int_equal(k.len, 0);
    b64_field(json_get(json_at(regs, 1), "endKey"), &k);
    assert_int_equal(k.len, 2);
    assert_memory_equal(k.data, "m\0", 2);
    int64_t files;
    assert_int_equal(json_int(json_get(json_at(regs, 2), "files"), &files), 0);
    assert_int_equal(files, 2);
    buf_free(&k);
    json_doc_free(d);
    get("/empty/schema", NULL, &r);
    assert_int_equal(r.h.status, 200);
    assert_int_equal(r.h.version, 0);
    fx_resp_free(&r);
    expect_status("/nope/schema", 404, "no_table");
    expect_status("/empty/row", 404, "no_row");
}

static void
rows_with_odd_keys(void **state)
{
    (void)state;
    fx_resp r = {0};
    kbuf target = KBUF_INIT, k = KBUF_INIT;
    for (size_t i = 0; i < ODD_KEYS; i++) {
        buf_reset(&target);
        buf_append(&target, "/t/", 3);
        if (strcmp(odd_keys[i].key, "schema") == 0)
            buf_append(&target, "%73chema", 8);   /* the route word itself is /t/schema */
        else
            pct(&target, odd_keys[i].key, odd_keys[i].n);
        buf_append_u8(&target, '\0');
        get((const char *)target.data, NULL, &r);
        if (r.h.status != 200)
            fail_msg("key %zu (%s): status %d %.*s", i, target.data, r.h.status,
                     (int)r.body.len, r.body.data);
        json_doc *d = body_json(&r);
        const json_node *row = json_at(json_get(json_root(d), "Row"), 0);
        b64_field(json_get(row, "key"), &k);
        assert_int_equal(k.len, odd_keys[i].n);
        assert_memory_equal(k.data, odd_keys[i].key, k.len);
        const json_node *cell = json_at(json_get(row, "Cell"), 0);
        b64_field(json_get(cell, "column"), &k);
        assert_int_equal(k.len, 3);
        assert_memory_equal(k.data, "f:q", 3);
        b64_field(json_get(cell, "$"), &k);
        assert_int_equal(k.len, odd_keys[i].n + 2);
        assert_memory_equal(k.data + 2, odd_keys[i].key, odd_keys[i].n);
        json_doc_free(d);
        /* the raw value */
        get((const char *)target.data, "Accept: application/octet-stream\r\n", &r);
        assert_int_equal(r.h.status, 200);
        assert_string_equal(r.h.content_type, "application/octet-stream");
        assert_true(r.h.has_timestamp);
        assert_int_equal(r.h.timestamp, 1000);
        assert_int_equal(r.body.len, odd_keys[i].n + 2);
    }
    /* a raw '/' splits the path: /t/a/b is row "a", columns "b" */
    expect_status("/t/a/b", 400, "invalid");
    expect_status("/t/nosuchrow", 404, "no_row");
    expect_status("/t/%zz", 400, "bad_request");
    expect_status("/t/row0001/f:q,nosuch", 400, "invalid");
    expect_status("/t/row0001/f:q?v=0", 400, "bad_request");
    expect_status("/t/row0001/f:q?v=x", 400, "bad_request");
    expect_status("/t/row0001?starttime=5&endtime=5", 400, "bad_request");
    expect_status("/t/row0001/f:q/notatime", 400, "bad_request");
    expect_status("/t/row0001/f:q/1/extra", 404, "no_route");
    buf_free(&target);
    buf_free(&k);
    fx_resp_free(&r);
}

static void
row_columns_versions_and_raw(void **state)
{
    (void)state;
    fx_resp r = {0};
    kbuf v = KBUF_INIT;
    get("/t/multi", NULL, &r);
    json_doc *d = body_json(&r);
    const json_node *cells = json_get(json_at(json_get(json_root(d), "Row"), 0), "Cell");
    assert_int_equal(json_len(cells), 3);   /* f:q newest, f:r, g:q\xff:x */
    b64_field(json_get(json_at(cells, 0), "$"), &v);
    assert_memory_equal(v.data, "v3", 2);
    b64_field(json_get(json_at(cells, 2), "column"), &v);
    assert_int_equal(v.len, 6);
    assert_memory_equal(v.data, "g:q\xff:x", 6);
    json_doc_free(d);
    get("/t/multi/f:q?v=3", NULL, &r);
    d = body_json(&r);
    cells = json_get(json_at(json_get(json_root(d), "Row"), 0), "Cell");
    assert_int_equal(json_len(cells), 3);
    int64_t ts;
    assert_int_equal(json_int(json_get(json_at(cells, 2), "timestamp"), &ts), 0);
    assert_int_equal(ts, 100);
    json_doc_free(d);
    get("/t/multi/f:q/200", NULL, &r);
    d = body_json(&r);
    cells = json_get(json_at(json_get(json_root(d), "Row"), 0), "Cell");
    assert_int_equal(json_len(cells), 1);
    b64_field(json_get(json_at(cells, 0), "$"), &v);
    assert_memory_equal(v.data, "v2", 2);
    json_doc_free(d);
    get("/t/multi/f:q/100,250?v=3", NULL, &r);
    d = body_json(&r);
    assert_int_equal(json_len(json_get(json_at(json_get(json_root(d), "Row"), 0), "Cell")), 2);
    json_doc_free(d);
    /* a family, and a qualifier with ':' and a binary byte, percent-encoded */
    get("/t/multi/f", NULL, &r);
    d = body_json(&r);
    assert_int_equal(json_len(json_get(json_at(json_get(json_root(d), "Row"), 0), "Cell")), 2);
    json_doc_free(d);
    get("/t/multi/g:q%FF%3Ax", "Accept: application/octet-stream\r\n", &r);
    assert_int_equal(r.h.status, 200);
    assert_int_equal(r.body.len, 8);
    assert_memory_equal(r.body.data, "bin-qual", 8);
    get("/t/multi/f,g:q%FF%3Ax", NULL, &r);
    d = body_json(&r);
    assert_int_equal(json_len(json_get(json_at(json_get(json_root(d), "Row"), 0), "Cell")), 3);
    json_doc_free(d);
    expect_status("/t/multi/g:q%FF:x", 200, NULL);   /* a raw ':' after the first is kept */
    fx_resp f = {0};
    get("/t/multi", "Accept: application/octet-stream\r\n", &f);
    assert_int_equal(f.h.status, 400);
    assert_true(f.body.len > 13 && memcmp(f.body.data, "Bad request\r\n", 13) == 0);
    /* HEAD: same head, no body */
    fx_conn c = {fx_connect(http_port), KBUF_INIT};
    const char *head = "HEAD /t/multi HTTP/1.1\r\nHost: x\r\n\r\n";
    fx_send(c.fd, head, strlen(head));
    assert_int_equal(fx_read_response(&c, &f, 1), 0);
    assert_int_equal(f.h.status, 200);
    assert_true(f.h.content_length > 0);
    assert_int_equal(f.body.len, 0);
    close(c.fd);
    buf_free(&c.in);
    fx_resp_free(&f);
    fx_resp_free(&r);
    buf_free(&v);
}

static void
multiget(void **state)
{
    (void)state;
    fx_resp r = {0};
    get("/t/multiget?row=row0003&row=a%2Fb&row=absent&row=bin%00%FF&row=sp+ace", NULL, &r);
    assert_int_equal(r.h.status, 200);
    json_doc *d = body_json(&r);
    kbuf keys = KBUF_INIT;
    assert_int_equal(row_keys(d, &keys), 4);
    assert_memory_equal(keys.data + 4, "row0003", 7);
    json_doc_free(d);
    buf_free(&keys);
    get("/t/multiget?row=row0004&column=g", NULL, &r);
    d = body_json(&r);
    const json_node *cells = json_get(json_at(json_get(json_root(d), "Row"), 0), "Cell");
    assert_int_equal(json_len(cells), 1);
    json_doc_free(d);
    fx_resp_free(&r);
    expect_status("/t/multiget?row=x1&row=x2", 404, "no_row");
    expect_status("/t/multiget", 400, "bad_request");
    expect_status("/t/multiget?row=", 400, "bad_request");
}

/* GET target, then the pages after it, each from the one before's
 * next_startrow (appended as &startrow=), handing each answer to take;
 * returns the pages. A client pages a scan or a count this way. */
static int
follow_pages(const char *target, void (*take)(json_doc *, void *), void *arg)
{
    kbuf next = KBUF_INIT, t = KBUF_INIT;
    int pages = 0;
    for (;;) {
        buf_reset(&t);
        buf_append(&t, target, strlen(target));
        if (pages > 0) {
            buf_append(&t, "&startrow=", 10);
            pct(&t, next.data, next.len);
        }
        buf_append_u8(&t, '\0');
        fx_resp r = {0};
        get((const char *)t.data, NULL, &r);
        if (r.h.status != 200)
            fail_msg("%s page %d: %d %.*s", target, pages, r.h.status, (int)r.body.len,
                     r.body.data);
        json_doc *d = body_json(&r);
        take(d, arg);
        pages++;
        const json_node *ns = json_get(json_root(d), "next_startrow");
        int more = ns != NULL;
        if (more)
            b64_field(ns, &next);
        json_doc_free(d);
        fx_resp_free(&r);
        if (!more || pages > 1000)
            break;
    }
    buf_free(&next);
    buf_free(&t);
    return pages;
}

typedef struct scan_rows {
    kbuf *keys;
    size_t total;
} scan_rows;

static void
take_rows(json_doc *d, void *arg)
{
    scan_rows *sr = arg;
    sr->total += row_keys(d, sr->keys);
}

/* Page through a scan with the server's next_startrow; returns the rows. */
static size_t
scan_all(const char *query, int reversed, uint64_t limit, kbuf *keys, int *pages)
{
    char target[256];
    int n = snprintf(target, sizeof target, "/t/*?paged=true&%s%s", query,
                     reversed ? "&reversed=true" : "");
    if (limit > 0)
        snprintf(target + n, sizeof target - (size_t)n, "&limit=%llu", (unsigned long long)limit);
    scan_rows sr = {keys, 0};
    *pages = follow_pages(target, take_rows, &sr);
    return sr.total;
}

static void
check_scan_keys(const kbuf *keys, size_t n, int from, int step)
{
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t len;
        memcpy(&len, keys->data + pos, 4);
        char want[16];
        snprintf(want, sizeof want, "row%04d", from + (int)i * step);
        if (len != 7 || memcmp(keys->data + pos + 4, want, 7) != 0)
            fail_msg("scan row %zu: got %.*s, want %s", i, (int)len, keys->data + pos + 4, want);
        pos += 4 + len;
    }
}

static void
scans_page_to_the_end(void **state)
{
    (void)state;
    kbuf keys = KBUF_INIT;
    int pages;
    /* the server's page size cuts a scan without limit */
    size_t n = scan_all("prefix=row", 0, 0, &keys, &pages);
    assert_int_equal(n, SCAN_ROWS);
    assert_int_equal(pages, SCAN_ROWS / PAGE_ROWS + (SCAN_ROWS % PAGE_ROWS != 0));
    check_scan_keys(&keys, n, 0, 1);
    /* client pages of 37 rows across every region boundary */
    buf_reset(&keys);
    n = scan_all("prefix=row", 0, 37, &keys, &pages);
    assert_int_equal(n, SCAN_ROWS);
    assert_int_equal(pages, (SCAN_ROWS + 36) / 37);
    check_scan_keys(&keys, n, 0, 1);
    buf_reset(&keys);
    n = scan_all("prefix=row", 1, 41, &keys, &pages);
    assert_int_equal(n, SCAN_ROWS);
    check_scan_keys(&keys, n, SCAN_ROWS - 1, -1);
    /* bounds: startrow inclusive, endrow exclusive */
    buf_reset(&keys);
    n = scan_all("startrow=row0100&endrow=row0300", 0, 0, &keys, &pages);
    assert_int_equal(n, 200);
    check_scan_keys(&keys, n, 100, 1);
    /* reversed: startrow is the upper bound */
    buf_reset(&keys);
    n = scan_all("startrow=row0300&endrow=row0100", 1, 0, &keys, &pages);
    assert_int_equal(n, 200);
    check_scan_keys(&keys, n, 300, -1);
    /* a limit that ends exactly at the last row gives no next_startrow */
    fx_resp r = {0};
    get("/t/*?startrow=row0495&prefix=row&limit=5", NULL, &r);
    json_doc *d = body_json(&r);
    assert_null(json_get(json_root(d), "next_startrow"));
    json_doc_free(d);
    get("/t/*?paged=true&startrow=row0495&prefix=row&limit=4", NULL, &r);
    d = body_json(&r);
    assert_non_null(json_get(json_root(d), "next_startrow"));
    json_doc_free(d);
    /* the row-prefix glob and a column filter */
    get("/t/row001*?column=g", NULL, &r);
    d = body_json(&r);
    buf_reset(&keys);
    assert_int_equal(row_keys(d, &keys), 5);   /* even rows of row0010..row0019 */
    json_doc_free(d);
    get("/empty/*", NULL, &r);
    assert_int_equal(r.h.status, 200);
    d = body_json(&r);
    assert_int_equal(json_len(json_get(json_root(d), "Row")), 0);
    json_doc_free(d);
    fx_resp_free(&r);
    buf_free(&keys);
    expect_status("/t/*?limit=0", 400, "bad_request");
    expect_status("/t/*?reversed=maybe", 400, "bad_request");
    expect_status("/t/*?startrow=%G0", 400, "bad_request");
}

static void
take_count(json_doc *d, void *arg)
{
    int64_t n;
    assert_int_equal(json_int(json_get(json_root(d), "count"), &n), 0);
    *(int64_t *)arg += n;
}

/* count=true over the whole range: a count answers in pages (a time slice
 * each, so a slow or loaded host gets more of them) and a client follows
 * next_startrow to the end, as it would a paged scan. */
static int64_t
count_all(const char *query)
{
    char target[256];
    snprintf(target, sizeof target, "/t/*?count=true%s%s", query[0] ? "&" : "", query);
    int64_t total = 0;
    follow_pages(target, take_count, &total);
    return total;
}

static void
count_rows(void **state)
{
    (void)state;
    assert_int_equal(count_all("prefix=row"), SCAN_ROWS);
    assert_int_equal(count_all("startrow=row0100&endrow=row0200&column=g"), 50);
    assert_int_equal(count_all(""), SCAN_ROWS + (int64_t)ODD_KEYS + 1);
}

static void
metrics_and_status_page(void **state)
{
    (void)state;
    fx_resp r = {0};
    get("/t/row0001", NULL, &r);
    get("/metrics", NULL, &r);
    assert_int_equal(r.h.status, 200);
    assert_true(strncmp(r.h.content_type, "text/plain", 10) == 0);
    buf_append_u8(&r.body, '\0');
    const char *m = (const char *)r.body.data;
    const char *want[] = {
        "kiln_http_requests_total{route=\"row\",code=\"200\"} ",
        "kiln_http_request_duration_seconds_bucket{route=\"row\",le=\"+Inf\"} ",
        "kiln_http_request_duration_seconds_count{route=\"scan\"} ",
        "kiln_resp_command_duration_seconds_bucket{command=\"get\",le=\"0.001\"} ",
        "kiln_block_cache_hit_ratio ",
        "kiln_row_cache_hit_ratio ",
        "kiln_open_files ",
        "kiln_view_version{table=\"default:t\"} 1\n",
        "kiln_view_version{table=\"ns1:other\"} 1\n",
        "kiln_view_version{table=\"default:empty\"} 0\n",
        "# TYPE kiln_view_swaps_total counter\n",
        "kiln_view_warm_seconds{table=\"default:t\"} ",
        "kiln_view_open_error{table=\"default:t\"} 0\n",
        "kiln_connections ",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (strstr(m, want[i]) == NULL)
            fail_msg("/metrics lacks '%s'", want[i]);
    }
    /* every sample line is NAME{labels} VALUE or NAME VALUE */
    for (const char *line = m; *line != '\0';) {
        const char *nl = strchr(line, '\n');
        assert_non_null(nl);
        if (*line != '#') {
            const char *sp = memchr(line, ' ', (size_t)(nl - line));
            assert_non_null(sp);
            char *end;
            strtod(sp + 1, &end);
            assert_true(end == nl);
        }
        line = nl + 1;
    }
    get("/status", NULL, &r);
    assert_int_equal(r.h.status, 200);
    assert_true(strncmp(r.h.content_type, "text/html", 9) == 0);
    buf_append_u8(&r.body, '\0');
    const char *h = (const char *)r.body.data;
    const char *html[] = {"<!DOCTYPE html>", "Table default:t", "Table ns1:other",
                          "Table default:empty", "Regions", "Store files", "View versions",
                          "m\\x00", "per second", "served"};
    for (size_t i = 0; i < sizeof html / sizeof html[0]; i++) {
        if (strstr(h, html[i]) == NULL)
            fail_msg("/status lacks '%s'", html[i]);
    }
    fx_resp_free(&r);
}

static void
malformed_and_oversized_requests(void **state)
{
    (void)state;
    static const struct {
        const char *req;
        int status;
    } cases[] = {
        {"GARBAGE\r\n\r\n", 400},
        {"GET /t/row0001 HTTP/1.1\r\n\r\n", 400},                        /* no Host */
        {"GET /t/row0001 HTTP/3.0\r\nHost: x\r\n\r\n", 505},
        {"GET http://x/t HTTP/1.1\r\nHost: x\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nabc", 413},
        {"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n0\r\n\r\n", 501},
        {"GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", 400},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fx_resp r = {0};
        int closed;
        fx_raw(http_port, cases[i].req, strlen(cases[i].req), &r, &closed);
        if (r.h.status != cases[i].status)
            fail_msg("case %zu: status %d, want %d", i, r.h.status, cases[i].status);
        assert_true(closed);
        json_doc *d = body_json(&r);
        assert_non_null(json_str(json_get(json_root(d), "message"), NULL));
        json_doc_free(d);
        fx_resp_free(&r);
    }
    /* POST is refused with 405 and Allow where nothing is writable, with 403
     * on cells (HBase's read-only gateway), and the connection stays usable */
    fx_conn c = {fx_connect(http_port), KBUF_INIT};
    const char *two = "POST /version HTTP/1.1\r\nHost: x\r\n\r\n"
                      "PUT /t/row0001/f:q HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
                      "GET /t/row0001 HTTP/1.1\r\nHost: x\r\n\r\n";
    fx_send(c.fd, two, strlen(two));
    fx_resp r = {0};
    assert_int_equal(fx_read_response(&c, &r, 0), 0);
    assert_int_equal(r.h.status, 405);
    assert_non_null(strstr((const char *)r.head.data, "Allow: GET, HEAD"));
    assert_int_equal(fx_read_response(&c, &r, 0), 0);
    assert_int_equal(r.h.status, 403);
    assert_int_equal(fx_read_response(&c, &r, 0), 0);
    assert_int_equal(r.h.status, 200);
    close(c.fd);
    buf_free(&c.in);
    /* a request line longer than the limit: 414; a head too large: 431 */
    kbuf big = KBUF_INIT;
    buf_append(&big, "GET /t/", 7);
    for (int i = 0; i < 20000; i++)
        buf_append_u8(&big, 'a');
    buf_append(&big, " HTTP/1.1\r\nHost: x\r\n\r\n", 22);
    int closed;
    fx_raw(http_port, big.data, big.len, &r, &closed);
    assert_int_equal(r.h.status, 414);
    assert_true(closed);
    buf_reset(&big);
    buf_append(&big, "GET / HTTP/1.1\r\nHost: x\r\n", 25);
    for (int i = 0; i < 400; i++)
        buf_append(&big, "X-Filler: 0123456789012345678901234567890123456789\r\n", 52);
    buf_append(&big, "\r\n", 2);
    fx_raw(http_port, big.data, big.len, &r, &closed);
    assert_int_equal(r.h.status, 431);
    buf_reset(&big);
    buf_append(&big, "GET / HTTP/1.1\r\nHost: x\r\n", 25);
    for (int i = 0; i < 20; i++)
        buf_append(&big, "X-N: 1\r\n", 8);
    buf_append(&big, "\r\n", 2);
    fx_raw(http_port, big.data, big.len, &r, &closed);
    assert_int_equal(r.h.status, 431);   /* more than --max-headers */
    buf_free(&big);
    fx_resp_free(&r);
    /* and the server still serves */
    expect_status("/t/row0001", 200, NULL);
}

static void
paths_stay_inside_the_data_directory(void **state)
{
    (void)state;
    const char *paths[] = {
        "/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2F..%2Fetc%2Fpasswd/x",
        "/default:..%2F..%2Fetc/passwd", "/t/..%2F..%2F..%2Fetc%2Fpasswd", "/%2Fetc%2Fpasswd/x",
        "/default:t%00/x", "/./t/row0001", "/ns1:..%2Fns1:other/k1",
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        fx_resp r = {0};
        get(paths[i], NULL, &r);
        if (r.h.status == 200 || r.h.status >= 500)
            fail_msg("%s answered %d", paths[i], r.h.status);
        assert_null(memmem(r.body.data, r.body.len, "root:", 5));
        fx_resp_free(&r);
    }
}

static void
keep_alive_and_pipelining(void **state)
{
    (void)state;
    fx_conn c = {fx_connect(http_port), KBUF_INIT};
    kbuf reqs = KBUF_INIT;
    for (int i = 0; i < 60; i++) {
        char line[128];
        int n = snprintf(line, sizeof line, "GET /t/row%04d/f:q HTTP/1.1\r\nHost: x\r\n"
                                            "Accept: application/octet-stream\r\n\r\n", i * 7);
        buf_append(&reqs, line, (size_t)n);
    }
    fx_send(c.fd, reqs.data, reqs.len);   /* all in one write */
    for (int i = 0; i < 60; i++) {
        fx_resp r = {0};
        assert_int_equal(fx_read_response(&c, &r, 0), 0);
        char want[32];
        int n = snprintf(want, sizeof want, "val-%d", i * 7);
        assert_int_equal(r.h.status, 200);
        assert_int_equal(r.body.len, (size_t)n);
        assert_memory_equal(r.body.data, want, (size_t)n);
        assert_false(r.h.close);
        fx_resp_free(&r);
    }
    /* byte by byte */
    const char *one = "GET /t/row0002/f:q HTTP/1.1\r\nHost: x\r\n\r\n";
    for (size_t i = 0; one[i] != '\0'; i++)
        fx_send(c.fd, one + i, 1);
    fx_resp r = {0};
    assert_int_equal(fx_read_response(&c, &r, 0), 0);
    assert_int_equal(r.h.status, 200);
    /* Connection: close ends it after the response */
    const char *last = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    fx_send(c.fd, last, strlen(last));
    assert_int_equal(fx_read_response(&c, &r, 0), 0);
    assert_true(r.h.close);
    assert_true(fx_closed(&c));
    close(c.fd);
    buf_free(&c.in);
    /* HTTP/1.0 closes unless asked to keep alive */
    fx_conn c2 = {fx_connect(http_port), KBUF_INIT};
    const char *old = "GET /healthz HTTP/1.0\r\n\r\n";
    fx_send(c2.fd, old, strlen(old));
    assert_int_equal(fx_read_response(&c2, &r, 0), 0);
    assert_int_equal(r.h.status, 200);
    assert_true(fx_closed(&c2));
    close(c2.fd);
    buf_free(&c2.in);
    buf_free(&reqs);
    fx_resp_free(&r);
}

/* ------------------------------------------------------------------ limits */

static void
connection_limit_and_idle_timeout(void **state)
{
    (void)state;
    server_config cfg;
    server_config_init(&cfg);
    cfg.data_dir = data_dir;
    cfg.listen = "127.0.0.1:0";
    cfg.threads = 1;
    cfg.cache_bytes = 1u << 20;
    cfg.max_conns = 3;
    cfg.idle_timeout_ms = 600;
    server *s = start(&cfg);
    int port = server_http_port(s);
    fx_conn c[3];
    fx_resp r = {0};
    for (int i = 0; i < 3; i++) {
        c[i].fd = fx_connect(port);
        buf_init(&c[i].in);
        const char *q = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
        fx_send(c[i].fd, q, strlen(q));
        assert_int_equal(fx_read_response(&c[i], &r, 0), 0);
        assert_int_equal(r.h.status, 200);
    }
    fx_get(port, "/healthz", NULL, &r);
    assert_int_equal(r.h.status, 503);
    /* a half-sent request gets 408 after the idle timeout; idle ones are closed */
    const char *half = "GET /healthz HTTP/1.1\r\nHo";
    fx_send(c[0].fd, half, strlen(half));
    assert_int_equal(fx_read_response(&c[0], &r, 0), 0);
    assert_int_equal(r.h.status, 408);
    assert_true(fx_closed(&c[0]));
    assert_true(fx_closed(&c[1]));
    assert_true(fx_closed(&c[2]));
    for (int i = 0; i < 3; i++) {
        close(c[i].fd);
        buf_free(&c[i].in);
    }
    /* room again */
    fx_get(port, "/healthz", NULL, &r);
    assert_int_equal(r.h.status, 200);
    fx_resp_free(&r);
    /* shutdown drains an open keep-alive connection and returns */
    fx_conn k = {fx_connect(port), KBUF_INIT};
    stop(s);
    assert_true(fx_closed(&k));
    close(k.fd);
    buf_free(&k.in);
}

/* ------------------------------------------------------------------ Redis protocol */

/* Read one complete RESP reply into out (raw bytes). */
static void
resp_reply(fx_conn *c, kbuf *out)
{
    buf_reset(out);
    for (;;) {
        /* find the end of one reply in c->in */
        size_t pos = 0;
        long pending = 1;
        int complete = 0;
        while (pending > 0) {
            const uint8_t *nl = pos < c->in.len ? memchr(c->in.data + pos, '\n', c->in.len - pos)
                                                : NULL;
            if (nl == NULL)
                break;
            size_t line_end = (size_t)(nl - c->in.data) + 1;
            char type = (char)c->in.data[pos];
            long n = strtol((const char *)c->in.data + pos + 1, NULL, 10);
            pos = line_end;
            pending--;
            if (type == '$' && n >= 0) {
                if (c->in.len < pos + (size_t)n + 2)
                    break;
                pos += (size_t)n + 2;
            } else if (type == '*' && n > 0) {
                pending += n;
            }
            if (pending == 0)
                complete = 1;
        }
        if (complete) {
            buf_append(out, c->in.data, pos);
            memmove(c->in.data, c->in.data + pos, c->in.len - pos);
            c->in.len -= pos;
            return;
        }
        buf_reserve(&c->in, 65536);
        ssize_t n = recv(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len, 0);
        if (n <= 0)
            fail_msg("RESP connection closed before a full reply");
        c->in.len += (size_t)n;
    }
}

static void
resp_expect(fx_conn *c, const void *cmd, size_t n, const char *want, size_t wn)
{
    kbuf got = KBUF_INIT;
    fx_send(c->fd, cmd, n);
    resp_reply(c, &got);
    if (got.len != wn || memcmp(got.data, want, wn) != 0)
        fail_msg("RESP %.*s: got %.*s, want %.*s", (int)n, (const char *)cmd, (int)got.len,
                 got.data, (int)wn, want);
    buf_free(&got);
}

#define RESP_EXPECT(c, cmd, want) resp_expect(c, cmd, sizeof cmd - 1, want, sizeof want - 1)

static void
redis_protocol(void **state)
{
    (void)state;
    fx_conn c = {fx_connect(resp_port), KBUF_INIT};
    RESP_EXPECT(&c, "PING\r\n", "+PONG\r\n");
    RESP_EXPECT(&c, "*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n", "$2\r\nhi\r\n");
    /* database 0 is default:empty (name order): nothing there */
    RESP_EXPECT(&c, "*2\r\n$3\r\nGET\r\n$7\r\nrow0001\r\n", "$-1\r\n");
    RESP_EXPECT(&c, "*2\r\n$6\r\nSELECT\r\n$1\r\n1\r\n", "+OK\r\n");
    /* database 1 is default:t; the first cell of the row */
    RESP_EXPECT(&c, "*2\r\n$3\r\nGET\r\n$7\r\nrow0001\r\n", "$5\r\nval-1\r\n");
    RESP_EXPECT(&c, "*2\r\n$3\r\nGET\r\n$5\r\nbin\0\xff\r\n", "$7\r\nv:bin\0\xff\r\n");
    RESP_EXPECT(&c, "*2\r\n$3\r\nGET\r\n$5\r\nmulti\r\n", "$2\r\nv3\r\n");
    RESP_EXPECT(&c, "*4\r\n$4\r\nMGET\r\n$7\r\nrow0002\r\n$2\r\nno\r\n$3\r\na/b\r\n",
                "*3\r\n$5\r\nval-2\r\n$-1\r\n$5\r\nv:a/b\r\n");
    RESP_EXPECT(&c, "*4\r\n$6\r\nEXISTS\r\n$7\r\nrow0002\r\n$2\r\nno\r\n$5\r\nmulti\r\n",
                ":2\r\n");
    /* TABLE/ROW keys, and the column configured for ns1:other (d:b) */
    RESP_EXPECT(&c, "*2\r\n$3\r\nGET\r\n$12\r\nns1:other/k1\r\n", "$5\r\none-b\r\n");
    RESP_EXPECT(&c, "*2\r\n$3\r\nGET\r\n$12\r\nns1:other/k3\r\n", "$-1\r\n");
    RESP_EXPECT(&c, "*2\r\n$3\r\nGET\r\n$9\r\nt/row0009\r\n", "$5\r\nval-9\r\n");
    RESP_EXPECT(&c, "*2\r\n$6\r\nSELECT\r\n$1\r\n9\r\n",
                "-ERR DB index is out of range (one database per table)\r\n");
    RESP_EXPECT(&c, "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\nb\r\n",
                "-READONLY kiln serves read-only views; publish data with kiln load\r\n");
    RESP_EXPECT(&c, "*1\r\n$3\r\nGET\r\n", "-ERR wrong number of arguments for 'get' command\r\n");
    RESP_EXPECT(&c, "*1\r\n$6\r\nNOSUCH\r\n", "-ERR unknown command 'NOSUCH'\r\n");
    /* INFO shows one database per table */
    kbuf got = KBUF_INIT;
    const char info[] = "*2\r\n$4\r\nINFO\r\n$8\r\nkeyspace\r\n";
    fx_send(c.fd, info, sizeof info - 1);
    resp_reply(&c, &got);
    buf_append_u8(&got, '\0');
    assert_non_null(strstr((const char *)got.data, "db1:table=default:t,version=1"));
    assert_non_null(strstr((const char *)got.data, "db2:table=ns1:other,version=1,column=d:b"));
    /* 200 pipelined GETs in one write, answered in order */
    kbuf many = KBUF_INIT;
    for (int i = 0; i < 200; i++) {
        char cmd[64];
        int n = snprintf(cmd, sizeof cmd, "*2\r\n$3\r\nGET\r\n$7\r\nrow%04d\r\n", i);
        buf_append(&many, cmd, (size_t)n);
    }
    fx_send(c.fd, many.data, many.len);
    for (int i = 0; i < 200; i++) {
        resp_reply(&c, &got);
        char want[32];
        int vn = snprintf(want, sizeof want, "val-%d", i);
        char line[48];
        int ln = snprintf(line, sizeof line, "$%d\r\n%s\r\n", vn, want);
        assert_int_equal(got.len, (size_t)ln);
        assert_memory_equal(got.data, line, (size_t)ln);
    }
    RESP_EXPECT(&c, "QUIT\r\n", "+OK\r\n");
    assert_true(fx_closed(&c));
    close(c.fd);
    buf_free(&c.in);
    /* a protocol error is answered, then the connection closes */
    fx_conn e = {fx_connect(resp_port), KBUF_INIT};
    fx_send(e.fd, "*1\r\n:5\r\n", 8);
    resp_reply(&e, &got);
    assert_int_equal(got.data[0], '-');
    assert_true(fx_closed(&e));
    close(e.fd);
    buf_free(&e.in);
    /* a command larger than --max-request-bytes */
    fx_conn o = {fx_connect(resp_port), KBUF_INIT};
    buf_reset(&many);
    buf_append(&many, "*2\r\n$3\r\nGET\r\n$20000\r\n", 21);
    for (int i = 0; i < 20000; i++)
        buf_append_u8(&many, 'k');
    buf_append(&many, "\r\n", 2);
    fx_send(o.fd, many.data, many.len);
    resp_reply(&o, &got);
    assert_int_equal(got.data[0], '-');
    close(o.fd);
    buf_free(&o.in);
    buf_free(&many);
    buf_free(&got);
}

/* Replies to the connections that one loop turn reads are sent together at
 * the end of the turn. 64 connections each write a GET (HTTP and RESP),
 * every fourth is reset right after writing, so the server holds answered
 * replies for connections that are gone before they are sent; the rest
 * get their own row, and the server keeps serving. */
static void
replies_of_one_turn(void **state)
{
    (void)state;
    enum { N = 64 };
    fx_conn cs[N];
    kbuf got = KBUF_INIT;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)
            cs[i] = (fx_conn){fx_connect(i % 2 ? resp_port : http_port), KBUF_INIT};
        for (int i = 0; i < N; i++) {
            char cmd[96];
            int n = i % 2 ? snprintf(cmd, sizeof cmd,
                                     "*2\r\n$6\r\nSELECT\r\n$1\r\n1\r\n"
                                     "*2\r\n$3\r\nGET\r\n$7\r\nrow%04d\r\n", i + round)
                          : snprintf(cmd, sizeof cmd,
                                     "GET /t/row%04d/f:q HTTP/1.1\r\nHost: x\r\n"
                                     "Accept: application/octet-stream\r\n\r\n", i + round);
            fx_send(cs[i].fd, cmd, (size_t)n);
            if (i % 4 == 3) {   /* reset: the reply has nowhere to go */
                struct linger lg = {1, 0};
                setsockopt(cs[i].fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
                close(cs[i].fd);
                cs[i].fd = -1;
            }
        }
        for (int i = 0; i < N; i++) {
            if (cs[i].fd < 0)
                continue;
            char want[32];
            int vn = snprintf(want, sizeof want, "val-%d", i + round);
            if (i % 2) {
                resp_reply(&cs[i], &got);
                assert_memory_equal(got.data, "+OK\r\n", 5);
                resp_reply(&cs[i], &got);
                char line[48];
                int ln = snprintf(line, sizeof line, "$%d\r\n%s\r\n", vn, want);
                assert_int_equal(got.len, (size_t)ln);
                assert_memory_equal(got.data, line, (size_t)ln);
            } else {
                fx_resp r = {0};
                assert_int_equal(fx_read_response(&cs[i], &r, 0), 0);
                assert_int_equal(r.h.status, 200);
                assert_int_equal(r.body.len, (size_t)vn);
                assert_memory_equal(r.body.data, want, (size_t)vn);
                fx_resp_free(&r);
            }
            close(cs[i].fd);
            buf_free(&cs[i].in);
        }
        for (int i = 0; i < N; i++)
            if (cs[i].fd < 0)
                buf_free(&cs[i].in);
    }
    fx_conn c = {fx_connect(resp_port), KBUF_INIT};
    RESP_EXPECT(&c, "PING\r\n", "+PONG\r\n");
    close(c.fd);
    buf_free(&c.in);
    buf_free(&got);
}

/* A published version that cannot be opened (a truncated file) is reported
 * and the previous one keeps being served; a table created while serving
 * appears within the listing interval. */
/* ------------------------------------------------------------------ workers parking */

/* A metric's value in a /metrics body, or -1 if absent. */
static double
metric(int port, const char *name)
{
    fx_resp r = {0};
    fx_get(port, "/metrics", NULL, &r);
    buf_append_u8(&r.body, '\0');
    char want[128];
    snprintf(want, sizeof want, "\n%s ", name);
    const char *at = strstr((const char *)r.body.data, want);
    double v = at != NULL ? strtod(at + strlen(want), NULL) : -1;
    fx_resp_free(&r);
    return v;
}

#define MOVE_HTTP 6
#define MOVE_RESP 6
#define MOVE_PIPE 4

/* A server whose second worker parks after a second of any load and comes
 * back at the next tick: connections are handed back and forth while
 * clients keep requests in flight on each of them (pipelined, over HTTP
 * and the Redis protocol, which keeps its SELECTed database). Every answer
 * is the row asked for; the server shuts down with requests in flight. */
static void
connections_move_between_workers(void **state)
{
    (void)state;
    server_config cfg;
    test_config(&cfg);
    cfg.park_below_pct = 1000;   /* always light: park after a second */
    cfg.unpark_above_pct = 0;    /* any work: come back */
    cfg.unpark_spare_pm = 0;
    server *s2 = start(&cfg);
    int hp = server_http_port(s2), rp = server_resp_port(s2);
    fx_conn h[MOVE_HTTP], r[MOVE_RESP];
    for (int i = 0; i < MOVE_HTTP; i++)
        h[i] = (fx_conn){fx_connect(hp), KBUF_INIT};
    for (int i = 0; i < MOVE_RESP; i++) {
        r[i] = (fx_conn){fx_connect(rp), KBUF_INIT};
        RESP_EXPECT(&r[i], "*2\r\n$6\r\nSELECT\r\n$1\r\n1\r\n", "+OK\r\n");
    }
    fx_resp resp = {0};
    kbuf got = KBUF_INIT;
    unsigned seq = 0;
    double end = fx_now() + 3.5;
    while (fx_now() < end) {
        unsigned first = seq;
        for (int i = 0; i < MOVE_HTTP; i++) {
            char req[MOVE_PIPE * 128];
            size_t n = 0;
            for (int k = 0; k < MOVE_PIPE; k++)
                n += (size_t)snprintf(req + n, sizeof req - n,
                                      "GET /t/row%04u/f:q HTTP/1.1\r\nHost: t\r\n"
                                      "Accept: application/octet-stream\r\n\r\n",
                                      (seq++ * 7) % SCAN_ROWS);
            fx_send(h[i].fd, req, n);
        }
        for (int i = 0; i < MOVE_RESP; i++) {
            char req[MOVE_PIPE * 64];
            size_t n = 0;
            for (int k = 0; k < MOVE_PIPE; k++)
                n += (size_t)snprintf(req + n, sizeof req - n,
                                      "*2\r\n$3\r\nGET\r\n$7\r\nrow%04u\r\n",
                                      (seq++ * 7) % SCAN_ROWS);
            fx_send(r[i].fd, req, n);
        }
        seq = first;
        for (int i = 0; i < MOVE_HTTP; i++) {
            for (int k = 0; k < MOVE_PIPE; k++) {
                char want[32];
                snprintf(want, sizeof want, "val-%u", (seq++ * 7) % SCAN_ROWS);
                if (fx_read_response(&h[i], &resp, 0) != 0)
                    fail_msg("HTTP connection %d closed", i);
                assert_int_equal(resp.h.status, 200);
                if (resp.body.len != strlen(want) || memcmp(resp.body.data, want, resp.body.len))
                    fail_msg("HTTP %d: got %.*s, want %s", i, (int)resp.body.len,
                             resp.body.data, want);
            }
        }
        for (int i = 0; i < MOVE_RESP; i++) {
            for (int k = 0; k < MOVE_PIPE; k++) {
                unsigned row = (seq++ * 7) % SCAN_ROWS;
                char want[32];
                int wn = snprintf(want, sizeof want, "$%d\r\nval-%u\r\n",
                                  snprintf(NULL, 0, "val-%u", row), row);
                resp_reply(&r[i], &got);
                if (got.len != (size_t)wn || memcmp(got.data, want, got.len) != 0)
                    fail_msg("RESP %d: got %.*s, want %s", i, (int)got.len, got.data, want);
            }
        }
    }
    /* at least one park and one return, each moving half the connections */
    double moved = metric(hp, "kiln_connections_moved_total");
    if (moved < MOVE_HTTP + MOVE_RESP)
        fail_msg("%.0f connections moved between workers in 3.5 s", moved);
    double active = metric(hp, "kiln_workers_active");
    assert_true(active == 1 || active == 2);
    /* requests in flight while the server shuts down */
    for (int i = 0; i < MOVE_RESP; i++)
        fx_send(r[i].fd, "*2\r\n$3\r\nGET\r\n$7\r\nrow0001\r\n", 26);
    stop(s2);
    for (int i = 0; i < MOVE_HTTP; i++) {
        close(h[i].fd);
        buf_free(&h[i].in);
    }
    for (int i = 0; i < MOVE_RESP; i++) {
        close(r[i].fd);
        buf_free(&r[i].in);
    }
    fx_resp_free(&resp);
    buf_free(&got);
}

#define HOME_CONNS 8

typedef struct home_client {
    int cpu;
    fx_conn c[HOME_CONNS];
    double until;
    const char *error;
} home_client;

static int
pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* A client thread on one CPU: GETs on all of its connections. */
static void *
home_client_main(void *arg)
{
    home_client *hc = arg;
    if (pin_to(hc->cpu) != 0) {
        hc->error = "pthread_setaffinity_np failed";
        return NULL;
    }
    fx_resp r = {0};
    static const char req[] = "GET /t/row0003/f:q HTTP/1.1\r\nHost: t\r\n"
                              "Accept: application/octet-stream\r\n\r\n";
    while (hc->error == NULL && fx_now() < hc->until) {
        for (int i = 0; i < HOME_CONNS; i++)
            fx_send(hc->c[i].fd, req, sizeof req - 1);
        for (int i = 0; i < HOME_CONNS && hc->error == NULL; i++) {
            if (fx_read_response(&hc->c[i], &r, 0) != 0 || r.h.status != 200 ||
                r.body.len != 5 || memcmp(r.body.data, "val-3", 5) != 0)
                hc->error = "a GET went wrong";
        }
    }
    fx_resp_free(&r);
    return NULL;
}

/* Two client threads, one on CPU 0 and one on CPU 1, each with eight
 * connections. The first thread's eight are opened first and dealt
 * round-robin, then the second's: each worker starts with four of each, so
 * eight are away from home. The workers trade them until every connection
 * is on the worker of its client's CPU. Needs two CPUs. */
static void
connections_go_home(void **state)
{
    (void)state;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        fail_msg("connections_go_home needs two CPUs, this machine has one");
    server_config cfg;
    test_config(&cfg);
    cfg.park_below_pct = 0;   /* both workers take connections throughout */
    server *s2 = start(&cfg);
    int hp = server_http_port(s2);
    home_client hc[2];
    pthread_t th[2];
    for (int k = 0; k < 2; k++) {
        memset(&hc[k], 0, sizeof hc[k]);
        hc[k].cpu = k;
        for (int i = 0; i < HOME_CONNS; i++)
            hc[k].c[i] = (fx_conn){fx_connect(hp), KBUF_INIT};
    }
    for (int k = 0; k < 2; k++) {
        hc[k].until = fx_now() + 3.0;
        assert_int_equal(pthread_create(&th[k], NULL, home_client_main, &hc[k]), 0);
    }
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_join(th[k], NULL), 0);
    for (int k = 0; k < 2; k++)
        if (hc[k].error != NULL)
            fail_msg("client on CPU %d: %s", k, hc[k].error);
    double moved = metric(hp, "kiln_connections_moved_total");
    double away = metric(hp, "kiln_connections_away");
    if (moved < HOME_CONNS || away > 1)
        fail_msg("%.0f connections moved, %.0f still away from their client's CPU's worker",
                 moved, away);
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < HOME_CONNS; i++) {
            close(hc[k].c[i].fd);
            buf_free(&hc[k].c[i].in);
        }
    }
    stop(s2);
}

static void
broken_version_keeps_the_old_one(void **state)
{
    (void)state;
    static const char *const fams[] = {"f", NULL};
    fx_create(data_dir, "fragile", fams, NULL, 0);
    fx_cells cs = {0};
    fx_add(&cs, "r", 1, "f", "q", 1, 1, "good", 4);
    uint64_t v1 = fx_publish(data_dir, "fragile", &cs);
    fx_cells_free(&cs);
    fx_resp r = {0};
    double t0 = fx_now();
    do {
        usleep(20000);
        fx_get(http_port, "/fragile/r/f:q", "Accept: application/octet-stream\r\n", &r);
    } while (r.h.status != 200 && fx_now() - t0 < 10);
    assert_int_equal(r.h.status, 200);
    assert_int_equal(r.h.version, v1);
    fx_add(&cs, "r", 1, "f", "q", 1, 2, "newer", 5);
    /* the new version's file is cut short (its trailer gone) before it is
     * published: the server must never have seen it whole */
    fx_publish_cut(data_dir, "fragile", &cs, 100);
    fx_cells_free(&cs);
    /* the error shows in /metrics; the old version answers meanwhile */
    t0 = fx_now();
    int reported = 0;
    while (!reported && fx_now() - t0 < 10) {
        usleep(50000);
        fx_get(http_port, "/metrics", NULL, &r);
        buf_append_u8(&r.body, '\0');
        reported = strstr((const char *)r.body.data,
                          "kiln_view_open_error{table=\"default:fragile\"} 1") != NULL;
    }
    assert_true(reported);
    fx_get(http_port, "/fragile/r/f:q", "Accept: application/octet-stream\r\n", &r);
    assert_int_equal(r.h.status, 200);
    assert_int_equal(r.h.version, v1);
    assert_int_equal(r.body.len, 4);
    assert_memory_equal(r.body.data, "good", 4);
    fx_get(http_port, "/status", NULL, &r);
    buf_append_u8(&r.body, '\0');
    assert_non_null(strstr((const char *)r.body.data, "Newer version not served"));
    fx_resp_free(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tables_version_health),
        cmocka_unit_test(schema_and_regions),
        cmocka_unit_test(rows_with_odd_keys),
        cmocka_unit_test(row_columns_versions_and_raw),
        cmocka_unit_test(multiget),
        cmocka_unit_test(scans_page_to_the_end),
        cmocka_unit_test(count_rows),
        cmocka_unit_test(redis_protocol),
        cmocka_unit_test(replies_of_one_turn),
        cmocka_unit_test(metrics_and_status_page),
        cmocka_unit_test(malformed_and_oversized_requests),
        cmocka_unit_test(paths_stay_inside_the_data_directory),
        cmocka_unit_test(keep_alive_and_pipelining),
        cmocka_unit_test(connection_limit_and_idle_timeout),
        cmocka_unit_test(broken_version_keeps_the_old_one),
        cmocka_unit_test(connections_move_between_workers),
        cmocka_unit_test(connections_go_home),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
