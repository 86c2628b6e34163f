/* http_write.c -- the cell writes of http_write.h. A request becomes row
 * mutations (cellset_parse.h for bodies, the path for deletes and raw
 * values) and one speed-layer call: speed_mutate, speed_check_and_mutate,
 * speed_increment, or write_ops_append's compare-and-set loop. Messages of
 * refusals name what is wrong, as HBase's "Bad request: ..." texts do.
 */
#include "serving/http_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serving/cellset_parse.h"
#include "serving/write_ops.h"
#include "storage/base/coding.h"

/* The query parameters a write reads (the others are http_req.c's). */
typedef struct http_write_q {
    kslice check;              /* decoded; n == 0 if absent */
    int rr;                    /* rr=true: answer the new values */
    kiln_durability dur;
} http_write_q;

static int
http_write_query(http_api *a, http_write_q *wq, http_api_reply *out)
{
    memset(wq, 0, sizeof *wq);
    wq->dur = KILN_DUR_DEFAULT;
    kslice query = a->rq.http->query, name, value;
    while (http_query_next(&query, &name, &value)) {
        int is_check = http_slice_ieq(name, "check");
        if (!is_check && !http_slice_ieq(name, "rr") && !http_slice_ieq(name, "durability"))
            continue;
        size_t off = a->tmp2.len;
        if (http_pct_decode(value, 1, &a->tmp2) != 0) {
            http_handler_fail(a, out, 400, "bad_request", "%.*s: bad %%-escape", (int)name.n,
                              (const char *)name.p);
            return -1;
        }
        kslice v = kslice_make(a->tmp2.data + off, a->tmp2.len - off);
        if (is_check) {
            wq->check = v;
        } else if (http_slice_ieq(name, "rr")) {
            wq->rr = http_slice_ieq(v, "true");
        } else {
            char d[24];
            snprintf(d, sizeof d, "%.*s", (int)(v.n < 23 ? v.n : 23), (const char *)v.p);
            if (v.n > 23 || mutation_durability_parse(d, &wq->dur) != 0) {
                http_handler_fail(a, out, 400, "bad_request",
                                  "durability must be SKIP_WAL, ASYNC_WAL, SYNC_WAL, FSYNC_WAL "
                                  "or USE_DEFAULT");
                return -1;
            }
        }
    }
    return 0;
}

static void
http_write_ok(http_api *a, http_api_reply *out)
{
    buf_reset(&a->body);
    out->status = 200;
    out->content_type = "text/plain";
    out->body = &a->body;
}

/* 304: a failed check. The reply has no body (HTTP forbids one). */
static void
http_write_not_modified(http_api *a, http_api_reply *out)
{
    buf_reset(&a->body);
    out->status = 304;
    out->content_type = "text/plain";
    out->body = &a->body;
}

/* A speed-layer error: 400 bad input (an unknown family), 404 unknown
 * table, 501 a table the speed layer cannot write, 503 busy, else 500. */
static void
http_write_fail(http_api *a, http_api_reply *out, const kiln_err *err)
{
    if (err->code == KILN_UNSUPPORTED)
        http_handler_fail(a, out, 501, "unsupported", "%s", err->msg);
    else if (err->code == KILN_BUSY)
        http_handler_fail(a, out, 503, "busy", "%s", err->msg);
    else
        http_handler_fail_status(a, out, err);
}

static void
http_write_free_muts(kiln_mutation *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mutation_free(&m[i]);
    free(m);
}

/* The path's columns as "family[:qualifier]" byte strings (for cells of a
 * CellSet without a column), in a->tmp. */
static size_t
http_write_path_columns(http_api *a, kslice *cols)
{
    http_req *q = &a->rq;
    size_t total = 0;
    for (size_t i = 0; i < q->ncols; i++)
        total += strlen(q->cols[i].family) + 1 + q->cols[i].qualifier_len;
    buf_reset(&a->tmp);
    buf_reserve(&a->tmp, total + 1);   /* no moves below: slices stay valid */
    for (size_t i = 0; i < q->ncols; i++) {
        const store_column *c = &q->cols[i];
        size_t off = a->tmp.len;
        buf_append(&a->tmp, c->family, strlen(c->family));
        if (c->qualifier != NULL) {
            buf_append_u8(&a->tmp, ':');
            buf_append(&a->tmp, c->qualifier, c->qualifier_len);
        }
        cols[i] = kslice_make(a->tmp.data + off, a->tmp.len - off);
    }
    return q->ncols;
}

/* ------------------------------------------------------------------ raw value */

static void
http_write_binary(http_api *a, views_entry *e, const http_write_q *wq, http_api_reply *out)
{
    http_req *q = &a->rq;
    const http_request *req = q->http;
    kslice row = q->row;
    kslice xrow = http_header_get(req, "X-Row");
    kslice xcol = http_header_get(req, "X-Column");
    kslice xts = http_header_get(req, "X-Timestamp");
    if (xrow.p != NULL)
        row = xrow;
    kslice fam, qual;
    if (xcol.p != NULL) {
        if (!cellset_split_column(xcol, &fam, &qual)) {
            http_handler_fail(a, out, 400, "bad_request", "X-Column must be FAMILY:QUALIFIER");
            return;
        }
    } else if (q->ncols == 0) {
        http_handler_fail(a, out, 400, "bad_request",
                          "column found to be null: a raw value is written to /TABLE/ROW/"
                          "FAMILY:QUALIFIER");
        return;
    } else if (q->cols[0].qualifier == NULL) {
        http_handler_fail(a, out, 400, "bad_request", "column must be FAMILY:QUALIFIER");
        return;
    } else {
        fam = kslice_str(q->cols[0].family);
        qual = kslice_make(q->cols[0].qualifier, q->cols[0].qualifier_len);
    }
    int64_t ts = q->has_times ? q->so.read.ts_min : CELL_LATEST_TIMESTAMP;
    if (xts.p != NULL && write_ops_parse_i64(xts.p, xts.n, &ts) != 0) {
        http_handler_fail(a, out, 400, "bad_request", "X-Timestamp must be milliseconds");
        return;
    }
    if (ts < 0 || row.n == 0 || row.n > CELL_ROW_MAX) {
        http_handler_fail(a, out, 400, "bad_request", "a row of 1..%d bytes and a timestamp "
                          ">= 0 are needed", CELL_ROW_MAX);
        return;
    }
    kiln_mutation m;
    mutation_init(&m, row.p, row.n);
    mutation_put(&m, fam.p, fam.n, qual.p, qual.n, ts, req->body.p, req->body.n);
    kiln_err err;
    status_clear(&err);
    if (speed_mutate(a->env->speed, views_entry_name(e), &m, 1, wq->dur, &err) != KILN_OK)
        http_write_fail(a, out, &err);
    else
        http_write_ok(a, out);
    mutation_free(&m);
}

/* ------------------------------------------------------------------ path deletes */

static void
http_write_delete_path(http_api *a, views_entry *e, const http_write_q *wq, http_api_reply *out)
{
    http_req *q = &a->rq;
    if (q->has_times && q->so.read.ts_max - q->so.read.ts_min != 1) {
        http_handler_fail(a, out, 400, "bad_request", "a delete takes one timestamp, not a range");
        return;
    }
    int64_t ts = q->has_times ? q->so.read.ts_min : CELL_LATEST_TIMESTAMP;
    kiln_mutation m;
    mutation_init(&m, q->row.p, q->row.n);
    if (q->ncols == 0) {
        /* HBase's Delete of a row: every family of the table */
        const kiln_schema *sc = views_entry_schema(e);
        for (size_t i = 0; i < sc->family_count; i++)
            mutation_delete(&m, CELL_TYPE_DELETE_FAMILY, sc->families[i].name,
                            strlen(sc->families[i].name), NULL, 0, ts);
    }
    for (size_t i = 0; i < q->ncols; i++) {
        const store_column *c = &q->cols[i];
        if (c->qualifier == NULL)
            mutation_delete(&m, CELL_TYPE_DELETE_FAMILY, c->family, strlen(c->family), NULL, 0,
                            ts);
        else
            mutation_delete(&m, CELL_TYPE_DELETE_COLUMN, c->family, strlen(c->family),
                            c->qualifier, c->qualifier_len, ts);
    }
    kiln_err err;
    status_clear(&err);
    if (speed_mutate(a->env->speed, views_entry_name(e), &m, 1, wq->dur, &err) != KILN_OK)
        http_write_fail(a, out, &err);
    else
        http_write_ok(a, out);
    mutation_free(&m);
}

/* ------------------------------------------------------------------ CellSet forms */

/* The one row of a check/increment/append CellSet and its key. */
static const cellset_row *
http_write_one_row(http_api *a, const cellset *cs, kslice *key, http_api_reply *out)
{
    if (cs->nrows != 1) {
        http_handler_fail(a, out, 400, "bad_request", "number of rows specified is not 1");
        return NULL;
    }
    const cellset_row *r = &cs->rows[0];
    *key = r->has_key ? cellset_slice(cs, r->key_off, r->key_len) : a->rq.row;
    if (key->n == 0 || key->n > CELL_ROW_MAX) {
        http_handler_fail(a, out, 400, "bad_request", "row key must be 1..%d bytes",
                          CELL_ROW_MAX);
        return NULL;
    }
    if (r->count == 0) {
        http_handler_fail(a, out, 400, "bad_request", "no cells given");
        return NULL;
    }
    return r;
}

/* A cell's family as a NUL-terminated name in buf (room for
 * CELL_FAMILY_MAX + 1). 0, or -1 (reply filled) for a bad name. */
static int
http_write_family(http_api *a, kslice fam, char *buf, http_api_reply *out)
{
    if (fam.n == 0 || fam.n > CELL_FAMILY_MAX || memchr(fam.p, '\0', fam.n) != NULL ||
        !schema_family_name_ok((const char *)fam.p, fam.n)) {
        http_handler_fail(a, out, 400, "bad_request", "bad family name '%.*s'",
                          (int)(fam.n > 64 ? 64 : fam.n), (const char *)fam.p);
        return -1;
    }
    memcpy(buf, fam.p, fam.n);
    buf[fam.n] = '\0';
    return 0;
}

static void
http_write_check_put(http_api *a, views_entry *e, const cellset *cs, const http_write_q *wq,
                     http_api_reply *out)
{
    kslice key;
    const cellset_row *r = http_write_one_row(a, cs, &key, out);
    if (r == NULL)
        return;
    if (r->count < 2) {
        http_handler_fail(a, out, 400, "bad_request", "check=put takes the cells to put and, "
                          "last, the expected value of one of their columns");
        return;
    }
    const cellset_cell *chk = &cs->cells[r->first + r->count - 1];
    kslice ccol = cellset_slice(cs, chk->column_off, chk->column_len), cfam, cqual;
    if (!chk->has_column || !cellset_split_column(ccol, &cfam, &cqual) || cqual.n == 0) {
        http_handler_fail(a, out, 400, "bad_request", "column incorrectly specified: the check "
                          "cell needs FAMILY:QUALIFIER");
        return;
    }
    kiln_mutation m;
    mutation_init(&m, key.p, key.n);
    int matched = 0;
    for (size_t i = 0; i + 1 < r->count; i++) {
        const cellset_cell *c = &cs->cells[r->first + i];
        kslice col = cellset_slice(cs, c->column_off, c->column_len), f, qq;
        if (!c->has_column || !cellset_split_column(col, &f, &qq)) {
            mutation_free(&m);
            http_handler_fail(a, out, 400, "bad_request", "cell %zu: column must be "
                              "FAMILY:QUALIFIER", i + 1);
            return;
        }
        matched |= kslice_eq(col, ccol);
        mutation_put(&m, f.p, f.n, qq.p, qq.n, c->ts, cs->bytes.data + c->value_off,
                     c->value_len);
    }
    char fam[CELL_FAMILY_MAX + 1];
    if (!matched) {
        mutation_free(&m);
        http_handler_fail(a, out, 400, "bad_request", "the column to put and check do not match");
        return;
    }
    if (http_write_family(a, cfam, fam, out) != 0) {
        mutation_free(&m);
        return;
    }
    speed_check sc = {fam, cqual.p, cqual.n, cs->bytes.data + chk->value_off, chk->value_len};
    if (chk->value_len == 0)
        sc.expected = NULL;   /* HBase: an empty expected value means "absent" */
    kiln_err err;
    status_clear(&err);
    int applied = 0;
    if (speed_check_and_mutate(a->env->speed, views_entry_name(e), &sc, &m, wq->dur, &applied,
                               &err) != KILN_OK)
        http_write_fail(a, out, &err);
    else if (!applied)
        http_write_not_modified(a, out);
    else
        http_write_ok(a, out);
    mutation_free(&m);
}

static void
http_write_check_delete(http_api *a, views_entry *e, const cellset *cs, const http_write_q *wq,
                        http_api_reply *out)
{
    kslice key;
    const cellset_row *r = http_write_one_row(a, cs, &key, out);
    if (r == NULL)
        return;
    const cellset_cell *chk = &cs->cells[r->first + r->count - 1];
    kslice ccol, cfam, cqual;
    kslice pathcols[HTTP_API_COLUMNS_MAX];
    if (chk->has_column) {
        ccol = cellset_slice(cs, chk->column_off, chk->column_len);
    } else if (http_write_path_columns(a, pathcols) > 0) {
        ccol = pathcols[0];
    } else {
        http_handler_fail(a, out, 400, "bad_request", "column not specified for check");
        return;
    }
    if (!cellset_split_column(ccol, &cfam, &cqual)) {
        http_handler_fail(a, out, 400, "bad_request", "column to check incorrectly specified "
                          "(FAMILY:QUALIFIER)");
        return;
    }
    kiln_mutation m;
    mutation_init(&m, key.p, key.n);
    for (size_t i = 0; i + 1 < r->count; i++) {
        const cellset_cell *c = &cs->cells[r->first + i];
        kslice col = cellset_slice(cs, c->column_off, c->column_len), f, qq;
        if (!c->has_column) {
            mutation_free(&m);
            http_handler_fail(a, out, 400, "bad_request", "cell %zu: column found to be null",
                              i + 1);
            return;
        }
        if (cellset_split_column(col, &f, &qq))
            mutation_delete(&m, CELL_TYPE_DELETE, f.p, f.n, qq.p, qq.n, c->ts);
        else
            mutation_delete(&m, CELL_TYPE_DELETE_FAMILY, f.p, f.n, NULL, 0, c->ts);
    }
    if (r->count == 1)   /* the check cell alone: its column goes */
        mutation_delete(&m, CELL_TYPE_DELETE_COLUMN, cfam.p, cfam.n, cqual.p, cqual.n,
                        CELL_LATEST_TIMESTAMP);
    char fam[CELL_FAMILY_MAX + 1];
    if (http_write_family(a, cfam, fam, out) != 0) {
        mutation_free(&m);
        return;
    }
    speed_check sc = {fam, cqual.p, cqual.n, cs->bytes.data + chk->value_off, chk->value_len};
    if (chk->value_len == 0)
        sc.expected = NULL;
    kiln_err err;
    status_clear(&err);
    int applied = 0;
    if (speed_check_and_mutate(a->env->speed, views_entry_name(e), &sc, &m, wq->dur, &applied,
                               &err) != KILN_OK)
        http_write_fail(a, out, &err);
    else if (!applied)
        http_write_not_modified(a, out);
    else
        http_write_ok(a, out);
    mutation_free(&m);
}

/* The cells of an increment or append: each one's column (the cell's, or
 * the path's in order). 0, or -1 with the reply filled. */
static int
http_write_cell_columns(http_api *a, const cellset *cs, const cellset_row *r, kslice *fams,
                        kslice *quals, http_api_reply *out)
{
    kslice pathcols[HTTP_API_COLUMNS_MAX];
    size_t np = http_write_path_columns(a, pathcols), next = 0;
    for (size_t i = 0; i < r->count; i++) {
        const cellset_cell *c = &cs->cells[r->first + i];
        kslice col;
        if (c->has_column) {
            col = cellset_slice(cs, c->column_off, c->column_len);
        } else if (next < np) {
            col = pathcols[next++];
        } else {
            http_handler_fail(a, out, 400, "bad_request", "cell %zu: column found to be null",
                              i + 1);
            return -1;
        }
        if (!cellset_split_column(col, &fams[i], &quals[i])) {
            http_handler_fail(a, out, 400, "bad_request", "cell %zu: column incorrectly "
                              "specified (FAMILY:QUALIFIER)", i + 1);
            return -1;
        }
    }
    return 0;
}

/* rr=true: the new values of row key as a CellSet in the Accept form. */
static void
http_write_result(http_api *a, kslice key, const kiln_cell *cells, size_t n, http_api_reply *out)
{
    http_write_ok(a, out);
    http_rep rep = a->rq.rep == HTTP_REP_RAW ? HTTP_REP_JSON : a->rq.rep;
    out->content_type = http_rep_mime(rep);
    http_cellset cset;
    http_cellset_begin(&cset, rep, &a->body);
    http_cellset_row(&cset, key, cells, n);
    http_cellset_end(&cset, NULL);
    http_cellset_free(&cset);
}

#define HTTP_WRITE_OPS_MAX 256

static void
http_write_increment(http_api *a, views_entry *e, const cellset *cs, const http_write_q *wq,
                     int append, http_api_reply *out)
{
    kslice key;
    const cellset_row *r = http_write_one_row(a, cs, &key, out);
    if (r == NULL)
        return;
    if (r->count > HTTP_WRITE_OPS_MAX) {
        http_handler_fail(a, out, 400, "bad_request", "more than %d cells", HTTP_WRITE_OPS_MAX);
        return;
    }
    kslice fams[HTTP_WRITE_OPS_MAX], quals[HTTP_WRITE_OPS_MAX];
    if (http_write_cell_columns(a, cs, r, fams, quals, out) != 0)
        return;
    /* family names NUL-terminated, one after another */
    static _Thread_local char names[HTTP_WRITE_OPS_MAX][CELL_FAMILY_MAX + 1];
    for (size_t i = 0; i < r->count; i++) {
        if (http_write_family(a, fams[i], names[i], out) != 0)
            return;
    }
    kiln_err err;
    status_clear(&err);
    kiln_cell cells[HTTP_WRITE_OPS_MAX];
    memset(cells, 0, r->count * sizeof cells[0]);
    kbuf vals = KBUF_INIT;
    size_t offs[HTTP_WRITE_OPS_MAX];
    if (append) {
        kbuf nv = KBUF_INIT;
        for (size_t i = 0; i < r->count; i++) {
            const cellset_cell *c = &cs->cells[r->first + i];
            if (write_ops_append(a->env->speed, views_entry_name(e), key, names[i], quals[i],
                                 cellset_slice(cs, c->value_off, c->value_len), wq->dur, &nv,
                                 &err) != KILN_OK) {
                buf_free(&nv);
                buf_free(&vals);
                http_write_fail(a, out, &err);
                return;
            }
            offs[i] = vals.len;
            buf_append(&vals, nv.data, nv.len);
            cells[i].value_len = (uint32_t)nv.len;
        }
        buf_free(&nv);
    } else {
        speed_incr incr[HTTP_WRITE_OPS_MAX];
        int64_t sums[HTTP_WRITE_OPS_MAX];
        for (size_t i = 0; i < r->count; i++) {
            const cellset_cell *c = &cs->cells[r->first + i];
            if (write_ops_parse_i64(cs->bytes.data + c->value_off, c->value_len,
                                    &incr[i].delta) != 0) {
                http_handler_fail(a, out, 400, "bad_request",
                                  "cell %zu: the value must be a decimal delta", i + 1);
                return;
            }
            incr[i].family = names[i];
            incr[i].qualifier = quals[i].p;
            incr[i].qualifier_len = quals[i].n;
        }
        if (speed_increment(a->env->speed, views_entry_name(e), key.p, key.n, incr, r->count,
                            wq->dur, sums, &err) != KILN_OK) {
            http_write_fail(a, out, &err);
            return;
        }
        for (size_t i = 0; i < r->count; i++) {
            offs[i] = vals.len;
            buf_append_be64(&vals, (uint64_t)sums[i]);
            cells[i].value_len = 8;
        }
    }
    if (!wq->rr) {
        buf_free(&vals);
        http_write_ok(a, out);
        return;
    }
    /* the new cells' timestamps: read back (a concurrent write may have
     * replaced a value since; then the time is now's) */
    kbuf back = KBUF_INIT;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    for (size_t i = 0; i < r->count; i++) {
        int64_t ts = now_ms;
        int found = 0;
        status_clear(&err);
        if (write_ops_read(a->env->speed, views_entry_name(e), key, names[i], quals[i], &back,
                           &ts, &found, &err) != KILN_OK || !found ||
            back.len != cells[i].value_len ||
            memcmp(back.data, vals.data + offs[i], back.len) != 0)
            ts = now_ms;
        cells[i].ts = ts;
    }
    buf_free(&back);
    for (size_t i = 0; i < r->count; i++) {
        cells[i].row = key.p;
        cells[i].row_len = (uint32_t)key.n;
        cells[i].family = (const uint8_t *)names[i];
        cells[i].family_len = (uint32_t)strlen(names[i]);
        cells[i].qualifier = quals[i].p;
        cells[i].qualifier_len = (uint32_t)quals[i].n;
        cells[i].type = CELL_TYPE_PUT;
        cells[i].value = vals.data + offs[i];
    }
    http_write_result(a, key, cells, r->count, out);
    buf_free(&vals);
}

static void
http_write_cellset(http_api *a, views_entry *e, const http_write_q *wq, http_api_reply *out)
{
    http_req *q = &a->rq;
    const http_request *req = q->http;
    http_rep rep = http_rep_from_content_type(req->content_type);
    cellset cs;
    cellset_init(&cs);
    kiln_err err;
    status_clear(&err);
    if (cellset_parse(req->body.p, req->body.n, rep, &cs, &err) != KILN_OK) {
        http_handler_fail(a, out, 400, "bad_body", "%s", err.msg);
        cellset_free(&cs);
        return;
    }
    if (wq->check.n > 0) {
        if (http_slice_ieq(wq->check, "put") && q->method != HM_DELETE)
            http_write_check_put(a, e, &cs, wq, out);
        else if (http_slice_ieq(wq->check, "delete"))
            http_write_check_delete(a, e, &cs, wq, out);
        else if (http_slice_ieq(wq->check, "increment") && q->method != HM_DELETE)
            http_write_increment(a, e, &cs, wq, 0, out);
        else if (http_slice_ieq(wq->check, "append") && q->method != HM_DELETE)
            http_write_increment(a, e, &cs, wq, 1, out);
        else
            http_handler_fail(a, out, 400, "bad_request", "invalid check value '%.*s'",
                              (int)(wq->check.n > 32 ? 32 : wq->check.n),
                              (const char *)wq->check.p);
        cellset_free(&cs);
        return;
    }
    kslice cols[HTTP_API_COLUMNS_MAX];
    size_t ncols = http_write_path_columns(a, cols);
    kiln_mutation *m;
    size_t n;
    status_clear(&err);
    if (cellset_puts(&cs, &q->row, cols, ncols, &m, &n, &err) != KILN_OK) {
        http_handler_fail(a, out, 400, "bad_body", "%s", err.msg);
        cellset_free(&cs);
        return;
    }
    status_clear(&err);
    if (speed_mutate(a->env->speed, views_entry_name(e), m, n, wq->dur, &err) != KILN_OK)
        http_write_fail(a, out, &err);
    else
        http_write_ok(a, out);
    http_write_free_muts(m, n);
    cellset_free(&cs);
}

void
http_write_row(http_api *a, views_entry *e, http_api_reply *out)
{
    http_req *q = &a->rq;
    out->route = ROUTE_WRITE;
    buf_reset(&a->tmp2);
    buf_reserve(&a->tmp2, q->http->query.n + 1);
    http_write_q wq;
    if (http_write_query(a, &wq, out) != 0)
        return;
    if (q->row_glob || q->row_range) {
        http_handler_fail(a, out, 400, "bad_request", "a write names one row (no '*' or ',')");
        return;
    }
    if (q->method == HM_DELETE && wq.check.n == 0) {
        http_write_delete_path(a, e, &wq, out);
        return;
    }
    if (q->method != HM_DELETE && http_rep_from_content_type(q->http->content_type) ==
                                      HTTP_REP_RAW) {
        http_write_binary(a, e, &wq, out);
        return;
    }
    http_write_cellset(a, e, &wq, out);
}
