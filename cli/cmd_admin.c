/* cmd_admin.c -- `kiln flush | compact | split TABLE`: the speed layer's
 * maintenance (serving/speed_admin.h), on the data directory (its
 * write-ahead log taken as `kiln put` takes it: refused with exit 75 while
 * a kiln-server holds it) or through a server's POST /TABLE/_admin/OP
 * (--server). Both print the same lines from the same result.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/remote_write.h"
#include "serving/speed_admin.h"

static const char cmd_flush_usage_text[] =
    "Usage: kiln flush TABLE\n"
    "\n"
    "Write the table's online writes (its memstores, replayed from the\n"
    "write-ahead log) to HFiles, one per region and family, published as a new\n"
    "version; the log files no table needs any more are deleted. Embedded, on\n"
    "DATA (refused while a kiln-server holds the log: use --server), or with\n"
    "--server through kiln-server's POST /TABLE/_admin/flush. Prints the version\n"
    "published, the cells flushed and the table's files after it.\n"
    "\n"
    "Exit status: 0 done (or nothing to flush), 64 usage, 66 no such table, 75\n"
    "the log is held by a running kiln-server (use --server).\n";

static const char cmd_compact_usage_text[] =
    "Usage: kiln compact TABLE [--major]\n"
    "\n"
    "Merge the files of each region and family, bulk-loaded files and\n"
    "speed-layer files never together, and publish the result as a new version\n"
    "(readers go on with the old one meanwhile). Minor (default): the run of\n"
    "files the compaction policy picks, delete markers kept. --major: flush the\n"
    "memstores first, then merge every file of each kind; where a region and\n"
    "family holds one kind only, delete markers and what they mask, expired\n"
    "cells and versions past the family's VERSIONS go. Writes retired by a\n"
    "covering load are dropped for good. Embedded or with --server (POST\n"
    "/TABLE/_admin/compact[?major=true]), as `kiln flush`. Prints the version\n"
    "published, files and cells in and out.\n"
    "\n"
    "Exit status: as `kiln flush`.\n";

static const char cmd_split_usage_text[] =
    "Usage: kiln split TABLE [--max-bytes N]\n"
    "\n"
    "Split every region whose files pass N bytes (K, M, G suffixes; default:\n"
    "the table's max_region_bytes property, and without one nothing splits) at\n"
    "its middle row, each split published as a new version; reads see the same\n"
    "rows before and after. Embedded or with --server (POST\n"
    "/TABLE/_admin/split[?max_bytes=N]), as `kiln flush`. Prints the splits and\n"
    "the regions before and after.\n"
    "\n"
    "Exit status: as `kiln flush`.\n";

static void
cmd_admin_print(cli_out *o, const char *table, const speed_admin_result *r)
{
    int changed = r->version != r->version_before;
    switch (r->op) {
    case SPEED_ADMIN_FLUSH:
        if (!changed) {
            cli_out_printf(o, "Nothing to flush in %s (version %" PRIu64 ")\n", table,
                           r->version);
            return;
        }
        cli_out_printf(o,
                       "Flushed %s as version %" PRIu64 " (was %" PRIu64 "): %" PRIu64
                       " cell(s) of online writes (%" PRIu64 " memstore byte(s))\n",
                       table, r->version, r->version_before, r->cells, r->bytes);
        break;
    case SPEED_ADMIN_COMPACT:
        if (r->compact.compactions == 0) {
            /* a major compaction flushes first: that may be all it did */
            cli_out_printf(o, "Nothing to compact in %s (%s, version %" PRIu64 "%s)\n", table,
                           r->major ? "major" : "minor", r->version,
                           changed ? ", after flushing the memstores" : "");
            if (!changed)
                return;
            break;
        }
        cli_out_printf(o,
                       "Compacted %s (%s) as version %" PRIu64 " (was %" PRIu64 "): %" PRIu64
                       " compaction(s) of %" PRIu64 " file(s), cells %" PRIu64 " -> %" PRIu64
                       ", %" PRIu64 " byte(s) written\n",
                       table, r->major ? "major" : "minor", r->version, r->version_before,
                       r->compact.compactions, r->compact.files_in, r->compact.cells_in,
                       r->compact.cells_out, r->compact.bytes_out);
        break;
    case SPEED_ADMIN_SPLIT:
        if (r->splits == 0) {
            cli_out_printf(o, "No region of %s to split (version %" PRIu64 ", %" PRIu64
                           " region(s))\n", table, r->version, r->regions);
            return;
        }
        cli_out_printf(o,
                       "Split %s as version %" PRIu64 " (was %" PRIu64 "): %" PRIu64
                       " split(s), regions %" PRIu64 " -> %" PRIu64 "\n",
                       table, r->version, r->version_before, r->splits, r->regions_before,
                       r->regions);
        break;
    }
    cli_out_printf(o,
                   "  %" PRIu64 " file(s) before, %" PRIu64 " after (%" PRIu64
                   " from the speed layer) in %" PRIu64 " region(s)\n",
                   r->files_before, r->files, r->speed_files, r->regions);
}

/* The three commands: options, then the operation embedded or remote. */
static int
cmd_admin(const cli_globals *g, int argc, char **argv, speed_admin_op op, const char *usage)
{
    static const struct option opts[] = {
        {"major", no_argument, NULL, 'M'},
        {"max-bytes", required_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *ctx = speed_admin_op_name(op);
    int major = 0;
    uint64_t max_bytes = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'M':
            if (op != SPEED_ADMIN_COMPACT)
                return cli_usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
            major = 1;
            break;
        case 'b':
            if (op != SPEED_ADMIN_SPLIT)
                return cli_usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
            if (cli_parse_size(optarg, &max_bytes) != 0 || max_bytes == 0)
                return cli_usage_error(ctx, "--max-bytes must be a positive size, got '%s'",
                                       optarg);
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        case ':':
            return cli_usage_error(ctx, "option '%s' needs an argument", argv[optind - 1]);
        default:
            return cli_usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error(ctx, argc - optind < 1 ? "needs TABLE" : "too many arguments");
    const char *table = argv[optind];
    speed_admin_result r;
    kiln_err err;
    status_clear(&err);
    int rc;
    if (g->server != NULL) {
        remote_writer *w;
        kiln_status st = remote_writer_open(g->server, &w, &err);
        if (st == KILN_OK)
            st = remote_admin(w, table, op, major, max_bytes, &r, &err);
        remote_writer_close(w);
        rc = st == KILN_OK ? -1 : cli_report(&err);
    } else {
        block_cache *cache;
        kiln_speed *s;
        if ((rc = cli_speed_open(g, ctx, &cache, &s)) < 0) {
            if (speed_admin_run(s, table, op, major, max_bytes, &r, &err) != KILN_OK)
                rc = cli_report(&err);
            cli_speed_close(cache, s);
        }
    }
    if (rc >= 0)
        return rc;
    cli_out o;
    cli_out_init(&o, STDOUT_FILENO);
    cmd_admin_print(&o, table, &r);
    status_clear(&err);
    return cli_out_close(&o, &err) == KILN_OK ? 0 : cli_report(&err);
}

int
cmd_flush(const cli_globals *g, int argc, char **argv)
{
    return cmd_admin(g, argc, argv, SPEED_ADMIN_FLUSH, cmd_flush_usage_text);
}

int
cmd_compact(const cli_globals *g, int argc, char **argv)
{
    return cmd_admin(g, argc, argv, SPEED_ADMIN_COMPACT, cmd_compact_usage_text);
}

int
cmd_split(const cli_globals *g, int argc, char **argv)
{
    return cmd_admin(g, argc, argv, SPEED_ADMIN_SPLIT, cmd_split_usage_text);
}
