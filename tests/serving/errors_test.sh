#!/usr/bin/env bash
# errors_test.sh -- what an error tells a client: JSON a strict decoder
# (python3's, with UTF-8 checked) accepts even when the request held bytes
# that are not UTF-8; a corrupt block in one region's file answers that
# request with a 500 naming the file relative to the data directory and
# the offset, never the server's absolute paths, while the other region
# is still served (over HTTP and the Redis protocol). Prints "N passed,
# N failed".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
KILN=$BUILD/bin/kiln
SERVER=$BUILD/bin/kiln-server
T=$(mktemp -d)
SPID=
stop_server() {
    if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then
        kill -TERM "$SPID" 2>/dev/null
        wait "$SPID" 2>/dev/null
    fi
    SPID=
}
trap 'stop_server; rm -rf "$T"' EXIT
export KILN_DATA=$T/data

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
finish() { echo "errors_test: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

# Two regions, one HFile each, so that one can be corrupted alone.
"$KILN" create t --family f --split m > /dev/null || { bad "kiln create"; finish; }
mkdir -p "$T/job/f"
awk 'BEGIN { for (i = 0; i < 400; i++) printf "a%04d\tf:q\t5\tPut\tleft%d\n", i, i }' |
    "$KILN" hfile write "$T/job/f/left" --family f > /dev/null
awk 'BEGIN { for (i = 0; i < 400; i++) printf "z%04d\tf:q\t5\tPut\tright%d\n", i, i }' |
    "$KILN" hfile write "$T/job/f/right" --family f > /dev/null
touch "$T/job/_SUCCESS"
"$KILN" load t "$T/job" > /dev/null || { bad "kiln load"; finish; }

start_server() {
    : > "$T/server.log"
    "$SERVER" --data "$KILN_DATA" --listen 127.0.0.1:0 --resp-listen 127.0.0.1:0 --threads 1 \
        --cache-mb 16 --resp-column 't=f:q' > "$T/server.log" 2>&1 &
    SPID=$!
    for _ in $(seq 200); do
        grep -q 'Redis protocol on' "$T/server.log" && break
        sleep 0.05
    done
    HP=$(sed -nE 's/.*over HTTP on .* \(port ([0-9]+)\).*/\1/p' "$T/server.log" | head -1)
    RP=$(sed -nE 's/.*Redis protocol on .* \(port ([0-9]+)\).*/\1/p' "$T/server.log" | head -1)
    U=http://127.0.0.1:$HP
    [ -n "$HP" ] && [ -n "$RP" ]
}
strict_json() { # file: parses as JSON from strict UTF-8
    python3 -c 'import json,sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' "$1"
}

start_server || { bad "server did not start"; finish; }

# ---------------------------------------------------------------- not UTF-8
code=$(curl -s -o "$T/e1" -w '%{http_code}' "$U/t/a0001/%FF%FE%C0%AF:q")
check "a column of bytes that are not UTF-8: a 4xx ($code)" test "${code:0:1}" = 4
check "its error is JSON that a strict UTF-8 decoder accepts" strict_json "$T/e1"
code=$(curl -s -o "$T/e2" -w '%{http_code}' "$U/no%E9such/r")
check "a table name of Latin-1 bytes: a 4xx ($code) with strict JSON" \
    bash -c "[ '${code:0:1}' = 4 ] && python3 -c 'import json,sys; json.loads(open(sys.argv[1], \"rb\").read().decode(\"utf-8\", \"strict\"))' '$T/e2'"

# ---------------------------------------------------------------- a corrupt block
stop_server
right=$(ls "$KILN_DATA"/default/t/files/* | while read -r f; do
    "$KILN" hfile dump "$f" 2>/dev/null | head -1 | grep -q '^z' && echo "$f"; done | head -1)
if [ -z "$right" ]; then
    bad "the right region's file was not found"
    finish
fi
# Flip bytes inside the first data block (after its 33-byte header).
python3 - "$right" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
for i in range(100, 140):
    b[i] ^= 0x5A
open(p, "wb").write(bytes(b))
EOF
start_server || { bad "server did not start after the corruption"; finish; }
code=$(curl -s -o "$T/e3" -w '%{http_code}' "$U/t/z0001")
check "a row in the corrupt block: 500 ($code)" test "$code" = 500
check "the 500 is strict JSON with code corruption" \
    bash -c "python3 -c 'import json,sys; j=json.loads(open(sys.argv[1],\"rb\").read().decode()); sys.exit(j.get(\"code\") != \"corruption\")' '$T/e3'"
rel=${right#"$KILN_DATA"/}
check "the 500 names the file relative to the data directory ($rel)" grep -qF "$rel" "$T/e3"
check "the 500 carries no absolute path of the server" bash -c "! grep -qF '$T' '$T/e3'"
check "the server's log has the full path" grep -qF "$right" "$T/server.log"
check "the other region is still served over HTTP" \
    bash -c "curl -sf '$U/t/a0001' | grep -q Row"
check "the other region is still served over the Redis protocol" \
    test "$(redis-cli -p "$RP" GET a0002)" = left2
check "the corrupt region answers the Redis protocol with an error, not a crash" \
    bash -c "redis-cli -p '$RP' GET z0002 | grep -qi err && kill -0 $SPID"
finish
