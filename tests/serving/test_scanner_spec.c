/* test_scanner_spec.c -- scanner_spec.c: the Scanner body of HBase REST in
 * JSON, XML and protobuf gives the same spec; every field of each; and the
 * refusals: truncated varints and lengths, wrong wire types, oversized
 * lengths and rows, bad base64, malformed XML (entities, tags, bytes after
 * the element), bad numbers, too many columns, and every truncation and
 * random byte flips of valid bodies (a clean KILN_INVALID naming the
 * scanner, never a crash). Random mutations print their seed
 * (KILN_TEST_SEED=N).
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

#include "serving/scanner_spec.h"
#include "storage/query/json.h"

static unsigned spec_seed;

static kiln_status
parse(const void *p, size_t n, http_rep rep, scanner_spec *s, kiln_err *err)
{
    scanner_spec_init(s);
    status_clear(err);
    return scanner_spec_parse(p, n, rep, s, err);
}

/* The message of a refused body; the test fails if it is accepted. */
static const char *
refused(const void *p, size_t n, http_rep rep)
{
    static kiln_err err;
    scanner_spec s;
    kiln_status st = parse(p, n, rep, &s, &err);
    scanner_spec_free(&s);
    if (st == KILN_OK && rep == HTTP_REP_PB)
        fail_msg("accepted: protobuf of %zu bytes starting 0x%02x", n, n ? *(const uint8_t *)p : 0);
    if (st == KILN_OK)
        fail_msg("accepted (rep %d): %.*s", (int)rep, (int)(n > 120 ? 120 : n), (const char *)p);
    assert_int_equal(st, KILN_INVALID);
    assert_true(strncmp(err.msg, "scanner: ", 9) == 0);
    return err.msg;
}

static int
buf_is(const kbuf *b, const char *s)
{
    return b->len == strlen(s) && memcmp(b->data, s, b->len) == 0;
}

/* A protobuf writer for the tests (varints, keys, length-delimited). */
typedef struct pbw {
    uint8_t b[4096];
    size_t n;
} pbw;

static void
pb_varint(pbw *w, uint64_t v)
{
    do {
        uint8_t c = v & 0x7F;
        v >>= 7;
        w->b[w->n++] = (uint8_t)(c | (v ? 0x80 : 0));
    } while (v);
}

static void
pb_int(pbw *w, unsigned field, uint64_t v)
{
    pb_varint(w, (uint64_t)field << 3);
    pb_varint(w, v);
}

static void
pb_bytes(pbw *w, unsigned field, const void *p, size_t n)
{
    pb_varint(w, (uint64_t)field << 3 | 2);
    pb_varint(w, n);
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static const char FILTER[] = "{\"type\":\"PrefixFilter\",\"value\":\"YQ==\"}";

/* The spec the three bodies below describe. */
static void
check_full(const scanner_spec *s)
{
    assert_true(buf_is(&s->start, "a\x01" "b"));
    assert_true(buf_is(&s->end, "zz"));
    assert_int_equal(s->ncols, 2);
    assert_string_equal(s->cols[0].family, "f");
    assert_null(s->cols[0].qualifier);
    assert_string_equal(s->cols[1].family, "g");
    assert_int_equal(s->cols[1].qualifier_len, 3);
    assert_memory_equal(s->cols[1].qualifier, "q:r", 3);
    assert_int_equal(s->batch, 7);
    assert_int_equal(s->caching, 9);
    assert_int_equal(s->max_versions, 3);
    assert_int_equal(s->start_time, 100);
    assert_int_equal(s->end_time, 200);
    assert_int_equal(s->limit, 11);
    assert_true(s->has_filter);
    assert_true(buf_is(&s->filter, FILTER));
}

static void
spec_three_representations_agree(void **state)
{
    (void)state;
    scanner_spec s;
    kiln_err err;
    /* "a\x01b" = YQFi, "zz" = eno=, "f" = Zg==, "g:q:r" = ZzpxOnI= */
    const char *json =
        "{\"startRow\":\"YQFi\",\"endRow\":\"eno=\",\"column\":[\"Zg==\",\"ZzpxOnI=\"],"
        "\"batch\":7,\"caching\":\"9\",\"maxVersions\":3,\"startTime\":100,\"endTime\":200,"
        "\"limit\":11,\"reversed\":true,\"filter\":"
        "\"{\\\"type\\\":\\\"PrefixFilter\\\",\\\"value\\\":\\\"YQ==\\\"}\"}";
    assert_int_equal(parse(json, strlen(json), HTTP_REP_JSON, &s, &err), KILN_OK);
    check_full(&s);
    assert_true(s.reversed);
    scanner_spec_free(&s);
    assert_int_equal(parse(json, strlen(json), HTTP_REP_RAW, &s, &err), KILN_OK);
    check_full(&s);
    scanner_spec_free(&s);

    const char *xml =
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<!-- a scan -->\n"
        "<Scanner startRow=\"YQFi\" endRow='eno=' batch=\"7\" caching=\"9\" maxVersions=\"3\" "
        "startTime=\"100\" endTime=\"200\" limit=\"1&#49;\" cacheBlocks=\"true\" reversed=\"true\">"
        "<column>Zg==</column>\n  <column>ZzpxOnI=</column><label/>"
        "<filter>{&quot;type&quot;:&quot;PrefixFilter&quot;,&quot;value&quot;:&quot;YQ&#x3D;&#61;&quot;}"
        "</filter></Scanner >\n";
    assert_int_equal(parse(xml, strlen(xml), HTTP_REP_XML, &s, &err), KILN_OK);
    check_full(&s);
    assert_true(s.reversed);
    scanner_spec_free(&s);

    pbw w = {.n = 0};
    pb_bytes(&w, 1, "a\x01" "b", 3);
    pb_bytes(&w, 2, "zz", 2);
    pb_bytes(&w, 3, "f", 1);
    pb_bytes(&w, 3, "g:q:r", 5);
    pb_int(&w, 4, 7);
    pb_int(&w, 5, 100);
    pb_int(&w, 6, 200);
    pb_int(&w, 7, 3);
    pb_bytes(&w, 8, FILTER, strlen(FILTER));
    pb_int(&w, 9, 9);
    pb_bytes(&w, 10, "secret", 6);   /* labels: ignored */
    pb_int(&w, 11, 1);               /* cacheBlocks: ignored */
    pb_int(&w, 12, 11);
    pb_int(&w, 99, 5);               /* unknown fields are skipped */
    pb_varint(&w, 99 << 3 | 1);      /* fixed64 */
    memset(w.b + w.n, 0, 8);
    w.n += 8;
    pb_varint(&w, 98 << 3 | 5);      /* fixed32 */
    memset(w.b + w.n, 0, 4);
    w.n += 4;
    assert_int_equal(parse(w.b, w.n, HTTP_REP_PB, &s, &err), KILN_OK);
    check_full(&s);
    scanner_spec_free(&s);
}

static void
spec_empty_bodies(void **state)
{
    (void)state;
    scanner_spec s;
    kiln_err err;
    static const struct {
        const char *text;
        http_rep rep;
    } empties[] = {
        {"{}", HTTP_REP_JSON}, {" { } ", HTTP_REP_JSON}, {"<Scanner/>", HTTP_REP_XML},
        {"<Scanner></Scanner>", HTTP_REP_XML}, {"", HTTP_REP_PB},
        {"{\"filter\":null}", HTTP_REP_JSON}, {"{\"filter\":\"\"}", HTTP_REP_JSON},
        {"<Scanner><filter></filter><column/></Scanner>", HTTP_REP_XML},
    };
    for (size_t i = 0; i < sizeof empties / sizeof empties[0]; i++) {
        if (parse(empties[i].text, strlen(empties[i].text), empties[i].rep, &s, &err) != KILN_OK)
            fail_msg("%s: %s", empties[i].text, err.msg);
        assert_int_equal(s.start.len + s.end.len + s.ncols, 0);
        assert_int_equal(s.batch + s.limit + s.max_versions + s.start_time + s.end_time, 0);
        assert_false(s.has_filter);
        assert_false(s.reversed);
        scanner_spec_free(&s);
    }
}

static void
spec_json_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *text, *says;
    } cases[] = {
        {"", "not JSON"},
        {"{", "not JSON"},
        {"[1]", "JSON object"},
        {"{\"startRow\":\"!!\"}", "startRow is not valid base64"},
        {"{\"endRow\":\"YQ=x\"}", "endRow is not valid base64"},
        {"{\"column\":\"Zg==\"}", "column must be a list"},
        {"{\"column\":[1]}", "a column must be a base64 string"},
        {"{\"column\":[\"%%%\"]}", "column is not valid base64"},
        {"{\"column\":[\"\"]}", "bad column"},
        {"{\"column\":[\"OnE=\"]}", "bad column"},   /* ":q" has no family */
        {"{\"batch\":\"x\"}", "batch must be a number"},
        {"{\"batch\":\"\"}", "batch must be a number"},
        {"{\"batch\":1.5}", "batch must be an integer"},
        {"{\"batch\":[]}", "batch must be an integer"},
        {"{\"batch\":-1}", "negative or too large"},
        {"{\"batch\":4294967296}", "negative or too large"},
        {"{\"limit\":\"99999999999999999999999\"}", "limit must be a number"},
        {"{\"maxVersions\":-3}", "negative or too large"},
        {"{\"startTime\":5,\"endTime\":5}", "startTime must be below endTime"},
        {"{\"startTime\":-5}", "negative or too large"},
        {"{\"reversed\":1}", "reversed must be true or false"},
        {"{\"filter\":{}}", "filter must be a string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *msg = refused(cases[i].text, strlen(cases[i].text), HTTP_REP_JSON);
        if (strstr(msg, cases[i].says) == NULL)
            fail_msg("%s: message '%s' does not say '%s'", cases[i].text, msg, cases[i].says);
    }
    /* a row longer than HBase allows, and more columns than a spec holds */
    size_t big = CELL_ROW_MAX + 1;
    uint8_t *raw = calloc(1, big);
    kbuf b = KBUF_INIT;
    assert_non_null(raw);
    buf_append(&b, "{\"startRow\":\"", 13);
    json_b64_append(&b, raw, big);
    buf_append(&b, "\"}", 2);
    assert_non_null(strstr(refused(b.data, b.len, HTTP_REP_JSON), "longer than"));
    buf_reset(&b);
    buf_append(&b, "{\"column\":[", 11);
    for (int i = 0; i <= SCANNER_SPEC_COLUMNS_MAX; i++)
        buf_append(&b, i ? ",\"Zg==\"" : "\"Zg==\"", i ? 7 : 6);
    buf_append(&b, "]}", 2);
    assert_non_null(strstr(refused(b.data, b.len, HTTP_REP_JSON), "more than 64 columns"));
    buf_free(&b);
    free(raw);
}

static void
spec_xml_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *text, *says;
    } cases[] = {
        {"", "expected <Scanner>"},
        {"<Scan/>", "expected <Scanner>"},
        {"<Scannerbatch=\"5\"/>", "expected <Scanner>"},
        {"<Other/>", "expected <Scanner>"},
        {"<?xml version=\"1.0\"", "unterminated ?>"},
        {"<!-- open", "unterminated -->"},
        {"<!DOCTYPE x [<!ENTITY a \"b\">]><Scanner/>", "expected <Scanner>"},
        {"<Scanner", "malformed attribute"},
        {"<Scanner batch>", "malformed attribute"},
        {"<Scanner batch=5/>", "without quotes"},
        {"<Scanner batch=\"5", "truncated"},
        {"<Scanner batch=\"5\"", "malformed attribute"},
        {"<Scanner batch=\"five\"/>", "batch must be a number"},
        {"<Scanner batch=\"\"/>", "batch must be a number"},
        {"<Scanner limit=\"123456789012345678901234567890123\"/>", "limit must be a number"},
        {"<Scanner batch=\"-2\"/>", "negative or too large"},
        {"<Scanner startRow=\"*\"/>", "startRow is not valid base64"},
        {"<Scanner batch=\"&bogus;\"/>", "unknown entity"},
        {"<Scanner batch=\"&amp\"/>", "bad entity"},
        {"<Scanner batch=\"&#;\"/>", "unknown entity"},
        {"<Scanner batch=\"&#x;\"/>", "bad entity"},
        {"<Scanner batch=\"&#xZZ;\"/>", "bad entity"},
        {"<Scanner batch=\"&#99999999999;\"/>", "bad entity"},
        {"<Scanner batch=\"&#233;\"/>", "non-ASCII reference"},
        {"<Scanner batch=\"1<2\"/>", "'<' in text"},
        {"<Scanner>", "expected an element"},
        {"<Scanner>text</Scanner>", "expected an element"},
        {"<Scanner><column>Zg==</column>", "expected an element"},
        {"<Scanner><column>Zg==</filter></Scanner>", "mismatched end tag"},
        {"<Scanner><column>Zg==</col></Scanner>", "mismatched end tag"},
        {"<Scanner><column>Zg==</columnx></Scanner>", "malformed end tag"},
        {"<Scanner><column a=\"1\">Zg==</column></Scanner>", "attributes on <column>"},
        {"<Scanner><column><![CDATA[Zg==]]></column></Scanner>", "mismatched end tag"},
        {"<Scanner><column>not base64!</column></Scanner>", "column is not valid base64"},
        {"<Scanner><nope/></Scanner>", "unknown element <nope>"},
        {"<Scanner><nope>1</nope></Scanner>", "unknown element <nope>"},
        {"<Scanner></Scanner", "malformed end tag"},
        {"<Scanner/><Scanner/>", "bytes after </Scanner>"},
        {"<Scanner/>junk", "bytes after </Scanner>"},
        {"<Scanner startTime=\"9\" endTime=\"3\"/>", "startTime must be below endTime"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *msg = refused(cases[i].text, strlen(cases[i].text), HTTP_REP_XML);
        if (strstr(msg, cases[i].says) == NULL)
            fail_msg("%s: message '%s' does not say '%s'", cases[i].text, msg, cases[i].says);
    }
    /* an element name longer than the message shows is cut, not overrun */
    char text[600];
    int n = snprintf(text, sizeof text, "<Scanner><");
    memset(text + n, 'x', 500);
    snprintf(text + n + 500, sizeof text - (size_t)n - 500, "/></Scanner>");
    assert_non_null(strstr(refused(text, strlen(text), HTTP_REP_XML), "unknown element <xxxx"));
}

static void
spec_protobuf_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t n;
        const char *says;
    } cases[] = {
        {"\x80", 1, "bad field key"},                              /* truncated key varint */
        {"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11, "bad field key"},   /* 11 bytes */
        {"\x00\x01", 2, "field number 0"},
        {"\x20", 1, "truncated varint"},                           /* batch, no value */
        {"\x20\x80\x80", 3, "truncated varint"},
        {"\x0a", 1, "bad length"},                                 /* startRow, no length */
        {"\x0a\x05" "ab", 4, "bad length"},                        /* length past the end */
        {"\x0a\xff\xff\xff\xff\x0f", 6, "bad length"},             /* 4 GiB */
        {"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 10, "bad length"},   /* 2^63 */
        {"\x21\x01\x02", 3, "truncated field"},                    /* fixed64 cut */
        {"\x25\x01", 2, "truncated field"},                        /* fixed32 cut */
        {"\x0b", 1, "wire type 3"},                                /* start group */
        {"\x0c", 1, "wire type 4"},
        {"\x0e", 1, "wire type 6"},
        {"\x0f", 1, "wire type 7"},
        {"\x08\x01", 2, "field 1 has the wrong type"},             /* startRow as a varint */
        {"\x1d\x00\x00\x00\x00", 5, "field 3 has the wrong type"}, /* column as fixed32 */
        {"\x22\x01" "x", 3, "field 4 has the wrong type"},         /* batch as bytes */
        {"\x42\x00\x40\x01", 4, "field 8 has the wrong type"},     /* filter as a varint */
        {"\x41\x00\x00\x00\x00\x00\x00\x00\x00", 9, "field 8 has the wrong type"},
        {"\x1a\x00", 2, "bad column"},                             /* empty column */
        {"\x20\xff\xff\xff\xff\x0f", 6, "negative or too large"}, /* batch -1 as int32 */
        {"\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11, "negative or too large"},
        {"\x28\x09\x30\x02", 4, "startTime must be below endTime"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *msg = refused(cases[i].bytes, cases[i].n, HTTP_REP_PB);
        if (strstr(msg, cases[i].says) == NULL)
            fail_msg("case %zu: message '%s' does not say '%s'", i, msg, cases[i].says);
    }
    /* a row of CELL_ROW_MAX + 1 bytes, and 65 columns */
    size_t big = CELL_ROW_MAX + 1;
    uint8_t *p = calloc(1, big + 16);
    assert_non_null(p);
    size_t n = 0;
    p[n++] = 0x12;   /* endRow */
    for (uint64_t v = big; ; v >>= 7) {
        p[n++] = (uint8_t)((v & 0x7F) | (v >= 0x80 ? 0x80 : 0));
        if (v < 0x80)
            break;
    }
    assert_non_null(strstr(refused(p, n + big, HTTP_REP_PB), "longer than"));
    free(p);
    pbw w = {.n = 0};
    for (int i = 0; i <= SCANNER_SPEC_COLUMNS_MAX; i++)
        pb_bytes(&w, 3, "f:q", 3);
    assert_non_null(strstr(refused(w.b, w.n, HTTP_REP_PB), "more than 64 columns"));
}

static uint64_t
spec_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Every truncation and random flips of a valid body of each kind: OK or a
 * clean refusal. The copies are exactly as long as the input, so ASan
 * catches a read past the end. */
static void
spec_mutations_never_crash(void **state)
{
    (void)state;
    pbw w = {.n = 0};
    pb_bytes(&w, 1, "row\x00" "1", 5);
    pb_bytes(&w, 3, "f:q", 3);
    pb_int(&w, 4, 1000);
    pb_int(&w, 6, 1u << 30);
    pb_bytes(&w, 8, FILTER, strlen(FILTER));
    pb_int(&w, 12, 5);
    const char *json = "{\"startRow\":\"cm93\",\"column\":[\"Zjpx\",\"Zw==\"],\"batch\":5,"
                       "\"reversed\":false,\"filter\":\"{}\",\"endTime\":\"77\"}";
    const char *xml = "<?xml version=\"1.0\"?><Scanner batch=\"5\" startRow=\"cm93\">"
                      "<column>Zjpx</column><filter>{&quot;a&quot;:&#49;}</filter></Scanner>";
    struct {
        const uint8_t *p;
        size_t n;
        http_rep rep;
    } bodies[] = {
        {w.b, w.n, HTTP_REP_PB},
        {(const uint8_t *)json, strlen(json), HTTP_REP_JSON},
        {(const uint8_t *)xml, strlen(xml), HTTP_REP_XML},
    };
    uint64_t rs = spec_seed;
    for (size_t k = 0; k < 3; k++) {
        size_t accepted = 0;
        for (size_t round = 0; round <= bodies[k].n + 3000; round++) {
            size_t len = round <= bodies[k].n ? round : bodies[k].n;
            uint8_t *m = malloc(len ? len : 1);
            assert_non_null(m);
            memcpy(m, bodies[k].p, len);
            if (round > bodies[k].n) {
                int flips = 1 + (int)(spec_rand(&rs) % 4);
                for (int i = 0; i < flips; i++)
                    m[spec_rand(&rs) % len] = (uint8_t)spec_rand(&rs);
            }
            scanner_spec s;
            kiln_err err;
            kiln_status st = parse(m, len, bodies[k].rep, &s, &err);
            if (st == KILN_OK) {
                accepted++;
                assert_true(s.ncols <= SCANNER_SPEC_COLUMNS_MAX);
                assert_true(s.batch >= 0 && s.limit >= 0);
            } else {
                assert_int_equal(st, KILN_INVALID);
                assert_true(strncmp(err.msg, "scanner: ", 9) == 0);
            }
            scanner_spec_free(&s);
            free(m);
        }
        assert_true(accepted > 0);
    }
}

int
main(void)
{
    const char *env = getenv("KILN_TEST_SEED");
    spec_seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
    printf("seed=%u\n", spec_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spec_three_representations_agree),
        cmocka_unit_test(spec_empty_bodies),
        cmocka_unit_test(spec_json_refusals),
        cmocka_unit_test(spec_xml_refusals),
        cmocka_unit_test(spec_protobuf_refusals),
        cmocka_unit_test(spec_mutations_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
