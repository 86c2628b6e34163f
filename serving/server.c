/* server.c -- workers, connections and framing of server.h.
 *
 * A connection moves through: reading (requests parsed as they complete
 * and answered into the output buffer), writing (output sent after each
 * batch; EV_WRITABLE only while the socket is full), closing (no more
 * requests are read; the output is sent), lingering (our side shut down,
 * the client's leftover bytes read and dropped until it closes or the
 * linger time passes), closed. Every request's latency is measured from
 * having its bytes complete to its response being queued.
 *
 * A request the API could not finish within the request deadline, a
 * time slice (a scanner GET that found nothing yet, an unpaged scan still
 * going: http_api_reply.yield, its state kept in the connection's
 * http_api_cont), suspends its connection: the request stays at the front of the read buffer, reading
 * stops, and a zero-delay timer hands the worker's suspended connections
 * one more turn each per loop turn, between the other connections' events,
 * until the request is answered (or its client goes away).
 */
#include "serving/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "serving/balance.h"
#include "serving/clients.h"
#include "serving/ev.h"
#include "serving/http.h"
#include "serving/http_api.h"
#include "serving/http_scanner.h"
#include "serving/metrics.h"
#include "serving/net.h"
#include "serving/resp.h"
#include "serving/resp_api.h"
#include "serving/slog.h"

#define SERVER_RBUF_INITIAL 4096
#define SERVER_OUT_KEEP (1u << 20)      /* output capacity kept after a flush */
#define SERVER_TICK_MS 100
#define SERVER_LINGER_MS 2000
#define SERVER_ACCEPT_BATCH 64
#define SERVER_BACKLOG 1024
#define SERVER_ALIGN_SCAN 256      /* connections a tick looks at for their home */

enum { CONN_HTTP = 0, CONN_RESP = 1 };

typedef struct worker worker;

typedef struct conn {
    worker *w;
    int fd;
    int proto;
    uint8_t *rbuf;
    size_t rlen, rcap;
    size_t scan;                 /* bytes searched for a request's end already */
    int resp_wait;               /* RESP: the first command is incomplete */
    kbuf out;
    size_t out_pos;
    int64_t last_ms;
    int closing;                 /* send what is queued, then close */
    int lingering;
    int64_t linger_until;
    int paused;                  /* reading stopped while output drains */
    int64_t req_start_ms;        /* when the buffered, unfinished request began */
    int suspended;               /* the first buffered request yielded; resumed by a timer */
    uint64_t held_ns;            /* when the suspended request was first handled */
    http_api_cont *cont;         /* a yielded scan's state (http_api.h); NULL if none */
    int counted;                 /* counted in s->clients under peer */
    uint8_t peer[CLIENTS_KEY_LEN];
    int db;                      /* RESP database */
    struct conn *prev, *next;
    struct conn *pend_prev, *pend_next;  /* answered, not yet sent (NULL if not) */
    size_t pend_before;          /* rlen before the answering pass */
    int unanswered;              /* RESP: pending, its read not yet answered */
    size_t ahead;                /* RESP: the commands looked ahead at end here in rbuf */
    int moved_mask;              /* its events, while handed to another worker */
} conn;

struct worker {
    server *s;
    int id;
    pthread_t thread;
    int started;
    ev_loop *loop;
    int http_fd, resp_fd;        /* the listeners (worker 0 only; -1 elsewhere) */
    pthread_mutex_t inbox_mu;    /* guards the inbox, moved and inbox_closed */
    int *inbox;                  /* accepted by worker 0 for this one: fd << 1 | proto */
    size_t inbox_len, inbox_cap;
    conn *moved;                 /* handed over by other workers (linked by next) */
    int inbox_closed;            /* the worker has stopped: nothing more is handed to it */
    _Atomic int parked;          /* hands its connections over, takes no new ones */
    _Atomic int give_to;         /* the worker to hand a share of them to, or -1 */
    uint64_t idle_ns, busy_at_ns;   /* ev_idle_ns and the clock at the last tick */
    uint64_t waits, caught;      /* ev_waits at the last tick */
    _Atomic int busy_pm;         /* thousandths of the last tick spent working */
    _Atomic int nconns_seen;     /* nconns at the last tick or hand-off */
    int align_due;               /* the tick asks for connections to go home */
    _Atomic int away;            /* connections left away from home at the last look */
    views_reader *reader;
    views_ctx *ctx;
    http_api *api;
    resp_api *rapi;
    metrics_local *m;
    http_header *headers;
    kslice *argv;
    conn head;                   /* sentinel of the connection list */
    conn pending;                /* sentinel of the answered, not yet sent */
    size_t nconns;
    size_t nsuspended;           /* connections with suspended requests */
    long long resume_timer;      /* the timer resuming them; 0 if none */
    char date[64];               /* "Date: ...\r\n" */
    size_t date_len;
    int64_t last_sweep_ms;
    int draining;
    int64_t drain_until;
};

struct server {
    server_config cfg;
    views *views;
    kiln_speed *speed;           /* the views' (read_only: replayed, the log not taken) */
    metrics *metrics;
    http_api_env env;
    resp_api_env renv;
    worker *workers;
    int nworkers;
    int http_port, resp_port;
    unsigned next_worker;        /* round-robin (worker 0's thread only) */
    uint64_t accepted;           /* connections accepted (worker 0's) */
    _Atomic int nactive;         /* workers 0..nactive-1 take connections; the rest park */
    balance balance;             /* how many workers the load needs (worker 0's) */
    _Atomic uint64_t moved;      /* connections handed from one worker to another */
    _Atomic int conns;
    _Atomic int shutdown;
    clients *clients;            /* open connections per client address */
    int spare_fd;                /* given up to accept (and refuse) when out of fds */
    int64_t fd_warn_ms;          /* last "out of descriptors" warning */
};

void
server_config_init(server_config *c)
{
    memset(c, 0, sizeof *c);
    c->data_dir = "./kiln-data";
    c->listen = SERVER_LISTEN_DEFAULT;
    c->cache_bytes = (size_t)SERVER_CACHE_MB_DEFAULT << 20;
    c->row_cache_bytes = SIZE_MAX;
    c->max_conns = SERVER_MAX_CONNS_DEFAULT;
    c->max_request_bytes = SERVER_MAX_REQUEST_DEFAULT;
    c->max_headers = HTTP_HEADERS_MAX_DEFAULT;
    c->idle_timeout_ms = SERVER_IDLE_TIMEOUT_MS_DEFAULT;
    c->request_timeout_ms = SERVER_REQUEST_TIMEOUT_MS_DEFAULT;
    c->max_conns_per_client = SERVER_MAX_CONNS_PER_CLIENT_DEFAULT;
    c->max_reply_bytes = SERVER_MAX_REPLY_BYTES_DEFAULT;
    c->request_deadline_ms = HTTP_API_DEADLINE_MS_DEFAULT;
    c->drain_timeout_ms = SERVER_DRAIN_TIMEOUT_MS_DEFAULT;
    c->page_rows = HTTP_API_PAGE_ROWS_DEFAULT;
    c->page_bytes = HTTP_API_PAGE_BYTES_DEFAULT;
    c->poll_ms = VIEWS_POLL_MS_DEFAULT;
    c->warm_ms = VIEWS_WARM_MS_DEFAULT;
    c->prefetch_ms = VIEWS_PREFETCH_MS_DEFAULT;
    c->busy_poll_us = SERVER_BUSY_POLL_US_DEFAULT;
    c->park_below_pct = SERVER_PARK_BELOW_DEFAULT;
    c->unpark_above_pct = SERVER_UNPARK_ABOVE_DEFAULT;
    c->unpark_spare_pm = BALANCE_SPARE_PM_DEFAULT;
}

static uint64_t
server_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int64_t
server_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
server_update_date(worker *w)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    w->date_len = strftime(w->date, sizeof w->date, "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm);
}

/* ------------------------------------------------------------------ connections */

static void conn_on_event(ev_loop *l, int fd, void *data, int mask);

static void
conn_unpend(conn *c)
{
    if (c->pend_next == NULL)
        return;
    c->pend_prev->pend_next = c->pend_next;
    c->pend_next->pend_prev = c->pend_prev;
    c->pend_next = c->pend_prev = NULL;
}

static void
conn_close(conn *c)
{
    worker *w = c->w;
    ev_del(w->loop, c->fd, EV_READABLE | EV_WRITABLE);
    close(c->fd);
    if (c->counted)
        clients_leave(w->s->clients, c->peer);
    if (c->suspended)
        w->nsuspended--;
    conn_unpend(c);
    c->prev->next = c->next;
    c->next->prev = c->prev;
    w->nconns--;
    atomic_fetch_sub_explicit(&w->s->conns, 1, memory_order_relaxed);
    metrics_conn(w->m, -1);
    http_api_cont_free(c->cont);
    free(c->rbuf);
    buf_free(&c->out);
    free(c);
}

/* Our side is done: shut down writes and drop what the client still sends. */
static void
conn_linger(conn *c)
{
    shutdown(c->fd, SHUT_WR);
    c->lingering = 1;
    c->linger_until = ev_now_ms(c->w->loop) + SERVER_LINGER_MS;
    c->rlen = 0;
    if (!(ev_mask(c->w->loop, c->fd) & EV_READABLE))
        ev_add(c->w->loop, c->fd, EV_READABLE, conn_on_event, c, NULL);
    ev_del(c->w->loop, c->fd, EV_WRITABLE);
}

/* Send queued output. Returns -1 if the connection was closed. */
static int
conn_flush(conn *c)
{
    worker *w = c->w;
    while (c->out_pos < c->out.len) {
        ssize_t n = send(c->fd, c->out.data + c->out_pos, c->out.len - c->out_pos, MSG_NOSIGNAL);
        if (n > 0) {
            c->out_pos += (size_t)n;
            metrics_bytes(w->m, 0, (uint64_t)n);
            c->last_ms = ev_now_ms(w->loop);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            ev_add(w->loop, c->fd, EV_WRITABLE, conn_on_event, c, NULL);
            if (c->out.len - c->out_pos > SERVER_OUT_HIGH && !c->paused) {
                c->paused = 1;
                ev_del(w->loop, c->fd, EV_READABLE);
            }
            return 0;
        }
        conn_close(c);
        return -1;
    }
    c->out.len = c->out_pos = 0;
    if (c->out.cap > SERVER_OUT_KEEP) {
        buf_free(&c->out);
        buf_init(&c->out);
    }
    if (ev_mask(w->loop, c->fd) & EV_WRITABLE)
        ev_del(w->loop, c->fd, EV_WRITABLE);
    if (c->closing) {
        conn_linger(c);
        return 0;
    }
    return 0;
}

static void
server_append_u64(kbuf *b, uint64_t v)
{
    char tmp[24];
    size_t k = sizeof tmp;
    do {
        tmp[--k] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    buf_append(b, tmp + k, sizeof tmp - k);
}

static void
server_append_str(kbuf *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

/* Frame a reply: status line, headers, body (not for HEAD). */
static void
conn_http_reply(conn *c, const http_api_reply *r, int keep_alive, int head_only, int minor)
{
    kbuf *o = &c->out;
    buf_reserve(o, 256 + r->body->len);
    server_append_str(o, "HTTP/1.1 ");
    server_append_u64(o, (uint64_t)r->status);
    buf_append_u8(o, ' ');
    server_append_str(o, http_status_text(r->status));
    server_append_str(o, "\r\nServer: kiln-server/" KILN_VERSION "\r\n");
    buf_append(o, c->w->date, c->w->date_len);
    if (r->status != 204) {   /* RFC 9110: a 204 carries neither */
        server_append_str(o, "Content-Type: ");
        server_append_str(o, r->content_type);
        server_append_str(o, "\r\nContent-Length: ");
        server_append_u64(o, r->body->len);
        server_append_str(o, "\r\n");
    }
    if (r->location != NULL) {
        server_append_str(o, "Location: ");
        server_append_str(o, r->location);
        server_append_str(o, "\r\n");
    }
    if (r->has_version) {
        server_append_str(o, "X-Kiln-Version: ");
        server_append_u64(o, r->version);
        server_append_str(o, "\r\n");
    }
    if (r->has_timestamp) {
        char ts[32];
        int n = snprintf(ts, sizeof ts, "%lld", (long long)r->timestamp);
        server_append_str(o, "X-Timestamp: ");
        buf_append(o, ts, (size_t)n);
        server_append_str(o, "\r\n");
    }
    if (r->allow != NULL) {
        server_append_str(o, "Allow: ");
        server_append_str(o, r->allow);
        server_append_str(o, "\r\n");
    }
    if (!keep_alive)
        server_append_str(o, "Connection: close\r\n");
    else if (minor == 0)
        server_append_str(o, "Connection: keep-alive\r\n");
    server_append_str(o, "\r\n");
    if (!head_only && r->status != 204)
        buf_append(o, r->body->data, r->body->len);
}

static const char *
server_error_code(int status)
{
    switch (status) {
    case 408: return "timeout";
    case 413: return "too_large";
    case 414: return "uri_too_long";
    case 431: return "headers_too_large";
    case 501: return "not_implemented";
    case 505: return "http_version";
    case 503: return "unavailable";
    default:  return "bad_request";
    }
}

/* An error that ends the connection (unparsable or oversized request). */
static void
conn_http_fail(conn *c, int status, const char *reason)
{
    http_api_reply r;
    uint64_t t0 = server_now_ns();
    http_api_error(c->w->api, status, server_error_code(status), reason, &r);
    conn_http_reply(c, &r, 0, 0, 1);
    c->closing = 1;
    metrics_observe(c->w->m, ROUTE_OTHER, status, server_now_ns() - t0);
}

static long worker_resume(ev_loop *l, long long id, void *data);

/* The request the API yielded on goes on at a later turn (worker_resume);
 * meanwhile nothing more is read from the client. */
static void
conn_suspend(conn *c, uint64_t t0)
{
    worker *w = c->w;
    c->suspended = 1;
    c->held_ns = t0;
    w->nsuspended++;
    ev_del(w->loop, c->fd, EV_READABLE);
    if (w->resume_timer == 0)
        w->resume_timer = ev_timer_add(w->loop, 0, worker_resume, w);
}

/* Answer the complete requests in the read buffer. */
static void
conn_http_process(conn *c)
{
    worker *w = c->w;
    size_t pos = 0;
    if (c->suspended)
        return;   /* only the resume timer goes on with it */
    while (!c->closing && pos < c->rlen && c->out.len - c->out_pos <= SERVER_OUT_HIGH) {
        size_t head = http_head_end(c->rbuf + pos, c->rlen - pos, &c->scan);
        if (head == 0)
            break;
        c->scan = 0;
        uint64_t t0 = server_now_ns();
        if (c->held_ns != 0) {   /* the suspended request, at the front again */
            t0 = c->held_ns;
            c->held_ns = 0;
        }
        http_request req;
        http_error e;
        if (http_parse_request(c->rbuf + pos, head, w->headers, (size_t)w->s->cfg.max_headers,
                               &req, &e) != 0) {
            conn_http_fail(c, e.status, e.reason);
            pos += head;
            break;
        }
        if (req.chunked) {
            size_t consumed, body_len;
            size_t room = w->s->cfg.max_request_bytes > head ? w->s->cfg.max_request_bytes - head
                                                              : 0;
            int r = http_chunked_scan(c->rbuf + pos + head, c->rlen - pos - head,
                                      room < HTTP_BODY_MAX ? room : HTTP_BODY_MAX, &consumed,
                                      &body_len, &e);
            if (r < 0) {
                conn_http_fail(c, e.status, e.reason);
                pos += head;
                break;
            }
            if (r == 0) {
                if (c->rlen - pos >= w->s->cfg.max_request_bytes) {
                    conn_http_fail(c, 413, "request body larger than --max-request-bytes");
                    pos += head;
                }
                break;   /* the body is still coming; the head is parsed again then */
            }
            http_chunked_decode(c->rbuf + pos + head, consumed);
            req.body = kslice_make(c->rbuf + pos + head, body_len);
            req.content_length = consumed;   /* what the request takes of the buffer */
        } else if (req.content_length > 0) {
            if (head + req.content_length > w->s->cfg.max_request_bytes) {
                conn_http_fail(c, 413, "request body larger than --max-request-bytes");
                pos += head;
                break;
            }
            if (c->rlen - pos < head + req.content_length)
                break;   /* the body is still coming; the head is parsed again then */
            req.body = kslice_make(c->rbuf + pos + head, req.content_length);
        }
        http_api_reply r;
        http_api_handle_conn(w->api, &c->cont, &req, &r);
        if (r.yield) {
            conn_suspend(c, t0);
            break;   /* the request stays in the buffer, at pos */
        }
        int keep = req.keep_alive && !w->draining;
        conn_http_reply(c, &r, keep, req.head_only, req.version_minor);
        metrics_observe(w->m, r.route, r.status, server_now_ns() - t0);
        pos += head + req.content_length;
        if (!keep)
            c->closing = 1;
    }
    if (pos > 0) {
        memmove(c->rbuf, c->rbuf + pos, c->rlen - pos);
        c->rlen -= pos;
        if (c->scan > c->rlen)
            c->scan = 0;
        c->req_start_ms = ev_now_ms(w->loop);
    }
    if (!c->closing && c->rlen >= w->s->cfg.max_request_bytes) {
        int status = http_oversize_status(c->rbuf, c->rlen);
        conn_http_fail(c, status, status == 414 ? "request line too long"
                                                : "request head too large");
    }
}

static void
conn_resp_process(conn *c)
{
    worker *w = c->w;
    size_t pos = 0;
    /* A command ends with '\n': while the first one is incomplete, bytes
     * without a '\n' cannot complete it, so a command trickling in is not
     * parsed again for every few bytes. */
    if (c->resp_wait && memchr(c->rbuf + c->scan, '\n', c->rlen - c->scan) == NULL) {
        c->scan = c->rlen;
        goto check_size;
    }
    c->resp_wait = 0;
    size_t ahead = c->ahead;   /* the buffered commands looked ahead at end here */
    c->ahead = 0;
    uint64_t t0 = 0;    /* a command's start: the end of the one before, in a pipeline */
    while (!c->closing && pos < c->rlen && c->out.len - c->out_pos <= SERVER_OUT_HIGH) {
        size_t argc, used;
        const char *why;
        resp_parse_result pr = resp_parse(c->rbuf + pos, c->rlen - pos, w->argv,
                                          RESP_ARGS_MAX_DEFAULT, w->s->cfg.max_request_bytes,
                                          &argc, &used, &why);
        if (pr == RESP_INCOMPLETE) {
            c->resp_wait = 1;
            break;
        }
        if (pr == RESP_ERROR) {
            char msg[160];
            snprintf(msg, sizeof msg, "ERR %s", why);
            resp_add_error(&c->out, msg);
            metrics_observe(w->m, ROUTE_RESP_OTHER, 400, 0);
            c->closing = 1;
            break;
        }
        /* More commands buffered behind this one (a pipeline): load the
         * rows of the next few together before answering them. */
        if (pos >= ahead && pos + used < c->rlen) {
            ahead = pos + resp_api_look_ahead(w->rapi, c->rbuf + pos, c->rlen - pos, c->db,
                                              w->s->cfg.max_request_bytes);
            resp_api_prefetch(w->rapi);
        }
        pos += used;
        if (pr == RESP_EMPTY)
            continue;
        if (t0 == 0)
            t0 = server_now_ns();
        int quit = 0, status = 200;
        metrics_route route = resp_api_handle(w->rapi, w->argv, argc, &c->db, &c->out, &quit,
                                              &status);
        uint64_t t1 = server_now_ns();
        metrics_observe(w->m, route, status, t1 - t0);
        t0 = t1;
        if (quit || w->draining)
            c->closing = 1;
    }
    if (pos > 0) {
        memmove(c->rbuf, c->rbuf + pos, c->rlen - pos);
        c->rlen -= pos;
        c->req_start_ms = ev_now_ms(w->loop);
    }
    c->scan = c->rlen;
check_size:
    if (!c->closing && c->rlen >= w->s->cfg.max_request_bytes) {
        resp_add_error(&c->out, "ERR Protocol error: request larger than --max-request-bytes");
        c->closing = 1;
    }
}

static void
conn_process(conn *c)
{
    if (c->proto == CONN_HTTP)
        conn_http_process(c);
    else
        conn_resp_process(c);
}

/* Answer what is buffered and send it, for as long as the output drains
 * and buffered requests remain: processing stops at SERVER_OUT_HIGH bytes
 * of output, and when the socket then takes all of it no event would ever
 * come for the requests still in the buffer (the client has sent them
 * all and waits). Returns -1 if the connection was closed. */
static int
conn_pump_from(conn *c, size_t before)
{
    conn_unpend(c);
    for (;;) {
        if (conn_flush(c) != 0)
            return -1;
        if (c->closing || c->paused || c->suspended || c->out_pos < c->out.len ||
            c->rlen == 0 || c->rlen == before)
            return 0;
        before = c->rlen;
        conn_process(c);
    }
}

static int
conn_pump(conn *c)
{
    size_t before = c->rlen;
    conn_process(c);
    return conn_pump_from(c, before);
}

static void
conn_pend(conn *c, size_t before)
{
    worker *w = c->w;
    if (c->pend_next == NULL) {
        c->pend_before = before;
        c->pend_next = &w->pending;
        c->pend_prev = w->pending.pend_prev;
        w->pending.pend_prev->pend_next = c;
        w->pending.pend_prev = c;
    }
}

/* Answer what a read brought, and leave the sending to worker_send_pending
 * at the end of the loop's turn, as Redis does: the replies to one batch of
 * ready connections go out together, so a client waiting on many
 * connections finds them ready in one wake-up rather than one at a time.
 * A RESP connection's read is answered there too (conn_defer), after the
 * rows its commands and those of the turn's other reads name were looked
 * ahead at together. */
static void
conn_answer(conn *c)
{
    size_t before = c->rlen;
    conn_process(c);
    conn_pend(c, before);
}

static void
conn_defer(conn *c)
{
    conn_pend(c, c->rlen);
    c->unanswered = 1;
}

/* Answer the RESP reads of the turn, a batch of connections at a time:
 * their first commands' rows are looked ahead at together, then each
 * connection is answered. */
static void
worker_answer_reads(worker *w)
{
    conn *end = &w->pending, *c = w->pending.pend_next;
    while (c != end && !c->unanswered)
        c = c->pend_next;
    if (c == end)
        return;   /* no RESP read this turn: the reader's snapshot stays as it was */
    views_reader_refresh(w->reader);
    while (c != end) {
        conn *first = c;
        for (; c != end && !resp_api_ahead_full(w->rapi); c = c->pend_next) {
            if (c->unanswered)
                c->ahead = resp_api_look_ahead(w->rapi, c->rbuf, c->rlen, c->db,
                                               w->s->cfg.max_request_bytes);
        }
        resp_api_prefetch(w->rapi);
        for (conn *d = first; d != c; d = d->pend_next) {
            if (d->unanswered) {
                d->unanswered = 0;
                conn_process(d);
            }
        }
    }
}

static void
worker_send_pending(ev_loop *l, void *data)
{
    worker *w = data;
    (void)l;
    worker_answer_reads(w);
    while (w->pending.pend_next != &w->pending) {
        conn *c = w->pending.pend_next;
        conn_pump_from(c, c->pend_before);
    }
}

static void
conn_on_event(ev_loop *l, int fd, void *data, int mask)
{
    conn *c = data;
    worker *w = c->w;
    (void)fd;
    if (mask & EV_WRITABLE) {
        if (conn_flush(c) != 0)
            return;
        if (c->lingering)
            return;
        if (c->out_pos == c->out.len) {
            if (c->paused) {
                c->paused = 0;
                if (!c->suspended)
                    ev_add(l, c->fd, EV_READABLE, conn_on_event, c, NULL);
            }
            /* Requests that arrived while output was queued are already
             * buffered: no read event will come for them. */
            if (c->rlen > 0) {
                views_reader_refresh(w->reader);
                if (conn_pump(c) != 0)
                    return;
            }
        }
    }
    if (!(mask & EV_READABLE) || c->paused)
        return;
    if (c->lingering) {
        uint8_t sink[4096];
        ssize_t n = recv(c->fd, sink, sizeof sink, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            conn_close(c);
        return;
    }
    if (c->closing)
        return;
    if (c->suspended) {   /* reading goes on once the request is answered */
        ev_del(l, c->fd, EV_READABLE);
        return;
    }
    if (c->rlen == c->rcap) {
        size_t ncap = c->rcap * 2;
        if (ncap > w->s->cfg.max_request_bytes)
            ncap = w->s->cfg.max_request_bytes;
        if (ncap > c->rcap) {
            c->rbuf = kiln_realloc(c->rbuf, ncap);
            c->rcap = ncap;
        }
    }
    ssize_t n = recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen, 0);
    if (n == 0) {
        conn_close(c);
        return;
    }
    if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            conn_close(c);
        return;
    }
    if (c->rlen == 0)
        c->req_start_ms = ev_now_ms(l);
    c->rlen += (size_t)n;
    c->last_ms = ev_now_ms(l);
    metrics_bytes(w->m, (uint64_t)n, 0);
    if (c->proto == CONN_RESP) {
        conn_defer(c);
        return;
    }
    views_reader_refresh(w->reader);
    conn_answer(c);
}

/* ------------------------------------------------------------------ accepting */

static void
server_refuse(int fd, int proto)
{
    static const char body[] =
        "{\"status\":503,\"code\":\"unavailable\",\"message\":\"too many connections\"}\n";
    char msg[512];
    int len;
    if (proto == CONN_HTTP)
        len = snprintf(msg, sizeof msg,
                       "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                       "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                       sizeof body - 1, body);
    else
        len = snprintf(msg, sizeof msg, "-ERR max number of clients reached\r\n");
    ssize_t n = send(fd, msg, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)n;
    close(fd);
}

static void
worker_link(worker *w, conn *c)
{
    c->w = w;
    c->next = w->head.next;
    c->prev = &w->head;
    w->head.next->prev = c;
    w->head.next = c;
    w->nconns++;
    metrics_conn(w->m, 1);
}

/* Make fd a connection of w. */
static void
worker_adopt(worker *w, int fd, int proto)
{
    net_set_nodelay(fd);
    conn *c = kiln_calloc(1, sizeof *c);
    c->w = w;
    c->fd = fd;
    c->proto = proto;
    c->rcap = SERVER_RBUF_INITIAL < w->s->cfg.max_request_bytes ? SERVER_RBUF_INITIAL
                                                                 : w->s->cfg.max_request_bytes;
    c->last_ms = ev_now_ms(w->loop);
    if (clients_peer_key(fd, c->peer)) {
        if (!clients_enter(w->s->clients, c->peer)) {
            metrics_observe(w->m, proto == CONN_HTTP ? ROUTE_OTHER : ROUTE_RESP_OTHER, 503, 0);
            free(c);
            server_refuse(fd, proto);
            atomic_fetch_sub_explicit(&w->s->conns, 1, memory_order_relaxed);
            return;
        }
        c->counted = 1;
    }
    c->rbuf = kiln_malloc(c->rcap);
    kiln_err err;
    status_clear(&err);
    if (ev_add(w->loop, fd, EV_READABLE, conn_on_event, c, &err) != KILN_OK) {
        slog_warn("%s", err.msg);
        if (c->counted)
            clients_leave(w->s->clients, c->peer);
        free(c->rbuf);
        free(c);
        server_refuse(fd, proto);
        atomic_fetch_sub_explicit(&w->s->conns, 1, memory_order_relaxed);
        return;
    }
    worker_link(w, c);
}

static void worker_attach(worker *w, conn *c);

/* Connections worker 0 accepted for w, and those other workers handed to it. */
static void
worker_drain_inbox(worker *w)
{
    pthread_mutex_lock(&w->inbox_mu);
    conn *moved = w->moved;
    w->moved = NULL;
    pthread_mutex_unlock(&w->inbox_mu);
    while (moved != NULL) {
        conn *c = moved;
        moved = c->next;
        worker_attach(w, c);
    }
    for (;;) {
        int item[64];
        size_t n = 0;
        pthread_mutex_lock(&w->inbox_mu);
        while (n < 64 && w->inbox_len > 0)
            item[n++] = w->inbox[--w->inbox_len];
        pthread_mutex_unlock(&w->inbox_mu);
        if (n == 0)
            return;
        for (size_t i = 0; i < n; i++) {
            int fd = item[i] >> 1, proto = item[i] & 1;
            if (w->draining) {
                server_refuse(fd, proto);
                atomic_fetch_sub_explicit(&w->s->conns, 1, memory_order_relaxed);
            } else {
                worker_adopt(w, fd, proto);
            }
        }
    }
}

/* Out of descriptors: the pending connection would keep the listener
 * readable and the loop spinning. Give up the spare descriptor, accept the
 * connection, refuse it (503 / -ERR), and take the spare back; warn at most
 * once a second. */
static void
server_out_of_fds(server *s, int lfd, int proto, int64_t now)
{
    int e = errno;
    if (now - s->fd_warn_ms >= 1000) {
        s->fd_warn_ms = now;
        slog_warn("accept: %s: refusing new connections (raise the descriptor limit, now "
                  "%ld, or lower --max-conns)", strerror(e), sysconf(_SC_OPEN_MAX));
    }
    if (s->spare_fd >= 0) {
        close(s->spare_fd);
        s->spare_fd = -1;
    }
    int fd = net_accept(lfd);
    if (fd >= 0)
        server_refuse(fd, proto);
    s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* Worker 0 accepts for everyone and deals the connections out in turn, so
 * that every worker gets its share (one listening socket: no other process
 * can bind the port beside us, as SO_REUSEPORT would allow). */
static void
server_on_accept(ev_loop *l, int lfd, void *data, int mask)
{
    worker *w = data;
    server *s = w->s;
    (void)l;
    (void)mask;
    int proto = lfd == w->http_fd ? CONN_HTTP : CONN_RESP;
    for (int i = 0; i < SERVER_ACCEPT_BATCH; i++) {
        int fd = net_accept(lfd);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE)
                server_out_of_fds(s, lfd, proto, ev_now_ms(l));
            return;
        }
        if (atomic_load_explicit(&s->conns, memory_order_relaxed) >= s->cfg.max_conns ||
            w->draining) {
            server_refuse(fd, proto);
            continue;
        }
        atomic_fetch_add_explicit(&s->conns, 1, memory_order_relaxed);
        s->accepted++;
        unsigned active = (unsigned)atomic_load_explicit(&s->nactive, memory_order_relaxed);
        worker *t = &s->workers[s->next_worker++ % active];
        if (t == w) {
            worker_adopt(w, fd, proto);
            continue;
        }
        pthread_mutex_lock(&t->inbox_mu);
        if (t->inbox_len == t->inbox_cap) {
            t->inbox_cap = t->inbox_cap ? t->inbox_cap * 2 : 64;
            t->inbox = kiln_realloc(t->inbox, t->inbox_cap * sizeof *t->inbox);
        }
        t->inbox[t->inbox_len++] = fd << 1 | proto;
        pthread_mutex_unlock(&t->inbox_mu);
        ev_wake(t->loop);
    }
}

/* ------------------------------------------------------------------ sharing the load
 *
 * The workers in use follow the load (balance.h): every tick each worker
 * measures the part of the tick it spent working rather than waiting for
 * events, and worker 0 asks balance_step whether to park the last active
 * worker or bring the first parked one back. A parked worker hands its
 * connections to the active ones and gets no new ones; one that comes back
 * gets a share of every active worker's. A connection moves between turns
 * of its worker's loop, with its buffers and the events it watched; one
 * whose request is suspended, or which holds a scan's continuation, stays
 * until that is over.
 */

/* The part of the last tick w spent working, in thousandths. A worker
 * polls before sleeping (ev_set_busy_poll) when it was busy over half of
 * the tick, or over a quarter of it with most of its waits for the next
 * events over within the poll's span (ev_waits), so that a poll would have
 * found those events.
 * The second holds whether polling is on or not: a worker that stopped
 * polling (backing off while another thread took its core) serves fewer
 * requests a second and is then busy less than half the time, and on that
 * alone it would never poll again under the same load. */
static void
worker_measure(worker *w)
{
    uint64_t now = server_now_ns(), idle = ev_idle_ns(w->loop);
    uint64_t waits, caught;
    ev_waits(w->loop, &waits, &caught);
    if (w->busy_at_ns != 0 && now > w->busy_at_ns) {
        uint64_t wall = now - w->busy_at_ns, waited = idle - w->idle_ns;
        uint64_t busy = wall > waited ? wall - waited : 0;
        int pm = (int)(busy * 1000 / wall);
        atomic_store_explicit(&w->busy_pm, pm, memory_order_relaxed);
        uint64_t dw = waits - w->waits, dc = caught - w->caught;
        int poll = pm >= SERVER_POLL_BUSY_PM ||
                   (pm >= SERVER_POLL_BUSY_PM / 2 && dw >= SERVER_POLL_MIN_WAITS && dc * 2 > dw);
        ev_set_busy_poll(w->loop, poll ? w->s->cfg.busy_poll_us : 0);
    }
    w->busy_at_ns = now;
    w->idle_ns = idle;
    w->waits = waits;
    w->caught = caught;
}

/* Worker 0's tick: park a worker, or bring one back, as the load says. */
static void
server_balance(server *s)
{
    int n = s->nworkers, k = atomic_load(&s->nactive);
    if (n == 1 || atomic_load(&s->shutdown))
        return;
    int load = 0;
    for (int i = 0; i < k; i++)
        load += atomic_load_explicit(&s->workers[i].busy_pm, memory_order_relaxed);
    balance_clients(&s->balance, s->accepted,
                    atomic_load_explicit(&s->conns, memory_order_relaxed));
    int step = balance_step(&s->balance, k, n, load, balance_idle_pm(&s->balance));
    if (step > 0) {
        atomic_store(&s->workers[k].parked, 0);
        atomic_store(&s->nactive, k + 1);
        for (int i = 0; i < k; i++) {
            atomic_store(&s->workers[i].give_to, k);
            if (i != 0)
                ev_wake(s->workers[i].loop);
        }
    } else if (step < 0) {
        atomic_store(&s->nactive, k - 1);
        atomic_store(&s->workers[k - 1].parked, 1);
        ev_wake(s->workers[k - 1].loop);
    }
}

/* The server is shutting down: close c if nothing is in flight on it, or
 * answer what it sent and close (RESP: at once; HTTP: with its reply's
 * Connection: close). */
static void
conn_drain(conn *c)
{
    if (c->rlen == 0 && c->out_pos == c->out.len && !c->lingering)
        conn_close(c);
    else
        c->closing = c->closing || c->proto == CONN_RESP;
}

/* Take c, handed over by another worker, with the events it watched there. */
static void
worker_attach(worker *w, conn *c)
{
    worker_link(w, c);
    if (c->suspended)
        w->nsuspended++;
    kiln_err err;
    status_clear(&err);
    if (ev_add(w->loop, c->fd, c->moved_mask, conn_on_event, c, &err) != KILN_OK) {
        slog_warn("%s", err.msg);
        conn_close(c);
        return;
    }
    if (w->draining)
        conn_drain(c);
}

/* Hand the connections on list (linked by next, already detached from w)
 * to t; if t has stopped, w keeps them. */
static void
worker_give(worker *w, worker *t, conn *list, size_t n)
{
    if (list == NULL)
        return;
    pthread_mutex_lock(&t->inbox_mu);
    int closed = t->inbox_closed;
    if (!closed) {
        conn *last = list;
        while (last->next != NULL)
            last = last->next;
        last->next = t->moved;
        t->moved = list;
    }
    pthread_mutex_unlock(&t->inbox_mu);
    if (closed) {
        while (list != NULL) {
            conn *c = list;
            list = c->next;
            worker_attach(w, c);
        }
        return;
    }
    atomic_fetch_add_explicit(&w->s->moved, n, memory_order_relaxed);
    ev_wake(t->loop);
}

/* The worker whose clients c belongs with: its packets last came in on CPU
 * cpu (SO_INCOMING_CPU: for loopback, the CPU its client sent from; for a
 * network card, the CPU of its receive queue), and worker cpu % active
 * serves that CPU's connections. -1 if unknown. A client thread's
 * connections then meet on one worker, which answers them in one turn and
 * wakes that thread once for all of them. */
static int
conn_home(const conn *c, int active)
{
    int cpu = -1;
    socklen_t len = sizeof cpu;
    if (getsockopt(c->fd, SOL_SOCKET, SO_INCOMING_CPU, &cpu, &len) != 0 || cpu < 0)
        return -1;
    return cpu % active;
}

/* Connections on their way from w to other workers, one list per worker. */
typedef struct handoff {
    conn *list[SERVER_MAX_WORKERS];
    size_t n[SERVER_MAX_WORKERS];
    size_t total;
} handoff;

/* Can c move now? Not with a suspended request or a scan's continuation
 * (they hold the worker's own state), nor with replies not yet sent. */
static int
conn_movable(const conn *c)
{
    return !c->suspended && c->cont == NULL && c->pend_next == NULL;
}

/* Take c off w's loop and list, bound for worker t. */
static void
handoff_add(handoff *h, worker *w, conn *c, int t)
{
    c->moved_mask = ev_mask(w->loop, c->fd);
    ev_del(w->loop, c->fd, EV_READABLE | EV_WRITABLE);
    c->prev->next = c->next;
    c->next->prev = c->prev;
    w->nconns--;
    metrics_conn(w->m, -1);
    c->next = h->list[t];
    h->list[t] = c;
    h->n[t]++;
    h->total++;
}

static void
handoff_send(handoff *h, worker *w)
{
    for (int t = 0; t < w->s->nworkers; t++)
        worker_give(w, &w->s->workers[t], h->list[t], h->n[t]);
    atomic_store_explicit(&w->nconns_seen, (int)w->nconns, memory_order_relaxed);
}

/* w parks: every connection that can move goes to an active worker, its
 * home if it has one. */
static void
worker_park(worker *w, int active)
{
    handoff h = {{NULL}, {0}, 0};
    for (conn *c = w->head.next; c != &w->head;) {
        conn *next = c->next;
        if (conn_movable(c)) {
            int t = conn_home(c, active);
            handoff_add(&h, w, c, t >= 0 ? t : (int)(h.total % (size_t)active));
        }
        c = next;
    }
    handoff_send(&h, w);
}

/* Worker t came back: it gets count of w's connections, those whose home
 * it is first. */
static void
worker_share(worker *w, int t, size_t count, int active)
{
    handoff h = {{NULL}, {0}, 0};
    for (int pass = 0; pass < 2 && h.total < count; pass++) {
        for (conn *c = w->head.next; c != &w->head && h.total < count;) {
            conn *next = c->next;
            if (conn_movable(c) && (pass == 1 || conn_home(c, active) == t))
                handoff_add(&h, w, c, t);
            c = next;
        }
    }
    handoff_send(&h, w);
}

/* Connections away from home go there, as long as their home worker has
 * no more than w: the workers stay within two connections of each other
 * however the clients are spread, and two workers each holding the
 * other's connections trade them one a tick. At most
 * SERVER_ALIGN_SCAN connections are looked at per tick. */
static void
worker_align(worker *w, int active)
{
    handoff h = {{NULL}, {0}, 0};
    int seen[SERVER_MAX_WORKERS];
    for (int t = 0; t < active; t++)
        seen[t] = atomic_load_explicit(&w->s->workers[t].nconns_seen, memory_order_relaxed);
    int looked = 0, away = 0;
    for (conn *c = w->head.next; c != &w->head && looked < SERVER_ALIGN_SCAN; looked++) {
        conn *next = c->next;
        int t = conn_movable(c) ? conn_home(c, active) : -1;
        if (t >= 0 && t != w->id && seen[t] <= (int)w->nconns) {
            handoff_add(&h, w, c, t);
            seen[t]++;
        } else if (t >= 0 && t != w->id) {
            away++;
        }
        c = next;
    }
    handoff_send(&h, w);
    atomic_store_explicit(&w->away, away, memory_order_relaxed);
}

/* The hook before each sleep: send the turn's replies, then hand
 * connections over if w parks, a worker came back, or the tick asked for
 * connections to go home. */
static void
worker_before_sleep(ev_loop *l, void *data)
{
    worker *w = data;
    worker_send_pending(l, w);
    server *s = w->s;
    int align = w->align_due;
    w->align_due = 0;
    if (align)
        atomic_store_explicit(&w->away, 0, memory_order_relaxed);
    if (atomic_load_explicit(&s->shutdown, memory_order_relaxed) || w->nconns == 0)
        return;
    int active = atomic_load(&s->nactive);
    if (atomic_load_explicit(&w->parked, memory_order_relaxed)) {
        if (active > 0 && active <= w->id)
            worker_park(w, active);
        return;
    }
    int t = atomic_exchange(&w->give_to, -1);
    if (t >= 0 && t != w->id && t < active)
        worker_share(w, t, w->nconns / (size_t)active, active);
    else if (align && active > 1 && w->id < active)
        worker_align(w, active);
}

/* ------------------------------------------------------------------ timers, drain */

static void
worker_close_listeners(worker *w)
{
    if (w->http_fd >= 0) {
        ev_del(w->loop, w->http_fd, EV_READABLE);
        close(w->http_fd);
        w->http_fd = -1;
    }
    if (w->resp_fd >= 0) {
        ev_del(w->loop, w->resp_fd, EV_READABLE);
        close(w->resp_fd);
        w->resp_fd = -1;
    }
}

static void
worker_sweep(worker *w, int64_t now)
{
    int idle_ms = w->s->cfg.idle_timeout_ms;
    int request_ms = w->s->cfg.request_timeout_ms;
    for (conn *c = w->head.next; c != &w->head;) {
        conn *next = c->next;
        int idle = now - c->last_ms > idle_ms;
        /* A request trickling in a byte at a time is never idle: it gets
         * request_ms from its first byte to its last. */
        int late = c->rlen > 0 && !c->closing && !c->lingering && !c->paused &&
                   !c->suspended && c->out_pos == c->out.len &&
                   now - c->req_start_ms > request_ms;
        if (late) {
            if (c->proto == CONN_HTTP) {
                conn_http_fail(c, 408, "request not completed within the request timeout");
            } else {
                /* Say why before closing, as the 408 does over HTTP. */
                resp_add_error(&c->out, "ERR Protocol error: command not completed within the "
                                        "request timeout");
                c->closing = 1;
                metrics_observe(w->m, ROUTE_RESP_OTHER, 408, 0);
            }
            conn_flush(c);
            c = next;
            continue;
        }
        if (c->lingering) {
            if (now > c->linger_until)
                conn_close(c);
        } else if (w->draining && c->rlen == 0 && c->out_pos == c->out.len) {
            conn_close(c);   /* nothing in flight */
        } else if (w->draining && now > w->drain_until) {
            conn_close(c);
        } else if (idle && c->out_pos < c->out.len) {
            conn_close(c);   /* the client stopped reading */
        } else if (idle && c->rlen > 0 && c->proto == CONN_HTTP && !c->closing) {
            conn_http_fail(c, 408, "request not completed within the idle timeout");
            conn_flush(c);
        } else if (idle && !c->closing) {
            conn_close(c);
        }
        c = next;
    }
}

/* Has the client of a suspended connection gone (closed or reset)? Its
 * pipelined bytes, if any, stay unread. */
static int
conn_peer_gone(conn *c)
{
    uint8_t b;
    ssize_t n = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* Give each suspended connection one more turn: its request goes on (and
 * maybe suspends again); once answered, the connection reads again. Runs
 * on every loop turn while any is suspended. */
static long
worker_resume(ev_loop *l, long long id, void *data)
{
    worker *w = data;
    (void)id;
    for (conn *c = w->head.next; c != &w->head && w->nsuspended > 0;) {
        conn *next = c->next;
        if (!c->suspended) {
            c = next;
            continue;
        }
        c->suspended = 0;
        w->nsuspended--;
        c->last_ms = ev_now_ms(l);
        if (conn_peer_gone(c)) {
            conn_close(c);
            c = next;
            continue;
        }
        views_reader_refresh(w->reader);
        if (conn_pump(c) != 0) {
            c = next;
            continue;
        }
        if (!c->suspended && !c->paused && !c->closing && !c->lingering &&
            !(ev_mask(l, c->fd) & EV_READABLE))
            ev_add(l, c->fd, EV_READABLE, conn_on_event, c, NULL);
        c = next;
    }
    if (w->nsuspended > 0)
        return 0;
    w->resume_timer = 0;
    return EV_TIMER_STOP;
}

static long
worker_tick(ev_loop *l, long long id, void *data)
{
    worker *w = data;
    (void)id;
    int64_t now = ev_now_ms(l);
    views_reader_refresh(w->reader);
    worker_measure(w);
    atomic_store_explicit(&w->nconns_seen, (int)w->nconns, memory_order_relaxed);
    w->align_due = 1;
    if (w->id == 0)
        server_balance(w->s);
    if (now - w->last_sweep_ms >= 1000 || w->draining) {
        w->last_sweep_ms = now;
        server_update_date(w);
        if (w->id == 0)
            metrics_tick(w->s->metrics);
        worker_sweep(w, now);
    }
    if (w->draining && w->nconns == 0)
        ev_stop(l);
    return SERVER_TICK_MS;
}

static void
worker_on_wake(ev_loop *l, void *data)
{
    worker *w = data;
    worker_drain_inbox(w);
    if (!atomic_load(&w->s->shutdown) || w->draining)
        return;
    w->draining = 1;
    w->drain_until = ev_clock_ms(l) + w->s->cfg.drain_timeout_ms;
    worker_close_listeners(w);
    for (conn *c = w->head.next; c != &w->head;) {
        conn *next = c->next;
        conn_drain(c);
        c = next;
    }
    if (w->nconns == 0)
        ev_stop(l);
}

/* Every worker's busy polling, summed: /metrics. */
static void
server_poll_stats(void *arg, ev_poll_stats *out)
{
    server *s = arg;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < s->nworkers; i++) {
        if (s->workers[i].loop == NULL)
            continue;
        ev_poll_stats one;
        ev_get_poll_stats(s->workers[i].loop, &one);
        out->polled += one.polled;
        out->slept += one.slept;
        out->backoffs += one.backoffs;
    }
}

/* How the workers share the load: /metrics. */
static void
server_worker_stats(void *arg, http_worker_stats *out)
{
    server *s = arg;
    out->active = atomic_load(&s->nactive);
    int pm = 0;
    for (int i = 0; i < out->active; i++)
        pm += atomic_load_explicit(&s->workers[i].busy_pm, memory_order_relaxed);
    out->busy = pm / 1000.0;
    out->moved = atomic_load_explicit(&s->moved, memory_order_relaxed);
    out->away = 0;
    for (int i = 0; i < s->nworkers; i++)
        out->away += atomic_load_explicit(&s->workers[i].away, memory_order_relaxed);
}

static void *
worker_main(void *arg)
{
    worker *w = arg;
    w->reader = views_reader_new(w->s->views);
    w->ctx = views_ctx_new();
    views_reader_attach(w->reader, w->ctx);
    w->api = http_api_new(&w->s->env, w->reader, w->ctx);
    w->rapi = resp_api_new(&w->s->renv, w->reader, w->ctx);
    server_update_date(w);
    ev_timer_add(w->loop, SERVER_TICK_MS, worker_tick, w);
    ev_set_on_wake(w->loop, worker_on_wake, w);
    ev_set_before_sleep(w->loop, worker_before_sleep, w);
    if (atomic_load(&w->s->shutdown))
        worker_on_wake(w->loop, w);
    ev_run(w->loop);
    pthread_mutex_lock(&w->inbox_mu);
    w->inbox_closed = 1;
    pthread_mutex_unlock(&w->inbox_mu);
    worker_drain_inbox(w);
    for (conn *c = w->head.next; c != &w->head;) {
        conn *next = c->next;
        conn_close(c);
        c = next;
    }
    worker_close_listeners(w);
    http_api_free(w->api);
    resp_api_free(w->rapi);
    views_ctx_free(w->ctx);
    views_reader_free(w->reader);
    w->api = NULL;
    w->rapi = NULL;
    w->ctx = NULL;
    w->reader = NULL;
    return NULL;
}

/* ------------------------------------------------------------------ start, stop */

static kiln_status
server_bind(const char *text, int *fd, int *port, kiln_err *err)
{
    net_addr a;
    kiln_status st = net_parse_addr(text, &a, err);
    if (st == KILN_OK)
        st = net_listen(&a, SERVER_BACKLOG, 0, fd, err);
    if (st != KILN_OK)
        return st;
    *port = net_local_port(*fd);
    if (!net_addr_is_loopback(&a))
        slog_warn("%s is not a loopback address: the server is reachable from the network",
                  text);
    return KILN_OK;
}

kiln_status
server_start(const server_config *cfg, server **out, kiln_err *err)
{
    *out = NULL;
    if (cfg->max_request_bytes < 256 || cfg->max_headers < 1 || cfg->max_conns < 1 ||
        cfg->idle_timeout_ms < 1 || cfg->page_rows < 1 || cfg->request_timeout_ms < 1 ||
        cfg->max_conns_per_client < 1)
        return status_set(err, KILN_INVALID, "server: a limit is out of range");
    server *s = kiln_calloc(1, sizeof *s);
    s->cfg = *cfg;
    s->clients = clients_new(cfg->max_conns_per_client);
    s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    s->http_port = s->resp_port = -1;
    atomic_init(&s->conns, 0);
    atomic_init(&s->shutdown, 0);
    s->nworkers = cfg->threads > 0 ? cfg->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (s->nworkers < 1)
        s->nworkers = 1;
    if (s->nworkers > SERVER_MAX_WORKERS)
        s->nworkers = SERVER_MAX_WORKERS;
    atomic_init(&s->nactive, s->nworkers);
    balance_init(&s->balance, cfg->park_below_pct, cfg->unpark_above_pct, cfg->unpark_spare_pm);
    atomic_init(&s->moved, 0);
    size_t rows = cfg->row_cache_bytes == SIZE_MAX ? cfg->cache_bytes / 4 : cfg->row_cache_bytes;
    if (rows > cfg->cache_bytes)
        rows = cfg->cache_bytes;
    views_options vo;
    views_options_init(&vo);
    vo.block_cache_bytes = cfg->cache_bytes - rows;
    vo.row_cache_bytes = rows;
    vo.poll_ms = cfg->poll_ms;
    vo.warm_ms = cfg->warm_ms;
    vo.prefetch_ms = cfg->prefetch_ms;
    /* the views own the speed layer; read-only, they replay its log
     * without taking it, so that writes made before are served */
    vo.speed = 1;
    speed_options_init(&vo.speed_opt);
    vo.speed_opt.read_only = cfg->read_only;
    if (cfg->memstore_flush_bytes > 0)
        vo.speed_opt.memstore_flush_bytes = cfg->memstore_flush_bytes;
    s->metrics = metrics_new();
    kiln_status st;
    for (size_t i = 0; i < cfg->resp_column_count; i++) {
        st = resp_api_add_column(&s->renv, cfg->resp_columns[i], err);
        if (st != KILN_OK) {
            server_free(s);
            return st;
        }
    }
    s->workers = kiln_calloc((size_t)s->nworkers, sizeof *s->workers);
    for (int i = 0; i < s->nworkers; i++) {
        s->workers[i].http_fd = s->workers[i].resp_fd = -1;
        pthread_mutex_init(&s->workers[i].inbox_mu, NULL);
        atomic_init(&s->workers[i].parked, 0);
        atomic_init(&s->workers[i].give_to, -1);
        atomic_init(&s->workers[i].busy_pm, 0);
        atomic_init(&s->workers[i].nconns_seen, 0);
        atomic_init(&s->workers[i].away, 0);
    }
    st = server_bind(cfg->listen, &s->workers[0].http_fd, &s->http_port, err);
    if (st == KILN_OK && cfg->resp_listen != NULL)
        st = server_bind(cfg->resp_listen, &s->workers[0].resp_fd, &s->resp_port, err);
    if (st == KILN_OK)
        st = views_open(cfg->data_dir, &vo, &s->views, err);
    if (st == KILN_OK)
        s->speed = views_speed(s->views);
    int setsize = cfg->max_conns + 64 + 2 * s->nworkers;
    for (int i = 0; i < s->nworkers; i++) {
        worker *w = &s->workers[i];
        w->s = s;
        w->id = i;
        w->head.next = w->head.prev = &w->head;
        w->pending.pend_next = w->pending.pend_prev = &w->pending;
        w->headers = kiln_calloc((size_t)cfg->max_headers, sizeof *w->headers);
        w->argv = kiln_calloc(RESP_ARGS_MAX_DEFAULT, sizeof *w->argv);
        if (st == KILN_OK)
            st = ev_loop_new(setsize + 1024, &w->loop, err);
        if (st == KILN_OK)
            ev_set_poll_span(w->loop, cfg->busy_poll_us);
        if (st == KILN_OK && w->http_fd >= 0)
            st = ev_add(w->loop, w->http_fd, EV_READABLE, server_on_accept, w, err);
        if (st == KILN_OK && w->resp_fd >= 0)
            st = ev_add(w->loop, w->resp_fd, EV_READABLE, server_on_accept, w, err);
        w->m = metrics_local_new(s->metrics);
    }
    if (st != KILN_OK) {
        server_free(s);
        return st;
    }
    s->env.views = s->views;
    s->env.metrics = s->metrics;
    snprintf(s->env.listen, sizeof s->env.listen, "%s", cfg->listen);
    char *colon = strrchr(s->env.listen, ':');
    if (colon != NULL)
        snprintf(colon + 1, sizeof s->env.listen - (size_t)(colon + 1 - s->env.listen), "%d",
                 s->http_port);
    if (cfg->resp_listen != NULL) {
        snprintf(s->env.resp_listen, sizeof s->env.resp_listen, "%s", cfg->resp_listen);
        colon = strrchr(s->env.resp_listen, ':');
        if (colon != NULL)
            snprintf(colon + 1,
                     sizeof s->env.resp_listen - (size_t)(colon + 1 - s->env.resp_listen), "%d",
                     s->resp_port);
    }
    s->env.threads = s->nworkers;
    s->env.block_cache_bytes = vo.block_cache_bytes;
    s->env.row_cache_bytes = vo.row_cache_bytes;
    s->env.started_ms = server_wall_ms();
    s->env.page_rows = cfg->page_rows;
    s->env.page_bytes = cfg->page_bytes ? cfg->page_bytes : HTTP_API_PAGE_BYTES_DEFAULT;
    s->env.count_rows = HTTP_API_COUNT_ROWS_DEFAULT;
    s->env.deadline_ms = cfg->request_deadline_ms > 0 ? cfg->request_deadline_ms
                                                      : HTTP_API_DEADLINE_MS_DEFAULT;
    s->env.max_reply_bytes = cfg->max_reply_bytes ? cfg->max_reply_bytes : SIZE_MAX;
    s->env.scan_max_bytes = cfg->scan_max_bytes ? cfg->scan_max_bytes
                                                : HTTP_API_SCAN_MAX_BYTES_DEFAULT;
    s->env.scanners = http_scanners_new(cfg->scanners_max, cfg->scanner_idle_ms);
    s->env.speed = s->speed;
    s->env.poll_stats = server_poll_stats;
    s->env.poll_stats_arg = s;
    s->env.worker_stats = server_worker_stats;
    s->env.worker_stats_arg = s;
    s->env.read_only = cfg->read_only;
    atomic_init(&s->env.draining, 0);
    s->renv.views = s->views;
    s->renv.speed = s->speed;
    s->renv.read_only = cfg->read_only;
    s->renv.metrics = s->metrics;
    snprintf(s->renv.listen, sizeof s->renv.listen, "%s", s->env.resp_listen);
    s->renv.threads = s->nworkers;
    s->renv.started_ms = s->env.started_ms;
    s->renv.max_reply_bytes = cfg->max_reply_bytes;
    st = views_start(s->views, err);
    for (int i = 0; st == KILN_OK && i < s->nworkers; i++) {
        int rc = pthread_create(&s->workers[i].thread, NULL, worker_main, &s->workers[i]);
        if (rc == 0)
            s->workers[i].started = 1;
        if (rc != 0) {
            st = status_set_errno(err, rc, "server: pthread_create");
            atomic_store(&s->shutdown, 1);
            for (int k = 0; k < i; k++)
                ev_wake(s->workers[k].loop);
            for (int k = 0; k < i; k++) {
                pthread_join(s->workers[k].thread, NULL);
                s->workers[k].started = 0;
            }
        }
    }
    if (st != KILN_OK) {
        if (s->views != NULL)
            views_stop(s->views);
        server_free(s);
        return st;
    }
    *out = s;
    return KILN_OK;
}

int
server_http_port(const server *s)
{
    return s->http_port;
}

int
server_resp_port(const server *s)
{
    return s->resp_port;
}

views *
server_views(server *s)
{
    return s->views;
}

void
server_shutdown(server *s)
{
    atomic_store(&s->shutdown, 1);
    atomic_store(&s->env.draining, 1);
    for (int i = 0; i < s->nworkers; i++) {
        if (s->workers[i].loop != NULL)
            ev_wake(s->workers[i].loop);
    }
}

void
server_wait(server *s)
{
    for (int i = 0; i < s->nworkers; i++) {
        if (s->workers[i].started) {
            pthread_join(s->workers[i].thread, NULL);
            s->workers[i].started = 0;
        }
    }
    views_stop(s->views);
}

void
server_free(server *s)
{
    if (s == NULL)
        return;
    if (s->spare_fd >= 0)
        close(s->spare_fd);
    for (int i = 0; s->workers != NULL && i < s->nworkers; i++) {
        worker *w = &s->workers[i];
        if (w->http_fd >= 0)
            close(w->http_fd);
        if (w->resp_fd >= 0)
            close(w->resp_fd);
        for (size_t k = 0; k < w->inbox_len; k++)
            close(w->inbox[k] >> 1);
        free(w->inbox);
        pthread_mutex_destroy(&w->inbox_mu);
        ev_loop_free(w->loop);
        free(w->headers);
        free(w->argv);
    }
    free(s->workers);
    balance_close(&s->balance);
    http_scanners_free(s->env.scanners);   /* before the views: scans hold versions */
    views_close(s->views);
    metrics_free(s->metrics);
    resp_api_env_free(&s->renv);
    clients_free(s->clients);
    free(s);
}
