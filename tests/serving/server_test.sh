#!/usr/bin/env bash
# server_test.sh -- kiln-server as a program, end to end: --help, --version and
# usage errors; a data directory made with `kiln create`, `kiln hfile write` and
# `kiln load`; the HTTP API through curl; `kiln --server` against embedded mode
# (the same bytes on stdout, the same exit status, for get / scan / count /
# list / describe / regions, binary keys included); the Redis protocol through
# redis-cli; a load and a rollback by another process served within a second;
# the status page in headless Chromium (installed through scripts/deps.sh
# --browser when missing; never skipped); and SIGTERM draining to exit 0.
# Prints "N passed, N failed"; exits 1 on failure.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
KILN=$BUILD/bin/kiln
SERVER=$BUILD/bin/kiln-server
T=$(mktemp -d)
D=$T/data
SPID=
cleanup() {
    if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then
        kill -KILL "$SPID" 2>/dev/null
    fi
    rm -rf "$T"
}
trap cleanup EXIT
export KILN_DATA=$D

. "$(dirname "${BASH_SOURCE[0]}")/../support/checks.sh"
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}
for b in "$KILN" "$SERVER"; do
    if [ ! -x "$b" ]; then
        bad "$b not built"
        finish
    fi
done
for tool in curl redis-cli; do
    if ! command -v $tool >/dev/null; then
        "$ROOT/scripts/deps.sh" >/dev/null 2>&1
        command -v $tool >/dev/null || { bad "$tool is missing (scripts/deps.sh installs it)"; finish; }
    fi
done

# ---------------------------------------------------------------- the program
expect_rc "--help" 0 "$SERVER" --help
expect_grep "--help usage" "$T/out" '^Usage: kiln-server \[--data DIR\] \[--listen ADDR\] \[--threads N\] \[--cache-mb N\]'
expect_grep "--help resp-column" "$T/out" 'resp-column'
expect_grep "--help busy-poll-us" "$T/out" 'busy-poll-us N'
expect_grep "--help park-below" "$T/out" 'park-below PCT'
expect_grep "--help unpark-above" "$T/out" 'unpark-above PCT'
expect_rc "--version" 0 "$SERVER" --version
expect_grep "--version text" "$T/out" '^kiln-server [0-9]+\.[0-9]+\.[0-9]+$'
expect_rc "unknown option" 64 "$SERVER" --nope
expect_rc "bad threads" 64 "$SERVER" --threads 0
expect_rc "bad busy poll" 64 "$SERVER" --busy-poll-us 100001
expect_rc "busy poll not a number" 64 "$SERVER" --busy-poll-us 5x
expect_rc "bad park-below" 64 "$SERVER" --park-below 1001
expect_rc "bad unpark-above" 64 "$SERVER" --unpark-above 101
expect_rc "park-below not a number" 64 "$SERVER" --park-below x
expect_rc "bad address" 64 "$SERVER" --data "$D" --listen nonsense
expect_rc "bad resp column" 64 "$SERVER" --data "$D" --listen 127.0.0.1:0 --resp-column nocolon

# ---------------------------------------------------------------- a table
mkhfile() {
    "$KILN" hfile write "$1" --family "$2" >/dev/null || bad "hfile write $1"
}
"$KILN" create ns1:users --family info:versions=3 --family stats --split g --split 'm\x00' >/dev/null ||
    bad "create ns1:users"
"$KILN" create plain --family f >/dev/null || bad "create plain"
J1=$T/job1
mkdir -p "$J1/info" "$J1/stats"
{
    printf 'alice\tinfo:name\t100\tPut\tAlice\n'
    printf 'alice\tinfo:name\t90\tPut\tAl\n'
    printf 'a/b,c:d\tinfo:name\t100\tPut\tslashes\n'
    printf 'bob\tinfo:name\t100\tPut\tBob\n'
    printf 'h\\x01\\xFF\tinfo:name\t100\tPut\tbin\\x00\\xFF\n'
    printf 'mallory\tinfo:name\t100\tPut\tM\n'
    printf 'sp ace\tinfo:name\t100\tPut\tspace\n'
    printf 'zed\tinfo:name\t100\tPut\tZed\n'
} | mkhfile "$J1/info/part-r-00000" info
printf 'bob\tstats:visits\t100\tPut\t7\n' | mkhfile "$J1/stats/part-r-00000" stats
touch "$J1/_SUCCESS"
expect_rc "load v1" 0 "$KILN" load ns1:users "$J1"
J2=$T/job2
mkdir -p "$J2/f"
for i in $(seq 0 299); do printf 'r%04d\tf:q\t5\tPut\tone-%d\n' "$i" "$i"; done | mkhfile "$J2/f/p" f
touch "$J2/_SUCCESS"
expect_rc "load plain v1" 0 "$KILN" load plain "$J2"

# ---------------------------------------------------------------- start
LOG=$T/server.log
"$SERVER" --data "$D" --listen 127.0.0.1:0 --resp-listen 127.0.0.1:0 --threads 2 \
    --cache-mb 32 --scan-page-rows 4 --resp-column 'plain=f:q' --read-only >"$LOG" 2>&1 &
SPID=$!
for _ in $(seq 100); do
    grep -q 'Redis protocol on' "$LOG" && break
    sleep 0.05
done
HP=$(sed -nE 's/.*over HTTP on .* \(port ([0-9]+)\).*/\1/p' "$LOG" | head -1)
RP=$(sed -nE 's/.*Redis protocol on .* \(port ([0-9]+)\).*/\1/p' "$LOG" | head -1)
if [ -z "$HP" ] || [ -z "$RP" ]; then
    bad "server did not start: $(cat "$LOG")"
    finish
fi
ok
U=http://127.0.0.1:$HP
expect_rc "second server on the same port" 69 "$SERVER" --data "$D" --listen "127.0.0.1:$HP"
expect_grep "address in use message" "$T/err" 'Address already in use'

# ---------------------------------------------------------------- HTTP through curl
expect_rc "curl tables" 0 curl -sf "$U/"
expect_eq "tables" "$(cat "$T/out")" '{"table":[{"name":"plain"},{"name":"ns1:users"}]}'
expect_rc "curl row" 0 curl -sf "$U/ns1:users/a%2Fb%2Cc%3Ad"
expect_eq "row json" "$(cat "$T/out")" \
    '{"Row":[{"key":"YS9iLGM6ZA==","Cell":[{"column":"aW5mbzpuYW1l","timestamp":100,"$":"c2xhc2hlcw=="}]}]}'
expect_rc "curl raw binary value" 0 curl -sf -H 'Accept: application/octet-stream' "$U/ns1:users/h%01%FF/info:name"
expect_eq "raw bytes" "$(od -An -tx1 "$T/out" | tr -d ' \n')" "62696e00ff"
run curl -s -o /dev/null -w '%{http_code}' "$U/ns1:users/nobody"
expect_eq "absent row 404" "$(cat "$T/out")" 404
run curl -s -o /dev/null -w '%{http_code}' "$U/nope/x"
expect_eq "absent table 404" "$(cat "$T/out")" 404
run curl -s -o /dev/null -w '%{http_code}' -X POST "$U/plain/r0001"
expect_eq "POST of a cell 403 (read-only gateway)" "$(cat "$T/out")" 403
run curl -s -D "$T/hdr" "$U/plain/*?paged=true&limit=2"
expect_grep "scan next_startrow" "$T/out" '"next_startrow":"cjAwMDI="'
expect_grep "version header" "$T/hdr" '^X-Kiln-Version: 1'
expect_rc "curl schema" 0 curl -sf "$U/ns1:users/schema"
expect_grep "schema families" "$T/out" '"ColumnSchema":\[\{"name":"info","VERSIONS":"3"'
expect_rc "curl metrics" 0 curl -sf "$U/metrics"
expect_grep "metrics view version" "$T/out" '^kiln_view_version\{table="ns1:users"\} 1$'
expect_rc "curl healthz" 0 curl -sf "$U/healthz"

# ---------------------------------------------------------------- kiln --server == embedded
S=127.0.0.1:$HP
same() {
    local name=$1
    shift
    "$KILN" "$@" >"$T/emb.out" 2>"$T/emb.err"
    local erc=$?
    "$KILN" --server "$S" "$@" >"$T/srv.out" 2>"$T/srv.err"
    local src=$?
    if [ "$erc" = "$src" ] && cmp -s "$T/emb.out" "$T/srv.out"; then
        ok
    else
        bad "--server $name: exit $src vs $erc; $(diff "$T/emb.out" "$T/srv.out" | head -5) $(head -c 200 "$T/srv.err")"
    fi
}
same list list
same describe describe ns1:users
same "describe plain" describe plain
# regions: the same but for SPEED_FILES, which the REST regions answer does
# not carry (kiln prints '-' there through a server)
"$KILN" regions ns1:users | awk -F'\t' -v OFS='\t' '{NF--; print}' > "$T/emb.out" 2>&1
"$KILN" --server "$S" regions ns1:users | awk -F'\t' -v OFS='\t' '{NF--; print}' > "$T/srv.out" 2>&1
if cmp -s "$T/emb.out" "$T/srv.out" && [ -s "$T/emb.out" ]; then ok; else
    bad "--server regions: $(diff "$T/emb.out" "$T/srv.out" | head -5)"; fi
same get get ns1:users alice
same "get versions" get ns1:users alice --versions 3
same "get column json" get ns1:users alice info:name --json
same "get binary key" get ns1:users 'h\x01\xFF'
same "get reserved bytes" get ns1:users 'a/b,c:d'
same "get space" get ns1:users 'sp ace'
same "get absent" get ns1:users nobody
same "get time range" get ns1:users alice --versions 3 --time-range 95,101
same "get family" get ns1:users bob stats
same scan scan ns1:users
same "scan json" scan ns1:users --json
same "scan reversed" scan ns1:users --reversed
same "scan limit" scan ns1:users --limit 3
same "scan bounds" scan ns1:users --start b --stop 'm\x00'
same "scan prefix" scan ns1:users --prefix 'h\x01'
same "scan columns" scan ns1:users --columns stats
same "scan paged" scan plain --start r0100 --stop r0150
same "scan paged reversed limit" scan plain --reversed --limit 11
same count count plain
same "count range" count plain --start r0010 --stop r0200
same "missing table" get nope x
same "missing table describe" describe nope
same "bad family" get ns1:users alice nosuch
expect_rc "unreachable server" 74 "$KILN" --server 127.0.0.1:1 list

# ---------------------------------------------------------------- Redis protocol
R() { redis-cli -h 127.0.0.1 -p "$RP" "$@"; }
expect_eq "PING" "$(R ping)" PONG
expect_eq "GET db0 (default:plain, f:q)" "$(R get r0007)" one-7
expect_eq "GET table/row" "$(R get ns1:users/alice)" Alice
expect_eq "GET db1" "$(R -n 1 get bob)" Bob
expect_eq "GET absent" "$(R get nobody)" ""
expect_eq "MGET" "$(R mget r0001 r0002 nobody | tr '\n' ' ')" "one-1 one-2  "
expect_eq "EXISTS" "$(R exists r0001 nobody r0299)" 2
expect_eq "binary value" "$(R --raw get 'ns1:users/sp ace')" space
expect_grep "INFO keyspace" <(R info keyspace) 'db1:table=ns1:users,version=1'
expect_eq "SELECT out of range" "$(R select 7 2>&1)" "ERR DB index is out of range (one database per table)"
expect_eq "write refused" "$(R set a b 2>&1 | cut -c1-8)" READONLY
# one pipeline in one write, rows looked up ahead: the answers of the commands sent one by one
out=$(python3 "$ROOT/tests/serving/resp_pipeline.py" "$RP" 2>&1)
case $out in "ok "*) ok ;; *) bad "pipelined RESP commands: $out" ;; esac
echo "pipelined RESP commands: $out"

# ---------------------------------------------------------------- swaps by another process
J3=$T/job3
mkdir -p "$J3/f"
for i in $(seq 0 299); do printf 'r%04d\tf:q\t6\tPut\ttwo-%d\n' "$i" "$i"; done | mkhfile "$J3/f/p" f
touch "$J3/_SUCCESS"
served_within() {   # served_within VERSION: wait for the server to serve it
    local want=$1 start end v
    start=$(date +%s%N)
    for _ in $(seq 300); do
        v=$(curl -s -D - -o /dev/null "$U/plain/r0000" | sed -nE 's/^X-Kiln-Version: ([0-9]+).*/\1/p')
        [ "$v" = "$want" ] && break
        sleep 0.01
    done
    end=$(date +%s%N)
    echo $(((end - start) / 1000000))
}
expect_rc "load v2" 0 "$KILN" load plain "$J3"
ms=$(served_within 2)
if [ "$ms" -lt 1000 ]; then ok; else bad "version 2 served after $ms ms"; fi
expect_eq "new value over HTTP" "$(curl -s -H 'Accept: application/octet-stream' "$U/plain/r0005/f:q")" two-5
expect_eq "new value over RESP" "$(R get r0005)" two-5
expect_rc "rollback" 0 "$KILN" rollback plain
ms=$(served_within 1)
if [ "$ms" -lt 1000 ]; then ok; else bad "rollback served after $ms ms"; fi
expect_eq "old value again" "$(R get r0005)" one-5
echo "swaps served after ${ms} ms (last)"
# each version swapped out is closed by the poller, which says how long it took
for _ in $(seq 300); do
    grep -qE 'plain: version 2 closed in' "$T/server.log" && break
    sleep 0.01
done
expect_grep "version 1 closed, and its time logged" "$T/server.log" \
    'table (default:)?plain: version 1 closed in [0-9]+\.[0-9] ms'
expect_grep "version 2 closed after the rollback, and its time logged" "$T/server.log" \
    'table (default:)?plain: version 2 closed in [0-9]+\.[0-9] ms'

# ---------------------------------------------------------------- the status page in Chromium
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
    "$ROOT/scripts/deps.sh" --browser >"$T/deps.log" 2>&1
    CHROME=$(command -v chromium || true)
fi
if [ -z "$CHROME" ]; then
    bad "chromium is not installed and scripts/deps.sh --browser could not install it: $(tail -3 "$T/deps.log")"
else
    timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --user-data-dir="$T/chrome" \
        --dump-dom "$U/status" >"$T/dom.html" 2>"$T/chrome.err"
    expect_grep "status page: table default:plain" "$T/dom.html" 'Table default:plain'
    expect_grep "status page: table ns1:users" "$T/dom.html" 'Table ns1:users'
    expect_grep "status page: regions" "$T/dom.html" 'm\\x00'
    expect_grep "status page: view versions" "$T/dom.html" 'class="versions"'
    expect_grep "status page: request rates" "$T/dom.html" 'per second'
fi

# ---------------------------------------------------------------- SIGTERM drains
kill -TERM "$SPID"
wait "$SPID"
src=$?
SPID=
expect_eq "exit status after SIGTERM" "$src" 0
expect_grep "drain logged" "$LOG" 'SIGTERM: draining connections'
expect_grep "stop logged" "$LOG" 'info: stopped'
finish
