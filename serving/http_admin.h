/* http_admin.h -- the handlers of the routes about tables rather than their
 * rows: the table list, /version, /version/cluster, /status/cluster,
 * namespaces, /healthz, and a table's schema and regions (http_admin.c).
 *
 * Each answers a->rq into out, in the representation it asks for.
 *
 * Thread-safety: one worker's http_api.
 */
#ifndef KILN_HTTP_ADMIN_H
#define KILN_HTTP_ADMIN_H

#include "serving/http_handler.h"

void http_admin_tables(http_api *a, http_api_reply *out);
void http_admin_version(http_api *a, http_api_reply *out);
void http_admin_version_cluster(http_api *a, http_api_reply *out);
void http_admin_status_cluster(http_api *a, http_api_reply *out);
void http_admin_namespaces(http_api *a, http_api_reply *out);
void http_admin_healthz(http_api *a, http_api_reply *out);
void http_admin_schema(http_api *a, views_entry *e, http_api_reply *out);
void http_admin_regions(http_api *a, views_entry *e, http_api_reply *out);

#endif
