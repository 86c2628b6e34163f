/* block_cache.h -- a sharded LRU cache of decoded HFile blocks, shared by all
 * open files, with a byte budget.
 *
 * Entries are keyed by (file id, block offset) and reference-counted: a
 * lookup pins the block until block_cache_release, so eviction never frees a
 * block a reader is using. Thread-safe; each shard has its own mutex.
 */
#ifndef KILN_BLOCK_CACHE_H
#define KILN_BLOCK_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct block_cache block_cache;
typedef struct block_cache_handle block_cache_handle;

typedef struct block_cache_stats {
    uint64_t hits, misses, inserts, evictions;
    uint64_t bytes_used, capacity;
    uint64_t entries;
} block_cache_stats;

/* A cache holding at most capacity_bytes of block payloads (plus small
 * per-entry overhead). capacity 0 caches nothing (every insert is dropped
 * once released). */
block_cache *block_cache_new(size_t capacity_bytes);
/* The same with 2^shard_bits shards (at most 2^8), each holding an equal share
 * of the budget; block_cache_new uses 16. One shard gives one global LRU order. */
block_cache *block_cache_new_shards(size_t capacity_bytes, unsigned shard_bits);
void block_cache_free(block_cache *c);   /* REQUIRES: no handle outstanding; c may be NULL */

/* A process-unique id for a newly opened file, so that a reused path never
 * hits stale blocks. */
uint64_t block_cache_new_file_id(block_cache *c);

/* Pinned block or NULL. */
block_cache_handle *block_cache_lookup(block_cache *c, uint64_t file_id, uint64_t offset);

/* Start fetching into the CPU cache what a later lookup of the key will read,
 * without waiting for it: deep 0 the key's slot; deep 1, once that slot has
 * arrived, its entry and the first bytes of its block. Pins nothing, reads no
 * file, and is cheap when the key is not cached. For iterators, which know
 * the next block long before they need it. */
void block_cache_prefetch(block_cache *c, uint64_t file_id, uint64_t offset, int deep);

/* Insert data (ownership passes to the cache, freed with free() when evicted),
 * charge bytes against the budget, and return it pinned. If another thread
 * inserted the same key first, data is freed and the existing entry returned. */
block_cache_handle *block_cache_insert(block_cache *c, uint64_t file_id, uint64_t offset,
                                       void *data, size_t size);

/* Memory for a block of size bytes, allocated together with the cache's
 * bookkeeping for it (so a lookup touches one region, not two). Hand it to
 * block_cache_insert_block, or free it with block_cache_block_free. */
void *block_cache_block_alloc(size_t size);
void block_cache_block_free(void *data);   /* data may be NULL */
/* block_cache_insert for memory from block_cache_block_alloc (same rules). */
block_cache_handle *block_cache_insert_block(block_cache *c, uint64_t file_id, uint64_t offset,
                                             void *data, size_t size);

/* block_cache_insert_block into room the key's shard has free, never by
 * evicting: NULL (and data freed) when that shard is full. For reading ahead,
 * which must not push out blocks that readers use. */
block_cache_handle *block_cache_insert_block_if_room(block_cache *c, uint64_t file_id,
                                                     uint64_t offset, void *data, size_t size);

const void *block_cache_data(const block_cache_handle *h);
size_t block_cache_size(const block_cache_handle *h);
/* Unpin. h may be NULL. */
void block_cache_release(block_cache *c, block_cache_handle *h);

/* Long-lived pins (a reader keeping its index and bloom blocks pinned): ask
 * to reserve bytes of the budget for them. 1 if granted, 0 if all such
 * reservations together would exceed a quarter of the capacity. Give it back
 * with block_cache_unreserve when the pins are released. */
int block_cache_reserve(block_cache *c, size_t bytes);
void block_cache_unreserve(block_cache *c, size_t bytes);

/* Drop every unpinned block of a file (when the file is closed). */
void block_cache_erase_file(block_cache *c, uint64_t file_id);
/* Drop the file's blocks that no reader holds (the file stays open; its
 * pinned index and bloom blocks stay cached). Returns the bytes freed of the
 * budget. */
uint64_t block_cache_drop_file(block_cache *c, uint64_t file_id);
/* Bytes (as charged against the budget) of the file's cached blocks. */
uint64_t block_cache_file_bytes(block_cache *c, uint64_t file_id);
/* The byte budget. */
size_t block_cache_capacity(const block_cache *c);
/* Lend up to want bytes of the budget to another cache of the process (a
 * new table version's row cache, filling while the one it replaces still
 * holds its memory), leaving the cache at least keep bytes: each shard's
 * capacity shrinks by what it lends, its least recently used blocks are
 * evicted to fit (a few MiB per hold of its lock), and blocks coming in
 * evict older ones instead of growing into the room. Returns the bytes
 * lent. */
size_t block_cache_lend(block_cache *c, size_t want, size_t keep);
/* Give every shard back all it lent. */
void block_cache_repay(block_cache *c);

void block_cache_get_stats(block_cache *c, block_cache_stats *out);

#endif
