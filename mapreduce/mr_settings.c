/* mr_settings.c -- the engine's -D settings, resolved and checked in one
 * pass, and the test hooks (injected failures, killed ranks) they arm.
 */
#include "mapreduce/mr_settings.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "storage/base/env.h"

/* Hadoop's mapreduce.task.io.sort.mb: room for a million distinct short keys
 * in the fold's hash index, so word count over English-like text spills once. */
#define MR_DEFAULT_SORT_MB 100.0
/* A shuffle round moves at most this much per rank unless kiln.sort.mb is
 * smaller (then that): two round buffers, whatever the sort buffer. */
#define MR_DEFAULT_SHUFFLE_MB 32.0
#define MR_DEFAULT_MERGE_FACTOR 100
#define MR_DEFAULT_LINE_MAX (64 << 20)
/* The pieces the ranks of one host share their map input in: small enough
 * that the last one ends within tens of milliseconds, large enough that
 * opening each (a seek and the rest of a cut line) costs nothing. */
#define MR_DEFAULT_MAP_PIECE_KB 2048

static const char *const mr_phase_names[] = {"map", "shuffle", "reduce", "commit"};

void
mr_settings_init(mr_settings *st)
{
    memset(st, 0, sizeof *st);
    st->conf = mr_conf_new();
    st->hooks.fail_rank = -1;
    st->hooks.kill_rank = -1;
    st->hooks.skew_rank = -1;
    st->hooks.slow_rank = -1;
}

void
mr_settings_free(mr_settings *st)
{
    if (st == NULL)
        return;
    mr_conf_free(st->conf);
    free(st->tmp_base);
    memset(st, 0, sizeof *st);
}

kiln_status
mr_settings_read(mr_settings *st, const mr_comm *c, uint32_t default_reduces, int has_split_keys,
                 size_t n_split_keys, uint32_t *partitions, kiln_err *err)
{
    mr_conf *conf = st->conf;
    double sort_mb, shuffle_mb;
    int64_t factor, reduces, chunk_kb, progress_ms, fail_rank, kill_rank, kill_after, enospc_rank,
        enospc_after, skew_rank, line_max, piece_kb, slow_rank, slow_ms;
    int progress;
    kiln_status s = mr_conf_get_double(conf, "kiln.sort.mb", MR_DEFAULT_SORT_MB, &sort_mb, err);
    if (s == KILN_OK)
        s = mr_conf_get_double(conf, "kiln.shuffle.mb",
                               sort_mb < MR_DEFAULT_SHUFFLE_MB ? sort_mb : MR_DEFAULT_SHUFFLE_MB,
                               &shuffle_mb, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.merge.factor", MR_DEFAULT_MERGE_FACTOR, &factor, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "mapreduce.job.reduces",
                             default_reduces ? default_reduces : (uint32_t)c->size, &reduces, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.input.buffer.kb", 1024, &chunk_kb, err);
    if (s == KILN_OK)
        s = mr_conf_get_bool(conf, "kiln.map.share", 1, &st->map_share, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.map.piece.kb", MR_DEFAULT_MAP_PIECE_KB, &piece_kb, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.test.slow.rank", -1, &slow_rank, err);
    if (s == KILN_OK)
        s = mr_conf_get_long(conf, "kiln.test.slow.ms", 100, &slow_ms, err);
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
        s = mr_conf_get_bool(conf, "kiln.bad.records.all.ok", 0, &st->all_bad_ok, err);
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
    if (piece_kb < 64 || piece_kb > 1024 * 1024 * 1024)
        return status_set(err, KILN_INVALID, "kiln.map.piece.kb: %" PRId64 " is not in [64, 2^30]",
                          piece_kb);
    if (slow_ms < 0 || slow_ms > 60000)
        return status_set(err, KILN_INVALID, "kiln.test.slow.ms: %" PRId64 " is not in [0, 60000]",
                          slow_ms);
    if (line_max < 1 || line_max > (int64_t)1 << 40)
        return status_set(err, KILN_INVALID, "kiln.line.max: %" PRId64 " is not in [1, 2^40]",
                          line_max);
    st->line_max = (size_t)line_max;
    st->sort_bytes = (size_t)(sort_mb * 1024 * 1024);
    st->shuffle_bytes = (size_t)(shuffle_mb * 1024 * 1024);
    st->merge_factor = (size_t)factor;
    st->input_chunk = (size_t)chunk_kb * 1024;
    st->map_piece = (uint64_t)piece_kb * 1024;
    mr_test_hooks *h = &st->hooks;
    h->fail_rank = (int)fail_rank;

    const char *phase = mr_conf_get(conf, "kiln.test.fail.phase", "map");
    h->fail_phase = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(phase, mr_phase_names[i]) == 0)
            h->fail_phase = i;
    if (h->fail_phase < 0)
        return status_set(err, KILN_INVALID,
                          "kiln.test.fail.phase: '%s' is not map, shuffle, reduce or commit", phase);

    mr_run_options_init(&st->run_opt);
    const char *codec = mr_conf_get(conf, "kiln.spill.compress", "snappy");
    if (strcmp(codec, "snappy") == 0)
        st->run_opt.codec = CODEC_SNAPPY;
    else if (strcmp(codec, "none") == 0)
        st->run_opt.codec = CODEC_NONE;
    else
        return status_set(err, KILN_INVALID, "kiln.spill.compress: '%s' is not snappy or none",
                          codec);

    if (has_split_keys) {
        if (mr_conf_has(conf, "mapreduce.job.reduces") && (uint64_t)reduces != n_split_keys + 1)
            return status_set(err, KILN_INVALID,
                              "mapreduce.job.reduces=%" PRId64 " but the %zu split keys make %zu partitions",
                              reduces, n_split_keys, n_split_keys + 1);
        *partitions = (uint32_t)(n_split_keys + 1);
    } else {
        *partitions = (uint32_t)reduces;
    }

    const char *tmp = getenv("TMPDIR");
    const char *dir = mr_conf_get(conf, "kiln.tmp.dir", tmp && *tmp ? tmp : "/tmp");
    free(st->tmp_base);
    st->tmp_base = (char *)kiln_memdup(dir, strlen(dir) + 1);
    st->progress = progress;
    st->progress_s = (double)progress_ms / 1000.0;

    h->kill_rank = (int)kill_rank;
    h->kill_after = kill_after;
    h->skew_rank = (int)skew_rank;
    h->slow_rank = (int)slow_rank;
    h->slow_ms = slow_ms;
    const char *ksig = mr_conf_get(conf, "kiln.test.kill.signal", "kill");
    if (strcmp(ksig, "kill") == 0)
        h->kill_how = MR_KILL_SIGKILL;
    else if (strcmp(ksig, "stop") == 0)
        h->kill_how = MR_KILL_STOP;
    else if (strcmp(ksig, "abort") == 0)
        h->kill_how = MR_KILL_ABORT;
    else
        return status_set(err, KILN_INVALID,
                          "kiln.test.kill.signal: '%s' is not kill, stop or abort", ksig);
    const char *kphase = mr_conf_get(conf, "kiln.test.kill.phase", "map");
    if (strcmp(kphase, "map") == 0)
        h->kill_phase = MR_PHASE_MAP;
    else if (strcmp(kphase, "shuffle") == 0)
        h->kill_phase = MR_PHASE_SHUFFLE;
    else if (strcmp(kphase, "commit") == 0)
        h->kill_phase = MR_PHASE_DONE;
    else
        return status_set(err, KILN_INVALID,
                          "kiln.test.kill.phase: '%s' is not map, shuffle or commit", kphase);
    /* What a rank's environment holds, as it started (remote ranks start
     * with what the launcher forwarded). */
    const char *env_name = mr_conf_get(conf, "kiln.test.env", NULL);
    if (env_name != NULL) {
        const char *v = getenv(env_name);
        fprintf(stderr, "kiln-mr: rank %d (%s): test hook kiln.test.env: %s=%s\n", c->rank,
                c->host, env_name, v != NULL ? v : "(unset)");
        fflush(stderr);
    }
    if (enospc_rank == c->rank)
        env_fault_arm(ENV_OP_WRITE, enospc_after, ENOSPC);
    return KILN_OK;
}

void
mr_settings_warn_unused(const mr_settings *st, const mr_comm *c, const char *job_name)
{
    const char *k, *v;
    int used;
    for (size_t i = 0; mr_conf_entry(st->conf, i, &k, &v, &used); i++)
        if (!used)
            mr_comm_say(c, "warning: -D %s=%s was not used by %s", k, v, job_name);
}

void
mr_settings_inject(const mr_settings *st, const mr_comm *c, mr_phase phase, kiln_err *err)
{
    const mr_test_hooks *h = &st->hooks;
    if (h->fail_rank == c->rank && h->fail_phase == (int)phase)
        status_set(err, KILN_IO, "injected failure (kiln.test.fail.rank=%d) in the %s phase",
                   h->fail_rank, mr_phase_names[phase]);
}

void
mr_settings_slow_point(const mr_settings *st, const mr_comm *c)
{
    const mr_test_hooks *h = &st->hooks;
    if (h->slow_rank != c->rank || h->slow_ms == 0)
        return;
    struct timespec ts = {h->slow_ms / 1000, (long)(h->slow_ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

void
mr_settings_kill_now(const mr_settings *st, const mr_comm *c, int phase, int64_t step)
{
    const mr_test_hooks *h = &st->hooks;
    static const char *const how[] = {"killed", "stopped", "aborted"};
    fprintf(stderr, "kiln-mr: rank %d (%s): test hook kiln.test.kill.rank: %s in the %s "
            "phase at step %" PRId64 " (pid %ld)\n", c->rank, c->host, how[h->kill_how],
            mr_phase_names[phase], step, (long)getpid());
    fflush(stderr);
    if (h->kill_how == MR_KILL_ABORT)
        MPI_Abort(MPI_COMM_WORLD, 70);
    raise(h->kill_how == MR_KILL_STOP ? SIGSTOP : SIGKILL);
}
