/* mr_registry.h -- the jobs a program can run, by name.
 *
 * A job is an mr_job_def: name, one-line summary, usage and setup. The
 * program that links the engine registers its jobs before it looks one up
 * (kiln-mr keeps its list beside its main); the engine itself names none.
 *
 * Thread-safety: register from one thread before any lookup.
 */
#ifndef KILN_MR_REGISTRY_H
#define KILN_MR_REGISTRY_H

#include <stddef.h>

#include "storage/base/status.h"

typedef struct mr_job mr_job;

typedef struct mr_job_def {
    const char *name;
    const char *summary;     /* one line, for --help */
    const char *usage;       /* the job's own --help text */
    /* Describe the job from its arguments (-D settings already removed and
     * stored in the conf). Runs on every rank with the same arguments and
     * must make the same calls everywhere. KILN_INVALID for a usage error. */
    kiln_status (*setup)(mr_job *job, int argc, char **argv, kiln_err *err);
} mr_job_def;

/* Register a job (the def must outlive the program). A second job with the
 * same name is ignored. */
void mr_job_register(const mr_job_def *def);
/* The job called name, or NULL. */
const mr_job_def *mr_job_find(const char *name);
/* Registered jobs in name order: *defs valid until the next register. */
size_t mr_job_list(const mr_job_def *const **defs);

#endif
