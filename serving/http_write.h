/* http_write.h -- HBase REST's cell writes (RowResource), answered through
 * the speed layer:
 *
 *   PUT|POST /TABLE/ROW/COLUMN[/TS]   Content-Type application/octet-stream:
 *                                     the body is the value (X-Row, X-Column,
 *                                     X-Timestamp headers override the path)
 *   PUT|POST /TABLE/ROW[/COLUMNS]     a CellSet body (JSON, XML, protobuf by
 *                                     Content-Type); several rows (the path's
 *                                     row, "fakerow" by convention, fills in
 *                                     for rows without a key)
 *   DELETE /TABLE/ROW                 every family (DeleteFamily)
 *   DELETE /TABLE/ROW/FAMILY          DeleteFamily
 *   DELETE /TABLE/ROW/FAMILY:QUAL     DeleteColumn (every version)
 *          .../TS                     the same for versions at or before TS
 *   ?check=put      CheckAndPut: the CellSet's last cell is the expected value
 *                   of its column, which one of the other cells must write;
 *                   304 when the check fails
 *   ?check=delete   CheckAndDelete (PUT, POST or DELETE with a CellSet): the
 *                   last cell is the check; the others are the deletes (a
 *                   family alone: DeleteFamily; a column: Delete of one
 *                   version); with the check cell alone, its column goes
 *                   (DeleteColumn); 304 when the check fails
 *   ?check=increment  Increment: each cell's value is a decimal delta; the
 *                   values are 8-byte big-endian longs (HBase counters);
 *                   &rr=true answers the new values as a CellSet
 *   ?check=append   Append each cell's value to its column (&rr=true: the
 *                   new values)
 *   ?durability=SKIP_WAL|ASYNC_WAL|SYNC_WAL|FSYNC_WAL|USE_DEFAULT
 *                   Kiln's: the write's durability (default: the table's)
 *
 * 200 on success, 304 a failed check, 400 a malformed body or request (an
 * unknown family too), 404 an unknown table, 403 when the server is
 * read-only (the router answers that).
 *
 * Thread-safety: one worker's http_api, as every handler.
 */
#ifndef KILN_HTTP_WRITE_H
#define KILN_HTTP_WRITE_H

#include "serving/http_handler.h"

/* Answer a PUT, POST or DELETE of /TABLE/ROW... on table e. REQUIRES:
 * a->env->speed is not NULL. */
void http_write_row(http_api *a, views_entry *e, http_api_reply *out);

#endif
