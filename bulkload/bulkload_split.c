/* bulkload_split.c -- rewriting an HFile whose rows straddle region
 * boundaries as one file per region. HBase writes a bottom and a top half and
 * requeues them, splitting again while a half still straddles; a single pass
 * that switches writers at each boundary gives the same files for two
 * regions and reads the input once for any number.
 */
#include "bulkload/bulkload_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_format.h"
#include "storage/hfile/hfile_writer.h"

size_t
bulkload_region_of(const kiln_schema *s, const uint8_t *row, size_t n)
{
    size_t lo = 0, hi = s->split_count;
    kslice key = kslice_make(row, n);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (kslice_cmp(buf_slice(&s->splits[mid]), key) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* FileInfo keys the writer computes for the new file and must not inherit. */
static int
bulkload_split_skip_key(kslice k)
{
    static const char *own[] = {HFILE_FI_DATA_BLOCK_ENCODING, HFILE_FI_BLOOM_FILTER_TYPE,
                                HFILE_FI_LAST_BLOOM_KEY, HFILE_FI_DELETE_FAMILY_COUNT,
                                HFILE_FI_TIMERANGE, HFILE_FI_EARLIEST_PUT_TS,
                                HFILE_FI_KEY_VALUE_VERSION, HFILE_FI_MAX_MEMSTORE_TS};
    if (k.n >= 6 && memcmp(k.p, "hfile.", 6) == 0)
        return 1;
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        if (kslice_eq(k, kslice_str(own[i])))
            return 1;
    }
    return 0;
}

typedef struct split_piece {
    hfile_writer *w;
    size_t region;
    manifest_file mf;
} split_piece;

static kiln_status
bulkload_split_open(kiln_table *t, hfile_reader *rd, const schema_family *fam,
                    uint64_t version, uint32_t *seq, split_piece *p, size_t region,
                    kiln_err *err)
{
    hfile_writer_options o;
    hfile_writer_options_init(&o);
    o.codec = fam->codec;
    o.block_size = fam->block_size;
    o.bloom = fam->bloom;
    o.sync = 1;
    char task[256] = "";
    kslice v;
    if (hfile_fileinfo_get(hfile_reader_fileinfo(rd), HFILE_FI_BULKLOAD_SOURCE_TASK, &v) &&
        v.n < sizeof task && memchr(v.p, 0, v.n) == NULL) {
        memcpy(task, v.p, v.n);
        task[v.n] = '\0';
        o.source_task = task;
    }
    memset(&p->mf, 0, sizeof p->mf);
    snprintf(p->mf.family, sizeof p->mf.family, "%s", fam->name);
    table_file_name(version, (*seq)++, p->mf.name);
    p->mf.seq = version;
    p->region = region;
    char path[PATH_MAX];
    table_file_path(t, p->mf.name, path, sizeof path);
    kiln_status st = hfile_writer_open(path, &o, &p->w, err);
    if (st != KILN_OK)
        return st;
    const hfile_fileinfo *fi = hfile_reader_fileinfo(rd);
    for (size_t i = 0; i < fi->count && st == KILN_OK; i++) {
        const hfile_fileinfo_entry *e = &fi->entries[i];
        if (bulkload_split_skip_key(e->key) || memchr(e->key.p, 0, e->key.n) != NULL ||
            e->key.n >= 256)
            continue;
        char key[256];
        memcpy(key, e->key.p, e->key.n);
        key[e->key.n] = '\0';
        st = hfile_writer_append_fileinfo(p->w, key, e->value.p, e->value.n, err);
    }
    if (st != KILN_OK) {
        hfile_writer_abandon(p->w);
        p->w = NULL;
    }
    return st;
}

static kiln_status
bulkload_split_close(split_piece *p, manifest_table *mt, size_t *pieces, kiln_err *err)
{
    hfile_writer_stats stats;
    kiln_status st = hfile_writer_finish(p->w, &stats, err);
    p->w = NULL;
    if (st != KILN_OK)
        return st;
    p->mf.size = stats.file_size;
    p->mf.entries = stats.entries;
    manifest_region_add_file(&mt->regions[p->region], &p->mf);
    (*pieces)++;
    return KILN_OK;
}

kiln_status
bulkload_split_file(kiln_table *t, hfile_reader *rd, const schema_family *fam, size_t first,
                    size_t last, uint64_t version, uint32_t *seq, manifest_table *mt,
                    size_t *pieces, kiln_err *err)
{
    const kiln_schema *s = &mt->schema;
    *pieces = 0;
    hfile_iter *it = hfile_iter_new(rd);
    split_piece p = {NULL, 0, {{0}, {0}, 0, 0, 0, 0}};
    size_t region = first;
    kiln_status st = hfile_iter_seek_first(it, err);
    while (st == KILN_OK && hfile_iter_valid(it)) {
        const kiln_cell *c = hfile_iter_cell(it);
        /* Advance to the region holding this row; boundaries are row keys,
         * so a row's cells never span two pieces. */
        while (region < s->split_count &&
               kslice_cmp(kslice_make(c->row, c->row_len), buf_slice(&s->splits[region])) >= 0) {
            if (p.w != NULL && (st = bulkload_split_close(&p, mt, pieces, err)) != KILN_OK)
                break;
            region++;
        }
        if (st != KILN_OK)
            break;
        if (region > last) {
            st = status_set(err, KILN_CORRUPTION,
                            "%s: a cell sorts after the file's last key (rows out of order)",
                            hfile_reader_path(rd));
            break;
        }
        if (p.w == NULL &&
            (st = bulkload_split_open(t, rd, fam, version, seq, &p, region, err)) != KILN_OK)
            break;
        if ((st = hfile_writer_add(p.w, c, err)) != KILN_OK)
            break;
        st = hfile_iter_next(it, err);
    }
    if (st == KILN_OK && p.w != NULL)
        st = bulkload_split_close(&p, mt, pieces, err);
    if (p.w != NULL)
        hfile_writer_abandon(p.w);
    hfile_iter_free(it);
    return st;
}
