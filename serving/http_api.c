/* http_api.c -- the router of http_api.h: a request is parsed once
 * (http_req.h), its table looked up, the method checked against what the
 * route allows, and the route's handler called (http_rows.h, http_admin.h,
 * http_scanner.h, http_metrics.h). Replies and errors are built with
 * http_handler.h's helpers, which the handlers share.
 *
 * Writes: PUT, POST and DELETE of /TABLE/ROW[/...] go to http_write.h
 * when the server has a speed layer; a read-only server (--read-only)
 * answers them 403 Forbidden, as HBase's gateway does in read-only mode.
 * Schemas and multigets are never written (403 too); a scanner is created
 * (PUT or POST /TABLE/scanner) and deleted on any server.
 *
 * Maintenance: POST /TABLE/_admin/{flush,compact,split} (http_speed.h) on a
 * server that takes writes; 405 for any other method, 403 when read-only.
 */
#include "serving/http_api.h"

#include <stdlib.h>

#include "serving/http_admin.h"
#include "serving/http_metrics.h"
#include "serving/http_req.h"
#include "serving/http_rows.h"
#include "serving/http_scanner.h"
#include "serving/http_speed.h"
#include "serving/http_write.h"
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
    http_handler_cont_free(a->own);
    free(a->fcells);
    free(a);
}

/* ------------------------------------------------------------------ replies */

void
http_api_cont_free(http_api_cont *k)
{
    http_handler_cont_free(k);
}

void
http_api_error(http_api *a, int status, const char *code, const char *message,
               http_api_reply *out)
{
    a->rq.rep = HTTP_REP_JSON;
    http_handler_reply_init(a, out, ROUTE_OTHER);
    http_handler_fail(a, out, status, code, "%s", message);
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
    [HR_SPEED_ADMIN] = ROUTE_WRITE,
};

/* A write of cells this server takes. */
static int
http_api_cell_write(const http_api *a)
{
    const http_req *q = &a->rq;
    return a->env->speed != NULL && !a->env->read_only && q->route == HR_ROW &&
           (q->method == HM_PUT || q->method == HM_POST || q->method == HM_DELETE);
}

static void
http_api_method_fail(http_api *a, const http_request *req, http_api_reply *out, int table)
{
    int shown = (int)(req->method.n > 32 ? 32 : req->method.n);
    if (table && a->rq.method != HM_OTHER) {
        http_handler_fail(a, out, 403, "forbidden",
                          "%.*s: the gateway is read-only (writes are not accepted here)", shown,
                          (const char *)req->method.p);
        return;
    }
    out->allow = a->rq.route == HR_SCANNER_NEW ? "GET, HEAD, PUT, POST"
                 : a->rq.route == HR_SCANNER   ? "GET, HEAD, DELETE"
                                               : "GET, HEAD";
    http_handler_fail(a, out, 405, "method", "method %.*s not allowed (the API is read-only)",
                      shown, (const char *)req->method.p);
}

/* POST /TABLE/_admin/OP: the method, then the server's mode, then the table. */
static void
http_api_speed_admin(http_api *a, const http_request *req, http_api_reply *out)
{
    http_req *q = &a->rq;
    out->route = ROUTE_WRITE;
    if (q->method != HM_POST) {
        int shown = (int)(req->method.n > 32 ? 32 : req->method.n);
        out->allow = "POST";
        http_handler_fail(a, out, 405, "method", "method %.*s not allowed (the operation takes "
                          "POST)", shown, (const char *)req->method.p);
        return;
    }
    if (a->env->speed == NULL || a->env->read_only) {
        http_handler_fail(a, out, 403, "forbidden",
                          "POST: the gateway is read-only (writes are not accepted here)");
        return;
    }
    views_entry *e = views_reader_find(a->reader, (const char *)q->table.p, q->table.n);
    if (e == NULL) {
        int shown = q->table.n > 200 ? 200 : (int)q->table.n;
        http_handler_fail(a, out, 404, "no_table", "table %.*s: not found", shown,
                          (const char *)q->table.p);
        return;
    }
    http_speed_admin(a, e, out);
}

static void
http_api_dispatch(http_api *a, const http_request *req, http_api_reply *out)
{
    http_handler_reply_init(a, out, ROUTE_OTHER);
    if (http_req_parse(a, req, out) != 0)
        return;
    http_req *q = &a->rq;
    out->route = http_api_metric_routes[q->route];
    if (q->route == HR_SPEED_ADMIN) {
        http_api_speed_admin(a, req, out);
        return;
    }
    int table_route = q->route >= HR_SCHEMA;
    int write_ok = (q->route == HR_SCANNER_NEW && (q->method == HM_PUT || q->method == HM_POST)) ||
                   (q->route == HR_SCANNER && q->method == HM_DELETE);
    if (http_api_cell_write(a)) {
        out->route = ROUTE_WRITE;
        write_ok = 1;
    }
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
        http_handler_fail(a, out, 404, "no_table", "table %.*s: not found", shown,
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
    default:
        if (q->method != HM_GET)
            http_write_row(a, e, out);
        else
            http_rows_row(a, e, out);
        break;
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
            http_handler_cont_free(*cont);
        *cont = NULL;
    }
    a->cont = cont;
    http_api_dispatch(a, req, out);
    http_handler_cont_free(a->resume);   /* not picked up (say, a parse error) */
    a->resume = NULL;
    a->cont = NULL;
}

void
http_api_handle(http_api *a, const http_request *req, http_api_reply *out)
{
    http_api_handle_conn(a, &a->own, req, out);
}
