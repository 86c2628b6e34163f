/* store_compact.h -- merging the cells of one region and family (memstore
 * snapshots, store files) into one HFile: the engine under a flush, a minor
 * and a major compaction, and the size policy that picks a minor one.
 *
 * The inputs are kiln_iters (a memstore's, an HFile's) merged by iter_merge.h
 * with their sequence numbers: of cells with identical keys only the one
 * from the larger sequence is written (what a read keeps). Output cells are
 * in HBase order with mvcc 0; which input the survivor of identical keys
 * came from is carried by the output file's own sequence number (below).
 * What else is dropped depends on the kind, always by the read semantics of
 * store_view.h (markers mask by timestamp whatever file holds them; versions
 * count only visible Puts; TTL drops Puts older than now - TTL):
 *
 *   FLUSH  nothing else: every Put and delete marker is written.
 *   MINOR  (HBase COMPACT_RETAIN_DELETES) delete markers are kept; Puts
 *          masked by a marker among the inputs are dropped, and so are
 *          expired cells, Puts and markers alike. Versions beyond the
 *          family's VERSIONS are kept: a marker in a file outside the
 *          compaction, or a time-range read, can make an older version
 *          visible again, so dropping it is not safe in a partial merge.
 *   MAJOR  every delete marker and everything it masks, expired cells, and
 *          each column's visible Puts beyond the family's VERSIONS.
 *
 * Why MINOR is safe when other files of the store are not in the merge: a
 * kept marker still masks the Puts it masked, in every read and whatever
 * other files add (a masked Put never counts as a version or shows in a time
 * range); a Put or marker older than now - TTL masks or shows nothing to a
 * read at now or later (a marker masks only Puts at or below its own
 * timestamp, which the same family TTL has expired too). So the output,
 * alone or read with any other files, reads as the inputs did for every
 * read (columns, versions, time range) whose clock is at or after now_ms.
 * A MAJOR output reads as its inputs for reads without a time range, asking
 * at most the family's VERSIONS, at or after now_ms -- it must hold every
 * file of the region and family, since the markers it drops mask nothing
 * outside it anymore. A FLUSH output reads as its inputs for every read.
 *
 * Sequence numbers: the caller gives the output the largest input seq, and
 * the inputs of a MINOR merge must be a contiguous run of the store's files
 * by seq (no file outside the merge with a seq between two inputs'), so that
 * identical keys from outside files still win or lose as before.
 *
 * The file is written as bulk loads write store files: the family's
 * compression, block size and bloom type (hfile_writer.h writes NONE data
 * block encoding, as every Kiln store file has), fsynced; FileInfo carries
 * MAJOR_COMPACTION_KEY (1 for MAJOR only), EXCLUDE_FROM_MINOR_COMPACTION (0)
 * and MAX_SEQ_ID_KEY. Syncing the directory and publishing the file are the
 * caller's.
 *
 * Thread-safety: store_compact_write uses its inputs and nothing shared;
 * calls on different inputs may run in parallel. store_compact_pick is pure.
 * Ownership: the inputs stay the caller's (borrowed for the call).
 */
#ifndef KILN_STORE_COMPACT_H
#define KILN_STORE_COMPACT_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/status.h"
#include "storage/hfile/iter.h"
#include "storage/store/schema.h"

typedef enum store_compact_kind {
    STORE_COMPACT_FLUSH,     /* a memstore snapshot: one copy of identical keys */
    STORE_COMPACT_MINOR,     /* some files: keep markers, drop masked and expired */
    STORE_COMPACT_MAJOR      /* every file: drop markers, masked, expired, versions */
} store_compact_kind;

/* One input: a cell iterator over the region's cells of the family, and the
 * sequence number of its load (larger wins on identical keys). */
typedef struct store_compact_input {
    kiln_iter *it;
    uint64_t seq;
} store_compact_input;

typedef struct store_compact_opts {
    store_compact_kind kind;
    const kiln_schema *schema;
    size_t family;               /* index into schema->families */
    int64_t now_ms;              /* clock for TTL; 0 = the current time */
    uint64_t seq;                /* written as MAX_SEQ_ID_KEY; 0 = the largest input seq */
    uint64_t bytes_per_sec;      /* write rate limit over output bytes; 0 = none */
    int (*stop)(void *arg);      /* non-zero: give up (KILN_CANCELLED); may be NULL */
    void *stop_arg;
} store_compact_opts;

/* Fill o with the defaults: FLUSH, family 0, now, no limit, no stop. */
void store_compact_opts_init(store_compact_opts *o);

typedef struct store_compact_stats {
    uint64_t cells_in;           /* cells read from the inputs */
    uint64_t cells_out;          /* cells written */
    uint64_t duplicates_dropped; /* older copies of identical keys */
    uint64_t deletes_dropped;    /* markers dropped (MAJOR) and Puts they masked */
    uint64_t versions_dropped;   /* visible Puts beyond VERSIONS (MAJOR) */
    uint64_t expired_dropped;    /* cells past the family's TTL */
    uint64_t bytes_out;          /* size of the output file */
    double secs;                 /* wall time of the call, sleeps included */
    double throttle_secs;        /* of which slept to keep under bytes_per_sec */
} store_compact_stats;

/* Merge the n inputs and write the cells that survive o->kind to a new HFile
 * at path (created or truncated, fsynced). An empty result is an HFile with
 * no cells. With bytes_per_sec > 0 it sleeps after each data block (and
 * after the file is finished) until the bytes written so far took at least
 * bytes / bytes_per_sec seconds. stop is asked after every data block, every
 * 4096 input cells and every 100 ms of a throttle sleep. st may be NULL; it
 * is filled on error too, as far as the merge got.
 * REQUIRES: each input in HBase order, over cells of the family only. The
 * inputs are sought to their first cell here and left where the merge ends
 * (seek them again to reuse them).
 * Returns KILN_INVALID for bad options (no schema, family out of range, n 0
 * with a NULL in) or a cell of another family or of type Minimum / Maximum;
 * KILN_CANCELLED when stop said so; an input's or the writer's error (with
 * its message) otherwise. On any error no file is left at path. */
kiln_status store_compact_write(const store_compact_input *in, size_t n,
                                const store_compact_opts *o, const char *path,
                                store_compact_stats *st, kiln_err *err);

/* ------------------------------------------------------------------ policy */

/* HBase's ExploringCompactionPolicy, simplified (no off-peak ratio, no
 * size-tiered age, no explicit major compactions). */
typedef struct store_compact_policy {
    size_t min_files;            /* hbase.hstore.compaction.min; default 3 */
    size_t max_files;            /* hbase.hstore.compaction.max; default 10 */
    double ratio;                /* hbase.hstore.compaction.ratio; default 1.2 */
    uint64_t min_size;           /* a run totalling less skips the ratio test;
                                    default 0 (HBase: the memstore flush size) */
    uint64_t max_size;           /* a run totalling more is never picked; 0 = none */
    size_t blocking_files;       /* at this many files, a stuck store still merges
                                    its cheapest min_files; default 16, 0 = never */
} store_compact_policy;

void store_compact_policy_init(store_compact_policy *p);

/* Choose the files of a minor compaction among n store files whose sizes are
 * given newest first: a contiguous run sizes[*first .. *first + count).
 * Every run of min_files..max_files files is a candidate if its total is at
 * most max_size (when set) and either its total is below min_size or every
 * file in it is at most ratio times the sum of the others. The candidate
 * with the most files wins, then the smallest total, then the newest. With
 * no candidate and n >= blocking_files, the min_files run with the smallest
 * total is chosen (HBase's escape for a store that would otherwise block
 * writes). Returns count, or 0 (and *first 0) for none. */
size_t store_compact_pick(const uint64_t *sizes, size_t n, const store_compact_policy *p,
                          size_t *first);

#endif
