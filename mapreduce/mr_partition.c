/* mr_partition.c -- hash and total-order partitioners, split picking. (The
 * key hash itself is inline in mr_partition.h: it runs once per emit.)
 */
#include "mapreduce/mr_partition.h"

#include <stdlib.h>
#include <string.h>

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
