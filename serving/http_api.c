/* http_api.c -- the route handlers of http_api.h.
 *
 * A request is routed on its raw path segments, then every piece it needs
 * (table name, row, columns, query values) is percent-decoded into one
 * arena reserved up front to twice the target's length: decoding never
 * grows a string, so the arena never moves while a request is parsed and
 * the decoded slices can be used in place. Bodies are built in a reused
 * buffer; nothing on the Get path allocates once the buffers have grown.
 */
#include "serving/http_api.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "serving/json.h"
#include "serving/status_page.h"
#include "storage/cell.h"
#include "storage/schema.h"
#include "storage/store_index.h"

#define HTTP_API_SEGMENTS_MAX 8

struct http_api {
    const http_api_env *env;
    views_reader *reader;
    views_ctx *ctx;
    kbuf body;
    kbuf arena;                 /* decoded pieces of the current request */
    kbuf tmp;
    store_column cols[HTTP_API_COLUMNS_MAX];
    size_t ncols;
    kslice rows[HTTP_API_MULTIGET_MAX];
    size_t nrows;
};

/* Options of a read request after parsing. */
typedef struct http_api_read {
    store_scan_opts so;
    int has_limit;
} http_api_read;

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
    free(a);
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

static void
http_api_fail(http_api *a, http_api_reply *out, int status, const char *code, const char *fmt,
              ...) __attribute__((format(printf, 5, 6)));

static void
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
    out->content_type = "application/json";
    out->has_timestamp = 0;
    out->body = &a->body;
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
    http_api_reply_init(a, out, ROUTE_OTHER);
    http_api_fail(a, out, status, code, "%s", message);
}

/* Map a storage error to a reply. */
static void
http_api_fail_status(http_api *a, http_api_reply *out, const kiln_err *err)
{
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
        http_api_fail(a, out, 500, "internal", "%s", err->msg[0] ? err->msg
                                                                   : status_name(err->code));
        break;
    }
}

/* ------------------------------------------------------------------ decoding */

/* Percent-decode s into the arena; the result is valid for the request. */
static int
http_api_decode(http_api *a, kslice s, int plus_space, kslice *out)
{
    size_t off = a->arena.len;
    if (a->arena.cap - a->arena.len < s.n + 1)
        return -1;   /* cannot happen: reserved for the whole target */
    if (http_pct_decode(s, plus_space, &a->arena) != 0) {
        a->arena.len = off;
        return -1;
    }
    *out = kslice_make(a->arena.data + off, a->arena.len - off);
    return 0;
}

/* A NUL-terminated decoded copy (for family names). */
static int
http_api_decode_cstr(http_api *a, kslice s, const char **out)
{
    kslice d;
    if (http_api_decode(a, s, 0, &d) != 0 || memchr(d.p, '\0', d.n) != NULL)
        return -1;
    a->arena.data[a->arena.len++] = '\0';
    *out = (const char *)d.p;
    return 0;
}

/* Add the columns of a raw "f:q,f2,f3:" list. Returns 0 or -1 (with a reply). */
static int
http_api_parse_columns(http_api *a, kslice raw, int plus_space, http_api_reply *out)
{
    while (raw.n > 0) {
        const uint8_t *comma = memchr(raw.p, ',', raw.n);
        size_t len = comma ? (size_t)(comma - raw.p) : raw.n;
        kslice item = kslice_make(raw.p, len);
        raw.p += comma ? len + 1 : len;
        raw.n -= comma ? len + 1 : len;
        if (len == 0)
            continue;
        if (a->ncols == HTTP_API_COLUMNS_MAX) {
            http_api_fail(a, out, 400, "bad_request", "more than %d columns",
                          HTTP_API_COLUMNS_MAX);
            return -1;
        }
        const uint8_t *colon = memchr(item.p, ':', item.n);
        kslice fam = kslice_make(item.p, colon ? (size_t)(colon - item.p) : item.n);
        store_column *c = &a->cols[a->ncols];
        if (http_api_decode_cstr(a, fam, &c->family) != 0 || c->family[0] == '\0' ||
            !schema_family_name_ok(c->family, strlen(c->family))) {
            http_api_fail(a, out, 400, "bad_request", "bad column '%.*s' (FAMILY[:QUALIFIER])",
                          (int)(item.n > 200 ? 200 : item.n), (const char *)item.p);
            return -1;
        }
        c->qualifier = NULL;
        c->qualifier_len = 0;
        if (colon != NULL) {
            kslice q;
            if (http_api_decode(a, kslice_make(colon + 1, item.n - fam.n - 1), plus_space,
                                &q) != 0) {
                http_api_fail(a, out, 400, "bad_request", "bad %%-escape in a column");
                return -1;
            }
            c->qualifier = q.p;
            c->qualifier_len = q.n;
        }
        a->ncols++;
    }
    return 0;
}

static int
http_api_u64(kslice s, uint64_t *out)
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
http_api_bool(kslice s, int *out)
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

/* A row key piece: decoded, at most CELL_ROW_MAX bytes. */
static int
http_api_key(http_api *a, kslice raw, int plus_space, const char *what, kslice *out,
             http_api_reply *reply)
{
    if (http_api_decode(a, raw, plus_space, out) != 0) {
        http_api_fail(a, reply, 400, "bad_request", "%s: bad %%-escape", what);
        return -1;
    }
    if (out->n > CELL_ROW_MAX) {
        http_api_fail(a, reply, 400, "bad_request", "%s longer than %d bytes", what,
                      CELL_ROW_MAX);
        return -1;
    }
    return 0;
}

/* Parse the query of a read. rows: collect row= values (multiget). Returns
 * 0 or -1 with the reply filled. */
static int
http_api_parse_query(http_api *a, kslice query, http_api_read *rd, int rows,
                     http_api_reply *out)
{
    kslice name, value;
    int64_t tmin = 0, tmax = INT64_MAX;
    while (http_query_next(&query, &name, &value)) {
        uint64_t n;
        kslice k;
        if (http_slice_ieq(name, "v") || http_slice_ieq(name, "maxversions")) {
            if (http_api_u64(value, &n) != 0 || n < 1 || n > INT32_MAX) {
                http_api_fail(a, out, 400, "bad_request", "v must be 1..2147483647");
                return -1;
            }
            rd->so.read.max_versions = (uint32_t)n;
        } else if (http_slice_ieq(name, "starttime") || http_slice_ieq(name, "endtime")) {
            if (http_api_u64(value, &n) != 0 || n > INT64_MAX) {
                http_api_fail(a, out, 400, "bad_request", "%.*s must be milliseconds",
                              (int)name.n, (const char *)name.p);
                return -1;
            }
            if (name.p[0] == 's' || name.p[0] == 'S')
                tmin = (int64_t)n;
            else
                tmax = (int64_t)n;
        } else if (http_slice_ieq(name, "column") || http_slice_ieq(name, "columns")) {
            if (http_api_parse_columns(a, value, 1, out) != 0)
                return -1;
        } else if (http_slice_ieq(name, "startrow")) {
            if (http_api_key(a, value, 1, "startrow", &k, out) != 0)
                return -1;
            rd->so.start = k.p;
            rd->so.start_len = k.n;
        } else if (http_slice_ieq(name, "endrow")) {
            if (http_api_key(a, value, 1, "endrow", &k, out) != 0)
                return -1;
            rd->so.stop = k.p;
            rd->so.stop_len = k.n;
        } else if (http_slice_ieq(name, "prefix")) {
            if (http_api_key(a, value, 1, "prefix", &k, out) != 0)
                return -1;
            rd->so.prefix = k.p;
            rd->so.prefix_len = k.n;
        } else if (http_slice_ieq(name, "limit")) {
            if (http_api_u64(value, &n) != 0 || n == 0) {
                http_api_fail(a, out, 400, "bad_request", "limit must be a positive number");
                return -1;
            }
            rd->so.limit = n;
            rd->has_limit = 1;
        } else if (http_slice_ieq(name, "reversed")) {
            if (http_api_bool(value, &rd->so.reversed) != 0) {
                http_api_fail(a, out, 400, "bad_request", "reversed must be true or false");
                return -1;
            }
        } else if (rows && http_slice_ieq(name, "row")) {
            if (a->nrows == HTTP_API_MULTIGET_MAX) {
                http_api_fail(a, out, 400, "bad_request", "more than %d rows",
                              HTTP_API_MULTIGET_MAX);
                return -1;
            }
            if (http_api_key(a, value, 1, "row", &k, out) != 0)
                return -1;
            if (k.n == 0) {
                http_api_fail(a, out, 400, "bad_request", "row must not be empty");
                return -1;
            }
            a->rows[a->nrows++] = k;
        }
        /* other parameters (batchsize, ...) are accepted and ignored, as HBase does */
    }
    if (tmin >= tmax) {
        http_api_fail(a, out, 400, "bad_request", "starttime must be below endtime");
        return -1;
    }
    rd->so.read.ts_min = tmin;
    rd->so.read.ts_max = tmax;
    rd->so.read.columns = a->ncols ? a->cols : NULL;
    rd->so.read.column_count = a->ncols;
    return 0;
}

/* ------------------------------------------------------------------ JSON */

static void
http_api_json_row(http_api *a, const store_row *r)
{
    kbuf *b = &a->body;
    json_raw(b, "{\"key\":\"");
    json_b64_append(b, r->row.p, r->row.n);
    json_raw(b, "\",\"Cell\":[");
    for (size_t i = 0; i < r->count; i++) {
        const kiln_cell *c = &r->cells[i];
        buf_reset(&a->tmp);
        buf_append(&a->tmp, c->family, c->family_len);
        buf_append_u8(&a->tmp, ':');
        buf_append(&a->tmp, c->qualifier, c->qualifier_len);
        json_raw(b, i ? ",{\"column\":\"" : "{\"column\":\"");
        json_b64_append(b, a->tmp.data, a->tmp.len);
        json_raw(b, "\",\"timestamp\":");
        json_i64(b, c->ts);
        json_raw(b, ",\"$\":\"");
        json_b64_append(b, c->value, c->value_len);
        json_raw(b, "\"}");
    }
    json_raw(b, "]}");
}

/* ------------------------------------------------------------------ routes */

static void
http_api_tables(http_api *a, http_api_reply *out)
{
    json_raw(&a->body, "{\"table\":[");
    for (size_t i = 0; i < views_reader_count(a->reader); i++) {
        const char *name = views_entry_name(views_reader_at(a->reader, i));
        json_raw(&a->body, i ? ",{\"name\":" : "{\"name\":");
        json_str_append(&a->body, name, strlen(name));
        json_raw(&a->body, "}");
    }
    json_raw(&a->body, "]}\n");
    (void)out;
}

static void
http_api_version(http_api *a)
{
    struct utsname u;
    char os[256] = "unknown";
    if (uname(&u) == 0)
        snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
    json_raw(&a->body, "{\"REST\":\"0.0.3\",\"Server\":\"kiln-server/" KILN_VERSION
                       "\",\"Kiln\":\"" KILN_VERSION "\",\"OS\":");
    json_str_append(&a->body, os, strlen(os));
    json_raw(&a->body, "}\n");
}

static void
http_api_healthz(http_api *a, http_api_reply *out)
{
    if (atomic_load(&((http_api_env *)a->env)->draining)) {
        out->status = 503;
        json_raw(&a->body, "{\"status\":\"draining\"}\n");
        return;
    }
    json_raw(&a->body, "{\"status\":\"ok\",\"tables\":");
    json_u64(&a->body, views_reader_count(a->reader));
    json_raw(&a->body, "}\n");
}

static void
http_api_str_member(kbuf *b, const char *name, const char *value, int comma)
{
    if (comma)
        buf_append_u8(b, ',');
    json_str_append(b, name, strlen(name));
    buf_append_u8(b, ':');
    json_str_append(b, value, strlen(value));
}

static void
http_api_schema(http_api *a, views_entry *e)
{
    const kiln_schema *s = views_entry_schema(e);
    kbuf *b = &a->body;
    char num[32];
    json_raw(b, "{");
    http_api_str_member(b, "name", s->name, 0);
    http_api_str_member(b, "IS_META", "false", 1);
    snprintf(num, sizeof num, "%u", s->keep_versions);
    http_api_str_member(b, "KEEP_VERSIONS", num, 1);
    snprintf(num, sizeof num, "%u", s->salt_buckets);
    http_api_str_member(b, "SALT_BUCKETS", num, 1);
    snprintf(num, sizeof num, "%lld", (long long)s->created_ms);
    http_api_str_member(b, "CREATED", num, 1);
    snprintf(num, sizeof num, "%zu", schema_region_count(s));
    http_api_str_member(b, "REGIONS", num, 1);
    snprintf(num, sizeof num, "%llu", (unsigned long long)views_entry_version(e));
    http_api_str_member(b, "VERSION", num, 1);
    json_raw(b, ",\"ColumnSchema\":[");
    for (size_t i = 0; i < s->family_count; i++) {
        const schema_family *f = &s->families[i];
        json_raw(b, i ? ",{" : "{");
        http_api_str_member(b, "name", f->name, 0);
        snprintf(num, sizeof num, "%u", f->max_versions);
        http_api_str_member(b, "VERSIONS", num, 1);
        snprintf(num, sizeof num, "%lld", (long long)f->ttl_s);
        http_api_str_member(b, "TTL", num, 1);
        http_api_str_member(b, "COMPRESSION", compress_codec_name(f->codec), 1);
        http_api_str_member(b, "BLOOMFILTER", bloom_type_name(f->bloom), 1);
        snprintf(num, sizeof num, "%u", f->block_size);
        http_api_str_member(b, "BLOCKSIZE", num, 1);
        json_raw(b, "}");
    }
    json_raw(b, "],\"Properties\":{");
    for (size_t i = 0; i < s->prop_count; i++)
        http_api_str_member(b, s->props[i].key, s->props[i].value, i > 0);
    json_raw(b, "}}\n");
}

static void
http_api_regions(http_api *a, views_entry *e)
{
    store_view *v = views_entry_view(e);
    kbuf *b = &a->body;
    json_raw(b, "{");
    http_api_str_member(b, "name", views_entry_name(e), 0);
    json_raw(b, ",\"version\":");
    json_u64(b, views_entry_version(e));
    json_raw(b, ",\"Region\":[");
    for (size_t i = 0; i < store_view_region_count(v); i++) {
        kslice s = store_view_region_start(v, i), en = store_view_region_end(v, i);
        size_t files;
        uint64_t bytes = store_view_region_bytes(v, i, &files);
        json_raw(b, i ? ",{\"id\":" : "{\"id\":");
        json_u64(b, i);
        /* HBase's region name: table,startKey,id */
        buf_reset(&a->tmp);
        buf_append(&a->tmp, views_entry_name(e), strlen(views_entry_name(e)));
        buf_append_u8(&a->tmp, ',');
        cell_to_string_binary(&a->tmp, s.p, s.n);
        char idt[32];
        int n = snprintf(idt, sizeof idt, ",%zu", i);
        buf_append(&a->tmp, idt, (size_t)n);
        json_raw(b, ",\"name\":");
        json_str_append(b, a->tmp.data, a->tmp.len);
        json_raw(b, ",\"startKey\":\"");
        json_b64_append(b, s.p, s.n);
        json_raw(b, "\",\"endKey\":\"");
        json_b64_append(b, en.p, en.n);
        json_raw(b, "\",\"location\":");
        json_str_append(b, a->env->listen, strlen(a->env->listen));
        json_raw(b, ",\"files\":");
        json_u64(b, files);
        json_raw(b, ",\"bytes\":");
        json_u64(b, bytes);
        json_raw(b, "}");
    }
    json_raw(b, "]}\n");
}

/* "T" or "T1,T2" (ms): the time range of a cell path. */
static int
http_api_ts_segment(kslice raw, int64_t *lo, int64_t *hi)
{
    const uint8_t *comma = memchr(raw.p, ',', raw.n);
    uint64_t a, b;
    if (comma == NULL) {
        if (http_api_u64(raw, &a) != 0 || a >= INT64_MAX)
            return -1;
        *lo = (int64_t)a;
        *hi = (int64_t)a + 1;
        return 0;
    }
    if (http_api_u64(kslice_make(raw.p, (size_t)(comma - raw.p)), &a) != 0 ||
        http_api_u64(kslice_make(comma + 1, raw.n - (size_t)(comma - raw.p) - 1), &b) != 0 ||
        a > INT64_MAX || b > INT64_MAX || a >= b)
        return -1;
    *lo = (int64_t)a;
    *hi = (int64_t)b;
    return 0;
}

static void
http_api_row(http_api *a, const http_request *req, views_entry *e, const kslice *seg,
             size_t nseg, http_api_reply *out)
{
    http_api_read rd;
    store_scan_opts_init(&rd.so);
    rd.has_limit = 0;
    kslice row;
    if (http_api_key(a, seg[1], 0, "row", &row, out) != 0)
        return;
    if (row.n == 0) {
        http_api_fail(a, out, 400, "bad_request", "row must not be empty");
        return;
    }
    if (nseg >= 3 && http_api_parse_columns(a, seg[2], 0, out) != 0)
        return;
    if (http_api_parse_query(a, req->query, &rd, 0, out) != 0)
        return;
    if (nseg == 4 && http_api_ts_segment(seg[3], &rd.so.read.ts_min, &rd.so.read.ts_max) != 0) {
        http_api_fail(a, out, 400, "bad_request", "timestamp must be T or T1,T2 (ms, T1 < T2)");
        return;
    }
    store_row r;
    kiln_err err;
    status_clear(&err);
    if (views_get(e, a->ctx, row.p, row.n, &rd.so.read, &r, &err) != KILN_OK) {
        http_api_fail_status(a, out, &err);
        return;
    }
    if (r.count == 0) {
        buf_reset(&a->tmp);
        cell_to_string_binary(&a->tmp, row.p, row.n < 512 ? row.n : 512);
        http_api_fail(a, out, 404, "no_row", "%s: row '%.*s' not found", views_entry_name(e),
                      (int)a->tmp.len, (const char *)a->tmp.data);
        return;
    }
    if (http_accepts(req->accept, "application/octet-stream")) {
        if (r.count != 1) {
            http_api_fail(a, out, 406, "not_acceptable",
                          "application/octet-stream needs exactly one cell; this read has %zu "
                          "(name one column)", r.count);
            return;
        }
        out->content_type = "application/octet-stream";
        out->has_timestamp = 1;
        out->timestamp = r.cells[0].ts;
        buf_append(&a->body, r.cells[0].value, r.cells[0].value_len);
        return;
    }
    json_raw(&a->body, "{\"Row\":[");
    http_api_json_row(a, &r);
    json_raw(&a->body, "]}\n");
}

static void
http_api_multiget(http_api *a, const http_request *req, views_entry *e, http_api_reply *out)
{
    http_api_read rd;
    store_scan_opts_init(&rd.so);
    rd.has_limit = 0;
    if (http_api_parse_query(a, req->query, &rd, 1, out) != 0)
        return;
    if (a->nrows == 0) {
        http_api_fail(a, out, 400, "bad_request", "multiget needs at least one row= parameter");
        return;
    }
    json_raw(&a->body, "{\"Row\":[");
    size_t found = 0;
    for (size_t i = 0; i < a->nrows; i++) {
        store_row r;
        kiln_err err;
        status_clear(&err);
        if (views_get(e, a->ctx, a->rows[i].p, a->rows[i].n, &rd.so.read, &r, &err) != KILN_OK) {
            http_api_fail_status(a, out, &err);
            return;
        }
        if (r.count == 0)
            continue;
        if (found++)
            json_raw(&a->body, ",");
        http_api_json_row(a, &r);
    }
    if (found == 0) {
        http_api_fail(a, out, 404, "no_row", "%s: none of the %zu rows exists",
                      views_entry_name(e), a->nrows);
        return;
    }
    json_raw(&a->body, "]}\n");
}

/* A scan with index=NAME[&value=V]...[&value_start=A][&value_stop=B][&after=K]:
 * the table's rows through its secondary index NAME (storage/store_index.h),
 * with the scan's limit and column parameters. When a page is cut short the
 * JSON carries "next_after": B64, the `after` of the next page. */
static void
http_api_index_scan(http_api *a, const http_request *req, views_entry *e, http_api_read *rd,
                    kslice glob, http_api_reply *out)
{
    store_index_opts io;
    store_index_opts_init(&io);
    kslice vals[STORE_INDEX_COLUMNS_MAX], k;
    const char *index = NULL;
    kslice query = req->query, name, value;
    while (http_query_next(&query, &name, &value)) {
        if (http_slice_ieq(name, "index")) {
            if (http_api_decode_cstr(a, value, &index) != 0 || index[0] == '\0') {
                http_api_fail(a, out, 400, "bad_request", "index: bad index name");
                return;
            }
        } else if (http_slice_ieq(name, "value")) {
            if (io.nvalues == STORE_INDEX_COLUMNS_MAX) {
                http_api_fail(a, out, 400, "bad_request", "more than %d values",
                              STORE_INDEX_COLUMNS_MAX);
                return;
            }
            if (http_api_key(a, value, 1, "value", &k, out) != 0)
                return;
            vals[io.nvalues++] = k;
        } else if (http_slice_ieq(name, "value_start")) {
            if (http_api_key(a, value, 1, "value_start", &io.value_start, out) != 0)
                return;
            io.has_value_start = 1;
        } else if (http_slice_ieq(name, "value_stop")) {
            if (http_api_key(a, value, 1, "value_stop", &io.value_stop, out) != 0)
                return;
            io.has_value_stop = 1;
        } else if (http_slice_ieq(name, "after")) {
            if (http_api_key(a, value, 1, "after", &io.after, out) != 0)
                return;
        }
    }
    if (glob.n > 0 || rd->so.start_len > 0 || rd->so.stop_len > 0 || rd->so.prefix_len > 0 ||
        rd->so.reversed) {
        http_api_fail(a, out, 400, "bad_request",
                      "index scans take value, value_start, value_stop and after, not "
                      "startrow, endrow, prefix or reversed");
        return;
    }
    io.values = vals;
    io.read = rd->so.read;
    uint64_t page = a->env->page_rows;
    if (rd->has_limit && rd->so.limit < page)
        page = rd->so.limit;
    io.limit = page + 1;   /* one more row tells whether a next page exists */
    store_index_scan *s;
    kiln_err err;
    status_clear(&err);
    if (store_index_scan_open(views_entry_view(e), index, &io, &s, &err) != KILN_OK) {
        http_api_fail_status(a, out, &err);
        return;
    }
    json_raw(&a->body, "{\"Row\":[");
    uint64_t rows = 0;
    kbuf last = KBUF_INIT;   /* the position of the last row in the page */
    for (;;) {
        store_row r;
        int has;
        if (store_index_scan_next(s, &r, &has, &err) != KILN_OK) {
            http_api_fail_status(a, out, &err);
            break;
        }
        if (!has) {
            json_raw(&a->body, "]}\n");
            break;
        }
        if (rows == page || a->body.len >= a->env->page_bytes) {
            json_raw(&a->body, "],\"next_after\":\"");
            json_b64_append(&a->body, last.data, last.len);
            json_raw(&a->body, "\"}\n");
            break;
        }
        if (rows++)
            json_raw(&a->body, ",");
        http_api_json_row(a, &r);
        kslice pos = store_index_scan_position(s);
        buf_reset(&last);
        buf_append(&last, pos.p, pos.n);
    }
    buf_free(&last);
    store_index_scan_close(s);
}

static void
http_api_scan(http_api *a, const http_request *req, views_entry *e, kslice glob,
              http_api_reply *out)
{
    http_api_read rd;
    store_scan_opts_init(&rd.so);
    rd.has_limit = 0;
    if (http_api_parse_query(a, req->query, &rd, 0, out) != 0)
        return;
    kslice query = req->query, name, value;
    while (http_query_next(&query, &name, &value)) {
        if (http_slice_ieq(name, "index")) {
            http_api_index_scan(a, req, e, &rd, glob, out);
            return;
        }
    }
    if (glob.n > 0) {
        kslice p;
        if (http_api_key(a, glob, 0, "row prefix", &p, out) != 0)
            return;
        rd.so.prefix = p.p;
        rd.so.prefix_len = p.n;
    }
    uint64_t page = a->env->page_rows;
    if (rd.has_limit && rd.so.limit < page)
        page = rd.so.limit;
    rd.so.limit = page + 1;   /* one more row tells where the next page starts */
    store_scan *s;
    kiln_err err;
    status_clear(&err);
    if (store_scan_open(views_entry_view(e), &rd.so, &s, &err) != KILN_OK) {
        http_api_fail_status(a, out, &err);
        return;
    }
    json_raw(&a->body, "{\"Row\":[");
    uint64_t rows = 0;
    for (;;) {
        store_row r;
        int has;
        if (store_scan_next(s, &r, &has, &err) != KILN_OK) {
            store_scan_close(s);
            http_api_fail_status(a, out, &err);
            return;
        }
        if (!has)
            break;
        if (rows == page || a->body.len >= a->env->page_bytes) {
            json_raw(&a->body, "],\"next_startrow\":\"");
            json_b64_append(&a->body, r.row.p, r.row.n);
            json_raw(&a->body, "\"}\n");
            store_scan_close(s);
            return;
        }
        if (rows++)
            json_raw(&a->body, ",");
        http_api_json_row(a, &r);
    }
    store_scan_close(s);
    json_raw(&a->body, "]}\n");
}

static int64_t
http_api_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
http_api_count(http_api *a, const http_request *req, views_entry *e, http_api_reply *out)
{
    http_api_read rd;
    store_scan_opts_init(&rd.so);
    rd.has_limit = 0;
    if (http_api_parse_query(a, req->query, &rd, 0, out) != 0)
        return;
    rd.so.reversed = 0;
    rd.so.limit = a->env->count_rows + 1;
    store_scan *s;
    kiln_err err;
    status_clear(&err);
    if (store_scan_open(views_entry_view(e), &rd.so, &s, &err) != KILN_OK) {
        http_api_fail_status(a, out, &err);
        return;
    }
    int64_t deadline = http_api_mono_ms() + HTTP_API_COUNT_MS;
    uint64_t rows = 0;
    for (;;) {
        store_row r;
        int has;
        if (store_scan_next(s, &r, &has, &err) != KILN_OK) {
            store_scan_close(s);
            http_api_fail_status(a, out, &err);
            return;
        }
        if (!has)
            break;
        if (rows == a->env->count_rows ||
            (rows > 0 && (rows & 255) == 0 && http_api_mono_ms() > deadline)) {
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

/* ------------------------------------------------------------------ metrics */

static long
http_api_open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    long n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] != '.')
            n++;
    }
    closedir(d);
    return n - 1;   /* the directory stream itself */
}

static long
http_api_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return -1;
    long size = 0, rss = 0;
    int ok = fscanf(f, "%ld %ld", &size, &rss) == 2;
    fclose(f);
    return ok ? rss * sysconf(_SC_PAGESIZE) : -1;
}

static void
http_api_printf(kbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
http_api_printf(kbuf *b, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        buf_append(b, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static void
http_api_metrics(http_api *a, http_api_reply *out)
{
    kbuf *b = &a->body;
    out->content_type = "text/plain; version=0.0.4; charset=utf-8";
    metrics_render(a->env->metrics, b);
    block_cache_stats bs;
    block_cache_get_stats(views_block_cache(a->env->views), &bs);
    double bt = (double)(bs.hits + bs.misses);
    http_api_printf(b,
                    "# HELP kiln_block_cache_hits_total Block cache lookups that hit.\n"
                    "# TYPE kiln_block_cache_hits_total counter\n"
                    "kiln_block_cache_hits_total %llu\n"
                    "# HELP kiln_block_cache_misses_total Block cache lookups that missed.\n"
                    "# TYPE kiln_block_cache_misses_total counter\n"
                    "kiln_block_cache_misses_total %llu\n"
                    "# HELP kiln_block_cache_hit_ratio Hits over lookups since start.\n"
                    "# TYPE kiln_block_cache_hit_ratio gauge\n"
                    "kiln_block_cache_hit_ratio %.6f\n",
                    (unsigned long long)bs.hits, (unsigned long long)bs.misses,
                    bt > 0 ? (double)bs.hits / bt : 0.0);
    http_api_printf(b,
                    "# HELP kiln_block_cache_bytes Bytes of decoded blocks cached.\n"
                    "# TYPE kiln_block_cache_bytes gauge\nkiln_block_cache_bytes %llu\n"
                    "# HELP kiln_block_cache_capacity_bytes The block cache budget.\n"
                    "# TYPE kiln_block_cache_capacity_bytes gauge\n"
                    "kiln_block_cache_capacity_bytes %llu\n"
                    "# HELP kiln_block_cache_evictions_total Blocks evicted.\n"
                    "# TYPE kiln_block_cache_evictions_total counter\n"
                    "kiln_block_cache_evictions_total %llu\n",
                    (unsigned long long)bs.bytes_used, (unsigned long long)bs.capacity,
                    (unsigned long long)bs.evictions);
    rowcache_stats tot;
    views_table_info *infos;
    size_t n = views_table_infos(a->env->views, &infos);
    http_api_printf(b, "# HELP kiln_view_version The view version served, per table.\n"
                       "# TYPE kiln_view_version gauge\n");
    for (size_t i = 0; i < n; i++)
        http_api_printf(b, "kiln_view_version{table=\"%s\"} %llu\n", infos[i].name,
                        (unsigned long long)infos[i].version);
    http_api_printf(b, "# HELP kiln_view_swaps_total Versions swapped in while serving.\n"
                       "# TYPE kiln_view_swaps_total counter\n");
    for (size_t i = 0; i < n; i++)
        http_api_printf(b, "kiln_view_swaps_total{table=\"%s\"} %llu\n", infos[i].name,
                        (unsigned long long)infos[i].swaps);
    http_api_printf(b, "# HELP kiln_view_warm_seconds Time the last swap spent warming.\n"
                       "# TYPE kiln_view_warm_seconds gauge\n");
    for (size_t i = 0; i < n; i++)
        http_api_printf(b, "kiln_view_warm_seconds{table=\"%s\"} %.6f\n", infos[i].name,
                        infos[i].last_warm_ms / 1e3);
    http_api_printf(b, "# HELP kiln_view_prefetch_bytes Bytes of blocks the last swap read "
                       "into the block cache before serving.\n"
                       "# TYPE kiln_view_prefetch_bytes gauge\n");
    for (size_t i = 0; i < n; i++)
        http_api_printf(b, "kiln_view_prefetch_bytes{table=\"%s\"} %llu\n", infos[i].name,
                        (unsigned long long)infos[i].last_prefetch_bytes);
    http_api_printf(b, "# HELP kiln_view_open_error 1 while the current version of a table "
                       "cannot be opened.\n# TYPE kiln_view_open_error gauge\n");
    for (size_t i = 0; i < n; i++)
        http_api_printf(b, "kiln_view_open_error{table=\"%s\"} %d\n", infos[i].name,
                        infos[i].error[0] != '\0');
    free(infos);
    views_rowcache_totals(a->reader, &tot);
    double rt = (double)(tot.hits + tot.misses);
    http_api_printf(b,
                    "# HELP kiln_row_cache_hits_total Row cache hits (versions now served).\n"
                    "# TYPE kiln_row_cache_hits_total counter\n"
                    "kiln_row_cache_hits_total %llu\n"
                    "# HELP kiln_row_cache_misses_total Row cache misses (versions now "
                    "served).\n# TYPE kiln_row_cache_misses_total counter\n"
                    "kiln_row_cache_misses_total %llu\n"
                    "# HELP kiln_row_cache_hit_ratio Row cache hits over lookups.\n"
                    "# TYPE kiln_row_cache_hit_ratio gauge\nkiln_row_cache_hit_ratio %.6f\n"
                    "# HELP kiln_row_cache_bytes Bytes held by row caches.\n"
                    "# TYPE kiln_row_cache_bytes gauge\nkiln_row_cache_bytes %llu\n"
                    "# HELP kiln_row_cache_capacity_bytes The row cache budget.\n"
                    "# TYPE kiln_row_cache_capacity_bytes gauge\n"
                    "kiln_row_cache_capacity_bytes %llu\n",
                    (unsigned long long)tot.hits, (unsigned long long)tot.misses,
                    rt > 0 ? (double)tot.hits / rt : 0.0,
                    (unsigned long long)rowcache_pool_used(views_rowcache_pool(a->env->views)),
                    (unsigned long long)rowcache_pool_capacity(
                        views_rowcache_pool(a->env->views)));
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    http_api_printf(b,
                    "# HELP kiln_open_files Open file descriptors of the process.\n"
                    "# TYPE kiln_open_files gauge\nkiln_open_files %ld\n"
                    "# HELP kiln_process_resident_bytes Resident memory of the process.\n"
                    "# TYPE kiln_process_resident_bytes gauge\n"
                    "kiln_process_resident_bytes %ld\n"
                    "# HELP kiln_uptime_seconds Seconds since the server started.\n"
                    "# TYPE kiln_uptime_seconds gauge\nkiln_uptime_seconds %.3f\n"
                    "# HELP kiln_worker_threads Worker threads.\n"
                    "# TYPE kiln_worker_threads gauge\nkiln_worker_threads %d\n",
                    http_api_open_fds(), http_api_rss_bytes(),
                    (double)(now_ms - a->env->started_ms) / 1e3, a->env->threads);
}

/* ------------------------------------------------------------------ dispatch */

/* Split the raw path into segments (no decoding). Returns the count, or -1
 * if there are too many. "/" gives 0 segments; a trailing '/' is dropped. */
static int
http_api_split(kslice path, kslice *seg)
{
    size_t n = 0;
    size_t i = 1;
    if (path.n <= 1)
        return 0;
    while (i <= path.n) {
        size_t j = i;
        while (j < path.n && path.p[j] != '/')
            j++;
        if (j == path.n && j == i)
            break;   /* trailing slash */
        if (n == HTTP_API_SEGMENTS_MAX)
            return -1;
        seg[n++] = kslice_make(path.p + i, j - i);
        i = j + 1;
    }
    return (int)n;
}

static int
http_api_is(kslice s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

void
http_api_handle(http_api *a, const http_request *req, http_api_reply *out)
{
    http_api_reply_init(a, out, ROUTE_OTHER);
    a->ncols = 0;
    a->nrows = 0;
    buf_reset(&a->arena);
    buf_reserve(&a->arena, 2 * req->target.n + 64);
    kslice seg[HTTP_API_SEGMENTS_MAX];
    int n = http_api_split(req->path, seg);
    if (n < 0) {
        http_api_fail(a, out, 404, "no_route", "no such resource (too many path segments)");
        return;
    }
    if (!http_api_is(req->method, "GET") && !http_api_is(req->method, "HEAD")) {
        out->allow = "GET, HEAD";
        http_api_fail(a, out, 405, "method", "method %.*s not allowed (the API is read-only)",
                      (int)(req->method.n > 32 ? 32 : req->method.n),
                      (const char *)req->method.p);
        return;
    }
    if (n == 0) {
        out->route = ROUTE_TABLES;
        http_api_tables(a, out);
        return;
    }
    if (n == 1 || (n == 2 && http_api_is(seg[0], "version") && http_api_is(seg[1], "cluster"))) {
        if (http_api_is(seg[0], "version")) {
            out->route = ROUTE_VERSION;
            http_api_version(a);
        } else if (http_api_is(seg[0], "metrics")) {
            out->route = ROUTE_METRICS;
            http_api_metrics(a, out);
        } else if (http_api_is(seg[0], "healthz")) {
            out->route = ROUTE_HEALTHZ;
            http_api_healthz(a, out);
        } else if (http_api_is(seg[0], "status")) {
            out->route = ROUTE_STATUS;
            out->content_type = "text/html; charset=utf-8";
            status_page_render(a->env, a->reader, &a->body);
        } else {
            http_api_fail(a, out, 404, "no_route",
                          "no such resource; tables are read at /TABLE/ROW, /TABLE/*, "
                          "/TABLE/schema");
        }
        return;
    }
    kslice tname;
    if (http_api_decode(a, seg[0], 0, &tname) != 0) {
        http_api_fail(a, out, 400, "bad_request", "table name: bad %%-escape");
        return;
    }
    views_entry *e = views_reader_find(a->reader, (const char *)tname.p, tname.n);
    if (e == NULL) {
        int shown = tname.n > 200 ? 200 : (int)tname.n;
        http_api_fail(a, out, 404, "no_table", "table %.*s: not found", shown,
                      (const char *)tname.p);
        return;
    }
    out->has_version = 1;
    out->version = views_entry_version(e);
    kslice s1 = seg[1];
    if (n == 2 && http_api_is(s1, "schema")) {
        out->route = ROUTE_SCHEMA;
        http_api_schema(a, e);
    } else if (n == 2 && http_api_is(s1, "regions")) {
        out->route = ROUTE_REGIONS;
        http_api_regions(a, e);
    } else if (n == 2 && http_api_is(s1, "multiget")) {
        out->route = ROUTE_MULTIGET;
        http_api_multiget(a, req, e, out);
    } else if (n == 2 && http_api_is(s1, "count")) {
        out->route = ROUTE_COUNT;
        http_api_count(a, req, e, out);
    } else if (n == 2 && s1.n > 0 && s1.p[s1.n - 1] == '*') {
        out->route = ROUTE_SCAN;
        http_api_scan(a, req, e, kslice_make(s1.p, s1.n - 1), out);
    } else if (n <= 4) {
        out->route = ROUTE_ROW;
        http_api_row(a, req, e, seg, (size_t)n, out);
    } else {
        http_api_fail(a, out, 404, "no_route", "no such resource (too many path segments)");
    }
}
