/* buf.h -- growable byte buffers and borrowed byte slices.
 *
 * kbuf owns its bytes (buf_free releases them); kslice borrows bytes owned by
 * someone else and says nothing about their lifetime: each API that returns a
 * kslice states how long it stays valid.
 *
 * Allocation failure aborts the process (buf_* never return NULL): an engine
 * that cannot allocate a few KiB of buffer has no useful way to continue.
 */
#ifndef KILN_BUF_H
#define KILN_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct kslice {
    const uint8_t *p;
    size_t n;
} kslice;

typedef struct kbuf {
    uint8_t *data;
    size_t len;
    size_t cap;
} kbuf;

#define KBUF_INIT {NULL, 0, 0}

static inline kslice
kslice_make(const void *p, size_t n)
{
    kslice s = {(const uint8_t *)p, n};
    return s;
}

static inline kslice
kslice_str(const char *s)
{
    return kslice_make(s, strlen(s));
}

/* Unsigned lexicographic compare; a shorter prefix sorts first. */
int kslice_cmp(kslice a, kslice b);
int kslice_eq(kslice a, kslice b);

void buf_init(kbuf *b);
void buf_free(kbuf *b);                 /* b may be NULL */
void buf_grow(kbuf *b, size_t need);    /* capacity for need bytes: buf_reserve's slow path */
void buf_resize(kbuf *b, size_t len);    /* new bytes are zero */

/* Room for len + extra. Inline, with buf_append: every formatter's bytes
 * pass through them. */
static inline void
buf_reserve(kbuf *b, size_t extra)
{
    if (b->len + extra > b->cap)
        buf_grow(b, b->len + extra);
}

static inline void
buf_append(kbuf *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    buf_reserve(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void buf_append_u8(kbuf *b, uint8_t v);
void buf_append_be16(kbuf *b, uint16_t v);
void buf_append_be32(kbuf *b, uint32_t v);
void buf_append_be64(kbuf *b, uint64_t v);
void buf_append_vlong(kbuf *b, int64_t v);    /* Hadoop WritableUtils vlong */
void buf_append_varint(kbuf *b, uint64_t v);  /* protobuf varint / HBase LEB128 */

static inline void buf_reset(kbuf *b) { b->len = 0; }

static inline kslice
buf_slice(const kbuf *b)
{
    return kslice_make(b->data, b->len);
}

/* Heap copy of n bytes (n may be 0; returns a valid pointer). */
uint8_t *kiln_memdup(const void *p, size_t n);
void *kiln_malloc(size_t n);    /* aborts on failure */
void *kiln_calloc(size_t n, size_t size);
void *kiln_realloc(void *p, size_t n);
/* n bytes aligned to align (a power of two, a multiple of sizeof(void *));
 * released with free. */
void *kiln_aligned_alloc(size_t align, size_t n);

/* Allocations of more than KILN_ALLOC_WATCH bytes made by kiln_malloc,
 * kiln_calloc and kiln_realloc since the process started (atomic). Lets
 * tests prove that a size read from outside bytes was refused before it was
 * allocated. */
#define KILN_ALLOC_WATCH ((size_t)64 << 20)
unsigned long kiln_alloc_big_count(void);

#endif
