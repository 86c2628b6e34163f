/* mr_job.c -- the job description calls and the runner:
 * setup, input listing, partitioner (with sampling), map, shuffle, reduce,
 * commit, and the report (the registry of jobs is mr_registry.c).
 *
 * Every phase ends at mr_comm_agree, so a failure anywhere stops every rank
 * at the same point with the same status. Rank 0 alone touches the shared
 * output directory's name (check, temporary directory, commit); every rank
 * writes its own partitions' files into the temporary directory, which
 * therefore has to be on a filesystem all ranks see (as Hadoop's output is).
 */
#include "mapreduce/mr_int.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "storage/base/coding.h"
#include "storage/base/env.h"

#define MR_DEFAULT_SORT_MB 32.0
#define MR_DEFAULT_MERGE_FACTOR 32
#define MR_DEFAULT_LINE_MAX (64 << 20)
#define MR_SAMPLE_POINTS 1000
#define MR_SAMPLE_RECORDS_PER_POINT 4
#define MR_PROGRESS_EVERY 1024

/* ------------------------------------------------------------------ describing */

mr_conf *
mr_job_conf(mr_job *job)
{
    return job->conf;
}

const char *
mr_job_name(const mr_job *job)
{
    return job->def->name;
}

int64_t
mr_job_time_ms(const mr_job *job)
{
    return job->time_ms;
}

int
mr_job_rank(const mr_job *job)
{
    return job->comm.rank;
}

int
mr_job_ranks(const mr_job *job)
{
    return job->comm.size;
}

void
mr_job_add_input(mr_job *job, const char *path)
{
    job->inputs = kiln_realloc(job->inputs, (job->n_inputs + 1) * sizeof *job->inputs);
    job->inputs[job->n_inputs++] = (char *)kiln_memdup(path, strlen(path) + 1);
}

void
mr_job_set_output(mr_job *job, const char *dir)
{
    free(job->output);
    job->output = (char *)kiln_memdup(dir, strlen(dir) + 1);
}

void
mr_job_set_output_format(mr_job *job, const mr_output_format *fmt, void *arg)
{
    job->fmt = fmt;
    job->fmt_arg = arg;
}

void
mr_job_set_map(mr_job *job, mr_map_fn fn)
{
    job->map = fn;
}

void
mr_job_set_reduce(mr_job *job, mr_reduce_fn fn)
{
    job->reduce = fn;
}

void
mr_job_set_combine(mr_job *job, mr_reduce_fn fn)
{
    job->combine = fn;
}

void
mr_job_set_fold(mr_job *job, mr_fold_fn fn, void *arg)
{
    job->fold = fn;
    job->fold_arg = arg;
}

void
mr_job_set_state(mr_job *job, void *state, void (*free_fn)(void *))
{
    job->state = state;
    job->state_free = free_fn;
}

void
mr_job_set_reduces(mr_job *job, uint32_t n)
{
    job->default_reduces = n;
}

static void
mr_job_free_split_keys(mr_job *job)
{
    for (size_t i = 0; i < job->n_split_keys; i++)
        free((void *)job->split_keys[i].p);
    free(job->split_keys);
    job->split_keys = NULL;
    job->n_split_keys = 0;
    job->has_split_keys = 0;
}

kiln_status
mr_job_set_split_keys(mr_job *job, const kslice *keys, size_t n, kiln_err *err)
{
    for (size_t i = 0; i < n; i++) {
        if (keys[i].n == 0)
            return status_set(err, KILN_INVALID, "split key %zu is empty", i + 1);
        if (i > 0 && kslice_cmp(keys[i - 1], keys[i]) >= 0)
            return status_set(err, KILN_INVALID, "split key %zu does not sort after split key %zu",
                              i + 1, i);
    }
    if (n >= UINT32_MAX)
        return status_set(err, KILN_INVALID, "%zu split keys: too many", n);
    mr_job_free_split_keys(job);
    job->split_keys = kiln_calloc(n ? n : 1, sizeof *job->split_keys);
    for (size_t i = 0; i < n; i++)
        job->split_keys[i] = kslice_make(kiln_memdup(keys[i].p, keys[i].n), keys[i].n);
    job->n_split_keys = n;
    job->has_split_keys = 1;
    return KILN_OK;
}

int
mr_job_counter(mr_job *job, const char *group, const char *name)
{
    return mr_counters_register(&job->counters, group, name, MR_COUNTER_SUM);
}

void
mr_job_count(mr_job *job, int counter, uint64_t n)
{
    if (counter >= 0 && (size_t)counter < job->counters.n)
        mr_counters_add(&job->counters, counter, n);
}

void
mr_job_report(mr_job *job, const char *key, const char *json_value)
{
    buf_append_u8(&job->report, ',');
    mr_counters_json_string(&job->report, key, strlen(key));
    buf_append_u8(&job->report, ':');
    buf_append(&job->report, json_value, strlen(json_value));
}

void
mr_job_run_path(mr_job *job, const char *what, kbuf *out)
{
    char name[64];
    snprintf(name, sizeof name, "/%s-%06u.run", what, job->run_seq++);
    buf_reset(out);
    buf_append(out, job->local_dir, strlen(job->local_dir));
    buf_append(out, name, strlen(name));
    buf_append_u8(out, '\0');
}

/* ------------------------------------------------------------------ helpers */

static void
mr_job_say(mr_job *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
mr_job_say(mr_job *job, const char *fmt, ...)
{
    if (job->comm.rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("kiln-mr: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* HBase's Bytes.toStringBinary: printable ASCII as is, the rest as \xNN. */
static void
mr_job_printable(kbuf *out, kslice s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < s.n; i++) {
        uint8_t c = s.p[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            buf_append_u8(out, c);
        } else {
            char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            buf_append(out, e, 4);
        }
    }
}

static void
mr_job_inject(mr_job *job, mr_phase phase, kiln_err *err)
{
    static const char *const names[] = {"map", "shuffle", "reduce", "commit"};
    if (job->fail_rank == job->comm.rank && job->fail_phase == (int)phase)
        status_set(err, KILN_IO, "injected failure (kiln.test.fail.rank=%d) in the %s phase",
                   job->fail_rank, names[phase]);
}

void
mr_job_kill_point(mr_job *job, int phase, int64_t step)
{
    if (job->kill_rank != job->comm.rank || job->kill_phase != phase || step != job->kill_after)
        return;
    static const char *const names[] = {"map", "shuffle", "reduce", "commit"};
    static const char *const how[] = {"killed", "stopped", "aborted"};
    fprintf(stderr, "kiln-mr: rank %d (%s): test hook kiln.test.kill.rank: %s in the %s "
            "phase at step %" PRId64 " (pid %ld)\n", job->comm.rank, job->comm.host,
            how[job->kill_how], names[phase], step, (long)getpid());
    fflush(stderr);
    if (job->kill_how == MR_KILL_ABORT)
        MPI_Abort(MPI_COMM_WORLD, 70);
    raise(job->kill_how == MR_KILL_STOP ? SIGSTOP : SIGKILL);
}

/* Read the engine's settings. */
static kiln_status
mr_job_settings(mr_job *job, kiln_err *err)
{
    mr_conf *conf = job->conf;
    double sort_mb, shuffle_mb;
    int64_t factor, reduces, chunk_kb, progress_ms, fail_rank, kill_rank, kill_after, enospc_rank,
        enospc_after, skew_rank, line_max;
    int progress;
    kiln_status s = mr_conf_get_double(conf, "kiln.sort.mb", MR_DEFAULT_SORT_MB, &sort_mb, err);
    if (s == KILN_OK)
        s = mr_conf_get_double(conf, "kiln.shuffle.mb", sort_mb, &shuffle_mb, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.merge.factor", MR_DEFAULT_MERGE_FACTOR, &factor, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "mapreduce.job.reduces",
                             job->default_reduces ? job->default_reduces
                                                  : (uint32_t)job->comm.size,
                             &reduces, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.input.buffer.kb", 1024, &chunk_kb, err);
    if (s == KILN_OK)
        s = mr_conf_get_bool(conf, "kiln.progress", 1, &progress, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.progress.ms", 1000, &progress_ms, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.test.fail.rank", -1, &fail_rank, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.test.kill.rank", -1, &kill_rank, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.test.kill.after", 0, &kill_after, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.test.skew.rank", -1, &skew_rank, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.line.max", MR_DEFAULT_LINE_MAX, &line_max, err);
    if (s == KILN_OK)
        s = mr_conf_get_bool(conf, "kiln.bad.records.all.ok", 0, &job->all_bad_ok, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.test.enospc.rank", -1, &enospc_rank, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.test.enospc.after", 1, &enospc_after, err);
    if (s != KILN_OK)
        return s;
    if (!(sort_mb > 0 && sort_mb <= 4000))
        return status_set(err, KILN_INVALID, "kiln.sort.mb: %g is not in (0, 4000]", sort_mb);
    if (!(shuffle_mb > 0 && shuffle_mb <= 4000))
        return status_set(err, KILN_INVALID, "kiln.shuffle.mb: %g is not in (0, 4000]", shuffle_mb);
    if (factor < 2 || factor > 10000)
        return status_set(err, KILN_INVALID, "kiln.merge.factor: %" PRId64 " is not in [2, 10000]",
                          factor);
    if (reduces < 1 || reduces > 1000000)
        return status_set(err, KILN_INVALID,
                          "mapreduce.job.reduces: %" PRId64 " is not in [1, 1000000]", reduces);
    if (chunk_kb < 4 || chunk_kb > 1024 * 1024)
        return status_set(err, KILN_INVALID, "kiln.input.buffer.kb: %" PRId64 " is not in [4, 1048576]",
                          chunk_kb);
    if (line_max < 1 || line_max > (int64_t)1 << 40)
        return status_set(err, KILN_INVALID, "kiln.line.max: %" PRId64 " is not in [1, 2^40]",
                          line_max);
    job->line_max = (size_t)line_max;
    job->sort_bytes = (size_t)(sort_mb * 1024 * 1024);
    job->shuffle_bytes = (size_t)(shuffle_mb * 1024 * 1024);
    job->merge_factor = (size_t)factor;
    job->input_chunk = (size_t)chunk_kb * 1024;
    job->fail_rank = (int)fail_rank;

    const char *phase = mr_conf_get(conf, "kiln.test.fail.phase", "map");
    static const char *const names[] = {"map", "shuffle", "reduce", "commit"};
    job->fail_phase = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(phase, names[i]) == 0)
            job->fail_phase = i;
    if (job->fail_phase < 0)
        return status_set(err, KILN_INVALID,
                          "kiln.test.fail.phase: '%s' is not map, shuffle, reduce or commit", phase);

    mr_run_options_init(&job->run_opt);
    const char *codec = mr_conf_get(conf, "kiln.spill.compress", "snappy");
    if (strcmp(codec, "snappy") == 0)
        job->run_opt.codec = CODEC_SNAPPY;
    else if (strcmp(codec, "none") == 0)
        job->run_opt.codec = CODEC_NONE;
    else
        return status_set(err, KILN_INVALID, "kiln.spill.compress: '%s' is not snappy or none",
                          codec);

    if (job->has_split_keys) {
        if (mr_conf_has(conf, "mapreduce.job.reduces") &&
            (uint64_t)reduces != job->n_split_keys + 1)
            return status_set(err, KILN_INVALID,
                              "mapreduce.job.reduces=%" PRId64 " but the %zu split keys make %zu partitions",
                              reduces, job->n_split_keys, job->n_split_keys + 1);
        job->partitions = (uint32_t)(job->n_split_keys + 1);
    } else {
        job->partitions = (uint32_t)reduces;
    }

    const char *tmp = getenv("TMPDIR");
    const char *dir = mr_conf_get(conf, "kiln.tmp.dir", tmp && *tmp ? tmp : "/tmp");
    size_t len = strlen(dir) + strlen(job->job_id) + 32;
    job->local_dir = kiln_malloc(len);
    snprintf(job->local_dir, len, "%s/kiln-%s-r%d", dir, job->job_id, job->comm.rank);
    job->tmp_base = (char *)kiln_memdup(dir, strlen(dir) + 1);

    mr_progress_init(&job->progress, &job->comm, progress ? stderr : NULL, "kiln-mr: ",
                     (double)progress_ms / 1000.0);

    job->kill_rank = (int)kill_rank;
    job->kill_after = kill_after;
    job->skew_rank = (int)skew_rank;
    const char *ksig = mr_conf_get(conf, "kiln.test.kill.signal", "kill");
    if (strcmp(ksig, "kill") == 0)
        job->kill_how = MR_KILL_SIGKILL;
    else if (strcmp(ksig, "stop") == 0)
        job->kill_how = MR_KILL_STOP;
    else if (strcmp(ksig, "abort") == 0)
        job->kill_how = MR_KILL_ABORT;
    else
        return status_set(err, KILN_INVALID,
                          "kiln.test.kill.signal: '%s' is not kill, stop or abort", ksig);
    const char *kphase = mr_conf_get(conf, "kiln.test.kill.phase", "map");
    if (strcmp(kphase, "map") == 0)
        job->kill_phase = MR_PHASE_MAP;
    else if (strcmp(kphase, "shuffle") == 0)
        job->kill_phase = MR_PHASE_SHUFFLE;
    else if (strcmp(kphase, "commit") == 0)
        job->kill_phase = MR_PHASE_DONE;
    else
        return status_set(err, KILN_INVALID,
                          "kiln.test.kill.phase: '%s' is not map, shuffle or commit", kphase);
    /* What a rank's environment holds, as it started (remote ranks start
     * with what the launcher forwarded). */
    const char *env_name = mr_conf_get(conf, "kiln.test.env", NULL);
    if (env_name != NULL) {
        const char *v = getenv(env_name);
        fprintf(stderr, "kiln-mr: rank %d (%s): test hook kiln.test.env: %s=%s\n",
                job->comm.rank, job->comm.host, env_name, v != NULL ? v : "(unset)");
        fflush(stderr);
    }
    if (enospc_rank == job->comm.rank)
        env_fault_arm(ENV_OP_WRITE, enospc_after, ENOSPC);
    return KILN_OK;
}

/* ------------------------------------------------------------------ input, partitioner */

static kiln_status
mr_job_list_input(mr_job *job, kiln_err *err)
{
    kbuf table = KBUF_INIT;
    kiln_status s = KILN_OK;
    if (job->comm.rank == 0) {
        if (job->n_inputs == 0)
            s = status_set(err, KILN_INVALID, "no input given");
        if (s == KILN_OK)
            s = mr_input_list(&job->input, (const char *const *)job->inputs, job->n_inputs, err);
        if (s == KILN_OK && job->input.n == 0)
            s = status_set(err, KILN_NOT_FOUND, "%s: no input files", job->inputs[0]);
        if (s == KILN_OK)
            mr_input_encode(&job->input, &table);
    }
    s = mr_comm_agree(&job->comm, s, err);
    if (s != KILN_OK) {
        buf_free(&table);
        return s;
    }
    mr_comm_bcast_buf(&job->comm, &table, 0);
    if (job->comm.rank != 0)
        s = mr_input_decode(&job->input, table.data, table.len, err);
    buf_free(&table);
    return mr_comm_agree(&job->comm, s, err);
}

/* Rank 0: map over `want` records drawn evenly from the whole of gzip file
 * `file` (a reservoir, with a fixed seed so every run draws the same). */
static kiln_status
mr_job_sample_gzip(mr_job *job, mr_task *t, uint32_t file, size_t want, kiln_err *err)
{
    const mr_input_file *f = &job->input.files[file];
    mr_split sp = {file, 0, f->size};
    mr_reader *r;
    kiln_status s = mr_reader_open(f, &sp, 64 * 1024, &r, err);
    if (s != KILN_OK)
        return s;
    mr_reader_set_max_line(r, job->line_max);
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
        job->map(t, buf_slice(&keep[i]), &ignored);
    }
    for (size_t i = 0; i < want; i++)
        buf_free(&keep[i]);
    free(keep);
    free(keep_off);
    return s;
}

/* Rank 0: run map over records at sample points, keep the emitted keys. */
static kiln_status
mr_job_sample(mr_job *job, kbuf *keys_out, size_t *n_out, kiln_err *err)
{
    int64_t points;
    kiln_status s = mr_conf_get_long(job->conf, "kiln.sampler.points", MR_SAMPLE_POINTS, &points,
                                     err);
    if (s != KILN_OK)
        return s;
    if (points < 1 || points > 10000000)
        return status_set(err, KILN_INVALID, "kiln.sampler.points: %" PRId64 " is not in [1, 10000000]",
                          points);
    mr_task t;
    memset(&t, 0, sizeof t);
    t.job = job;
    t.kind = MR_TASK_SAMPLE;
    t.samples = keys_out;
    /* Points per gzip file: it cannot be entered at an offset, so its
     * records are drawn from the whole of it instead (mr_job_sample_gzip). */
    size_t *gz_points = kiln_calloc(job->input.n ? job->input.n : 1, sizeof *gz_points);
    for (size_t i = 0; i < (size_t)points && job->input.total > 0; i++) {
        uint32_t file;
        uint64_t off;
        mr_input_sample_point(&job->input, i, (size_t)points, &file, &off);
        if (job->input.files[file].gzip)
            gz_points[file]++;
    }
    for (size_t k = 0; k < job->input.n && s == KILN_OK; k++)
        if (gz_points[k] > 0)
            s = mr_job_sample_gzip(job, &t, (uint32_t)k, gz_points[k] * MR_SAMPLE_RECORDS_PER_POINT,
                                   err);
    free(gz_points);
    if (s != KILN_OK)
        return s;
    for (size_t i = 0; i < (size_t)points && job->input.total > 0; i++) {
        uint32_t file;
        uint64_t off;
        mr_input_sample_point(&job->input, i, (size_t)points, &file, &off);
        const mr_input_file *f = &job->input.files[file];
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
            job->map(&t, line, &ignored);
        }
        mr_reader_close(r);
    }
    *n_out = t.n_samples;
    return KILN_OK;
}

static kiln_status
mr_job_partitioner(mr_job *job, kiln_err *err)
{
    const char *kind = mr_conf_get(job->conf, "kiln.partitioner", job->has_split_keys ? "total"
                                                                                      : "hash");
    kiln_status s = KILN_OK;
    if (strcmp(kind, "hash") == 0 && !job->has_split_keys) {
        job->part = mr_partitioner_new_hash(job->partitions);
        return KILN_OK;
    }
    if (strcmp(kind, "total") != 0)
        return status_set(err, KILN_INVALID, "kiln.partitioner: '%s' is not hash or total%s", kind,
                          job->has_split_keys ? " (this job's split keys need total)" : "");
    if (job->has_split_keys)
        return mr_partitioner_new_total(job->split_keys, job->n_split_keys, job->partitions,
                                        &job->part, err);
    /* Total order on sampled keys: rank 0 samples, everyone gets the splits. */
    kbuf wire = KBUF_INIT;
    if (job->comm.rank == 0) {
        kbuf keys = KBUF_INIT;
        size_t n = 0;
        s = mr_job_sample(job, &keys, &n, err);
        if (s == KILN_OK) {
            kslice *v = kiln_calloc(n ? n : 1, sizeof *v);
            const uint8_t *p = keys.data;
            for (size_t i = 0; i < n; i++) {
                uint32_t len = coding_get_be32(p);
                v[i] = kslice_make(p + 4, len);
                p += 4 + len;
            }
            kslice *splits = kiln_calloc(job->partitions, sizeof *splits);
            size_t k = mr_partition_pick_splits(v, n, job->partitions, splits);
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
    s = mr_comm_agree(&job->comm, s, err);
    if (s != KILN_OK) {
        buf_free(&wire);
        return s;
    }
    mr_comm_bcast_buf(&job->comm, &wire, 0);
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
        s = mr_partitioner_new_total(job->split_keys, job->n_split_keys, job->partitions,
                                     &job->part, err);
    free(splits);
    char rep[128];
    snprintf(rep, sizeof rep, "{\"sampled_keys\":%" PRIu64 ",\"split_keys\":%u,\"partitions\":%u}",
             samples, k, job->partitions);
    mr_job_report(job, "sampling", rep);
    if (s == KILN_OK && k + 1 < job->partitions)
        mr_job_say(job, "warning: sampling found %" PRIu64 " keys giving %u split key%s for %u "
                   "partitions: %u partition%s will get no records (too few distinct keys, or "
                   "records the map rejected; see kiln.sampler.points)", samples, k,
                   k == 1 ? "" : "s", job->partitions, job->partitions - 1 - k,
                   job->partitions - 1 - k == 1 ? "" : "s");
    buf_free(&wire);
    return s;
}

/* ------------------------------------------------------------------ phases */

static kiln_status
mr_job_map_phase(mr_job *job, mr_run **mof, kiln_err *err)
{
    *mof = NULL;
    mr_split *splits;
    size_t n = mr_input_splits(&job->input, job->comm.size, job->comm.rank, &splits);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += splits[i].end - splits[i].start;
    mr_progress_begin(&job->progress, MR_PHASE_MAP, total);

    kiln_status s = KILN_OK;
    mr_job_inject(job, MR_PHASE_MAP, err);
    if (err->code != KILN_OK)
        s = err->code;
    mr_collector *col = NULL;
    if (s == KILN_OK)
        s = mr_collector_open(job, &col, err);
    mr_task t;
    memset(&t, 0, sizeof t);
    t.job = job;
    t.kind = MR_TASK_MAP;
    t.col = col;
    uint64_t done = 0;
    for (size_t i = 0; i < n && s == KILN_OK; i++) {
        const mr_input_file *f = &job->input.files[splits[i].file];
        mr_reader *r;
        s = mr_reader_open(f, &splits[i], job->input_chunk, &r, err);
        if (s != KILN_OK)
            break;
        mr_reader_set_max_line(r, job->line_max);
        t.reader = r;
        t.path = f->path;
        t.file_index = splits[i].file;
        kslice line;
        int got;
        uint64_t records = 0;
        while ((got = mr_reader_next(r, &line, &t.offset, err)) > 0) {
            s = job->map(&t, line, err);
            if (s != KILN_OK)
                break;
            mr_job_kill_point(job, MR_PHASE_MAP, (int64_t)records);
            if (++records % MR_PROGRESS_EVERY == 0)
                mr_progress_update(&job->progress, done + mr_reader_progress(r));
        }
        if (got < 0 && s == KILN_OK)
            s = err->code != KILN_OK ? err->code : KILN_IO;
        uint64_t first;
        uint64_t skipped = mr_reader_skipped(r, &first);
        if (skipped > 0) {
            mr_counters_add(&job->counters, MR_C_BAD_RECORDS, skipped);
            mr_task_warn(&t, "%s: %" PRIu64 " line%s longer than kiln.line.max=%zu bytes "
                         "skipped, the first at byte offset %" PRIu64, f->path, skipped,
                         skipped == 1 ? "" : "s", job->line_max, first);
        }
        records += skipped;
        mr_counters_add(&job->counters, MR_C_MAP_INPUT_RECORDS, records);
        mr_counters_add(&job->counters, MR_C_INPUT_BYTES_READ, mr_reader_progress(r));
        mr_counters_add(&job->counters, MR_C_FILE_BYTES_READ, mr_reader_bytes_read(r));
        done += splits[i].end - splits[i].start;
        mr_reader_close(r);
        t.reader = NULL;
        mr_progress_update(&job->progress, done);
    }
    free(splits);
    if (s == KILN_OK) {
        s = mr_collector_finish(col, mof, err);
        col = NULL;
        if (s == KILN_OK)
            mr_counters_add(&job->counters, MR_C_MAP_OUTPUT_MATERIALIZED_BYTES, (*mof)->bytes);
    }
    mr_collector_abandon(col);
    mr_progress_end(&job->progress, done);
    return s;
}

/* A job whose every input record was bad fails, unless told it may. */
static kiln_status
mr_job_check_bad(mr_job *job, kiln_err *err)
{
    uint64_t n[2] = {job->counters.v[MR_C_MAP_INPUT_RECORDS], job->counters.v[MR_C_BAD_RECORDS]};
    mr_comm_allreduce_u64(&job->comm, n, 2, MPI_SUM);
    if (n[0] == 0 || n[1] < n[0] || job->all_bad_ok)
        return KILN_OK;
    return status_set(err, KILN_CORRUPTION,
                      "every one of the %" PRIu64 " input records was bad (see the warnings above "
                      "and the Bad input records counter); -D kiln.bad.records.all.ok=true "
                      "accepts such a job", n[0]);
}

/* Reduce one partition from its segments. */
static kiln_status
mr_job_reduce_partition(mr_job *job, mr_shuffle_result *sh, uint32_t p, uint64_t *done_base,
                        kiln_err *err)
{
    int ranks = job->comm.size;
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
    while (k > job->merge_factor && s == KILN_OK) {
        size_t g = job->merge_factor;
        mr_merger *gm = mr_merger_new(its, g);
        memmove(its, its + g, (k - g) * sizeof *its);
        k -= g;
        kbuf path = KBUF_INIT;
        mr_job_run_path(job, "rmerge", &path);
        mr_run_writer *w;
        s = mr_run_writer_open((const char *)path.data, 1, &job->run_opt, &w, err);
        buf_free(&path);
        mr_counters_add(&job->counters, MR_C_REDUCE_PREMERGES, 1);
        if (s == KILN_OK) {
            s = mr_collector_combine(job, gm, w, 0, 1, err);
            mr_counters_add(&job->counters, MR_C_FILE_BYTES_READ, mr_merger_bytes_read(gm));
            mr_run *run = NULL;
            if (s == KILN_OK)
                s = mr_run_writer_finish(w, &run, err);
            else
                mr_run_writer_abandon(w);
            if (s == KILN_OK) {
                mr_counters_add(&job->counters, MR_C_FILE_BYTES_WRITTEN, run->bytes);
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
    void *writer = NULL;
    if (s == KILN_OK)
        s = job->fmt->open(job->fmt_arg, job->tmp_out, p, &writer, err);
    mr_task t;
    memset(&t, 0, sizeof t);
    t.job = job;
    t.kind = MR_TASK_REDUCE;
    t.writer = writer;
    t.part = p;
    kslice key;
    int r = 0;
    uint64_t groups = 0;
    while (s == KILN_OK && (r = mr_merger_next_key(m, &key, err)) > 0) {
        mr_values v;
        memset(&v, 0, sizeof v);
        v.kind = MR_VALUES_MERGER;
        v.m = m;
        s = job->reduce(&t, key, &v, err);
        kslice x;
        while (mr_task_next_value(&v, &x))
            ;
        if (s == KILN_OK && v.status != KILN_OK)
            s = status_set(err, v.status, "%s", v.err.msg);
        mr_counters_add(&job->counters, MR_C_REDUCE_INPUT_RECORDS, v.count);
        job->part_records[p] += v.count;
        if (++groups % MR_PROGRESS_EVERY == 0)
            mr_progress_update(&job->progress, *done_base + mr_merger_bytes_read(m));
    }
    if (s == KILN_OK && r < 0)
        s = err->code != KILN_OK ? err->code : KILN_IO;
    mr_counters_add(&job->counters, MR_C_REDUCE_INPUT_GROUPS, groups);
    mr_counters_add(&job->counters, MR_C_FILE_BYTES_READ, mr_merger_bytes_read(m));
    *done_base += mr_merger_bytes_read(m);
    mr_merger_free(m);
    if (writer != NULL) {
        if (s == KILN_OK) {
            uint64_t bytes = 0;
            s = job->fmt->close(writer, &bytes, err);
            job->part_bytes[p] = bytes;
            mr_counters_add(&job->counters, MR_C_OUTPUT_BYTES_WRITTEN, bytes);
            mr_counters_add(&job->counters, MR_C_FILE_BYTES_WRITTEN, bytes);
        } else {
            job->fmt->abort(writer);
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

static kiln_status
mr_job_reduce_phase(mr_job *job, mr_shuffle_result *sh, kiln_err *err)
{
    uint64_t total = 0;
    for (size_t i = 0; i < sh->n_seg; i++)
        total += sh->seg[i].bytes;
    mr_progress_begin(&job->progress, MR_PHASE_REDUCE, total);
    kiln_status s = KILN_OK;
    mr_job_inject(job, MR_PHASE_REDUCE, err);
    if (err->code != KILN_OK)
        s = err->code;
    uint64_t done = 0;
    for (uint32_t i = 0; i < sh->count && s == KILN_OK; i++) {
        s = mr_job_reduce_partition(job, sh, sh->first + i, &done, err);
        mr_progress_update(&job->progress, done);
    }
    mr_progress_end(&job->progress, done);
    return s;
}

/* ------------------------------------------------------------------ commit, report */

static void
mr_job_measure(mr_job *job)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return;
    uint64_t us = (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec +
                  (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
    job->counters.v[MR_C_CPU_MS] = us / 1000;
    job->counters.v[MR_C_PEAK_RSS] = (uint64_t)ru.ru_maxrss * 1024;
}

/* Bring counters and partition statistics to rank 0. */
static kiln_status
mr_job_gather(mr_job *job, kiln_err *err)
{
    mr_comm *c = &job->comm;
    uint64_t n[2] = {job->counters.n, UINT64_MAX - job->counters.n};
    mr_comm_allreduce_u64(c, n, 2, MPI_MAX);
    if (n[0] != job->counters.n || UINT64_MAX - n[1] != job->counters.n)
        return status_set(err, KILN_INTERNAL, "%s: ranks registered different counters",
                          job->def->name);
    size_t cn = job->counters.n;
    uint64_t *sum = kiln_calloc(cn, sizeof *sum);
    uint64_t *max = kiln_calloc(cn, sizeof *max);
    MPI_Reduce(job->counters.v, sum, (int)cn, MPI_UINT64_T, MPI_SUM, 0, c->comm);
    MPI_Reduce(job->counters.v, max, (int)cn, MPI_UINT64_T, MPI_MAX, 0, c->comm);
    if (c->rank == 0)
        for (size_t i = 0; i < cn; i++)
            job->counters.v[i] = job->counters.kind[i] == MR_COUNTER_MAX ? max[i] : sum[i];
    free(sum);
    free(max);
    void *rec = c->rank == 0 ? MPI_IN_PLACE : job->part_records;
    void *byt = c->rank == 0 ? MPI_IN_PLACE : job->part_bytes;
    MPI_Reduce(rec, job->part_records, (int)job->partitions, MPI_UINT64_T, MPI_SUM, 0, c->comm);
    MPI_Reduce(byt, job->part_bytes, (int)job->partitions, MPI_UINT64_T, MPI_SUM, 0, c->comm);
    return KILN_OK;
}

static void
mr_job_json_kv_str(kbuf *out, const char *key, const char *value)
{
    buf_append_u8(out, ',');
    mr_counters_json_string(out, key, strlen(key));
    buf_append_u8(out, ':');
    mr_counters_json_string(out, value, strlen(value));
}

static void
mr_job_json_kv_num(kbuf *out, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
mr_job_json_kv_num(kbuf *out, const char *key, const char *fmt, ...)
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
mr_job_report_json(mr_job *job, kbuf *out)
{
    buf_append(out, "{\"job\":", 7);
    mr_counters_json_string(out, job->def->name, strlen(job->def->name));
    mr_job_json_kv_str(out, "job_id", job->job_id);
    mr_job_json_kv_str(out, "status", "SUCCEEDED");
    mr_job_json_kv_num(out, "ranks", "%d", job->comm.size);
    mr_job_json_kv_num(out, "job_time_ms", "%" PRId64, job->time_ms);
    mr_job_json_kv_num(out, "elapsed_s", "%.3f", mr_progress_now() - job->t_start);
    buf_append(out, ",\"phases_s\":{", 13);
    static const char *const names[] = {"map", "shuffle", "reduce"};
    for (int i = 0; i < 3; i++) {
        if (i > 0)
            buf_append_u8(out, ',');
        char num[64];
        int len = snprintf(num, sizeof num, "\"%s\":%.3f", names[i], job->t_phase[i]);
        buf_append(out, num, (size_t)len);
    }
    buf_append_u8(out, '}');
    mr_job_json_kv_str(out, "output", job->output);
    mr_job_json_kv_str(out, "output_format", job->fmt->name);
    mr_job_json_kv_num(out, "input_files", "%zu", job->input.n);
    mr_job_json_kv_num(out, "input_bytes", "%" PRIu64, job->input.total);
    mr_job_json_kv_str(out, "partitioner", mr_partitioner_is_total(job->part) ? "total" : "hash");
    mr_job_json_kv_num(out, "partitions", "%u", job->partitions);
    buf_append(out, ",\"settings\":{", 13);
    const char *k, *v;
    for (size_t i = 0; mr_conf_entry(job->conf, i, &k, &v, NULL); i++) {
        if (i > 0)
            buf_append_u8(out, ',');
        mr_counters_json_string(out, k, strlen(k));
        buf_append_u8(out, ':');
        mr_counters_json_string(out, v, strlen(v));
    }
    buf_append(out, "},\"counters\":", 13);
    mr_counters_json(&job->counters, out);
    buf_append(out, ",\"split_keys\":[", 15);
    const kslice *splits;
    size_t ns = mr_partitioner_splits(job->part, &splits);
    kbuf tmp = KBUF_INIT;
    for (size_t i = 0; i < ns; i++) {
        if (i > 0)
            buf_append_u8(out, ',');
        buf_reset(&tmp);
        mr_job_printable(&tmp, splits[i]);
        mr_counters_json_string(out, (const char *)tmp.data, tmp.len);
    }
    buf_free(&tmp);
    buf_append(out, "],\"partition_stats\":[", 21);
    for (uint32_t p = 0; p < job->partitions; p++) {
        char row[128];
        int len = snprintf(row, sizeof row,
                           "%s{\"partition\":%u,\"reduce_input_records\":%" PRIu64
                           ",\"output_bytes\":%" PRIu64 "}",
                           p ? "," : "", p, job->part_records[p], job->part_bytes[p]);
        buf_append(out, row, (size_t)len);
    }
    buf_append_u8(out, ']');
    buf_append(out, job->report.data, job->report.len);
    buf_append(out, "}\n", 2);
}

/* Rank 0: how evenly the partitions were fed (each one's count is in
 * _job.json). */
static void
mr_job_print_partitions(const mr_job *job)
{
    uint64_t lo = UINT64_MAX, hi = 0, sum = 0;
    uint32_t empty = 0;
    for (uint32_t p = 0; p < job->partitions; p++) {
        uint64_t r = job->part_records[p];
        lo = r < lo ? r : lo;
        hi = r > hi ? r : hi;
        sum += r;
        empty += r == 0;
    }
    fprintf(stderr, "Partitions: %u, reduce input records per partition: min %" PRIu64
            ", mean %" PRIu64 ", max %" PRIu64 "%s", job->partitions, lo,
            job->partitions ? sum / job->partitions : 0, hi, empty ? "" : "\n");
    if (empty)
        fprintf(stderr, " (%u partition%s got none)\n", empty, empty == 1 ? "" : "s");
}

static kiln_status
mr_job_commit(mr_job *job, kiln_err *err)
{
    kiln_status s = KILN_OK;
    mr_job_inject(job, MR_PHASE_DONE, err);
    if (err->code != KILN_OK)
        s = err->code;
    mr_job_measure(job);
    kiln_status g = mr_job_gather(job, err);
    if (s == KILN_OK)
        s = g;
    s = mr_comm_agree(&job->comm, s, err);
    if (s != KILN_OK)
        return s;
    if (job->comm.rank == 0) {
        kbuf json = KBUF_INIT;
        mr_job_report_json(job, &json);
        s = mr_output_write_file(job->tmp_out, "_job.json", json.data, json.len, err);
        buf_free(&json);
        /* _SUCCESS is written last, inside the temporary directory: the
         * rename that publishes the output publishes it too, so no crash
         * leaves an output directory without it. */
        if (s == KILN_OK)
            s = mr_output_write_file(job->tmp_out, "_SUCCESS", "", 0, err);
        if (s == KILN_OK) {
            mr_job_kill_point(job, MR_PHASE_DONE, 0);   /* everything written, not yet published */
            s = mr_output_commit(job->tmp_out, job->output, err);
        }
    }
    return mr_comm_agree(&job->comm, s, err);
}

/* ------------------------------------------------------------------ runner */

static void
mr_job_free(mr_job *job)
{
    if (job->state_free != NULL)
        job->state_free(job->state);
    for (size_t i = 0; i < job->n_inputs; i++)
        free(job->inputs[i]);
    free(job->inputs);
    free(job->output);
    mr_job_free_split_keys(job);
    mr_partitioner_free(job->part);
    mr_counters_free(&job->counters);
    buf_free(&job->report);
    free(job->local_dir);
    free(job->tmp_out);
    free(job->tmp_base);
    buf_free(&job->desc_job);
    buf_free(&job->require);
    mr_input_free(&job->input);
    mr_progress_free(&job->progress);
    free(job->part_records);
    free(job->part_bytes);
    mr_conf_free(job->conf);
    mr_comm_free(&job->comm);
    free(job);
}

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
                s = mr_conf_parse(job->conf, argv[++i], err);
        } else if (i > 0 && strncmp(argv[i], "-D", 2) == 0) {
            s = mr_conf_parse(job->conf, argv[i] + 2, err);
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
    int64_t fixed;
    kiln_status s = mr_conf_get_long(job->conf, "kiln.job.time", -1, &fixed, err);
    uint8_t msg[8 + sizeof job->job_id];
    memset(msg, 0, sizeof msg);
    if (job->comm.rank == 0) {
        struct timeval tv;
        gettimeofday(&tv, NULL);
        int64_t now = (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
        coding_put_be64(msg, (uint64_t)(fixed >= 0 ? fixed : now));
        struct tm tm;
        time_t secs = tv.tv_sec;
        gmtime_r(&secs, &tm);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tm);
        snprintf((char *)msg + 8, sizeof job->job_id, "job_%s_%05d", stamp, (int)(getpid() % 100000));
    }
    MPI_Bcast(msg, (int)sizeof msg, MPI_BYTE, 0, job->comm.comm);
    job->time_ms = (int64_t)coding_get_be64(msg);
    memcpy(job->job_id, msg + 8, sizeof job->job_id);
    job->job_id[sizeof job->job_id - 1] = '\0';
    return s;
}

/* Rank 0 creates the temporary output directory; every rank its spill one. */
static kiln_status
mr_job_dirs(mr_job *job, kiln_err *err)
{
    kbuf tmp = KBUF_INIT;
    mr_output_tmp_path(job->output, job->job_id, &tmp);
    job->tmp_out = (char *)kiln_memdup(tmp.data, tmp.len);
    buf_free(&tmp);
    kiln_status s = env_mkdirs(job->local_dir, 0700, err);
    if (s == KILN_OK && job->comm.rank == 0) {
        /* Named first in the spill directory, so that a sweep after a
         * failure finds it even when this rank was killed
         * (mr_output_sweep). */
        s = mr_output_note_tmp(job->tmp_base, job->job_id, job->tmp_out, err);
        if (s == KILN_OK)
            s = env_mkdirs(job->tmp_out, 0755, err);
        if (s == KILN_OK && job->fmt->prepare != NULL)
            s = job->fmt->prepare(job->fmt_arg, job->tmp_out, err);
    }
    return s;
}

static void
mr_job_warn_unused(mr_job *job)
{
    const char *k, *v;
    int used;
    for (size_t i = 0; mr_conf_entry(job->conf, i, &k, &v, &used); i++)
        if (!used)
            mr_job_say(job, "warning: -D %s=%s was not used by %s", k, v, job->def->name);
}

kiln_status
mr_job_main(const mr_job_def *def, int argc, char **argv, kiln_err *err)
{
    mr_job *job = kiln_calloc(1, sizeof *job);
    job->def = def;
    job->conf = mr_conf_new();
    job->fmt = &mr_output_text;
    mr_counters_init(&job->counters);
    buf_init(&job->report);
    buf_init(&job->desc_job);
    buf_init(&job->require);
    job->argc = argc;
    job->argv = argv;
    job->kill_rank = job->skew_rank = -1;
    mr_comm_init(&job->comm, MPI_COMM_WORLD);
    job->t_start = mr_progress_now();
    mr_comm *c = &job->comm;
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
    if (s == KILN_OK && job->map == NULL)
        s = status_set(err, KILN_INTERNAL, "%s: setup gave no map function", def->name);
    if (s == KILN_OK && job->reduce == NULL)
        s = status_set(err, KILN_INTERNAL, "%s: setup gave no reduce function", def->name);
    if (s == KILN_OK && job->output == NULL)
        s = status_set(err, KILN_INVALID, "%s: no output directory given", def->name);
    if (s == KILN_OK)
        s = mr_job_settings(job, err);
    if (s == KILN_OK && c->rank == 0)
        s = mr_output_check(job->output, err);
    kiln_err local = *err;
    s = mr_comm_agree(c, s, err);
    if (s != KILN_OK)
        goto done;
    usage = 0;

    s = mr_job_list_input(job, err);
    if (s != KILN_OK)
        goto done;
    s = mr_comm_agree(c, mr_job_partitioner(job, err), err);
    if (s != KILN_OK)
        goto done;
    job->part_records = kiln_calloc(job->partitions, sizeof *job->part_records);
    job->part_bytes = kiln_calloc(job->partitions, sizeof *job->part_bytes);
    s = mr_comm_agree(c, mr_job_dirs(job, err), err);
    if (s == KILN_OK)
        s = mr_cluster_check_description(job, err);
    if (s == KILN_OK)
        s = mr_cluster_check_files(job, err);
    if (s != KILN_OK)
        goto done;
    mr_job_say(job, "job %s (%s): %d rank%s, %zu input file%s, %" PRIu64 " bytes, %u partition%s (%s)",
               job->job_id, def->name, c->size, c->size == 1 ? "" : "s", job->input.n,
               job->input.n == 1 ? "" : "s", job->input.total, job->partitions,
               job->partitions == 1 ? "" : "s",
               mr_partitioner_is_total(job->part) ? "total order" : "hash");
    if (job->partitions < (uint32_t)c->size)
        mr_job_say(job, "note: %u partitions for %d ranks: %d ranks reduce nothing "
                   "(set -D mapreduce.job.reduces)", job->partitions, c->size,
                   c->size - (int)job->partitions);

    double t0 = mr_progress_now();
    mr_run *mof = NULL;
    s = mr_comm_agree(c, mr_job_map_phase(job, &mof, err), err);
    job->t_phase[0] = mr_progress_now() - t0;
    if (s == KILN_OK)
        s = mr_job_check_bad(job, err);
    if (s != KILN_OK) {
        mr_run_remove(mof);
        goto done;
    }
    t0 = mr_progress_now();
    mr_shuffle_result sh;
    kiln_status ls = KILN_OK;
    mr_job_inject(job, MR_PHASE_SHUFFLE, err);
    if (err->code != KILN_OK)
        ls = err->code;
    if (ls == KILN_OK) {
        ls = mr_shuffle_run(job, mof, &sh, err);
    } else {
        /* Take part in the shuffle's collectives with nothing, then fail. */
        kiln_err ignored;
        status_clear(&ignored);
        mr_run empty = *mof;
        mr_run_section *none = kiln_calloc(job->partitions, sizeof *none);
        empty.sec = none;
        mr_shuffle_run(job, &empty, &sh, &ignored);
        free(none);
    }
    s = mr_comm_agree(c, ls, err);
    job->t_phase[1] = mr_progress_now() - t0;
    if (s == KILN_OK) {
        t0 = mr_progress_now();
        s = mr_comm_agree(c, mr_job_reduce_phase(job, &sh, err), err);
        job->t_phase[2] = mr_progress_now() - t0;
    }
    mr_shuffle_result_free(&sh);
    mr_run_remove(mof);
    if (s != KILN_OK)
        goto done;
    mr_progress_begin(&job->progress, MR_PHASE_DONE, 0);
    t0 = mr_progress_now();
    s = mr_job_commit(job, err);
    job->t_phase[3] = mr_progress_now() - t0;
    if (s == KILN_OK) {
        mr_job_say(job, "job %s completed successfully in %.2f s", job->job_id,
                   mr_progress_now() - job->t_start);
        if (c->rank == 0) {
            mr_counters_print(&job->counters, stderr);
            mr_job_print_partitions(job);
            mr_job_warn_unused(job);
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
            if (job->job_id[0])
                fprintf(stderr, "kiln-mr: job %s failed\n", job->job_id);
        }
        if (job->tmp_out != NULL)
            mr_output_remove_tree(job->tmp_out);
    }
    if (c->rank == 0 && job->tmp_base != NULL && job->job_id[0])
        mr_output_forget_tmp(job->tmp_base, job->job_id);
    if (job->local_dir != NULL)
        mr_output_remove_tree(job->local_dir);
    mr_job_free(job);
    return s;
}
