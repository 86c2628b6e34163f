/* mr_task.c -- what map, combine and reduce callbacks call: emit, counters,
 * input position, and the values of a key group (from the sort buffer at a
 * spill, from a k-way merge otherwise). An emit goes to the function the
 * task's runner set; nothing here knows where records end up.
 */
#include "mapreduce/mr_task_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ task calls */

kiln_status
mr_task_emit(mr_task *t, kslice key, kslice value, kiln_err *err)
{
    return t->emit(t, key, value, err);
}

void *
mr_task_state(mr_task *t)
{
    return t->env->state;
}

mr_job *
mr_task_job(mr_task *t)
{
    return t->env->job;
}

void
mr_task_count(mr_task *t, int counter, uint64_t n)
{
    mr_counters *c = t->env->counters;
    if (t->kind == MR_TASK_SAMPLE || counter < 0 || (size_t)counter >= c->n)
        return;
    mr_counters_add(c, counter, n);
}

void
mr_task_bad_record(mr_task *t)
{
    mr_task_count(t, MR_C_BAD_RECORDS, 1);
}

int
mr_task_sampling(const mr_task *t)
{
    return t->kind == MR_TASK_SAMPLE;
}

const char *
mr_task_input_path(const mr_task *t)
{
    return t->path ? t->path : "";
}

uint32_t
mr_task_input_file(const mr_task *t)
{
    return t->file_index;
}

uint64_t
mr_task_input_offset(const mr_task *t)
{
    return t->offset;
}

const void *
mr_task_input_object(const mr_task *t)
{
    return t->object;
}

const char *
mr_task_input_format(const mr_task *t)
{
    return t->format != NULL ? t->format : "text";
}

kiln_status
mr_task_input_line(mr_task *t, uint64_t *line, kiln_err *err)
{
    if (t->reader == NULL) {
        *line = 0;
        if (t->format != NULL)
            return status_set(err, KILN_INVALID, "%s: a %s input has no line numbers",
                              mr_task_input_path(t), t->format);
        return status_set(err, KILN_INVALID, "input line asked outside map");
    }
    return mr_reader_line_number(t->reader, line, err);
}

uint32_t
mr_task_partition(const mr_task *t)
{
    return t->part;
}

kslice
mr_task_current_key(mr_task *t)
{
    const mr_values *v = t->values;
    if (v == NULL)
        return kslice_make(NULL, 0);
    if (v->kind == MR_VALUES_MERGER)
        return mr_merger_value_key(v->m);
    /* The entry handed out last, or the first before any. */
    size_t at = v->i > v->first ? v->i - 1 : v->first;
    if (at >= v->end)
        return kslice_make(NULL, 0);
    uint32_t part;
    kslice key, value;
    mr_sortbuf_get(v->sb, at, &part, &key, &value);
    return key;
}

void
mr_task_warn(mr_task *t, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "kiln-mr: [rank %d] %s: %s\n", t->env->rank, t->env->name, msg);
}

int
mr_task_next_value(mr_values *v, kslice *value)
{
    if (v->status != KILN_OK)
        return 0;
    if (v->kind == MR_VALUES_SORTBUF) {
        if (v->i >= v->end)
            return 0;
        uint32_t part;
        kslice key;
        mr_sortbuf_get(v->sb, v->i++, &part, &key, value);
        v->count++;
        return 1;
    }
    int r = mr_merger_next_value(v->m, value, &v->err);
    if (r < 0) {
        v->status = v->err.code != KILN_OK ? v->err.code : KILN_INTERNAL;
        return 0;
    }
    v->count += (uint64_t)r;
    return r;
}

kiln_status
mr_task_values_finish(mr_values *v, kiln_err *err)
{
    kslice x;
    while (mr_task_next_value(v, &x))
        ;
    if (v->status != KILN_OK)
        return status_set(err, v->status, "%s", v->err.msg);
    return KILN_OK;
}
