/* iter_merge.h -- a k-way merging iterator: the one merge of the read path,
 * over any kiln_iter children (iter.h), forward and backward.
 *
 * The merge yields every child's cells in cell order; of cells with equal
 * keys, the one from the child with the larger sequence number (a region's
 * file from the newer load, or a memstore) comes first, so a reader that keeps
 * the first of equal keys sees the newest. Equal sequence numbers fall back to
 * the order children were added. A backward walk yields the forward walk
 * reversed (so equal keys come oldest first there).
 *
 * row_skip > 0 compares rows without their first row_skip bytes
 * (cell_compare_skip): a salted table's buckets, each a child over stored
 * keys [bucket] + user key, merge in user key order. Seek keys are handed to
 * every child unchanged, so such children read the key's row past row_skip
 * (store_view_iter_open's bucket children put their own bucket byte first).
 *
 * A binary heap of child indexes: one child costs no comparison; a move
 * costs O(log k) comparisons, a change of direction one seek per child.
 *
 * Ownership: the merge closes the children added as owned (on clear and
 * close); borrowed children must outlive their use by the merge.
 * Thread-safety: single-threaded, like its children. The current cell is a
 * child's and is valid until the next call on the merge.
 */
#ifndef KILN_ITER_MERGE_H
#define KILN_ITER_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "storage/hfile/iter.h"

typedef struct iter_merge iter_merge;

/* An empty merge (never valid until children are added and it is sought). */
iter_merge *iter_merge_new(uint32_t row_skip);
/* The merge as an iterator; kiln_iter_close on it is iter_merge_free. */
kiln_iter *iter_merge_iter(iter_merge *m);
void iter_merge_free(iter_merge *m);   /* m may be NULL */

/* Add a child with sequence number seq; owned: the merge closes it. Seek the
 * merge before reading. */
void iter_merge_add(iter_merge *m, kiln_iter *child, uint64_t seq, int owned);
/* Close the owned children and drop the borrowed ones: the merge is empty
 * (not valid) and can be refilled. */
void iter_merge_clear(iter_merge *m);
size_t iter_merge_children(const iter_merge *m);
/* The only child when there is exactly one, else NULL: a caller may read it
 * directly and skip the merge's own call. */
kiln_iter *iter_merge_single(const iter_merge *m);

/* Sequence number of the child holding the current cell. REQUIRES: valid. */
uint64_t iter_merge_seq(const iter_merge *m);

#endif
