/* test_mr_order.c -- a job's key functions inside the engine's modules: the
 * sort buffer under a numeric and a reversed numeric comparator (plain and
 * hashed), spilled runs merged k-way under a comparator with coarser groups
 * (every value's own key named), total order with split keys increasing
 * under a comparator (keys it calls equal share a partition; sampled split
 * keys), a custom partitioner (its answers passed on, an answer out of range
 * an error naming key and value), and the collector through many spills and
 * merge passes with a comparator, a custom partitioner and a combiner or a
 * fold. The reference is the test's own: qsort with a comparison written
 * here, and sums kept per key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapreduce/mr_collector.h"
#include "mapreduce/mr_merge.h"
#include "mapreduce/mr_order.h"
#include "mapreduce/mr_partition.h"
#include "mapreduce/mr_run.h"
#include "mapreduce/mr_sortbuf.h"
#include "mapreduce/mr_task_int.h"
#include "storage/base/buf.h"
#include "storage/base/coding.h"
#include "storage/base/env.h"

static uint64_t rng_state;
static char tmpdir[256];
static unsigned seq;

static uint64_t
rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int
make_tmpdir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kiln-test-mr-order-XXXXXX");
    return mkdtemp(tmpdir) == NULL;
}

static int
remove_tmpdir(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd);
}

/* ------------------------------------------------------------------ keys */

/* Keys are decimal numbers, some with leading zeros ("7", "07", "007"):
 * byte order and numeric order differ, and the numeric comparators call
 * different bytes equal. */
static long
num_of(kslice k)
{
    long v = 0;
    for (size_t i = 0; i < k.n; i++)
        v = v * 10 + (k.p[i] - '0');
    return v;
}

static int calls;            /* comparator calls, to see that one is used */

static int
cmp_num(void *arg, kslice a, kslice b)
{
    calls++;
    long x = num_of(a), y = num_of(b);
    return x < y ? -1 : x > y;
}

static int
cmp_num_desc(void *arg, kslice a, kslice b)
{
    return cmp_num(arg, b, a);
}

/* Groups of ten: coarser than either numeric order. */
static int
cmp_tens(void *arg, kslice a, kslice b)
{
    long x = num_of(a) / 10, y = num_of(b) / 10;
    return x < y ? -1 : x > y;
}

typedef struct rec {
    uint32_t part;
    char key[8];
    size_t klen;
    uint8_t value[8];
    size_t vlen;
    int zeros;               /* leading zeros added */
} rec;

static int ref_desc;         /* the reference's numeric direction */

/* The reference order, written apart from the engine's: partition, number
 * (parsed with strtol), key bytes, value bytes. */
static int
ref_cmp(const void *pa, const void *pb)
{
    const rec *a = pa, *b = pb;
    if (a->part != b->part)
        return a->part < b->part ? -1 : 1;
    char x[9], y[9];
    memcpy(x, a->key, a->klen);
    x[a->klen] = 0;
    memcpy(y, b->key, b->klen);
    y[b->klen] = 0;
    long nx = strtol(x, NULL, 10), ny = strtol(y, NULL, 10);
    if (nx != ny)
        return (nx < ny) != ref_desc ? -1 : 1;
    size_t m = a->klen < b->klen ? a->klen : b->klen;
    int c = memcmp(a->key, b->key, m);
    if (c == 0 && a->klen != b->klen)
        c = a->klen < b->klen ? -1 : 1;
    if (c != 0)
        return c;
    m = a->vlen < b->vlen ? a->vlen : b->vlen;
    c = memcmp(a->value, b->value, m);
    if (c == 0 && a->vlen != b->vlen)
        c = a->vlen < b->vlen ? -1 : 1;
    return c;
}

static void
random_rec(rec *r, uint32_t parts, long max)
{
    r->part = (uint32_t)(rnd() % parts);
    long v = (long)(rnd() % (uint64_t)max);
    int zeros = (int)(rnd() % 3);
    int n = snprintf(r->key, sizeof r->key, "%.*s%ld", zeros, "00", v);
    r->klen = (size_t)n;
    r->zeros = zeros;
    r->vlen = 8;
    coding_put_be64(r->value, rnd() % 1000);
}

static kslice
rec_key(const rec *r)
{
    return kslice_make(r->key, r->klen);
}

static kslice
rec_value(const rec *r)
{
    return kslice_make(r->value, r->vlen);
}

/* ------------------------------------------------------------------ sort buffer */

static void
sort_buffer_comparator(void **state)
{
    (void)state;
    for (int round = 0; round < 8; round++) {
        int desc = round & 1, hashed = (round >> 1) & 1;
        uint32_t parts = round < 4 ? 1 : 1 + (uint32_t)(rnd() % 5);
        size_t n = 3000 + rnd() % 2000;
        rec *v = calloc(n, sizeof *v);
        mr_sortbuf *sb = mr_sortbuf_new(1 << 20, hashed);
        mr_sortbuf_set_order(sb, desc ? cmp_num_desc : cmp_num, NULL);
        for (size_t i = 0; i < n; i++) {
            random_rec(&v[i], parts, 300);
            if (hashed)   /* the index takes a key's partition to be the key's alone */
                v[i].part = (uint32_t)(num_of(rec_key(&v[i])) % parts);
            uint64_t h = mr_partition_hash(v[i].key, v[i].klen);
            mr_sortbuf_result r = mr_sortbuf_add(sb, v[i].part, h, rec_key(&v[i]), rec_value(&v[i]),
                                                 hashed ? mr_sortbuf_fold_sum_be64 : NULL, NULL);
            assert_true(r == MR_SORTBUF_ADDED || r == MR_SORTBUF_FOLDED);
        }
        ref_desc = desc;
        qsort(v, n, sizeof *v, ref_cmp);
        if (hashed) {
            /* The fold combines equal bytes only: "7" and "07" stay two. */
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                if (k > 0 && v[k - 1].part == v[i].part && v[k - 1].klen == v[i].klen &&
                    memcmp(v[k - 1].key, v[i].key, v[i].klen) == 0) {
                    coding_put_be64(v[k - 1].value,
                                    coding_get_be64(v[k - 1].value) + coding_get_be64(v[i].value));
                    continue;
                }
                v[k++] = v[i];
            }
            n = k;
        }
        calls = 0;
        mr_sortbuf_sort(sb);
        assert_true(calls > 0);
        assert_int_equal(mr_sortbuf_count(sb), n);
        for (size_t i = 0; i < n; i++) {
            uint32_t part;
            kslice key, value;
            mr_sortbuf_get(sb, i, &part, &key, &value);
            assert_int_equal(part, v[i].part);
            assert_true(kslice_eq(key, rec_key(&v[i])));
            assert_true(kslice_eq(value, rec_value(&v[i])));
        }
        mr_sortbuf_free(sb);
        free(v);
    }
}

/* ------------------------------------------------------------------ merge */

static mr_run *
spill(mr_sortbuf *sb, uint32_t parts)
{
    char path[400];
    snprintf(path, sizeof path, "%s/spill-%u.run", tmpdir, seq++);
    mr_run_options o;
    mr_run_options_init(&o);
    o.block_size = 512;
    mr_run_writer *w;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(mr_run_writer_open(path, parts, &o, &w, &err), KILN_OK);
    mr_sortbuf_sort(sb);
    for (size_t i = 0; i < mr_sortbuf_count(sb); i++) {
        uint32_t part;
        kslice k, v;
        mr_sortbuf_get(sb, i, &part, &k, &v);
        assert_int_equal(mr_run_writer_add(w, part, k, v, &err), KILN_OK);
    }
    mr_sortbuf_reset(sb);
    mr_run *r;
    assert_int_equal(mr_run_writer_finish(w, &r, &err), KILN_OK);
    return r;
}

static void
merge_groups(void **state)
{
    (void)state;
    for (int round = 0; round < 4; round++) {
        int desc = round & 1;
        uint32_t parts = 1 + (uint32_t)(rnd() % 3);
        size_t n = 20000 + rnd() % 10000;
        rec *v = calloc(n, sizeof *v);
        mr_sortbuf *sb = mr_sortbuf_new(64 * 1024, 0);
        mr_sortbuf_set_order(sb, desc ? cmp_num_desc : cmp_num, NULL);
        mr_run **runs = calloc(n, sizeof *runs);
        size_t nruns = 0;
        for (size_t i = 0; i < n; i++) {
            random_rec(&v[i], parts, 500);
            if (mr_sortbuf_add(sb, v[i].part, 0, rec_key(&v[i]), rec_value(&v[i]), NULL, NULL) ==
                MR_SORTBUF_FULL) {
                runs[nruns++] = spill(sb, parts);
                assert_int_equal(mr_sortbuf_add(sb, v[i].part, 0, rec_key(&v[i]), rec_value(&v[i]),
                                                NULL, NULL),
                                 MR_SORTBUF_ADDED);
            }
        }
        runs[nruns++] = spill(sb, parts);
        mr_sortbuf_free(sb);
        assert_true(nruns > 4);
        ref_desc = desc;
        qsort(v, n, sizeof *v, ref_cmp);

        env_file **files = calloc(nruns, sizeof *files);
        kiln_err err;
        status_clear(&err);
        for (size_t i = 0; i < nruns; i++)
            assert_int_equal(env_open_read(runs[i]->path, &files[i], &err), KILN_OK);
        mr_key_order sort = {desc ? cmp_num_desc : cmp_num, NULL};
        mr_key_order tens = {cmp_tens, NULL};
        size_t at = 0, groups = 0, mixed = 0;
        for (uint32_t p = 0; p < parts; p++) {
            mr_run_iter **its = calloc(nruns, sizeof *its);
            for (size_t i = 0; i < nruns; i++) {
                mr_extent e = {runs[i]->sec[p].off, runs[i]->sec[p].len};
                its[i] = mr_run_iter_new(files[i], &e, 1);
            }
            mr_merger *m = mr_merger_new(its, nruns);
            free(its);
            /* Odd partitions: groups of ten; even: the sort's own equality. */
            mr_merger_set_order(m, &sort, p % 2 ? &tens : &sort);
            kslice key, val;
            int r;
            while ((r = mr_merger_next_key(m, &key, &err)) > 0) {
                groups++;
                assert_true(at < n && v[at].part == p);
                /* The group's key is its first record's. */
                assert_true(kslice_eq(key, rec_key(&v[at])));
                assert_true(kslice_eq(mr_merger_value_key(m), key));
                long first = num_of(rec_key(&v[at]));
                int distinct = 0;
                while (mr_merger_next_value(m, &val, &err) > 0) {
                    assert_true(at < n && v[at].part == p);
                    long here = num_of(rec_key(&v[at]));
                    assert_true(p % 2 ? here / 10 == first / 10 : here == first);
                    kslice vk = mr_merger_value_key(m);
                    assert_true(kslice_eq(vk, rec_key(&v[at])));
                    assert_true(kslice_eq(val, rec_value(&v[at])));
                    if (!kslice_eq(vk, key))
                        distinct = 1;
                    at++;
                }
                mixed += (size_t)distinct;
                /* The group was maximal: the next record starts another. */
                if (at < n && v[at].part == p) {
                    long next = num_of(rec_key(&v[at]));
                    assert_true(p % 2 ? next / 10 != first / 10 : next != first);
                }
            }
            assert_int_equal(r, 0);
            mr_merger_free(m);
        }
        assert_int_equal(at, n);
        assert_true(mixed > 0);      /* groups held several byte keys */
        assert_true(groups < n);
        for (size_t i = 0; i < nruns; i++) {
            env_close(files[i], NULL);
            mr_run_remove(runs[i]);
        }
        free(files);
        free(runs);
        free(v);
    }
}

/* ------------------------------------------------------------------ total order */

static void
total_order_comparator(void **state)
{
    (void)state;
    kiln_err err;
    status_clear(&err);
    mr_key_order num = {cmp_num, NULL}, desc = {cmp_num_desc, NULL};
    /* Increasing as numbers, not as bytes. */
    kslice splits[] = {kslice_str("9"), kslice_str("50"), kslice_str("100")};
    mr_partitioner *p;
    assert_int_equal(mr_partitioner_new_total(splits, 3, 4, NULL, &p, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "does not sort after"));
    status_clear(&err);
    assert_int_equal(mr_partitioner_new_total(splits, 3, 4, &desc, &p, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "sort comparator"));
    status_clear(&err);
    /* Equal under the comparator is not increasing either. */
    kslice same[] = {kslice_str("7"), kslice_str("007")};
    assert_int_equal(mr_partitioner_new_total(same, 2, 3, &num, &p, &err), KILN_INVALID);
    status_clear(&err);
    assert_int_equal(mr_partitioner_new_total(splits, 3, 4, &num, &p, &err), KILN_OK);
    assert_true(mr_partitioner_is_total(p));
    assert_string_equal(mr_partitioner_kind(p), "total");
    static const struct {
        const char *key;
        uint32_t part;
    } cases[] = {
        {"0", 0}, {"8", 0}, {"9", 1}, {"009", 1}, {"10", 1}, {"49", 1}, {"050", 2},
        {"99", 2}, {"100", 3}, {"0100", 3}, {"12345", 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(mr_partitioner_get(p, kslice_str(cases[i].key), 0), cases[i].part);
    mr_partitioner_free(p);

    /* Sampled split keys: sorted by the comparator, repeats under it
     * dropped, increasing under it. */
    for (int d = 0; d < 2; d++) {
        enum { N = 4000 };
        static char text[N][8];
        kslice s[N], out[16];
        for (size_t i = 0; i < N; i++) {
            rec r;
            random_rec(&r, 1, 40);
            memcpy(text[i], r.key, r.klen);
            s[i] = kslice_make(text[i], r.klen);
        }
        size_t k = mr_partition_pick_splits(s, N, 16, d ? &desc : &num, out);
        assert_true(k > 8 && k <= 15);
        for (size_t i = 1; i < k; i++)
            assert_true(d ? num_of(out[i - 1]) > num_of(out[i]) : num_of(out[i - 1]) < num_of(out[i]));
        assert_int_equal(mr_partitioner_new_total(out, k, 16, d ? &desc : &num, &p, &err), KILN_OK);
        mr_partitioner_free(p);
        for (size_t i = 1; i < N; i++)
            assert_true(d ? num_of(s[i - 1]) >= num_of(s[i]) : num_of(s[i - 1]) <= num_of(s[i]));
    }
}

/* ------------------------------------------------------------------ custom partitioner */

/* The number modulo the count; "x..." keys get count + 5 (out of range). */
static uint32_t
part_mod(void *arg, kslice key, uint32_t partitions)
{
    int *seen = arg;
    if (seen != NULL)
        (*seen)++;
    if (key.n > 0 && (key.p[0] == 'x' || key.p[0] == 1))
        return partitions + 5;
    return (uint32_t)(num_of(key) % partitions);
}

static void
custom_partitioner(void **state)
{
    (void)state;
    int seen = 0;
    mr_partitioner *p = mr_partitioner_new_custom(7, part_mod, &seen);
    assert_true(mr_partitioner_is_custom(p));
    assert_false(mr_partitioner_is_total(p));
    assert_false(mr_partitioner_needs_hash(p));
    assert_string_equal(mr_partitioner_kind(p), "custom");
    assert_int_equal(mr_partitioner_count(p), 7);
    assert_int_equal(mr_partitioner_get(p, kslice_str("23"), 12345), 2);
    assert_int_equal(mr_partitioner_get(p, kslice_str("0700"), 0), 0);
    assert_int_equal(mr_partitioner_get(p, kslice_str("x"), 0), 12);
    assert_int_equal(seen, 3);
    kiln_err err;
    status_clear(&err);
    uint8_t key[] = {1, 'a', '\\', 0xff};
    assert_int_equal(mr_partition_bad(p, "myjob", kslice_make(key, sizeof key), kslice_str("v\n1"),
                                      12, &err),
                     KILN_INTERNAL);
    assert_non_null(strstr(err.msg, "myjob"));
    assert_non_null(strstr(err.msg, "returned 12"));
    assert_non_null(strstr(err.msg, "'\\x01a\\x5C\\xFF'"));
    assert_non_null(strstr(err.msg, "'v\\x0A1'"));
    assert_non_null(strstr(err.msg, "there are 7"));
    mr_partitioner_free(p);

    mr_partitioner *h = mr_partitioner_new_hash(3);
    assert_true(mr_partitioner_needs_hash(h));
    assert_string_equal(mr_partitioner_kind(h), "hash");
    mr_partitioner_free(h);

    /* A long key is shortened in messages. */
    kbuf b = KBUF_INIT;
    mr_partition_printable(&b, kslice_str("abcdefghij"), 4);
    assert_int_equal(b.len, 7);
    assert_memory_equal(b.data, "abcd...", 7);
    buf_free(&b);
}

/* ------------------------------------------------------------------ collector */

static int combine_calls, combine_mixed;

/* Sums 8-byte values; checks every value's own key belongs to the group. */
static kiln_status
combine_sum(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    combine_calls++;
    uint64_t sum = 0;
    kslice v;
    assert_true(kslice_eq(mr_task_current_key(t), key));
    while (mr_task_next_value(values, &v)) {
        kslice k = mr_task_current_key(t);
        assert_int_equal(num_of(k), num_of(key));
        if (!kslice_eq(k, key))
            combine_mixed++;
        sum += coding_get_be64(v.p);
    }
    uint8_t be[8];
    coding_put_be64(be, sum);
    return mr_task_emit(t, key, kslice_make(be, 8), err);
}

static void
collector_through_spills(void **state)
{
    (void)state;
    for (int round = 0; round < 4; round++) {
        int desc = round & 1, use_fold = round >= 2;
        const uint32_t parts = 5;
        mr_counters counters;
        mr_counters_init(&counters);
        mr_task_env env = {NULL, NULL, "order-test", 0, &counters};
        mr_combiner comb = {NULL, NULL, NULL, {desc ? cmp_num_desc : cmp_num, NULL}, &env};
        if (use_fold)
            comb.fold = mr_sortbuf_fold_sum_be64;
        else
            comb.combine = combine_sum;
        mr_run_options ro;
        mr_run_options_init(&ro);
        ro.block_size = 1024;
        mr_run_dir dir = {tmpdir, seq};
        int seen = 0;
        mr_partitioner *part = mr_partitioner_new_custom(parts, part_mod, &seen);
        mr_collector_params cp = {parts, part, 64 * 1024, 3, &ro, &dir, &comb};
        mr_collector *col;
        kiln_err err;
        status_clear(&err);
        assert_int_equal(mr_collector_open(&cp, &col, &err), KILN_OK);
        /* The reference: per number (combiner) or per key bytes (fold), the
         * sum of its values. */
        enum { MAXN = 2000 };
        uint64_t *by_num = calloc(MAXN, sizeof *by_num);
        uint64_t *by_bytes = calloc(MAXN * 3, sizeof *by_bytes);
        rec *least = calloc(MAXN, sizeof *least);     /* per number, its least key in bytes */
        size_t n = 60000;
        combine_calls = combine_mixed = 0;
        for (size_t i = 0; i < n; i++) {
            rec r;
            random_rec(&r, 1, MAXN);
            long num = num_of(rec_key(&r));
            by_num[num] += coding_get_be64(r.value);
            by_bytes[(size_t)num * 3 + (size_t)r.zeros] += coding_get_be64(r.value);
            if (least[num].klen == 0 || strcmp(r.key, least[num].key) < 0)
                least[num] = r;
            assert_int_equal(mr_collector_add(col, rec_key(&r), rec_value(&r), &err), KILN_OK);
        }
        assert_int_equal(seen, (int)n);
        mr_run *out;
        assert_int_equal(mr_collector_finish(col, &out, &err), KILN_OK);
        assert_true(dir.seq > seq + 10);    /* many spills and merges */
        seq = dir.seq;
        if (!use_fold) {
            assert_true(combine_calls > 0);
            assert_true(combine_mixed > 0);  /* "7" and "07" met in one call */
        }

        env_file *f;
        assert_int_equal(env_open_read(out->path, &f, &err), KILN_OK);
        uint64_t records = 0;
        for (uint32_t p = 0; p < parts; p++) {
            mr_extent e = {out->sec[p].off, out->sec[p].len};
            mr_run_iter *it = mr_run_iter_new(f, &e, 1);
            kslice k, v;
            kbuf prev = KBUF_INIT;
            int first = 1, r;
            while ((r = mr_run_iter_next(it, &k, &v, &err)) > 0) {
                records++;
                long num = num_of(k);
                assert_int_equal(num % parts, p);
                if (!first) {
                    long pn = num_of(buf_slice(&prev));
                    if (use_fold) {
                        /* Sorted by number, then bytes; every key once. */
                        assert_true(desc ? pn >= num : pn <= num);
                        assert_true(pn != num || kslice_cmp(buf_slice(&prev), k) < 0);
                    } else {
                        /* One record per number: combined across bytes. */
                        assert_true(desc ? pn > num : pn < num);
                    }
                }
                first = 0;
                buf_reset(&prev);
                buf_append(&prev, k.p, k.n);
                assert_int_equal(v.n, 8);
                size_t zeros = k.n - (size_t)snprintf(NULL, 0, "%ld", num);
                if (use_fold) {
                    assert_true(coding_get_be64(v.p) == by_bytes[(size_t)num * 3 + zeros]);
                    by_bytes[(size_t)num * 3 + zeros] = UINT64_MAX;
                } else {
                    /* The combiner's key is its group's first: the least in
                     * bytes ("007" before "07" before "7", "0" before "00"). */
                    assert_true(kslice_eq(k, rec_key(&least[num])));
                    assert_true(coding_get_be64(v.p) == by_num[num]);
                    by_num[num] = UINT64_MAX;
                }
            }
            assert_int_equal(r, 0);
            buf_free(&prev);
            mr_run_iter_free(it);
        }
        assert_int_equal(records, out->records);
        for (size_t i = 0; i < MAXN; i++) {
            if (use_fold) {
                for (size_t z = 0; z < 3; z++)
                    assert_true(by_bytes[i * 3 + z] == 0 || by_bytes[i * 3 + z] == UINT64_MAX);
            } else {
                assert_true(by_num[i] == 0 || by_num[i] == UINT64_MAX);
            }
        }
        env_close(f, NULL);
        mr_run_remove(out);
        free(by_num);
        free(by_bytes);
        free(least);
        mr_partitioner_free(part);
        mr_counters_free(&counters);
    }
}

/* The built-in sum fold under hash partitioning: keys of every length from
 * 0 to 20 bytes, NUL bytes in them ("a" and "a\0" differ only in length),
 * values that wrap the sum, a few keys hot and most cold. A small budget
 * keeps the cache of running sums small (keys are pushed out of it and come
 * back) and spills many times; a large one keeps most keys cached to the
 * end. Every key must come out once, in its hash partition, in byte order,
 * with the sum kept here; without merge passes, every add is one combine
 * input. */
enum { SUM_KEYS = 1 + 256 + 19 * 600 };

typedef struct sum_key {
    uint8_t b[20];
    uint8_t n;
    uint64_t sum;
    int seen;
} sum_key;

static int
sum_key_cmp(const void *a, const void *b)
{
    const sum_key *x = a, *y = b;
    return kslice_cmp(kslice_make(x->b, x->n), kslice_make(y->b, y->n));
}

static void
collector_sum_cache(void **state)
{
    (void)state;
    static const size_t budgets[] = {64 * 1024, 8 << 20};
    sum_key *keys = calloc(SUM_KEYS, sizeof *keys);
    for (size_t round = 0; round < 2; round++) {
        /* The keys: the empty one, every single byte, then 600 of each length
         * from 2 to 20, unique by their first two bytes, NULs frequent. */
        memset(keys, 0, SUM_KEYS * sizeof *keys);
        size_t nk = 0;
        keys[nk++].n = 0;
        for (int c = 0; c < 256; c++) {
            keys[nk].b[0] = (uint8_t)c;
            keys[nk++].n = 1;
        }
        for (int len = 2; len <= 20; len++) {
            for (int j = 0; j < 600; j++) {
                sum_key *k = &keys[nk++];
                k->n = (uint8_t)len;
                k->b[0] = (uint8_t)(j >> 8);
                k->b[1] = (uint8_t)j;
                for (int i = 2; i < len; i++)
                    k->b[i] = rnd() % 3 == 0 ? 0 : (uint8_t)rnd();
            }
        }
        assert_int_equal(nk, SUM_KEYS);

        const uint32_t parts = 3;
        mr_counters counters;
        mr_counters_init(&counters);
        mr_task_env env = {NULL, NULL, "sum-test", 0, &counters};
        mr_combiner comb = {NULL, mr_sortbuf_fold_sum_be64, NULL, {NULL, NULL}, &env};
        mr_run_options ro;
        mr_run_options_init(&ro);
        ro.block_size = 4096;
        mr_run_dir dir = {tmpdir, seq};
        mr_partitioner *part = mr_partitioner_new_hash(parts);
        mr_collector_params cp = {parts, part, budgets[round], 4, &ro, &dir, &comb};
        mr_collector *col;
        kiln_err err;
        status_clear(&err);
        assert_int_equal(mr_collector_open(&cp, &col, &err), KILN_OK);
        size_t adds = 300000;
        for (size_t i = 0; i < adds; i++) {
            /* Half the adds go to 40 hot keys. */
            size_t at = rnd() % 2 ? rnd() % 40 * (SUM_KEYS / 40) : rnd() % SUM_KEYS;
            sum_key *k = &keys[at];
            uint64_t v = rnd() % 8 == 0 ? UINT64_MAX - rnd() % 1000 : rnd() % 1000;
            k->sum += v;
            uint8_t be[8];
            coding_put_be64(be, v);
            assert_int_equal(mr_collector_add(col, kslice_make(k->b, k->n), kslice_make(be, 8), &err),
                             KILN_OK);
        }
        mr_run *out;
        assert_int_equal(mr_collector_finish(col, &out, &err), KILN_OK);
        if (round == 0)
            assert_true(dir.seq > seq + 10);    /* many spills and merges */
        seq = dir.seq;
        /* Merge passes count their own combine inputs. */
        if (round == 0)
            assert_true(counters.v[MR_C_COMBINE_INPUT_RECORDS] > adds);
        else
            assert_int_equal(counters.v[MR_C_COMBINE_INPUT_RECORDS], adds);

        qsort(keys, SUM_KEYS, sizeof *keys, sum_key_cmp);
        env_file *f;
        assert_int_equal(env_open_read(out->path, &f, &err), KILN_OK);
        size_t records = 0;
        for (uint32_t p = 0; p < parts; p++) {
            mr_extent e = {out->sec[p].off, out->sec[p].len};
            mr_run_iter *it = mr_run_iter_new(f, &e, 1);
            kslice k, v;
            kbuf prev = KBUF_INIT;
            int r, first = 1;
            while ((r = mr_run_iter_next(it, &k, &v, &err)) > 0) {
                records++;
                if (!first)
                    assert_true(kslice_cmp(buf_slice(&prev), k) < 0);
                first = 0;
                assert_int_equal(mr_partition_of_hash(mr_partition_hash(k.p, k.n), parts), p);
                sum_key probe;
                memset(&probe, 0, sizeof probe);
                assert_true(k.n <= sizeof probe.b);
                memcpy(probe.b, k.p, k.n);
                probe.n = (uint8_t)k.n;
                sum_key *hit = bsearch(&probe, keys, SUM_KEYS, sizeof *keys, sum_key_cmp);
                assert_non_null(hit);
                assert_false(hit->seen);
                hit->seen = 1;
                assert_int_equal(v.n, 8);
                assert_true(coding_get_be64(v.p) == hit->sum);
                buf_reset(&prev);
                buf_append(&prev, k.p, k.n);
            }
            assert_int_equal(r, 0);
            buf_free(&prev);
            mr_run_iter_free(it);
        }
        assert_int_equal(records, out->records);
        /* Every key added is there: the ones never drawn have no record. */
        size_t added = 0;
        for (size_t i = 0; i < SUM_KEYS; i++)
            added += keys[i].seen;
        assert_int_equal(records, added);
        for (size_t i = 0; i < SUM_KEYS; i++)
            assert_true(keys[i].seen || keys[i].sum == 0);
        env_close(f, NULL);
        mr_run_remove(out);
        mr_partitioner_free(part);
        mr_counters_free(&counters);
    }
    free(keys);
}

static void
collector_partition_out_of_range(void **state)
{
    (void)state;
    mr_counters counters;
    mr_counters_init(&counters);
    mr_task_env env = {NULL, NULL, "rangejob", 0, &counters};
    mr_combiner comb = {NULL, NULL, NULL, {NULL, NULL}, &env};
    mr_run_options ro;
    mr_run_options_init(&ro);
    mr_run_dir dir = {tmpdir, seq + 1000};
    mr_partitioner *part = mr_partitioner_new_custom(4, part_mod, NULL);
    mr_collector_params cp = {4, part, 64 * 1024, 3, &ro, &dir, &comb};
    mr_collector *col;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(mr_collector_open(&cp, &col, &err), KILN_OK);
    assert_int_equal(mr_collector_add(col, kslice_str("12"), kslice_str("fine"), &err), KILN_OK);
    uint8_t key[] = {1, 'k', 0};
    assert_int_equal(mr_collector_add(col, kslice_make(key, 3), kslice_str("the value"), &err),
                     KILN_INTERNAL);
    assert_non_null(strstr(err.msg, "rangejob"));
    assert_non_null(strstr(err.msg, "'\\x01k\\x00'"));
    assert_non_null(strstr(err.msg, "'the value'"));
    assert_non_null(strstr(err.msg, "returned 9"));
    mr_collector_abandon(col);
    mr_partitioner_free(part);
    mr_counters_free(&counters);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_mr_order: seed %llu (replay with KILN_TEST_SEED)\n", (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sort_buffer_comparator),
        cmocka_unit_test(merge_groups),
        cmocka_unit_test(total_order_comparator),
        cmocka_unit_test(custom_partitioner),
        cmocka_unit_test(collector_through_spills),
        cmocka_unit_test(collector_sum_cache),
        cmocka_unit_test(collector_partition_out_of_range),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
