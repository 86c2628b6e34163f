/* resp_api.h -- the Redis-protocol commands of kiln-server: GET, MGET,
 * EXISTS, PING, ECHO, INFO, SELECT, QUIT (and harmless replies to the
 * CONFIG GET / COMMAND / CLIENT calls that tools send on connect), and the
 * writes and hash commands of resp_write.h (SET, DEL, INCR..., HSET, ...),
 * which answer -READONLY when the server has no speed layer.
 *
 * Keys map to rows:
 *   - a key "TABLE/ROW" whose part before the first '/' names a table
 *     ("t/r" or "ns:t/r") reads row ROW of that table;
 *   - any other key is a row of the connection's database: SELECT n picks
 *     the n-th table in name order (database 0, the default, is the first).
 * The value returned is one column: the --resp-column configured for the
 * table ("TABLE=FAMILY:QUALIFIER"), else a global one ("FAMILY:QUALIFIER")
 * when the table has that family, else the row's first cell (lowest family
 * and qualifier, newest version). A row without that column reads as nil.
 *
 * Thread-safety: a resp_api belongs to one worker thread; the env is shared
 * and read-only.
 */
#ifndef KILN_RESP_API_H
#define KILN_RESP_API_H

#include <stddef.h>
#include <stdint.h>

#include "serving/metrics.h"
#include "serving/resp_keys.h"
#include "serving/views.h"
#include "storage/base/buf.h"
#include "storage/store/schema.h"
#include "storage/base/status.h"
#include "storage/store/speed.h"

#define RESP_API_COLUMNS_MAX 64

typedef struct resp_api_env {
    views *views;
    kiln_speed *speed;                      /* the speed layer (reads and writes) */
    int read_only;                          /* --read-only: writes answer -READONLY */
    metrics *metrics;
    resp_api_column columns[RESP_API_COLUMNS_MAX];
    size_t column_count;
    char listen[64];
    int threads;
    int64_t started_ms;                     /* wall clock */
    size_t max_reply_bytes;                 /* one answer at most (MGET); 0: no cap */
} resp_api_env;

/* Parse "[TABLE=]FAMILY:QUALIFIER" (qualifier in printable form, \xNN) and
 * add it to env. KILN_INVALID naming the spec. */
kiln_status resp_api_add_column(resp_api_env *env, const char *spec, kiln_err *err);
/* Free the columns' qualifiers. */
void resp_api_env_free(resp_api_env *env);

typedef struct resp_api resp_api;

resp_api *resp_api_new(const resp_api_env *env, views_reader *reader, views_ctx *ctx);
void resp_api_free(resp_api *a);   /* a may be NULL */

/* Answer one command (argc >= 1) into out. *db is the connection's
 * database; *close is set by QUIT; *status is 200 when the reply is not an
 * error, 500 when it reports an error of the server's (a corrupt file,
 * counted by metrics_corruption too; I/O), 400 for any other error reply.
 * Returns the route the command counts under. */
metrics_route resp_api_handle(resp_api *a, const kslice *argv, size_t argc, int *db, kbuf *out,
                              int *close, int *status);

/* Keys one look-ahead batch holds, at most. */
#define RESP_API_AHEAD_KEYS 32

/* Looking ahead. Before answering several buffered commands (a pipeline, or
 * the commands of several connections read in one turn), a caller passes
 * them to resp_api_look_ahead, which parses them and notes the rows their
 * GET and MGET keys name, RESP_API_AHEAD_KEYS at most in all (see
 * resp_api_ahead_full); then it calls resp_api_prefetch, which starts
 * loading the row cache memory of all those rows together
 * (views_prefetch_row) and forgets them. Answering the commands then waits
 * on memory about once in all rather than twice a key. The bytes looked at
 * must stay as they are until resp_api_prefetch. db and max_bulk are as for
 * answering the commands. resp_api_look_ahead returns the bytes of p the
 * commands it parsed take (0 when the first is incomplete or malformed).
 * Hints only: neither changes what any command answers. */
size_t resp_api_look_ahead(resp_api *a, const uint8_t *p, size_t n, int db, size_t max_bulk);
int resp_api_ahead_full(const resp_api *a);
void resp_api_prefetch(resp_api *a);

#endif
