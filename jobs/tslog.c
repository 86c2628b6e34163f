/* tslog.c -- log and time-series data: the tslog view job (three tables from
 * one pass) and its input generator.
 *
 *   tslog --input PATH... --output DIR [--data DIR] [--table PREFIX]
 *
 * Input lines: host TAB ts_ms TAB event TAB value (host and event non-empty
 * without NUL, ts >= 0, value a signed 64-bit integer). Writes three tables,
 * PREFIX_bytime, PREFIX_byhost and PREFIX_stats (PREFIX default tslog), in
 * DIR/bytime, DIR/byhost and DIR/stats: `kiln load PREFIX_bytime DIR/bytime`.
 *
 * bytime: every event, salted by the job so that writes in time order spread
 * over B buckets (-D tslog.buckets=B, default 8, 1..256); one region per
 * bucket is the natural split. bucket = FNV-1a 32 of bytes 1.. of the row
 * (ts, host, 0, event) mod B.
 *
 *   OFFSET | SIZE | FIELD
 *   0      | 1    | bucket
 *   1      | 8    | ts, u64 big-endian
 *   9      | var  | host
 *   9+h    | 1    | 0x00
 *   10+h   | var  | event
 *
 * byhost: every event, host first:
 *
 *   OFFSET | SIZE | FIELD
 *   0      | var  | host
 *   h      | 1    | 0x00
 *   h+1    | var  | event
 *   h+1+e  | 1    | 0x00
 *   h+2+e  | 8    | ts, u64 big-endian
 *
 * Both: cell d:v = the value in decimal, timestamp = ts. A line repeating an
 * event (host, event, ts) replaces it: the last line wins.
 *
 * stats: per minute, host and event, over the events as stored (after the
 * last-line rule): s:count, s:max, s:min, s:sum in decimal, timestamp = the
 * minute's first ms.
 *
 *   OFFSET | SIZE | FIELD
 *   0      | 8    | minute start (ts - ts mod 60000), u64 big-endian
 *   8      | var  | host
 *   8+h    | 1    | 0x00
 *   9+h    | var  | event
 *
 * Queries: one host's events in [t1, t2): byhost, per event E, start =
 * host 00 E 00 BE64(t1), stop = host 00 E 00 BE64(t2); all hosts in
 * [t1, t2): bytime, one scan per bucket b from b BE64(t1) to b BE64(t2),
 * merged on ts; a minute's statistics: stats, prefix BE64(minute start).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/jobs_args.h"
#include "jobs/view_common.h"
#include "jobs/view_gen.h"
#include "storage/base/coding.h"

#define TSLOG_FIELDS 4
#define TSLOG_NAME_MAX 255        /* host and event, bytes */
#define TSLOG_BUCKETS_DEFAULT 8
#define TSLOG_MINUTE_MS 60000

enum { TSLOG_BYTIME, TSLOG_BYHOST, TSLOG_STATS, TSLOG_TABLES };

typedef struct tslog_state {
    view *v;
    size_t table[TSLOG_TABLES];
    uint32_t buckets;
    kbuf row;
    kbuf key;
    kbuf last;
} tslog_state;

static void
tslog_state_free(void *p)
{
    tslog_state *st = p;
    if (st == NULL)
        return;
    view_free(st->v);
    buf_free(&st->row);
    buf_free(&st->key);
    buf_free(&st->last);
    free(st);
}

static uint32_t
tslog_fnv1a(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

static kiln_status
tslog_map(mr_task *t, kslice line, kiln_err *err)
{
    tslog_state *st = mr_task_state(t);
    view *v = st->v;
    kslice f[TSLOG_FIELDS];
    kiln_status bad;
    if (!view_fields(v, t, line, f, TSLOG_FIELDS, &bad, err))
        return bad;
    kslice host = f[0], event = f[2];
    int64_t ts, value;
    if (host.n == 0 || host.n > TSLOG_NAME_MAX || !view_text_ok(host))
        return view_bad(v, t, "host is empty, too long or holds a NUL byte", err);
    if (view_parse_i64(f[1], &ts) != 0 || ts < 0)
        return view_bad(v, t, "timestamp is not a number of ms >= 0", err);
    if (event.n == 0 || event.n > TSLOG_NAME_MAX || !view_text_ok(event))
        return view_bad(v, t, "event is empty, too long or holds a NUL byte", err);
    if (view_parse_i64(f[3], &value) != 0)
        return view_bad(v, t, "value is not a 64-bit integer", err);

    uint8_t pos[VIEW_POS];
    view_pos(t, pos);
    char num[24];
    kslice text = view_i64_text(num, value);

    /* bytime: bucket, ts, host, 0, event */
    kbuf *row = &st->row;
    buf_reset(row);
    buf_append_u8(row, 0);
    buf_append_be64(row, (uint64_t)ts);
    buf_append(row, host.p, host.n);
    buf_append_u8(row, 0);
    buf_append(row, event.p, event.n);
    row->data[0] = (uint8_t)(tslog_fnv1a(row->data + 1, row->len - 1) % st->buckets);
    kslice head = kslice_make(pos, VIEW_POS);
    kiln_status s = view_emit(v, t, st->table[TSLOG_BYTIME], buf_slice(row), head, text, err);
    if (s != KILN_OK)
        return s;

    /* byhost: host, 0, event, 0, ts */
    buf_reset(row);
    buf_append(row, host.p, host.n);
    buf_append_u8(row, 0);
    buf_append(row, event.p, event.n);
    buf_append_u8(row, 0);
    buf_append_be64(row, (uint64_t)ts);
    s = view_emit(v, t, st->table[TSLOG_BYHOST], buf_slice(row), head, text, err);
    if (s != KILN_OK)
        return s;

    /* stats: minute, host, 0, event; value ts, position, value */
    buf_reset(row);
    buf_append_be64(row, (uint64_t)(ts - ts % TSLOG_MINUTE_MS));
    buf_append(row, host.p, host.n);
    buf_append_u8(row, 0);
    buf_append(row, event.p, event.n);
    uint8_t sv[8 + VIEW_POS + 8];
    coding_put_be64(sv, (uint64_t)ts);
    memcpy(sv + 8, pos, VIEW_POS);
    coding_put_be64(sv + 8 + VIEW_POS, (uint64_t)value);
    return view_emit(v, t, st->table[TSLOG_STATS], buf_slice(row), kslice_make(sv, sizeof sv),
                     kslice_make(NULL, 0), err);
}

/* Decimal text of a 128-bit sum into buf (at least 41 bytes). */
static kslice
tslog_i128_text(char *buf, __int128 v)
{
    char *p = buf + 41;
    unsigned __int128 u = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    do {
        *--p = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u > 0);
    if (v < 0)
        *--p = '-';
    return kslice_make(p, (size_t)(buf + 41 - p));
}

/* One minute of one host's event: the last value of each ts, folded. */
static kiln_status
tslog_reduce_stats(tslog_state *st, mr_task *t, size_t table, mr_values *values, kiln_err *err)
{
    uint64_t count = 0;
    __int128 sum = 0;
    int64_t min = 0, max = 0, cur = 0, cur_ts = -1;
    kslice val;
    while (mr_task_next_value(values, &val)) {
        if (val.n != 16 + VIEW_POS)
            return status_set(err, KILN_CORRUPTION, "tslog: a statistics value of %zu bytes", val.n);
        int64_t ts = (int64_t)coding_get_be64(val.p);
        int64_t x = (int64_t)coding_get_be64(val.p + 8 + VIEW_POS);
        if (ts != cur_ts && cur_ts >= 0) {
            min = count == 0 || cur < min ? cur : min;
            max = count == 0 || cur > max ? cur : max;
            sum += cur;
            count++;
        }
        cur_ts = ts;
        cur = x;   /* values of one ts come in input order: the last wins */
    }
    if (cur_ts < 0)
        return status_set(err, KILN_CORRUPTION, "tslog: a statistics group without values");
    min = count == 0 || cur < min ? cur : min;
    max = count == 0 || cur > max ? cur : max;
    sum += cur;
    count++;

    kslice row = buf_slice(&st->row);
    int64_t minute = (int64_t)coding_get_be64(row.p);
    char a[24], b[24], c[24], d[41];
    kiln_status s = view_put(st->v, t, table, row, "s", kslice_str("count"), minute,
                             view_i64_text(a, (int64_t)count), err);
    if (s == KILN_OK)
        s = view_put(st->v, t, table, row, "s", kslice_str("max"), minute, view_i64_text(b, max),
                     err);
    if (s == KILN_OK)
        s = view_put(st->v, t, table, row, "s", kslice_str("min"), minute, view_i64_text(c, min),
                     err);
    if (s == KILN_OK)
        s = view_put(st->v, t, table, row, "s", kslice_str("sum"), minute, tslog_i128_text(d, sum),
                     err);
    return s;
}

static kiln_status
tslog_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    tslog_state *st = mr_task_state(t);
    size_t table;
    kiln_status s = view_group(st->v, key, &table, &st->row, err);
    if (s != KILN_OK)
        return s;
    kslice row = buf_slice(&st->row);
    if (row.n < 10)
        return status_set(err, KILN_CORRUPTION, "tslog: a row of %zu bytes", row.n);
    if (table == st->table[TSLOG_STATS])
        return tslog_reduce_stats(st, t, table, values, err);
    uint64_t n;
    s = view_last(st->v, t, values, &st->last, &n, err);
    if (s != KILN_OK)
        return s;
    int64_t ts = (int64_t)coding_get_be64(table == st->table[TSLOG_BYTIME] ? row.p + 1
                                                                           : row.p + row.n - 8);
    return view_put(st->v, t, table, row, "d", kslice_str("v"), ts, buf_slice(&st->last), err);
}

static kiln_status
tslog_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    tslog_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, tslog_state_free);
    st->v = view_new(job, "tslog");
    const char *prefix = "tslog";
    kiln_status s = KILN_OK;
    for (int i = 1; i < argc && s == KILN_OK; i++) {
        if (view_common_arg(st->v, argc, argv, &i, &s, err))
            continue;
        if (strcmp(argv[i], "--table") == 0)
            s = jobs_take_value(argc, argv, &i, &prefix, err);
        else
            s = status_set(err, KILN_INVALID, "tslog: unknown argument '%s'", argv[i]);
    }
    int64_t buckets = 0;
    if (s == KILN_OK)
        s = mr_conf_get_long(mr_job_conf(job), "tslog.buckets", TSLOG_BUCKETS_DEFAULT, &buckets,
                             err);
    if (s == KILN_OK && (buckets < 1 || buckets > 256))
        s = status_set(err, KILN_INVALID, "tslog.buckets: %" PRId64 " is not in [1, 256]", buckets);
    st->buckets = (uint32_t)buckets;
    static const char *const layouts[TSLOG_TABLES] = {"bytime", "byhost", "stats"};
    static const char *const families[TSLOG_TABLES] = {"d", "d", "s"};
    for (int i = 0; i < TSLOG_TABLES && s == KILN_OK; i++) {
        char name[256];
        if (snprintf(name, sizeof name, "%s_%s", prefix, layouts[i]) >= (int)sizeof name)
            s = status_set(err, KILN_INVALID, "tslog: --table '%s' is too long", prefix);
        else
            s = view_add_table(st->v, layouts[i], name, families[i], &st->table[i], err);
    }
    if (s == KILN_OK)
        s = view_setup(st->v, err);
    if (s != KILN_OK)
        return s;
    char b[24];
    snprintf(b, sizeof b, "%" PRId64, buckets);
    mr_job_report(job, "buckets", b);
    mr_job_set_map(job, tslog_map);
    mr_job_set_reduce(job, tslog_reduce);
    return KILN_OK;
}

const mr_job_def tslog_job = {
    "tslog",
    "log and time-series data: salted by-time, by-host and per-minute views",
    "Usage: kiln-mr tslog --input PATH... --output DIR [--data DIR] [--table PREFIX]\n"
    "\n"
    "Builds three tables from lines  host TAB ts_ms TAB event TAB value  (value a\n"
    "64-bit integer), in one pass:\n"
    "  DIR/bytime  PREFIX_bytime  [bucket][ts][host]\\0[event]  d:v    (salted)\n"
    "  DIR/byhost  PREFIX_byhost  [host]\\0[event]\\0[ts]        d:v\n"
    "  DIR/stats   PREFIX_stats   [minute][host]\\0[event]  s:count, s:max,\n"
    "                             s:min, s:sum\n"
    "ts and minute are u64 big-endian ms; bucket = FNV-1a 32 of the rest of\n"
    "the bytime row, mod the bucket count. Load each with\n"
    "  kiln load PREFIX_bytime DIR/bytime   (and byhost, stats).\n"
    "\n"
    "  --table PREFIX  table name prefix (default tslog). Tables that exist in\n"
    "                  the data directory (--data DIR, else $KILN_DATA, else\n"
    "                  ./kiln-data) give their regions and family settings.\n"
    "\n"
    "Settings:\n"
    "  -D tslog.buckets=B              salt buckets of bytime (1..256, default 8);\n"
    "                                  create PREFIX_bytime with splits \\x01..\\x(B-1)\n"
    "  -D tslog.skip.bad.lines=false   fail on the first bad line (default: count\n"
    "                                  them under tslog / Bad Lines and skip them)\n",
    tslog_setup,
};

/* ------------------------------------------------------------------ generator */

typedef struct tslog_metric {
    const char *event;
    int64_t lo;
    uint64_t range;
    int skew;                     /* view_gen_skewed k: higher = more low values */
} tslog_metric;

static const char *const tslog_roles[] = {"web", "api", "db", "cache", "queue"};
static const char *const tslog_sites[] = {"iad", "sfo", "fra"};

/* Per role, 4 metrics; every host also reports cpu.pct and mem.used_mb. */
static const tslog_metric tslog_metrics[5][4] = {
    {{"http.requests", 1, 200, 1}, {"http.latency_ms", 2, 3000, 4},
     {"http.bytes_out", 200, 90000, 2}, {"http.errors_5xx", 0, 4, 6}},
    {{"rpc.calls", 1, 500, 1}, {"rpc.latency_ms", 1, 800, 4}, {"rpc.errors", 0, 6, 6},
     {"rpc.retries", 0, 5, 5}},
    {{"query.latency_ms", 1, 5000, 5}, {"rows.read", 0, 100000, 3}, {"conn.active", 1, 300, 2},
     {"lock.waits", 0, 20, 5}},
    {{"cache.hits", 0, 5000, 1}, {"cache.misses", 0, 400, 3}, {"evictions", 0, 50, 4},
     {"keys", 10000, 1000000, 1}},
    {{"queue.depth", 0, 20000, 3}, {"msg.published", 0, 1000, 1}, {"msg.acked", 0, 1000, 1},
     {"consumer.lag_ms", 0, 60000, 4}},
};
static const tslog_metric tslog_common[2] = {
    {"cpu.pct", 0, 101, 1}, {"mem.used_mb", 256, 32000, 1},
};

/* Events from 2024-03-01, one every 250 ms on average, from max(4, min(48,
 * rows/5000)) hosts named <role>-NN.<site>. About 1 line in 1000 re-sends the
 * previous line's sample (same host, ts, event) with a new value: the later
 * one wins. */
static kiln_status
tslog_generate(const view_gen_options *o, kiln_err *err)
{
    const int64_t base = 1709251200000LL, step = 250;
    uint64_t hosts = o->rows / 5000;
    hosts = hosts < 4 ? 4 : hosts > 48 ? 48 : hosts;
    view_gen_rng r;
    view_gen_seed(&r, o->seed, 2);
    view_gen_out *out;
    kiln_status s = view_gen_out_open(o->dir, "events", o->files, o->rows, &out, err);
    if (s != KILN_OK)
        return s;
    kbuf line = KBUF_INIT;
    char host[64] = "";
    const tslog_metric *m = &tslog_common[0];
    int64_t ts = base;
    for (uint64_t i = 0; i < o->rows && s == KILN_OK; i++) {
        if (i == 0 || !view_gen_chance(&r, 1)) {
            uint64_t h = view_gen_below(&r, hosts);
            size_t role = (size_t)(h % 5);
            snprintf(host, sizeof host, "%s-%02u.%s", tslog_roles[role], (unsigned)(h / 5 + 1),
                     tslog_sites[h % 3]);
            uint64_t which = view_gen_below(&r, 6);
            m = which < 4 ? &tslog_metrics[role][which] : &tslog_common[which - 4];
            ts = base + (int64_t)i * step + (int64_t)view_gen_below(&r, step);
        }
        int64_t value = m->lo + (int64_t)view_gen_skewed(&r, m->range, m->skew);
        buf_reset(&line);
        view_gen_printf(&line, "%s\t%" PRId64 "\t%s\t%" PRId64, host, ts, m->event, value);
        s = view_gen_out_line(out, i, o, &r, &line, err);
    }
    if (s == KILN_OK)
        s = view_gen_out_close(out, err);
    view_gen_out_free(out);
    buf_free(&line);
    return s;
}

const view_gen_def tslog_gen = {
    "tslog",
    "events",
    "DIR/events-NNNNN.tsv: host TAB ts_ms TAB event TAB value",
    tslog_generate,
};
