#!/usr/bin/env bash
# follows_test.sh -- the follows view end to end: a kiln-gen edge list (bad
# lines, self-follows, repeated edges), the job at -np 2 and 3 (byte-
# identical), every cell and counter equal to views_check.py's brute force,
# `kiln load`, and the paged queries -- whom A follows, who follows A, page
# K of N -- through kiln (--start after the last row) and kiln-server
# (next_startrow) equal to the brute force. Prints "N passed, N failed".
set -u
VIEW=follows
. "$(dirname "$0")/lib.sh"
views_begin

raw=$work/raw
"$GEN" follows --rows 30000 --seed 9 --files 4 --bad 3 --output "$raw" 2>>"$work/last.err"
check "kiln-gen follows: exits 0" test $? = 0
# a self-follow, a bad line; named to come first, so that rank 0 logs it
printf '5\t5\t1672531200000\n' >"$raw/a-self.tsv"

"$KILN" create follows --family e --split "$(be_key 4 300)" --split "$(be_key 4 900)" \
    >/dev/null 2>>"$work/last.err"
check "kiln create follows" test $? = 0
run_view 2 "$work/out2" --input "$raw"
check "job np=2: exits 0" test "$rc" = 0 -a -f "$work/out2/_SUCCESS"
run_view 3 "$work/out3" --input "$raw"
check "job np=3: exits 0" test "$rc" = 0 -a -f "$work/out3/_SUCCESS"
check "np=2 and np=3 write the same HFiles byte for byte" same_output "$work/out2" "$work/out3"
check "one HFile per region" test "$(ls "$work/out2/e" | wc -l)" = 3

$CHECK expect follows --out "$work" "$raw" -- \
    "follows 1 20 1" "followedby 1 20 1" "followedby 1 20 3" "follows 7 5 2" \
    "followedby 1 1000000 1" "followedby 1499 20 1" "follows 999999 20 1" 2>>"$work/last.err"
check "brute force ran" test $? = 0
dump_cells "$work/out2" >"$work/got_cells.txt"
same "every cell equals the brute force" "$work/cells.txt" "$work/got_cells.txt"
counters_of "$work/out2" follows >"$work/got_counters.txt"
same "Bad Lines and Duplicate rows counters equal the brute force" "$work/counters.txt" "$work/got_counters.txt"
check "the self-follow was logged as a bad line" \
    grep -q "a-self.tsv:1: a user following themself" "$work/job.err"

"$KILN" load follows "$work/out2" --no-split >/dev/null 2>>"$work/last.err"
check "kiln load follows --no-split" test $? = 0
check "kiln count: two rows per distinct edge, as the brute force" \
    test "$("$KILN" count follows 2>/dev/null | grep -o '^[0-9]*')" = "$(cat "$work/rows.txt")"

# ---------------------------------------------------------------- queries
out1="$(be_key 4 1)follows"
in1="$(be_key 4 1)followedby"
kiln_page follows "$out1" 20 1 >"$work/k1.txt"
same "kiln: whom user 1 follows, page 1 of 20" "$work/q1.txt" "$work/k1.txt"
kiln_page follows "$in1" 20 1 >"$work/k2.txt"
same "kiln: who follows user 1, page 1 of 20" "$work/q2.txt" "$work/k2.txt"
kiln_page follows "$in1" 20 3 >"$work/k3.txt"
same "kiln: who follows user 1, page 3 of 20" "$work/q3.txt" "$work/k3.txt"
kiln_page follows "$(be_key 4 7)follows" 5 2 >"$work/k4.txt"
same "kiln: whom user 7 follows, page 2 of 5" "$work/q4.txt" "$work/k4.txt"
check "kiln count --prefix: user 1's followers, as the brute force" \
    test "$("$KILN" count follows --prefix "$in1" 2>/dev/null | grep -o '^[0-9]*')" = "$(wc -l <"$work/q5.txt")"
kiln_page follows "$(be_key 4 1499)followedby" 20 1 >"$work/k6.txt"
ALLOW_EMPTY=1 same "kiln: who follows user 1499 (few or none)" "$work/q6.txt" "$work/k6.txt"
kiln_page follows "$(be_key 4 999999)follows" 20 1 >"$work/k7.txt"
ALLOW_EMPTY=1 same "kiln: an unknown user follows nobody" "$work/q7.txt" "$work/k7.txt"

start_server || views_finish
http_page follows "prefix=$(pct "$out1")" 20 1 >"$work/h1.txt"
same "HTTP: whom user 1 follows, page 1 of 20" "$work/q1.txt" "$work/h1.txt"
http_page follows "prefix=$(pct "$in1")" 20 1 >"$work/h2.txt"
same "HTTP: who follows user 1, page 1 of 20" "$work/q2.txt" "$work/h2.txt"
http_page follows "prefix=$(pct "$in1")" 20 3 >"$work/h3.txt"
same "HTTP: who follows user 1, page 3 of 20 (next_startrow)" "$work/q3.txt" "$work/h3.txt"
http_page follows "prefix=$(pct "$(be_key 4 7)follows")" 5 2 >"$work/h4.txt"
same "HTTP: whom user 7 follows, page 2 of 5" "$work/q4.txt" "$work/h4.txt"
check "kiln-server stops cleanly on SIGTERM" stop_server

views_finish
