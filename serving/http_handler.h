/* http_handler.h -- what every route handler of the HTTP API shares
 * (serving/ only): the per-worker context (struct http_api), the env every
 * worker shares, the reply a handler fills, the request parsed once
 * (http_req, with its route and method), the continuation of a sliced scan,
 * and the helpers that build replies and errors. It includes nothing of the
 * router (http_api.h) or of the handlers, so the files point one way:
 *
 *   http_api.c (router) -> http_req.c, http_rows.c, http_admin.c,
 *                          http_metrics.c, http_scanner.c -> http_handler.c
 *
 * The types keep their http_api_ names: they are the API's vocabulary, and
 * http_api.h hands them on to the server.
 *
 * Thread-safety: an http_api and its http_req belong to one worker; the env
 * is shared (its scanner registry is thread-safe).
 */
#ifndef KILN_HTTP_HANDLER_H
#define KILN_HTTP_HANDLER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "serving/http.h"
#include "serving/http_rep.h"
#include "serving/metrics.h"
#include "serving/views.h"
#include "storage/base/buf.h"
#include "storage/query/filter.h"
#include "storage/store/schema.h"
#include "storage/store/speed.h"

/* ------------------------------------------------------------------ env and reply */
#define HTTP_API_PAGE_ROWS_DEFAULT 10000
#define HTTP_API_PAGE_BYTES_DEFAULT ((size_t)4 << 20)
#define HTTP_API_COUNT_ROWS_DEFAULT 200000
#define HTTP_API_COUNT_MS 25
#define HTTP_API_MULTIGET_MAX 1000
#define HTTP_API_COLUMNS_MAX 64
#define HTTP_API_SCAN_MAX_BYTES_DEFAULT ((size_t)64 << 20)
#define HTTP_API_DEADLINE_MS_DEFAULT 10   /* a time slice: see abuse_test.sh */
#define HTTP_API_SKIP_BATCH 1024        /* rows without cells passed over between clock checks */

typedef struct http_scanners http_scanners;
struct ev_poll_stats;

typedef struct http_worker_stats {
    int active;                   /* workers taking connections; the others park */
    double busy;                  /* the active workers' busy part of the last tick, summed */
    uint64_t moved;               /* connections handed from one worker to another */
    int away;                     /* connections not on their clients' CPU's worker */
} http_worker_stats;

/* What every worker shares. */
typedef struct http_api_env {
    views *views;
    metrics *metrics;
    char listen[64];              /* bound HTTP address, for regions' location */
    char resp_listen[64];         /* "" if none */
    int threads;
    size_t block_cache_bytes, row_cache_bytes;
    int64_t started_ms;           /* wall clock */
    uint64_t page_rows;           /* rows per scan page at most */
    size_t page_bytes;            /* body bytes per scan page, roughly */
    uint64_t count_rows;          /* rows per count page at most */
    size_t scan_max_bytes;        /* an unpaged scan's body at most */
    int64_t deadline_ms;          /* a scan's time on a worker at a time (a slice) */
    size_t max_reply_bytes;       /* a row or multiget answer at most */
    http_scanners *scanners;      /* open scanners (http_scanner.h) */
    kiln_speed *speed;            /* the speed layer: reads merge it, writes go to it */
    int read_only;                /* --read-only: writes are refused (403) */
    atomic_int draining;          /* /healthz answers 503 once set */
    /* The workers' busy polling, summed (ev.h); NULL: none to report. */
    void (*poll_stats)(void *arg, struct ev_poll_stats *out);
    void *poll_stats_arg;
    /* How the workers share the load (server.c); NULL: not reported. */
    void (*worker_stats)(void *arg, struct http_worker_stats *out);
    void *worker_stats_arg;
} http_api_env;

typedef struct http_api_reply {
    int status;
    metrics_route route;
    const char *content_type;
    int has_version;
    uint64_t version;             /* X-Kiln-Version */
    int has_timestamp;
    int64_t timestamp;            /* X-Timestamp (raw cell values) */
    const char *allow;            /* Allow header (405) */
    const char *location;         /* Location header (201), the api's; NULL if none */
    kbuf *body;                   /* the api's buffer, valid until the next call */
    /* Not answered yet (a scanner GET that found nothing within the
     * deadline, an unpaged scan still going at its end): nothing is to be
     * sent; call http_api_handle again with the same request (and the same
     * continuation) on a later turn and it goes on where it stopped. */
    int yield;
} http_api_reply;

/* One worker's context (made by http_api_new, http_api.h). */
typedef struct http_api http_api;
/* What a yielded stateless scan keeps between its slices: its store scan
 * (holding the version read), filter, the answer so far, and the request
 * it belongs to. One per connection. */
typedef struct http_api_cont http_api_cont;

/* ------------------------------------------------------------------ the request */
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
    HR_SCANNER,       /* /TABLE/scanner/ID */
    HR_SPEED_ADMIN    /* /TABLE/_admin/{flush,compact,split} (http_speed.h) */
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

/* ------------------------------------------------------------------ the context */
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

/* ------------------------------------------------------------------ replies */
/* A fresh 200 reply for route: JSON, the api's body emptied. */
void http_handler_reply_init(http_api *a, http_api_reply *out, metrics_route route);
/* Turn out into an error reply (status, code and message; the form follows
 * the request's representation, as http_handler.c describes). */
void http_handler_fail(http_api *a, http_api_reply *out, int status, const char *code,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The error reply for a status: 400, 404 or 500 by its code. */
void http_handler_fail_status(http_api *a, http_api_reply *out, const kiln_err *err);
/* room for n filtered cells in a->fcells */
kiln_cell *http_handler_fcells(http_api *a, size_t n);
void http_handler_cont_free(http_api_cont *k);   /* k may be NULL */

#endif
