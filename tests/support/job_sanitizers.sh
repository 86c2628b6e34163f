# Sourced by the job-heavy end-to-end scripts (tests/tools/, tests/views/,
# tests/index/, tests/cluster/) after they set ROOT. Under ASan the ranks of
# their many jobs are checked for memory errors but not for leaks: telling
# Open MPI's own leaks from Kiln's takes the slow unwinder at every allocation,
# which doubled the scripts' time. The engine's scripts (tests/mapreduce/,
# tests/salt/) and the cmocka programs keep the leak check.
export LSAN_OPTIONS="suppressions=$ROOT/tests/mapreduce/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
