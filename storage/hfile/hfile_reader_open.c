/* hfile_reader_open.c -- opening an HFile v3 file (trailer, load-on-open section:
 * data and meta index roots, FileInfo, bloom metadata; the pin tables) and
 * closing it; reading one block from disk and fetching it through the block
 * cache.
 *
 * Every block read from disk is checked before use: the header decodes, its
 * on-disk size equals the size the index gave, its type is the one expected
 * at that place, its CRC32C sums match, and it decompresses to exactly the
 * size the header states. Data blocks are decoded once (hfile_encoding.c)
 * and cached decoded; index and bloom chunk blocks are cached as payloads.
 */
#include "storage/hfile/hfile_reader_int.h"

#include "storage/base/coding.h"
#include "storage/base/compress.h"
#include "storage/base/env.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ blocks */

/* Check a block whose on-disk bytes are raw[0..n) (n = its full on-disk
 * size), read at file offset off: header, type, checksums; then decompress.
 * *payload gets the uncompressed payload: either raw + 33 (codec NONE,
 * *owned = NULL) or a malloc'd buffer in *owned. */
static kiln_status
block_verify(const hfile_reader *r, const uint8_t *raw, uint64_t n, uint64_t off,
             unsigned type_mask, hfile_block_header *h, const uint8_t **payload, size_t *plen,
             uint8_t **owned, kiln_err *err)
{
    kiln_err e;
    status_clear(&e);
    *owned = NULL;
    if (n < HFILE_BLOCK_HEADER_SIZE)
        return rerr(r, err, KILN_CORRUPTION, "truncated block at offset %llu",
                    (unsigned long long)off);
    if (hfile_block_header_decode(raw, h, &e) != KILN_OK)
        return rerr(r, err, KILN_CORRUPTION, "%s at offset %llu", e.msg, (unsigned long long)off);
    if ((uint64_t)h->on_disk_size_without_header + HFILE_BLOCK_HEADER_SIZE != n)
        return rerr(r, err, KILN_CORRUPTION,
                    "block at offset %llu: header says %llu bytes on disk, index says %llu",
                    (unsigned long long)off,
                    (unsigned long long)h->on_disk_size_without_header + HFILE_BLOCK_HEADER_SIZE,
                    (unsigned long long)n);
    if (type_mask && !(type_mask & TYPE_BIT(h->type)))
        return rerr(r, err, KILN_CORRUPTION, "unexpected %s block at offset %llu",
                    hfile_block_type_name(h->type), (unsigned long long)off);
    if (r->checksum_known && (h->checksum_type != r->checksum_type ||
                              h->bytes_per_checksum != r->bytes_per_checksum))
        return rerr(r, err, KILN_CORRUPTION,
                    "block at offset %llu: checksum type %u per %u bytes, the file uses %u per %u",
                    (unsigned long long)off, h->checksum_type, h->bytes_per_checksum,
                    r->checksum_type, r->bytes_per_checksum);
    size_t dsz = h->on_disk_data_size_with_header;
    long bad = hfile_checksum_verify(h->checksum_type, raw, dsz, h->bytes_per_checksum, raw + dsz);
    if (bad >= 0)
        return rerr(r, err, KILN_CORRUPTION, "block checksum mismatch at offset %llu (chunk %ld)",
                    (unsigned long long)off, bad);
    const uint8_t *stored = raw + HFILE_BLOCK_HEADER_SIZE;
    size_t slen = dsz - HFILE_BLOCK_HEADER_SIZE;
    size_t ulen = h->uncompressed_size_without_header;
    if (r->codec == CODEC_NONE) {
        if (slen != ulen)
            return rerr(r, err, KILN_CORRUPTION,
                        "block at offset %llu: %zu payload bytes, header says %zu uncompressed",
                        (unsigned long long)off, slen, ulen);
        *payload = stored;
        *plen = slen;
        return KILN_OK;
    }
    /* The declared size is checked against what the stored bytes can
     * decode to and against the file's own total before it is allocated:
     * a checksum proves the bytes are as written, not that they are sane. */
    if (ulen > SECTION_MAX || ulen > decompress_bound(r->codec, slen) ||
        ulen > r->t.total_uncompressed_bytes)
        return rerr(r, err, KILN_CORRUPTION,
                    "block at offset %llu: declares %zu uncompressed bytes, more than its %zu "
                    "%s bytes or the file's %llu can hold",
                    (unsigned long long)off, ulen, slen, compress_codec_name(r->codec),
                    (unsigned long long)r->t.total_uncompressed_bytes);
    uint8_t *buf = kiln_malloc(ulen ? ulen : 1);
    kiln_status s = decompress_block(r->codec, stored, slen, buf, ulen, &e);
    if (s != KILN_OK) {
        free(buf);
        return rerr(r, err, s, "block at offset %llu: %s", (unsigned long long)off, e.msg);
    }
    *payload = buf;
    *plen = ulen;
    *owned = buf;
    return KILN_OK;
}

/* Turn a verified payload into the cached form. */
static kiln_status
block_build(const hfile_reader *r, const hfile_block_header *h, uint64_t off,
            const uint8_t *payload, size_t plen, hfile_block **out, kiln_err *err)
{
    kiln_err e;
    status_clear(&e);
    uint32_t count = 0;
    switch (h->type) {
    case HFILE_BLOCK_DATA:
    case HFILE_BLOCK_ENCODED_DATA: {
        kiln_status s = hfile_encoding_decode(payload, plen, h->type == HFILE_BLOCK_ENCODED_DATA,
                                              &r->fmt, out, &e);
        if (s != KILN_OK)
            return rerr(r, err, s, "data block at offset %llu: %s", (unsigned long long)off,
                        e.msg);
        (*out)->type = h->type;
        return KILN_OK;
    }
    case HFILE_BLOCK_LEAF_INDEX:
    case HFILE_BLOCK_INTERMEDIATE_INDEX:
        if (hfile_nonroot_index_check(payload, plen, &count, &e) != KILN_OK)
            return rerr(r, err, KILN_CORRUPTION, "%s block at offset %llu: %s",
                        hfile_block_type_name(h->type), (unsigned long long)off, e.msg);
        if (count == 0)
            return rerr(r, err, KILN_CORRUPTION, "%s block at offset %llu has no entries",
                        hfile_block_type_name(h->type), (unsigned long long)off);
        *out = hfile_block_wrap_index(h->type, payload, plen, count);
        return KILN_OK;
    case HFILE_BLOCK_BLOOM_CHUNK:
        if (plen == 0)
            return rerr(r, err, KILN_CORRUPTION, "empty bloom chunk at offset %llu",
                        (unsigned long long)off);
        break;
    default:
        break;
    }
    *out = hfile_block_wrap(h->type, payload, plen, count);
    return KILN_OK;
}

/* Read the block at off of the given on-disk size from disk, verify and
 * build it. */
kiln_status
hfile_reader_block_load(const hfile_reader *r, uint64_t off, uint64_t size, unsigned type_mask,
                        hfile_block **out, hfile_block_header *hout, kiln_err *err)
{
    if (size < HFILE_BLOCK_HEADER_SIZE || off > r->data_end || size > r->data_end - off ||
        size > SECTION_MAX)
        return rerr(r, err, KILN_CORRUPTION,
                    "block at offset %llu of %llu bytes lies outside the data section (ends at %llu)",
                    (unsigned long long)off, (unsigned long long)size,
                    (unsigned long long)r->data_end);
    uint8_t *raw = kiln_malloc((size_t)size);
    kiln_status s = env_pread(r->f, off, raw, (size_t)size, err);
    if (s != KILN_OK) {
        free(raw);
        return s;
    }
    hfile_block_header h;
    const uint8_t *payload;
    size_t plen;
    uint8_t *owned;
    s = block_verify(r, raw, size, off, type_mask, &h, &payload, &plen, &owned, err);
    if (s == KILN_OK)
        s = block_build(r, &h, off, payload, plen, out, err);
    free(owned);
    free(raw);
    if (s == KILN_OK && hout)
        *hout = h;
    return s;
}

/* A block through the cache, pinned in *hp. */
kiln_status
hfile_reader_block_get(hfile_reader *r, uint64_t off, uint64_t size, unsigned type_mask,
                       block_cache_handle **hp, const hfile_block **bp, kiln_err *err)
{
    block_cache_handle *h = block_cache_lookup(r->cache, r->file_id, off);
    if (h == NULL) {
        hfile_block *b;
        kiln_status s = hfile_reader_block_load(r, off, size, type_mask, &b, NULL, err);
        if (s != KILN_OK)
            return s;
        h = block_cache_insert_block(r->cache, r->file_id, off, b, b->alloc);
    }
    const hfile_block *b = block_cache_data(h);
    if (!(type_mask & TYPE_BIT(b->type))) {
        block_cache_release(r->cache, h);
        return rerr(r, err, KILN_CORRUPTION, "unexpected %s block at offset %llu",
                    hfile_block_type_name((hfile_block_type)b->type), (unsigned long long)off);
    }
    *hp = h;
    *bp = b;
    return KILN_OK;
}

/* The block of slot i through the pin table: pinned for the reader's life on
 * first use. Falls back to an ordinary pinned read (*hp set, to release) when
 * the table is off. */
kiln_status
hfile_reader_block_get_pinned(hfile_reader *r, pin_table *pt, uint32_t i, uint64_t off,
                              uint64_t size, unsigned type_mask, block_cache_handle **hp,
                              const hfile_block **bp, kiln_err *err)
{
    *hp = NULL;
    if (pt->slots == NULL)
        return hfile_reader_block_get(r, off, size, type_mask, hp, bp, err);
    block_cache_handle *h = atomic_load_explicit(&pt->slots[i], memory_order_acquire);
    if (h == NULL) {
        kiln_status s = hfile_reader_block_get(r, off, size, type_mask, &h, bp, err);
        if (s != KILN_OK)
            return s;
        block_cache_handle *expected = NULL;
        if (!atomic_compare_exchange_strong(&pt->slots[i], &expected, h)) {
            block_cache_release(r->cache, h); /* another thread pinned it first */
            h = expected;
        }
    }
    *bp = block_cache_data(h);
    return KILN_OK;
}

static void
pin_table_init(pin_table *pt, uint32_t n)
{
    pt->n = n;
    pt->slots = kiln_calloc(n ? n : 1, sizeof *pt->slots);
}

static void
pin_table_free(block_cache *c, pin_table *pt)
{
    for (uint32_t i = 0; pt->slots && i < pt->n; i++)
        block_cache_release(c, atomic_load(&pt->slots[i]));
    free(pt->slots);
    pt->slots = NULL;
}

/* Pin the index blocks under the root and the bloom chunks when a shared
 * cache has room for them (their total is small next to the data: typically
 * 1-3%; all readers' pins together stay within a quarter of the cache), so a
 * Get does one cache lookup, for its data block. */
static void
setup_pins(hfile_reader *r, int shared_cache)
{
    if (!shared_cache)
        return;
    uint64_t want = r->t.uncompressed_data_index_size + r->general.total_bytes +
                    r->delfam.total_bytes;
    if (want > SIZE_MAX / 2 || !block_cache_reserve(r->cache, (size_t)want))
        return;
    r->pins_reserved = (size_t)want;
    if (r->levels > 1 && r->root_count > 0)
        pin_table_init(&r->root_children, r->root_count);
    if (r->general.usable)
        pin_table_init(&r->general.pins, r->general.nchunks);
    if (r->delfam.usable)
        pin_table_init(&r->delfam.pins, r->delfam.nchunks);
}

/* ------------------------------------------------------------------ open */

static const char *const accepted_comparators[] = {
    "",
    "org.apache.hadoop.hbase.KeyValue$KVComparator",
    "org.apache.hadoop.hbase.KeyValue$KeyComparator",
    "org.apache.hadoop.hbase.CellComparator",
    "org.apache.hadoop.hbase.CellComparatorImpl",
};

static kiln_status
check_trailer(hfile_reader *r, kiln_err *err)
{
    const hfile_trailer *t = &r->t;
    if (t->encrypted)
        return rerr(r, err, KILN_UNSUPPORTED, "trailer: encrypted files are not supported");
    if (t->compression_codec >= CODEC_COUNT)
        return rerr(r, err, KILN_CORRUPTION, "trailer: unknown compression codec %u",
                    t->compression_codec);
    r->codec = (kiln_codec)t->compression_codec;
    if (!compress_codec_readable(r->codec))
        return rerr(r, err, KILN_UNSUPPORTED, "trailer: compression %s is not supported",
                    compress_codec_name(r->codec));
    int cmp_ok = 0;
    for (size_t i = 0; i < sizeof accepted_comparators / sizeof accepted_comparators[0]; i++)
        if (strcmp(t->comparator_class_name, accepted_comparators[i]) == 0)
            cmp_ok = 1;
    if (!cmp_ok)
        return rerr(r, err, KILN_UNSUPPORTED, "trailer: comparator %s is not supported",
                    t->comparator_class_name);
    if (t->load_on_open_data_offset >= r->data_end)
        return rerr(r, err, KILN_CORRUPTION,
                    "trailer: load-on-open offset %llu is not before the trailer at %llu",
                    (unsigned long long)t->load_on_open_data_offset,
                    (unsigned long long)r->data_end);
    if (t->file_info_offset < t->load_on_open_data_offset || t->file_info_offset >= r->data_end)
        return rerr(r, err, KILN_CORRUPTION,
                    "trailer: file info offset %llu is outside the load-on-open section",
                    (unsigned long long)t->file_info_offset);
    if (r->data_end - t->load_on_open_data_offset > SECTION_MAX)
        return rerr(r, err, KILN_CORRUPTION, "trailer: load-on-open section of %llu bytes",
                    (unsigned long long)(r->data_end - t->load_on_open_data_offset));
    if (t->num_data_index_levels > MAX_INDEX_LEVELS)
        return rerr(r, err, KILN_CORRUPTION, "trailer: %u index levels", t->num_data_index_levels);
    if (t->data_index_count > 0 && t->num_data_index_levels == 0)
        return rerr(r, err, KILN_CORRUPTION, "trailer: index entries but 0 index levels");
    if (t->entry_count > 0 && t->data_index_count == 0)
        return rerr(r, err, KILN_CORRUPTION, "trailer: %llu cells but an empty index",
                    (unsigned long long)t->entry_count);
    r->levels = t->num_data_index_levels ? t->num_data_index_levels : 1;
    r->data_end = t->load_on_open_data_offset;
    return KILN_OK;
}

static kslice
root_key_at(const void *ctx, uint32_t i)
{
    return ((const hfile_reader *)ctx)->root[i].key;
}

static kiln_status
parse_root(hfile_reader *r, const uint8_t *p, size_t n, uint64_t off, kiln_err *err)
{
    kiln_err e;
    status_clear(&e);
    uint32_t count = r->t.data_index_count;
    if (count > n / 13)
        return rerr(r, err, KILN_CORRUPTION,
                    "data index root at offset %llu: %u entries cannot fit in %zu bytes",
                    (unsigned long long)off, count, n);
    r->root_payload = kiln_memdup(p, n);
    r->root_len = n;
    r->root = kiln_calloc(count ? count : 1, sizeof *r->root);
    r->root_count = count;
    r->memory += n + count * sizeof *r->root;
    if (hfile_root_index_decode(r->root_payload, n, count, r->root, &r->root_used, &e) != KILN_OK)
        return rerr(r, err, KILN_CORRUPTION, "data index root at offset %llu: %s",
                    (unsigned long long)off, e.msg);
    /* Nothing may follow the entries but the mid-key metadata of a multi-level
     * index: this is what catches a wrong entry count in the trailer. */
    size_t extra = n - r->root_used;
    if (extra != 0 && !(r->levels > 1 && extra == HFILE_MID_KEY_METADATA_SIZE))
        return rerr(r, err, KILN_CORRUPTION,
                    "data index root at offset %llu: %zu bytes after %u entries",
                    (unsigned long long)off, extra, count);
    for (uint32_t i = 0; i < count; i++) {
        kiln_cell c;
        if (cell_key_decode(r->root[i].key.p, r->root[i].key.n, &c, &e) != KILN_OK)
            return rerr(r, err, KILN_CORRUPTION, "data index root at offset %llu: entry %u: %s",
                        (unsigned long long)off, i, e.msg);
    }
    r->root_words = kiln_calloc(count ? count : 1, sizeof *r->root_words);
    r->memory += count * sizeof *r->root_words;
    r->root_prefix = (uint32_t)hfile_row_words(root_key_at, r, count, r->root_words);
    return KILN_OK;
}

static kiln_status
parse_bloom_meta(hfile_reader *r, const uint8_t *p, size_t n, uint64_t off, int cell_keys,
                 bloom_meta *m, kiln_err *err)
{
    kiln_err e;
    status_clear(&e);
    memset(m, 0, sizeof *m);
    m->offset = off;
    if (n < 40)
        return rerr(r, err, KILN_CORRUPTION, "bloom metadata at offset %llu: %zu bytes",
                    (unsigned long long)off, n);
    uint32_t version = coding_get_be32(p);
    if (version != 3)
        return KILN_OK; /* a legacy bloom: ignored, lookups answer "maybe" */
    m->total_bytes = coding_get_be64(p + 4);
    m->hash_count = coding_get_be32(p + 12);
    uint32_t hash_type = coding_get_be32(p + 16);
    m->total_keys = coding_get_be64(p + 20);
    m->total_max_keys = coding_get_be64(p + 28);
    m->nchunks = coding_get_be32(p + 36);
    size_t pos = 40;
    int64_t clen;
    size_t used = coding_get_vlong(p + pos, p + n, &clen);
    if (used == 0 || clen < 0 || (uint64_t)clen > n - pos - used)
        return rerr(r, err, KILN_CORRUPTION, "bloom metadata at offset %llu: bad comparator name",
                    (unsigned long long)off);
    pos += used + (size_t)clen;
    if (m->hash_count == 0 || m->hash_count > 255)
        return rerr(r, err, KILN_CORRUPTION, "bloom metadata at offset %llu: hash count %u",
                    (unsigned long long)off, m->hash_count);
    if (m->nchunks > (n - pos) / 13)
        return rerr(r, err, KILN_CORRUPTION,
                    "bloom metadata at offset %llu: %u chunks cannot fit in %zu bytes",
                    (unsigned long long)off, m->nchunks, n - pos);
    m->payload = kiln_memdup(p, n);
    m->chunks = kiln_calloc(m->nchunks ? m->nchunks : 1, sizeof *m->chunks);
    r->memory += n + m->nchunks * sizeof *m->chunks;
    size_t consumed;
    if (hfile_root_index_decode(m->payload + pos, n - pos, m->nchunks, m->chunks, &consumed, &e) !=
        KILN_OK)
        return rerr(r, err, KILN_CORRUPTION, "bloom metadata at offset %llu: %s",
                    (unsigned long long)off, e.msg);
    if (consumed != n - pos)
        return rerr(r, err, KILN_CORRUPTION,
                    "bloom metadata at offset %llu: %zu bytes after %u chunk entries",
                    (unsigned long long)off, n - pos - consumed, m->nchunks);
    m->cell_keys = cell_keys;
    m->usable = hash_type == BLOOM_HASH_MURMUR && m->nchunks > 0;
    if (!cell_keys) {
        m->chunk_prefix = kiln_calloc(m->nchunks ? m->nchunks : 1, sizeof *m->chunk_prefix);
        r->memory += m->nchunks * sizeof *m->chunk_prefix;
        for (uint32_t i = 0; i < m->nchunks; i++)
            m->chunk_prefix[i] = hfile_key_prefix(m->chunks[i].key.p, m->chunks[i].key.n);
    }
    return KILN_OK;
}

static kiln_status
apply_fileinfo(hfile_reader *r, kiln_err *err)
{
    kiln_err e;
    status_clear(&e);
    kslice v;
    int32_t i32;
    int64_t i64;
    r->fmt.tags = hfile_fileinfo_get(&r->fi, HFILE_FI_MAX_TAGS_LEN, &v);
    r->fmt.mvcc = hfile_fileinfo_get_i32(&r->fi, HFILE_FI_KEY_VALUE_VERSION, &i32) && i32 == 1;
    r->fmt.mvcc_one_byte = r->fmt.mvcc &&
                           hfile_fileinfo_get_i64(&r->fi, HFILE_FI_MAX_MEMSTORE_TS, &i64) &&
                           i64 == 0;
    r->encoding = HFILE_ENCODING_NONE;
    if (hfile_fileinfo_get(&r->fi, HFILE_FI_DATA_BLOCK_ENCODING, &v) &&
        hfile_encoding_parse((const char *)v.p, v.n, &r->encoding) != 0) {
        kbuf name = KBUF_INIT;
        cell_to_string_binary(&name, v.p, v.n < 64 ? v.n : 64);
        buf_append_u8(&name, 0);
        kiln_status s = rerr(r, err, KILN_UNSUPPORTED, "data block encoding %s is not supported",
                             (const char *)name.data);
        buf_free(&name);
        return s;
    }
    if (r->fmt.tags && hfile_fileinfo_get(&r->fi, HFILE_FI_TAGS_COMPRESSED, &v) && v.n >= 1 &&
        v.p[0] != 0 && r->encoding != HFILE_ENCODING_NONE)
        return rerr(r, err, KILN_UNSUPPORTED, "compressed tags are not supported");
    if (hfile_fileinfo_get(&r->fi, HFILE_FI_LASTKEY, &v)) {
        kiln_cell c;
        if (cell_key_decode(v.p, v.n, &c, &e) != KILN_OK)
            return rerr(r, err, KILN_CORRUPTION, "file info: %s: %s", HFILE_FI_LASTKEY, e.msg);
        r->last_key = v;
    }
    r->delete_family_count = -1;
    if (hfile_fileinfo_get_i64(&r->fi, HFILE_FI_DELETE_FAMILY_COUNT, &i64))
        r->delete_family_count = i64;
    r->bloom_type = BLOOM_NONE;
    if (hfile_fileinfo_get(&r->fi, HFILE_FI_BLOOM_FILTER_TYPE, &v) && v.n < 32) {
        char name[32];
        memcpy(name, v.p, v.n);
        name[v.n] = '\0';
        if (bloom_type_parse(name, &r->bloom_type) != 0)
            r->bloom_type = BLOOM_NONE;
    }
    for (size_t i = 0; i < r->fi.count; i++)
        r->memory += r->fi.entries[i].key.n + r->fi.entries[i].value.n + sizeof r->fi.entries[i];
    return KILN_OK;
}

/* Walk the load-on-open section: data root, meta root, FileInfo, then bloom
 * metadata and anything else (ignored). */
static kiln_status
read_load_on_open(hfile_reader *r, kiln_err *err)
{
    uint64_t lo = r->t.load_on_open_data_offset;
    uint64_t end = r->size - r->trailer_size;
    size_t len = (size_t)(end - lo);
    uint8_t *sec = kiln_malloc(len ? len : 1);
    kiln_status s = env_pread(r->f, lo, sec, len, err);
    const uint8_t *gen_p = NULL, *df_p = NULL;
    size_t gen_n = 0, df_n = 0;
    uint64_t gen_off = 0, df_off = 0;
    uint8_t *gen_owned = NULL, *df_owned = NULL;
    size_t pos = 0;
    int step = 0;
    while (s == KILN_OK && pos < len) {
        uint64_t off = lo + pos;
        hfile_block_header h;
        kiln_err e;
        status_clear(&e);
        if (len - pos < HFILE_BLOCK_HEADER_SIZE) {
            s = rerr(r, err, KILN_CORRUPTION, "truncated block header at offset %llu",
                     (unsigned long long)off);
            break;
        }
        if (hfile_block_header_decode(sec + pos, &h, &e) != KILN_OK) {
            s = rerr(r, err, KILN_CORRUPTION, "%s at offset %llu", e.msg, (unsigned long long)off);
            break;
        }
        uint64_t bsize = (uint64_t)h.on_disk_size_without_header + HFILE_BLOCK_HEADER_SIZE;
        if (bsize > len - pos) {
            s = rerr(r, err, KILN_CORRUPTION,
                     "block at offset %llu of %llu bytes overruns the load-on-open section",
                     (unsigned long long)off, (unsigned long long)bsize);
            break;
        }
        if (step == 0) {
            r->checksum_type = h.checksum_type;
            r->bytes_per_checksum = h.bytes_per_checksum;
            r->checksum_known = 1;
        }
        unsigned want = 0;
        if (step == 0 || step == 1)
            want = TYPE_BIT(HFILE_BLOCK_ROOT_INDEX);
        else if (step == 2)
            want = TYPE_BIT(HFILE_BLOCK_FILE_INFO);
        const uint8_t *payload;
        size_t plen;
        uint8_t *owned;
        s = block_verify(r, sec + pos, bsize, off, want, &h, &payload, &plen, &owned, err);
        if (s != KILN_OK)
            break;
        if (step != 0)
            r->loo_uncompressed += (uint64_t)h.uncompressed_size_without_header +
                                   HFILE_BLOCK_HEADER_SIZE;
        if (step == 0) {
            s = parse_root(r, payload, plen, off, err);
        } else if (step == 1) {
            hfile_index_entry *meta = kiln_calloc(r->t.meta_index_count ? r->t.meta_index_count : 1,
                                                  sizeof *meta);
            size_t used = 0;
            if (r->t.meta_index_count > plen / 13 ||
                hfile_root_index_decode(payload, plen, r->t.meta_index_count, meta, &used, &e) !=
                    KILN_OK ||
                used != plen)
                s = rerr(r, err, KILN_CORRUPTION, "meta index at offset %llu: %s",
                         (unsigned long long)off,
                         e.msg[0] ? e.msg : "entries do not fill the block");
            free(meta);
        } else if (step == 2) {
            if (off != r->t.file_info_offset)
                s = rerr(r, err, KILN_CORRUPTION,
                         "file info block at offset %llu, trailer says %llu",
                         (unsigned long long)off, (unsigned long long)r->t.file_info_offset);
            else if (hfile_fileinfo_decode(payload, plen, &r->fi, &e) != KILN_OK)
                s = rerr(r, err, KILN_CORRUPTION, "file info at offset %llu: %s",
                         (unsigned long long)off, e.msg);
        } else if (h.type == HFILE_BLOCK_GENERAL_BLOOM_META && gen_p == NULL) {
            gen_p = payload, gen_n = plen, gen_off = off, gen_owned = owned;
            owned = NULL;
        } else if (h.type == HFILE_BLOCK_DELETE_FAMILY_BLOOM_META && df_p == NULL) {
            df_p = payload, df_n = plen, df_off = off, df_owned = owned;
            owned = NULL;
        }
        free(owned);
        pos += (size_t)bsize;
        step++;
    }
    if (s == KILN_OK && step < 3)
        s = rerr(r, err, KILN_CORRUPTION, "load-on-open section at offset %llu lacks %s",
                 (unsigned long long)lo, step == 0 ? "the data index" : step == 1 ? "the meta index"
                                                                                 : "the file info");
    if (s == KILN_OK)
        s = apply_fileinfo(r, err);
    if (s == KILN_OK && gen_p)
        s = parse_bloom_meta(r, gen_p, gen_n, gen_off, r->bloom_type == BLOOM_ROWCOL, &r->general,
                             err);
    if (s == KILN_OK && df_p)
        s = parse_bloom_meta(r, df_p, df_n, df_off, 0, &r->delfam, err);
    if (s == KILN_OK && !r->general.usable)
        r->bloom_type = BLOOM_NONE;
    free(gen_owned);
    free(df_owned);
    free(sec);
    return s;
}

kiln_status
hfile_reader_open(const char *path, block_cache *cache, hfile_reader **out, kiln_err *err)
{
    *out = NULL;
    hfile_reader *r = kiln_calloc(1, sizeof *r);
    r->path = (char *)kiln_memdup(path, strlen(path) + 1);
    hfile_fileinfo_init(&r->fi);
    kiln_status s = env_open_read(path, &r->f, err);
    if (s != KILN_OK) {
        hfile_reader_close(r);
        return s;
    }
    r->size = env_file_size(r->f);
    size_t tn = r->size < HFILE_TRAILER_SIZE ? (size_t)r->size : HFILE_TRAILER_SIZE;
    uint8_t tbuf[HFILE_TRAILER_SIZE];
    s = env_pread(r->f, r->size - tn, tbuf, tn, err);
    if (s == KILN_OK) {
        kiln_err e;
        status_clear(&e);
        s = hfile_trailer_decode(tbuf, tn, &r->t, &e);
        if (s != KILN_OK)
            s = rerr(r, err, s, "%s", e.msg);
    }
    if (s == KILN_OK) {
        r->trailer_size = r->t.major_version == 3 ? HFILE_TRAILER_SIZE : 212;
        r->data_end = r->size - r->trailer_size;
        s = check_trailer(r, err);
    }
    if (s == KILN_OK) {
        if (cache) {
            r->cache = cache;
        } else {
            r->cache = block_cache_new(0);
            r->own_cache = 1;
        }
        r->file_id = block_cache_new_file_id(r->cache);
        s = read_load_on_open(r, err);
    }
    if (s == KILN_OK && r->root_count > 0)
        r->first_key = r->root[0].key;
    if (s == KILN_OK)
        setup_pins(r, cache != NULL);
    if (s != KILN_OK) {
        hfile_reader_close(r);
        return s;
    }
    r->memory += sizeof *r;
    *out = r;
    return KILN_OK;
}

static void
bloom_meta_free(bloom_meta *m)
{
    free(m->payload);
    free(m->chunks);
    free(m->chunk_prefix);
    free(m->pins.slots);
}

void
hfile_reader_close(hfile_reader *r)
{
    if (r == NULL)
        return;
    if (r->cache) {
        pin_table_free(r->cache, &r->root_children);
        pin_table_free(r->cache, &r->general.pins);
        pin_table_free(r->cache, &r->delfam.pins);
        if (r->pins_reserved)
            block_cache_unreserve(r->cache, r->pins_reserved);
        block_cache_erase_file(r->cache, r->file_id);
        if (r->own_cache)
            block_cache_free(r->cache);
    }
    env_close(r->f, NULL);
    hfile_fileinfo_free(&r->fi);
    bloom_meta_free(&r->general);
    bloom_meta_free(&r->delfam);
    free(r->root);
    free(r->root_words);
    free(r->root_payload);
    free(r->path);
    free(r);
}
