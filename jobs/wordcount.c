/* wordcount.c -- the classic: count the words of text files.
 *
 *   wordcount --input PATH... --output DIR [--format text|hfile] [--combiner]
 *
 * Words are the runs of bytes between whitespace (space, \t, \n, \v, \f,
 * \r). Map emits (word, 1) as an 8-byte big-endian count; a fold sums counts
 * as they are emitted, so each rank's map output holds every word once per
 * buffer (the combiner Phoenix++ and Hadoop users rely on). Text output is
 * `word<TAB>count` per line; HFile output has row = word and f:count = the
 * count as 8 bytes big-endian, timestamp = the job's clock.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/cellkey.h"
#include "jobs/hfile_output.h"
#include "jobs/jobs_args.h"
#include "jobs/words.h"
#include "storage/base/coding.h"

#define WORDCOUNT_FAMILY "f"
#define WORDCOUNT_QUALIFIER "count"

typedef struct wordcount_state {
    int hfile;
    hfile_output *out;
    kbuf key;
} wordcount_state;

static const uint8_t wordcount_one[8] = {0, 0, 0, 0, 0, 0, 0, 1};

static kiln_status
wordcount_map(mr_task *t, kslice line, kiln_err *err)
{
    kslice one = kslice_make(wordcount_one, sizeof wordcount_one);
    words_iter it;
    const uint8_t *w;
    size_t wn;
    words_init(&it, line.p, line.n);
    while (words_next(&it, &w, &wn)) {
        kiln_status s = mr_task_emit(t, kslice_make(w, wn), one, err);
        if (s != KILN_OK)
            return s;
    }
    return KILN_OK;
}

/* The sum of a word's counts. */
static kiln_status
wordcount_sum(mr_values *values, uint64_t *sum, kiln_err *err)
{
    kslice v;
    *sum = 0;
    while (mr_task_next_value(values, &v)) {
        if (v.n != 8)
            return status_set(err, KILN_CORRUPTION, "wordcount: a count of %zu bytes", v.n);
        *sum += coding_get_be64(v.p);
    }
    return KILN_OK;
}

/* --combiner: Hadoop's combiner, run on sorted runs at spill and merge
 * time, instead of the fold. */
static kiln_status
wordcount_combine(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    uint64_t sum;
    kiln_status s = wordcount_sum(values, &sum, err);
    if (s != KILN_OK)
        return s;
    uint8_t be[8];
    coding_put_be64(be, sum);
    return mr_task_emit(t, key, kslice_make(be, 8), err);
}

static kiln_status
wordcount_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    wordcount_state *st = mr_task_state(t);
    uint64_t sum;
    kiln_status s = wordcount_sum(values, &sum, err);
    if (s != KILN_OK)
        return s;
    if (!st->hfile) {
        char num[24];
        char *p = num + sizeof num;
        do {
            *--p = (char)('0' + sum % 10);
            sum /= 10;
        } while (sum > 0);
        return mr_task_emit(t, key, kslice_make(p, (size_t)(num + sizeof num - p)), err);
    }
    if (key.n > CELL_ROW_MAX)
        return status_set(err, KILN_INVALID, "wordcount: a word of %zu bytes is too long for a row",
                          key.n);
    kiln_cell c;
    memset(&c, 0, sizeof c);
    c.row = key.p;
    c.row_len = (uint32_t)key.n;
    c.family = (const uint8_t *)WORDCOUNT_FAMILY;
    c.family_len = sizeof WORDCOUNT_FAMILY - 1;
    c.qualifier = (const uint8_t *)WORDCOUNT_QUALIFIER;
    c.qualifier_len = sizeof WORDCOUNT_QUALIFIER - 1;
    c.ts = mr_job_time_ms(mr_task_job(t));
    c.type = CELL_TYPE_PUT;
    buf_reset(&st->key);
    cellkey_append(&st->key, &c);
    uint8_t be[8];
    coding_put_be64(be, sum);
    return mr_task_emit(t, buf_slice(&st->key), kslice_make(be, 8), err);
}

static void
wordcount_state_free(void *p)
{
    wordcount_state *st = p;
    if (st == NULL)
        return;
    hfile_output_free(st->out);
    buf_free(&st->key);
    free(st);
}

static kiln_status
wordcount_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    wordcount_state *st = kiln_calloc(1, sizeof *st);
    buf_init(&st->key);
    mr_job_set_state(job, st, wordcount_state_free);
    const char *format = "text";
    int combiner = 0;
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
        } else if (strcmp(a, "--format") == 0) {
            s = jobs_take_value(argc, argv, &i, &format, err);
        } else if (strcmp(a, "--combiner") == 0) {
            combiner = 1;
        } else {
            s = status_set(err, KILN_INVALID, "wordcount: unknown argument '%s'", a);
        }
        if (s != KILN_OK)
            return s;
    }
    if (strcmp(format, "hfile") == 0) {
        schema_family f;
        schema_family_defaults(&f, WORDCOUNT_FAMILY);
        kiln_status s = hfile_output_new(job, &f, 1, &st->out, err);
        if (s != KILN_OK)
            return s;
        st->hfile = 1;
        mr_job_set_output_format(job, &hfile_output_format, st->out);
    } else if (strcmp(format, "text") != 0) {
        return status_set(err, KILN_INVALID, "wordcount: --format must be text or hfile, not '%s'",
                          format);
    }
    mr_job_set_map(job, wordcount_map);
    if (combiner)
        mr_job_set_combine(job, wordcount_combine);
    else
        mr_job_set_fold(job, mr_sortbuf_fold_sum_be64, NULL);
    mr_job_set_reduce(job, wordcount_reduce);
    return KILN_OK;
}

const mr_job_def wordcount_job = {
    "wordcount",
    "count the words of text files (text or HFile output)",
    "Usage: kiln-mr wordcount --input PATH... --output DIR [--format text|hfile]\n"
    "                         [--combiner]\n"
    "\n"
    "Counts the words (runs of bytes between spaces, tabs, CR, LF, VT, FF) in the\n"
    "input files and directories (.gz read whole). The map side sums counts as\n"
    "they are emitted (an in-memory combiner), then per partition the reduce\n"
    "writes:\n"
    "  text   DIR/part-r-NNNNN, one `word<TAB>count` line per word, sorted by\n"
    "         word within each file (-D kiln.partitioner=total: across files too)\n"
    "  hfile  DIR/f/<partition>, HFiles with row = word, column f:count = the\n"
    "         count as 8 bytes big-endian, timestamp = the job's clock\n"
    "\n"
    "--combiner sums with a Hadoop combiner on each sorted spill and merge\n"
    "instead (the same output, more map output bytes).\n"
    "\n"
    "Engine settings: see `kiln-mr --help` (-D mapreduce.job.reduces=N,\n"
    "-D kiln.sort.mb=N, ...).\n",
    wordcount_setup,
};
