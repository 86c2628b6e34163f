/* coding.h -- fixed-width big-endian integers and the two variable-length
 * integer codings HFiles use.
 *
 *   Hadoop WritableUtils vint/vlong (mvcc, root-index key lengths):
 *     -112 <= v <= 127 : one byte, two's complement.
 *     otherwise        : a length byte (-113..-120 positive, -121..-128
 *                        negative, value stored as ~v), then 1..8 bytes of v,
 *                        most significant first.
 *   Protobuf varint / HBase ByteBufferUtils compressed int (LEB128): 7 bits a
 *     byte, least significant group first, high bit = more bytes follow.
 *
 * Decoders never read past `end` and return the number of bytes consumed, or
 * 0 when the input is truncated or malformed.
 */
#ifndef KILN_CODING_H
#define KILN_CODING_H

#include <stddef.h>
#include <stdint.h>

#define CODING_VLONG_MAX 9
#define CODING_VARINT_MAX 10

static inline void
coding_put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void
coding_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void
coding_put_be64(uint8_t *p, uint64_t v)
{
    coding_put_be32(p, (uint32_t)(v >> 32));
    coding_put_be32(p + 4, (uint32_t)v);
}

static inline uint16_t
coding_get_be16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t
coding_get_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline uint64_t
coding_get_be64(const uint8_t *p)
{
    return ((uint64_t)coding_get_be32(p) << 32) | coding_get_be32(p + 4);
}

/* Hadoop vlong. Returns bytes written (1..9). */
size_t coding_put_vlong(uint8_t *p, int64_t v);
/* Size coding_put_vlong would write. */
size_t coding_vlong_size(int64_t v);
/* Returns bytes consumed, 0 if truncated. */
size_t coding_get_vlong(const uint8_t *p, const uint8_t *end, int64_t *out);

/* Protobuf varint. Returns bytes written (1..10). */
size_t coding_put_varint(uint8_t *p, uint64_t v);
size_t coding_varint_size(uint64_t v);
/* Returns bytes consumed, 0 if truncated or longer than 10 bytes. */
size_t coding_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *out);

#endif
