/* buf.c -- growable byte buffers. */
#include "storage/base/buf.h"
#include "storage/base/coding.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static void
kiln_oom(size_t n)
{
    fprintf(stderr, "kiln: out of memory allocating %zu bytes\n", n);
    abort();
}

static _Atomic unsigned long buf_big_allocs;

unsigned long
kiln_alloc_big_count(void)
{
    return buf_big_allocs;
}

void *
kiln_malloc(size_t n)
{
    if (n > KILN_ALLOC_WATCH)
        buf_big_allocs++;
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        kiln_oom(n);
    return p;
}

void *
kiln_aligned_alloc(size_t align, size_t n)
{
    if (n > KILN_ALLOC_WATCH)
        buf_big_allocs++;
    void *p = NULL;
    if (posix_memalign(&p, align, n ? n : 1) != 0)
        kiln_oom(n);
    return p;
}

void *
kiln_calloc(size_t n, size_t size)
{
    if (size != 0 && n > KILN_ALLOC_WATCH / size)
        buf_big_allocs++;
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL)
        kiln_oom(n * size);
    return p;
}

void *
kiln_realloc(void *p, size_t n)
{
    if (n > KILN_ALLOC_WATCH)
        buf_big_allocs++;
    void *q = realloc(p, n ? n : 1);
    if (q == NULL)
        kiln_oom(n);
    return q;
}

uint8_t *
kiln_memdup(const void *p, size_t n)
{
    uint8_t *q = kiln_malloc(n);
    if (n)
        memcpy(q, p, n);
    return q;
}

int
kslice_cmp(kslice a, kslice b)
{
    size_t n = a.n < b.n ? a.n : b.n;
    int c = n ? memcmp(a.p, b.p, n) : 0;
    if (c != 0)
        return c;
    return a.n < b.n ? -1 : a.n > b.n;
}

int
kslice_eq(kslice a, kslice b)
{
    return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

void
buf_init(kbuf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void
buf_free(kbuf *b)
{
    if (b == NULL)
        return;
    free(b->data);
    buf_init(b);
}

void
buf_grow(kbuf *b, size_t need)
{
    if (need <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    b->data = kiln_realloc(b->data, cap);
    b->cap = cap;
}

void
buf_resize(kbuf *b, size_t len)
{
    if (len > b->len) {
        buf_reserve(b, len - b->len);
        memset(b->data + b->len, 0, len - b->len);
    }
    b->len = len;
}

void
buf_append_u8(kbuf *b, uint8_t v)
{
    buf_reserve(b, 1);
    b->data[b->len++] = v;
}

void
buf_append_be16(kbuf *b, uint16_t v)
{
    buf_reserve(b, 2);
    coding_put_be16(b->data + b->len, v);
    b->len += 2;
}

void
buf_append_be32(kbuf *b, uint32_t v)
{
    buf_reserve(b, 4);
    coding_put_be32(b->data + b->len, v);
    b->len += 4;
}

void
buf_append_be64(kbuf *b, uint64_t v)
{
    buf_reserve(b, 8);
    coding_put_be64(b->data + b->len, v);
    b->len += 8;
}

void
buf_append_vlong(kbuf *b, int64_t v)
{
    buf_reserve(b, CODING_VLONG_MAX);
    b->len += coding_put_vlong(b->data + b->len, v);
}

void
buf_append_varint(kbuf *b, uint64_t v)
{
    buf_reserve(b, CODING_VARINT_MAX);
    b->len += coding_put_varint(b->data + b->len, v);
}
