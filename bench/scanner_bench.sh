#!/usr/bin/env bash
# scanner_bench.sh -- full-table scan throughput (rows/s) of one table three
# ways: HBase REST's scanner protocol through kiln-server (POST
# /TABLE/scanner with batch=1000, GET until 204), Kiln's stateless paged scan
# (GET /TABLE/*?paged=true resumed from "next_startrow", --scan-page-rows per
# page), and `kiln scan` embedded (its shell-style text, lines counted). The table has 100-byte
# values under redis-benchmark's key form (bench/server_gen.py), one cell a
# row, in 8 regions. Each way runs R times, alternating; the median is
# reported. The HTTP client is bench/scanner_client.py over one keep-alive
# connection; it counts rows without decoding them and checks their order.
#
#   bench/scanner_bench.sh [--rows N] [--runs R] [--dir DIR] [--threads T]
#                          [--cache-mb M] [--page-rows P]
#
# Defaults: 1M rows, 3 runs, data in $BENCH_DIR or /tmp/kiln-scanner-bench,
# 2 server threads, 4096 MiB cache, pages of 10000 rows. Logs and
# summary.txt go to build/bench-results/scanner-<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

ROWS=1000000
RUNS=3
DIR=${BENCH_DIR:-/tmp/kiln-scanner-bench}
THREADS=2
CACHE_MB=4096
PAGE=10000
HPORT=${HPORT:-18490}

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case $1 in
    --rows) ROWS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --cache-mb) CACHE_MB=$2; shift 2 ;;
    --page-rows) PAGE=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "scanner_bench.sh: unknown argument '$1'" >&2; usage >&2; exit 64 ;;
    esac
done
for v in "$ROWS" "$RUNS" "$THREADS" "$CACHE_MB" "$PAGE"; do
    case $v in '' | *[!0-9]* | 0) echo "scanner_bench.sh: '$v' is not a positive number" >&2; exit 64 ;; esac
done

echo "== build" >&2
make -j2 all >&2
B=$ROOT/build/bin
LOG=$ROOT/build/bench-results/scanner-$(date +%Y%m%d-%H%M%S)
mkdir -p "$LOG" "$DIR"
{
    echo "rows=$ROWS runs=$RUNS threads=$THREADS cache_mb=$CACHE_MB page_rows=$PAGE dir=$DIR"
    echo "kiln $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(nproc) cpus; $(uname -r)"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$LOG/params.txt"

KPID=
trap '[ -n "$KPID" ] && kill -TERM "$KPID" 2>/dev/null; wait 2>/dev/null' EXIT

# ---------------------------------------------------------------- data
echo "== data ($ROWS rows)" >&2
J=$DIR/job-$ROWS
[ -f "$J/_SUCCESS" ] || python3 bench/server_gen.py "$B/kiln" "$J" "$ROWS"
D=$DIR/data-$ROWS
if [ ! -f "$D/.loaded" ]; then
    rm -rf "$D"
    "$B/kiln" --data "$D" create scanbench --family f:blocksize=65536 --splits-file "$J/_splits" >&2
    "$B/kiln" --data "$D" load scanbench "$J" >&2
    touch "$D/.loaded"
fi

"$B/kiln-server" --data "$D" --listen "127.0.0.1:$HPORT" --threads "$THREADS" \
    --cache-mb "$CACHE_MB" --scan-page-rows "$PAGE" --quiet >"$LOG/kiln-server.log" 2>&1 &
KPID=$!
for _ in $(seq 200); do
    curl -sf "http://127.0.0.1:$HPORT/healthz" >/dev/null 2>&1 && break
    sleep 0.05
done

# one way: prints "ROWS SECONDS"
run_way() {
    case $1 in
    scanner) python3 bench/scanner_client.py 127.0.0.1 "$HPORT" scanbench scanner 1000 ;;
    paged) python3 bench/scanner_client.py 127.0.0.1 "$HPORT" scanbench paged ;;
    embedded)
        local t0 t1 n
        t0=$(date +%s.%N)
        n=$("$B/kiln" --data "$D" scan scanbench | grep -c '^ ')   # one line a cell
        t1=$(date +%s.%N)
        echo "$n $(echo "$t1 - $t0" | bc -l)"
        ;;
    esac
}

# warm the cache (and the page cache) once through each path
echo "== warm-up" >&2
for way in embedded scanner; do run_way $way >/dev/null; done

echo "== runs" >&2
: >"$LOG/runs.txt"
for r in $(seq "$RUNS"); do
    for way in scanner paged embedded; do
        out=$(run_way $way)
        set -- $out
        if [ "$1" != "$ROWS" ]; then
            echo "scanner_bench.sh: $way returned $1 rows, want $ROWS" >&2
            exit 1
        fi
        echo "$way $r $1 $2" | tee -a "$LOG/runs.txt" >&2
    done
done

python3 - "$LOG/runs.txt" "$ROWS" <<'PY' | tee "$LOG/summary.txt"
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    way, _, rows, secs = line.split()
    runs.setdefault(way, []).append(float(secs))
n = int(sys.argv[2])
print(f"full-table scan of {n} rows (1 cell of 100 bytes a row), median of {len(runs['scanner'])} runs")
labels = {"scanner": "REST scanner, batch=1000", "paged": "stateless /TABLE/* paged",
          "embedded": "kiln scan embedded"}
for way in ("scanner", "paged", "embedded"):
    m = statistics.median(runs[way])
    print(f"  {labels[way]:<28} {n / m:>12,.0f} rows/s  ({m:.2f} s)")
PY
echo "results in $LOG" >&2
