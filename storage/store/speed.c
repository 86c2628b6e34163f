/* speed.c -- the speed layer (speed.h): its tables, sequence numbers and the
 * read point, the read view with memstores, opening with replay and the
 * background thread. The write path is speed_write.c, flushes
 * speed_flush.c, compactions and splits speed_compact.c (speed_int.h).
 *
 * Per table, under its mutex `mu`: the last sequence handed out, the
 * active memstores (one per family, over every region; the view's regions
 * each read their own rows of them), the frozen ones waiting for or in a
 * flush, the plain view of the published version and the read view built
 * from them. A write holds `mu` while it takes its number, appends its log
 * record and adds its cells, so numbers, log order and memstore contents
 * agree; it syncs the log and then completes its number outside `mu`'s
 * critical step, and the read point moves over completed numbers in order
 * (a queue of pending writes, HBase's MVCC write queue).
 *
 * Merge order against files (manifest_file_rank): a bulk-loaded file of
 * version V ranks 4V, a flushed file of writes made over V 4V+1, frozen
 * memstores over V 4V+2, the active memstore over V 4V+3. When the table's
 * version changes under the speed layer (a load or a rollback by another
 * process), the active memstores are frozen and a flush is due, so every
 * memstore holds writes made over one version.
 */
#include "storage/store/speed.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/base/env.h"
#include "storage/store/manifest.h"
#include "storage/store/memstore.h"
#include "storage/store/speed_int.h"
#include "storage/store/table.h"
#include "storage/store/wal.h"

void
speed_options_init(speed_options *o)
{
    memset(o, 0, sizeof *o);
    o->memstore_flush_bytes = SPEED_FLUSH_BYTES_DEFAULT;
    o->flush_check_ms = 1000;
    o->compact_bytes_per_sec = SPEED_COMPACT_RATE_DEFAULT;
    o->compact_min_files = 3;
}

/* ------------------------------------------------------------------ tables */

memstore **
speed_new_memstores(size_t n)
{
    memstore **ms = kiln_calloc(n ? n : 1, sizeof *ms);
    for (size_t i = 0; i < n; i++)
        ms[i] = memstore_new(0);
    return ms;
}

void
speed_free_memstores(memstore **ms, size_t n)
{
    if (ms == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        memstore_unref(ms[i]);
    free(ms);
}

size_t
speed_memstores_cells(memstore *const *ms, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += memstore_count(ms[i]);
    return c;
}

size_t
speed_memstores_bytes(memstore *const *ms, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += memstore_bytes(ms[i]);
    return c;
}

/* Rebuild t->view from t->files and the memstores. REQUIRES: t->mu held. */
void
speed_rebuild_view(speed_table *t)
{
    size_t cap = t->nfam * (t->nfrozen + 1);
    store_view_mem *parts = kiln_calloc(cap ? cap : 1, sizeof *parts);
    size_t n = 0;
    for (size_t f = 0; f < t->nfam; f++)
        parts[n++] = (store_view_mem){t->active[f], f, t->active_base * 4 + 3, t->active_base};
    /* newest frozen first: of equal ranks the merge prefers the child added first */
    for (size_t k = t->nfrozen; k-- > 0;) {
        const speed_frozen *fz = &t->frozen[k];
        for (size_t f = 0; f < t->nfam; f++)
            parts[n++] = (store_view_mem){fz->ms[f], f, fz->base * 4 + 2, fz->base};
    }
    store_view *v = store_view_with_memstores(t->files, parts, n, t->clock);
    free(parts);
    store_view_unref(t->view);
    t->view = v;
}

uint64_t
speed_flushed_seq(const store_view *files)
{
    const manifest *m = store_view_manifest(files);
    return m != NULL ? m->flushed_seq : 0;
}

/* Freeze the active memstores (if they hold anything) and start new ones
 * over version `base`. REQUIRES: t->mu held. 0, or -1 when too many are
 * frozen already (the caller flushes first). */
int
speed_freeze(speed_table *t, uint64_t base)
{
    if (speed_memstores_cells(t->active, t->nfam) > 0) {
        if (t->nfrozen == SPEED_FROZEN_MAX)
            return -1;
        speed_frozen *fz = &t->frozen[t->nfrozen++];
        fz->ms = t->active;
        fz->base = t->active_base;
        fz->max_seq = t->seq;
        t->active = speed_new_memstores(t->nfam);
    }
    t->active_base = base;
    return 0;
}

/* Take files as the table's published version: drop the frozen memstores
 * its flushed sequence covers; a version made by someone else freezes the
 * active ones (their writes were made over the older version). REQUIRES:
 * t->mu held. Consumes the reference on files. */
void
speed_take_files(speed_table *t, store_view *files, int own)
{
    uint64_t flushed = speed_flushed_seq(files);
    size_t keep = 0;
    for (size_t k = 0; k < t->nfrozen; k++) {
        if (t->frozen[k].max_seq <= flushed)
            speed_free_memstores(t->frozen[k].ms, t->nfam);
        else
            t->frozen[keep++] = t->frozen[k];
    }
    t->nfrozen = keep;
    /* A version of someone else's (a load, a rollback) starts new memstores
     * over it; when too many are frozen already, writes go on over the old
     * base until a flush makes room. */
    if (!own)
        (void)speed_freeze(t, store_view_version(files));
    store_view_unref(t->files);
    t->files = files;
    if (flushed > t->seq)
        t->seq = flushed;
    speed_rebuild_view(t);
}

void
speed_take_published(kiln_speed *s, speed_table *t, uint64_t version, uint64_t parent)
{
    store_view *files;
    kiln_err e2;
    status_clear(&e2);
    if (store_view_open(s->data_dir, t->name, s->cache, &files, &e2) != KILN_OK)
        return;   /* the next refresh takes it */
    pthread_mutex_lock(&t->mu);
    if (store_view_version(files) >= store_view_version(t->files))
        speed_take_files(t, files,
                         (parent == 0 || parent == store_view_version(t->files)) &&
                             store_view_version(files) == version);
    else
        store_view_unref(files);
    pthread_mutex_unlock(&t->mu);
}

static speed_table *
speed_table_new(const char *canon, store_view *files)
{
    speed_table *t = kiln_calloc(1, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", canon);
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->advanced, NULL);
    pthread_mutex_init(&t->flush_mu, NULL);
    const kiln_schema *s = store_view_schema(files);
    t->nfam = s->family_count;
    t->active = speed_new_memstores(t->nfam);
    t->active_base = store_view_version(files);
    t->files = files;
    t->seq = speed_flushed_seq(files);
    t->clock = store_clock_new(t->seq);
    t->writable = s->salt_buckets == 0 && store_view_index_count(files) == 0;
    speed_rebuild_view(t);
    return t;
}

static void
speed_table_free(speed_table *t)
{
    store_view_unref(t->view);
    store_view_unref(t->files);
    speed_free_memstores(t->active, t->nfam);
    for (size_t k = 0; k < t->nfrozen; k++)
        speed_free_memstores(t->frozen[k].ms, t->nfam);
    store_clock_unref(t->clock);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->advanced);
    pthread_mutex_destroy(&t->flush_mu);
    free(t);
}

/* The table called name (opened on first use). */
kiln_status
speed_table_get(kiln_speed *s, const char *name, speed_table **out, kiln_err *err)
{
    char canon[SCHEMA_NAME_MAX + 1];
    kiln_status st = schema_name_canon(name, canon, err);
    if (st != KILN_OK)
        return st;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->ntables; i++) {
        if (strcmp(s->tables[i]->name, canon) == 0) {
            *out = s->tables[i];
            pthread_mutex_unlock(&s->mu);
            return KILN_OK;
        }
    }
    store_view *files;
    st = store_view_open(s->data_dir, canon, s->cache, &files, err);
    if (st != KILN_OK) {
        pthread_mutex_unlock(&s->mu);
        return st;
    }
    speed_table *t = speed_table_new(canon, files);
    s->tables = kiln_realloc(s->tables, (s->ntables + 1) * sizeof *s->tables);
    s->tables[s->ntables++] = t;
    *out = t;
    pthread_mutex_unlock(&s->mu);
    return KILN_OK;
}

/* ------------------------------------------------------------------ the read point */

/* Queue a write's number. REQUIRES: t->mu held, seq the newest. */
void
speed_pending_add(speed_table *t, speed_pending *p, uint64_t seq)
{
    p->seq = seq;
    p->done = 0;
    p->next = NULL;
    if (t->tail != NULL)
        t->tail->next = p;
    else
        t->head = p;
    t->tail = p;
}

/* Mark p done, move the read point over every completed write at the head,
 * and wait until p's write is visible. */
void
speed_complete(speed_table *t, speed_pending *p)
{
    pthread_mutex_lock(&t->mu);
    p->done = 1;
    uint64_t rp = 0;
    while (t->head != NULL && t->head->done) {
        rp = t->head->seq;
        t->head = t->head->next;
    }
    if (t->head == NULL)
        t->tail = NULL;
    if (rp != 0) {
        atomic_store_explicit(&t->clock->read_point, rp, memory_order_release);
        pthread_cond_broadcast(&t->advanced);
    }
    while (atomic_load_explicit(&t->clock->read_point, memory_order_acquire) < p->seq)
        pthread_cond_wait(&t->advanced, &t->mu);
    pthread_mutex_unlock(&t->mu);
}

/* Wait until every write numbered <= seq is visible. */
void
speed_wait_visible(speed_table *t, uint64_t seq)
{
    pthread_mutex_lock(&t->mu);
    while (atomic_load_explicit(&t->clock->read_point, memory_order_acquire) < seq)
        pthread_cond_wait(&t->advanced, &t->mu);
    pthread_mutex_unlock(&t->mu);
}

/* ------------------------------------------------------------------ reading */

/* Look at the table's CURRENT: a version published by someone else (a
 * load, a rollback) is taken. */
kiln_status
speed_refresh(kiln_speed *s, speed_table *t, kiln_err *err)
{
    pthread_mutex_lock(&t->mu);
    int current = store_view_is_current(t->files);
    pthread_mutex_unlock(&t->mu);
    if (current)
        return KILN_OK;
    /* not while a flush of ours publishes: its version is not someone else's */
    pthread_mutex_lock(&t->flush_mu);
    store_view *files;
    kiln_status st = store_view_open(s->data_dir, t->name, s->cache, &files, err);
    if (st != KILN_OK) {
        pthread_mutex_unlock(&t->flush_mu);
        return st;
    }
    pthread_mutex_lock(&t->mu);
    if (store_view_version(files) != store_view_version(t->files) ||
        store_view_schema(files)->family_count != t->nfam)
        speed_take_files(t, files, 0);
    else
        store_view_unref(files);
    pthread_mutex_unlock(&t->mu);
    pthread_mutex_unlock(&t->flush_mu);
    return KILN_OK;
}

kiln_status
speed_view(kiln_speed *s, const char *table, store_view **out, kiln_err *err)
{
    speed_table *t;
    kiln_status st = speed_table_get(s, table, &t, err);
    if (st != KILN_OK)
        return st;
    if ((st = speed_refresh(s, t, err)) != KILN_OK)
        return st;
    pthread_mutex_lock(&t->mu);
    store_view_ref(t->view);
    *out = t->view;
    pthread_mutex_unlock(&t->mu);
    return KILN_OK;
}

void
speed_wal_stats(kiln_speed *s, wal_counters *out)
{
    memset(out, 0, sizeof *out);
    if (s->log != NULL)
        wal_stats(s->log, out);
}

kiln_status
speed_table_stats_get(kiln_speed *s, const char *table, speed_table_stats *out, kiln_err *err)
{
    speed_table *t;
    kiln_status st = speed_table_get(s, table, &t, err);
    if (st != KILN_OK)
        return st;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&t->mu);
    out->seq = t->seq;
    out->read_point = atomic_load(&t->clock->read_point);
    out->flushed_seq = speed_flushed_seq(t->files);
    out->memstore_bytes = speed_memstores_bytes(t->active, t->nfam);
    out->memstore_cells = speed_memstores_cells(t->active, t->nfam);
    for (size_t k = 0; k < t->nfrozen; k++) {
        out->memstore_bytes += speed_memstores_bytes(t->frozen[k].ms, t->nfam);
        out->memstore_cells += speed_memstores_cells(t->frozen[k].ms, t->nfam);
    }
    out->writes = t->writes;
    out->flushes = t->flushes;
    pthread_mutex_unlock(&t->mu);
    return KILN_OK;
}

/* ------------------------------------------------------------------ opening */

typedef struct speed_replay {
    kiln_speed *s;
    uint64_t applied, skipped;
    kiln_err err;             /* why the replay stopped */
} speed_replay;

/* The memstores a replayed write made over version `base` goes back into:
 * the active ones when base is the version they are over, else frozen ones
 * over base (made on first need; when all slots are taken, the newest).
 * REQUIRES: t->mu held. */
static memstore **
speed_replay_target(speed_table *t, uint64_t base, uint64_t seq)
{
    if (base == t->active_base)
        return t->active;
    speed_frozen *fz = NULL;
    for (size_t k = 0; k < t->nfrozen && fz == NULL; k++) {
        if (t->frozen[k].base == base)
            fz = &t->frozen[k];
    }
    if (fz == NULL && t->nfrozen < SPEED_FROZEN_MAX) {
        fz = &t->frozen[t->nfrozen++];
        fz->ms = speed_new_memstores(t->nfam);
        fz->base = base;
        fz->max_seq = 0;
    }
    if (fz == NULL)
        fz = &t->frozen[t->nfrozen - 1];
    if (seq > fz->max_seq)
        fz->max_seq = seq;
    return fz->ms;
}

static kiln_status
speed_replay_one(void *arg, const char *table, uint64_t seq, const void *p, size_t n)
{
    speed_replay *r = arg;
    kiln_err *err = &r->err;
    speed_table *t;
    kiln_err e2;
    status_clear(&e2);
    if (speed_table_get(r->s, table, &t, &e2) != KILN_OK) {
        r->skipped++;   /* a table dropped since: its writes went with it */
        return KILN_OK;
    }
    if (seq <= speed_flushed_seq(t->files)) {
        r->skipped++;
        return KILN_OK;
    }
    char what[SCHEMA_NAME_MAX + 64];
    snprintf(what, sizeof what, "log record %llu of table %s", (unsigned long long)seq, t->name);
    if (n < 8) {
        status_set(err, KILN_CORRUPTION, "%s: %zu bytes, too short", what, n);
        return KILN_CORRUPTION;
    }
    const uint8_t *b = p;
    uint64_t base = 0;
    for (int i = 0; i < 8; i++)
        base = (base << 8) | b[i];
    kiln_mutation m;
    size_t used;
    kiln_status st = mutation_decode(b + 8, n - 8, what, &m, &used, err);
    if (st != KILN_OK)
        return st;
    kiln_err e3;
    status_clear(&e3);
    if (used != n - 8 || mutation_validate(&m, &e3) != KILN_OK) {
        mutation_free(&m);
        if (used != n - 8)
            return status_set(err, KILN_CORRUPTION, "%s: %zu bytes after its mutation", what,
                              n - 8 - used);
        return status_set(err, KILN_CORRUPTION, "%s: %s", what, e3.msg);
    }
    const kiln_schema *s = store_view_schema(t->files);
    pthread_mutex_lock(&t->mu);
    memstore **into = speed_replay_target(t, base, seq);
    for (size_t i = 0; i < m.count; i++) {
        kiln_cell c = mutation_cell(&m, i);
        const schema_family *f = schema_find_family(s, c.family, c.family_len);
        if (f == NULL)
            continue;   /* a family dropped since */
        status_clear(&e2);
        memstore_add(into[f - s->families], &c, seq, &e2);
    }
    if (seq > t->seq)
        t->seq = seq;
    atomic_store(&t->clock->read_point, t->seq);
    pthread_mutex_unlock(&t->mu);
    mutation_free(&m);
    r->applied++;
    return KILN_OK;
}

static void *
speed_flusher_main(void *arg)
{
    kiln_speed *s = arg;
    pthread_mutex_lock(&s->wake_mu);
    while (!s->stopping) {
        if (!s->flush_due) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            long ms = s->o.flush_check_ms;
            ts.tv_sec += ms / 1000;
            ts.tv_nsec += (ms % 1000) * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&s->wake, &s->wake_mu, &ts);
        }
        if (s->stopping)
            break;
        s->flush_due = 0;
        pthread_mutex_unlock(&s->wake_mu);
        pthread_mutex_lock(&s->mu);
        size_t n = s->ntables;
        speed_table **ts = kiln_calloc(n ? n : 1, sizeof *ts);
        memcpy(ts, s->tables, n * sizeof *ts);
        pthread_mutex_unlock(&s->mu);
        for (size_t i = 0; i < n; i++) {
            speed_table *t = ts[i];
            kiln_err e2;
            status_clear(&e2);
            speed_refresh(s, t, &e2);
            pthread_mutex_lock(&t->mu);
            int due = t->nfrozen > 0 ||
                      (s->o.memstore_flush_bytes > 0 &&
                       speed_memstores_bytes(t->active, t->nfam) >= s->o.memstore_flush_bytes);
            pthread_mutex_unlock(&t->mu);
            if (due) {
                status_clear(&e2);
                if (speed_flush(s, t->name, &e2) != KILN_OK)
                    continue;
                /* after a flush: merge small files, split big regions */
                status_clear(&e2);
                speed_compact(s, t->name, 0, NULL, &e2);
                size_t splits;
                status_clear(&e2);
                speed_split(s, t->name, 0, &splits, &e2);
            }
        }
        free(ts);
        pthread_mutex_lock(&s->wake_mu);
    }
    pthread_mutex_unlock(&s->wake_mu);
    return NULL;
}

kiln_status
speed_open(const char *data_dir, block_cache *cache, const speed_options *o, kiln_speed **out,
           kiln_err *err)
{
    *out = NULL;
    kiln_speed *s = kiln_calloc(1, sizeof *s);
    if ((size_t)snprintf(s->data_dir, sizeof s->data_dir, "%s", data_dir) >= sizeof s->data_dir) {
        free(s);
        return status_set(err, KILN_INVALID, "%s: path too long", data_dir);
    }
    s->cache = cache;
    if (o != NULL)
        s->o = *o;
    else
        speed_options_init(&s->o);
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->wake_mu, NULL);
    pthread_cond_init(&s->wake, NULL);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", data_dir, SPEED_WAL_DIR);
    kiln_status st = KILN_OK;
    if (!s->o.read_only) {
        wal_options wo;
        wal_options_init(&wo);
        st = wal_open(dir, &wo, &s->log, err);
    }
    if (st == KILN_OK && env_exists(dir)) {
        speed_replay r;
        memset(&r, 0, sizeof r);
        r.s = s;
        status_clear(&r.err);
        wal_replay_stats rs;
        st = wal_replay(dir, 0, speed_replay_one, &r, &rs, err);
        if (st != KILN_OK && r.err.code != KILN_OK)
            status_set(err, r.err.code, "%s", r.err.msg);
    }
    for (size_t i = 0; st == KILN_OK && i < s->ntables; i++) {
        pthread_mutex_lock(&s->tables[i]->mu);
        speed_rebuild_view(s->tables[i]);   /* with what the replay froze */
        pthread_mutex_unlock(&s->tables[i]->mu);
    }
    if (st == KILN_OK && s->log != NULL) {
        /* logs only flushed writes need can go */
        for (size_t i = 0; i < s->ntables; i++) {
            kiln_err e2;
            status_clear(&e2);
            wal_mark_flushed(s->log, s->tables[i]->name, speed_flushed_seq(s->tables[i]->files),
                             &e2);
        }
    }
    if (st == KILN_OK && s->o.flush_check_ms > 0 && !s->o.read_only) {
        if (pthread_create(&s->flusher, NULL, speed_flusher_main, s) != 0)
            st = status_set(err, KILN_IO, "speed layer: cannot start the flush thread");
        else
            s->flusher_running = 1;
    }
    if (st != KILN_OK) {
        speed_close(s);
        return st;
    }
    *out = s;
    return KILN_OK;
}

void
speed_close(kiln_speed *s)
{
    if (s == NULL)
        return;
    if (s->flusher_running) {
        pthread_mutex_lock(&s->wake_mu);
        s->stopping = 1;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->wake_mu);
        pthread_join(s->flusher, NULL);
    }
    wal_close(s->log, NULL);
    for (size_t i = 0; i < s->ntables; i++)
        speed_table_free(s->tables[i]);
    free(s->tables);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->wake_mu);
    pthread_cond_destroy(&s->wake);
    free(s);
}
