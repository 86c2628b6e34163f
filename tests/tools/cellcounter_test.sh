#!/usr/bin/env bash
# cellcounter_test.sh -- HBase's CellCounter end to end: over an unsalted
# table of three regions and a salted one (tests/tools/lib.sh), at -np 1 and
# 3, the report (Total ROWS, Total Families Across all Rows, Total
# Qualifiers across all Rows, each family, each FAMILY:QUALIFIER, each
# ROW:FAMILY:QUALIFIER_Versions) and the counters (ROWS, CELLS, CF/<family>)
# equal tools_model.py's, computed from the generated writes by HBase's
# rules (every version up to each family's VERSIONS; deletes applied); the
# same bytes at any rank count and for either table. Then HBase's positional
# form with a separator and a prefix, a ^regex, --starttime=/--endtime=,
# --versions, -D hbase.mapreduce.scan.maxversions, --columns, an older
# version, and bad arguments. Prints "N passed, N failed".
set -u
TOOL=cellcounter
. "$(dirname "$0")/lib.sh"
tools_begin
tools_tables 3000

T8=$((1700000000000 + 8000))
T21=$((1700000000000 + 21000))
GROUP='org.apache.hadoop.hbase.mapreduce.CellCounter$CellCounterMapper$Counters'

# counters_of OUTPUT: the CellCounter and CF counters as GROUP/NAME=VALUE lines
counters_of() {
    python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["counters"]
out = []
for g in (sys.argv[2], "CF"):
    for k, v in c.get(g, {}).items():
        out.append("%s/%s=%d" % (g, k, v))
print("\n".join(sorted(out)))' "$1/_job.json" "$GROUP"
}

# report NAME NP "JOB ARGS" "MODEL ARGS": the report and counters against the model's
n=0
report_check() {
    local name=$1 np=$2 jargs=$3 margs=$4
    n=$((n + 1))
    local out=$work/cc$n
    # shellcheck disable=SC2086
    eval "run_tool $np cellcounter $jargs"
    if [ "$rc" != 0 ] || [ ! -f "$out/_SUCCESS" ]; then
        bad "$name: the job failed" "$work/job.err"
        return
    fi
    # shellcheck disable=SC2086
    eval "$MODEL cellcounter \"$work/gen/model.json\" $margs --out \"$work/exp$n.txt\" \
        --counters \"$work/expc$n.txt\""
    same "$name: the report" "$work/exp$n.txt" "$out/part-r-00000"
    counters_of "$out" >"$work/gotc$n.txt"
    same "$name: the counters" "$work/expc$n.txt" "$work/gotc$n.txt"
}

for t in t_u t_s; do
    for np in 1 3; do
        report_check "$t np=$np" $np "$t \"$work/cc\$((n))\"" "--versions 1000"
        eval "whole_${t}_$np=$n"
    done
done
check "the same report at np=1 and np=3 (t_u)" cmp "$work/cc$whole_t_u_1/part-r-00000" "$work/cc$whole_t_u_3/part-r-00000"
check "the same report for the salted table" cmp "$work/cc$whole_t_u_1/part-r-00000" "$work/cc$whole_t_s_3/part-r-00000"
check "the report has version counts above 1" grep -q '_Versions	[23]$' "$work/cc$whole_t_u_1/part-r-00000"
check "the report has rows in printable form" grep -q '^bin\\x00\\x01key:' "$work/cc$whole_t_u_1/part-r-00000"
check "one partition: one part file" test "$(ls "$work/cc$whole_t_s_3" | grep -c '^part-')" = 1

# HBase's positional form: separator and prefix
report_check "t_s np=3 separator ';' and prefix row001" 3 "t_s \"$work/cc\$((n))\" ';' row001" \
    "--versions 1000 --sep ';' --prefix row001"
check "the separator is used" grep -q '^row001[0-9]*;a;x_Versions	' "$work/cc$n/part-r-00000"
# (mpirun takes a lone ':' argument for its own: another separator here)
# (key$ matches the row bin\x00\x01key only if the whole row, NUL and all, is matched)
report_check "t_u np=3 a ^regex (POSIX, found anywhere)" 3 \
    "t_u \"$work/cc\$((n))\" / '^ace\$|slash|0[12]7\$|key\$'" \
    "--versions 1000 --sep / --regex 'ace\$|slash|0[12]7\$|key\$'"
check "the regex matches past a NUL byte in a row" grep -q '^bin\\x00\\x01key/' "$work/cc$n/part-r-00000"
report_check "t_u np=1 --regex with a separator option" 1 \
    "--input-table t_u --output \"$work/cc\$((n))\" --regex 'row02[0-9]9' --separator '|'" \
    "--versions 1000 --regex 'row02[0-9]9' --sep '|'"
report_check "t_s np=3 --starttime=/--endtime= as HBase writes them" 3 \
    "t_s \"$work/cc\$((n))\" --starttime=$T8 --endtime=$T21" "--versions 1000 --ts-min $T8 --ts-max $T21"
report_check "t_u np=3 --versions 1 (newest only)" 3 "t_u --output \"$work/cc\$((n))\" --versions 1" \
    "--versions 1"
report_check "t_s np=1 -D hbase.mapreduce.scan.maxversions=2" 1 \
    "t_s \"$work/cc\$((n))\" -D hbase.mapreduce.scan.maxversions=2" "--versions 2"
report_check "t_u np=3 --columns a,b:z and rows" 3 \
    "--input-table t_u --output \"$work/cc\$((n))\" --columns a,b:z --start-row row00500 --stop-row row02500" \
    "--versions 1000 --columns a,b:z --start row00500 --stop row02500"
report_check "t_s@1 (the bulk load only) np=3" 3 "t_s@1 \"$work/cc\$((n))\"" "--versions 1000 --phase 1"

# errors
run_tool 1 cellcounter t_u
check "no output directory: refused, saying so" grep -q "output DIR" "$work/job.err"
run_tool 1 cellcounter t_u "$work/ccbad" / '^(unclosed'
check "a bad regex is refused, naming it" grep -q "row regex '(unclosed'" "$work/job.err"
run_tool 1 cellcounter nosuch "$work/ccbad"
check "a missing table is refused, naming it" grep -q "no table default:nosuch" "$work/job.err"
run_tool 1 cellcounter t_u "$work/ccbad" -D mapreduce.job.reduces=3
check "more than one reduce is refused (the report is one file)" test "$rc" != 0 -a ! -e "$work/ccbad"

tools_finish
