/* hfile_block_iter.c -- the kiln_iter over one decoded HFile data block, and
 * the row-word binary search that places a key in a block.
 */
#include "storage/hfile/hfile_block_iter.h"

#include <stdlib.h>

typedef struct hfile_block_iter {
    kiln_iter base;             /* first: the block iterator is a kiln_iter */
    const hfile_block *b;
    uint32_t pos;
    kiln_cell cell;             /* cell pos, decoded in place */
    block_cache *cache;
    block_cache_handle *h;      /* b's pin, or NULL */
} hfile_block_iter;

static void
hfile_block_iter_set(hfile_block_iter *bi, uint32_t pos)
{
    bi->pos = pos;
    hfile_block_cell(bi->b, pos, &bi->cell);
    bi->base.cur = &bi->cell;
}

static void
hfile_block_iter_seek_first(kiln_iter *base)
{
    hfile_block_iter *bi = (hfile_block_iter *)base;
    kiln_iter_restart(base);
    if (bi->b->count > 0)
        hfile_block_iter_set(bi, 0);
}

static void
hfile_block_iter_seek_last(kiln_iter *base)
{
    hfile_block_iter *bi = (hfile_block_iter *)base;
    kiln_iter_restart(base);
    if (bi->b->count > 0)
        hfile_block_iter_set(bi, bi->b->count - 1);
}

static void
hfile_block_iter_seek(kiln_iter *base, const kiln_cell *key)
{
    hfile_block_iter *bi = (hfile_block_iter *)base;
    kiln_iter_restart(base);
    uint32_t pos = hfile_block_search(bi->b, key, 0);
    if (pos < bi->b->count)
        hfile_block_iter_set(bi, pos);
}

static void
hfile_block_iter_seek_for_prev(kiln_iter *base, const kiln_cell *key)
{
    hfile_block_iter *bi = (hfile_block_iter *)base;
    kiln_iter_restart(base);
    uint32_t pos = hfile_block_search(bi->b, key, 1);
    if (pos > 0)
        hfile_block_iter_set(bi, pos - 1);
}

static void
hfile_block_iter_next(kiln_iter *base)
{
    hfile_block_iter *bi = (hfile_block_iter *)base;
    if (bi->pos + 1 < bi->b->count)
        hfile_block_iter_set(bi, bi->pos + 1);
    else
        base->cur = NULL;
}

static void
hfile_block_iter_prev(kiln_iter *base)
{
    hfile_block_iter *bi = (hfile_block_iter *)base;
    if (bi->pos > 0)
        hfile_block_iter_set(bi, bi->pos - 1);
    else
        base->cur = NULL;
}

static void
hfile_block_iter_close(kiln_iter *base)
{
    hfile_block_iter *bi = (hfile_block_iter *)base;
    block_cache_release(bi->cache, bi->h);
    free(bi);
}

static const kiln_iter_ops hfile_block_iter_ops = {
    .seek_first = hfile_block_iter_seek_first,
    .seek_last = hfile_block_iter_seek_last,
    .seek = hfile_block_iter_seek,
    .seek_for_prev = hfile_block_iter_seek_for_prev,
    .next = hfile_block_iter_next,
    .prev = hfile_block_iter_prev,
    .close = hfile_block_iter_close,
};

kiln_iter *
hfile_block_iter_new(const hfile_block *b, block_cache *cache, block_cache_handle *h)
{
    hfile_block_iter *bi = kiln_calloc(1, sizeof *bi);
    kiln_iter_init(&bi->base, &hfile_block_iter_ops);
    bi->b = b;
    bi->cache = cache;
    bi->h = h;
    return &bi->base;
}
