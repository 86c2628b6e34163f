#!/usr/bin/env bash
# fuzz.sh -- long libFuzzer runs of Kiln's fuzz targets.
#
#   scripts/fuzz.sh [--minutes N] [--jobs J] [TARGET...]
#
# Runs each TARGET (default: every build/fuzz/fuzz_* target; build them with
# `make fuzz`) for N minutes (default 60), J at a time (default 1), over a
# corpus kept between runs in build/fuzz-corpus/TARGET (seeded from
# fuzz/corpus/TARGET, and for the HFile target from tests/data/hbase). A crash,
# leak or time-out is saved to build/fuzz-artifacts/ and fails the run; keep
# it, minimized, in fuzz/regressions/TARGET/ once fixed, so that `make test`
# replays it. One line per run is appended to build/fuzz-runs.log: target,
# seconds, executions, edges covered (cov), features (ft), corpus size, result.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
minutes=60
jobs=1
targets=()
usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "fuzz.sh: unknown option '$1' (try --help)" >&2; exit 64 ;;
    *) targets+=("$1"); shift ;;
  esac
done
case $minutes in ''|*[!0-9]*|0) echo "fuzz.sh: --minutes needs a positive number" >&2; exit 64 ;; esac
case $jobs in ''|*[!0-9]*|0) echo "fuzz.sh: --jobs needs a positive number" >&2; exit 64 ;; esac
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$BUILD"/fuzz/fuzz_*; do [ -x "$f" ] && targets+=("$(basename "$f")"); done
fi
[ ${#targets[@]} -gt 0 ] || { echo "fuzz.sh: no targets in $BUILD/fuzz (run make fuzz)" >&2; exit 66; }
mkdir -p "$BUILD/fuzz-artifacts"

run_one() {
  local name=$1 bin="$BUILD/fuzz/$1" corpus="$BUILD/fuzz-corpus/$1" log="$BUILD/fuzz-logs/$1.log"
  [ -x "$bin" ] || { echo "fuzz.sh: $bin is missing (run make fuzz)" >&2; return 66; }
  mkdir -p "$corpus" "$BUILD/fuzz-logs"
  [ -d "fuzz/corpus/$name" ] && cp -n fuzz/corpus/"$name"/* "$corpus/" 2>/dev/null
  case $name in *hfile*) cp -n tests/data/hbase/*.hfile "$corpus/" ;; esac
  local start rc result
  start=$(date +%s)
  "$bin" -max_total_time=$((minutes * 60)) -rss_limit_mb=2048 -max_len=65536 -timeout=25 \
    -print_final_stats=1 -artifact_prefix="$BUILD/fuzz-artifacts/$name-" "$corpus" > "$log" 2>&1
  rc=$?
  result=clean
  [ "$rc" -eq 0 ] || result="FAILED (exit $rc, see $log)"
  local execs cov ft
  execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  printf '%s\t%s\t%ss\texecs=%s\tcov=%s\tft=%s\tcorpus=%s\t%s\n' "$(date -u +%FT%TZ)" "$name" \
    "$(( $(date +%s) - start ))" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
    "$(find "$corpus" -type f | wc -l)" "$result" | tee -a "$BUILD/fuzz-runs.log"
  [ "$rc" -eq 0 ]
}

failed=0
running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=$((failed + 1))
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=$((failed + 1))
  running=$((running - 1))
done
[ "$failed" -eq 0 ]
