#!/usr/bin/env bash
# kiln_filter_test.sh -- `kiln scan --filter` in HBase shell syntax. Each
# filter's rows, embedded, must equal the rows an awk brute force over the
# loaded cells picks; the same scan through kiln-server (the filter sent in
# the Scanner body) must print the same bytes; malformed filters are usage
# errors (64) naming the problem. Prints "N passed, N failed"; exits 1 on
# failure.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
KILN=$BUILD/bin/kiln
SERVER=$BUILD/bin/kiln-server
T=$(mktemp -d)
D=$T/data
SPID=
cleanup() {
    if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then
        kill -TERM "$SPID" 2>/dev/null
        wait "$SPID" 2>/dev/null
    fi
    rm -rf "$T"
}
trap cleanup EXIT
export KILN_DATA=$D

passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}
for b in "$KILN" "$SERVER"; do
    [ -x "$b" ] || { bad "$b not built"; finish; }
done

# ---------------------------------------------------------------- data
# rows k000..k199: f:a = "x" for multiples of 7 else "y<i>", f:b = i on even
# rows; g:c on rows whose number ends in 5.
"$KILN" create t --family f --family g --split k100 >/dev/null || bad "create"
mkdir -p "$T/j/f" "$T/j/g"
for i in $(seq 0 199); do
    k=$(printf 'k%03d' "$i")
    if [ $((i % 7)) -eq 0 ]; then v=x; else v=y$i; fi
    printf '%s\tf:a\t10\tPut\t%s\n' "$k" "$v"
    [ $((i % 2)) -eq 0 ] && printf '%s\tf:b\t20\tPut\t%d\n' "$k" "$i"
done >"$T/f.tsv"
for i in $(seq 5 10 199); do printf 'k%03d\tg:c\t30\tPut\tc%d\n' "$i" "$i"; done >"$T/g.tsv"
"$KILN" hfile write "$T/j/f/p" --family f --input "$T/f.tsv" >/dev/null || bad "hfile f"
"$KILN" hfile write "$T/j/g/p" --family g --input "$T/g.tsv" >/dev/null || bad "hfile g"
touch "$T/j/_SUCCESS"
"$KILN" load t "$T/j" >/dev/null && ok || bad "load"
sort -t "$(printf '\t')" -k1,1 -k2,2 "$T/f.tsv" "$T/g.tsv" >"$T/all.tsv"

LOG=$T/server.log
"$SERVER" --data "$D" --listen 127.0.0.1:0 --threads 2 --cache-mb 16 >"$LOG" 2>&1 &
SPID=$!
HP=
for _ in $(seq 200); do
    HP=$(sed -nE 's/.*over HTTP on .* \(port ([0-9]+)\).*/\1/p' "$LOG" | head -1)
    [ -n "$HP" ] && break
    sleep 0.05
done
[ -n "$HP" ] || { bad "kiln-server did not start: $(cat "$LOG")"; finish; }

# rows FILTER: the row keys the embedded scan prints, one a line
rows() {
    "$KILN" scan t --filter "$1" >"$T/emb.out" 2>"$T/emb.err" || return 1
    awk 'NR > 1 && /^ / {print $1}' "$T/emb.out" | uniq
}
# check NAME FILTER AWK-PROGRAM: the rows equal those the awk program picks
# from the cells (fields: row, column, ts, type, value), and the server agrees
check() {
    local name=$1 f=$2 prog=$3
    local got want
    got=$(rows "$f") || { bad "$name: embedded scan failed: $(cat "$T/emb.err")"; return; }
    want=$(awk -F '\t' "$prog" "$T/all.tsv" | uniq)
    if [ -n "$want" ] && [ "$got" = "$want" ]; then ok; else
        bad "$name: rows '$(echo $got | head -c 200)', want '$(echo $want | head -c 200)'"
    fi
    "$KILN" --server "127.0.0.1:$HP" scan t --filter "$f" >"$T/srv.out" 2>"$T/srv.err"
    if cmp -s "$T/emb.out" "$T/srv.out"; then ok; else
        bad "$name: through kiln-server: $(diff "$T/emb.out" "$T/srv.out" | head -4) $(cat "$T/srv.err")"
    fi
}

check "PrefixFilter" "PrefixFilter('k01')" '$1 ~ /^k01/ {print $1}'
check "ValueFilter binary" "ValueFilter(=, 'binary:x')" '$5 == "x" {print $1}'
check "AND" "PrefixFilter('k1') AND ValueFilter(=, 'binary:x')" '$1 ~ /^k1/ && $5 == "x" {print $1}'
check "OR, parentheses" "(RowFilter(<, 'binary:k003') OR RowFilter(>=, 'binary:k197')) AND FamilyFilter(=, 'binary:f')" \
    '($1 < "k003" || $1 >= "k197") && $2 ~ /^f:/ {print $1}'
check "QualifierFilter substring" "QualifierFilter(=, 'substring:C')" '$2 == "g:c" {print $1}'
check "ValueFilter regexstring" "ValueFilter(=, 'regexstring:^y1[0-9]\$')" '$5 ~ /^y1[0-9]$/ {print $1}'
check "binaryprefix" "RowFilter(=, 'binaryprefix:k19')" '$1 ~ /^k19/ {print $1}'
check "SingleColumnValueFilter, filterIfMissing" "SingleColumnValueFilter('f', 'b', =, 'binary:42', true, true)" \
    '$2 == "f:b" && $5 == "42" {print $1}'
# HBase's default keeps the rows that lack the column (the odd ones here)
check "SingleColumnValueFilter, rows without the column" "SingleColumnValueFilter('f', 'b', =, 'binary:42') AND PrefixFilter('k04')" \
    '$1 ~ /^k04/ && ($1 == "k042" || substr($1, 4) % 2 == 1) {print $1}'
check "ColumnPrefixFilter" "ColumnPrefixFilter('c')" '$2 == "g:c" {print $1}'
check "MultipleColumnPrefixFilter" "MultipleColumnPrefixFilter('b', 'c')" '$2 == "f:b" || $2 == "g:c" {print $1}'
check "TimestampsFilter" "TimestampsFilter(30, 99)" '$3 == 30 {print $1}'
check "PageFilter" "PageFilter(4)" '!seen[$1]++ && ++n <= 4 {print $1}'
check "a quote in a string" "ValueFilter(!=, 'binary:it''s') AND PrefixFilter('k000')" '$1 == "k000" {print $1}'

# KeyOnlyFilter empties values; FirstKeyOnlyFilter keeps one cell a row
"$KILN" scan t --filter "PrefixFilter('k004') AND KeyOnlyFilter()" >"$T/out"
if grep -q 'value=$' "$T/out" && ! grep -q 'value=.' "$T/out"; then ok; else bad "KeyOnlyFilter: $(head -3 "$T/out")"; fi
n=$("$KILN" scan t --filter "FirstKeyOnlyFilter()" | tail -1)
if [ "$n" = "200 row(s)" ]; then ok; else bad "FirstKeyOnlyFilter: $n"; fi
cells=$("$KILN" scan t --filter "FirstKeyOnlyFilter()" | grep -c '^ ')
if [ "$cells" = 200 ]; then ok; else bad "FirstKeyOnlyFilter: $cells cells, want 200"; fi
n=$("$KILN" scan t --filter "ValueFilter(=, 'binary:x')" --limit 3 | tail -1)
if [ "$n" = "3 row(s)" ]; then ok; else bad "--limit counts filtered rows: $n"; fi

# ---------------------------------------------------------------- bad filters
bad_filter() {
    local f=$1 msg=$2
    "$KILN" scan t --filter "$f" >"$T/out" 2>"$T/err"
    local rc=$?
    if [ "$rc" = 64 ] && grep -qF -- "$msg" "$T/err"; then ok; else
        bad "filter '$f': exit $rc, stderr '$(cat "$T/err")', want 64 and '$msg'"
    fi
}
bad_filter "Nope('a')" "unknown filter 'Nope'"
bad_filter "PrefixFilter('a'" "expected ',' or ')'"
bad_filter "PrefixFilter('a)" "unterminated string"
bad_filter "PrefixFilter(1)" "wrong arguments to PrefixFilter"
bad_filter "ValueFilter('binary:x')" "wrong arguments to ValueFilter"
bad_filter "ValueFilter(=, 'bytes:x')" "a comparator is"
bad_filter "PrefixFilter('a') AND" "expected a filter"
bad_filter "PrefixFilter('a') XOR PrefixFilter('b')" "unexpected text after the filter"
bad_filter "SKIP ValueFilter(=, 'binary:x')" "SKIP and WHILE are not supported"
bad_filter "$(printf '(%.0s' $(seq 40))PrefixFilter('a')" "nested too deep"
bad_filter "" "expected a filter"
"$KILN" scan t --index i --value v --filter "PrefixFilter('a')" >/dev/null 2>"$T/err"
if [ $? = 64 ]; then ok; else bad "--index with --filter: not a usage error"; fi
finish
