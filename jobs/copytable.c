/* copytable.c -- HBase's CopyTable (its --bulkload form): the cells of one
 * version of a loaded table written as HFiles laid out for another table's
 * regions, ready for `kiln load NEW DIR`.
 *
 *   copytable --new-name NEW (--input-table SRC[@VERSION] | SRC) --output DIR
 *             [--families A:X,B] [--start-row R] [--stop-row R] [--starttime MS]
 *             [--endtime MS] [--versions N] [--all-cells] [--data DIR]
 *
 * The target table must exist: its families (and their settings), its
 * regions and its salting decide the output, whatever the source's are.
 * Map reads the source's rows through table input -- the visible cells, up
 * to --versions per column, or with --all-cells every stored cell, delete
 * markers and masked versions included (HBase's raw scan) -- renames each
 * cell's family as --families says, gives its row the target's salt byte,
 * and emits it under its cellkey (cellkey.h) with its value: the engine's
 * byte sort is then HBase's cell order, and the total-order partitioner over
 * the target's region boundaries puts each region's rows in one partition,
 * one HFile per region and family (index_output_setup without indexes).
 * Cells keep their timestamps and types.
 *
 * A raw read gives a cell stored twice (an equal key in two loads) twice;
 * the first, from the newest load, is what a read returns, so the rest are
 * skipped as the source reads them.
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

#define COPYTABLE_GROUP "CopyTable"
#define COPYTABLE_FAMILIES_MAX 64

typedef struct copytable_pair {
    char src[SCHEMA_FAMILY_NAME_MAX + 1];
    char dst[SCHEMA_FAMILY_NAME_MAX + 1];
} copytable_pair;

typedef struct copytable_state {
    copytable_pair pair[COPYTABLE_FAMILIES_MAX];
    size_t npair;
    size_t last;                  /* the pair used last */
    int raw;
    index_output *ix;             /* the target's HFiles and salt */
    int c_rows, c_cells, c_markers, c_repeated;
    kbuf srow, key;
} copytable_state;

static void
copytable_state_free(void *p)
{
    copytable_state *st = p;
    if (st == NULL)
        return;
    index_output_free(st->ix);
    buf_free(&st->srow);
    buf_free(&st->key);
    free(st);
}

/* The pair whose source family is f[0..n), or NULL. */
static const copytable_pair *
copytable_find(copytable_state *st, const uint8_t *f, size_t n)
{
    if (st->last < st->npair && strlen(st->pair[st->last].src) == n &&
        memcmp(st->pair[st->last].src, f, n) == 0)
        return &st->pair[st->last];
    for (size_t i = 0; i < st->npair; i++)
        if (strlen(st->pair[i].src) == n && memcmp(st->pair[i].src, f, n) == 0) {
            st->last = i;
            return &st->pair[i];
        }
    return NULL;
}

static int
copytable_same_key(const kiln_cell *a, const kiln_cell *b)
{
    return a->ts == b->ts && a->type == b->type && a->family_len == b->family_len &&
           a->qualifier_len == b->qualifier_len &&
           memcmp(a->family, b->family, a->family_len) == 0 &&
           memcmp(a->qualifier, b->qualifier, a->qualifier_len) == 0;
}

static kiln_status
copytable_map(mr_task *t, kslice row, kiln_err *err)
{
    copytable_state *st = mr_task_state(t);
    const store_row *r = table_input_row(t);
    if (r == NULL)
        return status_set(err, KILN_INVALID, "copytable: a record that is not a table row");
    kiln_status s = index_output_row_key(st->ix, row.p, row.n, &st->srow, err);
    if (s != KILN_OK) {
        kbuf p = KBUF_INIT;
        cell_to_string_binary(&p, row.p, row.n < 64 ? row.n : 64);
        kiln_status rs = status_set(err, s, "copytable: row %.*s%s: %s", (int)p.len,
                                    (const char *)p.data, row.n > 64 ? "..." : "", err->msg);
        buf_free(&p);
        return rs;
    }
    int sampling = mr_task_sampling(t);
    if (!sampling)
        mr_task_count(t, st->c_rows, 1);
    const kiln_cell *prev = NULL;
    for (size_t i = 0; i < r->count; i++) {
        const kiln_cell *src = &r->cells[i];
        if (prev != NULL && copytable_same_key(prev, src)) {
            if (!sampling)
                mr_task_count(t, st->c_repeated, 1);
            continue;
        }
        prev = src;
        const copytable_pair *p = copytable_find(st, src->family, src->family_len);
        if (p == NULL)
            continue;   /* a family not asked for */
        kiln_cell c = *src;
        c.row = st->srow.data;
        c.row_len = (uint32_t)st->srow.len;
        c.family = (const uint8_t *)p->dst;
        c.family_len = (uint32_t)strlen(p->dst);
        c.tags = NULL;
        c.tags_len = 0;
        buf_reset(&st->key);
        cellkey_append(&st->key, &c);
        s = mr_task_emit(t, buf_slice(&st->key), kslice_make(c.value, c.value_len), err);
        if (s != KILN_OK)
            return s;
        if (!sampling) {
            mr_task_count(t, st->c_cells, 1);
            if (c.type != CELL_TYPE_PUT)
                mr_task_count(t, st->c_markers, 1);
        }
    }
    return KILN_OK;
}

static kiln_status
copytable_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    copytable_state *st = mr_task_state(t);
    kslice v;
    if (!mr_task_next_value(values, &v))
        return KILN_OK;
    kiln_status s = mr_task_emit(t, key, v, err);
    /* a key twice: only from families renamed onto one, which setup refuses */
    while (s == KILN_OK && mr_task_next_value(values, &v))
        mr_task_count(t, st->c_repeated, 1);
    return s;
}

/* ------------------------------------------------------------------ setup */

/* `--name VALUE` or `--name=VALUE` at argv[*i]: 1 with *v (or a usage error
 * in *s), 0 for another argument. */
static int
copytable_opt(const char *name, int argc, char **argv, int *i, const char **v, kiln_status *s,
              kiln_err *err)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *v = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] != '\0')
        return 0;
    *s = jobs_take_value(argc, argv, i, v, err);
    return 1;
}

/* Parse "A:X,B" (or, with plain 1, "A,B" as --columns' families) into pairs. */
static kiln_status
copytable_parse_families(copytable_state *st, const char *spec, const char *what, int plain,
                         kiln_err *err)
{
    const char *p = spec;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *colon = memchr(p, ':', n);
        size_t sl = colon ? (size_t)(colon - p) : n;
        const char *d = colon ? colon + 1 : p;
        size_t dl = colon ? n - sl - 1 : n;
        if (plain)
            dl = sl, d = p;
        if (!schema_family_name_ok(p, sl) || sl == 0 || !schema_family_name_ok(d, dl) || dl == 0)
            return status_set(err, KILN_INVALID, "%s: '%.*s' is not FAMILY or FAMILY:NEWFAMILY",
                              what, (int)n, p);
        if (st->npair == COPYTABLE_FAMILIES_MAX)
            return status_set(err, KILN_INVALID, "%s: more than %d families", what,
                              COPYTABLE_FAMILIES_MAX);
        copytable_pair *q = &st->pair[st->npair];
        memcpy(q->src, p, sl);
        q->src[sl] = '\0';
        memcpy(q->dst, d, dl);
        q->dst[dl] = '\0';
        for (size_t i = 0; i < st->npair; i++) {
            if (strcmp(st->pair[i].src, q->src) == 0) {
                if (plain)
                    goto next;   /* --columns a:x,a:y: family a once */
                return status_set(err, KILN_INVALID, "%s: family '%s' is given twice", what,
                                  q->src);
            }
            if (strcmp(st->pair[i].dst, q->dst) == 0)
                return status_set(err, KILN_INVALID, "%s: families '%s' and '%s' would both be "
                                  "copied into '%s'", what, st->pair[i].src, q->src, q->dst);
        }
        st->npair++;
    next:
        p += n;
        if (*p == ',')
            p++;
    }
    return KILN_OK;
}

static void
copytable_family_names(const kiln_schema *sc, kbuf *out)
{
    buf_reset(out);
    for (size_t j = 0; j < sc->family_count; j++) {
        if (j > 0)
            buf_append(out, ", ", 2);
        buf_append(out, sc->families[j].name, strlen(sc->families[j].name));
    }
    buf_append_u8(out, 0);
}

/* The source and target schemas, the family pairs checked against them,
 * and the output set up for the target. */
static kiln_status
copytable_layout(mr_job *job, copytable_state *st, const char *data_dir, const char *source,
                 const char *target, kiln_err *err)
{
    char scanon[SCHEMA_NAME_MAX + 1], tcanon[SCHEMA_NAME_MAX + 1];
    kiln_status s = schema_name_canon(source, scanon, err);
    if (s == KILN_OK)
        s = schema_name_canon(target, tcanon, err);
    if (s != KILN_OK)
        return s;
    kiln_schema src, dst;
    int src_exists = 0, dst_exists = 0;
    s = jobs_table_read(job, data_dir, scanon, &src, &src_exists, err);
    if (s == KILN_OK)
        s = jobs_table_read(job, data_dir, tcanon, &dst, &dst_exists, err);
    else
        schema_init(&dst);
    if (s == KILN_OK && !src_exists)
        s = status_set(err, KILN_NOT_FOUND, "copytable: no table %s in %s", scanon, data_dir);
    if (s == KILN_OK && !dst_exists)
        s = status_set(err, KILN_NOT_FOUND, "copytable: the target table %s does not exist in %s "
                       "(create it first: kiln create %s --family ...)", tcanon, data_dir, tcanon);
    kbuf names = KBUF_INIT;
    if (s == KILN_OK && st->npair == 0) {   /* every family of the source, same names */
        for (size_t i = 0; i < src.family_count; i++) {
            snprintf(st->pair[i].src, sizeof st->pair[i].src, "%s", src.families[i].name);
            snprintf(st->pair[i].dst, sizeof st->pair[i].dst, "%s", src.families[i].name);
        }
        st->npair = src.family_count;
    }
    schema_family fams[COPYTABLE_FAMILIES_MAX];
    for (size_t i = 0; i < st->npair && s == KILN_OK; i++) {
        const copytable_pair *p = &st->pair[i];
        if (schema_find_family(&src, (const uint8_t *)p->src, strlen(p->src)) == NULL) {
            copytable_family_names(&src, &names);
            s = status_set(err, KILN_INVALID, "copytable: table %s has no family '%s' (its "
                           "families: %s)", scanon, p->src, (const char *)names.data);
            break;
        }
        const schema_family *f = schema_find_family(&dst, (const uint8_t *)p->dst, strlen(p->dst));
        if (f == NULL) {
            copytable_family_names(&dst, &names);
            if (strcmp(p->src, p->dst) == 0)
                s = status_set(err, KILN_INVALID, "copytable: the target table %s has no family "
                               "'%s' (its families: %s); copy it into another with --families "
                               "%s:OTHER, or leave it out", tcanon, p->dst,
                               (const char *)names.data, p->src);
            else
                s = status_set(err, KILN_INVALID, "copytable: the target table %s has no family "
                               "'%s' (to receive %s's family '%s'; its families: %s)", tcanon,
                               p->dst, scanon, p->src, (const char *)names.data);
            break;
        }
        fams[i] = *f;
    }
    buf_free(&names);
    if (s == KILN_OK) {
        const char *ix = mr_conf_get(mr_job_conf(job), INDEX_OUTPUT_CONF, NULL);
        if (ix != NULL && *ix != '\0')
            s = status_set(err, KILN_INVALID, "copytable: -D %s is not supported (copytable "
                           "builds no secondary index)", INDEX_OUTPUT_CONF);
    }
    if (s == KILN_OK)
        s = index_output_setup(job, &dst, fams, st->npair, &st->ix, err);
    if (s == KILN_OK) {
        kbuf j = KBUF_INIT;
        mr_counters_json_string(&j, tcanon, strlen(tcanon));
        buf_append_u8(&j, 0);
        mr_job_report(job, "table", (const char *)j.data);
        buf_reset(&j);
        buf_append_u8(&j, '{');
        for (size_t i = 0; i < st->npair; i++) {
            if (i > 0)
                buf_append_u8(&j, ',');
            mr_counters_json_string(&j, st->pair[i].src, strlen(st->pair[i].src));
            buf_append_u8(&j, ':');
            mr_counters_json_string(&j, st->pair[i].dst, strlen(st->pair[i].dst));
        }
        buf_append(&j, "}", 2);
        mr_job_report(job, "families", (const char *)j.data);
        mr_job_describe(job, "families", kslice_make(j.data, j.len));
        buf_free(&j);
    }
    schema_free(&src);
    schema_free(&dst);
    return s;
}

static kiln_status
copytable_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    copytable_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, copytable_state_free);
    buf_init(&st->srow);
    buf_init(&st->key);
    table_input_spec spec;
    table_input_spec_init(&spec);
    const char *output = NULL, *target = NULL, *families = NULL;
    /* HBase's option names, rewritten to ours */
    static const char *const alias[][2] = {
        {"--new.name", "--new-name"}, {"--all.cells", "--all-cells"},
        {"--startrow", "--start-row"}, {"--stoprow", "--stop-row"},
    };
    char **args = kiln_calloc((size_t)argc + 1, sizeof *args);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        args[i] = NULL;
        for (size_t k = 0; k < sizeof alias / sizeof alias[0]; k++) {
            size_t n = strlen(alias[k][0]);
            if (strncmp(a, alias[k][0], n) == 0 && (a[n] == '\0' || a[n] == '=')) {
                size_t len = strlen(alias[k][1]) + strlen(a + n) + 1;
                args[i] = kiln_calloc(1, len);
                snprintf(args[i], len, "%s%s", alias[k][1], a + n);
            }
        }
        if (args[i] == NULL)
            args[i] = (char *)kiln_memdup(a, strlen(a) + 1);
    }
    kiln_status s = KILN_OK;
    for (int i = 1; i < argc && s == KILN_OK; i++) {
        const char *v = NULL;
        if (strcmp(args[i], "--all-cells") == 0) {
            spec.raw = 1;
        } else if (strcmp(args[i], "--bulkload") == 0) {
            /* HBase's bulk-load form is the only one: nothing to do */
        } else if (table_input_arg(&spec, argc, args, &i, &s, err)) {
            continue;
        } else if (copytable_opt("--output", argc, args, &i, &v, &s, err)) {
            output = v;
        } else if (copytable_opt("--new-name", argc, args, &i, &v, &s, err)) {
            target = v;
        } else if (copytable_opt("--families", argc, args, &i, &v, &s, err)) {
            families = v;
        } else if (copytable_opt("--data", argc, args, &i, &v, &s, err)) {
            spec.data_dir = v;
        } else if (args[i][0] == '-') {
            s = status_set(err, KILN_INVALID, "copytable: unknown argument '%s'", args[i]);
        } else if (spec.given) {
            s = status_set(err, KILN_INVALID, "copytable: a second source table '%s'", args[i]);
        } else {
            s = table_input_set_table(&spec, args[i], err);
        }
    }
    if (s == KILN_OK && !spec.given)
        s = status_set(err, KILN_INVALID, "copytable: no source table (SRC or --input-table SRC)");
    if (s == KILN_OK && target == NULL)
        s = status_set(err, KILN_INVALID, "copytable: --new-name NEW (the target table) is "
                       "required");
    if (s == KILN_OK && output == NULL)
        s = status_set(err, KILN_INVALID, "copytable: --output DIR is required");
    if (s == KILN_OK && families != NULL && spec.columns != NULL)
        s = status_set(err, KILN_INVALID, "copytable: give --families or --columns, not both");
    if (s == KILN_OK && families != NULL) {
        s = copytable_parse_families(st, families, "--families", 0, err);
        if (s == KILN_OK && st->npair == 0)
            s = status_set(err, KILN_INVALID, "--families: no family given");
        kbuf cols = KBUF_INIT;
        for (size_t i = 0; i < st->npair; i++) {
            if (i > 0)
                buf_append_u8(&cols, ',');
            buf_append(&cols, st->pair[i].src, strlen(st->pair[i].src));
        }
        buf_append_u8(&cols, 0);
        spec.columns = (char *)kiln_memdup(cols.data, cols.len);
        buf_free(&cols);
    } else if (s == KILN_OK && spec.columns != NULL) {
        /* --columns: their families, under the same names */
        kbuf fams = KBUF_INIT;
        for (const char *p = spec.columns; *p;) {
            const char *e = strchr(p, ',');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            const char *colon = memchr(p, ':', n);
            if (fams.len > 0)
                buf_append_u8(&fams, ',');
            buf_append(&fams, p, colon ? (size_t)(colon - p) : n);
            p += n;
            if (*p == ',')
                p++;
        }
        buf_append_u8(&fams, 0);
        s = copytable_parse_families(st, (const char *)fams.data, "--columns", 1, err);
        buf_free(&fams);
    }
    if (s == KILN_OK) {
        const char *dd = spec.data_dir ? spec.data_dir : getenv("KILN_DATA");
        if (dd == NULL || *dd == '\0')
            dd = "kiln-data";
        s = copytable_layout(job, st, dd, spec.table, target, err);
    }
    if (s == KILN_OK) {
        mr_job_set_output(job, output);
        st->raw = spec.raw;
        s = table_input_add(job, &spec, NULL, err);
    }
    table_input_spec_free(&spec);
    for (int i = 0; i < argc; i++)
        free(args[i]);
    free(args);
    if (s != KILN_OK)
        return s;
    st->c_rows = mr_job_counter(job, COPYTABLE_GROUP, "Rows read");
    st->c_cells = mr_job_counter(job, COPYTABLE_GROUP, "Cells written");
    st->c_markers = mr_job_counter(job, COPYTABLE_GROUP, "Delete markers written");
    st->c_repeated = mr_job_counter(job, COPYTABLE_GROUP, "Repeated cells skipped");
    mr_job_set_map(job, copytable_map);
    mr_job_set_reduce(job, copytable_reduce);
    return KILN_OK;
}

const mr_job_def copytable_job = {
    "copytable",
    "copy a loaded table's cells into HFiles for another table (HBase CopyTable)",
    "Usage: kiln-mr copytable --new-name NEW (--input-table SRC[@VERSION] | SRC)\n"
    "                         --output DIR [options]\n"
    "\n"
    "Copies the cells of one version of table SRC as HFiles laid out for table\n"
    "NEW -- one per region of NEW and family, salted when NEW is -- into\n"
    "DIR/<family>/; publish them with `kiln load NEW DIR` (which replaces NEW's\n"
    "cells; `kiln load --append NEW DIR` adds them to what NEW holds). NEW must\n"
    "exist, with every family the copy writes; its regions and salting need\n"
    "not be SRC's. Cells keep their timestamps and types. HBase's option names\n"
    "(--new.name=, --all.cells, --startrow=, --stoprow=) are accepted too.\n"
    "\n"
    "Options:\n"
    "  --new-name NEW      the target table (required)\n"
    "  --output DIR        where the HFiles are written (must not exist)\n"
    "  --data DIR          the data directory (default $KILN_DATA, else ./kiln-data)\n"
    "  --families A:X,B    copy only these families, A into NEW's family X and B\n"
    "                      into B (default: every family of SRC, same names)\n"
    "  --all-cells         every stored cell: all versions, deleted cells and\n"
    "                      delete markers (a raw read), so NEW reads as SRC does\n"
    "  --versions N        up to N versions of each column (default 1)\n"
    TABLE_INPUT_USAGE
    "\n"
    "Counters (group CopyTable): Rows read, Cells written, Delete markers\n"
    "written, Repeated cells skipped (a raw read's cell stored in two loads).\n",
    copytable_setup,
};
