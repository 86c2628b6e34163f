/* mr_state.h -- private to mapreduce/: the records of one running job, and
 * who writes each when.
 *
 * struct mr_job (the handle a job's setup and callbacks hold) is only the
 * sum of six records, filled in this order by mr_job_main (mr_job.c):
 *
 *   desc  mr_job_desc     what the job is. Its arguments, job id and clock
 *                         before setup; inputs, output, format, callbacks,
 *                         comparators, partitioner function, split keys,
 *                         description bytes from setup's mr_job_*
 *                         calls (mr_desc.c); the partition count from the
 *                         settings; the input listing and partitioner from
 *                         planning (mr_plan.c). Read-only once the ranks have
 *                         compared it (mr_cluster.c), before map.
 *   set   mr_settings     how it runs: the -D conf and what the engine read
 *                         from it (mr_settings.h). Read-only after setup.
 *   rt    mr_job_rt       what every phase shares while the job runs: MPI,
 *                         counters, progress, the spill directory, the task
 *                         environment and combiner, timings.
 *   map   mr_map_state    map -> shuffle: the collector while map runs, then
 *                         the rank's map output run.
 *   sh    mr_shuffle_result  shuffle -> reduce: where each partition's
 *                         records landed (mr_shuffle.h).
 *   out   mr_commit_state  reduce -> commit: the temporary output directory
 *                         and per-partition statistics.
 *
 * Phases take the whole job and touch the records above; the modules below
 * the phases (collector, shuffle, runs) never see it: they get parameter
 * structs with borrowed pointers.
 */
#ifndef KILN_MR_STATE_H
#define KILN_MR_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "mapreduce/mr_collector.h"
#include "mapreduce/mr_comm.h"
#include "mapreduce/mr_counters.h"
#include "mapreduce/mr_input.h"
#include "mapreduce/mr_input_format.h"
#include "mapreduce/mr_output.h"
#include "mapreduce/mr_partition.h"
#include "mapreduce/mr_progress.h"
#include "mapreduce/mr_registry.h"
#include "mapreduce/mr_run.h"
#include "mapreduce/mr_settings.h"
#include "mapreduce/mr_shuffle.h"
#include "mapreduce/mr_task_int.h"
#include "storage/base/buf.h"

/* A formatted input's plan (mr_input_format.h): splits as [be64 weight]
 * [be32 length][bytes] records, their count and total weight, and the meta
 * bytes. Filled by the format's plan on rank 0, then broadcast. */
struct mr_input_plan {
    kbuf meta;
    kbuf splits;
    size_t n;
    uint64_t total;
};

/* One formatted input of the job: its format, argument and map (setup's
 * mr_job_add_input_format), and its plan (mr_plan.c). */
typedef struct mr_input_src {
    const mr_input_format *fmt;
    void *arg;
    mr_map_fn map;               /* NULL: the job's */
    struct mr_input_plan plan;
    size_t *split_off;           /* [plan.n]: offset of each split's record in plan.splits */
} mr_input_src;

/* The bytes and weight of split i of src. */
kslice mr_input_src_split(const mr_input_src *src, size_t i, uint64_t *weight);
/* The splits [*first, *end) of src that rank `rank` of nranks reads: ranks
 * take contiguous runs, a split going to the rank whose share of the total
 * weight holds its middle (by count when every weight is 0). */
void mr_input_src_range(const mr_input_src *src, int nranks, int rank, size_t *first,
                        size_t *end);

/* What the job is: everything that decides its output. Written before map
 * (see above), then read-only. */
typedef struct mr_job_desc {
    const mr_job_def *def;
    int argc;
    char **argv;                 /* the job's arguments, as given (borrowed) */
    char job_id[64];             /* rank 0's, before setup */
    int64_t time_ms;             /* the job's clock, rank 0's, before setup */

    /* setup's mr_job_* calls */
    char **inputs;               /* paths as given */
    size_t n_inputs;
    mr_input_src *srcs;          /* formatted inputs, in the order added */
    size_t n_srcs;
    char *output;
    const mr_output_format *fmt;
    void *fmt_arg;
    mr_map_fn map;
    mr_reduce_fn reduce;
    mr_reduce_fn combine;
    mr_fold_fn fold;
    void *fold_arg;
    mr_partition_fn part_fn;     /* the job's partitioner, or NULL */
    void *part_arg;
    mr_key_order sort;           /* the job's sort comparator; cmp NULL: bytes */
    mr_key_order group;          /* its grouping comparator; cmp NULL: as sort */
    void *state;                 /* the job's private state */
    void (*state_free)(void *);
    uint32_t default_reduces;
    kslice *split_keys;          /* owned copies; also set by total-order sampling */
    size_t n_split_keys;
    int has_split_keys;
    kbuf desc_job;               /* what setup read or declared (mr_job_describe) */
    kbuf require;                /* rank 0: files every host must see alike */
    kbuf report;                 /* extra _job.json members, each ",\"k\":v" */

    /* resolved by the runner after setup */
    uint32_t partitions;         /* from the settings */
    mr_input input;              /* rank 0's listing of the inputs (mr_plan.c) */
    mr_partitioner *part;        /* hash, total order or custom (mr_plan.c) */
} mr_job_desc;

/* What every phase shares. comm and the clock from the start; counters
 * registered by setup and added to by every phase; the rest set by the
 * runner after the settings (progress, spill directory) and setup (task
 * environment, combiner). */
typedef struct mr_job_rt {
    mr_comm comm;
    mr_counters counters;
    mr_progress progress;
    char *local_dir;             /* this rank's spill directory (owned) */
    mr_run_dir spill;            /* names the runs in local_dir */
    mr_task_env task_env;        /* what every task of the job sees */
    mr_combiner comb;            /* the job's combiner and fold, for spills and merges */
    double t_start;
    double t_phase[4];           /* seconds spent in map, shuffle, reduce, commit */
} mr_job_rt;

/* Map and its collector: written by the map phase; mof is read by the shuffle
 * and removed by the runner after reduce. */
typedef struct mr_map_state {
    mr_collector *col;           /* while map runs */
    mr_run *mof;                 /* the rank's map output, one run over every partition */
} mr_map_state;

/* Reduce and commit: tmp_out is named and (rank 0) created before map;
 * reduce writes its partitions' files there and their statistics here;
 * commit gathers the statistics on rank 0 and publishes tmp_out. */
typedef struct mr_commit_state {
    char *tmp_out;               /* DIR._temporary.JOBID */
    uint64_t *part_records;      /* [partitions]: reduce input records */
    uint64_t *part_bytes;        /* [partitions]: output bytes */
} mr_commit_state;

struct mr_job {
    mr_job_desc desc;
    mr_settings set;
    mr_job_rt rt;
    mr_map_state map;
    mr_shuffle_result sh;
    mr_commit_state out;
};

/* A job about to run def with argv[0..argc) on MPI_COMM_WORLD: records
 * empty, the text output format, built-in counters, a duplicated
 * communicator, the clock started. Collective (MPI_Comm_dup). */
mr_job *mr_state_new(const mr_job_def *def, int argc, char **argv);
/* Free every record (the job's state with its free function). NULL ok. */
void mr_state_free(mr_job *job);

/* Drop the description's split keys (none, and not total order). */
void mr_state_drop_split_keys(mr_job_desc *d);

#endif
