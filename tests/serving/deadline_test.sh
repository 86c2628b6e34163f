#!/usr/bin/env bash
# deadline_test.sh -- a scan that passes over rows without answering (a
# column no row has, a filter nothing passes) cannot hold a worker: the
# deadline (--request-deadline-ms) is a time slice. With one worker, a
# point Get sent beside such a scan is answered long before the scan
# could finish; an unpaged scan gives the worker back at each slice and
# goes on where it stopped, answering exactly what an unsliced scan
# answers (compared byte for byte, in JSON, XML and protobuf, for a
# filter passing nothing, one passing only the last row, a limit, a row
# glob and a range) and still refusing an answer over --scan-max-mb (413);
# a paged one answers what it has with next_startrow and its pages reach
# the end, and count=true resumes the same way. The full time of the scans
# is measured first, with a deadline too long to matter, as the reference.
# A stateful scanner's GET yields the worker at the deadline and resumes
# later, answering 204 only at the true end. Prints "N passed, N failed".
set -u
NAME=deadline_test
# shellcheck source=tests/serving/lib.sh
source "$(dirname "$0")/lib.sh"

# 2M rows; fewer under the slower sanitizers (ThreadSanitizer 400k,
# AddressSanitizer 1M), so that each scan still takes some tenths of a second.
ROWS=2000000
case $BUILD in */build-thread) ROWS=400000 ;; */build-address*) ROWS=1000000 ;; esac
LAST_ROW=$(printf 'r%07d' $((ROWS - 1)))
LAST_B64=$(printf 'v%d' $((ROWS - 1)) | base64)
GLOB=${LAST_ROW:0:3}                     # the last 100k rows
RANGE=$(printf 'r%07d,%s' $((ROWS / 4)) "$LAST_ROW")
"$KILN" create big --family f > /dev/null || { bad "kiln create"; finish; }
awk -v n=$ROWS 'BEGIN { for (i = 0; i < n; i++) printf "r%07d\tf:q\t5\tPut\tv%d\n", i, i }' |
    load_rows big f p || { bad "kiln hfile write and load"; finish; }
with_deadline() { start_server --threads 1 --cache-mb 256 --request-deadline-ms "$1"; }
# A ValueFilter no cell passes, URL-encoded.
NOPE='%7B%22type%22%3A%22ValueFilter%22%2C%22op%22%3A%22EQUAL%22%2C%22comparator%22%3A%7B%22type%22%3A%22BinaryComparator%22%2C%22value%22%3A%22bm9wZQ%3D%3D%22%7D%7D'
timed() { # URL: prints "status seconds"
    curl -s -o "$T/body" -w '%{http_code} %{time_total}\n' -m 60 "$1"
}

# A ValueFilter only the last row's cell passes, one passing the cells
# holding "99999" ("9999" in the smaller table: a few dozen rows), URL-encoded.
LAST="%7B%22type%22%3A%22ValueFilter%22%2C%22op%22%3A%22EQUAL%22%2C%22comparator%22%3A%7B%22type%22%3A%22BinaryComparator%22%2C%22value%22%3A%22${LAST_B64//=/%3D}%22%7D%7D"
SOME_SUB=99999
[ "$ROWS" -ge 1000000 ] || SOME_SUB=9999
SOME="%7B%22type%22%3A%22ValueFilter%22%2C%22op%22%3A%22EQUAL%22%2C%22comparator%22%3A%7B%22type%22%3A%22SubstringComparator%22%2C%22value%22%3A%22$SOME_SUB%22%7D%7D"
# The scans compared: NAME ACCEPT PATH (under $U/big/).
SCANS="nope json *?filter=$NOPE
nocol json *?column=f:nosuch
last json *?filter=$LAST
last_xml xml *?filter=$LAST
last_pb pb *?filter=$LAST
some json *?filter=$SOME
some_limit json *?filter=$SOME&limit=7
some_xml xml *?filter=$SOME
glob json $GLOB*?filter=$LAST
glob_none json $GLOB*/f:nosuch
range json $RANGE?filter=$SOME"
mime() { case $1 in json) echo application/json ;; xml) echo text/xml ;; pb) echo application/x-protobuf ;; esac; }
scan_all() { # DIR: each scan's status, headers and body into DIR
    mkdir -p "$1"
    while read -r name acc path; do
        curl -s -H "Accept: $(mime "$acc")" -D "$1/$name.h" -o "$1/$name.body" \
            -w '%{http_code} %{time_total}\n' -m 120 "$U/big/$path" > "$1/$name.st"
    done <<< "$SCANS"
}

# ---------------------------------------------------------------- the reference
with_deadline 600000 || { bad "server did not start"; finish; }
timed "$U/big/r0000001" > /dev/null   # warm the file
read -r st full_col < <(timed "$U/big/*?column=f:nosuch")
read -r st2 full_filter < <(timed "$U/big/*?filter=$NOPE")
check "reference: both scans run to the end (status $st, $st2): ${full_col} s and ${full_filter} s" \
    test "$st" = 200 -a "$st2" = 200
scan_all "$T/ref"
stop_server

# ---------------------------------------------------------------- with a deadline
# A 30 ms slice: every scan above takes many.
with_deadline 30 || { bad "server did not start"; finish; }
timed "$U/big/r0000001" > /dev/null
scan_all "$T/sliced"
while read -r name acc path; do
    read -r rst rt < "$T/ref/$name.st"
    read -r sst stt < "$T/sliced/$name.st"
    rv=$(grep -i '^X-Kiln-Version:' "$T/ref/$name.h" | tr -d '\r')
    sv=$(grep -i '^X-Kiln-Version:' "$T/sliced/$name.h" | tr -d '\r')
    check "sliced scan $name ($acc): status $sst as unsliced ($rst), $(wc -c < "$T/sliced/$name.body") bytes identical (${stt} s; unsliced ${rt} s)" \
        bash -c "[ '$sst' = '$rst' ] && [ '$rv' = '$sv' ] && cmp -s '$T/ref/$name.body' '$T/sliced/$name.body'"
done <<< "$SCANS"
keys() { python3 -c 'import json,sys,base64; print(",".join(base64.b64decode(r["key"]).decode() for r in json.load(open(sys.argv[1]))["Row"]))' "$1"; }
check "the sliced scan with a filter passing only the last row answers that row ($(keys "$T/sliced/last.body"))" \
    test "$(keys "$T/sliced/last.body")" = "$LAST_ROW"
check "the sliced scan with a filter passing nothing answers 200 and no row ($(keys "$T/sliced/nope.body"))" \
    bash -c "[ \"\$(cut -d' ' -f1 '$T/sliced/nope.st')\" = 200 ] && [ -z '$(keys "$T/sliced/nope.body")' ]"
check "a sliced glob with no row is a 404, as unsliced" \
    test "$(cut -d' ' -f1 "$T/sliced/glob_none.st")" = 404
check "the sliced scans with a limit answers 7 rows" \
    test "$(keys "$T/sliced/some_limit.body" | tr ',' '\n' | wc -l)" = 7

# Point Gets beside a sliced scan, on the one worker, are answered while the
# scan still runs (unsliced, they would wait for its end). The scan matches
# each value against six regexes, of which only the last row passes one, to
# be slow.
SLOW=$(python3 -c '
import json, sys, urllib.parse
def rx(v): return {"type": "ValueFilter", "op": "EQUAL",
                   "comparator": {"type": "RegexStringComparator", "value": v}}
last = "^v%d$" % (int(sys.argv[1]) - 1)
print(urllib.parse.quote(json.dumps({"type": "FilterList", "op": "MUST_PASS_ONE",
      "filters": [rx("^w%d.*x$" % i) for i in range(5)] + [rx(last)]})))' "$ROWS")
(curl -s -o "$T/bgbody" -w '%{http_code} %{time_total}\n' -m 120 "$U/big/*?filter=$SLOW"
 date +%s.%N > "$T/bg_end") > "$T/bg" &
bg=$!
sleep 0.05
read -r st tget < <(timed "$U/big/r0001234")
read -r st_n t_n < <(timed "$U/big/r0001235")
gets_end=$(date +%s.%N)
wait "$bg"
read -r bst btime < "$T/bg"
check "point Gets beside the sliced scan answer in ${tget} s and ${t_n} s, before it ends (it took ${btime} s)" \
    bash -c "[ '$st' = 200 ] && [ '$st_n' = 200 ] && awk -v a='$tget' -v b='$t_n' -v g='$gets_end' -v e=\"\$(cat '$T/bg_end')\" 'BEGIN { exit !(a < 0.5 && b < 0.5 && g < e) }'"
check "and the scan beside them answers the last row, as unsliced" \
    bash -c "[ '$bst' = 200 ] && cmp -s '$T/ref/last.body' '$T/bgbody'"
stop_server

# --scan-max-mb still holds across slices: the second half of the table
# (what SECOND passes, after a first half it passes over in many slices)
# is far over 1 MiB.
SECOND_RE='%5Ev1%5B0-9%5D%7B6%7D%24'              # ^v1[0-9]{6}$
[ "$ROWS" -ge 2000000 ] || SECOND_RE='%5Ev%5B23%5D%5B0-9%5D%7B5%7D%24'   # ^v[23][0-9]{5}$
SECOND="%7B%22type%22%3A%22ValueFilter%22%2C%22op%22%3A%22EQUAL%22%2C%22comparator%22%3A%7B%22type%22%3A%22RegexStringComparator%22%2C%22value%22%3A%22$SECOND_RE%22%7D%7D"
start_server --threads 1 --cache-mb 256 --request-deadline-ms 5 --scan-max-mb 1 ||
    { bad "server did not start"; finish; }
read -r st t < <(timed "$U/big/*?filter=$SOME")
check "a sliced scan under --scan-max-mb 1 still answers (status $st)" test "$st" = 200
read -r st t < <(timed "$U/big/*?filter=$SECOND")
check "a sliced scan over --scan-max-mb answers 413 (status $st, ${t} s)" \
    bash -c "[ '$st' = 413 ] && grep -q scan_too_large '$T/body'"
stop_server

with_deadline 30 || { bad "server did not start"; finish; }
# Paged: each page answers at the deadline and says where to go on; the
# pages together reach the end of the table.
pages=0
start=
while [ "$pages" -lt 400 ]; do
    pages=$((pages + 1))
    curl -sf -m 30 "$U/big/*?column=f:nosuch&paged=true${start:+&startrow=$start}" > "$T/page" ||
        { bad "paged scan: page $pages failed"; break; }
    nxt=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("next_startrow", ""))' "$T/page")
    rows=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["Row"]))' "$T/page")
    [ "$rows" = 0 ] || { bad "paged scan: page $pages has $rows rows"; break; }
    [ -n "$nxt" ] || break
    start=$(python3 -c 'import base64,sys,urllib.parse; print(urllib.parse.quote(base64.b64decode(sys.argv[1]), safe=""))' "$nxt")
done
check "a paged scan of a column no row has ends after $pages pages of no rows, each at the deadline" \
    bash -c "[ '$pages' -gt 1 ] && [ '$pages' -lt 400 ]"

# count=true resumes from where the deadline stopped it.
total=0
start=
for i in $(seq 400); do
    curl -sf -m 30 "$U/big/*?column=f:nosuch&count=true${start:+&startrow=$start}" > "$T/count" || break
    read -r c nxt < <(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["count"], j.get("next_startrow", "-"))' "$T/count")
    total=$((total + c))
    [ "$nxt" != - ] || break
    start=$(python3 -c 'import base64,sys,urllib.parse; print(urllib.parse.quote(base64.b64decode(sys.argv[1]), safe=""))' "$nxt")
done
check "count=true of a column no row has: 0 after $i resumed pages" bash -c "[ '$total' = 0 ] && [ '$i' -gt 1 ]"
curl -sf "$U/big/*?count=true" > "$T/count"
check "count=true of the table still counts every row" \
    bash -c "python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j[\"count\"] > 0 else 1)' '$T/count'"

# A stateful scanner is held to the same budget: a GET of a scanner whose
# filter passes nothing gives the worker back at each deadline and goes on
# where it stopped on a later turn, so a point Get beside it is answered
# quickly; the GET itself answers 204 at the true end, never an empty 200
# (clients take an empty batch for the end). A filter that passes only the
# last row answers that row, then 204. The same for a column no row has.
# A short deadline here, so that the Gets' wait (a turn or two of the loop,
# each at most the deadline) is far below the scanner GET's whole time.
stop_server
with_deadline 5 || { bad "server did not start"; finish; }
timed "$U/big/r0000001" > /dev/null
scanner_new() { # BODY: prints the scanner's path
    curl -s -D - -o /dev/null -X PUT -H 'Content-Type: application/json' --data-binary "$1" \
        "$U/big/scanner" | sed -nE 's|^Location: https?://[^/]*(/[^[:space:]]*).*|\1|p'
}
NOPE_JSON='{"type":"ValueFilter","op":"EQUAL","comparator":{"type":"BinaryComparator","value":"bm9wZQ=="}}'
LAST_JSON='{"type":"ValueFilter","op":"EQUAL","comparator":{"type":"BinaryComparator","value":"'"$LAST_B64"'"}}'
fjson() { python3 -c 'import json,sys; print(json.dumps({"batch": 100, "filter": sys.argv[1]}))' "$1"; }
for what in filter column; do
    if [ $what = filter ]; then body=$(fjson "$NOPE_JSON"); else body='{"batch":100,"column":["Zjpub3N1Y2g="]}'; fi
    sp=$(scanner_new "$body")
    [ -n "$sp" ] || { bad "scanner ($what): PUT gave no Location"; continue; }
    curl -s -o "$T/sbody" -w '%{http_code} %{time_total}\n' -m 120 "$U$sp" > "$T/sget" &
    bg=$!
    sleep 0.02
    read -r st tget < <(timed "$U/big/r0001234")
    read -r st_n t_n < <(timed "$U/big/r0001235")
    wait "$bg"
    read -r sst stime < "$T/sget"
    check "scanner ($what passes nothing): point Gets beside its GET answer in ${tget} s and ${t_n} s (the GET took ${stime} s)" \
        bash -c "[ '$st' = 200 ] && [ '$st_n' = 200 ] && awk -v a='$tget' -v b='$t_n' -v s='$stime' 'BEGIN { exit !(a + b < s / 2) }'"
    check "scanner ($what passes nothing): its GET answers 204 at the end, not an empty 200 (got $sst, ${stime} s)" \
        test "$sst" = 204
    curl -s -o /dev/null -X DELETE "$U$sp"
done
sp=$(scanner_new "$(fjson "$LAST_JSON")")
got=
for i in $(seq 10); do
    read -r st t < <(timed "$U$sp")
    [ "$st" = 204 ] && break
    got="$got $st:$(python3 -c 'import json,sys,base64; print(",".join(base64.b64decode(r["key"]).decode() for r in json.load(open(sys.argv[1]))["Row"]))' "$T/body" 2>/dev/null)"
done
check "scanner passing only the last row: that row, then 204 (got${got} then $st)" test "$got" = " 200:$LAST_ROW" -a "$st" = 204
curl -s -o /dev/null -X DELETE "$U$sp"
finish
