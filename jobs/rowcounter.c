/* rowcounter.c -- HBase's RowCounter: the rows of a table (or of a part of
 * it) counted by a job over the table's regions.
 *
 *   rowcounter --input-table NAME[@VERSION] --output DIR [selection options]
 *              [--data DIR] [CF[:Q]...]
 *
 * A row counts when it has a visible cell in the selection (columns, time
 * range, filter), as in HBase. The count is the counter
 * org.apache.hadoop.hbase.mapreduce.RowCounter$RowCounterMapper$Counters /
 * ROWS, and DIR/part-r-00000 holds the line `ROWS<TAB>N`. Map emits one
 * ("ROWS", 1) per row, summed as emitted (a fold), so the shuffle moves one
 * record per rank.
 */
#include <stdlib.h>
#include <string.h>

#include "jobs/jobs_args.h"
#include "jobs/table_input.h"
#include "storage/base/coding.h"

#define ROWCOUNTER_GROUP "org.apache.hadoop.hbase.mapreduce.RowCounter$RowCounterMapper$Counters"

typedef struct rowcounter_state {
    int rows;                     /* the ROWS counter */
} rowcounter_state;

static const uint8_t rowcounter_one[8] = {0, 0, 0, 0, 0, 0, 0, 1};

static kiln_status
rowcounter_map(mr_task *t, kslice row, kiln_err *err)
{
    rowcounter_state *st = mr_task_state(t);
    if (!mr_task_sampling(t))
        mr_task_count(t, st->rows, 1);
    return mr_task_emit(t, kslice_str("ROWS"), kslice_make(rowcounter_one, 8), err);
}

static kiln_status
rowcounter_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    uint64_t sum = 0;
    kslice v;
    while (mr_task_next_value(values, &v)) {
        if (v.n != 8)
            return status_set(err, KILN_CORRUPTION, "rowcounter: a count of %zu bytes", v.n);
        sum += coding_get_be64(v.p);
    }
    char num[24];
    int n = snprintf(num, sizeof num, "%llu", (unsigned long long)sum);
    return mr_task_emit(t, key, kslice_make(num, (size_t)n), err);
}

static kiln_status
rowcounter_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    rowcounter_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, free);
    table_input_spec spec;
    table_input_spec_init(&spec);
    kbuf cols = KBUF_INIT;
    kiln_status s = KILN_OK;
    for (int i = 1; i < argc && s == KILN_OK; i++) {
        const char *v;
        if (table_input_arg(&spec, argc, argv, &i, &s, err))
            continue;
        if (strcmp(argv[i], "--output") == 0) {
            s = jobs_take_value(argc, argv, &i, &v, err);
            if (s == KILN_OK)
                mr_job_set_output(job, v);
        } else if (strcmp(argv[i], "--data") == 0) {
            s = jobs_take_value(argc, argv, &i, &spec.data_dir, err);
        } else if (argv[i][0] == '-') {
            s = status_set(err, KILN_INVALID, "rowcounter: unknown argument '%s'", argv[i]);
        } else if (!spec.given) {
            /* HBase's form: the table first, then columns */
            s = table_input_set_table(&spec, argv[i], err);
        } else {
            if (cols.len)
                buf_append_u8(&cols, ',');
            buf_append(&cols, argv[i], strlen(argv[i]));
        }
    }
    if (s == KILN_OK && cols.len) {
        if (spec.columns != NULL)
            s = status_set(err, KILN_INVALID, "rowcounter: columns given twice (--columns and "
                           "after the table)");
        buf_append_u8(&cols, 0);
        spec.columns = (char *)kiln_memdup(cols.data, cols.len);
    }
    buf_free(&cols);
    if (s == KILN_OK)
        s = table_input_add(job, &spec, NULL, err);
    table_input_spec_free(&spec);
    if (s != KILN_OK)
        return s;
    st->rows = mr_job_counter(job, ROWCOUNTER_GROUP, "ROWS");
    mr_job_set_map(job, rowcounter_map);
    mr_job_set_fold(job, mr_sortbuf_fold_sum_be64, NULL);
    mr_job_set_reduce(job, rowcounter_reduce);
    mr_job_set_reduces(job, 1);
    return KILN_OK;
}

const mr_job_def rowcounter_job = {
    "rowcounter",
    "count the rows of a loaded table (HBase RowCounter)",
    "Usage: kiln-mr rowcounter --input-table NAME[@VERSION] --output DIR [options]\n"
    "                          [CF[:Q]...]\n"
    "       kiln-mr rowcounter NAME --output DIR [options] [CF[:Q]...]\n"
    "\n"
    "Counts the rows of a table with at least one cell in the selection, over\n"
    "one version of the table whatever is loaded meanwhile. The count is the\n"
    "counter ROWS (group org.apache.hadoop.hbase.mapreduce.RowCounter$\n"
    "RowCounterMapper$Counters) and the line `ROWS<TAB>N` in DIR/part-r-00000.\n"
    "\n"
    "Options:\n"
    "  --data DIR          the data directory (default $KILN_DATA, else ./kiln-data)\n"
    "  --output DIR        where the count is written (must not exist)\n"
    TABLE_INPUT_USAGE,
    rowcounter_setup,
};
