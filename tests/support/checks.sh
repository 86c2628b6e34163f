# checks.sh -- what the end-to-end test scripts share (sourced, bash): the
# pass/fail count and the checks that feed it. The caller has set $T (a
# scratch directory) and $KILN before sourcing; a check's command writes its
# standard output to $T/out and its standard error to $T/err.

passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# require_kiln: stop at once, failed, when $KILN was not built.
require_kiln() {
    if [ ! -x "$KILN" ]; then
        echo "FAIL: $KILN not built"
        echo "0 passed, 1 failed"
        exit 1
    fi
}

# run CMD...: stdout to $T/out, stderr to $T/err, exit code to $rc.
run() {
    "$@" >"$T/out" 2>"$T/err"
    rc=$?
}

# expect_rc NAME RC CMD...: the command exits with RC.
expect_rc() {
    local name=$1 want=$2
    shift 2
    run "$@"
    if [ "$rc" -eq "$want" ]; then ok; else bad "$name: exit $rc, want $want; stderr: $(head -c 300 "$T/err")"; fi
}

# expect_grep NAME FILE PATTERN: FILE has a line matching the ERE PATTERN.
expect_grep() {
    if grep -qE -- "$3" "$2"; then ok; else bad "$1: no line matching '$3' in: $(head -c 500 "$2")"; fi
}

# expect_eq NAME GOT WANT
expect_eq() {
    if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi
}

# proc_state PID: its one-letter state from /proc, empty once it is gone (a
# zombie counts as gone).
proc_state() {
    local s
    s=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
    [ "$s" = Z ] || echo "$s"
}
