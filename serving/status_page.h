/* status_page.h -- the server's HTML status page (GET /status): the server
 * (version, uptime, addresses, threads, caches, connections), request rates
 * per route, and for every table its served version, swaps, regions, store
 * files and kept view versions. Static HTML with no scripts, so it renders
 * in any browser, headless ones included.
 *
 * Thread-safety: called on a worker thread with that worker's reader.
 */
#ifndef KILN_STATUS_PAGE_H
#define KILN_STATUS_PAGE_H

#include "serving/http_handler.h"
#include "serving/views.h"
#include "storage/base/buf.h"

/* Append the page to out. */
void status_page_render(const http_api_env *env, views_reader *r, kbuf *out);

#endif
