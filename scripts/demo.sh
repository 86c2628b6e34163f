#!/usr/bin/env bash
# demo.sh -- Kiln end to end in under a minute: generate a sample of user
# activity (actions, server logs, customers with orders, a follow graph, book
# reviews), build the five materialized views with MapReduce jobs on MPI
# ranks (./run_job.sh), publish them with `kiln load`, serve them with
# kiln-server on a free port, run real queries through HTTP (curl) and the
# kiln client, print what they returned and how long each step took, and
# stop the server. The data directory stays for you to explore.
#
#   scripts/demo.sh [--rows N] [--np N] [--data DIR] [--work DIR]
#
# `make demo` runs it after installing what is missing and building. A re-run
# replaces the previous demo's directories (they carry a .kiln-demo marker;
# a directory without it is never removed).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build}
BIN=$ROOT/$BUILD/bin
KILN=$BIN/kiln

ROWS=200000
NP=2
DATA=demo-data
WORK=demo-work

usage() {
    cat <<EOF
Usage: scripts/demo.sh [--rows N] [--np N] [--data DIR] [--work DIR]

Runs Kiln end to end on generated data: kiln-gen writes raw input for the
five view jobs (useractions, tslog, orders, follows, reviews), ./run_job.sh
runs each on NP MPI ranks, kiln load publishes the tables, kiln-server serves
them on a free loopback port, and a handful of queries go through curl and
kiln. Each step's time is printed; the server is stopped at the end and the
data directory is left in place.

Options:
  --rows N    user actions to generate; the other inputs scale with it
              (default $ROWS: well under a minute on 2 cores)
  --np N      MPI ranks per job (default $NP)
  --data DIR  the Kiln data directory to create (default $DATA)
  --work DIR  raw input and job output (default $WORK)
  -h, --help  this text

A previous demo's DIR and WORK are replaced; any other existing directory is
refused. Exit status: 0 when every step and query succeeded.
EOF
}

while [ $# -gt 0 ]; do
    case $1 in
    --rows) ROWS=$2; shift 2 ;;
    --np) NP=$2; shift 2 ;;
    --data) DATA=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "demo.sh: unknown option '$1'" >&2; usage >&2; exit 64 ;;
    esac
done
case $ROWS in '' | *[!0-9]*) echo "demo.sh: --rows needs a number" >&2; exit 64 ;; esac
[ "$ROWS" -ge 1000 ] || { echo "demo.sh: --rows must be at least 1000" >&2; exit 64; }

for b in kiln kiln-mr kiln-server kiln-gen; do
    [ -x "$BIN/$b" ] || { echo "demo.sh: $BIN/$b is missing: run 'make' first (or 'make demo')" >&2; exit 69; }
done
command -v curl >/dev/null || { echo "demo.sh: curl is missing: run scripts/deps.sh" >&2; exit 69; }

# ---------------------------------------------------------------- helpers
T0=$(date +%s%N)
STEPS=()
SECTION=
bold() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
secs() { printf '%d.%03d s' $(($1 / 1000)) $(($1 % 1000)); }

# step NAME CMD...: run CMD (output to the log), print and record its time
step() {
    local name=$1 t
    shift
    t=$(date +%s%N)
    if ! "$@" >>"$WORK/demo.log" 2>&1; then
        echo "demo.sh: step '$name' failed; the last lines of $WORK/demo.log:" >&2
        tail -25 "$WORK/demo.log" >&2
        exit 1
    fi
    t=$(ms_since "$t")
    STEPS+=("$(printf '%-58s %s' "$SECTION $name" "$(secs "$t")")")
    printf '  %-48s %s\n' "$name" "$(secs "$t")"
}

# show CMD...: print the command, run it, print its output and time
show() {
    local t out
    printf '\n$ %s\n' "$*"
    t=$(date +%s%N)
    out=$("$@") || { echo "demo.sh: query failed: $*" >&2; exit 1; }
    t=$(ms_since "$t")
    printf '%s\n' "$out" | sed 's/^/  /'
    printf '  (%s)\n' "$(secs "$t")"
    [ -n "$out" ] || { echo "demo.sh: the query returned nothing: $*" >&2; exit 1; }
}

# be_key WIDTH N...: big-endian integers in kiln's printable form (\xNN)
be_key() {
    local w=$1 out= n hex i b
    shift
    for n in "$@"; do
        printf -v hex "%0$((w * 2))X" "$n"
        for ((i = 0; i < ${#hex}; i += 2)); do
            b=$((16#${hex:i:2}))
            if ((b >= 32 && b < 127 && b != 92)); then
                printf -v b "\\x${hex:i:2}"
                out+=$b
            else
                out+="\\x${hex:i:2}"
            fi
        done
    done
    printf '%s\n' "$out"
}

# pct KEY: a printable-form key percent-encoded for a URL
pct() {
    local s=$1 out= c i=0
    while ((i < ${#s})); do
        c=${s:i:1}
        if [ "$c" = '\' ] && [ "${s:i+1:1}" = x ]; then
            out+="%${s:i+2:2}"
            i=$((i + 4))
            continue
        fi
        case $c in
        [A-Za-z0-9._~-]) out+=$c ;;
        *) printf -v c '%%%02X' "'$c"; out+=$c ;;
        esac
        i=$((i + 1))
    done
    printf '%s\n' "$out"
}

# b64 TEXT: base64 to kiln's printable form
b64() {
    local out= b c
    for b in $(printf '%s' "$1" | base64 -d | od -An -v -tu1); do
        if ((b >= 32 && b < 127 && b != 92)); then
            printf -v c '%03o' "$b"
            printf -v c "\\$c"
            out+=$c
        else
            printf -v c '\\x%02X' "$b"
            out+=$c
        fi
    done
    printf '%s' "$out"
}

# cells: HBase REST CellSet JSON on stdin, one `row  column  time  value`
# line per cell (the first 8 cells), then the next_startrow if any
cells() {
    local n=0 row= col= ts= item v
    while read -r item; do
        v=${item#*:}
        v=${v//\"/}
        case $item in
        '"key":'*) row=$(b64 "$v") ;;
        '"column":'*) col=$(b64 "$v") ;;
        '"timestamp":'*) ts=$v ;;
        '"$":'*)
            n=$((n + 1))
            if [ "$n" -le 8 ]; then
                printf '%-34s %-16s %(%F %T)T  %s\n' "$row" "$col" $((ts / 1000)) "$(b64 "$v")"
            fi
            ;;
        '"next_startrow":'*) echo "next_startrow: $(b64 "$v")" ;;
        esac
    done < <(grep -oE '"(key|column|\$|next_startrow)":"[^"]*"|"timestamp":[0-9]+')
    [ "$n" -le 8 ] || echo "... $n cells in all"
    [ "$n" -gt 0 ] || echo "(no cells)"
}

# get_cells URL: curl the URL and show its cells
get_cells() {
    curl -sf "$1" | cells
}

# ---------------------------------------------------------------- clean
for d in "$DATA" "$WORK"; do
    if [ -e "$d" ]; then
        if [ -e "$d/.kiln-demo" ]; then
            rm -rf "$d"
        else
            echo "demo.sh: $d exists and is not a previous demo's directory: not touching it" >&2
            exit 73
        fi
    fi
    mkdir -p "$d"
    touch "$d/.kiln-demo"
done
DATA=$(cd "$DATA" && pwd)
WORK=$(cd "$WORK" && pwd)
export KILN_DATA=$DATA
SPID=
cleanup() {
    if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then
        kill -TERM "$SPID" 2>/dev/null || true
        wait "$SPID" 2>/dev/null || true
    fi
}
trap cleanup EXIT

echo "Kiln demo: $ROWS user actions and friends, $NP MPI ranks per job"
echo "  data directory: $DATA"
echo "  raw input and job output: $WORK (log: $WORK/demo.log)"

# ---------------------------------------------------------------- 1. generate
bold "1. Generate raw input (kiln-gen: deterministic, seed 42)"
SECTION=generate
R=$WORK/raw
step "useractions: $ROWS actions" "$BIN/kiln-gen" useractions --rows "$ROWS" --seed 42 --output "$R/useractions"
step "tslog: $ROWS server log events" "$BIN/kiln-gen" tslog --rows "$ROWS" --seed 42 --output "$R/tslog"
step "orders: $((ROWS / 10)) customers, orders and lines" "$BIN/kiln-gen" orders --rows $((ROWS / 10)) --seed 42 --output "$R/orders"
step "follows: $((ROWS / 2)) follow edges" "$BIN/kiln-gen" follows --rows $((ROWS / 2)) --seed 42 --output "$R/follows"
step "reviews: $((ROWS / 4)) book reviews" "$BIN/kiln-gen" reviews --rows $((ROWS / 4)) --seed 42 --output "$R/reviews"
echo "  e.g. $(head -1 "$R/useractions/actions-00000.tsv" | tr '\t' ' ')"

# ---------------------------------------------------------------- 2. tables
bold "2. Create the tables, pre-split into regions (kiln create)"
SECTION=create
USERS=$((ROWS / 40))
BASE=1709251200000
MIN=60000
bsplits=()
for b in 1 2 3 4 5 6 7; do bsplits+=(--split "$(printf '\\x%02X' "$b")"); done
step "useractions (3 regions by user id)" "$KILN" create useractions --family content \
    --split "$(be_key 4 $((USERS / 5)))" --split "$(be_key 4 $((USERS / 2)))"
step "tslog_bytime (8 regions: one per salt bucket)" "$KILN" create tslog_bytime --family d "${bsplits[@]}"
step "tslog_byhost (3 regions by host)" "$KILN" create tslog_byhost --family d --split cache --split queue
step "tslog_stats (2 regions by minute)" "$KILN" create tslog_stats --family s \
    --split "$(be_key 8 $((BASE + ROWS / 8 * 250)))"
step "orders (2 regions by customer id)" "$KILN" create orders --family c --family o \
    --split "$(be_key 4 $((ROWS / 40)))"
step "follows (2 regions by user id)" "$KILN" create follows --family e --split "$(be_key 4 $((ROWS / 200)))"
step "reviews (books | users)" "$KILN" create reviews --family r --split u

# ---------------------------------------------------------------- 3. jobs
bold "3. Build the views: MapReduce on $NP MPI ranks (./run_job.sh)"
SECTION="job"
O=$WORK/out
job() { ./run_job.sh -n "$NP" --timeout 300 "$@" -D kiln.progress=false; }
step "useractions" job useractions --input "$R/useractions" --output "$O/useractions"
step "tslog (3 tables in one pass)" job tslog --input "$R/tslog" --output "$O/tslog"
step "orders (reduce-side join of 3 inputs)" job orders --customers "$R/orders/customers" \
    --orders "$R/orders/orders" --lines "$R/orders/lines" --output "$O/orders"
step "follows" job follows --input "$R/follows" --output "$O/follows"
step "reviews" job reviews --input "$R/reviews" --output "$O/reviews"
for v in useractions tslog orders follows reviews; do
    printf '  %-12s %s cells, %s bad lines skipped\n' "$v" \
        "$(grep -o '"Cells written":[0-9]*' "$O/$v/_job.json" | cut -d: -f2)" \
        "$(grep -o '"Bad Lines":[0-9]*' "$O/$v/_job.json" | cut -d: -f2)"
done

# ---------------------------------------------------------------- 4. load
bold "4. Publish them atomically (kiln load)"
SECTION=load
step "useractions" "$KILN" load useractions "$O/useractions"
for l in bytime byhost stats; do
    step "tslog_$l" "$KILN" load "tslog_$l" "$O/tslog/$l"
done
for v in orders follows reviews; do
    step "$v" "$KILN" load "$v" "$O/$v"
done
"$KILN" list | sed 's/^/  /'

# ---------------------------------------------------------------- 5. serve
bold "5. Serve them (kiln-server on a free port)"
LOG=$WORK/server.log
resp=()
command -v redis-cli >/dev/null && resp=(--resp-listen 127.0.0.1:0 --resp-column orders=c:name)
t=$(date +%s%N)
"$BIN/kiln-server" --data "$DATA" --listen 127.0.0.1:0 --threads 2 "${resp[@]}" >"$LOG" 2>&1 &
SPID=$!
PORT=
for _ in $(seq 200); do
    PORT=$(sed -nE 's/.*over HTTP on .* \(port ([0-9]+)\).*/\1/p' "$LOG" | head -1)
    [ -n "$PORT" ] && break
    kill -0 "$SPID" 2>/dev/null || break
    sleep 0.05
done
[ -n "$PORT" ] || { echo "demo.sh: kiln-server did not start:" >&2; cat "$LOG" >&2; exit 1; }
RPORT=$(sed -nE 's/.*Redis protocol on .* \(port ([0-9]+)\).*/\1/p' "$LOG" | head -1)
t=$(ms_since "$t")
STEPS+=("$(printf '%-58s %s' "kiln-server start" "$(secs "$t")")")
U=http://127.0.0.1:$PORT
echo "  serving on $U${RPORT:+ (Redis protocol on port $RPORT)} after $(secs "$t")"

# ---------------------------------------------------------------- 6. queries
bold "6. Queries"
tq=$(date +%s%N)
u42=$(be_key 4 42)
echo
echo "-- useractions: user 42's latest 5 actions (row <user><Long.MAX - ts><action>: a prefix scan)"
show curl -sf "$U/useractions/*?prefix=$(pct "$u42")&limit=5&paged=true"
show get_cells "$U/useractions/*?prefix=$(pct "$u42")&limit=5&paged=true"
next=$(curl -sf "$U/useractions/*?prefix=$(pct "$u42")&limit=5&paged=true" | grep -oE '"next_startrow":"[^"]*"' | cut -d'"' -f4)
echo
echo "-- useractions: page 2, resumed from next_startrow (Kiln's paged=true; no server-side state)"
show get_cells "$U/useractions/*?prefix=$(pct "$u42")&limit=5&paged=true&startrow=$(pct "$(b64 "$next")")"
MAX=9223372036854775807
T1=$((BASE + 7 * 86400000))
T2=$((BASE + 10 * 86400000))
echo
echo "-- useractions: user 42 between 2024-03-08 and 2024-03-11 (start/stop keys from the times)"
show "$KILN" scan useractions --start "$u42$(be_key 8 $((MAX - T2 + 1)))" --stop "$u42$(be_key 8 $((MAX - T1 + 1)))" --limit 4

echo
echo "-- tslog: web-01.iad's http.latency_ms from 00:10 to 00:20 ([host]\\0[event]\\0[ts])"
h="web-01.iad\\x00http.latency_ms\\x00"
show "$KILN" --server "127.0.0.1:$PORT" scan tslog_byhost --start "$h$(be_key 8 $((BASE + 10 * MIN)))" \
    --stop "$h$(be_key 8 $((BASE + 20 * MIN)))" --limit 6
echo
echo "-- tslog: every host's events in 10 seconds: one scan per salt bucket ([bucket][ts]...)"
allhosts() {
    local b x n=0 c
    for b in 0 1 2 3 4 5 6 7; do
        x=$(printf '%%%02X' "$b")
        c=$(curl -sf "$U/tslog_bytime/*?startrow=$x$(pct "$(be_key 8 $((BASE + 20 * MIN)))")&endrow=$x$(pct "$(be_key 8 $((BASE + 20 * MIN + 10000)))")" |
            grep -o '"key"' | wc -l)
        printf 'bucket %d: %d events\n' "$b" "$c"
        n=$((n + c))
    done
    echo "all hosts: $n events in [2024-03-01 00:20:00, 00:20:10)"
}
show allhosts
echo
echo "-- tslog: the statistics of minute 00:20 ([minute][host]\\0[event]: count, max, min, sum)"
show get_cells "$U/tslog_stats/*?prefix=$(pct "$(be_key 8 $((BASE + 20 * MIN)))")&limit=2"

echo
echo "-- orders: customer 7 with all their orders in one Get (c: attributes, o: <order><line>)"
show "$KILN" get orders "$(be_key 4 7)"
show curl -sf -o /dev/null -w 'HTTP %{http_code}, %{size_download} bytes in %{time_total} s\n' "$U/orders/$(pct "$(be_key 4 7)")"
if [ -n "$RPORT" ]; then
    echo
    echo "-- orders over the Redis protocol: GET orders/<customer 7> returns c:name"
    redis_get() { printf "orders/$1" | redis-cli -p "$RPORT" -x GET; }
    show redis_get '\x00\x00\x00\x07'
fi

echo
echo "-- follows: whom user 1 follows, 5 a page (<user>follows<other>)"
show get_cells "$U/follows/*?prefix=$(pct "$(be_key 4 1)follows")&limit=5"
echo
echo "-- follows: how many follow user 1 (<user>followedby<other>)"
show "$KILN" count follows --prefix "$(be_key 4 1)followedby"

echo
echo "-- reviews: book 3's reviews, one prefix scan ('b'<book><user>)"
show get_cells "$U/reviews/*?prefix=$(pct "b$(be_key 4 3)")&limit=3"
echo
echo "-- reviews: user 5's reviews ('u'<user><book>)"
show "$KILN" --server "127.0.0.1:$PORT" scan reviews --prefix "u$(be_key 4 5)" --limit 2
tq=$(ms_since "$tq")
STEPS+=("$(printf '%-58s %s' "queries (printing included)" "$(secs "$tq")")")

# ---------------------------------------------------------------- 7. stop
bold "7. Stop the server"
t=$(date +%s%N)
kill -TERM "$SPID"
wait "$SPID"
SPID=
t=$(ms_since "$t")
STEPS+=("$(printf '%-58s %s' "kiln-server drain and stop" "$(secs "$t")")")
echo "  stopped after $(secs "$t")"

bold "Timings"
printf '  %s\n' "${STEPS[@]}"
printf '  %-58s %s\n' "total" "$(secs "$(ms_since "$T0")")"

rel=$DATA
case $DATA in "$ROOT"/*) rel=${DATA#"$ROOT"/} ;; esac
cat <<EOF

The data directory $rel is yours to explore:
  $BUILD/bin/kiln --data $rel list
  $BUILD/bin/kiln --data $rel scan useractions --prefix '\\x00\\x00\\x00*' --limit 5
  $BUILD/bin/kiln --data $rel get orders '\\x00\\x00\\x00\\x07'
  $BUILD/bin/kiln --data $rel scan follows --prefix '\\x00\\x00\\x00\\x01followedby' --limit 10
  $BUILD/bin/kiln-server --data $rel      # then: curl http://127.0.0.1:8080/
Key designs and queries: docs/views.md.
EOF
