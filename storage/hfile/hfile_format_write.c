/* hfile_format_write.c -- encoders for the HFile v3 building blocks: block
 * header, per-chunk CRC32C checksums, root and non-root index entries, the
 * FileInfo block payload and the fixed 4096-byte trailer.
 *
 * Everything here produces exactly the bytes HBase 2.x writes for the same
 * input (the FileInfo map is kept sorted, protobuf fields are written in field
 * order, all trailer fields 1..12 are written even when zero). The layouts are
 * in hfile_format.h and docs/storage-format.md; the decoders live in
 * hfile_format_read.c.
 */
#include "storage/hfile/hfile_format.h"

#include "storage/base/coding.h"
#include "storage/base/crc32c.h"

#include <string.h>

/* ------------------------------------------------------------------ header */

void
hfile_block_header_encode(const hfile_block_header *h, uint8_t *out)
{
    memcpy(out, hfile_block_magic(h->type), 8);
    coding_put_be32(out + 8, h->on_disk_size_without_header);
    coding_put_be32(out + 12, h->uncompressed_size_without_header);
    coding_put_be64(out + 16, (uint64_t)h->prev_block_offset);
    out[24] = h->checksum_type;
    coding_put_be32(out + 25, h->bytes_per_checksum);
    coding_put_be32(out + 29, h->on_disk_data_size_with_header);
}

size_t
hfile_checksum_size(size_t data_size_with_header, uint32_t bytes_per_checksum)
{
    if (bytes_per_checksum == 0)
        return 0;
    return 4 * ((data_size_with_header + bytes_per_checksum - 1) / bytes_per_checksum);
}

void
hfile_checksum_compute(const uint8_t *data, size_t n, uint32_t bytes_per_checksum, uint8_t *out)
{
    if (bytes_per_checksum == 0)
        return;
    for (size_t off = 0; off < n; off += bytes_per_checksum) {
        size_t len = n - off < bytes_per_checksum ? n - off : bytes_per_checksum;
        coding_put_be32(out, crc32c_value(data + off, len));
        out += 4;
    }
}

/* ------------------------------------------------------------------ index */

/*   SIZE | FIELD
 *   8    | block offset
 *   4    | on-disk size of the block, header and checksums included
 *   vint | key length (Hadoop WritableUtils, as Bytes.writeByteArray)
 *   N    | key
 */
void
hfile_root_entry_append(kbuf *out, uint64_t offset, uint32_t size, const uint8_t *key,
                        size_t klen)
{
    buf_reserve(out, 12 + CODING_VLONG_MAX + klen);
    uint8_t *p = out->data + out->len;
    coding_put_be64(p, offset);
    coding_put_be32(p + 8, size);
    size_t vl = coding_put_vlong(p + 12, (int64_t)klen);
    if (klen)
        memcpy(p + 12 + vl, key, klen);
    out->len += 12 + vl + klen;
}

size_t
hfile_root_entry_size(size_t klen)
{
    return 12 + coding_vlong_size((int64_t)klen) + klen;
}

/*   SIZE       | FIELD
 *   4          | entry count E
 *   4 * (E+1)  | offset of entry i from the end of this array; the last one is
 *              | the total size of the entries
 *   then E x   | 8 offset, 4 on-disk size, key (length implied by the offsets)
 */
void
hfile_nonroot_index_encode(kbuf *out, const hfile_index_entry *entries, uint32_t count)
{
    size_t total = 0;
    for (uint32_t i = 0; i < count; i++)
        total += 12 + entries[i].key.n;
    size_t head = 4 + 4 * ((size_t)count + 1);
    buf_reserve(out, head + total);
    uint8_t *p = out->data + out->len;
    coding_put_be32(p, count);
    uint8_t *sec = p + 4;
    uint8_t *e = p + head;
    uint32_t rel = 0;
    for (uint32_t i = 0; i < count; i++) {
        coding_put_be32(sec + 4 * (size_t)i, rel);
        coding_put_be64(e, entries[i].offset);
        coding_put_be32(e + 8, entries[i].on_disk_size);
        if (entries[i].key.n)
            memcpy(e + 12, entries[i].key.p, entries[i].key.n);
        e += 12 + entries[i].key.n;
        rel += (uint32_t)(12 + entries[i].key.n);
    }
    coding_put_be32(sec + 4 * (size_t)count, rel);
    out->len += head + total;
}

/* ------------------------------------------------------------------ protobuf */

static void
pb_put_tag(kbuf *out, uint32_t field, uint32_t wire)
{
    buf_append_varint(out, ((uint64_t)field << 3) | wire);
}

static void
pb_put_uint(kbuf *out, uint32_t field, uint64_t v)
{
    pb_put_tag(out, field, 0);
    buf_append_varint(out, v);
}

static void
pb_put_bytes(kbuf *out, uint32_t field, const uint8_t *p, size_t n)
{
    pb_put_tag(out, field, 2);
    buf_append_varint(out, n);
    buf_append(out, p, n);
}

/* Size of a length-delimited field: tag, varint length, bytes. */
static size_t
pb_bytes_size(uint32_t field, size_t n)
{
    return coding_varint_size((uint64_t)field << 3 | 2) + coding_varint_size(n) + n;
}

/* ------------------------------------------------------------------ FileInfo */

/*   SIZE   | FIELD
 *   4      | "PBUF"
 *   varint | length of the message
 *   M      | FileInfoProto { repeated BytesBytesPair map_entry = 1; }
 *          | BytesBytesPair { bytes first = 1; bytes second = 2; }
 * Entries are written in the map's order (ascending unsigned key bytes), as
 * HBase's TreeMap does.
 */
void
hfile_fileinfo_encode(const hfile_fileinfo *fi, kbuf *out)
{
    size_t msg = 0;
    for (size_t i = 0; i < fi->count; i++) {
        size_t pair = pb_bytes_size(1, fi->entries[i].key.n) +
                      pb_bytes_size(2, fi->entries[i].value.n);
        msg += pb_bytes_size(1, pair);
    }
    buf_append(out, "PBUF", 4);
    buf_append_varint(out, msg);
    buf_reserve(out, msg);
    for (size_t i = 0; i < fi->count; i++) {
        const hfile_fileinfo_entry *e = &fi->entries[i];
        size_t pair = pb_bytes_size(1, e->key.n) + pb_bytes_size(2, e->value.n);
        pb_put_tag(out, 1, 2);
        buf_append_varint(out, pair);
        pb_put_bytes(out, 1, e->key.p, e->key.n);
        pb_put_bytes(out, 2, e->value.p, e->value.n);
    }
}

/* ------------------------------------------------------------------ trailer */

/*   OFFSET | SIZE   | FIELD
 *   0      | 8      | "TRABLK\"$"
 *   8      | varint | length M of the FileTrailerProto message
 *   8+v    | M      | FileTrailerProto, fields 1..12 in field order
 *   ...    | ...    | zero padding
 *   4092   | 4      | version: minor << 24 | major (0x03000003)
 * Field 13 (encryption_key) is never written: Kiln does not encrypt.
 */
void
hfile_trailer_encode(const hfile_trailer *t, uint8_t *out)
{
    kbuf msg = KBUF_INIT;
    pb_put_uint(&msg, 1, t->file_info_offset);
    pb_put_uint(&msg, 2, t->load_on_open_data_offset);
    pb_put_uint(&msg, 3, t->uncompressed_data_index_size);
    pb_put_uint(&msg, 4, t->total_uncompressed_bytes);
    pb_put_uint(&msg, 5, t->data_index_count);
    pb_put_uint(&msg, 6, t->meta_index_count);
    pb_put_uint(&msg, 7, t->entry_count);
    pb_put_uint(&msg, 8, t->num_data_index_levels);
    pb_put_uint(&msg, 9, t->first_data_block_offset);
    pb_put_uint(&msg, 10, t->last_data_block_offset);
    size_t clen = strnlen(t->comparator_class_name, sizeof t->comparator_class_name);
    pb_put_bytes(&msg, 11, (const uint8_t *)t->comparator_class_name, clen);
    pb_put_uint(&msg, 12, t->compression_codec);

    memset(out, 0, HFILE_TRAILER_SIZE);
    memcpy(out, hfile_block_magic(HFILE_BLOCK_TRAILER), 8);
    size_t pos = 8 + coding_put_varint(out + 8, msg.len);
    /* At most ~330 bytes (ten 10-byte varints and a 255-byte name): always fits. */
    memcpy(out + pos, msg.data, msg.len);
    coding_put_be32(out + HFILE_TRAILER_SIZE - 4,
                    ((uint32_t)HFILE_MINOR_VERSION << 24) | (HFILE_MAJOR_VERSION & 0x00FFFFFF));
    buf_free(&msg);
}
