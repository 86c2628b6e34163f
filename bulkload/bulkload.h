/* bulkload.h -- atomic bulk load of a job's HFile output into a table.
 *
 * A load checks the whole job output before it touches the store, then
 * publishes the whole table (every region and family) as one new view
 * version with one rename of CURRENT (table.h). Compared with HBase's
 * completebulkload, which commits region by region and cannot roll back, a
 * crash or error at any point leaves the previous version current, and the
 * previous versions stay available for rollback.
 *
 * Steps: refuse output without `_SUCCESS`; find the HFiles (one directory per
 * family, names starting with '_' or '.' skipped, as HBase does); open each
 * (trailer, load-on-open blocks with their checksums), check its first and
 * last keys are ordered and of its directory's family, and that the family
 * exists; map it to the region holding its rows; split a file whose rows
 * straddle region boundaries into one new file per region (or refuse with
 * no_split); take the table LOCK; detect output that is already part of the
 * current version (nothing is done, already_loaded is set); stage each file
 * into the store's files/ as the store's own copy (a reflink where the file
 * system shares blocks copy-on-write, else a copy; never a hard link, so
 * rewriting a job file cannot change a published version; the job's files
 * are never moved or changed) and fsync it; publish; collect garbage.
 *
 * Move (options.move, HBase completebulkload's semantics): each unsplit file
 * is hard-linked into files/ instead (constant time at any size), fsynced
 * through its new name, and once the new version is published and durable
 * the job output's HFile names are removed, so no name outside the store is
 * left to rewrite the shared inode. A file whose link fails because the
 * output sits on another file system, or the file system has no hard links
 * (EXDEV, EPERM, EOPNOTSUPP, EMLINK, ENOSYS), is staged as without move
 * (reflink or copy) and its name removed all the same. Before the first
 * name is removed, JOB/_MOVED records the table, the version and the
 * output's fingerprint (written atomically), so a crash part way through
 * the removals is recognized: a later load of that output reports it
 * already loaded, and with move removes the names that are left. A crash
 * before publish leaves the output whole (its store names are orphans the
 * next garbage collection removes); one after publish, before _MOVED,
 * leaves both names, and the fingerprint finds the output already loaded.
 *
 * Salted tables: the first and last row of every file must carry the bucket
 * byte of the rest of the key (store_salt.h), so output of a job that did
 * not salt is refused instead of becoming unreachable rows.
 *
 * Secondary indexes: a job that built indexes (jobs/index_output.h) leaves
 * each under _index/NAME/ -- a `_schema` record (the index table's schema,
 * storage/store/store_index_def.h) and the index table's family directory. The load
 * checks each against the table, maps its files to the index table's
 * regions, and publishes the table and all its indexes in the same manifest,
 * so they change together in one CURRENT swap.
 *
 * Modes: REPLACE makes the job output the whole new view (the table and the
 * indexes the job built; an index the job did not build is gone); APPEND adds
 * it to the current version's files, newer loads winning on equal cell keys
 * (as HBase bulk load's sequence ids do), and must bring exactly the indexes
 * the current version has, so no index misses the appended rows.
 *
 * Thread-safety: one load per call; concurrent loads of one table, from any
 * process, are serialized by the table LOCK.
 */
#ifndef KILN_BULKLOAD_H
#define KILN_BULKLOAD_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/store/manifest.h"
#include "storage/store/schema.h"
#include "storage/base/status.h"
#include "storage/store/table.h"

#define BULKLOAD_SUCCESS_FILE "_SUCCESS"
#define BULKLOAD_JOB_REPORT "_job.json"
#define BULKLOAD_INDEX_DIR "_index"       /* JOB/_index/NAME/{_schema, i/HFILE} */
#define BULKLOAD_INDEX_SCHEMA "_schema"
#define BULKLOAD_MOVED_FILE "_MOVED"      /* JOB/_MOVED: written by a move before it removes */

typedef enum bulkload_mode {
    BULKLOAD_REPLACE = 0,
    BULKLOAD_APPEND = 1
} bulkload_mode;

typedef struct bulkload_options {
    bulkload_mode mode;      /* default REPLACE */
    int dry_run;             /* check and plan only: no lock, nothing written */
    int no_split;            /* refuse a file that straddles a region boundary */
    int verify;              /* also read and check every block of every file */
    int move;                /* hard-link unsplit files into the store and remove the job
                                output's HFile names after publishing (see above) */
    long lock_wait_ms;       /* 0: fail at once if locked; > 0 wait that long; < 0 forever */
    table_step_fn step;      /* crash-test instrumentation (table.h), NULL by default: called
                                at "checked", "locked", "staging N" and "staged N" (file N
                                of the output, 0-based), "files synced", the publish's steps,
                                "published", with move "move marked" (_MOVED written) and
                                "source removed N", the collection's steps and "collected" */
    void *step_arg;
    /* A covering load (docs/speed-layer.md): online writes made before
     * this load with timestamps <= covers_until are retired with the old
     * batch view. covers = 0: the load covers nothing (as HBase). */
    int covers;
    int64_t covers_until;
} bulkload_options;

void bulkload_options_init(bulkload_options *o);

typedef enum bulkload_action {
    BULKLOAD_LINK = 0,       /* reflinked into the store (blocks shared copy-on-write) */
    BULKLOAD_COPY,           /* copied (the plan for every unsplit file) */
    BULKLOAD_SPLIT,          /* rewritten as one file per region it spans */
    BULKLOAD_SKIP_EMPTY,     /* no cells: nothing to load */
    BULKLOAD_MOVE            /* hard-linked into the store (move: the plan for unsplit files) */
} bulkload_action;

/* One HFile of the job output and what the load does with it. */
typedef struct bulkload_file {
    char path[PATH_MAX];                    /* in the job output */
    char family[SCHEMA_FAMILY_NAME_MAX + 1];
    size_t table;                           /* 0: the table; i: index i-1 of indexes[] */
    uint64_t size;
    uint64_t entries;
    size_t region_first;                    /* regions its rows span */
    size_t region_last;
    bulkload_action action;                 /* planned, then done */
    int move_fallback;                      /* move: the link failed (another file system),
                                               so it was reflinked or copied */
    size_t pieces;                          /* files written for a split */
} bulkload_file;

typedef struct bulkload_result {
    uint64_t version;            /* published version; 0 on a dry run or when already loaded */
    uint64_t parent;             /* version current before the load, 0 if none */
    int already_loaded;          /* the output is part of the current version: nothing done */
    uint64_t loaded_in;          /* ... loaded in this version */
    uint64_t fingerprint;        /* of the job output: its HFiles' names, sizes, trailers,
                                    key ranges and creation times, and its job report */
    bulkload_file *files;        /* every HFile found, in path order */
    size_t file_count;
    char (*indexes)[SCHEMA_NAME_MAX + 1];   /* the indexes the output holds, by name */
    size_t index_count;
    size_t linked, copied, split, pieces, skipped;   /* linked: reflinked */
    size_t moved;                /* move: hard-linked into the store */
    size_t move_fallbacks;       /* move: link failed, reflinked or copied (also counted there) */
    size_t sources_removed;      /* move: HFile names removed from the job output */
    uint64_t moved_in;           /* move: version the output was moved into (the
                                    _MOVED record), 0 if it was not moved */
    uint64_t bytes;              /* bytes of the job's HFiles */
    uint64_t cells;
    size_t regions_loaded;       /* regions of the table that received at least one file */
    int unconfirmed;             /* version is current, but the directory fsync after the
                                    CURRENT rename failed: a crash may still bring back
                                    parent (the load returned KILN_IO) */
    double check_ms, stage_ms, publish_ms, gc_ms, total_ms;
    table_gc_stats gc;
    kiln_err gc_err;             /* a failed garbage collection (the load itself succeeded) */
    kiln_err move_err;           /* move: a failed removal of the job's names after publishing
                                    (the load itself succeeded; loading again with move
                                    finishes it) */
} bulkload_result;

void bulkload_result_free(bulkload_result *r);   /* r may be NULL */

/* Load job_dir into table (see above). On success with !dry_run and
 * !already_loaded, r->version is current. Errors: KILN_NOT_FOUND (table,
 * job directory or _SUCCESS missing, no HFile found), KILN_INVALID (unknown
 * family, a straddling file with no_split), KILN_CORRUPTION (a bad HFile,
 * named with its offset), KILN_BUSY (another load holds the lock), KILN_IO.
 * KILN_INVALID also for an index that is not an index of this table, an
 * append whose indexes differ from the current version's, and rows of a
 * salted table without their bucket byte.
 * A job output holding _MOVED (moved by an earlier load): already_loaded
 * when its fingerprint is part of the current version (with move, the
 * HFile names left are removed), else KILN_INVALID (moved into another
 * table, or into a version no longer current: its HFiles are gone).
 * Every error leaves the previous version current and the store unchanged
 * (staged files are removed; a crash leaves orphans the next load removes),
 * except one: when the rename of CURRENT succeeded but the directory fsync
 * after it failed, the new version is current (r->version set,
 * r->unconfirmed = 1, KILN_IO naming the failed fsync) and may or may not
 * survive a crash; the caller must say so (kiln load exits with status 3). */
kiln_status bulkload_run(const char *data_dir, const char *table, const char *job_dir,
                         const bulkload_options *o, bulkload_result *r, kiln_err *err);

const char *bulkload_action_name(bulkload_action a);

#endif
