/* mr_sortbuf.h -- the bounded in-memory buffer that collects map output.
 *
 * Plain mode: one allocation of the budget holds records growing up from the
 * bottom and fixed-size entries (partition, 8-byte key prefix, record offset)
 * growing down from the top, as Hadoop's map-side buffer does; the buffer is
 * full when they would meet. Sorting orders the entries by (partition, key,
 * value) with the prefix deciding most comparisons (a radix sort); under a
 * job's sort comparator (mr_sortbuf_set_order), by comparisons alone.
 *
 * Hashed mode (the job has a fold function): an open-addressing index over
 * the records finds an earlier record with the same key (the same bytes, even
 * when a sort comparator calls other keys equal), and the new value is
 * folded into it in place (written over the old value when the length is
 * unchanged, appended otherwise), so a key appears once per buffer and the
 * map output is combined before anything is spilled. The index takes a fixed
 * third of the budget and there are no entries until the sort builds them in
 * the index's memory.
 *
 * Memory: exactly the budget (pages are touched as they fill). Thread-safety:
 * single-threaded.
 */
#ifndef KILN_MR_SORTBUF_H
#define KILN_MR_SORTBUF_H

#include <stddef.h>
#include <stdint.h>

#include "mapreduce/mr_order.h"
#include "storage/base/buf.h"

/* Smallest budget accepted; smaller requests are raised to it. */
#define MR_SORTBUF_MIN (64 * 1024)

typedef struct mr_sortbuf mr_sortbuf;

/* Fold val into acc (both values of key): write the combined value to out
 * (empty on entry). Must be associative and commutative. */
typedef void (*mr_fold_fn)(void *arg, kslice key, kslice acc, kslice val, kbuf *out);

/* The sum of 8-byte big-endian unsigned counts (Hadoop's LongSumReducer as a
 * fold). The buffer recognizes it and adds in place without a call. */
void mr_sortbuf_fold_sum_be64(void *arg, kslice key, kslice acc, kslice val, kbuf *out);

typedef enum mr_sortbuf_result {
    MR_SORTBUF_ADDED = 0,    /* a new entry */
    MR_SORTBUF_FOLDED,       /* folded into the entry of an equal key */
    MR_SORTBUF_FULL,         /* no room: nothing changed; spill, reset, retry */
    MR_SORTBUF_TOO_BIG       /* the buffer is empty and the record still does not fit */
} mr_sortbuf_result;

/* A buffer of `budget` bytes; hashed: fold equal keys at add time. */
mr_sortbuf *mr_sortbuf_new(size_t budget, int hashed);
void mr_sortbuf_free(mr_sortbuf *sb);   /* sb may be NULL */

/* Sort keys with the job's comparator cmp (mr_order.h; NULL: bytes, the
 * default) instead of by bytes. The sort is then comparisons only (no radix
 * pass on byte prefixes). Set before the first sort. */
void mr_sortbuf_set_order(mr_sortbuf *sb, mr_key_cmp_fn cmp, void *arg);

/* Add a record. hash is the key's mr_partition_hash (used in hashed mode).
 * fold is required in hashed mode and ignored otherwise. */
mr_sortbuf_result mr_sortbuf_add(mr_sortbuf *sb, uint32_t part, uint64_t hash, kslice key,
                                 kslice value, mr_fold_fn fold, void *fold_arg);

/* Hashed mode: start loading the index slot of a key with this hash, and
 * (once that slot is likely in cache) the record it points to. Inserting
 * keys some emits after prefetching them overlaps their cache misses. */
void mr_sortbuf_prefetch_slot(const mr_sortbuf *sb, uint64_t hash);
void mr_sortbuf_prefetch_record(const mr_sortbuf *sb, uint64_t hash);

/* Sort the entries by (partition, key, value) in the order of mr_order.h.
 * REQUIRES: mr_sortbuf_reset
 * before the next add (the sort reorders what the index points at). */
void mr_sortbuf_sort(mr_sortbuf *sb);

/* Number of records (distinct keys in hashed mode). */
size_t mr_sortbuf_count(const mr_sortbuf *sb);

/* Record i in sorted order. REQUIRES: mr_sortbuf_sort since the last add.
 * Slices valid until the next add or reset. */
void mr_sortbuf_get(const mr_sortbuf *sb, size_t i, uint32_t *part, kslice *key, kslice *value);

/* Start loading entry i's record (reading the sorted entries in order
 * touches the records at random). */
void mr_sortbuf_prefetch_entry(const mr_sortbuf *sb, size_t i);

/* Bytes of the budget in use (records, entries; the index is fixed). */
size_t mr_sortbuf_used(const mr_sortbuf *sb);

/* Drop every entry. */
void mr_sortbuf_reset(mr_sortbuf *sb);

#endif
