/* test_speed_concurrent.c -- concurrent writers and readers on the speed
 * layer while its background thread flushes, compacts and splits (run
 * under ThreadSanitizer in CI).
 *
 * Writers each put rows of their own in increasing order, every row as one
 * mutation of two columns with the same value, and increment one shared
 * counter. Readers scan the table over and over. Every scan must see
 * whole rows (both columns, equal: a write is atomic), and of each writer's
 * rows a prefix (a scan reads one snapshot, and a writer's rows become
 * visible in the order they were acknowledged). At the end every row is
 * there and the counter holds the sum of all increments.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/store/speed.h"
#include "storage/store/table.h"
#include "tests/support/test_util.h"

#define WRITERS 4
#define READERS 2
#define ROWS_PER_WRITER 600
#define INCRS_PER_WRITER 100

static kiln_speed *sp;
static atomic_int writers_done;
static atomic_long scans_done;

static void *
writer_main(void *arg)
{
    long k = (long)(intptr_t)arg;
    char val[64];
    memset(val, 'x', sizeof val);
    for (long i = 0; i < ROWS_PER_WRITER; i++) {
        char row[32];
        snprintf(row, sizeof row, "w%ld-%05ld", k, i);
        int n = snprintf(val, sizeof val, "%ld.%ld.", k, i);
        memset(val + n, 'v', sizeof val - (size_t)n);
        kiln_mutation m;
        mutation_init(&m, (const uint8_t *)row, strlen(row));
        mutation_put(&m, "f", 1, "a", 1, CELL_LATEST_TIMESTAMP, val, sizeof val);
        mutation_put(&m, "f", 1, "b", 1, CELL_LATEST_TIMESTAMP, val, sizeof val);
        kiln_durability d = i % 3 == 0 ? KILN_DUR_SYNC_WAL : KILN_DUR_ASYNC_WAL;
        kiln_err err;
        status_clear(&err);
        tu_must(speed_mutate(sp, "t", &m, 1, d, &err), &err);
        mutation_free(&m);
        if (i % (ROWS_PER_WRITER / INCRS_PER_WRITER) == 0) {
            speed_incr inc = {"f", (const uint8_t *)"n", 1, 1};
            int64_t now;
            tu_must(speed_increment(sp, "t", (const uint8_t *)"counter", 7, &inc, 1,
                                    KILN_DUR_ASYNC_WAL, &now, &err),
                    &err);
        }
    }
    atomic_fetch_add(&writers_done, 1);
    return NULL;
}

/* One scan: whole rows, each writer's rows a prefix. */
static void
scan_once(void)
{
    store_view *v;
    kiln_err err;
    status_clear(&err);
    tu_must(speed_view(sp, "t", &v, &err), &err);
    store_scan_opts o;
    store_scan_opts_init(&o);
    store_scan *s;
    tu_must(store_scan_open(v, &o, &s, &err), &err);
    long next[WRITERS] = {0};
    for (;;) {
        store_row r;
        int has;
        tu_must(store_scan_next(s, &r, &has, &err), &err);
        if (!has)
            break;
        if (r.row.n == 7 && memcmp(r.row.p, "counter", 7) == 0)
            continue;
        long k, i;
        char row[32];
        assert_true(r.row.n < sizeof row);
        memcpy(row, r.row.p, r.row.n);
        row[r.row.n] = '\0';
        assert_int_equal(sscanf(row, "w%ld-%ld", &k, &i), 2);
        assert_true(k >= 0 && k < WRITERS);
        if (i != next[k])
            fail_msg("writer %ld: row %ld visible, row %ld not (a hole in one snapshot)", k, i,
                     next[k]);
        next[k] = i + 1;
        assert_int_equal(r.count, 2);
        assert_int_equal(r.cells[0].value_len, r.cells[1].value_len);
        assert_memory_equal(r.cells[0].value, r.cells[1].value, r.cells[0].value_len);
    }
    store_scan_close(s);
    store_view_unref(v);
    atomic_fetch_add(&scans_done, 1);
}

static void *
reader_main(void *arg)
{
    (void)arg;
    while (atomic_load(&writers_done) < WRITERS)
        scan_once();
    scan_once();
    return NULL;
}

static void
test_concurrent(void **state)
{
    (void)state;
    char dir[256], data[300];
    tu_mkdtemp(dir, sizeof dir, "speed_conc");
    snprintf(data, sizeof data, "%s/data", dir);
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "default:t");
    kiln_err err;
    status_clear(&err);
    schema_family f;
    schema_family_defaults(&f, "f");
    tu_must(schema_add_family(&s, &f, &err), &err);
    tu_must(schema_add_split(&s, (const uint8_t *)"w2", 2, &err), &err);
    schema_set_prop(&s, "max_region_bytes", "6000");
    tu_must(table_create(data, &s, &err), &err);
    schema_free(&s);

    speed_options o;
    speed_options_init(&o);
    o.flush_check_ms = 20;
    o.memstore_flush_bytes = 48 * 1024;    /* many flushes, compactions and splits */
    o.compact_bytes_per_sec = 0;
    tu_must(speed_open(data, NULL, &o, &sp, &err), &err);
    atomic_store(&writers_done, 0);
    atomic_store(&scans_done, 0);
    pthread_t w[WRITERS], r[READERS];
    for (long i = 0; i < READERS; i++)
        assert_int_equal(pthread_create(&r[i], NULL, reader_main, NULL), 0);
    for (long i = 0; i < WRITERS; i++)
        assert_int_equal(pthread_create(&w[i], NULL, writer_main, (void *)(intptr_t)i), 0);
    for (long i = 0; i < WRITERS; i++)
        pthread_join(w[i], NULL);
    for (long i = 0; i < READERS; i++)
        pthread_join(r[i], NULL);

    speed_table_stats st;
    tu_must(speed_table_stats_get(sp, "t", &st, &err), &err);
    printf("%ld scans; %llu writes; %llu flushes\n", (long)atomic_load(&scans_done),
           (unsigned long long)st.writes, (unsigned long long)st.flushes);
    assert_true(st.flushes > 0);

    /* everything there, the counter summed, after a reopen as well */
    for (int round = 0; round < 2; round++) {
        store_view *v;
        tu_must(speed_view(sp, "t", &v, &err), &err);
        store_row_buf *rb = store_row_buf_new();
        store_row row;
        tu_must(store_view_get(v, (const uint8_t *)"counter", 7, NULL, rb, &row, &err), &err);
        assert_int_equal(row.count, 1);
        assert_int_equal(row.cells[0].value_len, 8);
        int64_t n = 0;
        for (int b = 0; b < 8; b++)
            n = (n << 8) | row.cells[0].value[b];
        assert_int_equal(n, WRITERS * INCRS_PER_WRITER);
        uint64_t rows;
        tu_must(store_view_count(v, NULL, &rows, &err), &err);
        assert_int_equal(rows, WRITERS * ROWS_PER_WRITER + 1);
        store_row_buf_free(rb);
        store_view_unref(v);
        if (round == 0) {
            speed_close(sp);
            tu_must(speed_open(data, NULL, &o, &sp, &err), &err);
        }
    }
    kiln_table *t;
    tu_must(table_open(data, "t", &t, &err), &err);
    manifest m;
    tu_must(table_read_current(t, &m, &err), &err);
    printf("regions after the run: %zu\n", m.tables[0].region_count);
    assert_true(m.tables[0].region_count > 2);   /* splits ran beside the writes */
    manifest_free(&m);
    table_close(t);
    speed_close(sp);
    tu_rmrf(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
