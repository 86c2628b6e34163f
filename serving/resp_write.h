/* resp_write.h -- the Redis-protocol writes and hash reads of kiln-server,
 * on the same key mapping as GET (resp_api.h):
 *
 *   SET key value          Put of the key's column: the --resp-column of the
 *                          table, else the table's first family with an
 *                          empty qualifier (the row's first cell, which GET
 *                          returns). Options (EX, PX, NX, XX, KEEPTTL, GET)
 *                          are refused: a cell has no expiry of its own.
 *   DEL key [key ...]      DeleteFamily of every family of each row (GET then
 *                          answers nil whatever its column); the count of
 *                          keys that had the column GET reads
 *   INCR/DECR key, INCRBY/DECRBY key n
 *                          the value as a decimal string, as Redis keeps it
 *                          (not HBase's 8-byte counters: REST's check=increment
 *                          and `kiln incr` keep those); "ERR value is not an
 *                          integer or out of range" otherwise
 *   APPEND key value       the new length
 *   HSET key field value [field value ...]   the count of new fields
 *   HGET key field, HGETALL key, HDEL key field [field ...]
 *                          a field is FAMILY:QUALIFIER when FAMILY is one of
 *                          the table's families, else a qualifier of the
 *                          key's column's family; HGETALL answers every
 *                          column of the row as FAMILY:QUALIFIER
 *
 * Writes need the server's speed layer; without one (--read-only) they
 * answer -READONLY. A write is one speed-layer mutation per key (HSET's
 * fields together).
 *
 * Thread-safety: called by one worker's resp_api.
 */
#ifndef KILN_RESP_WRITE_H
#define KILN_RESP_WRITE_H

#include <stddef.h>

#include "serving/resp_keys.h"
#include "storage/store/speed.h"
#include "storage/base/buf.h"

/* The command's key resolution and column, as resp_api.c does it for GET. */
typedef struct resp_write_ctx {
    kiln_speed *speed;     /* may be NULL: reads go to the served views */
    int read_only;         /* writes answer -READONLY */
    const resp_api_column *columns;
    size_t column_count;
    views_reader *reader;
    views_ctx *ctx;
    kbuf *tmp;
    int server_error;      /* set when the error was the server's (I/O, corruption) */
} resp_write_ctx;

/* 1 if cmd is one of the commands above (answered into out), else 0. */
int resp_write_handle(resp_write_ctx *c, const kslice *argv, size_t argc, int db, kbuf *out);

#endif
