/* mr_order.h -- how map output keys are ordered, grouped and partitioned:
 * the callback types a job may set (mr_desc.h: a sort comparator, a
 * grouping comparator, a partitioner, as Hadoop's Job has), and the one
 * record order every sorted thing in the engine shares (sort buffer, runs,
 * merges, total-order split keys).
 *
 * The record order is (partition, key, value). Keys are compared by the
 * job's sort comparator when it has one, else by their bytes (memcmp, the
 * shorter first on a common prefix); keys the comparator calls equal are
 * then ordered by their bytes, and records of one key by their value's
 * bytes. So the order is total whatever the comparator says, and a job's
 * output is the same bytes at every rank count.
 *
 * A comparator must be a strict weak order (consistent: the same answer for
 * the same keys on every rank and every call) and must not keep the slices
 * it is given. Header only; nothing here allocates.
 */
#ifndef KILN_MR_ORDER_H
#define KILN_MR_ORDER_H

#include <stdint.h>

#include "storage/base/buf.h"

/* Compare two map output keys: < 0, 0 or > 0 (Hadoop's RawComparator). */
typedef int (*mr_key_cmp_fn)(void *arg, kslice a, kslice b);

/* The partition of a map output key, in [0, partitions) (Hadoop's
 * Partitioner.getPartition). Every key of a reduce group must go to one
 * partition. A value >= partitions fails the job. */
typedef uint32_t (*mr_partition_fn)(void *arg, kslice key, uint32_t partitions);

/* A comparator and its argument; cmp NULL means byte order. */
typedef struct mr_key_order {
    mr_key_cmp_fn cmp;
    void *arg;
} mr_key_order;

/* The comparator's answer alone (NULL or no cmp: bytes): 0 for keys that
 * must stay together (one total-order partition, one default group). */
static inline int
mr_order_cmp(const mr_key_order *o, kslice a, kslice b)
{
    if (o != NULL && o->cmp != NULL)
        return o->cmp(o->arg, a, b);
    return kslice_cmp(a, b);
}

/* Keys in the order o gives (NULL or no cmp: bytes), ties broken by bytes:
 * the total order records are sorted in. */
static inline int
mr_order_keys(const mr_key_order *o, kslice a, kslice b)
{
    if (o != NULL && o->cmp != NULL) {
        int c = o->cmp(o->arg, a, b);
        if (c != 0)
            return c;
    }
    return kslice_cmp(a, b);
}

/* 1 when a and b belong to one group under o: o's comparator calls them
 * equal, or (NULL or no cmp) their bytes are equal. */
static inline int
mr_order_same(const mr_key_order *o, kslice a, kslice b)
{
    if (o != NULL && o->cmp != NULL)
        return o->cmp(o->arg, a, b) == 0;
    return kslice_eq(a, b);
}

#endif
