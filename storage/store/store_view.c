/* store_view.c -- opening a published version of a table for reading (CURRENT,
 * manifest, every HFile's trailer, index and bloom; retried when a concurrent
 * load collects the version under us), reference counting, the cheap
 * "has CURRENT changed" check for hot swaps and routing rows to regions. The
 * index tables of the version get views of their own that share the table
 * view's files' lifetime and reference count.
 *
 * The view's other files build on this one, each only on those before it:
 * store_view_row.c (row assembly), store_view_iter.c (a region's files and a
 * row range as iterators), store_view_scan.c (scans), store_view_read.c
 * (Get and count), store_view_cells.c (the visible cells).
 */
#include "storage/store/store_view.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "storage/base/coding.h"
#include "storage/base/env.h"
#include "storage/store/store_salt.h"
#include "storage/store/store_view_int.h"
#include "storage/store/table.h"

/* How many times an open starts over because the version it was opening was
 * collected by a concurrent load (each retry reads the newer CURRENT). */
#define STORE_VIEW_OPEN_RETRIES 32

static void
store_view_close_files(store_view *v)
{
    for (size_t i = 0; i < v->nindexes; i++) {
        store_view_close_files(v->indexes[i]);
        free(v->indexes[i]);
        store_index_def_free(&v->defs[i]);
    }
    free(v->indexes);
    free(v->defs);
    v->indexes = NULL;
    v->defs = NULL;
    v->nindexes = 0;
    for (size_t r = 0; r < v->nregions; r++) {
        for (size_t f = 0; f < v->regions[r].nfiles; f++)
            hfile_reader_close(v->regions[r].files[f].rd);
        free(v->regions[r].files);
    }
    free(v->regions);
    v->regions = NULL;
    v->nregions = 0;
    v->nfiles = 0;
    manifest_free(&v->m);
    schema_free(&v->schema);
}

/* Regions of an empty view: the schema's split keys, no files. */
static void
store_view_empty_regions(store_view *v)
{
    const kiln_schema *s = &v->schema;
    v->nregions = schema_region_count(s);
    v->regions = kiln_calloc(v->nregions, sizeof *v->regions);
    for (size_t i = 0; i < v->nregions; i++) {
        v->regions[i].start =
            i > 0 ? buf_slice(&s->splits[i - 1]) : kslice_make("", 0);
        v->regions[i].end = i < s->split_count ? buf_slice(&s->splits[i]) : kslice_make("", 0);
    }
}

/* Open the files of table mt of the manifest (v->schema is its schema).
 * KILN_NOT_FOUND (with err untouched) if one vanished. */
static kiln_status
store_view_open_table(store_view *v, const manifest_table *mt, const kiln_table *t,
                      block_cache *cache, kiln_err *err)
{
    v->nregions = mt->region_count;
    v->regions = kiln_calloc(v->nregions, sizeof *v->regions);
    for (size_t r = 0; r < mt->region_count; r++) {
        const manifest_region *mr = &mt->regions[r];
        store_region *reg = &v->regions[r];
        reg->start = buf_slice(&mr->start);
        reg->end = buf_slice(&mr->end);
        reg->files = kiln_calloc(mr->file_count ? mr->file_count : 1, sizeof *reg->files);
        for (size_t f = 0; f < mr->file_count; f++) {
            const manifest_file *mf = &mr->files[f];
            char path[PATH_MAX];
            table_file_path(t, mf->name, path, sizeof path);
            kiln_err e2;
            status_clear(&e2);
            hfile_reader *rd;
            kiln_status st = hfile_reader_open(path, cache, &rd, &e2);
            if (st == KILN_NOT_FOUND)
                return KILN_NOT_FOUND;
            if (st != KILN_OK)
                return status_set(err, e2.code, "table %s version %llu: %s", v->schema.name,
                                  (unsigned long long)v->version, e2.msg);
            store_file *sf = &reg->files[reg->nfiles++];
            sf->rd = rd;
            sf->seq = manifest_file_rank(mf);
            sf->retired_ts = (mf->flags & MANIFEST_FILE_SPEED) && v->version > 0
                                 ? store_view_retired_ts(&v->m, mf->seq)
                                 : INT64_MIN;
            sf->index = v->nfiles++;
            const schema_family *fam =
                schema_find_family(&v->schema, (const uint8_t *)mf->family, strlen(mf->family));
            sf->family = (size_t)(fam - v->schema.families);
            if (hfile_reader_file_size(rd) != mf->size)
                return status_set(err, KILN_CORRUPTION,
                                  "%s: size %llu, the manifest of version %llu says %llu", path,
                                  (unsigned long long)hfile_reader_file_size(rd),
                                  (unsigned long long)v->version, (unsigned long long)mf->size);
            reg->bytes += mf->size;
        }
    }
    return KILN_OK;
}

/* Open the table of v->m and its index tables. KILN_NOT_FOUND (with err
 * untouched) if a file vanished. */
static kiln_status
store_view_open_files(store_view *v, const kiln_table *t, block_cache *cache, kiln_err *err)
{
    kiln_status st = store_view_open_table(v, &v->m.tables[0], t, cache, err);
    if (st != KILN_OK || v->m.table_count < 2)
        return st;
    size_t n = v->m.table_count - 1;
    v->indexes = kiln_calloc(n, sizeof *v->indexes);
    v->defs = kiln_calloc(n, sizeof *v->defs);
    for (size_t i = 0; i < n; i++) {
        const manifest_table *mt = &v->m.tables[i + 1];
        store_view *iv = kiln_calloc(1, sizeof *iv);
        v->indexes[i] = iv;
        v->nindexes++;
        iv->owner = v;
        iv->version = v->version;
        schema_copy(&iv->schema, &mt->schema);
        kiln_err e2;
        status_clear(&e2);
        if (store_index_def_from_schema(&v->schema, &iv->schema, &v->defs[i], &e2) != KILN_OK)
            return status_set(err, KILN_CORRUPTION, "table %s version %llu: %s", v->schema.name,
                              (unsigned long long)v->version, e2.msg);
        st = store_view_open_table(iv, mt, t, cache, err);
        if (st != KILN_OK)
            return st;
    }
    return KILN_OK;
}

kiln_status
store_view_open(const char *data_dir, const char *table, block_cache *cache, store_view **out,
                kiln_err *err)
{
    return store_view_open_version(data_dir, table, 0, cache, out, err);
}

kiln_status
store_view_open_version(const char *data_dir, const char *table, uint64_t version,
                        block_cache *cache, store_view **out, kiln_err *err)
{
    *out = NULL;
    kiln_table *t;
    kiln_status st = table_open(data_dir, table, &t, err);
    if (st != KILN_OK)
        return st;
    store_view *v = kiln_calloc(1, sizeof *v);
    atomic_init(&v->refs, 1);
    if ((size_t)snprintf(v->current_path, sizeof v->current_path, "%s/%s", table_dir(t),
                         TABLE_CURRENT_FILE) >= sizeof v->current_path) {
        st = status_set(err, KILN_INVALID, "%s: path too long", table_dir(t));
        table_close(t);
        free(v);
        return st;
    }
    st = KILN_BUSY;
    for (int attempt = 0; attempt < STORE_VIEW_OPEN_RETRIES && st == KILN_BUSY; attempt++) {
        store_view_close_files(v);
        kiln_err e2;
        status_clear(&e2);
        kiln_status sst = env_stat(v->current_path, &v->current_st, &e2);
        if (sst != KILN_OK) {
            if (sst != KILN_NOT_FOUND) {
                st = status_set(err, sst, "%s", e2.msg);
                break;
            }
            /* nothing published: an empty view with the schema's regions */
            v->have_current = 0;
            v->version = 0;
            schema_copy(&v->schema, table_schema(t));
            store_view_empty_regions(v);
            st = KILN_OK;
            break;
        }
        v->have_current = 1;
        status_clear(&e2);
        if (version != 0) {
            /* one version asked for: no retry, it is there or it is not */
            st = table_read_manifest(t, version, &v->m, NULL, &e2);
            if (st == KILN_OK) {
                v->version = v->m.version;
                schema_copy(&v->schema, &v->m.tables[0].schema);
                st = store_view_open_files(v, t, cache, &e2);
            }
            if (st == KILN_NOT_FOUND)
                status_set(err, KILN_NOT_FOUND, "table %s: version %llu is not kept (`kiln "
                           "views %s` lists the versions there are)", table_name(t),
                           (unsigned long long)version, table_name(t));
            else if (st != KILN_OK)
                status_set(err, st, "%s", e2.msg);
            break;
        }
        st = table_read_current(t, &v->m, &e2);
        if (st == KILN_NOT_FOUND) {
            st = KILN_BUSY;   /* CURRENT or its manifest replaced meanwhile: again */
            continue;
        }
        if (st != KILN_OK) {
            status_set(err, e2.code, "%s", e2.msg);
            break;
        }
        v->version = v->m.version;
        schema_copy(&v->schema, &v->m.tables[0].schema);
        st = store_view_open_files(v, t, cache, err);
        if (st == KILN_NOT_FOUND)
            st = KILN_BUSY;   /* a file of this version was collected: again */
    }
    if (st == KILN_BUSY)
        status_set(err, KILN_BUSY,
                   "table %s: new versions kept replacing the one being opened; try again",
                   table_name(t));
    table_close(t);
    if (st != KILN_OK) {
        store_view_close_files(v);
        free(v);
        return st;
    }
    *out = v;
    return KILN_OK;
}

void
store_view_ref(store_view *v)
{
    if (v->owner != NULL)
        v = v->owner;
    atomic_fetch_add(&v->refs, 1);
}

void
store_view_unref(store_view *v)
{
    if (v == NULL)
        return;
    if (v->owner != NULL)
        v = v->owner;
    if (atomic_fetch_sub(&v->refs, 1) != 1)
        return;
    if (v->files_view != NULL) {
        for (size_t i = 0; i < v->nmem; i++)
            memstore_unref(v->mem[i].ms);
        free(v->mem);
        free(v->mem_retired_ts);
        store_clock_unref(v->clock);
        store_view_unref(v->files_view);
        free(v);
        return;
    }
    store_view_close_files(v);
    free(v);
}

/* ------------------------------------------------------------------ memstores */

store_clock *
store_clock_new(uint64_t read_point)
{
    store_clock *c = kiln_calloc(1, sizeof *c);
    atomic_init(&c->refs, 1);
    atomic_init(&c->read_point, read_point);
    return c;
}

void
store_clock_ref(store_clock *c)
{
    atomic_fetch_add(&c->refs, 1);
}

void
store_clock_unref(store_clock *c)
{
    if (c != NULL && atomic_fetch_sub(&c->refs, 1) == 1)
        free(c);
}

int64_t
store_view_retired_ts(const manifest *m, uint64_t base)
{
    int64_t ts = INT64_MIN;
    for (size_t i = 0; i < m->cover_count; i++) {
        if (base < m->covers[i].version && m->covers[i].ts > ts)
            ts = m->covers[i].ts;
    }
    return ts;
}

store_view *
store_view_with_memstores(store_view *base, const store_view_mem *mem, size_t n,
                          store_clock *clock)
{
    store_view *v = kiln_malloc(sizeof *v);
    *v = *base;
    atomic_init(&v->refs, 1);
    store_view_ref(base);
    v->files_view = base;
    v->nmem = n;
    v->mem = kiln_calloc(n ? n : 1, sizeof *v->mem);
    v->mem_retired_ts = kiln_calloc(n ? n : 1, sizeof *v->mem_retired_ts);
    for (size_t i = 0; i < n; i++) {
        v->mem[i] = mem[i];
        memstore_ref(mem[i].ms);
        v->mem_retired_ts[i] =
            base->version ? store_view_retired_ts(&base->m, mem[i].base) : INT64_MIN;
    }
    store_clock_ref(clock);
    v->clock = clock;
    return v;
}

size_t
store_view_memstore_count(const store_view *v)
{
    return v->nmem;
}

const store_view_mem *
store_view_memstore(const store_view *v, size_t i)
{
    return &v->mem[i];
}

store_view *
store_view_files(store_view *v)
{
    return v->files_view != NULL ? v->files_view : v;
}

uint64_t
store_view_read_point(const store_view *v, const store_row_opts *o)
{
    if (o != NULL && o->read_point != 0)
        return o->read_point;
    return v->clock != NULL ? atomic_load_explicit(&v->clock->read_point, memory_order_acquire)
                            : UINT64_MAX;
}

uint64_t
store_view_version(const store_view *v)
{
    return v->version;
}

const kiln_schema *
store_view_schema(const store_view *v)
{
    return &v->schema;
}

const manifest *
store_view_manifest(const store_view *v)
{
    if (v->owner != NULL)
        v = v->owner;
    return v->version ? &v->m : NULL;
}

size_t
store_view_index_count(const store_view *v)
{
    return v->nindexes;
}

const store_index_def *
store_view_index_def(const store_view *v, size_t i)
{
    return &v->defs[i];
}

store_view *
store_view_index_view(store_view *v, size_t i)
{
    return v->indexes[i];
}

int
store_view_find_index(const store_view *v, const char *name)
{
    for (size_t i = 0; i < v->nindexes; i++) {
        if (strcmp(v->defs[i].name, name) == 0)
            return (int)i;
    }
    return -1;
}

size_t
store_view_region_count(const store_view *v)
{
    return v->nregions;
}

kslice
store_view_region_start(const store_view *v, size_t i)
{
    return v->regions[i].start;
}

kslice
store_view_region_end(const store_view *v, size_t i)
{
    return v->regions[i].end;
}

uint64_t
store_view_region_bytes(const store_view *v, size_t i, size_t *files)
{
    if (files)
        *files = v->regions[i].nfiles;
    return v->regions[i].bytes;
}

/* qsort order of [be32 length][bytes] records by their bytes. */
static int
store_view_cmp_rows(const void *a, const void *b)
{
    const kslice *x = a, *y = b;
    return kslice_cmp(*x, *y);
}

kiln_status
store_view_region_cut_rows(store_view *v, size_t i, size_t max, kbuf *rows, size_t *n,
                           kiln_err *err)
{
    *n = 0;
    const store_region *r = &v->regions[i];
    const store_file *big = NULL;
    for (size_t k = 0; k < r->nfiles; k++)
        if (big == NULL || hfile_reader_file_size(r->files[k].rd) > hfile_reader_file_size(big->rd))
            big = &r->files[k];
    if (big == NULL || max == 0)
        return KILN_OK;
    kbuf raw = KBUF_INIT;
    size_t got = 0;
    kiln_status s = hfile_reader_block_rows(big->rd, max, &raw, &got, err);
    kslice *cut = kiln_calloc(got ? got : 1, sizeof *cut);
    size_t k = 0;
    for (size_t j = 0, off = 0; s == KILN_OK && j < got; j++) {
        uint32_t len = coding_get_be32(raw.data + off);
        kslice row = kslice_make(raw.data + off + 4, len);
        off += 4 + len;
        if (kslice_cmp(row, r->start) <= 0 || (r->end.n > 0 && kslice_cmp(row, r->end) >= 0))
            continue;
        cut[k++] = row;
    }
    qsort(cut, k, sizeof *cut, store_view_cmp_rows);
    for (size_t j = 0; j < k; j++) {
        if (j > 0 && kslice_cmp(cut[j], cut[j - 1]) == 0)
            continue;
        buf_append_be32(rows, (uint32_t)cut[j].n);
        buf_append(rows, cut[j].p, cut[j].n);
        (*n)++;
    }
    free(cut);
    buf_free(&raw);
    return s;
}

uint64_t
store_view_cached_bytes(const store_view *v)
{
    uint64_t n = 0;
    for (size_t r = 0; r < v->nregions; r++)
        for (size_t f = 0; f < v->regions[r].nfiles; f++)
            n += hfile_reader_cached_bytes(v->regions[r].files[f].rd);
    for (size_t i = 0; i < v->nindexes; i++)
        n += store_view_cached_bytes(v->indexes[i]);
    return n;
}

uint64_t
store_view_data_bytes(const store_view *v)
{
    uint64_t n = 0;
    for (size_t r = 0; r < v->nregions; r++)
        for (size_t f = 0; f < v->regions[r].nfiles; f++)
            n += hfile_reader_trailer(v->regions[r].files[f].rd)->total_uncompressed_bytes;
    for (size_t i = 0; i < v->nindexes; i++)
        n += store_view_data_bytes(v->indexes[i]);
    return n;
}

/* 1 if rd is one of v's open files (or of its index tables'). */
static int
store_view_holds_reader(const store_view *v, const hfile_reader *rd)
{
    for (size_t r = 0; r < v->nregions; r++)
        for (size_t f = 0; f < v->regions[r].nfiles; f++)
            if (v->regions[r].files[f].rd == rd)
                return 1;
    for (size_t i = 0; i < v->nindexes; i++)
        if (store_view_holds_reader(v->indexes[i], rd))
            return 1;
    return 0;
}

/* store_view_drop_cached over v's files and then its index tables', with
 * the bytes still wanted; the bytes freed. */
static uint64_t
drop_cached(store_view *v, const store_view *keep, uint64_t want)
{
    uint64_t n = 0;
    for (size_t r = 0; r < v->nregions; r++) {
        for (size_t f = 0; f < v->regions[r].nfiles && n < want; f++) {
            hfile_reader *rd = v->regions[r].files[f].rd;
            if (keep == NULL || !store_view_holds_reader(keep, rd))
                n += hfile_reader_drop_cached(rd);
        }
    }
    for (size_t i = 0; i < v->nindexes && n < want; i++)
        n += drop_cached(v->indexes[i], keep, want - n);
    return n;
}

uint64_t
store_view_drop_cached(store_view *v, const store_view *keep, uint64_t want)
{
    return drop_cached(v, keep, want);
}

kiln_status
store_view_prefetch(store_view *v, uint64_t *budget, int (*stop)(void *), void *arg,
                    kiln_err *err)
{
    for (size_t r = 0; r < v->nregions; r++) {
        for (size_t f = 0; f < v->regions[r].nfiles; f++) {
            if (*budget == 0 || (stop != NULL && stop(arg)))
                return KILN_OK;
            kiln_status s = hfile_reader_prefetch(v->regions[r].files[f].rd, budget, stop, arg, err);
            if (s != KILN_OK)
                return s;
        }
    }
    for (size_t i = 0; i < v->nindexes; i++) {
        kiln_status s = store_view_prefetch(v->indexes[i], budget, stop, arg, err);
        if (s != KILN_OK)
            return s;
    }
    return KILN_OK;
}

int
store_view_is_current(const store_view *v)
{
    if (v->owner != NULL)
        v = v->owner;
    env_stat_info st;
    kiln_status sst = env_stat(v->current_path, &st, NULL);
    if (sst != KILN_OK)
        return !v->have_current && sst == KILN_NOT_FOUND;
    if (!v->have_current)
        return 0;
    /* A swap renames a new inode over CURRENT; the timestamps guard against
     * the inode number being reused. */
    return st.ino == v->current_st.ino && st.dev == v->current_st.dev &&
           st.size == v->current_st.size && st.mtime_ns == v->current_st.mtime_ns &&
           st.ctime_ns == v->current_st.ctime_ns;
}

size_t
store_view_region_of(const store_view *v, const uint8_t *row, size_t n)
{
    size_t lo = 0, hi = v->nregions;
    kslice key = kslice_make(row, n);
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (kslice_cmp(v->regions[mid].start, key) <= 0)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}
