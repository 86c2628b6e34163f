/* hfile_encoding.h -- private to storage/: decoding of HFile data blocks,
 * NONE (DATABLK*) and the DATABLKE encodings PREFIX, DIFF, FAST_DIFF and
 * ROW_INDEX_V1, into the decoded block the block cache holds (hfile_block.h).
 *
 * Decoders check every length against the payload and the block's declared
 * unencoded size and return KILN_CORRUPTION ("cell N at payload offset X:
 * ..."); the caller adds the file and block offset. Pure and thread-safe.
 */
#ifndef KILN_HFILE_ENCODING_H
#define KILN_HFILE_ENCODING_H

#include <stddef.h>
#include <stdint.h>

#include "storage/hfile/hfile_block.h"
#include "storage/hfile/hfile_format.h"
#include "storage/base/status.h"

/* How cells are laid out in a file's data blocks (from its FileInfo). */
typedef struct hfile_cell_format {
    int tags;           /* a tags length (and tags) follows each value */
    int mvcc;           /* an mvcc follows each cell */
    int mvcc_one_byte;  /* NONE blocks: the mvcc is one byte, not decoded (MAX_MEMSTORE_TS_KEY 0) */
} hfile_cell_format;

/* Decode a data block payload (after decompression). encoded: the block is
 * DATABLKE (payload starts with the u16 encoding id). *out is one allocation
 * to hfile_block_free (or hand to block_cache_insert_block). A block with no cells is corrupt.
 * KILN_UNSUPPORTED for an unknown encoding id. */
kiln_status hfile_encoding_decode(const uint8_t *payload, size_t n, int encoded,
                                  const hfile_cell_format *fmt, hfile_block **out,
                                  kiln_err *err);

#endif
