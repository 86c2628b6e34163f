/* test_base.c -- tests of the storage base: coding, CRC32C, file env with fault
 * injection, cell order and printable form, codecs, bloom hash and chunking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "storage/hfile/bloom.h"
#include "storage/base/buf.h"
#include "storage/hfile/cell.h"
#include "storage/base/coding.h"
#include "storage/base/compress.h"
#include "storage/base/crc32c.h"
#include "storage/base/env.h"
#include "storage/base/status.h"

#define TESTDATA "tests/data/hbase/"

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
vlong_round_trip(void **state)
{
    static const int64_t cases[] = {0, 1, -1, 127, 128, -112, -113, 255, 256, -129, 65535,
                                    INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, 1LL << 40};
    uint8_t b[16];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = coding_put_vlong(b, cases[i]);
        assert_int_equal(n, coding_vlong_size(cases[i]));
        int64_t v;
        assert_int_equal(coding_get_vlong(b, b + n, &v), n);
        assert_true(v == cases[i]);
        if (n > 1)
            assert_int_equal(coding_get_vlong(b, b + n - 1, &v), 0);
    }
    /* Known Hadoop encodings: 128 -> 8F 80, -113 -> 87 70 ... */
    assert_int_equal(coding_put_vlong(b, 128), 2);
    assert_int_equal(b[0], 0x8F);
    assert_int_equal(b[1], 0x80);
    assert_int_equal(coding_put_vlong(b, -113), 2);
    assert_int_equal(b[0], 0x87);
    assert_int_equal(b[1], 0x70);
    for (int i = 0; i < 100000; i++) {
        int64_t x = (int64_t)rnd() >> (rnd() % 64);
        size_t n = coding_put_vlong(b, x);
        int64_t y;
        assert_int_equal(coding_get_vlong(b, b + n, &y), n);
        assert_true(x == y);
    }
}

static void
varint_round_trip(void **state)
{
    uint8_t b[16];
    assert_int_equal(coding_put_varint(b, 300), 2);
    assert_int_equal(b[0], 0xAC);
    assert_int_equal(b[1], 0x02);
    for (int i = 0; i < 100000; i++) {
        uint64_t x = rnd() >> (rnd() % 64);
        size_t n = coding_put_varint(b, x);
        assert_int_equal(n, coding_varint_size(x));
        uint64_t y;
        assert_int_equal(coding_get_varint(b, b + n, &y), n);
        assert_true(x == y);
        assert_int_equal(coding_get_varint(b, b + n - 1, &y), 0);
    }
    memset(b, 0xFF, sizeof b);
    uint64_t y;
    assert_int_equal(coding_get_varint(b, b + sizeof b, &y), 0);
}

static void
crc32c_known_values(void **state)
{
    /* RFC 3720 B.4 test vectors. */
    uint8_t zeros[32] = {0}, ones[32], inc[32];
    memset(ones, 0xFF, 32);
    for (int i = 0; i < 32; i++)
        inc[i] = (uint8_t)i;
    for (int portable = 0; portable < 2; portable++) {
        crc32c_force_portable(portable);
        assert_int_equal(crc32c_value(zeros, 32), 0x8A9136AA);
        assert_int_equal(crc32c_value(ones, 32), 0x62A8AB43);
        assert_int_equal(crc32c_value(inc, 32), 0x46DD794E);
        assert_int_equal(crc32c_value("123456789", 9), 0xE3069283);
        assert_int_equal(crc32c_extend(crc32c_value(inc, 13), inc + 13, 19), 0x46DD794E);
    }
    crc32c_force_portable(0);
    uint8_t big[10007];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)rnd();
    for (size_t off = 0; off < 9; off++) {
        crc32c_force_portable(1);
        uint32_t a = crc32c_value(big + off, sizeof big - off);
        crc32c_force_portable(0);
        assert_int_equal(a, crc32c_value(big + off, sizeof big - off));
    }
}

static char tmpdir[256];

static int
make_tmpdir(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kiln-test-base-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    env_fault_clear();
    return 0;
}

static int
remove_tmpdir(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static int
stop_at_once(void *arg)
{
    (void)arg;
    return 1;
}

/* Drop path's pages from the page cache; fails the test where the file
 * system keeps them (tmpfs): residency cannot be checked there. */
static uint64_t
evict_pages(const char *path)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    close(fd);
    uint64_t absent;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(env_uncached_bytes(path, &absent, &err), KILN_OK);
    if (absent == 0)
        fail_msg("%s: the file system kept every page after POSIX_FADV_DONTNEED (tmpfs?); "
                 "set TMPDIR to a disk-backed directory", path);
    return absent;
}

static void
env_page_cache(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/pages", tmpdir);
    kiln_err err;
    status_clear(&err);
    env_file *f;
    const size_t size = 3 * 1024 * 1024 + 123;   /* a partial last page */
    uint8_t *data = malloc(size);
    for (size_t i = 0; i < size; i++)
        data[i] = (uint8_t)rnd();
    assert_int_equal(env_create(path, 0, &f, &err), KILN_OK);
    assert_int_equal(env_append(f, data, size, &err), KILN_OK);
    assert_int_equal(env_sync(f, &err), KILN_OK);
    assert_int_equal(env_close(f, &err), KILN_OK);

    /* Everything evicted: everything absent, and never more than the file. */
    uint64_t absent = evict_pages(path), got;
    assert_true(absent <= size);
    assert_true(absent > size / 2);

    /* A stop that says stop at once reads nothing. */
    assert_int_equal(env_cache_file(path, stop_at_once, NULL, &got, &err), KILN_OK);
    assert_int_equal(got, 0);

    /* One megabyte in the middle read by hand: only the rest is read. */
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, data, 1024 * 1024, 1024 * 1024), 1024 * 1024);
    close(fd);
    uint64_t before;
    assert_int_equal(env_uncached_bytes(path, &before, &err), KILN_OK);
    assert_true(before < absent);
    assert_int_equal(env_cache_file(path, NULL, NULL, &got, &err), KILN_OK);
    assert_true(got > 0);
    assert_true(got <= before);
    assert_int_equal(env_uncached_bytes(path, &absent, &err), KILN_OK);
    assert_int_equal(absent, 0);
    /* Resident already: nothing to read. */
    assert_int_equal(env_cache_file(path, NULL, NULL, &got, &err), KILN_OK);
    assert_int_equal(got, 0);

    /* A missing file is an error naming it. */
    snprintf(path, sizeof path, "%s/absent", tmpdir);
    assert_int_not_equal(env_cache_file(path, NULL, NULL, &got, &err), KILN_OK);
    assert_non_null(strstr(err.msg, path));
    assert_int_not_equal(env_uncached_bytes(path, &got, &err), KILN_OK);

    assert_true(env_mem_available() > 0);
    free(data);
}

static void
env_write_read(void **state)
{
    char path[300];
    snprintf(path, sizeof path, "%s/a", tmpdir);
    kiln_err err;
    status_clear(&err);
    env_file *f;
    assert_int_equal(env_create(path, 0, &f, &err), KILN_OK);
    kbuf expect = KBUF_INIT;
    for (int i = 0; i < 2000; i++) {
        uint8_t chunk[700];
        size_t n = rnd() % sizeof chunk;
        for (size_t k = 0; k < n; k++)
            chunk[k] = (uint8_t)rnd();
        assert_int_equal(env_append(f, chunk, n, &err), KILN_OK);
        buf_append(&expect, chunk, n);
    }
    assert_int_equal(env_file_size(f), expect.len);
    assert_int_equal(env_sync(f, &err), KILN_OK);
    assert_int_equal(env_close(f, &err), KILN_OK);

    assert_int_equal(env_open_read(path, &f, &err), KILN_OK);
    assert_int_equal(env_file_size(f), expect.len);
    uint8_t *got = malloc(expect.len);
    assert_int_equal(env_pread(f, 0, got, expect.len, &err), KILN_OK);
    assert_memory_equal(got, expect.data, expect.len);
    /* Past the end: corruption naming the file. */
    assert_int_equal(env_pread(f, expect.len - 3, got, 10, &err), KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "truncated"));
    env_close(f, NULL);
    free(got);
    buf_free(&expect);

    status_clear(&err);
    char missing[300];
    snprintf(missing, sizeof missing, "%s/missing", tmpdir);
    assert_int_equal(env_open_read(missing, &f, &err), KILN_NOT_FOUND);
    assert_non_null(strstr(err.msg, missing));
    assert_int_equal(err.sys_errno, ENOENT);
}

static void
env_fault_injection(void **state)
{
    char path[300], path2[300];
    snprintf(path, sizeof path, "%s/f", tmpdir);
    snprintf(path2, sizeof path2, "%s/g", tmpdir);
    kiln_err err;
    env_file *f;

    /* The 2nd sync fails with ENOSPC; the first succeeds. */
    status_clear(&err);
    env_fault_arm(ENV_OP_SYNC, 2, ENOSPC);
    assert_int_equal(env_create(path, 0, &f, &err), KILN_OK);
    assert_int_equal(env_append(f, "x", 1, &err), KILN_OK);
    assert_int_equal(env_sync(f, &err), KILN_OK);
    assert_int_equal(env_sync(f, &err), KILN_IO);
    assert_int_equal(err.sys_errno, ENOSPC);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "fsync"));
    /* One-shot: the next one works. */
    status_clear(&err);
    assert_int_equal(env_sync(f, &err), KILN_OK);
    env_close(f, NULL);

    /* A failed rename leaves both names as they were. */
    env_fault_arm(ENV_OP_RENAME, 1, EIO);
    assert_int_equal(env_rename(path, path2, &err), KILN_IO);
    assert_true(env_exists(path));
    assert_false(env_exists(path2));
    status_clear(&err);
    assert_int_equal(env_rename(path, path2, &err), KILN_OK);
    assert_true(env_exists(path2));

    /* A failed write surfaces at flush. */
    env_fault_arm(ENV_OP_WRITE, 1, EIO);
    assert_int_equal(env_create(path, 0, &f, &err), KILN_OK);
    assert_int_equal(env_append(f, "abc", 3, &err), KILN_OK);
    assert_int_equal(env_close(f, &err), KILN_IO);

    /* Atomic small-file write: a failed rename keeps the old content. */
    status_clear(&err);
    assert_int_equal(env_write_file_atomic(path2, "old", 3, &err), KILN_OK);
    env_fault_arm(ENV_OP_RENAME, 1, EIO);
    assert_int_equal(env_write_file_atomic(path2, "new!", 4, &err), KILN_IO);
    kbuf b = KBUF_INIT;
    status_clear(&err);
    assert_int_equal(env_read_file(path2, &b, &err), KILN_OK);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "old", 3);
    buf_free(&b);
    assert_true(env_op_calls(ENV_OP_RENAME) >= 3);
    env_fault_clear();
}

static kiln_cell
mk(const char *row, const char *fam, const char *qual, int64_t ts, uint8_t type)
{
    kiln_cell c;
    memset(&c, 0, sizeof c);
    c.row = (const uint8_t *)row;
    c.row_len = (uint32_t)strlen(row);
    c.family = (const uint8_t *)fam;
    c.family_len = (uint32_t)strlen(fam);
    c.qualifier = (const uint8_t *)qual;
    c.qualifier_len = (uint32_t)strlen(qual);
    c.ts = ts;
    c.type = type;
    return c;
}

static void
cell_order(void **state)
{
    /* Each row of this table sorts strictly before the next. */
    kiln_cell seq[] = {
        mk("", "f", "q", 5, CELL_TYPE_PUT),
        mk("a", "", "", INT64_MAX, CELL_TYPE_MAXIMUM),   /* first on row a */
        mk("a", "f", "", 9, CELL_TYPE_PUT),
        mk("a", "f", "q", 10, CELL_TYPE_DELETE_FAMILY),
        mk("a", "f", "q", 10, CELL_TYPE_DELETE_COLUMN),
        mk("a", "f", "q", 10, CELL_TYPE_DELETE),
        mk("a", "f", "q", 10, CELL_TYPE_PUT),
        mk("a", "f", "q", 9, CELL_TYPE_PUT),
        mk("a", "f", "q", -1, CELL_TYPE_PUT),
        mk("a", "f", "qq", 100, CELL_TYPE_PUT),
        mk("a", "g", "", 1, CELL_TYPE_PUT),
        mk("a", "", "", 0, CELL_TYPE_MINIMUM),          /* last on row a */
        mk("a\x01", "f", "q", 1, CELL_TYPE_PUT),
        mk("b", "f", "q", 1, CELL_TYPE_PUT),
        mk("\xff", "f", "q", 1, CELL_TYPE_PUT),
    };
    size_t n = sizeof seq / sizeof seq[0];
    seq[12].row_len = 2;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            int c = cell_compare(&seq[i], &seq[j]);
            int want = i < j ? -1 : i > j;
            if ((c < 0 ? -1 : c > 0) != want)
                fail_msg("cell_compare(%zu, %zu) = %d, want %d", i, j, c, want);
            kbuf a = KBUF_INIT, b = KBUF_INIT;
            cell_key_append(&seq[i], &a);
            cell_key_append(&seq[j], &b);
            c = cell_key_compare(a.data, a.len, b.data, b.len);
            assert_int_equal(c < 0 ? -1 : c > 0, want);
            buf_free(&a);
            buf_free(&b);
        }
    }
}

static void
cell_key_codec(void **state)
{
    kiln_cell c = mk("row-1", "cf", "qual", 1700000000000LL, CELL_TYPE_PUT);
    kbuf k = KBUF_INIT;
    cell_key_append(&c, &k);
    assert_int_equal(k.len, 5 + 2 + 4 + 12);
    static const uint8_t want[] = {0, 5, 'r', 'o', 'w', '-', '1', 2, 'c', 'f', 'q', 'u', 'a', 'l',
                                   0x00, 0x00, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x00, 4};
    assert_memory_equal(k.data, want, sizeof want);
    kiln_cell d;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(cell_key_decode(k.data, k.len, &d, &err), KILN_OK);
    assert_int_equal(cell_compare(&c, &d), 0);
    /* Truncated and overrunning keys are corruption, not crashes. */
    for (size_t n = 0; n < k.len; n++) {
        status_clear(&err);
        kiln_status s = cell_key_decode(k.data, n, &d, &err);
        if (n < 12)
            assert_int_equal(s, KILN_CORRUPTION);
        else if (s == KILN_OK)
            assert_true(d.row_len + d.family_len + d.qualifier_len + 12 == n);
    }
    k.data[1] = 200;
    status_clear(&err);
    assert_int_equal(cell_key_decode(k.data, k.len, &d, &err), KILN_CORRUPTION);
    buf_free(&k);

    kiln_cell big = mk("x", "f", "q", 0, CELL_TYPE_PUT);
    big.row_len = 40000;
    status_clear(&err);
    assert_int_equal(cell_validate(&big, &err), KILN_INVALID);
    uint8_t t;
    assert_int_equal(cell_type_parse("DeleteColumn", &t), 0);
    assert_int_equal(t, CELL_TYPE_DELETE_COLUMN);
    assert_int_equal(cell_type_parse("Bogus", &t), -1);
}

static void
string_binary(void **state)
{
    const uint8_t raw[] = {'a', 0x00, '\\', 0x7f, 0xff, ' ', '~', '\n'};
    kbuf s = KBUF_INIT;
    cell_to_string_binary(&s, raw, sizeof raw);
    buf_append_u8(&s, 0);
    assert_string_equal((char *)s.data, "a\\x00\\x5C\\x7F\\xFF ~\\x0A");
    kbuf back = KBUF_INIT;
    assert_int_equal(cell_from_string_binary(&back, (char *)s.data, s.len - 1), 0);
    assert_int_equal(back.len, sizeof raw);
    assert_memory_equal(back.data, raw, sizeof raw);
    buf_reset(&back);
    assert_int_equal(cell_from_string_binary(&back, "ab\\x4", 5), -1);
    assert_int_equal(cell_from_string_binary(&back, "ab\\q41", 6), -1);
    assert_int_equal(cell_from_string_binary(&back, "ab\\xZZ", 6), -1);
    buf_free(&s);
    buf_free(&back);
}

static void
codec_round_trip(void **state)
{
    static const kiln_codec codecs[] = {CODEC_NONE, CODEC_GZ, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD};
    static const size_t sizes[] = {0, 1, 100, 65536, COMPRESS_CHUNK_MAX, COMPRESS_CHUNK_MAX + 1, 600000};
    for (size_t ci = 0; ci < 5; ci++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            uint8_t *in = malloc(n + 1), *out = malloc(n + 1);
            for (size_t i = 0; i < n; i++)
                in[i] = (uint8_t)((rnd() % 4 == 0) ? rnd() : 'a' + i % 7);
            kbuf c = KBUF_INIT;
            kiln_err err;
            status_clear(&err);
            assert_int_equal(compress_block(codecs[ci], in, n, &c, &err), KILN_OK);
            assert_int_equal(decompress_block(codecs[ci], c.data, c.len, out, n, &err), KILN_OK);
            if (n)
                assert_memory_equal(in, out, n);
            /* Every truncation is a clean error (an empty block has nothing to lose). */
            for (size_t cut = 0; n > 0 && cut < c.len; cut += 1 + c.len / 50) {
                status_clear(&err);
                kiln_status s = decompress_block(codecs[ci], c.data, cut, out, n, &err);
                if (s == KILN_OK)
                    fail_msg("%s: truncation to %zu of %zu accepted", compress_codec_name(codecs[ci]),
                             cut, c.len);
                assert_int_equal(s, KILN_CORRUPTION);
            }
            /* A wrong expected size is a clean error too. */
            status_clear(&err);
            if (n > 0)
                assert_int_equal(decompress_block(codecs[ci], c.data, c.len, out, n - 1, &err),
                                 KILN_CORRUPTION);
            buf_free(&c);
            free(in);
            free(out);
        }
    }
    kiln_codec k;
    assert_int_equal(compress_codec_parse("Snappy", &k), 0);
    assert_int_equal(k, CODEC_SNAPPY);
    assert_int_equal(compress_codec_parse("gzip", &k), 0);
    assert_int_equal(k, CODEC_GZ);
    assert_int_equal(compress_codec_parse("rar", &k), -1);
    kbuf c = KBUF_INIT;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(compress_block(CODEC_LZO, (const uint8_t *)"x", 1, &c, &err), KILN_UNSUPPORTED);
    buf_free(&c);
}

/* Each thread keeps its own zlib and zstd state from block to block. Threads
 * compressing and decompressing at once must write the same bytes as one
 * thread alone, and a corrupt block must not spoil the next one. */
#define CODEC_THREADS 4
#define CODEC_ROUNDS 60
static const kiln_codec state_codecs[] = {CODEC_GZ, CODEC_ZSTD};
static uint8_t codec_input[70000];
static kbuf codec_expect[2][CODEC_ROUNDS];

static size_t
codec_round_size(int round)
{
    return (size_t)(round * 1153) % sizeof codec_input;
}

static void *
codec_state_worker(void *arg)
{
    intptr_t bad = 0;
    uint8_t *out = malloc(sizeof codec_input);
    kbuf c = KBUF_INIT;
    for (int r = 0; r < CODEC_ROUNDS; r++) {
        for (int k = 0; k < 2; k++) {
            size_t n = codec_round_size(r);
            kiln_err err;
            status_clear(&err);
            buf_reset(&c);
            if (compress_block(state_codecs[k], codec_input, n, &c, &err) != KILN_OK ||
                c.len != codec_expect[k][r].len ||
                memcmp(c.data, codec_expect[k][r].data, c.len) != 0)
                bad++;
            /* a corrupt copy first: its error leaves the state to be reset */
            if (c.len > 8) {
                c.data[c.len / 2] ^= 0x5a;
                c.data[c.len - 5] ^= 0xff;
                status_clear(&err);
                if (decompress_block(state_codecs[k], c.data, c.len, out, n, &err) == KILN_OK &&
                    (n == 0 || memcmp(out, codec_input, n) == 0))
                    bad++;
                c.data[c.len / 2] ^= 0x5a;
                c.data[c.len - 5] ^= 0xff;
            }
            status_clear(&err);
            if (decompress_block(state_codecs[k], c.data, c.len, out, n, &err) != KILN_OK ||
                (n > 0 && memcmp(out, codec_input, n) != 0))
                bad++;
        }
    }
    buf_free(&c);
    free(out);
    return (void *)bad;
}

static void
codec_state_per_thread(void **state)
{
    for (size_t i = 0; i < sizeof codec_input; i++)
        codec_input[i] = (uint8_t)((rnd() % 3 == 0) ? rnd() : 'k' + i % 11);
    for (int k = 0; k < 2; k++) {
        for (int r = 0; r < CODEC_ROUNDS; r++) {
            kiln_err err;
            status_clear(&err);
            codec_expect[k][r] = (kbuf)KBUF_INIT;
            assert_int_equal(compress_block(state_codecs[k], codec_input, codec_round_size(r),
                                            &codec_expect[k][r], &err),
                             KILN_OK);
        }
    }
    pthread_t th[CODEC_THREADS];
    for (intptr_t i = 0; i < CODEC_THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, codec_state_worker, NULL), 0);
    for (int i = 0; i < CODEC_THREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        assert_int_equal((intptr_t)r, 0);
    }
    for (int k = 0; k < 2; k++)
        for (int r = 0; r < CODEC_ROUNDS; r++)
            buf_free(&codec_expect[k][r]);
}

/* The ROW bloom of the 10-cell HBase file: its BLMFBLK2 block at offset 397 holds a
 * 16-byte chunk for rows row-00..row-09, hash count 7. Our chunker must build the
 * same bytes, and every row must test positive. */
static void
bloom_matches_hbase(void **state)
{
    kbuf file = KBUF_INIT;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(env_read_file(TESTDATA "hbase264_none_rowbloom_10cells.hfile", &file, &err),
                     KILN_OK);
    assert_true(file.len > 450);
    assert_memory_equal(file.data + 397, "BLMFBLK2", 8);
    uint32_t payload = coding_get_be32(file.data + 397 + 12);
    assert_int_equal(payload, 16);
    const uint8_t *hbase_chunk = file.data + 397 + 33;

    bloom_chunker *ch = bloom_chunker_new(BLOOM_CHUNK_BYTES_DEFAULT, BLOOM_ERROR_RATE_DEFAULT);
    assert_int_equal(bloom_chunker_hash_count(ch), 7);
    const bloom_chunk *out = NULL;
    char row[16];
    for (int i = 0; i < 10; i++) {
        snprintf(row, sizeof row, "row-%02d", i);
        assert_int_equal(bloom_chunker_add(ch, (uint8_t *)row, 6, &out), 0);
    }
    assert_int_equal(bloom_chunker_finish(ch, &out), 1);
    assert_int_equal(out->bits.len, 16);
    assert_memory_equal(out->bits.data, hbase_chunk, 16);
    assert_int_equal(out->key_count, 10);
    assert_int_equal(out->first_key.len, 6);
    for (int i = 0; i < 10; i++) {
        snprintf(row, sizeof row, "row-%02d", i);
        assert_true(bloom_chunk_may_contain(hbase_chunk, 16, 7, (uint8_t *)row, 6));
    }
    bloom_chunker_free(ch);
    buf_free(&file);
}

/* The bit positions follow HBase's formula |(int32)(h1 + i*h2) % bits| with
 * Java remainder semantics, including INT32_MIN and odd bit counts: a chunk
 * with exactly one bit set per probe answers yes only for the computed bit. */
static void
bloom_positions_match_formula(void **state)
{
    static const uint8_t key[] = "position-check";
    uint32_t h1 = bloom_murmur(key, sizeof key - 1, 0);
    uint32_t h2 = bloom_murmur(key, sizeof key - 1, h1);
    for (size_t bytes = 1; bytes < 300; bytes += 7) {
        int64_t bits = (int64_t)bytes * 8;
        uint8_t *chunk = calloc(bytes, 1);
        for (int i = 0; i < 9; i++) {
            int32_t c = (int32_t)(h1 + (uint32_t)i * h2);
            int64_t pos = llabs((int64_t)c % bits);
            chunk[pos >> 3] |= (uint8_t)(1u << (pos & 7));
        }
        assert_true(bloom_chunk_may_contain(chunk, bytes, 9, key, sizeof key - 1));
        free(chunk);
    }
    /* A chunk with every bit set except one probe's bit says no, whichever
     * probe it is: the first, a middle one, and (with many hashes) the ones
     * past those whose lines are fetched ahead. */
    static const int counts[] = {1, 9, 16, 17, 20, 31};
    for (size_t t = 0; t < sizeof counts / sizeof counts[0]; t++) {
        int hc = counts[t];
        for (int probe = 0; probe < hc; probe++) {
            uint8_t full[64];
            memset(full, 0xFF, sizeof full);
            int32_t c = (int32_t)(h1 + (uint32_t)probe * h2);
            int64_t pos = llabs((int64_t)c % (64 * 8));
            full[pos >> 3] &= (uint8_t)~(1u << (pos & 7));
            assert_false(bloom_chunk_may_contain(full, sizeof full, hc, key, sizeof key - 1));
        }
        uint8_t full[64];
        memset(full, 0xFF, sizeof full);
        assert_true(bloom_chunk_may_contain(full, sizeof full, hc, key, sizeof key - 1));
    }
}

static void
bloom_false_positive_rate(void **state)
{
    bloom_chunker *ch = bloom_chunker_new(BLOOM_CHUNK_BYTES_DEFAULT, BLOOM_ERROR_RATE_DEFAULT);
    const bloom_chunk *out = NULL;
    int chunks = 0;
    uint8_t key[12];
    int n = 50000;
    for (int i = 0; i < n; i++) {
        memcpy(key, &i, sizeof i);
        memcpy(key + 4, "present!", 8);
        chunks += bloom_chunker_add(ch, key, sizeof key, &out);
    }
    assert_int_equal(chunks, 0);
    assert_int_equal(bloom_chunker_finish(ch, &out), 1);
    int hc = bloom_chunker_hash_count(ch);
    for (int i = 0; i < n; i++) {
        memcpy(key, &i, sizeof i);
        memcpy(key + 4, "present!", 8);
        assert_true(bloom_chunk_may_contain(out->bits.data, out->bits.len, hc, key, sizeof key));
    }
    int fp = 0;
    for (int i = 0; i < n; i++) {
        memcpy(key, &i, sizeof i);
        memcpy(key + 4, "absent!!", 8);
        fp += bloom_chunk_may_contain(out->bits.data, out->bits.len, hc, key, sizeof key);
    }
    /* Folding keeps the rate at most ~2x the 1% target. */
    assert_true(fp < n / 40);
    bloom_chunker_free(ch);

    /* Past max keys per chunk a new chunk starts. */
    ch = bloom_chunker_new(1024, 0.01);
    int closed = 0;
    for (int i = 0; i < 5000; i++) {
        memcpy(key, &i, sizeof i);
        closed += bloom_chunker_add(ch, key, 4, &out);
    }
    assert_true(closed >= 5);
    bloom_chunker_free(ch);
}

/* The file cache under threads: 40 files read at random by 4 threads with a
 * budget of 8 descriptors; every read returns its file's bytes, the budget
 * holds once the threads are done, and files were really reopened. Run
 * under `make SANITIZER=thread` too. */
#define FC_FILES 40
#define FC_SIZE 4096
static env_file *fc_files[FC_FILES];

static void *
fc_reader(void *arg)
{
    uint64_t st = (uint64_t)(uintptr_t)arg;
    uint8_t b[64];
    for (int i = 0; i < 3000; i++) {
        uint64_t x = st = st * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t fi = (size_t)(x >> 33) % FC_FILES;
        size_t off = (size_t)(x >> 13) % (FC_SIZE - sizeof b);
        kiln_err err;
        status_clear(&err);
        if (env_pread(fc_files[fi], off, b, sizeof b, &err) != KILN_OK)
            return (void *)1;
        for (size_t k = 0; k < sizeof b; k++) {
            if (b[k] != (uint8_t)(fi * 7 + off + k))
                return (void *)2;
        }
    }
    return NULL;
}

static void
env_file_cache_threads(void **state)
{
    (void)state;
    kiln_err err;
    status_clear(&err);
    for (size_t i = 0; i < FC_FILES; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/fc%zu", tmpdir, i);
        uint8_t b[FC_SIZE];
        for (size_t k = 0; k < sizeof b; k++)
            b[k] = (uint8_t)(i * 7 + k);
        assert_int_equal(env_write_file_atomic(p, b, sizeof b, &err), KILN_OK);
    }
    env_set_max_open_files(8);
    long reopens = env_reopens();
    for (size_t i = 0; i < FC_FILES; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/fc%zu", tmpdir, i);
        assert_int_equal(env_open_read(p, &fc_files[i], &err), KILN_OK);
    }
    assert_true(env_open_files() <= 8);
    pthread_t th[4];
    for (uintptr_t i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, fc_reader, (void *)(i + 1)), 0);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        assert_null(r);
    }
    assert_true(env_open_files() <= 8);
    assert_true(env_reopens() > reopens);
    /* a file removed while its descriptor was closed: a clean not-found */
    char p[512];
    snprintf(p, sizeof p, "%s/fc0", tmpdir);
    env_set_max_open_files(8);
    for (size_t i = 1; i < FC_FILES; i++) {
        uint8_t b;
        assert_int_equal(env_pread(fc_files[i], 0, &b, 1, &err), KILN_OK);
    }
    assert_int_equal(unlink(p), 0);
    uint8_t b;
    assert_int_equal(env_pread(fc_files[0], 0, &b, 1, &err), KILN_NOT_FOUND);
    assert_non_null(strstr(err.msg, "removed since it was opened"));
    for (size_t i = 0; i < FC_FILES; i++)
        env_close(fc_files[i], NULL);
    assert_int_equal(env_open_files(), 0);
    env_set_max_open_files(0);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_base: seed %llu (replay with KILN_TEST_SEED)\n", (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vlong_round_trip),
        cmocka_unit_test(varint_round_trip),
        cmocka_unit_test(crc32c_known_values),
        cmocka_unit_test_setup_teardown(env_write_read, make_tmpdir, remove_tmpdir),
        cmocka_unit_test_setup_teardown(env_page_cache, make_tmpdir, remove_tmpdir),
        cmocka_unit_test_setup_teardown(env_fault_injection, make_tmpdir, remove_tmpdir),
        cmocka_unit_test_setup_teardown(env_file_cache_threads, make_tmpdir, remove_tmpdir),
        cmocka_unit_test(cell_order),
        cmocka_unit_test(cell_key_codec),
        cmocka_unit_test(string_binary),
        cmocka_unit_test(codec_round_trip),
        cmocka_unit_test(codec_state_per_thread),
        cmocka_unit_test(bloom_matches_hbase),
        cmocka_unit_test(bloom_positions_match_formula),
        cmocka_unit_test(bloom_false_positive_rate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
