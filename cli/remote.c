/* remote.c -- client reads through an HBase REST gateway or kiln-server
 * (remote.h). Requests are built with every key percent-encoded and sent
 * through cli/rest_http.h (libcurl); JSON answers are parsed with jansson and
 * their base64 fields decoded (strictly) into one arena per page, sized up
 * front so that the cells' pointers into it stay valid. Nothing here shares
 * code with the server: the answers are decoded as any HBase client would.
 */
#include "cli/remote.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/rest_http.h"
#include "storage/hfile/cell.h"
#include "storage/store/table.h"

#define REMOTE_JSON "application/json"
#define REMOTE_MULTIGET_ROWS 100     /* rows per multiget request (URL length) */
#define REMOTE_MSG_MAX 200           /* bytes of a server's error text quoted */

/* The rows of one answer: cells in cells[], bytes in arena. */
typedef struct remote_page {
    kbuf arena;
    kiln_cell *cells;
    size_t cells_cap;
    store_row *rows;
    size_t rows_cap, nrows;
} remote_page;

struct remote {
    rest_http *http;
    kbuf target;
    remote_page page;
    int no_scanner;              /* the server answered 404/405 to a scanner */
};

/* A cell of a row carried across scanner batches: offsets into carry bytes. */
typedef struct remote_carry_cell {
    size_t fo, fl, qo, ql, vo, vl;
    int64_t ts;
} remote_carry_cell;

enum { REMOTE_SCAN_PAGED, REMOTE_SCAN_SCANNER };

struct remote_scan {
    remote *r;
    char *table;
    int mode;
    store_scan_opts so;
    kbuf start, stop, prefix;
    store_column *cols;
    char **fams;
    kbuf *quals;
    uint64_t returned;
    size_t next;                 /* next row of the current page */
    int more;                    /* paged: the server said where the next page starts */
    kbuf next_start;
    kbuf index;                  /* an index scan: "index=..&value=.." encoded; else empty */
    char *filter;                /* the filter model's JSON, or NULL */
    /* scanner protocol */
    char *location;              /* the scanner's Location; NULL once deleted */
    int done;                    /* the scanner answered 204 */
    /* HBase splits a row over batches when it has more cells than a batch
     * holds, so the last row of a batch is kept here (copied) until the next
     * batch shows whether it goes on. */
    int carry_has, carry_complete, carry_out;
    kbuf carry_bytes;            /* row key at 0, then the cells' bytes */
    size_t carry_key_len;
    remote_carry_cell *carry_cells;
    size_t carry_n, carry_cap;
    kiln_cell *carry_kcells;
};

kiln_status
remote_open(const char *server, remote **out, kiln_err *err)
{
    *out = NULL;
    remote *r = kiln_calloc(1, sizeof *r);
    kiln_status st = rest_http_open(server, REMOTE_TIMEOUT_MS, &r->http, err);
    if (st != KILN_OK) {
        free(r);
        return st;
    }
    *out = r;
    return KILN_OK;
}

static void
remote_page_free(remote_page *p)
{
    buf_free(&p->arena);
    free(p->cells);
    free(p->rows);
}

void
remote_close(remote *r)
{
    if (r == NULL)
        return;
    rest_http_close(r->http);
    buf_free(&r->target);
    remote_page_free(&r->page);
    free(r);
}

/* The server's host:port for messages (a decoder without one: "answer"). */
static const char *
remote_name(const remote *r)
{
    return r->http != NULL ? rest_http_name(r->http) : "answer";
}

/* ------------------------------------------------------------------ codecs */

static void
remote_str(kbuf *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

/* Percent-encode every byte but RFC 3986's unreserved ones. */
static void
remote_enc(kbuf *b, const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            buf_append_u8(b, c);
        } else {
            buf_append_u8(b, '%');
            buf_append_u8(b, (uint8_t)hex[c >> 4]);
            buf_append_u8(b, (uint8_t)hex[c & 15]);
        }
    }
}

static const char remote_b64_tab[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Standard base64 with padding, NUL-terminated in b. */
static void
remote_b64_encode(kbuf *b, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        buf_append_u8(b, (uint8_t)remote_b64_tab[(v >> 18) & 63]);
        buf_append_u8(b, (uint8_t)remote_b64_tab[(v >> 12) & 63]);
        buf_append_u8(b, i + 1 < n ? (uint8_t)remote_b64_tab[(v >> 6) & 63] : '=');
        buf_append_u8(b, i + 2 < n ? (uint8_t)remote_b64_tab[v & 63] : '=');
    }
}

static int
remote_b64_val(uint8_t c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Decode standard base64 (padding optional, nothing else allowed) onto out.
 * -1 on a character outside the alphabet, misplaced padding, a dangling
 * sixth of a byte or nonzero bits past the end. */
static int
remote_b64_decode(const char *s, size_t n, kbuf *out)
{
    size_t pad = 0;
    while (n > 0 && pad < 2 && s[n - 1] == '=') {
        n--;
        pad++;
    }
    if (pad > 0 && (n + pad) % 4 != 0)
        return -1;
    if (n % 4 == 1)
        return -1;
    buf_reserve(out, n / 4 * 3 + 2);
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = remote_b64_val((uint8_t)s[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf_append_u8(out, (uint8_t)(acc >> bits));
            acc &= (1u << bits) - 1;
        }
    }
    return acc != 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ answers */

static int
remote_is_json(const rest_http_response *resp)
{
    const char *t = resp->content_type;
    size_t n = strlen(t);
    return n == 0 || strcmp(t, "application/json") == 0 || strcmp(t, "text/json") == 0 ||
           (n > 5 && strcmp(t + n - 5, "+json") == 0);
}

/* Parse a JSON answer into *root (an object). KILN_CORRUPTION naming the
 * server for anything else. */
static kiln_status
remote_parse(remote *r, const rest_http_response *resp, json_t **root, kiln_err *err)
{
    *root = NULL;
    if (!remote_is_json(resp))
        return status_set(err, KILN_CORRUPTION, "%s: answer is %s, not JSON",
                          remote_name(r), resp->content_type);
    json_error_t je;
    json_t *j = json_loadb((const char *)resp->body.data, resp->body.len, JSON_REJECT_DUPLICATES,
                           &je);
    if (j == NULL)
        return status_set(err, KILN_CORRUPTION, "%s: bad JSON in answer at byte %d: %s",
                          remote_name(r), je.position, je.text);
    if (!json_is_object(j)) {
        json_decref(j);
        return status_set(err, KILN_CORRUPTION, "%s: answer is not a JSON object",
                          remote_name(r));
    }
    *root = j;
    return KILN_OK;
}

/* Kiln's error code in an error answer ({"code":..,"message":..}), or NULL
 * (another server's answer). *msg gets its message. */
static const char *
remote_kiln_code(const json_t *root, const char **msg)
{
    *msg = json_string_value(json_object_get(root, "message"));
    return json_string_value(json_object_get(root, "code"));
}

/* Turn an error answer into a status: Kiln's code and message, else the
 * HTTP status and the first line of the server's text. */
static kiln_status
remote_fail(remote *r, const rest_http_response *resp, kiln_err *err)
{
    json_t *root = NULL;
    const char *code = NULL, *msg = NULL;
    if (resp->body.len > 0 && remote_is_json(resp)) {
        root = json_loadb((const char *)resp->body.data, resp->body.len, 0, NULL);
        if (root != NULL)
            code = remote_kiln_code(root, &msg);
    }
    kiln_status st;
    if (code != NULL) {
        if (strcmp(code, "no_table") == 0 || strcmp(code, "not_found") == 0 ||
            strcmp(code, "no_row") == 0)
            st = KILN_NOT_FOUND;
        else if (strcmp(code, "invalid") == 0 || strcmp(code, "bad_request") == 0)
            st = KILN_INVALID;
        else if (strcmp(code, "corruption") == 0)
            st = KILN_CORRUPTION;
        else if (strcmp(code, "io") == 0)
            st = KILN_IO;
        else
            st = KILN_INTERNAL;
    } else {
        st = resp->status == 404   ? KILN_NOT_FOUND
             : resp->status == 400 ? KILN_INVALID
             : resp->status >= 500 ? KILN_IO
                                   : KILN_INTERNAL;
    }
    if (code != NULL && msg != NULL) {
        status_set(err, st, "%s", msg);
    } else {
        /* the first line of the text, printable bytes only */
        char text[REMOTE_MSG_MAX + 1];
        size_t n = 0;
        for (size_t i = 0; i < resp->body.len && n < REMOTE_MSG_MAX; i++) {
            uint8_t c = resp->body.data[i];
            if (c == '\r' || c == '\n')
                break;
            text[n++] = c >= ' ' && c < 0x7f ? (char)c : '?';
        }
        text[n] = '\0';
        status_set(err, st, "%s: server answered %ld%s%s", remote_name(r), resp->status,
                   n ? ": " : "", text);
    }
    json_decref(root);
    return st;
}

static kiln_status
remote_send(remote *r, const char *method, const char *target, const char *body,
            const rest_http_response **resp, kiln_err *err)
{
    return rest_http_request(r->http, method, target, REMOTE_JSON, body ? REMOTE_JSON : NULL,
                             body, body ? strlen(body) : 0, resp, err);
}

/* GET r->target. */
static kiln_status
remote_get_target(remote *r, const rest_http_response **resp, kiln_err *err)
{
    buf_append_u8(&r->target, '\0');
    r->target.len--;
    return remote_send(r, "GET", (const char *)r->target.data, NULL, resp, err);
}

/* GET r->target and parse a 2xx JSON answer, or fail. */
static kiln_status
remote_call(remote *r, json_t **root, const rest_http_response **resp, kiln_err *err)
{
    *root = NULL;
    kiln_status st = remote_get_target(r, resp, err);
    if (st != KILN_OK)
        return st;
    if ((*resp)->status < 200 || (*resp)->status > 299)
        return remote_fail(r, *resp, err);
    return remote_parse(r, *resp, root, err);
}

/* ------------------------------------------------------------------ rows */

static size_t
remote_b64_room(const json_t *v)
{
    return json_is_string(v) ? json_string_length(v) / 4 * 3 + 3 : 0;
}

static kiln_status
remote_b64(remote *r, kbuf *arena, const json_t *v, const char *what, size_t *off, size_t *len,
           kiln_err *err)
{
    if (!json_is_string(v))
        return status_set(err, KILN_CORRUPTION, "%s: answer: %s is not a string",
                          remote_name(r), what);
    *off = arena->len;
    if (remote_b64_decode(json_string_value(v), json_string_length(v), arena) != 0)
        return status_set(err, KILN_CORRUPTION, "%s: answer: %s is not base64",
                          remote_name(r), what);
    *len = arena->len - *off;
    return KILN_OK;
}

/* Decode a CellSet's "Row" array into p (HBase: {"Row":[{"key":B64,
 * "Cell":[{"column":B64,"timestamp":N,"$":B64}]}]}). A missing Row is no
 * row. */
static kiln_status
remote_decode_rows(remote *r, remote_page *p, const json_t *rows, kiln_err *err)
{
    const char *who = remote_name(r);
    p->nrows = 0;
    buf_reset(&p->arena);
    if (rows == NULL)
        return KILN_OK;
    if (!json_is_array(rows))
        return status_set(err, KILN_CORRUPTION, "%s: answer: Row is not an array", who);
    size_t nrows = json_array_size(rows), ncells = 0, room = 0;
    for (size_t i = 0; i < nrows; i++) {
        const json_t *row = json_array_get(rows, i);
        const json_t *cells = json_object_get(row, "Cell");
        if (!json_is_object(row) || !json_is_array(cells))
            return status_set(err, KILN_CORRUPTION, "%s: answer: row %zu has no Cell array", who,
                              i);
        room += remote_b64_room(json_object_get(row, "key"));
        ncells += json_array_size(cells);
        for (size_t k = 0; k < json_array_size(cells); k++) {
            const json_t *cell = json_array_get(cells, k);
            room += remote_b64_room(json_object_get(cell, "column"));
            room += remote_b64_room(json_object_get(cell, "$"));
        }
    }
    buf_reserve(&p->arena, room + 16);   /* no reallocation below: pointers stay valid */
    if (nrows > p->rows_cap) {
        p->rows_cap = nrows;
        p->rows = kiln_realloc(p->rows, p->rows_cap * sizeof *p->rows);
    }
    if (ncells > p->cells_cap) {
        p->cells_cap = ncells;
        p->cells = kiln_realloc(p->cells, p->cells_cap * sizeof *p->cells);
    }
    size_t c = 0;
    for (size_t i = 0; i < nrows; i++) {
        const json_t *row = json_array_get(rows, i);
        size_t ko, kl;
        kiln_status st = remote_b64(r, &p->arena, json_object_get(row, "key"), "key", &ko, &kl,
                                    err);
        if (st != KILN_OK)
            return st;
        if (kl == 0 || kl > CELL_ROW_MAX)
            return status_set(err, KILN_CORRUPTION, "%s: answer: row key of %zu bytes", who, kl);
        const json_t *cells = json_object_get(row, "Cell");
        store_row *sr = &p->rows[i];
        sr->row = kslice_make(p->arena.data + ko, kl);
        sr->count = json_array_size(cells);
        if (sr->count == 0)   /* HBase never sends a row without cells */
            return status_set(err, KILN_CORRUPTION, "%s: answer: row %zu has no cells", who, i);
        sr->cells = p->cells + c;
        for (size_t k = 0; k < sr->count; k++, c++) {
            const json_t *cell = json_array_get(cells, k);
            size_t co, cl, vo, vl;
            if ((st = remote_b64(r, &p->arena, json_object_get(cell, "column"), "column", &co,
                                 &cl, err)) != KILN_OK ||
                (st = remote_b64(r, &p->arena, json_object_get(cell, "$"), "value", &vo, &vl,
                                 err)) != KILN_OK)
                return st;
            const json_t *tsj = json_object_get(cell, "timestamp");
            if (!json_is_integer(tsj) || json_integer_value(tsj) < 0)
                return status_set(err, KILN_CORRUPTION, "%s: answer: bad timestamp", who);
            const uint8_t *col = p->arena.data + co;
            const uint8_t *colon = memchr(col, ':', cl);
            if (colon == NULL || colon == col)
                return status_set(err, KILN_CORRUPTION, "%s: answer: column without 'family:'",
                                  who);
            if (vl > UINT32_MAX)
                return status_set(err, KILN_CORRUPTION, "%s: answer: value too large", who);
            kiln_cell *kc = &p->cells[c];
            memset(kc, 0, sizeof *kc);
            kc->row = sr->row.p;
            kc->row_len = (uint32_t)kl;
            kc->family = col;
            kc->family_len = (uint32_t)(colon - col);
            kc->qualifier = colon + 1;
            kc->qualifier_len = (uint32_t)(cl - kc->family_len - 1);
            kc->ts = (int64_t)json_integer_value(tsj);
            kc->type = CELL_TYPE_PUT;
            kc->value = p->arena.data + vo;
            kc->value_len = (uint32_t)vl;
        }
    }
    p->nrows = nrows;
    return KILN_OK;
}

kiln_status
remote_decode_cellset(const uint8_t *p, size_t n, size_t *rows, size_t *cells, kiln_err *err)
{
    remote r;
    memset(&r, 0, sizeof r);
    rest_http_response resp;
    memset(&resp, 0, sizeof resp);
    resp.status = 200;
    resp.body.data = (uint8_t *)p;
    resp.body.len = n;
    json_t *root;
    *rows = *cells = 0;
    kiln_status st = remote_parse(&r, &resp, &root, err);
    if (st == KILN_OK) {
        st = remote_decode_rows(&r, &r.page, json_object_get(root, "Row"), err);
        json_decref(root);
    }
    for (size_t i = 0; st == KILN_OK && i < r.page.nrows; i++)
        *cells += r.page.rows[i].count;
    if (st == KILN_OK)
        *rows = r.page.nrows;
    remote_page_free(&r.page);
    return st;
}

/* ------------------------------------------------------------------ requests */

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

/* Read options as query parameters (v= is HBase's; starttime/endtime and
 * column= are Kiln's). */
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

/* ------------------------------------------------------------------ exists */

kiln_status
remote_exists(remote *r, const char *table, int *exists, kiln_err *err)
{
    *exists = 0;
    remote_table_path(&r->target, table);
    remote_str(&r->target, "/exists");
    const rest_http_response *resp;
    kiln_status st = remote_get_target(r, &resp, err);
    if (st != KILN_OK)
        return st;
    if (resp->status >= 200 && resp->status <= 299) {
        *exists = 1;
        return KILN_OK;
    }
    if (resp->status != 404)
        return remote_fail(r, resp, err);
    /* A Kiln server without the route read "exists" as a row of the table:
     * "no such row" says the table is there. */
    json_t *root = NULL;
    const char *msg;
    if (resp->body.len > 0 && remote_is_json(resp))
        root = json_loadb((const char *)resp->body.data, resp->body.len, 0, NULL);
    const char *code = root ? remote_kiln_code(root, &msg) : NULL;
    *exists = code != NULL && strcmp(code, "no_row") == 0;
    json_decref(root);
    return KILN_OK;
}

/* A 404 to a row read: no row (0), or a status for a missing table. Kiln
 * says which in its code; HBase answers 404 for both, so ask /exists. */
static kiln_status
remote_absent(remote *r, const char *table, const rest_http_response *resp, kiln_err *err)
{
    json_t *root = NULL;
    const char *msg;
    if (resp->body.len > 0 && remote_is_json(resp))
        root = json_loadb((const char *)resp->body.data, resp->body.len, 0, NULL);
    const char *code = root ? remote_kiln_code(root, &msg) : NULL;
    if (code != NULL) {
        int no_row = strcmp(code, "no_row") == 0;
        json_decref(root);
        return no_row ? KILN_OK : remote_fail(r, resp, err);
    }
    json_decref(root);
    int exists;
    kiln_status st = remote_exists(r, table, &exists, err);
    if (st != KILN_OK)
        return st;
    return exists ? KILN_OK : status_set(err, KILN_NOT_FOUND, "table %s: not found", table);
}

/* ------------------------------------------------------------------ get */

kiln_status
remote_get(remote *r, const char *table, const uint8_t *row, size_t n, const store_row_opts *o,
           store_row *out, kiln_err *err)
{
    memset(out, 0, sizeof *out);
    out->row = kslice_make(row, n);
    remote_table_path(&r->target, table);
    buf_append_u8(&r->target, '/');
    remote_enc(&r->target, row, n);
    store_row_opts ro = *o;
    if (o->column_count > 0) {
        buf_append_u8(&r->target, '/');
        remote_columns(&r->target, o->columns, o->column_count);
        if (o->ts_min > 0 || o->ts_max < INT64_MAX) {
            /* HBase's time range of a cell path: /TABLE/ROW/COLUMNS/START,END */
            char t[48];
            snprintf(t, sizeof t, "/%" PRId64 ",%" PRId64, o->ts_min, o->ts_max);
            remote_str(&r->target, t);
            ro.ts_min = 0;
            ro.ts_max = INT64_MAX;
        }
    }
    /* without columns a time range can only be Kiln's starttime/endtime */
    remote_read_params(&r->target, &ro, 0);
    const rest_http_response *resp;
    kiln_status st = remote_get_target(r, &resp, err);
    if (st != KILN_OK)
        return st;
    if (resp->status == 404)
        return remote_absent(r, table, resp, err);
    if (resp->status < 200 || resp->status > 299)
        return remote_fail(r, resp, err);
    json_t *root;
    if ((st = remote_parse(r, resp, &root, err)) != KILN_OK)
        return st;
    st = remote_decode_rows(r, &r->page, json_object_get(root, "Row"), err);
    json_decref(root);
    if (st != KILN_OK)
        return st;
    if (r->page.nrows > 1)
        return status_set(err, KILN_CORRUPTION, "%s: answer: %zu rows to a get of one",
                          remote_name(r), r->page.nrows);
    if (r->page.nrows == 1) {
        if (r->page.rows[0].row.n != n || memcmp(r->page.rows[0].row.p, row, n) != 0)
            return status_set(err, KILN_CORRUPTION, "%s: answer: another row than asked",
                              remote_name(r));
        *out = r->page.rows[0];
    }
    return KILN_OK;
}

/* ------------------------------------------------------------------ multiget */

kiln_status
remote_multiget(remote *r, const char *table, const kslice *rows, size_t n,
                const store_row_opts *o, remote_row_fn fn, void *arg, kiln_err *err)
{
    /* HBase's multiget takes rows and versions only: with columns or a time
     * range, read the rows one by one. */
    int one_by_one = o->column_count > 0 || o->ts_min > 0 || o->ts_max < INT64_MAX;
    for (size_t i = 0; i < n;) {
        if (one_by_one) {
            store_row sr;
            kiln_status st = remote_get(r, table, rows[i].p, rows[i].n, o, &sr, err);
            if (st != KILN_OK)
                return st;
            if (sr.count > 0 && (st = fn(arg, &sr, err)) != KILN_OK)
                return st;
            i++;
            continue;
        }
        size_t end = i + REMOTE_MULTIGET_ROWS < n ? i + REMOTE_MULTIGET_ROWS : n;
        remote_table_path(&r->target, table);
        remote_str(&r->target, "/multiget");
        for (size_t k = i; k < end; k++)
            remote_param(&r->target, "row", rows[k].p, rows[k].n);
        if (o->max_versions > 1)
            remote_param_u64(&r->target, "v", o->max_versions);
        const rest_http_response *resp;
        kiln_status st = remote_get_target(r, &resp, err);
        if (st != KILN_OK)
            return st;
        if (resp->status == 404) {
            if ((st = remote_absent(r, table, resp, err)) != KILN_OK)
                return st;
            i = end;
            continue;
        }
        if (resp->status < 200 || resp->status > 299)
            return remote_fail(r, resp, err);
        json_t *root;
        if ((st = remote_parse(r, resp, &root, err)) != KILN_OK)
            return st;
        st = remote_decode_rows(r, &r->page, json_object_get(root, "Row"), err);
        json_decref(root);
        for (size_t k = 0; st == KILN_OK && k < r->page.nrows; k++)
            st = fn(arg, &r->page.rows[k], err);
        if (st != KILN_OK)
            return st;
        i = end;
    }
    return KILN_OK;
}

/* ------------------------------------------------------------------ scans */

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

static remote_scan *
remote_scan_new(remote *r, const char *table, const store_scan_opts *o)
{
    remote_scan *s = kiln_calloc(1, sizeof *s);
    s->r = r;
    s->table = (char *)kiln_memdup(table, strlen(table) + 1);
    remote_scan_copy_opts(s, o);
    return s;
}

/* ---- Kiln's stateless paging: GET /TABLE/ROUTE?startrow=..., resumed from
 * the answer's next_startrow (next_after for index scans). */

static void
remote_scan_target(remote_scan *s, const uint8_t *start, size_t start_len, uint64_t limit,
                   int count)
{
    kbuf *b = &s->r->target;
    remote_table_path(b, s->table);
    /* Kiln's pages and counts are parameters of HBase's row glob route */
    remote_str(b, "/*");
    if (s->index.len > 0) {
        buf_append_u8(b, '?');
        buf_append(b, s->index.data, s->index.len);
    }
    remote_param(b, count ? "count" : "paged", (const uint8_t *)"true", 4);
    if (start_len > 0)
        remote_param(b, s->index.len > 0 ? "after" : "startrow", start, start_len);
    if (s->so.stop_len > 0)
        remote_param(b, "endrow", s->so.stop, s->so.stop_len);
    if (s->so.prefix_len > 0)
        remote_param(b, "prefix", s->so.prefix, s->so.prefix_len);
    if (limit > 0)
        remote_param_u64(b, "limit", limit);
    if (s->filter != NULL && !count)
        remote_param(b, "filter", (const uint8_t *)s->filter, strlen(s->filter));
    if (s->so.reversed)
        remote_param(b, "reversed", (const uint8_t *)"true", 4);
    remote_read_params(b, &s->so.read, 1);
}

/* Fetch the page starting at start. */
static kiln_status
remote_scan_page(remote_scan *s, const uint8_t *start, size_t start_len, kiln_err *err)
{
    remote *r = s->r;
    uint64_t limit = s->so.limit > 0 ? s->so.limit - s->returned : 0;
    remote_scan_target(s, start, start_len, limit, 0);
    json_t *root;
    const rest_http_response *resp;
    kiln_status st = remote_call(r, &root, &resp, err);
    if (st != KILN_OK)
        return st;
    st = remote_decode_rows(r, &r->page, json_object_get(root, "Row"), err);
    s->next = 0;
    s->more = 0;
    const char *next = s->index.len > 0 ? "next_after" : "next_startrow";
    const json_t *ns = json_object_get(root, next);
    if (st == KILN_OK && ns != NULL) {
        buf_reset(&s->next_start);
        if (!json_is_string(ns) ||
            remote_b64_decode(json_string_value(ns), json_string_length(ns), &s->next_start) != 0)
            st = status_set(err, KILN_CORRUPTION, "%s: answer: bad %s", remote_name(r),
                            next);
        else
            s->more = 1;
    }
    json_decref(root);
    return st;
}

/* ---- HBase's scanner protocol: POST /TABLE/scanner with a Scanner body,
 * 201 and a Location; GET it for the next batch of cells until 204; DELETE. */

/* The smallest key above every key starting with p (0 if none: all 0xFF). */
static size_t
remote_prefix_end(const uint8_t *p, size_t n, kbuf *out)
{
    while (n > 0 && p[n - 1] == 0xFF)
        n--;
    buf_reset(out);
    if (n == 0)
        return 0;
    buf_append(out, p, n);
    out->data[n - 1]++;
    return n;
}

static int
remote_key_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n > 0 ? memcmp(a, b, n) : 0;   /* an empty key may be NULL */
    return c != 0 ? c : (an > bn) - (an < bn);
}

static void
remote_json_b64(json_t *obj, const char *name, const uint8_t *p, size_t n)
{
    kbuf b = KBUF_INIT;
    remote_b64_encode(&b, p, n);
    buf_append_u8(&b, '\0');
    json_object_set_new(obj, name, json_string((const char *)b.data));
    buf_free(&b);
}

/* The Scanner body of s (filter: a filter's JSON text, or NULL). */
static char *
remote_scanner_body(const remote_scan *s, const char *filter)
{
    json_t *o = json_object();
    const store_scan_opts *so = &s->so;
    /* a prefix is a range: [max(start, prefix), min(stop, prefix end)) */
    const uint8_t *start = so->start;
    size_t start_len = so->start_len;
    const uint8_t *stop = so->stop;
    size_t stop_len = so->stop_len;
    kbuf pend = KBUF_INIT;
    if (so->prefix_len > 0) {
        if (remote_key_cmp(so->prefix, so->prefix_len, start, start_len) > 0) {
            start = so->prefix;
            start_len = so->prefix_len;
        }
        size_t pl = remote_prefix_end(so->prefix, so->prefix_len, &pend);
        if (pl > 0 && (stop_len == 0 || remote_key_cmp(pend.data, pl, stop, stop_len) < 0)) {
            stop = pend.data;
            stop_len = pl;
        }
    }
    if (start_len > 0)
        remote_json_b64(o, "startRow", start, start_len);
    if (stop_len > 0)
        remote_json_b64(o, "endRow", stop, stop_len);
    buf_free(&pend);
    if (so->read.column_count > 0) {
        json_t *cols = json_array();
        for (size_t i = 0; i < so->read.column_count; i++) {
            const store_column *c = &so->read.columns[i];
            kbuf col = KBUF_INIT, b = KBUF_INIT;
            buf_append(&col, c->family, strlen(c->family));
            if (c->qualifier != NULL) {
                buf_append_u8(&col, ':');
                buf_append(&col, c->qualifier, c->qualifier_len);
            }
            remote_b64_encode(&b, col.data, col.len);
            buf_append_u8(&b, '\0');
            json_array_append_new(cols, json_string((const char *)b.data));
            buf_free(&col);
            buf_free(&b);
        }
        json_object_set_new(o, "column", cols);
    }
    json_object_set_new(o, "batch", json_integer(REMOTE_SCANNER_BATCH));
    if (so->read.max_versions > 1)
        json_object_set_new(o, "maxVersions", json_integer(so->read.max_versions));
    if (so->read.ts_min > 0)
        json_object_set_new(o, "startTime", json_integer(so->read.ts_min));
    if (so->read.ts_max < INT64_MAX)
        json_object_set_new(o, "endTime", json_integer(so->read.ts_max));
    if (filter != NULL)
        json_object_set_new(o, "filter", json_string(filter));
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

/* Open a scanner for s. *unsupported is set (and nothing is an error) when
 * the server has no scanner route (see below). */
static kiln_status
remote_scanner_open(remote_scan *s, const char *filter, int *unsupported, kiln_err *err)
{
    remote *r = s->r;
    *unsupported = 0;
    if (r->no_scanner) {
        *unsupported = 1;
        return KILN_OK;
    }
    char *body = remote_scanner_body(s, filter);
    if (body == NULL)
        return status_set(err, KILN_INTERNAL, "scanner body: out of memory");
    remote_table_path(&r->target, s->table);
    remote_str(&r->target, "/scanner");
    buf_append_u8(&r->target, '\0');
    const rest_http_response *resp;
    kiln_status st = remote_send(r, "POST", (const char *)r->target.data, body, &resp, err);
    free(body);
    if (st != KILN_OK)
        return st;
    /* 404/405: no such route; 413/501 to a body of a few hundred bytes: a
     * server that takes no request bodies (kiln-server before scanners) */
    if (resp->status == 404 || resp->status == 405 || resp->status == 413 ||
        resp->status == 501) {
        /* a Kiln 404 naming the table is about the table, not the route */
        json_t *root = NULL;
        const char *msg, *code = NULL;
        if (resp->body.len > 0 && remote_is_json(resp))
            root = json_loadb((const char *)resp->body.data, resp->body.len, 0, NULL);
        if (root != NULL)
            code = remote_kiln_code(root, &msg);
        int table_missing = code != NULL && strcmp(code, "no_table") == 0;
        json_decref(root);
        if (table_missing)
            return remote_fail(r, resp, err);
        r->no_scanner = 1;
        *unsupported = 1;
        return KILN_OK;
    }
    if (resp->status != 201 && resp->status != 200)
        return remote_fail(r, resp, err);
    if (!resp->has_location || resp->location[0] == '\0')
        return status_set(err, KILN_CORRUPTION, "%s: scanner created without a Location",
                          remote_name(r));
    s->location = strdup(resp->location);
    if (s->location == NULL)
        return status_set(err, KILN_INTERNAL, "out of memory");
    s->mode = REMOTE_SCAN_SCANNER;
    return KILN_OK;
}

static void
remote_scanner_delete(remote_scan *s)
{
    if (s->location == NULL)
        return;
    const rest_http_response *resp;
    kiln_err ignored;
    status_clear(&ignored);
    /* best effort: a scanner left open expires on the server */
    remote_send(s->r, "DELETE", s->location, NULL, &resp, &ignored);
    free(s->location);
    s->location = NULL;
}

/* Fetch the scanner's next batch into the page; s->done at the end. */
static kiln_status
remote_scanner_batch(remote_scan *s, kiln_err *err)
{
    remote *r = s->r;
    r->page.nrows = 0;
    s->next = 0;
    const rest_http_response *resp;
    kiln_status st = remote_send(r, "GET", s->location, NULL, &resp, err);
    if (st != KILN_OK)
        return st;
    if (resp->status == 204) {
        s->done = 1;
        remote_scanner_delete(s);
        return KILN_OK;
    }
    if (resp->status != 200)
        return remote_fail(r, resp, err);
    json_t *root;
    if ((st = remote_parse(r, resp, &root, err)) != KILN_OK)
        return st;
    st = remote_decode_rows(r, &r->page, json_object_get(root, "Row"), err);
    json_decref(root);
    if (st == KILN_OK && r->page.nrows == 0) {
        /* HBase ends with 204; an empty batch ends the scan too */
        s->done = 1;
        remote_scanner_delete(s);
    }
    return st;
}

/* Append a row's cells (copied) to the carried row. */
static void
remote_carry_add(remote_scan *s, const store_row *row)
{
    kbuf *b = &s->carry_bytes;
    if (!s->carry_has) {
        buf_reset(b);
        buf_append(b, row->row.p, row->row.n);
        s->carry_key_len = row->row.n;
        s->carry_n = 0;
        s->carry_has = 1;
        s->carry_complete = 0;
    }
    if (s->carry_n + row->count > s->carry_cap) {
        s->carry_cap = (s->carry_n + row->count) * 2;
        s->carry_cells = kiln_realloc(s->carry_cells, s->carry_cap * sizeof *s->carry_cells);
    }
    for (size_t i = 0; i < row->count; i++) {
        const kiln_cell *c = &row->cells[i];
        remote_carry_cell *cc = &s->carry_cells[s->carry_n++];
        cc->fo = b->len;
        cc->fl = c->family_len;
        buf_append(b, c->family, c->family_len);
        cc->qo = b->len;
        cc->ql = c->qualifier_len;
        buf_append(b, c->qualifier, c->qualifier_len);
        cc->vo = b->len;
        cc->vl = c->value_len;
        buf_append(b, c->value, c->value_len);
        cc->ts = c->ts;
    }
}

/* The carried row as a store_row (valid until the next call on s). */
static void
remote_carry_row(remote_scan *s, store_row *out)
{
    const uint8_t *base = s->carry_bytes.data;
    s->carry_kcells = kiln_realloc(s->carry_kcells,
                                   (s->carry_n ? s->carry_n : 1) * sizeof *s->carry_kcells);
    for (size_t i = 0; i < s->carry_n; i++) {
        const remote_carry_cell *cc = &s->carry_cells[i];
        kiln_cell *kc = &s->carry_kcells[i];
        memset(kc, 0, sizeof *kc);
        kc->row = base;
        kc->row_len = (uint32_t)s->carry_key_len;
        kc->family = base + cc->fo;
        kc->family_len = (uint32_t)cc->fl;
        kc->qualifier = base + cc->qo;
        kc->qualifier_len = (uint32_t)cc->ql;
        kc->value = base + cc->vo;
        kc->value_len = (uint32_t)cc->vl;
        kc->ts = cc->ts;
        kc->type = CELL_TYPE_PUT;
    }
    out->row = kslice_make(base, s->carry_key_len);
    out->cells = s->carry_kcells;
    out->count = s->carry_n;
}

static kiln_status
remote_scanner_next(remote_scan *s, store_row *out, int *has_row, kiln_err *err)
{
    remote_page *p = &s->r->page;
    *has_row = 0;
    if (s->carry_out) {
        s->carry_out = 0;
        s->carry_has = 0;
    }
    for (;;) {
        if (s->carry_has && s->carry_complete) {
            remote_carry_row(s, out);
            s->carry_out = 1;
            *has_row = 1;
            return KILN_OK;
        }
        if (s->next < p->nrows) {
            const store_row *row = &p->rows[s->next++];
            if (!s->done && s->next == p->nrows) {
                remote_carry_add(s, row);   /* may go on in the next batch */
                continue;
            }
            *out = *row;
            *has_row = 1;
            return KILN_OK;
        }
        if (s->done) {
            if (s->carry_has) {
                s->carry_complete = 1;
                continue;
            }
            return KILN_OK;
        }
        kiln_status st = remote_scanner_batch(s, err);
        if (st != KILN_OK)
            return st;
        if (s->carry_has) {
            if (p->nrows > 0 && p->rows[0].row.n == s->carry_key_len &&
                memcmp(p->rows[0].row.p, s->carry_bytes.data, s->carry_key_len) == 0) {
                remote_carry_add(s, &p->rows[0]);
                s->next = 1;
                if (p->nrows == 1)
                    continue;   /* the row may still go on in the next batch */
            }
            s->carry_complete = 1;
        }
    }
}

/* ---- the scan interface */

kiln_status
remote_scan_open(remote *r, const char *table, const store_scan_opts *o, const char *filter,
                 remote_scan **out, kiln_err *err)
{
    *out = NULL;
    remote_scan *s = remote_scan_new(r, table, o);
    if (filter != NULL)
        s->filter = strdup(filter);
    int unsupported = 1;
    kiln_status st = KILN_OK;
    /* HBase's scanners go forward only; a reversed scan pages statelessly
     * (the row glob "*" with reversed=true: Kiln and HBase 2) */
    if (!o->reversed)
        st = remote_scanner_open(s, s->filter, &unsupported, err);
    if (st == KILN_OK && unsupported) {
        s->mode = REMOTE_SCAN_PAGED;
        st = remote_scan_page(s, s->so.start, s->so.start_len, err);
    }
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
    store_scan_opts so;
    store_scan_opts_init(&so);
    so.read = o->read;
    so.limit = o->limit;
    remote_scan *s = remote_scan_new(r, table, &so);
    s->mode = REMOTE_SCAN_PAGED;
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
    if (s->so.limit > 0 && s->returned >= s->so.limit) {
        remote_scanner_delete(s);
        return KILN_OK;
    }
    if (s->mode == REMOTE_SCAN_SCANNER) {
        kiln_status st = remote_scanner_next(s, out, has_row, err);
        if (st == KILN_OK && *has_row)
            s->returned++;
        return st;
    }
    for (;;) {
        if (s->next < s->r->page.nrows) {
            *out = s->r->page.rows[s->next++];
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
    remote_scanner_delete(s);
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
    buf_free(&s->carry_bytes);
    free(s->filter);
    free(s->carry_cells);
    free(s->carry_kcells);
    free(s);
}

/* ------------------------------------------------------------------ count */

#define REMOTE_COUNT_RESTARTS 5

/* Count with Kiln's /TABLE/count route, restarted when a new version is
 * published between its pages. *unsupported when the server has no such
 * route (a 404 that is not Kiln's "no table", or a 405). */
static kiln_status
remote_count_kiln(remote_scan *s, uint64_t *rows, int *unsupported, kiln_err *err)
{
    remote *r = s->r;
    kiln_status st = KILN_OK;
    *unsupported = 0;
    for (int attempt = 0; attempt < REMOTE_COUNT_RESTARTS; attempt++) {
        uint64_t total = 0, version = 0;
        int first = 1, changed = 0;
        kbuf start = KBUF_INIT;
        buf_append(&start, s->so.start, s->so.start_len);
        for (;;) {
            /* Kiln's count ignores limit=1; it keeps HBase's stateless
             * scan, which has no count, from answering with every row */
            remote_scan_target(s, start.data, start.len, 1, 1);
            const rest_http_response *resp;
            st = remote_get_target(r, &resp, err);
            if (st != KILN_OK)
                break;
            if (first && (resp->status == 404 || resp->status == 405)) {
                json_t *root = NULL;
                const char *msg, *code = NULL;
                if (resp->body.len > 0 && remote_is_json(resp))
                    root = json_loadb((const char *)resp->body.data, resp->body.len, 0, NULL);
                if (root != NULL)
                    code = remote_kiln_code(root, &msg);
                int table_missing = code != NULL && strcmp(code, "no_table") == 0;
                json_decref(root);
                if (!table_missing) {
                    *unsupported = 1;
                    break;
                }
            }
            if (resp->status < 200 || resp->status > 299) {
                st = remote_fail(r, resp, err);
                break;
            }
            json_t *root;
            if ((st = remote_parse(r, resp, &root, err)) != KILN_OK)
                break;
            const json_t *cj = json_object_get(root, "count");
            if (first && cj == NULL) {
                json_decref(root);
                *unsupported = 1;
                break;
            }
            if (!first && resp->has_version && resp->version != version)
                changed = 1;
            version = resp->version;
            first = 0;
            if (!json_is_integer(cj) || json_integer_value(cj) < 0) {
                json_decref(root);
                st = status_set(err, KILN_CORRUPTION, "%s: answer: bad count",
                                remote_name(r));
                break;
            }
            total += (uint64_t)json_integer_value(cj);
            const json_t *ns = json_object_get(root, "next_startrow");
            buf_reset(&start);
            if (ns != NULL && (!json_is_string(ns) ||
                               remote_b64_decode(json_string_value(ns), json_string_length(ns),
                                                 &start) != 0)) {
                json_decref(root);
                st = status_set(err, KILN_CORRUPTION, "%s: answer: bad next_startrow",
                                remote_name(r));
                break;
            }
            json_decref(root);
            if (ns == NULL || changed)
                break;
        }
        buf_free(&start);
        if (st != KILN_OK || *unsupported || !changed) {
            *rows = total;
            break;
        }
    }
    return st;
}

kiln_status
remote_count(remote *r, const char *table, const store_scan_opts *o, uint64_t *rows,
             kiln_err *err)
{
    *rows = 0;
    store_scan_opts so = *o;
    so.reversed = 0;
    so.limit = 0;
    remote_scan *s = remote_scan_new(r, table, &so);
    int unsupported;
    kiln_status st = remote_count_kiln(s, rows, &unsupported, err);
    if (st == KILN_OK && unsupported) {
        /* an HBase gateway: a scanner that returns one cell per row */
        int no_scanner;
        st = remote_scanner_open(s, "{\"type\":\"FirstKeyOnlyFilter\"}", &no_scanner, err);
        if (st == KILN_OK && no_scanner)
            st = status_set(err, KILN_INVALID, "%s: the server has neither a count route nor "
                            "scanners", remote_name(r));
        uint64_t n = 0;
        for (;;) {
            store_row row;
            int has;
            if (st != KILN_OK || (st = remote_scanner_next(s, &row, &has, err)) != KILN_OK || !has)
                break;
            n++;
        }
        *rows = n;
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
    json_t *root;
    const rest_http_response *resp;
    kiln_status st = remote_call(r, &root, &resp, err);
    if (st != KILN_OK)
        return st;
    const json_t *list = json_object_get(root, "table");
    size_t n = json_array_size(list);
    *names = kiln_calloc(n ? n : 1, sizeof **names);
    for (size_t i = 0; i < n; i++) {
        const json_t *name = json_object_get(json_array_get(list, i), "name");
        if (!json_is_string(name)) {
            st = status_set(err, KILN_CORRUPTION, "%s: answer: table without a name",
                            remote_name(r));
            break;
        }
        /* HBase names default-namespace tables without "default:" */
        const char *nm = json_string_value(name);
        char canon[SCHEMA_NAME_MAX + 1];
        kiln_err cerr;
        if (strchr(nm, ':') == NULL && schema_name_canon(nm, canon, &cerr) == KILN_OK)
            nm = canon;
        (*names)[(*count)++] = (char *)kiln_memdup(nm, strlen(nm) + 1);
    }
    json_decref(root);
    if (st != KILN_OK) {
        table_list_free(*names, *count);
        *names = NULL;
        *count = 0;
    }
    return st;
}

/* A numeric attribute (HBase writes them as strings). 0 if present and
 * well-formed, 1 if absent (*out = dflt), -1 if malformed. */
static int
remote_attr_u64(const json_t *obj, const char *name, uint64_t dflt, uint64_t *out)
{
    const json_t *v = json_object_get(obj, name);
    *out = dflt;
    if (v == NULL)
        return 1;
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return 0;
    }
    const char *s = json_string_value(v);
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (*end != '\0')
        return -1;
    *out = x;
    return 0;
}

kiln_status
remote_schema(remote *r, const char *table, kiln_schema *out, size_t *regions,
              uint64_t *version, kiln_err *err)
{
    const char *who = remote_name(r);
    schema_init(out);
    remote_table_path(&r->target, table);
    remote_str(&r->target, "/schema");
    json_t *root;
    const rest_http_response *resp;
    kiln_status st = remote_call(r, &root, &resp, err);
    if (st != KILN_OK)
        return st;
    const char *name = json_string_value(json_object_get(root, "name"));
    uint64_t keep, salt, created, nreg, ver;
    /* KEEP_VERSIONS .. VERSION are Kiln's; an HBase gateway has none */
    if (name == NULL || remote_attr_u64(root, "KEEP_VERSIONS", 0, &keep) < 0 ||
        remote_attr_u64(root, "SALT_BUCKETS", 0, &salt) < 0 ||
        remote_attr_u64(root, "CREATED", 0, &created) < 0 ||
        remote_attr_u64(root, "REGIONS", 0, &nreg) < 0 ||
        remote_attr_u64(root, "VERSION", 0, &ver) < 0) {
        json_decref(root);
        return status_set(err, KILN_CORRUPTION, "%s: answer: incomplete schema", who);
    }
    snprintf(out->name, sizeof out->name, "%s%s", strchr(name, ':') ? "" : "default:", name);
    out->keep_versions = (uint32_t)keep;
    out->salt_buckets = (uint32_t)salt;
    out->created_ms = (int64_t)created;
    *regions = (size_t)nreg;
    *version = ver;
    const json_t *fams = json_object_get(root, "ColumnSchema");
    size_t nf = json_array_size(fams);
    out->families = kiln_calloc(nf ? nf : 1, sizeof *out->families);
    for (size_t i = 0; i < nf; i++) {
        const json_t *f = json_array_get(fams, i);
        schema_family *sf = &out->families[out->family_count];
        const char *fname = json_string_value(json_object_get(f, "name"));
        const char *comp = json_string_value(json_object_get(f, "COMPRESSION"));
        const char *bloom = json_string_value(json_object_get(f, "BLOOMFILTER"));
        uint64_t vers, ttl, bs;
        if (fname == NULL || comp == NULL || bloom == NULL ||
            remote_attr_u64(f, "VERSIONS", 1, &vers) < 0 ||
            remote_attr_u64(f, "TTL", 0, &ttl) < 0 ||
            remote_attr_u64(f, "BLOCKSIZE", 65536, &bs) < 0 ||
            compress_codec_parse(comp, &sf->codec) != 0 || bloom_type_parse(bloom, &sf->bloom) != 0) {
            st = status_set(err, KILN_CORRUPTION, "%s: answer: bad column family", who);
            break;
        }
        snprintf(sf->name, sizeof sf->name, "%s", fname);
        sf->max_versions = (uint32_t)vers;
        sf->ttl_s = (int64_t)ttl;
        sf->block_size = (uint32_t)bs;
        out->family_count++;
    }
    const json_t *props = json_object_get(root, "Properties");
    const char *key;
    const json_t *pv;
    if (st == KILN_OK && props != NULL) {
        json_object_foreach((json_t *)props, key, pv) {
            const char *v = json_string_value(pv);
            if (v == NULL) {
                st = status_set(err, KILN_CORRUPTION, "%s: answer: bad property", who);
                break;
            }
            schema_set_prop(out, key, v);
        }
    }
    json_decref(root);
    if (st != KILN_OK)
        schema_free(out);
    return st;
}

kiln_status
remote_regions(remote *r, const char *table, char *name, uint64_t *version, remote_region **out,
               size_t *count, kiln_err *err)
{
    const char *who = remote_name(r);
    *out = NULL;
    *count = 0;
    remote_table_path(&r->target, table);
    remote_str(&r->target, "/regions");
    json_t *root;
    const rest_http_response *resp;
    kiln_status st = remote_call(r, &root, &resp, err);
    if (st != KILN_OK)
        return st;
    const char *tn = json_string_value(json_object_get(root, "name"));
    uint64_t ver;
    if (tn == NULL || remote_attr_u64(root, "version", 0, &ver) < 0) {
        json_decref(root);
        return status_set(err, KILN_CORRUPTION, "%s: answer: bad regions", who);
    }
    snprintf(name, SCHEMA_NAME_MAX + 1, "%s%s", strchr(tn, ':') ? "" : "default:", tn);
    *version = ver;
    const json_t *regs = json_object_get(root, "Region");
    size_t n = json_array_size(regs);
    remote_region *rr = kiln_calloc(n ? n : 1, sizeof *rr);
    for (size_t i = 0; i < n; i++) {
        const json_t *g = json_array_get(regs, i);
        const json_t *s = json_object_get(g, "startKey");
        const json_t *e = json_object_get(g, "endKey");
        uint64_t files, bytes;
        buf_init(&rr[i].start);
        buf_init(&rr[i].end);
        if (!json_is_string(s) || !json_is_string(e) ||
            remote_attr_u64(g, "files", 0, &files) < 0 ||
            remote_attr_u64(g, "bytes", 0, &bytes) < 0 ||
            remote_b64_decode(json_string_value(s), json_string_length(s), &rr[i].start) != 0 ||
            remote_b64_decode(json_string_value(e), json_string_length(e), &rr[i].end) != 0) {
            st = status_set(err, KILN_CORRUPTION, "%s: answer: bad region %zu", who, i);
            n = i + 1;
            break;
        }
        rr[i].files = (size_t)files;
        rr[i].bytes = bytes;
    }
    json_decref(root);
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
