#!/usr/bin/env bash
# orders_test.sh -- the orders view end to end: kiln-gen customers, orders and
# order lines (bad lines, corrected records, orders of unknown customers,
# lines of unknown orders, orders without lines), the reduce-side join at
# -np 2 and 3 and with the inputs given in another order (byte-identical),
# every cell and every counter equal to views_check.py's brute force,
# `kiln load`, and one Get per customer (all families, one family) through
# kiln and kiln-server equal to the brute force; refusals. Prints
# "N passed, N failed".
set -u
VIEW=orders
. "$(dirname "$0")/lib.sh"
views_begin

raw=$work/raw
"$GEN" orders --rows 6000 --seed 3 --files 3 --bad 3 --output "$raw" 2>>"$work/last.err"
check "kiln-gen orders: customers, orders and lines, 3 files each" \
    test "$(ls "$raw"/customers "$raw"/orders "$raw"/lines | grep -c tsv)" = 9
in=(--customers "$raw/customers" --orders "$raw/orders" --lines "$raw/lines")

"$KILN" create orders --family c --family o:compression=zstd \
    --split "$(be_key 4 1500)" --split "$(be_key 4 4000)" >/dev/null 2>>"$work/last.err"
check "kiln create orders" test $? = 0
run_view 2 "$work/out2" "${in[@]}"
check "job np=2: exits 0" test "$rc" = 0 -a -f "$work/out2/_SUCCESS"
run_view 3 "$work/out3" "${in[@]}"
check "job np=3: exits 0" test "$rc" = 0 -a -f "$work/out3/_SUCCESS"
check "np=2 and np=3 write the same HFiles byte for byte" same_output "$work/out2" "$work/out3"
run_view 3 "$work/out3b" --lines "$raw/lines" --customers "$raw/customers" --orders "$raw/orders"
check "inputs in another order: the same HFiles" same_output "$work/out2" "$work/out3b"
check "one HFile per region and family" \
    test "$(ls "$work/out2/c" | wc -l) $(ls "$work/out2/o" | wc -l)" = "3 3"

$CHECK expect orders --job-time $JOB_TIME --out "$work" \
    customers="$raw/customers" orders="$raw/orders" lines="$raw/lines" -- \
    "get 1" "get 2" "get 2500" "get 5999" "get 999999" 2>>"$work/last.err"
check "brute force ran" test $? = 0
dump_cells "$work/out2" >"$work/got_cells.txt"
same "every cell equals the brute force" "$work/cells.txt" "$work/got_cells.txt"
counters_of "$work/out2" orders >"$work/got_counters.txt"
same "every orders counter equals the brute force" "$work/counters.txt" "$work/got_counters.txt"
for c in "Bad Lines" "Duplicate rows" "Lines without an order" "Orders without a customer" \
    "Orders without lines"; do
    check "the input exercises '$c'" grep -q "^$c.*=[1-9]" "$work/counters.txt"
done

"$KILN" load orders "$work/out2" --no-split >/dev/null 2>>"$work/last.err"
check "kiln load orders --no-split" test $? = 0
check "kiln count: one row per customer, as the brute force" \
    test "$("$KILN" count orders 2>/dev/null | grep -o '^[0-9]*')" = "$(cat "$work/rows.txt")"

# ---------------------------------------------------------------- queries
start_server || views_finish
n=0
for c in 1 2 2500 5999; do
    n=$((n + 1))
    kiln_lines get orders "$(be_key 4 $c)" >"$work/k$n.txt"
    same "kiln get: customer $c with every order line" "$work/q$n.txt" "$work/k$n.txt"
    http_lines "orders/$(pct "$(be_key 4 $c)")" >"$work/h$n.txt"
    same "HTTP GET: customer $c" "$work/q$n.txt" "$work/h$n.txt"
done
check "customer 1 has orders, customer 5999 none (c cells only)" \
    bash -c "grep -q '	o:' '$work/q1.txt' && ! grep -q '	o:' '$work/q4.txt'"
grep "	o:" "$work/q1.txt" >"$work/q1o.txt"
kiln_lines get orders "$(be_key 4 1)" o >"$work/k1o.txt"
same "kiln get ROW o: customer 1's order lines only" "$work/q1o.txt" "$work/k1o.txt"
http_lines "orders/$(pct "$(be_key 4 1)")/o" >"$work/h1o.txt"
same "HTTP GET ROW/o: customer 1's order lines only" "$work/q1o.txt" "$work/h1o.txt"
code=$(curl -s -o /dev/null -w '%{http_code}' "$U/orders/$(pct "$(be_key 4 999999)")")
check "HTTP GET of an unknown customer: 404" test "$code" = 404
check "kiln-server stops cleanly on SIGTERM" stop_server

# ---------------------------------------------------------------- refusals
run_view 2 "$work/x" --input "$raw"
check "--input instead of the three inputs: exit 64" \
    bash -c "[ $rc = 64 ] && grep -q 'give the inputs as --customers' '$work/last.err'"
run_view 2 "$work/y" --customers "$raw/customers" --orders "$raw/orders"
check "no --lines: exit 64" bash -c "[ $rc = 64 ] && grep -q -- '--lines PATH... is required' '$work/last.err'"

views_finish
