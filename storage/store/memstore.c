/* memstore.c -- the memstore: a skiplist of cells in an arena (memstore.h).
 *
 * One arena allocation per cell holds its list node and its bytes:
 *
 *   ms_node (the cell with pointers into the tail, mvcc = seq; add order;
 *            height; height next pointers) | row | family | qualifier |
 *   value | tags
 *
 * Levels: a node gets height h with probability (1/4)^(h-1), up to
 * MS_MAX_HEIGHT, so a search costs O(log n) comparisons. Readers never lock:
 * the writer fills a node completely, links it at each level bottom-up with
 * a release store into its predecessor, and readers follow next pointers
 * with acquire loads (LevelDB's SkipList). The list height is read relaxed:
 * a reader that sees a level before it is linked finds NULL there and drops
 * a level.
 *
 * A row index beside the list makes a seek to the start of a row (a Get's,
 * a scan's first row) one hash lookup instead of a descent: a chained hash
 * table from each row to its first node, updated by the writer after it
 * links a node that is the first of its row (a release store, as the
 * links), and grown 4x by the writer -- a new table built from the list and
 * published with a release store; the old ones stay until the memstore is
 * freed, as readers may still be walking them.
 */
#include "storage/store/memstore.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "storage/base/buf.h"

#define MS_MAX_HEIGHT 12
#define MS_BRANCHING 4
#define MS_ALIGN (alignof(max_align_t))
#define MS_ROUND(n) (((n) + MS_ALIGN - 1) & ~(size_t)(MS_ALIGN - 1))

typedef struct ms_node {
    kiln_cell cell;            /* byte fields point past the node; mvcc = seq */
    uint64_t ord;              /* add order: orders cells equal in key and seq */
    int height;
    _Atomic(struct ms_node *) next[];   /* height of them; head: MS_MAX_HEIGHT */
} ms_node;

typedef struct ms_chunk {
    struct ms_chunk *next;
} ms_chunk;

/* The row index: a row's hash and its first node. */
typedef struct ms_rent {
    _Atomic(const ms_node *) first;
    _Atomic(struct ms_rent *) next;   /* the chain of a slot */
    uint64_t hash;
} ms_rent;

typedef struct ms_rtab {
    size_t mask;                       /* slots - 1 */
    struct ms_rtab *older;             /* the tables it replaced */
    _Atomic(ms_rent *) slot[];
} ms_rtab;

#define MS_RTAB_INITIAL 256

struct memstore {
    atomic_long refs;
    ms_node *head;             /* sentinel before every cell, no cell of its own */
    atomic_int height;         /* levels in use, >= 1 */
    /* writer-only state */
    ms_chunk *chunks;          /* every chunk, newest first, freed with the memstore */
    char *free_at;             /* the current chunk's unused tail */
    size_t free_left;
    uint64_t adds;             /* ords handed out */
    uint64_t rnd;              /* height generator */
    /* readable from any thread */
    atomic_size_t bytes;
    atomic_size_t count;
    atomic_uint_least64_t max_seq;
    size_t flush_bytes;
    _Atomic(ms_rtab *) rtab;           /* the row index; replaced by the writer */
    size_t rows;                       /* writer-only: rows in the index */
};

/* ------------------------------------------------------------------ arena */

static char *
chunk_new(memstore *ms, size_t payload)
{
    size_t total = MS_ROUND(sizeof(ms_chunk)) + payload;
    ms_chunk *c = kiln_malloc(total);
    c->next = ms->chunks;
    ms->chunks = c;
    atomic_fetch_add_explicit(&ms->bytes, total, memory_order_relaxed);
    return (char *)c + MS_ROUND(sizeof(ms_chunk));
}

/* n bytes aligned for any object; large ones get a chunk of their own so
 * the current chunk's tail is not wasted. */
static void *
arena_alloc(memstore *ms, size_t n)
{
    n = MS_ROUND(n);
    if (n > ms->free_left) {
        if (n > MEMSTORE_CHUNK / 4)
            return chunk_new(ms, n);
        ms->free_at = chunk_new(ms, MEMSTORE_CHUNK);
        ms->free_left = MEMSTORE_CHUNK;
    }
    char *p = ms->free_at;
    ms->free_at += n;
    ms->free_left -= n;
    return p;
}

/* ------------------------------------------------------------------ order */

/* A position in the list's order: a cell's key, then seq descending, then
 * add order. Searches use seq UINT64_MAX / ord 0 to stand before every cell
 * of a key, seq 0 / ord UINT64_MAX to stand after them. */
typedef struct ms_key {
    const kiln_cell *cell;
    uint64_t seq;
    uint64_t ord;
} ms_key;

static int
node_cmp(const ms_node *n, const ms_key *k)
{
    int c = cell_compare(&n->cell, k->cell);
    if (c != 0)
        return c;
    if (n->cell.mvcc != k->seq)
        return n->cell.mvcc > k->seq ? -1 : 1;
    return n->ord < k->ord ? -1 : n->ord > k->ord;
}

static inline ms_node *
node_next(const ms_node *n, int level)
{
    return atomic_load_explicit(&((ms_node *)n)->next[level], memory_order_acquire);
}

/* The first node >= k, or NULL. When prev is not NULL, prev[l] is the last
 * node < k at each level l (the head if none): where an add links in. */
static ms_node *
find_ge(const memstore *ms, const ms_key *k, ms_node **prev)
{
    ms_node *x = ms->head;
    int level = atomic_load_explicit(&ms->height, memory_order_relaxed) - 1;
    for (;;) {
        ms_node *next = node_next(x, level);
        if (next != NULL && node_cmp(next, k) < 0) {
            x = next;
            continue;
        }
        if (prev != NULL)
            prev[level] = x;
        if (level == 0)
            return next;
        level--;
    }
}

/* The last node < k (or <= k when or_equal), or NULL if none. */
static ms_node *
find_before(const memstore *ms, const ms_key *k, int or_equal)
{
    ms_node *x = ms->head;
    int level = atomic_load_explicit(&ms->height, memory_order_relaxed) - 1;
    for (;;) {
        ms_node *next = node_next(x, level);
        int c = next != NULL ? node_cmp(next, k) : 1;
        if (c < 0 || (c == 0 && or_equal)) {
            x = next;
            continue;
        }
        if (level == 0)
            return x == ms->head ? NULL : x;
        level--;
    }
}

/* The last node, or NULL when empty. */
static ms_node *
find_last(const memstore *ms)
{
    ms_node *x = ms->head;
    int level = atomic_load_explicit(&ms->height, memory_order_relaxed) - 1;
    for (;;) {
        ms_node *next = node_next(x, level);
        if (next != NULL) {
            x = next;
            continue;
        }
        if (level == 0)
            return x == ms->head ? NULL : x;
        level--;
    }
}

/* ------------------------------------------------------------------ the row index */

static uint64_t
row_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a, then a final mix */
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static ms_rtab *
rtab_new(size_t slots)
{
    ms_rtab *t = kiln_calloc(1, sizeof *t + slots * sizeof t->slot[0]);
    t->mask = slots - 1;
    for (size_t i = 0; i < slots; i++)
        atomic_init(&t->slot[i], NULL);
    return t;
}

/* The entry of row in t, or NULL. */
static ms_rent *
rtab_find(const ms_rtab *t, uint64_t h, const uint8_t *row, uint32_t n)
{
    ms_rent *e = atomic_load_explicit(&((ms_rtab *)t)->slot[h & t->mask], memory_order_acquire);
    for (; e != NULL; e = atomic_load_explicit(&e->next, memory_order_acquire)) {
        if (e->hash != h)
            continue;
        const ms_node *f = atomic_load_explicit(&e->first, memory_order_acquire);
        if (f->cell.row_len == n && memcmp(f->cell.row, row, n) == 0)
            return e;
    }
    return NULL;
}

static void *arena_alloc(memstore *ms, size_t n);

/* Add row's first node to t (writer only). */
static void
rtab_insert(memstore *ms, ms_rtab *t, uint64_t h, const ms_node *first)
{
    ms_rent *e = arena_alloc(ms, sizeof *e);
    e->hash = h;
    atomic_init(&e->first, first);
    atomic_init(&e->next, atomic_load_explicit(&t->slot[h & t->mask], memory_order_relaxed));
    atomic_store_explicit(&t->slot[h & t->mask], e, memory_order_release);
}

/* Replace the index with one four times larger, built from the list. */
static void
rtab_grow(memstore *ms)
{
    ms_rtab *old = atomic_load_explicit(&ms->rtab, memory_order_relaxed);
    ms_rtab *t = rtab_new((old->mask + 1) * 4);
    const ms_node *last = NULL;
    for (const ms_node *n = node_next(ms->head, 0); n != NULL; n = node_next(n, 0)) {
        if (last == NULL || last->cell.row_len != n->cell.row_len ||
            memcmp(last->cell.row, n->cell.row, n->cell.row_len) != 0)
            rtab_insert(ms, t, row_hash(n->cell.row, n->cell.row_len), n);
        last = n;
    }
    t->older = old;
    atomic_store_explicit(&ms->rtab, t, memory_order_release);
}

/* After n is linked: if it is the first node of its row, the index says so. */
static void
rtab_note(memstore *ms, const ms_node *n, const ms_node *before)
{
    if (before != ms->head && before->cell.row_len == n->cell.row_len &&
        memcmp(before->cell.row, n->cell.row, n->cell.row_len) == 0)
        return;   /* a node of its row comes before it */
    ms_rtab *t = atomic_load_explicit(&ms->rtab, memory_order_relaxed);
    uint64_t h = row_hash(n->cell.row, n->cell.row_len);
    ms_rent *e = rtab_find(t, h, n->cell.row, n->cell.row_len);
    if (e != NULL) {
        atomic_store_explicit(&e->first, n, memory_order_release);
        return;
    }
    rtab_insert(ms, t, h, n);
    if (++ms->rows > t->mask + 1)   /* chains of one or two: a seek is one or two loads */
        rtab_grow(ms);
}

/* The first node of row, or NULL if the index has no such row. */
static const ms_node *
rtab_lookup(const memstore *ms, const uint8_t *row, uint32_t n)
{
    const ms_rtab *t = atomic_load_explicit(&((memstore *)ms)->rtab, memory_order_acquire);
    ms_rent *e = rtab_find(t, row_hash(row, n), row, n);
    return e != NULL ? atomic_load_explicit(&e->first, memory_order_acquire) : NULL;
}

/* ------------------------------------------------------------------ the memstore */

memstore *
memstore_new(size_t flush_bytes)
{
    memstore *ms = kiln_calloc(1, sizeof *ms);
    atomic_init(&ms->refs, 1);
    ms->head = kiln_calloc(1, sizeof(ms_node) + MS_MAX_HEIGHT * sizeof(ms->head->next[0]));
    ms->head->height = MS_MAX_HEIGHT;
    for (int i = 0; i < MS_MAX_HEIGHT; i++)
        atomic_init(&ms->head->next[i], NULL);
    atomic_init(&ms->height, 1);
    atomic_init(&ms->bytes, 0);
    atomic_init(&ms->count, 0);
    atomic_init(&ms->max_seq, 0);
    ms->rnd = 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)ms;
    ms->flush_bytes = flush_bytes;
    atomic_init(&ms->rtab, rtab_new(MS_RTAB_INITIAL));
    return ms;
}

void
memstore_ref(memstore *ms)
{
    atomic_fetch_add_explicit(&ms->refs, 1, memory_order_relaxed);
}

void
memstore_unref(memstore *ms)
{
    if (ms == NULL)
        return;
    /* acq_rel: the freeing thread sees everything the other holders did */
    if (atomic_fetch_sub_explicit(&ms->refs, 1, memory_order_acq_rel) != 1)
        return;
    ms_chunk *c = ms->chunks;
    while (c != NULL) {
        ms_chunk *next = c->next;
        free(c);
        c = next;
    }
    ms_rtab *t = atomic_load_explicit(&ms->rtab, memory_order_relaxed);
    while (t != NULL) {
        ms_rtab *older = t->older;
        free(t);
        t = older;
    }
    free(ms->head);
    free(ms);
}

static int
random_height(memstore *ms)
{
    int h = 1;
    while (h < MS_MAX_HEIGHT) {
        /* xorshift64 */
        ms->rnd ^= ms->rnd << 13;
        ms->rnd ^= ms->rnd >> 7;
        ms->rnd ^= ms->rnd << 17;
        if (ms->rnd % MS_BRANCHING != 0)
            break;
        h++;
    }
    return h;
}

/* Copy n bytes at p to *at and return where they went; empty fields point
 * at *at too, never NULL. */
static const uint8_t *
copy_field(uint8_t **at, const uint8_t *p, uint32_t n)
{
    uint8_t *dst = *at;
    if (n > 0)
        memcpy(dst, p, n);
    *at += n;
    return dst;
}

kiln_status
memstore_add(memstore *ms, const kiln_cell *c, uint64_t seq, kiln_err *err)
{
    kiln_status st = cell_validate(c, err);
    if (st != KILN_OK)
        return st;
    switch (c->type) {
    case CELL_TYPE_PUT:
    case CELL_TYPE_DELETE:
    case CELL_TYPE_DELETE_FAMILY_VERSION:
    case CELL_TYPE_DELETE_COLUMN:
    case CELL_TYPE_DELETE_FAMILY:
        break;
    default:
        return status_set(err, KILN_INVALID, "memstore: cell type %u is not Put or a delete",
                          (unsigned)c->type);
    }

    int h = random_height(ms);
    size_t head = sizeof(ms_node) + (size_t)h * sizeof(ms->head->next[0]);
    size_t payload = (size_t)c->row_len + c->family_len + c->qualifier_len + c->value_len +
                     c->tags_len;
    ms_node *n = arena_alloc(ms, head + payload);
    uint8_t *at = (uint8_t *)n + head;
    n->cell = *c;
    n->cell.row = copy_field(&at, c->row, c->row_len);
    n->cell.family = copy_field(&at, c->family, c->family_len);
    n->cell.qualifier = copy_field(&at, c->qualifier, c->qualifier_len);
    n->cell.value = copy_field(&at, c->value, c->value_len);
    n->cell.tags = copy_field(&at, c->tags, c->tags_len);
    n->cell.mvcc = seq;
    n->ord = ++ms->adds;
    n->height = h;

    /* After every cell equal to it in key and seq: the new node has the
     * largest ord, so the first node > it is the first node >= it. */
    ms_node *prev[MS_MAX_HEIGHT];
    ms_key k = {&n->cell, seq, n->ord};
    find_ge(ms, &k, prev);
    int height = atomic_load_explicit(&ms->height, memory_order_relaxed);
    if (h > height) {
        for (int i = height; i < h; i++)
            prev[i] = ms->head;
        /* A reader seeing the new height before the links below finds NULL
         * at the new levels of the head and moves down: harmless. */
        atomic_store_explicit(&ms->height, h, memory_order_relaxed);
    }
    for (int i = 0; i < h; i++) {
        /* n is not yet reachable: its own links need no ordering; the
         * release store into prev publishes n and everything written
         * to it. */
        atomic_init(&n->next[i], atomic_load_explicit(&prev[i]->next[i], memory_order_relaxed));
        atomic_store_explicit(&prev[i]->next[i], n, memory_order_release);
    }
    rtab_note(ms, n, prev[0]);
    atomic_fetch_add_explicit(&ms->count, 1, memory_order_relaxed);
    if (seq > atomic_load_explicit(&ms->max_seq, memory_order_relaxed))
        atomic_store_explicit(&ms->max_seq, seq, memory_order_relaxed);
    return KILN_OK;
}

uint64_t
memstore_max_seq(const memstore *ms)
{
    return atomic_load_explicit(&((memstore *)ms)->max_seq, memory_order_relaxed);
}

size_t
memstore_bytes(const memstore *ms)
{
    return atomic_load_explicit(&((memstore *)ms)->bytes, memory_order_relaxed);
}

size_t
memstore_count(const memstore *ms)
{
    return atomic_load_explicit(&((memstore *)ms)->count, memory_order_relaxed);
}

int
memstore_full(const memstore *ms)
{
    return ms->flush_bytes > 0 && memstore_bytes(ms) >= ms->flush_bytes;
}

/* ------------------------------------------------------------------ the iterator */

typedef struct ms_iter {
    kiln_iter base;            /* first: the kiln_iter is the ms_iter */
    memstore *ms;              /* a reference, dropped on close */
    const ms_node *node;       /* the current node; NULL when not valid */
    uint64_t upto;             /* cells with a larger sequence are passed over */
    int64_t retired_ts;        /* and cells with a timestamp <= this */
} ms_iter;

static inline int
ms_iter_hides(const ms_iter *it, const ms_node *n)
{
    return n->cell.mvcc > it->upto || n->cell.ts <= it->retired_ts;
}

/* Land on n, or on the first visible node after it. */
static void
ms_iter_set(ms_iter *it, const ms_node *n)
{
    while (n != NULL && ms_iter_hides(it, n))
        n = node_next(n, 0);
    it->node = n;
    it->base.cur = n != NULL ? &n->cell : NULL;
}

/* Land on n, or on the last visible node before it. */
static void
ms_iter_set_back(ms_iter *it, const ms_node *n)
{
    while (n != NULL && ms_iter_hides(it, n)) {
        ms_key k = {&n->cell, n->cell.mvcc, n->ord};
        n = find_before(it->ms, &k, 0);
    }
    it->node = n;
    it->base.cur = n != NULL ? &n->cell : NULL;
}

static void
ms_iter_seek_first(kiln_iter *base)
{
    ms_iter *it = (ms_iter *)base;
    kiln_iter_restart(base);
    ms_iter_set(it, node_next(it->ms->head, 0));
}

static void
ms_iter_seek_last(kiln_iter *base)
{
    ms_iter *it = (ms_iter *)base;
    kiln_iter_restart(base);
    ms_iter_set_back(it, find_last(it->ms));
}

static void
ms_iter_seek(kiln_iter *base, const kiln_cell *key)
{
    ms_iter *it = (ms_iter *)base;
    kiln_iter_restart(base);
    if (key->family_len == 0 && key->qualifier_len == 0 && key->ts == CELL_LATEST_TIMESTAMP &&
        key->type == CELL_TYPE_MAXIMUM) {
        /* the start of a row (cell_first_on_row): its first node, if any */
        const ms_node *first = rtab_lookup(it->ms, key->row, key->row_len);
        if (first != NULL) {
            ms_iter_set(it, first);
            return;
        }
    }
    ms_key k = {key, UINT64_MAX, 0};
    ms_iter_set(it, find_ge(it->ms, &k, NULL));
}

static void
ms_iter_seek_for_prev(kiln_iter *base, const kiln_cell *key)
{
    ms_iter *it = (ms_iter *)base;
    kiln_iter_restart(base);
    ms_key k = {key, 0, UINT64_MAX};
    ms_iter_set_back(it, find_before(it->ms, &k, 1));
}

static void
ms_iter_next(kiln_iter *base)
{
    ms_iter *it = (ms_iter *)base;
    ms_iter_set(it, node_next(it->node, 0));
}

/* No back links (they could not be published with the forward ones
 * atomically): search for the last node before this one, as LevelDB does.
 * A cell added just before the current one since it was reached is found
 * too: the walk stays in order. */
static void
ms_iter_prev(kiln_iter *base)
{
    ms_iter *it = (ms_iter *)base;
    ms_key k = {&it->node->cell, it->node->cell.mvcc, it->node->ord};
    ms_iter_set_back(it, find_before(it->ms, &k, 0));
}

static void
ms_iter_close(kiln_iter *base)
{
    ms_iter *it = (ms_iter *)base;
    memstore_unref(it->ms);
    free(it);
}

static const kiln_iter_ops ms_iter_ops = {
    ms_iter_seek_first, ms_iter_seek_last, ms_iter_seek, ms_iter_seek_for_prev,
    ms_iter_next,       ms_iter_prev,      ms_iter_close,
};

kiln_iter *
memstore_iter_upto(memstore *ms, uint64_t max_seq, int64_t retired_ts)
{
    ms_iter *it = kiln_calloc(1, sizeof *it);
    kiln_iter_init(&it->base, &ms_iter_ops);
    memstore_ref(ms);
    it->ms = ms;
    it->upto = max_seq;
    it->retired_ts = retired_ts;
    return &it->base;
}

kiln_iter *
memstore_iter(memstore *ms)
{
    return memstore_iter_upto(ms, UINT64_MAX, INT64_MIN);
}
