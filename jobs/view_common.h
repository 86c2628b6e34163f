/* view_common.h -- what the materialized-view jobs (useractions, tslog,
 * orders, follows, reviews, products, events) share: their target tables,
 * the record layout between map and reduce, the several-table HFile output,
 * bad-line handling and field parsing.
 *
 * A view job writes one or more tables. A one-table job writes HBase's bulk-
 * output layout at the top of its output directory; a several-table job
 * gives each table a layout name and a sub-directory:
 *
 *   OUTPUT/<family>/<hfile>                     one table
 *   OUTPUT/<layout>/<family>/<hfile>            each table of several
 *   OUTPUT/<layout>/_SUCCESS -> ../_SUCCESS     (and _job.json) so that
 *                                               `kiln load TABLE OUTPUT/<layout>`
 *                                               sees the job's own marker
 *
 * Map output (one record per output row and input line):
 *
 *   FIELD  | SIZE | WHAT
 *   table  | 1    | the table's index in the job (view_add_table order)
 *   row    | var  | the stored row key as a cellkey field (cellkey.h)
 *   value  | var  | the job's; most start with the line's input position
 *                 | (file index u32 BE, offset u64 BE: VIEW_POS bytes), so
 *                 | the values of a row arrive in input order
 *
 * Reduce gets each row once, with all its values, and emits the row's cells
 * with view_put in cell order; they sort after the row's group key and
 * before the next row's, so every partition's output is in HBase order.
 * When several lines give the same row, the last line in input order wins
 * (view_last), as a sequence of Puts would, whatever the rank count.
 *
 * Regions: a table that exists in the data directory gives its families'
 * settings (compression, bloom, block size) and its split keys: the job
 * writes one HFile per region and family. When none of the job's tables
 * exists, split keys are sampled from the input (kiln.partitioner=total)
 * and `kiln load` cuts files at the regions of the table it is given.
 *
 * Salted tables (schema salt_buckets): the view functions take and give
 * user row keys; view_emit and view_put store them under their bucket byte
 * and view_group strips it, so a job is the same for a salted table.
 *
 * Secondary indexes (-D kiln.index=NAME:cf:q[,cf:q2][;...], index_output.h)
 * of a one-table job whose table exists: its map offers the cells a line
 * gives with view_index_put, and its reduce starts with
 *   if (index_output_owns(key)) return index_output_reduce(t, key, values, err);
 * The index tables land in OUTPUT/_index/NAME/ for `kiln load`. A row given
 * by several lines may leave entries for values it no longer holds; reads
 * check each entry against the row, so they are never returned.
 *
 * Ownership: a view belongs to the job's state; view_free it from the state's
 * destructor. Thread-safety: as mr_job.h (one task at a time).
 */
#ifndef KILN_VIEW_COMMON_H
#define KILN_VIEW_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "jobs/table_input.h"
#include "mapreduce/mr_job.h"
#include "storage/base/buf.h"
#include "storage/base/status.h"

#define VIEW_TABLES_MAX 8
#define VIEW_FAMILIES_MAX 4
#define VIEW_POS 12               /* file index (4) + offset (8) */
#define VIEW_LOG_MAX 10           /* bad lines logged per rank */
#define VIEW_FIELD_MAX 4096       /* longest text field accepted */

typedef struct view view;

/* A view for job `name` (also the counter group and the prefix of its -D
 * settings: NAME.skip.bad.lines). */
view *view_new(mr_job *job, const char *name);
void view_free(view *v);   /* v may be NULL */

/* Add an output table: layout is its sub-directory (NULL for a one-table
 * job), table its name, families its column families (comma-separated,
 * sorted or not). Returns the table's index. KILN_INVALID for a bad name or
 * more than VIEW_TABLES_MAX tables. */
kiln_status view_add_table(view *v, const char *layout, const char *table, const char *families,
                           size_t *index, kiln_err *err);

/* The shared arguments: `--input PATH...`, `--output DIR`, `--data DIR`.
 * At argv[*i]: 1 when it was one of them (*i left on its last word, *s set),
 * 0 when it is the job's own. */
int view_common_arg(view *v, int argc, char **argv, int *i, kiln_status *s, kiln_err *err);

/* Add an input path (a file or a directory) the way --input does. */
void view_add_input(view *v, const char *path);

/* Add a loaded table as an input (table_input.h), its rows going to map
 * (NULL: the job's map); spec's data directory defaults to the view's. */
kiln_status view_add_table_input(view *v, table_input_spec *spec, mr_map_fn map, kiln_err *err);

/* The data directory (--data, else $KILN_DATA, else ./kiln-data). */
const char *view_data_dir(const view *v);

/* After the tables and arguments: read NAME.skip.bad.lines, open each table
 * that exists in the data directory (families, settings, split keys), set
 * the partitioner and the output format, and report the tables in
 * _job.json; with -D kiln.index, attach the indexes. KILN_INVALID when
 * there is no --output, no --input, a family the table lacks, or kiln.index
 * for a table that does not exist yet, in a job writing several tables,
 * or malformed. */
kiln_status view_setup(view *v, kiln_err *err);

/* The whole setup of a job writing one table: the shared arguments plus
 * `--table NAME` (default_table when absent; any other argument is refused
 * naming the job), the table with the given families as table 0 (*index),
 * then view_setup. */
kiln_status view_setup_one_table(view *v, int argc, char **argv, const char *default_table,
                                 const char *families, size_t *index, kiln_err *err);

/* ------------------------------------------------------------------ map */

/* A bad input line: counted under NAME / Bad Lines and skipped (the first
 * VIEW_LOG_MAX on each rank logged with file and line), or with
 * NAME.skip.bad.lines=false a KILN_CORRUPTION naming file and line. */
kiln_status view_bad(view *v, mr_task *t, const char *reason, kiln_err *err);

/* Split line at tabs into exactly n fields (f[0..n)): 1 if it has n, else
 * 0 with the line reported as bad ("N fields, expected n", view_bad) and
 * *st set to view_bad's status, which the map function returns. */
int view_fields(view *v, mr_task *t, kslice line, kslice *f, size_t n, kiln_status *st,
                kiln_err *err);

/* The current line's input position (VIEW_POS bytes). */
void view_pos(mr_task *t, uint8_t pos[VIEW_POS]);

/* Emit one group record for row of table: the value is head then tail
 * (either may be empty). */
kiln_status view_emit(view *v, mr_task *t, size_t table, kslice row, kslice head, kslice tail,
                      kiln_err *err);

/* Offer one Put cell of user row `row` of table to the job's indexes (a
 * no-op without -D kiln.index, for another table, or while sampling). The
 * cells of one row are offered one after another, from one input line. */
kiln_status view_index_put(view *v, mr_task *t, size_t table, kslice row, const char *family,
                           kslice qualifier, int64_t ts, kslice value, kiln_err *err);

/* ------------------------------------------------------------------ reduce */

/* Decode a group key: the table index and the user row (into row, reset
 * first; without its bucket byte in a salted table). KILN_CORRUPTION when
 * the key is not one this view emits. */
kiln_status view_group(view *v, kslice key, size_t *table, kbuf *row, kiln_err *err);

/* Walk values that start with a position and keep the last (the latest line
 * in input order) in out without its position. Counts the others under
 * NAME / Duplicate rows (last line kept). KILN_CORRUPTION for a short value;
 * *n is the number of values. */
kiln_status view_last(view *v, mr_task *t, mr_values *values, kbuf *out, uint64_t *n,
                      kiln_err *err);

/* Count n rows replaced by a later line (NAME / Duplicate rows). */
void view_count_dups(view *v, mr_task *t, uint64_t n);

/* Emit one Put cell of table. A reduce emits its row's cells in cell order
 * (family, then qualifier, ascending). */
kiln_status view_put(view *v, mr_task *t, size_t table, kslice row, const char *family,
                     kslice qualifier, int64_t ts, kslice value, kiln_err *err);

/* ------------------------------------------------------------------ fields */

/* Split line at sep into fields[0..max); returns the number of fields
 * (which may exceed max: the extra ones are not stored). */
size_t view_split(kslice line, uint8_t sep, kslice *fields, size_t max);

/* Decimal parsers: 0 on success, -1 for an empty field, a sign where none
 * belongs, a non-digit or an overflow. */
int view_parse_u32(kslice s, uint32_t *out);
int view_parse_i64(kslice s, int64_t *out);

/* 1 if s is a usable text field: at most VIEW_FIELD_MAX bytes, no NUL. */
int view_text_ok(kslice s);

/* Decimal text of v in buf (at least 24 bytes); the returned slice points
 * into buf. */
kslice view_i64_text(char *buf, int64_t v);

#endif
