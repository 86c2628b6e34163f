/* test_cellset_parse.c -- cellset_parse.c: CellSet bodies that python3's
 * stock encoders wrote (json, xml.etree, and a protobuf encoder built from
 * HBase's .proto field numbers: tests/serving/cellset_bodies.py) parse to
 * the model the script wrote beside them, in all three encodings; the Put
 * mutations HBase's rules make of a model (the path's row and columns
 * filling in); and the refusals: malformed JSON, XML and protobuf naming
 * what is wrong, every truncation and random byte flips of valid bodies (a
 * clean KILN_INVALID, never a crash). Random cases print their seed
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

#include "serving/cellset_parse.h"
#include "storage/hfile/cell.h"
#include "tests/support/test_util.h"

static unsigned cs_seed;
static char cs_dir[512];

static const char *const cs_exts[] = {"json", "xml", "pb"};
static const http_rep cs_reps[] = {HTTP_REP_JSON, HTTP_REP_XML, HTTP_REP_PB};

static int
setup(void **state)
{
    (void)state;
    tu_mkdtemp(cs_dir, sizeof cs_dir, "cellset");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 tests/serving/cellset_bodies.py %s %u", cs_dir, cs_seed);
    if (system(cmd) != 0) {
        fprintf(stderr, "%s failed\n", cmd);
        return -1;
    }
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    tu_rmrf(cs_dir);
    return 0;
}

static uint8_t *
slurp(const char *name, const char *ext, size_t *n)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s%s%s", cs_dir, name, ext[0] ? "." : "", ext);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open %s", path);
    kbuf b = KBUF_INIT;
    uint8_t chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_append(&b, chunk, got);
    fclose(f);
    *n = b.len;
    buf_append_u8(&b, 0);
    return b.data;
}

static void
hex_of(kbuf *b, kslice s)
{
    static const char d[] = "0123456789abcdef";
    buf_reset(b);
    if (s.n == 0)
        buf_append_u8(b, '-');
    for (size_t i = 0; i < s.n; i++) {
        buf_append_u8(b, (uint8_t)d[s.p[i] >> 4]);
        buf_append_u8(b, (uint8_t)d[s.p[i] & 15]);
    }
    buf_append_u8(b, 0);
}

/* The model as the .expect lines describe it. */
static void
describe(const cellset *cs, kbuf *out)
{
    kbuf h = KBUF_INIT, h2 = KBUF_INIT;
    char line[64];
    buf_reset(out);
    for (size_t r = 0; r < cs->nrows; r++) {
        const cellset_row *row = &cs->rows[r];
        hex_of(&h, cellset_slice(cs, row->key_off, row->key_len));
        snprintf(line, sizeof line, "R %d ", row->has_key);
        buf_append(out, line, strlen(line));
        buf_append(out, h.data, h.len - 1);
        buf_append_u8(out, '\n');
        for (size_t i = 0; i < row->count; i++) {
            const cellset_cell *c = &cs->cells[row->first + i];
            hex_of(&h, cellset_slice(cs, c->column_off, c->column_len));
            hex_of(&h2, cellset_slice(cs, c->value_off, c->value_len));
            if (c->ts == CELL_LATEST_TIMESTAMP)
                snprintf(line, sizeof line, "C %d %s L ", c->has_column, (char *)h.data);
            else
                snprintf(line, sizeof line, "C %d %s %lld ", c->has_column, (char *)h.data,
                         (long long)c->ts);
            if (strlen(line) < sizeof line - 1) {
                buf_append(out, line, strlen(line));
            } else {   /* a long column: written in parts */
                snprintf(line, sizeof line, "C %d ", c->has_column);
                buf_append(out, line, strlen(line));
                buf_append(out, h.data, h.len - 1);
                if (c->ts == CELL_LATEST_TIMESTAMP)
                    snprintf(line, sizeof line, " L ");
                else
                    snprintf(line, sizeof line, " %lld ", (long long)c->ts);
                buf_append(out, line, strlen(line));
            }
            buf_append(out, h2.data, h2.len - 1);
            buf_append_u8(out, '\n');
        }
    }
    buf_free(&h);
    buf_free(&h2);
}

static void
stock_bodies_parse(void **state)
{
    (void)state;
    size_t n;
    char *list = (char *)slurp("cases", "", &n);
    cellset cs;
    cellset_init(&cs);
    kbuf got = KBUF_INIT;
    size_t checked = 0;
    for (char *name = strtok(list, "\n"); name != NULL; name = strtok(NULL, "\n")) {
        size_t en;
        char *want = (char *)slurp(name, "expect", &en);
        for (size_t k = 0; k < 3; k++) {
            size_t bn;
            uint8_t *body = slurp(name, cs_exts[k], &bn);
            kiln_err err;
            status_clear(&err);
            kiln_status st = cellset_parse(body, bn, cs_reps[k], &cs, &err);
            if (st != KILN_OK)
                fail_msg("%s.%s: %s", name, cs_exts[k], err.msg);
            describe(&cs, &got);
            if (got.len != en || memcmp(got.data, want, en) != 0)
                fail_msg("%s.%s (seed %u): got\n%.*s\nwant\n%s", name, cs_exts[k], cs_seed,
                         (int)(got.len > 2000 ? 2000 : got.len), (char *)got.data, want);
            free(body);
            checked++;
        }
        free(want);
    }
    assert_true(checked >= 24);
    buf_free(&got);
    cellset_free(&cs);
    free(list);
}

/* Parse one of the script's bodies. */
static void
load(const char *name, http_rep rep, cellset *cs)
{
    size_t bn;
    uint8_t *body = slurp(name, rep == HTTP_REP_PB ? "pb" : rep == HTTP_REP_XML ? "xml" : "json",
                          &bn);
    kiln_err err;
    status_clear(&err);
    tu_must(cellset_parse(body, bn, rep, cs, &err), &err);
    free(body);
}

static int
slice_is(kslice s, const void *p, size_t n)
{
    return s.n == n && (n == 0 || memcmp(s.p, p, n) == 0);
}

static void
puts_follow_hbase_rules(void **state)
{
    (void)state;
    cellset cs;
    cellset_init(&cs);
    kiln_err err;
    kiln_mutation *m;
    size_t n;

    /* three rows, three mutations, cells in order, LATEST where absent */
    load("multirow", HTTP_REP_JSON, &cs);
    status_clear(&err);
    tu_must(cellset_puts(&cs, NULL, NULL, 0, &m, &n, &err), &err);
    assert_int_equal(n, 3);
    assert_true(slice_is(mutation_row(&m[0]), "a", 1));
    assert_int_equal(m[0].count, 2);
    kiln_cell c = mutation_cell(&m[0], 0);
    assert_true(c.family_len == 1 && c.family[0] == 'f' && c.qualifier_len == 1 &&
                c.qualifier[0] == 'x' && c.ts == CELL_LATEST_TIMESTAMP &&
                c.type == CELL_TYPE_PUT && c.value_len == 1 && c.value[0] == '1');
    c = mutation_cell(&m[0], 1);
    assert_true(c.family[0] == 'g' && c.ts == 3);
    c = mutation_cell(&m[2], 0);
    assert_int_equal(c.qualifier_len, 1000);
    assert_int_equal(c.value_len, 5000);
    for (size_t i = 0; i < n; i++) {
        status_clear(&err);
        tu_must(mutation_validate(&m[i], &err), &err);
        mutation_free(&m[i]);
    }
    free(m);

    /* the empty qualifier of "f:" and binary bytes stay */
    load("binary", HTTP_REP_XML, &cs);
    status_clear(&err);
    tu_must(cellset_puts(&cs, NULL, NULL, 0, &m, &n, &err), &err);
    assert_true(slice_is(mutation_row(&m[0]), "\x00\xff<&>\"'", 7));
    c = mutation_cell(&m[0], 1);
    assert_true(c.qualifier_len == 0 && c.value_len == 0 && c.ts == 7);
    c = mutation_cell(&m[0], 2);
    assert_true(c.family_len == 2 && c.qualifier_len == 256 && c.value_len == 256);
    mutation_free(&m[0]);
    free(m);

    /* a row without a key takes the path's; without one it is refused */
    load("nokey", HTTP_REP_PB, &cs);
    kslice row = kslice_str("pathrow");
    status_clear(&err);
    tu_must(cellset_puts(&cs, &row, NULL, 0, &m, &n, &err), &err);
    assert_true(n == 1 && slice_is(mutation_row(&m[0]), "pathrow", 7));
    mutation_free(&m[0]);
    free(m);
    status_clear(&err);
    assert_int_equal(cellset_puts(&cs, NULL, NULL, 0, &m, &n, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "row key not specified"));
    assert_null(m);

    /* cells without a column take the path's columns in order */
    load("nocolumn", HTTP_REP_XML, &cs);
    kslice cols[2] = {kslice_str("p:one"), kslice_str("p:two")};
    status_clear(&err);
    tu_must(cellset_puts(&cs, NULL, cols, 2, &m, &n, &err), &err);
    c = mutation_cell(&m[0], 0);
    assert_true(c.family[0] == 'p' && c.qualifier_len == 3 && memcmp(c.qualifier, "one", 3) == 0);
    c = mutation_cell(&m[0], 1);
    assert_true(c.family[0] == 'f' && c.qualifier[0] == 'b');
    c = mutation_cell(&m[0], 2);
    assert_true(c.family[0] == 'p' && memcmp(c.qualifier, "two", 3) == 0);
    mutation_free(&m[0]);
    free(m);
    status_clear(&err);
    assert_int_equal(cellset_puts(&cs, NULL, cols, 1, &m, &n, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "Cell 3: column not specified"));

    /* a family alone, a row without cells, an empty set */
    load("family_only", HTTP_REP_JSON, &cs);
    status_clear(&err);
    assert_int_equal(cellset_puts(&cs, NULL, NULL, 0, &m, &n, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "FAMILY:QUALIFIER"));
    load("empty_row", HTTP_REP_XML, &cs);
    status_clear(&err);
    assert_int_equal(cellset_puts(&cs, NULL, NULL, 0, &m, &n, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "no cells"));
    status_clear(&err);
    tu_must(cellset_parse((const uint8_t *)"{}", 2, HTTP_REP_JSON, &cs, &err), &err);
    assert_int_equal(cellset_puts(&cs, NULL, NULL, 0, &m, &n, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "no rows"));
    /* a bad family name */
    const char *badfam = "{\"Row\":[{\"key\":\"cg==\",\"Cell\":[{\"column\":\"Zi86cQ==\",\"$\":\"\"}]}]}";
    status_clear(&err);
    tu_must(cellset_parse((const uint8_t *)badfam, strlen(badfam), HTTP_REP_JSON, &cs, &err),
            &err);
    assert_int_equal(cellset_puts(&cs, NULL, NULL, 0, &m, &n, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "bad family name"));
    cellset_free(&cs);
}

/* The message of a refused body. */
static const char *
refused(const void *p, size_t n, http_rep rep)
{
    static kiln_err err;
    cellset cs;
    cellset_init(&cs);
    status_clear(&err);
    kiln_status st = cellset_parse(p, n, rep, &cs, &err);
    cellset_free(&cs);
    if (st == KILN_OK)
        fail_msg("accepted (rep %d): %.*s", (int)rep, (int)(n > 120 ? 120 : n), (const char *)p);
    assert_int_equal(st, KILN_INVALID);
    assert_true(strncmp(err.msg, "cellset: ", 9) == 0);
    return err.msg;
}

#define REFUSE(text, rep, needle)                                                        \
    do {                                                                                 \
        const char *msg_ = refused(text, sizeof(text) - 1, rep);                         \
        if (strstr(msg_, needle) == NULL)                                                \
            fail_msg("%s: message '%s' does not name '%s'", text, msg_, needle);         \
    } while (0)

static void
malformed_bodies_named(void **state)
{
    (void)state;
    /* JSON */
    REFUSE("{\"Row\":[{\"key\":\"cm93\",\"Cell\":[{\"column\":\"Zjpx\",\"$\":\"dmFs\"}]", HTTP_REP_JSON,
           "JSON");
    REFUSE("[1,2]", HTTP_REP_JSON, "expected an object");
    REFUSE("{\"Row\":[{\"key\":\"***\"}]}", HTTP_REP_JSON, "Row 1: key is not valid base64");
    REFUSE("{\"Row\":[{\"key\":\"cg==\",\"Cell\":[{\"column\":\"Zjpx\",\"$\":\"#\"}]}]}",
           HTTP_REP_JSON, "Row 1: Cell 1: \"$\" (the value) is not valid base64");
    REFUSE("{\"Row\":[{\"key\":\"cg==\",\"Cell\":[{\"column\":7}]}]}", HTTP_REP_JSON,
           "column is not valid base64");
    REFUSE("{\"Row\":[{\"key\":\"cg==\",\"Cell\":[{\"column\":\"Zjpx\",\"timestamp\":-1}]}]}",
           HTTP_REP_JSON, "timestamp");
    REFUSE("{\"Row\":[{\"key\":\"cg==\",\"Cell\":[{\"column\":\"Zjpx\",\"timestamp\":1.5}]}]}",
           HTTP_REP_JSON, "timestamp");
    REFUSE("{\"Row\":[5]}", HTTP_REP_JSON, "Row 1 is not an object");
    REFUSE("{\"Row\":[{\"Cell\":[\"x\"]}]}", HTTP_REP_JSON, "Cell 1 is not an object");
    /* XML */
    REFUSE("<Set/>", HTTP_REP_XML, "expected <CellSet>");
    REFUSE("<CellSet><Row key=\"cg==\"><Cell column=\"Zjpx\">dmFs</Cell></Row>", HTTP_REP_XML,
           "expected </CellSet>");
    REFUSE("<CellSet><Row key=\"cg==\"><Cell column=\"Zjpx\">dmFs</Cel></Row></CellSet>",
           HTTP_REP_XML, "expected </Cell>");
    REFUSE("<CellSet><Rows/></CellSet>", HTTP_REP_XML, "unknown element <Rows>");
    REFUSE("<CellSet><Row key=\"%%\"/></CellSet>", HTTP_REP_XML, "Row 1: key is not valid base64");
    REFUSE("<CellSet><Row key=\"cg==\"><Cell column=\"Zjpx\" timestamp=\"x1\">dmFs</Cell></Row>"
           "</CellSet>", HTTP_REP_XML, "Row 1: Cell 1: timestamp");
    REFUSE("<CellSet><Row key=\"cg==\"><Cell column=\"Zjpx\">d&bogus;Fs</Cell></Row></CellSet>",
           HTTP_REP_XML, "unknown entity");
    REFUSE("<CellSet><Row key=\"cg==\"><Cell column=\"Zjpx\">d&#x263A;Fs</Cell></Row></CellSet>",
           HTTP_REP_XML, "outside ASCII");
    REFUSE("<CellSet><Row key=cg==/></CellSet>", HTTP_REP_XML, "quotes");
    REFUSE("<CellSet><Row key=\"cg==\"><Cell column=\"Zjpx\">!!</Cell></Row></CellSet>",
           HTTP_REP_XML, "the value is not valid base64");
    REFUSE("<CellSet></CellSet>junk", HTTP_REP_XML, "bytes after </CellSet>");
    REFUSE("<!DOCTYPE x><CellSet/>", HTTP_REP_XML, "expected <CellSet>");
    REFUSE("<!-- open <CellSet/>", HTTP_REP_XML, "unterminated");
    REFUSE("<CellSet><![CDATA[x]]></CellSet>", HTTP_REP_XML, "unknown element");
    /* protobuf: key 0, wire types 3/4, truncated varints and lengths, wrong types */
    REFUSE("\x00", HTTP_REP_PB, "bad field key");
    REFUSE("\x0b", HTTP_REP_PB, "wire type 3");
    REFUSE("\x0a\x05\x0a\x01", HTTP_REP_PB, "bad length");
    REFUSE("\x0a", HTTP_REP_PB, "bad length");
    REFUSE("\x08\x01", HTTP_REP_PB, "CellSet: field 1 has the wrong wire type");
    REFUSE("\x0a\x02\x08\x01", HTTP_REP_PB, "Row 1: field 1 has the wrong wire type");
    REFUSE("\x0a\x04\x12\x02\x18\xff", HTTP_REP_PB, "Row 1: Cell 1: truncated varint");
    REFUSE("\x0a\x04\x12\x02\x1a\x00", HTTP_REP_PB, "Row 1: Cell 1: field 3 has the wrong wire");
    REFUSE("\x0a\x06\x12\x04\x22\x05\x61\x62", HTTP_REP_PB, "field 4: bad length");
    REFUSE("\x0a\x0d\x12\x0b\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", HTTP_REP_PB,
           "negative timestamp");
    REFUSE("\x0a\x02\x09\x00", HTTP_REP_PB, "truncated field 1");
    /* unknown protobuf fields are skipped */
    cellset cs;
    cellset_init(&cs);
    kiln_err err;
    status_clear(&err);
    tu_must(cellset_parse((const uint8_t *)"\x10\x05\x0a\x05\x1d\x01\x02\x03\x04", 9, HTTP_REP_PB,
                          &cs, &err),
            &err);
    assert_int_equal(cs.nrows, 1);
    assert_int_equal(cs.rows[0].count, 0);
    cellset_free(&cs);
}

/* Every truncation and random flips of the script's bodies: accepted or a
 * clean KILN_INVALID, never a crash or a read past the body. */
static void
corruption_is_clean(void **state)
{
    (void)state;
    uint64_t rs = cs_seed;
    cellset cs;
    cellset_init(&cs);
    const char *names[] = {"one", "binary", "multirow", "nocolumn", "random"};
    for (size_t ni = 0; ni < sizeof names / sizeof names[0]; ni++) {
        for (size_t k = 0; k < 3; k++) {
            size_t bn;
            uint8_t *body = slurp(names[ni], cs_exts[k], &bn);
            size_t step = bn > 4000 ? bn / 2000 : 1;
            for (size_t cut = 0; cut < bn; cut += step) {
                uint8_t *copy = kiln_memdup(body, cut ? cut : 1);
                kiln_err err;
                status_clear(&err);
                kiln_status st = cellset_parse(copy, cut, cs_reps[k], &cs, &err);
                if (st != KILN_OK) {   /* a protobuf prefix may parse */
                    assert_int_equal(st, KILN_INVALID);
                    assert_true(strncmp(err.msg, "cellset: ", 9) == 0);
                }
                free(copy);
            }
            for (int round = 0; round < 300; round++) {
                uint8_t *copy = kiln_memdup(body, bn);
                int flips = 1 + (int)(tu_splitmix64(&rs) % 4);
                for (int f = 0; f < flips; f++)
                    copy[tu_splitmix64(&rs) % bn] ^= (uint8_t)(1 + tu_splitmix64(&rs) % 255);
                kiln_err err;
                status_clear(&err);
                kiln_status st = cellset_parse(copy, bn, cs_reps[k], &cs, &err);
                if (st != KILN_OK) {
                    assert_int_equal(st, KILN_INVALID);
                    assert_true(strncmp(err.msg, "cellset: ", 9) == 0);
                    assert_int_equal(cs.nrows, 0);
                }
                free(copy);
            }
            free(body);
        }
    }
    /* a JSON truncation is never accepted: the closing brace is last */
    size_t bn;
    uint8_t *body = slurp("one", "json", &bn);
    for (size_t cut = 1; cut < bn; cut++) {
        kiln_err err;
        status_clear(&err);
        assert_int_equal(cellset_parse(body, cut, HTTP_REP_JSON, &cs, &err), KILN_INVALID);
    }
    free(body);
    body = slurp("one", "xml", &bn);
    for (size_t cut = 1; cut < bn; cut++) {
        kiln_err err;
        status_clear(&err);
        assert_int_equal(cellset_parse(body, cut, HTTP_REP_XML, &cs, &err), KILN_INVALID);
    }
    free(body);
    cellset_free(&cs);
}

int
main(void)
{
    const char *s = getenv("KILN_TEST_SEED");
    cs_seed = s != NULL ? (unsigned)strtoul(s, NULL, 10) : (unsigned)time(NULL);
    printf("test_cellset_parse: seed %u (KILN_TEST_SEED=%u replays it)\n", cs_seed, cs_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stock_bodies_parse),
        cmocka_unit_test(puts_follow_hbase_rules),
        cmocka_unit_test(malformed_bodies_named),
        cmocka_unit_test(corruption_is_clean),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
