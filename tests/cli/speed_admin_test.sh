#!/usr/bin/env bash
# speed_admin_test.sh -- the speed layer's maintenance end to end: `kiln
# flush | compact | split` on the data directory and with --server (and the
# REST routes POST /TABLE/_admin/OP through curl and Python's urllib), each
# keeping every read the same (`kiln scan` before and after); `kiln regions`
# showing speed-layer files; the covering load of docs/speed-layer.md run
# as written there, and a rollback after it; a read-only server refusing
# the routes (403).
# Prints "speed_admin_test: N passed, N failed"; exits 1 on failure.
set -u
NAME=speed_admin_test
. "$(dirname "$0")/../serving/lib.sh"

for b in "$KILN" "$SERVER"; do
    [ -x "$b" ] || { bad "$b not built"; finish; }
done
command -v curl >/dev/null || { bad "curl missing (scripts/deps.sh installs it)"; finish; }

version() { "$KILN" "$@" | sed -nE 's/^# table .*, version ([0-9]+)$/\1/p'; }
# total FILES and SPEED_FILES of `kiln regions`
files() { "$KILN" "$@" | awk -F'\t' 'NR > 2 && $1 ~ /^[0-9]+$/ { n += $4 } END { print n + 0 }'; }
speed_files() { "$KILN" "$@" | awk -F'\t' 'NR > 2 && $1 ~ /^[0-9]+$/ { n += $6 } END { print n + 0 }'; }
nregions() { "$KILN" "$@" | awk -F'\t' 'NR > 2 && $1 ~ /^[0-9]+$/ { n++ } END { print n + 0 }'; }

"$KILN" create t --family f:versions=3 --family g >/dev/null || { bad "create t"; finish; }
printf 'b1\tf:q\t5\tPut\tbatch1\nb2\tf:q\t5\tPut\tbatch2\nb3\tg:x\t5\tPut\tbatchg\n' |
    load_rows t f p || { bad "load t"; finish; }

# ---- locally
for i in $(seq 1 40); do
    "$KILN" put t "r$(printf %03d "$i")" f:q "value-$i" --ts $((1000 + i)) || bad "put r$i"
done
"$KILN" put t b1 f:q online --ts 7 >/dev/null
"$KILN" delete t b3 g >/dev/null
"$KILN" scan t --versions 3 > "$T/scan0"
v0=$(version regions t)
"$KILN" flush t > "$T/out"
check "flush: exit 0" test $? -eq 0
check "flush says the version it published" grep -q "^Flushed t as version $((v0 + 1)) (was $v0): 42 cell(s)" "$T/out"
check "flush: the version grew" test "$(version regions t)" -gt "$v0"
check "regions shows a speed-layer file" test "$(speed_files regions t)" -ge 1
"$KILN" scan t --versions 3 > "$T/scan1"
check "flush keeps every read" cmp -s "$T/scan0" "$T/scan1"
check "flush again: nothing to do" sh -c "'$KILN' flush t | grep -q '^Nothing to flush in t'"

for i in $(seq 41 60); do
    "$KILN" put t "r$(printf %03d "$i")" f:q "value-$i" --ts $((1000 + i)) >/dev/null
done
"$KILN" put t r001 f:q newer --ts 5000 >/dev/null
"$KILN" flush t >/dev/null
"$KILN" scan t --versions 3 > "$T/scan0"
f0=$(files regions t)
"$KILN" compact t --major > "$T/out"
check "compact --major: exit 0" test $? -eq 0
check "compact --major says what it did" grep -q "^Compacted t (major) as version" "$T/out"
check "compact --major: fewer files ($f0 before)" test "$(files regions t)" -lt "$f0"
"$KILN" scan t --versions 3 > "$T/scan1"
check "compact --major keeps every read" cmp -s "$T/scan0" "$T/scan1"
check "compact (minor) with nothing to merge" sh -c "'$KILN' compact t | grep -q '^Nothing to compact in t (minor'"

r0=$(nregions regions t)
"$KILN" split t --max-bytes 1K > "$T/out"
check "split: exit 0" test $? -eq 0
check "split says what it did" grep -qE "^Split t as version [0-9]+ \(was [0-9]+\): [0-9]+ split\(s\), regions $r0 -> " "$T/out"
check "split: more regions ($r0 before)" test "$(nregions regions t)" -gt "$r0"
"$KILN" scan t --versions 3 > "$T/scan2"
check "split keeps every read" cmp -s "$T/scan0" "$T/scan2"
check "split with no threshold: nothing" sh -c "'$KILN' split t | grep -q '^No region of t to split'"

"$KILN" create big --family f --property max_region_bytes=1024 >/dev/null
for i in 1 2 3 4 5 6; do "$KILN" put big "k$i" f:q "v$i" >/dev/null; done
"$KILN" flush big >/dev/null
check "split by the table's max_region_bytes" sh -c "'$KILN' split big | grep -q '^Split big as version'"
check "create --property durability=X: 64" sh -c "'$KILN' create bad --family f --property durability=X 2>/dev/null; test \$? -eq 64"
check "flush of an unknown table: 66" sh -c "'$KILN' flush nope 2>/dev/null; test \$? -eq 66"
check "split --max-bytes x: 64" sh -c "'$KILN' split t --max-bytes x 2>/dev/null; test \$? -eq 64"
check "flush --major: 64" sh -c "'$KILN' flush t --major 2>/dev/null; test \$? -eq 64"
for c in flush compact split; do
    check "kiln $c --help" sh -c "'$KILN' $c --help | grep -q '^Usage: kiln $c TABLE'"
done
check "kiln load --help names --covers-until" sh -c "'$KILN' load --help | grep -q -- '--covers-until'"

# ---- through a server
start_server --threads 2 || { bad "server did not start: $(cat "$T/server.log")"; finish; }
"$KILN" flush t > "$T/out" 2> "$T/err"
check "flush embedded while a server runs: 75" test $? -eq 75
check "the error suggests --server" grep -q -- 'flush through it with --server' "$T/err"
for i in $(seq 61 90); do
    "$KILN" --server "$U" put t "r$(printf %03d "$i")" f:q "value-$i" --ts $((1000 + i)) >/dev/null ||
        bad "put --server r$i"
done
"$KILN" --server "$U" scan t > "$T/scan0"
v0=$("$KILN" --server "$U" describe t | sed -nE 's/.*version ([0-9]+).*/\1/p' | head -1)
"$KILN" --server "$U" flush t > "$T/out"
check "flush --server: exit 0" test $? -eq 0
check "flush --server says the version" grep -qE "^Flushed t as version [0-9]+ \(was [0-9]+\): 30 cell\(s\)" "$T/out"
"$KILN" --server "$U" scan t > "$T/scan1"
check "flush --server keeps every read" cmp -s "$T/scan0" "$T/scan1"

code=$(curl -s -o "$T/body" -w '%{http_code}' -X POST "$U/t/_admin/flush")
check "curl POST _admin/flush: 200" test "$code" = 200
check "the answer is JSON naming the operation" grep -q '"op":"flush"' "$T/body"
python3 - "$U" > "$T/py" 2>&1 <<'PY'
import json, sys, urllib.request, urllib.error
u = sys.argv[1]
def post(path):
    req = urllib.request.Request(u + path, data=b"", method="POST")
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, None
s, b = post("/t/_admin/compact?major=true")
print("compact", s, b["op"], b["major"], b["files"] <= b["previous_files"], b["version"] >= b["previous_version"])
s, b = post("/t/_admin/split?max_bytes=512")
print("split", s, b["op"], b["splits"] > 0, b["regions"] > b["previous_regions"])
print("unknown", post("/nope/_admin/flush")[0])
print("badbytes", post("/t/_admin/split?max_bytes=x")[0])
req = urllib.request.Request(u + "/t/_admin/flush", method="GET")
try:
    urllib.request.urlopen(req)
    print("get", 200)
except urllib.error.HTTPError as e:
    print("get", e.code, e.headers.get("Allow"))
PY
check "urllib: compact?major=true" grep -q '^compact 200 compact True True True$' "$T/py"
check "urllib: split?max_bytes= adds regions" grep -q '^split 200 split True True$' "$T/py"
check "urllib: unknown table 404" grep -q '^unknown 404$' "$T/py"
check "urllib: bad max_bytes 400" grep -q '^badbytes 400$' "$T/py"
check "urllib: GET 405 with Allow: POST" grep -q '^get 405 POST$' "$T/py"
"$KILN" --server "$U" scan t > "$T/scan2"
check "compact and split through REST keep every read" cmp -s "$T/scan0" "$T/scan2"
check "compact --server --major" sh -c "'$KILN' --server '$U' compact t --major | grep -qE '^(Compacted|Nothing to compact in) t \\(major'"
check "split --server" sh -c "'$KILN' --server '$U' split t --max-bytes 256 | grep -qE '^(Split t|No region of t)'"
"$KILN" --server "$U" scan t > "$T/scan3"
check "kiln --server compact and split keep every read" cmp -s "$T/scan0" "$T/scan3"
check "a row named _admin stays reachable escaped" sh -c "
    curl -s -o /dev/null -X PUT -H 'Content-Type: application/octet-stream' --data-binary adm '$U/t/%5Fadmin/f:flush' &&
    test \"\$(curl -s -H 'Accept: application/octet-stream' '$U/t/%5Fadmin/f:flush')\" = adm"
stop_server

# ---- read-only: the routes are refused
start_server --read-only || { bad "read-only start"; finish; }
for op in flush compact split; do
    check "read-only: POST _admin/$op 403" \
        test "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U/t/_admin/$op")" = 403
done
check "read-only: kiln --server flush fails" sh -c "'$KILN' --server '$U' flush t 2>&1 | grep -q 'read-only'"
stop_server

# ---- the covering load of docs/speed-layer.md, as written there
job() {   # job DIR LINES...: a one-file job output of family f
    local d=$T/$1; shift
    mkdir -p "$d/f"
    printf '%s\n' "$@" | "$KILN" hfile write "$d/f/part-00000" --family f >/dev/null && touch "$d/_SUCCESS"
}
cells() { "$KILN" get clicks "$1" --versions 5 | awk '$1 == "f:city" { print $2 $3 }' | tr '\n' ' '; }
"$KILN" create clicks --family f:versions=5 --keep-versions 5 >/dev/null
job batch1 $'alice\tf:city\t50\tPut\tOslo' $'bob\tf:city\t50\tPut\tRome'
"$KILN" load clicks "$T/batch1" >/dev/null
"$KILN" put clicks alice f:city Paris --ts 100
"$KILN" put clicks bob f:city Lyon --ts 300
check "before the covering load: both writes read" test "$(cells alice)" = "timestamp=100,value=Paris timestamp=50,value=Oslo "
job batch2 $'alice\tf:city\t90\tPut\tBergen' $'bob\tf:city\t50\tPut\tRome'
"$KILN" load clicks "$T/batch2" --covers-until 200 > "$T/out"
check "the load says what it covers" grep -q 'timestamps <= 200' "$T/out"
check "the write at 100 is retired" test "$(cells alice)" = "timestamp=90,value=Bergen "
check "the write at 300 is still visible" test "$(cells bob)" = "timestamp=300,value=Lyon timestamp=50,value=Rome "
"$KILN" put clicks alice f:city Tromso --ts 95
check "a write after the load with an older ts stays" test "$(cells alice)" = "timestamp=95,value=Tromso timestamp=90,value=Bergen "
"$KILN" rollback clicks > "$T/rollback.out"
check "rollback says it kept the online writes" grep -q 'the batch view of the loads up to version [0-9]*, with every online write kept' "$T/rollback.out"
check "rollback: the batch view before, online writes kept, retirement kept" \
    test "$(cells alice)" = "timestamp=95,value=Tromso timestamp=50,value=Oslo "
check "rollback keeps the write at 300" test "$(cells bob)" = "timestamp=300,value=Lyon timestamp=50,value=Rome "
"$KILN" flush clicks >/dev/null
"$KILN" compact clicks --major >/dev/null
check "flush and compact after it change nothing read" test "$(cells alice)$(cells bob)" = \
    "timestamp=95,value=Tromso timestamp=50,value=Oslo timestamp=300,value=Lyon timestamp=50,value=Rome "

# --covers-until now and report
"$KILN" put clicks carol f:city Nice --ts 1000
job batch3 $'bob\tf:city\t60\tPut\tMilan'
"$KILN" load clicks "$T/batch3" --covers-until now >/dev/null
check "--covers-until now retires every earlier write" test "$(cells carol)$(cells bob)" = "timestamp=60,value=Milan "
check "--covers-until report without a report: 66" sh -c "'$KILN' load clicks '$T/batch3' --covers-until report 2>/dev/null; test \$? -eq 66"
echo '{"job":"x","job_time_ms":400}' > "$T/batch2/_job.json"
"$KILN" put clicks dave f:city Rome --ts 350
"$KILN" put clicks erin f:city Pisa --ts 450
"$KILN" load clicks "$T/batch2" --covers-until report > "$T/out"
check "--covers-until report reads job_time_ms" grep -q 'timestamps <= 400' "$T/out"
check "... retiring the write at 350, keeping the one at 450" test "$(cells dave)$(cells erin)" = "timestamp=450,value=Pisa "
check "--covers-until x: 64" sh -c "'$KILN' load clicks '$T/batch2' --covers-until x 2>/dev/null; test \$? -eq 64"
finish
