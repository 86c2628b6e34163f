/* cli.h -- shared pieces of the `kiln` command-line client.
 *
 * kiln_main.c parses the global options (--data, --server, --help, --version)
 * and dispatches to one subcommand; each subcommand lives in its own
 * cli/cmd_NAME.c and is declared here. A subcommand receives the globals and
 * its own argv (argv[0] is the subcommand name) and returns a sysexits.h exit
 * code. This file also holds what every subcommand needs: a buffered stdout
 * writer, usage-error reporting (exit 64), strict number parsers and a bump
 * arena for holding many small byte strings.
 *
 * Single-threaded: the client runs one command per process.
 */
#ifndef KILN_CLI_H
#define KILN_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"
#include "storage/store/speed.h"

#define CLI_PROG "kiln"

/* Options given before the subcommand. */
typedef struct cli_globals {
    const char *data_dir;   /* --data DIR, else $KILN_DATA, else "./kiln-data" */
    const char *server;     /* --server HOST:PORT or URL, or NULL to open data_dir directly */
} cli_globals;

/* A subcommand entry point. argv[0] is the subcommand name. Returns an exit code. */
typedef int (*cli_command_fn)(const cli_globals *g, int argc, char **argv);

/* Subcommands (one cli/cmd_NAME.c each). */
int cmd_hfile(const cli_globals *g, int argc, char **argv);
/* cmd_table.c: tables and view versions */
int cmd_create(const cli_globals *g, int argc, char **argv);
int cmd_list(const cli_globals *g, int argc, char **argv);
int cmd_describe(const cli_globals *g, int argc, char **argv);
int cmd_regions(const cli_globals *g, int argc, char **argv);
int cmd_views(const cli_globals *g, int argc, char **argv);
int cmd_rollback(const cli_globals *g, int argc, char **argv);
/* cmd_load.c: atomic bulk load */
int cmd_load(const cli_globals *g, int argc, char **argv);
/* cmd_read.c: reads through the region store */
int cmd_get(const cli_globals *g, int argc, char **argv);
int cmd_scan(const cli_globals *g, int argc, char **argv);
int cmd_count(const cli_globals *g, int argc, char **argv);
int cmd_multiget(const cli_globals *g, int argc, char **argv);
int cmd_exists(const cli_globals *g, int argc, char **argv);
/* cmd_write.c: online writes into the speed layer */
int cmd_put(const cli_globals *g, int argc, char **argv);
int cmd_delete(const cli_globals *g, int argc, char **argv);
int cmd_incr(const cli_globals *g, int argc, char **argv);
/* cmd_admin.c: the speed layer's maintenance */
int cmd_flush(const cli_globals *g, int argc, char **argv);
int cmd_compact(const cli_globals *g, int argc, char **argv);
int cmd_split(const cli_globals *g, int argc, char **argv);

/* cmd_write.c: open the data directory's speed layer to change it (no
 * background flusher). -1 when open; else the exit code, the message
 * printed: 75 (EX_TEMPFAIL) when a kiln-server holds the write-ahead log,
 * telling the user to VERB through it with --server. */
int cli_speed_open(const cli_globals *g, const char *verb, block_cache **cache, kiln_speed **s);
/* Close what cli_speed_open opened (the log synced, memstores kept in it). */
void cli_speed_close(block_cache *cache, kiln_speed *s);

/* ------------------------------------------------------------------ output */

/* Buffered writer over a file descriptor. The first write error is kept and
 * reported by cli_out_flush; later writes are dropped. */
typedef struct cli_out {
    int fd;
    kbuf buf;
    int err_errno;          /* errno of the first failed write(2), 0 if none */
} cli_out;

#define CLI_OUT_FLUSH_AT (256 * 1024)

void cli_out_init(cli_out *o, int fd);
/* Write the buffered bytes. KILN_IO naming "stdout" (or the fd) on failure. */
kiln_status cli_out_flush(cli_out *o, kiln_err *err);
/* Flush and release the buffer (does not close fd). */
kiln_status cli_out_close(cli_out *o, kiln_err *err);
void cli_out_write(cli_out *o, const void *p, size_t n);
void cli_out_str(cli_out *o, const char *s);
void cli_out_printf(cli_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Bytes in HBase's printable form (Bytes.toStringBinary). */
void cli_out_binary(cli_out *o, const uint8_t *p, size_t n);
/* Write the buffer out once it holds CLI_OUT_FLUSH_AT bytes. */
static inline void
cli_out_maybe_flush(cli_out *o)
{
    if (o->buf.len >= CLI_OUT_FLUSH_AT)
        cli_out_flush(o, NULL);
}

/* ------------------------------------------------------------------ errors */

/* Print "kiln: CONTEXT: fmt..." and "Try 'kiln CONTEXT --help'." to stderr;
 * returns EX_USAGE (64). context may be NULL (top level). */
int cli_usage_error(const char *context, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Print "kiln: MSG" for err to stderr and return status_exit_code(err->code). */
int cli_report(const kiln_err *err);

/* ------------------------------------------------------------------ parsing */

/* Strict unsigned decimal: digits only, no sign, no overflow. 0 or -1. */
int cli_parse_u64(const char *s, uint64_t *out);
/* Strict signed decimal int64. 0 or -1. */
int cli_parse_i64(const char *s, size_t n, int64_t *out);
/* A byte size: decimal with an optional K, M or G suffix (binary units). 0 or -1. */
int cli_parse_size(const char *s, uint64_t *out);

/* ------------------------------------------------------------------ arena */

/* A bump allocator for many small byte strings freed all at once. */
typedef struct cli_arena_chunk cli_arena_chunk;

typedef struct cli_arena {
    cli_arena_chunk *head;
    size_t chunk_size;
    uint64_t bytes;          /* bytes handed out */
} cli_arena;

void cli_arena_init(cli_arena *a, size_t chunk_size);
/* n bytes, 8-byte aligned; never NULL (aborts on allocation failure). */
void *cli_arena_alloc(cli_arena *a, size_t n);
void cli_arena_free(cli_arena *a);

#endif
