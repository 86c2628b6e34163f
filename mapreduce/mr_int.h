/* mr_int.h -- private to mapreduce/: the job and task records shared by the
 * runner (mr_job.c), the task calls and map-side collector (mr_task.c) and
 * the shuffle (mr_shuffle.c). Nothing outside mapreduce/ includes it.
 */
#ifndef KILN_MR_INT_H
#define KILN_MR_INT_H

#include <stddef.h>
#include <stdint.h>

#include "mapreduce/mr_comm.h"
#include "mapreduce/mr_progress.h"
#include "mapreduce/mr_reader.h"
#include "mapreduce/mr_counters.h"
#include "mapreduce/mr_input.h"
#include "mapreduce/mr_job.h"
#include "mapreduce/mr_merge.h"
#include "mapreduce/mr_partition.h"
#include "mapreduce/mr_run.h"
#include "mapreduce/mr_sortbuf.h"

typedef enum mr_kill_how { MR_KILL_SIGKILL, MR_KILL_STOP, MR_KILL_ABORT } mr_kill_how;

struct mr_job {
    const mr_job_def *def;
    mr_comm comm;
    mr_conf *conf;
    char **inputs;
    size_t n_inputs;
    char *output;
    const mr_output_format *fmt;
    void *fmt_arg;
    mr_map_fn map;
    mr_reduce_fn reduce;
    mr_reduce_fn combine;
    mr_fold_fn fold;
    void *fold_arg;
    void *state;
    void (*state_free)(void *);
    uint32_t default_reduces;
    uint32_t partitions;
    kslice *split_keys;
    size_t n_split_keys;
    int has_split_keys;
    mr_partitioner *part;
    mr_counters counters;
    kbuf report;                 /* extra _job.json members, each ",\"k\":v" */
    char job_id[64];
    int64_t time_ms;
    double t_start;
    double t_phase[4];           /* seconds spent in map, shuffle, reduce, commit */

    /* settings, resolved once */
    size_t sort_bytes;
    size_t shuffle_bytes;
    size_t merge_factor;
    size_t input_chunk;
    size_t line_max;             /* kiln.line.max */
    int all_bad_ok;              /* kiln.bad.records.all.ok */
    mr_run_options run_opt;
    char *tmp_base;              /* kiln.tmp.dir: every rank's spills below it */
    char *local_dir;             /* this rank's spill directory */
    unsigned run_seq;            /* names spill and merge files */
    char *tmp_out;               /* DIR._temporary.JOBID */
    mr_input input;
    mr_progress progress;
    uint64_t *part_records;      /* [partitions]: reduce input records */
    uint64_t *part_bytes;        /* [partitions]: output bytes */
    int fail_rank;
    int kill_rank;
    int kill_phase;              /* mr_phase the kill hook fires in */
    int kill_how;                /* mr_kill_how: SIGKILL, SIGSTOP or MPI_Abort */
    int64_t kill_after;          /* map: records first; shuffle: rounds first */
    int fail_phase;              /* mr_phase, or MR_PHASE_DONE for commit */
    int skew_rank;               /* test: this rank's description differs */

    /* the job's description beyond the engine's own (mr_cluster.c) */
    int argc;
    char **argv;                 /* the job's arguments, as given */
    kbuf desc_job;               /* what setup read or declared */
    kbuf require;                /* rank 0: files every host must see alike */
};

/* mr_cluster.c: every rank in rank 0's working directory; every rank's
 * description of the job equal to rank 0's; every file the job depends on
 * seen alike by every host. Collective. */
kiln_status mr_cluster_enter_cwd(mr_job *job, kiln_err *err);
kiln_status mr_cluster_check_description(mr_job *job, kiln_err *err);
kiln_status mr_cluster_check_files(mr_job *job, kiln_err *err);
/* Test hook: raise SIGKILL when rank `kill_rank` reaches point `step` of
 * the phase (after a line on stderr saying so, which tests look for). */
void mr_job_kill_point(mr_job *job, int phase, int64_t step);

typedef enum mr_task_kind {
    MR_TASK_MAP = 0,
    MR_TASK_COMBINE,
    MR_TASK_REDUCE,
    MR_TASK_SAMPLE
} mr_task_kind;

typedef struct mr_collector mr_collector;

struct mr_task {
    mr_job *job;
    mr_task_kind kind;
    /* map */
    mr_collector *col;
    mr_reader *reader;
    const char *path;
    uint32_t file_index;
    uint64_t offset;
    /* combine: emits go to w under part, and must carry the group's key */
    mr_run_writer *w;
    uint32_t part;
    kslice group_key;
    /* reduce */
    void *writer;
    /* sample: keys appended as [be32 length][bytes] */
    kbuf *samples;
    size_t n_samples;
};

typedef enum mr_values_kind {
    MR_VALUES_SORTBUF = 0,
    MR_VALUES_MERGER
} mr_values_kind;

struct mr_values {
    mr_values_kind kind;
    mr_sortbuf *sb;
    size_t i;
    size_t end;
    mr_merger *m;
    kiln_err err;                /* a read error that ended the values */
    kiln_status status;
    uint64_t count;
};

/* Consume what a callback left of the values; report a read error that
 * ended them (mr_task.c). */
kiln_status mr_task_values_finish(mr_values *v, kiln_err *err);

/* Map-side collector: sort buffer, spills, final merge into one run
 * (mr_collector.c). */
kiln_status mr_collector_open(mr_job *job, mr_collector **out, kiln_err *err);
kiln_status mr_collector_add(mr_collector *c, kslice key, kslice value, kiln_err *err);
/* Spill what is buffered and merge every run into the rank's map output
 * (one run over all partitions; *out NULL-free even when empty). Frees c. */
kiln_status mr_collector_finish(mr_collector *c, mr_run **out, kiln_err *err);
void mr_collector_abandon(mr_collector *c);   /* removes its files; c may be NULL */

/* Merge the values of m into w under part, combining each key group with the
 * job's combiner or fold when it has one (combine != 0). Counts records in
 * and out. */
kiln_status mr_collector_combine(mr_job *job, mr_merger *m, mr_run_writer *w, uint32_t part,
                             int combine, kiln_err *err);

/* A fresh path in the rank's spill directory: DIR/<what>-<seq>.run. */
void mr_job_run_path(mr_job *job, const char *what, kbuf *out);

/* Shuffle result: for each partition this rank reduces, one segment per
 * source rank (extents of the receive file, or of the own map output). */
typedef struct mr_segment {
    env_file *f;
    mr_extent *ext;
    size_t n;
    size_t cap;
    uint64_t bytes;
} mr_segment;

typedef struct mr_shuffle_result {
    uint32_t first;              /* first partition reduced here */
    uint32_t count;              /* partitions reduced here */
    mr_segment *seg;             /* [count * ranks]: seg[(p - first) * ranks + src] */
    size_t n_seg;
    env_file *recv;              /* the receive file, opened for reading */
    env_file *mof;               /* the own map output, opened for reading */
    char *recv_path;
} mr_shuffle_result;

/* Partitions reduced by rank r: [first, first + count). */
void mr_shuffle_owned(uint32_t partitions, int ranks, int r, uint32_t *first, uint32_t *count);

/* Move the partitions of the local map output (mof, may hold no records) to
 * the ranks that reduce them. Collective; a local failure is carried to every
 * rank by the round's reduction and the shuffle stops everywhere. */
kiln_status mr_shuffle_run(mr_job *job, const mr_run *mof, mr_shuffle_result *out, kiln_err *err);
/* Close the files and remove the receive file. */
void mr_shuffle_result_free(mr_shuffle_result *r);

#endif
