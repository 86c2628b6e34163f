/* test_hfile_writer_pipe.c -- the HFile writer's background thread: the file
 * it writes is byte-for-byte the one written without it (every codec, block
 * sizes from one cell to 64 KiB, batches of one block up to the default, a
 * multi-level index and many bloom chunks), a write failing on the thread
 * comes back from the next add or from finish naming the file and an
 * offset, abandon mid-file joins the thread and removes the file, one
 * block per batch wraps the ring thousands of times, and the bytes the
 * writer reports move with every block.
 *
 * The oracle is the same writer with threads = 0, which the HBase vectors of
 * test_hfile_writer pin down; the files are compared whole and by a hash
 * computed here. Run it under make SANITIZER=thread and =address too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/base/buf.h"
#include "storage/base/coding.h"
#include "storage/base/compress.h"
#include "storage/base/env.h"
#include "storage/base/status.h"
#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_writer.h"
#include "tests/support/test_util.h"

static uint64_t rng_state;
static char tmp_dir[160];

static uint64_t
rnd(void)
{
    return tu_splitmix64(&rng_state);
}

static void
tmp_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmp_dir, name);
}

/* ------------------------------------------------------------------ cells */

/* Sorted cells: row i is "r" + be32(i) + 0..7 random bytes; a row may open
 * with a delete-family marker (empty qualifier sorts first), then 1..3 puts
 * with qualifiers "a", "b", "c" and random values (some empty, some tagged). */
typedef struct cellset {
    kiln_cell *c;
    size_t n;
    kbuf bytes;             /* rows, values and tags, referenced by offset */
    size_t *row_off, *val_off, *tag_off;
} cellset;

static void
cellset_make(cellset *cs, size_t rows, size_t max_value)
{
    memset(cs, 0, sizeof *cs);
    buf_init(&cs->bytes);
    size_t cap = rows * 4;
    cs->c = calloc(cap, sizeof *cs->c);
    cs->row_off = calloc(cap, sizeof *cs->row_off);
    cs->val_off = calloc(cap, sizeof *cs->val_off);
    cs->tag_off = calloc(cap, sizeof *cs->tag_off);
    static const char quals[] = "abc";
    for (size_t i = 0; i < rows; i++) {
        size_t roff = cs->bytes.len;
        buf_append_u8(&cs->bytes, 'r');
        buf_append_be32(&cs->bytes, (uint32_t)i);
        size_t extra = rnd() % 8;
        for (size_t k = 0; k < extra; k++)
            buf_append_u8(&cs->bytes, (uint8_t)rnd());
        uint32_t rlen = (uint32_t)(cs->bytes.len - roff);
        int dfam = rnd() % 10 == 0;
        int puts = 1 + (int)(rnd() % 3);
        for (int j = -dfam; j < puts; j++) {
            kiln_cell *c = &cs->c[cs->n];
            cs->row_off[cs->n] = roff;
            c->row_len = rlen;
            c->family = (const uint8_t *)"f";
            c->family_len = 1;
            c->ts = 1000 + (int64_t)(rnd() % 1000);
            c->mvcc = rnd() % 4 == 0 ? rnd() % 100000 : 0;
            if (j < 0) {
                c->type = CELL_TYPE_DELETE_FAMILY;
                c->qualifier_len = 0;
                c->value_len = 0;
            } else {
                c->type = CELL_TYPE_PUT;
                c->qualifier = (const uint8_t *)&quals[j];
                c->qualifier_len = 1;
                size_t vlen = rnd() % 7 == 0 ? 0 : rnd() % (max_value + 1);
                cs->val_off[cs->n] = cs->bytes.len;
                for (size_t k = 0; k < vlen; k++)
                    buf_append_u8(&cs->bytes, (uint8_t)('a' + rnd() % 4));
                c->value_len = (uint32_t)vlen;
                if (rnd() % 20 == 0) {
                    cs->tag_off[cs->n] = cs->bytes.len;
                    buf_append(&cs->bytes, "\x00\x03\x01tg", 5);
                    c->tags_len = 5;
                }
            }
            cs->n++;
        }
    }
    /* The byte buffer is final: resolve the offsets. */
    for (size_t i = 0; i < cs->n; i++) {
        kiln_cell *c = &cs->c[i];
        c->row = cs->bytes.data + cs->row_off[i];
        c->value = c->value_len ? cs->bytes.data + cs->val_off[i] : NULL;
        c->tags = c->tags_len ? cs->bytes.data + cs->tag_off[i] : NULL;
    }
}

static void
cellset_free(cellset *cs)
{
    buf_free(&cs->bytes);
    free(cs->c);
    free(cs->row_off);
    free(cs->val_off);
    free(cs->tag_off);
}

/* ------------------------------------------------------------------ helpers */

/* Threads of this process now (/proc/self/task). */
static int
thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* Write cells into path; *threads_seen gets the most threads the process had
 * while adding (the writer's own thread shows up as one more). */
static kiln_status
write_cells(const char *path, const hfile_writer_options *o, const cellset *cs,
            int *threads_seen, kiln_err *err)
{
    hfile_writer *w;
    kiln_status s = hfile_writer_open(path, o, &w, err);
    if (s != KILN_OK)
        return s;
    int most = thread_count();
    for (size_t i = 0; i < cs->n; i++) {
        if ((s = hfile_writer_add(w, &cs->c[i], err)) != KILN_OK) {
            hfile_writer_abandon(w);
            return s;
        }
        if (threads_seen != NULL && (i % 4096) == 4095) {
            int t = thread_count();
            if (t > most)
                most = t;
        }
    }
    if (threads_seen != NULL)
        *threads_seen = most;
    return hfile_writer_finish(w, NULL, err);
}

/* FNV-1a 64 of a whole file, and its size. */
static uint64_t
file_hash(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t n = 0;
    int ch;
    while ((ch = getc(f)) != EOF) {
        h = (h ^ (uint8_t)ch) * 0x100000001b3ULL;
        n++;
    }
    fclose(f);
    *size = n;
    return h;
}

static void
base_options(hfile_writer_options *o)
{
    hfile_writer_options_init(o);
    o->create_time_ms = 1700000000000LL;   /* fixed, so FileInfo compares too */
    o->sync = 0;
}

/* Write cs with threads = 0 and with threads = 1 under o; the files must be
 * the same bytes. Returns the file size. */
static size_t
same_bytes(const hfile_writer_options *o, const cellset *cs, const char *what, int expect_thread)
{
    char p0[256], p1[256];
    tmp_path(p0, sizeof p0, "nothread.hfile");
    tmp_path(p1, sizeof p1, "thread.hfile");
    hfile_writer_options a = *o, b = *o;
    a.threads = 0;
    b.threads = 1;
    kiln_err err;
    status_clear(&err);
    int before = thread_count(), t0 = 0, t1 = 0;
    assert_int_equal(write_cells(p0, &a, cs, &t0, &err), KILN_OK);
    assert_int_equal(write_cells(p1, &b, cs, &t1, &err), KILN_OK);
    /* Without the thread the process never grows one; with it, it does once
     * a batch is handed over (checked on inputs of many batches). */
    assert_int_equal(t0, before);
    if (expect_thread)
        assert_true(t1 > before);
    size_t n0, n1;
    uint64_t h0 = file_hash(p0, &n0), h1 = file_hash(p1, &n1);
    if (n0 != n1 || h0 != h1)
        print_error("%s: without thread %zu bytes hash %016llx, with thread %zu bytes hash "
                    "%016llx\n", what, n0, (unsigned long long)h0, n1, (unsigned long long)h1);
    assert_int_equal(n0, n1);
    assert_true(h0 == h1);
    kbuf f0 = KBUF_INIT, f1 = KBUF_INIT;
    assert_int_equal(env_read_file(p0, &f0, &err), KILN_OK);
    assert_int_equal(env_read_file(p1, &f1, &err), KILN_OK);
    assert_int_equal(f0.len, f1.len);
    assert_memory_equal(f0.data, f1.data, f0.len);
    buf_free(&f0);
    buf_free(&f1);
    unlink(p0);
    unlink(p1);
    return n0;
}

/* ------------------------------------------------------------------ tests */

/* Every codec x block size x batch size, ROW and ROWCOL blooms, small index
 * and bloom chunks so leaves, intermediate levels and many chunks appear. */
static void
same_bytes_every_codec_and_block_size(void **state)
{
    cellset cs;
    cellset_make(&cs, 6000, 200);
    static const kiln_codec codecs[] = {CODEC_NONE, CODEC_SNAPPY, CODEC_ZSTD, CODEC_LZ4, CODEC_GZ};
    static const size_t blocks[] = {1, 512, 4096, 65536};
    static const size_t batches[] = {0, 8192, 262144};
    for (size_t ci = 0; ci < sizeof codecs / sizeof codecs[0]; ci++) {
        for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; bi++) {
            for (size_t ti = 0; ti < sizeof batches / sizeof batches[0]; ti++) {
                hfile_writer_options o;
                base_options(&o);
                o.codec = codecs[ci];
                o.block_size = blocks[bi];
                o.batch_bytes = batches[ti];
                o.bloom = (bi + ti) % 2 ? BLOOM_ROWCOL : BLOOM_ROW;
                o.index_block_max = 1024;
                o.bloom_chunk_bytes = 512;
                char what[128];
                snprintf(what, sizeof what, "%s block %zu batch %zu %s",
                         compress_codec_name(o.codec), o.block_size, o.batch_bytes,
                         bloom_type_name(o.bloom));
                /* ~1 MB of cells: many batches unless one batch is 256 KiB of 64 KiB blocks */
                same_bytes(&o, &cs, what, 1);
            }
        }
    }
    cellset_free(&cs);
}

/* A file smaller than one batch never starts the thread, and is the same. */
static void
same_bytes_small_and_empty(void **state)
{
    cellset cs;
    cellset_make(&cs, 20, 50);
    hfile_writer_options o;
    base_options(&o);
    o.codec = CODEC_SNAPPY;
    same_bytes(&o, &cs, "20 rows", 0);
    cs.n = 0;
    same_bytes(&o, &cs, "empty", 0);
    cs.n = 1;
    same_bytes(&o, &cs, "one cell", 0);
    cellset_free(&cs);
}

/* One cell per block and one block per batch: the caller and the thread pass
 * the four slots back and forth tens of thousands of times, and a small index
 * block makes the caller wait for the ring to empty before every leaf. */
static void
ring_wraps_with_tiny_blocks(void **state)
{
    cellset cs;
    cellset_make(&cs, 25000, 16);
    hfile_writer_options o;
    base_options(&o);
    o.codec = CODEC_LZ4;
    o.block_size = 1;
    o.batch_bytes = 0;
    o.index_block_max = 2048;
    o.bloom_chunk_bytes = 256;
    same_bytes(&o, &cs, "block 1, batch 0", 1);
    o.codec = CODEC_NONE;
    o.batch_bytes = 100;
    same_bytes(&o, &cs, "block 1, batch 100, none", 1);
    cellset_free(&cs);
}

/* Parse "offset N" out of msg; -1 if absent. */
static long long
msg_offset(const char *msg)
{
    const char *p = strstr(msg, "at offset ");
    return p == NULL ? -1 : strtoll(p + 10, NULL, 10);
}

/* Fail the k-th write(2) -- which happens on the writer's thread -- for every
 * k a normal run makes: a clean ENOSPC naming the file and the block's
 * offset, from an add (the input runs long past the failure) or from finish
 * (the last writes), the error sticky, and no file left. */
static void
write_error_on_thread(void **state)
{
    cellset cs;
    cellset_make(&cs, 40000, 120);
    char path[256];
    tmp_path(path, sizeof path, "fault.hfile");
    hfile_writer_options o;
    base_options(&o);
    o.codec = CODEC_SNAPPY;
    o.block_size = 4096;
    o.batch_bytes = 16384;
    kiln_err err;
    status_clear(&err);
    env_fault_clear();
    assert_int_equal(write_cells(path, &o, &cs, NULL, &err), KILN_OK);
    long writes = env_op_calls(ENV_OP_WRITE);
    size_t size;
    file_hash(path, &size);
    assert_true(writes >= 4);
    unlink(path);

    int from_add = 0, from_finish = 0;
    for (long k = 1; k <= writes; k++) {
        env_fault_clear();
        env_fault_arm(ENV_OP_WRITE, k, ENOSPC);
        status_clear(&err);
        hfile_writer *w;
        assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_OK);
        kiln_status s = KILN_OK;
        size_t i;
        for (i = 0; i < cs.n && s == KILN_OK; i++)
            s = hfile_writer_add(w, &cs.c[i], &err);
        if (s != KILN_OK) {
            from_add++;
            /* sticky: the next add returns the same failure */
            kiln_err again;
            status_clear(&again);
            assert_int_equal(hfile_writer_add(w, &cs.c[i], &again), s);
            assert_string_equal(again.msg, err.msg);
            hfile_writer_abandon(w);
        } else {
            s = hfile_writer_finish(w, NULL, &err);
            from_finish++;
        }
        assert_int_equal(s, KILN_IO);
        assert_int_equal(err.sys_errno, ENOSPC);
        assert_non_null(strstr(err.msg, path));
        /* The last write is the trailer's flush in finish, on this thread. */
        if (k < writes) {
            long long off = msg_offset(err.msg);
            if (off < 0)
                print_error("write %ld: no offset in '%s'\n", k, err.msg);
            assert_true(off >= 0 && (size_t)off < size);
        }
        assert_false(env_exists(path));
    }
    /* The early writes fail while cells keep coming. */
    assert_true(from_add >= 1);
    assert_true(from_finish >= 1);
    env_fault_clear();
    cellset_free(&cs);
}

/* Abandon with batches in flight, right after open, and after a failure:
 * the thread is joined (the process is back to its thread count) and the
 * file is gone. ASan and TSan runs check for leaks and races. */
static void
abandon_mid_file(void **state)
{
    cellset cs;
    cellset_make(&cs, 30000, 100);
    char path[256];
    tmp_path(path, sizeof path, "abandon.hfile");
    hfile_writer_options o;
    base_options(&o);
    o.codec = CODEC_ZSTD;
    o.block_size = 1024;
    o.batch_bytes = 4096;
    kiln_err err;
    status_clear(&err);
    int before = thread_count();
    size_t stops[] = {0, 1, 500, 7777, cs.n / 2, cs.n};
    for (size_t si = 0; si < sizeof stops / sizeof stops[0]; si++) {
        hfile_writer *w;
        assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_OK);
        for (size_t i = 0; i < stops[si]; i++)
            assert_int_equal(hfile_writer_add(w, &cs.c[i], &err), KILN_OK);
        if (stops[si] > 5000)
            assert_true(thread_count() > before);
        hfile_writer_abandon(w);
        assert_int_equal(thread_count(), before);
        assert_false(env_exists(path));
    }

    /* after a failure on the thread */
    env_fault_clear();
    env_fault_arm(ENV_OP_WRITE, 1, EIO);
    hfile_writer *w;
    assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_OK);
    kiln_status s = KILN_OK;
    for (size_t i = 0; i < cs.n && s == KILN_OK; i++)
        s = hfile_writer_add(w, &cs.c[i], &err);
    assert_int_equal(s, KILN_IO);
    assert_int_equal(err.sys_errno, EIO);
    hfile_writer_abandon(w);
    assert_int_equal(thread_count(), before);
    assert_false(env_exists(path));
    env_fault_clear();
    cellset_free(&cs);
}

/* Out-of-order input with batches in flight is the caller's error, as
 * without the thread, and the options are checked. */
static void
order_error_and_options(void **state)
{
    cellset cs;
    cellset_make(&cs, 8000, 100);
    char path[256];
    tmp_path(path, sizeof path, "order.hfile");
    hfile_writer_options o;
    base_options(&o);
    o.batch_bytes = 4096;
    kiln_err err;
    status_clear(&err);
    hfile_writer *w;
    assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_OK);
    for (size_t i = 0; i < 6000; i++)
        assert_int_equal(hfile_writer_add(w, &cs.c[i], &err), KILN_OK);
    assert_int_equal(hfile_writer_add(w, &cs.c[10], &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "cell 6000"));
    assert_int_equal(hfile_writer_finish(w, NULL, &err), KILN_INVALID);
    assert_false(env_exists(path));

    o.threads = 2;
    status_clear(&err);
    assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "threads"));
    o.threads = -1;
    status_clear(&err);
    assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_INVALID);
    assert_false(env_exists(path));
    cellset_free(&cs);
}

/* hfile_writer_bytes moves with every data block that closes, with the
 * thread as without (compaction polls and paces by it). */
static void
bytes_grow_with_every_block(void **state)
{
    cellset cs;
    cellset_make(&cs, 3000, 100);
    char path[256];
    tmp_path(path, sizeof path, "bytes.hfile");
    for (int threads = 0; threads <= 1; threads++) {
        hfile_writer_options o;
        base_options(&o);
        o.codec = CODEC_SNAPPY;
        o.block_size = 512;
        o.threads = threads;
        kiln_err err;
        status_clear(&err);
        hfile_writer *w;
        assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_OK);
        uint64_t last = hfile_writer_bytes(w), changes = 0;
        assert_int_equal(last, 0);
        for (size_t i = 0; i < cs.n; i++) {
            assert_int_equal(hfile_writer_add(w, &cs.c[i], &err), KILN_OK);
            uint64_t b = hfile_writer_bytes(w);
            if (b != last)
                changes++;
            last = b;
        }
        hfile_writer_stats st;
        assert_int_equal(hfile_writer_finish(w, &st, &err), KILN_OK);
        /* every block but the last closed during an add */
        if (changes + 1 < st.data_blocks)
            print_error("threads %d: %llu changes for %llu blocks\n", threads,
                        (unsigned long long)changes, (unsigned long long)st.data_blocks);
        assert_true(changes + 1 >= st.data_blocks);
        assert_true(st.data_blocks > 100);
        unlink(path);
    }
    cellset_free(&cs);
}

static int
setup_dir(void **state)
{
    tu_mkdtemp(tmp_dir, sizeof tmp_dir, "hfwp");
    return 0;
}

static int
teardown_dir(void **state)
{
    return rmdir(tmp_dir);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_hfile_writer_pipe: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_bytes_every_codec_and_block_size),
        cmocka_unit_test(same_bytes_small_and_empty),
        cmocka_unit_test(ring_wraps_with_tiny_blocks),
        cmocka_unit_test(write_error_on_thread),
        cmocka_unit_test(abandon_mid_file),
        cmocka_unit_test(order_error_and_options),
        cmocka_unit_test(bytes_grow_with_every_block),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
