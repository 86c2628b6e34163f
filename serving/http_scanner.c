/* http_scanner.c -- the registry and handlers of http_scanner.h.
 *
 * The registry is a fixed array of `max` slots under one mutex; a slot
 * holds a scanner or NULL, and the free slots form a stack. A scanner's ID
 * is its slot (8 hex digits) and 16 unguessable ones, so a lookup reads one
 * slot; idle scanners are looked for at most every sweep interval, so no
 * request walks the whole array. A scanner keeps its store scan (which holds the
 * version), its filter, and the row it is in the middle of: a batch counts
 * cells, so a row can end one batch and start the next. Nothing grows with
 * the number of requests; closing a scanner frees all it holds.
 *
 * A GET holds its worker for the request deadline at most: at the deadline
 * it answers the rows it has (a short batch), or, with none yet, yields
 * (http_api_reply.yield) and is asked again on a later turn of the
 * worker's loop, going on from the scanner's place. It never answers an
 * empty 200, which clients take for the end of the scan: 204 only there.
 */
#include "serving/http_scanner.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serving/scanner_spec.h"
#include "storage/query/json.h"
#include "storage/store/schema.h"

typedef struct http_scanner {
    char id[HTTP_SCANNER_ID_LEN + 1];
    struct http_scanner *next_closed;   /* on a sweep's list of scanners to close */
    char table[SCHEMA_NAME_MAX + 1];
    uint64_t version;
    store_scan *scan;
    filter *filter;
    scanner_spec spec;        /* the scan's options point into it */
    int64_t batch;            /* cells per answer */
    uint64_t limit, rows;     /* rows at most (0: none), rows started */
    int busy, ended;
    int64_t used_ms;
    /* the row in progress: cells [pos, row.count) are still to send */
    store_row row;
    size_t pos;
    int has_row;
    kiln_cell *cells;         /* the row's cells after the filter */
    size_t cap;
} http_scanner;

struct http_scanners {
    pthread_mutex_t mu;
    http_scanner **slots;
    size_t *free_slots;       /* a stack of the empty slots */
    size_t nfree;
    size_t max, open;
    long idle_ms;
    int64_t swept_ms;         /* last sweep for idle scanners */
    uint64_t next_id, salt;
};

static int64_t
http_scanner_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

http_scanners *
http_scanners_new(size_t max, long idle_ms)
{
    http_scanners *s = kiln_calloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->max = max ? max : HTTP_SCANNERS_MAX_DEFAULT;
    s->slots = kiln_calloc(s->max, sizeof *s->slots);
    s->free_slots = kiln_calloc(s->max, sizeof *s->free_slots);
    for (size_t i = 0; i < s->max; i++)
        s->free_slots[i] = s->max - 1 - i;   /* slot 0 on top */
    s->nfree = s->max;
    s->idle_ms = idle_ms > 0 ? idle_ms : HTTP_SCANNER_IDLE_MS_DEFAULT;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s->salt = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)ts.tv_sec;
    return s;
}

static void
http_scanner_close(http_scanner *sc)
{
    if (sc == NULL)
        return;
    store_scan_close(sc->scan);
    filter_free(sc->filter);
    scanner_spec_free(&sc->spec);
    free(sc->cells);
    free(sc);
}

void
http_scanners_free(http_scanners *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->max; i++)
        http_scanner_close(s->slots[i]);
    free(s->slots);
    free(s->free_slots);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

size_t
http_scanners_count(http_scanners *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->open;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* Take slot i's scanner out. REQUIRES: s->mu held. */
static void
http_scanners_remove(http_scanners *s, size_t i)
{
    s->slots[i] = NULL;
    s->free_slots[s->nfree++] = i;
    s->open--;
}

/* Close the scanners idle longer than idle_ms; walks the slots at most once
 * per sweep interval (a quarter of idle_ms, at most a second) unless
 * `force`. The closed ones are freed outside the lock. */
static void
http_scanners_sweep(http_scanners *s, int force)
{
    int64_t now = http_scanner_now_ms();
    long every = s->idle_ms / 4 < 1000 ? s->idle_ms / 4 : 1000;
    http_scanner *closed = NULL;
    pthread_mutex_lock(&s->mu);
    if (force || now - s->swept_ms >= every) {
        s->swept_ms = now;
        for (size_t i = 0; i < s->max && s->open > 0; i++) {
            http_scanner *sc = s->slots[i];
            if (sc != NULL && !sc->busy && now - sc->used_ms > s->idle_ms) {
                http_scanners_remove(s, i);
                sc->next_closed = closed;
                closed = sc;
            }
        }
    }
    pthread_mutex_unlock(&s->mu);
    while (closed != NULL) {
        http_scanner *next = closed->next_closed;
        http_scanner_close(closed);
        closed = next;
    }
}

/* ------------------------------------------------------------------ create */

void
http_scanner_create(http_api *a, views_entry *e, http_api_reply *out)
{
    http_req *q = &a->rq;
    http_scanners *reg = a->env->scanners;
    if (reg == NULL) {
        http_handler_fail(a, out, 503, "unavailable", "scanners are not enabled");
        return;
    }
    http_scanner *sc = kiln_calloc(1, sizeof *sc);
    scanner_spec_init(&sc->spec);
    scanner_spec *sp = &sc->spec;
    kiln_err err;
    status_clear(&err);
    kslice body = q->http->body;
    http_rep brep = http_rep_from_content_type(q->http->content_type);
    if (body.n == 0 && brep != HTTP_REP_PB)
        body = brep == HTTP_REP_XML ? kslice_make("<Scanner/>", 10) : kslice_make("{}", 2);
    filter *f = NULL;
    if (scanner_spec_parse(body.p, body.n, brep, sp, &err) != KILN_OK) {
        http_handler_fail(a, out, 400, "bad_scanner", "%s", err.msg);
        goto out;
    }
    if (sp->has_filter &&
        filter_parse((const char *)sp->filter.data, sp->filter.len, &f, &err) != KILN_OK) {
        http_handler_fail(a, out, 400, "bad_filter", "%s", err.msg);
        goto out;
    }
    store_scan_opts so;
    store_scan_opts_init(&so);
    so.start = sp->start.data;
    so.start_len = sp->start.len;
    so.stop = sp->end.data;
    so.stop_len = sp->end.len;
    so.reversed = sp->reversed;
    so.read.columns = sp->ncols ? sp->cols : NULL;
    so.read.column_count = sp->ncols;
    so.read.max_versions = (uint32_t)sp->max_versions;
    so.read.ts_min = sp->start_time;
    so.read.ts_max = sp->end_time > 0 ? sp->end_time : INT64_MAX;
    so.limit = f == NULL ? (uint64_t)sp->limit : 0;
    so.max_skipped = HTTP_API_SKIP_BATCH;   /* so that a GET can watch the clock */
    if (store_scan_open(views_entry_view(e), &so, &sc->scan, &err) != KILN_OK) {
        http_handler_fail_status(a, out, &err);
        goto out;
    }
    snprintf(sc->table, sizeof sc->table, "%s", views_entry_name(e));
    sc->version = views_entry_version(e);
    sc->filter = f;
    f = NULL;
    sc->batch = sp->batch > 0 ? sp->batch : HTTP_SCANNER_BATCH_DEFAULT;
    sc->limit = (uint64_t)sp->limit;
    sc->used_ms = http_scanner_now_ms();

    pthread_mutex_lock(&reg->mu);
    int full = reg->nfree == 0;
    pthread_mutex_unlock(&reg->mu);
    http_scanners_sweep(reg, full);   /* when full, now: idle ones make room */
    pthread_mutex_lock(&reg->mu);
    size_t slot = reg->max;
    if (reg->nfree > 0) {
        slot = reg->free_slots[--reg->nfree];
        uint64_t x = (++reg->next_id + reg->salt) * 0xBF58476D1CE4E5B9ull;
        snprintf(sc->id, sizeof sc->id, "%08zx%016" PRIx64, slot, x ^ (x >> 31));
        reg->slots[slot] = sc;
        reg->open++;
    }
    pthread_mutex_unlock(&reg->mu);
    if (slot == reg->max) {
        http_handler_fail(a, out, 503, "too_many_scanners",
                          "%zu scanners are open, the most this server keeps; DELETE the ones "
                          "you are done with (idle ones close after %ld s)",
                          reg->max, reg->idle_ms / 1000);
        goto out;
    }
    /* Location: http://HOST/TABLE/scanner/ID (the table as the client named it) */
    kslice host = q->http->host.n > 0 ? q->http->host : kslice_make(a->env->listen,
                                                                    strlen(a->env->listen));
    int n = snprintf(a->location, sizeof a->location, "http://%.*s/%.*s/scanner/%s",
                     (int)host.n, (const char *)host.p, (int)q->seg[0].n,
                     (const char *)q->seg[0].p, sc->id);
    if (n < 0 || (size_t)n >= sizeof a->location)
        snprintf(a->location, sizeof a->location, "/%.*s/scanner/%s",
                 (int)(q->seg[0].n > 250 ? 250 : q->seg[0].n), (const char *)q->seg[0].p,
                 sc->id);
    sc = NULL;
    out->status = 201;
    out->location = a->location;
    out->content_type = "text/plain";
out:
    http_scanner_close(sc);
    filter_free(f);
}

/* ------------------------------------------------------------------ use */

/* The slot an ID names (its first 8 hex digits), or SIZE_MAX. */
static size_t
http_scanner_slot_of(kslice id)
{
    if (id.n != HTTP_SCANNER_ID_LEN)
        return SIZE_MAX;
    size_t slot = 0;
    for (size_t i = 0; i < 8; i++) {
        uint8_t c = id.p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return SIZE_MAX;
        slot = slot * 16 + (size_t)d;
    }
    return slot;
}

/* Find q->name and mark it busy. NULL with the reply filled if absent. */
static http_scanner *
http_scanner_take(http_api *a, http_api_reply *out, int remove)
{
    http_scanners *reg = a->env->scanners;
    http_req *q = &a->rq;
    if (reg == NULL) {
        http_handler_fail(a, out, 404, "no_scanner", "no such scanner");
        return NULL;
    }
    http_scanners_sweep(reg, 0);
    /* the scanner belongs to the table it was made on */
    char canon[SCHEMA_NAME_MAX + 1], tname[SCHEMA_NAME_MAX + 1];
    kiln_err err;
    snprintf(tname, sizeof tname, "%.*s", (int)q->table.n, (const char *)q->table.p);
    int named = schema_name_canon(tname, canon, &err) == KILN_OK;
    http_scanner *found = NULL;
    int busy = 0;
    size_t i = http_scanner_slot_of(q->name);
    pthread_mutex_lock(&reg->mu);
    http_scanner *sc = i < reg->max ? reg->slots[i] : NULL;
    if (sc != NULL && named && strlen(sc->id) == q->name.n &&
        memcmp(sc->id, q->name.p, q->name.n) == 0 && strcmp(canon, sc->table) == 0) {
        if (sc->busy) {
            busy = 1;
        } else {
            found = sc;
            if (remove)
                http_scanners_remove(reg, i);
            else
                sc->busy = 1;
        }
    }
    pthread_mutex_unlock(&reg->mu);
    if (busy)
        http_handler_fail(a, out, 409, "scanner_busy", "scanner %.*s is answering another request",
                          (int)(q->name.n > 64 ? 64 : q->name.n), (const char *)q->name.p);
    else if (found == NULL)
        http_handler_fail(a, out, 404, "no_scanner", "scanner %.*s: not found (closed or expired)",
                          (int)(q->name.n > 64 ? 64 : q->name.n), (const char *)q->name.p);
    return found;
}

static void
http_scanner_give_back(http_api *a, http_scanner *sc)
{
    http_scanners *reg = a->env->scanners;
    pthread_mutex_lock(&reg->mu);
    sc->busy = 0;
    sc->used_ms = http_scanner_now_ms();
    pthread_mutex_unlock(&reg->mu);
}

void
http_scanner_delete(http_api *a, http_api_reply *out)
{
    http_scanner *sc = http_scanner_take(a, out, 1);
    if (sc == NULL)
        return;
    http_scanner_close(sc);
    out->content_type = "text/plain";
}

/* Load the next row that has cells to send: 1, or 0 at the end, -1 on
 * error, 2 when the clock passed `deadline` while passing over rows
 * without cells to send (the scan keeps its place for the next call). */
static int
http_scanner_fill(http_scanner *sc, int64_t deadline, kiln_err *err)
{
    unsigned passed = 0;
    while (!sc->ended) {
        if (sc->limit > 0 && sc->rows >= sc->limit) {
            sc->ended = 1;
            break;
        }
        int has;
        if (store_scan_next(sc->scan, &sc->row, &has, err) != KILN_OK)
            return -1;
        if (!has) {
            kslice resume;
            if (store_scan_yielded(sc->scan, &resume)) {
                /* max_skipped rows without a cell in the asked columns */
                if (http_scanner_now_ms() > deadline)
                    return 2;
                continue;
            }
            sc->ended = 1;
            break;
        }
        if (sc->filter != NULL) {
            if (sc->row.count > sc->cap) {
                free(sc->cells);
                sc->cap = sc->row.count;
                sc->cells = kiln_calloc(sc->cap, sizeof *sc->cells);
            }
            int done;
            sc->row.count = filter_row(sc->filter, &sc->row, sc->cells, &done);
            sc->row.cells = sc->cells;
            if (done)
                sc->ended = 1;   /* this row is the last (PageFilter full) */
            if (sc->row.count == 0) {
                if ((++passed & 15) == 0 && !sc->ended && http_scanner_now_ms() > deadline)
                    return 2;
                continue;
            }
        }
        sc->rows++;
        sc->pos = 0;
        sc->has_row = 1;
        return 1;
    }
    return 0;
}

void
http_scanner_next(http_api *a, http_api_reply *out)
{
    http_scanner *sc = http_scanner_take(a, out, 0);
    if (sc == NULL)
        return;
    http_req *q = &a->rq;
    http_rep rep = q->rep == HTTP_REP_RAW ? HTTP_REP_JSON : q->rep;
    out->has_version = 1;
    out->version = sc->version;
    out->content_type = http_rep_mime(rep);
    http_cellset cs;
    http_cellset_begin(&cs, rep, &a->body);
    int64_t left = sc->batch;
    uint64_t rows = 0;
    int64_t deadline = http_scanner_now_ms() + a->env->deadline_ms;
    kiln_err err;
    status_clear(&err);
    while (left > 0) {
        if (!sc->has_row) {
            if (q->n > 0 && rows == q->n)
                break;
            int r = http_scanner_fill(sc, deadline, &err);
            if (r < 0) {
                http_handler_fail_status(a, out, &err);
                goto out;
            }
            if (r == 0)
                break;
            if (r == 2) {
                if (cs.rows > 0)
                    break;   /* a short batch: what was found by the deadline */
                /* Nothing yet, and an empty 200 would read as the end to a
                 * client: give the worker back and go on at a later turn. */
                out->yield = 1;
                buf_reset(&a->body);
                goto out;
            }
        }
        size_t n = sc->row.count - sc->pos;
        if ((int64_t)n > left)
            n = (size_t)left;
        http_cellset_row(&cs, sc->row.row, sc->row.cells + sc->pos, n);
        rows++;
        sc->pos += n;
        left -= (int64_t)n;
        if (sc->pos == sc->row.count)
            sc->has_row = 0;
    }
    if (cs.rows == 0) {
        out->status = 204;
        buf_reset(&a->body);
        goto out;
    }
    http_cellset_end(&cs, NULL);
out:
    http_cellset_free(&cs);
    http_scanner_give_back(a, sc);
}
