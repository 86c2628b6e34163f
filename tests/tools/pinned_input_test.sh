#!/usr/bin/env bash
# pinned_input_test.sh -- a job reading a table reads the one version it
# pinned, whatever is loaded meanwhile. The table keeps a single version, so
# a load deletes the old version's files as it publishes. Three parts:
#
#   mid-map   rank 1 of an export stops itself in the map phase (test hook,
#             SIGSTOP) at the 2000th record of its first split; meanwhile
#             `kiln load` replaces the table with another dataset (fewer
#             rows, other values) and the old files go; then the rank goes
#             on (and is let go at each later split). The export must hold
#             exactly the old dataset's cells, _job.json name the old
#             version, and the load's run lie inside the job's.
#   alongside no hook: the load starts as soon as the job has pinned its
#             version (its temporary output, made after every rank opened
#             the version, exists) and must publish before the job ends
#             (the load returned before job_time_ms + elapsed_s) while the
#             job names the old version; when it did not, the round runs
#             again over a table twice the size, up to four rounds, and the
#             test fails if it never did. Many 1 MB splits.
#   @VERSION  rowcounter and export of TABLE@VERSION read an older kept
#             version; a version no longer kept is refused, naming it.
#
# The expected cells and counts come from the generated rows. Prints
# "N passed, N failed".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
export BUILD
. "$ROOT/tests/support/job_sanitizers.sh"
export OMPI_MCA_mca_component_disable_dlclose=1
KILN=$ROOT/$BUILD/bin/kiln

pass=0
fail=0
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-pinned-test.XXXXXX")
JPID=
KPID=
cleanup() {
    [ -n "$KPID" ] && kill -CONT "$KPID" 2>/dev/null
    [ -n "$JPID" ] && kill -TERM "$JPID" 2>/dev/null && wait "$JPID" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
export KILN_DATA=$work/data
: >"$work/last.err"

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
    fail=$((fail + 1))
    echo "FAIL $1"
    if [ -n "${2:-}" ] && [ -s "$2" ]; then sed 's/^/    /' "$2" | tail -20; fi
}
check() {
    local name=$1
    shift
    if "$@" 2>>"$work/last.err"; then ok "$name"; else bad "$name" "$work/last.err"; fi
    : >"$work/last.err"
}
same() {
    if [ ! -s "$2" ]; then
        bad "$1 (the expected answer is empty: a useless check)"
    elif cmp -s "$2" "$3"; then
        ok "$1 ($(wc -l <"$2") lines)"
    else
        bad "$1"
        diff "$2" "$3" | head -6 | sed 's/^/    /'
    fi
}
finish() {
    echo
    echo "pinned_input_test: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit $?
}
now_ms() { date +%s%3N; }
dump_parts() {
    local f
    for f in $(ls "$1" | grep '^part-r-' | LC_ALL=C sort); do
        "$KILN" hfile dump "$1/$f" || echo "DUMP FAILED: $f"
    done
}
# json_get FILE EXPR: a member of a JSON file (EXPR indexes `d`)
json_get() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
current() { "$KILN" views "$1" | awk -F'\t' '$2 == "*" { print $1 }'; }
kept_versions() { "$KILN" views "$1" | awk -F'\t' 'NR > 1 && NF >= 3 { print $1 }' | tr '\n' ' '; }
state() { awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null; }

for b in "$KILN" "$ROOT/$BUILD/bin/kiln-mr"; do
    [ -x "$b" ] || { bad "$b is not built (make)"; finish; }
done
command -v python3 >/dev/null || { bad "python3 is missing"; finish; }

# dataset NAME ROWS STEP TAG: a load's output (one file, `kiln hfile write`)
# of ROWS rows k<8 digits> (every STEP-th number), d:v = TAG, the row and 100
# random letters (little to compress), and its expected export dump,
# $work/NAME.expect
dataset() {
    local name=$1 rows=$2 step=$3 tag=$4
    python3 - "$rows" "$step" "$tag" >"$work/$name.expect" <<'PY'
import random, string, sys
rows, step, tag = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rnd = random.Random(rows * 7 + step)
letters = string.ascii_letters + string.digits
for i in range(rows):
    k = 'k%08d' % (i * step)
    print('%s\td:v\t1000\tPut\t%s-%s-%s' % (k, tag, k, ''.join(rnd.choice(letters) for _ in range(100))))
PY
    rm -rf "${work:?}/$name"
    mkdir -p "$work/$name/d"
    "$KILN" hfile write "$work/$name/d/cells" --input "$work/$name.expect" >/dev/null || return 1
    touch "$work/$name/_SUCCESS"
}

"$KILN" create big --family d:compression=none --keep-versions 1 --split k00010000 \
    --split k00040000 --split k00160000 >/dev/null 2>>"$work/last.err"
check "kiln create big (keeps one version)" test $? = 0

# ---------------------------------------------------------------- a load mid-map
rows=40000
dataset old $rows 1 old 2>>"$work/last.err" && dataset new $((rows / 10)) 7 new 2>>"$work/last.err" &&
    "$KILN" load big "$work/old" >/dev/null 2>>"$work/last.err"
check "$rows rows ($(du -sm "$work/old" | cut -f1) MB) loaded into big" test $? = 0
vold=$(current big)
./run_job.sh -n 2 --timeout 300 export big "$work/out" -D kiln.table.split.mb=1 -D kiln.progress=false \
    -D kiln.test.kill.rank=1 -D kiln.test.kill.phase=map -D kiln.test.kill.after=2000 \
    -D kiln.test.kill.signal=stop >"$work/job.out" 2>"$work/job.err" &
JPID=$!
for _ in $(seq 600); do
    KPID=$(sed -n 's/.*rank 1 (.*): test hook kiln.test.kill.rank: stopped in the map phase at step 2000 (pid \([0-9]*\)).*/\1/p' "$work/job.err" | head -1)
    [ -n "$KPID" ] && [ "$(state "$KPID")" = T ] && break
    kill -0 "$JPID" 2>/dev/null || break
    sleep 0.1
done
check "rank 1 is stopped in the map phase (pid ${KPID:-none}, state $(state "${KPID:-0}"))" \
    test -n "$KPID" -a "$(state "${KPID:-0}")" = T
t0=$(now_ms)
"$KILN" load big "$work/new" --wait=60 >/dev/null 2>>"$work/last.err"
check "meanwhile the load of another dataset exits 0" test $? = 0
t1=$(now_ms)
check "rank 1 stayed stopped through the load" test "$(state "${KPID:-0}")" = T
vnew=$(current big)
check "the load published version $vnew and version $vold is gone with its files" \
    test "$(kept_versions big)" = "$vnew " -a "$vnew" != "$vold"
# The hook fires in each of the rank's splits that reaches 2000 records:
# let it go on each time until the job ends.
while kill -0 "$JPID" 2>/dev/null; do
    [ -n "$KPID" ] && kill -CONT "$KPID" 2>/dev/null
    sleep 0.05
done
KPID=
wait "$JPID"
jrc=$?
JPID=
check "the export finishes (exit 0)" test "$jrc" = 0 -a -f "$work/out/_SUCCESS"
if [ "$jrc" = 0 ]; then
    start=$(json_get "$work/out/_job.json" 'd["job_time_ms"]')
    end=$(json_get "$work/out/_job.json" 'int(d["job_time_ms"] + 1000 * d["elapsed_s"])')
    check "the load ran inside the job ($start <= $t0 .. $t1 < $end)" \
        test "$start" -le "$t0" -a "$t1" -lt "$end"
fi
check "_job.json names the version read: the old one ($vold)" \
    grep -q "\"input_table\":{\"table\":\"default:big\",\"version\":$vold," "$work/out/_job.json"
dump_parts "$work/out" >"$work/got.txt"
same "the export holds exactly the old version's cells" "$work/old.expect" "$work/got.txt"
check "its manifest counts the old version's rows" \
    test "$(json_get "$work/out/_export.json" 'd["rows"], d["version"]' 2>&1)" = "($rows, $vold)"
check "the table now holds the new dataset ($((rows / 10)) rows)" \
    grep -q "^$((rows / 10))\b" <("$KILN" count big 2>&1)

# ---------------------------------------------------------------- a load alongside
landed=0
for attempt in 1 2 3 4; do
    rm -rf "$work/out"
    dataset old $rows 1 old 2>>"$work/last.err" &&
        dataset new $((rows / 10)) 7 new 2>>"$work/last.err" &&
        "$KILN" load big "$work/old" >/dev/null 2>>"$work/last.err"
    check "round $attempt: $rows rows ($(du -sm "$work/old" | cut -f1) MB) loaded into big" test $? = 0
    vold=$(current big)
    ./run_job.sh -n 2 --timeout 300 export big "$work/out" -D kiln.table.split.mb=1 \
        -D kiln.progress=false >"$work/job.out" 2>"$work/job.err" &
    JPID=$!
    for _ in $(seq 30000); do
        ls -d "$work"/out._temporary.* >/dev/null 2>&1 && break
        kill -0 "$JPID" 2>/dev/null || break
        sleep 0.002
    done
    t0=$(now_ms)
    "$KILN" load big "$work/new" --wait=60 >/dev/null 2>>"$work/last.err"
    lrc=$?
    t1=$(now_ms)
    wait "$JPID"
    jrc=$?
    JPID=
    check "round $attempt: the export and the load exit 0" test "$jrc" = 0 -a "$lrc" = 0 \
        -a -f "$work/out/_SUCCESS"
    [ "$jrc" = 0 ] && [ "$lrc" = 0 ] || break
    vread=$(json_get "$work/out/_job.json" 'd["input_table"]["version"]')
    start=$(json_get "$work/out/_job.json" 'd["job_time_ms"]')
    map_end=$(json_get "$work/out/_job.json" 'int(d["job_time_ms"] + 1000 * d["phases_s"]["map"])')
    end=$(json_get "$work/out/_job.json" 'int(d["job_time_ms"] + 1000 * d["elapsed_s"])')
    inmap=no
    [ "$t1" -lt "$map_end" ] && inmap=yes
    echo "     round $attempt: job $start..$end (map over by $map_end at the earliest)," \
        "load $t0..$t1 (surely inside the map: $inmap); version read $vread, old $vold," \
        "now $(current big)"
    if [ "$vread" = "$vold" ] && [ "$(current big)" != "$vold" ] && [ "$t0" -ge "$start" ] &&
        [ "$t1" -lt "$end" ]; then
        landed=1
        break
    fi
    echo "     the load did not publish inside the job: again, over a table twice the size"
    rows=$((rows * 2))
done
check "the load published while the export ran (round $attempt of at most 4)" test "$landed" = 1
if [ "$landed" = 1 ]; then
    dump_parts "$work/out" >"$work/got.txt"
    same "the export holds exactly the old version's cells" "$work/old.expect" "$work/got.txt"
    check "_job.json names the old version ($vold)" \
        grep -q "\"input_table\":{\"table\":\"default:big\",\"version\":$vold," "$work/out/_job.json"
fi

# ---------------------------------------------------------------- TABLE@VERSION
dataset old 3000 1 old 2>>"$work/last.err" && dataset new 2000 3 new 2>>"$work/last.err" &&
    "$KILN" create kept --family d --split k00001000 >/dev/null 2>>"$work/last.err" &&
    "$KILN" load kept "$work/old" >/dev/null 2>>"$work/last.err" &&
    "$KILN" load kept "$work/new" >/dev/null 2>>"$work/last.err"
check "two versions of kept are loaded" test $? = 0
v1=$("$KILN" views kept | awk -F'\t' 'NR > 1 && NF >= 3 && $2 != "*" { print $1 }' | head -1)
check "kept keeps an older version (${v1:=0})" test "$v1" != 0
./run_job.sh -n 3 rowcounter kept@$v1 --output "$work/rc1" -D kiln.progress=false \
    >/dev/null 2>>"$work/last.err"
check "rowcounter kept@$v1 counts the older version's 3000 rows" \
    test "$(cat "$work/rc1/part-r-00000" 2>/dev/null)" = "ROWS	3000"
check "and _job.json names version $v1" \
    grep -q "\"input_table\":{\"table\":\"default:kept\",\"version\":$v1," "$work/rc1/_job.json"
./run_job.sh -n 3 rowcounter kept --output "$work/rc2" -D kiln.progress=false \
    >/dev/null 2>>"$work/last.err"
check "rowcounter kept counts the current version's 2000 rows" \
    test "$(cat "$work/rc2/part-r-00000" 2>/dev/null)" = "ROWS	2000"
./run_job.sh -n 2 export --input-table kept@$v1 --output "$work/e1" -D kiln.progress=false \
    >/dev/null 2>>"$work/last.err"
dump_parts "$work/e1" >"$work/got1.txt"
same "export kept@$v1 holds the older version's cells" "$work/old.expect" "$work/got1.txt"
"$KILN" load kept "$work/old" >/dev/null 2>>"$work/last.err"
check "a third load of kept" test $? = 0
check "version $v1 is no longer kept" \
    test -z "$("$KILN" views kept | awk -F'\t' -v v="$v1" 'NR > 1 && $1 == v')"
./run_job.sh -n 2 rowcounter kept@$v1 --output "$work/rc3" -D kiln.progress=false \
    >/dev/null 2>"$work/job.err"
check "rowcounter kept@$v1 now fails" test $? != 0 -a ! -e "$work/rc3"
check "naming the table and the version" \
    grep -q "table default:kept: version $v1 is not kept" "$work/job.err"
./run_job.sh -n 2 export kept@$v1 "$work/e3" -D kiln.progress=false >/dev/null 2>"$work/job.err"
check "export kept@$v1 fails the same way" grep -q "version $v1 is not kept" "$work/job.err"

finish
