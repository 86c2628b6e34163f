/* http_req.c -- a request parsed once into an http_req (http_handler.h):
 * the route from one table, the method, the representation, and every
 * decoded piece the handlers read (table, row spec, columns, times,
 * versions, bounds, multiget rows, filter).
 *
 * Decoded strings go to the api's arena, reserved up front to twice the
 * target's length: decoding never grows a string, so the arena never moves
 * while a request is parsed and slices into it stay valid.
 *
 * Path rules: the path is split on '/', then each segment is decoded. Route
 * words (schema, regions, exists, multiget, scanner, '*', and _admin before
 * flush, compact or split) are matched on the raw segment, so the row
 * "schema" is /TABLE/%73chema and the row "_admin" /TABLE/%5Fadmin. A column segment is
 * decoded before it is split on ',' and the first ':' (HBase's order, so
 * d%3Acity is family d, qualifier city). A row segment is split on a raw ','
 * (a range) or a trailing raw '*' (a glob) and then decoded, so %2C and %2A
 * stay key bytes and every binary key has a path.
 */
#include "serving/http_req.h"

#include <stdio.h>
#include <string.h>

#include "storage/store/schema.h"

/* The route table: segments to match ("?" any one segment). First match wins. */
static const struct http_route_def {
    const char *seg[3];
    int n;
    http_route route;
} http_routes[] = {
    {{NULL}, 0, HR_TABLES},
    {{"version"}, 1, HR_VERSION},
    {{"version", "cluster"}, 2, HR_VERSION_CLUSTER},
    {{"status", "cluster"}, 2, HR_STATUS_CLUSTER},
    {{"namespaces"}, 1, HR_NAMESPACES},
    {{"namespaces", "?"}, 2, HR_NAMESPACE},
    {{"namespaces", "?", "tables"}, 3, HR_NAMESPACE_TABLES},
    {{"metrics"}, 1, HR_METRICS},
    {{"healthz"}, 1, HR_HEALTHZ},
    {{"status"}, 1, HR_STATUS_PAGE},
    {{"?", "schema"}, 2, HR_SCHEMA},
    {{"?", "regions"}, 2, HR_REGIONS},
    {{"?", "exists"}, 2, HR_EXISTS},
    {{"?", "multiget"}, 2, HR_MULTIGET},
    {{"?", "multiget", "?"}, 3, HR_MULTIGET},
    {{"?", "scanner"}, 2, HR_SCANNER_NEW},
    {{"?", "scanner", "?"}, 3, HR_SCANNER},
    {{"?", "*"}, 2, HR_SCAN},
    {{"?", "_admin", "flush"}, 3, HR_SPEED_ADMIN},
    {{"?", "_admin", "compact"}, 3, HR_SPEED_ADMIN},
    {{"?", "_admin", "split"}, 3, HR_SPEED_ADMIN},
};

static int
http_req_is(kslice s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* Split the raw path into segments. -1 if there are too many. "/" gives 0
 * segments; a trailing '/' is dropped. */
static int
http_req_split(kslice path, kslice *seg)
{
    size_t n = 0, i = 1;
    if (path.n <= 1)
        return 0;
    while (i <= path.n) {
        size_t j = i;
        while (j < path.n && path.p[j] != '/')
            j++;
        if (j == path.n && j == i)
            break;
        if (n == HTTP_API_SEGMENTS_MAX)
            return -1;
        seg[n++] = kslice_make(path.p + i, j - i);
        i = j + 1;
    }
    return (int)n;
}

/* Percent-decode s into the arena. */
static int
http_req_decode(http_api *a, kslice s, int plus_space, kslice *out)
{
    size_t off = a->arena.len;
    if (a->arena.cap - a->arena.len < s.n + 1)
        return -1;
    if (http_pct_decode(s, plus_space, &a->arena) != 0) {
        a->arena.len = off;
        return -1;
    }
    *out = kslice_make(a->arena.data + off, a->arena.len - off);
    return 0;
}

int
http_req_u64(kslice s, uint64_t *out)
{
    if (s.n == 0 || s.n > 19)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (s.p[i] < '0' || s.p[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s.p[i] - '0');
    }
    *out = v;
    return 0;
}

static int
http_req_bool(kslice s, int *out)
{
    if (s.n == 0 || http_slice_ieq(s, "true") || http_slice_ieq(s, "1") ||
        http_slice_ieq(s, "yes")) {
        *out = 1;
        return 0;
    }
    if (http_slice_ieq(s, "false") || http_slice_ieq(s, "0") || http_slice_ieq(s, "no")) {
        *out = 0;
        return 0;
    }
    return -1;
}

/* Add one "f[:q]" item (already decoded) to the request's columns. */
static int
http_req_column(http_api *a, kslice item, http_api_reply *out)
{
    http_req *q = &a->rq;
    if (q->ncols == HTTP_API_COLUMNS_MAX) {
        http_handler_fail(a, out, 400, "bad_request", "more than %d columns", HTTP_API_COLUMNS_MAX);
        return -1;
    }
    const uint8_t *colon = memchr(item.p, ':', item.n);
    size_t flen = colon ? (size_t)(colon - item.p) : item.n;
    if (flen == 0 || memchr(item.p, '\0', flen) != NULL ||
        !schema_family_name_ok((const char *)item.p, flen) ||
        a->arena.cap - a->arena.len < flen + 1) {
        http_handler_fail(a, out, 400, "bad_request", "bad column '%.*s' (FAMILY[:QUALIFIER])",
                          (int)(item.n > 200 ? 200 : item.n), (const char *)item.p);
        return -1;
    }
    store_column *c = &q->cols[q->ncols++];
    char *fam = (char *)a->arena.data + a->arena.len;
    memcpy(fam, item.p, flen);
    fam[flen] = '\0';
    a->arena.len += flen + 1;
    c->family = fam;
    c->qualifier = colon ? colon + 1 : NULL;
    c->qualifier_len = colon ? item.n - flen - 1 : 0;
    return 0;
}

/* Add the columns of "f:q,f2,f3:". decode_first: decode the whole list and
 * split it after (path segments); else split the raw list and decode each
 * item (query values, where %2C stays a byte of a qualifier). */
int
http_req_columns(http_api *a, kslice raw, int decode_first, http_api_reply *out)
{
    if (decode_first && http_req_decode(a, raw, 0, &raw) != 0) {
        http_handler_fail(a, out, 400, "bad_request", "bad %%-escape in a column");
        return -1;
    }
    while (raw.n > 0) {
        const uint8_t *comma = memchr(raw.p, ',', raw.n);
        size_t len = comma ? (size_t)(comma - raw.p) : raw.n;
        kslice item = kslice_make(raw.p, len);
        raw.p += comma ? len + 1 : len;
        raw.n -= comma ? len + 1 : len;
        if (len == 0)
            continue;
        if (!decode_first && http_req_decode(a, item, 1, &item) != 0) {
            http_handler_fail(a, out, 400, "bad_request", "bad %%-escape in a column");
            return -1;
        }
        if (http_req_column(a, item, out) != 0)
            return -1;
    }
    return 0;
}

/* A decoded row key piece of at most CELL_ROW_MAX bytes. */
static int
http_req_key(http_api *a, kslice raw, int plus_space, const char *what, kslice *k,
             http_api_reply *out)
{
    if (http_req_decode(a, raw, plus_space, k) != 0) {
        http_handler_fail(a, out, 400, "bad_request", "%s: bad %%-escape", what);
        return -1;
    }
    if (k->n > CELL_ROW_MAX) {
        http_handler_fail(a, out, 400, "bad_request", "%s longer than %d bytes", what,
                          CELL_ROW_MAX);
        return -1;
    }
    return 0;
}

/* One query parameter. */
static int
http_req_param(http_api *a, kslice name, kslice value, int64_t *tmin, int64_t *tmax,
               http_api_reply *out)
{
    http_req *q = &a->rq;
    uint64_t n;
    kslice k;
    if (http_slice_ieq(name, "v") || http_slice_ieq(name, "maxversions")) {
        if (http_req_u64(value, &n) != 0 || n < 1 || n > INT32_MAX) {
            http_handler_fail(a, out, 400, "bad_request", "v must be 1..2147483647");
            return -1;
        }
        q->so.read.max_versions = (uint32_t)n;
    } else if (http_slice_ieq(name, "starttime") || http_slice_ieq(name, "endtime")) {
        if (http_req_u64(value, &n) != 0 || n > INT64_MAX) {
            http_handler_fail(a, out, 400, "bad_request", "%.*s must be milliseconds", (int)name.n,
                              (const char *)name.p);
            return -1;
        }
        *(name.p[0] == 's' || name.p[0] == 'S' ? tmin : tmax) = (int64_t)n;
    } else if (http_slice_ieq(name, "column") || http_slice_ieq(name, "columns")) {
        return http_req_columns(a, value, 0, out);
    } else if (http_slice_ieq(name, "startrow") || http_slice_ieq(name, "endrow") ||
               http_slice_ieq(name, "prefix")) {
        char what[16];
        snprintf(what, sizeof what, "%.*s", (int)name.n, (const char *)name.p);
        if (http_req_key(a, value, 1, what, &k, out) != 0)
            return -1;
        if (what[0] == 's' || what[0] == 'S') {
            q->so.start = k.p;
            q->so.start_len = k.n;
        } else if (what[0] == 'e' || what[0] == 'E') {
            q->so.stop = k.p;
            q->so.stop_len = k.n;
        } else {
            q->so.prefix = k.p;
            q->so.prefix_len = k.n;
        }
    } else if (http_slice_ieq(name, "limit")) {
        if (http_req_u64(value, &n) != 0 || n == 0) {
            http_handler_fail(a, out, 400, "bad_request", "limit must be a positive number");
            return -1;
        }
        q->so.limit = n;
        q->has_limit = 1;
    } else if (http_slice_ieq(name, "n")) {
        if (http_req_u64(value, &n) != 0 || n == 0) {
            http_handler_fail(a, out, 400, "bad_request", "n must be a positive number");
            return -1;
        }
        q->n = n;
    } else if (http_slice_ieq(name, "reversed") || http_slice_ieq(name, "paged") ||
               http_slice_ieq(name, "count")) {
        int *flag = http_slice_ieq(name, "reversed") ? &q->so.reversed
                    : http_slice_ieq(name, "paged")  ? &q->paged
                                                     : &q->count;
        if (http_req_bool(value, flag) != 0) {
            http_handler_fail(a, out, 400, "bad_request", "%.*s must be true or false", (int)name.n,
                              (const char *)name.p);
            return -1;
        }
    } else if (http_slice_ieq(name, "row")) {
        if (q->nrows == HTTP_API_MULTIGET_MAX) {
            http_handler_fail(a, out, 400, "bad_request", "more than %d rows",
                              HTTP_API_MULTIGET_MAX);
            return -1;
        }
        if (http_req_key(a, value, 1, "row", &k, out) != 0)
            return -1;
        if (k.n == 0) {
            http_handler_fail(a, out, 400, "bad_request", "row must not be empty");
            return -1;
        }
        q->rows[q->nrows++] = k;
    } else if (http_slice_ieq(name, "filter")) {
        if (http_req_decode(a, value, 1, &q->filter) != 0) {
            http_handler_fail(a, out, 400, "bad_request", "filter: bad %%-escape");
            return -1;
        }
    } else if (http_slice_ieq(name, "index")) {
        q->has_index = 1;
    }
    /* others (batchsize, caching, value=, ...) are read by their handler or ignored,
     * as HBase ignores parameters it does not know */
    return 0;
}

/* "T" or "T1,T2" (ms): the time range of a cell path. */
static int
http_req_times(kslice raw, int64_t *lo, int64_t *hi)
{
    const uint8_t *comma = memchr(raw.p, ',', raw.n);
    uint64_t x, y;
    if (comma == NULL) {
        if (http_req_u64(raw, &x) != 0 || x >= INT64_MAX)
            return -1;
        *lo = (int64_t)x;
        *hi = (int64_t)x + 1;
        return 0;
    }
    if (http_req_u64(kslice_make(raw.p, (size_t)(comma - raw.p)), &x) != 0 ||
        http_req_u64(kslice_make(comma + 1, raw.n - (size_t)(comma - raw.p) - 1), &y) != 0 ||
        x > INT64_MAX || y > INT64_MAX || x >= y)
        return -1;
    *lo = (int64_t)x;
    *hi = (int64_t)y;
    return 0;
}

/* The row spec segment: a row, "prefix*" or "start,end". */
static int
http_req_rowspec(http_api *a, kslice raw, http_api_reply *out)
{
    http_req *q = &a->rq;
    const uint8_t *comma = memchr(raw.p, ',', raw.n);
    if (comma != NULL) {
        q->row_range = 1;
        if (http_req_key(a, kslice_make(raw.p, (size_t)(comma - raw.p)), 0, "start row",
                         &q->row, out) != 0 ||
            http_req_key(a, kslice_make(comma + 1, raw.n - (size_t)(comma - raw.p) - 1), 0,
                         "end row", &q->end_row, out) != 0)
            return -1;
        return 0;
    }
    if (raw.n > 0 && raw.p[raw.n - 1] == '*') {
        q->row_glob = 1;
        raw.n--;
    }
    if (http_req_key(a, raw, 0, "row", &q->row, out) != 0)
        return -1;
    if (q->row.n == 0 && !q->row_glob) {
        http_handler_fail(a, out, 400, "bad_request", "row must not be empty");
        return -1;
    }
    return 0;
}

static http_method
http_req_method(kslice m)
{
    if (http_req_is(m, "GET") || http_req_is(m, "HEAD"))
        return HM_GET;
    if (http_req_is(m, "PUT"))
        return HM_PUT;
    if (http_req_is(m, "POST"))
        return HM_POST;
    if (http_req_is(m, "DELETE"))
        return HM_DELETE;
    return HM_OTHER;
}

int
http_req_parse(http_api *a, const http_request *req, http_api_reply *out)
{
    http_req *q = &a->rq;
    q->http = req;
    q->method = http_req_method(req->method);
    q->rep = http_rep_from_accept(req->accept);
    q->table = kslice_make("", 0);
    q->name = kslice_make("", 0);
    q->row = q->end_row = kslice_make(NULL, 0);
    q->row_glob = q->row_range = q->has_times = 0;
    q->has_limit = q->paged = q->count = q->has_index = 0;
    q->filter = kslice_make(NULL, 0);
    q->n = 0;
    q->ncols = q->nrows = 0;
    store_scan_opts_init(&q->so);
    buf_reset(&a->arena);
    buf_reserve(&a->arena, 2 * req->target.n + 64);

    q->nseg = http_req_split(req->path, q->seg);
    if (q->nseg < 0) {
        http_handler_fail(a, out, 404, "no_route", "no such resource (too many path segments)");
        return -1;
    }
    const struct http_route_def *hit = NULL;
    for (size_t i = 0; i < sizeof http_routes / sizeof http_routes[0] && hit == NULL; i++) {
        const struct http_route_def *r = &http_routes[i];
        if (r->n != q->nseg)
            continue;
        int match = 1;
        for (int k = 0; k < r->n && match; k++)
            match = strcmp(r->seg[k], "?") == 0 || http_req_is(q->seg[k], r->seg[k]);
        if (match)
            hit = r;
    }
    if (hit != NULL) {
        q->route = hit->route;
    } else if (q->nseg >= 2 && q->nseg <= 4) {
        q->route = HR_ROW;
    } else if (q->nseg == 1) {
        http_handler_fail(
            a, out, 404, "no_route",
            "no such resource; tables are read at /TABLE/ROW, /TABLE/*, /TABLE/schema");
        return -1;
    } else {
        http_handler_fail(a, out, 404, "no_route", "no such resource (too many path segments)");
        return -1;
    }

    /* names */
    if (q->route == HR_NAMESPACE || q->route == HR_NAMESPACE_TABLES) {
        if (http_req_decode(a, q->seg[1], 0, &q->name) != 0) {
            http_handler_fail(a, out, 400, "bad_request", "namespace: bad %%-escape");
            return -1;
        }
    } else if (q->route >= HR_SCHEMA) {
        if (http_req_decode(a, q->seg[0], 0, &q->table) != 0) {
            http_handler_fail(a, out, 400, "bad_request", "table name: bad %%-escape");
            return -1;
        }
        if (q->route == HR_SCANNER && http_req_decode(a, q->seg[2], 0, &q->name) != 0) {
            http_handler_fail(a, out, 400, "bad_request", "scanner id: bad %%-escape");
            return -1;
        }
    }
    /* the path's row spec, columns and times */
    if (q->route == HR_ROW) {
        if (http_req_rowspec(a, q->seg[1], out) != 0)
            return -1;
        if (q->nseg >= 3 && http_req_columns(a, q->seg[2], 1, out) != 0)
            return -1;
    } else if (q->route == HR_MULTIGET && q->nseg == 3) {
        if (http_req_columns(a, q->seg[2], 1, out) != 0)
            return -1;
    }
    /* the query */
    int64_t tmin = 0, tmax = INT64_MAX;
    kslice query = req->query, name, value;
    while (http_query_next(&query, &name, &value)) {
        if (http_req_param(a, name, value, &tmin, &tmax, out) != 0)
            return -1;
    }
    if (q->route == HR_ROW && q->nseg == 4) {
        if (http_req_times(q->seg[3], &tmin, &tmax) != 0) {
            http_handler_fail(a, out, 400, "bad_request",
                              "timestamp must be T or T1,T2 (ms, T1 < T2)");
            return -1;
        }
        q->has_times = 1;
    }
    if (tmin >= tmax) {
        http_handler_fail(a, out, 400, "bad_request", "starttime must be below endtime");
        return -1;
    }
    q->so.read.ts_min = tmin;
    q->so.read.ts_max = tmax;
    q->so.read.columns = q->ncols ? q->cols : NULL;
    q->so.read.column_count = q->ncols;
    return 0;
}
