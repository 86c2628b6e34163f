/* hfile_format_read.c -- decoders for the HFile v3 building blocks: block
 * header, per-chunk checksums, root and non-root index entries, FileInfo (PBUF
 * and legacy Writable forms) and the protobuf trailer.
 *
 * Every decoder treats its input as hostile: each length is checked against
 * the bytes that are really there before it is used, so no input makes them
 * read out of bounds. Messages say what is wrong; callers prefix the file and
 * the block offset. The layouts are in hfile_format.h and
 * docs/storage-format.md.
 */
#include "storage/hfile/hfile_format.h"

#include "storage/base/coding.h"
#include "storage/base/crc32c.h"

#include <string.h>
#include <zlib.h>

/* ------------------------------------------------------------------ header */

/* Checksum bytes a block with this data size carries: 4 per started chunk. */
static uint64_t
checksum_area(uint64_t data_size_with_header, uint32_t bytes_per_checksum)
{
    if (bytes_per_checksum == 0)
        return 0;
    return 4 * ((data_size_with_header + bytes_per_checksum - 1) / bytes_per_checksum);
}

kiln_status
hfile_block_header_decode(const uint8_t *in, hfile_block_header *h, kiln_err *err)
{
    int type = hfile_block_type_from_magic(in);
    if (type < 0 || type == HFILE_BLOCK_TRAILER)
        return status_set(err, KILN_CORRUPTION, "bad block magic");
    h->type = (hfile_block_type)type;
    h->on_disk_size_without_header = coding_get_be32(in + 8);
    h->uncompressed_size_without_header = coding_get_be32(in + 12);
    h->prev_block_offset = (int64_t)coding_get_be64(in + 16);
    h->checksum_type = in[24];
    h->bytes_per_checksum = coding_get_be32(in + 25);
    h->on_disk_data_size_with_header = coding_get_be32(in + 29);

    /* The sizes are Java ints: the high bit set means a negative size. */
    if (h->on_disk_size_without_header > INT32_MAX ||
        h->uncompressed_size_without_header > INT32_MAX ||
        h->on_disk_data_size_with_header > INT32_MAX)
        return status_set(err, KILN_CORRUPTION, "negative size in block header");
    if (h->checksum_type > HFILE_CHECKSUM_CRC32C)
        return status_set(err, KILN_CORRUPTION, "unknown checksum type %u", h->checksum_type);
    if (h->on_disk_data_size_with_header < HFILE_BLOCK_HEADER_SIZE)
        return status_set(err, KILN_CORRUPTION, "on-disk data size %u is smaller than the header",
                          h->on_disk_data_size_with_header);
    if (h->prev_block_offset < -1)
        return status_set(err, KILN_CORRUPTION, "bad previous block offset %lld",
                          (long long)h->prev_block_offset);
    uint64_t payload = h->on_disk_data_size_with_header - HFILE_BLOCK_HEADER_SIZE;
    if (payload > h->on_disk_size_without_header)
        return status_set(err, KILN_CORRUPTION,
                          "on-disk size %u is smaller than the data size %llu",
                          h->on_disk_size_without_header, (unsigned long long)payload);
    uint64_t sums = h->on_disk_size_without_header - payload;
    if (h->checksum_type == HFILE_CHECKSUM_NULL) {
        /* Older writers reserve the area even without checksums; accept both. */
        if (sums != 0 && sums != checksum_area(h->on_disk_data_size_with_header,
                                               h->bytes_per_checksum))
            return status_set(err, KILN_CORRUPTION, "checksum area of %llu bytes without checksums",
                              (unsigned long long)sums);
        return KILN_OK;
    }
    if (h->bytes_per_checksum < HFILE_BLOCK_HEADER_SIZE)
        return status_set(err, KILN_CORRUPTION, "bytes per checksum %u is below %d",
                          h->bytes_per_checksum, HFILE_BLOCK_HEADER_SIZE);
    uint64_t want = checksum_area(h->on_disk_data_size_with_header, h->bytes_per_checksum);
    if (sums != want)
        return status_set(err, KILN_CORRUPTION,
                          "checksum area has %llu bytes, %u data bytes need %llu",
                          (unsigned long long)sums, h->on_disk_data_size_with_header,
                          (unsigned long long)want);
    return KILN_OK;
}

long
hfile_checksum_verify(uint8_t checksum_type, const uint8_t *data, size_t n,
                      uint32_t bytes_per_checksum, const uint8_t *sums)
{
    if (checksum_type == HFILE_CHECKSUM_NULL)
        return -1;
    if (bytes_per_checksum == 0 || checksum_type > HFILE_CHECKSUM_CRC32C)
        return 0;
    long chunk = 0;
    for (size_t off = 0; off < n; off += bytes_per_checksum, chunk++) {
        size_t len = n - off < bytes_per_checksum ? n - off : bytes_per_checksum;
        uint32_t sum;
        if (checksum_type == HFILE_CHECKSUM_CRC32C)
            sum = crc32c_value(data + off, len);
        else
            sum = (uint32_t)crc32(0L, data + off, (uInt)len);
        if (sum != coding_get_be32(sums + 4 * (size_t)chunk))
            return chunk;
    }
    return -1;
}

/* ------------------------------------------------------------------ index */

kiln_status
hfile_root_index_decode(const uint8_t *p, size_t n, uint32_t count, hfile_index_entry *entries,
                        size_t *consumed, kiln_err *err)
{
    size_t pos = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (n - pos < 12)
            return status_set(err, KILN_CORRUPTION,
                              "root index entry %u of %u truncated at payload offset %zu", i,
                              count, pos);
        uint64_t off = coding_get_be64(p + pos);
        uint32_t size = coding_get_be32(p + pos + 8);
        pos += 12;
        int64_t klen;
        size_t used = coding_get_vlong(p + pos, p + n, &klen);
        if (used == 0)
            return status_set(err, KILN_CORRUPTION,
                              "root index entry %u: truncated key length at payload offset %zu",
                              i, pos);
        pos += used;
        if (klen < 0 || (uint64_t)klen > n - pos)
            return status_set(err, KILN_CORRUPTION,
                              "root index entry %u: key length %lld overruns the block", i,
                              (long long)klen);
        if (off > INT64_MAX || size > INT32_MAX)
            return status_set(err, KILN_CORRUPTION,
                              "root index entry %u: bad block offset or size", i);
        entries[i].offset = off;
        entries[i].on_disk_size = size;
        entries[i].key = kslice_make(p + pos, (size_t)klen);
        pos += (size_t)klen;
    }
    if (consumed)
        *consumed = pos;
    return KILN_OK;
}

kiln_status
hfile_nonroot_index_check(const uint8_t *p, size_t n, uint32_t *count, kiln_err *err)
{
    if (n < 4)
        return status_set(err, KILN_CORRUPTION, "non-root index block of %zu bytes", n);
    uint32_t c = coding_get_be32(p);
    if (c > INT32_MAX)
        return status_set(err, KILN_CORRUPTION, "non-root index has a negative entry count");
    uint64_t head = 4 + 4 * ((uint64_t)c + 1);
    if (head > n)
        return status_set(err, KILN_CORRUPTION,
                          "non-root index of %u entries does not fit in %zu bytes", c, n);
    uint64_t area = n - head;
    uint32_t prev = coding_get_be32(p + 4);
    if (prev != 0)
        return status_set(err, KILN_CORRUPTION, "non-root index: first entry offset is %u", prev);
    for (uint32_t i = 1; i <= c; i++) {
        uint32_t cur = coding_get_be32(p + 4 + 4 * (size_t)i);
        if (cur < prev || cur - prev < 12 || cur > area)
            return status_set(err, KILN_CORRUPTION,
                              "non-root index: bad offset %u for entry %u", cur, i);
        uint64_t off = coding_get_be64(p + head + prev);
        uint32_t size = coding_get_be32(p + head + prev + 8);
        if (off > INT64_MAX || size > INT32_MAX)
            return status_set(err, KILN_CORRUPTION,
                              "non-root index entry %u: bad block offset or size", i - 1);
        prev = cur;
    }
    if (prev != area)
        return status_set(err, KILN_CORRUPTION,
                          "non-root index: entries take %u bytes, block holds %llu", prev,
                          (unsigned long long)area);
    *count = c;
    return KILN_OK;
}

void
hfile_nonroot_index_entry(const uint8_t *p, uint32_t i, hfile_index_entry *e)
{
    uint32_t c = coding_get_be32(p);
    size_t head = 4 + 4 * ((size_t)c + 1);
    uint32_t a = coding_get_be32(p + 4 + 4 * (size_t)i);
    uint32_t b = coding_get_be32(p + 4 + 4 * ((size_t)i + 1));
    const uint8_t *q = p + head + a;
    e->offset = coding_get_be64(q);
    e->on_disk_size = coding_get_be32(q + 8);
    e->key = kslice_make(q + 12, b - a - 12);
}

/* ------------------------------------------------------------------ protobuf */

/* A protobuf field: its number, wire type and value (varint, or bytes for
 * length-delimited fields; fixed32/64 values go to v as well). */
typedef struct pb_field {
    uint32_t num;
    uint32_t wire;
    uint64_t v;
    kslice bytes;
} pb_field;

/* Read the next field of p[*pos..n). 0 on success, -1 on malformed input. */
static int
pb_next(const uint8_t *p, size_t n, size_t *pos, pb_field *f)
{
    uint64_t tag;
    size_t used = coding_get_varint(p + *pos, p + n, &tag);
    if (used == 0)
        return -1;
    *pos += used;
    if ((tag >> 3) == 0 || (tag >> 3) > 0x1FFFFFFF)
        return -1;
    f->num = (uint32_t)(tag >> 3);
    f->wire = (uint32_t)(tag & 7);
    switch (f->wire) {
    case 0:
        used = coding_get_varint(p + *pos, p + n, &f->v);
        if (used == 0)
            return -1;
        *pos += used;
        return 0;
    case 1:
        if (n - *pos < 8)
            return -1;
        f->v = coding_get_be64(p + *pos); /* byte order irrelevant: never used */
        *pos += 8;
        return 0;
    case 2: {
        uint64_t len;
        used = coding_get_varint(p + *pos, p + n, &len);
        if (used == 0)
            return -1;
        *pos += used;
        if (len > n - *pos)
            return -1;
        f->bytes = kslice_make(p + *pos, (size_t)len);
        *pos += (size_t)len;
        return 0;
    }
    case 5:
        if (n - *pos < 4)
            return -1;
        f->v = coding_get_be32(p + *pos);
        *pos += 4;
        return 0;
    default:
        return -1; /* groups (3, 4) are not used by HBase; 6 and 7 do not exist */
    }
}

/* ------------------------------------------------------------------ FileInfo */

static const uint8_t pbuf_magic[4] = {'P', 'B', 'U', 'F'};

static kiln_status
fileinfo_decode_pbuf(const uint8_t *p, size_t n, hfile_fileinfo *fi, kiln_err *err)
{
    size_t pos = 4;
    uint64_t mlen;
    size_t used = coding_get_varint(p + pos, p + n, &mlen);
    if (used == 0)
        return status_set(err, KILN_CORRUPTION, "file info: truncated message length");
    pos += used;
    if (mlen > n - pos)
        return status_set(err, KILN_CORRUPTION,
                          "file info: message of %llu bytes overruns the block of %zu",
                          (unsigned long long)mlen, n);
    const uint8_t *m = p + pos;
    size_t mn = (size_t)mlen, mp = 0;
    size_t entry = 0;
    while (mp < mn) {
        pb_field f;
        if (pb_next(m, mn, &mp, &f) != 0)
            return status_set(err, KILN_CORRUPTION, "file info: bad protobuf at message offset %zu",
                              mp);
        if (f.num != 1)
            continue;
        if (f.wire != 2)
            return status_set(err, KILN_CORRUPTION, "file info: entry %zu has wire type %u",
                              entry, f.wire);
        int have_k = 0, have_v = 0;
        kslice k = {NULL, 0}, v = {NULL, 0};
        size_t ep = 0;
        while (ep < f.bytes.n) {
            pb_field g;
            if (pb_next(f.bytes.p, f.bytes.n, &ep, &g) != 0)
                return status_set(err, KILN_CORRUPTION, "file info: entry %zu is malformed", entry);
            if ((g.num == 1 || g.num == 2) && g.wire != 2)
                return status_set(err, KILN_CORRUPTION, "file info: entry %zu has wire type %u",
                                  entry, g.wire);
            if (g.num == 1) {
                k = g.bytes;
                have_k = 1;
            } else if (g.num == 2) {
                v = g.bytes;
                have_v = 1;
            }
        }
        if (!have_k || !have_v)
            return status_set(err, KILN_CORRUPTION, "file info: entry %zu lacks its %s", entry,
                              have_k ? "value" : "key");
        hfile_fileinfo_set_raw(fi, k, v);
        entry++;
    }
    return KILN_OK;
}

/* Hadoop Bytes.readByteArray: a vint length and the bytes. */
static int
read_byte_array(const uint8_t *p, size_t n, size_t *pos, kslice *out)
{
    int64_t len;
    size_t used = coding_get_vlong(p + *pos, p + n, &len);
    if (used == 0)
        return -1;
    *pos += used;
    if (len < 0 || (uint64_t)len > n - *pos)
        return -1;
    *out = kslice_make(p + *pos, (size_t)len);
    *pos += (size_t)len;
    return 0;
}

static kiln_status
fileinfo_decode_writable(const uint8_t *p, size_t n, hfile_fileinfo *fi, kiln_err *err)
{
    if (n < 4)
        return status_set(err, KILN_CORRUPTION, "file info: block of %zu bytes", n);
    uint32_t count = coding_get_be32(p);
    if (count > INT32_MAX || count > (n - 4) / 3)
        return status_set(err, KILN_CORRUPTION, "file info: %u entries cannot fit in %zu bytes",
                          count, n);
    size_t pos = 4;
    for (uint32_t i = 0; i < count; i++) {
        kslice k, v;
        if (read_byte_array(p, n, &pos, &k) != 0 || pos >= n)
            return status_set(err, KILN_CORRUPTION, "file info: entry %u key is malformed", i);
        pos++; /* the value's class code: always byte[] in HFiles */
        if (read_byte_array(p, n, &pos, &v) != 0)
            return status_set(err, KILN_CORRUPTION, "file info: entry %u value is malformed", i);
        hfile_fileinfo_set_raw(fi, k, v);
    }
    return KILN_OK;
}

kiln_status
hfile_fileinfo_decode(const uint8_t *p, size_t n, hfile_fileinfo *fi, kiln_err *err)
{
    if (n >= 4 && memcmp(p, pbuf_magic, 4) == 0)
        return fileinfo_decode_pbuf(p, n, fi, err);
    return fileinfo_decode_writable(p, n, fi, err);
}

/* ------------------------------------------------------------------ trailer */

/* Trailer bytes by major version (FixedFileTrailer.getTrailerSize). */
#define TRAILER_SIZE_V2 212

static const uint8_t trailer_magic[8] = {'T', 'R', 'A', 'B', 'L', 'K', '"', '$'};

static kiln_status
trailer_field(hfile_trailer *t, const pb_field *f, kiln_err *err)
{
    if (f->num >= 1 && f->num <= 12 && f->num != 11 && f->wire != 0)
        return status_set(err, KILN_CORRUPTION, "trailer: field %u has wire type %u", f->num,
                          f->wire);
    if ((f->num == 11 || f->num == 13) && f->wire != 2)
        return status_set(err, KILN_CORRUPTION, "trailer: field %u has wire type %u", f->num,
                          f->wire);
    int fits32 = f->v <= UINT32_MAX;
    switch (f->num) {
    case 1:  t->file_info_offset = f->v; break;
    case 2:  t->load_on_open_data_offset = f->v; break;
    case 3:  t->uncompressed_data_index_size = f->v; break;
    case 4:  t->total_uncompressed_bytes = f->v; break;
    case 5:  t->data_index_count = (uint32_t)f->v; break;
    case 6:  t->meta_index_count = (uint32_t)f->v; break;
    case 7:  t->entry_count = f->v; break;
    case 8:  t->num_data_index_levels = (uint32_t)f->v; break;
    case 9:  t->first_data_block_offset = f->v; break;
    case 10: t->last_data_block_offset = f->v; break;
    case 12: t->compression_codec = (uint32_t)f->v; break;
    case 11:
        if (f->bytes.n >= sizeof t->comparator_class_name)
            return status_set(err, KILN_CORRUPTION, "trailer: comparator name of %zu bytes",
                              f->bytes.n);
        memcpy(t->comparator_class_name, f->bytes.p, f->bytes.n);
        t->comparator_class_name[f->bytes.n] = '\0';
        return KILN_OK;
    case 13:
        t->encrypted = 1;
        return KILN_OK;
    default:
        return KILN_OK; /* unknown field: skipped */
    }
    if ((f->num == 5 || f->num == 6 || f->num == 8 || f->num == 12) && !fits32)
        return status_set(err, KILN_CORRUPTION, "trailer: field %u value %llu out of range",
                          f->num, (unsigned long long)f->v);
    return KILN_OK;
}

kiln_status
hfile_trailer_decode(const uint8_t *in, size_t n, hfile_trailer *t, kiln_err *err)
{
    memset(t, 0, sizeof *t);
    if (n < 4)
        return status_set(err, KILN_CORRUPTION, "trailer: file of %zu bytes is too short", n);
    uint32_t version = coding_get_be32(in + n - 4);
    uint32_t major = version & 0x00FFFFFF;
    uint32_t minor = version >> 24;
    size_t tsize;
    if ((major == 2 || major == 3) && minor > HFILE_MINOR_VERSION) {
        return status_set(err, KILN_CORRUPTION, "trailer: unknown minor version %u", minor);
    } else if (major == 3 && minor == 0) {
        /* minor 0 blocks have no checksums and a shorter header */
        return status_set(err, KILN_UNSUPPORTED,
                          "trailer: HFile version 3.0 (no block checksums) is not supported");
    } else if (major == 3) {
        tsize = HFILE_TRAILER_SIZE;
    } else if (major == 2 && minor >= 3) {
        tsize = TRAILER_SIZE_V2;
    } else if (major == 1 || major == 2) {
        return status_set(err, KILN_UNSUPPORTED,
                          "trailer: HFile version %u.%u is not supported (needs 3, or 2.3+)",
                          major, minor);
    } else {
        return status_set(err, KILN_CORRUPTION, "trailer: bad version word 0x%08x", version);
    }
    if (n < tsize)
        return status_set(err, KILN_CORRUPTION,
                          "trailer: file of %zu bytes is shorter than the %zu-byte trailer", n,
                          tsize);
    t->major_version = major;
    t->minor_version = minor;
    const uint8_t *p = in + n - tsize;
    size_t end = tsize - 4;
    if (memcmp(p, trailer_magic, 8) != 0)
        return status_set(err, KILN_CORRUPTION, "trailer: bad magic");
    size_t pos = 8;
    uint64_t mlen;
    size_t used = coding_get_varint(p + pos, p + end, &mlen);
    if (used == 0)
        return status_set(err, KILN_CORRUPTION, "trailer: bad message length");
    pos += used;
    if (mlen > end - pos)
        return status_set(err, KILN_CORRUPTION, "trailer: message of %llu bytes overruns the trailer",
                          (unsigned long long)mlen);
    const uint8_t *m = p + pos;
    size_t mn = (size_t)mlen, mp = 0;
    while (mp < mn) {
        pb_field f;
        if (pb_next(m, mn, &mp, &f) != 0)
            return status_set(err, KILN_CORRUPTION, "trailer: bad protobuf at message offset %zu",
                              mp);
        kiln_status s = trailer_field(t, &f, err);
        if (s != KILN_OK)
            return s;
    }
    for (size_t i = pos + mn; i < end; i++)
        if (p[i] != 0)
            return status_set(err, KILN_CORRUPTION, "trailer: non-zero padding at trailer offset %zu",
                              i);
    return KILN_OK;
}
