/* mr_task_int.h -- private to mapreduce/: the task and values records behind
 * mr_task.h, for the modules that run callbacks (the map phase, the
 * collector's combiner, the reduce phase, the sampler).
 *
 * Whoever runs a task fills it (mr_task_begin) with the job's task
 * environment, its kind, and where its emits go: an emit function and its
 * sink. mr_task.c itself knows no collector, run or output format, so the
 * task calls sit below every module that runs tasks.
 */
#ifndef KILN_MR_TASK_INT_H
#define KILN_MR_TASK_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mapreduce/mr_counters.h"
#include "mapreduce/mr_merge.h"
#include "mapreduce/mr_reader.h"
#include "mapreduce/mr_sortbuf.h"
#include "mapreduce/mr_task.h"

typedef enum mr_task_kind {
    MR_TASK_MAP = 0,
    MR_TASK_COMBINE,
    MR_TASK_REDUCE,
    MR_TASK_SAMPLE
} mr_task_kind;

/* What every task of one job shares. Filled by the runner once setup has
 * described the job (the state is set by then); read-only afterwards. */
typedef struct mr_task_env {
    mr_job *job;                 /* handed out by mr_task_job */
    void *state;                 /* the job's private state (mr_task_state) */
    const char *name;            /* the job's name, in warnings and errors */
    int rank;                    /* this rank, in warnings */
    mr_counters *counters;       /* this rank's counters */
} mr_task_env;

/* Take one emitted record: the sink of t is the emit function's own. */
typedef kiln_status (*mr_emit_fn)(mr_task *t, kslice key, kslice value, kiln_err *err);

struct mr_task {
    const mr_task_env *env;
    mr_task_kind kind;
    mr_emit_fn emit;
    void *sink;                  /* the collector, run writer, output writer or sample list */
    /* map and sample: the current record */
    mr_reader *reader;
    const char *path;
    uint32_t file_index;
    uint64_t offset;
    const char *format;          /* a formatted input's name; NULL for lines */
    const void *object;          /* its current record's object */
    /* combine and reduce: the partition, and the values being walked
     * (mr_task_current_key); combine: the key of the group, which every emit
     * must carry */
    uint32_t part;
    mr_values *values;
    kslice group_key;
};

static inline void
mr_task_begin(mr_task *t, const mr_task_env *env, mr_task_kind kind, mr_emit_fn emit, void *sink)
{
    memset(t, 0, sizeof *t);
    t->env = env;
    t->kind = kind;
    t->emit = emit;
    t->sink = sink;
}

typedef enum mr_values_kind {
    MR_VALUES_SORTBUF = 0,
    MR_VALUES_MERGER
} mr_values_kind;

/* The values of one key group: entries [i, end) of a sorted sort buffer (a
 * combiner at spill time), or the current group of a k-way merge. */
struct mr_values {
    mr_values_kind kind;
    mr_sortbuf *sb;
    size_t i;
    size_t end;
    size_t first;                /* sort buffer: the group's first entry */
    mr_merger *m;
    kiln_err err;                /* a read error that ended the values */
    kiln_status status;
    uint64_t count;              /* values handed out so far */
};

static inline void
mr_values_of_sortbuf(mr_values *v, mr_sortbuf *sb, size_t i, size_t end)
{
    memset(v, 0, sizeof *v);
    v->kind = MR_VALUES_SORTBUF;
    v->sb = sb;
    v->i = i;
    v->end = end;
    v->first = i;
}

static inline void
mr_values_of_merger(mr_values *v, mr_merger *m)
{
    memset(v, 0, sizeof *v);
    v->kind = MR_VALUES_MERGER;
    v->m = m;
}

/* Consume what a callback left of the values; report a read error that
 * ended them. */
kiln_status mr_task_values_finish(mr_values *v, kiln_err *err);

#endif
