#!/usr/bin/env bash
# index_test.sh -- secondary indexes end to end: importtsv builds a one-column
# and a two-column index (-D kiln.index) beside a salted and an unsalted
# table, `kiln load` publishes them with the table, and every index query
# (exact, composite, ranges, limits; values that are prefixes of others, that
# would collide if concatenated, with spaces and UTF-8) returns what a brute-
# force reading of the input lines finds (index_check.py, which shares no
# code with the job or the store) -- embedded, over HTTP with paging, and
# through `kiln --server`. Then a replace with changed data (no stale entry in
# the new index, none returned), an append that changes indexed values (the
# old entries stay on disk and are never returned), appends without the
# indexes refused, and atomicity: while loads alternate two versions of a
# table, every answer read through its index (HTTP and embedded) comes from
# one version. Prints "N passed, N failed"; exits 1 on failure.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
export BUILD                       # run_job.sh takes it relative to the tree
case $BUILD in /*) B=$BUILD ;; *) B=$ROOT/$BUILD ;; esac
KILN=$B/bin/kiln
SERVER=$B/bin/kiln-server
RUNJOB=$ROOT/run_job.sh
CHECK="python3 $ROOT/tests/index/index_check.py"
. "$ROOT/tests/support/job_sanitizers.sh"
export OMPI_MCA_mca_component_disable_dlclose=1
SEED=${SEED:-$RANDOM}
T=$(mktemp -d "${TMPDIR:-/tmp}/kiln-index-test.XXXXXX")
D=$T/data
SPID=
LPID=
cleanup() {
    for p in $LPID $SPID; do
        kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
    done
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
echo "seed=$SEED (replay with SEED=$SEED)"
for b in "$KILN" "$SERVER" "$B/bin/kiln-mr"; do
    [ -x "$b" ] || { bad "$b not built"; finish; }
done
for tool in python3 curl; do
    command -v $tool >/dev/null || { bad "$tool is missing (apt-get install $tool)"; finish; }
done

# count the "N passed, N failed" of a checker run into ours
take() { # name, log
    local p f
    p=$(sed -nE 's/^[a-z]+: ([0-9]+) passed, ([0-9]+) failed.*/\1/p' "$2" | tail -1)
    f=$(sed -nE 's/^[a-z]+: ([0-9]+) passed, ([0-9]+) failed.*/\2/p' "$2" | tail -1)
    if [ -z "$p" ]; then
        bad "$1: the checker did not finish: $(tail -5 "$2")"
        return
    fi
    passed=$((passed + p))
    failed=$((failed + f))
    [ "$f" -eq 0 ] || { echo "FAIL: $1:"; grep '^FAIL' "$2" | head -10; }
}

# ---------------------------------------------------------------- data
# gen SEED ROWS CHANGES OUT [BASE]: ROWS rows u00000.. with city, age, name
# (some fields empty: such a row is in no index needing that column), special
# rows whose values would collide if they were concatenated, then CHANGES
# lines that give random rows a new city and age (the last line wins). With
# BASE, only CHANGES lines over BASE's rows plus new rows. A change line
# carries both columns of the two-column index: index rows are made from one
# input line (jobs/index_output.h).
gen() {
    python3 - "$@" <<'EOF'
import random, sys
seed, nrows, changes, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
base = sys.argv[5] if len(sys.argv) > 5 else None
r = random.Random(seed)
cities = ["Paris", "Rome", "Rome 2", "Ro", "Oslo", "S\u00e3o Paulo", "a", "ab", "Z\u00fcrich",
          "Lima", "New York", "x\\y", "b"]
def city():
    return "" if r.random() < 0.05 else r.choice(cities)
def age():
    return "" if r.random() < 0.1 else str(r.randint(18, 80))
lines = []
if base is None:
    for i in range(nrows):
        lines.append("u%05d\t%s\t%s\tn%d" % (i, city(), age(), i))
    lines.append("x1\ta\tbc\tcollide1")      # ("a", "bc") ...
    lines.append("x2\tab\tc\tcollide2")      # ... and ("ab", "c") share the bytes "abc"
    lines.append("x3\tb\t\tno-age")
    keys = ["u%05d" % i for i in range(nrows)]
else:
    keys = [l.split("\t")[0] for l in open(base, encoding="utf-8")]
    for i in range(nrows):
        lines.append("v%05d\t%s\t%s\tnew%d" % (i, city(), age(), i))
for j in range(changes):
    lines.append("%s\t%s\t%d\t" % (r.choice(keys), r.choice(cities), r.randint(18, 80)))
with open(out, "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")
EOF
}
job() { # table output ts input... (extra -D settings in $JOBD)
    local table=$1 out=$2 ts=$3
    shift 3
    # shellcheck disable=SC2086
    "$RUNJOB" -n 3 importtsv -D importtsv.columns=HBASE_ROW_KEY,d:city,d:age,d:name \
        -D importtsv.skip.empty.columns=true -D importtsv.timestamp="$ts" -D kiln.progress=false \
        ${JOBD:-} --table "$table" --data "$D" --input "$@" --output "$out" >"$T/job.log" 2>&1
}
IDX='by_city:d:city;by_city_age:d:city,d:age'

gen $((SEED + 1)) 3000 400 "$T/v1.tsv"
gen $((SEED + 2)) 2500 600 "$T/v2.tsv"
gen $((SEED + 3)) 100 500 "$T/v3.tsv" "$T/v2.tsv"

# ---------------------------------------------------------------- usage
expect_rc "bad index spec" 64 "$RUNJOB" -n 1 importtsv -D importtsv.columns=HBASE_ROW_KEY,d:city \
    -D 'kiln.index=by city:d:city' --table x --data "$D" --input "$T/v1.tsv" --output "$T/bad1"
expect_grep "bad spec message" "$T/err" "kiln.index: index 'by city:d:city': NAME must be"
expect_rc "index of a missing family" 64 "$RUNJOB" -n 1 importtsv -D importtsv.columns=HBASE_ROW_KEY,d:city \
    -D 'kiln.index=i1:zz:city' --table x --data "$D" --input "$T/v1.tsv" --output "$T/bad2"
expect_grep "missing family message" "$T/err" "'zz' is not a family of table default:x"
expect_rc "scan --value without --index" 64 "$KILN" scan t --value x
expect_rc "count --index" 64 "$KILN" count t --index by_city

for tbl in people salty; do
    if [ $tbl = salty ]; then
        expect_rc "create $tbl" 0 "$KILN" create $tbl --family d --salt-buckets 5
    else
        expect_rc "create $tbl" 0 "$KILN" create $tbl --family d --split u01 --split u02
    fi
    # ------------------------------------------------------------ version 1
    JOBD="-D kiln.index=$IDX"
    job $tbl "$T/$tbl-o1" 1000 "$T/v1.tsv" && ok || bad "$tbl job 1: $(tail -5 "$T/job.log")"
    expect_grep "$tbl: index rows counted" "$T/job.log" 'Index rows=[1-9]'
    expect_rc "$tbl: load 1" 0 "$KILN" load $tbl "$T/$tbl-o1"
    expect_grep "$tbl: load names the indexes" "$T/out" 'index\(es\) published with the table: by_city by_city_age'
    expect_rc "$tbl: describe" 0 "$KILN" describe $tbl
    expect_grep "$tbl: describe lists by_city" "$T/out" "^INDEX by_city => 'd:city'$"
    expect_grep "$tbl: describe lists by_city_age" "$T/out" "^INDEX by_city_age => 'd:city,d:age'$"
    $CHECK queries --kiln "$KILN" --data "$D" --table $tbl --seed "$SEED" --layer "$T/v1.tsv" >"$T/q.log" 2>&1
    take "$tbl v1 queries" "$T/q.log"
    # the concatenation trap: ("a","bc") and ("ab","c")
    run "$KILN" scan $tbl --index by_city_age --value a --value bc
    expect_grep "$tbl: (a, bc) is x1" "$T/out" '^ x1 '
    if grep -q '^ x2 ' "$T/out"; then bad "$tbl: (a, bc) returned x2"; else ok; fi
    run "$KILN" scan $tbl --index by_city --value R --value-start x
    expect_rc "$tbl: two values for one column" 64 "$KILN" scan $tbl --index by_city --value R --value S
    expect_rc "$tbl: unknown index" 66 "$KILN" scan $tbl --index nope --value x
    expect_grep "$tbl: unknown index names the others" "$T/err" 'indexes: by_city, by_city_age'

    # ------------------------------------------------------------ replace with changed data
    job $tbl "$T/$tbl-o2" 2000 "$T/v2.tsv" && ok || bad "$tbl job 2: $(tail -5 "$T/job.log")"
    # the new index holds exactly the entries of its own input lines
    python3 - "$T/v2.tsv" >"$T/want-entries" <<'EOF'
import sys
pairs = set()
for line in open(sys.argv[1], "rb"):
    f = line.rstrip(b"\n").split(b"\t")
    if f[1] != b"":
        pairs.add((f[0], f[1]))
print(len(pairs))
EOF
    "$KILN" load $tbl "$T/$tbl-o2" --dry-run >"$T/plan" 2>&1
    got=$(awk -F'\t' '$2 == "index by_city" { s += $6 } END { print s + 0 }' "$T/plan")
    if [ "$got" = "$(cat "$T/want-entries")" ]; then ok; else bad "$tbl: index by_city of v2 holds $got entries, its lines give $(cat "$T/want-entries")"; fi
    expect_rc "$tbl: load 2 (replace)" 0 "$KILN" load $tbl "$T/$tbl-o2"
    $CHECK queries --kiln "$KILN" --data "$D" --table $tbl --seed $((SEED + 5)) --layer "$T/v2.tsv" >"$T/q.log" 2>&1
    take "$tbl v2 (replace) queries" "$T/q.log"

    # ------------------------------------------------------------ appends
    JOBD=""
    job $tbl "$T/$tbl-noidx" 3000 "$T/v3.tsv" && ok || bad "$tbl job without indexes"
    expect_rc "$tbl: append without the indexes refused" 64 "$KILN" load $tbl "$T/$tbl-noidx" --append
    expect_grep "$tbl: refusal names the indexes" "$T/err" 'an append must build the indexes of version 2 \(by_city, by_city_age\)'
    JOBD="-D kiln.index=by_city:d:city"
    job $tbl "$T/$tbl-oneidx" 3000 "$T/v3.tsv" && ok || bad "$tbl job with one index"
    expect_rc "$tbl: append with one index refused" 64 "$KILN" load $tbl "$T/$tbl-oneidx" --append
    JOBD="-D kiln.index=$IDX"
    job $tbl "$T/$tbl-o3" 3000 "$T/v3.tsv" && ok || bad "$tbl job 3: $(tail -5 "$T/job.log")"
    expect_rc "$tbl: load 3 (append)" 0 "$KILN" load $tbl "$T/$tbl-o3" --append
    $CHECK queries --kiln "$KILN" --data "$D" --table $tbl --seed $((SEED + 7)) \
        --layer "$T/v2.tsv" --layer "$T/v3.tsv" >"$T/q.log" 2>&1
    take "$tbl v2+v3 (append) queries" "$T/q.log"
    # a replace without indexes drops them
    expect_rc "$tbl: replace without indexes" 0 "$KILN" load $tbl "$T/$tbl-noidx"
    expect_rc "$tbl: index gone" 66 "$KILN" scan $tbl --index by_city --value Rome
    expect_rc "$tbl: rollback" 0 "$KILN" rollback $tbl
    expect_rc "$tbl: index back after rollback" 0 "$KILN" scan $tbl --index by_city --value Rome
done

# ---------------------------------------------------------------- HTTP
LOG=$T/server.log
"$SERVER" --data "$D" --listen 127.0.0.1:0 --threads 2 --cache-mb 32 --scan-page-rows 7 \
    >"$LOG" 2>&1 &
SPID=$!
for _ in $(seq 100); do
    grep -q 'over HTTP on' "$LOG" && break
    sleep 0.05
done
HP=$(sed -nE 's/.*over HTTP on .* \(port ([0-9]+)\).*/\1/p' "$LOG" | head -1)
[ -n "$HP" ] || { bad "server did not start: $(cat "$LOG")"; finish; }
ok
for tbl in people salty; do
    $CHECK queries --kiln "$KILN" --data "$D" --table $tbl --seed $((SEED + 9)) --http "$HP" \
        --layer "$T/v2.tsv" --layer "$T/v3.tsv" >"$T/q.log" 2>&1
    take "$tbl HTTP and embedded queries" "$T/q.log"
    for args in "--index by_city --value Rome" "--index by_city_age --value Oslo --value-start 30 --value-stop 50" \
                "--index by_city --value-start P --limit 20 --columns d:name" "--index by_city_age --value Paris --json"; do
        # shellcheck disable=SC2086
        "$KILN" scan $tbl $args >"$T/emb" 2>&1
        # shellcheck disable=SC2086
        "$KILN" --server "127.0.0.1:$HP" scan $tbl $args >"$T/rem" 2>&1
        if cmp -s "$T/emb" "$T/rem"; then ok; else bad "$tbl: kiln --server scan $args differs: $(diff "$T/emb" "$T/rem" | head -3)"; fi
    done
done
curl -s "http://127.0.0.1:$HP/people/*?index=by_city&value=Rome&startrow=u" >"$T/h"
expect_grep "index scans refuse startrow" "$T/h" '"status":400'
curl -s "http://127.0.0.1:$HP/people/*?index=nope&value=Rome" >"$T/h"
expect_grep "unknown index over HTTP" "$T/h" '"status":404'

kill -TERM "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null
SPID=

# ---------------------------------------------------------------- atomicity
# Version A: rows r000..r199 with city X, d:ver A. Version B: r000..r299 with
# city X, d:ver B. A reader that paired one version's index with the other's
# table would see 200 rows of B (or rows missing); every answer must be all A
# and 200 rows, or all B and 300 rows.
awk 'BEGIN { for (i = 0; i < 200; i++) printf "r%03d\tX\tA\n", i }' >"$T/a.tsv"
awk 'BEGIN { for (i = 0; i < 300; i++) printf "r%03d\tX\tB\n", i }' >"$T/b.tsv"
expect_rc "create atom" 0 "$KILN" create atom --family d --salt-buckets 3
for v in a b; do
    "$RUNJOB" -n 2 importtsv -D importtsv.columns=HBASE_ROW_KEY,d:city,d:ver -D kiln.progress=false \
        -D kiln.index=by_city:d:city --table atom --data "$D" --input "$T/$v.tsv" \
        --output "$T/atom-$v" >"$T/job.log" 2>&1 && ok || bad "atom job $v: $(tail -5 "$T/job.log")"
done
expect_rc "atom load A" 0 "$KILN" load atom "$T/atom-a"
# a server answering each scan in one page
"$SERVER" --data "$D" --listen 127.0.0.1:0 --threads 2 --cache-mb 32 >"$LOG" 2>&1 &
SPID=$!
for _ in $(seq 100); do
    grep -q 'over HTTP on' "$LOG" && break
    sleep 0.05
done
HP=$(sed -nE 's/.*over HTTP on .* \(port ([0-9]+)\).*/\1/p' "$LOG" | head -1)
[ -n "$HP" ] || { bad "server did not start: $(cat "$LOG")"; finish; }
(
    end=$((SECONDS + 6))
    while [ $SECONDS -lt $end ]; do
        "$KILN" load atom "$T/atom-b" --wait >/dev/null 2>&1
        "$KILN" load atom "$T/atom-a" --wait >/dev/null 2>&1
    done
) &
LPID=$!
$CHECK atomic --port "$HP" --table atom --value X --seconds 5 --expect A=200,B=300 >"$T/atom.log" 2>&1 &
APID=$!
embedded_ok=0
embedded_bad=0
seen_a=0
seen_b=0
end=$((SECONDS + 5))
while [ $SECONDS -lt $end ]; do
    "$KILN" scan atom --index by_city --value X --columns d:ver >"$T/e" 2>"$T/ee" || continue
    res=$(awk '/^ / { v[$NF]++; n++ } END { k = 0; for (x in v) { k++; w = x } print k, w, n + 0 }' "$T/e")
    case $res in
        "1 value=A 200") embedded_ok=$((embedded_ok + 1)); seen_a=1 ;;
        "1 value=B 300") embedded_ok=$((embedded_ok + 1)); seen_b=1 ;;
        *) embedded_bad=$((embedded_bad + 1)); echo "FAIL: embedded answer mixes versions: $res" ;;
    esac
done
wait "$APID"
take "atomic answers over HTTP" "$T/atom.log"
grep '^atomic: answers' "$T/atom.log"
if [ "$embedded_bad" -eq 0 ] && [ "$embedded_ok" -gt 0 ] && [ $((seen_a + seen_b)) -eq 2 ]; then
    ok
else
    bad "embedded answers: $embedded_ok consistent, $embedded_bad mixed, A seen $seen_a, B seen $seen_b"
fi
echo "atomic: $embedded_ok embedded answers, each from one version"
wait "$LPID"
LPID=
kill -TERM "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null
SPID=

finish
