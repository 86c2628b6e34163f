/* balance.c -- the worker count of balance.h. */
#include "serving/balance.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void
balance_init(balance *b, int park_below_pct, int unpark_above_pct, int spare_pm)
{
    memset(b, 0, sizeof *b);
    b->park_below_pm = park_below_pct * 10;
    b->unpark_above_pm = unpark_above_pct * 10;
    b->spare_pm = spare_pm;
    b->trial_tick = -1;
    b->statfd = -2;
    b->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (b->ncpu < 1)
        b->ncpu = 1;
}

void
balance_close(balance *b)
{
    if (b->statfd >= 0)
        close(b->statfd);
    b->statfd = -2;
}

/* The first line of /proc/stat: "cpu  user nice system idle iowait irq
 * softirq steal ..." in jiffies. Free is idle + iowait + nice: a worker
 * takes the time of niced work (such as the server's own swap warm-up, at
 * nice 10) back from it. */
static int
balance_read_stat(balance *b, unsigned long long *idle, unsigned long long *total)
{
    if (b->statfd == -2)
        b->statfd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (b->statfd < 0)
        return -1;
    char line[256];
    ssize_t n = pread(b->statfd, line, sizeof line - 1, 0);
    if (n <= 0)
        return -1;
    line[n] = '\0';
    unsigned long long v[8] = {0};
    if (sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7]) < 5)
        return -1;
    *idle = v[3] + v[4] + v[1];
    *total = 0;
    for (int i = 0; i < 8; i++)
        *total += v[i];
    return 0;
}

int
balance_idle_pm(balance *b)
{
    unsigned long long idle, total;
    if (balance_read_stat(b, &idle, &total) != 0)
        return -1;
    if (b->nsamples == BALANCE_IDLE_TICKS + 1) {
        memmove(b->idle, b->idle + 1, BALANCE_IDLE_TICKS * sizeof b->idle[0]);
        memmove(b->total, b->total + 1, BALANCE_IDLE_TICKS * sizeof b->total[0]);
        b->nsamples--;
    }
    b->idle[b->nsamples] = idle;
    b->total[b->nsamples] = total;
    b->nsamples++;
    if (b->nsamples < 2)
        return -1;
    unsigned long long di = idle - b->idle[0], dt = total - b->total[0];
    if (dt == 0)
        return -1;
    return (int)(di * 1000ull * (unsigned long long)b->ncpu / dt);
}

void
balance_clients(balance *b, unsigned long long accepted, int conns)
{
    b->accepted = accepted;
    b->conns = conns;
}

int
balance_step(balance *b, int active, int nworkers, int load_pm, int idle_pm)
{
    b->tick++;
    if (b->park_below_pm <= 0 || nworkers < 2)
        return 0;
    int trial_on = b->trial_tick >= 0 && b->tick - b->trial_tick <= BALANCE_TRIAL_TICKS;
    if (!trial_on)
        b->trial_tick = -1;
    if (active < nworkers && load_pm > active * b->unpark_above_pm &&
        (idle_pm < 0 || idle_pm >= b->spare_pm)) {
        if (trial_on) {
            b->hold_until = b->tick + BALANCE_HOLD_TICKS;
            b->hold_accepted = b->accepted;
            b->hold_conns = b->conns;
        }
        b->trial_tick = -1;
        b->park_ticks = 0;
        return 1;
    }
    unsigned long long fresh = (unsigned long long)(b->hold_conns > 1 ? b->hold_conns / 2 : 1);
    if (b->tick < b->hold_until && b->accepted - b->hold_accepted >= fresh)
        b->hold_until = b->tick;   /* other clients: a trial may tell otherwise */
    int light = active > 1 && load_pm < (active - 1) * b->park_below_pm;
    int full = active > 1 && idle_pm >= 0 && idle_pm < BALANCE_FULL_PM &&
               b->tick >= b->hold_until;
    if (!light && !full) {
        b->park_ticks = 0;
        return 0;
    }
    if (++b->park_ticks < BALANCE_PARK_TICKS)
        return 0;
    b->park_ticks = 0;
    b->trial_tick = light ? -1 : b->tick;
    return -1;
}
