#!/usr/bin/env bash
# demo_test.sh -- scripts/demo.sh (what `make demo` runs) on a small sample:
# it completes, every step is timed, each query answers with rows, a few of
# the answers equal the brute force over the demo's own raw input (user 1's
# followers, customer 7's name over the Redis protocol), the data directory
# is left with the seven tables, a re-run replaces the previous demo, and a
# directory that is no demo's is refused. Prints "N passed, N failed".
set -u
VIEW=demo
. "$(dirname "$0")/lib.sh"
views_begin

D=$work/demo-data
W=$work/demo-work
demo() { scripts/demo.sh --rows 20000 --data "$D" --work "$W"; }
demo >"$work/demo.out" 2>"$work/demo.err"
check "demo.sh: exits 0" test $? = 0
out=$work/demo.out
for s in "1. Generate" "2. Create" "3. Build the views" "4. Publish" "5. Serve" "6. Queries" \
    "7. Stop" "Timings"; do
    check "demo prints the section '$s'" grep -q "== $s" "$out"
done
check "every job step is timed" test "$(grep -cE '^  job .* [0-9]+\.[0-9]{3} s$' "$out")" = 5
check "every load step is timed" test "$(grep -cE '^  load .* [0-9]+\.[0-9]{3} s$' "$out")" = 7
check "a total time is printed" grep -qE '^  total +[0-9]+\.[0-9]{3} s$' "$out"
check "the jobs ran on 2 ranks" grep -q 'MapReduce on 2 MPI ranks' "$out"
check "the server listened on a free port" grep -qE 'serving on http://127\.0\.0\.1:[0-9]+' "$out"
check "HTTP: user 42's latest actions as JSON cells" grep -q '^  {"Row":\[{"key":"AAAAKn' "$out"
check "HTTP: decoded, with content:name and a next_startrow" \
    bash -c "grep -q 'content:name' '$out' && grep -q 'next_startrow: \\\\x00\\\\x00\\\\x00\\*' '$out'"
check "kiln: user 42's actions in a time window" grep -qE '^  [1-4] row\(s\)$' "$out"
check "tslog: events of web-01.iad" grep -q 'web-01.iad\\x00http.latency_ms' "$out"
check "tslog: all hosts in 10 s over 8 buckets, some events" grep -qE '^  all hosts: [1-9][0-9]* events' "$out"
check "tslog: a minute's statistics" grep -q 's:count' "$out"
check "orders: customer 7's row with c and o cells" \
    bash -c "grep -q '^   c:name ' '$out' && grep -q '^   o:' '$out'"
check "reviews: a book's and a user's reviews" \
    bash -c "grep -q '^  b\\\\x00\\\\x00\\\\x00\\\\x03' '$out' && grep -q 'column=r:book' '$out'"

# answers against the brute force over the demo's raw input
$CHECK expect follows --out "$work" "$W/raw/follows" -- "followedby 1 100000000 1" 2>>"$work/last.err"
followers=$(awk -F'\t' '!seen[$1]++' "$work/q1.txt" | wc -l)
check "the count of user 1's followers ($followers) equals the brute force" \
    grep -q "^  $followers row(s)$" "$out"
name=$(awk -F'\t' '$1 == 7 { n = $2 } END { print n }' "$W"/raw/orders/customers/*.tsv)
if command -v redis-cli >/dev/null; then
    check "Redis protocol: customer 7's name ($name) as in the raw input" \
        bash -c "grep -A1 'redis_get' '$out' | grep -qx '  $name'"
fi
check "the data directory is left with the 7 tables" \
    bash -c "'$KILN' --data '$D' list | grep -q '^7 row(s)'"
check "the demo tells how to explore it" grep -q "kiln --data .*demo-data scan useractions" "$out"
check "no kiln-server is left running" bash -c "! pgrep -f '[k]iln-server --data $D' >/dev/null"

demo >"$work/demo2.out" 2>"$work/demo2.err"
check "a re-run refuses nothing and replaces the previous demo" \
    bash -c "[ $? = 0 ] && '$KILN' --data '$D' views useractions | grep -q '^1 row(s)'"
mkdir -p "$work/mine"
scripts/demo.sh --rows 20000 --data "$work/mine" --work "$W" >/dev/null 2>"$work/last.err"
check "a directory that is no demo's: refused (73), left alone" \
    bash -c "[ $? = 73 ] && [ -d '$work/mine' ] && [ ! -e '$work/mine/.kiln-demo' ]"
check "demo.sh --help" bash -c "scripts/demo.sh --help | grep -q '^Usage: scripts/demo.sh'"

views_finish
