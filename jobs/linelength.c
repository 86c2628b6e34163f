/* linelength.c -- how many lines of each length the input holds: the
 * smallest complete job, quoted whole in docs/writing-a-job.md. Map emits
 * (length, 1), both 8 bytes big-endian so that keys sort as numbers; a fold
 * sums the ones as they are emitted; reduce writes `LENGTH<TAB>LINES`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/jobs_args.h"
#include "storage/base/coding.h"

typedef struct linelength_state {
    int empty;                   /* the "Empty lines" counter */
} linelength_state;

static kiln_status
linelength_map(mr_task *t, kslice line, kiln_err *err)
{
    linelength_state *st = mr_task_state(t);
    mr_task_count(t, st->empty, line.n == 0);
    uint8_t len[8], one[8] = {0, 0, 0, 0, 0, 0, 0, 1};
    coding_put_be64(len, line.n);
    return mr_task_emit(t, kslice_make(len, 8), kslice_make(one, 8), err);
}

static kiln_status
linelength_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    uint64_t lines = 0;
    kslice v;
    while (mr_task_next_value(values, &v)) {
        if (v.n != 8)
            return status_set(err, KILN_CORRUPTION, "linelength: a count of %zu bytes", v.n);
        lines += coding_get_be64(v.p);
    }
    char k[24], n[24];
    int kn = snprintf(k, sizeof k, "%llu", (unsigned long long)coding_get_be64(key.p));
    int nn = snprintf(n, sizeof n, "%llu", (unsigned long long)lines);
    return mr_task_emit(t, kslice_make(k, (size_t)kn), kslice_make(n, (size_t)nn), err);
}

static kiln_status
linelength_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    linelength_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, free);
    for (int i = 1; i < argc; i++) {
        const char *dir;
        kiln_status s = KILN_OK;
        if (strcmp(argv[i], "--input") == 0) {
            s = jobs_take_inputs(job, argc, argv, &i, err);
        } else if (strcmp(argv[i], "--output") == 0) {
            s = jobs_take_value(argc, argv, &i, &dir, err);
            if (s == KILN_OK)
                mr_job_set_output(job, dir);
        } else {
            s = status_set(err, KILN_INVALID, "linelength: unknown argument '%s'", argv[i]);
        }
        if (s != KILN_OK)
            return s;
    }
    mr_job_set_map(job, linelength_map);
    mr_job_set_fold(job, mr_sortbuf_fold_sum_be64, NULL);
    mr_job_set_reduce(job, linelength_reduce);
    st->empty = mr_job_counter(job, "linelength", "Empty lines");
    return KILN_OK;
}

const mr_job_def linelength_job = {
    "linelength",
    "count the lines of each length (the example of docs/writing-a-job.md)",
    "Usage: kiln-mr linelength --input PATH... --output DIR\n"
    "Writes DIR/part-r-NNNNN: a line `LENGTH<TAB>LINES` per line length (bytes,\n"
    "without the line end) in the input, LENGTH ascending in each file (across\n"
    "files with -D kiln.partitioner=total). Counter: Empty lines.\n",
    linelength_setup,
};
