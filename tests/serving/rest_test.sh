#!/usr/bin/env bash
# rest_test.sh -- kiln-server's HBase REST routes, representations and
# scanners checked by rest_test.py with stock decoders (json, xml.etree,
# protobuf classes protoc generates from hbase_rest.proto). scripts/deps.sh
# installs python3-protobuf and protobuf-compiler. Prints "N passed, N failed".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
KILN=$BUILD/bin/kiln
T=$(mktemp -d)
SPID=
trap '[ -n "$SPID" ] && { kill -KILL "$SPID"; wait "$SPID"; } 2>/dev/null; rm -rf "$T"' EXIT
export KILN_DATA=$T/data
if ! command -v protoc >/dev/null || ! python3 -c 'import google.protobuf' 2>/dev/null; then
    "$ROOT/scripts/deps.sh" >/dev/null 2>&1
fi
command -v protoc >/dev/null || { echo "FAIL: protoc missing (scripts/deps.sh installs it)"; echo "0 passed, 1 failed"; exit 1; }
protoc -I"$ROOT/tests/serving" --python_out="$T" "$ROOT/tests/serving/hbase_rest.proto" ||
    { echo "0 passed, 1 failed"; exit 1; }
"$KILN" create ns1:users --family info:versions=3 --split g --split 'm\x00' >/dev/null
"$KILN" create plain --family f --split r0075 --split r0150 --split r0225 >/dev/null
mkdir -p "$T/j1/info" "$T/j2/f"
# rows named like Kiln's query parameters and routes (count, paged, ...) are rows
printf 'alice\tinfo:name\t100\tPut\tAlice\nalice\tinfo:name\t90\tPut\tAl\nbob\tinfo:name\t100\tPut\tBob\ncount\tinfo:name\t7\tPut\tc-row\nhealthz\tinfo:name\t7\tPut\th-row\nindex\tinfo:name\t7\tPut\ti-row\npaged\tinfo:name\t7\tPut\tp-row\n' |
    "$KILN" hfile write "$T/j1/info/p" --family info >/dev/null
for i in $(seq 0 299); do printf 'r%04d\tf:q\t5\tPut\tone-%d\n' "$i" "$i"; done |
    "$KILN" hfile write "$T/j2/f/p" --family f >/dev/null
touch "$T/j1/_SUCCESS" "$T/j2/_SUCCESS"
"$KILN" load ns1:users "$T/j1" >/dev/null && "$KILN" load plain "$T/j2" >/dev/null ||
    { echo "0 passed, 1 failed"; exit 1; }
"$BUILD/bin/kiln-server" --data "$T/data" --listen 127.0.0.1:0 --threads 2 --cache-mb 32 --read-only \
    >"$T/log" 2>&1 &
SPID=$!
for _ in $(seq 100); do grep -q 'over HTTP on' "$T/log" && break; sleep 0.05; done
HP=$(sed -nE 's/.*over HTTP on .* \(port ([0-9]+)\).*/\1/p' "$T/log" | head -1)
[ -n "$HP" ] || { echo "FAIL: server did not start: $(cat "$T/log")"; echo "0 passed, 1 failed"; exit 1; }
PY=python3; python3 -c "import google.protobuf" 2>/dev/null || PY=/usr/bin/python3
"$PY" "$ROOT/tests/serving/rest_test.py" "http://127.0.0.1:$HP" "$T"
