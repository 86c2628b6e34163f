#!/usr/bin/env bash
# Runs every test program under $BUILD/tests and every tests/**/*_test.sh script,
# then prints one closing line: "tests: N passed, N failed".
# Counts are of individual cmocka test cases (and of scripts' own counts).
set -u
BUILD=${BUILD:-build}
FUZZ=${FUZZ:-1}
cd "$(dirname "$0")/.."
export BUILD

# The scripts start python3 several hundred times. Where python3 is a version
# manager's shim (pyenv's is a shell script that runs two more), each start
# costs about 0.25 s instead of 0.03 s on a slow machine. Ask the shim once for
# the interpreter it picks and put that first on PATH as python3: the same
# interpreter, without the detour.
if py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ]; then
  case $BUILD in /*) py_dir=$BUILD/test-path ;; *) py_dir=$PWD/$BUILD/test-path ;; esac
  mkdir -p "$py_dir" && ln -sf "$py" "$py_dir/python3" && export PATH="$py_dir:$PATH"
fi

passed=0
failed=0
failed_names=()
log_dir="$BUILD/test-logs"
mkdir -p "$log_dir"

# Parse "[  PASSED  ] N test(s)." / "[  FAILED  ] N test(s)" lines and the
# scripts' own "N passed, N failed" lines.
count_from_log() {
  local log=$1 p f
  p=$(grep -E '^\[  PASSED  \] [0-9]+ test' "$log" | awk '{s+=$4} END {print s+0}')
  f=$(grep -E '^\[  FAILED  \] [0-9]+ test' "$log" | awk '{s+=$4} END {print s+0}')
  if [ "$p" = 0 ] && [ "$f" = 0 ]; then
    local line
    line=$(grep -E '^([A-Za-z_-]+:)? ?[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
    p=$(echo "$line" | sed -E 's/^[^0-9]*([0-9]+) passed, ([0-9]+) failed.*/\1/')
    f=$(echo "$line" | sed -E 's/^[^0-9]*([0-9]+) passed, ([0-9]+) failed.*/\2/')
  fi
  echo "${p:-0} ${f:-0}"
}

run_one() {
  local name=$1; shift
  local log="$log_dir/$(echo "$name" | tr '/' '_').log"
  local start end rc
  start=$(date +%s)
  "$@" >"$log" 2>&1
  rc=$?
  end=$(date +%s)
  read -r p f < <(count_from_log "$log")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  if [ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
    echo "FAIL $name: ran no test (log: $log)"
    f=1
  fi
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$f" -ne 0 ]; then
    failed_names+=("$name")
    echo "FAIL $name ($p passed, $f failed, $((end - start))s) -- last lines of $log:"
    tail -25 "$log" | sed 's/^/    /'
  else
    echo "ok   $name ($p passed, $((end - start))s)"
  fi
}

# KILN_TESTS, when set, names the tests to run (e.g. "storage/test_block_cache
# tests/serving/server_test.sh"); each must exist.
chosen() {
  [ -z "${KILN_TESTS:-}" ] && return 0
  case " $KILN_TESTS " in *" $1 "*) return 0 ;; esac
  return 1
}
if [ -n "${KILN_TESTS:-}" ]; then
  for n in $KILN_TESTS; do
    [ -x "$BUILD/tests/$n" ] || [ -f "$n" ] || { echo "FAIL $n: no such test"; failed=$((failed + 1)); failed_names+=("$n"); }
  done
fi

for t in $(find "$BUILD/tests" -type f -perm -u+x -name 'test_*' 2>/dev/null | sort); do
  chosen "${t#$BUILD/tests/}" && run_one "${t#$BUILD/tests/}" "$t"
done

for s in $(find tests -name '*_test.sh' | sort); do
  chosen "$s" && run_one "$s" bash "$s"
done

if [ "$FUZZ" = 1 ]; then
  for f in $(find "$BUILD/fuzz" -type f -perm -u+x -name 'fuzz_*' 2>/dev/null | sort); do
    run_one "fuzz/$(basename "$f")" tests/fuzz_smoke.sh "$f"
  done
fi

echo
if [ ${#failed_names[@]} -gt 0 ]; then
  echo "failed: ${failed_names[*]}"
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
