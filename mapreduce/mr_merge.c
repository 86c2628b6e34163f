/* mr_merge.c -- k-way merge of sorted runs with key grouping.
 *
 * A binary min-heap of sources ordered by their current (key, value), keys
 * in the job's order (mr_order.h; the heap code is compiled twice, so byte
 * order pays no call through a comparator). The
 * value handed out is the heap top's, so the top cannot advance until the
 * caller is done with it: `advance` remembers that the top must move on at
 * the next call, which keeps every returned slice valid for exactly one call.
 */
#include "mapreduce/mr_merge.h"

#include <stdlib.h>

typedef struct mr_merge_src {
    mr_run_iter *it;
    kslice key;
    kslice value;
} mr_merge_src;

struct mr_merger {
    mr_merge_src *src;
    mr_merge_src **heap;
    size_t n_src;
    size_t n_heap;
    int started;
    int advance;         /* the top's record was handed out: move it on first */
    int in_group;
    int failed;
    kbuf key;            /* the current group's key (copied: the source moves) */
    mr_key_order sort;   /* the keys' order; cmp NULL: bytes */
    mr_key_order group;  /* what makes one group; cmp NULL: equal bytes */
};

/* custom is a constant at each call below, so each sift is compiled for
 * one order. */
static inline __attribute__((always_inline)) int
mr_merge_less(const mr_merger *m, const mr_merge_src *a, const mr_merge_src *b, int custom)
{
    int c = custom ? mr_order_keys(&m->sort, a->key, b->key) : kslice_cmp(a->key, b->key);
    if (c == 0)
        c = kslice_cmp(a->value, b->value);
    return c < 0;
}

static inline __attribute__((always_inline)) void
mr_merge_sift(mr_merger *m, size_t i, int custom)
{
    mr_merge_src **h = m->heap;
    size_t n = m->n_heap;
    mr_merge_src *x = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && mr_merge_less(m, h[c + 1], h[c], custom))
            c++;
        if (!mr_merge_less(m, h[c], x, custom))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static inline void
mr_merge_sift_down(mr_merger *m, size_t i)
{
    if (m->sort.cmp != NULL)
        mr_merge_sift(m, i, 1);
    else
        mr_merge_sift(m, i, 0);
}

mr_merger *
mr_merger_new(mr_run_iter **its, size_t n)
{
    mr_merger *m = kiln_calloc(1, sizeof *m);
    m->src = kiln_calloc(n ? n : 1, sizeof *m->src);
    m->heap = kiln_calloc(n ? n : 1, sizeof *m->heap);
    m->n_src = n;
    for (size_t i = 0; i < n; i++)
        m->src[i].it = its[i];
    buf_init(&m->key);
    return m;
}

void
mr_merger_set_order(mr_merger *m, const mr_key_order *sort, const mr_key_order *group)
{
    if (sort != NULL)
        m->sort = *sort;
    if (group != NULL)
        m->group = *group;
}

void
mr_merger_free(mr_merger *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->n_src; i++)
        mr_run_iter_free(m->src[i].it);
    free(m->src);
    free(m->heap);
    buf_free(&m->key);
    free(m);
}

/* Load every source's first record and build the heap. */
static int
mr_merge_start(mr_merger *m, kiln_err *err)
{
    m->started = 1;
    for (size_t i = 0; i < m->n_src; i++) {
        mr_merge_src *s = &m->src[i];
        int r = mr_run_iter_next(s->it, &s->key, &s->value, err);
        if (r < 0)
            return -1;
        if (r > 0)
            m->heap[m->n_heap++] = s;
    }
    for (size_t i = m->n_heap / 2; i-- > 0;)
        mr_merge_sift_down(m, i);
    return 0;
}

/* Move the heap top to its next record (or drop it). */
static int
mr_merge_pop(mr_merger *m, kiln_err *err)
{
    m->advance = 0;
    mr_merge_src *s = m->heap[0];
    int r = mr_run_iter_next(s->it, &s->key, &s->value, err);
    if (r < 0)
        return -1;
    if (r == 0) {
        m->heap[0] = m->heap[--m->n_heap];
        if (m->n_heap == 0)
            return 0;
    }
    mr_merge_sift_down(m, 0);
    return 0;
}

static int
mr_merge_prepare(mr_merger *m, kiln_err *err)
{
    if (m->failed)
        return -1;
    if (!m->started && mr_merge_start(m, err) < 0) {
        m->failed = 1;
        return -1;
    }
    if (m->advance && mr_merge_pop(m, err) < 0) {
        m->failed = 1;
        return -1;
    }
    return 0;
}

int
mr_merger_next_value(mr_merger *m, kslice *value, kiln_err *err)
{
    if (mr_merge_prepare(m, err) < 0)
        return -1;
    if (!m->in_group)
        return 0;
    if (m->n_heap == 0 || !mr_order_same(&m->group, m->heap[0]->key, buf_slice(&m->key))) {
        m->in_group = 0;
        return 0;
    }
    *value = m->heap[0]->value;
    m->advance = 1;
    return 1;
}

int
mr_merger_next_key(mr_merger *m, kslice *key, kiln_err *err)
{
    kslice v;
    int r;
    while (m->in_group && (r = mr_merger_next_value(m, &v, err)) != 0)
        if (r < 0)
            return -1;
    if (mr_merge_prepare(m, err) < 0)
        return -1;
    if (m->n_heap == 0)
        return 0;
    buf_reset(&m->key);
    buf_append(&m->key, m->heap[0]->key.p, m->heap[0]->key.n);
    m->in_group = 1;
    *key = buf_slice(&m->key);
    return 1;
}

kslice
mr_merger_value_key(const mr_merger *m)
{
    /* A value handed out is the heap top's until the next call moves it. */
    if (m->advance && m->n_heap > 0)
        return m->heap[0]->key;
    return buf_slice(&m->key);
}

uint64_t
mr_merger_bytes_read(const mr_merger *m)
{
    uint64_t n = 0;
    for (size_t i = 0; i < m->n_src; i++)
        n += mr_run_iter_bytes_read(m->src[i].it);
    return n;
}
