#!/usr/bin/env bash
# growth_bench.sh -- how the batch side's costs grow with the data, and the
# engine's overhead over the HFile writer on the same cells:
#
#   wordcount  `run_job.sh -n NP wordcount` on 1, 5, 20 and 51 copies of the
#              200 MiB Zipf corpus of bench/gen_corpus.c (seed 42), i.e. 200
#              MiB to 10 GiB, spilling. Each output is checked against the
#              corpus' known totals (992883 distinct words; 48193684 words a
#              copy), so a run that loses or doubles a record fails.
#   importtsv  `run_job.sh -n NP importtsv` of the serving dataset
#              (bench/dataset.h rows as `kiln-bench tsv` writes them: 134
#              bytes a line) at the same input sizes, NP regions; then
#              `kiln load` of each output into a fresh table, by copy and,
#              where `kiln load` has it, by --move. Each load is checked
#              with `kiln count`.
#   ceiling    the same cells (--rows, default 10M) by importtsv at -n 1 and
#              -n NP against `kiln hfile write` (one process, no shuffle:
#              the writer's ceiling), in turn, round after round.
#   get        random Gets (`kiln-bench get`, 2M a run) on one HFile of 10M
#              and one of 100M dataset rows, each with a block cache of 10%
#              of its file, in turn: p99 at 100M over p99 at 10M. The files
#              (DIR/get-10m.hfile, DIR/get-100m.hfile: 0.6 and 5.8 GB) are
#              written once and kept; the page cache is filled first, so
#              what grows is the index and the cache, not the disk.
#
# For each size: the median wall time, seconds per GiB and its ratio to the
# smallest size's (1.00 = linear), and the peak RSS of the largest rank (the
# job's own "Peak Physical memory" counter).
#
#   scripts/growth_bench.sh [--part wordcount|importtsv|ceiling|get|all]
#                           [--copies "1 5 20 51"] [--runs R] [--rows N]
#                           [-n NP] [--dir DIR] [--keep]
#
# Defaults: all parts, 2 runs a size (3 rounds for ceiling), NP 2, data in
# $BENCH_DIR/growth or /tmp/kiln-bench/growth (removed size by size unless
# --keep; the 10 GiB step needs about 40 GB free). Logs go to
# build/bench-results/<time>-growth/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
PART=all
COPIES="1 5 20 51"
RUNS=2
ROWS=10000000
NP=2
KEEP=0
DIR=${BENCH_DIR:-/tmp/kiln-bench}/growth
while [ $# -gt 0 ]; do
    case $1 in
    --part) PART=$2; shift 2 ;;
    --copies) COPIES=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --rows) ROWS=$2; shift 2 ;;
    -n) NP=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h | --help) sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "growth_bench.sh: unknown argument '$1' (try --help)" >&2; exit 64 ;;
    esac
done
case $PART in wordcount | importtsv | ceiling | get | all) ;;
*) echo "growth_bench.sh: --part takes wordcount, importtsv, ceiling, get or all, not '$PART'" >&2; exit 64 ;;
esac
for v in $COPIES "$RUNS" "$ROWS" "$NP"; do
    case $v in '' | *[!0-9]* | 0) echo "growth_bench.sh: '$v' is not a positive number" >&2; exit 64 ;; esac
done

make -j"$(nproc)" all "$BUILD/bin/kiln-bench" >&2
KILN=$ROOT/$BUILD/bin/kiln
KB=$ROOT/$BUILD/bin/kiln-bench
LOGS=$ROOT/$BUILD/bench-results/$(date +%Y%m%d-%H%M%S)-growth
mkdir -p "$LOGS" "$DIR"
SUMMARY=$LOGS/summary.txt
say() { echo "growth_bench: $*" >&2; }
out() { echo "$*" | tee -a "$SUMMARY"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now() { date +%s.%N; }
counter() {   # counter JOB_JSON NAME: one counter of a job report
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["counters"]
print(next(g[sys.argv[2]] for g in d.values() if sys.argv[2] in g))' "$1" "$2"
}
MOVE=0
"$KILN" load --help 2>&1 | grep -q -- '--move' && MOVE=1
out "growth_bench $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ------------------------------------------------------------------ wordcount
wordcount_part() {
    local base=${TMPDIR:-/tmp}/kiln-wordcount-corpus.txt
    local sha=72664e3fcb135e0554600241732e43d091247312881ea84c6e08a6cee6e563b1
    if [ ! -f "$base" ] || [ "$(sha256sum "$base" | cut -d' ' -f1)" != "$sha" ]; then
        mkdir -p "$BUILD/bench"
        cc -O2 -o "$BUILD/bench/gen_corpus" bench/gen_corpus.c -lm
        say "generating $base (200 MiB, seed 42)"
        "$BUILD/bench/gen_corpus" -o "$base"
    fi
    local bytes0 first=""
    bytes0=$(stat -L -c %s "$base")
    out ""
    out "wordcount, $NP ranks, copies of the 200 MiB corpus, $RUNS runs a size"
    out "$(printf '%-7s %9s %9s %9s %8s %12s %10s' copies MiB wall_s cpu_s s/GiB vs_smallest rank_rss_MiB)"
    for k in $COPIES; do
        local corpus=$base
        if [ "$k" != 1 ]; then
            corpus=$DIR/corpus-x$k.txt
            if [ "$(stat -c %s "$corpus" 2>/dev/null || echo 0)" != $((bytes0 * k)) ]; then
                say "writing $corpus ($k copies)"
                for _ in $(seq "$k"); do cat "$base"; done > "$corpus"
            fi
        fi
        cat "$corpus" > /dev/null
        local walls=() cpus=() rss=()
        for r in $(seq "$RUNS"); do
            local o=$DIR/wc-out
            rm -rf "$o"
            local t0 t1
            t0=$(now)
            ./run_job.sh -n "$NP" wordcount --input "$corpus" --output "$o" -D kiln.progress=false \
                > "$LOGS/wordcount-x$k-$r.log" 2>&1
            t1=$(now)
            walls+=("$(echo "$t1 - $t0" | bc -l)")
            cpus+=("$(counter "$o/_job.json" "CPU time spent (ms)")")
            rss+=("$(counter "$o/_job.json" "Peak Physical memory (bytes)")")
            local got
            got=$(cat "$o"/part-r-* | awk -F'\t' '{ n++; s += $2 } END { printf "%d %.0f\n", n, s }')
            if [ "$got" != "992883 $((48193684 * k))" ]; then
                out "OUTPUT WRONG at $k copies: $got (want 992883 $((48193684 * k)))"
                exit 1
            fi
            rm -rf "$o"
        done
        local w c m mib spg
        w=$(printf '%s\n' "${walls[@]}" | median)
        c=$(printf '%s\n' "${cpus[@]}" | median)
        m=$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)
        mib=$(echo "$bytes0 * $k / 1048576" | bc -l)
        spg=$(echo "$w / ($mib / 1024)" | bc -l)
        [ -n "$first" ] || first=$spg
        out "$(printf '%-7s %9.0f %9.2f %9.2f %8.2f %12.2f %10.1f' "$k" "$mib" "$w" \
            "$(echo "$c / 1000" | bc -l)" "$spg" "$(echo "$spg / $first" | bc -l)" \
            "$(echo "$m / 1048576" | bc -l)")"
        [ "$KEEP" = 1 ] || [ "$k" = 1 ] || rm -f "$corpus"
    done
}

# ------------------------------------------------------------------ importtsv + load
IMPORT_D=(-D importtsv.columns=HBASE_ROW_KEY,f:v -D importtsv.timestamp=1700000000000
          -D kiln.hfile.compression=snappy -D kiln.hfile.bloom=row -D kiln.hfile.blocksize=65536
          -D kiln.progress=false)

# The split keys cutting rows 0..N-1 of the dataset into P even regions: the
# hex of the user id that starts each (ten rows a user).
split_args() {
    local n=$1 p=$2 i
    for ((i = 1; i < p; i++)); do
        printf -- '--split %016x ' $((1000000 + 2 * (n * i / p / 10)))
    done
}

# importtsv_run N P TSV OUT LOG: one importtsv of N rows into P regions.
importtsv_run() {
    local n=$1 p=$2
    rm -rf "$4" "$DIR/job-data"
    # shellcheck disable=SC2046
    ./run_job.sh -n "$p" importtsv "${IMPORT_D[@]}" --table growth --data "$DIR/job-data" \
        $(split_args "$n" "$p") --input "$3" --output "$4" > "$5" 2>&1
}

# load_run HOW N OUT LOG: a fresh table, then `kiln load` (HOW copy or move);
# prints the load's wall seconds. The table's regions are the job's.
load_run() {
    local how=$1 n=$2 o=$3 data=$DIR/data-$1
    rm -rf "$data"
    # shellcheck disable=SC2046
    "$KILN" --data "$data" create growth --family f $(split_args "$n" "$NP") > /dev/null
    local t0 t1 extra=()
    [ "$how" = move ] && extra=(--move)
    t0=$(now)
    "$KILN" --data "$data" load growth "$o" "${extra[@]}" >> "$4" 2>&1
    t1=$(now)
    local c
    c=$("$KILN" --data "$data" count growth 2>> "$4" | grep -o '[0-9]*' | tail -1)
    if [ "$c" != "$n" ]; then
        out "LOAD WRONG ($how): kiln count says '$c', want $n" >&2
        exit 1
    fi
    rm -rf "$data"
    echo "$t1 - $t0" | bc -l
}

importtsv_part() {
    local first="" k
    out ""
    out "importtsv, $NP ranks and regions, snappy 64 KiB blocks, row bloom; then kiln load of its output"
    out "(load: a fresh table each time; move = kiln load --move$([ "$MOVE" = 1 ] || echo ', not in this build'))"
    out "$(printf '%-7s %10s %9s %9s %12s %8s %12s %10s %9s %9s' copies rows MiB wall_s rows/s/rank \
        s/GiB vs_smallest rank_rss_MiB load_copy load_move)"
    for k in $COPIES; do
        local n=$((1565000 * k)) tsv=$DIR/import.tsv o=$DIR/import-out
        say "importtsv: $n rows"
        "$KB" tsv "$tsv" "$n"
        cat "$tsv" > /dev/null
        local walls=() rss=() r t0 t1
        for r in $(seq "$RUNS"); do
            t0=$(now)
            importtsv_run "$n" "$NP" "$tsv" "$o" "$LOGS/importtsv-x$k-$r.log"
            t1=$(now)
            walls+=("$(echo "$t1 - $t0" | bc -l)")
            rss+=("$(counter "$o/_job.json" "Peak Physical memory (bytes)")")
            [ "$(counter "$o/_job.json" "Cells written")" = "$n" ] ||
                { out "IMPORTTSV WRONG at $k copies: cells written != $n"; exit 1; }
        done
        rm -f "$tsv"
        local lc lm="n/a"
        lc=$(load_run copy "$n" "$o" "$LOGS/load-x$k.log")
        if [ "$MOVE" = 1 ]; then
            lm=$(load_run move "$n" "$o" "$LOGS/load-x$k.log")
            lm=$(printf '%.3f' "$lm")
        fi
        local w m mib spg
        w=$(printf '%s\n' "${walls[@]}" | median)
        m=$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)
        mib=$(echo "$n * 134 / 1048576" | bc -l)
        spg=$(echo "$w / ($mib / 1024)" | bc -l)
        [ -n "$first" ] || first=$spg
        out "$(printf '%-7s %10d %9.0f %9.2f %12.0f %8.2f %12.2f %10.1f %9.3f %9s' "$k" "$n" "$mib" "$w" \
            "$(echo "$n / $w / $NP" | bc -l)" "$spg" "$(echo "$spg / $first" | bc -l)" \
            "$(echo "$m / 1048576" | bc -l)" "$lc" "$lm")"
        rm -rf "$o" "$DIR/job-data"
    done
}

# ------------------------------------------------------------------ ceiling
ceiling_part() {
    local tsv=$DIR/ceiling.tsv dump=$DIR/ceiling.dump o=$DIR/ceiling-out hf=$DIR/ceiling.hfile
    say "ceiling: $ROWS rows"
    "$KB" tsv "$tsv" "$ROWS"
    "$KB" dump "$dump" "$ROWS"
    local wr=() i1=() i2=() r t0 t1
    for r in $(seq $((RUNS > 3 ? RUNS : 3))); do
        cat "$dump" > /dev/null
        t0=$(now)
        "$KILN" hfile write "$hf" --input "$dump" --compression snappy --bloom row --block-size 64K \
            > "$LOGS/ceiling-write-$r.log" 2>&1
        t1=$(now)
        wr+=("$(echo "$t1 - $t0" | bc -l)")
        rm -f "$hf"
        cat "$tsv" > /dev/null
        t0=$(now)
        importtsv_run "$ROWS" 1 "$tsv" "$o" "$LOGS/ceiling-import1-$r.log"
        t1=$(now)
        i1+=("$(echo "$t1 - $t0" | bc -l)")
        t0=$(now)
        importtsv_run "$ROWS" "$NP" "$tsv" "$o" "$LOGS/ceiling-import$NP-$r.log"
        t1=$(now)
        i2+=("$(echo "$t1 - $t0" | bc -l)")
        rm -rf "$o"
        printf 'round %d: hfile write %.2f s, importtsv -n 1 %.2f s, -n %d %.2f s\n' "$r" \
            "${wr[-1]}" "${i1[-1]}" "$NP" "${i2[-1]}" >> "$SUMMARY"
    done
    rm -f "$tsv" "$dump"
    local w a b
    w=$(printf '%s\n' "${wr[@]}" | median)
    a=$(printf '%s\n' "${i1[@]}" | median)
    b=$(printf '%s\n' "${i2[@]}" | median)
    out ""
    out "the writer's ceiling, $ROWS rows (32-byte hex row, f:v, 100-byte value; snappy, 64 KiB, row bloom), ${#wr[@]} rounds in turn"
    out "$(printf '%-26s %9s %12s %12s' command median_s rows/s/rank ceiling/this)"
    out "$(printf '%-26s %9.2f %12.0f %12s' 'kiln hfile write' "$w" "$(echo "$ROWS / $w" | bc -l)" 1.00)"
    out "$(printf '%-26s %9.2f %12.0f %12.2f' 'importtsv -n 1' "$a" "$(echo "$ROWS / $a" | bc -l)" \
        "$(echo "$a / $w" | bc -l)")"
    out "$(printf '%-26s %9.2f %12.0f %12.2f' "importtsv -n $NP" "$b" "$(echo "$ROWS / $b / $NP" | bc -l)" \
        "$(echo "$b * $NP / $w" | bc -l)")"
    out "(ceiling/this: the writer's rows/s over the job's rows/s per rank; the goal is <= 2)"
}

# ------------------------------------------------------------------ get
get_part() {
    local f n mb p10 p100 r
    for n in 10000000 100000000; do
        f=$DIR/get-$((n / 1000000))m.hfile
        if [ ! -s "$f" ]; then
            say "writing $f"
            "$KB" write "$f" "$n" > "$LOGS/get-write-$n.log"
        fi
        cat "$f" > /dev/null
    done
    local m10 m100
    m10=$(( $(stat -L -c %s "$DIR/get-10m.hfile") / 10 / 1048576 ))
    m100=$(( $(stat -L -c %s "$DIR/get-100m.hfile") / 10 / 1048576 ))
    local a=() b=() pr=()
    out ""
    out "Get p99 as the data grows: block cache 10% of the file ($m10 and $m100 MiB), 2M Gets a run"
    for r in $(seq $((RUNS > 3 ? RUNS : 3))); do
        "$KB" get "$DIR/get-10m.hfile" 10000000 --ops 2000000 --cache-mb "$m10" > "$LOGS/get-10m-$r.log" 2>&1
        "$KB" get "$DIR/get-100m.hfile" 100000000 --ops 2000000 --cache-mb "$m100" > "$LOGS/get-100m-$r.log" 2>&1
        p10=$(grep -o 'p99_us=[0-9.]*' "$LOGS/get-10m-$r.log" | cut -d= -f2)
        p100=$(grep -o 'p99_us=[0-9.]*' "$LOGS/get-100m-$r.log" | cut -d= -f2)
        grep -q ' bad=0 ' "$LOGS/get-10m-$r.log" && grep -q ' bad=0 ' "$LOGS/get-100m-$r.log" ||
            { out "GET WRONG: bad answers (see $LOGS/get-*-$r.log)"; exit 1; }
        a+=("$p10"); b+=("$p100"); pr+=("$(echo "$p100 / $p10" | bc -l)")
        out "$(printf 'round %d: p99 %.2f us at 10M, %.2f us at 100M (%.2fx); %s and %s Gets/s' "$r" "$p10" \
            "$p100" "${pr[-1]}" "$(grep -o 'ops_per_s=[0-9]*' "$LOGS/get-10m-$r.log" | cut -d= -f2)" \
            "$(grep -o 'ops_per_s=[0-9]*' "$LOGS/get-100m-$r.log" | cut -d= -f2)")"
    done
    local ma mb
    ma=$(printf '%s\n' "${a[@]}" | median)
    mb=$(printf '%s\n' "${b[@]}" | median)
    out "$(printf 'median p99 %.2f us at 10M, %.2f us at 100M: ratio of medians %.2f, median of paired ratios %.2f (goal <= 1.3)' \
        "$ma" "$mb" "$(echo "$mb / $ma" | bc -l)" "$(printf '%s\n' "${pr[@]}" | median)")"
}

case $PART in
get) get_part ;;
wordcount) wordcount_part ;;
importtsv) importtsv_part ;;
ceiling) ceiling_part ;;
all) wordcount_part; importtsv_part; ceiling_part; get_part ;;
esac
out ""
out "load average after: $(cut -d' ' -f1-3 /proc/loadavg); logs in $LOGS"
