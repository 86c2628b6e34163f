/* put_bench.c -- kiln-put-bench: the speed layer's write path on the shared
 * dataset (bench/dataset.h). `put` runs random Puts of the dataset's rows
 * (16-byte keys, 100-byte values) from T threads through speed_mutate with
 * one durability and prints throughput and per-op latency; `get` fills the
 * memstores of a fresh table without flushing and times random Gets of the
 * written rows against them, then after speed_flush, then on the published
 * version alone (a read-only table), so the memstores' cost to a Get shows
 * as a ratio of p99s. bench/rocks_put_bench.c does `put` on RocksDB.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include "dataset.h"
#include "storage/base/block_cache.h"
#include "storage/base/env.h"
#include "storage/hfile/cell.h"
#include "storage/store/mutation.h"
#include "storage/store/schema.h"
#include "storage/store/speed.h"
#include "storage/store/store_view.h"
#include "storage/store/table.h"

#define PUT_BENCH_TABLE "bench"
#define PUT_BENCH_BATCH 256   /* rows per speed_mutate when `get` fills the memstores */

static const char put_bench_usage_text[] =
    "Usage: kiln-put-bench put DATA [--threads T] [--ops N] [--keys K]\n"
    "                      [--durability SYNC_WAL|ASYNC_WAL|SKIP_WAL] [--flush-mb M]\n"
    "       kiln-put-bench get DATA [--rows R] [--ops G] [--threads T] [--cache-mb C]\n"
    "       kiln-put-bench compact DATA [--rows R]\n"
    "       kiln-put-bench --help | --version\n"
    "\n"
    "DATA must not hold a table 'bench' yet (give a fresh directory): each command\n"
    "create it there (family 'f', one region) and write its rows as qualifier 'v'.\n"
    "\n"
    "put  N Puts in all (default 200000), split over T threads (default 1), each\n"
    "     of dataset row splitmix64(RUN_SEED + thread) % K (default K = N), one row\n"
    "     per speed_mutate with durability D (default SYNC_WAL), the background\n"
    "     flusher on with a flush size of M MiB (default 64). Prints one line\n"
    "     `put ... ops_per_s= p50_us= p99_us= p999_us=` (latency of speed_mutate)\n"
    "     and the table's speed-layer counters.\n"
    "get  write rows 0..R-1 (default 250000, about one default 64 MiB memstore) with\n"
    "     SKIP_WAL and no flush, then G random Gets of them (default 500000) over\n"
    "     T threads, three times: with every row in the memstores (get_mem), after\n"
    "     speed_flush (get_flushed), and through a store view of the published\n"
    "     version without the speed layer (get_readonly); each read warm, once\n"
    "     over every row first. Block cache C MiB (default 1024). The last line\n"
    "     gives p99 get_mem / get_readonly.\n"
    "compact  write rows 0..R-1 four times, flushing after each (four files, every\n"
    "     row in each), then time one major compaction, unthrottled, and the disk's\n"
    "     sequential write speed (a file as large as its output, fdatasync'd): the\n"
    "     line gives the merge's input and output MB/s, the disk's, and input/disk.\n"
    "\n"
    "Output lines are `name key=value ...`, as kiln-bench prints them.\n";

typedef struct put_bench_opts {
    int threads;
    uint64_t ops, keys, rows;
    int ops_set;
    size_t flush_mb, cache_mb;
    kiln_durability dur;
} put_bench_opts;

static put_bench_opts pb = {1, 200000, 0, 250000, 0, 64, 1024, KILN_DUR_SYNC_WAL};

static int
put_bench_fail(const kiln_err *err)
{
    fprintf(stderr, "kiln-put-bench: %s\n", err->msg[0] ? err->msg : status_name(err->code));
    return status_exit_code(err->code);
}

/* Create table 'bench' in data; KILN_EXISTS if it is there. */
static kiln_status
put_bench_create(const char *data, kiln_err *err)
{
    kiln_table *t;
    if (table_open(data, PUT_BENCH_TABLE, &t, err) == KILN_OK) {
        table_close(t);
        status_clear(err);
        return status_set(err, KILN_EXISTS,
                          "%s: already holds table '" PUT_BENCH_TABLE "': give a fresh directory",
                          data);
    }
    status_clear(err);
    if (env_mkdirs(data, 0755, err) != KILN_OK)
        return err->code;
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, PUT_BENCH_TABLE);
    schema_family f;
    schema_family_defaults(&f, "f");
    kiln_status st = schema_add_family(&s, &f, err);
    if (st == KILN_OK)
        st = table_create(data, &s, err);
    schema_free(&s);
    return st;
}

/* Bytes of the files in data/wal (the log's volume after a run). */
static uint64_t
put_bench_wal_bytes(const char *data)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/" SPEED_WAL_DIR, data);
    DIR *d = opendir(p);
    if (d == NULL)
        return 0;
    uint64_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat sb;
        char f[4352];
        snprintf(f, sizeof f, "%s/%s", p, e->d_name);
        if (stat(f, &sb) == 0 && S_ISREG(sb.st_mode))
            n += (uint64_t)sb.st_size;
    }
    closedir(d);
    return n;
}

static void
put_bench_latency_line(const char *name, uint32_t *lat, size_t n, double secs)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += lat[i];
    qsort(lat, n, sizeof *lat, cmp_u32);
    printf("%s ops=%zu secs=%.3f ops_per_s=%.0f mean_us=%.2f p50_us=%.2f p99_us=%.2f "
           "p999_us=%.2f max_us=%.1f",
           name, n, secs, secs > 0 ? (double)n / secs : 0.0, n ? sum / (double)n / 1e3 : 0.0,
           pct_us(lat, n, 0.50), pct_us(lat, n, 0.99), pct_us(lat, n, 0.999),
           n ? lat[n - 1] / 1e3 : 0.0);
}

/* ------------------------------------------------------------------ put */

typedef struct put_bench_thread {
    pthread_t th;
    kiln_speed *s;
    int tid;
    uint64_t n;          /* Puts of this thread */
    uint32_t *lat;       /* ns per speed_mutate */
    uint64_t errors;
    kiln_err err;
} put_bench_thread;

static pthread_barrier_t put_bench_bar;

static void *
put_bench_put_thread(void *arg)
{
    put_bench_thread *a = arg;
    uint64_t s = RUN_SEED + (uint64_t)a->tid;
    uint8_t k[KEY_LEN];
    char v[VAL_LEN];
    kiln_err err;
    status_clear(&a->err);
    pthread_barrier_wait(&put_bench_bar);
    for (uint64_t j = 0; j < a->n; j++) {
        uint64_t i = splitmix64(&s) % pb.keys;
        make_key(i, 0, k);
        make_value(i, v);
        kiln_mutation m;
        mutation_init(&m, k, KEY_LEN);
        mutation_put(&m, "f", 1, "v", 1, CELL_LATEST_TIMESTAMP, v, VAL_LEN);
        uint64_t t0 = now_ns();
        kiln_status st = speed_mutate(a->s, PUT_BENCH_TABLE, &m, 1, pb.dur, &err);
        a->lat[j] = (uint32_t)(now_ns() - t0);
        mutation_free(&m);
        if (st != KILN_OK && a->errors++ == 0)
            a->err = err;
    }
    return NULL;
}

static int
put_bench_put(const char *data)
{
    kiln_err err;
    status_clear(&err);
    if (put_bench_create(data, &err) != KILN_OK)
        return put_bench_fail(&err);
    speed_options o;
    speed_options_init(&o);
    o.memstore_flush_bytes = pb.flush_mb << 20;
    kiln_speed *s;
    if (speed_open(data, NULL, &o, &s, &err) != KILN_OK)
        return put_bench_fail(&err);
    int nt = pb.threads;
    put_bench_thread *a = calloc((size_t)nt, sizeof *a);
    uint32_t *all = malloc(pb.ops * sizeof(uint32_t));
    if (a == NULL || all == NULL) {
        speed_close(s);
        return EX_OSERR;
    }
    pthread_barrier_init(&put_bench_bar, NULL, (unsigned)nt + 1);
    uint64_t off = 0;
    for (int t = 0; t < nt; t++) {
        a[t].s = s;
        a[t].tid = t;
        a[t].n = pb.ops * (uint64_t)(t + 1) / (uint64_t)nt - pb.ops * (uint64_t)t / (uint64_t)nt;
        a[t].lat = all + off;
        off += a[t].n;
        pthread_create(&a[t].th, NULL, put_bench_put_thread, &a[t]);
    }
    pthread_barrier_wait(&put_bench_bar);
    double t0 = now_s();
    uint64_t errors = 0;
    for (int t = 0; t < nt; t++) {
        pthread_join(a[t].th, NULL);
        if (a[t].errors > 0 && errors == 0)
            err = a[t].err;
        errors += a[t].errors;
    }
    double secs = now_s() - t0;
    pthread_barrier_destroy(&put_bench_bar);
    speed_table_stats ts;
    memset(&ts, 0, sizeof ts);
    kiln_err serr;
    status_clear(&serr);
    speed_table_stats_get(s, PUT_BENCH_TABLE, &ts, &serr);
    char name[64];
    snprintf(name, sizeof name, "put system=kiln durability=%s threads=%d keys=%llu",
             mutation_durability_name(pb.dur), nt, (unsigned long long)pb.keys);
    put_bench_latency_line(name, all, pb.ops, secs);
    printf(" errors=%llu\n", (unsigned long long)errors);
    printf("speed writes=%llu seq=%llu read_point=%llu flushes=%llu flushed_seq=%llu "
           "memstore_MB=%.1f memstore_cells=%llu wal_MB=%.1f flush_mb=%zu\n",
           (unsigned long long)ts.writes, (unsigned long long)ts.seq,
           (unsigned long long)ts.read_point, (unsigned long long)ts.flushes,
           (unsigned long long)ts.flushed_seq, (double)ts.memstore_bytes / 1e6,
           (unsigned long long)ts.memstore_cells, (double)put_bench_wal_bytes(data) / 1e6,
           pb.flush_mb);
    wal_counters w;
    speed_wal_stats(s, &w);
    printf("wal appends=%llu syncs=%llu synced_records=%llu records_per_sync=%.2f "
           "max_group=%llu files=%llu\n",
           (unsigned long long)w.appends, (unsigned long long)w.syncs,
           (unsigned long long)w.synced_records,
           w.syncs ? (double)w.synced_records / (double)w.syncs : 0.0,
           (unsigned long long)w.max_group, (unsigned long long)w.files);
    double tc = now_s();
    speed_close(s);
    printf("close secs=%.3f\n", now_s() - tc);
    free(all);
    free(a);
    return errors ? put_bench_fail(&err) : 0;
}

/* ------------------------------------------------------------------ get */

typedef struct put_bench_reader {
    pthread_t th;
    store_view *v;
    int tid;
    uint64_t n;
    uint32_t *lat;
    uint64_t found, bad, errors;
    kiln_err err;
} put_bench_reader;

static void *
put_bench_get_thread(void *arg)
{
    put_bench_reader *a = arg;
    store_row_buf *buf = store_row_buf_new();
    uint64_t s = RUN_SEED + 1000 * (uint64_t)a->tid;
    uint8_t k[KEY_LEN];
    char ev[VAL_LEN];
    kiln_err err;
    status_clear(&a->err);
    pthread_barrier_wait(&put_bench_bar);
    for (uint64_t j = 0; j < a->n; j++) {
        uint64_t i = splitmix64(&s) % pb.rows;
        make_key(i, 0, k);
        store_row r;
        uint64_t t0 = now_ns();
        kiln_status st = store_view_get(a->v, k, KEY_LEN, NULL, buf, &r, &err);
        a->lat[j] = (uint32_t)(now_ns() - t0);
        if (st != KILN_OK) {
            if (a->errors++ == 0)
                a->err = err;
            continue;
        }
        if (r.count != 1 || r.cells[0].value_len != VAL_LEN) {
            a->bad++;
            continue;
        }
        a->found++;
        /* the value bytes for every 1024th Get, as kiln-bench checks them */
        if (j % 1024 == 0) {
            make_value(i, ev);
            if (memcmp(ev, r.cells[0].value, VAL_LEN) != 0)
                a->bad++;
        }
    }
    store_row_buf_free(buf);
    return NULL;
}

/* Read every row once (warm), then time pb.ops random Gets on v; prints
 * line `name` and sets *p99_us. */
static int
put_bench_gets(const char *name, store_view *v, double *p99_us)
{
    kiln_err err;
    status_clear(&err);
    uint64_t rows = 0;
    double tw = now_s();
    if (store_view_count(v, NULL, &rows, &err) != KILN_OK)
        return put_bench_fail(&err);
    store_row_buf *wb = store_row_buf_new();
    for (uint64_t i = 0; i < pb.rows; i++) {
        uint8_t k[KEY_LEN];
        store_row r;
        make_key(i, 0, k);
        if (store_view_get(v, k, KEY_LEN, NULL, wb, &r, &err) != KILN_OK) {
            store_row_buf_free(wb);
            return put_bench_fail(&err);
        }
    }
    store_row_buf_free(wb);
    double warm = now_s() - tw;
    int nt = pb.threads;
    put_bench_reader *a = calloc((size_t)nt, sizeof *a);
    uint32_t *all = malloc(pb.ops * sizeof(uint32_t));
    if (a == NULL || all == NULL)
        return EX_OSERR;
    pthread_barrier_init(&put_bench_bar, NULL, (unsigned)nt + 1);
    uint64_t off = 0;
    for (int t = 0; t < nt; t++) {
        a[t].v = v;
        a[t].tid = t;
        a[t].n = pb.ops * (uint64_t)(t + 1) / (uint64_t)nt - pb.ops * (uint64_t)t / (uint64_t)nt;
        a[t].lat = all + off;
        off += a[t].n;
        pthread_create(&a[t].th, NULL, put_bench_get_thread, &a[t]);
    }
    pthread_barrier_wait(&put_bench_bar);
    double t0 = now_s();
    uint64_t found = 0, bad = 0, errors = 0;
    for (int t = 0; t < nt; t++) {
        pthread_join(a[t].th, NULL);
        found += a[t].found;
        bad += a[t].bad;
        if (a[t].errors > 0 && errors == 0)
            err = a[t].err;
        errors += a[t].errors;
    }
    double secs = now_s() - t0;
    pthread_barrier_destroy(&put_bench_bar);
    char label[64];
    snprintf(label, sizeof label, "%s threads=%d rows=%llu", name, nt,
             (unsigned long long)pb.rows);
    put_bench_latency_line(label, all, pb.ops, secs);
    *p99_us = pct_us(all, pb.ops, 0.99);
    printf(" found=%llu bad=%llu errors=%llu counted=%llu warm_secs=%.2f\n",
           (unsigned long long)found, (unsigned long long)bad, (unsigned long long)errors,
           (unsigned long long)rows, warm);
    fflush(stdout);
    free(all);
    free(a);
    if (errors)
        return put_bench_fail(&err);
    return bad || rows != pb.rows ? EX_SOFTWARE : 0;
}

/* Fill the memstores with rows 0..R-1, batches of PUT_BENCH_BATCH rows. */
static int
put_bench_fill(kiln_speed *s)
{
    kiln_err err;
    status_clear(&err);
    kiln_mutation muts[PUT_BENCH_BATCH];
    double t0 = now_s();
    for (uint64_t i = 0; i < pb.rows;) {
        size_t n = 0;
        for (; n < PUT_BENCH_BATCH && i < pb.rows; n++, i++) {
            uint8_t k[KEY_LEN];
            char v[VAL_LEN];
            make_key(i, 0, k);
            make_value(i, v);
            mutation_init(&muts[n], k, KEY_LEN);
            mutation_put(&muts[n], "f", 1, "v", 1, CELL_LATEST_TIMESTAMP, v, VAL_LEN);
        }
        kiln_status st = speed_mutate(s, PUT_BENCH_TABLE, muts, n, KILN_DUR_SKIP_WAL, &err);
        for (size_t j = 0; j < n; j++)
            mutation_free(&muts[j]);
        if (st != KILN_OK)
            return put_bench_fail(&err);
    }
    speed_table_stats ts;
    if (speed_table_stats_get(s, PUT_BENCH_TABLE, &ts, &err) != KILN_OK)
        return put_bench_fail(&err);
    printf("fill rows=%llu secs=%.2f memstore_MB=%.1f memstore_cells=%llu flushes=%llu\n",
           (unsigned long long)pb.rows, now_s() - t0, (double)ts.memstore_bytes / 1e6,
           (unsigned long long)ts.memstore_cells, (unsigned long long)ts.flushes);
    return 0;
}

static int
put_bench_get(const char *data)
{
    kiln_err err;
    status_clear(&err);
    if (put_bench_create(data, &err) != KILN_OK)
        return put_bench_fail(&err);
    block_cache *cache = block_cache_new(pb.cache_mb << 20);
    speed_options o;
    speed_options_init(&o);
    o.memstore_flush_bytes = 0;   /* on demand only: every row stays in the memstores */
    o.flush_check_ms = 0;
    kiln_speed *s;
    if (speed_open(data, cache, &o, &s, &err) != KILN_OK) {
        block_cache_free(cache);
        return put_bench_fail(&err);
    }
    double p_mem = 0, p_flushed = 0, p_ro = 0;
    store_view *v = NULL;
    int rc = put_bench_fill(s);
    if (rc == 0 && speed_view(s, PUT_BENCH_TABLE, &v, &err) != KILN_OK)
        rc = put_bench_fail(&err);
    if (rc == 0)
        rc = put_bench_gets("get_mem", v, &p_mem);
    store_view_unref(v);
    v = NULL;
    double tf = now_s();
    if (rc == 0 && speed_flush(s, PUT_BENCH_TABLE, &err) != KILN_OK)
        rc = put_bench_fail(&err);
    if (rc == 0)
        printf("flush secs=%.2f\n", now_s() - tf);
    if (rc == 0 && speed_view(s, PUT_BENCH_TABLE, &v, &err) != KILN_OK)
        rc = put_bench_fail(&err);
    if (rc == 0)
        rc = put_bench_gets("get_flushed", v, &p_flushed);
    store_view_unref(v);
    v = NULL;
    speed_close(s);
    if (rc == 0 && store_view_open(data, PUT_BENCH_TABLE, cache, &v, &err) != KILN_OK)
        rc = put_bench_fail(&err);
    if (rc == 0)
        rc = put_bench_gets("get_readonly", v, &p_ro);
    store_view_unref(v);
    block_cache_free(cache);
    if (rc == 0)
        printf("get_ratio p99_mem_us=%.2f p99_flushed_us=%.2f p99_readonly_us=%.2f "
               "mem_over_readonly=%.2f flushed_over_readonly=%.2f\n",
               p_mem, p_flushed, p_ro, p_ro > 0 ? p_mem / p_ro : 0.0,
               p_ro > 0 ? p_flushed / p_ro : 0.0);
    return rc;
}

/* Bytes/s of writing n bytes to a new file in dir and fdatasync-ing it: the
 * disk speed a compaction is held against. */
static double
put_bench_disk_rate(const char *dir, uint64_t n)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/disk-rate.tmp", dir);
    FILE *f = fopen(p, "wb");
    if (f == NULL)
        return 0;
    char *buf = malloc(1 << 20);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < (1u << 20); i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (char)x;   /* incompressible, as compressed blocks are */
    }
    double t0 = now_s();
    for (uint64_t done = 0; done < n; done += 1 << 20)
        fwrite(buf, 1, 1 << 20, f);
    fflush(f);
    fdatasync(fileno(f));
    double secs = now_s() - t0;
    fclose(f);
    unlink(p);
    free(buf);
    return secs > 0 ? (double)n / secs : 0;
}

/* compact: ROUNDS flushes of every row (each a newer version of all of
 * them), then one major compaction, unthrottled, timed; and the disk's
 * sequential write speed for as many bytes. */
static int
put_bench_compact(const char *data)
{
    kiln_err err;
    status_clear(&err);
    if (put_bench_create(data, &err) != KILN_OK)
        return put_bench_fail(&err);
    speed_options o;
    speed_options_init(&o);
    o.memstore_flush_bytes = 0;
    o.flush_check_ms = 0;
    o.compact_bytes_per_sec = 0;
    o.compact_min_files = 1000;   /* no minor compaction between the rounds */
    kiln_speed *s;
    if (speed_open(data, NULL, &o, &s, &err) != KILN_OK)
        return put_bench_fail(&err);
    int rc = 0;
    for (int round = 0; round < 4 && rc == 0; round++) {
        rc = put_bench_fill(s);
        if (rc == 0 && speed_flush(s, PUT_BENCH_TABLE, &err) != KILN_OK)
            rc = put_bench_fail(&err);
    }
    speed_compact_stats cs;
    double t0 = now_s();
    if (rc == 0 && speed_compact(s, PUT_BENCH_TABLE, 1, &cs, &err) != KILN_OK)
        rc = put_bench_fail(&err);
    double secs = now_s() - t0;
    speed_close(s);
    if (rc != 0)
        return rc;
    double out_rate = secs > 0 ? (double)cs.bytes_out / secs : 0;
    double in_rate = secs > 0 ? (double)cs.bytes_in / secs : 0;
    double disk = put_bench_disk_rate(data, cs.bytes_out < (64u << 20) ? 64u << 20 : cs.bytes_out);
    printf("compact files_in=%llu bytes_in=%llu cells_in=%llu cells_out=%llu bytes_out=%llu "
           "secs=%.2f in_MB_per_s=%.1f out_MB_per_s=%.1f disk_MB_per_s=%.1f "
           "in_over_disk=%.2f\n",
           (unsigned long long)cs.files_in, (unsigned long long)cs.bytes_in,
           (unsigned long long)cs.cells_in, (unsigned long long)cs.cells_out,
           (unsigned long long)cs.bytes_out, secs, in_rate / 1e6, out_rate / 1e6, disk / 1e6,
           disk > 0 ? in_rate / disk : 0.0);
    return 0;
}

/* ------------------------------------------------------------------ main */

static int
put_bench_num(const char *s, uint64_t *out)
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
        fputs(put_bench_usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? EX_USAGE : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("kiln-put-bench %s\n", KILN_VERSION);
        return 0;
    }
    const char *cmd = argv[1];
    const char *data = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        uint64_t v = 0;
        if (strcmp(a, "--durability") == 0) {
            if (i + 1 >= argc || mutation_durability_parse(argv[i + 1], &pb.dur) != 0 ||
                pb.dur == KILN_DUR_DEFAULT) {
                fprintf(stderr, "kiln-put-bench: --durability takes SYNC_WAL, ASYNC_WAL or "
                                "SKIP_WAL\n");
                return EX_USAGE;
            }
            i++;
        } else if (strcmp(a, "--threads") == 0 || strcmp(a, "--ops") == 0 ||
                   strcmp(a, "--keys") == 0 || strcmp(a, "--rows") == 0 ||
                   strcmp(a, "--flush-mb") == 0 || strcmp(a, "--cache-mb") == 0) {
            if (i + 1 >= argc || put_bench_num(argv[i + 1], &v) != 0) {
                fprintf(stderr, "kiln-put-bench: %s needs a number\n", a);
                return EX_USAGE;
            }
            i++;
            if (strcmp(a, "--threads") == 0)
                pb.threads = (int)v;
            else if (strcmp(a, "--ops") == 0) {
                pb.ops = v;
                pb.ops_set = 1;
            } else if (strcmp(a, "--keys") == 0)
                pb.keys = v;
            else if (strcmp(a, "--rows") == 0)
                pb.rows = v;
            else if (strcmp(a, "--flush-mb") == 0)
                pb.flush_mb = (size_t)v;
            else
                pb.cache_mb = (size_t)v;
        } else if (a[0] == '-') {
            fprintf(stderr, "kiln-put-bench: unknown option %s\n", a);
            return EX_USAGE;
        } else if (data == NULL) {
            data = a;
        } else {
            fprintf(stderr, "kiln-put-bench: one DATA directory only\n");
            return EX_USAGE;
        }
    }
    if (strcmp(cmd, "get") == 0 && !pb.ops_set)
        pb.ops = 500000;
    if (pb.keys == 0)
        pb.keys = pb.ops;
    if (pb.threads < 1 || pb.threads > 1024 || pb.ops < 1 || pb.rows < 1 || pb.keys < 1 ||
        pb.ops > UINT32_MAX) {
        fprintf(stderr, "kiln-put-bench: --threads 1..1024, --ops 1..2^32-1, --rows and --keys "
                        "positive\n");
        return EX_USAGE;
    }
    if (data != NULL && strcmp(cmd, "put") == 0)
        return put_bench_put(data);
    if (data != NULL && strcmp(cmd, "get") == 0)
        return put_bench_get(data);
    if (data != NULL && strcmp(cmd, "compact") == 0)
        return put_bench_compact(data);
    fputs(put_bench_usage_text, stderr);
    return EX_USAGE;
}
