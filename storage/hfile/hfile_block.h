/* hfile_block.h -- private to storage/: the decoded data block as it sits in
 * the block cache, the form iterators walk. Data blocks are decoded into it
 * once, when they are read from disk (hfile_encoding.h); index and bloom
 * chunk blocks are wrapped into it as they are.
 *
 * A decoded block is one allocation from block_cache_block_alloc (freed with
 * hfile_block_free, or owned by the cache once inserted):
 *
 *   hfile_block | row words u64[count] | hfile_cellpos[count] | bytes[len]
 *   (row words for data and index blocks, cellpos for data blocks; an index
 *   block has its entries' hfile_index_loc after its row words, then its
 *   group words)
 *
 * For DATABLK* (NONE) and ROW_INDEX_V1 blocks `bytes` is the block payload and
 * every cellpos points into it; for PREFIX, DIFF and FAST_DIFF blocks `bytes`
 * holds the cells rebuilt flat (key, value, tags) one after the other. Index
 * and bloom chunk blocks keep their payload in `bytes` and have no cellpos.
 *
 * Row words speed up searching a block: every row of a block shares its first
 * row_prefix bytes, and word i holds the next 8 bytes of cell i's row
 * (big-endian, zero-padded). If word(a) < word(b) then row a < row b, so a
 * binary search touches the small word array and reads a key only on a tie.
 *
 * An index block of more than 2 * HFILE_GROUP entries also has group words:
 * word i * HFILE_GROUP for each i, side by side. A search finds its group of
 * HFILE_GROUP entries in them (a few lines that stay in cache) and then asks
 * for that group's words and locations at once, where a binary search of the
 * whole word array waits on one cache miss after another.
 *
 * A block is immutable once built and safe to read from many threads.
 */
#ifndef KILN_HFILE_BLOCK_H
#define KILN_HFILE_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_format.h"

typedef struct hfile_cellpos {
    uint32_t key_off;   /* offset of the serialized key in bytes[] */
    uint32_t key_len;
    uint32_t val_len;   /* the value follows the key */
    uint32_t tags_off;
    uint32_t tags_len;
    uint32_t cell_off;  /* where the cell starts in the payload (for messages) */
    uint64_t mvcc;
} hfile_cellpos;

#define HFILE_PREFIX_COPY 24
#define HFILE_GROUP 16    /* index entries a group word stands for */

/* Where a non-root index entry points, decoded once: a search's last step
 * reads one of these instead of the entry's slot in the secondary index and
 * then the entry itself (two dependent cache misses on the Get path). */
typedef struct hfile_index_loc {
    uint64_t offset;
    uint32_t on_disk_size;
    uint32_t unused;
} hfile_index_loc;

typedef struct hfile_block {
    uint32_t type;              /* hfile_block_type */
    uint32_t count;             /* cells of a data block, entries of an index block */
    size_t len;                 /* bytes of `bytes` */
    const uint8_t *bytes;
    const hfile_cellpos *cells; /* data blocks: count entries, in order */
    size_t alloc;               /* size of the whole allocation (the cache charge) */
    hfile_encoding encoding;    /* data blocks: how the payload was encoded */
    uint32_t row_prefix;        /* bytes every row of the block shares */
    const uint64_t *row_words;  /* count words (see above), or NULL */
    const uint8_t *prefix;      /* the shared row bytes (row_prefix of them) */
    const hfile_index_loc *locs; /* index blocks: count entries' targets; else NULL */
    const uint64_t *group_words; /* index blocks with row words and over 2 * HFILE_GROUP
                                  * entries: row_words[i * HFILE_GROUP] for
                                  * i < ceil(count / HFILE_GROUP); else NULL */
    /* A copy of short prefixes beside the header, so a search does not touch
     * the first key's cache line just to place the key. */
    uint8_t prefix_copy[HFILE_PREFIX_COPY];
} hfile_block;

/* One zeroed block of the given type with room for ncells cellpos, nwords row
 * words and len bytes; cells, row_words, bytes and alloc point into it. For
 * the decoders, which then fill it. */
hfile_block *hfile_block_alloc(hfile_block_type type, uint32_t ncells, uint32_t nwords,
                               size_t len);

/* Free a block that was not handed to the cache. b may be NULL. */
void hfile_block_free(hfile_block *b);

/* Fill row_prefix, row_words and prefix of a data block once its cells are in
 * place. REQUIRES: count > 0 and every key checked by hfile_block_key_ok. */
void hfile_block_fill_row_words(hfile_block *b);

/* Wrap a non-data payload (index or bloom chunk) as a block: one allocation
 * holding a copy of the bytes. */
hfile_block *hfile_block_wrap(hfile_block_type type, const uint8_t *payload, size_t n,
                              uint32_t count);

/* Wrap a validated non-root index payload (hfile_nonroot_index_check) with
 * row words for its entry keys (none if a key does not decode). */
hfile_block *hfile_block_wrap_index(hfile_block_type type, const uint8_t *payload, size_t n,
                                    uint32_t count);

/* 1 if a serialized key's lengths fit: row and family inside, 12 fixed bytes. */
int hfile_block_key_ok(const uint8_t *k, size_t klen);

/* Row words (see above) of n serialized keys, key_at(ctx, i) giving key i.
 * Returns the length of the row prefix they all share, or -1 if a key does
 * not decode (the words are then unusable). */
long hfile_row_words(kslice (*key_at)(const void *ctx, uint32_t i), const void *ctx, uint32_t n,
                     uint64_t *words);

/* Where key's row stands against rows that all start with row0[0..plen):
 * -1 before them all, 1 after them all, 0 among them (*wk is then its word). */
int hfile_row_word_locate(const uint8_t *row0, uint32_t plen, const kiln_cell *key, uint64_t *wk);

/* Cell i of a decoded data block; c borrows from b. REQUIRES: i < b->count. */
void hfile_block_cell(const hfile_block *b, uint32_t i, kiln_cell *c);

/* The serialized key of cell i. */
static inline kslice
hfile_block_key(const hfile_block *b, uint32_t i)
{
    return kslice_make(b->bytes + b->cells[i].key_off, b->cells[i].key_len);
}

#endif
