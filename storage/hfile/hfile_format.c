/* hfile_format.c -- block magics, encoding names and the FileInfo map, shared by
 * the encoders (hfile_format_write.c) and decoders (hfile_format_read.c). */
#include "storage/hfile/hfile_format.h"

#include "storage/base/coding.h"

#include <stdlib.h>
#include <string.h>

static const char block_magics[HFILE_BLOCK_TYPE_COUNT][9] = {
    "DATABLK*", "DATABLKE", "IDXLEAF2", "BLMFBLK2", "METABLKc", "IDXINTE2",
    "IDXROOT2", "FILEINF2", "BLMFMET2", "DFBLMET2", "TRABLK\"$", "IDXBLK)+"};

const uint8_t *
hfile_block_magic(hfile_block_type t)
{
    return (const uint8_t *)block_magics[t];
}

const char *
hfile_block_type_name(hfile_block_type t)
{
    if ((unsigned)t >= HFILE_BLOCK_TYPE_COUNT)
        return "UNKNOWN";
    return block_magics[t];
}

int
hfile_block_type_from_magic(const uint8_t *magic)
{
    for (int i = 0; i < HFILE_BLOCK_TYPE_COUNT; i++)
        if (memcmp(magic, block_magics[i], 8) == 0)
            return i;
    return -1;
}

const char *
hfile_encoding_name(hfile_encoding e)
{
    switch (e) {
    case HFILE_ENCODING_NONE:         return "NONE";
    case HFILE_ENCODING_PREFIX:       return "PREFIX";
    case HFILE_ENCODING_DIFF:         return "DIFF";
    case HFILE_ENCODING_FAST_DIFF:    return "FAST_DIFF";
    case HFILE_ENCODING_ROW_INDEX_V1: return "ROW_INDEX_V1";
    }
    return "UNKNOWN";
}

int
hfile_encoding_parse(const char *name, size_t n, hfile_encoding *out)
{
    static const hfile_encoding all[] = {HFILE_ENCODING_NONE, HFILE_ENCODING_PREFIX,
                                         HFILE_ENCODING_DIFF, HFILE_ENCODING_FAST_DIFF,
                                         HFILE_ENCODING_ROW_INDEX_V1};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        const char *s = hfile_encoding_name(all[i]);
        if (strlen(s) == n && memcmp(s, name, n) == 0) {
            *out = all[i];
            return 0;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------ FileInfo */

void
hfile_fileinfo_init(hfile_fileinfo *fi)
{
    fi->entries = NULL;
    fi->count = 0;
    fi->cap = 0;
}

void
hfile_fileinfo_free(hfile_fileinfo *fi)
{
    if (fi == NULL)
        return;
    for (size_t i = 0; i < fi->count; i++) {
        free((void *)fi->entries[i].key.p);
        free((void *)fi->entries[i].value.p);
    }
    free(fi->entries);
    hfile_fileinfo_init(fi);
}

/* Index of the first entry with key >= k (binary search). */
static size_t
fileinfo_lower_bound(const hfile_fileinfo *fi, kslice k)
{
    size_t lo = 0, hi = fi->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (kslice_cmp(fi->entries[mid].key, k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void
fileinfo_set_bytes(hfile_fileinfo *fi, kslice k, const void *value, size_t vlen)
{
    size_t i = fileinfo_lower_bound(fi, k);
    if (i < fi->count && kslice_eq(fi->entries[i].key, k)) {
        free((void *)fi->entries[i].value.p);
        fi->entries[i].value = kslice_make(kiln_memdup(value, vlen), vlen);
        return;
    }
    if (fi->count == fi->cap) {
        fi->cap = fi->cap ? fi->cap * 2 : 16;
        fi->entries = kiln_realloc(fi->entries, fi->cap * sizeof fi->entries[0]);
    }
    memmove(fi->entries + i + 1, fi->entries + i, (fi->count - i) * sizeof fi->entries[0]);
    fi->entries[i].key = kslice_make(kiln_memdup(k.p, k.n), k.n);
    fi->entries[i].value = kslice_make(kiln_memdup(value, vlen), vlen);
    fi->count++;
}

void
hfile_fileinfo_set(hfile_fileinfo *fi, const char *key, const void *value, size_t vlen)
{
    fileinfo_set_bytes(fi, kslice_str(key), value, vlen);
}

void
hfile_fileinfo_set_raw(hfile_fileinfo *fi, kslice key, kslice value)
{
    fileinfo_set_bytes(fi, key, value.p, value.n);
}

void
hfile_fileinfo_set_i32(hfile_fileinfo *fi, const char *key, int32_t v)
{
    uint8_t b[4];
    coding_put_be32(b, (uint32_t)v);
    hfile_fileinfo_set(fi, key, b, 4);
}

void
hfile_fileinfo_set_i64(hfile_fileinfo *fi, const char *key, int64_t v)
{
    uint8_t b[8];
    coding_put_be64(b, (uint64_t)v);
    hfile_fileinfo_set(fi, key, b, 8);
}

void
hfile_fileinfo_set_bool(hfile_fileinfo *fi, const char *key, int v)
{
    uint8_t b = v ? 0xFF : 0x00;
    hfile_fileinfo_set(fi, key, &b, 1);
}

int
hfile_fileinfo_get(const hfile_fileinfo *fi, const char *key, kslice *value)
{
    kslice k = kslice_str(key);
    size_t i = fileinfo_lower_bound(fi, k);
    if (i < fi->count && kslice_eq(fi->entries[i].key, k)) {
        *value = fi->entries[i].value;
        return 1;
    }
    return 0;
}

int
hfile_fileinfo_get_i32(const hfile_fileinfo *fi, const char *key, int32_t *v)
{
    kslice s;
    if (!hfile_fileinfo_get(fi, key, &s) || s.n != 4)
        return 0;
    *v = (int32_t)coding_get_be32(s.p);
    return 1;
}

int
hfile_fileinfo_get_i64(const hfile_fileinfo *fi, const char *key, int64_t *v)
{
    kslice s;
    if (!hfile_fileinfo_get(fi, key, &s) || s.n != 8)
        return 0;
    *v = (int64_t)coding_get_be64(s.p);
    return 1;
}
