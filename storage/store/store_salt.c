/* store_salt.c -- the bucket function of salted tables (store_salt.h):
 * CRC-32C of the user key, MurmurHash3's fmix32, modulo the bucket count.
 */
#include "storage/store/store_salt.h"

#include "storage/base/crc32c.h"

/* MurmurHash3's finalizer: every input bit flips each output bit with
 * probability about one half, so `mod N` sees a well-mixed value. */
static uint32_t
store_salt_fmix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

uint32_t
store_salt_bucket(const uint8_t *row, size_t n, uint32_t buckets)
{
    return store_salt_fmix32(crc32c_value(row, n)) % buckets;
}

void
store_salt_key(kbuf *out, uint32_t buckets, const uint8_t *row, size_t n)
{
    buf_append_u8(out, (uint8_t)store_salt_bucket(row, n, buckets));
    buf_append(out, row, n);
}

int
store_salt_key_ok(const uint8_t *stored, size_t n, uint32_t buckets)
{
    if (n < 2 || buckets == 0 || buckets > STORE_SALT_BUCKETS_MAX)
        return 0;
    return stored[0] == store_salt_bucket(stored + 1, n - 1, buckets);
}
