/* mr_cluster.h -- private to mapreduce/: one job on many hosts. Before map,
 * every rank works in rank 0's working directory, describes the same job as
 * rank 0, and sees the files the job depends on as rank 0 does.
 *
 * Thread-safety: MPI is used from one thread; every call is collective.
 */
#ifndef KILN_MR_CLUSTER_H
#define KILN_MR_CLUSTER_H

#include "mapreduce/mr_state.h"
#include "storage/base/status.h"

/* Every rank in rank 0's working directory (before setup). */
kiln_status mr_cluster_enter_cwd(mr_job *job, kiln_err *err);
/* Every rank's description of the job (arguments, settings, inputs, output,
 * partitioning, what setup read) equal to rank 0's; else the first rank and
 * host that differ, and in what. */
kiln_status mr_cluster_check_description(mr_job *job, kiln_err *err);
/* Every file the job depends on (the program, the inputs, the temporary
 * output directory, what setup read) seen alike by every host. */
kiln_status mr_cluster_check_files(mr_job *job, kiln_err *err);

#endif
