/* reviews.c -- the many-to-many of users and books through their reviews,
 * stored once from each side: the reviews view job and its input generator.
 *
 *   reviews --input PATH... --output DIR [--data DIR] [--table NAME]
 *
 * Input lines: user_id TAB user_name TAB book_id TAB book_title TAB stars TAB
 * ts_ms TAB text (ids u32, stars 1..5, ts >= 0, names non-empty, text may be
 * empty). Each review becomes two rows of 9 bytes:
 *
 *   OFFSET | SIZE | FIELD                  OFFSET | SIZE | FIELD
 *   0      | 1    | 'u'                    0      | 1    | 'b'
 *   1      | 4    | user id, u32 BE        1      | 4    | book id, u32 BE
 *   5      | 4    | book id, u32 BE        5      | 4    | user id, u32 BE
 *
 * The user's row holds r:book (the title), r:stars, r:text; the book's row
 * r:stars, r:text, r:user (the user's name); r:text is left out when empty;
 * timestamp = the review's ts. A user reviewing a book again replaces the
 * review (last line in input order wins, for both rows).
 *
 * Queries, one prefix scan each: a user's reviews: prefix 'u' + user id;
 * a book's reviews: prefix 'b' + book id (paged with limit and
 * next_startrow).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/index_output.h"
#include "jobs/jobs_args.h"
#include "jobs/view_common.h"
#include "jobs/view_gen.h"
#include "storage/base/coding.h"

#define REVIEWS_FIELDS 7
#define REVIEWS_ROW 9

typedef struct reviews_state {
    view *v;
    size_t table;
    kbuf row;
    kbuf last;
} reviews_state;

static void
reviews_state_free(void *p)
{
    reviews_state *st = p;
    if (st == NULL)
        return;
    view_free(st->v);
    buf_free(&st->row);
    buf_free(&st->last);
    free(st);
}

/* Split and check a review line: NULL when good, else the reason. */
static const char *
reviews_parse(kslice line, kslice *f, uint32_t *user, uint32_t *book, int64_t *ts)
{
    size_t nf = view_split(line, '\t', f, REVIEWS_FIELDS);
    uint32_t stars;
    if (nf != REVIEWS_FIELDS)
        return "wrong field count (7 expected)";
    if (view_parse_u32(f[0], user) != 0 || view_parse_u32(f[2], book) != 0)
        return "user or book id is not a u32";
    if (f[1].n == 0 || f[3].n == 0)
        return "empty user name or book title";
    if (!view_text_ok(f[1]) || !view_text_ok(f[3]) || !view_text_ok(f[6]))
        return "NUL byte or over-long field";
    if (view_parse_u32(f[4], &stars) != 0 || stars < 1 || stars > 5)
        return "stars is not 1..5";
    if (view_parse_i64(f[5], ts) != 0 || *ts < 0)
        return "timestamp is not a number of ms >= 0";
    return NULL;
}

/* Offer a line's cells of row (a 'u' or a 'b' row) to -D kiln.index, as
 * reduce writes them. */
static kiln_status
reviews_index(reviews_state *st, mr_task *t, kslice row, const kslice *f, int64_t ts,
              kiln_err *err)
{
    kiln_status s = KILN_OK;
    if (row.p[0] == 'u')
        s = view_index_put(st->v, t, st->table, row, "r", kslice_str("book"), ts, f[3], err);
    if (s == KILN_OK)
        s = view_index_put(st->v, t, st->table, row, "r", kslice_str("stars"), ts, f[4], err);
    if (s == KILN_OK && f[6].n > 0)
        s = view_index_put(st->v, t, st->table, row, "r", kslice_str("text"), ts, f[6], err);
    if (s == KILN_OK && row.p[0] == 'b')
        s = view_index_put(st->v, t, st->table, row, "r", kslice_str("user"), ts, f[1], err);
    return s;
}

static kiln_status
reviews_map(mr_task *t, kslice line, kiln_err *err)
{
    reviews_state *st = mr_task_state(t);
    kslice f[REVIEWS_FIELDS];
    uint32_t user, book;
    int64_t ts;
    const char *bad = reviews_parse(line, f, &user, &book, &ts);
    if (bad != NULL)
        return view_bad(st->v, t, bad, err);
    uint8_t pos[VIEW_POS];
    view_pos(t, pos);
    uint8_t row[REVIEWS_ROW];
    row[0] = 'u';
    coding_put_be32(row + 1, user);
    coding_put_be32(row + 5, book);
    kslice p = kslice_make(pos, VIEW_POS), r = kslice_make(row, REVIEWS_ROW);
    kiln_status s = reviews_index(st, t, r, f, ts, err);
    if (s == KILN_OK)
        s = view_emit(st->v, t, st->table, r, p, line, err);
    if (s != KILN_OK)
        return s;
    row[0] = 'b';
    coding_put_be32(row + 1, book);
    coding_put_be32(row + 5, user);
    s = reviews_index(st, t, r, f, ts, err);
    if (s != KILN_OK)
        return s;
    return view_emit(st->v, t, st->table, r, p, line, err);
}

static kiln_status
reviews_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    if (index_output_owns(key))
        return index_output_reduce(t, key, values, err);
    reviews_state *st = mr_task_state(t);
    size_t table;
    uint64_t n;
    kiln_status s = view_group(st->v, key, &table, &st->row, err);
    if (s == KILN_OK)
        s = view_last(st->v, t, values, &st->last, &n, err);
    if (s != KILN_OK)
        return s;
    kslice f[REVIEWS_FIELDS];
    uint32_t user, book;
    int64_t ts;
    if (st->row.len != REVIEWS_ROW || reviews_parse(buf_slice(&st->last), f, &user, &book, &ts))
        return status_set(err, KILN_CORRUPTION, "reviews: a malformed row or value");
    kslice row = buf_slice(&st->row);
    if (row.p[0] == 'u') {
        s = view_put(st->v, t, table, row, "r", kslice_str("book"), ts, f[3], err);
        if (s == KILN_OK)
            s = view_put(st->v, t, table, row, "r", kslice_str("stars"), ts, f[4], err);
        if (s == KILN_OK && f[6].n > 0)
            s = view_put(st->v, t, table, row, "r", kslice_str("text"), ts, f[6], err);
        return s;
    }
    s = view_put(st->v, t, table, row, "r", kslice_str("stars"), ts, f[4], err);
    if (s == KILN_OK && f[6].n > 0)
        s = view_put(st->v, t, table, row, "r", kslice_str("text"), ts, f[6], err);
    if (s == KILN_OK)
        s = view_put(st->v, t, table, row, "r", kslice_str("user"), ts, f[1], err);
    return s;
}

static kiln_status
reviews_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    reviews_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, reviews_state_free);
    st->v = view_new(job, "reviews");
    kiln_status s = view_setup_one_table(st->v, argc, argv, "reviews", "r", &st->table, err);
    if (s != KILN_OK)
        return s;
    mr_job_set_map(job, reviews_map);
    mr_job_set_reduce(job, reviews_reduce);
    return KILN_OK;
}

const mr_job_def reviews_job = {
    "reviews",
    "users and books through their reviews: a row from each side",
    "Usage: kiln-mr reviews --input PATH... --output DIR [--data DIR] [--table NAME]\n"
    "\n"
    "Turns lines  user_id TAB user_name TAB book_id TAB book_title TAB stars TAB\n"
    "ts_ms TAB text  into two rows per review: 'u' user book (r:book = title,\n"
    "r:stars, r:text) and 'b' book user (r:stars, r:text, r:user = name), ids\n"
    "u32 BE, at the review's time. HFiles go to DIR/r for `kiln load NAME DIR`.\n"
    "\n"
    "  --table NAME   the table (default reviews). When it exists in the data\n"
    "                 directory (--data DIR, else $KILN_DATA, else ./kiln-data)\n"
    "                 its regions and family settings are used.\n"
    "\n"
    "Queries: user 7's reviews: kiln scan reviews --prefix 'u\\x00\\x00\\x00\\x07';\n"
    "book 7's: --prefix 'b\\x00\\x00\\x00\\x07'.\n"
    "Settings: -D reviews.skip.bad.lines=false fails on the first bad line.\n",
    reviews_setup,
};

/* ------------------------------------------------------------------ generator */

static void
reviews_capital(kbuf *b, const char *w)
{
    buf_append_u8(b, (uint8_t)(w[0] >= 'a' && w[0] <= 'z' ? w[0] - 32 : w[0]));
    buf_append(b, w + 1, strlen(w + 1));
}

static const char *const reviews_pattern[] = {"The %s %s", "%s and %s", "Songs of the %s %s",
                                              "The %s %s Road", "%s Under %s"};

/* A user's name and a book's title depend on the id alone. */
static void
reviews_title(uint64_t seed, uint64_t book, kbuf *b)
{
    view_gen_rng r;
    view_gen_seed(&r, seed ^ 0x5EEDB00Cull, 1000000 + book);
    const char *pat = view_gen_pick(&r, reviews_pattern, sizeof reviews_pattern / sizeof *reviews_pattern);
    for (const char *p = pat; *p; p++) {
        if (p[0] == '%' && p[1] == 's') {
            reviews_capital(b, view_gen_pick(&r, view_gen_words, view_gen_nwords));
            p++;
        } else {
            buf_append_u8(b, (uint8_t)*p);
        }
    }
}

static void
reviews_user(uint64_t seed, uint64_t user, kbuf *b)
{
    view_gen_rng r;
    view_gen_seed(&r, seed ^ 0x5EED05E4ull, 2000000 + user);
    view_gen_printf(b, "%s_%s%02u", view_gen_pick(&r, view_gen_words, view_gen_nwords),
                    view_gen_pick(&r, view_gen_words, view_gen_nwords),
                    (unsigned)view_gen_below(&r, 100));
}

/* Reviews over 2022-2023 in time order by max(10, rows/8) users (busy ones
 * with low ids) of max(10, rows/20) books (popular ones with low ids); stars
 * lean high; 1 in 10 has no text. 2 in 1000 lines revise the previous review
 * (same user and book, later): the later one wins. */
static kiln_status
reviews_generate(const view_gen_options *o, kiln_err *err)
{
    const int64_t base = 1640995200000LL, span = 730LL * 86400000;
    uint64_t users = o->rows / 8 > 10 ? o->rows / 8 : 10;
    uint64_t books = o->rows / 20 > 10 ? o->rows / 20 : 10;
    view_gen_rng r;
    view_gen_seed(&r, o->seed, 5);
    view_gen_out *out;
    kiln_status s = view_gen_out_open(o->dir, "reviews", o->files, o->rows, &out, err);
    if (s != KILN_OK)
        return s;
    kbuf line = KBUF_INIT;
    uint64_t user = 1, book = 1;
    for (uint64_t i = 0; i < o->rows && s == KILN_OK; i++) {
        if (i == 0 || !view_gen_chance(&r, 2)) {
            user = 1 + view_gen_skewed(&r, users, 2);
            book = 1 + view_gen_skewed(&r, books, 3);
        }
        int64_t ts = base + (int64_t)(i * (uint64_t)span / (o->rows ? o->rows : 1)) +
                     (int64_t)view_gen_below(&r, 60000);
        unsigned stars = 5 - (unsigned)view_gen_skewed(&r, 5, 2);
        buf_reset(&line);
        view_gen_printf(&line, "%" PRIu64 "\t", user);
        reviews_user(o->seed, user, &line);
        view_gen_printf(&line, "\t%" PRIu64 "\t", book);
        reviews_title(o->seed, book, &line);
        view_gen_printf(&line, "\t%u\t%" PRId64 "\t", stars, ts);
        if (!view_gen_chance(&r, 100)) {
            uint64_t words = 3 + view_gen_below(&r, 8);
            for (uint64_t w = 0; w < words; w++)
                view_gen_printf(&line, "%s%s", w ? " " : "",
                                view_gen_pick(&r, view_gen_words, view_gen_nwords));
        }
        s = view_gen_out_line(out, i, o, &r, &line, err);
    }
    if (s == KILN_OK)
        s = view_gen_out_close(out, err);
    view_gen_out_free(out);
    buf_free(&line);
    return s;
}

const view_gen_def reviews_gen = {
    "reviews",
    "reviews",
    "DIR/reviews-NNNNN.tsv: user_id TAB user_name TAB book_id TAB book_title TAB stars\n"
    "                       TAB ts_ms TAB text",
    reviews_generate,
};
