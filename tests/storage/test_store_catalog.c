/* test_store_catalog.c -- hot swaps under load: reader threads get and scan
 * through the catalog while versions are published, collected and rolled
 * back. No read fails, no read mixes two versions, and a new version is
 * served within the check interval. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/manifest.h"
#include "storage/store/store_catalog.h"
#include "storage/store/store_view.h"
#include "storage/store/table.h"
#include "tests/support/test_util.h"

#define ROWS 600

static char data_dir[512];

/* Publish a replace version whose every row holds value "<tag>-<i>". */
static uint64_t
publish(int tag)
{
    kiln_err err;
    status_clear(&err);
    kiln_table *t;
    tu_must(table_open(data_dir, "hot", &t, &err), &err);
    tu_must(table_lock(t, -1, &err), &err);
    uint64_t version;
    tu_must(table_next_version(t, &version, &err), &err);
    manifest m, cur;
    int have = table_read_current(t, &cur, NULL) == KILN_OK;
    manifest_init(&m);
    manifest_table *mt = manifest_add_table(&m, table_schema(t));
    m.version = version;
    m.parent = have ? cur.version : 0;
    m.kind = MANIFEST_KIND_REPLACE;
    if (have)
        manifest_free(&cur);
    for (size_t r = 0; r < mt->region_count; r++) {
        manifest_file mf;
        memset(&mf, 0, sizeof mf);
        snprintf(mf.family, sizeof mf.family, "f");
        table_file_name(version, (uint32_t)r, mf.name);
        mf.seq = version;
        char p[4096];
        table_file_path(t, mf.name, p, sizeof p);
        hfile_writer_options o;
        hfile_writer_options_init(&o);
        o.block_size = 512;
        o.sync = 0;
        hfile_writer *w;
        tu_must(hfile_writer_open(p, &o, &w, &err), &err);
        for (int i = 0; i < ROWS; i++) {
            char row[16], val[32];
            snprintf(row, sizeof row, "r%04d", i);
            if (manifest_region_for_row(mt, (const uint8_t *)row, strlen(row)) != r)
                continue;
            kiln_cell c;
            memset(&c, 0, sizeof c);
            c.row = (const uint8_t *)row;
            c.row_len = (uint32_t)strlen(row);
            c.family = (const uint8_t *)"f";
            c.family_len = 1;
            c.qualifier = (const uint8_t *)"q";
            c.qualifier_len = 1;
            c.ts = 1;
            c.type = CELL_TYPE_PUT;
            c.value = (const uint8_t *)val;
            c.value_len = (uint32_t)snprintf(val, sizeof val, "%d-%d", tag, i);
            tu_must(hfile_writer_add(w, &c, &err), &err);
            mf.entries++;
        }
        hfile_writer_stats stats;
        tu_must(hfile_writer_finish(w, &stats, &err), &err);
        mf.size = stats.file_size;
        manifest_region_add_file(&mt->regions[r], &mf);
    }
    int published;
    tu_must(table_publish(t, &m, &published, &err), &err);
    manifest_free(&m);
    tu_must(table_gc(t, NULL, &err), &err);
    table_close(t);
    return version;
}

static int
tag_of(const kiln_cell *c)
{
    return atoi((const char *)c->value);
}

typedef struct reader_arg {
    store_catalog *cat;
    atomic_int *stop;
    long reads;
    long errors;
    long mixed;
} reader_arg;

static void *
reader(void *p)
{
    reader_arg *a = p;
    store_row_buf *buf = store_row_buf_new();
    unsigned seed = (unsigned)(uintptr_t)p;
    while (!atomic_load(a->stop)) {
        store_view *v;
        kiln_err err;
        status_clear(&err);
        if (store_catalog_acquire(a->cat, "hot", &v, &err) != KILN_OK) {
            a->errors++;
            continue;
        }
        /* two gets far apart and a scan across a region boundary: one version */
        char row[16];
        store_row r1, r2;
        snprintf(row, sizeof row, "r%04d", rand_r(&seed) % ROWS);
        int t1 = -1;
        if (store_view_get(v, (const uint8_t *)row, 5, NULL, buf, &r1, &err) != KILN_OK ||
            r1.count != 1) {
            a->errors++;
        } else {
            t1 = tag_of(&r1.cells[0]);
        }
        snprintf(row, sizeof row, "r%04d", rand_r(&seed) % ROWS);
        if (store_view_get(v, (const uint8_t *)row, 5, NULL, buf, &r2, &err) != KILN_OK ||
            r2.count != 1)
            a->errors++;
        else if (tag_of(&r2.cells[0]) != t1)
            a->mixed++;
        store_scan_opts so;
        store_scan_opts_init(&so);
        so.start = (const uint8_t *)"r0290";
        so.start_len = 5;
        so.limit = 20;
        store_scan *s;
        if (store_scan_open(v, &so, &s, &err) != KILN_OK) {
            a->errors++;
        } else {
            int n = 0;
            for (;;) {
                store_row r;
                int has;
                if (store_scan_next(s, &r, &has, &err) != KILN_OK) {
                    a->errors++;
                    break;
                }
                if (!has)
                    break;
                if (tag_of(&r.cells[0]) != t1)
                    a->mixed++;
                n++;
            }
            if (n != 20)
                a->errors++;
            store_scan_close(s);
        }
        store_view_unref(v);
        a->reads++;
    }
    store_row_buf_free(buf);
    return NULL;
}

static void
hot_swap_under_load(void **state)
{
    (void)state;
    kiln_err err;
    status_clear(&err);
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "hot");
    schema_family f;
    schema_family_defaults(&f, "f");
    tu_must(schema_add_family(&s, &f, &err), &err);
    tu_must(schema_add_split(&s, (const uint8_t *)"r0300", 5, &err), &err);
    tu_must(table_create(data_dir, &s, &err), &err);
    schema_free(&s);
    publish(1);

    store_catalog *cat;
    tu_must(store_catalog_open(data_dir, 1 << 20, &cat, &err), &err);
    store_catalog_set_check_interval(cat, 5);
    store_view *v;
    status_clear(&err);
    assert_int_equal(store_catalog_acquire(cat, "nope", &v, &err), KILN_NOT_FOUND);
    tu_must(store_catalog_acquire(cat, "hot", &v, &err), &err);
    store_view *first = v;   /* held across everything below */

    atomic_int stop = 0;
    reader_arg args[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        memset(&args[i], 0, sizeof args[i]);
        args[i].cat = cat;
        args[i].stop = &stop;
        assert_int_equal(pthread_create(&th[i], NULL, reader, &args[i]), 0);
    }
    uint64_t last = 0;
    for (int tag = 2; tag <= 25; tag++) {
        last = publish(tag);
        struct timespec ts = {0, 3 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    /* served within the interval */
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    tu_must(store_catalog_acquire(cat, "default:hot", &v, &err), &err);
    uint64_t served = store_view_version(v);
    store_view_unref(v);

    /* rollback is a swap too */
    kiln_table *t;
    tu_must(table_open(data_dir, "hot", &t, &err), &err);
    tu_must(table_lock(t, -1, &err), &err);
    uint64_t back;
    tu_must(table_rollback(t, 0, &back, &err), &err);
    table_close(t);
    size_t swapped;
    /* the readers may swap first (their checks run every 5 ms) */
    tu_must(store_catalog_refresh(cat, &swapped, &err), &err);
    tu_must(store_catalog_acquire(cat, "hot", &v, &err), &err);
    uint64_t after_rollback = store_view_version(v);
    store_view_unref(v);

    atomic_store(&stop, 1);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    assert_true(swapped <= 1);
    assert_int_equal(served, last);
    assert_int_equal(after_rollback, back);
    long reads = 0;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(args[i].errors, 0);
        assert_int_equal(args[i].mixed, 0);
        reads += args[i].reads;
    }
    printf("  %ld consistent reads during 24 publishes and a rollback\n", reads);
    assert_true(reads > 0);

    /* the very first view still reads version 1, whose files are long gone */
    store_row_buf *buf = store_row_buf_new();
    store_row r;
    tu_must(store_view_get(first, (const uint8_t *)"r0599", 5, NULL, buf, &r, &err), &err);
    assert_int_equal(r.count, 1);
    assert_int_equal(tag_of(&r.cells[0]), 1);
    store_row_buf_free(buf);
    store_view_unref(first);
    store_catalog_close(cat);
}

static int
setup(void **state)
{
    (void)state;
    tu_mkdtemp(data_dir, sizeof data_dir, "cat");
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    tu_rmrf(data_dir);
    return 0;
}

int
main(void)
{
    printf("test_store_catalog: thread interleavings vary run to run (no seed)\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hot_swap_under_load),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
