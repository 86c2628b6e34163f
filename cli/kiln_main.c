/* kiln_main.c -- `kiln`, the command-line client: global options and dispatch.
 *
 *   kiln [--data DIR] [--server ADDR] COMMAND [ARGS...]
 *
 * Each COMMAND is one row of kiln_commands below and one cli/cmd_NAME.c file
 * declared in cli/cli.h; adding a command is adding both. The global options
 * are parsed up to the first non-option word (the command), so a command's
 * own options never clash with them. Exit codes follow sysexits.h.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli/cli.h"

typedef struct kiln_command {
    const char *name;
    cli_command_fn fn;
    const char *summary;
} kiln_command;

static const kiln_command kiln_commands[] = {
    {"create", cmd_create, "create a table with its column families and split keys"},
    {"list", cmd_list, "list the tables"},
    {"exists", cmd_exists, "say whether a table exists"},
    {"describe", cmd_describe, "show a table's families, settings and current version"},
    {"regions", cmd_regions, "show a table's regions and their files"},
    {"load", cmd_load, "publish a job's HFile output as a new version, atomically"},
    {"views", cmd_views, "list a table's kept view versions"},
    {"rollback", cmd_rollback, "make an earlier view version current"},
    {"get", cmd_get, "read one row"},
    {"multiget", cmd_multiget, "read several rows"},
    {"scan", cmd_scan, "scan rows in key order"},
    {"count", cmd_count, "count rows"},
    {"put", cmd_put, "write one cell (online, into the speed layer)"},
    {"delete", cmd_delete, "delete a row, a family or a column"},
    {"incr", cmd_incr, "add to an 8-byte counter"},
    {"flush", cmd_flush, "write a table's online writes to HFiles as a new version"},
    {"compact", cmd_compact, "merge a table's files per region and family (--major: all)"},
    {"split", cmd_split, "split regions past a size at their middle row"},
    {"hfile", cmd_hfile, "dump, inspect, check and write HFile v3 files"},
};

#define KILN_COMMAND_COUNT (sizeof kiln_commands / sizeof kiln_commands[0])

static void
kiln_usage(FILE *f)
{
    fprintf(f,
            "Usage: kiln [--data DIR] [--server ADDR] COMMAND [ARGS...]\n"
            "\n"
            "Kiln's command-line client. It opens the data directory directly, or talks\n"
            "to a kiln-server or any HBase REST gateway with --server; the output is the\n"
            "same either way.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < KILN_COMMAND_COUNT; i++)
        fprintf(f, "  %-10s %s\n", kiln_commands[i].name, kiln_commands[i].summary);
    fprintf(f,
            "  help CMD   the same as `kiln CMD --help`\n"
            "\n"
            "Options:\n"
            "  --data DIR           data directory (default $KILN_DATA, else ./kiln-data)\n"
            "  --server ADDR        read and write through a kiln-server or HBase REST\n"
            "                       gateway instead: HOST:PORT, or http[s]://HOST[:PORT][/PATH]\n"
            "                       (TLS is verified against the system CAs or $KILN_CA_FILE;\n"
            "                       $KILN_INSECURE_TLS=1 skips the check). get, multiget,\n"
            "                       exists, scan, count, list, describe, regions, put,\n"
            "                       delete, incr, flush, compact and split\n"
            "  -h, --help           this help\n"
            "  -V, --version        print the version\n"
            "\n"
            "Row keys in arguments and output use HBase's printable form: bytes outside\n"
            "printable ASCII, and the backslash, are written \\xNN.\n"
            "\n"
            "Exit status: 0 success (exists: 1 for a table that does not exist), 64 usage\n"
            "error, 65 bad data, 66 missing input,\n"
            "70 internal error, 74 I/O error, 75 the data directory's write-ahead log is\n"
            "held by a running kiln-server (put, delete, incr, flush, compact and split:\n"
            "use --server).\n");
}

static const kiln_command *
kiln_find(const char *name)
{
    for (size_t i = 0; i < KILN_COMMAND_COUNT; i++) {
        if (strcmp(kiln_commands[i].name, name) == 0)
            return &kiln_commands[i];
    }
    return NULL;
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"data", required_argument, NULL, 'd'},
        {"server", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    cli_globals g;
    g.data_dir = getenv("KILN_DATA");
    if (g.data_dir == NULL || g.data_dir[0] == '\0')
        g.data_dir = "./kiln-data";
    g.server = NULL;

    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            g.data_dir = optarg;
            break;
        case 's':
            g.server = optarg;
            break;
        case 'h':
            kiln_usage(stdout);
            return 0;
        case 'V':
            printf("kiln %s\n", KILN_VERSION);
            return 0;
        case ':':
            return cli_usage_error(NULL, "option '%s' needs an argument", argv[optind - 1]);
        default:
            return cli_usage_error(NULL, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) {
        kiln_usage(stderr);
        return EX_USAGE;
    }
    const char *name = argv[optind];
    if (strcmp(name, "help") == 0) {
        if (optind + 1 >= argc) {
            kiln_usage(stdout);
            return 0;
        }
        const kiln_command *cmd = kiln_find(argv[optind + 1]);
        if (cmd == NULL)
            return cli_usage_error(NULL, "unknown command '%s'", argv[optind + 1]);
        char *help_argv[] = {(char *)cmd->name, (char *)"--help", NULL};
        optind = 0;
        return cmd->fn(&g, 2, help_argv);
    }
    const kiln_command *cmd = kiln_find(name);
    if (cmd == NULL)
        return cli_usage_error(NULL, "unknown command '%s'", name);
    int first = optind;
    /* Commands parse their own options with getopt from a clean state. */
    optind = 0;
    return cmd->fn(&g, argc - first, argv + first);
}
