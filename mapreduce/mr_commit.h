/* mr_commit.h -- private to mapreduce/: the commit phase and the job's
 * report. Every rank's counters and partition statistics go to rank 0,
 * which writes _job.json and _SUCCESS into the temporary output directory
 * and publishes it with one rename (mr_output_commit).
 *
 * Thread-safety: MPI is used from one thread.
 */
#ifndef KILN_MR_COMMIT_H
#define KILN_MR_COMMIT_H

#include "mapreduce/mr_state.h"
#include "storage/base/status.h"

/* Gather, report and publish. Collective; returns the agreed status. */
kiln_status mr_commit_phase(mr_job *job, kiln_err *err);

/* Rank 0, after a successful commit: the counters and how evenly the
 * partitions were fed, on stderr. */
void mr_commit_print_summary(const mr_job *job);

#endif
