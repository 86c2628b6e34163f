/* table_input.h -- loaded tables and HFiles as a job's input: HBase's
 * TableInputFormat (over one pinned version, as TableSnapshotInputFormat
 * reads a snapshot) and a reader of cells from HFiles (another job's output,
 * or an export).
 *
 * Table input. `--input-table NAME[@VERSION]` with the selection options
 * below reads the rows of one version of a table in the data directory:
 * rank 0 opens the version asked for (else the current one) and records its
 * number; every rank then opens that same version before map and keeps its
 * files open to the end, so a load or a rollback during the job changes
 * nothing it reads. The version read and the number of splits are in
 * _job.json: "input_table" (the job's second formatted input reports as
 * "input_table_2", and so on).
 * Online writes still in memstores are not read (run `kiln flush` first);
 * flushed ones are part of the version.
 *
 * Splits follow regions: one per region in the selected rows, and a region
 * larger than kiln.table.split.mb (default 256) is cut further at the rows
 * of evenly spaced blocks of its largest file (the block index, no data
 * read). A salted table is read one bucket at a time: a split is one
 * region's part of one bucket, so each reads a plain key range.
 *
 * Map gets each row as its record (the user row key: no salt byte) and the
 * row itself through table_input_row: its cells in HBase order after
 * versions, the time range, TTL, delete markers, the columns and the filter
 * -- or, with raw, every stored cell of the selected families, delete
 * markers and all versions included (Export --raw). The filter is the HBase
 * shell's language (storage/query/shell_filter.h) evaluated over each row as
 * `kiln scan --filter` does; its state is per split, so a PageFilter's page
 * is counted in each split (as HBase counts it per region).
 *
 * HFile input. `hfile_input_add` reads every HFile under a path (a file, or a
 * directory walked recursively, names starting with '_' or '.' skipped),
 * one split per file: map gets each row of cells as stored (delete markers
 * included) through table_input_row, rows in file order.
 *
 * Thread-safety: as mr_job.h.
 */
#ifndef KILN_TABLE_INPUT_H
#define KILN_TABLE_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "mapreduce/mr_job.h"
#include "storage/base/buf.h"
#include "storage/base/status.h"
#include "storage/store/store_view.h"

/* What a job reads of a table. */
typedef struct table_input_spec {
    const char *data_dir;        /* borrowed; NULL = $KILN_DATA, else ./kiln-data */
    char table[256];             /* as given (NAME of NAME@VERSION) */
    uint64_t version;            /* 0 = the current version when the job starts */
    kbuf start, stop;            /* user rows: [start, stop); empty = unbounded */
    kbuf prefix;                 /* only rows starting with it */
    char *columns;               /* "cf[:q],..." or NULL = every family */
    int64_t ts_min, ts_max;      /* [ts_min, ts_max) */
    uint32_t versions;           /* 0 = 1 */
    char *filter;                /* filter text as `kiln scan --filter` takes it, or NULL */
    int raw;                     /* every stored cell, delete markers included */
    int given;                   /* 1 once --input-table was seen */
    /* Called on every rank once the version read is pinned, before map:
     * the version (0 when the table has none published) and its view (its
     * schema, regions and files; NULL when version is 0 off rank 0). The
     * view lives until the job ends (store_view_ref it to keep it longer).
     * May be NULL; not an option (table_input_arg leaves it alone). */
    void (*on_pin)(void *arg, store_view *v, uint64_t version);
    void *on_pin_arg;
} table_input_spec;

void table_input_spec_init(table_input_spec *s);
void table_input_spec_free(table_input_spec *s);

/* The table selection options, at argv[*i]: 1 when it was one (*i left on its
 * last word, *st set), 0 when it is not. Both `--opt VALUE` and
 * `--opt=VALUE`:
 *   --input-table NAME[@VERSION]   --start-row ROW   --stop-row ROW
 *   --prefix P   --columns CF[:Q],...   --starttime MS   --endtime MS
 *   --versions N   --filter TEXT   --raw
 * Rows take HBase's printable form (\xNN escapes). */
int table_input_arg(table_input_spec *spec, int argc, char **argv, int *i, kiln_status *st,
                    kiln_err *err);

/* Set the table read from "NAME" or "NAME@VERSION" (what --input-table
 * takes). KILN_INVALID for a bad form. */
kiln_status table_input_set_table(table_input_spec *spec, const char *v, kiln_err *err);

/* Usage lines for the options above, for a job's --help. */
#define TABLE_INPUT_USAGE \
    "  --input-table NAME[@VERSION]  read a loaded table (its current version, or\n" \
    "                      VERSION as `kiln views` lists it); every rank reads\n" \
    "                      that one version whatever is loaded meanwhile\n" \
    "  --start-row ROW     first row read (inclusive; \\xNN escapes)\n" \
    "  --stop-row ROW      row where reading stops (exclusive)\n" \
    "  --prefix P          only rows starting with P\n" \
    "  --columns CF[:Q],...  only these families or columns\n" \
    "  --starttime MS      only cells with timestamp >= MS\n" \
    "  --endtime MS        only cells with timestamp < MS\n" \
    "  --versions N        up to N versions of each column (default 1)\n" \
    "  --filter TEXT       an HBase shell filter, as `kiln scan --filter` takes it\n" \
    "  --raw               every stored cell: all versions and delete markers\n" \
    "  -D kiln.table.split.mb=N  cut regions larger than N MiB (default 256)\n"


/* Add spec's table as an input of job, its rows going to map (NULL: the
 * job's map). The spec is copied. Call from setup. KILN_INVALID for a bad
 * option value (a column naming no family is found at plan time). */
kiln_status table_input_add(mr_job *job, const table_input_spec *spec, mr_map_fn map,
                            kiln_err *err);

/* Add the HFiles under path as an input of job, their rows going to map
 * (NULL: the job's map). Call from setup. */
void hfile_input_add(mr_job *job, const char *path, mr_map_fn map);

/* Map: the current record's row when it came from a table or HFile input,
 * else NULL. Valid during the map call. */
const store_row *table_input_row(const mr_task *t);

#endif
