/* test_mr_steal.c -- the deques the ranks of one host share their map input
 * through (mr_steal.h), driven by threads standing in for ranks: every piece
 * is taken exactly once, by one taker; each owner that has pieces takes its
 * first; an owner takes its own in order; and a slow owner's pieces go to
 * the others. Then mr_steal_open over MPI with this one process: its own
 * pieces in file order, the whole input, nothing stolen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mapreduce/mr_comm.h"
#include "mapreduce/mr_steal.h"
#include "tests/support/mpi_leaks.h"

#define MAX_TAKERS 8
#define MAX_PIECES 4096

typedef struct world {
    int n;
    uint64_t word[MAX_TAKERS];
    uint64_t *words[MAX_TAKERS];
    uint32_t pieces[MAX_TAKERS];
    int taken_by[MAX_TAKERS][MAX_PIECES];   /* taker + 1, 0 while untaken */
    int times[MAX_TAKERS][MAX_PIECES];
    long slow_ns[MAX_TAKERS];               /* per piece taken */
    pthread_barrier_t start;
} world;

typedef struct taker {
    world *w;
    int me;
    uint32_t own_last;          /* the last own piece taken + 1, to check order */
    int own_out_of_order;
    int out_of_range;
    int taken;
} taker;

static void *
take_all(void *arg)
{
    taker *t = arg;
    world *w = t->w;
    pthread_barrier_wait(&w->start);
    int owner;
    uint32_t i;
    while (mr_deque_take(w->words, w->n, t->me, &owner, &i)) {
        if (owner < 0 || owner >= w->n || i >= w->pieces[owner]) {
            t->out_of_range = 1;   /* cmocka's asserts belong to the main thread */
            break;
        }
        __atomic_fetch_add(&w->times[owner][i], 1, __ATOMIC_RELAXED);
        __atomic_store_n(&w->taken_by[owner][i], t->me + 1, __ATOMIC_RELAXED);
        if (owner == t->me) {
            if (i + 1 <= t->own_last)
                t->own_out_of_order = 1;
            t->own_last = i + 1;
        }
        t->taken++;
        if (w->slow_ns[t->me] > 0) {
            struct timespec ts = {0, w->slow_ns[t->me]};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

static uint64_t rng = 1;

static uint64_t
rnd(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Run n takers over deques of the given sizes; check the invariants. */
static void
run_world(world *w, int n, const uint32_t *pieces, const long *slow_ns, int *taken)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    for (int r = 0; r < n; r++) {
        w->pieces[r] = pieces[r];
        w->word[r] = mr_deque_word(0, pieces[r]);
        w->words[r] = &w->word[r];
        w->slow_ns[r] = slow_ns != NULL ? slow_ns[r] : 0;
    }
    pthread_barrier_init(&w->start, NULL, (unsigned)n);
    pthread_t th[MAX_TAKERS];
    taker t[MAX_TAKERS];
    for (int r = 0; r < n; r++) {
        t[r] = (taker){.w = w, .me = r};
        assert_int_equal(pthread_create(&th[r], NULL, take_all, &t[r]), 0);
    }
    for (int r = 0; r < n; r++)
        pthread_join(th[r], NULL);
    pthread_barrier_destroy(&w->start);
    for (int r = 0; r < n; r++) {
        for (uint32_t i = 0; i < pieces[r]; i++)
            assert_int_equal(w->times[r][i], 1);
        if (pieces[r] > 0)
            assert_int_equal(w->taken_by[r][0], r + 1);   /* its first piece */
        assert_false(t[r].own_out_of_order);
        assert_false(t[r].out_of_range);
        uint64_t v = w->word[r];
        assert_true((uint32_t)(v >> 32) >= (uint32_t)v);      /* empty */
        if (taken != NULL)
            taken[r] = t[r].taken;
    }
}

/* Random hosts of 1-8 takers with 0-4000 pieces each: every piece once. */
static void
every_piece_once(void **state)
{
    (void)state;
    static world w;
    for (int round = 0; round < 300; round++) {
        int n = 1 + (int)(rnd() % MAX_TAKERS);
        uint32_t pieces[MAX_TAKERS];
        for (int r = 0; r < n; r++)
            pieces[r] = rnd() % 4 == 0 ? (uint32_t)(rnd() % 3) : (uint32_t)(rnd() % MAX_PIECES);
        run_world(&w, n, pieces, NULL, NULL);
    }
}

/* One slow taker (1 ms a piece) beside three fast ones: the fast take most
 * of its pieces, and it still takes its first. */
static void
slow_owner_helped(void **state)
{
    (void)state;
    static world w;
    uint32_t pieces[4] = {200, 200, 200, 200};
    long slow[4] = {0, 1000000, 0, 0};
    int taken[4];
    run_world(&w, 4, pieces, slow, taken);
    assert_true(taken[1] >= 1);
    assert_true(taken[1] < 100);
    assert_int_equal(taken[0] + taken[1] + taken[2] + taken[3], 800);
}

/* The word's halves and what a thief may take. */
static void
stealable_counts(void **state)
{
    (void)state;
    assert_int_equal(mr_deque_stealable(mr_deque_word(0, 0)), 0);
    assert_int_equal(mr_deque_stealable(mr_deque_word(0, 1)), 0);   /* the first is kept */
    assert_int_equal(mr_deque_stealable(mr_deque_word(0, 5)), 4);
    assert_int_equal(mr_deque_stealable(mr_deque_word(1, 1)), 0);
    assert_int_equal(mr_deque_stealable(mr_deque_word(1, 2)), 1);   /* begun: all */
    assert_int_equal(mr_deque_stealable(mr_deque_word(7, 3)), 0);
    uint64_t w = mr_deque_word(0, 3);
    uint32_t i;
    assert_true(mr_deque_take_back(&w, &i));
    assert_int_equal(i, 2);
    assert_true(mr_deque_take_back(&w, &i));
    assert_int_equal(i, 1);
    assert_false(mr_deque_take_back(&w, &i));
    assert_true(mr_deque_take_front(&w, &i));
    assert_int_equal(i, 0);
    assert_false(mr_deque_take_front(&w, &i));
}

/* Over MPI, this process alone: its pieces in file order, covering the
 * input, none stolen; with sharing off the same. */
static void
mpi_one_rank(void **state)
{
    (void)state;
    mr_comm c;
    mr_comm_init(&c, MPI_COMM_WORLD);
    mr_input_file files[3] = {{"a", 5000000, 0}, {"b", 0, 0}, {"c", 300, 1}};
    mr_input in = {files, 3, 5000300};
    for (int share = 0; share <= 1; share++) {
        mr_steal *s = mr_steal_open(&c, &in, 1000000, share);
        assert_int_equal(mr_steal_own_bytes(s), 5000300);
        mr_split p;
        int stolen;
        uint64_t at = 0;
        int n = 0;
        while (mr_steal_next(s, &p, &stolen)) {
            assert_false(stolen);
            if (p.file == 0) {
                assert_int_equal(p.start, at);
                at = p.end;
            } else {
                assert_int_equal(p.file, 2);
                assert_int_equal(p.start, 0);
                assert_int_equal(p.end, 300);
            }
            n++;
        }
        assert_int_equal(at, 5000000);
        assert_int_equal(n, 6);
        mr_steal_close(s);
    }
    mr_comm_free(&c);
}

int
main(int argc, char **argv)
{
    mpi_leaks_name_components();
    MPI_Init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stealable_counts),
        cmocka_unit_test(every_piece_once),
        cmocka_unit_test(slow_owner_helped),
        cmocka_unit_test(mpi_one_rank),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
