/* store_index_def.h -- secondary indexes (issue #6), the schema side: index
 * definitions (the -D kiln.index spec, the index table's schema and
 * properties, checking an index table against its base table) and the index
 * row key encoding. Index scans are store_index.h.
 *
 * An index NAME of table T over columns cf:q[,cf2:q2...] is a table of its
 * own, published in the same manifest as T (manifest.h: tables[1..]), so one
 * CURRENT swap publishes a table and its indexes together and a reader that
 * opened version N reads T and its indexes of version N only. Its schema:
 *
 *   name        "<T's canonical name>.idx.<NAME>"
 *   family      "i" (one version, no bloom: it is read by prefix scans)
 *   salt        T's salt_buckets; a salted index splits on bucket bytes
 *   properties  kiln.index.name = NAME, kiln.index.of = T,
 *               kiln.index.columns = "cf:q,cf2:q2" (qualifier bytes outside
 *               [A-Za-z0-9_.-] written \xNN, so ',' and ':' never clash)
 *
 * Index row key (docs/storage-format.md §2.7), for a row R of T whose newest
 * values of the indexed columns are v1..vk:
 *
 *   enc(v1) enc(v2) ... enc(vk) R
 *   enc(v) = v with every 0x00 byte written 0x00 0xFF, then 0x00 0x00
 *
 * The terminator 0x00 0x00 sorts below every continuation (a non-zero byte or
 * 0x00 0xFF), so enc preserves the unsigned byte order of values, no enc(v)
 * is a prefix of another, and (v1, v2, R) can be split again however long
 * each part is: "a" + "bc" and "ab" + "c" are different keys, and every row
 * with v1 = "a" sorts before every row with v1 = "a\x00" or "ab". The row
 * key is last and unescaped. An index row holds one empty cell (i:, empty
 * value). A row is indexed when it has every indexed column.
 *
 * Definitions are values owned by their holder (store_index_def_free).
 * Everything here is pure and thread-safe.
 */
#ifndef KILN_STORE_INDEX_DEF_H
#define KILN_STORE_INDEX_DEF_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"
#include "storage/store/schema.h"

#define STORE_INDEX_FAMILY "i"
#define STORE_INDEX_NAME_MAX 64
#define STORE_INDEX_COLUMNS_MAX 16
#define STORE_INDEX_MAX 32                 /* indexes per table */
#define STORE_INDEX_TABLE_INFIX ".idx."
#define STORE_INDEX_PROP_NAME "kiln.index.name"
#define STORE_INDEX_PROP_OF "kiln.index.of"
#define STORE_INDEX_PROP_COLUMNS "kiln.index.columns"

typedef struct store_index_def store_index_def;

typedef struct store_index_column {
    char family[SCHEMA_FAMILY_NAME_MAX + 1];
    kbuf qualifier;
} store_index_column;

struct store_index_def {
    char name[STORE_INDEX_NAME_MAX + 1];
    store_index_column *cols;
    size_t ncols;
};

void store_index_def_init(store_index_def *d);
void store_index_def_free(store_index_def *d);   /* d may be NULL */
void store_index_def_copy(store_index_def *dst, const store_index_def *src);
/* 1 if a and b name the same index over the same columns. */
int store_index_def_equal(const store_index_def *a, const store_index_def *b);

/* Parse "NAME:cf:q[,cf:q2...]" (the -D kiln.index form; qualifiers in
 * printable form, \xNN escapes). KILN_INVALID naming the spec otherwise. */
kiln_status store_index_def_parse(const char *spec, store_index_def *out, kiln_err *err);
/* Append "cf:q,cf2:q2" (the kiln.index.columns form) to out. */
void store_index_columns_format(const store_index_def *d, kbuf *out);

/* Build the schema of index d of table base (see above). KILN_INVALID when a
 * column's family is not one of base's, or the index table's name would be
 * too long. out is initialized by the call. */
kiln_status store_index_schema(const kiln_schema *base, const store_index_def *d,
                               kiln_schema *out, kiln_err *err);
/* 1 if s is an index table's schema (it has kiln.index.of). */
int store_index_schema_is_index(const kiln_schema *s);
/* Check that idx is a well-formed index of table base (name, properties,
 * family, columns of base's families) and return its definition.
 * KILN_INVALID saying what is wrong. */
kiln_status store_index_def_from_schema(const kiln_schema *base, const kiln_schema *idx,
                                        store_index_def *out, kiln_err *err);

/* ------------------------------------------------------------------ keys */

/* Append enc(v) (see above). */
void store_index_value_append(kbuf *out, const uint8_t *v, size_t n);
/* Append enc(vals[0]) ... enc(vals[k-1]) row. */
void store_index_key(kbuf *out, const kslice *vals, size_t k, const uint8_t *row, size_t n);
/* Split an index row key of k values: vals[i] are unescaped into scratch
 * (reset first; they borrow from it), *row borrows from key. -1 if key is
 * not such an encoding or its row is empty. */
int store_index_key_decode(kslice key, size_t k, kbuf *scratch, kslice *vals, kslice *row);

#endif
