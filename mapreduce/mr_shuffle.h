/* mr_shuffle.h -- moving each rank's map output partitions to the ranks that
 * reduce them, in bounded MPI rounds (the wire format is in mr_shuffle.c).
 *
 * The caller hands what the shuffle needs in an mr_shuffle_params; the
 * shuffle knows nothing of the job. Its result (the shuffle state the reduce
 * phase reads) names, per partition reduced here and per source rank, the
 * extents holding that source's records.
 *
 * Thread-safety: MPI is used from one thread; collective.
 */
#ifndef KILN_MR_SHUFFLE_H
#define KILN_MR_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

#include "mapreduce/mr_comm.h"
#include "mapreduce/mr_counters.h"
#include "mapreduce/mr_progress.h"
#include "mapreduce/mr_run.h"
#include "storage/base/env.h"
#include "storage/base/status.h"

/* What the shuffle is given; every pointer is borrowed for the call. */
typedef struct mr_shuffle_params {
    mr_comm *comm;
    uint32_t partitions;
    size_t round_bytes;          /* per round over all destinations (kiln.shuffle.mb) */
    mr_run_dir *spill;           /* where the receive file goes */
    mr_counters *counters;
    mr_progress *progress;
    /* Called before round k (0, 1, ...) on every rank; may be NULL. */
    void (*on_round)(void *arg, int64_t round);
    void *on_round_arg;
} mr_shuffle_params;

/* One source rank's records of one partition: extents of a file (the receive
 * file, or the rank's own map output). */
typedef struct mr_segment {
    env_file *f;
    mr_extent *ext;
    size_t n;
    size_t cap;
    uint64_t bytes;
} mr_segment;

/* Shuffle state, written by mr_shuffle_run and read by the reduce phase:
 * for each partition this rank reduces, one segment per source rank. */
typedef struct mr_shuffle_result {
    uint32_t first;              /* first partition reduced here */
    uint32_t count;              /* partitions reduced here */
    int ranks;                   /* source ranks per partition */
    mr_segment *seg;             /* [count * ranks]: seg[(p - first) * ranks + src] */
    size_t n_seg;
    env_file *recv;              /* the receive file, opened for reading */
    env_file *mof;               /* the own map output, opened for reading */
    char *recv_path;
} mr_shuffle_result;

/* Partitions reduced by rank r: [first, first + count). */
void mr_shuffle_owned(uint32_t partitions, int ranks, int r, uint32_t *first, uint32_t *count);

/* Move the partitions of the local map output (mof, may hold no records) to
 * the ranks that reduce them. Collective; a local failure is carried to every
 * rank by the round's reduction and the shuffle stops everywhere. */
kiln_status mr_shuffle_run(const mr_shuffle_params *p, const mr_run *mof, mr_shuffle_result *out,
                           kiln_err *err);
/* Close the files and remove the receive file. */
void mr_shuffle_result_free(mr_shuffle_result *r);

#endif
