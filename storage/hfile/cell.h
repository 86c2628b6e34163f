/* cell.h -- the HBase cell and its order.
 *
 * A cell is (row, family, qualifier, timestamp, type) -> value, with optional
 * tags and an mvcc (sequence id). Its serialized key is HBase's KeyValue key:
 *
 *   OFFSET        | SIZE | FIELD
 *   0             | 2    | row length R (big-endian, <= 32767)
 *   2             | R    | row
 *   2+R           | 1    | family length F
 *   3+R           | F    | family
 *   3+R+F         | Q    | qualifier (Q = key length - R - F - 12)
 *   3+R+F+Q       | 8    | timestamp (big-endian int64)
 *   11+R+F+Q      | 1    | type (Put 4, Delete 8, DeleteFamilyVersion 10,
 *                 |      |       DeleteColumn 12, DeleteFamily 14, Max 255, Min 0)
 *
 * Order (HBase CellComparatorImpl): row ascending (unsigned bytes, shorter
 * prefix first); a key with empty family and qualifier and type Minimum sorts
 * after every other key of its row; then family, qualifier ascending;
 * timestamp descending; type descending. mvcc does not take part.
 *
 * A kiln_cell borrows all its byte fields; it owns nothing.
 */
#ifndef KILN_CELL_H
#define KILN_CELL_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"

enum {
    CELL_TYPE_MINIMUM = 0,
    CELL_TYPE_PUT = 4,
    CELL_TYPE_DELETE = 8,
    CELL_TYPE_DELETE_FAMILY_VERSION = 10,
    CELL_TYPE_DELETE_COLUMN = 12,
    CELL_TYPE_DELETE_FAMILY = 14,
    CELL_TYPE_MAXIMUM = 255
};

#define CELL_LATEST_TIMESTAMP INT64_MAX
#define CELL_ROW_MAX 32767
#define CELL_FAMILY_MAX 255
/* Fixed bytes of a key besides row, family and qualifier. */
#define CELL_KEY_INFRASTRUCTURE 12

typedef struct kiln_cell {
    const uint8_t *row;
    uint32_t row_len;
    const uint8_t *family;
    uint32_t family_len;
    const uint8_t *qualifier;
    uint32_t qualifier_len;
    int64_t ts;
    uint8_t type;
    const uint8_t *value;
    uint32_t value_len;
    const uint8_t *tags;      /* raw tag bytes: [u16 len][u8 type][value]... */
    uint32_t tags_len;
    uint64_t mvcc;
} kiln_cell;

/* Compare the keys of two cells (HBase order). <0, 0, >0. */
int cell_compare(const kiln_cell *a, const kiln_cell *b);

/* cell_compare on rows without their first `skip` bytes (a row shorter than
 * skip compares as empty): the order of a salted table's stored cells by
 * user key (store_salt.h). */
int cell_compare_skip(const kiln_cell *a, const kiln_cell *b, uint32_t skip);

/* Compare two serialized KeyValue keys (HBase order). Keys must be well formed
 * (cell_key_decode succeeds); malformed keys compare by raw bytes. */
int cell_key_compare(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/* Compare a cell's key with a serialized key. */
int cell_compare_key(const kiln_cell *a, const uint8_t *key, size_t klen);

/* Length of the cell's serialized key. */
size_t cell_key_len(const kiln_cell *c);
/* Serialize the key into out (cell_key_len bytes). */
void cell_key_write(const kiln_cell *c, uint8_t *out);
/* Append the serialized key to b. */
void cell_key_append(const kiln_cell *c, kbuf *b);

/* Parse a serialized key into c's key fields (value, tags, mvcc untouched).
 * c borrows from key. KILN_CORRUPTION if lengths do not fit. */
kiln_status cell_key_decode(const uint8_t *key, size_t klen, kiln_cell *c, kiln_err *err);

/* Check the cell's fields fit the format (row <= 32767, family <= 255).
 * KILN_INVALID naming the field otherwise. */
kiln_status cell_validate(const kiln_cell *c, kiln_err *err);

/* "Put", "Delete", "DeleteColumn", "DeleteFamily", "DeleteFamilyVersion",
 * "Maximum", "Minimum", or NULL for an unknown code. */
const char *cell_type_name(uint8_t type);
/* Parse a type name (case-sensitive, as above). Returns 0 on success, -1 if unknown. */
int cell_type_parse(const char *name, uint8_t *type);

/* A key that sorts before every cell of `row` (first-on-row): empty family
 * and qualifier, LATEST timestamp, type Maximum. Fills c. */
void cell_first_on_row(kiln_cell *c, const uint8_t *row, uint32_t row_len);

/* Append HBase Bytes.toStringBinary form of p to b: printable ASCII as is,
 * everything else (and backslash) as \xNN with uppercase hex. */
void cell_to_string_binary(kbuf *b, const uint8_t *p, size_t n);
/* Decode the Bytes.toStringBinary form (\xNN escapes) into out (appends).
 * Returns 0, or -1 on a malformed escape. */
int cell_from_string_binary(kbuf *out, const char *s, size_t n);

#endif
