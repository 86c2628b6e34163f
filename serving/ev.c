/* ev.c -- the epoll event loop of ev.h.
 *
 * Registered events live in an array indexed by fd (setsize entries), as in
 * Redis's ae.c; epoll returns ready fds in batches of up to EV_BATCH. Timers
 * are few (a handful per loop), so they sit in a small unsorted array and
 * the sleep is bounded by the nearest one. The wakeup is an eventfd watched
 * like any other descriptor.
 */
#include "serving/ev.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "storage/base/buf.h"

#define EV_BATCH 256
#define EV_POLL_CHECK_MS 100
#define EV_POLL_WAIT_PCT 10
#define EV_POLL_BACKOFF_MS 1000

typedef struct ev_file {
    int mask;
    ev_file_proc *proc;
    void *data;
} ev_file;

typedef struct ev_timer {
    long long id;
    int64_t when_ms;
    ev_timer_proc *proc;
    void *data;
} ev_timer;

struct ev_loop {
    int epfd;
    int wakefd;
    int setsize;
    ev_file *files;
    struct epoll_event *ready;
    ev_timer *timers;
    size_t ntimers, timer_cap;
    long long next_timer_id;
    int stop;
    int64_t now_ms;
    int64_t poll_ns;              /* busy poll after a turn with events (0: none) */
    int64_t poll_off_until_ms;    /* polling backs off until then */
    int64_t poll_check_ms;        /* when the thread's wait for a core was last read */
    int64_t run_delay_ns;         /* its wait for a core then (-1: not read) */
    int schedfd;                  /* /proc/thread-self/schedstat (-2: not opened) */
    int busy;                     /* the last turn had events */
    _Atomic uint64_t polled, slept, backoffs;   /* ev_get_poll_stats */
    int64_t span_ns;              /* ev_set_poll_span */
    int64_t polled_ns;            /* the last ev_poll's time polling */
    uint64_t waits, caught;       /* ev_waits */
    uint64_t idle_ns;             /* waiting for events: asleep or polling */
    ev_hook_proc *before_sleep;
    void *before_sleep_data;
    ev_hook_proc *on_wake;
    void *on_wake_data;
};

static int64_t
ev_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t
ev_monotonic_ms(void)
{
    return ev_monotonic_ns() / 1000000;
}

kiln_status
ev_loop_new(int setsize, ev_loop **out, kiln_err *err)
{
    *out = NULL;
    if (setsize < 16)
        setsize = 16;
    ev_loop *l = kiln_calloc(1, sizeof *l);
    l->setsize = setsize;
    l->files = kiln_calloc((size_t)setsize, sizeof *l->files);
    l->ready = kiln_calloc(EV_BATCH, sizeof *l->ready);
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    l->wakefd = -1;
    l->now_ms = ev_monotonic_ms();
    l->run_delay_ns = -1;
    l->schedfd = -2;
    if (l->epfd < 0) {
        int e = errno;
        ev_loop_free(l);
        return status_set_errno(err, e, "epoll_create1");
    }
    l->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (l->wakefd < 0) {
        int e = errno;
        ev_loop_free(l);
        return status_set_errno(err, e, "eventfd");
    }
    struct epoll_event ee;
    memset(&ee, 0, sizeof ee);
    ee.events = EPOLLIN;
    ee.data.fd = -1;
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->wakefd, &ee) != 0) {
        int e = errno;
        ev_loop_free(l);
        return status_set_errno(err, e, "epoll_ctl(eventfd)");
    }
    *out = l;
    return KILN_OK;
}

void
ev_loop_free(ev_loop *l)
{
    if (l == NULL)
        return;
    if (l->epfd >= 0)
        close(l->epfd);
    if (l->wakefd >= 0)
        close(l->wakefd);
    if (l->schedfd >= 0)
        close(l->schedfd);
    free(l->files);
    free(l->ready);
    free(l->timers);
    free(l);
}

static int
ev_epoll_events(int mask)
{
    int ev = 0;
    if (mask & EV_READABLE)
        ev |= EPOLLIN;
    if (mask & EV_WRITABLE)
        ev |= EPOLLOUT;
    return ev;
}

kiln_status
ev_add(ev_loop *l, int fd, int mask, ev_file_proc *proc, void *data, kiln_err *err)
{
    if (fd < 0 || fd >= l->setsize)
        return status_set(err, KILN_INVALID, "ev_add: fd %d outside the loop's set of %d", fd,
                          l->setsize);
    ev_file *f = &l->files[fd];
    int newmask = f->mask | mask;
    if (newmask != f->mask) {
        struct epoll_event ee;
        memset(&ee, 0, sizeof ee);
        ee.events = (uint32_t)ev_epoll_events(newmask);
        ee.data.fd = fd;
        int op = f->mask == EV_NONE ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
        if (epoll_ctl(l->epfd, op, fd, &ee) != 0)
            return status_set_errno(err, errno, "epoll_ctl(fd %d)", fd);
    }
    f->mask = newmask;
    f->proc = proc;
    f->data = data;
    return KILN_OK;
}

void
ev_del(ev_loop *l, int fd, int mask)
{
    if (fd < 0 || fd >= l->setsize)
        return;
    ev_file *f = &l->files[fd];
    if (f->mask == EV_NONE)
        return;
    int newmask = f->mask & ~mask;
    struct epoll_event ee;
    memset(&ee, 0, sizeof ee);
    ee.events = (uint32_t)ev_epoll_events(newmask);
    ee.data.fd = fd;
    /* A failure here means the fd is already gone; the slot is reset anyway. */
    (void)epoll_ctl(l->epfd, newmask == EV_NONE ? EPOLL_CTL_DEL : EPOLL_CTL_MOD, fd, &ee);
    f->mask = newmask;
    if (newmask == EV_NONE) {
        f->proc = NULL;
        f->data = NULL;
    }
}

int
ev_mask(const ev_loop *l, int fd)
{
    if (fd < 0 || fd >= l->setsize)
        return EV_NONE;
    return l->files[fd].mask;
}

long long
ev_timer_add(ev_loop *l, long ms, ev_timer_proc *proc, void *data)
{
    if (l->ntimers == l->timer_cap) {
        l->timer_cap = l->timer_cap ? l->timer_cap * 2 : 4;
        l->timers = kiln_realloc(l->timers, l->timer_cap * sizeof *l->timers);
    }
    ev_timer *t = &l->timers[l->ntimers++];
    t->id = ++l->next_timer_id;
    t->when_ms = ev_monotonic_ms() + (ms < 0 ? 0 : ms);
    t->proc = proc;
    t->data = data;
    return t->id;
}

void
ev_timer_del(ev_loop *l, long long id)
{
    for (size_t i = 0; i < l->ntimers; i++) {
        if (l->timers[i].id == id) {
            l->timers[i] = l->timers[--l->ntimers];
            return;
        }
    }
}

void
ev_set_before_sleep(ev_loop *l, ev_hook_proc *proc, void *data)
{
    l->before_sleep = proc;
    l->before_sleep_data = data;
}

void
ev_set_on_wake(ev_loop *l, ev_hook_proc *proc, void *data)
{
    l->on_wake = proc;
    l->on_wake_data = data;
}

void
ev_wake(ev_loop *l)
{
    uint64_t one = 1;
    ssize_t n = write(l->wakefd, &one, sizeof one);
    (void)n;   /* EAGAIN: the counter is already non-zero, a wakeup is pending */
}

void
ev_stop(ev_loop *l)
{
    l->stop = 1;
}

int64_t
ev_now_ms(const ev_loop *l)
{
    return l->now_ms;
}

int64_t
ev_clock_ms(ev_loop *l)
{
    l->now_ms = ev_monotonic_ms();
    return l->now_ms;
}

/* Run due timers; returns the ms until the next one (-1: none). */
static long
ev_run_timers(ev_loop *l)
{
    int64_t now = ev_clock_ms(l);
    for (size_t i = 0; i < l->ntimers;) {
        ev_timer *t = &l->timers[i];
        if (t->when_ms > now) {
            i++;
            continue;
        }
        long long id = t->id;
        long next = t->proc(l, id, t->data);
        /* The callback may have added or removed timers: find it again. */
        size_t k;
        for (k = 0; k < l->ntimers && l->timers[k].id != id; k++)
            ;
        if (k == l->ntimers) {
            i = 0;
            continue;
        }
        if (next == EV_TIMER_STOP) {
            l->timers[k] = l->timers[--l->ntimers];
            i = 0;
            continue;
        }
        l->timers[k].when_ms = ev_clock_ms(l) + next;
        i = k + 1;
    }
    /* measured from after the callbacks: one that ran long (a resumed
     * request's turn) must not make the loop sleep that long again */
    now = l->now_ms;
    long wait = -1;
    for (size_t i = 0; i < l->ntimers; i++) {
        long d = (long)(l->timers[i].when_ms - now);
        if (d < 0)
            d = 0;
        if (wait < 0 || d < wait)
            wait = d;
    }
    return wait;
}

void
ev_set_busy_poll(ev_loop *l, long us)
{
    l->poll_ns = us > 0 ? (int64_t)us * 1000 : 0;
}

void
ev_set_poll_span(ev_loop *l, long us)
{
    l->span_ns = us > 0 ? (int64_t)us * 1000 : 0;
}

void
ev_waits(const ev_loop *l, uint64_t *waits, uint64_t *caught)
{
    *waits = l->waits;
    *caught = l->caught;
}

void
ev_get_poll_stats(ev_loop *l, ev_poll_stats *out)
{
    out->polled = atomic_load_explicit(&l->polled, memory_order_relaxed);
    out->slept = atomic_load_explicit(&l->slept, memory_order_relaxed);
    out->backoffs = atomic_load_explicit(&l->backoffs, memory_order_relaxed);
}

uint64_t
ev_idle_ns(const ev_loop *l)
{
    return l->idle_ns;
}

/* The thread's time waiting for a core (ns; the second field of
 * /proc/thread-self/schedstat), or -1 if it cannot be read. */
static int64_t
ev_run_delay_ns(ev_loop *l)
{
    if (l->schedfd == -2)
        l->schedfd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (l->schedfd < 0)
        return -1;
    char b[128];
    ssize_t n = pread(l->schedfd, b, sizeof b - 1, 0);
    if (n <= 0)
        return -1;
    b[n] = '\0';
    char *p = strchr(b, ' ');
    return p != NULL ? strtoll(p + 1, NULL, 10) : -1;
}

/* After a turn that had events, look for the next ones without sleeping
 * for up to poll_ns: a loop that never sleeps while clients keep it busy
 * spares them the wake-up of a sleeping thread on every request. That only
 * pays while a core is free for it. The poll never runs past the next
 * timer (*wait_ms, -1 for none), and what is left of that wait after the
 * poll is put back. Every EV_POLL_CHECK_MS the loop looks at how long its
 * thread waited for a core; past EV_POLL_WAIT_PCT of the interval, polling
 * takes cores others need, and it stops for EV_POLL_BACKOFF_MS. Returns the
 * events found, 0 if none, -1 on an error of epoll_wait. */
static int
ev_poll(ev_loop *l, long *wait_ms)
{
    if (l->poll_ns == 0 || !l->busy || l->now_ms < l->poll_off_until_ms)
        return 0;
    if (l->now_ms - l->poll_check_ms >= EV_POLL_CHECK_MS) {
        int64_t d = ev_run_delay_ns(l);
        int64_t wall_ns = (l->now_ms - l->poll_check_ms) * 1000000;
        int crowded = d >= 0 && l->run_delay_ns >= 0 &&
                      (d - l->run_delay_ns) * 100 > wall_ns * EV_POLL_WAIT_PCT;
        l->run_delay_ns = d;
        l->poll_check_ms = l->now_ms;
        if (crowded) {
            l->poll_off_until_ms = l->now_ms + EV_POLL_BACKOFF_MS;
            atomic_fetch_add_explicit(&l->backoffs, 1, memory_order_relaxed);
            return 0;
        }
    }
    int64_t span = l->poll_ns;
    if (*wait_ms > 0 && *wait_ms * 1000000 < span)
        span = (int64_t)*wait_ms * 1000000;   /* never past the next timer */
    int64_t start = ev_monotonic_ns(), now;
    int n;
    for (;;) {
        n = epoll_wait(l->epfd, l->ready, EV_BATCH, 0);
        if (n > 0)
            atomic_fetch_add_explicit(&l->polled, 1, memory_order_relaxed);
        now = ev_monotonic_ns();
        if (n != 0 || now - start > span)
            break;
    }
    l->idle_ns += (uint64_t)(now - start);
    l->polled_ns = now - start;
    if (n != 0)
        return n;
    if (*wait_ms > 0) {   /* the sleep that follows ends at the timer all the same */
        long spent = (long)((now - start) / 1000000);
        *wait_ms = spent < *wait_ms ? *wait_ms - spent : 0;
    }
    return 0;
}

void
ev_run(ev_loop *l)
{
    l->stop = 0;
    while (!l->stop) {
        long wait = ev_run_timers(l);
        if (l->stop)
            break;
        if (l->before_sleep != NULL)
            l->before_sleep(l, l->before_sleep_data);
        int was_busy = l->busy;
        l->polled_ns = 0;   /* ev_poll sets it when it polls; it is not always called */
        int n = wait != 0 ? ev_poll(l, &wait) : 0;
        int64_t waited = l->polled_ns;
        if (n == 0) {
            int64_t t0 = ev_monotonic_ns();
            n = epoll_wait(l->epfd, l->ready, EV_BATCH, (int)wait);
            int64_t slept = ev_monotonic_ns() - t0;
            l->idle_ns += (uint64_t)slept;
            waited += slept;
            if (n > 0 && l->poll_ns > 0)
                atomic_fetch_add_explicit(&l->slept, 1, memory_order_relaxed);
        }
        if (was_busy && n > 0) {
            l->waits++;
            l->caught += waited <= l->span_ns;
        }
        l->busy = n > 0;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            /* epoll_wait only fails on a broken loop; nothing can be served. */
            abort();
        }
        ev_clock_ms(l);
        for (int i = 0; i < n; i++) {
            int fd = l->ready[i].data.fd;
            uint32_t e = l->ready[i].events;
            if (fd == -1) {
                uint64_t v;
                ssize_t r = read(l->wakefd, &v, sizeof v);
                (void)r;
                if (l->on_wake != NULL)
                    l->on_wake(l, l->on_wake_data);
                continue;
            }
            ev_file *f = &l->files[fd];
            int mask = 0;
            if (e & (EPOLLIN | EPOLLERR | EPOLLHUP))
                mask |= EV_READABLE;
            if (e & (EPOLLOUT | EPOLLERR | EPOLLHUP))
                mask |= EV_WRITABLE;
            mask &= f->mask;
            if (mask != 0 && f->proc != NULL)
                f->proc(l, fd, f->data, mask);
        }
    }
}
