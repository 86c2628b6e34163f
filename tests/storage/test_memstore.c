/* test_memstore.c -- the memstore's concurrency and its byte budget (its
 * order and every iterator move are in test_iter.c's conformance suite).
 *
 * One writer adds cells (every type, each key twice at different sequence
 * numbers) while reader threads walk the memstore forward and backward and
 * seek, without locks: every walk must be in order and hold every cell added
 * before it began, a seek must find such a cell, and the memstore must
 * outlive the writer's reference while readers hold theirs. The budget: the
 * bytes grow with what is added, in whole chunks, and memstore_full turns on
 * once they reach it. Random data from a printed seed (KILN_TEST_SEED).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/hfile/cell.h"
#include "storage/hfile/iter.h"
#include "storage/store/memstore.h"
#include "tests/support/test_util.h"

static uint64_t rng_seed;

/* ------------------------------------------------------------------ the cells */

#define NCELLS 20000u
#define NKEYS (NCELLS / 2)

static const uint8_t TYPES[] = {CELL_TYPE_PUT, CELL_TYPE_PUT, CELL_TYPE_DELETE,
                                CELL_TYPE_DELETE_COLUMN, CELL_TYPE_DELETE_FAMILY,
                                CELL_TYPE_DELETE_FAMILY_VERSION};

/* Cell i's bytes: its key is key number keys[i] (each key number used by
 * two cells), its value i as 4 bytes, its sequence i + 1. */
typedef struct gen_cell {
    uint8_t row[8];
    uint8_t qual[2];
    uint8_t value[4];
    kiln_cell c;
} gen_cell;

static uint32_t keys[NCELLS];
static gen_cell cells[NCELLS];

static void
gen_all(uint64_t *st)
{
    for (uint32_t i = 0; i < NCELLS; i++)
        keys[i] = i % NKEYS;
    for (uint32_t i = NCELLS - 1; i > 0; i--) {   /* shuffled: adds land anywhere */
        uint32_t j = (uint32_t)(tu_splitmix64(st) % (i + 1));
        uint32_t t = keys[i];
        keys[i] = keys[j];
        keys[j] = t;
    }
    static const uint8_t fam[1] = {'f'};
    for (uint32_t i = 0; i < NCELLS; i++) {
        gen_cell *g = &cells[i];
        uint32_t k = keys[i];
        int n = snprintf((char *)g->row, sizeof g->row, "r%05u", k / 4);
        g->qual[0] = 'q';
        g->qual[1] = (uint8_t)(k % 4);
        g->value[0] = (uint8_t)(i >> 24);
        g->value[1] = (uint8_t)(i >> 16);
        g->value[2] = (uint8_t)(i >> 8);
        g->value[3] = (uint8_t)i;
        kiln_cell *c = &g->c;
        memset(c, 0, sizeof *c);
        c->row = g->row;
        c->row_len = (uint32_t)n;
        c->family = fam;
        c->family_len = 1;
        c->type = TYPES[k % sizeof TYPES];
        c->qualifier = g->qual;
        c->qualifier_len = c->type == CELL_TYPE_DELETE_FAMILY ||
                           c->type == CELL_TYPE_DELETE_FAMILY_VERSION ? 0 : 2;
        c->ts = 1700000000000LL + k % 3;
        c->value = g->value;
        c->value_len = 4;
    }
}

static uint32_t
cell_index(const kiln_cell *c)
{
    return (uint32_t)c->value[0] << 24 | (uint32_t)c->value[1] << 16 |
           (uint32_t)c->value[2] << 8 | c->value[3];
}

/* ------------------------------------------------------------------ readers */

typedef struct reader {
    memstore *ms;                  /* the reader's own reference */
    atomic_uint *added;            /* cells the writer has added */
    atomic_int *done;              /* the writer has finished */
    atomic_int *started;           /* readers that have walked once */
    atomic_uint walk_from;         /* cells added when its latest walk began */
    atomic_int exited;
    uint64_t rng;
    uint32_t *seen;                /* walk number that saw cell i */
    long walks, backward, seeks;
    long during;                   /* walks begun with 0 < cells < NCELLS */
    size_t longest;
    char failure[256];             /* the first thing that went wrong */
} reader;

/* Order of a walk: a before b. */
static int
in_order(const kiln_cell *a, const kiln_cell *b)
{
    int c = cell_compare(a, b);
    return c < 0 || (c == 0 && a->mvcc > b->mvcc);
}

/* One walk; 0 on success, else the failure is recorded. */
static int
reader_walk(reader *r, int forward)
{
    uint32_t before = atomic_load_explicit(r->added, memory_order_acquire);
    atomic_store(&r->walk_from, before);
    uint32_t walk = (uint32_t)++r->walks;
    r->during += before > 0 && before < NCELLS;
    kiln_iter *it = memstore_iter(r->ms);
    const kiln_cell *last = NULL;
    size_t n = 0;
    if (forward)
        kiln_iter_seek_first(it);
    else
        kiln_iter_seek_last(it);
    for (; kiln_iter_valid(it); forward ? kiln_iter_next(it) : kiln_iter_prev(it)) {
        const kiln_cell *c = kiln_iter_key(it);
        uint32_t i = cell_index(c);
        if (i >= NCELLS || c->mvcc != (uint64_t)i + 1 || cell_compare(c, &cells[i].c) != 0) {
            snprintf(r->failure, sizeof r->failure, "walk %u: a cell not as added (index %u)",
                     walk, i);
            break;
        }
        if (last != NULL && !(forward ? in_order(last, c) : in_order(c, last))) {
            snprintf(r->failure, sizeof r->failure, "walk %u (%s): cell %u out of order", walk,
                     forward ? "forward" : "backward", i);
            break;
        }
        if (r->seen[i] == walk) {
            snprintf(r->failure, sizeof r->failure, "walk %u: cell %u twice", walk, i);
            break;
        }
        r->seen[i] = walk;
        last = c;
        n++;
    }
    if (kiln_iter_status(it, NULL) != KILN_OK)
        snprintf(r->failure, sizeof r->failure, "walk %u: an error", walk);
    for (uint32_t i = 0; i < before && r->failure[0] == '\0'; i++) {
        if (r->seen[i] != walk)
            snprintf(r->failure, sizeof r->failure,
                     "walk %u (%s): cell %u, added before it began (%u were), is missing", walk,
                     forward ? "forward" : "backward", i, before);
    }
    if (n > r->longest)
        r->longest = n;
    r->backward += !forward;

    /* a seek to a cell added before finds its key, at that sequence or newer */
    if (before > 0 && r->failure[0] == '\0') {
        uint32_t i = (uint32_t)(tu_splitmix64(&r->rng) % before);
        kiln_iter_seek(it, &cells[i].c);
        r->seeks++;
        if (!kiln_iter_valid(it) || cell_compare(kiln_iter_key(it), &cells[i].c) != 0 ||
            kiln_iter_key(it)->mvcc < (uint64_t)i + 1)
            snprintf(r->failure, sizeof r->failure, "seek to cell %u: not found", i);
        kiln_iter_seek_for_prev(it, &cells[i].c);
        if (!kiln_iter_valid(it) || cell_compare(kiln_iter_key(it), &cells[i].c) != 0 ||
            kiln_iter_key(it)->mvcc > (uint64_t)i + 1)
            snprintf(r->failure, sizeof r->failure, "seek_for_prev to cell %u: not found", i);
        /* the start of its row (the row index): a cell of that row, none
         * of it before (the writer may have put a newer one first) */
        kiln_cell start;
        cell_first_on_row(&start, cells[i].c.row, cells[i].c.row_len);
        kiln_iter_seek(it, &start);
        if (!kiln_iter_valid(it) || kiln_iter_key(it)->row_len != cells[i].c.row_len ||
            memcmp(kiln_iter_key(it)->row, cells[i].c.row, cells[i].c.row_len) != 0 ||
            cell_compare(kiln_iter_key(it), &cells[i].c) > 0)
            snprintf(r->failure, sizeof r->failure, "seek to the row of cell %u: not there", i);
    }
    kiln_iter_close(it);
    return r->failure[0] == '\0' ? 0 : -1;
}

static void *
reader_run(void *arg)
{
    reader *r = arg;
    for (;;) {
        int finished = atomic_load_explicit(r->done, memory_order_acquire);
        /* the last walk begins after the writer finished: it sees everything */
        int failed = reader_walk(r, tu_splitmix64(&r->rng) % 3 != 0) != 0;
        if (r->walks == 1)
            atomic_fetch_add(r->started, 1);
        if (failed || finished)
            break;
    }
    memstore_unref(r->ms);
    atomic_store(&r->exited, 1);
    return NULL;
}

#define NREADERS 3
#define BATCH 400

static void
readers_while_writing(void **state)
{
    (void)state;
    uint64_t st = rng_seed;
    gen_all(&st);
    memstore *ms = memstore_new(0);
    atomic_uint added;
    atomic_int done, started;
    atomic_init(&added, 0);
    atomic_init(&done, 0);
    atomic_init(&started, 0);
    reader rd[NREADERS];
    pthread_t th[NREADERS];
    for (int i = 0; i < NREADERS; i++) {
        memset(&rd[i], 0, sizeof rd[i]);
        memstore_ref(ms);
        rd[i].ms = ms;
        rd[i].added = &added;
        rd[i].done = &done;
        rd[i].started = &started;
        atomic_init(&rd[i].walk_from, 0);
        atomic_init(&rd[i].exited, 0);
        rd[i].rng = rng_seed + (uint64_t)i + 1;
        rd[i].seen = calloc(NCELLS, sizeof *rd[i].seen);
        assert_non_null(rd[i].seen);
        assert_int_equal(pthread_create(&th[i], NULL, reader_run, &rd[i]), 0);
    }
    /* start writing once every reader has walked once */
    while (atomic_load(&started) < NREADERS)
        sched_yield();
    kiln_err err;
    status_clear(&err);
    for (uint32_t i = 0; i < NCELLS; i++) {
        tu_must(memstore_add(ms, &cells[i].c, (uint64_t)i + 1, &err), &err);
        atomic_store_explicit(&added, i + 1, memory_order_release);
        /* every BATCH cells, wait until each reader has begun a walk that
         * saw them, then add the next batch while those walks run: walks
         * overlap adds however the threads are scheduled */
        if ((i + 1) % BATCH == 0) {
            for (int r = 0; r < NREADERS; r++) {
                while (!atomic_load(&rd[r].exited) && atomic_load(&rd[r].walk_from) < i + 1)
                    sched_yield();
            }
        }
    }
    assert_int_equal(memstore_count(ms), NCELLS);
    atomic_store_explicit(&done, 1, memory_order_release);
    /* the readers' references keep it alive; the last of them frees it */
    memstore_unref(ms);
    for (int i = 0; i < NREADERS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        printf("  reader %d: %ld walks (%ld backward, %ld begun while adding), %ld seeks, "
               "longest %zu cells\n", i, rd[i].walks, rd[i].backward, rd[i].during, rd[i].seeks,
               rd[i].longest);
        if (rd[i].failure[0] != '\0')
            fail_msg("reader %d: %s", i, rd[i].failure);
        assert_int_equal(rd[i].longest, NCELLS);
        assert_true(rd[i].during >= NCELLS / BATCH - 1);
        free(rd[i].seen);
    }
}

/* ------------------------------------------------------------------ byte budget */

static void
byte_budget(void **state)
{
    (void)state;
    const size_t budget = 1 << 20;
    memstore *ms = memstore_new(budget);
    assert_int_equal(memstore_bytes(ms), 0);
    assert_false(memstore_full(ms));

    static uint8_t value[100 * 1024];
    memset(value, 'v', sizeof value);
    uint8_t row[16];
    kiln_cell c;
    memset(&c, 0, sizeof c);
    c.row = row;
    c.family = (const uint8_t *)"f";
    c.family_len = 1;
    c.qualifier = (const uint8_t *)"q";
    c.qualifier_len = 1;
    c.ts = 1;
    c.type = CELL_TYPE_PUT;
    c.value = value;
    kiln_err err;
    status_clear(&err);

    /* small cells fill whole chunks until the budget is reached */
    size_t payload = 0, last = 0, n = 0;
    while (!memstore_full(ms)) {
        c.row_len = (uint32_t)snprintf((char *)row, sizeof row, "row%08zu", n);
        c.value_len = (uint32_t)(50 + n % 200);
        tu_must(memstore_add(ms, &c, ++n, &err), &err);
        payload += c.row_len + 2 + c.value_len;
        size_t b = memstore_bytes(ms);
        assert_true(b >= last);
        assert_true(b >= payload);
        /* per cell: its node (a cell and at most 12 links, < 256 bytes) */
        assert_true(b <= payload + n * 256 + MEMSTORE_CHUNK + 64);
        last = b;
    }
    assert_true(last >= budget);
    assert_true(last < budget + MEMSTORE_CHUNK + 64);   /* full at the first chunk past it */
    assert_int_equal(memstore_count(ms), n);
    printf("  %zu cells of %zu payload bytes: %zu bytes, full at budget %zu\n", n, payload, last,
           budget);

    /* a cell larger than a quarter chunk gets a chunk of its own */
    c.row_len = (uint32_t)snprintf((char *)row, sizeof row, "big");
    c.value_len = sizeof value;
    tu_must(memstore_add(ms, &c, ++n, &err), &err);
    assert_true(memstore_bytes(ms) >= last + sizeof value);
    assert_true(memstore_bytes(ms) < last + sizeof value + 1024);
    kiln_iter *it = memstore_iter(ms);
    kiln_iter_seek(it, &c);
    assert_true(kiln_iter_valid(it));
    assert_int_equal(kiln_iter_value(it).n, sizeof value);
    assert_memory_equal(kiln_iter_value(it).p, value, sizeof value);
    assert_int_equal(kiln_iter_key(it)->mvcc, n);
    kiln_iter_close(it);
    memstore_unref(ms);

    /* no budget: never full */
    ms = memstore_new(0);
    c.value_len = 1000;
    for (int i = 0; i < 300; i++)
        tu_must(memstore_add(ms, &c, (uint64_t)i + 1, &err), &err);
    assert_true(memstore_bytes(ms) > 300 * 1000);
    assert_false(memstore_full(ms));
    memstore_unref(ms);
    memstore_unref(NULL);
}

/* Seeks to the start of rows (the row index) against a sorted copy of the
 * cells: rows present and absent, first cells replaced by later adds that
 * sort before them, enough rows to grow the index twice, and a read point
 * that hides some cells. */
typedef struct rs_cell {
    char row[16], qual[8];
    kiln_cell c;
    uint64_t seq;
} rs_cell;

static int
rs_cmp(const void *a, const void *b)
{
    const rs_cell *x = a, *y = b;
    int c = cell_compare(&x->c, &y->c);
    if (c != 0)
        return c;
    return x->seq > y->seq ? -1 : x->seq < y->seq;
}

static void
row_seeks(void **state)
{
    (void)state;
    enum { N = 30000, ROWS = 9000 };
    rs_cell *cs = calloc(N, sizeof *cs);
    memstore *ms = memstore_new(0);
    uint64_t rng = 99;
    kiln_err err;
    status_clear(&err);
    for (uint32_t i = 0; i < N; i++) {
        rs_cell *x = &cs[i];
        snprintf(x->row, sizeof x->row, "r%05u", (unsigned)(tu_splitmix64(&rng) % ROWS) * 2);
        snprintf(x->qual, sizeof x->qual, "q%u", (unsigned)(tu_splitmix64(&rng) % 50));
        x->c.row = (const uint8_t *)x->row;
        x->c.row_len = (uint32_t)strlen(x->row);
        x->c.family = (const uint8_t *)"f";
        x->c.family_len = 1;
        x->c.qualifier = (const uint8_t *)x->qual;
        x->c.qualifier_len = (uint32_t)strlen(x->qual);
        x->c.ts = (int64_t)(tu_splitmix64(&rng) % 1000);
        x->c.type = CELL_TYPE_PUT;
        x->seq = i + 1;
        tu_must(memstore_add(ms, &x->c, x->seq, &err), &err);
    }
    rs_cell *sorted = malloc(N * sizeof *sorted);
    memcpy(sorted, cs, N * sizeof *sorted);
    qsort(sorted, N, sizeof *sorted, rs_cmp);   /* compares through cs's bytes */
    for (uint32_t i = 0; i < N; i++) {          /* then points at its own */
        sorted[i].c.row = (const uint8_t *)sorted[i].row;
        sorted[i].c.qualifier = (const uint8_t *)sorted[i].qual;
    }
    uint64_t uptos[2] = {UINT64_MAX, N / 2};
    for (int u = 0; u < 2; u++) {
        kiln_iter *it = memstore_iter_upto(ms, uptos[u], INT64_MIN);
        for (uint32_t r = 0; r < 2 * ROWS + 1; r++) {
            char row[16];
            snprintf(row, sizeof row, "r%05u", r);
            kiln_cell key;
            cell_first_on_row(&key, (const uint8_t *)row, (uint32_t)strlen(row));
            kiln_iter_seek(it, &key);
            /* the oracle: the first sorted cell >= key that is visible */
            const rs_cell *want = NULL;
            for (uint32_t i = 0; i < N && want == NULL; i++) {
                if (cell_compare(&sorted[i].c, &key) >= 0 && sorted[i].seq <= uptos[u])
                    want = &sorted[i];
            }
            if (want == NULL) {
                assert_false(kiln_iter_valid(it));
                continue;
            }
            assert_true(kiln_iter_valid(it));
            const kiln_cell *got = kiln_iter_key(it);
            if (cell_compare(got, &want->c) != 0 || got->mvcc != want->seq)
                fail_msg("seek to row %s (upto %llu): got seq %llu, want %llu", row,
                         (unsigned long long)uptos[u], (unsigned long long)got->mvcc,
                         (unsigned long long)want->seq);
            r += r % 97 == 0 ? 0 : 6;   /* a sample of rows, present and absent */
        }
        kiln_iter_close(it);
    }
    free(sorted);
    free(cs);
    memstore_unref(ms);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_seed = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_memstore: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(readers_while_writing),
        cmocka_unit_test(row_seeks),
        cmocka_unit_test(byte_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
