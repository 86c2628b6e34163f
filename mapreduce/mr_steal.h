/* mr_steal.h -- private to mapreduce/: the ranks of one host share their map
 * input, so that they end the map together however unevenly their cores run.
 *
 * Each rank's input is its splits (mr_input_splits) cut into pieces
 * (mr_input_pieces), kept as a deque in memory the ranks of the host share
 * (an MPI-3 shared window). A rank takes its own pieces from the front, in
 * file order; once they are gone it takes pieces from the back of the host's
 * rank with the most left. A rank that has not begun keeps its first piece,
 * so every rank maps the start of its own range. Ranks on other hosts keep
 * their own ranges: pieces never cross hosts.
 *
 * A deque is one 64-bit word, the front piece index in its high half and the
 * back (one past the last piece) in its low half, changed only by
 * compare-and-swap: a piece leaves it exactly once, to one rank.
 *
 * Thread-safety: MPI from one thread; the deque words are shared between
 * processes and only ever used atomically.
 */
#ifndef KILN_MR_STEAL_H
#define KILN_MR_STEAL_H

#include <stdint.h>

#include "mapreduce/mr_comm.h"
#include "mapreduce/mr_input.h"

typedef struct mr_steal mr_steal;

/* Collective over c: every rank passes the same input and grain. With
 * share 0 (or a host of one rank) a rank maps its own pieces only. */
mr_steal *mr_steal_open(const mr_comm *c, const mr_input *in, uint64_t grain, int share);

/* The next piece this rank maps: 1 with *piece (*stolen 1 when it was
 * another rank's), or 0 when the host has none left for it. */
int mr_steal_next(mr_steal *s, mr_split *piece, int *stolen);

/* Bytes of this rank's own pieces (its share of the map, for progress). */
uint64_t mr_steal_own_bytes(const mr_steal *s);

/* Collective over c, like open: every rank calls it, after its last next. */
void mr_steal_close(mr_steal *s);

/* ------------------------------------------------------------ the deque word */

static inline uint64_t
mr_deque_word(uint32_t front, uint32_t back)
{
    return (uint64_t)front << 32 | back;
}

/* The owner's take: piece *i from the front. 1, or 0 when empty. */
static inline int
mr_deque_take_front(uint64_t *w, uint32_t *i)
{
    uint64_t v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
    for (;;) {
        uint32_t f = (uint32_t)(v >> 32), b = (uint32_t)v;
        if (f >= b)
            return 0;
        if (__atomic_compare_exchange_n(w, &v, mr_deque_word(f + 1, b), 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            *i = f;
            return 1;
        }
    }
}

/* Pieces a thief may take now: all that are left once the owner has begun,
 * all but the first before. */
static inline uint32_t
mr_deque_stealable(uint64_t v)
{
    uint32_t f = (uint32_t)(v >> 32), b = (uint32_t)v;
    uint32_t keep = f == 0 ? 1 : 0;
    return b > f + keep ? b - f - keep : 0;
}

/* A thief's take: piece *i from the back. 1, or 0 when nothing is
 * stealable. */
static inline int
mr_deque_take_back(uint64_t *w, uint32_t *i)
{
    uint64_t v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
    for (;;) {
        if (mr_deque_stealable(v) == 0)
            return 0;
        uint32_t f = (uint32_t)(v >> 32), b = (uint32_t)v;
        if (__atomic_compare_exchange_n(w, &v, mr_deque_word(f, b - 1), 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            *i = b - 1;
            return 1;
        }
    }
}

/* The take of mr_steal_next over the host's deque words words[0..n) (this
 * rank's is words[me]): its own front first, else the back of the rank with
 * the most stealable. 1 with *owner and *i, or 0 when nothing is left. */
int mr_deque_take(uint64_t *const *words, int n, int me, int *owner, uint32_t *i);

#endif
