/* mr_merge.h -- k-way merge of sorted runs, grouped by key.
 *
 * A merger takes n run iterators, each sorted by (key, value) in the order of
 * mr_order.h, and yields the union in that order one key group at a time:
 * next_key moves to the next group, next_value walks that group's values.
 * A group is a run of consecutive keys that are equal: equal bytes by
 * default, or equal under a comparator (a job's sort comparator for a
 * combiner, its grouping comparator for reduce), when the group's records
 * may carry different keys (mr_merger_value_key tells which). Values of one
 * key therefore arrive in byte order whatever the number of runs or ranks
 * that produced them, which is what makes the output independent of the
 * rank count. Memory: one block per iterator plus the group's first key; a
 * group with a billion values streams.
 *
 * Ownership: the merger owns the iterators (freed with it). Slices returned
 * stay valid until the next call on the merger. Single-threaded.
 */
#ifndef KILN_MR_MERGE_H
#define KILN_MR_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "mapreduce/mr_order.h"
#include "mapreduce/mr_run.h"
#include "storage/base/buf.h"
#include "storage/base/status.h"

typedef struct mr_merger mr_merger;

/* Merge its[0..n) (n may be 0); takes ownership of the iterators. */
mr_merger *mr_merger_new(mr_run_iter **its, size_t n);
void mr_merger_free(mr_merger *m);   /* m may be NULL */

/* The order the runs are sorted in (NULL or cmp NULL: bytes) and what makes
 * a group (NULL or cmp NULL: equal bytes; else keys group calls equal; it
 * must call equal only keys that are consecutive in the sort order). Both
 * copied. REQUIRES: before the first next_key. */
void mr_merger_set_order(mr_merger *m, const mr_key_order *sort, const mr_key_order *group);

/* Move to the next key group, skipping what is left of the current one.
 * 1 and *key set (the group's first key), 0 at the end, -1 on a read error
 * (err set). */
int mr_merger_next_key(mr_merger *m, kslice *key, kiln_err *err);

/* Next value of the current key: 1 and *value set, 0 when the group is done,
 * -1 on a read error (err set). */
int mr_merger_next_value(mr_merger *m, kslice *value, kiln_err *err);

/* The key of the value next_value handed out last (the group's first key
 * before the first); valid until the next call on the merger. */
kslice mr_merger_value_key(const mr_merger *m);

/* Stored bytes the iterators read so far. */
uint64_t mr_merger_bytes_read(const mr_merger *m);

#endif
