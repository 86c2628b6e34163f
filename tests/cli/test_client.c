/* test_client.c -- the pieces of `kiln --server` that read outside bytes,
 * without a server: server addresses (rest_http.c), CellSet answers as the
 * reads decode them (remote.c: JSON through jansson, strict base64, the
 * shape HBase writes) and HBase shell filter strings (shell_filter.c).
 * Corrupted answers come from a valid one flipped, truncated and cut at a
 * random byte with a printed seed (replay with KILN_TEST_SEED=N).
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

#include "cli/remote.h"
#include "cli/rest_http.h"
#include "storage/query/shell_filter.h"

static unsigned client_seed;

static uint64_t
client_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ------------------------------------------------------------------ addresses */

static void
client_addresses(void **state)
{
    (void)state;
    static const struct {
        const char *addr;
        const char *name;   /* NULL: refused */
    } cases[] = {
        {"127.0.0.1:8080", "127.0.0.1:8080"},
        {"localhost:1", "localhost:1"},
        {"http://gw:9", "gw:9"},
        {"https://gw.example", "gw.example:443"},
        {"http://gw.example/", "gw.example:80"},
        {"https://gw:8443/hbase/", "gw:8443"},
        {"[::1]:8080", "[::1]:8080"},
        {"http://[::1]/x", "[::1]:80"},
        {"gw", NULL},
        {"gw:", NULL},
        {"gw:0", NULL},
        {"gw:65536", NULL},
        {"gw:80a", NULL},
        {":80", NULL},
        {"ftp://gw:21", NULL},
        {"http://", NULL},
        {"http://user@gw:80", NULL},
        {"http://gw:80?x=1", NULL},
        {"g w:80", NULL},
        {"", NULL},
        {"[::1]", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rest_http *h = NULL;
        kiln_err err;
        status_clear(&err);
        kiln_status st = rest_http_open(cases[i].addr, 1000, &h, &err);
        if (cases[i].name == NULL) {
            if (st != KILN_INVALID)
                fail_msg("address '%s' accepted", cases[i].addr);
            assert_non_null(strstr(err.msg, "bad server address"));
            assert_null(h);
        } else {
            if (st != KILN_OK)
                fail_msg("address '%s' refused: %s", cases[i].addr, err.msg);
            assert_string_equal(rest_http_name(h), cases[i].name);
            rest_http_close(h);
        }
    }
    rest_http_close(NULL);
}

/* ------------------------------------------------------------------ answers */

static kiln_status
client_decode(const char *json, size_t *rows, size_t *cells, kiln_err *err)
{
    status_clear(err);
    return remote_decode_cellset((const uint8_t *)json, strlen(json), rows, cells, err);
}

#define CELL(col, ts, val) "{\"column\":\"" col "\",\"timestamp\":" #ts ",\"$\":\"" val "\"}"

static void
client_cellsets(void **state)
{
    (void)state;
    size_t rows, cells;
    kiln_err err;
    /* as HBase writes it: rows of cells, base64 everywhere */
    assert_int_equal(client_decode("{\"Row\":[{\"key\":\"cjE=\",\"Cell\":[" CELL("Zjpx", 5, "dg==") ","
                                   CELL("ZjpxMg==", 6, "") "]},{\"key\":\"cjI=\",\"Cell\":["
                                   CELL("Zzo=", 0, "AP8=") "]}]}",
                                   &rows, &cells, &err),
                     KILN_OK);
    assert_int_equal(rows, 2);
    assert_int_equal(cells, 3);
    /* an empty set, no Row at all, fields in any order, unpadded base64 */
    assert_int_equal(client_decode("{\"Row\":[]}", &rows, &cells, &err), KILN_OK);
    assert_int_equal(rows, 0);
    assert_int_equal(client_decode("{}", &rows, &cells, &err), KILN_OK);
    assert_int_equal(client_decode("{\"Row\":[{\"Cell\":[{\"$\":\"dg\",\"timestamp\":1,"
                                   "\"column\":\"Zjpx\"}],\"key\":\"cjE\"}]}",
                                   &rows, &cells, &err),
                     KILN_OK);
    assert_int_equal(cells, 1);

    static const struct {
        const char *json;
        const char *msg;
    } bad[] = {
        {"", "bad JSON"},
        {"{\"Row\":[{\"key\":\"cjE=\",\"Cell\":[", "bad JSON"},
        {"[1,2]", "not a JSON object"},
        {"{\"Row\":{}}", "Row is not an array"},
        {"{\"Row\":[{\"key\":\"cjE=\"}]}", "no Cell array"},
        {"{\"Row\":[{\"key\":\"cjE=\",\"Cell\":[]}]}", "no cells"},
        {"{\"Row\":[{\"key\":\"r!1=\",\"Cell\":[" CELL("Zjpx", 1, "dg==") "]}]}", "key is not base64"},
        {"{\"Row\":[{\"key\":\"cj=E\",\"Cell\":[" CELL("Zjpx", 1, "dg==") "]}]}", "key is not base64"},
        {"{\"Row\":[{\"key\":\"cjF=\",\"Cell\":[" CELL("Zjpx", 1, "dg==") "]}]}", "key is not base64"},
        {"{\"Row\":[{\"key\":\"c\",\"Cell\":[" CELL("Zjpx", 1, "dg==") "]}]}", "key is not base64"},
        {"{\"Row\":[{\"key\":\"cjE==\",\"Cell\":[" CELL("Zjpx", 1, "dg==") "]}]}", "key is not base64"},
        {"{\"Row\":[{\"key\":\"\",\"Cell\":[" CELL("Zjpx", 1, "dg==") "]}]}", "row key of 0 bytes"},
        {"{\"Row\":[{\"key\":7,\"Cell\":[" CELL("Zjpx", 1, "dg==") "]}]}", "key is not a string"},
        {"{\"Row\":[{\"key\":\"cjE=\",\"Cell\":[" CELL("Zg==", 1, "dg==") "]}]}", "column without"},
        {"{\"Row\":[{\"key\":\"cjE=\",\"Cell\":[" CELL("OnE=", 1, "dg==") "]}]}", "column without"},
        {"{\"Row\":[{\"key\":\"cjE=\",\"Cell\":[" CELL("Zjpx", -1, "dg==") "]}]}", "bad timestamp"},
        {"{\"Row\":[{\"key\":\"cjE=\",\"Cell\":[" CELL("Zjpx", "1", "dg==") "]}]}", "bad timestamp"},
        {"{\"Row\":[{\"key\":\"cjE=\",\"Cell\":[{\"column\":\"Zjpx\",\"timestamp\":1}]}]}",
         "value is not a string"},
        {"{\"Row\":[],\"Row\":[]}", "bad JSON"},   /* duplicate keys */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kiln_status st = client_decode(bad[i].json, &rows, &cells, &err);
        if (st != KILN_CORRUPTION || strstr(err.msg, bad[i].msg) == NULL)
            fail_msg("answer %zu '%s': status %d '%s', want corruption '%s'", i, bad[i].json,
                     (int)st, err.msg, bad[i].msg);
    }
}

/* Flip, truncate and cut a valid answer: a clean error or a decode, never a
 * crash (run under the sanitizers by `make SANITIZER=address`). */
static void
client_corrupted_cellsets(void **state)
{
    (void)state;
    const char *good = "{\"Row\":[{\"key\":\"cjE=\",\"Cell\":[" CELL("Zjpx", 5, "dg==") ","
                       CELL("ZjpxMg==", 6, "") "]},{\"key\":\"cjI=\",\"Cell\":["
                       CELL("Zzo=", 0, "AP8=") "]}]}";
    size_t n = strlen(good);
    uint64_t s = client_seed;
    uint8_t *buf = malloc(n);
    for (int round = 0; round < 5000; round++) {
        memcpy(buf, good, n);
        size_t len = n;
        switch (client_rand(&s) % 3) {
        case 0:
            buf[client_rand(&s) % n] ^= (uint8_t)(1u << (client_rand(&s) % 8));
            break;
        case 1:
            len = client_rand(&s) % n;
            break;
        default:
            buf[client_rand(&s) % n] = (uint8_t)client_rand(&s);
            len = n - client_rand(&s) % 8;
            break;
        }
        size_t rows, cells;
        kiln_err err;
        status_clear(&err);
        kiln_status st = remote_decode_cellset(buf, len, &rows, &cells, &err);
        if (st != KILN_OK && st != KILN_CORRUPTION)
            fail_msg("round %d (seed %u): status %d", round, client_seed, (int)st);
        if (st == KILN_CORRUPTION && err.msg[0] == '\0')
            fail_msg("round %d (seed %u): corruption without a message", round, client_seed);
        if (st == KILN_OK && (rows > 2 || cells > 3))
            fail_msg("round %d (seed %u): %zu rows, %zu cells", round, client_seed, rows, cells);
    }
    free(buf);
}

/* ------------------------------------------------------------------ filters */

static void
client_shell_filters(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *json;
    } cases[] = {
        {"PrefixFilter('abc')", "{\"type\":\"PrefixFilter\",\"value\":\"YWJj\"}"},
        {"  ColumnPrefixFilter ( 'q' ) ", "{\"type\":\"ColumnPrefixFilter\",\"value\":\"cQ==\"}"},
        {"ValueFilter(=, 'binary:x')",
         "{\"type\":\"ValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":\"BinaryComparator\","
         "\"value\":\"eA==\"}}"},
        {"RowFilter(<=,'binaryprefix:')",
         "{\"type\":\"RowFilter\",\"op\":\"LESS_OR_EQUAL\",\"comparator\":{\"type\":"
         "\"BinaryPrefixComparator\",\"value\":\"\"}}"},
        {"QualifierFilter(!=, 'RegexString:^a.*''s$')",
         "{\"type\":\"QualifierFilter\",\"op\":\"NOT_EQUAL\",\"comparator\":{\"type\":"
         "\"RegexStringComparator\",\"value\":\"^a.*'s$\"}}"},
        {"FamilyFilter(>, 'substring:F')",
         "{\"type\":\"FamilyFilter\",\"op\":\"GREATER\",\"comparator\":{\"type\":"
         "\"SubstringComparator\",\"value\":\"F\"}}"},
        {"SingleColumnValueFilter('f', 'q', >=, 'binary:1', true, false)",
         "{\"type\":\"SingleColumnValueFilter\",\"family\":\"Zg==\",\"qualifier\":\"cQ==\",\"op\":"
         "\"GREATER_OR_EQUAL\",\"comparator\":{\"type\":\"BinaryComparator\",\"value\":\"MQ==\"},"
         "\"ifMissing\":true,\"latestVersion\":false}"},
        {"KeyOnlyFilter()", "{\"type\":\"KeyOnlyFilter\"}"},
        {"PageFilter(10)", "{\"type\":\"PageFilter\",\"value\":10}"},
        {"ColumnCountGetFilter(2)", "{\"type\":\"ColumnCountGetFilter\",\"limit\":2}"},
        {"TimestampsFilter(5, 7)", "{\"type\":\"TimestampsFilter\",\"timestamps\":[5,7]}"},
        {"MultipleColumnPrefixFilter('a', 'b')",
         "{\"type\":\"MultipleColumnPrefixFilter\",\"prefixes\":[\"YQ==\",\"Yg==\"]}"},
        /* AND binds tighter than OR; chains flatten; parentheses group */
        {"FirstKeyOnlyFilter() AND KeyOnlyFilter() OR PageFilter(1)",
         "{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ONE\",\"filters\":[{\"type\":\"FilterList\","
         "\"op\":\"MUST_PASS_ALL\",\"filters\":[{\"type\":\"FirstKeyOnlyFilter\"},{\"type\":"
         "\"KeyOnlyFilter\"}]},{\"type\":\"PageFilter\",\"value\":1}]}"},
        {"KeyOnlyFilter() and (PageFilter(1) or PageFilter(2)) AND FirstKeyOnlyFilter()",
         "{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ALL\",\"filters\":[{\"type\":\"KeyOnlyFilter\"},"
         "{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ONE\",\"filters\":[{\"type\":\"PageFilter\","
         "\"value\":1},{\"type\":\"PageFilter\",\"value\":2}]},{\"type\":\"FirstKeyOnlyFilter\"}]}"},
        {"((KeyOnlyFilter()))", "{\"type\":\"KeyOnlyFilter\"}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kbuf out = KBUF_INIT;
        kiln_err err;
        status_clear(&err);
        if (shell_filter_to_json(cases[i].text, &out, &err) != KILN_OK)
            fail_msg("filter '%s': %s", cases[i].text, err.msg);
        assert_string_equal((const char *)out.data, cases[i].json);
        buf_free(&out);
    }
    static const char *const bad[] = {
        "", "PrefixFilter", "PrefixFilter(", "PrefixFilter('a'", "PrefixFilter('a) ",
        "PrefixFilter(a)", "PrefixFilter('a', 'b')", "PrefixFilter(1)", "ValueFilter(=)",
        "ValueFilter('binary:x', =)", "ValueFilter(=, 'bin:x')", "PageFilter(-1)",
        "PageFilter('1')", "TimestampsFilter()", "MultipleColumnPrefixFilter()",
        "KeyOnlyFilter(true)", "Nope()", "KeyOnlyFilter() AND", "KeyOnlyFilter() OR OR",
        "(KeyOnlyFilter()", "KeyOnlyFilter())", "SKIP KeyOnlyFilter()", "WHILE KeyOnlyFilter()",
        "KeyOnlyFilter() KeyOnlyFilter()", "PageFilter(1234567890123456789012)",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kbuf out = KBUF_INIT;
        kiln_err err;
        status_clear(&err);
        if (shell_filter_to_json(bad[i], &out, &err) != KILN_INVALID)
            fail_msg("filter '%s' accepted: %s", bad[i], out.data ? (char *)out.data : "");
        assert_non_null(strstr(err.msg, "filter: "));
        buf_free(&out);
    }
    /* bounded: deep nesting and long text are refused, not recursed into */
    kbuf deep = KBUF_INIT, out = KBUF_INIT;
    for (int i = 0; i < 10000; i++)
        buf_append_u8(&deep, '(');
    buf_append(&deep, "KeyOnlyFilter()", 16);
    kiln_err err;
    status_clear(&err);
    assert_int_equal(shell_filter_to_json((const char *)deep.data, &out, &err), KILN_INVALID);
    buf_free(&deep);
    buf_free(&out);
}

int
main(void)
{
    const char *env = getenv("KILN_TEST_SEED");
    client_seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
    printf("seed=%u\n", client_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(client_addresses),
        cmocka_unit_test(client_cellsets),
        cmocka_unit_test(client_corrupted_cellsets),
        cmocka_unit_test(client_shell_filters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
