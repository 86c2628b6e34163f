/* mr_comm.h -- the engine's MPI plumbing: agreement and broadcast.
 *
 * Failure handling (MR-MPI's Error::all): a rank that fails keeps taking part
 * in the collectives until the next phase boundary, where mr_comm_agree finds
 * the lowest failed rank and hands its code and message to every rank, so all
 * stop together and rank 0 can print "ERROR on rank R (host): msg". MPI errors
 * themselves stay fatal (MPI_ERRORS_ARE_FATAL): a rank that cannot talk any
 * more cannot take part, and mpirun then ends the job.
 *
 * Thread-safety: MPI is used from one thread.
 */
#ifndef KILN_MR_COMM_H
#define KILN_MR_COMM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"

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

/* Rank 0 only: print "kiln-mr: " and the message as one line on stderr. */
void mr_comm_say(const mr_comm *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
