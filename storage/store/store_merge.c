/* store_merge.c -- k-way merge of HFile iterators (newest load first on
 * equal keys) with a binary min-heap of child indexes.
 */
#include "storage/store/store_merge.h"

#include <stdlib.h>
#include <string.h>

typedef struct store_merge_child {
    hfile_iter *it;
    uint64_t seq;
    int owned;
} store_merge_child;

struct store_merge {
    store_merge_child *kids;
    size_t nkids, cap;
    size_t *heap;          /* indexes of valid children, heap-ordered */
    size_t nheap;
};

store_merge *
store_merge_new(void)
{
    return kiln_calloc(1, sizeof(store_merge));
}

void
store_merge_clear(store_merge *m)
{
    for (size_t i = 0; i < m->nkids; i++) {
        if (m->kids[i].owned)
            hfile_iter_free(m->kids[i].it);
    }
    m->nkids = 0;
    m->nheap = 0;
}

void
store_merge_free(store_merge *m)
{
    if (m == NULL)
        return;
    store_merge_clear(m);
    free(m->kids);
    free(m->heap);
    free(m);
}

static void
store_merge_push(store_merge *m, hfile_iter *it, uint64_t seq, int owned)
{
    if (m->nkids == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 4;
        m->kids = kiln_realloc(m->kids, m->cap * sizeof *m->kids);
        m->heap = kiln_realloc(m->heap, m->cap * sizeof *m->heap);
    }
    m->kids[m->nkids].it = it;
    m->kids[m->nkids].seq = seq;
    m->kids[m->nkids].owned = owned;
    m->nkids++;
}

void
store_merge_add(store_merge *m, hfile_iter *it, uint64_t seq)
{
    store_merge_push(m, it, seq, 1);
}

void
store_merge_add_borrowed(store_merge *m, hfile_iter *it, uint64_t seq)
{
    store_merge_push(m, it, seq, 0);
}

size_t
store_merge_children(const store_merge *m)
{
    return m->nkids;
}

/* <0 if child a's cell comes first. */
static int
store_merge_less(const store_merge *m, size_t a, size_t b)
{
    int c = cell_compare(hfile_iter_cell(m->kids[a].it), hfile_iter_cell(m->kids[b].it));
    if (c != 0)
        return c < 0;
    if (m->kids[a].seq != m->kids[b].seq)
        return m->kids[a].seq > m->kids[b].seq;
    return a < b;
}

static void
store_merge_sift_down(store_merge *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < m->nheap && store_merge_less(m, m->heap[l], m->heap[best]))
            best = l;
        if (r < m->nheap && store_merge_less(m, m->heap[r], m->heap[best]))
            best = r;
        if (best == i)
            return;
        size_t t = m->heap[i];
        m->heap[i] = m->heap[best];
        m->heap[best] = t;
        i = best;
    }
}

kiln_status
store_merge_seek(store_merge *m, const kiln_cell *key, kiln_err *err)
{
    m->nheap = 0;
    for (size_t i = 0; i < m->nkids; i++) {
        kiln_status st = hfile_iter_seek(m->kids[i].it, key, err);
        if (st != KILN_OK)
            return st;
        if (hfile_iter_valid(m->kids[i].it))
            m->heap[m->nheap++] = i;
    }
    for (size_t i = m->nheap / 2; i-- > 0;)
        store_merge_sift_down(m, i);
    return KILN_OK;
}

int
store_merge_valid(const store_merge *m)
{
    return m->nheap > 0;
}

const kiln_cell *
store_merge_cell(const store_merge *m)
{
    return hfile_iter_cell(m->kids[m->heap[0]].it);
}

uint64_t
store_merge_seq(const store_merge *m)
{
    return m->kids[m->heap[0]].seq;
}

kiln_status
store_merge_next(store_merge *m, kiln_err *err)
{
    hfile_iter *it = m->kids[m->heap[0]].it;
    kiln_status st = hfile_iter_next(it, err);
    if (st != KILN_OK)
        return st;
    if (!hfile_iter_valid(it))
        m->heap[0] = m->heap[--m->nheap];
    if (m->nheap > 1)
        store_merge_sift_down(m, 0);
    return KILN_OK;
}

kiln_status
store_merge_prev_row(store_merge *m, const kiln_cell *key, kbuf *row, int *found, kiln_err *err)
{
    *found = 0;
    m->nheap = 0;
    for (size_t i = 0; i < m->nkids; i++) {
        hfile_iter *it = m->kids[i].it;
        kiln_status st = key != NULL ? hfile_iter_seek_for_prev(it, key, err)
                                     : hfile_iter_seek_last(it, err);
        if (st != KILN_OK)
            return st;
        if (!hfile_iter_valid(it))
            continue;
        const kiln_cell *c = hfile_iter_cell(it);
        kslice r = kslice_make(c->row, c->row_len);
        if (!*found || kslice_cmp(r, buf_slice(row)) > 0) {
            buf_reset(row);
            buf_append(row, c->row, c->row_len);
            *found = 1;
        }
    }
    return KILN_OK;
}
