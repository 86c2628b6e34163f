/* mr_state.c -- making and freeing the records of one running job. */
#include "mapreduce/mr_state.h"

#include <stdlib.h>

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
