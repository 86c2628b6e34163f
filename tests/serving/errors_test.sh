#!/usr/bin/env bash
# errors_test.sh -- what an error tells a client: JSON a strict decoder
# (python3's, with UTF-8 checked) accepts even when the request held bytes
# that are not UTF-8; a corrupt block in one region's file answers that
# request with a 500 naming the file relative to the data directory and
# the offset, never the server's absolute paths, while the other region
# is still served (over HTTP and the Redis protocol). Prints "N passed,
# N failed".
set -u
NAME=errors_test
# shellcheck source=tests/serving/lib.sh
source "$(dirname "$0")/lib.sh"

"$KILN" create t --family f --split m > /dev/null || { bad "kiln create"; finish; }
mkdir -p "$T/job/f"
awk 'BEGIN { for (i = 0; i < 400; i++) printf "a%04d\tf:q\t5\tPut\tleft%d\n", i, i }' |
    "$KILN" hfile write "$T/job/f/left" --family f > /dev/null
awk 'BEGIN { for (i = 0; i < 400; i++) printf "z%04d\tf:q\t5\tPut\tright%d\n", i, i }' |
    "$KILN" hfile write "$T/job/f/right" --family f > /dev/null
touch "$T/job/_SUCCESS"
"$KILN" load t "$T/job" > /dev/null || { bad "kiln load"; finish; }

serve() { start_server --resp-listen 127.0.0.1:0 --threads 1 --cache-mb 16 --resp-column 't=f:q'; }
strict_json() { # file: parses as JSON from strict UTF-8
    python3 -c 'import json,sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' "$1"
}

serve || { bad "server did not start"; finish; }

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
serve || { bad "server did not start after the corruption"; finish; }
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
