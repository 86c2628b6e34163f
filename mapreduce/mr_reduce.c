/* mr_reduce.c -- the reduce phase: per owned partition, merge the segments
 * every source rank sent (first into local runs, merge-factor at a time,
 * when there are more sources than that), run reduce over each key group
 * (one call per run of keys the grouping comparator calls equal, values
 * streaming from the merge), and write through the output format.
 */
#include "mapreduce/mr_reduce.h"

#include <stdlib.h>
#include <string.h>

#define MR_PROGRESS_EVERY 1024

/* Reduce tasks' emits: to the partition's output writer. */
typedef struct mr_reduce_sink {
    const mr_output_format *fmt;
    void *writer;
} mr_reduce_sink;

static kiln_status
mr_reduce_emit(mr_task *t, kslice key, kslice value, kiln_err *err)
{
    mr_reduce_sink *k = t->sink;
    mr_counters_add(t->env->counters, MR_C_REDUCE_OUTPUT_RECORDS, 1);
    return k->fmt->write(k->writer, key, value, err);
}

/* Reduce one partition from its segments. */
static kiln_status
mr_reduce_partition(mr_job *job, uint32_t p, uint64_t *done_base, kiln_err *err)
{
    const mr_job_desc *d = &job->desc;
    const mr_settings *st = &job->set;
    mr_job_rt *rt = &job->rt;
    mr_counters *counters = &rt->counters;
    mr_shuffle_result *sh = &job->sh;
    int ranks = sh->ranks;
    mr_segment *segs = &sh->seg[(size_t)(p - sh->first) * (size_t)ranks];
    size_t k = 0;
    mr_run_iter **its = kiln_calloc((size_t)ranks + 1, sizeof *its);
    for (int src = 0; src < ranks; src++)
        if (segs[src].n > 0)
            its[k++] = mr_run_iter_new(segs[src].f, segs[src].ext, segs[src].n);

    /* More sources than the merge factor: merge groups into local runs first. */
    mr_run **tmp = kiln_calloc((size_t)ranks + 1, sizeof *tmp);
    env_file **tmpf = kiln_calloc((size_t)ranks + 1, sizeof *tmpf);
    size_t n_tmp = 0;
    kiln_status s = KILN_OK;
    while (k > st->merge_factor && s == KILN_OK) {
        size_t g = st->merge_factor;
        mr_merger *gm = mr_merger_new(its, g);
        memmove(its, its + g, (k - g) * sizeof *its);
        k -= g;
        kbuf path = KBUF_INIT;
        mr_run_dir_path(&rt->spill, "rmerge", &path);
        mr_run_writer *w;
        s = mr_run_writer_open((const char *)path.data, 1, &st->run_opt, &w, err);
        buf_free(&path);
        mr_counters_add(counters, MR_C_REDUCE_PREMERGES, 1);
        if (s == KILN_OK) {
            s = mr_collector_combine(&rt->comb, gm, w, 0, 1, err);
            mr_counters_add(counters, MR_C_FILE_BYTES_READ, mr_merger_bytes_read(gm));
            mr_run *run = NULL;
            if (s == KILN_OK)
                s = mr_run_writer_finish(w, &run, err);
            else
                mr_run_writer_abandon(w);
            if (s == KILN_OK) {
                mr_counters_add(counters, MR_C_FILE_BYTES_WRITTEN, run->bytes);
                tmp[n_tmp] = run;
                s = env_open_read(run->path, &tmpf[n_tmp], err);
                n_tmp++;
            }
            if (s == KILN_OK) {
                mr_extent e = {run->sec[0].off, run->sec[0].len};
                its[k++] = mr_run_iter_new(tmpf[n_tmp - 1], &e, 1);
            }
        }
        mr_merger_free(gm);
    }

    mr_merger *m = mr_merger_new(its, k);
    free(its);
    /* Reduce groups: the grouping comparator's, else the sort comparator's
     * (Hadoop's default), else equal bytes. */
    mr_merger_set_order(m, &d->sort, d->group.cmp != NULL ? &d->group : &d->sort);
    mr_reduce_sink sink = {d->fmt, NULL};
    if (s == KILN_OK)
        s = d->fmt->open(d->fmt_arg, job->out.tmp_out, p, &sink.writer, err);
    void *writer = sink.writer;
    mr_task t;
    mr_task_begin(&t, &rt->task_env, MR_TASK_REDUCE, mr_reduce_emit, &sink);
    t.part = p;
    kslice key;
    int r = 0;
    uint64_t groups = 0;
    while (s == KILN_OK && (r = mr_merger_next_key(m, &key, err)) > 0) {
        mr_values v;
        mr_values_of_merger(&v, m);
        t.values = &v;
        s = d->reduce(&t, key, &v, err);
        t.values = NULL;
        kslice x;
        while (mr_task_next_value(&v, &x))
            ;
        if (s == KILN_OK && v.status != KILN_OK)
            s = status_set(err, v.status, "%s", v.err.msg);
        mr_counters_add(counters, MR_C_REDUCE_INPUT_RECORDS, v.count);
        job->out.part_records[p] += v.count;
        if (++groups % MR_PROGRESS_EVERY == 0)
            mr_progress_update(&rt->progress, *done_base + mr_merger_bytes_read(m));
    }
    if (s == KILN_OK && r < 0)
        s = err->code != KILN_OK ? err->code : KILN_IO;
    mr_counters_add(counters, MR_C_REDUCE_INPUT_GROUPS, groups);
    mr_counters_add(counters, MR_C_FILE_BYTES_READ, mr_merger_bytes_read(m));
    *done_base += mr_merger_bytes_read(m);
    mr_merger_free(m);
    if (writer != NULL) {
        if (s == KILN_OK) {
            uint64_t bytes = 0;
            s = d->fmt->close(writer, &bytes, err);
            job->out.part_bytes[p] = bytes;
            mr_counters_add(counters, MR_C_OUTPUT_BYTES_WRITTEN, bytes);
            mr_counters_add(counters, MR_C_FILE_BYTES_WRITTEN, bytes);
        } else {
            d->fmt->abort(writer);
        }
    }
    for (size_t i = 0; i < n_tmp; i++) {
        env_close(tmpf[i], NULL);
        mr_run_remove(tmp[i]);
    }
    free(tmp);
    free(tmpf);
    return s;
}

kiln_status
mr_reduce_phase(mr_job *job, kiln_err *err)
{
    mr_job_rt *rt = &job->rt;
    const mr_shuffle_result *sh = &job->sh;
    uint64_t total = 0;
    for (size_t i = 0; i < sh->n_seg; i++)
        total += sh->seg[i].bytes;
    mr_progress_begin(&rt->progress, MR_PHASE_REDUCE, total);
    kiln_status s = KILN_OK;
    mr_settings_inject(&job->set, &rt->comm, MR_PHASE_REDUCE, err);
    if (err->code != KILN_OK)
        s = err->code;
    uint64_t done = 0;
    for (uint32_t i = 0; i < sh->count && s == KILN_OK; i++) {
        s = mr_reduce_partition(job, sh->first + i, &done, err);
        mr_progress_update(&rt->progress, done);
    }
    mr_progress_end(&rt->progress, done);
    return s;
}
