/* rocks_put_bench.c -- rocks-put-bench: kiln-put-bench's `put` on RocksDB
 * (the system librocksdb, through its C API), so that scripts/put_bench.sh
 * can pair the two: the same dataset rows (bench/dataset.h), the same
 * per-thread key streams, one row per DB::Put with WriteOptions.sync on or
 * off and the WAL on, and the same `put ... ops_per_s= p50_us= ...` line.
 * The DB keeps RocksDB's defaults (64 MiB write buffer, as Kiln's default
 * flush size; snappy; two background jobs) apart from create_if_missing.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include <rocksdb/c.h>

#include "dataset.h"

static const char rocks_put_usage_text[] =
    "Usage: rocks-put-bench put DB [--threads T] [--ops N] [--keys K] [--sync 0|1]\n"
    "       rocks-put-bench --help | --version\n"
    "\n"
    "Creates the RocksDB database DB (it must not exist) and runs N Puts in all\n"
    "(default 200000) over T threads (default 1), each of dataset row\n"
    "splitmix64(RUN_SEED + thread) % K (default K = N) as kiln-put-bench put does,\n"
    "with WriteOptions.sync = S (default 1) and the WAL on. Prints one line\n"
    "`put system=rocksdb ... ops_per_s= p50_us= p99_us= p999_us=` (latency of\n"
    "rocksdb_put).\n";

typedef struct rocks_put_thread {
    pthread_t th;
    rocksdb_t *db;
    const rocksdb_writeoptions_t *wo;
    int tid;
    uint64_t n, keys;
    uint32_t *lat;
    uint64_t errors;
    char err[256];
} rocks_put_thread;

static pthread_barrier_t rocks_put_bar;

static void *
rocks_put_thread_run(void *arg)
{
    rocks_put_thread *a = arg;
    uint64_t s = RUN_SEED + (uint64_t)a->tid;
    uint8_t k[KEY_LEN];
    char v[VAL_LEN];
    pthread_barrier_wait(&rocks_put_bar);
    for (uint64_t j = 0; j < a->n; j++) {
        uint64_t i = splitmix64(&s) % a->keys;
        make_key(i, 0, k);
        make_value(i, v);
        char *err = NULL;
        uint64_t t0 = now_ns();
        rocksdb_put(a->db, a->wo, (const char *)k, KEY_LEN, v, VAL_LEN, &err);
        a->lat[j] = (uint32_t)(now_ns() - t0);
        if (err != NULL) {
            if (a->errors++ == 0)
                snprintf(a->err, sizeof a->err, "%s", err);
            rocksdb_free(err);
        }
    }
    return NULL;
}

static int
rocks_put_num(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *s == '\0' || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int
rocks_put_run(const char *path, int nt, uint64_t ops, uint64_t keys, int sync)
{
    rocksdb_options_t *o = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(o, 1);
    rocksdb_options_set_error_if_exists(o, 1);
    char *err = NULL;
    rocksdb_t *db = rocksdb_open(o, path, &err);
    if (err != NULL) {
        fprintf(stderr, "rocks-put-bench: %s: %s\n", path, err);
        rocksdb_free(err);
        rocksdb_options_destroy(o);
        return EX_CANTCREAT;
    }
    rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(wo, (unsigned char)sync);
    rocksdb_writeoptions_disable_WAL(wo, 0);
    rocks_put_thread *a = calloc((size_t)nt, sizeof *a);
    uint32_t *all = malloc(ops * sizeof(uint32_t));
    if (a == NULL || all == NULL)
        return EX_OSERR;
    pthread_barrier_init(&rocks_put_bar, NULL, (unsigned)nt + 1);
    uint64_t off = 0;
    for (int t = 0; t < nt; t++) {
        a[t].db = db;
        a[t].wo = wo;
        a[t].tid = t;
        a[t].keys = keys;
        a[t].n = ops * (uint64_t)(t + 1) / (uint64_t)nt - ops * (uint64_t)t / (uint64_t)nt;
        a[t].lat = all + off;
        off += a[t].n;
        pthread_create(&a[t].th, NULL, rocks_put_thread_run, &a[t]);
    }
    pthread_barrier_wait(&rocks_put_bar);
    double t0 = now_s();
    uint64_t errors = 0;
    const char *first = NULL;
    for (int t = 0; t < nt; t++) {
        pthread_join(a[t].th, NULL);
        if (a[t].errors > 0 && first == NULL)
            first = a[t].err;
        errors += a[t].errors;
    }
    double secs = now_s() - t0;
    pthread_barrier_destroy(&rocks_put_bar);
    double sum = 0;
    for (uint64_t i = 0; i < ops; i++)
        sum += all[i];
    qsort(all, ops, sizeof *all, cmp_u32);
    printf("put system=rocksdb sync=%d threads=%d keys=%llu ops=%llu secs=%.3f ops_per_s=%.0f "
           "mean_us=%.2f p50_us=%.2f p99_us=%.2f p999_us=%.2f max_us=%.1f errors=%llu\n",
           sync, nt, (unsigned long long)keys, (unsigned long long)ops, secs,
           (double)ops / secs, sum / (double)ops / 1e3, pct_us(all, ops, 0.50),
           pct_us(all, ops, 0.99), pct_us(all, ops, 0.999), all[ops - 1] / 1e3,
           (unsigned long long)errors);
    char *l0 = rocksdb_property_value(db, "rocksdb.num-files-at-level0");
    char *imm = rocksdb_property_value(db, "rocksdb.num-immutable-mem-table");
    char *mem = rocksdb_property_value(db, "rocksdb.cur-size-active-mem-table");
    printf("rocksdb l0_files=%s immutable_memtables=%s active_memtable_MB=%.1f\n",
           l0 ? l0 : "?", imm ? imm : "?", mem ? strtod(mem, NULL) / 1e6 : 0.0);
    rocksdb_free(l0);
    rocksdb_free(imm);
    rocksdb_free(mem);
    double tc = now_s();
    rocksdb_close(db);
    printf("close secs=%.3f\n", now_s() - tc);
    if (first != NULL)
        fprintf(stderr, "rocks-put-bench: put: %s\n", first);
    rocksdb_writeoptions_destroy(wo);
    rocksdb_options_destroy(o);
    free(all);
    free(a);
    return errors ? EX_IOERR : 0;
}

int
main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(rocks_put_usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? EX_USAGE : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("rocks-put-bench %s\n", KILN_VERSION);
        return 0;
    }
    const char *path = NULL;
    uint64_t threads = 1, ops = 200000, keys = 0, sync = 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        uint64_t *dst = strcmp(a, "--threads") == 0 ? &threads
                        : strcmp(a, "--ops") == 0   ? &ops
                        : strcmp(a, "--keys") == 0  ? &keys
                        : strcmp(a, "--sync") == 0  ? &sync
                                                    : NULL;
        if (dst != NULL) {
            if (i + 1 >= argc || rocks_put_num(argv[i + 1], dst) != 0) {
                fprintf(stderr, "rocks-put-bench: %s needs a number\n", a);
                return EX_USAGE;
            }
            i++;
        } else if (a[0] == '-') {
            fprintf(stderr, "rocks-put-bench: unknown option %s\n", a);
            return EX_USAGE;
        } else if (path == NULL) {
            path = a;
        } else {
            fprintf(stderr, "rocks-put-bench: one DB directory only\n");
            return EX_USAGE;
        }
    }
    if (keys == 0)
        keys = ops;
    if (strcmp(argv[1], "put") != 0 || path == NULL || threads < 1 || threads > 1024 ||
        ops < 1 || ops > UINT32_MAX || sync > 1) {
        fputs(rocks_put_usage_text, stderr);
        return EX_USAGE;
    }
    return rocks_put_run(path, (int)threads, ops, keys, (int)sync);
}
