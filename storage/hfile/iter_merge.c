/* iter_merge.c -- k-way merge of kiln iterators with a binary heap of child
 * indexes: a min-heap while moving forward, a max-heap while moving backward.
 *
 * Merge order is total: cell order (with the row skip), then the larger
 * sequence number, then the earlier child. Turning around (prev after next
 * or the reverse) re-aims every other child at the current cell, as LevelDB's
 * MergingIterator does, and then steps over the cells of equal key that
 * stand on the wrong side of the current one in that order -- LevelDB never
 * sees equal keys in two children, a region's loads do.
 */
#include "storage/hfile/iter_merge.h"

#include <stdlib.h>

typedef struct iter_merge_child {
    kiln_iter *it;
    uint64_t seq;
    int owned;
} iter_merge_child;

struct iter_merge {
    kiln_iter base;             /* first: the merge is a kiln_iter */
    uint32_t row_skip;
    iter_merge_child *kids;
    size_t nkids, cap;
    size_t *heap;               /* indexes of valid children, best on top */
    size_t nheap;
    int reverse;                /* moving backward: the largest is on top */
};

static inline int
iter_merge_cmp(const iter_merge *m, const kiln_cell *a, const kiln_cell *b)
{
    return m->row_skip ? cell_compare_skip(a, b, m->row_skip) : cell_compare(a, b);
}

/* 1 if, of two equal keys, child a's comes before child b's. */
static inline int
iter_merge_tie_before(const iter_merge *m, size_t a, size_t b)
{
    if (m->kids[a].seq != m->kids[b].seq)
        return m->kids[a].seq > m->kids[b].seq;
    return a < b;
}

/* 1 if child a's current cell belongs above child b's in the heap. */
static inline int
iter_merge_above(const iter_merge *m, size_t a, size_t b)
{
    int c = iter_merge_cmp(m, m->kids[a].it->cur, m->kids[b].it->cur);
    if (c == 0)
        return m->reverse ? !iter_merge_tie_before(m, a, b) : iter_merge_tie_before(m, a, b);
    return m->reverse ? c > 0 : c < 0;
}

static void
iter_merge_sift_down(iter_merge *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < m->nheap && iter_merge_above(m, m->heap[l], m->heap[best]))
            best = l;
        if (r < m->nheap && iter_merge_above(m, m->heap[r], m->heap[best]))
            best = r;
        if (best == i)
            return;
        size_t t = m->heap[i];
        m->heap[i] = m->heap[best];
        m->heap[best] = t;
        i = best;
    }
}

static inline void
iter_merge_set_cur(iter_merge *m)
{
    m->base.cur = m->nheap > 0 ? m->kids[m->heap[0]].it->cur : NULL;
}

static void
iter_merge_failed(iter_merge *m, const kiln_iter *child)
{
    m->nheap = 0;
    kiln_iter_fail(&m->base, &child->err);
}

/* Every child has been positioned: heap the valid ones, or fail with the
 * first child's error. */
static void
iter_merge_rebuild(iter_merge *m)
{
    m->nheap = 0;
    for (size_t i = 0; i < m->nkids; i++) {
        const kiln_iter *it = m->kids[i].it;
        if (it->err.code != KILN_OK) {
            iter_merge_failed(m, it);
            return;
        }
        if (it->cur != NULL)
            m->heap[m->nheap++] = i;
    }
    for (size_t i = m->nheap / 2; i-- > 0;)
        iter_merge_sift_down(m, i);
    iter_merge_set_cur(m);
}

static void
iter_merge_seek_first(kiln_iter *base)
{
    iter_merge *m = (iter_merge *)base;
    kiln_iter_restart(base);
    m->reverse = 0;
    for (size_t i = 0; i < m->nkids; i++)
        kiln_iter_seek_first(m->kids[i].it);
    iter_merge_rebuild(m);
}

static void
iter_merge_seek_last(kiln_iter *base)
{
    iter_merge *m = (iter_merge *)base;
    kiln_iter_restart(base);
    m->reverse = 1;
    for (size_t i = 0; i < m->nkids; i++)
        kiln_iter_seek_last(m->kids[i].it);
    iter_merge_rebuild(m);
}

static void
iter_merge_seek(kiln_iter *base, const kiln_cell *key)
{
    iter_merge *m = (iter_merge *)base;
    kiln_iter_restart(base);
    m->reverse = 0;
    for (size_t i = 0; i < m->nkids; i++)
        kiln_iter_seek(m->kids[i].it, key);
    iter_merge_rebuild(m);
}

static void
iter_merge_seek_for_prev(kiln_iter *base, const kiln_cell *key)
{
    iter_merge *m = (iter_merge *)base;
    kiln_iter_restart(base);
    m->reverse = 1;
    for (size_t i = 0; i < m->nkids; i++)
        kiln_iter_seek_for_prev(m->kids[i].it, key);
    iter_merge_rebuild(m);
}

/* Turn around at the current cell x (child c): aim every other child at its
 * last cell before x (to_reverse) or its first cell after x, in merge order.
 * Child c itself is left on x. */
static void
iter_merge_turn(iter_merge *m, int to_reverse)
{
    size_t c = m->heap[0];
    const kiln_cell *x = m->kids[c].it->cur;   /* child c is not moved here */
    for (size_t i = 0; i < m->nkids; i++) {
        if (i == c)
            continue;
        kiln_iter *it = m->kids[i].it;
        /* cells of x's key in child i stand before x iff i ties before c */
        int before = iter_merge_tie_before(m, i, c);
        if (to_reverse) {
            kiln_iter_seek_for_prev(it, x);
            while (!before && it->cur != NULL && iter_merge_cmp(m, it->cur, x) == 0)
                kiln_iter_prev(it);
        } else {
            kiln_iter_seek(it, x);
            while (before && it->cur != NULL && iter_merge_cmp(m, it->cur, x) == 0)
                kiln_iter_next(it);
        }
    }
    m->reverse = to_reverse;
}

/* Move the top child one step in the merge's direction and restore the heap
 * (all of it after a turn). */
static void
iter_merge_step(iter_merge *m, int turned)
{
    kiln_iter *it = m->kids[m->heap[0]].it;
    if (m->reverse)
        kiln_iter_prev(it);
    else
        kiln_iter_next(it);
    if (turned) {
        iter_merge_rebuild(m);
        return;
    }
    if (it->err.code != KILN_OK) {
        iter_merge_failed(m, it);
        return;
    }
    if (it->cur == NULL)
        m->heap[0] = m->heap[--m->nheap];
    if (m->nheap > 1)
        iter_merge_sift_down(m, 0);
    iter_merge_set_cur(m);
}

static void
iter_merge_next(kiln_iter *base)
{
    iter_merge *m = (iter_merge *)base;
    int turned = m->reverse;
    if (turned)
        iter_merge_turn(m, 0);
    iter_merge_step(m, turned);
}

static void
iter_merge_prev(kiln_iter *base)
{
    iter_merge *m = (iter_merge *)base;
    int turned = !m->reverse;
    if (turned)
        iter_merge_turn(m, 1);
    iter_merge_step(m, turned);
}

static void
iter_merge_close(kiln_iter *base)
{
    iter_merge *m = (iter_merge *)base;
    iter_merge_clear(m);
    free(m->kids);
    free(m->heap);
    free(m);
}

static const kiln_iter_ops iter_merge_ops = {
    .seek_first = iter_merge_seek_first,
    .seek_last = iter_merge_seek_last,
    .seek = iter_merge_seek,
    .seek_for_prev = iter_merge_seek_for_prev,
    .next = iter_merge_next,
    .prev = iter_merge_prev,
    .close = iter_merge_close,
};

iter_merge *
iter_merge_new(uint32_t row_skip)
{
    iter_merge *m = kiln_calloc(1, sizeof *m);
    kiln_iter_init(&m->base, &iter_merge_ops);
    m->row_skip = row_skip;
    return m;
}

kiln_iter *
iter_merge_iter(iter_merge *m)
{
    return &m->base;
}

void
iter_merge_free(iter_merge *m)
{
    if (m != NULL)
        iter_merge_close(&m->base);
}

void
iter_merge_add(iter_merge *m, kiln_iter *child, uint64_t seq, int owned)
{
    if (m->nkids == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 4;
        m->kids = kiln_realloc(m->kids, m->cap * sizeof *m->kids);
        m->heap = kiln_realloc(m->heap, m->cap * sizeof *m->heap);
    }
    m->kids[m->nkids].it = child;
    m->kids[m->nkids].seq = seq;
    m->kids[m->nkids].owned = owned;
    m->nkids++;
    /* the heap no longer covers every child */
    m->nheap = 0;
    m->base.cur = NULL;
}

void
iter_merge_clear(iter_merge *m)
{
    for (size_t i = 0; i < m->nkids; i++) {
        if (m->kids[i].owned)
            kiln_iter_close(m->kids[i].it);
    }
    m->nkids = 0;
    m->nheap = 0;
    kiln_iter_restart(&m->base);
}

size_t
iter_merge_children(const iter_merge *m)
{
    return m->nkids;
}

kiln_iter *
iter_merge_single(const iter_merge *m)
{
    return m->nkids == 1 ? m->kids[0].it : NULL;
}

uint64_t
iter_merge_seq(const iter_merge *m)
{
    return m->kids[m->heap[0]].seq;
}
