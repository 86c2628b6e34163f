/* jobs.c -- registers every job of kiln-mr, and the argument helpers the
 * jobs share.
 */
#include "jobs/jobs.h"

#include <string.h>

void
jobs_register_all(void)
{
    mr_job_register(&wordcount_job);
    mr_job_register(&importtsv_job);
    mr_job_register(&useractions_job);
    mr_job_register(&tslog_job);
    mr_job_register(&orders_job);
    mr_job_register(&follows_job);
    mr_job_register(&reviews_job);
}

kiln_status
jobs_take_inputs(mr_job *job, int argc, char **argv, int *i, kiln_err *err)
{
    const char *opt = argv[*i];
    int n = 0;
    while (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0) {
        mr_job_add_input(job, argv[++*i]);
        n++;
    }
    if (n == 0)
        return status_set(err, KILN_INVALID, "%s needs at least one path", opt);
    return KILN_OK;
}

kiln_status
jobs_take_value(int argc, char **argv, int *i, const char **out, kiln_err *err)
{
    if (*i + 1 >= argc)
        return status_set(err, KILN_INVALID, "%s needs a value", argv[*i]);
    *out = argv[++*i];
    return KILN_OK;
}
