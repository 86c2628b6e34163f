/* cellcounter.c -- HBase's CellCounter: rows, families, columns and versions
 * of a loaded table counted by a job over its regions.
 *
 *   cellcounter --input-table NAME[@VERSION] --output DIR [selection options]
 *               [--separator SEP] [--regex RE]
 *   cellcounter NAME DIR [SEP] [^REGEX | PREFIX] [--starttime=MS] [--endtime=MS]
 *
 * Every version of every visible column is read (HBase's CellCounter scans
 * with all versions unless told otherwise), and the report in DIR/part-r-00000
 * holds HBase's lines, `KEY<TAB>COUNT` sorted by key bytes:
 *
 *   Total ROWS                          rows
 *   Total Families Across all Rows      distinct families
 *   Total Qualifiers across all Rows    (row, column) pairs
 *   FAMILY                              1 for each family seen
 *   FAMILY<SEP>QUALIFIER                rows holding the column
 *   ROW<SEP>FAMILY<SEP>QUALIFIER_Versions   versions of the column in the row
 *
 * rows and qualifiers in HBase's printable form. Counters: CellCounter's ROWS
 * and CELLS, and group CF with the rows holding each family.
 *
 * Map output keys are the report's keys, but for two kinds that must count
 * distinct families whatever the rank count (HBase counts them per map
 * task): FAMILY 0x00 (a family line: always 1) and "Total Families Across all
 * Rows" 0x00 FAMILY (one per family, no line of its own), closed by the key
 * "Total Families Across all Rows" 0x01, which writes the total of the 0x00
 * keys just before it. No report key holds a 0x00 byte (printable forms and a
 * separator from the command line), so the extra bytes only ever sort a key
 * where its line belongs. Values are 8-byte big-endian counts, summed as
 * emitted (a fold). One partition: the report is one sorted file.
 */
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/jobs_args.h"
#include "jobs/table_input.h"
#include "storage/base/coding.h"
#include "storage/hfile/cell.h"
#include "storage/store/schema.h"

#define CELLCOUNTER_GROUP "org.apache.hadoop.hbase.mapreduce.CellCounter$CellCounterMapper$Counters"
#define CELLCOUNTER_ROWS "Total ROWS"
#define CELLCOUNTER_FAMS "Total Families Across all Rows"
#define CELLCOUNTER_QUALS "Total Qualifiers across all Rows"
#define CELLCOUNTER_ALL_VERSIONS 0x7fffffffu   /* Integer.MAX_VALUE, as HBase */

typedef struct cellcounter_state {
    int c_rows, c_cells;
    int *c_family;                /* [nfam]: group CF, one per family */
    char (*fam)[SCHEMA_FAMILY_NAME_MAX + 1];
    size_t nfam;
    uint8_t *seen;                /* [nfam]: family emitted by this rank */
    int sentinel;                 /* the closing key emitted by this rank */
    char sep[64];
    int has_regex;
    regex_t re;
    kbuf key, rowtext, famtext, coltext;
    uint64_t families;            /* reduce: the 0x00 family keys counted */
} cellcounter_state;

static void
cellcounter_state_free(void *p)
{
    cellcounter_state *st = p;
    if (st == NULL)
        return;
    if (st->has_regex)
        regfree(&st->re);
    free(st->c_family);
    free(st->fam);
    free(st->seen);
    buf_free(&st->key);
    buf_free(&st->rowtext);
    buf_free(&st->famtext);
    buf_free(&st->coltext);
    free(st);
}

static kiln_status
cellcounter_emit(mr_task *t, kslice key, uint64_t n, kiln_err *err)
{
    uint8_t v[8];
    coding_put_be64(v, n);
    return mr_task_emit(t, key, kslice_make(v, 8), err);
}

/* The index of family f[0..n) among the state's, or nfam. */
static size_t
cellcounter_family(const cellcounter_state *st, const uint8_t *f, size_t n)
{
    for (size_t i = 0; i < st->nfam; i++)
        if (strlen(st->fam[i]) == n && memcmp(st->fam[i], f, n) == 0)
            return i;
    return st->nfam;
}

/* The first sight of family i on this rank: its line and its share of the
 * distinct-family total (see the head of the file). */
static kiln_status
cellcounter_new_family(mr_task *t, cellcounter_state *st, size_t i, kiln_err *err)
{
    st->seen[i] = 1;
    const char *f = st->fam[i];
    buf_reset(&st->key);
    buf_append(&st->key, f, strlen(f));
    buf_append_u8(&st->key, 0);
    kiln_status s = cellcounter_emit(t, buf_slice(&st->key), 1, err);
    buf_reset(&st->key);
    buf_append(&st->key, CELLCOUNTER_FAMS, strlen(CELLCOUNTER_FAMS));
    buf_append_u8(&st->key, 0);
    buf_append(&st->key, f, strlen(f));
    if (s == KILN_OK)
        s = cellcounter_emit(t, buf_slice(&st->key), 1, err);
    if (s == KILN_OK && !st->sentinel) {
        st->sentinel = 1;
        buf_reset(&st->key);
        buf_append(&st->key, CELLCOUNTER_FAMS, strlen(CELLCOUNTER_FAMS));
        buf_append_u8(&st->key, 1);
        s = cellcounter_emit(t, buf_slice(&st->key), 1, err);
    }
    return s;
}

/* The lines of one column of a row: FAMILY<SEP>QUALIFIER (one row more) and
 * ROW<SEP>FAMILY<SEP>QUALIFIER_Versions (its versions). st->coltext holds
 * FAMILY<SEP>QUALIFIER. */
static kiln_status
cellcounter_column(mr_task *t, cellcounter_state *st, uint64_t versions, kiln_err *err)
{
    kiln_status s = cellcounter_emit(t, buf_slice(&st->coltext), 1, err);
    if (s != KILN_OK)
        return s;
    buf_reset(&st->key);
    buf_append(&st->key, st->rowtext.data, st->rowtext.len);
    buf_append(&st->key, st->sep, strlen(st->sep));
    buf_append(&st->key, st->coltext.data, st->coltext.len);
    buf_append(&st->key, "_Versions", 9);
    return cellcounter_emit(t, buf_slice(&st->key), versions, err);
}

static kiln_status
cellcounter_map(mr_task *t, kslice row, kiln_err *err)
{
    cellcounter_state *st = mr_task_state(t);
    const store_row *r = table_input_row(t);
    if (r == NULL)
        return status_set(err, KILN_INVALID, "cellcounter: a record that is not a table row");
    if (st->has_regex) {
        /* REG_STARTEND: the row is bytes, NULs included, not a C string;
         * the copy ends in a NUL too, for regexec wrappers that look for one */
        buf_reset(&st->key);
        buf_append(&st->key, row.p, row.n);
        buf_append_u8(&st->key, 0);
        regmatch_t m[1];
        m[0].rm_so = 0;
        m[0].rm_eo = (regoff_t)row.n;
        if (regexec(&st->re, (const char *)st->key.data, 1, m, REG_STARTEND) != 0)
            return KILN_OK;
    }
    if (!mr_task_sampling(t)) {
        mr_task_count(t, st->c_rows, 1);
        mr_task_count(t, st->c_cells, r->count);
    }
    kiln_status s = cellcounter_emit(t, kslice_str(CELLCOUNTER_ROWS), 1, err);
    buf_reset(&st->rowtext);
    cell_to_string_binary(&st->rowtext, row.p, row.n);
    const kiln_cell *prev = NULL;
    uint64_t versions = 0, columns = 0;
    for (size_t i = 0; i < r->count && s == KILN_OK; i++) {
        const kiln_cell *c = &r->cells[i];
        int new_family = prev == NULL || c->family_len != prev->family_len ||
                         memcmp(c->family, prev->family, c->family_len) != 0;
        int new_column = new_family || c->qualifier_len != prev->qualifier_len ||
                         memcmp(c->qualifier, prev->qualifier, c->qualifier_len) != 0;
        if (new_column && prev != NULL) {
            s = cellcounter_column(t, st, versions, err);
            columns++;
        }
        if (s == KILN_OK && new_family) {
            size_t f = cellcounter_family(st, c->family, c->family_len);
            if (f == st->nfam)
                return status_set(err, KILN_CORRUPTION, "cellcounter: row %.*s holds family "
                                  "'%.*s' that the table's schema lacks",
                                  (int)st->rowtext.len, (const char *)st->rowtext.data,
                                  (int)c->family_len, (const char *)c->family);
            if (!mr_task_sampling(t))
                mr_task_count(t, st->c_family[f], 1);
            if (!st->seen[f])
                s = cellcounter_new_family(t, st, f, err);
            buf_reset(&st->famtext);
            cell_to_string_binary(&st->famtext, c->family, c->family_len);
        }
        if (new_column) {
            buf_reset(&st->coltext);
            buf_append(&st->coltext, st->famtext.data, st->famtext.len);
            buf_append(&st->coltext, st->sep, strlen(st->sep));
            cell_to_string_binary(&st->coltext, c->qualifier, c->qualifier_len);
            versions = 0;
        }
        versions++;
        prev = c;
    }
    if (s == KILN_OK && prev != NULL) {
        s = cellcounter_column(t, st, versions, err);
        columns++;
    }
    if (s == KILN_OK && columns > 0)
        s = cellcounter_emit(t, kslice_str(CELLCOUNTER_QUALS), columns, err);
    return s;
}

static kiln_status
cellcounter_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    cellcounter_state *st = mr_task_state(t);
    uint64_t sum = 0;
    kslice v;
    while (mr_task_next_value(values, &v)) {
        if (v.n != 8)
            return status_set(err, KILN_CORRUPTION, "cellcounter: a count of %zu bytes", v.n);
        sum += coding_get_be64(v.p);
    }
    size_t nf = strlen(CELLCOUNTER_FAMS);
    const uint8_t *zero = memchr(key.p, 0, key.n);
    if (key.n > nf && memcmp(key.p, CELLCOUNTER_FAMS, nf) == 0 &&
        (key.p[nf] == 0 || key.p[nf] == 1)) {
        if (key.p[nf] == 0) {   /* one family, seen by one rank or more */
            st->families++;
            return KILN_OK;
        }
        sum = st->families;     /* the closing key: every family is counted */
        st->families = 0;
        key.n = nf;
    } else if (zero != NULL) {  /* a family line */
        key.n = (size_t)(zero - key.p);
        sum = 1;
    }
    char num[24];
    int n = snprintf(num, sizeof num, "%" PRIu64, sum);
    return mr_task_emit(t, key, kslice_make(num, (size_t)n), err);
}

/* ------------------------------------------------------------------ setup */

static kiln_status
cellcounter_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    cellcounter_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, cellcounter_state_free);
    buf_init(&st->key);
    buf_init(&st->rowtext);
    buf_init(&st->famtext);
    buf_init(&st->coltext);
    table_input_spec spec;
    table_input_spec_init(&spec);
    const char *output = NULL, *sep = NULL, *regex = NULL, *criteria = NULL;
    const char *pos[4];
    int npos = 0;
    kiln_status s = KILN_OK;
    for (int i = 1; i < argc && s == KILN_OK; i++) {
        if (table_input_arg(&spec, argc, argv, &i, &s, err))
            continue;
        if (strcmp(argv[i], "--output") == 0) {
            s = jobs_take_value(argc, argv, &i, &output, err);
        } else if (strcmp(argv[i], "--data") == 0) {
            s = jobs_take_value(argc, argv, &i, &spec.data_dir, err);
        } else if (strcmp(argv[i], "--separator") == 0) {
            s = jobs_take_value(argc, argv, &i, &sep, err);
        } else if (strcmp(argv[i], "--regex") == 0) {
            s = jobs_take_value(argc, argv, &i, &regex, err);
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            s = status_set(err, KILN_INVALID, "cellcounter: unknown argument '%s'", argv[i]);
        } else if (npos == 4) {
            s = status_set(err, KILN_INVALID, "cellcounter: too many arguments ('%s')", argv[i]);
        } else {
            pos[npos++] = argv[i];
        }
    }
    /* HBase's positional form: TABLE OUTPUT [SEPARATOR] [^REGEX | PREFIX],
     * the first two taken only when not given as options */
    int k = 0;
    if (s == KILN_OK && !spec.given && k < npos)
        s = table_input_set_table(&spec, pos[k++], err);
    if (s == KILN_OK && output == NULL && k < npos)
        output = pos[k++];
    if (s == KILN_OK && k < npos) {
        if (sep != NULL)
            s = status_set(err, KILN_INVALID, "cellcounter: the separator is given twice");
        sep = pos[k++];
    }
    if (s == KILN_OK && k < npos)
        criteria = pos[k++];
    if (s == KILN_OK && k < npos)
        s = status_set(err, KILN_INVALID, "cellcounter: too many arguments ('%s')", pos[k]);
    if (s == KILN_OK && criteria != NULL) {
        if (criteria[0] == '^') {
            if (regex != NULL)
                s = status_set(err, KILN_INVALID, "cellcounter: a row regex given twice");
            regex = criteria + 1;
        } else if (spec.prefix.len > 0) {
            s = status_set(err, KILN_INVALID, "cellcounter: a row prefix given twice");
        } else if (cell_from_string_binary(&spec.prefix, criteria, strlen(criteria)) != 0) {
            s = status_set(err, KILN_INVALID, "cellcounter: prefix '%s' has a bad \\xNN escape",
                           criteria);
        }
    }
    if (s == KILN_OK && output == NULL)
        s = status_set(err, KILN_INVALID, "cellcounter: --output DIR (or TABLE DIR) is required");
    if (s == KILN_OK && !spec.given)
        s = status_set(err, KILN_INVALID, "cellcounter: no table given (--input-table NAME or "
                       "NAME DIR)");
    if (sep == NULL)
        sep = ":";
    if (s == KILN_OK && strlen(sep) >= sizeof st->sep)
        s = status_set(err, KILN_INVALID, "cellcounter: the separator '%s' is longer than %zu "
                       "bytes", sep, sizeof st->sep - 1);
    if (s == KILN_OK) {
        snprintf(st->sep, sizeof st->sep, "%s", sep);
        mr_job_describe(job, "report separator", kslice_str(st->sep));
    }
    if (s == KILN_OK && regex != NULL) {
        int rc = regcomp(&st->re, regex, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char msg[256];
            regerror(rc, &st->re, msg, sizeof msg);
            s = status_set(err, KILN_INVALID, "cellcounter: row regex '%s': %s", regex, msg);
        } else {
            st->has_regex = 1;
            mr_job_describe(job, "row regex", kslice_str(regex));
        }
    }
    /* every version unless asked (HBase: hbase.mapreduce.scan.maxversions) */
    if (s == KILN_OK && spec.versions == 0) {
        int64_t mv;
        s = mr_conf_get_long(mr_job_conf(job), "hbase.mapreduce.scan.maxversions",
                             CELLCOUNTER_ALL_VERSIONS, &mv, err);
        if (s == KILN_OK && (mv < 1 || mv > (int64_t)CELLCOUNTER_ALL_VERSIONS))
            s = status_set(err, KILN_INVALID, "hbase.mapreduce.scan.maxversions: %" PRId64
                           " is not a version count", mv);
        spec.versions = (uint32_t)mv;
    }
    if (s == KILN_OK && spec.raw)
        s = status_set(err, KILN_INVALID, "cellcounter: --raw is not supported (HBase's "
                       "CellCounter counts the cells a read returns)");
    /* the table's families, for the CF counters */
    kiln_schema sc;
    schema_init(&sc);
    if (s == KILN_OK) {
        char canon[SCHEMA_NAME_MAX + 1];
        const char *dd = spec.data_dir ? spec.data_dir : getenv("KILN_DATA");
        if (dd == NULL || *dd == '\0')
            dd = "kiln-data";
        int exists = 0;
        s = schema_name_canon(spec.table, canon, err);
        if (s == KILN_OK)
            s = jobs_table_read(job, dd, canon, &sc, &exists, err);
        if (s == KILN_OK && !exists)
            s = status_set(err, KILN_NOT_FOUND, "cellcounter: no table %s in %s", canon, dd);
    }
    if (s == KILN_OK) {
        st->nfam = sc.family_count;
        st->fam = kiln_calloc(st->nfam ? st->nfam : 1, sizeof *st->fam);
        st->c_family = kiln_calloc(st->nfam ? st->nfam : 1, sizeof *st->c_family);
        st->seen = kiln_calloc(st->nfam ? st->nfam : 1, 1);
        for (size_t i = 0; i < st->nfam; i++)
            snprintf(st->fam[i], sizeof st->fam[i], "%s", sc.families[i].name);
    }
    schema_free(&sc);
    if (s == KILN_OK) {
        mr_job_set_output(job, output);
        s = table_input_add(job, &spec, NULL, err);
    }
    table_input_spec_free(&spec);
    if (s != KILN_OK)
        return s;
    st->c_rows = mr_job_counter(job, CELLCOUNTER_GROUP, "ROWS");
    st->c_cells = mr_job_counter(job, CELLCOUNTER_GROUP, "CELLS");
    for (size_t i = 0; i < st->nfam; i++)
        st->c_family[i] = mr_job_counter(job, "CF", st->fam[i]);
    mr_job_set_map(job, cellcounter_map);
    mr_job_set_fold(job, mr_sortbuf_fold_sum_be64, NULL);
    mr_job_set_reduce(job, cellcounter_reduce);
    /* one sorted report, whatever -D mapreduce.job.reduces says: the
     * distinct-family total needs every family key in one partition */
    return mr_job_set_split_keys(job, NULL, 0, err);
}

const mr_job_def cellcounter_job = {
    "cellcounter",
    "count the rows, families, columns and versions of a loaded table (HBase CellCounter)",
    "Usage: kiln-mr cellcounter --input-table NAME[@VERSION] --output DIR [options]\n"
    "       kiln-mr cellcounter NAME DIR [SEPARATOR] [^REGEX | PREFIX]\n"
    "                           [--starttime=MS] [--endtime=MS] [options]\n"
    "\n"
    "Writes HBase CellCounter's report of one version of a table into\n"
    "DIR/part-r-00000, one `KEY<TAB>COUNT` line per key, sorted by key bytes:\n"
    "  Total ROWS                        rows with a cell in the selection\n"
    "  Total Families Across all Rows    distinct families seen\n"
    "  Total Qualifiers across all Rows  (row, column) pairs\n"
    "  FAMILY                            1 for each family seen\n"
    "  FAMILY:QUALIFIER                  rows holding the column\n"
    "  ROW:FAMILY:QUALIFIER_Versions     versions of the column in the row\n"
    "(rows and qualifiers in printable form, ':' being the separator). Every\n"
    "version a read returns is counted (up to each family's VERSIONS) unless\n"
    "--versions N or -D hbase.mapreduce.scan.maxversions=N says otherwise.\n"
    "Counters: ROWS and CELLS (group org.apache.hadoop.hbase.mapreduce.\n"
    "CellCounter$CellCounterMapper$Counters) and, in group CF, the rows\n"
    "holding each family.\n"
    "\n"
    "Options:\n"
    "  --data DIR          the data directory (default $KILN_DATA, else ./kiln-data)\n"
    "  --output DIR        where the report is written (must not exist)\n"
    "  --separator SEP     between row, family and qualifier (default ':'; also\n"
    "                      the third argument of the positional form)\n"
    "  --regex RE          only rows in which the POSIX extended regular\n"
    "                      expression RE matches (anywhere, as HBase's\n"
    "                      RowFilter with a RegexStringComparator: the positional\n"
    "                      form's ^RE); the positional PREFIX is --prefix\n"
    TABLE_INPUT_USAGE,
    cellcounter_setup,
};
