/* mr_sumkey.h -- private to mapreduce/: a short key as the collector's cache
 * of running sums holds it (mr_collector.c), and its partition hash, from one
 * read of the key.
 *
 * A key of at most 15 bytes becomes two words: its bytes zero-padded to 16,
 * as two little-endian words (k0 the first eight, k1 the rest), with the
 * length in the top byte of k1. The hash is mr_partition_hash's of the same
 * bytes: the loads it mixes are the ones the words are made from, so word
 * count's emit pays one branch on the length instead of two.
 *
 * Little-endian hosts only (the words are stored and read back as bytes).
 */
#ifndef KILN_MR_SUMKEY_H
#define KILN_MR_SUMKEY_H

#include <stddef.h>
#include <stdint.h>

#include "mapreduce/mr_partition.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "mr_sumkey.h: the sum cache's key words assume a little-endian host"
#endif

#define MR_SUMKEY_MAX 15

/* The words of p[0..n) (n <= MR_SUMKEY_MAX) into *k0, *k1; returns
 * mr_partition_hash(p, n). */
static inline uint64_t
mr_sumkey(const uint8_t *p, size_t n, uint64_t *k0, uint64_t *k1)
{
    uint64_t h = MR_PARTITION_K3 ^ ((uint64_t)n * MR_PARTITION_K1);
    uint64_t a = 0, b = 0;
    if (n >= 8) {
        a = mr_partition_le64(p);
        h = mr_partition_mix(h, a);
        if (n > 8) {
            uint64_t t = mr_partition_le64(p + n - 8);
            h = mr_partition_mix(h, t);
            b = t >> (8 * (16 - n));
        }
    } else if (n >= 4) {
        uint64_t lo = mr_partition_le32(p), hi = mr_partition_le32(p + n - 4);
        h = mr_partition_mix(h, lo | hi << 32);
        a = lo | (hi >> (8 * (8 - n))) << 32;
    } else if (n > 0) {
        /* p[0], p[n / 2], p[n - 1] are the key's n bytes, repeated */
        uint64_t t = (uint64_t)p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16;
        h = mr_partition_mix(h, t);
        a = t & ((1ull << (8 * n)) - 1);
    }
    *k0 = a;
    *k1 = b | (uint64_t)n << 56;
    return mr_partition_finish(h);
}

#endif
