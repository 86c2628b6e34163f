/* mr_progress.h -- Hadoop-style job progress over MPI.
 *
 * Ranks other than 0 post small non-blocking messages (at most one in
 * flight, throttled) with their units done in the current phase; rank 0
 * drains them while it works and prints Hadoop's " map 40% reduce 0%" line at
 * most once per interval and only when a figure changed. Each phase ends with
 * a final message from every rank, so nothing is left in flight.
 *
 * Thread-safety: MPI is used from one thread.
 */
#ifndef KILN_MR_PROGRESS_H
#define KILN_MR_PROGRESS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mapreduce/mr_comm.h"

typedef enum mr_phase {
    MR_PHASE_MAP = 0,
    MR_PHASE_SHUFFLE,
    MR_PHASE_REDUCE,
    MR_PHASE_DONE
} mr_phase;

typedef struct mr_progress {
    mr_comm *c;
    FILE *out;               /* NULL: silent */
    const char *prefix;
    double interval_s;
    mr_phase phase;
    uint64_t total;          /* rank 0: work of the phase over all ranks */
    uint64_t *done;          /* rank 0: per rank */
    int finals;              /* rank 0: final messages received this phase */
    double last_send;
    double last_print;
    int printed_map;
    int printed_reduce;
    int pending;
    MPI_Request req;
    uint64_t msg[2];
} mr_progress;

/* out is where rank 0 prints (NULL for silence); interval in seconds. */
void mr_progress_init(mr_progress *p, mr_comm *c, FILE *out, const char *prefix,
                      double interval_s);
void mr_progress_free(mr_progress *p);

/* Start a phase whose total work over all ranks is `total` (rank 0 uses it).
 * Collective. */
void mr_progress_begin(mr_progress *p, mr_phase phase, uint64_t total);

/* This rank has done `done` units of the phase; rank 0 also drains and prints.
 * Cheap enough to call every few hundred KiB of work. */
void mr_progress_update(mr_progress *p, uint64_t done);

/* Rank 0 in a collective phase (the shuffle): set the global figure directly. */
void mr_progress_set_global(mr_progress *p, uint64_t done_all);

/* End the phase: collective. Rank 0 prints the final figure of the phase. */
void mr_progress_end(mr_progress *p, uint64_t done);

/* Seconds on a monotonic clock. */
double mr_progress_now(void);

#endif
