/* store_view.h -- the read side of the region store: one published version of
 * a table, opened for Get, Scan and count.
 *
 * Opening a view reads CURRENT, the manifest it names, and opens every HFile
 * of every region (trailer, indexes, blooms and FileInfo only; data blocks are
 * read on demand through the block cache). If a concurrent load collected the
 * version between reading CURRENT and opening its files, the open starts over
 * from CURRENT. Once open, a view keeps its files open, so it keeps reading
 * its version correctly while newer versions are published and this one is
 * deleted from disk. A table with no published version opens as an empty
 * view (version 0).
 *
 * Reads follow HBase semantics. A region's families are merged over all their
 * HFiles (iter_merge.h), the newest load winning on equal cell keys. Delete
 * markers mask what they cover (Delete: one version; DeleteColumn: versions
 * <= ts of a column; DeleteFamily: the family <= ts; DeleteFamilyVersion: one
 * timestamp across the family); cells older than the family's TTL and outside
 * the time range are skipped; each column returns at most min(versions asked,
 * family VERSIONS) of its newest versions. Rows route to regions by key; a
 * scan crosses regions seamlessly. A reversed scan returns rows in descending
 * order (each row's cells in normal order); as in HBase, its start row is the
 * upper (inclusive) bound and its stop row the lower (exclusive) bound.
 *
 * Salted tables (schema salt_buckets = N, store_salt.h) are read in user
 * keys: a Get adds the bucket byte, a scan reads one range per bucket and
 * merges their cells by user key, so rows come in the user's key order
 * (reversed too), limits count merged rows, and the bucket byte never
 * appears in a returned row.
 *
 * A version may carry secondary-index tables (store_index_def.h); the view opens
 * them with the table, so an index read through a view always belongs to the
 * same version as the table.
 *
 * Files, each building only on those before it: store_view.c (open,
 * reference counts, routing), store_view_row.c (row assembly with the
 * semantics above, row buffers), store_view_iter.c (a region's files and a
 * range of the view as one iterator), store_view_scan.c (scans),
 * store_view_read.c (Get and count), store_view_cells.c (the visible cells
 * as one iterator), sharing store_view_int.h. Index scans over a view are
 * store_index.h; index definitions and keys store_index_def.h.
 *
 * Thread-safety: a view is immutable and reference-counted; share it between
 * threads (store_view_ref for each holder) and the last unref closes it. A
 * store_row_buf and a store_scan are single-threaded. Rows returned borrow
 * from the buffer or scan that produced them: valid until its next call.
 */
#ifndef KILN_STORE_VIEW_H
#define KILN_STORE_VIEW_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/base/block_cache.h"
#include "storage/hfile/cell.h"
#include "storage/hfile/iter.h"
#include "storage/store/manifest.h"
#include "storage/store/memstore.h"
#include "storage/store/schema.h"
#include "storage/base/status.h"

typedef struct store_view store_view;
typedef struct store_index_def store_index_def;

/* Open the current version of `table` in data_dir. cache may be NULL (blocks
 * are then read every time) and must outlive the view. KILN_NOT_FOUND if the
 * table does not exist; KILN_CORRUPTION naming the file for a bad manifest or
 * HFile, or one whose size differs from the manifest's. */
kiln_status store_view_open(const char *data_dir, const char *table, block_cache *cache,
                            store_view **out, kiln_err *err);
/* Open version `version` of `table` (0: the current one, as store_view_open),
 * published or not, as long as its manifest and files are kept.
 * KILN_NOT_FOUND naming the table and version when they are not (anymore):
 * no retry, unlike the current version's open. */
kiln_status store_view_open_version(const char *data_dir, const char *table, uint64_t version,
                                    block_cache *cache, store_view **out, kiln_err *err);
void store_view_ref(store_view *v);
/* Drop a reference; the last one closes the files. v may be NULL. */
void store_view_unref(store_view *v);

uint64_t store_view_version(const store_view *v);       /* 0 = nothing published */
const kiln_schema *store_view_schema(const store_view *v);
/* The version's manifest, or NULL for version 0. */
const manifest *store_view_manifest(const store_view *v);
size_t store_view_region_count(const store_view *v);
/* Start (inclusive) and end (exclusive) row of region i; empty = unbounded. */
kslice store_view_region_start(const store_view *v, size_t i);
kslice store_view_region_end(const store_view *v, size_t i);
/* Bytes of the HFiles of region i, and their count. */
uint64_t store_view_region_bytes(const store_view *v, size_t i, size_t *files);
/* Rows that cut region i into pieces of similar size: the rows of evenly
 * spaced data blocks of its largest file (hfile_reader_block_rows), strictly
 * inside the region, increasing, without repeats; at most max. Appended to
 * rows as [be32 length][bytes] (stored keys: a salted table's keep their
 * bucket byte); *n their count. */
kiln_status store_view_region_cut_rows(store_view *v, size_t i, size_t max, kbuf *rows,
                                       size_t *n, kiln_err *err);

/* Block cache use of a version, for warming its successor: the bytes of
 * its files' blocks now cached, and the uncompressed size of its data (the
 * HFile trailers' totals), both over the table and its index tables. */
uint64_t store_view_cached_bytes(const store_view *v);
uint64_t store_view_data_bytes(const store_view *v);
/* Drop v's cached data blocks (hfile_reader_drop_cached), a file at a time,
 * until at least want bytes are freed or none are left, except the blocks of
 * files keep (may be NULL) also reads: a view with memstores shares its
 * base's open files, and a newer one may share an older one's. The bytes
 * freed. */
uint64_t store_view_drop_cached(store_view *v, const store_view *keep, uint64_t want);
/* hfile_reader_prefetch over every file of v and of its index tables, one
 * region after another; stops at the first error. */
kiln_status store_view_prefetch(store_view *v, uint64_t *budget, int (*stop)(void *), void *arg,
                                kiln_err *err);

/* 1 if CURRENT is unchanged since the view was opened (one stat(2)); 0 if it
 * changed (or vanished), so a server reopens and swaps. */
int store_view_is_current(const store_view *v);

/* Secondary indexes of this version, in manifest order. The index table's
 * view (for store_scan over raw index rows) and the definition live as long
 * as v; references taken on the index view hold v. */
size_t store_view_index_count(const store_view *v);
const store_index_def *store_view_index_def(const store_view *v, size_t i);
store_view *store_view_index_view(store_view *v, size_t i);
/* Position of the index called name, or -1. */
int store_view_find_index(const store_view *v, const char *name);

/* ------------------------------------------------------------------ memstores */

/* A read point: the sequence number of the last online write of a table
 * that readers may see (speed.h advances it). Reference counted, so views
 * holding it outlive the speed layer safely. */
typedef struct store_clock {
    atomic_long refs;
    _Atomic uint64_t read_point;
} store_clock;

store_clock *store_clock_new(uint64_t read_point);
void store_clock_ref(store_clock *c);
void store_clock_unref(store_clock *c);   /* c may be NULL */

/* One memstore merged into a view's reads: the cells of one family over
 * every region (each region reads the rows of its own range). */
typedef struct store_view_mem {
    memstore *ms;
    size_t family;            /* index into the view's schema families */
    uint64_t rank;            /* merge order against files (manifest_file_rank) */
    uint64_t base;            /* the version its writes were made over */
} store_view_mem;

/* A view of base's version with memstores merged into every read: the same
 * files (shared, not reopened), the same manifest and indexes, plus the
 * memstores' cells up to the clock's read point, minus those a covering
 * load of the version retired (manifest_covered). Takes references on
 * base, on each memstore and on the clock. The result holds one reference.
 * REQUIRES: base is not itself a view with memstores, nor an index view. */
store_view *store_view_with_memstores(store_view *base, const store_view_mem *mem, size_t n,
                                      store_clock *clock);
/* The newest timestamp of the online writes made over version `base` that
 * a covering load of m retired (INT64_MIN: none; manifest_covered). */
int64_t store_view_retired_ts(const manifest *m, uint64_t base);
/* child without the cells whose timestamp is <= retired (a speed-layer
 * file's retired writes). Owned: closing it closes child. */
kiln_iter *store_view_retire_iter(kiln_iter *child, int owned, int64_t retired);
/* The memstores of a view (0 for a plain one). */
size_t store_view_memstore_count(const store_view *v);
const store_view_mem *store_view_memstore(const store_view *v, size_t i);
/* The view of the files alone (v itself for a plain view). Borrowed. */
store_view *store_view_files(store_view *v);

/* ------------------------------------------------------------------ requests */

/* A column to read: a whole family (qualifier NULL) or one qualifier. */
typedef struct store_column {
    const char *family;
    const uint8_t *qualifier;       /* NULL = every qualifier of the family */
    size_t qualifier_len;
} store_column;

typedef struct store_row_opts {
    const store_column *columns;    /* NULL/0 = every family */
    size_t column_count;
    uint32_t max_versions;          /* 0 or 1 = newest only */
    int64_t ts_min;                 /* time range [ts_min, ts_max); default all */
    int64_t ts_max;
    int64_t now_ms;                 /* clock for TTL; 0 = now */
    /* Online writes with a larger sequence number are not seen (a view
     * with memstores only, store_view_with_memstores); 0 = the view's read
     * point when the read starts. */
    uint64_t read_point;
} store_row_opts;

void store_row_opts_init(store_row_opts *o);

/* One row: cells in HBase order. */
typedef struct store_row {
    kslice row;
    const kiln_cell *cells;
    size_t count;
} store_row;

/* Reusable storage for the rows store_view_get returns, and a per-thread
 * cache for Gets: it keeps one iterator per file of the last view it read
 * (so a Get allocates nothing) and, while it does, a reference on that view,
 * dropped when the buffer is used with another view or freed. */
typedef struct store_row_buf store_row_buf;
store_row_buf *store_row_buf_new(void);
void store_row_buf_free(store_row_buf *b);   /* b may be NULL */

/* Read one row. out->count is 0 if the row has no visible cell. Bloom
 * filters skip files that cannot hold the row (or, for ROWCOL files, none of
 * the qualifiers asked). KILN_INVALID for a column of an unknown family or a
 * row longer than CELL_ROW_MAX (CELL_ROW_MAX - 1 in a salted table);
 * KILN_CORRUPTION / KILN_IO naming the file and offset. */
kiln_status store_view_get(store_view *v, const uint8_t *row, size_t n, const store_row_opts *o,
                           store_row_buf *buf, store_row *out, kiln_err *err);

typedef struct store_scan_opts {
    store_row_opts read;
    const uint8_t *start;           /* inclusive (reversed: upper bound); NULL/0 = unbounded */
    size_t start_len;
    const uint8_t *stop;            /* exclusive (reversed: lower bound); NULL/0 = unbounded */
    size_t stop_len;
    const uint8_t *prefix;          /* only rows starting with it; NULL/0 = any */
    size_t prefix_len;
    uint64_t limit;                 /* rows; 0 = no limit */
    int reversed;
    /* Rows without a visible cell that one store_scan_next may pass over
     * before it returns to its caller (store_scan_yielded), so that a scan
     * of a column no row has does not run to the end of the table in one
     * call. 0 = no bound. */
    uint64_t max_skipped;
    /* A salted table: with one_bucket set, only the rows of bucket `bucket`
     * (start, stop and prefix still user keys); ignored for an unsalted
     * table. So that a job reads a salted table in pieces. */
    int one_bucket;
    uint32_t bucket;
} store_scan_opts;

void store_scan_opts_init(store_scan_opts *o);

typedef struct store_scan store_scan;

/* Start a scan (takes a reference on v). The option pointers are copied. */
kiln_status store_scan_open(store_view *v, const store_scan_opts *o, store_scan **out,
                            kiln_err *err);
/* Next row with a visible cell: *has_row = 0 at the end (or the limit), or
 * when it passed max_skipped rows without one (then store_scan_yielded is
 * 1 and the next call goes on). */
kiln_status store_scan_next(store_scan *s, store_row *out, int *has_row, kiln_err *err);
/* 1 when the last store_scan_next stopped at max_skipped, with *resume the
 * last row it passed over (every row before it, in scan order, is done;
 * valid until the next call). */
int store_scan_yielded(const store_scan *s, kslice *resume);
void store_scan_close(store_scan *s);   /* s may be NULL */

/* The stored cells of v in the rows o selects (start, stop, prefix; reversed
 * says which of start and stop is the upper bound, as for a scan) as one
 * kiln_iter (storage/hfile/iter.h) that moves both ways: every version and
 * delete marker of the families o->read selects (qualifiers, versions and
 * time limits are not applied), in cell order, merged over each region's
 * files (the newest load first on equal keys) and across regions. A salted
 * table's cells keep their bucket byte and come in user key order (the
 * buckets merged with the byte skipped); its seek keys are read past their
 * first row byte. What store_scan assembles rows from. o may be NULL for
 * everything. Takes a reference on v, dropped by kiln_iter_close.
 * KILN_INVALID for a column of an unknown family. */
kiln_status store_view_iter_open(store_view *v, const store_scan_opts *o, kiln_iter **out,
                                 kiln_err *err);

/* The cells a read of v returns, as one kiln_iter (storage/hfile/iter.h)
 * that moves both ways: the visible cells of the rows o selects (start,
 * stop, prefix; reversed says which of start and stop is the upper bound, as
 * for a scan), after versions, delete markers, TTL, the time range and the
 * column selection of o->read -- no delete markers, at most max_versions
 * per column -- in cell order, rows ascending whatever o->reversed says. A
 * salted table's cells have user rows, in user key order as its scans
 * return them, and its seek keys are user keys. limit and max_skipped are
 * not used. The iterator assembles one row at a time (what store_scan
 * returns), so a move across rows reads the whole next row, and a row
 * without a visible cell is passed over. The current cell stays valid until
 * the next move or close. o may be NULL for everything (newest versions).
 * Takes a reference on v, dropped by kiln_iter_close. KILN_INVALID for a
 * column of an unknown family. */
kiln_status store_view_cells_open(store_view *v, const store_scan_opts *o, kiln_iter **out,
                                  kiln_err *err);

/* Rows with at least one visible cell in [start, stop) with the options of o
 * (limit ignored). o may be NULL for the whole table. */
kiln_status store_view_count(store_view *v, const store_scan_opts *o, uint64_t *rows,
                             kiln_err *err);

#endif
