/* mr_comm.c -- agreement at phase boundaries and broadcasts. */
#include "mapreduce/mr_comm.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void
mr_comm_init(mr_comm *c, MPI_Comm comm)
{
    memset(c, 0, sizeof *c);
    MPI_Comm_dup(comm, &c->comm);
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    int len = 0;
    MPI_Get_processor_name(c->host, &len);
    c->host[len < (int)sizeof c->host ? len : (int)sizeof c->host - 1] = '\0';
}

void
mr_comm_free(mr_comm *c)
{
    if (c->comm != MPI_COMM_NULL)
        MPI_Comm_free(&c->comm);
}

typedef struct mr_comm_failure {
    int code;
    char host[MPI_MAX_PROCESSOR_NAME];
    char msg[STATUS_MSG_MAX];
} mr_comm_failure;

kiln_status
mr_comm_agree(mr_comm *c, kiln_status local, kiln_err *err)
{
    int mine = local != KILN_OK ? c->rank : INT_MAX;
    int low = INT_MAX;
    MPI_Allreduce(&mine, &low, 1, MPI_INT, MPI_MIN, c->comm);
    if (low == INT_MAX)
        return KILN_OK;
    mr_comm_failure f;
    memset(&f, 0, sizeof f);
    if (c->rank == low) {
        f.code = (int)local;
        snprintf(f.host, sizeof f.host, "%s", c->host);
        if (err != NULL && err->msg[0] != '\0')
            snprintf(f.msg, sizeof f.msg, "%s", err->msg);
        else
            snprintf(f.msg, sizeof f.msg, "%s", status_name(local));
    }
    MPI_Bcast(&f, (int)sizeof f, MPI_BYTE, low, c->comm);
    f.host[sizeof f.host - 1] = '\0';
    f.msg[sizeof f.msg - 1] = '\0';
    if (err != NULL) {
        status_clear(err);
        status_set(err, (kiln_status)f.code, "ERROR on rank %d (%s): %s", low, f.host, f.msg);
    }
    return (kiln_status)f.code;
}

void
mr_comm_bcast_buf(mr_comm *c, kbuf *b, int root)
{
    uint64_t n = b->len;
    MPI_Bcast(&n, 1, MPI_UINT64_T, root, c->comm);
    if (c->rank != root) {
        buf_reset(b);
        buf_reserve(b, (size_t)n);
        b->len = (size_t)n;
    }
    uint64_t off = 0;
    while (off < n) {
        uint64_t piece = n - off > (1u << 30) ? (1u << 30) : n - off;
        MPI_Bcast(b->data + off, (int)piece, MPI_BYTE, root, c->comm);
        off += piece;
    }
}

void
mr_comm_allreduce_u64(mr_comm *c, uint64_t *v, size_t n, MPI_Op op)
{
    if (n > 0)
        MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, op, c->comm);
}

void
mr_comm_say(const mr_comm *c, const char *fmt, ...)
{
    if (c->rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("kiln-mr: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
