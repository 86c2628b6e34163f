/* store_view_read.c -- Get (bloom filters pick the files; salted tables: the
 * bucket byte added; one file left is read directly, more are merged) and
 * count, over a view.
 */
#include "storage/store/store_view.h"

#include <string.h>

#include "storage/store/store_salt.h"
#include "storage/store/store_view_int.h"

kiln_status
store_view_get(store_view *v, const uint8_t *row, size_t n, const store_row_opts *o,
               store_row_buf *buf, store_row *out, kiln_err *err)
{
    out->row = kslice_make(row, n);
    out->cells = NULL;
    out->count = 0;
    uint32_t salt = v->schema.salt_buckets;
    size_t max = salt > 0 ? CELL_ROW_MAX - 1 : CELL_ROW_MAX;
    if (n == 0 || n > max)
        return status_set(err, KILN_INVALID, "table %s: row key must be 1..%zu bytes",
                          v->schema.name, max);
    store_row_opts dflt;
    if (o == NULL) {
        store_row_opts_init(&dflt);
        o = &dflt;
    }
    store_sel sel;
    kiln_status st = store_row_sel_init(&v->schema, o, &sel, err);
    if (st != KILN_OK)
        return st;
    sel.read_point = store_view_read_point(v, o);
    const uint8_t *user = row;
    size_t user_n = n;
    if (salt > 0) {
        /* the stored key; assembly strips the bucket byte again */
        kbuf *k = store_row_buf_key(buf);
        buf_reset(k);
        store_salt_key(k, salt, row, n);
        row = k->data;
        n = k->len;
    }
    size_t r = store_view_region_of(v, row, n);
    iter_merge *m = store_row_buf_merge(buf, v);
    st = store_view_fill(v, r, &sel, row, n, buf, m, err);
    if (st == KILN_OK && iter_merge_children(m) > 0) {
        /* One file (what the blooms leave most Gets) is read directly. */
        kiln_iter *it = iter_merge_single(m);
        if (it == NULL)
            it = iter_merge_iter(m);
        kiln_cell key;
        cell_first_on_row(&key, row, (uint32_t)n);
        if (kiln_iter_seek(it, &key) != KILN_OK) {
            st = kiln_iter_status(it, err);
        } else if (kiln_iter_valid(it)) {
            const kiln_cell *c = kiln_iter_key(it);
            if (c->row_len == n && memcmp(c->row, row, n) == 0)
                st = store_row_assemble(it, &v->schema, &sel, buf, out, err);
        }
    }
    iter_merge_clear(m);
    store_row_sel_free(&sel);
    if (out->count == 0)
        out->row = kslice_make(user, user_n);
    return st;
}

kiln_status
store_view_count(store_view *v, const store_scan_opts *o, uint64_t *rows, kiln_err *err)
{
    *rows = 0;
    store_scan_opts so;
    if (o != NULL)
        so = *o;
    else
        store_scan_opts_init(&so);
    so.limit = 0;
    store_scan *s;
    kiln_status st = store_scan_open(v, &so, &s, err);
    if (st != KILN_OK)
        return st;
    for (;;) {
        store_row row;
        int has;
        if ((st = store_scan_next(s, &row, &has, err)) != KILN_OK || !has)
            break;
        (*rows)++;
    }
    store_scan_close(s);
    return st;
}
