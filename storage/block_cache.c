/* block_cache.c -- sharded LRU cache of decoded HFile blocks.
 *
 * 16 shards (by default), chosen by the top bits of a 64-bit hash of (file id, offset),
 * each with its own mutex, a chained hash table and an intrusive LRU list.
 * An entry holds one reference for being in the table plus one per pin; only
 * entries pinned by nobody else sit on the LRU list, so eviction (oldest
 * first, while the shard is over its share of the budget) never touches a
 * block a reader holds. An entry removed from the table while pinned is freed
 * by its last release.
 */
#include "storage/block_cache.h"

#include "storage/buf.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define DEFAULT_SHARD_BITS 4
#define MAX_SHARD_BITS 8

struct block_cache_handle {
    uint64_t file_id;
    uint64_t offset;
    void *data;
    size_t size;
    size_t charge;          /* size + entry overhead, counted against the budget */
    uint64_t hash;
    uint32_t refs;          /* table reference (while in_table) + pins */
    int in_table;
    block_cache_handle *chain;              /* hash bucket chain */
    block_cache_handle *lru_prev, *lru_next; /* on the LRU list iff refs == 1 && in_table */
};

typedef struct cache_shard {
    pthread_mutex_t mu;
    block_cache_handle **buckets;
    size_t nbuckets;        /* power of two */
    size_t count;
    size_t usage;
    size_t capacity;
    block_cache_handle lru; /* sentinel: lru.lru_next is the oldest */
    uint64_t hits, misses, inserts, evictions;
    /* Pad shards apart so two threads on different shards do not share lines. */
    char pad[64];
} cache_shard;

struct block_cache {
    cache_shard *shards;
    unsigned nshards;
    unsigned shard_shift;   /* hash >> shard_shift picks the shard */
    size_t capacity;
};

static _Atomic uint64_t next_file_id = 1;

static uint64_t
key_hash(uint64_t file_id, uint64_t offset)
{
    uint64_t h = file_id * 0x9E3779B97F4A7C15ull ^ offset;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 33;
    return h;
}

static cache_shard *
shard_of(block_cache *c, uint64_t hash)
{
    return &c->shards[c->nshards == 1 ? 0 : hash >> c->shard_shift];
}

static void
lru_remove(block_cache_handle *e)
{
    e->lru_prev->lru_next = e->lru_next;
    e->lru_next->lru_prev = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
}

/* Append as the most recently used. */
static void
lru_append(cache_shard *s, block_cache_handle *e)
{
    e->lru_next = &s->lru;
    e->lru_prev = s->lru.lru_prev;
    e->lru_prev->lru_next = e;
    s->lru.lru_prev = e;
}

static block_cache_handle **
table_find(cache_shard *s, uint64_t hash, uint64_t file_id, uint64_t offset)
{
    block_cache_handle **slot = &s->buckets[hash & (s->nbuckets - 1)];
    while (*slot && ((*slot)->file_id != file_id || (*slot)->offset != offset))
        slot = &(*slot)->chain;
    return slot;
}

static void
table_grow(cache_shard *s)
{
    size_t n = s->nbuckets * 2;
    block_cache_handle **nb = kiln_calloc(n, sizeof *nb);
    for (size_t i = 0; i < s->nbuckets; i++) {
        block_cache_handle *e = s->buckets[i];
        while (e) {
            block_cache_handle *next = e->chain;
            size_t b = e->hash & (n - 1);
            e->chain = nb[b];
            nb[b] = e;
            e = next;
        }
    }
    free(s->buckets);
    s->buckets = nb;
    s->nbuckets = n;
}

static void
entry_free(block_cache_handle *e)
{
    free(e->data);
    free(e);
}

/* Drop one reference; the caller holds the shard lock. Returns the entry if
 * it must be freed (after unlocking), else NULL. */
static block_cache_handle *
unref_locked(cache_shard *s, block_cache_handle *e)
{
    e->refs--;
    if (e->refs == 0)
        return e;
    if (e->refs == 1 && e->in_table)
        lru_append(s, e);
    return NULL;
}

/* Unlink e from the table (caller holds the lock and has found its slot). */
static void
table_unlink(cache_shard *s, block_cache_handle **slot)
{
    block_cache_handle *e = *slot;
    *slot = e->chain;
    e->chain = NULL;
    e->in_table = 0;
    s->count--;
    s->usage -= e->charge;
}

/* Evict the oldest unpinned entries while over budget; returns a list (linked
 * by chain) to free after unlocking. */
static block_cache_handle *
evict_locked(cache_shard *s)
{
    block_cache_handle *dead = NULL;
    while (s->usage > s->capacity && s->lru.lru_next != &s->lru) {
        block_cache_handle *e = s->lru.lru_next;
        lru_remove(e);
        table_unlink(s, table_find(s, e->hash, e->file_id, e->offset));
        s->evictions++;
        e->refs--; /* the table's reference: it was the only one */
        e->chain = dead;
        dead = e;
    }
    return dead;
}

static void
free_list(block_cache_handle *dead)
{
    while (dead) {
        block_cache_handle *next = dead->chain;
        entry_free(dead);
        dead = next;
    }
}

block_cache *
block_cache_new_shards(size_t capacity_bytes, unsigned shard_bits)
{
    if (shard_bits > MAX_SHARD_BITS)
        shard_bits = MAX_SHARD_BITS;
    block_cache *c = kiln_calloc(1, sizeof *c);
    c->capacity = capacity_bytes;
    c->nshards = 1u << shard_bits;
    c->shard_shift = 64 - shard_bits;
    c->shards = kiln_calloc(c->nshards, sizeof *c->shards);
    const unsigned nshards = c->nshards;
    for (unsigned i = 0; i < nshards; i++) {
        cache_shard *s = &c->shards[i];
        pthread_mutex_init(&s->mu, NULL);
        s->nbuckets = 64;
        s->buckets = kiln_calloc(s->nbuckets, sizeof *s->buckets);
        s->capacity = capacity_bytes / nshards;
        if (i < capacity_bytes % nshards)
            s->capacity++;
        s->lru.lru_next = s->lru.lru_prev = &s->lru;
    }
    return c;
}

block_cache *
block_cache_new(size_t capacity_bytes)
{
    return block_cache_new_shards(capacity_bytes, DEFAULT_SHARD_BITS);
}

void
block_cache_free(block_cache *c)
{
    if (c == NULL)
        return;
    for (unsigned i = 0; i < c->nshards; i++) {
        cache_shard *s = &c->shards[i];
        for (size_t b = 0; b < s->nbuckets; b++) {
            block_cache_handle *e = s->buckets[b];
            while (e) {
                block_cache_handle *next = e->chain;
                entry_free(e);
                e = next;
            }
        }
        free(s->buckets);
        pthread_mutex_destroy(&s->mu);
    }
    free(c->shards);
    free(c);
}

uint64_t
block_cache_new_file_id(block_cache *c)
{
    (void)c;
    return atomic_fetch_add(&next_file_id, 1);
}

block_cache_handle *
block_cache_lookup(block_cache *c, uint64_t file_id, uint64_t offset)
{
    uint64_t h = key_hash(file_id, offset);
    cache_shard *s = shard_of(c, h);
    pthread_mutex_lock(&s->mu);
    block_cache_handle *e = *table_find(s, h, file_id, offset);
    if (e) {
        if (e->refs == 1)
            lru_remove(e);
        e->refs++;
        s->hits++;
    } else {
        s->misses++;
    }
    pthread_mutex_unlock(&s->mu);
    return e;
}

block_cache_handle *
block_cache_insert(block_cache *c, uint64_t file_id, uint64_t offset, void *data, size_t size)
{
    uint64_t h = key_hash(file_id, offset);
    cache_shard *s = shard_of(c, h);
    block_cache_handle *e = kiln_malloc(sizeof *e);
    e->file_id = file_id;
    e->offset = offset;
    e->data = data;
    e->size = size;
    e->charge = size + sizeof *e;
    e->hash = h;
    e->refs = 2; /* the table and the caller */
    e->in_table = 1;
    e->chain = NULL;
    e->lru_prev = e->lru_next = NULL;

    pthread_mutex_lock(&s->mu);
    block_cache_handle **slot = table_find(s, h, file_id, offset);
    if (*slot) {
        /* Another thread loaded the same block first: keep its copy. */
        block_cache_handle *old = *slot;
        if (old->refs == 1)
            lru_remove(old);
        old->refs++;
        pthread_mutex_unlock(&s->mu);
        entry_free(e);
        return old;
    }
    *slot = e;
    s->count++;
    s->usage += e->charge;
    s->inserts++;
    if (s->count > s->nbuckets)
        table_grow(s);
    block_cache_handle *dead = evict_locked(s);
    pthread_mutex_unlock(&s->mu);
    free_list(dead);
    return e;
}

const void *
block_cache_data(const block_cache_handle *h)
{
    return h->data;
}

size_t
block_cache_size(const block_cache_handle *h)
{
    return h->size;
}

void
block_cache_release(block_cache *c, block_cache_handle *h)
{
    if (h == NULL)
        return;
    cache_shard *s = shard_of(c, h->hash);
    pthread_mutex_lock(&s->mu);
    block_cache_handle *dead = unref_locked(s, h);
    block_cache_handle *evicted = evict_locked(s);
    pthread_mutex_unlock(&s->mu);
    if (dead)
        entry_free(dead);
    free_list(evicted);
}

void
block_cache_erase_file(block_cache *c, uint64_t file_id)
{
    for (unsigned i = 0; i < c->nshards; i++) {
        cache_shard *s = &c->shards[i];
        block_cache_handle *dead = NULL;
        pthread_mutex_lock(&s->mu);
        for (size_t b = 0; b < s->nbuckets; b++) {
            block_cache_handle **slot = &s->buckets[b];
            while (*slot) {
                block_cache_handle *e = *slot;
                if (e->file_id != file_id) {
                    slot = &e->chain;
                    continue;
                }
                table_unlink(s, slot);
                if (e->refs == 1) {
                    lru_remove(e);
                    e->refs = 0;
                    e->chain = dead;
                    dead = e;
                } else {
                    e->refs--; /* pinned: freed by its last release */
                }
            }
        }
        pthread_mutex_unlock(&s->mu);
        free_list(dead);
    }
}

void
block_cache_get_stats(block_cache *c, block_cache_stats *out)
{
    block_cache_stats st = {0};
    st.capacity = c->capacity;
    for (unsigned i = 0; i < c->nshards; i++) {
        cache_shard *s = &c->shards[i];
        pthread_mutex_lock(&s->mu);
        st.hits += s->hits;
        st.misses += s->misses;
        st.inserts += s->inserts;
        st.evictions += s->evictions;
        st.bytes_used += s->usage;
        st.entries += s->count;
        pthread_mutex_unlock(&s->mu);
    }
    *out = st;
}
