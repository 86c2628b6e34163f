/* jobs_args.h -- what the jobs share: their command lines alike (`--input
 * PATH...` takes every following argument up to the next option) and the
 * schema of a target table, read once by rank 0.
 *
 * Thread-safety: as mr_job.h.
 */
#ifndef KILN_JOBS_ARGS_H
#define KILN_JOBS_ARGS_H

#include "mapreduce/mr_job.h"
#include "storage/base/status.h"
#include "storage/store/schema.h"

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
