#!/usr/bin/env bash
# importtsv_test.sh -- end-to-end MPI tests of importtsv: the cells equal an
# awk reading of the same lines (last line wins per cell, bad lines counted),
# the same output at -np 1..4, HFiles that pass `kiln hfile check`, each
# inside its region, HBASE_TS_KEY and another separator, --splits-file with
# escapes, a table's families and regions from the data directory, then
# `kiln load` and `kiln get`; refusals (skip.bad.lines=false, --split against
# an existing table, a family the table lacks, no columns). Prints
# "N passed, N failed" last.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
export BUILD
# Sanitizer builds: ignore Open MPI's own leaks (see lsan.supp); full stack
# unwinding so that a leak's frames inside libmpi are seen and matched.
export LSAN_OPTIONS="fast_unwind_on_malloc=0:suppressions=$PWD/tests/mapreduce/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export OMPI_MCA_mca_component_disable_dlclose=1
KILN=$PWD/$BUILD/bin/kiln

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2" | tail -20; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name" "$work/last.err"; fi; }

work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-importtsv-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
in=$work/in
mkdir -p "$in"

# ---------------------------------------------------------------- input
# Lines: row, ts, a, b. Rows repeat (later lines must win), some values are
# empty, some lines end in CRLF, about 2% are bad in one of three ways.
gen() { # seed, lines, separator
  awk -v seed="$1" -v n="$2" -v sep="$3" 'BEGIN {
    srand(seed)
    for (i = 0; i < n; i++) {
      row = "u" int(rand() * 9000)
      ts = 1000 + int(rand() * 3)
      a = (rand() < 0.05) ? "" : "a" int(rand() * 1e6)
      b = "b" i
      r = rand()
      if (r < 0.007)      line = row sep ts sep a                    # too few fields
      else if (r < 0.012) line = row sep ts sep a sep b sep "extra"  # too many
      else if (r < 0.017) line = sep ts sep a sep b                  # empty row key
      else if (r < 0.022) line = row sep ts "x" sep a sep b          # bad timestamp
      else                line = row sep ts sep a sep b
      printf "%s%s", line, (rand() < 0.1) ? "\r\n" : "\n"
    }
  }'
}
gen 11 30000 '	' > "$in/part1.tsv"
gen 12 25000 '	' > "$in/part2.tsv"
printf 'u1\t1000\tfinal\tno-newline' >> "$in/part2.tsv"
mkdir -p "$work/csv"
gen 13 20000 ',' > "$work/csv/data.csv"

# Reference: the cells awk expects, in `kiln hfile dump` form; and the bad
# line count. with_ts=1 takes the timestamp field, else the fixed one.
reference() { # separator, with_ts (0: timestamp 5000), files...
  local sep=$1 with_ts=$2; shift 2
  for f in "$@"; do cat "$f"; echo; done | awk -F"$sep" -v with_ts="$with_ts" -v bad="$work/bad.count" '
    { sub(/\r$/, "") }
    NF == 0 { next }
    NF != 4 || $1 == "" || (with_ts && $2 !~ /^-?[0-9]+$/) { nbad++; next }
    {
      ts = with_ts ? $2 : 5000
      cell[$1 "\tcf:a\t" ts] = $3
      cell[$1 "\tcf:b\t" ts] = $4
    }
    END {
      for (k in cell) { split(k, p, "\t"); print p[1] "\t" p[2] "\t" p[3] "\tPut\t" cell[k] }
      print nbad + 0 > bad
    }' | LC_ALL=C sort
}
# The generator's last line has no newline: `cat; echo` keeps files apart and
# the empty line it adds after files that do end in newline is skipped (NF == 0).
reference '\t' 1 "$in/part1.tsv" "$in/part2.tsv" > "$work/ref_ts.txt"
bad_ts=$(cat "$work/bad.count")

cols_ts="HBASE_ROW_KEY,HBASE_TS_KEY,cf:a,cf:b"
run() { # np, output, args...
  local np=$1 out=$2; shift 2
  ./run_job.sh -n "$np" --timeout 120 importtsv --table web --data "$work/data" \
    --output "$out" -D kiln.progress.ms=200 "$@" 2> "$work/last.err"
}
counter() { grep -o "\"$2\":[0-9]*" "$1/_job.json" | head -1 | cut -d: -f2; }

# ---------------------------------------------------------------- text output
for np in 1 2 3 4; do
  run "$np" "$work/text$np" --input "$in" --format text --split u3 --split u6 \
    -D importtsv.columns=$cols_ts; rc=$?
  check "text np=$np: exits 0" test "$rc" = 0 -a -f "$work/text$np/_SUCCESS"
done
check "text: cells equal the awk reference (last line wins)" \
  cmp -s <(cat "$work"/text1/part-r-* | LC_ALL=C sort) "$work/ref_ts.txt"
check "text: Bad Lines counter equals the reference ($bad_ts)" \
  test "$(counter "$work/text1" "Bad Lines")" = "$bad_ts"
for np in 2 3 4; do
  check "text np=$np: part files byte-identical to np=1" \
    bash -c "cd '$work/text1' && md5sum part-r-* > '$work/a.md5' && cd '$work/text$np' && md5sum part-r-* | cmp -s - '$work/a.md5'"
done
check "text: bad lines logged with file and line number" \
  grep -Eq "bad line .*/part[12]\.tsv:[0-9]+: (wrong column count|empty row key|bad timestamp)" \
  "$work/last.err"

# ---------------------------------------------------------------- HFile output
printf 'u3\n\nu6\\x2A\n' > "$work/splits.txt"   # u6\x2A is "u6*": below every "u6<digit>" row
for np in 2 4; do
  run "$np" "$work/hf$np" --input "$in" --splits-file "$work/splits.txt" \
    -D importtsv.columns=$cols_ts; rc=$?
  check "hfile np=$np: exits 0 with family directory" test "$rc" = 0 -a -d "$work/hf$np/cf"
done
dump_dir() { # "# N" (the partition, from the file name) before each file's cells
  for f in "$1"/cf/*; do echo "# $((16#$(basename "$f")))"; "$KILN" hfile dump "$f" || echo "DUMP FAILED"; done
}
dump_dir "$work/hf2" > "$work/hf2.dump"
dump_dir "$work/hf4" > "$work/hf4.dump"
check "hfile: np=4 writes the same files and cells as np=2" cmp -s "$work/hf2.dump" "$work/hf4.dump"
check "hfile: every file passes kiln hfile check (order, index, bloom)" \
  bash -c "'$KILN' hfile check '$work'/hf2/cf/* > '$work/last.err' 2>&1"
check "hfile: cells equal the awk reference" \
  cmp -s <(grep -v '^#' "$work/hf2.dump" | LC_ALL=C sort) "$work/ref_ts.txt"
# Each file inside its region: file N holds rows in [split N-1, split N).
check "hfile: every file lies inside one region" awk -F'\t' '
  BEGIN { s[1] = "u3"; s[2] = "u6*" }
  /^# / { p = substr($0, 3) + 0; next }
  { if ((p > 0 && $1 < s[p]) || (p < 2 && $1 >= s[p + 1])) { print "row " $1 " in file " p; bad = 1 } }
  END { exit bad }' "$work/hf2.dump"
check "hfile: three regions hold data" test "$(ls "$work/hf2/cf" | wc -l)" = 3

# ---------------------------------------------------------------- separator, fixed timestamp
run 3 "$work/csv_out" --input "$work/csv" --format text -D importtsv.separator=, \
  -D importtsv.columns=HBASE_ROW_KEY,cf:ts,cf:a,cf:b -D importtsv.timestamp=5000; rc=$?
check "separator ',': exits 0" test "$rc" = 0
# Here the second field is a plain column (cf:ts) and every cell has ts 5000.
reference_csv() {
  awk -F',' '{ sub(/\r$/, "") } NF != 4 || $1 == "" { next }
    { cell[$1 "\tcf:ts"] = $2; cell[$1 "\tcf:a"] = $3; cell[$1 "\tcf:b"] = $4 }
    END { for (k in cell) { split(k, p, "\t"); print p[1] "\t" p[2] "\t5000\tPut\t" cell[k] } }' \
    "$work/csv/data.csv" | LC_ALL=C sort
}
check "separator ',': cells equal the awk reference" \
  cmp -s <(cat "$work"/csv_out/part-r-* | LC_ALL=C sort) <(reference_csv)

# ---------------------------------------------------------------- skew
# One row key with a million lines (~50 MB of values in one key group) and a
# 1 MiB sort buffer: the group streams through the merge, memory stays small.
mkdir -p "$work/skew"
awk 'BEGIN { for (i = 1; i <= 1000000; i++) printf "hot\ta%07d-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\tb%d\n", i, i
             for (i = 0; i < 1000; i++) printf "r%d\tv%d\tw%d\n", i, i, i }' > "$work/skew/in.tsv"
./run_job.sh -n 3 --timeout 120 importtsv --table skew --data "$work/data" --input "$work/skew" \
  --output "$work/skew_out" --format text -D importtsv.columns=HBASE_ROW_KEY,cf:a,cf:b \
  -D importtsv.timestamp=7 -D kiln.sort.mb=1 2> "$work/last.err"; rc=$?
check "skew: one key with 2M cells, exits 0" test "$rc" = 0
check "skew: the last line's values win" bash -c "grep -h '^hot' '$work'/skew_out/part-r-* | cmp -s - <(printf 'hot\tcf:a\t7\tPut\ta1000000-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nhot\tcf:b\t7\tPut\tb1000000\n')"
check "skew: 1999998 duplicate cells counted" test "$(counter "$work/skew_out" "Duplicate cells (last line kept)")" = 1999998
peak=$(counter "$work/skew_out" "Peak Physical memory (bytes)")
case "$BUILD" in
  build-*) echo "skip skew: peak RSS $((peak / 1048576)) MiB (sanitizer shadow memory: no bound to check)" ;;
  *) check "skew: peak RSS per rank $((peak / 1048576)) MiB stays under 40 MiB" test "$peak" -lt $((40 * 1048576)) ;;
esac

# ---------------------------------------------------------------- a table in the data directory
"$KILN" --data "$work/data" create web --family cf:compression=none --family other \
  --split u4 > "$work/last.err" 2>&1
check "kiln create web" test $? = 0
run 3 "$work/tbl" --input "$in" -D importtsv.columns=$cols_ts; rc=$?
check "--table web: exits 0, regions from the schema" \
  bash -c "[ $rc = 0 ] && grep -q '\"regions_from\":\"table schema\"' '$work/tbl/_job.json' && [ \"\$(ls '$work/tbl/cf')\" = \"\$(printf '%032x\n%032x' 0 1)\" ]"
check "--table web: the family's compression (none) is used" \
  bash -c "'$KILN' hfile meta '$work'/tbl/cf/00000000000000000000000000000000 | grep -q 'compression_codec=2 (NONE)'"
"$KILN" --data "$work/data" load web "$work/tbl" > "$work/last.err" 2>&1
check "kiln load web" test $? = 0
want=$(grep -P "^u1\tcf:a\t" "$work/ref_ts.txt" | sort -t '	' -k3,3nr | head -1 | cut -f5)
"$KILN" --data "$work/data" get web u1 cf:a > "$work/get.txt" 2> "$work/last.err"
check "kiln get web u1 cf:a returns the newest value ($want)" grep -q "value=$want\$" "$work/get.txt"

run 2 "$work/tbl_split" --input "$in" --split u2 -D importtsv.columns=$cols_ts; rc=$?
check "--split against an existing table: refused" \
  bash -c "[ $rc = 64 ] && grep -q 'drop --split' '$work/last.err'"
run 2 "$work/tbl_fam" --input "$in" -D importtsv.columns=HBASE_ROW_KEY,HBASE_TS_KEY,cf:a,nope:b; rc=$?
check "a family the table lacks: refused, naming the families" \
  bash -c "[ $rc = 64 ] && grep -q \"'nope' is not a family of table default:web (families: cf, other)\" '$work/last.err'"

# ---------------------------------------------------------------- failures
./run_job.sh -n 3 importtsv --table other --data "$work/data" --input "$in" --output "$work/strict" \
  -D importtsv.columns=$cols_ts -D importtsv.skip.bad.lines=false 2> "$work/last.err"; rc=$?
check "skip.bad.lines=false: exit 65 naming file and line" \
  bash -c "[ $rc = 65 ] && grep -Eq 'ERROR on rank [0-9] .*part[12]\.tsv:[0-9]+: bad line' '$work/last.err' && [ ! -e '$work/strict' ]"
./run_job.sh -n 2 importtsv --table other --input "$in" --output "$work/nocols" 2> "$work/last.err"; rc=$?
check "no importtsv.columns: exit 64" \
  bash -c "[ $rc = 64 ] && grep -q 'importtsv.columns is required' '$work/last.err'"
./run_job.sh -n 2 importtsv --table other --input "$in" --output "$work/sep" \
  -D importtsv.columns=HBASE_ROW_KEY,cf:a -D importtsv.separator=ab 2> "$work/last.err"; rc=$?
check "two-byte separator: exit 64" test "$rc" = 64

echo
echo "importtsv_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
