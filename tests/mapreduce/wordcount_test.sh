#!/usr/bin/env bash
# wordcount_test.sh -- end-to-end MPI tests of the engine through wordcount:
# the same bytes at -np 1, 2, 3 and 4 (oversubscribed) and equal to a count
# made by tr/sort/uniq; split edges (CRLF, no final newline, empty files, one
# huge line, gzip, hidden files); a tiny sort buffer forcing many spills and
# merge passes; total-order output; HFile output read back with `kiln hfile`;
# failures (a failing rank in map and in reduce, a killed rank, a full disk,
# an existing output directory, no input) stopping with a non-zero exit and
# no _SUCCESS; a slow rank's map input taken over by the others. Prints "N passed, N failed" last.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
export BUILD
# Sanitizer builds: ignore Open MPI's own leaks (see lsan.supp); full stack
# unwinding so that a leak's frames inside libmpi are seen and matched.
export LSAN_OPTIONS="fast_unwind_on_malloc=0:suppressions=$PWD/tests/mapreduce/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export OMPI_MCA_mca_component_disable_dlclose=1
KILN=$PWD/$BUILD/bin/kiln

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2" | tail -20; }
check() { # name, command...
  local name=$1; shift
  if "$@"; then ok "$name"; else bad "$name" "$work/last.err"; fi
}

work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-wordcount-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
in=$work/in
mkdir -p "$in/sub"

# ---------------------------------------------------------------- input
# Random words (a small alphabet so words repeat), ragged lines, some CRLF.
awk -v seed=42 -v bytes=3000000 'BEGIN {
  srand(seed); n = 0
  while (n < bytes) {
    words = int(rand() * 14)
    line = ""
    for (i = 0; i < words; i++) {
      len = 1 + int(rand() * rand() * 9)
      w = ""
      for (j = 0; j < len; j++) w = w substr("abcdefghij", 1 + int(rand() * rand() * 10), 1)
      sep = (rand() < 0.1) ? "\t" : ((rand() < 0.05) ? "  " : " ")
      line = line (i ? sep : "") w
    }
    eol = (rand() < 0.2) ? "\r\n" : "\n"
    printf "%s%s", line, eol
    n += length(line) + length(eol)
  }
}' > "$in/big.txt"
printf 'alpha beta\r\ngamma\r\n\r\nbeta' > "$in/crlf_no_final_newline.txt"
: > "$in/empty.txt"
printf '\n\n\n' > "$in/sub/only_newlines.txt"
# One huge line (4 MB, no newline at all): longer than every read buffer.
awk 'BEGIN { srand(7); for (i = 0; i < 500000; i++) printf "%s ", substr("klmnopqrst", 1 + int(rand() * 10), 1 + int(rand() * 3)) }' \
  > "$in/sub/huge_line.txt"
awk 'BEGIN { srand(9); for (i = 0; i < 20000; i++) print "gz" int(rand() * 300), "zz" i % 17 }' \
  | gzip > "$in/sub/packed.txt.gz"
echo "never counted" > "$in/_hidden_by_underscore"
echo "never counted" > "$in/.hidden_by_dot"

# Independent count: every visible file (gzip decompressed), one newline
# between files, split on whitespace by tr, counted by sort | uniq -c.
ref=$work/ref.txt
find "$in" -type f ! -name '_*' ! -name '.*' | LC_ALL=C sort | while read -r f; do
  case "$f" in *.gz) gzip -dc "$f" ;; *) cat "$f" ;; esac
  echo
done | LC_ALL=C tr -s '[:space:]' '\n' | grep -v '^$' | LC_ALL=C sort | uniq -c \
  | awk '{ print $2 "\t" $1 }' > "$ref"

run() { # np, output dir, args... (stderr to $work/last.err)
  local np=$1 out=$2; shift 2
  ./run_job.sh -n "$np" --timeout 120 wordcount --input "$in" --output "$out" \
    -D kiln.progress.ms=200 "$@" 2> "$work/last.err"
}

sorted_output() { cat "$1"/part-r-* | LC_ALL=C sort; }
same_files() { # dir a, dir b: same part files, byte for byte
  (cd "$1" && ls part-r-* | xargs md5sum) > "$work/a.md5" &&
  (cd "$2" && ls part-r-* | xargs md5sum) > "$work/b.md5" && cmp -s "$work/a.md5" "$work/b.md5"
}
counter() { # dir, counter name: value from _job.json
  grep -o "\"$2\":[0-9]*" "$1/_job.json" | head -1 | cut -d: -f2
}

# ---------------------------------------------------------------- correctness
# A fixed partition count gives the same part files at every rank count.
run 1 "$work/np1" -D mapreduce.job.reduces=12; rc=$?
check "np=1 exits 0 with _SUCCESS" test "$rc" = 0 -a -f "$work/np1/_SUCCESS" -a -f "$work/np1/_job.json"
check "np=1 output equals the tr|sort|uniq count" cmp -s <(sorted_output "$work/np1") "$ref"
check "progress and counters on stderr" grep -q "map 100% reduce 100%" "$work/last.err"
grep -q "Reduce input groups=$(wc -l < "$ref")" "$work/last.err"
check "Reduce input groups counts the distinct words" test $? = 0
for np in 2 3 4; do
  run "$np" "$work/np$np" -D mapreduce.job.reduces=12; rc=$?
  check "np=$np exits 0" test "$rc" = 0 -a -f "$work/np$np/_SUCCESS"
  check "np=$np part files are byte-identical to np=1" same_files "$work/np1" "$work/np$np"
done

# The ranks of one host share their map input in pieces: with rank 1 slowed
# (200 ms before each of its pieces, a rank on a slow core) the others take
# its pieces from it, and the count is exact. Sharing off: nothing taken.
STEAL="Map input pieces taken from other ranks"
exact() { [ "$1" = 0 ] && same_files "$work/np1" "$2"; }   # exit status, output dir
run 3 "$work/slow" -D mapreduce.job.reduces=12 -D kiln.map.piece.kb=64 \
  -D kiln.test.slow.rank=1 -D kiln.test.slow.ms=200; rc=$?
check "a slow rank: exits 0, same bytes as np=1" exact "$rc" "$work/slow"
stolen=$(counter "$work/slow" "$STEAL")
check "a slow rank: the others took its pieces ($stolen)" test "${stolen:-0}" -gt 10
run 3 "$work/noshare" -D mapreduce.job.reduces=12 -D kiln.map.piece.kb=64 -D kiln.map.share=false; rc=$?
check "sharing off: exits 0, same bytes as np=1" exact "$rc" "$work/noshare"
check "sharing off: nothing taken" test "$(counter "$work/noshare" "$STEAL")" = 0

run 3 "$work/tiny" -D mapreduce.job.reduces=12 -D kiln.sort.mb=0.07 -D kiln.merge.factor=3 -D kiln.shuffle.mb=0.1 \
  -D kiln.input.buffer.kb=4; rc=$?
check "tiny buffers: exits 0" test "$rc" = 0
check "tiny buffers: same bytes as np=1" same_files "$work/np1" "$work/tiny"
spilled=$(counter "$work/tiny" "Spilled Records")
groups=$(counter "$work/tiny" "Reduce input groups")
check "tiny buffers: many spills ($spilled records spilled for $groups words)" \
  test "${spilled:-0}" -gt $((4 * ${groups:-1}))

run 2 "$work/total" -D kiln.partitioner=total -D mapreduce.job.reduces=5; rc=$?
check "total order: exits 0" test "$rc" = 0
check "total order: part files in order are globally sorted" \
  bash -c "cat '$work'/total/part-r-* | LC_ALL=C sort -c -t '	' -k1,1"
check "total order: same words and counts" cmp -s <(sorted_output "$work/total") "$ref"
run 4 "$work/total4" -D kiln.partitioner=total -D mapreduce.job.reduces=5
check "total order: np=4 same bytes as np=2" same_files "$work/total" "$work/total4"

# ---------------------------------------------------------------- HFile output
run 2 "$work/hf2" --format hfile -D kiln.job.time=1700000000000 -D mapreduce.job.reduces=12; rc=$?
check "hfile: exits 0" test "$rc" = 0 -a -f "$work/hf2/_SUCCESS" -a -d "$work/hf2/f"
if [ -x "$KILN" ]; then
  dump_all() { for f in "$1"/f/*; do "$KILN" hfile dump "$f"; done; }
  # Expected dump lines: word, f:count, the job time, Put, 8-byte big-endian
  # count in HBase's printable form.
  awk -F'\t' '{
    c = $2; v = ""
    for (i = 7; i >= 0; i--) {
      b = int(c / (256 ^ i)) % 256
      v = v ((b >= 32 && b < 127 && b != 92) ? sprintf("%c", b) : sprintf("\\x%02X", b))
    }
    print $1 "\tf:count\t1700000000000\tPut\t" v
  }' "$ref" > "$work/hfile.ref"
  check "hfile: every file passes kiln hfile check" bash -c "'$KILN' hfile check '$work'/hf2/f/* > '$work/last.err' 2>&1"
  check "hfile: cells equal the reference count" cmp -s <(dump_all "$work/hf2" | LC_ALL=C sort) <(LC_ALL=C sort "$work/hfile.ref")
  run 3 "$work/hf3" --format hfile -D kiln.job.time=1700000000000 -D mapreduce.job.reduces=12
  # File by file: names and cells (the bytes differ only in FileInfo's
  # BULKLOAD_TIMESTAMP, which the writer takes from the wall clock).
  dump_named() { for f in "$1"/f/*; do basename "$f"; "$KILN" hfile dump "$f" || echo "DUMP FAILED"; done; }
  dump_named "$work/hf2" > "$work/hf2.dump"
  dump_named "$work/hf3" > "$work/hf3.dump"
  check "hfile: np=3 writes the same files and cells as np=2" \
    bash -c "cmp -s '$work/hf2.dump' '$work/hf3.dump' && ! grep -q 'DUMP FAILED' '$work/hf2.dump' && [ \$(wc -l < '$work/hf2.dump') -gt \$(wc -l < '$ref') ]"
else
  bad "hfile: $KILN not built, cannot read the HFiles back"
fi

# ---------------------------------------------------------------- failures
no_output() { [ ! -e "$1" ] && ! ls -d "$1"._temporary.* > /dev/null 2>&1; }

run 3 "$work/fail_map" -D kiln.test.fail.rank=1; rc=$?
check "rank 1 failing in map: non-zero exit" test "$rc" -ne 0
check "rank 1 failing in map: rank 0 names rank 1 and the cause" \
  grep -q "ERROR on rank 1 (.*): injected failure" "$work/last.err"
check "rank 1 failing in map: no output, no _SUCCESS" no_output "$work/fail_map"

run 4 "$work/fail_reduce" -D kiln.test.fail.rank=2 -D kiln.test.fail.phase=reduce; rc=$?
check "rank 2 failing in reduce: non-zero exit, named" \
  bash -c "[ $rc -ne 0 ] && grep -q 'ERROR on rank 2 ' '$work/last.err'"
check "rank 2 failing in reduce: no output" no_output "$work/fail_reduce"

run 3 "$work/fail_shuffle" -D kiln.test.fail.rank=0 -D kiln.test.fail.phase=shuffle; rc=$?
check "rank 0 failing in shuffle: non-zero exit, no output" \
  bash -c "[ $rc -ne 0 ] && grep -q 'ERROR on rank 0 ' '$work/last.err' && [ ! -e '$work/fail_shuffle' ]"

run 2 "$work/fail_commit" -D kiln.test.fail.rank=1 -D kiln.test.fail.phase=commit; rc=$?
check "rank 1 failing at commit: non-zero exit, no output" \
  bash -c "[ $rc -ne 0 ] && [ ! -e '$work/fail_commit' ]"

# A rank killed mid-job: rank 1 stops itself (SIGSTOP) after 2000 map
# records and names its pid; the test finds it alive and stopped there, kills
# it with SIGKILL, and the job must fail with mpirun naming the rank and the
# signal, and leave no output.
run 3 "$work/killed" -D kiln.test.kill.rank=1 -D kiln.test.kill.signal=stop \
  -D kiln.test.kill.after=2000 &
job=$!
kpid=""
for _ in $(seq 1 600); do
  kpid=$(sed -n 's/.*rank 1 (.*): test hook kiln.test.kill.rank: stopped in the map phase at step 2000 (pid \([0-9]*\)).*/\1/p' "$work/last.err" 2>/dev/null | head -1)
  [ -n "$kpid" ] && [ "$(awk '{ print $3 }' "/proc/$kpid/stat" 2>/dev/null)" = T ] && break
  kill -0 "$job" 2>/dev/null || break
  sleep 0.1
done
kstate=$( [ -n "$kpid" ] && awk '{ print $3 }' "/proc/$kpid/stat" 2>/dev/null)
kcomm=$( [ -n "$kpid" ] && cat "/proc/$kpid/comm" 2>/dev/null)
check "killed rank: rank 1 is alive and stopped mid-map (pid '$kpid', state '$kstate', $kcomm)" \
  bash -c "[ '$kstate' = T ] && [ '$kcomm' = kiln-mr ]"
[ -n "$kpid" ] && kill -KILL "$kpid" 2>/dev/null
wait "$job"; rc=$?
check "killed rank: non-zero exit" test "$rc" -ne 0
check "killed rank: no _SUCCESS" test ! -e "$work/killed/_SUCCESS"
check "killed rank: mpirun names the rank and SIGKILL" \
  grep -qE "rank 1 .*(signal 9|Killed)" "$work/last.err"

run 2 "$work/full_disk" -D kiln.test.enospc.rank=1 -D kiln.test.enospc.after=1 -D kiln.sort.mb=0.1; rc=$?
check "full disk on rank 1: exit 74 (I/O error)" test "$rc" = 74
check "full disk on rank 1: reported as ENOSPC on rank 1" \
  grep -q "ERROR on rank 1 .*No space left on device" "$work/last.err"
check "full disk on rank 1: no output" no_output "$work/full_disk"

mkdir "$work/exists"
echo keep > "$work/exists/mine"
run 2 "$work/exists"; rc=$?
check "existing output directory: refused with exit 73" test "$rc" = 73
check "existing output directory: left alone" \
  bash -c "[ \"\$(ls '$work/exists')\" = mine ] && grep -q 'already exists' '$work/last.err'"

mkdir "$work/empty_in"
./run_job.sh -n 2 wordcount --input "$work/empty_in" --output "$work/noin" 2> "$work/last.err"; rc=$?
check "no input files: exit 66" test "$rc" = 66

./run_job.sh -n 2 wordcount --output "$work/usage" --bogus 2> "$work/last.err"; rc=$?
check "bad argument: exit 64 with a hint" \
  bash -c "[ $rc = 64 ] && grep -q \"unknown argument '--bogus'\" '$work/last.err' && grep -q -- '--help' '$work/last.err'"

# ---------------------------------------------------------------- the MPI transport
# run_job.sh starts the ranks on ob1 where this host has no RDMA device,
# unless the caller chose a point-to-point layer. A stand-in mpirun records
# the command line it was given.
mkdir -p "$work/fakempi"
cat > "$work/fakempi/mpirun" <<FAKE
#!/bin/sh
printf '%s\n' "\$@" > "$work/mpirun.args"
exit 0
FAKE
chmod +x "$work/fakempi/mpirun"
pml_args() { # run_job.sh arguments...; prints the pml values mpirun saw
  rm -f "$work/mpirun.args"
  PATH="$work/fakempi:$PATH" ./run_job.sh -n 2 "$@" wordcount --input "$in" --output "$work/fake-out" \
    > /dev/null 2>&1
  awk 'prev == "--mca" && $0 == "pml" { getline v; print v } { prev = $0 }' "$work/mpirun.args" 2>/dev/null \
    | tr '\n' ' '
}
if [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then want_default=""; else want_default="ob1 "; fi
check "no RDMA device here: mpirun gets '--mca pml ${want_default:-(nothing)}'" \
  test "$(unset OMPI_MCA_pml; pml_args)" = "$want_default"
check "OMPI_MCA_pml set: run_job.sh adds no pml" \
  test "$(OMPI_MCA_pml=ucx pml_args)" = ""
check "--mca pml ucx: only the caller's choice reaches mpirun" \
  test "$(unset OMPI_MCA_pml; pml_args --mca pml ucx)" = "ucx "

echo
echo "wordcount_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
