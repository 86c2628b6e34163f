/* job_fixture.h -- the job outputs the bulk-load crash and power-loss tests
 * load: table default:t (family cf, regions split at r01000 and r02000),
 * rows r00000.. with cf:q = "v<ts>.<i>", and the index by_v on cf:q.
 * Every helper fails the running cmocka test on an error.
 */
#ifndef KILN_TESTS_SUPPORT_JOB_FIXTURE_H
#define KILN_TESTS_SUPPORT_JOB_FIXTURE_H

#include <stdint.h>

#include "storage/store/schema.h"

/* The schema of default:t. */
void tjob_schema_t(kiln_schema *s);
/* One HFile of rows [lo, hi) at timestamp ts. */
void tjob_write_hfile(const char *path, int lo, int hi, int64_t ts);
/* One snappy HFile of rows "row%05d" for i in [lo, hi) by step, family fam,
 * qualifiers q0..q{nq-1}, timestamp ts, value "v<ts>-<i>-<q>" (the bulk-load
 * tests' own tables, families a and cf, split at row01000 and row02000). */
void tjob_write_rows(const char *path, const char *fam, int lo, int hi, int step, int nq,
                     int64_t ts);
/* The index by_v of rows [lo, hi): its schema record and one HFile of index
 * rows under job/_index/by_v/. */
void tjob_write_index(const char *job, int lo, int hi, int64_t ts);
/* Order-independent digest of an HFile's cells; adds their count to *cells. */
uint64_t tjob_file_digest(const char *path, uint64_t *cells);

#endif
