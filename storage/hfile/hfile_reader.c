/* hfile_reader.c -- what an open HFile reader answers besides iteration: its
 * accessors (trailer, FileInfo, sizes, first and last key), the bloom checks
 * (ROW, ROWCOL and delete-family, chunks through the pin tables) and prefetch
 * of the data blocks into the block cache. Opening is hfile_reader_open.c.
 */
#include "storage/hfile/hfile_reader_int.h"

#include "storage/base/buf.h"
#include "storage/base/coding.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ accessors */


const char *
hfile_reader_path(const hfile_reader *r)
{
    return r->path;
}

const hfile_trailer *
hfile_reader_trailer(const hfile_reader *r)
{
    return &r->t;
}

const hfile_fileinfo *
hfile_reader_fileinfo(const hfile_reader *r)
{
    return &r->fi;
}

uint64_t
hfile_reader_file_size(const hfile_reader *r)
{
    return r->size;
}

uint64_t
hfile_reader_entry_count(const hfile_reader *r)
{
    return r->t.entry_count;
}
hfile_encoding
hfile_reader_encoding(const hfile_reader *r)
{
    return r->encoding;
}

kiln_bloom_type
hfile_reader_bloom_type(const hfile_reader *r)
{
    return r->bloom_type;
}

int
hfile_reader_has_delete_family_bloom(const hfile_reader *r)
{
    return r->delfam.usable;
}

size_t
hfile_reader_memory(const hfile_reader *r)
{
    return r->memory;
}

kslice
hfile_reader_first_key(const hfile_reader *r)
{
    return r->first_key;
}

kslice
hfile_reader_last_key(const hfile_reader *r)
{
    return r->last_key;
}

/* ------------------------------------------------------------------ bloom */

/* ROWCOL chunk keys are first-on-row-col KeyValue keys (HBase 2.x puts the
 * family in them, the hashed bloom key leaves it out): within one file the
 * family is fixed, so chunks are ordered by row, then qualifier. */
int
hfile_reader_rowcol_compare(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    kiln_cell ca, cb;
    if (cell_key_decode(a, an, &ca, NULL) != KILN_OK || cell_key_decode(b, bn, &cb, NULL) != KILN_OK)
        return kslice_cmp(kslice_make(a, an), kslice_make(b, bn));
    int c = kslice_cmp(kslice_make(ca.row, ca.row_len), kslice_make(cb.row, cb.row_len));
    if (c != 0)
        return c;
    return kslice_cmp(kslice_make(ca.qualifier, ca.qualifier_len),
                      kslice_make(cb.qualifier, cb.qualifier_len));
}

/* Largest chunk whose first key is <= key, or -1. Row keys are compared by
 * their 8-byte prefixes first: two prefixes that differ order their keys. */
static long
bloom_chunk_for(const bloom_meta *m, const uint8_t *key, size_t n)
{
    long lo = 0, hi = (long)m->nchunks - 1, found = -1;
    uint64_t kp = m->cell_keys ? 0 : hfile_key_prefix(key, n);
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        kslice k = m->chunks[mid].key;
        int c;
        if (m->cell_keys)
            c = hfile_reader_rowcol_compare(k.p, k.n, key, n);
        else if (m->chunk_prefix[mid] != kp)
            c = m->chunk_prefix[mid] < kp ? -1 : 1;
        else
            c = kslice_cmp(k, kslice_make(key, n));
        if (c <= 0) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

static int
bloom_check(hfile_reader *r, bloom_meta *m, const uint8_t *key, size_t n, kiln_err *err)
{
    long i = bloom_chunk_for(m, key, n);
    if (i < 0)
        return 0;
    block_cache_handle *h;
    const hfile_block *b;
    if (hfile_reader_block_get_pinned(r, &m->pins, (uint32_t)i, m->chunks[i].offset,
                                      m->chunks[i].on_disk_size,
                                      TYPE_BIT(HFILE_BLOCK_BLOOM_CHUNK), &h, &b, err) != KILN_OK)
        return 1;
    int res = bloom_chunk_may_contain(b->bytes, b->len, (int)m->hash_count, key, n);
    block_cache_release(r->cache, h);
    return res;
}

int
hfile_reader_may_contain_row(hfile_reader *r, const uint8_t *row, size_t n, kiln_err *err)
{
    if (r->bloom_type != BLOOM_ROW)
        return 1;
    return bloom_check(r, &r->general, row, n, err);
}

int
hfile_reader_may_contain_rowcol(hfile_reader *r, const uint8_t *row, size_t rn,
                                const uint8_t *qual, size_t qn, kiln_err *err)
{
    if (r->bloom_type == BLOOM_ROW)
        return bloom_check(r, &r->general, row, rn, err);
    if (r->bloom_type != BLOOM_ROWCOL)
        return 1;
    uint8_t stack[512];
    kbuf key = KBUF_INIT;
    size_t need = rn + qn + CELL_KEY_INFRASTRUCTURE;
    if (rn > CELL_ROW_MAX)
        return 0; /* no such row can be in a file */
    uint8_t *k = stack;
    if (need > sizeof stack) {
        buf_reserve(&key, need);
        k = key.data;
    }
    coding_put_be16(k, (uint16_t)rn);
    if (rn)
        memcpy(k + 2, row, rn);
    k[2 + rn] = 0;
    if (qn)
        memcpy(k + 3 + rn, qual, qn);
    coding_put_be64(k + 3 + rn + qn, (uint64_t)CELL_LATEST_TIMESTAMP);
    k[need - 1] = CELL_TYPE_MAXIMUM;
    int res = bloom_check(r, &r->general, k, need, err);
    buf_free(&key);
    return res;
}

int
hfile_reader_may_have_delete_family(hfile_reader *r, const uint8_t *row, size_t n, kiln_err *err)
{
    if (r->delete_family_count == 0)
        return 0;
    if (!r->delfam.usable)
        return 1;
    return bloom_check(r, &r->delfam, row, n, err);
}

/* ------------------------------------------------------------------ prefetch */

kiln_status
hfile_reader_prefetch(hfile_reader *r, uint64_t *budget, int (*stop)(void *), void *arg,
                      kiln_err *err)
{
    if (r->own_cache || r->cache == NULL)
        return KILN_OK;
    icursor c = {.r = r, .levels = r->levels};
    kiln_status s = hfile_cursor_seek(&c, POS_FIRST, NULL, err);
    for (uint64_t n = 0; s == KILN_OK; n++) {
        if ((n & 15) == 15 && stop != NULL && stop(arg))
            break;
        hfile_index_entry e;
        hfile_cursor_data_loc(&c, &e.offset, &e.on_disk_size);
        block_cache_handle *h = block_cache_lookup(r->cache, r->file_id, e.offset);
        if (h == NULL) {
            if (*budget == 0)
                break;
            hfile_block *b;
            s = hfile_reader_block_load(r, e.offset, e.on_disk_size, DATA_TYPES, &b, NULL, err);
            if (s != KILN_OK)
                break;
            size_t charge = b->alloc;
            h = block_cache_insert_block_if_room(r->cache, r->file_id, e.offset, b, b->alloc);
            if (h != NULL)
                *budget = charge < *budget ? *budget - charge : 0;
            /* else its shard is full: the block stays out, and so do
             * whatever blocks readers use there */
        }
        block_cache_release(r->cache, h);
        s = hfile_cursor_step(&c, 1, err);
    }
    hfile_cursor_release(&c);
    return s == KILN_NOT_FOUND ? KILN_OK : s;
}

uint64_t
hfile_reader_drop_cached(hfile_reader *r)
{
    if (r->own_cache || r->cache == NULL)
        return 0;
    return block_cache_drop_file(r->cache, r->file_id);
}

uint64_t
hfile_reader_cached_bytes(const hfile_reader *r)
{
    if (r->own_cache || r->cache == NULL)
        return 0;
    return block_cache_file_bytes(r->cache, r->file_id);
}
