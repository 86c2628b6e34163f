/* http_metrics.c -- the Prometheus text of GET /metrics: the request
 * metrics (metrics.h), then block cache, views, row cache and process
 * gauges read at the time of the request.
 */
#include "serving/http_metrics.h"

#include "serving/ev.h"

#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


static long
http_metrics_open_fds(void)
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
http_metrics_rss_bytes(void)
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
http_metrics_printf(kbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append the formatted text to b, whatever its length. */
static void
http_metrics_printf(kbuf *b, const char *fmt, ...)
{
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n > 0) {
        buf_reserve(b, (size_t)n + 1);
        vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, again);
        b->len += (size_t)n;
    }
    va_end(again);
}

/* The speed layer's counters: the log's, and per table its writes, flushes,
 * memstore bytes, last sequence number and read point. */
static void
http_metrics_speed(kbuf *b, kiln_speed *sp, const views_table_info *infos, size_t n)
{
    wal_counters w;
    speed_wal_stats(sp, &w);
    http_metrics_printf(b,
                    "# HELP kiln_wal_appends_total Records appended to the write-ahead log.\n"
                    "# TYPE kiln_wal_appends_total counter\nkiln_wal_appends_total %llu\n"
                    "# HELP kiln_wal_syncs_total Group writes of the log ended by an fsync.\n"
                    "# TYPE kiln_wal_syncs_total counter\nkiln_wal_syncs_total %llu\n"
                    "# HELP kiln_wal_synced_records_total Records those fsyncs made durable.\n"
                    "# TYPE kiln_wal_synced_records_total counter\n"
                    "kiln_wal_synced_records_total %llu\n"
                    "# HELP kiln_wal_max_group Most records one fsync made durable.\n"
                    "# TYPE kiln_wal_max_group gauge\nkiln_wal_max_group %llu\n"
                    "# HELP kiln_wal_files Log files in the data directory's wal/.\n"
                    "# TYPE kiln_wal_files gauge\nkiln_wal_files %llu\n"
                    "# HELP kiln_wal_failed 1 once a log write or fsync failed (writes refused).\n"
                    "# TYPE kiln_wal_failed gauge\nkiln_wal_failed %d\n",
                    (unsigned long long)w.appends, (unsigned long long)w.syncs,
                    (unsigned long long)w.synced_records, (unsigned long long)w.max_group,
                    (unsigned long long)w.files, w.failed);
    static const char *const names[] = {"kiln_online_writes_total", "kiln_flushes_total",
                                        "kiln_memstore_bytes", "kiln_write_sequence",
                                        "kiln_read_point"};
    static const char *const help[] = {
        "counter Online writes applied, per table.",
        "counter Memstore flushes published, per table.",
        "gauge Bytes of the memstores, per table.",
        "gauge The last write sequence number handed out, per table.",
        "gauge The last write sequence number readers see, per table.",
    };
    speed_table_stats *st = kiln_calloc(n ? n : 1, sizeof *st);
    int *have = kiln_calloc(n ? n : 1, sizeof *have);
    for (size_t i = 0; i < n; i++) {
        kiln_err err;
        status_clear(&err);
        have[i] = speed_table_stats_get(sp, infos[i].name, &st[i], &err) == KILN_OK;
    }
    for (size_t m = 0; m < sizeof names / sizeof names[0]; m++) {
        const char *sp_at = strchr(help[m], ' ');
        http_metrics_printf(b, "# HELP %s %s\n# TYPE %s %.*s\n", names[m], sp_at + 1, names[m],
                            (int)(sp_at - help[m]), help[m]);
        for (size_t i = 0; i < n; i++) {
            if (!have[i])
                continue;
            uint64_t v = m == 0   ? st[i].writes
                         : m == 1 ? st[i].flushes
                         : m == 2 ? st[i].memstore_bytes
                         : m == 3 ? st[i].seq
                                  : st[i].read_point;
            http_metrics_printf(b, "%s{table=\"%s\"} %llu\n", names[m], infos[i].name,
                                (unsigned long long)v);
        }
    }
    free(st);
    free(have);
}

/* The gauges and counters kept per table (views_table_info), one family
 * each: a field, and how its value is written. */
enum { TABLE_U64, TABLE_MS_AS_S, TABLE_NONEMPTY };
static const struct {
    const char *name, *type, *help;
    size_t off;
    int kind;
} table_metrics[] = {
    {"kiln_view_version", "gauge", "The view version served, per table.",
     offsetof(views_table_info, version), TABLE_U64},
    {"kiln_view_swaps_total", "counter", "Versions swapped in while serving.",
     offsetof(views_table_info, swaps), TABLE_U64},
    {"kiln_view_warm_seconds", "gauge", "Time the last swap spent warming.",
     offsetof(views_table_info, last_warm_ms), TABLE_MS_AS_S},
    {"kiln_view_page_bytes", "gauge",
     "Bytes of file pages the last swap read into the page cache before serving.",
     offsetof(views_table_info, last_page_bytes), TABLE_U64},
    {"kiln_view_prefetch_bytes", "gauge",
     "Bytes of blocks the last swap read into the block cache before serving.",
     offsetof(views_table_info, last_prefetch_bytes), TABLE_U64},
    {"kiln_view_open_error", "gauge", "1 while the current version of a table cannot be opened.",
     offsetof(views_table_info, error), TABLE_NONEMPTY},
};

static void
http_metrics_tables(kbuf *b, const views_table_info *infos, size_t n)
{
    for (size_t m = 0; m < sizeof table_metrics / sizeof table_metrics[0]; m++) {
        const char *name = table_metrics[m].name;
        http_metrics_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, table_metrics[m].help, name,
                            table_metrics[m].type);
        for (size_t i = 0; i < n; i++) {
            const char *field = (const char *)&infos[i] + table_metrics[m].off;
            http_metrics_printf(b, "%s{table=\"%s\"} ", name, infos[i].name);
            switch (table_metrics[m].kind) {
            case TABLE_U64: {
                uint64_t u;
                memcpy(&u, field, sizeof u);
                http_metrics_printf(b, "%llu\n", (unsigned long long)u);
                break;
            }
            case TABLE_MS_AS_S: {
                double ms;
                memcpy(&ms, field, sizeof ms);
                http_metrics_printf(b, "%.6f\n", ms / 1e3);
                break;
            }
            default:
                http_metrics_printf(b, "%d\n", field[0] != '\0');
            }
        }
    }
}

void
http_metrics_render(http_api *a, http_api_reply *out)
{
    kbuf *b = &a->body;
    out->content_type = "text/plain; version=0.0.4; charset=utf-8";
    metrics_render(a->env->metrics, b);
    block_cache_stats bs;
    block_cache_get_stats(views_block_cache(a->env->views), &bs);
    double bt = (double)(bs.hits + bs.misses);
    http_metrics_printf(b,
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
    http_metrics_printf(b,
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
    http_metrics_tables(b, infos, n);
    kiln_speed *sp = views_speed(a->env->views);
    if (sp != NULL)
        http_metrics_speed(b, sp, infos, n);
    free(infos);
    views_rowcache_totals(a->reader, &tot);
    double rt = (double)(tot.hits + tot.misses);
    http_metrics_printf(b,
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
                    "kiln_row_cache_capacity_bytes %llu\n"
                    "# HELP kiln_row_cache_spare_bytes Memory kept from retired row caches "
                    "for the next ones (within the budget).\n"
                    "# TYPE kiln_row_cache_spare_bytes gauge\n"
                    "kiln_row_cache_spare_bytes %llu\n"
                    "# HELP kiln_row_cache_mapped_bytes Memory mapped for the entries of the "
                    "row caches of the versions served.\n"
                    "# TYPE kiln_row_cache_mapped_bytes gauge\n"
                    "kiln_row_cache_mapped_bytes %llu\n",
                    (unsigned long long)tot.hits, (unsigned long long)tot.misses,
                    rt > 0 ? (double)tot.hits / rt : 0.0,
                    (unsigned long long)rowcache_pool_used(views_rowcache_pool(a->env->views)),
                    (unsigned long long)rowcache_pool_capacity(
                        views_rowcache_pool(a->env->views)),
                    (unsigned long long)rowcache_pool_spare_bytes(
                        views_rowcache_pool(a->env->views)),
                    (unsigned long long)tot.mapped);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    http_metrics_printf(b,
                    "# HELP kiln_open_files Open file descriptors of the process.\n"
                    "# TYPE kiln_open_files gauge\nkiln_open_files %ld\n"
                    "# HELP kiln_process_resident_bytes Resident memory of the process.\n"
                    "# TYPE kiln_process_resident_bytes gauge\n"
                    "kiln_process_resident_bytes %ld\n"
                    "# HELP kiln_uptime_seconds Seconds since the server started.\n"
                    "# TYPE kiln_uptime_seconds gauge\nkiln_uptime_seconds %.3f\n"
                    "# HELP kiln_worker_threads Worker threads.\n"
                    "# TYPE kiln_worker_threads gauge\nkiln_worker_threads %d\n",
                    http_metrics_open_fds(), http_metrics_rss_bytes(),
                    (double)(now_ms - a->env->started_ms) / 1e3, a->env->threads);
    if (a->env->poll_stats != NULL) {
        ev_poll_stats ps;
        a->env->poll_stats(a->env->poll_stats_arg, &ps);
        http_metrics_printf(b,
                        "# HELP kiln_busy_poll_turns_total Worker loop turns with busy "
                        "polling on, by how their events came: found by polling, or after "
                        "sleeping.\n# TYPE kiln_busy_poll_turns_total counter\n"
                        "kiln_busy_poll_turns_total{found=\"poll\"} %llu\n"
                        "kiln_busy_poll_turns_total{found=\"sleep\"} %llu\n"
                        "# HELP kiln_busy_poll_backoffs_total Times busy polling stopped "
                        "for a second, its worker waiting for a core.\n"
                        "# TYPE kiln_busy_poll_backoffs_total counter\n"
                        "kiln_busy_poll_backoffs_total %llu\n",
                        (unsigned long long)ps.polled, (unsigned long long)ps.slept,
                        (unsigned long long)ps.backoffs);
    }
    if (a->env->worker_stats != NULL) {
        http_worker_stats ws;
        a->env->worker_stats(a->env->worker_stats_arg, &ws);
        http_metrics_printf(b,
                        "# HELP kiln_workers_active Worker threads taking connections; the "
                        "others are parked.\n# TYPE kiln_workers_active gauge\n"
                        "kiln_workers_active %d\n"
                        "# HELP kiln_workers_busy The active workers' busy part of the last "
                        "100 ms, summed (1 = one core's worth).\n"
                        "# TYPE kiln_workers_busy gauge\nkiln_workers_busy %.3f\n"
                        "# HELP kiln_connections_moved_total Connections handed from one "
                        "worker to another.\n# TYPE kiln_connections_moved_total counter\n"
                        "kiln_connections_moved_total %llu\n"
                        "# HELP kiln_connections_away Connections on another worker than the "
                        "one serving their client's CPU (balance kept them there).\n"
                        "# TYPE kiln_connections_away gauge\nkiln_connections_away %d\n",
                        ws.active, ws.busy, (unsigned long long)ws.moved, ws.away);
    }
}
