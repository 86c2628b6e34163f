/* test_block_cache.c -- the sharded LRU block cache: hits and misses, LRU
 * order, the byte budget, pinning, duplicate inserts, erase_file, a zero
 * budget, and many threads hammering one cache while checking every block's
 * bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/base/block_cache.h"
#include "storage/base/slab.h"

static uint64_t rng_seed;

static uint64_t
rnd_next(uint64_t *st)
{
    uint64_t z = (*st += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* A block whose bytes are a function of (file, offset), so readers can tell
 * a block was not mixed up or freed under them. */
static void *
make_block(uint64_t file, uint64_t off, size_t size)
{
    uint8_t *p = malloc(size);
    assert_non_null(p);
    for (size_t i = 0; i < size; i++)
        p[i] = (uint8_t)(file * 31 + off * 7 + i);
    return p;
}

static int
block_ok(const block_cache_handle *h, uint64_t file, uint64_t off)
{
    const uint8_t *p = block_cache_data(h);
    size_t n = block_cache_size(h);
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(file * 31 + off * 7 + i))
            return 0;
    return 1;
}

static int
present(block_cache *c, uint64_t file, uint64_t off)
{
    block_cache_handle *h = block_cache_lookup(c, file, off);
    if (h == NULL)
        return 0;
    int ok = block_ok(h, file, off);
    block_cache_release(c, h);
    assert_true(ok);
    return 1;
}

/* 1 if (file, off) is cached with every byte equal to fill. */
static int
present_inline(block_cache *c, uint64_t file, uint64_t off, uint8_t fill)
{
    block_cache_handle *h = block_cache_lookup(c, file, off);
    if (h == NULL)
        return 0;
    const uint8_t *p = block_cache_data(h);
    int ok = 1;
    for (size_t i = 0; i < block_cache_size(h); i++)
        ok &= p[i] == fill;
    block_cache_release(c, h);
    return ok;
}

static void
insert_release(block_cache *c, uint64_t file, uint64_t off, size_t size)
{
    block_cache_handle *h = block_cache_insert(c, file, off, make_block(file, off, size), size);
    assert_non_null(h);
    assert_true(block_ok(h, file, off));
    block_cache_release(c, h);
}

static void
hit_and_miss(void **state)
{
    block_cache *c = block_cache_new(1 << 20);
    uint64_t f = block_cache_new_file_id(c);
    assert_null(block_cache_lookup(c, f, 0));
    insert_release(c, f, 0, 100);
    insert_release(c, f, 4096, 200);
    assert_true(present(c, f, 0));
    assert_true(present(c, f, 4096));
    assert_false(present(c, f, 8192));
    assert_false(present(c, f + 1000, 0));
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_int_equal(st.hits, 2);
    assert_int_equal(st.misses, 3);
    assert_int_equal(st.inserts, 2);
    assert_int_equal(st.entries, 2);
    assert_true(st.bytes_used >= 300);
    assert_int_equal(st.capacity, 1 << 20);
    block_cache_free(c);
}

/* A prefetch, shallow or deep, of a cached key or of one not cached, in an
 * empty table or a full one, changes nothing a lookup sees: no hit or miss
 * counted, no pin, no entry. */
static void
prefetch_changes_nothing(void **state)
{
    (void)state;
    block_cache *c = block_cache_new_shards(1 << 20, 0);
    uint64_t f = block_cache_new_file_id(c);
    for (int deep = 0; deep < 2; deep++)
        block_cache_prefetch(c, f, 0, deep);   /* the table is empty */
    for (uint64_t i = 0; i < 40; i++)
        insert_release(c, f, i * 4096, 100);
    block_cache_stats a, b;
    block_cache_get_stats(c, &a);
    for (uint64_t i = 0; i < 80; i++)
        for (int deep = 0; deep < 2; deep++)
            block_cache_prefetch(c, i % 2 ? f + 1 : f, (i / 2) * 4096, deep);
    block_cache_get_stats(c, &b);
    assert_int_equal(b.hits, a.hits);
    assert_int_equal(b.misses, a.misses);
    assert_int_equal(b.entries, 40);
    /* nothing pinned: dropping the file frees every block */
    assert_int_equal(block_cache_drop_file(c, f), a.bytes_used);
    assert_int_equal(block_cache_file_bytes(c, f), 0);
    block_cache_free(c);
}

static void
file_ids_unique(void **state)
{
    block_cache *c = block_cache_new(0);
    uint64_t a = block_cache_new_file_id(c);
    uint64_t b = block_cache_new_file_id(c);
    uint64_t d = block_cache_new_file_id(NULL);
    assert_true(a != b && b != d && a != d);
    block_cache_free(c);
}

/* One shard so the order is global: with room for three blocks, the oldest
 * untouched block goes first, and a block looked up since it was added (or
 * since it last came round) survives: LRU with a second chance. */
static void
lru_order(void **state)
{
    const size_t bs = 10000;
    block_cache *c = block_cache_new_shards(3 * bs + 3 * 512, 0);
    insert_release(c, 1, 0, bs);
    insert_release(c, 1, 1, bs);
    insert_release(c, 1, 2, bs);
    assert_true(present(c, 1, 0)); /* 0 is referenced; 1 is the oldest untouched */
    insert_release(c, 1, 3, bs);
    assert_false(present(c, 1, 1));
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_int_equal(st.evictions, 1);
    assert_true(present(c, 1, 2)); /* 2 referenced again */
    insert_release(c, 1, 4, bs);
    block_cache_get_stats(c, &st);
    assert_int_equal(st.evictions, 2);
    assert_int_equal(st.entries, 3);
    /* the referenced block and the newest survive; one of the untouched went */
    int p0 = present(c, 1, 0), p3 = present(c, 1, 3);
    assert_true(present(c, 1, 2));
    assert_true(present(c, 1, 4));
    assert_int_equal(p0 + p3, 1);
    /* a block referenced over and over outlives a stream of new ones */
    for (uint64_t i = 10; i < 40; i++) {
        assert_true(present(c, 1, 2));
        insert_release(c, 1, i, bs);
    }
    assert_true(present(c, 1, 2));
    assert_false(present(c, 1, 10));
    block_cache_free(c);
}

/* Random sizes: with nothing pinned, usage never exceeds the budget, and
 * blocks recently touched survive longer than old ones. */
static void
budget_respected(void **state)
{
    uint64_t rs = rng_seed;
    const size_t cap = 256 * 1024;
    block_cache *c = block_cache_new(cap);
    for (uint64_t i = 0; i < 5000; i++) {
        size_t size = 1 + rnd_next(&rs) % 8000;
        insert_release(c, 7, i, size);
        block_cache_stats st;
        block_cache_get_stats(c, &st);
        assert_true(st.bytes_used <= cap);
    }
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_true(st.evictions > 4000);
    assert_true(st.entries > 0);
    assert_true(present(c, 7, 4999) || present(c, 7, 4998));
    /* A block bigger than the whole budget is dropped as soon as it is released. */
    insert_release(c, 8, 0, cap + 1);
    assert_false(present(c, 8, 0));
    block_cache_free(c);
}

static void
pinning_prevents_eviction(void **state)
{
    block_cache *c = block_cache_new_shards(64 * 1024, 0);
    block_cache_handle *pinned =
        block_cache_insert(c, 2, 100, make_block(2, 100, 30000), 30000);
    for (uint64_t i = 0; i < 200; i++)
        insert_release(c, 2, 1000 + i, 5000);
    /* still cached and intact while pinned */
    assert_true(block_ok(pinned, 2, 100));
    block_cache_handle *again = block_cache_lookup(c, 2, 100);
    assert_ptr_equal(again, pinned);
    block_cache_release(c, again);
    block_cache_release(c, pinned);
    /* unpinned now: enough new blocks push it out */
    for (uint64_t i = 0; i < 200; i++)
        insert_release(c, 2, 5000 + i, 5000);
    assert_false(present(c, 2, 100));
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_true(st.bytes_used <= 64 * 1024);
    block_cache_free(c);
}

static void
duplicate_insert_keeps_first(void **state)
{
    block_cache *c = block_cache_new(1 << 20);
    block_cache_handle *a = block_cache_insert(c, 3, 0, make_block(3, 0, 64), 64);
    block_cache_handle *b = block_cache_insert(c, 3, 0, make_block(3, 0, 32), 32);
    assert_ptr_equal(a, b);
    assert_int_equal(block_cache_size(b), 64);
    block_cache_release(c, a);
    block_cache_release(c, b);
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_int_equal(st.entries, 1);
    assert_int_equal(st.inserts, 1);
    block_cache_free(c);
}

static void
erase_file_drops_blocks(void **state)
{
    block_cache *c = block_cache_new(1 << 22);
    for (uint64_t i = 0; i < 100; i++) {
        insert_release(c, 10, i * 4096, 100);
        insert_release(c, 11, i * 4096, 100);
    }
    block_cache_handle *pinned = block_cache_lookup(c, 10, 4096);
    assert_non_null(pinned);
    block_cache_erase_file(c, 10);
    for (uint64_t i = 0; i < 100; i++) {
        assert_false(present(c, 10, i * 4096));
        assert_true(present(c, 11, i * 4096));
    }
    /* the pinned block stays readable until released (ASan checks the free) */
    assert_true(block_ok(pinned, 10, 4096));
    block_cache_release(c, pinned);
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_int_equal(st.entries, 100);
    block_cache_erase_file(c, 11);
    block_cache_get_stats(c, &st);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.bytes_used, 0);
    block_cache_free(c);
}

/* One shard, one file of many more blocks than one lock hold unlinks
 * (block_cache_erase_file works in batches): every block goes, pinned ones
 * on both sides of a batch boundary stay readable until released, and the
 * other file's blocks in the same shard stay. */
static void
erase_file_spanning_batches(void **state)
{
    enum { BLOCKS = 1000 };
    block_cache *c = block_cache_new_shards(1 << 24, 0);
    for (uint64_t i = 0; i < BLOCKS; i++) {
        insert_release(c, 20, i * 512, 40);
        if (i % 2 == 0)
            insert_release(c, 21, i * 512, 40);
    }
    const uint64_t pin_at[] = {0, 63, 64, 65, 500, BLOCKS - 1};
    enum { PINS = sizeof pin_at / sizeof pin_at[0] };
    block_cache_handle *pins[PINS];
    for (size_t k = 0; k < PINS; k++)
        assert_non_null(pins[k] = block_cache_lookup(c, 20, pin_at[k] * 512));
    block_cache_erase_file(c, 20);
    assert_int_equal(block_cache_file_bytes(c, 20), 0);
    for (uint64_t i = 0; i < BLOCKS; i++) {
        assert_false(present(c, 20, i * 512));
        assert_int_equal(present(c, 21, i * 512), i % 2 == 0);
    }
    for (size_t k = 0; k < PINS; k++) {
        assert_true(block_ok(pins[k], 20, pin_at[k] * 512));
        block_cache_release(c, pins[k]);
    }
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_int_equal(st.entries, BLOCKS / 2);
    block_cache_erase_file(c, 21);
    block_cache_get_stats(c, &st);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.bytes_used, 0);
    block_cache_free(c);
}

/* Many files in one shard, blocks evicted, reinserted and erased in a
 * random order: the per-file chains (and the map from file to chain, which
 * grows and shrinks) stay consistent with the table. */
static void
erase_many_files(void **state)
{
    enum { FILES = 300, BLOCKS = 40 };
    block_cache *c = block_cache_new_shards(FILES * BLOCKS * 60, 0);
    static uint8_t erased[FILES];
    memset(erased, 0, sizeof erased);
    uint64_t seed = 12345;
    for (int round = 0; round < 4; round++) {
        for (uint64_t f = 1; f <= FILES; f++)
            for (uint64_t b = 0; b < BLOCKS; b++)
                if (!erased[f - 1])
                    insert_release(c, 1000 + f, b * 512, 40);
        for (int k = 0; k < FILES / 4; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t f = 1 + (seed >> 33) % FILES;
            block_cache_erase_file(c, 1000 + f);
            erased[f - 1] = 1;
        }
        size_t live = 0;
        for (uint64_t f = 1; f <= FILES; f++) {
            for (uint64_t b = 0; b < BLOCKS; b++) {
                int p = present(c, 1000 + f, b * 512);
                if (erased[f - 1])
                    assert_false(p);
                live += (size_t)p;
            }
        }
        block_cache_stats st;
        block_cache_get_stats(c, &st);
        assert_int_equal(st.entries, live);
    }
    for (uint64_t f = 1; f <= FILES; f++)
        block_cache_erase_file(c, 1000 + f);
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.bytes_used, 0);
    block_cache_free(c);
}

static void
zero_capacity_caches_nothing(void **state)
{
    block_cache *c = block_cache_new(0);
    block_cache_handle *h = block_cache_insert(c, 4, 0, make_block(4, 0, 100), 100);
    assert_true(block_ok(h, 4, 0));
    block_cache_release(c, h);
    assert_false(present(c, 4, 0));
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.bytes_used, 0);
    block_cache_free(c);
}

/* Blocks allocated with their entry (block_cache_block_alloc) behave like
 * the others: cached, deduplicated, evicted, erased, freed exactly once (the
 * sanitizer builds check the frees). */
static void
inline_blocks(void **state)
{
    block_cache *c = block_cache_new_shards(8 * 1024, 0);
    for (uint64_t i = 0; i < 50; i++) {
        uint8_t *p = block_cache_block_alloc(1000);
        memset(p, (int)i, 1000);
        block_cache_handle *h = block_cache_insert_block(c, 5, i, p, 1000);
        assert_ptr_equal(block_cache_data(h), p);
        /* a second copy of the same block is dropped in favour of the first */
        uint8_t *q = block_cache_block_alloc(1000);
        block_cache_handle *h2 = block_cache_insert_block(c, 5, i, q, 1000);
        assert_ptr_equal(h2, h);
        block_cache_release(c, h2);
        block_cache_release(c, h);
    }
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_true(st.bytes_used <= 8 * 1024);
    assert_true(st.evictions > 40);
    block_cache_handle *h = block_cache_lookup(c, 5, 49);
    assert_non_null(h);
    const uint8_t *d = block_cache_data(h);
    for (int k = 0; k < 1000; k++)
        assert_int_equal(d[k], 49);
    block_cache_erase_file(c, 5);
    assert_int_equal(d[999], 49); /* still pinned */
    block_cache_release(c, h);
    block_cache_get_stats(c, &st);
    assert_int_equal(st.entries, 0);
    block_cache_block_free(block_cache_block_alloc(10)); /* never inserted */
    block_cache_block_free(NULL);
    block_cache_free(c);
}

/* Reading ahead never evicts: an insert "if room" fills a shard up to its
 * budget and is refused beyond it (the block freed, every cached block kept),
 * while a plain insert into the same full shard evicts as usual. */
static void
insert_if_room_never_evicts(void **state)
{
    enum { CAP = 64 * 1024 };
    block_cache *c = block_cache_new_shards(CAP, 0);
    uint64_t inserted = 0, refused = 0;
    for (uint64_t i = 0; i < 200; i++) {
        uint8_t *p = block_cache_block_alloc(1000);
        memset(p, (int)i, 1000);
        block_cache_handle *h = block_cache_insert_block_if_room(c, 7, i, p, 1000);
        if (h == NULL) {
            refused++;
            continue;
        }
        assert_ptr_equal(block_cache_data(h), p);
        block_cache_release(c, h);
        inserted++;
    }
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    print_message("%llu blocks taken, %llu refused, %llu of %u bytes used\n",
                  (unsigned long long)inserted, (unsigned long long)refused,
                  (unsigned long long)st.bytes_used, CAP);
    assert_true(inserted > 20);
    assert_int_equal(inserted + refused, 200);
    assert_true(st.bytes_used <= CAP);
    assert_int_equal(st.evictions, 0);
    assert_int_equal(st.entries, inserted);
    for (uint64_t i = 0; i < inserted; i++)   /* the first ones, all kept */
        assert_true(present_inline(c, 7, i, (uint8_t)i));
    /* a block already there is found, full shard or not */
    uint8_t *q = block_cache_block_alloc(1000);
    block_cache_handle *h = block_cache_insert_block_if_room(c, 7, 0, q, 1000);
    assert_non_null(h);
    assert_int_equal(((const uint8_t *)block_cache_data(h))[0], 0);
    block_cache_release(c, h);
    /* a plain insert makes room */
    uint8_t *p = block_cache_block_alloc(1000);
    memset(p, 9, 1000);
    block_cache_release(c, block_cache_insert_block(c, 8, 0, p, 1000));
    block_cache_get_stats(c, &st);
    assert_true(st.evictions > 0);
    assert_true(present_inline(c, 8, 0, 9));
    block_cache_erase_file(c, 7);
    block_cache_erase_file(c, 8);
    block_cache_free(c);
}

/* drop_file frees a file's unpinned blocks, in batches across the shard's
 * lock, and keeps the pinned ones cached and findable (a live reader's index
 * and bloom), and every other file's blocks. */
static void
drop_file_keeps_pinned(void **state)
{
    enum { BLOCKS = 700 };
    block_cache *c = block_cache_new_shards(1 << 24, 0);
    for (uint64_t i = 0; i < BLOCKS; i++) {
        insert_release(c, 30, i * 512, 40);
        insert_release(c, 31, i * 512, 40);
    }
    const uint64_t pin_at[] = {0, 1, 63, 64, 65, 300, BLOCKS - 1};
    enum { PINS = sizeof pin_at / sizeof pin_at[0] };
    block_cache_handle *pins[PINS];
    for (size_t k = 0; k < PINS; k++)
        assert_non_null(pins[k] = block_cache_lookup(c, 30, pin_at[k] * 512));
    uint64_t before = block_cache_file_bytes(c, 30), other = block_cache_file_bytes(c, 31);
    uint64_t dropped = block_cache_drop_file(c, 30);
    uint64_t left = block_cache_file_bytes(c, 30);
    assert_int_equal(dropped + left, before);
    assert_int_equal(left, before / BLOCKS * PINS);
    assert_int_equal(block_cache_file_bytes(c, 31), other);
    for (uint64_t i = 0; i < BLOCKS; i++) {
        int pinned = 0;
        for (size_t k = 0; k < PINS; k++)
            pinned |= pin_at[k] == i;
        assert_int_equal(present(c, 30, i * 512), pinned);
        assert_true(present(c, 31, i * 512));
    }
    for (size_t k = 0; k < PINS; k++)
        block_cache_release(c, pins[k]);
    /* released, they are ordinary cached blocks again */
    assert_int_equal(block_cache_drop_file(c, 30), left);
    assert_int_equal(block_cache_file_bytes(c, 30), 0);
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_int_equal(st.entries, BLOCKS);
    block_cache_erase_file(c, 31);
    block_cache_get_stats(c, &st);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.bytes_used, 0);
    block_cache_free(c);
}

/* A file's blocks come from slabs and go back with the file: erasing it
 * unmaps what its blocks took (spares aside), and the budget counted each
 * block at its slab class's size, never less than asked. */
static void
erased_file_returns_slabs(void **state)
{
    block_cache *c = block_cache_new(64u << 20);
    size_t before = slab_mapped_bytes();
    for (uint64_t i = 0; i < 4000; i++) {
        uint8_t *p = block_cache_block_alloc(4100);
        memset(p, (int)i, 4100);
        block_cache_release(c, block_cache_insert_block(c, 9, i * 4100, p, 4100));
    }
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_int_equal(st.entries, 4000);
    assert_true(st.bytes_used >= 4000u * 4100u);
    size_t full = slab_mapped_bytes();
    block_cache_erase_file(c, 9);
    size_t after = slab_mapped_bytes();
    printf("  slabs mapped: %zu before, %zu with the file cached, %zu after erasing it\n", before,
           full, after);
    if (slab_enabled()) {
        assert_true(full >= before + 7 * SLAB_BYTES);   /* 16 MiB of blocks */
        assert_true(after <= SLAB_SPARES * SLAB_BYTES);
    } else {
        assert_int_equal(full, 0);
    }
    block_cache_free(c);
}

static void
reservations_bounded(void **state)
{
    block_cache *c = block_cache_new(4000);
    assert_true(block_cache_reserve(c, 600));
    assert_true(block_cache_reserve(c, 400));   /* 1000: a quarter */
    assert_false(block_cache_reserve(c, 1));
    block_cache_unreserve(c, 400);
    assert_false(block_cache_reserve(c, 401));
    assert_true(block_cache_reserve(c, 400));
    block_cache_unreserve(c, 1000);
    assert_false(block_cache_reserve(c, 1001));
    assert_true(block_cache_reserve(c, 1000));
    block_cache_free(c);
    c = block_cache_new(0);
    assert_false(block_cache_reserve(c, 1));
    assert_true(block_cache_reserve(c, 0));
    block_cache_free(c);
}

/* Lending shrinks the budget blocks may grow into: from the free room
 * first, then by evicting the least recently used blocks, never below what
 * the lender keeps; repaying restores it. One shard, blocks of 10000. */
static void
lend_and_repay(void **state)
{
    const size_t bs = 10000;
    const size_t cap = 10 * bs + 5000;
    block_cache *c = block_cache_new_shards(cap, 0);
    uint64_t f = block_cache_new_file_id(c);
    for (uint64_t i = 0; i < 4; i++)
        insert_release(c, f, i * bs, bs);
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    size_t used = st.bytes_used, charge = used / 4;
    assert_true(charge >= bs);
    /* the free room: nothing evicted */
    assert_int_equal(block_cache_lend(c, cap - used, 0), cap - used);
    block_cache_get_stats(c, &st);
    assert_int_equal(st.evictions, 0);
    assert_int_equal(st.capacity, cap);   /* the budget as configured */
    /* a block coming in now evicts the oldest */
    insert_release(c, f, 4 * bs, bs);
    block_cache_get_stats(c, &st);
    assert_int_equal(st.evictions, 1);
    assert_false(present(c, f, 0));
    assert_true(present(c, f, 4 * bs));
    /* more, keeping room for two blocks: the oldest two go */
    size_t keep = 2 * charge;
    assert_int_equal(block_cache_lend(c, cap, keep), used - keep);
    block_cache_get_stats(c, &st);
    assert_int_equal(st.evictions, 3);
    assert_false(present(c, f, 1 * bs));
    assert_false(present(c, f, 2 * bs));
    assert_true(present(c, f, 3 * bs));
    assert_true(present(c, f, 4 * bs));
    assert_int_equal(block_cache_lend(c, bs, keep), 0);
    block_cache_repay(c);
    for (uint64_t i = 5; i < 12; i++)
        insert_release(c, f, i * bs, bs);
    block_cache_get_stats(c, &st);
    assert_int_equal(st.evictions, 3);   /* the room is back: 9 blocks fit */
    assert_int_equal(st.entries, 9);
    block_cache_free(c);

    /* over 16 shards: the free room of an empty cache */
    c = block_cache_new(1 << 20);
    assert_int_equal(block_cache_lend(c, 300000, 0), 300000);
    block_cache_repay(c);
    assert_int_equal(block_cache_lend(c, 2 << 20, 1 << 18), (1 << 20) - (1 << 18));
    block_cache_repay(c);
    block_cache_free(c);
    (void)state;
}

/* ------------------------------------------------------------------ threads */

typedef struct worker {
    block_cache *c;
    uint64_t seed;
    long ops;
    long found;
} worker;

static void *
worker_run(void *arg)
{
    worker *w = arg;
    uint64_t rs = w->seed;
    block_cache_handle *held[4] = {0};
    for (long i = 0; i < w->ops; i++) {
        uint64_t r = rnd_next(&rs);
        uint64_t file = 1 + r % 3, off = (r >> 8) % 500;
        block_cache_handle *h = block_cache_lookup(w->c, file, off);
        if (h == NULL) {
            size_t size = 1 + (r >> 20) % 3000;
            h = block_cache_insert(w->c, file, off, make_block(file, off, size), size);
        } else {
            w->found++;
        }
        if (!block_ok(h, file, off))
            return (void *)1;
        /* keep a few pinned for a while so eviction races with pins */
        unsigned slot = (unsigned)(r >> 40) % 4;
        block_cache_release(w->c, held[slot]);
        held[slot] = h;
        if ((r >> 50) % 1000 == 0)
            block_cache_erase_file(w->c, file);
    }
    for (unsigned s = 0; s < 4; s++)
        block_cache_release(w->c, held[s]);
    return NULL;
}

static void
concurrent_threads(void **state)
{
    enum { NT = 4 };
    const size_t cap = 300 * 1024;
    block_cache *c = block_cache_new(cap);
    pthread_t th[NT];
    worker w[NT];
    for (int i = 0; i < NT; i++) {
        w[i] = (worker){c, rng_seed + 1000003 * (uint64_t)i, 200000, 0};
        assert_int_equal(pthread_create(&th[i], NULL, worker_run, &w[i]), 0);
    }
    long found = 0;
    for (int i = 0; i < NT; i++) {
        void *ret;
        pthread_join(th[i], &ret);
        assert_null(ret);
        found += w[i].found;
    }
    block_cache_stats st;
    block_cache_get_stats(c, &st);
    assert_true(found > 0);
    assert_int_equal(st.hits, (uint64_t)found);
    assert_true(st.bytes_used <= cap);
    block_cache_free(c);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_seed = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_block_cache: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hit_and_miss),
        cmocka_unit_test(prefetch_changes_nothing),
        cmocka_unit_test(file_ids_unique),
        cmocka_unit_test(lru_order),
        cmocka_unit_test(budget_respected),
        cmocka_unit_test(pinning_prevents_eviction),
        cmocka_unit_test(duplicate_insert_keeps_first),
        cmocka_unit_test(erase_file_drops_blocks),
        cmocka_unit_test(erase_file_spanning_batches),
        cmocka_unit_test(erase_many_files),
        cmocka_unit_test(zero_capacity_caches_nothing),
        cmocka_unit_test(inline_blocks),
        cmocka_unit_test(insert_if_room_never_evicts),
        cmocka_unit_test(drop_file_keeps_pinned),
        cmocka_unit_test(erased_file_returns_slabs),
        cmocka_unit_test(reservations_bounded),
        cmocka_unit_test(lend_and_repay),
        cmocka_unit_test(concurrent_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
