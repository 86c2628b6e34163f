/* test_util.h -- helpers shared by the test programs (linked into each).
 */
#ifndef KILN_TESTS_SUPPORT_TEST_UTIL_H
#define KILN_TESTS_SUPPORT_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/status.h"

/* The next value of a SplitMix64 sequence kept in *state (reproducible
 * random cases from a printed seed). */
uint64_t tu_splitmix64(uint64_t *state);

/* Fail the running cmocka test unless st is KILN_OK, with err's message. */
void tu_must(kiln_status st, const kiln_err *err);

/* Make a fresh directory $TMPDIR/kiln-NAME-XXXXXX (or under /tmp) and put its
 * path in dir[0..n); fails the running test if it cannot. */
void tu_mkdtemp(char *dir, size_t n, const char *name);

/* Remove dir and everything under it (missing is fine). */
void tu_rmrf(const char *dir);

/* Seconds of CLOCK_MONOTONIC, for the elapsed time of a test's steps. */
double tu_now_s(void);

#endif
