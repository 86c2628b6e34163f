/* remote_write.c -- the REST writes of remote_write.h over rest_http.h. */
#include "cli/remote_write.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/rest_http.h"
#include "serving/http.h"
#include "storage/base/coding.h"
#include "storage/hfile/cell.h"
#include "storage/query/json.h"

struct remote_writer {
    rest_http *http;
    kbuf target, body;
};

kiln_status
remote_writer_open(const char *server, remote_writer **out, kiln_err *err)
{
    *out = NULL;
    remote_writer *w = kiln_calloc(1, sizeof *w);
    kiln_status st = rest_http_open(server, 30000, &w->http, err);
    if (st != KILN_OK) {
        free(w);
        return st;
    }
    *out = w;
    return KILN_OK;
}

void
remote_writer_close(remote_writer *w)
{
    if (w == NULL)
        return;
    rest_http_close(w->http);
    buf_free(&w->target);
    buf_free(&w->body);
    free(w);
}

/* "/TABLE/ROW[/COLUMN][/TS]", every byte outside [A-Za-z0-9-._~] escaped. */
static void
remote_write_target(remote_writer *w, const char *table, kslice row, kslice column, int64_t ts)
{
    buf_reset(&w->target);
    buf_append_u8(&w->target, '/');
    http_pct_encode(&w->target, (const uint8_t *)table, strlen(table));
    buf_append_u8(&w->target, '/');
    http_pct_encode(&w->target, row.p, row.n);
    if (column.n > 0 || ts != CELL_LATEST_TIMESTAMP) {   /* /TABLE/ROW//TS: every family */
        buf_append_u8(&w->target, '/');
        http_pct_encode(&w->target, column.p, column.n);
    }
    if (ts != CELL_LATEST_TIMESTAMP) {
        char t[32];
        snprintf(t, sizeof t, "/%" PRId64, ts);
        buf_append(&w->target, t, strlen(t));
    }
}

static void
remote_write_query(remote_writer *w, const char *q)
{
    buf_append_u8(&w->target, memchr(w->target.data, '?', w->target.len) ? '&' : '?');
    buf_append(&w->target, q, strlen(q));
}

static void
remote_write_durability(remote_writer *w, kiln_durability d)
{
    if (d == KILN_DUR_DEFAULT)
        return;
    char q[48];
    snprintf(q, sizeof q, "durability=%s", mutation_durability_name(d));
    remote_write_query(w, q);
}

/* Judge an answer: 2xx is KILN_OK, else the server's message. */
static kiln_status
remote_write_judge(remote_writer *w, const rest_http_response *resp, kiln_err *err)
{
    if (resp->status >= 200 && resp->status <= 299)
        return KILN_OK;
    char msg[300];
    size_t n = resp->body.len < sizeof msg - 1 ? resp->body.len : sizeof msg - 1;
    memcpy(msg, resp->body.data, n);
    msg[n] = '\0';
    json_doc *root = NULL;
    kiln_err jerr;
    status_clear(&jerr);
    const char *m = NULL;
    if (json_parse((const char *)resp->body.data, resp->body.len, &root, &jerr) == KILN_OK)
        m = json_str(json_get(json_root(root), "message"), NULL);
    if (m != NULL)
        snprintf(msg, sizeof msg, "%s", m);
    for (char *c = msg; *c; c++)
        if (*c == '\r' || *c == '\n')
            *c = ' ';
    kiln_status code = resp->status == 404   ? KILN_NOT_FOUND
                       : resp->status == 400 ? KILN_INVALID
                       : resp->status == 403 || resp->status == 405 ? KILN_UNSUPPORTED
                                                                     : KILN_IO;
    kiln_status st = status_set(err, code, "%s: %ld: %s%s", rest_http_name(w->http),
                                resp->status, msg,
                                resp->status == 403 ? " (the server is read-only)" : "");
    json_doc_free(root);
    return st;
}

kiln_status
remote_put(remote_writer *w, const char *table, kslice row, kslice column, int64_t ts,
           kslice value, kiln_durability d, kiln_err *err)
{
    remote_write_target(w, table, row, column, ts);
    remote_write_durability(w, d);
    buf_append_u8(&w->target, '\0');
    const rest_http_response *resp;
    kiln_status st = rest_http_request(w->http, "PUT", (const char *)w->target.data,
                                       "application/json", "application/octet-stream",
                                       value.n ? (const char *)value.p : "", value.n, &resp, err);
    return st != KILN_OK ? st : remote_write_judge(w, resp, err);
}

kiln_status
remote_delete(remote_writer *w, const char *table, kslice row, kslice column, int64_t ts,
              kiln_durability d, kiln_err *err)
{
    remote_write_target(w, table, row, column, ts);
    remote_write_durability(w, d);
    buf_append_u8(&w->target, '\0');
    const rest_http_response *resp;
    kiln_status st = rest_http_request(w->http, "DELETE", (const char *)w->target.data,
                                       "application/json", NULL, NULL, 0, &resp, err);
    return st != KILN_OK ? st : remote_write_judge(w, resp, err);
}

kiln_status
remote_incr(remote_writer *w, const char *table, kslice row, kslice column, int64_t delta,
            kiln_durability d, int64_t *out, kiln_err *err)
{
    remote_write_target(w, table, row, kslice_make(NULL, 0), CELL_LATEST_TIMESTAMP);
    remote_write_query(w, "check=increment&rr=true");
    remote_write_durability(w, d);
    buf_append_u8(&w->target, '\0');
    char num[24];
    int nn = snprintf(num, sizeof num, "%" PRId64, delta);
    kbuf *b = &w->body;
    buf_reset(b);
    json_raw(b, "{\"Row\":[{\"key\":\"");
    json_b64_append(b, row.p, row.n);
    json_raw(b, "\",\"Cell\":[{\"column\":\"");
    json_b64_append(b, column.p, column.n);
    json_raw(b, "\",\"$\":\"");
    json_b64_append(b, (const uint8_t *)num, (size_t)nn);
    json_raw(b, "\"}]}]}");
    const rest_http_response *resp;
    kiln_status st = rest_http_request(w->http, "POST", (const char *)w->target.data,
                                       "application/json", "application/json",
                                       (const char *)b->data, b->len, &resp, err);
    if (st == KILN_OK)
        st = remote_write_judge(w, resp, err);
    if (st != KILN_OK)
        return st;
    json_doc *root = NULL;
    kiln_err jerr;
    status_clear(&jerr);
    const char *v = NULL;
    if (json_parse((const char *)resp->body.data, resp->body.len, &root, &jerr) == KILN_OK)
        v = json_str(json_get(json_at(json_get(json_at(json_get(json_root(root), "Row"), 0),
                                               "Cell"), 0), "$"), NULL);
    kbuf val = KBUF_INIT;
    if (v == NULL || json_b64_decode(v, strlen(v), &val) != 0 || val.len != 8)
        st = status_set(err, KILN_CORRUPTION, "%s: the increment's answer holds no 8-byte value",
                        rest_http_name(w->http));
    else
        *out = (int64_t)coding_get_be64(val.data);
    buf_free(&val);
    json_doc_free(root);
    return st;
}

kiln_status
remote_admin(remote_writer *w, const char *table, speed_admin_op op, int major,
             uint64_t max_bytes, speed_admin_result *r, kiln_err *err)
{
    buf_reset(&w->target);
    buf_append_u8(&w->target, '/');
    http_pct_encode(&w->target, (const uint8_t *)table, strlen(table));
    buf_append(&w->target, "/_admin/", 8);
    const char *name = speed_admin_op_name(op);
    buf_append(&w->target, name, strlen(name));
    if (op == SPEED_ADMIN_COMPACT && major)
        remote_write_query(w, "major=true");
    if (op == SPEED_ADMIN_SPLIT && max_bytes > 0) {
        char q[48];
        snprintf(q, sizeof q, "max_bytes=%" PRIu64, max_bytes);
        remote_write_query(w, q);
    }
    buf_append_u8(&w->target, '\0');
    const rest_http_response *resp;
    kiln_status st = rest_http_request(w->http, "POST", (const char *)w->target.data,
                                       "application/json", "application/json", "", 0, &resp,
                                       err);
    if (st == KILN_OK)
        st = remote_write_judge(w, resp, err);
    if (st != KILN_OK)
        return st;
    kiln_err jerr;
    status_clear(&jerr);
    st = speed_admin_from_json((const char *)resp->body.data, resp->body.len, r, &jerr);
    if (st != KILN_OK)
        return status_set(err, st, "%s: %s", rest_http_name(w->http), jerr.msg);
    return KILN_OK;
}
