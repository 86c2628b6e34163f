#!/usr/bin/env bash
# reviews_test.sh -- the reviews view end to end: kiln-gen reviews of books
# by users (bad lines, revised reviews, reviews without text), the job at -np
# 2 and 3 (byte-identical), every cell and counter equal to views_check.py's
# brute force, `kiln load`, and the two prefix scans -- a user's reviews, a
# book's reviews -- through kiln and kiln-server (paged too) equal to the
# brute force. Prints "N passed, N failed".
set -u
VIEW=reviews
. "$(dirname "$0")/lib.sh"
views_begin

raw=$work/raw
"$GEN" reviews --rows 20000 --seed 21 --files 4 --bad 3 --output "$raw" 2>>"$work/last.err"
check "kiln-gen reviews: exits 0" test $? = 0

# the book rows ('b...') and the user rows ('u...') in regions of their own
"$KILN" create reviews --family r --split "b$(be_key 4 300)" --split u \
    --split "u$(be_key 4 1000)" >/dev/null 2>>"$work/last.err"
check "kiln create reviews" test $? = 0
run_view 2 "$work/out2" --input "$raw"
check "job np=2: exits 0" test "$rc" = 0 -a -f "$work/out2/_SUCCESS"
run_view 3 "$work/out3" --input "$raw"
check "job np=3: exits 0" test "$rc" = 0 -a -f "$work/out3/_SUCCESS"
check "np=2 and np=3 write the same HFiles byte for byte" same_output "$work/out2" "$work/out3"
check "one HFile per region" test "$(ls "$work/out2/r" | wc -l)" = 4

$CHECK expect reviews --out "$work" "$raw" -- \
    "user 1" "user 1200" "book 1" "book 777" "user 999999" 2>>"$work/last.err"
check "brute force ran" test $? = 0
dump_cells "$work/out2" >"$work/got_cells.txt"
same "every cell equals the brute force" "$work/cells.txt" "$work/got_cells.txt"
counters_of "$work/out2" reviews >"$work/got_counters.txt"
same "Bad Lines and Duplicate rows counters equal the brute force" "$work/counters.txt" "$work/got_counters.txt"
stars=$(grep -c "	r:stars	" "$work/got_cells.txt")
texts=$(grep -c "	r:text	" "$work/got_cells.txt")
check "reviews without text have no r:text cell ($texts of $stars)" test "$texts" -gt 0 -a "$texts" -lt "$stars"

"$KILN" load reviews "$work/out2" --no-split >/dev/null 2>>"$work/last.err"
check "kiln load reviews --no-split" test $? = 0
check "kiln count: two rows per (user, book), as the brute force" \
    test "$("$KILN" count reviews 2>/dev/null | grep -o '^[0-9]*')" = "$(cat "$work/rows.txt")"

# ---------------------------------------------------------------- queries
start_server || views_finish
n=0
for q in "u 1" "u 1200" "b 1" "b 777" "u 999999"; do
    n=$((n + 1))
    set -- $q
    p="$1$(be_key 4 "$2")"
    [ "$n" = 5 ] && export ALLOW_EMPTY=1
    kiln_lines scan reviews --prefix "$p" >"$work/k$n.txt"
    same "kiln: the reviews of $q (one prefix scan)" "$work/q$n.txt" "$work/k$n.txt"
    http_lines "reviews/*?prefix=$(pct "$p")" >"$work/h$n.txt"
    same "HTTP: the reviews of $q (one prefix scan)" "$work/q$n.txt" "$work/h$n.txt"
done
unset ALLOW_EMPTY
# book 1 is the most reviewed: its reviews 10 at a time, the second page
awk -F'\t' '!seen[$1]++ { r++ } r > 10 && r <= 20' "$work/q3.txt" >"$work/q3p2.txt"
http_page reviews "prefix=$(pct "b$(be_key 4 1)")" 10 2 >"$work/h3p2.txt"
same "HTTP: book 1's reviews, page 2 of 10" "$work/q3p2.txt" "$work/h3p2.txt"
kiln_page reviews "b$(be_key 4 1)" 10 2 >"$work/k3p2.txt"
same "kiln: book 1's reviews, page 2 of 10" "$work/q3p2.txt" "$work/k3p2.txt"
check "kiln-server stops cleanly on SIGTERM" stop_server

views_finish
