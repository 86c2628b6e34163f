/* speed.c -- the speed layer (speed.h): sequence numbers and the read point,
 * the write path (log, memstores), the read view with memstores, flushes
 * and replay.
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
#include "storage/hfile/hfile_writer.h"
#include "storage/store/manifest.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/store/memstore.h"
#include "storage/store/store_compact.h"
#include "storage/store/store_split.h"
#include "storage/store/table.h"
#include "storage/store/wal.h"

#define SPEED_FROZEN_MAX 8

typedef struct speed_pending {
    uint64_t seq;
    int done;
    struct speed_pending *next;
} speed_pending;

typedef struct speed_frozen {
    memstore **ms;            /* per family */
    uint64_t base;            /* the version its writes were made over */
    uint64_t max_seq;         /* every write in it is <= this */
} speed_frozen;

typedef struct speed_table {
    char name[SCHEMA_NAME_MAX + 1];   /* canonical */
    pthread_mutex_t mu;
    pthread_cond_t advanced;          /* the read point moved */
    uint64_t seq;                     /* last sequence number handed out */
    store_clock *clock;
    speed_pending *head, *tail;       /* writes not yet visible, in sequence order */
    size_t nfam;
    memstore **active;                /* per family of files' schema */
    uint64_t active_base;
    speed_frozen frozen[SPEED_FROZEN_MAX];
    size_t nfrozen;
    store_view *files;                /* the published version, plain */
    store_view *view;                 /* files + memstores */
    int writable;                     /* no indexes, not salted */
    pthread_mutex_t flush_mu;         /* one flush of the table at a time */
    uint64_t writes, flushes;
} speed_table;

struct kiln_speed {
    char data_dir[PATH_MAX];
    block_cache *cache;
    speed_options o;
    wal *log;                          /* NULL when read-only */
    pthread_mutex_t mu;                /* the table list */
    speed_table **tables;
    size_t ntables;
    pthread_t flusher;
    int flusher_running;
    pthread_mutex_t wake_mu;
    pthread_cond_t wake;
    int stopping, flush_due;
};

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

static memstore **
speed_new_memstores(size_t n)
{
    memstore **ms = kiln_calloc(n ? n : 1, sizeof *ms);
    for (size_t i = 0; i < n; i++)
        ms[i] = memstore_new(0);
    return ms;
}

static void
speed_free_memstores(memstore **ms, size_t n)
{
    if (ms == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        memstore_unref(ms[i]);
    free(ms);
}

static size_t
speed_memstores_cells(memstore *const *ms, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += memstore_count(ms[i]);
    return c;
}

static size_t
speed_memstores_bytes(memstore *const *ms, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += memstore_bytes(ms[i]);
    return c;
}

/* Rebuild t->view from t->files and the memstores. REQUIRES: t->mu held. */
static void
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

static uint64_t
speed_flushed_seq(const store_view *files)
{
    const manifest *m = store_view_manifest(files);
    return m != NULL ? m->flushed_seq : 0;
}

/* Freeze the active memstores (if they hold anything) and start new ones
 * over version `base`. REQUIRES: t->mu held. 0, or -1 when too many are
 * frozen already (the caller flushes first). */
static int
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
static void
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
static kiln_status
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
static void
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
static void
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
static void
speed_wait_visible(speed_table *t, uint64_t seq)
{
    pthread_mutex_lock(&t->mu);
    while (atomic_load_explicit(&t->clock->read_point, memory_order_acquire) < seq)
        pthread_cond_wait(&t->advanced, &t->mu);
    pthread_mutex_unlock(&t->mu);
}

/* ------------------------------------------------------------------ writing */

static int64_t
speed_now_ms(void)
{
    return table_now_ms();
}

/* The newest visible value of one column, seen by a writer holding t->mu
 * (every write numbered so far, visible or not). *found = 0 if none. */
static kiln_status
speed_read_column(speed_table *t, store_row_buf *rb, kslice row, const uint8_t *family,
                  size_t flen, const uint8_t *qual, size_t qlen, kiln_cell *out, int *found,
                  kiln_err *err)
{
    char fam[SCHEMA_FAMILY_NAME_MAX + 1];
    if (flen >= sizeof fam)
        return status_set(err, KILN_INVALID, "family name too long");
    memcpy(fam, family, flen);
    fam[flen] = '\0';
    store_column col = {fam, qual, qlen};
    store_row_opts o;
    store_row_opts_init(&o);
    o.columns = &col;
    o.column_count = 1;
    o.read_point = t->seq ? t->seq : UINT64_MAX;
    store_row r;
    *found = 0;
    kiln_status st = store_view_get(t->view, row.p, row.n, &o, rb, &r, err);
    if (st != KILN_OK)
        return st;
    for (size_t i = 0; i < r.count; i++) {
        const kiln_cell *c = &r.cells[i];
        if (c->qualifier_len == qlen && (qlen == 0 || memcmp(c->qualifier, qual, qlen) == 0)) {
            *out = *c;
            *found = 1;
            return KILN_OK;
        }
    }
    return KILN_OK;
}

/* Check m against the table before anything is written: valid cells of
 * known families. REQUIRES: t->mu held (the schema is t->files'). */
static kiln_status
speed_check_mutation(speed_table *t, const kiln_mutation *m, size_t *fam, kiln_err *err)
{
    kiln_status st = mutation_validate(m, err);
    if (st != KILN_OK)
        return st;
    const kiln_schema *s = store_view_schema(t->files);
    for (size_t i = 0; i < m->count; i++) {
        kiln_cell c = mutation_cell(m, i);
        const schema_family *f = schema_find_family(s, c.family, c.family_len);
        if (f == NULL) {
            kbuf shown = KBUF_INIT;
            cell_to_string_binary(&shown, c.row, c.row_len < 64 ? c.row_len : 64);
            st = status_set(err, KILN_INVALID, "table %s row %.*s: no column family '%.*s'",
                            t->name, (int)shown.len, (const char *)shown.data,
                            (int)c.family_len, (const char *)c.family);
            buf_free(&shown);
            return st;
        }
        fam[i] = (size_t)(f - s->families);
    }
    return KILN_OK;
}

/* Give LATEST timestamps their value: now, or for a Delete of one version
 * the newest version's timestamp (the cell is dropped when there is none).
 * REQUIRES: t->mu held. */
static kiln_status
speed_resolve_ts(speed_table *t, kiln_mutation *m, size_t *fam, kiln_err *err)
{
    int64_t now = speed_now_ms();
    store_row_buf *rb = NULL;
    size_t keep = 0;
    kiln_status st = KILN_OK;
    for (size_t i = 0; i < m->count && st == KILN_OK; i++) {
        kiln_mut_cell *mc = &m->cells[i];
        int drop = 0;
        if (mc->ts == CELL_LATEST_TIMESTAMP) {
            if (mc->type == CELL_TYPE_DELETE) {
                if (rb == NULL)
                    rb = store_row_buf_new();
                kiln_cell cur;
                int found;
                st = speed_read_column(t, rb, mutation_row(m), m->bytes.data + mc->family_off,
                                       mc->family_len, m->bytes.data + mc->qualifier_off,
                                       mc->qualifier_len, &cur, &found, err);
                if (found)
                    mc->ts = cur.ts;
                else
                    drop = 1;
            } else {
                mc->ts = now;
            }
        }
        if (!drop) {
            fam[keep] = fam[i];
            m->cells[keep++] = *mc;
        }
    }
    m->count = keep;
    store_row_buf_free(rb);
    return st;
}

static kiln_durability
speed_durability(speed_table *t, kiln_durability d)
{
    if (d != KILN_DUR_DEFAULT)
        return d;
    pthread_mutex_lock(&t->mu);
    const char *p = schema_get_prop(store_view_schema(t->files), "durability");
    kiln_durability td;
    if (p == NULL || mutation_durability_parse(p, &td) != 0 || td == KILN_DUR_DEFAULT)
        td = KILN_DUR_SYNC_WAL;
    pthread_mutex_unlock(&t->mu);
    return td;
}

/* Number, log and add one checked mutation. REQUIRES: t->mu held; cells
 * resolved. *lsn gets the log position (0 when not logged). */
static kiln_status
speed_apply_locked(kiln_speed *s, speed_table *t, const kiln_mutation *m, const size_t *fam,
                   kiln_durability d, speed_pending *p, uint64_t *lsn, kbuf *scratch,
                   kiln_err *err)
{
    uint64_t seq = t->seq + 1;
    *lsn = 0;
    if (d != KILN_DUR_SKIP_WAL) {
        buf_reset(scratch);
        buf_append_be64(scratch, t->active_base);
        mutation_encode(m, scratch);
        kiln_status st = wal_append(s->log, t->name, seq, scratch->data, scratch->len, lsn, err);
        if (st != KILN_OK)
            return st;
    }
    t->seq = seq;
    for (size_t i = 0; i < m->count; i++) {
        kiln_cell c = mutation_cell(m, i);
        kiln_err e2;
        status_clear(&e2);
        memstore_add(t->active[fam[i]], &c, seq, &e2);   /* checked: cannot fail */
    }
    speed_pending_add(t, p, seq);
    t->writes++;
    return KILN_OK;
}

/* After a write: a flush when the active memstores passed the budget. */
static void
speed_maybe_flush(kiln_speed *s, speed_table *t)
{
    if (s->o.memstore_flush_bytes == 0)
        return;
    pthread_mutex_lock(&t->mu);
    size_t bytes = speed_memstores_bytes(t->active, t->nfam);
    pthread_mutex_unlock(&t->mu);
    if (bytes < s->o.memstore_flush_bytes)
        return;
    if (s->flusher_running) {
        pthread_mutex_lock(&s->wake_mu);
        s->flush_due = 1;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->wake_mu);
    } else {
        kiln_err e2;
        status_clear(&e2);
        speed_flush(s, t->name, &e2);
    }
}

static kiln_status speed_refresh(kiln_speed *s, speed_table *t, kiln_err *err);

/* Before a write: the table must take writes, and without a flush thread
 * to watch CURRENT (a client's own speed layer), look at it now. */
static kiln_status
speed_writable(kiln_speed *s, speed_table *t, kiln_err *err)
{
    if (s->log != NULL && t->writable && !s->flusher_running) {
        kiln_status st = speed_refresh(s, t, err);
        if (st != KILN_OK)
            return st;
    }
    if (s->log == NULL)
        return status_set(err, KILN_INVALID, "table %s: the speed layer is open read-only",
                          t->name);
    if (!t->writable)
        return status_set(err, KILN_UNSUPPORTED,
                          "table %s: online writes need a table without secondary indexes "
                          "or salt",
                          t->name);
    return KILN_OK;
}

/* Sync (for SYNC_WAL) and complete the writes p[0..n). */
static kiln_status
speed_finish(kiln_speed *s, speed_table *t, speed_pending *p, size_t n, kiln_durability d,
             uint64_t lsn, kiln_err *err)
{
    kiln_status st = KILN_OK;
    if (d == KILN_DUR_SYNC_WAL && lsn != 0)
        st = wal_sync(s->log, lsn, err);
    for (size_t i = 0; i < n; i++)
        speed_complete(t, &p[i]);
    return st;
}

kiln_status
speed_mutate(kiln_speed *s, const char *table, kiln_mutation *muts, size_t n, kiln_durability d,
             kiln_err *err)
{
    speed_table *t;
    kiln_status st = speed_table_get(s, table, &t, err);
    if (st != KILN_OK)
        return st;
    if ((st = speed_writable(s, t, err)) != KILN_OK)
        return st;
    d = speed_durability(t, d);
    speed_pending *p = kiln_calloc(n ? n : 1, sizeof *p);
    kbuf scratch = KBUF_INIT;
    size_t done = 0;
    uint64_t lsn = 0;
    for (size_t i = 0; i < n && st == KILN_OK; i++) {
        size_t *fam = kiln_calloc(muts[i].count ? muts[i].count : 1, sizeof *fam);
        pthread_mutex_lock(&t->mu);
        st = speed_check_mutation(t, &muts[i], fam, err);
        if (st == KILN_OK) {
            st = speed_resolve_ts(t, &muts[i], fam, err);
            if (st == KILN_OK && muts[i].count > 0) {
                uint64_t l;
                st = speed_apply_locked(s, t, &muts[i], fam, d, &p[done], &l, &scratch, err);
                if (st == KILN_OK) {
                    done++;
                    if (l != 0)
                        lsn = l;
                }
            }
        }
        pthread_mutex_unlock(&t->mu);
        free(fam);
    }
    kiln_err e2;
    status_clear(&e2);
    kiln_status fst = speed_finish(s, t, p, done, d, lsn, &e2);
    if (st == KILN_OK && fst != KILN_OK)
        st = status_set(err, fst, "%s", e2.msg);
    free(p);
    buf_free(&scratch);
    if (st == KILN_OK)
        speed_maybe_flush(s, t);
    return st;
}

static int64_t
speed_be64_get(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return (int64_t)v;
}

kiln_status
speed_increment(kiln_speed *s, const char *table, const uint8_t *row, size_t n,
                const speed_incr *incr, size_t k, kiln_durability d, int64_t *out, kiln_err *err)
{
    speed_table *t;
    kiln_status st = speed_table_get(s, table, &t, err);
    if (st != KILN_OK)
        return st;
    if ((st = speed_writable(s, t, err)) != KILN_OK)
        return st;
    d = speed_durability(t, d);
    kiln_mutation m;
    mutation_init(&m, row, n);
    size_t *fam = kiln_calloc(k ? k : 1, sizeof *fam);
    store_row_buf *rb = store_row_buf_new();
    speed_pending p;
    uint64_t lsn = 0;
    kbuf scratch = KBUF_INIT;
    int applied = 0;
    pthread_mutex_lock(&t->mu);
    int64_t now = speed_now_ms();
    for (size_t i = 0; i < k && st == KILN_OK; i++) {
        kiln_cell cur;
        int found;
        st = speed_read_column(t, rb, kslice_make(row, n), (const uint8_t *)incr[i].family,
                               strlen(incr[i].family), incr[i].qualifier, incr[i].qualifier_len,
                               &cur, &found, err);
        if (st != KILN_OK)
            break;
        int64_t v = 0;
        if (found) {
            if (cur.value_len != 8) {
                st = status_set(err, KILN_INVALID,
                                "table %s: column %s:%.*s holds %u bytes, not an 8-byte counter",
                                t->name, incr[i].family, (int)incr[i].qualifier_len,
                                (const char *)incr[i].qualifier, cur.value_len);
                break;
            }
            v = speed_be64_get(cur.value);
        }
        v = (int64_t)((uint64_t)v + (uint64_t)incr[i].delta);
        out[i] = v;
        uint8_t be[8];
        for (int b = 0; b < 8; b++)
            be[b] = (uint8_t)((uint64_t)v >> (56 - 8 * b));
        mutation_put(&m, incr[i].family, strlen(incr[i].family), incr[i].qualifier,
                     incr[i].qualifier_len, now, be, 8);
    }
    if (st == KILN_OK)
        st = speed_check_mutation(t, &m, fam, err);
    if (st == KILN_OK) {
        st = speed_apply_locked(s, t, &m, fam, d, &p, &lsn, &scratch, err);
        applied = st == KILN_OK;
    }
    pthread_mutex_unlock(&t->mu);
    if (applied) {
        kiln_err e2;
        status_clear(&e2);
        kiln_status fst = speed_finish(s, t, &p, 1, d, lsn, &e2);
        if (fst != KILN_OK)
            st = status_set(err, fst, "%s", e2.msg);
    }
    store_row_buf_free(rb);
    buf_free(&scratch);
    free(fam);
    mutation_free(&m);
    if (st == KILN_OK)
        speed_maybe_flush(s, t);
    return st;
}

kiln_status
speed_check_and_mutate(kiln_speed *s, const char *table, const speed_check *chk,
                       kiln_mutation *m, kiln_durability d, int *applied, kiln_err *err)
{
    *applied = 0;
    speed_table *t;
    kiln_status st = speed_table_get(s, table, &t, err);
    if (st != KILN_OK)
        return st;
    if ((st = speed_writable(s, t, err)) != KILN_OK)
        return st;
    d = speed_durability(t, d);
    size_t *fam = kiln_calloc(m->count ? m->count : 1, sizeof *fam);
    pthread_mutex_lock(&t->mu);
    st = speed_check_mutation(t, m, fam, err);
    if (st == KILN_OK && schema_find_family(store_view_schema(t->files),
                                            (const uint8_t *)chk->family,
                                            strlen(chk->family)) == NULL)
        st = status_set(err, KILN_INVALID, "table %s: no column family '%s'", t->name,
                        chk->family);
    if (st != KILN_OK) {
        pthread_mutex_unlock(&t->mu);
        free(fam);
        return st;
    }
    store_row_buf *rb = store_row_buf_new();
    speed_pending p;
    uint64_t lsn = 0;
    kbuf scratch = KBUF_INIT;
    kiln_cell cur;
    int found;
    st = speed_read_column(t, rb, mutation_row(m), (const uint8_t *)chk->family,
                           strlen(chk->family), chk->qualifier, chk->qualifier_len, &cur, &found,
                           err);
    int match = 0;
    if (st == KILN_OK) {
        if (chk->expected == NULL)
            match = !found;
        else
            match = found && cur.value_len == chk->expected_len &&
                    (chk->expected_len == 0 ||
                     memcmp(cur.value, chk->expected, chk->expected_len) == 0);
    }
    if (st == KILN_OK && match)
        st = speed_resolve_ts(t, m, fam, err);
    if (st == KILN_OK && match && m->count > 0) {
        st = speed_apply_locked(s, t, m, fam, d, &p, &lsn, &scratch, err);
        *applied = st == KILN_OK;
    } else if (st == KILN_OK && match) {
        *applied = 1;   /* a Delete of a version that does not exist: nothing to do */
    }
    int logged = st == KILN_OK && match && m->count > 0;
    pthread_mutex_unlock(&t->mu);
    if (logged) {
        kiln_err e2;
        status_clear(&e2);
        kiln_status fst = speed_finish(s, t, &p, 1, d, lsn, &e2);
        if (fst != KILN_OK)
            st = status_set(err, fst, "%s", e2.msg);
    }
    store_row_buf_free(rb);
    buf_free(&scratch);
    free(fam);
    if (st == KILN_OK && *applied)
        speed_maybe_flush(s, t);
    return st;
}

/* ------------------------------------------------------------------ reading */

/* Look at the table's CURRENT: a version published by someone else (a
 * load, a rollback) is taken. */
static kiln_status
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

/* ------------------------------------------------------------------ flushing */

/* Write the cells of memstore ms in [start, end) (empty: unbounded) as one
 * HFile at path, the newest of identical keys only. *entries = 0 (and no
 * file) when the region has none. */
static kiln_status
speed_write_region(memstore *ms, const schema_family *fam, kslice start, kslice end,
                   const char *path, uint64_t *entries, uint64_t *size, kiln_err *err)
{
    *entries = 0;
    *size = 0;
    kiln_iter *it = memstore_iter(ms);
    if (start.n > 0) {
        kiln_cell k;
        cell_first_on_row(&k, start.p, (uint32_t)start.n);
        kiln_iter_seek(it, &k);
    } else {
        kiln_iter_seek_first(it);
    }
    hfile_writer *w = NULL;
    kiln_status st = KILN_OK;
    kbuf last = KBUF_INIT, key = KBUF_INIT;
    for (; st == KILN_OK && kiln_iter_valid(it); kiln_iter_next(it)) {
        const kiln_cell *c = kiln_iter_key(it);
        if (end.n > 0 && kslice_cmp(kslice_make(c->row, c->row_len), end) >= 0)
            break;
        buf_reset(&key);
        cell_key_append(c, &key);
        if (last.len > 0 && key.len == last.len && memcmp(key.data, last.data, key.len) == 0)
            continue;   /* an older write of the same key */
        buf_reset(&last);
        buf_append(&last, key.data, key.len);
        if (w == NULL) {
            hfile_writer_options o;
            hfile_writer_options_init(&o);
            o.codec = fam->codec;
            o.block_size = fam->block_size;
            o.bloom = fam->bloom;
            o.sync = 1;
            st = hfile_writer_open(path, &o, &w, err);
            if (st != KILN_OK)
                break;
        }
        kiln_cell out = *c;
        out.mvcc = 0;
        st = hfile_writer_add(w, &out, err);
        (*entries)++;
    }
    kiln_iter_close(it);
    buf_free(&last);
    buf_free(&key);
    if (w == NULL)
        return st;
    if (st != KILN_OK) {
        hfile_writer_abandon(w);
        return st;
    }
    hfile_writer_stats ws;
    st = hfile_writer_finish(w, &ws, err);
    if (st == KILN_OK) {
        env_stat_info si;
        st = env_stat(path, &si, err);
        if (st == KILN_OK)
            *size = si.size;
    }
    return st;
}

/* Write the frozen memstores fz[0..n) of t as files of version `version`
 * into m (the parent's manifest copied). */
static kiln_status
speed_write_frozen(kiln_table *kt, const speed_table *t, const speed_frozen *fz, size_t n,
                   manifest *m, uint64_t version, kiln_err *err)
{
    manifest_table *mt = &m->tables[0];
    const kiln_schema *s = &mt->schema;
    uint32_t fileno = 0;
    for (size_t k = 0; k < n; k++) {
        for (size_t f = 0; f < t->nfam && f < s->family_count; f++) {
            if (memstore_count(fz[k].ms[f]) == 0)
                continue;
            for (size_t r = 0; r < mt->region_count; r++) {
                manifest_file mf;
                memset(&mf, 0, sizeof mf);
                snprintf(mf.family, sizeof mf.family, "%s", s->families[f].name);
                table_file_name(version, fileno, mf.name);
                char path[PATH_MAX];
                table_file_path(kt, mf.name, path, sizeof path);
                kiln_status st = speed_write_region(
                    fz[k].ms[f], &s->families[f], buf_slice(&mt->regions[r].start),
                    buf_slice(&mt->regions[r].end), path, &mf.entries, &mf.size, err);
                if (st != KILN_OK)
                    return st;
                if (mf.entries == 0)
                    continue;
                fileno++;
                mf.seq = fz[k].base;
                mf.flags = MANIFEST_FILE_SPEED;
                mf.wseq = fz[k].max_seq;
                manifest_region_add_file(&mt->regions[r], &mf);
                table_step(kt, "flush wrote %s", mf.name);
            }
        }
    }
    return KILN_OK;
}

kiln_status
speed_flush(kiln_speed *s, const char *table, kiln_err *err)
{
    speed_table *t;
    kiln_status st = speed_table_get(s, table, &t, err);
    if (st != KILN_OK)
        return st;
    pthread_mutex_lock(&t->flush_mu);
    pthread_mutex_lock(&t->mu);
    speed_freeze(t, t->active_base);
    speed_rebuild_view(t);
    size_t n = t->nfrozen;
    speed_frozen fz[SPEED_FROZEN_MAX];
    uint64_t max_seq = 0;
    for (size_t k = 0; k < n; k++) {
        fz[k] = t->frozen[k];
        for (size_t f = 0; f < t->nfam; f++)
            memstore_ref(fz[k].ms[f]);
        if (fz[k].max_seq > max_seq)
            max_seq = fz[k].max_seq;
    }
    pthread_mutex_unlock(&t->mu);
    if (n == 0) {
        pthread_mutex_unlock(&t->flush_mu);
        return KILN_OK;
    }
    /* every write in them visible (so logged, or failed and reported) */
    speed_wait_visible(t, max_seq);

    kiln_table *kt = NULL;
    manifest m;
    manifest_init(&m);
    uint64_t version = 0, parent = 0;
    int locked = 0, published = 0;
    st = table_open(s->data_dir, t->name, &kt, err);
    if (st == KILN_OK)
        st = table_lock(kt, -1, err);
    locked = st == KILN_OK;
    if (st == KILN_OK) {
        manifest cur;
        kiln_err e2;
        status_clear(&e2);
        kiln_status cst = table_read_current(kt, &cur, &e2);
        if (cst == KILN_OK) {
            manifest_copy(&m, &cur);
            m.parent = cur.version;
            parent = cur.version;
            manifest_free(&cur);
        } else if (cst == KILN_NOT_FOUND) {
            manifest_add_table(&m, table_schema(kt));
        } else {
            st = status_set(err, cst, "%s", e2.msg);
        }
    }
    if (st == KILN_OK)
        st = table_next_version(kt, &version, err);
    if (st == KILN_OK) {
        m.version = version;
        m.kind = MANIFEST_KIND_MAINT;
        m.created_ms = table_now_ms();
        if (max_seq > m.flushed_seq)
            m.flushed_seq = max_seq;
        st = speed_write_frozen(kt, t, fz, n, &m, version, err);
    }
    if (st == KILN_OK) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%s", table_dir(kt), TABLE_FILES_DIR);
        st = env_sync_dir(dir, err);
    }
    if (st == KILN_OK)
        st = table_publish(kt, &m, &published, err);
    if (st != KILN_OK && !published && version != 0 && locked)
        table_abort_version(kt, version);
    if (published) {
        kiln_err e2;
        status_clear(&e2);
        table_gc(kt, NULL, &e2);
    }
    table_close(kt);
    manifest_free(&m);
    for (size_t k = 0; k < n; k++)
        for (size_t f = 0; f < t->nfam; f++)
            memstore_unref(fz[k].ms[f]);

    if (published) {
        store_view *files;
        kiln_err e2;
        status_clear(&e2);
        if (store_view_open(s->data_dir, t->name, s->cache, &files, &e2) == KILN_OK) {
            pthread_mutex_lock(&t->mu);
            t->flushes++;
            /* our version follows the one we had unless someone else
             * published in between: then the writes since are over theirs */
            if (store_view_version(files) >= store_view_version(t->files))
                speed_take_files(t, files,
                                 parent == store_view_version(t->files) &&
                                     store_view_version(files) == version);
            else
                store_view_unref(files);
            pthread_mutex_unlock(&t->mu);
        }
        if (s->log != NULL) {
            status_clear(&e2);
            wal_mark_flushed(s->log, t->name, max_seq, &e2);
        }
    }
    pthread_mutex_unlock(&t->flush_mu);
    return st;
}

/* ------------------------------------------------------------------ compacting */

/* One compaction: the files of one kind (batch or speed) of one family in
 * one region. */
typedef struct speed_pick {
    size_t *files;            /* indexes into the region's files */
    size_t n;
    int speed;                /* MANIFEST_FILE_SPEED files */
    int drop_markers;         /* no file of the other kind: a true major compaction */
} speed_pick;

/* Which files of region reg, family fam, kind `speed` to compact: a run of
 * files adjacent in merge order (manifest_file_rank, no file of the other
 * kind between them), so the output, ranked as the run's newest file,
 * stands where the run stood against every other file. A run never starts
 * after a file of the same rank (the newer of equal ranks wins ties, and
 * the output is newer than all). */
static void
speed_pick_files(const manifest_region *reg, const char *fam, int speed, int major,
                 size_t min_files, speed_pick *p)
{
    memset(p, 0, sizeof *p);
    p->speed = speed;
    size_t n = 0, other = 0;
    size_t cap = reg->file_count ? reg->file_count : 1;
    size_t *idx = kiln_calloc(cap, sizeof *idx);
    uint64_t *sizes = kiln_calloc(cap, sizeof *sizes);
    int *mine = kiln_calloc(cap, sizeof *mine);
    for (size_t f = 0; f < reg->file_count; f++) {
        const manifest_file *mf = &reg->files[f];
        if (strcmp(mf->family, fam) != 0)
            continue;
        mine[n] = ((mf->flags & MANIFEST_FILE_SPEED) != 0) == speed;
        other += !mine[n];
        idx[n] = f;
        sizes[n++] = mf->size;   /* newest first: files are kept rank-descending */
    }
    p->drop_markers = major && other == 0;
    size_t best_start = 0, best_k = 0;
    for (size_t a = 0; a < n;) {
        if (!mine[a]) {
            a++;
            continue;
        }
        size_t b = a;
        while (b < n && mine[b])
            b++;
        size_t start = a, k = 0;
        if (major) {
            if (b - a >= 2 || (b - a == 1 && p->drop_markers))
                k = b - a;
        } else {
            store_compact_policy pol;
            store_compact_policy_init(&pol);
            pol.min_files = min_files;
            size_t first = 0;
            k = store_compact_pick(sizes + a, b - a, &pol, &first);
            start = a + first;
            while (k > 0 && start > a &&
                   manifest_file_rank(&reg->files[idx[start - 1]]) ==
                       manifest_file_rank(&reg->files[idx[start]])) {
                start--;
                k++;
            }
        }
        if (k > best_k) {
            best_k = k;
            best_start = start;
        }
        a = b;
    }
    if (best_k > 0) {
        p->files = kiln_calloc(best_k, sizeof *p->files);
        memcpy(p->files, idx + best_start, best_k * sizeof *idx);
        p->n = best_k;
    }
    free(idx);
    free(sizes);
    free(mine);
}

/* Compact picked files of region r into one file named `name`; its entry
 * goes to *out (entries 0: nothing left, no file). */
static kiln_status
speed_compact_pick(kiln_speed *s, kiln_table *kt, const manifest *cur, size_t r, size_t fam,
                   const speed_pick *p, int major, const char *name, manifest_file *out,
                   store_compact_stats *cs, kiln_err *err)
{
    const manifest_table *mt = &cur->tables[0];
    const manifest_region *reg = &mt->regions[r];
    hfile_reader **rd = kiln_calloc(p->n, sizeof *rd);
    store_compact_input *in = kiln_calloc(p->n, sizeof *in);
    kiln_status st = KILN_OK;
    uint64_t seq = 0, wseq = 0;
    for (size_t i = 0; i < p->n && st == KILN_OK; i++) {
        const manifest_file *mf = &reg->files[p->files[i]];
        char path[PATH_MAX];
        table_file_path(kt, mf->name, path, sizeof path);
        st = hfile_reader_open(path, s->cache, &rd[i], err);
        if (st != KILN_OK)
            break;
        kiln_iter *it = hfile_reader_iter(rd[i]);
        int64_t retired = p->speed ? store_view_retired_ts(cur, mf->seq) : INT64_MIN;
        if (retired != INT64_MIN)
            it = store_view_retire_iter(it, 1, retired);   /* retired writes go for good */
        in[i].it = it;
        in[i].seq = manifest_file_rank(mf);
        if (i == 0)
            seq = mf->seq;   /* the run's newest: the output ranks as it did */
        if (mf->wseq > wseq)
            wseq = mf->wseq;
    }
    memset(out, 0, sizeof *out);
    if (st == KILN_OK) {
        store_compact_opts o;
        store_compact_opts_init(&o);
        o.kind = p->drop_markers ? STORE_COMPACT_MAJOR : STORE_COMPACT_MINOR;
        (void)major;
        o.schema = &mt->schema;
        o.family = fam;
        o.bytes_per_sec = s->o.compact_bytes_per_sec;
        char path[PATH_MAX];
        table_file_path(kt, name, path, sizeof path);
        st = store_compact_write(in, p->n, &o, path, cs, err);
        if (st == KILN_OK && cs->cells_out == 0) {
            env_unlink(path, NULL);
        } else if (st == KILN_OK) {
            snprintf(out->family, sizeof out->family, "%s", mt->schema.families[fam].name);
            snprintf(out->name, sizeof out->name, "%s", name);
            out->size = cs->bytes_out;
            out->entries = cs->cells_out;
            out->seq = seq;
            out->wseq = wseq;
            out->flags = p->speed ? MANIFEST_FILE_SPEED : 0;
        }
    }
    for (size_t i = 0; i < p->n; i++) {
        if (in[i].it != NULL)
            kiln_iter_close(in[i].it);
        hfile_reader_close(rd[i]);
    }
    free(in);
    free(rd);
    return st;
}

kiln_status
speed_compact(kiln_speed *s, const char *table, int major, speed_compact_stats *out,
              kiln_err *err)
{
    speed_compact_stats dummy;
    if (out == NULL)
        out = &dummy;
    memset(out, 0, sizeof *out);
    speed_table *t;
    kiln_status st = speed_table_get(s, table, &t, err);
    if (st != KILN_OK)
        return st;
    /* The memstores go to files first: a run of files is merged only where
     * nothing else stands between its files in merge order, and a memstore
     * written over an older version would (and a major compaction sees
     * every write). Writes made meanwhile go to memstores over the newest
     * version, which outrank every file. */
    if (s->log != NULL && (st = speed_refresh(s, t, err)) != KILN_OK)
        return st;
    if (s->log != NULL && (st = speed_flush(s, table, err)) != KILN_OK)
        return st;
    pthread_mutex_lock(&t->flush_mu);
    kiln_table *kt = NULL;
    manifest cur, m;
    manifest_init(&cur);
    manifest_init(&m);
    uint64_t version = 0;
    int locked = 0, published = 0, have_cur = 0;
    st = table_open(s->data_dir, t->name, &kt, err);
    if (st == KILN_OK)
        st = table_lock(kt, -1, err);
    locked = st == KILN_OK;
    if (st == KILN_OK) {
        kiln_err e2;
        status_clear(&e2);
        kiln_status cst = table_read_current(kt, &cur, &e2);
        if (cst == KILN_OK)
            have_cur = 1;
        else if (cst != KILN_NOT_FOUND)
            st = status_set(err, cst, "%s", e2.msg);
    }
    if (st == KILN_OK && have_cur)
        st = table_next_version(kt, &version, err);
    if (st == KILN_OK && have_cur) {
        manifest_copy(&m, &cur);
        m.version = version;
        m.parent = cur.version;
        m.kind = MANIFEST_KIND_MAINT;
        m.created_ms = table_now_ms();
        const manifest_table *ct = &cur.tables[0];
        uint32_t fileno = 0;
        for (size_t r = 0; r < ct->region_count && st == KILN_OK; r++) {
            const manifest_region *creg = &ct->regions[r];
            uint8_t *picked = kiln_calloc(creg->file_count ? creg->file_count : 1, 1);
            manifest_file *made = kiln_calloc(2 * ct->schema.family_count + 1, sizeof *made);
            size_t nmade = 0;
            for (size_t f = 0; f < ct->schema.family_count && st == KILN_OK; f++) {
                for (int speed = 0; speed <= 1 && st == KILN_OK; speed++) {
                    speed_pick p;
                    speed_pick_files(creg, ct->schema.families[f].name, speed, major,
                                     s->o.compact_min_files, &p);
                    if (p.n == 0)
                        continue;
                    char name[MANIFEST_FILE_NAME_MAX + 1];
                    table_file_name(version, fileno++, name);
                    manifest_file mf;
                    store_compact_stats cs;
                    memset(&cs, 0, sizeof cs);
                    st = speed_compact_pick(s, kt, &cur, r, f, &p, major, name, &mf, &cs, err);
                    if (st == KILN_OK) {
                        for (size_t i = 0; i < p.n; i++)
                            picked[p.files[i]] = 1;
                        if (mf.entries > 0)
                            made[nmade++] = mf;
                        out->compactions++;
                        out->files_in += p.n;
                        out->cells_in += cs.cells_in;
                        out->cells_out += cs.cells_out;
                        out->bytes_out += cs.bytes_out;
                        table_step(kt, "compaction wrote %s", name);
                    }
                    free(p.files);
                }
            }
            /* region r of the new version: what was not compacted, and the outputs */
            manifest_region *mreg = &m.tables[0].regions[r];
            mreg->file_count = 0;
            for (size_t i = 0; i < creg->file_count; i++) {
                if (!picked[i])
                    manifest_region_add_file(mreg, &creg->files[i]);
            }
            for (size_t i = 0; i < nmade; i++)
                manifest_region_add_file(mreg, &made[i]);
            free(picked);
            free(made);
        }
    }
    if (st == KILN_OK && out->compactions > 0) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%s", table_dir(kt), TABLE_FILES_DIR);
        st = env_sync_dir(dir, err);
        if (st == KILN_OK)
            st = table_publish(kt, &m, &published, err);
    }
    if (!published && version != 0 && locked)
        table_abort_version(kt, version);
    if (published) {
        kiln_err e2;
        status_clear(&e2);
        table_gc(kt, NULL, &e2);
        out->version = version;
    }
    table_close(kt);
    manifest_free(&m);
    manifest_free(&cur);
    if (published) {
        store_view *files;
        kiln_err e2;
        status_clear(&e2);
        if (store_view_open(s->data_dir, t->name, s->cache, &files, &e2) == KILN_OK) {
            pthread_mutex_lock(&t->mu);
            if (store_view_version(files) >= store_view_version(t->files))
                speed_take_files(t, files, store_view_version(files) == version);
            else
                store_view_unref(files);
            pthread_mutex_unlock(&t->mu);
        }
    }
    pthread_mutex_unlock(&t->flush_mu);
    return st;
}

kiln_status
speed_split(kiln_speed *s, const char *table, uint64_t max_bytes, size_t *splits,
            kiln_err *err)
{
    *splits = 0;
    speed_table *t;
    kiln_status st = speed_table_get(s, table, &t, err);
    if (st != KILN_OK)
        return st;
    pthread_mutex_lock(&t->flush_mu);
    kiln_table *kt = NULL;
    st = table_open(s->data_dir, t->name, &kt, err);
    if (st == KILN_OK)
        st = table_lock(kt, -1, err);
    uint64_t version = 0;
    /* Each split renumbers the regions after it, so a pass takes its
     * candidates from the last down; a region that cannot be split (one
     * row) is passed over. Passes go on while they split something (the
     * halves may still be too big). */
    while (st == KILN_OK && *splits < 64) {
        size_t *regions = NULL, n = 0, done = 0;
        st = store_split_candidates(kt, max_bytes, &regions, &n, err);
        for (size_t k = n; st == KILN_OK && k-- > 0 && *splits < 64;) {
            store_split_result res;
            store_split_result_init(&res);
            kiln_err e2;
            status_clear(&e2);
            kiln_status sst = store_split_region(kt, regions[k], s->cache, &res, &e2);
            if (sst == KILN_OK) {
                version = res.version;
                (*splits)++;
                done++;
            } else if (sst != KILN_INVALID) {   /* KILN_INVALID: too small to split */
                st = status_set(err, sst, "%s", e2.msg);
            }
            store_split_result_free(&res);
        }
        free(regions);
        if (done == 0)
            break;
    }
    if (version != 0) {
        kiln_err e2;
        status_clear(&e2);
        table_gc(kt, NULL, &e2);
    }
    table_close(kt);
    if (version != 0) {
        store_view *files;
        kiln_err e2;
        status_clear(&e2);
        if (store_view_open(s->data_dir, t->name, s->cache, &files, &e2) == KILN_OK) {
            pthread_mutex_lock(&t->mu);
            if (store_view_version(files) >= store_view_version(t->files))
                speed_take_files(t, files, store_view_version(files) == version);
            else
                store_view_unref(files);
            pthread_mutex_unlock(&t->mu);
        }
    }
    pthread_mutex_unlock(&t->flush_mu);
    return st;
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
