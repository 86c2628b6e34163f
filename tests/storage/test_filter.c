/* test_filter.c -- filter.c: every filter and comparator of HBase REST's
 * filter model evaluated over small rows, PageFilter's end of scan, lists of
 * lists, and the refusals: malformed JSON, unknown types named, bad base64,
 * bad regular expressions, lists nested too deep or too many filters, and
 * truncated or flipped filter texts (a clean error or a working filter,
 * never a crash). Random mutations print their seed (KILN_TEST_SEED=N).
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

#include "storage/query/filter.h"
#include "storage/query/json.h"

static unsigned filter_seed;

/* A row of up to 8 cells given as "family:qualifier@ts=value". */
typedef struct trow {
    char key[32];
    char text[8][64];
    kiln_cell cells[8];
    store_row r;
} trow;

static void
trow_make(trow *t, const char *key, const char *const *cells)
{
    memset(t, 0, sizeof *t);
    snprintf(t->key, sizeof t->key, "%s", key);
    size_t n = 0;
    for (; cells[n] != NULL && n < 8; n++) {
        snprintf(t->text[n], sizeof t->text[n], "%s", cells[n]);
        char *s = t->text[n];
        char *colon = strchr(s, ':'), *at = strchr(s, '@'), *eq = strchr(s, '=');
        assert_non_null(colon);
        assert_non_null(at);
        assert_non_null(eq);
        *colon = *at = *eq = '\0';
        kiln_cell *c = &t->cells[n];
        c->row = (const uint8_t *)t->key;
        c->row_len = (uint32_t)strlen(t->key);
        c->family = (const uint8_t *)s;
        c->family_len = (uint32_t)strlen(s);
        c->qualifier = (const uint8_t *)colon + 1;
        c->qualifier_len = (uint32_t)strlen(colon + 1);
        c->ts = strtoll(at + 1, NULL, 10);
        c->type = CELL_TYPE_PUT;
        c->value = (const uint8_t *)eq + 1;
        c->value_len = (uint32_t)strlen(eq + 1);
    }
    t->r.row = kslice_make(t->key, strlen(t->key));
    t->r.cells = t->cells;
    t->r.count = n;
}

/* The kept cells of row t as "f:q@ts=v f:q@ts=v" (empty when dropped). */
static const char *
apply(filter *f, const trow *t, int *done)
{
    static char out[512];
    kiln_cell kept[8];
    int d = 0;
    size_t n = filter_row(f, &t->r, kept, &d);
    if (done != NULL)
        *done = d;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const kiln_cell *c = &kept[i];
        size_t len = strlen(out);
        snprintf(out + len, sizeof out - len, "%s%.*s:%.*s@%lld=%.*s", i ? " " : "",
                 (int)c->family_len, (const char *)c->family, (int)c->qualifier_len,
                 (const char *)c->qualifier, (long long)c->ts, (int)c->value_len,
                 (const char *)c->value);
    }
    return out;
}

static filter *
must_parse(const char *text)
{
    filter *f = NULL;
    kiln_err err;
    status_clear(&err);
    kiln_status st = filter_parse(text, strlen(text), &f, &err);
    if (st != KILN_OK)
        fail_msg("%s: %s", text, err.msg);
    return f;
}

/* The message of a refused filter text (fails the test if it is accepted). */
static const char *
refused(const char *text, size_t n)
{
    static kiln_err err;
    filter *f = (filter *)1;
    status_clear(&err);
    kiln_status st = filter_parse(text, n, &f, &err);
    if (st == KILN_OK)
        fail_msg("accepted: %.*s", (int)(n > 200 ? 200 : n), text);
    assert_int_equal(st, KILN_INVALID);
    assert_null(f);
    assert_true(strncmp(err.msg, "filter: ", 8) == 0);
    return err.msg;
}

static const char *
b64(const char *s)
{
    static char ring[4][256];
    static int at;
    kbuf b = KBUF_INIT;
    json_b64_append(&b, (const uint8_t *)s, strlen(s));
    char *o = ring[at++ % 4];
    snprintf(o, 256, "%.*s", (int)b.len, (const char *)b.data);
    buf_free(&b);
    return o;
}

static const char *const row_cells[] = {"f:a@3=apple", "f:a@2=apricot", "f:b@5=Banana",
                                        "g:c@7=cherry", NULL};

static void
filter_row_filters(void **state)
{
    (void)state;
    trow t;
    trow_make(&t, "row-17", row_cells);
    char text[512];
    const char *all = "f:a@3=apple f:a@2=apricot f:b@5=Banana g:c@7=cherry";

    snprintf(text, sizeof text, "{\"type\":\"PrefixFilter\",\"value\":\"%s\"}", b64("row-1"));
    filter *f = must_parse(text);
    assert_string_equal(apply(f, &t, NULL), all);
    filter_free(f);
    snprintf(text, sizeof text, "{\"type\":\"PrefixFilter\",\"value\":\"%s\"}", b64("row-2"));
    f = must_parse(text);
    assert_string_equal(apply(f, &t, NULL), "");
    filter_free(f);

    static const struct {
        const char *op, *cmp, *value;
        int pass;
    } rows[] = {
        {"EQUAL", "BinaryComparator", "row-17", 1},
        {"EQUAL", "BinaryComparator", "row-1", 0},
        {"LESS", "BinaryComparator", "row-2", 1},
        {"LESS", "BinaryComparator", "row-17", 0},
        {"LESS_OR_EQUAL", "BinaryComparator", "row-17", 1},
        {"GREATER", "BinaryComparator", "row-1", 1},
        {"GREATER_OR_EQUAL", "BinaryComparator", "row-18", 0},
        {"NOT_EQUAL", "BinaryComparator", "row-17", 0},
        {"EQUAL", "BinaryPrefixComparator", "row-", 1},
        {"EQUAL", "BinaryPrefixComparator", "rox", 0},
        {"EQUAL", "RegexStringComparator", "^row-[0-9]+$", 1},
        {"EQUAL", "RegexStringComparator", "^row-[a-z]+$", 0},
        {"NOT_EQUAL", "RegexStringComparator", "x", 1},
        {"EQUAL", "SubstringComparator", "OW-1", 1},
        {"EQUAL", "SubstringComparator", "row-177", 0},
        {"NO_OP", "BinaryComparator", "row-17", 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int text_value = rows[i].cmp[0] == 'R' || rows[i].cmp[0] == 'S';
        snprintf(text, sizeof text,
                 "{\"type\":\"RowFilter\",\"op\":\"%s\",\"comparator\":{\"type\":\"%s\","
                 "\"value\":\"%s\"}}",
                 rows[i].op, rows[i].cmp, text_value ? rows[i].value : b64(rows[i].value));
        f = must_parse(text);
        const char *got = apply(f, &t, NULL);
        if (strcmp(got, rows[i].pass ? all : "") != 0)
            fail_msg("%s: got '%s'", text, got);
        filter_free(f);
    }
}

static void
filter_cell_filters(void **state)
{
    (void)state;
    trow t;
    trow_make(&t, "r", row_cells);
    char text[512];
    static const struct {
        const char *fmt, *arg, *want;
    } cases[] = {
        {"{\"type\":\"ColumnPrefixFilter\",\"value\":\"%s\"}", "a", "f:a@3=apple f:a@2=apricot"},
        {"{\"type\":\"QualifierFilter\",\"op\":\"GREATER\",\"comparator\":{\"type\":"
         "\"BinaryComparator\",\"value\":\"%s\"}}",
         "a", "f:b@5=Banana g:c@7=cherry"},
        {"{\"type\":\"FamilyFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
         "\"BinaryComparator\",\"value\":\"%s\"}}",
         "g", "g:c@7=cherry"},
        {"{\"type\":\"ValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
         "\"BinaryPrefixComparator\",\"value\":\"%s\"}}",
         "ap", "f:a@3=apple f:a@2=apricot"},
        {"{\"type\":\"ValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
         "\"SubstringComparator\",\"value\":\"%s\"}}",
         "NAN", "f:b@5=Banana"},
        {"{\"type\":\"ValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
         "\"RegexStringComparator\",\"value\":\"%s\"}}",
         "rr", "g:c@7=cherry"},
        {"{\"type\":\"FirstKeyOnlyFilter\"%s}", "", "f:a@3=apple"},
        {"{\"type\":\"KeyOnlyFilter\"%s}", "", "f:a@3= f:a@2= f:b@5= g:c@7="},
        {"{\"type\":\"ColumnCountGetFilter\",\"limit\":%s}", "2", "f:a@3=apple f:a@2=apricot f:b@5=Banana"},
        {"{\"type\":\"ColumnCountGetFilter\",\"limit\":%s}", "0", ""},
        {"{\"type\":\"TimestampsFilter\",\"timestamps\":[%s]}", "2,7,99", "f:a@2=apricot g:c@7=cherry"},
        {"{\"type\":\"TimestampsFilter\",\"timestamps\":[%s]}", "", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int raw = strstr(cases[i].fmt, "\"value\":\"%s\"") == NULL &&
                  strstr(cases[i].fmt, "Prefix") == NULL;
        raw |= strstr(cases[i].fmt, "Regex") != NULL || strstr(cases[i].fmt, "Substring") != NULL;
        snprintf(text, sizeof text, cases[i].fmt, raw ? cases[i].arg : b64(cases[i].arg));
        filter *f = must_parse(text);
        const char *got = apply(f, &t, NULL);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("%s: got '%s', want '%s'", text, got, cases[i].want);
        filter_free(f);
    }
    snprintf(text, sizeof text, "{\"type\":\"MultipleColumnPrefixFilter\",\"prefixes\":[\"%s\",\"%s\"]}",
             b64("b"), b64("c"));
    filter *f = must_parse(text);
    assert_string_equal(apply(f, &t, NULL), "f:b@5=Banana g:c@7=cherry");
    filter_free(f);
}

static void
filter_single_column_value(void **state)
{
    (void)state;
    trow t, other;
    trow_make(&t, "r", row_cells);
    static const char *const no_a[] = {"g:c@1=x", NULL};
    trow_make(&other, "s", no_a);
    char text[512];
    const char *all = "f:a@3=apple f:a@2=apricot f:b@5=Banana g:c@7=cherry";
    static const struct {
        const char *value, *extra;
        int pass, pass_missing;
    } cases[] = {
        {"apple", "", 1, 1},
        {"apricot", "", 0, 1},                        /* only the newest version counts */
        {"apricot", ",\"latestVersion\":false", 1, 1},
        {"apple", ",\"ifMissing\":true", 1, 0},        /* rows without f:a are dropped */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(text, sizeof text,
                 "{\"type\":\"SingleColumnValueFilter\",\"op\":\"EQUAL\",\"family\":\"%s\","
                 "\"qualifier\":\"%s\",\"comparator\":{\"type\":\"BinaryComparator\","
                 "\"value\":\"%s\"}%s}",
                 b64("f"), b64("a"), b64(cases[i].value), cases[i].extra);
        filter *f = must_parse(text);
        assert_string_equal(apply(f, &t, NULL), cases[i].pass ? all : "");
        assert_string_equal(apply(f, &other, NULL), cases[i].pass_missing ? "g:c@1=x" : "");
        filter_free(f);
    }
}

static void
filter_page_and_lists(void **state)
{
    (void)state;
    trow t;
    trow_make(&t, "r", row_cells);
    filter *f = must_parse("{\"type\":\"PageFilter\",\"value\":\"2\"}");
    int done;
    assert_string_not_equal(apply(f, &t, &done), "");
    assert_int_equal(done, 0);
    assert_string_not_equal(apply(f, &t, &done), "");
    assert_int_equal(done, 1);   /* the page is full: the scan can stop */
    assert_string_equal(apply(f, &t, &done), "");
    assert_int_equal(done, 1);
    filter_reset(f);
    assert_string_not_equal(apply(f, &t, &done), "");
    filter_free(f);
    f = must_parse("{\"type\":\"PageFilter\",\"value\":0}");
    assert_string_equal(apply(f, &t, &done), "");
    assert_int_equal(done, 1);
    filter_free(f);

    /* (value has 'an' AND family f) OR timestamp 7; then a page of one row */
    char text[1024];
    snprintf(text, sizeof text,
             "{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ALL\",\"filters\":["
             "{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ONE\",\"filters\":["
             "{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ALL\",\"filters\":["
             "{\"type\":\"ValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
             "\"SubstringComparator\",\"value\":\"an\"}},"
             "{\"type\":\"FamilyFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
             "\"BinaryComparator\",\"value\":\"%s\"}}]},"
             "{\"type\":\"TimestampsFilter\",\"timestamps\":[7]}]},"
             "{\"type\":\"PageFilter\",\"value\":1}]}",
             b64("f"));
    f = must_parse(text);
    assert_string_equal(apply(f, &t, &done), "f:b@5=Banana g:c@7=cherry");
    assert_int_equal(done, 1);
    filter_free(f);
    /* an empty list passes everything, whatever its op (as HBase's does) */
    f = must_parse("{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ONE\",\"filters\":[]}");
    assert_string_not_equal(apply(f, &t, NULL), "");
    filter_free(f);
    f = must_parse("{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ALL\",\"filters\":[]}");
    assert_string_not_equal(apply(f, &t, NULL), "");
    filter_free(f);
    /* a page inside MUST_PASS_ONE does not end the scan while another member can pass */
    f = must_parse("{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ONE\",\"filters\":["
                   "{\"type\":\"PageFilter\",\"value\":1},{\"type\":\"KeyOnlyFilter\"}]}");
    apply(f, &t, &done);
    assert_int_equal(done, 0);
    assert_string_equal(apply(f, &t, &done), "f:a@3= f:a@2= f:b@5= g:c@7=");
    filter_free(f);
}

/* A text that nests `depth` FilterLists around a KeyOnlyFilter. */
static char *
nested(int depth)
{
    static const char open[] = "{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ALL\",\"filters\":[";
    size_t cap = (size_t)depth * (sizeof open + 2) + 64;
    char *s = malloc(cap), *p = s;
    assert_non_null(s);
    for (int i = 0; i < depth; i++)
        p += sprintf(p, "%s", open);
    p += sprintf(p, "{\"type\":\"KeyOnlyFilter\"}");
    for (int i = 0; i < depth; i++)
        p += sprintf(p, "]}");
    return s;
}

static void
filter_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *text, *says;
    } cases[] = {
        {"", "not JSON"},
        {"{\"type\":\"PrefixFilter\",", "not JSON"},
        {"[]", "must be a JSON object"},
        {"{}", "needs a \"type\""},
        {"{\"type\":7}", "needs a \"type\""},
        {"{\"type\":\"NoSuchFilter\"}", "unknown filter type 'NoSuchFilter'"},
        {"{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ALL\",\"filters\":[{\"type\":\"Bogus\"}]}",
         "unknown filter type 'Bogus'"},
        {"{\"type\":\"PrefixFilter\",\"value\":\"@@@@\"}", "not valid base64"},
        {"{\"type\":\"PrefixFilter\",\"value\":\"cm93L\"}", "not valid base64"},
        {"{\"type\":\"PrefixFilter\",\"value\":5}", "must be a base64 string"},
        {"{\"type\":\"PrefixFilter\"}", "must be a base64 string"},
        {"{\"type\":\"RowFilter\",\"comparator\":{\"type\":\"BinaryComparator\",\"value\":\"\"}}",
         "\"op\" is missing"},
        {"{\"type\":\"RowFilter\",\"op\":\"ABOUT\",\"comparator\":{}}", "unknown op 'ABOUT'"},
        {"{\"type\":\"RowFilter\",\"op\":\"EQUAL\"}", "needs a \"comparator\""},
        {"{\"type\":\"RowFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":\"NullComparator\"}}",
         "unknown comparator type 'NullComparator'"},
        {"{\"type\":\"ValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
         "\"RegexStringComparator\",\"value\":\"([a-z\"}}",
         "bad regular expression '([a-z'"},
        {"{\"type\":\"ValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
         "\"RegexStringComparator\",\"value\":\"a**{3,2}\"}}",
         "bad regular expression"},
        {"{\"type\":\"ValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
         "\"RegexStringComparator\",\"value\":\"((a{99}){99}){99}\"}}",
         "repeats more than"},
        {"{\"type\":\"ValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
         "\"RegexStringComparator\",\"value\":\"a{99999999999999999999}\"}}",
         "repeats more than"},
        /* stacked pluses double the compiled tree each (found by fuzz_scanner) */
        {"{\"type\":\"ValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
         "\"RegexStringComparator\",\"value\":\"YQ==++++++++++++++++++++++++++++++++++++++++\"}}",
         "repeats more than"},
        {"{\"type\":\"ValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
         "\"RegexStringComparator\",\"value\":\"((((a{99,})+)+){99,})\"}}",
         "repeats more than"},
        {"{\"type\":\"ValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
         "\"RegexStringComparator\",\"value\":\"(a*)*\\\\1\"}}",
         "back-reference"},
        {"{\"type\":\"ValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
         "\"RegexStringComparator\",\"value\":\"a\\u0000b\"}}",
         "with NUL"},
        {"{\"type\":\"ValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
         "\"SubstringComparator\"}}",
         "needs a string \"value\""},
        {"{\"type\":\"PageFilter\",\"value\":\"-1\"}", "must be a count"},
        {"{\"type\":\"PageFilter\",\"value\":\"ten\"}", "must be a count"},
        {"{\"type\":\"PageFilter\",\"value\":1.5}", "must be a count"},
        {"{\"type\":\"ColumnCountGetFilter\"}", "must be a count"},
        {"{\"type\":\"TimestampsFilter\",\"timestamps\":[\"x\"]}", "must be integers"},
        {"{\"type\":\"TimestampsFilter\"}", "needs \"timestamps\""},
        {"{\"type\":\"MultipleColumnPrefixFilter\",\"prefixes\":[\"!\"]}", "not valid base64"},
        {"{\"type\":\"MultipleColumnPrefixFilter\"}", "needs \"prefixes\""},
        {"{\"type\":\"FilterList\",\"op\":\"MUST_PASS_SOME\",\"filters\":[]}", "MUST_PASS_ALL or"},
        {"{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ONE\"}", "needs \"filters\""},
        {"{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ONE\",\"filters\":[3]}", "JSON object"},
        {"{\"type\":\"SingleColumnValueFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
         "\"BinaryComparator\",\"value\":\"\"}}",
         "family must be"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *msg = refused(cases[i].text, strlen(cases[i].text));
        if (strstr(msg, cases[i].says) == NULL)
            fail_msg("%s: message '%s' does not say '%s'", cases[i].text, msg, cases[i].says);
    }
    /* a long regex is refused before it is compiled */
    char text[4096];
    int n = snprintf(text, sizeof text,
                     "{\"type\":\"RowFilter\",\"op\":\"EQUAL\",\"comparator\":{\"type\":"
                     "\"RegexStringComparator\",\"value\":\"");
    memset(text + n, 'a', FILTER_REGEX_MAX + 1);
    snprintf(text + n + FILTER_REGEX_MAX + 1, sizeof text - (size_t)n - FILTER_REGEX_MAX - 1,
             "\"}}");
    assert_non_null(strstr(refused(text, strlen(text)), "longer than"));
    /* nesting: FILTER_DEPTH_MAX lists parse, one more is refused by name */
    char *s = nested(FILTER_DEPTH_MAX);
    filter *f = must_parse(s);
    trow t;
    trow_make(&t, "r", row_cells);
    assert_string_equal(apply(f, &t, NULL), "f:a@3= f:a@2= f:b@5= g:c@7=");
    filter_free(f);
    free(s);
    s = nested(FILTER_DEPTH_MAX + 1);
    assert_non_null(strstr(refused(s, strlen(s)), "nested deeper than"));
    free(s);
    s = nested(JSON_DEPTH_MAX + 10);   /* deeper than the JSON parser goes */
    assert_non_null(strstr(refused(s, strlen(s)), "not JSON"));
    free(s);
    /* a wide list: FILTER_NODES_MAX filters at most */
    size_t cap = 64 + (FILTER_NODES_MAX + 1) * 32;
    s = malloc(cap);
    assert_non_null(s);
    for (int members = FILTER_NODES_MAX - 1; members <= FILTER_NODES_MAX; members++) {
        char *p = s + sprintf(s, "{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ONE\",\"filters\":[");
        for (int i = 0; i < members; i++)
            p += sprintf(p, "%s{\"type\":\"KeyOnlyFilter\"}", i ? "," : "");
        sprintf(p, "]}");
        if (members == FILTER_NODES_MAX - 1) {
            filter_free(must_parse(s));
        } else {
            assert_non_null(strstr(refused(s, strlen(s)), "more than 256 filters"));
        }
    }
    free(s);
    /* JSON values that are not what a field wants, from a parsed document */
    json_doc *d;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(json_parse("null", 4, &d, &err), KILN_OK);
    f = (filter *)1;
    assert_int_equal(filter_from_json(json_root(d), &f, &err), KILN_INVALID);
    assert_null(f);
    json_doc_free(d);
    filter_free(NULL);
    filter_reset(NULL);
}

static uint64_t
filter_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Every prefix of valid texts, and random byte flips: a filter or a clean
 * KILN_INVALID with a message; an accepted filter must evaluate. */
static void
filter_mutations_never_crash(void **state)
{
    (void)state;
    char list[1024];
    snprintf(list, sizeof list,
             "{\"type\":\"FilterList\",\"op\":\"MUST_PASS_ONE\",\"filters\":["
             "{\"type\":\"SingleColumnValueFilter\",\"op\":\"EQUAL\",\"family\":\"%s\","
             "\"qualifier\":\"%s\",\"comparator\":{\"type\":\"RegexStringComparator\","
             "\"value\":\"^a.{1,3}e$\"},\"ifMissing\":true},"
             "{\"type\":\"MultipleColumnPrefixFilter\",\"prefixes\":[\"%s\",\"\"]},"
             "{\"type\":\"TimestampsFilter\",\"timestamps\":[1,2,3]},"
             "{\"type\":\"PageFilter\",\"value\":\"4\"}]}",
             b64("f"), b64("a"), b64("b"));
    const char *texts[] = {list, "{\"type\":\"ValueFilter\",\"op\":\"NOT_EQUAL\","
                                 "\"comparator\":{\"type\":\"SubstringComparator\",\"value\":\"x\"}}"};
    trow t;
    trow_make(&t, "row", row_cells);
    uint64_t rs = filter_seed;
    size_t accepted = 0, refusals = 0;
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        size_t n = strlen(texts[k]);
        char *m = malloc(n);
        assert_non_null(m);
        for (size_t round = 0; round <= n + 2000; round++) {
            size_t len = n;
            memcpy(m, texts[k], n);
            if (round <= n) {
                len = round;                  /* truncated */
            } else {
                int flips = 1 + (int)(filter_rand(&rs) % 4);
                for (int i = 0; i < flips; i++)
                    m[filter_rand(&rs) % n] = (char)filter_rand(&rs);
            }
            filter *f = NULL;
            kiln_err err;
            status_clear(&err);
            kiln_status st = filter_parse(m, len, &f, &err);
            if (st == KILN_OK) {
                accepted++;
                assert_non_null(f);
                apply(f, &t, NULL);
                filter_free(f);
            } else {
                refusals++;
                assert_int_equal(st, KILN_INVALID);
                assert_null(f);
                assert_true(strlen(err.msg) > 8);
            }
        }
        free(m);
    }
    assert_true(refusals > 0);
    assert_true(accepted > 0);   /* the full texts at least */
}

int
main(void)
{
    const char *env = getenv("KILN_TEST_SEED");
    filter_seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
    printf("seed=%u\n", filter_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(filter_row_filters),
        cmocka_unit_test(filter_cell_filters),
        cmocka_unit_test(filter_single_column_value),
        cmocka_unit_test(filter_page_and_lists),
        cmocka_unit_test(filter_refusals),
        cmocka_unit_test(filter_mutations_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
