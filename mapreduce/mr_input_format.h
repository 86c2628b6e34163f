/* mr_input_format.h -- input formats other than text lines: the plug-in point
 * through which a job reads a table, another job's HFiles, or anything that
 * can be cut into pieces (Hadoop's InputFormat and RecordReader).
 *
 * A job's inputs are its text files (mr_job_add_input, read by the built-in
 * line reader of mr_input.h) plus any number of formatted inputs, each an
 * mr_input_format with its own argument and, if it likes, its own map
 * function (Hadoop's MultipleInputs), so one job can join a table with
 * files. A formatted input runs in four steps:
 *
 *   plan     rank 0, once, before map: decide what to read (say, pin a
 *            table's version) and cut it into splits, each an opaque byte
 *            string with a weight (bytes, for balance and progress), plus
 *            meta bytes every rank gets. The plan is broadcast.
 *   prepare  every rank, with the meta bytes, before map (say, open the
 *            pinned version, so a later load changes nothing). May be NULL.
 *   read     the splits are dealt to the ranks in order, each rank a
 *            contiguous run of similar total weight; for each of its splits
 *            a rank opens a reader and maps every record it gives.
 *   finish   every rank, when the job ends (whatever happened). May be NULL.
 *
 * A record is a byte string (what map gets) and, if the format likes, an
 * object of its own (a row with its cells) that map reaches through
 * mr_task_input_object; both are valid until the reader's next call.
 *
 * Thread-safety: as mr_job.h: one job per process, callbacks on the calling
 * thread.
 */
#ifndef KILN_MR_INPUT_FORMAT_H
#define KILN_MR_INPUT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "mapreduce/mr_task.h"
#include "storage/base/buf.h"
#include "storage/base/status.h"

/* What a format's plan fills: splits and the meta bytes. */
typedef struct mr_input_plan mr_input_plan;

/* Add a split (bytes copied) of the given weight (any unit the reader's
 * progress uses; bytes by convention). */
void mr_input_plan_add(mr_input_plan *p, kslice split, uint64_t weight);
/* The meta bytes handed to every rank's prepare (empty at first). */
kbuf *mr_input_plan_meta(mr_input_plan *p);

typedef struct mr_input_format {
    const char *name;            /* "table", "hfile": in messages and the report */
    /* Rank 0: plan the input (see above). */
    kiln_status (*plan)(void *arg, mr_job *job, mr_input_plan *plan, kiln_err *err);
    /* Every rank: get ready to read, given the plan's meta bytes. May be NULL. */
    kiln_status (*prepare)(void *arg, mr_job *job, kslice meta, kiln_err *err);
    /* Open a reader of one split. */
    kiln_status (*open)(void *arg, kslice split, void **reader, kiln_err *err);
    /* Next record: 1 with *record (and *object, which may be set to NULL),
     * 0 at the end of the split, -1 on error (err set, naming where). */
    int (*next)(void *reader, kslice *record, const void **object, kiln_err *err);
    /* Weight of the split consumed so far (counted up to the split's weight). */
    uint64_t (*progress)(void *reader);
    /* Bytes read from disk so far (the File bytes read counter). May be NULL. */
    uint64_t (*bytes_read)(void *reader);
    /* Where the reader is, for warnings ("table t@4 rows [a, b)"). */
    const char *(*where)(void *reader);
    void (*close)(void *reader);
    /* Every rank, once, when the job ends. May be NULL. */
    void (*finish)(void *arg);
} mr_input_format;

/* Add a formatted input: fmt with its argument (the format's own: the job
 * owns and frees it) and the map function its records go to (NULL: the
 * job's map). Call from setup, the same calls on every rank. */
void mr_job_add_input_format(mr_job *job, const mr_input_format *fmt, void *arg, mr_map_fn map);
/* The number of formatted inputs added so far (so that a format can tell
 * its inputs apart in messages and the report). */
size_t mr_job_input_format_count(const mr_job *job);

#endif
