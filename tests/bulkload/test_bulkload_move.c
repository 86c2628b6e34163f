/* test_bulkload_move.c -- bulkload_run with options.move (`kiln load
 * --move`): unsplit files hard-linked into the store (the store's file is
 * the job file's inode) and the job's HFile names removed after publishing,
 * with the same cells as a copying load of the same output; a straddling
 * file split and its source removed; a move cut short after publishing
 * (both names present, or the _MOVED record written and some names removed)
 * reported as already loaded and finished by the next move; _MOVED naming
 * another table or a version rolled away refused; dry runs and failed
 * --verify that change nothing; a link refused with EXDEV (fault injection
 * and a real second file system) copied, then removed; any other link error
 * failing the load with the output intact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bulkload/bulkload.h"
#include "storage/base/env.h"
#include "storage/base/store_rec.h"
#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/manifest.h"
#include "storage/store/table.h"
#include "tests/support/job_fixture.h"
#include "tests/support/test_util.h"

static char base[512];

/* The job's HFiles, relative to the job directory. part-0 and part-1 sit in
 * one region each (moved), a/straddle spans regions 0..1 (split), a/empty
 * has no cells (skipped). */
#define NJOBFILES 4
static const char *const job_files[NJOBFILES] = {"a/empty", "a/straddle", "cf/part-0",
                                                 "cf/part-1"};

static void
put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int
exists(const char *dir, const char *rel)
{
    char p[4096];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return stat(p, &sb) == 0;
}

static ino_t
ino_of(const char *dir, const char *rel, nlink_t *nlink)
{
    char p[4096];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    if (stat(p, &sb) != 0)
        fail_msg("%s: %s", p, strerror(errno));
    if (nlink != NULL)
        *nlink = sb.st_nlink;
    return sb.st_ino;
}

/* Table name: families cf and a, split at row01000 and row02000. */
static void
make_table(const char *data, const char *name)
{
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "%s", name);
    kiln_err err;
    status_clear(&err);
    schema_family f;
    tu_must(schema_family_parse("cf", &f, &err), &err);
    tu_must(schema_add_family(&s, &f, &err), &err);
    tu_must(schema_family_parse("a:compression=gz", &f, &err), &err);
    tu_must(schema_add_family(&s, &f, &err), &err);
    tu_must(schema_add_split(&s, (const uint8_t *)"row01000", 8, &err), &err);
    tu_must(schema_add_split(&s, (const uint8_t *)"row02000", 8, &err), &err);
    tu_must(table_create(data, &s, &err), &err);
    schema_free(&s);
}

/* A job output: the files of job_files[], _SUCCESS and a job report. */
static void
make_job(const char *job, int64_t ts)
{
    char p[4096];
    tu_rmrf(job);
    assert_int_equal(mkdir(job, 0755), 0);
    snprintf(p, sizeof p, "%s/cf", job);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/a", job);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/a/empty", job);
    tjob_write_rows(p, "a", 0, 0, 1, 1, ts);
    snprintf(p, sizeof p, "%s/a/straddle", job);
    tjob_write_rows(p, "a", 900, 1100, 1, 1, ts);
    snprintf(p, sizeof p, "%s/cf/part-0", job);
    tjob_write_rows(p, "cf", 0, 1000, 1, 1, ts);
    snprintf(p, sizeof p, "%s/cf/part-1", job);
    tjob_write_rows(p, "cf", 1000, 1500, 1, 1, ts);
    snprintf(p, sizeof p, "%s/_SUCCESS", job);
    put_file(p, "");
    snprintf(p, sizeof p, "%s/_job.json", job);
    put_file(p, "{\"job\": \"test\"}\n");
}

static void
copy_file(const char *from, const char *to)
{
    kbuf b = KBUF_INIT;
    kiln_err err;
    status_clear(&err);
    tu_must(env_read_file(from, &b, &err), &err);
    FILE *f = fopen(to, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b.data, 1, b.len, f), b.len);
    fclose(f);
    buf_free(&b);
}

/* Order-independent digest of the cells of every file of table name's
 * current version, read straight from the store's files; *files gets the
 * store paths' inodes (up to cap) and *n their count. */
static uint64_t
table_digest(const char *data, const char *name, uint64_t *cells, ino_t *inos, size_t cap,
             size_t *n)
{
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    tu_must(table_open(data, name, &t, &err), &err);
    manifest m;
    tu_must(table_read_current(t, &m, &err), &err);
    uint64_t d = 0;
    *cells = 0;
    *n = 0;
    for (size_t r = 0; r < m.tables[0].region_count; r++) {
        const manifest_region *reg = &m.tables[0].regions[r];
        for (size_t f = 0; f < reg->file_count; f++) {
            char p[4096];
            table_file_path(t, reg->files[f].name, p, sizeof p);
            struct stat sb;
            assert_int_equal(stat(p, &sb), 0);
            if (*n < cap)
                inos[(*n)++] = sb.st_ino;
            hfile_reader *rd;
            tu_must(hfile_reader_open(p, NULL, &rd, &err), &err);
            hfile_iter *it = hfile_iter_new(rd);
            tu_must(hfile_iter_seek_first(it, &err), &err);
            while (hfile_iter_valid(it)) {
                const kiln_cell *c = hfile_iter_cell(it);
                uint64_t h = store_rec_fnv64(STORE_REC_FNV64_INIT, c->row, c->row_len);
                h = store_rec_fnv64(h, c->family, c->family_len);
                h = store_rec_fnv64(h, c->qualifier, c->qualifier_len);
                h = store_rec_fnv64(h, c->value, c->value_len);
                h = store_rec_fnv64(h, &c->ts, sizeof c->ts);
                d += h * 0x9e3779b97f4a7c15ULL + 1;
                (*cells)++;
                tu_must(hfile_iter_next(it, &err), &err);
            }
            hfile_iter_free(it);
            hfile_reader_close(rd);
        }
    }
    manifest_free(&m);
    table_close(t);
    return d;
}

static uint64_t
current_version(const char *data, const char *name)
{
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    tu_must(table_open(data, name, &t, &err), &err);
    manifest_pointer ptr;
    kiln_status st = table_current(t, &ptr, &err);
    table_close(t);
    if (st == KILN_NOT_FOUND)
        return 0;
    tu_must(st, &err);
    return ptr.version;
}

static size_t
store_file_count(const char *data, const char *name)
{
    char p[2048];
    snprintf(p, sizeof p, "%s/default/%s/files", data, name);
    char **names;
    size_t n;
    kiln_err err;
    status_clear(&err);
    tu_must(env_list_dir(p, &names, &n, &err), &err);
    env_list_free(names, n);
    return n;
}

static kiln_status
load(const char *data, const char *name, const char *job, int move, bulkload_result *r,
     kiln_err *err)
{
    bulkload_options o;
    bulkload_options_init(&o);
    o.move = move;
    status_clear(err);
    return bulkload_run(data, name, job, &o, r, err);
}

static int
setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/kiln-mv-XXXXXX", t ? t : "/tmp");
    assert_non_null(mkdtemp(base));
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    tu_rmrf(base);
    return 0;
}

/* A move and a copy of the same output: same cells; the moved files are the
 * job's inodes, now named only by the store; the output keeps _SUCCESS and
 * _job.json. */
static void
move_load(void **state)
{
    (void)state;
    char data[1024], jm[1024], jc[1024];
    snprintf(data, sizeof data, "%s/d1", base);
    snprintf(jm, sizeof jm, "%s/jm", base);
    snprintf(jc, sizeof jc, "%s/jc", base);
    make_table(data, "moved");
    make_table(data, "copied");
    make_job(jm, 100);
    make_job(jc, 100);
    ino_t before[2];
    before[0] = ino_of(jm, "cf/part-0", NULL);
    before[1] = ino_of(jm, "cf/part-1", NULL);

    bulkload_result r;
    kiln_err err;
    tu_must(load(data, "copied", jc, 0, &r, &err), &err);
    assert_int_equal(r.moved, 0);
    assert_int_equal(r.sources_removed, 0);
    bulkload_result_free(&r);

    tu_must(load(data, "moved", jm, 1, &r, &err), &err);
    assert_int_equal(r.version, 1);
    assert_int_equal(r.file_count, NJOBFILES);
    assert_int_equal(r.moved, 2);
    assert_int_equal(r.move_fallbacks, 0);
    assert_int_equal(r.linked + r.copied, 0);
    assert_int_equal(r.split, 1);
    assert_int_equal(r.pieces, 2);
    assert_int_equal(r.skipped, 1);
    assert_int_equal(r.sources_removed, NJOBFILES);
    assert_int_equal(r.moved_in, 1);
    assert_int_equal(r.move_err.code, KILN_OK);
    assert_int_equal(r.files[2].action, BULKLOAD_MOVE);
    assert_string_equal(bulkload_action_name(BULKLOAD_MOVE), "move");
    bulkload_result_free(&r);

    for (size_t i = 0; i < NJOBFILES; i++)
        if (exists(jm, job_files[i]))
            fail_msg("%s/%s: still in the job output after the move", jm, job_files[i]);
    assert_true(exists(jm, "_SUCCESS"));
    assert_true(exists(jm, "_job.json"));
    assert_true(exists(jm, BULKLOAD_MOVED_FILE));

    uint64_t cm, cc;
    ino_t inos[16];
    size_t n;
    uint64_t dc = table_digest(data, "copied", &cc, inos, 16, &n);
    uint64_t dm = table_digest(data, "moved", &cm, inos, 16, &n);
    assert_int_equal(cm, 1700);
    assert_int_equal(cc, cm);
    assert_true(dm == dc);
    /* regions 0 and 1 of cf: the job's own inodes, linked once now */
    int found[2] = {0, 0};
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++)
            found[k] |= inos[i] == before[k];
    assert_true(found[0] && found[1]);
    char files[2048];
    snprintf(files, sizeof files, "%s/default/moved/files", data);
    char **names;
    size_t nn;
    tu_must(env_list_dir(files, &names, &nn, &err), &err);
    for (size_t i = 0; i < nn; i++) {
        nlink_t nl;
        ino_of(files, names[i], &nl);
        assert_int_equal(nl, 1);
    }
    env_list_free(names, nn);
}

/* A crash after publish, before _MOVED: both names of every moved file.
 * A plain load reports it loaded and leaves it; a move finishes it. */
static void
move_finish_both_names(void **state)
{
    (void)state;
    char data[1024], jm[1024], saved[1024], p[4096], q[4096];
    snprintf(data, sizeof data, "%s/d2", base);
    snprintf(jm, sizeof jm, "%s/j2", base);
    snprintf(saved, sizeof saved, "%s/j2-saved", base);
    make_table(data, "t");
    make_job(jm, 200);
    make_job(saved, 200);
    for (size_t i = 0; i < NJOBFILES; i++) {   /* the same bytes in both */
        snprintf(p, sizeof p, "%s/%s", jm, job_files[i]);
        snprintf(q, sizeof q, "%s/%s", saved, job_files[i]);
        copy_file(p, q);
    }
    ino_t ino0 = ino_of(jm, "cf/part-0", NULL), ino1 = ino_of(jm, "cf/part-1", NULL);
    bulkload_result r;
    kiln_err err;
    tu_must(load(data, "t", jm, 1, &r, &err), &err);
    assert_int_equal(r.moved, 2);
    bulkload_result_free(&r);
    uint64_t cells;
    ino_t inos[16];
    size_t n;
    uint64_t d1 = table_digest(data, "t", &cells, inos, 16, &n);

    /* Put the state back as it was between publish and _MOVED: the moved
     * files' job names linked to the store's inodes again, the others as
     * they were. */
    snprintf(p, sizeof p, "%s/%s", jm, BULKLOAD_MOVED_FILE);
    assert_int_equal(unlink(p), 0);
    char files[2048];
    snprintf(files, sizeof files, "%s/default/t/files", data);
    char **names;
    size_t nn;
    tu_must(env_list_dir(files, &names, &nn, &err), &err);
    int relinked = 0;
    for (size_t i = 0; i < nn; i++) {
        ino_t ino = ino_of(files, names[i], NULL);
        const char *to = ino == ino0 ? "cf/part-0" : ino == ino1 ? "cf/part-1" : NULL;
        if (to == NULL)
            continue;
        snprintf(p, sizeof p, "%s/%s", files, names[i]);
        snprintf(q, sizeof q, "%s/%s", jm, to);
        assert_int_equal(link(p, q), 0);
        relinked++;
    }
    env_list_free(names, nn);
    assert_int_equal(relinked, 2);
    snprintf(p, sizeof p, "%s/a/straddle", saved);
    snprintf(q, sizeof q, "%s/a/straddle", jm);
    copy_file(p, q);
    snprintf(p, sizeof p, "%s/a/empty", saved);
    snprintf(q, sizeof q, "%s/a/empty", jm);
    copy_file(p, q);

    tu_must(load(data, "t", jm, 0, &r, &err), &err);
    assert_true(r.already_loaded);
    assert_int_equal(r.loaded_in, 1);
    assert_int_equal(r.sources_removed, 0);
    bulkload_result_free(&r);
    for (size_t i = 0; i < NJOBFILES; i++)
        assert_true(exists(jm, job_files[i]));

    tu_must(load(data, "t", jm, 1, &r, &err), &err);
    assert_true(r.already_loaded);
    assert_int_equal(r.loaded_in, 1);
    assert_int_equal(r.version, 0);
    assert_int_equal(r.sources_removed, NJOBFILES);
    assert_int_equal(r.moved_in, 1);
    bulkload_result_free(&r);
    for (size_t i = 0; i < NJOBFILES; i++)
        assert_false(exists(jm, job_files[i]));
    assert_true(exists(jm, BULKLOAD_MOVED_FILE));
    assert_int_equal(current_version(data, "t"), 1);
    assert_true(table_digest(data, "t", &cells, inos, 16, &n) == d1);
    nlink_t nl;
    ino_of(files, "0000000100000000", &nl);
    assert_int_equal(nl, 1);
}

/* Fail the unlink after the first source is removed. */
static void
fail_second_removal(void *arg, const char *step)
{
    (void)arg;
    if (strcmp(step, "source removed 0") == 0)
        env_fault_arm(ENV_OP_UNLINK, 1, EIO);
}

/* _MOVED written and some names removed: the load succeeded with a warning
 * (move_err); the output is known by _MOVED, reported already loaded by any
 * load, and a move removes the rest; once all are gone, loading again still
 * says already loaded. */
static void
move_finish_partial(void **state)
{
    (void)state;
    char data[1024], jm[1024];
    snprintf(data, sizeof data, "%s/d3", base);
    snprintf(jm, sizeof jm, "%s/j3", base);
    make_table(data, "t");
    make_job(jm, 300);
    bulkload_options o;
    bulkload_options_init(&o);
    o.move = 1;
    o.step = fail_second_removal;
    bulkload_result r;
    kiln_err err;
    status_clear(&err);
    env_fault_clear();
    tu_must(bulkload_run(data, "t", jm, &o, &r, &err), &err);
    env_fault_clear();
    assert_int_equal(r.version, 1);
    assert_int_equal(r.move_err.code, KILN_IO);
    assert_non_null(strstr(r.move_err.msg, "a/straddle"));
    assert_int_equal(r.sources_removed, 1);
    bulkload_result_free(&r);
    assert_true(exists(jm, BULKLOAD_MOVED_FILE));
    assert_false(exists(jm, job_files[0]));
    for (size_t i = 1; i < NJOBFILES; i++)
        assert_true(exists(jm, job_files[i]));

    /* What is left has another fingerprint; _MOVED still identifies it. */
    tu_must(load(data, "t", jm, 0, &r, &err), &err);
    assert_true(r.already_loaded);
    assert_int_equal(r.moved_in, 1);
    assert_int_equal(r.sources_removed, 0);
    bulkload_result_free(&r);
    tu_must(load(data, "t", jm, 1, &r, &err), &err);
    assert_true(r.already_loaded);
    assert_int_equal(r.sources_removed, NJOBFILES - 1);
    bulkload_result_free(&r);
    for (size_t i = 0; i < NJOBFILES; i++)
        assert_false(exists(jm, job_files[i]));
    tu_must(load(data, "t", jm, 1, &r, &err), &err);
    assert_true(r.already_loaded);
    assert_int_equal(r.file_count, 0);
    assert_int_equal(r.sources_removed, 0);
    bulkload_result_free(&r);
    assert_int_equal(current_version(data, "t"), 1);
}

/* _MOVED naming another table, a version no longer current, or not a
 * record at all: refused, nothing changed. */
static void
move_record_refusals(void **state)
{
    (void)state;
    char data[1024], jm[1024], j0[1024], p[4096];
    snprintf(data, sizeof data, "%s/d4", base);
    snprintf(jm, sizeof jm, "%s/j4", base);
    snprintf(j0, sizeof j0, "%s/j4-first", base);
    make_table(data, "t");
    make_table(data, "other");
    make_job(j0, 400);
    make_job(jm, 401);
    bulkload_result r;
    kiln_err err;
    tu_must(load(data, "t", j0, 0, &r, &err), &err);
    bulkload_result_free(&r);
    tu_must(load(data, "t", jm, 1, &r, &err), &err);
    assert_int_equal(r.version, 2);
    bulkload_result_free(&r);

    assert_int_equal(load(data, "other", jm, 1, &r, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "moved into table default:t (version 2)"));
    bulkload_result_free(&r);
    assert_int_equal(current_version(data, "other"), 0);

    kiln_table *t;
    status_clear(&err);
    tu_must(table_open(data, "t", &t, &err), &err);
    tu_must(table_lock(t, 0, &err), &err);
    uint64_t v;
    tu_must(table_rollback(t, 1, &v, &err), &err);
    table_close(t);
    assert_int_equal(load(data, "t", jm, 1, &r, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "not part of the current version 1"));
    bulkload_result_free(&r);
    assert_int_equal(current_version(data, "t"), 1);

    snprintf(p, sizeof p, "%s/%s", jm, BULKLOAD_MOVED_FILE);
    put_file(p, "kiln-moved 1\ntable default:t\nversion x\n");
    assert_int_equal(load(data, "t", jm, 1, &r, &err), KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, "_MOVED: line 3"));
    bulkload_result_free(&r);
}

/* --dry-run --move and a --verify that fails: nothing changes. */
static void
move_dry_run_and_verify(void **state)
{
    (void)state;
    char data[1024], jm[1024], p[4096];
    snprintf(data, sizeof data, "%s/d5", base);
    snprintf(jm, sizeof jm, "%s/j5", base);
    make_table(data, "t");
    make_job(jm, 500);
    bulkload_options o;
    bulkload_options_init(&o);
    o.move = 1;
    o.dry_run = 1;
    bulkload_result r;
    kiln_err err;
    status_clear(&err);
    tu_must(bulkload_run(data, "t", jm, &o, &r, &err), &err);
    assert_int_equal(r.version, 0);
    assert_int_equal(r.files[2].action, BULKLOAD_MOVE);    /* cf/part-0 */
    assert_int_equal(r.files[1].action, BULKLOAD_SPLIT);   /* a/straddle */
    assert_int_equal(r.sources_removed, 0);
    bulkload_result_free(&r);
    for (size_t i = 0; i < NJOBFILES; i++) {
        nlink_t nl;
        ino_of(jm, job_files[i], &nl);
        assert_int_equal(nl, 1);
    }
    assert_false(exists(jm, BULKLOAD_MOVED_FILE));
    assert_int_equal(current_version(data, "t"), 0);
    assert_int_equal(store_file_count(data, "t"), 0);

    /* A flipped byte inside the first data block of cf/part-1: --verify
     * finds it before anything is linked. */
    snprintf(p, sizeof p, "%s/cf/part-1", jm);
    FILE *f = fopen(p, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, 100, SEEK_SET), 0);
    int ch = fgetc(f);
    assert_int_equal(fseek(f, 100, SEEK_SET), 0);
    fputc(ch ^ 0x5a, f);
    fclose(f);
    o.dry_run = 0;
    o.verify = 1;
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "t", jm, &o, &r, &err), KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, "cf/part-1"));
    bulkload_result_free(&r);
    for (size_t i = 0; i < NJOBFILES; i++) {
        nlink_t nl;
        ino_of(jm, job_files[i], &nl);
        assert_int_equal(nl, 1);
    }
    assert_int_equal(current_version(data, "t"), 0);
    assert_int_equal(store_file_count(data, "t"), 0);
}

/* link(2) refused with EXDEV (injected): that file is copied, then its job
 * name removed like the others. Any other link error fails the load and
 * leaves the output and the store as they were. */
static void
move_link_fallback_injected(void **state)
{
    (void)state;
    char data[1024], jm[1024];
    snprintf(data, sizeof data, "%s/d6", base);
    snprintf(jm, sizeof jm, "%s/j6", base);
    make_table(data, "t");
    make_job(jm, 600);
    ino_t ino0 = ino_of(jm, "cf/part-0", NULL), ino1 = ino_of(jm, "cf/part-1", NULL);

    bulkload_result r;
    kiln_err err;
    env_fault_clear();
    env_fault_arm(ENV_OP_LINK, 1, EIO);
    assert_int_equal(load(data, "t", jm, 1, &r, &err), KILN_IO);
    env_fault_clear();
    assert_non_null(strstr(err.msg, "cf/part-0"));
    bulkload_result_free(&r);
    for (size_t i = 0; i < NJOBFILES; i++)
        assert_true(exists(jm, job_files[i]));
    assert_int_equal(current_version(data, "t"), 0);
    assert_int_equal(store_file_count(data, "t"), 0);

    env_fault_arm(ENV_OP_LINK, 1, EXDEV);
    kiln_status st = load(data, "t", jm, 1, &r, &err);
    env_fault_clear();
    tu_must(st, &err);
    assert_int_equal(r.moved, 1);
    assert_int_equal(r.move_fallbacks, 1);
    assert_int_equal(r.linked + r.copied, 1);
    assert_int_equal(r.files[2].move_fallback, 1);
    assert_int_equal(r.sources_removed, NJOBFILES);
    bulkload_result_free(&r);
    for (size_t i = 0; i < NJOBFILES; i++)
        assert_false(exists(jm, job_files[i]));
    uint64_t cells;
    ino_t inos[16];
    size_t n;
    table_digest(data, "t", &cells, inos, 16, &n);
    assert_int_equal(cells, 1700);
    int has0 = 0, has1 = 0;
    for (size_t i = 0; i < n; i++) {
        has0 |= inos[i] == ino0;
        has1 |= inos[i] == ino1;
    }
    assert_false(has0);   /* copied: a new inode */
    assert_true(has1);    /* linked */
}

/* The job output on another file system (a tmpfs the test mounts, else
 * /dev/shm; neither: the test fails): every file copied, then removed. */
static void
move_across_fs(void **state)
{
    (void)state;
    struct stat a, b;
    char fs[1024];
    int mounted = 0;
    snprintf(fs, sizeof fs, "%s/otherfs", base);
    assert_int_equal(mkdir(fs, 0755), 0);
    if (mount("kiln-test", fs, "tmpfs", 0, "size=64m") == 0) {
        mounted = 1;
    } else {
        int e = errno;
        rmdir(fs);
        if (stat("/dev/shm", &b) != 0 || stat(base, &a) != 0 || a.st_dev == b.st_dev)
            fail_msg("no second file system: mounting a tmpfs failed (%s) and /dev/shm is "
                     "absent or on the same device; run as root",
                     strerror(e));
        snprintf(fs, sizeof fs, "/dev/shm");
    }
    assert_int_equal(stat(fs, &b), 0);
    assert_int_equal(stat(base, &a), 0);
    assert_int_not_equal(a.st_dev, b.st_dev);
    printf("  job output on %s (%s)\n", fs, mounted ? "tmpfs mounted by the test" : "tmpfs");
    char data[1024], jm[1200];
    snprintf(data, sizeof data, "%s/d7", base);
    snprintf(jm, sizeof jm, "%s/kiln-mv-job-%ld", fs, (long)getpid());
    make_table(data, "t");
    make_job(jm, 700);
    bulkload_result r;
    kiln_err err;
    kiln_status st = load(data, "t", jm, 1, &r, &err);
    if (st != KILN_OK) {
        tu_rmrf(jm);
        if (mounted)
            umount(fs);
        tu_must(st, &err);
    }
    assert_int_equal(r.moved, 0);
    assert_int_equal(r.move_fallbacks, 2);
    assert_int_equal(r.linked + r.copied, 2);
    assert_int_equal(r.sources_removed, NJOBFILES);
    bulkload_result_free(&r);
    for (size_t i = 0; i < NJOBFILES; i++)
        assert_false(exists(jm, job_files[i]));
    assert_true(exists(jm, "_SUCCESS"));
    uint64_t cells;
    ino_t inos[16];
    size_t n;
    table_digest(data, "t", &cells, inos, 16, &n);
    assert_int_equal(cells, 1700);
    tu_rmrf(jm);
    if (mounted) {
        assert_int_equal(umount(fs), 0);
        rmdir(fs);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(move_load),
        cmocka_unit_test(move_finish_both_names),
        cmocka_unit_test(move_finish_partial),
        cmocka_unit_test(move_record_refusals),
        cmocka_unit_test(move_dry_run_and_verify),
        cmocka_unit_test(move_link_fallback_injected),
        cmocka_unit_test(move_across_fs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
