/* views.h -- the tables a server serves and their current versions, with
 * hot swaps that never make a request fail or mix two versions.
 *
 * A views object opens every table of a data directory (store_view.h) over
 * one block cache and one row-cache pool, and publishes them as a snapshot:
 * an immutable, reference-counted, sorted list of entries, one per table,
 * each holding one open version. A background thread (views_start) looks at
 * every table's CURRENT every poll interval and lists the data directory
 * every second; when a load or a rollback (any process) published a new
 * version it opens it (trailers, indexes and blooms), warms it, and only
 * then publishes a new snapshot. Warming has two parts. First, when the
 * old version's row cache answered its reads and holds more rows than a
 * replay takes, the new version is read in key order and the rows the old
 * cache held are cached with their new values; otherwise, when the new
 * version's blocks fit in the cache's free room (and in half the cache),
 * every data block of it is read into the cache (HBase's prefetch on open),
 * so requests after the swap do not go to the files. Then the most recently
 * read rows of the old version not cached yet are replayed against the new
 * one. A version that fails to open is
 * reported and the old one kept serving; the open is retried.
 *
 * Worker threads read through a views_reader: a thread-local reference to
 * the current snapshot, refreshed between requests at the cost of one
 * atomic load when nothing changed. A request uses one entry from start to
 * end, so it sees one version; the old version is closed when the last
 * reader has moved on (readers refresh at least every poll interval).
 *
 * Thread-safety: views_* functions are thread-safe; a views_reader and a
 * views_ctx belong to one thread. Entries are valid while the reader's
 * snapshot holds them, i.e. until the reader's next refresh.
 */
#ifndef KILN_VIEWS_H
#define KILN_VIEWS_H

#include <stddef.h>
#include <stdint.h>

#include "serving/rowcache.h"
#include "storage/base/block_cache.h"
#include "storage/base/status.h"
#include "storage/store/speed.h"
#include "storage/store/store_view.h"

#define VIEWS_POLL_MS_DEFAULT 100
#define VIEWS_WARM_MS_DEFAULT 600
#define VIEWS_WARM_KEYS_DEFAULT 250000
#define VIEWS_PREFETCH_MS_DEFAULT 60000
#define VIEWS_ERROR_MAX 512
/* A swap's fill of the new version's row cache asks the old version's cache
 * about one row in VIEWS_FILL_SAMPLE once the rows it asks about are all
 * there, so at most VIEWS_FILL_SAMPLE - 1 rows the old cache did not hold
 * are cached each time the rows it held stop. Each lookup takes the lock of
 * a shard the workers read under, and the fill runs niced: a fill preempted
 * while holding it leaves a worker waiting until the fill is scheduled
 * again. One in 16 left the worker waiting about 500 times a second
 * through a fill under load; one in 256 about 25. */
#define VIEWS_FILL_SAMPLE 256

typedef struct views_options {
    size_t block_cache_bytes;
    size_t row_cache_bytes;      /* 0: no row cache */
    long poll_ms;                /* CURRENT checks */
    long warm_ms;                /* time budget of a warm-up; 0: none */
    size_t warm_keys;            /* rows replayed at most */
    long prefetch_ms;            /* time budget of reading a new version's file pages, and
                                  * again of its block prefetch; 0: neither */
    /* Take online writes: open the data directory's speed layer (speed.h)
     * and serve every table's read view with its memstores. 0: read-only. */
    int speed;
    speed_options speed_opt;
} views_options;

void views_options_init(views_options *o);

typedef struct views views;
typedef struct views_entry views_entry;
typedef struct views_reader views_reader;

/* Per-table state the status page and /metrics show. */
typedef struct views_table_info {
    char name[SCHEMA_NAME_MAX + 1];
    uint64_t version;
    uint64_t swaps;              /* versions published while serving */
    int64_t opened_ms;           /* wall clock when the served version was published */
    double last_open_ms, last_warm_ms;
    uint64_t last_warm_rows;
    uint64_t last_page_bytes;    /* file pages of the new version read before it was served */
    uint64_t last_prefetch_bytes; /* blocks of the new version cached before it was served */
    char error[VIEWS_ERROR_MAX]; /* last failed open ("" if none since) */
} views_table_info;

/* Open every table of data_dir. KILN_IO if the directory cannot be listed;
 * a table that fails to open is logged and skipped (retried later). */
kiln_status views_open(const char *data_dir, const views_options *o, views **out, kiln_err *err);
/* Stop the thread if running and free. REQUIRES: every reader freed. */
void views_close(views *v);

/* Start / stop the background thread (stop joins it). */
kiln_status views_start(views *v, kiln_err *err);
void views_stop(views *v);
/* Check every table now, on the calling thread (what the background thread
 * does each poll). Returns how many versions were swapped in. */
size_t views_poll(views *v);
/* Have the background thread check every table (and list the data
 * directory) now instead of at its next poll. Any thread. */
void views_wake(views *v);

const char *views_data_dir(const views *v);
/* The speed layer writes go to, or NULL when serving read-only. */
kiln_speed *views_speed(views *v);
/* A server-side error's text for a client: paths under the data directory
 * relative to it, any other absolute path cut to its last component (the
 * full text belongs in the server log). Writes at most cap bytes, NUL
 * included. */
void views_client_text(const views *v, const char *msg, char *out, size_t cap);
block_cache *views_block_cache(views *v);
rowcache_pool *views_rowcache_pool(views *v);
/* Total swaps so far and the current snapshot's generation. */
uint64_t views_swaps(const views *v);
/* A copy of every table's info, sorted by name; free(*out). */
size_t views_table_infos(views *v, views_table_info **out);

/* ------------------------------------------------------------------ readers */

views_reader *views_reader_new(views *v);
void views_reader_free(views_reader *r);   /* r may be NULL */
/* Move to the current snapshot if it changed (cheap otherwise). */
void views_reader_refresh(views_reader *r);
/* The entry of table name[0..n) ("t" or "ns:t"), or NULL if there is none
 * (or the name is not a valid table name). */
views_entry *views_reader_find(views_reader *r, const char *name, size_t n);
/* Entries in name order (the table list; Redis SELECT numbers). */
size_t views_reader_count(const views_reader *r);
views_entry *views_reader_at(const views_reader *r, size_t i);

/* Row cache statistics summed over the entries of the reader's snapshot. */
void views_rowcache_totals(const views_reader *r, rowcache_stats *out);

const char *views_entry_name(const views_entry *e);
uint64_t views_entry_version(const views_entry *e);
store_view *views_entry_view(const views_entry *e);
const kiln_schema *views_entry_schema(const views_entry *e);

/* ------------------------------------------------------------------ reads */

/* Per-thread scratch for reads: rows returned borrow from it until the
 * next read with the same context. */
typedef struct views_ctx views_ctx;
views_ctx *views_ctx_new(void);
void views_ctx_free(views_ctx *c);   /* c may be NULL */
/* Tie c to r: when r moves to a new snapshot, c lets go of the versions it
 * last read (its buffers keep a reference to them otherwise). */
void views_reader_attach(views_reader *r, views_ctx *c);

/* Read one row, as store_view_get with o (NULL: every column, newest
 * versions). Reads of the newest version of some or all columns without a
 * time range are answered from the entry's row cache when the table has no
 * TTL. KILN_INVALID for a column of an unknown family. */
kiln_status views_get(views_entry *e, views_ctx *c, const uint8_t *row, size_t n,
                      const store_row_opts *o, store_row *out, kiln_err *err);
/* Start loading the row cache's memory for a views_get of row soon: step 0
 * its hash bucket, step 1 (after step 0 of the same row) its entry. A
 * caller with many rows to read calls step 0 for all, then step 1 for all,
 * then reads them. A hint only: it changes nothing. */
void views_prefetch_row(views_entry *e, const uint8_t *row, size_t n, int step);

#endif
