/* http_scanner.h -- the open scanners of HBase REST's scanner protocol,
 * shared by every worker of a server.
 *
 * A scanner is created by PUT/POST /TABLE/scanner (a Scanner body,
 * scanner_spec.h) and answers 201 Created with Location
 * http://HOST/TABLE/scanner/ID. Each GET of that location returns the next
 * batch as a cell set (batch cells at most; ?n= caps the rows) until 204
 * No Content; DELETE closes it. A scanner holds a reference to the version
 * of the table it was created on (through its store scan), so it reads
 * that one version from start to end even when a newer one is swapped in.
 *
 * Bounds: at most `max` scanners are open; one unused for idle_ms is
 * closed at the next create or lookup. Past the bound a create answers 503
 * (after closing the idle ones). A scanner used by one request while
 * another asks for it answers 409.
 *
 * Thread-safety: the registry is guarded by a mutex; a scanner is used by
 * one request at a time.
 */
#ifndef KILN_HTTP_SCANNER_H
#define KILN_HTTP_SCANNER_H

#include <stddef.h>

#include "serving/http_handler.h"

#define HTTP_SCANNERS_MAX_DEFAULT 1024
#define HTTP_SCANNER_IDLE_MS_DEFAULT 60000
#define HTTP_SCANNER_BATCH_DEFAULT 100
#define HTTP_SCANNER_ID_LEN 24             /* hex: slot (8) and a random tag (16) */

http_scanners *http_scanners_new(size_t max, long idle_ms);
void http_scanners_free(http_scanners *s);   /* s may be NULL; closes every scanner */
/* Scanners open now. */
size_t http_scanners_count(http_scanners *s);

/* The route handlers: PUT|POST /TABLE/scanner on the table entry e, and GET
 * and DELETE of /TABLE/scanner/ID (a->rq.name), each filling out. */
void http_scanner_create(http_api *a, views_entry *e, http_api_reply *out);
void http_scanner_next(http_api *a, http_api_reply *out);
void http_scanner_delete(http_api *a, http_api_reply *out);

#endif
