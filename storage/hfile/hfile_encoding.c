/* hfile_encoding.c -- decoders for HFile data blocks: NONE (DATABLK*) and the
 * DATABLKE encodings PREFIX, DIFF, FAST_DIFF and ROW_INDEX_V1, each turned
 * into a flat array of cell positions once, when the block is loaded (the
 * decoded block of hfile_block.h).
 *
 * DATABLKE payload: u16 encoding id, then for PREFIX/DIFF/FAST_DIFF an i32
 * unencoded size and the delta-coded cells, each followed by (with tags) a
 * LEB128 tags length and the tags and (with mvcc) a vlong mvcc. Per cell:
 *
 *   PREFIX:    LEB keyLen-common | LEB valueLen | LEB common | key suffix | value
 *   DIFF:      [first cell only: u8 famLen, family] | u8 flag | LEB keyLen (unless
 *              flag&1) | LEB valueLen (unless flag&2) | LEB common | rest of row
 *              (if the row changed; family is implied) | qualifier (suffix) |
 *              ts: ((flag>>4)&7)+1 bytes little-endian, negated if flag&0x80, a
 *              difference from the previous ts if flag&8 | type (unless flag&4) | value
 *   FAST_DIFF: u8 flag | LEB keyLen (unless flag&8) | LEB valueLen (unless flag&16) |
 *              LEB common | first cell: key, value | later: rest of row (if the row
 *              changed; family copied) + qualifier, or the qualifier suffix |
 *              8-(flag&7) ts bytes | type (unless flag&32) | value (unless flag&64)
 *   ROW_INDEX_V1: NONE-format cells (u16 tags length) | i32 rows | i32 row
 *              offsets[rows] | i32 size of the cells
 *
 * "common" counts bytes shared with the previous cell's serialized key (row
 * length, row, family length, family, qualifier; never the timestamp).
 */
#include "storage/hfile/hfile_encoding.h"

#include "storage/base/buf.h"
#include "storage/base/coding.h"

#include <stdlib.h>
#include <string.h>

/* The largest block Kiln decodes: far above any real HBase block (block size
 * plus one cell of at most hbase.server.keyvalue.maxsize). */
#define DECODED_MAX ((size_t)1 << 30)

/* ------------------------------------------------------------------ helpers */

typedef struct reader {
    const uint8_t *p;
    size_t n;
    size_t pos;
} reader;

static int
rd_u8(reader *r, uint8_t *v)
{
    if (r->pos >= r->n)
        return -1;
    *v = r->p[r->pos++];
    return 0;
}

/* HBase ByteBufferUtils compressed int (LEB128), as a non-negative Java int. */
static int
rd_leb(reader *r, uint32_t *v)
{
    uint64_t x;
    size_t used = coding_get_varint(r->p + r->pos, r->p + r->n, &x);
    if (used == 0 || x > INT32_MAX)
        return -1;
    r->pos += used;
    *v = (uint32_t)x;
    return 0;
}

static int
rd_copy(reader *r, uint8_t *dst, size_t k)
{
    if (k > r->n - r->pos)
        return -1;
    if (k)
        memcpy(dst, r->p + r->pos, k);
    r->pos += k;
    return 0;
}

static int
rd_vlong(reader *r, uint64_t *v)
{
    int64_t x;
    size_t used = coding_get_vlong(r->p + r->pos, r->p + r->n, &x);
    if (used == 0)
        return -1;
    r->pos += used;
    *v = (uint64_t)x;
    return 0;
}

/* ------------------------------------------------------------------ in-place cells */

/* Parse NONE-format cells in p[0..n): i32 keyLen, i32 valueLen, key, value,
 * [tags length (u16) + tags], [mvcc]. With cells NULL only count and check;
 * otherwise fill cells[] (offsets relative to p, plus base). */
static kiln_status
parse_flat_cells(const uint8_t *p, size_t n, const hfile_cell_format *fmt, int mvcc_one_byte,
                 size_t base, hfile_cellpos *cells, uint32_t *count, kiln_err *err)
{
    reader r = {p, n, 0};
    uint32_t i = 0;
    while (r.pos < n) {
        size_t start = r.pos;
        if (n - r.pos < 8)
            return status_set(err, KILN_CORRUPTION,
                              "cell %u at payload offset %zu: truncated lengths", i, base + start);
        uint32_t klen = coding_get_be32(p + r.pos);
        uint32_t vlen = coding_get_be32(p + r.pos + 4);
        r.pos += 8;
        if (klen > n - r.pos || vlen > n - r.pos - klen)
            return status_set(err, KILN_CORRUPTION,
                              "cell %u at payload offset %zu: key %u + value %u bytes overrun the block",
                              i, base + start, klen, vlen);
        if (!hfile_block_key_ok(p + r.pos, klen))
            return status_set(err, KILN_CORRUPTION,
                              "cell %u at payload offset %zu: malformed key of %u bytes", i,
                              base + start, klen);
        size_t key_off = r.pos;
        r.pos += (size_t)klen + vlen;
        size_t tags_off = r.pos;
        uint32_t tlen = 0;
        if (fmt->tags) {
            if (n - r.pos < 2)
                return status_set(err, KILN_CORRUPTION,
                                  "cell %u at payload offset %zu: truncated tags length", i,
                                  base + start);
            tlen = coding_get_be16(p + r.pos);
            r.pos += 2;
            tags_off = r.pos;
            if (tlen > n - r.pos)
                return status_set(err, KILN_CORRUPTION,
                                  "cell %u at payload offset %zu: %u tag bytes overrun the block",
                                  i, base + start, tlen);
            r.pos += tlen;
        }
        uint64_t mvcc = 0;
        if (fmt->mvcc) {
            if (mvcc_one_byte) {
                if (r.pos >= n)
                    return status_set(err, KILN_CORRUPTION,
                                      "cell %u at payload offset %zu: truncated mvcc", i,
                                      base + start);
                r.pos++;
            } else if (rd_vlong(&r, &mvcc) != 0) {
                return status_set(err, KILN_CORRUPTION,
                                  "cell %u at payload offset %zu: truncated mvcc", i, base + start);
            }
        }
        if (i == UINT32_MAX)
            return status_set(err, KILN_CORRUPTION, "too many cells in one block");
        if (cells) {
            hfile_cellpos *cp = &cells[i];
            cp->key_off = (uint32_t)(key_off + base);
            cp->key_len = klen;
            cp->val_len = vlen;
            cp->tags_off = (uint32_t)(tags_off + base);
            cp->tags_len = tlen;
            cp->cell_off = (uint32_t)(start + base);
            cp->mvcc = mvcc;
        }
        i++;
    }
    *count = i;
    return KILN_OK;
}

/* NONE blocks (and DATABLKE with id NONE): cells in place. skip = bytes
 * before the first cell (the encoding id), kept in bytes[] so offsets match
 * the payload. */
static kiln_status
decode_in_place(const uint8_t *payload, size_t n, size_t skip, size_t cells_len,
                const hfile_cell_format *fmt, int mvcc_one_byte, hfile_encoding enc,
                hfile_block **out, kiln_err *err)
{
    uint32_t count;
    kiln_status s = parse_flat_cells(payload + skip, cells_len, fmt, mvcc_one_byte, skip, NULL,
                                     &count, err);
    if (s != KILN_OK)
        return s;
    if (count == 0)
        return status_set(err, KILN_CORRUPTION, "data block holds no cells");
    hfile_block *b = hfile_block_alloc(HFILE_BLOCK_DATA, count, count, n);
    memcpy((uint8_t *)b->bytes, payload, n);
    parse_flat_cells(b->bytes + skip, cells_len, fmt, mvcc_one_byte, skip,
                     (hfile_cellpos *)b->cells, &count, NULL);
    b->encoding = enc;
    hfile_block_fill_row_words(b);
    *out = b;
    return KILN_OK;
}

/* ROW_INDEX_V1: flat cells, then i32 rows, i32 offsets[rows], i32 cells size.
 * Every row offset must be the start of a cell, ascending, the first 0. */
static kiln_status
decode_row_index(const uint8_t *payload, size_t n, const hfile_cell_format *fmt,
                 hfile_block **out, kiln_err *err)
{
    const uint8_t *p = payload + 2;
    size_t len = n - 2;
    if (len < 8)
        return status_set(err, KILN_CORRUPTION, "ROW_INDEX_V1 block of %zu bytes", n);
    uint32_t data = coding_get_be32(p + len - 4);
    if (data > len - 8)
        return status_set(err, KILN_CORRUPTION, "ROW_INDEX_V1: cell size %u overruns the block",
                          data);
    uint32_t rows = coding_get_be32(p + data);
    if (rows > (len - 8 - data) / 4 || 8 + (size_t)data + 4 * (size_t)rows != len)
        return status_set(err, KILN_CORRUPTION,
                          "ROW_INDEX_V1: %u row offsets do not fill the block trailer", rows);
    hfile_block *b = NULL;
    kiln_status s = decode_in_place(payload, n, 2, data, fmt, 0, HFILE_ENCODING_ROW_INDEX_V1,
                                    &b, err);
    if (s != KILN_OK)
        return s;
    uint32_t c = 0;
    for (uint32_t j = 0; j < rows; j++) {
        uint32_t off = coding_get_be32(p + data + 4 + 4 * (size_t)j) + 2;
        while (c < b->count && b->cells[c].cell_off < off)
            c++;
        if (c == b->count || b->cells[c].cell_off != off || (j == 0 && c != 0)) {
            hfile_block_free(b);
            return status_set(err, KILN_CORRUPTION,
                              "ROW_INDEX_V1: row %u offset %u is not a cell boundary", j, off - 2);
        }
    }
    if (rows == 0) {
        hfile_block_free(b);
        return status_set(err, KILN_CORRUPTION, "ROW_INDEX_V1: no rows");
    }
    *out = b;
    return KILN_OK;
}

/* ------------------------------------------------------------------ delta encodings */

typedef struct flat_out {
    kbuf bytes;         /* rebuilt cells: key, value, tags */
    kbuf cells;         /* hfile_cellpos[] */
    size_t limit;       /* bytes may not exceed the block's declared unencoded size */
    uint32_t count;
    /* the previous cell, as offsets into bytes */
    size_t prev_key, prev_klen, prev_val, prev_vlen;
} flat_out;

/* Room for k more output bytes within the declared size. */
static int
out_room(flat_out *o, size_t k)
{
    if (k > o->limit - o->bytes.len)
        return -1;
    /* at least one byte: the callers' data + len must never be NULL + 0 */
    buf_reserve(&o->bytes, k != 0 ? k : 1);
    return 0;
}

/* Tags and mvcc after an encoded cell: LEB128 tags length + tags, vlong mvcc. */
static int
read_tail(reader *r, flat_out *o, const hfile_cell_format *fmt, hfile_cellpos *cp)
{
    cp->tags_off = (uint32_t)o->bytes.len;
    cp->tags_len = 0;
    if (fmt->tags) {
        uint32_t tlen;
        if (rd_leb(r, &tlen) != 0 || out_room(o, tlen) != 0)
            return -1;
        if (rd_copy(r, o->bytes.data + o->bytes.len, tlen) != 0)
            return -1;
        o->bytes.len += tlen;
        cp->tags_len = tlen;
    }
    cp->mvcc = 0;
    if (fmt->mvcc && rd_vlong(r, &cp->mvcc) != 0)
        return -1;
    return 0;
}

static void
out_push(flat_out *o, hfile_cellpos *cp)
{
    buf_append(&o->cells, cp, sizeof *cp);
    o->prev_key = cp->key_off;
    o->prev_klen = cp->key_len;
    o->prev_val = (size_t)cp->key_off + cp->key_len;
    o->prev_vlen = cp->val_len;
    o->count++;
}

#define CELL_ERR(what)                                                                     \
    status_set(err, KILN_CORRUPTION, "cell %u at payload offset %zu: %s", o->count,        \
               start, what)

/* PREFIX: see the table at the top of the file. */
static kiln_status
prefix_cell(reader *r, flat_out *o, const hfile_cell_format *fmt, kiln_err *err)
{
    size_t start = r->pos;
    uint32_t suffix, vlen, common;
    if (rd_leb(r, &suffix) != 0 || rd_leb(r, &vlen) != 0 || rd_leb(r, &common) != 0)
        return CELL_ERR("truncated lengths");
    if (o->count == 0 ? common != 0 : common > o->prev_klen)
        return CELL_ERR("common prefix longer than the previous key");
    size_t klen = (size_t)suffix + common;
    if (klen > INT32_MAX || out_room(o, klen + vlen) != 0)
        return CELL_ERR("cell larger than the block's unencoded size");
    hfile_cellpos cp = {0};
    cp.cell_off = (uint32_t)start;
    cp.key_off = (uint32_t)o->bytes.len;
    cp.key_len = (uint32_t)klen;
    cp.val_len = vlen;
    uint8_t *kp = o->bytes.data + o->bytes.len;
    if (common)
        memcpy(kp, o->bytes.data + o->prev_key, common);
    if (rd_copy(r, kp + common, suffix) != 0 || rd_copy(r, kp + klen, vlen) != 0)
        return CELL_ERR("truncated key or value");
    if (!hfile_block_key_ok(kp, klen))
        return CELL_ERR("malformed key");
    o->bytes.len += klen + vlen;
    if (read_tail(r, o, fmt, &cp) != 0)
        return CELL_ERR("bad tags or mvcc");
    out_push(o, &cp);
    return KILN_OK;
}

/* The row part shared by DIFF and FAST_DIFF when the row changed: complete
 * the row length (if common < 2) and the row, at kp[w..]. On return *w is
 * 2 + row length. klen bounds the row. */
static int
read_row_rest(reader *r, uint8_t *kp, size_t *w, size_t klen)
{
    if (*w < 2) {
        if (rd_copy(r, kp + *w, 2 - *w) != 0)
            return -1;
        *w = 2;
    }
    size_t rlen = coding_get_be16(kp);
    if (2 + rlen < *w || 2 + rlen + 1 + 9 > klen)
        return -1;
    if (rd_copy(r, kp + *w, 2 + rlen - *w) != 0)
        return -1;
    *w = 2 + rlen;
    return 0;
}

#define DIFF_SAME_KEY_LEN 1
#define DIFF_SAME_VALUE_LEN 2
#define DIFF_SAME_TYPE 4
#define DIFF_TS_IS_DIFF 8
#define DIFF_TS_SIGN 0x80

static kiln_status
diff_cell(reader *r, flat_out *o, const hfile_cell_format *fmt, const uint8_t *family,
          size_t famlen, kiln_err *err)
{
    size_t start = r->pos;
    uint8_t flag;
    if (rd_u8(r, &flag) != 0)
        return CELL_ERR("truncated flag");
    int first = o->count == 0;
    uint32_t klen = (uint32_t)o->prev_klen, vlen = (uint32_t)o->prev_vlen, common;
    if (!(flag & DIFF_SAME_KEY_LEN) && rd_leb(r, &klen) != 0)
        return CELL_ERR("truncated key length");
    if (!(flag & DIFF_SAME_VALUE_LEN) && rd_leb(r, &vlen) != 0)
        return CELL_ERR("truncated value length");
    if (rd_leb(r, &common) != 0)
        return CELL_ERR("truncated common length");
    if (klen < CELL_KEY_INFRASTRUCTURE || (size_t)common + 9 > klen ||
        (!first && (size_t)common + 9 > o->prev_klen) || (first && common != 0))
        return CELL_ERR("bad key or common prefix length");
    if (out_room(o, (size_t)klen + vlen) != 0)
        return CELL_ERR("cell larger than the block's unencoded size");
    uint8_t *kp = o->bytes.data + o->bytes.len;
    const uint8_t *pk = o->bytes.data + o->prev_key;
    size_t prev_rlen = first ? 0 : coding_get_be16(pk);
    if (common)
        memcpy(kp, pk, common);
    size_t w = common;
    if (first || common < prev_rlen + 2) {
        if (read_row_rest(r, kp, &w, klen) != 0 || w + 1 + famlen + 9 > klen)
            return CELL_ERR("bad row");
        kp[w++] = (uint8_t)famlen;
        if (famlen)
            memcpy(kp + w, family, famlen);
        w += famlen;
    }
    if (rd_copy(r, kp + w, klen - 9 - w) != 0)
        return CELL_ERR("truncated qualifier");
    w = klen - 9;
    uint8_t nts = (uint8_t)(((flag >> 4) & 7) + 1);
    uint64_t ts = 0;
    for (uint8_t i = 0; i < nts; i++) {
        uint8_t b;
        if (rd_u8(r, &b) != 0)
            return CELL_ERR("truncated timestamp");
        ts |= (uint64_t)b << (8 * i);
    }
    if (flag & DIFF_TS_SIGN)
        ts = 0 - ts;
    if (flag & DIFF_TS_IS_DIFF) {
        if (first)
            return CELL_ERR("timestamp difference in the first cell");
        ts = coding_get_be64(pk + o->prev_klen - 9) - ts;
    }
    coding_put_be64(kp + w, ts);
    w += 8;
    if (flag & DIFF_SAME_TYPE) {
        if (first)
            return CELL_ERR("same-type flag in the first cell");
        kp[w] = pk[o->prev_klen - 1];
    } else if (rd_u8(r, &kp[w]) != 0) {
        return CELL_ERR("truncated type");
    }
    if (rd_copy(r, kp + klen, vlen) != 0)
        return CELL_ERR("truncated value");
    if (!hfile_block_key_ok(kp, klen))
        return CELL_ERR("malformed key");
    hfile_cellpos cp = {0};
    cp.cell_off = (uint32_t)start;
    cp.key_off = (uint32_t)o->bytes.len;
    cp.key_len = klen;
    cp.val_len = vlen;
    o->bytes.len += (size_t)klen + vlen;
    if (read_tail(r, o, fmt, &cp) != 0)
        return CELL_ERR("bad tags or mvcc");
    out_push(o, &cp);
    return KILN_OK;
}

#define FD_TS_MASK 7
#define FD_SAME_KEY_LEN 8
#define FD_SAME_VALUE_LEN 16
#define FD_SAME_TYPE 32
#define FD_SAME_VALUE 64

static kiln_status
fast_diff_cell(reader *r, flat_out *o, const hfile_cell_format *fmt, kiln_err *err)
{
    size_t start = r->pos;
    uint8_t flag;
    if (rd_u8(r, &flag) != 0)
        return CELL_ERR("truncated flag");
    int first = o->count == 0;
    uint32_t klen = (uint32_t)o->prev_klen, vlen = (uint32_t)o->prev_vlen, common;
    if (!(flag & FD_SAME_KEY_LEN) && rd_leb(r, &klen) != 0)
        return CELL_ERR("truncated key length");
    if (!(flag & FD_SAME_VALUE_LEN) && rd_leb(r, &vlen) != 0)
        return CELL_ERR("truncated value length");
    if (rd_leb(r, &common) != 0)
        return CELL_ERR("truncated common length");
    if (klen < CELL_KEY_INFRASTRUCTURE || (size_t)common + 9 > klen ||
        (!first && (size_t)common + 9 > o->prev_klen))
        return CELL_ERR("bad key or common prefix length");
    if (out_room(o, (size_t)klen + vlen) != 0)
        return CELL_ERR("cell larger than the block's unencoded size");
    uint8_t *kp = o->bytes.data + o->bytes.len;
    hfile_cellpos cp = {0};
    cp.cell_off = (uint32_t)start;
    cp.key_off = (uint32_t)o->bytes.len;
    cp.key_len = klen;
    cp.val_len = vlen;
    if (first) {
        if (rd_copy(r, kp, (size_t)klen + vlen) != 0)
            return CELL_ERR("truncated key or value");
    } else {
        const uint8_t *pk = o->bytes.data + o->prev_key;
        size_t prev_rlen = coding_get_be16(pk);
        if (common)
            memcpy(kp, pk, common);
        size_t w = common;
        if (common < prev_rlen + 2) {
            /* the row changed: its rest, the family copied, then the qualifier */
            size_t pf = pk[2 + prev_rlen];
            if (read_row_rest(r, kp, &w, klen) != 0 || w + 1 + pf + 9 > klen)
                return CELL_ERR("bad row");
            memcpy(kp + w, pk + 2 + prev_rlen, 1 + pf);
            w += 1 + pf;
        }
        if (rd_copy(r, kp + w, klen - 9 - w) != 0)
            return CELL_ERR("truncated qualifier");
        w = klen - 9;
        size_t shared_ts = flag & FD_TS_MASK;
        memcpy(kp + w, pk + o->prev_klen - 9, shared_ts);
        if (rd_copy(r, kp + w + shared_ts, 8 - shared_ts) != 0)
            return CELL_ERR("truncated timestamp");
        w += 8;
        if (flag & FD_SAME_TYPE)
            kp[w] = pk[o->prev_klen - 1];
        else if (rd_u8(r, &kp[w]) != 0)
            return CELL_ERR("truncated type");
        if (flag & FD_SAME_VALUE) {
            if (vlen != o->prev_vlen)
                return CELL_ERR("same-value flag with a different value length");
            if (vlen)
                memcpy(kp + klen, o->bytes.data + o->prev_val, vlen);
        } else if (rd_copy(r, kp + klen, vlen) != 0) {
            return CELL_ERR("truncated value");
        }
    }
    if (!hfile_block_key_ok(kp, klen))
        return CELL_ERR("malformed key");
    o->bytes.len += (size_t)klen + vlen;
    if (read_tail(r, o, fmt, &cp) != 0)
        return CELL_ERR("bad tags or mvcc");
    out_push(o, &cp);
    return KILN_OK;
}

static kiln_status
decode_delta(const uint8_t *payload, size_t n, hfile_encoding enc, const hfile_cell_format *fmt,
             hfile_block **out, kiln_err *err)
{
    if (n < 6)
        return status_set(err, KILN_CORRUPTION, "%s block of %zu bytes",
                          hfile_encoding_name(enc), n);
    uint32_t unencoded = coding_get_be32(payload + 2);
    if (unencoded > INT32_MAX || unencoded > DECODED_MAX)
        return status_set(err, KILN_CORRUPTION, "%s block: bad unencoded size %u",
                          hfile_encoding_name(enc), unencoded);
    reader r = {payload, n, 6};
    flat_out o;
    memset(&o, 0, sizeof o);
    buf_init(&o.bytes);
    buf_init(&o.cells);
    o.limit = unencoded;
    /* Reserve what the block says it holds, but not more than the payload
     * could plausibly expand to, so a lying header cannot make us allocate. */
    size_t guess = (size_t)unencoded < 64 * n ? unencoded : 64 * n;
    buf_reserve(&o.bytes, guess);

    const uint8_t *family = NULL;
    uint8_t famlen = 0;
    if (enc == HFILE_ENCODING_DIFF) {
        /* the family, once, before the first cell */
        if (rd_u8(&r, &famlen) != 0 || famlen > n - r.pos) {
            buf_free(&o.bytes);
            return status_set(err, KILN_CORRUPTION, "DIFF block: truncated family");
        }
        family = payload + r.pos;
        r.pos += famlen;
    }
    kiln_status s = KILN_OK;
    while (r.pos < n && s == KILN_OK) {
        switch (enc) {
        case HFILE_ENCODING_PREFIX:
            s = prefix_cell(&r, &o, fmt, err);
            break;
        case HFILE_ENCODING_DIFF:
            s = diff_cell(&r, &o, fmt, family, famlen, err);
            break;
        default:
            s = fast_diff_cell(&r, &o, fmt, err);
            break;
        }
    }
    if (s == KILN_OK && o.count == 0)
        s = status_set(err, KILN_CORRUPTION, "data block holds no cells");
    if (s != KILN_OK) {
        buf_free(&o.bytes);
        buf_free(&o.cells);
        return s;
    }
    hfile_block *b = hfile_block_alloc(HFILE_BLOCK_ENCODED_DATA, o.count, o.count, o.bytes.len);
    memcpy((hfile_cellpos *)b->cells, o.cells.data, o.cells.len);
    if (o.bytes.len)
        memcpy((uint8_t *)b->bytes, o.bytes.data, o.bytes.len);
    b->encoding = enc;
    hfile_block_fill_row_words(b);
    buf_free(&o.bytes);
    buf_free(&o.cells);
    *out = b;
    return KILN_OK;
}

kiln_status
hfile_encoding_decode(const uint8_t *payload, size_t n, int encoded, const hfile_cell_format *fmt,
                      hfile_block **out, kiln_err *err)
{
    if (n > DECODED_MAX)
        return status_set(err, KILN_CORRUPTION, "data block of %zu bytes is too large", n);
    if (!encoded)
        return decode_in_place(payload, n, 0, n, fmt, fmt->mvcc_one_byte, HFILE_ENCODING_NONE,
                               out, err);
    if (n < 2)
        return status_set(err, KILN_CORRUPTION, "encoded data block of %zu bytes", n);
    uint16_t id = coding_get_be16(payload);
    switch (id) {
    case HFILE_ENCODING_NONE:
        return decode_in_place(payload, n, 2, n - 2, fmt, fmt->mvcc_one_byte,
                               HFILE_ENCODING_NONE, out, err);
    case HFILE_ENCODING_PREFIX:
    case HFILE_ENCODING_DIFF:
    case HFILE_ENCODING_FAST_DIFF:
        return decode_delta(payload, n, (hfile_encoding)id, fmt, out, err);
    case HFILE_ENCODING_ROW_INDEX_V1:
        return decode_row_index(payload, n, fmt, out, err);
    default:
        return status_set(err, id <= 7 ? KILN_UNSUPPORTED : KILN_CORRUPTION,
                          "data block encoding id %u is not supported", id);
    }
}
