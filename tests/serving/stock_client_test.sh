#!/usr/bin/env bash
# stock_client_test.sh -- a stock HBase REST client library against
# kiln-server: node-hbase (the npm package `hbase`, pinned in
# tests/rest-client/package.json and package-lock.json, installed there by
# scripts/deps.sh) drives get, exists, scans with filters and multi-gets
# through tests/rest-client/stock_client.js, and every answer must equal
# embedded `kiln` on the same data directory. The data is made with the
# project's own tools (`kiln create`, `kiln hfile write`, `kiln load`).
# Node or the package missing is a failure, never a skip.
# Prints "N passed, N failed"; exits 1 on failure.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
KILN=$BUILD/bin/kiln
SERVER=$BUILD/bin/kiln-server
CLIENT_DIR=$ROOT/tests/rest-client
T=$(mktemp -d)
D=$T/data
SPID=
cleanup() {
    if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then
        kill -TERM "$SPID" 2>/dev/null
        wait "$SPID" 2>/dev/null
    fi
    rm -rf "$T"
}
trap cleanup EXIT
export KILN_DATA=$D

passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}
for b in "$KILN" "$SERVER"; do
    [ -x "$b" ] || { bad "$b not built"; finish; }
done

# ---------------------------------------------------------------- node and the library
if ! command -v node >/dev/null || [ ! -f "$CLIENT_DIR/node_modules/hbase/package.json" ]; then
    "$ROOT/scripts/deps.sh" >"$T/deps.log" 2>&1
fi
if ! command -v node >/dev/null; then
    bad "node is not installed and scripts/deps.sh could not install it: $(tail -3 "$T/deps.log")"
    finish
fi
if [ ! -f "$CLIENT_DIR/node_modules/hbase/package.json" ]; then
    bad "the hbase npm package is not installed in tests/rest-client and scripts/deps.sh could not install it: $(tail -3 "$T/deps.log")"
    finish
fi
want=$(sed -nE 's/.*"hbase": "([^"]+)".*/\1/p' "$CLIENT_DIR/package.json" | head -1)
have=$(sed -nE 's/^  "version": "([^"]+)".*/\1/p' "$CLIENT_DIR/node_modules/hbase/package.json" | head -1)
if [ "$want" = "$have" ]; then ok; else bad "hbase package $have installed, package.json pins $want (run scripts/deps.sh)"; fi
echo "node $(node --version), hbase $have"

# ---------------------------------------------------------------- a table
mkhfile() {
    "$KILN" hfile write "$1" --family "$2" >/dev/null || bad "hfile write $1"
}
"$KILN" create users --family f:versions=3 --family g --split m >/dev/null || bad "create users"
J=$T/job
mkdir -p "$J/f" "$J/g"
{
    printf 'alice\tf:city\t100\tPut\tParis\n'
    printf 'alice\tf:name\t100\tPut\tAlice\n'
    printf 'alice\tf:name\t90\tPut\tAl\n'
    printf 'bob\tf:name\t100\tPut\tBob\n'
    printf 'carol\tf:name\t100\tPut\tCarol\n'
    for i in $(seq 0 40); do printf 'r%04d\tf:q\t5\tPut\tv-%d\n' "$i" "$i"; done
    printf 'zed\tf:name\t100\tPut\tZed\n'
} | mkhfile "$J/f/part-0" f
{
    printf 'bob\tg:visits\t100\tPut\t7\n'
    printf 'zed\tg:visits\t100\tPut\t9\n'
} | mkhfile "$J/g/part-0" g
touch "$J/_SUCCESS"
"$KILN" load users "$J" >/dev/null && ok || bad "load users"

# ---------------------------------------------------------------- start
LOG=$T/server.log
"$SERVER" --data "$D" --listen 127.0.0.1:0 --threads 2 --cache-mb 16 >"$LOG" 2>&1 &
SPID=$!
HP=
for _ in $(seq 200); do
    HP=$(sed -nE 's/.*over HTTP on .* \(port ([0-9]+)\).*/\1/p' "$LOG" | head -1)
    [ -n "$HP" ] && break
    sleep 0.05
done
if [ -z "$HP" ]; then
    bad "kiln-server did not start: $(cat "$LOG")"
    finish
fi
ok

# ---------------------------------------------------------------- the library
node "$CLIENT_DIR/stock_client.js" 127.0.0.1 "$HP" "$KILN" "$D" >"$T/node.out" 2>&1
nrc=$?
grep -v -E '^[0-9]+ passed, [0-9]+ failed$' "$T/node.out"
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$T/node.out" | tail -1)
if [ -z "$line" ]; then
    bad "stock_client.js printed no count (exit $nrc)"
else
    passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
    failed=$((failed + $(echo "$line" | cut -d' ' -f3)))
    if [ "$nrc" -ne 0 ] && [ "$(echo "$line" | cut -d' ' -f3)" = 0 ]; then
        bad "stock_client.js exited $nrc"
    fi
fi
kill -0 "$SPID" 2>/dev/null && ok || bad "kiln-server died: $(tail -5 "$LOG")"
finish
