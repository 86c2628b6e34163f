/* bulkload_int.h -- pieces of the bulk loader shared between its own files
 * (private to bulkload/).
 */
#ifndef KILN_BULKLOAD_INT_H
#define KILN_BULKLOAD_INT_H

#include <stddef.h>
#include <stdint.h>

#include "storage/hfile/hfile_reader.h"
#include "storage/store/manifest.h"
#include "storage/store/schema.h"
#include "storage/base/status.h"
#include "storage/store/table.h"

/* Region of `row` under the schema's split keys: the number of split keys
 * that sort at or before it. */
size_t bulkload_region_of(const kiln_schema *s, const uint8_t *row, size_t n);

/* Rewrite the cells of rd, whose rows span regions [first, last] of mt (a
 * table or index table of the new manifest, split by mt->schema), as
 * one new store file per region that receives cells, written with the
 * family's compression, block size and bloom (HBase's split of a straddling
 * file, done in one pass for any number of regions). Files are named
 * table_file_name(version, *seq) with *seq advanced, fsynced, and added to
 * mt's regions with load sequence `version`. FileInfo keys other than
 * hfile.*, the encoding and the bloom keys are carried over. *pieces gets
 * the number of files written. On error the pieces written so far are left
 * for the caller's abort to remove. */
kiln_status bulkload_split_file(kiln_table *t, hfile_reader *rd, const schema_family *fam,
                                size_t first, size_t last, uint64_t version, uint32_t *seq,
                                manifest_table *mt, size_t *pieces, kiln_err *err);

#endif
