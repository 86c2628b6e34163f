/* http_speed.c -- the maintenance routes of http_speed.h: the query read,
 * speed_admin_run on the table, its result as the JSON answer. */
#include "serving/http_speed.h"

#include <stdio.h>

#include "serving/http_req.h"
#include "serving/speed_admin.h"
#include "storage/query/json.h"

void
http_speed_admin(http_api *a, views_entry *e, http_api_reply *out)
{
    http_req *q = &a->rq;
    out->route = ROUTE_WRITE;
    speed_admin_op op;
    if (speed_admin_op_parse((const char *)q->seg[2].p, q->seg[2].n, &op) != 0) {
        http_handler_fail(a, out, 404, "no_route", "no such operation");
        return;
    }
    int major = 0;
    uint64_t max_bytes = 0;
    kslice query = q->http->query, name, value;
    while (http_query_next(&query, &name, &value)) {
        if (op == SPEED_ADMIN_COMPACT && http_slice_ieq(name, "major")) {
            if (http_slice_ieq(value, "true") || http_slice_ieq(value, "1")) {
                major = 1;
            } else if (!http_slice_ieq(value, "false") && !http_slice_ieq(value, "0")) {
                http_handler_fail(a, out, 400, "bad_request", "major must be true or false");
                return;
            }
        } else if (op == SPEED_ADMIN_SPLIT && http_slice_ieq(name, "max_bytes")) {
            if (http_req_u64(value, &max_bytes) != 0 || max_bytes == 0) {
                http_handler_fail(a, out, 400, "bad_request",
                                  "max_bytes must be a positive number of bytes");
                return;
            }
        }
    }
    speed_admin_result r;
    kiln_err err;
    status_clear(&err);
    if (speed_admin_run(a->env->speed, views_entry_name(e), op, major, max_bytes, &r, &err) !=
        KILN_OK) {
        if (err.code == KILN_BUSY)
            http_handler_fail(a, out, 503, "busy", "%s", err.msg);
        else
            http_handler_fail_status(a, out, &err);
        return;
    }
    buf_reset(&a->body);
    speed_admin_json(&r, views_entry_name(e), &a->body);
    json_raw(&a->body, "\n");
    out->status = 200;
    out->content_type = "application/json";
    out->body = &a->body;
    out->has_version = 1;
    out->version = r.version;
}
