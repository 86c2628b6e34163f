/* views.c -- snapshots of the served tables and the background thread that
 * swaps in new versions (views.h).
 *
 * Ownership: the views object owns the current snapshot (one reference);
 * each reader owns one reference to the snapshot it reads; a snapshot owns
 * one reference to each of its entries; an entry owns its store_view and
 * row cache. Entries of unchanged tables are shared by successive
 * snapshots. Only the poller (the background thread, or the caller of
 * views_poll) creates snapshots, so it reads v->cur without the lock; the
 * lock orders the pointer swap against readers taking a reference.
 */
#include "serving/views.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "serving/slog.h"
#include "storage/base/env.h"
#include "storage/store/schema.h"
#include "storage/store/table.h"

#define VIEWS_LIST_MS 1000
#define VIEWS_RETRY_MS 1000
#define VIEWS_SAMPLE_KEYS 1024
#define VIEWS_SAMPLE_KEY_MAX 256
#define VIEWS_SAMPLE_EVERY 16
/* The background thread's nice value while it warms a new version, so the
 * warm-up yields to the workers serving requests when the cores are busy.
 * Retiring a version runs at normal priority: it frees memory under the
 * allocator's and the kernel's locks, and a thread preempted while holding
 * them would stall the workers waiting on them. */
#define VIEWS_WARM_NICE 10

struct views_entry {
    _Atomic long refs;
    views *v;
    struct views_entry *grave_next;   /* retired, waiting for the poller to close it */
    char name[SCHEMA_NAME_MAX + 1];
    store_view *view;
    uint64_t version;
    rowcache *rows;                /* NULL: no row cache (disabled, or a TTL table) */
    /* The row cache's hits and misses at the last poll, and between the two
     * polls before it (the poller's alone). */
    uint64_t polled_hits, polled_misses;
    uint64_t recent_hits, recent_misses;
    /* Without a row cache, a sample of requested rows to warm the next version. */
    pthread_mutex_t sample_mu;
    kbuf *sample;                  /* VIEWS_SAMPLE_KEYS slots */
    size_t sample_next, sample_count;
};

typedef struct views_snapshot {
    _Atomic long refs;
    uint64_t gen;
    views_entry **entries;         /* sorted by name */
    size_t count;
} views_snapshot;

typedef struct views_state {
    views_table_info info;
    int64_t retry_at_ms;           /* monotonic: next open attempt after a failure */
} views_state;

struct views {
    char data_dir[PATH_MAX];
    views_options opt;
    block_cache *cache;
    kiln_speed *speed;             /* NULL: read-only */
    rowcache_pool *pool;
    pthread_mutex_t mu;            /* cur, states */
    views_snapshot *cur;
    _Atomic uint64_t gen;
    _Atomic uint64_t swaps;
    views_state *states;           /* sorted by name, one per table ever seen */
    size_t nstates;
    int64_t listed_ms;
    views_ctx *warm_ctx;           /* the poller's read scratch */
    uint64_t lent;                 /* block cache room lent to the row caches (poller's) */
    pthread_mutex_t grave_mu;
    views_entry *grave;            /* entries no one references any more */
    pthread_t thread;
    int running;
    pthread_mutex_t stop_mu;
    pthread_cond_t stop_cv;
    atomic_int stop;               /* set under stop_mu; a warm-up reads it to stop early */
    atomic_int relist;             /* views_wake: list the tables at the next poll */
};

struct views_reader {
    views *v;
    views_snapshot *snap;
    uint64_t gen;
    views_ctx *ctx;                /* attached: reset when the snapshot changes */
};

struct views_ctx {
    store_row_buf *buf;
    kbuf img;
    kiln_cell *cells;
    size_t cap;
    kiln_cell *picked;
    size_t picked_cap;
    unsigned sample_tick;
};

static void views_ctx_reset(views_ctx *c);
static int views_entry_has_writes(const views_entry *e);

static int64_t
views_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double
views_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t
views_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
views_options_init(views_options *o)
{
    memset(o, 0, sizeof *o);
    o->block_cache_bytes = (size_t)768 << 20;
    o->row_cache_bytes = (size_t)256 << 20;
    o->poll_ms = VIEWS_POLL_MS_DEFAULT;
    o->warm_ms = VIEWS_WARM_MS_DEFAULT;
    o->warm_keys = VIEWS_WARM_KEYS_DEFAULT;
    o->prefetch_ms = VIEWS_PREFETCH_MS_DEFAULT;
}

/* ------------------------------------------------------------------ entries */

static int
views_schema_has_ttl(const kiln_schema *s)
{
    for (size_t i = 0; i < s->family_count; i++) {
        if (s->families[i].ttl_s < SCHEMA_TTL_FOREVER)
            return 1;
    }
    return 0;
}

static views_entry *
views_entry_new(views *v, const char *name, store_view *sv)
{
    views_entry *e = kiln_calloc(1, sizeof *e);
    atomic_init(&e->refs, 1);
    e->v = v;
    snprintf(e->name, sizeof e->name, "%s", name);
    e->view = sv;
    e->version = store_view_version(sv);
    if (!views_schema_has_ttl(store_view_schema(sv)))
        e->rows = rowcache_new(v->pool);
    pthread_mutex_init(&e->sample_mu, NULL);
    if (e->rows == NULL)
        e->sample = kiln_calloc(VIEWS_SAMPLE_KEYS, sizeof *e->sample);
    return e;
}

static void
views_entry_ref(views_entry *e)
{
    atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
}

static void
views_entry_destroy(views_entry *e)
{
    store_view_unref(e->view);
    rowcache_free(e->rows);
    if (e->sample != NULL) {
        for (size_t i = 0; i < VIEWS_SAMPLE_KEYS; i++)
            buf_free(&e->sample[i]);
        free(e->sample);
    }
    pthread_mutex_destroy(&e->sample_mu);
    free(e);
}

/* Drop a reference. The last one hands the entry to the poller, which
 * closes it (views_bury): unmapping a large row cache and closing files
 * must not stall a worker's connections. */
static void
views_entry_unref(views_entry *e)
{
    if (e == NULL || atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1)
        return;
    views *v = e->v;
    pthread_mutex_lock(&v->grave_mu);
    e->grave_next = v->grave;
    v->grave = e;
    pthread_mutex_unlock(&v->grave_mu);
}

/* Close the retired entries. */
static void
views_bury(views *v)
{
    pthread_mutex_lock(&v->grave_mu);
    views_entry *e = v->grave;
    v->grave = NULL;
    pthread_mutex_unlock(&v->grave_mu);
    while (e != NULL) {
        views_entry *next = e->grave_next;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        char name[sizeof e->name];
        memcpy(name, e->name, sizeof name);
        unsigned long long version = (unsigned long long)e->version;
        views_entry_destroy(e);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        slog_info("table %s: version %llu closed in %.1f ms", name, version,
                  (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
        e = next;
    }
}

static void
views_entry_sample(views_entry *e, const uint8_t *row, size_t n)
{
    if (e->sample == NULL || n > VIEWS_SAMPLE_KEY_MAX)
        return;
    pthread_mutex_lock(&e->sample_mu);
    kbuf *slot = &e->sample[e->sample_next];
    buf_reset(slot);
    buf_append(slot, row, n);
    e->sample_next = (e->sample_next + 1) % VIEWS_SAMPLE_KEYS;
    if (e->sample_count < VIEWS_SAMPLE_KEYS)
        e->sample_count++;
    pthread_mutex_unlock(&e->sample_mu);
}

/* The keys to warm a successor of e with (4-byte LE length + bytes each). */
static size_t
views_entry_hot_keys(views_entry *e, size_t max, kbuf *out)
{
    if (e->rows != NULL)
        return rowcache_hot_keys(e->rows, max, out);
    size_t k = 0;
    pthread_mutex_lock(&e->sample_mu);
    for (size_t i = 0; i < e->sample_count && k < max; i++, k++) {
        size_t at = (e->sample_next + VIEWS_SAMPLE_KEYS - 1 - i) % VIEWS_SAMPLE_KEYS;
        uint32_t n = (uint32_t)e->sample[at].len;
        uint8_t len[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
        buf_append(out, len, 4);
        buf_append(out, e->sample[at].data, n);
    }
    pthread_mutex_unlock(&e->sample_mu);
    return k;
}

const char *
views_entry_name(const views_entry *e)
{
    return e->name;
}

uint64_t
views_entry_version(const views_entry *e)
{
    return e->version;
}

store_view *
views_entry_view(const views_entry *e)
{
    return e->view;
}

const kiln_schema *
views_entry_schema(const views_entry *e)
{
    return store_view_schema(e->view);
}

/* ------------------------------------------------------------------ snapshots */

static void
views_snapshot_unref(views_snapshot *s)
{
    if (s == NULL || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (size_t i = 0; i < s->count; i++)
        views_entry_unref(s->entries[i]);
    free(s->entries);
    free(s);
}

/* Publish a snapshot of entries (references taken over). */
static void
views_publish(views *v, views_entry **entries, size_t count)
{
    views_snapshot *s = kiln_calloc(1, sizeof *s);
    atomic_init(&s->refs, 1);
    s->entries = entries;
    s->count = count;
    pthread_mutex_lock(&v->mu);
    views_snapshot *old = v->cur;
    s->gen = (old ? old->gen : 0) + 1;
    v->cur = s;
    atomic_store_explicit(&v->gen, s->gen, memory_order_release);
    pthread_mutex_unlock(&v->mu);
    views_snapshot_unref(old);
}

/* ------------------------------------------------------------------ state */

static views_state *
views_state_find(views *v, const char *name)
{
    size_t lo = 0, hi = v->nstates;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(v->states[mid].info.name, name);
        if (c == 0)
            return &v->states[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* REQUIRES: v->mu. */
static views_state *
views_state_get(views *v, const char *name)
{
    views_state *st = views_state_find(v, name);
    if (st != NULL)
        return st;
    v->states = kiln_realloc(v->states, (v->nstates + 1) * sizeof *v->states);
    size_t at = 0;
    while (at < v->nstates && strcmp(v->states[at].info.name, name) < 0)
        at++;
    memmove(&v->states[at + 1], &v->states[at], (v->nstates - at) * sizeof *v->states);
    v->nstates++;
    st = &v->states[at];
    memset(st, 0, sizeof *st);
    snprintf(st->info.name, sizeof st->info.name, "%s", name);
    return st;
}

static void
views_note_error(views *v, const char *name, const kiln_err *err)
{
    pthread_mutex_lock(&v->mu);
    views_state *st = views_state_get(v, name);
    int same = strcmp(st->info.error, err->msg) == 0;
    snprintf(st->info.error, sizeof st->info.error, "%s", err->msg);
    st->retry_at_ms = views_mono_ms() + VIEWS_RETRY_MS;
    pthread_mutex_unlock(&v->mu);
    if (!same)
        slog_error("table %s: cannot open the current version (still serving the previous "
                   "one, retrying every %d ms): %s", name, VIEWS_RETRY_MS, err->msg);
}

static int
views_may_retry(views *v, const char *name)
{
    pthread_mutex_lock(&v->mu);
    views_state *st = views_state_find(v, name);
    int ok = st == NULL || st->retry_at_ms <= views_mono_ms();
    pthread_mutex_unlock(&v->mu);
    return ok;
}

static void
views_note_open(views *v, const views_entry *e, double open_ms, double warm_ms, uint64_t warmed,
                uint64_t paged, uint64_t prefetched, int swap)
{
    pthread_mutex_lock(&v->mu);
    views_state *st = views_state_get(v, e->name);
    st->info.version = e->version;
    st->info.opened_ms = views_wall_ms();
    st->info.last_open_ms = open_ms;
    st->info.last_warm_ms = warm_ms;
    st->info.last_warm_rows = warmed;
    st->info.last_page_bytes = paged;
    st->info.last_prefetch_bytes = prefetched;
    st->info.error[0] = '\0';
    st->retry_at_ms = 0;
    if (swap)
        st->info.swaps++;
    pthread_mutex_unlock(&v->mu);
}

/* ------------------------------------------------------------------ open, poll */

kiln_status
views_open(const char *data_dir, const views_options *o, views **out, kiln_err *err)
{
    *out = NULL;
    if (strlen(data_dir) >= PATH_MAX)
        return status_set(err, KILN_INVALID, "%s: path too long", data_dir);
    views *v = kiln_calloc(1, sizeof *v);
    snprintf(v->data_dir, sizeof v->data_dir, "%s", data_dir);
    v->opt = *o;
    if (v->opt.poll_ms <= 0)
        v->opt.poll_ms = VIEWS_POLL_MS_DEFAULT;
    v->cache = block_cache_new(o->block_cache_bytes);
    v->pool = o->row_cache_bytes ? rowcache_pool_new(o->row_cache_bytes) : NULL;
    if (o->speed) {
        kiln_status sst = speed_open(data_dir, v->cache, &o->speed_opt, &v->speed, err);
        if (sst != KILN_OK) {
            rowcache_pool_free(v->pool);
            block_cache_free(v->cache);
            free(v);
            return sst;
        }
    }
    pthread_mutex_init(&v->mu, NULL);
    pthread_mutex_init(&v->grave_mu, NULL);
    pthread_mutex_init(&v->stop_mu, NULL);
    pthread_cond_init(&v->stop_cv, NULL);
    atomic_init(&v->gen, 0);
    atomic_init(&v->swaps, 0);
    atomic_init(&v->relist, 0);
    v->warm_ctx = views_ctx_new();
    char **names;
    size_t n;
    kiln_status st = table_list(data_dir, &names, &n, err);
    if (st != KILN_OK) {
        views_close(v);
        return st;
    }
    table_list_free(names, n);
    v->listed_ms = -VIEWS_LIST_MS;
    views_poll(v);
    if (v->cur == NULL)
        views_publish(v, NULL, 0);
    *out = v;
    return KILN_OK;
}

void
views_close(views *v)
{
    if (v == NULL)
        return;
    views_stop(v);
    views_snapshot_unref(v->cur);
    views_bury(v);
    views_ctx_free(v->warm_ctx);
    free(v->states);
    speed_close(v->speed);
    rowcache_pool_free(v->pool);
    block_cache_free(v->cache);
    pthread_mutex_destroy(&v->mu);
    pthread_mutex_destroy(&v->grave_mu);
    pthread_mutex_destroy(&v->stop_mu);
    pthread_cond_destroy(&v->stop_cv);
    free(v);
}

/* Call fn with the path of every file of e's version; stops at the first
 * nonzero return. */
static void
views_each_file(views *v, views_entry *e, int (*fn)(const char *path, void *arg), void *arg)
{
    const manifest *m = store_view_manifest(e->view);
    if (m == NULL)
        return;
    char dir[PATH_MAX], path[PATH_MAX + MANIFEST_FILE_NAME_MAX + 16];
    for (size_t t = 0; t < m->table_count; t++) {
        const manifest_table *mt = &m->tables[t];
        if (table_dir_path(v->data_dir, mt->schema.name, dir, sizeof dir, NULL) != KILN_OK)
            continue;
        for (size_t r = 0; r < mt->region_count; r++)
            for (size_t f = 0; f < mt->regions[r].file_count; f++) {
                snprintf(path, sizeof path, "%s/%s/%s", dir, TABLE_FILES_DIR,
                         mt->regions[r].files[f].name);
                if (fn(path, arg))
                    return;
            }
    }
}

static int
views_advise_file(const char *path, void *arg)
{
    (void)arg;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
        close(fd);
    }
    return 0;
}

/* Ask the kernel to read every file of e's version into the page cache in
 * the background (POSIX_FADV_WILLNEED): what views_cache_files leaves to
 * the kernel when the files do not fit or its time ran out. */
static void
views_prefetch_files(views *v, views_entry *e)
{
    views_each_file(v, e, views_advise_file, NULL);
}

static int
views_sum_uncached(const char *path, void *arg)
{
    uint64_t n = 0;
    if (env_uncached_bytes(path, &n, NULL) == KILN_OK)
        *(uint64_t *)arg += n;
    return 0;
}

/* The end of a warm-up step: a time (views_mono_s), or the server stopping. */
typedef struct views_deadline {
    views *v;
    double at;
} views_deadline;

static views_deadline
views_deadline_in(views *v, long ms)
{
    return (views_deadline){v, views_mono_s() + (double)ms / 1000.0};
}

static int
views_past_deadline(void *arg)
{
    views_deadline *d = arg;
    return atomic_load_explicit(&d->v->stop, memory_order_relaxed) || views_mono_s() > d->at;
}

typedef struct views_cache_walk {
    views_deadline *d;
    uint64_t read;
} views_cache_walk;

static int
views_cache_one(const char *path, void *arg)
{
    views_cache_walk *w = arg;
    uint64_t n = 0;
    kiln_err err;
    status_clear(&err);
    if (env_cache_file(path, views_past_deadline, w->d, &n, &err) != KILN_OK)
        slog_error("page cache warm-up: %s", err.msg);   /* the requests will see it too */
    w->read += n;
    return views_past_deadline(w->d);
}

/* Read the pages of e's version's files that are not in the page cache yet,
 * with blocking reads, within the prefetch time, when they fit in half the
 * memory the system has available: a worker turning to the new version then
 * never waits on the disk for a file page. (Files loaded with --move are only
 * what the page cache still holds of the job's output; a readahead started
 * with POSIX_FADV_WILLNEED would put pages in the cache that mincore counts
 * as present while their reads are still under way, so none is started
 * first.) Returns the bytes read. */
static uint64_t
views_cache_files(views *v, views_entry *e)
{
    if (v->opt.prefetch_ms <= 0)
        return 0;
    uint64_t absent = 0;
    views_each_file(v, e, views_sum_uncached, &absent);
    if (absent == 0)
        return 0;
    uint64_t avail = env_mem_available();
    if (avail != 0 && absent > avail / 2) {
        slog_info("table %s: version %llu has %.1f MiB of file pages out of memory, more than "
                  "half the %.1f MiB available: left to the readahead", e->name,
                  (unsigned long long)e->version, (double)absent / 1048576.0,
                  (double)avail / 1048576.0);
        views_prefetch_files(v, e);
        return 0;
    }
    views_deadline d = views_deadline_in(v, v->opt.prefetch_ms);
    views_cache_walk w = {&d, 0};
    views_each_file(v, e, views_cache_one, &w);
    if (views_past_deadline(&d))
        views_prefetch_files(v, e);   /* the rest in the background */
    return w.read;
}

/* Note e's row cache hits and misses since the last poll. */
static void
views_entry_note_hits(views_entry *e)
{
    if (e->rows == NULL)
        return;
    rowcache_stats rs;
    rowcache_get_stats(e->rows, &rs);
    e->recent_hits = rs.hits - e->polled_hits;
    e->recent_misses = rs.misses - e->polled_misses;
    e->polled_hits = rs.hits;
    e->polled_misses = rs.misses;
}

/* 1 if old's requests since the last poll were answered from its row cache
 * at least as often as from its blocks: its cached blocks are then cold, and
 * worth more as room for its successor's than kept for the requests that
 * still miss. (Over the version's whole life the misses of its first reads
 * would outweigh a row cache that now answers nearly everything.) */
static int
views_blocks_cold(const views_entry *old)
{
    return old->rows != NULL && old->recent_hits > 0 && old->recent_hits >= old->recent_misses;
}

/* Read the data blocks of e's version into the block cache (at most half of
 * it), as many as fit: requests after the swap then find the new files'
 * blocks decoded in memory, whether the old version served from its blocks
 * or from the row cache (whose rows the new version does not inherit). When
 * the old version had (most of) its blocks cached, their size scaled to the
 * new version's data estimates what the new blocks take decoded (the
 * trailers give the raw size only), and no more is read.
 *
 * The room is the cache's free room, plus the old version's blocks when its
 * row cache answered most of its requests: those are dropped first. Nothing
 * else is ever evicted for it: another table's blocks, or the blocks of an
 * old version that serves from them, are what live requests use, and pushing
 * them out would only move the misses to before the swap. Returns the bytes
 * added. */
static uint64_t
views_prefetch_blocks(views *v, views_entry *old, views_entry *e)
{
    if (old == NULL || v->opt.prefetch_ms <= 0)
        return 0;
    block_cache_stats bs;
    block_cache_get_stats(v->cache, &bs);
    uint64_t cap = block_cache_capacity(v->cache);
    uint64_t free_bytes = bs.bytes_used < cap ? cap - bs.bytes_used : 0;
    uint64_t had = store_view_cached_bytes(old->view);
    uint64_t spare = views_blocks_cold(old) ? had : 0;
    uint64_t need = store_view_data_bytes(e->view);
    uint64_t old_need = store_view_data_bytes(old->view);
    uint64_t budget = free_bytes + spare < cap / 2 ? free_bytes + spare : cap / 2;
    if (had != 0 && old_need != 0 && had >= old_need / 2) {
        uint64_t want = (uint64_t)((double)had * ((double)need / (double)old_need) * 1.125);
        if (want < budget)
            budget = want;
    }
    if (budget < need / 8)
        return 0;   /* too little room to matter */
    if (budget > free_bytes) {
        uint64_t dropped = store_view_drop_cached(old->view, e->view, budget - free_bytes);
        slog_info("table %s: %.1f MiB of version %llu's blocks dropped for its successor's "
                  "(its row cache answered most requests)", e->name,
                  (double)dropped / 1048576.0, (unsigned long long)old->version);
    }
    uint64_t start = budget;
    views_deadline d = views_deadline_in(v, v->opt.prefetch_ms);
    kiln_err err;
    status_clear(&err);
    if (store_view_prefetch(e->view, &budget, views_past_deadline, &d, &err) != KILN_OK)
        slog_error("table %s: prefetch of version %llu: %s", e->name,
                   (unsigned long long)e->version, err.msg);
    return start - budget;
}

/* 1 if e's row cache should be filled by reading e's version in key order
 * rather than by replaying old's hot rows one Get each: old's row cache
 * answered most of its requests and holds more rows than a replay takes.
 * A read in key order reads each data block once and searches no index. */
static int
views_fills_rows(views *v, views_entry *old, views_entry *e)
{
    if (old == NULL || old->rows == NULL || e->rows == NULL || v->opt.prefetch_ms <= 0 ||
        !views_blocks_cold(old) || views_entry_has_writes(e))
        return 0;
    rowcache_stats rs;
    rowcache_get_stats(old->rows, &rs);
    return rs.entries > v->opt.warm_keys;
}

/* Rows a fill stages between reading a row and caching it, while the hash
 * bucket it goes to is loaded (rowcache_prefetch). */
#define VIEWS_FILL_AHEAD 16
/* A fill looks up every row in the old cache until, over VIEWS_FILL_WINDOW
 * lookups, at most one in 32 was missing; then only one row in
 * VIEWS_FILL_SAMPLE (views.h), caching the others unseen, until a sampled
 * row is missing. */
#define VIEWS_FILL_WINDOW 2048

typedef struct views_fill_slot {
    kbuf key, img;
} views_fill_slot;

/* Fill e's row cache with the rows old's row cache holds, reading e's
 * version once in key order through a view of its own without a block
 * cache (the blocks read are not wanted once their rows are cached). Old's
 * blocks are dropped first (its row cache answers its requests). When the
 * pool has too little room for a second copy of old's rows, the block cache
 * lends it the rest of what they take, from its free room and then from its
 * least recently used blocks, keeping at least a quarter of its budget,
 * until the swap is done (views_repay): both versions' rows then fit in the
 * memory the server was given. Stops at the end of the version, when the
 * pool's room is used up, or at the prefetch time. *complete is set when
 * every row was looked at. Returns the rows cached. */
static uint64_t
views_fill_rows(views *v, views_entry *old, views_entry *e, int *complete)
{
    *complete = 0;
    rowcache_stats os;
    rowcache_get_stats(old->rows, &os);
    (void)store_view_drop_cached(old->view, e->view, UINT64_MAX);
    uint64_t limit = rowcache_pool_limit(v->pool), used = rowcache_pool_used(v->pool);
    uint64_t room = limit > used ? limit - used : 0;
    uint64_t want = os.bytes + os.bytes / 16;   /* the new rows may be larger */
    size_t cap = block_cache_capacity(v->cache);
    size_t lent = want > room ? block_cache_lend(v->cache, (size_t)(want - room), cap / 4) : 0;
    rowcache_pool_lend(v->pool, lent);
    v->lent += lent;
    if (lent > 0)
        slog_info("table %s: %.1f MiB of the block cache lent to the row cache for version "
                  "%llu's rows", e->name, (double)lent / 1048576.0,
                  (unsigned long long)e->version);

    kiln_err err;
    status_clear(&err);
    store_view *sv;
    store_scan *scan = NULL;
    if (store_view_open_version(v->data_dir, e->name, e->version, NULL, &sv, &err) == KILN_OK) {
        store_scan_opts so;
        store_scan_opts_init(&so);
        if (store_scan_open(sv, &so, &scan, &err) != KILN_OK)
            scan = NULL;
        store_view_unref(sv);   /* the scan holds it */
    }
    if (scan == NULL) {
        slog_error("table %s: row cache fill of version %llu: %s", e->name,
                   (unsigned long long)e->version, err.msg);
        return 0;
    }
    views_deadline d = views_deadline_in(v, v->opt.prefetch_ms);
    limit = rowcache_pool_limit(v->pool);
    uint64_t seen = 0, staged = 0, checked = 0, held = 0;
    int check_all = 1;
    views_fill_slot ring[VIEWS_FILL_AHEAD];
    memset(ring, 0, sizeof ring);
    for (;;) {
        store_row r;
        int has_row = 0;
        if (store_scan_next(scan, &r, &has_row, &err) != KILN_OK) {
            slog_error("table %s: row cache fill of version %llu: %s", e->name,
                       (unsigned long long)e->version, err.msg);
            break;
        }
        if (!has_row) {
            *complete = 1;
            break;
        }
        if ((++seen & 1023) == 0 &&
            (views_past_deadline(&d) || rowcache_pool_used(v->pool) >= limit))
            break;
        if (check_all || seen % VIEWS_FILL_SAMPLE == 0) {
            int in = rowcache_contains(old->rows, r.row.p, r.row.n);
            held += (uint64_t)in;
            if (++checked == VIEWS_FILL_WINDOW) {
                check_all = held * 32 < checked * 31;
                checked = held = 0;
            }
            if (!in) {
                check_all = 1;   /* a sampled row missing: look up every row again */
                continue;
            }
        }
        views_fill_slot *slot = &ring[staged++ % VIEWS_FILL_AHEAD];
        if (staged > VIEWS_FILL_AHEAD)   /* rows of a scan are distinct */
            rowcache_put_new(e->rows, slot->key.data, slot->key.len, slot->img.data,
                             slot->img.len, ROWCACHE_NO_EXPIRY);
        buf_reset(&slot->key);
        buf_append(&slot->key, r.row.p, r.row.n);
        rowcache_encode(&r, &slot->img);
        rowcache_prefetch(e->rows, r.row.p, r.row.n, 0);
    }
    uint64_t first = staged > VIEWS_FILL_AHEAD ? staged - VIEWS_FILL_AHEAD : 0;
    for (uint64_t i = first; i < staged; i++) {
        views_fill_slot *slot = &ring[i % VIEWS_FILL_AHEAD];
        rowcache_put_new(e->rows, slot->key.data, slot->key.len, slot->img.data, slot->img.len,
                         ROWCACHE_NO_EXPIRY);
    }
    for (size_t i = 0; i < VIEWS_FILL_AHEAD; i++) {
        buf_free(&ring[i].key);
        buf_free(&ring[i].img);
    }
    store_scan_close(scan);
    return staged;
}

/* Give back the block cache room lent while new versions' row caches
 * filled, once the versions they replace are retired. */
static void
views_repay(views *v)
{
    if (v->lent == 0)
        return;
    rowcache_pool_repay(v->pool, v->lent);
    block_cache_repay(v->cache);
    v->lent = 0;
}

/* Replay old's hot rows against e within the time budget, but for those
 * e's row cache holds already. */
static uint64_t
views_warm(views *v, views_entry *old, views_entry *e)
{
    if (old == NULL || v->opt.warm_ms <= 0 || v->opt.warm_keys == 0)
        return 0;
    kbuf keys = KBUF_INIT;
    size_t n = views_entry_hot_keys(old, v->opt.warm_keys, &keys);
    views_deadline d = views_deadline_in(v, v->opt.warm_ms);
    uint64_t done = 0;
    size_t pos = 0;
    kiln_err err;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = keys.data + pos;
        uint32_t kl = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                      (uint32_t)p[3] << 24;
        pos += 4 + (size_t)kl;
        if (e->rows != NULL && rowcache_contains(e->rows, p + 4, kl))
            continue;
        store_row r;
        status_clear(&err);
        if (views_get(e, v->warm_ctx, p + 4, kl, NULL, &r, &err) != KILN_OK)
            break;   /* a bad block: the requests will report it */
        done++;
        if ((done & 63) == 0 && views_past_deadline(&d))
            break;
    }
    buf_free(&keys);
    views_ctx_reset(v->warm_ctx);
    return done;
}

typedef struct views_warmup {
    views *v;
    views_entry *old, *e;
    uint64_t paged, prefetched, filled, warmed;
    double t_paged, t_prefetched;
    int own_thread;
} views_warmup;

/* Prefetch and warm e, at a lower priority than the workers. */
static void *
views_warmup_main(void *arg)
{
    views_warmup *w = arg;
    /* Linux applies a nice value to the one thread whose id it is given. */
    if (w->own_thread)
        (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), VIEWS_WARM_NICE);
    w->paged = views_cache_files(w->v, w->e);
    w->t_paged = views_mono_s();
    if (w->old != NULL && w->old->rows != NULL) {
        /* The new version's rows will fill its cache as the old one's did. */
        rowcache_stats rs;
        rowcache_get_stats(w->old->rows, &rs);
        rowcache_reserve(w->e->rows, (size_t)rs.entries);
        rowcache_expect_bytes(w->e->rows, rs.bytes);
    }
    rowcache_set_warming(w->e->rows, 1);
    int complete = 0;
    if (views_fills_rows(w->v, w->old, w->e))
        w->filled = views_fill_rows(w->v, w->old, w->e, &complete);
    else
        w->prefetched = views_prefetch_blocks(w->v, w->old, w->e);
    w->t_prefetched = views_mono_s();
    if (!complete)
        w->warmed = views_warm(w->v, w->old, w->e);
    rowcache_set_warming(w->e->rows, 0);   /* before anyone else sees e */
    return NULL;
}

static int
views_name_cmp(const void *a, const void *b)
{
    const views_entry *x = *(views_entry *const *)a, *y = *(views_entry *const *)b;
    return strcmp(x->name, y->name);
}

/* Open name's current version as a new entry warmed from old (may be NULL).
 * NULL if it failed (reported). */
static views_entry *
views_open_entry(views *v, const char *name, views_entry *old)
{
    double t0 = views_mono_s();
    store_view *sv;
    kiln_err err;
    status_clear(&err);
    kiln_status st = v->speed != NULL ? speed_view(v->speed, name, &sv, &err)
                                      : store_view_open(v->data_dir, name, v->cache, &sv, &err);
    if (st != KILN_OK) {
        if (err.code == KILN_NOT_FOUND && old == NULL)
            return NULL;   /* vanished between the listing and the open */
        views_note_error(v, name, &err);
        return NULL;
    }
    views_entry *e = views_entry_new(v, name, sv);
    double t1 = views_mono_s();
    views_warmup w = {v, old, e, 0, 0, 0, 0, t1, t1, 1};
    pthread_t th;
    /* A swap warms on a thread of its own, so that its nice value goes with
     * it; a first open has nothing to warm from. */
    if (old != NULL) {
        if (pthread_create(&th, NULL, views_warmup_main, &w) == 0) {
            pthread_join(th, NULL);
        } else {
            w.own_thread = 0;
            views_warmup_main(&w);
        }
    }
    double tp = w.t_paged, t2 = w.t_prefetched, t3 = views_mono_s();
    uint64_t prefetched = w.prefetched, warmed = w.filled + w.warmed;
    views_note_open(v, e, (t1 - t0) * 1e3, (t3 - t1) * 1e3, warmed, w.paged, prefetched,
                    old != NULL);
    if (old != NULL) {
        char step[96];   /* what the warm-up did between the file pages and the replay */
        if (w.filled > 0)
            snprintf(step, sizeof step, "row cache filled with %llu rows in key order",
                     (unsigned long long)w.filled);
        else
            snprintf(step, sizeof step, "%.1f MiB of blocks prefetched",
                     (double)prefetched / 1048576.0);
        slog_info("table %s: version %llu -> %llu (opened in %.1f ms, %.1f MiB of file pages "
                  "read in %.1f ms, %s in %.1f ms, %llu hot rows warmed in %.1f ms)", name,
                  (unsigned long long)old->version, (unsigned long long)e->version,
                  (t1 - t0) * 1e3, (double)w.paged / 1048576.0, (tp - t1) * 1e3, step,
                  (t2 - tp) * 1e3, (unsigned long long)w.warmed, (t3 - t2) * 1e3);
    } else {
        slog_info("table %s: serving version %llu (opened in %.1f ms)", name,
                  (unsigned long long)e->version, (t1 - t0) * 1e3);
    }
    return e;
}

/* 1 if e still serves its table's current read view: the same version
 * (and, with a speed layer, the same memstores). */
static int
views_entry_is_current(views *v, const views_entry *e)
{
    if (v->speed == NULL)
        return store_view_is_current(e->view);
    store_view *sv;
    kiln_err err;
    status_clear(&err);
    if (speed_view(v->speed, e->name, &sv, &err) != KILN_OK)
        return 0;   /* reopened, and the failure reported, by the caller */
    int same = sv == e->view;
    store_view_unref(sv);
    return same;
}

size_t
views_poll(views *v)
{
    views_bury(v);
    views_snapshot *cur = v->cur;   /* only the poller replaces it */
    size_t oldn = cur ? cur->count : 0;
    int changed = 0;
    size_t swapped = 0;
    views_entry **next = NULL;
    size_t count = 0;
    int64_t now = views_mono_ms();
    if (atomic_exchange(&v->relist, 0) || now - v->listed_ms >= VIEWS_LIST_MS) {
        v->listed_ms = now;
        char **names;
        size_t n;
        kiln_err err;
        status_clear(&err);
        if (table_list(v->data_dir, &names, &n, &err) != KILN_OK) {
            slog_error("%s", err.msg);
        } else {
            next = kiln_calloc(n ? n : 1, sizeof *next);
            for (size_t i = 0; i < n; i++) {
                views_entry *have = NULL;
                for (size_t k = 0; k < oldn && have == NULL; k++) {
                    if (strcmp(cur->entries[k]->name, names[i]) == 0)
                        have = cur->entries[k];
                }
                if (have != NULL) {
                    views_entry_ref(have);
                    next[count++] = have;
                } else if (views_may_retry(v, names[i])) {
                    views_entry *e = views_open_entry(v, names[i], NULL);
                    if (e != NULL) {
                        next[count++] = e;
                        changed = 1;
                    }
                }
            }
            if (count != oldn)
                changed = 1;
            table_list_free(names, n);
        }
    }
    if (next == NULL) {
        next = kiln_calloc(oldn ? oldn : 1, sizeof *next);
        for (size_t k = 0; k < oldn; k++) {
            views_entry_ref(cur->entries[k]);
            next[count++] = cur->entries[k];
        }
    }
    /* Entries swapped out: their row caches retire once the new ones are
     * published (the poller buries the entries, no one else frees them). */
    views_entry **out = kiln_calloc(count ? count : 1, sizeof *out);
    for (size_t i = 0; i < count; i++) {
        views_entry *e = next[i];
        views_entry_note_hits(e);
        if (!views_may_retry(v, e->name) || views_entry_is_current(v, e))
            continue;
        views_entry *ne = views_open_entry(v, e->name, e);
        if (ne == NULL)
            continue;
        next[i] = ne;
        out[swapped++] = e;
        changed = 1;
    }
    if (!changed && cur != NULL) {
        for (size_t i = 0; i < count; i++)
            views_entry_unref(next[i]);
        free(next);
        free(out);
        return 0;
    }
    qsort(next, count, sizeof *next, views_name_cmp);
    views_publish(v, next, count);
    for (size_t i = 0; i < swapped; i++) {
        rowcache_retire(out[i]->rows);
        views_entry_unref(out[i]);
    }
    views_repay(v);
    free(out);
    atomic_fetch_add_explicit(&v->swaps, swapped, memory_order_relaxed);
    return swapped;
}

static void *
views_thread(void *arg)
{
    views *v = arg;
    pthread_mutex_lock(&v->stop_mu);
    while (!atomic_load(&v->stop)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long ns = ts.tv_nsec + (v->opt.poll_ms % 1000) * 1000000L;
        ts.tv_sec += v->opt.poll_ms / 1000 + ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&v->stop_cv, &v->stop_mu, &ts);
        if (atomic_load(&v->stop))
            break;
        pthread_mutex_unlock(&v->stop_mu);
        views_poll(v);
        pthread_mutex_lock(&v->stop_mu);
    }
    pthread_mutex_unlock(&v->stop_mu);
    return NULL;
}

void
views_wake(views *v)
{
    atomic_store(&v->relist, 1);
    pthread_mutex_lock(&v->stop_mu);
    pthread_cond_signal(&v->stop_cv);
    pthread_mutex_unlock(&v->stop_mu);
}

kiln_status
views_start(views *v, kiln_err *err)
{
    if (v->running)
        return KILN_OK;
    atomic_store(&v->stop, 0);
    int rc = pthread_create(&v->thread, NULL, views_thread, v);
    if (rc != 0)
        return status_set_errno(err, rc, "views: pthread_create");
    v->running = 1;
    return KILN_OK;
}

void
views_stop(views *v)
{
    if (!v->running)
        return;
    pthread_mutex_lock(&v->stop_mu);
    atomic_store(&v->stop, 1);
    pthread_cond_signal(&v->stop_cv);
    pthread_mutex_unlock(&v->stop_mu);
    pthread_join(v->thread, NULL);
    v->running = 0;
}

/* A server-side error's text for the client: paths under the data
 * directory relative to it, any other absolute path cut to its last
 * component (the full text goes to the log). */
void
views_client_text(const views *v, const char *msg, char *out, size_t cap)
{
    const char *data_dir = views_data_dir(v);
    size_t dl = strlen(data_dir), o = 0;
    while (dl > 1 && data_dir[dl - 1] == '/')
        dl--;
    for (size_t i = 0; msg[i] != '\0' && o + 1 < cap;) {
        int starts = msg[i] == '/' && (i == 0 || strchr(" '(\"=", msg[i - 1]) != NULL);
        if (!starts) {
            out[o++] = msg[i++];
            continue;
        }
        size_t end = i;
        while (msg[end] != '\0' && strchr(" ':,)\"", msg[end]) == NULL)
            end++;
        size_t from = i;
        if (end - i > dl && strncmp(msg + i, data_dir, dl) == 0 && msg[i + dl] == '/') {
            from = i + dl + 1;
        } else {
            for (size_t k = i; k < end; k++)
                if (msg[k] == '/')
                    from = k + 1;
        }
        for (size_t k = from; k < end && o + 1 < cap; k++)
            out[o++] = msg[k];
        i = end;
    }
    out[o] = '\0';
}

kiln_speed *
views_speed(views *v)
{
    return v->speed;
}

const char *
views_data_dir(const views *v)
{
    return v->data_dir;
}

block_cache *
views_block_cache(views *v)
{
    return v->cache;
}

rowcache_pool *
views_rowcache_pool(views *v)
{
    return v->pool;
}

uint64_t
views_swaps(const views *v)
{
    return atomic_load_explicit(&((views *)v)->swaps, memory_order_relaxed);
}

size_t
views_table_infos(views *v, views_table_info **out)
{
    pthread_mutex_lock(&v->mu);
    views_snapshot *s = v->cur;
    size_t n = s ? s->count : 0;
    *out = kiln_calloc(n ? n : 1, sizeof **out);
    for (size_t i = 0; i < n; i++) {
        views_state *st = views_state_find(v, s->entries[i]->name);
        if (st != NULL)
            (*out)[i] = st->info;
        snprintf((*out)[i].name, sizeof (*out)[i].name, "%s", s->entries[i]->name);
        (*out)[i].version = s->entries[i]->version;
    }
    pthread_mutex_unlock(&v->mu);
    return n;
}

/* ------------------------------------------------------------------ readers */

views_reader *
views_reader_new(views *v)
{
    views_reader *r = kiln_calloc(1, sizeof *r);
    r->v = v;
    views_reader_refresh(r);
    return r;
}

void
views_reader_free(views_reader *r)
{
    if (r == NULL)
        return;
    views_snapshot_unref(r->snap);
    free(r);
}

void
views_reader_refresh(views_reader *r)
{
    uint64_t g = atomic_load_explicit(&r->v->gen, memory_order_acquire);
    if (r->snap != NULL && g == r->gen)
        return;
    pthread_mutex_lock(&r->v->mu);
    views_snapshot *s = r->v->cur;
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&r->v->mu);
    if (r->ctx != NULL)
        views_ctx_reset(r->ctx);
    views_snapshot_unref(r->snap);
    r->snap = s;
    r->gen = s->gen;
}

void
views_reader_attach(views_reader *r, views_ctx *c)
{
    r->ctx = c;
}

views_entry *
views_reader_find(views_reader *r, const char *name, size_t n)
{
    char raw[SCHEMA_NAME_MAX + 1], canon[SCHEMA_NAME_MAX + 1];
    if (n == 0 || n > SCHEMA_NAME_MAX || memchr(name, '\0', n) != NULL)
        return NULL;
    memcpy(raw, name, n);
    raw[n] = '\0';
    if (schema_name_canon(raw, canon, NULL) != KILN_OK)
        return NULL;
    views_snapshot *s = r->snap;
    size_t lo = 0, hi = s->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(s->entries[mid]->name, canon);
        if (c == 0)
            return s->entries[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

size_t
views_reader_count(const views_reader *r)
{
    return r->snap->count;
}

views_entry *
views_reader_at(const views_reader *r, size_t i)
{
    return i < r->snap->count ? r->snap->entries[i] : NULL;
}

void
views_rowcache_totals(const views_reader *r, rowcache_stats *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < r->snap->count; i++) {
        rowcache_stats s;
        rowcache_get_stats(r->snap->entries[i]->rows, &s);
        out->hits += s.hits;
        out->misses += s.misses;
        out->inserts += s.inserts;
        out->evictions += s.evictions;
        out->entries += s.entries;
        out->bytes += s.bytes;
        out->mapped += s.mapped;
    }
}

/* ------------------------------------------------------------------ reads */

views_ctx *
views_ctx_new(void)
{
    views_ctx *c = kiln_calloc(1, sizeof *c);
    c->buf = store_row_buf_new();
    return c;
}

/* Drop the store's row buffer, and with it the view it references. */
static void
views_ctx_reset(views_ctx *c)
{
    store_row_buf_free(c->buf);
    c->buf = store_row_buf_new();
}

void
views_ctx_free(views_ctx *c)
{
    if (c == NULL)
        return;
    store_row_buf_free(c->buf);
    buf_free(&c->img);
    free(c->cells);
    free(c->picked);
    free(c);
}

static int
views_cell_wanted(const kiln_cell *cell, const store_row_opts *o)
{
    for (size_t i = 0; i < o->column_count; i++) {
        const store_column *col = &o->columns[i];
        size_t fl = strlen(col->family);
        if (fl != cell->family_len || memcmp(col->family, cell->family, fl) != 0)
            continue;
        if (col->qualifier == NULL)
            return 1;
        if (col->qualifier_len == cell->qualifier_len &&
            (col->qualifier_len == 0 ||
             memcmp(col->qualifier, cell->qualifier, col->qualifier_len) == 0))
            return 1;
    }
    return 0;
}

/* 1 while e's memstores hold online writes: its rows change under it, so
 * its row cache is bypassed (a flush brings a new entry and a new cache). */
static int
views_entry_has_writes(const views_entry *e)
{
    for (size_t i = 0; i < store_view_memstore_count(e->view); i++) {
        if (memstore_count(store_view_memstore(e->view, i)->ms) > 0)
            return 1;
    }
    return 0;
}

kiln_status
views_get(views_entry *e, views_ctx *c, const uint8_t *row, size_t n, const store_row_opts *o,
          store_row *out, kiln_err *err)
{
    store_row_opts dflt;
    if (o == NULL) {
        store_row_opts_init(&dflt);
        o = &dflt;
    }
    int cacheable = e->rows != NULL && o->max_versions <= 1 && o->ts_min == 0 &&
                    o->ts_max == INT64_MAX && o->now_ms == 0 && n > 0 &&
                    o->read_point == 0 && !views_entry_has_writes(e);
    const kiln_schema *schema = store_view_schema(e->view);
    for (size_t i = 0; cacheable && i < o->column_count; i++) {
        const char *f = o->columns[i].family;
        if (schema_find_family(schema, (const uint8_t *)f, strlen(f)) == NULL)
            cacheable = 0;   /* let the store report the unknown family */
    }
    if (!cacheable) {
        if (e->sample != NULL && (c->sample_tick++ % VIEWS_SAMPLE_EVERY) == 0)
            views_entry_sample(e, row, n);
        return store_view_get(e->view, row, n, o, c->buf, out, err);
    }
    kslice key = kslice_make(row, n);
    if (!rowcache_get(e->rows, row, n, 0, &c->img)) {
        store_row full;
        kiln_status st = store_view_get(e->view, row, n, NULL, c->buf, &full, err);
        if (st != KILN_OK)
            return st;
        rowcache_encode(&full, &c->img);
        rowcache_put(e->rows, row, n, c->img.data, c->img.len, ROWCACHE_NO_EXPIRY);
    }
    long cnt = rowcache_decode(c->img.data, c->img.len, key, &c->cells, &c->cap);
    if (cnt < 0)
        return status_set(err, KILN_INTERNAL, "table %s: malformed row cache image", e->name);
    out->row = key;
    if (o->column_count == 0) {
        out->cells = c->cells;
        out->count = (size_t)cnt;
        return KILN_OK;
    }
    if ((size_t)cnt > c->picked_cap) {
        c->picked_cap = (size_t)cnt;
        c->picked = kiln_realloc(c->picked, c->picked_cap * sizeof *c->picked);
    }
    size_t k = 0;
    for (long i = 0; i < cnt; i++) {
        if (views_cell_wanted(&c->cells[i], o))
            c->picked[k++] = c->cells[i];
    }
    out->cells = c->picked;
    out->count = k;
    return KILN_OK;
}

void
views_prefetch_row(views_entry *e, const uint8_t *row, size_t n, int step)
{
    if (e->rows == NULL || n == 0)
        return;
    rowcache_prefetch(e->rows, row, n, step);
}
