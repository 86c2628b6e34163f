/* mr_counters.h -- job counters under Hadoop's display names.
 *
 * A fixed set of built-in counters (the MR_C_* ids, grouped and named as
 * Hadoop's TaskCounter.properties and FileSystemCounter print them) plus the
 * job's own, registered by (group, name) in the same order on every rank so
 * that the arrays line up for one element-wise reduction. Most counters sum
 * over ranks; a few (peak memory) take the maximum.
 *
 * Thread-safety: one thread at a time. Counter ids are small integers valid
 * for the life of the set.
 */
#ifndef KILN_MR_COUNTERS_H
#define KILN_MR_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "storage/base/buf.h"

enum {
    MR_C_FILE_BYTES_READ = 0,
    MR_C_FILE_BYTES_WRITTEN,
    MR_C_MAP_INPUT_RECORDS,
    MR_C_MAP_OUTPUT_RECORDS,
    MR_C_MAP_OUTPUT_BYTES,
    MR_C_MAP_OUTPUT_MATERIALIZED_BYTES,
    MR_C_COMBINE_INPUT_RECORDS,
    MR_C_COMBINE_OUTPUT_RECORDS,
    MR_C_REDUCE_INPUT_GROUPS,
    MR_C_REDUCE_SHUFFLE_BYTES,
    MR_C_REDUCE_INPUT_RECORDS,
    MR_C_REDUCE_OUTPUT_RECORDS,
    MR_C_SPILLED_RECORDS,
    MR_C_CPU_MS,
    MR_C_PEAK_RSS,
    MR_C_INPUT_BYTES_READ,
    MR_C_OUTPUT_BYTES_WRITTEN,
    MR_C_BAD_RECORDS,
    MR_C_REDUCE_PREMERGES,
    MR_C_MAP_PIECES_STOLEN,
    MR_C_BUILTIN_COUNT
};

typedef enum mr_counter_kind {
    MR_COUNTER_SUM = 0,
    MR_COUNTER_MAX
} mr_counter_kind;

typedef struct mr_counters {
    uint64_t *v;
    size_t n;
    size_t cap;
    char **group;
    char **name;
    uint8_t *kind;
} mr_counters;

/* Set up the built-in counters, all zero. */
void mr_counters_init(mr_counters *c);
void mr_counters_free(mr_counters *c);   /* frees the contents; c may be NULL */

/* Register a job counter; returns its id. Registering the same (group, name)
 * twice returns the first id. */
int mr_counters_register(mr_counters *c, const char *group, const char *name,
                         mr_counter_kind kind);

/* Id of (group, name), or -1. */
int mr_counters_find(const mr_counters *c, const char *group, const char *name);

static inline void
mr_counters_add(mr_counters *c, int id, uint64_t n)
{
    c->v[id] += n;
}

/* Combine other (same registrations) into c: sum or max per counter. */
void mr_counters_merge(mr_counters *c, const uint64_t *other);

/* Hadoop's console form: "Counters: N", then per group a line indented one
 * tab and its counters indented two ("\t\tMap input records=10"). Zero-valued
 * job counters are printed too; the count N is of printed counters. */
void mr_counters_print(const mr_counters *c, FILE *out);

/* JSON object {"group": {"name": value, ...}, ...} appended to out. */
void mr_counters_json(const mr_counters *c, kbuf *out);

/* Append s as a JSON string (quoted, escaped; bytes >= 0x80 as \u00XX). */
void mr_counters_json_string(kbuf *out, const char *s, size_t n);

#endif
