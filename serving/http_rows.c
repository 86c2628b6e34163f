/* http_rows.c -- the routes that read rows without server state: one row
 * (with columns, versions and times), globs and ranges, multiget, the
 * stateless /TABLE/STAR scan with Kiln's paging, counting and index scans
 * as query parameters of it, and /TABLE/exists.
 *
 * A stateless scan answers every row it selects (as HBase's gateway does)
 * unless the client asks for Kiln's pages (paged=true): then at most
 * page_rows rows or about page_bytes bytes come back, and the answer names
 * the row the next page starts at ("next_startrow"). An unpaged answer
 * larger than scan_max_bytes is refused (413) rather than cut silently.
 */
#include "serving/http_rows.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "storage/query/json.h"
#include "storage/store/store_index.h"

static int
http_rows_filter(http_api *a, filter **f, http_api_reply *out)
{
    *f = NULL;
    if (a->rq.filter.p == NULL)
        return 0;
    kiln_err err;
    status_clear(&err);
    if (filter_parse((const char *)a->rq.filter.p, a->rq.filter.n, f, &err) != KILN_OK) {
        http_handler_fail(a, out, 400, "bad_filter", "%s", err.msg);
        return -1;
    }
    return 0;
}

/* Write row r through filter f (NULL: all cells). Returns 1 if written. */
static int
http_rows_emit(http_api *a, http_cellset *cs, filter *f, const store_row *r, int *done)
{
    *done = 0;
    if (f == NULL) {
        http_cellset_row(cs, r->row, r->cells, r->count);
        return 1;
    }
    kiln_cell *cells = http_handler_fcells(a, r->count);
    size_t n = filter_row(f, r, cells, done);
    if (n == 0)
        return 0;
    http_cellset_row(cs, r->row, cells, n);
    return 1;
}

void
http_rows_exists(http_api *a, views_entry *e, http_api_reply *out)
{
    (void)e;
    out->content_type = "text/plain";
    (void)a;
}

/* An answer over --max-reply-bytes (many rows, many versions of many
 * columns): an error saying how to ask for less, not the bytes. */
static void
http_rows_too_large(http_api *a, http_api_reply *out, const char *what)
{
    http_handler_fail(a, out, 413, "reply_too_large",
                      "the %s answer passed --max-reply-bytes (%zu): ask for fewer rows, columns "
                      "or versions (v=)", what, a->env->max_reply_bytes);
}

static void http_rows_scan_rows(http_api *a, views_entry *e, http_api_reply *out,
                                int rows_named);

void
http_rows_row(http_api *a, views_entry *e, http_api_reply *out)
{
    http_req *q = &a->rq;
    if (q->row_glob || q->row_range) {
        if (q->row_glob) {
            q->so.prefix = q->row.p;
            q->so.prefix_len = q->row.n;
        } else {
            q->so.start = q->row.p;
            q->so.start_len = q->row.n;
            q->so.stop = q->end_row.p;
            q->so.stop_len = q->end_row.n;
        }
        out->route = ROUTE_SCAN;
        http_rows_scan_rows(a, e, out, 1);
        return;
    }
    store_row r;
    kiln_err err;
    status_clear(&err);
    if (views_get(e, a->ctx, q->row.p, q->row.n, &q->so.read, &r, &err) != KILN_OK) {
        http_handler_fail_status(a, out, &err);
        return;
    }
    filter *f;
    if (http_rows_filter(a, &f, out) != 0)
        return;
    if (f != NULL && r.count > 0) {
        int done;
        kiln_cell *cells = http_handler_fcells(a, r.count);
        r.count = filter_row(f, &r, cells, &done);
        r.cells = cells;
    }
    filter_free(f);
    if (r.count == 0) {
        buf_reset(&a->tmp);
        cell_to_string_binary(&a->tmp, q->row.p, q->row.n < 512 ? q->row.n : 512);
        http_handler_fail(a, out, 404, "no_row", "%s: row '%.*s' not found", views_entry_name(e),
                          (int)a->tmp.len, (const char *)a->tmp.data);
        return;
    }
    if (q->rep == HTTP_REP_RAW) {
        if (r.count != 1) {
            /* HBase's row resource answers this with a 400 too */
            http_handler_fail(a, out, 400, "bad_request",
                              "application/octet-stream answers one cell and this read has %zu: "
                              "name one column, or ask for JSON, XML or protobuf", r.count);
            return;
        }
        out->content_type = "application/octet-stream";
        out->has_timestamp = 1;
        out->timestamp = r.cells[0].ts;
        buf_append(&a->body, r.cells[0].value, r.cells[0].value_len);
        return;
    }
    http_cellset cs;
    out->content_type = http_rep_mime(q->rep);
    http_cellset_begin(&cs, q->rep, &a->body);
    http_cellset_row(&cs, r.row, r.cells, r.count);
    http_cellset_end(&cs, NULL);
    http_cellset_free(&cs);
    if (a->body.len > a->env->max_reply_bytes)
        http_rows_too_large(a, out, "row");
}

void
http_rows_multiget(http_api *a, views_entry *e, http_api_reply *out)
{
    http_req *q = &a->rq;
    if (q->nrows == 0) {
        http_handler_fail(a, out, 400, "bad_request", "multiget needs at least one row= parameter");
        return;
    }
    filter *f;
    if (http_rows_filter(a, &f, out) != 0)
        return;
    http_rep rep = q->rep == HTTP_REP_RAW ? HTTP_REP_JSON : q->rep;
    http_cellset cs;
    out->content_type = http_rep_mime(rep);
    http_cellset_begin(&cs, rep, &a->body);
    size_t found = 0;
    for (size_t i = 0; i < q->nrows; i++) {
        store_row r;
        kiln_err err;
        int done;
        status_clear(&err);
        if (views_get(e, a->ctx, q->rows[i].p, q->rows[i].n, &q->so.read, &r, &err) !=
            KILN_OK) {
            http_handler_fail_status(a, out, &err);
            goto end;
        }
        if (r.count > 0)
            found += (size_t)http_rows_emit(a, &cs, f, &r, &done);
        if (a->body.len > a->env->max_reply_bytes) {
            http_rows_too_large(a, out, "multiget");
            goto end;
        }
    }
    if (found == 0) {
        http_handler_fail(a, out, 404, "no_row", "%s: none of the %zu rows exists",
                          views_entry_name(e), q->nrows);
        goto end;
    }
    http_cellset_end(&cs, NULL);
end:
    http_cellset_free(&cs);
    filter_free(f);
}

/* A scan with index=NAME[&value=V]...[&value_start=A][&value_stop=B][&after=K]:
 * the table's rows through its secondary index NAME (storage/store_index.h).
 * When a page is cut short the JSON carries "next_after": B64. */
static void
http_rows_index_scan(http_api *a, views_entry *e, http_api_reply *out)
{
    http_req *q = &a->rq;
    store_index_opts io;
    store_index_opts_init(&io);
    kslice vals[STORE_INDEX_COLUMNS_MAX];
    kslice index = kslice_make(NULL, 0);
    kslice query = q->http->query, name, value;
    kbuf dec = KBUF_INIT;
    buf_reserve(&dec, q->http->query.n + 1);   /* decoded values never move */
    while (http_query_next(&query, &name, &value)) {
        kslice *dst = NULL;
        if (http_slice_ieq(name, "index"))
            dst = &index;
        else if (http_slice_ieq(name, "value")) {
            if (io.nvalues == STORE_INDEX_COLUMNS_MAX) {
                http_handler_fail(a, out, 400, "bad_request", "more than %d values",
                                  STORE_INDEX_COLUMNS_MAX);
                goto done;
            }
            dst = &vals[io.nvalues++];
        } else if (http_slice_ieq(name, "value_start")) {
            dst = &io.value_start;
            io.has_value_start = 1;
        } else if (http_slice_ieq(name, "value_stop")) {
            dst = &io.value_stop;
            io.has_value_stop = 1;
        } else if (http_slice_ieq(name, "after")) {
            dst = &io.after;
        }
        if (dst == NULL)
            continue;
        size_t off = dec.len;
        if (http_pct_decode(value, 1, &dec) != 0 || dec.len - off > CELL_ROW_MAX) {
            http_handler_fail(a, out, 400, "bad_request", "%.*s: bad value", (int)name.n,
                              (const char *)name.p);
            goto done;
        }
        buf_append_u8(&dec, '\0');
        *dst = kslice_make(dec.data + off, dec.len - off - 1);
    }
    if (index.n == 0 || memchr(index.p, '\0', index.n) != NULL) {
        http_handler_fail(a, out, 400, "bad_request", "index: bad index name");
        goto done;
    }
    if (q->so.start_len > 0 || q->so.stop_len > 0 || q->so.prefix_len > 0 || q->so.reversed) {
        http_handler_fail(a, out, 400, "bad_request",
                          "index scans take value, value_start, value_stop and after, not "
                          "startrow, endrow, prefix or reversed");
        goto done;
    }
    io.values = vals;
    io.read = q->so.read;
    uint64_t page = a->env->page_rows;
    if (q->has_limit && q->so.limit < page)
        page = q->so.limit;
    io.limit = page + 1;
    store_index_scan *s;
    kiln_err err;
    status_clear(&err);
    if (store_index_scan_open(views_entry_view(e), (const char *)index.p, &io, &s, &err) !=
        KILN_OK) {
        http_handler_fail_status(a, out, &err);
        goto done;
    }
    http_cellset cs;
    http_cellset_begin(&cs, HTTP_REP_JSON, &a->body);
    uint64_t rows = 0;
    kbuf last = KBUF_INIT;
    for (;;) {
        store_row r;
        int has;
        if (store_index_scan_next(s, &r, &has, &err) != KILN_OK) {
            http_handler_fail_status(a, out, &err);
            break;
        }
        if (!has) {
            http_cellset_end(&cs, NULL);
            break;
        }
        if (rows == page || a->body.len >= a->env->page_bytes) {
            json_raw(&a->body, "],\"next_after\":\"");
            json_b64_append(&a->body, last.data, last.len);
            json_raw(&a->body, "\"}\n");
            break;
        }
        rows++;
        http_cellset_row(&cs, r.row, r.cells, r.count);
        kslice pos = store_index_scan_position(s);
        buf_reset(&last);
        buf_append(&last, pos.p, pos.n);
    }
    buf_free(&last);
    http_cellset_free(&cs);
    store_index_scan_close(s);
done:
    buf_free(&dec);
}

static int64_t
http_rows_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* count=true: rows counted, in pages of count_rows rows or HTTP_API_COUNT_MS
 * (the request deadline, a time slice, if shorter). */
static void
http_rows_count(http_api *a, views_entry *e, http_api_reply *out)
{
    store_scan_opts so = a->rq.so;
    so.reversed = 0;
    so.limit = a->env->count_rows + 1;
    so.max_skipped = HTTP_API_SKIP_BATCH;
    store_scan *s;
    kiln_err err;
    status_clear(&err);
    if (store_scan_open(views_entry_view(e), &so, &s, &err) != KILN_OK) {
        http_handler_fail_status(a, out, &err);
        return;
    }
    int64_t deadline = http_rows_mono_ms() + (a->env->deadline_ms < HTTP_API_COUNT_MS
                                                  ? a->env->deadline_ms
                                                  : HTTP_API_COUNT_MS);
    uint64_t rows = 0;
    for (;;) {
        store_row r;
        int has;
        if (store_scan_next(s, &r, &has, &err) != KILN_OK) {
            store_scan_close(s);
            http_handler_fail_status(a, out, &err);
            return;
        }
        kslice resume;
        if (!has && store_scan_yielded(s, &resume)) {
            if (http_rows_mono_ms() <= deadline)
                continue;
            /* past rows without cells: count on from there next time */
            json_raw(&a->body, "{\"count\":");
            json_u64(&a->body, rows);
            json_raw(&a->body, ",\"next_startrow\":\"");
            json_b64_append(&a->body, resume.p, resume.n);
            json_raw(&a->body, "\"}\n");
            store_scan_close(s);
            return;
        }
        if (!has)
            break;
        if (rows == a->env->count_rows ||
            (rows > 0 && (rows & 255) == 0 && http_rows_mono_ms() > deadline)) {
            json_raw(&a->body, "{\"count\":");
            json_u64(&a->body, rows);
            json_raw(&a->body, ",\"next_startrow\":\"");
            json_b64_append(&a->body, r.row.p, r.row.n);
            json_raw(&a->body, "\"}\n");
            store_scan_close(s);
            return;
        }
        rows++;
    }
    store_scan_close(s);
    json_raw(&a->body, "{\"count\":");
    json_u64(&a->body, rows);
    json_raw(&a->body, "}\n");
}

void
http_rows_scan(http_api *a, views_entry *e, http_api_reply *out)
{
    http_rows_scan_rows(a, e, out, 0);
}

/* A scan of the table (GET /TABLE/STAR) or of the rows a row spec names (a
 * glob or a range). For a row spec, as in HBase's row resource, finding no
 * row is a 404; an empty table scan is an empty CellSet.
 *
 * The scan holds the worker for one slice (deadline_ms) at a time. A paged
 * scan answers what it has at the end of the slice, with next_startrow. An
 * unpaged one yields there: its store scan (which keeps the version and
 * its place), filter, rows so far and the answer so far go into the
 * connection's continuation, and the next call with the same request
 * (a->resume; e is NULL then) goes on from them, so the answer is the one
 * an unsliced scan gives. */
static void
http_rows_scan_rows(http_api *a, views_entry *e, http_api_reply *out, int rows_named)
{
    http_req *q = &a->rq;
    if (q->has_index) {
        http_rows_index_scan(a, e, out);
        return;
    }
    if (q->count) {
        out->route = ROUTE_COUNT;
        http_rows_count(a, e, out);
        return;
    }
    http_api_cont *k = a->resume;   /* the slices before this one; NULL for the first */
    a->resume = NULL;
    filter *f = NULL;
    store_scan *s = NULL;
    uint64_t seen = 0, rows = 0;
    kiln_err err;
    status_clear(&err);
    if (k != NULL) {
        f = k->filter;
        s = k->scan;
        k->filter = NULL;
        k->scan = NULL;
        seen = k->seen;
        rows = k->rows;
    } else if (http_rows_filter(a, &f, out) != 0) {
        return;
    }
    uint64_t page = q->paged ? a->env->page_rows : UINT64_MAX - 1;
    if (q->has_limit && q->so.limit < page)
        page = q->so.limit;
    int64_t deadline = http_rows_mono_ms() + a->env->deadline_ms;
    if (s == NULL) {
        store_scan_opts so = q->so;
        /* with a filter the store cannot stop at the limit: rows may be dropped */
        so.limit = f != NULL ? 0 : page + 1;
        so.max_skipped = HTTP_API_SKIP_BATCH;
        if (store_scan_open(views_entry_view(e), &so, &s, &err) != KILN_OK) {
            filter_free(f);
            http_handler_fail_status(a, out, &err);
            return;
        }
    }
    http_rep rep = q->rep == HTTP_REP_RAW ? HTTP_REP_JSON : q->rep;
    http_cellset cs;
    out->content_type = http_rep_mime(rep);
    if (k != NULL) {
        kbuf t = a->body;   /* the answer so far back into the reply's buffer */
        a->body = k->body;
        k->body = t;
        http_cellset_continue(&cs, rep, &a->body, k->cs_rows);
    } else {
        http_cellset_begin(&cs, rep, &a->body);
    }
    for (;;) {
        store_row r;
        int has, done = 0;
        if (store_scan_next(s, &r, &has, &err) != KILN_OK) {
            http_handler_fail_status(a, out, &err);
            goto end;
        }
        /* A scan passing over rows it does not answer with (no cell in the
         * asked columns, or dropped by the filter) checks the clock, so one
         * request cannot hold the worker past its slice. */
        kslice resume;
        int yielded = !has && store_scan_yielded(s, &resume);
        if (!has && !yielded)
            break;
        if (q->paged && (yielded || (++seen & 255) == 0) && http_rows_mono_ms() > deadline) {
            http_cellset_end(&cs, yielded ? &resume : &r.row);
            goto end;
        }
        if (yielded) {
            if (!q->paged && http_rows_mono_ms() > deadline)
                goto slice;
            continue;
        }
        if (rows == page || (q->paged && a->body.len >= a->env->page_bytes)) {
            if (q->paged || rows < q->so.limit) {
                http_cellset_end(&cs, &r.row);
                goto end;
            }
            break;
        }
        if (!q->paged && a->body.len >= a->env->scan_max_bytes) {
            http_handler_fail(a, out, 413, "scan_too_large",
                              "the answer passed %zu bytes: page it (limit= and startrow=, or "
                              "Kiln's paged=true) or use a scanner (PUT /TABLE/scanner)",
                              a->env->scan_max_bytes);
            goto end;
        }
        rows += (uint64_t)http_rows_emit(a, &cs, f, &r, &done);
        if (done)
            break;
        /* the row is done with: the scan can stop here and go on later */
        if (!q->paged && (++seen & 255) == 0 && http_rows_mono_ms() > deadline)
            goto slice;
    }
    if (rows == 0 && rows_named && !q->paged) {
        buf_reset(&a->tmp);
        cell_to_string_binary(&a->tmp, q->row.p, q->row.n < 512 ? q->row.n : 512);
        http_handler_fail(a, out, 404, "no_row", "%s: no row matches '%.*s%s'",
                          k != NULL ? k->table : views_entry_name(e), (int)a->tmp.len,
                          (const char *)a->tmp.data, q->row_glob ? "*" : ",...");
        goto end;
    }
    http_cellset_end(&cs, NULL);
end:
    http_cellset_free(&cs);
    store_scan_close(s);
    filter_free(f);
    http_handler_cont_free(k);
    return;
slice:
    /* the end of the slice: give the worker back, keeping the scan */
    if (k == NULL) {
        k = kiln_calloc(1, sizeof *k);
        buf_append(&k->id, a->req_id.data, a->req_id.len);
        snprintf(k->table, sizeof k->table, "%s", views_entry_name(e));
        k->version = views_entry_version(e);
    }
    k->scan = s;
    k->filter = f;
    k->seen = seen;
    k->rows = rows;
    k->cs_rows = cs.rows;
    kbuf t = a->body;
    a->body = k->body;
    k->body = t;
    buf_reset(&a->body);
    http_cellset_free(&cs);
    *a->cont = k;
    out->yield = 1;
}
