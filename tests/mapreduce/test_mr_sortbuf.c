/* test_mr_sortbuf.c -- the map output buffer: sort order equals a reference
 * sort of (partition, key, value); hashed mode folds equal keys (fixed-size
 * and growing values) and equals a reference count; the buffer refuses
 * records past its budget (FULL, TOO_BIG) and never uses more than it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapreduce/mr_partition.h"
#include "mapreduce/mr_sortbuf.h"
#include "storage/base/buf.h"
#include "storage/base/coding.h"

static uint64_t rng_state;

static uint64_t
rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

typedef struct rec {
    uint32_t part;
    uint8_t key[16];
    size_t klen;
    uint8_t value[8];
    size_t vlen;
} rec;

static int
rec_cmp(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->part != y->part)
        return x->part < y->part ? -1 : 1;
    int c = kslice_cmp(kslice_make(x->key, x->klen), kslice_make(y->key, y->klen));
    return c ? c : kslice_cmp(kslice_make(x->value, x->vlen), kslice_make(y->value, y->vlen));
}

static void
random_rec(rec *r, int small_alphabet)
{
    r->part = (uint32_t)(rnd() % 5);
    r->klen = rnd() % 13;
    for (size_t i = 0; i < r->klen; i++)
        r->key[i] = small_alphabet ? (uint8_t)(rnd() % 3) : (uint8_t)rnd();
    r->vlen = rnd() % 9;
    for (size_t i = 0; i < r->vlen; i++)
        r->value[i] = (uint8_t)(rnd() % 4);
}

static void
sort_order(void **state)
{
    (void)state;
    for (int round = 0; round < 20; round++) {
        size_t budget = 64 * 1024 + rnd() % (512 * 1024);
        mr_sortbuf *sb = mr_sortbuf_new(budget, 0);
        size_t cap = 100000;
        rec *v = calloc(cap, sizeof *v);
        size_t n = 0;
        for (;;) {
            rec r;
            random_rec(&r, round % 2);
            mr_sortbuf_result res = mr_sortbuf_add(sb, r.part, 0, kslice_make(r.key, r.klen),
                                                   kslice_make(r.value, r.vlen), NULL, NULL);
            if (res == MR_SORTBUF_FULL)
                break;
            assert_int_equal(res, MR_SORTBUF_ADDED);
            assert_true(n < cap);
            v[n++] = r;
            assert_true(mr_sortbuf_used(sb) <= budget);
        }
        assert_int_equal(mr_sortbuf_count(sb), n);
        mr_sortbuf_sort(sb);
        qsort(v, n, sizeof *v, rec_cmp);
        for (size_t i = 0; i < n; i++) {
            uint32_t part;
            kslice k, val;
            mr_sortbuf_get(sb, i, &part, &k, &val);
            assert_int_equal(part, v[i].part);
            assert_true(kslice_eq(k, kslice_make(v[i].key, v[i].klen)));
            assert_true(kslice_eq(val, kslice_make(v[i].value, v[i].vlen)));
        }
        mr_sortbuf_reset(sb);
        assert_int_equal(mr_sortbuf_count(sb), 0);
        free(v);
        mr_sortbuf_free(sb);
    }
}

static void
fold_sum(void *arg, kslice key, kslice acc, kslice val, kbuf *out)
{
    (void)arg;
    (void)key;
    buf_append_be64(out, coding_get_be64(acc.p) + coding_get_be64(val.p));
}

/* Values grow: the fold concatenates (the record moves to the end). */
static void
fold_concat(void *arg, kslice key, kslice acc, kslice val, kbuf *out)
{
    (void)arg;
    (void)key;
    buf_append(out, acc.p, acc.n);
    buf_append(out, val.p, val.n);
}

static void
hashed_fold(void **state)
{
    (void)state;
    enum { KEYS = 3000 };
    uint64_t *want = calloc(KEYS, sizeof *want);
    uint64_t *got = calloc(KEYS, sizeof *got);
    mr_sortbuf *sb = mr_sortbuf_new(64 * 1024, 1);
    uint64_t adds = 0, folds = 0, spilled_entries = 0, spills = 0;
    uint8_t one[8] = {0, 0, 0, 0, 0, 0, 0, 1};
    for (int i = 0; i < 200000; i++) {
        /* Zipf-ish: small numbers often. (Two statements: the order of two
         * calls in one expression is unspecified, and the seed must replay.) */
        uint64_t range = 1 + rnd() % KEYS;
        uint32_t k = (uint32_t)(rnd() % range);
        char key[16];
        int kl = snprintf(key, sizeof key, "w%u", k);
        kslice ks = kslice_make(key, (size_t)kl);
        uint64_t h = mr_partition_hash(key, (size_t)kl);
        mr_sortbuf_result r = mr_sortbuf_add(sb, 0, h, ks, kslice_make(one, 8), fold_sum, NULL);
        if (r == MR_SORTBUF_FULL) {
            /* "Spill": sort, collect the entries, reset, retry. */
            assert_true(mr_sortbuf_used(sb) <= 64 * 1024);
            mr_sortbuf_sort(sb);
            spills++;
            for (size_t e = 0; e < mr_sortbuf_count(sb); e++) {
                uint32_t part;
                kslice kk, vv;
                mr_sortbuf_get(sb, e, &part, &kk, &vv);
                char tmp[16] = {0};
                memcpy(tmp, kk.p + 1, kk.n - 1);
                got[strtoul(tmp, NULL, 10)] += coding_get_be64(vv.p);
            }
            spilled_entries += mr_sortbuf_count(sb);
            mr_sortbuf_reset(sb);
            r = mr_sortbuf_add(sb, 0, h, ks, kslice_make(one, 8), fold_sum, NULL);
        }
        assert_true(r == MR_SORTBUF_ADDED || r == MR_SORTBUF_FOLDED);
        adds += r == MR_SORTBUF_ADDED;
        folds += r == MR_SORTBUF_FOLDED;
        want[k]++;
    }
    mr_sortbuf_sort(sb);
    kslice prev = {NULL, 0};
    kbuf prevbuf = KBUF_INIT;
    for (size_t e = 0; e < mr_sortbuf_count(sb); e++) {
        uint32_t part;
        kslice kk, vv;
        mr_sortbuf_get(sb, e, &part, &kk, &vv);
        if (e > 0)
            assert_true(kslice_cmp(prev, kk) < 0);  /* each key once, in order */
        buf_reset(&prevbuf);
        buf_append(&prevbuf, kk.p, kk.n);
        prev = buf_slice(&prevbuf);
        char tmp[16] = {0};
        memcpy(tmp, kk.p + 1, kk.n - 1);
        got[strtoul(tmp, NULL, 10)] += coding_get_be64(vv.p);
    }
    assert_true(folds > 0);
    assert_true(spills >= 2);
    assert_int_equal(adds, spilled_entries + mr_sortbuf_count(sb));
    for (int k = 0; k < KEYS; k++)
        assert_int_equal(got[k], want[k]);
    buf_free(&prevbuf);
    mr_sortbuf_free(sb);

    /* Growing values: the concatenation of all values of a key survives. */
    sb = mr_sortbuf_new(64 * 1024, 1);
    size_t total = 0;
    for (int i = 0; i < 300; i++) {
        uint8_t b = (uint8_t)i;
        const char *key = i % 2 ? "odd" : "even";
        mr_sortbuf_result r = mr_sortbuf_add(sb, 0, mr_partition_hash(key, strlen(key)),
                                             kslice_str(key), kslice_make(&b, 1), fold_concat, NULL);
        assert_true(r == MR_SORTBUF_ADDED || r == MR_SORTBUF_FOLDED);
        total++;
    }
    mr_sortbuf_sort(sb);
    assert_int_equal(mr_sortbuf_count(sb), 2);
    uint32_t part;
    kslice kk, vv;
    mr_sortbuf_get(sb, 0, &part, &kk, &vv);
    assert_true(kslice_eq(kk, kslice_str("even")));
    assert_int_equal(vv.n, 150);
    for (size_t i = 0; i < vv.n; i++)
        assert_int_equal(vv.p[i], (uint8_t)(2 * i));
    mr_sortbuf_free(sb);
    free(want);
    free(got);
}

static void
budget_limits(void **state)
{
    (void)state;
    mr_sortbuf *sb = mr_sortbuf_new(1000, 0);   /* raised to the minimum */
    uint8_t *big = calloc(1, 2 * MR_SORTBUF_MIN);
    assert_int_equal(mr_sortbuf_add(sb, 0, 0, kslice_str("k"), kslice_make(big, 2 * MR_SORTBUF_MIN),
                                    NULL, NULL),
                     MR_SORTBUF_TOO_BIG);
    assert_int_equal(mr_sortbuf_add(sb, 0, 0, kslice_str("k"), kslice_make(big, 1000), NULL, NULL),
                     MR_SORTBUF_ADDED);
    assert_int_equal(mr_sortbuf_add(sb, 0, 0, kslice_str("k"),
                                    kslice_make(big, MR_SORTBUF_MIN - 1000), NULL, NULL),
                     MR_SORTBUF_FULL);
    assert_int_equal(mr_sortbuf_count(sb), 1);
    assert_true(mr_sortbuf_used(sb) <= MR_SORTBUF_MIN);
    free(big);
    mr_sortbuf_free(sb);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_mr_sortbuf: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sort_order),
        cmocka_unit_test(hashed_fold),
        cmocka_unit_test(budget_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
