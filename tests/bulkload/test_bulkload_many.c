/* test_bulkload_many.c -- a job output of 10,000 HFiles loaded in one load
 * with RLIMIT_NOFILE lowered to 64, then opened as a view and scanned: the
 * file cache (storage/env.h) keeps the descriptors within its budget, so
 * neither the load (one reader per input file, kept from the checks to the
 * staging) nor the view (every file of every region) runs out of them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bulkload/bulkload.h"
#include "storage/hfile/cell.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/store_view.h"
#include "storage/store/table.h"
#include "tests/support/test_util.h"

/* 10,000 files; 2,000 under ASan and TSan, where writing and loading them
 * took over two minutes (still 60 times the descriptor budget). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NFILES 2000
#else
#define NFILES 10000
#endif
#define ROWS_PER_FILE 3
#define NOFILE 64

static char base[512];

static void
write_hfile(const char *path, int first_row, int rows)
{
    hfile_writer_options o;
    hfile_writer_options_init(&o);
    o.sync = 0;
    hfile_writer *w;
    kiln_err err;
    status_clear(&err);
    tu_must(hfile_writer_open(path, &o, &w, &err), &err);
    for (int i = first_row; i < first_row + rows; i++) {
        char row[16], val[16];
        snprintf(row, sizeof row, "r%06d", i);
        int vn = snprintf(val, sizeof val, "v%d", i);
        kiln_cell c;
        memset(&c, 0, sizeof c);
        c.row = (const uint8_t *)row;
        c.row_len = (uint32_t)strlen(row);
        c.family = (const uint8_t *)"cf";
        c.family_len = 2;
        c.qualifier = (const uint8_t *)"q";
        c.qualifier_len = 1;
        c.ts = 1;
        c.type = CELL_TYPE_PUT;
        c.value = (const uint8_t *)val;
        c.value_len = (uint32_t)vn;
        tu_must(hfile_writer_add(w, &c, &err), &err);
    }
    tu_must(hfile_writer_finish(w, NULL, &err), &err);
}

static void
many_files_low_nofile(void **state)
{
    (void)state;
    char data[1024], job[1024], p[4096];
    snprintf(data, sizeof data, "%s/data", base);
    snprintf(job, sizeof job, "%s/job", base);
    snprintf(p, sizeof p, "%s/cf", job);
    assert_int_equal(mkdir(job, 0755), 0);
    assert_int_equal(mkdir(p, 0755), 0);
    double t0 = tu_now_s();
    for (int i = 0; i < NFILES; i++) {
        snprintf(p, sizeof p, "%s/cf/part-%05d", job, i);
        write_hfile(p, i * ROWS_PER_FILE, ROWS_PER_FILE);
    }
    snprintf(p, sizeof p, "%s/_SUCCESS", job);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    double t1 = tu_now_s();

    /* One split key inside the rows of the middle file: that file is split,
     * its reader used again at staging time. */
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "default:many");
    schema_family fam;
    schema_family_defaults(&fam, "cf");
    kiln_err err;
    status_clear(&err);
    tu_must(schema_add_family(&s, &fam, &err), &err);
    char split[16];
    snprintf(split, sizeof split, "r%06d", NFILES / 2 * ROWS_PER_FILE + 1);
    tu_must(schema_add_split(&s, (const uint8_t *)split, strlen(split), &err), &err);
    tu_must(table_create(data, &s, &err), &err);
    schema_free(&s);

    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    struct rlimit low = {NOFILE, rl.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    env_set_max_open_files(0);   /* derived from the lowered limit */
    long budget = env_max_open_files();
    assert_true(budget <= NOFILE / 2);
    long reopens0 = env_reopens();

    bulkload_options o;
    bulkload_options_init(&o);
    bulkload_result r;
    status_clear(&err);
    tu_must(bulkload_run(data, "many", job, &o, &r, &err), &err);
    assert_int_equal(r.file_count, NFILES);
    assert_int_equal(r.split, 1);
    assert_int_equal(r.linked + r.copied, NFILES - 1);
    assert_int_equal(r.cells, (uint64_t)NFILES * ROWS_PER_FILE);
    bulkload_result_free(&r);
    double t2 = tu_now_s();
    assert_true(env_open_files() <= budget);

    store_view *v;
    tu_must(store_view_open(data, "many", NULL, &v, &err), &err);
    assert_true(env_open_files() <= budget);
    uint64_t rows = 0;
    tu_must(store_view_count(v, NULL, &rows, &err), &err);
    assert_int_equal(rows, (uint64_t)NFILES * ROWS_PER_FILE);
    store_row_buf *rb = store_row_buf_new();
    store_row_opts ro;
    store_row_opts_init(&ro);
    for (int i = 0; i < NFILES * ROWS_PER_FILE; i += 997) {
        char row[16];
        snprintf(row, sizeof row, "r%06d", i);
        store_row out;
        tu_must(store_view_get(v, (const uint8_t *)row, strlen(row), &ro, rb, &out, &err), &err);
        assert_int_equal(out.count, 1);
    }
    store_row_buf_free(rb);
    assert_true(env_open_files() <= budget);
    long reopens = env_reopens() - reopens0;
    store_view_unref(v);
    double t3 = tu_now_s();
    assert_true(reopens > 0);   /* the budget was really smaller than the files */
    printf("  %d HFiles under RLIMIT_NOFILE %d (file cache %ld): written in %.1f s, loaded in "
           "%.1f s, view opened and scanned in %.1f s, %ld reopens\n",
           NFILES, NOFILE, budget, t1 - t0, t2 - t1, t3 - t2, reopens);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
    env_set_max_open_files(0);
}

static int
setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/kiln-many-XXXXXX", t ? t : "/tmp");
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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(many_files_low_nofile),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
