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

# Tests run KILN_TEST_JOBS at a time (default: one per core, at most 4). Most
# are independent: temporary directories of their own, servers on ports the
# kernel picks. Those that are not run alone, one at a time, once the others
# are done (see ALONE below).
jobs=${KILN_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in '' | *[!0-9]* | 0) jobs=1 ;; esac
[ -z "${KILN_TEST_JOBS:-}" ] && [ "$jobs" -gt 4 ] && jobs=4

# Run alone:
#  - storage/test_slab changes the system's reserved huge page count and
#    counts the pages free, which another test's caches would take;
#  - cluster_test.sh builds hosts out of network namespaces, each with its
#    own ranks: it is the heaviest test, and timed by its job timeouts;
#  - deadline_test.sh, stall_test.sh and abuse_test.sh check how long the
#    server takes to answer or to drop a client, within seconds, and
#    server_test.sh that a swap is served within a second.
ALONE=(storage/test_slab tests/cluster/cluster_test.sh tests/serving/deadline_test.sh
       tests/serving/stall_test.sh tests/serving/abuse_test.sh tests/serving/server_test.sh)

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

# log_base NAME: where a test's log, result and reason for failing go.
log_base() { echo "$log_dir/${1//\//_}"; }

# run_one NAME CMD...: run one test, its output to its log, and leave
# "passed failed seconds" in its result file.
run_one() {
  local name=$1; shift
  local base; base=$(log_base "$name")
  local start end rc p f
  start=$(date +%s)
  "$@" >"$base.log" 2>&1
  rc=$?
  end=$(date +%s)
  read -r p f < <(count_from_log "$base.log")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  if [ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
    echo "ran no test" >"$base.why"
    f=1
  fi
  echo "$p $f $((end - start))" >"$base.result"
}

# report NAME: count a finished test and print its line.
report() {
  local name=$1
  local base; base=$(log_base "$name")
  local p=0 f=1 secs=0
  [ -f "$base.result" ] && read -r p f secs <"$base.result"
  passed=$((passed + p))
  failed=$((failed + f))
  if [ -f "$base.why" ]; then
    echo "FAIL $name: $(cat "$base.why") (log: $base.log)"
  elif [ "$f" -ne 0 ]; then
    echo "FAIL $name ($p passed, $f failed, ${secs}s) -- last lines of $base.log:"
    tail -25 "$base.log" | sed 's/^/    /'
  else
    echo "ok   $name ($p passed, ${secs}s)"
  fi
  [ "$f" -ne 0 ] && failed_names+=("$name")
  return 0
}

declare -A running=()   # pid -> name
# reap: wait for one running test to finish, and report it.
reap() {
  local pid
  wait -n -p pid "${!running[@]}" || true
  [ -n "${pid:-}" ] || return 0
  report "${running[$pid]}"
  unset "running[$pid]"
}

# start NAME CMD...: run a test once a slot is free; a test of ALONE waits
# for the end (drain runs those).
alone_names=()
alone_cmds=()
start() {
  local name=$1; shift
  local base; base=$(log_base "$name")
  rm -f "$base.result" "$base.why"
  case " ${ALONE[*]} " in *" $name "*)
    alone_names+=("$name"); alone_cmds+=("$(printf '%q ' "$@")"); return 0 ;;
  esac
  while [ "${#running[@]}" -ge "$jobs" ]; do reap; done
  run_one "$name" "$@" &
  running[$!]=$name
}

# drain: wait for the rest, then run the ALONE tests one at a time.
drain() {
  while [ "${#running[@]}" -gt 0 ]; do reap; done
  local i
  for i in "${!alone_names[@]}"; do
    eval "run_one $(printf '%q' "${alone_names[$i]}") ${alone_cmds[$i]}"
    report "${alone_names[$i]}"
  done
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
  chosen "${t#$BUILD/tests/}" && start "${t#$BUILD/tests/}" "$t"
done

for s in $(find tests -name '*_test.sh' | sort); do
  chosen "$s" && start "$s" bash "$s"
done

if [ "$FUZZ" = 1 ]; then
  for f in $(find "$BUILD/fuzz" -type f -perm -u+x -name 'fuzz_*' 2>/dev/null | sort); do
    start "fuzz/$(basename "$f")" tests/fuzz_smoke.sh "$f"
  done
fi

drain

echo
if [ ${#failed_names[@]} -gt 0 ]; then
  echo "failed: ${failed_names[*]}"
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
