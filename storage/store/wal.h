/* wal.h -- the server's write-ahead log: online writes are appended here,
 * and made durable, before they are applied to the memstores; after a crash
 * the log is replayed into fresh memstores (HBase's WAL, LevelDB's log).
 *
 * One log per data directory, in DATA/wal/. The log is payload-agnostic:
 * a record is a table name, that table's sequence number and opaque bytes
 * (the speed layer puts one encoded kiln_mutation there, mutation.h).
 * Sequence numbers are the caller's, one counter per table.
 *
 *   DIR/LOCK                 flock()ed by the process writing the log; holds its pid
 *   DIR/<16 hex digits>.log  log files, numbered upward; every wal_open starts a new
 *                            one, and none is ever appended to after it was left
 *
 * A log file (docs/storage-format.md section 3), integers big-endian:
 *
 *   OFFSET | SIZE | FIELD
 *   0      | 8    | magic "KILNWAL1"
 *   8      | 4    | format version = 1
 *   12     | 8    | the file's number (as in its name)
 *   20     | ...  | records, each:
 *          | 4    |   body length L (9 + table name length + payload length)
 *          | 4    |   masked CRC32C of the body (WAL_CRC_MASK below)
 *          | 1    |   table name length T (1..255)
 *          | T    |   table name (no NUL byte)
 *          | 8    |   sequence number
 *          | L-9-T|   payload
 *
 * A new file is created, its header written and fsynced, and the directory
 * fsynced before any record in it is acknowledged as durable.
 *
 * Durability. wal_append only buffers the record. A SYNC_WAL write calls
 * wal_sync(lsn), which returns once the record is written and fsynced
 * (group commit: concurrent callers share one write and one fsync). An
 * ASYNC_WAL write does not wait: a background thread writes and fsyncs
 * whatever is buffered at least every async_sync_ms, so an acknowledged
 * ASYNC_WAL write is lost on a crash or power cut only if it was
 * acknowledged less than async_sync_ms (+ one fsync) before -- precisely,
 * plus the fsync in flight when the thread woke, if any, and its own.
 * A failed write or fsync of a log file is sticky: the file's contents can
 * no longer be trusted, so every later wal_append and every wal_sync of a
 * record not durable before the failure returns that error; the server must
 * stop taking writes, and replay after a restart.
 *
 * Replay (wal_replay) reads every log file in order and is read-only and
 * lock-free, so a CLI can read a running server's log. A record that is
 * cut short or fails its checksum, with no valid record after it in the
 * same file, is a torn tail -- a write the crash interrupted, never
 * acknowledged -- and is ignored (counted, named by file and offset). Every
 * file may have one: each was the active file at some crash. A bad record
 * followed by a valid one in the same file is damage, not a torn write:
 * KILN_CORRUPTION naming the file and the offset, unless the caller passes
 * WAL_REPLAY_SKIP_CORRUPT (LevelDB's paranoid_checks off, HBase's
 * hbase.hregion.edits.replay.skip.errors): the rest of that file is skipped
 * and counted, and replay goes on with the next file. Stale blocks of a
 * reused disk, or a payload that itself holds a whole log record, cut in a
 * torn write, are reported the same way: as corruption, never silently.
 *
 * Removal. The log tracks, per file and per table, the largest sequence
 * number in it (rebuilt by wal_open from the existing files). Once the
 * caller reports with wal_mark_flushed that a table's memstores are flushed
 * (their data is in published HFiles) up to a sequence number, every file
 * other than the current one all of whose tables are flushed past their
 * records there is deleted. The caller marks every table after replay with
 * the flushed sequence number from its manifest, so old files go after a
 * restart too.
 *
 * Thread-safety: wal_append, wal_sync, wal_roll, wal_mark_flushed and
 * wal_stats may be called from any number of threads at once; wal_close
 * only after every other call on the log returned. wal_replay touches no
 * wal and may run beside a writer in this or another process.
 *
 * Ownership: wal_append copies the payload and table name; the bytes a
 * replay callback gets are borrowed until it returns.
 */
#ifndef KILN_WAL_H
#define KILN_WAL_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/status.h"

#define WAL_MAGIC "KILNWAL1"
#define WAL_VERSION 1
#define WAL_FILE_HEADER 20
#define WAL_RECORD_HEADER 8
#define WAL_LOCK_FILE "LOCK"
#define WAL_TABLE_MAX 255
/* Largest payload of one record (a record's body must fit in memory twice). */
#define WAL_PAYLOAD_MAX ((size_t)32 << 20)
/* The stored CRC is the CRC32C of the body rotated right by 15 bits plus this
 * constant (LevelDB's mask), so that a CRC over bytes that hold CRCs -- a
 * payload quoting another log record -- does not look like a valid record. */
#define WAL_CRC_MASK 0xa282ead8u
/* Group sizes in wal_counters: bucket i counts fsyncs that covered
 * [2^i, 2^(i+1)) records, the last bucket everything larger. */
#define WAL_GROUP_BUCKETS 12

typedef struct wal wal;

typedef struct wal_options {
    uint64_t roll_bytes;  /* start a new log file once the current one is past this (64 MiB) */
    long async_sync_ms;   /* the background thread writes and fsyncs buffered records at
                             least this often (1000; >= 1) */
} wal_options;

/* Fill o with the defaults above. */
void wal_options_init(wal_options *o);

/* Open the log in dir (created if absent, with its parent directories
 * fsynced), take its LOCK, read the existing files' records to learn which
 * tables each holds, and start a new log file after them. Does not replay.
 * o may be NULL (defaults). KILN_BUSY ("DIR: write-ahead log locked by
 * another process (pid N)") when another process holds it, KILN_INVALID for
 * bad options, KILN_IO naming the path. A damaged existing file does not
 * fail the open (replay reports it); only its readable records are tracked. */
kiln_status wal_open(const char *dir, const wal_options *o, wal **out, kiln_err *err);

/* Write and fsync what is buffered, stop the background thread, close the
 * current file and release the LOCK. Returns the status of that last sync
 * (the sticky error if there was one); the log is freed either way. w may
 * be NULL; err may be NULL. */
kiln_status wal_close(wal *w, kiln_err *err);

/* Append one record of table (1..255 bytes, no NUL) with the caller's
 * sequence number seq and payload[0..n) (n <= WAL_PAYLOAD_MAX; payload may
 * be NULL when n = 0). Buffers it and returns at once; *lsn gets the
 * record's log position to pass to wal_sync. Positions grow with every
 * record, across rolls, for the life of this wal (they restart at each
 * wal_open). The record is in the current file as of the next write.
 * KILN_INVALID for a bad name or size; the sticky error after a failed
 * write or fsync. Thread-safe. */
kiln_status wal_append(wal *w, const char *table, uint64_t seq, const void *payload, size_t n,
                       uint64_t *lsn, kiln_err *err);

/* Return once every record up to position lsn is written and fsynced
 * (group commit). The first caller to find no write in flight becomes the
 * leader: it takes everything buffered, writes it and fsyncs outside the
 * lock, and may then roll the file; the others wait and return when the
 * durable position passes their lsn, leading the next group if it does not.
 * KILN_OK at once if lsn is already durable (even after a later failure);
 * otherwise the sticky error if a write or fsync has failed; KILN_INVALID
 * for a position past the last append. Thread-safe. */
kiln_status wal_sync(wal *w, uint64_t lsn, kiln_err *err);

/* Start a new log file now: write and fsync what is buffered to the current
 * one, then create the next (header, fsync, directory fsync). If creating
 * it fails, the current file stays current and the error is returned (not
 * sticky). Thread-safe. */
kiln_status wal_roll(wal *w, kiln_err *err);

/* Report that table's memstores are flushed up to flushed_seq (its records
 * with seq <= flushed_seq are in published HFiles). Deletes every log file
 * but the current one in which every table with records is flushed past
 * its largest seq there, then fsyncs the directory. If the current file
 * holds only flushed records and is at least half of roll_bytes, rolls
 * first so that it can go too. A table's flushed seq only grows (a smaller
 * one is ignored). Returns the first failure to roll, unlink or fsync
 * (KILN_IO naming the path); files not yet removed are tried again by the
 * next call. Thread-safe (calls are serialized). */
kiln_status wal_mark_flushed(wal *w, const char *table, uint64_t flushed_seq, kiln_err *err);

/* Counters since wal_open (for /metrics). */
typedef struct wal_counters {
    uint64_t appends;         /* records appended */
    uint64_t append_bytes;    /* their bytes, framing included */
    uint64_t syncs;           /* group writes that ended in an fsync of a log file */
    uint64_t synced_records;  /* records those fsyncs made durable */
    uint64_t max_group;       /* most records made durable by one fsync */
    uint64_t group_hist[WAL_GROUP_BUCKETS];
    uint64_t appended_lsn;    /* position after the last append */
    uint64_t durable_lsn;     /* every record before it is fsynced */
    uint64_t files;           /* log files in the directory, the current one included */
    uint64_t files_created;
    uint64_t files_removed;
    uint64_t rolls;
    uint64_t roll_failures;   /* automatic rolls that failed (retried at the next sync) */
    uint64_t current_file;    /* number of the file being written */
    int failed;               /* 1 once a write or fsync failed (sticky) */
} wal_counters;

/* A consistent snapshot of the counters. Thread-safe. */
void wal_stats(wal *w, wal_counters *out);

/* ------------------------------------------------------------------ replay */

/* Called for each intact record, in log order. table is NUL-terminated;
 * table and payload are borrowed until the call returns. Anything but
 * KILN_OK stops the replay, which returns it. */
typedef kiln_status (*wal_replay_fn)(void *arg, const char *table, uint64_t seq,
                                     const void *payload, size_t n);

#define WAL_REPLAY_SKIP_CORRUPT 1u   /* skip the rest of a damaged file instead of failing */

typedef struct wal_replay_stats {
    uint64_t files;           /* log files read */
    uint64_t records;         /* records passed to fn */
    uint64_t bytes;           /* bytes of those records, framing included */
    uint64_t torn_tails;      /* files that ended in a torn record (ignored) */
    uint64_t torn_bytes;      /* bytes ignored in those tails */
    uint64_t corrupt_files;   /* damaged files skipped under WAL_REPLAY_SKIP_CORRUPT */
    uint64_t corrupt_bytes;   /* bytes skipped in them */
    char last_torn[320];      /* "FILE: torn record at offset N", the newest, or "" */
    char last_corrupt[320];   /* "FILE: ...", the newest skipped damage, or "" */
} wal_replay_stats;

/* Replay every log file in dir in order, calling fn for each intact record.
 * flags: 0 or WAL_REPLAY_SKIP_CORRUPT. st may be NULL. A file removed while
 * the replay runs is skipped (it only held flushed records). KILN_OK for
 * an absent or empty dir. KILN_CORRUPTION ("DIR/F.log: bad record at offset
 * N (...), followed by a valid record at offset M") for damage, a file whose
 * header is not a log file's, or a number that differs from the name;
 * KILN_UNSUPPORTED for a newer format version; KILN_IO naming the path; or
 * what fn returned. Stateless and thread-safe. */
kiln_status wal_replay(const char *dir, unsigned flags, wal_replay_fn fn, void *arg,
                       wal_replay_stats *st, kiln_err *err);

/* The file name of log number num ("%016llx.log") into out (>= 21 bytes). */
void wal_file_name(uint64_t num, char *out);
/* 1 and *num if name is a log file's name, else 0. */
int wal_parse_file_name(const char *name, uint64_t *num);

#endif
