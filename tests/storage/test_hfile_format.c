/* test_hfile_format.c -- the HFile building blocks: block header, checksums,
 * root and non-root index entries, FileInfo and trailer. Encoders are checked
 * against the bytes HBase wrote in the vectors (decode, re-encode, compare)
 * and against hand-computed bytes; encode/decode round-trip on random input
 * with empty and binary keys.
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

#include "storage/base/buf.h"
#include "storage/base/coding.h"
#include "storage/base/compress.h"
#include "storage/base/crc32c.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_format.h"
#include "storage/base/status.h"

#define TESTDATA "tests/data/hbase/"
#define VEC10 TESTDATA "hbase264_none_rowbloom_10cells.hfile"
#define VEC15 TESTDATA "hbase264_none_rowbloom_15blocks.hfile"

static uint64_t rng_state;

static uint64_t
rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void
load(const char *path, kbuf *b)
{
    kiln_err err;
    status_clear(&err);
    buf_init(b);
    assert_int_equal(env_read_file(path, b, &err), KILN_OK);
}

/* Random bytes: empty, short, or longer than one vint byte can say. */
static size_t
rnd_key(uint8_t *p, size_t cap)
{
    size_t lens[] = {0, 1, 5, 127, 128, 200, 1000};
    size_t n = lens[rnd() % (sizeof lens / sizeof lens[0])];
    if (n > cap)
        n = cap;
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd();
    return n;
}

/* ------------------------------------------------------------------ header + checksums */

static void
header_against_hbase(void **state)
{
    kbuf f;
    load(VEC10, &f);
    kiln_err err;
    status_clear(&err);
    /* The first data block of the 10-cell vector, by hand: */
    static const uint8_t want[33] = {'D', 'A', 'T', 'A', 'B', 'L', 'K', '*',
                                     0x00, 0x00, 0x01, 0x6c,   /* 364 = 360 + 4 CRC */
                                     0x00, 0x00, 0x01, 0x68,   /* 360 */
                                     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0x02,                     /* CRC32C */
                                     0x00, 0x00, 0x40, 0x00,   /* 16384 */
                                     0x00, 0x00, 0x01, 0x89};  /* 393 */
    assert_memory_equal(f.data, want, 33);
    hfile_block_header h;
    assert_int_equal(hfile_block_header_decode(f.data, &h, &err), KILN_OK);
    uint8_t out[33];
    hfile_block_header_encode(&h, out);
    assert_memory_equal(out, want, 33);

    /* checksums: one CRC32C of header + payload, stored after the payload */
    assert_int_equal(hfile_checksum_size(393, 16384), 4);
    uint8_t sums[4];
    hfile_checksum_compute(f.data, 393, 16384, sums);
    assert_memory_equal(sums, f.data + 393, 4);
    assert_int_equal(hfile_checksum_verify(2, f.data, 393, 16384, sums), -1);

    /* every block header of the 15-block vector re-encodes to its bytes */
    kbuf g;
    load(VEC15, &g);
    size_t off = 0, blocks = 0;
    while (off < g.len - HFILE_TRAILER_SIZE) {
        assert_int_equal(hfile_block_header_decode(g.data + off, &h, &err), KILN_OK);
        hfile_block_header_encode(&h, out);
        assert_memory_equal(out, g.data + off, 33);
        size_t n = h.on_disk_data_size_with_header;
        uint8_t s[8];
        assert_int_equal(hfile_checksum_size(n, 16384), h.on_disk_size_without_header - (n - 33));
        hfile_checksum_compute(g.data + off, n, 16384, s);
        assert_memory_equal(s, g.data + off + n, hfile_checksum_size(n, 16384));
        off += 33 + h.on_disk_size_without_header;
        blocks++;
    }
    assert_int_equal(blocks, 20);
    buf_free(&f);
    buf_free(&g);
}

static void
checksum_chunks(void **state)
{
    assert_int_equal(hfile_checksum_size(0, 16384), 0);
    assert_int_equal(hfile_checksum_size(33, 16384), 4);
    assert_int_equal(hfile_checksum_size(16384, 16384), 4);
    assert_int_equal(hfile_checksum_size(16385, 16384), 8);
    assert_int_equal(hfile_checksum_size(3 * 16384 + 1, 16384), 16);
    assert_int_equal(hfile_checksum_size(100, 0), 0);
    size_t n = 40000 + rnd() % 20000;
    uint8_t *p = kiln_malloc(n);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd();
    size_t ns = hfile_checksum_size(n, 16384);
    uint8_t *s = kiln_malloc(ns);
    hfile_checksum_compute(p, n, 16384, s);
    for (size_t c = 0; c * 16384 < n; c++) {
        size_t len = n - c * 16384 < 16384 ? n - c * 16384 : 16384;
        assert_int_equal(coding_get_be32(s + 4 * c), crc32c_value(p + c * 16384, len));
    }
    assert_int_equal(hfile_checksum_verify(HFILE_CHECKSUM_CRC32C, p, n, 16384, s), -1);
    p[20000] ^= 1;   /* second chunk */
    assert_int_equal(hfile_checksum_verify(HFILE_CHECKSUM_CRC32C, p, n, 16384, s), 1);
    free(p);
    free(s);
}

static void
header_round_trip(void **state)
{
    kiln_err err;
    for (int i = 0; i < 1000; i++) {
        hfile_block_header h, g;
        h.type = (hfile_block_type)(rnd() % HFILE_BLOCK_TRAILER);
        uint32_t data = 33 + (uint32_t)(rnd() % 1000000);
        uint32_t sums = (uint32_t)hfile_checksum_size(data, 16384);
        h.on_disk_data_size_with_header = data;
        h.on_disk_size_without_header = data - 33 + sums;
        h.uncompressed_size_without_header = (uint32_t)(rnd() % INT32_MAX);
        h.prev_block_offset = rnd() % 4 == 0 ? -1 : (int64_t)(rnd() >> 2);
        h.checksum_type = HFILE_CHECKSUM_CRC32C;
        h.bytes_per_checksum = 16384;
        uint8_t out[33];
        hfile_block_header_encode(&h, out);
        status_clear(&err);
        assert_int_equal(hfile_block_header_decode(out, &g, &err), KILN_OK);
        assert_int_equal(g.type, h.type);
        assert_int_equal(g.on_disk_size_without_header, h.on_disk_size_without_header);
        assert_int_equal(g.uncompressed_size_without_header, h.uncompressed_size_without_header);
        assert_true(g.prev_block_offset == h.prev_block_offset);
        assert_int_equal(g.on_disk_data_size_with_header, h.on_disk_data_size_with_header);
        assert_memory_equal(out, hfile_block_magic(h.type), 8);
    }
}

/* ------------------------------------------------------------------ index */

static void
root_index_against_hbase(void **state)
{
    kbuf f;
    load(VEC15, &f);
    kiln_err err;
    status_clear(&err);
    hfile_trailer t;
    assert_int_equal(hfile_trailer_decode(f.data, f.len, &t, &err), KILN_OK);
    const uint8_t *blk = f.data + t.load_on_open_data_offset;
    hfile_block_header h;
    assert_int_equal(hfile_block_header_decode(blk, &h, &err), KILN_OK);
    const uint8_t *payload = blk + 33;
    hfile_index_entry e[15];
    size_t used;
    assert_int_equal(hfile_root_index_decode(payload, h.uncompressed_size_without_header, 15, e,
                                             &used, &err),
                     KILN_OK);
    assert_int_equal(used, h.uncompressed_size_without_header);
    kbuf out = KBUF_INIT;
    size_t total = 0;
    for (int i = 0; i < 15; i++) {
        hfile_root_entry_append(&out, e[i].offset, e[i].on_disk_size, e[i].key.p, e[i].key.n);
        total += hfile_root_entry_size(e[i].key.n);
    }
    assert_int_equal(out.len, used);
    assert_int_equal(total, used);
    assert_memory_equal(out.data, payload, used);

    /* by hand: offset 303, size 303, key 00 07 "row-007" 00 LATEST Maximum */
    buf_reset(&out);
    static const uint8_t key[] = {0, 7, 'r', 'o', 'w', '-', '0', '0', '7', 0, 0x7f, 0xff, 0xff,
                                  0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    hfile_root_entry_append(&out, 303, 303, key, sizeof key);
    static const uint8_t want[] = {0, 0, 0, 0, 0, 0, 0x01, 0x2f, 0, 0, 0x01, 0x2f, 0x13};
    assert_int_equal(out.len, sizeof want + sizeof key);
    assert_memory_equal(out.data, want, sizeof want);
    assert_memory_equal(out.data + sizeof want, key, sizeof key);
    /* a 200-byte key needs a two-byte vint length: 0x8f 0xc8 */
    uint8_t big[200];
    memset(big, 'k', sizeof big);
    buf_reset(&out);
    hfile_root_entry_append(&out, 1, 2, big, sizeof big);
    assert_int_equal(out.len, 12 + 2 + 200);
    assert_int_equal(out.data[12], 0x8f);
    assert_int_equal(out.data[13], 0xc8);
    assert_int_equal(hfile_root_entry_size(200), 214);
    buf_free(&out);
    buf_free(&f);
}

static void
root_index_round_trip(void **state)
{
    kiln_err err;
    for (int iter = 0; iter < 100; iter++) {
        uint32_t n = (uint32_t)(rnd() % 50);
        uint8_t (*keys)[1000] = kiln_malloc((n + 1) * sizeof *keys);
        size_t *klen = kiln_malloc((n + 1) * sizeof *klen);
        uint64_t *offs = kiln_malloc((n + 1) * sizeof *offs);
        uint32_t *sizes = kiln_malloc((n + 1) * sizeof *sizes);
        kbuf out = KBUF_INIT;
        size_t total = 0;
        for (uint32_t i = 0; i < n; i++) {
            klen[i] = rnd_key(keys[i], sizeof keys[i]);
            offs[i] = rnd() >> 1;
            sizes[i] = (uint32_t)(rnd() % INT32_MAX);
            hfile_root_entry_append(&out, offs[i], sizes[i], keys[i], klen[i]);
            total += hfile_root_entry_size(klen[i]);
        }
        assert_int_equal(out.len, total);
        /* trailing bytes (mid-key metadata) are left for the caller */
        buf_append(&out, "0123456789abcdef", 16);
        hfile_index_entry *e = kiln_calloc(n + 1, sizeof *e);
        size_t used;
        status_clear(&err);
        assert_int_equal(hfile_root_index_decode(out.data, out.len, n, e, &used, &err), KILN_OK);
        assert_int_equal(used, total);
        for (uint32_t i = 0; i < n; i++) {
            assert_true(e[i].offset == offs[i]);
            assert_int_equal(e[i].on_disk_size, sizes[i]);
            assert_true(kslice_eq(e[i].key, kslice_make(keys[i], klen[i])));
        }
        free(e);
        free(keys);
        free(klen);
        free(offs);
        free(sizes);
        buf_free(&out);
    }
}

static void
nonroot_index(void **state)
{
    /* by hand: two entries, keys "a" and "" */
    hfile_index_entry in[2] = {{0x0102030405060708ULL, 0x11223344, {(const uint8_t *)"a", 1}},
                               {9, 10, {NULL, 0}}};
    kbuf out = KBUF_INIT;
    buf_append(&out, "xy", 2);   /* encoders append */
    hfile_nonroot_index_encode(&out, in, 2);
    static const uint8_t want[] = {'x', 'y',
                                   0, 0, 0, 2,                 /* count */
                                   0, 0, 0, 0, 0, 0, 0, 13,    /* secondary: 0, 13 */
                                   0, 0, 0, 25,                /* total */
                                   1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x22, 0x33, 0x44, 'a',
                                   0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 10};
    assert_int_equal(out.len, sizeof want);
    assert_memory_equal(out.data, want, sizeof want);

    kiln_err err;
    for (int iter = 0; iter < 100; iter++) {
        uint32_t n = (uint32_t)(rnd() % 40) + (iter == 0 ? 0 : 1);
        uint8_t (*keys)[1000] = kiln_malloc((n + 1) * sizeof *keys);
        hfile_index_entry *e = kiln_calloc(n + 1, sizeof *e);
        for (uint32_t i = 0; i < n; i++) {
            size_t kl = rnd_key(keys[i], sizeof keys[i]);
            e[i].offset = rnd() >> 1;
            e[i].on_disk_size = (uint32_t)(rnd() % INT32_MAX);
            e[i].key = kslice_make(keys[i], kl);
        }
        buf_reset(&out);
        hfile_nonroot_index_encode(&out, e, n);
        uint32_t count;
        status_clear(&err);
        assert_int_equal(hfile_nonroot_index_check(out.data, out.len, &count, &err), KILN_OK);
        assert_int_equal(count, n);
        for (uint32_t i = 0; i < n; i++) {
            hfile_index_entry g;
            hfile_nonroot_index_entry(out.data, i, &g);
            assert_true(g.offset == e[i].offset);
            assert_int_equal(g.on_disk_size, e[i].on_disk_size);
            assert_true(kslice_eq(g.key, e[i].key));
        }
        free(keys);
        free(e);
    }
    buf_free(&out);
}

/* ------------------------------------------------------------------ FileInfo */

/* The FILEINF2 payload of a vector (its codec is NONE). */
static kslice
fileinfo_payload(const kbuf *f)
{
    kiln_err err;
    status_clear(&err);
    hfile_trailer t;
    assert_int_equal(hfile_trailer_decode(f->data, f->len, &t, &err), KILN_OK);
    hfile_block_header h;
    assert_int_equal(hfile_block_header_decode(f->data + t.file_info_offset, &h, &err), KILN_OK);
    assert_int_equal(h.type, HFILE_BLOCK_FILE_INFO);
    return kslice_make(f->data + t.file_info_offset + 33, h.uncompressed_size_without_header);
}

static void
fileinfo_against_hbase(void **state)
{
    const char *vectors[] = {VEC10, VEC15, TESTDATA "rsflush_none_deletefamily_dfbloom.hfile"};
    for (size_t v = 0; v < 3; v++) {
        kbuf f;
        load(vectors[v], &f);
        kslice p = fileinfo_payload(&f);
        hfile_fileinfo fi;
        hfile_fileinfo_init(&fi);
        kiln_err err;
        status_clear(&err);
        assert_int_equal(hfile_fileinfo_decode(p.p, p.n, &fi, &err), KILN_OK);
        assert_true(fi.count >= 12);
        kbuf out = KBUF_INIT;
        hfile_fileinfo_encode(&fi, &out);
        assert_int_equal(out.len, p.n);
        assert_memory_equal(out.data, p.p, p.n);
        buf_free(&out);
        hfile_fileinfo_free(&fi);
        buf_free(&f);
    }

    /* by hand: PBUF, length 9, one pair {0a 07 {0a 01 'k'} {12 02 'v' 00}} */
    hfile_fileinfo fi;
    hfile_fileinfo_init(&fi);
    hfile_fileinfo_set(&fi, "k", "v", 2);
    kbuf out = KBUF_INIT;
    hfile_fileinfo_encode(&fi, &out);
    static const uint8_t want[] = {'P', 'B', 'U', 'F', 9, 0x0a, 7, 0x0a, 1, 'k', 0x12, 2, 'v', 0};
    assert_int_equal(out.len, sizeof want);
    assert_memory_equal(out.data, want, sizeof want);
    /* empty map */
    hfile_fileinfo_free(&fi);
    buf_reset(&out);
    hfile_fileinfo_encode(&fi, &out);
    assert_int_equal(out.len, 5);
    assert_memory_equal(out.data, "PBUF\0", 5);
    buf_free(&out);
}

static void
fileinfo_round_trip(void **state)
{
    kiln_err err;
    for (int iter = 0; iter < 50; iter++) {
        hfile_fileinfo fi, back;
        hfile_fileinfo_init(&fi);
        hfile_fileinfo_init(&back);
        size_t n = rnd() % 40;
        uint8_t k[1000], v[1000];
        for (size_t i = 0; i < n; i++) {
            size_t kl = rnd_key(k, sizeof k), vl = rnd_key(v, sizeof v);
            hfile_fileinfo_set_raw(&fi, kslice_make(k, kl), kslice_make(v, vl));
        }
        hfile_fileinfo_set_i64(&fi, "EARLIEST_PUT_TS", -5);
        hfile_fileinfo_set_bool(&fi, "MAJOR_COMPACTION_KEY", 1);
        kbuf out = KBUF_INIT;
        hfile_fileinfo_encode(&fi, &out);
        status_clear(&err);
        assert_int_equal(hfile_fileinfo_decode(out.data, out.len, &back, &err), KILN_OK);
        assert_int_equal(back.count, fi.count);
        for (size_t i = 0; i < fi.count; i++) {
            assert_true(kslice_eq(back.entries[i].key, fi.entries[i].key));
            assert_true(kslice_eq(back.entries[i].value, fi.entries[i].value));
            if (i > 0)
                assert_true(kslice_cmp(fi.entries[i - 1].key, fi.entries[i].key) < 0);
        }
        int64_t ts;
        assert_true(hfile_fileinfo_get_i64(&back, "EARLIEST_PUT_TS", &ts));
        assert_true(ts == -5);
        /* a truncated payload is refused, never read past */
        if (out.len > 6) {
            hfile_fileinfo cut;
            hfile_fileinfo_init(&cut);
            status_clear(&err);
            assert_int_equal(hfile_fileinfo_decode(out.data, out.len - 1, &cut, &err),
                             KILN_CORRUPTION);
            hfile_fileinfo_free(&cut);
        }
        buf_free(&out);
        hfile_fileinfo_free(&fi);
        hfile_fileinfo_free(&back);
    }
}

/* ------------------------------------------------------------------ trailer */

static void
trailer_against_hbase(void **state)
{
    const char *vectors[] = {VEC10, VEC15, TESTDATA "hbase264_snappy_tags_rowbloom.hfile",
                             TESTDATA "hbase264_gz_tags_rowbloom.hfile",
                             TESTDATA "hbase264_zstd_tags_39blocks.hfile"};
    for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; v++) {
        kbuf f;
        load(vectors[v], &f);
        kiln_err err;
        status_clear(&err);
        hfile_trailer t;
        assert_int_equal(hfile_trailer_decode(f.data, f.len, &t, &err), KILN_OK);
        uint8_t out[HFILE_TRAILER_SIZE];
        hfile_trailer_encode(&t, out);
        assert_memory_equal(out, f.data + f.len - HFILE_TRAILER_SIZE, HFILE_TRAILER_SIZE);
        buf_free(&f);
    }

    /* by hand, the 10-cell vector's values */
    hfile_trailer t;
    memset(&t, 0, sizeof t);
    t.file_info_offset = 558;
    t.load_on_open_data_offset = 450;
    t.uncompressed_data_index_size = 34;
    t.total_uncompressed_bytes = 5086;
    t.data_index_count = 1;
    t.meta_index_count = 0;
    t.entry_count = 10;
    t.num_data_index_levels = 1;
    t.first_data_block_offset = 0;
    t.last_data_block_offset = 0;
    strcpy(t.comparator_class_name, HFILE_COMPARATOR_KV);
    t.compression_codec = 2;
    uint8_t out[HFILE_TRAILER_SIZE];
    hfile_trailer_encode(&t, out);
    static const uint8_t head[] = {'T', 'R', 'A', 'B', 'L', 'K', '"', '$', 0x48,
                                   0x08, 0xae, 0x04, 0x10, 0xc2, 0x03, 0x18, 0x22, 0x20, 0xde,
                                   0x27, 0x28, 0x01, 0x30, 0x00, 0x38, 0x0a, 0x40, 0x01, 0x48,
                                   0x00, 0x50, 0x00, 0x5a, 0x2d};
    assert_memory_equal(out, head, sizeof head);
    assert_memory_equal(out + sizeof head, HFILE_COMPARATOR_KV, 45);
    assert_int_equal(out[sizeof head + 45], 0x60);
    assert_int_equal(out[sizeof head + 46], 0x02);
    for (size_t i = sizeof head + 47; i < HFILE_TRAILER_SIZE - 4; i++)
        assert_int_equal(out[i], 0);
    assert_int_equal(coding_get_be32(out + HFILE_TRAILER_SIZE - 4), 0x03000003);
}

static void
trailer_round_trip(void **state)
{
    kiln_err err;
    for (int i = 0; i < 500; i++) {
        hfile_trailer t, g;
        memset(&t, 0, sizeof t);
        t.file_info_offset = rnd() >> (rnd() % 64);
        t.load_on_open_data_offset = rnd() >> (rnd() % 64);
        t.uncompressed_data_index_size = rnd() >> (rnd() % 64);
        t.total_uncompressed_bytes = rnd() >> (rnd() % 64);
        t.data_index_count = (uint32_t)(rnd() >> (32 + rnd() % 32));
        t.meta_index_count = (uint32_t)(rnd() % 3);
        t.entry_count = rnd() >> (rnd() % 64);
        t.num_data_index_levels = 1 + (uint32_t)(rnd() % 4);
        /* an empty file's offsets are -1: ten-byte varints */
        t.first_data_block_offset = i % 5 == 0 ? UINT64_MAX : rnd() >> 1;
        t.last_data_block_offset = i % 5 == 0 ? UINT64_MAX : rnd() >> 1;
        size_t cl = rnd() % sizeof t.comparator_class_name;
        for (size_t j = 0; j < cl; j++)
            t.comparator_class_name[j] = (char)('a' + rnd() % 26);
        t.compression_codec = (uint32_t)(rnd() % CODEC_COUNT);
        uint8_t out[HFILE_TRAILER_SIZE];
        hfile_trailer_encode(&t, out);
        status_clear(&err);
        assert_int_equal(hfile_trailer_decode(out, sizeof out, &g, &err), KILN_OK);
        assert_true(g.file_info_offset == t.file_info_offset);
        assert_true(g.load_on_open_data_offset == t.load_on_open_data_offset);
        assert_true(g.uncompressed_data_index_size == t.uncompressed_data_index_size);
        assert_true(g.total_uncompressed_bytes == t.total_uncompressed_bytes);
        assert_int_equal(g.data_index_count, t.data_index_count);
        assert_int_equal(g.meta_index_count, t.meta_index_count);
        assert_true(g.entry_count == t.entry_count);
        assert_int_equal(g.num_data_index_levels, t.num_data_index_levels);
        assert_true(g.first_data_block_offset == t.first_data_block_offset);
        assert_true(g.last_data_block_offset == t.last_data_block_offset);
        assert_string_equal(g.comparator_class_name, t.comparator_class_name);
        assert_int_equal(g.compression_codec, t.compression_codec);
        assert_int_equal(g.encrypted, 0);
        assert_int_equal(g.major_version, 3);
        assert_int_equal(g.minor_version, 3);
        /* inside a file: only the last 4096 bytes count */
        uint8_t file[HFILE_TRAILER_SIZE + 100];
        memset(file, 0xAB, 100);
        memcpy(file + 100, out, sizeof out);
        status_clear(&err);
        assert_int_equal(hfile_trailer_decode(file, sizeof file, &g, &err), KILN_OK);
        assert_true(g.entry_count == t.entry_count);
    }
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_hfile_format: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_against_hbase),
        cmocka_unit_test(checksum_chunks),
        cmocka_unit_test(header_round_trip),
        cmocka_unit_test(root_index_against_hbase),
        cmocka_unit_test(root_index_round_trip),
        cmocka_unit_test(nonroot_index),
        cmocka_unit_test(fileinfo_against_hbase),
        cmocka_unit_test(fileinfo_round_trip),
        cmocka_unit_test(trailer_against_hbase),
        cmocka_unit_test(trailer_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
