#!/usr/bin/env bash
# copytable_test.sh -- HBase's CopyTable and VerifyReplication (copytable,
# verifytables) end to end, over the source tables of tests/tools/lib.sh:
#
#   - unsalted -> salted (every version), the same HFiles at -np 1 and 3;
#   - salted -> unsalted with --all-cells (delete markers, masked versions
#     and cells stored twice counted against the brute force's raw cells);
#   - a family renamed (--families a:x,b, c left out);
#   - a row range, with HBase's option names (--startrow=, --new.name=);
#   - a time range (--starttime, --endtime);
#
# each loaded with `kiln load`, its cells (`kiln scan --versions`) equal to
# tools_model.py's brute force over the generated writes and to the
# source's, then verifytables (np 1 and 3) reports GOODROWS = the rows and
# no bad row -- or, for the row range, exactly the rows outside it as
# ONLY_IN_SOURCE_TABLE_ROWS. Then one row of a copy changed, one deleted and
# one added online: verifytables names exactly those rows with their reasons
# and counters (and with --compare cells, the cell that differs). Errors: a
# target family missing, no target table, a family renamed twice.
# Prints "N passed, N failed".
set -u
TOOL=copytable
. "$(dirname "$0")/lib.sh"
tools_begin
tools_tables 3000

M=$work/gen/model.json
VGROUP='org.apache.hadoop.hbase.mapreduce.replication.VerifyReplication$Verifier$Counters'
"$KILN" create c_s "${FAMS[@]}" --salt-buckets 3 >/dev/null 2>>"$work/last.err"
check "kiln create c_s (salted, 3 buckets)" test $? = 0
"$KILN" create c_u "${FAMS[@]}" --split row00500 --split row01500 --split row02500 \
    >/dev/null 2>>"$work/last.err"
check "kiln create c_u (4 regions)" test $? = 0
"$KILN" create r_u --family x:versions=3 --family b:versions=2 --split row01500 \
    >/dev/null 2>>"$work/last.err"
check "kiln create r_u (families x and b)" test $? = 0
"$KILN" create g_s "${FAMS[@]}" --salt-buckets 2 >/dev/null 2>>"$work/last.err"
check "kiln create g_s (salted, 2 buckets)" test $? = 0
ROWS=$($MODEL rowcount "$M")

# same_hfiles A B: two outputs with the same files, byte for byte
same_hfiles() {
    [ "$(cd "$1" && find . ! -name _job.json | sort)" = "$(cd "$2" && find . ! -name _job.json | sort)" ] ||
        return 1
    local f
    for f in $(cd "$1" && find . -type f ! -name '_*'); do
        cmp -s "$1/$f" "$2/$f" || { echo "$f differs" >&2; return 1; }
    done
}

# verify NAME NP WANT_GOOD WANT_ONLY_SOURCE WANT_ONLY_PEER WANT_CONTENT ARGS...:
# verifytables with ARGS; its counters against the wanted ones; the output
# in $vout
v=0
verify() {
    local name=$1 np=$2 good=$3 osrc=$4 opeer=$5 content=$6
    shift 6
    v=$((v + 1))
    vout=$work/vt$v
    run_tool "$np" verifytables --output "$vout" "$@"
    if [ "$rc" != 0 ]; then
        bad "$name: the job failed" "$work/job.err"
        return
    fi
    local want="GOODROWS=$good BADROWS=$((osrc + opeer + content)) ONLY_IN_SOURCE_TABLE_ROWS=$osrc"
    want+=" ONLY_IN_PEER_TABLE_ROWS=$opeer CONTENT_DIFFERENT_ROWS=$content"
    local got="" k
    for k in GOODROWS BADROWS ONLY_IN_SOURCE_TABLE_ROWS ONLY_IN_PEER_TABLE_ROWS CONTENT_DIFFERENT_ROWS; do
        got+="${got:+ }$k=$(counter "$vout" "$VGROUP" $k)"
    done
    equal "$name" "$want" "$got"
}

# ---------------------------------------------------------------- unsalted -> salted
run_tool 3 copytable t_u --new-name c_s --versions 3 --output "$work/ct1"
check "copytable t_u -> c_s (salted) np=3: exits 0" test "$rc" = 0 -a -f "$work/ct1/_SUCCESS"
$MODEL cells "$M" --versions 3 >"$work/cells_all.txt"
equal "t_u -> c_s: Cells written is the brute force's visible cells" "$(wc -l <"$work/cells_all.txt")" \
    "$(counter "$work/ct1" CopyTable "Cells written")"
equal "t_u -> c_s: Rows read" "$ROWS" "$(counter "$work/ct1" CopyTable "Rows read")"
equal "t_u -> c_s: no delete marker without --all-cells" 0 \
    "$(counter "$work/ct1" CopyTable "Delete markers written")"
check "t_u -> c_s: one HFile per region (3) and family" \
    test "$(find "$work/ct1/a" "$work/ct1/b" "$work/ct1/c" -type f | wc -l)" = 9
run_tool 1 copytable t_u --new-name c_s --versions 3 --output "$work/ct1b"
check "t_u -> c_s: the same HFiles at np=1 and np=3" same_hfiles "$work/ct1" "$work/ct1b"
"$KILN" load c_s "$work/ct1" >/dev/null 2>>"$work/last.err"
check "kiln load c_s" test $? = 0
$MODEL cells "$M" --versions 10 >"$work/visible.txt"
scan_lines c_s >"$work/scan_c_s.txt" 2>>"$work/last.err"
same "c_s: every version equals the brute force" "$work/visible.txt" "$work/scan_c_s.txt"
scan_lines t_u >"$work/scan_t_u.txt" 2>>"$work/last.err"
same "c_s: every version equals the source's (kiln scan)" "$work/scan_t_u.txt" "$work/scan_c_s.txt"
for np in 1 3; do
    verify "verifytables t_u c_s np=$np: every row good" $np "$ROWS" 0 0 0 --source t_u --peer c_s --versions 3
    check "verifytables t_u c_s np=$np: no bad row listed" test ! -s "$vout/part-r-00000"
done
check "verifytables: two table inputs reported" grep -q '"input_table_2":{"table":"default:c_s","version":1,' \
    "$vout/_job.json"

# ---------------------------------------------------------------- salted -> unsalted, raw
run_tool 3 copytable --input-table t_s --new-name c_u --all-cells --output "$work/ct2"
check "copytable t_s -> c_u (unsalted) --all-cells np=3: exits 0" test "$rc" = 0 -a -f "$work/ct2/_SUCCESS"
raw=$($MODEL raw "$M")
got="cells=$(counter "$work/ct2" CopyTable "Cells written") markers=$(counter "$work/ct2" CopyTable \
    "Delete markers written") repeated=$(counter "$work/ct2" CopyTable "Repeated cells skipped")"
equal "t_s -> c_u --all-cells: cells, markers and repeats are the brute force's raw cells" "${raw% rows=*}" "$got"
check "t_s -> c_u: the raw copy has delete markers and repeats to test" \
    test "$(counter "$work/ct2" CopyTable "Delete markers written")" -gt 0 -a \
    "$(counter "$work/ct2" CopyTable "Repeated cells skipped")" -gt 0
run_tool 1 copytable --input-table t_s --new-name c_u --all-cells --output "$work/ct2b"
check "t_s -> c_u: the same HFiles at np=1 and np=3" same_hfiles "$work/ct2" "$work/ct2b"
"$KILN" load c_u "$work/ct2" >/dev/null 2>>"$work/last.err"
check "kiln load c_u" test $? = 0
scan_lines c_u >"$work/scan_c_u.txt" 2>>"$work/last.err"
same "c_u: every version equals the brute force" "$work/visible.txt" "$work/scan_c_u.txt"
verify "verifytables --raw t_s c_u np=3: every stored row good" 3 "${raw##*rows=}" 0 0 0 \
    --source t_s --peer c_u --raw
verify "verifytables --compare cells t_s c_u np=1: every row good" 1 "$ROWS" 0 0 0 \
    --source t_s --peer c_u --versions 3 --compare cells

# ---------------------------------------------------------------- a family renamed
run_tool 3 copytable t_u --new-name r_u --families a:x,b --versions 3 --output "$work/ct3"
check "copytable t_u -> r_u --families a:x,b np=3: exits 0" test "$rc" = 0 -a -f "$work/ct3/_SUCCESS"
check "t_u -> r_u: HFiles for x and b only" test "$(ls "$work/ct3" | grep -v '^_' | tr '\n' ' ')" = "b x "
"$KILN" load r_u "$work/ct3" >/dev/null 2>>"$work/last.err"
check "kiln load r_u" test $? = 0
$MODEL cells "$M" --versions 10 --columns a,b --rename a:x >"$work/visible_ab.txt"
scan_lines r_u >"$work/scan_r_u.txt" 2>>"$work/last.err"
same "r_u: every version equals the brute force (a renamed x)" "$work/visible_ab.txt" "$work/scan_r_u.txt"
"$KILN" scan t_u --versions 10 --columns a,b --json 2>>"$work/last.err" |
    $MODEL scanjson --rename a:x >"$work/scan_t_u_ab.txt"
same "r_u: every version equals the source's families a and b (kiln scan)" "$work/scan_t_u_ab.txt" \
    "$work/scan_r_u.txt"
AB=$($MODEL rowcount "$M" --columns a,b)
verify "verifytables --families a:x,b t_u r_u np=3: every row good" 3 "$AB" 0 0 0 \
    --source t_u --peer r_u --families a:x,b --versions 3
run_tool 1 verifytables --source t_u --peer r_u --versions 3 --output "$work/vt_nomap"
check "without --families the renamed family makes rows differ" \
    test "$(counter "$work/vt_nomap" "$VGROUP" BADROWS)" -gt 0

# ---------------------------------------------------------------- a row range, HBase's names
run_tool 3 copytable --startrow=row01000 --stoprow=row02000 --new.name=g_s --versions=3 t_u \
    --output "$work/ct4"
check "copytable --startrow= --stoprow= --new.name= t_u np=3: exits 0" test "$rc" = 0 -a -f "$work/ct4/_SUCCESS"
"$KILN" load g_s "$work/ct4" >/dev/null 2>>"$work/last.err"
check "kiln load g_s" test $? = 0
$MODEL cells "$M" --versions 10 --start row01000 --stop row02000 >"$work/visible_range.txt"
scan_lines g_s >"$work/scan_g_s.txt" 2>>"$work/last.err"
same "g_s: the range's cells equal the brute force" "$work/visible_range.txt" "$work/scan_g_s.txt"
IN=$($MODEL rowcount "$M" --start row01000 --stop row02000)
verify "verifytables t_u g_s np=3: the rows outside the range only in the source" 3 "$IN" \
    $((ROWS - IN)) 0 0 --source t_u --peer g_s --versions 3
$MODEL rows "$M" >"$work/rows_all.txt"
$MODEL rows "$M" --start row01000 --stop row02000 >"$work/rows_in.txt"
grep -vxFf "$work/rows_in.txt" "$work/rows_all.txt" | sed 's/$/\tONLY_IN_SOURCE_TABLE_ROWS/' >"$work/want_out.txt"
cut -f1,2 "$vout/part-r-00000" >"$work/got_out.txt"
same "verifytables t_u g_s: the rows outside the range listed, in order" "$work/want_out.txt" "$work/got_out.txt"
verify "verifytables t_u g_s with the range np=1: every row good" 1 "$IN" 0 0 0 \
    --source t_u --peer g_s --versions 3 --start-row row01000 --stop-row row02000

# ---------------------------------------------------------------- a time range
T8=$((1700000000000 + 8000))
T21=$((1700000000000 + 21000))
"$KILN" create w_u "${FAMS[@]}" >/dev/null 2>>"$work/last.err"
run_tool 3 copytable --input-table t_s --new-name w_u --starttime "$T8" --endtime "$T21" --versions 3 \
    --output "$work/ct5"
check "copytable --starttime --endtime t_s -> w_u (one region) np=3: exits 0" test "$rc" = 0
"$KILN" load w_u "$work/ct5" >/dev/null 2>>"$work/last.err"
check "kiln load w_u" test $? = 0
$MODEL cells "$M" --versions 10 --ts-min "$T8" --ts-max "$T21" >"$work/visible_time.txt"
scan_lines w_u >"$work/scan_w_u.txt" 2>>"$work/last.err"
same "w_u: the time range's cells equal the brute force" "$work/visible_time.txt" "$work/scan_w_u.txt"
verify "verifytables t_s w_u in the time range np=3: every row good" 3 \
    "$($MODEL rowcount "$M" --ts-min "$T8" --ts-max "$T21")" 0 0 0 \
    --source t_s --peer w_u --versions 3 --starttime "$T8" --endtime "$T21"

# ---------------------------------------------------------------- a copy changed
R1=$(sed -n 11p "$work/rows_all.txt")
R2=$(sed -n 2000p "$work/rows_all.txt")
"$KILN" put c_u "$R1" a:x changed --ts 1700000060000 >/dev/null 2>>"$work/last.err" &&
    "$KILN" delete c_u "$R2" --ts 1700000100000 >/dev/null 2>>"$work/last.err" &&
    "$KILN" put c_u "only-in-peer" b:z new --ts 1700000000001 >/dev/null 2>>"$work/last.err" &&
    "$KILN" flush c_u >/dev/null 2>>"$work/last.err"
check "c_u: $R1 changed, $R2 deleted, only-in-peer added (online, flushed)" test $? = 0
N2=$($MODEL cells "$M" --versions 3 --start "$R2" --stop "$R2\\x00" | wc -l)
printf '%s\tCONTENT_DIFFERENT_ROWS\n%s\tONLY_IN_SOURCE_TABLE_ROWS\nonly-in-peer\tONLY_IN_PEER_TABLE_ROWS\n' \
    "$R1" "$R2" | LC_ALL=C sort -t "$(printf '\t')" -k1,1 >"$work/want_bad.txt"
for np in 1 3; do
    verify "verifytables t_s c_u np=$np after the changes" $np $((ROWS - 2)) 1 1 1 \
        --source t_s --peer c_u --versions 3
    cut -f1,2 "$vout/part-r-00000" >"$work/got_bad$np.txt"
    same "np=$np: exactly the three rows, with their reasons" "$work/want_bad.txt" "$work/got_bad$np.txt"
    cp "$vout/part-r-00000" "$work/bad$np.txt"
done
check "the same list at np=1 and np=3" cmp "$work/bad1.txt" "$work/bad3.txt"
check "the deleted row's line counts its source cells" \
    grep -qxF "$R2	ONLY_IN_SOURCE_TABLE_ROWS	source $N2 cells, peer 0 cells" "$work/bad1.txt"
check "the added row's line counts its peer cell" \
    grep -qxF "only-in-peer	ONLY_IN_PEER_TABLE_ROWS	source 0 cells, peer 1 cells" "$work/bad1.txt"
verify "verifytables --compare cells after the changes np=3" 3 $((ROWS - 2)) 1 1 1 \
    --source t_s --peer c_u --versions 3 --compare cells
check "--compare cells names the cell that differs" \
    grep -q "^$R1	CONTENT_DIFFERENT_ROWS	.*first difference: .*a:x/1700000060000/Put" "$vout/part-r-00000"
verify "verifytables t_s c_u --columns c (the changes are elsewhere)" 3 \
    "$($MODEL rowcount "$M" --columns c --stop "$R2")" 0 0 0 --source t_s --peer c_u --columns c --stop-row "$R2"

# ---------------------------------------------------------------- errors
run_tool 1 copytable t_u --new-name r_u --output "$work/cterr1"
check "a target without the source's family is refused, naming it" \
    grep -q "target table default:r_u has no family 'a'" "$work/job.err"
run_tool 1 copytable t_u --new-name nosuch --output "$work/cterr2"
check "a target that does not exist is refused, naming it" \
    grep -q "target table default:nosuch does not exist" "$work/job.err"
run_tool 1 copytable t_u --new-name c_u --families zz --output "$work/cterr3"
check "a source family that does not exist is refused, naming it" \
    grep -q "table default:t_u has no family 'zz'" "$work/job.err"
run_tool 1 copytable t_u --new-name r_u --families a:x,b:x --output "$work/cterr4"
check "two families into one is refused" grep -q "would both be copied into 'x'" "$work/job.err"
run_tool 1 copytable t_u --new-name r_u --families a:y --output "$work/cterr5"
check "a renamed family the target lacks is refused, naming both" \
    grep -q "no family 'y' (to receive default:t_u's family 'a'" "$work/job.err"
run_tool 1 verifytables --source t_u --output "$work/vterr"
check "verifytables without --peer is refused" grep -q "peer" "$work/job.err"
check "no output is left by a refused job" test ! -e "$work/cterr1" -a ! -e "$work/vterr"

tools_finish
