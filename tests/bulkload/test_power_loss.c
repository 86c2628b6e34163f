/* test_power_loss.c -- every store operation under simulated power loss
 * (storage/env_power.h): table create, load (replace, append, a load that
 * splits a straddling file, a load that publishes a secondary index with the
 * table, a load --move that hard-links and splits and then removes the job's
 * HFile names), rollback and garbage collection. A reference
 * run counts the operation's changing calls; then, from the same starting
 * state each time, the power is cut before and after every fsync (file or
 * directory) and before other calls (all of them when there are few, else a
 * seeded random sample), the disk is made what a reboot would find, and the
 * store is reopened: CURRENT must name exactly the old or the new version
 * with every cell of it readable, every kept ancestor must be intact, and a
 * following load must succeed and leave no file, manifest or staging
 * directory behind that garbage collection does not account for. After a
 * cut in a move, the job output must still hold every HFile while the old
 * version is current, and loading it again with move must publish the new
 * cells (old) or report it already loaded (new), leaving no HFile in it.
 * KILN_SEED=N replays a run; the number of crash points per operation is
 * printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bulkload/bulkload.h"
#include "storage/hfile/cell.h"
#include "storage/base/env.h"
#include "storage/base/env_power.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/store_index.h"
#include "storage/base/store_rec.h"
#include "storage/store/table.h"
#include "tests/support/job_fixture.h"
#include "tests/support/test_util.h"

#define EVERY_POINT_MAX 400   /* below this many calls, cut at every one */
#define RANDOM_POINTS 120     /* else this many random ones besides the syncs */

static char base[512];
static char data[1024], stash[1024];
static char ja[1024], jb[1024], jc[1024], js[1024], jr[1024], ji[1024], jm[1024];
static uint64_t seed;

typedef enum op_kind {
    OP_CREATE = 0,
    OP_REPLACE,
    OP_APPEND,
    OP_SPLIT,
    OP_INDEX,
    OP_MOVE,
    OP_ROLLBACK,
    OP_GC,
    OP_COUNT
} op_kind;

static const char *const op_names[OP_COUNT] = {"create", "load --replace", "load --append",
                                               "load (split)", "load + index", "load --move",
                                               "rollback", "gc"};

/* The table t: family cf, split at r01000 and r02000. */
/* A job output of rows [lo, hi): one file per region it spans, or (straddle)
 * one file for all of them, which the load must split. */
static void
make_job(const char *job, int lo, int hi, int64_t ts, int straddle)
{
    char p[4096];
    mkdir(job, 0755);
    snprintf(p, sizeof p, "%s/cf", job);
    mkdir(p, 0755);
    if (straddle) {
        snprintf(p, sizeof p, "%s/cf/all", job);
        tjob_write_hfile(p, lo, hi, ts);
    } else {
        static const int bounds[] = {0, 1000, 2000, 1000000};
        for (int r = 0; r < 3; r++) {
            int a = lo > bounds[r] ? lo : bounds[r];
            int b = hi < bounds[r + 1] ? hi : bounds[r + 1];
            if (a >= b)
                continue;
            snprintf(p, sizeof p, "%s/cf/part-%d", job, r);
            tjob_write_hfile(p, a, b, ts);
        }
    }
    snprintf(p, sizeof p, "%s/_SUCCESS", job);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

/* Every file of m present with its size and every cell readable. */
static uint64_t
manifest_digest(const kiln_table *t, const manifest *m)
{
    uint64_t d = 0, cells = 0;
    for (size_t i = 0; i < m->table_count; i++) {
        for (size_t r = 0; r < m->tables[i].region_count; r++) {
            const manifest_region *reg = &m->tables[i].regions[r];
            for (size_t f = 0; f < reg->file_count; f++) {
                char p[4096];
                table_file_path(t, reg->files[f].name, p, sizeof p);
                struct stat sb;
                if (stat(p, &sb) != 0)
                    fail_msg("version %llu: %s: %s", (unsigned long long)m->version, p,
                             strerror(errno));
                if ((uint64_t)sb.st_size != reg->files[f].size)
                    fail_msg("version %llu: %s: size %lld, manifest says %llu",
                             (unsigned long long)m->version, p, (long long)sb.st_size,
                             (unsigned long long)reg->files[f].size);
                d += tjob_file_digest(p, &cells);
            }
        }
    }
    return d ^ cells;
}

typedef struct view_state {
    int exists;          /* the table exists */
    uint64_t version;    /* current version, 0 if none */
    uint64_t digest;
} view_state;

/* Open the store as a reboot finds it and check everything it keeps. */
static view_state
reopen(void)
{
    view_state vs = {0, 0, 0};
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    kiln_status st = table_open(data, "t", &t, &err);
    if (st == KILN_NOT_FOUND)
        return vs;
    tu_must(st, &err);
    vs.exists = 1;
    kiln_schema want;
    tjob_schema_t(&want);
    assert_string_equal(table_schema(t)->name, want.name);
    assert_int_equal(table_schema(t)->split_count, want.split_count);
    assert_int_equal(table_schema(t)->family_count, 1);
    schema_free(&want);
    manifest_pointer ptr;
    st = table_current(t, &ptr, &err);
    if (st == KILN_NOT_FOUND) {   /* nothing published */
        table_close(t);
        return vs;
    }
    tu_must(st, &err);
    manifest m;
    tu_must(table_read_current(t, &m, &err), &err);   /* a missing manifest fails here */
    vs.version = m.version;
    vs.digest = manifest_digest(t, &m);
    /* The kept ancestors (rollback targets) must be whole too. */
    uint64_t parent = m.parent;
    size_t kept = 1;
    manifest_free(&m);
    while (parent != 0 && kept < table_schema(t)->keep_versions) {
        tu_must(table_read_manifest(t, parent, &m, NULL, &err), &err);
        manifest_digest(t, &m);
        parent = m.parent;
        kept++;
        manifest_free(&m);
    }
    table_close(t);
    return vs;
}

static kiln_status
load(const char *job, bulkload_mode mode, kiln_err *err)
{
    bulkload_options o;
    bulkload_options_init(&o);
    o.mode = mode;
    bulkload_result r;
    kiln_status st = bulkload_run(data, "t", job, &o, &r, err);
    bulkload_result_free(&r);
    return st;
}

/* A move: one file of region 0 (hard-linked) and one across regions 0..1
 * (split), both removed from the job output after publishing. */
static kiln_status
load_move(bulkload_result *r, kiln_err *err)
{
    bulkload_options o;
    bulkload_options_init(&o);
    o.move = 1;
    return bulkload_run(data, "t", jm, &o, r, err);
}

#define MOVE_JOB_FILES 2

static void
make_move_job(void)
{
    char p[4096];
    tu_rmrf(jm);
    make_job(jm, 0, 900, 700, 0);   /* cf/part-0 */
    snprintf(p, sizeof p, "%s/cf/straddle", jm);
    tjob_write_hfile(p, 950, 1200, 700);
}

/* HFiles left in the move's job output (and _SUCCESS must be there). */
static int
move_job_files(void)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/_SUCCESS", jm);
    assert_true(env_exists(p));
    int n = 0;
    snprintf(p, sizeof p, "%s/cf/part-0", jm);
    n += env_exists(p);
    snprintf(p, sizeof p, "%s/cf/straddle", jm);
    n += env_exists(p);
    return n;
}

static void
must_load(const char *job, bulkload_mode mode)
{
    kiln_err err;
    status_clear(&err);
    tu_must(load(job, mode, &err), &err);
}

static kiln_status
locked(int rollback, kiln_err *err)
{
    kiln_table *t;
    kiln_status st = table_open(data, "t", &t, err);
    if (st != KILN_OK)
        return st;
    if ((st = table_lock(t, 0, err)) == KILN_OK) {
        uint64_t v;
        st = rollback ? table_rollback(t, 0, &v, err) : table_gc(t, NULL, err);
    }
    table_close(t);
    return st;
}

/* The state each run of op starts from (written with recording off). */
static void
base_state(op_kind op)
{
    env_power_end();   /* a failed check may have left the power off */
    tu_rmrf(data);
    assert_int_equal(mkdir(data, 0755), 0);
    if (op == OP_CREATE)
        return;
    kiln_schema s;
    tjob_schema_t(&s);
    kiln_err err;
    status_clear(&err);
    tu_must(table_create(data, &s, &err), &err);
    schema_free(&s);
    must_load(ja, BULKLOAD_REPLACE);
    must_load(jb, BULKLOAD_REPLACE);
    if (op == OP_MOVE)
        make_move_job();
    if (op != OP_GC)
        return;
    /* Garbage: version 2 rolled away from, a file of a load that never
     * published and a manifest a crash left half-written. */
    tu_must(locked(1, &err), &err);
    char p[4096];
    snprintf(p, sizeof p, "%s/default/t/files/0000000900000000", data);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("never published", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/default/t/manifests/9.tmp", data);
    f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

static kiln_status
run_op(op_kind op, kiln_err *err)
{
    kiln_schema s;
    kiln_status st;
    switch (op) {
    case OP_CREATE:
        tjob_schema_t(&s);
        st = table_create(data, &s, err);
        schema_free(&s);
        return st;
    case OP_REPLACE:  return load(jc, BULKLOAD_REPLACE, err);
    case OP_APPEND:   return load(jc, BULKLOAD_APPEND, err);
    case OP_SPLIT:    return load(js, BULKLOAD_REPLACE, err);
    case OP_INDEX:    return load(ji, BULKLOAD_REPLACE, err);
    case OP_MOVE: {
        bulkload_result r;
        st = load_move(&r, err);
        /* the removals after publishing report apart from the load */
        if (st == KILN_OK && r.move_err.code != KILN_OK)
            st = status_set(err, r.move_err.code, "%s", r.move_err.msg);
        bulkload_result_free(&r);
        return st;
    }
    case OP_ROLLBACK: return locked(1, err);
    case OP_GC:       return locked(0, err);
    case OP_COUNT:    break;
    }
    return KILN_INTERNAL;
}

static int
has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

/* After a successful load: every manifest on disk is a kept version, every
 * file is named by one, no temporary or staging entry is left. */
static void
check_no_orphans(void)
{
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    tu_must(table_open(data, "t", &t, &err), &err);
    manifest m;
    tu_must(table_read_current(t, &m, &err), &err);
    uint64_t chain[SCHEMA_KEEP_MAX];
    size_t nchain = 0;
    char (*names)[MANIFEST_FILE_NAME_MAX + 1] = NULL;
    size_t nnames = 0, cap = 0;
    for (;;) {
        chain[nchain++] = m.version;
        for (size_t i = 0; i < m.table_count; i++) {
            for (size_t r = 0; r < m.tables[i].region_count; r++) {
                const manifest_region *reg = &m.tables[i].regions[r];
                for (size_t f = 0; f < reg->file_count; f++) {
                    if (nnames == cap) {
                        cap = cap ? cap * 2 : 64;
                        names = realloc(names, cap * sizeof *names);
                    }
                    snprintf(names[nnames++], sizeof names[0], "%s", reg->files[f].name);
                }
            }
        }
        uint64_t parent = m.parent;
        manifest_free(&m);
        if (parent == 0 || nchain >= table_schema(t)->keep_versions ||
            table_read_manifest(t, parent, &m, NULL, &err) != KILN_OK)
            break;
    }
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", table_dir(t), TABLE_MANIFEST_DIR);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        int kept = 0;
        for (size_t i = 0; i < nchain; i++)
            kept |= strtoull(e->d_name, NULL, 10) == chain[i] && !has_suffix(e->d_name, "tmp");
        if (!kept)
            fail_msg("orphaned manifest %s/%s", dir, e->d_name);
    }
    closedir(d);
    snprintf(dir, sizeof dir, "%s/%s", table_dir(t), TABLE_FILES_DIR);
    d = opendir(dir);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || strcmp(e->d_name, "..") == 0))
            continue;
        int known = 0;
        for (size_t i = 0; i < nnames; i++)
            known |= strcmp(names[i], e->d_name) == 0;
        if (!known)
            fail_msg("orphaned file %s/%s", dir, e->d_name);
    }
    closedir(d);
    snprintf(dir, sizeof dir, "%s", table_dir(t));
    d = opendir(dir);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        if (has_suffix(e->d_name, ".tmp"))
            fail_msg("left over: %s/%s", dir, e->d_name);
    }
    closedir(d);
    free(names);
    table_close(t);
    snprintf(dir, sizeof dir, "%s/default", data);
    d = opendir(dir);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, ".creating-", 10) == 0)
            fail_msg("staging directory left over: %s/%s", dir, e->d_name);
    }
    closedir(d);
}

/* What a reboot after the power cut finds, then the next load. */
static void
check_after_cut(op_kind op, long k, const view_state *before, const view_state *after)
{
    view_state now = reopen();
    if (op == OP_CREATE) {
        assert_int_equal(now.version, 0);   /* absent, or present and empty */
    } else if (now.version == before->version) {
        if (now.digest != before->digest)
            fail_msg("%s, cut at call %ld: version %llu has other cells than before",
                     op_names[op], k, (unsigned long long)now.version);
    } else if (now.version == after->version) {
        if (now.digest != after->digest)
            fail_msg("%s, cut at call %ld: version %llu has other cells than the new one",
                     op_names[op], k, (unsigned long long)now.version);
    } else {
        fail_msg("%s, cut at call %ld: version %llu is current; expected %llu or %llu",
                 op_names[op], k, (unsigned long long)now.version,
                 (unsigned long long)before->version, (unsigned long long)after->version);
    }
    kiln_err err;
    status_clear(&err);
    if (op == OP_MOVE) {
        /* Before the publish the job output is whole; loading it again with
         * move gives the new cells, or finds them loaded; either way the
         * move then completes. */
        int left = move_job_files();
        if (now.version == before->version && left != MOVE_JOB_FILES)
            fail_msg("%s, cut at call %ld: old version %llu current, but %d of the job's %d "
                     "HFiles are left", op_names[op], k, (unsigned long long)now.version, left,
                     MOVE_JOB_FILES);
        bulkload_result r;
        tu_must(load_move(&r, &err), &err);
        if (r.already_loaded != (now.version == after->version))
            fail_msg("%s, cut at call %ld: version %llu current, the next move says %s",
                     op_names[op], k, (unsigned long long)now.version,
                     r.already_loaded ? "already loaded" : "not loaded");
        if (r.move_err.code != KILN_OK)
            fail_msg("%s, cut at call %ld: the next move: %s", op_names[op], k,
                     r.move_err.msg);
        bulkload_result_free(&r);
        assert_int_equal(move_job_files(), 0);
        view_state again = reopen();
        if (again.digest != after->digest)
            fail_msg("%s, cut at call %ld: after moving again, version %llu has other cells "
                     "than the new one", op_names[op], k, (unsigned long long)again.version);
    }
    if (op == OP_CREATE && !now.exists) {
        kiln_schema s;
        tjob_schema_t(&s);
        tu_must(table_create(data, &s, &err), &err);
        schema_free(&s);
    }
    must_load(jr, BULKLOAD_REPLACE);
    check_no_orphans();
}

static void
power_loss(op_kind op)
{
    kiln_err err;
    status_clear(&err);
    base_state(op);
    view_state before = reopen();
    env_power_begin(stash);
    tu_must(run_op(op, &err), &err);
    long n = env_power_calls();
    unsigned char *kinds = malloc((size_t)n + 2);
    for (long i = 1; i <= n; i++)
        kinds[i] = (unsigned char)env_power_kind_of(i);
    env_power_end();
    view_state after = reopen();
    assert_true(op == OP_GC || after.version != before.version || op == OP_CREATE);

    /* points[k]: cut just before call k (k = n + 1: after the operation). */
    unsigned char *points = calloc((size_t)n + 2, 1);
    long syncs = 0;
    for (long i = 1; i <= n; i++) {
        if (kinds[i] == ENV_POWER_SYNC || kinds[i] == ENV_POWER_SYNC_DIR) {
            syncs++;
            points[i] = points[i + 1] = 1;
        }
    }
    points[n + 1] = 1;
    uint64_t rs = seed ^ ((uint64_t)op * 0x9e3779b97f4a7c15ULL);
    if (n <= EVERY_POINT_MAX) {
        memset(points + 1, 1, (size_t)n);
    } else {
        for (int i = 0; i < RANDOM_POINTS; i++)
            points[1 + (long)(tu_splitmix64(&rs) % (uint64_t)n)] = 1;
    }
    long covered = 0, saw_old = 0, saw_new = 0;
    /* Each point twice: the strict model, then the loose one (some unsynced
     * directory changes and a prefix of unsynced bytes survive). */
    for (long kk = 2; kk <= 2 * (n + 1) + 1; kk++) {
        long k = kk / 2;
        int loose = kk % 2;
        if (!points[k])
            continue;
        base_state(op);
        env_power_begin(stash);
        env_power_cut_at(k);
        kiln_err e2;
        status_clear(&e2);
        run_op(op, &e2);   /* fails, unless only its garbage collection did */
        if (k <= n && !env_power_is_cut())
            fail_msg("%s: the power was to go off at call %ld of %ld but stayed on",
                     op_names[op], k, n);
        if (loose)
            env_power_survive_some(tu_splitmix64(&rs) | 1);
        tu_must(env_power_restore(&err), &err);
        view_state now = reopen();
        char gone[1200];
        snprintf(gone, sizeof gone, "%s/default/t/manifests/2", data);
        if (op == OP_CREATE)
            now.exists ? saw_new++ : saw_old++;
        else if (op == OP_GC)
            env_exists(gone) ? saw_old++ : saw_new++;   /* the rolled-away version */
        else
            now.version == before.version ? saw_old++ : saw_new++;
        check_after_cut(op, k, &before, &after);
        covered++;
    }
    printf("  %-15s %4ld changing calls, %3ld fsyncs; %4ld cuts, strict and loose (%s); "
           "reopened old %ld, new %ld\n",
           op_names[op], n, syncs, covered, n <= EVERY_POINT_MAX ? "every call" : "syncs+random",
           saw_old, saw_new);
    /* Both outcomes must occur, or the cut points miss the commit. */
    assert_true(saw_new > 0);
    assert_true(saw_old > 0);
    free(points);
    free(kinds);
}

static void
power_create(void **state)
{
    (void)state;
    power_loss(OP_CREATE);
}

static void
power_replace(void **state)
{
    (void)state;
    power_loss(OP_REPLACE);
}

static void
power_append(void **state)
{
    (void)state;
    power_loss(OP_APPEND);
}

static void
power_split(void **state)
{
    (void)state;
    power_loss(OP_SPLIT);
}

static void
power_index(void **state)
{
    (void)state;
    power_loss(OP_INDEX);
}

static void
power_move(void **state)
{
    (void)state;
    power_loss(OP_MOVE);
}

static void
power_rollback(void **state)
{
    (void)state;
    power_loss(OP_ROLLBACK);
}

static void
power_gc(void **state)
{
    (void)state;
    power_loss(OP_GC);
}

/* The recorder itself: unsynced data and directory entries are lost, synced
 * ones survive, a rename over a file is undone until its directory is
 * synced. */
static void
power_model(void **state)
{
    (void)state;
    char dir[1024], a[1100], b[1100];
    snprintf(dir, sizeof dir, "%s/model", base);
    tu_rmrf(dir);
    mkdir(dir, 0755);
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    kiln_err err;
    status_clear(&err);
    tu_must(env_write_file_atomic(b, "old", 3, &err), &err);

    /* written, synced, but the entry never made durable: gone */
    env_power_begin(stash);
    env_file *f;
    tu_must(env_create(a, 0, &f, &err), &err);
    tu_must(env_append(f, "12345", 5, &err), &err);
    tu_must(env_sync(f, &err), &err);
    tu_must(env_close(f, &err), &err);
    tu_must(env_power_restore(&err), &err);
    assert_false(env_exists(a));

    /* entry durable, half the data synced: cut to the synced length */
    env_power_begin(stash);
    tu_must(env_create(a, 0, &f, &err), &err);
    tu_must(env_append(f, "12345", 5, &err), &err);
    tu_must(env_sync(f, &err), &err);
    tu_must(env_append(f, "678", 3, &err), &err);
    tu_must(env_flush(f, &err), &err);
    tu_must(env_sync_dir(dir, &err), &err);
    tu_must(env_close(f, &err), &err);
    tu_must(env_power_restore(&err), &err);
    struct stat sb;
    assert_int_equal(stat(a, &sb), 0);
    assert_int_equal(sb.st_size, 5);

    /* the loose model: over many draws, an unsynced new entry sometimes
     * survives, and a file keeps every length from its synced 5 bytes to all
     * 8 it was given (torn), never less than what was synced */
    int lengths[9] = {0}, entry_kept = 0;
    char c[1100];
    snprintf(c, sizeof c, "%s/c", dir);
    for (uint64_t sd = 1; sd <= 64; sd++) {
        tu_rmrf(a);
        unlink(c);
        tu_must(env_sync_dir(dir, &err), &err);
        env_power_begin(stash);
        tu_must(env_create(a, 0, &f, &err), &err);
        tu_must(env_append(f, "12345", 5, &err), &err);
        tu_must(env_sync(f, &err), &err);
        tu_must(env_sync_dir(dir, &err), &err);
        tu_must(env_append(f, "678", 3, &err), &err);
        tu_must(env_close(f, &err), &err);
        tu_must(env_create(c, 0, &f, &err), &err);
        tu_must(env_close(f, &err), &err);
        env_power_survive_some(sd * 0x9e3779b97f4a7c15ULL);
        tu_must(env_power_restore(&err), &err);
        assert_int_equal(stat(a, &sb), 0);
        assert_true(sb.st_size >= 5 && sb.st_size <= 8);
        lengths[sb.st_size]++;
        entry_kept += env_exists(c);
    }
    for (int len = 5; len <= 8; len++)
        assert_true(lengths[len] > 0);
    assert_true(entry_kept > 0 && entry_kept < 64);
    unlink(c);

    /* rename over b and unlink a without a directory fsync: both undone */
    env_power_begin(stash);
    char t[1200];
    snprintf(t, sizeof t, "%s.tmp", b);
    tu_must(env_create(t, 0, &f, &err), &err);
    tu_must(env_append(f, "new", 3, &err), &err);
    tu_must(env_sync(f, &err), &err);
    tu_must(env_close(f, &err), &err);
    tu_must(env_rename(t, b, &err), &err);
    tu_must(env_unlink(a, &err), &err);
    tu_must(env_power_restore(&err), &err);
    kbuf got = KBUF_INIT;
    tu_must(env_read_file(b, &got, &err), &err);
    assert_int_equal(got.len, 3);
    assert_memory_equal(got.data, "old", 3);
    buf_free(&got);
    assert_true(env_exists(a));
    assert_false(env_exists(t));

    /* the same, made durable: kept */
    env_power_begin(stash);
    tu_must(env_write_file_atomic(b, "new", 3, &err), &err);
    tu_must(env_power_restore(&err), &err);
    tu_must(env_read_file(b, &got, &err), &err);
    assert_memory_equal(got.data, "new", 3);
    buf_free(&got);

    /* a directory renamed durably carries a child whose entry was never
     * synced: the directory survives under its new name, the child not */
    char d1[1200], d2[1200], x[1300];
    snprintf(d1, sizeof d1, "%s/d1", dir);
    snprintf(d2, sizeof d2, "%s/d2", dir);
    snprintf(x, sizeof x, "%s/x", d1);
    env_power_begin(stash);
    tu_must(env_mkdir(d1, 0755, &err), &err);
    tu_must(env_create(x, 0, &f, &err), &err);
    tu_must(env_sync(f, &err), &err);
    tu_must(env_close(f, &err), &err);
    tu_must(env_rename_noreplace(d1, d2, &err), &err);
    tu_must(env_sync_dir(dir, &err), &err);
    tu_must(env_power_restore(&err), &err);
    assert_true(env_exists(d2));
    assert_false(env_exists(d1));
    snprintf(x, sizeof x, "%s/x", d2);
    assert_false(env_exists(x));

    /* after the cut nothing reaches the disk */
    env_power_begin(stash);
    env_power_cut_at(1);
    assert_int_not_equal(env_unlink(a, NULL), KILN_OK);
    assert_true(env_power_is_cut());
    assert_int_not_equal(env_mkdir(t, 0755, NULL), KILN_OK);
    tu_must(env_power_restore(&err), &err);
    assert_true(env_exists(a));
    assert_false(env_exists(t));
    tu_rmrf(dir);
}

static int
setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/kiln-pl-XXXXXX", t ? t : "/tmp");
    assert_non_null(mkdtemp(base));
    snprintf(data, sizeof data, "%s/data", base);
    snprintf(stash, sizeof stash, "%s/stash", base);
    mkdir(stash, 0755);
    snprintf(ja, sizeof ja, "%s/ja", base);
    snprintf(jb, sizeof jb, "%s/jb", base);
    snprintf(jc, sizeof jc, "%s/jc", base);
    snprintf(js, sizeof js, "%s/js", base);
    snprintf(jr, sizeof jr, "%s/jr", base);
    snprintf(ji, sizeof ji, "%s/ji", base);
    snprintf(jm, sizeof jm, "%s/jm", base);
    make_job(ja, 0, 2500, 100, 0);
    make_job(jb, 500, 2900, 200, 0);
    make_job(jc, 100, 1900, 300, 0);
    make_job(js, 800, 2200, 400, 1);
    make_job(jr, 3000, 3100, 500, 0);
    make_job(ji, 200, 2600, 600, 0);
    tjob_write_index(ji, 200, 2600, 600);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    tu_rmrf(base);
    return 0;
}

int
main(void)
{
    const char *s = getenv("KILN_SEED");
    seed = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
    printf("test_power_loss: seed %llu (KILN_SEED=%llu to replay)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(power_model),
        cmocka_unit_test(power_create),
        cmocka_unit_test(power_replace),
        cmocka_unit_test(power_append),
        cmocka_unit_test(power_split),
        cmocka_unit_test(power_index),
        cmocka_unit_test(power_move),
        cmocka_unit_test(power_rollback),
        cmocka_unit_test(power_gc),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
