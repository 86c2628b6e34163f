/* mr_state.c -- making and freeing the records of one running job. */
#include "mapreduce/mr_state.h"

#include <stdlib.h>

#include "storage/base/coding.h"

mr_job *
mr_state_new(const mr_job_def *def, int argc, char **argv)
{
    mr_job *job = kiln_calloc(1, sizeof *job);
    mr_job_desc *d = &job->desc;
    d->def = def;
    d->argc = argc;
    d->argv = argv;
    d->fmt = &mr_output_text;
    buf_init(&d->desc_job);
    buf_init(&d->require);
    buf_init(&d->report);
    mr_settings_init(&job->set);
    mr_counters_init(&job->rt.counters);
    mr_comm_init(&job->rt.comm, MPI_COMM_WORLD);
    job->rt.t_start = mr_progress_now();
    return job;
}

void
mr_state_drop_split_keys(mr_job_desc *d)
{
    for (size_t i = 0; i < d->n_split_keys; i++)
        free((void *)d->split_keys[i].p);
    free(d->split_keys);
    d->split_keys = NULL;
    d->n_split_keys = 0;
    d->has_split_keys = 0;
}

void
mr_state_free(mr_job *job)
{
    if (job == NULL)
        return;
    mr_job_desc *d = &job->desc;
    if (d->state_free != NULL)
        d->state_free(d->state);
    for (size_t i = 0; i < d->n_inputs; i++)
        free(d->inputs[i]);
    free(d->inputs);
    for (size_t i = 0; i < d->n_srcs; i++) {
        mr_input_src *src = &d->srcs[i];
        if (src->fmt->finish != NULL)
            src->fmt->finish(src->arg);
        buf_free(&src->plan.meta);
        buf_free(&src->plan.splits);
        free(src->split_off);
    }
    free(d->srcs);
    free(d->output);
    mr_state_drop_split_keys(d);
    buf_free(&d->desc_job);
    buf_free(&d->require);
    buf_free(&d->report);
    mr_input_free(&d->input);
    mr_partitioner_free(d->part);

    mr_collector_abandon(job->map.col);
    mr_run_remove(job->map.mof);
    mr_shuffle_result_free(&job->sh);
    free(job->out.tmp_out);
    free(job->out.part_records);
    free(job->out.part_bytes);

    mr_counters_free(&job->rt.counters);
    mr_progress_free(&job->rt.progress);
    free(job->rt.local_dir);
    mr_settings_free(&job->set);
    mr_comm_free(&job->rt.comm);
    free(job);
}

kslice
mr_input_src_split(const mr_input_src *src, size_t i, uint64_t *weight)
{
    const uint8_t *p = src->plan.splits.data + src->split_off[i];
    *weight = coding_get_be64(p);
    return kslice_make(p + 12, coding_get_be32(p + 8));
}

void
mr_input_src_range(const mr_input_src *src, int nranks, int rank, size_t *first, size_t *end)
{
    size_t n = src->plan.n;
    uint64_t total = src->plan.total;
    *first = *end = 0;
    int found = 0;
    /* the owner of split i: the rank whose 1/nranks of the weight holds its
     * middle; owners never decrease with i, so each rank's splits are one run */
    uint64_t before = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t w;
        mr_input_src_split(src, i, &w);
        int owner;
        if (total == 0)
            owner = (int)(((2 * (unsigned __int128)i + 1) * (unsigned)nranks) / (2 * (unsigned __int128)n));
        else
            owner = (int)(((2 * (unsigned __int128)before + w) * (unsigned)nranks) /
                          (2 * (unsigned __int128)total));
        if (owner >= nranks)
            owner = nranks - 1;
        before += w;
        if (owner == rank) {
            if (!found)
                *first = i;
            found = 1;
            *end = i + 1;
        }
    }
}
