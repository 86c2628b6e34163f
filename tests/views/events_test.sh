#!/usr/bin/env bash
# events_test.sh -- the events view (entity-attribute-value) end to end:
# kiln-gen patient events (deterministic, vitals rounds of several types at
# one ts, corrections, malformed lines and "n/a" measures) plus hand-made bad
# and edge lines; the job at -np 1 and 3 (byte-identical HFiles, one per
# region), every cell and counter equal to views_check.py's brute force over
# the same input, `kiln load`, and the queries -- a patient's latest N time
# points, page K of N, one event type over a time window (start/stop from
# reverse timestamps, one column), one time point (Get) -- through kiln and
# kiln-server equal to the brute-force answers. All of it once into an
# unsalted table and once into a table of 3 salt buckets with a secondary
# index on e:hr (the brute force computes each row's bucket byte itself).
# Prints "N passed, N failed".
set -u
VIEW=events
. "$(dirname "$0")/lib.sh"
views_begin

raw=$work/raw
gen() { "$GEN" events --rows 30000 --seed 3 --files 3 --bad 4 --output "$1"; }
check "kiln-gen: exits 0, 3 files" bash -c "$(declare -f gen); GEN='$GEN'; gen '$raw' && [ \$(ls '$raw' | wc -l) = 3 ]"
gen "$work/raw_again" 2>>"$work/last.err"
check "kiln-gen: the same arguments give the same bytes" diff -r "$raw" "$work/raw_again"
"$GEN" events --rows 30000 --seed 4 --files 3 --output "$work/raw_other" 2>>"$work/last.err"
check "kiln-gen: another seed gives other input" bash -c "! diff -rq '$raw' '$work/raw_other' >/dev/null"
check "kiln-gen --help lists events" bash -c "'$GEN' --help | grep -q '^  events '"
# Hand-made bad lines, named to come first so that rank 0 logs them, and
# edge cases at the end: one time point of four lines (hr given twice: the
# later wins), a negative measure, ts 0
printf '%s\n' \
    $'7\t1714600000000\theart rate\t72' \
    $'7\t1714600000000\thr\t72bpm' \
    $'7\t1714600000000\ttemp\t1e5' \
    $'7\t-5\thr\t72' \
    $'7\t1714600000000\t\t72' \
    $'x7\t1714600000000\thr\t72' >"$raw/a-bad.tsv"
MAX=9223372036854775807
BASE=1714521600000               # 2024-05-01, the generator's first day
T1=$((BASE + 3 * 86400000))
T2=$((BASE + 6 * 86400000))
TE=1714700000000
TAB=$'\t'
# ... and patient 1's hr just inside and just outside [T1, T2)
printf '%s\n' \
    $'4000000000\t1714700000000\thr\t70' \
    $'4000000000\t1714700000000\ttemp\t36.6' \
    $'4000000000\t1714700000000\thr\t71' \
    $'4000000000\t1714700000000\tdelta.x-1\t-3.25' \
    $'4000000000\t0\tweight\t80.5' \
    "1$TAB$((T1 - 1))${TAB}hr${TAB}64" "1$TAB$T1${TAB}hr${TAB}61" \
    "1$TAB$((T2 - 1))${TAB}hr${TAB}63" "1$TAB$T2${TAB}hr${TAB}62" \
    >"$raw/z-edge.tsv"

Q=("latest 1 10" "latest 150 10" "page 1 7 3" "window 1 hr $T1 $T2" "window 2 glucose $BASE $T2"
    "latest 999999 5" "get 4000000000 $TE" "window 1 nosuch $T1 $T2" "latest 4000000000 5"
    "has e:hr 72")
# wstart/wstop PATIENT T1 T2: the scan bounds of [T1, T2) (newest first)
wstart() { echo "$(be_key 4 "$1")$(be_key 8 $((MAX - $3 + 1)))"; }
wstop() { echo "$(be_key 4 "$1")$(be_key 8 $((MAX - $2 + 1)))"; }

# run_table TABLE SALT: create, the job at -np 1 and 3, the brute force, load,
# and the queries through kiln; answers in $work/TABLE/
run_table() {
    local T=$1 salt=$2 d=$work/$1 what ix=()
    mkdir -p "$d"
    if [ "$salt" = 0 ]; then
        what="$T (unsalted)"
        # patients are 1..500, the low ids the busiest
        "$KILN" create "$T" --family e:compression=none --split "$(be_key 4 40)" \
            --split "$(be_key 4 150)" >/dev/null 2>>"$work/last.err"
    else
        what="$T (salted, $salt buckets)"
        "$KILN" create "$T" --family e --salt-buckets "$salt" >/dev/null 2>>"$work/last.err"
        ix=(-D "kiln.index=byhr:e:hr")
    fi
    check "$what: kiln create" test $? = 0
    run_view 1 "$d/out1" --input "$raw" --table "$T" "${ix[@]}"
    check "$what: job np=1 exits 0" test "$rc" = 0 -a -f "$d/out1/_SUCCESS"
    run_view 3 "$d/out3" --input "$raw" --table "$T" "${ix[@]}"
    check "$what: job np=3 exits 0" test "$rc" = 0 -a -f "$d/out3/_SUCCESS"
    check "$what: np=1 and np=3 write the same HFiles byte for byte" same_output "$d/out1" "$d/out3"
    check "$what: one HFile per region" test "$(ls "$d/out3/e" | wc -l)" = 3
    check "$what: every HFile passes kiln hfile check" \
        bash -c "'$KILN' hfile check '$d'/out3/e/* >/dev/null"
    check "$what: the bad lines were logged with file, line and reason" \
        bash -c "grep -q 'a-bad.tsv:1: event type is not' '$work/job.err' &&
                 grep -q 'a-bad.tsv:2: measure is not a decimal number' '$work/job.err' &&
                 grep -q 'a-bad.tsv:4: timestamp is not' '$work/job.err'"

    $CHECK expect events --salt "$salt" --out "$d" "$raw" -- "${Q[@]}" 2>>"$work/last.err"
    check "$what: brute force ran" test $? = 0
    # the table's family (out3/_index holds the index's)
    for f in "$d"/out3/e/*; do "$KILN" hfile dump "$f" || echo "DUMP FAILED: $f"; done |
        LC_ALL=C sort >"$d/got_cells.txt"
    same "$what: every stored cell (bucket byte included) equals the brute force" "$d/cells.txt" "$d/got_cells.txt"
    counters_of "$d/out3" events >"$d/got_counters.txt"
    same "$what: Bad Lines, Duplicate events and Events stored equal the brute force" \
        "$d/counters.txt" "$d/got_counters.txt"
    check "$what: bad lines and corrected events were generated" \
        bash -c "grep -q '^Bad Lines=[1-9][0-9]' '$d/counters.txt' && grep -q '^Duplicate events (last line kept)=[1-9]' '$d/counters.txt'"
    check "$what: some time points hold several event types" \
        bash -c "cut -f1 '$d/cells.txt' | uniq -d | grep -q ."

    "$KILN" load "$T" "$d/out3" --no-split >/dev/null 2>>"$work/last.err"
    check "$what: kiln load --no-split" test $? = 0
    check "$what: kiln count equals the brute force's rows" \
        test "$("$KILN" count "$T" 2>/dev/null | grep -o '^[0-9]*')" = "$(cat "$d/rows.txt")"

    kiln_lines scan "$T" --prefix "$(be_key 4 1)" --limit 10 >"$d/k1.txt"
    same "$what: kiln: patient 1's latest 10 time points" "$d/q1.txt" "$d/k1.txt"
    kiln_lines scan "$T" --prefix "$(be_key 4 150)" --limit 10 >"$d/k2.txt"
    same "$what: kiln: patient 150's latest 10" "$d/q2.txt" "$d/k2.txt"
    kiln_page "$T" "$(be_key 4 1)" 7 3 >"$d/k3.txt"
    same "$what: kiln: patient 1, page 3 of 7 (--start last row + \\x00)" "$d/q3.txt" "$d/k3.txt"
    kiln_lines scan "$T" --start "$(wstart 1 "$T1" "$T2")" --stop "$(wstop 1 "$T1" "$T2")" \
        --columns e:hr >"$d/k4.txt"
    same "$what: kiln: patient 1's hr in [day 3, day 6)" "$d/q4.txt" "$d/k4.txt"
    kiln_lines scan "$T" --start "$(wstart 2 "$BASE" "$T2")" --stop "$(wstop 2 "$BASE" "$T2")" \
        --columns e:glucose >"$d/k5.txt"
    same "$what: kiln: patient 2's glucose in [day 0, day 6)" "$d/q5.txt" "$d/k5.txt"
    kiln_lines scan "$T" --prefix "$(be_key 4 999999)" --limit 5 >"$d/k6.txt"
    ALLOW_EMPTY=1 same "$what: kiln: a patient without events: no rows" "$d/q6.txt" "$d/k6.txt"
    kiln_lines get "$T" "$(be_key 4 4000000000)$(be_key 8 $((MAX - TE)))" >"$d/k7.txt"
    same "$what: kiln get: one time point of several types (hr given twice: the later)" \
        "$d/q7.txt" "$d/k7.txt"
    kiln_lines scan "$T" --start "$(wstart 1 "$T1" "$T2")" --stop "$(wstop 1 "$T1" "$T2")" \
        --columns e:nosuch >"$d/k8.txt"
    ALLOW_EMPTY=1 same "$what: kiln: an event type the patient lacks: no rows" "$d/q8.txt" "$d/k8.txt"
    kiln_lines scan "$T" --prefix "$(be_key 4 4000000000)" --limit 5 >"$d/k9.txt"
    same "$what: kiln: the largest patient id, ts 0 last" "$d/q9.txt" "$d/k9.txt"
    if [ "$salt" != 0 ]; then
        kiln_lines scan "$T" --index byhr --value 72 >"$d/k10.txt"
        same "$what: kiln scan --index byhr --value 72" "$d/q10.txt" "$d/k10.txt"
    fi
}

# http_table TABLE SALT: the same queries through kiln-server
http_table() {
    local T=$1 salt=$2 d=$work/$1 what=$1
    http_lines "$T/*?prefix=$(pct "$(be_key 4 1)")&limit=10" >"$d/h1.txt"
    same "$what: HTTP: patient 1's latest 10" "$d/q1.txt" "$d/h1.txt"
    http_lines "$T/*?prefix=$(pct "$(be_key 4 150)")&limit=10" >"$d/h2.txt"
    same "$what: HTTP: patient 150's latest 10" "$d/q2.txt" "$d/h2.txt"
    http_page "$T" "prefix=$(pct "$(be_key 4 1)")" 7 3 >"$d/h3.txt"
    same "$what: HTTP: patient 1, page 3 of 7 (next_startrow)" "$d/q3.txt" "$d/h3.txt"
    http_lines "$T/*?startrow=$(pct "$(wstart 1 "$T1" "$T2")")&endrow=$(pct "$(wstop 1 "$T1" "$T2")")&column=e:hr" >"$d/h4.txt"
    same "$what: HTTP: patient 1's hr in [day 3, day 6)" "$d/q4.txt" "$d/h4.txt"
    http_lines "$T/*?startrow=$(pct "$(wstart 2 "$BASE" "$T2")")&endrow=$(pct "$(wstop 2 "$BASE" "$T2")")&column=e:glucose" >"$d/h5.txt"
    same "$what: HTTP: patient 2's glucose in [day 0, day 6)" "$d/q5.txt" "$d/h5.txt"
    http_lines "$T/$(pct "$(be_key 4 4000000000)$(be_key 8 $((MAX - TE)))")" >"$d/h7.txt"
    same "$what: HTTP: Get of one time point" "$d/q7.txt" "$d/h7.txt"
    "$KILN" --server "$HOSTPORT" scan "$T" --start "$(wstart 1 "$T1" "$T2")" \
        --stop "$(wstop 1 "$T1" "$T2")" --columns e:hr --json | $CHECK json >"$d/s4.txt"
    same "$what: kiln --server: patient 1's hr in [day 3, day 6)" "$d/q4.txt" "$d/s4.txt"
    if [ "$salt" != 0 ]; then
        http_lines "$T/*?index=byhr&value=72" >"$d/h10.txt"
        same "$what: HTTP: index=byhr&value=72" "$d/q10.txt" "$d/h10.txt"
    fi
}

run_table events 0
run_table events_s 3

start_server || views_finish
http_table events 0
http_table events_s 3
check "kiln-server stops cleanly on SIGTERM" stop_server

# ---------------------------------------------------------------- refusals
run_view 2 "$work/strict" --input "$raw" --table events -D events.skip.bad.lines=false
check "skip.bad.lines=false: exit 65 naming file and line, no output" \
    bash -c "[ $rc = 65 ] && grep -Eq '(a-bad|events-0000[0-2])\.tsv:[0-9]+: bad line' '$work/last.err' && [ ! -e '$work/strict' ]"
run_view 2 "$work/x" --input "$raw" --nope
check "an unknown argument: exit 64" test "$rc" = 64
"$KILN" create events_other --family m >/dev/null 2>&1
run_view 2 "$work/y" --input "$raw" --table events_other
check "a table without the e family: exit 64 naming it" \
    bash -c "[ $rc = 64 ] && grep -q \"has no family 'e'\" '$work/last.err'"
check "events --help" bash -c "./run_job.sh events --help | grep -q '^Usage: kiln-mr events'"

views_finish
