/* import.c -- HBase's Import: the cells of an export (or of any HFiles)
 * written as HFiles for the regions of an existing table, for `kiln load`.
 *
 *   import TABLE INPUTDIR --output DIR [--data DIR] [--families SRC:DST,...]
 *
 * Map reads each row of the HFiles under INPUTDIR (hfile_input_add; names
 * starting with '_' or '.', like _export.json, are skipped) and emits each
 * cell under the cellkey encoding (cellkey.h) of its row as the target
 * stores it (the bucket byte first when the table is salted), its family
 * renamed if asked; the value is the cell's value. The cell's type goes with
 * its key, so delete markers (from `export --raw`) are imported as delete
 * markers. Split keys are the target's region boundaries (index_output.h),
 * so each partition writes one HFile per family inside one region:
 *
 *   DIR/<family>/<hfile>   HBase's bulk-output layout, for `kiln load TABLE DIR`
 *
 * Every family a cell names (after renaming) must be one of the table's:
 * the first that is not fails the job, naming the file, row and family.
 * When the input holds a cell key twice (two inputs, or families renamed
 * into one), the value that sorts first is kept, whatever the rank count,
 * and the others are counted.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/cellkey.h"
#include "jobs/index_output.h"
#include "jobs/jobs_args.h"
#include "jobs/table_input.h"
#include "mapreduce/mr_counters.h"
#include "storage/hfile/cell.h"
#include "storage/store/schema.h"

#define IMPORT_GROUP "Import"
#define IMPORT_RENAME_CONF "HBASE_IMPORTER_RENAME_CFS"   /* HBase Import's property */
#define IMPORT_RENAMES_MAX 256

typedef struct import_rename {
    char from[SCHEMA_FAMILY_NAME_MAX + 1];
    char to[SCHEMA_FAMILY_NAME_MAX + 1];
} import_rename;

typedef struct import_state {
    kiln_schema target;
    index_output *ix;             /* salting, split keys and the HFile output */
    import_rename *ren;
    size_t nren;
    char families[1024];          /* the target's, for messages */
    int c_rows;
    int c_cells;
    int c_markers;
    int c_dups;
    kbuf srow;                    /* the stored row */
    kbuf key;
} import_state;

static void
import_state_free(void *p)
{
    import_state *st = p;
    if (st == NULL)
        return;
    schema_free(&st->target);
    index_output_free(st->ix);
    free(st->ren);
    buf_free(&st->srow);
    buf_free(&st->key);
    free(st);
}

/* ------------------------------------------------------------------ map, reduce */

/* The target family of a cell's family: renamed, then looked up. NULL when
 * the target has none of that name. */
static const schema_family *
import_family(const import_state *st, const uint8_t *f, size_t n)
{
    for (size_t i = 0; i < st->nren; i++) {
        const import_rename *r = &st->ren[i];
        if (strlen(r->from) == n && memcmp(r->from, f, n) == 0)
            return schema_find_family(&st->target, (const uint8_t *)r->to, strlen(r->to));
    }
    return schema_find_family(&st->target, f, n);
}

static kiln_status
import_map(mr_task *t, kslice record, kiln_err *err)
{
    (void)record;
    import_state *st = mr_task_state(t);
    const store_row *row = table_input_row(t);
    if (row == NULL)
        return status_set(err, KILN_INTERNAL, "import: a record that is not a row of cells");
    kiln_err e2;
    status_clear(&e2);
    kiln_status s = index_output_row_key(st->ix, row->row.p, row->row.n, &st->srow, &e2);
    if (s != KILN_OK) {
        kbuf p = KBUF_INIT;
        cell_to_string_binary(&p, row->row.p, row->row.n > 64 ? 64 : row->row.n);
        buf_append_u8(&p, 0);
        s = status_set(err, s, "%s: row %s%s: %s", mr_task_input_path(t), (const char *)p.data,
                       row->row.n > 64 ? "..." : "", e2.msg);
        buf_free(&p);
        return s;
    }
    uint64_t markers = 0;
    for (size_t i = 0; i < row->count; i++) {
        kiln_cell c = row->cells[i];
        const schema_family *f = import_family(st, c.family, c.family_len);
        if (f == NULL) {
            kbuf p = KBUF_INIT, fam = KBUF_INIT;
            cell_to_string_binary(&p, row->row.p, row->row.n > 64 ? 64 : row->row.n);
            buf_append_u8(&p, 0);
            cell_to_string_binary(&fam, c.family, c.family_len);
            buf_append_u8(&fam, 0);
            s = status_set(err, KILN_INVALID, "%s: row %s: family '%s' is not a family of table %s "
                           "(families: %s); create it, or rename with --families %s:FAMILY",
                           mr_task_input_path(t), (const char *)p.data, (const char *)fam.data,
                           st->target.name, st->families, (const char *)fam.data);
            buf_free(&p);
            buf_free(&fam);
            return s;
        }
        c.row = st->srow.data;
        c.row_len = (uint32_t)st->srow.len;
        c.family = (const uint8_t *)f->name;
        c.family_len = (uint32_t)strlen(f->name);
        buf_reset(&st->key);
        cellkey_append(&st->key, &c);
        s = mr_task_emit(t, buf_slice(&st->key), kslice_make(c.value, c.value_len), err);
        if (s != KILN_OK)
            return s;
        markers += c.type != CELL_TYPE_PUT;
    }
    mr_task_count(t, st->c_rows, 1);
    mr_task_count(t, st->c_cells, row->count);
    mr_task_count(t, st->c_markers, markers);
    return KILN_OK;
}

static kiln_status
import_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    import_state *st = mr_task_state(t);
    if (index_output_owns(key))
        return index_output_reduce(t, key, values, err);
    kslice v;
    uint64_t n = 0;
    kiln_status s = KILN_OK;
    while (mr_task_next_value(values, &v)) {
        if (n++ == 0)
            s = mr_task_emit(t, key, v, err);
        if (s != KILN_OK)
            return s;
    }
    if (n > 1)
        mr_task_count(t, st->c_dups, n - 1);
    return KILN_OK;
}

/* ------------------------------------------------------------------ setup */

/* "src:dst[,src:dst...]": each name a family name, no source twice, each
 * destination a family of the target. */
static kiln_status
import_parse_renames(import_state *st, const char *spec, kiln_err *err)
{
    const char *p = spec;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *colon = memchr(p, ':', n);
        size_t fl = colon ? (size_t)(colon - p) : 0, tl = colon ? n - fl - 1 : 0;
        if (colon == NULL || fl == 0 || tl == 0 || fl > SCHEMA_FAMILY_NAME_MAX ||
            tl > SCHEMA_FAMILY_NAME_MAX || !schema_family_name_ok(p, fl) ||
            !schema_family_name_ok(colon + 1, tl))
            return status_set(err, KILN_INVALID, "--families: '%.*s' is not FROM:TO (two family "
                              "names)", (int)n, p);
        if (st->nren == IMPORT_RENAMES_MAX)
            return status_set(err, KILN_INVALID, "--families: more than %d renames",
                              IMPORT_RENAMES_MAX);
        import_rename *r = &st->ren[st->nren];
        memcpy(r->from, p, fl);
        r->from[fl] = '\0';
        memcpy(r->to, colon + 1, tl);
        r->to[tl] = '\0';
        for (size_t i = 0; i < st->nren; i++)
            if (strcmp(st->ren[i].from, r->from) == 0)
                return status_set(err, KILN_INVALID, "--families: family '%s' renamed twice",
                                  r->from);
        if (schema_find_family(&st->target, (const uint8_t *)r->to, tl) == NULL)
            return status_set(err, KILN_INVALID, "--families: '%s' is not a family of table %s "
                              "(families: %s)", r->to, st->target.name, st->families);
        st->nren++;
        p += n;
        if (*p == ',')
            p++;
    }
    return KILN_OK;
}

static kiln_status
import_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    import_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, import_state_free);
    schema_init(&st->target);
    buf_init(&st->srow);
    buf_init(&st->key);
    mr_conf *conf = mr_job_conf(job);
    const char *output = NULL, *data_dir = NULL, *renames = NULL, *pos[2];
    int npos = 0;
    kiln_status s = KILN_OK;
    for (int i = 1; i < argc && s == KILN_OK; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--output") == 0) {
            s = jobs_take_value(argc, argv, &i, &output, err);
        } else if (strcmp(a, "--data") == 0) {
            s = jobs_take_value(argc, argv, &i, &data_dir, err);
        } else if (strcmp(a, "--families") == 0) {
            s = jobs_take_value(argc, argv, &i, &renames, err);
        } else if (a[0] == '-' && a[1] != '\0') {
            s = status_set(err, KILN_INVALID, "import: unknown argument '%s'", a);
        } else if (npos == 2) {
            s = status_set(err, KILN_INVALID, "import: unexpected argument '%s' (TABLE INPUTDIR)",
                           a);
        } else {
            pos[npos++] = a;
        }
    }
    if (s != KILN_OK)
        return s;
    if (npos < 2)
        return status_set(err, KILN_INVALID, "import: needs TABLE and INPUTDIR");
    if (output == NULL)
        output = mr_conf_get(conf, "import.bulk.output", NULL);
    if (output == NULL)
        return status_set(err, KILN_INVALID, "import: no --output DIR (where the HFiles for "
                          "`kiln load` go)");
    if (renames == NULL)
        renames = mr_conf_get(conf, IMPORT_RENAME_CONF, NULL);
    const char *ix = mr_conf_get(conf, INDEX_OUTPUT_CONF, NULL);
    if (ix != NULL && *ix != '\0')
        return status_set(err, KILN_INVALID, "import: -D %s is not supported (indexes of the "
                          "target are not rebuilt by import)", INDEX_OUTPUT_CONF);
    mr_job_set_output(job, output);
    if (data_dir == NULL) {
        const char *e = getenv("KILN_DATA");
        data_dir = e != NULL && *e != '\0' ? e : "kiln-data";
    }
    char canon[SCHEMA_NAME_MAX + 1];
    s = schema_name_canon(pos[0], canon, err);
    int exists = 0;
    if (s == KILN_OK)
        s = jobs_table_read(job, data_dir, canon, &st->target, &exists, err);
    if (s == KILN_OK && !exists)
        s = status_set(err, KILN_NOT_FOUND, "import: table %s does not exist in %s; create it "
                       "first (an export's _export.json lists its families as `kiln create "
                       "--family` takes them)", canon, data_dir);
    if (s != KILN_OK)
        return s;
    size_t off = 0;
    for (size_t i = 0; i < st->target.family_count && off < sizeof st->families; i++)
        off += (size_t)snprintf(st->families + off, sizeof st->families - off, "%s%s",
                                i ? ", " : "", st->target.families[i].name);
    if (renames != NULL) {
        st->ren = kiln_calloc(IMPORT_RENAMES_MAX, sizeof *st->ren);
        s = import_parse_renames(st, renames, err);
        if (s != KILN_OK)
            return s;
    }
    s = index_output_setup(job, &st->target, st->target.families, st->target.family_count,
                           &st->ix, err);
    if (s != KILN_OK)
        return s;
    hfile_input_add(job, pos[1], NULL);
    kbuf j = KBUF_INIT;
    mr_counters_json_string(&j, canon, strlen(canon));
    buf_append_u8(&j, 0);
    mr_job_report(job, "table", (const char *)j.data);
    buf_free(&j);
    st->c_rows = mr_job_counter(job, IMPORT_GROUP, "Rows");
    st->c_cells = mr_job_counter(job, IMPORT_GROUP, "Cells");
    st->c_markers = mr_job_counter(job, IMPORT_GROUP, "Delete markers");
    st->c_dups = mr_job_counter(job, IMPORT_GROUP, "Identical keys (first value kept)");
    mr_job_set_map(job, import_map);
    mr_job_set_reduce(job, import_reduce);
    return KILN_OK;
}

const mr_job_def import_job = {
    "import",
    "write an export's cells as HFiles for a table's regions (HBase Import)",
    "Usage: kiln-mr import TABLE INPUTDIR --output DIR [--data DIR]\n"
    "                     [--families FROM:TO,...]\n"
    "\n"
    "Reads the HFiles under INPUTDIR (an export's part files; names starting\n"
    "with '_' or '.' are skipped) and writes HBase's bulk-output layout for the\n"
    "existing table TABLE, DIR/<family>/<one HFile per region>, ready for\n"
    "`kiln load TABLE DIR`. Any region layout and salting: rows get the\n"
    "table's bucket byte when it is salted. Every cell keeps its timestamp and\n"
    "type, so delete markers (export --raw) stay delete markers.\n"
    "\n"
    "Options:\n"
    "  --output DIR        where the HFiles go (must not exist); also\n"
    "                      -D import.bulk.output=DIR, as HBase's Import\n"
    "  --data DIR          the data directory (default $KILN_DATA, else ./kiln-data)\n"
    "  --families FROM:TO,...  write family FROM's cells into family TO; also\n"
    "                      -D HBASE_IMPORTER_RENAME_CFS=FROM:TO,..., as HBase's\n"
    "                      Import\n"
    "  -D kiln.hfile.compression=C, kiln.hfile.bloom=B, kiln.hfile.blocksize=N\n"
    "                      override the families' settings\n"
    "\n"
    "Every family of the input (after renaming) must be a family of TABLE: the\n"
    "first cell of another family fails the job, naming its file and row. The\n"
    "table must exist: create it first (an export's _export.json lists its\n"
    "families, each as `kiln create --family` takes it).\n"
    "\n"
    "Counters (group Import): Rows, Cells, Delete markers, Identical keys\n"
    "(first value kept).\n",
    import_setup,
};
