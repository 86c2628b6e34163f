/* mr_sortbuf.c -- bounded map-output buffer: append, fold, sort.
 *
 * Layout of the one allocation (cap bytes):
 *
 *   [ record bytes: key then value, growing up ... free ... entries growing down ]
 *   0                                data_len       cap - n * sizeof(entry)     cap
 *
 * The entries therefore form an array (in reverse insertion order) that the
 * sort works on in place. Hashed mode adds a separate index of 64-bit slots:
 * (high 32 bits of the hash << 32) | (entry number + 1), 0 meaning empty,
 * probed linearly from the low bits of the hash and kept under 3/4 full.
 */
#include "mapreduce/mr_sortbuf.h"

#include <stdlib.h>
#include <string.h>

typedef struct mr_sortbuf_ent {
    uint64_t prefix;     /* first 8 key bytes, big-endian, zero-padded */
    uint32_t part;
    uint32_t off;        /* of the key in the record area; value follows */
    uint32_t klen;
    uint32_t vlen;
} mr_sortbuf_ent;

struct mr_sortbuf {
    uint8_t *mem;
    size_t cap;
    size_t data_len;
    size_t n;
    int hashed;
    uint64_t *slots;
    size_t mask;         /* slots - 1 */
    size_t max_n;        /* entry limit from the index load factor */
    kbuf fold_out;
};

static inline mr_sortbuf_ent *
mr_sortbuf_ents(const mr_sortbuf *sb)
{
    return (mr_sortbuf_ent *)(sb->mem + sb->cap) - sb->n;
}

/* Entry by insertion number k (0 = first added). */
static inline mr_sortbuf_ent *
mr_sortbuf_ent_at(const mr_sortbuf *sb, size_t k)
{
    return (mr_sortbuf_ent *)(sb->mem + sb->cap) - 1 - k;
}

mr_sortbuf *
mr_sortbuf_new(size_t budget, int hashed)
{
    if (budget < MR_SORTBUF_MIN)
        budget = MR_SORTBUF_MIN;
    if (budget > ((size_t)1 << 32) - 4096)
        budget = ((size_t)1 << 32) - 4096;
    mr_sortbuf *sb = kiln_calloc(1, sizeof *sb);
    sb->hashed = hashed;
    if (hashed) {
        /* An eighth of the budget for the index: 8-byte slots, so one slot
         * per 64 bytes of budget, enough for records of ~40 bytes with their
         * entry before the record area fills first. */
        size_t slots = 1024;
        while (slots * 2 * sizeof(uint64_t) <= budget / 8)
            slots *= 2;
        sb->slots = kiln_calloc(slots, sizeof(uint64_t));
        sb->mask = slots - 1;
        sb->max_n = slots / 4 * 3;
        budget -= slots * sizeof(uint64_t);
    } else {
        sb->max_n = SIZE_MAX;
    }
    sb->cap = budget & ~(size_t)7;
    sb->mem = kiln_malloc(sb->cap);
    buf_init(&sb->fold_out);
    return sb;
}

void
mr_sortbuf_free(mr_sortbuf *sb)
{
    if (sb == NULL)
        return;
    free(sb->mem);
    free(sb->slots);
    buf_free(&sb->fold_out);
    free(sb);
}

static inline uint64_t
mr_sortbuf_prefix(const uint8_t *k, size_t n)
{
    uint64_t v = 0;
    if (n >= 8) {
        for (int i = 0; i < 8; i++)
            v = (v << 8) | k[i];
        return v;
    }
    for (size_t i = 0; i < 8; i++)
        v = (v << 8) | (i < n ? k[i] : 0);
    return v;
}

static inline int
mr_sortbuf_fits(const mr_sortbuf *sb, size_t bytes, size_t new_entries)
{
    size_t ent_bytes = (sb->n + new_entries) * sizeof(mr_sortbuf_ent);
    return ent_bytes <= sb->cap && sb->data_len + bytes <= sb->cap - ent_bytes;
}

static mr_sortbuf_result
mr_sortbuf_append(mr_sortbuf *sb, uint32_t part, kslice key, kslice value)
{
    size_t bytes = key.n + value.n;
    if (!mr_sortbuf_fits(sb, bytes, 1) || sb->n >= sb->max_n)
        return sb->n == 0 ? MR_SORTBUF_TOO_BIG : MR_SORTBUF_FULL;
    mr_sortbuf_ent *e = mr_sortbuf_ent_at(sb, sb->n);
    e->prefix = mr_sortbuf_prefix(key.p, key.n);
    e->part = part;
    e->off = (uint32_t)sb->data_len;
    e->klen = (uint32_t)key.n;
    e->vlen = (uint32_t)value.n;
    uint8_t *d = sb->mem + sb->data_len;
    if (key.n)
        memcpy(d, key.p, key.n);
    if (value.n)
        memcpy(d + key.n, value.p, value.n);
    sb->data_len += bytes;
    sb->n++;
    return MR_SORTBUF_ADDED;
}

mr_sortbuf_result
mr_sortbuf_add(mr_sortbuf *sb, uint32_t part, uint64_t hash, kslice key, kslice value,
               mr_fold_fn fold, void *fold_arg)
{
    if (!sb->hashed)
        return mr_sortbuf_append(sb, part, key, value);
    uint64_t tag = hash & 0xffffffff00000000ull;
    size_t i = (size_t)hash & sb->mask;
    for (;;) {
        uint64_t s = sb->slots[i];
        if (s == 0)
            break;
        if ((s & 0xffffffff00000000ull) == tag) {
            mr_sortbuf_ent *e = mr_sortbuf_ent_at(sb, (size_t)(s & 0xffffffffu) - 1);
            const uint8_t *k = sb->mem + e->off;
            if (e->klen == key.n && memcmp(k, key.p, key.n) == 0) {
                kslice acc = kslice_make(k + e->klen, e->vlen);
                buf_reset(&sb->fold_out);
                fold(fold_arg, key, acc, value, &sb->fold_out);
                size_t nv = sb->fold_out.len;
                if (nv == e->vlen) {
                    if (nv)
                        memcpy(sb->mem + e->off + e->klen, sb->fold_out.data, nv);
                    return MR_SORTBUF_FOLDED;
                }
                /* The folded value changed size: move the record to the end. */
                if (!mr_sortbuf_fits(sb, key.n + nv, 0))
                    return MR_SORTBUF_FULL;
                uint8_t *d = sb->mem + sb->data_len;
                memmove(d, k, e->klen);
                if (nv)
                    memcpy(d + e->klen, sb->fold_out.data, nv);
                e->off = (uint32_t)sb->data_len;
                e->vlen = (uint32_t)nv;
                sb->data_len += e->klen + nv;
                return MR_SORTBUF_FOLDED;
            }
        }
        i = (i + 1) & sb->mask;
    }
    mr_sortbuf_result r = mr_sortbuf_append(sb, part, key, value);
    if (r == MR_SORTBUF_ADDED)
        sb->slots[i] = tag | (uint64_t)sb->n;
    return r;
}

/* ------------------------------------------------------------------ sorting */

static inline int
mr_sortbuf_cmp(const uint8_t *mem, const mr_sortbuf_ent *a, const mr_sortbuf_ent *b)
{
    if (a->part != b->part)
        return a->part < b->part ? -1 : 1;
    if (a->prefix != b->prefix)
        return a->prefix < b->prefix ? -1 : 1;
    kslice ka = kslice_make(mem + a->off, a->klen);
    kslice kb = kslice_make(mem + b->off, b->klen);
    int c = kslice_cmp(ka, kb);
    if (c != 0)
        return c;
    return kslice_cmp(kslice_make(mem + a->off + a->klen, a->vlen),
                      kslice_make(mem + b->off + b->klen, b->vlen));
}

static void
mr_sortbuf_insertion(const uint8_t *mem, mr_sortbuf_ent *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        mr_sortbuf_ent x = v[i];
        size_t j = i;
        while (j > 0 && mr_sortbuf_cmp(mem, &x, &v[j - 1]) < 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

static void
mr_sortbuf_sift(const uint8_t *mem, mr_sortbuf_ent *v, size_t root, size_t n)
{
    for (;;) {
        size_t c = 2 * root + 1;
        if (c >= n)
            return;
        if (c + 1 < n && mr_sortbuf_cmp(mem, &v[c], &v[c + 1]) < 0)
            c++;
        if (mr_sortbuf_cmp(mem, &v[root], &v[c]) >= 0)
            return;
        mr_sortbuf_ent t = v[root];
        v[root] = v[c];
        v[c] = t;
        root = c;
    }
}

static void
mr_sortbuf_heapsort(const uint8_t *mem, mr_sortbuf_ent *v, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        mr_sortbuf_sift(mem, v, i, n);
    for (size_t i = n; i-- > 1;) {
        mr_sortbuf_ent t = v[0];
        v[0] = v[i];
        v[i] = t;
        mr_sortbuf_sift(mem, v, 0, i);
    }
}

/* Introsort: median-of-three quicksort, heapsort past the depth limit,
 * insertion sort for short ranges. */
static void
mr_sortbuf_introsort(const uint8_t *mem, mr_sortbuf_ent *v, size_t n, int depth)
{
    while (n > 24) {
        if (depth-- == 0) {
            mr_sortbuf_heapsort(mem, v, n);
            return;
        }
        size_t m = n / 2;
        if (mr_sortbuf_cmp(mem, &v[m], &v[0]) < 0) {
            mr_sortbuf_ent t = v[m]; v[m] = v[0]; v[0] = t;
        }
        if (mr_sortbuf_cmp(mem, &v[n - 1], &v[0]) < 0) {
            mr_sortbuf_ent t = v[n - 1]; v[n - 1] = v[0]; v[0] = t;
        }
        if (mr_sortbuf_cmp(mem, &v[n - 1], &v[m]) < 0) {
            mr_sortbuf_ent t = v[n - 1]; v[n - 1] = v[m]; v[m] = t;
        }
        mr_sortbuf_ent pivot = v[m];
        size_t i = 0, j = n - 1;
        for (;;) {
            while (mr_sortbuf_cmp(mem, &v[i], &pivot) < 0)
                i++;
            while (mr_sortbuf_cmp(mem, &pivot, &v[j]) < 0)
                j--;
            if (i >= j)
                break;
            mr_sortbuf_ent t = v[i]; v[i] = v[j]; v[j] = t;
            i++;
            j--;
        }
        /* [0, j] <= pivot <= [j+1, n): recurse into the smaller side. */
        size_t left = j + 1;
        if (left < n - left) {
            mr_sortbuf_introsort(mem, v, left, depth);
            v += left;
            n -= left;
        } else {
            mr_sortbuf_introsort(mem, v + left, n - left, depth);
            n = left;
        }
    }
    mr_sortbuf_insertion(mem, v, n);
}

void
mr_sortbuf_sort(mr_sortbuf *sb)
{
    int depth = 0;
    for (size_t n = sb->n; n > 1; n >>= 1)
        depth += 2;
    mr_sortbuf_introsort(sb->mem, mr_sortbuf_ents(sb), sb->n, depth);
}

size_t
mr_sortbuf_count(const mr_sortbuf *sb)
{
    return sb->n;
}

void
mr_sortbuf_get(const mr_sortbuf *sb, size_t i, uint32_t *part, kslice *key, kslice *value)
{
    const mr_sortbuf_ent *e = mr_sortbuf_ents(sb) + i;
    *part = e->part;
    *key = kslice_make(sb->mem + e->off, e->klen);
    *value = kslice_make(sb->mem + e->off + e->klen, e->vlen);
}

size_t
mr_sortbuf_used(const mr_sortbuf *sb)
{
    return sb->data_len + sb->n * sizeof(mr_sortbuf_ent);
}

void
mr_sortbuf_reset(mr_sortbuf *sb)
{
    if (sb->hashed && sb->n > 0)
        memset(sb->slots, 0, (sb->mask + 1) * sizeof(uint64_t));
    sb->n = 0;
    sb->data_len = 0;
}
