/* store_rec.c -- frames for the region store's metadata files (magic, format
 * version, length, body, CRC32C) and the bounds-checked cursor that decodes
 * their bodies. The layout is in store_rec.h and docs/storage-format.md §2.
 */
#include "storage/base/store_rec.h"

#include <string.h>

#include "storage/base/coding.h"
#include "storage/base/crc32c.h"

uint32_t
store_rec_frame(kbuf *out, const char *magic, uint32_t version, const void *body, size_t n)
{
    size_t start = out->len;
    buf_append(out, magic, STORE_REC_MAGIC_LEN);
    buf_append_be32(out, version);
    buf_append_be32(out, (uint32_t)n);
    buf_append(out, body, n);
    uint32_t crc = crc32c_value(out->data + start, out->len - start);
    buf_append_be32(out, crc);
    return crc;
}

kiln_status
store_rec_unframe(const uint8_t *p, size_t n, const char *magic, uint32_t max_version,
                  const char *what, const uint8_t **body, size_t *body_len,
                  uint32_t *version, uint32_t *crc, kiln_err *err)
{
    if (n < STORE_REC_OVERHEAD)
        return status_set(err, KILN_CORRUPTION, "%s: truncated: %zu bytes, a record needs %d",
                          what, n, STORE_REC_OVERHEAD);
    if (memcmp(p, magic, STORE_REC_MAGIC_LEN) != 0)
        return status_set(err, KILN_CORRUPTION, "%s: bad magic (expected %.8s)", what, magic);
    uint32_t ver = coding_get_be32(p + 8);
    uint32_t len = coding_get_be32(p + 12);
    if ((uint64_t)len + STORE_REC_OVERHEAD != n)
        return status_set(err, KILN_CORRUPTION,
                          "%s: body length %u does not match file size %zu", what, len, n);
    uint32_t want = coding_get_be32(p + STORE_REC_HEADER + len);
    uint32_t got = crc32c_value(p, STORE_REC_HEADER + len);
    if (want != got)
        return status_set(err, KILN_CORRUPTION,
                          "%s: checksum mismatch (stored %08x, computed %08x)", what, want, got);
    if (ver == 0 || ver > max_version)
        return status_set(err, KILN_UNSUPPORTED, "%s: format version %u (this build reads <= %u)",
                          what, ver, max_version);
    *body = p + STORE_REC_HEADER;
    *body_len = len;
    if (version)
        *version = ver;
    if (crc)
        *crc = want;
    return KILN_OK;
}

static const uint8_t *
store_cur_take(store_cur *c, size_t n)
{
    if (c->failed || (size_t)(c->end - c->p) < n) {
        c->failed = 1;
        return NULL;
    }
    const uint8_t *q = c->p;
    c->p += n;
    return q;
}

uint8_t
store_cur_u8(store_cur *c)
{
    const uint8_t *q = store_cur_take(c, 1);
    return q ? q[0] : 0;
}

uint16_t
store_cur_u16(store_cur *c)
{
    const uint8_t *q = store_cur_take(c, 2);
    return q ? coding_get_be16(q) : 0;
}

uint32_t
store_cur_u32(store_cur *c)
{
    const uint8_t *q = store_cur_take(c, 4);
    return q ? coding_get_be32(q) : 0;
}

uint64_t
store_cur_u64(store_cur *c)
{
    const uint8_t *q = store_cur_take(c, 8);
    return q ? coding_get_be64(q) : 0;
}

kslice
store_cur_bytes(store_cur *c, size_t n)
{
    const uint8_t *q = store_cur_take(c, n);
    return q ? kslice_make(q, n) : kslice_make("", 0);
}

kslice
store_cur_str16(store_cur *c)
{
    uint16_t n = store_cur_u16(c);
    return store_cur_bytes(c, n);
}

void
store_rec_put_str16(kbuf *b, const void *p, size_t n)
{
    buf_append_be16(b, (uint16_t)n);
    buf_append(b, p, n);
}

uint64_t
store_rec_fnv64(uint64_t h, const void *p, size_t n)
{
    const uint8_t *q = p;
    for (size_t i = 0; i < n; i++) {
        h ^= q[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}
