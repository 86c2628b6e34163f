/* store_merge.h -- a k-way merge of HFile iterators in HBase cell order, the
 * newest load first on equal keys.
 *
 * Each child is an hfile_iter with the load sequence number of its file; the
 * merge yields every child's cells in cell order (cell.h), and for cells with
 * equal keys the one from the child with the larger sequence number first,
 * so a reader that keeps the first of equal keys sees the newest load's cell.
 * A binary heap of child indexes; one child costs no comparison at all.
 *
 * Ownership: the merge owns its children's iterators (freed by clear/free),
 * except those added as borrowed.
 * Thread-safety: single-threaded, like the iterators it holds. The cell
 * returned by store_merge_cell is valid until the next call on the merge.
 */
#ifndef KILN_STORE_MERGE_H
#define KILN_STORE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/base/status.h"

typedef struct store_merge store_merge;

store_merge *store_merge_new(void);
void store_merge_free(store_merge *m);   /* m may be NULL */

/* Add a child (ownership of it passes to the merge). Call seek before reading. */
void store_merge_add(store_merge *m, hfile_iter *it, uint64_t seq);
/* Add a child the caller keeps owning (it must outlive its use by the merge). */
void store_merge_add_borrowed(store_merge *m, hfile_iter *it, uint64_t seq);
/* Free every owned child and drop the borrowed ones; the merge is empty and
 * can be refilled. */
void store_merge_clear(store_merge *m);
size_t store_merge_children(const store_merge *m);

/* Position every child at its first cell >= key. */
kiln_status store_merge_seek(store_merge *m, const kiln_cell *key, kiln_err *err);
int store_merge_valid(const store_merge *m);
/* The smallest cell. REQUIRES: valid. */
const kiln_cell *store_merge_cell(const store_merge *m);
/* Load sequence of the child holding the current cell. REQUIRES: valid. */
uint64_t store_merge_seq(const store_merge *m);
/* Advance past the current cell. REQUIRES: valid. */
kiln_status store_merge_next(store_merge *m, kiln_err *err);

/* The largest row among the children's last cells <= key (each child seeks
 * for prev; key NULL: each child's last cell), copied into *row (replacing it). *found = 0 when no child has
 * such a cell. Leaves the children positioned anywhere: seek before next. */
kiln_status store_merge_prev_row(store_merge *m, const kiln_cell *key, kbuf *row, int *found,
                                 kiln_err *err);

#endif
