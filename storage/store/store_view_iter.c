/* store_view_iter.c -- a view's stored cells in a row range as one kiln_iter: the
 * two-level stage of the read path. A range iterator walks the regions in
 * order (the index level) and, inside the region it is in, a merge of the
 * region's files of the selected families (iter_merge.h), clipped to the
 * region's rows and the range, so the regions read as one sorted sequence,
 * forward and backward. A region's merge is made when the walk enters it.
 *
 * A salted table is N range iterators, one per bucket b over the stored rows
 * [b] + user range, merged with a row skip of one byte so the cells come in
 * user key order. A bucket's iterator reads a seek key's row past its first
 * byte and puts b there.
 *
 * Bounds are kept as cell keys, inclusive: a row bound becomes the first key
 * of the row (cell_first_on_row) or its last (empty family and qualifier,
 * type Minimum), whichever side excludes or includes the row as asked.
 */
#include <stdlib.h>
#include <string.h>

#include "storage/store/store_view_int.h"

/* 1 if file sf may hold cells of row for this request (blooms). */
static int
store_view_may_hold(const store_file *sf, const store_sel *sel, const uint8_t *row, size_t n,
                    kiln_err *e2)
{
    switch (hfile_reader_bloom_type(sf->rd)) {
    case BLOOM_ROW:
        return hfile_reader_may_contain_row(sf->rd, row, n, e2);
    case BLOOM_ROWCOL:
        if (sel->quals == NULL || sel->quals[sf->family] == NULL)
            return 1;
        for (size_t q = 0; q < sel->nquals[sf->family]; q++) {
            kslice k = sel->quals[sf->family][q];
            if (hfile_reader_may_contain_rowcol(sf->rd, row, n, k.p, k.n, e2))
                return 1;
        }
        /* A family-wide delete marker has an empty qualifier, so it is in
         * the ROWCOL bloom as (row, ""): HBase checks that key too. */
        if (hfile_reader_may_contain_rowcol(sf->rd, row, n, NULL, 0, e2))
            return 1;
        return hfile_reader_has_delete_family_bloom(sf->rd) &&
               hfile_reader_may_have_delete_family(sf->rd, row, n, e2);
    default:
        return 1;
    }
}

/* A file's cells without those a covering load retired (ts <= retired). */
typedef struct store_iter_retire {
    kiln_iter base;             /* first: a kiln_iter */
    kiln_iter *child;
    int owned;
    int64_t retired;
} store_iter_retire;

static void
store_retire_settle(store_iter_retire *r, int forward)
{
    kiln_iter *c = r->child;
    while (kiln_iter_valid(c) && kiln_iter_key(c)->ts <= r->retired) {
        if (forward)
            kiln_iter_next(c);
        else
            kiln_iter_prev(c);
    }
    r->base.cur = c->cur;
    r->base.err = c->err;
}

static void
store_retire_seek_first(kiln_iter *base)
{
    store_iter_retire *r = (store_iter_retire *)base;
    kiln_iter_seek_first(r->child);
    store_retire_settle(r, 1);
}

static void
store_retire_seek_last(kiln_iter *base)
{
    store_iter_retire *r = (store_iter_retire *)base;
    kiln_iter_seek_last(r->child);
    store_retire_settle(r, 0);
}

static void
store_retire_seek(kiln_iter *base, const kiln_cell *key)
{
    store_iter_retire *r = (store_iter_retire *)base;
    kiln_iter_seek(r->child, key);
    store_retire_settle(r, 1);
}

static void
store_retire_seek_for_prev(kiln_iter *base, const kiln_cell *key)
{
    store_iter_retire *r = (store_iter_retire *)base;
    kiln_iter_seek_for_prev(r->child, key);
    store_retire_settle(r, 0);
}

static void
store_retire_next(kiln_iter *base)
{
    store_iter_retire *r = (store_iter_retire *)base;
    kiln_iter_next(r->child);
    store_retire_settle(r, 1);
}

static void
store_retire_prev(kiln_iter *base)
{
    store_iter_retire *r = (store_iter_retire *)base;
    kiln_iter_prev(r->child);
    store_retire_settle(r, 0);
}

static void
store_retire_close(kiln_iter *base)
{
    store_iter_retire *r = (store_iter_retire *)base;
    if (r->owned)
        kiln_iter_close(r->child);
    free(r);
}

static const kiln_iter_ops store_retire_ops = {
    store_retire_seek_first, store_retire_seek_last, store_retire_seek,
    store_retire_seek_for_prev, store_retire_next,  store_retire_prev,
    store_retire_close,
};

kiln_iter *
store_view_retire_iter(kiln_iter *child, int owned, int64_t retired)
{
    store_iter_retire *r = kiln_calloc(1, sizeof *r);
    kiln_iter_init(&r->base, &store_retire_ops);
    r->child = child;
    r->owned = owned;
    r->retired = retired;
    return &r->base;
}

/* Add the selected files of region r to m (for a Get of `row` when row !=
 * NULL: only files whose blooms may hold it). With buf, its cached
 * iterators are lent to m; without, m gets new ones it owns. */
kiln_status
store_view_fill(const store_view *v, size_t r, const store_sel *sel, const uint8_t *row,
                size_t row_len, store_row_buf *buf, iter_merge *m, kiln_err *err)
{
    const store_region *reg = &v->regions[r];
    for (size_t f = 0; f < reg->nfiles; f++) {
        const store_file *sf = &reg->files[f];
        if (!store_row_sel_family(sel, sf->family))
            continue;
        if (row != NULL) {
            kiln_err e2;
            status_clear(&e2);
            int may = store_view_may_hold(sf, sel, row, row_len, &e2);
            if (e2.code != KILN_OK)
                return status_set(err, e2.code, "%s", e2.msg);
            if (!may)
                continue;
        }
        kiln_iter *it = buf != NULL ? store_row_buf_iter(buf, sf) : hfile_reader_iter(sf->rd);
        if (sf->retired_ts != INT64_MIN)
            iter_merge_add(m, store_view_retire_iter(it, buf == NULL, sf->retired_ts), sf->seq, 1);
        else
            iter_merge_add(m, it, sf->seq, buf == NULL);
    }
    for (size_t i = 0; i < v->nmem; i++) {
        const store_view_mem *vm = &v->mem[i];
        if (!store_row_sel_family(sel, vm->family) || memstore_count(vm->ms) == 0)
            continue;
        iter_merge_add(m, memstore_iter_upto(vm->ms, sel->read_point, v->mem_retired_ts[i]),
                       vm->rank, 1);
    }
    return KILN_OK;
}

kiln_status
store_view_fill_merge(const store_view *v, size_t r, const store_sel *sel, const uint8_t *row,
                      size_t row_len, iter_merge *m, kiln_err *err)
{
    return store_view_fill(v, r, sel, row, row_len, NULL, m, err);
}

#define STORE_ITER_NONE ((size_t)-1)

typedef struct store_iter_range {
    kiln_iter base;             /* first: a kiln_iter */
    store_view *v;              /* referenced */
    store_sel sel;              /* families only (family_on) */
    kbuf lo_row, hi_row;
    kiln_cell lower, upper;     /* range bounds (inclusive keys), when has_* */
    int has_lower, has_upper;
    int bucket;                 /* salted: this child's bucket byte; -1 otherwise */
    kbuf seek_row;              /* a seek key's row with the bucket byte put in */
    size_t r_first, r_last;     /* regions that may hold rows of the range */
    size_t r;                   /* region the merge is over, or STORE_ITER_NONE */
    iter_merge *m;
    kiln_cell rlo, rhi;         /* bounds within region r (range and region) */
    int has_rlo, has_rhi;
} store_iter_range;

static void
store_iter_last_on_row(kiln_cell *c, const uint8_t *row, uint32_t n)
{
    memset(c, 0, sizeof *c);
    c->row = row;
    c->row_len = n;
    c->ts = CELL_LATEST_TIMESTAMP;
    c->type = CELL_TYPE_MINIMUM;
}

/* Enter region r: a merge over its selected files and the bounds within it. */
static kiln_status
store_iter_enter(store_iter_range *ri, size_t r)
{
    if (ri->r == r)
        return KILN_OK;
    iter_merge_clear(ri->m);
    ri->r = STORE_ITER_NONE;
    kiln_err e;
    status_clear(&e);
    if (store_view_fill_merge(ri->v, r, &ri->sel, NULL, 0, ri->m, &e) != KILN_OK)
        return kiln_iter_fail(&ri->base, &e);
    ri->r = r;
    const store_region *reg = &ri->v->regions[r];
    ri->has_rlo = ri->has_lower;
    ri->rlo = ri->lower;
    if (reg->start.n > 0) {
        kiln_cell s;
        cell_first_on_row(&s, reg->start.p, (uint32_t)reg->start.n);
        if (!ri->has_rlo || cell_compare(&s, &ri->rlo) > 0) {
            ri->rlo = s;
            ri->has_rlo = 1;
        }
    }
    ri->has_rhi = ri->has_upper;
    ri->rhi = ri->upper;
    if (reg->end.n > 0) {
        kiln_cell e2;
        cell_first_on_row(&e2, reg->end.p, (uint32_t)reg->end.n);
        if (!ri->has_rhi || cell_compare(&e2, &ri->rhi) < 0) {
            ri->rhi = e2;
            ri->has_rhi = 1;
        }
    }
    return KILN_OK;
}

/* The merge moved forward (or was sought) in region r: take its cell if it is
 * within the region's bounds, else go on in the following regions. */
static void
store_iter_settle_forward(store_iter_range *ri)
{
    for (;;) {
        kiln_iter *mi = iter_merge_iter(ri->m);
        if (mi->err.code != KILN_OK) {
            kiln_iter_fail(&ri->base, &mi->err);
            return;
        }
        if (mi->cur != NULL && (!ri->has_rhi || cell_compare(mi->cur, &ri->rhi) <= 0)) {
            ri->base.cur = mi->cur;
            return;
        }
        if (ri->r >= ri->r_last) {
            ri->base.cur = NULL;
            return;
        }
        if (store_iter_enter(ri, ri->r + 1) != KILN_OK)
            return;
        if (ri->has_rlo)
            kiln_iter_seek(mi, &ri->rlo);
        else
            kiln_iter_seek_first(mi);
    }
}

static void
store_iter_settle_backward(store_iter_range *ri)
{
    for (;;) {
        kiln_iter *mi = iter_merge_iter(ri->m);
        if (mi->err.code != KILN_OK) {
            kiln_iter_fail(&ri->base, &mi->err);
            return;
        }
        if (mi->cur != NULL && (!ri->has_rlo || cell_compare(mi->cur, &ri->rlo) >= 0)) {
            ri->base.cur = mi->cur;
            return;
        }
        if (ri->r <= ri->r_first) {
            ri->base.cur = NULL;
            return;
        }
        if (store_iter_enter(ri, ri->r - 1) != KILN_OK)
            return;
        if (ri->has_rhi)
            kiln_iter_seek_for_prev(mi, &ri->rhi);
        else
            kiln_iter_seek_last(mi);
    }
}

/* A seek key in this iterator's rows: a bucket's byte put first. */
static const kiln_cell *
store_iter_key(store_iter_range *ri, const kiln_cell *key, kiln_cell *tmp)
{
    if (ri->bucket < 0)
        return key;
    buf_reset(&ri->seek_row);
    buf_append_u8(&ri->seek_row, (uint8_t)ri->bucket);
    if (key->row_len > 1)
        buf_append(&ri->seek_row, key->row + 1, key->row_len - 1);
    *tmp = *key;
    tmp->row = ri->seek_row.data;
    tmp->row_len = (uint32_t)ri->seek_row.len;
    return tmp;
}

static size_t
store_iter_region_of(const store_iter_range *ri, const kiln_cell *k)
{
    size_t r = store_view_region_of(ri->v, k->row, k->row_len);
    if (r < ri->r_first)
        return ri->r_first;
    return r > ri->r_last ? ri->r_last : r;
}

static void
store_iter_seek(kiln_iter *base, const kiln_cell *key)
{
    store_iter_range *ri = (store_iter_range *)base;
    kiln_iter_restart(base);
    if (ri->v->nregions == 0)
        return;
    kiln_cell tmp;
    key = store_iter_key(ri, key, &tmp);
    if (ri->has_lower && cell_compare(key, &ri->lower) < 0)
        key = &ri->lower;
    if (store_iter_enter(ri, store_iter_region_of(ri, key)) != KILN_OK)
        return;
    if (ri->has_rlo && cell_compare(key, &ri->rlo) < 0)
        key = &ri->rlo;
    kiln_iter_seek(iter_merge_iter(ri->m), key);
    store_iter_settle_forward(ri);
}

static void
store_iter_seek_for_prev(kiln_iter *base, const kiln_cell *key)
{
    store_iter_range *ri = (store_iter_range *)base;
    kiln_iter_restart(base);
    if (ri->v->nregions == 0)
        return;
    kiln_cell tmp;
    key = store_iter_key(ri, key, &tmp);
    if (ri->has_upper && cell_compare(key, &ri->upper) > 0)
        key = &ri->upper;
    if (store_iter_enter(ri, store_iter_region_of(ri, key)) != KILN_OK)
        return;
    if (ri->has_rhi && cell_compare(key, &ri->rhi) > 0)
        key = &ri->rhi;
    kiln_iter_seek_for_prev(iter_merge_iter(ri->m), key);
    store_iter_settle_backward(ri);
}

static void
store_iter_seek_first(kiln_iter *base)
{
    store_iter_range *ri = (store_iter_range *)base;
    kiln_iter_restart(base);
    if (ri->v->nregions == 0 || store_iter_enter(ri, ri->r_first) != KILN_OK)
        return;
    kiln_iter *mi = iter_merge_iter(ri->m);
    if (ri->has_rlo)
        kiln_iter_seek(mi, &ri->rlo);
    else
        kiln_iter_seek_first(mi);
    store_iter_settle_forward(ri);
}

static void
store_iter_seek_last(kiln_iter *base)
{
    store_iter_range *ri = (store_iter_range *)base;
    kiln_iter_restart(base);
    if (ri->v->nregions == 0 || store_iter_enter(ri, ri->r_last) != KILN_OK)
        return;
    kiln_iter *mi = iter_merge_iter(ri->m);
    if (ri->has_rhi)
        kiln_iter_seek_for_prev(mi, &ri->rhi);
    else
        kiln_iter_seek_last(mi);
    store_iter_settle_backward(ri);
}

static void
store_iter_next(kiln_iter *base)
{
    store_iter_range *ri = (store_iter_range *)base;
    kiln_iter_next(iter_merge_iter(ri->m));
    store_iter_settle_forward(ri);
}

static void
store_iter_prev(kiln_iter *base)
{
    store_iter_range *ri = (store_iter_range *)base;
    kiln_iter_prev(iter_merge_iter(ri->m));
    store_iter_settle_backward(ri);
}

static void
store_iter_close(kiln_iter *base)
{
    store_iter_range *ri = (store_iter_range *)base;
    iter_merge_free(ri->m);
    free(ri->sel.family_on);
    buf_free(&ri->lo_row);
    buf_free(&ri->hi_row);
    buf_free(&ri->seek_row);
    store_view_unref(ri->v);
    free(ri);
}

static const kiln_iter_ops store_iter_ops = {
    .seek_first = store_iter_seek_first,
    .seek_last = store_iter_seek_last,
    .seek = store_iter_seek,
    .seek_for_prev = store_iter_seek_for_prev,
    .next = store_iter_next,
    .prev = store_iter_prev,
    .close = store_iter_close,
};

/* Row bounds of a range: each a row, unset when its length is 0 (with
 * has = 0), and whether the row itself is inside. */
typedef struct store_iter_bounds {
    kslice lo, hi;
    int has_lo, has_hi;
    int lo_incl, hi_incl;
} store_iter_bounds;

/* The smallest row greater than every row starting with p (p with its last
 * non-0xFF byte incremented, the rest dropped); 0 if p is all 0xFF. */
static int
store_iter_prefix_end(kslice p, kbuf *out)
{
    buf_reset(out);
    buf_append(out, p.p, p.n);
    while (out->len > 0 && out->data[out->len - 1] == 0xFF)
        out->len--;
    if (out->len == 0)
        return 0;
    out->data[out->len - 1]++;
    return 1;
}

/* The rows a scan's options select: forward [max(start, prefix), min(stop,
 * prefix end)); reversed, start is the inclusive upper bound and stop the
 * exclusive lower one, still within the prefix. pend holds the prefix end. */
static void
store_iter_scan_bounds(const store_scan_opts *o, kbuf *pend, store_iter_bounds *b)
{
    memset(b, 0, sizeof *b);
    kslice start = kslice_make(o->start, o->start_len);
    kslice stop = kslice_make(o->stop, o->stop_len);
    kslice prefix = kslice_make(o->prefix, o->prefix_len);
    int has_pend = prefix.n > 0 && store_iter_prefix_end(prefix, pend);
    if (!o->reversed) {
        b->lo = start;
        if (prefix.n > 0 && kslice_cmp(prefix, b->lo) > 0)
            b->lo = prefix;
        b->has_lo = b->lo.n > 0;
        b->lo_incl = 1;
        b->hi = stop;
        if (has_pend && (b->hi.n == 0 || kslice_cmp(buf_slice(pend), b->hi) < 0))
            b->hi = buf_slice(pend);
        b->has_hi = b->hi.n > 0;
        b->hi_incl = 0;
        return;
    }
    if (start.n > 0 && (!has_pend || kslice_cmp(start, buf_slice(pend)) < 0)) {
        b->hi = start;
        b->hi_incl = 1;
    } else if (has_pend) {
        b->hi = buf_slice(pend);
    }
    b->has_hi = b->hi.n > 0;
    if (stop.n > 0 && (prefix.n == 0 || kslice_cmp(stop, prefix) >= 0)) {
        b->lo = stop;
    } else if (prefix.n > 0) {
        b->lo = prefix;
        b->lo_incl = 1;
    }
    b->has_lo = b->lo.n > 0;
}

/* A range iterator over v in bounds b; bucket >= 0: the rows of that bucket
 * ([bucket] + each bound row; unbounded sides end at the bucket's rows). */
static kiln_iter *
store_iter_range_new(store_view *v, const store_sel *sel, const store_iter_bounds *b, int bucket)
{
    store_iter_range *ri = kiln_calloc(1, sizeof *ri);
    kiln_iter_init(&ri->base, &store_iter_ops);
    store_view_ref(v);
    ri->v = v;
    if (sel->family_on != NULL)
        ri->sel.family_on = kiln_memdup(sel->family_on, v->schema.family_count);
    ri->sel.read_point = sel->read_point;
    buf_init(&ri->lo_row);
    buf_init(&ri->hi_row);
    buf_init(&ri->seek_row);
    ri->bucket = bucket;
    ri->m = iter_merge_new(0);
    ri->r = STORE_ITER_NONE;
    int lo_incl = b->lo_incl, hi_incl = b->hi_incl;
    if (bucket >= 0) {
        buf_append_u8(&ri->lo_row, (uint8_t)bucket);
        buf_append(&ri->lo_row, b->lo.p, b->lo.n);
        if (!b->has_lo)
            lo_incl = 1;       /* [b] itself: the bucket's first row */
        ri->has_lower = 1;
        if (b->has_hi) {
            buf_append_u8(&ri->hi_row, (uint8_t)bucket);
            buf_append(&ri->hi_row, b->hi.p, b->hi.n);
            ri->has_upper = 1;
        } else if (bucket < 255) {
            buf_append_u8(&ri->hi_row, (uint8_t)(bucket + 1));   /* the next bucket's first row */
            ri->has_upper = 1;
            hi_incl = 0;
        }
    } else {
        buf_append(&ri->lo_row, b->lo.p, b->lo.n);
        buf_append(&ri->hi_row, b->hi.p, b->hi.n);
        ri->has_lower = b->has_lo;
        ri->has_upper = b->has_hi;
    }
    if (ri->has_lower) {
        if (lo_incl)
            cell_first_on_row(&ri->lower, ri->lo_row.data, (uint32_t)ri->lo_row.len);
        else
            store_iter_last_on_row(&ri->lower, ri->lo_row.data, (uint32_t)ri->lo_row.len);
    }
    if (ri->has_upper) {
        if (hi_incl)
            store_iter_last_on_row(&ri->upper, ri->hi_row.data, (uint32_t)ri->hi_row.len);
        else
            cell_first_on_row(&ri->upper, ri->hi_row.data, (uint32_t)ri->hi_row.len);
    }
    ri->r_first = ri->has_lower ? store_view_region_of(v, ri->lo_row.data, ri->lo_row.len) : 0;
    ri->r_last = v->nregions == 0 ? 0
                 : ri->has_upper ? store_view_region_of(v, ri->hi_row.data, ri->hi_row.len)
                                 : v->nregions - 1;
    return &ri->base;
}

kiln_status
store_view_iter_open(store_view *v, const store_scan_opts *o, kiln_iter **out, kiln_err *err)
{
    *out = NULL;
    store_scan_opts dflt;
    if (o == NULL) {
        store_scan_opts_init(&dflt);
        o = &dflt;
    }
    store_sel sel;
    kiln_status st = store_row_sel_init(&v->schema, &o->read, &sel, err);
    if (st != KILN_OK)
        return st;
    sel.read_point = store_view_read_point(v, &o->read);
    kbuf pend = KBUF_INIT;
    store_iter_bounds b;
    store_iter_scan_bounds(o, &pend, &b);
    uint32_t buckets = v->schema.salt_buckets;
    if (buckets == 0) {
        *out = store_iter_range_new(v, &sel, &b, -1);
    } else {
        if (o->one_bucket && o->bucket >= buckets) {
            buf_free(&pend);
            store_row_sel_free(&sel);
            return status_set(err, KILN_INVALID, "table %s: bucket %u of a table of %u buckets",
                              v->schema.name, o->bucket, buckets);
        }
        iter_merge *m = iter_merge_new(1);
        for (uint32_t i = 0; i < buckets; i++)
            if (!o->one_bucket || i == o->bucket)
                iter_merge_add(m, store_iter_range_new(v, &sel, &b, (int)i), 0, 1);
        *out = iter_merge_iter(m);
    }
    buf_free(&pend);
    store_row_sel_free(&sel);
    return KILN_OK;
}
