/* lookup.c -- a reduce-side join of text lines with a loaded table's rows:
 * each line is joined with the row its key field names (a job reading files
 * and a table together).
 *
 *   lookup --input PATH... --input-table NAME[@VERSION] --output DIR
 *          [--key-field N] [--separator C] [--left] [selection options]
 *
 * Map, two inputs with a map function each: a line emits (its key field,
 * 0x01 + position + line), a table row emits (its row key, 0x00 + its cells
 * encoded). Values of a key arrive in byte order, so the row (tag 0x00)
 * comes first and the lines after it in input order (the position: file
 * index u32 BE, offset u64 BE): reduce holds one row, never the lines.
 *
 * Output, text: one `LINE<TAB>CELLS` line per joined line, CELLS being the
 * row's cells as `family:qualifier=value` in HBase order, TAB-separated,
 * in printable form (\xNN outside printable ASCII). A line whose key names
 * no row is dropped (an inner join), or with --left written with CELLS
 * empty. Counters (group lookup): Lines joined, Lines without a row, Rows
 * without a line, Bad Lines (fewer fields than --key-field).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/jobs_args.h"
#include "jobs/table_input.h"
#include "storage/base/coding.h"
#include "storage/hfile/cell.h"

#define LOOKUP_ROW 0x00
#define LOOKUP_LINE 0x01
#define LOOKUP_POS 12

typedef struct lookup_state {
    uint32_t key_field;          /* 1-based */
    uint8_t sep;
    int left;
    int c_joined, c_unmatched, c_lonely, c_bad;
    kbuf val;
    kbuf cells;                  /* the current key's row, as output text */
    kbuf tmp;
} lookup_state;

static void
lookup_state_free(void *p)
{
    lookup_state *st = p;
    if (st == NULL)
        return;
    buf_free(&st->val);
    buf_free(&st->cells);
    buf_free(&st->tmp);
    free(st);
}

static kiln_status
lookup_map_line(mr_task *t, kslice line, kiln_err *err)
{
    lookup_state *st = mr_task_state(t);
    const uint8_t *p = line.p, *end = line.p + line.n;
    for (uint32_t f = 1; f < st->key_field; f++) {
        const uint8_t *s = memchr(p, st->sep, (size_t)(end - p));
        if (s == NULL) {
            mr_task_count(t, st->c_bad, 1);
            mr_task_bad_record(t);
            return KILN_OK;
        }
        p = s + 1;
    }
    const uint8_t *e = memchr(p, st->sep, (size_t)(end - p));
    kslice key = kslice_make(p, (size_t)((e ? e : end) - p));
    buf_reset(&st->val);
    buf_append_u8(&st->val, LOOKUP_LINE);
    buf_append_be32(&st->val, mr_task_input_file(t));
    buf_append_be64(&st->val, mr_task_input_offset(t));
    buf_append(&st->val, line.p, line.n);
    return mr_task_emit(t, key, buf_slice(&st->val), err);
}

static kiln_status
lookup_map_row(mr_task *t, kslice rowkey, kiln_err *err)
{
    lookup_state *st = mr_task_state(t);
    const store_row *r = table_input_row(t);
    buf_reset(&st->val);
    buf_append_u8(&st->val, LOOKUP_ROW);
    for (size_t i = 0; i < r->count; i++) {
        const kiln_cell *c = &r->cells[i];
        buf_append_u8(&st->val, '\t');
        cell_to_string_binary(&st->val, c->family, c->family_len);
        buf_append_u8(&st->val, ':');
        cell_to_string_binary(&st->val, c->qualifier, c->qualifier_len);
        buf_append_u8(&st->val, '=');
        cell_to_string_binary(&st->val, c->value, c->value_len);
    }
    return mr_task_emit(t, rowkey, buf_slice(&st->val), err);
}

static kiln_status
lookup_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    lookup_state *st = mr_task_state(t);
    int have_row = 0, lines = 0;
    kslice v;
    kiln_status s = KILN_OK;
    while (s == KILN_OK && mr_task_next_value(values, &v)) {
        if (v.n == 0)
            return status_set(err, KILN_CORRUPTION, "lookup: an empty value");
        if (v.p[0] == LOOKUP_ROW) {
            buf_reset(&st->cells);
            buf_append(&st->cells, v.p + 1, v.n - 1);   /* starts with a TAB when not empty */
            have_row = 1;
            continue;
        }
        if (v.n < 1 + LOOKUP_POS)
            return status_set(err, KILN_CORRUPTION, "lookup: a line value of %zu bytes", v.n);
        lines++;
        kslice line = kslice_make(v.p + 1 + LOOKUP_POS, v.n - 1 - LOOKUP_POS);
        if (!have_row) {
            mr_task_count(t, st->c_unmatched, 1);
            if (st->left)
                s = mr_task_emit(t, line, kslice_make(NULL, 0), err);
            continue;
        }
        mr_task_count(t, st->c_joined, 1);
        kslice cells = buf_slice(&st->cells);
        if (cells.n > 0)   /* the TAB between them comes from the output format */
            cells = kslice_make(cells.p + 1, cells.n - 1);
        s = mr_task_emit(t, line, cells, err);
    }
    if (have_row && lines == 0)
        mr_task_count(t, st->c_lonely, 1);
    return s;
}

static kiln_status
lookup_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    lookup_state *st = kiln_calloc(1, sizeof *st);
    st->key_field = 1;
    st->sep = '\t';
    mr_job_set_state(job, st, lookup_state_free);
    table_input_spec spec;
    table_input_spec_init(&spec);
    int inputs = 0;
    kiln_status s = KILN_OK;
    for (int i = 1; i < argc && s == KILN_OK; i++) {
        const char *v;
        if (table_input_arg(&spec, argc, argv, &i, &s, err))
            continue;
        if (strcmp(argv[i], "--input") == 0) {
            s = jobs_take_inputs(job, argc, argv, &i, err);
            inputs = 1;
        } else if (strcmp(argv[i], "--output") == 0) {
            s = jobs_take_value(argc, argv, &i, &v, err);
            if (s == KILN_OK)
                mr_job_set_output(job, v);
        } else if (strcmp(argv[i], "--data") == 0) {
            s = jobs_take_value(argc, argv, &i, &spec.data_dir, err);
        } else if (strcmp(argv[i], "--key-field") == 0) {
            s = jobs_take_value(argc, argv, &i, &v, err);
            char *end;
            long n = s == KILN_OK ? strtol(v, &end, 10) : 0;
            if (s == KILN_OK && (*v == '\0' || *end != '\0' || n < 1 || n > 1000))
                s = status_set(err, KILN_INVALID, "lookup: --key-field '%s' is not in [1, 1000]", v);
            st->key_field = (uint32_t)n;
        } else if (strcmp(argv[i], "--separator") == 0) {
            s = jobs_take_value(argc, argv, &i, &v, err);
            if (s == KILN_OK && strlen(v) != 1)
                s = status_set(err, KILN_INVALID, "lookup: --separator takes one byte, not '%s'", v);
            if (s == KILN_OK)
                st->sep = (uint8_t)v[0];
        } else if (strcmp(argv[i], "--left") == 0) {
            st->left = 1;
        } else {
            s = status_set(err, KILN_INVALID, "lookup: unknown argument '%s'", argv[i]);
        }
    }
    if (s == KILN_OK && !inputs)
        s = status_set(err, KILN_INVALID, "lookup: no --input given (the lines to join)");
    if (s == KILN_OK)
        s = table_input_add(job, &spec, lookup_map_row, err);
    table_input_spec_free(&spec);
    if (s != KILN_OK)
        return s;
    st->c_joined = mr_job_counter(job, "lookup", "Lines joined");
    st->c_unmatched = mr_job_counter(job, "lookup", "Lines without a row");
    st->c_lonely = mr_job_counter(job, "lookup", "Rows without a line");
    st->c_bad = mr_job_counter(job, "lookup", "Bad Lines");
    mr_job_set_map(job, lookup_map_line);
    mr_job_set_reduce(job, lookup_reduce);
    return KILN_OK;
}

const mr_job_def lookup_job = {
    "lookup",
    "join text lines with a loaded table's rows by key (files and a table in one job)",
    "Usage: kiln-mr lookup --input PATH... --input-table NAME[@VERSION] --output DIR\n"
    "                      [--key-field N] [--separator C] [--left] [--data DIR]\n"
    "                      [selection options]\n"
    "\n"
    "Joins each input line with the table row its key names: the N-th field\n"
    "(--key-field, default 1) split at --separator (default TAB), taken as the\n"
    "row key bytes. Writes DIR/part-r-NNNNN text: one `LINE<TAB>CELLS` line per\n"
    "joined line, CELLS the row's cells as family:qualifier=value in HBase\n"
    "order, TAB-separated, \\xNN outside printable ASCII. Lines naming no row\n"
    "are dropped, or with --left written with no cells. A reduce-side join:\n"
    "the row sorts before its lines, so no group is held in memory.\n"
    "\n"
    "Counters (lookup): Lines joined, Lines without a row, Rows without a\n"
    "line, Bad Lines (fewer fields than --key-field).\n"
    "\n"
    "Options of the table read:\n"
    TABLE_INPUT_USAGE,
    lookup_setup,
};
