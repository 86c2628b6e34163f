/* mr_settings.h -- how a job runs: the engine's `-D key=value` settings,
 * parsed and checked once, and the test hooks they arm.
 *
 * The conf holds every -D the command line gave (the runner fills it before
 * setup; setup reads its own keys through mr_job_conf). mr_settings_read
 * then resolves the engine's keys into the fields below, in a fixed order so
 * that the first bad setting is the one reported. After that the settings
 * are read-only; the conf's "used" marks alone still change (the
 * partitioner and the sampler read their keys later), and the runner warns
 * about -D keys nobody read.
 *
 * Thread-safety: one job per process; read-only after mr_settings_read.
 */
#ifndef KILN_MR_SETTINGS_H
#define KILN_MR_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "mapreduce/mr_comm.h"
#include "mapreduce/mr_conf.h"
#include "mapreduce/mr_progress.h"
#include "mapreduce/mr_run.h"
#include "storage/base/status.h"

typedef enum mr_kill_how { MR_KILL_SIGKILL, MR_KILL_STOP, MR_KILL_ABORT } mr_kill_how;

/* Test hooks (kiln.test.*): a failure injected at a phase's start, a rank
 * killed at a point of a phase, a rank whose description is skewed. Ranks
 * are -1 when unarmed. */
typedef struct mr_test_hooks {
    int fail_rank;
    int fail_phase;              /* mr_phase, or MR_PHASE_DONE for commit */
    int kill_rank;
    int kill_phase;              /* mr_phase the kill hook fires in */
    int kill_how;                /* mr_kill_how: SIGKILL, SIGSTOP or MPI_Abort */
    int64_t kill_after;          /* map: records first; shuffle: rounds first */
    int skew_rank;               /* this rank's job description differs */
    int slow_rank;               /* sleeps slow_ms before each map input piece */
    int64_t slow_ms;
} mr_test_hooks;

typedef struct mr_settings {
    mr_conf *conf;               /* owned: every -D, as given */
    size_t sort_bytes;           /* kiln.sort.mb */
    size_t shuffle_bytes;        /* kiln.shuffle.mb */
    size_t merge_factor;         /* kiln.merge.factor */
    size_t input_chunk;          /* kiln.input.buffer.kb */
    int map_share;               /* kiln.map.share */
    uint64_t map_piece;          /* kiln.map.piece.kb, in bytes */
    size_t line_max;             /* kiln.line.max */
    int all_bad_ok;              /* kiln.bad.records.all.ok */
    mr_run_options run_opt;      /* kiln.spill.compress */
    char *tmp_base;              /* kiln.tmp.dir: every rank's spills below it */
    int progress;                /* kiln.progress */
    double progress_s;           /* kiln.progress.ms, in seconds */
    mr_test_hooks hooks;
} mr_settings;

/* An empty conf, no settings resolved, every hook unarmed. */
void mr_settings_init(mr_settings *st);
void mr_settings_free(mr_settings *st);   /* frees the contents; st may be NULL */

/* Resolve the engine's settings from st->conf. The partition count is
 * mapreduce.job.reduces (default: default_reduces, else one per rank), or
 * with split keys n_split_keys + 1 (a mapreduce.job.reduces saying otherwise
 * is an error); it goes to *partitions. Arms the ENOSPC fault of
 * kiln.test.enospc.rank on that rank, and prints kiln.test.env. KILN_INVALID
 * naming the first bad setting. */
kiln_status mr_settings_read(mr_settings *st, const mr_comm *c, uint32_t default_reduces,
                             int has_split_keys, size_t n_split_keys, uint32_t *partitions,
                             kiln_err *err);

/* Rank 0: a warning line for each -D key that nothing read. */
void mr_settings_warn_unused(const mr_settings *st, const mr_comm *c, const char *job_name);

/* Test hook: record the injected failure in err when this rank and phase are
 * the ones kiln.test.fail.rank and kiln.test.fail.phase name. */
void mr_settings_inject(const mr_settings *st, const mr_comm *c, mr_phase phase, kiln_err *err);
/* Test hook: raise SIGKILL (or stop, or MPI_Abort) when this rank reaches
 * point `step` of the phase that kiln.test.kill.* name, after a line on
 * stderr saying so (tests look for it). Inline: map checks every record. */
void mr_settings_kill_now(const mr_settings *st, const mr_comm *c, int phase, int64_t step);

/* Test hook: sleep kiln.test.slow.ms when this rank is kiln.test.slow.rank
 * (map calls it before each input piece: a rank on a slow core). */
void mr_settings_slow_point(const mr_settings *st, const mr_comm *c);

static inline void
mr_settings_kill_point(const mr_settings *st, const mr_comm *c, int phase, int64_t step)
{
    const mr_test_hooks *h = &st->hooks;
    if (h->kill_rank == c->rank && h->kill_phase == phase && step == h->kill_after)
        mr_settings_kill_now(st, c, phase, step);
}

#endif
