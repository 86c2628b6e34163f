/* core_probe.c -- kiln-core-probe: what work on one CPU costs a thread on
 * another. Every benchmark here runs the load generator beside the program
 * it measures, so how independent the machine's CPUs are decides how far
 * their figures can go: two CPUs that are hyperthreads of one core (or
 * virtual CPUs a host schedules on one) slow each other down, whatever the
 * scheduler's priorities say.
 *
 * A fixed amount of integer work runs on CPU A, alone and then beside the
 * same work looping at SCHED_IDLE (the lowest priority Linux has) pinned to
 * CPU B, alternating (A B A B); the probe prints the medians and their ratio.
 * About 1.0: independent cores. About 2.0: the two CPUs share one core's
 * execution, and any work beside a server (a load generator, a warm-up at
 * idle priority) comes out of the server's rate.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

static const char core_probe_usage_text[] =
    "Usage: kiln-core-probe [--rounds N] [--ms M] [--cpus A,B]\n"
    "       kiln-core-probe --help\n"
    "\n"
    "How much a busy loop on one CPU slows a thread on another. A fixed amount\n"
    "of integer work (about M ms alone) runs pinned to CPU A, alone and then\n"
    "beside a SCHED_IDLE busy loop pinned to CPU B, N times each, alternating.\n"
    "Prints one line: cpus= a= b= rounds= alone_ms= beside_ms= ratio=, the\n"
    "medians and beside/alone, then what the ratio means. About 1.0: the two\n"
    "CPUs are independent cores. About 2.0: they share one core, and work\n"
    "beside a benchmarked program (its load generator, a warm-up at idle\n"
    "priority) costs that program nearly as much as it takes.\n"
    "\n"
    "  --rounds N   pairs of runs (default 5, 1..1000)\n"
    "  --ms M       the work's length alone, in ms (default 200, 1..10000)\n"
    "  --cpus A,B   the measured CPU and the busy one (default the first two\n"
    "               this process may run on)\n"
    "\n"
    "With one CPU there is nothing to measure: it says so and exits 0.\n"
    "Exit status: 0 measured (or one CPU), 64 usage, 71 a thread or affinity failed.\n";

static atomic_int core_probe_stop;

static double
core_probe_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int
core_probe_pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* The measured work, and the busy loop's: four independent chains of
 * multiplies and adds, n steps, so that the core's multiplier is kept busy
 * (a single chain waits on each multiply and would leave a hyperthread
 * sibling room to run beside it unslowed). */
static uint64_t
core_probe_work(uint64_t n)
{
    uint64_t a = 0x9e3779b97f4a7c15ull, b = a + 1, c = a + 2, d = a + 3;
    for (uint64_t i = 0; i < n; i++) {
        a = a * 6364136223846793005ull + i;
        b = b * 2862933555777941757ull + i;
        c = c * 3202034522624059733ull + i;
        d = d * 3935559000370003845ull + i;
        __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
    }
    return a ^ b ^ c ^ d;
}

static double
core_probe_time(uint64_t n)
{
    double t0 = core_probe_now_ms();
    uint64_t x = core_probe_work(n);
    double t1 = core_probe_now_ms();
    __asm__ volatile("" : : "r"(x));
    return t1 - t0;
}

typedef struct core_probe_spin {
    int cpu;
    int err;          /* what failed, 0 if none */
    atomic_int ready;
} core_probe_spin;

static void *
core_probe_spin_main(void *arg)
{
    core_probe_spin *s = arg;
    struct sched_param sp = {0};
    if ((s->err = core_probe_pin(s->cpu)) == 0)
        s->err = pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
    atomic_store(&s->ready, 1);
    uint64_t x = 0;
    while (s->err == 0 && !atomic_load_explicit(&core_probe_stop, memory_order_relaxed)) {
        x ^= core_probe_work(4096);
        __asm__ volatile("" : "+r"(x));
    }
    return NULL;
}

static int
core_probe_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double
core_probe_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, core_probe_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int
core_probe_usage_error(const char *what)
{
    fprintf(stderr, "kiln-core-probe: %s\n%s", what, core_probe_usage_text);
    return EX_USAGE;
}

static int
core_probe_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int
main(int argc, char **argv)
{
    long rounds = 5, ms = 200, a = -1, b = -1;
    static const struct option opts[] = {
        {"rounds", required_argument, NULL, 'r'},
        {"ms", required_argument, NULL, 'm'},
        {"cpus", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    char msg[160];
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 'r':
            if (core_probe_int(optarg, 1, 1000, &rounds) != 0) {
                snprintf(msg, sizeof msg, "--rounds must be 1..1000, got '%s'", optarg);
                return core_probe_usage_error(msg);
            }
            break;
        case 'm':
            if (core_probe_int(optarg, 1, 10000, &ms) != 0) {
                snprintf(msg, sizeof msg, "--ms must be 1..10000, got '%s'", optarg);
                return core_probe_usage_error(msg);
            }
            break;
        case 'c': {
            char *comma = strchr(optarg, ',');
            int ok = comma != NULL;
            if (ok) {
                *comma = '\0';
                ok = core_probe_int(optarg, 0, CPU_SETSIZE - 1, &a) == 0 &&
                     core_probe_int(comma + 1, 0, CPU_SETSIZE - 1, &b) == 0 && a != b;
                *comma = ',';
            }
            if (!ok) {
                snprintf(msg, sizeof msg, "--cpus must be two different CPU numbers A,B, got '%s'",
                         optarg);
                return core_probe_usage_error(msg);
            }
            break;
        }
        case 'h':
            fputs(core_probe_usage_text, stdout);
            return 0;
        default:
            return core_probe_usage_error("unknown option");
        }
    }
    if (optind < argc) {
        snprintf(msg, sizeof msg, "unexpected argument '%s'", argv[optind]);
        return core_probe_usage_error(msg);
    }

    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) {
        fprintf(stderr, "kiln-core-probe: sched_getaffinity: %s\n", strerror(errno));
        return EX_OSERR;
    }
    int ncpu = CPU_COUNT(&mine);
    if (a < 0) {
        for (int i = 0; i < CPU_SETSIZE && (a < 0 || b < 0); i++) {
            if (!CPU_ISSET(i, &mine))
                continue;
            if (a < 0)
                a = i;
            else
                b = i;
        }
    }
    if (b < 0) {
        printf("core_probe cpus=%d: one CPU, nothing beside it to measure\n", ncpu);
        return 0;
    }
    if (!CPU_ISSET(a, &mine) || !CPU_ISSET(b, &mine)) {
        fprintf(stderr, "kiln-core-probe: --cpus %ld,%ld: this process may not run on both\n", a,
                b);
        return EX_USAGE;
    }
    int rc = core_probe_pin((int)a);
    if (rc != 0) {
        fprintf(stderr, "kiln-core-probe: pinning to CPU %ld: %s\n", a, strerror(rc));
        return EX_OSERR;
    }

    /* Calibrate n to about ms alone (the best of three, so a stray
     * interruption does not shorten every run). */
    uint64_t n = 1u << 20;
    double t = core_probe_time(n);
    while (t < 20) {
        n *= 2;
        t = core_probe_time(n);
    }
    for (int i = 0; i < 2; i++) {
        double u = core_probe_time(n);
        if (u < t)
            t = u;
    }
    n = (uint64_t)((double)n * (double)ms / t);
    if (n == 0)
        n = 1;

    double *alone = calloc((size_t)rounds, sizeof *alone);
    double *beside = calloc((size_t)rounds, sizeof *beside);
    if (alone == NULL || beside == NULL) {
        fprintf(stderr, "kiln-core-probe: out of memory\n");
        return EX_OSERR;
    }
    for (long r = 0; r < rounds; r++) {
        alone[r] = core_probe_time(n);
        core_probe_spin s = {.cpu = (int)b, .err = 0};
        atomic_store(&core_probe_stop, 0);
        pthread_t th;
        if ((rc = pthread_create(&th, NULL, core_probe_spin_main, &s)) != 0) {
            fprintf(stderr, "kiln-core-probe: pthread_create: %s\n", strerror(rc));
            return EX_OSERR;
        }
        while (!atomic_load(&s.ready))
            sched_yield();
        beside[r] = core_probe_time(n);
        atomic_store(&core_probe_stop, 1);
        pthread_join(th, NULL);
        if (s.err != 0) {
            fprintf(stderr, "kiln-core-probe: the busy loop on CPU %ld: %s\n", b,
                    strerror(s.err));
            return EX_OSERR;
        }
    }
    double ma = core_probe_median(alone, (int)rounds), mb = core_probe_median(beside, (int)rounds);
    double ratio = mb / ma;
    printf("core_probe cpus=%d a=%ld b=%ld rounds=%ld alone_ms=%.1f beside_ms=%.1f ratio=%.2f\n",
           ncpu, a, b, rounds, ma, mb, ratio);
    if (ratio >= 1.5)
        printf("CPUs %ld and %ld share one core: a thread beside a busy loop at SCHED_IDLE ran "
               "%.2fx as long as alone\n", a, b, ratio);
    else if (ratio >= 1.1)
        printf("CPUs %ld and %ld slow each other: %.2fx as long beside a busy loop\n", a, b,
               ratio);
    else
        printf("CPUs %ld and %ld are independent: %.2fx as long beside a busy loop\n", a, b,
               ratio);
    free(alone);
    free(beside);
    return 0;
}
