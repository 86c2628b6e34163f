/* test_bulkload_crash.c -- crash points of a real `kiln load` by fault
 * injection: every open, read, write, fsync, rename, unlink, directory
 * listing, stat and lock of a load
 * (checks, a straddling file split by the writer, hard links, manifest,
 * CURRENT, garbage collection) fails in turn. Each job output also holds a
 * secondary index of the table (_index/by_v/). After each failure, a fresh
 * open of the table finds exactly the old view or exactly the new one -- the
 * table and its index together (the cells of their files are compared with
 * the jobs' cells) -- and the next load succeeds and leaves no orphaned file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bulkload/bulkload.h"
#include "storage/hfile/cell.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/store_index.h"
#include "storage/base/store_rec.h"
#include "storage/store/table.h"
#include "tests/support/job_fixture.h"
#include "tests/support/test_util.h"

static char base[512];

static uint64_t
view_digest(const char *data, uint64_t *version, uint64_t *cells)
{
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    tu_must(table_open(data, "t", &t, &err), &err);
    manifest m;
    tu_must(table_read_current(t, &m, &err), &err);
    *version = m.version;
    *cells = 0;
    uint64_t d = 0;
    assert_int_equal(m.table_count, 2);   /* the table and its index */
    for (size_t i = 0; i < m.table_count; i++) {
        for (size_t r = 0; r < m.tables[i].region_count; r++) {
            const manifest_region *reg = &m.tables[i].regions[r];
            for (size_t f = 0; f < reg->file_count; f++) {
                char p[4096];
                table_file_path(t, reg->files[f].name, p, sizeof p);
                d += tjob_file_digest(p, cells);
            }
        }
    }
    manifest_free(&m);
    table_close(t);
    return d;
}

/* The cells of a job output: the table's and the index's. */
static uint64_t
job_digest(const char *job, uint64_t *cells)
{
    static const char *dirs[] = {"cf", "_index/by_v/i"};
    uint64_t dg = 0;
    *cells = 0;
    for (size_t i = 0; i < 2; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", job, dirs[i]);
        DIR *d = opendir(p);
        assert_non_null(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char fp[8192];
            snprintf(fp, sizeof fp, "%s/%s", p, e->d_name);
            dg += tjob_file_digest(fp, cells);
        }
        closedir(d);
    }
    return dg;
}

static void
make_job(const char *job, int lo, int hi, int64_t ts)
{
    char p[4096];
    mkdir(job, 0755);
    snprintf(p, sizeof p, "%s/cf", job);
    mkdir(p, 0755);
    /* region-aligned files, plus one that straddles r01000 and r02000 */
    snprintf(p, sizeof p, "%s/cf/p0", job);
    tjob_write_hfile(p, lo, lo + 300, ts);
    snprintf(p, sizeof p, "%s/cf/p1", job);
    tjob_write_hfile(p, lo + 300, hi, ts);
    tjob_write_index(job, lo, hi, ts);
    snprintf(p, sizeof p, "%s/_SUCCESS", job);
    FILE *f = fopen(p, "w");
    fclose(f);
}

/* A table with two versions: job_0 (1) and job_a (2, current). */
static void
fresh_store(const char *data, const char *job_0, const char *job_a)
{
    tu_rmrf(data);
    kiln_schema s;
    tjob_schema_t(&s);
    kiln_err err;
    status_clear(&err);
    tu_must(table_create(data, &s, &err), &err);
    schema_free(&s);
    bulkload_options o;
    bulkload_options_init(&o);
    bulkload_result r;
    tu_must(bulkload_run(data, "t", job_0, &o, &r, &err), &err);
    bulkload_result_free(&r);
    tu_must(bulkload_run(data, "t", job_a, &o, &r, &err), &err);
    bulkload_result_free(&r);
}

static void
check_no_orphans(const char *data)
{
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    tu_must(table_open(data, "t", &t, &err), &err);
    uint64_t *vs;
    size_t nv;
    tu_must(table_versions(t, &vs, &nv, &err), &err);
    size_t referenced = 0;
    char names[256][MANIFEST_FILE_NAME_MAX + 1];
    for (size_t i = 0; i < nv; i++) {
        manifest m;
        tu_must(table_read_manifest(t, vs[i], &m, NULL, &err), &err);
        for (size_t ti = 0; ti < m.table_count; ti++) {
            for (size_t r = 0; r < m.tables[ti].region_count; r++) {
                for (size_t f = 0; f < m.tables[ti].regions[r].file_count; f++) {
                    const char *n = m.tables[ti].regions[r].files[f].name;
                    int dup = 0;
                    for (size_t j = 0; j < referenced; j++)
                        dup |= strcmp(names[j], n) == 0;
                    if (!dup)
                        snprintf(names[referenced++], sizeof names[0], "%s", n);
                }
            }
        }
        manifest_free(&m);
    }
    free(vs);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", table_dir(t), TABLE_FILES_DIR);
    DIR *d = opendir(dir);
    size_t present = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        int known = 0;
        for (size_t j = 0; j < referenced; j++)
            known |= strcmp(names[j], e->d_name) == 0;
        if (!known)
            fail_msg("orphaned file %s/%s", dir, e->d_name);
        present++;
    }
    closedir(d);
    assert_int_equal(present, referenced);
    table_close(t);
}

static void
crash_points(bulkload_mode mode)
{
    char data[1024], ja[1024], jb[1024], jc[1024];
    snprintf(data, sizeof data, "%s/data", base);
    snprintf(ja, sizeof ja, "%s/ja", base);
    snprintf(jb, sizeof jb, "%s/jb", base);
    snprintf(jc, sizeof jc, "%s/jc", base);
    make_job(ja, 0, 2500, 100);
    make_job(jb, 500, 2900, 200);
    make_job(jc, 100, 200, 300);
    uint64_t cells_a, cells_b, cells_c;
    uint64_t dig_a = job_digest(ja, &cells_a), dig_b = job_digest(jb, &cells_b);
    uint64_t dig_c = job_digest(jc, &cells_c);
    /* the view after loading B: B alone (replace) or A and B (append) */
    uint64_t want_b = mode == BULKLOAD_APPEND ? dig_a + dig_b : dig_b;
    uint64_t want_b_cells = mode == BULKLOAD_APPEND ? cells_a + cells_b : cells_b;

    /* (no link: the store copies or reflinks the job's files) */
    static const env_op ops[] = {ENV_OP_OPEN, ENV_OP_READ, ENV_OP_WRITE, ENV_OP_SYNC,
                                 ENV_OP_RENAME, ENV_OP_UNLINK, ENV_OP_LIST, ENV_OP_STAT,
                                 ENV_OP_LOCK};
    static const char *names[] = {"open", "read", "write", "fsync", "rename", "unlink",
                                  "list", "stat", "lock"};
    size_t points = 0;
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
        long calls = 0, stride = 1;
        for (long k = 0; k == 0 || k <= calls; k += stride) {
            fresh_store(data, jc, ja);
            bulkload_options o;
            bulkload_options_init(&o);
            o.mode = mode;
            bulkload_result r;
            kiln_err err;
            status_clear(&err);
            env_fault_clear();
            if (k > 0)
                env_fault_arm(ops[oi], k, EIO);
            kiln_status st = bulkload_run(data, "t", jb, &o, &r, &err);
            if (k == 0) {
                /* at most ~24 points per kind: the long read runs are alike */
                calls = env_op_calls(ops[oi]);
                stride = calls > 24 ? calls / 24 : 1;
                k = 1 - stride;
            }
            env_fault_clear();
            if (k <= 0) {
                tu_must(st, &err);
                assert_int_equal(r.split, 1);
                bulkload_result_free(&r);
                continue;
            }
            points++;
            uint64_t v, cells;
            uint64_t dig = view_digest(data, &v, &cells);
            if (v == 2) {
                assert_true(dig == dig_a && cells == cells_a);
                assert_int_not_equal(st, KILN_OK);
                assert_int_equal(r.version, 0);
            } else {
                assert_int_equal(v, 3);
                assert_true(dig == want_b && cells == want_b_cells);
                assert_int_equal(r.version, 3);
            }
            if (st == KILN_OK)
                assert_int_equal(v, 3);
            else
                assert_true(err.msg[0] != '\0');
            bulkload_result_free(&r);
            /* the next load succeeds and leaves no orphaned file */
            o.mode = BULKLOAD_REPLACE;
            status_clear(&err);
            tu_must(bulkload_run(data, "t", jc, &o, &r, &err), &err);
            assert_int_equal(r.gc_err.code, KILN_OK);
            bulkload_result_free(&r);
            dig = view_digest(data, &v, &cells);
            assert_true(dig == dig_c && cells == cells_c);
            check_no_orphans(data);
        }
        printf("  %s %s: %ld calls, every %ld-th failed\n",
               mode == BULKLOAD_APPEND ? "append" : "replace", names[oi], calls, stride);
        assert_true(calls > 0);
    }
    assert_true(points > 30);
}

static void
crash_replace(void **state)
{
    (void)state;
    crash_points(BULKLOAD_REPLACE);
}

static void
crash_append(void **state)
{
    (void)state;
    crash_points(BULKLOAD_APPEND);
}

static int
setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/kiln-blc-XXXXXX", t ? t : "/tmp");
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

int
main(void)
{
    printf("test_bulkload_crash: deterministic (no random input)\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(crash_replace),
        cmocka_unit_test(crash_append),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
