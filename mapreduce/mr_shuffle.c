/* mr_shuffle.c -- moving map output partitions to the ranks that reduce them.
 *
 * Rank r reduces the contiguous partitions [R*r/N, R*(r+1)/N). Every rank
 * streams, for each other rank, the sections of its map output run that the
 * other rank reduces, in bounded rounds: each round sends at most `quota`
 * bytes to each destination (kiln.shuffle.mb split over the ranks) with one
 * MPI_Alltoall of counts and one MPI_Alltoallv of data, so memory stays at
 * two round buffers however large the partitions are. A message is a series
 * of pieces:
 *
 *   SIZE | FIELD
 *   4    | partition (big-endian)
 *   4    | length L (big-endian)
 *   L    | the next L bytes of that partition's section (any cut: the run
 *        | iterator reads blocks across piece boundaries)
 *
 * The receiver appends pieces to one local receive file and records, per
 * (partition, source), the extents they landed in. Sections for the rank
 * itself never travel: its segments point into its own map output file.
 * Each round ends with an allreduce of (bytes left, failures), which is both
 * the termination test and how a local failure stops every rank.
 */
#include "mapreduce/mr_shuffle.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/base/coding.h"

#define MR_SHUFFLE_MIN_QUOTA (64 * 1024)
#define MR_SHUFFLE_PIECE_HEADER 8

void
mr_shuffle_owned(uint32_t partitions, int ranks, int r, uint32_t *first, uint32_t *count)
{
    uint64_t a = (uint64_t)partitions * (uint64_t)r / (uint64_t)ranks;
    uint64_t b = (uint64_t)partitions * (uint64_t)(r + 1) / (uint64_t)ranks;
    *first = (uint32_t)a;
    *count = (uint32_t)(b - a);
}

static void
mr_shuffle_segment_add(mr_segment *s, env_file *f, uint64_t off, uint64_t len)
{
    s->f = f;
    s->bytes += len;
    if (s->n > 0 && s->ext[s->n - 1].off + s->ext[s->n - 1].len == off) {
        s->ext[s->n - 1].len += len;
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4;
        s->ext = kiln_realloc(s->ext, s->cap * sizeof *s->ext);
    }
    s->ext[s->n].off = off;
    s->ext[s->n].len = len;
    s->n++;
}

void
mr_shuffle_result_free(mr_shuffle_result *r)
{
    if (r == NULL)
        return;
    if (r->seg != NULL) {
        for (size_t i = 0; i < r->n_seg; i++)
            free(r->seg[i].ext);
        free(r->seg);
    }
    env_close(r->recv, NULL);
    env_close(r->mof, NULL);
    if (r->recv_path != NULL) {
        unlink(r->recv_path);
        free(r->recv_path);
    }
    memset(r, 0, sizeof *r);
}

/* Per destination: where its stream of sections stands. */
typedef struct mr_shuffle_cursor {
    uint32_t part;           /* current partition */
    uint32_t end;            /* one past its last partition */
    uint64_t off;            /* bytes of the current section already sent */
} mr_shuffle_cursor;

/* Fill dst's part of the send buffer; returns the bytes placed or -1. */
static long
mr_shuffle_fill(const mr_shuffle_params *sp, const mr_run *mof, env_file *mf, mr_shuffle_cursor *cur,
                uint8_t *dst, size_t quota, uint64_t *remaining, kiln_err *err)
{
    size_t used = 0;
    while (cur->part < cur->end && quota - used > MR_SHUFFLE_PIECE_HEADER) {
        const mr_run_section *sec = &mof->sec[cur->part];
        uint64_t left = sec->len - cur->off;
        if (left == 0) {
            cur->part++;
            cur->off = 0;
            continue;
        }
        size_t room = quota - used - MR_SHUFFLE_PIECE_HEADER;
        size_t take = left < room ? (size_t)left : room;
        coding_put_be32(dst + used, cur->part);
        coding_put_be32(dst + used + 4, (uint32_t)take);
        if (env_pread(mf, sec->off + cur->off, dst + used + MR_SHUFFLE_PIECE_HEADER, take, err) !=
            KILN_OK)
            return -1;
        mr_counters_add(sp->counters, MR_C_FILE_BYTES_READ, take);
        used += MR_SHUFFLE_PIECE_HEADER + take;
        cur->off += take;
        *remaining -= take;
    }
    return (long)used;
}

/* Append the pieces from one source to the receive file. */
static kiln_status
mr_shuffle_take(const mr_shuffle_params *sp, mr_shuffle_result *out, env_file *rf, int src,
                const uint8_t *p, size_t n, kiln_err *err)
{
    int ranks = out->ranks;
    while (n > 0) {
        if (n < MR_SHUFFLE_PIECE_HEADER)
            return status_set(err, KILN_CORRUPTION, "shuffle: truncated piece from rank %d", src);
        uint32_t part = coding_get_be32(p);
        uint32_t len = coding_get_be32(p + 4);
        if (part < out->first || part - out->first >= out->count ||
            len > n - MR_SHUFFLE_PIECE_HEADER)
            return status_set(err, KILN_CORRUPTION,
                              "shuffle: bad piece from rank %d (partition %u, %u bytes)", src, part,
                              len);
        uint64_t off = env_file_size(rf);
        kiln_status s = env_append(rf, p + MR_SHUFFLE_PIECE_HEADER, len, err);
        if (s != KILN_OK)
            return s;
        mr_shuffle_segment_add(&out->seg[(size_t)(part - out->first) * (size_t)ranks + (size_t)src], NULL,
                       off, len);
        mr_counters_add(sp->counters, MR_C_REDUCE_SHUFFLE_BYTES, len);
        mr_counters_add(sp->counters, MR_C_FILE_BYTES_WRITTEN, len);
        p += MR_SHUFFLE_PIECE_HEADER + len;
        n -= MR_SHUFFLE_PIECE_HEADER + len;
    }
    return KILN_OK;
}

kiln_status
mr_shuffle_run(const mr_shuffle_params *sp, const mr_run *mof, mr_shuffle_result *out,
               kiln_err *err)
{
    mr_comm *c = sp->comm;
    int ranks = c->size, me = c->rank;
    uint32_t R = sp->partitions;
    memset(out, 0, sizeof *out);
    out->ranks = ranks;
    mr_shuffle_owned(R, ranks, me, &out->first, &out->count);
    out->n_seg = (size_t)out->count * (size_t)ranks;
    out->seg = kiln_calloc(out->n_seg ? out->n_seg : 1, sizeof *out->seg);

    kiln_status s = env_open_read(mof->path, &out->mof, err);
    kbuf path = KBUF_INIT;
    mr_run_dir_path(sp->spill, "recv", &path);
    out->recv_path = (char *)kiln_memdup(path.data, path.len);
    buf_free(&path);
    env_file *rf = NULL;
    if (s == KILN_OK)
        s = env_create(out->recv_path, 1, &rf, err);

    mr_shuffle_cursor *cur = kiln_calloc((size_t)ranks, sizeof *cur);
    uint64_t remaining = 0;
    for (int d = 0; d < ranks; d++) {
        uint32_t first, count;
        mr_shuffle_owned(R, ranks, d, &first, &count);
        cur[d].part = first;
        cur[d].end = first + count;
        for (uint32_t p = first; p < first + count; p++) {
            if (d == me) {
                if (mof->sec[p].len > 0 && out->mof != NULL) {
                    mr_shuffle_segment_add(&out->seg[(size_t)(p - first) * (size_t)ranks + (size_t)me],
                                   out->mof, mof->sec[p].off, mof->sec[p].len);
                    mr_counters_add(sp->counters, MR_C_REDUCE_SHUFFLE_BYTES, mof->sec[p].len);
                }
            } else {
                remaining += mof->sec[p].len;
            }
        }
        if (d == me)
            cur[d].part = cur[d].end;
    }

    size_t quota = sp->round_bytes / (size_t)ranks;
    if (quota < MR_SHUFFLE_MIN_QUOTA)
        quota = MR_SHUFFLE_MIN_QUOTA;
    if (quota > (size_t)INT_MAX / (size_t)ranks)
        quota = (size_t)INT_MAX / (size_t)ranks;
    uint8_t *sendbuf = NULL;
    kbuf recvbuf = KBUF_INIT;
    int *scount = kiln_calloc((size_t)ranks, sizeof *scount);
    int *sdispl = kiln_calloc((size_t)ranks, sizeof *sdispl);
    int *rcount = kiln_calloc((size_t)ranks, sizeof *rcount);
    int *rdispl = kiln_calloc((size_t)ranks, sizeof *rdispl);

    int failed = s != KILN_OK;
    mr_progress_begin(sp->progress, MR_PHASE_SHUFFLE, remaining);
    uint64_t total = sp->progress->total;
    uint64_t g[2] = {remaining, (uint64_t)failed};
    mr_comm_allreduce_u64(c, g, 2, MPI_SUM);
    if (g[0] > 0 && g[1] == 0)
        sendbuf = kiln_malloc(quota * (size_t)ranks);
    int64_t round = 0;
    while (g[0] > 0 && g[1] == 0) {
        if (sp->on_round != NULL)
            sp->on_round(sp->on_round_arg, round);
        round++;
        for (int d = 0; d < ranks; d++) {
            sdispl[d] = (int)(quota * (size_t)d);
            scount[d] = 0;
            if (d == me || failed)
                continue;
            long n = mr_shuffle_fill(sp, mof, out->mof, &cur[d], sendbuf + sdispl[d], quota,
                                     &remaining, err);
            if (n < 0) {
                failed = 1;
                continue;
            }
            scount[d] = (int)n;
        }
        MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, c->comm);
        size_t rtotal = 0;
        for (int d = 0; d < ranks; d++) {
            rdispl[d] = (int)rtotal;
            rtotal += (size_t)rcount[d];
        }
        buf_reset(&recvbuf);
        buf_reserve(&recvbuf, rtotal ? rtotal : 1);
        MPI_Alltoallv(sendbuf, scount, sdispl, MPI_BYTE, recvbuf.data, rcount, rdispl, MPI_BYTE,
                      c->comm);
        for (int src = 0; src < ranks && !failed; src++) {
            if (rcount[src] == 0)
                continue;
            if (mr_shuffle_take(sp, out, rf, src, recvbuf.data + rdispl[src],
                                (size_t)rcount[src], err) != KILN_OK)
                failed = 1;
        }
        g[0] = remaining;
        g[1] = (uint64_t)failed;
        mr_comm_allreduce_u64(c, g, 2, MPI_SUM);
        mr_progress_set_global(sp->progress, total - g[0]);
    }
    free(sendbuf);
    buf_free(&recvbuf);
    free(scount);
    free(sdispl);
    free(rcount);
    free(rdispl);
    free(cur);

    if (!failed && rf != NULL) {
        s = env_close(rf, err);
        rf = NULL;
        if (s == KILN_OK)
            s = env_open_read(out->recv_path, &out->recv, err);
        if (s != KILN_OK)
            failed = 1;
    }
    env_close(rf, NULL);
    for (size_t i = 0; i < out->n_seg; i++)
        if (out->seg[i].f == NULL && out->seg[i].n > 0)
            out->seg[i].f = out->recv;
    mr_progress_end(sp->progress, 0);
    /* When only another rank failed this rank returns OK: the agreement
     * that follows names the rank that did. */
    if (failed && s == KILN_OK)
        s = err->code != KILN_OK ? err->code : KILN_INTERNAL;
    return s;
}
