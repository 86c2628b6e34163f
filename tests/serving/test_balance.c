/* test_balance.c -- how many workers the load needs (balance.c), tick by
 * tick: a light load parks a worker after a second and not before; a busy
 * worker comes back only while a core is idle, so a lone worker beside a
 * client that takes the other core stays alone; full cores park a worker on
 * trial, and a core coming free while the rest are busy brings it back and
 * stops trials for the hold time, or until new clients came; a trial that
 * frees no core stands; no parking when it is turned off; without an idle
 * reading, the load alone decides; /proc/stat gives an idle figure within
 * the machine's cores.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <unistd.h>

#include "serving/balance.h"

static balance b;

static int
setup(void **state)
{
    (void)state;
    balance_init(&b, 60, 85, 250);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    balance_close(&b);
    return 0;
}

/* The ticks until balance_step answers other than 0 (at most max). */
static int
ticks_until(int active, int load_pm, int idle_pm, int max, int *step)
{
    for (int t = 1; t <= max; t++) {
        *step = balance_step(&b, active, 2, load_pm, idle_pm);
        if (*step != 0)
            return t;
    }
    *step = 0;
    return max + 1;
}

static void
light_load_parks_after_a_second(void **state)
{
    (void)state;
    int step;
    /* two workers with 0.5 of a core between them: one would be 50% busy */
    assert_int_equal(ticks_until(2, 500, 1200, 100, &step), BALANCE_PARK_TICKS);
    assert_int_equal(step, -1);
    /* a heavier tick in the middle starts the count again */
    for (int t = 0; t < BALANCE_PARK_TICKS - 1; t++)
        assert_int_equal(balance_step(&b, 2, 2, 500, 1200), 0);
    assert_int_equal(balance_step(&b, 2, 2, 700, 1200), 0);
    assert_int_equal(ticks_until(2, 500, 1200, 100, &step), BALANCE_PARK_TICKS);
    assert_int_equal(step, -1);
}

static void
busy_worker_returns_only_to_an_idle_core(void **state)
{
    (void)state;
    int step;
    /* 80% busy: under the threshold whatever is idle */
    assert_int_equal(ticks_until(1, 800, 900, 100, &step), 101);
    /* 95% busy beside a client that takes the other core: stays alone */
    assert_int_equal(ticks_until(1, 950, 20, 1000, &step), 1001);
    /* 90% busy with 0.4 of a core idle: back at once */
    assert_int_equal(balance_step(&b, 1, 2, 900, 400), 1);
    /* every worker already active */
    assert_int_equal(balance_step(&b, 2, 2, 1990, 400), 0);
}

static void
full_cores_park_on_trial(void **state)
{
    (void)state;
    int step;
    /* two busy workers, no core idle: a trial park after a second */
    assert_int_equal(ticks_until(2, 1800, 30, 100, &step), BALANCE_PARK_TICKS);
    assert_int_equal(step, -1);
    /* the remaining worker is busy and a core comes free: it was needed */
    assert_int_equal(balance_step(&b, 1, 2, 980, 30), 0);
    assert_int_equal(balance_step(&b, 1, 2, 980, 450), 1);
    /* no trial for the hold time, then one again */
    int t = ticks_until(2, 1800, 30, BALANCE_HOLD_TICKS + 100, &step);
    assert_int_equal(step, -1);
    assert_true(t >= BALANCE_HOLD_TICKS - 2 && t <= BALANCE_HOLD_TICKS + BALANCE_PARK_TICKS);
}

static void
new_clients_end_a_hold(void **state)
{
    (void)state;
    int step;
    balance_clients(&b, 100, 50);
    assert_int_equal(ticks_until(2, 1800, 30, 100, &step), BALANCE_PARK_TICKS);
    assert_int_equal(step, -1);
    assert_int_equal(balance_step(&b, 1, 2, 980, 450), 1);   /* failed: hold */
    /* the same clients: no trial for the hold time */
    balance_clients(&b, 124, 50);
    assert_int_equal(ticks_until(2, 1800, 30, 50, &step), 51);
    /* half as many new connections as were open: trials again */
    balance_clients(&b, 125, 50);
    assert_int_equal(ticks_until(2, 1800, 30, 100, &step), BALANCE_PARK_TICKS);
    assert_int_equal(step, -1);
}

static void
trial_that_frees_no_core_stands(void **state)
{
    (void)state;
    int step;
    assert_int_equal(ticks_until(2, 1700, 10, 100, &step), BALANCE_PARK_TICKS);
    assert_int_equal(step, -1);
    /* the lone worker and its client fill the cores: it stays alone */
    assert_int_equal(ticks_until(1, 900, 15, 500, &step), 501);
    /* a core free long after the trial: back, and trials go on unheld */
    assert_int_equal(balance_step(&b, 1, 2, 900, 600), 1);
    assert_int_equal(ticks_until(2, 1800, 30, 100, &step), BALANCE_PARK_TICKS);
    assert_int_equal(step, -1);
}

static void
parking_off_and_no_idle_reading(void **state)
{
    (void)state;
    balance off;
    balance_init(&off, 0, 85, 250);
    for (int t = 0; t < 100; t++) {
        assert_int_equal(balance_step(&off, 2, 2, 0, 2000), 0);
        assert_int_equal(balance_step(&off, 1, 2, 1000, 2000), 0);
    }
    balance_close(&off);
    int step;
    /* no idle reading: the load alone brings a worker back; full cores
     * cannot be seen, so no trial */
    assert_int_equal(balance_step(&b, 1, 2, 900, -1), 1);
    assert_int_equal(ticks_until(2, 1800, -1, 200, &step), 201);
    /* one worker only: nothing to do */
    balance one;
    balance_init(&one, 60, 85, 250);
    for (int t = 0; t < 50; t++)
        assert_int_equal(balance_step(&one, 1, 1, 1000, 2000), 0);
    balance_close(&one);
}

static void
idle_reading_within_the_cores(void **state)
{
    (void)state;
    balance r;
    balance_init(&r, 60, 85, 250);
    assert_int_equal(balance_idle_pm(&r), -1);   /* one reading: no interval yet */
    usleep(50 * 1000);
    int pm = balance_idle_pm(&r);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    assert_true(pm >= 0 && pm <= ncpu * 1000);
    for (int i = 0; i < BALANCE_IDLE_TICKS + 2; i++) {
        usleep(20 * 1000);
        pm = balance_idle_pm(&r);
        assert_true(pm >= 0 && pm <= ncpu * 1000);
    }
    balance_close(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(light_load_parks_after_a_second, setup, teardown),
        cmocka_unit_test_setup_teardown(busy_worker_returns_only_to_an_idle_core, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(full_cores_park_on_trial, setup, teardown),
        cmocka_unit_test_setup_teardown(trial_that_frees_no_core_stands, setup, teardown),
        cmocka_unit_test_setup_teardown(new_clients_end_a_hold, setup, teardown),
        cmocka_unit_test_setup_teardown(parking_off_and_no_idle_reading, setup, teardown),
        cmocka_unit_test_setup_teardown(idle_reading_within_the_cores, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
