#!/usr/bin/env bash
# put_bench.sh -- the speed layer's write path against RocksDB and Redis on the
# serving dataset's rows (bench/dataset.h: 16-byte keys, 100-byte values):
# random Puts from 1 and 8 writers, in two pairings,
#   sync:  Kiln SYNC_WAL  | RocksDB WriteOptions.sync=true, WAL | Redis appendfsync always
#   async: Kiln ASYNC_WAL | RocksDB sync=false, WAL             | Redis appendfsync everysec
# each a fresh database per run (kiln-put-bench put, rocks-put-bench put,
# redis-benchmark -t set -d 100 -r K against redis-server --appendonly yes;
# Redis keys are "key:" and 12 digits, 16 bytes too, its values 100 bytes).
# Then kiln-put-bench get: p99 of random Gets with every row in the memstores
# against the same rows flushed and read as a read-only table.
# Systems run alternately (Kiln, RocksDB, Redis, Kiln, ...) so that drift on
# the machine hits all alike; the summary prints medians, the ratios of the
# medians (Kiln/peer ops/s: higher is better for Kiln) and the load average.
# A peer that is absent (no librocksdb-dev, no redis-server) is skipped with a
# "peer absent" line and Kiln runs alone.
#
#   scripts/put_bench.sh [--runs R] [--sync-ops N] [--async-ops N] [--threads "1 8"]
#                        [--get-rows R] [--get-ops G] [--quick] [--dir DIR]
#                        [--no-build] [--port P]
#   scripts/put_bench.sh --summarize LOGDIR    (summary of an earlier run's logs)
#
# Defaults: 3 runs, 200k Puts per run in the sync pairing, 1M in the async
# one (key space = the Puts of the run), Gets over 250k rows (about one
# default 64 MiB memstore) x 500k; --quick is 1 run of 20k / 100k Puts and
# 100k Gets. Data in $BENCH_DIR/put or /tmp/kiln-bench/put, Redis on port
# 6391; logs in build/bench-results/<time>-put/.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=3
SYNC_OPS=200000
ASYNC_OPS=1000000
THREADS="1 8"
GET_ROWS=250000
GET_OPS=500000
DIR=${BENCH_DIR:-/tmp/kiln-bench}/put
PORT=6391
BUILD=1
SUMMARIZE=

usage() {
    sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
    case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --sync-ops) SYNC_OPS=$2; shift 2 ;;
    --async-ops) ASYNC_OPS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --get-rows) GET_ROWS=$2; shift 2 ;;
    --get-ops) GET_OPS=$2; shift 2 ;;
    --quick) RUNS=1; SYNC_OPS=20000; ASYNC_OPS=100000; GET_OPS=100000; shift ;;
    --dir) DIR=$2; shift 2 ;;
    --port) PORT=$2; shift 2 ;;
    --no-build) BUILD=; shift ;;
    --summarize) SUMMARIZE=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "put_bench.sh: unknown argument '$1'" >&2; usage >&2; exit 64 ;;
    esac
done
for v in "$RUNS" "$SYNC_OPS" "$ASYNC_OPS" "$GET_ROWS" "$GET_OPS" "$PORT" $THREADS; do
    case $v in '' | *[!0-9]*) echo "put_bench.sh: '$v' is not a number" >&2; exit 64 ;; esac
done

# values TEST SYS KEY: the KEY= values of the result lines of TEST by SYS.
values() {
    [ -f "$LOG/$1.$2.log" ] || return 0
    { grep -E '^(put|get_mem|get_flushed|get_readonly|get_ratio) ' "$LOG/$1.$2.log" || true; } |
        tr ' ' '\n' | sed -n "s/^$3=//p"
}
# line TEST SYS NAME KEY: KEY of the lines named NAME only.
line() {
    [ -f "$LOG/$1.$2.log" ] || return 0
    { grep -E "^$3 " "$LOG/$1.$2.log" || true; } | tr ' ' '\n' | sed -n "s/^$4=//p"
}
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'
}
fmt() {
    awk -v v="$1" 'BEGIN { if (v == "nan" || v == "") print "-"; else printf "%.0f", v }'
}
lat() {
    local p50 p99
    p50=$(values "$1" "$2" p50_us | median)
    p99=$(values "$1" "$2" p99_us | median)
    if [ "$p50" = nan ]; then echo "-"; else printf '%s/%s' "$p50" "$p99"; fi
}

summary() {
    local tests
    tests=$(ls "$LOG" | sed -n 's/^\(\(sync\|async\)_t[0-9]*\)\.kiln\.log$/\1/p' | sort -t_ -k1,1r -k2.2n)
    echo
    echo "Kiln speed layer vs RocksDB and Redis, random Puts, medians of $(cat "$LOG/runs" 2>/dev/null || echo '?') runs (logs: $LOG)"
    [ -f "$LOG/params.txt" ] && sed 's/^/  /' "$LOG/params.txt"
    [ -f "$LOG/absent.txt" ] && cat "$LOG/absent.txt"
    printf '%-9s %9s %9s %9s %6s %6s | %-15s | %-15s | %-15s\n' test "kiln/s" "rocks/s" "redis/s" \
        "k/rock" "k/red" "kiln p50/p99us" "rocks p50/p99" "redis p50/p99"
    for t in $tests; do
        k=$(values "$t" kiln ops_per_s | median)
        r=$(values "$t" rocksdb ops_per_s | median)
        d=$(values "$t" redis ops_per_s | median)
        printf '%-9s %9s %9s %9s %6s %6s | %-15s | %-15s | %-15s\n' "$t" "$(fmt "$k")" "$(fmt "$r")" \
            "$(fmt "$d")" "$(ratio "$k" "$r")" "$(ratio "$k" "$d")" "$(lat "$t" kiln)" \
            "$(lat "$t" rocksdb)" "$(lat "$t" redis)"
    done
    echo "  (sync: Kiln SYNC_WAL, RocksDB sync=true, Redis appendfsync always;"
    echo "   async: Kiln ASYNC_WAL, RocksDB sync=false, Redis appendfsync everysec;"
    echo "   Redis figures include a loopback round trip per SET, Kiln's and RocksDB's are in-process)"
    if [ -f "$LOG/get.kiln.log" ]; then
        echo
        echo "Kiln Gets, $(line get kiln get_mem rows | head -1) rows, $(line get kiln get_mem threads | head -1) thread(s), p50/p99 us (medians):"
        for g in get_mem get_flushed get_readonly; do
            printf '  %-13s %s/%s  ops/s %s\n' "$g" "$(line get kiln $g p50_us | median)" \
                "$(line get kiln $g p99_us | median)" "$(fmt "$(line get kiln $g ops_per_s | median)")"
        done
        gm=$(line get kiln get_mem p99_us | median)
        gr=$(line get kiln get_readonly p99_us | median)
        echo "  p99 full memstore / read-only table: $(ratio "$gm" "$gr") (ratio of medians; per run: $(line get kiln get_ratio mem_over_readonly | tr '\n' ' '))"
    fi
    echo
    echo "load average (1/5/15 min): before $(cat "$LOG/load.before" 2>/dev/null || echo '?'), after $(cat "$LOG/load.after" 2>/dev/null || echo '?'); $(nproc) cpus"
    echo
    echo "targets (ratio of medians):"
    verdict() { awk -v v="$1" -v t="$2" -v d="$3" 'BEGIN { if (v == "n/a" || v == "nan") { print "-"; exit } ok = (d == "ge") ? (v + 0 >= t) : (v + 0 <= t); print ok ? "met" : "MISSED" }'; }
    for t in $tests; do
        x=$(ratio "$(values "$t" kiln ops_per_s | median)" "$(values "$t" rocksdb ops_per_s | median)")
        printf '  %-9s Kiln >= 1.0x RocksDB:        %5s  %s\n' "$t" "$x" "$(verdict "$x" 1.0 ge)"
    done
    if [ -f "$LOG/get.kiln.log" ]; then
        x=$(ratio "$(line get kiln get_mem p99_us | median)" "$(line get kiln get_readonly p99_us | median)")
        printf '  Get p99, full memstore <= 1.2x read-only: %5s  %s\n' "$x" "$(verdict "$x" 1.2 le)"
    fi
}

if [ -n "$SUMMARIZE" ]; then
    LOG=$SUMMARIZE
    summary
    exit 0
fi

if [ -n "$BUILD" ]; then
    echo "== build" >&2
    scripts/deps.sh --bench || scripts/deps.sh
    make -j2 bench >&2
fi
KP=build/bin/kiln-put-bench
RP=build/bin/rocks-put-bench
[ -x "$KP" ] || { echo "put_bench.sh: $KP missing: run make bench" >&2; exit 70; }

LOG=build/bench-results/$(date +%Y%m%d-%H%M%S)-put
mkdir -p "$LOG"
rm -rf "$DIR"
mkdir -p "$DIR"
: >"$LOG/absent.txt"
if [ ! -x "$RP" ]; then
    echo "peer absent: rocksdb ($RP not built: librocksdb-dev missing, see scripts/deps.sh --bench)" |
        tee -a "$LOG/absent.txt" >&2
    RP=
fi
REDIS=1
if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
    echo "peer absent: redis (redis-server or redis-benchmark not found)" | tee -a "$LOG/absent.txt" >&2
    REDIS=
fi
echo "$RUNS" >"$LOG/runs"
{
    echo "runs=$RUNS sync_ops=$SYNC_OPS async_ops=$ASYNC_OPS threads=\"$THREADS\" get_rows=$GET_ROWS get_ops=$GET_OPS dir=$DIR"
    echo "kiln $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(nproc) cpus; $(uname -r); $(df -P "$DIR" | awk 'NR == 2 { print $1 }')"
    [ -z "$RP" ] || echo "rocksdb $(dpkg-query -W -f='${Version}' librocksdb-dev 2>/dev/null || echo '?')"
    [ -z "$REDIS" ] || echo "$(redis-server --version | cut -d' ' -f1-3)"
} >"$LOG/params.txt"
cat "$LOG/params.txt" >&2
cut -d' ' -f1-3 /proc/loadavg >"$LOG/load.before"

# timed TEST SYS CMD...: run CMD, append its output and its peak RSS to
# $LOG/TEST.SYS.log.
timed() {
    local name=$1 sys=$2
    shift 2
    echo "+ $*" >&2
    /usr/bin/time -f "peak_rss_kb=%M" -o "$LOG/.time" "$@" >>"$LOG/$name.$sys.log"
    cat "$LOG/.time" >>"$LOG/$name.$sys.log"
}

# redis_put TEST FSYNC CLIENTS OPS: a fresh redis-server with the append-only
# file on and appendfsync FSYNC, OPS SETs of random keys out of OPS from
# CLIENTS connections; the CSV becomes a `put system=redis ...` line.
redis_put() {
    local name=$1 fsync=$2 c=$3 n=$4 d=$DIR/redis
    rm -rf "$d"
    mkdir -p "$d"
    redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly yes --appendfsync "$fsync" \
        --dir "$d" --daemonize yes --pidfile "$d/redis.pid" --logfile "$d/redis.log"
    local i
    for i in $(seq 50); do
        redis-cli -p "$PORT" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    echo "+ redis-benchmark -t set -d 100 -r $n -c $c -n $n (appendfsync $fsync)" >&2
    redis-benchmark -h 127.0.0.1 -p "$PORT" -t set -d 100 -r "$n" -c "$c" -n "$n" --csv |
        awk -F'"' -v f="$fsync" -v c="$c" -v n="$n" '$2 == "SET" {
            printf "put system=redis appendfsync=%s threads=%s keys=%s ops=%s ops_per_s=%s mean_us=%.1f p50_us=%.1f p99_us=%.1f max_us=%.1f\n",
                f, c, n, n, $4, $6 * 1000, $10 * 1000, $14 * 1000, $16 * 1000 }' >>"$LOG/$name.redis.log"
    redis-cli -p "$PORT" info persistence | tr -d '\r' |
        grep -E '^(aof_current_size|aof_delayed_fsync)' | tr '\n' ' ' | sed 's/^/redis /; s/ $/\n/' \
        >>"$LOG/$name.redis.log"
    kill "$(cat "$d/redis.pid")"
    for i in $(seq 50); do
        [ -f "$d/redis.pid" ] || break
        sleep 0.1
    done
}

for r in $(seq "$RUNS"); do
    echo "== run $r of $RUNS" >&2
    for mode in sync async; do
        for t in $THREADS; do
            name=${mode}_t$t
            if [ $mode = sync ]; then
                n=$SYNC_OPS; dur=SYNC_WAL; s=1; f=always
            else
                n=$ASYNC_OPS; dur=ASYNC_WAL; s=0; f=everysec
            fi
            rm -rf "$DIR/kiln"
            timed "$name" kiln "$KP" put "$DIR/kiln" --threads "$t" --ops "$n" --durability $dur
            rm -rf "$DIR/kiln"
            if [ -n "$RP" ]; then
                rm -rf "$DIR/rocksdb"
                timed "$name" rocksdb "$RP" put "$DIR/rocksdb" --threads "$t" --ops "$n" --sync $s
                rm -rf "$DIR/rocksdb"
            fi
            [ -z "$REDIS" ] || redis_put "$name" $f "$t" "$n"
        done
    done
    rm -rf "$DIR/get"
    timed get kiln "$KP" get "$DIR/get" --rows "$GET_ROWS" --ops "$GET_OPS"
    rm -rf "$DIR/get"
done
rm -f "$LOG/.time"
cut -d' ' -f1-3 /proc/loadavg >"$LOG/load.after"

summary | tee "$LOG/summary.txt"
