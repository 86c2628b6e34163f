/* kiln_server_main.c -- `kiln-server`: serve a data directory's tables over
 * HTTP (HBase REST shaped) and, optionally, the Redis protocol.
 *
 * Runs in the foreground and logs to stderr. SIGTERM or SIGINT drains (no
 * new connections; requests in flight are answered) and exits 0; SIGHUP
 * checks the data directory at once and goes on serving. All signal
 * handling is done by the main thread with sigwait; the workers never see a
 * signal.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>

#include "serving/server.h"
#include "serving/slog.h"
#include "storage/base/buf.h"

static const char kiln_server_usage_text[] =
    "Usage: kiln-server [--data DIR] [--listen ADDR] [--threads N] [--cache-mb N]\n"
    "                   [--resp-listen ADDR] [--resp-column [TABLE=]FAMILY:QUALIFIER]...\n"
    "                   [--read-only] [options]\n"
    "\n"
    "Serve every table of a Kiln data directory over HTTP in the shape of the HBase\n"
    "REST gateway, and optionally over the Redis protocol, taking online writes into\n"
    "the speed layer (its write-ahead log in DATA/wal; one server holds it). A version\n"
    "published by `kiln load` or `kiln rollback` is served within a second, after\n"
    "its indexes, blooms and hot rows are loaded; requests in flight finish on the\n"
    "version they started on. Runs in the foreground, logs to stderr; SIGTERM or\n"
    "SIGINT drains the connections and exits 0; SIGHUP checks the data directory\n"
    "for new tables and versions at once and goes on serving.\n"
    "\n"
    "HTTP routes: HBase REST's API. Representations by Accept: JSON (default;\n"
    "cells as {\"Row\":[{\"key\":B64,\"Cell\":[{\"column\":B64,\"timestamp\":N,\"$\":B64}]}]}),\n"
    "text/xml, application/x-protobuf (HBase's CellSet, Scanner, TableList,\n"
    "TableSchema, Version...) and application/octet-stream for one cell's value.\n"
    "  GET /                         tables (default-namespace ones without default:)\n"
    "  GET /version /version/cluster /status/cluster\n"
    "  GET /namespaces[/NS[/tables]]\n"
    "  GET /TABLE/schema /TABLE/regions /TABLE/exists\n"
    "  GET /TABLE/ROW[/COLUMN[,COLUMN...][/TS | /START,END]][?v=N]\n"
    "                                one row; 404 when absent\n"
    "  GET /TABLE/PREFIX*[/COLUMN]    rows by prefix; /TABLE/START,END[/COLUMN] a range\n"
    "  GET /TABLE/multiget[/COLUMN]?row=R1&row=R2...\n"
    "  GET /TABLE/*?startrow=&endrow=&prefix=&limit=&reversed=&column=&filter=\n"
    "                                a scan, whole (at most --scan-max-mb, else 413);\n"
    "                                &paged=true cuts pages of --scan-page-rows that\n"
    "                                carry \"next_startrow\"; &count=true counts rows\n"
    "  GET /TABLE/*?index=NAME&value=V[&value=V2][&value_start=&value_stop=]\n"
    "                                rows through a secondary index (&limit=,\n"
    "                                &column=; a page cut short carries\n"
    "                                \"next_after\" to pass as &after=)\n"
    "  PUT|POST /TABLE/scanner       open a scanner (a Scanner body in JSON, XML or\n"
    "                                protobuf: startRow, endRow, column, batch,\n"
    "                                maxVersions, startTime, endTime, limit,\n"
    "                                reversed, filter); 201 with its Location\n"
    "  GET /TABLE/scanner/ID         the next batch (batch cells); 204 at the end\n"
    "  DELETE /TABLE/scanner/ID      close it\n"
    "  GET /metrics /healthz /status Prometheus metrics, health, HTML status page\n"
    "filter= and a Scanner's filter take HBase REST's filter JSON (PrefixFilter,\n"
    "RowFilter, ValueFilter, SingleColumnValueFilter, FilterList, ...). A scanner\n"
    "reads the version it was opened on to its end, across swaps.\n"
    "Writes (HBase REST's RowResource; 403 with --read-only):\n"
    "  PUT|POST /TABLE/ROW/FAMILY:QUALIFIER[/TS]  the body is the value\n"
    "                                (Content-Type: application/octet-stream)\n"
    "  PUT|POST /TABLE/ROW           a CellSet body (JSON, XML, protobuf by\n"
    "                                Content-Type); /TABLE/fakerow for several rows\n"
    "  DELETE /TABLE/ROW[/FAMILY[:QUALIFIER]][/TS]  the row, a family, a column\n"
    "                                (every version, or those at or before TS)\n"
    "  ?check=put|delete             check-and-put/delete: the CellSet's last cell is\n"
    "                                the expected value; 304 when it differs\n"
    "  ?check=increment|append       HBase counters (8-byte longs) / appends; &rr=true\n"
    "                                answers the new values\n"
    "  ?durability=SKIP_WAL|ASYNC_WAL|SYNC_WAL  (Kiln's; default: the table's)\n"
    "Maintenance (Kiln's; 403 with --read-only; docs/speed-layer.md):\n"
    "  POST /TABLE/_admin/flush      the table's online writes to HFiles\n"
    "  POST /TABLE/_admin/compact[?major=true]   merge each region's files\n"
    "  POST /TABLE/_admin/split[?max_bytes=N]    split regions past N bytes\n"
    "Keys in paths and queries are percent-encoded (/ : , must be: %2F %3A %2C).\n"
    "\n"
    "Redis protocol (GET, MGET, EXISTS, PING, INFO, SELECT; SET, DEL, INCR, INCRBY,\n"
    "DECR, DECRBY, APPEND, HSET, HGET, HGETALL, HDEL): database n is the n-th\n"
    "table in name order (SELECT 0, the default, is the first); a key TABLE/ROW\n"
    "whose prefix names a table reads that table instead. GET returns one column:\n"
    "the --resp-column given for the table, else a global one whose family the\n"
    "table has, else the row's first cell (lowest family:qualifier, newest).\n"
    "\n"
    "Options:\n"
    "  --data DIR              data directory (default $KILN_DATA, else ./kiln-data)\n"
    "  --listen ADDR           HTTP address HOST:PORT (default 127.0.0.1:8080)\n"
    "  --resp-listen ADDR      also serve the Redis protocol on ADDR (e.g. 127.0.0.1:6380)\n"
    "  --resp-column SPEC      [TABLE=]FAMILY:QUALIFIER (qualifier in \\xNN form);\n"
    "                          repeatable\n"
    "  --read-only             take no writes (REST 403, Redis -READONLY) and leave\n"
    "                          the write-ahead log to another process\n"
    "  --memstore-flush-mb N   flush a table's online writes to HFiles past N MiB\n"
    "                          (default 64)\n"
    "  --threads N             worker threads at most (default: one per CPU)\n"
    "  --park-below PCT        a worker parks (hands its connections to the others\n"
    "                          and takes no new ones) when, for a second, the others\n"
    "                          would each stay below PCT% busy without it, or no\n"
    "                          core was idle (it comes back if one then is); default\n"
    "                          60; 0: every worker always takes connections\n"
    "  --unpark-above PCT      a parked worker comes back when the active workers\n"
    "                          average above PCT% busy over 100 ms and a quarter of\n"
    "                          a core is idle (default 85)\n"
    "  --busy-poll-us N        after a turn with requests, a worker that was busy\n"
    "                          over half of the last 100 ms looks for more for up to\n"
    "                          N microseconds before sleeping (default 200; 0: it\n"
    "                          sleeps at once). Spares clients the wake-up of a\n"
    "                          sleeping worker when a core is free for it; a worker\n"
    "                          that waited for a core for over a tenth of the last\n"
    "                          100 ms stops polling for a second\n"
    "  --cache-mb N            cache budget in MiB, blocks and rows (default 1024)\n"
    "  --row-cache-mb N        the row cache's part of it (default a quarter; 0: off)\n"
    "  --max-conns N           open connections at most (default 10000)\n"
    "  --max-request-bytes N   request head / Redis command size (default 65536)\n"
    "  --max-headers N         headers per request (default 64)\n"
    "  --idle-timeout S        close idle connections after S seconds (default 60)\n"
    "  --request-timeout S     a request must arrive whole within S seconds of its\n"
    "                          first byte, else 408 and close (default 10)\n"
    "  --max-conns-per-client N  open connections from one IP address at most\n"
    "                          (default 1024); more are refused with 503 / -ERR\n"
    "  --max-reply-bytes N     a row, multiget or MGET answer at most N bytes\n"
    "                          (default 67108864); larger ones are an error (413)\n"
    "  --request-deadline-ms N a scan holds its worker N ms at a time at most\n"
    "                          (default 10): an unpaged scan then lets other\n"
    "                          requests run and goes on after them, answering\n"
    "                          as if never cut; a paged scan or count answers\n"
    "                          what it has with next_startrow; a scanner GET\n"
    "                          answers the rows it has, or with none yet goes on\n"
    "                          after other requests\n"
    "  --scan-page-rows N      rows per page of a paged=true scan (default 10000)\n"
    "  --scan-max-mb N         an unpaged scan's answer at most, MiB (default 64)\n"
    "  --max-scanners N        open scanners at most; past it a new one is 503\n"
    "                          (default 1024)\n"
    "  --scanner-idle S        close a scanner unused for S seconds (default 60)\n"
    "  --poll-ms N             how often CURRENT files are checked (default 100)\n"
    "  --warm-ms N             time a swap may spend warming hot rows (default 600)\n"
    "  --prefetch-ms N         time a swap may spend reading the new version's file pages\n"
    "                          into the page cache, and again its blocks into the block\n"
    "                          cache, or, when the old version's row cache served its\n"
    "                          reads, the rows that cache held into the new version's\n"
    "                          (default 60000; 0: neither)\n"
    "  --drain-timeout S       longest drain on shutdown (default 10)\n"
    "  --quiet                 log warnings and errors only\n"
    "  -h, --help              this help\n"
    "  -V, --version           print the version\n"
    "\n"
    "Addresses default to loopback; a non-loopback address is served with a\n"
    "warning. Exit status: 0 after a drain, 64 usage error, 69 address in use or\n"
    "unavailable, 75 the write-ahead log is held by another process, 74 I/O error,\n"
    "70 internal error.\n";

static int
kiln_server_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "kiln-server: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'kiln-server --help'.\n");
    return EX_USAGE;
}

static int
kiln_server_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (s == NULL || *s == '\0')
        return -1;
    uint64_t v = 0;
    for (const char *p = s; *p != '\0'; p++) {
        if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int
main(int argc, char **argv)
{
    enum {
        OPT_DATA = 256, OPT_LISTEN, OPT_THREADS, OPT_CACHE, OPT_ROWCACHE, OPT_RESP, OPT_RESPCOL,
        OPT_MAXCONN, OPT_PERCLIENT, OPT_REQTIMEOUT, OPT_MAXREPLY, OPT_DEADLINE, OPT_MAXREQ, OPT_MAXHDR, OPT_IDLE,
        OPT_PAGE, OPT_POLL, OPT_WARM, OPT_PREFETCH, OPT_DRAIN, OPT_QUIET, OPT_SCANMAX, OPT_SCANNERS,
        OPT_SCANNER_IDLE, OPT_READONLY, OPT_FLUSHMB, OPT_BUSYPOLL, OPT_PARK, OPT_UNPARK
    };
    static const struct option opts[] = {
        {"data", required_argument, NULL, OPT_DATA},
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"busy-poll-us", required_argument, NULL, OPT_BUSYPOLL},
        {"park-below", required_argument, NULL, OPT_PARK},
        {"unpark-above", required_argument, NULL, OPT_UNPARK},
        {"cache-mb", required_argument, NULL, OPT_CACHE},
        {"row-cache-mb", required_argument, NULL, OPT_ROWCACHE},
        {"resp-listen", required_argument, NULL, OPT_RESP},
        {"resp-column", required_argument, NULL, OPT_RESPCOL},
        {"max-conns", required_argument, NULL, OPT_MAXCONN},
        {"max-request-bytes", required_argument, NULL, OPT_MAXREQ},
        {"max-headers", required_argument, NULL, OPT_MAXHDR},
        {"idle-timeout", required_argument, NULL, OPT_IDLE},
        {"request-timeout", required_argument, NULL, OPT_REQTIMEOUT},
        {"max-conns-per-client", required_argument, NULL, OPT_PERCLIENT},
        {"max-reply-bytes", required_argument, NULL, OPT_MAXREPLY},
        {"request-deadline-ms", required_argument, NULL, OPT_DEADLINE},
        {"scan-page-rows", required_argument, NULL, OPT_PAGE},
        {"scan-max-mb", required_argument, NULL, OPT_SCANMAX},
        {"max-scanners", required_argument, NULL, OPT_SCANNERS},
        {"scanner-idle", required_argument, NULL, OPT_SCANNER_IDLE},
        {"poll-ms", required_argument, NULL, OPT_POLL},
        {"warm-ms", required_argument, NULL, OPT_WARM},
        {"prefetch-ms", required_argument, NULL, OPT_PREFETCH},
        {"drain-timeout", required_argument, NULL, OPT_DRAIN},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"read-only", no_argument, NULL, OPT_READONLY},
        {"memstore-flush-mb", required_argument, NULL, OPT_FLUSHMB},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    server_config cfg;
    server_config_init(&cfg);
    const char *env_data = getenv("KILN_DATA");
    if (env_data != NULL && env_data[0] != '\0')
        cfg.data_dir = env_data;
    /* Lives as long as the process (the config points into it); a static
     * keeps it reachable on the early usage/--help exits too. */
    static const char **columns;
    columns = kiln_calloc((size_t)argc + 1, sizeof *columns);
    size_t ncols = 0;
    uint64_t v;
    uint64_t cache_mb = SERVER_CACHE_MB_DEFAULT, row_mb = UINT64_MAX;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":hV", opts, NULL)) != -1) {
        switch (c) {
        case OPT_DATA:
            cfg.data_dir = optarg;
            break;
        case OPT_LISTEN:
            cfg.listen = optarg;
            break;
        case OPT_RESP:
            cfg.resp_listen = optarg;
            break;
        case OPT_RESPCOL:
            columns[ncols++] = optarg;
            break;
        case OPT_THREADS:
            if (kiln_server_u64(optarg, 1, 128, &v) != 0)
                return kiln_server_usage_error("--threads must be 1..128, got '%s'", optarg);
            cfg.threads = (int)v;
            break;
        case OPT_CACHE:
            if (kiln_server_u64(optarg, 0, 1u << 20, &cache_mb) != 0)
                return kiln_server_usage_error("--cache-mb must be 0..1048576, got '%s'", optarg);
            break;
        case OPT_ROWCACHE:
            if (kiln_server_u64(optarg, 0, 1u << 20, &row_mb) != 0)
                return kiln_server_usage_error("--row-cache-mb must be 0..1048576, got '%s'",
                                               optarg);
            break;
        case OPT_MAXCONN:
            if (kiln_server_u64(optarg, 1, 1000000, &v) != 0)
                return kiln_server_usage_error("--max-conns must be 1..1000000, got '%s'", optarg);
            cfg.max_conns = (int)v;
            break;
        case OPT_MAXREQ:
            if (kiln_server_u64(optarg, 256, 64u << 20, &v) != 0)
                return kiln_server_usage_error("--max-request-bytes must be 256..67108864, "
                                               "got '%s'", optarg);
            cfg.max_request_bytes = (size_t)v;
            break;
        case OPT_MAXHDR:
            if (kiln_server_u64(optarg, 1, 10000, &v) != 0)
                return kiln_server_usage_error("--max-headers must be 1..10000, got '%s'", optarg);
            cfg.max_headers = (int)v;
            break;
        case OPT_IDLE:
            if (kiln_server_u64(optarg, 1, 86400, &v) != 0)
                return kiln_server_usage_error("--idle-timeout must be 1..86400 s, got '%s'",
                                               optarg);
            cfg.idle_timeout_ms = (int)v * 1000;
            break;
        case OPT_REQTIMEOUT:
            if (kiln_server_u64(optarg, 1, 86400, &v) != 0)
                return kiln_server_usage_error("--request-timeout must be 1..86400 s, got '%s'",
                                               optarg);
            cfg.request_timeout_ms = (int)v * 1000;
            break;
        case OPT_PERCLIENT:
            if (kiln_server_u64(optarg, 1, 1000000, &v) != 0)
                return kiln_server_usage_error("--max-conns-per-client must be 1..1000000, "
                                               "got '%s'", optarg);
            cfg.max_conns_per_client = (int)v;
            break;
        case OPT_MAXREPLY:
            if (kiln_server_u64(optarg, 1024, (uint64_t)1 << 40, &v) != 0)
                return kiln_server_usage_error("--max-reply-bytes must be 1024..2^40, got '%s'",
                                               optarg);
            cfg.max_reply_bytes = (size_t)v;
            break;
        case OPT_DEADLINE:
            if (kiln_server_u64(optarg, 1, 3600000, &v) != 0)
                return kiln_server_usage_error("--request-deadline-ms must be 1..3600000, got '%s'",
                                               optarg);
            cfg.request_deadline_ms = (int)v;
            break;
        case OPT_PAGE:
            if (kiln_server_u64(optarg, 1, 10000000, &v) != 0)
                return kiln_server_usage_error("--scan-page-rows must be 1..10000000, got '%s'",
                                               optarg);
            cfg.page_rows = v;
            break;
        case OPT_SCANMAX:
            if (kiln_server_u64(optarg, 1, 65536, &v) != 0)
                return kiln_server_usage_error("--scan-max-mb must be 1..65536, got '%s'", optarg);
            cfg.scan_max_bytes = (size_t)v << 20;
            break;
        case OPT_SCANNERS:
            if (kiln_server_u64(optarg, 1, 1000000, &v) != 0)
                return kiln_server_usage_error("--max-scanners must be 1..1000000, got '%s'",
                                               optarg);
            cfg.scanners_max = (size_t)v;
            break;
        case OPT_SCANNER_IDLE:
            if (kiln_server_u64(optarg, 1, 86400, &v) != 0)
                return kiln_server_usage_error("--scanner-idle must be 1..86400 s, got '%s'",
                                               optarg);
            cfg.scanner_idle_ms = (long)v * 1000;
            break;
        case OPT_POLL:
            if (kiln_server_u64(optarg, 1, 60000, &v) != 0)
                return kiln_server_usage_error("--poll-ms must be 1..60000, got '%s'", optarg);
            cfg.poll_ms = (long)v;
            break;
        case OPT_WARM:
            if (kiln_server_u64(optarg, 0, 600000, &v) != 0)
                return kiln_server_usage_error("--warm-ms must be 0..600000, got '%s'", optarg);
            cfg.warm_ms = (long)v;
            break;
        case OPT_BUSYPOLL:
            if (kiln_server_u64(optarg, 0, 100000, &v) != 0)
                return kiln_server_usage_error("--busy-poll-us must be 0..100000, got '%s'",
                                               optarg);
            cfg.busy_poll_us = (long)v;
            break;
        case OPT_PARK:
            if (kiln_server_u64(optarg, 0, 1000, &v) != 0)
                return kiln_server_usage_error("--park-below must be 0..1000, got '%s'", optarg);
            cfg.park_below_pct = (int)v;
            break;
        case OPT_UNPARK:
            if (kiln_server_u64(optarg, 0, 100, &v) != 0)
                return kiln_server_usage_error("--unpark-above must be 0..100, got '%s'",
                                               optarg);
            cfg.unpark_above_pct = (int)v;
            break;
        case OPT_PREFETCH:
            if (kiln_server_u64(optarg, 0, 600000, &v) != 0)
                return kiln_server_usage_error("--prefetch-ms must be 0..600000, got '%s'",
                                               optarg);
            cfg.prefetch_ms = (long)v;
            break;
        case OPT_DRAIN:
            if (kiln_server_u64(optarg, 0, 3600, &v) != 0)
                return kiln_server_usage_error("--drain-timeout must be 0..3600 s, got '%s'",
                                               optarg);
            cfg.drain_timeout_ms = (int)v * 1000;
            break;
        case OPT_QUIET:
            slog_set_quiet(1);
            break;
        case OPT_READONLY:
            cfg.read_only = 1;
            break;
        case OPT_FLUSHMB:
            if (kiln_server_u64(optarg, 1, 1u << 20, &v) != 0)
                return kiln_server_usage_error("--memstore-flush-mb must be 1..1048576, got '%s'",
                                               optarg);
            cfg.memstore_flush_bytes = (size_t)v << 20;
            break;
        case 'h':
            fputs(kiln_server_usage_text, stdout);
            return 0;
        case 'V':
            printf("kiln-server %s\n", KILN_VERSION);
            return 0;
        case ':':
            return kiln_server_usage_error("option '%s' needs an argument", argv[optind - 1]);
        default:
            return kiln_server_usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return kiln_server_usage_error("unexpected argument '%s'", argv[optind]);
    if (row_mb != UINT64_MAX && row_mb > cache_mb)
        return kiln_server_usage_error("--row-cache-mb must not exceed --cache-mb%s", "");
    cfg.cache_bytes = (size_t)cache_mb << 20;
    cfg.row_cache_bytes = row_mb == UINT64_MAX ? SIZE_MAX : (size_t)row_mb << 20;
    cfg.resp_columns = columns;
    cfg.resp_column_count = ncols;

    struct stat sb;
    if (stat(cfg.data_dir, &sb) != 0)
        slog_warn("data directory %s does not exist yet: serving no tables until one is "
                  "created", cfg.data_dir);

    /* Workers inherit this mask: only the main thread takes the signals. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    server *s;
    kiln_err err;
    status_clear(&err);
    if (server_start(&cfg, &s, &err) != KILN_OK) {
        fprintf(stderr, "kiln-server: %s\n", err.msg);
        free(columns);
        if (err.code == KILN_INVALID)
            return EX_USAGE;
        if (err.code == KILN_BUSY) {
            fprintf(stderr, "kiln-server: another process holds the write-ahead log; "
                    "serve with --read-only, or stop it\n");
            return EX_TEMPFAIL;
        }
        if (err.code == KILN_NOT_FOUND || err.sys_errno != 0)
            return EX_UNAVAILABLE;
        return status_exit_code(err.code);
    }
    size_t ntables = 0;
    views_table_info *infos;
    ntables = views_table_infos(server_views(s), &infos);
    free(infos);
    slog_info("kiln-server %s serving %s (%zu table%s%s) over HTTP on %s (port %d), %d MiB cache",
              KILN_VERSION, cfg.data_dir, ntables, ntables == 1 ? "" : "s",
              cfg.read_only ? ", read-only" : ", taking writes", cfg.listen, server_http_port(s),
              (int)cache_mb);
    if (cfg.resp_listen != NULL)
        slog_info("Redis protocol on %s (port %d)", cfg.resp_listen, server_resp_port(s));

    int sig = 0;
    for (;;) {
        sigwait(&set, &sig);
        if (sig != SIGHUP)
            break;
        /* A reload: pick up new tables and versions now rather than at the
         * next poll; nothing stops. */
        views_wake(server_views(s));
        slog_info("SIGHUP: checking the data directory for new tables and versions; "
                  "still serving");
    }
    slog_info("%s: draining connections", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    server_shutdown(s);
    server_wait(s);
    server_free(s);
    free(columns);
    slog_info("stopped");
    return 0;
}
