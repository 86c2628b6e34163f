#!/usr/bin/env bash
# table_input_bench.sh -- jobs that read a loaded table against the table-read
# ceiling: rowcounter and a full-table export (each at -np 1 and -np 2)
# against `kiln count` and `kiln scan` run embedded on one core, over one
# table of N rows (the useractions view of kiln-gen input, built once and
# kept in DIR). The commands run in turn, round after round, so that drift
# on the machine hits all alike; the summary prints each one's median wall
# time, rows/s, rows/s per rank, and its ratio to the single-core scan.
#
#   scripts/table_input_bench.sh [--rows N] [--runs R] [--dir DIR]
#
# Defaults: 10M rows, 3 rounds, DIR $BENCH_DIR/table-input or
# /tmp/kiln-bench/table-input. Logs go to build/bench-results/<time>-table-input/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROWS=10000000
RUNS=3
DIR=${BENCH_DIR:-/tmp/kiln-bench}/table-input
while [ $# -gt 0 ]; do
    case $1 in
    --rows) ROWS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "table_input_bench.sh: unknown argument '$1' (try --help)" >&2; exit 64 ;;
    esac
done
for v in "$ROWS" "$RUNS"; do
    case $v in '' | *[!0-9]*) echo "table_input_bench.sh: '$v' is not a number" >&2; exit 64 ;; esac
done
BUILD=${BUILD:-build}
KILN=$ROOT/$BUILD/bin/kiln
make -j"$(nproc)" >&2   # up to date, or built
export KILN_DATA=$DIR/data
LOGS=$ROOT/$BUILD/bench-results/$(date +%Y%m%d-%H%M%S)-table-input
mkdir -p "$LOGS" "$DIR"
say() { echo "table_input_bench: $*" >&2; }

# ---------------------------------------------------------------- the table
if [ "$(cat "$DIR/rows" 2>/dev/null)" != "$ROWS" ]; then
    say "building a table of about $ROWS rows in $DIR (once)"
    rm -rf "$DIR/raw" "$DIR/data" "$DIR/view"
    "$ROOT/$BUILD/bin/kiln-gen" useractions --rows "$ROWS" --seed 7 --files 8 --output "$DIR/raw"
    # users 1..ROWS/40: eight regions of similar size
    splits=()
    for k in 1 2 3 4 5 6 7; do
        printf -v hex '%08X' $((ROWS / 40 * k / 8))
        splits+=(--split "\\x${hex:0:2}\\x${hex:2:2}\\x${hex:4:2}\\x${hex:6:2}")
    done
    "$KILN" create useractions --family content "${splits[@]}" >/dev/null
    ./run_job.sh -n 2 useractions -D kiln.progress=false --input "$DIR/raw" --output "$DIR/view" >/dev/null
    "$KILN" load useractions "$DIR/view" >/dev/null
    rm -rf "$DIR/raw" "$DIR/view"
    echo "$ROWS" >"$DIR/rows"
fi
N=$("$KILN" count useractions | grep -o '^[0-9]*')
say "table useractions: $N rows, $(du -sh "$KILN_DATA" | cut -f1) on disk; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---------------------------------------------------------------- the runs
have_export=0
"$ROOT/$BUILD/bin/kiln-mr" --list | grep -q '^export' && have_export=1
names=(scan1 count1 rowcounter1 rowcounter2)
[ "$have_export" = 1 ] && names+=(export1 export2)
run() { # NAME: one timed run, wall seconds on stdout
    local name=$1 out=$DIR/out-$1 t0 t1
    rm -rf "$out"
    t0=$(date +%s.%N)
    case $name in
    scan1) taskset -c 0 "$KILN" scan useractions >/dev/null ;;
    count1) taskset -c 0 "$KILN" count useractions >/dev/null ;;
    rowcounter*) ./run_job.sh -n "${name#rowcounter}" rowcounter useractions -D kiln.progress=false \
                     --output "$out" >"$LOGS/$name.log" 2>&1 || return 1 ;;
    export*) ./run_job.sh -n "${name#export}" export useractions "$out" -D kiln.progress=false \
                 >"$LOGS/$name.log" 2>&1 || return 1 ;;
    esac
    t1=$(date +%s.%N)
    rm -rf "$out"
    echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}'
}
for ((r = 1; r <= RUNS; r++)); do
    for name in "${names[@]}"; do
        s=$(run "$name") || { say "$name failed (log: $LOGS/$name.log)"; exit 1; }
        echo "$name $s" >>"$LOGS/times"
        say "round $r: $name ${s}s"
    done
done

# ---------------------------------------------------------------- summary
{
    echo "rows: $N; rounds: $RUNS; load average now $(cut -d' ' -f1-3 /proc/loadavg)"
    printf '%-12s %8s %12s %14s %10s\n' command "wall s" "rows/s" "rows/s/rank" "vs scan1"
    awk -v n="$N" '
        { t[$1] = t[$1] " " $2; order[$1] = order[$1] ? order[$1] : ++k; name[k] = $1 }
        function median(s,   a, m, i, j, x) {
            m = split(s, a, " ")
            for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
            return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
        }
        END {
            base = median(t["scan1"])
            for (i = 1; i <= k; i++) {
                c = name[i]; w = median(t[c]); ranks = c ~ /2$/ ? 2 : 1
                printf "%-12s %8.2f %12.0f %14.0f %10.2f\n", c, w, n / w, n / w / ranks, base / w
            }
        }' "$LOGS/times"
} | tee "$LOGS/summary"
say "logs in $LOGS"
