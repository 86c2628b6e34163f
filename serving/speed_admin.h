/* speed_admin.h -- the speed layer's maintenance operations on one table,
 * as one call with a result to print or send: flush the memstores, compact
 * (minor or major), split regions past a size (speed.h). kiln-server's
 * POST /TABLE/_admin/{flush,compact,split} (http_speed.h) and `kiln flush |
 * compact | split` on a data directory both run them here, so both report
 * the same numbers; the JSON form is what the route answers and what
 * `kiln --server` reads back (speed_admin_from_json).
 *
 * Thread-safety: as speed.h (every call is thread-safe); a result is plain
 * data.
 */
#ifndef KILN_SPEED_ADMIN_H
#define KILN_SPEED_ADMIN_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"
#include "storage/store/speed.h"

typedef enum speed_admin_op {
    SPEED_ADMIN_FLUSH = 0,
    SPEED_ADMIN_COMPACT,
    SPEED_ADMIN_SPLIT
} speed_admin_op;

typedef struct speed_admin_result {
    speed_admin_op op;
    int major;                         /* compact: a major compaction */
    uint64_t max_bytes;                /* split: the threshold given (0: the table's) */
    uint64_t version_before;           /* current when the operation began */
    uint64_t version;                  /* current after it (== version_before: nothing done) */
    uint64_t files_before, files;      /* HFiles of the table's regions, before and after */
    uint64_t speed_files;              /* ... of them written by the speed layer, after */
    uint64_t regions_before, regions;
    uint64_t cells, bytes;             /* flush: what the memstores held when it began */
    speed_compact_stats compact;       /* compact */
    uint64_t splits;                   /* split: regions split */
} speed_admin_result;

/* "flush", "compact", "split"; -1 for any other word. */
int speed_admin_op_parse(const char *word, size_t n, speed_admin_op *out);
const char *speed_admin_op_name(speed_admin_op op);

/* Run op on table. major for compact; max_bytes for split (0: the table's
 * max_region_bytes property). Errors as speed_flush, speed_compact and
 * speed_split (KILN_NOT_FOUND for an unknown table). */
kiln_status speed_admin_run(kiln_speed *s, const char *table, speed_admin_op op, int major,
                            uint64_t max_bytes, speed_admin_result *r, kiln_err *err);

/* Append r as one JSON object ({"table":..., "op":..., "version":..., ...}). */
void speed_admin_json(const speed_admin_result *r, const char *table, kbuf *out);
/* Read speed_admin_json's text back. KILN_CORRUPTION if it is not one. */
kiln_status speed_admin_from_json(const char *text, size_t n, speed_admin_result *r,
                                  kiln_err *err);

#endif
