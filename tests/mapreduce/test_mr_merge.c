/* test_mr_merge.c -- spill and merge: random records through a small sort
 * buffer, spilled as sorted runs whenever it fills, merged k-way (directly
 * and in two passes through intermediate runs) back into key groups that
 * equal a reference sort: every key once, in order, with all its values in
 * byte order. Empty runs and empty keys included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapreduce/mr_merge.h"
#include "mapreduce/mr_run.h"
#include "mapreduce/mr_sortbuf.h"
#include "storage/base/buf.h"
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
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kiln-test-mr-merge-XXXXXX");
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

typedef struct rec {
    uint32_t part;
    char key[8];
    size_t klen;
    char value[8];
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

/* Merge partition p of runs[0..n) into a new single-partition run. */
static mr_run *
merge_to_run(mr_run **runs, size_t n, uint32_t p, env_file **files)
{
    mr_run_iter **its = calloc(n ? n : 1, sizeof *its);
    for (size_t i = 0; i < n; i++) {
        mr_extent e = {runs[i]->sec[p].off, runs[i]->sec[p].len};
        its[i] = mr_run_iter_new(files[i], &e, 1);
    }
    mr_merger *m = mr_merger_new(its, n);
    free(its);
    char path[400];
    snprintf(path, sizeof path, "%s/merge-%u.run", tmpdir, seq++);
    mr_run_writer *w;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(mr_run_writer_open(path, 1, NULL, &w, &err), KILN_OK);
    kslice k, v;
    while (mr_merger_next_key(m, &k, &err) > 0)
        while (mr_merger_next_value(m, &v, &err) > 0)
            assert_int_equal(mr_run_writer_add(w, 0, k, v, &err), KILN_OK);
    mr_merger_free(m);
    mr_run *r;
    assert_int_equal(mr_run_writer_finish(w, &r, &err), KILN_OK);
    return r;
}

static void
spill_and_merge(void **state)
{
    (void)state;
    for (int round = 0; round < 6; round++) {
        uint32_t parts = 1 + (uint32_t)(rnd() % 4);
        size_t n = 20000 + rnd() % 20000;
        rec *v = calloc(n, sizeof *v);
        mr_sortbuf *sb = mr_sortbuf_new(64 * 1024, 0);
        mr_sortbuf *none = mr_sortbuf_new(0, 0);
        mr_run **runs = calloc(n, sizeof *runs);
        size_t nruns = 0;
        for (size_t i = 0; i < n; i++) {
            rec *r = &v[i];
            r->part = (uint32_t)(rnd() % parts);
            r->klen = rnd() % 4;   /* few distinct keys: big groups; "" included */
            for (size_t j = 0; j < r->klen; j++)
                r->key[j] = (char)('a' + rnd() % 3);
            r->vlen = 1 + rnd() % 6;
            for (size_t j = 0; j < r->vlen; j++)
                r->value[j] = (char)('0' + rnd() % 10);
            kslice ks = kslice_make(r->key, r->klen), vs = kslice_make(r->value, r->vlen);
            if (mr_sortbuf_add(sb, r->part, 0, ks, vs, NULL, NULL) == MR_SORTBUF_FULL) {
                runs[nruns++] = spill(sb, parts);
                assert_int_equal(mr_sortbuf_add(sb, r->part, 0, ks, vs, NULL, NULL),
                                 MR_SORTBUF_ADDED);
            }
            if (rnd() % 5000 == 0)   /* an empty spill now and then */
                runs[nruns++] = spill(none, parts);
        }
        runs[nruns++] = spill(sb, parts);
        mr_sortbuf_free(sb);
        mr_sortbuf_free(none);
        assert_true(nruns > 3);
        qsort(v, n, sizeof *v, rec_cmp);

        env_file **files = calloc(nruns, sizeof *files);
        kiln_err err;
        status_clear(&err);
        for (size_t i = 0; i < nruns; i++)
            assert_int_equal(env_open_read(runs[i]->path, &files[i], &err), KILN_OK);
        size_t at = 0;
        for (uint32_t p = 0; p < parts; p++) {
            /* Odd rounds: two passes, through intermediate runs of 3. */
            mr_run_iter **its = calloc(nruns, sizeof *its);
            mr_run **mid = calloc(nruns, sizeof *mid);
            env_file **midf = calloc(nruns, sizeof *midf);
            size_t k = 0, nmid = 0;
            if (round % 2) {
                for (size_t i = 0; i < nruns; i += 3) {
                    size_t g = nruns - i < 3 ? nruns - i : 3;
                    mid[nmid] = merge_to_run(runs + i, g, p, files + i);
                    assert_int_equal(env_open_read(mid[nmid]->path, &midf[nmid], &err), KILN_OK);
                    mr_extent e = {mid[nmid]->sec[0].off, mid[nmid]->sec[0].len};
                    its[k++] = mr_run_iter_new(midf[nmid], &e, 1);
                    nmid++;
                }
            } else {
                for (size_t i = 0; i < nruns; i++) {
                    mr_extent e = {runs[i]->sec[p].off, runs[i]->sec[p].len};
                    its[k++] = mr_run_iter_new(files[i], &e, 1);
                }
            }
            mr_merger *m = mr_merger_new(its, k);
            kslice key, val;
            int r;
            kbuf prev = KBUF_INIT;
            int first = 1;
            while ((r = mr_merger_next_key(m, &key, &err)) > 0) {
                assert_true(first || kslice_cmp(buf_slice(&prev), key) < 0);
                first = 0;
                buf_reset(&prev);
                buf_append(&prev, key.p, key.n);
                /* Sometimes leave values unread: next_key skips them. */
                int leave = rnd() % 7 == 0;
                while (!leave && mr_merger_next_value(m, &val, &err) > 0) {
                    assert_true(at < n);
                    assert_int_equal(v[at].part, p);
                    assert_true(kslice_eq(key, kslice_make(v[at].key, v[at].klen)));
                    assert_true(kslice_eq(val, kslice_make(v[at].value, v[at].vlen)));
                    at++;
                }
                if (leave)
                    while (at < n && v[at].part == p &&
                           kslice_eq(key, kslice_make(v[at].key, v[at].klen)))
                        at++;
            }
            assert_int_equal(r, 0);
            assert_true(at == n || v[at].part > p);
            buf_free(&prev);
            mr_merger_free(m);
            for (size_t i = 0; i < nmid; i++) {
                env_close(midf[i], NULL);
                mr_run_remove(mid[i]);
            }
            free(its);
            free(mid);
            free(midf);
        }
        assert_int_equal(at, n);
        for (size_t i = 0; i < nruns; i++) {
            env_close(files[i], NULL);
            mr_run_remove(runs[i]);
        }
        free(files);
        free(runs);
        free(v);
    }
}

static void
empty_merge(void **state)
{
    (void)state;
    mr_merger *m = mr_merger_new(NULL, 0);
    kslice k;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(mr_merger_next_key(m, &k, &err), 0);
    assert_int_equal(mr_merger_next_value(m, &k, &err), 0);
    mr_merger_free(m);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_mr_merge: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spill_and_merge),
        cmocka_unit_test(empty_merge),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
