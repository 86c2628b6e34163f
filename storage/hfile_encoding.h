/* hfile_encoding.h -- private to storage/: data blocks decoded once, when they
 * are read from disk, into the form the block cache holds and iterators walk.
 *
 * A decoded block is one allocation (freed with free()):
 *
 *   hfile_block | hfile_cellpos[count] (data blocks only) | bytes[len]
 *
 * For DATABLK* (NONE) and ROW_INDEX_V1 blocks `bytes` is the block payload and
 * every cellpos points into it; for PREFIX, DIFF and FAST_DIFF blocks `bytes`
 * holds the cells rebuilt flat (key, value, tags) one after the other. Index
 * and bloom chunk blocks keep their payload in `bytes` and have no cellpos.
 *
 * Decoders check every length against the payload and the block's declared
 * unencoded size and return KILN_CORRUPTION ("cell N at payload offset X:
 * ..."); the caller adds the file and block offset. Pure and thread-safe.
 */
#ifndef KILN_HFILE_ENCODING_H
#define KILN_HFILE_ENCODING_H

#include <stddef.h>
#include <stdint.h>

#include "storage/cell.h"
#include "storage/hfile_format.h"
#include "storage/status.h"

typedef struct hfile_cellpos {
    uint32_t key_off;   /* offset of the serialized key in bytes[] */
    uint32_t key_len;
    uint32_t val_len;   /* the value follows the key */
    uint32_t tags_off;
    uint32_t tags_len;
    uint32_t cell_off;  /* where the cell starts in the payload (for messages) */
    uint64_t mvcc;
} hfile_cellpos;

typedef struct hfile_block {
    uint32_t type;              /* hfile_block_type */
    uint32_t count;             /* cells of a data block, entries of an index block */
    size_t len;                 /* bytes of `bytes` */
    const uint8_t *bytes;
    const hfile_cellpos *cells; /* data blocks: count entries, in order */
    size_t alloc;               /* size of the whole allocation (the cache charge) */
    hfile_encoding encoding;    /* data blocks: how the payload was encoded */
} hfile_block;

/* How cells are laid out in a file's data blocks (from its FileInfo). */
typedef struct hfile_cell_format {
    int tags;           /* a tags length (and tags) follows each value */
    int mvcc;           /* an mvcc follows each cell */
    int mvcc_one_byte;  /* NONE blocks: the mvcc is one byte, not decoded (MAX_MEMSTORE_TS_KEY 0) */
} hfile_cell_format;

/* Decode a data block payload (after decompression). encoded: the block is
 * DATABLKE (payload starts with the u16 encoding id). *out is one allocation
 * to free() (or hand to the block cache). A block with no cells is corrupt.
 * KILN_UNSUPPORTED for an unknown encoding id. */
kiln_status hfile_encoding_decode(const uint8_t *payload, size_t n, int encoded,
                                  const hfile_cell_format *fmt, hfile_block **out,
                                  kiln_err *err);

/* Wrap a non-data payload (index or bloom chunk) as a block: one allocation
 * holding a copy of the bytes. */
hfile_block *hfile_encoding_wrap(hfile_block_type type, const uint8_t *payload, size_t n,
                                 uint32_t count);

/* Cell i of a decoded data block; c borrows from b. REQUIRES: i < b->count. */
void hfile_encoding_cell(const hfile_block *b, uint32_t i, kiln_cell *c);

/* The serialized key of cell i. */
static inline kslice
hfile_encoding_key(const hfile_block *b, uint32_t i)
{
    return kslice_make(b->bytes + b->cells[i].key_off, b->cells[i].key_len);
}

#endif
