#!/usr/bin/env bash
# Short libFuzzer run of one target over its seed corpus (fuzz/corpus/<target>/),
# with the minimized crashers in fuzz/regressions/<target>/ replayed first.
# Prints "fuzz: N passed, N failed" (N = inputs replayed + 1 for the timed run).
set -u
target=$1
name=$(basename "$target")
secs=${KILN_FUZZ_SECONDS:-10}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
[ -d "fuzz/corpus/$name" ] && cp -r "fuzz/corpus/$name/." "$work/corpus/" 2>/dev/null
# HFile targets also start from the real HBase-written vectors (tests/data/hbase);
# their absence is a failure, not a smaller corpus.
case "$name" in *hfile*)
  if ! cp tests/data/hbase/*.hfile "$work/corpus/"; then
    echo "HBase vectors missing: tests/data/hbase/*.hfile"
    echo "fuzz: 0 passed, 1 failed"
    exit 1
  fi ;;
esac
passed=0; failed=0
if [ -d "fuzz/regressions/$name" ]; then
  for f in fuzz/regressions/"$name"/*; do
    [ -f "$f" ] || continue
    if "$target" "$f" >/dev/null 2>&1; then passed=$((passed+1)); else echo "regression input fails: $f"; failed=$((failed+1)); fi
  done
fi
if "$target" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 \
     -artifact_prefix="$work/" "$work/corpus" >"$work/log" 2>&1; then
  passed=$((passed+1))
  grep -E '^Done|stat::number_of_executed_units' "$work/log" | tail -2
else
  failed=$((failed+1))
  tail -40 "$work/log"
  for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-*; do
    [ -f "$a" ] && { mkdir -p build/fuzz-artifacts; cp "$a" build/fuzz-artifacts/; echo "artifact saved: build/fuzz-artifacts/$(basename "$a")"; }
  done
fi
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
