/* hfile_reader.c -- HFile v3 reader: open (trailer + load-on-open section),
 * on-demand block reads through the block cache, multi-level index descent,
 * forward and reverse iteration, bloom checks and a full file check.
 *
 * Every block read from disk is checked before use: the header decodes, its
 * on-disk size equals the size the index gave, its type is the one expected
 * at that place, its CRC32C sums match, and it decompresses to exactly the
 * size the header states. Data blocks are decoded once (hfile_encoding.c)
 * and cached decoded; index and bloom chunk blocks are cached as payloads.
 *
 * Navigation follows the index, never the physical block chain: an index
 * cursor keeps one position per index level (the root in memory, the
 * intermediate and leaf blocks pinned in the cache), so next/prev across
 * blocks step the cursor and reverse iteration costs the same as forward.
 */
#include "storage/hfile/hfile_reader.h"

#include "storage/base/coding.h"
#include "storage/base/compress.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_block_iter.h"
#include "storage/hfile/hfile_encoding.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INDEX_LEVELS 16
/* Load-on-open sections and single blocks above this are treated as corrupt. */
#define SECTION_MAX ((uint64_t)1 << 30)
#define TYPE_BIT(t) (1u << (t))
#define DATA_TYPES (TYPE_BIT(HFILE_BLOCK_DATA) | TYPE_BIT(HFILE_BLOCK_ENCODED_DATA))

/* Blocks a reader keeps pinned in the cache once first read (slot i for
 * entry i), so the hot path skips their cache lookups. */
typedef struct pin_table {
    _Atomic(block_cache_handle *) *slots;
    uint32_t n;
} pin_table;

typedef struct bloom_meta {
    int usable;                 /* version 3, murmur hash, sane parameters */
    uint8_t *payload;           /* owns the decompressed meta block; chunk keys borrow */
    uint32_t hash_count;
    uint32_t nchunks;
    hfile_index_entry *chunks;
    uint64_t total_bytes, total_keys, total_max_keys;
    int cell_keys;              /* ROWCOL: chunk keys compare as KeyValue keys */
    uint64_t offset;            /* of the meta block (for messages) */
    pin_table pins;             /* the chunks, when the reader pins them */
} bloom_meta;

struct hfile_reader {
    char *path;
    env_file *f;
    uint64_t size;
    uint64_t file_id;
    block_cache *cache;
    int own_cache;
    hfile_trailer t;
    uint64_t trailer_size;
    uint64_t data_end;          /* where the load-on-open section starts */
    kiln_codec codec;
    hfile_fileinfo fi;
    hfile_cell_format fmt;
    hfile_encoding encoding;
    uint8_t *root_payload;
    size_t root_len, root_used;
    hfile_index_entry *root;
    uint32_t root_count;
    uint64_t *root_words;       /* row words of the root keys (hfile_encoding.h) */
    uint32_t root_prefix;
    uint32_t levels;
    kslice first_key, last_key;
    kiln_bloom_type bloom_type;
    bloom_meta general, delfam;
    int64_t delete_family_count;    /* -1 if FileInfo does not say */
    /* Every block of a file carries the same checksum type and chunk size
     * (those of the first load-on-open block): a block whose header says
     * otherwise is damaged, and must not switch its own verification off. */
    int checksum_known;
    uint8_t checksum_type;
    uint32_t bytes_per_checksum;
    pin_table root_children;    /* index blocks under the root, when pinned */
    size_t pins_reserved;       /* block_cache_reserve'd for the pins */
    uint64_t loo_uncompressed;      /* sum of uncompressed+33 over load-on-open blocks but the data root */
    size_t memory;
};

/* ------------------------------------------------------------------ errors */

static kiln_status
rerr(const hfile_reader *r, kiln_err *err, kiln_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static kiln_status
rerr(const hfile_reader *r, kiln_err *err, kiln_status code, const char *fmt, ...)
{
    char msg[STATUS_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return status_set(err, code, "%s: %s", r->path, msg);
}

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
        *out = hfile_encoding_wrap_index(h->type, payload, plen, count);
        return KILN_OK;
    case HFILE_BLOCK_BLOOM_CHUNK:
        if (plen == 0)
            return rerr(r, err, KILN_CORRUPTION, "empty bloom chunk at offset %llu",
                        (unsigned long long)off);
        break;
    default:
        break;
    }
    *out = hfile_encoding_wrap(h->type, payload, plen, count);
    return KILN_OK;
}

/* Read the block at off of the given on-disk size from disk, verify and
 * build it. */
static kiln_status
block_load(const hfile_reader *r, uint64_t off, uint64_t size, unsigned type_mask,
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
static kiln_status
block_get(hfile_reader *r, uint64_t off, uint64_t size, unsigned type_mask,
          block_cache_handle **hp, const hfile_block **bp, kiln_err *err)
{
    block_cache_handle *h = block_cache_lookup(r->cache, r->file_id, off);
    if (h == NULL) {
        hfile_block *b;
        kiln_status s = block_load(r, off, size, type_mask, &b, NULL, err);
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
static kiln_status
block_get_pinned(hfile_reader *r, pin_table *pt, uint32_t i, uint64_t off, uint64_t size,
                 unsigned type_mask, block_cache_handle **hp, const hfile_block **bp,
                 kiln_err *err)
{
    *hp = NULL;
    if (pt->slots == NULL)
        return block_get(r, off, size, type_mask, hp, bp, err);
    block_cache_handle *h = atomic_load_explicit(&pt->slots[i], memory_order_acquire);
    if (h == NULL) {
        kiln_status s = block_get(r, off, size, type_mask, &h, bp, err);
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

const char *
hfile_reader_path(const hfile_reader *r)
{
    return r->path;
}

const hfile_trailer *
hfile_reader_trailer(const hfile_reader *r)
{
    return &r->t;
}

const hfile_fileinfo *
hfile_reader_fileinfo(const hfile_reader *r)
{
    return &r->fi;
}

uint64_t
hfile_reader_file_size(const hfile_reader *r)
{
    return r->size;
}

uint64_t
hfile_reader_entry_count(const hfile_reader *r)
{
    return r->t.entry_count;
}
hfile_encoding
hfile_reader_encoding(const hfile_reader *r)
{
    return r->encoding;
}

kiln_bloom_type
hfile_reader_bloom_type(const hfile_reader *r)
{
    return r->bloom_type;
}

int
hfile_reader_has_delete_family_bloom(const hfile_reader *r)
{
    return r->delfam.usable;
}

size_t
hfile_reader_memory(const hfile_reader *r)
{
    return r->memory;
}

kslice
hfile_reader_first_key(const hfile_reader *r)
{
    return r->first_key;
}

kslice
hfile_reader_last_key(const hfile_reader *r)
{
    return r->last_key;
}


/* ------------------------------------------------------------------ bloom */

/* ROWCOL chunk keys are first-on-row-col KeyValue keys (HBase 2.x puts the
 * family in them, the hashed bloom key leaves it out): within one file the
 * family is fixed, so chunks are ordered by row, then qualifier. */
static int
rowcol_key_compare(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    kiln_cell ca, cb;
    if (cell_key_decode(a, an, &ca, NULL) != KILN_OK || cell_key_decode(b, bn, &cb, NULL) != KILN_OK)
        return kslice_cmp(kslice_make(a, an), kslice_make(b, bn));
    int c = kslice_cmp(kslice_make(ca.row, ca.row_len), kslice_make(cb.row, cb.row_len));
    if (c != 0)
        return c;
    return kslice_cmp(kslice_make(ca.qualifier, ca.qualifier_len),
                      kslice_make(cb.qualifier, cb.qualifier_len));
}

/* Largest chunk whose first key is <= key, or -1. */
static long
bloom_chunk_for(const bloom_meta *m, const uint8_t *key, size_t n)
{
    long lo = 0, hi = (long)m->nchunks - 1, found = -1;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        kslice k = m->chunks[mid].key;
        int c = m->cell_keys ? rowcol_key_compare(k.p, k.n, key, n)
                             : kslice_cmp(k, kslice_make(key, n));
        if (c <= 0) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

static int
bloom_check(hfile_reader *r, bloom_meta *m, const uint8_t *key, size_t n, kiln_err *err)
{
    long i = bloom_chunk_for(m, key, n);
    if (i < 0)
        return 0;
    block_cache_handle *h;
    const hfile_block *b;
    if (block_get_pinned(r, &m->pins, (uint32_t)i, m->chunks[i].offset, m->chunks[i].on_disk_size,
                         TYPE_BIT(HFILE_BLOCK_BLOOM_CHUNK), &h, &b, err) != KILN_OK)
        return 1;
    int res = bloom_chunk_may_contain(b->bytes, b->len, (int)m->hash_count, key, n);
    block_cache_release(r->cache, h);
    return res;
}

int
hfile_reader_may_contain_row(hfile_reader *r, const uint8_t *row, size_t n, kiln_err *err)
{
    if (r->bloom_type != BLOOM_ROW)
        return 1;
    return bloom_check(r, &r->general, row, n, err);
}

int
hfile_reader_may_contain_rowcol(hfile_reader *r, const uint8_t *row, size_t rn,
                                const uint8_t *qual, size_t qn, kiln_err *err)
{
    if (r->bloom_type == BLOOM_ROW)
        return bloom_check(r, &r->general, row, rn, err);
    if (r->bloom_type != BLOOM_ROWCOL)
        return 1;
    uint8_t stack[512];
    kbuf key = KBUF_INIT;
    size_t need = rn + qn + CELL_KEY_INFRASTRUCTURE;
    if (rn > CELL_ROW_MAX)
        return 0; /* no such row can be in a file */
    uint8_t *k = stack;
    if (need > sizeof stack) {
        buf_reserve(&key, need);
        k = key.data;
    }
    coding_put_be16(k, (uint16_t)rn);
    if (rn)
        memcpy(k + 2, row, rn);
    k[2 + rn] = 0;
    if (qn)
        memcpy(k + 3 + rn, qual, qn);
    coding_put_be64(k + 3 + rn + qn, (uint64_t)CELL_LATEST_TIMESTAMP);
    k[need - 1] = CELL_TYPE_MAXIMUM;
    int res = bloom_check(r, &r->general, k, need, err);
    buf_free(&key);
    return res;
}

int
hfile_reader_may_have_delete_family(hfile_reader *r, const uint8_t *row, size_t n, kiln_err *err)
{
    if (r->delete_family_count == 0)
        return 0;
    if (!r->delfam.usable)
        return 1;
    return bloom_check(r, &r->delfam, row, n, err);
}

/* ------------------------------------------------------------------ index cursor */

typedef struct cursor_level {
    block_cache_handle *h;      /* NULL at the root */
    const hfile_block *b;
    uint64_t off;
    uint32_t pos, count;
} cursor_level;

typedef struct icursor {
    hfile_reader *r;
    uint32_t levels;
    cursor_level lv[MAX_INDEX_LEVELS];
    int checking;               /* hfile_reader_check: verify child keys against parents */
} icursor;

enum { POS_FIRST, POS_LAST, POS_KEY, POS_KEY_PREV };

/* Entry i of a validated non-root block (as hfile_nonroot_index_entry, with
 * the count taken from the block instead of its first line). */
static void
nonroot_entry(const hfile_block *b, uint32_t i, hfile_index_entry *e)
{
    const uint8_t *p = b->bytes;
    const uint8_t *sec = p + 4 + 4 * (size_t)i;
    uint32_t a = coding_get_be32(sec), z = coding_get_be32(sec + 4);
    const uint8_t *q = p + 4 + 4 * ((size_t)b->count + 1) + a;
    e->offset = coding_get_be64(q);
    e->on_disk_size = coding_get_be32(q + 8);
    e->key = kslice_make(q + 12, z - a - 12);
}

static void
cursor_entry_at(const icursor *c, uint32_t d, uint32_t i, hfile_index_entry *e)
{
    if (d == 0)
        *e = c->r->root[i];
    else
        nonroot_entry(c->lv[d].b, i, e);
}

/* Largest i at level d whose key is <= key, or -1. Row words settle most
 * comparisons without reading the entries. */
static long
cursor_search(const icursor *c, uint32_t d, const kiln_cell *key)
{
    const uint64_t *words;
    const uint8_t *prefix;
    uint32_t plen;
    if (d == 0) {
        words = c->r->root_words;
        plen = c->r->root_prefix;
        prefix = c->r->root_count ? c->r->root[0].key.p + 2 : NULL;
    } else {
        words = c->lv[d].b->row_words;
        plen = c->lv[d].b->row_prefix;
        prefix = c->lv[d].b->prefix;
    }
    uint64_t wk = 0;
    if (words) {
        int where = hfile_row_word_locate(prefix, plen, key, &wk);
        if (where < 0)
            return -1;
        if (where > 0)
            return (long)c->lv[d].count - 1;
    }
    long lo = 0, hi = (long)c->lv[d].count - 1, found = -1;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        int cmp;
        if (words) {
            /* both possible next probes: their cache misses overlap this one's */
            __builtin_prefetch(&words[lo + (mid - lo) / 2]);
            __builtin_prefetch(&words[mid + 1 + (hi - mid) / 2]);
        }
        if (words && words[mid] != wk) {
            cmp = words[mid] < wk ? 1 : -1;
        } else {
            hfile_index_entry e;
            cursor_entry_at(c, d, (uint32_t)mid, &e);
            cmp = cell_compare_key(key, e.key.p, e.key.n);
        }
        if (cmp >= 0) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

static uint32_t
cursor_pick(const icursor *c, uint32_t d, int mode, const kiln_cell *key)
{
    if (mode == POS_FIRST)
        return 0;
    if (mode == POS_LAST)
        return c->lv[d].count - 1;
    long i = cursor_search(c, d, key);
    return i < 0 ? 0 : (uint32_t)i;
}

static void
cursor_release(icursor *c)
{
    for (uint32_t d = 1; d < MAX_INDEX_LEVELS; d++) {
        block_cache_release(c->r->cache, c->lv[d].h);
        c->lv[d].h = NULL;
        c->lv[d].b = NULL;
    }
}

/* In check mode: the child's first key is >= the parent entry's key, its
 * entries ascend, and its last key sorts before the parent's next entry. */
static kiln_status
cursor_check_child(icursor *c, uint32_t d, uint64_t off, kiln_err *err)
{
    hfile_index_entry pe, ce, prev = {0, 0, {NULL, 0}};
    cursor_entry_at(c, d - 1, c->lv[d - 1].pos, &pe);
    for (uint32_t i = 0; i < c->lv[d].count; i++) {
        cursor_entry_at(c, d, i, &ce);
        if (i == 0 && cell_key_compare(pe.key.p, pe.key.n, ce.key.p, ce.key.n) > 0)
            return rerr(c->r, err, KILN_CORRUPTION,
                        "index block at offset %llu starts below its parent's key",
                        (unsigned long long)off);
        if (i > 0 && cell_key_compare(prev.key.p, prev.key.n, ce.key.p, ce.key.n) >= 0)
            return rerr(c->r, err, KILN_CORRUPTION,
                        "index block at offset %llu: entry %u is out of order",
                        (unsigned long long)off, i);
        prev = ce;
    }
    if (c->lv[d - 1].pos + 1 < c->lv[d - 1].count) {
        cursor_entry_at(c, d - 1, c->lv[d - 1].pos + 1, &pe);
        if (cell_key_compare(prev.key.p, prev.key.n, pe.key.p, pe.key.n) >= 0)
            return rerr(c->r, err, KILN_CORRUPTION,
                        "index block at offset %llu ends at or above its parent's next key",
                        (unsigned long long)off);
    }
    return KILN_OK;
}

/* Position levels d+1.. below level d's current entry, each by mode. */
static kiln_status
cursor_descend(icursor *c, uint32_t d, int mode, const kiln_cell *key, kiln_err *err)
{
    for (; d + 1 < c->levels; d++) {
        hfile_index_entry e;
        cursor_entry_at(c, d, c->lv[d].pos, &e);
        cursor_level *child = &c->lv[d + 1];
        if (child->b == NULL || child->off != e.offset) {
            unsigned type = d + 2 == c->levels ? HFILE_BLOCK_LEAF_INDEX
                                                : HFILE_BLOCK_INTERMEDIATE_INDEX;
            block_cache_handle *h;
            const hfile_block *b;
            kiln_status s =
                d == 0 ? block_get_pinned(c->r, &c->r->root_children, c->lv[0].pos, e.offset,
                                          e.on_disk_size, TYPE_BIT(type), &h, &b, err)
                       : block_get(c->r, e.offset, e.on_disk_size, TYPE_BIT(type), &h, &b, err);
            if (s != KILN_OK)
                return s;
            block_cache_release(c->r->cache, child->h);
            child->h = h;
            child->b = b;
            child->off = e.offset;
            child->count = b->count;
            if (c->checking && (s = cursor_check_child(c, d + 1, e.offset, err)) != KILN_OK)
                return s;
        }
        child->pos = cursor_pick(c, d + 1, mode, key);
    }
    return KILN_OK;
}

/* Position the whole cursor. KILN_NOT_FOUND if the index is empty. */
static kiln_status
cursor_seek(icursor *c, int mode, const kiln_cell *key, kiln_err *err)
{
    if (c->r->root_count == 0)
        return KILN_NOT_FOUND;
    c->lv[0].count = c->r->root_count;
    c->lv[0].pos = cursor_pick(c, 0, mode, key);
    return cursor_descend(c, 0, mode, key, err);
}

/* Step to the next (dir 1) or previous (-1) data block entry. KILN_NOT_FOUND
 * past either end (the cursor is then unchanged). */
static kiln_status
cursor_step(icursor *c, int dir, kiln_err *err)
{
    long d = (long)c->levels - 1;
    while (d >= 0) {
        cursor_level *l = &c->lv[d];
        if (dir > 0 ? l->pos + 1 < l->count : l->pos > 0)
            break;
        d--;
    }
    if (d < 0)
        return KILN_NOT_FOUND;
    c->lv[d].pos = dir > 0 ? c->lv[d].pos + 1 : c->lv[d].pos - 1;
    return cursor_descend(c, (uint32_t)d, dir > 0 ? POS_FIRST : POS_LAST, NULL, err);
}

static void
cursor_data_entry(const icursor *c, hfile_index_entry *e)
{
    cursor_entry_at(c, c->levels - 1, c->lv[c->levels - 1].pos, e);
}

/* ------------------------------------------------------------------ prefetch */

kiln_status
hfile_reader_prefetch(hfile_reader *r, uint64_t *budget, int (*stop)(void *), void *arg,
                      kiln_err *err)
{
    if (r->own_cache || r->cache == NULL)
        return KILN_OK;
    icursor c = {.r = r, .levels = r->levels};
    kiln_status s = cursor_seek(&c, POS_FIRST, NULL, err);
    for (uint64_t n = 0; s == KILN_OK; n++) {
        if ((n & 15) == 15 && stop != NULL && stop(arg))
            break;
        hfile_index_entry e;
        cursor_data_entry(&c, &e);
        block_cache_handle *h = block_cache_lookup(r->cache, r->file_id, e.offset);
        if (h == NULL) {
            if (*budget == 0)
                break;
            hfile_block *b;
            s = block_load(r, e.offset, e.on_disk_size, DATA_TYPES, &b, NULL, err);
            if (s != KILN_OK)
                break;
            size_t charge = b->alloc;
            h = block_cache_insert_block(r->cache, r->file_id, e.offset, b, b->alloc);
            *budget = charge < *budget ? *budget - charge : 0;
        }
        block_cache_release(r->cache, h);
        s = cursor_step(&c, 1, err);
    }
    cursor_release(&c);
    return s == KILN_NOT_FOUND ? KILN_OK : s;
}

uint64_t
hfile_reader_cached_bytes(const hfile_reader *r)
{
    if (r->own_cache || r->cache == NULL)
        return 0;
    return block_cache_file_bytes(r->cache, r->file_id);
}

/* ------------------------------------------------------------------ iterator */

struct hfile_iter {
    icursor cur;
    block_cache_handle *dh;
    const hfile_block *db;
    uint64_t db_off;
    uint32_t pos;
    int valid;
    kiln_cell cell;
};

hfile_iter *
hfile_iter_new(hfile_reader *r)
{
    hfile_iter *it = kiln_calloc(1, sizeof *it);
    it->cur.r = r;
    it->cur.levels = r->levels;
    return it;
}

static void
iter_drop_data(hfile_iter *it)
{
    block_cache_release(it->cur.r->cache, it->dh);
    it->dh = NULL;
    it->db = NULL;
}

void
hfile_iter_free(hfile_iter *it)
{
    if (it == NULL)
        return;
    iter_drop_data(it);
    cursor_release(&it->cur);
    free(it);
}

int
hfile_iter_valid(const hfile_iter *it)
{
    return it->valid;
}

const kiln_cell *
hfile_iter_cell(const hfile_iter *it)
{
    return &it->cell;
}

static void
iter_set(hfile_iter *it, uint32_t pos)
{
    it->pos = pos;
    it->valid = 1;
    hfile_encoding_cell(it->db, pos, &it->cell);
}

/* Pin the data block the cursor points at. */
static kiln_status
iter_load_data(hfile_iter *it, kiln_err *err)
{
    hfile_index_entry e;
    cursor_data_entry(&it->cur, &e);
    if (it->db && it->db_off == e.offset)
        return KILN_OK;
    block_cache_handle *h;
    const hfile_block *b;
    kiln_status s = block_get(it->cur.r, e.offset, e.on_disk_size, DATA_TYPES, &h, &b, err);
    if (s != KILN_OK)
        return s;
    iter_drop_data(it);
    it->dh = h;
    it->db = b;
    it->db_off = e.offset;
    return KILN_OK;
}

/* Result of a positioning step: on error or at the end the iterator is invalid. */
static kiln_status
iter_result(hfile_iter *it, kiln_status s)
{
    if (s == KILN_NOT_FOUND) {
        it->valid = 0;
        return KILN_OK;
    }
    if (s != KILN_OK)
        it->valid = 0;
    return s;
}

/* Move to the first (dir 1) or last (-1) cell of the next/previous block. */
static kiln_status
iter_cross(hfile_iter *it, int dir, kiln_err *err)
{
    kiln_status s = cursor_step(&it->cur, dir, err);
    if (s == KILN_OK)
        s = iter_load_data(it, err);
    if (s == KILN_OK)
        iter_set(it, dir > 0 ? 0 : it->db->count - 1);
    return iter_result(it, s);
}

kiln_status
hfile_iter_seek_first(hfile_iter *it, kiln_err *err)
{
    kiln_status s = cursor_seek(&it->cur, POS_FIRST, NULL, err);
    if (s == KILN_OK)
        s = iter_load_data(it, err);
    if (s == KILN_OK)
        iter_set(it, 0);
    return iter_result(it, s);
}

kiln_status
hfile_iter_seek_last(hfile_iter *it, kiln_err *err)
{
    kiln_status s = cursor_seek(&it->cur, POS_LAST, NULL, err);
    if (s == KILN_OK)
        s = iter_load_data(it, err);
    if (s == KILN_OK)
        iter_set(it, it->db->count - 1);
    return iter_result(it, s);
}

kiln_status
hfile_iter_seek(hfile_iter *it, const kiln_cell *key, kiln_err *err)
{
    kiln_status s = cursor_seek(&it->cur, POS_KEY, key, err);
    if (s == KILN_OK)
        s = iter_load_data(it, err);
    if (s != KILN_OK)
        return iter_result(it, s);
    uint32_t pos = hfile_block_search(it->db, key, 0);
    if (pos < it->db->count) {
        iter_set(it, pos);
        return KILN_OK;
    }
    /* Every cell here is smaller: the answer is the next block's first cell. */
    return iter_cross(it, 1, err);
}

kiln_status
hfile_iter_seek_for_prev(hfile_iter *it, const kiln_cell *key, kiln_err *err)
{
    kiln_status s = cursor_seek(&it->cur, POS_KEY, key, err);
    if (s == KILN_OK)
        s = iter_load_data(it, err);
    if (s != KILN_OK)
        return iter_result(it, s);
    uint32_t pos = hfile_block_search(it->db, key, 1);
    if (pos > 0) {
        iter_set(it, pos - 1);
        return KILN_OK;
    }
    /* The index key was a shortened separator above the block's cells or the
     * key is before this block: the answer is the previous block's last cell. */
    return iter_cross(it, -1, err);
}

kiln_status
hfile_iter_next(hfile_iter *it, kiln_err *err)
{
    if (!it->valid)
        return status_set(err, KILN_INVALID, "%s: iterator is not positioned", it->cur.r->path);
    if (it->pos + 1 < it->db->count) {
        iter_set(it, it->pos + 1);
        return KILN_OK;
    }
    return iter_cross(it, 1, err);
}

kiln_status
hfile_iter_prev(hfile_iter *it, kiln_err *err)
{
    if (!it->valid)
        return status_set(err, KILN_INVALID, "%s: iterator is not positioned", it->cur.r->path);
    if (it->pos > 0) {
        iter_set(it, it->pos - 1);
        return KILN_OK;
    }
    return iter_cross(it, -1, err);
}

/* ------------------------------------------------------------------ kiln iterators */

/* The file iterator behind the common interface (iter.h): an hfile_iter
 * inside, so the calls below inline its steps. */
typedef struct kiter {
    kiln_iter base;             /* first: a kiln_iter */
    hfile_iter it;
} kiter;

static inline void
kiter_after(kiter *k, kiln_status s)
{
    if (s != KILN_OK && k->base.err.code == KILN_OK)
        k->base.err.code = s;
    k->base.cur = s == KILN_OK && k->it.valid ? &k->it.cell : NULL;
}

static void
kiter_seek_first(kiln_iter *base)
{
    kiter *k = (kiter *)base;
    kiln_iter_restart(base);
    kiter_after(k, hfile_iter_seek_first(&k->it, &base->err));
}

static void
kiter_seek_last(kiln_iter *base)
{
    kiter *k = (kiter *)base;
    kiln_iter_restart(base);
    kiter_after(k, hfile_iter_seek_last(&k->it, &base->err));
}

static void
kiter_seek(kiln_iter *base, const kiln_cell *key)
{
    kiter *k = (kiter *)base;
    kiln_iter_restart(base);
    kiter_after(k, hfile_iter_seek(&k->it, key, &base->err));
}

static void
kiter_seek_for_prev(kiln_iter *base, const kiln_cell *key)
{
    kiter *k = (kiter *)base;
    kiln_iter_restart(base);
    kiter_after(k, hfile_iter_seek_for_prev(&k->it, key, &base->err));
}

static void
kiter_next(kiln_iter *base)
{
    kiter *k = (kiter *)base;
    kiter_after(k, hfile_iter_next(&k->it, &base->err));
}

static void
kiter_prev(kiln_iter *base)
{
    kiter *k = (kiter *)base;
    kiter_after(k, hfile_iter_prev(&k->it, &base->err));
}

static void
kiter_close(kiln_iter *base)
{
    kiter *k = (kiter *)base;
    iter_drop_data(&k->it);
    cursor_release(&k->it.cur);
    free(k);
}

static const kiln_iter_ops kiter_ops = {
    .seek_first = kiter_seek_first,
    .seek_last = kiter_seek_last,
    .seek = kiter_seek,
    .seek_for_prev = kiter_seek_for_prev,
    .next = kiter_next,
    .prev = kiter_prev,
    .close = kiter_close,
};

kiln_iter *
hfile_reader_iter(hfile_reader *r)
{
    kiter *k = kiln_calloc(1, sizeof *k);
    kiln_iter_init(&k->base, &kiter_ops);
    k->it.cur.r = r;
    k->it.cur.levels = r->levels;
    return &k->base;
}

kiln_status
hfile_reader_block_iter(hfile_reader *r, uint64_t n, kiln_iter **out, kiln_err *err)
{
    *out = NULL;
    icursor c = {.r = r, .levels = r->levels};
    kiln_status s = cursor_seek(&c, POS_FIRST, NULL, err);
    for (uint64_t i = 0; i < n && s == KILN_OK; i++)
        s = cursor_step(&c, 1, err);
    block_cache_handle *h = NULL;
    const hfile_block *b = NULL;
    if (s == KILN_OK) {
        hfile_index_entry e;
        cursor_data_entry(&c, &e);
        s = block_get(r, e.offset, e.on_disk_size, DATA_TYPES, &h, &b, err);
    }
    cursor_release(&c);
    if (s == KILN_NOT_FOUND)
        return status_set(err, KILN_NOT_FOUND, "%s: no data block %llu", r->path,
                          (unsigned long long)n);
    if (s != KILN_OK)
        return s;
    *out = hfile_block_iter_new(b, r->cache, h);
    return KILN_OK;
}

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
    cursor_data_entry(&cs->cur, &e);
    if (e.offset != off || e.on_disk_size != size)
        return rerr(r, err, KILN_CORRUPTION,
                    "index entry %llu points at offset %llu (%u bytes), the data block is at %llu (%llu bytes)",
                    (unsigned long long)cs->data_blocks, (unsigned long long)e.offset,
                    e.on_disk_size, (unsigned long long)off, (unsigned long long)size);
    kslice first = hfile_encoding_key(b, 0);
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
        kslice k = hfile_encoding_key(b, i);
        if (cs->cells > 0 && cell_key_compare(cs->last_key.data, cs->last_key.len, k.p, k.n) > 0)
            return rerr(r, err, KILN_CORRUPTION,
                        "cell %u of the data block at offset %llu sorts before the previous cell",
                        i, (unsigned long long)off);
        kiln_cell c;
        hfile_encoding_cell(b, i, &c);
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
    kiln_status s = cursor_step(&cs->cur, 1, err);
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
        s = block_load(r, off, size, scanned, &b, &h, err);
        if (s != KILN_OK)
            return s;
        int chain = h.type == HFILE_BLOCK_ENCODED_DATA ? HFILE_BLOCK_DATA : (int)h.type;
        if (h.prev_block_offset != cs->prev_of_type[chain]) {
            hfile_encoding_free(b);
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
        hfile_encoding_free(b);
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
        kiln_status s = block_get(r, m->chunks[i].offset, m->chunks[i].on_disk_size,
                                  TYPE_BIT(HFILE_BLOCK_BLOOM_CHUNK), &h, &b, err);
        if (s != KILN_OK)
            return s;
        total += b->len;
        block_cache_release(r->cache, h);
        if (i > 0) {
            kslice a = m->chunks[i - 1].key, k = m->chunks[i].key;
            int c = m->cell_keys ? rowcol_key_compare(a.p, a.n, k.p, k.n) : kslice_cmp(a, k);
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
        cursor_data_entry(&cs->cur, &e);
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
        s = cursor_seek(&cs.cur, POS_FIRST, NULL, err);
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
    cursor_release(&cs.cur);
    buf_free(&cs.last_key);
    buf_free(&cs.last_row);
    buf_free(&cs.scratch);
    if (s == KILN_OK && cells_out)
        *cells_out = cs.cells;
    return s;
}
