/* follows.c -- a social graph's edge list turned into "A follows X" and "X is
 * followed by A" rows: the follows view job and its input generator.
 *
 *   follows --input PATH... --output DIR [--data DIR] [--table NAME]
 *
 * Input lines: follower_id TAB followee_id TAB ts_ms (ids u32, different;
 * ts >= 0). Each edge A -> X becomes two rows, user:follows:X and
 * user:followedby:Y in bytes:
 *
 *   OFFSET | SIZE | FIELD
 *   0      | 4    | user id (A, or X), u32 big-endian
 *   4      | 7    | "follows"            | 10 | "followedby"
 *   11     | 4    | X, u32 big-endian    | 14 | A, u32 big-endian (at offset 14)
 *
 * with one cell e:since = the edge's ts in decimal, at timestamp ts. Fixed-
 * width ids keep one user's rows together ("follows" is no prefix of
 * "followedby"), in id order. A repeated edge is one row: the last line in
 * input order gives its time.
 *
 * Queries, each a prefix scan paged with a limit: whom A follows: prefix
 * A "follows"; who follows A: prefix A "followedby". The next page starts at
 * next_startrow (HTTP) or at the last row seen + \x00 (--start).
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

#define FOLLOWS_FIELDS 3
#define FOLLOWS_OUT "follows"
#define FOLLOWS_IN "followedby"

typedef struct follows_state {
    view *v;
    size_t table;
    kbuf row;
    kbuf last;
} follows_state;

static void
follows_state_free(void *p)
{
    follows_state *st = p;
    if (st == NULL)
        return;
    view_free(st->v);
    buf_free(&st->row);
    buf_free(&st->last);
    free(st);
}

static kiln_status
follows_map(mr_task *t, kslice line, kiln_err *err)
{
    follows_state *st = mr_task_state(t);
    kslice f[FOLLOWS_FIELDS];
    kiln_status bad;
    if (!view_fields(st->v, t, line, f, FOLLOWS_FIELDS, &bad, err))
        return bad;
    uint32_t a, x;
    int64_t ts;
    if (view_parse_u32(f[0], &a) != 0 || view_parse_u32(f[1], &x) != 0)
        return view_bad(st->v, t, "user id is not a u32", err);
    if (a == x)
        return view_bad(st->v, t, "a user following themself", err);
    if (view_parse_i64(f[2], &ts) != 0 || ts < 0)
        return view_bad(st->v, t, "timestamp is not a number of ms >= 0", err);
    uint8_t head[VIEW_POS + 8];
    view_pos(t, head);
    coding_put_be64(head + VIEW_POS, (uint64_t)ts);
    kslice h = kslice_make(head, sizeof head), none = kslice_make(NULL, 0);
    uint8_t row[4 + sizeof FOLLOWS_IN - 1 + 4];
    coding_put_be32(row, a);
    memcpy(row + 4, FOLLOWS_OUT, sizeof FOLLOWS_OUT - 1);
    coding_put_be32(row + 4 + sizeof FOLLOWS_OUT - 1, x);
    char num[24];
    kslice since = view_i64_text(num, ts), out = kslice_make(row, 8 + sizeof FOLLOWS_OUT - 1);
    kiln_status s = view_index_put(st->v, t, st->table, out, "e", kslice_str("since"), ts, since,
                                   err);
    if (s == KILN_OK)
        s = view_emit(st->v, t, st->table, out, h, none, err);
    if (s != KILN_OK)
        return s;
    coding_put_be32(row, x);
    memcpy(row + 4, FOLLOWS_IN, sizeof FOLLOWS_IN - 1);
    coding_put_be32(row + 4 + sizeof FOLLOWS_IN - 1, a);
    kslice in = kslice_make(row, sizeof row);
    s = view_index_put(st->v, t, st->table, in, "e", kslice_str("since"), ts, since, err);
    if (s != KILN_OK)
        return s;
    return view_emit(st->v, t, st->table, in, h, none, err);
}

static kiln_status
follows_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    if (index_output_owns(key))
        return index_output_reduce(t, key, values, err);
    follows_state *st = mr_task_state(t);
    size_t table;
    uint64_t n;
    kiln_status s = view_group(st->v, key, &table, &st->row, err);
    if (s == KILN_OK)
        s = view_last(st->v, t, values, &st->last, &n, err);
    if (s != KILN_OK)
        return s;
    if (st->last.len != 8)
        return status_set(err, KILN_CORRUPTION, "follows: a value of %zu bytes", st->last.len);
    int64_t ts = (int64_t)coding_get_be64(st->last.data);
    char num[24];
    return view_put(st->v, t, table, buf_slice(&st->row), "e", kslice_str("since"), ts,
                    view_i64_text(num, ts), err);
}

static kiln_status
follows_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    follows_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, follows_state_free);
    st->v = view_new(job, "follows");
    kiln_status s = view_setup_one_table(st->v, argc, argv, "follows", "e", &st->table, err);
    if (s != KILN_OK)
        return s;
    mr_job_set_map(job, follows_map);
    mr_job_set_reduce(job, follows_reduce);
    return KILN_OK;
}

const mr_job_def follows_job = {
    "follows",
    "an edge list as follows / followed-by rows, paged by prefix scans",
    "Usage: kiln-mr follows --input PATH... --output DIR [--data DIR] [--table NAME]\n"
    "\n"
    "Turns lines  follower_id TAB followee_id TAB ts_ms  into two rows per edge\n"
    "A -> X:  A \"follows\" X  and  X \"followedby\" A  (ids u32 BE), each with\n"
    "e:since = ts. HFiles go to DIR/e for `kiln load NAME DIR`.\n"
    "\n"
    "  --table NAME   the table (default follows). When it exists in the data\n"
    "                 directory (--data DIR, else $KILN_DATA, else ./kiln-data)\n"
    "                 its regions and family settings are used.\n"
    "\n"
    "Queries: whom user 42 follows, 20 at a time:\n"
    "  kiln scan follows --prefix '\\x00\\x00\\x00*follows' --limit 20\n"
    "who follows 42: --prefix '\\x00\\x00\\x00*followedby'. Self-follows and\n"
    "malformed lines are bad lines; -D follows.skip.bad.lines=false fails on one.\n",
    follows_setup,
};

/* ------------------------------------------------------------------ generator */

/* Edges over 2023, in time order, among max(10, rows/20) users: followers
 * uniform, followees skewed (a few accounts are followed by many). Random
 * repeats of an edge happen; 2 in 1000 lines repeat the previous edge later. */
static kiln_status
follows_generate(const view_gen_options *o, kiln_err *err)
{
    const int64_t base = 1672531200000LL, span = 365LL * 86400000;
    uint64_t users = o->rows / 20 > 10 ? o->rows / 20 : 10;
    view_gen_rng r;
    view_gen_seed(&r, o->seed, 4);
    view_gen_out *out;
    kiln_status s = view_gen_out_open(o->dir, "edges", o->files, o->rows, &out, err);
    if (s != KILN_OK)
        return s;
    kbuf line = KBUF_INIT;
    uint64_t a = 1, x = 2;
    for (uint64_t i = 0; i < o->rows && s == KILN_OK; i++) {
        if (i == 0 || !view_gen_chance(&r, 2)) {
            a = 1 + view_gen_below(&r, users);
            x = 1 + view_gen_skewed(&r, users, 3);
            if (x == a)
                x = a % users + 1;
        }
        int64_t ts = base + (int64_t)(i * (uint64_t)span / (o->rows ? o->rows : 1)) +
                     (int64_t)view_gen_below(&r, 1000);
        buf_reset(&line);
        view_gen_printf(&line, "%" PRIu64 "\t%" PRIu64 "\t%" PRId64, a, x, ts);
        s = view_gen_out_line(out, i, o, &r, &line, err);
    }
    if (s == KILN_OK)
        s = view_gen_out_close(out, err);
    view_gen_out_free(out);
    buf_free(&line);
    return s;
}

const view_gen_def follows_gen = {
    "follows",
    "edges",
    "DIR/edges-NNNNN.tsv: follower_id TAB followee_id TAB ts_ms",
    follows_generate,
};
