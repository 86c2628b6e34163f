/* fuzz_hfile_reader.c -- libFuzzer target for the HFile reader.
 *
 * The input is a whole HFile. It is served from a memfd and read twice: as
 * it is, and with every block's CRC32C recomputed (walking the block headers
 * from offset 0), so mutations also get past the checksums into the block,
 * index, bloom and cell decoders. Each round opens the file, runs the full
 * check, iterates forward and backward, seeks to keys seen on the way and
 * bloom-checks their rows. Any failure must be a clean KILN_CORRUPTION or
 * KILN_UNSUPPORTED naming the file, and the answers must agree with one
 * another (a passing check means forward and backward iteration see the
 * same number of cells); otherwise the target traps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "storage/base/block_cache.h"
#include "storage/base/buf.h"
#include "storage/hfile/cell.h"
#include "storage/base/coding.h"
#include "storage/base/crc32c.h"
#include "storage/hfile/hfile_format.h"
#include "storage/hfile/hfile_reader.h"

#define MAX_STEPS 100000    /* iteration steps per direction (a hostile index can revisit blocks) */
#define MAX_KEYS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char path[64];
static block_cache *cache;

static void
expect_clean(kiln_status s, const kiln_err *err)
{
    if (s != KILN_CORRUPTION && s != KILN_UNSUPPORTED) {
        fprintf(stderr, "unexpected status %d: %s\n", s, err->msg);
        __builtin_trap();
    }
    if (strstr(err->msg, path) == NULL) {
        fprintf(stderr, "error does not name the file: %s\n", err->msg);
        __builtin_trap();
    }
}

static void
store(const uint8_t *p, size_t n)
{
    if (ftruncate(memfd, 0) != 0 || (n && pwrite(memfd, p, n, 0) != (ssize_t)n))
        abort();
}

/* Recompute the checksums of every block found by walking headers from 0. */
static int
fix_checksums(uint8_t *p, size_t n)
{
    int changed = 0;
    size_t off = 0;
    while (n - off >= HFILE_BLOCK_HEADER_SIZE) {
        hfile_block_header h;
        if (hfile_block_header_decode(p + off, &h, NULL) != KILN_OK)
            break;
        size_t size = (size_t)h.on_disk_size_without_header + HFILE_BLOCK_HEADER_SIZE;
        size_t dsz = h.on_disk_data_size_with_header;
        if (size > n - off || h.checksum_type == HFILE_CHECKSUM_NULL || h.bytes_per_checksum == 0)
            break;
        for (size_t c = 0, at = 0; at < dsz; c++, at += h.bytes_per_checksum) {
            size_t len = dsz - at < h.bytes_per_checksum ? dsz - at : h.bytes_per_checksum;
            uint8_t sum[4];
            coding_put_be32(sum, crc32c_value(p + off + at, len));
            if (memcmp(p + off + dsz + 4 * c, sum, 4) != 0) {
                memcpy(p + off + dsz + 4 * c, sum, 4);
                changed = 1;
            }
        }
        off += size;
    }
    return changed;
}

typedef struct keyset {
    kbuf keys[MAX_KEYS];
    int n;
} keyset;

static void
keep_key(keyset *ks, const kiln_cell *c, unsigned step)
{
    if ((step & (step - 1)) != 0 && step % 97 != 0)
        return;
    int i = ks->n < MAX_KEYS ? ks->n++ : (int)(step % MAX_KEYS);
    buf_reset(&ks->keys[i]);
    cell_key_append(c, &ks->keys[i]);
}

static void
round_trip(void)
{
    kiln_err err;
    status_clear(&err);
    hfile_reader *r = NULL;
    kiln_status s = hfile_reader_open(path, cache, &r, &err);
    if (s != KILN_OK) {
        expect_clean(s, &err);
        return;
    }
    keyset ks;
    memset(&ks, 0, sizeof ks);

    status_clear(&err);
    uint64_t checked = 0;
    kiln_status cs = hfile_reader_check(r, &checked, &err);
    if (cs != KILN_OK)
        expect_clean(cs, &err);

    hfile_iter *it = hfile_iter_new(r);
    unsigned fwd = 0, back = 0;
    status_clear(&err);
    for (s = hfile_iter_seek_first(it, &err); s == KILN_OK && hfile_iter_valid(it) && fwd < MAX_STEPS;
         s = hfile_iter_next(it, &err))
        keep_key(&ks, hfile_iter_cell(it), ++fwd);
    int fwd_done = s == KILN_OK && !hfile_iter_valid(it);
    if (s != KILN_OK)
        expect_clean(s, &err);
    status_clear(&err);
    for (s = hfile_iter_seek_last(it, &err); s == KILN_OK && hfile_iter_valid(it) && back < MAX_STEPS;
         s = hfile_iter_prev(it, &err))
        keep_key(&ks, hfile_iter_cell(it), ++back);
    int back_done = s == KILN_OK && !hfile_iter_valid(it);
    if (s != KILN_OK)
        expect_clean(s, &err);
    if (cs == KILN_OK) {
        /* a file that passes the check reads the same both ways */
        if (!fwd_done || !back_done || fwd != checked || back != checked) {
            fprintf(stderr, "check passed with %llu cells; forward %u (%d), backward %u (%d)\n",
                    (unsigned long long)checked, fwd, fwd_done, back, back_done);
            __builtin_trap();
        }
    }

    for (int i = 0; i < ks.n; i++) {
        kiln_cell key;
        if (cell_key_decode(ks.keys[i].data, ks.keys[i].len, &key, NULL) != KILN_OK)
            __builtin_trap(); /* the reader handed out a malformed key */
        status_clear(&err);
        s = hfile_iter_seek(it, &key, &err);
        if (s != KILN_OK)
            expect_clean(s, &err);
        else if (cs == KILN_OK && (!hfile_iter_valid(it) || cell_compare(hfile_iter_cell(it), &key) != 0))
            __builtin_trap(); /* a checked file lost a key it just listed */
        if (s == KILN_OK && hfile_iter_valid(it)) {
            status_clear(&err);
            s = hfile_iter_next(it, &err);
            if (s != KILN_OK)
                expect_clean(s, &err);
        }
        status_clear(&err);
        s = hfile_iter_seek_for_prev(it, &key, &err);
        if (s != KILN_OK)
            expect_clean(s, &err);
        else if (cs == KILN_OK && !hfile_iter_valid(it))
            __builtin_trap();
        if (s == KILN_OK && hfile_iter_valid(it)) {
            status_clear(&err);
            s = hfile_iter_prev(it, &err);
            if (s != KILN_OK)
                expect_clean(s, &err);
        }
        status_clear(&err);
        int yes = hfile_reader_may_contain_row(r, key.row, key.row_len, &err);
        if (err.code != KILN_OK)
            expect_clean(err.code, &err);
        else if (cs == KILN_OK && !yes)
            __builtin_trap(); /* a checked file's bloom lost a row */
        status_clear(&err);
        hfile_reader_may_contain_rowcol(r, key.row, key.row_len, key.qualifier, key.qualifier_len,
                                        &err);
        if (err.code != KILN_OK)
            expect_clean(err.code, &err);
        status_clear(&err);
        hfile_reader_may_have_delete_family(r, key.row, key.row_len, &err);
        if (err.code != KILN_OK)
            expect_clean(err.code, &err);
    }
    hfile_iter_free(it);
    for (int i = 0; i < MAX_KEYS; i++)
        buf_free(&ks.keys[i]);
    hfile_reader_close(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memfd < 0) {
        memfd = memfd_create("fuzz_hfile", MFD_CLOEXEC);
        if (memfd < 0)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
        cache = block_cache_new(256 * 1024);
    }
    store(data, size);
    round_trip();
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    if (fix_checksums(copy, size)) {
        store(copy, size);
        round_trip();
    }
    free(copy);
    return 0;
}
