/* test_mr_partition.c -- the key hash (pinned values: it decides which part
 * file a key lands in, so it must never change silently; spread over
 * partitions), the hash and total-order partitioners (boundaries, empty key,
 * invalid split keys rejected), picking split keys from samples, and the
 * sum cache's short keys (mr_sumkey: the same hash, the key's bytes back). */
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
#include "mapreduce/mr_sumkey.h"
#include "storage/base/buf.h"

static uint64_t rng_state;

static uint64_t
rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* mr_sumkey at every length 0-15, over random bytes and bytes of all-zero
 * and all-one bits: its hash is mr_partition_hash's, and the words hold the
 * key's bytes zero-padded with its length in the top byte. */
static void
sumkey_words_and_hash(void **state)
{
    (void)state;
    rng_state = 5;
    for (size_t n = 0; n <= MR_SUMKEY_MAX; n++) {
        for (int round = 0; round < 3000; round++) {
            uint8_t buf[64], key[16] = {0}, back[16];
            for (size_t i = 0; i < sizeof buf; i++)
                buf[i] = round == 0 ? 0 : round == 1 ? 0xFF : (uint8_t)rnd();
            const uint8_t *p = buf + 16 + rnd() % 16;   /* bytes around it differ */
            memcpy(key, p, n);
            uint64_t k0, k1;
            assert_int_equal(mr_sumkey(p, n, &k0, &k1), mr_partition_hash(p, n));
            assert_int_equal(k1 >> 56, n);
            k1 &= ~(0xFFull << 56);
            memcpy(back, &k0, 8);
            memcpy(back + 8, &k1, 8);
            assert_memory_equal(back, key, 16);
        }
    }
}

static void
hash_pinned(void **state)
{
    (void)state;
    static const struct {
        const char *key;
        uint64_t hash;
    } cases[] = {
        {"", 0xd8a310150df90781ull},
        {"a", 0x93c416dbb7f156c6ull},
        {"hello", 0xa165f837566226ddull},
        {"0123456789abcdef", 0xf0c13a3a663d796dull},
        {"the quick brown fox", 0xcb1426b2c998386cull},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_true(mr_partition_hash(cases[i].key, strlen(cases[i].key)) == cases[i].hash);
    /* The hash reads only its n bytes. */
    char a[32] = "abcdefghijklmnopq", b[32] = "abcdefghijklmnopZ";
    for (size_t n = 0; n < 16; n++)
        assert_true(mr_partition_hash(a, n) == mr_partition_hash(b, n));
    assert_true(mr_partition_hash(a, 17) != mr_partition_hash(b, 17));
}

static void
hash_partitioner_spread(void **state)
{
    (void)state;
    for (uint32_t parts = 1; parts <= 17; parts += 4) {
        mr_partitioner *p = mr_partitioner_new_hash(parts);
        assert_int_equal(mr_partitioner_count(p), parts);
        assert_false(mr_partitioner_is_total(p));
        uint64_t count[17] = {0};
        const int n = 170000;
        for (int i = 0; i < n; i++) {
            char key[24];
            int len = snprintf(key, sizeof key, "word%d", i);
            kslice k = kslice_make(key, (size_t)len);
            uint32_t q = mr_partitioner_get(p, k, mr_partition_hash(key, (size_t)len));
            assert_true(q < parts);
            count[q]++;
        }
        for (uint32_t q = 0; q < parts; q++) {
            double expect = (double)n / parts;
            assert_true(count[q] > expect * 0.95 && count[q] < expect * 1.05);
        }
        mr_partitioner_free(p);
    }
}

static void
total_order(void **state)
{
    (void)state;
    kslice splits[3] = {kslice_str("b"), kslice_str("d"), kslice_make("d\0", 2)};
    mr_partitioner *p;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(mr_partitioner_new_total(splits, 3, 4, NULL, &p, &err), KILN_OK);
    assert_true(mr_partitioner_is_total(p));
    static const struct {
        const char *key;
        size_t n;
        uint32_t part;
    } cases[] = {
        {"", 0, 0},  {"a", 1, 0},   {"azzz", 4, 0}, {"b", 1, 1},   {"b\0", 2, 1},
        {"c", 1, 1}, {"d", 1, 2},   {"d\0", 2, 3},  {"d\0\0", 3, 3}, {"e", 1, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(mr_partitioner_get(p, kslice_make(cases[i].key, cases[i].n), 0),
                         cases[i].part);
    const kslice *got;
    assert_int_equal(mr_partitioner_splits(p, &got), 3);
    assert_true(kslice_eq(got[2], splits[2]));
    mr_partitioner_free(p);

    /* Fewer split keys than partitions - 1 is fine; the rest stay empty. */
    assert_int_equal(mr_partitioner_new_total(splits, 1, 8, NULL, &p, &err), KILN_OK);
    assert_int_equal(mr_partitioner_get(p, kslice_str("z"), 0), 1);
    mr_partitioner_free(p);

    kslice unsorted[2] = {kslice_str("b"), kslice_str("a")};
    kslice dup[2] = {kslice_str("a"), kslice_str("a")};
    kslice empty[1] = {kslice_str("")};
    assert_int_equal(mr_partitioner_new_total(unsorted, 2, 3, NULL, &p, &err), KILN_INVALID);
    status_clear(&err);
    assert_int_equal(mr_partitioner_new_total(dup, 2, 3, NULL, &p, &err), KILN_INVALID);
    status_clear(&err);
    assert_int_equal(mr_partitioner_new_total(empty, 1, 2, NULL, &p, &err), KILN_INVALID);
    status_clear(&err);
    assert_int_equal(mr_partitioner_new_total(splits, 3, 3, NULL, &p, &err), KILN_INVALID);
}

static void
pick_splits(void **state)
{
    (void)state;
    enum { N = 10000 };
    char (*keys)[8] = calloc(N, 8);
    kslice *s = calloc(N, sizeof *s);
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], 8, "%05d", (int)(rnd() % 100000));
        s[i] = kslice_make(keys[i], 5);
    }
    kslice out[10];
    size_t k = mr_partition_pick_splits(s, N, 10, NULL, out);
    assert_int_equal(k, 9);
    for (size_t i = 0; i < k; i++) {
        if (i > 0)
            assert_true(kslice_cmp(out[i - 1], out[i]) < 0);
        /* Quantile i+1 of a uniform sample of 0..99999: near (i+1)*10000. */
        long v = strtol((const char *)out[i].p, NULL, 10);
        assert_true(labs(v - (long)(i + 1) * 10000) < 2500);
    }
    /* Mostly equal samples give fewer, distinct keys. */
    for (int i = 0; i < N; i++)
        s[i] = kslice_str(i % 100 == 0 ? "b" : "a");
    k = mr_partition_pick_splits(s, N, 10, NULL, out);
    assert_int_equal(k, 1);
    assert_true(kslice_eq(out[0], kslice_str("a")));
    assert_int_equal(mr_partition_pick_splits(s, 0, 10, NULL, out), 0);
    assert_int_equal(mr_partition_pick_splits(s, N, 1, NULL, out), 0);
    free(keys);
    free(s);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_mr_partition: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hash_pinned),
        cmocka_unit_test(sumkey_words_and_hash),
        cmocka_unit_test(hash_partitioner_spread),
        cmocka_unit_test(total_order),
        cmocka_unit_test(pick_splits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
