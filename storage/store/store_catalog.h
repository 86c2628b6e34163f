/* store_catalog.h -- the tables of a data directory opened for serving: one
 * shared block cache, the current view of each table, and hot swaps when a
 * load publishes a new version.
 *
 * store_catalog_acquire hands out a reference to a table's current view. At
 * most once per check interval (default 100 ms) it stats the table's CURRENT
 * (store_view_is_current); when a new version was published it opens it and
 * swaps it in. Requests that hold the old view finish on it (its files stay
 * open until the last reference goes), so no request fails and none mixes two
 * versions. A failed reopen keeps serving the old view and is reported on
 * the next acquire only if no view is available at all.
 *
 * Thread-safety: every function is thread-safe. The views returned are
 * shared; each caller unrefs its own.
 */
#ifndef KILN_STORE_CATALOG_H
#define KILN_STORE_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/block_cache.h"
#include "storage/base/status.h"
#include "storage/store/store_view.h"

#define STORE_CATALOG_CHECK_MS 100

typedef struct store_catalog store_catalog;

/* A catalog over data_dir with a block cache of cache_bytes (0: no caching). */
kiln_status store_catalog_open(const char *data_dir, size_t cache_bytes, store_catalog **out,
                               kiln_err *err);
/* Drop the catalog's references and the cache. REQUIRES: every view acquired
 * from it was released. c may be NULL. */
void store_catalog_close(store_catalog *c);

block_cache *store_catalog_cache(store_catalog *c);
const char *store_catalog_data_dir(const store_catalog *c);
/* How often acquire looks at CURRENT, in ms (0: every call). */
void store_catalog_set_check_interval(store_catalog *c, long ms);

/* The current view of table (a new reference: store_view_unref it).
 * KILN_NOT_FOUND if the table does not exist (or no longer does). */
kiln_status store_catalog_acquire(store_catalog *c, const char *table, store_view **out,
                                  kiln_err *err);

/* Check every table opened so far now and swap those with a new version.
 * *swapped (may be NULL) gets how many were swapped. The first reopen error
 * is returned; the other tables are still checked. */
kiln_status store_catalog_refresh(store_catalog *c, size_t *swapped, kiln_err *err);

#endif
