/* mr_registry.c -- the registered jobs, kept in name order. */
#include "mapreduce/mr_registry.h"

#include <string.h>

#define MR_JOBS_MAX 64

static const mr_job_def *mr_jobs[MR_JOBS_MAX];
static size_t mr_n_jobs;

void
mr_job_register(const mr_job_def *def)
{
    if (mr_job_find(def->name) != NULL || mr_n_jobs == MR_JOBS_MAX)
        return;
    size_t i = mr_n_jobs++;
    while (i > 0 && strcmp(mr_jobs[i - 1]->name, def->name) > 0) {
        mr_jobs[i] = mr_jobs[i - 1];
        i--;
    }
    mr_jobs[i] = def;
}

const mr_job_def *
mr_job_find(const char *name)
{
    for (size_t i = 0; i < mr_n_jobs; i++)
        if (strcmp(mr_jobs[i]->name, name) == 0)
            return mr_jobs[i];
    return NULL;
}

size_t
mr_job_list(const mr_job_def *const **defs)
{
    *defs = mr_jobs;
    return mr_n_jobs;
}
