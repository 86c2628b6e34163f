/* http_metrics.h -- the handler of GET /metrics: the Prometheus text of the
 * request metrics and the gauges read at the time of the request
 * (http_metrics.c).
 *
 * Thread-safety: one worker's http_api; the metrics it reads are shared.
 */
#ifndef KILN_HTTP_METRICS_H
#define KILN_HTTP_METRICS_H

#include "serving/http_handler.h"

void http_metrics_render(http_api *a, http_api_reply *out);

#endif
