/* test_mr_counters.c -- counters (Hadoop display names and console layout,
 * job counters, merge by sum and max, JSON with escaping) and the -D
 * settings they sit beside (parsing, typed getters, last setting wins,
 * unused-key tracking). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapreduce/mr_conf.h"
#include "mapreduce/mr_counters.h"
#include "storage/base/buf.h"

static void
counters_names_and_print(void **state)
{
    (void)state;
    mr_counters c;
    mr_counters_init(&c);
    int bad = mr_counters_register(&c, "ImportTsv", "Bad Lines", MR_COUNTER_SUM);
    assert_int_equal(bad, MR_C_BUILTIN_COUNT);
    assert_int_equal(mr_counters_register(&c, "ImportTsv", "Bad Lines", MR_COUNTER_SUM), bad);
    assert_int_equal(mr_counters_find(&c, "Map-Reduce Framework", "Spilled Records"),
                     MR_C_SPILLED_RECORDS);
    assert_int_equal(mr_counters_find(&c, "Map-Reduce Framework", "Combine input records"),
                     MR_C_COMBINE_INPUT_RECORDS);
    assert_int_equal(mr_counters_find(&c, "Map-Reduce Framework", "Reduce input groups"),
                     MR_C_REDUCE_INPUT_GROUPS);
    assert_int_equal(mr_counters_find(&c, "File System Counters", "FILE: Number of bytes read"),
                     MR_C_FILE_BYTES_READ);
    assert_int_equal(mr_counters_find(&c, "nope", "nope"), -1);
    mr_counters_add(&c, MR_C_MAP_INPUT_RECORDS, 10);
    mr_counters_add(&c, bad, 3);
    mr_counters_add(&c, MR_C_PEAK_RSS, 100);

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    mr_counters_print(&c, f);
    fclose(f);
    char head[32];
    snprintf(head, sizeof head, "Counters: %zu\n", c.n);
    assert_int_equal(strncmp(text, head, strlen(head)), 0);
    assert_non_null(strstr(text, "\tMap-Reduce Framework\n\t\tMap input records=10\n"));
    assert_non_null(strstr(text, "\tImportTsv\n\t\tBad Lines=3\n"));
    /* Built-in groups come before the job's. */
    assert_true(strstr(text, "File System Counters") < strstr(text, "ImportTsv"));
    free(text);

    /* Merge: sums add, maxima take the larger. */
    uint64_t *other = calloc(c.n, sizeof *other);
    other[MR_C_MAP_INPUT_RECORDS] = 5;
    other[MR_C_PEAK_RSS] = 50;
    other[bad] = 1;
    mr_counters_merge(&c, other);
    assert_int_equal(c.v[MR_C_MAP_INPUT_RECORDS], 15);
    assert_int_equal(c.v[MR_C_PEAK_RSS], 100);
    other[MR_C_PEAK_RSS] = 500;
    mr_counters_merge(&c, other);
    assert_int_equal(c.v[MR_C_PEAK_RSS], 500);
    assert_int_equal(c.v[bad], 5);
    free(other);

    kbuf j = KBUF_INIT;
    mr_counters_json(&c, &j);
    buf_append_u8(&j, 0);
    assert_non_null(strstr((char *)j.data, "\"Map input records\":20"));
    assert_non_null(strstr((char *)j.data, "\"ImportTsv\":{\"Bad Lines\":5}"));
    assert_int_equal(j.data[0], '{');
    assert_int_equal(j.data[j.len - 2], '}');
    buf_free(&j);

    kbuf s = KBUF_INIT;
    mr_counters_json_string(&s, "a\"b\\c\n\x01\xff", 8);
    assert_int_equal(s.len, strlen("\"a\\\"b\\\\c\\n\\u0001\\u00ff\""));
    assert_memory_equal(s.data, "\"a\\\"b\\\\c\\n\\u0001\\u00ff\"", s.len);
    buf_free(&s);
    mr_counters_free(&c);
}

static void
conf_settings(void **state)
{
    (void)state;
    mr_conf *c = mr_conf_new();
    kiln_err err;
    status_clear(&err);
    assert_int_equal(mr_conf_parse(c, "kiln.sort.mb=16", &err), KILN_OK);
    assert_int_equal(mr_conf_parse(c, "importtsv.separator=,", &err), KILN_OK);
    assert_int_equal(mr_conf_parse(c, "empty=", &err), KILN_OK);
    assert_int_equal(mr_conf_parse(c, "a=b=c", &err), KILN_OK);
    assert_int_equal(mr_conf_parse(c, "novalue", &err), KILN_INVALID);
    status_clear(&err);
    assert_int_equal(mr_conf_parse(c, "=x", &err), KILN_INVALID);
    status_clear(&err);
    assert_int_equal(mr_conf_parse(c, "kiln.sort.mb=32", &err), KILN_OK);   /* last wins */
    int64_t n;
    double d;
    int b;
    assert_int_equal(mr_conf_get_long(c, "kiln.sort.mb", 1, &n, &err), KILN_OK);
    assert_int_equal(n, 32);
    assert_int_equal(mr_conf_get_long(c, "missing", 7, &n, &err), KILN_OK);
    assert_int_equal(n, 7);
    assert_string_equal(mr_conf_get(c, "a", NULL), "b=c");
    assert_string_equal(mr_conf_get(c, "empty", "x"), "");
    assert_int_equal(mr_conf_get_long(c, "importtsv.separator", 0, &n, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "importtsv.separator"));
    status_clear(&err);
    mr_conf_set(c, "f", "0.25");
    assert_int_equal(mr_conf_get_double(c, "f", 1, &d, &err), KILN_OK);
    assert_true(d == 0.25);
    mr_conf_set(c, "t", "Yes");
    assert_int_equal(mr_conf_get_bool(c, "t", 0, &b, &err), KILN_OK);
    assert_int_equal(b, 1);
    mr_conf_set(c, "t", "off");
    assert_int_equal(mr_conf_get_bool(c, "t", 1, &b, &err), KILN_OK);
    assert_int_equal(b, 0);
    mr_conf_set(c, "t", "maybe");
    assert_int_equal(mr_conf_get_bool(c, "t", 1, &b, &err), KILN_INVALID);
    /* Unused keys are reported as such. */
    const char *k, *v;
    int used, unused = 0;
    for (size_t i = 0; mr_conf_entry(c, i, &k, &v, &used); i++)
        if (!used) {
            unused++;
            assert_false(strcmp(k, "kiln.sort.mb") == 0);
        }
    assert_int_equal(unused, 0);
    mr_conf_set(c, "never.read", "1");
    unused = 0;
    for (size_t i = 0; mr_conf_entry(c, i, &k, &v, &used); i++)
        unused += !used;
    assert_int_equal(unused, 1);
    mr_conf_free(c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counters_names_and_print),
        cmocka_unit_test(conf_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
