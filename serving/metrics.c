/* metrics.c -- per-thread counters and histograms summed on demand
 * (metrics.h). A counter is a C11 atomic written by one thread with a
 * relaxed load and store (a plain add, no locked instruction) and read by
 * others with relaxed loads, so scrapes never stall a worker. Status codes
 * are folded into a small fixed set of label values.
 */
#include "serving/metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define METRICS_LOCALS_MAX 256
#define METRICS_HISTORY 61

static const int metrics_codes[] = {200, 204, 400, 404, 405, 406, 408, 413,
                                    414, 431, 500, 501, 503, 505, 0};
#define METRICS_NCODES (sizeof metrics_codes / sizeof metrics_codes[0])

/* Upper bounds of the latency buckets, in microseconds. */
static const uint64_t metrics_bounds_us[METRICS_BUCKETS - 1] = {
    25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000,
    100000, 250000, 500000, 1000000, 2500000};

static const char *const metrics_route_names[ROUTE_COUNT_ALL] = {
    "tables", "version", "schema", "regions", "row", "multiget", "scan", "count", "metrics",
    "healthz", "status", "scanner", "write", "other", "resp_get", "resp_mget", "resp_exists",
    "resp_ping", "resp_info", "resp_write", "resp_other"};

typedef _Atomic uint64_t metrics_counter;

struct metrics_local {
    metrics_counter codes[ROUTE_COUNT_ALL][METRICS_NCODES];
    metrics_counter buckets[ROUTE_COUNT_ALL][METRICS_BUCKETS];
    metrics_counter sum_ns[ROUTE_COUNT_ALL];
    _Atomic int64_t conns;
    metrics_counter accepted, bytes_in, bytes_out;
};

struct metrics {
    pthread_mutex_t mu;
    metrics_local *locals[METRICS_LOCALS_MAX];
    _Atomic size_t nlocals;
    /* per-second totals by route, a ring of METRICS_HISTORY ticks */
    uint64_t hist[METRICS_HISTORY][ROUTE_COUNT_ALL];
    double hist_t[METRICS_HISTORY];
    size_t hist_next, hist_count;
    /* corruption met, by (protocol, table); under mu */
    struct {
        char table[128];
        int resp;
        uint64_t n;
    } corrupt[METRICS_CORRUPTION_SERIES + 2];
    size_t ncorrupt;
};

static inline void
metrics_inc(metrics_counter *c, uint64_t by)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + by,
                          memory_order_relaxed);
}

static inline uint64_t
metrics_load(metrics_counter *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

metrics *
metrics_new(void)
{
    metrics *m = kiln_calloc(1, sizeof *m);
    pthread_mutex_init(&m->mu, NULL);
    atomic_init(&m->nlocals, 0);
    return m;
}

void
metrics_free(metrics *m)
{
    if (m == NULL)
        return;
    size_t n = atomic_load(&m->nlocals);
    for (size_t i = 0; i < n; i++)
        free(m->locals[i]);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

metrics_local *
metrics_local_new(metrics *m)
{
    metrics_local *l = kiln_calloc(1, sizeof *l);
    pthread_mutex_lock(&m->mu);
    size_t n = atomic_load(&m->nlocals);
    if (n < METRICS_LOCALS_MAX) {
        m->locals[n] = l;
        atomic_store(&m->nlocals, n + 1);
    }
    pthread_mutex_unlock(&m->mu);
    if (n >= METRICS_LOCALS_MAX) {
        free(l);
        return NULL;
    }
    return l;
}

static size_t
metrics_code_index(int status)
{
    for (size_t i = 0; i + 1 < METRICS_NCODES; i++) {
        if (metrics_codes[i] == status)
            return i;
    }
    return METRICS_NCODES - 1;
}

void
metrics_observe(metrics_local *l, metrics_route route, int status, uint64_t ns)
{
    if (l == NULL || (unsigned)route >= ROUTE_COUNT_ALL)
        return;
    metrics_inc(&l->codes[route][metrics_code_index(status)], 1);
    uint64_t us = ns / 1000;
    size_t b = 0;
    while (b < METRICS_BUCKETS - 1 && us > metrics_bounds_us[b])
        b++;
    metrics_inc(&l->buckets[route][b], 1);
    metrics_inc(&l->sum_ns[route], ns);
}

void
metrics_corruption(metrics *m, int resp, const char *table)
{
    if (m == NULL)
        return;
    char name[128];
    snprintf(name, sizeof name, "%s", table != NULL && table[0] != '\0' ? table : "unknown");
    /* Label values are quoted in the text format: keep them plain. */
    for (char *p = name; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
            *p = '_';
    }
    resp = resp != 0;
    pthread_mutex_lock(&m->mu);
    size_t i;
    for (i = 0; i < m->ncorrupt; i++) {
        if (m->corrupt[i].resp == resp && strcmp(m->corrupt[i].table, name) == 0)
            break;
    }
    if (i == m->ncorrupt && i >= METRICS_CORRUPTION_SERIES) {
        snprintf(name, sizeof name, "other");
        for (i = METRICS_CORRUPTION_SERIES; i < m->ncorrupt; i++) {
            if (m->corrupt[i].resp == resp)
                break;
        }
    }
    if (i == m->ncorrupt) {
        snprintf(m->corrupt[i].table, sizeof m->corrupt[i].table, "%s", name);
        m->corrupt[i].resp = resp;
        m->corrupt[i].n = 0;
        m->ncorrupt++;
    }
    m->corrupt[i].n++;
    pthread_mutex_unlock(&m->mu);
}

uint64_t
metrics_corruptions(metrics *m)
{
    uint64_t t = 0;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->ncorrupt; i++)
        t += m->corrupt[i].n;
    pthread_mutex_unlock(&m->mu);
    return t;
}

void
metrics_conn(metrics_local *l, int delta)
{
    if (l == NULL)
        return;
    atomic_store_explicit(&l->conns,
                          atomic_load_explicit(&l->conns, memory_order_relaxed) + delta,
                          memory_order_relaxed);
    if (delta > 0)
        metrics_inc(&l->accepted, (uint64_t)delta);
}

void
metrics_bytes(metrics_local *l, uint64_t in, uint64_t out)
{
    if (l == NULL)
        return;
    if (in)
        metrics_inc(&l->bytes_in, in);
    if (out)
        metrics_inc(&l->bytes_out, out);
}

const char *
metrics_route_name(metrics_route r)
{
    return (unsigned)r < ROUTE_COUNT_ALL ? metrics_route_names[r] : "?";
}

uint64_t
metrics_requests(metrics *m, metrics_route r)
{
    uint64_t t = 0;
    size_t n = atomic_load(&m->nlocals);
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < METRICS_NCODES; k++)
            t += metrics_load(&m->locals[i]->codes[r][k]);
    }
    return t;
}

int64_t
metrics_connections(metrics *m)
{
    int64_t t = 0;
    size_t n = atomic_load(&m->nlocals);
    for (size_t i = 0; i < n; i++)
        t += atomic_load_explicit(&m->locals[i]->conns, memory_order_relaxed);
    return t;
}

static double
metrics_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void
metrics_tick(metrics *m)
{
    uint64_t now[ROUTE_COUNT_ALL];
    for (int r = 0; r < ROUTE_COUNT_ALL; r++)
        now[r] = metrics_requests(m, (metrics_route)r);
    double t = metrics_now_s();
    pthread_mutex_lock(&m->mu);
    memcpy(m->hist[m->hist_next], now, sizeof now);
    m->hist_t[m->hist_next] = t;
    m->hist_next = (m->hist_next + 1) % METRICS_HISTORY;
    if (m->hist_count < METRICS_HISTORY)
        m->hist_count++;
    pthread_mutex_unlock(&m->mu);
}

double
metrics_rate(metrics *m, metrics_route r, int secs)
{
    if (secs < 1)
        secs = 1;
    if (secs > METRICS_HISTORY - 1)
        secs = METRICS_HISTORY - 1;
    double rate = 0;
    pthread_mutex_lock(&m->mu);
    if (m->hist_count >= 2) {
        size_t newest = (m->hist_next + METRICS_HISTORY - 1) % METRICS_HISTORY;
        size_t back = (size_t)secs < m->hist_count - 1 ? (size_t)secs : m->hist_count - 1;
        size_t oldest = (newest + METRICS_HISTORY - back) % METRICS_HISTORY;
        double dt = m->hist_t[newest] - m->hist_t[oldest];
        if (dt > 0)
            rate = (double)(m->hist[newest][r] - m->hist[oldest][r]) / dt;
    }
    pthread_mutex_unlock(&m->mu);
    return rate;
}

void
metrics_render(metrics *m, kbuf *out)
{
    char line[512];
    size_t n = atomic_load(&m->nlocals);
    const char *hdr =
        "# HELP kiln_http_requests_total HTTP requests by route and status code.\n"
        "# TYPE kiln_http_requests_total counter\n";
    buf_append(out, hdr, strlen(hdr));
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            hdr = "# HELP kiln_resp_commands_total Redis-protocol commands by command and "
                  "outcome.\n# TYPE kiln_resp_commands_total counter\n";
            buf_append(out, hdr, strlen(hdr));
        }
        int lo = pass == 0 ? 0 : METRICS_FIRST_RESP, hi = pass == 0 ? METRICS_FIRST_RESP
                                                                     : ROUTE_COUNT_ALL;
        for (int r = lo; r < hi; r++) {
            for (size_t k = 0; k < METRICS_NCODES; k++) {
                uint64_t t = 0;
                for (size_t i = 0; i < n; i++)
                    t += metrics_load(&m->locals[i]->codes[r][k]);
                if (t == 0 && k != 0)
                    continue;
                int len;
                if (pass == 0) {
                    char code[16];
                    if (metrics_codes[k] != 0)
                        snprintf(code, sizeof code, "%d", metrics_codes[k]);
                    else
                        snprintf(code, sizeof code, "other");
                    len = snprintf(line, sizeof line,
                                   "kiln_http_requests_total{route=\"%s\",code=\"%s\"} %llu\n",
                                   metrics_route_names[r], code, (unsigned long long)t);
                } else {
                    len = snprintf(line, sizeof line,
                                   "kiln_resp_commands_total{command=\"%s\",outcome=\"%s\"} "
                                   "%llu\n", metrics_route_names[r] + 5,
                                   metrics_codes[k] == 200   ? "ok"
                                   : metrics_codes[k] >= 500 ? "server_error"
                                                             : "error",
                                   (unsigned long long)t);
                }
                buf_append(out, line, (size_t)len);
            }
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        const char *name = pass == 0 ? "kiln_http_request_duration_seconds"
                                     : "kiln_resp_command_duration_seconds";
        int len = snprintf(line, sizeof line,
                           "# HELP %s Time from a complete request to its response.\n"
                           "# TYPE %s histogram\n", name, name);
        buf_append(out, line, (size_t)len);
        int lo = pass == 0 ? 0 : METRICS_FIRST_RESP, hi = pass == 0 ? METRICS_FIRST_RESP
                                                                     : ROUTE_COUNT_ALL;
        for (int r = lo; r < hi; r++) {
            const char *label = pass == 0 ? "route" : "command";
            const char *rn = pass == 0 ? metrics_route_names[r] : metrics_route_names[r] + 5;
            uint64_t cum = 0, sum = 0;
            for (size_t i = 0; i < n; i++)
                sum += metrics_load(&m->locals[i]->sum_ns[r]);
            for (size_t b = 0; b < METRICS_BUCKETS; b++) {
                for (size_t i = 0; i < n; i++)
                    cum += metrics_load(&m->locals[i]->buckets[r][b]);
                char le[32];
                if (b < METRICS_BUCKETS - 1)
                    snprintf(le, sizeof le, "%g", (double)metrics_bounds_us[b] / 1e6);
                else
                    snprintf(le, sizeof le, "+Inf");
                len = snprintf(line, sizeof line, "%s_bucket{%s=\"%s\",le=\"%s\"} %llu\n", name,
                               label, rn, le, (unsigned long long)cum);
                buf_append(out, line, (size_t)len);
            }
            len = snprintf(line, sizeof line, "%s_sum{%s=\"%s\"} %.9f\n%s_count{%s=\"%s\"} %llu\n",
                           name, label, rn, (double)sum / 1e9, name, label, rn,
                           (unsigned long long)cum);
            buf_append(out, line, (size_t)len);
        }
    }
    uint64_t acc = 0, bin = 0, bout = 0;
    for (size_t i = 0; i < n; i++) {
        acc += metrics_load(&m->locals[i]->accepted);
        bin += metrics_load(&m->locals[i]->bytes_in);
        bout += metrics_load(&m->locals[i]->bytes_out);
    }
    int len = snprintf(line, sizeof line,
                       "# HELP kiln_connections Open client connections.\n"
                       "# TYPE kiln_connections gauge\nkiln_connections %lld\n"
                       "# HELP kiln_connections_accepted_total Connections accepted.\n"
                       "# TYPE kiln_connections_accepted_total counter\n"
                       "kiln_connections_accepted_total %llu\n",
                       (long long)metrics_connections(m), (unsigned long long)acc);
    buf_append(out, line, (size_t)len);
    len = snprintf(line, sizeof line,
                   "# HELP kiln_network_bytes_total Bytes received and sent.\n"
                   "# TYPE kiln_network_bytes_total counter\n"
                   "kiln_network_bytes_total{direction=\"in\"} %llu\n"
                   "kiln_network_bytes_total{direction=\"out\"} %llu\n",
                   (unsigned long long)bin, (unsigned long long)bout);
    buf_append(out, line, (size_t)len);
    hdr = "# HELP kiln_read_corruption_total Requests that met a corrupt block or file, by "
          "protocol and table.\n# TYPE kiln_read_corruption_total counter\n";
    buf_append(out, hdr, strlen(hdr));
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->ncorrupt; i++) {
        len = snprintf(line, sizeof line,
                       "kiln_read_corruption_total{proto=\"%s\",table=\"%s\"} %llu\n",
                       m->corrupt[i].resp ? "resp" : "http", m->corrupt[i].table,
                       (unsigned long long)m->corrupt[i].n);
        buf_append(out, line, (size_t)len);
    }
    pthread_mutex_unlock(&m->mu);
}
