/* ev.h -- a small epoll event loop with typed callbacks (in the manner of
 * Redis's ae): file events on descriptors, periodic timers, a hook run before
 * each sleep, and a wakeup that other threads may trigger.
 *
 * One loop belongs to one thread: every function except ev_wake must be
 * called from the thread that runs the loop. Descriptors are indexed
 * directly, so fds must be below the setsize given at creation. Events are
 * level-triggered: a readable callback that leaves bytes unread is called
 * again on the next turn.
 */
#ifndef KILN_EV_H
#define KILN_EV_H

#include <stdint.h>

#include "storage/base/status.h"

#define EV_NONE 0
#define EV_READABLE 1
#define EV_WRITABLE 2

/* Returned by a timer callback to remove the timer. */
#define EV_TIMER_STOP (-1)

typedef struct ev_loop ev_loop;

/* A ready descriptor: mask holds EV_READABLE and/or EV_WRITABLE. */
typedef void ev_file_proc(ev_loop *loop, int fd, void *data, int mask);
/* A due timer: returns the delay in ms until its next run, or EV_TIMER_STOP. */
typedef long ev_timer_proc(ev_loop *loop, long long id, void *data);
/* Run before the loop sleeps, and after ev_wake. */
typedef void ev_hook_proc(ev_loop *loop, void *data);

/* A loop for descriptors below setsize. KILN_IO if epoll or eventfd fail. */
kiln_status ev_loop_new(int setsize, ev_loop **out, kiln_err *err);
/* Free the loop (it does not close the registered descriptors). l may be NULL. */
void ev_loop_free(ev_loop *l);

/* Add mask to the events watched on fd (proc and data replace those of the
 * events already registered for the fd). KILN_INVALID if fd >= setsize,
 * KILN_IO if epoll_ctl fails. */
kiln_status ev_add(ev_loop *l, int fd, int mask, ev_file_proc *proc, void *data, kiln_err *err);
/* Stop watching mask on fd; with EV_READABLE|EV_WRITABLE the fd is forgotten. */
void ev_del(ev_loop *l, int fd, int mask);
/* The events watched on fd. */
int ev_mask(const ev_loop *l, int fd);

/* Call proc after ms milliseconds (then as it says). Returns the timer id. */
long long ev_timer_add(ev_loop *l, long ms, ev_timer_proc *proc, void *data);
void ev_timer_del(ev_loop *l, long long id);

/* The hook run before every sleep (NULL for none). */
void ev_set_before_sleep(ev_loop *l, ev_hook_proc *proc, void *data);
/* The hook run on the loop's thread after another thread called ev_wake. */
void ev_set_on_wake(ev_loop *l, ev_hook_proc *proc, void *data);

/* Busy-poll for up to us microseconds before sleeping, after a turn that
 * had events (0, the default: sleep at once). Never past the next timer;
 * backs off for a second when the loop's thread waited for a core for more
 * than a tenth of the last 100 ms. */
void ev_set_busy_poll(ev_loop *l, long us);

/* The span a busy poll would take (microseconds), to count against it the
 * waits for events after a turn that had them (0, the default: none counts
 * as caught). Independent of whether polling is on. */
void ev_set_poll_span(ev_loop *l, long us);
/* Since the loop started: the waits after a turn with events that ended
 * with events (*waits), and those among them over within the poll span
 * (*caught), whether a poll found the events or a short sleep did. A loop
 * whose waits are mostly caught would find those events by polling. Loop
 * thread only. */
void ev_waits(const ev_loop *l, uint64_t *waits, uint64_t *caught);

/* What busy polling did so far (readable from any thread). */
typedef struct ev_poll_stats {
    uint64_t polled;     /* turns whose events a poll found */
    uint64_t slept;      /* turns whose events came after sleeping, polling on */
    uint64_t backoffs;   /* times polling stopped, its thread waiting for a core */
} ev_poll_stats;
void ev_get_poll_stats(ev_loop *l, ev_poll_stats *out);

/* Nanoseconds the loop has spent waiting for events, asleep in epoll_wait
 * or busy polling: the rest of its thread's time went to its callbacks (or
 * to waiting for a core while in them). */
uint64_t ev_idle_ns(const ev_loop *l);

/* Wake the loop from any thread (async-signal-safe: one write(2)). */
void ev_wake(ev_loop *l);

/* Run until ev_stop. */
void ev_run(ev_loop *l);
/* Make ev_run return after the current turn. */
void ev_stop(ev_loop *l);

/* Milliseconds of CLOCK_MONOTONIC, cached at the start of each turn. */
int64_t ev_now_ms(const ev_loop *l);
/* Read the clock now (and refresh the cache). */
int64_t ev_clock_ms(ev_loop *l);

#endif
