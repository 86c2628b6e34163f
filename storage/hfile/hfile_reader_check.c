/* hfile_reader_check.c -- hfile_reader_check: read every block of a file in
 * physical order and check it all (headers and checksums, the previous-block
 * chains, decoding, cell order, that the index entries match the data blocks
 * one for one, the trailer's totals, FileInfo's last key, and that the blooms
 * answer "may contain" for every row they should hold).
 */
#include "storage/hfile/hfile_reader_int.h"

#include "storage/base/buf.h"

#include <string.h>

/* ------------------------------------------------------------------ check */

typedef struct check_state {
    hfile_reader *r;
    icursor cur;
    int cur_done;               /* the index has no more entries */
    uint64_t cells;
    uint64_t data_blocks;
    uint64_t first_data, last_data;
    kbuf last_key;              /* last cell key seen */
    kbuf last_row;              /* last row added to the bloom check */
    kbuf scratch;
    uint64_t uncompressed;      /* sum over scanned blocks but intermediate indexes */
    uint64_t index_uncompressed;
    int64_t prev_of_type[HFILE_BLOCK_TYPE_COUNT];
} check_state;

static kiln_status
check_bloom_cell(check_state *cs, const kiln_cell *c, uint64_t off, kiln_err *err)
{
    hfile_reader *r = cs->r;
    kiln_err e;
    status_clear(&e);
    int ok = 1;
    const char *what = "row";
    if (r->bloom_type == BLOOM_ROW) {
        if (cs->cells == 0 || !kslice_eq(buf_slice(&cs->last_row), kslice_make(c->row, c->row_len)))
            ok = hfile_reader_may_contain_row(r, c->row, c->row_len, &e);
    } else if (r->bloom_type == BLOOM_ROWCOL) {
        what = "row and qualifier";
        ok = hfile_reader_may_contain_rowcol(r, c->row, c->row_len, c->qualifier, c->qualifier_len,
                                             &e);
    }
    if (e.code != KILN_OK)
        return status_set(err, e.code, "%s", e.msg);
    if (ok && c->type == CELL_TYPE_DELETE_FAMILY && r->delfam.usable) {
        what = "delete-family row";
        ok = hfile_reader_may_have_delete_family(r, c->row, c->row_len, &e);
        if (e.code != KILN_OK)
            return status_set(err, e.code, "%s", e.msg);
    }
    if (!ok) {
        buf_reset(&cs->scratch);
        cell_to_string_binary(&cs->scratch, c->row, c->row_len < 200 ? c->row_len : 200);
        buf_append_u8(&cs->scratch, 0);
        return rerr(r, err, KILN_CORRUPTION,
                    "bloom filter misses the %s of a cell (row %s) in the block at offset %llu",
                    what, (const char *)cs->scratch.data, (unsigned long long)off);
    }
    buf_reset(&cs->last_row);
    buf_append(&cs->last_row, c->row, c->row_len);
    return KILN_OK;
}

static kiln_status
check_data_block(check_state *cs, const hfile_block_header *h, uint64_t off, uint64_t size,
                 const hfile_block *b, kiln_err *err)
{
    hfile_reader *r = cs->r;
    if (cs->cur_done)
        return rerr(r, err, KILN_CORRUPTION, "data block at offset %llu is not in the index",
                    (unsigned long long)off);
    hfile_index_entry e;
    hfile_cursor_data_entry(&cs->cur, &e);
    if (e.offset != off || e.on_disk_size != size)
        return rerr(r, err, KILN_CORRUPTION,
                    "index entry %llu points at offset %llu (%u bytes), the data block is at %llu (%llu bytes)",
                    (unsigned long long)cs->data_blocks, (unsigned long long)e.offset,
                    e.on_disk_size, (unsigned long long)off, (unsigned long long)size);
    kslice first = hfile_block_key(b, 0);
    if (cell_key_compare(e.key.p, e.key.n, first.p, first.n) > 0)
        return rerr(r, err, KILN_CORRUPTION,
                    "index key of the data block at offset %llu sorts after its first cell",
                    (unsigned long long)off);
    if (cs->cells > 0 &&
        cell_key_compare(e.key.p, e.key.n, cs->last_key.data, cs->last_key.len) <= 0)
        return rerr(r, err, KILN_CORRUPTION,
                    "index key of the data block at offset %llu does not sort after the previous block",
                    (unsigned long long)off);
    for (uint32_t i = 0; i < b->count; i++) {
        kslice k = hfile_block_key(b, i);
        if (cs->cells > 0 && cell_key_compare(cs->last_key.data, cs->last_key.len, k.p, k.n) > 0)
            return rerr(r, err, KILN_CORRUPTION,
                        "cell %u of the data block at offset %llu sorts before the previous cell",
                        i, (unsigned long long)off);
        kiln_cell c;
        hfile_block_cell(b, i, &c);
        kiln_status s = check_bloom_cell(cs, &c, off, err);
        if (s != KILN_OK)
            return s;
        buf_reset(&cs->last_key);
        buf_append(&cs->last_key, k.p, k.n);
        cs->cells++;
    }
    if (cs->data_blocks == 0)
        cs->first_data = off;
    cs->last_data = off;
    cs->data_blocks++;
    (void)h;
    kiln_status s = hfile_cursor_step(&cs->cur, 1, err);
    if (s == KILN_NOT_FOUND)
        cs->cur_done = 1;
    else if (s != KILN_OK)
        return s;
    return KILN_OK;
}

/* Read and check every block from offset 0 to the load-on-open section. */
static kiln_status
check_blocks(check_state *cs, kiln_err *err)
{
    hfile_reader *r = cs->r;
    uint64_t off = 0;
    while (off < r->data_end) {
        uint8_t hb[HFILE_BLOCK_HEADER_SIZE];
        if (r->data_end - off < HFILE_BLOCK_HEADER_SIZE)
            return rerr(r, err, KILN_CORRUPTION,
                        "truncated block at offset %llu before the load-on-open section",
                        (unsigned long long)off);
        kiln_status s = env_pread(r->f, off, hb, sizeof hb, err);
        if (s != KILN_OK)
            return s;
        hfile_block_header h;
        kiln_err e;
        status_clear(&e);
        if (hfile_block_header_decode(hb, &h, &e) != KILN_OK)
            return rerr(r, err, KILN_CORRUPTION, "%s at offset %llu", e.msg,
                        (unsigned long long)off);
        uint64_t size = (uint64_t)h.on_disk_size_without_header + HFILE_BLOCK_HEADER_SIZE;
        unsigned scanned = DATA_TYPES | TYPE_BIT(HFILE_BLOCK_LEAF_INDEX) |
                           TYPE_BIT(HFILE_BLOCK_BLOOM_CHUNK) | TYPE_BIT(HFILE_BLOCK_META) |
                           TYPE_BIT(HFILE_BLOCK_INTERMEDIATE_INDEX);
        hfile_block *b;
        s = hfile_reader_block_load(r, off, size, scanned, &b, &h, err);
        if (s != KILN_OK)
            return s;
        int chain = h.type == HFILE_BLOCK_ENCODED_DATA ? HFILE_BLOCK_DATA : (int)h.type;
        if (h.prev_block_offset != cs->prev_of_type[chain]) {
            hfile_block_free(b);
            return rerr(r, err, KILN_CORRUPTION,
                        "%s block at offset %llu: previous block offset %lld, expected %lld",
                        hfile_block_type_name(h.type), (unsigned long long)off,
                        (long long)h.prev_block_offset, (long long)cs->prev_of_type[chain]);
        }
        cs->prev_of_type[chain] = (int64_t)off;
        if (h.type != HFILE_BLOCK_INTERMEDIATE_INDEX)
            cs->uncompressed += (uint64_t)h.uncompressed_size_without_header + HFILE_BLOCK_HEADER_SIZE;
        if (h.type == HFILE_BLOCK_LEAF_INDEX || h.type == HFILE_BLOCK_INTERMEDIATE_INDEX)
            cs->index_uncompressed += h.uncompressed_size_without_header;
        if (h.type == HFILE_BLOCK_DATA || h.type == HFILE_BLOCK_ENCODED_DATA)
            s = check_data_block(cs, &h, off, size, b, err);
        hfile_block_free(b);
        if (s != KILN_OK)
            return s;
        off += size;
    }
    return KILN_OK;
}

static kiln_status
check_bloom_chunks(hfile_reader *r, const bloom_meta *m, kiln_err *err)
{
    if (!m->usable)
        return KILN_OK;
    uint64_t total = 0;
    for (uint32_t i = 0; i < m->nchunks; i++) {
        block_cache_handle *h;
        const hfile_block *b;
        kiln_status s = hfile_reader_block_get(r, m->chunks[i].offset, m->chunks[i].on_disk_size,
                                  TYPE_BIT(HFILE_BLOCK_BLOOM_CHUNK), &h, &b, err);
        if (s != KILN_OK)
            return s;
        total += b->len;
        block_cache_release(r->cache, h);
        if (i > 0) {
            kslice a = m->chunks[i - 1].key, k = m->chunks[i].key;
            int c = m->cell_keys ? hfile_reader_rowcol_compare(a.p, a.n, k.p, k.n)
                                 : kslice_cmp(a, k);
            if (c >= 0)
                return rerr(r, err, KILN_CORRUPTION,
                            "bloom metadata at offset %llu: chunk %u is out of order",
                            (unsigned long long)m->offset, i);
        }
    }
    if (total != m->total_bytes)
        return rerr(r, err, KILN_CORRUPTION,
                    "bloom metadata at offset %llu: chunks hold %llu bytes, metadata says %llu",
                    (unsigned long long)m->offset, (unsigned long long)total,
                    (unsigned long long)m->total_bytes);
    return KILN_OK;
}

static kiln_status
check_totals(check_state *cs, kiln_err *err)
{
    hfile_reader *r = cs->r;
    const hfile_trailer *t = &r->t;
    if (!cs->cur_done && r->root_count > 0) {
        hfile_index_entry e;
        hfile_cursor_data_entry(&cs->cur, &e);
        return rerr(r, err, KILN_CORRUPTION, "index entry for offset %llu has no data block",
                    (unsigned long long)e.offset);
    }
    if (cs->cells != t->entry_count)
        return rerr(r, err, KILN_CORRUPTION, "trailer: %llu cells, the data blocks hold %llu",
                    (unsigned long long)t->entry_count, (unsigned long long)cs->cells);
    if (cs->data_blocks > 0 &&
        (t->first_data_block_offset != cs->first_data || t->last_data_block_offset != cs->last_data))
        return rerr(r, err, KILN_CORRUPTION,
                    "trailer: data blocks from %llu to %llu, the file has them from %llu to %llu",
                    (unsigned long long)t->first_data_block_offset,
                    (unsigned long long)t->last_data_block_offset,
                    (unsigned long long)cs->first_data, (unsigned long long)cs->last_data);
    size_t extra = r->root_len - r->root_used;
    if (extra != (r->levels > 1 ? HFILE_MID_KEY_METADATA_SIZE : 0))
        return rerr(r, err, KILN_CORRUPTION, "data index root: %zu bytes after the entries",
                    extra);
    uint64_t total = cs->uncompressed + r->loo_uncompressed + r->trailer_size;
    if (total != t->total_uncompressed_bytes)
        return rerr(r, err, KILN_CORRUPTION,
                    "trailer: total uncompressed bytes %llu, the blocks add up to %llu",
                    (unsigned long long)t->total_uncompressed_bytes, (unsigned long long)total);
    uint64_t idx = cs->index_uncompressed + r->root_len;
    if (idx != t->uncompressed_data_index_size)
        return rerr(r, err, KILN_CORRUPTION,
                    "trailer: data index size %llu, the index blocks add up to %llu",
                    (unsigned long long)t->uncompressed_data_index_size, (unsigned long long)idx);
    if (cs->cells > 0) {
        if (r->last_key.p == NULL)
            return rerr(r, err, KILN_CORRUPTION, "file info lacks %s", HFILE_FI_LASTKEY);
        if (!kslice_eq(r->last_key, buf_slice(&cs->last_key)))
            return rerr(r, err, KILN_CORRUPTION, "file info %s is not the last cell's key",
                        HFILE_FI_LASTKEY);
    }
    return KILN_OK;
}

kiln_status
hfile_reader_check(hfile_reader *r, uint64_t *cells_out, kiln_err *err)
{
    check_state cs;
    memset(&cs, 0, sizeof cs);
    cs.r = r;
    cs.cur.r = r;
    cs.cur.levels = r->levels;
    cs.cur.checking = 1;
    buf_init(&cs.last_key);
    buf_init(&cs.last_row);
    buf_init(&cs.scratch);
    for (int i = 0; i < HFILE_BLOCK_TYPE_COUNT; i++)
        cs.prev_of_type[i] = -1;

    kiln_status s = KILN_OK;
    for (uint32_t i = 1; i < r->root_count && s == KILN_OK; i++)
        if (cell_key_compare(r->root[i - 1].key.p, r->root[i - 1].key.n, r->root[i].key.p,
                             r->root[i].key.n) >= 0)
            s = rerr(r, err, KILN_CORRUPTION, "data index root: entry %u is out of order", i);
    if (s == KILN_OK) {
        s = hfile_cursor_seek(&cs.cur, POS_FIRST, NULL, err);
        if (s == KILN_NOT_FOUND) {
            cs.cur_done = 1;
            s = KILN_OK;
        }
    }
    if (s == KILN_OK)
        s = check_blocks(&cs, err);
    if (s == KILN_OK)
        s = check_totals(&cs, err);
    if (s == KILN_OK)
        s = check_bloom_chunks(r, &r->general, err);
    if (s == KILN_OK)
        s = check_bloom_chunks(r, &r->delfam, err);
    hfile_cursor_release(&cs.cur);
    buf_free(&cs.last_key);
    buf_free(&cs.last_row);
    buf_free(&cs.scratch);
    if (s == KILN_OK && cells_out)
        *cells_out = cs.cells;
    return s;
}
