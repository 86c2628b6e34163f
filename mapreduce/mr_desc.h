/* mr_desc.h -- the calls a job's setup makes to describe the job: inputs,
 * output directory and format, map, combiner and/or fold, reduce, partition
 * count or total-order split keys or a partitioner, sort and grouping
 * comparators, counters, private state; what setup read
 * from outside its arguments (shared from rank 0) and the files it depends
 * on; extra members of _job.json.
 *
 * Setup runs on every rank with the same arguments and must make the same
 * calls everywhere. Before map, every rank's description is compared with
 * rank 0's (mr_cluster.c).
 *
 * Thread-safety: one job per process; setup runs on the calling thread.
 */
#ifndef KILN_MR_DESC_H
#define KILN_MR_DESC_H

#include <stddef.h>
#include <stdint.h>

#include "mapreduce/mr_conf.h"
#include "mapreduce/mr_order.h"
#include "mapreduce/mr_output.h"
#include "mapreduce/mr_sortbuf.h"
#include "mapreduce/mr_task.h"
#include "storage/base/buf.h"
#include "storage/base/status.h"

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
 * partitions, partition i holding keys in [keys[i-1], keys[i]) in the job's
 * key order (its sort comparator when it has one). KILN_INVALID if the keys
 * are not strictly increasing in that order or one is empty (checked again
 * before map, with the comparator setup ends with). */
kiln_status mr_job_set_split_keys(mr_job *job, const kslice *keys, size_t n, kiln_err *err);

/* The job's partitioner (Hadoop's Partitioner.getPartition): fn(arg, key,
 * partitions) names the partition of every map output key, instead of the
 * hash or total order; -D kiln.partitioner and split keys are refused with
 * it. It must be a pure function of the key, the same on every rank, and
 * send every key of a reduce group to one partition (a secondary sort
 * partitions on the grouped part of the key alone). An answer >= partitions
 * fails the job (KILN_INTERNAL, exit status 70), naming the key and the
 * answer. mr_order.h has the type. */
void mr_job_set_partitioner(mr_job *job, mr_partition_fn fn, void *arg);

/* The sort comparator (Hadoop's setSortComparatorClass): cmp(arg, a, b)
 * orders map output keys everywhere they are ordered -- the sort buffer,
 * spill and map-side merges, the reduce-side merge, combiner groups, the
 * total-order split keys (which must increase under it) and sampling.
 * Keys it calls equal are ordered by their bytes, values by theirs, so the
 * order stays total (mr_order.h). Without a grouping comparator, reduce
 * (and a combiner) gets one call per run of keys it calls equal, with the
 * first key; a fold still combines equal bytes only. Keys it calls equal
 * must share a partition: total order keeps them together, the hash
 * partitioner (which hashes bytes) does not, so a comparator that calls
 * different bytes equal needs a partitioner that agrees with it. Default:
 * bytes (memcmp), which costs no call. */
void mr_job_set_sort_comparator(mr_job *job, mr_key_cmp_fn cmp, void *arg);

/* The grouping comparator (Hadoop's setGroupingComparatorClass): reduce is
 * called once per run of consecutive keys (in sort order) that cmp calls
 * equal to the run's first key, with that key; mr_task_current_key names each
 * value's own key, and the values stream from the merge (a group is never
 * held in memory). It must be coarser than the sort order (keys it calls
 * equal are adjacent in it), and the partitioner must keep a group in one
 * partition. Combiners still group by the sort comparator. */
void mr_job_set_grouping_comparator(mr_job *job, mr_key_cmp_fn cmp, void *arg);

/* Register a job counter (same order on every rank); returns its id. */
int mr_job_counter(mr_job *job, const char *group, const char *name);
/* Add to a counter from outside a task (an output format's writer). */
void mr_job_count(mr_job *job, int counter, uint64_t n);
/* A counter's value: this rank's own, except in an output format's commit
 * (rank 0, after the counters are gathered), where it is the job's total. */
uint64_t mr_job_counter_value(const mr_job *job, int counter);

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

#endif
