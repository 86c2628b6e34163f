#!/usr/bin/env bash
# secondarysort_test.sh -- the secondarysort job (a partitioner, a grouping
# comparator and, with --descending, a sort comparator) end to end: its
# output equals an independent Python brute force (group by a, sort the b's)
# on input with negative numbers, the int64 extremes, repeats, ragged blanks,
# CRLF, a gzip file and bad lines; the same part files at -np 1 and -np 3
# with a tiny sort buffer (many spills, merge passes of two, small shuffle
# rounds); every a in the part file its partitioner names, ascending within
# it; the counters; --help; a bad argument and -D kiln.partitioner refused.
# Prints "N passed, N failed" last.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
export BUILD
export LSAN_OPTIONS="fast_unwind_on_malloc=0:suppressions=$PWD/tests/mapreduce/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export OMPI_MCA_mca_component_disable_dlclose=1

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; grep -v '^ *$' "$work/last.err" 2>/dev/null | tail -15 | sed 's/^/    /'; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-secondarysort-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
in=$work/in
mkdir -p "$in"

# ---------------------------------------------------------------- input
python3 - "$in" <<'EOF'
import gzip, random, sys
d = sys.argv[1]
r = random.Random(20240611)
def pair():
    a = r.choice([r.randrange(-50, 50), r.randrange(-10**6, 10**6), -2**63, 2**63 - 1])
    b = r.choice([r.randrange(-1000, 1000), r.randrange(-2**63, 2**63), 0, -2**63, 2**63 - 1])
    return a, b
def line():
    a, b = pair()
    sa = ("+" if a >= 0 and r.random() < 0.05 else "") + str(a)
    sep = r.choice([" ", "\t", "  ", " \t "])
    lead = r.choice(["", "", "", " ", "\t"])
    tail = r.choice(["", "", "", " ", "\r", "\t\r"])
    return lead + sa + sep + str(b) + tail
with open(d + "/a.txt", "w", newline="") as f:
    for _ in range(30000):
        f.write(line() + "\n")
    # Bad lines: one number, three, words, overflow, signs alone, blank.
    for bad in ["5", "1 2 3", "x 1", "1 y", "9223372036854775808 1", "1 -9223372036854775809",
                "- 1", "1 +", "", "   ", "1,2", "0x10 1", "1\x0b2"]:
        f.write(bad + "\n")
with open(d + "/b.txt", "w", newline="") as f:
    for _ in range(20000):
        f.write(line() + "\r\n")
    f.write("7 7")      # no final newline
with gzip.open(d + "/c.txt.gz", "wt", newline="") as f:
    for _ in range(5000):
        f.write(line() + "\n")
EOF

# The brute force: every line of every file, parsed by its own rules.
brute() { # order (asc|desc) > expected lines
  python3 - "$in" "$1" <<'EOF'
import gzip, os, re, sys
d, order = sys.argv[1], sys.argv[2]
pat = re.compile(rb"^[ \t]*([+-]?[0-9]+)[ \t]+([+-]?[0-9]+)[ \t\r]*$")
groups, good, bad = {}, 0, 0
for name in sorted(os.listdir(d)):
    p = os.path.join(d, name)
    data = gzip.open(p).read() if name.endswith(".gz") else open(p, "rb").read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for l in lines:
        m = pat.match(l)
        ok = False
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            ok = all(-2**63 <= x < 2**63 for x in (a, b))
        if not ok:
            bad += 1
            continue
        good += 1
        groups.setdefault(a, []).append(b)
for a in sorted(groups):
    print("%d\t%s" % (a, ",".join(str(b) for b in sorted(groups[a], reverse=(order == "desc")))))
print("groups=%d values=%d bad=%d" % (len(groups), good, bad), file=sys.stderr)
EOF
}
brute asc > "$work/want.txt" 2> "$work/want.counts"
brute desc > "$work/want_desc.txt" 2> /dev/null
read -r groups values badlines < <(sed -E 's/groups=([0-9]+) values=([0-9]+) bad=([0-9]+)/\1 \2 \3/' "$work/want.counts")
check "the brute force found groups, values and bad lines ($groups, $values, $badlines)" \
  test "${groups:-0}" -gt 1000 -a "${values:-0}" -gt 50000 -a "${badlines:-0}" = 13

run() { # np, output, args... (stderr to $work/last.err)
  local np=$1 out=$2; shift 2
  ./run_job.sh -n "$np" --timeout 120 secondarysort --input "$in" --output "$out" \
    -D kiln.progress=false "$@" > "$work/last.out" 2> "$work/last.err"
}
tiny=(-D mapreduce.job.reduces=4 -D kiln.sort.mb=0.01 -D kiln.merge.factor=2 -D kiln.shuffle.mb=0.05)
counter() { # dir, group, name
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]+'/_job.json'))['counters'][sys.argv[2]][sys.argv[3]])" "$@"
}
same_files() { # dir a, dir b: the same part files, byte for byte
  (cd "$1" && ls part-r-* | xargs md5sum) > "$work/a.md5" &&
  (cd "$2" && ls part-r-* | xargs md5sum) > "$work/b.md5" && cmp -s "$work/a.md5" "$work/b.md5"
}
all_lines() { cat "$1"/part-r-* | LC_ALL=C sort; }

# Each part file holds a's ascending, each in the partition the job's
# partitioner names (recomputed here: big-endian bytes of a with the sign
# bit flipped, times 0x9e3779b97f4a7c15 modulo 2^64, high half scaled).
check_parts() { # dir, partitions
  python3 - "$1" "$2" <<'EOF'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
files = sorted(f for f in os.listdir(d) if f.startswith("part-r-"))
assert len(files) == n, files
for i, f in enumerate(files):
    prev = None
    for line in open(os.path.join(d, f)):
        a = int(line.split("\t")[0])
        u = (a + 2**63) & (2**64 - 1)
        h = (u * 0x9e3779b97f4a7c15) & (2**64 - 1)
        p = ((h >> 32) * n) >> 32
        assert p == i, (f, a, p)
        assert prev is None or prev < a, (f, prev, a)
        prev = a
EOF
}

# ---------------------------------------------------------------- correctness
run 1 "$work/np1" "${tiny[@]}"; rc=$?
check "np=1: exits 0 with _SUCCESS" test "$rc" = 0 -a -f "$work/np1/_SUCCESS"
check "np=1: output equals the brute force" cmp -s <(all_lines "$work/np1") <(LC_ALL=C sort "$work/want.txt")
check "np=1: every a in its partitioner's file, ascending" check_parts "$work/np1" 4
spilled=$(counter "$work/np1" "Map-Reduce Framework" "Spilled Records")
mapout=$(counter "$work/np1" "Map-Reduce Framework" "Map output records")
check "np=1: many spills and merge passes ($spilled spilled for $mapout map output records)" \
  test "${spilled:-0}" -gt $((3 * ${mapout:-1}))
check "np=1: Groups counter = distinct a" test "$(counter "$work/np1" secondarysort "Groups (distinct first numbers)")" = "$groups"
check "np=1: Values counter = good lines" test "$(counter "$work/np1" secondarysort "Values (pairs)")" = "$values"
check "np=1: Bad lines counter" test "$(counter "$work/np1" secondarysort "Bad lines (skipped)")" = "$badlines"
check "np=1: Reduce input groups = distinct a" \
  test "$(counter "$work/np1" "Map-Reduce Framework" "Reduce input groups")" = "$groups"
check "np=1: bad lines named by file and line on stderr" grep -q "a.txt:30001: not two integers: '5'" "$work/last.err"
check "np=1: counters printed" grep -q "Groups (distinct first numbers)=$groups" "$work/last.err"

run 3 "$work/np3" "${tiny[@]}"; rc=$?
check "np=3: exits 0" test "$rc" = 0 -a -f "$work/np3/_SUCCESS"
check "np=3: part files byte-identical to np=1" same_files "$work/np1" "$work/np3"
check "np=3: output equals the brute force" cmp -s <(all_lines "$work/np3") <(LC_ALL=C sort "$work/want.txt")

run 2 "$work/desc" "${tiny[@]}" --descending; rc=$?
check "--descending: exits 0" test "$rc" = 0
check "--descending: output equals the brute force (b descending)" \
  cmp -s <(all_lines "$work/desc") <(LC_ALL=C sort "$work/want_desc.txt")
check "--descending: same partitions, a ascending" check_parts "$work/desc" 4
run 3 "$work/desc3" "${tiny[@]}" --descending
check "--descending: np=3 byte-identical to np=2" same_files "$work/desc" "$work/desc3"

run 2 "$work/default" ; rc=$?
check "default settings (one partition per rank): output equals the brute force" \
  bash -c "[ $rc = 0 ] && cmp -s <(cat '$work'/default/part-r-* | LC_ALL=C sort) <(LC_ALL=C sort '$work/want.txt')"

# ---------------------------------------------------------------- usage
"$BUILD/bin/kiln-mr" secondarysort --help > "$work/help.txt" 2> "$work/last.err"; rc=$?
check "--help: exit 0, usage and counters" \
  bash -c "[ $rc = 0 ] && grep -q 'Usage: kiln-mr secondarysort' '$work/help.txt' && grep -q 'Counters' '$work/help.txt'"
check "kiln-mr --list names it" bash -c "'$BUILD/bin/kiln-mr' --list | grep -q '^secondarysort'"
run 2 "$work/bogus" --bogus; rc=$?
check "unknown argument: exit 64, named" \
  bash -c "[ $rc = 64 ] && grep -q \"unknown argument '--bogus'\" '$work/last.err'"
run 2 "$work/total" -D kiln.partitioner=total; rc=$?
check "-D kiln.partitioner=total refused: the job has its own partitioner" \
  bash -c "[ $rc != 0 ] && grep -q 'own partitioner' '$work/last.err' && [ ! -e '$work/total' ]"

echo
echo "secondarysort_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
