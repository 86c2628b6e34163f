/* test_mr_jobapi.c -- a job's key functions through whole jobs (mr_job_main,
 * MPI): a custom partitioner decides which part file a key lands in; a
 * reversed numeric sort comparator orders the output through many spills and
 * merge passes (kiln.sort.mb at its minimum, kiln.merge.factor=2), keys it
 * calls equal reaching reduce as one group; a grouping comparator with a
 * partitioner on the grouped part (a secondary sort) gives one reduce call
 * per group whatever the spill and shuffle boundaries, mr_task_current_key
 * naming each value's key -- the same part files at 1 rank (in this
 * process) and at 3 (this program again under mpirun); and the errors: an
 * answer out of range naming the key and value, split keys that do not
 * increase under the comparator, -D kiln.partitioner beside a partitioner.
 * The expected output is computed here from the generated input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobs/jobs_args.h"
#include "mapreduce/mr_job.h"
#include "storage/base/buf.h"
#include "storage/base/coding.h"
#include "tests/support/mpi_leaks.h"

static uint64_t rng_state;
static char tmpdir[256];
static char self[PATH_MAX];
static int mpi_up;

static uint64_t
rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* ------------------------------------------------------------------ the test jobs */

static long
num_of(kslice k)
{
    long v = 0;
    for (size_t i = 0; i < k.n && k.p[i] >= '0' && k.p[i] <= '9'; i++)
        v = v * 10 + (k.p[i] - '0');
    return v;
}

/* What every test job parses: --input PATH... --output DIR [--mode M]. */
static kiln_status
tjob_args(mr_job *job, int argc, char **argv, const char **mode, kiln_err *err)
{
    *mode = "";
    for (int i = 1; i < argc; i++) {
        const char *v;
        kiln_status s = KILN_OK;
        if (strcmp(argv[i], "--input") == 0) {
            s = jobs_take_inputs(job, argc, argv, &i, err);
        } else if (strcmp(argv[i], "--output") == 0) {
            s = jobs_take_value(argc, argv, &i, &v, err);
            if (s == KILN_OK)
                mr_job_set_output(job, v);
        } else if (strcmp(argv[i], "--mode") == 0) {
            s = jobs_take_value(argc, argv, &i, mode, err);
        } else {
            s = status_set(err, KILN_INVALID, "unknown argument '%s'", argv[i]);
        }
        if (s != KILN_OK)
            return s;
    }
    return KILN_OK;
}

/* Map: the whole line is the key, the value "1". */
static kiln_status
tjob_map_line(mr_task *t, kslice line, kiln_err *err)
{
    return mr_task_emit(t, line, kslice_str("1"), err);
}

/* Reduce: key<TAB>number of values. */
static kiln_status
tjob_reduce_count(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    kslice v;
    uint64_t n = 0;
    while (mr_task_next_value(values, &v)) {
        /* Every value's key is the group's number, whatever its bytes. */
        if (num_of(mr_task_current_key(t)) != num_of(key))
            return status_set(err, KILN_INTERNAL, "value of key %.*s in group %.*s",
                              (int)mr_task_current_key(t).n, (const char *)mr_task_current_key(t).p,
                              (int)key.n, (const char *)key.p);
        n++;
    }
    char num[24];
    int len = snprintf(num, sizeof num, "%llu", (unsigned long long)n);
    return mr_task_emit(t, key, kslice_make(num, (size_t)len), err);
}

/* tpart: the number modulo the partition count; "oops" out of range. */
static uint32_t
tpart_partition(void *arg, kslice key, uint32_t partitions)
{
    if (kslice_eq(key, kslice_str("oops")))
        return partitions + 2;
    return (uint32_t)(num_of(key) % partitions);
}

static kiln_status
tpart_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    const char *mode;
    kiln_status s = tjob_args(job, argc, argv, &mode, err);
    mr_job_set_map(job, tjob_map_line);
    mr_job_set_reduce(job, tjob_reduce_count);
    mr_job_set_partitioner(job, tpart_partition, NULL);
    return s;
}

static const mr_job_def tpart_job = {"tpart", "custom partitioner", "", tpart_setup};

/* tsort: numbers (some with leading zeros) in descending numeric order. */
static int
tsort_desc(void *arg, kslice a, kslice b)
{
    long x = num_of(a), y = num_of(b);
    return x > y ? -1 : x < y;
}

static kiln_status
tsort_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    const char *mode;
    kiln_status s = tjob_args(job, argc, argv, &mode, err);
    mr_job_set_map(job, tjob_map_line);
    mr_job_set_reduce(job, tjob_reduce_count);
    if (s == KILN_OK && strcmp(mode, "badsplits") == 0) {
        /* Increasing in bytes, decreasing under the comparator set after. */
        kslice keys[] = {kslice_str("1"), kslice_str("2")};
        s = mr_job_set_split_keys(job, keys, 2, err);
    }
    mr_job_set_sort_comparator(job, tsort_desc, NULL);
    /* Keys the comparator calls equal ("7", "07") must share a partition:
     * hashing bytes would not keep them together, the number does. */
    if (strcmp(mode, "numpart") == 0)
        mr_job_set_partitioner(job, tpart_partition, NULL);
    if (s == KILN_OK && strcmp(mode, "goodsplits") == 0) {
        kslice keys[] = {kslice_str("600"), kslice_str("300")};
        s = mr_job_set_split_keys(job, keys, 2, err);
    }
    return s;
}

static const mr_job_def tsort_job = {"tsort", "sort comparator", "", tsort_setup};

/* tgroup: lines "user ts"; key user|ts; sorted by user (bytes), then ts
 * descending (a number); grouped and partitioned by user; the value is ts
 * again, which reduce checks against the value's own key. */
static kslice
tgroup_user(kslice k)
{
    const uint8_t *bar = memchr(k.p, '|', k.n);
    return kslice_make(k.p, bar ? (size_t)(bar - k.p) : k.n);
}

static long
tgroup_ts(kslice k)
{
    kslice u = tgroup_user(k);
    return u.n < k.n ? num_of(kslice_make(k.p + u.n + 1, k.n - u.n - 1)) : 0;
}

static int tgroup_calls;       /* comparator calls on this rank */

static int
tgroup_sort(void *arg, kslice a, kslice b)
{
    tgroup_calls++;
    int c = kslice_cmp(tgroup_user(a), tgroup_user(b));
    if (c != 0)
        return c;
    long x = tgroup_ts(a), y = tgroup_ts(b);
    return x > y ? -1 : x < y;
}

static int
tgroup_group(void *arg, kslice a, kslice b)
{
    return kslice_cmp(tgroup_user(a), tgroup_user(b));
}

/* FNV-1a of the user part. */
static uint32_t
tgroup_partition(void *arg, kslice key, uint32_t partitions)
{
    kslice u = tgroup_user(key);
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < u.n; i++)
        h = (h ^ u.p[i]) * 16777619u;
    return h % partitions;
}

static kiln_status
tgroup_map(mr_task *t, kslice line, kiln_err *err)
{
    const uint8_t *sp = memchr(line.p, ' ', line.n);
    if (sp == NULL)
        return status_set(err, KILN_INVALID, "tgroup: bad line");
    kbuf key = KBUF_INIT;
    buf_append(&key, line.p, (size_t)(sp - line.p));
    buf_append_u8(&key, '|');
    kslice ts = kslice_make(sp + 1, line.n - (size_t)(sp - line.p) - 1);
    buf_append(&key, ts.p, ts.n);
    kiln_status s = mr_task_emit(t, buf_slice(&key), ts, err);
    buf_free(&key);
    return s;
}

static kiln_status
tgroup_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    kbuf line = KBUF_INIT;
    kslice v;
    kiln_status s = KILN_OK;
    int n = 0;
    while (s == KILN_OK && mr_task_next_value(values, &v)) {
        kslice full = mr_task_current_key(t);
        if (!kslice_eq(tgroup_user(full), tgroup_user(key)) || num_of(v) != tgroup_ts(full))
            s = status_set(err, KILN_INTERNAL, "tgroup: value %.*s under key %.*s in group %.*s",
                           (int)v.n, (const char *)v.p, (int)full.n, (const char *)full.p,
                           (int)key.n, (const char *)key.p);
        if (n++)
            buf_append_u8(&line, ',');
        buf_append(&line, v.p, v.n);
    }
    if (s == KILN_OK)
        s = mr_task_emit(t, tgroup_user(key), buf_slice(&line), err);
    buf_free(&line);
    return s;
}

static kiln_status
tgroup_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    const char *mode;
    kiln_status s = tjob_args(job, argc, argv, &mode, err);
    mr_job_set_map(job, tgroup_map);
    mr_job_set_reduce(job, tgroup_reduce);
    mr_job_set_sort_comparator(job, tgroup_sort, NULL);
    mr_job_set_grouping_comparator(job, tgroup_group, NULL);
    mr_job_set_partitioner(job, tgroup_partition, NULL);
    return s;
}

static const mr_job_def tgroup_job = {"tgroup", "grouping comparator", "", tgroup_setup};

static const mr_job_def *const tjobs[] = {&tpart_job, &tsort_job, &tgroup_job};

/* ------------------------------------------------------------------ running */

static void
start_mpi(void)
{
    if (mpi_up)
        return;
    int argc = 0;
    char **argv = NULL;
    MPI_Init(&argc, &argv);
    mpi_up = 1;
}

/* Run def in this process (1 rank): argv is NULL-terminated, without the
 * job's name. Returns the status; err holds the message. */
static kiln_status
run_here(const mr_job_def *def, kiln_err *err, const char *const *args)
{
    start_mpi();
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)def->name;
    for (; *args != NULL; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    status_clear(err);
    return mr_job_main(def, argc, argv, err);
}

static void
path_in(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
}

/* The part files of dir, in name order, each file's bytes. */
static size_t
read_parts(const char *dir, kbuf *parts, size_t max)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    assert_true(n >= 0);
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        if (strncmp(names[i]->d_name, "part-r-", 7) == 0) {
            assert_true(k < max);
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
            FILE *f = fopen(path, "rb");
            assert_non_null(f);
            buf_init(&parts[k]);
            char chunk[4096];
            size_t got;
            while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
                buf_append(&parts[k], chunk, got);
            fclose(f);
            k++;
        }
        free(names[i]);
    }
    free(names);
    return k;
}

/* A counter from DIR/_job.json. */
static uint64_t
job_counter(const char *dir, const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/_job.json", dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\":", name);
    const char *p = strstr(text, pat);
    assert_non_null(p);
    return strtoull(p + strlen(pat), NULL, 10);
}

/* Split a part file into lines (NUL-terminated, in place). */
static size_t
lines_of(kbuf *b, char **lines, size_t max)
{
    buf_append_u8(b, 0);
    size_t n = 0;
    char *p = (char *)b->data;
    while (*p) {
        char *nl = strchr(p, '\n');
        assert_non_null(nl);
        *nl = 0;
        assert_true(n < max);
        lines[n++] = p;
        p = nl + 1;
    }
    return n;
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ------------------------------------------------------------------ tests */

static void
custom_partitioner(void **state)
{
    (void)state;
    char in[PATH_MAX], out[PATH_MAX];
    path_in(in, sizeof in, "part.txt");
    path_in(out, sizeof out, "part.out");
    enum { MAXN = 1000 };
    static uint64_t count[MAXN];
    memset(count, 0, sizeof count);
    FILE *f = fopen(in, "w");
    for (int i = 0; i < 20000; i++) {
        int v = (int)(rnd() % MAXN);
        count[v]++;
        fprintf(f, "%d\n", v);
    }
    fclose(f);
    kiln_err err;
    const char *args[] = {"--input", in, "--output", out, "-D", "mapreduce.job.reduces=5",
                          "-D", "kiln.progress=false", NULL};
    assert_int_equal(run_here(&tpart_job, &err, args), KILN_OK);
    kbuf parts[8];
    assert_int_equal(read_parts(out, parts, 8), 5);
    static char *lines[MAXN];
    size_t seen = 0;
    for (uint32_t p = 0; p < 5; p++) {
        size_t n = lines_of(&parts[p], lines, MAXN);
        for (size_t i = 0; i < n; i++) {
            long v = strtol(lines[i], NULL, 10);
            /* In the file the partitioner named, with its count. */
            assert_int_equal(v % 5, p);
            assert_int_equal(strtoull(strchr(lines[i], '\t') + 1, NULL, 10), count[v]);
            count[v] = 0;
            seen++;
        }
        buf_free(&parts[p]);
    }
    for (int v = 0; v < MAXN; v++)
        assert_int_equal(count[v], 0);
    assert_true(seen > 900);
}

static void
sort_comparator_through_spills(void **state)
{
    (void)state;
    char in[PATH_MAX], out[PATH_MAX];
    path_in(in, sizeof in, "sort.txt");
    enum { MAXN = 1000 };
    static uint64_t count[MAXN];
    static char least[MAXN][8];
    memset(count, 0, sizeof count);
    memset(least, 0, sizeof least);
    FILE *f = fopen(in, "w");
    for (int i = 0; i < 60000; i++) {
        int v = (int)(rnd() % MAXN);
        char key[8];
        snprintf(key, sizeof key, "%.*s%d", (int)(rnd() % 3), "00", v);
        count[v]++;
        if (least[v][0] == 0 || strcmp(key, least[v]) < 0)
            strcpy(least[v], key);
        fprintf(f, "%s\n", key);
    }
    fclose(f);
    for (int round = 0; round < 2; round++) {
        /* Round 0: the number modulo 3 partitions; round 1: total order on
         * split keys that increase under the comparator (600, 300: numbers
         * going down). */
        path_in(out, sizeof out, round ? "sort-total.out" : "sort.out");
        kiln_err err;
        const char *args[] = {"--input", in, "--output", out, "--mode", round ? "goodsplits" : "numpart",
                              "-D", "kiln.sort.mb=0.01", "-D", "kiln.merge.factor=2",
                              "-D", "kiln.progress=false", "-D",
                              round ? "kiln.spill.compress=snappy" : "mapreduce.job.reduces=3",
                              NULL};
        assert_int_equal(run_here(&tsort_job, &err, args), KILN_OK);
        /* Several spills, merged in passes of two: records spilled again. */
        assert_true(job_counter(out, "Spilled Records") > 2 * job_counter(out, "Map output records"));
        kbuf parts[4];
        assert_int_equal(read_parts(out, parts, 4), 3);
        static char *lines[MAXN];
        static uint64_t want[MAXN];
        memcpy(want, count, sizeof want);
        long prev_file_last = LONG_MAX;
        for (int p = 0; p < 3; p++) {
            size_t n = lines_of(&parts[p], lines, MAXN);
            long prev = LONG_MAX;
            for (size_t i = 0; i < n; i++) {
                char *tab = strchr(lines[i], '\t');
                assert_non_null(tab);
                *tab = 0;
                long v = strtol(lines[i], NULL, 10);
                /* Descending numbers, one group per number under the
                 * comparator (its key the least in bytes). */
                assert_true(v < prev);
                prev = v;
                assert_string_equal(lines[i], least[v]);
                assert_int_equal(strtoull(tab + 1, NULL, 10), want[v]);
                want[v] = 0;
                if (round == 1) {
                    assert_true(v < prev_file_last);
                    assert_int_equal(p, v > 600 ? 0 : v > 300 ? 1 : 2);
                } else {
                    assert_int_equal(v % 3, p);
                }
            }
            if (n > 0)
                prev_file_last = prev;
            buf_free(&parts[p]);
        }
        for (int v = 0; v < MAXN; v++)
            assert_int_equal(want[v], 0);
    }
}

/* The tgroup input and its expected lines (sorted), shared by the two
 * grouping tests. */
static char group_in[PATH_MAX];
static char **group_want;
static size_t group_n;

typedef struct pair {
    char user[8];
    long ts;
} pair;

static int
pair_cmp(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    int c = strcmp(x->user, y->user);
    if (c != 0)
        return c;
    return x->ts > y->ts ? -1 : x->ts < y->ts;
}

static void
make_group_input(void)
{
    if (group_want != NULL)
        return;
    path_in(group_in, sizeof group_in, "group.txt");
    enum { N = 40000 };
    pair *v = calloc(N, sizeof *v);
    FILE *f = fopen(group_in, "w");
    for (size_t i = 0; i < N; i++) {
        /* Few users with many values each, so groups cross every spill. */
        snprintf(v[i].user, sizeof v[i].user, "u%d", (int)(rnd() % 60));
        v[i].ts = (long)(rnd() % 100000);
        fprintf(f, "%s %ld\n", v[i].user, v[i].ts);
    }
    fclose(f);
    qsort(v, N, sizeof *v, pair_cmp);
    group_want = calloc(N, sizeof *group_want);
    kbuf line = KBUF_INIT;
    for (size_t i = 0; i < N;) {
        size_t j = i;
        buf_reset(&line);
        buf_append(&line, v[i].user, strlen(v[i].user));
        buf_append_u8(&line, '\t');
        for (; j < N && strcmp(v[j].user, v[i].user) == 0; j++) {
            char num[24];
            int len = snprintf(num, sizeof num, "%s%ld", j > i ? "," : "", v[j].ts);
            buf_append(&line, num, (size_t)len);
        }
        buf_append_u8(&line, 0);
        group_want[group_n++] = strdup((const char *)line.data);
        i = j;
    }
    buf_free(&line);
    free(v);
    qsort(group_want, group_n, sizeof *group_want, cmp_str);
}

/* Check a tgroup output: one line per user, in the file its partition
 * names, users ascending in each file, the lines as expected. */
static void
check_group_output(const char *out)
{
    kbuf parts[8];
    assert_int_equal(read_parts(out, parts, 8), 4);
    char **got = calloc(group_n + 1, sizeof *got);
    size_t n = 0;
    for (uint32_t p = 0; p < 4; p++) {
        char *lines[128];
        size_t k = lines_of(&parts[p], lines, 128);
        for (size_t i = 0; i < k; i++) {
            char *tab = strchr(lines[i], '\t');
            assert_non_null(tab);
            kslice user = kslice_make(lines[i], (size_t)(tab - lines[i]));
            assert_int_equal(tgroup_partition(NULL, user, 4), p);
            if (i > 0)
                assert_true(strncmp(lines[i - 1], lines[i], (size_t)(tab - lines[i])) < 0);
            assert_true(n < group_n);
            got[n++] = strdup(lines[i]);
        }
        buf_free(&parts[p]);
    }
    assert_int_equal(n, group_n);
    qsort(got, n, sizeof *got, cmp_str);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(got[i], group_want[i]);
        free(got[i]);
    }
    free(got);
    assert_int_equal(job_counter(out, "Reduce input groups"), group_n);
}

static const char *const group_settings[] = {
    "-D", "mapreduce.job.reduces=4", "-D", "kiln.sort.mb=0.01", "-D", "kiln.merge.factor=2",
    "-D", "kiln.shuffle.mb=0.01", "-D", "kiln.progress=false",
};

/* This program again, under mpirun at 3 ranks (before this process starts
 * MPI itself: a singleton's environment would confuse mpirun). */
static void
grouping_three_ranks(void **state)
{
    (void)state;
    make_group_input();
    char out[PATH_MAX], log[PATH_MAX];
    path_in(out, sizeof out, "group3.out");
    path_in(log, sizeof log, "group3.log");
    kbuf cmd = KBUF_INIT;
    const char *words[] = {"mpirun -np 3 --oversubscribe '", self, "' --job tgroup --input '",
                           group_in, "' --output '", out, "'"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        buf_append(&cmd, words[i], strlen(words[i]));
    for (size_t i = 0; i < sizeof group_settings / sizeof group_settings[0]; i++) {
        buf_append_u8(&cmd, ' ');
        buf_append(&cmd, group_settings[i], strlen(group_settings[i]));
    }
    buf_append(&cmd, " > '", 4);
    buf_append(&cmd, log, strlen(log));
    buf_append(&cmd, "' 2>&1", 7);
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    int rc = system((const char *)cmd.data);
    buf_free(&cmd);
    if (rc != 0) {
        kbuf show = KBUF_INIT;
        buf_append(&show, "tail -20 '", 10);
        buf_append(&show, log, strlen(log));
        buf_append(&show, "'", 2);
        if (system((const char *)show.data) != 0)
            fprintf(stderr, "(no log)\n");
        buf_free(&show);
    }
    assert_int_equal(rc, 0);
    check_group_output(out);
}

static void
grouping_one_rank(void **state)
{
    (void)state;
    make_group_input();
    char out[PATH_MAX], out3[PATH_MAX];
    path_in(out, sizeof out, "group1.out");
    path_in(out3, sizeof out3, "group3.out");
    const char *args[32] = {"--input", group_in, "--output", out};
    size_t k = 4;
    for (size_t i = 0; i < sizeof group_settings / sizeof group_settings[0]; i++)
        args[k++] = group_settings[i];
    args[k] = NULL;
    kiln_err err;
    tgroup_calls = 0;
    assert_int_equal(run_here(&tgroup_job, &err, args), KILN_OK);
    assert_true(tgroup_calls > 0);
    check_group_output(out);
    /* The same bytes as at 3 ranks. */
    kbuf a[8], b[8];
    assert_int_equal(read_parts(out, a, 8), 4);
    assert_int_equal(read_parts(out3, b, 8), 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(a[i].len, b[i].len);
        assert_memory_equal(a[i].data, b[i].data, a[i].len);
        buf_free(&a[i]);
        buf_free(&b[i]);
    }
}

static void
errors(void **state)
{
    (void)state;
    char in[PATH_MAX], out[PATH_MAX];
    path_in(in, sizeof in, "errors.txt");
    FILE *f = fopen(in, "w");
    fputs("1\n2\noops\n3\n", f);
    fclose(f);
    kiln_err err;

    /* An answer out of range fails the job, naming key and answer. */
    path_in(out, sizeof out, "err1.out");
    const char *a1[] = {"--input", in, "--output", out, "-D", "mapreduce.job.reduces=3",
                        "-D", "kiln.progress=false", NULL};
    assert_int_equal(run_here(&tpart_job, &err, a1), KILN_INTERNAL);
    assert_non_null(strstr(err.msg, "'oops'"));
    assert_non_null(strstr(err.msg, "returned 5"));
    assert_non_null(strstr(err.msg, "tpart"));
    assert_int_equal(access(out, F_OK), -1);

    /* A partitioner and -D kiln.partitioner. */
    path_in(out, sizeof out, "err2.out");
    const char *a2[] = {"--input", in, "--output", out, "-D", "kiln.partitioner=hash",
                        "-D", "kiln.progress=false", NULL};
    assert_int_equal(run_here(&tpart_job, &err, a2), KILN_INVALID);
    assert_non_null(strstr(err.msg, "kiln.partitioner"));

    /* Split keys increasing in bytes but not under the comparator. */
    path_in(out, sizeof out, "err3.out");
    const char *a3[] = {"--input", in, "--output", out, "--mode", "badsplits",
                        "-D", "kiln.progress=false", NULL};
    assert_int_equal(run_here(&tsort_job, &err, a3), KILN_INVALID);
    assert_non_null(strstr(err.msg, "sort comparator"));
    assert_int_equal(access(out, F_OK), -1);
}

/* ------------------------------------------------------------------ main */

/* --job NAME ARGS...: run one test job on MPI_COMM_WORLD (under mpirun). */
static int
child(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const mr_job_def *def = NULL;
    for (size_t i = 0; i < sizeof tjobs / sizeof tjobs[0]; i++)
        if (strcmp(tjobs[i]->name, argv[2]) == 0)
            def = tjobs[i];
    kiln_status s = KILN_INVALID;
    kiln_err err;
    status_clear(&err);
    if (def != NULL)
        s = mr_job_main(def, argc - 2, argv + 2, &err);
    MPI_Finalize();
    return s == KILN_OK ? 0 : 1;
}

static int
make_tmpdir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kiln-test-mr-jobapi-XXXXXX");
    return mkdtemp(tmpdir) == NULL;
}

static int
remove_tmpdir(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    for (size_t i = 0; i < group_n; i++)
        free(group_want[i]);
    free(group_want);
    return system(cmd);
}

int
main(int argc, char **argv)
{
    mpi_leaks_name_components();
    if (argc > 2 && strcmp(argv[1], "--job") == 0)
        return child(argc, argv);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 1;
    self[n] = 0;
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_mr_jobapi: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        /* First: it runs mpirun, which must happen before MPI starts here. */
        cmocka_unit_test(grouping_three_ranks),
        cmocka_unit_test(grouping_one_rank),
        cmocka_unit_test(custom_partitioner),
        cmocka_unit_test(sort_comparator_through_spills),
        cmocka_unit_test(errors),
    };
    int rc = cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
    if (mpi_up)
        MPI_Finalize();
    return rc;
}
