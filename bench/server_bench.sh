#!/usr/bin/env bash
# server_bench.sh -- kiln-server beside redis-server on the same machine, same
# tools, same data, in one run. The Kiln side serves 10M rows (two tables:
# "rkeys" with redis-benchmark's key form and the values of the Redis peer's
# gen_resp.py, and "bench" with the dataset of bench/dataset.h); redis-server
# is loaded by PEERS/redis_bench/gen_resp.py with the same rows (without it
# only Kiln runs and the Kiln/Redis ratios read nan). Measured, alternating
# Kiln and Redis run by run (A B A B):
#   - redis-benchmark GET, 50 clients, pipeline 1 and 16, random existing keys;
#   - HTTP Gets of random existing rows with wrk (50 connections,
#     bench/server_get.lua), and 100-row HTTP scans (bench/server_scan.lua);
#   - a swap under load: `kiln load` of a new version (new files, new values)
#     6 s into a redis-benchmark run (throughput per quarter second, against
#     the same run's before the load, until 4 s after the swap; the row
#     cache warmed again after each), and in the middle of a wrk run
#     (against a wrk run without a swap). After each swap trace, a control
#     trace runs a SCHED_IDLE busy loop (`chrt -i 0`) instead of the load,
#     for as long as the load and warm-up took: what work beside the server
#     costs the rate on this machine, with no swap at all;
#   - the server's resident memory against its cache budget plus the indexes
#     and blooms of the loaded files, sampled through the whole run, with an
#     optional soak (--soak SECONDS of mixed load and a swap a minute).
# Everything is warm: every row is read once through the server before timing.
#
#   bench/server_bench.sh [--rows N] [--runs R] [--dir DIR] [--threads T]
#                         [--cache-mb M] [--row-cache-mb M] [--secs S] [--soak S]
#                         [--load move|copy] [--peers PEERS] [--swap-only]
#                         [--no-swap] [--busy-poll-us N]
#
# --swap-only runs the swaps under load and nothing else (no Redis peer, no
# redis-benchmark or wrk comparison); --no-swap runs everything but them.
# --busy-poll-us is kiln-server's option of that name (default: the server's).
#
# --load says how a swap's `kiln load` takes the new version's files: move
# (the default, `kiln load --move` of a fresh hard-linked copy of the kept job
# output, as a user loading each new job's output would) or copy (plain
# `kiln load`, which copies every file into the store during the swap).
#
# Defaults: 10M rows, 3 runs, data in $BENCH_DIR or /tmp/kiln-server-bench,
# 2 threads, 8192 MiB cache (5120 for rows), wrk runs of 20 s, no soak, PEERS
# $KILN_PEERS or ../shared/bench/peers (relative to the repository). Logs and
# summary.txt go to build/bench-results/server-<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

ROWS=10000000
RUNS=3
DIR=${BENCH_DIR:-/tmp/kiln-server-bench}
THREADS=2
CACHE_MB=8192
ROW_MB=5120
SECS=20
SOAK=0
HPORT=${HPORT:-18480}
KPORT=${KPORT:-16480}
RPORT=${RPORT:-6480}
PEERS=${KILN_PEERS:-../shared/bench/peers}
LOAD=move
SWAP_ONLY=0
NO_SWAP=0
POLL=

usage() { sed -n '2,39p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case $1 in
    --rows) ROWS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --cache-mb) CACHE_MB=$2; shift 2 ;;
    --row-cache-mb) ROW_MB=$2; shift 2 ;;
    --secs) SECS=$2; shift 2 ;;
    --soak) SOAK=$2; shift 2 ;;
    --load) LOAD=$2; shift 2 ;;
    --peers) PEERS=$2; shift 2 ;;
    --swap-only) SWAP_ONLY=1; shift ;;
    --no-swap) NO_SWAP=1; shift ;;
    --busy-poll-us) POLL=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "server_bench.sh: unknown argument '$1'" >&2; usage >&2; exit 64 ;;
    esac
done
case $LOAD in move | copy) ;; *) echo "server_bench.sh: --load takes move or copy, not '$LOAD'" >&2; exit 64 ;; esac
for v in "$ROWS" "$RUNS" "$THREADS" "$CACHE_MB" "$ROW_MB" "$SECS" "$SOAK" "${POLL:-0}"; do
    case $v in '' | *[!0-9]*) echo "server_bench.sh: '$v' is not a number" >&2; exit 64 ;; esac
done

GEN_RESP=$PEERS/redis_bench/gen_resp.py
REDIS=1
if [ $SWAP_ONLY = 1 ]; then
    REDIS=0
elif [ ! -f "$GEN_RESP" ]; then
    echo "server_bench.sh: Redis harness not found: $GEN_RESP (give --peers DIR or KILN_PEERS);" \
        "running kiln-server only" >&2
    REDIS=0
fi

echo "== build" >&2
scripts/deps.sh --bench
make -j2 all bench >&2
B=$ROOT/build/bin
LOG=$ROOT/build/bench-results/server-$(date +%Y%m%d-%H%M%S)
# The kernel's DAMON monitors (kdamond threads), their state and their
# schemes' actions, and the CPU seconds they have used: a pageout scheme
# runs in chunks of several milliseconds on the cores the servers and the
# load generators use, which shows in every p99 here.
damon() {
    local k d out=""
    for k in /sys/kernel/mm/damon/admin/kdamonds/[0-9]*; do
        [ -r "$k/state" ] || continue
        out="$out kdamond $(basename "$k"): $(cat "$k/state")"
        for d in "$k"/contexts/[0-9]*/schemes/[0-9]*; do
            [ -r "$d/action" ] && out="$out, scheme $(cat "$d/action")"
        done
        out="$out;"
    done
    for k in $(pgrep -x 'kdamond\..*' 2>/dev/null); do
        out="$out $(awk '{printf "%s cpu %.1f s", $2, ($14 + $15) / 100}' "/proc/$k/stat" 2>/dev/null);"
    done
    echo "damon:${out:- none}"
}
mkdir -p "$LOG" "$DIR"
{
    echo "rows=$ROWS runs=$RUNS threads=$THREADS cache_mb=$CACHE_MB row_cache_mb=$ROW_MB secs=$SECS soak=$SOAK load=$LOAD busy_poll_us=${POLL:-default} dir=$DIR"
    echo "kiln $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(nproc) cpus; $(uname -r); redis $([ $REDIS = 1 ] && redis-server --version | cut -d' ' -f3 || echo none)"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "at start, $(damon)"
} | tee "$LOG/params.txt"
# Whether the two CPUs the server and its load generators share are
# independent cores (kiln-core-probe): the summary prints it first.
build/bin/kiln-core-probe --rounds 3 --ms 100 | head -1 | tee "$LOG/core_probe.txt"

KPID=
RPID=
SAMPLER=
cleanup() {
    [ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null
    for p in $KPID $RPID; do kill -CONT "$p" 2>/dev/null; done   # FREEZE's
    [ -n "$KPID" ] && kill -TERM "$KPID" 2>/dev/null
    [ -n "$RPID" ] && kill "$RPID" 2>/dev/null
    wait 2>/dev/null
}
trap cleanup EXIT

# ---------------------------------------------------------------- data
echo "== data" >&2
for v in 0 1; do
    [ -f "$DIR/rk$v/_SUCCESS" ] || python3 bench/server_gen.py "$B/kiln" "$DIR/rk$v" "$ROWS" --data-version $v
    [ -f "$DIR/ds$v/_SUCCESS" ] || "$B/kiln-store-bench" build "$DIR/ds$v" "$ROWS" --data-version $v >&2
done
D=$DIR/data
if [ ! -f "$DIR/data.rows" ] || [ "$(cat "$DIR/data.rows")" != "$ROWS" ]; then
    rm -rf "$D"
    "$B/kiln" --data "$D" create rkeys --family f:blocksize=4096 --splits-file "$DIR/rk0/_splits" >&2
    "$B/kiln" --data "$D" create bench --family f:blocksize=4096 --splits-file "$DIR/ds0/_splits" >&2
    echo "$ROWS" >"$DIR/data.rows"
fi
"$B/kiln" --data "$D" load rkeys "$DIR/rk0" --wait >&2
"$B/kiln" --data "$D" load bench "$DIR/ds0" --wait >&2
# bytes of indexes and blooms (load-on-open sections) of the loaded files
INDEX_BYTES=$(for f in "$DIR"/rk0/f/part-* "$DIR"/ds0/f/part-*; do
    "$B/kiln" hfile meta "$f" | awk '/^  (IDXLEAF2|IDXINTR2|IDXROOT2|BLMFBLK2|BLMFMET2) /{
        for (i = 1; i <= NF; i++) if ($i ~ /^uncompressed_bytes=/) { sub("uncompressed_bytes=", "", $i); s += $i } }
        END { print s + 0 }'
done | awk '{ s += $1 } END { print s }')
echo "index_and_bloom_bytes=$INDEX_BYTES" | tee -a "$LOG/params.txt"

# ---------------------------------------------------------------- servers
if [ $REDIS = 1 ]; then
    echo "== redis-server (port $RPORT), $ROWS keys" >&2
    redis-server --port "$RPORT" --bind 127.0.0.1 --save "" --appendonly no \
        --logfile "$LOG/redis-server.log" &
    RPID=$!
    sleep 1
    redis-cli -p "$RPORT" flushall >/dev/null
    python3 "$GEN_RESP" "$ROWS" | redis-cli -p "$RPORT" --pipe >"$LOG/redis-load.log"
    redis-cli -p "$RPORT" info memory | grep -E '^used_memory(_rss)?:' | tee -a "$LOG/params.txt"
fi

echo "== kiln-server (http $HPORT, resp $KPORT)" >&2
"$B/kiln-server" --data "$D" --listen "127.0.0.1:$HPORT" --resp-listen "127.0.0.1:$KPORT" \
    --threads "$THREADS" --cache-mb "$CACHE_MB" --row-cache-mb "$ROW_MB" \
    ${POLL:+--busy-poll-us "$POLL"} --resp-column f:v >"$LOG/kiln-server.log" 2>&1 &
KPID=$!
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$HPORT/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done
echo "kiln_rss_kb_after_open=$(awk '/VmRSS/{print $2}' /proc/$KPID/status)" | tee -a "$LOG/params.txt"

# resident memory of both servers every 5 s
(
    while kill -0 "$KPID" 2>/dev/null; do
        echo "$(date +%s) kiln_rss_kb=$(awk '/VmRSS/{print $2}' /proc/$KPID/status 2>/dev/null) redis_rss_kb=$(awk '/VmRSS/{print $2}' /proc/$RPID/status 2>/dev/null)"
        sleep 5
    done
) >"$LOG/rss.log" &
SAMPLER=$!

# ---------------------------------------------------------------- warm
# WARM TABLE...: every row of each table (rkeys, bench) read once through
# the server, so that its row cache holds them all (bench/server_warm.py).
WARM() {
    python3 bench/server_warm.py "$KPORT" "$ROWS" "$@"
}
echo "== warm: every row read once through kiln-server" >&2
WARM rkeys bench >"$LOG/warm.log"
"$B/kiln" --server "127.0.0.1:$HPORT" count bench >"$LOG/warm-count.log"
cat "$LOG/warm.log" "$LOG/warm-count.log" >&2

# ---------------------------------------------------------------- redis-benchmark
# Kiln's Redis databases are its tables in name order: default:bench is 0,
# default:rkeys (redis-benchmark's keys) is 1. Both servers must answer alike.
KDB=1
for k in key:000000000000 key:000000123456 "key:$(printf %012d $((ROWS - 1)))"; do
    a=$(redis-cli -p "$KPORT" -n $KDB get "$k")
    [ $REDIS = 1 ] || { [ -n "$a" ] || { echo "server_bench.sh: $k: kiln has no value" >&2; exit 1; }; continue; }
    b=$(redis-cli -p "$RPORT" get "$k")
    if [ -z "$a" ] || [ "$a" != "$b" ]; then
        echo "server_bench.sh: $k: kiln '$a' != redis '$b'" >&2
        exit 1
    fi
done
dbnum() { [ "$1" = "$KPORT" ] && echo $KDB || echo 0; }
# FREEZE PID: stop the server that is not being measured (SIGSTOP) until
# THAW. An idle server still works on the cores the measured one and its
# load generator share: redis-server, for tens of seconds after a run, in
# slices of milliseconds at its cron's 10 Hz (in a check, 130 ms of CPU in
# the 10 s after a P1 run, against 20 ms at rest). Ten stalls a second of
# a few milliseconds each, over the 50 requests in flight, are 1% of the
# requests: the other server's p99. Each server is measured with the other
# stopped; each one's own work after a run falls in its own next run.
FROZEN=
FREEZE() {
    [ -n "$1" ] && kill -STOP "$1" 2>/dev/null && FROZEN=$1
    return 0
}
THAW() {
    [ -n "$FROZEN" ] && kill -CONT "$FROZEN" 2>/dev/null
    FROZEN=
}
RB() {   # RB PORT PIPELINE N
    redis-benchmark -h 127.0.0.1 -p "$1" --dbnum "$(dbnum "$1")" -t get -r "$ROWS" -c 50 -P "$2" \
        -n "$3" --csv 2>/dev/null | grep '^"GET"'
}
echo "== redis-benchmark GET, 50 clients" >&2
: >"$LOG/resp.csv"
for r in $(seq "$RUNS"); do
    [ $SWAP_ONLY = 1 ] && break
    for P in 1 16; do
        n=2000000
        [ "$P" = 16 ] && n=8000000
        for sys in kiln redis; do
            [ $sys = redis ] && [ $REDIS = 0 ] && continue
            port=$KPORT other=$RPID
            [ $sys = redis ] && port=$RPORT other=$KPID
            FREEZE "$other"
            line=$(RB "$port" "$P" "$n")
            THAW
            echo "$sys,$P,$r,$line" | tee -a "$LOG/resp.csv" >&2
        done
    done
done
# Only kiln-server is measured from here on.
FREEZE "$RPID"

# ---------------------------------------------------------------- wrk
# CPUSECS PID: the process's CPU time so far (user + system, seconds)
CPUSECS() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }
# WRK SCRIPT -> "rps p50_ms p99_ms non2xx requests wrk_cpu_s server_cpu_s": the
# CPU times are wrk's own (its rusage) and kiln-server's over the run, so
# the summary can say what each request cost the two cores they share.
WRK() {
    local s0 s1 stats
    s0=$(CPUSECS "$KPID")
    python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[2:])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.2f" % (r.ru_utime + r.ru_stime))' "$LOG/wrk.cpu" \
        wrk -t2 -c50 -d"${SECS}s" --latency -s "$1" "http://127.0.0.1:$HPORT" -- "$ROWS" >"$LOG/wrk.tmp" 2>&1
    s1=$(CPUSECS "$KPID")
    cat "$LOG/wrk.tmp" >>"$LOG/wrk.log"
    stats=$(python3 - "$LOG/wrk.tmp" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
def ms(s):
    v, u = re.match(r"([\d.]+)(us|ms|s)", s).groups()
    return float(v) * {"us": 0.001, "ms": 1, "s": 1000}[u]
rps = re.search(r"Requests/sec:\s+([\d.]+)", t).group(1)
p50 = ms(re.search(r"^\s+50%\s+(\S+)", t, re.M).group(1))
p99 = ms(re.search(r"^\s+99%\s+(\S+)", t, re.M).group(1))
errs = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
n = re.search(r"(\d+) requests in", t).group(1)
print(rps, "%.3f" % p50, "%.3f" % p99, errs.group(1) if errs else 0, n)
EOF
)
    echo "$stats $(cat "$LOG/wrk.cpu") $(python3 -c "print('%.2f' % ($s1 - $s0))")"
}
echo "== wrk: HTTP Get and 100-row scans, 50 connections" >&2
: >"$LOG/http.csv"
for r in $(seq "$RUNS"); do
    [ $SWAP_ONLY = 1 ] && break
    echo "get,$r,$(WRK bench/server_get.lua | tr ' ' ',')" | tee -a "$LOG/http.csv" >&2
    echo "scan,$r,$(WRK bench/server_scan.lua | tr ' ' ',')" | tee -a "$LOG/http.csv" >&2
done

# ---------------------------------------------------------------- swaps under load
# redis-benchmark prints its running rate every 250 ms: keep those lines,
# each stamped with the wall clock, so that the summary can place them
# against the load and against the server's log line of the swap.
STAMP() { stdbuf -o0 tr '\r' '\n' | while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done; }
RBSTART() {   # RBSTART PORT PIPELINE OUT: a trace until RBSTOP
    redis-benchmark -h 127.0.0.1 -p "$1" --dbnum "$(dbnum "$1")" -t get -r "$ROWS" -c 50 \
        -P "$2" -n 2000000000 2>/dev/null > >(STAMP >"$3") &
    RBP=$!
}
RBSTOP() { kill "$RBP" 2>/dev/null || true; wait "$RBP" 2>/dev/null || true; sleep 0.3; }
# SWAPLOAD TABLE JOB_OUTPUT: load a kept job output as the table's next
# version, by --load's way; a move takes a hard-linked copy of the output
# (made before the load, so the swap itself pays only for the load).
SWAPLOAD() {
    if [ "$LOAD" = move ]; then
        rm -rf "$DIR/stage-$1"
        cp -al "$2" "$DIR/stage-$1"
        "$B/kiln" --data "$D" load "$1" "$DIR/stage-$1" --move --wait
    else
        "$B/kiln" --data "$D" load "$1" "$2" --wait
    fi
}
swaps_logged() { grep -cE 'version [0-9]+ -> [0-9]+' "$LOG/kiln-server.log" || true; }
# WAITSWAP N: until the server has logged more than N swaps (at most 120 s).
WAITSWAP() {
    for _ in $(seq 1200); do
        [ "$(swaps_logged)" -gt "$1" ] && return 0
        sleep 0.1
    done
    echo "server_bench.sh: kiln-server logged no swap within 120 s of the load" >&2
}
echo "== swaps under load" >&2
: >"$LOG/swap.csv"
next=1
for r in $(seq "$RUNS"); do
    [ $NO_SWAP = 1 ] && break
    for P in 1 16; do
        # One trace: 6 s of the rate without a swap, then the load, then
        # on until 4 s after the server serves the new version (the warm-up
        # between the load and the swap is measured too). The row cache is
        # warmed again after each swap, so each run starts as the first did.
        RBSTART "$KPORT" "$P" "$LOG/swap-during-$P-$r.txt"
        sleep 6
        had=$(swaps_logged)
        t0=$EPOCHREALTIME
        echo "$t0" >"$LOG/swap-during-$P-$r.load"
        SWAPLOAD rkeys "$DIR/rk$next" >"$LOG/swap-load-$P-$r.txt" 2>&1
        WAITSWAP "$had"
        t1=$EPOCHREALTIME
        sleep 4
        RBSTOP
        next=$((1 - next))
        WARM rkeys >>"$LOG/warm.log"
        echo "resp,$P,$r" >>"$LOG/swap.csv"
        # The control: the same trace with no swap, and a busy loop that is
        # not Kiln, at the lowest priority Linux has (SCHED_IDLE), running
        # as long as the load and warm-up just did. What it costs the rate
        # is what any work beside the server costs on this machine.
        RBSTART "$KPORT" "$P" "$LOG/control-$P-$r.txt"
        sleep 6
        echo "$EPOCHREALTIME" >"$LOG/control-$P-$r.load"
        chrt -i 0 sh -c 'while :; do :; done' &
        SPIN=$!
        sleep "$(python3 -c "print(max(0.1, $t1 - $t0))")"
        kill "$SPIN"
        wait "$SPIN" 2>/dev/null || true
        echo "$EPOCHREALTIME" >"$LOG/control-$P-$r.end"
        sleep 4
        RBSTOP
    done
    [ $SWAP_ONLY = 1 ] && continue
    WRK bench/server_get.lua >"$LOG/swap-http-base-$r.txt"
    ( sleep 5; SWAPLOAD bench "$DIR/ds$((r % 2))" >"$LOG/swap-http-load-$r.txt" 2>&1 ) &
    LP=$!
    WRK bench/server_get.lua >"$LOG/swap-http-during-$r.txt"
    wait $LP
    WARM bench >>"$LOG/warm.log"
done
grep -E 'version [0-9]+ -> [0-9]+' "$LOG/kiln-server.log" >"$LOG/swaps.log" || true

# ---------------------------------------------------------------- soak
if [ "$SOAK" -gt 0 ]; then
    echo "== soak: $SOAK s of HTTP Gets, scans and Redis GETs, a swap a minute" >&2
    end=$(($(date +%s) + SOAK))
    (
        i=0
        while [ "$(date +%s)" -lt "$end" ]; do
            sleep 60
            SWAPLOAD rkeys "$DIR/rk$((i % 2))" >/dev/null 2>&1
            SWAPLOAD bench "$DIR/ds$((i % 2))" >/dev/null 2>&1
            i=$((i + 1))
        done
    ) &
    SW=$!
    wrk -t1 -c20 -d"${SOAK}s" -s bench/server_get.lua "http://127.0.0.1:$HPORT" -- "$ROWS" >"$LOG/soak-get.txt" 2>&1 &
    W1=$!
    wrk -t1 -c5 -d"${SOAK}s" -s bench/server_scan.lua "http://127.0.0.1:$HPORT" -- "$ROWS" >"$LOG/soak-scan.txt" 2>&1 &
    W2=$!
    while kill -0 $W1 2>/dev/null; do
        redis-benchmark -h 127.0.0.1 -p "$KPORT" --dbnum $KDB -t get -r "$ROWS" -c 20 -P 4 \
            -n 2000000 -q >/dev/null 2>&1 || true
    done
    wait $W1 $W2 $SW || true
fi
curl -s "http://127.0.0.1:$HPORT/metrics" >"$LOG/metrics.txt"
kill "$SAMPLER" 2>/dev/null || true
SAMPLER=

# ---------------------------------------------------------------- summary
echo "at end, $(damon)" | tee -a "$LOG/params.txt"
build/bin/kiln-core-probe --rounds 3 --ms 100 | head -1 | sed 's/^/at end: /' | tee -a "$LOG/core_probe.txt"
echo "$CACHE_MB $INDEX_BYTES" >"$LOG/budget.txt"
python3 bench/server_bench_summary.py "$LOG" | tee "$LOG/summary.txt"
echo "logs: $LOG" >&2
