/* http_speed.h -- kiln-server's maintenance routes for the speed layer (a
 * Kiln extension; HBase does these through its Admin API, which REST does
 * not carry):
 *
 *   POST /TABLE/_admin/flush                   flush the table's memstores
 *   POST /TABLE/_admin/compact[?major=true]    compact (minor by default)
 *   POST /TABLE/_admin/split[?max_bytes=N]     split regions past N bytes
 *                                              (default: the table's
 *                                              max_region_bytes property)
 *
 * Each answers 200 with speed_admin.h's JSON (the version published, files,
 * cells and regions before and after). The router answers 405 for other
 * methods, 403 on a read-only server and 404 for an unknown table; bad
 * parameters are 400. The paths shadow the raw-value writes of a row named
 * "_admin" to families flush, compact and split; that row is still
 * reachable as /TABLE/%5Fadmin/... (route words match raw segments).
 *
 * The operation runs on the worker that took the request: a major
 * compaction of a large table holds that worker until it is done.
 *
 * Thread-safety: one worker's http_api, as every handler.
 */
#ifndef KILN_HTTP_SPEED_H
#define KILN_HTTP_SPEED_H

#include "serving/http_handler.h"

/* Answer POST /TABLE/_admin/OP on table e. REQUIRES: a->env->speed is not
 * NULL and the server takes writes. */
void http_speed_admin(http_api *a, views_entry *e, http_api_reply *out);

#endif
