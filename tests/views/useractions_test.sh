#!/usr/bin/env bash
# useractions_test.sh -- the useractions view end to end: kiln-gen input
# (deterministic, with bad lines and corrected actions), the job at -np 2 and
# 3 (byte-identical HFiles, one per region), every cell and counter equal to
# views_check.py's brute force over the same input, `kiln load`, and the
# queries -- a user's latest N, page K of N (next_startrow over HTTP, last
# row + \x00 through kiln), a time window -- through kiln and kiln-server
# equal to the brute-force answers; refusals. Prints "N passed, N failed".
set -u
VIEW=useractions
. "$(dirname "$0")/lib.sh"
views_begin

raw=$work/raw
gen() { "$GEN" useractions --rows 30000 --seed 11 --files 5 --bad 3 --output "$1"; }
check "kiln-gen: exits 0, 5 files" bash -c "$(declare -f gen); GEN='$GEN'; gen '$raw' && [ \$(ls '$raw' | wc -l) = 5 ]"
gen "$work/raw_again" 2>>"$work/last.err"
check "kiln-gen: the same arguments give the same bytes" diff -r "$raw" "$work/raw_again"
"$GEN" useractions --rows 30000 --seed 12 --files 5 --output "$work/raw_other" 2>>"$work/last.err"
check "kiln-gen: another seed gives other input" bash -c "! diff -rq '$raw' '$work/raw_other' >/dev/null"
"$GEN" useractions --rows 10 --output "$raw" 2>"$work/last.err"
check "kiln-gen: an existing directory is refused (73)" test $? = 73

# ---------------------------------------------------------------- the job
# Users are 1..750; three regions split at users 100 and 300.
"$KILN" create useractions --family content:compression=none \
    --split "$(be_key 4 100)" --split "$(be_key 4 300)" >/dev/null 2>>"$work/last.err"
check "kiln create useractions" test $? = 0
run_view 2 "$work/out2" --input "$raw"
check "job np=2: exits 0" test "$rc" = 0 -a -f "$work/out2/_SUCCESS"
run_view 3 "$work/out3" --input "$raw"
check "job np=3: exits 0" test "$rc" = 0 -a -f "$work/out3/_SUCCESS"
check "np=2 and np=3 write the same HFiles byte for byte" same_output "$work/out2" "$work/out3"
check "one HFile per region" test "$(ls "$work/out2/content" | wc -l)" = 3
check "every HFile passes kiln hfile check" bash -c "'$KILN' hfile check '$work'/out2/content/* >/dev/null"

T1=1709856000000   # 2024-03-08
T2=1710028800000   # 2024-03-10
$CHECK expect useractions --out "$work" "$raw" -- \
    "latest 1 10" "latest 450 10" "page 1 7 3" "window 1 $T1 $T2" "latest 999999 5" \
    "page 2 25 2" 2>>"$work/last.err"
check "brute force ran" test $? = 0
dump_cells "$work/out2" >"$work/got_cells.txt"
same "every cell equals the brute force" "$work/cells.txt" "$work/got_cells.txt"
counters_of "$work/out2" useractions >"$work/got_counters.txt"
same "Bad Lines and Duplicate rows counters equal the brute force" "$work/counters.txt" "$work/got_counters.txt"
check "bad lines were generated and counted" grep -q '^Bad Lines=[1-9]' "$work/counters.txt"

"$KILN" load useractions "$work/out2" --no-split >/dev/null 2>>"$work/last.err"
check "kiln load --no-split (every file inside one region)" test $? = 0
check "kiln count equals the brute force's rows" \
    test "$("$KILN" count useractions 2>/dev/null | grep -o '^[0-9]*')" = "$(cat "$work/rows.txt")"

# ---------------------------------------------------------------- queries
u1=$(be_key 4 1)
u450=$(be_key 4 450)
kiln_lines scan useractions --prefix "$u1" --limit 10 >"$work/k1.txt"
same "kiln: user 1's latest 10" "$work/q1.txt" "$work/k1.txt"
kiln_lines scan useractions --prefix "$u450" --limit 10 >"$work/k2.txt"
same "kiln: user 450's latest 10" "$work/q2.txt" "$work/k2.txt"
kiln_page useractions "$u1" 7 3 >"$work/k3.txt"
same "kiln: user 1, page 3 of 7 (--start last row + \\x00)" "$work/q3.txt" "$work/k3.txt"
# window [T1, T2): from <user><MAX - (T2 - 1)> to <user><MAX - (T1 - 1)>
MAX=9223372036854775807
w_start=$(be_key 4 1)$(be_key 8 $((MAX - T2 + 1)))
w_stop=$(be_key 4 1)$(be_key 8 $((MAX - T1 + 1)))
kiln_lines scan useractions --start "$w_start" --stop "$w_stop" >"$work/k4.txt"
same "kiln: user 1's actions in [2024-03-08, 2024-03-10)" "$work/q4.txt" "$work/k4.txt"
kiln_lines scan useractions --prefix "$(be_key 4 999999)" --limit 5 >"$work/k5.txt"
ALLOW_EMPTY=1 same "kiln: a user without actions: no rows" "$work/q5.txt" "$work/k5.txt"
kiln_page useractions "$(be_key 4 2)" 25 2 >"$work/k6.txt"
same "kiln: user 2, page 2 of 25" "$work/q6.txt" "$work/k6.txt"

start_server || views_finish
p1=$(pct "$u1")
http_lines "useractions/*?prefix=$p1&limit=10" >"$work/h1.txt"
same "HTTP: user 1's latest 10" "$work/q1.txt" "$work/h1.txt"
http_lines "useractions/*?prefix=$(pct "$u450")&limit=10" >"$work/h2.txt"
same "HTTP: user 450's latest 10" "$work/q2.txt" "$work/h2.txt"
http_page useractions "prefix=$p1" 7 3 >"$work/h3.txt"
same "HTTP: user 1, page 3 of 7 (next_startrow)" "$work/q3.txt" "$work/h3.txt"
http_lines "useractions/*?startrow=$(pct "$w_start")&endrow=$(pct "$w_stop")" >"$work/h4.txt"
same "HTTP: user 1's actions in [2024-03-08, 2024-03-10)" "$work/q4.txt" "$work/h4.txt"
http_page useractions "prefix=$(pct "$(be_key 4 2)")" 25 2 >"$work/h6.txt"
same "HTTP: user 2, page 2 of 25" "$work/q6.txt" "$work/h6.txt"
"$KILN" --server "$HOSTPORT" scan useractions --prefix "$u1" --limit 10 --json | $CHECK json >"$work/s1.txt"
same "kiln --server: user 1's latest 10" "$work/q1.txt" "$work/s1.txt"
row=$(head -1 "$work/q1.txt" | cut -f1)
http_lines "useractions/$(pct "$row")" >"$work/h7.txt"
head -2 "$work/q1.txt" >"$work/q7.txt"
same "HTTP: Get of user 1's newest action" "$work/q7.txt" "$work/h7.txt"
check "kiln-server stops cleanly on SIGTERM" stop_server

# ---------------------------------------------------------------- refusals
run_view 2 "$work/out2" --input "$raw"
check "an existing output directory: exit 73" test "$rc" = 73
run_view 2 "$work/strict" --input "$raw" -D useractions.skip.bad.lines=false
check "skip.bad.lines=false: exit 65 naming file and line, no output" \
    bash -c "[ $rc = 65 ] && grep -Eq 'actions-0000[0-4]\.tsv:[0-9]+: bad line' '$work/last.err' && [ ! -e '$work/strict' ]"
./run_job.sh -n 2 useractions --input "$raw" >/dev/null 2>"$work/last.err"
check "no --output: exit 64" test $? = 64
run_view 2 "$work/x" --input "$raw" --nope
check "an unknown argument: exit 64" test "$rc" = 64
"$KILN" create ua_other --family info >/dev/null 2>&1
run_view 2 "$work/y" --input "$raw" --table ua_other
check "a table without the content family: exit 64 naming it" \
    bash -c "[ $rc = 64 ] && grep -q \"has no family 'content'\" '$work/last.err'"
check "useractions --help" bash -c "./run_job.sh useractions --help | grep -q '^Usage: kiln-mr useractions'"

views_finish
