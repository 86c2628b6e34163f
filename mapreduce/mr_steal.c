/* mr_steal.c -- the host's ranks sharing their map input (mr_steal.h). */
#include "mapreduce/mr_steal.h"

#include <stdlib.h>
#include <string.h>

#include "storage/base/buf.h"

struct mr_steal {
    MPI_Comm node;               /* the host's ranks, or MPI_COMM_NULL */
    MPI_Win win;
    int me;                      /* this rank's index on the host */
    int n;                       /* ranks on the host (1 without sharing) */
    uint64_t **word;             /* [n]: each rank's deque word */
    mr_split **pieces;           /* [n]: each rank's pieces */
    uint64_t own_word;           /* the deque without sharing */
    uint64_t own_bytes;
};

/* Keep piece indexes within 32 bits: a grain of at least total / 2^30. */
static uint64_t
mr_steal_grain(const mr_input *in, uint64_t grain)
{
    uint64_t least = (in->total >> 30) + 1;
    return grain != 0 && grain < least ? least : grain;
}

mr_steal *
mr_steal_open(const mr_comm *c, const mr_input *in, uint64_t grain, int share)
{
    mr_steal *s = kiln_calloc(1, sizeof *s);
    s->node = MPI_COMM_NULL;
    s->win = MPI_WIN_NULL;
    grain = mr_steal_grain(in, grain);
    int *ranks;
    if (share) {
        MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &s->node);
        MPI_Comm_rank(s->node, &s->me);
        MPI_Comm_size(s->node, &s->n);
        ranks = kiln_malloc((size_t)s->n * sizeof *ranks);
        MPI_Allgather(&c->rank, 1, MPI_INT, ranks, 1, MPI_INT, s->node);
    } else {
        s->me = 0;
        s->n = 1;
        ranks = kiln_malloc(sizeof *ranks);
        ranks[0] = c->rank;
    }
    s->word = kiln_calloc((size_t)s->n, sizeof *s->word);
    s->pieces = kiln_calloc((size_t)s->n, sizeof *s->pieces);
    uint32_t mine = 0;
    for (int i = 0; i < s->n; i++) {
        size_t k = mr_input_pieces(in, c->size, ranks[i], grain, &s->pieces[i]);
        if (i == s->me) {
            mine = (uint32_t)k;
            for (size_t j = 0; j < k; j++)
                s->own_bytes += s->pieces[i][j].end - s->pieces[i][j].start;
        }
    }
    free(ranks);

    if (s->node == MPI_COMM_NULL) {
        s->own_word = mr_deque_word(0, mine);
        s->word[0] = &s->own_word;
        return s;
    }
    uint64_t *base;
    MPI_Win_allocate_shared((MPI_Aint)sizeof(uint64_t), (int)sizeof(uint64_t), MPI_INFO_NULL,
                            s->node, &base, &s->win);
    for (int i = 0; i < s->n; i++) {
        MPI_Aint size;
        int unit;
        MPI_Win_shared_query(s->win, i, &size, &unit, &s->word[i]);
    }
    __atomic_store_n(base, mr_deque_word(0, mine), __ATOMIC_RELEASE);
    /* every word set before any rank looks at another's */
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    MPI_Win_sync(s->win);
    MPI_Barrier(s->node);
    MPI_Win_sync(s->win);
    return s;
}

int
mr_deque_take(uint64_t *const *words, int n, int me, int *owner, uint32_t *i)
{
    if (mr_deque_take_front(words[me], i)) {
        *owner = me;
        return 1;
    }
    for (;;) {
        int victim = -1;
        uint32_t most = 0;
        for (int r = 0; r < n; r++) {
            uint32_t k = mr_deque_stealable(__atomic_load_n(words[r], __ATOMIC_ACQUIRE));
            if (r != me && k > most) {
                most = k;
                victim = r;
            }
        }
        if (victim < 0)
            return 0;
        if (mr_deque_take_back(words[victim], i)) {
            *owner = victim;
            return 1;
        }
        /* the victim's pieces went meanwhile: look again */
    }
}

int
mr_steal_next(mr_steal *s, mr_split *piece, int *stolen)
{
    int owner;
    uint32_t i;
    if (!mr_deque_take(s->word, s->n, s->me, &owner, &i))
        return 0;
    *piece = s->pieces[owner][i];
    *stolen = owner != s->me;
    return 1;
}

uint64_t
mr_steal_own_bytes(const mr_steal *s)
{
    return s->own_bytes;
}

void
mr_steal_close(mr_steal *s)
{
    if (s == NULL)
        return;
    if (s->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(s->win);
        MPI_Win_free(&s->win);
    }
    if (s->node != MPI_COMM_NULL)
        MPI_Comm_free(&s->node);
    for (int i = 0; i < s->n; i++)
        free(s->pieces[i]);
    free(s->pieces);
    free(s->word);
    free(s);
}
