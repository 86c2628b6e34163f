/* rowcache.h -- a cache of assembled rows of one table version, for the
 * server's point reads: a hit costs one hash lookup and one copy instead of
 * a bloom probe, an index search and a block scan. Because a version never
 * changes, entries need no invalidation; a new version gets a new cache,
 * warmed from the old one's most recently used keys before it is served.
 *
 * A row is cached as an image: every visible cell of the row (newest
 * version of each column, all families), encoded as
 *
 *   OFFSET | SIZE | FIELD
 *   0      | 4    | cell count C (little-endian, as every field below)
 *   then C times:
 *          | 1    | family length F
 *          | F    | family
 *          | 4    | qualifier length Q
 *          | Q    | qualifier
 *          | 8    | timestamp
 *          | 4    | value length V
 *          | V    | value
 *
 * An absent row is cached as C = 0. Entries carry an expiry time (the first
 * moment a cell of the row passes its family's TTL) after which they miss.
 *
 * All caches of a server draw on one pool: a byte budget shared by every
 * table and version, each cache evicting its own rows while the pool is over
 * budget, by CLOCK (rows read since the sweep last passed get a second
 * chance). Thread-safe: 32 shards, a mutex each.
 */
#ifndef KILN_ROWCACHE_H
#define KILN_ROWCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/hfile/cell.h"
#include "storage/store/store_view.h"

#define ROWCACHE_NO_EXPIRY INT64_MAX

typedef struct rowcache_pool rowcache_pool;
typedef struct rowcache rowcache;

typedef struct rowcache_stats {
    uint64_t hits, misses, inserts, evictions;
    uint64_t growths;            /* shard hashes doubled as entries came in */
    uint64_t entries, bytes;
    uint64_t mapped;             /* memory its slabs and large entries map */
} rowcache_stats;

/* A pool of capacity_bytes (0: caching disabled; rowcache_new returns NULL). */
rowcache_pool *rowcache_pool_new(size_t capacity_bytes);
/* REQUIRES: every cache of the pool freed. p may be NULL. */
void rowcache_pool_free(rowcache_pool *p);
size_t rowcache_pool_capacity(const rowcache_pool *p);
uint64_t rowcache_pool_used(const rowcache_pool *p);
/* Room lent to the pool by another budget (the block cache's, while a new
 * version's cache fills beside the one it replaces): caches evict only
 * above capacity plus what is lent. rowcache_pool_repay gives it back. */
void rowcache_pool_lend(rowcache_pool *p, uint64_t bytes);
void rowcache_pool_repay(rowcache_pool *p, uint64_t bytes);
/* Capacity plus the room lent now: what inserts evict down to. */
uint64_t rowcache_pool_limit(const rowcache_pool *p);
/* Bytes of slabs the pool keeps from freed caches for its next ones (the
 * caches' bytes and these stay within capacity). */
uint64_t rowcache_pool_spare_bytes(const rowcache_pool *p);

/* A cache drawing on pool, or NULL if the pool is NULL or disabled. */
rowcache *rowcache_new(rowcache_pool *pool);
void rowcache_free(rowcache *c);   /* c may be NULL */

/* Copy the image cached for key into out (replacing its contents). Returns
 * 1 on a hit, 0 on a miss (absent, or expired at now_ms). */
int rowcache_get(rowcache *c, const uint8_t *key, size_t n, int64_t now_ms, kbuf *out);
/* Start loading into the CPU cache the hash bucket of key (step 0), or,
 * once that is loaded, the entry the bucket leads to (step 1). A caller
 * about to look up or put many keys takes step 0 for all of them, then step
 * 1, then looks them up, so that the two memory loads of each lookup
 * overlap with the others' rather than follow one another. Changes nothing;
 * takes the shard's lock. */
void rowcache_prefetch(rowcache *c, const uint8_t *key, size_t n, int step);
/* 1 if c holds an entry for key (expired or not); counts neither a hit nor
 * a miss and marks nothing read. */
int rowcache_contains(rowcache *c, const uint8_t *key, size_t n);
/* Cache img for key (replacing any entry) until expires_ms. */
void rowcache_put(rowcache *c, const uint8_t *key, size_t n, const uint8_t *img, size_t len,
                  int64_t expires_ms);
/* rowcache_put of a key c does not hold: no look through the key's hash
 * chain for an entry to replace (each entry on it a miss of the CPU cache,
 * while a fill puts millions of rows). REQUIRES: no entry for key in c (a
 * fill of an empty cache with distinct rows, by the one thread putting). */
void rowcache_put_new(rowcache *c, const uint8_t *key, size_t n, const uint8_t *img, size_t len,
                      int64_t expires_ms);
/* While on, inserts into c evict nothing: a new version's cache is filled
 * with its hot rows while its predecessor still holds the budget, and the
 * pool runs over by what the warm-up adds until the predecessor is freed
 * (a bounded overshoot: the warm-up's row count is limited). REQUIRES: only
 * one thread inserts into c while it is on. */
void rowcache_set_warming(rowcache *c, int on);
/* Size the cache's hash for about `entries` rows at once (a cache that will
 * fill as full as the one it replaces): growing to that size one doubling at
 * a time would rehash each shard under its lock while requests wait on it.
 * The buckets count against the pool, an eighth of it at most. c may be NULL. */
void rowcache_reserve(rowcache *c, size_t entries);
/* The cache will hold about `bytes` soon (a swap's fill): if that is a full
 * slab or more per shard, its shards skip the small first slabs and take
 * full ones from the start, the pool's kept slabs first, so that a fill
 * maps no memory that a later free unmaps. c may be NULL. */
void rowcache_expect_bytes(rowcache *c, uint64_t bytes);
/* A cache whose version was swapped out: its bytes leave the pool's count at
 * once, so the new version's cache fills the budget while this one waits
 * to be freed (its readers finishing, then rowcache_free handing its slabs
 * to the pool or unmapping them); it still answers gets and takes no more
 * puts. c may be NULL. */
void rowcache_retire(rowcache *c);
/* Append up to max keys, recently read ones first (shards taken in turn),
 * each as a 4-byte little-endian length and the bytes. Returns the count. */
size_t rowcache_hot_keys(rowcache *c, size_t max, kbuf *out);
void rowcache_get_stats(rowcache *c, rowcache_stats *out);

/* Encode the cells of r as an image (replacing out's contents). */
void rowcache_encode(const store_row *r, kbuf *out);
/* Decode an image into cells borrowing from img (row fields set to row).
 * cells is grown as needed (*cap entries). Returns the cell count, or -1 if
 * the image is malformed. */
long rowcache_decode(const uint8_t *img, size_t len, kslice row, kiln_cell **cells, size_t *cap);

#endif
