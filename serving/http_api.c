/* http_api.c -- the entry of http_api.h: a request is parsed once
 * (http_req.c), its table looked up, the method checked against what the
 * route allows, and the route's handler called (http_rows.c, http_admin.c,
 * http_scanner.c, http_metrics.c). Errors are built here.
 *
 * Writes: the gateway is read-only, so PUT, POST and DELETE of cells,
 * schemas and multigets answer 403 Forbidden, as HBase's gateway does in
 * read-only mode; a scanner is the one thing a client may create (PUT or
 * POST /TABLE/scanner) and delete.
 */
#include "serving/http_api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serving/http_api_int.h"
#include "serving/json.h"
#include "serving/slog.h"
#include "serving/status_page.h"

http_api *
http_api_new(const http_api_env *env, views_reader *reader, views_ctx *ctx)
{
    http_api *a = kiln_calloc(1, sizeof *a);
    a->env = env;
    a->reader = reader;
    a->ctx = ctx;
    return a;
}

void
http_api_free(http_api *a)
{
    if (a == NULL)
        return;
    buf_free(&a->body);
    buf_free(&a->arena);
    buf_free(&a->tmp);
    buf_free(&a->tmp2);
    buf_free(&a->req_id);
    http_api_cont_free(a->own);
    free(a->fcells);
    free(a);
}

void
http_api_cont_free(http_api_cont *k)
{
    if (k == NULL)
        return;
    store_scan_close(k->scan);
    filter_free(k->filter);
    buf_free(&k->id);
    buf_free(&k->body);
    free(k);
}

kiln_cell *
http_api_fcells(http_api *a, size_t n)
{
    if (n > a->fcap) {
        a->fcap = n < 64 ? 64 : n;
        free(a->fcells);
        a->fcells = kiln_calloc(a->fcap, sizeof *a->fcells);
    }
    return a->fcells;
}

/* ------------------------------------------------------------------ replies */

static void
http_api_reply_init(http_api *a, http_api_reply *out, metrics_route route)
{
    memset(out, 0, sizeof *out);
    out->status = 200;
    out->route = route;
    out->content_type = "application/json";
    buf_reset(&a->body);
    out->body = &a->body;
}

/* The first line of an error's text/plain body: HBase's gateway writes
 * "Not found", "Bad request", "Forbidden", "Gone" and "Unavailable"
 * (ResourceBase, RowResource, ScannerResource); the statuses it never
 * writes itself get the reason phrase in the same sentence case. */
static const char *
http_api_text_phrase(int status)
{
    switch (status) {
    case 400: return "Bad request";
    case 403: return "Forbidden";
    case 404: return "Not found";
    case 405: return "Method not allowed";
    case 406: return "Not acceptable";
    case 408: return "Request timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "Content too large";
    case 414: return "URI too long";
    case 431: return "Request header fields too large";
    case 500: return "Internal server error";
    case 501: return "Not implemented";
    case 503: return "Unavailable";
    case 505: return "HTTP version not supported";
    default:  return "Error";
    }
}

/* Clients that ask for JSON (or nothing) get Kiln's error object
 * {"status":..,"code":..,"message":..}, which kiln's CLI reads. XML,
 * protobuf and raw-cell clients get HBase's text/plain form, byte for
 * byte: the phrase line, then the detail on one line, each ended by CRLF.
 * 403 and 404 carry the phrase alone, as HBase answers a write to a
 * read-only gateway and a missing row or scanner. */
void
http_api_fail(http_api *a, http_api_reply *out, int status, const char *code, const char *fmt,
              ...)
{
    char msg[STATUS_MSG_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    buf_reset(&a->body);
    out->status = status;
    out->has_timestamp = 0;
    out->location = NULL;
    out->body = &a->body;
    if (a->rq.rep != HTTP_REP_JSON) {
        out->content_type = "text/plain";
        json_raw(&a->body, http_api_text_phrase(status));
        json_raw(&a->body, "\r\n");
        if (status != 403 && status != 404 && msg[0] != '\0') {
            /* one line: a decoded row key or path may hold CR, LF or NUL */
            for (char *c = msg; *c != '\0'; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                    *c = ' ';
            json_raw(&a->body, msg);
            json_raw(&a->body, "\r\n");
        }
        return;
    }
    out->content_type = "application/json";
    json_raw(&a->body, "{\"status\":");
    json_i64(&a->body, status);
    json_raw(&a->body, ",\"code\":");
    json_str_append(&a->body, code, strlen(code));
    json_raw(&a->body, ",\"message\":");
    json_str_append(&a->body, msg, strlen(msg));
    json_raw(&a->body, "}\n");
}

void
http_api_error(http_api *a, int status, const char *code, const char *message,
               http_api_reply *out)
{
    a->rq.rep = HTTP_REP_JSON;
    http_api_reply_init(a, out, ROUTE_OTHER);
    http_api_fail(a, out, status, code, "%s", message);
}

void
http_api_fail_status(http_api *a, http_api_reply *out, const kiln_err *err)
{
    if (err->code != KILN_INVALID && err->code != KILN_NOT_FOUND) {
        char text[STATUS_MSG_MAX];
        slog_error("%s", err->msg[0] ? err->msg : status_name(err->code));
        views_client_text(a->env->views, err->msg, text, sizeof text);
        if (err->code == KILN_CORRUPTION) {
            char name[SCHEMA_NAME_MAX + 1], raw[SCHEMA_NAME_MAX + 1];
            size_t n = a->rq.table.n < SCHEMA_NAME_MAX ? a->rq.table.n : SCHEMA_NAME_MAX;
            memcpy(raw, a->rq.table.p, n);
            raw[n] = '\0';
            if (n == 0 || schema_name_canon(raw, name, NULL) != KILN_OK)
                snprintf(name, sizeof name, "%s", n ? "invalid" : "");
            metrics_corruption(a->env->metrics, 0, name);
        }
        http_api_fail(a, out, 500,
                      err->code == KILN_CORRUPTION ? "corruption"
                      : err->code == KILN_IO       ? "io"
                                                   : "internal",
                      "%s", text[0] ? text : status_name(err->code));
        return;
    }
    switch (err->code) {
    case KILN_INVALID:
        http_api_fail(a, out, 400, "invalid", "%s", err->msg);
        break;
    case KILN_NOT_FOUND:
        http_api_fail(a, out, 404, "not_found", "%s", err->msg);
        break;
    case KILN_CORRUPTION:
        http_api_fail(a, out, 500, "corruption", "%s", err->msg);
        break;
    case KILN_IO:
        http_api_fail(a, out, 500, "io", "%s", err->msg);
        break;
    default:
        http_api_fail(a, out, 500, "internal", "%s",
                      err->msg[0] ? err->msg : status_name(err->code));
        break;
    }
}

/* ------------------------------------------------------------------ dispatch */

static const metrics_route http_api_metric_routes[] = {
    [HR_TABLES] = ROUTE_TABLES,      [HR_VERSION] = ROUTE_VERSION,
    [HR_VERSION_CLUSTER] = ROUTE_VERSION, [HR_STATUS_CLUSTER] = ROUTE_STATUS,
    [HR_NAMESPACES] = ROUTE_TABLES,  [HR_NAMESPACE] = ROUTE_TABLES,
    [HR_NAMESPACE_TABLES] = ROUTE_TABLES, [HR_METRICS] = ROUTE_METRICS,
    [HR_HEALTHZ] = ROUTE_HEALTHZ,    [HR_STATUS_PAGE] = ROUTE_STATUS,
    [HR_SCHEMA] = ROUTE_SCHEMA,      [HR_REGIONS] = ROUTE_REGIONS,
    [HR_EXISTS] = ROUTE_SCHEMA,      [HR_MULTIGET] = ROUTE_MULTIGET,
    [HR_SCAN] = ROUTE_SCAN,          [HR_ROW] = ROUTE_ROW,
    [HR_SCANNER_NEW] = ROUTE_SCANNER, [HR_SCANNER] = ROUTE_SCANNER,
};

static void
http_api_method_fail(http_api *a, const http_request *req, http_api_reply *out, int table)
{
    int shown = (int)(req->method.n > 32 ? 32 : req->method.n);
    if (table && a->rq.method != HM_OTHER) {
        http_api_fail(a, out, 403, "forbidden",
                      "%.*s: the gateway is read-only (writes are not accepted)", shown,
                      (const char *)req->method.p);
        return;
    }
    out->allow = a->rq.route == HR_SCANNER_NEW ? "GET, HEAD, PUT, POST"
                 : a->rq.route == HR_SCANNER   ? "GET, HEAD, DELETE"
                                               : "GET, HEAD";
    http_api_fail(a, out, 405, "method", "method %.*s not allowed (the API is read-only)",
                  shown, (const char *)req->method.p);
}

static void
http_api_dispatch(http_api *a, const http_request *req, http_api_reply *out)
{
    http_api_reply_init(a, out, ROUTE_OTHER);
    if (http_req_parse(a, req, out) != 0)
        return;
    http_req *q = &a->rq;
    out->route = http_api_metric_routes[q->route];
    int table_route = q->route >= HR_SCHEMA;
    int write_ok = (q->route == HR_SCANNER_NEW && (q->method == HM_PUT || q->method == HM_POST)) ||
                   (q->route == HR_SCANNER && q->method == HM_DELETE);
    if (q->method != HM_GET && !write_ok) {
        http_api_method_fail(a, req, out, table_route);
        return;
    }
    switch (q->route) {
    case HR_TABLES: http_admin_tables(a, out); return;
    case HR_VERSION: http_admin_version(a, out); return;
    case HR_VERSION_CLUSTER: http_admin_version_cluster(a, out); return;
    case HR_STATUS_CLUSTER: http_admin_status_cluster(a, out); return;
    case HR_NAMESPACES:
    case HR_NAMESPACE:
    case HR_NAMESPACE_TABLES: http_admin_namespaces(a, out); return;
    case HR_METRICS: http_metrics_render(a, out); return;
    case HR_HEALTHZ: http_admin_healthz(a, out); return;
    case HR_STATUS_PAGE:
        out->content_type = "text/html; charset=utf-8";
        status_page_render(a->env, a->reader, &a->body);
        return;
    case HR_SCANNER:
        if (q->method == HM_DELETE)
            http_scanner_delete(a, out);
        else
            http_scanner_next(a, out);
        return;
    default:
        break;
    }
    if (a->resume != NULL && !q->has_index && !q->count && !q->paged &&
        (q->route == HR_SCAN || (q->route == HR_ROW && (q->row_glob || q->row_range)))) {
        /* a scan's next slice: it reads the version it began with, even if
         * the table has changed or gone since */
        out->has_version = 1;
        out->version = a->resume->version;
        if (q->route == HR_SCAN)
            http_rows_scan(a, NULL, out);
        else
            http_rows_row(a, NULL, out);
        return;
    }
    views_entry *e = views_reader_find(a->reader, (const char *)q->table.p, q->table.n);
    if (e == NULL) {
        int shown = q->table.n > 200 ? 200 : (int)q->table.n;
        http_api_fail(a, out, 404, "no_table", "table %.*s: not found", shown,
                      (const char *)q->table.p);
        return;
    }
    out->has_version = 1;
    out->version = views_entry_version(e);
    switch (q->route) {
    case HR_SCHEMA: http_admin_schema(a, e, out); break;
    case HR_REGIONS: http_admin_regions(a, e, out); break;
    case HR_EXISTS: http_rows_exists(a, e, out); break;
    case HR_MULTIGET: http_rows_multiget(a, e, out); break;
    case HR_SCAN: http_rows_scan(a, e, out); break;
    case HR_SCANNER_NEW: http_scanner_create(a, e, out); break;
    default: http_rows_row(a, e, out); break;
    }
}

void
http_api_handle_conn(http_api *a, http_api_cont **cont, const http_request *req,
                     http_api_reply *out)
{
    /* the request's identity: what decides its answer */
    buf_reset(&a->req_id);
    buf_append(&a->req_id, req->method.p, req->method.n);
    buf_append_u8(&a->req_id, '\n');
    buf_append(&a->req_id, req->target.p, req->target.n);
    buf_append_u8(&a->req_id, '\n');
    buf_append(&a->req_id, req->accept.p, req->accept.n);
    a->resume = NULL;
    if (*cont != NULL) {
        if (kslice_eq(buf_slice(&(*cont)->id), buf_slice(&a->req_id)))
            a->resume = *cont;
        else
            http_api_cont_free(*cont);
        *cont = NULL;
    }
    a->cont = cont;
    http_api_dispatch(a, req, out);
    http_api_cont_free(a->resume);   /* not picked up (say, a parse error) */
    a->resume = NULL;
    a->cont = NULL;
}

void
http_api_handle(http_api *a, const http_request *req, http_api_reply *out)
{
    http_api_handle_conn(a, &a->own, req, out);
}
