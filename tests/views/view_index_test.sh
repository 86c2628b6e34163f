#!/usr/bin/env bash
# view_index_test.sh -- a view job into a salted table with a secondary
# index: useractions into a table created with --salt-buckets 4 and
# -D kiln.index=byname:content:name at -np 2 and 3 (byte-identical output,
# index HFiles beside the table's), every stored row under its bucket byte
# and every cell equal to views_check.py's brute force, `kiln load`, a full
# scan in user key order and index scans (--index byname --value V) equal to
# the brute force's rows; refusals (no table, several tables, a bad spec).
# The same for reviews and follows (two rows per line). Prints "N passed,
# N failed".
set -u
VIEW=useractions
. "$(dirname "$0")/lib.sh"
views_begin

raw=$work/raw
"$GEN" useractions --rows 8000 --seed 21 --files 3 --bad 2 --output "$raw" 2>>"$work/last.err"
check "kiln-gen: exits 0" test $? = 0

# ---------------------------------------------------------------- the job
"$KILN" create useractions --family content:compression=none --salt-buckets 4 \
    >/dev/null 2>>"$work/last.err"
check "kiln create useractions --salt-buckets 4" test $? = 0
IX="kiln.index=byname:content:name"
run_view 2 "$work/out2" --input "$raw" -D "$IX"
check "job np=2 with $IX: exits 0" test "$rc" = 0 -a -f "$work/out2/_SUCCESS"
run_view 3 "$work/out3" --input "$raw" -D "$IX"
check "job np=3: exits 0" test "$rc" = 0 -a -f "$work/out3/_SUCCESS"
check "np=2 and np=3 write the same HFiles byte for byte" same_output "$work/out2" "$work/out3"
check "the index's HFiles and schema are in _index/byname/" \
    bash -c "[ -f '$work/out2/_index/byname/_schema' ] && ls '$work/out2/_index/byname/i/'* >/dev/null"
check "_job.json lists the index" grep -q '"byname"' "$work/out2/_job.json"
check "every HFile passes kiln hfile check" \
    bash -c "'$KILN' hfile check '$work'/out2/content/* '$work'/out2/_index/byname/i/* >/dev/null"

$CHECK expect useractions --out "$work" "$raw" -- \
    "all" "has content:name search" "has content:name purchase" "has content:name logout" \
    "has content:name no_such_action" 2>>"$work/last.err"
check "brute force ran" test $? = 0
# Stored rows are <bucket 0..3><user row>: strip the bucket byte, the rest
# must be the brute force's cells.
for f in "$work"/out2/content/*; do "$KILN" hfile dump "$f" || echo "DUMP FAILED: $f"; done \
    | LC_ALL=C sort >"$work/dump.txt"
check "every stored row starts with a bucket byte 0..3" \
    bash -c "! grep -v '^\\\\x0[0-3]' '$work/dump.txt' | grep -q ."
sed 's/^\\x0[0-3]//' "$work/dump.txt" | LC_ALL=C sort >"$work/got_cells.txt"
same "every cell (bucket byte stripped) equals the brute force" "$work/cells.txt" "$work/got_cells.txt"

"$KILN" load useractions "$work/out2" >/dev/null 2>>"$work/last.err"
check "kiln load (table and index)" test $? = 0
check "kiln count equals the brute force's rows" \
    test "$("$KILN" count useractions 2>/dev/null | grep -o '^[0-9]*')" = "$(cat "$work/rows.txt")"
kiln_lines scan useractions >"$work/k1.txt"
same "kiln scan: every row in user key order" "$work/q1.txt" "$work/k1.txt"
kiln_lines scan useractions --index byname --value search >"$work/k2.txt"
same "kiln scan --index byname --value search" "$work/q2.txt" "$work/k2.txt"
kiln_lines scan useractions --index byname --value purchase >"$work/k3.txt"
same "kiln scan --index byname --value purchase" "$work/q3.txt" "$work/k3.txt"
kiln_lines scan useractions --index byname --value logout >"$work/k4.txt"
same "kiln scan --index byname --value logout" "$work/q4.txt" "$work/k4.txt"
"$KILN" scan useractions --index byname --value no_such_action --json >"$work/k5.json" 2>>"$work/last.err"
check "kiln scan --index byname: a value no row holds: exit 0, no rows" \
    bash -c "[ $? = 0 ] && [ ! -s '$work/q5.txt' ] && [ -z \"\$($CHECK json <'$work/k5.json')\" ]"
check "lines repeating a row left extra index entries (the scans above filter them)" \
    bash -c "[ \$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"counters\"][\"Secondary Index\"][\"Index rows\"])' '$work/out2/_job.json') -gt \$(cat '$work/rows.txt') ]"

# ---------------------------------------------------------------- reviews, follows
# Two rows per line (u/b and follows/followedby), each offered to the index.
"$GEN" reviews --rows 4000 --seed 5 --files 2 --output "$work/raw_r" 2>>"$work/last.err"
"$KILN" create reviews --family r --salt-buckets 3 >/dev/null 2>>"$work/last.err"
check "reviews: kiln-gen, kiln create --salt-buckets 3" test $? = 0
VIEW=reviews run_view 3 "$work/out_r" --input "$work/raw_r" -D "kiln.index=bystars:r:stars"
check "reviews np=3 with kiln.index=bystars:r:stars: exits 0" test "$rc" = 0
mkdir -p "$work/r"
$CHECK expect reviews --out "$work/r" "$work/raw_r" -- "all" "has r:stars 5" "has r:stars 1" \
    2>>"$work/last.err"
"$KILN" load reviews "$work/out_r" >/dev/null 2>>"$work/last.err"
check "reviews: kiln load (table and index)" test $? = 0
kiln_lines scan reviews >"$work/r/k1.txt"
same "reviews: kiln scan equals the brute force" "$work/r/q1.txt" "$work/r/k1.txt"
kiln_lines scan reviews --index bystars --value 5 >"$work/r/k2.txt"
same "reviews: --index bystars --value 5 (u and b rows)" "$work/r/q2.txt" "$work/r/k2.txt"
kiln_lines scan reviews --index bystars --value 1 >"$work/r/k3.txt"
same "reviews: --index bystars --value 1" "$work/r/q3.txt" "$work/r/k3.txt"

"$GEN" follows --rows 3000 --seed 4 --files 2 --output "$work/raw_f" 2>>"$work/last.err"
"$KILN" create follows --family e --salt-buckets 2 >/dev/null 2>>"$work/last.err"
check "follows: kiln-gen, kiln create --salt-buckets 2" test $? = 0
VIEW=follows run_view 2 "$work/out_f" --input "$work/raw_f" -D "kiln.index=bysince:e:since"
check "follows np=2 with kiln.index=bysince:e:since: exits 0" test "$rc" = 0
mkdir -p "$work/f"
# an e:since value some rows hold: the brute force's 100th cell's
$CHECK expect follows --out "$work/f" "$work/raw_f" 2>>"$work/last.err"
since=$(sed -n 100p "$work/f/cells.txt" | cut -f5)
$CHECK expect follows --out "$work/f" "$work/raw_f" -- "all" "has e:since $since" 2>>"$work/last.err"
"$KILN" load follows "$work/out_f" >/dev/null 2>>"$work/last.err"
check "follows: kiln load (table and index)" test $? = 0
kiln_lines scan follows >"$work/f/k1.txt"
same "follows: kiln scan equals the brute force" "$work/f/q1.txt" "$work/f/k1.txt"
kiln_lines scan follows --index bysince --value "$since" >"$work/f/k2.txt"
same "follows: --index bysince --value $since" "$work/f/q2.txt" "$work/f/k2.txt"

# ---------------------------------------------------------------- refusals
run_view 2 "$work/out_nt" --input "$raw" --table not_created -D "$IX"
check "kiln.index for a table not created yet: exit 64 naming it" \
    bash -c "[ '$rc' = 64 ] && grep -q 'not_created' '$work/job.err' && [ ! -e '$work/out_nt/_SUCCESS' ]"
run_view 2 "$work/out_bad" --input "$raw" -D "kiln.index=byname:nofamily:name"
check "kiln.index naming a family the table lacks: exit 64" test "$rc" = 64
VIEW=tslog run_view 2 "$work/out_ts" --input "$raw" -D "$IX"
check "tslog (three tables) refuses kiln.index: exit 64 naming the limitation" \
    bash -c "[ '$rc' = 64 ] && grep -q 'one-table views only' '$work/job.err'"
VIEW=orders run_view 2 "$work/out_o" --customers "$raw" --orders "$raw" --lines "$raw" -D "$IX"
check "orders (joined in reduce) refuses kiln.index: exit 64 naming it" \
    bash -c "[ '$rc' = 64 ] && grep -q 'kiln.index is not supported' '$work/job.err'"

VIEW=view_index
views_finish
