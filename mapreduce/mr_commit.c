/* mr_commit.c -- the commit phase: the rank's resource use into its
 * counters, counters and partition statistics to rank 0, _job.json, then
 * _SUCCESS and the rename that publishes both with the output. Also the
 * summary rank 0 prints after it.
 */
#include "mapreduce/mr_commit.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>

static void
mr_commit_measure(mr_job *job)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return;
    uint64_t us = (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec +
                  (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
    job->rt.counters.v[MR_C_CPU_MS] = us / 1000;
    job->rt.counters.v[MR_C_PEAK_RSS] = (uint64_t)ru.ru_maxrss * 1024;
}

/* Bring counters and partition statistics to rank 0. */
static kiln_status
mr_commit_gather(mr_job *job, kiln_err *err)
{
    mr_comm *c = &job->rt.comm;
    mr_counters *counters = &job->rt.counters;
    mr_commit_state *out = &job->out;
    uint32_t partitions = job->desc.partitions;
    uint64_t n[2] = {counters->n, UINT64_MAX - counters->n};
    mr_comm_allreduce_u64(c, n, 2, MPI_MAX);
    if (n[0] != counters->n || UINT64_MAX - n[1] != counters->n)
        return status_set(err, KILN_INTERNAL, "%s: ranks registered different counters",
                          job->desc.def->name);
    size_t cn = counters->n;
    uint64_t *sum = kiln_calloc(cn, sizeof *sum);
    uint64_t *max = kiln_calloc(cn, sizeof *max);
    MPI_Reduce(counters->v, sum, (int)cn, MPI_UINT64_T, MPI_SUM, 0, c->comm);
    MPI_Reduce(counters->v, max, (int)cn, MPI_UINT64_T, MPI_MAX, 0, c->comm);
    if (c->rank == 0)
        for (size_t i = 0; i < cn; i++)
            counters->v[i] = counters->kind[i] == MR_COUNTER_MAX ? max[i] : sum[i];
    free(sum);
    free(max);
    void *rec = c->rank == 0 ? MPI_IN_PLACE : out->part_records;
    void *byt = c->rank == 0 ? MPI_IN_PLACE : out->part_bytes;
    MPI_Reduce(rec, out->part_records, (int)partitions, MPI_UINT64_T, MPI_SUM, 0, c->comm);
    MPI_Reduce(byt, out->part_bytes, (int)partitions, MPI_UINT64_T, MPI_SUM, 0, c->comm);
    return KILN_OK;
}

static void
mr_commit_json_kv_str(kbuf *out, const char *key, const char *value)
{
    buf_append_u8(out, ',');
    mr_counters_json_string(out, key, strlen(key));
    buf_append_u8(out, ':');
    mr_counters_json_string(out, value, strlen(value));
}

static void
mr_commit_json_kv_num(kbuf *out, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
mr_commit_json_kv_num(kbuf *out, const char *key, const char *fmt, ...)
{
    char num[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(num, sizeof num, fmt, ap);
    va_end(ap);
    buf_append_u8(out, ',');
    mr_counters_json_string(out, key, strlen(key));
    buf_append_u8(out, ':');
    buf_append(out, num, strlen(num));
}

static void
mr_commit_report_json(const mr_job *job, kbuf *out)
{
    const mr_job_desc *d = &job->desc;
    const mr_job_rt *rt = &job->rt;
    buf_append(out, "{\"job\":", 7);
    mr_counters_json_string(out, d->def->name, strlen(d->def->name));
    mr_commit_json_kv_str(out, "job_id", d->job_id);
    mr_commit_json_kv_str(out, "status", "SUCCEEDED");
    mr_commit_json_kv_num(out, "ranks", "%d", rt->comm.size);
    mr_commit_json_kv_num(out, "job_time_ms", "%" PRId64, d->time_ms);
    mr_commit_json_kv_num(out, "elapsed_s", "%.3f", mr_progress_now() - rt->t_start);
    buf_append(out, ",\"phases_s\":{", 13);
    static const char *const names[] = {"map", "shuffle", "reduce"};
    for (int i = 0; i < 3; i++) {
        if (i > 0)
            buf_append_u8(out, ',');
        char num[64];
        int len = snprintf(num, sizeof num, "\"%s\":%.3f", names[i], rt->t_phase[i]);
        buf_append(out, num, (size_t)len);
    }
    buf_append_u8(out, '}');
    mr_commit_json_kv_str(out, "output", d->output);
    mr_commit_json_kv_str(out, "output_format", d->fmt->name);
    mr_commit_json_kv_num(out, "input_files", "%zu", d->input.n);
    mr_commit_json_kv_num(out, "input_bytes", "%" PRIu64, d->input.total);
    mr_commit_json_kv_str(out, "partitioner", mr_partitioner_kind(d->part));
    mr_commit_json_kv_num(out, "partitions", "%u", d->partitions);
    buf_append(out, ",\"settings\":{", 13);
    const char *k, *v;
    for (size_t i = 0; mr_conf_entry(job->set.conf, i, &k, &v, NULL); i++) {
        if (i > 0)
            buf_append_u8(out, ',');
        mr_counters_json_string(out, k, strlen(k));
        buf_append_u8(out, ':');
        mr_counters_json_string(out, v, strlen(v));
    }
    buf_append(out, "},\"counters\":", 13);
    mr_counters_json(&rt->counters, out);
    buf_append(out, ",\"split_keys\":[", 15);
    const kslice *splits;
    size_t ns = mr_partitioner_splits(d->part, &splits);
    kbuf tmp = KBUF_INIT;
    for (size_t i = 0; i < ns; i++) {
        if (i > 0)
            buf_append_u8(out, ',');
        buf_reset(&tmp);
        mr_partition_printable(&tmp, splits[i], SIZE_MAX);
        mr_counters_json_string(out, (const char *)tmp.data, tmp.len);
    }
    buf_free(&tmp);
    buf_append(out, "],\"partition_stats\":[", 21);
    for (uint32_t p = 0; p < d->partitions; p++) {
        char row[128];
        int len = snprintf(row, sizeof row,
                           "%s{\"partition\":%u,\"reduce_input_records\":%" PRIu64
                           ",\"output_bytes\":%" PRIu64 "}",
                           p ? "," : "", p, job->out.part_records[p], job->out.part_bytes[p]);
        buf_append(out, row, (size_t)len);
    }
    buf_append_u8(out, ']');
    buf_append(out, d->report.data, d->report.len);
    buf_append(out, "}\n", 2);
}

/* Rank 0: how evenly the partitions were fed (each one's count is in
 * _job.json). */
static void
mr_commit_print_partitions(const mr_job *job)
{
    uint32_t partitions = job->desc.partitions;
    uint64_t lo = UINT64_MAX, hi = 0, sum = 0;
    uint32_t empty = 0;
    for (uint32_t p = 0; p < partitions; p++) {
        uint64_t r = job->out.part_records[p];
        lo = r < lo ? r : lo;
        hi = r > hi ? r : hi;
        sum += r;
        empty += r == 0;
    }
    fprintf(stderr, "Partitions: %u, reduce input records per partition: min %" PRIu64
            ", mean %" PRIu64 ", max %" PRIu64 "%s", partitions, lo,
            partitions ? sum / partitions : 0, hi, empty ? "" : "\n");
    if (empty)
        fprintf(stderr, " (%u partition%s got none)\n", empty, empty == 1 ? "" : "s");
}

kiln_status
mr_commit_phase(mr_job *job, kiln_err *err)
{
    mr_comm *c = &job->rt.comm;
    const char *tmp_out = job->out.tmp_out;
    kiln_status s = KILN_OK;
    mr_settings_inject(&job->set, c, MR_PHASE_DONE, err);
    if (err->code != KILN_OK)
        s = err->code;
    mr_commit_measure(job);
    kiln_status g = mr_commit_gather(job, err);
    if (s == KILN_OK)
        s = g;
    s = mr_comm_agree(c, s, err);
    if (s != KILN_OK)
        return s;
    if (c->rank == 0) {
        const mr_job_desc *d = &job->desc;
        if (d->fmt->commit != NULL)
            s = d->fmt->commit(d->fmt_arg, job, tmp_out, err);
        kbuf json = KBUF_INIT;
        mr_commit_report_json(job, &json);
        if (s == KILN_OK)
            s = mr_output_write_file(tmp_out, "_job.json", json.data, json.len, err);
        buf_free(&json);
        /* _SUCCESS is written last, inside the temporary directory: the
         * rename that publishes the output publishes it too, so no crash
         * leaves an output directory without it. */
        if (s == KILN_OK)
            s = mr_output_write_file(tmp_out, "_SUCCESS", "", 0, err);
        if (s == KILN_OK) {
            /* everything written, not yet published */
            mr_settings_kill_point(&job->set, c, MR_PHASE_DONE, 0);
            s = mr_output_commit(tmp_out, job->desc.output, err);
        }
    }
    return mr_comm_agree(c, s, err);
}

void
mr_commit_print_summary(const mr_job *job)
{
    mr_counters_print(&job->rt.counters, stderr);
    mr_commit_print_partitions(job);
}
