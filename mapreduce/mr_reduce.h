/* mr_reduce.h -- private to mapreduce/: the reduce phase. Per partition this
 * rank owns, a k-way merge of what the shuffle gathered feeds the job's
 * reduce with each key group's values in order (mr_order.h); emits go to the
 * output format's writer for that partition, under the temporary output
 * directory.
 *
 * Thread-safety: one thread; MPI only through progress.
 */
#ifndef KILN_MR_REDUCE_H
#define KILN_MR_REDUCE_H

#include "mapreduce/mr_state.h"
#include "storage/base/status.h"

/* Reduce every partition of job->sh; per-partition statistics go to
 * job->out. Local: the caller agrees on the result. */
kiln_status mr_reduce_phase(mr_job *job, kiln_err *err);

#endif
