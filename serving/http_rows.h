/* http_rows.h -- the handlers of the routes that read rows without server
 * state: one row, globs and ranges, multiget, the stateless /TABLE/STAR scan
 * (paged, counted, by index), and /TABLE/exists (http_rows.c).
 *
 * Each answers a->rq from the table entry e into out. A stateless scan may
 * yield (out->yield) with its continuation in *a->cont; its next slice is
 * called with e NULL and a->resume set.
 *
 * Thread-safety: one worker's http_api.
 */
#ifndef KILN_HTTP_ROWS_H
#define KILN_HTTP_ROWS_H

#include "serving/http_handler.h"

void http_rows_row(http_api *a, views_entry *e, http_api_reply *out);
void http_rows_multiget(http_api *a, views_entry *e, http_api_reply *out);
void http_rows_scan(http_api *a, views_entry *e, http_api_reply *out);
void http_rows_exists(http_api *a, views_entry *e, http_api_reply *out);

#endif
