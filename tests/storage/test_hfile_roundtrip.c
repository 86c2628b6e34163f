/* test_hfile_roundtrip.c -- what the writer writes, the reader reads back
 * exactly: random cells (empty and binary rows, qualifiers and values, many
 * versions, every delete type, tags, mvcc, repeated keys) at every codec x
 * bloom type x block size, plus a file with a three-level index; read forward,
 * backward and by seeks (existing and absent keys), blooms positive for every
 * written row / column / delete-family row, and hfile_reader_check clean.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/base/block_cache.h"
#include "storage/hfile/bloom.h"
#include "storage/base/buf.h"
#include "storage/hfile/cell.h"
#include "storage/base/coding.h"
#include "storage/base/compress.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/base/status.h"

static uint64_t rng_state;
static char tmp_dir[64];
static block_cache *cache;

static uint64_t
rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* ------------------------------------------------------------------ cell sets */

typedef struct cellset {
    kiln_cell *c;
    size_t n;
} cellset;

static int
cellset_cmp(const void *a, const void *b)
{
    return cell_compare(a, b);
}

static uint8_t *
rnd_bytes(size_t n, int printable)
{
    uint8_t *p = kiln_malloc(n);
    for (size_t i = 0; i < n; i++)
        p[i] = printable ? (uint8_t)('a' + rnd() % 4) : (uint8_t)rnd();
    return p;
}

static const uint8_t cell_types[] = {CELL_TYPE_PUT, CELL_TYPE_PUT, CELL_TYPE_PUT, CELL_TYPE_DELETE,
                                     CELL_TYPE_DELETE_COLUMN, CELL_TYPE_DELETE_FAMILY,
                                     CELL_TYPE_DELETE_FAMILY_VERSION};

/* n sorted random cells. Rows and qualifiers come from small alphabets often
 * enough to make many versions of a column and many columns of a row. */
static void
cellset_random(cellset *cs, size_t n, int with_tags, int with_mvcc)
{
    cs->n = n;
    cs->c = kiln_calloc(n ? n : 1, sizeof *cs->c);
    for (size_t i = 0; i < n; i++) {
        kiln_cell *c = &cs->c[i];
        int printable = rnd() % 3 != 0;
        if (i > 0 && rnd() % 3 == 0) {
            *c = cs->c[rnd() % i];   /* another version, column or copy of a key */
            c->row = kiln_memdup(c->row, c->row_len);
            c->family = kiln_memdup(c->family, c->family_len);
            c->qualifier = kiln_memdup(c->qualifier, c->qualifier_len);
            if (rnd() % 2) {
                free((void *)c->qualifier);
                c->qualifier_len = (uint32_t)(rnd() % 6);
                c->qualifier = rnd_bytes(c->qualifier_len, printable);
            }
            if (rnd() % 4)
                c->ts = 1700000000000LL + (int64_t)(rnd() % 1000);
        } else {
            c->row_len = (uint32_t)(rnd() % 10);
            c->row = rnd_bytes(c->row_len, printable);
            c->family_len = 2;
            c->family = kiln_memdup("cf", 2);
            c->qualifier_len = (uint32_t)(rnd() % 6);
            c->qualifier = rnd_bytes(c->qualifier_len, printable);
            c->ts = rnd() % 10 == 0 ? (int64_t)(rnd() % 3) - 1
                                    : 1700000000000LL + (int64_t)(rnd() % 1000);
        }
        c->type = cell_types[rnd() % sizeof cell_types];
        c->value_len = (uint32_t)(rnd() % 4 == 0 ? 0 : rnd() % 300);
        c->value = rnd_bytes(c->value_len, 0);
        c->tags = NULL;
        c->tags_len = 0;
        if (with_tags && rnd() % 3 == 0) {
            uint32_t vl = (uint32_t)(rnd() % 12);
            uint8_t *t = kiln_malloc(3 + vl);
            coding_put_be16(t, (uint16_t)(1 + vl));
            t[2] = (uint8_t)(1 + rnd() % 200);
            for (uint32_t j = 0; j < vl; j++)
                t[3 + j] = (uint8_t)rnd();
            c->tags = t;
            c->tags_len = 3 + vl;
        }
        c->mvcc = with_mvcc && rnd() % 2 ? rnd() % 1000000 : 0;
    }
    qsort(cs->c, n, sizeof *cs->c, cellset_cmp);
}

static void
cellset_free(cellset *cs)
{
    for (size_t i = 0; i < cs->n; i++) {
        free((void *)cs->c[i].row);
        free((void *)cs->c[i].family);
        free((void *)cs->c[i].qualifier);
        free((void *)cs->c[i].value);
        free((void *)cs->c[i].tags);
    }
    free(cs->c);
}

static int
same_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}

static void
expect_cell(const kiln_cell *got, const kiln_cell *want, int tags, int mvcc, const char *what,
            size_t i)
{
    int ok = same_bytes(got->row, got->row_len, want->row, want->row_len) &&
             same_bytes(got->family, got->family_len, want->family, want->family_len) &&
             same_bytes(got->qualifier, got->qualifier_len, want->qualifier, want->qualifier_len) &&
             got->ts == want->ts && got->type == want->type &&
             same_bytes(got->value, got->value_len, want->value, want->value_len) &&
             (!tags || same_bytes(got->tags, got->tags_len, want->tags, want->tags_len)) &&
             (!mvcc || got->mvcc == want->mvcc);
    if (!ok)
        fail_msg("%s: cell %zu differs", what, i);
}

/* First index whose cell is >= key (n if none). */
static size_t
lower_bound(const cellset *cs, const kiln_cell *key)
{
    size_t lo = 0, hi = cs->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cell_compare(&cs->c[mid], key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* First index whose cell is > key. */
static size_t
upper_bound(const cellset *cs, const kiln_cell *key)
{
    size_t lo = 0, hi = cs->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cell_compare(&cs->c[mid], key) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ------------------------------------------------------------------ write + read */

static void
write_file(const char *path, const hfile_writer_options *o, const cellset *cs)
{
    hfile_writer *w;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(hfile_writer_open(path, o, &w, &err), KILN_OK);
    for (size_t i = 0; i < cs->n; i++)
        if (hfile_writer_add(w, &cs->c[i], &err) != KILN_OK)
            fail_msg("%s: %s", path, err.msg);
    if (hfile_writer_finish(w, NULL, &err) != KILN_OK)
        fail_msg("%s: %s", path, err.msg);
}

/* A key to seek to: an existing cell, a first-on-row of an existing or random
 * row, or a random cell that is probably absent. */
static void
seek_key(const cellset *cs, kiln_cell *k, uint8_t *buf)
{
    int how = (int)(rnd() % 4);
    if (cs->n > 0 && how == 0) {
        *k = cs->c[rnd() % cs->n];
        return;
    }
    if (cs->n > 0 && how == 1) {
        const kiln_cell *c = &cs->c[rnd() % cs->n];
        cell_first_on_row(k, c->row, c->row_len);
        return;
    }
    memset(k, 0, sizeof *k);
    size_t rl = rnd() % 10;
    for (size_t i = 0; i < rl; i++)
        buf[i] = (uint8_t)(rnd() % 3 ? 'a' + rnd() % 4 : rnd());
    k->row = buf;
    k->row_len = (uint32_t)rl;
    if (how == 2) {
        cell_first_on_row(k, buf, (uint32_t)rl);
        return;
    }
    k->family = (const uint8_t *)"cf";
    k->family_len = 2;
    k->qualifier = buf + 10;
    k->qualifier_len = (uint32_t)(rnd() % 4);
    for (size_t i = 0; i < k->qualifier_len; i++)
        buf[10 + i] = (uint8_t)('a' + rnd() % 4);
    k->ts = 1700000000000LL + (int64_t)(rnd() % 1000);
    k->type = cell_types[rnd() % sizeof cell_types];
}

static void
read_back(const char *path, const hfile_writer_options *o, const cellset *cs, block_cache *bc)
{
    hfile_reader *r;
    kiln_err err;
    status_clear(&err);
    if (hfile_reader_open(path, bc, &r, &err) != KILN_OK)
        fail_msg("open %s: %s", path, err.msg);
    int tags = o->include_tags, mvcc = o->include_mvcc;

    uint64_t checked = 0;
    if (hfile_reader_check(r, &checked, &err) != KILN_OK)
        fail_msg("check %s: %s", path, err.msg);
    assert_int_equal(checked, cs->n);
    assert_int_equal(hfile_reader_entry_count(r), cs->n);
    assert_int_equal(hfile_reader_bloom_type(r), cs->n ? o->bloom : hfile_reader_bloom_type(r));
    kbuf kb = KBUF_INIT;
    if (cs->n > 0) {
        cell_key_append(&cs->c[0], &kb);
        assert_true(kslice_eq(hfile_reader_first_key(r), buf_slice(&kb)));
        buf_reset(&kb);
        cell_key_append(&cs->c[cs->n - 1], &kb);
        assert_true(kslice_eq(hfile_reader_last_key(r), buf_slice(&kb)));
    } else {
        assert_int_equal(hfile_reader_first_key(r).n, 0);
    }

    hfile_iter *it = hfile_iter_new(r);
    /* forward */
    assert_int_equal(hfile_iter_seek_first(it, &err), KILN_OK);
    for (size_t i = 0; i < cs->n; i++) {
        assert_true(hfile_iter_valid(it));
        expect_cell(hfile_iter_cell(it), &cs->c[i], tags, mvcc, "forward", i);
        assert_int_equal(hfile_iter_next(it, &err), KILN_OK);
    }
    assert_false(hfile_iter_valid(it));
    /* backward */
    assert_int_equal(hfile_iter_seek_last(it, &err), KILN_OK);
    for (size_t i = cs->n; i-- > 0;) {
        assert_true(hfile_iter_valid(it));
        expect_cell(hfile_iter_cell(it), &cs->c[i], tags, mvcc, "backward", i);
        assert_int_equal(hfile_iter_prev(it, &err), KILN_OK);
    }
    assert_false(hfile_iter_valid(it));
    /* seeks, then a few steps either way */
    uint8_t buf[32];
    for (int s = 0; s < 300; s++) {
        kiln_cell k;
        seek_key(cs, &k, buf);
        size_t want = lower_bound(cs, &k);
        assert_int_equal(hfile_iter_seek(it, &k, &err), KILN_OK);
        if (want == cs->n) {
            assert_false(hfile_iter_valid(it));
        } else {
            for (size_t j = want; j < cs->n && j < want + 3; j++) {
                assert_true(hfile_iter_valid(it));
                expect_cell(hfile_iter_cell(it), &cs->c[j], tags, mvcc, "seek", j);
                assert_int_equal(hfile_iter_next(it, &err), KILN_OK);
            }
        }
        size_t after = upper_bound(cs, &k);
        assert_int_equal(hfile_iter_seek_for_prev(it, &k, &err), KILN_OK);
        if (after == 0) {
            assert_false(hfile_iter_valid(it));
        } else {
            for (size_t j = after; j-- > 0 && j + 3 >= after;) {
                assert_true(hfile_iter_valid(it));
                expect_cell(hfile_iter_cell(it), &cs->c[j], tags, mvcc, "seek_for_prev", j);
                assert_int_equal(hfile_iter_prev(it, &err), KILN_OK);
            }
        }
    }
    hfile_iter_free(it);

    /* blooms: positive for everything written */
    size_t df_rows = 0;
    for (size_t i = 0; i < cs->n; i++) {
        const kiln_cell *c = &cs->c[i];
        assert_int_equal(hfile_reader_may_contain_row(r, c->row, c->row_len, &err), 1);
        assert_int_equal(hfile_reader_may_contain_rowcol(r, c->row, c->row_len, c->qualifier,
                                                         c->qualifier_len, &err),
                         1);
        if (c->type == CELL_TYPE_DELETE_FAMILY || c->type == CELL_TYPE_DELETE_FAMILY_VERSION) {
            assert_int_equal(hfile_reader_may_have_delete_family(r, c->row, c->row_len, &err), 1);
            df_rows++;
        }
    }
    assert_int_equal(err.code, KILN_OK);
    assert_int_equal(hfile_reader_has_delete_family_bloom(r), df_rows > 0 && o->bloom != BLOOM_ROWCOL);
    /* and mostly negative for rows that are not there */
    if (o->bloom == BLOOM_ROW && cs->n > 0) {
        int positives = 0;
        for (int i = 0; i < 1000; i++) {
            uint8_t row[24];
            memcpy(row, "absent-", 7);
            for (int j = 7; j < 24; j++)
                row[j] = (uint8_t)rnd();
            positives += hfile_reader_may_contain_row(r, row, sizeof row, &err);
        }
        assert_true(positives < 200);
    }
    buf_free(&kb);
    hfile_reader_close(r);
}

static void
round_trip(const char *name, const hfile_writer_options *o, const cellset *cs)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
    write_file(path, o, cs);
    read_back(path, o, cs, cache);
    read_back(path, o, cs, NULL);   /* uncached reads too */
    unlink(path);
}

/* ------------------------------------------------------------------ tests */

static void
codecs_blooms_block_sizes(void **state)
{
    static const kiln_codec codecs[] = {CODEC_NONE, CODEC_GZ, CODEC_SNAPPY, CODEC_ZSTD, CODEC_LZ4};
    static const kiln_bloom_type blooms[] = {BLOOM_NONE, BLOOM_ROW, BLOOM_ROWCOL};
    static const size_t block_sizes[] = {64, 2000, 65536};
    cellset cs;
    cellset_random(&cs, 2500, 1, 1);
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++)
        for (size_t j = 0; j < sizeof blooms / sizeof blooms[0]; j++)
            for (size_t k = 0; k < sizeof block_sizes / sizeof block_sizes[0]; k++) {
                hfile_writer_options o;
                hfile_writer_options_init(&o);
                o.sync = 0;
                o.codec = codecs[i];
                o.bloom = blooms[j];
                o.block_size = block_sizes[k];
                o.bloom_chunk_bytes = k == 0 ? 256 : BLOOM_CHUNK_BYTES_DEFAULT;
                char name[64];
                snprintf(name, sizeof name, "rt-%d-%d-%zu.hfile", (int)codecs[i], (int)blooms[j],
                         block_sizes[k]);
                round_trip(name, &o, &cs);
            }
    cellset_free(&cs);
}

static void
without_tags_or_mvcc(void **state)
{
    cellset cs;
    cellset_random(&cs, 1500, 0, 0);
    hfile_writer_options o;
    hfile_writer_options_init(&o);
    o.sync = 0;
    o.block_size = 700;
    o.include_tags = 0;
    o.include_mvcc = 0;
    round_trip("plain.hfile", &o, &cs);
    o.include_mvcc = 1;
    round_trip("mvcc-only.hfile", &o, &cs);
    cellset_free(&cs);
}

static void
three_level_index(void **state)
{
    cellset cs;
    cellset_random(&cs, 30000, 1, 1);
    hfile_writer_options o;
    hfile_writer_options_init(&o);
    o.sync = 0;
    o.codec = CODEC_SNAPPY;
    o.block_size = 64;
    o.index_block_max = 512;
    char path[256];
    snprintf(path, sizeof path, "%s/deep.hfile", tmp_dir);
    write_file(path, &o, &cs);
    hfile_reader *r;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(hfile_reader_open(path, cache, &r, &err), KILN_OK);
    assert_true(hfile_reader_trailer(r)->num_data_index_levels >= 3);
    hfile_reader_close(r);
    read_back(path, &o, &cs, cache);
    unlink(path);
    cellset_free(&cs);
}

static void
empty_and_tiny_files(void **state)
{
    hfile_writer_options o;
    hfile_writer_options_init(&o);
    o.sync = 0;
    cellset cs = {NULL, 0};
    round_trip("empty.hfile", &o, &cs);
    cellset_random(&cs, 1, 1, 1);
    round_trip("one.hfile", &o, &cs);
    cellset_free(&cs);
    /* a single empty-row cell with empty everything */
    kiln_cell c;
    memset(&c, 0, sizeof c);
    c.type = CELL_TYPE_DELETE_FAMILY;
    cellset one = {&c, 1};
    round_trip("empty-row.hfile", &o, &one);
}

static int
stop_now(void *arg)
{
    return ++*(int *)arg > 2;
}

/* Prefetch reads every data block into the cache (a full scan afterwards
 * misses nothing but index blocks it had already read), stops at its byte
 * budget and when told to, and is idempotent. */
static void
prefetch_fills_cache(void **state)
{
    cellset cs;
    cellset_random(&cs, 20000, 1, 1);
    hfile_writer_options o;
    hfile_writer_options_init(&o);
    o.sync = 0;
    o.codec = CODEC_SNAPPY;
    o.block_size = 256;
    o.index_block_max = 512;   /* a multi-level index: the cursor crosses leaves */
    char path[256];
    snprintf(path, sizeof path, "%s/prefetch.hfile", tmp_dir);
    write_file(path, &o, &cs);
    kiln_err err;
    status_clear(&err);

    /* a budget of one byte caches one block, then stops */
    block_cache *bc = block_cache_new(64u << 20);
    hfile_reader *r;
    assert_int_equal(hfile_reader_open(path, bc, &r, &err), KILN_OK);
    uint64_t before = hfile_reader_cached_bytes(r), budget = 1;
    assert_int_equal(hfile_reader_prefetch(r, &budget, NULL, NULL, &err), KILN_OK);
    assert_int_equal(budget, 0);
    uint64_t one = hfile_reader_cached_bytes(r) - before;
    /* one data block of about 256 bytes, with the index blocks on its path
     * (512 bytes each on disk, decoded with their row words and the
     * locations of their entries): far from the file's megabytes */
    assert_true(one > 0 && one < 8192);
    /* a stop callback ends it early */
    int calls = 0;
    budget = UINT64_MAX;
    assert_int_equal(hfile_reader_prefetch(r, &budget, stop_now, &calls, &err), KILN_OK);
    assert_int_equal(calls, 3);
    uint64_t partial = UINT64_MAX - budget;
    assert_true(partial > 0);
    /* then the whole file */
    budget = UINT64_MAX;
    assert_int_equal(hfile_reader_prefetch(r, &budget, NULL, NULL, &err), KILN_OK);
    uint64_t rest = UINT64_MAX - budget;
    uint64_t data_blocks = 0;
    block_cache_stats st0, st1;
    block_cache_get_stats(bc, &st0);
    /* nothing left to read: a second prefetch adds nothing, a scan misses nothing */
    budget = UINT64_MAX;
    assert_int_equal(hfile_reader_prefetch(r, &budget, NULL, NULL, &err), KILN_OK);
    assert_int_equal(budget, UINT64_MAX);
    hfile_iter *it = hfile_iter_new(r);
    assert_int_equal(hfile_iter_seek_first(it, &err), KILN_OK);
    size_t n = 0;
    while (hfile_iter_valid(it)) {
        n++;
        assert_int_equal(hfile_iter_next(it, &err), KILN_OK);
    }
    hfile_iter_free(it);
    assert_int_equal(n, cs.n);
    block_cache_get_stats(bc, &st1);
    assert_int_equal(st1.misses, st0.misses);
    data_blocks = st1.entries;
    assert_true(data_blocks > 100);
    assert_true(one + partial + rest <= hfile_reader_cached_bytes(r));
    hfile_reader_close(r);
    /* closing the file drops its blocks */
    block_cache_get_stats(bc, &st1);
    assert_int_equal(st1.entries, 0);
    block_cache_free(bc);

    /* a reader with its own cache does nothing */
    assert_int_equal(hfile_reader_open(path, NULL, &r, &err), KILN_OK);
    budget = UINT64_MAX;
    assert_int_equal(hfile_reader_prefetch(r, &budget, NULL, NULL, &err), KILN_OK);
    assert_int_equal(budget, UINT64_MAX);
    assert_int_equal(hfile_reader_cached_bytes(r), 0);
    hfile_reader_close(r);
    unlink(path);
    cellset_free(&cs);
}

static int
setup(void **state)
{
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/kiln-hfrt-XXXXXX");
    if (mkdtemp(tmp_dir) == NULL)
        return -1;
    cache = block_cache_new(8u << 20);
    return 0;
}

static int
teardown(void **state)
{
    block_cache_free(cache);
    return rmdir(tmp_dir);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_hfile_roundtrip: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(codecs_blooms_block_sizes),
        cmocka_unit_test(without_tags_or_mvcc),
        cmocka_unit_test(three_level_index),
        cmocka_unit_test(empty_and_tiny_files),
        cmocka_unit_test(prefetch_fills_cache),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
