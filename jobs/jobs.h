/* jobs.h -- the jobs kiln-mr runs.
 *
 * Each job file defines one mr_job_def; jobs_register_all (jobs.c)
 * registers them all with the engine's registry (mr_job_register), which
 * kiln-mr's main (kiln_mr_main.c) does first. Only the registry and main
 * include this header: a job file includes what the jobs share
 * (jobs_args.h), never the list of jobs.
 *
 * Thread-safety: as mr_job.h.
 */
#ifndef KILN_JOBS_H
#define KILN_JOBS_H

#include "mapreduce/mr_job.h"

extern const mr_job_def wordcount_job;
extern const mr_job_def importtsv_job;
extern const mr_job_def useractions_job;
extern const mr_job_def tslog_job;
extern const mr_job_def orders_job;
extern const mr_job_def follows_job;
extern const mr_job_def reviews_job;
extern const mr_job_def rowcounter_job;
extern const mr_job_def dailyactivity_job;
extern const mr_job_def lookup_job;
extern const mr_job_def products_job;
extern const mr_job_def events_job;
extern const mr_job_def graph_job;
extern const mr_job_def export_job;
extern const mr_job_def import_job;
extern const mr_job_def cellcounter_job;
extern const mr_job_def copytable_job;
extern const mr_job_def verifytables_job;
extern const mr_job_def secondarysort_job;
extern const mr_job_def linelength_job;

/* Register every job above (mr_job_register). Call once, before looking a
 * job up. */
void jobs_register_all(void);

#endif
