/* store_view_int.h -- the inside of an open view, shared by the files that
 * implement store_view.h, each building only on those before it:
 * store_view.c, store_view_row.c, store_view_iter.c, store_view_scan.c,
 * store_view_read.c and store_view_cells.c (private to storage/store/).
 */
#ifndef KILN_STORE_VIEW_INT_H
#define KILN_STORE_VIEW_INT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/base/env.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/hfile/iter.h"
#include "storage/hfile/iter_merge.h"
#include "storage/store/manifest.h"
#include "storage/store/schema.h"
#include "storage/store/store_index_def.h"
#include "storage/store/store_view.h"

typedef struct store_file {
    hfile_reader *rd;
    uint64_t seq;             /* load sequence: larger wins on equal keys */
    size_t family;            /* index into the schema's families */
    size_t index;             /* 0..nfiles-1 over the whole view (iterator caches) */
    int64_t retired_ts;       /* a speed-layer file: cells with ts <= it retired by a
                                 covering load (manifest_covered); else INT64_MIN */
} store_file;

typedef struct store_region {
    kslice start, end;        /* borrowed from the manifest (or schema) */
    store_file *files;        /* sorted by family, then seq descending */
    size_t nfiles;
    uint64_t bytes;
} store_region;

struct store_view {
    atomic_long refs;         /* an index table's view counts on its owner's */
    uint64_t version;
    kiln_schema schema;
    manifest m;               /* version > 0; unused in an index table's view */
    store_view *owner;        /* an index table's view: the table's view; else NULL */
    store_view **indexes;     /* the version's index tables (manifest tables[1..]) */
    store_index_def *defs;    /* their definitions */
    size_t nindexes;
    store_region *regions;
    size_t nregions;
    size_t nfiles;            /* over all regions */
    char current_path[4096];
    int have_current;
    env_stat_info current_st;   /* CURRENT as it was before the view read it */
    /* A view with memstores (store_view_with_memstores): everything above
     * is a shallow copy of files_view's, which it holds a reference on. */
    store_view *files_view;
    store_view_mem *mem;
    size_t nmem;
    int64_t *mem_retired_ts;  /* per memstore: cells with ts <= it are retired (covers) */
    store_clock *clock;
};

/* Which families and qualifiers a request reads, and its version, time and
 * TTL limits. */
typedef struct store_sel {
    uint8_t *family_on;       /* per schema family; NULL = every family */
    kslice **quals;           /* per family: qualifiers asked, NULL = all */
    size_t *nquals;
    size_t nfamilies;
    uint32_t max_versions;
    int64_t ts_min, ts_max;
    int64_t now_ms;
    uint64_t read_point;      /* online writes above it are not seen */
} store_sel;

kiln_status store_row_sel_init(const kiln_schema *s, const store_row_opts *o, store_sel *sel,
                               kiln_err *err);
void store_row_sel_free(store_sel *sel);

static inline int
store_row_sel_family(const store_sel *sel, size_t fam)
{
    return sel->family_on == NULL || sel->family_on[fam];
}

/* Consume from it every cell of the row it is positioned at (its current
 * cell's row), applying deletes, TTL, time range, column selection and
 * versions, and collect the visible cells into buf; *out borrows from buf
 * (count 0 when nothing is visible). it is left on the first cell of the next
 * row (or invalid). In a salted table (schema salt_buckets > 0) the rows
 * returned lose their first byte. An error of it is returned with its message.
 * REQUIRES: it valid and on the row's first cell. */
kiln_status store_row_assemble(kiln_iter *it, const kiln_schema *s, const store_sel *sel,
                               store_row_buf *buf, store_row *out, kiln_err *err);

/* Add to m an iterator over each selected file of region r (for a Get of
 * `row` when row != NULL: only files whose blooms may hold it), owned by m,
 * with the file's load sequence. */
kiln_status store_view_fill_merge(const store_view *v, size_t r, const store_sel *sel,
                                  const uint8_t *row, size_t row_len, iter_merge *m,
                                  kiln_err *err);
/* The same, with buf: buf's cached iterators of those files are lent to m
 * instead (a Get's, store_view_read.c). */
kiln_status store_view_fill(const store_view *v, size_t r, const store_sel *sel,
                            const uint8_t *row, size_t row_len, store_row_buf *buf,
                            iter_merge *m, kiln_err *err);

/* A row buffer's per-view state for Gets: a merge reused from Get to Get and
 * one iterator per file of the view, created on first use. The buffer holds
 * a reference on the view while it caches its iterators. */
iter_merge *store_row_buf_merge(store_row_buf *b, store_view *v);
kiln_iter *store_row_buf_iter(store_row_buf *b, const store_file *sf);
/* Scratch for a Get's stored (salted) key. */
kbuf *store_row_buf_key(store_row_buf *b);

/* The read point a read of v with options o uses (store_row_opts). */
uint64_t store_view_read_point(const store_view *v, const store_row_opts *o);
/* Region holding row. */
size_t store_view_region_of(const store_view *v, const uint8_t *row, size_t n);

#endif
