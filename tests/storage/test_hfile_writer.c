/* test_hfile_writer.c -- the HFile writer against HBase: the HBase-written
 * vectors are re-written from their own cells and compared block by block
 * (byte-identical for uncompressed files), plus structural checks of what the
 * writer produces on random input: every block's checksum and prev-offset
 * chain, the index at 1..3 levels, blooms, FileInfo and trailer totals, every
 * codec, out-of-order input and injected I/O faults.
 *
 * Files are parsed here with the decoders of hfile_format.h only, so the
 * writer is checked independently of the reader.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/hfile/bloom.h"
#include "storage/base/buf.h"
#include "storage/hfile/cell.h"
#include "storage/base/coding.h"
#include "storage/base/compress.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_format.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/base/status.h"

#define TESTDATA "tests/data/hbase/"

static uint64_t rng_state;
static char tmp_dir[64];

static uint64_t
rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void
tmp_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmp_dir, name);
}

/* ------------------------------------------------------------------ parsed files */

typedef struct pblock {
    uint64_t off;
    hfile_block_header h;
    const uint8_t *disk;   /* the whole on-disk block, inside pfile.bytes */
    size_t disk_len;
    kbuf raw;              /* decompressed payload */
} pblock;

typedef struct pfile {
    kbuf bytes;
    hfile_trailer t;
    pblock *b;
    size_t n;
    hfile_fileinfo fi;
    int tags, mvcc;
} pfile;

/* Load a file, checking every block header, checksum, prev-offset chain and
 * payload decompression on the way. */
static void
pfile_load(const char *path, pfile *pf)
{
    memset(pf, 0, sizeof *pf);
    hfile_fileinfo_init(&pf->fi);
    kiln_err err;
    status_clear(&err);
    assert_int_equal(env_read_file(path, &pf->bytes, &err), KILN_OK);
    const uint8_t *p = pf->bytes.data;
    size_t len = pf->bytes.len;
    assert_true(len >= HFILE_TRAILER_SIZE);
    assert_int_equal(hfile_trailer_decode(p, len, &pf->t, &err), KILN_OK);
    assert_int_equal(pf->t.major_version, 3);
    assert_int_equal(pf->t.minor_version, 3);
    int64_t prev[HFILE_BLOCK_TYPE_COUNT];
    for (int i = 0; i < HFILE_BLOCK_TYPE_COUNT; i++)
        prev[i] = -1;
    size_t cap = 0;
    uint64_t off = 0, end = len - HFILE_TRAILER_SIZE;
    while (off < end) {
        assert_true(end - off >= HFILE_BLOCK_HEADER_SIZE);
        hfile_block_header h;
        if (hfile_block_header_decode(p + off, &h, &err) != KILN_OK)
            fail_msg("%s: block at %llu: %s", path, (unsigned long long)off, err.msg);
        size_t total = HFILE_BLOCK_HEADER_SIZE + h.on_disk_size_without_header;
        assert_true(total <= end - off);
        assert_int_equal(h.checksum_type, HFILE_CHECKSUM_CRC32C);
        assert_int_equal(h.bytes_per_checksum, HFILE_BYTES_PER_CHECKSUM);
        assert_int_equal(hfile_checksum_verify(h.checksum_type, p + off,
                                               h.on_disk_data_size_with_header,
                                               h.bytes_per_checksum,
                                               p + off + h.on_disk_data_size_with_header),
                         -1);
        int chain = h.type == HFILE_BLOCK_ENCODED_DATA ? HFILE_BLOCK_DATA : (int)h.type;
        assert_int_equal(h.prev_block_offset, prev[chain]);
        prev[chain] = (int64_t)off;
        if (pf->n == cap) {
            cap = cap ? cap * 2 : 64;
            pf->b = kiln_realloc(pf->b, cap * sizeof pf->b[0]);
        }
        pblock *b = &pf->b[pf->n++];
        b->off = off;
        b->h = h;
        b->disk = p + off;
        b->disk_len = total;
        buf_init(&b->raw);
        buf_reserve(&b->raw, 1);   /* a valid output pointer even for empty payloads */
        buf_resize(&b->raw, h.uncompressed_size_without_header);
        if (decompress_block((kiln_codec)pf->t.compression_codec, p + off + HFILE_BLOCK_HEADER_SIZE,
                             h.on_disk_data_size_with_header - HFILE_BLOCK_HEADER_SIZE,
                             b->raw.data, b->raw.len, &err) != KILN_OK)
            fail_msg("%s: block at %llu: %s", path, (unsigned long long)off, err.msg);
        off += total;
    }
    assert_true(off == end);
    for (size_t i = 0; i < pf->n; i++) {
        if (pf->b[i].off == pf->t.file_info_offset) {
            assert_int_equal(pf->b[i].h.type, HFILE_BLOCK_FILE_INFO);
            assert_int_equal(hfile_fileinfo_decode(pf->b[i].raw.data, pf->b[i].raw.len, &pf->fi,
                                                   &err),
                             KILN_OK);
        }
    }
    kslice v;
    pf->tags = hfile_fileinfo_get(&pf->fi, HFILE_FI_MAX_TAGS_LEN, &v);
    int32_t kvv = 0;
    pf->mvcc = hfile_fileinfo_get_i32(&pf->fi, HFILE_FI_KEY_VALUE_VERSION, &kvv) && kvv == 1;
}

static void
pfile_free(pfile *pf)
{
    for (size_t i = 0; i < pf->n; i++)
        buf_free(&pf->b[i].raw);
    free(pf->b);
    buf_free(&pf->bytes);
    hfile_fileinfo_free(&pf->fi);
}

static const pblock *
pfile_at(const pfile *pf, uint64_t off)
{
    for (size_t i = 0; i < pf->n; i++)
        if (pf->b[i].off == off)
            return &pf->b[i];
    fail_msg("no block at offset %llu", (unsigned long long)off);
    return NULL;
}

static const pblock *
pfile_nth(const pfile *pf, hfile_block_type type, size_t nth)
{
    for (size_t i = 0; i < pf->n; i++)
        if (pf->b[i].h.type == type && nth-- == 0)
            return &pf->b[i];
    return NULL;
}

static size_t
pfile_count(const pfile *pf, hfile_block_type type)
{
    size_t c = 0;
    for (size_t i = 0; i < pf->n; i++)
        c += pf->b[i].h.type == type;
    return c;
}

/* Cells of the data blocks; they borrow from pf. block_of[i] is the index
 * (among data blocks) of the block holding cell i; last_size[b] the serialized
 * size of block b's last cell. */
typedef struct pcells {
    kiln_cell *c;
    size_t *block_of;
    size_t n, cap;
} pcells;

static void
pcells_parse(const pfile *pf, pcells *out)
{
    memset(out, 0, sizeof *out);
    kiln_err err;
    status_clear(&err);
    size_t bi = 0;
    for (size_t i = 0; i < pf->n; i++) {
        const pblock *b = &pf->b[i];
        if (b->h.type != HFILE_BLOCK_DATA)
            continue;
        const uint8_t *p = b->raw.data, *end = p + b->raw.len;
        assert_true(b->raw.len > 0);
        while (p < end) {
            assert_true(end - p >= 8);
            uint32_t klen = coding_get_be32(p), vlen = coding_get_be32(p + 4);
            assert_true((uint64_t)klen + vlen <= (uint64_t)(end - p - 8));
            if (out->n == out->cap) {
                out->cap = out->cap ? out->cap * 2 : 256;
                out->c = kiln_realloc(out->c, out->cap * sizeof out->c[0]);
                out->block_of = kiln_realloc(out->block_of, out->cap * sizeof out->block_of[0]);
            }
            kiln_cell *c = &out->c[out->n];
            memset(c, 0, sizeof *c);
            assert_int_equal(cell_key_decode(p + 8, klen, c, &err), KILN_OK);
            c->value = p + 8 + klen;
            c->value_len = vlen;
            p += 8 + (size_t)klen + vlen;
            if (pf->tags) {
                assert_true(end - p >= 2);
                c->tags_len = coding_get_be16(p);
                c->tags = p + 2;
                p += 2 + c->tags_len;
                assert_true(p <= end);
            }
            if (pf->mvcc) {
                int64_t m;
                size_t used = coding_get_vlong(p, end, &m);
                assert_true(used > 0);
                c->mvcc = (uint64_t)m;
                p += used;
            }
            out->block_of[out->n++] = bi;
        }
        bi++;
    }
}

static void
pcells_free(pcells *pc)
{
    free(pc->c);
    free(pc->block_of);
}

/* The serialized key of a cell (into a scratch buffer). */
static kslice
key_of(const kiln_cell *c, kbuf *scratch)
{
    buf_reset(scratch);
    cell_key_append(c, scratch);
    return buf_slice(scratch);
}

/* ------------------------------------------------------------------ structure checks */

typedef struct dref {
    uint64_t off;
    uint32_t size;
    kbuf key;
} dref;

/* Walk the data index from the root down and collect the data block references
 * in order; checks block types per level, sizes, and the index size total. */
static void
index_collect(const pfile *pf, const hfile_index_entry *ents, uint32_t n, uint32_t level,
              dref **refs, size_t *nrefs, uint64_t *index_bytes)
{
    uint32_t levels = pf->t.num_data_index_levels;
    kiln_err err;
    status_clear(&err);
    for (uint32_t i = 0; i < n; i++) {
        if (level == levels) {
            *refs = kiln_realloc(*refs, (*nrefs + 1) * sizeof **refs);
            dref *d = &(*refs)[(*nrefs)++];
            d->off = ents[i].offset;
            d->size = ents[i].on_disk_size;
            buf_init(&d->key);
            buf_append(&d->key, ents[i].key.p, ents[i].key.n);
            continue;
        }
        const pblock *b = pfile_at(pf, ents[i].offset);
        assert_int_equal(b->disk_len, ents[i].on_disk_size);
        assert_int_equal(b->h.type, level + 1 == levels ? HFILE_BLOCK_LEAF_INDEX
                                                        : HFILE_BLOCK_INTERMEDIATE_INDEX);
        *index_bytes += b->raw.len;
        uint32_t cnt;
        assert_int_equal(hfile_nonroot_index_check(b->raw.data, b->raw.len, &cnt, &err), KILN_OK);
        assert_true(cnt > 0);
        hfile_index_entry *sub = kiln_calloc(cnt, sizeof *sub);
        for (uint32_t j = 0; j < cnt; j++)
            hfile_nonroot_index_entry(b->raw.data, j, &sub[j]);
        /* the parent's key is the child's first key */
        assert_true(kslice_eq(sub[0].key, ents[i].key));
        index_collect(pf, sub, cnt, level + 1, refs, nrefs, index_bytes);
        free(sub);
    }
}

/* Everything about the file's structure that does not depend on its cells:
 * index (all levels, keys between blocks, mid-key), totals in the trailer. */
static void
check_structure(const pfile *pf, const pcells *pc)
{
    const hfile_trailer *t = &pf->t;
    kiln_err err;
    status_clear(&err);
    assert_string_equal(t->comparator_class_name, HFILE_COMPARATOR_KV);
    assert_int_equal(t->entry_count, pc->n);
    assert_int_equal(t->meta_index_count, 0);

    /* total_uncompressed_bytes: all blocks but the data root and IDXINTE2 */
    uint64_t total = HFILE_TRAILER_SIZE;
    for (size_t i = 0; i < pf->n; i++) {
        const pblock *b = &pf->b[i];
        if (b->off == t->load_on_open_data_offset ||
            b->h.type == HFILE_BLOCK_INTERMEDIATE_INDEX)
            continue;
        total += HFILE_BLOCK_HEADER_SIZE + b->raw.len;
    }
    assert_int_equal(t->total_uncompressed_bytes, total);

    /* load-on-open order: data root, meta root, file info, bloom metas */
    const pblock *root = pfile_at(pf, t->load_on_open_data_offset);
    assert_int_equal(root->h.type, HFILE_BLOCK_ROOT_INDEX);
    size_t ri = (size_t)(root - pf->b);
    assert_true(ri + 2 < pf->n);
    assert_int_equal(pf->b[ri + 1].h.type, HFILE_BLOCK_ROOT_INDEX);
    assert_int_equal(pf->b[ri + 1].raw.len, 0);
    assert_int_equal(pf->b[ri + 2].off, t->file_info_offset);
    for (size_t i = ri + 3; i < pf->n; i++)
        assert_true(pf->b[i].h.type == HFILE_BLOCK_GENERAL_BLOOM_META ||
                    pf->b[i].h.type == HFILE_BLOCK_DELETE_FAMILY_BLOOM_META);

    /* data index */
    hfile_index_entry *ents = kiln_calloc(t->data_index_count + 1, sizeof *ents);
    size_t used;
    assert_int_equal(hfile_root_index_decode(root->raw.data, root->raw.len, t->data_index_count,
                                             ents, &used, &err),
                     KILN_OK);
    uint64_t index_bytes = root->raw.len;
    dref *refs = NULL;
    size_t nrefs = 0;
    index_collect(pf, ents, t->data_index_count, 1, &refs, &nrefs, &index_bytes);
    assert_int_equal(t->uncompressed_data_index_size, index_bytes);
    assert_int_equal(nrefs, pfile_count(pf, HFILE_BLOCK_DATA));
    if (t->num_data_index_levels > 1) {
        assert_int_equal(root->raw.len - used, HFILE_MID_KEY_METADATA_SIZE);
        /* mid key: entry (total - 1) / 2 of the leaf level */
        const uint8_t *m = root->raw.data + used;
        uint64_t leaf_off = coding_get_be64(m);
        uint32_t leaf_size = coding_get_be32(m + 8), within = coding_get_be32(m + 12);
        const pblock *leaf = pfile_at(pf, leaf_off);
        assert_int_equal(leaf->h.type, HFILE_BLOCK_LEAF_INDEX);
        assert_int_equal(leaf->disk_len, leaf_size);
        size_t before = 0;
        for (size_t i = 0; i < pf->n && pf->b[i].off < leaf_off; i++)
            if (pf->b[i].h.type == HFILE_BLOCK_LEAF_INDEX)
                before += coding_get_be32(pf->b[i].raw.data);
        assert_int_equal(before + within, (nrefs - 1) / 2);
    } else {
        assert_int_equal(used, root->raw.len);
    }

    /* every data block indexed in order; prev_last < key <= first */
    kbuf kb = KBUF_INIT;
    size_t ci = 0;
    for (size_t d = 0; d < nrefs; d++) {
        const pblock *b = pfile_at(pf, refs[d].off);
        assert_int_equal(b->h.type, HFILE_BLOCK_DATA);
        assert_int_equal(b->disk_len, refs[d].size);
        if (d == 0) {
            assert_int_equal(t->first_data_block_offset, refs[d].off);
        }
        while (ci < pc->n && pc->block_of[ci] < d)
            ci++;
        assert_true(ci < pc->n && pc->block_of[ci] == d);
        kslice first = key_of(&pc->c[ci], &kb);
        int c = cell_key_compare(refs[d].key.data, refs[d].key.len, first.p, first.n);
        assert_true(c <= 0);
        if (d == 0) {
            assert_true(kslice_eq(buf_slice(&refs[d].key), first));
        } else {
            kslice prev_last = key_of(&pc->c[ci - 1], &kb);
            assert_true(cell_key_compare(prev_last.p, prev_last.n, refs[d].key.data,
                                         refs[d].key.len) < 0);
        }
        if (d + 1 == nrefs)
            assert_int_equal(t->last_data_block_offset, refs[d].off);
    }
    if (nrefs == 0) {
        assert_true(t->first_data_block_offset == UINT64_MAX);
        assert_int_equal(t->data_index_count, 0);
    }
    buf_free(&kb);
    for (size_t d = 0; d < nrefs; d++)
        buf_free(&refs[d].key);
    free(refs);
    free(ents);
}

typedef struct pbloom {
    uint64_t total_bytes, total_keys, total_max_keys;
    int hash_count;
    uint32_t chunks;
    char comparator[128];
    hfile_index_entry *ents;
} pbloom;

/* Parse bloom metadata of the given type; 0 if the file has none. */
static int
pbloom_load(const pfile *pf, hfile_block_type meta_type, pbloom *out)
{
    memset(out, 0, sizeof *out);
    const pblock *m = pfile_nth(pf, meta_type, 0);
    if (m == NULL)
        return 0;
    const uint8_t *p = m->raw.data, *end = p + m->raw.len;
    assert_true(m->raw.len >= 44);
    assert_int_equal(coding_get_be32(p), 3);
    out->total_bytes = coding_get_be64(p + 4);
    out->hash_count = (int)coding_get_be32(p + 12);
    assert_int_equal(coding_get_be32(p + 16), BLOOM_HASH_MURMUR);
    out->total_keys = coding_get_be64(p + 20);
    out->total_max_keys = coding_get_be64(p + 28);
    out->chunks = coding_get_be32(p + 36);
    p += 40;
    int64_t clen;
    size_t used = coding_get_vlong(p, end, &clen);
    assert_true(used > 0 && clen >= 0 && clen < (int64_t)sizeof out->comparator);
    memcpy(out->comparator, p + used, (size_t)clen);
    p += used + (size_t)clen;
    out->ents = kiln_calloc(out->chunks + 1, sizeof *out->ents);
    kiln_err err;
    status_clear(&err);
    size_t consumed;
    assert_int_equal(hfile_root_index_decode(p, (size_t)(end - p), out->chunks, out->ents,
                                             &consumed, &err),
                     KILN_OK);
    assert_int_equal(consumed, (size_t)(end - p));
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < out->chunks; i++) {
        const pblock *b = pfile_at(pf, out->ents[i].offset);
        assert_int_equal(b->h.type, HFILE_BLOCK_BLOOM_CHUNK);
        assert_int_equal(b->disk_len, out->ents[i].on_disk_size);
        bytes += b->raw.len;
    }
    assert_int_equal(bytes, out->total_bytes);
    return 1;
}

/* Does the bloom say key may be present? Chunk chosen as HBase does: the last
 * chunk whose first key is <= key (cell order when rowcol, bytes otherwise). */
static int
pbloom_may_contain(const pfile *pf, const pbloom *bl, int rowcol, kslice index_key, kslice key)
{
    long chunk = -1;
    for (uint32_t i = 0; i < bl->chunks; i++) {
        int c = rowcol ? cell_key_compare(bl->ents[i].key.p, bl->ents[i].key.n, index_key.p,
                                          index_key.n)
                       : kslice_cmp(bl->ents[i].key, index_key);
        if (c <= 0)
            chunk = (long)i;
    }
    if (chunk < 0)
        return 0;
    const pblock *b = pfile_at(pf, bl->ents[chunk].offset);
    return bloom_chunk_may_contain(b->raw.data, b->raw.len, bl->hash_count, key.p, key.n);
}

/* The general bloom holds every row (ROW) or row+column (ROWCOL) of the cells;
 * the delete-family bloom every row with a delete-family marker. */
static void
check_blooms(const pfile *pf, const pcells *pc, kiln_bloom_type expect)
{
    pbloom g, d;
    int have_g = pbloom_load(pf, HFILE_BLOCK_GENERAL_BLOOM_META, &g);
    int have_d = pbloom_load(pf, HFILE_BLOCK_DELETE_FAMILY_BLOOM_META, &d);
    kslice v;
    kbuf k = KBUF_INIT, ik = KBUF_INIT;
    if (expect == BLOOM_NONE || pc->n == 0) {
        assert_false(have_g);
        assert_false(hfile_fileinfo_get(&pf->fi, HFILE_FI_BLOOM_FILTER_TYPE, &v));
    } else {
        assert_true(have_g);
        assert_true(hfile_fileinfo_get(&pf->fi, HFILE_FI_BLOOM_FILTER_TYPE, &v));
        assert_true(kslice_eq(v, kslice_str(bloom_type_name(expect))));
        assert_string_equal(g.comparator,
                            expect == BLOOM_ROWCOL ? "org.apache.hadoop.hbase.CellComparatorImpl" : "");
        uint64_t distinct = 0;
        for (size_t i = 0; i < pc->n; i++) {
            const kiln_cell *c = &pc->c[i];
            int is_new = i == 0 || c->row_len != pc->c[i - 1].row_len ||
                         memcmp(c->row, pc->c[i - 1].row, c->row_len) != 0;
            if (expect == BLOOM_ROWCOL && i > 0 && !is_new)
                is_new = kslice_cmp(kslice_make(c->family, c->family_len),
                                    kslice_make(pc->c[i - 1].family, pc->c[i - 1].family_len)) ||
                         kslice_cmp(kslice_make(c->qualifier, c->qualifier_len),
                                    kslice_make(pc->c[i - 1].qualifier, pc->c[i - 1].qualifier_len));
            distinct += is_new;
            if (expect == BLOOM_ROW) {
                kslice row = kslice_make(c->row, c->row_len);
                assert_true(pbloom_may_contain(pf, &g, 0, row, row));
            } else {
                buf_reset(&k);
                bloom_rowcol_key(&k, c->row, c->row_len, c->qualifier, c->qualifier_len);
                kiln_cell f;
                memset(&f, 0, sizeof f);
                f.row = c->row;
                f.row_len = c->row_len;
                f.family = c->family;
                f.family_len = c->family_len;
                f.qualifier = c->qualifier;
                f.qualifier_len = c->qualifier_len;
                f.ts = CELL_LATEST_TIMESTAMP;
                f.type = CELL_TYPE_MAXIMUM;
                kslice fk = key_of(&f, &ik);
                assert_true(pbloom_may_contain(pf, &g, 1, fk, buf_slice(&k)));
            }
        }
        assert_int_equal(g.total_keys, distinct);
        free(g.ents);
    }
    /* delete-family bloom: never with ROWCOL; only when markers exist */
    uint64_t df_cells = 0, df_rows = 0;
    for (size_t i = 0; i < pc->n; i++) {
        const kiln_cell *c = &pc->c[i];
        if (c->type != CELL_TYPE_DELETE_FAMILY && c->type != CELL_TYPE_DELETE_FAMILY_VERSION)
            continue;
        int new_row = df_cells == 0;
        for (long j = (long)i - 1; j >= 0 && !new_row; j--) {
            const kiln_cell *q = &pc->c[j];
            if (q->type != CELL_TYPE_DELETE_FAMILY && q->type != CELL_TYPE_DELETE_FAMILY_VERSION)
                continue;
            new_row = kslice_cmp(kslice_make(q->row, q->row_len), kslice_make(c->row, c->row_len)) != 0;
            break;
        }
        df_cells++;
        df_rows += new_row;
        if (have_d) {
            kslice row = kslice_make(c->row, c->row_len);
            assert_true(pbloom_may_contain(pf, &d, 0, row, row));
        }
    }
    int64_t dfc;
    assert_true(hfile_fileinfo_get_i64(&pf->fi, HFILE_FI_DELETE_FAMILY_COUNT, &dfc));
    assert_int_equal(dfc, df_cells);
    if (expect == BLOOM_ROWCOL || df_rows == 0) {
        assert_false(have_d);
    } else {
        assert_true(have_d);
        assert_int_equal(d.total_keys, df_rows);
        free(d.ents);
    }
    buf_free(&k);
    buf_free(&ik);
}

/* ------------------------------------------------------------------ cell sets */

typedef struct cellset {
    kiln_cell *c;
    size_t n;
} cellset;

static int
cellset_cmp(const void *a, const void *b)
{
    return cell_compare(a, b);
}

static uint8_t *
rnd_bytes(size_t n, int printable)
{
    uint8_t *p = kiln_malloc(n);
    for (size_t i = 0; i < n; i++)
        p[i] = printable ? (uint8_t)('a' + rnd() % 4) : (uint8_t)rnd();
    return p;
}

static const uint8_t cell_types[] = {CELL_TYPE_PUT, CELL_TYPE_PUT, CELL_TYPE_PUT, CELL_TYPE_DELETE,
                                     CELL_TYPE_DELETE_COLUMN, CELL_TYPE_DELETE_FAMILY,
                                     CELL_TYPE_DELETE_FAMILY_VERSION};

/* n sorted random cells: empty and binary rows/qualifiers/values, versions,
 * every delete type, sometimes tags, sometimes duplicated keys. */
static void
cellset_random(cellset *cs, size_t n, int with_tags)
{
    cs->n = n;
    cs->c = kiln_calloc(n ? n : 1, sizeof *cs->c);
    for (size_t i = 0; i < n; i++) {
        kiln_cell *c = &cs->c[i];
        int printable = rnd() % 3 != 0;
        if (i > 0 && rnd() % 4 == 0) {
            *c = cs->c[rnd() % i]; /* same row or whole key again */
            c->row = kiln_memdup(c->row, c->row_len);
            c->family = kiln_memdup(c->family, c->family_len);
            c->qualifier = kiln_memdup(c->qualifier, c->qualifier_len);
            if (rnd() % 2) {
                c->qualifier_len = (uint32_t)(rnd() % 6);
                free((void *)c->qualifier);
                c->qualifier = rnd_bytes(c->qualifier_len, printable);
                c->ts = (int64_t)(rnd() % 5) - 1;
            }
        } else {
            c->row_len = (uint32_t)(rnd() % 9);
            c->row = rnd_bytes(c->row_len, printable);
            c->family_len = 2;
            c->family = kiln_memdup("cf", 2);
            c->qualifier_len = (uint32_t)(rnd() % 6);
            c->qualifier = rnd_bytes(c->qualifier_len, printable);
            c->ts = rnd() % 8 == 0 ? (int64_t)(rnd() % 3) - 1 : 1700000000000LL + (int64_t)(rnd() % 1000);
        }
        c->type = cell_types[rnd() % sizeof cell_types];
        c->value_len = (uint32_t)(rnd() % 4 == 0 ? 0 : rnd() % 200);
        c->value = rnd_bytes(c->value_len, 0);
        c->tags_len = 0;
        c->tags = NULL;
        if (with_tags && rnd() % 3 == 0) {
            uint32_t vl = (uint32_t)(rnd() % 10);
            uint8_t *t = kiln_malloc(3 + vl);
            coding_put_be16(t, (uint16_t)(1 + vl));
            t[2] = (uint8_t)(rnd() % 200 + 1);
            for (uint32_t j = 0; j < vl; j++)
                t[3 + j] = (uint8_t)rnd();
            c->tags = t;
            c->tags_len = 3 + vl;
        }
        c->mvcc = 0;
    }
    qsort(cs->c, n, sizeof *cs->c, cellset_cmp);
}

static void
cellset_free(cellset *cs)
{
    for (size_t i = 0; i < cs->n; i++) {
        free((void *)cs->c[i].row);
        free((void *)cs->c[i].family);
        free((void *)cs->c[i].qualifier);
        free((void *)cs->c[i].value);
        free((void *)cs->c[i].tags);
    }
    free(cs->c);
}

static int
cell_equal(const kiln_cell *a, const kiln_cell *b, int tags)
{
    return cell_compare(a, b) == 0 &&
           kslice_eq(kslice_make(a->row, a->row_len), kslice_make(b->row, b->row_len)) &&
           kslice_eq(kslice_make(a->family, a->family_len), kslice_make(b->family, b->family_len)) &&
           kslice_eq(kslice_make(a->qualifier, a->qualifier_len),
                     kslice_make(b->qualifier, b->qualifier_len)) &&
           a->ts == b->ts && a->type == b->type &&
           kslice_eq(kslice_make(a->value, a->value_len), kslice_make(b->value, b->value_len)) &&
           (!tags || kslice_eq(kslice_make(a->tags, a->tags_len), kslice_make(b->tags, b->tags_len))) &&
           a->mvcc == b->mvcc;
}

/* Write cs with o to path; returns the finish status. */
static kiln_status
write_cells(const char *path, const hfile_writer_options *o, const kiln_cell *cells, size_t n,
            hfile_writer_stats *stats, kiln_err *err)
{
    hfile_writer *w;
    kiln_status s = hfile_writer_open(path, o, &w, err);
    if (s != KILN_OK)
        return s;
    for (size_t i = 0; i < n; i++) {
        s = hfile_writer_add(w, &cells[i], err);
        if (s != KILN_OK)
            break;
    }
    kiln_status f = hfile_writer_finish(w, stats, err);
    return s != KILN_OK ? s : f;
}

/* Write, then check everything: cells read back, structure, blooms, FileInfo. */
static void
write_and_verify(const char *name, const hfile_writer_options *o, const cellset *cs)
{
    char path[256];
    tmp_path(path, sizeof path, name);
    kiln_err err;
    status_clear(&err);
    hfile_writer_stats st;
    kiln_status s = write_cells(path, o, cs->c, cs->n, &st, &err);
    if (s != KILN_OK)
        fail_msg("%s: %s", name, err.msg);
    pfile pf;
    pfile_load(path, &pf);
    assert_int_equal(st.file_size, pf.bytes.len);
    assert_int_equal(st.entries, cs->n);
    assert_int_equal(st.data_blocks, pfile_count(&pf, HFILE_BLOCK_DATA));
    assert_int_equal(st.index_levels, pf.t.num_data_index_levels);
    assert_int_equal(pf.t.compression_codec, o->codec);
    pcells pc;
    pcells_parse(&pf, &pc);
    assert_int_equal(pc.n, cs->n);
    for (size_t i = 0; i < cs->n; i++)
        if (!cell_equal(&pc.c[i], &cs->c[i], o->include_tags))
            fail_msg("%s: cell %zu differs", name, i);
    check_structure(&pf, &pc);
    check_blooms(&pf, &pc, o->bloom);
    /* FileInfo values that follow from the cells */
    int32_t v32;
    int64_t v64;
    kslice v;
    assert_true(hfile_fileinfo_get_i32(&pf.fi, HFILE_FI_AVG_KEY_LEN, &v32));
    assert_true(hfile_fileinfo_get_i32(&pf.fi, HFILE_FI_AVG_VALUE_LEN, &v32));
    assert_true(hfile_fileinfo_get_i64(&pf.fi, HFILE_FI_CREATE_TIME, &v64));
    assert_int_equal(hfile_fileinfo_get(&pf.fi, HFILE_FI_MAX_TAGS_LEN, &v), o->include_tags != 0);
    assert_int_equal(pf.mvcc, o->include_mvcc != 0);
    if (cs->n > 0) {
        kbuf kb = KBUF_INIT;
        assert_true(hfile_fileinfo_get(&pf.fi, HFILE_FI_LASTKEY, &v));
        assert_true(kslice_eq(v, key_of(&cs->c[cs->n - 1], &kb)));
        buf_free(&kb);
        int64_t lo = INT64_MAX, hi = -1;
        for (size_t i = 0; i < cs->n; i++) {
            const kiln_cell *c = &cs->c[i];
            lo = c->ts < lo ? c->ts : lo;
            hi = c->ts > hi ? c->ts : hi;
            if (c->type == CELL_TYPE_DELETE_COLUMN || c->type == CELL_TYPE_DELETE_FAMILY) {
                lo = lo > 0 ? 0 : lo;
                hi = hi < 0 ? 0 : hi;
            }
        }
        assert_true(hfile_fileinfo_get(&pf.fi, HFILE_FI_TIMERANGE, &v));
        assert_int_equal(v.n, 16);
        assert_true((int64_t)coding_get_be64(v.p) == lo);
        assert_true((int64_t)coding_get_be64(v.p + 8) == hi);
    } else {
        assert_false(hfile_fileinfo_get(&pf.fi, HFILE_FI_LASTKEY, &v));
    }
    pcells_free(&pc);
    pfile_free(&pf);
    unlink(path);
}

/* ------------------------------------------------------------------ HBase vectors */

static const char *const generated_keys[] = {
    HFILE_FI_KEY_VALUE_VERSION, HFILE_FI_MAX_MEMSTORE_TS, HFILE_FI_BLOOM_FILTER_TYPE,
    HFILE_FI_LAST_BLOOM_KEY,    HFILE_FI_DELETE_FAMILY_COUNT, HFILE_FI_TIMERANGE,
    HFILE_FI_EARLIEST_PUT_TS};

static int
is_generated(kslice key)
{
    if (key.n >= 6 && memcmp(key.p, "hfile.", 6) == 0)
        return 1;
    for (size_t i = 0; i < sizeof generated_keys / sizeof generated_keys[0]; i++)
        if (kslice_eq(key, kslice_str(generated_keys[i])))
            return 1;
    return 0;
}

/* The block size HBase must have used: every block closed at the first cell
 * boundary where its size reached it. */
static size_t
infer_block_size(const pfile *pf, const pcells *pc)
{
    size_t lo = 1, hi = SIZE_MAX;
    size_t ci = 0, nblocks = pfile_count(pf, HFILE_BLOCK_DATA);
    for (size_t d = 0; d < nblocks; d++) {
        const pblock *b = pfile_nth(pf, HFILE_BLOCK_DATA, d);
        size_t size = b->raw.len, before_last = 0, pos = 0;
        while (ci < pc->n && pc->block_of[ci] == d) {
            const kiln_cell *c = &pc->c[ci];
            size_t cs = 8 + cell_key_len(c) + c->value_len + (pf->tags ? 2 + c->tags_len : 0) +
                        (pf->mvcc ? coding_vlong_size((int64_t)c->mvcc) : 0);
            before_last = pos;
            pos += cs;
            ci++;
        }
        assert_int_equal(pos, size);
        if (before_last + 1 > lo)
            lo = before_last + 1;
        if (d + 1 < nblocks && size < hi)
            hi = size;
    }
    assert_true(lo <= hi);
    return lo;
}

static kiln_bloom_type
vector_bloom(const pfile *pf)
{
    kslice v;
    if (!hfile_fileinfo_get(&pf->fi, HFILE_FI_BLOOM_FILTER_TYPE, &v))
        return BLOOM_NONE;
    if (kslice_eq(v, kslice_str("ROWCOL")))
        return BLOOM_ROWCOL;
    return BLOOM_ROW;
}

/* Root-format entries' keys of a root block (count entries). */
static void
root_keys_equal(const pblock *a, const pblock *b, uint32_t count, size_t skip_a, size_t skip_b)
{
    kiln_err err;
    status_clear(&err);
    hfile_index_entry *ea = kiln_calloc(count + 1, sizeof *ea);
    hfile_index_entry *eb = kiln_calloc(count + 1, sizeof *eb);
    size_t ua, ub;
    assert_int_equal(hfile_root_index_decode(a->raw.data + skip_a, a->raw.len - skip_a, count, ea,
                                             &ua, &err),
                     KILN_OK);
    assert_int_equal(hfile_root_index_decode(b->raw.data + skip_b, b->raw.len - skip_b, count, eb,
                                             &ub, &err),
                     KILN_OK);
    for (uint32_t i = 0; i < count; i++)
        assert_true(kslice_eq(ea[i].key, eb[i].key));
    assert_int_equal(a->raw.len - skip_a - ua, b->raw.len - skip_b - ub);
    free(ea);
    free(eb);
}

/* Re-write an HBase-written file from its own cells with the options it was
 * written with, and compare. Returns the number of blocks compared byte for
 * byte (whole on-disk blocks). */
static size_t
rewrite_vector(const char *name)
{
    char src[256], dst[256];
    snprintf(src, sizeof src, TESTDATA "%s", name);
    tmp_path(dst, sizeof dst, name);
    pfile hb;
    pfile_load(src, &hb);
    pcells hc;
    pcells_parse(&hb, &hc);
    check_structure(&hb, &hc);
    check_blooms(&hb, &hc, vector_bloom(&hb));

    hfile_writer_options o;
    hfile_writer_options_init(&o);
    o.codec = (kiln_codec)hb.t.compression_codec;
    o.block_size = infer_block_size(&hb, &hc);
    o.bloom = vector_bloom(&hb);
    o.include_tags = hb.tags;
    o.include_mvcc = hb.mvcc;
    o.bulkload_info = 0;
    o.create_time_ms = 1;
    o.sync = 0;
    hfile_writer *w;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(hfile_writer_open(dst, &o, &w, &err), KILN_OK);
    /* keys the writer does not produce itself (HISTORICAL, MAX_SEQ_ID_KEY, ...) */
    for (size_t i = 0; i < hb.fi.count; i++) {
        const hfile_fileinfo_entry *e = &hb.fi.entries[i];
        if (is_generated(e->key))
            continue;
        char key[128];
        assert_true(e->key.n < sizeof key);
        memcpy(key, e->key.p, e->key.n);
        key[e->key.n] = '\0';
        assert_int_equal(hfile_writer_append_fileinfo(w, key, e->value.p, e->value.n, &err), KILN_OK);
    }
    for (size_t i = 0; i < hc.n; i++)
        if (hfile_writer_add(w, &hc.c[i], &err) != KILN_OK)
            fail_msg("%s: cell %zu: %s", name, i, err.msg);
    assert_int_equal(hfile_writer_finish(w, NULL, &err), KILN_OK);

    pfile ours;
    pfile_load(dst, &ours);
    pcells oc;
    pcells_parse(&ours, &oc);
    check_structure(&ours, &oc);
    check_blooms(&ours, &oc, o.bloom);
    assert_int_equal(oc.n, hc.n);
    for (size_t i = 0; i < hc.n; i++)
        assert_true(cell_equal(&oc.c[i], &hc.c[i], hb.tags));

    /* Same blocks in the same order with the same uncompressed payloads,
     * except FileInfo (compared below) and index/bloom payloads that hold
     * offsets when the codec makes sizes differ. */
    assert_int_equal(ours.n, hb.n);
    size_t identical = 0;
    int plain = o.codec == CODEC_NONE, after_fileinfo = 0;
    for (size_t i = 0; i < hb.n; i++) {
        const pblock *a = &ours.b[i], *b = &hb.b[i];
        assert_int_equal(a->h.type, b->h.type);
        if (a->h.type == HFILE_BLOCK_FILE_INFO) {
            after_fileinfo = 1;
            continue;
        }
        assert_int_equal(a->h.uncompressed_size_without_header, b->h.uncompressed_size_without_header);
        if (plain) {
            /* uncompressed: the whole on-disk block, header and CRCs included;
             * the bloom metas after FileInfo move with its size */
            if (!after_fileinfo)
                assert_int_equal(a->off, b->off);
            assert_int_equal(a->disk_len, b->disk_len);
            if (memcmp(a->disk, b->disk, a->disk_len) != 0)
                fail_msg("%s: %s block at %llu differs", name, hfile_block_type_name(a->h.type),
                         (unsigned long long)a->off);
            identical++;
        } else if (a->h.type == HFILE_BLOCK_DATA || a->h.type == HFILE_BLOCK_BLOOM_CHUNK) {
            assert_memory_equal(a->raw.data, b->raw.data, a->raw.len);
        } else if (a->h.type == HFILE_BLOCK_ROOT_INDEX && a->off == ours.t.load_on_open_data_offset) {
            root_keys_equal(a, b, hb.t.data_index_count, 0, 0);
        } else if (a->h.type == HFILE_BLOCK_GENERAL_BLOOM_META ||
                   a->h.type == HFILE_BLOCK_DELETE_FAMILY_BLOOM_META) {
            size_t head = 40 + 1;   /* fixed fields + empty comparator vint */
            assert_memory_equal(a->raw.data, b->raw.data, head);
            root_keys_equal(a, b, coding_get_be32(a->raw.data + 36), head, head);
        }
    }

    /* FileInfo: every HBase entry with the same value (creation time aside);
     * ours may add only TIMERANGE and EARLIEST_PUT_TS. */
    for (size_t i = 0; i < hb.fi.count; i++) {
        const hfile_fileinfo_entry *e = &hb.fi.entries[i];
        char key[128];
        memcpy(key, e->key.p, e->key.n);
        key[e->key.n] = '\0';
        kslice v;
        if (!hfile_fileinfo_get(&ours.fi, key, &v))
            fail_msg("%s: file info lacks %s", name, key);
        if (strcmp(key, HFILE_FI_CREATE_TIME) != 0 && !kslice_eq(v, e->value))
            fail_msg("%s: file info %s differs", name, key);
    }
    for (size_t i = 0; i < ours.fi.count; i++) {
        const hfile_fileinfo_entry *e = &ours.fi.entries[i];
        kslice v;
        char key[128];
        memcpy(key, e->key.p, e->key.n);
        key[e->key.n] = '\0';
        if (!hfile_fileinfo_get(&hb.fi, key, &v))
            assert_true(strcmp(key, HFILE_FI_TIMERANGE) == 0 ||
                        strcmp(key, HFILE_FI_EARLIEST_PUT_TS) == 0);
    }
    int64_t ct;
    assert_true(hfile_fileinfo_get_i64(&ours.fi, HFILE_FI_CREATE_TIME, &ct));
    assert_int_equal(ct, 1);

    /* Trailer, field by field; the FileInfo size difference moves the total
     * and, when compressed, the offsets. */
    const hfile_trailer *ta = &ours.t, *tb = &hb.t;
    const pblock *fa = pfile_at(&ours, ta->file_info_offset), *fb = pfile_at(&hb, tb->file_info_offset);
    int64_t fi_delta = (int64_t)fa->raw.len - (int64_t)fb->raw.len;
    assert_true((int64_t)ta->total_uncompressed_bytes == (int64_t)tb->total_uncompressed_bytes + fi_delta);
    assert_int_equal(ta->uncompressed_data_index_size, tb->uncompressed_data_index_size);
    assert_int_equal(ta->data_index_count, tb->data_index_count);
    assert_int_equal(ta->meta_index_count, tb->meta_index_count);
    assert_int_equal(ta->entry_count, tb->entry_count);
    assert_int_equal(ta->num_data_index_levels, tb->num_data_index_levels);
    assert_int_equal(ta->first_data_block_offset, tb->first_data_block_offset);
    assert_string_equal(ta->comparator_class_name, tb->comparator_class_name);
    assert_int_equal(ta->compression_codec, tb->compression_codec);
    assert_int_equal(ta->encrypted, tb->encrypted);
    if (plain) {
        assert_int_equal(ta->file_info_offset, tb->file_info_offset);
        assert_int_equal(ta->load_on_open_data_offset, tb->load_on_open_data_offset);
        assert_int_equal(ta->last_data_block_offset, tb->last_data_block_offset);
    }
    pcells_free(&oc);
    pfile_free(&ours);
    pcells_free(&hc);
    pfile_free(&hb);
    unlink(dst);
    return identical;
}

static void
hbase_10cells_identical(void **state)
{
    /* The cells the README lists, written as the generator did. */
    pfile hb;
    pfile_load(TESTDATA "hbase264_none_rowbloom_10cells.hfile", &hb);
    pcells hc;
    pcells_parse(&hb, &hc);
    assert_int_equal(hc.n, 10);
    for (int i = 0; i < 10; i++) {
        char row[16], val[16];
        snprintf(row, sizeof row, "row-%02d", i);
        snprintf(val, sizeof val, "val-%02d", i);
        assert_true(kslice_eq(kslice_make(hc.c[i].row, hc.c[i].row_len), kslice_str(row)));
        assert_true(kslice_eq(kslice_make(hc.c[i].value, hc.c[i].value_len), kslice_str(val)));
        assert_true(hc.c[i].ts == 1700000000000LL);
    }
    pcells_free(&hc);
    pfile_free(&hb);
    /* data, bloom chunk, data root, meta root, bloom meta: byte-identical */
    assert_int_equal(rewrite_vector("hbase264_none_rowbloom_10cells.hfile"), 5);
}

static void
hbase_15blocks_identical(void **state)
{
    /* 15 data blocks + bloom chunk + roots + bloom meta, all byte-identical,
     * so the 14 midpoint keys ("row-007"...) are HBase's. */
    assert_int_equal(rewrite_vector("hbase264_none_rowbloom_15blocks.hfile"), 19);
    pfile hb;
    pfile_load(TESTDATA "hbase264_none_rowbloom_15blocks.hfile", &hb);
    const pblock *root = pfile_at(&hb, hb.t.load_on_open_data_offset);
    hfile_index_entry e[15];
    kiln_err err;
    status_clear(&err);
    assert_int_equal(hb.t.data_index_count, 15);
    assert_int_equal(hfile_root_index_decode(root->raw.data, root->raw.len, 15, e, NULL, &err),
                     KILN_OK);
    static const uint8_t row07[] = {0x00, 0x06, 'r', 'o', 'w', '-', '0', '7', 0x00, 0x7F, 0xFF,
                                    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    assert_true(kslice_eq(e[10].key, kslice_make(row07, sizeof row07)));
    pfile_free(&hb);
}

static void
hbase_flush_vectors(void **state)
{
    /* RegionServer flushes: real mvcc, delete-family marker and bloom. */
    assert_true(rewrite_vector("rsflush_none_rowbloom_3cells.hfile") > 0);
    assert_true(rewrite_vector("rsflush_none_deletefamily_dfbloom.hfile") > 0);
}

static void
hbase_compressed_vectors(void **state)
{
    /* Tags, binary rows, Delete cells; compressed payloads compared decoded. */
    rewrite_vector("hbase264_snappy_tags_rowbloom.hfile");
    rewrite_vector("hbase264_gz_tags_rowbloom.hfile");
    rewrite_vector("hbase264_zstd_tags_39blocks.hfile");
}

/* ------------------------------------------------------------------ random input */

static void
default_options(hfile_writer_options *o)
{
    hfile_writer_options_init(o);
    o->sync = 0;
}

static void
every_codec_and_bloom(void **state)
{
    static const kiln_codec codecs[] = {CODEC_NONE, CODEC_GZ, CODEC_SNAPPY, CODEC_ZSTD, CODEC_LZ4};
    static const kiln_bloom_type blooms[] = {BLOOM_NONE, BLOOM_ROW, BLOOM_ROWCOL};
    cellset cs;
    cellset_random(&cs, 3000, 1);
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
        for (size_t j = 0; j < sizeof blooms / sizeof blooms[0]; j++) {
            hfile_writer_options o;
            default_options(&o);
            o.codec = codecs[i];
            o.bloom = blooms[j];
            o.block_size = 1024 + rnd() % 4096;
            o.bloom_chunk_bytes = 128 + rnd() % 512;   /* several chunks */
            char name[64];
            snprintf(name, sizeof name, "codec%d-bloom%d.hfile", (int)codecs[i], (int)blooms[j]);
            write_and_verify(name, &o, &cs);
        }
    }
    cellset_free(&cs);
}

static void
tags_and_mvcc_options(void **state)
{
    cellset cs;
    cellset_random(&cs, 500, 0);
    for (size_t i = 0; i < cs.n; i++)
        cs.c[i].mvcc = rnd() % 3 == 0 ? rnd() % 100000 : 0;
    for (int tags = 0; tags < 2; tags++) {
        hfile_writer_options o;
        default_options(&o);
        o.include_tags = tags;
        o.include_mvcc = 1;
        o.block_size = 512;
        write_and_verify("mvcc.hfile", &o, &cs);
    }
    for (size_t i = 0; i < cs.n; i++)
        cs.c[i].mvcc = 0;
    hfile_writer_options o;
    default_options(&o);
    o.include_mvcc = 0;
    o.include_tags = 0;
    write_and_verify("plain.hfile", &o, &cs);
    cellset_free(&cs);
}

static void
empty_file(void **state)
{
    cellset cs = {NULL, 0};
    hfile_writer_options o;
    default_options(&o);
    write_and_verify("empty.hfile", &o, &cs);
    /* structure of an empty file: root, meta root, file info, trailer */
    char path[256];
    tmp_path(path, sizeof path, "empty2.hfile");
    kiln_err err;
    status_clear(&err);
    assert_int_equal(write_cells(path, &o, NULL, 0, NULL, &err), KILN_OK);
    pfile pf;
    pfile_load(path, &pf);
    assert_int_equal(pf.n, 3);
    assert_int_equal(pf.t.entry_count, 0);
    assert_int_equal(pf.t.num_data_index_levels, 1);
    assert_true(pf.t.first_data_block_offset == UINT64_MAX);
    assert_int_equal(pf.t.load_on_open_data_offset, 0);
    int32_t avg;
    assert_true(hfile_fileinfo_get_i32(&pf.fi, HFILE_FI_AVG_KEY_LEN, &avg));
    assert_int_equal(avg, 0);
    pfile_free(&pf);
    unlink(path);
}

/* Many small blocks and a 1 KiB index chunk: leaf level, then intermediate. */
static void
multi_level_index(void **state)
{
    cellset cs;
    cellset_random(&cs, 20000, 0);
    hfile_writer_options o;
    default_options(&o);
    o.block_size = 64;
    o.index_block_max = 1024;
    o.include_tags = 0;
    write_and_verify("levels.hfile", &o, &cs);

    char path[256];
    tmp_path(path, sizeof path, "levels2.hfile");
    kiln_err err;
    status_clear(&err);
    hfile_writer_stats st;
    assert_int_equal(write_cells(path, &o, cs.c, cs.n, &st, &err), KILN_OK);
    pfile pf;
    pfile_load(path, &pf);
    assert_true(pf.t.num_data_index_levels >= 3);
    assert_true(pfile_count(&pf, HFILE_BLOCK_LEAF_INDEX) > 16);
    assert_true(pfile_count(&pf, HFILE_BLOCK_INTERMEDIATE_INDEX) > 0);
    /* leaves are inline: each follows a data block */
    for (size_t i = 1; i < pf.n; i++)
        if (pf.b[i].h.type == HFILE_BLOCK_LEAF_INDEX)
            assert_true(pf.b[i - 1].h.type == HFILE_BLOCK_DATA ||
                        pf.b[i - 1].h.type == HFILE_BLOCK_BLOOM_CHUNK);
    /* a leaf is flushed once its non-root size reaches the limit */
    for (size_t i = 0; i < pf.n; i++) {
        const pblock *b = &pf.b[i];
        if (b->h.type != HFILE_BLOCK_LEAF_INDEX || b->off > pf.t.last_data_block_offset)
            continue;
        uint32_t cnt = coding_get_be32(b->raw.data);
        size_t last_key = coding_get_be32(b->raw.data + 4 + 4 * cnt) -
                          coding_get_be32(b->raw.data + 4 * cnt) - 12;
        assert_true(b->raw.len >= o.index_block_max);
        assert_true(b->raw.len - 4 - 12 - last_key < o.index_block_max);
    }
    pfile_free(&pf);
    unlink(path);

    /* same cells, default index size: one level */
    o.index_block_max = HFILE_INDEX_BLOCK_MAX;
    write_and_verify("onelevel.hfile", &o, &cs);
    cellset_free(&cs);
}

/* Equal keys never straddle two blocks; block size is respected otherwise. */
static void
equal_keys_stay_together(void **state)
{
    kiln_cell c[40];
    char rows[40][8];
    for (int i = 0; i < 40; i++) {
        memset(&c[i], 0, sizeof c[i]);
        snprintf(rows[i], sizeof rows[i], "r%02d", i < 30 ? 5 : i);
        c[i].row = (const uint8_t *)rows[i];
        c[i].row_len = 3;
        c[i].family = (const uint8_t *)"f";
        c[i].family_len = 1;
        c[i].ts = 7;
        c[i].type = CELL_TYPE_PUT;
        c[i].value = (const uint8_t *)"v";
        c[i].value_len = 1;
    }
    hfile_writer_options o;
    default_options(&o);
    o.block_size = 1;
    char path[256];
    tmp_path(path, sizeof path, "dups.hfile");
    kiln_err err;
    status_clear(&err);
    assert_int_equal(write_cells(path, &o, c, 40, NULL, &err), KILN_OK);
    pfile pf;
    pfile_load(path, &pf);
    /* 30 identical keys in one block, then one block per cell */
    assert_int_equal(pfile_count(&pf, HFILE_BLOCK_DATA), 11);
    pcells pc;
    pcells_parse(&pf, &pc);
    for (int i = 0; i < 30; i++)
        assert_int_equal(pc.block_of[i], 0);
    check_structure(&pf, &pc);
    pcells_free(&pc);
    pfile_free(&pf);
    unlink(path);
}

static void
out_of_order_rejected(void **state)
{
    char path[256];
    tmp_path(path, sizeof path, "unsorted.hfile");
    hfile_writer_options o;
    default_options(&o);
    hfile_writer *w;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_OK);
    kiln_cell c;
    memset(&c, 0, sizeof c);
    c.family = (const uint8_t *)"cf";
    c.family_len = 2;
    c.type = CELL_TYPE_PUT;
    const char *rows[] = {"a", "b", "b", "c"};
    for (int i = 0; i < 4; i++) {
        c.row = (const uint8_t *)rows[i];
        c.row_len = 1;
        c.ts = i == 2 ? 10 : 5;   /* (b, ts 10) after (b, ts 5): out of order */
        kiln_status s = hfile_writer_add(w, &c, &err);
        if (i < 2) {
            assert_int_equal(s, KILN_OK);
        } else {
            assert_int_equal(s, KILN_INVALID);
        }
    }
    char want[400];
    snprintf(want, sizeof want, "%s: key not lexically larger than previous at cell 2", path);
    assert_string_equal(err.msg, want);
    /* sticky: finish reports it and leaves nothing behind */
    kiln_err err2;
    status_clear(&err2);
    assert_int_equal(hfile_writer_finish(w, NULL, &err2), KILN_INVALID);
    assert_string_equal(err2.msg, want);
    assert_false(env_exists(path));

    /* abandon removes a partial file too */
    assert_int_equal(hfile_writer_open(path, &o, &w, &err2), KILN_OK);
    assert_true(env_exists(path));
    hfile_writer_abandon(w);
    assert_false(env_exists(path));
    hfile_writer_abandon(NULL);
}

static void
bad_arguments(void **state)
{
    char path[256];
    tmp_path(path, sizeof path, "bad.hfile");
    hfile_writer_options o;
    hfile_writer *w;
    kiln_err err;

    default_options(&o);
    o.block_size = 0;
    status_clear(&err);
    assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_INVALID);
    assert_false(env_exists(path));

    default_options(&o);
    o.codec = CODEC_LZO;
    status_clear(&err);
    assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_INVALID);
    assert_false(env_exists(path));

    default_options(&o);
    o.bloom_error_rate = 1.5;
    status_clear(&err);
    assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_INVALID);

    /* reserved FileInfo keys, tags without the tags option, oversized row */
    default_options(&o);
    o.include_tags = 0;
    status_clear(&err);
    assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_OK);
    assert_int_equal(hfile_writer_append_fileinfo(w, "hfile.LASTKEY", "x", 1, &err), KILN_INVALID);
    status_clear(&err);
    assert_int_equal(hfile_writer_append_fileinfo(w, "MY_KEY", "x", 1, &err), KILN_OK);
    kiln_cell c;
    memset(&c, 0, sizeof c);
    c.row = (const uint8_t *)"r";
    c.row_len = 1;
    c.tags = (const uint8_t *)"\0\1\1";
    c.tags_len = 3;
    assert_int_equal(hfile_writer_add(w, &c, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "tags"));
    assert_int_equal(hfile_writer_finish(w, NULL, NULL), KILN_INVALID);
    assert_false(env_exists(path));

    default_options(&o);
    status_clear(&err);
    assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_OK);
    uint8_t *big = kiln_calloc(CELL_ROW_MAX + 1, 1);
    c.row = big;
    c.row_len = CELL_ROW_MAX + 1;
    c.tags = NULL;
    c.tags_len = 0;
    assert_int_equal(hfile_writer_add(w, &c, &err), KILN_INVALID);
    free(big);
    hfile_writer_abandon(w);
    assert_false(env_exists(path));

    /* user FileInfo entries are written */
    default_options(&o);
    status_clear(&err);
    assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_OK);
    assert_int_equal(hfile_writer_append_fileinfo(w, "MY_KEY", "\x01\x02", 2, &err), KILN_OK);
    assert_int_equal(hfile_writer_finish(w, NULL, &err), KILN_OK);
    pfile pf;
    pfile_load(path, &pf);
    kslice v;
    assert_true(hfile_fileinfo_get(&pf.fi, "MY_KEY", &v));
    assert_true(kslice_eq(v, kslice_make("\x01\x02", 2)));
    pfile_free(&pf);
    unlink(path);
}

static void
bulkload_fileinfo(void **state)
{
    cellset cs;
    cellset_random(&cs, 50, 0);
    char path[256];
    tmp_path(path, sizeof path, "bulk.hfile");
    hfile_writer_options o;
    default_options(&o);
    o.source_task = "attempt_1_0001_r_000003_0";
    o.create_time_ms = 1234;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(write_cells(path, &o, cs.c, cs.n, NULL, &err), KILN_OK);
    pfile pf;
    pfile_load(path, &pf);
    kslice v;
    int64_t t;
    /* The bulk-load time is the file's create time, so a job's output is reproducible. */
    assert_true(hfile_fileinfo_get_i64(&pf.fi, HFILE_FI_BULKLOAD_TIMESTAMP, &t));
    assert_int_equal(t, 1234);
    assert_true(hfile_fileinfo_get(&pf.fi, HFILE_FI_BULKLOAD_SOURCE_TASK, &v));
    assert_true(kslice_eq(v, kslice_str(o.source_task)));
    assert_true(hfile_fileinfo_get(&pf.fi, HFILE_FI_MAJOR_COMPACTION, &v));
    assert_true(v.n == 1 && v.p[0] == 0xFF);
    assert_true(hfile_fileinfo_get(&pf.fi, HFILE_FI_EXCLUDE_FROM_MINOR, &v));
    assert_true(v.n == 1 && v.p[0] == 0x00);
    assert_true(hfile_fileinfo_get_i64(&pf.fi, HFILE_FI_CREATE_TIME, &t));
    assert_int_equal(t, 1234);
    assert_false(hfile_fileinfo_get(&pf.fi, HFILE_FI_MAX_SEQ_ID, &v));
    assert_true(hfile_fileinfo_get(&pf.fi, HFILE_FI_TAGS_COMPRESSED, &v));
    assert_true(v.n == 1 && v.p[0] == 0x00);
    pfile_free(&pf);
    unlink(path);
    cellset_free(&cs);
}

/* Fail the k-th write (every k a normal run makes), then the fsync: each time
 * a clean I/O error naming the file, and no file left behind. */
static void
injected_faults(void **state)
{
    cellset cs;
    cellset_random(&cs, 12000, 0);
    char path[256];
    tmp_path(path, sizeof path, "faults.hfile");
    hfile_writer_options o;
    hfile_writer_options_init(&o);   /* sync on */
    o.block_size = 4096;
    o.codec = CODEC_SNAPPY;
    kiln_err err;

    env_fault_clear();
    status_clear(&err);
    assert_int_equal(write_cells(path, &o, cs.c, cs.n, NULL, &err), KILN_OK);
    long writes = env_op_calls(ENV_OP_WRITE);
    assert_true(writes >= 3);
    unlink(path);

    for (long k = 1; k <= writes; k++) {
        env_fault_clear();
        env_fault_arm(ENV_OP_WRITE, k, ENOSPC);
        status_clear(&err);
        kiln_status s = write_cells(path, &o, cs.c, cs.n, NULL, &err);
        assert_int_equal(s, KILN_IO);
        assert_int_equal(err.sys_errno, ENOSPC);
        assert_non_null(strstr(err.msg, path));
        assert_false(env_exists(path));
    }

    env_fault_clear();
    env_fault_arm(ENV_OP_SYNC, 1, EIO);
    status_clear(&err);
    assert_int_equal(write_cells(path, &o, cs.c, cs.n, NULL, &err), KILN_IO);
    assert_non_null(strstr(err.msg, path));
    assert_false(env_exists(path));

    env_fault_clear();
    env_fault_arm(ENV_OP_OPEN, 1, EACCES);
    status_clear(&err);
    assert_int_equal(write_cells(path, &o, cs.c, cs.n, NULL, &err), KILN_IO);
    assert_false(env_exists(path));
    env_fault_clear();
    cellset_free(&cs);
}

/* The writer's footprint is one block and index/bloom chunks: writing 20x the
 * cells must not grow the process by anything like 20x. */
static void
memory_stays_bounded(void **state)
{
    char path[256];
    tmp_path(path, sizeof path, "mem.hfile");
    hfile_writer_options o;
    default_options(&o);
    o.codec = CODEC_SNAPPY;
    hfile_writer *w;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(hfile_writer_open(path, &o, &w, &err), KILN_OK);
    uint8_t row[16], val[100];
    memset(val, 'v', sizeof val);
    kiln_cell c;
    memset(&c, 0, sizeof c);
    c.row = row;
    c.row_len = sizeof row;
    c.family = (const uint8_t *)"f";
    c.family_len = 1;
    c.type = CELL_TYPE_PUT;
    c.value = val;
    c.value_len = sizeof val;
    size_t rss_at[2] = {0, 0};
    for (uint64_t i = 0; i < 1000000; i++) {
        coding_put_be64(row, i);
        coding_put_be64(row + 8, i * 2654435761u);
        assert_int_equal(hfile_writer_add(w, &c, &err), KILN_OK);
        if (i == 50000 || i == 999999) {
            FILE *f = fopen("/proc/self/statm", "r");
            long pages = 0, res = 0;
            if (f != NULL) {
                if (fscanf(f, "%ld %ld", &pages, &res) != 2)
                    res = 0;
                fclose(f);
            }
            rss_at[i == 50000 ? 0 : 1] = (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
        }
    }
    hfile_writer_stats st;
    assert_int_equal(hfile_writer_finish(w, &st, &err), KILN_OK);
    assert_int_equal(st.entries, 1000000);
    /* 950k more cells (~110 MB of data) may add index entries and bloom
     * chunks waiting for a block, not data: allow 16 MiB. */
    if (rss_at[0] != 0)
        assert_true(rss_at[1] < rss_at[0] + 16u * 1024 * 1024);
    unlink(path);
}

static int
setup_dir(void **state)
{
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/kiln-hfw-XXXXXX");
    return mkdtemp(tmp_dir) == NULL ? -1 : 0;
}

static int
teardown_dir(void **state)
{
    return rmdir(tmp_dir);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_hfile_writer: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hbase_10cells_identical),
        cmocka_unit_test(hbase_15blocks_identical),
        cmocka_unit_test(hbase_flush_vectors),
        cmocka_unit_test(hbase_compressed_vectors),
        cmocka_unit_test(every_codec_and_bloom),
        cmocka_unit_test(tags_and_mvcc_options),
        cmocka_unit_test(empty_file),
        cmocka_unit_test(multi_level_index),
        cmocka_unit_test(equal_keys_stay_together),
        cmocka_unit_test(out_of_order_rejected),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(bulkload_fileinfo),
        cmocka_unit_test(injected_faults),
        cmocka_unit_test(memory_stays_bounded),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
