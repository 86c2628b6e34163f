/* view_gen.h -- deterministic sample input for the view jobs (`kiln-gen`).
 *
 * Each view job ships a generator of realistic raw input next to its map and
 * reduce. The same (view, rows, seed, files, bad) always gives the same bytes
 * on any machine: draws come from xoshiro256** seeded through splitmix64 and
 * use integer arithmetic only (no libm, no floating point).
 *
 * Output: tab-separated lines in DIR/<base>-NNNNN.tsv; the rows are cut into
 * `files` consecutive runs, file k holding rows [k*rows/files, (k+1)*rows/files),
 * so time-ordered input gives one time slice per file, as rotated logs do.
 * With bad = P, about P per mille of the lines are made malformed (a field
 * dropped, a field added, or the first field emptied), which the jobs count
 * and skip.
 *
 * Thread-safety: single-threaded.
 */
#ifndef KILN_VIEW_GEN_H
#define KILN_VIEW_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"

#define VIEW_GEN_ROWS_MAX 1000000000000ull   /* 1e12 */
#define VIEW_GEN_FILES_MAX 10000

typedef struct view_gen_rng {
    uint64_t s[4];
} view_gen_rng;

/* Seed a generator; different streams of one seed are independent. */
void view_gen_seed(view_gen_rng *r, uint64_t seed, uint64_t stream);
uint64_t view_gen_next(view_gen_rng *r);
/* Uniform in [0, n); n > 0. */
uint64_t view_gen_below(view_gen_rng *r, uint64_t n);
/* The least of k uniform draws in [0, n): low values are popular (k >= 1). */
uint64_t view_gen_skewed(view_gen_rng *r, uint64_t n, int k);
/* 1 with probability per_mille / 1000. */
int view_gen_chance(view_gen_rng *r, uint32_t per_mille);
/* One of list[0..n). */
const char *view_gen_pick(view_gen_rng *r, const char *const *list, size_t n);

typedef struct view_gen_options {
    uint64_t rows;               /* what a row is: each generator's summary */
    uint64_t seed;
    uint32_t files;              /* >= 1 */
    uint32_t bad;                /* malformed lines per mille, 0..1000 */
    const char *dir;             /* output directory (created) */
} view_gen_options;

typedef struct view_gen_def {
    const char *name;            /* the job's name */
    const char *rows;            /* what --rows counts */
    const char *summary;         /* the files and line formats, for --help */
    kiln_status (*run)(const view_gen_options *o, kiln_err *err);
} view_gen_def;

extern const view_gen_def useractions_gen;
extern const view_gen_def tslog_gen;
extern const view_gen_def orders_gen;
extern const view_gen_def follows_gen;
extern const view_gen_def reviews_gen;
extern const view_gen_def products_gen;
extern const view_gen_def events_gen;
extern const view_gen_def graph_gen;

/* Writer of DIR/<base>-NNNNN.tsv files for rows 0..rows-1. */
typedef struct view_gen_out view_gen_out;

/* Create dir (and parents) and the writer. KILN_IO naming the path. */
kiln_status view_gen_out_open(const char *dir, const char *base, uint32_t files, uint64_t rows,
                              view_gen_out **out, kiln_err *err);
/* Write the line of row i (rows in increasing order; the '\n' is added). With
 * the options' bad rate, r decides whether the line is made malformed. */
kiln_status view_gen_out_line(view_gen_out *o, uint64_t i, const view_gen_options *opt,
                              view_gen_rng *r, kbuf *line, kiln_err *err);
/* Flush and close every file. KILN_IO naming the file. */
kiln_status view_gen_out_close(view_gen_out *o, kiln_err *err);
void view_gen_out_free(view_gen_out *o);   /* after close, or to abandon; o may be NULL */

/* Append printf-formatted text to b. */
void view_gen_printf(kbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The date YYYY-MM-DD of a time in ms since the epoch (UTC, proleptic
 * Gregorian; ms >= 0) into out (11 bytes). */
void view_gen_date(int64_t ms, char out[11]);

/* Sample words, for names and text. */
extern const char *const view_gen_words[];
extern const size_t view_gen_nwords;

#endif
