/* mr_plan.c -- before map: rank 0's listing of the inputs, and the
 * partitioner. A total order without split keys from setup samples the
 * input on rank 0: map runs over a few records at evenly spread points
 * (all through a gzip file, which cannot be entered at an offset), the
 * emitted keys are sorted (in the job's key order), and the keys at the
 * partition quantiles become the split keys every rank gets. A job with
 * its own partitioner gets that instead.
 */
#include "mapreduce/mr_plan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapreduce/mr_desc.h"
#include "mapreduce/mr_reader.h"
#include "storage/base/coding.h"

#define MR_SAMPLE_POINTS 1000
#define MR_SAMPLE_RECORDS_PER_POINT 4

/* ------------------------------------------------------------------ input */

/* Rank 0: run every formatted input's plan and append the plans to wire:
 * per input [be32 meta length][meta][be64 count][be32 splits length][splits]. */
static kiln_status
mr_plan_formats(mr_job *job, kbuf *wire, kiln_err *err)
{
    mr_job_desc *d = &job->desc;
    for (size_t i = 0; i < d->n_srcs; i++) {
        mr_input_src *src = &d->srcs[i];
        kiln_status s = src->fmt->plan(src->arg, job, &src->plan, err);
        if (s != KILN_OK)
            return s;
        buf_append_be32(wire, (uint32_t)src->plan.meta.len);
        buf_append(wire, src->plan.meta.data, src->plan.meta.len);
        buf_append_be64(wire, (uint64_t)src->plan.n);
        buf_append_be32(wire, (uint32_t)src->plan.splits.len);
        buf_append(wire, src->plan.splits.data, src->plan.splits.len);
    }
    return KILN_OK;
}

/* Every rank: take the plans from wire (rank 0 has them already) and index
 * each input's splits. */
static kiln_status
mr_plan_formats_decode(mr_job *job, const kbuf *wire, kiln_err *err)
{
    mr_job_desc *d = &job->desc;
    size_t off = 0;
    for (size_t i = 0; i < d->n_srcs; i++) {
        mr_input_src *src = &d->srcs[i];
        if (off + 4 > wire->len)
            return status_set(err, KILN_INTERNAL, "input plan %zu: truncated", i);
        uint32_t ml = coding_get_be32(wire->data + off);
        if (off + 4 + ml + 12 > wire->len)
            return status_set(err, KILN_INTERNAL, "input plan %zu: truncated", i);
        const uint8_t *meta = wire->data + off + 4;
        uint64_t n = coding_get_be64(meta + ml);
        uint32_t sl = coding_get_be32(meta + ml + 8);
        const uint8_t *sp = meta + ml + 12;
        if ((size_t)(sp - wire->data) + sl > wire->len)
            return status_set(err, KILN_INTERNAL, "input plan %zu: truncated", i);
        if (mr_job_rank(job) != 0) {
            buf_reset(&src->plan.meta);
            buf_append(&src->plan.meta, meta, ml);
            buf_reset(&src->plan.splits);
            buf_append(&src->plan.splits, sp, sl);
            src->plan.n = (size_t)n;
        }
        off = (size_t)(sp - wire->data) + sl;
        free(src->split_off);
        src->split_off = kiln_calloc(n ? n : 1, sizeof *src->split_off);
        src->plan.total = 0;
        size_t p = 0;
        for (uint64_t k = 0; k < n; k++) {
            if (p + 12 > src->plan.splits.len)
                return status_set(err, KILN_INTERNAL, "input plan %zu: split %llu truncated", i,
                                  (unsigned long long)k);
            src->split_off[k] = p;
            src->plan.total += coding_get_be64(src->plan.splits.data + p);
            p += 12 + coding_get_be32(src->plan.splits.data + p + 8);
        }
    }
    return KILN_OK;
}

kiln_status
mr_plan_inputs(mr_job *job, kiln_err *err)
{
    mr_job_desc *d = &job->desc;
    mr_comm *c = &job->rt.comm;
    kbuf table = KBUF_INIT;
    kbuf plans = KBUF_INIT;
    kiln_status s = KILN_OK;
    if (c->rank == 0) {
        if (d->n_inputs == 0 && d->n_srcs == 0)
            s = status_set(err, KILN_INVALID, "no input given");
        if (s == KILN_OK && d->n_inputs > 0)
            s = mr_input_list(&d->input, (const char *const *)d->inputs, d->n_inputs, err);
        if (s == KILN_OK && d->n_inputs > 0 && d->input.n == 0)
            s = status_set(err, KILN_NOT_FOUND, "%s: no input files", d->inputs[0]);
        if (s == KILN_OK)
            mr_input_encode(&d->input, &table);
        if (s == KILN_OK)
            s = mr_plan_formats(job, &plans, err);
    }
    s = mr_comm_agree(c, s, err);
    if (s != KILN_OK) {
        buf_free(&table);
        buf_free(&plans);
        return s;
    }
    mr_comm_bcast_buf(c, &table, 0);
    mr_comm_bcast_buf(c, &plans, 0);
    if (c->rank != 0)
        s = mr_input_decode(&d->input, table.data, table.len, err);
    if (s == KILN_OK)
        s = mr_plan_formats_decode(job, &plans, err);
    buf_free(&table);
    buf_free(&plans);
    s = mr_comm_agree(c, s, err);
    /* Every rank gets ready to read its formatted inputs (say, opens the
     * table version rank 0 pinned); the agreement names a failing host. */
    for (size_t i = 0; i < d->n_srcs && s == KILN_OK; i++) {
        mr_input_src *src = &d->srcs[i];
        kiln_status ps = KILN_OK;
        if (src->fmt->prepare != NULL)
            ps = src->fmt->prepare(src->arg, job, buf_slice(&src->plan.meta), err);
        s = mr_comm_agree(c, ps, err);
    }
    return s;
}

/* ------------------------------------------------------------------ sampling */

/* Sample tasks' emits: keys appended to a list as [be32 length][bytes]. */
typedef struct mr_plan_samples {
    kbuf *keys;
    size_t n;
} mr_plan_samples;

static kiln_status
mr_plan_sample_emit(mr_task *t, kslice key, kslice value, kiln_err *err)
{
    mr_plan_samples *sm = t->sink;
    buf_append_be32(sm->keys, (uint32_t)key.n);
    buf_append(sm->keys, key.p, key.n);
    sm->n++;
    return KILN_OK;
}

/* Rank 0: map over `want` records drawn evenly from the whole of gzip file
 * `file` (a reservoir, with a fixed seed so every run draws the same). */
static kiln_status
mr_plan_sample_gzip(mr_job *job, mr_task *t, uint32_t file, size_t want, kiln_err *err)
{
    const mr_input_file *f = &job->desc.input.files[file];
    mr_split sp = {file, 0, f->size};
    mr_reader *r;
    kiln_status s = mr_reader_open(f, &sp, 64 * 1024, &r, err);
    if (s != KILN_OK)
        return s;
    mr_reader_set_max_line(r, job->set.line_max);
    kbuf *keep = kiln_calloc(want, sizeof *keep);
    uint64_t *keep_off = kiln_calloc(want, sizeof *keep_off);
    uint64_t seen = 0, x = 0x9e3779b97f4a7c15ull ^ file;
    kslice line;
    uint64_t off;
    int got;
    while ((got = mr_reader_next(r, &line, &off, err)) > 0) {
        size_t slot = want;
        if (seen < want) {
            slot = (size_t)seen;
        } else {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            uint64_t j = x % (seen + 1);
            if (j < want)
                slot = (size_t)j;
        }
        seen++;
        if (slot < want) {
            buf_reset(&keep[slot]);
            buf_append(&keep[slot], line.p, line.n);
            keep_off[slot] = off;
        }
    }
    mr_reader_close(r);
    if (got < 0)
        s = err->code != KILN_OK ? err->code : KILN_IO;
    size_t n = seen < want ? (size_t)seen : want;
    t->path = f->path;
    t->file_index = file;
    for (size_t i = 0; i < n && s == KILN_OK; i++) {
        kiln_err ignored;
        status_clear(&ignored);
        t->offset = keep_off[i];
        job->desc.map(t, buf_slice(&keep[i]), &ignored);
    }
    for (size_t i = 0; i < want; i++)
        buf_free(&keep[i]);
    free(keep);
    free(keep_off);
    return s;
}

/* Rank 0: map over the first records of a formatted input's splits: about
 * points * MR_SAMPLE_RECORDS_PER_POINT records in all, spread evenly over
 * the splits (its planner already cut it into similar pieces). */
static kiln_status
mr_plan_sample_source(mr_job *job, const mr_input_src *src, mr_task *t, size_t points,
                      kiln_err *err)
{
    size_t n = src->plan.n;
    if (n == 0)
        return KILN_OK;
    size_t want = points * MR_SAMPLE_RECORDS_PER_POINT;
    size_t per = want / n > MR_SAMPLE_RECORDS_PER_POINT ? want / n : MR_SAMPLE_RECORDS_PER_POINT;
    size_t step = n > points ? n / points : 1;
    mr_map_fn map = src->map != NULL ? src->map : job->desc.map;
    kiln_status s = KILN_OK;
    for (size_t i = 0; i < n && s == KILN_OK; i += step) {
        uint64_t w;
        void *r;
        s = src->fmt->open(src->arg, mr_input_src_split(src, i, &w), &r, err);
        if (s != KILN_OK)
            break;
        t->format = src->fmt->name;
        kslice rec;
        int got = 0;
        for (size_t k = 0; k < per && (got = src->fmt->next(r, &rec, &t->object, err)) > 0; k++) {
            t->path = src->fmt->where(r);
            kiln_err ignored;
            status_clear(&ignored);
            map(t, rec, &ignored);
        }
        if (got < 0)
            s = err->code != KILN_OK ? err->code : KILN_IO;
        src->fmt->close(r);
        t->format = NULL;
        t->object = NULL;
        t->path = NULL;
    }
    return s;
}

/* Rank 0: run map over records at sample points, keep the emitted keys. */
static kiln_status
mr_plan_sample(mr_job *job, kbuf *keys_out, size_t *n_out, kiln_err *err)
{
    const mr_input *in = &job->desc.input;
    int64_t points;
    kiln_status s = mr_conf_get_long(job->set.conf, "kiln.sampler.points", MR_SAMPLE_POINTS,
                                     &points, err);
    if (s != KILN_OK)
        return s;
    if (points < 1 || points > 10000000)
        return status_set(err, KILN_INVALID, "kiln.sampler.points: %" PRId64 " is not in [1, 10000000]",
                          points);
    mr_plan_samples samples = {keys_out, 0};
    mr_task t;
    mr_task_begin(&t, &job->rt.task_env, MR_TASK_SAMPLE, mr_plan_sample_emit, &samples);
    /* Points per gzip file: it cannot be entered at an offset, so its
     * records are drawn from the whole of it instead (mr_plan_sample_gzip). */
    size_t *gz_points = kiln_calloc(in->n ? in->n : 1, sizeof *gz_points);
    for (size_t i = 0; i < (size_t)points && in->total > 0; i++) {
        uint32_t file;
        uint64_t off;
        mr_input_sample_point(in, i, (size_t)points, &file, &off);
        if (in->files[file].gzip)
            gz_points[file]++;
    }
    for (size_t k = 0; k < in->n && s == KILN_OK; k++)
        if (gz_points[k] > 0)
            s = mr_plan_sample_gzip(job, &t, (uint32_t)k,
                                    gz_points[k] * MR_SAMPLE_RECORDS_PER_POINT, err);
    free(gz_points);
    if (s != KILN_OK)
        return s;
    for (size_t i = 0; i < (size_t)points && in->total > 0; i++) {
        uint32_t file;
        uint64_t off;
        mr_input_sample_point(in, i, (size_t)points, &file, &off);
        const mr_input_file *f = &in->files[file];
        if (f->gzip)
            continue;
        mr_split sp = {file, off, f->size};
        mr_reader *r;
        s = mr_reader_open(f, &sp, 64 * 1024, &r, err);
        if (s != KILN_OK)
            return s;
        t.reader = r;
        t.path = f->path;
        t.file_index = file;
        kslice line;
        for (int k = 0; k < MR_SAMPLE_RECORDS_PER_POINT; k++) {
            int got = mr_reader_next(r, &line, &t.offset, err);
            if (got < 0) {
                mr_reader_close(r);
                return err->code;
            }
            if (got == 0)
                break;
            /* A record the map rejects is simply not a sample. */
            kiln_err ignored;
            status_clear(&ignored);
            job->desc.map(&t, line, &ignored);
        }
        mr_reader_close(r);
    }
    for (size_t k = 0; k < job->desc.n_srcs; k++) {
        s = mr_plan_sample_source(job, &job->desc.srcs[k], &t, (size_t)points, err);
        if (s != KILN_OK)
            return s;
    }
    *n_out = samples.n;
    return KILN_OK;
}

/* ------------------------------------------------------------------ partitioner */

kiln_status
mr_plan_partitioner(mr_job *job, kiln_err *err)
{
    mr_job_desc *d = &job->desc;
    mr_comm *c = &job->rt.comm;
    if (d->part_fn != NULL) {
        /* The job's own partitioner replaces hash and total order. */
        if (d->has_split_keys)
            return status_set(err, KILN_INVALID, "%s: setup gave both a partitioner and split keys",
                              d->def->name);
        if (mr_conf_has(job->set.conf, "kiln.partitioner"))
            return status_set(err, KILN_INVALID, "kiln.partitioner: %s partitions its keys with its "
                              "own partitioner; hash and total do not apply", d->def->name);
        d->part = mr_partitioner_new_custom(d->partitions, d->part_fn, d->part_arg);
        return KILN_OK;
    }
    const char *kind = mr_conf_get(job->set.conf, "kiln.partitioner",
                                   d->has_split_keys ? "total" : "hash");
    kiln_status s = KILN_OK;
    if (strcmp(kind, "hash") == 0 && !d->has_split_keys) {
        d->part = mr_partitioner_new_hash(d->partitions);
        return KILN_OK;
    }
    if (strcmp(kind, "total") != 0)
        return status_set(err, KILN_INVALID, "kiln.partitioner: '%s' is not hash or total%s", kind,
                          d->has_split_keys ? " (this job's split keys need total)" : "");
    if (d->has_split_keys)
        return mr_partitioner_new_total(d->split_keys, d->n_split_keys, d->partitions, &d->sort,
                                        &d->part, err);
    /* Total order on sampled keys: rank 0 samples, everyone gets the splits. */
    kbuf wire = KBUF_INIT;
    if (c->rank == 0) {
        kbuf keys = KBUF_INIT;
        size_t n = 0;
        s = mr_plan_sample(job, &keys, &n, err);
        if (s == KILN_OK) {
            kslice *v = kiln_calloc(n ? n : 1, sizeof *v);
            const uint8_t *p = keys.data;
            for (size_t i = 0; i < n; i++) {
                uint32_t len = coding_get_be32(p);
                v[i] = kslice_make(p + 4, len);
                p += 4 + len;
            }
            kslice *splits = kiln_calloc(d->partitions, sizeof *splits);
            size_t k = mr_partition_pick_splits(v, n, d->partitions, &d->sort, splits);
            buf_append_be64(&wire, (uint64_t)n);
            buf_append_be32(&wire, (uint32_t)k);
            for (size_t i = 0; i < k; i++) {
                buf_append_be32(&wire, (uint32_t)splits[i].n);
                buf_append(&wire, splits[i].p, splits[i].n);
            }
            free(splits);
            free(v);
        }
        buf_free(&keys);
    }
    s = mr_comm_agree(c, s, err);
    if (s != KILN_OK) {
        buf_free(&wire);
        return s;
    }
    mr_comm_bcast_buf(c, &wire, 0);
    uint64_t samples = coding_get_be64(wire.data);
    uint32_t k = coding_get_be32(wire.data + 8);
    kslice *splits = kiln_calloc(k ? k : 1, sizeof *splits);
    const uint8_t *p = wire.data + 12;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t len = coding_get_be32(p);
        splits[i] = kslice_make(p + 4, len);
        p += 4 + len;
    }
    s = mr_job_set_split_keys(job, splits, k, err);
    if (s == KILN_OK)
        s = mr_partitioner_new_total(d->split_keys, d->n_split_keys, d->partitions, &d->sort,
                                     &d->part, err);
    free(splits);
    char rep[128];
    snprintf(rep, sizeof rep, "{\"sampled_keys\":%" PRIu64 ",\"split_keys\":%u,\"partitions\":%u}",
             samples, k, d->partitions);
    mr_job_report(job, "sampling", rep);
    if (s == KILN_OK && k + 1 < d->partitions)
        mr_comm_say(c, "warning: sampling found %" PRIu64 " keys giving %u split key%s for %u "
                   "partitions: %u partition%s will get no records (too few distinct keys, or "
                   "records the map rejected; see kiln.sampler.points)", samples, k,
                   k == 1 ? "" : "s", d->partitions, d->partitions - 1 - k,
                   d->partitions - 1 - k == 1 ? "" : "s");
    buf_free(&wire);
    return s;
}
