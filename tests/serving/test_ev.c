/* test_ev.c -- the event loop's busy polling (ev.c): with a core free, the
 * events of a ping-pong client are found by polling, not after sleeping;
 * without busy polling none are; a poll never holds up a timer; and a loop
 * whose thread shares its core with a busy thread stops polling (the wait
 * for a core is past the threshold) and still answers every ping; the
 * loop's idle time counts its waits for events, not its callbacks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "serving/ev.h"
#include "tests/support/test_util.h"

typedef struct pong {
    ev_loop *loop;
    int fd;                 /* the loop's end of the socket pair */
    int cpu;                /* pin the loop's thread to this CPU (-1: no) */
    pthread_t thread;
} pong;

static void
pong_on_read(ev_loop *l, int fd, void *data, int mask)
{
    (void)data;
    (void)mask;
    char b[64];
    ssize_t n = read(fd, b, sizeof b);
    if (n <= 0 || b[n - 1] == 'q' || write(fd, b, (size_t)n) != n)
        ev_stop(l);   /* 'q' (or the client gone) ends the test's loop */
}

static _Atomic int ticks;

static long
pong_tick(ev_loop *l, long long id, void *data)
{
    (void)l;
    (void)id;
    (void)data;
    atomic_fetch_add_explicit(&ticks, 1, memory_order_relaxed);
    return 5;    /* a timer, as the server has: the loop must not poll past it */
}

static void *
pong_main(void *arg)
{
    pong *p = arg;
    if (p->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(p->cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    }
    ev_run(p->loop);
    return NULL;
}

static void
pong_start(pong *p, long poll_us, int cpu, int *client)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    kiln_err err;
    status_clear(&err);
    assert_int_equal(ev_loop_new(64, &p->loop, &err), KILN_OK);
    ev_set_busy_poll(p->loop, poll_us);
    assert_int_equal(ev_add(p->loop, sv[0], EV_READABLE, pong_on_read, p, &err), KILN_OK);
    ev_timer_add(p->loop, 5, pong_tick, p);
    p->fd = sv[0];
    p->cpu = cpu;
    *client = sv[1];
    assert_int_equal(pthread_create(&p->thread, NULL, pong_main, p), 0);
}

static void
pong_stop(pong *p, int client)
{
    char q = 'q';
    assert_int_equal(write(client, &q, 1), 1);
    pthread_join(p->thread, NULL);
    ev_loop_free(p->loop);
    close(p->fd);
    close(client);
}

static void
ping(int fd)
{
    char b = 'p';
    assert_int_equal(write(fd, &b, 1), 1);
    assert_int_equal(read(fd, &b, 1), 1);
    assert_int_equal(b, 'p');
}

static void
pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Pings 50 µs apart: each arrives within the 100 ms poll. Pings go on
 * until most turns were found by polling (a loaded machine may hold the
 * polling off for a second now and then), at most 10 s. */
static void
busy_poll_finds_events_without_sleeping(void **state)
{
    (void)state;
    pong p;
    int c;
    pong_start(&p, 100000, -1, &c);
    ev_poll_stats st = {0};
    double t0 = tu_now_s();
    int pings = 0;
    do {
        for (int i = 0; i < 100; i++, pings++) {
            ping(c);
            pause_us(50);
        }
        ev_get_poll_stats(p.loop, &st);
    } while (st.polled < 150 && tu_now_s() - t0 < 10);
    pong_stop(&p, c);
    print_message("%d pings: %llu turns found by polling, %llu after sleeping, %llu backoffs\n",
                  pings, (unsigned long long)st.polled, (unsigned long long)st.slept,
                  (unsigned long long)st.backoffs);
    assert_true(st.polled >= 150);
}

/* The waits after a turn with events are counted, and those over within
 * the poll span as caught, with polling off: pings 50 µs apart are caught
 * by a span of 100 ms, pings 2 ms apart are not by a span of 200 µs. */
static void
waits_are_counted_against_the_poll_span(void **state)
{
    (void)state;
    static const struct {
        long span_us, gap_us;
        int caught;
    } cases[] = {{100000, 50, 1}, {200, 2000, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pong p;
        int c;
        pong_start(&p, 0, -1, &c);
        ev_set_poll_span(p.loop, cases[k].span_us);
        for (int i = 0; i < 200; i++) {
            ping(c);
            pause_us(cases[k].gap_us);
        }
        char q = 'q';   /* pong_stop, reading the counts once the loop is over */
        assert_int_equal(write(c, &q, 1), 1);
        pthread_join(p.thread, NULL);
        uint64_t waits = 0, caught = 0;
        ev_waits(p.loop, &waits, &caught);
        ev_loop_free(p.loop);
        close(p.fd);
        close(c);
        print_message("span %ld us, pings %ld us apart: %llu waits, %llu caught\n",
                      cases[k].span_us, cases[k].gap_us, (unsigned long long)waits,
                      (unsigned long long)caught);
        /* (the pong's 5 ms timer ends some waits of the second case early,
         * and a wait after a timer's turn is not counted) */
        assert_true(waits >= (cases[k].caught ? 150u : 20u));
        if (cases[k].caught)
            assert_true(caught * 10 >= waits * 9);
        else
            assert_true(caught * 10 <= waits);
    }
}

/* Without busy polling every turn sleeps first: none is found by polling. */
static void
no_busy_poll_sleeps(void **state)
{
    (void)state;
    pong p;
    int c;
    pong_start(&p, 0, -1, &c);
    for (int i = 0; i < 300; i++) {
        ping(c);
        pause_us(50);
    }
    ev_poll_stats st;
    ev_get_poll_stats(p.loop, &st);
    pong_stop(&p, c);
    assert_int_equal(st.polled, 0);
    assert_int_equal(st.backoffs, 0);
}

/* A poll (100 ms here) never holds up a timer due sooner (every 5 ms):
 * after a ping, 60 ms see the timer run several times. */
static void
busy_poll_keeps_timers(void **state)
{
    (void)state;
    pong p;
    int c;
    pong_start(&p, 100000, -1, &c);
    ping(c);
    int t0 = atomic_load(&ticks);
    pause_us(60000);
    int got = atomic_load(&ticks) - t0;
    pong_stop(&p, c);
    print_message("%d timer runs in 60 ms after a ping\n", got);
    assert_true(got >= 3);
    assert_true(got <= 13);
}

static _Atomic int hog_stop;

static void *
hog_main(void *arg)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(*(int *)arg, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    volatile uint64_t x = 0;
    while (!atomic_load_explicit(&hog_stop, memory_order_relaxed))
        x++;
    return NULL;
}

/* The loop's thread shares a CPU with a thread that never sleeps: it waits
 * for that core for about half of every interval, so polling backs off;
 * every ping is still answered. */
static void
busy_poll_backs_off_on_a_crowded_core(void **state)
{
    (void)state;
    cpu_set_t mine;
    assert_int_equal(sched_getaffinity(0, sizeof mine, &mine), 0);
    int cpu = -1;
    for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
        if (CPU_ISSET(i, &mine))
            cpu = i;
    assert_true(cpu >= 0);
    atomic_store(&hog_stop, 0);
    pthread_t hog;
    assert_int_equal(pthread_create(&hog, NULL, hog_main, &cpu), 0);
    pong p;
    int c;
    pong_start(&p, 100000, cpu, &c);
    ev_poll_stats st = {0};
    double t0 = tu_now_s();
    do {
        for (int i = 0; i < 50; i++)
            ping(c);
        ev_get_poll_stats(p.loop, &st);
    } while (st.backoffs == 0 && tu_now_s() - t0 < 10);
    pong_stop(&p, c);
    atomic_store(&hog_stop, 1);
    pthread_join(hog, NULL);
    print_message("crowded: %llu polled, %llu slept, %llu backoffs in %.1f s\n",
                  (unsigned long long)st.polled, (unsigned long long)st.slept,
                  (unsigned long long)st.backoffs, tu_now_s() - t0);
    assert_true(st.backoffs >= 1);
}

/* A timer that works for 100 ms of wall clock, then stops the loop. */
static long
spin_then_stop(ev_loop *l, long long id, void *data)
{
    (void)id;
    (void)data;
    double until = tu_now_s() + 0.1;
    while (tu_now_s() < until)
        ;
    ev_stop(l);
    return EV_TIMER_STOP;
}

/* The loop's idle time counts its sleep for events and not its callbacks:
 * a timer due in 150 ms that then works 100 ms leaves about 150 ms idle. */
static void
idle_time_counts_waiting_only(void **state)
{
    (void)state;
    ev_loop *l;
    kiln_err err;
    assert_int_equal(ev_loop_new(64, &l, &err), KILN_OK);
    assert_int_equal(ev_idle_ns(l), 0);
    ev_timer_add(l, 150, spin_then_stop, NULL);
    double t0 = tu_now_s();
    ev_run(l);
    int64_t wall = (int64_t)((tu_now_s() - t0) * 1e9);
    uint64_t idle = ev_idle_ns(l);
    assert_true(wall >= 250 * 1000000);
    assert_true(idle >= 120 * 1000000);
    assert_true((int64_t)idle <= wall - 100 * 1000000);
    ev_loop_free(l);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(busy_poll_finds_events_without_sleeping),
        cmocka_unit_test(waits_are_counted_against_the_poll_span),
        cmocka_unit_test(no_busy_poll_sleeps),
        cmocka_unit_test(busy_poll_keeps_timers),
        cmocka_unit_test(busy_poll_backs_off_on_a_crowded_core),
        cmocka_unit_test(idle_time_counts_waiting_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
