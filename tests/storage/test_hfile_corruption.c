/* test_hfile_corruption.c -- damaged HFiles give a clean error, never a crash,
 * a hang, a leak or a wrong answer.
 *
 * Each HBase vector (tests/data/hbase) is copied to a temp file and
 * damaged: single bytes flipped (every byte of the small files, a strided
 * sample of the big ones), the file truncated at many lengths, ranges zeroed.
 * Then open, full iteration both ways, seeks, bloom checks and
 * hfile_reader_check must each either fail with KILN_CORRUPTION or
 * KILN_UNSUPPORTED and a message naming the file, or succeed with exactly
 * the original cells. A second pass flips bytes inside blocks and recomputes
 * the block checksums, so the damage reaches the decoders: then anything
 * that succeeds must at least be self-consistent. ASan/UBSan runs of this
 * program catch the memory errors and leaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/base/buf.h"
#include "storage/hfile/cell.h"
#include "storage/base/coding.h"
#include "storage/base/crc32c.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_format.h"
#include "storage/base/compress.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/hfile/hfile_writer.h"
#include "tests/support/test_util.h"

#define TESTDATA "tests/data/hbase/"

static const char *const vector_names[] = {
    "hbase264_none_rowbloom_10cells.hfile",     "hbase264_none_rowbloom_15blocks.hfile",
    "rsflush_none_rowbloom_3cells.hfile",       "rsflush_none_deletefamily_dfbloom.hfile",
    "hbase264_snappy_tags_rowbloom.hfile",      "hbase264_zstd_tags_39blocks.hfile",
    "hbase264_gz_tags_rowbloom.hfile",          "hbase264_gz_fastdiff_tags_rowbloom.hfile",
    "hbase264_none_fastdiff_tags_rowbloom.hfile",
};
#define NVECTORS (sizeof vector_names / sizeof vector_names[0])

static uint64_t rng_state;
static char tmpdir[256];
static char damage[160];    /* what was done to the file, for failure messages */

static uint64_t
rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* ------------------------------------------------------------------ the original */

typedef struct ref_cell {
    kbuf key, value, tags;
    uint64_t mvcc;
} ref_cell;

typedef struct ref_file {
    char src[512];
    kbuf bytes;
    ref_cell *cells;
    size_t n;
    /* block layout of the original, for re-checksumming: offsets and data sizes */
    uint64_t *blk_off;
    uint32_t *blk_data;     /* onDiskDataSizeWithHeader */
    uint32_t *blk_size;     /* on-disk size with header and checksums */
    uint32_t *blk_bpc;
    size_t nblk;
} ref_file;

static void
ref_load(ref_file *rf, const char *name)
{
    memset(rf, 0, sizeof *rf);
    snprintf(rf->src, sizeof rf->src, "%s%s", TESTDATA, name);
    kiln_err err;
    status_clear(&err);
    if (env_read_file(rf->src, &rf->bytes, &err) != KILN_OK)
        fail_msg("test vector missing: %s (run from the repository root): %s", rf->src, err.msg);
    hfile_reader *r;
    if (hfile_reader_open(rf->src, NULL, &r, &err) != KILN_OK)
        fail_msg("%s", err.msg);
    hfile_iter *it = hfile_iter_new(r);
    size_t cap = 0;
    for (hfile_iter_seek_first(it, &err); hfile_iter_valid(it); hfile_iter_next(it, &err)) {
        const kiln_cell *c = hfile_iter_cell(it);
        if (rf->n == cap) {
            cap = cap ? cap * 2 : 64;
            rf->cells = realloc(rf->cells, cap * sizeof *rf->cells);
        }
        ref_cell *rc = &rf->cells[rf->n++];
        memset(rc, 0, sizeof *rc);
        cell_key_append(c, &rc->key);
        buf_append(&rc->value, c->value, c->value_len);
        buf_append(&rc->tags, c->tags, c->tags_len);
        rc->mvcc = c->mvcc;
    }
    assert_int_equal(err.code, KILN_OK);
    hfile_iter_free(it);
    hfile_reader_close(r);
    /* walk the blocks up to the trailer */
    uint64_t off = 0, end = rf->bytes.len - HFILE_TRAILER_SIZE;
    size_t bcap = 0;
    while (off < end) {
        hfile_block_header h;
        assert_int_equal(hfile_block_header_decode(rf->bytes.data + off, &h, NULL), KILN_OK);
        if (rf->nblk == bcap) {
            bcap = bcap ? bcap * 2 : 32;
            rf->blk_off = realloc(rf->blk_off, bcap * sizeof *rf->blk_off);
            rf->blk_data = realloc(rf->blk_data, bcap * sizeof *rf->blk_data);
            rf->blk_size = realloc(rf->blk_size, bcap * sizeof *rf->blk_size);
            rf->blk_bpc = realloc(rf->blk_bpc, bcap * sizeof *rf->blk_bpc);
        }
        rf->blk_off[rf->nblk] = off;
        rf->blk_data[rf->nblk] = h.on_disk_data_size_with_header;
        rf->blk_size[rf->nblk] = h.on_disk_size_without_header + HFILE_BLOCK_HEADER_SIZE;
        rf->blk_bpc[rf->nblk] = h.bytes_per_checksum;
        rf->nblk++;
        off += h.on_disk_size_without_header + HFILE_BLOCK_HEADER_SIZE;
    }
    assert_int_equal(off, end);
}

static void
ref_free(ref_file *rf)
{
    for (size_t i = 0; i < rf->n; i++) {
        buf_free(&rf->cells[i].key);
        buf_free(&rf->cells[i].value);
        buf_free(&rf->cells[i].tags);
    }
    free(rf->cells);
    free(rf->blk_off);
    free(rf->blk_data);
    free(rf->blk_size);
    free(rf->blk_bpc);
    buf_free(&rf->bytes);
}

static int
cell_is(const kiln_cell *c, const ref_cell *rc)
{
    kbuf k = KBUF_INIT;
    cell_key_append(c, &k);
    int same = kslice_eq(buf_slice(&k), buf_slice(&rc->key)) &&
               kslice_eq(kslice_make(c->value, c->value_len), buf_slice(&rc->value)) &&
               kslice_eq(kslice_make(c->tags, c->tags_len), buf_slice(&rc->tags)) &&
               c->mvcc == rc->mvcc;
    buf_free(&k);
    return same;
}

/* ------------------------------------------------------------------ damage and verdict */

static void
write_bytes(const char *path, const uint8_t *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, p, n), (ssize_t)n);
    close(fd);
}

typedef struct verdict {
    int errors;     /* operations that failed cleanly */
    int equal;      /* all operations succeeded with the original results */
} verdict;

/* A failed operation must be corruption (or unsupported) and name the file. */
static void
expect_clean_error(kiln_status s, const kiln_err *err, const char *path, const char *what)
{
    if (s != KILN_CORRUPTION && s != KILN_UNSUPPORTED)
        fail_msg("%s of %s (%s): unexpected status %d: %s", what, path, damage, s, err->msg);
    if (strstr(err->msg, path) == NULL)
        fail_msg("%s of %s (%s): message does not name the file: %s", what, path, damage,
                 err->msg);
}

/* Open, iterate both ways, seek, bloom-check and check the damaged file.
 * strict: every success must reproduce the original exactly (the damage was
 * not hidden from the checksums); otherwise successes must be consistent. */
static void
exercise(const char *path, const ref_file *rf, int strict, verdict *v)
{
    kiln_err err;
    status_clear(&err);
    hfile_reader *r = NULL;
    kiln_status s = hfile_reader_open(path, NULL, &r, &err);
    if (s != KILN_OK) {
        expect_clean_error(s, &err, path, "open");
        v->errors++;
        return;
    }
    int all_ok = 1;
    /* forward */
    hfile_iter *it = hfile_iter_new(r);
    size_t i = 0;
    kbuf fw = KBUF_INIT; /* forward keys, for the self-consistency check */
    size_t fw_n = 0;
    for (s = hfile_iter_seek_first(it, &err); s == KILN_OK && hfile_iter_valid(it);
         s = hfile_iter_next(it, &err)) {
        const kiln_cell *c = hfile_iter_cell(it);
        if (strict && (i >= rf->n || !cell_is(c, &rf->cells[i])))
            fail_msg("%s (%s): forward cell %zu differs from the original without an error", path, damage, i);
        kbuf k = KBUF_INIT;
        cell_key_append(c, &k);
        buf_append_be32(&fw, (uint32_t)k.len);
        buf_append(&fw, k.data, k.len);
        buf_free(&k);
        fw_n++;
        i++;
    }
    int fw_ok = s == KILN_OK;
    if (!fw_ok) {
        expect_clean_error(s, &err, path, "forward iteration");
        all_ok = 0;
    } else if (strict && i != rf->n) {
        fail_msg("%s (%s): %zu cells forward, the original has %zu", path, damage, i, rf->n);
    }
    /* backward */
    status_clear(&err);
    size_t j = rf->n;
    size_t back_n = 0;
    size_t fw_pos = fw.len;
    (void)fw_pos;
    for (s = hfile_iter_seek_last(it, &err); s == KILN_OK && hfile_iter_valid(it);
         s = hfile_iter_prev(it, &err)) {
        const kiln_cell *c = hfile_iter_cell(it);
        back_n++;
        if (strict) {
            if (j == 0 || !cell_is(c, &rf->cells[j - 1]))
                fail_msg("%s (%s): backward cell differs from the original without an error", path, damage);
            j--;
        }
        if (back_n > fw_n + 1 && fw_ok)
            fail_msg("%s (%s): backward iteration yields more cells than forward", path, damage);
    }
    if (s != KILN_OK) {
        expect_clean_error(s, &err, path, "backward iteration");
        all_ok = 0;
    } else if (fw_ok && back_n != fw_n) {
        fail_msg("%s (%s): %zu cells forward but %zu backward, no error", path, damage, fw_n, back_n);
    }
    /* seeks to a few original keys */
    for (int k = 0; k < 8 && rf->n; k++) {
        const ref_cell *rc = &rf->cells[rnd() % rf->n];
        kiln_cell key;
        assert_int_equal(cell_key_decode(rc->key.data, rc->key.len, &key, NULL), KILN_OK);
        status_clear(&err);
        s = rnd() % 2 ? hfile_iter_seek(it, &key, &err) : hfile_iter_seek_for_prev(it, &key, &err);
        if (s != KILN_OK) {
            expect_clean_error(s, &err, path, "seek");
            all_ok = 0;
        } else if (strict && (!hfile_iter_valid(it) || cell_compare(hfile_iter_cell(it), &key) != 0)) {
            fail_msg("%s (%s): seek to an existing key missed without an error", path, damage);
        }
    }
    hfile_iter_free(it);
    /* blooms */
    for (size_t k = 0; k < rf->n; k++) {
        kiln_cell key;
        assert_int_equal(cell_key_decode(rf->cells[k].key.data, rf->cells[k].key.len, &key, NULL),
                         KILN_OK);
        status_clear(&err);
        int yes = hfile_reader_may_contain_row(r, key.row, key.row_len, &err);
        if (err.code != KILN_OK) {
            expect_clean_error(err.code, &err, path, "bloom check");
            all_ok = 0;
            break;
        }
        if (!yes && strict)
            fail_msg("%s (%s): the bloom lost a row without an error", path, damage);
    }
    /* full check */
    status_clear(&err);
    uint64_t cells = 0;
    s = hfile_reader_check(r, &cells, &err);
    if (s != KILN_OK) {
        expect_clean_error(s, &err, path, "check");
        all_ok = 0;
    } else if (strict && cells != rf->n) {
        fail_msg("%s (%s): check passed with %llu cells, the original has %zu", path, damage,
                 (unsigned long long)cells, rf->n);
    } else if (!strict && fw_ok && cells != fw_n) {
        fail_msg("%s (%s): check passed with %llu cells, iteration saw %zu", path, damage,
                 (unsigned long long)cells, fw_n);
    }
    buf_free(&fw);
    hfile_reader_close(r);
    if (all_ok)
        v->equal++;
    else
        v->errors++;
}

/* ------------------------------------------------------------------ tests */

static void
testdata_present(void **state)
{
    struct stat st;
    if (stat(TESTDATA, &st) != 0 || !S_ISDIR(st.st_mode))
        fail_msg("test vectors missing: %s (run from the repository root)", TESTDATA);
}

/* Flip one byte at a time: every byte of files up to 6 KiB, about 3000
 * evenly spread bytes (every block and the trailer) of the larger ones. */
static void
flipped_bytes(void **state)
{
    char path[512];
    snprintf(path, sizeof path, "%s/flip.hfile", tmpdir);
    for (size_t v = 0; v < NVECTORS; v++) {
        ref_file rf;
        ref_load(&rf, vector_names[v]);
        write_bytes(path, rf.bytes.data, rf.bytes.len);
        int fd = open(path, O_WRONLY);
        assert_true(fd >= 0);
        size_t n = rf.bytes.len;
        size_t stride = n <= 6 * 1024 ? 1 : n / 3000;
        verdict vd = {0, 0};
        for (size_t off = 0; off < n; off += stride) {
            uint8_t orig = rf.bytes.data[off];
            uint8_t bad = (uint8_t)(orig ^ (1u << (rnd() % 8)));
            snprintf(damage, sizeof damage, "%s: byte %zu: %02x -> %02x", vector_names[v], off,
                     orig, bad);
            assert_int_equal(pwrite(fd, &bad, 1, (off_t)off), 1);
            exercise(path, &rf, 1, &vd);
            assert_int_equal(pwrite(fd, &orig, 1, (off_t)off), 1);
        }
        close(fd);
        /* nearly every byte is guarded: a flip goes unnoticed only where it
         * cannot change the results */
        assert_true(vd.errors > 0);
        printf("  %s: %d flips caught, %d harmless\n", vector_names[v], vd.errors, vd.equal);
        ref_free(&rf);
    }
    unlink(path);
}

static void
truncated_files(void **state)
{
    char path[512];
    snprintf(path, sizeof path, "%s/trunc.hfile", tmpdir);
    for (size_t v = 0; v < NVECTORS; v++) {
        ref_file rf;
        ref_load(&rf, vector_names[v]);
        size_t n = rf.bytes.len;
        verdict vd = {0, 0};
        size_t step = n / 300 + 1;
        for (size_t len = 0; len < n; len += step) {
            snprintf(damage, sizeof damage, "%s: truncated to %zu bytes", vector_names[v], len);
            write_bytes(path, rf.bytes.data, len);
            exercise(path, &rf, 1, &vd);
        }
        /* right at the edges of the trailer too */
        for (size_t cut = 1; cut < 40; cut++) {
            snprintf(damage, sizeof damage, "%s: last or first %zu bytes cut", vector_names[v],
                     cut);
            write_bytes(path, rf.bytes.data, n - cut);
            exercise(path, &rf, 1, &vd);
            write_bytes(path, rf.bytes.data + cut, n - cut); /* a prefix lost */
            exercise(path, &rf, 1, &vd);
        }
        assert_int_equal(vd.equal, 0);
        ref_free(&rf);
    }
    unlink(path);
}

static void
zeroed_ranges(void **state)
{
    char path[512];
    snprintf(path, sizeof path, "%s/zero.hfile", tmpdir);
    kbuf copy = KBUF_INIT;
    for (size_t v = 0; v < NVECTORS; v++) {
        ref_file rf;
        ref_load(&rf, vector_names[v]);
        size_t n = rf.bytes.len;
        verdict vd = {0, 0};
        for (int round = 0; round < 150; round++) {
            buf_reset(&copy);
            buf_append(&copy, rf.bytes.data, n);
            size_t off = (size_t)(rnd() % n);
            size_t len = 1 + (size_t)(rnd() % (round % 3 == 0 ? 8 : 4096));
            if (len > n - off)
                len = n - off;
            memset(copy.data + off, 0, len);
            snprintf(damage, sizeof damage, "%s: %zu bytes zeroed at %zu", vector_names[v], len,
                     off);
            write_bytes(path, copy.data, n);
            exercise(path, &rf, 1, &vd);
        }
        /* the whole trailer, the whole load-on-open section */
        buf_reset(&copy);
        buf_append(&copy, rf.bytes.data, n);
        memset(copy.data + n - HFILE_TRAILER_SIZE, 0, HFILE_TRAILER_SIZE);
        snprintf(damage, sizeof damage, "%s: trailer zeroed", vector_names[v]);
        write_bytes(path, copy.data, n);
        exercise(path, &rf, 1, &vd);
        assert_true(vd.errors > 0);
        ref_free(&rf);
    }
    buf_free(&copy);
    unlink(path);
}

/* Recompute the checksums of the block holding off, as a writer with a bug
 * (or a deliberate forger) would have: the damage reaches the decoders. */
static void
refresh_checksums(const ref_file *rf, uint8_t *p, size_t off)
{
    for (size_t b = 0; b < rf->nblk; b++) {
        if (off < rf->blk_off[b] || off >= rf->blk_off[b] + rf->blk_size[b])
            continue;
        uint8_t *blk = p + rf->blk_off[b];
        size_t data = rf->blk_data[b];
        uint32_t bpc = rf->blk_bpc[b];
        for (size_t c = 0, at = 0; at < data; c++, at += bpc) {
            size_t len = data - at < bpc ? data - at : bpc;
            coding_put_be32(blk + data + 4 * c, crc32c_value(blk + at, len));
        }
        return;
    }
}

/* Damage inside blocks with valid checksums: decoders and structure checks
 * must stop it, or the results must be self-consistent. Also small runs of
 * random bytes. */
static void
damage_behind_checksums(void **state)
{
    char path[512];
    snprintf(path, sizeof path, "%s/forged.hfile", tmpdir);
    kbuf copy = KBUF_INIT;
    for (size_t v = 0; v < NVECTORS; v++) {
        ref_file rf;
        ref_load(&rf, vector_names[v]);
        size_t n = rf.bytes.len, end = n - HFILE_TRAILER_SIZE;
        verdict vd = {0, 0};
        for (int round = 0; round < 1500; round++) {
            buf_reset(&copy);
            buf_append(&copy, rf.bytes.data, n);
            size_t off = (size_t)(rnd() % end);
            int kind = (int)(rnd() % 4);
            if (kind == 0) {
                copy.data[off] ^= (uint8_t)(1u << (rnd() % 8));
            } else if (kind == 1) {
                copy.data[off] = (uint8_t)rnd();
            } else if (kind == 2) {
                copy.data[off] = rnd() % 2 ? 0xFF : 0x00;
            } else {
                size_t len = 1 + (size_t)(rnd() % 6);
                for (size_t k = 0; k < len && off + k < end; k++)
                    copy.data[off + k] = (uint8_t)rnd();
            }
            refresh_checksums(&rf, copy.data, off);
            snprintf(damage, sizeof damage, "%s: damage of kind %d at %zu, checksums refreshed",
                     vector_names[v], kind, off);
            write_bytes(path, copy.data, n);
            exercise(path, &rf, 0, &vd);
        }
        assert_true(vd.errors > 0);
        printf("  %s: %d forged blocks rejected, %d read consistently\n", vector_names[v],
               vd.errors, vd.equal);
        ref_free(&rf);
    }
    buf_free(&copy);
    unlink(path);
}

static int
setup_tmp(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kiln_corruption_test.XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    return 0;
}

static int
teardown_tmp(void **state)
{
    rmdir(tmpdir);
    return 0;
}

/* A data block whose checksums pass but whose header declares a huge
 * uncompressed size (up to 1 GiB) is refused as corruption before anything
 * of that size is allocated, for every codec Kiln writes. */
static void
declared_size_bounded(void **state)
{
    (void)state;
    static const kiln_codec codecs[] = {CODEC_GZ, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD};
    static const uint32_t sizes[] = {0x40000000u, 0x10000000u, 0x01000000u, 0x00200000u};
    char path[512];
    snprintf(path, sizeof path, "%s/declared.hfile", tmpdir);
    int refused = 0;
    for (size_t ci = 0; ci < sizeof codecs / sizeof codecs[0]; ci++) {
        hfile_writer_options o;
        hfile_writer_options_init(&o);
        o.codec = codecs[ci];
        o.block_size = 4096;
        o.sync = 0;
        hfile_writer *w;
        kiln_err err;
        status_clear(&err);
        tu_must(hfile_writer_open(path, &o, &w, &err), &err);
        for (int i = 0; i < 2000; i++) {
            char row[16], val[64];
            snprintf(row, sizeof row, "r%06d", i);
            int vn = snprintf(val, sizeof val, "value-%d-%d", i, i * 7);
            kiln_cell c;
            memset(&c, 0, sizeof c);
            c.row = (const uint8_t *)row;
            c.row_len = (uint32_t)strlen(row);
            c.family = (const uint8_t *)"f";
            c.family_len = 1;
            c.qualifier = (const uint8_t *)"q";
            c.qualifier_len = 1;
            c.ts = 1;
            c.type = CELL_TYPE_PUT;
            c.value = (const uint8_t *)val;
            c.value_len = (uint32_t)vn;
            tu_must(hfile_writer_add(w, &c, &err), &err);
        }
        tu_must(hfile_writer_finish(w, NULL, &err), &err);
        kbuf b = KBUF_INIT;
        tu_must(env_read_file(path, &b, &err), &err);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            kbuf c = KBUF_INIT;
            buf_append(&c, b.data, b.len);
            /* the first data block is at offset 0: header bytes 12..15 are
             * its uncompressed size; then refresh its checksums */
            uint8_t *blk = c.data;
            coding_put_be32(blk + 12, sizes[si]);
            uint32_t bpc = coding_get_be32(blk + 25);
            uint32_t data = coding_get_be32(blk + 29);
            assert_true(bpc > 0 && data < c.len);
            for (size_t k = 0, at = 0; at < data; k++, at += bpc) {
                size_t len = data - at < bpc ? data - at : bpc;
                coding_put_be32(blk + data + 4 * k, crc32c_value(blk + at, len));
            }
            write_bytes(path, c.data, c.len);
            buf_free(&c);
            unsigned long big = kiln_alloc_big_count();
            hfile_reader *rd;
            status_clear(&err);
            kiln_status st = hfile_reader_open(path, NULL, &rd, &err);
            if (st == KILN_OK) {
                hfile_iter *it = hfile_iter_new(rd);
                st = hfile_iter_seek_first(it, &err);
                while (st == KILN_OK && hfile_iter_valid(it))
                    st = hfile_iter_next(it, &err);
                hfile_iter_free(it);
                hfile_reader_close(rd);
            }
            if (st != KILN_CORRUPTION)
                fail_msg("%s, declared size %u: status %d (%s)", compress_codec_name(codecs[ci]),
                         sizes[si], (int)st, err.msg);
            assert_non_null(strstr(err.msg, "offset 0"));
            if (kiln_alloc_big_count() != big)
                fail_msg("%s, declared size %u: allocated before refusing: %s",
                         compress_codec_name(codecs[ci]), sizes[si], err.msg);
            refused++;
        }
        buf_free(&b);
    }
    printf("  %d oversized declarations refused before allocation\n", refused);
    unlink(path);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_hfile_corruption: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(testdata_present),
        cmocka_unit_test(flipped_bytes),
        cmocka_unit_test(truncated_files),
        cmocka_unit_test(zeroed_ranges),
        cmocka_unit_test(damage_behind_checksums),
        cmocka_unit_test(declared_size_bounded),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
