/* index_output.c -- building secondary-index tables and salted row keys in
 * the job that writes a table (index_output.h): parsing -D kiln.index, the
 * index rows a row's cells complete, the gap keys they are shuffled under,
 * the partition boundaries of the index tables, and an output format that
 * writes gap records as the index tables' HFiles beside the job's own output.
 */
#include "jobs/index_output.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/cellkey.h"
#include "jobs/hfile_output.h"
#include "mapreduce/mr_counters.h"
#include "storage/hfile/cell.h"
#include "storage/base/env.h"
#include "storage/store/store_index_def.h"
#include "storage/store/store_salt.h"

#define INDEX_OUTPUT_GAP_LEN 3
#define INDEX_OUTPUT_HEAD 4           /* gap + index number */
#define INDEX_OUTPUT_DIR "_index"
#define INDEX_OUTPUT_SCHEMA "_schema"

static const uint8_t index_output_gap[INDEX_OUTPUT_GAP_LEN] = {0xFF, 0x00, 0x01};
static const uint8_t index_output_gap_end[INDEX_OUTPUT_GAP_LEN] = {0xFF, 0x00, 0x02};

typedef struct index_output_idx {
    store_index_def def;
    kiln_schema schema;          /* the index table's */
    hfile_output *out;           /* its one family */
    kbuf *vals;                  /* [def.ncols]: the current row's values */
    uint8_t *got;                /* [def.ncols] */
    size_t ngot;
    int64_t ts;                  /* newest timestamp among the values */
} index_output_idx;

struct index_output {
    mr_job *job;
    kiln_schema table;
    index_output_idx *idx;
    size_t n;
    const mr_output_format *inner;
    void *inner_arg;
    hfile_output *own;           /* the table's hfile_output made by setup */
    kbuf row;                    /* the row whose cells are being offered */
    int have_row;
    kbuf irow;                   /* scratch: index row key, salted key, record key */
    kbuf stored;
    kbuf key;
    int c_rows;
    int c_long;
};

void
index_output_free(index_output *o)
{
    if (o == NULL)
        return;
    for (size_t i = 0; i < o->n; i++) {
        index_output_idx *x = &o->idx[i];
        for (size_t k = 0; k < x->def.ncols; k++)
            buf_free(&x->vals[k]);
        free(x->vals);
        free(x->got);
        store_index_def_free(&x->def);
        schema_free(&x->schema);
        hfile_output_free(x->out);
    }
    free(o->idx);
    hfile_output_free(o->own);
    schema_free(&o->table);
    buf_free(&o->row);
    buf_free(&o->irow);
    buf_free(&o->stored);
    buf_free(&o->key);
    free(o);
}

size_t
index_output_count(const index_output *o)
{
    return o == NULL ? 0 : o->n;
}

/* One "NAME:cf:q,..." of the setting into o. */
static kiln_status
index_output_add(index_output *o, const char *spec, size_t len, kiln_err *err)
{
    char *tmp = kiln_malloc(len + 1);
    memcpy(tmp, spec, len);
    tmp[len] = '\0';
    store_index_def d;
    kiln_err e2;
    status_clear(&e2);
    kiln_status st = store_index_def_parse(tmp, &d, &e2);
    free(tmp);
    if (st != KILN_OK)
        return status_set(err, st, "%s: %s", INDEX_OUTPUT_CONF, e2.msg);
    for (size_t i = 0; i < o->n; i++) {
        if (strcmp(o->idx[i].def.name, d.name) == 0) {
            st = status_set(err, KILN_INVALID, "%s: index %s given twice", INDEX_OUTPUT_CONF,
                            d.name);
            store_index_def_free(&d);
            return st;
        }
    }
    if (o->n >= STORE_INDEX_MAX) {
        store_index_def_free(&d);
        return status_set(err, KILN_INVALID, "%s: more than %d indexes", INDEX_OUTPUT_CONF,
                          STORE_INDEX_MAX);
    }
    kiln_schema is;
    status_clear(&e2);
    if ((st = store_index_schema(&o->table, &d, &is, &e2)) != KILN_OK) {
        store_index_def_free(&d);
        return status_set(err, st, "%s: %s", INDEX_OUTPUT_CONF, e2.msg);
    }
    hfile_output *out;
    if ((st = hfile_output_new(o->job, is.families, 1, &out, err)) != KILN_OK) {
        store_index_def_free(&d);
        schema_free(&is);
        return st;
    }
    o->idx = kiln_realloc(o->idx, (o->n + 1) * sizeof *o->idx);
    index_output_idx *x = &o->idx[o->n++];
    memset(x, 0, sizeof *x);
    x->def = d;
    x->schema = is;
    x->out = out;
    x->vals = kiln_calloc(d.ncols, sizeof *x->vals);
    x->got = kiln_calloc(d.ncols, 1);
    return KILN_OK;
}

kiln_status
index_output_new(mr_job *job, const kiln_schema *table, const char *spec, index_output **out,
                 kiln_err *err)
{
    *out = NULL;
    index_output *o = kiln_calloc(1, sizeof *o);
    o->job = job;
    schema_copy(&o->table, table);
    o->c_rows = mr_job_counter(job, "Secondary Index", "Index rows");
    o->c_long = mr_job_counter(job, "Secondary Index", "Index rows too long (skipped)");
    kiln_status st = KILN_OK;
    for (const char *p = spec != NULL ? spec : ""; *p != '\0' && st == KILN_OK;) {
        const char *semi = strchr(p, ';');
        size_t len = semi ? (size_t)(semi - p) : strlen(p);
        if (len > 0)
            st = index_output_add(o, p, len, err);
        if (semi == NULL)
            break;
        p = semi + 1;
    }
    if (st != KILN_OK) {
        index_output_free(o);
        return st;
    }
    *out = o;
    return KILN_OK;
}

static kbuf *
index_output_push_key(kbuf **keys, size_t *n)
{
    *keys = kiln_realloc(*keys, (*n + 1) * sizeof **keys);
    kbuf *b = &(*keys)[(*n)++];
    buf_init(b);
    return b;
}

void
index_output_add_splits(const index_output *o, kbuf **keys, size_t *n)
{
    if (o == NULL || o->n == 0)
        return;
    for (size_t j = 0; j < o->n; j++) {
        const kiln_schema *s = &o->idx[j].schema;
        kbuf *b = index_output_push_key(keys, n);
        buf_append(b, index_output_gap, INDEX_OUTPUT_GAP_LEN);
        buf_append_u8(b, (uint8_t)j);
        for (size_t k = 0; k < s->split_count; k++) {
            b = index_output_push_key(keys, n);
            buf_append(b, index_output_gap, INDEX_OUTPUT_GAP_LEN);
            buf_append_u8(b, (uint8_t)j);
            cellkey_append_row(b, s->splits[k].data, s->splits[k].len);
        }
    }
    buf_append(index_output_push_key(keys, n), index_output_gap_end, INDEX_OUTPUT_GAP_LEN);
}

void
index_output_wrap(index_output *o, const mr_output_format *inner, void *inner_arg)
{
    o->inner = inner;
    o->inner_arg = inner_arg;
}

static int
index_output_kbuf_cmp(const void *a, const void *b)
{
    return kslice_cmp(buf_slice(a), buf_slice(b));
}

static void
index_output_report(mr_job *job, const index_output *o)
{
    kbuf j = KBUF_INIT;
    buf_append_u8(&j, '[');
    kbuf cols = KBUF_INIT;
    for (size_t i = 0; i < o->n; i++) {
        const index_output_idx *x = &o->idx[i];
        buf_append(&j, i > 0 ? ",{\"name\":" : "{\"name\":", i > 0 ? 9 : 8);
        mr_counters_json_string(&j, x->def.name, strlen(x->def.name));
        buf_append(&j, ",\"table\":", 9);
        mr_counters_json_string(&j, x->schema.name, strlen(x->schema.name));
        buf_reset(&cols);
        store_index_columns_format(&x->def, &cols);
        buf_append(&j, ",\"columns\":", 11);
        mr_counters_json_string(&j, (const char *)cols.data, cols.len);
        buf_append_u8(&j, '}');
    }
    buf_append_u8(&j, ']');
    buf_append_u8(&j, '\0');
    mr_job_report(job, "indexes", (const char *)j.data);
    buf_free(&cols);
    buf_free(&j);
}

kiln_status
index_output_attach(mr_job *job, const kiln_schema *table, kbuf **keys, size_t *nkeys,
                    const mr_output_format *inner, void *inner_arg, index_output **out,
                    kiln_err *err)
{
    *out = NULL;
    index_output *o;
    kiln_status st = index_output_new(job, table,
                                      mr_conf_get(mr_job_conf(job), INDEX_OUTPUT_CONF, NULL), &o,
                                      err);
    if (st != KILN_OK)
        return st;
    index_output_add_splits(o, keys, nkeys);
    index_output_wrap(o, inner, inner_arg);
    mr_job_set_output_format(job, &index_output_format, o);
    if (o->n > 0)
        index_output_report(job, o);
    *out = o;
    return KILN_OK;
}

kiln_status
index_output_setup(mr_job *job, const kiln_schema *table, const schema_family *families,
                   size_t n, index_output **out, kiln_err *err)
{
    *out = NULL;
    hfile_output *own;
    kiln_status st = hfile_output_new(job, families, n, &own, err);
    if (st != KILN_OK)
        return st;
    /* Region boundaries as the encoded lower bounds of their first rows,
     * then the index tables' in the gap. */
    kbuf *keys = NULL;
    size_t nk = 0;
    for (size_t i = 0; i < table->split_count; i++)
        cellkey_append_row(index_output_push_key(&keys, &nk), table->splits[i].data,
                           table->splits[i].len);
    index_output *o = NULL;
    st = index_output_attach(job, table, &keys, &nk, &hfile_output_format, own, &o, err);
    if (st != KILN_OK)
        hfile_output_free(own);
    else
        o->own = own;
    if (nk > 1)
        qsort(keys, nk, sizeof *keys, index_output_kbuf_cmp);
    kslice *sl = kiln_calloc(nk ? nk : 1, sizeof *sl);
    for (size_t i = 0; i < nk; i++)
        sl[i] = buf_slice(&keys[i]);
    if (st == KILN_OK)
        st = mr_job_set_split_keys(job, sl, nk, err);
    free(sl);
    for (size_t i = 0; i < nk; i++)
        buf_free(&keys[i]);
    free(keys);
    if (st != KILN_OK) {
        index_output_free(o);
        return st;
    }
    *out = o;
    return KILN_OK;
}

/* ------------------------------------------------------------------ keys */

kiln_status
index_output_row_key(const index_output *o, const uint8_t *row, size_t n, kbuf *out,
                     kiln_err *err)
{
    buf_reset(out);
    uint32_t salt = o != NULL ? o->table.salt_buckets : 0;
    if (n + (salt ? 1 : 0) > CELL_ROW_MAX)
        return status_set(err, KILN_INVALID, "row key of %zu bytes (at most %d%s)", n,
                          salt ? CELL_ROW_MAX - 1 : CELL_ROW_MAX,
                          salt ? " in a salted table" : "");
    if (salt)
        store_salt_key(out, salt, row, n);
    else
        buf_append(out, row, n);
    return KILN_OK;
}

int
index_output_owns(kslice key)
{
    return key.n >= INDEX_OUTPUT_HEAD && memcmp(key.p, index_output_gap, INDEX_OUTPUT_GAP_LEN) == 0;
}

/* Emit index x's row for o->row (every column offered). */
static kiln_status
index_output_emit(mr_task *t, index_output *o, size_t j, kiln_err *err)
{
    index_output_idx *x = &o->idx[j];
    kslice vals[STORE_INDEX_COLUMNS_MAX];
    for (size_t k = 0; k < x->def.ncols; k++)
        vals[k] = buf_slice(&x->vals[k]);
    buf_reset(&o->irow);
    store_index_key(&o->irow, vals, x->def.ncols, o->row.data, o->row.len);
    kiln_err e2;
    status_clear(&e2);
    if (index_output_row_key(o, o->irow.data, o->irow.len, &o->stored, &e2) != KILN_OK) {
        mr_task_count(t, o->c_long, 1);
        return KILN_OK;
    }
    kiln_cell c;
    memset(&c, 0, sizeof c);
    c.row = o->stored.data;
    c.row_len = (uint32_t)o->stored.len;
    c.family = (const uint8_t *)STORE_INDEX_FAMILY;
    c.family_len = (uint32_t)strlen(STORE_INDEX_FAMILY);
    c.qualifier = (const uint8_t *)"";
    c.ts = x->ts;
    c.type = CELL_TYPE_PUT;
    buf_reset(&o->key);
    buf_append(&o->key, index_output_gap, INDEX_OUTPUT_GAP_LEN);
    buf_append_u8(&o->key, (uint8_t)j);
    cellkey_append(&o->key, &c);
    mr_task_count(t, o->c_rows, 1);
    return mr_task_emit(t, buf_slice(&o->key), kslice_make("", 0), err);
}

kiln_status
index_output_put(mr_task *t, index_output *o, kslice row, kslice family, kslice qualifier,
                 int64_t ts, kslice value, kiln_err *err)
{
    if (o == NULL || o->n == 0)
        return KILN_OK;
    if (!o->have_row || !kslice_eq(row, buf_slice(&o->row))) {
        buf_reset(&o->row);
        buf_append(&o->row, row.p, row.n);
        o->have_row = 1;
        for (size_t j = 0; j < o->n; j++) {
            memset(o->idx[j].got, 0, o->idx[j].def.ncols);
            o->idx[j].ngot = 0;
        }
    }
    for (size_t j = 0; j < o->n; j++) {
        index_output_idx *x = &o->idx[j];
        int hit = 0;
        for (size_t k = 0; k < x->def.ncols; k++) {
            const store_index_column *col = &x->def.cols[k];
            if (!kslice_eq(family, kslice_str(col->family)) ||
                !kslice_eq(qualifier, buf_slice(&col->qualifier)))
                continue;
            if (x->ngot == 0 || ts > x->ts)
                x->ts = ts;
            buf_reset(&x->vals[k]);
            buf_append(&x->vals[k], value.p, value.n);
            if (!x->got[k]) {
                x->got[k] = 1;
                x->ngot++;
            }
            hit = 1;
        }
        if (hit && x->ngot == x->def.ncols) {
            kiln_status st = index_output_emit(t, o, j, err);
            if (st != KILN_OK)
                return st;
            memset(x->got, 0, x->def.ncols);
            x->ngot = 0;
        }
    }
    return KILN_OK;
}

kiln_status
index_output_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    kslice v;
    while (mr_task_next_value(values, &v))
        ;
    return mr_task_emit(t, key, kslice_make("", 0), err);
}

/* ------------------------------------------------------------------ format */

static kiln_status
index_output_dir(const char *dir, const index_output_idx *x, char *out, size_t cap,
                 kiln_err *err)
{
    if ((size_t)snprintf(out, cap, "%s/%s/%s", dir, INDEX_OUTPUT_DIR, x->def.name) >= cap)
        return status_set(err, KILN_INVALID, "%s: path too long", dir);
    return KILN_OK;
}

static kiln_status
index_output_prepare(void *arg, const char *dir, kiln_err *err)
{
    index_output *o = arg;
    kiln_status st = KILN_OK;
    if (o->inner->prepare != NULL)
        st = o->inner->prepare(o->inner_arg, dir, err);
    for (size_t j = 0; j < o->n && st == KILN_OK; j++) {
        char idir[PATH_MAX], p[PATH_MAX];
        if ((st = index_output_dir(dir, &o->idx[j], idir, sizeof idir, err)) != KILN_OK ||
            (st = env_mkdirs(idir, 0755, err)) != KILN_OK ||
            (st = hfile_output_format.prepare(o->idx[j].out, idir, err)) != KILN_OK)
            break;
        if ((size_t)snprintf(p, sizeof p, "%s/%s", idir, INDEX_OUTPUT_SCHEMA) >= sizeof p) {
            st = status_set(err, KILN_INVALID, "%s: path too long", idir);
            break;
        }
        kbuf rec = KBUF_INIT;
        schema_encode(&o->idx[j].schema, &rec);
        st = env_write_file_atomic(p, rec.data, rec.len, err);
        buf_free(&rec);
    }
    return st;
}

typedef struct index_output_part {
    index_output *o;
    char *dir;
    uint32_t part;
    void *inner;                 /* the job's writer for this partition */
    void **w;                    /* [o->n] index writers, NULL until their first row */
} index_output_part;

static kiln_status
index_output_open(void *arg, const char *dir, uint32_t partition, void **writer, kiln_err *err)
{
    index_output *o = arg;
    index_output_part *p = kiln_calloc(1, sizeof *p);
    p->o = o;
    p->dir = (char *)kiln_memdup(dir, strlen(dir) + 1);
    p->part = partition;
    p->w = kiln_calloc(o->n ? o->n : 1, sizeof *p->w);
    kiln_status st = o->inner->open(o->inner_arg, dir, partition, &p->inner, err);
    if (st != KILN_OK) {
        free(p->w);
        free(p->dir);
        free(p);
        return st;
    }
    *writer = p;
    return KILN_OK;
}

static kiln_status
index_output_write(void *writer, kslice key, kslice value, kiln_err *err)
{
    index_output_part *p = writer;
    index_output *o = p->o;
    if (!index_output_owns(key))
        return o->inner->write(p->inner, key, value, err);
    size_t j = key.p[INDEX_OUTPUT_GAP_LEN];
    if (j >= o->n)
        return status_set(err, KILN_CORRUPTION, "an index record for index %zu of %zu", j, o->n);
    if (p->w[j] == NULL) {
        char idir[PATH_MAX];
        kiln_status st = index_output_dir(p->dir, &o->idx[j], idir, sizeof idir, err);
        if (st == KILN_OK)
            st = hfile_output_format.open(o->idx[j].out, idir, p->part, &p->w[j], err);
        if (st != KILN_OK)
            return st;
    }
    return hfile_output_format.write(p->w[j], kslice_make(key.p + INDEX_OUTPUT_HEAD,
                                                          key.n - INDEX_OUTPUT_HEAD),
                                     value, err);
}

static void
index_output_part_free(index_output_part *p)
{
    free(p->w);
    free(p->dir);
    free(p);
}

static kiln_status
index_output_close(void *writer, uint64_t *bytes, kiln_err *err)
{
    index_output_part *p = writer;
    index_output *o = p->o;
    kiln_status st = o->inner->close(p->inner, bytes, err);
    for (size_t j = 0; j < o->n; j++) {
        if (p->w[j] == NULL)
            continue;
        if (st != KILN_OK)
            hfile_output_format.abort(p->w[j]);
        else
            st = hfile_output_format.close(p->w[j], bytes, err);
    }
    index_output_part_free(p);
    return st;
}

static void
index_output_abort(void *writer)
{
    index_output_part *p = writer;
    if (p == NULL)
        return;
    p->o->inner->abort(p->inner);
    for (size_t j = 0; j < p->o->n; j++) {
        if (p->w[j] != NULL)
            hfile_output_format.abort(p->w[j]);
    }
    index_output_part_free(p);
}

/* The wrapped format's commit, if it has one. */
static kiln_status
index_output_commit(void *arg, mr_job *job, const char *dir, kiln_err *err)
{
    index_output *o = arg;
    if (o->inner->commit == NULL)
        return KILN_OK;
    return o->inner->commit(o->inner_arg, job, dir, err);
}

const mr_output_format index_output_format = {
    "hfile+index", index_output_prepare, index_output_open, index_output_write,
    index_output_close, index_output_abort, index_output_commit,
};
