/* test_util.c -- helpers shared by the test programs (test_util.h). */
#include "tests/support/test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t
tu_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void
tu_must(kiln_status st, const kiln_err *err)
{
    if (st != KILN_OK)
        fail_msg("unexpected error %d: %s", st, err->msg);
}

static int
tu_rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

void
tu_rmrf(const char *dir)
{
    nftw(dir, tu_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

void
tu_mkdtemp(char *dir, size_t n, const char *name)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, n, "%s/kiln-%s-XXXXXX", t ? t : "/tmp", name);
    assert_non_null(mkdtemp(dir));
}

double
tu_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
