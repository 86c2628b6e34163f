#!/usr/bin/env bash
# wordcount_peers_bench.sh -- word count against MR-MPI and Phoenix++ on the
# 200 MiB Zipf corpus, 2 cores each, with the peer harness of the shared
# benchmark directory (PEERS/mapreduce: build.sh builds the peers, run.sh
# alternates the engines round by round, cross-checks every run's total,
# distinct and top-10 counts and prints medians and Kiln/peer ratios).
#
#   scripts/wordcount_peers_bench.sh [--peers PEERS] [--rounds R] [--work DIR]
#
# PEERS defaults to $KILN_PEERS or ../shared/bench/peers (relative to the
# repository); the peers' sources stay there, outside the repository. The
# harness is copied to build/bench/wordcount-peers/ before it runs, so its
# result files (wordcount.txt, runs.csv) land in
# build/bench-results/<time>-wordcount/ and the peer directory is only read.
# Peers build in DIR/peers, corpus and logs in DIR (default /tmp/kiln-bench/wordcount).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PEERS=${KILN_PEERS:-../shared/bench/peers}
ROUNDS=3
WORK=${BENCH_DIR:-/tmp/kiln-bench}/wordcount
usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case $1 in
    --peers) PEERS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "wordcount_peers_bench.sh: unknown argument '$1'" >&2; usage >&2; exit 64 ;;
    esac
done
case $ROUNDS in '' | *[!0-9]* | 0) echo "wordcount_peers_bench.sh: --rounds takes a positive number, not '$ROUNDS'" >&2; exit 64 ;; esac

harness=$PEERS/mapreduce
if [ ! -x "$harness/run.sh" ] || [ ! -x "$harness/build.sh" ] || [ ! -f "$PEERS/../gen_corpus.c" ]; then
    echo "wordcount_peers_bench.sh: no word-count peer harness at $harness (run.sh, build.sh and" >&2
    echo "  ../gen_corpus.c beside the peers directory); give its path with --peers or KILN_PEERS." >&2
    echo "  Nothing was measured." >&2
    exit 66
fi

BUILD=${BUILD:-build}
[ -x "$BUILD/bin/kiln-mr" ] || make -j"$(nproc)" >&2

# The harness reads ../../gen_corpus.c relative to itself and writes results/
# beside itself: give it that shape in build/, so the peer directory stays read-only.
copy=$ROOT/$BUILD/bench/wordcount-peers
rm -rf "$copy"
mkdir -p "$copy/peers"
cp -a "$harness" "$copy/peers/mapreduce"
cp "$PEERS/../gen_corpus.c" "$copy/gen_corpus.c"
rm -rf "$copy/peers/mapreduce/results"

mkdir -p "$WORK"
echo "wordcount_peers_bench.sh: peers from $harness, built in $WORK/peers; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$copy/peers/mapreduce/build.sh" "$WORK/peers" > "$WORK/build.log" 2>&1 \
    || { echo "wordcount_peers_bench.sh: building the peers failed: $WORK/build.log" >&2; exit 1; }
status=0
KILN=$ROOT PEERS=$WORK/peers WORK=$WORK "$copy/peers/mapreduce/run.sh" "$ROUNDS" || status=$?
out=$ROOT/$BUILD/bench-results/$(date -u +%Y%m%dT%H%M%SZ)-wordcount
mkdir -p "$out"
cp -a "$copy/peers/mapreduce/results/." "$out/" 2>/dev/null || true
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); results in $out" >&2
exit "$status"
