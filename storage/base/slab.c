/* slab.c -- size-classed objects in 2 MiB huge-page slabs (see slab.h).
 *
 * A slab starts with its header; objects follow at a 64-byte boundary. A
 * new slab hands out objects from a bump offset (its untouched tail costs
 * no memory until used); freed objects go on the slab's own free list. Each
 * class keeps the slabs with room on a doubly linked list; an object's slab
 * is its address rounded down to the slab size.
 */
#include "storage/base/slab.h"

#include "storage/base/buf.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ASan and MSan judge each malloc'd object's bounds: there every object is
 * a malloc of its own. ThreadSanitizer keeps the slabs: their mutexes order
 * an object's free and its next allocation, which is what TSan checks. */
#if defined(__SANITIZE_ADDRESS__)
#define SLAB_PLAIN_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define SLAB_PLAIN_MALLOC 1
#endif
#endif

#ifdef SLAB_PLAIN_MALLOC
static const int slab_plain = 1;
#else
static const int slab_plain = 0;
#endif

#define SLAB_HEADER 64
#define SLAB_MIN_OBJECT 64
#define SLAB_STEPS 8            /* classes per doubling */

typedef struct slab_class slab_class;

typedef struct slab_hdr {
    slab_class *cls;
    struct slab_hdr *prev, *next;   /* on the class's list of slabs with room */
    void *free;                     /* freed objects, linked through their first word */
    uint32_t used;                  /* objects handed out */
    uint32_t bump;                  /* objects never handed out start here (index) */
    int listed;
} slab_hdr;

_Static_assert(sizeof(slab_hdr) <= SLAB_HEADER, "slab header fits its reserved bytes");

struct slab_class {
    pthread_mutex_t mu;
    size_t size;                    /* object size, a multiple of 16 */
    uint32_t cap;                   /* objects per slab */
    slab_hdr *room;                 /* slabs with a free object */
    size_t nroom;
};

/* 64 B .. 256 KiB: 12 doublings of 8 steps, plus the last size. */
#define SLAB_NCLASSES (12 * SLAB_STEPS + 1)

static slab_class slab_classes[SLAB_NCLASSES];
static pthread_once_t slab_once = PTHREAD_ONCE_INIT;
static atomic_size_t slab_mapped;

/* Empty slabs kept for any class's next need, so that a class whose last
 * object comes and goes does not map and unmap a slab each time. */
static pthread_mutex_t slab_spare_mu = PTHREAD_MUTEX_INITIALIZER;
static slab_hdr *slab_spare[SLAB_SPARES];
static size_t slab_nspare;

static void
slab_init(void)
{
    size_t k = 0;
    for (size_t base = SLAB_MIN_OBJECT; base < SLAB_OBJECT_MAX; base *= 2)
        for (size_t step = 0; step < SLAB_STEPS; step++) {
            size_t size = base + base / SLAB_STEPS * step;
            slab_classes[k++].size = (size + 15) & ~(size_t)15;
        }
    slab_classes[k++].size = SLAB_OBJECT_MAX;
    for (size_t i = 0; i < k; i++) {
        pthread_mutex_init(&slab_classes[i].mu, NULL);
        slab_classes[i].cap = (uint32_t)((SLAB_BYTES - SLAB_HEADER) / slab_classes[i].size);
    }
}

/* The smallest class that holds n bytes (binary search over the sizes). */
static slab_class *
slab_class_for(size_t n)
{
    size_t lo = 0, hi = SLAB_NCLASSES - 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (slab_classes[mid].size >= n)
            hi = mid;
        else
            lo = mid + 1;
    }
    return &slab_classes[lo];
}

static void
room_push(slab_class *c, slab_hdr *s)
{
    s->prev = NULL;
    s->next = c->room;
    if (c->room)
        c->room->prev = s;
    c->room = s;
    s->listed = 1;
    c->nroom++;
}

static void
room_remove(slab_class *c, slab_hdr *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        c->room = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
    s->listed = 0;
    c->nroom--;
}

static void
slab_reset(slab_hdr *s, slab_class *c)
{
    s->cls = c;
    s->prev = s->next = NULL;
    s->free = NULL;
    s->used = 0;
    s->bump = 0;
    s->listed = 0;
}

/* Huge pages from the system's reserved pool (vm.nr_hugepages), tried
 * first: on a machine whose kernel samples pages' accessed bits to find
 * cold memory (DAMON), each sample of a transparent huge page stalls the
 * next read of it, and reserved pages are not sampled. -1: not yet decided
 * (KILN_HUGETLB=0 turns them off), 0: try, 1: off, or the pool ran dry. */
static atomic_int slab_hugetlb_state = -1;
static _Atomic size_t slab_hugetlb_mapped;

static void *
slab_map_hugetlb(size_t n)
{
#ifdef MAP_HUGETLB
    int st = atomic_load_explicit(&slab_hugetlb_state, memory_order_relaxed);
    if (st < 0) {
        const char *e = getenv("KILN_HUGETLB");
        st = e != NULL && strcmp(e, "0") == 0;
        atomic_store_explicit(&slab_hugetlb_state, st, memory_order_relaxed);
    }
    if (st != 0)
        return NULL;
    /* A private mapping reserves its pages now: a pool too small fails here,
     * not at a later touch. Only the 2 MiB pool: pages of another size would
     * not split into slabs. */
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB;
#ifdef MAP_HUGE_SHIFT
    flags |= 21 << MAP_HUGE_SHIFT;   /* log2 of 2 MiB (MAP_HUGE_2MB) */
#endif
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (p == MAP_FAILED || ((uintptr_t)p & (SLAB_BYTES - 1)) != 0) {
        if (p != MAP_FAILED)
            munmap(p, n);
        atomic_store_explicit(&slab_hugetlb_state, 1, memory_order_relaxed);
        return NULL;
    }
    atomic_fetch_add_explicit(&slab_hugetlb_mapped, n, memory_order_relaxed);
    return p;
#else
    (void)n;
    return NULL;
#endif
}

size_t
slab_hugetlb_bytes(void)
{
    return atomic_load_explicit(&slab_hugetlb_mapped, memory_order_relaxed);
}

void *
slab_map_huge(size_t n)
{
    void *h = slab_map_hugetlb(n);
    if (h != NULL)
        return h;
    /* map one slab more than asked, keep the aligned part */
    size_t span = n + SLAB_BYTES;
    uint8_t *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    uintptr_t start = ((uintptr_t)p + SLAB_BYTES - 1) & ~(uintptr_t)(SLAB_BYTES - 1);
    size_t head = start - (uintptr_t)p, tail = span - head - n;
    if (head)
        munmap(p, head);
    if (tail)
        munmap((uint8_t *)start + n, tail);
#ifdef MADV_HUGEPAGE
    madvise((void *)start, n, MADV_HUGEPAGE);   /* a hint: no huge pages is fine */
#endif
    return (void *)start;
}

static size_t
slab_table_span(size_t n)
{
    return (n + SLAB_BYTES - 1) & ~(SLAB_BYTES - 1);
}

void *
slab_table_alloc(size_t n)
{
    if (n < SLAB_BYTES) {
        void *t = kiln_aligned_alloc(64, n ? n : 1);
        memset(t, 0, n);
        return t;
    }
    void *p = slab_map_huge(slab_table_span(n));
    if (p == NULL) {
        fprintf(stderr, "kiln: out of memory mapping a %zu-byte table\n", n);
        abort();
    }
    return p;
}

void
slab_table_free(void *p, size_t n)
{
    if (p == NULL)
        return;
    if (n < SLAB_BYTES)
        free(p);
    else
        munmap(p, slab_table_span(n));
}

/* A new slab for class c: a spare, or a fresh mapping of SLAB_BYTES. */
static slab_hdr *
slab_map(slab_class *c)
{
    slab_hdr *spare = NULL;
    pthread_mutex_lock(&slab_spare_mu);
    if (slab_nspare > 0)
        spare = slab_spare[--slab_nspare];
    pthread_mutex_unlock(&slab_spare_mu);
    if (spare != NULL) {
        slab_reset(spare, c);
        return spare;
    }
    void *start = slab_map_huge(SLAB_BYTES);
    if (start == NULL) {
        fprintf(stderr, "kiln: out of memory mapping a %zu-byte slab\n", SLAB_BYTES);
        abort();
    }
    atomic_fetch_add(&slab_mapped, SLAB_BYTES);
    slab_hdr *s = (slab_hdr *)start;
    slab_reset(s, c);
    return s;
}

/* An empty slab: kept as a spare while there is room, else unmapped. */
static void
slab_retire(slab_hdr *s)
{
    pthread_mutex_lock(&slab_spare_mu);
    int kept = slab_nspare < SLAB_SPARES;
    if (kept)
        slab_spare[slab_nspare++] = s;
    pthread_mutex_unlock(&slab_spare_mu);
    if (!kept) {
        munmap(s, SLAB_BYTES);
        atomic_fetch_sub(&slab_mapped, SLAB_BYTES);
    }
}

void *
slab_alloc(size_t n, size_t *usable)
{
    if (slab_plain) {
        *usable = n;
        return kiln_malloc(n ? n : 1);
    }
    pthread_once(&slab_once, slab_init);
    if (n > SLAB_OBJECT_MAX) {
        fprintf(stderr, "kiln: slab_alloc of %zu bytes (at most %zu)\n", n, SLAB_OBJECT_MAX);
        abort();
    }
    slab_class *c = slab_class_for(n);
    *usable = c->size;
    pthread_mutex_lock(&c->mu);
    slab_hdr *s = c->room;
    if (s == NULL) {
        s = slab_map(c);
        room_push(c, s);
    }
    void *p;
    if (s->free != NULL) {
        p = s->free;
        s->free = *(void **)p;
    } else {
        p = (uint8_t *)s + SLAB_HEADER + (size_t)s->bump * c->size;
        s->bump++;
    }
    if (++s->used == c->cap)
        room_remove(c, s);
    pthread_mutex_unlock(&c->mu);
    return p;
}

void
slab_free(void *p)
{
    if (p == NULL)
        return;
    if (slab_plain) {
        free(p);
        return;
    }
    slab_hdr *s = (slab_hdr *)((uintptr_t)p & ~(uintptr_t)(SLAB_BYTES - 1));
    slab_class *c = s->cls;
    slab_hdr *gone = NULL;
    pthread_mutex_lock(&c->mu);
    *(void **)p = s->free;
    s->free = p;
    if (!s->listed)
        room_push(c, s);
    if (--s->used == 0) {
        room_remove(c, s);
        gone = s;
    }
    pthread_mutex_unlock(&c->mu);
    if (gone)
        slab_retire(gone);
}

size_t
slab_mapped_bytes(void)
{
    return atomic_load(&slab_mapped);
}

int
slab_enabled(void)
{
    return !slab_plain;
}
