/* store_rec.h -- the framing shared by the region store's small metadata files
 * (schema, manifests, CURRENT) and a bounds-checked cursor to decode them.
 *
 * Every record file is one frame:
 *
 *   OFFSET | SIZE | FIELD
 *   0      | 8    | magic (identifies the file kind, e.g. "KILNSCHM")
 *   8      | 4    | format version (big-endian)
 *   12     | 4    | body length L
 *   16     | L    | body (big-endian fields, layout per file kind)
 *   16+L   | 4    | CRC32C of bytes [0, 16+L)
 *
 * A frame is written in full and then renamed into place, so a reader sees
 * either nothing or the whole frame; the CRC catches a torn or altered file.
 *
 * The cursor never reads past its end: after the first short read it is
 * "failed" and every getter returns zeros, so a decoder checks once at the
 * end (store_cur_ok). Stateless and thread-safe.
 */
#ifndef KILN_STORE_REC_H
#define KILN_STORE_REC_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"

#define STORE_REC_MAGIC_LEN 8
#define STORE_REC_HEADER 16
#define STORE_REC_OVERHEAD 20

/* Append a frame holding body[0..n) to out. Returns the frame's CRC32C. */
uint32_t store_rec_frame(kbuf *out, const char *magic, uint32_t version, const void *body,
                         size_t n);

/* Check a frame in p[0..n): magic, version <= max_version, length and CRC.
 * On success *body and *body_len borrow from p, and *version and *crc (either may
 * be NULL) get the frame's version and CRC. KILN_CORRUPTION naming `what`
 * (a path) otherwise, KILN_UNSUPPORTED for a newer format version. */
kiln_status store_rec_unframe(const uint8_t *p, size_t n, const char *magic,
                              uint32_t max_version, const char *what, const uint8_t **body,
                              size_t *body_len, uint32_t *version, uint32_t *crc,
                              kiln_err *err);

/* A read cursor over borrowed bytes. */
typedef struct store_cur {
    const uint8_t *p;
    const uint8_t *end;
    int failed;
} store_cur;

static inline void
store_cur_init(store_cur *c, const uint8_t *p, size_t n)
{
    c->p = p;
    c->end = p + n;
    c->failed = 0;
}

uint8_t store_cur_u8(store_cur *c);
uint16_t store_cur_u16(store_cur *c);
uint32_t store_cur_u32(store_cur *c);
uint64_t store_cur_u64(store_cur *c);
/* n raw bytes, borrowed; an empty slice after a failure. */
kslice store_cur_bytes(store_cur *c, size_t n);
/* A u16-length-prefixed byte string. */
kslice store_cur_str16(store_cur *c);
/* 1 if no read ran past the end. */
static inline int
store_cur_ok(const store_cur *c)
{
    return !c->failed;
}
/* Bytes not consumed yet. */
static inline size_t
store_cur_left(const store_cur *c)
{
    return c->failed ? 0 : (size_t)(c->end - c->p);
}

/* Append a u16-length-prefixed byte string (REQUIRES: n <= 65535). */
void store_rec_put_str16(kbuf *b, const void *p, size_t n);

/* 64-bit FNV-1a, for fingerprints (not for integrity: that is CRC32C). */
uint64_t store_rec_fnv64(uint64_t h, const void *p, size_t n);
#define STORE_REC_FNV64_INIT 0xcbf29ce484222325ULL

#endif
