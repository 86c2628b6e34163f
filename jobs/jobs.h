/* jobs.h -- the jobs kiln-mr runs, and what they share.
 *
 * Each job file defines one mr_job_def; jobs_register_all (jobs.c)
 * registers them all with the engine's registry (mr_job_register), which
 * kiln-mr's main (kiln_mr_main.c) does first. Argument helpers keep the
 * jobs' command lines alike: `--input PATH...` takes every following
 * argument up to the next option.
 *
 * Thread-safety: as mr_job.h.
 */
#ifndef KILN_JOBS_H
#define KILN_JOBS_H

#include "mapreduce/mr_job.h"
#include "storage/store/schema.h"
#include "storage/base/status.h"

extern const mr_job_def wordcount_job;
extern const mr_job_def importtsv_job;
extern const mr_job_def useractions_job;
extern const mr_job_def tslog_job;
extern const mr_job_def orders_job;
extern const mr_job_def follows_job;
extern const mr_job_def reviews_job;

/* Register every job above (mr_job_register). Call once, before looking a
 * job up. */
void jobs_register_all(void);

/* Parse `--input PATH...`: at argv[*i] == "--input", add the paths that
 * follow (up to the next "--" option) to the job's inputs and leave *i on
 * the last one. KILN_INVALID if none follows. */
kiln_status jobs_take_inputs(mr_job *job, int argc, char **argv, int *i, kiln_err *err);

/* The value of an option taking one argument (`--opt VALUE`), advancing *i;
 * KILN_INVALID naming the option when it is missing. */
kiln_status jobs_take_value(int argc, char **argv, int *i, const char **out, kiln_err *err);

/* The schema (families, regions, salt) of table `canon` in data_dir as
 * rank 0 reads it, on every rank (mr_job_shared): *exists is 0 when the
 * table does not exist, and out is then left empty. Every host must then
 * see the same schema file (mr_job_require_file). Collective. */
kiln_status jobs_table_read(mr_job *job, const char *data_dir, const char *canon, kiln_schema *out,
                            int *exists, kiln_err *err);

#endif
