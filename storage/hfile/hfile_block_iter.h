/* hfile_block_iter.h -- private to storage/hfile: the iterator over one
 * decoded data block (hfile_encoding.h), the first stage of a read (LevelDB's
 * Block::Iter), and the in-block search the file iterator shares with it.
 *
 * A block iterator reads cells in place (hfile_block_cell); seeks are a
 * binary search over the block's row words. It cannot fail once made: its
 * block was checked and decoded when it was read.
 *
 * Ownership: the iterator holds the block's cache pin (released on close),
 * or, made without one, borrows a block the caller keeps alive.
 * Thread-safety: single-threaded; many iterators may share one block.
 */
#ifndef KILN_HFILE_BLOCK_ITER_H
#define KILN_HFILE_BLOCK_ITER_H

#include <stdint.h>

#include "storage/base/block_cache.h"
#include "storage/hfile/hfile_block.h"
#include "storage/hfile/iter.h"

/* Index of the first cell of b that is > key (upper) or >= key (lower);
 * b->count if none. Inline: it is the inner loop of every point Get. */
static inline uint32_t
hfile_block_search(const hfile_block *b, const kiln_cell *key, int upper)
{
    uint64_t wk;
    int where = hfile_row_word_locate(b->prefix, b->row_prefix, key, &wk);
    if (where < 0)
        return 0;       /* the key's row sorts before every row here */
    if (where > 0)
        return b->count;
    /* The row words settle most comparisons without touching the cells. A
     * small block's words (up to 8 lines) are asked for all at once: their
     * misses overlap instead of following the search one after another. */
    if (b->count <= 64)
        for (uint32_t i = 0; i < b->count; i += 8)
            __builtin_prefetch(&b->row_words[i]);
    uint32_t lo = 0, hi = b->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        /* both possible next probes: their cache misses overlap this one's */
        __builtin_prefetch(&b->row_words[lo + (mid - lo) / 2]);
        __builtin_prefetch(&b->row_words[mid + 1 + (hi - mid - 1) / 2]);
        uint64_t w = b->row_words[mid];
        int cmp;
        if (w != wk) {
            cmp = w < wk ? -1 : 1;
        } else {
            kiln_cell cell;
            hfile_block_cell(b, mid, &cell);
            cmp = cell_compare(&cell, key);
        }
        if (upper ? cmp <= 0 : cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* An iterator over the cells of data block b. h: b's pin in cache, released
 * by close (NULL: b is borrowed). */
kiln_iter *hfile_block_iter_new(const hfile_block *b, block_cache *cache, block_cache_handle *h);

#endif
