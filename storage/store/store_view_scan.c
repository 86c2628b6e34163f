/* store_view_scan.c -- Scan over a view: rows in [start, stop) (or descending for
 * reversed scans), with a prefix and a row limit, crossing regions.
 *
 * A scan assembles rows (store_view_row.c) from one cell iterator over the view's
 * rows in its range (store_view_iter_open: regions in order, each a merge of
 * its files; a salted table's buckets merged in user key order), so plain and
 * salted tables take the same path. Forward scans read row after row.
 * Reversed scans find the previous row with a seek-for-prev below the row
 * last read, then read that row forward from its first cell, so each row's
 * cells still come in HBase order.
 */
#include <stdlib.h>
#include <string.h>

#include "storage/store/store_view_int.h"

struct store_scan {
    store_view *v;
    store_sel sel;
    int reversed;
    uint64_t limit, emitted;
    int started;
    int done;
    uint64_t max_skipped;     /* rows without a visible cell per next call; 0 = any */
    int yielded;              /* the last next call stopped at max_skipped */
    uint64_t skipped;         /* rows passed over in this call */
    kbuf resume;              /* then: the last row it passed over */
    kbuf row;                 /* reversed: the stored row read last; the next is below it */
    kiln_iter *src;           /* the view's cells in the scan's rows */
    store_row_buf *buf;
};

kiln_status
store_scan_open(store_view *v, const store_scan_opts *o, store_scan **out, kiln_err *err)
{
    *out = NULL;
    store_scan *s = kiln_calloc(1, sizeof *s);
    kiln_status st = store_row_sel_init(&v->schema, &o->read, &s->sel, err);
    if (st != KILN_OK) {
        free(s);
        return st;
    }
    if ((st = store_view_iter_open(v, o, &s->src, err)) != KILN_OK) {
        store_row_sel_free(&s->sel);
        free(s);
        return st;
    }
    store_view_ref(v);
    s->v = v;
    s->reversed = o->reversed;
    s->limit = o->limit;
    s->max_skipped = o->max_skipped;
    buf_init(&s->resume);
    buf_init(&s->row);
    s->buf = store_row_buf_new();
    *out = s;
    return KILN_OK;
}

void
store_scan_close(store_scan *s)
{
    if (s == NULL)
        return;
    kiln_iter_close(s->src);
    store_row_buf_free(s->buf);
    store_row_sel_free(&s->sel);
    buf_free(&s->resume);
    buf_free(&s->row);
    store_view_unref(s->v);
    free(s);
}

/* A row without a visible cell was passed over: 1 when the call must stop
 * here (max_skipped reached), noting the row to resume from. */
static int
store_scan_skip(store_scan *s, kslice row)
{
    if (s->max_skipped == 0 || ++s->skipped < s->max_skipped)
        return 0;
    s->yielded = 1;
    buf_reset(&s->resume);
    buf_append(&s->resume, row.p, row.n);
    return 1;
}

int
store_scan_yielded(const store_scan *s, kslice *resume)
{
    if (!s->yielded)
        return 0;
    *resume = buf_slice(&s->resume);
    return 1;
}

static kiln_status
store_scan_next_forward(store_scan *s, store_row *out, int *has_row, kiln_err *err)
{
    kiln_iter *it = s->src;
    if (!s->started) {
        s->started = 1;
        kiln_iter_seek_first(it);
    }
    while (kiln_iter_valid(it)) {
        kiln_status st = store_row_assemble(it, &s->v->schema, &s->sel, s->buf, out, err);
        if (st != KILN_OK)
            return st;
        if (out->count > 0) {
            *has_row = 1;
            return KILN_OK;
        }
        if (store_scan_skip(s, out->row))
            return KILN_OK;
    }
    s->done = 1;
    return kiln_iter_status(it, err);
}

static kiln_status
store_scan_next_reversed(store_scan *s, store_row *out, int *has_row, kiln_err *err)
{
    kiln_iter *it = s->src;
    for (;;) {
        kiln_cell key;
        if (!s->started) {
            s->started = 1;
            kiln_iter_seek_last(it);
        } else {
            cell_first_on_row(&key, s->row.data, (uint32_t)s->row.len);
            kiln_iter_seek_for_prev(it, &key);
        }
        if (!kiln_iter_valid(it))
            break;
        const kiln_cell *c = kiln_iter_key(it);
        buf_reset(&s->row);
        buf_append(&s->row, c->row, c->row_len);
        cell_first_on_row(&key, s->row.data, (uint32_t)s->row.len);
        if (kiln_iter_seek(it, &key) != KILN_OK || !kiln_iter_valid(it))
            break;
        kiln_status st = store_row_assemble(it, &s->v->schema, &s->sel, s->buf, out, err);
        if (st != KILN_OK)
            return st;
        if (out->count > 0) {
            *has_row = 1;
            return KILN_OK;
        }
        if (store_scan_skip(s, out->row))
            return KILN_OK;
    }
    s->done = 1;
    return kiln_iter_status(it, err);
}

kiln_status
store_scan_next(store_scan *s, store_row *out, int *has_row, kiln_err *err)
{
    *has_row = 0;
    out->count = 0;
    out->cells = NULL;
    s->yielded = 0;
    s->skipped = 0;
    if (s->done || (s->limit > 0 && s->emitted >= s->limit) || s->v->nregions == 0)
        return KILN_OK;
    kiln_status st = s->reversed ? store_scan_next_reversed(s, out, has_row, err)
                                 : store_scan_next_forward(s, out, has_row, err);
    if (st != KILN_OK) {
        s->done = 1;
        *has_row = 0;
        return st;
    }
    if (*has_row)
        s->emitted++;
    return KILN_OK;
}
