/* table_input.c -- the table and HFile input formats (table_input.h).
 *
 * Table splits, as planned on rank 0 and read by any rank:
 *
 *   FIELD    | SIZE | WHAT
 *   bucket   | 2    | be16: the salt bucket read, or 0xFFFF for every row
 *   lo       | var  | be32 length + user row: inclusive lower bound (empty: none)
 *   has_hi   | 1    | 1 when hi bounds the split
 *   hi       | var  | be32 length + user row: exclusive upper bound
 *
 * The meta bytes every rank gets are the pinned version (be64), the number
 * of splits planned (be32, for the report) and the table's canonical name.
 */
#include "jobs/table_input.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "storage/base/block_cache.h"
#include "storage/base/coding.h"
#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/query/filter.h"
#include "storage/query/shell_filter.h"
#include "storage/store/store_salt.h"
#include "storage/store/table.h"

#define TABLE_INPUT_CACHE_BYTES (64u << 20)
#define TABLE_INPUT_SPLIT_MB 256
#define TABLE_INPUT_NO_BUCKET 0xFFFF
#define TABLE_INPUT_COLUMNS_MAX 64


void
table_input_spec_init(table_input_spec *s)
{
    memset(s, 0, sizeof *s);
    buf_init(&s->start);
    buf_init(&s->stop);
    buf_init(&s->prefix);
    s->ts_min = INT64_MIN;
    s->ts_max = INT64_MAX;
}

void
table_input_spec_free(table_input_spec *s)
{
    buf_free(&s->start);
    buf_free(&s->stop);
    buf_free(&s->prefix);
    free(s->columns);
    free(s->filter);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------ arguments */

/* argv[*i] is `--name VALUE` or `--name=VALUE`: 1 with *value, advancing *i
 * past VALUE's word; 0 when argv[*i] is another option. */
static int
table_input_opt(const char *name, int argc, char **argv, int *i, const char **value,
                kiln_status *st, kiln_err *err)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        *st = status_set(err, KILN_INVALID, "%s needs a value", name);
        *value = NULL;
        return 1;
    }
    *value = argv[++*i];
    return 1;
}

static kiln_status
table_input_row_arg(const char *opt, const char *v, kbuf *out, kiln_err *err)
{
    buf_reset(out);
    if (cell_from_string_binary(out, v, strlen(v)) != 0)
        return status_set(err, KILN_INVALID, "%s: '%s' has a bad \\xNN escape", opt, v);
    return KILN_OK;
}

static kiln_status
table_input_i64_arg(const char *opt, const char *v, int64_t *out, kiln_err *err)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno != 0)
        return status_set(err, KILN_INVALID, "%s: '%s' is not a number", opt, v);
    *out = x;
    return KILN_OK;
}

kiln_status
table_input_set_table(table_input_spec *spec, const char *v, kiln_err *err)
{
    const char *at = strrchr(v, '@');
    size_t n = at ? (size_t)(at - v) : strlen(v);
    if (n == 0 || n >= sizeof spec->table)
        return status_set(err, KILN_INVALID, "--input-table: '%s' is not a table name", v);
    memcpy(spec->table, v, n);
    spec->table[n] = '\0';
    spec->version = 0;
    if (at != NULL) {
        int64_t ver;
        if (table_input_i64_arg("--input-table", at + 1, &ver, err) != KILN_OK || ver < 1)
            return status_set(err, KILN_INVALID, "--input-table: '%s': the version after @ must "
                              "be a number >= 1", v);
        spec->version = (uint64_t)ver;
    }
    spec->given = 1;
    return KILN_OK;
}

int
table_input_arg(table_input_spec *spec, int argc, char **argv, int *i, kiln_status *st,
                kiln_err *err)
{
    const char *v = NULL;
    *st = KILN_OK;
    if (strcmp(argv[*i], "--raw") == 0) {
        spec->raw = 1;
        return 1;
    }
    if (table_input_opt("--input-table", argc, argv, i, &v, st, err)) {
        if (*st == KILN_OK)
            *st = table_input_set_table(spec, v, err);
        return 1;
    }
    if (table_input_opt("--start-row", argc, argv, i, &v, st, err)) {
        if (*st == KILN_OK)
            *st = table_input_row_arg("--start-row", v, &spec->start, err);
        return 1;
    }
    if (table_input_opt("--stop-row", argc, argv, i, &v, st, err)) {
        if (*st == KILN_OK)
            *st = table_input_row_arg("--stop-row", v, &spec->stop, err);
        return 1;
    }
    if (table_input_opt("--prefix", argc, argv, i, &v, st, err)) {
        if (*st == KILN_OK)
            *st = table_input_row_arg("--prefix", v, &spec->prefix, err);
        return 1;
    }
    if (table_input_opt("--columns", argc, argv, i, &v, st, err)) {
        if (*st == KILN_OK) {
            free(spec->columns);
            spec->columns = (char *)kiln_memdup(v, strlen(v) + 1);
        }
        return 1;
    }
    if (table_input_opt("--starttime", argc, argv, i, &v, st, err)) {
        if (*st == KILN_OK)
            *st = table_input_i64_arg("--starttime", v, &spec->ts_min, err);
        return 1;
    }
    if (table_input_opt("--endtime", argc, argv, i, &v, st, err)) {
        if (*st == KILN_OK)
            *st = table_input_i64_arg("--endtime", v, &spec->ts_max, err);
        return 1;
    }
    if (table_input_opt("--versions", argc, argv, i, &v, st, err)) {
        int64_t n;
        if (*st == KILN_OK && table_input_i64_arg("--versions", v, &n, err) == KILN_OK &&
            (n < 1 || n > 1000000))
            *st = status_set(err, KILN_INVALID, "--versions: %s is not in [1, 1000000]", v);
        else if (*st == KILN_OK && err->code != KILN_OK)
            *st = err->code;
        else if (*st == KILN_OK)
            spec->versions = (uint32_t)n;
        return 1;
    }
    if (table_input_opt("--filter", argc, argv, i, &v, st, err)) {
        if (*st == KILN_OK) {
            free(spec->filter);
            spec->filter = (char *)kiln_memdup(v, strlen(v) + 1);
        }
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ table format */

typedef struct table_src {
    table_input_spec spec;
    char data_dir[4096];
    int64_t split_mb;
    store_column cols[TABLE_INPUT_COLUMNS_MAX];
    size_t ncols;
    kbuf colbuf;                 /* the columns' bytes */
    uint32_t nsplits;            /* plan: splits added */
    char report_key[32];         /* "input_table", then "input_table_2", ... */
    store_view *v;               /* the pinned version, from prepare (plan on rank 0) */
    block_cache *cache;
    kbuf filter_json;            /* --filter as the REST filter model; empty: none */
    char where[512];
} table_src;

typedef struct table_reader {
    table_src *src;
    store_scan *scan;            /* rows */
    kiln_iter *it;               /* raw: the stored cells */
    int32_t bucket;              /* -1 = unsalted */
    uint64_t consumed;           /* bytes of the cells read: progress */
    int done;
    store_row row;
    /* raw rows: the current row's cells, copied */
    kbuf arena;
    kiln_cell *cells;
    size_t ncells, cap;
    kbuf rowkey;
    int primed;                  /* raw: it is on the next row's first cell */
    filter *flt;                 /* this split's filter (PageFilter counts per split) */
    kiln_cell *fcells;           /* the cells that pass it */
    size_t fcap;
    int last;                    /* the filter said no later row can pass */
    char where[600];
} table_reader;

/* Parse "cf[:q],..." into src->cols; the bytes live in src->colbuf. */
static kiln_status
table_src_columns(table_src *src, kiln_err *err)
{
    const char *c = src->spec.columns;
    if (c == NULL || *c == '\0')
        return KILN_OK;
    buf_reset(&src->colbuf);
    /* every piece NUL-terminated in colbuf, so that family names are C strings */
    size_t offs[TABLE_INPUT_COLUMNS_MAX][3];
    const char *p = c;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0)
            return status_set(err, KILN_INVALID, "--columns: an empty column in '%s'", c);
        if (src->ncols == TABLE_INPUT_COLUMNS_MAX)
            return status_set(err, KILN_INVALID, "--columns: more than %d columns",
                              TABLE_INPUT_COLUMNS_MAX);
        const char *colon = memchr(p, ':', n);
        size_t fl = colon ? (size_t)(colon - p) : n;
        offs[src->ncols][0] = src->colbuf.len;
        buf_append(&src->colbuf, p, fl);
        buf_append_u8(&src->colbuf, 0);
        offs[src->ncols][1] = src->colbuf.len;
        if (colon) {
            kbuf q = KBUF_INIT;
            if (cell_from_string_binary(&q, colon + 1, n - fl - 1) != 0) {
                buf_free(&q);
                return status_set(err, KILN_INVALID, "--columns: bad \\xNN escape in '%.*s'",
                                  (int)n, p);
            }
            buf_append(&src->colbuf, q.data, q.len);
            offs[src->ncols][2] = q.len;
            buf_free(&q);
        } else {
            offs[src->ncols][2] = SIZE_MAX;
        }
        src->ncols++;
        p += n;
        if (*p == ',')
            p++;
    }
    for (size_t i = 0; i < src->ncols; i++) {
        src->cols[i].family = (const char *)src->colbuf.data + offs[i][0];
        src->cols[i].qualifier = offs[i][2] == SIZE_MAX ? NULL : src->colbuf.data + offs[i][1];
        src->cols[i].qualifier_len = offs[i][2] == SIZE_MAX ? 0 : offs[i][2];
    }
    return KILN_OK;
}

/* --filter: the shell filter text as the REST filter model, parsed once
 * here so that a bad filter fails the job in setup, naming the problem. */
static kiln_status
table_src_filter(table_src *src, kiln_err *err)
{
    if (src->spec.raw)
        return status_set(err, KILN_INVALID, "--filter applies to rows as a read returns them, not "
                          "to --raw cells");
    kiln_err e2;
    status_clear(&e2);
    kiln_status s = shell_filter_to_json(src->spec.filter, &src->filter_json, &e2);
    filter *f = NULL;
    if (s == KILN_OK)
        s = filter_parse((const char *)src->filter_json.data, src->filter_json.len, &f, &e2);
    filter_free(f);
    if (s != KILN_OK)
        return status_set(err, KILN_INVALID, "--filter: %s", e2.msg);
    return KILN_OK;
}

static void
table_src_scan_opts(const table_src *src, store_scan_opts *o)
{
    store_scan_opts_init(o);
    o->read.columns = src->ncols ? src->cols : NULL;
    o->read.column_count = src->ncols;
    o->read.max_versions = src->spec.versions;
    o->read.ts_min = src->spec.ts_min;
    o->read.ts_max = src->spec.ts_max;
    o->prefix = src->spec.prefix.data;
    o->prefix_len = src->spec.prefix.len;
}

/* Add the splits of a user key range [lo, hi) (hi_set = 0: unbounded) of
 * one bucket, intersected with the spec's [start, stop), cut at the sorted
 * rows cuts[0..n), sharing weight evenly. */
static void
table_plan_range(table_src *src, mr_input_plan *plan, int bucket, kslice lo, kslice hi,
                 int hi_set, const kslice *cuts, size_t n, uint64_t weight)
{
    kslice start = buf_slice(&src->spec.start), stop = buf_slice(&src->spec.stop);
    if (start.n > 0 && kslice_cmp(start, lo) > 0)
        lo = start;
    if (stop.n > 0 && (!hi_set || kslice_cmp(stop, hi) < 0)) {
        hi = stop;
        hi_set = 1;
    }
    if (hi_set && kslice_cmp(lo, hi) >= 0)
        return;
    /* the cuts strictly inside (lo, hi) */
    size_t first = 0, end = n;
    while (first < end && kslice_cmp(cuts[first], lo) <= 0)
        first++;
    while (end > first && hi_set && kslice_cmp(cuts[end - 1], hi) >= 0)
        end--;
    size_t pieces = end - first + 1;
    kbuf b = KBUF_INIT;
    for (size_t k = 0; k < pieces; k++) {
        kslice a = k == 0 ? lo : cuts[first + k - 1];
        int last = k + 1 == pieces;
        kslice z = last ? hi : cuts[first + k];
        buf_reset(&b);
        buf_append_be16(&b, bucket < 0 ? TABLE_INPUT_NO_BUCKET : (uint16_t)bucket);
        buf_append_be32(&b, (uint32_t)a.n);
        buf_append(&b, a.p, a.n);
        int zs = last ? hi_set : 1;
        buf_append_u8(&b, (uint8_t)zs);
        buf_append_be32(&b, zs ? (uint32_t)z.n : 0);
        if (zs)
            buf_append(&b, z.p, z.n);
        uint64_t w = weight / pieces + (k < weight % pieces ? 1 : 0);
        mr_input_plan_add(plan, buf_slice(&b), w);
        src->nsplits++;
    }
    buf_free(&b);
}

/* The cut rows of region r for a bucket (-1: unsalted), as user rows: the
 * block rows of r's largest file when r is over the split size. Appends to
 * keep (owning the bytes) and to *cuts. */
static kiln_status
table_plan_cuts(table_src *src, size_t r, uint64_t bytes, int bucket, kbuf *keep, kslice **cuts,
                size_t *n, kiln_err *err)
{
    uint64_t split = (uint64_t)src->split_mb << 20;
    *n = 0;
    if (bytes <= split)
        return KILN_OK;
    size_t want = (size_t)((bytes + split - 1) / split) - 1;
    if (want > 4096)
        want = 4096;
    size_t got;
    buf_reset(keep);
    /* evenly spaced blocks start at the first, whose row is the region's
     * start (dropped): ask for one more to get `want` cuts inside */
    kiln_status s = store_view_region_cut_rows(src->v, r, want + 1, keep, &got, err);
    if (s != KILN_OK)
        return s;
    *cuts = kiln_calloc(got ? got : 1, sizeof **cuts);
    for (size_t i = 0, off = 0; i < got; i++) {
        uint32_t len = coding_get_be32(keep->data + off);
        kslice row = kslice_make(keep->data + off + 4, len);
        off += 4 + len;
        if (bucket >= 0) {
            if (row.n < 2 || row.p[0] != (uint8_t)bucket)
                continue;
            row = kslice_make(row.p + 1, row.n - 1);
        }
        (*cuts)[(*n)++] = row;
    }
    return KILN_OK;
}

static kiln_status
table_open_pinned(table_src *src, uint64_t version, kiln_err *err)
{
    if (src->v != NULL)
        return KILN_OK;
    if (src->cache == NULL)
        src->cache = block_cache_new(TABLE_INPUT_CACHE_BYTES);
    kiln_status s = store_view_open_version(src->data_dir, src->spec.table, version, src->cache,
                                            &src->v, err);
    if (s != KILN_OK)
        return s;
    snprintf(src->where, sizeof src->where, "table %s@%" PRIu64, store_view_schema(src->v)->name,
             store_view_version(src->v));
    return KILN_OK;
}

static kiln_status
table_fmt_plan(void *arg, mr_job *job, mr_input_plan *plan, kiln_err *err)
{
    table_src *src = arg;
    kiln_status s = table_open_pinned(src, src->spec.version, err);
    if (s != KILN_OK)
        return s;
    store_view *v = src->v;
    const kiln_schema *sc = store_view_schema(v);
    /* the columns must name families of the table */
    for (size_t i = 0; i < src->ncols; i++)
        if (schema_find_family(sc, (const uint8_t *)src->cols[i].family,
                               strlen(src->cols[i].family)) == NULL)
            return status_set(err, KILN_INVALID, "--columns: table %s has no family '%s'",
                              sc->name, src->cols[i].family);
    uint64_t ver = store_view_version(v);
    kbuf *meta = mr_input_plan_meta(plan);
    buf_append_be64(meta, ver);
    buf_append_be32(meta, 0);   /* the split count, set below */
    buf_append(meta, sc->name, strlen(sc->name));
    uint32_t buckets = sc->salt_buckets;
    size_t nr = store_view_region_count(v);
    kbuf keep = KBUF_INIT;
    for (int b = buckets ? 0 : -1; b < (int)buckets && s == KILN_OK; b++) {
        for (size_t r = 0; r < nr && s == KILN_OK && ver > 0; r++) {
            kslice S = store_view_region_start(v, r), E = store_view_region_end(v, r);
            uint64_t bytes = store_view_region_bytes(v, r, NULL);
            kslice lo = kslice_make(NULL, 0), hi = kslice_make(NULL, 0);
            int hi_set = 0;
            if (b < 0) {
                lo = S;
                hi = E;
                hi_set = E.n > 0;
            } else {
                /* region [S, E) of stored keys against the bucket's [b, b+1) */
                if (S.n > 0 && S.p[0] > (uint8_t)b)
                    continue;
                if (E.n > 0 && (E.p[0] < (uint8_t)b || (E.p[0] == (uint8_t)b && E.n == 1)))
                    continue;
                if (S.n > 0 && S.p[0] == (uint8_t)b)
                    lo = kslice_make(S.p + 1, S.n - 1);
                if (E.n > 0 && E.p[0] == (uint8_t)b) {
                    hi = kslice_make(E.p + 1, E.n - 1);
                    hi_set = 1;
                }
                /* the region's bytes spread over the buckets it spans */
                uint32_t lb = S.n > 0 ? S.p[0] : 0;
                uint32_t hb = E.n > 0 ? E.p[0] : buckets - 1;
                if (hb >= buckets)
                    hb = buckets - 1;
                bytes /= (hb >= lb ? hb - lb + 1 : 1);
            }
            kslice *cuts = NULL;
            size_t n = 0;
            s = table_plan_cuts(src, r, bytes, b, &keep, &cuts, &n, err);
            if (s == KILN_OK)
                table_plan_range(src, plan, b, lo, hi, hi_set, cuts, n, bytes);
            free(cuts);
        }
    }
    buf_free(&keep);
    coding_put_be32(meta->data + 8, src->nsplits);
    return s;
}

static kiln_status
table_fmt_prepare(void *arg, mr_job *job, kslice meta, kiln_err *err)
{
    table_src *src = arg;
    uint64_t ver = coding_get_be64(meta.p);
    if (src->v != NULL && store_view_version(src->v) != ver) {
        store_view_unref(src->v);
        src->v = NULL;
    }
    kiln_status s = KILN_OK;
    if (ver > 0)
        s = table_open_pinned(src, ver, err);
    if (s == KILN_OK) {   /* every rank: the report is part of the description */
        char rep[512];
        snprintf(rep, sizeof rep, "{\"table\":\"%.*s\",\"version\":%" PRIu64 ",\"raw\":%s,"
                 "\"splits\":%" PRIu32 "}", (int)(meta.n - 12), (const char *)meta.p + 12, ver,
                 src->spec.raw ? "true" : "false", coding_get_be32(meta.p + 8));
        mr_job_report(job, src->report_key, rep);
        if (src->spec.on_pin != NULL)
            src->spec.on_pin(src->spec.on_pin_arg, src->v, ver);
    }
    return s;
}

static kiln_status
table_fmt_open(void *arg, kslice split, void **out, kiln_err *err)
{
    table_src *src = arg;
    *out = NULL;
    const uint8_t *p = split.p;
    uint16_t bucket = coding_get_be16(p);
    uint32_t ll = coding_get_be32(p + 2);
    kslice lo = kslice_make(p + 6, ll);
    int hi_set = p[6 + ll];
    uint32_t hl = coding_get_be32(p + 7 + ll);
    kslice hi = kslice_make(p + 11 + ll, hl);
    table_reader *r = kiln_calloc(1, sizeof *r);
    r->src = src;
    if (src->filter_json.len > 0 &&
        filter_parse((const char *)src->filter_json.data, src->filter_json.len, &r->flt, err) !=
            KILN_OK) {
        free(r);
        return err->code;
    }
    r->bucket = bucket == TABLE_INPUT_NO_BUCKET ? -1 : bucket;
    buf_init(&r->arena);
    buf_init(&r->rowkey);
    kbuf plo = KBUF_INIT, phi = KBUF_INIT;
    cell_to_string_binary(&plo, lo.p, lo.n);
    buf_append_u8(&plo, 0);
    cell_to_string_binary(&phi, hi.p, hi.n);
    buf_append_u8(&phi, 0);
    char bk[32] = "";
    if (r->bucket >= 0)
        snprintf(bk, sizeof bk, " bucket %d", r->bucket);
    snprintf(r->where, sizeof r->where, "%s%s rows [%s, %s)", src->where, bk,
             lo.n ? (char *)plo.data : "", hi_set ? (char *)phi.data : "");
    buf_free(&plo);
    buf_free(&phi);
    if (src->v == NULL) {   /* nothing published */
        r->done = 1;
        *out = r;
        return KILN_OK;
    }
    store_scan_opts o;
    table_src_scan_opts(src, &o);
    o.start = lo.p;
    o.start_len = lo.n;
    if (hi_set) {
        o.stop = hi.p;
        o.stop_len = hi.n;
        if (hi.n == 0)
            r->done = 1;   /* [lo, "") with a set bound: empty */
    }
    if (r->bucket >= 0) {
        o.one_bucket = 1;
        o.bucket = (uint32_t)r->bucket;
    }
    kiln_status s = src->spec.raw ? store_view_iter_open(src->v, &o, &r->it, err)
                                  : store_scan_open(src->v, &o, &r->scan, err);
    if (s == KILN_OK && r->it != NULL) {
        kiln_iter_seek_first(r->it);
        r->primed = 1;
    }
    if (s != KILN_OK) {
        buf_free(&r->arena);
        buf_free(&r->rowkey);
        free(r);
        return s;
    }
    *out = r;
    return KILN_OK;
}

/* Raw reading: copy the cells of the row the iterator is on into the
 * reader (the bucket byte of a salted table's rows dropped); leave the
 * iterator on the next row's first cell. */
static int
table_read_raw_row(table_reader *r, kiln_err *err)
{
    kiln_iter *it = r->it;
    if (!kiln_iter_valid(it)) {
        if (kiln_iter_status(it, err) != KILN_OK)
            return -1;
        return 0;
    }
    const table_src *src = r->src;
    size_t skip = r->bucket >= 0 ? 1 : 0;
    const kiln_cell *c = kiln_iter_key(it);
    buf_reset(&r->rowkey);
    buf_append(&r->rowkey, c->row + skip, c->row_len - skip);
    buf_reset(&r->arena);
    r->ncells = 0;
    size_t *offs = NULL;
    size_t ocap = 0;
    while (kiln_iter_valid(it)) {
        c = kiln_iter_key(it);
        if (c->row_len - skip != r->rowkey.len ||
            memcmp(c->row + skip, r->rowkey.data, r->rowkey.len) != 0)
            break;
        if (c->ts >= src->spec.ts_min && c->ts < src->spec.ts_max) {
            if (r->ncells == r->cap) {
                r->cap = r->cap ? 2 * r->cap : 16;
                r->cells = kiln_realloc(r->cells, r->cap * sizeof *r->cells);
            }
            if (r->ncells >= ocap) {
                ocap = ocap ? 2 * ocap : 16;
                offs = kiln_realloc(offs, ocap * 3 * sizeof *offs);
            }
            kiln_cell *d = &r->cells[r->ncells];
            *d = *c;
            d->tags = NULL;
            d->tags_len = 0;
            offs[3 * r->ncells] = r->arena.len;
            buf_append(&r->arena, c->family, c->family_len);
            offs[3 * r->ncells + 1] = r->arena.len;
            buf_append(&r->arena, c->qualifier, c->qualifier_len);
            offs[3 * r->ncells + 2] = r->arena.len;
            buf_append(&r->arena, c->value, c->value_len);
            r->consumed += c->row_len + c->family_len + c->qualifier_len + c->value_len + 12;
            r->ncells++;
        }
        kiln_iter_next(it);
    }
    for (size_t i = 0; i < r->ncells; i++) {
        kiln_cell *d = &r->cells[i];
        d->row = r->rowkey.data;
        d->row_len = (uint32_t)r->rowkey.len;
        d->family = r->arena.data + offs[3 * i];
        d->qualifier = r->arena.data + offs[3 * i + 1];
        d->value = r->arena.data + offs[3 * i + 2];
    }
    free(offs);
    if (kiln_iter_status(it, err) != KILN_OK)
        return -1;
    return 1;
}

static int
table_fmt_next(void *reader, kslice *record, const void **object, kiln_err *err)
{
    table_reader *r = reader;
    *object = NULL;
    while (!r->done) {
        if (r->it != NULL) {
            int got = table_read_raw_row(r, err);
            if (got <= 0) {
                r->done = 1;
                return got;
            }
            if (r->ncells == 0)
                continue;   /* every cell outside the time range */
            r->row.row = buf_slice(&r->rowkey);
            r->row.cells = r->cells;
            r->row.count = r->ncells;
        } else {
            int has = 0;
            if (store_scan_next(r->scan, &r->row, &has, err) != KILN_OK)
                return -1;
            if (!has) {
                kslice resume;
                if (store_scan_yielded(r->scan, &resume))
                    continue;
                r->done = 1;
                return 0;
            }
            for (size_t i = 0; i < r->row.count; i++) {
                const kiln_cell *c = &r->row.cells[i];
                r->consumed += c->row_len + c->family_len + c->qualifier_len + c->value_len + 12;
            }
            if (r->flt != NULL) {
                if (r->row.count > r->fcap) {
                    r->fcap = r->row.count;
                    r->fcells = kiln_realloc(r->fcells, r->fcap * sizeof *r->fcells);
                }
                int done = 0;
                size_t n = filter_row(r->flt, &r->row, r->fcells, &done);
                if (done)
                    r->done = 1;   /* after this row, if it passed */
                if (n == 0)
                    continue;
                r->row.cells = r->fcells;
                r->row.count = n;
            }
        }
        *record = r->row.row;
        *object = &r->row;
        return 1;
    }
    return 0;
}

static uint64_t
table_fmt_progress(void *reader)
{
    return ((const table_reader *)reader)->consumed;
}

static const char *
table_fmt_where(void *reader)
{
    return ((table_reader *)reader)->where;
}

static void
table_fmt_close(void *reader)
{
    table_reader *r = reader;
    if (r == NULL)
        return;
    store_scan_close(r->scan);
    if (r->it != NULL)
        kiln_iter_close(r->it);
    filter_free(r->flt);
    free(r->fcells);
    buf_free(&r->arena);
    buf_free(&r->rowkey);
    free(r->cells);
    free(r);
}

static void
table_fmt_finish(void *arg)
{
    table_src *src = arg;
    store_view_unref(src->v);
    block_cache_free(src->cache);
    table_input_spec_free(&src->spec);
    buf_free(&src->colbuf);
    buf_free(&src->filter_json);
    free(src);
}

static const mr_input_format table_input_format = {
    .name = "table",
    .plan = table_fmt_plan,
    .prepare = table_fmt_prepare,
    .open = table_fmt_open,
    .next = table_fmt_next,
    .progress = table_fmt_progress,
    .where = table_fmt_where,
    .close = table_fmt_close,
    .finish = table_fmt_finish,
};

kiln_status
table_input_add(mr_job *job, const table_input_spec *spec, mr_map_fn map, kiln_err *err)
{
    if (!spec->given || spec->table[0] == '\0')
        return status_set(err, KILN_INVALID, "no --input-table given");
    if (spec->ts_min >= spec->ts_max)
        return status_set(err, KILN_INVALID, "--starttime %" PRId64 " is not below --endtime %" PRId64,
                          spec->ts_min, spec->ts_max);
    table_src *src = kiln_calloc(1, sizeof *src);
    table_input_spec_init(&src->spec);
    memcpy(src->spec.table, spec->table, sizeof src->spec.table);
    src->spec.version = spec->version;
    buf_append(&src->spec.start, spec->start.data, spec->start.len);
    buf_append(&src->spec.stop, spec->stop.data, spec->stop.len);
    buf_append(&src->spec.prefix, spec->prefix.data, spec->prefix.len);
    src->spec.columns = spec->columns ? (char *)kiln_memdup(spec->columns, strlen(spec->columns) + 1)
                                      : NULL;
    src->spec.filter = spec->filter ? (char *)kiln_memdup(spec->filter, strlen(spec->filter) + 1)
                                    : NULL;
    src->spec.ts_min = spec->ts_min;
    src->spec.ts_max = spec->ts_max;
    src->spec.versions = spec->versions;
    src->spec.raw = spec->raw;
    src->spec.given = 1;
    src->spec.on_pin = spec->on_pin;
    src->spec.on_pin_arg = spec->on_pin_arg;
    buf_init(&src->colbuf);
    const char *dd = spec->data_dir ? spec->data_dir : getenv("KILN_DATA");
    snprintf(src->data_dir, sizeof src->data_dir, "%s", dd && *dd ? dd : "kiln-data");
    buf_init(&src->filter_json);
    /* the job must fail in setup, not on a rank, for a bad option */
    kiln_status s = table_src_columns(src, err);
    if (s == KILN_OK && src->spec.filter != NULL)
        s = table_src_filter(src, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(mr_job_conf(job), "kiln.table.split.mb", TABLE_INPUT_SPLIT_MB,
                             &src->split_mb, err);
    if (s == KILN_OK && (src->split_mb < 1 || src->split_mb > (1 << 20)))
        s = status_set(err, KILN_INVALID, "kiln.table.split.mb: %" PRId64 " is not in [1, 1048576]",
                       (int64_t)src->split_mb);
    if (s != KILN_OK) {
        table_fmt_finish(src);
        return s;
    }
    /* the selection decides the output: it joins the job's description */
    char head[512];
    snprintf(head, sizeof head, "%s@%" PRIu64 " ts=[%" PRId64 ",%" PRId64 ") v=%u raw=%d",
             src->spec.table, src->spec.version, src->spec.ts_min, src->spec.ts_max,
             src->spec.versions, src->spec.raw);
    kbuf d = KBUF_INIT;
    buf_append(&d, head, strlen(head));
    const kbuf *rows[3] = {&src->spec.start, &src->spec.stop, &src->spec.prefix};
    for (int k = 0; k < 3; k++) {
        buf_append_be32(&d, (uint32_t)rows[k]->len);
        buf_append(&d, rows[k]->data, rows[k]->len);
    }
    const char *texts[2] = {src->spec.columns, src->spec.filter};
    for (int k = 0; k < 2; k++) {
        size_t n = texts[k] ? strlen(texts[k]) : 0;
        buf_append_be32(&d, (uint32_t)n);
        buf_append(&d, texts[k], n);
    }
    mr_job_describe(job, "input table", buf_slice(&d));
    buf_free(&d);
    size_t nth = mr_job_input_format_count(job) + 1;
    if (nth == 1)
        snprintf(src->report_key, sizeof src->report_key, "input_table");
    else
        snprintf(src->report_key, sizeof src->report_key, "input_table_%zu", nth);
    mr_job_add_input_format(job, &table_input_format, src, map);
    return KILN_OK;
}

/* ------------------------------------------------------------------ HFile format */

typedef struct hfile_src {
    char *path;
} hfile_src;

typedef struct hfile_rd {
    hfile_reader *rd;
    hfile_iter *it;
    int done;
    uint64_t size, consumed;
    store_row row;
    kbuf arena, rowkey;
    kiln_cell *cells;
    size_t ncells, cap;
    size_t *offs;
    size_t ocap;
} hfile_rd;

static int
hfile_name_hidden(const char *name)
{
    return name[0] == '_' || name[0] == '.';
}

/* List the regular files under path (recursively), in byte order. */
static kiln_status
hfile_list(const char *path, char ***out, size_t *n_out, kiln_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return status_set(err, KILN_NOT_FOUND, "%s: %s", path, strerror(errno));
    if (S_ISREG(st.st_mode)) {
        *out = kiln_realloc(*out, (*n_out + 1) * sizeof **out);
        (*out)[(*n_out)++] = (char *)kiln_memdup(path, strlen(path) + 1);
        return KILN_OK;
    }
    if (!S_ISDIR(st.st_mode))
        return status_set(err, KILN_INVALID, "%s: neither a file nor a directory", path);
    struct dirent **ents;
    int k = scandir(path, &ents, NULL, alphasort);
    if (k < 0)
        return status_set(err, KILN_IO, "%s: %s", path, strerror(errno));
    kiln_status s = KILN_OK;
    for (int i = 0; i < k; i++) {
        if (s == KILN_OK && !hfile_name_hidden(ents[i]->d_name)) {
            size_t n = strlen(path) + strlen(ents[i]->d_name) + 2;
            char *p = kiln_calloc(1, n);
            snprintf(p, n, "%s/%s", path, ents[i]->d_name);
            s = hfile_list(p, out, n_out, err);
            free(p);
        }
        free(ents[i]);
    }
    free(ents);
    return s;
}

static kiln_status
hfile_fmt_plan(void *arg, mr_job *job, mr_input_plan *plan, kiln_err *err)
{
    hfile_src *src = arg;
    char **files = NULL;
    size_t n = 0;
    kiln_status s = hfile_list(src->path, &files, &n, err);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (s == KILN_OK && stat(files[i], &st) == 0)
            mr_input_plan_add(plan, kslice_str(files[i]), (uint64_t)st.st_size);
        free(files[i]);
    }
    free(files);
    if (s == KILN_OK && n == 0)
        s = status_set(err, KILN_NOT_FOUND, "%s: no HFiles", src->path);
    return s;
}

static kiln_status
hfile_fmt_open(void *arg, kslice split, void **out, kiln_err *err)
{
    *out = NULL;
    char *path = kiln_calloc(1, split.n + 1);
    memcpy(path, split.p, split.n);
    hfile_rd *r = kiln_calloc(1, sizeof *r);
    buf_init(&r->arena);
    buf_init(&r->rowkey);
    kiln_status s = hfile_reader_open(path, NULL, &r->rd, err);
    free(path);
    if (s == KILN_OK) {
        r->size = hfile_reader_file_size(r->rd);
        r->it = hfile_iter_new(r->rd);
        s = hfile_iter_seek_first(r->it, err);
    }
    if (s != KILN_OK) {
        hfile_iter_free(r->it);
        hfile_reader_close(r->rd);
        free(r);
        return s;
    }
    *out = r;
    return KILN_OK;
}

static int
hfile_fmt_next(void *reader, kslice *record, const void **object, kiln_err *err)
{
    hfile_rd *r = reader;
    *object = NULL;
    if (r->done || !hfile_iter_valid(r->it)) {
        r->done = 1;
        return 0;
    }
    const kiln_cell *c = hfile_iter_cell(r->it);
    buf_reset(&r->rowkey);
    buf_append(&r->rowkey, c->row, c->row_len);
    buf_reset(&r->arena);
    r->ncells = 0;
    while (hfile_iter_valid(r->it)) {
        c = hfile_iter_cell(r->it);
        if (c->row_len != r->rowkey.len || memcmp(c->row, r->rowkey.data, c->row_len) != 0)
            break;
        if (r->ncells == r->cap) {
            r->cap = r->cap ? 2 * r->cap : 16;
            r->cells = kiln_realloc(r->cells, r->cap * sizeof *r->cells);
            r->offs = kiln_realloc(r->offs, r->cap * 4 * sizeof *r->offs);
        }
        kiln_cell *d = &r->cells[r->ncells];
        *d = *c;
        size_t *o = &r->offs[4 * r->ncells];
        o[0] = r->arena.len;
        buf_append(&r->arena, c->family, c->family_len);
        o[1] = r->arena.len;
        buf_append(&r->arena, c->qualifier, c->qualifier_len);
        o[2] = r->arena.len;
        buf_append(&r->arena, c->value, c->value_len);
        o[3] = r->arena.len;
        buf_append(&r->arena, c->tags, c->tags_len);
        r->consumed += c->row_len + c->family_len + c->qualifier_len + c->value_len + 12;
        r->ncells++;
        if (hfile_iter_next(r->it, err) != KILN_OK)
            return -1;
    }
    for (size_t i = 0; i < r->ncells; i++) {
        kiln_cell *d = &r->cells[i];
        const size_t *o = &r->offs[4 * i];
        d->row = r->rowkey.data;
        d->row_len = (uint32_t)r->rowkey.len;
        d->family = r->arena.data + o[0];
        d->qualifier = r->arena.data + o[1];
        d->value = r->arena.data + o[2];
        d->tags = d->tags_len ? r->arena.data + o[3] : NULL;
    }
    r->row.row = buf_slice(&r->rowkey);
    r->row.cells = r->cells;
    r->row.count = r->ncells;
    *record = r->row.row;
    *object = &r->row;
    return 1;
}

static uint64_t
hfile_fmt_progress(void *reader)
{
    const hfile_rd *r = reader;
    if (r->done)
        return r->size;
    return r->consumed < r->size ? r->consumed : r->size;
}

static uint64_t
hfile_fmt_bytes_read(void *reader)
{
    return ((hfile_rd *)reader)->size;
}

static const char *
hfile_fmt_where(void *reader)
{
    return hfile_reader_path(((hfile_rd *)reader)->rd);
}

static void
hfile_fmt_close(void *reader)
{
    hfile_rd *r = reader;
    if (r == NULL)
        return;
    hfile_iter_free(r->it);
    hfile_reader_close(r->rd);
    buf_free(&r->arena);
    buf_free(&r->rowkey);
    free(r->cells);
    free(r->offs);
    free(r);
}

static void
hfile_fmt_finish(void *arg)
{
    hfile_src *src = arg;
    free(src->path);
    free(src);
}

static const mr_input_format hfile_input_format = {
    .name = "hfile",
    .plan = hfile_fmt_plan,
    .open = hfile_fmt_open,
    .next = hfile_fmt_next,
    .progress = hfile_fmt_progress,
    .bytes_read = hfile_fmt_bytes_read,
    .where = hfile_fmt_where,
    .close = hfile_fmt_close,
    .finish = hfile_fmt_finish,
};

void
hfile_input_add(mr_job *job, const char *path, mr_map_fn map)
{
    hfile_src *src = kiln_calloc(1, sizeof *src);
    src->path = (char *)kiln_memdup(path, strlen(path) + 1);
    mr_job_describe(job, "input hfiles", kslice_str(path));
    mr_job_add_input_format(job, &hfile_input_format, src, map);
}

/* ------------------------------------------------------------------ map side */

const store_row *
table_input_row(const mr_task *t)
{
    const char *f = mr_task_input_format(t);
    if (strcmp(f, "table") != 0 && strcmp(f, "hfile") != 0)
        return NULL;
    return mr_task_input_object(t);
}
