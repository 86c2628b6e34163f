#!/usr/bin/env bash
# rowcounter_test.sh -- HBase's RowCounter end to end: over an unsalted table
# of three regions and a salted one (tests/tools/lib.sh), at -np 1 and 3,
# the whole table and with --start-row/--stop-row, --prefix, --columns (and
# HBase's positional CF:Q form), --starttime/--endtime and a mix; the ROWS
# counter and the `ROWS<TAB>N` line equal tools_model.py's count from the
# generated writes (deletes, versions and overwrites applied by HBase's
# rules). TABLE@VERSION counts an older version while a newer one is
# current; a
# region cut by -D kiln.table.split.mb=1 into more splits than regions
# counts the same. Prints "N passed, N failed".
set -u
TOOL=rowcounter
. "$(dirname "$0")/lib.sh"
tools_begin
tools_tables 5000 60

T5=$((1700000000000 + 5000))
T12=$((1700000000000 + 12000))
T20=$((1700000000000 + 20000))
T45=$((1700000000000 + 45000))
GROUP='org.apache.hadoop.hbase.mapreduce.RowCounter$RowCounterMapper$Counters'

# count NAME NP TABLE "JOB ARGS" "MODEL ARGS": the job's count against the model's
n=0
count() {
    local name=$1 np=$2 table=$3 jargs=$4 margs=$5 want got line
    n=$((n + 1))
    local out=$work/rc$n
    # shellcheck disable=SC2086
    run_tool "$np" rowcounter --output "$out" $jargs
    if [ "$rc" != 0 ]; then
        bad "$name: the job failed" "$work/job.err"
        return
    fi
    # shellcheck disable=SC2086
    want=$($MODEL rowcount "$work/gen/model.json" $margs)
    got=$(counter "$out" "$GROUP" ROWS)
    line=$(cat "$out/part-r-00000")
    if [ "$got" = "$want" ] && [ "$line" = "ROWS	$want" ] && [ "$want" -gt 0 ]; then
        ok "$name: ROWS=$got"
    else
        bad "$name: ROWS counter '$got', line '$line', the model counts $want"
    fi
}

for t in t_u t_s; do
    for np in 1 3; do
        count "$t np=$np whole table" $np $t "--input-table $t" ""
        count "$t np=$np --start-row/--stop-row" $np $t \
            "--input-table $t --start-row row00777 --stop-row row02345" "--start row00777 --stop row02345"
        count "$t np=$np --columns c (one family)" $np $t "--input-table $t --columns c" "--columns c"
        count "$t np=$np positional TABLE a:q:1 b:w" $np $t "$t a:q:1 b:w" "--columns a:q:1,b:w"
        count "$t np=$np --starttime/--endtime" $np $t \
            "--input-table $t --starttime $T12 --endtime $T20" "--ts-min $T12 --ts-max $T20"
        count "$t np=$np rows, column and time together" $np $t \
            "--input-table $t --start-row row01500 --columns b:z --starttime=$T5 --endtime=$T45" \
            "--start row01500 --columns b:z --ts-min $T5 --ts-max $T45"
    done
    count "$t --prefix row004" 3 $t "--input-table $t --prefix row004" "--prefix row004"
    count "$t --stop-row reaching into the odd rows" 3 $t "--input-table $t --start-row a --stop-row c" \
        "--start a --stop c"
done

# an older version while a newer one is current: t_s keeps version 1 (the
# bulk load) beside 2; t_u gets a version 3 holding the bulk load's cells
# again, covering the online writes (a flush keeps no older batch view), so
# t_u@2 is the older one
hfile_output "$work/hf_bulk_u" bulk 0 2>>"$work/last.err" &&
    "$KILN" load t_u "$work/hf_bulk_u" --covers-until now >/dev/null 2>>"$work/last.err"
check "t_u reloaded with the bulk load's cells, retiring the online writes (version 3)" test $? = 0
count "t_s@1 (the bulk load only) np=3" 3 t_s "--input-table t_s@1" "--phase 1"
check "t_s@1: the report names version 1" grep -q '"input_table":{"table":"default:t_s","version":1,' \
    "$work/rc$n/_job.json"
count "t_s@1 with columns and time np=1" 1 t_s "t_s@1 a --starttime $T12" "--phase 1 --columns a --ts-min $T12"
count "t_u@2 (with the online writes) np=3" 3 t_u "--input-table t_u@2" "--phase 2"
check "t_u@2: the report names version 2" grep -q '"input_table":{"table":"default:t_u","version":2,' \
    "$work/rc$n/_job.json"
count "t_u@2 with rows and columns np=1" 1 t_u "t_u@2 b --start-row row02000" "--columns b --start row02000"
count "t_u (current: version 3, the bulk load's cells) np=3" 3 t_u "--input-table t_u" "--phase 1"
v1=$($MODEL rowcount "$work/gen/model.json" --phase 1)
v2=$($MODEL rowcount "$work/gen/model.json")
check "the two versions differ in rows ($v1, $v2), so @1 is tested" test "$v1" != "$v2"

# more splits than regions: the count is the same
for t in t_u t_s; do
    regions=$("$KILN" regions $t | grep -c '^[0-9][0-9]*	')
    phase=2
    [ $t = t_u ] && phase=1
    count "$t cut at 1 MiB, np=3" 3 $t "--input-table $t -D kiln.table.split.mb=1" "--phase $phase"
    splits=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["input_table"]["splits"])' \
        "$work/rc$n/_job.json")
    if [ "$t" = t_u ]; then
        check "$t: $splits splits for $regions regions (a region over 1 MiB is cut)" \
            test "$splits" -gt "$regions"
    else
        check "$t: $splits splits, at least one per region ($regions)" test "$splits" -ge "$regions"
    fi
done
run_tool 3 rowcounter --input-table t_u --output "$work/rcdefault"
splits=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["input_table"]["splits"])' \
    "$work/rcdefault/_job.json")
equal "t_u uncut: one split per region" 3 "$splits"

# a second, different path: kiln count
check "kiln count t_s agrees" test "$("$KILN" count t_s | grep -o '[0-9]*' | head -1)" = "$v2"

# errors
run_tool 1 rowcounter --input-table t_u --columns nosuch --output "$work/rcbad1"
check "a column of no family is refused, naming it" grep -q "no family 'nosuch'" "$work/job.err"
run_tool 1 rowcounter --input-table t_s@9 --output "$work/rcbad2"
check "a version that is not kept is refused" test "$rc" != 0 -a ! -e "$work/rcbad2"

tools_finish
