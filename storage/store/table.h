/* table.h -- a table's directory in the data directory: creation, listing,
 * the load lock, view versions (publish, rollback) and garbage collection.
 * This is the writer side of the region store; store_view.h is the reader.
 *
 *   DATA/<namespace>/<table>/
 *     schema               the table's definition (schema.h), written atomically
 *     CURRENT              pointer to the published version (manifest_pointer)
 *     LOCK                 flock()ed by a load or a rollback; holds the owner's pid
 *     manifests/<N>        one manifest per kept version N (decimal)
 *     files/<hex>          immutable HFiles (the store's own copies); names never reused
 *
 * Publishing version N (LevelDB's CURRENT): the caller stages and fsyncs N's
 * files and fsyncs files/; table_publish writes manifests/N (tmp, fsync,
 * rename, fsync dir), then CURRENT (tmp, fsync, rename, fsync dir). The rename
 * of CURRENT is the commit point: a crash before it leaves version N-1
 * current, after it version N. Files are named <version %08x><seq %08x>, so
 * the files of a version that was never published are recognizable and a
 * number is never handed out twice (the next version is above every
 * manifest, CURRENT and file prefix on disk).
 *
 * Garbage collection (after a publish is durable) keeps the current version
 * and its ancestors up to keep_versions in all -- counting batch views: an
 * ancestor whose child a flush, compaction or split made (kind MAINT) holds
 * the same batch view as that child and is not kept -- deletes every other manifest
 * (then fsyncs manifests/) and every file no kept manifest names (then
 * fsyncs files/). Only a missing parent manifest ends the walk; any other
 * failure to read one stops the collection before anything is deleted. Rollback never deletes, so a version
 * rolled away from stays available until the next load. Readers in other
 * processes keep reading files they opened after the files are unlinked.
 *
 * Thread-safety: a kiln_table is used by one thread at a time. Different
 * processes are serialized by LOCK for everything that changes versions.
 */
#ifndef KILN_TABLE_H
#define KILN_TABLE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/store/manifest.h"
#include "storage/store/schema.h"
#include "storage/base/status.h"

#define TABLE_SCHEMA_FILE "schema"
#define TABLE_CURRENT_FILE "CURRENT"
#define TABLE_LOCK_FILE "LOCK"
#define TABLE_MANIFEST_DIR "manifests"
#define TABLE_FILES_DIR "files"

typedef struct kiln_table kiln_table;

/* Create table schema->name in data_dir (created if absent): validates the
 * schema, fills created_ms if 0, and makes the directory appear atomically
 * with its schema. KILN_EXISTS if the table exists, KILN_INVALID for a bad
 * schema, KILN_IO naming the path. */
kiln_status table_create(const char *data_dir, kiln_schema *schema, kiln_err *err);

/* Open an existing table (name need not be canonical). KILN_NOT_FOUND
 * ("table default:t: not found in DATA"), KILN_CORRUPTION for a bad schema. */
kiln_status table_open(const char *data_dir, const char *name, kiln_table **out, kiln_err *err);
/* Release the lock if held and free. t may be NULL. */
void table_close(kiln_table *t);

const kiln_schema *table_schema(const kiln_table *t);
const char *table_name(const kiln_table *t);   /* canonical */
const char *table_dir(const kiln_table *t);

/* Canonical names of every table in data_dir, sorted. Free with table_list_free.
 * An absent data_dir holds no tables (not an error). */
kiln_status table_list(const char *data_dir, char ***names, size_t *count, kiln_err *err);
void table_list_free(char **names, size_t count);

/* Path of a table's directory (name canonical). KILN_INVALID if too long. */
kiln_status table_dir_path(const char *data_dir, const char *canon, char *out, size_t cap,
                           kiln_err *err);

/* Take the table's LOCK. wait_ms: 0 fails at once with KILN_BUSY naming the
 * holder's pid, > 0 waits up to that long, < 0 waits forever. */
kiln_status table_lock(kiln_table *t, long wait_ms, kiln_err *err);
void table_unlock(kiln_table *t);
int table_locked(const kiln_table *t);

/* The published pointer. KILN_NOT_FOUND if nothing was ever published. */
kiln_status table_current(const kiln_table *t, manifest_pointer *out, kiln_err *err);
/* Read and check manifests/<version>. *crc may be NULL. KILN_NOT_FOUND if absent. */
kiln_status table_read_manifest(const kiln_table *t, uint64_t version, manifest *out,
                                uint32_t *crc, kiln_err *err);
/* CURRENT and its manifest, checked against each other. KILN_NOT_FOUND if
 * nothing was published; KILN_CORRUPTION if the CRCs disagree. */
kiln_status table_read_current(const kiln_table *t, manifest *out, kiln_err *err);
/* Version numbers with a manifest on disk, ascending. Free *out. */
kiln_status table_versions(const kiln_table *t, uint64_t **out, size_t *count, kiln_err *err);

/* Next version number. REQUIRES: lock held. */
kiln_status table_next_version(const kiln_table *t, uint64_t *out, kiln_err *err);
/* Store file name for file `seq` of `version` (MANIFEST_FILE_NAME_MAX+1 bytes). */
void table_file_name(uint64_t version, uint32_t seq, char *out);
/* DIR/files/NAME into out. */
void table_file_path(const kiln_table *t, const char *name, char *out, size_t cap);
/* Version a store file name was created by (its first 8 hex digits), 0 if not a store name. */
uint64_t table_file_version(const char *name);

/* Rewrite the table's schema file with s (written to schema.tmp, fsynced,
 * renamed over schema, directory fsynced) and make s the handle's schema.
 * What changes the table's definition after creation: a region split
 * (store_split.h) writes the split keys of the version it published, so
 * that jobs and loads that partition by table_schema see the table's
 * current regions. KILN_INVALID for a schema that fails schema_validate or
 * names another table, KILN_IO naming the path. REQUIRES: lock held. */
kiln_status table_write_schema(kiln_table *t, const kiln_schema *s, kiln_err *err);

/* Publish m (m->version from table_next_version, files staged and synced):
 * write the manifest, then swap CURRENT. *published is set to 1 once CURRENT
 * names m->version (even if the final directory fsync then fails, which is
 * reported as KILN_IO). REQUIRES: lock held; m's tables pass
 * manifest_check_tables (the table, then its index tables); every file of m
 * present with its size (both checked: KILN_INTERNAL otherwise). */
kiln_status table_publish(kiln_table *t, const manifest *m, int *published, kiln_err *err);

/* Remove what an unpublished version left: its manifest and the files named
 * by it (best effort; errors ignored). REQUIRES: lock held, version not current. */
void table_abort_version(kiln_table *t, uint64_t version);

/* Make `version` current (0: the batch view before the current one: the
 * parent of the newest version a load made, passing over flushes,
 * compactions and splits). Checks the target's manifest and that its files
 * are all present. When either version holds online writes (speed-layer
 * files, a flushed sequence, covering rules), the rollback publishes a new
 * version instead: the target's batch files and ancestry with the current
 * version's speed-layer files, flushed sequence and covers, so no online
 * write is lost and retired writes stay retired. *out gets the version
 * made current. KILN_NOT_FOUND if the version is not kept, KILN_INVALID if
 * it is already current. REQUIRES: lock held. */
kiln_status table_rollback(kiln_table *t, uint64_t version, uint64_t *out, kiln_err *err);

typedef struct table_gc_stats {
    uint64_t manifests_removed;
    uint64_t files_removed;
    uint64_t bytes_removed;
    uint64_t versions_kept;
} table_gc_stats;

/* Delete manifests and files that no kept version needs (see above). st may
 * be NULL. Errors: the failure to read CURRENT or a kept manifest (nothing
 * deleted then), or the first failed unlink or fsync. REQUIRES: lock held. */
kiln_status table_gc(kiln_table *t, table_gc_stats *st, kiln_err *err);

/* Milliseconds since the epoch. */
int64_t table_now_ms(void);

/* Test instrumentation for crash tests: fn(arg, step) is called at each point
 * a crash must be survived -- table_publish's "manifest written", "current
 * written" (CURRENT.tmp synced, not renamed), "current renamed" (the commit
 * point passed, the directory not yet synced), table_gc's "gc manifests
 * removed" -- and by callers (bulkload) at theirs, through table_step. fn may
 * stop or kill the process. NULL (the default) turns it off. */
typedef void (*table_step_fn)(void *arg, const char *step);
void table_set_step_hook(kiln_table *t, table_step_fn fn, void *arg);
/* Report a step (printf-style name) to the hook, if one is set. */
void table_step(kiln_table *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
