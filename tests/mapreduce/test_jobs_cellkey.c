/* test_jobs_cellkey.c -- the order-preserving cell key encoding of jobs/:
 * byte order of encodings equals HBase's cell order (cell_compare) on random
 * cells with binary and empty fields, negative and extreme timestamps and
 * every type; decoding returns the cell; row bounds sort before every key of
 * their row and after every key of smaller rows; malformed input is a clean
 * error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobs/cellkey.h"
#include "storage/base/buf.h"
#include "storage/hfile/cell.h"

static uint64_t rng_state;

static uint64_t
rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

typedef struct cellbuf {
    uint8_t row[6], fam[3], qual[4];
    kiln_cell c;
} cellbuf;

static void
random_cell(cellbuf *b)
{
    static const uint8_t types[] = {CELL_TYPE_PUT, CELL_TYPE_DELETE, CELL_TYPE_DELETE_COLUMN,
                                    CELL_TYPE_DELETE_FAMILY, CELL_TYPE_DELETE_FAMILY_VERSION};
    static const int64_t ts[] = {0, 1, -1, INT64_MAX, INT64_MIN, 1700000000000LL, 42};
    memset(&b->c, 0, sizeof b->c);
    size_t rl = 1 + rnd() % 5, fl = 1 + rnd() % 2, ql = rnd() % 4;
    for (size_t i = 0; i < rl; i++)
        b->row[i] = (uint8_t)(rnd() % 3 == 0 ? 0 : (rnd() % 2 ? 0xff : 'a' + rnd() % 3));
    for (size_t i = 0; i < fl; i++)
        b->fam[i] = (uint8_t)('f' + rnd() % 2);
    for (size_t i = 0; i < ql; i++)
        b->qual[i] = (uint8_t)(rnd() % 4 == 0 ? 0 : 'q' + rnd() % 2);
    b->c.row = b->row;
    b->c.row_len = (uint32_t)rl;
    b->c.family = b->fam;
    b->c.family_len = (uint32_t)fl;
    b->c.qualifier = b->qual;
    b->c.qualifier_len = (uint32_t)ql;
    b->c.ts = ts[rnd() % 7];
    b->c.type = types[rnd() % 5];
}

static int
sign(int x)
{
    return (x > 0) - (x < 0);
}

static void
order_matches_hbase(void **state)
{
    (void)state;
    kbuf ea = KBUF_INIT, eb = KBUF_INIT, scratch = KBUF_INIT;
    for (int i = 0; i < 200000; i++) {
        cellbuf a, b;
        random_cell(&a);
        random_cell(&b);
        if (rnd() % 3 == 0) {
            /* Same column, a neighbouring timestamp (wrapping) and type. */
            b = a;
            b.c.row = b.row;
            b.c.family = b.fam;
            b.c.qualifier = b.qual;
            b.c.ts = (int64_t)((uint64_t)a.c.ts + rnd() % 3 - 1);
            b.c.type = (uint8_t)(rnd() % 2 ? CELL_TYPE_PUT : CELL_TYPE_DELETE);
        }
        buf_reset(&ea);
        buf_reset(&eb);
        cellkey_append(&ea, &a.c);
        cellkey_append(&eb, &b.c);
        int want = sign(cell_compare(&a.c, &b.c));
        int got = sign(kslice_cmp(buf_slice(&ea), buf_slice(&eb)));
        assert_int_equal(got, want);

        kiln_cell d;
        memset(&d, 0, sizeof d);
        kiln_err err;
        status_clear(&err);
        assert_int_equal(cellkey_decode(buf_slice(&ea), &scratch, &d, &err), KILN_OK);
        assert_int_equal(cell_compare(&d, &a.c), 0);
        assert_true(d.ts == a.c.ts);
        assert_int_equal(d.type, a.c.type);

        /* Row bounds: below every key of the row, above every smaller row. */
        kbuf bound = KBUF_INIT;
        cellkey_append_row(&bound, b.c.row, b.c.row_len);
        int rows = kslice_cmp(kslice_make(a.c.row, a.c.row_len), kslice_make(b.c.row, b.c.row_len));
        int vs = kslice_cmp(buf_slice(&ea), buf_slice(&bound));
        assert_true(rows < 0 ? vs < 0 : vs > 0);
        buf_free(&bound);
    }
    buf_free(&ea);
    buf_free(&eb);
    buf_free(&scratch);
}

static void
malformed(void **state)
{
    (void)state;
    static const struct {
        const char *p;
        size_t n;
    } bad[] = {
        {"", 0},
        {"abc", 3},
        {"a\0\0f\0\0q\0\0", 9},                      /* no timestamp and type */
        {"a\0\x01" "f\0\0q\0\0" "12345678t", 18},     /* bad escape */
        {"a\0\0f\0\0q\0\0" "123456789x", 19},         /* one byte too many */
    };
    kbuf scratch = KBUF_INIT;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kiln_cell c;
        kiln_err err;
        status_clear(&err);
        assert_int_equal(cellkey_decode(kslice_make(bad[i].p, bad[i].n), &scratch, &c, &err),
                         KILN_CORRUPTION);
    }
    kiln_cell c;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(cellkey_decode(kslice_make("a\0\0f\0\0q\0\0" "12345678t", 18), &scratch, &c,
                                    &err),
                     KILN_OK);
    buf_free(&scratch);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_jobs_cellkey: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(order_matches_hbase),
        cmocka_unit_test(malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
