/* kiln_bench.c -- kiln-bench: Kiln's side of the serving benchmarks. It takes
 * the commands, arguments and defaults of the RocksDB anchor harness
 * (rocksdb_bench/rbench.c of the peers), uses the same rows (bench/dataset.h)
 * and prints the same key=value fields, so that one script can run both in
 * turn and compare medians. Row i of the dataset is one HBase cell: row = the
 * 16-byte dataset key, family "f", qualifier "v", timestamp KILN_BENCH_TS, Put,
 * value = the 100-byte dataset value. Gets go through the row bloom and one
 * iterator seek on one reader and one block cache shared by all threads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sysexits.h>

#include "dataset.h"
#include "storage/base/block_cache.h"
#include "storage/hfile/bloom.h"
#include "storage/hfile/cell.h"
#include "storage/base/compress.h"
#include "storage/base/slab.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/base/status.h"

#define KILN_BENCH_FAMILY "f"
#define KILN_BENCH_QUALIFIER "v"
#define KILN_BENCH_TS 1700000000000LL   /* TS0 in milliseconds */
#define KILN_BENCH_WARMUP_GETS 100000

static const char kiln_bench_usage_text[] =
    "Usage: kiln-bench gen   N\n"
    "       kiln-bench tsv   FILE N        kiln-bench dump FILE N\n"
    "       kiln-bench write FILE N [--block-size B] [--compression C] [--bloom B]\n"
    "                        [--uid-offset X] [--data-version V] [--writer-threads W]\n"
    "       kiln-bench get   FILE N [--threads T] [--ops K] [--cache-mb M] [--warm]\n"
    "                        [--missing]\n"
    "       kiln-bench scan  FILE N [--threads T] [--ops K] [--cache-mb M] [--warm]\n"
    "                        [--len L]\n"
    "\n"
    "Kiln's HFile benchmarks on the dataset of rocksdb_bench/dataset.h (16-byte\n"
    "keys, 100-byte values), with rbench's commands, defaults and key=value output.\n"
    "Each dataset row is one cell: row = the key, family 'f', qualifier 'v',\n"
    "timestamp 1700000000000, type Put, value = the dataset value.\n"
    "\n"
    "  gen      time key and value generation only\n"
    "  tsv      write rows 0..N-1 as importtsv input lines, ROWHEX<TAB>VALUE\n"
    "           (ROWHEX: the key's 32 lower-case hex digits, which sort as the\n"
    "           key does), for importtsv.columns=HBASE_ROW_KEY,f:v\n"
    "  dump     write the same cells as tsv in `kiln hfile dump` form\n"
    "           (ROWHEX, f:v, 1700000000000, Put, VALUE), for `kiln hfile write`;\n"
    "           FILE - is standard output for both\n"
    "  write    write rows 0..N-1 into one HFile with hfile_writer (fsynced, as\n"
    "           SstFileWriter is); prints n, block, secs, keys_per_s, raw_MB,\n"
    "           raw_MBps, file_MB, file_MBps, ratio (file / raw key+value bytes)\n"
    "  get      random point Gets of existing (or --missing) rows from T threads,\n"
    "           each on the splitmix64 stream seeded 42+1000*thread (+7 missing):\n"
    "           row bloom check, then an iterator seek, on one shared reader and\n"
    "           block cache. Every value found is compared with the dataset's;\n"
    "           bad= counts wrong answers (a missing row found, an existing row\n"
    "           not found, a wrong value)\n"
    "  scan     random forward scans of L rows from a random existing row\n"
    "           (stream 42+1000*thread+13), a new iterator per scan; bad= counts\n"
    "           scans that returned a wrong row or fewer than L rows\n"
    "\n"
    "Options (defaults as rbench):\n"
    "  --block-size B       data block size in bytes (4096)\n"
    "  --compression C      snappy|none|gz|lz4|zstd (snappy)\n"
    "  --bloom B            none|row|rowcol, or rbench's bits per key: 0 = none,\n"
    "                       > 0 = row (row; HBase's 1% error rate is ~10 bits/key)\n"
    "  --uid-offset X       shift user ids (a non-overlapping second dataset)\n"
    "  --data-version V     dataset value version (rbench's --version)\n"
    "  --writer-threads W   write: 1 = compress and write blocks on the writer's\n"
    "                       background thread, 0 = on the adding thread (1)\n"
    "  --threads T          reader threads (1)\n"
    "  --ops K              operations per thread (1000000)\n"
    "  --cache-mb M         block cache size in MiB (4096)\n"
    "  --warm               fill the block cache with a full scan first (else\n"
    "                       100k random gets on another stream warm the index)\n"
    "  --missing            look up rows that are never present\n"
    "  --len L              rows per scan (100)\n"
    "  --readonly           accepted for rbench compatibility (HFiles are)\n"
    "  -h, --help           this help\n"
    "  -V, --version        print the version\n"
    "\n"
    "Every read result line also carries max_rss_mb= (peak resident set) and\n"
    "hugetlb_mb= (cache memory from the reserved huge page pool, vm.nr_hugepages,\n"
    "which the resident set does not count).\n";

typedef struct kiln_bench_opts {
    size_t block;
    kiln_codec codec;
    kiln_bloom_type bloom;
    uint64_t uid_offset, data_version;
    int threads, warm, missing, len, writer_threads;
    uint64_t ops;
    size_t cache_mb;
} kiln_bench_opts;

static kiln_bench_opts kiln_bench_o = {
    .block = 4096,
    .codec = CODEC_SNAPPY,
    .bloom = BLOOM_ROW,
    .threads = 1,
    .ops = 1000000,
    .cache_mb = 4096,
    .len = 100,
    .writer_threads = 1,
};

static double
kiln_bench_max_rss_mb(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_maxrss / 1024.0;
}

static int
kiln_bench_fail(const kiln_err *err)
{
    fprintf(stderr, "kiln-bench: %s\n", err->msg[0] ? err->msg : status_name(err->code));
    return status_exit_code(err->code);
}

/* ------------------------------------------------------------------ values */

static char *
kiln_bench_put_dec(char *p, uint64_t v)
{
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0)
        *p++ = tmp[--n];
    return p;
}

/* dataset.h's make_value_v without snprintf, so that checking every Get's
 * value costs tens of nanoseconds, not a formatted print. kiln_bench_value_selftest
 * holds it to make_value_v. */
static void
kiln_bench_value(uint64_t i, uint64_t version, char out[VAL_LEN])
{
    static const char hex[] = "0123456789abcdef";
    uint64_t a = mix1(i ^ VALUE_SEED ^ (version << 48)), b = mix1(a);
    char buf[192], *p = buf;
    memcpy(p, "{\"uid\":", 7);
    p = kiln_bench_put_dec(p + 7, UID_BASE + 2 * (i / ROWS_PER_USER));
    memcpy(p, ",\"ts\":", 6);
    p = kiln_bench_put_dec(p + 6, TS0 - 60 * (i % ROWS_PER_USER));
    memcpy(p, ",\"clicks\":", 10);
    p = kiln_bench_put_dec(p + 10, (unsigned)(a % 1000));
    memcpy(p, ",\"v\":", 5);
    p = kiln_bench_put_dec(p + 5, version);
    memcpy(p, ",\"tag\":\"", 8);
    p += 8;
    for (int k = 0; k < 16; k++) {
        p[k] = hex[(a >> (4 * k)) & 15];
        p[16 + k] = hex[(b >> (4 * k)) & 15];
    }
    p += 32;
    memcpy(p, "\"}", 2);
    p += 2;
    size_t n = (size_t)(p - buf);
    if (n > VAL_LEN)
        n = VAL_LEN;
    memcpy(out, buf, n);
    memset(out + n, ' ', VAL_LEN - n);
}

static int
kiln_bench_value_selftest(void)
{
    uint64_t s = 7;
    for (int j = 0; j < 10000; j++) {
        uint64_t i = j < 100 ? (uint64_t)j : splitmix64(&s);
        uint64_t v = (uint64_t)(j % 3);
        char a[VAL_LEN], b[VAL_LEN];
        make_value_v(i, v, a);
        kiln_bench_value(i, v, b);
        if (memcmp(a, b, VAL_LEN) != 0) {
            fprintf(stderr, "kiln-bench: internal: value generator differs from dataset.h at %llu\n",
                    (unsigned long long)i);
            return -1;
        }
    }
    return 0;
}

static void
kiln_bench_cell(kiln_cell *c, const uint8_t *key, const char *value)
{
    memset(c, 0, sizeof *c);
    c->row = key;
    c->row_len = KEY_LEN;
    c->family = (const uint8_t *)KILN_BENCH_FAMILY;
    c->family_len = 1;
    c->qualifier = (const uint8_t *)KILN_BENCH_QUALIFIER;
    c->qualifier_len = 1;
    c->ts = KILN_BENCH_TS;
    c->type = CELL_TYPE_PUT;
    c->value = (const uint8_t *)value;
    c->value_len = VAL_LEN;
}

/* ------------------------------------------------------------------ gen, write */

static int
kiln_bench_gen(uint64_t n)
{
    uint8_t k[KEY_LEN];
    char v[VAL_LEN];
    uint64_t sink = 0;
    double t0 = now_s();
    for (uint64_t i = 0; i < n; i++) {
        make_key_off(i, 0, kiln_bench_o.uid_offset, k);
        make_value_v(i, kiln_bench_o.data_version, v);
        sink += k[15] + (uint8_t)v[50];
    }
    double dt = now_s() - t0;
    printf("gen n=%llu secs=%.3f keys_per_s=%.0f (sink %llu)\n", (unsigned long long)n, dt,
           n / dt, (unsigned long long)sink);
    return 0;
}

/* Rows 0..n-1 as text lines: importtsv's input (dump = 0) or the same cells
 * in `kiln hfile dump` form (dump = 1). */
static int
kiln_bench_text(const char *path, uint64_t n, int dump)
{
    static const char hex[] = "0123456789abcdef";
    FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
    if (f == NULL) {
        fprintf(stderr, "kiln-bench: %s: %s\n", path, strerror(errno));
        return EX_CANTCREAT;
    }
    static char buf[1 << 16];
    setvbuf(f, buf, _IOFBF, sizeof buf);
    uint8_t k[KEY_LEN];
    char v[VAL_LEN], row[2 * KEY_LEN];
    for (uint64_t i = 0; i < n; i++) {
        make_key_off(i, 0, kiln_bench_o.uid_offset, k);
        make_value_v(i, kiln_bench_o.data_version, v);
        for (int j = 0; j < KEY_LEN; j++) {
            row[2 * j] = hex[k[j] >> 4];
            row[2 * j + 1] = hex[k[j] & 15];
        }
        fwrite(row, 1, sizeof row, f);
        if (dump)
            fprintf(f, "\t%s:%s\t%lld\tPut", KILN_BENCH_FAMILY, KILN_BENCH_QUALIFIER,
                    (long long)KILN_BENCH_TS);
        putc('\t', f);
        fwrite(v, 1, VAL_LEN, f);
        putc('\n', f);
    }
    int bad = fflush(f) != 0 || ferror(f);
    if (f != stdout && fclose(f) != 0)
        bad = 1;
    if (bad) {
        fprintf(stderr, "kiln-bench: %s: %s\n", path, strerror(errno));
        return EX_IOERR;
    }
    return 0;
}

static int
kiln_bench_write(const char *path, uint64_t n)
{
    hfile_writer_options o;
    hfile_writer_options_init(&o);
    o.codec = kiln_bench_o.codec;
    o.block_size = kiln_bench_o.block;
    o.bloom = kiln_bench_o.bloom;
    o.threads = kiln_bench_o.writer_threads;
    kiln_err err;
    status_clear(&err);
    hfile_writer *w = NULL;
    hfile_writer_stats st;
    uint8_t k[KEY_LEN];
    char v[VAL_LEN];
    kiln_cell c;
    /* Generation is timed, as in rbench write. */
    double t0 = now_s();
    if (hfile_writer_open(path, &o, &w, &err) != KILN_OK)
        return kiln_bench_fail(&err);
    for (uint64_t i = 0; i < n; i++) {
        make_key_off(i, 0, kiln_bench_o.uid_offset, k);
        make_value_v(i, kiln_bench_o.data_version, v);
        kiln_bench_cell(&c, k, v);
        if (hfile_writer_add(w, &c, &err) != KILN_OK) {
            hfile_writer_abandon(w);
            return kiln_bench_fail(&err);
        }
    }
    if (hfile_writer_finish(w, &st, &err) != KILN_OK)
        return kiln_bench_fail(&err);
    double dt = now_s() - t0;
    double raw = (double)n * (KEY_LEN + VAL_LEN);
    double fsz = (double)st.file_size;
    printf("write n=%llu block=%zu bloom=%s comp=%s writer_threads=%d secs=%.3f keys_per_s=%.0f raw_MB=%.1f "
           "raw_MBps=%.1f file_MB=%.1f file_MBps=%.1f ratio=%.3f data_blocks=%llu "
           "index_levels=%u max_rss_mb=%.1f\n",
           (unsigned long long)n, kiln_bench_o.block, bloom_type_name(kiln_bench_o.bloom),
           compress_codec_name(kiln_bench_o.codec), kiln_bench_o.writer_threads, dt, n / dt, raw / 1e6, raw / 1e6 / dt, fsz / 1e6,
           fsz / 1e6 / dt, fsz / raw, (unsigned long long)st.data_blocks, st.index_levels,
           kiln_bench_max_rss_mb());
    return 0;
}

/* ------------------------------------------------------------------ reads */

typedef struct kiln_bench_thread {
    hfile_reader *r;
    uint64_t n;
    int tid;
    int scan;
    uint32_t *lat;
    uint64_t found, notfound, bad, rows, errors;
    uint64_t start_ns, end_ns;    /* this thread's measured phase */
    kiln_err err;                 /* first read error of this thread */
    pthread_t th;
} kiln_bench_thread;

static pthread_barrier_t kiln_bench_bar;

/* One Get: 1 found (*out set), 0 absent, -1 on a read error. */
static int
kiln_bench_get_one(hfile_reader *r, hfile_iter *it, const uint8_t *key, const kiln_cell **out,
              kiln_err *err)
{
    if (!hfile_reader_may_contain_row(r, key, KEY_LEN, err))
        return 0;
    if (err->code != KILN_OK)
        return -1;
    kiln_cell k;
    cell_first_on_row(&k, key, KEY_LEN);
    if (hfile_iter_seek(it, &k, err) != KILN_OK)
        return -1;
    if (!hfile_iter_valid(it))
        return 0;
    const kiln_cell *c = hfile_iter_cell(it);
    if (c->row_len != KEY_LEN || memcmp(c->row, key, KEY_LEN) != 0)
        return 0;
    *out = c;
    return 1;
}

static int
kiln_bench_cell_ok(const kiln_cell *c, uint64_t i)
{
    char ev[VAL_LEN];
    if (c->family_len != 1 || c->family[0] != 'f' || c->qualifier_len != 1 ||
        c->qualifier[0] != 'v' || c->value_len != VAL_LEN || c->type != CELL_TYPE_PUT)
        return 0;
    kiln_bench_value(i, kiln_bench_o.data_version, ev);
    return memcmp(ev, c->value, VAL_LEN) == 0;
}

static void *
kiln_bench_get_thread(void *arg)
{
    kiln_bench_thread *a = arg;
    hfile_iter *it = hfile_iter_new(a->r);
    uint64_t s = RUN_SEED + 1000 * (uint64_t)a->tid + (kiln_bench_o.missing ? 7 : 0);
    uint8_t k[KEY_LEN];
    status_clear(&a->err);
    pthread_barrier_wait(&kiln_bench_bar);
    a->start_ns = now_ns();
    for (uint64_t j = 0; j < kiln_bench_o.ops; j++) {
        uint64_t i = splitmix64(&s) % a->n;
        make_key(i, kiln_bench_o.missing, k);
        const kiln_cell *c = NULL;
        kiln_err err;
        status_clear(&err);
        uint64_t t0 = now_ns();
        int rc = kiln_bench_get_one(a->r, it, k, &c, &err);
        uint64_t t1 = now_ns();
        a->lat[j] = (uint32_t)(t1 - t0);
        if (rc < 0) {
            if (a->errors++ == 0)
                a->err = err;
            a->bad++;
        } else if (rc == 1) {
            a->found++;
            if (kiln_bench_o.missing || !kiln_bench_cell_ok(c, i))
                a->bad++;
        } else {
            a->notfound++;
            if (!kiln_bench_o.missing)
                a->bad++;
        }
    }
    a->end_ns = now_ns();
    hfile_iter_free(it);
    return NULL;
}

/* Each scan is checked after its clock stops, as the peer's harness leaves
 * its checks out of the timed loop: inside it, a row's key is only copied
 * aside (a wrong length marks it) and the key's and value's last bytes are
 * read, as the peer reads them. */
static void *
kiln_bench_scan_thread(void *arg)
{
    kiln_bench_thread *a = arg;
    uint64_t s = RUN_SEED + 1000 * (uint64_t)a->tid + 13;
    uint8_t k[KEY_LEN], want[KEY_LEN];
    uint64_t sink = 0;
    int len = kiln_bench_o.len;
    uint8_t(*seen)[KEY_LEN] = kiln_malloc((size_t)len * KEY_LEN);
    status_clear(&a->err);
    pthread_barrier_wait(&kiln_bench_bar);
    a->start_ns = now_ns();
    for (uint64_t j = 0; j < kiln_bench_o.ops; j++) {
        uint64_t i = splitmix64(&s) % (a->n - (uint64_t)len);
        make_key(i, 0, k);
        kiln_err err;
        status_clear(&err);
        int rows = 0, wrong = 0;
        uint64_t t0 = now_ns();
        hfile_iter *it = hfile_iter_new(a->r);
        kiln_cell start;
        cell_first_on_row(&start, k, KEY_LEN);
        hfile_iter_seek(it, &start, &err);
        while (err.code == KILN_OK && rows < len && hfile_iter_valid(it)) {
            const kiln_cell *c = hfile_iter_cell(it);
            if (c->row_len == KEY_LEN)
                memcpy(seen[rows], c->row, KEY_LEN);
            else
                wrong = 1;
            sink += c->row[c->row_len - 1] + c->value[c->value_len - 1];
            rows++;
            hfile_iter_next(it, &err);
        }
        hfile_iter_free(it);
        uint64_t t1 = now_ns();
        a->lat[j] = (uint32_t)(t1 - t0);
        for (int r = 0; r < rows && !wrong; r++) {
            make_key(i + (uint64_t)r, 0, want);
            wrong = memcmp(seen[r], want, KEY_LEN) != 0;
        }
        if (err.code != KILN_OK && a->errors++ == 0)
            a->err = err;
        a->rows += (uint64_t)rows;
        if (rows != len || wrong || err.code != KILN_OK)
            a->bad++;
    }
    a->end_ns = now_ns();
    a->found += sink & 1;
    free(seen);
    return NULL;
}

static int
kiln_bench_reads(const char *path, uint64_t n, int scan)
{
    if (scan && n <= (uint64_t)kiln_bench_o.len) {
        fprintf(stderr, "kiln-bench: scan: N must exceed --len\n");
        return EX_USAGE;
    }
    if (kiln_bench_value_selftest() != 0)
        return EX_SOFTWARE;
    kiln_err err;
    status_clear(&err);
    block_cache *cache = block_cache_new(kiln_bench_o.cache_mb << 20);
    hfile_reader *r = NULL;
    if (hfile_reader_open(path, cache, &r, &err) != KILN_OK) {
        block_cache_free(cache);
        return kiln_bench_fail(&err);
    }
    block_cache_stats cs;
    double tw = now_s();
    if (kiln_bench_o.warm) {
        hfile_iter *it = hfile_iter_new(r);
        uint64_t c = 0;
        for (hfile_iter_seek_first(it, &err); err.code == KILN_OK && hfile_iter_valid(it);
             hfile_iter_next(it, &err))
            c++;
        hfile_iter_free(it);
        if (err.code != KILN_OK)
            goto fail;
        block_cache_get_stats(cache, &cs);
        printf("warm: scanned %llu rows in %.2fs, block cache usage %.1f MB\n",
               (unsigned long long)c, now_s() - tw, cs.bytes_used / 1e6);
    } else {
        hfile_iter *it = hfile_iter_new(r);
        uint64_t s = 999;
        uint8_t k[KEY_LEN];
        for (int j = 0; j < KILN_BENCH_WARMUP_GETS && err.code == KILN_OK; j++) {
            const kiln_cell *c;
            make_key(splitmix64(&s) % n, 0, k);
            kiln_bench_get_one(r, it, k, &c, &err);
        }
        hfile_iter_free(it);
        if (err.code != KILN_OK)
            goto fail;
        block_cache_get_stats(cache, &cs);
        printf("warmup: 100k random gets in %.2fs, block cache usage %.1f MB\n", now_s() - tw,
               cs.bytes_used / 1e6);
    }
    fflush(stdout);

    int nt = kiln_bench_o.threads;
    kiln_bench_thread *a = calloc((size_t)nt, sizeof *a);
    size_t tot = (size_t)nt * kiln_bench_o.ops;
    uint32_t *all = malloc(tot * sizeof(uint32_t));
    if (a == NULL || all == NULL) {
        fprintf(stderr, "kiln-bench: out of memory for %zu latency samples\n", tot);
        return EX_OSERR;
    }
    /* Hit rate of the measured phase only, not of the warm-up. */
    block_cache_stats before;
    block_cache_get_stats(cache, &before);
    pthread_barrier_init(&kiln_bench_bar, NULL, (unsigned)nt + 1);
    for (int t = 0; t < nt; t++) {
        a[t].r = r;
        a[t].n = n;
        a[t].tid = t;
        a[t].scan = scan;
        a[t].lat = all + (size_t)t * kiln_bench_o.ops;
        pthread_create(&a[t].th, NULL, scan ? kiln_bench_scan_thread : kiln_bench_get_thread, &a[t]);
    }
    pthread_barrier_wait(&kiln_bench_bar);
    for (int t = 0; t < nt; t++)
        pthread_join(a[t].th, NULL);
    pthread_barrier_destroy(&kiln_bench_bar);
    /* Wall time of the measured phase as the threads saw it: from the first
     * start to the last end (a clock read by this thread after the barrier
     * would start late whenever it is scheduled after the workers). */
    uint64_t first = a[0].start_ns, last = a[0].end_ns;
    for (int t = 1; t < nt; t++) {
        first = a[t].start_ns < first ? a[t].start_ns : first;
        last = a[t].end_ns > last ? a[t].end_ns : last;
    }
    double dt = (double)(last - first) / 1e9;

    uint64_t found = 0, nf = 0, bad = 0, rows = 0, errors = 0;
    for (int t = 0; t < nt; t++) {
        found += a[t].found;
        nf += a[t].notfound;
        bad += a[t].bad;
        rows += a[t].rows;
        if (a[t].errors != 0 && errors == 0)
            err = a[t].err;
        errors += a[t].errors;
    }
    qsort(all, tot, sizeof(uint32_t), cmp_u32);
    double mean = 0;
    for (size_t i = 0; i < tot; i++)
        mean += all[i];
    mean /= (double)tot;
    block_cache_get_stats(cache, &cs);
    uint64_t hits = cs.hits - before.hits, lookups = hits + (cs.misses - before.misses);
    double hit = lookups ? 100.0 * (double)hits / (double)lookups : 0.0;
    printf("%s threads=%d ops=%zu missing=%d cache_mb=%zu direct=0 warm=%d secs=%.3f "
           "ops_per_s=%.0f mean_us=%.2f p50_us=%.2f p99_us=%.2f p999_us=%.2f max_us=%.1f "
           "found=%llu notfound=%llu bad=%llu rows=%llu cache_usage_MB=%.1f cache_hit_pct=%.1f "
           "errors=%llu max_rss_mb=%.1f hugetlb_mb=%.1f\n",
           scan ? "scan" : "get", nt, tot, kiln_bench_o.missing, kiln_bench_o.cache_mb, kiln_bench_o.warm, dt,
           tot / dt, mean / 1000, pct_us(all, tot, 0.50), pct_us(all, tot, 0.99),
           pct_us(all, tot, 0.999), all[tot - 1] / 1000.0, (unsigned long long)found,
           (unsigned long long)nf, (unsigned long long)bad, (unsigned long long)rows,
           cs.bytes_used / 1e6, hit, (unsigned long long)errors, kiln_bench_max_rss_mb(),
           slab_hugetlb_bytes() / 1048576.0);
    free(all);
    free(a);
    hfile_reader_close(r);
    block_cache_free(cache);
    if (errors != 0) {
        fprintf(stderr, "kiln-bench: %llu read errors; first: %s\n", (unsigned long long)errors,
                err.msg);
        return status_exit_code(err.code);
    }
    return 0;

fail:
    hfile_reader_close(r);
    block_cache_free(cache);
    return kiln_bench_fail(&err);
}

/* ------------------------------------------------------------------ main */

static int
kiln_bench_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "kiln-bench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'kiln-bench --help'.\n");
    return EX_USAGE;
}

/* Strict decimal; -1 on anything else. */
static int
kiln_bench_parse_u64(const char *s, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

int
main(int argc, char **argv)
{
    const char *pos[2] = {NULL, NULL};
    int npos = 0;
    const char *cmd = NULL;
    for (int i = 1; i < argc; i++) {
        const char *x = argv[i];
        uint64_t v;
        if (!strcmp(x, "-h") || !strcmp(x, "--help")) {
            fputs(kiln_bench_usage_text, stdout);
            return 0;
        }
        if (!strcmp(x, "-V") || !strcmp(x, "--version")) {
            printf("kiln-bench %s\n", KILN_VERSION);
            return 0;
        }
        if (!strcmp(x, "--warm")) {
            kiln_bench_o.warm = 1;
            continue;
        }
        if (!strcmp(x, "--missing")) {
            kiln_bench_o.missing = 1;
            continue;
        }
        if (!strcmp(x, "--readonly"))
            continue;
        if (x[0] == '-' && x[1] == '-') {
            if (i + 1 >= argc)
                return kiln_bench_usage_error("option '%s' needs an argument", x);
            const char *val = argv[++i];
            if (!strcmp(x, "--compression")) {
                if (compress_codec_parse(val, &kiln_bench_o.codec) != 0 ||
                    !compress_codec_writable(kiln_bench_o.codec))
                    return kiln_bench_usage_error("--compression '%s': snappy|none|gz|lz4|zstd", val);
            } else if (!strcmp(x, "--bloom")) {
                if (bloom_type_parse(val, &kiln_bench_o.bloom) != 0) {
                    if (kiln_bench_parse_u64(val, &v) != 0)
                        return kiln_bench_usage_error("--bloom '%s': none|row|rowcol or bits", val);
                    kiln_bench_o.bloom = v == 0 ? BLOOM_NONE : BLOOM_ROW;
                }
            } else if (kiln_bench_parse_u64(val, &v) != 0) {
                return kiln_bench_usage_error("'%s' is not a number", val);
            } else if (!strcmp(x, "--block-size") && v > 0) {
                kiln_bench_o.block = (size_t)v;
            } else if (!strcmp(x, "--uid-offset")) {
                kiln_bench_o.uid_offset = v;
            } else if (!strcmp(x, "--data-version")) {
                kiln_bench_o.data_version = v;
            } else if (!strcmp(x, "--writer-threads") && v <= 1) {
                kiln_bench_o.writer_threads = (int)v;
            } else if (!strcmp(x, "--threads") && v > 0 && v <= 1024) {
                kiln_bench_o.threads = (int)v;
            } else if (!strcmp(x, "--ops") && v > 0) {
                kiln_bench_o.ops = v;
            } else if (!strcmp(x, "--cache-mb")) {
                kiln_bench_o.cache_mb = (size_t)v;
            } else if (!strcmp(x, "--len") && v > 0 && v < 1000000) {
                kiln_bench_o.len = (int)v;
            } else {
                return kiln_bench_usage_error("unknown option or bad value: %s", x);
            }
            continue;
        }
        if (cmd == NULL)
            cmd = x;
        else if (npos < 2)
            pos[npos++] = x;
        else
            return kiln_bench_usage_error("unexpected argument '%s'", x);
    }
    if (cmd == NULL)
        return kiln_bench_usage_error("%s", "expected a command: gen, tsv, dump, write, get or scan");

    uint64_t n;
    if (!strcmp(cmd, "gen")) {
        if (npos != 1 || kiln_bench_parse_u64(pos[0], &n) != 0)
            return kiln_bench_usage_error("%s", "gen: expected N");
        return kiln_bench_gen(n);
    }
    if (!strcmp(cmd, "tsv") || !strcmp(cmd, "dump")) {
        if (npos != 2 || kiln_bench_parse_u64(pos[1], &n) != 0)
            return kiln_bench_usage_error("%s: expected FILE N", cmd);
        return kiln_bench_text(pos[0], n, !strcmp(cmd, "dump"));
    }
    if (strcmp(cmd, "write") && strcmp(cmd, "get") && strcmp(cmd, "scan"))
        return kiln_bench_usage_error("unknown command '%s'", cmd);
    if (npos != 2 || kiln_bench_parse_u64(pos[1], &n) != 0 || n == 0)
        return kiln_bench_usage_error("%s: expected FILE N", cmd);
    if (!strcmp(cmd, "write"))
        return kiln_bench_write(pos[0], n);
    return kiln_bench_reads(pos[0], n, !strcmp(cmd, "scan"));
}
