/* mr_plan.h -- private to mapreduce/: what the job reads and how its keys
 * are partitioned, settled before map. Rank 0 lists the inputs and, for a
 * total order without split keys from setup, samples the input for them;
 * every rank gets rank 0's answer. Both write the job's description.
 *
 * Thread-safety: MPI is used from one thread; both calls are collective.
 */
#ifndef KILN_MR_PLAN_H
#define KILN_MR_PLAN_H

#include "mapreduce/mr_state.h"
#include "storage/base/status.h"

/* List the job's inputs on rank 0 (KILN_INVALID for none given,
 * KILN_NOT_FOUND for none found) and hand the listing to every rank. */
kiln_status mr_plan_inputs(mr_job *job, kiln_err *err);

/* The partitioner: the job's own (mr_job_set_partitioner; KILN_INVALID with
 * split keys or -D kiln.partitioner), else the one kiln.partitioner asks
 * for: hash, or total order on setup's split keys or on keys sampled from
 * the input (kiln.sampler.points map calls' worth, on rank 0), in the job's
 * key order. Adds "sampling" to _job.json when it samples. Not agreed: the
 * caller agrees on the result. */
kiln_status mr_plan_partitioner(mr_job *job, kiln_err *err);

#endif
