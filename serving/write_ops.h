/* write_ops.h -- read-modify-write operations over the speed layer that
 * speed.h does not offer itself, shared by the REST and Redis write paths:
 * reading one column's newest value, appending to it (HBase's Append) and
 * adding to a decimal integer value (Redis's INCRBY). Each is a
 * compare-and-set loop on speed_check_and_mutate: read the value, compute
 * the new one, write it if the column still holds what was read, else read
 * again. One column at a time is atomic.
 *
 * Thread-safety: as speed.h (every function may be called from any thread).
 */
#ifndef KILN_WRITE_OPS_H
#define KILN_WRITE_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"
#include "storage/store/speed.h"

/* Compare-and-set attempts before giving up with KILN_BUSY. */
#define WRITE_OPS_TRIES 64

/* The newest value of (family, qualifier) of row in table into value and
 * its timestamp into *ts (ts may be NULL); *found 0 if the column has none.
 * KILN_NOT_FOUND unknown table, KILN_INVALID unknown family. */
kiln_status write_ops_read(kiln_speed *s, const char *table, kslice row, const char *family,
                           kslice qualifier, kbuf *value, int64_t *ts, int *found,
                           kiln_err *err);

/* Append suffix to the column's value (an absent column counts as empty);
 * the new value into out (may be NULL). */
kiln_status write_ops_append(kiln_speed *s, const char *table, kslice row, const char *family,
                             kslice qualifier, kslice suffix, kiln_durability d, kbuf *out,
                             kiln_err *err);

/* Add delta to the column's value read as a decimal integer (an absent
 * column counts as 0) and store the sum as a decimal string; *out the sum.
 * KILN_INVALID with "value is not an integer or out of range" if the value
 * is not one (optional '-', 1..19 digits, within int64) or the sum
 * overflows. */
kiln_status write_ops_incr_decimal(kiln_speed *s, const char *table, kslice row,
                                   const char *family, kslice qualifier, int64_t delta,
                                   kiln_durability d, int64_t *out, kiln_err *err);

/* Parse a decimal int64 (optional sign; no spaces). 0, or -1. */
int write_ops_parse_i64(const uint8_t *p, size_t n, int64_t *out);

#endif
