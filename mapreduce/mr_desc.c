/* mr_desc.c -- the calls setup makes to describe its job; they fill the
 * job's description record (mr_job_desc), and, for counters, register in
 * the rank's counter set.
 */
#include "mapreduce/mr_desc.h"

#include <stdlib.h>
#include <string.h>

#include "mapreduce/mr_state.h"

mr_conf *
mr_job_conf(mr_job *job)
{
    return job->set.conf;
}

const char *
mr_job_name(const mr_job *job)
{
    return job->desc.def->name;
}

int64_t
mr_job_time_ms(const mr_job *job)
{
    return job->desc.time_ms;
}

int
mr_job_rank(const mr_job *job)
{
    return job->rt.comm.rank;
}

int
mr_job_ranks(const mr_job *job)
{
    return job->rt.comm.size;
}

void
mr_job_add_input(mr_job *job, const char *path)
{
    mr_job_desc *d = &job->desc;
    d->inputs = kiln_realloc(d->inputs, (d->n_inputs + 1) * sizeof *d->inputs);
    d->inputs[d->n_inputs++] = (char *)kiln_memdup(path, strlen(path) + 1);
}

void
mr_job_add_input_format(mr_job *job, const mr_input_format *fmt, void *arg, mr_map_fn map)
{
    mr_job_desc *d = &job->desc;
    d->srcs = kiln_realloc(d->srcs, (d->n_srcs + 1) * sizeof *d->srcs);
    mr_input_src *src = &d->srcs[d->n_srcs++];
    memset(src, 0, sizeof *src);
    src->fmt = fmt;
    src->arg = arg;
    src->map = map;
    buf_init(&src->plan.meta);
    buf_init(&src->plan.splits);
}

size_t
mr_job_input_format_count(const mr_job *job)
{
    return job->desc.n_srcs;
}

void
mr_input_plan_add(mr_input_plan *p, kslice split, uint64_t weight)
{
    buf_append_be64(&p->splits, weight);
    buf_append_be32(&p->splits, (uint32_t)split.n);
    buf_append(&p->splits, split.p, split.n);
    p->n++;
    p->total += weight;
}

kbuf *
mr_input_plan_meta(mr_input_plan *p)
{
    return &p->meta;
}

void
mr_job_set_output(mr_job *job, const char *dir)
{
    free(job->desc.output);
    job->desc.output = (char *)kiln_memdup(dir, strlen(dir) + 1);
}

void
mr_job_set_output_format(mr_job *job, const mr_output_format *fmt, void *arg)
{
    job->desc.fmt = fmt;
    job->desc.fmt_arg = arg;
}

void
mr_job_set_map(mr_job *job, mr_map_fn fn)
{
    job->desc.map = fn;
}

void
mr_job_set_reduce(mr_job *job, mr_reduce_fn fn)
{
    job->desc.reduce = fn;
}

void
mr_job_set_combine(mr_job *job, mr_reduce_fn fn)
{
    job->desc.combine = fn;
}

void
mr_job_set_fold(mr_job *job, mr_fold_fn fn, void *arg)
{
    job->desc.fold = fn;
    job->desc.fold_arg = arg;
}

void
mr_job_set_state(mr_job *job, void *state, void (*free_fn)(void *))
{
    job->desc.state = state;
    job->desc.state_free = free_fn;
}

void
mr_job_set_reduces(mr_job *job, uint32_t n)
{
    job->desc.default_reduces = n;
}

kiln_status
mr_job_set_split_keys(mr_job *job, const kslice *keys, size_t n, kiln_err *err)
{
    for (size_t i = 0; i < n; i++) {
        if (keys[i].n == 0)
            return status_set(err, KILN_INVALID, "split key %zu is empty", i + 1);
        if (i > 0 && mr_order_cmp(&job->desc.sort, keys[i - 1], keys[i]) >= 0)
            return status_set(err, KILN_INVALID, "split key %zu does not sort after split key %zu",
                              i + 1, i);
    }
    if (n >= UINT32_MAX)
        return status_set(err, KILN_INVALID, "%zu split keys: too many", n);
    mr_job_desc *d = &job->desc;
    mr_state_drop_split_keys(d);
    d->split_keys = kiln_calloc(n ? n : 1, sizeof *d->split_keys);
    for (size_t i = 0; i < n; i++)
        d->split_keys[i] = kslice_make(kiln_memdup(keys[i].p, keys[i].n), keys[i].n);
    d->n_split_keys = n;
    d->has_split_keys = 1;
    return KILN_OK;
}

void
mr_job_set_partitioner(mr_job *job, mr_partition_fn fn, void *arg)
{
    job->desc.part_fn = fn;
    job->desc.part_arg = arg;
}

void
mr_job_set_sort_comparator(mr_job *job, mr_key_cmp_fn cmp, void *arg)
{
    job->desc.sort.cmp = cmp;
    job->desc.sort.arg = arg;
}

void
mr_job_set_grouping_comparator(mr_job *job, mr_key_cmp_fn cmp, void *arg)
{
    job->desc.group.cmp = cmp;
    job->desc.group.arg = arg;
}

int
mr_job_counter(mr_job *job, const char *group, const char *name)
{
    return mr_counters_register(&job->rt.counters, group, name, MR_COUNTER_SUM);
}

void
mr_job_count(mr_job *job, int counter, uint64_t n)
{
    mr_counters *c = &job->rt.counters;
    if (counter >= 0 && (size_t)counter < c->n)
        mr_counters_add(c, counter, n);
}

uint64_t
mr_job_counter_value(const mr_job *job, int counter)
{
    const mr_counters *c = &job->rt.counters;
    if (counter < 0 || (size_t)counter >= c->n)
        return 0;
    return c->v[counter];
}

kiln_status
mr_job_shared(mr_job *job, const char *what, mr_shared_fn produce, void *arg, kbuf *out,
              kiln_err *err)
{
    mr_comm *c = &job->rt.comm;
    buf_reset(out);
    kiln_status s = KILN_OK;
    if (c->rank == 0)
        s = produce(arg, out, err);
    s = mr_comm_agree(c, s, err);
    if (s != KILN_OK)
        return s;
    mr_comm_bcast_buf(c, out, 0);
    mr_job_describe(job, what, buf_slice(out));
    return KILN_OK;
}

void
mr_job_describe(mr_job *job, const char *what, kslice bytes)
{
    kbuf *b = &job->desc.desc_job;
    buf_append_be32(b, (uint32_t)strlen(what));
    buf_append(b, what, strlen(what));
    buf_append_be64(b, (uint64_t)bytes.n);
    buf_append(b, bytes.p, bytes.n);
}

void
mr_job_require_file(mr_job *job, const char *path)
{
    if (job->rt.comm.rank != 0)
        return;
    kbuf *b = &job->desc.require;
    buf_append_be32(b, (uint32_t)strlen(path));
    buf_append(b, path, strlen(path));
}

void
mr_job_report(mr_job *job, const char *key, const char *json_value)
{
    kbuf *b = &job->desc.report;
    buf_append_u8(b, ',');
    mr_counters_json_string(b, key, strlen(key));
    buf_append_u8(b, ':');
    buf_append(b, json_value, strlen(json_value));
}
