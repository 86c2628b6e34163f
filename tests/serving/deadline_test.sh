#!/usr/bin/env bash
# deadline_test.sh -- a scan that passes over rows without answering (a
# column no row has, a filter nothing passes) cannot hold a worker: with
# one worker, a point Get sent beside it is answered long before such a
# scan could finish, an unpaged scan stops at --request-deadline-ms with a
# 503, a paged one answers what it has with next_startrow and its pages
# reach the end, and count=true resumes the same way. The full time of the
# scans is measured first, with a deadline too long to matter, as the
# reference. A stateful scanner's GET yields the worker at the deadline and
# resumes later, answering 204 only at the true end. Prints "N passed, N failed".
set -u
NAME=deadline_test
# shellcheck source=tests/serving/lib.sh
source "$(dirname "$0")/lib.sh"

"$KILN" create big --family f > /dev/null || { bad "kiln create"; finish; }
awk 'BEGIN { for (i = 0; i < 2000000; i++) printf "r%07d\tf:q\t5\tPut\tv%d\n", i, i }' |
    load_rows big f p || { bad "kiln hfile write and load"; finish; }
with_deadline() { start_server --threads 1 --cache-mb 256 --request-deadline-ms "$1"; }
# A ValueFilter no cell passes, URL-encoded.
NOPE='%7B%22type%22%3A%22ValueFilter%22%2C%22op%22%3A%22EQUAL%22%2C%22comparator%22%3A%7B%22type%22%3A%22BinaryComparator%22%2C%22value%22%3A%22bm9wZQ%3D%3D%22%7D%7D'
timed() { # URL: prints "status seconds"
    curl -s -o "$T/body" -w '%{http_code} %{time_total}\n' -m 60 "$1"
}

# ---------------------------------------------------------------- the reference
with_deadline 600000 || { bad "server did not start"; finish; }
timed "$U/big/r0000001" > /dev/null   # warm the file
read -r st full_col < <(timed "$U/big/*?column=f:nosuch")
read -r st2 full_filter < <(timed "$U/big/*?filter=$NOPE")
check "reference: both scans run to the end (status $st, $st2): ${full_col} s and ${full_filter} s" \
    test "$st" = 200 -a "$st2" = 200
stop_server

# ---------------------------------------------------------------- with a deadline
with_deadline 30 || { bad "server did not start"; finish; }
timed "$U/big/r0000001" > /dev/null
read -r st t < <(timed "$U/big/*?column=f:nosuch")
check "an unpaged scan of a column no row has stops with 503 (${t} s)" test "$st" = 503
check "the 503 says how to go on" grep -q '"scan_deadline"' "$T/body"
read -r st t < <(timed "$U/big/*?filter=$NOPE")
check "an unpaged scan with a filter nothing passes stops with 503 (${t} s, full ${full_filter} s)" \
    bash -c "[ '$st' = 503 ] && awk -v a='$t' -v b='$full_filter' 'BEGIN { exit !(a < b / 2) }'"

# A point Get beside the filtered scan, on the one worker.
curl -s -o /dev/null -m 60 "$U/big/*?filter=$NOPE" &
bg=$!
sleep 0.02
read -r st tget < <(timed "$U/big/r0001234")
wait "$bg"
check "a point Get beside it is answered in ${tget} s (the scan alone takes ${full_filter} s)" \
    bash -c "[ '$st' = 200 ] && awk -v a='$tget' -v b='$full_filter' 'BEGIN { exit !(a < b / 2) }'"

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
LAST_JSON='{"type":"ValueFilter","op":"EQUAL","comparator":{"type":"BinaryComparator","value":"djE5OTk5OTk="}}'
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
check "scanner passing only the last row: that row, then 204 (got${got} then $st)" test "$got" = " 200:r1999999" -a "$st" = 204
curl -s -o /dev/null -X DELETE "$U$sp"
finish
