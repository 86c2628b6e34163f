/* view_common.c -- tables, group records, the several-table HFile output
 * and field parsing for the view jobs (view_common.h).
 *
 * The output format wraps one hfile_output per table: a record's first byte
 * names its table, the rest is the cellkey the table's writer takes. A
 * partition opens a table's writer when the table's first cell arrives, so a
 * partition holding one table's rows leaves no empty files in the others.
 */
#include "jobs/view_common.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobs/cellkey.h"
#include "jobs/hfile_output.h"
#include "jobs/index_output.h"
#include "jobs/jobs_args.h"
#include "mapreduce/mr_counters.h"
#include "storage/hfile/cell.h"
#include "storage/base/coding.h"
#include "storage/base/env.h"
#include "storage/store/schema.h"
#include "storage/store/store_salt.h"
#include "storage/store/table.h"

#define VIEW_SUCCESS_FILE "_SUCCESS"   /* written last by the engine's commit */
#define VIEW_REPORT_FILE "_job.json"

typedef struct view_table {
    char *layout;                               /* NULL: top of the output */
    char name[SCHEMA_NAME_MAX + 1];             /* canonical */
    char *families[VIEW_FAMILIES_MAX];
    size_t nfam;
    int exists;                                 /* found in the data directory */
    uint32_t salt;                              /* its salt_buckets (0: unsalted) */
    kiln_schema schema;                         /* when it exists: for the indexes */
    hfile_output *out;
} view_table;

struct view {
    mr_job *job;
    char *name;
    view_table tables[VIEW_TABLES_MAX];
    size_t ntables;
    const char *data_dir;
    const char *output;
    size_t inputs;
    int skip_bad;
    uint64_t logged;
    int c_bad;
    int c_dups;
    index_output *ix;                           /* -D kiln.index, NULL without */
    size_t ix_table;                            /* the table it indexes */
    kbuf key;                                   /* scratch for emits */
    kbuf value;
    kbuf stored;                                /* scratch: a salted row */
};

view *
view_new(mr_job *job, const char *name)
{
    view *v = kiln_calloc(1, sizeof *v);
    v->job = job;
    v->name = (char *)kiln_memdup(name, strlen(name) + 1);
    v->skip_bad = 1;
    const char *d = getenv("KILN_DATA");
    v->data_dir = d != NULL && *d != '\0' ? d : "./kiln-data";
    buf_init(&v->key);
    buf_init(&v->value);
    buf_init(&v->stored);
    v->c_bad = mr_job_counter(job, name, "Bad Lines");
    v->c_dups = mr_job_counter(job, name, "Duplicate rows (last line kept)");
    return v;
}

void
view_free(view *v)
{
    if (v == NULL)
        return;
    for (size_t i = 0; i < v->ntables; i++) {
        view_table *t = &v->tables[i];
        free(t->layout);
        for (size_t f = 0; f < t->nfam; f++)
            free(t->families[f]);
        hfile_output_free(t->out);
        schema_free(&t->schema);
    }
    index_output_free(v->ix);
    buf_free(&v->key);
    buf_free(&v->value);
    buf_free(&v->stored);
    free(v->name);
    free(v);
}

kiln_status
view_add_table(view *v, const char *layout, const char *table, const char *families,
               size_t *index, kiln_err *err)
{
    if (v->ntables == VIEW_TABLES_MAX)
        return status_set(err, KILN_INVALID, "%s: more than %d tables", v->name, VIEW_TABLES_MAX);
    view_table *t = &v->tables[v->ntables];
    memset(t, 0, sizeof *t);
    schema_init(&t->schema);
    kiln_status s = schema_name_canon(table, t->name, err);
    if (s != KILN_OK)
        return s;
    for (size_t i = 0; i < v->ntables; i++)
        if (strcmp(v->tables[i].name, t->name) == 0)
            return status_set(err, KILN_INVALID, "%s: table %s given for two layouts", v->name,
                              t->name);
    const char *p = families;
    while (*p != '\0') {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (t->nfam == VIEW_FAMILIES_MAX || !schema_family_name_ok(p, len))
            return status_set(err, KILN_INTERNAL, "%s: bad family list '%s'", v->name, families);
        t->families[t->nfam] = kiln_malloc(len + 1);
        memcpy(t->families[t->nfam], p, len);
        t->families[t->nfam][len] = '\0';
        t->nfam++;
        p = end != NULL ? end + 1 : p + len;
    }
    t->layout = layout != NULL ? (char *)kiln_memdup(layout, strlen(layout) + 1) : NULL;
    *index = v->ntables++;
    return KILN_OK;
}

int
view_common_arg(view *v, int argc, char **argv, int *i, kiln_status *s, kiln_err *err)
{
    const char *a = argv[*i];
    if (strcmp(a, "--input") == 0) {
        *s = jobs_take_inputs(v->job, argc, argv, i, err);
        v->inputs++;
        return 1;
    }
    if (strcmp(a, "--output") == 0) {
        *s = jobs_take_value(argc, argv, i, &v->output, err);
        return 1;
    }
    if (strcmp(a, "--data") == 0) {
        *s = jobs_take_value(argc, argv, i, &v->data_dir, err);
        return 1;
    }
    return 0;
}

void
view_add_input(view *v, const char *path)
{
    mr_job_add_input(v->job, path);
    v->inputs++;
}

kiln_status
view_add_table_input(view *v, table_input_spec *spec, mr_map_fn map, kiln_err *err)
{
    if (spec->data_dir == NULL)
        spec->data_dir = v->data_dir;
    kiln_status s = table_input_add(v->job, spec, map, err);
    if (s == KILN_OK)
        v->inputs++;
    return s;
}

const char *
view_data_dir(const view *v)
{
    return v->data_dir;
}

/* ------------------------------------------------------------------ output format */

/* The directory of table t under the output directory dir. */
static kiln_status
view_table_dir(const view_table *t, const char *dir, char *out, size_t cap, kiln_err *err)
{
    int n = t->layout != NULL ? snprintf(out, cap, "%s/%s", dir, t->layout)
                              : snprintf(out, cap, "%s", dir);
    if (n < 0 || (size_t)n >= cap)
        return status_set(err, KILN_INVALID, "%s: path too long", dir);
    return KILN_OK;
}

/* A link in a layout's directory to the job's own file of the same name in
 * the output's top level. */
static kiln_status
view_link_up(const char *dir, const char *name, kiln_err *err)
{
    char path[PATH_MAX], target[64];
    snprintf(target, sizeof target, "../%s", name);
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return status_set(err, KILN_INVALID, "%s: path too long", dir);
    if (symlink(target, path) != 0)
        return status_set_errno(err, errno, "%s: symlink", path);
    return KILN_OK;
}

static kiln_status
view_output_prepare(void *arg, const char *dir, kiln_err *err)
{
    view *v = arg;
    for (size_t i = 0; i < v->ntables; i++) {
        view_table *t = &v->tables[i];
        char path[PATH_MAX];
        kiln_status s = view_table_dir(t, dir, path, sizeof path, err);
        if (s == KILN_OK)
            s = env_mkdirs(path, 0755, err);
        if (s == KILN_OK)
            s = hfile_output_format.prepare(t->out, path, err);
        if (s == KILN_OK && t->layout != NULL)
            s = view_link_up(path, VIEW_SUCCESS_FILE, err);
        if (s == KILN_OK && t->layout != NULL)
            s = view_link_up(path, VIEW_REPORT_FILE, err);
        if (s != KILN_OK)
            return s;
    }
    return KILN_OK;
}

typedef struct view_part {
    view *v;
    char *dir;
    uint32_t part;
    void *w[VIEW_TABLES_MAX];   /* the tables' hfile_output writers, NULL until used */
} view_part;

static kiln_status
view_output_open(void *arg, const char *dir, uint32_t partition, void **writer, kiln_err *err)
{
    view_part *p = kiln_calloc(1, sizeof *p);
    p->v = arg;
    p->dir = (char *)kiln_memdup(dir, strlen(dir) + 1);
    p->part = partition;
    *writer = p;
    return KILN_OK;
}

static kiln_status
view_output_write(void *writer, kslice key, kslice value, kiln_err *err)
{
    view_part *p = writer;
    view *v = p->v;
    if (key.n < 1 || key.p[0] >= v->ntables)
        return status_set(err, KILN_INTERNAL, "%s: an output record for no table", v->name);
    size_t ti = key.p[0];
    if (p->w[ti] == NULL) {
        char path[PATH_MAX];
        kiln_status s = view_table_dir(&v->tables[ti], p->dir, path, sizeof path, err);
        if (s == KILN_OK)
            s = hfile_output_format.open(v->tables[ti].out, path, p->part, &p->w[ti], err);
        if (s != KILN_OK)
            return s;
    }
    return hfile_output_format.write(p->w[ti], kslice_make(key.p + 1, key.n - 1), value, err);
}

static void
view_part_free(view_part *p)
{
    free(p->dir);
    free(p);
}

static kiln_status
view_output_close(void *writer, uint64_t *bytes, kiln_err *err)
{
    view_part *p = writer;
    kiln_status s = KILN_OK;
    for (size_t i = 0; i < p->v->ntables; i++) {
        if (p->w[i] == NULL)
            continue;
        if (s != KILN_OK)
            hfile_output_format.abort(p->w[i]);
        else
            s = hfile_output_format.close(p->w[i], bytes, err);
    }
    view_part_free(p);
    return s;
}

static void
view_output_abort(void *writer)
{
    view_part *p = writer;
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->v->ntables; i++)
        if (p->w[i] != NULL)
            hfile_output_format.abort(p->w[i]);
    view_part_free(p);
}

static const mr_output_format view_output_format = {
    "view-hfile", view_output_prepare, view_output_open, view_output_write, view_output_close,
    view_output_abort, NULL,
};

/* ------------------------------------------------------------------ setup */

/* Families (with the table's settings when it exists) and split keys of
 * table t, appended to keys as group-key bounds. */
static kiln_status
view_open_table(view *v, size_t ti, kbuf **keys, size_t *nkeys, kiln_err *err)
{
    view_table *t = &v->tables[ti];
    kiln_schema read;
    int exists;
    kiln_status s = jobs_table_read(v->job, v->data_dir, t->name, &read, &exists, err);
    if (s != KILN_OK)
        return s;
    schema_family fams[VIEW_FAMILIES_MAX];
    if (exists) {
        const kiln_schema *sc = &read;
        t->exists = 1;
        t->salt = sc->salt_buckets;
        schema_copy(&t->schema, sc);
        for (size_t f = 0; f < t->nfam && s == KILN_OK; f++) {
            const schema_family *sf = schema_find_family(sc, (const uint8_t *)t->families[f],
                                                         strlen(t->families[f]));
            if (sf == NULL)
                s = status_set(err, KILN_INVALID,
                               "table %s in %s has no family '%s' (%s writes %s); create it "
                               "with the job's families or drop it", t->name, v->data_dir,
                               t->families[f], v->name, t->families[f]);
            else
                fams[f] = *sf;
        }
        for (size_t k = 0; k < sc->split_count && s == KILN_OK; k++) {
            *keys = kiln_realloc(*keys, (*nkeys + 1) * sizeof **keys);
            kbuf *b = &(*keys)[(*nkeys)++];
            buf_init(b);
            buf_append_u8(b, (uint8_t)ti);
            cellkey_append_row(b, sc->splits[k].data, sc->splits[k].len);
        }
    } else {
        for (size_t f = 0; f < t->nfam; f++)
            schema_family_defaults(&fams[f], t->families[f]);
    }
    if (s == KILN_OK)
        s = hfile_output_new(v->job, fams, t->nfam, &t->out, err);
    schema_free(&read);
    return s;
}

/* -D kiln.index: the indexes of the job's one table, their partition
 * boundaries appended to keys (they sort above every table tag) and the
 * output format wrapped. The table must exist: its regions give the
 * partitions, so that no sampling pass sees index records. */
static kiln_status
view_attach_index(view *v, kbuf **keys, size_t *nkeys, kiln_err *err)
{
    const char *spec = mr_conf_get(mr_job_conf(v->job), INDEX_OUTPUT_CONF, NULL);
    if (spec == NULL || *spec == '\0')
        return KILN_OK;
    if (v->ntables != 1)
        return status_set(err, KILN_INVALID,
                          "%s: %s is supported for one-table views only (%s writes %zu tables)",
                          v->name, INDEX_OUTPUT_CONF, v->name, v->ntables);
    const view_table *t = &v->tables[0];
    if (!t->exists)
        return status_set(err, KILN_INVALID,
                          "%s: %s needs table %s in %s (its regions place the index rows); "
                          "create it first with kiln create", v->name, INDEX_OUTPUT_CONF,
                          t->name, v->data_dir);
    v->ix_table = 0;
    return index_output_attach(v->job, &t->schema, keys, nkeys, &view_output_format, v, &v->ix,
                               err);
}

kiln_status
view_setup(view *v, kiln_err *err)
{
    mr_conf *conf = mr_job_conf(v->job);
    char key[128];
    snprintf(key, sizeof key, "%s.skip.bad.lines", v->name);
    kiln_status s = mr_conf_get_bool(conf, key, 1, &v->skip_bad, err);
    if (s != KILN_OK)
        return s;
    if (v->output == NULL)
        return status_set(err, KILN_INVALID, "%s: --output DIR is required", v->name);
    if (v->inputs == 0)
        return status_set(err, KILN_INVALID, "%s: no input given", v->name);
    mr_job_set_output(v->job, v->output);

    kbuf *keys = NULL;
    size_t nkeys = 0, existing = 0;
    for (size_t i = 0; i < v->ntables && s == KILN_OK; i++) {
        if (i > 0) {
            /* each partition holds one table's rows */
            keys = kiln_realloc(keys, (nkeys + 1) * sizeof *keys);
            buf_init(&keys[nkeys]);
            buf_append_u8(&keys[nkeys++], (uint8_t)i);
        }
        s = view_open_table(v, i, &keys, &nkeys, err);
        existing += v->tables[i].exists;
    }
    if (s == KILN_OK)
        s = view_attach_index(v, &keys, &nkeys, err);
    if (s == KILN_OK && existing > 0) {
        kslice *sl = kiln_calloc(nkeys, sizeof *sl);
        for (size_t i = 0; i < nkeys; i++)
            sl[i] = buf_slice(&keys[i]);
        s = mr_job_set_split_keys(v->job, sl, nkeys, err);
        free(sl);
    } else if (s == KILN_OK && !mr_conf_has(conf, "kiln.partitioner")) {
        mr_conf_set(conf, "kiln.partitioner", "total");
    }
    for (size_t i = 0; i < nkeys; i++)
        buf_free(&keys[i]);
    free(keys);
    if (s != KILN_OK)
        return s;

    kbuf j = KBUF_INIT;
    buf_append_u8(&j, '[');
    for (size_t i = 0; i < v->ntables; i++) {
        const view_table *t = &v->tables[i];
        buf_append(&j, i > 0 ? ",{\"layout\":" : "{\"layout\":", i > 0 ? 11 : 10);
        const char *layout = t->layout != NULL ? t->layout : ".";
        mr_counters_json_string(&j, layout, strlen(layout));
        buf_append(&j, ",\"table\":", 9);
        mr_counters_json_string(&j, t->name, strlen(t->name));
        const char *from = t->exists ? "table schema" : existing > 0 ? "one partition" : "sampled";
        buf_append(&j, ",\"regions_from\":", 16);
        mr_counters_json_string(&j, from, strlen(from));
        buf_append_u8(&j, '}');
    }
    buf_append_u8(&j, ']');
    buf_append_u8(&j, '\0');
    mr_job_report(v->job, "tables", (const char *)j.data);
    buf_free(&j);
    if (v->ix == NULL)   /* else index_output_format wraps the view's */
        mr_job_set_output_format(v->job, &view_output_format, v);
    return KILN_OK;
}

kiln_status
view_setup_one_table(view *v, int argc, char **argv, const char *default_table,
                     const char *families, size_t *index, kiln_err *err)
{
    const char *table = default_table;
    kiln_status s = KILN_OK;
    for (int i = 1; i < argc && s == KILN_OK; i++) {
        if (view_common_arg(v, argc, argv, &i, &s, err))
            continue;
        if (strcmp(argv[i], "--table") == 0)
            s = jobs_take_value(argc, argv, &i, &table, err);
        else
            s = status_set(err, KILN_INVALID, "%s: unknown argument '%s'", v->name, argv[i]);
    }
    if (s == KILN_OK)
        s = view_add_table(v, NULL, table, families, index, err);
    if (s == KILN_OK)
        s = view_setup(v, err);
    return s;
}

/* ------------------------------------------------------------------ map */

/* The stored key of user row `row` of table: the row itself, or in a salted
 * table its bucket byte then the row (in v->stored, valid until the next
 * call). */
static kslice
view_stored_row(view *v, size_t table, kslice row)
{
    uint32_t salt = v->tables[table].salt;
    if (salt == 0)
        return row;
    buf_reset(&v->stored);
    store_salt_key(&v->stored, salt, row.p, row.n);
    return buf_slice(&v->stored);
}

kiln_status
view_index_put(view *v, mr_task *t, size_t table, kslice row, const char *family,
               kslice qualifier, int64_t ts, kslice value, kiln_err *err)
{
    if (v->ix == NULL || table != v->ix_table || mr_task_sampling(t))
        return KILN_OK;
    return index_output_put(t, v->ix, row, kslice_str(family), qualifier, ts, value, err);
}

kiln_status
view_bad(view *v, mr_task *t, const char *reason, kiln_err *err)
{
    if (mr_task_sampling(t))
        return KILN_OK;
    mr_task_count(t, v->c_bad, 1);
    mr_task_bad_record(t);
    if (v->skip_bad && v->logged >= VIEW_LOG_MAX)
        return KILN_OK;
    uint64_t line = 0;
    kiln_err lerr;
    status_clear(&lerr);
    mr_task_input_line(t, &line, &lerr);
    if (!v->skip_bad)
        return status_set(err, KILN_CORRUPTION, "%s:%" PRIu64 ": bad line: %s (%s.skip.bad.lines=false)",
                          mr_task_input_path(t), line, reason, v->name);
    if (++v->logged == VIEW_LOG_MAX)
        mr_task_warn(t, "bad line %s:%" PRIu64 ": %s (no more bad lines logged on this rank)",
                     mr_task_input_path(t), line, reason);
    else
        mr_task_warn(t, "bad line %s:%" PRIu64 ": %s", mr_task_input_path(t), line, reason);
    return KILN_OK;
}

int
view_fields(view *v, mr_task *t, kslice line, kslice *f, size_t n, kiln_status *st,
            kiln_err *err)
{
    size_t nf = view_split(line, '\t', f, n);
    if (nf == n)
        return 1;
    char reason[64];
    snprintf(reason, sizeof reason, "%zu fields, expected %zu", nf, n);
    *st = view_bad(v, t, reason, err);
    return 0;
}

void
view_pos(mr_task *t, uint8_t pos[VIEW_POS])
{
    coding_put_be32(pos, mr_task_input_file(t));
    coding_put_be64(pos + 4, mr_task_input_offset(t));
}

kiln_status
view_emit(view *v, mr_task *t, size_t table, kslice row, kslice head, kslice tail, kiln_err *err)
{
    if (table >= v->ntables)
        return status_set(err, KILN_INTERNAL, "%s: a row for table %zu of %zu", v->name, table,
                          v->ntables);
    uint32_t salt = v->tables[table].salt;
    if (row.n == 0 || row.n > (salt > 0 ? CELL_ROW_MAX - 1 : CELL_ROW_MAX))
        return status_set(err, KILN_INTERNAL, "%s: a row key of %zu bytes%s", v->name, row.n,
                          salt > 0 ? " (salted table)" : "");
    row = view_stored_row(v, table, row);
    buf_reset(&v->key);
    buf_append_u8(&v->key, (uint8_t)table);
    cellkey_append_row(&v->key, row.p, row.n);
    buf_reset(&v->value);
    buf_append(&v->value, head.p, head.n);
    buf_append(&v->value, tail.p, tail.n);
    return mr_task_emit(t, buf_slice(&v->key), buf_slice(&v->value), err);
}

/* ------------------------------------------------------------------ reduce */

kiln_status
view_group(view *v, kslice key, size_t *table, kbuf *row, kiln_err *err)
{
    buf_reset(row);
    if (key.n < 3 || key.p[0] >= v->ntables)
        return status_set(err, KILN_CORRUPTION, "%s: a group key of %zu bytes for no table",
                          v->name, key.n);
    *table = key.p[0];
    const uint8_t *p = key.p + 1, *end = key.p + key.n;
    while (p < end) {
        const uint8_t *z = memchr(p, 0, (size_t)(end - p));
        if (z == NULL || z + 1 >= end)
            break;
        buf_append(row, p, (size_t)(z - p));
        if (z[1] == 0x00) {
            if (z + 2 != end || row->len == 0)
                break;
            uint32_t salt = v->tables[*table].salt;
            if (salt == 0)
                return KILN_OK;
            if (!store_salt_key_ok(row->data, row->len, salt))
                break;
            memmove(row->data, row->data + 1, row->len - 1);   /* the user row */
            row->len--;
            return KILN_OK;
        }
        if (z[1] != 0xFF)
            break;
        buf_append_u8(row, 0x00);
        p = z + 2;
    }
    return status_set(err, KILN_CORRUPTION, "%s: a malformed group key", v->name);
}

kiln_status
view_last(view *v, mr_task *t, mr_values *values, kbuf *out, uint64_t *n, kiln_err *err)
{
    kslice val;
    *n = 0;
    buf_reset(out);
    while (mr_task_next_value(values, &val)) {
        if (val.n < VIEW_POS)
            return status_set(err, KILN_CORRUPTION, "%s: a map value of %zu bytes", v->name, val.n);
        buf_reset(out);
        buf_append(out, val.p + VIEW_POS, val.n - VIEW_POS);
        (*n)++;
    }
    if (*n > 1)
        view_count_dups(v, t, *n - 1);
    return KILN_OK;
}

void
view_count_dups(view *v, mr_task *t, uint64_t n)
{
    mr_task_count(t, v->c_dups, n);
}

kiln_status
view_put(view *v, mr_task *t, size_t table, kslice row, const char *family, kslice qualifier,
         int64_t ts, kslice value, kiln_err *err)
{
    if (value.n > UINT32_MAX || qualifier.n > UINT32_MAX)
        return status_set(err, KILN_INVALID, "%s: a cell of %zu bytes", v->name, value.n);
    if (table >= v->ntables)
        return status_set(err, KILN_INTERNAL, "%s: a cell for table %zu of %zu", v->name, table,
                          v->ntables);
    row = view_stored_row(v, table, row);
    kiln_cell c;
    memset(&c, 0, sizeof c);
    c.row = row.p;
    c.row_len = (uint32_t)row.n;
    c.family = (const uint8_t *)family;
    c.family_len = (uint32_t)strlen(family);
    c.qualifier = qualifier.p;
    c.qualifier_len = (uint32_t)qualifier.n;
    c.ts = ts;
    c.type = CELL_TYPE_PUT;
    buf_reset(&v->key);
    buf_append_u8(&v->key, (uint8_t)table);
    cellkey_append(&v->key, &c);
    return mr_task_emit(t, buf_slice(&v->key), value, err);
}

/* ------------------------------------------------------------------ fields */

size_t
view_split(kslice line, uint8_t sep, kslice *fields, size_t max)
{
    size_t n = 0;
    const uint8_t *p = line.p, *end = line.p + line.n;
    for (;;) {
        const uint8_t *s = p < end ? memchr(p, sep, (size_t)(end - p)) : NULL;
        const uint8_t *stop = s != NULL ? s : end;
        if (n < max)
            fields[n] = kslice_make(p, (size_t)(stop - p));
        n++;
        if (s == NULL)
            return n;
        p = s + 1;
    }
}

int
view_parse_u32(kslice s, uint32_t *out)
{
    if (s.n == 0 || s.n > 10)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (s.p[i] < '0' || s.p[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s.p[i] - '0');
    }
    if (v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int
view_parse_i64(kslice s, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (s.n > 0 && s.p[0] == '-') {
        neg = 1;
        i = 1;
    }
    if (i == s.n || s.n - i > 19)
        return -1;
    uint64_t v = 0;
    for (; i < s.n; i++) {
        if (s.p[i] < '0' || s.p[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s.p[i] - '0');
    }
    if (v > (uint64_t)INT64_MAX + (uint64_t)neg)
        return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

int
view_text_ok(kslice s)
{
    return s.n <= VIEW_FIELD_MAX && (s.n == 0 || memchr(s.p, 0, s.n) == NULL);
}

kslice
view_i64_text(char *buf, int64_t v)
{
    int n = snprintf(buf, 24, "%" PRId64, v);
    return kslice_make(buf, (size_t)n);
}
