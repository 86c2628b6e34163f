/* http_api.h -- the HTTP routes of kiln-server: HBase REST's read API
 * (DESIGN.md section 4). The server parses a request (http.h) and hands it
 * here; the handler answers from the worker's view snapshot and fills a
 * reply (status, content type, body and a few headers) that the server
 * frames and sends.
 *
 *   GET /                                   tables ("t" for default:t)
 *   GET /version | /version/cluster         gateway and cluster version
 *   GET /status/cluster                     the cluster's regions
 *   GET /namespaces[/NS[/tables]]           namespaces, their tables
 *   GET /metrics | /healthz | /status       Prometheus text, health, HTML page
 *   GET /TABLE/schema | regions | exists    families, regions, 200 or 404
 *   GET /TABLE/ROW[/COLUMNS[/TS[,TS2]]]     one row; ?v=N, ?starttime=&endtime=
 *   GET /TABLE/PREFIX*[/COLUMNS]            the rows starting with PREFIX
 *   GET /TABLE/START,END[/COLUMNS]          the rows in [START, END)
 *   GET /TABLE/multiget[/COLUMNS]?row=R1&row=R2...
 *   GET /TABLE/STAR?startrow=&endrow=&prefix=&limit=&reversed=&column=&filter=
 *                                           a scan (STAR: the segment "*");
 *                                           Kiln's extensions: paged=true
 *                                           (pages with next_startrow),
 *                                           count=true, index=NAME
 *   PUT|POST /TABLE/scanner                 a stateful scanner (Scanner body)
 *   GET|DELETE /TABLE/scanner/ID            its next batch (204 at the end); close
 *
 * Representations follow Accept: application/json, text/xml,
 * application/x-protobuf, application/octet-stream (one cell). Path
 * segments are decoded as http_req.c describes. Every table response
 * carries X-Kiln-Version, the version it was read from. Errors are one line
 * of JSON, {"status":404,"code":"no_row","message":"..."}, for JSON
 * clients, and HBase's text/plain form ("Not found\r\n", "Bad
 * request\r\nDETAIL\r\n") for the other representations.
 *
 * A request holds its worker for deadline_ms (a time slice) at most. An
 * unpaged stateless scan still going at the end of a slice yields
 * (out->yield), keeping its place and the answer so far in the
 * connection's continuation (http_api_cont), and goes on when the same
 * request is handled again: the answer is the one an unsliced scan gives.
 * A paged scan answers what it has with next_startrow; a scanner GET that
 * has rows answers them, and one that has none yet yields.
 *
 * This header is the router's: it declares the functions the server calls.
 * The env, the reply and the continuation are http_handler.h's, shared with
 * the route handlers, which never include this header.
 *
 * Thread-safety: an http_api belongs to one worker thread; the env is
 * shared (its scanner registry is thread-safe).
 */
#ifndef KILN_HTTP_API_H
#define KILN_HTTP_API_H

#include "serving/http_handler.h"

http_api *http_api_new(const http_api_env *env, views_reader *reader, views_ctx *ctx);
void http_api_free(http_api *a);   /* a may be NULL */

/* Answer one parsed request (or ask to be called again: out->yield) for a
 * connection whose continuation is *cont (NULL if none). A continuation
 * left there by a yield is picked up when the same request comes again
 * (another request drops it); free it with http_api_cont_free when the
 * connection closes. */
void http_api_handle_conn(http_api *a, http_api_cont **cont, const http_request *req,
                          http_api_reply *out);
/* The same with the api's own continuation (one client at a time). */
void http_api_handle(http_api *a, const http_request *req, http_api_reply *out);
void http_api_cont_free(http_api_cont *k);   /* k may be NULL */
/* An error reply (JSON body) for a request that could not be parsed. */
void http_api_error(http_api *a, int status, const char *code, const char *message,
                    http_api_reply *out);

#endif
