/* coding.c -- Hadoop vlong and protobuf varint codings. */
#include "storage/base/coding.h"

size_t
coding_vlong_size(int64_t v)
{
    if (v >= -112 && v <= 127)
        return 1;
    uint64_t u = v < 0 ? ~(uint64_t)v : (uint64_t)v;
    size_t n = 0;
    while (u != 0) {
        u >>= 8;
        n++;
    }
    return n + 1;
}

size_t
coding_put_vlong(uint8_t *p, int64_t v)
{
    if (v >= -112 && v <= 127) {
        p[0] = (uint8_t)(int8_t)v;
        return 1;
    }
    int base = -112;
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        u = ~u;
        base = -120;
    }
    size_t n = 0;
    for (uint64_t t = u; t != 0; t >>= 8)
        n++;
    p[0] = (uint8_t)(int8_t)(base - (int)n);
    for (size_t i = 0; i < n; i++)
        p[1 + i] = (uint8_t)(u >> (8 * (n - 1 - i)));
    return n + 1;
}

size_t
coding_get_vlong(const uint8_t *p, const uint8_t *end, int64_t *out)
{
    if (p >= end)
        return 0;
    int8_t b = (int8_t)p[0];
    if (b >= -112) {
        *out = b;
        return 1;
    }
    int neg = b < -120;
    size_t n = (size_t)(neg ? -120 - b : -112 - b);
    if ((size_t)(end - p) < n + 1)
        return 0;
    uint64_t u = 0;
    for (size_t i = 0; i < n; i++)
        u = (u << 8) | p[1 + i];
    *out = neg ? (int64_t)~u : (int64_t)u;
    return n + 1;
}

size_t
coding_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

size_t
coding_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

size_t
coding_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < CODING_VARINT_MAX && p + i < end; i++) {
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if ((p[i] & 0x80) == 0) {
            *out = v;
            return i + 1;
        }
    }
    return 0;
}
