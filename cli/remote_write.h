/* remote_write.h -- the writes of the `kiln` client through an HBase REST
 * gateway or a kiln-server (`kiln --server ADDR put|delete|incr`), in HBase
 * REST's form:
 *
 *   put     PUT /TABLE/ROW/FAMILY:QUALIFIER[/TS] with the raw value
 *           (application/octet-stream)
 *   delete  DELETE /TABLE/ROW[/FAMILY[:QUALIFIER]][/TS] (a row at TS:
 *           /TABLE/ROW//TS, an empty column list)
 *   incr    POST /TABLE/ROW?check=increment&rr=true with a JSON CellSet whose
 *           one cell holds the decimal delta; the answer's value is the new
 *           8-byte counter
 *   flush, compact, split
 *           POST /TABLE/_admin/OP[?major=true|?max_bytes=N], kiln-server's
 *           maintenance routes (serving/http_speed.h); the answer is
 *           speed_admin.h's JSON
 *
 * Kiln's durability parameter (?durability=) is added when one is asked
 * for. Errors name the server (host:port) and carry its message: 404 an
 * unknown table (KILN_NOT_FOUND), 400 (KILN_INVALID), 403 a read-only
 * server (KILN_UNSUPPORTED), anything else KILN_IO.
 *
 * Single-threaded: one client per command.
 */
#ifndef KILN_CLI_REMOTE_WRITE_H
#define KILN_CLI_REMOTE_WRITE_H

#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"
#include "serving/speed_admin.h"
#include "storage/store/mutation.h"

typedef struct remote_writer remote_writer;

kiln_status remote_writer_open(const char *server, remote_writer **out, kiln_err *err);
void remote_writer_close(remote_writer *w);   /* w may be NULL */

/* Put value at (row, family:qualifier, ts); ts CELL_LATEST_TIMESTAMP: now. */
kiln_status remote_put(remote_writer *w, const char *table, kslice row, kslice column,
                       int64_t ts, kslice value, kiln_durability d, kiln_err *err);
/* Delete the row (column.n == 0), a family ("f") or a column ("f:q"), at
 * or before ts (CELL_LATEST_TIMESTAMP: every version). */
kiln_status remote_delete(remote_writer *w, const char *table, kslice row, kslice column,
                          int64_t ts, kiln_durability d, kiln_err *err);
/* Add delta to the 8-byte counter at (row, family:qualifier); *out the new value. */
kiln_status remote_incr(remote_writer *w, const char *table, kslice row, kslice column,
                        int64_t delta, kiln_durability d, int64_t *out, kiln_err *err);
/* Run a maintenance operation on table through the server; *r gets its
 * result. major for compact; max_bytes for split (0: the table's). */
kiln_status remote_admin(remote_writer *w, const char *table, speed_admin_op op, int major,
                         uint64_t max_bytes, speed_admin_result *r, kiln_err *err);

#endif
