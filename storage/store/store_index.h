/* store_index.h -- reads through a secondary index (issue #6): an index scan
 * over a view. Definitions, the index table's schema and the index row key
 * are store_index_def.h.
 *
 * Reads: an exact lookup on leading values is one prefix scan of the index,
 * a range on the next value one range scan, then one Get on the base table
 * per entry. Each Get is checked against the entry -- the row's newest values
 * must still be the entry's -- so an entry made stale by a later append (or by
 * two input lines for one row) is never returned. Rows come in index order:
 * for an exact lookup, ascending row key.
 *
 * An index scan is single-threaded and holds a reference on its view; rows it
 * returns are valid until its next call.
 */
#ifndef KILN_STORE_INDEX_H
#define KILN_STORE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"
#include "storage/store/store_index_def.h"
#include "storage/store/store_view.h"

/* ------------------------------------------------------------------ reads */

typedef struct store_index_opts {
    store_row_opts read;            /* columns, versions, time range of the rows returned */
    const kslice *values;           /* equal values of the first nvalues indexed columns */
    size_t nvalues;
    int has_value_start;            /* range on the next column: [start, stop) */
    kslice value_start;
    int has_value_stop;
    kslice value_stop;
    kslice after;                   /* resume after this entry (store_index_scan_position) */
    uint64_t limit;                 /* rows; 0 = no limit */
} store_index_opts;

void store_index_opts_init(store_index_opts *o);

typedef struct store_index_scan store_index_scan;

/* Rows of v's table found through its index `name` (takes a reference on
 * v). KILN_NOT_FOUND if the current version has no such index (naming the
 * indexes it has); KILN_INVALID for more values than indexed columns, a
 * range past the last column, or a column of an unknown family. */
kiln_status store_index_scan_open(store_view *v, const char *name, const store_index_opts *o,
                                  store_index_scan **out, kiln_err *err);
/* Next row: *has_row = 0 at the end or the limit. */
kiln_status store_index_scan_next(store_index_scan *s, store_row *out, int *has_row,
                                  kiln_err *err);
/* The index entry of the row last returned (empty before the first): pass it
 * as opts.after to continue after that row. Valid until the next call. */
kslice store_index_scan_position(const store_index_scan *s);
/* Entries skipped so far because the row no longer matched (stale). */
uint64_t store_index_scan_stale(const store_index_scan *s);
void store_index_scan_close(store_index_scan *s);   /* s may be NULL */

#endif
