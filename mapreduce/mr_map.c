/* mr_map.c -- the map phase: pieces of the input (shared by the host's
 * ranks, mr_steal.h) -> record reader -> map -> collector -> the rank's map
 * output run, with progress and the map counters.
 */
#include "mapreduce/mr_map.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mapreduce/mr_reader.h"
#include "mapreduce/mr_steal.h"

#define MR_PROGRESS_EVERY 1024

/* Map this rank's splits of one formatted input through task t; *done
 * counts the weight finished, for progress. */
static kiln_status
mr_map_source(mr_job *job, const mr_input_src *src, mr_task *t, uint64_t *done, kiln_err *err)
{
    mr_job_rt *rt = &job->rt;
    const mr_settings *st = &job->set;
    mr_map_fn map = src->map != NULL ? src->map : job->desc.map;
    size_t first, end;
    mr_input_src_range(src, rt->comm.size, rt->comm.rank, &first, &end);
    kiln_status s = KILN_OK;
    for (size_t i = first; i < end && s == KILN_OK; i++) {
        uint64_t w;
        kslice split = mr_input_src_split(src, i, &w);
        void *r;
        s = src->fmt->open(src->arg, split, &r, err);
        if (s != KILN_OK)
            break;
        t->format = src->fmt->name;
        t->path = src->fmt->where(r);
        kslice rec;
        int got;
        uint64_t records = 0;
        while ((got = src->fmt->next(r, &rec, &t->object, err)) > 0) {
            t->path = src->fmt->where(r);
            s = map(t, rec, err);
            if (s != KILN_OK)
                break;
            mr_settings_kill_point(st, &rt->comm, MR_PHASE_MAP, (int64_t)records);
            if (++records % MR_PROGRESS_EVERY == 0) {
                uint64_t p = src->fmt->progress(r);
                mr_progress_update(&rt->progress, *done + (p < w ? p : w));
            }
        }
        if (got < 0 && s == KILN_OK)
            s = err->code != KILN_OK ? err->code : KILN_IO;
        mr_counters_add(&rt->counters, MR_C_MAP_INPUT_RECORDS, records);
        uint64_t p = src->fmt->progress(r);
        mr_counters_add(&rt->counters, MR_C_INPUT_BYTES_READ, p < w ? p : w);
        if (src->fmt->bytes_read != NULL)
            mr_counters_add(&rt->counters, MR_C_FILE_BYTES_READ, src->fmt->bytes_read(r));
        *done += w;
        src->fmt->close(r);
        t->object = NULL;
        t->format = NULL;
        t->path = NULL;
        mr_progress_update(&rt->progress, *done);
    }
    return s;
}

kiln_status
mr_map_phase(mr_job *job, kiln_err *err)
{
    const mr_job_desc *d = &job->desc;
    const mr_settings *st = &job->set;
    mr_job_rt *rt = &job->rt;
    mr_map_state *ms = &job->map;
    ms->mof = NULL;
    /* collective: every rank opens and closes it whatever happens between */
    mr_steal *steal = mr_steal_open(&rt->comm, &d->input, st->map_piece, st->map_share);
    uint64_t total = mr_steal_own_bytes(steal);
    for (size_t k = 0; k < d->n_srcs; k++) {
        size_t first, end;
        mr_input_src_range(&d->srcs[k], rt->comm.size, rt->comm.rank, &first, &end);
        for (size_t i = first; i < end; i++) {
            uint64_t w;
            mr_input_src_split(&d->srcs[k], i, &w);
            total += w;
        }
    }
    mr_progress_begin(&rt->progress, MR_PHASE_MAP, total);

    kiln_status s = KILN_OK;
    mr_settings_inject(st, &rt->comm, MR_PHASE_MAP, err);
    if (err->code != KILN_OK)
        s = err->code;
    if (s == KILN_OK) {
        mr_collector_params cp = {
            .partitions = d->partitions,
            .part = d->part,
            .sort_bytes = st->sort_bytes,
            .merge_factor = st->merge_factor,
            .run_opt = &st->run_opt,
            .spill = &rt->spill,
            .comb = &rt->comb,
        };
        s = mr_collector_open(&cp, &ms->col, err);
    }
    mr_task t;
    mr_task_begin(&t, &rt->task_env, MR_TASK_MAP, mr_collector_emit, ms->col);
    mr_counters *counters = &rt->counters;
    uint64_t done = 0;
    mr_split piece;
    int stolen;
    kbuf spare = KBUF_INIT;   /* one read buffer for all the pieces */
    while (s == KILN_OK && mr_steal_next(steal, &piece, &stolen)) {
        const mr_input_file *f = &d->input.files[piece.file];
        if (stolen)
            mr_counters_add(counters, MR_C_MAP_PIECES_STOLEN, 1);
        mr_settings_slow_point(st, &rt->comm);
        mr_reader *r;
        s = mr_reader_open_buf(f, &piece, st->input_chunk, &spare, &r, err);
        if (s != KILN_OK)
            break;
        mr_reader_set_max_line(r, st->line_max);
        t.reader = r;
        t.path = f->path;
        t.file_index = piece.file;
        kslice line;
        int got;
        uint64_t records = 0;
        while ((got = mr_reader_next(r, &line, &t.offset, err)) > 0) {
            s = d->map(&t, line, err);
            if (s != KILN_OK)
                break;
            mr_settings_kill_point(st, &rt->comm, MR_PHASE_MAP, (int64_t)records);
            if (++records % MR_PROGRESS_EVERY == 0)
                mr_progress_update(&rt->progress, done + mr_reader_progress(r));
        }
        if (got < 0 && s == KILN_OK)
            s = err->code != KILN_OK ? err->code : KILN_IO;
        uint64_t first;
        uint64_t skipped = mr_reader_skipped(r, &first);
        if (skipped > 0) {
            mr_counters_add(counters, MR_C_BAD_RECORDS, skipped);
            mr_task_warn(&t, "%s: %" PRIu64 " line%s longer than kiln.line.max=%zu bytes "
                         "skipped, the first at byte offset %" PRIu64, f->path, skipped,
                         skipped == 1 ? "" : "s", st->line_max, first);
        }
        records += skipped;
        mr_counters_add(counters, MR_C_MAP_INPUT_RECORDS, records);
        mr_counters_add(counters, MR_C_INPUT_BYTES_READ, mr_reader_progress(r));
        mr_counters_add(counters, MR_C_FILE_BYTES_READ, mr_reader_bytes_read(r));
        done += piece.end - piece.start;
        mr_reader_close_buf(r, &spare);
        t.reader = NULL;
        mr_progress_update(&rt->progress, done);
    }
    buf_free(&spare);
    mr_steal_close(steal);
    for (size_t k = 0; k < d->n_srcs && s == KILN_OK; k++)
        s = mr_map_source(job, &d->srcs[k], &t, &done, err);
    if (s == KILN_OK) {
        s = mr_collector_finish(ms->col, &ms->mof, err);
        ms->col = NULL;
        if (s == KILN_OK)
            mr_counters_add(counters, MR_C_MAP_OUTPUT_MATERIALIZED_BYTES, ms->mof->bytes);
    }
    mr_collector_abandon(ms->col);
    ms->col = NULL;
    mr_progress_end(&rt->progress, done);
    return s;
}

kiln_status
mr_map_check_bad(mr_job *job, kiln_err *err)
{
    const mr_counters *c = &job->rt.counters;
    uint64_t n[2] = {c->v[MR_C_MAP_INPUT_RECORDS], c->v[MR_C_BAD_RECORDS]};
    mr_comm_allreduce_u64(&job->rt.comm, n, 2, MPI_SUM);
    if (n[0] == 0 || n[1] < n[0] || job->set.all_bad_ok)
        return KILN_OK;
    return status_set(err, KILN_CORRUPTION,
                      "every one of the %" PRIu64 " input records was bad (see the warnings above "
                      "and the Bad input records counter); -D kiln.bad.records.all.ok=true "
                      "accepts such a job", n[0]);
}
