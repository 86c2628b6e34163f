/* test_slab.c -- the huge-page slab allocator behind the block cache: class
 * sizes and alignment, objects that never overlap under a random mix of
 * allocations and frees (every live object's bytes checked against a model),
 * empty slabs going back to the system, two threads at once, and the aligned
 * huge-page mappings other caches take (slab_map_huge) and the tables
 * built on them (slab_table_alloc). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/base/slab.h"
#include "tests/support/test_util.h"

/* Every size gets at least what it asked for, at most an eighth more (plus
 * the 16-byte rounding), 16-byte aligned. */
static void
class_sizes(void **state)
{
    (void)state;
    for (size_t n = 1; n <= SLAB_OBJECT_MAX; n = n < 4096 ? n + 7 : n + 4093) {
        size_t usable = 0;
        void *p = slab_alloc(n, &usable);
        assert_non_null(p);
        assert_true(usable >= n);
        assert_true(usable <= n + n / 8 + 16 || usable <= 64);
        assert_int_equal((uintptr_t)p % 16, 0);
        memset(p, 0xAB, n);
        slab_free(p);
    }
    size_t usable;
    void *p = slab_alloc(SLAB_OBJECT_MAX, &usable);
    assert_int_equal(usable, SLAB_OBJECT_MAX);
    slab_free(p);
    slab_free(NULL);
}

typedef struct live {
    uint8_t *p;
    size_t n;
    uint8_t tag;
} live;

static void
fill(const live *l)
{
    for (size_t i = 0; i < l->n; i++)
        l->p[i] = (uint8_t)(l->tag + i * 13);
}

static int
intact(const live *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->p[i] != (uint8_t)(l->tag + i * 13))
            return 0;
    return 1;
}

/* A random mix over a few sizes (some sharing a class): every live object
 * keeps its own bytes, so no two ever overlap and no free hands out a live one.
 * Each object is checked whole when it is freed; with check_all, every live
 * one is also checked each 997 rounds (more often only multiplies the bytes
 * compared, which under TSan costs a minute). */
static void
random_mix(uint64_t seed, int rounds, int check_all)
{
    enum { MAXLIVE = 600 };
    static const size_t sizes[] = {24, 100, 4100, 4200, 5000, 70000, 200000};
    live *l = calloc(MAXLIVE, sizeof *l);
    size_t nl = 0;
    uint64_t st = seed;
    for (int r = 0; r < rounds; r++) {
        uint64_t x = tu_splitmix64(&st);
        if (nl < MAXLIVE && (nl == 0 || x % 3 != 0)) {
            size_t usable;
            live o = {.n = sizes[(x >> 8) % (sizeof sizes / sizeof sizes[0])], .tag = (uint8_t)(x >> 16)};
            o.p = slab_alloc(o.n, &usable);
            fill(&o);
            l[nl++] = o;
        } else {
            size_t i = (size_t)((x >> 8) % nl);
            assert_true(intact(&l[i]));
            slab_free(l[i].p);
            l[i] = l[--nl];
        }
        if (check_all && r % 997 == 0)
            for (size_t i = 0; i < nl; i++)
                assert_true(intact(&l[i]));
    }
    for (size_t i = 0; i < nl; i++) {
        assert_true(intact(&l[i]));
        slab_free(l[i].p);
    }
    free(l);
}

static void
no_overlap(void **state)
{
    (void)state;
    random_mix(42, 20000, 1);
}

/* Objects enough for several slabs of one class, all freed: at most
 * SLAB_SPARES empty slabs stay mapped (and none was left mapped by the tests
 * before, whose objects are all freed), the rest is unmapped. */
static void
empty_slabs_unmapped(void **state)
{
    (void)state;
    size_t before = slab_mapped_bytes();
    enum { N = 2000 };
    void **p = calloc(N, sizeof *p);
    size_t usable = 0;
    for (int i = 0; i < N; i++) {
        p[i] = slab_alloc(5000, &usable);
        memset(p[i], i, 5000);
    }
    size_t peak = slab_mapped_bytes();
    if (slab_enabled()) {
        /* 2000 objects of 5 KiB need 5 slabs of 2 MiB (spares included) */
        assert_true(peak >= 5 * SLAB_BYTES);
    } else {
        printf("  ASan build: objects are plain mallocs, no slab is mapped\n");
        assert_int_equal(peak, 0);
    }
    /* free in an order that empties slabs one at a time at the end */
    for (int i = 0; i < N; i += 2)
        slab_free(p[i]);
    for (int i = 1; i < N; i += 2)
        slab_free(p[i]);
    size_t after = slab_mapped_bytes();
    printf("  mapped: %zu before, %zu at the peak, %zu after (usable %zu)\n", before, peak, after,
           usable);
    assert_true(before <= SLAB_SPARES * SLAB_BYTES);
    assert_true(after <= SLAB_SPARES * SLAB_BYTES);
    free(p);
}

static void *
mix_thread(void *arg)
{
    random_mix((uint64_t)(uintptr_t)arg, 20000, 0);
    return NULL;
}

static void
two_threads(void **state)
{
    (void)state;
    pthread_t t[2];
    for (uintptr_t i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, mix_thread, (void *)(i + 7)), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
}

/* Mappings of one to five slabs: aligned to a slab, zeroed, every byte
 * writable, two at once apart, not counted as slabs, and unmappable whole. */
static void
huge_mappings(void **state)
{
    (void)state;
    size_t before = slab_mapped_bytes();
    for (size_t k = 1; k <= 5; k++) {
        size_t n = k * SLAB_BYTES;
        uint8_t *a = slab_map_huge(n), *b = slab_map_huge(n);
        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal((uintptr_t)a % SLAB_BYTES, 0);
        assert_int_equal((uintptr_t)b % SLAB_BYTES, 0);
        assert_true(a + n <= b || b + n <= a);
        for (size_t i = 0; i < n; i += 4096)
            assert_int_equal(a[i] | a[i + 4095] | b[i], 0);
        memset(a, 0xA5, n);
        memset(b, 0x5A, n);
        assert_int_equal(a[n - 1], 0xA5);
        assert_int_equal(b[0], 0x5A);
        assert_int_equal(munmap(a, n), 0);
        assert_int_equal(munmap(b, n), 0);
    }
    assert_int_equal(slab_mapped_bytes(), before);
}

/* 1 if the page holding p is mapped (mincore answers ENOMEM for a hole). */
static int
page_mapped(const void *p)
{
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char v;
    void *page = (void *)((uintptr_t)p & ~(uintptr_t)(pg - 1));
    return mincore(page, (size_t)pg, &v) == 0;
}

/* Tables: aligned to a line, zeroed and writable at every size; from a
 * slab up, aligned to a slab, and freed as whole slabs (the last slab's
 * tail past n is unmapped too). */
static void
tables(void **state)
{
    (void)state;
    const size_t sizes[] = {0, 1, 100, 4096, SLAB_BYTES - 1, SLAB_BYTES, SLAB_BYTES + 1,
                            3 * SLAB_BYTES + 123};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        uint8_t *t = slab_table_alloc(n);
        assert_non_null(t);
        assert_int_equal((uintptr_t)t % 64, 0);
        for (size_t i = 0; i < n; i++)
            if (t[i] != 0)
                fail_msg("table of %zu bytes: byte %zu is %u, not zero", n, i, t[i]);
        memset(t, 0xC3, n);
        if (n >= SLAB_BYTES) {
            size_t span = (n + SLAB_BYTES - 1) / SLAB_BYTES * SLAB_BYTES;
            assert_int_equal((uintptr_t)t % SLAB_BYTES, 0);
            assert_true(page_mapped(t + span - 1));
            slab_table_free(t, n);
            assert_false(page_mapped(t));
            assert_false(page_mapped(t + span - 1));
        } else {
            slab_table_free(t, n);
        }
    }
    slab_table_free(NULL, SLAB_BYTES);   /* nothing to give back */
}

/* HugePages_Free of /proc/meminfo, or -1. */
static long
pool_free(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long v = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "HugePages_Free: %ld", &v) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return v;
}

/* The child of reserved_pool, in a process of its own (the choice of pool
 * is made once per process): exit 0 when the mappings behave as `want`
 * says ("pool": the first from the pool, the rest not once it is short;
 * "off": none from the pool), else 1 with the reason. */
static int
pool_child(const char *want)
{
    long free0 = pool_free();
    uint8_t *a = slab_map_huge(2 * SLAB_BYTES);
    if (a == NULL || (uintptr_t)a % SLAB_BYTES != 0 || a[0] != 0 || a[2 * SLAB_BYTES - 1] != 0) {
        fprintf(stderr, "pool child: a mapping of two slabs failed or is not aligned and zeroed\n");
        return 1;
    }
    memset(a, 0x3C, 2 * SLAB_BYTES);
    size_t from_pool = slab_hugetlb_bytes();
    long free1 = pool_free();
    if (strcmp(want, "off") == 0) {
        if (from_pool != 0 || free1 != free0) {
            fprintf(stderr, "pool child: KILN_HUGETLB=0, but %zu bytes came from the pool "
                    "(free %ld -> %ld)\n", from_pool, free0, free1);
            return 1;
        }
        return 0;
    }
    if (from_pool != 2 * SLAB_BYTES || free1 != free0 - 2) {
        fprintf(stderr, "pool child: %zu bytes from the pool (free %ld -> %ld), expected two "
                "2 MiB pages\n", from_pool, free0, free1);
        return 1;
    }
    /* More than the pool has left (whatever else the system reserved):
     * transparent pages instead, and the pool is not asked again. */
    size_t nb = free1 > 15 ? (size_t)free1 + 1 : 16;
    uint8_t *b = slab_map_huge(nb * SLAB_BYTES);
    uint8_t *c = slab_map_huge(SLAB_BYTES);
    if (b == NULL || c == NULL || (uintptr_t)b % SLAB_BYTES != 0 || (uintptr_t)c % SLAB_BYTES != 0 ||
        slab_hugetlb_bytes() != 2 * SLAB_BYTES) {
        fprintf(stderr, "pool child: after the pool ran short: %p %p, %zu bytes from the pool\n",
                (void *)b, (void *)c, slab_hugetlb_bytes());
        return 1;
    }
    memset(b, 1, 16 * SLAB_BYTES);
    if (a[0] != 0x3C || munmap(a, 2 * SLAB_BYTES) != 0 || pool_free() != free0) {
        fprintf(stderr, "pool child: the pool's pages were not given back whole\n");
        return 1;
    }
    return 0;
}

/* Write n to /proc/sys/vm/nr_hugepages; 0 on success. */
static int
set_hugepages(long n)
{
    FILE *f = fopen("/proc/sys/vm/nr_hugepages", "w");
    if (f == NULL)
        return -1;
    fprintf(f, "%ld\n", n);
    return fclose(f) == 0 ? 0 : -1;
}

/* With huge pages reserved (vm.nr_hugepages, which this test raises by 6
 * and puts back; it needs root), the mappings come from the pool until it
 * runs short, then from ordinary pages; KILN_HUGETLB=0 keeps them out of it. */
static void
reserved_pool(void **state)
{
    (void)state;
    const char *knob = "/proc/sys/vm/nr_hugepages";
    FILE *f = fopen(knob, "r");
    long old = -1;
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%ld", &old), 1);
    fclose(f);
    if (set_hugepages(old + 6) != 0)
        fail_msg("%s: cannot reserve huge pages for this test (it needs root)", knob);
    long pool = pool_free();
    char cmd[512];
    snprintf(cmd, sizeof cmd, "/proc/%d/exe --pool-child pool", (int)getpid());
    int rc_pool = pool >= 6 ? system(cmd) : -1;
    snprintf(cmd, sizeof cmd, "KILN_HUGETLB=0 /proc/%d/exe --pool-child off", (int)getpid());
    int rc_off = pool >= 6 ? system(cmd) : -1;
    assert_int_equal(set_hugepages(old), 0);
    if (pool < 6)
        fail_msg("the system reserved %ld free huge pages of the 6 asked for", pool);
    assert_int_equal(rc_pool, 0);
    assert_int_equal(rc_off, 0);
}

int
main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--pool-child") == 0)
        return pool_child(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(class_sizes),
        cmocka_unit_test(no_overlap),
        cmocka_unit_test(empty_slabs_unmapped),
        cmocka_unit_test(two_threads),
        cmocka_unit_test(huge_mappings),
        cmocka_unit_test(tables),
        cmocka_unit_test(reserved_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
