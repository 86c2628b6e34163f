/* cellkey.h -- HBase cell keys as bytes whose plain order is HBase's order.
 *
 * The engine sorts keys as unsigned bytes; a serialized KeyValue key does not
 * sort that way (its row is length-prefixed, its timestamp descends). Jobs
 * that write HFiles emit this encoding instead:
 *
 *   FIELD      | ENCODING
 *   row        | bytes with 0x00 written 0x00 0xFF, then 0x00 0x00
 *   family     | the same
 *   qualifier  | the same
 *   timestamp  | 8 bytes big-endian of ~(ts XOR 2^63): newest first
 *   type       | 1 byte, 255 - type: higher codes first
 *
 * A field's terminator 0x00 0x00 sorts below any continuation (0x00 0xFF or
 * a non-zero byte), so a shorter field sorts first, as HBase's unsigned
 * comparison has it, and (row, family, qualifier, ts desc, type desc) comes
 * out of a byte comparison. The smallest encoding of any key of row R is
 * R's field encoding alone, which is what a region boundary becomes for a
 * total-order partitioner.
 *
 * Stateless and thread-safe.
 */
#ifndef KILN_CELLKEY_H
#define KILN_CELLKEY_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/hfile/cell.h"
#include "storage/base/status.h"

/* Append the encoding of c's key (value, tags, mvcc ignored) to out. */
void cellkey_append(kbuf *out, const kiln_cell *c);

/* Append the encoding of row alone: the lower bound of every key of row. */
void cellkey_append_row(kbuf *out, const uint8_t *row, size_t n);

/* Decode key into c's key fields. The row, family and qualifier bytes are
 * unescaped into scratch (reset first), which c then borrows. KILN_CORRUPTION
 * if key is not an encoding. */
kiln_status cellkey_decode(kslice key, kbuf *scratch, kiln_cell *c, kiln_err *err);

#endif
