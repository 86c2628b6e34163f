/* status_page.c -- GET /status (status_page.h). Every string that comes
 * from the data (table names, keys, sources) is HTML-escaped; keys are shown
 * in HBase's printable form. The kept view versions are read from the
 * table's manifests on each request: the page is for people, not for the
 * hot path.
 */
#include "serving/status_page.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serving/metrics.h"
#include "storage/base/block_cache.h"
#include "storage/hfile/cell.h"
#include "storage/store/manifest.h"
#include "storage/store/table.h"

static void
status_page_printf(kbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
status_page_printf(kbuf *b, const char *fmt, ...)
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
status_page_lit(kbuf *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

static void
status_page_esc(kbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '<': status_page_lit(b, "&lt;"); break;
        case '>': status_page_lit(b, "&gt;"); break;
        case '&': status_page_lit(b, "&amp;"); break;
        case '"': status_page_lit(b, "&quot;"); break;
        case '\'': status_page_lit(b, "&#39;"); break;
        default: buf_append_u8(b, (uint8_t)s[i]); break;
        }
    }
}

static void
status_page_str(kbuf *b, const char *s)
{
    status_page_esc(b, s, strlen(s));
}

/* A key in printable form, escaped; "(unbounded)" when empty. */
static void
status_page_key(kbuf *b, kslice k, kbuf *tmp)
{
    if (k.n == 0) {
        status_page_lit(b, "<i>(unbounded)</i>");
        return;
    }
    buf_reset(tmp);
    cell_to_string_binary(tmp, k.p, k.n < 256 ? k.n : 256);
    status_page_esc(b, (const char *)tmp->data, tmp->len);
    if (k.n > 256)
        status_page_lit(b, "&hellip;");
}

static void
status_page_time(int64_t ms, char *out, size_t cap)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(out, cap, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(out + n, cap - n, ".%03d UTC", (int)(ms % 1000));
}

static void
status_page_bytes(uint64_t v, char *out, size_t cap)
{
    if (v >= (1ull << 30))
        snprintf(out, cap, "%.2f GiB", (double)v / (double)(1ull << 30));
    else if (v >= (1ull << 20))
        snprintf(out, cap, "%.2f MiB", (double)v / (double)(1ull << 20));
    else if (v >= 1024)
        snprintf(out, cap, "%.1f KiB", (double)v / 1024.0);
    else
        snprintf(out, cap, "%llu B", (unsigned long long)v);
}

static const char status_page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "<title>kiln-server status</title>\n<style>\n"
    "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\n"
    "table{border-collapse:collapse;margin:.5em 0 1.2em}\n"
    "th,td{border:1px solid #ccc;padding:.2em .6em;text-align:left;font-size:.9em}\n"
    "th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "code{font-size:.95em}.err{color:#b00}h2{margin-top:1.5em}\n"
    "</style></head>\n<body>\n";

/* Kept versions of a table from its manifests. */
static void
status_page_versions(kbuf *b, const char *data_dir, const char *name, uint64_t served)
{
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    if (table_open(data_dir, name, &t, &err) != KILN_OK) {
        status_page_lit(b, "<p class=\"err\">");
        status_page_str(b, err.msg);
        status_page_lit(b, "</p>\n");
        return;
    }
    manifest_pointer cur = {0, 0};
    kiln_err e2;
    status_clear(&e2);
    (void)table_current(t, &cur, &e2);
    uint64_t *vs = NULL;
    size_t nv = 0;
    status_clear(&err);
    if (table_versions(t, &vs, &nv, &err) != KILN_OK) {
        table_close(t);
        return;
    }
    status_page_printf(b, "<table class=\"versions\"><tr><th>version</th><th>state</th>"
                          "<th>created</th><th>kind</th><th>parent</th><th>files</th>"
                          "<th>bytes</th><th>source</th></tr>\n");
    for (size_t i = nv; i-- > 0;) {
        manifest m;
        status_clear(&e2);
        if (table_read_manifest(t, vs[i], &m, NULL, &e2) != KILN_OK)
            continue;
        char when[48], bytes[32];
        status_page_time(m.created_ms, when, sizeof when);
        status_page_bytes(manifest_total_bytes(&m), bytes, sizeof bytes);
        const char *state = m.version == served   ? "served"
                            : m.version == cur.version ? "current on disk"
                                                       : "kept";
        status_page_printf(b,
                           "<tr><td class=\"n\">%llu</td><td>%s</td><td>%s</td><td>%s</td>"
                           "<td class=\"n\">%llu</td><td class=\"n\">%llu</td>"
                           "<td class=\"n\">%s</td><td><code>",
                           (unsigned long long)m.version, state, when,
                           m.kind == MANIFEST_KIND_APPEND ? "append" : "replace",
                           (unsigned long long)m.parent,
                           (unsigned long long)manifest_file_count(&m), bytes);
        for (size_t k = 0; k < m.source_count; k++) {
            if (m.sources[k].version == m.version && m.sources[k].path != NULL)
                status_page_str(b, m.sources[k].path);
        }
        status_page_lit(b, "</code></td></tr>\n");
        manifest_free(&m);
    }
    status_page_lit(b, "</table>\n");
    free(vs);
    table_close(t);
}

static void
status_page_table(kbuf *b, const http_api_env *env, views_entry *e, const views_table_info *info,
                  kbuf *tmp)
{
    store_view *v = views_entry_view(e);
    const char *name = views_entry_name(e);
    status_page_lit(b, "<h2 class=\"table\" id=\"t-");
    status_page_str(b, name);
    status_page_lit(b, "\">Table ");
    status_page_str(b, name);
    status_page_lit(b, "</h2>\n");
    char when[48] = "-";
    if (info != NULL && info->opened_ms > 0)
        status_page_time(info->opened_ms, when, sizeof when);
    status_page_printf(b,
                       "<p>Served version <b class=\"version\">%llu</b>%s; since %s; swaps while "
                       "serving: %llu",
                       (unsigned long long)views_entry_version(e),
                       views_entry_version(e) == 0 ? " (nothing loaded yet)" : "", when,
                       (unsigned long long)(info ? info->swaps : 0));
    if (info != NULL && info->swaps > 0)
        status_page_printf(b, "; last swap: opened in %.1f ms, %llu hot rows warmed in %.1f ms",
                           info->last_open_ms, (unsigned long long)info->last_warm_rows,
                           info->last_warm_ms);
    status_page_lit(b, "</p>\n");
    if (info != NULL && info->error[0] != '\0') {
        status_page_lit(b, "<p class=\"err\">Newer version not served: ");
        status_page_str(b, info->error);
        status_page_lit(b, "</p>\n");
    }
    const kiln_schema *s = store_view_schema(v);
    status_page_lit(b, "<p>Families: ");
    for (size_t i = 0; i < s->family_count; i++) {
        const schema_family *f = &s->families[i];
        if (i)
            status_page_lit(b, ", ");
        status_page_lit(b, "<code>");
        status_page_str(b, f->name);
        status_page_printf(b, "</code> (versions %u, %s, bloom %s, block %u)", f->max_versions,
                           compress_codec_name(f->codec), bloom_type_name(f->bloom),
                           f->block_size);
    }
    status_page_lit(b, "</p>\n<h3>Regions</h3>\n");
    status_page_printf(b, "<table class=\"regions\"><tr><th>region</th><th>start key</th>"
                          "<th>end key</th><th>files</th><th>bytes</th></tr>\n");
    for (size_t i = 0; i < store_view_region_count(v); i++) {
        size_t files;
        char bytes[32];
        status_page_bytes(store_view_region_bytes(v, i, &files), bytes, sizeof bytes);
        status_page_printf(b, "<tr><td class=\"n\">%zu</td><td><code>", i);
        status_page_key(b, store_view_region_start(v, i), tmp);
        status_page_lit(b, "</code></td><td><code>");
        status_page_key(b, store_view_region_end(v, i), tmp);
        status_page_printf(b, "</code></td><td class=\"n\">%zu</td><td class=\"n\">%s</td></tr>\n",
                           files, bytes);
    }
    status_page_lit(b, "</table>\n");
    const manifest *m = store_view_manifest(v);
    status_page_lit(b, "<h3>Store files</h3>\n");
    if (m == NULL || m->table_count == 0) {
        status_page_lit(b, "<p>none</p>\n");
    } else {
        status_page_printf(b, "<table class=\"files\"><tr><th>region</th><th>family</th>"
                              "<th>file</th><th>bytes</th><th>cells</th><th>loaded by</th>"
                              "</tr>\n");
        const manifest_table *mt = &m->tables[0];
        for (size_t r = 0; r < mt->region_count; r++) {
            for (size_t k = 0; k < mt->regions[r].file_count; k++) {
                const manifest_file *f = &mt->regions[r].files[k];
                char bytes[32];
                status_page_bytes(f->size, bytes, sizeof bytes);
                status_page_printf(b, "<tr><td class=\"n\">%zu</td><td>", r);
                status_page_str(b, f->family);
                status_page_lit(b, "</td><td><code>");
                status_page_str(b, f->name);
                status_page_printf(b,
                                   "</code></td><td class=\"n\">%s</td><td class=\"n\">%llu</td>"
                                   "<td class=\"n\">version %llu</td></tr>\n",
                                   bytes, (unsigned long long)f->entries,
                                   (unsigned long long)f->seq);
            }
        }
        status_page_lit(b, "</table>\n");
    }
    status_page_lit(b, "<h3>View versions</h3>\n");
    status_page_versions(b, views_data_dir(env->views), name, views_entry_version(e));
}

void
status_page_render(const http_api_env *env, views_reader *r, kbuf *out)
{
    kbuf tmp = KBUF_INIT;
    buf_append(out, status_page_head, sizeof status_page_head - 1);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    char started[48], bc[32], bcap[32], rc[32], rcap[32];
    status_page_time(env->started_ms, started, sizeof started);
    block_cache_stats bs;
    block_cache_get_stats(views_block_cache(env->views), &bs);
    status_page_bytes(bs.bytes_used, bc, sizeof bc);
    status_page_bytes(bs.capacity, bcap, sizeof bcap);
    rowcache_pool *pool = views_rowcache_pool(env->views);
    status_page_bytes(rowcache_pool_used(pool), rc, sizeof rc);
    status_page_bytes(rowcache_pool_capacity(pool), rcap, sizeof rcap);
    double hits = (double)bs.hits, all = (double)(bs.hits + bs.misses);
    status_page_printf(out, "<h1>kiln-server %s</h1>\n<p>Data directory <code>", KILN_VERSION);
    status_page_str(out, views_data_dir(env->views));
    status_page_printf(out, "</code>; HTTP on <code>%s</code>", env->listen);
    if (env->resp_listen[0] != '\0')
        status_page_printf(out, ", Redis protocol on <code>%s</code>", env->resp_listen);
    status_page_printf(out,
                       "; %d worker threads; started %s (up %.0f s); %lld open connections.</p>\n"
                       "<p>Block cache %s of %s (hit ratio %.4f); row cache %s of %s.</p>\n",
                       env->threads, started, (double)(now_ms - env->started_ms) / 1e3,
                       (long long)metrics_connections(env->metrics), bc, bcap,
                       all > 0 ? hits / all : 0.0, rc, rcap);
    status_page_lit(out, "<h2>Requests</h2>\n");
    status_page_printf(out, "<table class=\"requests\"><tr><th>route</th><th>requests</th>"
                            "<th>per second (10 s)</th><th>per second (60 s)</th></tr>\n");
    for (int i = 0; i < ROUTE_COUNT_ALL; i++) {
        uint64_t n = metrics_requests(env->metrics, (metrics_route)i);
        status_page_printf(out,
                           "<tr><td>%s</td><td class=\"n\">%llu</td><td class=\"n\">%.1f</td>"
                           "<td class=\"n\">%.1f</td></tr>\n",
                           metrics_route_name((metrics_route)i), (unsigned long long)n,
                           metrics_rate(env->metrics, (metrics_route)i, 10),
                           metrics_rate(env->metrics, (metrics_route)i, 60));
    }
    status_page_lit(out, "</table>\n");
    views_table_info *infos;
    size_t ninfo = views_table_infos(env->views, &infos);
    size_t nt = views_reader_count(r);
    status_page_printf(out, "<h2>Tables</h2>\n<table class=\"tables\"><tr><th>table</th>"
                            "<th>version</th><th>regions</th><th>families</th></tr>\n");
    for (size_t i = 0; i < nt; i++) {
        views_entry *e = views_reader_at(r, i);
        status_page_lit(out, "<tr><td><a href=\"#t-");
        status_page_str(out, views_entry_name(e));
        status_page_lit(out, "\">");
        status_page_str(out, views_entry_name(e));
        status_page_printf(out, "</a></td><td class=\"n\">%llu</td><td class=\"n\">%zu</td>"
                                "<td class=\"n\">%zu</td></tr>\n",
                           (unsigned long long)views_entry_version(e),
                           store_view_region_count(views_entry_view(e)),
                           views_entry_schema(e)->family_count);
    }
    status_page_lit(out, "</table>\n");
    if (nt == 0)
        status_page_lit(out, "<p>No tables yet: create one with <code>kiln create</code>.</p>\n");
    for (size_t i = 0; i < nt; i++) {
        views_entry *e = views_reader_at(r, i);
        const views_table_info *info = NULL;
        for (size_t k = 0; k < ninfo; k++) {
            if (strcmp(infos[k].name, views_entry_name(e)) == 0)
                info = &infos[k];
        }
        status_page_table(out, env, e, info, &tmp);
    }
    free(infos);
    status_page_lit(out, "</body></html>\n");
    buf_free(&tmp);
}
