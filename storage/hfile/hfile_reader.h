/* hfile_reader.h -- opens and reads HFile v3 files written by HBase 2.x or Kiln.
 *
 * Open reads only the trailer and the load-on-open section (root index, meta
 * index, FileInfo, bloom metadata); data, leaf index and bloom chunk blocks
 * are read on demand through the shared block cache (or a private one when
 * none is given). Every block read is checksum-verified; every error names the
 * file and the block offset.
 *
 * Supported: compression NONE, GZ, SNAPPY, ZSTD, LZ4; data block encodings
 * NONE, PREFIX, DIFF, FAST_DIFF (ROW_INDEX_V1 as well); tags; mvcc; 1..N index
 * levels; ROW and ROWCOL blooms and the delete-family bloom.
 *
 * Thread-safety: a reader is immutable after open and safe to share between
 * threads; an iterator is single-threaded. Cells returned by an iterator are
 * valid until the next call on that iterator.
 *
 * Implemented in hfile_reader_open.c (open, block reads), hfile_reader.c
 * (accessors, blooms, prefetch), hfile_reader_cursor.c (index cursor),
 * hfile_reader_iter.c (iteration) and hfile_reader_check.c (the file check),
 * sharing hfile_reader_int.h.
 */
#ifndef KILN_HFILE_READER_H
#define KILN_HFILE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/block_cache.h"
#include "storage/hfile/bloom.h"
#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_format.h"
#include "storage/hfile/iter.h"
#include "storage/base/status.h"

typedef struct hfile_reader hfile_reader;

/* Open PATH. cache may be NULL (then blocks are read every time, uncached).
 * KILN_NOT_FOUND if absent, KILN_CORRUPTION naming the file and offset if the
 * trailer or a load-on-open block is bad, KILN_UNSUPPORTED for an unknown
 * codec, encoding or an encrypted file. */
kiln_status hfile_reader_open(const char *path, block_cache *cache, hfile_reader **out,
                              kiln_err *err);
void hfile_reader_close(hfile_reader *r);   /* r may be NULL */

const char *hfile_reader_path(const hfile_reader *r);
const hfile_trailer *hfile_reader_trailer(const hfile_reader *r);
const hfile_fileinfo *hfile_reader_fileinfo(const hfile_reader *r);
uint64_t hfile_reader_file_size(const hfile_reader *r);
uint64_t hfile_reader_entry_count(const hfile_reader *r);
hfile_encoding hfile_reader_encoding(const hfile_reader *r);
kiln_bloom_type hfile_reader_bloom_type(const hfile_reader *r);
int hfile_reader_has_delete_family_bloom(const hfile_reader *r);
/* Bytes held by the reader itself (indexes, bloom metadata, FileInfo). */
size_t hfile_reader_memory(const hfile_reader *r);

/* First and last cell keys (serialized KeyValue keys) or empty slices for an
 * empty file. Valid while the reader is open. */
kslice hfile_reader_first_key(const hfile_reader *r);
kslice hfile_reader_last_key(const hfile_reader *r);

/* Bloom checks: 1 = may contain (or no bloom of that kind), 0 = certainly not.
 * may_have_delete_family also answers 0 when FileInfo's DELETE_FAMILY_COUNT
 * is 0. An I/O or checksum error reading a chunk sets err and returns 1. */
int hfile_reader_may_contain_row(hfile_reader *r, const uint8_t *row, size_t n, kiln_err *err);
int hfile_reader_may_contain_rowcol(hfile_reader *r, const uint8_t *row, size_t rn,
                                    const uint8_t *qual, size_t qn, kiln_err *err);
int hfile_reader_may_have_delete_family(hfile_reader *r, const uint8_t *row, size_t n,
                                        kiln_err *err);

/* Read, verify and fully check the file: every block's header and checksums,
 * decompression and decoding of every data block, cell order across the
 * whole file, the index (every entry points at a block whose first key is
 * >= the entry key and > the previous block's last key), entry count, and
 * that every row (or row+qualifier) tests positive in the bloom. Returns the
 * first problem found, naming the offset. cells_out may be NULL. */
kiln_status hfile_reader_check(hfile_reader *r, uint64_t *cells_out, kiln_err *err);

/* Prefetch (HBase's prefetch on open): read the data blocks into the block
 * cache in file order, skipping those already there, until all are cached,
 * *budget bytes were added (the bytes added are taken off *budget), or
 * stop(arg) returns non-zero (asked every 16 blocks; stop may be NULL). Only
 * into free room: a block whose cache shard is full is left out rather than
 * evicting another. Does nothing for a reader with a private cache. A bad
 * block ends it with the reader's usual error. */
kiln_status hfile_reader_prefetch(hfile_reader *r, uint64_t *budget, int (*stop)(void *),
                                  void *arg, kiln_err *err);
/* Bytes of this file's blocks now in the block cache (0 with a private cache). */
uint64_t hfile_reader_cached_bytes(const hfile_reader *r);
/* Drop this file's data blocks from the shared block cache, keeping the ones
 * pinned (its index and bloom, blocks a reader holds); the bytes freed. */
uint64_t hfile_reader_drop_cached(hfile_reader *r);

/* ------------------------------------------------------------------ iteration */

typedef struct hfile_iter hfile_iter;

hfile_iter *hfile_iter_new(hfile_reader *r);
void hfile_iter_free(hfile_iter *it);   /* it may be NULL */

/* Position at the first / last cell. Invalid if the file is empty. */
kiln_status hfile_iter_seek_first(hfile_iter *it, kiln_err *err);
kiln_status hfile_iter_seek_last(hfile_iter *it, kiln_err *err);
/* Position at the first cell >= key (cell order); invalid if none. */
kiln_status hfile_iter_seek(hfile_iter *it, const kiln_cell *key, kiln_err *err);
/* Position at the last cell <= key (for reverse scans); invalid if none. */
kiln_status hfile_iter_seek_for_prev(hfile_iter *it, const kiln_cell *key, kiln_err *err);
kiln_status hfile_iter_next(hfile_iter *it, kiln_err *err);
kiln_status hfile_iter_prev(hfile_iter *it, kiln_err *err);
int hfile_iter_valid(const hfile_iter *it);
/* The current cell. REQUIRES: valid. Valid until the next call on it. */
const kiln_cell *hfile_iter_cell(const hfile_iter *it);

/* The rows of the data block index entries, read from the index alone (no
 * data block is read): each lies between the previous block's last row and
 * its block's first row (a writer may shorten index keys). Every block's row
 * when the file has at most max blocks, else max rows at evenly spaced
 * blocks, in file order (repeats possible), each appended to rows as
 * [be32 length][bytes]; *n their count. For cutting a large key range into
 * pieces of similar size. */
kiln_status hfile_reader_block_rows(hfile_reader *r, size_t max, kbuf *rows, size_t *n,
                                    kiln_err *err);

/* ------------------------------------------------------------------ kiln iterators */

/* The file as a kiln_iter (iter.h), for merges and row assembly: the
 * iterator above behind the common interface (its errors become the kiln
 * iterator's sticky status). hfile_iter stays the direct form for callers
 * that read one file. Close it before the reader. */
kiln_iter *hfile_reader_iter(hfile_reader *r);

/* A kiln_iter over the cells of data block n (0 = the first, in index
 * order), pinning the block until it is closed. KILN_NOT_FOUND past the last
 * block; the reader's KILN_CORRUPTION / KILN_IO, naming the file and offset,
 * for a bad block (then *out is NULL). */
kiln_status hfile_reader_block_iter(hfile_reader *r, uint64_t n, kiln_iter **out,
                                    kiln_err *err);

#endif
