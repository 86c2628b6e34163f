/* iter.h -- the internal iterator over cells: the one interface every source
 * of cells in a read implements, so reads compose as LevelDB's do (Block::Iter
 * -> two-level iterator -> merging iterator -> DB iterator):
 *
 *   HFile data block (hfile_reader_block_iter)
 *     -> whole HFile (hfile_reader_iter: the index cursor, then the block)
 *       -> merge of files, newest load first on equal keys (iter_merge.h)
 *         -> a view's regions in a row range (store_view_iter_open)
 *           -> salted buckets merged in user key order (iter_merge.h, row_skip 1)
 *             -> row assembly (store_view_row.c), which consumes any of them
 *               -> the visible cells (store_view_cells_open), one row
 *                  assembled at a time, a kiln_iter again
 *
 * A new source of cells (a memstore) is one more kiln_iter added to a merge.
 *
 * Order: HBase cell order (cell.h), or for a merge made with a row skip, that
 * order on rows without their first bytes (iter_merge.h). Every positioning
 * call leaves the iterator on a cell or invalid:
 *
 *   seek_first / seek_last   the first / last cell
 *   seek(key)                the first cell >= key
 *   seek_for_prev(key)       the last cell <= key
 *   next / prev              the cell after / before the current one; when
 *                            not valid (at an end, after an error) a no-op
 *
 * next and prev may alternate freely: prev after next returns to the cell
 * before, and a backward walk yields exactly the forward walk reversed.
 *
 * The current cell: kiln_iter_key returns the whole cell (key fields, value,
 * tags, mvcc) as a const kiln_cell *, and kiln_iter_value its value. Both
 * borrow from the iterator (or the blocks it pins) and stay valid until the
 * next positioning call or close on that iterator -- or, for a child of a
 * merge, on the merge.
 *
 * Errors: a failed step (an I/O error, a corrupt block) leaves the iterator
 * invalid with the error recorded, named as its source names it ("f.hfile:
 * block checksum mismatch at offset 4096"). The error is sticky -- next and
 * prev do nothing and kiln_iter_status keeps returning it -- until the next
 * seek* call, which clears it and starts over (so an iterator cached between
 * requests recovers when it is aimed at healthy blocks). Movement wrappers
 * return the status after the move, so `if (kiln_iter_next(it) != KILN_OK)`
 * reads as elsewhere in Kiln.
 *
 * Ownership: whoever created an iterator closes it (kiln_iter_close, NULL
 * accepted); an iterator handed to a merge as owned is closed by the merge.
 * An iterator over a reader's file must be closed before the reader.
 *
 * Thread-safety: an iterator is single-threaded. Iterators over the same
 * readers and block cache may run in different threads.
 *
 * Cost: the wrappers below are inline; valid, key, value and status read
 * fields; a move is one indirect call per stage and allocates nothing (a
 * view's range iterator allocates its region's file iterators when it
 * enters a region).
 */
#ifndef KILN_ITER_H
#define KILN_ITER_H

#include <stddef.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"
#include "storage/hfile/cell.h"

typedef struct kiln_iter kiln_iter;

/* What an implementation provides. Movement functions record failures in
 * it->err (kiln_iter_fail) and set it->cur; next and prev are only called on
 * a valid iterator. close frees the iterator and what it owns. */
typedef struct kiln_iter_ops {
    void (*seek_first)(kiln_iter *it);
    void (*seek_last)(kiln_iter *it);
    void (*seek)(kiln_iter *it, const kiln_cell *key);
    void (*seek_for_prev)(kiln_iter *it, const kiln_cell *key);
    void (*next)(kiln_iter *it);
    void (*prev)(kiln_iter *it);
    void (*close)(kiln_iter *it);
} kiln_iter_ops;

/* Embedded as the first member of every implementation. Callers use the
 * functions below, never the fields. */
struct kiln_iter {
    const kiln_iter_ops *ops;
    const kiln_cell *cur;       /* the current cell; NULL when not valid */
    kiln_err err;               /* first error since the last seek*, or KILN_OK */
};

/* ------------------------------------------------------------------ using */

static inline kiln_status
kiln_iter_seek_first(kiln_iter *it)
{
    it->ops->seek_first(it);
    return it->err.code;
}

static inline kiln_status
kiln_iter_seek_last(kiln_iter *it)
{
    it->ops->seek_last(it);
    return it->err.code;
}

/* Position at the first cell >= key. key is not kept after the call. */
static inline kiln_status
kiln_iter_seek(kiln_iter *it, const kiln_cell *key)
{
    it->ops->seek(it, key);
    return it->err.code;
}

/* Position at the last cell <= key. key is not kept after the call. */
static inline kiln_status
kiln_iter_seek_for_prev(kiln_iter *it, const kiln_cell *key)
{
    it->ops->seek_for_prev(it, key);
    return it->err.code;
}

static inline kiln_status
kiln_iter_next(kiln_iter *it)
{
    if (it->cur != NULL)
        it->ops->next(it);
    return it->err.code;
}

static inline kiln_status
kiln_iter_prev(kiln_iter *it)
{
    if (it->cur != NULL)
        it->ops->prev(it);
    return it->err.code;
}

/* 1 if positioned on a cell (never after an error). */
static inline int
kiln_iter_valid(const kiln_iter *it)
{
    return it->cur != NULL;
}

/* The current cell. REQUIRES: valid. Valid until the next move or close. */
static inline const kiln_cell *
kiln_iter_key(const kiln_iter *it)
{
    return it->cur;
}

/* The current cell's value. REQUIRES: valid. Lives as long as the cell. */
static inline kslice
kiln_iter_value(const kiln_iter *it)
{
    return kslice_make(it->cur->value, it->cur->value_len);
}

/* The sticky error (KILN_OK if none), copied into err (first error wins)
 * when there is one. err may be NULL. */
kiln_status kiln_iter_status(const kiln_iter *it, kiln_err *err);

/* Free it and what it owns. it may be NULL. */
static inline void
kiln_iter_close(kiln_iter *it)
{
    if (it != NULL)
        it->ops->close(it);
}

/* ------------------------------------------------------------------ implementing */

/* Set up the embedded part: not valid, no error. */
void kiln_iter_init(kiln_iter *it, const kiln_iter_ops *ops);

/* Start of a seek*: not valid, error cleared. */
static inline void
kiln_iter_restart(kiln_iter *it)
{
    it->cur = NULL;
    it->err.code = KILN_OK;
    it->err.sys_errno = 0;
    it->err.msg[0] = '\0';
}

/* Record the error in from (a child's, or a local kiln_err) unless one is
 * recorded already, and make it invalid. Returns the code. */
kiln_status kiln_iter_fail(kiln_iter *it, const kiln_err *from);

#endif
