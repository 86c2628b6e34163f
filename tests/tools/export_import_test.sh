#!/usr/bin/env bash
# export_import_test.sh -- HBase's Export and Import jobs end to end, over a
# table made by two loads (a replace and an append: several versions per
# column, a key rewritten, delete markers of every type) and online puts and
# deletes flushed as a version; once unsalted with four regions, once salted
# with four buckets. Every answer is checked against export_check.py, which
# computes the cells from the history it generated (HBase's semantics, no
# Kiln code):
#   - export at -np 1 (HBase's positional form) and -np 3 (options): the
#     same bytes; the dump of the files in name order is the expected cells
#     in order; the manifest's row, cell and marker counts;
#   - a raw export keeps every stored cell, delete markers included; a time
#     range and a version count;
#   - import into a fresh table with another region layout and the other
#     salting (created from the manifest's families), `kiln load`, export
#     again: the same cells byte for byte (raw: markers and all), and the
#     import's own HFiles the same at -np 1 and 3;
#   - import --families renames; a family the target lacks fails, naming it;
#     a table or version that is not there fails, naming it.
# Prints "N passed, N failed".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
export BUILD
. "$ROOT/tests/support/job_sanitizers.sh"
export OMPI_MCA_mca_component_disable_dlclose=1
KILN=$ROOT/$BUILD/bin/kiln
CHECK="python3 $ROOT/tests/tools/export_check.py"
JOB_TIME=1717200000000

pass=0
fail=0
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-export-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
export KILN_DATA=$work/data
: >"$work/last.err"

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
    fail=$((fail + 1))
    echo "FAIL $1"
    if [ -n "${2:-}" ] && [ -s "$2" ]; then sed 's/^/    /' "$2" | tail -20; fi
}
check() {
    local name=$1
    shift
    if "$@" 2>>"$work/last.err"; then ok "$name"; else bad "$name" "$work/last.err"; fi
    : >"$work/last.err"
}
# same NAME EXPECTED GOT: equal files, the expected one not empty
same() {
    if [ ! -s "$2" ]; then
        bad "$1 (the expected answer is empty: a useless check)"
    elif cmp -s "$2" "$3"; then
        ok "$1 ($(wc -l <"$2") lines)"
    else
        bad "$1"
        diff "$2" "$3" | head -10 | sed 's/^/    /'
    fi
}
finish() {
    echo
    echo "export_import_test: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit $?
}
# job NP NAME ARGS...: a kiln-mr job; exit status in $rc, stderr in $work/job.err
job() {
    local np=$1
    shift
    ./run_job.sh -n "$np" --timeout 180 "$@" -D kiln.progress=false -D kiln.job.time=$JOB_TIME \
        >"$work/job.out" 2>"$work/job.err"
    rc=$?
    [ "$rc" = 0 ] || cat "$work/job.err" >>"$work/last.err"
}
# dump_parts DIR: `kiln hfile dump` of DIR's part files, concatenated in name order
dump_parts() {
    local f
    for f in $(ls "$1" | grep '^part-r-' | LC_ALL=C sort); do
        "$KILN" hfile dump "$1/$f" || echo "DUMP FAILED: $f"
    done
}
# dump_cells DIR: every cell of a bulk output (DIR/<family>/<hfile>), sorted
dump_cells() {
    local f
    for f in "$1"/*/*; do
        case $(basename "$f") in _*) continue ;; esac
        "$KILN" hfile dump "$f" || echo "DUMP FAILED: $f"
    done | LC_ALL=C sort
}
# same_bytes A B: the same files (but _job.json) with the same bytes
same_bytes() {
    [ "$(cd "$1" && find . ! -name _job.json | LC_ALL=C sort)" = \
      "$(cd "$2" && find . ! -name _job.json | LC_ALL=C sort)" ] || { echo "file lists differ" >&2; return 1; }
    local f
    for f in $(cd "$1" && find . -type f ! -name _job.json); do
        cmp -s "$1/$f" "$2/$f" || { echo "$f differs" >&2; return 1; }
    done
}
manifest() { $CHECK manifest "$1" "$2"; }
create_from() { # TABLE EXPORT ARGS...: a table with the families of EXPORT's manifest
    local t=$1 e=$2 fams=() f
    shift 2
    while read -r f; do fams+=(--family "$f"); done < <($CHECK families "$e")
    "$KILN" create "$t" "${fams[@]}" "$@" >/dev/null
}

for b in "$KILN" "$ROOT/$BUILD/bin/kiln-mr"; do
    [ -x "$b" ] || { bad "$b is not built (make)"; finish; }
done
command -v python3 >/dev/null || { bad "python3 is missing"; finish; }

hist=$work/hist
$CHECK gen 7 "$hist" 2>>"$work/last.err"
check "the history is generated" test -s "$hist/journal.json"
$CHECK expect "$hist" --versions 3 --counts "$work/n3" >"$work/e3.txt" 2>>"$work/last.err"
$CHECK expect "$hist" --raw --counts "$work/nraw" >"$work/eraw.txt" 2>>"$work/last.err"
$CHECK expect "$hist" --versions 2 --start-ts 1010 --end-ts 1050 >"$work/etr.txt" 2>>"$work/last.err"
$CHECK expect "$hist" --versions 3 --rename a:x >"$work/eren.txt" 2>>"$work/last.err"
$CHECK scan "$hist" --versions 3 >"$work/scan3.txt" 2>>"$work/last.err"
read -r rows3 cells3 markers3 <"$work/n3"
read -r rowsr cellsr markersr <"$work/nraw"
check "the history has delete markers ($markersr stored)" test "$markersr" -gt 20

# load_history TABLE BUCKETS [ONLINE]: the two loads (their cells written with
# `kiln hfile write`, salted here when BUCKETS > 0), then the online writes:
# `kiln put` and `kiln delete` and a flush with ONLINE=online, else (salted
# tables take no online writes) a third load, an append of the cells they
# store.
load_history() {
    local t=$1 buckets=$2 online=${3:-} k f mode last=3
    [ "$online" = online ] && last=2
    for ((k = 1; k <= last; k++)); do
        local d=$work/load-$t-$k
        $CHECK loadfiles "$hist" $k "$buckets" "$d.txt" || return 1
        for f in "$d.txt"/*.txt; do
            mkdir -p "$d/$(basename "$f" .txt)"
            "$KILN" hfile write "$d/$(basename "$f" .txt)/cells" --input "$f" >/dev/null || return 1
        done
        touch "$d/_SUCCESS"
        mode=--replace
        [ $k -gt 1 ] && mode=--append
        "$KILN" load "$t" "$d" $mode >/dev/null || return 1
    done
    [ "$online" = online ] || return 0
    local line
    local -a w
    while IFS= read -r line; do
        IFS=$'\t' read -r -a w <<<"$line"
        local n=${#w[@]} ts=${w[${#w[@]} - 1]}
        if [ "${w[0]}" = put ]; then
            "$KILN" put "$t" "${w[1]}" "${w[2]}" "${w[3]}" --ts "$ts" >/dev/null || return 1
        else
            "$KILN" delete "$t" "${w[@]:1:n-2}" --ts "$ts" >/dev/null || return 1
        fi
    done <"$hist/online.txt"
    "$KILN" flush "$t" >/dev/null
}

for variant in plain salted; do
    if [ $variant = plain ]; then
        src=src buckets=0
        "$KILN" create $src --family a:versions=3 --family b:versions=2,compression=none \
            --split r0100 --split r0300 --split 'r0500' >/dev/null 2>>"$work/last.err"
        # its copy: salted, three buckets
        dst_args=(--salt-buckets 3)
    else
        src=srcs buckets=4
        "$KILN" create $src --family a:versions=3 --family b:versions=2,compression=none \
            --salt-buckets 4 >/dev/null 2>>"$work/last.err"
        # its copy: unsalted, other regions
        dst_args=(--split '\x00z' --split r0200 --split r0250 --split r0401 --split s)
    fi
    check "$variant: kiln create $src" test $? = 0
    if [ $variant = plain ]; then
        load_history $src $buckets online 2>>"$work/last.err"
        check "$variant: two loads, online writes and a flush into $src" test $? = 0
    else
        load_history $src $buckets 2>>"$work/last.err"
        check "$variant: three loads (the online writes' cells last) into $src" test $? = 0
    fi
    "$KILN" scan $src --versions 3 --json 2>>"$work/last.err" | $CHECK scanjson >"$work/got_scan.txt"
    same "$variant: kiln scan --versions 3 of $src equals the brute force" "$work/scan3.txt" \
        "$work/got_scan.txt"

    # ------------------------------------------------------------ export
    e1=$work/$variant-e1 e3=$work/$variant-e3
    job 1 export $src "$e1" 3
    check "$variant: export $src OUT 3 at -np 1 exits 0" test "$rc" = 0 -a -f "$e1/_SUCCESS"
    job 3 export --input-table $src --output "$e3" --versions 3
    check "$variant: export --input-table at -np 3 exits 0" test "$rc" = 0 -a -f "$e3/_SUCCESS"
    check "$variant: -np 1 and -np 3 write the same bytes (HFiles and manifest)" same_bytes "$e1" "$e3"
    check "$variant: one file per region (4 parts)" test "$(ls "$e1" | grep -c '^part-r-')" = 4
    dump_parts "$e1" >"$work/d1.txt"
    same "$variant: the files in name order hold the expected cells in order" "$work/e3.txt" "$work/d1.txt"
    check "$variant: the manifest's rows ($rows3), cells ($cells3), markers (0)" test \
        "$(manifest "$e1" rows) $(manifest "$e1" cells) $(manifest "$e1" delete_markers)" = "$rows3 $cells3 0"
    cur=$("$KILN" views $src | awk -F'\t' '$2 == "*" { print $1 }')
    check "$variant: the manifest names the table, its version ($cur) and salting" test \
        "$(manifest "$e1" table) $(manifest "$e1" version) $(manifest "$e1" salt_buckets)" = \
        "default:$src $cur $buckets"
    check "$variant: _job.json names the version read" \
        grep -q "\"input_table\":{\"table\":\"default:$src\",\"version\":$cur," "$e1/_job.json"
    for f in "$e1"/part-r-*; do "$KILN" hfile check "$f" >/dev/null 2>>"$work/last.err" || echo bad; done \
        >"$work/checks"
    check "$variant: kiln hfile check passes every part file" test ! -s "$work/checks"

    er=$work/$variant-er
    job 2 export $src "$er" --raw
    check "$variant: export --raw exits 0" test "$rc" = 0
    dump_parts "$er" >"$work/dr.txt"
    same "$variant: the raw export holds every stored cell, markers included" "$work/eraw.txt" "$work/dr.txt"
    check "$variant: the raw export's delete markers ($markersr)" \
        test "$(grep -cv $'\tPut\t' "$work/dr.txt")" = "$markersr"
    check "$variant: the raw manifest's rows ($rowsr), cells ($cellsr), markers ($markersr)" test \
        "$(manifest "$er" rows) $(manifest "$er" cells) $(manifest "$er" delete_markers)" = \
        "$rowsr $cellsr $markersr"

    job 2 export $src "$work/$variant-erd" -D hbase.mapreduce.include.deleted.rows=true
    check "$variant: -D hbase.mapreduce.include.deleted.rows=true is --raw" same_bytes "$er" \
        "$work/$variant-erd"

    et=$work/$variant-et
    job 3 export $src "$et" 2 1010 1050 -D mapreduce.job.reduces=5
    check "$variant: export TABLE OUT 2 1010 1050 (five partitions) exits 0" test "$rc" = 0
    dump_parts "$et" >"$work/dt.txt"
    same "$variant: two versions in [1010, 1050), in order over five files" "$work/etr.txt" "$work/dt.txt"

    # ------------------------------------------------------------ import
    dst=${src}_copy
    create_from $dst "$e1" "${dst_args[@]}" 2>>"$work/last.err"
    check "$variant: $dst is created from the manifest's families" test $? = 0
    i1=$work/$variant-i1 i3=$work/$variant-i3
    job 1 import $dst "$e1" --output "$i1"
    check "$variant: import at -np 1 exits 0" test "$rc" = 0 -a -f "$i1/_SUCCESS"
    job 3 import $dst "$e1" --output "$i3"
    check "$variant: import at -np 3 exits 0" test "$rc" = 0
    check "$variant: the import writes the same HFiles at -np 1 and 3" same_bytes "$i1" "$i3"
    "$KILN" load $dst "$i3" >/dev/null 2>>"$work/last.err"
    check "$variant: kiln load $dst" test $? = 0
    eb=$work/$variant-eb
    job 2 export $dst "$eb" 3 -D mapreduce.job.reduces=3
    check "$variant: export of $dst exits 0" test "$rc" = 0
    dump_parts "$eb" >"$work/db.txt"
    same "$variant: exporting the imported table gives the same cells byte for byte" "$work/d1.txt" "$work/db.txt"
    check "$variant: and the same counts" test \
        "$(manifest "$eb" rows) $(manifest "$eb" cells)" = "$(manifest "$e1" rows) $(manifest "$e1" cells)"

    dstr=${src}_raw
    create_from $dstr "$er" "${dst_args[@]}" 2>>"$work/last.err"
    job 3 import $dstr "$er" --output "$work/$variant-ir"
    check "$variant: import of the raw export exits 0" test "$rc" = 0
    dump_cells "$work/$variant-ir" >"$work/dir.txt"
    check "$variant: the import's HFiles hold the delete markers ($markersr)" \
        test "$(grep -cv $'\tPut\t' "$work/dir.txt")" = "$markersr"
    "$KILN" load $dstr "$work/$variant-ir" >/dev/null 2>>"$work/last.err"
    check "$variant: kiln load $dstr" test $? = 0
    job 1 export $dstr "$work/$variant-err" --raw
    dump_parts "$work/$variant-err" >"$work/drr.txt"
    same "$variant: a raw export of it is the raw export again, byte for byte" "$work/dr.txt" "$work/drr.txt"
    job 3 export $dstr "$work/$variant-erv" 3
    dump_parts "$work/$variant-erv" >"$work/drv.txt"
    same "$variant: its imported markers mask as the source's did (versions 3)" "$work/e3.txt" "$work/drv.txt"
done

# ---------------------------------------------------------------- families
"$KILN" create ren --family x:versions=3 --family b:versions=2 --split r0300 >/dev/null 2>>"$work/last.err"
job 2 import ren "$work/plain-e1" --output "$work/iren" --families a:x
check "import --families a:x exits 0" test "$rc" = 0
"$KILN" load ren "$work/iren" >/dev/null 2>>"$work/last.err"
job 2 export ren "$work/eren" 3
dump_parts "$work/eren" >"$work/dren.txt"
same "family a's cells land in x" "$work/eren.txt" "$work/dren.txt"
job 1 import ren "$work/plain-e1" --output "$work/iren2" -D HBASE_IMPORTER_RENAME_CFS=a:x
check "-D HBASE_IMPORTER_RENAME_CFS=a:x writes the same HFiles" same_bytes "$work/iren" "$work/iren2"

"$KILN" create only_a --family a:versions=3 >/dev/null 2>>"$work/last.err"
job 2 import only_a "$work/plain-e1" --output "$work/ibad"
check "import into a table without family b fails" test "$rc" != 0 -a ! -e "$work/ibad"
check "the error names the family, the table and a file" \
    grep -q "part-r-0000[0-9]: row .*: family 'b' is not a family of table default:only_a" "$work/job.err"
job 1 import only_a "$work/plain-e1" --output "$work/ibad" --families b:zz
check "a rename to a missing family is refused, naming it" grep -q "'zz' is not a family" "$work/job.err"
job 1 import nosuch "$work/plain-e1" --output "$work/ibad"
check "import into a missing table is refused, naming it" \
    grep -q "table default:nosuch does not exist" "$work/job.err"
job 1 export nosuch "$work/ebad"
check "export of a missing table is refused, naming it" \
    grep -q "table default:nosuch does not exist" "$work/job.err"
gone=
for ((v = 1; v < 10; v++)); do
    "$KILN" views src | awk -F'\t' -v v=$v '$1 == v { found = 1 } END { exit !found }' || { gone=$v; break; }
done
check "src has a version that is no longer kept (${gone:-none})" test -n "$gone"
job 1 export src@${gone:-1} "$work/ebad"
check "export of a version that is not kept is refused, naming it" \
    grep -q "version ${gone:-1} is not kept" "$work/job.err"
job 1 export src "$work/ebad" 0
check "export with versions 0 is refused" test "$rc" != 0
job 1 export src "$work/ebad" -D kiln.partitioner=hash
check "export refuses a hash partitioner" grep -q "total order by row" "$work/job.err"
# A damaged export: import reads its HFiles through HFile input, and a bad
# file fails the job naming it; nothing is written.
cp -r "$work/plain-e1" "$work/edamaged"
part=$(ls "$work/edamaged"/part-r-* | head -1)
size=$(stat -c %s "$part")
printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' | dd of="$part" bs=1 seek=$((size / 3)) conv=notrunc 2>/dev/null
job 2 import ren "$work/edamaged" --output "$work/idamaged" --families a:x
check "import of an export with a damaged HFile fails, naming the file" \
    bash -c "[ $rc != 0 ] && [ ! -e '$work/idamaged' ] && grep -q '$(basename "$part")' '$work/job.err'"
cp -r "$work/plain-e1" "$work/etrunc"
part=$(ls "$work/etrunc"/part-r-* | head -1)
truncate -s $(($(stat -c %s "$part") / 2)) "$part"
job 2 import ren "$work/etrunc" --output "$work/itrunc" --families a:x
check "import of an export with a truncated HFile fails, naming the file" \
    bash -c "[ $rc != 0 ] && [ ! -e '$work/itrunc' ] && grep -q '$(basename "$part")' '$work/job.err'"
./run_job.sh -n 1 export --help >"$work/help" 2>&1
check "export --help shows the usage" grep -q "TABLE OUTPUT \[versions \[starttime \[endtime\]\]\]" "$work/help"
./run_job.sh -n 1 import --help >"$work/help" 2>&1
check "import --help shows the usage" grep -q "import TABLE INPUTDIR --output DIR" "$work/help"

finish
