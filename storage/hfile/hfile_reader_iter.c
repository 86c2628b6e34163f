/* hfile_reader_iter.c -- iteration over an HFile's cells, forward and reverse: the
 * index cursor (hfile_reader_cursor.c) picks the data block, a binary search over
 * the block's row words and cells picks the cell, and next/prev cross to the
 * neighbouring block through the cursor.
 */
#include "storage/hfile/hfile_reader_int.h"
#include "storage/hfile/hfile_block_iter.h"

#include <stdlib.h>

/* ------------------------------------------------------------------ iterator */

struct hfile_iter {
    icursor cur;
    block_cache_handle *dh;
    const hfile_block *db;
    uint64_t db_off;
    uint32_t pos;
    int valid;
    kiln_cell cell;
    /* Read-ahead of the next block while next() walks this one: at pos
     * ra_at, stage ra_stage (0: ask for its cache slot, 1: its entry, 2: pin
     * it as nh, and ask for its first cell). */
    uint32_t ra_at;
    uint8_t ra_stage;
    uint64_t ra_off;
    block_cache_handle *nh;     /* the block at ra_off, pinned ahead (or NULL) */
};

enum { RA_OFF = UINT32_MAX };

/* How far past the current cell's key next() asks for a block's bytes: about
 * two cells of a typical table, far enough to have arrived when next() gets
 * there (256 beat 192, 320 and 512 in the 10M-row scan bench). */
#define ITER_AHEAD_BYTES 256

hfile_iter *
hfile_iter_new(hfile_reader *r)
{
    hfile_iter *it = kiln_calloc(1, sizeof *it);
    it->cur.r = r;
    it->cur.levels = r->levels;
    return it;
}

static void
iter_drop_data(hfile_iter *it)
{
    block_cache_release(it->cur.r->cache, it->dh);
    it->dh = NULL;
    it->db = NULL;
}

static void
iter_drop_ahead(hfile_iter *it)
{
    block_cache_release(it->cur.r->cache, it->nh);
    it->nh = NULL;
}

/* Let go of every block the iterator holds (both iterators' close). */
static void
iter_release(hfile_iter *it)
{
    iter_drop_data(it);
    iter_drop_ahead(it);
    hfile_cursor_release(&it->cur);
}

void
hfile_iter_free(hfile_iter *it)
{
    if (it == NULL)
        return;
    iter_release(it);
    free(it);
}

int
hfile_iter_valid(const hfile_iter *it)
{
    return it->valid;
}

const kiln_cell *
hfile_iter_cell(const hfile_iter *it)
{
    return &it->cell;
}

static void
iter_set(hfile_iter *it, uint32_t pos)
{
    it->pos = pos;
    it->valid = 1;
    hfile_block_cell(it->db, pos, &it->cell);
}

/* Start reading the next block ahead once next() has passed `after` more
 * cells of this one: at once after a crossing (a scan), after two after a
 * seek (a Get reads a row's few cells and stops). Nothing if this block's
 * read-ahead has begun. */
static void
iter_arm(hfile_iter *it, uint32_t after)
{
    if (it->ra_stage == 0)
        it->ra_at = it->pos + after;
}

/* Pin the data block the cursor points at. */
static kiln_status
iter_load_data(hfile_iter *it, kiln_err *err)
{
    hfile_index_entry e;
    hfile_cursor_data_loc(&it->cur, &e.offset, &e.on_disk_size);
    if (it->db && it->db_off == e.offset)
        return KILN_OK;
    it->ra_stage = 0;
    it->ra_at = RA_OFF;
    block_cache_handle *h;
    const hfile_block *b;
    if (it->nh != NULL && it->ra_off == e.offset) {
        h = it->nh;             /* read ahead: pinned and checked already */
        b = block_cache_data(h);
        it->nh = NULL;
    } else {
        iter_drop_ahead(it);
        kiln_status s =
            hfile_reader_block_get(it->cur.r, e.offset, e.on_disk_size, DATA_TYPES, &h, &b, err);
        if (s != KILN_OK)
            return s;
    }
    iter_drop_data(it);
    it->dh = h;
    it->db = b;
    it->db_off = e.offset;
    return KILN_OK;
}

/* Result of a positioning step: on error or at the end the iterator is invalid. */
static kiln_status
iter_result(hfile_iter *it, kiln_status s)
{
    if (s == KILN_NOT_FOUND) {
        it->valid = 0;
        return KILN_OK;
    }
    if (s != KILN_OK)
        it->valid = 0;
    return s;
}

/* Move to the first (dir 1) or last (-1) cell of the next/previous block. */
static kiln_status
iter_cross(hfile_iter *it, int dir, kiln_err *err)
{
    kiln_status s = hfile_cursor_step(&it->cur, dir, err);
    if (s == KILN_OK)
        s = iter_load_data(it, err);
    if (s == KILN_OK) {
        iter_set(it, dir > 0 ? 0 : it->db->count - 1);
        if (dir > 0)
            iter_arm(it, 1);
    }
    return iter_result(it, s);
}

kiln_status
hfile_iter_seek_first(hfile_iter *it, kiln_err *err)
{
    kiln_status s = hfile_cursor_seek(&it->cur, POS_FIRST, NULL, err);
    if (s == KILN_OK)
        s = iter_load_data(it, err);
    if (s == KILN_OK) {
        iter_set(it, 0);
        iter_arm(it, 2);
    }
    return iter_result(it, s);
}

kiln_status
hfile_iter_seek_last(hfile_iter *it, kiln_err *err)
{
    kiln_status s = hfile_cursor_seek(&it->cur, POS_LAST, NULL, err);
    if (s == KILN_OK)
        s = iter_load_data(it, err);
    if (s == KILN_OK)
        iter_set(it, it->db->count - 1);
    return iter_result(it, s);
}

kiln_status
hfile_iter_seek(hfile_iter *it, const kiln_cell *key, kiln_err *err)
{
    kiln_status s = hfile_cursor_seek(&it->cur, POS_KEY, key, err);
    if (s == KILN_OK)
        s = iter_load_data(it, err);
    if (s != KILN_OK)
        return iter_result(it, s);
    uint32_t pos = hfile_block_search(it->db, key, 0);
    if (pos < it->db->count) {
        iter_set(it, pos);
        iter_arm(it, 2);
        return KILN_OK;
    }
    /* Every cell here is smaller: the answer is the next block's first cell. */
    return iter_cross(it, 1, err);
}

kiln_status
hfile_iter_seek_for_prev(hfile_iter *it, const kiln_cell *key, kiln_err *err)
{
    kiln_status s = hfile_cursor_seek(&it->cur, POS_KEY, key, err);
    if (s == KILN_OK)
        s = iter_load_data(it, err);
    if (s != KILN_OK)
        return iter_result(it, s);
    uint32_t pos = hfile_block_search(it->db, key, 1);
    if (pos > 0) {
        iter_set(it, pos - 1);
        return KILN_OK;
    }
    /* The index key was a shortened separator above the block's cells or the
     * key is before this block: the answer is the previous block's last cell. */
    return iter_cross(it, -1, err);
}

/* One stage of reading the next block ahead, spread over the cells left in
 * this block (the last stage at its last cell at the latest), so that each
 * fetch has arrived by the next stage and the whole block by the crossing:
 * a scan then waits on no cache miss of the block cache's table, entry or
 * the block's start. Blocks not cached are left to the crossing (no file
 * read here); so is a next block under another leaf. */
static void
iter_read_ahead(hfile_iter *it)
{
    hfile_reader *r = it->cur.r;
    uint32_t last = it->db->count - 1, left = last - it->pos;
    switch (it->ra_stage++) {
    case 0:
        if (!hfile_cursor_next_data_loc(&it->cur, &it->ra_off)) {
            it->ra_at = RA_OFF;
            return;
        }
        block_cache_prefetch(r->cache, r->file_id, it->ra_off, 0);
        it->ra_at = it->pos + (left + 2) / 3;
        return;
    case 1:
        block_cache_prefetch(r->cache, r->file_id, it->ra_off, 1);
        it->ra_at = it->pos + (left + 1) / 2;
        return;
    default: {
        it->ra_at = RA_OFF;
        if (it->nh != NULL)
            return;
        block_cache_handle *h = block_cache_lookup(r->cache, r->file_id, it->ra_off);
        if (h == NULL)
            return;
        const hfile_block *b = block_cache_data(h);
        if (!(DATA_TYPES & TYPE_BIT(b->type)) || b->count == 0) {
            block_cache_release(r->cache, h);   /* the crossing reports it */
            return;
        }
        it->nh = h;
        __builtin_prefetch(&b->cells[0]);
        __builtin_prefetch(b->bytes + b->cells[0].key_off);
        __builtin_prefetch(b->bytes + b->cells[0].key_off + 64);
        return;
    }
    }
}

kiln_status
hfile_iter_next(hfile_iter *it, kiln_err *err)
{
    if (!it->valid)
        return status_set(err, KILN_INVALID, "%s: iterator is not positioned", it->cur.r->path);
    if (it->pos + 1 < it->db->count) {
        iter_set(it, it->pos + 1);
        /* the cells a few ahead in this block: a scan reads each cell's
         * bytes, and waits for them otherwise */
        const uint8_t *ahead = it->cell.row + ITER_AHEAD_BYTES;
        if (ahead < it->db->bytes + it->db->len) {
            __builtin_prefetch(ahead);
            __builtin_prefetch(ahead + 64);
            __builtin_prefetch(ahead + 128);
        }
        while (it->pos >= it->ra_at)   /* on a block's last cells, stages at once */
            iter_read_ahead(it);
        return KILN_OK;
    }
    return iter_cross(it, 1, err);
}

kiln_status
hfile_iter_prev(hfile_iter *it, kiln_err *err)
{
    if (!it->valid)
        return status_set(err, KILN_INVALID, "%s: iterator is not positioned", it->cur.r->path);
    if (it->pos > 0) {
        iter_set(it, it->pos - 1);
        return KILN_OK;
    }
    return iter_cross(it, -1, err);
}

/* ------------------------------------------------------------------ kiln iterators */

/* The file iterator behind the common interface (iter.h): an hfile_iter
 * inside, so the calls below inline its steps. */
typedef struct kiter {
    kiln_iter base;             /* first: a kiln_iter */
    hfile_iter it;
} kiter;

static inline void
kiter_after(kiter *k, kiln_status s)
{
    if (s != KILN_OK && k->base.err.code == KILN_OK)
        k->base.err.code = s;
    k->base.cur = s == KILN_OK && k->it.valid ? &k->it.cell : NULL;
}

static void
kiter_seek_first(kiln_iter *base)
{
    kiter *k = (kiter *)base;
    kiln_iter_restart(base);
    kiter_after(k, hfile_iter_seek_first(&k->it, &base->err));
}

static void
kiter_seek_last(kiln_iter *base)
{
    kiter *k = (kiter *)base;
    kiln_iter_restart(base);
    kiter_after(k, hfile_iter_seek_last(&k->it, &base->err));
}

static void
kiter_seek(kiln_iter *base, const kiln_cell *key)
{
    kiter *k = (kiter *)base;
    kiln_iter_restart(base);
    kiter_after(k, hfile_iter_seek(&k->it, key, &base->err));
}

static void
kiter_seek_for_prev(kiln_iter *base, const kiln_cell *key)
{
    kiter *k = (kiter *)base;
    kiln_iter_restart(base);
    kiter_after(k, hfile_iter_seek_for_prev(&k->it, key, &base->err));
}

static void
kiter_next(kiln_iter *base)
{
    kiter *k = (kiter *)base;
    kiter_after(k, hfile_iter_next(&k->it, &base->err));
}

static void
kiter_prev(kiln_iter *base)
{
    kiter *k = (kiter *)base;
    kiter_after(k, hfile_iter_prev(&k->it, &base->err));
}

static void
kiter_close(kiln_iter *base)
{
    kiter *k = (kiter *)base;
    iter_release(&k->it);
    free(k);
}

static const kiln_iter_ops kiter_ops = {
    .seek_first = kiter_seek_first,
    .seek_last = kiter_seek_last,
    .seek = kiter_seek,
    .seek_for_prev = kiter_seek_for_prev,
    .next = kiter_next,
    .prev = kiter_prev,
    .close = kiter_close,
};

kiln_iter *
hfile_reader_iter(hfile_reader *r)
{
    kiter *k = kiln_calloc(1, sizeof *k);
    kiln_iter_init(&k->base, &kiter_ops);
    k->it.cur.r = r;
    k->it.cur.levels = r->levels;
    return &k->base;
}

kiln_status
hfile_reader_block_iter(hfile_reader *r, uint64_t n, kiln_iter **out, kiln_err *err)
{
    *out = NULL;
    icursor c = {.r = r, .levels = r->levels};
    kiln_status s = hfile_cursor_seek(&c, POS_FIRST, NULL, err);
    for (uint64_t i = 0; i < n && s == KILN_OK; i++)
        s = hfile_cursor_step(&c, 1, err);
    block_cache_handle *h = NULL;
    const hfile_block *b = NULL;
    if (s == KILN_OK) {
        hfile_index_entry e;
        hfile_cursor_data_entry(&c, &e);
        s = hfile_reader_block_get(r, e.offset, e.on_disk_size, DATA_TYPES, &h, &b, err);
    }
    hfile_cursor_release(&c);
    if (s == KILN_NOT_FOUND)
        return status_set(err, KILN_NOT_FOUND, "%s: no data block %llu", r->path,
                          (unsigned long long)n);
    if (s != KILN_OK)
        return s;
    *out = hfile_block_iter_new(b, r->cache, h);
    return KILN_OK;
}

kiln_status
hfile_reader_block_rows(hfile_reader *r, size_t max, kbuf *rows, size_t *n, kiln_err *err)
{
    *n = 0;
    if (max == 0 || hfile_reader_entry_count(r) == 0)
        return KILN_OK;
    /* Count the blocks, then take the row of every stride-th. */
    icursor c = {.r = r, .levels = r->levels};
    uint64_t blocks = 0;
    kiln_status s = hfile_cursor_seek(&c, POS_FIRST, NULL, err);
    while (s == KILN_OK) {
        blocks++;
        s = hfile_cursor_step(&c, 1, err);
    }
    hfile_cursor_release(&c);
    if (s != KILN_NOT_FOUND)
        return s;
    double stride = blocks > max ? (double)blocks / (double)max : 1.0;
    double next = 0;
    uint64_t i = 0;
    icursor c2 = {.r = r, .levels = r->levels};
    s = hfile_cursor_seek(&c2, POS_FIRST, NULL, err);
    while (s == KILN_OK && *n < max) {
        if ((double)i >= next) {
            hfile_index_entry e;
            hfile_cursor_data_entry(&c2, &e);
            if (e.key.n < 2) {
                s = status_set(err, KILN_CORRUPTION, "%s: block index entry %llu has a key of "
                               "%zu bytes", r->path, (unsigned long long)i, e.key.n);
                break;
            }
            size_t rl = ((size_t)e.key.p[0] << 8) | e.key.p[1];
            if (rl + 2 > e.key.n) {
                s = status_set(err, KILN_CORRUPTION, "%s: block index entry %llu: row length "
                               "%zu past its key of %zu bytes", r->path, (unsigned long long)i,
                               rl, e.key.n);
                break;
            }
            buf_append_be32(rows, (uint32_t)rl);
            buf_append(rows, e.key.p + 2, rl);
            (*n)++;
            next += stride;
        }
        i++;
        s = hfile_cursor_step(&c2, 1, err);
    }
    hfile_cursor_release(&c2);
    return s == KILN_NOT_FOUND ? KILN_OK : s;
}
