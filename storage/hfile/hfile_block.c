/* hfile_block.c -- the decoded data block as it sits in the block cache: one
 * allocation holding the hfile_block header, the cell positions, the row
 * words and the bytes (layout in hfile_block.h); wrapping index and bloom
 * chunk payloads in the same form; reading a cell back out of it. The
 * decoders that fill it from the encoded payload are hfile_encoding.c.
 */
#include "storage/hfile/hfile_block.h"

#include "storage/base/block_cache.h"
#include "storage/base/coding.h"

#include <string.h>

/* A serialized key's lengths fit: row and family inside, 12 fixed bytes. */
int
hfile_block_key_ok(const uint8_t *k, size_t klen)
{
    if (klen < CELL_KEY_INFRASTRUCTURE)
        return 0;
    size_t rlen = coding_get_be16(k);
    if (rlen + CELL_KEY_INFRASTRUCTURE > klen)
        return 0;
    size_t flen = k[2 + rlen];
    return rlen + flen + CELL_KEY_INFRASTRUCTURE <= klen;
}

hfile_block *
hfile_block_alloc(hfile_block_type type, uint32_t ncells, uint32_t nwords, size_t len)
{
    size_t head = sizeof(hfile_block) + (size_t)nwords * sizeof(uint64_t) +
                  (size_t)ncells * sizeof(hfile_cellpos);
    size_t alloc = head + len;
    hfile_block *b = block_cache_block_alloc(alloc);
    memset(b, 0, sizeof *b);
    b->type = type;
    b->count = ncells;
    b->len = len;
    /* the words first: a lookup asks for the block's first lines with its
     * cache entry (block_cache_lookup), and a small block's search then
     * finds its words there */
    b->row_words = nwords ? (const uint64_t *)(b + 1) : NULL;
    b->cells = ncells ? (const hfile_cellpos *)((const uint8_t *)(b + 1) +
                                                (size_t)nwords * sizeof(uint64_t))
                      : NULL;
    b->bytes = (const uint8_t *)b + head;
    b->alloc = alloc;
    return b;
}

void
hfile_block_free(hfile_block *b)
{
    block_cache_block_free(b);
}

/* Up to 8 bytes of p[0..n) as a big-endian word, zero-padded. */
static uint64_t
row_word(const uint8_t *p, size_t n)
{
    uint64_t w = 0;
    for (size_t i = 0; i < 8; i++)
        w = (w << 8) | (i < n ? p[i] : 0);
    return w;
}

long
hfile_row_words(kslice (*key_at)(const void *ctx, uint32_t i), const void *ctx, uint32_t n,
                uint64_t *words)
{
    if (n == 0)
        return 0;
    /* Rows are not assumed sorted (a corrupt block may not be): the prefix is
     * the one all rows share. */
    kslice k0 = key_at(ctx, 0);
    if (!hfile_block_key_ok(k0.p, k0.n))
        return -1;
    const uint8_t *r0 = k0.p + 2;
    size_t cp = coding_get_be16(k0.p);
    for (uint32_t i = 1; i < n; i++) {
        kslice k = key_at(ctx, i);
        if (!hfile_block_key_ok(k.p, k.n))
            return -1;
        size_t rn = coding_get_be16(k.p), j = 0, m = rn < cp ? rn : cp;
        while (j < m && k.p[2 + j] == r0[j])
            j++;
        cp = j;
    }
    for (uint32_t i = 0; i < n; i++) {
        kslice k = key_at(ctx, i);
        size_t rn = coding_get_be16(k.p);
        words[i] = row_word(k.p + 2 + cp, rn - cp);
    }
    return (long)cp;
}

int
hfile_row_word_locate(const uint8_t *row0, uint32_t plen, const kiln_cell *key, uint64_t *wk)
{
    size_t m = key->row_len < plen ? key->row_len : plen;
    int c = m ? memcmp(key->row, row0, m) : 0;
    if (c < 0 || (c == 0 && key->row_len < plen))
        return -1;
    if (c > 0)
        return 1;
    *wk = row_word(key->row + plen, key->row_len - plen);
    return 0;
}

static kslice
cell_key_at(const void *ctx, uint32_t i)
{
    return hfile_block_key(ctx, i);
}

/* Point prefix at row0's first row_prefix bytes, copied beside the header
 * when short. */
static void
block_set_prefix(hfile_block *b, const uint8_t *row0)
{
    b->prefix = row0;
    if (b->row_prefix <= HFILE_PREFIX_COPY) {
        if (b->row_prefix)
            memcpy(b->prefix_copy, row0, b->row_prefix);
        b->prefix = b->prefix_copy;
    }
}

/* Fill row_prefix and row_words once the cells are in place. */
void
hfile_block_fill_row_words(hfile_block *b)
{
    long cp = hfile_row_words(cell_key_at, b, b->count, (uint64_t *)b->row_words);
    b->row_prefix = (uint32_t)cp; /* cells were checked: every key decodes */
    block_set_prefix(b, b->bytes + b->cells[0].key_off + 2);
}

hfile_block *
hfile_block_wrap(hfile_block_type type, const uint8_t *payload, size_t n, uint32_t count)
{
    hfile_block *b = hfile_block_alloc(type, 0, 0, n);
    b->count = count;
    if (n)
        memcpy((uint8_t *)b->bytes, payload, n);
    return b;
}

static kslice
index_key_at(const void *ctx, uint32_t i)
{
    hfile_index_entry e;
    hfile_nonroot_index_entry(ctx, i, &e);
    return e.key;
}

hfile_block *
hfile_block_wrap_index(hfile_block_type type, const uint8_t *payload, size_t n,
                          uint32_t count)
{
    /* the words, then the locations (two words each), then the group words
     * (for a block of more than two groups' entries: a smaller one's search
     * is short without them) */
    _Static_assert(sizeof(hfile_index_loc) == 2 * sizeof(uint64_t), "a location is two words");
    uint32_t groups = count > 2 * HFILE_GROUP
                          ? (uint32_t)(((uint64_t)count + HFILE_GROUP - 1) / HFILE_GROUP)
                          : 0;
    hfile_block *b = hfile_block_alloc(type, 0, 3 * count + groups, n);
    b->count = count;
    if (n)
        memcpy((uint8_t *)b->bytes, payload, n);
    if (count) {
        hfile_index_loc *locs = (hfile_index_loc *)(b->row_words + count);
        for (uint32_t i = 0; i < count; i++) {
            hfile_index_entry e;
            hfile_nonroot_index_entry(b->bytes, i, &e);
            locs[i].offset = e.offset;
            locs[i].on_disk_size = e.on_disk_size;
            locs[i].unused = 0;
        }
        b->locs = locs;
    }
    long cp = hfile_row_words(index_key_at, b->bytes, count, (uint64_t *)b->row_words);
    if (cp < 0) {
        b->row_words = NULL;
    } else {
        b->row_prefix = (uint32_t)cp;
        block_set_prefix(b, index_key_at(b->bytes, 0).p + 2);
        uint64_t *gw = (uint64_t *)b->row_words + 3 * (size_t)count;
        for (uint32_t g = 0; g < groups; g++)
            gw[g] = b->row_words[(size_t)g * HFILE_GROUP];
        b->group_words = groups ? gw : NULL;
    }
    return b;
}

void
hfile_block_cell(const hfile_block *b, uint32_t i, kiln_cell *c)
{
    const hfile_cellpos *cp = &b->cells[i];
    const uint8_t *k = b->bytes + cp->key_off;
    uint32_t klen = cp->key_len;
    uint32_t rlen = coding_get_be16(k);
    uint32_t flen = k[2 + rlen];
    c->row = k + 2;
    c->row_len = rlen;
    c->family = k + 3 + rlen;
    c->family_len = flen;
    c->qualifier = k + 3 + rlen + flen;
    c->qualifier_len = klen - rlen - flen - CELL_KEY_INFRASTRUCTURE;
    c->ts = (int64_t)coding_get_be64(k + klen - 9);
    c->type = k[klen - 1];
    c->value = k + klen;
    c->value_len = cp->val_len;
    c->tags = b->bytes + cp->tags_off;
    c->tags_len = cp->tags_len;
    c->mvcc = cp->mvcc;
}
