/* mr_partition.h -- which reduce partition a map output key goes to.
 *
 * Three partitioners, as in Hadoop: hash (HashPartitioner: spreads keys
 * evenly, each partition sorted on its own), total order
 * (TotalOrderPartitioner: partition i holds the keys in [split[i-1],
 * split[i]) in the job's key order (mr_order.h), so the partitions in order
 * are globally sorted; the split keys are a table's region boundaries or keys
 * sampled from the input), and the job's own function (a Partitioner class).
 * The partition count is fixed by the job, never by the number of ranks, so
 * the output is the same whatever the rank count.
 *
 * mr_partition_hash is the engine's one key hash: stable across machines,
 * ranks and runs (it is part of the output's definition), and the same value
 * feeds the map-side combining index.
 *
 * A partitioner is immutable after creation and safe to share.
 */
#ifndef KILN_MR_PARTITION_H
#define KILN_MR_PARTITION_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mapreduce/mr_order.h"
#include "storage/base/buf.h"
#include "storage/base/status.h"

#define MR_PARTITION_K1 0x9e3779b97f4a7c15ull
#define MR_PARTITION_K2 0xc2b2ae3d27d4eb4full
#define MR_PARTITION_K3 0x165667b19e3779f9ull

static inline uint64_t
mr_partition_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint64_t
mr_partition_le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

static inline uint64_t
mr_partition_mix(uint64_t h, uint64_t w)
{
    w *= MR_PARTITION_K2;
    w = (w << 31) | (w >> 33);
    h ^= w * MR_PARTITION_K1;
    h = (h << 27) | (h >> 37);
    return h * MR_PARTITION_K1 + MR_PARTITION_K3;
}

/* The hash's last avalanche: every input bit reaches the high bits. */
static inline uint64_t
mr_partition_finish(uint64_t h)
{
    h ^= h >> 33;
    h *= MR_PARTITION_K2;
    h ^= h >> 29;
    h *= MR_PARTITION_K3;
    h ^= h >> 32;
    return h;
}

/* 64-bit hash of n bytes, independent of the machine's byte order: 8-byte
 * little-endian words mixed with odd-constant multiplies, the last partial
 * word read as an overlapping load (keys are usually short), and a
 * xor-shift/multiply avalanche so every input bit reaches the high bits the
 * partitioner and the combining index use. */
static inline uint64_t
mr_partition_hash(const void *data, size_t n)
{
    const uint8_t *p = data;
    uint64_t h = MR_PARTITION_K3 ^ ((uint64_t)n * MR_PARTITION_K1);
    if (n >= 8) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8)
            h = mr_partition_mix(h, mr_partition_le64(p + i));
        if (i < n)
            h = mr_partition_mix(h, mr_partition_le64(p + n - 8));
    } else if (n >= 4) {
        h = mr_partition_mix(h, mr_partition_le32(p) | (mr_partition_le32(p + n - 4) << 32));
    } else if (n > 0) {
        h = mr_partition_mix(h, (uint64_t)p[0] | ((uint64_t)p[n / 2] << 8) | ((uint64_t)p[n - 1] << 16));
    }
    return mr_partition_finish(h);
}

/* The hash partitioner's choice among n partitions for a key of hash h
 * (inline: the collector calls it once per emit). */
static inline uint32_t
mr_partition_of_hash(uint64_t h, uint32_t n)
{
    return (uint32_t)(((h >> 32) * (uint64_t)n) >> 32);
}

typedef struct mr_partitioner mr_partitioner;

/* Hash partitioner over `partitions` (>= 1) partitions. */
mr_partitioner *mr_partitioner_new_hash(uint32_t partitions);

/* Total-order partitioner over `partitions` partitions with n split keys
 * (copied), in the order o (copied; NULL: bytes): a key goes after every
 * split key that o's comparator places at or before it, so keys it calls
 * equal share a partition. REQUIRES nothing of the input: KILN_INVALID when
 * the keys are not strictly increasing under the comparator, when one is
 * empty, or when n >= partitions. */
kiln_status mr_partitioner_new_total(const kslice *splits, size_t n, uint32_t partitions,
                                     const mr_key_order *o, mr_partitioner **out, kiln_err *err);

/* The job's partition function fn over `partitions` (>= 1) partitions. Its
 * answers are not checked here: mr_partitioner_get passes them on, and the
 * caller fails a key whose partition is >= partitions (mr_partition_bad). */
mr_partitioner *mr_partitioner_new_custom(uint32_t partitions, mr_partition_fn fn, void *arg);

void mr_partitioner_free(mr_partitioner *p);   /* p may be NULL */

uint32_t mr_partitioner_count(const mr_partitioner *p);
int mr_partitioner_is_total(const mr_partitioner *p);
int mr_partitioner_is_custom(const mr_partitioner *p);
/* "hash", "total" or "custom". */
const char *mr_partitioner_kind(const mr_partitioner *p);
/* 1 when mr_partitioner_get reads its hash argument (hash partitioning). */
int mr_partitioner_needs_hash(const mr_partitioner *p);
/* Split keys of a total-order partitioner (n = 0 otherwise). Valid while p lives. */
size_t mr_partitioner_splits(const mr_partitioner *p, const kslice **splits);

/* Partition of key; hash must be mr_partition_hash(key) when
 * mr_partitioner_needs_hash (else it is not read). A custom partitioner's
 * answer is returned as it is, possibly >= the count. */
uint32_t mr_partitioner_get(const mr_partitioner *p, kslice key, uint64_t hash);

/* The error for a custom partitioner's answer `part` for key (with value)
 * that is not below the partition count: KILN_INTERNAL (the job's bug;
 * exit status 70) naming both in HBase's printable form (shortened). */
kiln_status mr_partition_bad(const mr_partitioner *p, const char *job, kslice key, kslice value,
                             uint32_t part, kiln_err *err);

/* Pick at most partitions-1 split keys from n sampled keys: sort them in the
 * order o (NULL: bytes) and take the keys at the i/partitions quantiles,
 * dropping keys o's comparator calls equal to (or places before) the one
 * taken before. The samples array
 * is sorted in place; the returned slices point into it. Returns the count. */
size_t mr_partition_pick_splits(kslice *samples, size_t n, uint32_t partitions,
                                const mr_key_order *o, kslice *out);

/* Append s to out in HBase's printable form (Bytes.toStringBinary: printable
 * ASCII as is, other bytes and the backslash as \xNN); at most max bytes of
 * s, then "..." when it was longer. */
void mr_partition_printable(kbuf *out, kslice s, size_t max);

#endif
