/* speed_compact.c -- compactions and region splits of a table's files,
 * published as versions of kind MAINT (speed.h). */
#include "storage/store/speed.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/base/env.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/store/store_compact.h"
#include "storage/store/store_split.h"
#include "storage/store/speed_int.h"
#include "storage/store/table.h"

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
                        for (size_t i = 0; i < p.n; i++)
                            out->bytes_in += creg->files[p.files[i]].size;
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
        speed_take_published(s, t, version, 0);
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
        speed_take_published(s, t, version, 0);
    }
    pthread_mutex_unlock(&t->flush_mu);
    return st;
}

