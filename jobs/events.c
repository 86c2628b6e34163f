/* events.c -- generic event data as entity-attribute-value rows: a patient's
 * measurements newest first, the event type as the column: the events view
 * job and its input generator.
 *
 *   events --input PATH... --output DIR [--data DIR] [--table NAME]
 *
 * Input lines: patient_id TAB ts_ms TAB event_type TAB measure (patient id
 * u32, ts >= 0, event type 1..64 bytes of [A-Za-z0-9_.-], measure a decimal
 * number: optional '-', 1..19 digits, optionally '.' and 1..9 digits). Row
 * key, 12 bytes, one row per (patient, ts):
 *
 *   OFFSET | SIZE | FIELD
 *   0      | 4    | patient id, u32 big-endian
 *   4      | 8    | Long.MAX_VALUE - ts, i64 big-endian: newest first
 *
 * Cells (timestamp = ts): e:<event type> = the measure as given. The events
 * of one patient at one ts are one row with one column each; a line
 * repeating (patient, ts, event type) replaces that cell (last line in input
 * order wins) and is counted under events / Duplicate events (last line
 * kept); a row is never replaced whole.
 *
 * Queries, each one scan: a patient's latest N time points: prefix = patient
 * id (4 bytes), limit N (paged from next_startrow, or the last row + \x00);
 * one event type in [t1, t2): start = patient ++ BE64(MAX - t2 + 1), stop =
 * patient ++ BE64(MAX - t1 + 1), columns e:<type> (rows without it are not
 * returned). One time point: Get patient ++ BE64(MAX - ts).
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

#define EVENTS_ROW 12
#define EVENTS_FIELDS 4
#define EVENTS_TYPE_MAX 64
#define EVENTS_INT_DIGITS 19
#define EVENTS_FRAC_DIGITS 9

/* One event of the row being reduced: its type and measure inside st->arena
 * (offsets while the arena grows), and its place in input order. */
typedef struct events_entry {
    size_t type_off, type_n;
    size_t meas_off, meas_n;
    size_t seq;
    const uint8_t *type;    /* set once the arena is complete */
} events_entry;

typedef struct events_state {
    view *v;
    size_t table;
    int c_dup_events;        /* events / Duplicate events (last line kept) */
    int c_events;            /* events / Events stored */
    kbuf row;
    kbuf arena;
    events_entry *ent;
    size_t nent, capent;
} events_state;

static void
events_state_free(void *p)
{
    events_state *st = p;
    if (st == NULL)
        return;
    view_free(st->v);
    buf_free(&st->row);
    buf_free(&st->arena);
    free(st->ent);
    free(st);
}

static int
events_type_ok(kslice s)
{
    if (s.n == 0 || s.n > EVENTS_TYPE_MAX)
        return 0;
    for (size_t i = 0; i < s.n; i++) {
        uint8_t c = s.p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

/* Count the digits of s from *i on; *i left after them. */
static size_t
events_digits(kslice s, size_t *i)
{
    size_t start = *i;
    while (*i < s.n && s.p[*i] >= '0' && s.p[*i] <= '9')
        (*i)++;
    return *i - start;
}

static int
events_measure_ok(kslice s)
{
    size_t i = 0;
    if (i < s.n && s.p[i] == '-')
        i++;
    size_t d = events_digits(s, &i);
    if (d == 0 || d > EVENTS_INT_DIGITS)
        return 0;
    if (i == s.n)
        return 1;
    if (s.p[i] != '.')
        return 0;
    i++;
    d = events_digits(s, &i);
    return d > 0 && d <= EVENTS_FRAC_DIGITS && i == s.n;
}

static kiln_status
events_map(mr_task *t, kslice line, kiln_err *err)
{
    events_state *st = mr_task_state(t);
    kslice f[EVENTS_FIELDS];
    kiln_status bad;
    if (!view_fields(st->v, t, line, f, EVENTS_FIELDS, &bad, err))
        return bad;
    uint32_t patient;
    int64_t ts;
    if (view_parse_u32(f[0], &patient) != 0)
        return view_bad(st->v, t, "patient id is not a u32", err);
    if (view_parse_i64(f[1], &ts) != 0 || ts < 0)
        return view_bad(st->v, t, "timestamp is not a number of ms >= 0", err);
    if (!events_type_ok(f[2]))
        return view_bad(st->v, t, "event type is not 1..64 bytes of [A-Za-z0-9_.-]", err);
    if (!events_measure_ok(f[3]))
        return view_bad(st->v, t, "measure is not a decimal number", err);
    uint8_t row[EVENTS_ROW];
    coding_put_be32(row, patient);
    coding_put_be64(row + 4, (uint64_t)(INT64_MAX - ts));
    kslice r = kslice_make(row, sizeof row);
    kiln_status s = view_index_put(st->v, t, st->table, r, "e", f[2], ts, f[3], err);
    if (s != KILN_OK)
        return s;
    /* value: position, then "type TAB measure" as it stands in the line */
    uint8_t pos[VIEW_POS];
    view_pos(t, pos);
    kslice rest = kslice_make(f[2].p, line.n - (size_t)(f[2].p - line.p));
    return view_emit(st->v, t, st->table, r, kslice_make(pos, VIEW_POS), rest, err);
}

/* By event type, then input order. */
static int
events_entry_cmp(const void *a, const void *b)
{
    const events_entry *x = a, *y = b;
    int c = kslice_cmp(kslice_make(x->type, x->type_n), kslice_make(y->type, y->type_n));
    if (c != 0)
        return c;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static kiln_status
events_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    if (index_output_owns(key))
        return index_output_reduce(t, key, values, err);
    events_state *st = mr_task_state(t);
    size_t table;
    kiln_status s = view_group(st->v, key, &table, &st->row, err);
    if (s != KILN_OK)
        return s;
    if (st->row.len != EVENTS_ROW)
        return status_set(err, KILN_CORRUPTION, "events: a row of %zu bytes", st->row.len);
    kslice row = buf_slice(&st->row);
    int64_t ts = INT64_MAX - (int64_t)coding_get_be64(row.p + 4);

    /* the row's events, in input order (values sort by their position) */
    buf_reset(&st->arena);
    st->nent = 0;
    kslice val;
    while (mr_task_next_value(values, &val)) {
        const uint8_t *tab = val.n > VIEW_POS ? memchr(val.p + VIEW_POS, '\t', val.n - VIEW_POS)
                                              : NULL;
        if (tab == NULL)
            return status_set(err, KILN_CORRUPTION, "events: a map value of %zu bytes without "
                              "its measure", val.n);
        if (st->nent == st->capent) {
            st->capent = st->capent ? 2 * st->capent : 16;
            st->ent = kiln_realloc(st->ent, st->capent * sizeof *st->ent);
        }
        events_entry *e = &st->ent[st->nent];
        e->seq = st->nent++;
        e->type_off = st->arena.len;
        e->type_n = (size_t)(tab - val.p) - VIEW_POS;
        e->meas_off = e->type_off + e->type_n;
        e->meas_n = val.n - VIEW_POS - e->type_n - 1;
        buf_append(&st->arena, val.p + VIEW_POS, e->type_n);
        buf_append(&st->arena, tab + 1, e->meas_n);
    }
    for (size_t i = 0; i < st->nent; i++)
        st->ent[i].type = st->arena.data + st->ent[i].type_off;
    qsort(st->ent, st->nent, sizeof *st->ent, events_entry_cmp);

    /* one cell per type, the last of its run (the latest line) */
    uint64_t dups = 0, stored = 0;
    for (size_t i = 0; i < st->nent && s == KILN_OK; i++) {
        const events_entry *e = &st->ent[i];
        if (i + 1 < st->nent && st->ent[i + 1].type_n == e->type_n &&
            memcmp(st->ent[i + 1].type, e->type, e->type_n) == 0) {
            dups++;
            continue;
        }
        stored++;
        s = view_put(st->v, t, table, row, "e", kslice_make(e->type, e->type_n), ts,
                     kslice_make(st->arena.data + e->meas_off, e->meas_n), err);
    }
    if (dups > 0)
        mr_task_count(t, st->c_dup_events, dups);
    mr_task_count(t, st->c_events, stored);
    return s;
}

static kiln_status
events_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    events_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, events_state_free);
    st->v = view_new(job, "events");
    kiln_status s = view_setup_one_table(st->v, argc, argv, "events", "e", &st->table, err);
    if (s != KILN_OK)
        return s;
    st->c_dup_events = mr_job_counter(job, "events", "Duplicate events (last line kept)");
    st->c_events = mr_job_counter(job, "events", "Events stored");
    mr_job_set_map(job, events_map);
    mr_job_set_reduce(job, events_reduce);
    return KILN_OK;
}

const mr_job_def events_job = {
    "events",
    "generic event data (EAV): rows <patient><MAX - ts>, the event type as column",
    "Usage: kiln-mr events --input PATH... --output DIR [--data DIR] [--table NAME]\n"
    "\n"
    "Builds an entity-attribute-value view of events from lines\n"
    "  patient_id TAB ts_ms TAB event_type TAB measure\n"
    "(event type 1..64 bytes of [A-Za-z0-9_.-], e.g. hr, bp_sys, temp; measure a\n"
    "decimal number, e.g. 72 or 36.8) as HFiles in DIR/e, for `kiln load NAME DIR`.\n"
    "Row key (12 bytes): patient id u32 BE, Long.MAX_VALUE - ts i64 BE, so a\n"
    "patient's rows are contiguous and newest first. Cells, at the event's time:\n"
    "e:EVENT_TYPE = the measure; the events of one patient at one ts share a row.\n"
    "A repeated (patient, ts, event type): the last line wins, counted under\n"
    "events / Duplicate events (last line kept); events / Events stored counts\n"
    "the cells written.\n"
    "\n"
    "  --table NAME   the table (default events). When it exists in the data\n"
    "                 directory (--data DIR, else $KILN_DATA, else ./kiln-data) its\n"
    "                 regions and family settings are used; else split keys are\n"
    "                 sampled from the input.\n"
    "\n"
    "Create the table first, e.g.\n"
    "  kiln create events --family e --split '\\x00\\x00\\x01\\x00'\n"
    "Queries: latest N time points of patient P: kiln scan events --prefix P4\n"
    "--limit N (P4 = the 4 id bytes); one event type in [t1, t2):\n"
    "  --start P4 BE64(MAX - t2 + 1) --stop P4 BE64(MAX - t1 + 1) --columns e:hr\n"
    "(MAX = 9223372036854775807; docs/views.md).\n"
    "\n"
    "Settings: -D events.skip.bad.lines=false fails the job on the first bad line\n"
    "(default: count them under events / Bad Lines and skip them). A salted\n"
    "table (kiln create --salt-buckets N) gets each row's bucket byte;\n"
    "-D kiln.index=NAME:e:TYPE[;...] builds secondary indexes beside it (the\n"
    "table must exist), loaded with it by `kiln load`.\n",
    events_setup,
};

/* ------------------------------------------------------------------ generator */

/* A reading: the events one measurement gives, each a range of tenths (or
 * units when tenths == 0). */
typedef struct events_measure {
    const char *type;
    int lo, hi;          /* inclusive, in units or tenths */
    int tenths;
} events_measure;

static const events_measure events_vitals[] = {
    {"hr", 48, 135, 0},     {"bp_sys", 92, 175, 0}, {"bp_dia", 55, 108, 0},
    {"temp", 355, 398, 1},  {"spo2", 86, 100, 0},   {"resp", 10, 28, 0},
};
static const events_measure events_glucose = {"glucose", 35, 160, 1};
static const events_measure events_weight = {"weight", 420, 1350, 1};

static void
events_value(view_gen_rng *r, const events_measure *m, kbuf *b)
{
    int v = m->lo + (int)view_gen_below(r, (uint64_t)(m->hi - m->lo + 1));
    if (m->tenths)
        view_gen_printf(b, "%d.%d", v / 10, v % 10);
    else
        view_gen_printf(b, "%d", v);
}

/* Readings over 14 days from 2024-05-01 in time order, among max(10,
 * rows/60) patients, the low ids the busiest: a vitals round (four or five of
 * hr, bp_sys, bp_dia, temp, spo2, resp, one line each at the same ts: one
 * row), a glucose or a weight reading. About 2 lines in 1000 correct the
 * previous line (same patient, ts and type, a new measure): the later one
 * wins. With --bad P, besides the malformed lines about P/2 in 1000 have the
 * measure "n/a". */
static kiln_status
events_generate(const view_gen_options *o, kiln_err *err)
{
    const int64_t base = 1714521600000LL, span = 14LL * 86400000;
    uint64_t patients = o->rows / 60 > 10 ? o->rows / 60 : 10;
    view_gen_rng r;
    view_gen_seed(&r, o->seed, 7);
    view_gen_out *out;
    kiln_status s = view_gen_out_open(o->dir, "events", o->files, o->rows, &out, err);
    if (s != KILN_OK)
        return s;
    kbuf line = KBUF_INIT;
    uint64_t patient = 1;
    int64_t ts = base;
    const events_measure *round[6], *prev = NULL;
    size_t nround = 0, next = 0;
    for (uint64_t i = 0; i < o->rows && s == KILN_OK; i++) {
        const events_measure *m;
        if (prev != NULL && view_gen_chance(&r, 2)) {
            m = prev;   /* a correction of the previous line */
        } else {
            if (next == nround) {
                /* a new reading */
                patient = 1 + view_gen_skewed(&r, patients, 2);
                int64_t step = span / (int64_t)(o->rows ? o->rows : 1);
                ts = base + (int64_t)i * step + (int64_t)view_gen_below(&r, (uint64_t)step + 1000);
                uint64_t kind = view_gen_below(&r, 10);
                nround = 0;
                next = 0;
                if (kind < 6) {
                    size_t skip = (size_t)view_gen_below(&r, 6);
                    size_t skip2 = (size_t)view_gen_below(&r, 6);
                    for (size_t k = 0; k < 6; k++)
                        if (k != skip && k != skip2)
                            round[nround++] = &events_vitals[k];
                } else {
                    round[nround++] = kind < 9 ? &events_glucose : &events_weight;
                }
            }
            m = round[next++];
        }
        prev = m;
        buf_reset(&line);
        view_gen_printf(&line, "%" PRIu64 "\t%" PRId64 "\t%s\t", patient, ts, m->type);
        if (o->bad > 0 && view_gen_chance(&r, (o->bad + 1) / 2))
            view_gen_printf(&line, "n/a");
        else
            events_value(&r, m, &line);
        s = view_gen_out_line(out, i, o, &r, &line, err);
    }
    if (s == KILN_OK)
        s = view_gen_out_close(out, err);
    view_gen_out_free(out);
    buf_free(&line);
    return s;
}

const view_gen_def events_gen = {
    "events",
    "event lines",
    "DIR/events-NNNNN.tsv: patient_id TAB ts_ms TAB event_type TAB measure\n"
    "(vitals rounds of several types at one ts, glucose, weight; with --bad P\n"
    "also ~P/2 per mille with the measure n/a)",
    events_generate,
};
