/* memstore.h -- the in-memory sorted set of cells of one region and family:
 * where online writes land before a flush writes them out as an HFile (as
 * HBase's memstore and LevelDB's memtable).
 *
 * A skiplist over cells copied into an arena of chunks (no allocation per
 * cell). Each cell carries the write sequence number it was added with (the
 * 64-bit sequence later shared with bulk loads); the iterator returns it as
 * the cell's mvcc.
 *
 * Order: HBase cell order (cell.h); of cells with identical keys (row,
 * family, qualifier, timestamp, type) the higher sequence number comes first,
 * so a reader that keeps the first of equal keys sees the newest, as
 * iter_merge.h does across sources. Both cells are kept. A cell added again
 * with the same key and the same sequence number is kept too and comes after
 * the earlier one. seek(key) lands on the first (newest) of the cells equal
 * to key, seek_for_prev(key) on the last (oldest); the key's mvcc is ignored.
 *
 * Thread-safety (LevelDB's memtable): one writer at a time -- the caller
 * serializes memstore_add -- and any number of readers at the same time
 * without locks, while the writer adds. A cell is published with a release
 * store of the list's next pointers and read with acquire loads, so a reader
 * sees each cell either whole or not at all; an iterator sought after an add
 * returned sees that cell. Nothing is removed or moved until the memstore is
 * freed. memstore_bytes, memstore_count and memstore_full may be called from
 * any thread. An iterator is single-threaded, as every kiln_iter.
 *
 * Ownership: reference counted. memstore_new returns one reference; each
 * further holder takes memstore_ref and drops it with memstore_unref; the
 * last unref frees the cells. An iterator holds a reference of its own, so
 * the memstore outlives its iterators whatever order they are dropped in.
 * memstore_add copies the cell's bytes; the caller keeps its own. Cells an
 * iterator returns are the memstore's: valid while that iterator is open
 * (longer than iter.h promises: they never move).
 */
#ifndef KILN_MEMSTORE_H
#define KILN_MEMSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/status.h"
#include "storage/hfile/cell.h"
#include "storage/hfile/iter.h"

typedef struct memstore memstore;

/* Bytes per arena chunk. A cell taking more than a quarter of it gets a
 * chunk of its own size. */
#define MEMSTORE_CHUNK (64 * 1024)

/* An empty memstore holding one reference. flush_bytes is the budget
 * memstore_full compares with (0: never full). Aborts if out of memory, as
 * kiln_malloc does. */
memstore *memstore_new(size_t flush_bytes);

/* Take another reference. */
void memstore_ref(memstore *ms);
/* Drop a reference; the last frees the memstore. ms may be NULL. */
void memstore_unref(memstore *ms);

/* Copy c (key fields, value, tags) in with sequence number seq. Put and
 * every delete type (Delete, DeleteColumn, DeleteFamily,
 * DeleteFamilyVersion) are cells alike; c->mvcc is ignored.
 * REQUIRES: no other memstore_add on ms runs at the same time.
 * KILN_INVALID (nothing added) if the cell does not fit the format
 * (cell_validate) or its type is Minimum, Maximum or unknown. */
kiln_status memstore_add(memstore *ms, const kiln_cell *c, uint64_t seq, kiln_err *err);

/* An iterator over the memstore (iter.h: every move, both directions; never
 * fails, kiln_iter_status is always KILN_OK). It holds a reference until
 * kiln_iter_close. Cells added while it is open appear to it as they are
 * published: a walk may or may not include a cell added after it began. */
kiln_iter *memstore_iter(memstore *ms);
/* The same over the cells added with a sequence number <= max_seq only (a
 * read point, speed.h: a read sees each write whole or not at all) and a
 * timestamp > retired_ts (INT64_MIN: every timestamp; see
 * manifest_covered). */
kiln_iter *memstore_iter_upto(memstore *ms, uint64_t max_seq, int64_t retired_ts);
/* The largest sequence number added so far (0 if none). Any thread. */
uint64_t memstore_max_seq(const memstore *ms);

/* The bytes the arena holds: the chunks allocated so far, which contain the
 * cells, their list nodes and the unused tail of the current chunk. 0 when
 * nothing was ever added. */
size_t memstore_bytes(const memstore *ms);
/* Number of cells added. */
size_t memstore_count(const memstore *ms);
/* 1 once memstore_bytes >= the flush_bytes given to memstore_new (never
 * when it was 0): time to flush and start a new memstore. */
int memstore_full(const memstore *ms);

#endif
