/* index_output.h -- secondary indexes and salting for jobs that write a
 * table's HFiles: `-D kiln.index=NAME:cf:q[,cf:q2][;NAME2:...]` builds index
 * tables beside the table, in the same job and the same output, and a salted
 * table (schema salt_buckets) gets its rows' bucket byte.
 *
 * Where index rows travel. They are shuffled with the table's cells, under
 * keys in a byte range no cellkey encoding (cellkey.h) enters:
 *
 *   FIELD   | SIZE | VALUE
 *   gap     | 3    | FF 00 01  (a cellkey's 0x00 is followed by 0x00 or 0xFF only)
 *   index   | 1    | j, the index's position in kiln.index
 *   cell    | var  | cellkey of (index row, "i", "", ts, Put); the index row is
 *                  | store_index_key(values, row), salted when the table is
 *
 * so total-order split keys over the table's regions plus each index's
 * regions (index_output_add_splits) put every partition in one table, and
 * the output format (index_output_format) writes gap records as the index's
 * HFiles and passes everything else to the job's own format:
 *
 *   OUTPUT/<family>/<hfile>                  the table (the job's format)
 *   OUTPUT/_index/NAME/_schema               the index table's schema record
 *   OUTPUT/_index/NAME/i/<hfile>             its HFiles, one per partition
 *
 * `kiln load` loads them with the table in one atomic step (bulkload.h).
 * Names starting with '_' are skipped by HBase's bulk load, so the table's
 * part stays a plain HBase bulk output.
 *
 * Index rows are made where a job sees a row's columns: it offers each cell
 * of a row it emits (index_output_put); when a row has offered every column
 * of an index, that index's row is emitted. Cells of one row must be offered
 * one after another (a different row starts over), so an entry comes from
 * one input record. A row that several input records give may leave an
 * entry for a value it no longer holds; reads check every entry against the
 * row (store_index.h), so such entries are never returned. But a row whose
 * final values of a composite index come from different records gets no
 * entry for that combination: input should carry every column of a
 * composite index in each record that changes one of them.
 *
 * A job enables all of it with three calls and one line:
 *
 *   setup   index_output_setup(job, &schema, families, n, &ix, err) in place of
 *           its split keys and hfile_output (a job writing one table with
 *           hfile_output), or index_output_attach(job, &schema, &keys, &nkeys,
 *           &its_format, its_arg, &ix, err) before it sets its split keys
 *           (a job with its own output format, several tables, a table tag);
 *   map     index_output_row_key(ix, row, n, &stored, err) for the stored (salted)
 *           row key, and index_output_put(t, ix, row, family, qualifier, ts,
 *           value, err) for each cell of the row (a no-op without indexes);
 *   reduce  if (index_output_owns(key)) return index_output_reduce(t, key, values, err);
 *
 * Counters (group "Secondary Index"): Index rows, Index rows too long (skipped).
 *
 * Ownership: the index_output belongs to the job's state (free it from the
 * state's destructor). Thread-safety: as mr_job.h.
 */
#ifndef KILN_INDEX_OUTPUT_H
#define KILN_INDEX_OUTPUT_H

#include <stddef.h>

#include "mapreduce/mr_job.h"
#include "storage/base/buf.h"
#include "storage/store/schema.h"
#include "storage/base/status.h"

#define INDEX_OUTPUT_CONF "kiln.index"

typedef struct index_output index_output;

/* The salting and indexes of table (its canonical name, families and
 * salt_buckets) for spec, a kiln.index value ("NAME:cf:q[,cf:q2][;...]";
 * NULL or empty: no index). KILN_INVALID for a malformed spec, a family the
 * table lacks, a repeated name, or more than STORE_INDEX_MAX indexes. */
kiln_status index_output_new(mr_job *job, const kiln_schema *table, const char *spec,
                             index_output **out, kiln_err *err);
void index_output_free(index_output *o);   /* o may be NULL */

/* Number of indexes (0 for NULL). */
size_t index_output_count(const index_output *o);

/* Append the partition boundaries of the indexes' regions to keys[0..*n)
 * (kbufs the caller frees); they all lie in the gap, above every key a
 * table's cellkeys or a one-byte table tag below 0xFF can start. */
void index_output_add_splits(const index_output *o, kbuf **keys, size_t *n);

/* Route records: gap records to the indexes' HFiles, the rest to inner
 * (called with inner_arg). Then mr_job_set_output_format(job,
 * &index_output_format, o). */
void index_output_wrap(index_output *o, const mr_output_format *inner, void *inner_arg);
extern const mr_output_format index_output_format;

/* index_output_new with -D kiln.index, its partition boundaries appended
 * to keys[0..*nkeys) (the caller sorts them with its own and sets them),
 * index_output_wrap(inner, inner_arg) and the job's output format set to
 * index_output_format; the indexes listed in _job.json. One table per job
 * may have indexes. */
kiln_status index_output_attach(mr_job *job, const kiln_schema *table, kbuf **keys,
                                size_t *nkeys, const mr_output_format *inner, void *inner_arg,
                                index_output **out, kiln_err *err);

/* All of it for a job writing one table with hfile_output: the table's
 * split keys and the indexes', an hfile_output over families[0..n), the
 * wrapping format, and the indexes in _job.json. *out is never NULL on
 * success (an output without indexes still salts). */
kiln_status index_output_setup(mr_job *job, const kiln_schema *table,
                               const schema_family *families, size_t n, index_output **out,
                               kiln_err *err);

/* The stored row key of user row key row[0..n) (its bucket byte first when
 * the table is salted) into out (reset first). KILN_INVALID when it would
 * exceed CELL_ROW_MAX bytes. */
kiln_status index_output_row_key(const index_output *o, const uint8_t *row, size_t n, kbuf *out,
                                 kiln_err *err);

/* Offer one Put cell of user row `row` (unsalted) to the indexes; emits the
 * index rows it completes. A no-op without indexes. */
kiln_status index_output_put(mr_task *t, index_output *o, kslice row, kslice family,
                             kslice qualifier, int64_t ts, kslice value, kiln_err *err);

/* 1 if a shuffle key is an index record (it starts with the gap). */
int index_output_owns(kslice key);
/* Reduce of an index record: emits it once. */
kiln_status index_output_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err);

#endif
