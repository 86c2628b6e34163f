/* hfile_reader_int.h -- the inside of an open HFile reader, shared by the
 * files that implement hfile_reader.h (private to storage/hfile/):
 *
 *   hfile_reader_open.c    open and close: trailer, load-on-open section, bloom
 *                          metadata, pin tables; reading a block (checks,
 *                          checksums, decompression, decoding) and fetching it
 *                          through the cache
 *   hfile_reader.c         accessors, bloom checks, prefetch
 *   hfile_reader_cursor.c  the index cursor: one position per index level
 *   hfile_reader_iter.c    iteration, forward and reverse
 *   hfile_reader_check.c   the full file check (hfile_reader_check)
 */
#ifndef KILN_HFILE_READER_INT_H
#define KILN_HFILE_READER_INT_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "storage/base/block_cache.h"
#include "storage/base/compress.h"
#include "storage/base/env.h"
#include "storage/base/status.h"
#include "storage/hfile/hfile_block.h"
#include "storage/hfile/hfile_encoding.h"
#include "storage/hfile/hfile_reader.h"

#define MAX_INDEX_LEVELS 16
/* Load-on-open sections and single blocks above this are treated as corrupt. */
#define SECTION_MAX ((uint64_t)1 << 30)
#define TYPE_BIT(t) (1u << (t))
#define DATA_TYPES (TYPE_BIT(HFILE_BLOCK_DATA) | TYPE_BIT(HFILE_BLOCK_ENCODED_DATA))

/* Blocks a reader keeps pinned in the cache once first read (slot i for
 * entry i), so the hot path skips their cache lookups. */
typedef struct pin_table {
    _Atomic(block_cache_handle *) *slots;
    uint32_t n;
} pin_table;

typedef struct bloom_meta {
    int usable;                 /* version 3, murmur hash, sane parameters */
    uint8_t *payload;           /* owns the decompressed meta block; chunk keys borrow */
    uint32_t hash_count;
    uint32_t nchunks;
    hfile_index_entry *chunks;
    uint64_t *chunk_prefix;     /* ROW: each chunk key's first 8 bytes, big-endian, zero-padded */
    uint64_t total_bytes, total_keys, total_max_keys;
    int cell_keys;              /* ROWCOL: chunk keys compare as KeyValue keys */
    uint64_t offset;            /* of the meta block (for messages) */
    pin_table pins;             /* the chunks, when the reader pins them */
} bloom_meta;

struct hfile_reader {
    char *path;
    env_file *f;
    uint64_t size;
    uint64_t file_id;
    block_cache *cache;
    int own_cache;
    hfile_trailer t;
    uint64_t trailer_size;
    uint64_t data_end;          /* where the load-on-open section starts */
    kiln_codec codec;
    hfile_fileinfo fi;
    hfile_cell_format fmt;
    hfile_encoding encoding;
    uint8_t *root_payload;
    size_t root_len, root_used;
    hfile_index_entry *root;
    uint32_t root_count;
    uint64_t *root_words;       /* row words of the root keys (hfile_block.h) */
    uint32_t root_prefix;
    uint32_t levels;
    kslice first_key, last_key;
    kiln_bloom_type bloom_type;
    bloom_meta general, delfam;
    int64_t delete_family_count;    /* -1 if FileInfo does not say */
    /* Every block of a file carries the same checksum type and chunk size
     * (those of the first load-on-open block): a block whose header says
     * otherwise is damaged, and must not switch its own verification off. */
    int checksum_known;
    uint8_t checksum_type;
    uint32_t bytes_per_checksum;
    pin_table root_children;    /* index blocks under the root, when pinned */
    size_t pins_reserved;       /* block_cache_reserve'd for the pins */
    uint64_t loo_uncompressed;      /* sum of uncompressed+33 over load-on-open blocks but the data root */
    size_t memory;
};

/* "PATH: message" into err; returns code. */
static inline kiln_status
rerr(const hfile_reader *r, kiln_err *err, kiln_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static inline kiln_status
rerr(const hfile_reader *r, kiln_err *err, kiln_status code, const char *fmt, ...)
{
    char msg[STATUS_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return status_set(err, code, "%s: %s", r->path, msg);
}

/* ---------------------------------------------------------- blocks (hfile_reader_open.c) */

/* Read the block at off of the given on-disk size from disk, verify it
 * (header, type in type_mask, checksums, decompression) and build its cached
 * form in *out (the caller owns it). *hout gets its header when not NULL. */
kiln_status hfile_reader_block_load(const hfile_reader *r, uint64_t off, uint64_t size,
                                    unsigned type_mask, hfile_block **out,
                                    hfile_block_header *hout, kiln_err *err);
/* The block at off through the cache, pinned in *hp (to block_cache_release);
 * *bp is its cached form. */
kiln_status hfile_reader_block_get(hfile_reader *r, uint64_t off, uint64_t size,
                                   unsigned type_mask, block_cache_handle **hp,
                                   const hfile_block **bp, kiln_err *err);
/* The block of slot i through the pin table pt: pinned for the reader's life
 * on first use (*hp NULL). Falls back to hfile_reader_block_get (*hp set, to
 * release) when the table is off. */
kiln_status hfile_reader_block_get_pinned(hfile_reader *r, pin_table *pt, uint32_t i,
                                          uint64_t off, uint64_t size, unsigned type_mask,
                                          block_cache_handle **hp, const hfile_block **bp,
                                          kiln_err *err);

/* ---------------------------------------------------------- blooms (hfile_reader.c) */

/* Order of ROWCOL bloom chunk keys: row, then qualifier (the family is fixed
 * within a file). */
int hfile_reader_rowcol_compare(const uint8_t *a, size_t an, const uint8_t *b, size_t bn);

/* ---------------------------------------------------------- index cursor (hfile_reader_cursor.c) */

typedef struct cursor_level {
    block_cache_handle *h;      /* NULL at the root */
    const hfile_block *b;
    uint64_t off;
    uint32_t pos, count;
} cursor_level;

typedef struct icursor {
    hfile_reader *r;
    uint32_t levels;
    cursor_level lv[MAX_INDEX_LEVELS];
    int checking;               /* hfile_reader_check: verify child keys against parents */
} icursor;

enum { POS_FIRST, POS_LAST, POS_KEY, POS_KEY_PREV };

/* Position the whole cursor: at the first or last data block entry
 * (POS_FIRST, POS_LAST), or for POS_KEY at the last entry whose key is <= key
 * (the first if none is). KILN_NOT_FOUND if the index is empty. */
kiln_status hfile_cursor_seek(icursor *c, int mode, const kiln_cell *key, kiln_err *err);
/* Step to the next (dir 1) or previous (-1) data block entry. KILN_NOT_FOUND
 * past either end (the cursor is then unchanged). */
kiln_status hfile_cursor_step(icursor *c, int dir, kiln_err *err);
/* The data block entry the cursor is at. */
void hfile_cursor_data_entry(const icursor *c, hfile_index_entry *e);
/* Where that entry points, without reading its key. */
void hfile_cursor_data_loc(const icursor *c, uint64_t *offset, uint32_t *on_disk_size);
/* Where the next data block entry points, if the leaf level the cursor is at
 * has one (1; else 0): a step that stays in its leaf block, seen in advance. */
int hfile_cursor_next_data_loc(const icursor *c, uint64_t *offset);
/* Release the index blocks the cursor holds. */
void hfile_cursor_release(icursor *c);

/* The first 8 bytes of a key as a big-endian number, zero-padded: two keys
 * whose prefixes differ are ordered as their prefixes are. */
static inline uint64_t
hfile_key_prefix(const uint8_t *k, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < 8; i++)
        v = (v << 8) | (i < n ? k[i] : 0);
    return v;
}

#endif
