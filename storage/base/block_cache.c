/* block_cache.c -- sharded LRU cache of decoded HFile blocks.
 *
 * 16 shards (by default), chosen by the top bits of a 64-bit hash of (file
 * id, offset), each with its own mutex, an open-addressing hash table and an
 * intrusive recency list of every entry in the table. The table keeps each
 * entry's hash beside its pointer (linear probing, at most half full), so a
 * lookup reads one table line and then only the entry it wants. A hit does
 * not move the entry in the list (that would touch two more random entries,
 * its neighbours, on the hottest path): it sets a referenced bit. Eviction,
 * while the shard is over its share of the budget, takes the oldest entry;
 * one that is pinned or was referenced since it last came round goes back to
 * the young end instead (LRU with second chance, as CLOCK). An entry holds
 * one reference for being in the table plus one per pin, so eviction never
 * frees a block a reader holds; an entry removed from the table while pinned
 * is freed by its last release.
 *
 * Blocks allocated with block_cache_block_alloc carry their entry in front
 * of them, so after the table line a lookup touches one contiguous region,
 * and come from huge-page slabs (slab.h): a warm read over a large cache
 * pays no page walk per block, and the memory of evicted or closed files'
 * blocks goes back to the system slab by slab.
 *
 * Each shard also chains its entries by file (a small open-addressing map
 * from file id to the file's first entry), so closing a file erases its
 * blocks in time proportional to their number, not to the cache's size: a
 * server retiring a version of a table must not hold every shard's lock
 * while it walks millions of other files' blocks.
 */
#include "storage/base/block_cache.h"

#include "storage/base/buf.h"
#include "storage/base/slab.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>

#define DEFAULT_SHARD_BITS 4
#define MAX_SHARD_BITS 8
#define MIN_SLOTS 64
#define MIN_FILE_SLOTS 8

struct block_cache_handle {
    uint64_t file_id;
    uint64_t offset;
    void *data;
    size_t size;
    size_t charge;          /* size + entry overhead, counted against the budget */
    uint64_t hash;
    uint32_t refs;          /* table reference (while in_table) + pins */
    uint8_t in_table;
    uint8_t referenced;     /* looked up since it last came round the list */
    uint8_t inline_data;    /* data follows this entry in the same allocation (INLINE_*) */
    block_cache_handle *lru_prev, *lru_next; /* recency list, iff in_table */
    block_cache_handle *file_prev, *file_next; /* the file's chain, iff in_table */
};

/* inline_data: the entry alone, or the entry with its block after it, from
 * malloc or from a slab. */
enum { INLINE_NONE = 0, INLINE_MALLOC = 1, INLINE_SLAB = 2 };

/* Entry size rounded so inline data after it is aligned for any type. */
#define ENTRY_SIZE ((sizeof(block_cache_handle) + alignof(max_align_t) - 1) & \
                    ~(alignof(max_align_t) - 1))

typedef struct slot {
    uint64_t hash;
    block_cache_handle *e;  /* NULL: empty */
} slot;

/* One file's chain of entries in a shard (head NULL: empty slot). */
typedef struct file_slot {
    uint64_t file_id;
    block_cache_handle *head;
    size_t charge;          /* of the file's entries in this shard */
} file_slot;

typedef struct cache_shard {
    pthread_mutex_t mu;
    slot *slots;
    size_t nslots;          /* power of two */
    size_t count;
    file_slot *files;       /* open addressing by file id, at most half full */
    size_t nfiles_slots;    /* power of two */
    size_t nfiles;
    size_t usage;
    size_t capacity;        /* the shard's share of the budget, less what it lent */
    size_t lent;            /* block_cache_lend */
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
    _Atomic size_t reserved; /* block_cache_reserve */
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

/* Index of the slot holding the key, or of the empty slot where it would go. */
static size_t
table_find(const cache_shard *s, uint64_t hash, uint64_t file_id, uint64_t offset)
{
    size_t mask = s->nslots - 1;
    size_t i = hash & mask;
    while (s->slots[i].e != NULL) {
        if (s->slots[i].hash == hash && s->slots[i].e->file_id == file_id &&
            s->slots[i].e->offset == offset)
            return i;
        i = (i + 1) & mask;
    }
    return i;
}

static void
table_grow(cache_shard *s)
{
    size_t n = s->nslots * 2, mask = n - 1;
    slot *ns = kiln_calloc(n, sizeof *ns);
    for (size_t i = 0; i < s->nslots; i++) {
        if (s->slots[i].e == NULL)
            continue;
        size_t j = s->slots[i].hash & mask;
        while (ns[j].e != NULL)
            j = (j + 1) & mask;
        ns[j] = s->slots[i];
    }
    free(s->slots);
    s->slots = ns;
    s->nslots = n;
}

/* In a linear-probing table, whether an entry at slot j whose home slot is
 * home must stay where it is when slot i is emptied: it must when its home
 * lies cyclically in (i, j], since moving it to i would put it before its
 * home. */
static int
probe_stays(size_t i, size_t j, size_t home)
{
    return i <= j ? (i < home && home <= j) : (i < home || home <= j);
}

/* Empty slot i, shifting later entries of its probe run back so that every
 * remaining entry stays reachable from its home slot. */
static void
table_delete_slot(cache_shard *s, size_t i)
{
    size_t mask = s->nslots - 1;
    size_t j = i;
    for (;;) {
        s->slots[i].e = NULL;
        for (;;) {
            j = (j + 1) & mask;
            if (s->slots[j].e == NULL)
                return;
            if (probe_stays(i, j, s->slots[j].hash & mask))
                continue;
            break;
        }
        s->slots[i] = s->slots[j];
        i = j;
    }
}

/* ------------------------------------------------------------------ file chains */

static size_t
file_home(const cache_shard *s, uint64_t file_id)
{
    return (size_t)((file_id * 0x9E3779B97F4A7C15ull) >> 17) & (s->nfiles_slots - 1);
}

/* Index of file_id's slot, or of the empty slot where it would go. */
static size_t
file_find(const cache_shard *s, uint64_t file_id)
{
    size_t mask = s->nfiles_slots - 1;
    size_t i = file_home(s, file_id);
    while (s->files[i].head != NULL && s->files[i].file_id != file_id)
        i = (i + 1) & mask;
    return i;
}

static void
file_map_grow(cache_shard *s)
{
    file_slot *old = s->files;
    size_t n = s->nfiles_slots;
    s->nfiles_slots = n * 2;
    s->files = kiln_calloc(s->nfiles_slots, sizeof *s->files);
    for (size_t i = 0; i < n; i++) {
        if (old[i].head != NULL)
            s->files[file_find(s, old[i].file_id)] = old[i];
    }
    free(old);
}

/* Empty file slot i, moving later slots of its probe run back (as
 * table_delete_slot does for the block table). */
static void
file_delete_slot(cache_shard *s, size_t i)
{
    size_t mask = s->nfiles_slots - 1;
    size_t j = i;
    for (;;) {
        s->files[i].head = NULL;
        for (;;) {
            j = (j + 1) & mask;
            if (s->files[j].head == NULL)
                return;
            if (probe_stays(i, j, file_home(s, s->files[j].file_id)))
                continue;
            break;
        }
        s->files[i] = s->files[j];
        i = j;
    }
}

static void
file_chain_add(cache_shard *s, block_cache_handle *e)
{
    size_t i = file_find(s, e->file_id);
    e->file_prev = NULL;
    e->file_next = s->files[i].head;
    if (e->file_next != NULL) {
        e->file_next->file_prev = e;
    } else {
        s->files[i].file_id = e->file_id;
        s->files[i].charge = 0;
        s->nfiles++;
    }
    s->files[i].head = e;
    s->files[i].charge += e->charge;
    if (2 * s->nfiles > s->nfiles_slots)
        file_map_grow(s);
}

static void
file_chain_remove(cache_shard *s, block_cache_handle *e)
{
    if (e->file_next != NULL)
        e->file_next->file_prev = e->file_prev;
    size_t i = file_find(s, e->file_id);
    s->files[i].charge -= e->charge;
    if (e->file_prev != NULL) {
        e->file_prev->file_next = e->file_next;
    } else {
        if (e->file_next != NULL) {
            s->files[i].head = e->file_next;
        } else {
            file_delete_slot(s, i);
            s->nfiles--;
        }
    }
    e->file_prev = e->file_next = NULL;
}

static void
entry_free(block_cache_handle *e)
{
    switch (e->inline_data) {
    case INLINE_SLAB:
        slab_free(e);
        break;
    case INLINE_MALLOC:
        free(e);
        break;
    default:
        free(e->data);
        free(e);
    }
}

/* Unlink e from the table and the recency list (caller holds the lock). */
static void
table_unlink(cache_shard *s, block_cache_handle *e)
{
    table_delete_slot(s, table_find(s, e->hash, e->file_id, e->offset));
    e->in_table = 0;
    lru_remove(e);
    file_chain_remove(s, e);
    s->count--;
    s->usage -= e->charge;
}

/* Evict while over budget: the oldest entry goes unless it is pinned or was
 * referenced, in which case it gets a second chance at the young end. The
 * pass is bounded so a shard full of pinned blocks stays over budget rather
 * than spinning. Returns a list (linked by lru_next) to free after unlocking. */
static block_cache_handle *
evict_locked(cache_shard *s)
{
    block_cache_handle *dead = NULL;
    size_t moves = 2 * s->count + 1;
    while (s->usage > s->capacity && s->lru.lru_next != &s->lru && moves-- > 0) {
        block_cache_handle *e = s->lru.lru_next;
        if (e->refs > 1 || e->referenced) {
            e->referenced = 0;
            lru_remove(e);
            lru_append(s, e);
            continue;
        }
        table_unlink(s, e);
        s->evictions++;
        e->refs--; /* the table's reference: it was the only one */
        e->lru_next = dead;
        dead = e;
    }
    return dead;
}

static void
free_list(block_cache_handle *dead)
{
    while (dead) {
        block_cache_handle *next = dead->lru_next;
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
    for (unsigned i = 0; i < c->nshards; i++) {
        cache_shard *s = &c->shards[i];
        pthread_mutex_init(&s->mu, NULL);
        s->nslots = MIN_SLOTS;
        s->slots = kiln_calloc(s->nslots, sizeof *s->slots);
        s->capacity = capacity_bytes / c->nshards;
        if (i < capacity_bytes % c->nshards)
            s->capacity++;
        s->lru.lru_next = s->lru.lru_prev = &s->lru;
        s->nfiles_slots = MIN_FILE_SLOTS;
        s->files = kiln_calloc(s->nfiles_slots, sizeof *s->files);
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
        for (size_t j = 0; j < s->nslots; j++)
            if (s->slots[j].e)
                entry_free(s->slots[j].e);
        free(s->slots);
        free(s->files);
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

void *
block_cache_block_alloc(size_t size)
{
    size_t total = ENTRY_SIZE + size, usable = total;
    block_cache_handle *e;
    if (total <= SLAB_OBJECT_MAX) {
        e = slab_alloc(total, &usable);
        e->inline_data = INLINE_SLAB;
    } else {
        e = kiln_malloc(total);
        e->inline_data = INLINE_MALLOC;
    }
    e->charge = usable;     /* what the budget counts once it is inserted */
    return (uint8_t *)e + ENTRY_SIZE;
}

void
block_cache_block_free(void *data)
{
    if (data)
        entry_free((block_cache_handle *)((uint8_t *)data - ENTRY_SIZE));
}

/* Lines of a block asked for with its entry: a decoded block's header and,
 * after it, the row words of up to about 30 cells (a decoded HFile block),
 * so that a small block's search waits on nothing more. */
#define BLOCK_START_LINES 6

/* Ask for the start of e's block (inline blocks follow their entry), for a
 * caller about to look at it. A prefetch of an address never faults. */
static inline void
prefetch_block_start(const block_cache_handle *e)
{
    const uint8_t *p = (const uint8_t *)e + ENTRY_SIZE;
    for (int i = 0; i < BLOCK_START_LINES; i++)
        __builtin_prefetch(p + 64 * i);
}

block_cache_handle *
block_cache_lookup(block_cache *c, uint64_t file_id, uint64_t offset)
{
    uint64_t h = key_hash(file_id, offset);
    cache_shard *s = shard_of(c, h);
    pthread_mutex_lock(&s->mu);
    size_t i = h & (s->nslots - 1);
    block_cache_handle *first = s->slots[i].e;
    if (first != NULL && s->slots[i].hash == h)
        prefetch_block_start(first);   /* most likely the block, while its entry is read */
    block_cache_handle *e = s->slots[table_find(s, h, file_id, offset)].e;
    if (e) {
        e->refs++;
        if (!e->referenced)
            e->referenced = 1;
        s->hits++;
    } else {
        s->misses++;
    }
    pthread_mutex_unlock(&s->mu);
    return e;
}

void
block_cache_prefetch(block_cache *c, uint64_t file_id, uint64_t offset, int deep)
{
    uint64_t h = key_hash(file_id, offset);
    cache_shard *s = shard_of(c, h);
    pthread_mutex_lock(&s->mu);
    const slot *sl = &s->slots[h & (s->nslots - 1)];
    if (!deep) {
        __builtin_prefetch(sl);
    } else if (sl->e != NULL && sl->hash == h) {
        /* Most likely the key's entry (table_find confirms it at the lookup). */
        __builtin_prefetch(sl->e);
        prefetch_block_start(sl->e);
    }
    pthread_mutex_unlock(&s->mu);
}

/* Insert e, evicting to make room, or (if_room) only into room its shard has
 * free: NULL and e freed when there is none. */
static block_cache_handle *
insert_entry(block_cache *c, block_cache_handle *e, int if_room)
{
    cache_shard *s = shard_of(c, e->hash);
    pthread_mutex_lock(&s->mu);
    size_t i = table_find(s, e->hash, e->file_id, e->offset);
    if (s->slots[i].e) {
        /* Another thread loaded the same block first: keep its copy. */
        block_cache_handle *old = s->slots[i].e;
        old->refs++;
        old->referenced = 1;
        pthread_mutex_unlock(&s->mu);
        entry_free(e);
        return old;
    }
    if (if_room && s->usage + e->charge > s->capacity) {
        pthread_mutex_unlock(&s->mu);
        entry_free(e);
        return NULL;
    }
    s->slots[i].hash = e->hash;
    s->slots[i].e = e;
    lru_append(s, e);
    file_chain_add(s, e);
    s->count++;
    s->usage += e->charge;
    s->inserts++;
    if (2 * s->count > s->nslots)
        table_grow(s);
    block_cache_handle *dead = evict_locked(s);
    pthread_mutex_unlock(&s->mu);
    free_list(dead);
    return e;
}

static void
entry_init(block_cache_handle *e, uint64_t file_id, uint64_t offset, void *data, size_t size)
{
    e->file_id = file_id;
    e->offset = offset;
    e->data = data;
    e->size = size;
    e->charge = size + ENTRY_SIZE;
    e->hash = key_hash(file_id, offset);
    e->refs = 2; /* the table and the caller */
    e->in_table = 1;
    e->referenced = 0;
    e->lru_prev = e->lru_next = NULL;
    e->file_prev = e->file_next = NULL;
}

block_cache_handle *
block_cache_insert(block_cache *c, uint64_t file_id, uint64_t offset, void *data, size_t size)
{
    block_cache_handle *e = kiln_malloc(sizeof *e);
    e->inline_data = INLINE_NONE;
    entry_init(e, file_id, offset, data, size);
    return insert_entry(c, e, 0);
}

static block_cache_handle *
insert_block(block_cache *c, uint64_t file_id, uint64_t offset, void *data, size_t size,
             int if_room)
{
    block_cache_handle *e = (block_cache_handle *)((uint8_t *)data - ENTRY_SIZE);
    size_t usable = e->charge;
    entry_init(e, file_id, offset, data, size);
    if (usable > e->charge)
        e->charge = usable;     /* the slab class's size, not just the bytes asked for */
    return insert_entry(c, e, if_room);
}

block_cache_handle *
block_cache_insert_block(block_cache *c, uint64_t file_id, uint64_t offset, void *data,
                         size_t size)
{
    return insert_block(c, file_id, offset, data, size, 0);
}

block_cache_handle *
block_cache_insert_block_if_room(block_cache *c, uint64_t file_id, uint64_t offset, void *data,
                                 size_t size)
{
    return insert_block(c, file_id, offset, data, size, 1);
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
    block_cache_handle *dead = --h->refs == 0 ? h : NULL;
    block_cache_handle *evicted = s->usage > s->capacity ? evict_locked(s) : NULL;
    pthread_mutex_unlock(&s->mu);
    if (dead)
        entry_free(dead);
    free_list(evicted);
}

int
block_cache_reserve(block_cache *c, size_t bytes)
{
    size_t cur = atomic_load(&c->reserved);
    do {
        if (bytes > c->capacity / 4 || cur > c->capacity / 4 - bytes)
            return 0;
    } while (!atomic_compare_exchange_weak(&c->reserved, &cur, cur + bytes));
    return 1;
}

void
block_cache_unreserve(block_cache *c, size_t bytes)
{
    atomic_fetch_sub(&c->reserved, bytes);
}

/* Blocks block_cache_erase_file unlinks under one hold of a shard's lock:
 * erasing a file of thousands of blocks lets the readers of that shard in
 * between batches rather than making them wait for the whole file. */
#define ERASE_BATCH 64

void
block_cache_erase_file(block_cache *c, uint64_t file_id)
{
    for (unsigned i = 0; i < c->nshards; i++) {
        cache_shard *s = &c->shards[i];
        int more;
        do {
            block_cache_handle *dead = NULL, *e;
            pthread_mutex_lock(&s->mu);
            for (unsigned n = 0; n < ERASE_BATCH; n++) {
                if ((e = s->files[file_find(s, file_id)].head) == NULL)
                    break;
                table_unlink(s, e);   /* takes e off the file's chain too */
                if (--e->refs == 0) {
                    e->lru_next = dead;
                    dead = e;
                } /* else pinned: freed by its last release */
            }
            more = s->files[file_find(s, file_id)].head != NULL;
            pthread_mutex_unlock(&s->mu);
            free_list(dead);
        } while (more);
    }
}

uint64_t
block_cache_drop_file(block_cache *c, uint64_t file_id)
{
    uint64_t dropped = 0;
    for (unsigned i = 0; i < c->nshards; i++) {
        cache_shard *s = &c->shards[i];
        block_cache_handle *e;
        do {
            block_cache_handle *dead = NULL;
            unsigned n = 0;
            pthread_mutex_lock(&s->mu);
            /* The pinned blocks stay, so each batch walks past them again:
             * a file has few (its index and bloom blocks). */
            e = s->files[file_find(s, file_id)].head;
            while (e != NULL && n < ERASE_BATCH) {
                block_cache_handle *next = e->file_next;
                if (e->refs == 1) {
                    table_unlink(s, e);
                    dropped += e->charge;
                    e->refs = 0;
                    e->lru_next = dead;
                    dead = e;
                    n++;
                }
                e = next;
            }
            pthread_mutex_unlock(&s->mu);
            free_list(dead);
        } while (e != NULL);
    }
    return dropped;
}

/* Bytes a lend takes from a shard per hold of its lock, evicting as it goes. */
#define LEND_STEP ((size_t)4 << 20)

size_t
block_cache_lend(block_cache *c, size_t want, size_t keep)
{
    size_t lent = 0;
    size_t floor = keep / c->nshards;
    for (unsigned i = 0; i < c->nshards && lent < want; i++) {
        cache_shard *s = &c->shards[i];
        size_t share = (want - lent + (c->nshards - i) - 1) / (c->nshards - i);
        size_t taken = 0;
        while (taken < share) {
            pthread_mutex_lock(&s->mu);
            size_t spare = s->capacity > floor ? s->capacity - floor : 0;
            size_t step = share - taken < LEND_STEP ? share - taken : LEND_STEP;
            if (step > spare)
                step = spare;
            s->capacity -= step;
            s->lent += step;
            block_cache_handle *dead = s->usage > s->capacity ? evict_locked(s) : NULL;
            pthread_mutex_unlock(&s->mu);
            free_list(dead);
            taken += step;
            if (step == 0)
                break;
        }
        lent += taken;
    }
    return lent;
}

void
block_cache_repay(block_cache *c)
{
    for (unsigned i = 0; i < c->nshards; i++) {
        cache_shard *s = &c->shards[i];
        pthread_mutex_lock(&s->mu);
        s->capacity += s->lent;
        s->lent = 0;
        pthread_mutex_unlock(&s->mu);
    }
}

size_t
block_cache_capacity(const block_cache *c)
{
    return c->capacity;
}

uint64_t
block_cache_file_bytes(block_cache *c, uint64_t file_id)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < c->nshards; i++) {
        cache_shard *s = &c->shards[i];
        pthread_mutex_lock(&s->mu);
        const file_slot *f = &s->files[file_find(s, file_id)];
        if (f->head != NULL)
            n += f->charge;
        pthread_mutex_unlock(&s->mu);
    }
    return n;
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
