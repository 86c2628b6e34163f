#!/usr/bin/env bash
# errors_test.sh -- what an error tells a client: JSON a strict decoder
# (python3's, with UTF-8 checked) accepts even when the request held bytes
# that are not UTF-8; a corrupt block in the middle of one region's file
# answers a request for its rows with a 500 (and a Redis-protocol error)
# naming the file relative to the data directory and the block's offset,
# never the server's absolute paths, counts it in /metrics
# (kiln_read_corruption_total by protocol and table, and RESP's
# server_error outcome), while the file's other blocks and the other region
# are still served. Prints "N passed, N failed".
set -u
NAME=errors_test
# shellcheck source=tests/serving/lib.sh
source "$(dirname "$0")/lib.sh"

"$KILN" create t --family f --split m > /dev/null || { bad "kiln create"; finish; }
mkdir -p "$T/job/f"
awk 'BEGIN { for (i = 0; i < 400; i++) printf "a%04d\tf:q\t5\tPut\tleft%d\n", i, i }' |
    "$KILN" hfile write "$T/job/f/left" --family f > /dev/null
awk 'BEGIN { for (i = 0; i < 400; i++) printf "z%04d\tf:q\t5\tPut\tright%d\n", i, i }' |
    "$KILN" hfile write "$T/job/f/right" --family f --block-size 1024 > /dev/null
touch "$T/job/_SUCCESS"
"$KILN" load t "$T/job" > /dev/null || { bad "kiln load"; finish; }

serve() { start_server --resp-listen 127.0.0.1:0 --threads 1 --cache-mb 16 --resp-column 't=f:q'; }
strict_json() { # file: parses as JSON from strict UTF-8
    python3 -c 'import json,sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' "$1"
}

serve || { bad "server did not start"; finish; }
# corruption_count PROTO: kiln_read_corruption_total of table default:t
corruption_count() {
    curl -s "$U/metrics" | awk -v p="$1" '$1 == "kiln_read_corruption_total{proto=\"" p "\",table=\"default:t\"}" { n = $2 } END { print n + 0 }'
}
check "/metrics declares kiln_read_corruption_total" \
    bash -c "curl -s '$U/metrics' | grep -q '^# TYPE kiln_read_corruption_total counter'"
check "no corruption counted before any" test "$(corruption_count http)/$(corruption_count resp)" = 0/0

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
# The third data block of the file: its offset from `kiln hfile meta
# --blocks`, its first row read from its raw bytes (no compression, no
# encoding); bytes flipped in its middle, so its checksum fails and the
# blocks before and after it stay good.
off=$("$KILN" hfile meta "$right" --blocks | awk '$2 == "type=DATABLK*" { if (++n == 3) { sub("offset=", "", $1); print $1 } }')
badrow=$(python3 - "$right" "$off" <<'EOF'
import re, sys
p, off = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read())
m = re.search(rb"z\d{4}", bytes(b[off + 33:off + 1000]))
print(m.group(0).decode())
for i in range(off + 300, off + 340):
    b[i] ^= 0x5A
open(p, "wb").write(bytes(b))
EOF
)
if [ -z "$off" ] || [ -z "$badrow" ] || [ "$off" -eq 0 ]; then
    bad "no third data block in the right region's file (offset '$off', row '$badrow')"
    finish
fi
serve || { bad "server did not start after the corruption"; finish; }
code=$(curl -s -o "$T/e3" -w '%{http_code}' "$U/t/$badrow")
check "a row in the corrupt block ($badrow): 500 ($code)" test "$code" = 500
check "the 500 is strict JSON with code corruption" \
    bash -c "python3 -c 'import json,sys; j=json.loads(open(sys.argv[1],\"rb\").read().decode()); sys.exit(j.get(\"code\") != \"corruption\")' '$T/e3'"
rel=${right#"$KILN_DATA"/}
check "the 500 names the file relative to the data directory ($rel)" grep -qF "$rel" "$T/e3"
check "the 500 names the offset of the bad block ($off)" grep -qE "$rel: .*at offset $off\\b" "$T/e3"
check "the 500 carries no absolute path of the server" bash -c "! grep -qF '$T' '$T/e3'"
check "the server's log has the full path" grep -qF "$right" "$T/server.log"
check "an HTTP request that met corruption is counted (http: $(corruption_count http))" \
    test "$(corruption_count http)" = 1
check "a row in the file's first block is still served over HTTP" \
    bash -c "curl -sf '$U/t/z0001' | grep -q Row"
check "the other region is still served over HTTP" \
    bash -c "curl -sf '$U/t/a0001' | grep -q Row"
check "the other region is still served over the Redis protocol" \
    test "$(redis-cli -p "$RP" GET a0002)" = left2
redis-cli -p "$RP" GET "$badrow" > "$T/r1" 2>&1
check "the corrupt block answers the Redis protocol with an error, not a crash" \
    bash -c "grep -qi err '$T/r1' && kill -0 $SPID"
check "the Redis-protocol error names the file and the offset ($(head -c 200 "$T/r1"))" \
    bash -c "grep -qE '$rel: .*at offset $off\\b' '$T/r1' && ! grep -qF '$T' '$T/r1'"
redis-cli -p "$RP" MGET a0001 "$badrow" > /dev/null 2>&1
check "Redis-protocol commands that met corruption are counted (resp: $(corruption_count resp))" \
    test "$(corruption_count resp)" = 2
curl -s "$U/metrics" > "$T/metrics"
check "RESP's corruption counts as a server error, not a client's" \
    bash -c "grep -q '^kiln_resp_commands_total{command=\"get\",outcome=\"server_error\"} 1$' '$T/metrics' &&
             grep -q '^kiln_resp_commands_total{command=\"mget\",outcome=\"server_error\"} 1$' '$T/metrics' &&
             ! grep -q 'outcome=\"error\"' '$T/metrics'"
check "the HTTP 500 is counted under its route" \
    grep -q '^kiln_http_requests_total{route="row",code="500"} 1$' "$T/metrics"
finish
