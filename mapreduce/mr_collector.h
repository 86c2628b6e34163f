/* mr_collector.h -- the map-side collector: a bounded sort buffer, sorted
 * spills, and the multi-pass merge into the rank's one map output run; and
 * the combining merge the reduce side uses too.
 *
 * The caller (the map phase) hands everything the collector needs in an
 * mr_collector_params: partitioning, memory, where runs go, the combiner. The
 * collector never reaches back into the job.
 *
 * Thread-safety: a collector is single-threaded.
 */
#ifndef KILN_MR_COLLECTOR_H
#define KILN_MR_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "mapreduce/mr_merge.h"
#include "mapreduce/mr_partition.h"
#include "mapreduce/mr_run.h"
#include "mapreduce/mr_sortbuf.h"
#include "mapreduce/mr_task_int.h"
#include "storage/base/buf.h"
#include "storage/base/status.h"

/* How key groups are combined: the job's combiner and/or fold (either may be
 * NULL), the order keys are sorted in (the job's sort comparator; cmp NULL:
 * bytes), and the task environment the combiner's tasks run in (its counters
 * take the combine counts). A combiner is called per run of keys the sort
 * comparator calls equal (with the first); a fold combines equal bytes
 * only. Borrowed; must outlive every use. */
typedef struct mr_combiner {
    mr_reduce_fn combine;
    mr_fold_fn fold;
    void *fold_arg;
    mr_key_order sort;
    const mr_task_env *env;
} mr_combiner;

/* What a collector is given; every pointer is borrowed and must outlive it. */
typedef struct mr_collector_params {
    uint32_t partitions;
    const mr_partitioner *part;
    size_t sort_bytes;           /* the sort buffer's budget (kiln.sort.mb) */
    size_t merge_factor;         /* runs merged at once (kiln.merge.factor) */
    const mr_run_options *run_opt;
    mr_run_dir *spill;           /* names the spill and merge runs */
    const mr_combiner *comb;
} mr_collector_params;

typedef struct mr_collector mr_collector;

kiln_status mr_collector_open(const mr_collector_params *p, mr_collector **out, kiln_err *err);
/* Partition and buffer one record. KILN_INTERNAL (mr_partition_bad: a bug
 * in the job) when a custom partitioner places the key outside the
 * partitions. */
kiln_status mr_collector_add(mr_collector *c, kslice key, kslice value, kiln_err *err);
/* The emit function of map tasks whose sink is a collector: counts the map
 * output records and bytes, then adds. */
kiln_status mr_collector_emit(mr_task *t, kslice key, kslice value, kiln_err *err);
/* Spill what is buffered and merge every run into the rank's map output
 * (one run over all partitions; *out NULL-free even when empty). Frees c. */
kiln_status mr_collector_finish(mr_collector *c, mr_run **out, kiln_err *err);
void mr_collector_abandon(mr_collector *c);   /* removes its files; c may be NULL */

/* Merge the values of m into w under part, combining each key group with
 * cb's combiner or fold when it has one (combine != 0). Sets m's order (cb's
 * sort order; groups as above), so m must not have been read yet. Counts
 * records in and out in cb->env's counters. */
kiln_status mr_collector_combine(const mr_combiner *cb, mr_merger *m, mr_run_writer *w,
                                 uint32_t part, int combine, kiln_err *err);

#endif
