/* cmd_read.c -- `kiln get | scan | count`: reads through the region store
 * (storage/store_view.h) of the data directory, or through a kiln-server
 * with --server (cli/remote.h), with the same output. Text output is the HBase
 * shell's (` ROW   column=f:q, timestamp=T, value=V`, then `N row(s)`); --json
 * prints HBase REST's CellSet form, {"Row":[{"key":B64,"Cell":[{"column":B64,
 * "timestamp":N,"$":B64}]}]}. Row keys, qualifiers and values in text use
 * HBase's printable form (\xNN for other bytes), in arguments as in output.
 * `scan --index NAME --value V` reads the rows of a table through one of its
 * secondary indexes (storage/store_index.h), printed as a scan prints them.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "cli/cli.h"
#include "storage/store/speed.h"
#include "cli/remote.h"
#include "storage/base/block_cache.h"
#include "storage/hfile/cell.h"
#include "storage/query/filter.h"
#include "storage/query/shell_filter.h"
#include "storage/store/schema.h"
#include "storage/store/store_index.h"
#include "storage/store/store_view.h"
#include "storage/store/table.h"

#define CMD_READ_CACHE_BYTES (64u << 20)
#define CMD_READ_COL_WIDTH 32

/* ------------------------------------------------------------------ arguments */

/* Options shared by get, scan and count, and the storage they point into. */
typedef struct cmd_read_args {
    store_scan_opts so;              /* so.read is the row options for get */
    store_column *cols;
    size_t ncols;
    char **fams;                     /* owned family names */
    kbuf *quals;                     /* owned qualifiers */
    kbuf start, stop, prefix;
    int json;
    const char *index;               /* --index NAME, or NULL */
    kbuf *values;                    /* --value (repeatable), decoded */
    size_t nvalues;
    kbuf value_start, value_stop;    /* --value-start / --value-stop */
    kbuf filter;                     /* --filter as the filter model's JSON; empty if none */
    int has_value_start, has_value_stop;
} cmd_read_args;

static void
cmd_read_args_init(cmd_read_args *a)
{
    memset(a, 0, sizeof *a);
    store_scan_opts_init(&a->so);
    buf_init(&a->start);
    buf_init(&a->stop);
    buf_init(&a->prefix);
    buf_init(&a->value_start);
    buf_init(&a->value_stop);
}

static void
cmd_read_args_free(cmd_read_args *a)
{
    for (size_t i = 0; i < a->ncols; i++) {
        free(a->fams[i]);
        buf_free(&a->quals[i]);
    }
    free(a->fams);
    free(a->quals);
    free(a->cols);
    buf_free(&a->start);
    buf_free(&a->stop);
    buf_free(&a->prefix);
    for (size_t i = 0; i < a->nvalues; i++)
        buf_free(&a->values[i]);
    free(a->values);
    buf_free(&a->value_start);
    buf_free(&a->value_stop);
    buf_free(&a->filter);
}

/* Add FAMILY or FAMILY:QUALIFIER (qualifier in printable form). -1 if malformed. */
static int
cmd_read_add_column(cmd_read_args *a, const char *spec, size_t n)
{
    const char *colon = memchr(spec, ':', n);
    size_t fl = colon ? (size_t)(colon - spec) : n;
    if (fl == 0 || fl > SCHEMA_FAMILY_NAME_MAX)
        return -1;
    a->cols = kiln_realloc(a->cols, (a->ncols + 1) * sizeof *a->cols);
    a->fams = kiln_realloc(a->fams, (a->ncols + 1) * sizeof *a->fams);
    a->quals = kiln_realloc(a->quals, (a->ncols + 1) * sizeof *a->quals);
    size_t i = a->ncols++;
    a->fams[i] = kiln_malloc(fl + 1);
    memcpy(a->fams[i], spec, fl);
    a->fams[i][fl] = '\0';
    buf_init(&a->quals[i]);
    if (colon != NULL &&
        cell_from_string_binary(&a->quals[i], colon + 1, n - fl - 1) != 0)
        return -1;
    return 0;
}

/* Point the columns at their storage (after all are added). */
static void
cmd_read_bind_columns(cmd_read_args *a, const char *const *specs)
{
    for (size_t i = 0; i < a->ncols; i++) {
        a->cols[i].family = a->fams[i];
        int has_q = specs == NULL || strchr(specs[i], ':') != NULL;
        a->cols[i].qualifier = has_q ? (a->quals[i].data ? a->quals[i].data : (const uint8_t *)"")
                                     : NULL;
        a->cols[i].qualifier_len = has_q ? a->quals[i].len : 0;
    }
    a->so.read.columns = a->cols;
    a->so.read.column_count = a->ncols;
}

static int
cmd_read_key(const char *ctx, const char *what, const char *text, kbuf *out)
{
    buf_reset(out);
    if (cell_from_string_binary(out, text, strlen(text)) != 0)
        return cli_usage_error(ctx, "%s '%s': bad \\xNN escape", what, text);
    if (out->len > CELL_ROW_MAX)
        return cli_usage_error(ctx, "%s longer than %d bytes", what, CELL_ROW_MAX);
    return 0;
}

/* "MIN,MAX" milliseconds, [MIN, MAX). */
static int
cmd_read_time_range(const char *ctx, const char *s, store_row_opts *o)
{
    const char *comma = strchr(s, ',');
    int64_t lo, hi;
    if (comma == NULL || cli_parse_i64(s, (size_t)(comma - s), &lo) != 0 ||
        cli_parse_i64(comma + 1, strlen(comma + 1), &hi) != 0 || lo < 0 || hi <= lo)
        return cli_usage_error(ctx, "--time-range takes MIN,MAX in ms with 0 <= MIN < MAX");
    o->ts_min = lo;
    o->ts_max = hi;
    return 0;
}

/* ------------------------------------------------------------------ output */

static void
cmd_read_b64(cli_out *o, const uint8_t *p, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char q[4];
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        q[0] = tab[(v >> 18) & 63];
        q[1] = tab[(v >> 12) & 63];
        q[2] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        q[3] = i + 2 < n ? tab[v & 63] : '=';
        cli_out_write(o, q, 4);
    }
}

static void
cmd_read_pad(cli_out *o, size_t used)
{
    do {
        cli_out_write(o, " ", 1);
    } while (++used < CMD_READ_COL_WIDTH);
}

static size_t
cmd_read_printable(cli_out *o, const uint8_t *p, size_t n)
{
    size_t before = o->buf.len;
    cli_out_binary(o, p, n);
    return o->buf.len - before;
}

/* " FAMILY:QUALIFIER" (get) or " ROW" (scan) column, then the cell column. */
static void
cmd_read_text_cell(cli_out *o, const kiln_cell *c, int scan)
{
    cli_out_write(o, " ", 1);
    size_t used = 1;
    if (scan) {
        used += cmd_read_printable(o, c->row, c->row_len);
    } else {
        used += cmd_read_printable(o, c->family, c->family_len) + 1;
        cli_out_write(o, ":", 1);
        used += cmd_read_printable(o, c->qualifier, c->qualifier_len);
    }
    cmd_read_pad(o, used);
    if (scan) {
        cli_out_str(o, "column=");
        cli_out_binary(o, c->family, c->family_len);
        cli_out_write(o, ":", 1);
        cli_out_binary(o, c->qualifier, c->qualifier_len);
        cli_out_str(o, ", ");
    }
    cli_out_printf(o, "timestamp=%" PRId64 ", value=", c->ts);
    cli_out_binary(o, c->value, c->value_len);
    cli_out_write(o, "\n", 1);
    cli_out_maybe_flush(o);
}

static void
cmd_read_json_row(cli_out *o, const store_row *r, int first)
{
    cli_out_str(o, first ? "{\"key\":\"" : ",{\"key\":\"");
    cmd_read_b64(o, r->row.p, r->row.n);
    cli_out_str(o, "\",\"Cell\":[");
    kbuf col = KBUF_INIT;
    for (size_t i = 0; i < r->count; i++) {
        const kiln_cell *c = &r->cells[i];
        buf_reset(&col);
        buf_append(&col, c->family, c->family_len);
        buf_append_u8(&col, ':');
        buf_append(&col, c->qualifier, c->qualifier_len);
        cli_out_str(o, i ? ",{\"column\":\"" : "{\"column\":\"");
        cmd_read_b64(o, col.data, col.len);
        cli_out_printf(o, "\",\"timestamp\":%" PRId64 ",\"$\":\"", c->ts);
        cmd_read_b64(o, c->value, c->value_len);
        cli_out_str(o, "\"}");
    }
    buf_free(&col);
    cli_out_str(o, "]}");
    cli_out_maybe_flush(o);
}

/* The data directory's speed layer, replayed read-only (the log is not
 * taken: a running server keeps it), so that embedded reads see online
 * writes; closed at exit. It reads without a block cache of its own. */
static kiln_speed *cmd_read_speed;

static void
cmd_read_speed_close(void)
{
    speed_close(cmd_read_speed);
    cmd_read_speed = NULL;
}

/* Open the table embedded (*cache, *v) or connect to the server (*rem). */
static int
cmd_read_open(const cli_globals *g, const char *ctx, const char *table, block_cache **cache,
              store_view **v, remote **rem)
{
    kiln_err err;
    status_clear(&err);
    (void)ctx;
    if (g->server != NULL)
        return remote_open(g->server, rem, &err) == KILN_OK ? 0 : cli_report(&err);
    *cache = block_cache_new(CMD_READ_CACHE_BYTES);
    if (cmd_read_speed == NULL) {
        speed_options o;
        speed_options_init(&o);
        o.read_only = 1;
        o.flush_check_ms = 0;
        if (speed_open(g->data_dir, NULL, &o, &cmd_read_speed, &err) != KILN_OK) {
            block_cache_free(*cache);
            *cache = NULL;
            return cli_report(&err);
        }
        atexit(cmd_read_speed_close);
    }
    if (speed_view(cmd_read_speed, table, v, &err) != KILN_OK) {
        block_cache_free(*cache);
        *cache = NULL;
        return cli_report(&err);
    }
    return 0;
}

static int
cmd_read_getopt(const char *ctx, int argc, char **argv, const struct option *opts)
{
    opterr = 0;
    int c = getopt_long(argc, argv, ":h", opts, NULL);
    if (c == ':') {
        cli_usage_error(ctx, "option '%s' needs an argument", argv[optind - 1]);
        return '?';
    }
    if (c == '?') {
        cli_usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
        return '?';
    }
    return c;
}

/* Options common to scan and count. Returns -1 if c is not one of them,
 * else 0 or an exit code. */
static int
cmd_read_scan_option(const char *ctx, int c, cmd_read_args *a)
{
    uint64_t n;
    switch (c) {
    case 'b':
        return cmd_read_key(ctx, "--start", optarg, &a->start);
    case 'e':
        return cmd_read_key(ctx, "--stop", optarg, &a->stop);
    case 'p':
        return cmd_read_key(ctx, "--prefix", optarg, &a->prefix);
    case 'c':
        for (const char *p = optarg; *p != '\0';) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            if (cmd_read_add_column(a, p, len) != 0)
                return cli_usage_error(ctx, "--columns: bad column '%.*s' (FAMILY[:QUALIFIER])",
                                       (int)len, p);
            p += len;
            if (*p == ',')
                p++;
        }
        return 0;
    case 'v':
        if (cli_parse_u64(optarg, &n) != 0 || n < 1 || n > INT32_MAX)
            return cli_usage_error(ctx, "--versions must be 1..2147483647");
        a->so.read.max_versions = (uint32_t)n;
        return 0;
    case 't':
        return cmd_read_time_range(ctx, optarg, &a->so.read);
    case 'j':
        a->json = 1;
        return 0;
    default:
        return -1;
    }
}

static void
cmd_read_bind_scan(cmd_read_args *a, const char *const *specs)
{
    cmd_read_bind_columns(a, specs);
    a->so.start = a->start.data;
    a->so.start_len = a->start.len;
    a->so.stop = a->stop.data;
    a->so.stop_len = a->stop.len;
    a->so.prefix = a->prefix.data;
    a->so.prefix_len = a->prefix.len;
}

/* Column specs kept for scan/count to tell "f" from "f:" (empty qualifier). */
static char **
cmd_read_specs(const char *list, size_t *n)
{
    char **v = NULL;
    *n = 0;
    for (const char *p = list; p != NULL && *p != '\0';) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        v = kiln_realloc(v, (*n + 1) * sizeof *v);
        v[*n] = kiln_malloc(len + 1);
        memcpy(v[*n], p, len);
        v[*n][len] = '\0';
        (*n)++;
        p += len;
        if (*p == ',')
            p++;
    }
    return v;
}

/* ------------------------------------------------------------------ get */

static const char cmd_get_usage_text[] =
    "Usage: kiln get TABLE ROW [FAMILY[:QUALIFIER]]... [--versions N]\n"
    "                [--time-range MIN,MAX] [--json]\n"
    "\n"
    "Read one row (HBase shell `get`): every column of the row, or the families\n"
    "and columns named, newest version first. Deleted and expired cells are\n"
    "never returned. ROW and QUALIFIER are in printable form (\\xNN escapes).\n"
    "\n"
    "Options:\n"
    "  --versions N           up to N versions per column (at most the family's)\n"
    "  --time-range MIN,MAX   only cells with MIN <= timestamp < MAX (ms)\n"
    "  --json                 HBase REST CellSet JSON instead of text\n";

int
cmd_get(const cli_globals *g, int argc, char **argv)
{
    static const struct option opts[] = {
        {"versions", required_argument, NULL, 'v'},
        {"time-range", required_argument, NULL, 't'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cmd_read_args a;
    cmd_read_args_init(&a);
    int c, rc = -1;
    while (rc < 0 && (c = cmd_read_getopt("get", argc, argv, opts)) != -1) {
        if (c == 'h') {
            fputs(cmd_get_usage_text, stdout);
            rc = 0;
        } else if (c == '?' || (rc = cmd_read_scan_option("get", c, &a)) == -1) {
            rc = EX_USAGE;
        } else if (rc == 0) {
            rc = -1;
        }
    }
    kbuf row = KBUF_INIT;
    if (rc < 0 && argc - optind < 2)
        rc = cli_usage_error("get", "needs TABLE and ROW");
    if (rc < 0 && (rc = cmd_read_key("get", "ROW", argv[optind + 1], &row)) == 0)
        rc = -1;
    if (rc < 0 && row.len == 0)
        rc = cli_usage_error("get", "ROW must not be empty");
    for (int i = optind + 2; rc < 0 && i < argc; i++) {
        if (cmd_read_add_column(&a, argv[i], strlen(argv[i])) != 0)
            rc = cli_usage_error("get", "bad column '%s' (FAMILY[:QUALIFIER])", argv[i]);
    }
    block_cache *cache = NULL;
    store_view *v = NULL;
    remote *rem = NULL;
    if (rc < 0) {
        cmd_read_bind_columns(&a, (const char *const *)(argv + optind + 2));
        int orc = cmd_read_open(g, "get", argv[optind], &cache, &v, &rem);
        if (orc != 0)
            rc = orc;
    }
    if (rc < 0) {
        store_row_buf *buf = store_row_buf_new();
        store_row r;
        kiln_err err;
        status_clear(&err);
        kiln_status gst = rem != NULL ? remote_get(rem, argv[optind], row.data, row.len,
                                                   &a.so.read, &r, &err)
                                      : store_view_get(v, row.data, row.len, &a.so.read, buf, &r,
                                                       &err);
        if (gst != KILN_OK) {
            rc = cli_report(&err);
        } else {
            cli_out o;
            cli_out_init(&o, STDOUT_FILENO);
            if (a.json) {
                cli_out_str(&o, "{\"Row\":[");
                if (r.count > 0)
                    cmd_read_json_row(&o, &r, 1);
                cli_out_str(&o, "]}\n");
            } else {
                cli_out_str(&o, "COLUMN");
                cmd_read_pad(&o, 6);
                cli_out_str(&o, "CELL\n");
                for (size_t i = 0; i < r.count; i++)
                    cmd_read_text_cell(&o, &r.cells[i], 0);
                cli_out_printf(&o, "%zu row(s)\n", r.count);
            }
            rc = cli_out_close(&o, &err) == KILN_OK ? 0 : cli_report(&err);
        }
        store_row_buf_free(buf);
    }
    store_view_unref(v);
    block_cache_free(cache);
    remote_close(rem);
    buf_free(&row);
    cmd_read_args_free(&a);
    return rc;
}

/* ------------------------------------------------------------------ scan */

static const char cmd_scan_usage_text[] =
    "Usage: kiln scan TABLE [--start ROW] [--stop ROW] [--prefix P] [--limit N]\n"
    "                 [--reversed] [--columns C,...] [--versions N]\n"
    "                 [--time-range MIN,MAX] [--filter FILTER] [--json]\n"
    "       kiln scan TABLE --index NAME [--value V]... [--value-start V]\n"
    "                 [--value-stop V] [--limit N] [--columns C,...] [--json]\n"
    "\n"
    "Scan rows in key order across all regions (HBase shell `scan`). A salted\n"
    "table's rows come in key order too; the salt is never shown.\n"
    "\n"
    "With --index, read the table's rows through its secondary index NAME (built\n"
    "by a job with -D kiln.index=NAME:cf:q[,cf:q2]): --value gives the value of\n"
    "the first indexed column (repeat for the next columns of a composite\n"
    "index), --value-start/--value-stop a range [start, stop) on the column after\n"
    "them. Rows come in index order (for exact values: row key order); each is\n"
    "read from the same version as the index, and only if its columns still\n"
    "hold the indexed values.\n"
    "\n"
    "Options:\n"
    "  --start ROW            first row, inclusive (reversed: the highest row)\n"
    "  --stop ROW             end row, exclusive (reversed: the lower bound)\n"
    "  --prefix P             only rows that start with P\n"
    "  --limit N              at most N rows\n"
    "  --reversed             rows in descending order\n"
    "  --columns C,...        FAMILY or FAMILY:QUALIFIER, comma-separated\n"
    "  --versions N           up to N versions per column (at most the family's)\n"
    "  --time-range MIN,MAX   only cells with MIN <= timestamp < MAX (ms)\n"
    "  --filter FILTER        HBase shell filter syntax, e.g. \"PrefixFilter('ab') AND\n"
    "                         ValueFilter(=, 'binary:x')\": Prefix, ColumnPrefix,\n"
    "                         MultipleColumnPrefix, Row, Family, Qualifier, Value,\n"
    "                         SingleColumnValue, FirstKeyOnly, KeyOnly, Page,\n"
    "                         ColumnCountGet and Timestamps filters; AND, OR, ( );\n"
    "                         comparators binary:, binaryprefix:, regexstring:,\n"
    "                         substring:; strings in single quotes ('' for ')\n"
    "  --json                 HBase REST CellSet JSON instead of text\n"
    "  --index NAME           read through the secondary index NAME\n"
    "  --value V              an indexed column's value (repeatable, in order)\n"
    "  --value-start V        the next indexed column's value >= V\n"
    "  --value-stop V         the next indexed column's value < V\n"
    "Keys, qualifiers and values are in printable form (\\xNN escapes).\n";

static const struct option cmd_scan_opts[] = {
    {"start", required_argument, NULL, 'b'},
    {"stop", required_argument, NULL, 'e'},
    {"prefix", required_argument, NULL, 'p'},
    {"limit", required_argument, NULL, 'l'},
    {"reversed", no_argument, NULL, 'r'},
    {"columns", required_argument, NULL, 'c'},
    {"versions", required_argument, NULL, 'v'},
    {"time-range", required_argument, NULL, 't'},
    {"json", no_argument, NULL, 'j'},
    {"index", required_argument, NULL, 'I'},
    {"value", required_argument, NULL, 'V'},
    {"value-start", required_argument, NULL, 'A'},
    {"value-stop", required_argument, NULL, 'Z'},
    {"filter", required_argument, NULL, 'F'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* A value of --value / --value-start / --value-stop (printable form). */
static int
cmd_read_value(const char *ctx, const char *what, const char *text, kbuf *out)
{
    buf_reset(out);
    if (cell_from_string_binary(out, text, strlen(text)) != 0)
        return cli_usage_error(ctx, "%s '%s': bad \\xNN escape", what, text);
    if (out->len > CELL_ROW_MAX)
        return cli_usage_error(ctx, "%s longer than %d bytes", what, CELL_ROW_MAX);
    return 0;
}

/* The index options of scan. Returns -1 if c is not one of them, else 0 or
 * an exit code. */
static int
cmd_read_index_option(const char *ctx, int c, cmd_read_args *a)
{
    switch (c) {
    case 'I':
        a->index = optarg;
        return 0;
    case 'V':
        if (a->nvalues >= STORE_INDEX_COLUMNS_MAX)
            return cli_usage_error(ctx, "more than %d --value options", STORE_INDEX_COLUMNS_MAX);
        a->values = kiln_realloc(a->values, (a->nvalues + 1) * sizeof *a->values);
        buf_init(&a->values[a->nvalues]);
        return cmd_read_value(ctx, "--value", optarg, &a->values[a->nvalues++]);
    case 'A':
        a->has_value_start = 1;
        return cmd_read_value(ctx, "--value-start", optarg, &a->value_start);
    case 'Z':
        a->has_value_stop = 1;
        return cmd_read_value(ctx, "--value-stop", optarg, &a->value_stop);
    default:
        return -1;
    }
}

/* Parse scan/count arguments; returns -1 to go on, else an exit code. */
static int
cmd_read_parse_scan(const char *ctx, const char *usage, int argc, char **argv,
                    cmd_read_args *a, char ***specs, size_t *nspecs)
{
    int c;
    *specs = NULL;
    *nspecs = 0;
    while ((c = cmd_read_getopt(ctx, argc, argv, cmd_scan_opts)) != -1) {
        uint64_t n;
        int rc;
        if (c == 'h') {
            fputs(usage, stdout);
            return 0;
        }
        if (c == '?')
            return EX_USAGE;
        if (c == 'l') {
            if (cli_parse_u64(optarg, &n) != 0 || n == 0)
                return cli_usage_error(ctx, "--limit must be a positive number");
            a->so.limit = n;
            continue;
        }
        if (c == 'r') {
            a->so.reversed = 1;
            continue;
        }
        if (c == 'F') {
            kiln_err ferr;
            status_clear(&ferr);
            buf_reset(&a->filter);
            if (strcmp(ctx, "scan") != 0)
                return cli_usage_error(ctx, "'--filter' is an option of scan only");
            if (shell_filter_to_json(optarg, &a->filter, &ferr) != KILN_OK)
                return cli_usage_error(ctx, "--%s", ferr.msg);
            continue;
        }
        if (c == 'c') {
            size_t k;
            char **more = cmd_read_specs(optarg, &k);
            *specs = kiln_realloc(*specs, (*nspecs + k) * sizeof **specs);
            memcpy(*specs + *nspecs, more, k * sizeof *more);
            *nspecs += k;
            free(more);
        }
        if ((rc = cmd_read_index_option(ctx, c, a)) != -1) {
            if (rc != 0)
                return rc;
            if (strcmp(ctx, "scan") != 0)
                return cli_usage_error(ctx, "'%s' is an option of scan only", argv[optind - 1]);
            continue;
        }
        if ((rc = cmd_read_scan_option(ctx, c, a)) != 0)
            return rc == -1 ? EX_USAGE : rc;
    }
    if (argc - optind != 1)
        return cli_usage_error(ctx, argc - optind < 1 ? "missing TABLE" : "too many arguments");
    if (a->index == NULL && (a->nvalues > 0 || a->has_value_start || a->has_value_stop))
        return cli_usage_error(ctx, "--value, --value-start and --value-stop need --index NAME");
    if (a->index != NULL && a->filter.len > 0)
        return cli_usage_error(ctx, "--index does not take --filter");
    if (a->index != NULL && (a->start.len > 0 || a->stop.len > 0 || a->prefix.len > 0 ||
                             a->so.reversed))
        return cli_usage_error(ctx, "--index does not take --start, --stop, --prefix or "
                                    "--reversed (use --value, --value-start, --value-stop)");
    cmd_read_bind_scan(a, (const char *const *)*specs);
    return -1;
}

static void
cmd_read_free_specs(char **specs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(specs[i]);
    free(specs);
}

/* The index scan's options from the parsed arguments (vals: room for the
 * values, STORE_INDEX_COLUMNS_MAX). */
static void
cmd_read_index_opts(const cmd_read_args *a, kslice *vals, store_index_opts *io)
{
    store_index_opts_init(io);
    io->read = a->so.read;
    io->limit = a->so.limit;
    for (size_t i = 0; i < a->nvalues; i++)
        vals[i] = buf_slice(&a->values[i]);
    io->values = vals;
    io->nvalues = a->nvalues;
    io->has_value_start = a->has_value_start;
    io->value_start = buf_slice(&a->value_start);
    io->has_value_stop = a->has_value_stop;
    io->value_stop = buf_slice(&a->value_stop);
}

int
cmd_scan(const cli_globals *g, int argc, char **argv)
{
    cmd_read_args a;
    cmd_read_args_init(&a);
    char **specs;
    size_t nspecs;
    int rc = cmd_read_parse_scan("scan", cmd_scan_usage_text, argc, argv, &a, &specs, &nspecs);
    block_cache *cache = NULL;
    store_view *v = NULL;
    remote *rem = NULL;
    if (rc < 0) {
        int orc = cmd_read_open(g, "scan", argv[optind], &cache, &v, &rem);
        if (orc != 0)
            rc = orc;
    }
    if (rc < 0) {
        kiln_err err;
        status_clear(&err);
        store_scan *s = NULL;
        remote_scan *rs = NULL;
        store_index_scan *is = NULL;
        filter *flt = NULL;           /* --filter, embedded */
        kiln_cell *fcells = NULL;     /* the cells a filter keeps */
        size_t fcap = 0;
        kiln_status sst = KILN_OK;
        if (a.index != NULL) {
            store_index_opts io;
            kslice vals[STORE_INDEX_COLUMNS_MAX];
            cmd_read_index_opts(&a, vals, &io);
            sst = rem != NULL ? remote_index_scan_open(rem, argv[optind], a.index, &io, &rs, &err)
                              : store_index_scan_open(v, a.index, &io, &is, &err);
        } else {
            const char *fj = a.filter.len > 0 ? (const char *)a.filter.data : NULL;
            store_scan_opts so = a.so;
            if (fj != NULL && rem == NULL) {
                /* the limit counts the rows the filter keeps */
                so.limit = 0;
                sst = filter_parse(fj, a.filter.len, &flt, &err);
            }
            if (sst == KILN_OK)
                sst = rem != NULL ? remote_scan_open(rem, argv[optind], &so, fj, &rs, &err)
                                  : store_scan_open(v, &so, &s, &err);
        }
        if (sst != KILN_OK) {
            rc = cli_report(&err);
        } else {
            cli_out o;
            cli_out_init(&o, STDOUT_FILENO);
            if (a.json) {
                cli_out_str(&o, "{\"Row\":[");
            } else {
                cli_out_str(&o, "ROW");
                cmd_read_pad(&o, 3);
                cli_out_str(&o, "COLUMN+CELL\n");
            }
            uint64_t rows = 0;
            kiln_status st;
            for (;;) {
                store_row r;
                int has;
                st = rs != NULL   ? remote_scan_next(rs, &r, &has, &err)
                     : is != NULL ? store_index_scan_next(is, &r, &has, &err)
                                  : store_scan_next(s, &r, &has, &err);
                if (st != KILN_OK || !has)
                    break;
                int done = 0;
                if (flt != NULL) {
                    if (r.count > fcap) {
                        fcap = r.count;
                        fcells = kiln_realloc(fcells, fcap * sizeof *fcells);
                    }
                    r.count = filter_row(flt, &r, fcells, &done);
                    r.cells = fcells;
                    if (r.count == 0) {
                        if (done)
                            break;
                        continue;
                    }
                }
                if (a.json) {
                    cmd_read_json_row(&o, &r, rows == 0);
                } else {
                    for (size_t i = 0; i < r.count; i++)
                        cmd_read_text_cell(&o, &r.cells[i], 1);
                }
                rows++;
                if (done || (flt != NULL && a.so.limit > 0 && rows >= a.so.limit))
                    break;
            }
            if (a.json)
                cli_out_str(&o, "]}\n");
            else if (st == KILN_OK)
                cli_out_printf(&o, "%" PRIu64 " row(s)\n", rows);
            kiln_err oerr;
            status_clear(&oerr);
            kiln_status ost = cli_out_close(&o, &oerr);
            store_scan_close(s);
            store_index_scan_close(is);
            remote_scan_close(rs);
            rc = st != KILN_OK ? cli_report(&err) : ost != KILN_OK ? cli_report(&oerr) : 0;
        }
        filter_free(flt);
        free(fcells);
    }
    store_view_unref(v);
    block_cache_free(cache);
    remote_close(rem);
    cmd_read_free_specs(specs, nspecs);
    cmd_read_args_free(&a);
    return rc;
}

/* ------------------------------------------------------------------ count */

static const char cmd_count_usage_text[] =
    "Usage: kiln count TABLE [--start ROW] [--stop ROW] [--prefix P]\n"
    "                  [--columns C,...] [--time-range MIN,MAX]\n"
    "\n"
    "Count the rows that have at least one visible cell (HBase shell `count`).\n";

int
cmd_count(const cli_globals *g, int argc, char **argv)
{
    cmd_read_args a;
    cmd_read_args_init(&a);
    char **specs;
    size_t nspecs;
    int rc = cmd_read_parse_scan("count", cmd_count_usage_text, argc, argv, &a, &specs, &nspecs);
    block_cache *cache = NULL;
    store_view *v = NULL;
    remote *rem = NULL;
    if (rc < 0) {
        int orc = cmd_read_open(g, "count", argv[optind], &cache, &v, &rem);
        if (orc != 0)
            rc = orc;
    }
    if (rc < 0) {
        uint64_t rows;
        kiln_err err;
        status_clear(&err);
        a.so.reversed = 0;
        kiln_status cst = rem != NULL ? remote_count(rem, argv[optind], &a.so, &rows, &err)
                                      : store_view_count(v, &a.so, &rows, &err);
        if (cst != KILN_OK) {
            rc = cli_report(&err);
        } else {
            printf("%" PRIu64 " row(s)\n", rows);
            rc = 0;
        }
    }
    store_view_unref(v);
    block_cache_free(cache);
    remote_close(rem);
    cmd_read_free_specs(specs, nspecs);
    cmd_read_args_free(&a);
    return rc;
}

/* ------------------------------------------------------------------ multiget */

static const char cmd_multiget_usage_text[] =
    "Usage: kiln multiget TABLE ROW... [--columns C,...] [--versions N]\n"
    "                     [--time-range MIN,MAX] [--json]\n"
    "\n"
    "Read several rows at once (HBase REST's multiget): the rows that have a\n"
    "visible cell, printed as scan prints them, in the order given; absent rows\n"
    "are left out. ROW and QUALIFIER are in printable form (\\xNN escapes).\n"
    "\n"
    "Options:\n"
    "  --columns C,...        FAMILY or FAMILY:QUALIFIER, comma-separated\n"
    "  --versions N           up to N versions per column (at most the family's)\n"
    "  --time-range MIN,MAX   only cells with MIN <= timestamp < MAX (ms)\n"
    "  --json                 HBase REST CellSet JSON instead of text\n";

typedef struct cmd_multiget_out {
    cli_out *o;
    int json;
    int started;
    uint64_t rows;
} cmd_multiget_out;

/* The heading, once: after the first row is found or at the end, so that a
 * server's "no such table" (known only then) leaves stdout empty. */
static void
cmd_multiget_start(cmd_multiget_out *m)
{
    if (m->started)
        return;
    m->started = 1;
    if (m->json) {
        cli_out_str(m->o, "{\"Row\":[");
    } else {
        cli_out_str(m->o, "ROW");
        cmd_read_pad(m->o, 3);
        cli_out_str(m->o, "COLUMN+CELL\n");
    }
}

static kiln_status
cmd_multiget_row(void *arg, const store_row *r, kiln_err *err)
{
    (void)err;
    cmd_multiget_out *m = arg;
    cmd_multiget_start(m);
    if (m->json) {
        cmd_read_json_row(m->o, r, m->rows == 0);
    } else {
        for (size_t i = 0; i < r->count; i++)
            cmd_read_text_cell(m->o, &r->cells[i], 1);
    }
    m->rows++;
    return KILN_OK;
}

int
cmd_multiget(const cli_globals *g, int argc, char **argv)
{
    static const struct option opts[] = {
        {"columns", required_argument, NULL, 'c'},
        {"versions", required_argument, NULL, 'v'},
        {"time-range", required_argument, NULL, 't'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cmd_read_args a;
    cmd_read_args_init(&a);
    char **specs = NULL;
    size_t nspecs = 0;
    int c, rc = -1;
    while (rc < 0 && (c = cmd_read_getopt("multiget", argc, argv, opts)) != -1) {
        if (c == 'h') {
            fputs(cmd_multiget_usage_text, stdout);
            rc = 0;
            break;
        }
        if (c == '?') {
            rc = EX_USAGE;
            break;
        }
        if (c == 'c') {
            size_t k;
            char **more = cmd_read_specs(optarg, &k);
            specs = kiln_realloc(specs, (nspecs + k) * sizeof *specs);
            memcpy(specs + nspecs, more, k * sizeof *more);
            nspecs += k;
            free(more);
        }
        int orc = cmd_read_scan_option("multiget", c, &a);
        if (orc != 0)
            rc = orc == -1 ? EX_USAGE : orc;
    }
    if (rc < 0 && argc - optind < 2)
        rc = cli_usage_error("multiget", "needs TABLE and at least one ROW");
    size_t nrows = rc < 0 ? (size_t)(argc - optind - 1) : 0;
    kbuf *keys = kiln_calloc(nrows ? nrows : 1, sizeof *keys);
    kslice *rows = kiln_calloc(nrows ? nrows : 1, sizeof *rows);
    for (size_t i = 0; rc < 0 && i < nrows; i++) {
        buf_init(&keys[i]);
        if ((rc = cmd_read_key("multiget", "ROW", argv[optind + 1 + i], &keys[i])) == 0)
            rc = -1;
        if (rc < 0 && keys[i].len == 0)
            rc = cli_usage_error("multiget", "ROW must not be empty");
        rows[i] = buf_slice(&keys[i]);
    }
    block_cache *cache = NULL;
    store_view *v = NULL;
    remote *rem = NULL;
    if (rc < 0) {
        cmd_read_bind_columns(&a, (const char *const *)specs);
        int orc = cmd_read_open(g, "multiget", argv[optind], &cache, &v, &rem);
        if (orc != 0)
            rc = orc;
    }
    if (rc < 0) {
        kiln_err err;
        status_clear(&err);
        cli_out o;
        cli_out_init(&o, STDOUT_FILENO);
        cmd_multiget_out m = {&o, a.json, 0, 0};
        kiln_status st = KILN_OK;
        if (rem != NULL) {
            st = remote_multiget(rem, argv[optind], rows, nrows, &a.so.read, cmd_multiget_row, &m,
                                 &err);
        } else {
            store_row_buf *buf = store_row_buf_new();
            for (size_t i = 0; st == KILN_OK && i < nrows; i++) {
                store_row r;
                st = store_view_get(v, rows[i].p, rows[i].n, &a.so.read, buf, &r, &err);
                if (st == KILN_OK && r.count > 0)
                    st = cmd_multiget_row(&m, &r, &err);
            }
            store_row_buf_free(buf);
        }
        if (st == KILN_OK)
            cmd_multiget_start(&m);
        if (m.started && a.json)
            cli_out_str(&o, "]}\n");
        else if (st == KILN_OK)
            cli_out_printf(&o, "%" PRIu64 " row(s)\n", m.rows);
        kiln_err oerr;
        status_clear(&oerr);
        kiln_status ost = cli_out_close(&o, &oerr);
        rc = st != KILN_OK ? cli_report(&err) : ost != KILN_OK ? cli_report(&oerr) : 0;
    }
    store_view_unref(v);
    block_cache_free(cache);
    remote_close(rem);
    for (size_t i = 0; i < nrows; i++)
        buf_free(&keys[i]);
    free(keys);
    free(rows);
    cmd_read_free_specs(specs, nspecs);
    cmd_read_args_free(&a);
    return rc;
}

/* ------------------------------------------------------------------ exists */

static const char cmd_exists_usage_text[] =
    "Usage: kiln exists TABLE\n"
    "\n"
    "Say whether a table exists (HBase shell `exists`): prints \"Table T does\n"
    "exist\" and exits 0, or \"Table T does not exist\" and exits 1.\n";

int
cmd_exists(const cli_globals *g, int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c = cmd_read_getopt("exists", argc, argv, opts);
    if (c == 'h') {
        fputs(cmd_exists_usage_text, stdout);
        return 0;
    }
    if (c != -1)
        return EX_USAGE;
    if (argc - optind != 1)
        return cli_usage_error("exists", argc - optind < 1 ? "missing TABLE" : "too many arguments");
    const char *name = argv[optind];
    kiln_err err;
    status_clear(&err);
    int exists = 0;
    kiln_status st;
    if (g->server != NULL) {
        remote *rem = NULL;
        st = remote_open(g->server, &rem, &err);
        if (st == KILN_OK)
            st = remote_exists(rem, name, &exists, &err);
        remote_close(rem);
    } else {
        kiln_table *t = NULL;
        st = table_open(g->data_dir, name, &t, &err);
        if (st == KILN_NOT_FOUND) {
            st = KILN_OK;
        } else if (st == KILN_OK) {
            exists = 1;
            table_close(t);
        }
    }
    if (st != KILN_OK)
        return cli_report(&err);
    printf("Table %s does %sexist\n", name, exists ? "" : "not ");
    return exists ? 0 : 1;
}
