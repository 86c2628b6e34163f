/* store_salt.h -- salted row keys (issue #6): a table with salt_buckets = N
 * stores row R under the key [bucket(R)] R, one hidden byte in 0..N-1, so
 * sequential user keys spread over the regions of the N buckets instead of
 * piling into one (Phoenix's SALT_BUCKETS; HBase leaves it to applications).
 *
 *   bucket(R) = fmix32(CRC32C(R)) mod N
 *
 * CRC-32C (storage/crc32c.h, the HFile checksum) over the user key, then
 * MurmurHash3's 32-bit finalizer so every bit of the key moves the low bits
 * that `mod N` keeps. The function is part of the on-disk format
 * (docs/storage-format.md §2.6): jobs, the bulk loader and readers must all
 * compute the same bucket.
 *
 * Reads hide the salt: Get adds it, a scan runs one range per bucket and
 * merges them in user key order (store_view.h). Stateless and thread-safe.
 */
#ifndef KILN_STORE_SALT_H
#define KILN_STORE_SALT_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"

#define STORE_SALT_BUCKETS_MAX 256

/* The bucket of user key row[0..n). REQUIRES: 1 <= buckets <= 256. */
uint32_t store_salt_bucket(const uint8_t *row, size_t n, uint32_t buckets);

/* Append the stored key of user key row[0..n): its bucket byte, then the row.
 * REQUIRES: 1 <= buckets <= 256. */
void store_salt_key(kbuf *out, uint32_t buckets, const uint8_t *row, size_t n);

/* 1 if stored[0..n) is a well-formed salted key: at least two bytes, and its
 * first byte is the bucket of the rest. */
int store_salt_key_ok(const uint8_t *stored, size_t n, uint32_t buckets);

#endif
