/* mr_map.h -- private to mapreduce/: the map phase. Every rank reads its
 * byte-range splits of the input line by line, calls the job's map on each
 * record, and collects the emits into one sorted map output run.
 *
 * Thread-safety: one thread; MPI only through progress and the check below.
 */
#ifndef KILN_MR_MAP_H
#define KILN_MR_MAP_H

#include "mapreduce/mr_state.h"
#include "storage/base/status.h"

/* Map this rank's splits into job->map.mof (set even when empty; NULL only
 * on failure). Local: the caller agrees on the result. */
kiln_status mr_map_phase(mr_job *job, kiln_err *err);

/* After map: a job whose every input record was bad fails, unless
 * kiln.bad.records.all.ok says it may (KILN_CORRUPTION). Collective. */
kiln_status mr_map_check_bad(mr_job *job, kiln_err *err);

#endif
