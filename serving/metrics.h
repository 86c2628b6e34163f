/* metrics.h -- request counters and latency histograms per route, for
 * /metrics (Prometheus text format) and the status page's request rates.
 *
 * Each worker thread records into its own metrics_local (single writer, no
 * read-modify-write atomics on the hot path); readers sum over all locals.
 * metrics_tick, called about once a second by one thread, keeps a minute of
 * per-second totals so that rates can be shown without scraping twice.
 *
 * Thread-safety: metrics_observe and metrics_conn on a local belong to its
 * thread; every other function is thread-safe.
 */
#ifndef KILN_METRICS_H
#define KILN_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"

typedef enum metrics_route {
    ROUTE_TABLES = 0,     /* GET / */
    ROUTE_VERSION,
    ROUTE_SCHEMA,
    ROUTE_REGIONS,
    ROUTE_ROW,
    ROUTE_MULTIGET,
    ROUTE_SCAN,
    ROUTE_COUNT,
    ROUTE_METRICS,
    ROUTE_HEALTHZ,
    ROUTE_STATUS,
    ROUTE_SCANNER,        /* the stateful scanner protocol */
    ROUTE_WRITE,          /* PUT, POST, DELETE of cells */
    ROUTE_OTHER,          /* unknown paths and unparsable requests */
    ROUTE_RESP_GET,
    ROUTE_RESP_MGET,
    ROUTE_RESP_EXISTS,
    ROUTE_RESP_PING,
    ROUTE_RESP_INFO,
    ROUTE_RESP_WRITE,     /* SET, DEL, INCR..., HSET, HDEL */
    ROUTE_RESP_OTHER,
    ROUTE_COUNT_ALL
} metrics_route;

#define METRICS_FIRST_RESP ROUTE_RESP_GET
#define METRICS_BUCKETS 17   /* 16 bounds and +Inf */

typedef struct metrics metrics;
typedef struct metrics_local metrics_local;

metrics *metrics_new(void);
/* REQUIRES: no local in use any more. m may be NULL. */
void metrics_free(metrics *m);
/* A new per-thread recorder, owned by m. */
metrics_local *metrics_local_new(metrics *m);

/* Record one request of route answered with status (HTTP code; for RESP 200,
 * 400 for an error reply about the command, 500 for a server-side error --
 * corruption, I/O) that took ns nanoseconds. */
void metrics_observe(metrics_local *l, metrics_route route, int status, uint64_t ns);
/* Connections opened (+1) and closed (-1), and bytes moved. */
void metrics_conn(metrics_local *l, int delta);
void metrics_bytes(metrics_local *l, uint64_t in, uint64_t out);

/* One request (over the Redis protocol when resp, else HTTP) that met a
 * corrupt block or file of table (its canonical name; NULL or "" when not
 * known). Rare: it takes the lock, from any thread. The first
 * METRICS_CORRUPTION_SERIES (protocol, table) pairs are counted apart,
 * later tables under table "other". */
#define METRICS_CORRUPTION_SERIES 64
void metrics_corruption(metrics *m, int resp, const char *table);
/* Corruption met, summed over protocols and tables. */
uint64_t metrics_corruptions(metrics *m);

/* Name of a route as used in labels ("row", "resp_get"...). */
const char *metrics_route_name(metrics_route r);

/* Requests of a route summed over every thread. */
uint64_t metrics_requests(metrics *m, metrics_route r);
int64_t metrics_connections(metrics *m);
/* Requests per second of route over the last `secs` seconds (<= 60) of ticks. */
double metrics_rate(metrics *m, metrics_route r, int secs);
/* Save the per-second totals (call about once a second). */
void metrics_tick(metrics *m);

/* Append the request metrics in Prometheus text format: requests by route
 * and code, latency histograms by route, connections, bytes, corruption
 * met (kiln_read_corruption_total by proto and table). */
void metrics_render(metrics *m, kbuf *out);

#endif
