/* manifest.c -- encoding, decoding and checking of view-version manifests and
 * of the CURRENT pointer (docs/storage-format.md §2.4, §2.5).
 *
 * Manifest body (frame: store_rec.h, magic KILNMANI, version 2; version 1
 * lacks the fields marked v2):
 *   SIZE    | FIELD
 *   8       | version
 *   8       | parent version (0 = none)
 *   8       | creation time, ms
 *   1       | kind (1 replace, 2 append, 3 flush/compaction/split (v2))
 *   4       | source count S; S times: 8 fingerprint, 8 version, 8 load time ms, 2 + N path
 *   4       | table count T; T times:
 *     4 + N |   schema record (a whole schema frame)
 *     4     |   region count R; R times:
 *     2 + N |     start key
 *     2 + N |     end key
 *     4     |     file count F; F times: 1 + N family, 1 + N name, 8 size, 8 seq, 8 cells,
 *           |       1 flags, 8 highest write sequence (v2)
 *   8       | flushed write sequence (v2)
 *   4       | cover count C (v2); C times: 8 version, 8 timestamp
 *
 * CURRENT body (frame: magic KILNCURR, version 1): 8 version, 4 manifest CRC32C.
 */
#include "storage/store/manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/store/store_index_def.h"
#include "storage/base/store_rec.h"

void
manifest_init(manifest *m)
{
    memset(m, 0, sizeof *m);
}

static void
manifest_table_free(manifest_table *t)
{
    schema_free(&t->schema);
    for (size_t i = 0; i < t->region_count; i++) {
        buf_free(&t->regions[i].start);
        buf_free(&t->regions[i].end);
        free(t->regions[i].files);
    }
    free(t->regions);
}

void
manifest_free(manifest *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->source_count; i++)
        free(m->sources[i].path);
    free(m->sources);
    for (size_t i = 0; i < m->table_count; i++)
        manifest_table_free(&m->tables[i]);
    free(m->tables);
    free(m->covers);
    manifest_init(m);
}

manifest_table *
manifest_add_table(manifest *m, const kiln_schema *schema)
{
    m->tables = kiln_realloc(m->tables, (m->table_count + 1) * sizeof *m->tables);
    manifest_table *t = &m->tables[m->table_count++];
    memset(t, 0, sizeof *t);
    schema_copy(&t->schema, schema);
    t->region_count = schema_region_count(schema);
    t->regions = kiln_calloc(t->region_count, sizeof *t->regions);
    for (size_t i = 0; i < t->region_count; i++) {
        manifest_region *r = &t->regions[i];
        buf_init(&r->start);
        buf_init(&r->end);
        if (i > 0)
            buf_append(&r->start, schema->splits[i - 1].data, schema->splits[i - 1].len);
        if (i < schema->split_count)
            buf_append(&r->end, schema->splits[i].data, schema->splits[i].len);
    }
    return t;
}

static int
manifest_file_order(const manifest_file *a, const manifest_file *b)
{
    int c = strcmp(a->family, b->family);
    if (c != 0)
        return c;
    uint64_t ra = manifest_file_rank(a), rb = manifest_file_rank(b);
    if (ra != rb)
        return ra > rb ? -1 : 1;
    /* flushes over the same version: the one with the newer writes first,
     * so it wins (splits and compactions rename files; they keep wseq) */
    if (a->wseq != b->wseq)
        return a->wseq > b->wseq ? -1 : 1;
    return strcmp(a->name, b->name);
}

void
manifest_region_add_file(manifest_region *r, const manifest_file *f)
{
    r->files = kiln_realloc(r->files, (r->file_count + 1) * sizeof *r->files);
    size_t at = r->file_count;
    while (at > 0 && manifest_file_order(&r->files[at - 1], f) > 0)
        at--;
    memmove(&r->files[at + 1], &r->files[at], (r->file_count - at) * sizeof *r->files);
    r->files[at] = *f;
    r->file_count++;
}

void
manifest_add_source(manifest *m, uint64_t fingerprint, uint64_t version, int64_t loaded_ms,
                    const char *path)
{
    m->sources = kiln_realloc(m->sources, (m->source_count + 1) * sizeof *m->sources);
    manifest_source *s = &m->sources[m->source_count++];
    s->fingerprint = fingerprint;
    s->version = version;
    s->loaded_ms = loaded_ms;
    s->path = (char *)kiln_memdup(path, strlen(path) + 1);
}

void
manifest_add_cover(manifest *m, uint64_t version, int64_t ts)
{
    size_t keep = 0;
    for (size_t i = 0; i < m->cover_count; i++) {
        if (m->covers[i].ts > ts)
            m->covers[keep++] = m->covers[i];
    }
    if (keep == MANIFEST_COVERS_MAX) {
        memmove(m->covers, m->covers + 1, (keep - 1) * sizeof *m->covers);
        keep--;
    }
    m->covers = kiln_realloc(m->covers, (keep + 1) * sizeof *m->covers);
    m->covers[keep].version = version;
    m->covers[keep].ts = ts;
    m->cover_count = keep + 1;
}

int
manifest_covered(const manifest *m, uint64_t base, int64_t ts)
{
    for (size_t i = 0; i < m->cover_count; i++) {
        if (base < m->covers[i].version && ts <= m->covers[i].ts)
            return 1;
    }
    return 0;
}

void
manifest_keep_speed(const manifest *from, manifest *to)
{
    const manifest_table *ft = &from->tables[0];
    manifest_table *tt = &to->tables[0];
    for (size_t r = 0; r < ft->region_count; r++) {
        const manifest_region *fr = &ft->regions[r];
        for (size_t f = 0; f < fr->file_count; f++) {
            const manifest_file *mf = &fr->files[f];
            if (!(mf->flags & MANIFEST_FILE_SPEED))
                continue;
            /* the same regions unless a split moved them: then every
             * region the file's region overlaps */
            size_t lo = manifest_region_for_row(tt, fr->start.data, fr->start.len);
            for (size_t k = lo; k < tt->region_count; k++) {
                if (k > lo && fr->end.len > 0 &&
                    kslice_cmp(buf_slice(&tt->regions[k].start), buf_slice(&fr->end)) >= 0)
                    break;
                manifest_region_add_file(&tt->regions[k], mf);
            }
        }
    }
}

int
manifest_has_speed(const manifest *m)
{
    const manifest_table *t = &m->tables[0];
    for (size_t r = 0; r < t->region_count; r++) {
        for (size_t f = 0; f < t->regions[r].file_count; f++) {
            if (t->regions[r].files[f].flags & MANIFEST_FILE_SPEED)
                return 1;
        }
    }
    return 0;
}

void
manifest_drop_speed(manifest *m)
{
    manifest_table *t = &m->tables[0];
    for (size_t r = 0; r < t->region_count; r++) {
        manifest_region *reg = &t->regions[r];
        size_t keep = 0;
        for (size_t f = 0; f < reg->file_count; f++) {
            if (!(reg->files[f].flags & MANIFEST_FILE_SPEED))
                reg->files[keep++] = reg->files[f];
        }
        reg->file_count = keep;
    }
}

void
manifest_copy(manifest *dst, const manifest *src)
{
    manifest_init(dst);
    dst->version = src->version;
    dst->parent = src->parent;
    dst->created_ms = src->created_ms;
    dst->kind = src->kind;
    dst->flushed_seq = src->flushed_seq;
    for (size_t i = 0; i < src->cover_count; i++)
        manifest_add_cover(dst, src->covers[i].version, src->covers[i].ts);
    for (size_t i = 0; i < src->source_count; i++) {
        const manifest_source *s = &src->sources[i];
        manifest_add_source(dst, s->fingerprint, s->version, s->loaded_ms, s->path);
    }
    for (size_t i = 0; i < src->table_count; i++) {
        const manifest_table *st = &src->tables[i];
        manifest_table *t = manifest_add_table(dst, &st->schema);
        for (size_t r = 0; r < st->region_count && r < t->region_count; r++) {
            for (size_t f = 0; f < st->regions[r].file_count; f++)
                manifest_region_add_file(&t->regions[r], &st->regions[r].files[f]);
        }
    }
}

manifest_table *
manifest_find_table(const manifest *m, const char *name)
{
    for (size_t i = 0; i < m->table_count; i++) {
        if (strcmp(m->tables[i].schema.name, name) == 0)
            return &m->tables[i];
    }
    return NULL;
}

size_t
manifest_region_for_row(const manifest_table *t, const uint8_t *row, size_t n)
{
    /* The last region whose start <= row; region 0's start is empty. */
    size_t lo = 0, hi = t->region_count;
    kslice key = kslice_make(row, n);
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (kslice_cmp(buf_slice(&t->regions[mid].start), key) <= 0)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

uint64_t
manifest_file_count(const manifest *m)
{
    uint64_t n = 0;
    for (size_t i = 0; i < m->table_count; i++) {
        for (size_t r = 0; r < m->tables[i].region_count; r++)
            n += m->tables[i].regions[r].file_count;
    }
    return n;
}

uint64_t
manifest_total_bytes(const manifest *m)
{
    uint64_t n = 0;
    for (size_t i = 0; i < m->table_count; i++) {
        for (size_t r = 0; r < m->tables[i].region_count; r++) {
            const manifest_region *reg = &m->tables[i].regions[r];
            for (size_t f = 0; f < reg->file_count; f++)
                n += reg->files[f].size;
        }
    }
    return n;
}

int
manifest_file_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > MANIFEST_FILE_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return 0;
    }
    return 1;
}

uint32_t
manifest_encode(const manifest *m, kbuf *out)
{
    kbuf b = KBUF_INIT;
    buf_append_be64(&b, m->version);
    buf_append_be64(&b, m->parent);
    buf_append_be64(&b, (uint64_t)m->created_ms);
    buf_append_u8(&b, (uint8_t)m->kind);
    buf_append_be32(&b, (uint32_t)m->source_count);
    for (size_t i = 0; i < m->source_count; i++) {
        const manifest_source *s = &m->sources[i];
        buf_append_be64(&b, s->fingerprint);
        buf_append_be64(&b, s->version);
        buf_append_be64(&b, (uint64_t)s->loaded_ms);
        size_t pl = strlen(s->path);
        if (pl > MANIFEST_PATH_MAX)
            pl = MANIFEST_PATH_MAX;
        store_rec_put_str16(&b, s->path, pl);
    }
    buf_append_be32(&b, (uint32_t)m->table_count);
    kbuf sch = KBUF_INIT;
    for (size_t i = 0; i < m->table_count; i++) {
        const manifest_table *t = &m->tables[i];
        buf_reset(&sch);
        schema_encode(&t->schema, &sch);
        buf_append_be32(&b, (uint32_t)sch.len);
        buf_append(&b, sch.data, sch.len);
        buf_append_be32(&b, (uint32_t)t->region_count);
        for (size_t r = 0; r < t->region_count; r++) {
            const manifest_region *reg = &t->regions[r];
            store_rec_put_str16(&b, reg->start.data, reg->start.len);
            store_rec_put_str16(&b, reg->end.data, reg->end.len);
            buf_append_be32(&b, (uint32_t)reg->file_count);
            for (size_t f = 0; f < reg->file_count; f++) {
                const manifest_file *mf = &reg->files[f];
                size_t fl = strlen(mf->family), nl = strlen(mf->name);
                buf_append_u8(&b, (uint8_t)fl);
                buf_append(&b, mf->family, fl);
                buf_append_u8(&b, (uint8_t)nl);
                buf_append(&b, mf->name, nl);
                buf_append_be64(&b, mf->size);
                buf_append_be64(&b, mf->seq);
                buf_append_be64(&b, mf->entries);
                buf_append_u8(&b, mf->flags);
                buf_append_be64(&b, mf->wseq);
            }
        }
    }
    buf_free(&sch);
    buf_append_be64(&b, m->flushed_seq);
    buf_append_be32(&b, (uint32_t)m->cover_count);
    for (size_t i = 0; i < m->cover_count; i++) {
        buf_append_be64(&b, m->covers[i].version);
        buf_append_be64(&b, (uint64_t)m->covers[i].ts);
    }
    uint32_t crc = store_rec_frame(out, MANIFEST_MAGIC, MANIFEST_FORMAT_VERSION, b.data, b.len);
    buf_free(&b);
    return crc;
}

/* Copy a length-checked name into dst (cap includes the NUL). 0 or -1. */
static int
manifest_take_name(store_cur *c, char *dst, size_t cap)
{
    uint8_t n = store_cur_u8(c);
    kslice s = store_cur_bytes(c, n);
    if (!store_cur_ok(c) || s.n >= cap || memchr(s.p, 0, s.n) != NULL)
        return -1;
    memcpy(dst, s.p, s.n);
    dst[s.n] = '\0';
    return 0;
}

static kiln_status
manifest_decode_table(store_cur *c, const char *what, uint32_t fv, manifest *out,
                      kiln_err *err)
{
    uint32_t slen = store_cur_u32(c);
    kslice srec = store_cur_bytes(c, slen);
    if (!store_cur_ok(c))
        return status_set(err, KILN_CORRUPTION, "%s: truncated table entry", what);
    kiln_schema schema;
    kiln_status st = schema_decode(srec.p, srec.n, what, &schema, NULL, err);
    if (st != KILN_OK)
        return st;
    manifest_table *t = manifest_add_table(out, &schema);
    schema_free(&schema);
    uint32_t nr = store_cur_u32(c);
    if (!store_cur_ok(c) || nr != t->region_count)
        return status_set(err, KILN_CORRUPTION,
                          "%s: table %s lists %u regions, its schema defines %zu", what,
                          t->schema.name, nr, t->region_count);
    for (uint32_t r = 0; r < nr; r++) {
        manifest_region *reg = &t->regions[r];
        kslice start = store_cur_str16(c);
        kslice end = store_cur_str16(c);
        if (!store_cur_ok(c) || !kslice_eq(start, buf_slice(&reg->start)) ||
            !kslice_eq(end, buf_slice(&reg->end)))
            return status_set(err, KILN_CORRUPTION,
                              "%s: table %s region %u boundaries differ from the split keys",
                              what, t->schema.name, r);
        uint32_t nf = store_cur_u32(c);
        for (uint32_t f = 0; f < nf; f++) {
            manifest_file mf;
            memset(&mf, 0, sizeof mf);
            if (manifest_take_name(c, mf.family, sizeof mf.family) != 0 ||
                manifest_take_name(c, mf.name, sizeof mf.name) != 0)
                return status_set(err, KILN_CORRUPTION, "%s: malformed file entry", what);
            mf.size = store_cur_u64(c);
            mf.seq = store_cur_u64(c);
            mf.entries = store_cur_u64(c);
            if (fv >= 2) {
                mf.flags = store_cur_u8(c);
                mf.wseq = store_cur_u64(c);
            }
            if (!store_cur_ok(c))
                return status_set(err, KILN_CORRUPTION, "%s: truncated file entry", what);
            if ((mf.flags & ~MANIFEST_FILE_SPEED) != 0)
                return status_set(err, KILN_CORRUPTION, "%s: file %s has unknown flags %#x",
                                  what, mf.name, mf.flags);
            if (!manifest_file_name_ok(mf.name))
                return status_set(err, KILN_CORRUPTION, "%s: bad store file name '%s'", what,
                                  mf.name);
            if (schema_find_family(&t->schema, (const uint8_t *)mf.family,
                                   strlen(mf.family)) == NULL)
                return status_set(err, KILN_CORRUPTION,
                                  "%s: file %s names family '%s' that table %s does not have",
                                  what, mf.name, mf.family, t->schema.name);
            manifest_region_add_file(reg, &mf);
        }
    }
    return KILN_OK;
}

kiln_status
manifest_check_tables(const manifest *m, kiln_err *err)
{
    if (m->table_count == 0)
        return status_set(err, KILN_INVALID, "manifest lists no table");
    const kiln_schema *base = &m->tables[0].schema;
    if (store_index_schema_is_index(base))
        return status_set(err, KILN_INVALID, "its first table %s is an index table", base->name);
    if (m->table_count - 1 > STORE_INDEX_MAX)
        return status_set(err, KILN_INVALID, "table %s: %zu indexes (at most %d)", base->name,
                          m->table_count - 1, STORE_INDEX_MAX);
    for (size_t i = 1; i < m->table_count; i++) {
        store_index_def d;
        kiln_status st = store_index_def_from_schema(base, &m->tables[i].schema, &d, err);
        store_index_def_free(&d);
        if (st != KILN_OK)
            return st;
        for (size_t j = 1; j < i; j++) {
            if (strcmp(m->tables[j].schema.name, m->tables[i].schema.name) == 0)
                return status_set(err, KILN_INVALID, "index table %s listed twice",
                                  m->tables[i].schema.name);
        }
    }
    return KILN_OK;
}

kiln_status
manifest_decode(const uint8_t *p, size_t n, const char *what, manifest *out, uint32_t *crc,
                kiln_err *err)
{
    const uint8_t *body;
    size_t blen;
    uint32_t fv;
    manifest_init(out);
    kiln_status st = store_rec_unframe(p, n, MANIFEST_MAGIC, MANIFEST_FORMAT_VERSION, what,
                                       &body, &blen, &fv, crc, err);
    if (st != KILN_OK)
        return st;
    store_cur c;
    store_cur_init(&c, body, blen);
    out->version = store_cur_u64(&c);
    out->parent = store_cur_u64(&c);
    out->created_ms = (int64_t)store_cur_u64(&c);
    out->kind = (manifest_kind)store_cur_u8(&c);
    uint32_t ns = store_cur_u32(&c);
    for (uint32_t i = 0; i < ns && store_cur_ok(&c); i++) {
        uint64_t fp = store_cur_u64(&c);
        uint64_t v = store_cur_u64(&c);
        int64_t ms = (int64_t)store_cur_u64(&c);
        kslice path = store_cur_str16(&c);
        if (!store_cur_ok(&c) || path.n > MANIFEST_PATH_MAX || memchr(path.p, 0, path.n) != NULL) {
            manifest_free(out);
            return status_set(err, KILN_CORRUPTION, "%s: malformed source entry", what);
        }
        char *tmp = kiln_malloc(path.n + 1);
        memcpy(tmp, path.p, path.n);
        tmp[path.n] = '\0';
        manifest_add_source(out, fp, v, ms, tmp);
        free(tmp);
    }
    uint32_t nt = store_cur_u32(&c);
    if (!store_cur_ok(&c) || out->version == 0 || out->parent >= out->version ||
        (out->kind != MANIFEST_KIND_REPLACE && out->kind != MANIFEST_KIND_APPEND &&
         (out->kind != MANIFEST_KIND_MAINT || fv < 2)) ||
        nt == 0) {
        manifest_free(out);
        return status_set(err, KILN_CORRUPTION, "%s: malformed manifest header", what);
    }
    for (uint32_t i = 0; i < nt; i++) {
        st = manifest_decode_table(&c, what, fv, out, err);
        if (st != KILN_OK) {
            manifest_free(out);
            return st;
        }
    }
    if (fv >= 2) {
        out->flushed_seq = store_cur_u64(&c);
        uint32_t nc = store_cur_u32(&c);
        if (!store_cur_ok(&c) || nc > MANIFEST_COVERS_MAX) {
            manifest_free(out);
            return status_set(err, KILN_CORRUPTION, "%s: malformed speed-layer fields", what);
        }
        for (uint32_t i = 0; i < nc && store_cur_ok(&c); i++) {
            uint64_t v = store_cur_u64(&c);
            int64_t ts = (int64_t)store_cur_u64(&c);
            if (!store_cur_ok(&c) || v == 0 || v > out->version) {
                manifest_free(out);
                return status_set(err, KILN_CORRUPTION, "%s: malformed cover entry", what);
            }
            out->covers = kiln_realloc(out->covers, (out->cover_count + 1) * sizeof *out->covers);
            out->covers[out->cover_count].version = v;
            out->covers[out->cover_count++].ts = ts;
        }
    }
    if (store_cur_left(&c) != 0) {
        manifest_free(out);
        return status_set(err, KILN_CORRUPTION, "%s: %zu unexpected trailing bytes", what,
                          store_cur_left(&c));
    }
    kiln_err e2;
    status_clear(&e2);
    if (manifest_check_tables(out, &e2) != KILN_OK) {
        manifest_free(out);
        return status_set(err, KILN_CORRUPTION, "%s: %s", what, e2.msg);
    }
    return KILN_OK;
}

void
manifest_pointer_encode(const manifest_pointer *ptr, kbuf *out)
{
    uint8_t body[12];
    for (int i = 0; i < 8; i++)
        body[i] = (uint8_t)(ptr->version >> (56 - 8 * i));
    for (int i = 0; i < 4; i++)
        body[8 + i] = (uint8_t)(ptr->manifest_crc >> (24 - 8 * i));
    store_rec_frame(out, MANIFEST_POINTER_MAGIC, MANIFEST_POINTER_VERSION, body, sizeof body);
}

kiln_status
manifest_pointer_decode(const uint8_t *p, size_t n, const char *what, manifest_pointer *out,
                        kiln_err *err)
{
    const uint8_t *body;
    size_t blen;
    kiln_status st = store_rec_unframe(p, n, MANIFEST_POINTER_MAGIC, MANIFEST_POINTER_VERSION,
                                       what, &body, &blen, NULL, NULL, err);
    if (st != KILN_OK)
        return st;
    store_cur c;
    store_cur_init(&c, body, blen);
    out->version = store_cur_u64(&c);
    out->manifest_crc = store_cur_u32(&c);
    if (!store_cur_ok(&c) || store_cur_left(&c) != 0 || out->version == 0)
        return status_set(err, KILN_CORRUPTION, "%s: malformed pointer", what);
    return KILN_OK;
}
