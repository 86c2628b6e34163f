/* store_view_cells.c -- the cells a read returns as one kiln_iter: the last
 * stage of the read path (iter.h), as LevelDB's DB iterator sits on its
 * merging iterator.
 *
 * The iterator keeps one assembled row (store_view_row.c) and a position in
 * it. Its source is the view's range iterator (store_view_iter.c); after a
 * row is assembled the source stands on the first cell of the next stored
 * row, since assembly always reads a row forward from its first cell.
 *
 *   next past a row's last cell    assemble the following rows until one
 *                                  has a visible cell
 *   prev before a row's first cell seek-for-prev below the row's first key,
 *                                  then seek that row's first cell and
 *                                  assemble it (as a reversed scan does);
 *                                  repeat while rows come out empty
 *   seek(key)                      assemble key's row (or the next one) and
 *                                  take its first cell >= key, else the
 *                                  next non-empty row's first
 *   seek_for_prev(key)             assemble the row of the last stored cell
 *                                  <= key and take its last cell <= key,
 *                                  else the previous non-empty row's last
 *
 * A salted table's rows come out without their bucket byte, in user key
 * order, and seek keys are user keys: the source (buckets merged with a row
 * skip) reads a key's row past its first byte, so a placeholder byte is put
 * first.
 */
#include <stdlib.h>
#include <string.h>

#include "storage/store/store_view_int.h"

typedef struct store_cells_iter {
    kiln_iter base;           /* first: a kiln_iter */
    store_view *v;            /* referenced */
    store_sel sel;
    kiln_iter *src;           /* the view's stored cells in the range */
    store_row_buf *buf;       /* the row being read */
    store_row row;
    size_t pos;               /* row.cells[pos] is the current cell */
    uint32_t skip;            /* 1 in a salted table */
    kbuf stored;              /* the stored row (bucket byte included) of row */
    kbuf key_row;             /* a seek key's row as the source reads it */
} store_cells_iter;

static void
store_cells_remember(store_cells_iter *ci, const kiln_cell *c)
{
    buf_reset(&ci->stored);
    buf_append(&ci->stored, c->row, c->row_len);
}

/* The source failed or ended: fail with its error, or become invalid. */
static void
store_cells_end(store_cells_iter *ci)
{
    ci->base.cur = NULL;
    if (ci->src->err.code != KILN_OK)
        kiln_iter_fail(&ci->base, &ci->src->err);
}

/* Assemble the row the source stands on (its first cell). 0 on an error
 * (recorded). */
static int
store_cells_assemble(store_cells_iter *ci)
{
    store_cells_remember(ci, kiln_iter_key(ci->src));
    kiln_err e;
    status_clear(&e);
    if (store_row_assemble(ci->src, &ci->v->schema, &ci->sel, ci->buf, &ci->row, &e) !=
        KILN_OK) {
        ci->row.count = 0;
        kiln_iter_fail(&ci->base, &e);
        return 0;
    }
    return 1;
}

/* From the source's position (a row's first cell, or invalid): the first
 * row with a visible cell, positioned on its cell `pos` (first when 0). */
static void
store_cells_forward(store_cells_iter *ci)
{
    while (kiln_iter_valid(ci->src)) {
        if (!store_cells_assemble(ci))
            return;
        if (ci->row.count > 0) {
            ci->pos = 0;
            ci->base.cur = &ci->row.cells[0];
            return;
        }
    }
    store_cells_end(ci);
}

/* From the source standing on any cell of a row (or invalid): that row, or
 * the nearest row before it with a visible cell, positioned on its last. */
static void
store_cells_backward(store_cells_iter *ci)
{
    kiln_cell key;
    while (kiln_iter_valid(ci->src)) {
        store_cells_remember(ci, kiln_iter_key(ci->src));
        cell_first_on_row(&key, ci->stored.data, (uint32_t)ci->stored.len);
        if (kiln_iter_seek(ci->src, &key) != KILN_OK || !kiln_iter_valid(ci->src))
            break;   /* the row was there a moment ago: an error */
        if (!store_cells_assemble(ci))
            return;
        if (ci->row.count > 0) {
            ci->pos = ci->row.count - 1;
            ci->base.cur = &ci->row.cells[ci->pos];
            return;
        }
        cell_first_on_row(&key, ci->stored.data, (uint32_t)ci->stored.len);
        kiln_iter_seek_for_prev(ci->src, &key);
    }
    store_cells_end(ci);
}

/* key as the source reads it: in a salted table a placeholder byte before
 * the user row (each bucket puts its own there). */
static const kiln_cell *
store_cells_src_key(store_cells_iter *ci, const kiln_cell *key, kiln_cell *tmp)
{
    if (ci->skip == 0)
        return key;
    buf_reset(&ci->key_row);
    buf_append_u8(&ci->key_row, 0);
    buf_append(&ci->key_row, key->row, key->row_len);
    *tmp = *key;
    tmp->row = ci->key_row.data;
    tmp->row_len = (uint32_t)ci->key_row.len;
    return tmp;
}

static void
store_cells_seek_first(kiln_iter *base)
{
    store_cells_iter *ci = (store_cells_iter *)base;
    kiln_iter_restart(base);
    kiln_iter_seek_first(ci->src);
    store_cells_forward(ci);
}

static void
store_cells_seek_last(kiln_iter *base)
{
    store_cells_iter *ci = (store_cells_iter *)base;
    kiln_iter_restart(base);
    kiln_iter_seek_last(ci->src);
    store_cells_backward(ci);
}

static void
store_cells_seek(kiln_iter *base, const kiln_cell *key)
{
    store_cells_iter *ci = (store_cells_iter *)base;
    kiln_iter_restart(base);
    kiln_cell tmp, first;
    const kiln_cell *k = store_cells_src_key(ci, key, &tmp);
    cell_first_on_row(&first, k->row, k->row_len);
    kiln_iter_seek(ci->src, &first);
    /* rows before key's are not read; in key's row, cells before key are
     * passed over; every cell of a later row is after key */
    while (kiln_iter_valid(ci->src)) {
        if (!store_cells_assemble(ci))
            return;
        for (size_t i = 0; i < ci->row.count; i++) {
            if (cell_compare(&ci->row.cells[i], key) >= 0) {
                ci->pos = i;
                ci->base.cur = &ci->row.cells[i];
                return;
            }
        }
    }
    store_cells_end(ci);
}

static void
store_cells_seek_for_prev(kiln_iter *base, const kiln_cell *key)
{
    store_cells_iter *ci = (store_cells_iter *)base;
    kiln_iter_restart(base);
    kiln_cell tmp;
    kiln_iter_seek_for_prev(ci->src, store_cells_src_key(ci, key, &tmp));
    if (!kiln_iter_valid(ci->src)) {
        store_cells_end(ci);
        return;
    }
    /* the row of the last stored cell <= key: its visible cells <= key */
    kiln_cell first;
    store_cells_remember(ci, kiln_iter_key(ci->src));
    cell_first_on_row(&first, ci->stored.data, (uint32_t)ci->stored.len);
    if (kiln_iter_seek(ci->src, &first) != KILN_OK || !kiln_iter_valid(ci->src)) {
        store_cells_end(ci);
        return;
    }
    if (!store_cells_assemble(ci))
        return;
    for (size_t i = ci->row.count; i-- > 0;) {
        if (cell_compare(&ci->row.cells[i], key) <= 0) {
            ci->pos = i;
            ci->base.cur = &ci->row.cells[i];
            return;
        }
    }
    /* none: the rows before it */
    cell_first_on_row(&first, ci->stored.data, (uint32_t)ci->stored.len);
    kiln_iter_seek_for_prev(ci->src, &first);
    store_cells_backward(ci);
}

static void
store_cells_next(kiln_iter *base)
{
    store_cells_iter *ci = (store_cells_iter *)base;
    if (ci->pos + 1 < ci->row.count) {
        ci->base.cur = &ci->row.cells[++ci->pos];
        return;
    }
    /* the source stands on the next row's first cell (or is invalid) */
    ci->base.cur = NULL;
    store_cells_forward(ci);
}

static void
store_cells_prev(kiln_iter *base)
{
    store_cells_iter *ci = (store_cells_iter *)base;
    if (ci->pos > 0) {
        ci->base.cur = &ci->row.cells[--ci->pos];
        return;
    }
    ci->base.cur = NULL;
    kiln_cell first;
    cell_first_on_row(&first, ci->stored.data, (uint32_t)ci->stored.len);
    kiln_iter_seek_for_prev(ci->src, &first);
    store_cells_backward(ci);
}

static void
store_cells_close(kiln_iter *base)
{
    store_cells_iter *ci = (store_cells_iter *)base;
    kiln_iter_close(ci->src);
    store_row_buf_free(ci->buf);
    store_row_sel_free(&ci->sel);
    buf_free(&ci->stored);
    buf_free(&ci->key_row);
    store_view_unref(ci->v);
    free(ci);
}

static const kiln_iter_ops store_cells_ops = {
    .seek_first = store_cells_seek_first,
    .seek_last = store_cells_seek_last,
    .seek = store_cells_seek,
    .seek_for_prev = store_cells_seek_for_prev,
    .next = store_cells_next,
    .prev = store_cells_prev,
    .close = store_cells_close,
};

kiln_status
store_view_cells_open(store_view *v, const store_scan_opts *o, kiln_iter **out, kiln_err *err)
{
    *out = NULL;
    store_scan_opts dflt;
    if (o == NULL) {
        store_scan_opts_init(&dflt);
        o = &dflt;
    }
    store_cells_iter *ci = kiln_calloc(1, sizeof *ci);
    kiln_status st = store_row_sel_init(&v->schema, &o->read, &ci->sel, err);
    if (st != KILN_OK) {
        free(ci);
        return st;
    }
    if ((st = store_view_iter_open(v, o, &ci->src, err)) != KILN_OK) {
        store_row_sel_free(&ci->sel);
        free(ci);
        return st;
    }
    kiln_iter_init(&ci->base, &store_cells_ops);
    store_view_ref(v);
    ci->v = v;
    ci->buf = store_row_buf_new();
    ci->skip = v->schema.salt_buckets > 0 ? 1 : 0;
    buf_init(&ci->stored);
    buf_init(&ci->key_row);
    *out = &ci->base;
    return KILN_OK;
}
