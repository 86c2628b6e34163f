/* http_api.h -- the HTTP routes of kiln-server, shaped like the HBase REST
 * gateway (DESIGN.md section 4). The server parses a request (http.h) and
 * hands it here; the handler answers from the worker's view snapshot and
 * fills a reply (status, content type, body and a few headers) that the
 * server frames and sends.
 *
 *   GET /                                   tables           {"table":[{"name":..}]}
 *   GET /version[/cluster]                  server version
 *   GET /metrics | /healthz | /status       Prometheus text, health, HTML page
 *   GET /TABLE/schema                       families and settings
 *   GET /TABLE/regions                      regions, files, bytes
 *   GET /TABLE/ROW[/COLUMNS[/TS[,TS2]]]     one row; ?v=N, ?starttime=&endtime=
 *   GET /TABLE/multiget?row=R1&row=R2...    several rows (?column=, ?v=)
 *   GET /TABLE/STAR?startrow=&endrow=&prefix=&limit=&reversed=&column=
 *                                           a scan (STAR: the segment "*")
 *   GET /TABLE/PREFIXSTAR                   a scan of the rows starting with PREFIX
 *   GET /TABLE/count?startrow=&endrow=&prefix=&column=   rows counted, paged
 *
 * Path segments are percent-decoded after the path is split on '/', and
 * column lists after splitting on ',' and the first ':', so reserved bytes
 * inside keys are written %2F, %2C, %3A. The route words (schema, regions,
 * multiget, count, and the trailing '*') are matched before decoding: the row "schema" is
 * /TABLE/%73chema. Every table response carries X-Kiln-Version, the version
 * it was read from. Errors are one line of JSON:
 *   {"status":404,"code":"no_row","message":"..."}
 *
 * Thread-safety: an http_api belongs to one worker thread; the env is
 * shared and read-only.
 */
#ifndef KILN_HTTP_API_H
#define KILN_HTTP_API_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "serving/http.h"
#include "serving/metrics.h"
#include "serving/views.h"
#include "storage/buf.h"

#define HTTP_API_PAGE_ROWS_DEFAULT 10000
#define HTTP_API_PAGE_BYTES_DEFAULT ((size_t)4 << 20)
#define HTTP_API_COUNT_ROWS_DEFAULT 200000
#define HTTP_API_COUNT_MS 25
#define HTTP_API_MULTIGET_MAX 1000
#define HTTP_API_COLUMNS_MAX 64

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
    atomic_int draining;          /* /healthz answers 503 once set */
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
    kbuf *body;                   /* the api's buffer, valid until the next call */
} http_api_reply;

typedef struct http_api http_api;

http_api *http_api_new(const http_api_env *env, views_reader *reader, views_ctx *ctx);
void http_api_free(http_api *a);   /* a may be NULL */

/* Answer one parsed request. */
void http_api_handle(http_api *a, const http_request *req, http_api_reply *out);
/* An error reply (JSON body) for a request that could not be parsed. */
void http_api_error(http_api *a, int status, const char *code, const char *message,
                    http_api_reply *out);

#endif
