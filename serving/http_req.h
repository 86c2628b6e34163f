/* http_req.h -- a request parsed once into the http_req of http_handler.h:
 * its route, method, representation and every decoded piece the handlers
 * read. Path and query rules are in http_req.c.
 *
 * Thread-safety: parses into one worker's http_api.
 */
#ifndef KILN_HTTP_REQ_H
#define KILN_HTTP_REQ_H

#include <stdint.h>

#include "serving/http_handler.h"

/* Parse the request's route, path and query into a->rq. 0, or -1 with the
 * reply filled (400 / 404). Table routes still need their table looked up. */
int http_req_parse(http_api *a, const http_request *req, http_api_reply *out);
/* Decode helpers of the parse: a column list into a->rq.cols (0, or -1 with
 * the reply filled), and a decimal u64 (0, or -1). */
int http_req_columns(http_api *a, kslice raw, int decode_first, http_api_reply *out);
int http_req_u64(kslice s, uint64_t *out);

#endif
