/* cmd_write.c -- `kiln put`, `kiln delete` and `kiln incr`: online writes,
 * into the data directory's speed layer (its write-ahead log, which one
 * process holds at a time: a running kiln-server, or this command) or
 * through a server (--server, remote_write.h). Rows, qualifiers and values
 * on the command line take HBase's printable form (\xNN for any byte).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli.h"
#include "cli/remote_write.h"
#include "storage/hfile/cell.h"
#include "storage/store/schema.h"
#include "storage/store/speed.h"
#include "storage/store/store_view.h"

static const char cmd_put_usage_text[] =
    "Usage: kiln put TABLE ROW FAMILY:QUALIFIER VALUE [--ts T] [--durability D]\n"
    "\n"
    "Write one cell (HBase's Put). ROW, QUALIFIER and VALUE are in printable form\n"
    "(\\xNN for any byte). The cell takes timestamp T (milliseconds), else the\n"
    "current time. Embedded, the write goes to DATA's write-ahead log and memstores\n"
    "(the speed layer; `kiln get` and a server see it); with --server it is a REST\n"
    "PUT. Durability D: SYNC_WAL (on disk before the command returns; the table's\n"
    "default unless set), ASYNC_WAL, SKIP_WAL.\n"
    "\n"
    "Exit status: 0 written, 64 usage or an unknown family, 66 no such table, 75 the\n"
    "log is held by a running kiln-server (use --server).\n";

static const char cmd_delete_usage_text[] =
    "Usage: kiln delete TABLE ROW [FAMILY[:QUALIFIER]]... [--ts T] [--durability D]\n"
    "\n"
    "Delete (HBase's Delete): the whole row (every family), a family, or a column\n"
    "(every version). With --ts only the versions at or before T go. Embedded or\n"
    "with --server (REST DELETE), as `kiln put`.\n";

static const char cmd_incr_usage_text[] =
    "Usage: kiln incr TABLE ROW FAMILY:QUALIFIER [DELTA] [--durability D]\n"
    "\n"
    "Add DELTA (default 1; may be negative) to a counter, HBase's Increment: the\n"
    "value is an 8-byte big-endian long, an absent column counts as 0. Prints the\n"
    "new value. Embedded or with --server (REST ?check=increment).\n";

/* Options shared by the three. */
typedef struct cmd_write_args {
    int64_t ts;
    kiln_durability dur;
} cmd_write_args;

/* Parse the options; the positional arguments are left at argv[optind..].
 * -1 to go on, else an exit code. */
static int
cmd_write_options(const char *ctx, const char *usage, int argc, char **argv, cmd_write_args *a,
                  int allow_ts)
{
    static const struct option opts[] = {
        {"ts", required_argument, NULL, 't'},
        {"durability", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    a->ts = CELL_LATEST_TIMESTAMP;
    a->dur = KILN_DUR_DEFAULT;
    opterr = 0;
    int c;
    /* '-' first: options and arguments in any order; a negative DELTA
     * stays an argument when it follows "--" or is a number */
    while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        uint64_t v;
        switch (c) {
        case 'h':
            fputs(usage, stdout);
            return 0;
        case 't':
            if (!allow_ts || cli_parse_u64(optarg, &v) != 0 || v >= (uint64_t)INT64_MAX)
                return cli_usage_error(ctx, allow_ts ? "--ts must be milliseconds, got '%s'"
                                                     : "takes no --ts ('%s')", optarg);
            a->ts = (int64_t)v;
            break;
        case 'd':
            if (mutation_durability_parse(optarg, &a->dur) != 0)
                return cli_usage_error(ctx, "--durability must be SYNC_WAL, ASYNC_WAL or "
                                            "SKIP_WAL, got '%s'", optarg);
            break;
        case ':':
            return cli_usage_error(ctx, "option '%s' needs an argument", argv[optind - 1]);
        default:
            return cli_usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
        }
    }
    return -1;
}

/* Options may also follow the arguments: parse what is after them. */
static int
cmd_write_trailing(const char *ctx, const char *usage, int argc, char **argv, int nargs,
                   cmd_write_args *a, int allow_ts)
{
    int first = optind;
    if (argc - first <= nargs)
        return -1;
    int rest = argc - first - nargs;
    char **sub = kiln_calloc((size_t)rest + 2, sizeof *sub);
    sub[0] = argv[0];
    memcpy(sub + 1, argv + first + nargs, (size_t)rest * sizeof *sub);
    optind = 1;
    cmd_write_args b = *a;
    int rc = cmd_write_options(ctx, usage, rest + 1, sub, &b, allow_ts);
    if (rc < 0 && optind < rest + 1)
        rc = cli_usage_error(ctx, "unexpected argument '%s'", sub[optind]);
    if (rc < 0) {
        if (b.ts != CELL_LATEST_TIMESTAMP)
            a->ts = b.ts;
        if (b.dur != KILN_DUR_DEFAULT)
            a->dur = b.dur;
    }
    free(sub);
    optind = first;
    return rc;
}

/* Printable-form argument into out. */
static int
cmd_write_bytes(const char *ctx, const char *what, const char *text, size_t max, kbuf *out)
{
    buf_reset(out);
    if (cell_from_string_binary(out, text, strlen(text)) != 0)
        return cli_usage_error(ctx, "%s '%s': bad \\xNN escape", what, text);
    if (out->len > max)
        return cli_usage_error(ctx, "%s longer than %zu bytes", what, max);
    return -1;
}

int
cli_speed_open(const cli_globals *g, const char *verb, block_cache **cache, kiln_speed **s)
{
    kiln_err err;
    status_clear(&err);
    *cache = block_cache_new(8u << 20);
    speed_options o;
    speed_options_init(&o);
    o.flush_check_ms = 0;
    kiln_status st = speed_open(g->data_dir, *cache, &o, s, &err);
    if (st == KILN_BUSY) {
        fprintf(stderr, "%s: %s\n%s: a kiln-server holds the write-ahead log of %s: %s "
                "through it with --server HOST:PORT\n", CLI_PROG, err.msg, CLI_PROG,
                g->data_dir, verb);
        block_cache_free(*cache);
        *cache = NULL;
        return EX_TEMPFAIL;
    }
    if (st != KILN_OK) {
        block_cache_free(*cache);
        *cache = NULL;
        return cli_report(&err);
    }
    return -1;
}

void
cli_speed_close(block_cache *cache, kiln_speed *s)
{
    speed_close(s);
    block_cache_free(cache);
}

/* "FAMILY:QUALIFIER" (printable qualifier) into column bytes; split. */
static int
cmd_write_column(const char *ctx, const char *text, int need_qualifier, kbuf *col,
                 char *family)
{
    const char *colon = strchr(text, ':');
    size_t fl = colon ? (size_t)(colon - text) : strlen(text);
    if (fl == 0 || fl > SCHEMA_FAMILY_NAME_MAX || !schema_family_name_ok(text, fl) ||
        (need_qualifier && colon == NULL))
        return cli_usage_error(ctx, "bad column '%s' (%s)", text,
                               need_qualifier ? "FAMILY:QUALIFIER" : "FAMILY[:QUALIFIER]");
    memcpy(family, text, fl);
    family[fl] = '\0';
    buf_reset(col);
    buf_append(col, text, fl);
    if (colon != NULL) {
        buf_append_u8(col, ':');
        if (cell_from_string_binary(col, colon + 1, strlen(colon + 1)) != 0)
            return cli_usage_error(ctx, "column '%s': bad \\xNN escape", text);
    }
    return -1;
}

int
cmd_put(const cli_globals *g, int argc, char **argv)
{
    cmd_write_args a;
    int rc = cmd_write_options("put", cmd_put_usage_text, argc, argv, &a, 1);
    if (rc >= 0)
        return rc;
    if ((rc = cmd_write_trailing("put", cmd_put_usage_text, argc, argv, 4, &a, 1)) >= 0)
        return rc;
    if (argc - optind < 4)
        return cli_usage_error("put", "needs TABLE ROW FAMILY:QUALIFIER VALUE");
    const char *table = argv[optind];
    kbuf row = KBUF_INIT, col = KBUF_INIT, val = KBUF_INIT;
    char family[SCHEMA_FAMILY_NAME_MAX + 1];
    if ((rc = cmd_write_bytes("put", "ROW", argv[optind + 1], CELL_ROW_MAX, &row)) < 0 &&
        row.len == 0)
        rc = cli_usage_error("put", "ROW must not be empty");
    if (rc < 0)
        rc = cmd_write_column("put", argv[optind + 2], 1, &col, family);
    if (rc < 0)
        rc = cmd_write_bytes("put", "VALUE", argv[optind + 3], UINT32_MAX / 2, &val);
    kiln_err err;
    status_clear(&err);
    if (rc < 0 && g->server != NULL) {
        remote_writer *w;
        kiln_status st = remote_writer_open(g->server, &w, &err);
        if (st == KILN_OK)
            st = remote_put(w, table, buf_slice(&row), buf_slice(&col), a.ts, buf_slice(&val),
                            a.dur, &err);
        remote_writer_close(w);
        rc = st == KILN_OK ? 0 : cli_report(&err);
    } else if (rc < 0) {
        block_cache *cache;
        kiln_speed *s;
        if ((rc = cli_speed_open(g, "write", &cache, &s)) < 0) {
            size_t fl = strlen(family);
            kiln_mutation m;
            mutation_init(&m, row.data, row.len);
            mutation_put(&m, family, fl, col.data + fl + 1, col.len - fl - 1, a.ts, val.data,
                         val.len);
            rc = speed_mutate(s, table, &m, 1, a.dur, &err) == KILN_OK ? 0 : cli_report(&err);
            mutation_free(&m);
            cli_speed_close(cache, s);
        }
    }
    buf_free(&row);
    buf_free(&col);
    buf_free(&val);
    return rc;
}

int
cmd_delete(const cli_globals *g, int argc, char **argv)
{
    cmd_write_args a;
    int rc = cmd_write_options("delete", cmd_delete_usage_text, argc, argv, &a, 1);
    if (rc >= 0)
        return rc;
    /* options after the arguments: those starting with "--" */
    int nargs = 0;
    while (optind + nargs < argc && strncmp(argv[optind + nargs], "--", 2) != 0)
        nargs++;
    if ((rc = cmd_write_trailing("delete", cmd_delete_usage_text, argc, argv, nargs, &a, 1)) >= 0)
        return rc;
    if (nargs < 2)
        return cli_usage_error("delete", "needs TABLE and ROW");
    const char *table = argv[optind];
    kbuf row = KBUF_INIT, col = KBUF_INIT;
    if ((rc = cmd_write_bytes("delete", "ROW", argv[optind + 1], CELL_ROW_MAX, &row)) < 0 &&
        row.len == 0)
        rc = cli_usage_error("delete", "ROW must not be empty");
    kiln_err err;
    status_clear(&err);
    remote_writer *w = NULL;
    block_cache *cache = NULL;
    kiln_speed *s = NULL;
    kiln_mutation m;
    mutation_init(&m, row.data, row.len);
    if (rc < 0 && g->server != NULL) {
        if (remote_writer_open(g->server, &w, &err) != KILN_OK)
            rc = cli_report(&err);
    } else if (rc < 0) {
        rc = cli_speed_open(g, "write", &cache, &s);
    }
    if (rc < 0 && nargs == 2) {
        /* the row: every family (the server lists them; embedded, the schema) */
        if (w != NULL) {
            if (remote_delete(w, table, buf_slice(&row), kslice_make(NULL, 0), a.ts, a.dur,
                              &err) != KILN_OK)
                rc = cli_report(&err);
        } else {
            store_view *v;
            if (speed_view(s, table, &v, &err) != KILN_OK) {
                rc = cli_report(&err);
            } else {
                const kiln_schema *sc = store_view_schema(v);
                for (size_t f = 0; f < sc->family_count; f++)
                    mutation_delete(&m, CELL_TYPE_DELETE_FAMILY, sc->families[f].name,
                                    strlen(sc->families[f].name), NULL, 0, a.ts);
                store_view_unref(v);
            }
        }
    }
    for (int i = 2; rc < 0 && i < nargs; i++) {
        char family[SCHEMA_FAMILY_NAME_MAX + 1];
        if ((rc = cmd_write_column("delete", argv[optind + i], 0, &col, family)) >= 0)
            break;
        size_t fl = strlen(family);
        if (w != NULL) {
            if (remote_delete(w, table, buf_slice(&row), buf_slice(&col), a.ts, a.dur, &err) !=
                KILN_OK)
                rc = cli_report(&err);
        } else if (col.len == fl) {
            mutation_delete(&m, CELL_TYPE_DELETE_FAMILY, family, fl, NULL, 0, a.ts);
        } else {
            mutation_delete(&m, CELL_TYPE_DELETE_COLUMN, family, fl, col.data + fl + 1,
                            col.len - fl - 1, a.ts);
        }
    }
    if (rc < 0 && s != NULL)
        rc = speed_mutate(s, table, &m, 1, a.dur, &err) == KILN_OK ? 0 : cli_report(&err);
    if (rc < 0)
        rc = 0;
    mutation_free(&m);
    remote_writer_close(w);
    if (s != NULL)
        cli_speed_close(cache, s);
    buf_free(&row);
    buf_free(&col);
    return rc;
}

int
cmd_incr(const cli_globals *g, int argc, char **argv)
{
    cmd_write_args a;
    int rc = cmd_write_options("incr", cmd_incr_usage_text, argc, argv, &a, 0);
    if (rc >= 0)
        return rc;
    int nargs = argc - optind >= 4 && strncmp(argv[optind + 3], "--", 2) != 0 ? 4 : 3;
    if ((rc = cmd_write_trailing("incr", cmd_incr_usage_text, argc, argv, nargs, &a, 0)) >= 0)
        return rc;
    if (argc - optind < 3)
        return cli_usage_error("incr", "needs TABLE ROW FAMILY:QUALIFIER [DELTA]");
    int64_t delta = 1;
    if (nargs == 4) {
        char *end;
        long long d = strtoll(argv[optind + 3], &end, 10);
        if (*end != '\0' || end == argv[optind + 3])
            return cli_usage_error("incr", "DELTA must be an integer, got '%s'",
                                   argv[optind + 3]);
        delta = d;
    }
    const char *table = argv[optind];
    kbuf row = KBUF_INIT, col = KBUF_INIT;
    char family[SCHEMA_FAMILY_NAME_MAX + 1];
    if ((rc = cmd_write_bytes("incr", "ROW", argv[optind + 1], CELL_ROW_MAX, &row)) < 0 &&
        row.len == 0)
        rc = cli_usage_error("incr", "ROW must not be empty");
    if (rc < 0)
        rc = cmd_write_column("incr", argv[optind + 2], 1, &col, family);
    kiln_err err;
    status_clear(&err);
    int64_t v = 0;
    if (rc < 0 && g->server != NULL) {
        remote_writer *w;
        kiln_status st = remote_writer_open(g->server, &w, &err);
        if (st == KILN_OK)
            st = remote_incr(w, table, buf_slice(&row), buf_slice(&col), delta, a.dur, &v, &err);
        remote_writer_close(w);
        rc = st == KILN_OK ? -1 : cli_report(&err);
    } else if (rc < 0) {
        block_cache *cache;
        kiln_speed *s;
        if ((rc = cli_speed_open(g, "write", &cache, &s)) < 0) {
            size_t fl = strlen(family);
            speed_incr in = {family, col.data + fl + 1, col.len - fl - 1, delta};
            if (speed_increment(s, table, row.data, row.len, &in, 1, a.dur, &v, &err) != KILN_OK)
                rc = cli_report(&err);
            cli_speed_close(cache, s);
        }
    }
    if (rc < 0) {
        printf("%" PRId64 "\n", v);
        rc = fflush(stdout) == 0 ? 0 : EX_IOERR;
    }
    buf_free(&row);
    buf_free(&col);
    return rc;
}
