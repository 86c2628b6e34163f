/* rowcache.c -- sharded CLOCK caches of row images over one shared byte pool
 * (rowcache.h). Each shard has a chained hash table and a ring of its
 * entries under its own mutex; an entry holds the key and the image. A hit
 * only sets the entry's reference bit (the entry is in the CPU cache
 * already; an LRU list would also write its two neighbours, two more cache
 * misses on every hit of a large cache); eviction sweeps the ring with a
 * hand, giving referenced entries a second chance. The pool's byte count is
 * atomic so that caches of different tables and versions can share a budget
 * without a global lock.
 *
 * Entries live in slabs mapped per shard and cut into 32-byte size classes,
 * with a free list per class (entries above 4 KiB get a mapping of their
 * own). A shard's first slab is 64 KiB, and each next one as large as all
 * before it, up to 2 MiB: a cache of a few rows (a small table, or a
 * version served for a moment) maps a few of those, not 32 huge pages, so
 * that what its slabs hold stays near what the pool counts for it. A cache
 * of millions of rows is freed by handing its slabs back whole: no
 * per-entry free, and nothing stays behind in malloc's per-thread arenas.
 * The full slabs, and bucket arrays of a slab or more, are aligned huge
 * pages (slab_map_huge): a Get on a cache of gigabytes misses on its bucket
 * and its entry, and on 4 KiB pages each of those misses is a page walk too.
 *
 * The pool keeps the slabs of a freed cache, as long as its caches and the
 * slabs kept stay within its capacity, and the next cache to need a slab
 * takes one of those before mapping a new one. A cache filling beside the
 * one it replaces then writes to memory that is already mapped: a fresh
 * mapping's first touch of each huge page costs a fault that clears 2 MiB
 * (milliseconds each on a virtual machine whose host backs the page only
 * then), and on the core a worker shares, the fault is time the worker
 * cannot run. The memory the server holds for row caches is their budget
 * at most, as --row-cache-mb says; rowcache_pool_free unmaps what is kept.
 */
#include "serving/rowcache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "storage/base/slab.h"

#define ROWCACHE_SHARD_BITS 5
#define ROWCACHE_SHARDS (1u << ROWCACHE_SHARD_BITS)
#define ROWCACHE_SLAB_BYTES SLAB_BYTES       /* 2 MiB, aligned, huge pages */
#define ROWCACHE_FIRST_SLAB ((size_t)64 << 10) /* a shard's first slab (4 KiB pages) */
#define ROWCACHE_CLASS_BYTES 32
#define ROWCACHE_CLASSES 128                 /* slab entries up to 4 KiB */
#define ROWCACHE_BIG UINT32_MAX

/* The header of every mapping (a slab, or one big entry). */
typedef struct rowcache_map {
    struct rowcache_map *prev, *next;
    size_t size;
    char pad[40];                            /* entries start 64-byte aligned */
} rowcache_map;

/* Ring links; first in an entry, so a link is also its entry. */
typedef struct rowcache_link {
    struct rowcache_link *prev, *next;
} rowcache_link;

typedef struct rowcache_entry {
    rowcache_link ring;
    struct rowcache_entry *chain;
    uint64_t hash;
    int64_t expires_ms;
    uint32_t klen, vlen;
    uint32_t referenced;                  /* set by hits, cleared by the hand */
    uint32_t cls;                         /* size class, or ROWCACHE_BIG */
    size_t charge;
    uint8_t data[];                       /* key, then image */
} rowcache_entry;

typedef struct rowcache_shard {
    pthread_mutex_t mu;
    rowcache_entry **buckets;
    size_t nbuckets;                      /* power of two */
    size_t count;
    size_t bytes;
    rowcache_link ring;                   /* sentinel */
    rowcache_link *hand;                  /* next link the sweep looks at */
    rowcache_map maps;                    /* sentinel of the shard's mappings */
    uint8_t *bump, *bump_end;             /* unused space of the newest slab */
    size_t slab_bytes;                    /* size of the slabs mapped so far */
    int full_slabs;                       /* no small first slabs (rowcache_expect_bytes) */
    size_t mapped;                        /* the slabs and big entries' mappings */
    void *free_class[ROWCACHE_CLASSES];   /* freed slots, linked through their first word */
    uint64_t hits, misses, inserts, evictions, growths;
    int retired;                          /* bytes no longer counted in the pool */
    rowcache_pool *pool;                  /* whose kept slabs a new slab comes from */
    char pad[64];
} rowcache_shard;

struct rowcache_pool {
    size_t capacity;
    _Atomic uint64_t used;
    _Atomic uint64_t lent;                /* rowcache_pool_lend: room over capacity */
    pthread_mutex_t spare_mu;
    rowcache_map *spares;                 /* slabs of freed caches, linked by next */
    _Atomic uint64_t spare_bytes;
};

struct rowcache {
    rowcache_pool *pool;
    int warming;                          /* inserts do not evict (see rowcache_set_warming) */
    rowcache_shard shards[ROWCACHE_SHARDS];
};

static rowcache_entry **rowcache_buckets_new(size_t nb);
static void rowcache_buckets_free(rowcache_entry **b, size_t nb);

rowcache_pool *
rowcache_pool_new(size_t capacity_bytes)
{
    rowcache_pool *p = kiln_calloc(1, sizeof *p);
    p->capacity = capacity_bytes;
    atomic_init(&p->used, 0);
    atomic_init(&p->lent, 0);
    pthread_mutex_init(&p->spare_mu, NULL);
    atomic_init(&p->spare_bytes, 0);
    return p;
}

void
rowcache_pool_free(rowcache_pool *p)
{
    if (p == NULL)
        return;
    for (rowcache_map *m = p->spares; m != NULL;) {
        rowcache_map *next = m->next;
        munmap(m, ROWCACHE_SLAB_BYTES);
        m = next;
    }
    pthread_mutex_destroy(&p->spare_mu);
    free(p);
}

uint64_t
rowcache_pool_spare_bytes(const rowcache_pool *p)
{
    return p ? atomic_load_explicit(&((rowcache_pool *)p)->spare_bytes, memory_order_relaxed)
             : 0;
}

/* A kept slab, or NULL if the pool has none. */
static void *
rowcache_pool_take_spare(rowcache_pool *p)
{
    if (p == NULL || atomic_load_explicit(&p->spare_bytes, memory_order_relaxed) == 0)
        return NULL;
    pthread_mutex_lock(&p->spare_mu);
    rowcache_map *m = p->spares;
    if (m != NULL) {
        p->spares = m->next;
        atomic_fetch_sub_explicit(&p->spare_bytes, ROWCACHE_SLAB_BYTES, memory_order_relaxed);
    }
    pthread_mutex_unlock(&p->spare_mu);
    return m;
}

/* Keep slab m for the pool's next caches if the caches' bytes and the slabs
 * kept stay within capacity; 0 if it was not kept (the caller unmaps it). */
static int
rowcache_pool_keep_spare(rowcache_pool *p, rowcache_map *m)
{
    int kept = 0;
    pthread_mutex_lock(&p->spare_mu);
    uint64_t used = atomic_load_explicit(&p->used, memory_order_relaxed);
    uint64_t spare = atomic_load_explicit(&p->spare_bytes, memory_order_relaxed);
    if (used + spare + ROWCACHE_SLAB_BYTES <= p->capacity) {
        m->next = p->spares;
        p->spares = m;
        atomic_fetch_add_explicit(&p->spare_bytes, ROWCACHE_SLAB_BYTES, memory_order_relaxed);
        kept = 1;
    }
    pthread_mutex_unlock(&p->spare_mu);
    return kept;
}

size_t
rowcache_pool_capacity(const rowcache_pool *p)
{
    return p ? p->capacity : 0;
}

uint64_t
rowcache_pool_used(const rowcache_pool *p)
{
    return p ? atomic_load_explicit(&((rowcache_pool *)p)->used, memory_order_relaxed) : 0;
}

void
rowcache_pool_lend(rowcache_pool *p, uint64_t bytes)
{
    if (p != NULL)
        atomic_fetch_add_explicit(&p->lent, bytes, memory_order_relaxed);
}

void
rowcache_pool_repay(rowcache_pool *p, uint64_t bytes)
{
    if (p != NULL)
        atomic_fetch_sub_explicit(&p->lent, bytes, memory_order_relaxed);
}

uint64_t
rowcache_pool_limit(const rowcache_pool *p)
{
    if (p == NULL)
        return 0;
    return p->capacity + atomic_load_explicit(&((rowcache_pool *)p)->lent, memory_order_relaxed);
}

rowcache *
rowcache_new(rowcache_pool *pool)
{
    if (pool == NULL || pool->capacity == 0)
        return NULL;
    rowcache *c = kiln_calloc(1, sizeof *c);
    c->pool = pool;
    for (unsigned i = 0; i < ROWCACHE_SHARDS; i++) {
        rowcache_shard *s = &c->shards[i];
        pthread_mutex_init(&s->mu, NULL);
        s->nbuckets = 16;
        s->buckets = rowcache_buckets_new(s->nbuckets);
        s->bytes = s->nbuckets * sizeof *s->buckets;
        atomic_fetch_add_explicit(&pool->used, s->bytes, memory_order_relaxed);
        s->ring.next = s->ring.prev = &s->ring;
        s->hand = &s->ring;
        s->maps.next = s->maps.prev = &s->maps;
        s->pool = pool;
    }
    return c;
}

void
rowcache_free(rowcache *c)
{
    if (c == NULL)
        return;
    uint64_t freed = 0;
    for (unsigned i = 0; i < ROWCACHE_SHARDS; i++) {
        rowcache_shard *s = &c->shards[i];
        if (!s->retired)
            freed += s->bytes;
    }
    /* Counted out first, so that the slabs below fit in what it frees. */
    atomic_fetch_sub_explicit(&c->pool->used, freed, memory_order_relaxed);
    unsigned unmapped = 0;
    for (unsigned i = 0; i < ROWCACHE_SHARDS; i++) {
        rowcache_shard *s = &c->shards[i];
        for (rowcache_map *m = s->maps.next; m != &s->maps;) {
            rowcache_map *next = m->next;
            if (m->size != ROWCACHE_SLAB_BYTES || !rowcache_pool_keep_spare(c->pool, m)) {
                munmap(m, m->size);
                /* Each unmap takes the process's memory-map lock: pause now
                 * and then so the workers' own mappings and page faults are
                 * not queued behind gigabytes of them. */
                if (++unmapped % 64 == 0)
                    usleep(200);
            }
            m = next;
        }
        rowcache_buckets_free(s->buckets, s->nbuckets);
        pthread_mutex_destroy(&s->mu);
    }
    free(c);
}

/* ------------------------------------------------------------------ slabs */

/* A zeroed bucket array of nb slots, on huge pages once it spans a slab (a
 * lookup's first miss is its bucket; on 4 KiB pages it is a page walk too). */
static rowcache_entry **
rowcache_buckets_new(size_t nb)
{
    return slab_table_alloc(nb * sizeof(rowcache_entry *));
}

static void
rowcache_buckets_free(rowcache_entry **b, size_t nb)
{
    slab_table_free(b, nb * sizeof(rowcache_entry *));
}

static rowcache_map *
rowcache_map_new(rowcache_shard *s, size_t size)
{
    void *p;
    if (size == ROWCACHE_SLAB_BYTES) {
        p = rowcache_pool_take_spare(s->pool);
        if (p == NULL)
            p = slab_map_huge(size);
    } else {
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            p = NULL;
    }
    if (p == NULL)
        return NULL;
    rowcache_map *m = p;
    m->size = size;
    s->mapped += size;
    m->next = s->maps.next;
    m->prev = &s->maps;
    s->maps.next->prev = m;
    s->maps.next = m;
    return m;
}

/* Room for an entry of n bytes; *cls and *charge say what it takes. NULL
 * if no memory can be mapped. REQUIRES: s->mu. */
static rowcache_entry *
rowcache_alloc(rowcache_shard *s, size_t n, uint32_t *cls, size_t *charge)
{
    size_t c = (n + ROWCACHE_CLASS_BYTES - 1) / ROWCACHE_CLASS_BYTES;
    if (c == 0 || c > ROWCACHE_CLASSES) {
        size_t size = (sizeof(rowcache_map) + n + 4095) & ~(size_t)4095;
        rowcache_map *m = rowcache_map_new(s, size);
        if (m == NULL)
            return NULL;
        *cls = ROWCACHE_BIG;
        *charge = size;
        return (rowcache_entry *)(m + 1);
    }
    size_t bytes = c * ROWCACHE_CLASS_BYTES;
    *cls = (uint32_t)(c - 1);
    *charge = bytes;
    void *slot = s->free_class[c - 1];
    if (slot != NULL) {
        memcpy(&s->free_class[c - 1], slot, sizeof(void *));
        return slot;
    }
    if (s->bump == NULL || (size_t)(s->bump_end - s->bump) < bytes) {
        /* 64 KiB first, then as much as the shard has, up to a full slab */
        size_t size = s->slab_bytes < ROWCACHE_FIRST_SLAB ? ROWCACHE_FIRST_SLAB : s->slab_bytes;
        if (size > ROWCACHE_SLAB_BYTES || s->full_slabs)
            size = ROWCACHE_SLAB_BYTES;
        rowcache_map *m = rowcache_map_new(s, size);
        if (m == NULL)
            return NULL;
        s->slab_bytes += size;
        s->bump = (uint8_t *)(m + 1);
        s->bump_end = (uint8_t *)m + size;
    }
    slot = s->bump;
    s->bump += bytes;
    return slot;
}

/* Give an entry's room back. REQUIRES: s->mu. */
static void
rowcache_release(rowcache_shard *s, rowcache_entry *e)
{
    if (e->cls == ROWCACHE_BIG) {
        rowcache_map *m = (rowcache_map *)e - 1;
        m->prev->next = m->next;
        m->next->prev = m->prev;
        s->mapped -= m->size;
        munmap(m, m->size);
        return;
    }
    void *slot = e;
    memcpy(slot, &s->free_class[e->cls], sizeof(void *));
    s->free_class[e->cls] = slot;
}

static uint64_t
rowcache_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    for (size_t k = 0; i < n; i++, k += 8)
        w |= (uint64_t)p[i] << k;
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 29;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
    return h;
}

static rowcache_shard *
rowcache_shard_of(rowcache *c, uint64_t h)
{
    return &c->shards[h >> (64 - ROWCACHE_SHARD_BITS)];
}

static rowcache_entry **
rowcache_slot(rowcache_shard *s, uint64_t h, const uint8_t *key, size_t n)
{
    rowcache_entry **pp = &s->buckets[h & (s->nbuckets - 1)];
    while (*pp != NULL) {
        rowcache_entry *e = *pp;
        if (e->hash == h && e->klen == n && memcmp(e->data, key, n) == 0)
            return pp;
        pp = &e->chain;
    }
    return pp;
}

/* Insert e just behind the hand: the sweep reaches it last. */
static void
rowcache_ring_insert(rowcache_shard *s, rowcache_entry *e)
{
    rowcache_link *h = s->hand;
    e->ring.next = h;
    e->ring.prev = h->prev;
    h->prev->next = &e->ring;
    h->prev = &e->ring;
}

/* Unlink e from its chain and the ring and free it. REQUIRES: s->mu. */
static void
rowcache_remove(rowcache *c, rowcache_shard *s, rowcache_entry *e)
{
    rowcache_entry **pp = rowcache_slot(s, e->hash, e->data, e->klen);
    *pp = e->chain;
    if (s->hand == &e->ring)
        s->hand = e->ring.next;
    e->ring.prev->next = e->ring.next;
    e->ring.next->prev = e->ring.prev;
    s->count--;
    s->bytes -= e->charge;
    if (!s->retired)
        atomic_fetch_sub_explicit(&c->pool->used, e->charge, memory_order_relaxed);
    rowcache_release(s, e);
}

#define ROWCACHE_SWEEP_MAX 64

/* Evict one entry other than keep (CLOCK). The hand passes at most
 * ROWCACHE_SWEEP_MAX referenced entries and then takes the next one anyway,
 * so that a ring of hot entries is not swept whole under the lock. Returns
 * the charge freed, 0 if there is nothing to evict. */
static size_t
rowcache_evict_one(rowcache *c, rowcache_shard *s, const rowcache_entry *keep)
{
    size_t passed = 0;
    for (size_t steps = 0; steps <= 2 * s->count + 2; steps++) {
        rowcache_link *l = s->hand;
        if (l == &s->ring) {
            s->hand = l->next;
            continue;
        }
        rowcache_entry *e = (rowcache_entry *)l;
        if (e == keep || (e->referenced && passed++ < ROWCACHE_SWEEP_MAX)) {
            e->referenced = 0;
            s->hand = l->next;
            continue;
        }
        size_t charge = e->charge;
        rowcache_remove(c, s, e);
        s->evictions++;
        return charge;
    }
    return 0;
}

/* Rehash the shard into nb buckets (a power of two above the current count);
 * the added bytes count against the pool. REQUIRES: s->mu. */
static void
rowcache_resize(rowcache *c, rowcache_shard *s, size_t nb)
{
    size_t more = (nb - s->nbuckets) * sizeof *s->buckets;
    s->bytes += more;
    if (!s->retired)
        atomic_fetch_add_explicit(&c->pool->used, more, memory_order_relaxed);
    rowcache_entry **b = rowcache_buckets_new(nb);
    for (size_t i = 0; i < s->nbuckets; i++) {
        for (rowcache_entry *e = s->buckets[i]; e != NULL;) {
            rowcache_entry *next = e->chain;
            e->chain = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
            e = next;
        }
    }
    rowcache_buckets_free(s->buckets, s->nbuckets);
    s->buckets = b;
    s->nbuckets = nb;
}

/* Double the bucket array. REQUIRES: s->mu. */
static void
rowcache_grow(rowcache *c, rowcache_shard *s)
{
    s->growths++;
    rowcache_resize(c, s, s->nbuckets * 2);
}

void
rowcache_reserve(rowcache *c, size_t entries)
{
    if (c == NULL)
        return;
    /* A quarter over the mean, as shards fill unevenly; the buckets stay a
     * small part of the pool, an eighth at most. */
    size_t cap = c->pool->capacity / 8 / sizeof(rowcache_entry *) / ROWCACHE_SHARDS;
    if (entries > (size_t)1 << 40)
        entries = (size_t)1 << 40;
    size_t per = entries / ROWCACHE_SHARDS + entries / ROWCACHE_SHARDS / 4, nb = 16;
    while (nb < per)
        nb *= 2;
    while (nb > 16 && nb > cap)
        nb /= 2;
    for (unsigned i = 0; i < ROWCACHE_SHARDS; i++) {
        rowcache_shard *s = &c->shards[i];
        pthread_mutex_lock(&s->mu);
        if (s->nbuckets < nb) {
            rowcache_resize(c, s, nb);
            /* Fault the array in here rather than under a request. */
            size_t page = (size_t)sysconf(_SC_PAGESIZE);
            for (size_t off = 0; off < nb * sizeof *s->buckets; off += page)
                ((volatile char *)s->buckets)[off] = 0;
        }
        pthread_mutex_unlock(&s->mu);
    }
}

void
rowcache_expect_bytes(rowcache *c, uint64_t bytes)
{
    if (c == NULL || bytes / ROWCACHE_SHARDS < ROWCACHE_SLAB_BYTES)
        return;
    for (unsigned i = 0; i < ROWCACHE_SHARDS; i++) {
        rowcache_shard *s = &c->shards[i];
        pthread_mutex_lock(&s->mu);
        s->full_slabs = 1;
        pthread_mutex_unlock(&s->mu);
    }
}

int
rowcache_get(rowcache *c, const uint8_t *key, size_t n, int64_t now_ms, kbuf *out)
{
    uint64_t h = rowcache_hash(key, n);
    rowcache_shard *s = rowcache_shard_of(c, h);
    pthread_mutex_lock(&s->mu);
    rowcache_entry *e = *rowcache_slot(s, h, key, n);
    if (e == NULL || e->expires_ms <= now_ms) {
        if (e != NULL)
            rowcache_remove(c, s, e);
        s->misses++;
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    if (!e->referenced)
        e->referenced = 1;
    s->hits++;
    buf_reset(out);
    buf_append(out, e->data + e->klen, e->vlen);
    pthread_mutex_unlock(&s->mu);
    return 1;
}

void
rowcache_prefetch(rowcache *c, const uint8_t *key, size_t n, int step)
{
    uint64_t h = rowcache_hash(key, n);
    rowcache_shard *s = rowcache_shard_of(c, h);
    pthread_mutex_lock(&s->mu);
    rowcache_entry *const *b = &s->buckets[h & (s->nbuckets - 1)];
    if (step == 0) {
        __builtin_prefetch(b, 1, 3);
    } else if (*b != NULL) {
        /* the header, the key and most of an image (an entry of a row of a
         * few short cells spans three to five cache lines) */
        for (int off = 0; off < 256; off += 64)
            __builtin_prefetch((const char *)*b + off, 0, 3);
    }
    pthread_mutex_unlock(&s->mu);
}

int
rowcache_contains(rowcache *c, const uint8_t *key, size_t n)
{
    uint64_t h = rowcache_hash(key, n);
    rowcache_shard *s = rowcache_shard_of(c, h);
    pthread_mutex_lock(&s->mu);
    int found = *rowcache_slot(s, h, key, n) != NULL;
    pthread_mutex_unlock(&s->mu);
    return found;
}

/* rowcache_put, or with fresh set rowcache_put_new: the entry goes to the
 * head of its bucket's chain without a look for one it replaces. */
static void
rowcache_insert(rowcache *c, const uint8_t *key, size_t n, const uint8_t *img, size_t len,
                int64_t expires_ms, int fresh)
{
    if (n > UINT32_MAX || len > UINT32_MAX)
        return;
    size_t need = sizeof(rowcache_entry) + n + len;
    if (need > c->pool->capacity / 8)
        return;   /* one row must not flush a whole cache */
    uint64_t h = rowcache_hash(key, n);
    rowcache_shard *s = rowcache_shard_of(c, h);
    pthread_mutex_lock(&s->mu);
    if (s->retired) {
        pthread_mutex_unlock(&s->mu);
        return;   /* a retired cache takes nothing new */
    }
    /* The end of the chain when the key is not there (an allocation changes
     * no chain); after a removal, found again. */
    rowcache_entry **pp = &s->buckets[h & (s->nbuckets - 1)];
    if (!fresh) {
        pp = rowcache_slot(s, h, key, n);
        if (*pp != NULL) {
            rowcache_remove(c, s, *pp);
            pp = NULL;
        }
    }
    uint32_t cls;
    size_t charge;
    rowcache_entry *e = rowcache_alloc(s, need, &cls, &charge);
    if (e == NULL) {
        pthread_mutex_unlock(&s->mu);
        return;
    }
    e->hash = h;
    e->expires_ms = expires_ms;
    e->klen = (uint32_t)n;
    e->vlen = (uint32_t)len;
    e->referenced = 0;
    e->cls = cls;
    e->charge = charge;
    memcpy(e->data, key, n);
    if (len > 0)
        memcpy(e->data + n, img, len);
    if (pp == NULL)
        pp = rowcache_slot(s, h, key, n);
    e->chain = *pp;   /* NULL at a chain's end; the rest of it at its head */
    *pp = e;
    rowcache_ring_insert(s, e);
    s->count++;
    s->bytes += charge;
    s->inserts++;
    uint64_t used = atomic_fetch_add_explicit(&c->pool->used, charge, memory_order_relaxed) +
                    charge;
    uint64_t limit = rowcache_pool_limit(c->pool);
    while (!c->warming && used > limit) {
        size_t freed = rowcache_evict_one(c, s, e);
        if (freed == 0) {
            /* this shard holds nothing else: the pool is full of other caches */
            rowcache_remove(c, s, e);
            break;
        }
        used -= freed;
    }
    if (s->count > s->nbuckets)
        rowcache_grow(c, s);
    pthread_mutex_unlock(&s->mu);
}

void
rowcache_put(rowcache *c, const uint8_t *key, size_t n, const uint8_t *img, size_t len,
             int64_t expires_ms)
{
    rowcache_insert(c, key, n, img, len, expires_ms, 0);
}

void
rowcache_put_new(rowcache *c, const uint8_t *key, size_t n, const uint8_t *img, size_t len,
                 int64_t expires_ms)
{
    rowcache_insert(c, key, n, img, len, expires_ms, 1);
}

void
rowcache_retire(rowcache *c)
{
    if (c == NULL)
        return;
    uint64_t bytes = 0;
    for (unsigned i = 0; i < ROWCACHE_SHARDS; i++) {
        rowcache_shard *s = &c->shards[i];
        pthread_mutex_lock(&s->mu);
        if (!s->retired)
            bytes += s->bytes;
        s->retired = 1;
        pthread_mutex_unlock(&s->mu);
    }
    atomic_fetch_sub_explicit(&c->pool->used, bytes, memory_order_relaxed);
}

void
rowcache_set_warming(rowcache *c, int on)
{
    if (c != NULL)
        c->warming = on;
}

size_t
rowcache_hot_keys(rowcache *c, size_t max, kbuf *out)
{
    /* Copy each shard's referenced keys (read since the hand last passed),
     * newest first, then the others; then interleave the shards so that a
     * warm-up cut short by its time budget has covered every shard alike.
     * A shard is walked at most twice its quota, to bound the lock hold. */
    kbuf per[ROWCACHE_SHARDS];
    size_t pos[ROWCACHE_SHARDS];
    size_t quota = (max + ROWCACHE_SHARDS - 1) / ROWCACHE_SHARDS;
    for (unsigned i = 0; i < ROWCACHE_SHARDS; i++) {
        rowcache_shard *s = &c->shards[i];
        buf_init(&per[i]);
        pos[i] = 0;
        size_t cnt = 0;
        pthread_mutex_lock(&s->mu);
        for (int pass = 0; pass < 2; pass++) {
            size_t walked = 0;
            for (rowcache_link *l = s->hand->prev; l != s->hand && cnt < quota &&
                                                   walked < 2 * quota;
                 l = l->prev, walked++) {
                if (l == &s->ring)
                    continue;
                const rowcache_entry *e = (const rowcache_entry *)l;
                if ((pass == 0) != (e->referenced != 0))
                    continue;
                uint8_t len[4] = {(uint8_t)e->klen, (uint8_t)(e->klen >> 8),
                                  (uint8_t)(e->klen >> 16), (uint8_t)(e->klen >> 24)};
                buf_append(&per[i], len, 4);
                buf_append(&per[i], e->data, e->klen);
                cnt++;
            }
        }
        pthread_mutex_unlock(&s->mu);
    }
    size_t total = 0;
    for (int more = 1; more && total < max;) {
        more = 0;
        for (unsigned i = 0; i < ROWCACHE_SHARDS && total < max; i++) {
            if (pos[i] >= per[i].len)
                continue;
            const uint8_t *p = per[i].data + pos[i];
            uint32_t kl = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                          (uint32_t)p[3] << 24;
            buf_append(out, p, 4 + (size_t)kl);
            pos[i] += 4 + (size_t)kl;
            total++;
            more = 1;
        }
    }
    for (unsigned i = 0; i < ROWCACHE_SHARDS; i++)
        buf_free(&per[i]);
    return total;
}

void
rowcache_get_stats(rowcache *c, rowcache_stats *out)
{
    memset(out, 0, sizeof *out);
    if (c == NULL)
        return;
    for (unsigned i = 0; i < ROWCACHE_SHARDS; i++) {
        rowcache_shard *s = &c->shards[i];
        pthread_mutex_lock(&s->mu);
        out->hits += s->hits;
        out->misses += s->misses;
        out->inserts += s->inserts;
        out->evictions += s->evictions;
        out->growths += s->growths;
        out->entries += s->count;
        out->bytes += s->bytes;
        out->mapped += s->mapped;
        pthread_mutex_unlock(&s->mu);
    }
}

/* ------------------------------------------------------------------ images */

static void
rowcache_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t
rowcache_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void
rowcache_encode(const store_row *r, kbuf *out)
{
    size_t need = 4;
    for (size_t i = 0; i < r->count; i++) {
        const kiln_cell *c = &r->cells[i];
        need += 1 + c->family_len + 4 + c->qualifier_len + 8 + 4 + c->value_len;
    }
    buf_reset(out);
    buf_reserve(out, need);
    uint8_t *p = out->data;
    rowcache_le32(p, (uint32_t)r->count);
    p += 4;
    for (size_t i = 0; i < r->count; i++) {
        const kiln_cell *c = &r->cells[i];
        *p++ = (uint8_t)c->family_len;
        memcpy(p, c->family, c->family_len);
        p += c->family_len;
        rowcache_le32(p, c->qualifier_len);
        p += 4;
        if (c->qualifier_len)
            memcpy(p, c->qualifier, c->qualifier_len);
        p += c->qualifier_len;
        uint64_t ts = (uint64_t)c->ts;
        rowcache_le32(p, (uint32_t)ts);
        rowcache_le32(p + 4, (uint32_t)(ts >> 32));
        p += 8;
        rowcache_le32(p, c->value_len);
        p += 4;
        if (c->value_len)
            memcpy(p, c->value, c->value_len);
        p += c->value_len;
    }
    out->len = need;
}

long
rowcache_decode(const uint8_t *img, size_t len, kslice row, kiln_cell **cells, size_t *cap)
{
    if (len < 4)
        return -1;
    uint32_t count = rowcache_get32(img);
    if (count > len)
        return -1;
    if (count > *cap) {
        *cap = count;
        *cells = kiln_realloc(*cells, *cap * sizeof **cells);
    }
    size_t pos = 4;
    for (uint32_t i = 0; i < count; i++) {
        kiln_cell *c = &(*cells)[i];
        memset(c, 0, sizeof *c);
        if (pos + 1 > len)
            return -1;
        c->family_len = img[pos++];
        if (len - pos < (size_t)c->family_len + 4)
            return -1;
        c->family = img + pos;
        pos += c->family_len;
        c->qualifier_len = rowcache_get32(img + pos);
        pos += 4;
        if (len - pos < (size_t)c->qualifier_len + 12)
            return -1;
        c->qualifier = img + pos;
        pos += c->qualifier_len;
        c->ts = (int64_t)((uint64_t)rowcache_get32(img + pos) |
                          (uint64_t)rowcache_get32(img + pos + 4) << 32);
        pos += 8;
        c->value_len = rowcache_get32(img + pos);
        pos += 4;
        if (len - pos < c->value_len)
            return -1;
        c->value = img + pos;
        pos += c->value_len;
        c->row = row.p;
        c->row_len = (uint32_t)row.n;
        c->type = CELL_TYPE_PUT;
    }
    return pos == len ? (long)count : -1;
}
