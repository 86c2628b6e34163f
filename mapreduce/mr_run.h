/* mr_run.h -- sorted runs: the engine's spill, merge and shuffle file format.
 *
 * A run holds records sorted by (partition, key, value), cut into blocks that
 * never span two partitions, so a partition's records are one contiguous
 * section of the file (the section table lives in memory, in mr_run). A block:
 *
 *   OFFSET | SIZE | FIELD
 *   0      | 4    | stored length S of the payload (big-endian)
 *   4      | 4    | raw length U of the payload once decoded
 *   8      | 4    | record count
 *   12     | 1    | codec: CODEC_NONE or CODEC_SNAPPY (compress.h framing)
 *   13     | 3    | zero
 *   16     | 4    | CRC-32C of the S payload bytes
 *   20     | S    | payload
 *
 * Decoded payload: per record, varint key length, varint value length, key
 * bytes, value bytes. A block is cut after the record that takes it past the
 * block size, so a record larger than a block gets a block of its own.
 *
 * A section may be read back from anywhere its bytes were copied to: the
 * iterator reads a logical byte stream made of extents of one file, which is
 * how the shuffle receiver stores what arrives in pieces.
 *
 * Thread-safety: writers and iterators are single-threaded.
 */
#ifndef KILN_MR_RUN_H
#define KILN_MR_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/compress.h"
#include "storage/base/env.h"
#include "storage/base/status.h"

#define MR_RUN_BLOCK_HEADER 20
#define MR_RUN_BLOCK_DEFAULT (64 * 1024)

/* One partition's section of a run file. */
typedef struct mr_run_section {
    uint64_t off;
    uint64_t len;
    uint64_t records;
} mr_run_section;

/* A finished run file. Owns its path and section table, not the file's bytes:
 * mr_run_free leaves the file; mr_run_remove unlinks it. */
typedef struct mr_run {
    char *path;
    uint32_t partitions;
    mr_run_section *sec;     /* [partitions] */
    uint64_t records;
    uint64_t bytes;          /* file size */
} mr_run;

void mr_run_free(mr_run *r);     /* r may be NULL */
/* Unlink the file (ignoring a missing one) and free r. r may be NULL. */
void mr_run_remove(mr_run *r);

typedef struct mr_run_options {
    kiln_codec codec;        /* CODEC_SNAPPY (default) or CODEC_NONE */
    size_t block_size;       /* raw bytes per block; default MR_RUN_BLOCK_DEFAULT */
} mr_run_options;

void mr_run_options_init(mr_run_options *o);

/* The directory a rank's runs go to (spills, merges, the shuffle's receive
 * file) and the sequence that names them. The caller owns path, which must
 * outlive the struct. */
typedef struct mr_run_dir {
    const char *path;
    unsigned seq;
} mr_run_dir;

/* A fresh, NUL-terminated path in d: PATH/<what>-<seq>.run (out is reset). */
void mr_run_dir_path(mr_run_dir *d, const char *what, kbuf *out);

typedef struct mr_run_writer mr_run_writer;

/* Create PATH (failing if it exists) for a run over `partitions` partitions.
 * KILN_INVALID for a codec other than NONE or SNAPPY. */
kiln_status mr_run_writer_open(const char *path, uint32_t partitions, const mr_run_options *o,
                               mr_run_writer **out, kiln_err *err);

/* Append one record. REQUIRES: (part, key, value) sorts at or after the
 * previous record; part < partitions (KILN_INVALID otherwise, never a bad
 * file). Sticky: after a failure every add returns it. */
kiln_status mr_run_writer_add(mr_run_writer *w, uint32_t part, kslice key, kslice value,
                              kiln_err *err);

/* Bytes written to the file so far (payload and headers). */
uint64_t mr_run_writer_bytes(const mr_run_writer *w);

/* Flush, close and free the writer; *out receives the run. On error the file
 * is removed. */
kiln_status mr_run_writer_finish(mr_run_writer *w, mr_run **out, kiln_err *err);

/* Close and remove the file and free the writer. w may be NULL. */
void mr_run_writer_abandon(mr_run_writer *w);

/* ------------------------------------------------------------------ reading */

typedef struct mr_extent {
    uint64_t off;
    uint64_t len;
} mr_extent;

typedef struct mr_run_iter mr_run_iter;

/* Iterate the records in the logical byte stream made of extents ext[0..n) of
 * f. The iterator borrows f (which must outlive it) and copies ext. */
mr_run_iter *mr_run_iter_new(env_file *f, const mr_extent *ext, size_t n);
void mr_run_iter_free(mr_run_iter *it);   /* it may be NULL */

/* Next record: 1 and key/value set (valid until the next call on it), 0 at the
 * end, -1 on error (KILN_CORRUPTION naming the file and offset for a bad
 * checksum, a bad header or a record that overruns its block; KILN_IO). */
int mr_run_iter_next(mr_run_iter *it, kslice *key, kslice *value, kiln_err *err);

/* Stored bytes read so far (for the FILE: Number of bytes read counter). */
uint64_t mr_run_iter_bytes_read(const mr_run_iter *it);

#endif
