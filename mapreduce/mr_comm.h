/* mr_comm.h -- the engine's MPI plumbing: agreement, broadcast, progress.
 *
 * Failure handling (MR-MPI's Error::all): a rank that fails keeps taking part
 * in the collectives until the next phase boundary, where mr_comm_agree finds
 * the lowest failed rank and hands its code and message to every rank, so all
 * stop together and rank 0 can print "ERROR on rank R (host): msg". MPI errors
 * themselves stay fatal (MPI_ERRORS_ARE_FATAL): a rank that cannot talk any
 * more cannot take part, and mpirun then ends the job.
 *
 * Progress: ranks other than 0 post small non-blocking messages (at most one
 * in flight, throttled) with their bytes done in the current phase; rank 0
 * drains them while it works and prints Hadoop's " map 40% reduce 0%" line
 * at most once per interval and only when a figure changed. Each phase ends
 * with a final message from every rank, so nothing is left in flight.
 *
 * Thread-safety: MPI is used from one thread.
 */
#ifndef KILN_MR_COMM_H
#define KILN_MR_COMM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "storage/buf.h"
#include "storage/status.h"

typedef struct mr_comm {
    MPI_Comm comm;
    int rank;
    int size;
    char host[MPI_MAX_PROCESSOR_NAME];
} mr_comm;

/* Duplicate comm (the engine's traffic never mixes with the caller's). */
void mr_comm_init(mr_comm *c, MPI_Comm comm);
void mr_comm_free(mr_comm *c);

/* Phase boundary: agree on the outcome. Every rank passes its local status
 * (its err holding the message when not OK). Returns KILN_OK everywhere, or
 * everywhere the code of the lowest failed rank, with err (on every rank)
 * reading "ERROR on rank R (host): msg". */
kiln_status mr_comm_agree(mr_comm *c, kiln_status local, kiln_err *err);

/* Broadcast b's bytes from root (b is replaced on the other ranks). */
void mr_comm_bcast_buf(mr_comm *c, kbuf *b, int root);

/* Element-wise sum (op MPI_SUM) or max (MPI_MAX) of v[0..n) over all ranks,
 * result on every rank. */
void mr_comm_allreduce_u64(mr_comm *c, uint64_t *v, size_t n, MPI_Op op);

/* ------------------------------------------------------------------ progress */

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
double mr_now(void);

#endif
