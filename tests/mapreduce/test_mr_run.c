/* test_mr_run.c -- sorted run files: round trip of random records (empty and
 * binary keys, records larger than a block, both codecs), sections per
 * partition, reading a section cut into arbitrary extents (as the shuffle
 * stores it), corruption and truncation giving clean errors, bad input
 * rejected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapreduce/mr_run.h"
#include "storage/base/buf.h"
#include "storage/base/env.h"

static uint64_t rng_state;
static char tmpdir[256];

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
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kiln-test-mr-run-XXXXXX");
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
    kbuf key;
    kbuf value;
} rec;

static int
rec_cmp(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->part != y->part)
        return x->part < y->part ? -1 : 1;
    int c = kslice_cmp(buf_slice(&x->key), buf_slice(&y->key));
    return c ? c : kslice_cmp(buf_slice(&x->value), buf_slice(&y->value));
}

static rec *
random_records(size_t n, uint32_t parts)
{
    rec *v = calloc(n, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        v[i].part = (uint32_t)(rnd() % parts);
        size_t kl = rnd() % 10 == 0 ? 0 : rnd() % 24;
        size_t vl = rnd() % 50 == 0 ? 100000 + rnd() % 100000 : rnd() % 40;
        for (size_t k = 0; k < kl; k++)
            buf_append_u8(&v[i].key, (uint8_t)(rnd() % 4 == 0 ? 0 : rnd()));
        for (size_t k = 0; k < vl; k++)
            buf_append_u8(&v[i].value, (uint8_t)(k % 7 == 0 ? rnd() : 'v'));
    }
    qsort(v, n, sizeof *v, rec_cmp);
    return v;
}

static void
free_records(rec *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        buf_free(&v[i].key);
        buf_free(&v[i].value);
    }
    free(v);
}

static mr_run *
write_run(const char *name, rec *v, size_t n, uint32_t parts, kiln_codec codec)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    mr_run_options o;
    mr_run_options_init(&o);
    o.codec = codec;
    o.block_size = 4096;
    mr_run_writer *w;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(mr_run_writer_open(path, parts, &o, &w, &err), KILN_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(mr_run_writer_add(w, v[i].part, buf_slice(&v[i].key),
                                           buf_slice(&v[i].value), &err),
                         KILN_OK);
    mr_run *r;
    assert_int_equal(mr_run_writer_finish(w, &r, &err), KILN_OK);
    assert_int_equal(r->records, n);
    return r;
}

/* Read partition p of r through `cuts` extents and compare with v. */
static void
check_section(mr_run *r, uint32_t p, rec *v, size_t n, int cuts)
{
    env_file *f;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(env_open_read(r->path, &f, &err), KILN_OK);
    const mr_run_section *sec = &r->sec[p];
    mr_extent *ext = calloc((size_t)cuts + 1, sizeof *ext);
    size_t next = 0;
    uint64_t at = 0;
    for (int i = 0; i < cuts && at < sec->len; i++) {
        uint64_t len = 1 + rnd() % (sec->len - at);
        ext[next].off = sec->off + at;
        ext[next].len = len;
        next++;
        at += len;
    }
    if (at < sec->len) {
        ext[next].off = sec->off + at;
        ext[next].len = sec->len - at;
        next++;
    }
    mr_run_iter *it = mr_run_iter_new(f, ext, next);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].part != p)
            continue;
        kslice key, value;
        assert_int_equal(mr_run_iter_next(it, &key, &value, &err), 1);
        assert_true(kslice_eq(key, buf_slice(&v[i].key)));
        assert_true(kslice_eq(value, buf_slice(&v[i].value)));
        k++;
    }
    kslice key, value;
    assert_int_equal(mr_run_iter_next(it, &key, &value, &err), 0);
    assert_int_equal(k, sec->records);
    assert_int_equal(mr_run_iter_bytes_read(it), sec->len);
    mr_run_iter_free(it);
    free(ext);
    env_close(f, NULL);
}

static void
round_trip(void **state)
{
    (void)state;
    for (int codec = 0; codec < 2; codec++) {
        size_t n = 3000;
        uint32_t parts = 7;
        rec *v = random_records(n, parts);
        mr_run *r = write_run(codec ? "snappy.run" : "none.run", v, n, parts,
                              codec ? CODEC_SNAPPY : CODEC_NONE);
        uint64_t total = 0;
        for (uint32_t p = 0; p < parts; p++) {
            check_section(r, p, v, n, 0);
            check_section(r, p, v, n, 1 + (int)(rnd() % 20));
            total += r->sec[p].len;
        }
        assert_int_equal(total, r->bytes);
        mr_run_remove(r);
        free_records(v, n);
    }
}

static void
corruption(void **state)
{
    (void)state;
    size_t n = 500;
    rec *v = random_records(n, 1);
    mr_run *r = write_run("corrupt.run", v, n, 1, CODEC_SNAPPY);
    kbuf bytes = KBUF_INIT;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(env_read_file(r->path, &bytes, &err), KILN_OK);
    char path[400];
    snprintf(path, sizeof path, "%s/bad.run", tmpdir);
    for (int trial = 0; trial < 200; trial++) {
        kbuf copy = KBUF_INIT;
        buf_append(&copy, bytes.data, bytes.len);
        uint64_t len = copy.len;
        if (trial % 2 == 0) {
            size_t at = rnd() % copy.len;
            copy.data[at] ^= (uint8_t)(1 + rnd() % 255);
        } else {
            len = rnd() % copy.len;
        }
        unlink(path);
        env_file *w;
        assert_int_equal(env_create(path, 1, &w, &err), KILN_OK);
        assert_int_equal(env_append(w, copy.data, (size_t)len, &err), KILN_OK);
        assert_int_equal(env_close(w, &err), KILN_OK);
        env_file *f;
        assert_int_equal(env_open_read(path, &f, &err), KILN_OK);
        mr_extent e = {0, len};
        mr_run_iter *it = mr_run_iter_new(f, &e, 1);
        kslice key, value;
        int got;
        size_t k = 0;
        status_clear(&err);
        while ((got = mr_run_iter_next(it, &key, &value, &err)) > 0)
            k++;
        if (trial % 2 == 0) {
            /* A flipped byte never passes unnoticed. */
            assert_int_equal(got, -1);
            assert_int_equal(err.code, KILN_CORRUPTION);
            assert_non_null(strstr(err.msg, "bad.run"));
        } else {
            /* A cut inside a block is an error; a cut between blocks just
             * ends early (the section table, not the file, holds lengths). */
            assert_true(got == -1 ? err.code == KILN_CORRUPTION : got == 0 && k < n);
        }
        mr_run_iter_free(it);
        env_close(f, NULL);
        buf_free(&copy);
    }
    buf_free(&bytes);
    mr_run_remove(r);
    free_records(v, n);
}

static void
bad_input(void **state)
{
    (void)state;
    char path[400];
    snprintf(path, sizeof path, "%s/order.run", tmpdir);
    mr_run_writer *w;
    kiln_err err;
    status_clear(&err);
    mr_run_options o;
    mr_run_options_init(&o);
    o.codec = CODEC_ZSTD;
    assert_int_equal(mr_run_writer_open(path, 3, &o, &w, &err), KILN_INVALID);
    status_clear(&err);
    assert_int_equal(mr_run_writer_open(path, 3, NULL, &w, &err), KILN_OK);
    assert_int_equal(mr_run_writer_add(w, 2, kslice_str("a"), kslice_str("1"), &err), KILN_OK);
    assert_int_equal(mr_run_writer_add(w, 1, kslice_str("b"), kslice_str("1"), &err),
                     KILN_INVALID);
    /* Sticky: later adds keep failing. */
    assert_int_equal(mr_run_writer_add(w, 2, kslice_str("c"), kslice_str("1"), &err),
                     KILN_INVALID);
    mr_run *r;
    assert_int_equal(mr_run_writer_finish(w, &r, &err), KILN_INVALID);
    assert_false(env_exists(path));

    status_clear(&err);
    assert_int_equal(mr_run_writer_open(path, 3, NULL, &w, &err), KILN_OK);
    assert_int_equal(mr_run_writer_add(w, 3, kslice_str("a"), kslice_str("1"), &err),
                     KILN_INVALID);
    mr_run_writer_abandon(w);
    assert_false(env_exists(path));

    /* Disk full while writing: the error names the file, nothing is left. */
    status_clear(&err);
    assert_int_equal(mr_run_writer_open(path, 1, NULL, &w, &err), KILN_OK);
    env_fault_arm(ENV_OP_WRITE, 1, 28);
    kiln_status s = KILN_OK;
    for (int i = 0; i < 100000 && s == KILN_OK; i++) {
        char k[16];
        snprintf(k, sizeof k, "%08d", i);
        s = mr_run_writer_add(w, 0, kslice_str(k), kslice_str("value"), &err);
    }
    if (s == KILN_OK)
        s = mr_run_writer_finish(w, &r, &err);
    else
        mr_run_writer_abandon(w);
    env_fault_clear();
    assert_int_equal(s, KILN_IO);
    assert_non_null(strstr(err.msg, "order.run"));
    assert_false(env_exists(path));
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_mr_run: seed %llu (replay with KILN_TEST_SEED)\n", (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(corruption),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
