/* filter.h -- HBase's row and cell filters as a parsed tree, evaluated over
 * the rows a scan returns.
 *
 * The tree is built from HBase REST's filter model (the JSON that a Scanner's
 * "filter" field and the filter= query parameter carry):
 *
 *   {"type":"PrefixFilter","value":B64}
 *   {"type":"RowFilter","op":"LESS","comparator":{"type":"BinaryComparator","value":B64}}
 *   {"type":"FilterList","op":"MUST_PASS_ALL","filters":[...]}
 *
 * Byte strings are base64, except the value of RegexStringComparator and
 * SubstringComparator, which is the text itself (as HBase writes it).
 * Supported: PrefixFilter, ColumnPrefixFilter, MultipleColumnPrefixFilter
 * ("prefixes"), QualifierFilter, FamilyFilter, RowFilter, ValueFilter,
 * SingleColumnValueFilter ("family", "qualifier", "op", "comparator",
 * "ifMissing", "latestVersion"), FirstKeyOnlyFilter, KeyOnlyFilter,
 * PageFilter ("value": page size), ColumnCountGetFilter ("limit"),
 * TimestampsFilter ("timestamps") and FilterList (MUST_PASS_ALL / ONE);
 * comparators BinaryComparator, BinaryPrefixComparator,
 * RegexStringComparator (POSIX extended syntax) and SubstringComparator
 * (case-insensitive). An unknown type is KILN_INVALID naming it. Bounds:
 * FILTER_NODES_MAX filters, FilterLists FILTER_DEPTH_MAX deep, a regex of
 * FILTER_REGEX_MAX bytes whose bounded repeats multiply to at most
 * FILTER_REGEX_REPEAT_MAX (the compiler expands them) and without
 * back-references (their matching is exponential).
 *
 * Evaluation: a cell passes a cell filter (column, family, qualifier, value,
 * timestamp, first key, column count) on its own; row filters (prefix, row,
 * single column value, page) decide for every cell of the row; a list
 * combines its members cell by cell. A row is kept when one of its cells
 * passes. PageFilter counts the rows kept; once its page is full, no later
 * row passes and filter_row reports the scan done.
 *
 * Thread-safety: a filter carries per-scan state (pages counted); it belongs
 * to one scan at a time. Ownership: filter_free releases the tree.
 */
#ifndef KILN_FILTER_H
#define KILN_FILTER_H

#include <stddef.h>

#include "storage/hfile/cell.h"
#include "storage/base/status.h"
#include "storage/query/json.h"
#include "storage/store/store_view.h"

#define FILTER_NODES_MAX 256
#define FILTER_REGEX_MAX 1024
#define FILTER_DEPTH_MAX 16            /* FilterLists inside FilterLists */
#define FILTER_REGEX_REPEAT_MAX 10000  /* product of a regex's {m,n} counts */

typedef struct filter filter;

/* Parse the filter model text[0..n). KILN_INVALID with a message naming the
 * problem (malformed JSON, an unknown filter or comparator type, a missing
 * or bad field). */
kiln_status filter_parse(const char *text, size_t n, filter **out, kiln_err *err);
/* The same from an already parsed JSON value. */
kiln_status filter_from_json(const json_node *v, filter **out, kiln_err *err);
void filter_free(filter *f);   /* f may be NULL */

/* Forget what earlier rows counted (PageFilter). */
void filter_reset(filter *f);

/* Apply f to row r: the passing cells, in order, are written to out (room
 * for r->count cells; KeyOnlyFilter empties their values) and counted in
 * the return value (0: the row is dropped). *done is set to 1 when no later
 * row can pass. */
size_t filter_row(filter *f, const store_row *r, kiln_cell *out, int *done);

#endif
