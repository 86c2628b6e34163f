/* hfile_reader_cursor.c -- the index cursor of an HFile reader: one position per
 * index level (the root in memory, the intermediate and leaf blocks pinned
 * in the cache), positioned at the first or last data block or by key, and
 * stepped one data block at a time in either direction.
 *
 * Navigation follows the index, never the physical block chain, so next/prev
 * across blocks step the cursor and reverse iteration costs the same as
 * forward. In check mode (hfile_reader_check) every index block the cursor
 * loads is checked against its parent entry.
 */
#include "storage/hfile/hfile_reader_int.h"

#include "storage/base/coding.h"

/* ------------------------------------------------------------------ index cursor */

/* Entry i of a validated non-root block (as hfile_nonroot_index_entry, with
 * the count taken from the block instead of its first line). */
static void
nonroot_entry(const hfile_block *b, uint32_t i, hfile_index_entry *e)
{
    const uint8_t *p = b->bytes;
    const uint8_t *sec = p + 4 + 4 * (size_t)i;
    uint32_t a = coding_get_be32(sec), z = coding_get_be32(sec + 4);
    const uint8_t *q = p + 4 + 4 * ((size_t)b->count + 1) + a;
    e->offset = coding_get_be64(q);
    e->on_disk_size = coding_get_be32(q + 8);
    e->key = kslice_make(q + 12, z - a - 12);
}

static void
cursor_entry_at(const icursor *c, uint32_t d, uint32_t i, hfile_index_entry *e)
{
    if (d == 0)
        *e = c->r->root[i];
    else
        nonroot_entry(c->lv[d].b, i, e);
}

/* Where entry i at level d points (cursor_entry_at without the key). */
static inline void
cursor_loc_at(const icursor *c, uint32_t d, uint32_t i, uint64_t *offset, uint32_t *size)
{
    if (d == 0) {
        *offset = c->r->root[i].offset;
        *size = c->r->root[i].on_disk_size;
    } else if (c->lv[d].b->locs != NULL) {
        *offset = c->lv[d].b->locs[i].offset;
        *size = c->lv[d].b->locs[i].on_disk_size;
    } else {
        hfile_index_entry e;
        nonroot_entry(c->lv[d].b, i, &e);
        *offset = e.offset;
        *size = e.on_disk_size;
    }
}

/* Narrow the search of index block b for a key of row word wk to the
 * entries its group words leave (hfile_block.h): from the last group that
 * starts below wk (whose first entry is then <= the key: *found) to the
 * first that starts above it (where every entry is > the key), and ask for
 * that range's words and locations together when it is one group or two. */
static void
cursor_narrow(const hfile_block *b, uint64_t wk, long *lo, long *hi, long *found)
{
    const uint64_t *gw = b->group_words;
    uint32_t ng = (b->count + HFILE_GROUP - 1) / HFILE_GROUP;
    uint32_t a = 0, z = ng;
    while (a < z) {   /* the first group whose word is >= wk */
        uint32_t m = a + (z - a) / 2;
        if (gw[m] < wk)
            a = m + 1;
        else
            z = m;
    }
    uint32_t below = a, above = a;
    if (above < ng && gw[above] == wk) {   /* rows that share wk: past them */
        z = ng;
        while (above < z) {
            uint32_t m = above + (z - above) / 2;
            if (gw[m] <= wk)
                above = m + 1;
            else
                z = m;
        }
    }
    if (below > 0) {
        *found = (long)(below - 1) * HFILE_GROUP;
        *lo = *found + 1;
    }
    if (above < ng)
        *hi = (long)above * HFILE_GROUP - 1;
    if (*hi - *lo < 2 * HFILE_GROUP) {
        for (long i = *lo; i <= *hi; i += 8)
            __builtin_prefetch(&b->row_words[i]);
        for (long i = *lo; i <= *hi; i += 4)
            __builtin_prefetch(&b->locs[i]);
        if (*hi >= *lo) {
            __builtin_prefetch(&b->row_words[*hi]);
            __builtin_prefetch(&b->locs[*hi]);
        }
    }
}

/* Largest i at level d whose key is <= key, or -1. Row words settle most
 * comparisons without reading the entries. */
static long
cursor_search(const icursor *c, uint32_t d, const kiln_cell *key)
{
    const uint64_t *words;
    const uint8_t *prefix;
    const hfile_index_loc *locs = NULL;
    uint32_t plen;
    if (d == 0) {
        words = c->r->root_words;
        plen = c->r->root_prefix;
        prefix = c->r->root_count ? c->r->root[0].key.p + 2 : NULL;
    } else {
        words = c->lv[d].b->row_words;
        plen = c->lv[d].b->row_prefix;
        prefix = c->lv[d].b->prefix;
        locs = c->lv[d].b->locs;
    }
    uint64_t wk = 0;
    if (words) {
        int where = hfile_row_word_locate(prefix, plen, key, &wk);
        if (where < 0)
            return -1;
        if (where > 0)
            return (long)c->lv[d].count - 1;
    }
    long lo = 0, hi = (long)c->lv[d].count - 1, found = -1;
    if (d > 0 && c->lv[d].b->group_words != NULL)
        cursor_narrow(c->lv[d].b, wk, &lo, &hi, &found);
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        int cmp;
        if (words) {
            /* both possible next probes: their cache misses overlap this one's */
            __builtin_prefetch(&words[lo + (mid - lo) / 2]);
            __builtin_prefetch(&words[mid + 1 + (hi - mid) / 2]);
        }
        if (locs != NULL && hi - lo < 8)
            __builtin_prefetch(&locs[mid]);   /* the answer's location is near */
        if (words && words[mid] != wk) {
            cmp = words[mid] < wk ? 1 : -1;
        } else {
            hfile_index_entry e;
            cursor_entry_at(c, d, (uint32_t)mid, &e);
            cmp = cell_compare_key(key, e.key.p, e.key.n);
        }
        if (cmp >= 0) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

static uint32_t
cursor_pick(const icursor *c, uint32_t d, int mode, const kiln_cell *key)
{
    if (mode == POS_FIRST)
        return 0;
    if (mode == POS_LAST)
        return c->lv[d].count - 1;
    long i = cursor_search(c, d, key);
    return i < 0 ? 0 : (uint32_t)i;
}

void
hfile_cursor_release(icursor *c)
{
    for (uint32_t d = 1; d < MAX_INDEX_LEVELS; d++) {
        block_cache_release(c->r->cache, c->lv[d].h);
        c->lv[d].h = NULL;
        c->lv[d].b = NULL;
    }
}

/* In check mode: the child's first key is >= the parent entry's key, its
 * entries ascend, and its last key sorts before the parent's next entry. */
static kiln_status
cursor_check_child(icursor *c, uint32_t d, uint64_t off, kiln_err *err)
{
    hfile_index_entry pe, ce, prev = {0, 0, {NULL, 0}};
    cursor_entry_at(c, d - 1, c->lv[d - 1].pos, &pe);
    for (uint32_t i = 0; i < c->lv[d].count; i++) {
        cursor_entry_at(c, d, i, &ce);
        if (i == 0 && cell_key_compare(pe.key.p, pe.key.n, ce.key.p, ce.key.n) > 0)
            return rerr(c->r, err, KILN_CORRUPTION,
                        "index block at offset %llu starts below its parent's key",
                        (unsigned long long)off);
        if (i > 0 && cell_key_compare(prev.key.p, prev.key.n, ce.key.p, ce.key.n) >= 0)
            return rerr(c->r, err, KILN_CORRUPTION,
                        "index block at offset %llu: entry %u is out of order",
                        (unsigned long long)off, i);
        prev = ce;
    }
    if (c->lv[d - 1].pos + 1 < c->lv[d - 1].count) {
        cursor_entry_at(c, d - 1, c->lv[d - 1].pos + 1, &pe);
        if (cell_key_compare(prev.key.p, prev.key.n, pe.key.p, pe.key.n) >= 0)
            return rerr(c->r, err, KILN_CORRUPTION,
                        "index block at offset %llu ends at or above its parent's next key",
                        (unsigned long long)off);
    }
    return KILN_OK;
}

/* Position levels d+1.. below level d's current entry, each by mode. */
static kiln_status
cursor_descend(icursor *c, uint32_t d, int mode, const kiln_cell *key, kiln_err *err)
{
    for (; d + 1 < c->levels; d++) {
        hfile_index_entry e;
        cursor_loc_at(c, d, c->lv[d].pos, &e.offset, &e.on_disk_size);
        cursor_level *child = &c->lv[d + 1];
        if (child->b == NULL || child->off != e.offset) {
            unsigned type = d + 2 == c->levels ? HFILE_BLOCK_LEAF_INDEX
                                                : HFILE_BLOCK_INTERMEDIATE_INDEX;
            block_cache_handle *h;
            const hfile_block *b;
            kiln_status s =
                d == 0 ? hfile_reader_block_get_pinned(c->r, &c->r->root_children, c->lv[0].pos,
                                                       e.offset, e.on_disk_size, TYPE_BIT(type),
                                                       &h, &b, err)
                       : hfile_reader_block_get(c->r, e.offset, e.on_disk_size, TYPE_BIT(type),
                                                &h, &b, err);
            if (s != KILN_OK)
                return s;
            block_cache_release(c->r->cache, child->h);
            child->h = h;
            child->b = b;
            child->off = e.offset;
            child->count = b->count;
            if (c->checking && (s = cursor_check_child(c, d + 1, e.offset, err)) != KILN_OK)
                return s;
        }
        child->pos = cursor_pick(c, d + 1, mode, key);
    }
    return KILN_OK;
}

/* Position the whole cursor. KILN_NOT_FOUND if the index is empty. */
kiln_status
hfile_cursor_seek(icursor *c, int mode, const kiln_cell *key, kiln_err *err)
{
    if (c->r->root_count == 0)
        return KILN_NOT_FOUND;
    c->lv[0].count = c->r->root_count;
    c->lv[0].pos = cursor_pick(c, 0, mode, key);
    return cursor_descend(c, 0, mode, key, err);
}

/* Step to the next (dir 1) or previous (-1) data block entry. KILN_NOT_FOUND
 * past either end (the cursor is then unchanged). */
kiln_status
hfile_cursor_step(icursor *c, int dir, kiln_err *err)
{
    long d = (long)c->levels - 1;
    while (d >= 0) {
        cursor_level *l = &c->lv[d];
        if (dir > 0 ? l->pos + 1 < l->count : l->pos > 0)
            break;
        d--;
    }
    if (d < 0)
        return KILN_NOT_FOUND;
    c->lv[d].pos = dir > 0 ? c->lv[d].pos + 1 : c->lv[d].pos - 1;
    return cursor_descend(c, (uint32_t)d, dir > 0 ? POS_FIRST : POS_LAST, NULL, err);
}

void
hfile_cursor_data_entry(const icursor *c, hfile_index_entry *e)
{
    cursor_entry_at(c, c->levels - 1, c->lv[c->levels - 1].pos, e);
}

void
hfile_cursor_data_loc(const icursor *c, uint64_t *offset, uint32_t *on_disk_size)
{
    cursor_loc_at(c, c->levels - 1, c->lv[c->levels - 1].pos, offset, on_disk_size);
}

int
hfile_cursor_next_data_loc(const icursor *c, uint64_t *offset)
{
    const cursor_level *l = &c->lv[c->levels - 1];
    if (l->pos + 1 >= l->count)
        return 0;
    uint32_t size;
    cursor_loc_at(c, c->levels - 1, l->pos + 1, offset, &size);
    return 1;
}
