/* remote.c -- client reads through kiln-server (remote.h). Requests are
 * built with every key percent-encoded; answers are parsed with
 * serving/json.h and their base64 fields decoded into one arena per page,
 * sized up front so that the cells' pointers into it stay valid.
 */
#include "cli/remote.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serving/http.h"
#include "serving/http_client.h"
#include "serving/json.h"
#include "storage/cell.h"
#include "storage/table.h"

struct remote {
    http_client *http;
    kbuf target;
    /* the rows of the last answer */
    kbuf arena;
    kiln_cell *cells;
    size_t cells_cap;
    store_row *rows;
    size_t rows_cap, nrows;
};

struct remote_scan {
    remote *r;
    char *table;
    store_scan_opts so;
    kbuf start, stop, prefix;
    store_column *cols;
    char **fams;
    kbuf *quals;
    uint64_t returned;
    size_t next;                 /* next row of the current page */
    int more;                    /* the server said where the next page starts */
    kbuf next_start;
    kbuf index;                  /* an index scan: "index=..&value=.." encoded; else empty */
};

kiln_status
remote_open(const char *server, remote **out, kiln_err *err)
{
    *out = NULL;
    remote *r = kiln_calloc(1, sizeof *r);
    kiln_status st = http_client_open(server, REMOTE_TIMEOUT_MS, &r->http, err);
    if (st != KILN_OK) {
        free(r);
        return st;
    }
    *out = r;
    return KILN_OK;
}

void
remote_close(remote *r)
{
    if (r == NULL)
        return;
    http_client_close(r->http);
    buf_free(&r->target);
    buf_free(&r->arena);
    free(r->cells);
    free(r->rows);
    free(r);
}

/* ------------------------------------------------------------------ requests */

static void
remote_str(kbuf *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

static void
remote_enc(kbuf *b, const uint8_t *p, size_t n)
{
    http_pct_encode(b, p, n);
}

static void
remote_param(kbuf *b, const char *name, const uint8_t *p, size_t n)
{
    buf_append_u8(b, b->len > 0 && memchr(b->data, '?', b->len) ? '&' : '?');
    remote_str(b, name);
    buf_append_u8(b, '=');
    remote_enc(b, p, n);
}

static void
remote_param_u64(kbuf *b, const char *name, uint64_t v)
{
    char num[24];
    int n = snprintf(num, sizeof num, "%" PRIu64, v);
    remote_param(b, name, (const uint8_t *)num, (size_t)n);
}

/* "f,f2:q" from the columns (qualifier NULL = whole family). */
static void
remote_columns(kbuf *b, const store_column *cols, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            buf_append_u8(b, ',');
        remote_enc(b, (const uint8_t *)cols[i].family, strlen(cols[i].family));
        if (cols[i].qualifier != NULL) {
            buf_append_u8(b, ':');
            remote_enc(b, cols[i].qualifier, cols[i].qualifier_len);
        }
    }
}

/* Read options as query parameters. */
static void
remote_read_params(kbuf *b, const store_row_opts *o, int columns)
{
    if (o->max_versions > 1)
        remote_param_u64(b, "v", o->max_versions);
    if (o->ts_min > 0)
        remote_param_u64(b, "starttime", (uint64_t)o->ts_min);
    if (o->ts_max < INT64_MAX)
        remote_param_u64(b, "endtime", (uint64_t)o->ts_max);
    if (columns && o->column_count > 0) {
        kbuf cols = KBUF_INIT;
        remote_columns(&cols, o->columns, o->column_count);
        buf_append_u8(b, b->len > 0 && memchr(b->data, '?', b->len) ? '&' : '?');
        remote_str(b, "column=");
        buf_append(b, cols.data, cols.len);
        buf_free(&cols);
    }
}

static void
remote_table_path(kbuf *b, const char *table)
{
    buf_reset(b);
    buf_append_u8(b, '/');
    remote_enc(b, (const uint8_t *)table, strlen(table));
}

/* Turn an error answer into a status: the server's message, and a code
 * from its "code". */
static kiln_status
remote_fail(remote *r, const http_client_response *resp, kiln_err *err)
{
    (void)r;
    json_doc *d = NULL;
    const char *code = "", *msg = NULL;
    if (json_parse((const char *)resp->body.p, resp->body.n, &d, NULL) == KILN_OK) {
        const char *c = json_str(json_get(json_root(d), "code"), NULL);
        code = c ? c : "";
        msg = json_str(json_get(json_root(d), "message"), NULL);
    }
    kiln_status st;
    if (strcmp(code, "no_table") == 0 || strcmp(code, "not_found") == 0)
        st = KILN_NOT_FOUND;
    else if (strcmp(code, "invalid") == 0 || strcmp(code, "bad_request") == 0)
        st = KILN_INVALID;
    else if (strcmp(code, "corruption") == 0)
        st = KILN_CORRUPTION;
    else if (strcmp(code, "io") == 0)
        st = KILN_IO;
    else
        st = KILN_INTERNAL;
    if (msg != NULL)
        status_set(err, st, "%s", msg);
    else
        status_set(err, st, "server answered %d", resp->status);
    json_doc_free(d);
    return st;
}

/* GET r->target and parse a 2xx JSON answer (*doc) or fail. A 404 with code
 * no_row sets *no_row instead when no_row is not NULL. */
static kiln_status
remote_call(remote *r, json_doc **doc, int *no_row, http_client_response *resp, kiln_err *err)
{
    *doc = NULL;
    if (no_row != NULL)
        *no_row = 0;
    buf_append_u8(&r->target, '\0');
    kiln_status st = http_client_get(r->http, (const char *)r->target.data, "application/json",
                                     resp, err);
    r->target.len--;
    if (st != KILN_OK)
        return st;
    if (resp->status == 404 && no_row != NULL) {
        json_doc *d = NULL;
        if (json_parse((const char *)resp->body.p, resp->body.n, &d, NULL) == KILN_OK) {
            const char *code = json_str(json_get(json_root(d), "code"), NULL);
            if (code != NULL && strcmp(code, "no_row") == 0)
                *no_row = 1;
        }
        json_doc_free(d);
        if (*no_row)
            return KILN_OK;
    }
    if (resp->status < 200 || resp->status > 299)
        return remote_fail(r, resp, err);
    kiln_err e2;
    status_clear(&e2);
    if (json_parse((const char *)resp->body.p, resp->body.n, doc, &e2) != KILN_OK)
        return status_set(err, KILN_CORRUPTION, "server answer: %s", e2.msg);
    return KILN_OK;
}

/* ------------------------------------------------------------------ rows */

static size_t
remote_b64_room(const json_node *v)
{
    size_t n = 0;
    json_str(v, &n);
    return n / 4 * 3 + 3;
}

static kiln_status
remote_b64(remote *r, const json_node *v, const char *what, size_t *off, size_t *len,
           kiln_err *err)
{
    size_t n;
    const char *s = json_str(v, &n);
    if (s == NULL)
        return status_set(err, KILN_CORRUPTION, "server answer: %s is not a string", what);
    *off = r->arena.len;
    if (json_b64_decode(s, n, &r->arena) != 0)
        return status_set(err, KILN_CORRUPTION, "server answer: %s is not base64", what);
    *len = r->arena.len - *off;
    return KILN_OK;
}

/* Decode the "Row" array of an answer into r->rows (cells in r->cells,
 * bytes in r->arena). */
static kiln_status
remote_decode_rows(remote *r, const json_node *rows, kiln_err *err)
{
    r->nrows = 0;
    buf_reset(&r->arena);
    size_t nrows = json_len(rows), ncells = 0, room = 0;
    if (rows != NULL && json_node_type(rows) != JSON_ARRAY)
        return status_set(err, KILN_CORRUPTION, "server answer: Row is not an array");
    for (size_t i = 0; i < nrows; i++) {
        const json_node *row = json_at(rows, i);
        const json_node *cells = json_get(row, "Cell");
        room += remote_b64_room(json_get(row, "key"));
        ncells += json_len(cells);
        for (size_t k = 0; k < json_len(cells); k++) {
            room += remote_b64_room(json_get(json_at(cells, k), "column"));
            room += remote_b64_room(json_get(json_at(cells, k), "$"));
        }
    }
    buf_reserve(&r->arena, room + 16);   /* no reallocation below: pointers stay valid */
    if (nrows > r->rows_cap) {
        r->rows_cap = nrows;
        r->rows = kiln_realloc(r->rows, r->rows_cap * sizeof *r->rows);
    }
    if (ncells > r->cells_cap) {
        r->cells_cap = ncells;
        r->cells = kiln_realloc(r->cells, r->cells_cap * sizeof *r->cells);
    }
    size_t c = 0;
    for (size_t i = 0; i < nrows; i++) {
        const json_node *row = json_at(rows, i);
        size_t ko, kl;
        kiln_status st = remote_b64(r, json_get(row, "key"), "key", &ko, &kl, err);
        if (st != KILN_OK)
            return st;
        const json_node *cells = json_get(row, "Cell");
        store_row *sr = &r->rows[i];
        sr->row = kslice_make(r->arena.data + ko, kl);
        sr->cells = r->cells + c;
        sr->count = json_len(cells);
        for (size_t k = 0; k < sr->count; k++, c++) {
            const json_node *cell = json_at(cells, k);
            size_t co, cl, vo, vl;
            int64_t ts;
            if ((st = remote_b64(r, json_get(cell, "column"), "column", &co, &cl, err)) != KILN_OK ||
                (st = remote_b64(r, json_get(cell, "$"), "value", &vo, &vl, err)) != KILN_OK)
                return st;
            if (json_int(json_get(cell, "timestamp"), &ts) != 0)
                return status_set(err, KILN_CORRUPTION, "server answer: bad timestamp");
            const uint8_t *col = r->arena.data + co;
            const uint8_t *colon = memchr(col, ':', cl);
            if (colon == NULL)
                return status_set(err, KILN_CORRUPTION, "server answer: column without ':'");
            kiln_cell *kc = &r->cells[c];
            memset(kc, 0, sizeof *kc);
            kc->row = sr->row.p;
            kc->row_len = (uint32_t)kl;
            kc->family = col;
            kc->family_len = (uint32_t)(colon - col);
            kc->qualifier = colon + 1;
            kc->qualifier_len = (uint32_t)(cl - kc->family_len - 1);
            kc->ts = ts;
            kc->type = CELL_TYPE_PUT;
            kc->value = r->arena.data + vo;
            kc->value_len = (uint32_t)vl;
        }
    }
    r->nrows = nrows;
    return KILN_OK;
}

kiln_status
remote_get(remote *r, const char *table, const uint8_t *row, size_t n, const store_row_opts *o,
           store_row *out, kiln_err *err)
{
    memset(out, 0, sizeof *out);
    remote_table_path(&r->target, table);
    buf_append_u8(&r->target, '/');
    remote_enc(&r->target, row, n);
    if (o->column_count > 0) {
        buf_append_u8(&r->target, '/');
        remote_columns(&r->target, o->columns, o->column_count);
    }
    remote_read_params(&r->target, o, 0);
    json_doc *d;
    int no_row;
    http_client_response resp;
    kiln_status st = remote_call(r, &d, &no_row, &resp, err);
    if (st != KILN_OK)
        return st;
    if (no_row) {
        out->row = kslice_make(row, n);
        return KILN_OK;
    }
    st = remote_decode_rows(r, json_get(json_root(d), "Row"), err);
    json_doc_free(d);
    if (st != KILN_OK)
        return st;
    if (r->nrows > 0)
        *out = r->rows[0];
    else
        out->row = kslice_make(row, n);
    return KILN_OK;
}

/* ------------------------------------------------------------------ scans */

static void
remote_scan_target(remote_scan *s, const uint8_t *start, size_t start_len, uint64_t limit,
                   const char *route)
{
    kbuf *b = &s->r->target;
    remote_table_path(b, s->table);
    /* Kiln's count and pages are query parameters of HBase's scan route */
    remote_str(b, "/*");
    if (s->index.len > 0) {
        buf_append_u8(b, '?');
        buf_append(b, s->index.data, s->index.len);
    }
    remote_param(b, strcmp(route, "count") == 0 ? "count" : "paged", (const uint8_t *)"true", 4);
    if (start_len > 0)
        remote_param(b, s->index.len > 0 ? "after" : "startrow", start, start_len);
    if (s->so.stop_len > 0)
        remote_param(b, "endrow", s->so.stop, s->so.stop_len);
    if (s->so.prefix_len > 0)
        remote_param(b, "prefix", s->so.prefix, s->so.prefix_len);
    if (limit > 0)
        remote_param_u64(b, "limit", limit);
    if (s->so.reversed)
        remote_param(b, "reversed", (const uint8_t *)"true", 4);
    remote_read_params(b, &s->so.read, 1);
}

/* Copy o (its pointers borrow from the caller) into s. */
static void
remote_scan_copy_opts(remote_scan *s, const store_scan_opts *o)
{
    s->so = *o;
    buf_append(&s->start, o->start, o->start_len);
    buf_append(&s->stop, o->stop, o->stop_len);
    buf_append(&s->prefix, o->prefix, o->prefix_len);
    s->so.start = s->start.data;
    s->so.stop = s->stop.data;
    s->so.prefix = s->prefix.data;
    size_t n = o->read.column_count;
    s->cols = kiln_calloc(n ? n : 1, sizeof *s->cols);
    s->fams = kiln_calloc(n ? n : 1, sizeof *s->fams);
    s->quals = kiln_calloc(n ? n : 1, sizeof *s->quals);
    for (size_t i = 0; i < n; i++) {
        const store_column *c = &o->read.columns[i];
        s->fams[i] = (char *)kiln_memdup(c->family, strlen(c->family) + 1);
        buf_init(&s->quals[i]);
        buf_append(&s->quals[i], c->qualifier, c->qualifier ? c->qualifier_len : 0);
        s->cols[i].family = s->fams[i];
        s->cols[i].qualifier = c->qualifier ? (s->quals[i].data ? s->quals[i].data
                                                                : (const uint8_t *)"")
                                            : NULL;
        s->cols[i].qualifier_len = c->qualifier ? c->qualifier_len : 0;
    }
    s->so.read.columns = s->cols;
}

/* Fetch the page starting at start. */
static kiln_status
remote_scan_page(remote_scan *s, const uint8_t *start, size_t start_len, kiln_err *err)
{
    uint64_t limit = s->so.limit > 0 ? s->so.limit - s->returned : 0;
    remote_scan_target(s, start, start_len, limit, "*");
    json_doc *d;
    http_client_response resp;
    kiln_status st = remote_call(s->r, &d, NULL, &resp, err);
    if (st != KILN_OK)
        return st;
    st = remote_decode_rows(s->r, json_get(json_root(d), "Row"), err);
    s->next = 0;
    s->more = 0;
    const char *next = s->index.len > 0 ? "next_after" : "next_startrow";
    const json_node *ns = json_get(json_root(d), next);
    if (st == KILN_OK && ns != NULL) {
        size_t n;
        const char *t = json_str(ns, &n);
        buf_reset(&s->next_start);
        if (t == NULL || json_b64_decode(t, n, &s->next_start) != 0)
            st = status_set(err, KILN_CORRUPTION, "server answer: bad %s", next);
        else
            s->more = 1;
    }
    json_doc_free(d);
    return st;
}

kiln_status
remote_scan_open(remote *r, const char *table, const store_scan_opts *o, remote_scan **out,
                 kiln_err *err)
{
    *out = NULL;
    remote_scan *s = kiln_calloc(1, sizeof *s);
    s->r = r;
    s->table = (char *)kiln_memdup(table, strlen(table) + 1);
    remote_scan_copy_opts(s, o);
    kiln_status st = remote_scan_page(s, s->so.start, s->so.start_len, err);
    if (st != KILN_OK) {
        remote_scan_close(s);
        return st;
    }
    *out = s;
    return KILN_OK;
}

kiln_status
remote_index_scan_open(remote *r, const char *table, const char *index,
                       const store_index_opts *o, remote_scan **out, kiln_err *err)
{
    *out = NULL;
    remote_scan *s = kiln_calloc(1, sizeof *s);
    s->r = r;
    s->table = (char *)kiln_memdup(table, strlen(table) + 1);
    store_scan_opts so;
    store_scan_opts_init(&so);
    so.read = o->read;
    so.limit = o->limit;
    remote_scan_copy_opts(s, &so);
    /* "?" + these parameters starts every page's query (remote_scan_target) */
    remote_str(&s->index, "index=");
    remote_enc(&s->index, (const uint8_t *)index, strlen(index));
    for (size_t i = 0; i < o->nvalues; i++) {
        remote_str(&s->index, "&value=");
        remote_enc(&s->index, o->values[i].p, o->values[i].n);
    }
    if (o->has_value_start) {
        remote_str(&s->index, "&value_start=");
        remote_enc(&s->index, o->value_start.p, o->value_start.n);
    }
    if (o->has_value_stop) {
        remote_str(&s->index, "&value_stop=");
        remote_enc(&s->index, o->value_stop.p, o->value_stop.n);
    }
    kiln_status st = remote_scan_page(s, o->after.p, o->after.n, err);
    if (st != KILN_OK) {
        remote_scan_close(s);
        return st;
    }
    *out = s;
    return KILN_OK;
}

kiln_status
remote_scan_next(remote_scan *s, store_row *out, int *has_row, kiln_err *err)
{
    *has_row = 0;
    for (;;) {
        if (s->so.limit > 0 && s->returned >= s->so.limit)
            return KILN_OK;
        if (s->next < s->r->nrows) {
            *out = s->r->rows[s->next++];
            s->returned++;
            *has_row = 1;
            return KILN_OK;
        }
        if (!s->more)
            return KILN_OK;
        kbuf start = s->next_start;
        buf_init(&s->next_start);
        kiln_status st = remote_scan_page(s, start.data, start.len, err);
        buf_free(&start);
        if (st != KILN_OK)
            return st;
    }
}

void
remote_scan_close(remote_scan *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->so.read.column_count; i++) {
        free(s->fams[i]);
        buf_free(&s->quals[i]);
    }
    free(s->fams);
    free(s->quals);
    free(s->cols);
    free(s->table);
    buf_free(&s->start);
    buf_free(&s->stop);
    buf_free(&s->prefix);
    buf_free(&s->next_start);
    buf_free(&s->index);
    free(s);
}

#define REMOTE_COUNT_RESTARTS 5

kiln_status
remote_count(remote *r, const char *table, const store_scan_opts *o, uint64_t *rows,
             kiln_err *err)
{
    *rows = 0;
    store_scan_opts so = *o;
    so.reversed = 0;
    so.limit = 0;
    remote_scan *s = kiln_calloc(1, sizeof *s);
    s->r = r;
    s->table = (char *)kiln_memdup(table, strlen(table) + 1);
    remote_scan_copy_opts(s, &so);
    kiln_status st = KILN_OK;
    for (int attempt = 0; attempt < REMOTE_COUNT_RESTARTS; attempt++) {
        uint64_t total = 0, version = 0;
        int first = 1, changed = 0;
        kbuf start = KBUF_INIT;
        buf_append(&start, s->so.start, s->so.start_len);
        for (;;) {
            remote_scan_target(s, start.data, start.len, 0, "count");
            json_doc *d;
            http_client_response resp;
            st = remote_call(r, &d, NULL, &resp, err);
            if (st != KILN_OK)
                break;
            if (!first && resp.has_version && resp.version != version)
                changed = 1;
            version = resp.version;
            first = 0;
            int64_t n;
            if (json_int(json_get(json_root(d), "count"), &n) != 0 || n < 0) {
                json_doc_free(d);
                st = status_set(err, KILN_CORRUPTION, "server answer: bad count");
                break;
            }
            total += (uint64_t)n;
            const json_node *ns = json_get(json_root(d), "next_startrow");
            size_t len;
            const char *t = json_str(ns, &len);
            buf_reset(&start);
            if (ns != NULL && (t == NULL || json_b64_decode(t, len, &start) != 0)) {
                json_doc_free(d);
                st = status_set(err, KILN_CORRUPTION, "server answer: bad next_startrow");
                break;
            }
            json_doc_free(d);
            if (ns == NULL || changed)
                break;
        }
        buf_free(&start);
        if (st != KILN_OK || !changed) {
            *rows = total;
            break;
        }
    }
    remote_scan_close(s);
    return st;
}

/* ------------------------------------------------------------------ tables */

kiln_status
remote_list(remote *r, char ***names, size_t *count, kiln_err *err)
{
    *names = NULL;
    *count = 0;
    buf_reset(&r->target);
    buf_append_u8(&r->target, '/');
    json_doc *d;
    http_client_response resp;
    kiln_status st = remote_call(r, &d, NULL, &resp, err);
    if (st != KILN_OK)
        return st;
    const json_node *list = json_get(json_root(d), "table");
    size_t n = json_len(list);
    *names = kiln_calloc(n ? n : 1, sizeof **names);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *name = json_str(json_get(json_at(list, i), "name"), &len);
        if (name == NULL) {
            st = status_set(err, KILN_CORRUPTION, "server answer: table without a name");
            break;
        }
        /* HBase names default-namespace tables without "default:" */
        char canon[SCHEMA_NAME_MAX + 1];
        kiln_err cerr;
        if (memchr(name, ':', len) == NULL && schema_name_canon(name, canon, &cerr) == KILN_OK) {
            name = canon;
            len = strlen(canon);
        }
        (*names)[(*count)++] = (char *)kiln_memdup(name, len + 1);
    }
    json_doc_free(d);
    if (st != KILN_OK) {
        table_list_free(*names, *count);
        *names = NULL;
        *count = 0;
    }
    return st;
}

static int
remote_attr_u64(const json_node *obj, const char *name, uint64_t *out)
{
    const char *s = json_str(json_get(obj, name), NULL);
    if (s == NULL || *s == '\0')
        return -1;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0')
        return -1;
    *out = v;
    return 0;
}

kiln_status
remote_schema(remote *r, const char *table, kiln_schema *out, size_t *regions,
              uint64_t *version, kiln_err *err)
{
    schema_init(out);
    remote_table_path(&r->target, table);
    remote_str(&r->target, "/schema");
    json_doc *d;
    http_client_response resp;
    kiln_status st = remote_call(r, &d, NULL, &resp, err);
    if (st != KILN_OK)
        return st;
    const json_node *root = json_root(d);
    const char *name = json_str(json_get(root, "name"), NULL);
    uint64_t keep, salt, created, nreg, ver;
    if (name == NULL || remote_attr_u64(root, "KEEP_VERSIONS", &keep) != 0 ||
        remote_attr_u64(root, "SALT_BUCKETS", &salt) != 0 ||
        remote_attr_u64(root, "CREATED", &created) != 0 ||
        remote_attr_u64(root, "REGIONS", &nreg) != 0 ||
        remote_attr_u64(root, "VERSION", &ver) != 0) {
        json_doc_free(d);
        return status_set(err, KILN_CORRUPTION, "server answer: incomplete schema");
    }
    snprintf(out->name, sizeof out->name, "%s%s", strchr(name, ':') ? "" : "default:", name);
    out->keep_versions = (uint32_t)keep;
    out->salt_buckets = (uint32_t)salt;
    out->created_ms = (int64_t)created;
    *regions = (size_t)nreg;
    *version = ver;
    const json_node *fams = json_get(root, "ColumnSchema");
    out->families = kiln_calloc(json_len(fams) ? json_len(fams) : 1, sizeof *out->families);
    for (size_t i = 0; i < json_len(fams); i++) {
        const json_node *f = json_at(fams, i);
        schema_family *sf = &out->families[out->family_count];
        const char *fname = json_str(json_get(f, "name"), NULL);
        const char *comp = json_str(json_get(f, "COMPRESSION"), NULL);
        const char *bloom = json_str(json_get(f, "BLOOMFILTER"), NULL);
        uint64_t vers, ttl, bs;
        if (fname == NULL || comp == NULL || bloom == NULL ||
            remote_attr_u64(f, "VERSIONS", &vers) != 0 || remote_attr_u64(f, "TTL", &ttl) != 0 ||
            remote_attr_u64(f, "BLOCKSIZE", &bs) != 0 ||
            compress_codec_parse(comp, &sf->codec) != 0 || bloom_type_parse(bloom, &sf->bloom) != 0) {
            st = status_set(err, KILN_CORRUPTION, "server answer: bad column family");
            break;
        }
        snprintf(sf->name, sizeof sf->name, "%s", fname);
        sf->max_versions = (uint32_t)vers;
        sf->ttl_s = (int64_t)ttl;
        sf->block_size = (uint32_t)bs;
        out->family_count++;
    }
    const json_node *props = json_get(root, "Properties");
    for (size_t i = 0; st == KILN_OK && i < json_len(props); i++) {
        const json_node *p = json_at(props, i);
        const char *v = json_str(p, NULL);
        if (v == NULL) {
            st = status_set(err, KILN_CORRUPTION, "server answer: bad property");
            break;
        }
        schema_set_prop(out, json_key(p), v);
    }
    json_doc_free(d);
    if (st != KILN_OK)
        schema_free(out);
    return st;
}

kiln_status
remote_regions(remote *r, const char *table, char *name, uint64_t *version, remote_region **out,
               size_t *count, kiln_err *err)
{
    *out = NULL;
    *count = 0;
    remote_table_path(&r->target, table);
    remote_str(&r->target, "/regions");
    json_doc *d;
    http_client_response resp;
    kiln_status st = remote_call(r, &d, NULL, &resp, err);
    if (st != KILN_OK)
        return st;
    const json_node *root = json_root(d);
    const char *tn = json_str(json_get(root, "name"), NULL);
    int64_t ver;
    if (tn == NULL || json_int(json_get(root, "version"), &ver) != 0 || ver < 0) {
        json_doc_free(d);
        return status_set(err, KILN_CORRUPTION, "server answer: bad regions");
    }
    snprintf(name, SCHEMA_NAME_MAX + 1, "%s%s", strchr(tn, ':') ? "" : "default:", tn);
    *version = (uint64_t)ver;
    const json_node *regs = json_get(root, "Region");
    size_t n = json_len(regs);
    remote_region *rr = kiln_calloc(n ? n : 1, sizeof *rr);
    for (size_t i = 0; i < n; i++) {
        const json_node *g = json_at(regs, i);
        size_t sl, el;
        const char *s = json_str(json_get(g, "startKey"), &sl);
        const char *e = json_str(json_get(g, "endKey"), &el);
        int64_t files, bytes;
        buf_init(&rr[i].start);
        buf_init(&rr[i].end);
        if (s == NULL || e == NULL || json_int(json_get(g, "files"), &files) != 0 ||
            json_int(json_get(g, "bytes"), &bytes) != 0 || files < 0 || bytes < 0 ||
            json_b64_decode(s, sl, &rr[i].start) != 0 || json_b64_decode(e, el, &rr[i].end) != 0) {
            st = status_set(err, KILN_CORRUPTION, "server answer: bad region %zu", i);
            n = i + 1;
            break;
        }
        rr[i].files = (size_t)files;
        rr[i].bytes = (uint64_t)bytes;
    }
    json_doc_free(d);
    if (st != KILN_OK) {
        remote_regions_free(rr, n);
        return st;
    }
    *out = rr;
    *count = n;
    return KILN_OK;
}

void
remote_regions_free(remote_region *regions, size_t count)
{
    if (regions == NULL)
        return;
    for (size_t i = 0; i < count; i++) {
        buf_free(&regions[i].start);
        buf_free(&regions[i].end);
    }
    free(regions);
}
