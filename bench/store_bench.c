/* store_bench.c -- kiln-store-bench: the region store on the shared dataset
 * (bench/dataset.h): writes the dataset as a job's output split into
 * R regions, times `kiln load` (bulkload_run) and rollback, and runs Gets and
 * 100-row Scans through the store (store_view: routing, blooms, the merge,
 * row assembly) with kiln-bench's streams, checks and key=value output, so the
 * figures compare directly with kiln-bench on one HFile of the same rows.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>

#include "bulkload/bulkload.h"
#include "dataset.h"
#include "storage/base/block_cache.h"
#include "storage/hfile/cell.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/store_view.h"
#include "storage/store/table.h"

#define STORE_BENCH_TABLE "bench"
#define STORE_BENCH_TS 1700000000000LL

static const char store_bench_usage_text[] =
    "Usage: kiln-store-bench build JOBDIR N [--regions R] [--block-size B] [--data-version V]\n"
    "       kiln-store-bench load DATA JOBDIR... [--rounds K]\n"
    "       kiln-store-bench rollback DATA [--rounds K]\n"
    "       kiln-store-bench get DATA N [--threads T] [--ops K] [--cache-mb M] [--warm]\n"
    "                        [--missing]\n"
    "       kiln-store-bench scan DATA N [--threads T] [--ops K] [--cache-mb M] [--warm]\n"
    "                        [--len L]\n"
    "\n"
    "build     write dataset rows 0..N-1 (family 'f', qualifier 'v', as kiln-bench) as\n"
    "          a job output directory: R region-aligned snappy HFiles (default 8,\n"
    "          block size 4096, row bloom), _SUCCESS, and _splits (the R-1 split\n"
    "          keys in printable form)\n"
    "load      create table 'bench' in DATA from the first job's _splits if absent,\n"
    "          then load the jobs in turn, K rounds (default 3), each a replace\n"
    "          load of the job that is not current; prints each load's times\n"
    "rollback  K rounds (default 5) of a rollback to the parent and a rollback\n"
    "          forward again, each timed\n"
    "get/scan  as kiln-bench get/scan, through the store: every Get routes to its\n"
    "          region and reads the row with store_view_get; every Scan opens a\n"
    "          store scan at a random row with a limit of L rows\n";

typedef struct store_bench_opts {
    int regions;
    size_t block;
    uint64_t data_version;
    int rounds;
    int threads, warm, missing, len;
    uint64_t ops;
    size_t cache_mb;
} store_bench_opts;

static store_bench_opts sb = {8, 4096, 0, 0, 1, 0, 0, 100, 1000000, 4096};

static int
store_bench_fail(const kiln_err *err)
{
    fprintf(stderr, "kiln-store-bench: %s\n", err->msg[0] ? err->msg : status_name(err->code));
    return status_exit_code(err->code);
}

/* ------------------------------------------------------------------ build */

static void
store_bench_cell(kiln_cell *c, const uint8_t *key, const char *val)
{
    memset(c, 0, sizeof *c);
    c->row = key;
    c->row_len = KEY_LEN;
    c->family = (const uint8_t *)"f";
    c->family_len = 1;
    c->qualifier = (const uint8_t *)"v";
    c->qualifier_len = 1;
    c->ts = STORE_BENCH_TS;
    c->type = CELL_TYPE_PUT;
    c->value = (const uint8_t *)val;
    c->value_len = VAL_LEN;
}

static int
store_bench_build(const char *job, uint64_t n)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/f", job);
    kiln_err err;
    status_clear(&err);
    if (env_mkdirs(p, 0755, &err) != KILN_OK)
        return store_bench_fail(&err);
    kbuf splits = KBUF_INIT;
    double t0 = now_s();
    uint64_t bytes = 0;
    for (int r = 0; r < sb.regions; r++) {
        uint64_t lo = n * (uint64_t)r / (uint64_t)sb.regions;
        uint64_t hi = n * (uint64_t)(r + 1) / (uint64_t)sb.regions;
        uint8_t key[KEY_LEN];
        char val[VAL_LEN];
        if (r > 0) {
            make_key(lo, 0, key);
            cell_to_string_binary(&splits, key, KEY_LEN);
            buf_append_u8(&splits, '\n');
        }
        snprintf(p, sizeof p, "%s/f/part-r-%05d", job, r);
        hfile_writer_options o;
        hfile_writer_options_init(&o);
        o.codec = CODEC_SNAPPY;
        o.block_size = sb.block;
        o.bloom = BLOOM_ROW;
        hfile_writer *w;
        if (hfile_writer_open(p, &o, &w, &err) != KILN_OK)
            return store_bench_fail(&err);
        for (uint64_t i = lo; i < hi; i++) {
            kiln_cell c;
            make_key(i, 0, key);
            make_value_v(i, sb.data_version, val);
            store_bench_cell(&c, key, val);
            if (hfile_writer_add(w, &c, &err) != KILN_OK) {
                hfile_writer_abandon(w);
                return store_bench_fail(&err);
            }
        }
        hfile_writer_stats st;
        if (hfile_writer_finish(w, &st, &err) != KILN_OK)
            return store_bench_fail(&err);
        bytes += st.file_size;
    }
    snprintf(p, sizeof p, "%s/_splits", job);
    if (env_write_file_atomic(p, splits.data, splits.len, &err) != KILN_OK)
        return store_bench_fail(&err);
    snprintf(p, sizeof p, "%s/_SUCCESS", job);
    if (env_write_file_atomic(p, "", 0, &err) != KILN_OK)
        return store_bench_fail(&err);
    buf_free(&splits);
    printf("build n=%llu regions=%d secs=%.2f file_MB=%.1f\n", (unsigned long long)n,
           sb.regions, now_s() - t0, (double)bytes / 1e6);
    return 0;
}

/* ------------------------------------------------------------------ load, rollback */

static int
store_bench_create(const char *data, const char *job)
{
    kiln_err err;
    status_clear(&err);
    kiln_table *t;
    if (table_open(data, STORE_BENCH_TABLE, &t, &err) == KILN_OK) {
        table_close(t);
        return 0;
    }
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, STORE_BENCH_TABLE);
    schema_family f;
    char spec[64];
    snprintf(spec, sizeof spec, "f:blocksize=%zu", sb.block);
    status_clear(&err);
    if (schema_family_parse(spec, &f, &err) != KILN_OK ||
        schema_add_family(&s, &f, &err) != KILN_OK)
        return store_bench_fail(&err);
    char p[4096];
    snprintf(p, sizeof p, "%s/_splits", job);
    kbuf b = KBUF_INIT;
    if (env_read_file(p, &b, &err) != KILN_OK)
        return store_bench_fail(&err);
    for (size_t i = 0; i < b.len;) {
        size_t j = i;
        while (j < b.len && b.data[j] != '\n')
            j++;
        kbuf key = KBUF_INIT;
        if (j > i && cell_from_string_binary(&key, (const char *)b.data + i, j - i) == 0)
            schema_add_split(&s, key.data, key.len, &err);
        buf_free(&key);
        i = j + 1;
    }
    buf_free(&b);
    int rc = table_create(data, &s, &err) == KILN_OK ? 0 : store_bench_fail(&err);
    schema_free(&s);
    return rc;
}

static int
store_bench_dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double
store_bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, store_bench_dcmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int
store_bench_load(const char *data, char **jobs, int njobs)
{
    int rc = store_bench_create(data, jobs[0]);
    if (rc != 0)
        return rc;
    int rounds = sb.rounds ? sb.rounds : 3;
    double *tot = calloc((size_t)rounds * (size_t)njobs, sizeof *tot);
    int nt = 0;
    for (int round = 0; round < rounds; round++) {
        for (int j = 0; j < njobs; j++) {
            bulkload_options o;
            bulkload_options_init(&o);
            bulkload_result r;
            kiln_err err;
            status_clear(&err);
            if (bulkload_run(data, STORE_BENCH_TABLE, jobs[j], &o, &r, &err) != KILN_OK) {
                bulkload_result_free(&r);
                free(tot);
                return store_bench_fail(&err);
            }
            printf("load version=%llu files=%zu linked=%zu copied=%zu split=%zu regions=%zu "
                   "cells=%llu bytes_MB=%.1f already=%d ms=%.2f check_ms=%.2f stage_ms=%.2f "
                   "publish_ms=%.2f gc_ms=%.2f ms_per_region=%.2f\n",
                   (unsigned long long)r.version, r.file_count, r.linked, r.copied, r.split,
                   r.regions_loaded, (unsigned long long)r.cells, (double)r.bytes / 1e6,
                   r.already_loaded, r.total_ms, r.check_ms, r.stage_ms, r.publish_ms, r.gc_ms,
                   r.regions_loaded ? r.total_ms / (double)r.regions_loaded : 0.0);
            if (!r.already_loaded)
                tot[nt++] = r.total_ms;
            bulkload_result_free(&r);
        }
    }
    if (nt > 0)
        printf("load_median_ms=%.2f loads=%d\n", store_bench_median(tot, nt), nt);
    free(tot);
    return 0;
}

static int
store_bench_rollback(const char *data)
{
    int rounds = sb.rounds ? sb.rounds : 5;
    double *ms = calloc((size_t)rounds * 2, sizeof *ms);
    int n = 0;
    kiln_err err;
    status_clear(&err);
    for (int round = 0; round < rounds; round++) {
        for (int dir = 0; dir < 2; dir++) {
            double t0 = now_s();
            kiln_table *t;
            uint64_t from = 0, to = 0;
            if (table_open(data, STORE_BENCH_TABLE, &t, &err) != KILN_OK)
                return store_bench_fail(&err);
            manifest_pointer ptr;
            kiln_status st = table_lock(t, 0, &err);
            if (st == KILN_OK)
                st = table_current(t, &ptr, &err);
            from = ptr.version;
            /* back to the parent, then forward to the version rolled back from */
            static uint64_t forward;
            if (st == KILN_OK)
                st = table_rollback(t, dir == 0 ? 0 : forward, &to, &err);
            if (dir == 0)
                forward = from;
            table_close(t);
            if (st != KILN_OK) {
                free(ms);
                return store_bench_fail(&err);
            }
            ms[n] = (now_s() - t0) * 1e3;
            printf("rollback from=%llu to=%llu ms=%.3f\n", (unsigned long long)from,
                   (unsigned long long)to, ms[n]);
            n++;
        }
    }
    printf("rollback_median_ms=%.3f rollbacks=%d\n", store_bench_median(ms, n), n);
    free(ms);
    return 0;
}

/* ------------------------------------------------------------------ reads */

typedef struct store_bench_thread {
    pthread_t th;
    store_view *v;
    uint64_t n;
    int tid;
    uint32_t *lat;
    uint64_t found, notfound, bad, rows, errors;
    kiln_err err;
} store_bench_thread;

static pthread_barrier_t store_bench_bar;

/* The cell's shape always; its value bytes for every 1024th op (as rbench
 * does), since formatting the expected value costs more than a Get. */
static int
store_bench_cell_ok(const kiln_cell *c, uint64_t i, uint64_t op)
{
    char ev[VAL_LEN];
    if (c->value_len != VAL_LEN || c->qualifier_len != 1 || c->qualifier[0] != 'v')
        return 0;
    if (op % 1024 != 0)
        return 1;
    make_value_v(i, 0, ev);
    /* a load may have published either data version; accept both */
    if (memcmp(ev, c->value, VAL_LEN) == 0)
        return 1;
    make_value_v(i, 1, ev);
    return memcmp(ev, c->value, VAL_LEN) == 0;
}

static void *
store_bench_get_thread(void *arg)
{
    store_bench_thread *a = arg;
    store_row_buf *buf = store_row_buf_new();
    store_row_opts ro;
    store_row_opts_init(&ro);
    ro.now_ms = STORE_BENCH_TS;
    uint64_t s = RUN_SEED + 1000 * (uint64_t)a->tid + (sb.missing ? 7 : 0);
    uint8_t k[KEY_LEN];
    status_clear(&a->err);
    pthread_barrier_wait(&store_bench_bar);
    for (uint64_t j = 0; j < sb.ops; j++) {
        uint64_t i = splitmix64(&s) % a->n;
        make_key(i, sb.missing, k);
        store_row r;
        kiln_err err;
        status_clear(&err);
        uint64_t t0 = now_ns();
        kiln_status st = store_view_get(a->v, k, KEY_LEN, &ro, buf, &r, &err);
        a->lat[j] = (uint32_t)(now_ns() - t0);
        if (st != KILN_OK) {
            if (a->errors++ == 0)
                a->err = err;
            a->bad++;
        } else if (r.count > 0) {
            a->found++;
            if (sb.missing || r.count != 1 || !store_bench_cell_ok(&r.cells[0], i, j))
                a->bad++;
        } else {
            a->notfound++;
            if (!sb.missing)
                a->bad++;
        }
    }
    store_row_buf_free(buf);
    return NULL;
}

static void *
store_bench_scan_thread(void *arg)
{
    store_bench_thread *a = arg;
    uint64_t s = RUN_SEED + 1000 * (uint64_t)a->tid + 13;
    uint8_t k[KEY_LEN], want[KEY_LEN];
    status_clear(&a->err);
    pthread_barrier_wait(&store_bench_bar);
    for (uint64_t j = 0; j < sb.ops; j++) {
        uint64_t i = splitmix64(&s) % (a->n - (uint64_t)sb.len);
        make_key(i, 0, k);
        store_scan_opts so;
        store_scan_opts_init(&so);
        so.read.now_ms = STORE_BENCH_TS;
        so.start = k;
        so.start_len = KEY_LEN;
        so.limit = (uint64_t)sb.len;
        kiln_err err;
        status_clear(&err);
        int rows = 0, wrong = 0;
        uint64_t t0 = now_ns();
        store_scan *sc = NULL;
        kiln_status st = store_scan_open(a->v, &so, &sc, &err);
        while (st == KILN_OK) {
            store_row r;
            int has;
            st = store_scan_next(sc, &r, &has, &err);
            if (st != KILN_OK || !has)
                break;
            make_key(i + (uint64_t)rows, 0, want);
            if (r.row.n != KEY_LEN || memcmp(r.row.p, want, KEY_LEN) != 0)
                wrong = 1;
            rows++;
        }
        store_scan_close(sc);
        a->lat[j] = (uint32_t)(now_ns() - t0);
        if (st != KILN_OK && a->errors++ == 0)
            a->err = err;
        a->rows += (uint64_t)rows;
        if (rows != sb.len || wrong || st != KILN_OK)
            a->bad++;
    }
    return NULL;
}

static int
store_bench_reads(const char *data, uint64_t n, int scan)
{
    kiln_err err;
    status_clear(&err);
    block_cache *cache = block_cache_new(sb.cache_mb << 20);
    store_view *v;
    double to = now_s();
    if (store_view_open(data, STORE_BENCH_TABLE, cache, &v, &err) != KILN_OK) {
        block_cache_free(cache);
        return store_bench_fail(&err);
    }
    printf("open: version %llu, %zu regions in %.2f ms\n",
           (unsigned long long)store_view_version(v), store_view_region_count(v),
           (now_s() - to) * 1e3);
    double tw = now_s();
    if (sb.warm) {
        uint64_t rows;
        if (store_view_count(v, NULL, &rows, &err) != KILN_OK)
            return store_bench_fail(&err);
        printf("warm: scanned %llu rows in %.2fs\n", (unsigned long long)rows, now_s() - tw);
    } else {
        store_row_buf *buf = store_row_buf_new();
        uint64_t s = 999;
        uint8_t k[KEY_LEN];
        for (int j = 0; j < 100000; j++) {
            store_row r;
            make_key(splitmix64(&s) % n, 0, k);
            if (store_view_get(v, k, KEY_LEN, NULL, buf, &r, &err) != KILN_OK)
                return store_bench_fail(&err);
        }
        store_row_buf_free(buf);
        printf("warmup: 100k random gets in %.2fs\n", now_s() - tw);
    }
    fflush(stdout);
    int nt = sb.threads;
    store_bench_thread *a = calloc((size_t)nt, sizeof *a);
    size_t tot = (size_t)nt * sb.ops;
    uint32_t *all = malloc(tot * sizeof(uint32_t));
    if (a == NULL || all == NULL)
        return EX_OSERR;
    pthread_barrier_init(&store_bench_bar, NULL, (unsigned)nt + 1);
    for (int t = 0; t < nt; t++) {
        a[t].v = v;
        a[t].n = n;
        a[t].tid = t;
        a[t].lat = all + (size_t)t * sb.ops;
        pthread_create(&a[t].th, NULL, scan ? store_bench_scan_thread : store_bench_get_thread,
                       &a[t]);
    }
    pthread_barrier_wait(&store_bench_bar);
    double t0 = now_s();
    for (int t = 0; t < nt; t++)
        pthread_join(a[t].th, NULL);
    double dt = now_s() - t0;
    pthread_barrier_destroy(&store_bench_bar);
    uint64_t found = 0, nf = 0, bad = 0, rows = 0, errors = 0;
    for (int t = 0; t < nt; t++) {
        found += a[t].found;
        nf += a[t].notfound;
        bad += a[t].bad;
        rows += a[t].rows;
        if (a[t].errors && errors == 0)
            err = a[t].err;
        errors += a[t].errors;
    }
    qsort(all, tot, sizeof(uint32_t), cmp_u32);
    double mean = 0;
    for (size_t i = 0; i < tot; i++)
        mean += all[i];
    mean /= (double)tot;
    printf("%s threads=%d ops=%zu missing=%d cache_mb=%zu warm=%d secs=%.3f ops_per_s=%.0f "
           "mean_us=%.2f p50_us=%.2f p99_us=%.2f p999_us=%.2f found=%llu notfound=%llu "
           "bad=%llu rows=%llu errors=%llu\n",
           scan ? "scan" : "get", nt, tot, sb.missing, sb.cache_mb, sb.warm, dt, tot / dt,
           mean / 1000, pct_us(all, tot, 0.50), pct_us(all, tot, 0.99), pct_us(all, tot, 0.999),
           (unsigned long long)found, (unsigned long long)nf, (unsigned long long)bad,
           (unsigned long long)rows, (unsigned long long)errors);
    free(all);
    free(a);
    store_view_unref(v);
    block_cache_free(cache);
    if (errors)
        return store_bench_fail(&err);
    return 0;
}

/* ------------------------------------------------------------------ main */

static int
store_bench_num(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *s == '\0' || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(store_bench_usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? EX_USAGE : 0;
    }
    const char *cmd = argv[1];
    char *pos[16];
    int npos = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        uint64_t v = 0;
        int need = strcmp(a, "--regions") == 0 || strcmp(a, "--block-size") == 0 ||
                   strcmp(a, "--data-version") == 0 || strcmp(a, "--rounds") == 0 ||
                   strcmp(a, "--threads") == 0 || strcmp(a, "--ops") == 0 ||
                   strcmp(a, "--cache-mb") == 0 || strcmp(a, "--len") == 0;
        if (need) {
            if (i + 1 >= argc || store_bench_num(argv[i + 1], &v) != 0) {
                fprintf(stderr, "kiln-store-bench: %s needs a number\n", a);
                return EX_USAGE;
            }
            i++;
            if (strcmp(a, "--regions") == 0)
                sb.regions = (int)v;
            else if (strcmp(a, "--block-size") == 0)
                sb.block = (size_t)v;
            else if (strcmp(a, "--data-version") == 0)
                sb.data_version = v;
            else if (strcmp(a, "--rounds") == 0)
                sb.rounds = (int)v;
            else if (strcmp(a, "--threads") == 0)
                sb.threads = (int)v;
            else if (strcmp(a, "--ops") == 0)
                sb.ops = v;
            else if (strcmp(a, "--cache-mb") == 0)
                sb.cache_mb = (size_t)v;
            else
                sb.len = (int)v;
        } else if (strcmp(a, "--warm") == 0) {
            sb.warm = 1;
        } else if (strcmp(a, "--missing") == 0) {
            sb.missing = 1;
        } else if (a[0] == '-') {
            fprintf(stderr, "kiln-store-bench: unknown option %s\n", a);
            return EX_USAGE;
        } else if (npos < 16) {
            pos[npos++] = argv[i];
        }
    }
    if (sb.regions < 1 || sb.threads < 1 || sb.ops < 1 || sb.len < 1) {
        fprintf(stderr, "kiln-store-bench: counts must be positive\n");
        return EX_USAGE;
    }
    uint64_t n = 0;
    if (strcmp(cmd, "build") == 0 && npos == 2 && store_bench_num(pos[1], &n) == 0 && n > 0)
        return store_bench_build(pos[0], n);
    if (strcmp(cmd, "load") == 0 && npos >= 2)
        return store_bench_load(pos[0], pos + 1, npos - 1);
    if (strcmp(cmd, "rollback") == 0 && npos == 1)
        return store_bench_rollback(pos[0]);
    if ((strcmp(cmd, "get") == 0 || strcmp(cmd, "scan") == 0) && npos == 2 &&
        store_bench_num(pos[1], &n) == 0 && n > (uint64_t)sb.len)
        return store_bench_reads(pos[0], n, strcmp(cmd, "scan") == 0);
    fputs(store_bench_usage_text, stderr);
    return EX_USAGE;
}
