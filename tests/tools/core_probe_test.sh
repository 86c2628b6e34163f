#!/usr/bin/env bash
# core_probe_test.sh -- kiln-core-probe, the benchmark scripts' check of how
# independent the machine's CPUs are: its usage errors, a measured line whose
# ratio is its own two medians' quotient, and a process held to one CPU
# (taskset), which has nothing beside it to measure. No figure is checked
# against a goal: what the ratio is depends on the machine.
# Prints "N passed, N failed"; exits 1 on failure.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PROBE=$BUILD/bin/kiln-core-probe
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

[ -x "$PROBE" ] || { echo "FAIL: $PROBE is not built"; echo "0 passed, 1 failed"; exit 1; }

"$PROBE" --help >"$T/help" 2>&1 && grep -q '^Usage: kiln-core-probe' "$T/help" && ok ||
    bad "--help: $(head -3 "$T/help")"

# usage errors: exit 64, naming what was wrong
usage() {
    local want=$1
    shift
    "$PROBE" "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    if [ "$rc" = 64 ] && grep -q -- "$want" "$T/err"; then ok; else
        bad "kiln-core-probe $*: exit $rc, stderr: $(head -1 "$T/err")"
    fi
}
usage "--rounds must be 1..1000, got '0'" --rounds 0
usage "--ms must be 1..10000, got 'x'" --ms x
usage "--cpus must be two different CPU numbers A,B, got '1,1'" --cpus 1,1
usage "--cpus must be two different CPU numbers A,B, got '3'" --cpus 3
usage "unexpected argument 'extra'" extra

ncpu=$(nproc)
if [ "$ncpu" -ge 2 ]; then
    # a measured line: ratio = beside_ms / alone_ms of the same line
    if "$PROBE" --rounds 2 --ms 5 >"$T/out" 2>"$T/err"; then
        line=$(head -1 "$T/out")
        if python3 - "$line" <<'PY'
import re, sys
m = re.fullmatch(r"core_probe cpus=(\d+) a=(\d+) b=(\d+) rounds=2 alone_ms=([\d.]+) "
                 r"beside_ms=([\d.]+) ratio=([\d.]+)", sys.argv[1])
if not m:
    sys.exit("no match")
cpus, a, b = int(m[1]), int(m[2]), int(m[3])
alone, beside, ratio = float(m[4]), float(m[5]), float(m[6])
assert cpus >= 2 and a != b, (cpus, a, b)
assert alone > 0 and beside > 0, (alone, beside)
# the figures print rounded: ms to 0.1, the ratio to 0.01
tol = 0.006 + ratio * (0.05 / alone + 0.05 / beside)
assert abs(ratio - beside / alone) <= tol, (ratio, beside / alone, tol)
PY
        then ok; else bad "measured line: '$line'"; fi
        sed -n 2p "$T/out" | grep -qE '^CPUs [0-9]+ and [0-9]+ (share one core|slow each other|are independent)' &&
            ok || bad "second line: '$(sed -n 2p "$T/out")'"
    else
        bad "a run: exit $?, $(head -1 "$T/err")"
    fi
    # --cpus names CPUs this process may not run on
    "$PROBE" --cpus 0,1 --rounds 1 --ms 1 >"$T/out" 2>&1 && ok || bad "--cpus 0,1: $(head -1 "$T/out")"
    taskset -c 0 "$PROBE" --cpus 0,1 >"$T/out" 2>"$T/err"
    rc=$?
    { [ "$rc" = 64 ] && grep -q 'may not run on both' "$T/err"; } && ok ||
        bad "--cpus 0,1 under taskset -c 0: exit $rc, $(head -1 "$T/err")"
fi
# one CPU: said, exit 0
taskset -c 0 "$PROBE" >"$T/out" 2>"$T/err" && grep -q '^core_probe cpus=1: one CPU' "$T/out" && ok ||
    bad "one CPU: $(cat "$T/out" "$T/err" | head -2)"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
