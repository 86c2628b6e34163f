/* server.h -- kiln-server's network side: N worker threads, each running its
 * own event loop (ev.h) over its own connections, serving HTTP/1.1 with
 * keep-alive and pipelining (http.h, http_api.h) and, optionally, the Redis
 * protocol (resp.h, resp_api.h) on a second address. Worker 0 also accepts
 * on the (one per address) listening sockets and deals the connections out
 * round-robin to the active workers: a worker the load does not need parks,
 * handing its connections to the others, and comes back when they are busy
 * and a core is free for it (balance.h). A background thread (views.h) swaps in
 * new table versions.
 *
 * Per connection: a read buffer that grows up to max_request_bytes, an
 * output buffer that collects the responses of every request found in one
 * read (pipelining) and goes out in one send(2); reading pauses while more
 * than SERVER_OUT_HIGH bytes wait to be sent. Limits: request size, header
 * count, connections (over the limit: one error reply, then close), idle
 * timeout (408 for a half-received request). Errors close the connection
 * only after the error reply was sent and the client's leftover bytes were
 * drained (a lingering close), so the client sees the reply.
 *
 * The server opens the data directory's speed layer (speed.h): it takes
 * the write-ahead log at start (a second writer gets KILN_BUSY) and REST
 * and Redis writes go to it; a read-only server replays the log without
 * taking it and refuses writes.
 *
 * server_shutdown (safe to call from a signal-watching thread) stops
 * accepting, lets in-flight requests finish and close their connections,
 * and makes server_wait return once every connection is gone or the drain
 * timeout passed.
 */
#ifndef KILN_SERVER_H
#define KILN_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "serving/views.h"
#include "storage/base/status.h"

#define SERVER_LISTEN_DEFAULT "127.0.0.1:8080"
#define SERVER_MAX_CONNS_DEFAULT 10000
#define SERVER_MAX_REQUEST_DEFAULT (64 * 1024)
#define SERVER_IDLE_TIMEOUT_MS_DEFAULT 60000
#define SERVER_REQUEST_TIMEOUT_MS_DEFAULT 10000
#define SERVER_MAX_CONNS_PER_CLIENT_DEFAULT 1024
#define SERVER_MAX_REPLY_BYTES_DEFAULT (64u << 20)
#define SERVER_DRAIN_TIMEOUT_MS_DEFAULT 10000
#define SERVER_CACHE_MB_DEFAULT 1024
#define SERVER_OUT_HIGH (4u << 20)
#define SERVER_MAX_WORKERS 128
#define SERVER_BUSY_POLL_US_DEFAULT 200
#define SERVER_POLL_BUSY_PM 500   /* a worker polls while busy over half a tick */
/* ... or over a quarter of it while most of the tick's waits for events, at
 * least this many, were within the poll's span */
#define SERVER_POLL_MIN_WAITS 50
#define SERVER_PARK_BELOW_DEFAULT 60
#define SERVER_UNPARK_ABOVE_DEFAULT 85

typedef struct server_config {
    const char *data_dir;
    const char *listen;               /* HTTP address */
    const char *resp_listen;          /* Redis-protocol address, or NULL */
    int threads;                      /* workers; 0 = one per CPU */
    long busy_poll_us;                /* a busy worker's poll before sleeping (0: none;
                                         ev.h) */
    int park_below_pct;               /* park a worker when the others would stay below
                                         this % busy (0: never park) */
    int unpark_above_pct;             /* bring one back above this % busy on average */
    int unpark_spare_pm;              /* ... when this much of a core is idle (balance.h) */
    size_t cache_bytes;               /* block cache + row cache */
    size_t row_cache_bytes;           /* the row cache's part; SIZE_MAX = a quarter */
    int max_conns;
    size_t max_request_bytes;
    int max_headers;
    int idle_timeout_ms;
    int request_timeout_ms;           /* a request must arrive whole within this */
    int max_conns_per_client;         /* per client IP address */
    size_t max_reply_bytes;           /* one answer of several rows at most */
    int request_deadline_ms;          /* a scan's time on a worker at most */
    int drain_timeout_ms;
    uint64_t page_rows;               /* rows per scan page */
    size_t page_bytes;
    size_t scan_max_bytes;            /* an unpaged /TABLE/STAR answer at most (0: default) */
    size_t scanners_max;              /* open REST scanners at most (0: default) */
    long scanner_idle_ms;             /* an unused scanner closes after it (0: default) */
    long poll_ms;                     /* CURRENT checks */
    long warm_ms;                     /* warm-up budget of a swap */
    long prefetch_ms;                 /* block prefetch budget of a swap (0: none) */
    const char *const *resp_columns;  /* "[TABLE=]FAMILY:QUALIFIER" */
    size_t resp_column_count;
    int read_only;                    /* no speed layer: every write is refused */
    size_t memstore_flush_bytes;      /* the speed layer's flush size (0: its default) */
} server_config;

void server_config_init(server_config *c);

typedef struct server server;

/* Open the views, bind the listeners and start the workers. KILN_INVALID for
 * a bad setting or address, KILN_IO for a bind failure (naming the address). */
kiln_status server_start(const server_config *c, server **out, kiln_err *err);
/* Ports actually bound (useful with port 0). -1 if not listening. */
int server_http_port(const server *s);
int server_resp_port(const server *s);
views *server_views(server *s);

/* Begin a graceful shutdown. Async-signal-safe. */
void server_shutdown(server *s);
/* Wait until the workers have drained and stopped. */
void server_wait(server *s);
/* Free everything. REQUIRES: server_wait returned. s may be NULL. */
void server_free(server *s);

#endif
