/* store_split.c -- splitting one region of a table at its middle row: the
 * split key from the largest file's middle cell, one pass over each
 * straddling file writing its two halves, and the next version's manifest
 * (a copy of the current one with the region replaced by its halves),
 * published with table_publish. The contract and the crash behaviour are in
 * store_split.h.
 */
#include "storage/store/store_split.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/base/coding.h"
#include "storage/base/env.h"
#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_format.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/hfile/hfile_writer.h"

void
store_split_result_init(store_split_result *r)
{
    memset(r, 0, sizeof *r);
    buf_init(&r->split_key);
}

void
store_split_result_free(store_split_result *r)
{
    if (r == NULL)
        return;
    buf_free(&r->split_key);
}

/* ------------------------------------------------------------------ candidates */

static kiln_status
split_parse_bytes(const kiln_schema *s, uint64_t *out, kiln_err *err)
{
    *out = 0;
    const char *v = schema_get_prop(s, STORE_SPLIT_PROP_MAX_BYTES);
    if (v == NULL)
        return KILN_OK;
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end != '\0' || errno != 0)
        return status_set(err, KILN_INVALID, "table %s: property %s='%s' is not a byte count",
                          s->name, STORE_SPLIT_PROP_MAX_BYTES, v);
    *out = n;
    return KILN_OK;
}

kiln_status
store_split_candidates(kiln_table *t, uint64_t max_bytes, size_t **regions, size_t *n,
                       kiln_err *err)
{
    *regions = NULL;
    *n = 0;
    manifest cur;
    kiln_err e2;
    status_clear(&e2);
    kiln_status st = table_read_current(t, &cur, &e2);
    if (st == KILN_NOT_FOUND)
        return KILN_OK;
    if (st != KILN_OK)
        return status_set(err, e2.code, "%s", e2.msg);
    const manifest_table *mt = &cur.tables[0];
    if (max_bytes == 0)
        st = split_parse_bytes(&mt->schema, &max_bytes, err);
    if (st == KILN_OK && max_bytes > 0) {
        for (size_t i = 0; i < mt->region_count; i++) {
            uint64_t bytes = 0;
            for (size_t f = 0; f < mt->regions[i].file_count; f++)
                bytes += mt->regions[i].files[f].size;
            if (bytes <= max_bytes)
                continue;
            *regions = kiln_realloc(*regions, (*n + 1) * sizeof **regions);
            (*regions)[(*n)++] = i;
        }
    }
    manifest_free(&cur);
    return st;
}

/* ------------------------------------------------------------------ the region's files */

typedef struct split_file {
    const manifest_file *mf;
    hfile_reader *rd;
    kiln_cell first, last;   /* key fields only; borrow from rd */
    int empty;
} split_file;

typedef struct split_files {
    split_file *f;
    size_t n;
} split_files;

static void
split_files_close(split_files *sf)
{
    for (size_t i = 0; i < sf->n; i++)
        hfile_reader_close(sf->f[i].rd);
    free(sf->f);
    sf->f = NULL;
    sf->n = 0;
}

static kiln_status
split_files_open(kiln_table *t, const manifest_region *reg, block_cache *cache, split_files *sf,
                 kiln_err *err)
{
    sf->f = kiln_calloc(reg->file_count ? reg->file_count : 1, sizeof *sf->f);
    sf->n = 0;
    kiln_status st = KILN_OK;
    for (size_t i = 0; i < reg->file_count && st == KILN_OK; i++) {
        split_file *f = &sf->f[sf->n];
        char p[PATH_MAX];
        f->mf = &reg->files[i];
        table_file_path(t, f->mf->name, p, sizeof p);
        if ((st = hfile_reader_open(p, cache, &f->rd, err)) != KILN_OK)
            break;
        sf->n++;
        kslice fk = hfile_reader_first_key(f->rd), lk = hfile_reader_last_key(f->rd);
        f->empty = hfile_reader_entry_count(f->rd) == 0 || fk.n == 0 || lk.n == 0;
        if (f->empty)
            continue;
        if (cell_key_decode(fk.p, fk.n, &f->first, NULL) != KILN_OK ||
            cell_key_decode(lk.p, lk.n, &f->last, NULL) != KILN_OK)
            st = status_set(err, KILN_CORRUPTION, "%s: bad first or last key", p);
    }
    if (st != KILN_OK)
        split_files_close(sf);
    return st;
}

static kslice
split_row(const kiln_cell *c)
{
    return kslice_make(c->row, c->row_len);
}

/* The smallest row above `row` among the files' cells into key; 0 if none. */
static kiln_status
split_next_row(split_files *sf, kslice row, kbuf *key, int *found, kiln_err *err)
{
    *found = 0;
    /* first-on-row of row + 0x00, the smallest row sorting after it */
    kbuf probe = KBUF_INIT;
    buf_append(&probe, row.p, row.n);
    buf_append_u8(&probe, 0x00);
    kiln_cell seek;
    cell_first_on_row(&seek, probe.data, (uint32_t)probe.len);
    kiln_status st = KILN_OK;
    for (size_t i = 0; i < sf->n && st == KILN_OK; i++) {
        if (sf->f[i].empty || kslice_cmp(split_row(&sf->f[i].last), row) <= 0)
            continue;
        hfile_iter *it = hfile_iter_new(sf->f[i].rd);
        st = hfile_iter_seek(it, &seek, err);
        if (st == KILN_OK && hfile_iter_valid(it)) {
            kslice r = split_row(hfile_iter_cell(it));
            if (!*found || kslice_cmp(r, buf_slice(key)) < 0) {
                buf_reset(key);
                buf_append(key, r.p, r.n);
                *found = 1;
            }
        }
        hfile_iter_free(it);
    }
    buf_free(&probe);
    return st;
}

/* HBase's split point: the row of the middle cell of the largest file; the
 * next row up when that is the region's first row (the lower half would be
 * empty). */
static kiln_status
split_pick(const kiln_table *t, size_t r, split_files *sf, kbuf *key, kiln_err *err)
{
    buf_reset(key);
    const split_file *largest = NULL;
    kslice lo = {NULL, 0}, hi = {NULL, 0};
    for (size_t i = 0; i < sf->n; i++) {
        const split_file *f = &sf->f[i];
        if (f->empty)
            continue;
        if (largest == NULL || kslice_cmp(split_row(&f->first), lo) < 0)
            lo = split_row(&f->first);
        if (largest == NULL || kslice_cmp(split_row(&f->last), hi) > 0)
            hi = split_row(&f->last);
        if (largest == NULL || f->mf->size > largest->mf->size)
            largest = f;
    }
    if (largest == NULL || kslice_eq(lo, hi))
        return status_set(err, KILN_INVALID,
                          "table %s region %zu: region too small to split (%s)",
                          table_name(t), r, largest == NULL ? "no cells" : "every cell in one row");
    hfile_iter *it = hfile_iter_new(largest->rd);
    kiln_status st = hfile_iter_seek_first(it, err);
    uint64_t mid = hfile_reader_entry_count(largest->rd) / 2;
    for (uint64_t i = 0; i < mid && st == KILN_OK && hfile_iter_valid(it); i++)
        st = hfile_iter_next(it, err);
    if (st == KILN_OK && !hfile_iter_valid(it))
        st = status_set(err, KILN_CORRUPTION, "%s: fewer cells than the trailer's %llu",
                        hfile_reader_path(largest->rd),
                        (unsigned long long)hfile_reader_entry_count(largest->rd));
    if (st == KILN_OK) {
        kslice row = split_row(hfile_iter_cell(it));
        buf_append(key, row.p, row.n);
    }
    hfile_iter_free(it);
    if (st != KILN_OK)
        return st;
    if (kslice_eq(buf_slice(key), lo)) {
        int found;
        if ((st = split_next_row(sf, lo, key, &found, err)) != KILN_OK)
            return st;
        if (!found)
            return status_set(err, KILN_INTERNAL,
                              "table %s region %zu: no row above the first one", table_name(t),
                              r);
    }
    return KILN_OK;
}

static kiln_status
split_read_region(kiln_table *t, size_t r, manifest *cur, kiln_err *err)
{
    kiln_err e2;
    status_clear(&e2);
    kiln_status st = table_read_current(t, cur, &e2);
    if (st != KILN_OK)
        return status_set(err, e2.code, "%s", e2.msg);
    if (r >= cur->tables[0].region_count) {
        st = status_set(err, KILN_INVALID, "table %s: no region %zu (version %llu has %zu)",
                        table_name(t), r, (unsigned long long)cur->version,
                        cur->tables[0].region_count);
        manifest_free(cur);
    }
    return st;
}

kiln_status
store_split_key(kiln_table *t, size_t r, block_cache *cache, kbuf *key, kiln_err *err)
{
    buf_reset(key);
    manifest cur;
    kiln_status st = split_read_region(t, r, &cur, err);
    if (st != KILN_OK)
        return st;
    split_files sf;
    st = split_files_open(t, &cur.tables[0].regions[r], cache, &sf, err);
    if (st == KILN_OK) {
        st = split_pick(t, r, &sf, key, err);
        split_files_close(&sf);
    }
    manifest_free(&cur);
    return st;
}

/* ------------------------------------------------------------------ writing halves */

/* FileInfo keys a writer computes for its own cells, never inherited. */
static int
split_own_key(kslice k)
{
    static const char *own[] = {HFILE_FI_DATA_BLOCK_ENCODING, HFILE_FI_KEY_VALUE_VERSION,
                                HFILE_FI_MAX_MEMSTORE_TS, HFILE_FI_BLOOM_FILTER_TYPE,
                                HFILE_FI_LAST_BLOOM_KEY, HFILE_FI_DELETE_FAMILY_COUNT,
                                HFILE_FI_TIMERANGE, HFILE_FI_EARLIEST_PUT_TS};
    if (k.n >= 6 && memcmp(k.p, "hfile.", 6) == 0)
        return 1;
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        if (kslice_eq(k, kslice_str(own[i])))
            return 1;
    }
    return 0;
}

static kiln_status
split_open_writer(kiln_table *t, const schema_family *fam, hfile_reader *rd, const char *name,
                  hfile_writer **w, kiln_err *err)
{
    const hfile_fileinfo *fi = hfile_reader_fileinfo(rd);
    hfile_writer_options o;
    hfile_writer_options_init(&o);
    o.codec = fam->codec;
    o.block_size = fam->block_size;
    o.bloom = fam->bloom;
    o.sync = 1;
    o.bulkload_info = 0;   /* inherited from the original below, if it had them */
    int64_t created;
    if (hfile_fileinfo_get_i64(fi, HFILE_FI_CREATE_TIME, &created) && created > 0)
        o.create_time_ms = created;
    char p[PATH_MAX];
    table_file_path(t, name, p, sizeof p);
    kiln_status st = hfile_writer_open(p, &o, w, err);
    for (size_t i = 0; i < fi->count && st == KILN_OK; i++) {
        const hfile_fileinfo_entry *e = &fi->entries[i];
        char key[256];
        if (split_own_key(e->key) || e->key.n >= sizeof key || memchr(e->key.p, 0, e->key.n))
            continue;
        memcpy(key, e->key.p, e->key.n);
        key[e->key.n] = '\0';
        st = hfile_writer_append_fileinfo(*w, key, e->value.p, e->value.n, err);
    }
    if (st != KILN_OK && *w != NULL) {
        hfile_writer_abandon(*w);
        *w = NULL;
    }
    return st;
}

/* Rewrite f as two files, rows below key and rows at or above it, named for
 * `version`; their manifest entries into out[0] and out[1]. */
static kiln_status
split_write_file(kiln_table *t, const kiln_schema *s, const split_file *f, kslice key,
                 uint64_t version, uint32_t *seq, manifest_file out[2], store_split_result *res,
                 kiln_err *err)
{
    const manifest_file *mf = f->mf;
    const schema_family *fam = schema_find_family(s, (const uint8_t *)mf->family,
                                                  strlen(mf->family));
    if (fam == NULL)
        return status_set(err, KILN_CORRUPTION, "table %s: file %s of unknown family %s",
                          s->name, mf->name, mf->family);
    hfile_writer *w[2] = {NULL, NULL};
    kiln_status st = KILN_OK;
    for (int h = 0; h < 2 && st == KILN_OK; h++) {
        out[h] = *mf;
        table_file_name(version, (*seq)++, out[h].name);
        st = split_open_writer(t, fam, f->rd, out[h].name, &w[h], err);
    }
    hfile_iter *it = hfile_iter_new(f->rd);
    if (st == KILN_OK)
        st = hfile_iter_seek_first(it, err);
    while (st == KILN_OK && hfile_iter_valid(it)) {
        const kiln_cell *c = hfile_iter_cell(it);
        int h = kslice_cmp(split_row(c), key) >= 0;
        if ((st = hfile_writer_add(w[h], c, err)) == KILN_OK)
            st = hfile_iter_next(it, err);
    }
    hfile_iter_free(it);
    for (int h = 0; h < 2; h++) {
        if (w[h] == NULL)
            continue;
        if (st != KILN_OK) {
            hfile_writer_abandon(w[h]);
            continue;
        }
        hfile_writer_stats ws;
        st = hfile_writer_finish(w[h], &ws, err);
        if (st == KILN_OK) {
            out[h].size = ws.file_size;
            out[h].entries = ws.entries;
            res->files_written++;
            res->bytes_written += ws.file_size;
            res->cells_written += ws.entries;
        }
    }
    if (st == KILN_OK && out[0].entries + out[1].entries != hfile_reader_entry_count(f->rd))
        st = status_set(err, KILN_CORRUPTION, "%s: %llu cells read, the trailer says %llu",
                        hfile_reader_path(f->rd),
                        (unsigned long long)(out[0].entries + out[1].entries),
                        (unsigned long long)hfile_reader_entry_count(f->rd));
    return st;
}

/* ------------------------------------------------------------------ the new version */

static void
split_region_free(manifest_region *r)
{
    buf_free(&r->start);
    buf_free(&r->end);
    free(r->files);
    memset(r, 0, sizeof *r);
}

/* Give the schema of m's table the split key and replace region r by the
 * two halves (taking them over). */
static kiln_status
split_install(manifest *m, size_t r, kslice key, manifest_region halves[2], kiln_err *err)
{
    manifest_table *mt = &m->tables[0];
    kiln_status st = schema_add_split(&mt->schema, key.p, key.n, err);
    if (st == KILN_OK)
        st = schema_validate(&mt->schema, err);   /* sorts: the key lands at index r */
    if (st != KILN_OK)
        return st;
    if (r >= mt->schema.split_count || !kslice_eq(buf_slice(&mt->schema.splits[r]), key))
        return status_set(err, KILN_INTERNAL, "table %s: split key out of region %zu",
                          mt->schema.name, r);
    manifest_region *regs = kiln_calloc(mt->region_count + 1, sizeof *regs);
    memcpy(regs, mt->regions, r * sizeof *regs);
    regs[r] = halves[0];
    regs[r + 1] = halves[1];
    memcpy(regs + r + 2, mt->regions + r + 1, (mt->region_count - r - 1) * sizeof *regs);
    split_region_free(&mt->regions[r]);
    free(mt->regions);
    mt->regions = regs;
    mt->region_count++;
    memset(halves, 0, 2 * sizeof *halves);
    return KILN_OK;
}

/* The schema file with the split keys of s (the current version's). */
static kiln_status
split_sync_schema(kiln_table *t, const kiln_schema *s, kiln_err *err)
{
    const kiln_schema *file = table_schema(t);
    int same = file->split_count == s->split_count;
    for (size_t i = 0; same && i < s->split_count; i++)
        same = kslice_eq(buf_slice(&file->splits[i]), buf_slice(&s->splits[i]));
    if (same)
        return KILN_OK;
    kiln_schema c;
    schema_copy(&c, file);
    for (size_t i = 0; i < c.split_count; i++)
        buf_free(&c.splits[i]);
    free(c.splits);
    c.splits = NULL;
    c.split_count = 0;
    kiln_status st = KILN_OK;
    for (size_t i = 0; i < s->split_count && st == KILN_OK; i++)
        st = schema_add_split(&c, s->splits[i].data, s->splits[i].len, err);
    if (st == KILN_OK)
        st = table_write_schema(t, &c, err);
    schema_free(&c);
    return st;
}

/* Write the halves of region r's files into halves[0..1] (files wholly on
 * one side are carried over by name). */
static kiln_status
split_write_halves(kiln_table *t, const manifest_table *mt, split_files *sf, kslice key,
                   uint64_t version, manifest_region halves[2], store_split_result *res,
                   kiln_err *err)
{
    uint32_t seq = 0;
    kiln_status st = KILN_OK;
    for (size_t i = 0; i < sf->n && st == KILN_OK; i++) {
        const split_file *f = &sf->f[i];
        if (f->empty || kslice_cmp(split_row(&f->last), key) < 0) {
            manifest_region_add_file(&halves[0], f->mf);
            res->files_moved++;
        } else if (kslice_cmp(split_row(&f->first), key) >= 0) {
            manifest_region_add_file(&halves[1], f->mf);
            res->files_moved++;
        } else {
            manifest_file out[2];
            st = split_write_file(t, &mt->schema, f, key, version, &seq, out, res, err);
            if (st == KILN_OK) {
                manifest_region_add_file(&halves[0], &out[0]);
                manifest_region_add_file(&halves[1], &out[1]);
                table_step(t, "split file %zu written", i);
            }
        }
    }
    char dir[PATH_MAX];
    if (st == KILN_OK && res->files_written > 0) {
        if ((size_t)snprintf(dir, sizeof dir, "%s/%s", table_dir(t), TABLE_FILES_DIR) >=
            sizeof dir)
            st = status_set(err, KILN_INVALID, "%s: path too long", table_dir(t));
        else if ((st = env_sync_dir(dir, err)) == KILN_OK)
            table_step(t, "split files synced");
    }
    return st;
}

kiln_status
store_split_region(kiln_table *t, size_t r, block_cache *cache, store_split_result *out,
                   kiln_err *err)
{
    if (!table_locked(t))
        return status_set(err, KILN_INVALID, "table %s: a split needs the table lock",
                          table_name(t));
    out->region = r;
    manifest cur;
    kiln_status st = split_read_region(t, r, &cur, err);
    if (st != KILN_OK)
        return st;
    out->parent = cur.version;
    split_files sf = {NULL, 0};
    manifest m;
    manifest_init(&m);
    manifest_region halves[2];
    memset(halves, 0, sizeof halves);
    uint64_t version = 0;
    int published = 0;
    if ((st = split_files_open(t, &cur.tables[0].regions[r], cache, &sf, err)) != KILN_OK ||
        (st = split_pick(t, r, &sf, &out->split_key, err)) != KILN_OK ||
        (st = split_sync_schema(t, &cur.tables[0].schema, err)) != KILN_OK ||
        (st = table_next_version(t, &version, err)) != KILN_OK)
        goto done;

    kslice key = buf_slice(&out->split_key);
    const manifest_region *old = &cur.tables[0].regions[r];
    buf_append(&halves[0].start, old->start.data, old->start.len);
    buf_append(&halves[0].end, key.p, key.n);
    buf_append(&halves[1].start, key.p, key.n);
    buf_append(&halves[1].end, old->end.data, old->end.len);
    st = split_write_halves(t, &cur.tables[0], &sf, key, version, halves, out, err);
    split_files_close(&sf);
    if (st != KILN_OK)
        goto done;

    manifest_free(&m);
    manifest_copy(&m, &cur);
    m.version = version;
    m.parent = cur.version;
    m.created_ms = table_now_ms();
    m.kind = MANIFEST_KIND_MAINT;
    if ((st = split_install(&m, r, key, halves, err)) != KILN_OK)
        goto done;
    st = table_publish(t, &m, &published, err);
    if (published) {
        out->version = version;
        table_step(t, "split published");
        if (st == KILN_OK)
            st = split_sync_schema(t, &m.tables[0].schema, err);
        out->unconfirmed = st != KILN_OK;
    }
done:
    if (!published && version != 0)
        table_abort_version(t, version);
    split_files_close(&sf);
    split_region_free(&halves[0]);
    split_region_free(&halves[1]);
    manifest_free(&m);
    manifest_free(&cur);
    return st;
}
