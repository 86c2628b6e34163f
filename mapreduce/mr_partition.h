/* mr_partition.h -- which reduce partition a map output key goes to.
 *
 * Two partitioners, as in Hadoop: hash (HashPartitioner: spreads keys evenly,
 * each partition sorted on its own) and total order (TotalOrderPartitioner:
 * partition i holds the keys in [split[i-1], split[i]), so the partitions in
 * order are globally sorted; the split keys are a table's region boundaries or
 * keys sampled from the input). The partition count is fixed by the job, never
 * by the number of ranks, so the output is the same whatever the rank count.
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

#include "storage/buf.h"
#include "storage/status.h"

/* 64-bit hash of n bytes, independent of the machine's byte order. */
uint64_t mr_partition_hash(const void *p, size_t n);

typedef struct mr_partitioner mr_partitioner;

/* Hash partitioner over `partitions` (>= 1) partitions. */
mr_partitioner *mr_partitioner_new_hash(uint32_t partitions);

/* Total-order partitioner over `partitions` partitions with n split keys
 * (copied). REQUIRES nothing of the input: KILN_INVALID when the keys are not
 * strictly increasing, when one is empty, or when n >= partitions. */
kiln_status mr_partitioner_new_total(const kslice *splits, size_t n, uint32_t partitions,
                                     mr_partitioner **out, kiln_err *err);

void mr_partitioner_free(mr_partitioner *p);   /* p may be NULL */

uint32_t mr_partitioner_count(const mr_partitioner *p);
int mr_partitioner_is_total(const mr_partitioner *p);
/* Split keys of a total-order partitioner (n = 0 for hash). Valid while p lives. */
size_t mr_partitioner_splits(const mr_partitioner *p, const kslice **splits);

/* Partition of key; hash must be mr_partition_hash(key) (used by hash only). */
uint32_t mr_partitioner_get(const mr_partitioner *p, kslice key, uint64_t hash);

/* Pick at most partitions-1 split keys from n sampled keys: sort them and take
 * the keys at the i/partitions quantiles, dropping repeats. The samples array
 * is sorted in place; the returned slices point into it. Returns the count. */
size_t mr_partition_pick_splits(kslice *samples, size_t n, uint32_t partitions, kslice *out);

#endif
