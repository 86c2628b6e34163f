#!/usr/bin/env bash
# self_contained_test.sh -- the checkout builds and tests on its own: no tracked
# file outside the documentation (*.md) reads from the "shared" tree beside it
# or from an absolute path of one machine (under /work). The one exception is the
# peer benchmarks' default peer directory, on the lines of scripts/bench.sh,
# scripts/wordcount_peers_bench.sh and bench/server_bench.sh that name
# KILN_PEERS (the option that overrides it).
# Also: the HBase vectors the tests read are tracked and match the SHA-256 sums
# of tests/data/hbase/README.md, and the check itself finds a planted reference.
# Prints "N passed, N failed"; exits 1 on any failure.
set -u
cd "$(dirname "$0")/.."

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# The patterns are spelled in pieces so that this file, which is tracked and
# checked like any other, does not match them.
SIBLING_TEXT=..'/'shared
ABSOLUTE_TEXT=/work'/'
SIBLING='\.\./'"shared"
ABSOLUTE='/'"work/"
ALLOWED='^(scripts/bench\.sh|scripts/wordcount_peers_bench\.sh|bench/server_bench\.sh):[0-9]+:.*KILN_PEERS'

# refs DIR PATTERN: "file:line:text" of each tracked, non-binary, non-*.md file
# of the checkout at DIR that matches PATTERN, less the allowed lines.
refs() {
    git -C "$1" grep -n -I -E "$2" -- . ':(exclude)*.md' | { grep -v -E "$ALLOWED" || true; }
}

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    bad "not a git checkout: $(pwd) (this test reads the tracked files)"
    echo "$passed passed, $failed failed"
    exit 1
fi

# 1. Nothing reads the sibling tree.
out=$(refs . "$SIBLING")
if [ -z "$out" ]; then
    ok "no tracked file reads $SIBLING_TEXT"
else
    bad "tracked files read a tree beside the checkout:"
    echo "$out" | sed 's/^/    /'
fi

# 2. Nothing names one machine's absolute paths.
out=$(refs . "$ABSOLUTE")
if [ -z "$out" ]; then
    ok "no tracked file names an absolute $ABSOLUTE_TEXT path"
else
    bad "tracked files name absolute $ABSOLUTE_TEXT paths:"
    echo "$out" | sed 's/^/    /'
fi

# 3. The vectors are in the checkout, tracked, and are the bytes the README lists.
sums=$(grep -E '^[0-9a-f]{64}  [A-Za-z0-9_.-]+\.hfile$' tests/data/hbase/README.md 2>/dev/null || true)
nsums=$(printf '%s' "$sums" | grep -c . || true)
tracked=$(git ls-files 'tests/data/hbase/*.hfile' | wc -l)
if [ "$nsums" -eq 0 ]; then
    bad "tests/data/hbase/README.md lists no SHA-256 sums"
elif [ "$tracked" -ne "$nsums" ]; then
    bad "tests/data/hbase: $tracked tracked .hfile files, README lists $nsums"
elif ! (cd tests/data/hbase && printf '%s\n' "$sums" | sha256sum --quiet -c -); then
    bad "tests/data/hbase: a vector is missing or differs from its README sum"
else
    ok "tests/data/hbase: $tracked tracked vectors match their README sums"
fi

# 4. The check finds a planted reference and passes the allowed default.
plant=$(mktemp -d)
trap 'rm -rf "$plant"' EXIT
(
    cd "$plant" && git init -q . &&
    mkdir -p tests scripts &&
    printf '#define D "%s/testdata/x"\n' "$SIBLING_TEXT" >tests/t.c &&
    printf 'PEERS=${KILN_PEERS:-%s/bench/peers}\n' "$SIBLING_TEXT" >scripts/bench.sh &&
    printf 'see %s/bench\n' "$SIBLING_TEXT" >notes.md &&
    git add . && git -c user.name=t -c user.email=t@t commit -q -m plant
) || bad "could not make the planted checkout"
found=$(refs "$plant" "$SIBLING")
if [ "$(printf '%s\n' "$found" | grep -c .)" = 1 ] && printf '%s' "$found" | grep -q '^tests/t\.c:1:'; then
    ok "a planted $SIBLING_TEXT reference is found, with its file and line"
else
    bad "planted reference: want exactly tests/t.c:1, got: ${found:-nothing}"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
