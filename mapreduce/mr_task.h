/* mr_task.h -- what a job's map, combine and reduce callbacks call while they
 * run: emit, counters, the current record's place in the input, the values
 * of a key group.
 *
 * A task is one callback's view of the engine: the map of one record, the
 * combine or reduce of one key group, or a map over sample records while the
 * total-order partitioner picks its split keys. The engine owns it; a
 * callback gets it as its first argument and must not keep it.
 *
 * Thread-safety: callbacks run on the calling thread; a task is valid for
 * the duration of the call only.
 */
#ifndef KILN_MR_TASK_H
#define KILN_MR_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"

typedef struct mr_job mr_job;
typedef struct mr_task mr_task;
typedef struct mr_values mr_values;

/* Map one input record (a line without its terminator). */
typedef kiln_status (*mr_map_fn)(mr_task *t, kslice record, kiln_err *err);
/* Reduce (or combine) one key group: its first key and its values. */
typedef kiln_status (*mr_reduce_fn)(mr_task *t, kslice key, mr_values *values, kiln_err *err);

/* Emit a record: from map into the map output, from a combiner into the
 * spill, from reduce into the output format. Slices are copied. */
kiln_status mr_task_emit(mr_task *t, kslice key, kslice value, kiln_err *err);

void *mr_task_state(mr_task *t);
mr_job *mr_task_job(mr_task *t);
void mr_task_count(mr_task *t, int counter, uint64_t n);
/* Map: the current record is bad (the job counts and logs it as it likes).
 * Counted as "Bad input records"; a job whose every record is bad fails
 * (unless -D kiln.bad.records.all.ok=true). */
void mr_task_bad_record(mr_task *t);
/* 1 while the task is sampling keys for the total-order partitioner: map
 * runs over sample records then, and should skip side effects like logging. */
int mr_task_sampling(const mr_task *t);

/* Map only: the current record's file path, its index in the job's sorted
 * input list, and its byte offset in the (uncompressed) file. */
const char *mr_task_input_path(const mr_task *t);
uint32_t mr_task_input_file(const mr_task *t);
uint64_t mr_task_input_offset(const mr_task *t);
/* Map only: 1-based line number of the current record (costly the first
 * time in a split: meant for error reports). */
kiln_status mr_task_input_line(mr_task *t, uint64_t *line, kiln_err *err);

/* Map only: the current record's object when it came from a formatted input
 * that gives one (mr_input_format.h: a table's row with its cells), else
 * NULL; and the name of the input format it came from ("text" for lines). */
const void *mr_task_input_object(const mr_task *t);
const char *mr_task_input_format(const mr_task *t);

/* Reduce only: the partition being reduced. */
uint32_t mr_task_partition(const mr_task *t);

/* Print a warning line to stderr, prefixed with the program and rank. */
void mr_task_warn(mr_task *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Next value of the key group: 1 with *value (valid until the next call), 0
 * at the end. Values come in the order of their full keys (the job's sort
 * order), then of their bytes. A read error also ends the values; the
 * engine reports it when the callback returns. */
int mr_task_next_value(mr_values *v, kslice *value);

/* Combine and reduce: the full key of the value mr_task_next_value returned
 * last (the group's first key before the first value). Under a grouping
 * comparator (or a sort comparator that calls different bytes equal) a
 * group holds many keys, and this is how reduce sees each value's own (the
 * secondary sort). Valid until the next mr_task_next_value; empty in map. */
kslice mr_task_current_key(mr_task *t);

#endif
