/* balance.h -- how many of kiln-server's workers the load needs.
 *
 * On a machine whose cores the clients share, a worker that has little to
 * do costs more than it gives: every request wakes a sleeping thread, and
 * the workers and the clients take turns on the cores. So the server runs
 * as few workers as keep up. Every tick (100 ms) worker 0 gives
 * balance_step the active workers' busy time, summed, and the machine's
 * idle CPU; it answers whether to park the last active worker, bring the
 * first parked one back, or neither:
 *
 *   - back: the active workers average above unpark_above_pct busy and at
 *     least spare_pm thousandths of a core are idle (a core is free for
 *     another worker; the client of a loaded server on the same machine
 *     may be what takes the rest, and then one more worker only takes
 *     turns with it);
 *   - park, light: for BALANCE_PARK_TICKS ticks in a row the load would
 *     keep one fewer worker each below park_below_pct busy;
 *   - park, trial: for BALANCE_PARK_TICKS ticks in a row the cores have
 *     been full (under a tenth of a core idle). The trial fails if a core comes free within
 *     BALANCE_TRIAL_TICKS while the remaining workers are busy: the worker
 *     comes back, and no trial is made for BALANCE_HOLD_TICKS, or until
 *     the clients have changed: as many connections accepted since as half
 *     of those open then (balance_clients).
 *
 * Without a reading of the machine's idle CPU (idle_pm < 0) a worker comes
 * back on the load alone, and no trial is made.
 */
#ifndef KILN_BALANCE_H
#define KILN_BALANCE_H

#define BALANCE_PARK_TICKS 10     /* a second of light load, or of full cores */
#define BALANCE_TRIAL_TICKS 20    /* a trial fails if a core comes free within 2 s */
#define BALANCE_HOLD_TICKS 300    /* then no trial for 30 s */
#define BALANCE_FULL_PM 100       /* under a tenth of a core idle: the cores are full */
#define BALANCE_SPARE_PM_DEFAULT 250   /* a quarter of a core idle: room for a worker */
#define BALANCE_IDLE_TICKS 3      /* the idle CPU is measured over 300 ms */

typedef struct balance {
    int park_below_pm, unpark_above_pm, spare_pm;   /* thousandths of a core */
    long tick;
    int park_ticks;               /* ticks in a row one fewer worker would do */
    long trial_tick;              /* when a trial parked a worker (-1: none on) */
    long hold_until;              /* no trial before this tick */
    unsigned long long accepted;  /* balance_clients' latest figures */
    int conns;
    unsigned long long hold_accepted;   /* ... when the hold began */
    int hold_conns;
    /* the machine's CPU time (jiffies: idle, all) at the last ticks */
    int statfd;                   /* /proc/stat (-2: not opened) */
    int ncpu;
    unsigned long long idle[BALANCE_IDLE_TICKS + 1], total[BALANCE_IDLE_TICKS + 1];
    int nsamples;
} balance;

/* park_below_pct 0: never park. spare_pm: see above. */
void balance_init(balance *b, int park_below_pct, int unpark_above_pct, int spare_pm);
void balance_close(balance *b);

/* The machine's idle CPU over the last BALANCE_IDLE_TICKS calls, in
 * thousandths of a core (/proc/stat), or -1 before there are two readings
 * or if /proc/stat cannot be read. CPU time spent in niced processes
 * counts as idle: a worker takes it back from them. Call once a tick. */
int balance_idle_pm(balance *b);

/* The connections accepted so far and open now; call before each
 * balance_step to let new clients end a hold. */
void balance_clients(balance *b, unsigned long long accepted, int conns);

/* One tick: active of nworkers take connections, their busy time summed
 * is load_pm, and idle_pm is balance_idle_pm's. Returns -1 to park worker
 * active-1, +1 to bring worker active back, 0 for neither. */
int balance_step(balance *b, int active, int nworkers, int load_pm, int idle_pm);

#endif
