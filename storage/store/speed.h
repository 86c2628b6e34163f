/* speed.h -- the speed layer of a data directory: online writes through one
 * write-ahead log into per-region, per-family memstores, read merged with
 * the published (batch) version of each table, flushed to HFiles and
 * published like any version.
 *
 * Sequence numbers: each table has one 64-bit sequence shared by its bulk
 * loads and its writes. A write takes the next number; a version that a
 * load, a flush or a compaction publishes records in its manifest the
 * highest write sequence its files hold (manifest.h flushed_seq). A table's
 * next number is above every version and every write of it, on disk or in
 * the log.
 *
 * A write (speed_mutate) is atomic per row: its cells get one sequence
 * number, are appended to the log as one record, added to the memstores,
 * and become visible to readers together once every earlier write of the
 * table is visible (a read point per table, advanced in sequence order, as
 * HBase's MVCC). With SYNC_WAL the call returns after the log record is
 * fsynced (group commit across writers); with ASYNC_WAL after it is queued
 * (synced in the background within the log's async interval); with SKIP_WAL
 * the log is not written (the write lives in memory until a flush).
 *
 * Reads: speed_view returns a store_view (store_view.h) of the table's
 * published version with its memstores merged in: Get, Scan, count and the
 * cell iterators see both, with full HBase semantics. A read fixes its read
 * point when it starts (snapshot-consistent scans while writes continue).
 *
 * Flush: when a table's memstores pass memstore_flush_bytes (or on
 * speed_flush), they are frozen (new writes go to fresh memstores), written
 * as one HFile per region and family, and published as a new version
 * (kind MAINT, flushed_seq = the frozen memstores' highest sequence); the
 * log files no table needs any more are deleted. After a flush the
 * background thread runs a minor compaction (speed_compact) and splits
 * regions past the table's max_region_bytes (speed_split).
 *
 * Opening replays the log: every record of a table with a sequence above
 * its published flushed_seq goes back into the memstores. A torn tail of
 * the log is ignored (the writes it held were never acknowledged as
 * SYNC_WAL).
 *
 * Thread-safety: every function is thread-safe. Writes to one table are
 * serialized for the sequence and memstore steps only; log syncs overlap.
 */
#ifndef KILN_SPEED_H
#define KILN_SPEED_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/block_cache.h"
#include "storage/base/status.h"
#include "storage/store/mutation.h"
#include "storage/store/store_view.h"
#include "storage/store/wal.h"

#define SPEED_WAL_DIR "wal"
#define SPEED_FLUSH_BYTES_DEFAULT (64u * 1024 * 1024)
#define SPEED_COMPACT_RATE_DEFAULT (64ull * 1024 * 1024)   /* bytes/s a compaction writes */

typedef struct speed_options {
    size_t memstore_flush_bytes;   /* per table; 0: flush only on demand */
    int read_only;                 /* replay the log without taking it: reads only */
    long flush_check_ms;           /* background flusher period; 0: no thread */
    uint64_t compact_bytes_per_sec;  /* compaction throttle; 0: none */
    size_t compact_min_files;      /* a minor compaction merges at least this many */
} speed_options;

void speed_options_init(speed_options *o);

typedef struct kiln_speed kiln_speed;

/* Open the speed layer of data_dir: take the log (DATA/wal, KILN_BUSY naming
 * the holder if another process has it; not with read_only), replay it into
 * memstores. cache may be NULL and must outlive s. */
kiln_status speed_open(const char *data_dir, block_cache *cache, const speed_options *o,
                       kiln_speed **out, kiln_err *err);
/* Stop the flusher, sync the log, free. Memstores are not flushed (the log
 * holds them). s may be NULL. */
void speed_close(kiln_speed *s);

/* Apply n row mutations to table, each atomically. Timestamps of
 * CELL_LATEST_TIMESTAMP become the server's clock (a Delete at LATEST: the
 * newest version's timestamp, nothing if there is none). KILN_NOT_FOUND for
 * an unknown table, KILN_INVALID for an unknown family or a bad cell
 * (naming the row), KILN_UNSUPPORTED for a table with secondary indexes or
 * a salted table, KILN_READ_ONLY-like KILN_INVALID when opened read_only.
 * On an error nothing of the failing mutation was applied; earlier ones in
 * the batch were. */
kiln_status speed_mutate(kiln_speed *s, const char *table, kiln_mutation *muts, size_t n,
                         kiln_durability d, kiln_err *err);

/* One column to increment by delta. Values are 8-byte big-endian signed
 * integers (HBase's Bytes.toBytes(long)); an absent column counts as 0. */
typedef struct speed_incr {
    const char *family;
    const uint8_t *qualifier;
    size_t qualifier_len;
    int64_t delta;
} speed_incr;

/* Increment columns of one row atomically; out[i] gets column i's new value.
 * KILN_INVALID if a current value is not 8 bytes. */
kiln_status speed_increment(kiln_speed *s, const char *table, const uint8_t *row, size_t n,
                            const speed_incr *incr, size_t k, kiln_durability d, int64_t *out,
                            kiln_err *err);

/* CheckAndMutate: if the newest value of (family, qualifier) in m's row
 * equals expected[0..expected_len) (expected NULL: the column is absent),
 * apply m, atomically with the check. *applied says which. */
typedef struct speed_check {
    const char *family;
    const uint8_t *qualifier;
    size_t qualifier_len;
    const uint8_t *expected;
    size_t expected_len;
} speed_check;

kiln_status speed_check_and_mutate(kiln_speed *s, const char *table, const speed_check *chk,
                                   kiln_mutation *m, kiln_durability d, int *applied,
                                   kiln_err *err);

/* The table's read view: its published version with its memstores. The
 * caller owns one reference (store_view_unref). Looks at the table's
 * CURRENT first (one stat): a version someone else published (a load, a
 * rollback) is taken, freezing the memstores written over the old one. The
 * same object is returned until a flush, a load or a rollback changes the
 * version or the memstores are frozen. KILN_NOT_FOUND for an unknown table. */
kiln_status speed_view(kiln_speed *s, const char *table, store_view **out, kiln_err *err);

/* Flush the table's memstores now (nothing to do if empty). */
kiln_status speed_flush(kiln_speed *s, const char *table, kiln_err *err);

/* Compaction. Files of one family in one region are merged into one file,
 * batch files (bulk-loaded) and speed-layer files never together: a replace
 * load replaces the batch files alone. Minor (major = 0): the run
 * store_compact_pick chooses among each kind's files, delete markers kept.
 * Major: the memstores are flushed first, then every file of each kind is
 * merged; where a region and family has files of one kind only, delete
 * markers and what they mask, expired cells and versions beyond the
 * family's VERSIONS go (store_compact.h); where it has both, markers stay
 * (a write's Delete keeps masking the batch view) and only versions within
 * the kind are merged. Retired writes (a covering load) are dropped for
 * good. Published as a new version; reads go on from the old one meanwhile;
 * the output is written at compact_bytes_per_sec at most. */
typedef struct speed_compact_stats {
    uint64_t version;              /* published, 0 if nothing was compacted */
    uint64_t compactions, files_in, cells_in, cells_out, bytes_out;
    uint64_t bytes_in;             /* of the files merged */
} speed_compact_stats;

kiln_status speed_compact(kiln_speed *s, const char *table, int major, speed_compact_stats *st,
                          kiln_err *err);

/* Split every region whose files pass max_bytes (0: the table's
 * max_region_bytes property; absent: never) at its middle row
 * (store_split.h), one published version each. *splits gets how many. */
kiln_status speed_split(kiln_speed *s, const char *table, uint64_t max_bytes, size_t *splits,
                        kiln_err *err);

typedef struct speed_table_stats {
    uint64_t seq;                  /* last sequence number handed out */
    uint64_t read_point;           /* last visible one */
    uint64_t flushed_seq;          /* in published files */
    uint64_t memstore_bytes, memstore_cells;
    uint64_t writes, flushes;
} speed_table_stats;

kiln_status speed_table_stats_get(kiln_speed *s, const char *table, speed_table_stats *out,
                                  kiln_err *err);

/* The write-ahead log's counters (wal.h: appends, group syncs, records per
 * sync); all zero when the speed layer is open read-only. */
void speed_wal_stats(kiln_speed *s, wal_counters *out);

#endif
