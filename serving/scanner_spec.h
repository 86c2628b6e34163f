/* scanner_spec.h -- the Scanner body of HBase REST's scanner protocol
 * (PUT/POST /TABLE/scanner), parsed from JSON, XML or protobuf.
 *
 *   JSON  {"startRow":B64,"endRow":B64,"column":[B64,...],"batch":N,"caching":N,
 *          "maxVersions":N,"startTime":MS,"endTime":MS,"limit":N,"reversed":BOOL,
 *          "filter":"<filter model JSON as a string>"}
 *   XML   <Scanner startRow=".." endRow=".." batch=".." ...><column>B64</column>
 *          <filter>..</filter></Scanner>
 *   PB    Scanner { bytes startRow = 1; bytes endRow = 2; repeated bytes columns = 3;
 *          int32 batch = 4; int64 startTime = 5; int64 endTime = 6;
 *          int32 maxVersions = 7; string filter = 8; int32 caching = 9;
 *          repeated string labels = 10; bool cacheBlocks = 11; int32 limit = 12 }
 *
 * Columns are "family[:qualifier]" (base64 of the bytes). Every parser is
 * bounded by the body (at most HTTP_BODY_MAX bytes) and reports malformed
 * input as KILN_INVALID with a message naming the field.
 *
 * Thread-safety: stateless; a spec belongs to its caller.
 */
#ifndef KILN_SCANNER_SPEC_H
#define KILN_SCANNER_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "serving/http_rep.h"
#include "storage/base/buf.h"
#include "storage/base/status.h"
#include "storage/store/store_view.h"

#define SCANNER_SPEC_COLUMNS_MAX 64

typedef struct scanner_spec {
    kbuf start, end;
    kbuf colbuf[SCANNER_SPEC_COLUMNS_MAX];   /* "family\0qualifier" */
    store_column cols[SCANNER_SPEC_COLUMNS_MAX];
    size_t ncols;
    int64_t batch;            /* cells per answer; 0 = the default */
    int64_t caching;
    int64_t max_versions;     /* 0 = 1 */
    int64_t start_time, end_time;   /* [start, end); end 0 = unbounded */
    int64_t limit;            /* rows; 0 = no limit */
    int reversed;
    int has_filter;
    kbuf filter;              /* the filter model text */
} scanner_spec;

void scanner_spec_init(scanner_spec *s);
void scanner_spec_free(scanner_spec *s);
/* Parse body p[0..n) in representation rep (JSON for HTTP_REP_RAW). */
kiln_status scanner_spec_parse(const uint8_t *p, size_t n, http_rep rep, scanner_spec *s,
                               kiln_err *err);

#endif
