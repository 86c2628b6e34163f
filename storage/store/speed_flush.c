/* speed_flush.c -- flushing a table's frozen memstores to one HFile per
 * region and family, published as a version of kind MAINT (speed.h). */
#include "storage/store/speed.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/base/env.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/speed_int.h"
#include "storage/store/table.h"

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
        pthread_mutex_lock(&t->mu);
        t->flushes++;
        pthread_mutex_unlock(&t->mu);
        speed_take_published(s, t, version, parent);
        if (s->log != NULL) {
            kiln_err e2;
            status_clear(&e2);
            wal_mark_flushed(s->log, t->name, max_seq, &e2);
        }
    }
    pthread_mutex_unlock(&t->flush_mu);
    return st;
}

