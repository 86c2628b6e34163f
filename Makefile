# Kiln build. Plain GNU make, out-of-tree output under build/ (build-$(SANITIZER)/
# for sanitizer builds). One static library per folder; the link lines show the
# layering: storage/ at the bottom, mapreduce/ and jobs/ above it with MPI,
# bulkload/ and serving/ above storage/ without MPI.
#
#   make                      install missing packages (scripts/deps.sh), build everything into build/
#   make test                 build and run the whole test suite
#   make SANITIZER=address    the same suite under ASan (also: undefined, or both at once
#                             with address,undefined in build-address-undefined/; thread
#                             runs the threaded programs and the server scripts)
#   make bench                build the benchmark programs (scripts/bench.sh and
#                             scripts/put_bench.sh run them against the peers);
#                             with PEERS=DIR also word count against MR-MPI and
#                             Phoenix++ (scripts/wordcount_peers_bench.sh)
#   make bench-wordcount      that word-count comparison alone
#   make fuzz                 build the libFuzzer targets (clang)
#   make install PREFIX=/usr/local DESTDIR=
#   make check-deps           check that the layers include and link one way only,
#                             with no cycle of modules inside a folder

CC      ?= cc
MPICC   ?= mpicc
FUZZCC  ?= clang
PREFIX  ?= /usr/local
SANITIZER ?=

ifeq ($(origin CC),default)
CC := gcc
endif

comma := ,
ifneq ($(SANITIZER),)
BUILD ?= build-$(subst $(comma),-,$(SANITIZER))
SANFLAGS := -fsanitize=$(SANITIZER) -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT ?= -O1
.DEFAULT_GOAL := test
else
.DEFAULT_GOAL := all
BUILD ?= build
SANFLAGS :=
OPT ?= -O2
endif

WARN := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wstrict-prototypes -Wmissing-prototypes
ifneq ($(CI)$(WERROR),)
WARN += -Werror
endif

CPPFLAGS += -I. -D_GNU_SOURCE -DKILN_VERSION='"$(VERSION)"'
CFLAGS   += -std=c11 -g $(OPT) $(WARN) $(SANFLAGS) -pthread -MMD -MP
LDFLAGS  += $(SANFLAGS) -pthread
LIBS     := -lsnappy -lz -lzstd -llz4 -lm
CMOCKA   := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
CLIENT_LIBS := $(shell pkg-config --libs libcurl jansson 2>/dev/null || echo -lcurl -ljansson)
# The filter language's shell-string translator (storage/query/shell_filter.c)
# builds JSON with jansson: what links it (kiln, and kiln-mr for table input's
# --filter) takes this.
JANSSON_LIBS := $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson)

VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

# ---------------------------------------------------------------- libraries
lib_srcs = $(filter-out %_main.c,$(wildcard $(1)/*.c))
lib_objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(call lib_srcs,$(1)))

# storage/ is four libraries, each linking only downward:
# query -> store -> hfile -> base.
BASE_LIB     := $(BUILD)/lib/libkiln_base.a
HFILE_LIB    := $(BUILD)/lib/libkiln_hfile.a
STORE_LIB    := $(BUILD)/lib/libkiln_store.a
QUERY_LIB    := $(BUILD)/lib/libkiln_query.a
STORAGE_LIB  := $(QUERY_LIB) $(STORE_LIB) $(HFILE_LIB) $(BASE_LIB)
MR_LIB       := $(BUILD)/lib/libkiln_mr.a
JOBS_LIB     := $(BUILD)/lib/libkiln_jobs.a
BULKLOAD_LIB := $(BUILD)/lib/libkiln_bulkload.a
SERVING_LIB  := $(BUILD)/lib/libkiln_serving.a
CLI_LIB      := $(BUILD)/lib/libkiln_cli.a

$(BASE_LIB):     $(call lib_objs,storage/base)
$(HFILE_LIB):    $(call lib_objs,storage/hfile)
$(STORE_LIB):    $(call lib_objs,storage/store)
$(QUERY_LIB):    $(call lib_objs,storage/query)
$(MR_LIB):       $(call lib_objs,mapreduce)
$(JOBS_LIB):     $(call lib_objs,jobs)
$(BULKLOAD_LIB): $(call lib_objs,bulkload)
$(SERVING_LIB):  $(call lib_objs,serving)
$(CLI_LIB):      $(call lib_objs,cli)

$(BUILD)/lib/%.a:
	@mkdir -p $(dir $@)
	@rm -f $@
	$(if $^,ar rcs $@ $^,ar rcs $@)

# Objects under mapreduce/ and jobs/ (and their tests) see MPI.
$(BUILD)/obj/mapreduce/%.o $(BUILD)/obj/jobs/%.o $(BUILD)/obj/tests/mapreduce/%.o: CC := $(MPICC)

# Every compile waits for `deps` (order-only: it never makes a target out of
# date), so that on a fresh machine the packages are in before the first
# header is looked for, whatever -j says.
$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# ---------------------------------------------------------------- programs
BIN := $(BUILD)/bin

PROGRAMS :=
ifneq ($(wildcard cli/kiln_main.c),)
PROGRAMS += $(BIN)/kiln
endif
KILN_OBJS := $(BUILD)/obj/cli/kiln_main.o
# Only the client speaks HTTP as a client: libcurl and jansson link into
# `kiln` alone, never into kiln-server. storage/query/shell_filter.o (HBase
# shell filter strings, `scan --filter`) is written with jansson: a program
# that calls it links jansson too; kiln-server and kiln-mr do not call it, so
# the linker never takes that object out of libkiln_query.a for them.
$(BIN)/kiln: $(KILN_OBJS) $(CLI_LIB) $(BULKLOAD_LIB) $(SERVING_LIB) $(STORAGE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(KILN_OBJS) $(CLI_LIB) $(BULKLOAD_LIB) $(SERVING_LIB) $(STORAGE_LIB) $(CLIENT_LIBS) $(LIBS)

# kiln-mr's main and its list of jobs live in jobs/: mapreduce/ names no job.
ifneq ($(wildcard jobs/kiln_mr_main.c),)
PROGRAMS += $(BIN)/kiln-mr
$(BIN)/kiln-mr: $(BUILD)/obj/jobs/kiln_mr_main.o $(JOBS_LIB) $(MR_LIB) $(STORAGE_LIB)
	@mkdir -p $(dir $@)
	$(MPICC) $(LDFLAGS) -o $@ $^ $(JANSSON_LIBS) $(LIBS)
endif

# Sample input for the view jobs; links the jobs library (and so MPI) but
# never starts MPI.
ifneq ($(wildcard jobs/kiln_gen_main.c),)
PROGRAMS += $(BIN)/kiln-gen
$(BIN)/kiln-gen: $(BUILD)/obj/jobs/kiln_gen_main.o $(JOBS_LIB) $(MR_LIB) $(STORAGE_LIB)
	@mkdir -p $(dir $@)
	$(MPICC) $(LDFLAGS) -o $@ $^ $(JANSSON_LIBS) $(LIBS)
endif

ifneq ($(wildcard serving/kiln_server_main.c),)
PROGRAMS += $(BIN)/kiln-server
$(BIN)/kiln-server: $(BUILD)/obj/serving/kiln_server_main.o $(SERVING_LIB) $(STORAGE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
endif

all: $(STORAGE_LIB) $(PROGRAMS)

# ---------------------------------------------------------------- tests
# tests/<layer>/test_<module>.c -> $(BUILD)/tests/<layer>/test_<module>
STORAGE_TESTS  := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/storage/test_*.c))
MR_TESTS       := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/mapreduce/test_*.c))
BULKLOAD_TESTS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/bulkload/test_*.c))
SERVING_TESTS  := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/serving/test_*.c))
CLI_TESTS      := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/cli/test_*.c))
TEST_HELPERS   := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/support/*.c))
TESTS := $(STORAGE_TESTS) $(MR_TESTS) $(BULKLOAD_TESTS) $(SERVING_TESTS) $(CLI_TESTS)

$(STORAGE_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_HELPERS) $(STORAGE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA) $(LIBS)

$(MR_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_HELPERS) $(JOBS_LIB) $(MR_LIB) $(STORAGE_LIB)
	@mkdir -p $(dir $@)
	$(MPICC) $(LDFLAGS) -o $@ $^ $(CMOCKA) $(JANSSON_LIBS) $(LIBS)

$(BULKLOAD_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_HELPERS) $(BULKLOAD_LIB) $(STORAGE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA) $(LIBS)

$(SERVING_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_HELPERS) $(SERVING_LIB) $(STORAGE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA) $(LIBS)

$(CLI_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_HELPERS) $(CLI_LIB) $(SERVING_LIB) $(STORAGE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA) $(CLIENT_LIBS) $(LIBS)

# The fuzz smoke run needs clang's libFuzzer; skipped (and reported) under sanitizers
# other than none because it carries its own ASan build.
FUZZ_SMOKE := $(if $(SANITIZER),,fuzz)

# Under ThreadSanitizer the suite is the code that runs threads of its own:
# the block and file caches, the HFile writer's background thread, the
# catalog's hot swap, the memstore's lock-free readers beside its writer, the
# write-ahead log's group commit and background sync, the server's workers and its scripts over
# loopback; a race report stops the program (halt_on_error).
# MPI's progress threads are outside what TSan can judge, so the MPI jobs stay
# with the other builds; the map input deques' test (threads standing in for
# ranks) runs here.
ifeq ($(SANITIZER),thread)
TEST_SELECTION := storage/test_base storage/test_block_cache storage/test_slab storage/test_hfile_reader \
  storage/test_hfile_writer storage/test_hfile_writer_pipe \
  storage/test_store_catalog storage/test_memstore storage/test_speed_concurrent storage/test_wal \
  serving/test_swap serving/test_server serving/test_wire serving/test_ev mapreduce/test_mr_steal \
  tests/serving/server_test.sh tests/serving/pipeline_test.sh tests/serving/deadline_test.sh \
  tests/serving/stall_test.sh tests/serving/errors_test.sh tests/serving/rest_test.sh \
  tests/serving/write_test.sh
TEST_ENV := TSAN_OPTIONS="halt_on_error=1 exitcode=66 $$TSAN_OPTIONS"
endif

test: deps all $(TESTS) $(FUZZ_SMOKE) $(BIN)/kiln-core-probe
	BUILD=$(BUILD) FUZZ=$(if $(FUZZ_SMOKE),1,0) KILN_TESTS="$(TEST_SELECTION)" $(TEST_ENV) \
	  tests/run_tests.sh

deps:
	@scripts/deps.sh

# The five view jobs end to end on generated data, served and queried;
# leaves demo-data/ to explore (scripts/demo.sh --help).
demo: deps all
	BUILD=$(BUILD) scripts/demo.sh

.PHONY: demo

# ---------------------------------------------------------------- fuzzing
# libFuzzer targets are built with clang (own ASan and UBSan build). Each source
# is compiled once into $(BUILD)/fuzz/obj/ (or obj-npo/, below) and every target
# links the objects it needs.
FUZZ_TARGETS := $(patsubst fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard fuzz/fuzz_*.c))
FUZZ_CFLAGS := -std=c11 -g -O1 -I. -D_GNU_SOURCE -DKILN_VERSION='"$(VERSION)"' \
               -fno-sanitize-recover=all
FUZZ_SAN := address,undefined
# storage/query/shell_filter.c, the one storage source written with jansson,
# goes only into the targets that parse shell filter strings (fuzz_rest*).
FUZZ_SHELL_FILTER_SRCS := storage/query/shell_filter.c
FUZZ_STORAGE_SRCS := $(filter-out $(FUZZ_SHELL_FILTER_SRCS),\
                       $(foreach d,base hfile store query,$(call lib_srcs,storage/$(d))))
fuzz_objs = $(patsubst %.c,$(BUILD)/fuzz/$(1)/%.o,$(2))

# Scans reach storage's seeks with a region's empty start key as (NULL, 0);
# NULL + 0 there is what clang's pointer-overflow check flags (C2y defines it):
# the serving parsers' targets, and the objects in obj-npo/ they link, are
# built without that check.
FUZZ_NPO := -fno-sanitize=pointer-overflow
$(BUILD)/fuzz/obj-npo/%.o: FUZZ_EXTRA_FLAGS := $(FUZZ_NPO)
# (Two rules with one recipe: a pattern rule naming both would make both at once.)
FUZZ_COMPILE = $(FUZZCC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) $(FUZZ_EXTRA_FLAGS) \
               -MMD -MP -c $< -o $@
$(BUILD)/fuzz/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(FUZZ_COMPILE)
$(BUILD)/fuzz/obj-npo/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(FUZZ_COMPILE)

# The serving parsers' targets (fuzz_http*, fuzz_resp*, fuzz_scanner*, fuzz_cellset*) also
# build serving/.
FUZZ_SERVING_SRCS := $(call lib_srcs,serving)
FUZZ_SERVING_TARGETS := $(filter $(BUILD)/fuzz/fuzz_http% $(BUILD)/fuzz/fuzz_resp% \
                          $(BUILD)/fuzz/fuzz_scanner% $(BUILD)/fuzz/fuzz_cellset%,$(FUZZ_TARGETS))
$(FUZZ_SERVING_TARGETS): FUZZ_EXTRA_FLAGS := $(FUZZ_NPO)
$(FUZZ_SERVING_TARGETS): $(BUILD)/fuzz/%: fuzz/%.c \
  $(call fuzz_objs,obj-npo,$(FUZZ_STORAGE_SRCS) $(FUZZ_SERVING_SRCS)) $(wildcard fuzz/*.h)

# The client's parsers (fuzz_rest*) build cli/'s reader of server answers and
# storage/query's shell filter parser, with libcurl and jansson.
FUZZ_CLI_SRCS := cli/remote.c cli/rest_http.c $(FUZZ_SHELL_FILTER_SRCS)
FUZZ_CLI_TARGETS := $(filter $(BUILD)/fuzz/fuzz_rest%,$(FUZZ_TARGETS))
$(FUZZ_CLI_TARGETS): LIBS += $(CLIENT_LIBS)
$(FUZZ_CLI_TARGETS): $(BUILD)/fuzz/%: fuzz/%.c \
  $(call fuzz_objs,obj,$(FUZZ_STORAGE_SRCS) $(FUZZ_CLI_SRCS)) $(wildcard fuzz/*.h)

# The move record's target (fuzz_moved) builds its parser from bulkload/.
$(BUILD)/fuzz/fuzz_moved: fuzz/fuzz_moved.c \
  $(call fuzz_objs,obj,$(FUZZ_STORAGE_SRCS) bulkload/moved.c) $(wildcard fuzz/*.h)

# The map side's line reader's target (fuzz_reader) builds mapreduce/'s reader
# and input pieces, neither of which uses MPI.
$(BUILD)/fuzz/fuzz_reader: fuzz/fuzz_reader.c \
  $(call fuzz_objs,obj,$(FUZZ_STORAGE_SRCS) mapreduce/mr_reader.c mapreduce/mr_input.c) \
  $(wildcard fuzz/*.h mapreduce/mr_reader.h mapreduce/mr_input.h)

FUZZ_STORAGE_TARGETS := $(filter-out $(FUZZ_SERVING_TARGETS) $(FUZZ_CLI_TARGETS) \
                          $(BUILD)/fuzz/fuzz_moved $(BUILD)/fuzz/fuzz_reader,$(FUZZ_TARGETS))
$(FUZZ_STORAGE_TARGETS): $(BUILD)/fuzz/%: fuzz/%.c \
  $(call fuzz_objs,obj,$(FUZZ_STORAGE_SRCS)) $(wildcard fuzz/*.h)

$(FUZZ_TARGETS): $(wildcard storage/*/*.h serving/*.h cli/*.h bulkload/*.h jobs/*.h)
	@mkdir -p $(dir $@)
	$(FUZZCC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,$(FUZZ_SAN) $(FUZZ_EXTRA_FLAGS) \
	  -o $@ $(filter %.c %.o,$^) -pthread $(LIBS)

fuzz: $(FUZZ_TARGETS)

# ---------------------------------------------------------------- benchmarks
BENCH_PROGRAMS := $(BIN)/kiln-bench
$(BIN)/kiln-bench: $(BUILD)/obj/bench/kiln_bench.o $(STORAGE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/obj/bench/kiln_bench.o: CPPFLAGS += -Ibench

# The region store on the same dataset: load, rollback, Get and Scan through regions.
BENCH_PROGRAMS += $(BIN)/kiln-store-bench
$(BIN)/kiln-store-bench: $(BUILD)/obj/bench/store_bench.o $(BULKLOAD_LIB) $(STORAGE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/obj/bench/store_bench.o: CPPFLAGS += -Ibench

# The speed layer's write path: random Puts per durability, Gets over full memstores.
BENCH_PROGRAMS += $(BIN)/kiln-put-bench
$(BIN)/kiln-put-bench: $(BUILD)/obj/bench/put_bench.o $(STORAGE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/obj/bench/put_bench.o: CPPFLAGS += -Ibench

# What work on one CPU costs a thread on another (the benchmark scripts print it
# beside their figures: the load generators share the machine).
BENCH_PROGRAMS += $(BIN)/kiln-core-probe
$(BIN)/kiln-core-probe: $(BUILD)/obj/bench/core_probe.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -pthread

# Its RocksDB counterpart (our driver of the system librocksdb, scripts/put_bench.sh),
# built when librocksdb-dev is installed (scripts/deps.sh --bench).
ROCKSDB_H := $(firstword $(wildcard /usr/include/rocksdb/c.h /usr/local/include/rocksdb/c.h))
ifneq ($(ROCKSDB_H),)
BENCH_PROGRAMS += $(BIN)/rocks-put-bench
$(BIN)/rocks-put-bench: $(BUILD)/obj/bench/rocks_put_bench.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lrocksdb

$(BUILD)/obj/bench/rocks_put_bench.o: CPPFLAGS += -Ibench
endif

bench: all $(BENCH_PROGRAMS)
ifneq ($(PEERS),)
	scripts/wordcount_peers_bench.sh --peers $(PEERS)
endif

# Word count against MR-MPI and Phoenix++ (their harness from PEERS, else the
# script's default peer directory; it says so and stops when that is absent).
bench-wordcount: all
	scripts/wordcount_peers_bench.sh $(if $(PEERS),--peers $(PEERS))

# How wordcount, importtsv and kiln load grow from 200 MiB to 10 GiB of input,
# and importtsv against the HFile writer on the same cells (no peer needed).
bench-growth: all $(BENCH_PROGRAMS)
	scripts/growth_bench.sh

# ---------------------------------------------------------------- install, hygiene
install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(PROGRAMS) $(DESTDIR)$(PREFIX)/bin/

check-deps: all
	@BUILD=$(BUILD) scripts/check_deps.sh

clean:
	rm -rf build build-*

.PHONY: all test deps fuzz bench bench-wordcount bench-growth install check-deps clean

-include $(shell find $(BUILD)/obj $(BUILD)/fuzz -name '*.d' 2>/dev/null)
