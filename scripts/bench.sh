#!/usr/bin/env bash
# bench.sh -- Kiln against RocksDB on the serving dataset (bench/dataset.h):
# one sorted file written by kiln-bench (HFile, hfile_writer) and by rbench
# (SST, SstFileWriter), then random Gets, missing-key Gets and 100-row scans on
# each. The two run alternately (Kiln, RocksDB, Kiln, RocksDB, ...) so that
# drift on the machine hits both alike, and the summary prints medians and
# Kiln/RocksDB ratios. rbench is built from PEERS/rocksdb_bench; without it
# only Kiln runs (and the ratios read n/a).
#
#   scripts/bench.sh [--rows N] [--runs R] [--ops K] [--scan-ops K] [--dir DIR]
#                    [--peers PEERS] [--only write|read] [--kiln BIN]
#                    [--hugepages N]
#   scripts/bench.sh --summarize LOGDIR     (summary of an earlier run's logs)
#   scripts/bench.sh --suite put [ARGS]     (the speed layer's Puts against RocksDB
#                                            and Redis: scripts/put_bench.sh ARGS)
#   scripts/bench.sh --suite table-input [ARGS]  (rowcounter and export against the
#                                            table-read ceiling: scripts/table_input_bench.sh)
#   scripts/bench.sh --suite wordcount [ARGS]  (word count against MR-MPI and Phoenix++:
#                                            scripts/wordcount_peers_bench.sh ARGS)
#   scripts/bench.sh --suite growth [ARGS]  (wordcount, importtsv and load from 200 MiB
#                                            to 10 GiB; importtsv against the HFile
#                                            writer: scripts/growth_bench.sh ARGS)
#
# Defaults: 10M rows, 3 runs, 2M Gets per thread, 200k scans, data in
# $BENCH_DIR or /tmp/kiln-bench, PEERS $KILN_PEERS or ../shared/bench/peers
# (relative to the repository). Logs go to build/bench-results/<time>/.
# "ratio" is the ratio of the medians; "paired" the median of the per-run
# ratios (each Kiln run against the RocksDB run right after it), which drift
# on a shared machine disturbs less. --only write runs the write comparison
# alone (no reads); --only read writes each file once, then runs the reads.
# --kiln BIN runs BIN instead of build/bin/kiln-bench (e.g. a build of another
# commit, for before/after figures on the same machine). --hugepages N
# reserves N 2 MiB huge pages (vm.nr_hugepages, as root) for the run and puts
# the old count back at the end: Kiln's caches take their memory from that
# pool when it has room (storage/base/slab.h); RocksDB's block cache does not
# use it. The count in effect goes into params.txt either way.
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=10000000
RUNS=3
OPS=2000000
SCAN_OPS=200000
DIR=${BENCH_DIR:-/tmp/kiln-bench}
PEERS=${KILN_PEERS:-../shared/bench/peers}

usage() {
    sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'
}
SUMMARIZE=
ONLY=
HUGEPAGES=
KB=build/bin/kiln-bench

if [ "${1:-}" = --suite ]; then
    case ${2:-} in
    put) shift 2; exec scripts/put_bench.sh "$@" ;;
    table-input) shift 2; exec scripts/table_input_bench.sh "$@" ;;
    wordcount) shift 2; exec scripts/wordcount_peers_bench.sh "$@" ;;
    growth) shift 2; exec scripts/growth_bench.sh "$@" ;;
    read) shift 2 ;;
    *) echo "bench.sh: --suite takes put, read, table-input, wordcount or growth, not '${2:-}'" >&2; exit 64 ;;
    esac
fi

while [ $# -gt 0 ]; do
    case $1 in
    --rows) ROWS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --ops) OPS=$2; shift 2 ;;
    --scan-ops) SCAN_OPS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --peers) PEERS=$2; shift 2 ;;
    --summarize) SUMMARIZE=$2; shift 2 ;;
    --only)
        case $2 in write | read) ONLY=$2 ;;
        *) echo "bench.sh: --only takes write or read, not '$2'" >&2; exit 64 ;;
        esac
        shift 2 ;;
    --kiln) KB=$2; shift 2 ;;
    --hugepages) HUGEPAGES=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bench.sh: unknown argument '$1'" >&2; usage >&2; exit 64 ;;
    esac
done
for v in "$ROWS" "$RUNS" "$OPS" "$SCAN_OPS" ${HUGEPAGES:+"$HUGEPAGES"}; do
    case $v in '' | *[!0-9]*) echo "bench.sh: '$v' is not a number" >&2; exit 64 ;; esac
done

# values NAME SYS KEY: the KEY= values of the result lines (write/get/scan ...).
values() {
    [ -f "$LOG/$1.$2.log" ] || return 0
    { grep -E '^(write|get|scan) ' "$LOG/$1.$2.log" || true; } | tr ' ' '\n' | sed -n "s/^$3=//p"
}
rss() {
    [ -f "$LOG/$1.$2.log" ] || return 0
    sed -n 's/^peak_rss_kb=//p' "$LOG/$1.$2.log" | awk '{ printf "%.0f\n", $1 / 1024 }'
}
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'
}
# paired NAME KEY: median over runs of kiln/rocksdb for run i.
paired() {
    paste <(values "$1" kiln "$2") <(values "$1" rocksdb "$2") |
        awk -F'\t' '$1 != "" && $2 + 0 > 0 { print $1 / $2 }' | median |
        awk '{ if ($1 == "nan") print "n/a"; else printf "%.2f", $1 }'
}

summary() {
    local runs rows
    runs=$(values write kiln keys_per_s | wc -l)
    rows=$(values write kiln n | head -1)
    # --only read writes each file once, outside the timed runs
    [ "$runs" -gt 0 ] || runs=$(values get_warm_t1 kiln ops_per_s | wc -l)
    [ -n "$rows" ] || rows=$(sed -n 's/^rows=\([0-9]*\).*/\1/p' "$LOG/params.txt" 2>/dev/null)
    echo
    echo "Kiln vs RocksDB, $rows rows, medians of $runs runs (logs: $LOG)"
    [ -s "$LOG/core_probe.txt" ] && echo "machine: $(cat "$LOG/core_probe.txt") (kiln-core-probe: beside/alone)"
    printf '%-16s %10s %10s %6s %6s | %-20s | %-20s | %7s | %9s\n' test kiln rocksdb ratio paired \
        "kiln p50/p99/p999 us" "rocksdb p50/p99/p999" "bad k/r" "rss MB k/r"
    for name in write get_warm_t1 get_warm_t2 get_cache64_t1 missing_warm_t1 scan_warm_t1 scan_cache64_t1; do
        [ -f "$LOG/$name.kiln.log" ] || continue
        if [ "$name" = write ]; then key=keys_per_s; else key=ops_per_s; fi
        k=$(values $name kiln $key | median)
        o=$(values $name rocksdb $key | median)
        lat() {
            if [ "$name" = write ]; then echo "-"; return; fi
            printf '%s/%s/%s' "$(values $name "$1" p50_us | median)" \
                "$(values $name "$1" p99_us | median)" "$(values $name "$1" p999_us | median)"
        }
        badk=$(values $name kiln bad | awk '{ s += $1 } END { print s + 0 }')
        bado=$(values $name rocksdb bad | awk '{ s += $1 } END { print s + 0 }')
        [ "$name" = write ] && { badk=-; bado=-; }
        printf '%-16s %10.0f %10.0f %6s %6s | %-20s | %-20s | %7s | %9s\n' "$name" "$k" "$o" \
            "$(ratio "$k" "$o")" "$(paired $name $key)" "$(lat kiln)" "$(lat rocksdb)" \
            "$badk/$bado" "$(rss $name kiln | median)/$(rss $name rocksdb | median)"
    done
    if [ -f "$LOG/file_sizes.txt" ]; then
        echo
        echo "file sizes (bytes):"
        sed 's/^/  /' "$LOG/file_sizes.txt"
    fi
    echo
    echo "targets (ratio of medians; the goals of the performance issue, at 10M rows):"
    w=$(ratio "$(values write kiln keys_per_s | median)" "$(values write rocksdb keys_per_s | median)")
    g=$(ratio "$(values get_warm_t1 kiln ops_per_s | median)" "$(values get_warm_t1 rocksdb ops_per_s | median)")
    m=$(ratio "$(values missing_warm_t1 kiln ops_per_s | median)" "$(values missing_warm_t1 rocksdb ops_per_s | median)")
    gp=$(values get_warm_t1 kiln p99_us | median)
    sp=$(values scan_warm_t1 kiln p99_us | median)
    verdict() { awk -v v="$1" -v t="$2" -v d="$3" 'BEGIN { if (v == "n/a" || v == "nan") { print "-"; exit } ok = (d == "ge") ? (v + 0 >= t) : (v + 0 <= t); print ok ? "met" : "MISSED" }'; }
    echo "  write >= 1.5x RocksDB:              $w  $(verdict "$w" 1.5 ge)"
    echo "  get warm >= 2.0x RocksDB:           $g  $(verdict "$g" 2.0 ge)"
    echo "  get warm p99 <= 3 us:               $gp  $(verdict "$gp" 3 le)"
    echo "  missing keys >= 1.2x RocksDB:       $m  $(verdict "$m" 1.2 ge)"
    echo "  100-row scan warm p99 <= 10 us:     $sp  $(verdict "$sp" 10 le)"
}

if [ -n "$SUMMARIZE" ]; then
    LOG=$SUMMARIZE
    summary
    exit 0
fi

echo "== build" >&2
PEER_SRC=$PEERS/rocksdb_bench
RB=
if [ -f "$PEER_SRC/rbench.c" ] && [ -f "$PEER_SRC/Makefile" ]; then
    scripts/deps.sh --bench
else
    echo "bench.sh: RocksDB harness not found: $PEER_SRC/rbench.c (give --peers DIR or KILN_PEERS);" \
        "running Kiln only" >&2
    scripts/deps.sh
fi
make -j2 bench >&2
if [ -f "$PEER_SRC/rbench.c" ]; then
    # The peer builds outside the tree's sources, on the same rows as Kiln.
    PEER=build/peers/rocksdb_bench
    mkdir -p "$PEER"
    cp "$PEER_SRC/rbench.c" "$PEER_SRC/Makefile" "$PEER/"
    cp bench/dataset.h "$PEER/"
    make -C "$PEER" rbench >&2
    RB=$PEER/rbench
fi
[ -x "$KB" ] || { echo "bench.sh: $KB is not an executable kiln-bench" >&2; exit 66; }

if [ -n "$HUGEPAGES" ]; then
    HP_FILE=/proc/sys/vm/nr_hugepages
    HP_OLD=$(cat "$HP_FILE")
    echo "$HUGEPAGES" >"$HP_FILE" 2>/dev/null ||
        { echo "bench.sh: --hugepages: cannot write $HP_FILE (run as root)" >&2; exit 77; }
    trap 'echo "$HP_OLD" >"$HP_FILE"' EXIT
    got=$(cat "$HP_FILE")
    [ "$got" -ge "$HUGEPAGES" ] ||
        { echo "bench.sh: --hugepages: asked for $HUGEPAGES huge pages, the system gave $got" >&2; exit 75; }
fi

LOG=build/bench-results/$(date +%Y%m%d-%H%M%S)
mkdir -p "$LOG" "$DIR"
echo "rows=$ROWS runs=$RUNS ops=$OPS scan_ops=$SCAN_OPS dir=$DIR logs=$LOG rocksdb=${RB:-none}" | tee "$LOG/params.txt"
echo "kiln $(git rev-parse --short HEAD 2>/dev/null || echo '?') ($KB); $(nproc) cpus; $(uname -r);" \
    "load average $(cut -d' ' -f1-3 /proc/loadavg); vm.nr_hugepages $(cat /proc/sys/vm/nr_hugepages)" \
    >>"$LOG/params.txt"
# Whether the machine's CPUs are independent (the peers and Kiln run one at a
# time here, but a 2-thread run and a noisy neighbour share them): the probe's
# first line goes into params.txt and the summary.
build/bin/kiln-core-probe --rounds 3 --ms 100 | head -1 >"$LOG/core_probe.txt"

# timed NAME SYSTEM CMD...: run CMD, append its output and its peak RSS
# (GNU time, kB) to $LOG/NAME.SYSTEM.log.
timed() {
    local name=$1 sys=$2
    shift 2
    echo "+ $*" >&2
    /usr/bin/time -f "peak_rss_kb=%M" -o "$LOG/.time" "$@" >>"$LOG/$name.$sys.log"
    cat "$LOG/.time" >>"$LOG/$name.$sys.log"
}

# ---------------------------------------------------------------- write
WRITE_RUNS=$RUNS
[ "$ONLY" != read ] || WRITE_RUNS=1
for r in $(seq "$WRITE_RUNS"); do
    rm -f "$DIR/kiln.hfile" "$DIR/base.sst"
    timed write kiln "$KB" write "$DIR/kiln.hfile" "$ROWS"
    [ -z "$RB" ] || timed write rocksdb "$RB" write "$DIR/base.sst" "$ROWS"
done
if [ "$ONLY" = read ]; then
    # one write each makes the files; its figures are not the write test's
    for s in kiln rocksdb; do
        [ -f "$LOG/write.$s.log" ] && mv "$LOG/write.$s.log" "$LOG/setup_write.$s.log"
    done
fi
if [ "$ONLY" = write ]; then
    du -b "$DIR/kiln.hfile" ${RB:+"$DIR/base.sst"} >"$LOG/file_sizes.txt"
    rm -f "$LOG/.time"
    summary | tee "$LOG/summary.txt"
    echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$LOG/summary.txt"
    exit 0
fi
if [ -n "$RB" ]; then
    du -b "$DIR/kiln.hfile" "$DIR/base.sst" >"$LOG/file_sizes.txt"
    # RocksDB reads from a DB: ingest the SST (hard link, move_files) once.
    rm -rf "$DIR/db"
    ln -f "$DIR/base.sst" "$DIR/mv.sst"
    "$RB" ingest "$DIR/db" "$DIR/mv.sst" >"$LOG/ingest.rocksdb.log"
else
    du -b "$DIR/kiln.hfile" >"$LOG/file_sizes.txt"
fi

# ---------------------------------------------------------------- reads
# name | command | options shared by both harnesses
READS="
get_warm_t1|get|--threads 1 --ops $OPS --cache-mb 4096 --warm
get_warm_t2|get|--threads 2 --ops $OPS --cache-mb 4096 --warm
get_cache64_t1|get|--threads 1 --ops $OPS --cache-mb 64
missing_warm_t1|get|--threads 1 --ops $OPS --cache-mb 4096 --warm --missing
scan_warm_t1|scan|--threads 1 --ops $SCAN_OPS --cache-mb 4096 --warm
scan_cache64_t1|scan|--threads 1 --ops $SCAN_OPS --cache-mb 64
"
for r in $(seq "$RUNS"); do
    while IFS='|' read -r name cmd opts; do
        [ -n "$name" ] || continue
        # shellcheck disable=SC2086
        timed "$name" kiln "$KB" "$cmd" "$DIR/kiln.hfile" "$ROWS" $opts
        [ -n "$RB" ] || continue
        # shellcheck disable=SC2086
        timed "$name" rocksdb "$RB" "$cmd" "$DIR/db" "$ROWS" --readonly $opts
    done <<<"$READS"
done
rm -f "$LOG/.time"

# ---------------------------------------------------------------- summary
summary | tee "$LOG/summary.txt"
