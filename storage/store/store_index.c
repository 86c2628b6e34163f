/* store_index.c -- index scans: a range scan of the index table, then a Get
 * of each row of the base table in the same view version, checked against
 * the entry. Definitions and the index row key are store_index_def.c.
 */
#include "storage/store/store_index.h"

#include <stdlib.h>
#include <string.h>

#include "storage/hfile/cell.h"

/* ------------------------------------------------------------------ scans */

struct store_index_scan {
    store_view *v;                /* referenced */
    store_view *iv;               /* the index table's view (part of v) */
    const store_index_def *def;   /* borrowed from v */
    store_scan *s;
    store_row_buf *buf;
    store_row_opts get;           /* what each Get reads */
    store_column *cols;           /* the caller's columns, then the indexed ones */
    size_t user_cols;             /* 0: every column */
    kiln_cell *cells;             /* the returned row's cells (filtered) */
    size_t cap;
    kbuf scratch;
    kslice *vals;
    kbuf pos;
    uint64_t limit, emitted, stale;
};

void
store_index_opts_init(store_index_opts *o)
{
    memset(o, 0, sizeof *o);
    store_row_opts_init(&o->read);
}

void
store_index_scan_close(store_index_scan *s)
{
    if (s == NULL)
        return;
    store_scan_close(s->s);
    store_row_buf_free(s->buf);
    free(s->cols);
    free(s->cells);
    free(s->vals);
    buf_free(&s->scratch);
    buf_free(&s->pos);
    store_view_unref(s->v);
    free(s);
}

/* The smallest key greater than every key starting with p: p with its last
 * non-0xFF byte incremented, the rest dropped; 0 when p is all 0xFF. */
static int
store_index_prefix_end(kbuf *b)
{
    while (b->len > 0 && b->data[b->len - 1] == 0xFF)
        b->len--;
    if (b->len == 0)
        return 0;
    b->data[b->len - 1]++;
    return 1;
}

static kiln_status
store_index_no_such(store_view *v, const char *name, kiln_err *err)
{
    kbuf names = KBUF_INIT;
    for (size_t i = 0; i < store_view_index_count(v); i++) {
        const store_index_def *d = store_view_index_def(v, i);
        if (i > 0)
            buf_append(&names, ", ", 2);
        buf_append(&names, d->name, strlen(d->name));
    }
    if (names.len == 0)
        buf_append(&names, "none", 4);
    buf_append_u8(&names, 0);
    status_set(err, KILN_NOT_FOUND, "table %s version %llu: no index '%s' (indexes: %s)",
               store_view_schema(v)->name, (unsigned long long)store_view_version(v), name,
               (const char *)names.data);
    buf_free(&names);
    return KILN_NOT_FOUND;
}

kiln_status
store_index_scan_open(store_view *v, const char *name, const store_index_opts *o,
                      store_index_scan **out, kiln_err *err)
{
    *out = NULL;
    int at = store_view_find_index(v, name);
    if (at < 0)
        return store_index_no_such(v, name, err);
    const store_index_def *def = store_view_index_def(v, (size_t)at);
    size_t k = def->ncols;
    if (o->nvalues > k)
        return status_set(err, KILN_INVALID, "index %s has %zu column(s); %zu values given",
                          name, k, o->nvalues);
    if ((o->has_value_start || o->has_value_stop) && o->nvalues >= k)
        return status_set(err, KILN_INVALID,
                          "index %s: a value range needs a column after the %zu exact value(s)",
                          name, o->nvalues);
    const kiln_schema *sch = store_view_schema(v);
    for (size_t i = 0; i < o->read.column_count; i++) {
        const char *f = o->read.columns[i].family;
        if (schema_find_family(sch, (const uint8_t *)f, strlen(f)) == NULL)
            return status_set(err, KILN_INVALID, "table %s: no column family '%s'", sch->name, f);
    }

    store_index_scan *s = kiln_calloc(1, sizeof *s);
    store_view_ref(v);
    s->v = v;
    s->iv = store_view_index_view(v, (size_t)at);
    s->def = def;
    s->limit = o->limit;
    buf_init(&s->scratch);
    buf_init(&s->pos);
    s->vals = kiln_calloc(k, sizeof *s->vals);
    s->buf = store_row_buf_new();
    s->get = o->read;
    if (o->read.column_count > 0) {
        /* Read the caller's columns and the indexed ones; return the former. */
        s->user_cols = o->read.column_count;
        s->cols = kiln_calloc(s->user_cols + k, sizeof *s->cols);
        memcpy(s->cols, o->read.columns, s->user_cols * sizeof *s->cols);
        for (size_t i = 0; i < k; i++) {
            store_column *c = &s->cols[s->user_cols + i];
            c->family = def->cols[i].family;
            c->qualifier = def->cols[i].qualifier.data ? def->cols[i].qualifier.data
                                                       : (const uint8_t *)"";
            c->qualifier_len = def->cols[i].qualifier.len;
        }
        s->get.columns = s->cols;
        s->get.column_count = s->user_cols + k;
    }

    /* The index key range: [prefix + enc(start), prefix + enc(stop)) under
     * prefix = enc(v1)..enc(vn), and after the resume point. */
    kbuf prefix = KBUF_INIT, lo = KBUF_INIT, hi = KBUF_INIT;
    for (size_t i = 0; i < o->nvalues; i++)
        store_index_value_append(&prefix, o->values[i].p, o->values[i].n);
    int has_lo = 0, has_hi = 0;
    if (o->has_value_start) {
        buf_append(&lo, prefix.data, prefix.len);
        store_index_value_append(&lo, o->value_start.p, o->value_start.n);
        has_lo = 1;
    }
    if (o->has_value_stop) {
        buf_append(&hi, prefix.data, prefix.len);
        store_index_value_append(&hi, o->value_stop.p, o->value_stop.n);
        has_hi = 1;
    } else if (prefix.len > 0) {
        buf_append(&hi, prefix.data, prefix.len);
        has_hi = store_index_prefix_end(&hi);
    }
    if (!has_lo && prefix.len > 0) {
        buf_append(&lo, prefix.data, prefix.len);
        has_lo = 1;
    }
    if (o->after.n > 0) {
        /* the smallest key after `after` */
        kbuf next = KBUF_INIT;
        buf_append(&next, o->after.p, o->after.n);
        buf_append_u8(&next, 0x00);
        if (!has_lo || kslice_cmp(buf_slice(&next), buf_slice(&lo)) > 0) {
            buf_reset(&lo);
            buf_append(&lo, next.data, next.len);
            has_lo = 1;
        }
        buf_free(&next);
    }
    kiln_status st = KILN_OK;
    if (!(has_hi && has_lo && kslice_cmp(buf_slice(&lo), buf_slice(&hi)) >= 0)) {
        store_scan_opts so;
        store_scan_opts_init(&so);
        if (has_lo) {
            so.start = lo.data;
            so.start_len = lo.len;
        }
        if (has_hi) {
            so.stop = hi.data;
            so.stop_len = hi.len;
        }
        st = store_scan_open(s->iv, &so, &s->s, err);
    }   /* else an empty range: s->s stays NULL and the scan finds nothing */
    buf_free(&prefix);
    buf_free(&lo);
    buf_free(&hi);
    if (st != KILN_OK) {
        store_index_scan_close(s);
        return st;
    }
    *out = s;
    return KILN_OK;
}

/* 1 if the row's newest value of each indexed column equals the entry's. */
static int
store_index_row_matches(const store_index_scan *s, const store_row *r)
{
    for (size_t i = 0; i < s->def->ncols; i++) {
        const store_index_column *col = &s->def->cols[i];
        size_t fl = strlen(col->family);
        const kiln_cell *hit = NULL;
        for (size_t j = 0; j < r->count && hit == NULL; j++) {
            const kiln_cell *c = &r->cells[j];
            if (c->family_len == fl && memcmp(c->family, col->family, fl) == 0 &&
                kslice_eq(kslice_make(c->qualifier, c->qualifier_len),
                          buf_slice(&col->qualifier)))
                hit = c;   /* cells of a column come newest first */
        }
        if (hit == NULL || !kslice_eq(kslice_make(hit->value, hit->value_len), s->vals[i]))
            return 0;
    }
    return 1;
}

/* 1 if the caller asked for cell c. */
static int
store_index_cell_wanted(const store_index_scan *s, const kiln_cell *c)
{
    for (size_t i = 0; i < s->user_cols; i++) {
        const store_column *col = &s->cols[i];
        size_t fl = strlen(col->family);
        if (c->family_len != fl || memcmp(c->family, col->family, fl) != 0)
            continue;
        if (col->qualifier == NULL ||
            kslice_eq(kslice_make(c->qualifier, c->qualifier_len),
                      kslice_make(col->qualifier, col->qualifier_len)))
            return 1;
    }
    return 0;
}

kiln_status
store_index_scan_next(store_index_scan *s, store_row *out, int *has_row, kiln_err *err)
{
    *has_row = 0;
    out->count = 0;
    out->cells = NULL;
    if (s->s == NULL || (s->limit > 0 && s->emitted >= s->limit))
        return KILN_OK;
    for (;;) {
        store_row ir;
        int has;
        kiln_status st = store_scan_next(s->s, &ir, &has, err);
        if (st != KILN_OK || !has)
            return st;
        kslice row;
        if (store_index_key_decode(ir.row, s->def->ncols, &s->scratch, s->vals, &row) != 0)
            return status_set(err, KILN_CORRUPTION,
                              "table %s version %llu: index %s holds a malformed entry",
                              store_view_schema(s->v)->name,
                              (unsigned long long)store_view_version(s->v), s->def->name);
        uint32_t salt = store_view_schema(s->v)->salt_buckets;
        if (row.n > (size_t)CELL_ROW_MAX - (salt ? 1 : 0)) {
            s->stale++;
            continue;
        }
        st = store_view_get(s->v, row.p, row.n, &s->get, s->buf, out, err);
        if (st != KILN_OK)
            return st;
        if (out->count == 0 || !store_index_row_matches(s, out)) {
            s->stale++;
            continue;
        }
        buf_reset(&s->pos);
        buf_append(&s->pos, ir.row.p, ir.row.n);
        if (s->user_cols > 0) {
            if (s->cap < out->count) {
                s->cap = out->count;
                s->cells = kiln_realloc(s->cells, s->cap * sizeof *s->cells);
            }
            size_t n = 0;
            for (size_t i = 0; i < out->count; i++) {
                if (store_index_cell_wanted(s, &out->cells[i]))
                    s->cells[n++] = out->cells[i];
            }
            if (n == 0)
                continue;   /* the row has none of the columns asked for */
            out->cells = s->cells;
            out->count = n;
        }
        s->emitted++;
        *has_row = 1;
        return KILN_OK;
    }
}

kslice
store_index_scan_position(const store_index_scan *s)
{
    return buf_slice(&s->pos);
}

uint64_t
store_index_scan_stale(const store_index_scan *s)
{
    return s->stale;
}
