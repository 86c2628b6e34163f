/* speed_write.c -- the speed layer's write path (speed.h): Put and delete
 * mutations, increments and check-and-mutate, each numbered, logged and
 * added to the memstores under the table's lock, synced per its durability
 * and completed in sequence order. */
#include "storage/store/speed.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/store/mutation.h"
#include "storage/store/speed_int.h"
#include "storage/store/table.h"

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

