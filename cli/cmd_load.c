/* cmd_load.c -- `kiln load TABLE JOB_OUTPUT_DIR`: the atomic bulk load
 * (bulkload/bulkload.h). Prints the new version with what was staged and the
 * time of each step; --dry-run prints the plan (each HFile, the table or
 * index it belongs to, its family, the regions its rows span and what the
 * load would do with it) and writes nothing; --move moves the job's HFiles
 * into the store instead of copying them.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "bulkload/bulkload.h"
#include "cli/cli.h"
#include "storage/base/env.h"
#include "storage/query/json.h"

static const char cmd_load_usage_text[] =
    "Usage: kiln load TABLE JOB_OUTPUT_DIR [--replace | --append] [--dry-run]\n"
    "                 [--move] [--no-split] [--verify] [--wait[=SECONDS]]\n"
    "                 [--max-open-files N] [--covers-until TS|now|report]\n"
    "\n"
    "Publish a job's HFile output (FAMILY/HFILE directories and _SUCCESS) as a new\n"
    "view version of TABLE, all regions and families at once: readers see the\n"
    "old version or the new one, never a mix, at any crash point. Output without\n"
    "_SUCCESS is refused. Every HFile is checked (trailer, index and bloom\n"
    "checksums, key order, family) before anything is written; the store gets\n"
    "its own copy of each file (a reflink where the file system supports it),\n"
    "so changing the job output later cannot change a loaded version (with\n"
    "--move they are moved into the store instead). A file whose rows\n"
    "straddle a region boundary is rewritten as one file per region.\n"
    "Loading output that the current version already holds does nothing.\n"
    "Secondary indexes the job built (JOB_OUTPUT_DIR/_index/NAME/) are loaded\n"
    "with the table, in the same atomic step; a replace drops the indexes the\n"
    "job did not build, an append must build the current version's indexes.\n"
    "\n"
    "Options:\n"
    "  --replace         the output becomes the whole new view (default)\n"
    "  --append          the output joins the current version's files; on equal\n"
    "                    cells the newer load wins (HBase bulk-load semantics)\n"
    "  --dry-run         check and print the plan; change nothing\n"
    "  --move            move the job output's HFiles into the store instead of\n"
    "                    copying them (HBase completebulkload): each is hard-linked\n"
    "                    into the store, so load time does not grow with the data\n"
    "                    size, and once the new version is published and durable\n"
    "                    its name in the job output is removed. The output\n"
    "                    directory keeps _SUCCESS and _job.json (and a _MOVED\n"
    "                    record) but no HFiles. The constant-time path needs the\n"
    "                    output on the store's file system; elsewhere a file is\n"
    "                    copied (or reflinked), then removed. Files that straddle a\n"
    "                    region boundary are split as usual, then removed. After a\n"
    "                    crash, loading the same output with --move again reports\n"
    "                    it already loaded and finishes the move; if removing the\n"
    "                    names fails after publishing, a warning says so\n"
    "  --no-split        refuse files that straddle a region boundary\n"
    "  --verify          also read and check every block of every file (slower)\n"
    "  --wait[=SECONDS]  wait for another load of the table to finish\n"
    "                    (default: fail at once with exit status 75)\n"
    "  --max-open-files N  keep at most N HFiles open at once (default: half the\n"
    "                    open-file limit, ulimit -n); others are reopened as needed\n"
    "  --covers-until TS  a covering load: the output already holds what online\n"
    "                    writes made before it with timestamps <= TS changed, so\n"
    "                    those writes are retired (no longer read) with the old\n"
    "                    batch view; later writes, and earlier writes stamped\n"
    "                    after TS, stay visible. TS: milliseconds since the\n"
    "                    epoch, `now`, or `report`: the job's clock (job_time_ms\n"
    "                    of JOB_OUTPUT_DIR/_job.json, taken before it read its\n"
    "                    input). See docs/speed-layer.md\n"
    "\n"
    "Exit status: 0 loaded (or already loaded); 3 the new version is published\n"
    "and current, but the directory fsync after publishing it failed, so it may\n"
    "not survive a crash (check the disk, then `kiln views TABLE`); 64 usage;\n"
    "65 a bad HFile; 66 no table, job output or _SUCCESS; 74 I/O error, the\n"
    "previous version stays current; 75 the table is locked.\n";

/* Exit status of a load that published but could not confirm durability. */
#define CMD_LOAD_EXIT_UNCONFIRMED 3

/* Crash-test instrumentation, off unless the environment asks for it:
 * KILN_TEST_STEP_FD=N writes each step of the load (bulkload.h) as one line
 * to descriptor N; KILN_TEST_STEP_STOP=STEP then stops the process (SIGSTOP)
 * right after announcing STEP, so a test can kill it at a known point. */
typedef struct cmd_load_steps {
    int fd;
    const char *stop;
} cmd_load_steps;

static void
cmd_load_step(void *arg, const char *step)
{
    const cmd_load_steps *s = arg;
    char line[160];
    int n = snprintf(line, sizeof line, "%s\n", step);
    if (n > 0 && (size_t)n < sizeof line && write(s->fd, line, (size_t)n) < 0) {
        /* the test went away; carry on without it */
    }
    if (s->stop != NULL && strcmp(s->stop, step) == 0)
        raise(SIGSTOP);
}

/* --covers-until's value: ms, "now", or "report" (the job report's
 * job_time_ms). -1 to go on, else an exit code. */
static int
cmd_load_covers(const char *arg, const char *job, int64_t *out)
{
    uint64_t v;
    if (strcmp(arg, "now") == 0) {
        *out = table_now_ms();
        return -1;
    }
    if (strcmp(arg, "report") != 0) {
        if (cli_parse_u64(arg, &v) != 0 || v >= (uint64_t)INT64_MAX)
            return cli_usage_error("load", "--covers-until takes milliseconds since the epoch, "
                                           "now or report, got '%s'", arg);
        *out = (int64_t)v;
        return -1;
    }
    char path[PATH_MAX];
    kbuf text = KBUF_INIT;
    kiln_err err;
    status_clear(&err);
    if ((size_t)snprintf(path, sizeof path, "%s/%s", job, BULKLOAD_JOB_REPORT) >= sizeof path) {
        status_set(&err, KILN_INVALID, "%s: path too long", job);
    } else {
        FILE *f = fopen(path, "rb");
        if (f == NULL) {
            status_set(&err, KILN_NOT_FOUND, "%s: %s (--covers-until report needs the job's "
                       "report)", path, strerror(errno));
        } else {
            char chunk[4096];
            size_t n;
            while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
                buf_append(&text, chunk, n);
            if (ferror(f))
                status_set(&err, KILN_IO, "%s: read failed", path);
            fclose(f);
        }
    }
    json_doc *d = NULL;
    int64_t t = -1;
    if (err.code == KILN_OK) {
        kiln_err jerr;
        status_clear(&jerr);
        if (json_parse((const char *)text.data, text.len, &d, &jerr) != KILN_OK)
            status_set(&err, KILN_CORRUPTION, "%s: %s", path, jerr.msg);
        else if (json_int(json_get(json_root(d), "job_time_ms"), &t) != 0 || t < 0)
            status_set(&err, KILN_CORRUPTION, "%s: no job_time_ms (the job's clock) to cover "
                       "until", path);
    }
    json_doc_free(d);
    buf_free(&text);
    if (err.code != KILN_OK)
        return cli_report(&err);
    *out = t;
    return -1;
}

static void
cmd_load_region_range(char *out, size_t cap, const bulkload_file *f)
{
    if (f->action == BULKLOAD_SKIP_EMPTY)
        snprintf(out, cap, "-");
    else if (f->region_first == f->region_last)
        snprintf(out, cap, "%zu", f->region_first);
    else
        snprintf(out, cap, "%zu-%zu", f->region_first, f->region_last);
}

static void
cmd_load_plan(cli_out *o, const bulkload_result *r)
{
    cli_out_str(o, "FILE\tTABLE\tFAMILY\tREGIONS\tACTION\tCELLS\tBYTES\n");
    for (size_t i = 0; i < r->file_count; i++) {
        const bulkload_file *f = &r->files[i];
        char regions[48], which[SCHEMA_NAME_MAX + 16];
        cmd_load_region_range(regions, sizeof regions, f);
        if (f->table == 0)
            snprintf(which, sizeof which, "table");
        else
            snprintf(which, sizeof which, "index %s", r->indexes[f->table - 1]);
        cli_out_printf(o, "%s\t%s\t%s\t%s\t%s\t%" PRIu64 "\t%" PRIu64 "\n", f->path, which,
                       f->family, regions, bulkload_action_name(f->action), f->entries, f->size);
    }
}

int
cmd_load(const cli_globals *g, int argc, char **argv)
{
    static const struct option opts[] = {
        {"replace", no_argument, NULL, 'r'},
        {"append", no_argument, NULL, 'a'},
        {"dry-run", no_argument, NULL, 'n'},
        {"no-split", no_argument, NULL, 's'},
        {"verify", no_argument, NULL, 'v'},
        {"move", no_argument, NULL, 'M'},
        {"wait", optional_argument, NULL, 'w'},
        {"max-open-files", required_argument, NULL, 'm'},
        {"covers-until", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bulkload_options bo;
    bulkload_options_init(&bo);
    int modes = 0;
    const char *covers = NULL;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        uint64_t secs;
        switch (c) {
        case 'r':
            bo.mode = BULKLOAD_REPLACE;
            modes |= 1;
            break;
        case 'a':
            bo.mode = BULKLOAD_APPEND;
            modes |= 2;
            break;
        case 'n':
            bo.dry_run = 1;
            break;
        case 's':
            bo.no_split = 1;
            break;
        case 'v':
            bo.verify = 1;
            break;
        case 'M':
            bo.move = 1;
            break;
        case 'w':
            if (optarg == NULL)
                bo.lock_wait_ms = -1;
            else if (cli_parse_u64(optarg, &secs) != 0 || secs > 86400)
                return cli_usage_error("load", "--wait takes seconds (0..86400)");
            else
                bo.lock_wait_ms = (long)secs * 1000;
            break;
        case 'm':
            if (cli_parse_u64(optarg, &secs) != 0 || secs < 8 || secs > 1000000)
                return cli_usage_error("load", "--max-open-files takes 8..1000000");
            env_set_max_open_files((long)secs);
            break;
        case 'c':
            covers = optarg;
            break;
        case 'h':
            fputs(cmd_load_usage_text, stdout);
            return 0;
        case ':':
            return cli_usage_error("load", "option '%s' needs an argument", argv[optind - 1]);
        default:
            return cli_usage_error("load", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (modes == 3)
        return cli_usage_error("load", "--replace and --append exclude each other");
    if (argc - optind != 2)
        return cli_usage_error("load", argc - optind < 2 ? "needs TABLE and JOB_OUTPUT_DIR"
                                                         : "too many arguments");
    if (g->server != NULL)
        return cli_usage_error("load", "--server is not supported by load; use --data DIR");
    const char *table = argv[optind], *job = argv[optind + 1];
    if (covers != NULL) {
        int rc = cmd_load_covers(covers, job, &bo.covers_until);
        if (rc >= 0)
            return rc;
        bo.covers = 1;
    }

    cmd_load_steps steps = {-1, getenv("KILN_TEST_STEP_STOP")};
    const char *step_fd = getenv("KILN_TEST_STEP_FD");
    uint64_t fdn;
    if (step_fd != NULL && cli_parse_u64(step_fd, &fdn) == 0 && fdn > 2 && fdn < 1024) {
        steps.fd = (int)fdn;
        bo.step = cmd_load_step;
        bo.step_arg = &steps;
    }

    bulkload_result r;
    kiln_err err;
    status_clear(&err);
    kiln_status st = bulkload_run(g->data_dir, table, job, &bo, &r, &err);
    if (st != KILN_OK && r.unconfirmed) {
        fprintf(stderr,
                "kiln: load: version %" PRIu64 " of %s is published and current, but its "
                "durability could not be confirmed (a crash may bring back version %" PRIu64
                "): %s\n",
                r.version, table, r.parent, err.msg);
        bulkload_result_free(&r);
        return CMD_LOAD_EXIT_UNCONFIRMED;
    }
    if (st != KILN_OK) {
        bulkload_result_free(&r);
        return cli_report(&err);
    }
    cli_out o;
    cli_out_init(&o, STDOUT_FILENO);
    char canon[SCHEMA_NAME_MAX + 1];
    if (schema_name_canon(table, canon, NULL) != KILN_OK)
        snprintf(canon, sizeof canon, "%s", table);
    if (bo.dry_run) {
        cmd_load_plan(&o, &r);
        cli_out_printf(&o,
                       "Dry run: %zu file(s), %" PRIu64 " cells, %" PRIu64
                       " bytes would be loaded into %s (%s, current version %" PRIu64
                       ")%s; nothing was changed\n",
                       r.file_count - r.skipped, r.cells, r.bytes, canon,
                       bo.mode == BULKLOAD_APPEND ? "append" : "replace", r.parent,
                       r.already_loaded ? "; but this output is already loaded" : "");
    } else if (r.already_loaded && bo.move) {
        cli_out_printf(&o,
                       "Already loaded: %s is part of %s version %" PRIu64
                       " (loaded in version %" PRIu64 "); move finished: %zu HFile name(s) "
                       "removed from the job output\n",
                       job, canon, r.parent, r.loaded_in, r.sources_removed);
    } else if (r.already_loaded) {
        cli_out_printf(&o,
                       "Already loaded: %s is part of %s version %" PRIu64
                       " (loaded in version %" PRIu64 "); nothing was done%s\n",
                       job, canon, r.parent, r.loaded_in,
                       r.moved_in != 0 && r.file_count > 0
                           ? " (a move of it was cut short: load again with --move to finish "
                             "it)"
                           : "");
    } else {
        cli_out_printf(&o,
                       "Loaded %s into %s as version %" PRIu64 " (%s, parent %" PRIu64 ")\n",
                       job, canon, r.version, bo.mode == BULKLOAD_APPEND ? "append" : "replace",
                       r.parent);
        cli_out_printf(&o,
                       "  %zu HFile(s): %zu reflinked, %zu copied, %zu moved, %zu split into %zu, "
                       "%zu empty skipped; %zu region(s), %" PRIu64 " cells, %" PRIu64
                       " bytes\n",
                       r.file_count, r.linked, r.copied, r.moved, r.split, r.pieces, r.skipped,
                       r.regions_loaded, r.cells, r.bytes);
        if (bo.move)
            cli_out_printf(&o,
                           "  move: %zu hard-linked, %zu copied or reflinked where a link was "
                           "not possible (another file system); %zu HFile name(s) removed "
                           "from the job output\n",
                           r.moved, r.move_fallbacks, r.sources_removed);
        if (bo.covers)
            cli_out_printf(&o, "  covers online writes made before it with timestamps <= %"
                           PRId64 " (they are retired)\n", bo.covers_until);
        if (r.index_count > 0) {
            cli_out_printf(&o, "  %zu index(es) published with the table:", r.index_count);
            for (size_t i = 0; i < r.index_count; i++)
                cli_out_printf(&o, " %s", r.indexes[i]);
            cli_out_str(&o, "\n");
        }
        cli_out_printf(&o,
                       "  time %.1f ms: check %.1f, stage %.1f, publish %.1f, cleanup %.1f "
                       "(removed %" PRIu64 " old file(s), %" PRIu64 " version(s))\n",
                       r.total_ms, r.check_ms, r.stage_ms, r.publish_ms, r.gc_ms,
                       r.gc.files_removed, r.gc.manifests_removed);
    }
    int rc = 0;
    if (cli_out_close(&o, &err) != KILN_OK)
        rc = cli_report(&err);
    if (r.gc_err.code != KILN_OK)
        fprintf(stderr,
                "kiln: load: warning: version %" PRIu64
                " is published, but removing old files failed (the next load retries): %s\n",
                r.version, r.gc_err.msg);
    if (r.move_err.code != KILN_OK)
        fprintf(stderr,
                "kiln: load: warning: version %" PRIu64
                " is published, but removing the job output's HFiles failed (load it again "
                "with --move to finish the move): %s\n",
                r.version, r.move_err.msg);
    bulkload_result_free(&r);
    return rc;
}
