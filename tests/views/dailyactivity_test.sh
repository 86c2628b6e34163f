#!/usr/bin/env bash
# dailyactivity_test.sh -- a view built from a loaded table: useractions is
# generated, built and loaded (unsalted and salted), then dailyactivity
# reads it through table input at -np 1 and 3 (byte-identical HFiles), and
# every cell equals views_check.py's brute force over the raw input; the
# queries -- one user's day, a user's days in a range -- through kiln and
# kiln-server equal the brute force; `useractions@VERSION` reads an older
# version while a newer one is current, and _job.json names it; a row of
# another shape in useractions is counted as a bad row. Prints
# "N passed, N failed".
set -u
VIEW=dailyactivity
. "$(dirname "$0")/lib.sh"
views_begin

raw=$work/raw
"$GEN" useractions --rows 20000 --seed 21 --files 3 --bad 3 --output "$raw" 2>>"$work/last.err"
check "kiln-gen useractions" test $? = 0
# The source views: unsalted with three regions, and salted.
"$KILN" create useractions --family content --split "$(be_key 4 100)" --split "$(be_key 4 300)" \
    >/dev/null 2>>"$work/last.err"
check "kiln create useractions" test $? = 0
"$KILN" create ua_salted --family content --salt-buckets 4 >/dev/null 2>>"$work/last.err"
check "kiln create ua_salted (4 buckets)" test $? = 0
for t in useractions ua_salted; do
    ./run_job.sh -n 2 --timeout 120 useractions --table "$t" --input "$raw" --output "$work/ua_$t" \
        --data "$KILN_DATA" -D kiln.progress=false -D kiln.job.time=$JOB_TIME \
        >/dev/null 2>>"$work/last.err"
    check "useractions job into $t" test $? = 0
    "$KILN" load "$t" "$work/ua_$t" >/dev/null 2>>"$work/last.err"
    check "kiln load $t" test $? = 0
done

# ---------------------------------------------------------------- the job
"$KILN" create dailyactivity --family a --family s --split "$(be_key 4 100)" \
    --split "$(be_key 4 300)" >/dev/null 2>>"$work/last.err"
check "kiln create dailyactivity" test $? = 0
"$KILN" create da_salted --family a --family s --salt-buckets 3 >/dev/null 2>>"$work/last.err"
check "kiln create da_salted (3 buckets)" test $? = 0

run_view 1 "$work/out1" -D kiln.table.split.mb=1
check "job np=1 from useractions: exits 0" test "$rc" = 0 -a -f "$work/out1/_SUCCESS"
run_view 3 "$work/out3" -D kiln.table.split.mb=1
check "job np=3 from useractions: exits 0" test "$rc" = 0 -a -f "$work/out3/_SUCCESS"
check "np=1 and np=3 write the same HFiles byte for byte" same_output "$work/out1" "$work/out3"
check "one HFile per region and family" test "$(ls "$work/out1/a" "$work/out1/s" | grep -c .)" = 8
check "the report names the table and version read" \
    grep -q '"input_table":{"table":"default:useractions","version":1,' "$work/out1/_job.json"

run_view 1 "$work/outs1" --input-table ua_salted --table da_salted
check "job np=1 salted to salted: exits 0" test "$rc" = 0
run_view 3 "$work/outs3" --input-table ua_salted --table da_salted
check "job np=3 salted to salted: exits 0" test "$rc" = 0
check "salted: np=1 and np=3 write the same HFiles" same_output "$work/outs1" "$work/outs3"

U1=1 U2=450
D0=19783   # 2024-03-01
$CHECK expect dailyactivity --out "$work" "$raw" -- "all" "day $U1 $((D0 + 3))" \
    "days $U1 $((D0 + 5)) $((D0 + 12))" "days $U2 $D0 $((D0 + 30))" "day 999999 $D0" \
    2>>"$work/last.err"
check "brute force ran" test $? = 0
dump_cells "$work/out1" >"$work/got_cells.txt"
same "every cell equals the brute force" "$work/cells.txt" "$work/got_cells.txt"
counters_of "$work/out1" dailyactivity >"$work/got_counters.txt"
same "the Bad rows counter equals the brute force" "$work/counters.txt" "$work/got_counters.txt"

for t in dailyactivity da_salted; do
    out=$work/out1
    [ "$t" = da_salted ] && out=$work/outs1
    "$KILN" load "$t" "$out" >/dev/null 2>>"$work/last.err"
    check "kiln load $t" test $? = 0
    kiln_lines scan "$t" >"$work/all_$t.txt" 2>>"$work/last.err"
    same "$t: a full scan equals the brute force" "$work/q1.txt" "$work/all_$t.txt"
    kiln_lines get "$t" "$(be_key 4 $U1 $((D0 + 3)))" >"$work/k2_$t.txt" 2>>"$work/last.err"
    same "$t: kiln get of user $U1's day" "$work/q2.txt" "$work/k2_$t.txt"
    kiln_lines scan "$t" --start "$(be_key 4 $U1 $((D0 + 5)))" --stop "$(be_key 4 $U1 $((D0 + 12)))" \
        >"$work/k3_$t.txt" 2>>"$work/last.err"
    same "$t: kiln scan of user $U1's days in a week" "$work/q3.txt" "$work/k3_$t.txt"
    kiln_lines scan "$t" --start "$(be_key 4 $U2 $D0)" --stop "$(be_key 4 $U2 $((D0 + 30)))" \
        >"$work/k4_$t.txt" 2>>"$work/last.err"
    same "$t: kiln scan of user $U2's month" "$work/q4.txt" "$work/k4_$t.txt"
done

start_server || views_finish
for t in dailyactivity da_salted; do
    http_lines "$t/$(pct "$(be_key 4 $U1 $((D0 + 3)))")" >"$work/h2_$t.txt" 2>>"$work/last.err"
    same "$t: HTTP Get of user $U1's day" "$work/q2.txt" "$work/h2_$t.txt"
    http_lines "$t/*?startrow=$(pct "$(be_key 4 $U1 $((D0 + 5)))")&endrow=$(pct "$(be_key 4 $U1 $((D0 + 12)))")" \
        >"$work/h3_$t.txt" 2>>"$work/last.err"
    same "$t: HTTP scan of user $U1's days in a week" "$work/q3.txt" "$work/h3_$t.txt"
    check "$t: HTTP Get of a user with no activity is 404" \
        test "$(curl -s -o /dev/null -w '%{http_code}' "$U/$t/$(pct "$(be_key 4 999999 $D0)")")" = 404
done
check "kiln-server stops cleanly on SIGTERM" stop_server

# ---------------------------------------------------------------- versions
# A second useractions version from a part of the input: the job asked for
# @1 still derives the first; the current one derives the second.
mkdir -p "$work/raw2" && head -n 3000 "$raw"/$(ls "$raw" | head -1) >"$work/raw2/part.tsv"
./run_job.sh -n 2 --timeout 120 useractions --input "$work/raw2" --output "$work/ua_v2" \
    --data "$KILN_DATA" -D kiln.progress=false -D kiln.job.time=$JOB_TIME >/dev/null 2>>"$work/last.err"
"$KILN" load useractions "$work/ua_v2" >/dev/null 2>>"$work/last.err"
check "a second useractions version is loaded" test $? = 0
run_view 3 "$work/outv1" --input-table useractions@1
check "job over useractions@1: exits 0" test "$rc" = 0
dump_cells "$work/outv1" >"$work/got_v1.txt"
same "useractions@1 derives the first version's cells" "$work/cells.txt" "$work/got_v1.txt"
check "the report names version 1" grep -q '"version":1,' "$work/outv1/_job.json"
run_view 3 "$work/outv2"
check "job over the current useractions: exits 0" test "$rc" = 0
mkdir -p "$work/bf2" && $CHECK expect dailyactivity --out "$work/bf2" "$work/raw2" 2>>"$work/last.err"
dump_cells "$work/outv2" >"$work/got_v2.txt"
same "the current version (2) derives the second input's cells" "$work/bf2/cells.txt" "$work/got_v2.txt"
check "the report names version 2" grep -q '"version":2,' "$work/outv2/_job.json"
run_view 1 "$work/outv9" --input-table useractions@9
check "a version that is not kept is refused, naming it" \
    grep -q "version 9 is not kept" "$work/job.err"

# ---------------------------------------------------------------- bad rows
"$KILN" put useractions "short-row" content:name view_item >/dev/null 2>>"$work/last.err"
"$KILN" flush useractions >/dev/null 2>>"$work/last.err"
check "an odd row is written and flushed into useractions" test $? = 0
run_view 3 "$work/outbad"
check "job with a bad row: exits 0" test "$rc" = 0
check "the bad row is counted" \
    test "$(counters_of "$work/outbad" dailyactivity | grep '^Bad rows=')" = "Bad rows=1"
check "the bad row is logged with its key" grep -q "bad row short-row: not a 16-byte" "$work/job.err"

views_finish
