/* kiln_gen_main.c -- kiln-gen: deterministic sample input for the view jobs.
 *
 *   kiln-gen VIEW --rows N --output DIR [--seed S] [--files K] [--bad P]
 *
 * Writes the raw input the view job VIEW reads (jobs/view_gen.h): the same
 * arguments give the same bytes on any machine. Needs no MPI.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <sys/stat.h>

#include "jobs/view_gen.h"
#include "storage/base/status.h"

static const view_gen_def *const kiln_gen_defs[] = {
    &useractions_gen, &tslog_gen, &orders_gen, &follows_gen, &reviews_gen,
    &products_gen, &events_gen,
    &graph_gen,
};
#define KILN_GEN_NDEFS (sizeof kiln_gen_defs / sizeof *kiln_gen_defs)

static void
kiln_gen_usage(FILE *out)
{
    fputs("Usage: kiln-gen VIEW --rows N --output DIR [--seed S] [--files K] [--bad P]\n"
          "       kiln-gen --list | --help | --version\n"
          "\n"
          "Writes realistic, deterministic raw input for a view job: the same\n"
          "arguments give the same bytes on any machine. DIR must not exist.\n"
          "\n"
          "Options:\n"
          "  --rows N     how much to generate (see below for what a row is)\n"
          "  --output DIR the directory to create\n"
          "  --seed S     random seed (default 1)\n"
          "  --files K    cut the input into K files per kind (default 4)\n"
          "  --bad P      make about P lines in 1000 malformed (default 0): a field\n"
          "               dropped, a field added or the first field emptied\n"
          "\n"
          "Views:\n",
          out);
    for (size_t i = 0; i < KILN_GEN_NDEFS; i++) {
        const view_gen_def *d = kiln_gen_defs[i];
        fprintf(out, "  %-12s --rows counts %s\n", d->name, d->rows);
        const char *p = d->summary;
        while (*p) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            fprintf(out, "      %.*s\n", (int)n, p);
            p += n + (nl != NULL);
        }
    }
    fputs("\nThen run the job on it, e.g.\n"
          "  kiln-gen useractions --rows 100000 --output raw\n"
          "  ./run_job.sh -n 2 useractions --input raw --output out\n"
          "Exit status: 0 ok, 64 usage, 73 DIR exists, 74 I/O error.\n",
          out);
}

static int
kiln_gen_number(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v > max) {
        fprintf(stderr, "kiln-gen: %s: '%s' is not a number in [0, %" PRIu64 "]\n", opt, s, max);
        return -1;
    }
    *out = v;
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc < 2) {
        kiln_gen_usage(stderr);
        return EX_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        kiln_gen_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("kiln-gen %s\n", KILN_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < KILN_GEN_NDEFS; i++)
            printf("%s\t%s\n", kiln_gen_defs[i]->name, kiln_gen_defs[i]->rows);
        return 0;
    }
    const view_gen_def *def = NULL;
    for (size_t i = 0; i < KILN_GEN_NDEFS; i++)
        if (strcmp(argv[1], kiln_gen_defs[i]->name) == 0)
            def = kiln_gen_defs[i];
    if (def == NULL) {
        fprintf(stderr, "kiln-gen: unknown view '%s'\nTry 'kiln-gen --help'.\n", argv[1]);
        return EX_USAGE;
    }
    view_gen_options o = {0, 1, 4, 0, NULL};
    int have_rows = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            kiln_gen_usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "kiln-gen: %s needs a value\n", a);
            return EX_USAGE;
        }
        const char *v = argv[++i];
        uint64_t n;
        if (strcmp(a, "--rows") == 0) {
            if (kiln_gen_number(a, v, VIEW_GEN_ROWS_MAX, &o.rows) != 0)
                return EX_USAGE;
            have_rows = 1;
        } else if (strcmp(a, "--seed") == 0) {
            if (kiln_gen_number(a, v, UINT64_MAX, &o.seed) != 0)
                return EX_USAGE;
        } else if (strcmp(a, "--files") == 0) {
            if (kiln_gen_number(a, v, VIEW_GEN_FILES_MAX, &n) != 0)
                return EX_USAGE;
            if (n == 0) {
                fprintf(stderr, "kiln-gen: --files must be at least 1\n");
                return EX_USAGE;
            }
            o.files = (uint32_t)n;
        } else if (strcmp(a, "--bad") == 0) {
            if (kiln_gen_number(a, v, 1000, &n) != 0)
                return EX_USAGE;
            o.bad = (uint32_t)n;
        } else if (strcmp(a, "--output") == 0) {
            o.dir = v;
        } else {
            fprintf(stderr, "kiln-gen: unknown option '%s'\nTry 'kiln-gen --help'.\n", a);
            return EX_USAGE;
        }
    }
    if (!have_rows || o.dir == NULL) {
        fprintf(stderr, "kiln-gen: --rows N and --output DIR are required\n");
        return EX_USAGE;
    }
    struct stat st;
    if (lstat(o.dir, &st) == 0) {
        fprintf(stderr, "kiln-gen: %s: already exists\n", o.dir);
        return EX_CANTCREAT;
    }
    kiln_err err;
    status_clear(&err);
    kiln_status s = def->run(&o, &err);
    if (s != KILN_OK) {
        fprintf(stderr, "kiln-gen: %s\n", err.msg);
        return status_exit_code(s);
    }
    return 0;
}
