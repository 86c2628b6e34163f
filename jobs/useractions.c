/* useractions.c -- per-user activity, newest first: the useractions view job
 * and its input generator.
 *
 *   useractions --input PATH... --output DIR [--data DIR] [--table NAME]
 *
 * Input lines: user_id TAB ts_ms TAB action_id TAB action TAB detail
 * (user and action ids u32, ts >= 0 in ms, action non-empty, detail may be
 * empty). Row key, 16 bytes, one row per action:
 *
 *   OFFSET | SIZE | FIELD
 *   0      | 4    | user id, u32 big-endian
 *   4      | 8    | Long.MAX_VALUE - ts, i64 big-endian: newest first
 *   12     | 4    | action id, u32 big-endian (two actions in one ms differ)
 *
 * Cells (timestamp = the action's ts): content:name = the action,
 * content:detail = the detail (none when empty). Queries, each one scan:
 *   - a user's latest N actions: prefix = user id (4 bytes), limit N;
 *   - page K of size N: the scan above resumed K-1 times from next_startrow
 *     (HTTP) or from the last row seen + \x00 (--start), limit N each;
 *   - actions in [t1, t2): start = user ++ BE64(MAX - t2 + 1),
 *     stop = user ++ BE64(MAX - t1 + 1).
 * A line repeating a row (same user, ts, action id) replaces it: last wins.
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

#define USERACTIONS_ROW 16
#define USERACTIONS_FIELDS 5

typedef struct useractions_state {
    view *v;
    size_t table;
    kbuf row;
    kbuf last;
} useractions_state;

static void
useractions_state_free(void *p)
{
    useractions_state *st = p;
    if (st == NULL)
        return;
    view_free(st->v);
    buf_free(&st->row);
    buf_free(&st->last);
    free(st);
}

static kiln_status
useractions_map(mr_task *t, kslice line, kiln_err *err)
{
    useractions_state *st = mr_task_state(t);
    kslice f[USERACTIONS_FIELDS];
    kiln_status bad;
    if (!view_fields(st->v, t, line, f, USERACTIONS_FIELDS, &bad, err))
        return bad;
    uint32_t user, action;
    int64_t ts;
    if (view_parse_u32(f[0], &user) != 0)
        return view_bad(st->v, t, "user id is not a u32", err);
    if (view_parse_i64(f[1], &ts) != 0 || ts < 0)
        return view_bad(st->v, t, "timestamp is not a number of ms >= 0", err);
    if (view_parse_u32(f[2], &action) != 0)
        return view_bad(st->v, t, "action id is not a u32", err);
    if (f[3].n == 0 || !view_text_ok(f[3]) || !view_text_ok(f[4]))
        return view_bad(st->v, t, "empty action, NUL byte or over-long field", err);
    uint8_t row[USERACTIONS_ROW];
    coding_put_be32(row, user);
    coding_put_be64(row + 4, (uint64_t)(INT64_MAX - ts));
    coding_put_be32(row + 12, action);
    /* value: position, then "action TAB detail" as it stands in the line */
    uint8_t pos[VIEW_POS];
    view_pos(t, pos);
    kslice rest = kslice_make(f[3].p, line.n - (size_t)(f[3].p - line.p));
    kslice r = kslice_make(row, sizeof row);
    kiln_status s = KILN_OK;
    if (f[4].n > 0)
        s = view_index_put(st->v, t, st->table, r, "content", kslice_str("detail"), ts, f[4], err);
    if (s == KILN_OK)
        s = view_index_put(st->v, t, st->table, r, "content", kslice_str("name"), ts, f[3], err);
    if (s != KILN_OK)
        return s;
    return view_emit(st->v, t, st->table, r, kslice_make(pos, VIEW_POS), rest, err);
}

static kiln_status
useractions_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    if (index_output_owns(key))
        return index_output_reduce(t, key, values, err);
    useractions_state *st = mr_task_state(t);
    size_t table;
    uint64_t n;
    kiln_status s = view_group(st->v, key, &table, &st->row, err);
    if (s == KILN_OK)
        s = view_last(st->v, t, values, &st->last, &n, err);
    if (s != KILN_OK)
        return s;
    if (st->row.len != USERACTIONS_ROW)
        return status_set(err, KILN_CORRUPTION, "useractions: a row of %zu bytes", st->row.len);
    kslice row = buf_slice(&st->row);
    int64_t ts = INT64_MAX - (int64_t)coding_get_be64(row.p + 4);
    const uint8_t *p = st->last.data;
    const uint8_t *tab = memchr(p, '\t', st->last.len);
    if (tab == NULL)
        return status_set(err, KILN_CORRUPTION, "useractions: a value without its detail");
    kslice name = kslice_make(p, (size_t)(tab - p));
    kslice detail = kslice_make(tab + 1, st->last.len - name.n - 1);
    if (detail.n > 0) {
        s = view_put(st->v, t, table, row, "content", kslice_str("detail"), ts, detail, err);
        if (s != KILN_OK)
            return s;
    }
    return view_put(st->v, t, table, row, "content", kslice_str("name"), ts, name, err);
}

static kiln_status
useractions_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    useractions_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, useractions_state_free);
    st->v = view_new(job, "useractions");
    kiln_status s = view_setup_one_table(st->v, argc, argv, "useractions", "content", &st->table, err);
    if (s != KILN_OK)
        return s;
    mr_job_set_map(job, useractions_map);
    mr_job_set_reduce(job, useractions_reduce);
    return KILN_OK;
}

const mr_job_def useractions_job = {
    "useractions",
    "per-user activity, newest first: rows <user><MAX - ts><action>",
    "Usage: kiln-mr useractions --input PATH... --output DIR [--data DIR] [--table NAME]\n"
    "\n"
    "Builds the per-user activity view from lines\n"
    "  user_id TAB ts_ms TAB action_id TAB action TAB detail\n"
    "as HFiles in DIR/content/, for `kiln load NAME DIR` (NAME: useractions).\n"
    "Row key (16 bytes): user id u32 BE, Long.MAX_VALUE - ts i64 BE, action id\n"
    "u32 BE, so a user's actions are contiguous and newest first. Cells, at the\n"
    "action's time: content:name (the action), content:detail (when not empty).\n"
    "\n"
    "  --table NAME   the table (default useractions). When it exists in the data\n"
    "                 directory (--data DIR, else $KILN_DATA, else ./kiln-data) its\n"
    "                 regions and family settings are used; else split keys are\n"
    "                 sampled from the input.\n"
    "\n"
    "Create the table first, e.g.\n"
    "  kiln create useractions --family content --split '\\x00\\x00\\x10\\x00'\n"
    "Queries: latest N of user U: kiln scan useractions --prefix U4 --limit N\n"
    "(U4 = the 4 id bytes, e.g. '\\x00\\x00\\x00\\x2A' for 42); paging from\n"
    "next_startrow; a time window by start/stop keys (docs/views.md).\n"
    "\n"
    "Settings: -D useractions.skip.bad.lines=false fails the job on the first bad\n"
    "line (default: count them under useractions / Bad Lines and skip them).\n"
    "A salted table (kiln create --salt-buckets N) gets each row's bucket byte;\n"
    "-D kiln.index=NAME:content:name[;...] builds secondary indexes beside it\n"
    "(the table must exist), loaded with it by `kiln load`.\n",
    useractions_setup,
};

/* ------------------------------------------------------------------ generator */

/* Actions by frequency (repeats weigh them). */
static const char *const useractions_kinds[] = {
    "view_item", "view_item", "view_item", "view_item", "search", "search", "search",
    "add_to_cart", "add_to_cart", "login", "logout", "purchase", "rate_item", "share",
    "remove_from_cart",
};

static void
useractions_detail(view_gen_rng *r, const char *action, kbuf *b)
{
    uint64_t item = 100000 + view_gen_skewed(r, 50000, 2);
    if (strcmp(action, "search") == 0)
        view_gen_printf(b, "q=%s %s", view_gen_pick(r, view_gen_words, view_gen_nwords),
                        view_gen_pick(r, view_gen_words, view_gen_nwords));
    else if (strcmp(action, "login") == 0)
        view_gen_printf(b, "ip=10.%u.%u.%u", (unsigned)view_gen_below(r, 256),
                        (unsigned)view_gen_below(r, 256), (unsigned)view_gen_below(r, 256));
    else if (strcmp(action, "purchase") == 0)
        view_gen_printf(b, "order=%" PRIu64 " total=%" PRIu64, 500000 + view_gen_below(r, 900000),
                        199 + view_gen_below(r, 50000));
    else if (strcmp(action, "add_to_cart") == 0)
        view_gen_printf(b, "item=%" PRIu64 " qty=%u", item, 1 + (unsigned)view_gen_below(r, 3));
    else if (strcmp(action, "rate_item") == 0)
        view_gen_printf(b, "item=%" PRIu64 " stars=%u", item, 1 + (unsigned)view_gen_below(r, 5));
    else if (strcmp(action, "share") == 0)
        view_gen_printf(b, "item=%" PRIu64 " via=%s", item,
                        view_gen_below(r, 2) ? "link" : "email");
    else if (strcmp(action, "logout") != 0)
        view_gen_printf(b, "item=%" PRIu64, item);
}

/* Actions over 30 days from 2024-03-01 in time order; users 1..max(10,
 * rows/40), the low ids the busiest. About 2 lines in 1000 correct the
 * previous line's action (same user, ts and action id): the later one wins. */
static kiln_status
useractions_generate(const view_gen_options *o, kiln_err *err)
{
    const int64_t base = 1709251200000LL, span = 30LL * 86400000;
    uint64_t users = o->rows / 40 > 10 ? o->rows / 40 : 10;
    view_gen_rng r;
    view_gen_seed(&r, o->seed, 1);
    view_gen_out *out;
    kiln_status s = view_gen_out_open(o->dir, "actions", o->files, o->rows, &out, err);
    if (s != KILN_OK)
        return s;
    kbuf line = KBUF_INIT;
    uint64_t user = 1, aid = 0;
    int64_t ts = base;
    for (uint64_t i = 0; i < o->rows && s == KILN_OK; i++) {
        if (i == 0 || !view_gen_chance(&r, 2)) {
            user = 1 + view_gen_skewed(&r, users, 2);
            int64_t step = span / (int64_t)o->rows;
            ts = base + (int64_t)i * step + (int64_t)view_gen_below(&r, (uint64_t)step + 1);
            aid = i + 1;
        }
        const char *action = view_gen_pick(&r, useractions_kinds,
                                           sizeof useractions_kinds / sizeof *useractions_kinds);
        buf_reset(&line);
        view_gen_printf(&line, "%" PRIu64 "\t%" PRId64 "\t%" PRIu64 "\t%s\t", user, ts, aid,
                        action);
        useractions_detail(&r, action, &line);
        s = view_gen_out_line(out, i, o, &r, &line, err);
    }
    if (s == KILN_OK)
        s = view_gen_out_close(out, err);
    view_gen_out_free(out);
    buf_free(&line);
    return s;
}

const view_gen_def useractions_gen = {
    "useractions",
    "actions",
    "DIR/actions-NNNNN.tsv: user_id TAB ts_ms TAB action_id TAB action TAB detail",
    useractions_generate,
};
