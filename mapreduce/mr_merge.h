/* mr_merge.h -- k-way merge of sorted runs, grouped by key.
 *
 * A merger takes n run iterators, each sorted by (key, value), and yields the
 * union in (key, value) order one key group at a time: next_key moves to the
 * next distinct key, next_value walks that key's values. Values of one key
 * therefore arrive in byte order whatever the number of runs or ranks that
 * produced them, which is what makes the output independent of the rank
 * count. Memory: one block per iterator plus the current key; a key with a
 * billion values streams.
 *
 * Ownership: the merger owns the iterators (freed with it). Slices returned
 * stay valid until the next call on the merger. Single-threaded.
 */
#ifndef KILN_MR_MERGE_H
#define KILN_MR_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "mapreduce/mr_run.h"
#include "storage/base/buf.h"
#include "storage/base/status.h"

typedef struct mr_merger mr_merger;

/* Merge its[0..n) (n may be 0); takes ownership of the iterators. */
mr_merger *mr_merger_new(mr_run_iter **its, size_t n);
void mr_merger_free(mr_merger *m);   /* m may be NULL */

/* Move to the next key group, skipping what is left of the current one.
 * 1 and *key set, 0 at the end, -1 on a read error (err set). */
int mr_merger_next_key(mr_merger *m, kslice *key, kiln_err *err);

/* Next value of the current key: 1 and *value set, 0 when the group is done,
 * -1 on a read error (err set). */
int mr_merger_next_value(mr_merger *m, kslice *value, kiln_err *err);

/* Stored bytes the iterators read so far. */
uint64_t mr_merger_bytes_read(const mr_merger *m);

#endif
