/* mr_sortbuf.c -- bounded map-output buffer: append, fold, sort.
 *
 * A record is self-describing, so a lookup needs nothing else:
 *
 *   OFFSET | SIZE | FIELD
 *   0      | 4    | key length K (host order)
 *   4      | 4    | value length V
 *   8      | 4    | partition (hashed mode: MR_SORTBUF_DEAD once the record moved)
 *   12     | K    | key
 *   12+K   | V    | value
 *
 * Plain mode, one allocation of cap bytes:
 *
 *   [ records, growing up ... free ... entries growing down ]
 *   0                data_len        cap - n * sizeof(entry)   cap
 *
 * The entries (8-byte key prefix, partition, record offset) form an array in
 * reverse insertion order that the sort works on in place.
 *
 * Hashed mode: the allocation holds records only, and a separate index of
 * 64-bit slots, (high 32 bits of the hash << 32) | (record offset + 1), 0
 * meaning empty, probed linearly from a multiply-shift of those same high 32
 * bits and kept at most half full. A hit costs two cache lines at most (slot,
 * record), which is what bounds the map side of word count. The index starts
 * small and doubles as keys arrive, up to a third of the budget: it stays as
 * dense as the keys allow, so a job with few distinct keys keeps it in cache,
 * and a slot alone says where it goes in the doubled index. No entry exists
 * until the sort: it scans the records and builds the entries inside the
 * index memory (n <= slots / 2 entries of 16 bytes fill at most the slots'
 * 8 * slots bytes), which the reset after the spill clears anyway. So the
 * budget pays for no entry array while keys are being combined.
 */
#include "mapreduce/mr_sortbuf.h"

#include <stdlib.h>
#include <string.h>

#include "storage/base/coding.h"

#define MR_SORTBUF_REC_HDR 12
#define MR_SORTBUF_DEAD UINT32_MAX
#define MR_SORTBUF_FIRST_SLOTS 4096   /* the hash index's first size: 32 KiB */

typedef struct mr_sortbuf_ent {
    uint64_t prefix;     /* first 8 key bytes, big-endian, zero-padded */
    uint32_t part;
    uint32_t off;        /* of the record */
} mr_sortbuf_ent;

/* Equality of two short byte strings of length n without a library call:
 * word compares, the tail as one overlapping word when n >= 8. */
static inline int
mr_sortbuf_key_eq(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint64_t x, y;
    if (n >= 8) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y)
                return 0;
        }
        if (i == n)
            return 1;
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    if (n >= 4) {
        uint32_t u, v;
        memcpy(&u, a, 4);
        memcpy(&v, b, 4);
        if (u != v)
            return 0;
        memcpy(&u, a + n - 4, 4);
        memcpy(&v, b + n - 4, 4);
        return u == v;
    }
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

static inline uint32_t
mr_sortbuf_rec_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline void
mr_sortbuf_rec_put_u32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

struct mr_sortbuf {
    uint8_t *mem;
    size_t cap;
    size_t data_len;
    size_t n;            /* live records */
    int hashed;
    uint64_t *slots;
    size_t n_slots;      /* hashed: the index's size now */
    size_t slots_max;    /* hashed: its size at most, a third of the budget */
    size_t max_n;        /* hashed: slots_max / 2 */
    mr_sortbuf_ent *sorted;  /* hashed, after sort: the entries, in the index memory */
    kbuf fold_out;
    mr_key_order order;  /* the job's sort comparator; cmp NULL: bytes */
};

/* Plain mode: the entry array below the top of the allocation. */
static inline mr_sortbuf_ent *
mr_sortbuf_ents(const mr_sortbuf *sb)
{
    return sb->hashed ? sb->sorted : (mr_sortbuf_ent *)(sb->mem + sb->cap) - sb->n;
}

/* The home slot of a hash, or of a slot's tag (its high 32 bits). */
static inline size_t
mr_sortbuf_home_in(size_t n_slots, uint64_t hash)
{
    return (size_t)(((hash >> 32) * (uint64_t)n_slots) >> 32);
}

static inline size_t
mr_sortbuf_home(const mr_sortbuf *sb, uint64_t hash)
{
    return mr_sortbuf_home_in(sb->n_slots, hash);
}

/* Double the index (to slots_max at most), moving every slot to its home in
 * the new size: the tag is all it takes. */
static void
mr_sortbuf_grow(mr_sortbuf *sb)
{
    size_t n = sb->n_slots * 2 < sb->slots_max ? sb->n_slots * 2 : sb->slots_max;
    uint64_t *slots = kiln_calloc(n, sizeof(uint64_t));
    for (size_t j = 0; j < sb->n_slots; j++) {
        uint64_t s = sb->slots[j];
        if (s == 0)
            continue;
        size_t i = mr_sortbuf_home_in(n, s);
        while (slots[i] != 0)
            if (++i == n)
                i = 0;
        slots[i] = s;
    }
    free(sb->slots);
    sb->slots = slots;
    sb->n_slots = n;
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
        /* A third of the budget for the index: with records of ~28 bytes
         * (word count: 12 header, 8 key, 8 value) the record area and the
         * index's half-full limit are reached together. */
        sb->slots_max = budget / 3 / sizeof(uint64_t);
        sb->n_slots = sb->slots_max < MR_SORTBUF_FIRST_SLOTS ? sb->slots_max : MR_SORTBUF_FIRST_SLOTS;
        sb->slots = kiln_calloc(sb->n_slots, sizeof(uint64_t));
        sb->max_n = sb->slots_max / 2;
        budget -= sb->slots_max * sizeof(uint64_t);
    } else {
        sb->max_n = SIZE_MAX;
    }
    sb->cap = budget & ~(size_t)7;
    sb->mem = kiln_malloc(sb->cap);
    buf_init(&sb->fold_out);
    return sb;
}

void
mr_sortbuf_set_order(mr_sortbuf *sb, mr_key_cmp_fn cmp, void *arg)
{
    sb->order.cmp = cmp;
    sb->order.arg = arg;
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
        memcpy(&v, k, 8);
        return __builtin_bswap64(v);
    }
    for (size_t i = 0; i < 8; i++)
        v = (v << 8) | (i < n ? k[i] : 0);
    return v;
}

/* Room for a record of `bytes` (and, in plain mode, its entry). */
static inline int
mr_sortbuf_fits(const mr_sortbuf *sb, size_t bytes)
{
    size_t ent_bytes = sb->hashed ? 0 : (sb->n + 1) * sizeof(mr_sortbuf_ent);
    return ent_bytes <= sb->cap && sb->data_len + bytes <= sb->cap - ent_bytes;
}

/* Write a record at the end of the record area; returns its offset. */
static inline uint32_t
mr_sortbuf_put(mr_sortbuf *sb, kslice key, const void *v, size_t vn, uint32_t part)
{
    uint32_t off = (uint32_t)sb->data_len;
    uint8_t *d = sb->mem + off;
    mr_sortbuf_rec_put_u32(d, (uint32_t)key.n);
    mr_sortbuf_rec_put_u32(d + 4, (uint32_t)vn);
    mr_sortbuf_rec_put_u32(d + 8, part);
    if (key.n)
        memcpy(d + MR_SORTBUF_REC_HDR, key.p, key.n);
    if (vn)
        memcpy(d + MR_SORTBUF_REC_HDR + key.n, v, vn);
    sb->data_len += MR_SORTBUF_REC_HDR + key.n + vn;
    return off;
}

static mr_sortbuf_result
mr_sortbuf_append(mr_sortbuf *sb, uint32_t part, kslice key, kslice value, uint32_t *off)
{
    if (key.n > UINT32_MAX - MR_SORTBUF_REC_HDR || value.n > UINT32_MAX - MR_SORTBUF_REC_HDR - key.n ||
        part == MR_SORTBUF_DEAD || !mr_sortbuf_fits(sb, MR_SORTBUF_REC_HDR + key.n + value.n) ||
        sb->n >= sb->max_n)
        return sb->n == 0 ? MR_SORTBUF_TOO_BIG : MR_SORTBUF_FULL;
    *off = mr_sortbuf_put(sb, key, value.p, value.n, part);
    if (!sb->hashed) {
        mr_sortbuf_ent *e = (mr_sortbuf_ent *)(sb->mem + sb->cap) - 1 - sb->n;
        e->prefix = mr_sortbuf_prefix(key.p, key.n);
        e->part = part;
        e->off = *off;
    }
    sb->n++;
    return MR_SORTBUF_ADDED;
}

void
mr_sortbuf_fold_sum_be64(void *arg, kslice key, kslice acc, kslice val, kbuf *out)
{
    uint64_t a = acc.n == 8 ? coding_get_be64(acc.p) : 0;
    uint64_t b = val.n == 8 ? coding_get_be64(val.p) : 0;
    buf_append_be64(out, a + b);
}

mr_sortbuf_result
mr_sortbuf_add(mr_sortbuf *sb, uint32_t part, uint64_t hash, kslice key, kslice value,
               mr_fold_fn fold, void *fold_arg)
{
    uint32_t off;
    if (!sb->hashed)
        return mr_sortbuf_append(sb, part, key, value, &off);
    /* Half full: double, so that a new key finds room (and the sort's
     * entries, 16 bytes a key, fit in the index memory). */
    if (sb->n >= sb->n_slots / 2 && sb->n_slots < sb->slots_max)
        mr_sortbuf_grow(sb);
    uint64_t tag = hash & 0xffffffff00000000ull;
    size_t i = mr_sortbuf_home(sb, hash);
    for (;;) {
        uint64_t s = sb->slots[i];
        if (s == 0)
            break;
        if ((s & 0xffffffff00000000ull) == tag) {
            uint8_t *rec = sb->mem + (uint32_t)s - 1;
            uint32_t klen = mr_sortbuf_rec_u32(rec);
            if (klen == key.n && mr_sortbuf_key_eq(rec + MR_SORTBUF_REC_HDR, key.p, key.n)) {
                uint32_t vlen = mr_sortbuf_rec_u32(rec + 4);
                uint8_t *acc = rec + MR_SORTBUF_REC_HDR + klen;
                if (fold == mr_sortbuf_fold_sum_be64 && vlen == 8 && value.n == 8) {
                    uint64_t a, b;
                    memcpy(&a, acc, 8);
                    memcpy(&b, value.p, 8);
                    a = __builtin_bswap64(__builtin_bswap64(a) + __builtin_bswap64(b));
                    memcpy(acc, &a, 8);
                    return MR_SORTBUF_FOLDED;
                }
                buf_reset(&sb->fold_out);
                fold(fold_arg, key, kslice_make(acc, vlen), value, &sb->fold_out);
                size_t nv = sb->fold_out.len;
                if (nv == vlen) {
                    if (nv)
                        memcpy(acc, sb->fold_out.data, nv);
                    return MR_SORTBUF_FOLDED;
                }
                /* The folded value changed size: the record moves to the end
                 * and the old copy is marked dead for the sort's scan. */
                if (nv > UINT32_MAX - MR_SORTBUF_REC_HDR - klen ||
                    !mr_sortbuf_fits(sb, MR_SORTBUF_REC_HDR + klen + nv))
                    return MR_SORTBUF_FULL;
                uint32_t p = mr_sortbuf_rec_u32(rec + 8);
                uint32_t noff = mr_sortbuf_put(sb, kslice_make(rec + MR_SORTBUF_REC_HDR, klen),
                                               sb->fold_out.data, nv, p);
                mr_sortbuf_rec_put_u32(rec + 8, MR_SORTBUF_DEAD);
                sb->slots[i] = tag | ((uint64_t)noff + 1);
                return MR_SORTBUF_FOLDED;
            }
        }
        if (++i == sb->n_slots)
            i = 0;
    }
    mr_sortbuf_result r = mr_sortbuf_append(sb, part, key, value, &off);
    if (r == MR_SORTBUF_ADDED)
        sb->slots[i] = tag | ((uint64_t)off + 1);
    return r;
}

void
mr_sortbuf_prefetch_slot(const mr_sortbuf *sb, uint64_t hash)
{
    __builtin_prefetch(&sb->slots[mr_sortbuf_home(sb, hash)]);
}

void
mr_sortbuf_prefetch_record(const mr_sortbuf *sb, uint64_t hash)
{
    /* Linear probing may have put the key a few slots past its home: look
     * at the first four (one or two cache lines), as an insert would. */
    uint64_t tag = hash & 0xffffffff00000000ull;
    size_t i = mr_sortbuf_home(sb, hash);
    for (int k = 0; k < 4; k++) {
        uint64_t s = sb->slots[i];
        if (s == 0)
            return;
        if ((s & 0xffffffff00000000ull) == tag) {
            /* Records are packed: a short one may straddle two cache lines. */
            const uint8_t *rec = sb->mem + (uint32_t)s - 1;
            __builtin_prefetch(rec);
            __builtin_prefetch(rec + 40);
            return;
        }
        if (++i == sb->n_slots)
            i = 0;
    }
}

/* ------------------------------------------------------------------ sorting */

/* The comparison sort is written once, as always-inline templates taking
 * `custom` (a constant at every use), and instantiated twice: for byte
 * order, exactly the code that has no comparator to call, and for a job's
 * comparator o (whose entries' prefixes are all zero, so every comparison
 * reaches the records). */
#define MR_SORTBUF_INLINE static inline __attribute__((always_inline))

MR_SORTBUF_INLINE int
mr_sortbuf_cmp_records(const uint8_t *mem, const mr_key_order *o, uint32_t a, uint32_t b,
                       int custom)
{
    const uint8_t *ra = mem + a, *rb = mem + b;
    uint32_t ka = mr_sortbuf_rec_u32(ra), kb = mr_sortbuf_rec_u32(rb);
    kslice x = kslice_make(ra + MR_SORTBUF_REC_HDR, ka), y = kslice_make(rb + MR_SORTBUF_REC_HDR, kb);
    int c = custom ? mr_order_keys(o, x, y) : kslice_cmp(x, y);
    if (c != 0)
        return c;
    return kslice_cmp(kslice_make(ra + MR_SORTBUF_REC_HDR + ka, mr_sortbuf_rec_u32(ra + 4)),
                      kslice_make(rb + MR_SORTBUF_REC_HDR + kb, mr_sortbuf_rec_u32(rb + 4)));
}

MR_SORTBUF_INLINE int
mr_sortbuf_cmp(const uint8_t *mem, const mr_key_order *o, const mr_sortbuf_ent *a,
               const mr_sortbuf_ent *b, int custom)
{
    if (a->part != b->part)
        return a->part < b->part ? -1 : 1;
    if (a->prefix != b->prefix)
        return a->prefix < b->prefix ? -1 : 1;
    return mr_sortbuf_cmp_records(mem, o, a->off, b->off, custom);
}

MR_SORTBUF_INLINE void
mr_sortbuf_insertion_t(const uint8_t *mem, const mr_key_order *o, mr_sortbuf_ent *v, size_t n,
                       int custom)
{
    for (size_t i = 1; i < n; i++) {
        mr_sortbuf_ent x = v[i];
        size_t j = i;
        while (j > 0 && mr_sortbuf_cmp(mem, o, &x, &v[j - 1], custom) < 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

MR_SORTBUF_INLINE void
mr_sortbuf_sift(const uint8_t *mem, const mr_key_order *o, mr_sortbuf_ent *v, size_t root,
                size_t n, int custom)
{
    for (;;) {
        size_t c = 2 * root + 1;
        if (c >= n)
            return;
        if (c + 1 < n && mr_sortbuf_cmp(mem, o, &v[c], &v[c + 1], custom) < 0)
            c++;
        if (mr_sortbuf_cmp(mem, o, &v[root], &v[c], custom) >= 0)
            return;
        mr_sortbuf_ent t = v[root];
        v[root] = v[c];
        v[c] = t;
        root = c;
    }
}

MR_SORTBUF_INLINE void
mr_sortbuf_heapsort_t(const uint8_t *mem, const mr_key_order *o, mr_sortbuf_ent *v, size_t n,
                      int custom)
{
    for (size_t i = n / 2; i-- > 0;)
        mr_sortbuf_sift(mem, o, v, i, n, custom);
    for (size_t i = n; i-- > 1;) {
        mr_sortbuf_ent t = v[0];
        v[0] = v[i];
        v[i] = t;
        mr_sortbuf_sift(mem, o, v, 0, i, custom);
    }
}

/* One quicksort step on v[0..n), n > 24: median-of-three pivot, then
 * Hoare's partition. Returns the size of the left part: [0, left) <= pivot
 * <= [left, n). */
MR_SORTBUF_INLINE size_t
mr_sortbuf_partition(const uint8_t *mem, const mr_key_order *o, mr_sortbuf_ent *v, size_t n,
                     int custom)
{
    size_t m = n / 2;
    if (mr_sortbuf_cmp(mem, o, &v[m], &v[0], custom) < 0) {
        mr_sortbuf_ent t = v[m]; v[m] = v[0]; v[0] = t;
    }
    if (mr_sortbuf_cmp(mem, o, &v[n - 1], &v[0], custom) < 0) {
        mr_sortbuf_ent t = v[n - 1]; v[n - 1] = v[0]; v[0] = t;
    }
    if (mr_sortbuf_cmp(mem, o, &v[n - 1], &v[m], custom) < 0) {
        mr_sortbuf_ent t = v[n - 1]; v[n - 1] = v[m]; v[m] = t;
    }
    mr_sortbuf_ent pivot = v[m];
    size_t i = 0, j = n - 1;
    for (;;) {
        while (mr_sortbuf_cmp(mem, o, &v[i], &pivot, custom) < 0)
            i++;
        while (mr_sortbuf_cmp(mem, o, &pivot, &v[j], custom) < 0)
            j--;
        if (i >= j)
            break;
        mr_sortbuf_ent t = v[i]; v[i] = v[j]; v[j] = t;
        i++;
        j--;
    }
    return j + 1;
}

/* Byte order: insertion sort, heapsort, and introsort (median-of-three
 * quicksort, heapsort past the depth limit, insertion sort for short
 * ranges). */
static void
mr_sortbuf_insertion(const uint8_t *mem, mr_sortbuf_ent *v, size_t n)
{
    mr_sortbuf_insertion_t(mem, NULL, v, n, 0);
}

static void
mr_sortbuf_introsort(const uint8_t *mem, mr_sortbuf_ent *v, size_t n, int depth)
{
    while (n > 24) {
        if (depth-- == 0) {
            mr_sortbuf_heapsort_t(mem, NULL, v, n, 0);
            return;
        }
        /* Recurse into the smaller side. */
        size_t left = mr_sortbuf_partition(mem, NULL, v, n, 0);
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

/* The same under a job's comparator o. */
static void
mr_sortbuf_introsort_custom(const uint8_t *mem, const mr_key_order *o, mr_sortbuf_ent *v, size_t n,
                            int depth)
{
    while (n > 24) {
        if (depth-- == 0) {
            mr_sortbuf_heapsort_t(mem, o, v, n, 1);
            return;
        }
        size_t left = mr_sortbuf_partition(mem, o, v, n, 1);
        if (left < n - left) {
            mr_sortbuf_introsort_custom(mem, o, v, left, depth);
            v += left;
            n -= left;
        } else {
            mr_sortbuf_introsort_custom(mem, o, v + left, n - left, depth);
            n = left;
        }
    }
    mr_sortbuf_insertion_t(mem, o, v, n, 1);
}

static int
mr_sortbuf_depth(size_t n)
{
    int depth = 0;
    for (size_t k = n; k > 1; k >>= 1)
        depth += 2;
    return depth;
}

/* In-place radix (American flag) sort on one prefix byte, then each bucket
 * on the next byte; short buckets, and buckets whose 8 prefix bytes are all
 * equal, finish with a comparison sort that looks at whole keys and values.
 * Byte order only. */
static void
mr_sortbuf_radix(const uint8_t *mem, mr_sortbuf_ent *v, size_t n, int byte)
{
    if (n <= 32) {
        mr_sortbuf_insertion(mem, v, n);
        return;
    }
    if (byte == 8) {
        mr_sortbuf_introsort(mem, v, n, mr_sortbuf_depth(n));
        return;
    }
    int shift = 56 - 8 * byte;
    size_t count[256] = {0}, next[256], end[256];
    for (size_t i = 0; i < n; i++)
        count[(v[i].prefix >> shift) & 0xff]++;
    size_t at = 0;
    for (int b = 0; b < 256; b++) {
        next[b] = at;
        at += count[b];
        end[b] = at;
    }
    for (int b = 0; b < 256; b++) {
        while (next[b] < end[b]) {
            mr_sortbuf_ent x = v[next[b]];
            int d = (int)((x.prefix >> shift) & 0xff);
            while (d != b) {
                mr_sortbuf_ent t = v[next[d]];
                v[next[d]++] = x;
                x = t;
                d = (int)((x.prefix >> shift) & 0xff);
            }
            v[next[b]++] = x;
        }
    }
    at = 0;
    for (int b = 0; b < 256; b++) {
        if (count[b] > 1)
            mr_sortbuf_radix(mem, v + at, count[b], byte + 1);
        at += count[b];
    }
}

/* Hashed mode: entries for the live records, built in the index memory. */
static void
mr_sortbuf_build_entries(mr_sortbuf *sb)
{
    mr_sortbuf_ent *v = (mr_sortbuf_ent *)sb->slots;
    size_t k = 0;
    for (size_t off = 0; off < sb->data_len;) {
        const uint8_t *rec = sb->mem + off;
        uint32_t klen = mr_sortbuf_rec_u32(rec), vlen = mr_sortbuf_rec_u32(rec + 4), part = mr_sortbuf_rec_u32(rec + 8);
        if (part != MR_SORTBUF_DEAD) {
            v[k].prefix = mr_sortbuf_prefix(rec + MR_SORTBUF_REC_HDR, klen);
            v[k].part = part;
            v[k].off = (uint32_t)off;
            k++;
        }
        off += MR_SORTBUF_REC_HDR + (size_t)klen + vlen;
    }
    sb->sorted = v;
}

/* Sort v[0..n) (one partition, or any partitions past the radix pass's
 * reach): on the prefixes by radix, by comparisons on whole keys, or by
 * comparisons alone under a job's comparator o (whose order the byte
 * prefixes do not follow). */
static void
mr_sortbuf_sort_range(const uint8_t *mem, const mr_key_order *o, mr_sortbuf_ent *v, size_t n,
                      int radix)
{
    if (o != NULL)
        mr_sortbuf_introsort_custom(mem, o, v, n, mr_sortbuf_depth(n));
    else if (radix)
        mr_sortbuf_radix(mem, v, n, 0);
    else
        mr_sortbuf_introsort(mem, v, n, mr_sortbuf_depth(n));
}

void
mr_sortbuf_sort(mr_sortbuf *sb)
{
    if (sb->hashed)
        mr_sortbuf_build_entries(sb);
    mr_sortbuf_ent *v = mr_sortbuf_ents(sb);
    size_t n = sb->n;
    const mr_key_order *o = NULL;
    if (sb->order.cmp != NULL) {
        /* Byte prefixes say nothing in the job's order: all equal, so every
         * comparison goes to the records. */
        o = &sb->order;
        for (size_t i = 0; i < n; i++)
            v[i].prefix = 0;
    }
    uint32_t max_part = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].part > max_part)
            max_part = v[i].part;
    if (max_part == 0 || max_part >= (1u << 20)) {
        mr_sortbuf_sort_range(sb->mem, o, v, n, max_part == 0);
        return;
    }
    /* Group by partition first (the same in-place permutation), then sort
     * each partition's entries on their prefixes. */
    size_t parts = (size_t)max_part + 1;
    size_t *count = kiln_calloc(parts, sizeof *count);
    size_t *next = kiln_malloc(parts * sizeof *next);
    size_t *end = kiln_malloc(parts * sizeof *end);
    for (size_t i = 0; i < n; i++)
        count[v[i].part]++;
    size_t at = 0;
    for (size_t b = 0; b < parts; b++) {
        next[b] = at;
        at += count[b];
        end[b] = at;
    }
    for (size_t b = 0; b < parts; b++) {
        while (next[b] < end[b]) {
            mr_sortbuf_ent x = v[next[b]];
            while (x.part != b) {
                mr_sortbuf_ent t = v[next[x.part]];
                v[next[x.part]++] = x;
                x = t;
            }
            v[next[b]++] = x;
        }
    }
    at = 0;
    for (size_t b = 0; b < parts; b++) {
        if (count[b] > 1)
            mr_sortbuf_sort_range(sb->mem, o, v + at, count[b], 1);
        at += count[b];
    }
    free(count);
    free(next);
    free(end);
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
    const uint8_t *rec = sb->mem + e->off;
    uint32_t klen = mr_sortbuf_rec_u32(rec);
    *part = e->part;
    *key = kslice_make(rec + MR_SORTBUF_REC_HDR, klen);
    *value = kslice_make(rec + MR_SORTBUF_REC_HDR + klen, mr_sortbuf_rec_u32(rec + 4));
}

void
mr_sortbuf_prefetch_entry(const mr_sortbuf *sb, size_t i)
{
    if (i < sb->n)
        __builtin_prefetch(sb->mem + mr_sortbuf_ents(sb)[i].off);
}

size_t
mr_sortbuf_used(const mr_sortbuf *sb)
{
    return sb->data_len + (sb->hashed ? 0 : sb->n * sizeof(mr_sortbuf_ent));
}

void
mr_sortbuf_reset(mr_sortbuf *sb)
{
    if (sb->hashed && (sb->n > 0 || sb->data_len > 0))
        memset(sb->slots, 0, sb->n_slots * sizeof(uint64_t));
    sb->sorted = NULL;
    sb->n = 0;
    sb->data_len = 0;
}
