/* mr_job.c -- the runner: one job from its arguments to its published
 * output. It parses the arguments, runs setup, resolves the settings, plans
 * the input and partitions, checks that every host runs the same job, then
 * runs the phases in order -- map (mr_map.c), shuffle (mr_shuffle.c),
 * reduce (mr_reduce.c), commit (mr_commit.c) -- and cleans up.
 *
 * Every phase ends at mr_comm_agree, so a failure anywhere stops every rank
 * at the same point with the same status. Rank 0 alone touches the shared
 * output directory's name (check, temporary directory, commit); every rank
 * writes its own partitions' files into the temporary directory, which
 * therefore has to be on a filesystem all ranks see (as Hadoop's output is).
 *
 * Calls go one way: this file calls the phases, the phases call the
 * collector and the shuffle, those call the runs; nothing below calls back
 * here (the shuffle's per-round test hook is a function pointer set here).
 */
#include "mapreduce/mr_job.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "mapreduce/mr_cluster.h"
#include "mapreduce/mr_commit.h"
#include "mapreduce/mr_map.h"
#include "mapreduce/mr_plan.h"
#include "mapreduce/mr_reduce.h"
#include "mapreduce/mr_state.h"
#include "storage/base/coding.h"
#include "storage/base/env.h"

/* Split -D settings from the job's own arguments. */
static kiln_status
mr_job_args(mr_job *job, int argc, char **argv, char ***args_out, int *n_out, kiln_err *err)
{
    char **args = kiln_calloc((size_t)argc + 1, sizeof *args);
    int n = 0;
    kiln_status s = KILN_OK;
    for (int i = 0; i < argc && s == KILN_OK; i++) {
        if (i > 0 && strcmp(argv[i], "-D") == 0) {
            if (i + 1 >= argc)
                s = status_set(err, KILN_INVALID, "-D needs key=value");
            else
                s = mr_conf_parse(job->set.conf, argv[++i], err);
        } else if (i > 0 && strncmp(argv[i], "-D", 2) == 0) {
            s = mr_conf_parse(job->set.conf, argv[i] + 2, err);
        } else {
            args[n++] = argv[i];
        }
    }
    *args_out = args;
    *n_out = n;
    return s;
}

/* Rank 0 reads the clock and names the job; everyone gets the same. */
static kiln_status
mr_job_clock(mr_job *job, kiln_err *err)
{
    mr_job_desc *d = &job->desc;
    int64_t fixed;
    kiln_status s = mr_conf_get_long(job->set.conf, "kiln.job.time", -1, &fixed, err);
    uint8_t msg[8 + sizeof d->job_id];
    memset(msg, 0, sizeof msg);
    if (job->rt.comm.rank == 0) {
        struct timeval tv;
        gettimeofday(&tv, NULL);
        int64_t now = (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
        coding_put_be64(msg, (uint64_t)(fixed >= 0 ? fixed : now));
        struct tm tm;
        time_t secs = tv.tv_sec;
        gmtime_r(&secs, &tm);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tm);
        snprintf((char *)msg + 8, sizeof d->job_id, "job_%s_%05d", stamp, (int)(getpid() % 100000));
    }
    MPI_Bcast(msg, (int)sizeof msg, MPI_BYTE, 0, job->rt.comm.comm);
    d->time_ms = (int64_t)coding_get_be64(msg);
    memcpy(d->job_id, msg + 8, sizeof d->job_id);
    d->job_id[sizeof d->job_id - 1] = '\0';
    return s;
}

/* Setup done and the settings read: what every phase shares. */
static void
mr_job_prepare(mr_job *job)
{
    const mr_job_desc *d = &job->desc;
    const mr_settings *st = &job->set;
    mr_job_rt *rt = &job->rt;
    size_t len = strlen(st->tmp_base) + strlen(d->job_id) + 32;
    rt->local_dir = kiln_malloc(len);
    snprintf(rt->local_dir, len, "%s/kiln-%s-r%d", st->tmp_base, d->job_id, rt->comm.rank);
    rt->spill.path = rt->local_dir;
    rt->spill.seq = 0;
    mr_progress_init(&rt->progress, &rt->comm, st->progress ? stderr : NULL, "kiln-mr: ",
                     st->progress_s);
    rt->task_env.job = job;
    rt->task_env.state = d->state;
    rt->task_env.name = d->def->name;
    rt->task_env.rank = rt->comm.rank;
    rt->task_env.counters = &rt->counters;
    rt->comb.combine = d->combine;
    rt->comb.fold = d->fold;
    rt->comb.fold_arg = d->fold_arg;
    rt->comb.sort = d->sort;
    rt->comb.env = &rt->task_env;
}

/* Rank 0 creates the temporary output directory; every rank its spill one. */
static kiln_status
mr_job_dirs(mr_job *job, kiln_err *err)
{
    const mr_job_desc *d = &job->desc;
    kbuf tmp = KBUF_INIT;
    mr_output_tmp_path(d->output, d->job_id, &tmp);
    job->out.tmp_out = (char *)kiln_memdup(tmp.data, tmp.len);
    buf_free(&tmp);
    kiln_status s = env_mkdirs(job->rt.local_dir, 0700, err);
    if (s == KILN_OK && job->rt.comm.rank == 0) {
        /* Named first in the spill directory, so that a sweep after a
         * failure finds it even when this rank was killed
         * (mr_output_sweep). */
        s = mr_output_note_tmp(job->set.tmp_base, d->job_id, job->out.tmp_out, err);
        if (s == KILN_OK)
            s = env_mkdirs(job->out.tmp_out, 0755, err);
        if (s == KILN_OK && d->fmt->prepare != NULL)
            s = d->fmt->prepare(d->fmt_arg, job->out.tmp_out, err);
    }
    return s;
}

/* The shuffle's per-round hook: the kill test hook of the shuffle phase. */
static void
mr_job_shuffle_round(void *arg, int64_t round)
{
    const mr_job *job = arg;
    mr_settings_kill_point(&job->set, &job->rt.comm, MR_PHASE_SHUFFLE, round);
}

/* The shuffle phase: job->map.mof to job->sh. Local status; the caller
 * agrees. */
static kiln_status
mr_job_shuffle(mr_job *job, kiln_err *err)
{
    mr_job_rt *rt = &job->rt;
    mr_shuffle_params sp = {
        .comm = &rt->comm,
        .partitions = job->desc.partitions,
        .round_bytes = job->set.shuffle_bytes,
        .spill = &rt->spill,
        .counters = &rt->counters,
        .progress = &rt->progress,
        .on_round = mr_job_shuffle_round,
        .on_round_arg = job,
    };
    kiln_status s = KILN_OK;
    mr_settings_inject(&job->set, &rt->comm, MR_PHASE_SHUFFLE, err);
    if (err->code != KILN_OK)
        s = err->code;
    if (s == KILN_OK)
        return mr_shuffle_run(&sp, job->map.mof, &job->sh, err);
    /* Take part in the shuffle's collectives with nothing, then fail. */
    kiln_err ignored;
    status_clear(&ignored);
    mr_run empty = *job->map.mof;
    mr_run_section *none = kiln_calloc(job->desc.partitions, sizeof *none);
    empty.sec = none;
    mr_shuffle_run(&sp, &empty, &job->sh, &ignored);
    free(none);
    return s;
}

kiln_status
mr_job_main(const mr_job_def *def, int argc, char **argv, kiln_err *err)
{
    mr_job *job = mr_state_new(def, argc, argv);
    mr_job_desc *d = &job->desc;
    mr_job_rt *rt = &job->rt;
    mr_comm *c = &rt->comm;
    int usage = 1;          /* failures so far are the user's arguments */

    char **args;
    int nargs;
    kiln_status s = mr_job_args(job, argc, argv, &args, &nargs, err);
    kiln_status k = mr_job_clock(job, err);
    if (s == KILN_OK)
        s = k;
    k = mr_cluster_enter_cwd(job, err);
    if (s == KILN_OK)
        s = k;
    if (s == KILN_OK)
        s = def->setup(job, nargs, args, err);
    free(args);
    if (s == KILN_OK && d->map == NULL)
        s = status_set(err, KILN_INTERNAL, "%s: setup gave no map function", def->name);
    if (s == KILN_OK && d->reduce == NULL)
        s = status_set(err, KILN_INTERNAL, "%s: setup gave no reduce function", def->name);
    if (s == KILN_OK && d->output == NULL)
        s = status_set(err, KILN_INVALID, "%s: no output directory given", def->name);
    if (s == KILN_OK)
        s = mr_settings_read(&job->set, c, d->default_reduces, d->has_split_keys, d->n_split_keys,
                             &d->partitions, err);
    if (s == KILN_OK)
        mr_job_prepare(job);
    if (s == KILN_OK && c->rank == 0)
        s = mr_output_check(d->output, err);
    kiln_err local = *err;
    s = mr_comm_agree(c, s, err);
    if (s != KILN_OK)
        goto done;
    usage = 0;

    s = mr_plan_inputs(job, err);
    if (s != KILN_OK)
        goto done;
    s = mr_comm_agree(c, mr_plan_partitioner(job, err), err);
    if (s != KILN_OK)
        goto done;
    job->out.part_records = kiln_calloc(d->partitions, sizeof *job->out.part_records);
    job->out.part_bytes = kiln_calloc(d->partitions, sizeof *job->out.part_bytes);
    s = mr_comm_agree(c, mr_job_dirs(job, err), err);
    if (s == KILN_OK)
        s = mr_cluster_check_description(job, err);
    if (s == KILN_OK)
        s = mr_cluster_check_files(job, err);
    if (s != KILN_OK)
        goto done;
    mr_comm_say(c, "job %s (%s): %d rank%s, %zu input file%s, %" PRIu64 " bytes, %u partition%s (%s)",
                d->job_id, def->name, c->size, c->size == 1 ? "" : "s", d->input.n,
                d->input.n == 1 ? "" : "s", d->input.total, d->partitions,
                d->partitions == 1 ? "" : "s",
                mr_partitioner_is_total(d->part)    ? "total order"
                : mr_partitioner_is_custom(d->part) ? "the job's partitioner"
                                                    : "hash");
    for (size_t i = 0; i < d->n_srcs; i++)
        mr_comm_say(c, "input %zu: %s, %zu split%s, %" PRIu64 " bytes", i + 1, d->srcs[i].fmt->name,
                    d->srcs[i].plan.n, d->srcs[i].plan.n == 1 ? "" : "s", d->srcs[i].plan.total);
    if (d->partitions < (uint32_t)c->size)
        mr_comm_say(c, "note: %u partitions for %d ranks: %d ranks reduce nothing "
                    "(set -D mapreduce.job.reduces)", d->partitions, c->size,
                    c->size - (int)d->partitions);

    double t0 = mr_progress_now();
    s = mr_comm_agree(c, mr_map_phase(job, err), err);
    rt->t_phase[0] = mr_progress_now() - t0;
    if (s == KILN_OK)
        s = mr_map_check_bad(job, err);
    if (s != KILN_OK)
        goto done;
    t0 = mr_progress_now();
    s = mr_comm_agree(c, mr_job_shuffle(job, err), err);
    rt->t_phase[1] = mr_progress_now() - t0;
    if (s == KILN_OK) {
        t0 = mr_progress_now();
        s = mr_comm_agree(c, mr_reduce_phase(job, err), err);
        rt->t_phase[2] = mr_progress_now() - t0;
    }
    mr_shuffle_result_free(&job->sh);
    mr_run_remove(job->map.mof);
    job->map.mof = NULL;
    if (s != KILN_OK)
        goto done;
    mr_progress_begin(&rt->progress, MR_PHASE_DONE, 0);
    t0 = mr_progress_now();
    s = mr_commit_phase(job, err);
    rt->t_phase[3] = mr_progress_now() - t0;
    if (s == KILN_OK) {
        mr_comm_say(c, "job %s completed successfully in %.2f s", d->job_id,
                    mr_progress_now() - rt->t_start);
        if (c->rank == 0) {
            mr_commit_print_summary(job);
            mr_settings_warn_unused(&job->set, c, def->name);
        }
    }

done:
    if (s != KILN_OK && c->rank == 0) {
        if (usage && local.code != KILN_OK) {
            fprintf(stderr, "kiln-mr: %s\n", local.msg);
            if (local.code == KILN_INVALID)
                fprintf(stderr, "Try 'kiln-mr %s --help'.\n", def->name);
        } else {
            fprintf(stderr, "kiln-mr: %s\n", err->msg);
            if (d->job_id[0])
                fprintf(stderr, "kiln-mr: job %s failed\n", d->job_id);
        }
        if (job->out.tmp_out != NULL)
            mr_output_remove_tree(job->out.tmp_out);
    }
    if (c->rank == 0 && job->set.tmp_base != NULL && d->job_id[0])
        mr_output_forget_tmp(job->set.tmp_base, d->job_id);
    if (rt->local_dir != NULL)
        mr_output_remove_tree(rt->local_dir);
    mr_state_free(job);
    return s;
}
