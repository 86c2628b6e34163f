/* store_split.h -- splitting a region of a table in two at its middle row,
 * published atomically as a new version.
 *
 * The split key is HBase's split point: the middle cell of the region's
 * largest file (by bytes), taken to its row. When that row is the region's
 * first, the next row above it is used instead, so that both halves hold
 * cells; a region whose cells all share one row cannot be split. Every file
 * of the region whose rows straddle the key is rewritten as two files, the
 * cells with rows below the key and those at or above it; a file wholly on
 * one side moves to that half unchanged. A rewritten half keeps the file's
 * family and seq, and is written as the store writes its files (the
 * family's compression, block size and bloom; the original's FileInfo
 * entries that the writer does not compute itself, such as MAX_SEQ_ID_KEY
 * and MAJOR_COMPACTION_KEY, and its creation time).
 *
 * The new version (kind MAINT, the current one its parent) is a copy of the
 * current manifest -- sources, other regions and their files, index tables
 * (whose regions are their own) -- with the split key inserted into
 * tables[0]'s schema and the region replaced by its two halves. Regions
 * live in the manifest (readers take them from it); the table's schema file
 * is then rewritten with the same split keys (table_write_schema), so that
 * jobs and bulk loads partition by the current regions. A crash between
 * the publish and that rewrite leaves the schema file one split behind: the
 * next split brings it up to date first, and an append load refuses a
 * table whose schema file and current version disagree.
 *
 * Crash safety is table_publish's: the halves are fsynced, then files/, and
 * the CURRENT rename is the commit point. On a failure before it, what was
 * written is removed (table_abort_version). Old files stay on disk until a
 * later table_gc, so views of the old version keep reading.
 *
 * Salted tables split like any other: the split key is a stored row key,
 * bucket byte included. The table property "max_region_bytes"
 * (STORE_SPLIT_PROP_MAX_BYTES, decimal bytes) is the size above which
 * store_split_candidates reports a region.
 *
 * Thread-safety: as kiln_table -- one thread at a time, and the table's
 * LOCK serializes processes. Ownership: a result owns its split key
 * (store_split_result_free).
 */
#ifndef KILN_STORE_SPLIT_H
#define KILN_STORE_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/block_cache.h"
#include "storage/base/buf.h"
#include "storage/base/status.h"
#include "storage/store/table.h"

#define STORE_SPLIT_PROP_MAX_BYTES "max_region_bytes"

typedef struct store_split_result {
    uint64_t version;        /* version published; 0 when nothing was */
    uint64_t parent;         /* the version that was split */
    size_t region;           /* index of the lower half; the upper half is region + 1 */
    kbuf split_key;          /* start row of the upper half (a stored row key) */
    uint64_t files_written;  /* halves written */
    uint64_t files_moved;    /* files carried over unchanged to one half */
    uint64_t bytes_written;
    uint64_t cells_written;
    int unconfirmed;         /* published, but the last fsync or the schema file
                                rewrite failed (the error says which) */
} store_split_result;

void store_split_result_init(store_split_result *r);
void store_split_result_free(store_split_result *r);   /* r may be NULL */

/* The regions of the current version of t whose files hold more than
 * max_bytes bytes (0: the current schema's max_region_bytes property; none
 * when it is absent or 0), ascending, into *regions (free() it; NULL when
 * *n is 0). A table with nothing published has none. KILN_INVALID for a
 * property that is not a decimal number; the manifest's errors. */
kiln_status store_split_candidates(kiln_table *t, uint64_t max_bytes, size_t **regions,
                                   size_t *n, kiln_err *err);

/* The split key store_split_region would use for region r of the current
 * version, into key (reset first). cache may be NULL. KILN_INVALID for a
 * region out of range or "region too small to split" (no cells, or all in
 * one row); KILN_NOT_FOUND when nothing was published; a file's errors. */
kiln_status store_split_key(kiln_table *t, size_t r, block_cache *cache, kbuf *key,
                            kiln_err *err);

/* Split region r of the current version at store_split_key and publish the
 * result as the next version, then rewrite the schema file (above). out is
 * filled as far as the split got (init it first). cache may be NULL (reads
 * of the region's files go through it). REQUIRES: the table's LOCK held
 * (table_lock), KILN_INVALID otherwise. Errors: store_split_key's; a
 * file's or the writer's KILN_IO / KILN_CORRUPTION naming the file; the
 * publish's. On an error before the commit point nothing of the new version
 * is left; after it (out->unconfirmed) the version is published. */
kiln_status store_split_region(kiln_table *t, size_t r, block_cache *cache,
                               store_split_result *out, kiln_err *err);

#endif
