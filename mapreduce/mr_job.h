/* mr_job.h -- MapReduce jobs on MPI: the description a job gives, the calls
 * its map, combine and reduce functions make, and the runner.
 *
 * A job registers an mr_job_def (name, one-line summary, usage, setup). The
 * runner (`kiln-mr JOB [-D key=value]... ARGS`) calls setup on every rank
 * with the same arguments; setup parses them and describes the job with the
 * mr_job_set_* calls: inputs, output directory and format, map, optional
 * combiner and/or fold, reduce, partition count or total-order split keys,
 * counters. Then mr_job_run runs it:
 *
 *   map      every rank reads its byte-range splits of the input line by line
 *            and calls map(record); emits go to a bounded sort buffer
 *            (kiln.sort.mb), combined, spilled as sorted snappy runs, merged
 *            into one sorted map output per rank;
 *   shuffle  partitions move to the ranks that reduce them, in bounded rounds
 *            (kiln.shuffle.mb per round over all destinations);
 *   reduce   per partition, a k-way merge feeds reduce(key, values) with the
 *            values of one key in byte order; emits go to the output format;
 *   commit   all ranks agree, rank 0 writes _job.json, moves the output into
 *            place and writes _SUCCESS last.
 *
 * A failure on any rank stops every rank at the next phase boundary with
 * that rank's error; the output directory is then never created.
 *
 * Settings (all -D): mapreduce.job.reduces (partitions; default set by the
 * job, else 12), kiln.sort.mb (map buffer, default 32; fractions allowed),
 * kiln.shuffle.mb (per round, default = kiln.sort.mb), kiln.merge.factor
 * (runs merged at once, default 32), kiln.spill.compress (snappy|none),
 * kiln.tmp.dir (local spill directory, default $TMPDIR or /tmp),
 * kiln.partitioner (hash|total: total order on keys sampled from the input),
 * kiln.sampler.points, kiln.progress (true|false), kiln.progress.ms,
 * kiln.job.time (ms since the epoch: the job's clock, for reproducible
 * output), kiln.input.buffer.kb; test hooks kiln.test.fail.rank with
 * kiln.test.fail.phase (map|shuffle|reduce|commit), kiln.test.kill.rank with
 * kiln.test.kill.phase (map|shuffle), kiln.test.kill.after (the record or
 * shuffle round it fires at) and kiln.test.kill.signal (kill|stop|abort),
 * kiln.test.enospc.rank with kiln.test.enospc.after (the k-th write fails),
 * kiln.test.skew.rank (that rank's job description differs).
 *
 * Thread-safety: one job per process at a time; callbacks run on the
 * calling thread.
 */
#ifndef KILN_MR_JOB_H
#define KILN_MR_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "mapreduce/mr_conf.h"
#include "mapreduce/mr_output.h"
#include "mapreduce/mr_registry.h"
#include "mapreduce/mr_sortbuf.h"
#include "storage/base/buf.h"
#include "storage/base/status.h"

typedef struct mr_job mr_job;
typedef struct mr_task mr_task;
typedef struct mr_values mr_values;

/* Map one input record (a line without its terminator). */
typedef kiln_status (*mr_map_fn)(mr_task *t, kslice record, kiln_err *err);
/* Reduce (or combine) one key and its values. */
typedef kiln_status (*mr_reduce_fn)(mr_task *t, kslice key, mr_values *values, kiln_err *err);

/* ------------------------------------------------------------------ describing */

mr_conf *mr_job_conf(mr_job *job);
const char *mr_job_name(const mr_job *job);
/* The job's clock (ms since the epoch), the same on every rank. */
int64_t mr_job_time_ms(const mr_job *job);
int mr_job_rank(const mr_job *job);
int mr_job_ranks(const mr_job *job);

void mr_job_add_input(mr_job *job, const char *path);
void mr_job_set_output(mr_job *job, const char *dir);
/* Output format and its argument; default mr_output_text. */
void mr_job_set_output_format(mr_job *job, const mr_output_format *fmt, void *arg);

void mr_job_set_map(mr_job *job, mr_map_fn fn);
void mr_job_set_reduce(mr_job *job, mr_reduce_fn fn);
/* A combiner (Hadoop's): runs on sorted map output at spill and merge time.
 * It must emit only the key it was given. */
void mr_job_set_combine(mr_job *job, mr_reduce_fn fn);
/* A fold: an associative, commutative merge of two values of one key. With
 * it the map buffer combines equal keys as they are emitted (an open-
 * addressing table), and it serves as the combiner when none is set. */
void mr_job_set_fold(mr_job *job, mr_fold_fn fn, void *arg);

/* Private state for the job's callbacks (mr_task_state); freed with free_fn
 * (may be NULL) when the job ends. */
void mr_job_set_state(mr_job *job, void *state, void (*free_fn)(void *));

/* Default partition count when -D mapreduce.job.reduces is not given. */
void mr_job_set_reduces(mr_job *job, uint32_t n);

/* Total-order partitioning on the given split keys (copied): n + 1
 * partitions, partition i holding keys in [keys[i-1], keys[i]). KILN_INVALID
 * if the keys are not strictly increasing or one is empty. */
kiln_status mr_job_set_split_keys(mr_job *job, const kslice *keys, size_t n, kiln_err *err);

/* Register a job counter (same order on every rank); returns its id. */
int mr_job_counter(mr_job *job, const char *group, const char *name);
/* Add to a counter from outside a task (an output format's writer). */
void mr_job_count(mr_job *job, int counter, uint64_t n);

/* What setup reads from outside its arguments (a table's schema and
 * regions) is read once, on rank 0, and broadcast, so that every rank
 * describes the same job whatever its host sees. produce runs on rank 0 and
 * fills out; every rank returns with rank 0's bytes in out, or with rank 0's
 * error. Collective: every rank's setup makes the same calls in the same
 * order. The bytes join the job's description (see mr_job_describe). */
typedef kiln_status (*mr_shared_fn)(void *arg, kbuf *out, kiln_err *err);
kiln_status mr_job_shared(mr_job *job, const char *what, mr_shared_fn produce, void *arg, kbuf *out,
                          kiln_err *err);

/* Add bytes that decide the output to the job's description. Before map,
 * every rank's description (arguments, settings, inputs, output,
 * partitioning and these) is compared with rank 0's, and the job fails
 * naming the first rank and host that differ. */
void mr_job_describe(mr_job *job, const char *what, kslice bytes);

/* A file setup read (on rank 0) that every host must see with the same
 * bytes at the same path; checked before map, naming the host that does
 * not. Called on every rank; only rank 0's calls count. */
void mr_job_require_file(mr_job *job, const char *path);

/* Add "key": value to _job.json; value is a JSON text (copied). */
void mr_job_report(mr_job *job, const char *key, const char *json_value);

/* ------------------------------------------------------------------ running */

/* Run a job named by argv[0] with argv[1..argc) (-D key=value and -Dkey=value
 * taken out as settings) on MPI_COMM_WORLD. Collective. Returns the agreed
 * status on every rank; rank 0 has printed progress and counters (or the
 * error) to stderr. */
kiln_status mr_job_main(const mr_job_def *def, int argc, char **argv, kiln_err *err);

/* ------------------------------------------------------------------ in callbacks */

/* Emit a record: from map into the map output, from a combiner into the
 * spill, from reduce into the output format. Slices are copied. */
kiln_status mr_task_emit(mr_task *t, kslice key, kslice value, kiln_err *err);

void *mr_task_state(mr_task *t);
mr_job *mr_task_job(mr_task *t);
void mr_task_count(mr_task *t, int counter, uint64_t n);
/* Map: the current record is bad (the job counts and logs it as it likes).
 * Counted as "Bad input records"; a job whose every record is bad fails
 * (unless -D kiln.bad.records.all.ok=true). */
void mr_task_bad_record(mr_task *t);
/* 1 while the task is sampling keys for the total-order partitioner: map
 * runs over sample records then, and should skip side effects like logging. */
int mr_task_sampling(const mr_task *t);

/* Map only: the current record's file path, its index in the job's sorted
 * input list, and its byte offset in the (uncompressed) file. */
const char *mr_task_input_path(const mr_task *t);
uint32_t mr_task_input_file(const mr_task *t);
uint64_t mr_task_input_offset(const mr_task *t);
/* Map only: 1-based line number of the current record (costly the first
 * time in a split: meant for error reports). */
kiln_status mr_task_input_line(mr_task *t, uint64_t *line, kiln_err *err);

/* Reduce only: the partition being reduced. */
uint32_t mr_task_partition(const mr_task *t);

/* Print a warning line to stderr, prefixed with the program and rank. */
void mr_task_warn(mr_task *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Next value of the key: 1 with *value (valid until the next call), 0 at the
 * end. A read error also ends the values; the engine reports it when the
 * callback returns. */
int mr_task_next_value(mr_values *v, kslice *value);

#endif
