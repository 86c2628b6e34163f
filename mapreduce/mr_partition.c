/* mr_partition.c -- hash, total-order and custom partitioners, split
 * picking. (The key hash itself is inline in mr_partition.h: it runs once
 * per emit.)
 */
#include "mapreduce/mr_partition.h"

#include <stdlib.h>
#include <string.h>

typedef enum mr_partition_kind {
    MR_PART_HASH = 0,
    MR_PART_TOTAL,
    MR_PART_CUSTOM
} mr_partition_kind;

struct mr_partitioner {
    uint32_t partitions;
    mr_partition_kind kind;
    kslice *splits;          /* total */
    size_t n_splits;
    mr_key_order order;      /* total: the split keys' order */
    mr_partition_fn fn;      /* custom */
    void *arg;
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
                         const mr_key_order *o, mr_partitioner **out, kiln_err *err)
{
    *out = NULL;
    if (partitions == 0 || n >= partitions)
        return status_set(err, KILN_INVALID, "total-order partitioner: %zu split keys for %u partitions",
                          n, partitions);
    for (size_t i = 0; i < n; i++) {
        if (splits[i].n == 0)
            return status_set(err, KILN_INVALID, "total-order partitioner: split key %zu is empty", i);
        if (i > 0 && mr_order_cmp(o, splits[i - 1], splits[i]) >= 0)
            return status_set(err, KILN_INVALID,
                              "total-order partitioner: split key %zu does not sort after key %zu%s",
                              i, i - 1, o != NULL && o->cmp != NULL ? " (sort comparator)" : "");
    }
    mr_partitioner *p = kiln_calloc(1, sizeof *p);
    p->partitions = partitions;
    p->kind = MR_PART_TOTAL;
    if (o != NULL)
        p->order = *o;
    p->n_splits = n;
    p->splits = kiln_calloc(n ? n : 1, sizeof *p->splits);
    for (size_t i = 0; i < n; i++)
        p->splits[i] = kslice_make(kiln_memdup(splits[i].p, splits[i].n), splits[i].n);
    *out = p;
    return KILN_OK;
}

mr_partitioner *
mr_partitioner_new_custom(uint32_t partitions, mr_partition_fn fn, void *arg)
{
    mr_partitioner *p = kiln_calloc(1, sizeof *p);
    p->partitions = partitions ? partitions : 1;
    p->kind = MR_PART_CUSTOM;
    p->fn = fn;
    p->arg = arg;
    return p;
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
    return p->kind == MR_PART_TOTAL;
}

int
mr_partitioner_is_custom(const mr_partitioner *p)
{
    return p->kind == MR_PART_CUSTOM;
}

const char *
mr_partitioner_kind(const mr_partitioner *p)
{
    return p->kind == MR_PART_HASH ? "hash" : p->kind == MR_PART_TOTAL ? "total" : "custom";
}

int
mr_partitioner_needs_hash(const mr_partitioner *p)
{
    return p->kind == MR_PART_HASH;
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
    if (p->kind == MR_PART_HASH)
        return mr_partition_of_hash(hash, p->partitions);
    if (p->kind == MR_PART_CUSTOM)
        return p->fn(p->arg, key, p->partitions);
    /* Number of split keys <= key. */
    size_t lo = 0, hi = p->n_splits;
    const mr_key_order *o = p->order.cmp != NULL ? &p->order : NULL;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (mr_order_cmp(o, p->splits[mid], key) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

void
mr_partition_printable(kbuf *out, kslice s, size_t max)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = s.n < max ? s.n : max;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s.p[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            buf_append_u8(out, c);
        } else {
            char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            buf_append(out, e, 4);
        }
    }
    if (n < s.n)
        buf_append(out, "...", 3);
}

kiln_status
mr_partition_bad(const mr_partitioner *p, const char *job, kslice key, kslice value, uint32_t part,
                 kiln_err *err)
{
    kbuf k = KBUF_INIT, v = KBUF_INIT;
    mr_partition_printable(&k, key, 64);
    mr_partition_printable(&v, value, 32);
    buf_append_u8(&k, 0);
    buf_append_u8(&v, 0);
    kiln_status s = status_set(err, KILN_INTERNAL,
                               "%s: the partitioner returned %u for key '%s' (value '%s'), not a "
                               "partition: there are %u (0 to %u)", job, part, (const char *)k.data,
                               (const char *)v.data, p->partitions, p->partitions - 1);
    buf_free(&k);
    buf_free(&v);
    return s;
}

static int
mr_partition_cmp_slices(const void *a, const void *b, void *o)
{
    return mr_order_keys(o, *(const kslice *)a, *(const kslice *)b);
}

size_t
mr_partition_pick_splits(kslice *samples, size_t n, uint32_t partitions, const mr_key_order *o,
                         kslice *out)
{
    if (n == 0 || partitions < 2)
        return 0;
    qsort_r(samples, n, sizeof *samples, mr_partition_cmp_slices, (void *)o);
    size_t k = 0;
    for (uint32_t i = 1; i < partitions; i++) {
        size_t idx = (size_t)(((uint64_t)i * n) / partitions);
        if (idx >= n)
            break;
        kslice s = samples[idx];
        if (s.n == 0)
            continue;
        if (k > 0 && mr_order_cmp(o, out[k - 1], s) >= 0)
            continue;
        out[k++] = s;
    }
    return k;
}
