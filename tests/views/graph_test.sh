#!/usr/bin/env bash
# graph_test.sh -- the graph view end to end, once into an unsalted table
# (three regions) and once into a salted one (four buckets): a kiln-gen
# forest with second parents and bad lines, plus hand-written lines (a
# self-edge, a lone node, a cycle, an edge restated with a new type); the
# job at -np 1 and -np 3 (byte-identical HFiles); every cell and counter
# equal to views_check.py's brute force; `kiln load`; then children and
# parents (one Get of a family), the subtree to depth 2 and 3 and the path
# to a root (scripts/graph_query.py), each through `kiln` and through
# kiln-server's HTTP API, equal to the brute force. Prints "N passed, N failed".
set -u
VIEW=graph
. "$(dirname "$0")/lib.sh"
views_begin
QUERY="python3 $ROOT/scripts/graph_query.py"

raw=$work/raw
"$GEN" graph --rows 4000 --seed 11 --files 4 --bad 3 --output "$raw" 2>>"$work/last.err"
check "kiln-gen graph: exits 0" test $? = 0
"$GEN" graph --rows 4000 --seed 11 --files 4 --bad 3 --output "$work/raw_again" 2>>"$work/last.err"
check "kiln-gen graph is deterministic" diff -r "$raw" "$work/raw_again"
# Named to come first, so that rank 0 logs the self-edge: a self-edge (bad),
# a node without edges, a two-node cycle, and an edge restated later with
# another child type (the last line wins).
printf '%s\n' $'7\tteam\t7\tteam\t1704067200000' \
    $'4000000000\tstandalone\t1704067200000' \
    $'4000000001\tloop\t4000000002\tloop\t1704067200000' \
    $'4000000002\tloop\t4000000001\tloop\t1704067200001' \
    $'4000000003\tdept\t4000000004\tteam\t1704067200000' \
    $'4000000003\tdept\t4000000004\tsquad\t1704067200005' >"$raw/a-extra.tsv"

eval "$($CHECK graphpick "$raw" | sed 's/^/P_/')" 2>>"$work/last.err"
check "brute force picks the nodes to ask about" test -n "${P_root:-}" -a -n "${P_dag:-}" -a -n "${P_lone:-}"
UNKNOWN=3999999999
CYC=4000000001

# ---------------------------------------------------------------- the job
"$KILN" create graph --family p --family c --split "$(be_key 4 1400)" --split "$(be_key 4 2800)" \
    >/dev/null 2>>"$work/last.err"
check "kiln create graph (3 regions)" test $? = 0
"$KILN" create graph_salted --family p --family c --salt-buckets 4 >/dev/null 2>>"$work/last.err"
check "kiln create graph_salted --salt-buckets 4" test $? = 0

# Queries, in the order of the brute force's q files.
queries=(
    "children $P_root" "children $P_hub" "children $P_lone" "children $UNKNOWN"
    "parents $P_dag" "parents $P_deep" "parents $P_root" "parents $CYC"
    "childids $P_root" "parentids $P_dag" "childids 4000000003"
    "subtree $P_root 2" "subtree $P_root 3" "subtree $P_dagroot 3" "subtree $P_hub 2"
    "subtree $P_lone 3" "subtree $CYC 5"
    "path $P_deep" "path $P_dag" "path $P_root" "path $P_lone" "path $CYC"
)
for salt in 0 4; do
    table=graph
    [ $salt = 4 ] && table=graph_salted
    run_view 1 "$work/$table.1" --input "$raw" --table $table
    check "$table: job np=1 exits 0" test "$rc" = 0 -a -f "$work/$table.1/_SUCCESS"
    run_view 3 "$work/$table.3" --input "$raw" --table $table
    check "$table: job np=3 exits 0" test "$rc" = 0 -a -f "$work/$table.3/_SUCCESS"
    check "$table: np=1 and np=3 write the same HFiles byte for byte" \
        same_output "$work/$table.1" "$work/$table.3"
    check "$table: one HFile per region and family" \
        test "$(find "$work/$table.3/c" "$work/$table.3/p" -type f | wc -l)" = $((salt ? 8 : 6))
    check "$table: the self-edge was logged as a bad line" \
        grep -q "a-extra.tsv:1: a node its own parent" "$work/job.err"

    mkdir -p "$work/bf_$table"
    $CHECK expect graph --salt-buckets $salt --out "$work/bf_$table" "$raw" -- "${queries[@]}" \
        2>>"$work/last.err"
    check "$table: brute force ran" test $? = 0
    dump_cells "$work/$table.3" >"$work/got_cells_$table.txt"
    same "$table: every cell equals the brute force" "$work/bf_$table/cells.txt" \
        "$work/got_cells_$table.txt"
    counters_of "$work/$table.3" graph >"$work/got_counters_$table.txt"
    same "$table: every graph counter equals the brute force" "$work/bf_$table/counters.txt" \
        "$work/got_counters_$table.txt"
    "$KILN" load $table "$work/$table.3" --no-split >/dev/null 2>>"$work/last.err"
    check "$table: kiln load --no-split" test $? = 0
    check "$table: kiln count: one row per node, as the brute force" \
        test "$("$KILN" count $table 2>/dev/null | grep -o '^[0-9]*')" = "$(cat "$work/bf_$table/rows.txt")"
done
bf=$work/bf_graph
check "the input has nodes with several parents" \
    grep -qE '^Nodes with several parents=[1-9]' "$bf/counters.txt"
check "the repeated edge is counted (Duplicate rows)" \
    grep -qE '^Duplicate rows \(last line kept\)=[1-9]' "$bf/counters.txt"
check "the brute force's subtree of $P_dagroot reaches $P_dag, a node of two parents, once" \
    test "$(cut -f2 "$bf/q14.txt" | grep -cx "$P_dag")" = 1
check "the brute force keeps the restated edge's last child type" \
    grep -qx $'4000000004\tsquad' "$bf/q11.txt"

# ---------------------------------------------------------------- queries
# expect_query NAME N OUTFILE RC CMD...: CMD's stdout equals q N and it exits RC
expect_query() {
    local name=$1 n=$2 got=$3 want_rc=$4 qrc
    shift 4
    "$@" >"$got" 2>>"$work/last.err"
    qrc=$?
    if [ "$qrc" != "$want_rc" ]; then
        bad "$name (exit $qrc, expected $want_rc)" "$work/last.err"
    else
        same "$name" "$bf/q$n.txt" "$got"
    fi
    : >"$work/last.err"
}

# one_table TABLE MODE: every query through kiln (MODE=kiln) or HTTP (MODE=http)
one_table() {
    local t=$1 mode=$2 i n q fam node
    local -a via
    if [ "$mode" = kiln ]; then via=(--kiln "$KILN" --table "$t"); else via=(--url "$U" --table "$t"); fi
    for i in "${!queries[@]}"; do
        n=$((i + 1))
        read -r q node _ <<<"${queries[$i]}"
        local got=$work/got_${t}_${mode}_$n.txt
        case $q in
        children | parents)
            fam=${q:0:1}
            if [ "$mode" = kiln ]; then
                kiln_lines get "$t" "$(be_key 4 "$node")" "$fam" >"$got" 2>>"$work/last.err"
            else
                http_lines "$t/$(pct "$(be_key 4 "$node")")/$fam" >"$got" 2>>"$work/last.err"
            fi
            local allow=0
            [ "$node" = $UNKNOWN ] && allow=1
            ALLOW_EMPTY=$allow same "$t $mode: $q of $node (one Get of family $fam)" "$bf/q$n.txt" "$got"
            ;;
        childids | parentids)
            local sub=parents
            [ $q = childids ] && sub=children
            expect_query "$t $mode: graph_query.py $sub of $node" $n "$got" 0 \
                $QUERY "${via[@]}" $sub "$node"
            ;;
        subtree)
            read -r _ _ depth <<<"${queries[$i]}"
            expect_query "$t $mode: subtree of $node to depth $depth" $n "$got" 0 \
                $QUERY "${via[@]}" subtree "$node" "$depth"
            ;;
        path)
            local want=0
            [ "$node" = $CYC ] && want=2
            expect_query "$t $mode: path from $node to a root (exit $want)" $n "$got" $want \
                $QUERY "${via[@]}" path "$node"
            ;;
        esac
    done
    check "$t $mode: graph_query.py on an unknown node exits 1" \
        test "$($QUERY "${via[@]}" subtree $UNKNOWN 2 2>/dev/null; echo $?)" = 1
}

# the salted table's cells are not the unsalted one's bytes, but its answers are
for t in graph graph_salted; do
    one_table $t kiln
done
start_server || views_finish
for t in graph graph_salted; do
    one_table $t http
    check "$t: HTTP Get of an unknown node is 404" \
        test "$(curl -s -o /dev/null -w '%{http_code}' "$U/$t/$(pct "$(be_key 4 $UNKNOWN)")/c")" = 404
done
check "kiln-server stops cleanly on SIGTERM" stop_server

# ---------------------------------------------------------------- refusals
run_view 1 "$work/strict" --input "$raw" --table graph -D graph.skip.bad.lines=false
check "graph.skip.bad.lines=false: exit 65 naming the file and line" \
    test "$rc" = 65 -a -n "$(grep -l 'a-extra.tsv:1: bad line: a node its own parent' "$work/job.err")"
run_view 1 "$work/ix" --input "$raw" --table graph -D kiln.index=bytype:c:x
check "kiln.index is refused (exit 64), naming the reason" \
    test "$rc" = 64 -a -n "$(grep -l 'kiln.index is not supported' "$work/job.err")"
check "kiln-mr graph --help prints the usage" \
    grep -q "Usage: kiln-mr graph --input" <("$ROOT/$BUILD/bin/kiln-mr" graph --help 2>&1)

views_finish
