#!/usr/bin/env bash
# example_job_test.sh -- the example job of docs/writing-a-job.md: the tree
# builds with it (it is part of kiln-mr); linelength's output equals a
# Python brute force (CRLF, empty lines, no final newline, gzip, hidden files
# skipped) at -np 1 and -np 3 with the same part files, and in total order
# across files; its counter; --help. And the guide cannot drift: the code it
# quotes as the whole of jobs/linelength.c is that file byte for byte, every
# excerpt it quotes from jobs/secondarysort.c is in that file, and the
# example stays under 80 lines. Prints "N passed, N failed" last.
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

work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-example-job-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
guide=docs/writing-a-job.md
example=jobs/linelength.c

# ---------------------------------------------------------------- the guide
# The block after the marker, between "```c" and "```", as the file's bytes.
python3 - "$guide" "$example" jobs/secondarysort.c > "$work/guide.out" 2> "$work/last.err" <<'EOF'
import sys
guide, example, excerpted = sys.argv[1:4]
lines = open(guide, encoding="utf-8").read().split("\n")
def blocks(marker):
    out = []
    for i, l in enumerate(lines):
        if l.strip() == marker:
            if i + 1 >= len(lines) or lines[i + 1] != "```c":
                sys.exit("%s:%d: the marker is not followed by a ```c block" % (guide, i + 1))
            j = i + 2
            while j < len(lines) and lines[j] != "```":
                j += 1
            if j == len(lines):
                sys.exit("%s:%d: the block never ends" % (guide, i + 2))
            out.append("\n".join(lines[i + 2:j]) + "\n")
    return out
whole = blocks("<!-- whole file: %s -->" % example)
print("whole=%d" % len(whole))
if len(whole) == 1 and whole[0] == open(example, encoding="utf-8").read():
    print("whole-identical")
src = open(excerpted, encoding="utf-8").read()
parts = blocks("<!-- from: %s -->" % excerpted)
print("excerpts=%d" % len(parts))
missing = [p for p in parts if p not in src]
for p in missing:
    print("not in %s:\n%s" % (excerpted, p), file=sys.stderr)
if parts and not missing:
    print("excerpts-found")
EOF
check "the guide quotes $example once, whole" grep -qx "whole=1" "$work/guide.out"
check "the code the guide quotes is $example byte for byte" grep -qx "whole-identical" "$work/guide.out"
check "every excerpt of jobs/secondarysort.c in the guide is in the file" \
  bash -c "grep -qx 'excerpts=[1-9][0-9]*' '$work/guide.out' && grep -qx excerpts-found '$work/guide.out'"
lines=$(wc -l < "$example")
check "$example is under 80 lines ($lines)" test "$lines" -lt 80

# ---------------------------------------------------------------- the build
# A sanitizer build dir (build-address, build-address-undefined) is built with
# its sanitizers.
make_args=(BUILD="$BUILD")
case "$BUILD" in build-*) san=${BUILD#build-}; make_args+=(SANITIZER="${san//-/,}") ;; esac
nice make -j2 "${make_args[@]}" all > "$work/last.err" 2>&1; rc=$?
check "the tree builds (make all)" test "$rc" = 0
check "kiln-mr knows linelength" bash -c "'$BUILD/bin/kiln-mr' --list | grep -q '^linelength'"
"$BUILD/bin/kiln-mr" linelength --help > "$work/help.txt" 2> "$work/last.err"; rc=$?
check "linelength --help: exit 0, usage" \
  bash -c "[ $rc = 0 ] && grep -q 'Usage: kiln-mr linelength --input PATH... --output DIR' '$work/help.txt'"

# ---------------------------------------------------------------- the job
in=$work/in
mkdir -p "$in/sub"
python3 - "$in" <<'EOF'
import gzip, random, sys
d = sys.argv[1]
r = random.Random(7)
def text(n):
    return "".join(r.choice("abc xyz\t") for _ in range(n))
def length():
    return r.choice([0, 0, r.randrange(1, 10), r.randrange(1, 200), r.randrange(200, 5000)])
with open(d + "/a.txt", "w", newline="") as f:
    for _ in range(20000):
        f.write(text(length()) + "\n")
with open(d + "/sub/crlf.txt", "w", newline="") as f:
    for _ in range(8000):
        f.write(text(length()) + r.choice(["\r\n", "\n", "\r\r\n"]))
    f.write(text(33) + "\r")     # no final newline, one CR
with gzip.open(d + "/sub/packed.txt.gz", "wt", newline="") as f:
    for _ in range(3000):
        f.write(text(length()) + "\n")
with open(d + "/_hidden", "w") as f:
    f.write("x" * 12345 + "\n")
with open(d + "/.dot", "w") as f:
    f.write("y" * 12346 + "\n")
EOF

# The brute force: every visible file; a line ends at \n, without one \r
# before it; a last line without \n counts.
python3 - "$in" > "$work/want.txt" 2> "$work/want.empty" <<'EOF'
import gzip, os, sys
counts = {}
for root, dirs, files in os.walk(sys.argv[1]):
    dirs[:] = [x for x in dirs if not x.startswith((".", "_"))]
    for name in files:
        if name.startswith((".", "_")):
            continue
        p = os.path.join(root, name)
        data = gzip.open(p).read() if name.endswith(".gz") else open(p, "rb").read()
        pieces = data.split(b"\n")
        if pieces[-1] == b"":
            pieces.pop()
        for l in pieces:
            if l.endswith(b"\r"):
                l = l[:-1]
            counts[len(l)] = counts.get(len(l), 0) + 1
for n in sorted(counts):
    print("%d\t%d" % (n, counts[n]))
print(counts.get(0, 0), file=sys.stderr)
EOF
empty=$(cat "$work/want.empty")

run() { # np, output, args...
  local np=$1 out=$2; shift 2
  ./run_job.sh -n "$np" --timeout 120 linelength --input "$in" --output "$out" \
    -D kiln.progress=false "$@" > "$work/last.out" 2> "$work/last.err"
}
counter() { # dir, group, name
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]+'/_job.json'))['counters'][sys.argv[2]][sys.argv[3]])" "$@"
}
same_files() {
  (cd "$1" && ls part-r-* | xargs md5sum) > "$work/a.md5" &&
  (cd "$2" && ls part-r-* | xargs md5sum) > "$work/b.md5" && cmp -s "$work/a.md5" "$work/b.md5"
}
numeric_sorted() { cat "$@" | sort -n -k1,1 -t '	'; }
ascending_each() { # dir: lengths ascending within every part file
  for f in "$1"/part-r-*; do sort -c -n -k1,1 -t '	' "$f" 2>/dev/null || return 1; done
}
tiny=(-D mapreduce.job.reduces=3 -D kiln.sort.mb=0.01 -D kiln.merge.factor=2)

run 1 "$work/np1" "${tiny[@]}"; rc=$?
check "np=1: exits 0 with _SUCCESS" test "$rc" = 0 -a -f "$work/np1/_SUCCESS"
check "np=1: output equals the brute force" cmp -s <(numeric_sorted "$work"/np1/part-r-*) "$work/want.txt"
check "np=1: lengths ascending within each part file" ascending_each "$work/np1"
check "np=1: Empty lines counter = $empty" test "$(counter "$work/np1" linelength "Empty lines")" = "$empty"
check "np=1: the fold combined (Combine output records < Map output records)" \
  test "$(counter "$work/np1" "Map-Reduce Framework" "Combine output records")" -lt \
       "$(counter "$work/np1" "Map-Reduce Framework" "Map output records")"
run 3 "$work/np3" "${tiny[@]}"; rc=$?
check "np=3: exits 0" test "$rc" = 0 -a -f "$work/np3/_SUCCESS"
check "np=3: part files byte-identical to np=1" same_files "$work/np1" "$work/np3"
run 2 "$work/total" -D kiln.partitioner=total -D mapreduce.job.reduces=4; rc=$?
check "total order: exits 0" test "$rc" = 0
check "total order: the part files in order are the brute force, in order" \
  cmp -s <(cat "$work"/total/part-r-*) "$work/want.txt"
run 2 "$work/bogus" --bogus; rc=$?
check "unknown argument: exit 64, named" \
  bash -c "[ $rc = 64 ] && grep -q \"linelength: unknown argument '--bogus'\" '$work/last.err'"

echo
echo "example_job_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
