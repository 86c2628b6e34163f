/* store_scan.c -- Scan over a view: rows in [start, stop) (or descending for
 * reversed scans), with a prefix and a row limit, crossing regions. Forward
 * scans keep one merge per region positioned at the next row; reversed scans
 * find the previous row with a seek-for-prev on every file, then read that
 * row forward, so each row's cells still come in HBase order.
 *
 * A salted table's scan is N plain scans, one per bucket b over the stored
 * keys [b] + user key (prefix [b] + P, bounds [b] + start and [b] + stop),
 * merged by a binary heap on their current rows' user keys (largest first
 * when reversed). Each bucket scan keeps the row it last produced until it is
 * advanced, which happens on the call after that row was returned, so a
 * returned row stays valid until the next call as for a plain scan.
 */
#include <stdlib.h>
#include <string.h>

#include "storage/store/store_view_int.h"

#define STORE_SCAN_NONE ((size_t)-1)

struct store_scan {
    store_view *v;
    store_sel sel;
    int reversed;
    uint64_t limit, emitted;
    kbuf lo;                  /* forward: first row (inclusive); reversed: stop (exclusive) */
    int has_lo;
    kbuf hi;                  /* forward: stop (exclusive); reversed: bound, see hi_inclusive */
    int has_hi;
    int hi_inclusive;         /* reversed: the bound row itself may be returned */
    kbuf prefix;
    int has_prefix;
    size_t region;
    int region_open;
    int done;
    uint64_t max_skipped;     /* rows without a visible cell per next call; 0 = any */
    int yielded;              /* the last next call stopped at max_skipped */
    uint64_t skipped;         /* rows passed over in this call */
    kbuf resume;              /* then: the last row it passed over */
    store_merge *m;
    store_row_buf *buf;
    /* salted table: one scan per bucket, merged */
    store_scan **subs;
    store_row *heads;         /* each bucket scan's current row */
    size_t nsubs;
    size_t *heap;             /* buckets with a current row, best row on top */
    size_t nheap;
    size_t pending;           /* top bucket whose row was returned: advance it next */
    int started;
};

void
store_scan_opts_init(store_scan_opts *o)
{
    memset(o, 0, sizeof *o);
    store_row_opts_init(&o->read);
}

/* The smallest key greater than every key starting with p: p with its last
 * non-0xFF byte incremented and the rest dropped; 0 if p is all 0xFF. */
static int
store_scan_prefix_end(const kbuf *p, kbuf *out)
{
    buf_reset(out);
    buf_append(out, p->data, p->len);
    while (out->len > 0 && out->data[out->len - 1] == 0xFF)
        out->len--;
    if (out->len == 0)
        return 0;
    out->data[out->len - 1]++;
    return 1;
}

static int
store_scan_has_prefix(const store_scan *s, const kiln_cell *c)
{
    return c->row_len >= s->prefix.len && memcmp(c->row, s->prefix.data, s->prefix.len) == 0;
}

static kiln_status
store_scan_open_plain(store_view *v, const store_scan_opts *o, store_scan **out, kiln_err *err)
{
    *out = NULL;
    store_scan *s = kiln_calloc(1, sizeof *s);
    s->pending = STORE_SCAN_NONE;
    kiln_status st = store_row_sel_init(&v->schema, &o->read, &s->sel, err);
    if (st != KILN_OK) {
        free(s);
        return st;
    }
    store_view_ref(v);
    s->v = v;
    s->reversed = o->reversed;
    s->limit = o->limit;
    s->max_skipped = o->max_skipped;
    buf_init(&s->lo);
    buf_init(&s->hi);
    buf_init(&s->prefix);
    buf_init(&s->resume);
    kbuf pend = KBUF_INIT;
    int has_pend = 0;
    if (o->prefix_len > 0) {
        s->has_prefix = 1;
        buf_append(&s->prefix, o->prefix, o->prefix_len);
        has_pend = store_scan_prefix_end(&s->prefix, &pend);
    }
    kslice start = kslice_make(o->start, o->start_len);
    kslice stop = kslice_make(o->stop, o->stop_len);
    if (!s->reversed) {
        /* rows in [max(start, prefix), min(stop, prefix end)) */
        kslice lo = start;
        if (s->has_prefix && kslice_cmp(buf_slice(&s->prefix), lo) > 0)
            lo = buf_slice(&s->prefix);
        if (lo.n > 0) {
            s->has_lo = 1;
            buf_append(&s->lo, lo.p, lo.n);
        }
        kslice hi = stop;
        if (has_pend && (hi.n == 0 || kslice_cmp(buf_slice(&pend), hi) < 0))
            hi = buf_slice(&pend);
        if (hi.n > 0) {
            s->has_hi = 1;
            buf_append(&s->hi, hi.p, hi.n);
        }
        s->region = s->has_lo ? store_view_region_of(v, s->lo.data, s->lo.len) : 0;
    } else {
        /* rows <= start and < prefix end, descending, while > stop and >= prefix */
        if (start.n > 0 && (!has_pend || kslice_cmp(start, buf_slice(&pend)) < 0)) {
            s->has_hi = 1;
            s->hi_inclusive = 1;
            buf_append(&s->hi, start.p, start.n);
        } else if (has_pend) {
            s->has_hi = 1;
            buf_append(&s->hi, pend.data, pend.len);
        }
        if (stop.n > 0) {
            s->has_lo = 1;
            buf_append(&s->lo, stop.p, stop.n);
        }
        s->region = s->has_hi ? store_view_region_of(v, s->hi.data, s->hi.len) : v->nregions - 1;
    }
    buf_free(&pend);
    s->m = store_merge_new();
    s->buf = store_row_buf_new();
    *out = s;
    return KILN_OK;
}

void
store_scan_close(store_scan *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->nsubs; i++)
        store_scan_close(s->subs[i]);
    free(s->subs);
    free(s->heads);
    free(s->heap);
    store_merge_free(s->m);
    store_row_buf_free(s->buf);
    store_row_sel_free(&s->sel);
    buf_free(&s->lo);
    buf_free(&s->hi);
    buf_free(&s->prefix);
    buf_free(&s->resume);
    store_view_unref(s->v);
    free(s);
}

static kiln_status
store_scan_enter_region(store_scan *s, kiln_err *err)
{
    store_merge_clear(s->m);
    s->region_open = 1;
    return store_view_fill_merge(s->v, s->region, &s->sel, NULL, 0, s->m, err);
}

static int store_scan_skip(store_scan *s, kslice row);

static kiln_status
store_scan_next_forward(store_scan *s, store_row *out, int *has_row, kiln_err *err)
{
    const store_view *v = s->v;
    for (;;) {
        if (!s->region_open) {
            if (s->region >= v->nregions)
                break;
            kslice rstart = v->regions[s->region].start;
            if (s->has_hi && rstart.n > 0 && kslice_cmp(rstart, buf_slice(&s->hi)) >= 0)
                break;
            kiln_status st = store_scan_enter_region(s, err);
            if (st != KILN_OK)
                return st;
            kslice from = rstart;
            if (s->has_lo && kslice_cmp(buf_slice(&s->lo), from) > 0)
                from = buf_slice(&s->lo);
            kiln_cell key;
            cell_first_on_row(&key, from.p, (uint32_t)from.n);
            if ((st = store_merge_seek(s->m, &key, err)) != KILN_OK)
                return st;
        }
        if (!store_merge_valid(s->m)) {
            s->region++;
            s->region_open = 0;
            continue;
        }
        const kiln_cell *c = store_merge_cell(s->m);
        kslice row = kslice_make(c->row, c->row_len);
        if (s->has_hi && kslice_cmp(row, buf_slice(&s->hi)) >= 0)
            break;
        kslice rend = v->regions[s->region].end;
        if (rend.n > 0 && kslice_cmp(row, rend) >= 0) {
            s->region++;
            s->region_open = 0;
            continue;
        }
        if (s->has_prefix && !store_scan_has_prefix(s, c))
            break;   /* rows start at the prefix, so the first miss ends it */
        kiln_status st = store_row_assemble(s->m, v, &s->sel, s->buf, out, err);
        if (st != KILN_OK)
            return st;
        if (out->count > 0) {
            *has_row = 1;
            return KILN_OK;
        }
        if (store_scan_skip(s, row))
            return KILN_OK;
    }
    s->done = 1;
    return KILN_OK;
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
store_scan_next_reversed(store_scan *s, store_row *out, int *has_row, kiln_err *err)
{
    const store_view *v = s->v;
    kbuf row = KBUF_INIT;
    kiln_status st = KILN_OK;
    for (;;) {
        if (!s->region_open) {
            kslice rend = v->regions[s->region].end;
            if (s->has_lo && rend.n > 0 && kslice_cmp(rend, buf_slice(&s->lo)) <= 0)
                break;
            if ((st = store_scan_enter_region(s, err)) != KILN_OK)
                break;
        }
        kiln_cell key, *kp = NULL;
        if (s->has_hi) {
            if (s->hi_inclusive) {
                /* the last key of the row: empty family and qualifier, type Minimum */
                memset(&key, 0, sizeof key);
                key.row = s->hi.data;
                key.row_len = (uint32_t)s->hi.len;
                key.ts = CELL_LATEST_TIMESTAMP;
                key.type = CELL_TYPE_MINIMUM;
            } else {
                cell_first_on_row(&key, s->hi.data, (uint32_t)s->hi.len);
            }
            kp = &key;
        }
        int found;
        if ((st = store_merge_prev_row(s->m, kp, &row, &found, err)) != KILN_OK)
            break;
        if (!found || kslice_cmp(buf_slice(&row), v->regions[s->region].start) < 0) {
            if (s->region == 0)
                break;
            s->region--;
            s->region_open = 0;
            continue;
        }
        if (s->has_lo && kslice_cmp(buf_slice(&row), buf_slice(&s->lo)) <= 0)
            break;
        /* the next round looks below this row */
        buf_reset(&s->hi);
        buf_append(&s->hi, row.data, row.len);
        s->has_hi = 1;
        s->hi_inclusive = 0;
        if (s->has_prefix) {
            int starts = row.len >= s->prefix.len &&
                         memcmp(row.data, s->prefix.data, s->prefix.len) == 0;
            if (!starts) {
                if (kslice_cmp(buf_slice(&row), buf_slice(&s->prefix)) < 0)
                    break;
                continue;
            }
        }
        cell_first_on_row(&key, row.data, (uint32_t)row.len);
        if ((st = store_merge_seek(s->m, &key, err)) != KILN_OK)
            break;
        if (!store_merge_valid(s->m))
            continue;
        if ((st = store_row_assemble(s->m, v, &s->sel, s->buf, out, err)) != KILN_OK)
            break;
        if (out->count > 0) {
            *has_row = 1;
            buf_free(&row);
            return KILN_OK;
        }
        if (store_scan_skip(s, buf_slice(&row))) {
            buf_free(&row);
            return KILN_OK;
        }
    }
    buf_free(&row);
    s->done = 1;
    return st;
}

/* ------------------------------------------------------------------ salted */

kiln_status
store_scan_open(store_view *v, const store_scan_opts *o, store_scan **out, kiln_err *err)
{
    uint32_t buckets = v->schema.salt_buckets;
    if (buckets == 0)
        return store_scan_open_plain(v, o, out, err);
    *out = NULL;
    /* Check the request once (column families) before opening N scans. */
    store_sel sel;
    kiln_status st = store_row_sel_init(&v->schema, &o->read, &sel, err);
    if (st != KILN_OK)
        return st;
    store_row_sel_free(&sel);
    store_scan *s = kiln_calloc(1, sizeof *s);
    store_view_ref(v);
    s->v = v;
    s->reversed = o->reversed;
    s->limit = o->limit;
    s->pending = STORE_SCAN_NONE;
    buf_init(&s->lo);
    buf_init(&s->hi);
    buf_init(&s->prefix);
    buf_init(&s->resume);
    s->subs = kiln_calloc(buckets, sizeof *s->subs);
    s->heads = kiln_calloc(buckets, sizeof *s->heads);
    s->heap = kiln_calloc(buckets, sizeof *s->heap);
    kbuf pre = KBUF_INIT, lo = KBUF_INIT, hi = KBUF_INIT;
    for (uint32_t b = 0; b < buckets && st == KILN_OK; b++) {
        store_scan_opts bo = *o;
        bo.max_skipped = 0;   /* a bucket that stopped early would look finished */
        buf_reset(&pre);
        buf_append_u8(&pre, (uint8_t)b);
        buf_append(&pre, o->prefix, o->prefix_len);
        bo.prefix = pre.data;
        bo.prefix_len = pre.len;
        buf_reset(&lo);
        buf_reset(&hi);
        if (o->start_len > 0) {
            buf_append_u8(&lo, (uint8_t)b);
            buf_append(&lo, o->start, o->start_len);
            bo.start = lo.data;
            bo.start_len = lo.len;
        }
        if (o->stop_len > 0) {
            buf_append_u8(&hi, (uint8_t)b);
            buf_append(&hi, o->stop, o->stop_len);
            bo.stop = hi.data;
            bo.stop_len = hi.len;
        }
        st = store_scan_open_plain(v, &bo, &s->subs[b], err);
        if (st == KILN_OK)
            s->nsubs++;
    }
    buf_free(&pre);
    buf_free(&lo);
    buf_free(&hi);
    if (st != KILN_OK) {
        store_scan_close(s);
        return st;
    }
    *out = s;
    return KILN_OK;
}

/* 1 if bucket a's row comes before bucket b's in the scan's order. */
static int
store_scan_before(const store_scan *s, size_t a, size_t b)
{
    int c = kslice_cmp(s->heads[a].row, s->heads[b].row);
    return s->reversed ? c > 0 : c < 0;
}

static void
store_scan_sift_down(store_scan *s, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < s->nheap && store_scan_before(s, s->heap[l], s->heap[best]))
            best = l;
        if (r < s->nheap && store_scan_before(s, s->heap[r], s->heap[best]))
            best = r;
        if (best == i)
            return;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[best];
        s->heap[best] = t;
        i = best;
    }
}

static void
store_scan_push(store_scan *s, size_t b)
{
    size_t i = s->nheap++;
    s->heap[i] = b;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!store_scan_before(s, s->heap[i], s->heap[up]))
            break;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[up];
        s->heap[up] = t;
        i = up;
    }
}

static kiln_status
store_scan_next_salted(store_scan *s, store_row *out, int *has_row, kiln_err *err)
{
    int has;
    kiln_status st;
    if (!s->started) {
        s->started = 1;
        for (size_t b = 0; b < s->nsubs; b++) {
            if ((st = store_scan_next(s->subs[b], &s->heads[b], &has, err)) != KILN_OK)
                return st;
            if (has)
                store_scan_push(s, b);
        }
    } else if (s->pending != STORE_SCAN_NONE) {
        /* the row returned last is the heap's top: replace it by its successor */
        size_t b = s->pending;
        s->pending = STORE_SCAN_NONE;
        if ((st = store_scan_next(s->subs[b], &s->heads[b], &has, err)) != KILN_OK)
            return st;
        if (!has)
            s->heap[0] = s->heap[--s->nheap];
        if (s->nheap > 0)
            store_scan_sift_down(s, 0);
    }
    if (s->nheap == 0) {
        s->done = 1;
        return KILN_OK;
    }
    s->pending = s->heap[0];
    *out = s->heads[s->pending];
    *has_row = 1;
    return KILN_OK;
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
    kiln_status st = s->subs != NULL ? store_scan_next_salted(s, out, has_row, err)
                     : s->reversed   ? store_scan_next_reversed(s, out, has_row, err)
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
