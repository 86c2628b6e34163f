/* store_view_row.c -- assembling one row from any cell iterator (iter.h: a file,
 * a region's merge, a view's range, salted buckets merged) with HBase read
 * semantics: the newest load wins on equal keys, delete markers mask what
 * they cover, TTL and the time range drop cells, columns are selected, and
 * each column keeps at most max_versions newest versions.
 *
 * Cells arrive in HBase order, so every marker is seen before the cells it
 * masks: a family's DeleteFamily / DeleteFamilyVersion markers carry an empty
 * qualifier and the largest type, a column's DeleteColumn / Delete markers
 * sort before Puts of equal timestamp. One pass with per-family and
 * per-column state is enough.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/store/store_view_int.h"

/* ------------------------------------------------------------------ options */

void
store_row_opts_init(store_row_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_versions = 1;
    o->ts_min = 0;
    o->ts_max = INT64_MAX;
}

void
store_scan_opts_init(store_scan_opts *o)
{
    memset(o, 0, sizeof *o);
    store_row_opts_init(&o->read);
}

kiln_status
store_row_sel_init(const kiln_schema *s, const store_row_opts *o, store_sel *sel,
                   kiln_err *err)
{
    memset(sel, 0, sizeof *sel);
    sel->max_versions = o->max_versions ? o->max_versions : 1;
    sel->ts_min = o->ts_min;
    sel->ts_max = o->ts_max ? o->ts_max : INT64_MAX;
    int any_ttl = 0;
    for (size_t i = 0; i < s->family_count; i++)
        any_ttl |= s->families[i].ttl_s < SCHEMA_TTL_FOREVER;
    if (o->now_ms != 0 || !any_ttl) {
        sel->now_ms = o->now_ms;   /* unused when no family has a TTL */
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        sel->now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    if (o->column_count == 0)
        return KILN_OK;
    size_t nf = s->family_count;
    sel->nfamilies = nf;
    sel->family_on = kiln_calloc(nf, 1);
    sel->quals = kiln_calloc(nf, sizeof *sel->quals);
    sel->nquals = kiln_calloc(nf, sizeof *sel->nquals);
    uint8_t *whole = kiln_calloc(nf, 1);
    kiln_status st = KILN_OK;
    for (size_t i = 0; i < o->column_count; i++) {
        const store_column *c = &o->columns[i];
        const schema_family *f =
            schema_find_family(s, (const uint8_t *)c->family, strlen(c->family));
        if (f == NULL) {
            st = status_set(err, KILN_INVALID, "table %s: no column family '%s'", s->name,
                            c->family);
            break;
        }
        size_t fi = (size_t)(f - s->families);
        sel->family_on[fi] = 1;
        if (c->qualifier == NULL) {
            whole[fi] = 1;
            continue;
        }
        sel->quals[fi] = kiln_realloc(sel->quals[fi], (sel->nquals[fi] + 1) * sizeof(kslice));
        sel->quals[fi][sel->nquals[fi]++] = kslice_make(c->qualifier, c->qualifier_len);
    }
    for (size_t fi = 0; fi < nf; fi++) {
        if (whole[fi]) {
            free(sel->quals[fi]);
            sel->quals[fi] = NULL;
            sel->nquals[fi] = 0;
        }
    }
    free(whole);
    if (st != KILN_OK)
        store_row_sel_free(sel);
    return st;
}

void
store_row_sel_free(store_sel *sel)
{
    for (size_t i = 0; sel->quals != NULL && i < sel->nfamilies; i++)
        free(sel->quals[i]);
    free(sel->quals);
    free(sel->family_on);
    free(sel->nquals);
    sel->quals = NULL;
    sel->family_on = NULL;
    sel->nquals = NULL;
}

/* ------------------------------------------------------------------ row buffers */

/* Per-family and per-column masking state. */
typedef struct store_row_state {
    size_t family;            /* schema index of the family being read, or SIZE_MAX */
    const char *fam_name;     /* its name and length */
    size_t fam_len;
    int family_selected;
    int64_t ttl_ms;           /* 0 = forever */
    uint32_t max_versions;
    int64_t family_del_ts;    /* newest DeleteFamily timestamp, INT64_MIN if none */
    int64_t *fam_version_del; /* DeleteFamilyVersion timestamps */
    size_t n_fam_version_del, cap_fam_version_del;
    kbuf qual;                /* current column */
    int have_qual;
    int qual_selected;
    int64_t col_del_ts;       /* newest DeleteColumn timestamp of the column */
    int64_t *version_del;     /* Delete timestamps of the column */
    size_t n_version_del, cap_version_del;
    uint32_t versions;        /* versions returned for the column */
    int64_t prev_ts;          /* previous cell's key (within the column) */
    uint8_t prev_type;
    int have_prev;
} store_row_state;


typedef struct store_cell_ref {
    size_t family;            /* schema family index */
    size_t family_len;
    size_t qual_off, val_off, tags_off;
    uint32_t qual_len, val_len, tags_len;
    int64_t ts;
    uint8_t type;
    uint64_t mvcc;
} store_cell_ref;

struct store_row_buf {
    kbuf bytes;               /* row, then qualifier / value / tag bytes */
    store_cell_ref *refs;
    kiln_cell *cells;
    size_t count, cap;
    store_view *view;         /* referenced while its iterators are cached */
    kiln_iter **iters;        /* by store_file.index; NULL until first used */
    iter_merge *m;
    store_row_state st;       /* kept between rows so its buffers are reused */
    kbuf key;                 /* a Get's stored key (salted tables) */
    const kiln_schema *last_schema;   /* the family last read, to skip lookups */
    size_t last_family;
};

store_row_buf *
store_row_buf_new(void)
{
    store_row_buf *b = kiln_calloc(1, sizeof *b);
    buf_init(&b->bytes);
    return b;
}

/* Free the cached iterators and drop the view they belong to. */
static void
store_row_buf_drop_view(store_row_buf *b)
{
    if (b->view == NULL)
        return;
    for (size_t i = 0; i < b->view->nfiles; i++)
        kiln_iter_close(b->iters[i]);
    free(b->iters);
    b->iters = NULL;
    store_view_unref(b->view);
    b->view = NULL;
    b->last_schema = NULL;   /* the schema went with the view */
}

iter_merge *
store_row_buf_merge(store_row_buf *b, store_view *v)
{
    if (b->view != v) {
        store_row_buf_drop_view(b);
        store_view_ref(v);
        b->view = v;
        b->iters = kiln_calloc(v->nfiles ? v->nfiles : 1, sizeof *b->iters);
    }
    if (b->m == NULL)
        b->m = iter_merge_new(0);
    return b->m;
}

kiln_iter *
store_row_buf_iter(store_row_buf *b, const store_file *sf)
{
    if (b->iters[sf->index] == NULL)
        b->iters[sf->index] = hfile_reader_iter(sf->rd);
    return b->iters[sf->index];
}

void
store_row_buf_free(store_row_buf *b)
{
    if (b == NULL)
        return;
    iter_merge_free(b->m);
    store_row_buf_drop_view(b);
    buf_free(&b->st.qual);
    free(b->st.fam_version_del);
    free(b->st.version_del);
    buf_free(&b->bytes);
    free(b->refs);
    free(b->cells);
    buf_free(&b->key);
    free(b);
}

kbuf *
store_row_buf_key(store_row_buf *b)
{
    return &b->key;
}

static void
store_row_buf_add(store_row_buf *b, size_t family, size_t family_len, const kiln_cell *c)
{
    if (b->count == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->refs = kiln_realloc(b->refs, b->cap * sizeof *b->refs);
        b->cells = kiln_realloc(b->cells, b->cap * sizeof *b->cells);
    }
    store_cell_ref *r = &b->refs[b->count++];
    r->family = family;
    r->family_len = family_len;
    buf_reserve(&b->bytes, (size_t)c->qualifier_len + c->value_len + c->tags_len);
    uint8_t *p = b->bytes.data + b->bytes.len;
    r->qual_off = b->bytes.len;
    r->qual_len = c->qualifier_len;
    if (c->qualifier_len)
        memcpy(p, c->qualifier, c->qualifier_len);
    p += c->qualifier_len;
    r->val_off = r->qual_off + c->qualifier_len;
    r->val_len = c->value_len;
    if (c->value_len)
        memcpy(p, c->value, c->value_len);
    p += c->value_len;
    r->tags_off = r->val_off + c->value_len;
    r->tags_len = c->tags_len;
    if (c->tags_len)
        memcpy(p, c->tags, c->tags_len);
    b->bytes.len = r->tags_off + c->tags_len;
    r->ts = c->ts;
    r->type = c->type;
    r->mvcc = c->mvcc;
}

/* Turn offsets into cells once the byte buffer stops moving. The first
 * `skip` bytes of the stored row (a salted table's bucket byte) are not part
 * of the row the caller sees. */
static void
store_row_buf_finish(store_row_buf *b, const kiln_schema *s, size_t row_len, size_t skip,
                     store_row *out)
{
    const uint8_t *base = b->bytes.data;
    for (size_t i = 0; i < b->count; i++) {
        const store_cell_ref *r = &b->refs[i];
        kiln_cell *c = &b->cells[i];
        memset(c, 0, sizeof *c);
        c->row = base + skip;
        c->row_len = (uint32_t)(row_len - skip);
        c->family = (const uint8_t *)s->families[r->family].name;
        c->family_len = (uint32_t)r->family_len;
        c->qualifier = base + r->qual_off;
        c->qualifier_len = r->qual_len;
        c->value = base + r->val_off;
        c->value_len = r->val_len;
        c->tags = r->tags_len ? base + r->tags_off : NULL;
        c->tags_len = r->tags_len;
        c->ts = r->ts;
        c->type = r->type;
        c->mvcc = r->mvcc;
    }
    out->row = kslice_make(base + skip, row_len - skip);
    out->cells = b->cells;
    out->count = b->count;
}

/* ------------------------------------------------------------------ assembly */


static int
store_row_ts_in(const int64_t *v, size_t n, int64_t ts)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i] == ts)
            return 1;
    }
    return 0;
}

static void
store_row_ts_add(int64_t **v, size_t *n, size_t *cap, int64_t ts)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        *v = kiln_realloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = ts;
}

static int
store_row_qual_selected(const store_sel *sel, size_t fam, const kiln_cell *c)
{
    if (sel->quals == NULL || sel->quals[fam] == NULL)
        return 1;
    kslice q = kslice_make(c->qualifier, c->qualifier_len);
    for (size_t i = 0; i < sel->nquals[fam]; i++) {
        if (kslice_eq(sel->quals[fam][i], q))
            return 1;
    }
    return 0;
}

static void
store_row_new_column(store_row_state *st, const store_sel *sel, const kiln_cell *c)
{
    buf_reset(&st->qual);
    buf_append(&st->qual, c->qualifier, c->qualifier_len);
    st->have_qual = 1;
    st->qual_selected = st->family_selected && store_row_qual_selected(sel, st->family, c);
    st->col_del_ts = INT64_MIN;
    st->n_version_del = 0;
    st->versions = 0;
    st->have_prev = 0;
}

kiln_status
store_row_assemble(kiln_iter *it, const kiln_schema *s, const store_sel *sel,
                   store_row_buf *buf, store_row *out, kiln_err *err)
{
    buf_reset(&buf->bytes);
    buf->count = 0;
    const kiln_cell *c = kiln_iter_key(it);
    size_t row_len = c->row_len;
    size_t skip = s->salt_buckets > 0 ? 1 : 0;
    if (row_len < 2 * skip) {
        out->count = 0;
        return status_set(err, KILN_CORRUPTION,
                          "table %s: a stored row of %zu bytes in a salted table (at least 2)",
                          s->name, row_len);
    }
    buf_append(&buf->bytes, c->row, c->row_len);
    store_row_state *st = &buf->st;
    /* The family read last stays resolved from row to row (most rows start
     * with the same family); its row-scoped masking state starts afresh and
     * its request-dependent limits are recomputed for this request. */
    if (buf->last_schema != s || st->family >= s->family_count) {
        st->family = SIZE_MAX;
    } else {
        const schema_family *f = &s->families[st->family];
        st->fam_name = f->name;
        st->family_selected = store_row_sel_family(sel, st->family);
        st->max_versions = sel->max_versions < f->max_versions ? sel->max_versions
                                                               : f->max_versions;
    }
    st->family_del_ts = INT64_MIN;
    st->n_fam_version_del = 0;
    st->have_qual = 0;
    st->have_prev = 0;
    kiln_status rc = KILN_OK;
    while (kiln_iter_valid(it)) {
        c = kiln_iter_key(it);
        if (c->row_len != row_len ||
            (row_len > 0 && memcmp(c->row, buf->bytes.data, row_len) != 0))
            break;
        /* family change */
        if (st->family == SIZE_MAX || c->family_len != st->fam_len ||
            memcmp(c->family, st->fam_name, st->fam_len) != 0) {
            const schema_family *f = NULL;
            if (buf->last_schema == s && buf->last_family < s->family_count) {
                const schema_family *lf = &s->families[buf->last_family];
                if (strlen(lf->name) == c->family_len &&
                    memcmp(lf->name, c->family, c->family_len) == 0)
                    f = lf;
            }
            if (f == NULL)
                f = schema_find_family(s, c->family, c->family_len);
            if (f == NULL) {
                rc = status_set(err, KILN_CORRUPTION,
                                "table %s: an HFile cell names unknown family '%.*s'",
                                s->name, (int)c->family_len, (const char *)c->family);
                break;
            }
            st->family = (size_t)(f - s->families);
            st->fam_name = f->name;
            st->fam_len = c->family_len;
            buf->last_schema = s;
            buf->last_family = st->family;
            st->family_selected = store_row_sel_family(sel, st->family);
            st->ttl_ms = f->ttl_s >= SCHEMA_TTL_FOREVER ? 0 : f->ttl_s * 1000;
            st->max_versions = sel->max_versions < f->max_versions ? sel->max_versions
                                                                  : f->max_versions;
            st->family_del_ts = INT64_MIN;
            st->n_fam_version_del = 0;
            st->have_qual = 0;
        }
        if (!st->have_qual || c->qualifier_len != st->qual.len ||
            (st->qual.len > 0 && memcmp(c->qualifier, st->qual.data, st->qual.len) != 0))
            store_row_new_column(st, sel, c);
        /* an equal key from an older load (or repeated in one file) */
        int dup = st->have_prev && st->prev_ts == c->ts && st->prev_type == c->type;
        st->prev_ts = c->ts;
        st->prev_type = c->type;
        st->have_prev = 1;
        if (!dup) {
            switch (c->type) {
            case CELL_TYPE_DELETE_FAMILY:
                if (c->ts > st->family_del_ts)
                    st->family_del_ts = c->ts;
                break;
            case CELL_TYPE_DELETE_FAMILY_VERSION:
                store_row_ts_add(&st->fam_version_del, &st->n_fam_version_del,
                                 &st->cap_fam_version_del, c->ts);
                break;
            case CELL_TYPE_DELETE_COLUMN:
                if (c->ts > st->col_del_ts)
                    st->col_del_ts = c->ts;
                break;
            case CELL_TYPE_DELETE:
                store_row_ts_add(&st->version_del, &st->n_version_del, &st->cap_version_del, c->ts);
                break;
            case CELL_TYPE_PUT:
                if (!st->qual_selected || st->versions >= st->max_versions)
                    break;
                if (c->ts <= st->family_del_ts || c->ts <= st->col_del_ts ||
                    store_row_ts_in(st->fam_version_del, st->n_fam_version_del, c->ts) ||
                    store_row_ts_in(st->version_del, st->n_version_del, c->ts))
                    break;
                if (st->ttl_ms != 0 && c->ts < sel->now_ms - st->ttl_ms)
                    break;
                if (c->ts < sel->ts_min || c->ts >= sel->ts_max)
                    break;
                store_row_buf_add(buf, st->family, st->fam_len, c);
                st->versions++;
                break;
            default:
                break;   /* Minimum / Maximum never appear in files Kiln accepts */
            }
        }
        if (kiln_iter_next(it) != KILN_OK) {
            rc = kiln_iter_status(it, err);
            break;
        }
    }
    if (rc != KILN_OK) {
        out->count = 0;
        return rc;
    }
    store_row_buf_finish(buf, s, row_len, skip, out);
    return KILN_OK;
}
