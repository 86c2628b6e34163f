/* bloom.c -- HBase compound bloom chunks: MurmurHash, positions, sizing, folding. */
#include "storage/hfile/bloom.h"

#include <math.h>
#include <stdlib.h>
#include <strings.h>

uint32_t
bloom_murmur(const uint8_t *p, size_t n, uint32_t seed)
{
    const uint32_t m = 0x5bd1e995u;
    const int r = 24;
    uint32_t h = seed ^ (uint32_t)n;
    size_t n4 = n >> 2;
    for (size_t i = 0; i < n4; i++) {
        const uint8_t *q = p + 4 * i;
        uint32_t k = (uint32_t)q[0] | ((uint32_t)q[1] << 8) | ((uint32_t)q[2] << 16) |
                     ((uint32_t)q[3] << 24);
        k *= m;
        k ^= k >> r;
        k *= m;
        h *= m;
        h ^= k;
    }
    size_t tail = n & 3;
    const uint8_t *t = p + (n4 << 2);
    /* Java bytes are signed: the tail bytes are sign-extended before shifting. */
    if (tail >= 3)
        h ^= (uint32_t)(int32_t)(int8_t)t[2] << 16;
    if (tail >= 2)
        h ^= (uint32_t)(int32_t)(int8_t)t[1] << 8;
    if (tail >= 1) {
        h ^= (uint32_t)(int32_t)(int8_t)t[0];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

/* Bit i of a key: |(int32)(h1 + i*h2) mod bits| with Java's remainder sign.
 * |c mod b| equals |c| mod b, which needs one 32-bit unsigned division
 * (chunks are at most 2^31 bits, and |INT32_MIN| fits in a uint32). */
/* Bits whose cache lines a lookup asks for before testing any. */
#define BLOOM_PREFETCH_MAX 16

static inline uint32_t
bloom_bit(uint32_t h1, uint32_t h2, int i, uint32_t bits)
{
    int32_t c = (int32_t)(h1 + (uint32_t)i * h2);
    uint32_t mag = c < 0 ? 0u - (uint32_t)c : (uint32_t)c;
    return mag % bits;
}

int
bloom_chunk_may_contain(const uint8_t *chunk, size_t chunk_bytes, int hash_count,
                        const uint8_t *key, size_t n)
{
    if (chunk_bytes == 0 || chunk_bytes > UINT32_MAX / 8)
        return 1;
    uint32_t bits = (uint32_t)chunk_bytes * 8;
    uint32_t h1 = bloom_murmur(key, n, 0);
    uint32_t h2 = bloom_murmur(key, n, h1);
    /* The bits are far apart in a chunk larger than the caches: ask for all
     * of their lines first, so their misses overlap instead of following one
     * another, then test them in order. */
    uint32_t pos[BLOOM_PREFETCH_MAX];
    int k = hash_count < BLOOM_PREFETCH_MAX ? hash_count : BLOOM_PREFETCH_MAX;
    for (int i = 0; i < k; i++) {
        pos[i] = bloom_bit(h1, h2, i, bits);
        __builtin_prefetch(chunk + (pos[i] >> 3));
    }
    for (int i = 0; i < hash_count; i++) {
        uint32_t p = i < k ? pos[i] : bloom_bit(h1, h2, i, bits);
        if ((chunk[p >> 3] & (1u << (p & 7))) == 0)
            return 0;
    }
    return 1;
}

/* bloom_bit without the division, for the writer's many keys per chunk:
 * with magic = ceil(2^64 / bits), |c| mod bits is the high word of
 * (magic * |c| mod 2^64) * bits, exact for every 32-bit |c| and bits
 * (Lemire, Kaser and Kurz, "Faster remainder by direct computation"). */
static inline uint32_t
bloom_bit_magic(uint32_t h1, uint32_t h2, int i, uint32_t bits, uint64_t magic)
{
    int32_t c = (int32_t)(h1 + (uint32_t)i * h2);
    uint32_t mag = c < 0 ? 0u - (uint32_t)c : (uint32_t)c;
    uint64_t low = magic * mag;
    return (uint32_t)(((unsigned __int128)low * bits) >> 64);
}

static void
bloom_set(uint8_t *chunk, uint32_t bits, uint64_t magic, int hash_count, const uint8_t *key,
          size_t n)
{
    uint32_t h1 = bloom_murmur(key, n, 0);
    uint32_t h2 = bloom_murmur(key, n, h1);
    for (int i = 0; i < hash_count; i++) {
        uint32_t pos = bloom_bit_magic(h1, h2, i, bits, magic);
        chunk[pos >> 3] |= (uint8_t)(1u << (pos & 7));
    }
}

void
bloom_rowcol_key(kbuf *out, const uint8_t *row, size_t row_len, const uint8_t *qual,
                 size_t qual_len)
{
    buf_append_be16(out, (uint16_t)row_len);
    buf_append(out, row, row_len);
    buf_append_u8(out, 0);
    buf_append(out, qual, qual_len);
    buf_append_be64(out, (uint64_t)INT64_MAX);
    buf_append_u8(out, 0xFF);
}

const char *
bloom_type_name(kiln_bloom_type t)
{
    switch (t) {
    case BLOOM_NONE:   return "NONE";
    case BLOOM_ROW:    return "ROW";
    case BLOOM_ROWCOL: return "ROWCOL";
    }
    return "UNKNOWN";
}

int
bloom_type_parse(const char *name, kiln_bloom_type *out)
{
    static const kiln_bloom_type all[] = {BLOOM_NONE, BLOOM_ROW, BLOOM_ROWCOL};
    for (size_t i = 0; i < 3; i++) {
        if (strcasecmp(name, bloom_type_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------ chunker */

struct bloom_chunker {
    size_t chunk_bytes;     /* unfolded size, a multiple of 2^BLOOM_MAX_FOLD */
    int hash_count;
    uint64_t max_keys;      /* capacity of an unfolded chunk */
    bloom_chunk cur;
    int cur_open;
    uint64_t total_keys, total_max_keys, total_bytes;
    int num_chunks;
    uint32_t bits;          /* chunk_bytes * 8 */
    uint64_t magic;         /* ceil(2^64 / bits), for bloom_bit_magic */
};

bloom_chunker *
bloom_chunker_new(size_t chunk_bytes, double error_rate)
{
    bloom_chunker *c = kiln_calloc(1, sizeof *c);
    /* BloomFilterUtil.computeFoldableByteSize: round up to a multiple of 2^maxFold. */
    size_t unit = (size_t)1 << BLOOM_MAX_FOLD;
    if (chunk_bytes < unit)
        chunk_bytes = unit;
    chunk_bytes = (chunk_bytes + unit - 1) / unit * unit;
    c->chunk_bytes = chunk_bytes;
    c->bits = (uint32_t)(chunk_bytes * 8);
    c->magic = UINT64_MAX / c->bits + 1;
    double bits = (double)chunk_bytes * 8;
    double ln2 = log(2.0);
    uint64_t max_keys = (uint64_t)floor(bits * ln2 * ln2 / -log(error_rate));
    if (max_keys == 0)
        max_keys = 1;
    /* hashCount = ceil(ln2 * (bits / maxKeys)) with integer division, as HBase does. */
    uint64_t ratio = (uint64_t)bits / max_keys;
    c->hash_count = (int)ceil(ln2 * (double)ratio);
    if (c->hash_count < 1)
        c->hash_count = 1;
    double k = c->hash_count;
    c->max_keys = (uint64_t)(-bits / k * log(1 - exp(log(error_rate) / k)));
    buf_init(&c->cur.bits);
    buf_init(&c->cur.first_key);
    return c;
}

void
bloom_chunker_free(bloom_chunker *c)
{
    if (c == NULL)
        return;
    buf_free(&c->cur.bits);
    buf_free(&c->cur.first_key);
    free(c);
}

/* Fold the finished chunk while it is more than twice as large as it needs to be. */
static void
bloom_chunker_close(bloom_chunker *c)
{
    bloom_chunk *ch = &c->cur;
    size_t bytes = ch->bits.len;
    uint64_t max_keys = c->max_keys;
    /* BloomFilterChunk.compactBloom: halve while even and still at most half full. */
    while ((bytes & 1) == 0 && max_keys > ch->key_count * 2) {
        size_t half = bytes / 2;
        for (size_t i = 0; i < half; i++)
            ch->bits.data[i] |= ch->bits.data[i + half];
        bytes = half;
        max_keys /= 2;
    }
    ch->bits.len = bytes;
    ch->max_keys = max_keys;
    c->total_keys += ch->key_count;
    c->total_max_keys += max_keys;
    c->total_bytes += bytes;
    c->num_chunks++;
    c->cur_open = 0;
}

int
bloom_chunker_add(bloom_chunker *c, const uint8_t *key, size_t n, const bloom_chunk **out)
{
    if (!c->cur_open) {
        buf_reset(&c->cur.bits);
        buf_resize(&c->cur.bits, c->chunk_bytes);
        buf_reset(&c->cur.first_key);
        buf_append(&c->cur.first_key, key, n);
        c->cur.key_count = 0;
        c->cur_open = 1;
    }
    bloom_set(c->cur.bits.data, c->bits, c->magic, c->hash_count, key, n);
    c->cur.key_count++;
    if (c->cur.key_count >= c->max_keys) {
        bloom_chunker_close(c);
        *out = &c->cur;
        return 1;
    }
    return 0;
}

int
bloom_chunker_finish(bloom_chunker *c, const bloom_chunk **out)
{
    if (!c->cur_open || c->cur.key_count == 0)
        return 0;
    bloom_chunker_close(c);
    *out = &c->cur;
    return 1;
}

int bloom_chunker_hash_count(const bloom_chunker *c) { return c->hash_count; }
uint64_t bloom_chunker_total_keys(const bloom_chunker *c) { return c->total_keys; }
uint64_t bloom_chunker_total_max_keys(const bloom_chunker *c) { return c->total_max_keys; }
uint64_t bloom_chunker_total_bytes(const bloom_chunker *c) { return c->total_bytes; }
int bloom_chunker_num_chunks(const bloom_chunker *c) { return c->num_chunks; }
