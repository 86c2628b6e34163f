# lib.sh -- what the tests of HBase's MapReduce tools share (sourced, not
# run): counting checks, running a tool under run_job.sh, reading counters
# from _job.json, and the source tables every test starts from, built from
# tools_model.py's generated writes:
#
#   t_u   unsalted, three regions (split at row01000 and row02000)
#   t_s   salted, 4 buckets (one region per bucket)
#
# both with families a (VERSIONS 3), b (VERSIONS 2), c (VERSIONS 1); version
# 1 is the bulk load of the generated lines (several versions per row),
# version 2 adds the online writes (row, family and column deletes, newer
# versions, overwrites of stored cells). See tools_tables.
#
# The caller sets TOOL and calls tools_begin; tools_finish prints the
# "N passed, N failed" line and exits.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
export BUILD
. "$ROOT/tests/support/job_sanitizers.sh"
export OMPI_MCA_mca_component_disable_dlclose=1
KILN=$ROOT/$BUILD/bin/kiln
MODEL="python3 $ROOT/tests/tools/tools_model.py"
JOB_TIME=1717200000000
FAMS=(--family a:versions=3 --family b:versions=2 --family c)

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
    fail=$((fail + 1))
    echo "FAIL $1"
    if [ -n "${2:-}" ] && [ -s "$2" ]; then sed 's/^/    /' "$2" | tail -20; fi
}
# check NAME CMD...: CMD's exit status decides; stderr (and $work/last.err) shown on failure
check() {
    local name=$1
    shift
    if "$@" 2>>"$work/last.err"; then ok "$name"; else bad "$name" "$work/last.err"; fi
    : >"$work/last.err"
}
# same NAME EXPECTED_FILE GOT_FILE: equal and (unless ALLOW_EMPTY=1) not empty
same() {
    if [ "${ALLOW_EMPTY:-0}" != 1 ] && [ ! -s "$2" ]; then
        bad "$1 (the expected answer is empty: a useless check)"
    elif cmp -s "$2" "$3"; then
        ok "$1 ($(wc -l <"$2") lines)"
    else
        bad "$1"
        diff "$2" "$3" | head -10 | sed 's/^/    /'
    fi
}
# equal NAME EXPECTED GOT: two strings
equal() {
    if [ "$2" = "$3" ]; then ok "$1 ($2)"; else bad "$1: expected '$2', got '$3'"; fi
}

tools_begin() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-$TOOL-test.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    : >"$work/last.err"
    export KILN_DATA=$work/data
    for b in "$KILN" "$ROOT/$BUILD/bin/kiln-mr"; do
        [ -x "$b" ] || { bad "$b is not built (make)"; tools_finish; }
    done
    command -v python3 >/dev/null || { bad "python3 is missing"; tools_finish; }
}

tools_finish() {
    echo
    echo "${TOOL}_test: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit $?
}

# run_tool NP JOB ARGS...: the job on NP ranks; exit status in $rc, stderr
# in $work/job.err (and appended to $work/last.err)
run_tool() {
    local np=$1 job=$2
    shift 2
    ./run_job.sh -n "$np" --timeout 180 "$job" --data "$KILN_DATA" -D kiln.progress=false \
        -D kiln.job.time=$JOB_TIME "$@" >"$work/job.out" 2>"$work/job.err"
    rc=$?
    cat "$work/job.err" >>"$work/last.err"
}

# counter OUTPUT GROUP NAME: one counter's value from _job.json (empty if absent)
counter() {
    python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["counters"].get(sys.argv[2], {})
print(c.get(sys.argv[3], ""))' "$1/_job.json" "$2" "$3"
}

# report OUTPUT KEY: a member of _job.json as JSON text
report() {
    python3 -c '
import json, sys
print(json.dumps(json.load(open(sys.argv[1])).get(sys.argv[2])))' "$1/_job.json" "$2"
}

# apply_ops TABLE: the generated online writes, then a flush
apply_ops() {
    local t=$1 op row col val ts
    while IFS=$'\t' read -r op row col val ts; do
        if [ "$op" = put ]; then
            "$KILN" put "$t" "$row" "$col" "$val" --ts "$ts" >/dev/null || return 1
        elif [ "$col" != - ]; then
            "$KILN" delete "$t" "$row" "$col" --ts "$val" >/dev/null || return 1
        else
            "$KILN" delete "$t" "$row" --ts "$val" >/dev/null || return 1
        fi
    done <"$work/gen/ops.tsv"
    "$KILN" flush "$t" >/dev/null
}

# hfile_output DIR PART SALT: the model's stored cells of PART (bulk|ops) as a
# job output -- one HFile per family written by `kiln hfile write`, _SUCCESS
# -- for `kiln load` (which cuts the files at the table's regions)
hfile_output() {
    local dir=$1 part=$2 salt=$3 f
    for f in a b c; do
        mkdir -p "$dir/$f" || return 1
        $MODEL dump "$work/gen/model.json" --part "$part" --family $f --salt "$salt" \
            >"$dir/$f.txt" || return 1
        if [ -s "$dir/$f.txt" ]; then
            "$KILN" hfile write "$dir/$f/cells" --family $f --input "$dir/$f.txt" >/dev/null || return 1
        fi
        rm -f "$dir/$f.txt"
    done
    : >"$dir/_SUCCESS"
}

# tools_tables ROWS [VALUE_MAX]: generate the writes and build the source
# tables two ways: t_u through importtsv, `kiln load`, then the online writes
# through `kiln put` / `kiln delete` and `kiln flush`; t_s (salted: online
# writes need an unsalted table) from the model's stored cells written as
# HFiles, the bulk load's (version 1) then the online writes' (`kiln load
# --append`, version 2).
tools_tables() {
    local rows=$1 vmax=${2:-40}
    mkdir -p "$work/gen"
    COLS=$($MODEL gen --seed 7 --rows "$rows" --value-max "$vmax" --out "$work/gen" 2>>"$work/last.err")
    check "the writes are generated" test -n "$COLS" -a -s "$work/gen/input.tsv"
    "$KILN" create t_u "${FAMS[@]}" --split row01000 --split row02000 >/dev/null 2>>"$work/last.err"
    check "kiln create t_u (3 regions)" test $? = 0
    "$KILN" create t_s "${FAMS[@]}" --salt-buckets 4 >/dev/null 2>>"$work/last.err"
    check "kiln create t_s (salted, 4 buckets)" test $? = 0
    ./run_job.sh -n 2 --timeout 180 importtsv --table t_u --input "$work/gen/input.tsv" \
        --output "$work/imp_t_u" --data "$KILN_DATA" -D importtsv.columns="$COLS" \
        -D importtsv.skip.empty.columns=true -D kiln.progress=false \
        >/dev/null 2>>"$work/last.err"
    check "importtsv into t_u" test $? = 0
    "$KILN" load t_u "$work/imp_t_u" >/dev/null 2>>"$work/last.err"
    check "kiln load t_u (version 1)" test $? = 0
    apply_ops t_u 2>>"$work/last.err"
    check "online writes into t_u, flushed (version 2)" test $? = 0
    hfile_output "$work/hf_bulk" bulk 4 2>>"$work/last.err" &&
        "$KILN" load t_s "$work/hf_bulk" >/dev/null 2>>"$work/last.err"
    check "the bulk load's cells written and loaded into t_s (version 1)" test $? = 0
    hfile_output "$work/hf_ops" ops 4 2>>"$work/last.err" &&
        "$KILN" load t_s "$work/hf_ops" --append >/dev/null 2>>"$work/last.err"
    check "the online writes' cells appended to t_s (version 2)" test $? = 0
}

# scan_lines TABLE [--rename A:X,...]: every version `kiln scan` returns, as
# the model's cell lines
scan_lines() {
    local t=$1
    shift
    "$KILN" scan "$t" --versions 10 --json | $MODEL scanjson "$@"
}
