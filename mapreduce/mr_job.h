/* mr_job.h -- MapReduce jobs on MPI: what a program that runs jobs includes.
 * It brings the registry (mr_registry.h), the calls setup makes to describe
 * a job (mr_desc.h), the calls map, combine and reduce functions make
 * (mr_task.h), and declares the runner.
 *
 * A job registers an mr_job_def (name, one-line summary, usage, setup). The
 * runner (`kiln-mr JOB [-D key=value]... ARGS`) calls setup on every rank
 * with the same arguments; setup parses them and describes the job with the
 * mr_job_set_* calls (mr_desc.h): inputs, output directory and format, map,
 * optional combiner and/or fold, reduce, partition count or total-order
 * split keys, counters, and, as Hadoop's Job has them, a partitioner, a sort
 * comparator and a grouping comparator (mr_order.h has their types). Then
 * mr_job_main runs it:
 *
 *   map      every rank reads its byte-range splits of the input line by line
 *            and calls map(record); emits are partitioned (hash, total order
 *            or the job's partitioner) into a bounded sort buffer
 *            (kiln.sort.mb), sorted (bytes, or the sort comparator),
 *            combined, spilled as sorted snappy runs, merged into one sorted
 *            map output per rank;
 *   shuffle  partitions move to the ranks that reduce them, in bounded rounds
 *            (kiln.shuffle.mb per round over all destinations);
 *   reduce   per partition, a k-way merge feeds reduce(key, values) once per
 *            key group -- equal keys, or a run of keys the grouping (else
 *            the sort) comparator calls equal, with the first -- its values
 *            streaming in key order (mr_task_current_key names each one's
 *            key); emits go to the output format;
 *   commit   all ranks agree, rank 0 writes _job.json, moves the output into
 *            place and writes _SUCCESS last.
 *
 * docs/writing-a-job.md builds a job from an empty file (jobs/linelength.c)
 * and a secondary sort (jobs/secondarysort.c).
 *
 * A failure on any rank stops every rank at the next phase boundary with
 * that rank's error; the output directory is then never created.
 *
 * Settings (all -D): mapreduce.job.reduces (partitions; default set by the
 * job, else one per rank), kiln.sort.mb (map buffer, default 100; fractions
 * allowed), kiln.shuffle.mb (per round, default the smaller of 32 and kiln.sort.mb),
 * kiln.merge.factor (runs merged at once, default 32), kiln.spill.compress
 * (snappy|none), kiln.tmp.dir (local spill directory, default $TMPDIR or
 * /tmp), kiln.partitioner (hash|total: total order on keys sampled from the
 * input; refused for a job with its own partitioner), kiln.sampler.points, kiln.progress (true|false), kiln.progress.ms,
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

#include "mapreduce/mr_conf.h"
#include "mapreduce/mr_desc.h"
#include "mapreduce/mr_input_format.h"
#include "mapreduce/mr_order.h"
#include "mapreduce/mr_output.h"
#include "mapreduce/mr_registry.h"
#include "mapreduce/mr_sortbuf.h"
#include "mapreduce/mr_task.h"
#include "storage/base/buf.h"
#include "storage/base/status.h"

/* Run a job named by argv[0] with argv[1..argc) (-D key=value and -Dkey=value
 * taken out as settings) on MPI_COMM_WORLD. Collective. Returns the agreed
 * status on every rank; rank 0 has printed progress and counters (or the
 * error) to stderr. */
kiln_status mr_job_main(const mr_job_def *def, int argc, char **argv, kiln_err *err);

#endif
