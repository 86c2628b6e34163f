/* mr_partition.c -- key hash, hash and total-order partitioners, split picking.
 *
 * The hash reads the key 8 bytes at a time as little-endian words (loaded
 * byte by byte, so the value does not depend on the host), mixes each word
 * with two multiplications by odd 64-bit constants, and finishes with a
 * xor-shift/multiply avalanche so that every input bit reaches the high bits
 * the partitioner and the combining index use.
 */
#include "mapreduce/mr_partition.h"

#include <stdlib.h>
#include <string.h>

#define MR_HASH_K1 0x9e3779b97f4a7c15ull
#define MR_HASH_K2 0xc2b2ae3d27d4eb4full
#define MR_HASH_K3 0x165667b19e3779f9ull

static inline uint64_t
mr_load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint64_t
mr_rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

uint64_t
mr_partition_hash(const void *data, size_t n)
{
    const uint8_t *p = data;
    uint64_t h = MR_HASH_K3 ^ ((uint64_t)n * MR_HASH_K1);
    while (n >= 8) {
        uint64_t w = mr_load_le64(p) * MR_HASH_K2;
        h = mr_rotl(h ^ mr_rotl(w, 31) * MR_HASH_K1, 27) * MR_HASH_K1 + MR_HASH_K3;
        p += 8;
        n -= 8;
    }
    if (n > 0) {
        uint64_t w = 0;
        for (size_t i = 0; i < n; i++)
            w |= (uint64_t)p[i] << (8 * i);
        h ^= mr_rotl(w * MR_HASH_K2, 31) * MR_HASH_K1;
    }
    h ^= h >> 33;
    h *= MR_HASH_K2;
    h ^= h >> 29;
    h *= MR_HASH_K3;
    h ^= h >> 32;
    return h;
}

struct mr_partitioner {
    uint32_t partitions;
    int total;
    kslice *splits;
    size_t n_splits;
};

mr_partitioner *
mr_partitioner_new_hash(uint32_t partitions)
{
    mr_partitioner *p = kiln_calloc(1, sizeof *p);
    p->partitions = partitions ? partitions : 1;
    return p;
}

kiln_status
mr_partitioner_new_total(const kslice *splits, size_t n, uint32_t partitions,
                         mr_partitioner **out, kiln_err *err)
{
    *out = NULL;
    if (partitions == 0 || n >= partitions)
        return status_set(err, KILN_INVALID, "total-order partitioner: %zu split keys for %u partitions",
                          n, partitions);
    for (size_t i = 0; i < n; i++) {
        if (splits[i].n == 0)
            return status_set(err, KILN_INVALID, "total-order partitioner: split key %zu is empty", i);
        if (i > 0 && kslice_cmp(splits[i - 1], splits[i]) >= 0)
            return status_set(err, KILN_INVALID,
                              "total-order partitioner: split key %zu does not sort after key %zu",
                              i, i - 1);
    }
    mr_partitioner *p = kiln_calloc(1, sizeof *p);
    p->partitions = partitions;
    p->total = 1;
    p->n_splits = n;
    p->splits = kiln_calloc(n ? n : 1, sizeof *p->splits);
    for (size_t i = 0; i < n; i++)
        p->splits[i] = kslice_make(kiln_memdup(splits[i].p, splits[i].n), splits[i].n);
    *out = p;
    return KILN_OK;
}

void
mr_partitioner_free(mr_partitioner *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n_splits; i++)
        free((void *)p->splits[i].p);
    free(p->splits);
    free(p);
}

uint32_t
mr_partitioner_count(const mr_partitioner *p)
{
    return p->partitions;
}

int
mr_partitioner_is_total(const mr_partitioner *p)
{
    return p->total;
}

size_t
mr_partitioner_splits(const mr_partitioner *p, const kslice **splits)
{
    *splits = p->splits;
    return p->n_splits;
}

uint32_t
mr_partitioner_get(const mr_partitioner *p, kslice key, uint64_t hash)
{
    if (!p->total)
        return (uint32_t)(((hash >> 32) * (uint64_t)p->partitions) >> 32);
    /* Number of split keys <= key. */
    size_t lo = 0, hi = p->n_splits;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (kslice_cmp(p->splits[mid], key) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

static int
mr_partition_cmp_slices(const void *a, const void *b)
{
    return kslice_cmp(*(const kslice *)a, *(const kslice *)b);
}

size_t
mr_partition_pick_splits(kslice *samples, size_t n, uint32_t partitions, kslice *out)
{
    if (n == 0 || partitions < 2)
        return 0;
    qsort(samples, n, sizeof *samples, mr_partition_cmp_slices);
    size_t k = 0;
    for (uint32_t i = 1; i < partitions; i++) {
        size_t idx = (size_t)(((uint64_t)i * n) / partitions);
        if (idx >= n)
            break;
        kslice s = samples[idx];
        if (s.n == 0)
            continue;
        if (k > 0 && kslice_cmp(out[k - 1], s) >= 0)
            continue;
        out[k++] = s;
    }
    return k;
}
