/* dailyactivity.c -- a view built from a view: per-user daily activity
 * counts computed from the loaded useractions table (table input), not from
 * raw files.
 *
 *   dailyactivity [--input-table useractions[@VERSION]] --output DIR
 *                 [--data DIR] [--table NAME] [selection options]
 *
 * Input: the rows of a useractions view (useractions.c): row key user id
 * u32 BE, Long.MAX_VALUE - ts i64 BE, action id u32 BE; content:name = the
 * action. A row of another shape, or without content:name, is a bad row
 * (counted under dailyactivity / Bad rows, the first few logged).
 *
 * Output, one row per user and UTC day with any action; row key 8 bytes:
 *
 *   OFFSET | SIZE | FIELD
 *   0      | 4    | user id, u32 big-endian
 *   4      | 4    | day: days since 1970-01-01 (UTC), u32 big-endian
 *
 * so a user's days are contiguous and in date order. Cells, at the day's
 * first millisecond: a:<action> = how many of that action (decimal text),
 * s:total = all actions of the day, s:first and s:last = the first and
 * last action's ts in ms (decimal text).
 *
 * Queries: one user's day: Get <user><day>; a user's days in [d1, d2):
 * scan start <user><d1> stop <user><d2>; a user's busiest actions on a day:
 * Get <user><day> a. The version of useractions read is in _job.json
 * ("input_table"), so the view records what it was derived from.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/jobs_args.h"
#include "jobs/table_input.h"
#include "jobs/view_common.h"
#include "storage/base/coding.h"
#include "storage/hfile/cell.h"

#define DAILY_SRC_ROW 16
#define DAILY_ROW 8
#define DAILY_DAY_MS 86400000LL
#define DAILY_ACTIONS_MAX 1024     /* distinct actions in one user's day */

typedef struct daily_action {
    kslice name;                 /* borrowed from the values' copy */
    uint64_t count;
} daily_action;

typedef struct daily_state {
    view *v;
    size_t table;
    int bad_rows;                /* counter */
    uint64_t logged;
    kbuf row;
    kbuf vals;                   /* the current group's values, copied */
    daily_action *acts;
} daily_state;

static void
daily_state_free(void *p)
{
    daily_state *st = p;
    if (st == NULL)
        return;
    view_free(st->v);
    buf_free(&st->row);
    buf_free(&st->vals);
    free(st->acts);
    free(st);
}

static kiln_status
daily_bad(daily_state *st, mr_task *t, kslice row, const char *why)
{
    mr_task_count(t, st->bad_rows, 1);
    if (st->logged++ < VIEW_LOG_MAX && !mr_task_sampling(t)) {
        kbuf p = KBUF_INIT;
        cell_to_string_binary(&p, row.p, row.n);
        buf_append_u8(&p, 0);
        mr_task_warn(t, "%s: bad row %s: %s", mr_task_input_path(t), (const char *)p.data, why);
        buf_free(&p);
    }
    return KILN_OK;
}

static kiln_status
daily_map(mr_task *t, kslice rowkey, kiln_err *err)
{
    daily_state *st = mr_task_state(t);
    const store_row *r = table_input_row(t);
    if (r == NULL)
        return status_set(err, KILN_INTERNAL, "dailyactivity: a record not from a table");
    if (rowkey.n != DAILY_SRC_ROW)
        return daily_bad(st, t, rowkey, "not a 16-byte useractions row");
    const kiln_cell *name = NULL;
    for (size_t i = 0; i < r->count; i++) {
        const kiln_cell *c = &r->cells[i];
        if (c->family_len == 7 && memcmp(c->family, "content", 7) == 0 &&
            c->qualifier_len == 4 && memcmp(c->qualifier, "name", 4) == 0) {
            name = c;
            break;
        }
    }
    if (name == NULL || name->value_len == 0)
        return daily_bad(st, t, rowkey, "no content:name");
    int64_t ts = INT64_MAX - (int64_t)coding_get_be64(rowkey.p + 4);
    if (ts < 0)
        return daily_bad(st, t, rowkey, "a time before 1970");
    uint8_t out[DAILY_ROW];
    memcpy(out, rowkey.p, 4);
    coding_put_be32(out + 4, (uint32_t)(ts / DAILY_DAY_MS));
    uint8_t head[8];
    coding_put_be64(head, (uint64_t)ts);
    return view_emit(st->v, t, st->table, kslice_make(out, sizeof out), kslice_make(head, 8),
                     kslice_make(name->value, name->value_len), err);
}

static int
daily_cmp_action(const void *a, const void *b)
{
    return kslice_cmp(((const daily_action *)a)->name, ((const daily_action *)b)->name);
}

static kiln_status
daily_put_num(daily_state *st, mr_task *t, const char *family, kslice q, int64_t ts, int64_t n,
              kiln_err *err)
{
    char num[24];
    return view_put(st->v, t, st->table, buf_slice(&st->row), family, q, ts, view_i64_text(num, n),
                    err);
}

static kiln_status
daily_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    daily_state *st = mr_task_state(t);
    size_t table;
    kiln_status s = view_group(st->v, key, &table, &st->row, err);
    if (s != KILN_OK)
        return s;
    if (st->row.len != DAILY_ROW)
        return status_set(err, KILN_CORRUPTION, "dailyactivity: a row of %zu bytes", st->row.len);
    /* copy the values ([be64 ts][action]) so the actions can be counted and sorted */
    buf_reset(&st->vals);
    kslice v;
    uint64_t total = 0;
    int64_t first = INT64_MAX, last = INT64_MIN;
    while (mr_task_next_value(values, &v)) {
        if (v.n < 9)
            return status_set(err, KILN_CORRUPTION, "dailyactivity: a value of %zu bytes", v.n);
        int64_t ts = (int64_t)coding_get_be64(v.p);
        first = ts < first ? ts : first;
        last = ts > last ? ts : last;
        buf_append_be32(&st->vals, (uint32_t)(v.n - 8));
        buf_append(&st->vals, v.p + 8, v.n - 8);
        total++;
    }
    size_t n = 0;
    for (size_t off = 0; off < st->vals.len;) {
        uint32_t len = coding_get_be32(st->vals.data + off);
        kslice name = kslice_make(st->vals.data + off + 4, len);
        off += 4 + len;
        size_t k = 0;
        while (k < n && kslice_cmp(st->acts[k].name, name) != 0)
            k++;
        if (k == n) {
            if (n == DAILY_ACTIONS_MAX)
                return status_set(err, KILN_INVALID, "dailyactivity: more than %d distinct "
                                  "actions in one user's day", DAILY_ACTIONS_MAX);
            st->acts[n].name = name;
            st->acts[n++].count = 0;
        }
        st->acts[k].count++;
    }
    qsort(st->acts, n, sizeof *st->acts, daily_cmp_action);
    int64_t ts = (int64_t)coding_get_be32(st->row.data + 4) * DAILY_DAY_MS;
    for (size_t k = 0; k < n && s == KILN_OK; k++)
        s = daily_put_num(st, t, "a", st->acts[k].name, ts, (int64_t)st->acts[k].count, err);
    if (s == KILN_OK)
        s = daily_put_num(st, t, "s", kslice_str("first"), ts, first, err);
    if (s == KILN_OK)
        s = daily_put_num(st, t, "s", kslice_str("last"), ts, last, err);
    if (s == KILN_OK)
        s = daily_put_num(st, t, "s", kslice_str("total"), ts, (int64_t)total, err);
    return s;
}

static kiln_status
daily_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    daily_state *st = kiln_calloc(1, sizeof *st);
    st->v = view_new(job, "dailyactivity");
    st->acts = kiln_calloc(DAILY_ACTIONS_MAX, sizeof *st->acts);
    mr_job_set_state(job, st, daily_state_free);
    table_input_spec spec;
    table_input_spec_init(&spec);
    const char *table = "dailyactivity";
    kiln_status s = KILN_OK;
    for (int i = 1; i < argc && s == KILN_OK; i++) {
        if (table_input_arg(&spec, argc, argv, &i, &s, err))
            continue;
        if (view_common_arg(st->v, argc, argv, &i, &s, err))
            continue;
        if (strcmp(argv[i], "--table") == 0)
            s = jobs_take_value(argc, argv, &i, &table, err);
        else
            s = status_set(err, KILN_INVALID, "dailyactivity: unknown argument '%s'", argv[i]);
    }
    if (s == KILN_OK && !spec.given)
        s = table_input_set_table(&spec, "useractions", err);
    if (s == KILN_OK && spec.raw)
        s = status_set(err, KILN_INVALID, "dailyactivity: --raw is not for a view (it counts "
                       "the actions a read returns)");
    if (s == KILN_OK)
        s = view_add_table_input(st->v, &spec, daily_map, err);
    table_input_spec_free(&spec);
    if (s == KILN_OK)
        s = view_add_table(st->v, NULL, table, "a,s", &st->table, err);
    if (s == KILN_OK)
        s = view_setup(st->v, err);
    if (s != KILN_OK)
        return s;
    st->bad_rows = mr_job_counter(job, "dailyactivity", "Bad rows");
    mr_job_set_map(job, daily_map);
    mr_job_set_reduce(job, daily_reduce);
    return KILN_OK;
}

const mr_job_def dailyactivity_job = {
    "dailyactivity",
    "per-user daily activity counts derived from the loaded useractions table",
    "Usage: kiln-mr dailyactivity --output DIR [--input-table useractions[@VERSION]]\n"
    "                             [--table NAME] [--data DIR] [selection options]\n"
    "\n"
    "A view of a view: reads the useractions table (one version of it, whatever\n"
    "is loaded meanwhile) and writes one row per user and UTC day:\n"
    "  row   user id u32 BE, day (days since 1970-01-01) u32 BE  (8 bytes)\n"
    "  a:<action>  how many of that action that day (decimal)\n"
    "  s:total     every action of the day; s:first, s:last  first and last ts (ms)\n"
    "all at the day's first millisecond.\n"
    "\n"
    "  --table NAME   the output table (default dailyactivity); when it exists in\n"
    "                 the data directory its regions and settings are used.\n"
    "  --data DIR     the data directory (default $KILN_DATA, else ./kiln-data)\n"
    "\n"
    "Create the table first, e.g.\n"
    "  kiln create dailyactivity --family a --family s\n"
    "then `kiln load dailyactivity DIR`. Queries (docs/views.md): one user's day:\n"
    "kiln get dailyactivity U4D4; a user's days in [d1, d2): kiln scan\n"
    "dailyactivity --start U4D1 --stop U4D2.\n"
    "\n"
    "Selection options (of useractions):\n"
    TABLE_INPUT_USAGE,
    daily_setup,
};
