/* remote.h -- the reads of the `kiln` client through an HBase REST gateway
 * or a kiln-server (`kiln --server ADDR get|multiget|exists|scan|count|list|
 * describe|regions`).
 *
 * Each call is one or more HTTP requests (cli/rest_http.h, on libcurl) in
 * HBase REST's protocol; the JSON answers (HBase's CellSet, TableList,
 * TableSchema) are decoded with jansson back into the storage types the
 * embedded commands print (store_row, kiln_schema), so the output is the
 * same either way. Scans use HBase's scanner protocol (POST /TABLE/scanner,
 * GET the Location until 204, DELETE) and fall back to Kiln's stateless
 * paging (GET of the row glob "*", resumed from "next_startrow") when the server
 * answers 404 or 405 to the scanner route (or 413/501: it takes no request
 * body); reversed and index scans always page. Counts use Kiln's count route, else a scanner; a Kiln count
 * restarts when a new version is published between its pages, so it counts
 * one version.
 *
 * Ownership: rows returned borrow from the remote (get, multiget) or the
 * scan (scan) until its next call. Errors carry the server's message and
 * name it as host:port; a table the server does not have is KILN_NOT_FOUND,
 * a bad column KILN_INVALID, an answer that cannot be decoded
 * KILN_CORRUPTION, a failed transfer KILN_IO. Single-threaded.
 */
#ifndef KILN_CLI_REMOTE_H
#define KILN_CLI_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/store/schema.h"
#include "storage/base/status.h"
#include "storage/store/store_index.h"
#include "storage/store/store_view.h"

#define REMOTE_TIMEOUT_MS 30000
#define REMOTE_SCANNER_BATCH 1000   /* cells per scanner batch */

typedef struct remote remote;

/* Set up a client of server: "HOST:PORT" or "http[s]://HOST[:PORT][/PATH]"
 * (rest_http.h). KILN_INVALID for a bad address; an unreachable server is
 * found by the first call (KILN_IO). */
kiln_status remote_open(const char *server, remote **out, kiln_err *err);
void remote_close(remote *r);   /* r may be NULL */

/* Read one row with o's columns, versions and time range (as store_view_get);
 * out->count is 0 if the row has no visible cell. */
kiln_status remote_get(remote *r, const char *table, const uint8_t *row, size_t n,
                       const store_row_opts *o, store_row *out, kiln_err *err);

/* Is there a table of that name? (GET /TABLE/exists; 404 is "no".) */
kiln_status remote_exists(remote *r, const char *table, int *exists, kiln_err *err);

/* Called with each row a multiget finds (borrowed until it returns); a
 * status other than KILN_OK stops the multiget with it. */
typedef kiln_status (*remote_row_fn)(void *arg, const store_row *row, kiln_err *err);

/* Read rows[0..n) with o's options: rows that have a visible cell, in the
 * server's order (HBase and Kiln: the order asked). GET /TABLE/multiget
 * ?row=..&row=.. (100 rows a request); with columns or a time range, one
 * get per row. */
kiln_status remote_multiget(remote *r, const char *table, const kslice *rows, size_t n,
                            const store_row_opts *o, remote_row_fn fn, void *arg,
                            kiln_err *err);

typedef struct remote_scan remote_scan;

/* A scan with o's bounds, prefix, limit, direction, columns, versions and
 * time range (as store_scan_open). filter (may be NULL) is a filter in HBase
 * REST's JSON model (storage/query/shell_filter.h makes one), sent in the
 * Scanner body or as Kiln's filter= parameter; the limit counts the rows it
 * keeps. */
kiln_status remote_scan_open(remote *r, const char *table, const store_scan_opts *o,
                             const char *filter, remote_scan **out, kiln_err *err);
/* Rows through the table's secondary index (as store_index_scan_open: the
 * server's index=&value=&value_start=&value_stop= scan, paged by its
 * "next_after"). Read with remote_scan_next. */
kiln_status remote_index_scan_open(remote *r, const char *table, const char *index,
                                   const store_index_opts *o, remote_scan **out, kiln_err *err);
kiln_status remote_scan_next(remote_scan *s, store_row *out, int *has_row, kiln_err *err);
void remote_scan_close(remote_scan *s);   /* s may be NULL */

/* Rows with a visible cell (as store_view_count; limit and direction ignored). */
kiln_status remote_count(remote *r, const char *table, const store_scan_opts *o, uint64_t *rows,
                         kiln_err *err);

/* The served tables, sorted (free with table_list_free). */
kiln_status remote_list(remote *r, char ***names, size_t *count, kiln_err *err);

/* A table's schema (families, settings, properties; no split keys), its
 * region count and its served version (0: nothing loaded). out is
 * initialized by the call; schema_free it. */
kiln_status remote_schema(remote *r, const char *table, kiln_schema *out, size_t *regions,
                          uint64_t *version, kiln_err *err);

/* Decode an HBase CellSet JSON answer of n bytes as the reads do, counting
 * its rows and cells: KILN_CORRUPTION for bad JSON, a wrong shape or bad
 * base64. For tests and the fuzzer; no connection is involved. */
kiln_status remote_decode_cellset(const uint8_t *p, size_t n, size_t *rows, size_t *cells,
                                  kiln_err *err);

typedef struct remote_region {
    kbuf start, end;
    size_t files;
    uint64_t bytes;
} remote_region;

/* The regions of the served version; name gets the canonical table name
 * (SCHEMA_NAME_MAX + 1 bytes). Free with remote_regions_free. */
kiln_status remote_regions(remote *r, const char *table, char *name, uint64_t *version,
                           remote_region **out, size_t *count, kiln_err *err);
void remote_regions_free(remote_region *regions, size_t count);

#endif
