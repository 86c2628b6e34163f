/* bloom.h -- HBase compound bloom filter chunks: hash, bit positions, sizing
 * and folding, exactly as HBase's CompoundBloomFilter and BloomFilterUtil.
 *
 * A chunk is a bit array (bit p in byte p>>3, mask 1<<(p&7)). For a key,
 * h1 = murmur(key, 0), h2 = murmur(key, h1), and for i < hash_count the bit
 * is |(int32)(h1 + i*h2) mod bits| (32-bit wrap, C remainder sign, abs after).
 * The hash is HBase's MurmurHash (MurmurHash2, 32-bit, little-endian words)
 * with the Java quirk that the 1-3 tail bytes are sign-extended.
 *
 * Keys: ROW blooms hash the row; ROWCOL blooms hash
 * [u16 rowLen][row][0x00][qualifier][LATEST ts][0xFF] (family left out).
 *
 * bloom_chunker builds a sequence of chunks for a writer; it is
 * single-threaded. bloom_chunk_may_contain is pure and thread-safe.
 */
#ifndef KILN_BLOOM_H
#define KILN_BLOOM_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"

typedef enum kiln_bloom_type {
    BLOOM_NONE = 0,
    BLOOM_ROW,
    BLOOM_ROWCOL
} kiln_bloom_type;

#define BLOOM_HASH_MURMUR 1
#define BLOOM_CHUNK_BYTES_DEFAULT 131072
#define BLOOM_ERROR_RATE_DEFAULT 0.01
#define BLOOM_MAX_FOLD 7

/* HBase MurmurHash (hash type 1). */
uint32_t bloom_murmur(const uint8_t *p, size_t n, uint32_t seed);

/* 1 if every bit of key is set in the chunk (may be a false positive), 0 if
 * the key is certainly absent. bits = chunk_bytes * 8 must be > 0. */
int bloom_chunk_may_contain(const uint8_t *chunk, size_t chunk_bytes, int hash_count,
                            const uint8_t *key, size_t n);

/* Append the ROWCOL bloom key of (row, qualifier) to out. */
void bloom_rowcol_key(kbuf *out, const uint8_t *row, size_t row_len, const uint8_t *qual,
                      size_t qual_len);

/* "NONE", "ROW", "ROWCOL"; parse is case-insensitive, 0 on success, -1 if unknown. */
const char *bloom_type_name(kiln_bloom_type t);
int bloom_type_parse(const char *name, kiln_bloom_type *out);

/* A finished chunk, handed from the chunker to the writer. */
typedef struct bloom_chunk {
    kbuf bits;          /* folded bit array; owned by the chunker until the next call */
    kbuf first_key;     /* first key added to the chunk (the chunk's index key) */
    uint64_t key_count;
    uint64_t max_keys;  /* after folding */
} bloom_chunk;

typedef struct bloom_chunker bloom_chunker;

/* chunk_bytes: unfolded chunk size (HBase io.storefile.bloom.block.size), error_rate per
 * lookup (ROWCOL callers pass 1 - sqrt(1 - rate) as HBase does). */
bloom_chunker *bloom_chunker_new(size_t chunk_bytes, double error_rate);
void bloom_chunker_free(bloom_chunker *c);

/* Add a key. Returns 1 if a chunk filled up and is ready in *out (valid until
 * the next call), 0 otherwise. Callers add each distinct key once. */
int bloom_chunker_add(bloom_chunker *c, const uint8_t *key, size_t n, const bloom_chunk **out);
/* Close the last partial chunk: 1 with *out if it holds keys, 0 if empty. */
int bloom_chunker_finish(bloom_chunker *c, const bloom_chunk **out);

int bloom_chunker_hash_count(const bloom_chunker *c);
uint64_t bloom_chunker_total_keys(const bloom_chunker *c);
uint64_t bloom_chunker_total_max_keys(const bloom_chunker *c);
uint64_t bloom_chunker_total_bytes(const bloom_chunker *c);
int bloom_chunker_num_chunks(const bloom_chunker *c);

#endif
