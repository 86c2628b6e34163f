/* mpi_leaks.h -- for a C test that runs MPI in its own process: Open MPI's
 * own leaks suppressed (as tests/mapreduce/lsan.supp lists them for the
 * scripts) and full unwinding, so that LeakSanitizer judges only Kiln's
 * memory. Defines the sanitizer's hooks: include it in the one file of the
 * test program that has main, and call mpi_leaks_name_components() before
 * MPI_Init so that the components' frames are named in any report.
 */
#ifndef KILN_TESTS_MPI_LEAKS_H
#define KILN_TESTS_MPI_LEAKS_H

#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
const char *__lsan_default_suppressions(void);
const char *
__lsan_default_suppressions(void)
{
    return "leak:libmpi.so\nleak:libopen-pal.so\nleak:libopen-rte.so\nleak:libpmix.so\n"
           "leak:libhwloc.so\nleak:libevent\nleak:mca_\n";
}
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
    return "fast_unwind_on_malloc=0";
}
#endif

static inline void
mpi_leaks_name_components(void)
{
    setenv("OMPI_MCA_mca_component_disable_dlclose", "1", 0);
}

#endif
