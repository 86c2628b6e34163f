/* shell_filter.h -- HBase shell filter strings, as `scan 't', {FILTER =>
 * "..."}` takes them, turned into HBase REST's filter model (the JSON a
 * Scanner's "filter" field carries, which filter.h evaluates):
 *
 *   PrefixFilter('abc') AND ValueFilter(=, 'binary:x')
 *   (RowFilter(>=, 'binary:m') OR FamilyFilter(=, 'substring:st')) AND KeyOnlyFilter()
 *
 * Filters: PrefixFilter('p'), ColumnPrefixFilter('p'),
 * MultipleColumnPrefixFilter('p', ...), RowFilter / FamilyFilter /
 * QualifierFilter / ValueFilter(OP, 'COMPARATOR'),
 * SingleColumnValueFilter('f', 'q', OP, 'COMPARATOR'[, ifMissing, latest]),
 * FirstKeyOnlyFilter(), KeyOnlyFilter(), PageFilter(N),
 * ColumnCountGetFilter(N), TimestampsFilter(T, ...). OP is one of < <= = !=
 * >= >; a COMPARATOR is binary:, binaryprefix:, regexstring: or substring:
 * then its value. Strings are single-quoted, a quote inside doubled ('');
 * their bytes are taken as written (no escapes), as the shell does. AND binds
 * tighter than OR; parentheses group. SKIP and WHILE are refused.
 *
 * Bounded: at most SHELL_FILTER_TEXT_MAX bytes of text, SHELL_FILTER_NODES_MAX
 * filters, SHELL_FILTER_DEPTH_MAX levels of parentheses. Pure functions.
 */
#ifndef KILN_SHELL_FILTER_H
#define KILN_SHELL_FILTER_H

#include <stddef.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"

#define SHELL_FILTER_TEXT_MAX (64 * 1024)
#define SHELL_FILTER_NODES_MAX 256
#define SHELL_FILTER_DEPTH_MAX 32

/* Translate text into the filter model's JSON, appended to out
 * (NUL-terminated, the NUL not counted in out->len). KILN_INVALID with a
 * message that names the position and the problem. */
kiln_status shell_filter_to_json(const char *text, kbuf *out, kiln_err *err);

#endif
