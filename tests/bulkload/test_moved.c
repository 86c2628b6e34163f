/* test_moved.c -- the JOB/_MOVED record (bulkload/moved.h): its text round
 * trips; every truncation, every flipped bit, extra bytes and each field
 * written wrong are refused naming the file and the line; names the format
 * cannot hold are not written. The expected text is spelled out here and
 * its checksum computed by a bitwise CRC32C of the test's own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "bulkload/moved.h"

#define PATH "job/_MOVED"

/* CRC32C (Castagnoli, reflected 0x82F63B78), one bit at a time. */
static uint32_t
crc32c_bitwise(const char *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= (uint8_t)p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    }
    return ~c;
}

/* The record's text as the format describes it. */
static size_t
spell(char *out, size_t cap, const char *table, const char *version, const char *fp)
{
    int n = snprintf(out, cap, "kiln-moved 1\ntable %s\nversion %s\nfingerprint %s\n", table,
                     version, fp);
    n += snprintf(out + n, cap - (size_t)n, "crc32c %08x\n",
                  (unsigned)crc32c_bitwise(out, (size_t)n));
    return (size_t)n;
}

static void
expect_refused(const char *text, size_t n, const char *what)
{
    moved_record r;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(moved_record_parse(PATH, (const uint8_t *)text, n, &r, &err),
                     KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, PATH));
    if (what != NULL && strstr(err.msg, what) == NULL)
        fail_msg("error '%s' does not say '%s'", err.msg, what);
}

static void
round_trip(void **state)
{
    (void)state;
    moved_record r = {.table = "default:web_pages", .version = 42,
                      .fingerprint = 0x0123456789abcdefull};
    char text[MOVED_RECORD_MAX + 1], want[512];
    size_t n = moved_record_format(&r, text, sizeof text);
    size_t wn = spell(want, sizeof want, "default:web_pages", "42", "0123456789abcdef");
    assert_int_equal(n, wn);
    assert_memory_equal(text, want, n);

    moved_record got;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(moved_record_parse(PATH, (const uint8_t *)text, n, &got, &err), KILN_OK);
    assert_string_equal(got.table, r.table);
    assert_int_equal(got.version, 42);
    assert_int_equal(got.fingerprint, r.fingerprint);

    /* The largest version and the longest name fit. */
    memset(r.table, 'n', SCHEMA_NAME_MAX);
    r.table[SCHEMA_NAME_MAX] = '\0';
    r.version = UINT64_MAX;
    n = moved_record_format(&r, text, sizeof text);
    assert_true(n > 0 && n <= MOVED_RECORD_MAX);
    assert_int_equal(moved_record_parse(PATH, (const uint8_t *)text, n, &got, &err), KILN_OK);
    assert_int_equal(got.version, UINT64_MAX);
    assert_int_equal(strlen(got.table), SCHEMA_NAME_MAX);
}

static void
damage_refused(void **state)
{
    (void)state;
    char text[512];
    size_t n = spell(text, sizeof text, "default:t", "7", "00000000000000ff");
    /* Cut short at every length, the empty file included. */
    for (size_t k = 0; k < n; k++)
        expect_refused(text, k, NULL);
    /* Every single flipped bit. */
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++) {
            char copy[512];
            memcpy(copy, text, n);
            copy[i] ^= (char)(1 << b);
            expect_refused(copy, n, NULL);
        }
    /* Anything after the last line. */
    char more[520];
    memcpy(more, text, n);
    memcpy(more + n, "x\n", 2);
    expect_refused(more, n + 2, "after the record");
    /* A changed field with the old checksum: the checksum says so. */
    char edit[512];
    memcpy(edit, text, n);
    *strstr(edit, "version 7") = 'V';
    expect_refused(edit, n, "line 3");
    memcpy(edit, text, n);
    strstr(edit, "version 7")[8] = '8';
    expect_refused(edit, n, "checksum mismatch");
}

static void
fields_refused(void **state)
{
    (void)state;
    static const struct {
        const char *table, *version, *fp, *what;
    } bad[] = {
        {"", "7", "00000000000000ff", "line 2"},                    /* no name */
        {"default:a b", "7", "00000000000000ff", "line 2"},         /* a space */
        {"default:t", "0", "00000000000000ff", "line 3"},           /* version 0 */
        {"default:t", "07", "00000000000000ff", "line 3"},          /* leading zero */
        {"default:t", "+7", "00000000000000ff", "line 3"},
        {"default:t", "18446744073709551616", "00000000000000ff", "line 3"}, /* 2^64 */
        {"default:t", "7", "ff", "line 4"},                         /* short */
        {"default:t", "7", "00000000000000FF", "line 4"},           /* upper case */
        {"default:t", "7", "00000000000000fg", "line 4"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        size_t n = spell(text, sizeof text, bad[i].table, bad[i].version, bad[i].fp);
        expect_refused(text, n, bad[i].what);
    }
    /* Another magic line, and a checksum in capitals. */
    char text[512];
    size_t n = spell(text, sizeof text, "default:t", "7", "00000000000000ff");
    text[11] = '2';
    expect_refused(text, n, "line 1");
    n = spell(text, sizeof text, "default:t", "7", "00000000000000ff");
    char *c = strstr(text, "crc32c ") + 7;
    for (; *c != '\n'; c++)
        if (*c >= 'a' && *c <= 'f')
            *c = (char)(*c - 'a' + 'A');
    expect_refused(text, n, NULL);
}

static void
unwritable_names(void **state)
{
    (void)state;
    char text[MOVED_RECORD_MAX + 1];
    moved_record r = {.table = "", .version = 1};
    assert_int_equal(moved_record_format(&r, text, sizeof text), 0);
    snprintf(r.table, sizeof r.table, "default:a b");
    assert_int_equal(moved_record_format(&r, text, sizeof text), 0);
    snprintf(r.table, sizeof r.table, "default:t");
    r.version = 0;
    assert_int_equal(moved_record_format(&r, text, sizeof text), 0);
    r.version = 1;
    assert_int_equal(moved_record_format(&r, text, 20), 0);   /* no room */
    assert_true(moved_record_format(&r, text, sizeof text) > 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(damage_refused),
        cmocka_unit_test(fields_refused),
        cmocka_unit_test(unwritable_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
