/* http_api_int.h -- what the files of the HTTP API share (serving/ only).
 *
 *   http_api.c       the route table, dispatch, errors
 *   http_req.c       a request parsed once into an http_req
 *   http_rep.c       representations: JSON, XML, protobuf, raw (http_rep.h)
 *   http_rows.c      rows, globs, ranges, multiget, stateless scans, count
 *   http_admin.c     tables, version, cluster, namespaces, schema, regions
 *   http_metrics.c   the Prometheus text of /metrics
 *   http_scanner.c   stateful scanners (http_scanner.h)
 *
 * Thread-safety: an http_api and its http_req belong to one worker.
 */
#ifndef KILN_HTTP_API_INT_H
#define KILN_HTTP_API_INT_H

#include "serving/filter.h"
#include "serving/http_api.h"
#include "serving/http_rep.h"
#include "storage/store/schema.h"

typedef enum http_route {
    HR_TABLES,
    HR_VERSION,
    HR_VERSION_CLUSTER,
    HR_STATUS_CLUSTER,
    HR_NAMESPACES,
    HR_NAMESPACE,
    HR_NAMESPACE_TABLES,
    HR_METRICS,
    HR_HEALTHZ,
    HR_STATUS_PAGE,
    HR_SCHEMA,
    HR_REGIONS,
    HR_EXISTS,
    HR_MULTIGET,
    HR_SCAN,          /* /TABLE/STAR with query parameters */
    HR_ROW,           /* /TABLE/ROWSPEC[/COLUMNS[/TIMES]] */
    HR_SCANNER_NEW,   /* /TABLE/scanner */
    HR_SCANNER        /* /TABLE/scanner/ID */
} http_route;

typedef enum http_method {
    HM_GET,           /* and HEAD */
    HM_PUT,
    HM_POST,
    HM_DELETE,
    HM_OTHER
} http_method;

#define HTTP_API_SEGMENTS_MAX 8

/* One request, parsed once: every byte string is decoded into the api's
 * arena and valid until the next request. */
typedef struct http_req {
    const http_request *http;
    http_route route;
    http_method method;
    http_rep rep;
    kslice seg[HTTP_API_SEGMENTS_MAX];   /* raw path segments */
    int nseg;
    kslice table;                        /* decoded; "" for non-table routes */
    kslice name;                         /* namespace or scanner id */
    /* HR_ROW: one row, a prefix glob (row_glob) or a range [row, end_row) */
    kslice row, end_row;
    int row_glob, row_range;
    int has_times;                       /* a TIMESTAMP segment was given */
    store_scan_opts so;                  /* columns, versions, times, bounds, limit */
    int has_limit;
    int paged;                           /* Kiln: paged=true */
    int count;                           /* Kiln: count=true */
    int has_index;                       /* Kiln: index= */
    kslice filter;                       /* filter= text; p == NULL if absent */
    uint64_t n;                          /* scanner GET: ?n= rows at most (0: none) */
    store_column cols[HTTP_API_COLUMNS_MAX];
    size_t ncols;
    kslice rows[HTTP_API_MULTIGET_MAX];
    size_t nrows;
} http_req;

struct http_api_cont {
    kbuf id;                    /* method, target and Accept of its request */
    char table[SCHEMA_NAME_MAX + 1];
    uint64_t version;           /* X-Kiln-Version */
    store_scan *scan;           /* open, at the place to go on from */
    filter *filter;
    kbuf body;                  /* the answer so far */
    size_t cs_rows;             /* rows in it */
    uint64_t rows, seen;        /* rows answered, rows passed */
};

struct http_api {
    const http_api_env *env;
    views_reader *reader;
    views_ctx *ctx;
    kbuf body;
    kbuf arena;                 /* decoded pieces of the current request */
    kbuf tmp, tmp2;
    char location[320];
    kiln_cell *fcells;          /* a row's cells after a filter */
    size_t fcap;
    http_req rq;
    kbuf req_id;                /* the current request's identity (http_api_cont.id) */
    http_api_cont **cont;       /* the connection's continuation, during a call */
    http_api_cont *resume;      /* taken from it: the request's earlier slices */
    http_api_cont *own;         /* http_api_handle's */
};

/* ------------------------------------------------------------------ http_api.c */
void http_api_fail(http_api *a, http_api_reply *out, int status, const char *code,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void http_api_fail_status(http_api *a, http_api_reply *out, const kiln_err *err);
/* room for n filtered cells in a->fcells */
kiln_cell *http_api_fcells(http_api *a, size_t n);

/* ------------------------------------------------------------------ http_req.c */
/* Parse the request's route, path and query into a->rq. 0, or -1 with the
 * reply filled (400 / 404). Table routes still need their table looked up. */
int http_req_parse(http_api *a, const http_request *req, http_api_reply *out);
/* Decode helpers shared with the scanner body parser. */
int http_req_columns(http_api *a, kslice raw, int decode_first, http_api_reply *out);
int http_req_u64(kslice s, uint64_t *out);

/* ------------------------------------------------------------------ handlers */
void http_rows_row(http_api *a, views_entry *e, http_api_reply *out);
void http_rows_multiget(http_api *a, views_entry *e, http_api_reply *out);
void http_rows_scan(http_api *a, views_entry *e, http_api_reply *out);
void http_rows_exists(http_api *a, views_entry *e, http_api_reply *out);

void http_admin_tables(http_api *a, http_api_reply *out);
void http_admin_version(http_api *a, http_api_reply *out);
void http_admin_version_cluster(http_api *a, http_api_reply *out);
void http_admin_status_cluster(http_api *a, http_api_reply *out);
void http_admin_namespaces(http_api *a, http_api_reply *out);
void http_admin_healthz(http_api *a, http_api_reply *out);
void http_admin_schema(http_api *a, views_entry *e, http_api_reply *out);
void http_admin_regions(http_api *a, views_entry *e, http_api_reply *out);

void http_metrics_render(http_api *a, http_api_reply *out);

void http_scanner_create(http_api *a, views_entry *e, http_api_reply *out);
void http_scanner_next(http_api *a, http_api_reply *out);
void http_scanner_delete(http_api *a, http_api_reply *out);

#endif
