/* hfile_output.h -- the HFile output format: HBase's bulk-output layout.
 *
 *   OUTPUT/<family>/<32 hex digits: the partition number>
 *
 * One HFile per partition per family, written through storage/hfile_writer
 * in the family's settings (compression, bloom, block size: from the
 * table's schema, or the defaults snappy/row/64 KiB, or -D kiln.hfile.
 * compression|bloom|blocksize). Record keys are cellkey encodings (cellkey.h)
 * arriving in order, record values the cell values; a family with no cells in
 * a partition gets no file. With a total-order partitioner over region
 * boundaries every file lies inside one region, which is what the bulk loader
 * wants.
 *
 * Counters (group "HFile Output"): HFiles written, Cells written.
 *
 * Ownership: the hfile_output belongs to the job (free it from the job's
 * state destructor) and must outlive the run. Thread-safety: as mr_job.h.
 */
#ifndef KILN_HFILE_OUTPUT_H
#define KILN_HFILE_OUTPUT_H

#include <stddef.h>

#include "mapreduce/mr_job.h"
#include "storage/store/schema.h"
#include "storage/base/status.h"

typedef struct hfile_output hfile_output;

/* An output over families[0..n) (copied; any order, no duplicates). Reads the
 * kiln.hfile.* settings from the job's conf; KILN_INVALID for a bad one. */
kiln_status hfile_output_new(mr_job *job, const schema_family *families, size_t n,
                             hfile_output **out, kiln_err *err);
void hfile_output_free(hfile_output *o);   /* o may be NULL */

/* The format; its argument is the hfile_output. */
extern const mr_output_format hfile_output_format;

#endif
