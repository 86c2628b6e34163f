#!/usr/bin/env bash
# products_test.sh -- the products view end to end: kiln-gen input of three
# product types (deterministic, with malformed lines, attributes of another
# type and re-listed products) plus hand-made bad and edge lines; the job at
# -np 1 and 3 (byte-identical HFiles, one per region and family), every cell
# and counter equal to views_check.py's brute force over the same input,
# `kiln load`, and the queries -- one type's products page K of N (all
# columns, and family c alone), one product (Get, of one family), a type's
# count -- through kiln and kiln-server equal to the brute-force answers.
# All of it once into an unsalted table (one region per type) and once into
# a table of 4 salt buckets with a secondary index on t:pages (the brute
# force computes each row's bucket byte itself). Prints "N passed, N failed".
set -u
VIEW=products
. "$(dirname "$0")/lib.sh"
views_begin

raw=$work/raw
gen() { "$GEN" products --rows 20000 --seed 7 --files 4 --bad 4 --output "$1"; }
check "kiln-gen: exits 0, 4 files" bash -c "$(declare -f gen); GEN='$GEN'; gen '$raw' && [ \$(ls '$raw' | wc -l) = 4 ]"
gen "$work/raw_again" 2>>"$work/last.err"
check "kiln-gen: the same arguments give the same bytes" diff -r "$raw" "$work/raw_again"
"$GEN" products --rows 20000 --seed 8 --files 4 --output "$work/raw_other" 2>>"$work/last.err"
check "kiln-gen: another seed gives other input" bash -c "! diff -rq '$raw' '$work/raw_other' >/dev/null"
check "kiln-gen --help lists products" bash -c "'$GEN' --help | grep -q '^  products '"
# Hand-made bad lines, named to come first so that rank 0 logs them, and
# edge cases at the end: a value holding '=', a product without attributes,
# a re-listing that drops an attribute.
printf '%s\n' \
    $'book\t5\tMixed Up\t1.00\tauthor=Ann Lee;director=Bo Ek' \
    $'gadget\t1\tPhone\t1.00\t' \
    $'film\t2\tTwice\t1.00\tminutes=90;minutes=91' \
    $'film\t3\tCheap\t1.5\t' \
    $'book\t4\tShort Isbn\t2.00\tisbn=123' \
    $'album\t6\tTrailing\t3.00\tartist=X;' \
    $'album\t7\tNo Value\t3.00\ttracks=' >"$raw/a-bad.tsv"
printf '%s\n' \
    $'book\t4000000000\tEdge Case\t0.00\tauthor=a=b;pages=7' \
    $'album\t4000000001\tNo Attributes\t9.99\t' \
    $'book\t4000000000\tEdge Case\t0.01\tauthor=a=b' >"$raw/z-edge.tsv"
MAXID=$(be_key 4 4000000000)
NOATTR=$(be_key 4 4000000001)

Q=("type book 20 1" "type book 20 3" "type album 50 2" "typec film 25 2"
    "get book 4000000000" "get album 4000000001" "get book 4000000000 t"
    "get film 4000000002" "type gadget 20 1" "has t:pages 500")

# run_table TABLE SALT: create, the job at -np 1 and 3, the brute force, load,
# and the queries through kiln; answers in $work/TABLE/
run_table() {
    local T=$1 salt=$2 d=$work/$1 what ix=()
    mkdir -p "$d"
    if [ "$salt" = 0 ]; then
        what="$T (unsalted, one region per type)"
        "$KILN" create "$T" --family c:compression=none --family t --split book --split film \
            >/dev/null 2>>"$work/last.err"
    else
        what="$T (salted, $salt buckets)"
        "$KILN" create "$T" --family c --family t:compression=none --salt-buckets "$salt" \
            >/dev/null 2>>"$work/last.err"
        ix=(-D "kiln.index=bypages:t:pages")
    fi
    check "$what: kiln create" test $? = 0
    local regions=$((salt > 0 ? salt : 3))
    run_view 1 "$d/out1" --input "$raw" --table "$T" "${ix[@]}"
    check "$what: job np=1 exits 0" test "$rc" = 0 -a -f "$d/out1/_SUCCESS"
    run_view 3 "$d/out3" --input "$raw" --table "$T" "${ix[@]}"
    check "$what: job np=3 exits 0" test "$rc" = 0 -a -f "$d/out3/_SUCCESS"
    check "$what: np=1 and np=3 write the same HFiles byte for byte" same_output "$d/out1" "$d/out3"
    check "$what: one HFile per region and family ($regions + $regions)" \
        test "$(ls "$d/out3/c" | wc -l) $(ls "$d/out3/t" | wc -l)" = "$regions $regions"
    check "$what: every HFile passes kiln hfile check" \
        bash -c "'$KILN' hfile check '$d'/out3/c/* '$d'/out3/t/* >/dev/null"
    check "$what: the bad lines were logged with file, line and reason" \
        bash -c "grep -q \"a-bad.tsv:1: attribute 'director' is not one of book's (author, isbn, pages)\" '$work/job.err' &&
                 grep -q \"a-bad.tsv:2: unknown type 'gadget'\" '$work/job.err' &&
                 grep -q \"a-bad.tsv:3: attribute 'minutes' given twice\" '$work/job.err'"

    $CHECK expect products --salt "$salt" --job-time "$JOB_TIME" --out "$d" "$raw" -- "${Q[@]}" \
        2>>"$work/last.err"
    check "$what: brute force ran" test $? = 0
    # the table's families (out3/_index holds the index's)
    for f in "$d"/out3/c/* "$d"/out3/t/*; do "$KILN" hfile dump "$f" || echo "DUMP FAILED: $f"; done |
        LC_ALL=C sort >"$d/got_cells.txt"
    same "$what: every stored cell (bucket byte included) equals the brute force" "$d/cells.txt" "$d/got_cells.txt"
    counters_of "$d/out3" products >"$d/got_counters.txt"
    same "$what: Bad Lines, Duplicate rows and per-type counters equal the brute force" \
        "$d/counters.txt" "$d/got_counters.txt"
    check "$what: bad lines and re-listed products were generated" \
        bash -c "grep -q '^Bad Lines=[1-9][0-9]' '$d/counters.txt' && grep -q '^Duplicate rows (last line kept)=[1-9]' '$d/counters.txt'"

    "$KILN" load "$T" "$d/out3" --no-split >/dev/null 2>>"$work/last.err"
    check "$what: kiln load --no-split" test $? = 0
    check "$what: kiln count equals the brute force's rows" \
        test "$("$KILN" count "$T" 2>/dev/null | grep -o '^[0-9]*')" = "$(cat "$d/rows.txt")"
    check "$what: kiln count --prefix 'book\\x00' equals the brute force's books" \
        test "$("$KILN" count "$T" --prefix 'book\x00' 2>/dev/null | grep -o '^[0-9]*')" = \
        "$(sed -n 's/^Products: book=//p' "$d/counters.txt")"

    kiln_page "$T" 'book\x00' 20 1 >"$d/k1.txt"
    same "$what: kiln: books, page 1 of 20" "$d/q1.txt" "$d/k1.txt"
    kiln_page "$T" 'book\x00' 20 3 >"$d/k2.txt"
    same "$what: kiln: books, page 3 of 20 (--start last row + \\x00)" "$d/q2.txt" "$d/k2.txt"
    kiln_page "$T" 'album\x00' 50 2 >"$d/k3.txt"
    same "$what: kiln: albums, page 2 of 50" "$d/q3.txt" "$d/k3.txt"
    kiln_page "$T" 'film\x00' 25 2 --columns c >"$d/k4.txt"
    same "$what: kiln: films, page 2 of 25, family c only" "$d/q4.txt" "$d/k4.txt"
    kiln_lines get "$T" "book\\x00$MAXID" >"$d/k5.txt"
    same "$what: kiln get: a re-listed book (last line wins, '=' in a value)" "$d/q5.txt" "$d/k5.txt"
    kiln_lines get "$T" "album\\x00$NOATTR" >"$d/k6.txt"
    same "$what: kiln get: an album without attributes" "$d/q6.txt" "$d/k6.txt"
    kiln_lines get "$T" "book\\x00$MAXID" t >"$d/k7.txt"
    same "$what: kiln get ROW t: the type's own columns" "$d/q7.txt" "$d/k7.txt"
    "$KILN" get "$T" "film\\x00$(be_key 4 4000000002)" --json >"$d/k8.json" 2>/dev/null
    $CHECK json <"$d/k8.json" >"$d/k8.txt" 2>/dev/null
    ALLOW_EMPTY=1 same "$what: kiln get: a product that does not exist" "$d/q8.txt" "$d/k8.txt"
    kiln_page "$T" 'gadget\x00' 20 1 >"$d/k9.txt"
    ALLOW_EMPTY=1 same "$what: kiln: a type without products" "$d/q9.txt" "$d/k9.txt"
    local row
    row=$(head -1 "$d/q2.txt" | cut -f1)
    R=$row awk -F'\t' '$1 == ENVIRON["R"]' "$d/q2.txt" >"$d/q11.txt"
    kiln_lines get "$T" "$row" >"$d/k11.txt"
    same "$what: kiln get: the first book of page 3" "$d/q11.txt" "$d/k11.txt"
    if [ "$salt" != 0 ]; then
        kiln_lines scan "$T" --index bypages --value 500 >"$d/k10.txt"
        same "$what: kiln scan --index bypages --value 500" "$d/q10.txt" "$d/k10.txt"
    fi
}

# http_table TABLE SALT: the same queries through kiln-server
http_table() {
    local T=$1 salt=$2 d=$work/$1 what=$1
    http_page "$T" "prefix=$(pct 'book\x00')" 20 1 >"$d/h1.txt"
    same "$what: HTTP: books, page 1 of 20" "$d/q1.txt" "$d/h1.txt"
    http_page "$T" "prefix=$(pct 'book\x00')" 20 3 >"$d/h2.txt"
    same "$what: HTTP: books, page 3 of 20 (next_startrow)" "$d/q2.txt" "$d/h2.txt"
    http_page "$T" "prefix=$(pct 'album\x00')" 50 2 >"$d/h3.txt"
    same "$what: HTTP: albums, page 2 of 50" "$d/q3.txt" "$d/h3.txt"
    http_page "$T" "prefix=$(pct 'film\x00')&column=c" 25 2 >"$d/h4.txt"
    same "$what: HTTP: films, page 2 of 25, column=c" "$d/q4.txt" "$d/h4.txt"
    http_lines "$T/$(pct "book\\x00$MAXID")" >"$d/h5.txt"
    same "$what: HTTP: Get of a re-listed book" "$d/q5.txt" "$d/h5.txt"
    http_lines "$T/$(pct "album\\x00$NOATTR")" >"$d/h6.txt"
    same "$what: HTTP: Get of an album without attributes" "$d/q6.txt" "$d/h6.txt"
    http_lines "$T/$(pct "book\\x00$MAXID")/t" >"$d/h7.txt"
    same "$what: HTTP: Get ROW/t" "$d/q7.txt" "$d/h7.txt"
    local code
    code=$(curl -s -o /dev/null -w '%{http_code}' "$U/$T/$(pct "film\\x00$(be_key 4 4000000002)")")
    check "$what: HTTP: Get of a product that does not exist: 404" test "$code" = 404
    local row
    row=$(head -1 "$d/q2.txt" | cut -f1)
    http_lines "$T/$(pct "$row")" >"$d/h11.txt"
    same "$what: HTTP: Get of the first book of page 3" "$d/q11.txt" "$d/h11.txt"
    "$KILN" --server "$HOSTPORT" get "$T" "book\\x00$MAXID" --json | $CHECK json >"$d/s5.txt"
    same "$what: kiln --server get: a re-listed book" "$d/q5.txt" "$d/s5.txt"
    if [ "$salt" != 0 ]; then
        http_lines "$T/*?index=bypages&value=500" >"$d/h10.txt"
        same "$what: HTTP: index=bypages&value=500" "$d/q10.txt" "$d/h10.txt"
    fi
}

run_table products 0
run_table products_s 4

start_server || views_finish
http_table products 0
http_table products_s 4
check "kiln-server stops cleanly on SIGTERM" stop_server

# ---------------------------------------------------------------- refusals
run_view 2 "$work/strict" --input "$raw" --table products -D products.skip.bad.lines=false
check "skip.bad.lines=false: exit 65 naming file and line, no output" \
    bash -c "[ $rc = 65 ] && grep -Eq '(a-bad|products-0000[0-3])\.tsv:[0-9]+: bad line' '$work/last.err' && [ ! -e '$work/strict' ]"
run_view 2 "$work/x" --input "$raw" --nope
check "an unknown argument: exit 64" test "$rc" = 64
"$KILN" create products_c_only --family c >/dev/null 2>&1
run_view 2 "$work/y" --input "$raw" --table products_c_only
check "a table without the t family: exit 64 naming it" \
    bash -c "[ $rc = 64 ] && grep -q \"has no family 't'\" '$work/last.err'"
check "products --help" bash -c "./run_job.sh products --help | grep -q '^Usage: kiln-mr products'"

views_finish
