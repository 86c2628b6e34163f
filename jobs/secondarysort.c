/* secondarysort.c -- Hadoop's SecondarySort example: the values of each key
 * in order, sorted by the engine rather than in reduce's memory.
 *
 *   secondarysort --input PATH... --output DIR [--descending]
 *
 * Input lines hold two integers "a b" (signed 64-bit, separated by blanks);
 * the output has one line `a<TAB>b1,b2,...` per distinct a with every b of
 * it (repeats kept) in ascending order (--descending: descending).
 *
 * Map emits the composite key (a, b) as 16 bytes: each integer big-endian
 * with its sign bit flipped, so the bytes sort as the numbers do and the
 * default sort (memcmp, no comparator call) orders by a, then b. Three key
 * functions make it a secondary sort:
 *   - a partitioner on a alone, so every (a, *) reaches one reduce;
 *   - a grouping comparator on a alone, so reduce is called once per a,
 *     its values streaming from the merge in b order;
 *   - with --descending, a sort comparator: a ascending, b descending.
 * Reduce reads each value's b from mr_task_current_key (the values carry
 * nothing) and appends it to the output line as it arrives: the group's
 * records are never gathered or sorted in memory.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/jobs_args.h"
#include "storage/base/coding.h"

#define SECONDARYSORT_KEY 16
#define SECONDARYSORT_LOG_MAX 10

typedef struct secondarysort_state {
    int c_groups;                /* counters */
    int c_values;
    int c_bad;
    unsigned logged;             /* bad lines warned about on this rank */
    kbuf line;                   /* reduce: the output line being built */
} secondarysort_state;

/* The 8 key bytes of v: big-endian with the sign bit flipped. */
static void
secondarysort_put(uint8_t *p, int64_t v)
{
    coding_put_be64(p, (uint64_t)v ^ 0x8000000000000000ull);
}

static int64_t
secondarysort_get(const uint8_t *p)
{
    return (int64_t)(coding_get_be64(p) ^ 0x8000000000000000ull);
}

/* Parse a signed decimal integer (optional sign, digits, within int64) at
 * *p, blanks before it skipped: 1 with *p past it, or 0. */
static int
secondarysort_int(const uint8_t **p, const uint8_t *end, int64_t *out)
{
    const uint8_t *s = *p;
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    int neg = 0;
    if (s < end && (*s == '-' || *s == '+'))
        neg = *s++ == '-';
    const uint8_t *digits = s;
    uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (limit - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    if (s == digits)
        return 0;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    *p = s;
    return 1;
}

static kiln_status
secondarysort_bad(mr_task *t, secondarysort_state *st, kslice line)
{
    if (mr_task_sampling(t))
        return KILN_OK;
    mr_task_count(t, st->c_bad, 1);
    mr_task_bad_record(t);
    if (st->logged >= SECONDARYSORT_LOG_MAX)
        return KILN_OK;
    uint64_t no = 0;
    kiln_err ignored;
    status_clear(&ignored);
    mr_task_input_line(t, &no, &ignored);
    st->logged++;
    mr_task_warn(t, "%s:%" PRIu64 ": not two integers: '%.*s'%s", mr_task_input_path(t), no,
                 (int)(line.n > 60 ? 60 : line.n), (const char *)line.p,
                 st->logged == SECONDARYSORT_LOG_MAX ? " (no more bad lines logged on this rank)"
                                                     : "");
    return KILN_OK;
}

static kiln_status
secondarysort_map(mr_task *t, kslice line, kiln_err *err)
{
    secondarysort_state *st = mr_task_state(t);
    const uint8_t *p = line.p, *end = line.p + line.n;
    int64_t a, b;
    if (!secondarysort_int(&p, end, &a) || p == end || (*p != ' ' && *p != '\t') ||
        !secondarysort_int(&p, end, &b))
        return secondarysort_bad(t, st, line);
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    if (p != end)
        return secondarysort_bad(t, st, line);
    uint8_t key[SECONDARYSORT_KEY];
    secondarysort_put(key, a);
    secondarysort_put(key + 8, b);
    return mr_task_emit(t, kslice_make(key, sizeof key), kslice_make(NULL, 0), err);
}

/* Partitioner: a alone (its 8 key bytes, mixed), so a group never spans two
 * partitions. */
static uint32_t
secondarysort_partition(void *arg, kslice key, uint32_t partitions)
{
    uint64_t h = key.n >= 8 ? coding_get_be64(key.p) : 0;
    h *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(((h >> 32) * partitions) >> 32);
}

/* Grouping comparator: a alone. */
static int
secondarysort_group(void *arg, kslice x, kslice y)
{
    if (x.n < 8 || y.n < 8)
        return kslice_cmp(x, y);
    return memcmp(x.p, y.p, 8);
}

/* Sort comparator for --descending: a ascending, then b descending. */
static int
secondarysort_descending(void *arg, kslice x, kslice y)
{
    if (x.n != SECONDARYSORT_KEY || y.n != SECONDARYSORT_KEY)
        return kslice_cmp(x, y);
    int c = memcmp(x.p, y.p, 8);
    return c != 0 ? c : memcmp(y.p + 8, x.p + 8, 8);
}

static kiln_status
secondarysort_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    secondarysort_state *st = mr_task_state(t);
    if (key.n != SECONDARYSORT_KEY)
        return status_set(err, KILN_CORRUPTION, "secondarysort: a key of %zu bytes", key.n);
    char num[24];
    buf_reset(&st->line);
    kslice v;
    uint64_t n = 0;
    while (mr_task_next_value(values, &v)) {
        kslice full = mr_task_current_key(t);
        if (full.n != SECONDARYSORT_KEY)
            return status_set(err, KILN_CORRUPTION, "secondarysort: a key of %zu bytes", full.n);
        int len = snprintf(num, sizeof num, "%s%" PRId64, n++ ? "," : "",
                           secondarysort_get(full.p + 8));
        buf_append(&st->line, num, (size_t)len);
    }
    mr_task_count(t, st->c_groups, 1);
    mr_task_count(t, st->c_values, n);
    int len = snprintf(num, sizeof num, "%" PRId64, secondarysort_get(key.p));
    return mr_task_emit(t, kslice_make(num, (size_t)len), buf_slice(&st->line), err);
}

static void
secondarysort_state_free(void *p)
{
    secondarysort_state *st = p;
    if (st == NULL)
        return;
    buf_free(&st->line);
    free(st);
}

static kiln_status
secondarysort_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    secondarysort_state *st = kiln_calloc(1, sizeof *st);
    buf_init(&st->line);
    mr_job_set_state(job, st, secondarysort_state_free);
    int descending = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v;
        kiln_status s = KILN_OK;
        if (strcmp(a, "--input") == 0) {
            s = jobs_take_inputs(job, argc, argv, &i, err);
        } else if (strcmp(a, "--output") == 0) {
            s = jobs_take_value(argc, argv, &i, &v, err);
            if (s == KILN_OK)
                mr_job_set_output(job, v);
        } else if (strcmp(a, "--descending") == 0) {
            descending = 1;
        } else {
            s = status_set(err, KILN_INVALID, "secondarysort: unknown argument '%s'", a);
        }
        if (s != KILN_OK)
            return s;
    }
    mr_job_set_map(job, secondarysort_map);
    mr_job_set_reduce(job, secondarysort_reduce);
    mr_job_set_partitioner(job, secondarysort_partition, NULL);
    mr_job_set_grouping_comparator(job, secondarysort_group, NULL);
    if (descending)
        mr_job_set_sort_comparator(job, secondarysort_descending, NULL);
    st->c_groups = mr_job_counter(job, "secondarysort", "Groups (distinct first numbers)");
    st->c_values = mr_job_counter(job, "secondarysort", "Values (pairs)");
    st->c_bad = mr_job_counter(job, "secondarysort", "Bad lines (skipped)");
    return KILN_OK;
}

const mr_job_def secondarysort_job = {
    "secondarysort",
    "Hadoop's SecondarySort: each number's partners, sorted by the engine",
    "Usage: kiln-mr secondarysort --input PATH... --output DIR [--descending]\n"
    "\n"
    "Reads lines of two integers `a b` (signed 64-bit, separated by blanks) and\n"
    "writes, per partition, DIR/part-r-NNNNN with one line `a<TAB>b1,b2,...` per\n"
    "distinct a: every b that came with it (repeats kept), ascending, or\n"
    "descending with --descending. Lines in a file are in ascending order of a;\n"
    "a's are spread over the files by a hash. Other lines are counted as bad and\n"
    "skipped (the first ten per rank named on stderr by file and line).\n"
    "\n"
    "The engine does the sorting (a secondary sort): the map output key is the\n"
    "pair (a, b); a partitioner on a alone sends every pair of one a to one\n"
    "reduce, a grouping comparator on a alone makes them one reduce call, and\n"
    "the values arrive in b order (--descending sets a sort comparator), so no\n"
    "group is gathered in memory. docs/writing-a-job.md walks through it.\n"
    "\n"
    "Counters: secondarysort / Groups, Values, Bad lines.\n"
    "Engine settings: see `kiln-mr --help` (-D mapreduce.job.reduces=N,\n"
    "-D kiln.sort.mb=N, ...); -D kiln.partitioner does not apply.\n",
    secondarysort_setup,
};
