/* cmd_table.c -- `kiln create | list | describe | regions | views | rollback`:
 * the table and view-version commands of the embedded client, working on the
 * data directory's region store (storage/table.h, storage/store_view.h).
 * Output follows the HBase shell where HBase has the command (create, list,
 * describe) and is a tab-separated table with a header line otherwise.
 * list, describe and regions also work through a kiln-server (--server,
 * cli/remote.h) with the same output.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "storage/hfile/cell.h"
#include "storage/base/env.h"
#include "storage/store/manifest.h"
#include "storage/store/mutation.h"
#include "storage/store/schema.h"
#include "storage/store/store_index_def.h"
#include "storage/store/store_view.h"
#include "storage/store/table.h"

/* ------------------------------------------------------------------ shared */

/* getopt_long from a clean state; usage errors for unknown options and
 * missing arguments. Returns the option, -1 at the end, '?' after an error. */
static int
cmd_table_getopt(const char *ctx, int argc, char **argv, const struct option *opts)
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

static int
cmd_table_no_server(const cli_globals *g, const char *ctx)
{
    if (g->server == NULL)
        return 0;
    cli_usage_error(ctx, "--server is not supported by this command yet; use --data DIR");
    return 1;
}

/* "2026-11-21T13:20:00.123Z" */
static void
cmd_table_time(int64_t ms, char *out, size_t cap)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(out, cap, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, cap - n, ".%03dZ", (int)(ms % 1000));
}

static int
cmd_table_finish(cli_out *o)
{
    kiln_err err;
    status_clear(&err);
    if (cli_out_close(o, &err) != KILN_OK)
        return cli_report(&err);
    return 0;
}

/* ------------------------------------------------------------------ create */

static const char cmd_create_usage_text[] =
    "Usage: kiln create TABLE --family NAME[:key=value,...]... [--split KEY]...\n"
    "                   [--splits-file FILE] [--keep-versions N] [--salt-buckets N]\n"
    "                   [--property KEY=VALUE]...\n"
    "\n"
    "Create a table (namespace:table; the namespace defaults to 'default') with\n"
    "its column families and the split keys that cut it into regions. Region i\n"
    "holds rows [split(i-1), split(i)); N split keys make N+1 regions.\n"
    "\n"
    "Family settings (defaults in brackets):\n"
    "  versions=N          versions kept per column [1]\n"
    "  ttl=SECONDS|forever cells older than this are never returned [forever]\n"
    "  compression=C       snappy, none, gz, zstd or lz4 [snappy]\n"
    "  bloom=B             row, rowcol or none [row]\n"
    "  blocksize=N         HFile block size, K/M suffix allowed [65536]\n"
    "\n"
    "Options:\n"
    "  --family SPEC       a column family (repeat for more)\n"
    "  --split KEY         a split key in printable form (\\xNN escapes); repeatable\n"
    "  --splits-file FILE  split keys, one a line, in printable form\n"
    "  --keep-versions N   view versions kept for rollback [2]\n"
    "  --salt-buckets N    salt the table (1..256): each row is stored under a hidden\n"
    "                      byte hash(row) mod N, so sequential keys spread over N\n"
    "                      buckets; get, scan and count hide it and return rows in\n"
    "                      key order. Without --split the table gets one region per\n"
    "                      bucket (split keys \\x01 .. N-1); split keys given are\n"
    "                      stored keys, bucket byte first.\n"
    "  --property KEY=VALUE  a table property; repeatable. Kiln reads durability\n"
    "                      (SYNC_WAL, ASYNC_WAL or SKIP_WAL: online writes'\n"
    "                      default) and max_region_bytes (split regions past this\n"
    "                      size after flushes); see docs/speed-layer.md\n"
    "\n"
    "Example: kiln create ns:events --family d:versions=3,ttl=86400 --split m\n"
    "         kiln create ns:logs --family d --salt-buckets 16\n";

static kiln_status
cmd_create_add_split(kiln_schema *s, const char *text, size_t n, kiln_err *err)
{
    kbuf key = KBUF_INIT;
    kiln_status st;
    if (cell_from_string_binary(&key, text, n) != 0)
        st = status_set(err, KILN_INVALID, "split key '%.*s': bad \\xNN escape", (int)n, text);
    else
        st = schema_add_split(s, key.data, key.len, err);
    buf_free(&key);
    return st;
}

static kiln_status
cmd_create_splits_file(kiln_schema *s, const char *path, kiln_err *err)
{
    kbuf b = KBUF_INIT;
    kiln_status st = env_read_file(path, &b, err);
    size_t line = 1;
    for (size_t i = 0; st == KILN_OK && i < b.len; line++) {
        size_t j = i;
        while (j < b.len && b.data[j] != '\n')
            j++;
        size_t end = j;
        if (end > i && b.data[end - 1] == '\r')
            end--;
        if (end > i) {
            kiln_err e2;
            status_clear(&e2);
            if (cmd_create_add_split(s, (const char *)b.data + i, end - i, &e2) != KILN_OK)
                st = status_set(err, e2.code, "%s:%zu: %s", path, line, e2.msg);
        }
        i = j + 1;
    }
    buf_free(&b);
    return st;
}

int
cmd_create(const cli_globals *g, int argc, char **argv)
{
    static const struct option opts[] = {
        {"family", required_argument, NULL, 'f'},
        {"split", required_argument, NULL, 's'},
        {"splits-file", required_argument, NULL, 'S'},
        {"keep-versions", required_argument, NULL, 'k'},
        {"salt-buckets", required_argument, NULL, 'B'},
        {"property", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    kiln_schema s;
    schema_init(&s);
    kiln_err err;
    status_clear(&err);
    int c, rc = -1;
    while (rc < 0 && (c = cmd_table_getopt("create", argc, argv, opts)) != -1) {
        schema_family f;
        uint64_t n;
        switch (c) {
        case 'f':
            if (schema_family_parse(optarg, &f, &err) != KILN_OK ||
                schema_add_family(&s, &f, &err) != KILN_OK)
                rc = cli_usage_error("create", "%s", err.msg);
            break;
        case 's':
            if (cmd_create_add_split(&s, optarg, strlen(optarg), &err) != KILN_OK)
                rc = cli_usage_error("create", "%s", err.msg);
            break;
        case 'S':
            if (cmd_create_splits_file(&s, optarg, &err) != KILN_OK)
                rc = cli_report(&err);
            break;
        case 'k':
            if (cli_parse_u64(optarg, &n) != 0 || n < 1 || n > SCHEMA_KEEP_MAX)
                rc = cli_usage_error("create", "--keep-versions must be 1..%d", SCHEMA_KEEP_MAX);
            else
                s.keep_versions = (uint32_t)n;
            break;
        case 'B':
            if (cli_parse_u64(optarg, &n) != 0 || n < 1 || n > 256)
                rc = cli_usage_error("create", "--salt-buckets must be 1..256");
            else
                s.salt_buckets = (uint32_t)n;
            break;
        case 'P': {
            const char *eq = strchr(optarg, '=');
            char key[64];
            if (eq == NULL || eq == optarg || (size_t)(eq - optarg) >= sizeof key) {
                rc = cli_usage_error("create", "--property takes KEY=VALUE, got '%s'", optarg);
                break;
            }
            memcpy(key, optarg, (size_t)(eq - optarg));
            key[eq - optarg] = '\0';
            kiln_durability d;
            if (strcmp(key, "durability") == 0 && mutation_durability_parse(eq + 1, &d) != 0)
                rc = cli_usage_error("create", "durability must be SYNC_WAL, ASYNC_WAL or "
                                               "SKIP_WAL, got '%s'", eq + 1);
            else if (strcmp(key, "max_region_bytes") == 0 &&
                     (cli_parse_u64(eq + 1, &n) != 0 || n == 0))
                rc = cli_usage_error("create", "max_region_bytes must be a positive number of "
                                               "bytes, got '%s'", eq + 1);
            else
                schema_set_prop(&s, key, eq + 1);
            break;
        }
        case 'h':
            fputs(cmd_create_usage_text, stdout);
            rc = 0;
            break;
        default:
            rc = EX_USAGE;
            break;
        }
    }
    if (rc < 0 && cmd_table_no_server(g, "create"))
        rc = EX_USAGE;
    if (rc < 0 && optind + 1 != argc)
        rc = cli_usage_error("create", optind >= argc ? "missing TABLE" : "unexpected argument '%s'",
                             argv[optind < argc ? optind + 1 : 0]);
    if (rc < 0 && s.family_count == 0)
        rc = cli_usage_error("create", "at least one --family is needed");
    if (rc < 0) {
        schema_salt_default_splits(&s);
        snprintf(s.name, sizeof s.name, "%s", argv[optind]);
        if (strlen(argv[optind]) > SCHEMA_NAME_MAX) {
            rc = cli_usage_error("create", "table name longer than %d bytes", SCHEMA_NAME_MAX);
        } else if (table_create(g->data_dir, &s, &err) != KILN_OK) {
            rc = err.code == KILN_INVALID ? cli_usage_error("create", "%s", err.msg)
                                          : cli_report(&err);
        } else {
            printf("Created table %s (%zu famil%s, %zu region%s", s.name, s.family_count,
                   s.family_count == 1 ? "y" : "ies", schema_region_count(&s),
                   schema_region_count(&s) == 1 ? "" : "s");
            if (s.salt_buckets > 0)
                printf(", %u salt bucket%s", s.salt_buckets, s.salt_buckets == 1 ? "" : "s");
            printf(")\n");
            rc = 0;
        }
    }
    schema_free(&s);
    return rc;
}

/* ------------------------------------------------------------------ list */

static const char cmd_list_usage_text[] =
    "Usage: kiln list\n"
    "\n"
    "List the tables of the data directory (as `list` in the HBase shell).\n";

int
cmd_list(const cli_globals *g, int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = cmd_table_getopt("list", argc, argv, opts)) != -1) {
        if (c == 'h') {
            fputs(cmd_list_usage_text, stdout);
            return 0;
        }
        return EX_USAGE;
    }
    if (optind != argc)
        return cli_usage_error("list", "unexpected argument '%s'", argv[optind]);
    char **names;
    size_t n;
    kiln_err err;
    status_clear(&err);
    kiln_status lst;
    if (g->server != NULL) {
        remote *rem;
        lst = remote_open(g->server, &rem, &err);
        if (lst == KILN_OK)
            lst = remote_list(rem, &names, &n, &err);
        remote_close(rem);
    } else {
        lst = table_list(g->data_dir, &names, &n, &err);
    }
    if (lst != KILN_OK)
        return cli_report(&err);
    cli_out o;
    cli_out_init(&o, STDOUT_FILENO);
    cli_out_str(&o, "TABLE\n");
    for (size_t i = 0; i < n; i++)
        cli_out_printf(&o, "%s\n", names[i]);
    cli_out_printf(&o, "%zu row(s)\n", n);
    table_list_free(names, n);
    return cmd_table_finish(&o);
}

/* ------------------------------------------------------------------ describe */

static const char cmd_describe_usage_text[] =
    "Usage: kiln describe TABLE\n"
    "\n"
    "Print the table's column families with their settings (HBase shell form),\n"
    "then its regions, kept versions, salt buckets, current version and the\n"
    "secondary indexes of the current version (NAME => 'COLUMNS', one a line).\n";

/* "INDEX NAME => 'cf:q,...'" for each index of the current version. */
static void
cmd_describe_indexes(cli_out *o, const kiln_table *t)
{
    manifest m;
    kiln_err err;
    status_clear(&err);
    if (table_read_current(t, &m, &err) != KILN_OK)
        return;
    kbuf cols = KBUF_INIT;
    for (size_t i = 1; i < m.table_count; i++) {
        store_index_def d;
        if (store_index_def_from_schema(&m.tables[0].schema, &m.tables[i].schema, &d, NULL) !=
            KILN_OK)
            continue;
        buf_reset(&cols);
        store_index_columns_format(&d, &cols);
        cli_out_printf(o, "INDEX %s => '%.*s'\n", d.name, (int)cols.len,
                       (const char *)cols.data);
        store_index_def_free(&d);
    }
    buf_free(&cols);
    manifest_free(&m);
}

static void
cmd_describe_family(cli_out *o, const schema_family *f)
{
    cli_out_printf(o, "{NAME => '%s', VERSIONS => '%u', ", f->name, f->max_versions);
    if (f->ttl_s >= SCHEMA_TTL_FOREVER)
        cli_out_str(o, "TTL => 'FOREVER', ");
    else
        cli_out_printf(o, "TTL => '%lld SECONDS', ", (long long)f->ttl_s);
    cli_out_printf(o, "COMPRESSION => '%s', BLOOMFILTER => '%s', BLOCKSIZE => '%u'}\n",
                   compress_codec_name(f->codec), bloom_type_name(f->bloom), f->block_size);
}

int
cmd_describe(const cli_globals *g, int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = cmd_table_getopt("describe", argc, argv, opts)) != -1) {
        if (c == 'h') {
            fputs(cmd_describe_usage_text, stdout);
            return 0;
        }
        return EX_USAGE;
    }
    if (optind + 1 != argc)
        return cli_usage_error("describe", optind >= argc ? "missing TABLE"
                                                          : "unexpected argument '%s'",
                               argv[optind < argc ? optind + 1 : 0]);
    kiln_table *t = NULL;
    kiln_schema remote_s;
    const kiln_schema *s;
    size_t regions;
    manifest_pointer ptr;
    kiln_err err, e2;
    status_clear(&err);
    status_clear(&e2);
    kiln_status st;
    if (g->server != NULL) {
        remote *rem;
        st = remote_open(g->server, &rem, &err);
        if (st == KILN_OK)
            st = remote_schema(rem, argv[optind], &remote_s, &regions, &ptr.version, &err);
        remote_close(rem);
        if (st != KILN_OK)
            return cli_report(&err);
        s = &remote_s;
        st = ptr.version > 0 ? KILN_OK : KILN_NOT_FOUND;
    } else {
        if (table_open(g->data_dir, argv[optind], &t, &err) != KILN_OK)
            return cli_report(&err);
        s = table_schema(t);
        regions = schema_region_count(s);
        st = table_current(t, &ptr, &e2);
    }
    cli_out o;
    cli_out_init(&o, STDOUT_FILENO);
    cli_out_printf(&o, "Table %s\nCOLUMN FAMILIES DESCRIPTION\n", s->name);
    for (size_t i = 0; i < s->family_count; i++)
        cmd_describe_family(&o, &s->families[i]);
    cli_out_printf(&o, "%zu row(s)\n", s->family_count);
    char when[40];
    cmd_table_time(s->created_ms, when, sizeof when);
    cli_out_printf(&o, "REGIONS => %zu, KEEP_VERSIONS => %u, SALT_BUCKETS => %u, CREATED => %s\n",
                   regions, s->keep_versions, s->salt_buckets, when);
    for (size_t i = 0; i < s->prop_count; i++)
        cli_out_printf(&o, "%s => '%s'\n", s->props[i].key, s->props[i].value);
    if (st == KILN_OK)
        cli_out_printf(&o, "CURRENT VERSION => %llu\n", (unsigned long long)ptr.version);
    if (st == KILN_OK && t != NULL)
        cmd_describe_indexes(&o, t);
    else if (st == KILN_NOT_FOUND)
        cli_out_str(&o, "CURRENT VERSION => none (nothing loaded yet)\n");
    if (t != NULL)
        table_close(t);
    else
        schema_free(&remote_s);
    int rc = cmd_table_finish(&o);
    if (st != KILN_OK && st != KILN_NOT_FOUND)
        return cli_report(&e2);
    return rc;
}

/* ------------------------------------------------------------------ regions */

static const char cmd_regions_usage_text[] =
    "Usage: kiln regions TABLE\n"
    "\n"
    "List the regions of the current version: index, start key (inclusive), end\n"
    "key (exclusive), HFiles and their bytes, and how many of those HFiles the\n"
    "speed layer wrote (flushes of online writes and their compactions; '-'\n"
    "with --server, which does not say), tab-separated under a header. Keys\n"
    "are in printable form; an empty key is unbounded.\n";

/* `kiln --server ADDR regions TABLE`: the same table from the server. */
static int
cmd_regions_remote(const char *server, const char *table)
{
    remote *rem;
    kiln_err err;
    status_clear(&err);
    char name[SCHEMA_NAME_MAX + 1];
    uint64_t version;
    remote_region *regs = NULL;
    size_t n = 0;
    kiln_status st = remote_open(server, &rem, &err);
    if (st == KILN_OK)
        st = remote_regions(rem, table, name, &version, &regs, &n, &err);
    remote_close(rem);
    if (st != KILN_OK)
        return cli_report(&err);
    cli_out o;
    cli_out_init(&o, STDOUT_FILENO);
    cli_out_printf(&o, "# table %s, version %llu\n", name, (unsigned long long)version);
    cli_out_str(&o, "REGION\tSTART_KEY\tEND_KEY\tFILES\tBYTES\tSPEED_FILES\n");
    for (size_t i = 0; i < n; i++) {
        cli_out_printf(&o, "%zu\t", i);
        cli_out_binary(&o, regs[i].start.data, regs[i].start.len);
        cli_out_str(&o, "\t");
        cli_out_binary(&o, regs[i].end.data, regs[i].end.len);
        cli_out_printf(&o, "\t%zu\t%" PRIu64 "\t-\n", regs[i].files, regs[i].bytes);
    }
    cli_out_printf(&o, "%zu row(s)\n", n);
    remote_regions_free(regs, n);
    return cmd_table_finish(&o);
}

int
cmd_regions(const cli_globals *g, int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = cmd_table_getopt("regions", argc, argv, opts)) != -1) {
        if (c == 'h') {
            fputs(cmd_regions_usage_text, stdout);
            return 0;
        }
        return EX_USAGE;
    }
    if (optind + 1 != argc)
        return cli_usage_error("regions", optind >= argc ? "missing TABLE"
                                                         : "unexpected argument '%s'",
                               argv[optind < argc ? optind + 1 : 0]);
    if (g->server != NULL)
        return cmd_regions_remote(g->server, argv[optind]);
    store_view *v;
    kiln_err err;
    status_clear(&err);
    if (store_view_open(g->data_dir, argv[optind], NULL, &v, &err) != KILN_OK)
        return cli_report(&err);
    cli_out o;
    cli_out_init(&o, STDOUT_FILENO);
    cli_out_printf(&o, "# table %s, version %llu\n", store_view_schema(v)->name,
                   (unsigned long long)store_view_version(v));
    cli_out_str(&o, "REGION\tSTART_KEY\tEND_KEY\tFILES\tBYTES\tSPEED_FILES\n");
    const manifest *m = store_view_manifest(v);
    for (size_t i = 0; i < store_view_region_count(v); i++) {
        kslice a = store_view_region_start(v, i), b = store_view_region_end(v, i);
        size_t files;
        uint64_t bytes = store_view_region_bytes(v, i, &files);
        cli_out_printf(&o, "%zu\t", i);
        cli_out_binary(&o, a.p, a.n);
        cli_out_str(&o, "\t");
        cli_out_binary(&o, b.p, b.n);
        size_t speed = 0;
        for (size_t k = 0; m != NULL && i < m->tables[0].region_count &&
                           k < m->tables[0].regions[i].file_count; k++)
            speed += (m->tables[0].regions[i].files[k].flags & MANIFEST_FILE_SPEED) != 0;
        cli_out_printf(&o, "\t%zu\t%" PRIu64 "\t%zu\n", files, bytes, speed);
    }
    cli_out_printf(&o, "%zu row(s)\n", store_view_region_count(v));
    store_view_unref(v);
    return cmd_table_finish(&o);
}

/* ------------------------------------------------------------------ views */

static const char cmd_views_usage_text[] =
    "Usage: kiln views TABLE\n"
    "\n"
    "List the kept view versions of a table, newest first, tab-separated:\n"
    "VERSION, CURRENT ('*' for the published one), CREATED (UTC), KIND (replace\n"
    "or append), PARENT, FILES, BYTES and SOURCE (the job output it loaded).\n"
    "`kiln rollback TABLE VERSION` makes any of them current.\n";

int
cmd_views(const cli_globals *g, int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = cmd_table_getopt("views", argc, argv, opts)) != -1) {
        if (c == 'h') {
            fputs(cmd_views_usage_text, stdout);
            return 0;
        }
        return EX_USAGE;
    }
    if (optind + 1 != argc)
        return cli_usage_error("views", optind >= argc ? "missing TABLE"
                                                       : "unexpected argument '%s'",
                               argv[optind < argc ? optind + 1 : 0]);
    if (cmd_table_no_server(g, "views"))
        return EX_USAGE;
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    if (table_open(g->data_dir, argv[optind], &t, &err) != KILN_OK)
        return cli_report(&err);
    manifest_pointer ptr = {0, 0};
    kiln_err e2;
    status_clear(&e2);
    kiln_status st = table_current(t, &ptr, &e2);
    if (st != KILN_OK && st != KILN_NOT_FOUND) {
        table_close(t);
        return cli_report(&e2);
    }
    uint64_t *vs;
    size_t nv;
    if (table_versions(t, &vs, &nv, &err) != KILN_OK) {
        table_close(t);
        return cli_report(&err);
    }
    cli_out o;
    cli_out_init(&o, STDOUT_FILENO);
    cli_out_str(&o, "VERSION\tCURRENT\tCREATED\tKIND\tPARENT\tFILES\tBYTES\tSOURCE\n");
    size_t shown = 0;
    for (size_t i = nv; i-- > 0;) {
        manifest m;
        status_clear(&e2);
        if (table_read_manifest(t, vs[i], &m, NULL, &e2) != KILN_OK) {
            fprintf(stderr, "kiln: views: warning: %s\n", e2.msg);
            continue;
        }
        char when[40];
        cmd_table_time(m.created_ms, when, sizeof when);
        const char *src = "";
        for (size_t k = 0; k < m.source_count; k++) {
            if (m.sources[k].version == m.version)
                src = m.sources[k].path;
        }
        cli_out_printf(&o, "%llu\t%s\t%s\t%s\t%llu\t%llu\t%llu\t%s\n",
                       (unsigned long long)m.version, m.version == ptr.version ? "*" : "", when,
                       m.kind == MANIFEST_KIND_APPEND ? "append" : "replace",
                       (unsigned long long)m.parent, (unsigned long long)manifest_file_count(&m),
                       (unsigned long long)manifest_total_bytes(&m), src);
        shown++;
        manifest_free(&m);
    }
    cli_out_printf(&o, "%zu row(s)\n", shown);
    free(vs);
    table_close(t);
    return cmd_table_finish(&o);
}

/* ------------------------------------------------------------------ rollback */

static const char cmd_rollback_usage_text[] =
    "Usage: kiln rollback TABLE [VERSION] [--wait[=SECONDS]]\n"
    "\n"
    "Make an earlier view version current, atomically (one rename of CURRENT).\n"
    "Without VERSION, roll back to the version the current one replaced. Any\n"
    "kept version (see `kiln views`) can be named, also one rolled back from.\n"
    "Nothing is deleted: the version rolled back from stays until the next load.\n"
    "\n"
    "Options:\n"
    "  --wait[=SECONDS]   wait for a running load to finish (default: fail at once)\n";

int
cmd_rollback(const cli_globals *g, int argc, char **argv)
{
    static const struct option opts[] = {
        {"wait", optional_argument, NULL, 'w'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    long wait_ms = 0;
    int c;
    while ((c = cmd_table_getopt("rollback", argc, argv, opts)) != -1) {
        uint64_t secs;
        switch (c) {
        case 'w':
            if (optarg == NULL) {
                wait_ms = -1;
            } else if (cli_parse_u64(optarg, &secs) != 0 || secs > 86400) {
                return cli_usage_error("rollback", "--wait takes seconds (0..86400)");
            } else {
                wait_ms = (long)secs * 1000;
            }
            break;
        case 'h':
            fputs(cmd_rollback_usage_text, stdout);
            return 0;
        default:
            return EX_USAGE;
        }
    }
    if (optind >= argc || argc - optind > 2)
        return cli_usage_error("rollback", optind >= argc ? "missing TABLE" : "too many arguments");
    if (cmd_table_no_server(g, "rollback"))
        return EX_USAGE;
    uint64_t target = 0;
    if (argc - optind == 2 && (cli_parse_u64(argv[optind + 1], &target) != 0 || target == 0))
        return cli_usage_error("rollback", "VERSION must be a positive number, got '%s'",
                               argv[optind + 1]);
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    if (table_open(g->data_dir, argv[optind], &t, &err) != KILN_OK)
        return cli_report(&err);
    manifest_pointer before = {0, 0};
    uint64_t now = 0;
    kiln_status st = table_lock(t, wait_ms, &err);
    if (st == KILN_OK)
        st = table_current(t, &before, &err);
    if (st == KILN_NOT_FOUND)
        st = status_set(&err, KILN_NOT_FOUND, "table %s: no version has been published",
                        table_name(t));
    if (st == KILN_OK)
        st = table_rollback(t, target, &now, &err);
    if (st == KILN_OK && now > before.version) {
        /* a new version: the earlier batch view with every online write kept */
        manifest m;
        kiln_err e2;
        status_clear(&e2);
        uint64_t last_load = 0;
        if (table_read_manifest(t, now, &m, NULL, &e2) == KILN_OK) {
            for (size_t i = 0; i < m.source_count; i++)
                if (m.sources[i].version > last_load)
                    last_load = m.sources[i].version;
            manifest_free(&m);
        }
        printf("Rolled back %s from version %llu to version %llu: the batch view of the loads "
               "up to version %llu, with every online write kept\n",
               table_name(t), (unsigned long long)before.version, (unsigned long long)now,
               (unsigned long long)last_load);
    } else if (st == KILN_OK) {
        printf("Rolled back %s from version %llu to version %llu\n", table_name(t),
               (unsigned long long)before.version, (unsigned long long)now);
    }
    table_close(t);
    return st == KILN_OK ? 0 : cli_report(&err);
}
