/* hfile_writer.h -- writes one HFile v3 that HBase 2.x reads (and bulk-loads).
 *
 * Cells must be added in HBase order (cell.h); an out-of-order cell is an
 * error (KILN_INVALID, "key not lexically larger than previous"), never a
 * corrupt file. The writer keeps a sticky status: after the first failure add
 * is a no-op that returns it, and finish reports it. Call finish or abandon,
 * never both; either frees the writer.
 *
 * The file is written as HBase's HFileOutputFormat2 does: NONE encoding,
 * tags length and mvcc (0) on every cell, CRC32C per 16 KiB, a single-level
 * root index that grows leaf/intermediate levels past 128 KiB of index,
 * a compound bloom (ROW or ROWCOL), FileInfo with every key HBase requires
 * plus the bulk-load keys, and the protobuf trailer.
 *
 * Pipeline (threads = 1, the default): the caller serializes cells into a
 * batch of blocks; when a data block closes, it and the inline blocks after
 * it (index leaf, bloom chunks) join the batch, and a batch of batch_bytes
 * goes to one background thread that compresses, checksums and appends it
 * while the caller fills the next. Index entries get their offsets when the
 * thread hands a written batch back, so the file is byte-for-byte the one
 * threads = 0 writes. The thread starts with the first batch (a file of one
 * batch never starts it) and ends in finish or abandon. A write error on the
 * thread is returned by the next add or by finish, naming the file and the
 * block's offset.
 *
 * Memory: one data block (threads = 0) or five batches (threads = 1), the
 * pending index chunk, the open bloom chunk and the root index; nothing grows
 * with the number of cells beyond the root index.
 *
 * Thread-safety: a writer is used by one thread at a time (its own
 * background thread aside).
 */
#ifndef KILN_HFILE_WRITER_H
#define KILN_HFILE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "storage/hfile/bloom.h"
#include "storage/hfile/cell.h"
#include "storage/base/compress.h"
#include "storage/base/status.h"

typedef struct hfile_writer_options {
    kiln_codec codec;            /* default CODEC_NONE */
    size_t block_size;           /* unencoded bytes per data block; default 65536 */
    kiln_bloom_type bloom;       /* default BLOOM_ROW */
    int include_tags;            /* write the u16 tags length per cell; default 1 */
    int include_mvcc;            /* write the mvcc vlong per cell; default 1 */
    size_t index_block_max;      /* hfile.index.block.max.size; default 131072 */
    size_t bloom_chunk_bytes;    /* io.storefile.bloom.block.size; default 131072 */
    double bloom_error_rate;     /* default 0.01 */
    int64_t create_time_ms;      /* hfile.CREATE_TIME_TS and BULKLOAD_TIMESTAMP; 0 = now */
    int bulkload_info;           /* add BULKLOAD_TIMESTAMP, MAJOR_COMPACTION_KEY, ...; default 1 */
    const char *source_task;     /* BULKLOAD_SOURCE_TASK, or NULL */
    int sync;                    /* fsync the file in finish; default 1 */
    int threads;                 /* 1: compress, checksum and write closed blocks on a
                                  * background thread; 0: on the caller's; default 1 */
    size_t batch_bytes;          /* threads = 1: closed blocks handed over at a time
                                  * (uncompressed bytes; 0 = every block); default 262144 */
} hfile_writer_options;

/* Fill o with the defaults above. */
void hfile_writer_options_init(hfile_writer_options *o);

typedef struct hfile_writer hfile_writer;

typedef struct hfile_writer_stats {
    uint64_t entries;
    uint64_t data_blocks;
    uint64_t file_size;
    uint64_t raw_bytes;          /* sum of key + value bytes added */
    uint32_t index_levels;
} hfile_writer_stats;

/* Create PATH (truncating) and return a writer. KILN_INVALID for bad options
 * (block size 0, a codec Kiln cannot write). */
kiln_status hfile_writer_open(const char *path, const hfile_writer_options *opts,
                              hfile_writer **out, kiln_err *err);

/* Append one cell. REQUIRES: cell sorts at or after the previous one. */
kiln_status hfile_writer_add(hfile_writer *w, const kiln_cell *cell, kiln_err *err);

/* Add a user FileInfo entry (keys starting with "hfile." are reserved:
 * KILN_INVALID). Must be called before finish. */
kiln_status hfile_writer_append_fileinfo(hfile_writer *w, const char *key, const void *value,
                                         size_t vlen, kiln_err *err);

/* Write the remaining blocks, the load-on-open section and the trailer, sync
 * and close the file, and free the writer. stats may be NULL. On error the
 * partial file is removed. */
kiln_status hfile_writer_finish(hfile_writer *w, hfile_writer_stats *stats, kiln_err *err);

/* Close and remove the partial file and free the writer. w may be NULL. */
void hfile_writer_abandon(hfile_writer *w);

/* Entries added so far, and bytes written so far (to roll files by size).
 * The bytes grow with every data block that closes; with the thread, closed
 * blocks not yet written count at their uncompressed size until they are. */
uint64_t hfile_writer_entries(const hfile_writer *w);
uint64_t hfile_writer_bytes(const hfile_writer *w);

#endif
