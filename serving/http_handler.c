/* http_handler.c -- the helpers of http_handler.h that every route
 * handler and the router call: a fresh reply, error replies in the form the
 * client reads (Kiln's JSON object or HBase's text/plain), an error status
 * mapped to its HTTP status, room for a row's filtered cells, and freeing a
 * sliced scan's continuation.
 */
#include "serving/http_handler.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serving/slog.h"
#include "storage/query/json.h"

void
http_handler_cont_free(http_api_cont *k)
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
http_handler_fcells(http_api *a, size_t n)
{
    if (n > a->fcap) {
        a->fcap = n < 64 ? 64 : n;
        free(a->fcells);
        a->fcells = kiln_calloc(a->fcap, sizeof *a->fcells);
    }
    return a->fcells;
}

/* ------------------------------------------------------------------ replies */

void
http_handler_reply_init(http_api *a, http_api_reply *out, metrics_route route)
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
http_handler_text_phrase(int status)
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
http_handler_fail(http_api *a, http_api_reply *out, int status, const char *code,
                  const char *fmt, ...)
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
        json_raw(&a->body, http_handler_text_phrase(status));
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
http_handler_fail_status(http_api *a, http_api_reply *out, const kiln_err *err)
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
        http_handler_fail(a, out, 500,
                          err->code == KILN_CORRUPTION ? "corruption"
                          : err->code == KILN_IO       ? "io"
                                                       : "internal",
                          "%s", text[0] ? text : status_name(err->code));
        return;
    }
    switch (err->code) {
    case KILN_INVALID:
        http_handler_fail(a, out, 400, "invalid", "%s", err->msg);
        break;
    case KILN_NOT_FOUND:
        http_handler_fail(a, out, 404, "not_found", "%s", err->msg);
        break;
    case KILN_CORRUPTION:
        http_handler_fail(a, out, 500, "corruption", "%s", err->msg);
        break;
    case KILN_IO:
        http_handler_fail(a, out, 500, "io", "%s", err->msg);
        break;
    default:
        http_handler_fail(a, out, 500, "internal", "%s",
                          err->msg[0] ? err->msg : status_name(err->code));
        break;
    }
}
