/* store_compact.c -- flush and compaction of one region and family into one
 * HFile (store_compact.h), and the policy choosing a minor compaction.
 *
 * The inputs are merged (iter_merge.h), newest seq first on identical keys,
 * and walked once. As in row assembly (store_view_row.c), HBase order puts
 * every delete marker before the Puts it masks -- a family's markers carry
 * the empty qualifier and the largest types, a column's markers sort before
 * its Puts of equal timestamp -- so one pass with the row's family markers
 * and the column's markers decides each cell when it is seen, and the
 * output is written as the merge goes, in its order.
 */
#include "storage/store/store_compact.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/base/buf.h"
#include "storage/base/coding.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_format.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/hfile/iter_merge.h"

/* Input cells between two polls of stop when no data block is finished
 * (a MAJOR compaction that drops most of what it reads). */
#define COMPACT_POLL_CELLS 4096
/* Longest throttle sleep between two polls of stop. */
#define COMPACT_SLEEP_SLICE_NS 100000000L

void
store_compact_opts_init(store_compact_opts *o)
{
    memset(o, 0, sizeof *o);
    o->kind = STORE_COMPACT_FLUSH;
}

void
store_compact_policy_init(store_compact_policy *p)
{
    memset(p, 0, sizeof *p);
    p->min_files = 3;
    p->max_files = 10;
    p->ratio = 1.2;
    p->min_size = 0;
    p->max_size = 0;
    p->blocking_files = 16;
}

/* ------------------------------------------------------------------ masking state */

/* What the cells seen so far in the current row (one family) and column
 * say about the next ones. */
typedef struct compact_state {
    kbuf row;
    int have_row;
    int64_t family_del_ts;      /* newest DeleteFamily, INT64_MIN if none */
    int64_t *fam_version_del;   /* DeleteFamilyVersion timestamps of the row */
    size_t n_fam_version_del, cap_fam_version_del;
    kbuf qual;
    int have_qual;
    int64_t col_del_ts;         /* newest DeleteColumn of the column */
    int64_t *version_del;       /* Delete timestamps of the column */
    size_t n_version_del, cap_version_del;
    uint32_t versions;          /* Puts of the column written (MAJOR) */
    int64_t prev_ts;            /* previous key of the column, for identical keys */
    uint8_t prev_type;
    int have_prev;
} compact_state;

static void
compact_state_free(compact_state *s)
{
    buf_free(&s->row);
    buf_free(&s->qual);
    free(s->fam_version_del);
    free(s->version_del);
}

static void
compact_ts_add(int64_t **v, size_t *n, size_t *cap, int64_t ts)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        *v = kiln_realloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = ts;
}

static int
compact_ts_in(const int64_t *v, size_t n, int64_t ts)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i] == ts)
            return 1;
    }
    return 0;
}

/* Move the state to c's row and column, starting afresh where they change. */
static void
compact_state_enter(compact_state *s, const kiln_cell *c)
{
    if (!s->have_row || c->row_len != s->row.len ||
        (c->row_len > 0 && memcmp(c->row, s->row.data, c->row_len) != 0)) {
        buf_reset(&s->row);
        buf_append(&s->row, c->row, c->row_len);
        s->have_row = 1;
        s->family_del_ts = INT64_MIN;
        s->n_fam_version_del = 0;
        s->have_qual = 0;
    }
    if (!s->have_qual || c->qualifier_len != s->qual.len ||
        (c->qualifier_len > 0 && memcmp(c->qualifier, s->qual.data, c->qualifier_len) != 0)) {
        buf_reset(&s->qual);
        buf_append(&s->qual, c->qualifier, c->qualifier_len);
        s->have_qual = 1;
        s->col_del_ts = INT64_MIN;
        s->n_version_del = 0;
        s->versions = 0;
        s->have_prev = 0;
    }
}

static int
compact_masked(const compact_state *s, int64_t ts)
{
    return ts <= s->family_del_ts || ts <= s->col_del_ts ||
           compact_ts_in(s->fam_version_del, s->n_fam_version_del, ts) ||
           compact_ts_in(s->version_del, s->n_version_del, ts);
}

/* ------------------------------------------------------------------ clock, throttle */

static double
compact_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t
compact_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct compact_run {
    const store_compact_opts *o;
    double start;
    double slept;
    uint64_t polled_bytes;      /* writer bytes at the last block boundary */
} compact_run;

static int
compact_stopped(const compact_run *r)
{
    return r->o->stop != NULL && r->o->stop(r->o->stop_arg) != 0;
}

/* Sleep until `bytes` written since the start took bytes / bytes_per_sec
 * seconds, asking stop between slices. Returns 1 if stop said so. */
static int
compact_throttle(compact_run *r, uint64_t bytes)
{
    if (r->o->bytes_per_sec == 0)
        return compact_stopped(r);
    double due = r->start + (double)bytes / (double)r->o->bytes_per_sec;
    for (;;) {
        if (compact_stopped(r))
            return 1;
        double now = compact_mono();
        if (now >= due)
            return 0;
        double left = due - now;
        long ns = left * 1e9 > (double)COMPACT_SLEEP_SLICE_NS ? COMPACT_SLEEP_SLICE_NS
                                                              : (long)(left * 1e9) + 1;
        struct timespec ts = {0, ns};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        r->slept += compact_mono() - now;
    }
}

/* ------------------------------------------------------------------ write */

static kiln_status
compact_open_writer(const store_compact_opts *o, const schema_family *f, uint64_t seq,
                    const char *path, hfile_writer **w, kiln_err *err)
{
    hfile_writer_options wo;
    hfile_writer_options_init(&wo);
    wo.codec = f->codec;
    wo.block_size = f->block_size;
    wo.bloom = f->bloom;
    wo.sync = 1;
    wo.bulkload_info = 0;      /* a store's own file, not a bulk load */
    kiln_status st = hfile_writer_open(path, &wo, w, err);
    if (st != KILN_OK)
        return st;
    uint8_t major = o->kind == STORE_COMPACT_MAJOR ? 0xFF : 0x00;   /* Bytes.toBytes(boolean) */
    uint8_t exclude = 0x00;
    uint8_t maxseq[8];
    coding_put_be64(maxseq, seq);
    if ((st = hfile_writer_append_fileinfo(*w, HFILE_FI_MAJOR_COMPACTION, &major, 1, err)) !=
            KILN_OK ||
        (st = hfile_writer_append_fileinfo(*w, HFILE_FI_EXCLUDE_FROM_MINOR, &exclude, 1, err)) !=
            KILN_OK ||
        (st = hfile_writer_append_fileinfo(*w, HFILE_FI_MAX_SEQ_ID, maxseq, 8, err)) != KILN_OK) {
        hfile_writer_abandon(*w);
        *w = NULL;
    }
    return st;
}

/* Decide c: 1 = write it, 0 = drop it (counted in st). */
static int
compact_keep(compact_state *s, const store_compact_opts *o, int64_t ttl_ms, uint32_t max_versions,
             int64_t now_ms, const kiln_cell *c, store_compact_stats *st)
{
    compact_state_enter(s, c);
    /* identical keys are adjacent, the larger seq first */
    if (s->have_prev && s->prev_ts == c->ts && s->prev_type == c->type) {
        st->duplicates_dropped++;
        return 0;
    }
    s->prev_ts = c->ts;
    s->prev_type = c->type;
    s->have_prev = 1;
    int expired = ttl_ms != 0 && c->ts < now_ms - ttl_ms;
    if (c->type != CELL_TYPE_PUT) {
        switch (c->type) {
        case CELL_TYPE_DELETE_FAMILY:
            if (c->ts > s->family_del_ts)
                s->family_del_ts = c->ts;
            break;
        case CELL_TYPE_DELETE_FAMILY_VERSION:
            compact_ts_add(&s->fam_version_del, &s->n_fam_version_del, &s->cap_fam_version_del,
                           c->ts);
            break;
        case CELL_TYPE_DELETE_COLUMN:
            if (c->ts > s->col_del_ts)
                s->col_del_ts = c->ts;
            break;
        default:   /* CELL_TYPE_DELETE; others were refused before */
            compact_ts_add(&s->version_del, &s->n_version_del, &s->cap_version_del, c->ts);
            break;
        }
        switch (o->kind) {
        case STORE_COMPACT_FLUSH:
            return 1;
        case STORE_COMPACT_MINOR:
            /* an expired marker masks only Puts at or below its timestamp,
             * expired as well under the same family TTL */
            if (expired) {
                st->expired_dropped++;
                return 0;
            }
            return 1;
        case STORE_COMPACT_MAJOR:
            st->deletes_dropped++;
            return 0;
        }
        return 1;
    }
    if (o->kind == STORE_COMPACT_FLUSH)
        return 1;
    if (compact_masked(s, c->ts)) {
        st->deletes_dropped++;
        return 0;
    }
    if (expired) {
        st->expired_dropped++;
        return 0;
    }
    if (o->kind == STORE_COMPACT_MAJOR) {
        if (s->versions >= max_versions) {
            st->versions_dropped++;
            return 0;
        }
        s->versions++;
    }
    return 1;
}

static kiln_status
compact_check_opts(const store_compact_input *in, size_t n, const store_compact_opts *o,
                   const char *path, kiln_err *err)
{
    if (o == NULL || o->schema == NULL || path == NULL)
        return status_set(err, KILN_INVALID, "compaction: no options, schema or path");
    if (o->family >= o->schema->family_count)
        return status_set(err, KILN_INVALID, "%s: family %zu of %zu in table %s", path,
                          o->family, o->schema->family_count, o->schema->name);
    if (o->kind != STORE_COMPACT_FLUSH && o->kind != STORE_COMPACT_MINOR &&
        o->kind != STORE_COMPACT_MAJOR)
        return status_set(err, KILN_INVALID, "%s: unknown compaction kind %d", path, (int)o->kind);
    if (n > 0 && in == NULL)
        return status_set(err, KILN_INVALID, "%s: %zu inputs but no array", path, n);
    for (size_t i = 0; i < n; i++) {
        if (in[i].it == NULL)
            return status_set(err, KILN_INVALID, "%s: input %zu has no iterator", path, i);
    }
    return KILN_OK;
}

kiln_status
store_compact_write(const store_compact_input *in, size_t n, const store_compact_opts *o,
                    const char *path, store_compact_stats *st, kiln_err *err)
{
    store_compact_stats local;
    if (st == NULL)
        st = &local;
    memset(st, 0, sizeof *st);
    compact_run run = {o, compact_mono(), 0, 0};
    kiln_status rc = compact_check_opts(in, n, o, path, err);
    if (rc != KILN_OK)
        return rc;
    const schema_family *f = &o->schema->families[o->family];
    size_t fam_len = strlen(f->name);
    int64_t ttl_ms = f->ttl_s >= SCHEMA_TTL_FOREVER ? 0 : f->ttl_s * 1000;
    int64_t now_ms = o->now_ms != 0 ? o->now_ms : compact_now_ms();
    uint64_t seq = o->seq;
    for (size_t i = 0; i < n && o->seq == 0; i++)
        seq = in[i].seq > seq ? in[i].seq : seq;

    hfile_writer *w = NULL;
    rc = compact_open_writer(o, f, seq, path, &w, err);
    if (rc != KILN_OK)
        return rc;
    iter_merge *m = iter_merge_new(0);
    for (size_t i = 0; i < n; i++)
        iter_merge_add(m, in[i].it, in[i].seq, 0);
    kiln_iter *it = iter_merge_iter(m);
    compact_state s;
    memset(&s, 0, sizeof s);
    buf_init(&s.row);
    buf_init(&s.qual);

    int cancelled = 0;
    kiln_iter_seek_first(it);
    while (kiln_iter_valid(it)) {
        const kiln_cell *c = kiln_iter_key(it);
        st->cells_in++;
        if (c->family_len != fam_len || memcmp(c->family, f->name, fam_len) != 0) {
            rc = status_set(err, KILN_INVALID,
                            "%s: a cell of family '%.*s' in a compaction of family '%s'", path,
                            (int)(c->family_len > 255 ? 255 : c->family_len),
                            (const char *)c->family, f->name);
            break;
        }
        if (c->type != CELL_TYPE_PUT && c->type != CELL_TYPE_DELETE &&
            c->type != CELL_TYPE_DELETE_COLUMN && c->type != CELL_TYPE_DELETE_FAMILY &&
            c->type != CELL_TYPE_DELETE_FAMILY_VERSION) {
            rc = status_set(err, KILN_INVALID, "%s: a cell of type %u in a compaction input",
                            path, (unsigned)c->type);
            break;
        }
        if (compact_keep(&s, o, ttl_ms, f->max_versions, now_ms, c, st)) {
            kiln_cell out = *c;
            out.mvcc = 0;    /* identical keys are told apart by the file's seq */
            if ((rc = hfile_writer_add(w, &out, err)) != KILN_OK)
                break;
            st->cells_out++;
        }
        uint64_t bytes = hfile_writer_bytes(w);
        if (bytes != run.polled_bytes) {            /* a data block went out */
            run.polled_bytes = bytes;
            if ((cancelled = compact_throttle(&run, bytes)) != 0)
                break;
        } else if (st->cells_in % COMPACT_POLL_CELLS == 0 && (cancelled = compact_stopped(&run))) {
            break;
        }
        if (kiln_iter_next(it) != KILN_OK)
            break;
    }
    if (rc == KILN_OK && !cancelled)
        rc = kiln_iter_status(it, err);
    iter_merge_free(m);
    compact_state_free(&s);

    if (rc == KILN_OK && !cancelled && compact_stopped(&run))
        cancelled = 1;
    if (rc != KILN_OK || cancelled) {
        hfile_writer_abandon(w);
        if (cancelled)
            rc = status_set(err, KILN_CANCELLED, "%s: compaction stopped after %llu of the cells",
                            path, (unsigned long long)st->cells_in);
    } else {
        hfile_writer_stats ws;
        rc = hfile_writer_finish(w, &ws, err);
        if (rc == KILN_OK) {
            st->bytes_out = ws.file_size;
            if (compact_throttle(&run, ws.file_size)) {
                env_unlink(path, NULL);
                rc = status_set(err, KILN_CANCELLED, "%s: compaction stopped at the end", path);
            }
        }
    }
    st->throttle_secs = run.slept;
    st->secs = compact_mono() - run.start;
    return rc;
}

/* ------------------------------------------------------------------ policy */

/* 1 if every file of the run is at most ratio times the others together. */
static int
compact_in_ratio(const uint64_t *sizes, size_t count, uint64_t total, double ratio)
{
    for (size_t i = 0; i < count; i++) {
        if ((double)sizes[i] > (double)(total - sizes[i]) * ratio)
            return 0;
    }
    return 1;
}

size_t
store_compact_pick(const uint64_t *sizes, size_t n, const store_compact_policy *p,
                   size_t *first)
{
    *first = 0;
    size_t min_files = p->min_files < 2 ? 2 : p->min_files;
    size_t max_files = p->max_files < min_files ? min_files : p->max_files;
    size_t best = 0, best_first = 0;
    uint64_t best_total = 0;
    for (size_t start = 0; start + min_files <= n; start++) {
        uint64_t total = 0;
        for (size_t k = 0; k < max_files && start + k < n; k++) {
            total += sizes[start + k];
            size_t count = k + 1;
            if (count < min_files)
                continue;
            if (p->max_size != 0 && total > p->max_size)
                break;   /* longer runs from start only grow */
            if (total >= p->min_size && !compact_in_ratio(sizes + start, count, total, p->ratio))
                continue;
            if (count > best || (count == best && total < best_total)) {
                best = count;
                best_first = start;
                best_total = total;
            }
        }
    }
    if (best == 0 && p->blocking_files != 0 && n >= p->blocking_files) {
        for (size_t start = 0; start + min_files <= n; start++) {
            uint64_t total = 0;
            for (size_t k = 0; k < min_files; k++)
                total += sizes[start + k];
            if (best == 0 || total < best_total) {
                best = min_files;
                best_first = start;
                best_total = total;
            }
        }
    }
    *first = best_first;
    return best;
}
