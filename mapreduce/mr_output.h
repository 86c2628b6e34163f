/* mr_output.h -- output formats and the output commit protocol.
 *
 * An output format writes one partition's reduce output under the job's
 * temporary output directory; the engine opens one writer per partition, on
 * the rank that reduces it, in key order. Built in: text (`part-r-NNNNN`,
 * one `key<TAB>value` line per record, written as the bytes are). jobs/ adds
 * others (HFiles) through the same table of functions.
 *
 * Commit: the job writes into DIR._temporary.JOBID beside DIR; when every rank
 * has agreed that all partitions are written and synced, rank 0 runs the
 * format's commit (a manifest of the whole output), writes _job.json, renames the directory to DIR (refusing to replace anything),
 * syncs the parent, and writes _SUCCESS last. DIR existing before the job is
 * an error, as in Hadoop. A failed job leaves no DIR and no _SUCCESS.
 *
 * Thread-safety: a writer is single-threaded.
 */
#ifndef KILN_MR_OUTPUT_H
#define KILN_MR_OUTPUT_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"

struct mr_job;

typedef struct mr_output_format {
    const char *name;
    /* Rank 0, once, before any writer: lay out dir (sub-directories). May be NULL. */
    kiln_status (*prepare)(void *arg, const char *dir, kiln_err *err);
    /* Open the writer of one partition. */
    kiln_status (*open)(void *arg, const char *dir, uint32_t partition, void **writer,
                        kiln_err *err);
    /* Write one record; records arrive in the partition's key order. */
    kiln_status (*write)(void *writer, kslice key, kslice value, kiln_err *err);
    /* Finish (sync) the partition's files and free the writer; add the bytes
     * written to *bytes. On error the writer is freed too. */
    kiln_status (*close)(void *writer, uint64_t *bytes, kiln_err *err);
    /* Drop a writer after a failure, removing what it wrote. */
    void (*abort)(void *writer);
    /* Rank 0, once, after every partition is written and the counters are
     * totalled (mr_job_counter_value gives the job's totals), before
     * _job.json and _SUCCESS: write what sums up the whole output (say, a
     * manifest) into dir. May be NULL (and is, in formats that list only
     * the members above). A failure fails the job. */
    kiln_status (*commit)(void *arg, struct mr_job *job, const char *dir, kiln_err *err);
} mr_output_format;

/* key<TAB>value lines in part-r-NNNNN files. arg is unused (NULL). */
extern const mr_output_format mr_output_text;

/* KILN_EXISTS ("DIR: output directory already exists") if dir exists;
 * KILN_INVALID for an empty path. */
kiln_status mr_output_check(const char *dir, kiln_err *err);

/* The temporary directory of job_id for output dir (trailing '/' ignored). */
void mr_output_tmp_path(const char *dir, const char *job_id, kbuf *out);

/* Rename tmp to dir without replacing anything there (KILN_EXISTS if dir
 * appeared meanwhile) and sync dir's parent. */
/* Rank 0 notes the job's temporary output in the spill directory base
 * (a file JOB_ID.output holding the path), and forgets it when the job
 * ends; mr_output_sweep removes what a killed job left. */
kiln_status mr_output_note_tmp(const char *base, const char *job_id, const char *tmp,
                               kiln_err *err);
void mr_output_forget_tmp(const char *base, const char *job_id);

/* After a run (`kiln-mr --sweep BASE`, run on every host by run_job.sh):
 * remove the temporary outputs noted under BASE (only paths naming a
 * "._temporary.job_" directory), then BASE itself with every spill below
 * it. Prints each removal to out. Returns the number of entries it could
 * not remove. */
int mr_output_sweep(const char *base, FILE *out);

kiln_status mr_output_commit(const char *tmp, const char *dir, kiln_err *err);

/* Write dir/name with the given bytes, durably. */
kiln_status mr_output_write_file(const char *dir, const char *name, const void *p, size_t n,
                                 kiln_err *err);

/* Remove a directory tree (best effort: errors are ignored). */
void mr_output_remove_tree(const char *path);

#endif
