/* remote.h -- the reads of the `kiln` client through a kiln-server
 * (`kiln --server HOST:PORT get|scan|count|list|describe|regions`).
 *
 * Each call is one or more HTTP requests (serving/http_client.h) to the
 * server's HBase-REST-shaped API; the JSON answers are decoded back into the
 * storage types the embedded commands print (store_row, kiln_schema), so
 * the output is the same either way. Scans and counts page with the
 * server's "next_startrow"; a count restarts when a new version is published
 * between its pages, so it counts one version.
 *
 * Ownership: rows returned borrow from the remote (get) or the scan (scan)
 * until its next call. Errors carry the server's message; a table the
 * server does not have is KILN_NOT_FOUND, a bad column KILN_INVALID.
 * Single-threaded.
 */
#ifndef KILN_CLI_REMOTE_H
#define KILN_CLI_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "storage/buf.h"
#include "storage/schema.h"
#include "storage/status.h"
#include "storage/store_index.h"
#include "storage/store_view.h"

#define REMOTE_TIMEOUT_MS 30000

typedef struct remote remote;

/* Connect to "HOST:PORT". KILN_INVALID for a bad address, KILN_IO if the
 * server cannot be reached. */
kiln_status remote_open(const char *server, remote **out, kiln_err *err);
void remote_close(remote *r);   /* r may be NULL */

/* Read one row with o's columns, versions and time range (as store_view_get);
 * out->count is 0 if the row has no visible cell. */
kiln_status remote_get(remote *r, const char *table, const uint8_t *row, size_t n,
                       const store_row_opts *o, store_row *out, kiln_err *err);

typedef struct remote_scan remote_scan;

/* A scan with o's bounds, prefix, limit, direction, columns, versions and
 * time range (as store_scan_open). */
kiln_status remote_scan_open(remote *r, const char *table, const store_scan_opts *o,
                             remote_scan **out, kiln_err *err);
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
