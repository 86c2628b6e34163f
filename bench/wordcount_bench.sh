#!/usr/bin/env bash
# wordcount_bench.sh -- time `./run_job.sh -n NP wordcount` on the 200 MiB
# Zipf corpus of bench/gen_corpus.c (seed 42), the corpus MR-MPI, Mimir and
# Phoenix++ were measured on (their harness is mapreduce/ in the peer
# benchmark directory; this script runs Kiln only).
#
#   bench/wordcount_bench.sh [-n NP] [--runs N] [--sort-mb N] [--corpus FILE] [--format F]
#
# Per run it prints wall seconds, the job's CPU seconds (all ranks), the peak
# RSS of the largest rank (the job's own getrusage counter) and of the largest
# process under mpirun (/usr/bin/time, when present), and the CPU other
# processes used meanwhile ("foreign", from /proc/stat): a run with much
# foreign CPU on a 2-core machine is not a clean measurement. Then the
# medians. The output of the first run is checked against the corpus' known
# totals (48193684 words, 992883 distinct).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}

np=2
runs=3
sort_mb=""
format=text
corpus=${TMPDIR:-/tmp}/kiln-wordcount-corpus.txt
while [ $# -gt 0 ]; do
  case "$1" in
    -n) np=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --sort-mb) sort_mb=$2; shift 2 ;;
    --corpus) corpus=$2; shift 2 ;;
    --format) format=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "wordcount_bench.sh: unknown argument '$1'" >&2; exit 64 ;;
  esac
done

[ -x "$BUILD/bin/kiln-mr" ] || make -j"$(nproc)" >&2

known_sha=72664e3fcb135e0554600241732e43d091247312881ea84c6e08a6cee6e563b1
gen_src=bench/gen_corpus.c
if [ ! -f "$corpus" ]; then
  [ -f "$gen_src" ] || { echo "wordcount_bench.sh: $gen_src not found" >&2; exit 66; }
  mkdir -p "$BUILD/bench"
  cc -O2 -o "$BUILD/bench/gen_corpus" "$gen_src" -lm
  echo "generating $corpus (200 MiB, seed 42)..." >&2
  "$BUILD/bench/gen_corpus" -o "$corpus"
fi
default_corpus=0
if [ "$(sha256sum "$corpus" | cut -d' ' -f1)" = "$known_sha" ]; then
  default_corpus=1
fi
bytes=$(stat -L -c %s "$corpus")
cat "$corpus" > /dev/null   # warm page cache, as the peer measurements had

busy_jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
hz=$(getconf CLK_TCK)
ncpu=$(nproc)

extra=()
[ -n "$sort_mb" ] && extra+=(-D "kiln.sort.mb=$sort_mb")
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-wcbench.XXXXXX")
trap 'rm -rf "$work"' EXIT

printf 'corpus %s (%d bytes), %d ranks, format %s%s\n' "$corpus" "$bytes" "$np" "$format" \
  "${sort_mb:+, kiln.sort.mb=$sort_mb}"
printf '%-4s %8s %8s %14s %14s %9s\n' run wall_s cpu_s rank_rss_mib tree_rss_mib foreign
walls=()
for r in $(seq 1 "$runs"); do
  out=$work/out$r
  b0=$(busy_jiffies)
  t0=$(date +%s.%N)
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%M' -o "$work/time.txt" ./run_job.sh -n "$np" wordcount --input "$corpus" \
      --output "$out" --format "$format" -D kiln.progress=false "${extra[@]}" 2> "$work/err$r"
  else
    ./run_job.sh -n "$np" wordcount --input "$corpus" --output "$out" --format "$format" \
      -D kiln.progress=false "${extra[@]}" 2> "$work/err$r"
    echo "" > "$work/time.txt"
  fi
  t1=$(date +%s.%N)
  b1=$(busy_jiffies)
  wall=$(echo "$t1 - $t0" | bc -l)
  cpu_ms=$(grep -o '"CPU time spent (ms)":[0-9]*' "$out/_job.json" | cut -d: -f2)
  rank_rss=$(grep -o '"Peak Physical memory (bytes)":[0-9]*' "$out/_job.json" | cut -d: -f2)
  tree_kb=$(tail -1 "$work/time.txt")
  # Busy CPU-seconds of the whole machine minus the job's own.
  foreign=$(echo "($b1 - $b0) / $hz - $cpu_ms / 1000" | bc -l)
  foreign_pct=$(echo "100 * $foreign / $wall" | bc -l)
  printf '%-4s %8.2f %8.2f %14.1f %14s %8.0f%%\n' "$r" "$wall" "$(echo "$cpu_ms / 1000" | bc -l)" \
    "$(echo "$rank_rss / 1048576" | bc -l)" "${tree_kb:+$(echo "$tree_kb / 1024" | bc)}" "$foreign_pct"
  walls+=("$wall")
  if [ "$r" = 1 ] && [ "$default_corpus" = 1 ] && [ "$format" = text ]; then
    cat "$out"/part-r-* | awk -F'\t' '{ n++; s += $2 } END { print n, s }' > "$work/totals"
    if [ "$(cat "$work/totals")" = "992883 48193684" ]; then
      echo "     output checked: 992883 distinct words, 48193684 words"
    else
      echo "     OUTPUT WRONG: $(cat "$work/totals") (want 992883 48193684)"
      exit 1
    fi
  fi
  rm -rf "$out"
done
median=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
printf 'median wall %.2f s over %d runs; input %.1f MB/s; %d CPUs here (foreign CPU above ~10%% of wall means a contended run)\n' \
  "$median" "$runs" "$(echo "$bytes / 1000000 / $median" | bc -l)" "$ncpu"
