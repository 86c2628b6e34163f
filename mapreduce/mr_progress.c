/* mr_progress.c -- progress messages and rank 0's progress line.
 *
 * Progress messages carry (phase, units done) as two uint64; the final one of
 * a phase has MR_PROGRESS_FINAL set in the phase word. MPI keeps messages
 * from one sender with one tag in order, so once rank 0 has every final
 * message no progress message of that phase is still in flight.
 */
#include "mapreduce/mr_progress.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MR_TAG_PROGRESS 7301
#define MR_PROGRESS_FINAL 0x100u

double
mr_progress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void
mr_progress_init(mr_progress *p, mr_comm *c, FILE *out, const char *prefix, double interval_s)
{
    memset(p, 0, sizeof *p);
    p->c = c;
    p->out = c->rank == 0 ? out : NULL;
    p->prefix = prefix;
    p->interval_s = interval_s;
    p->printed_map = -1;
    p->printed_reduce = -1;
    p->done = kiln_calloc((size_t)c->size, sizeof *p->done);
}

void
mr_progress_free(mr_progress *p)
{
    free(p->done);
    p->done = NULL;
}

static void
mr_progress_print(mr_progress *p, int force)
{
    if (p->out == NULL)
        return;
    uint64_t sum = 0;
    for (int r = 0; r < p->c->size; r++)
        sum += p->done[r];
    double frac = p->total ? (double)sum / (double)p->total : 1.0;
    if (frac > 1.0)
        frac = 1.0;
    int map = 100, reduce = 0;
    switch (p->phase) {
    case MR_PHASE_MAP:     map = (int)(frac * 100.0); break;
    case MR_PHASE_SHUFFLE: reduce = (int)(frac * 33.0); break;
    case MR_PHASE_REDUCE:  reduce = 33 + (int)(frac * 67.0); break;
    case MR_PHASE_DONE:    reduce = 100; break;
    }
    if (map < p->printed_map)
        map = p->printed_map;
    if (reduce < p->printed_reduce)
        reduce = p->printed_reduce;
    if (map == p->printed_map && reduce == p->printed_reduce)
        return;
    double now = mr_progress_now();
    if (!force && now - p->last_print < p->interval_s)
        return;
    fprintf(p->out, "%s map %d%% reduce %d%%\n", p->prefix, map, reduce);
    fflush(p->out);
    p->last_print = now;
    p->printed_map = map;
    p->printed_reduce = reduce;
}

void
mr_progress_begin(mr_progress *p, mr_phase phase, uint64_t total)
{
    uint64_t t = total;
    mr_comm_allreduce_u64(p->c, &t, 1, MPI_SUM);
    p->phase = phase;
    p->total = t;
    p->finals = 0;
    memset(p->done, 0, (size_t)p->c->size * sizeof *p->done);
    if (phase == MR_PHASE_MAP || phase == MR_PHASE_DONE)
        mr_progress_print(p, 1);
}

static void
mr_progress_drain(mr_progress *p)
{
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MR_TAG_PROGRESS, p->c->comm, &flag, &st);
        if (!flag)
            return;
        uint64_t m[2];
        MPI_Recv(m, 2, MPI_UINT64_T, st.MPI_SOURCE, MR_TAG_PROGRESS, p->c->comm, MPI_STATUS_IGNORE);
        if ((m[0] & ~(uint64_t)MR_PROGRESS_FINAL) != (uint64_t)p->phase)
            continue;
        p->done[st.MPI_SOURCE] = m[1];
        if (m[0] & MR_PROGRESS_FINAL)
            p->finals++;
    }
}

void
mr_progress_update(mr_progress *p, uint64_t done)
{
    double now = mr_progress_now();
    if (p->c->rank == 0) {
        p->done[0] = done;
        if (now - p->last_send < 0.05)
            return;
        p->last_send = now;
        mr_progress_drain(p);
        mr_progress_print(p, 0);
        return;
    }
    if (now - p->last_send < p->interval_s / 4)
        return;
    p->last_send = now;
    if (p->pending) {
        int flag = 0;
        MPI_Test(&p->req, &flag, MPI_STATUS_IGNORE);
        if (!flag)
            return;
        p->pending = 0;
    }
    p->msg[0] = (uint64_t)p->phase;
    p->msg[1] = done;
    MPI_Isend(p->msg, 2, MPI_UINT64_T, 0, MR_TAG_PROGRESS, p->c->comm, &p->req);
    p->pending = 1;
}

void
mr_progress_set_global(mr_progress *p, uint64_t done_all)
{
    if (p->c->rank != 0)
        return;
    memset(p->done, 0, (size_t)p->c->size * sizeof *p->done);
    p->done[0] = done_all;
    mr_progress_print(p, 0);
}

void
mr_progress_end(mr_progress *p, uint64_t done)
{
    if (p->c->rank != 0) {
        if (p->pending)
            MPI_Wait(&p->req, MPI_STATUS_IGNORE);
        p->pending = 0;
        uint64_t m[2] = {(uint64_t)p->phase | MR_PROGRESS_FINAL, done};
        MPI_Send(m, 2, MPI_UINT64_T, 0, MR_TAG_PROGRESS, p->c->comm);
        return;
    }
    if (p->phase != MR_PHASE_SHUFFLE)
        p->done[0] = done;
    while (p->finals < p->c->size - 1) {
        uint64_t m[2];
        MPI_Status st;
        MPI_Recv(m, 2, MPI_UINT64_T, MPI_ANY_SOURCE, MR_TAG_PROGRESS, p->c->comm, &st);
        if ((m[0] & ~(uint64_t)MR_PROGRESS_FINAL) != (uint64_t)p->phase)
            continue;
        if (p->phase != MR_PHASE_SHUFFLE)
            p->done[st.MPI_SOURCE] = m[1];
        if (m[0] & MR_PROGRESS_FINAL)
            p->finals++;
    }
    mr_progress_print(p, 1);
}
