#!/usr/bin/env bash
# lookup_test.sh -- a job that reads files and a loaded table together: the
# lookup join of event lines with a users table (loaded by importtsv,
# unsalted with three regions and salted), at -np 1 and 3 (the same bytes),
# inner and --left, against a Python join of the raw files; its counters;
# a bad --key-field line; an older version by NAME@VERSION. Prints
# "N passed, N failed".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
export BUILD
. "$ROOT/tests/support/job_sanitizers.sh"
export OMPI_MCA_mca_component_disable_dlclose=1
KILN=$ROOT/$BUILD/bin/kiln
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-lookup-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
export KILN_DATA=$work/data
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -s "$work/err" ] && tail -15 "$work/err" | sed 's/^/    /'; }
check() { local n=$1; shift; if "$@" 2>>"$work/err"; then ok "$n"; else bad "$n"; fi; : >"$work/err"; }
same() { # NAME EXPECTED GOT (sorted bytewise, not empty)
    if [ ! -s "$2" ]; then bad "$1 (the expected answer is empty)"; return; fi
    if cmp -s <(LC_ALL=C sort "$2") <(LC_ALL=C sort "$3"); then ok "$1 ($(wc -l <"$2") lines)"
    else bad "$1"; diff <(LC_ALL=C sort "$2") <(LC_ALL=C sort "$3") | head -8 | sed 's/^/    /'; fi
}
[ -x "$KILN" ] && [ -x "$ROOT/$BUILD/bin/kiln-mr" ] || { bad "kiln and kiln-mr are not built (make)"; echo "lookup_test: $pass passed, $fail failed"; exit 1; }

# ---------------------------------------------------------------- data
python3 - "$work" <<'PY'
import random, sys, os
w = sys.argv[1]
r = random.Random(5)
cities = ['Oslo', 'Lima', 'Z\xfcrich', 'Kyoto', 'a\\b']
with open(w + '/users.tsv', 'w', encoding='utf-8') as f:
    for u in range(1, 3001):
        if u % 7 == 0:
            continue                      # users 7, 14, ... do not exist
        f.write('u%05d\tname-%d\t%s\n' % (u, u, r.choice(cities)))
os.mkdir(w + '/events')
for k in range(3):
    with open(w + '/events/part-%d.tsv' % k, 'w') as f:
        for i in range(4000):
            f.write('%d\tu%05d\t%s\n' % (k * 10000 + i, r.randint(1, 3300), r.choice(['view', 'buy', 'like'])))
    with open(w + '/events/part-%d.tsv' % k, 'a') as f:
        f.write('no-key-field-here\n')   # one bad line per file
PY
check "test data written" test -s "$work/users.tsv"

"$KILN" create users --family d --split u01000 --split u02000 >/dev/null 2>>"$work/err"
check "kiln create users (three regions)" test $? = 0
"$KILN" create users_s --family d --salt-buckets 4 >/dev/null 2>>"$work/err"
check "kiln create users_s (4 buckets)" test $? = 0
for t in users users_s; do
    ./run_job.sh -n 2 importtsv -D importtsv.columns=HBASE_ROW_KEY,d:name,d:city -D kiln.progress=false \
        --table "$t" --input "$work/users.tsv" --output "$work/imp_$t" >/dev/null 2>>"$work/err" &&
        "$KILN" load "$t" "$work/imp_$t" >/dev/null 2>>"$work/err"
    check "importtsv + load $t" test $? = 0
done

# The brute force: the raw files joined in Python.
python3 - "$work" <<'PY'
import sys, os
w = sys.argv[1]
def printable(b):
    return ''.join(chr(c) if 32 <= c < 127 and c != 92 else '\\x%02X' % c for c in b)
users = {}
for line in open(w + '/users.tsv', 'rb').read().split(b'\n'):
    if line:
        k, name, city = line.split(b'\t')
        users[k] = 'd:city=%s\td:name=%s' % (printable(city), printable(name))
inner, left, c = [], [], {'joined': 0, 'unmatched': 0, 'bad': 0}
seen = set()
for fn in sorted(os.listdir(w + '/events')):
    for line in open(w + '/events/' + fn, 'rb').read().split(b'\n'):
        if not line:
            continue
        f = line.split(b'\t')
        if len(f) < 2:
            c['bad'] += 1
            continue
        text = line.decode()
        if f[1] in users:
            c['joined'] += 1
            seen.add(f[1])
            inner.append(text + '\t' + users[f[1]])
            left.append(text + '\t' + users[f[1]])
        else:
            c['unmatched'] += 1
            left.append(text + '\t')
open(w + '/want_inner.txt', 'w').write(''.join(l + '\n' for l in inner))
open(w + '/want_oslo.txt', 'w').write(''.join(l + '\n' for l in inner if '\td:city=Oslo\t' in l))
open(w + '/want_left.txt', 'w').write(''.join(l + '\n' for l in left))
with open(w + '/want_counters.txt', 'w') as f:
    f.write('Bad Lines=%d\nLines joined=%d\nLines without a row=%d\nRows without a line=%d\n'
            % (c['bad'], c['joined'], c['unmatched'], len(set(users) - seen)))
PY
check "brute force ran" test -s "$work/want_inner.txt"

counters() { python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["counters"]["lookup"]
for k in sorted(c): print("%s=%d" % (k, c[k]))' "$1/_job.json"; }
run() { # NP OUT ARGS...
    local np=$1 out=$2
    shift 2
    ./run_job.sh -n "$np" --timeout 120 lookup -D kiln.progress=false -D mapreduce.job.reduces=4 \
        --input "$work/events" --key-field 2 --output "$out" "$@" >/dev/null 2>"$work/job.err"
}

# ---------------------------------------------------------------- the join
for t in users users_s; do
    run 1 "$work/in1_$t" --input-table "$t"
    check "$t: inner join np=1 exits 0" test $? = 0
    run 3 "$work/in3_$t" --input-table "$t" -D kiln.table.split.mb=1
    check "$t: inner join np=3 exits 0" test $? = 0
    check "$t: np=1 and np=3 write the same bytes" \
        bash -c "cat '$work/in1_$t'/part-r-* | cmp -s - <(cat '$work/in3_$t'/part-r-*)"
    cat "$work/in3_$t"/part-r-* >"$work/got_inner_$t.txt"
    same "$t: every joined line equals the brute force" "$work/want_inner.txt" "$work/got_inner_$t.txt"
    counters "$work/in1_$t" >"$work/got_counters_$t.txt"
    same "$t: the counters equal the brute force" "$work/want_counters.txt" "$work/got_counters_$t.txt"
    run 3 "$work/left_$t" --input-table "$t" --left
    check "$t: --left join exits 0" test $? = 0
    cat "$work/left_$t"/part-r-* >"$work/got_left_$t.txt"
    same "$t: --left keeps the lines without a row" "$work/want_left.txt" "$work/got_left_$t.txt"
    check "$t: the report names the table read" grep -q "\"input_table\":{\"table\":\"default:$t\",\"version\":1," "$work/in1_$t/_job.json"
done
check "the bad lines were counted, not fatal" grep -q "Bad Lines=3" "$work/got_counters_users.txt"

# ---------------------------------------------------------------- --filter
# the table side read through a filter in the shell's language: only the
# rows of users in Oslo join
for t in users users_s; do
    run 3 "$work/oslo_$t" --input-table "$t" --filter "SingleColumnValueFilter('d', 'city', =, 'binary:Oslo')"
    check "$t: join through --filter exits 0" test $? = 0
    cat "$work/oslo_$t"/part-r-* >"$work/got_oslo_$t.txt"
    same "$t: --filter keeps the rows it passes, as the brute force" "$work/want_oslo.txt" "$work/got_oslo_$t.txt"
done
run 1 "$work/badfilter" --input-table users --filter "PrefixFilter('u0"
check "a malformed filter is refused before map, naming the problem" \
    grep -q -- "--filter: .*offset" "$work/job.err"
run 1 "$work/rawfilter" --input-table users --raw --filter "KeyOnlyFilter()"
check "--filter with --raw is refused" grep -q "not to --raw cells" "$work/job.err"

# ---------------------------------------------------------------- versions
# a second load replaces every user's city: @1 still joins the first
sed 's/\t[^\t]*$/\tNowhere/' "$work/users.tsv" >"$work/users2.tsv"
./run_job.sh -n 2 importtsv -D importtsv.columns=HBASE_ROW_KEY,d:name,d:city -D kiln.progress=false \
    --table users --input "$work/users2.tsv" --output "$work/imp2" >/dev/null 2>>"$work/err" &&
    "$KILN" load users "$work/imp2" >/dev/null 2>>"$work/err"
check "a second version of users is loaded" test $? = 0
run 3 "$work/v1" --input-table users@1
cat "$work/v1"/part-r-* >"$work/got_v1.txt"
same "users@1 joins the first version" "$work/want_inner.txt" "$work/got_v1.txt"
run 3 "$work/v2" --input-table users
check "the current version joins the new cities" \
    bash -c "[ \$(cat '$work/v2'/part-r-* | grep -c 'd:city=Nowhere') = $(wc -l <"$work/want_inner.txt") ]"
run 1 "$work/nokey" --input-table users --key-field 0
check "--key-field 0 is refused" grep -q "key-field '0' is not in" "$work/job.err"
run 1 "$work/nofile" --input-table users --input "$work/none"
check "a missing input file is named" grep -q "$work/none" "$work/job.err"

echo
echo "lookup_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
