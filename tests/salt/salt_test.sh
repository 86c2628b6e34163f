#!/usr/bin/env bash
# salt_test.sh -- salted tables end to end: `kiln create --salt-buckets`,
# importtsv of sequential keys into a salted table (the same HFiles at -np 1
# and -np 3; every stored row carries its bucket byte; the regions get even
# shares instead of one hot region), `kiln load`, then reads against a model
# computed here from the input lines (last line wins): scans in key order with
# limits, bounds, prefixes and reversed, get, count -- embedded, through the
# HTTP API (paging with next_startrow forward and reversed, decoded by an
# independent client), and `kiln --server` with the same output as embedded.
# Output of a job that did not salt is refused. Prints "N passed, N failed";
# exits 1 on failure.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
export BUILD                       # run_job.sh takes it relative to the tree
case $BUILD in /*) B=$BUILD ;; *) B=$ROOT/$BUILD ;; esac
KILN=$B/bin/kiln
SERVER=$B/bin/kiln-server
RUNJOB=$ROOT/run_job.sh
export LSAN_OPTIONS="fast_unwind_on_malloc=0:suppressions=$ROOT/tests/mapreduce/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export OMPI_MCA_mca_component_disable_dlclose=1
T=$(mktemp -d "${TMPDIR:-/tmp}/kiln-salt-test.XXXXXX")
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
for b in "$KILN" "$SERVER" "$B/bin/kiln-mr"; do
    [ -x "$b" ] || { bad "$b not built"; finish; }
done
for tool in python3 curl; do
    command -v $tool >/dev/null || { bad "$tool is missing (apt-get install $tool)"; finish; }
done

expect_same() {
    if cmp -s "$2" "$3"; then ok; else bad "$1: $2 and $3 differ: $(diff "$2" "$3" | head -5)"; fi
}

# ---------------------------------------------------------------- create
expect_rc "salt 0" 64 "$KILN" create bad --family d --salt-buckets 0
expect_rc "salt 257" 64 "$KILN" create bad --family d --salt-buckets 257
expect_rc "salt not a number" 64 "$KILN" create bad --family d --salt-buckets x
expect_rc "create salted" 0 "$KILN" create seq --family d --salt-buckets 8
expect_grep "create output" "$T/out" '^Created table default:seq \(1 family, 8 regions, 8 salt buckets\)'
expect_rc "describe" 0 "$KILN" describe seq
expect_grep "describe salt" "$T/out" 'SALT_BUCKETS => 8'
expect_rc "regions before load" 0 "$KILN" regions seq
expect_grep "bucket boundaries" "$T/out" $'^7\t\\\\x07\t\t0\t0\t0$'

# ---------------------------------------------------------------- input and model
# 20000 sequential keys, 1500 of them given again later with a new value.
awk 'BEGIN {
    for (i = 0; i < 20000; i++) printf "k%06d\tv%d\n", i, i
    srand(7)
    for (j = 0; j < 1500; j++) { i = int(rand() * 20000); printf "k%06d\tw%d\n", i, j }
}' >"$T/in.tsv"
# the model: one "ROW VALUE" line per row, in key order
python3 - "$T/in.tsv" >"$T/model" <<'EOF'
import sys
rows = {}
for line in open(sys.argv[1], encoding="ascii"):
    k, v = line.rstrip("\n").split("\t")
    rows[k] = v
for k in sorted(rows):
    print(k, rows[k])
EOF
NROWS=$(wc -l <"$T/model")

job() { # np output [extra args]
    local np=$1 out=$2
    shift 2
    "$RUNJOB" -n "$np" importtsv -D importtsv.columns=HBASE_ROW_KEY,d:v -D importtsv.timestamp=1000 \
        -D kiln.progress=false --table seq --data "$D" --input "$T/in.tsv" --output "$out" "$@" \
        >"$T/job.log" 2>&1
}
job 1 "$T/out1" && ok || bad "importtsv -np 1: $(tail -5 "$T/job.log")"
job 3 "$T/out3" && ok || bad "importtsv -np 3: $(tail -5 "$T/job.log")"
# the same HFiles whatever the rank count
for f in "$T"/out1/d/*; do
    "$KILN" hfile dump "$f" >"$T/d1" 2>&1
    "$KILN" hfile dump "$T/out3/d/$(basename "$f")" >"$T/d3" 2>&1
    cmp -s "$T/d1" "$T/d3" || { bad "-np 1 and -np 3 differ in $(basename "$f")"; break; }
done
ok
expect_rc "load" 0 "$KILN" load seq "$T/out3"
expect_grep "load output" "$T/out" 'Loaded .* as version 1'

# stored rows carry their bucket byte: one bucket per store file, first byte < 8
for f in "$D"/default/seq/files/*; do
    "$KILN" hfile dump "$f" | cut -f1 | cut -c1-4 | sort -u
done >"$T/firstbytes"
expect_grep "rows start with a bucket byte" "$T/firstbytes" '^\\x0[0-7]$'
if grep -qvE '^\\x0[0-7]$' "$T/firstbytes"; then bad "a stored row without a bucket byte"; else ok; fi
if [ "$(wc -l <"$T/firstbytes")" -eq 8 ]; then ok; else bad "expected 8 buckets: $(cat "$T/firstbytes")"; fi
# even shares: every region within 20% of the mean (a plain table would put
# every sequential key into one region)
"$KILN" regions seq | awk -F'\t' 'NR > 2 && $1 ~ /^[0-9]+$/ { n++; b[n] = $5; s += $5 }
    END { m = s / n; for (i = 1; i <= n; i++) if (b[i] < 0.8 * m || b[i] > 1.2 * m) { print "uneven", i - 1, b[i], m; exit 1 } }' \
    >"$T/even" && ok || bad "regions uneven: $(cat "$T/even")"

# ---------------------------------------------------------------- embedded reads
# scan text -> "ROW VALUE" lines
rows_of() { awk '/^ / { v = $NF; sub(/^value=/, "", v); print $1, v }'; }
check_scan() { # name, model lines (file), scan args...
    local name=$1 want=$2
    shift 2
    "$KILN" scan seq "$@" >"$T/scan" 2>"$T/err" || { bad "$name: exit $?: $(head -c 300 "$T/err")"; return; }
    rows_of <"$T/scan" >"$T/got"
    if cmp -s "$T/got" "$want"; then ok; else bad "$name: rows differ from the model: $(diff "$T/got" "$want" | head -4)"; fi
    local n
    n=$(wc -l <"$want")
    grep -qx "$n row(s)" "$T/scan" && ok || bad "$name: no '$n row(s)' line"
}
check_scan "full scan in key order" "$T/model"
head -37 "$T/model" >"$T/m"
check_scan "limit 37" "$T/m" --limit 37
tac "$T/model" | head -50 >"$T/m"
check_scan "reversed limit 50" "$T/m" --reversed --limit 50
awk '$1 >= "k001000" && $1 < "k001100"' "$T/model" >"$T/m"
check_scan "start/stop" "$T/m" --start k001000 --stop k001100
awk 'index($1, "k0123") == 1' "$T/model" >"$T/m"
check_scan "prefix" "$T/m" --prefix k0123
awk '$1 <= "k005000" && $1 > "k004900"' "$T/model" | tac >"$T/m"
check_scan "reversed start/stop" "$T/m" --reversed --start k005000 --stop k004900
awk '$1 >= "k019990"' "$T/model" | head -5 >"$T/m"
check_scan "start near the end, limit" "$T/m" --start k019990 --limit 5
for k in k000000 k000042 k012345 k019999; do
    want=$(awk -v k="$k" '$1 == k { print $2 }' "$T/model")
    run "$KILN" get seq "$k"
    if grep -q "value=$want\$" "$T/out"; then ok; else bad "get $k: want $want, got $(cat "$T/out")"; fi
done
expect_rc "get absent row" 0 "$KILN" get seq k999999
expect_grep "absent row" "$T/out" '^0 row\(s\)'
expect_rc "count" 0 "$KILN" count seq
expect_grep "count value" "$T/out" "^$NROWS row\\(s\\)"
expect_rc "count prefix" 0 "$KILN" count seq --prefix k00
expect_grep "count prefix value" "$T/out" "^$(grep -c '^k00' "$T/model") row\\(s\\)"

# ---------------------------------------------------------------- HTTP
LOG=$T/server.log
"$SERVER" --data "$D" --listen 127.0.0.1:0 --threads 2 --cache-mb 32 --scan-page-rows 97 \
    >"$LOG" 2>&1 &
SPID=$!
for _ in $(seq 100); do
    grep -q 'over HTTP on' "$LOG" && break
    sleep 0.05
done
HP=$(sed -nE 's/.*over HTTP on .* \(port ([0-9]+)\).*/\1/p' "$LOG" | head -1)
[ -n "$HP" ] || { bad "server did not start: $(cat "$LOG")"; finish; }
ok
# An independent HTTP client: follows next_startrow page by page and prints
# "ROW VALUE" lines.
cat >"$T/pager.py" <<'EOF'
import base64, json, sys, urllib.parse, urllib.request
port, reversed_, limit = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
start, pages, out = None, 0, []
while True:
    q = {"limit": str(limit), "paged": "true"}
    if reversed_:
        q["reversed"] = "true"
    if start is not None:
        q["startrow"] = start
    url = "http://127.0.0.1:%s/seq/*?%s" % (port, urllib.parse.urlencode(q, quote_via=urllib.parse.quote))
    d = json.load(urllib.request.urlopen(url))
    pages += 1
    for r in d["Row"]:
        cells = r["Cell"]
        assert len(cells) == 1, cells
        out.append("%s %s" % (base64.b64decode(r["key"]).decode(), base64.b64decode(cells[0]["$"]).decode()))
    if "next_startrow" not in d:
        break
    start = base64.b64decode(d["next_startrow"]).decode("latin-1")
sys.stderr.write("%d pages\n" % pages)
print("\n".join(out))
EOF
python3 "$T/pager.py" "$HP" 0 500 >"$T/got" 2>"$T/pages" && ok || bad "http pager: $(tail -3 "$T/pages")"
expect_same "http paging forward (97-row pages)" "$T/got" "$T/model"
expect_grep "forward paged" "$T/pages" '^20[0-9] pages$'
python3 "$T/pager.py" "$HP" 1 40 >"$T/got" 2>"$T/pages" && ok || bad "http pager reversed: $(tail -3 "$T/pages")"
tac "$T/model" >"$T/m"
expect_same "http paging reversed (40-row pages)" "$T/got" "$T/m"
curl -s "http://127.0.0.1:$HP/seq/k012345" >"$T/row.json"
want=$(awk '$1 == "k012345" { print $2 }' "$T/model")
python3 -c 'import json,sys,base64; d=json.load(open(sys.argv[1])); print(base64.b64decode(d["Row"][0]["Cell"][0]["$"]).decode())' \
    "$T/row.json" >"$T/v" 2>&1
if [ "$(cat "$T/v")" = "$want" ]; then ok; else bad "http get: $(cat "$T/v") want $want"; fi
for args in "--limit 300" "--reversed --limit 123" "--start k004000 --stop k004500" "--prefix k0199" \
            "--reversed --start k000300 --stop k000100"; do
    # shellcheck disable=SC2086
    "$KILN" scan seq $args >"$T/emb" 2>&1
    # shellcheck disable=SC2086
    "$KILN" --server "127.0.0.1:$HP" scan seq $args >"$T/rem" 2>&1
    expect_same "kiln --server scan $args" "$T/rem" "$T/emb"
done
"$KILN" count seq >"$T/emb" 2>&1
"$KILN" --server "127.0.0.1:$HP" count seq >"$T/rem" 2>&1
expect_same "kiln --server count" "$T/rem" "$T/emb"
"$KILN" get seq k000777 >"$T/emb" 2>&1
"$KILN" --server "127.0.0.1:$HP" get seq k000777 >"$T/rem" 2>&1
expect_same "kiln --server get" "$T/rem" "$T/emb"
kill -TERM "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null
SPID=

# ---------------------------------------------------------------- refusals
# output of a job that did not salt (another table name, no salt)
"$RUNJOB" -n 1 importtsv -D importtsv.columns=HBASE_ROW_KEY,d:v -D kiln.progress=false \
    --table plainseq --data "$D" --input "$T/in.tsv" --output "$T/plain" >"$T/job.log" 2>&1 &&
    ok || bad "importtsv plain: $(tail -5 "$T/job.log")"
expect_rc "unsalted output refused" 64 "$KILN" load seq "$T/plain"
expect_grep "refusal names the bucket byte" "$T/err" 'has no valid bucket byte, but table default:seq is salted'
expect_rc "still version 1" 0 "$KILN" describe seq
expect_grep "version unchanged" "$T/out" 'CURRENT VERSION => 1'

finish
