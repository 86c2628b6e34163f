#!/usr/bin/env bash
# The layering rule of ARCHITECTURE.md holds for this tree (scripts/check_deps.sh),
# and the checker itself catches what it is there to catch: on small planted
# trees, an upward include, a banned system header, another folder's private
# header, an upward arrow that only the linker sees (a function declared
# locally and defined in a folder above) and two modules of one folder that
# call each other each fail it, naming the file or object; a tree that only
# points down passes.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
CC=${CC:-cc}
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok()   { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

# This tree.
if out=$(BUILD=$BUILD scripts/check_deps.sh 2>&1); then ok; else fail "the tree breaks its layers:"; echo "$out"; fi

# A planted tree: DIR gets the files given as name=content pairs, then each
# .c is compiled into DIR/build/obj.
plant() {
  local dir=$1; shift
  rm -rf "$dir"; mkdir -p "$dir"
  local kv f
  for kv in "$@"; do
    f=${kv%%=*}
    mkdir -p "$dir/$(dirname "$f")"
    printf '%b\n' "${kv#*=}" > "$dir/$f"
  done
  (cd "$dir" && for c in $(find . -name '*.c'); do
     mkdir -p "build/obj/$(dirname "$c")"
     $CC -I. -c "$c" -o "build/obj/${c%.c}.o" || exit 1
   done)
}
# expect DIR pass|fail [text the report must contain]
expect() {
  local dir=$1 want=$2 text=${3:-} out rc
  out=$(scripts/check_deps.sh --root "$dir" --build build 2>&1); rc=$?
  case $want in
    pass) [ "$rc" -eq 0 ] && ok || fail "$dir should pass, got rc=$rc: $out" ;;
    fail) if [ "$rc" -eq 1 ] && [[ $out == *"$text"* ]]; then ok
          else fail "$dir should fail naming '$text', got rc=$rc: $out"; fi ;;
  esac
}

base_ok=(
  'storage/base/b.h=int base_fn(int);'
  'storage/base/b.c=#include "storage/base/b.h"\nint base_fn(int x) { return x + 1; }'
  'storage/store/s.h=int store_fn(int);'
  'storage/store/s.c=#include "storage/base/b.h"\n#include "storage/store/s.h"\nint store_fn(int x) { return base_fn(x); }'
  'mapreduce/m.c=#include "storage/base/b.h"\nint mr_fn(int);\nint mr_fn(int x) { return base_fn(x); }'
)
plant "$tmp/down" "${base_ok[@]}"
expect "$tmp/down" pass

# An upward include: base names a store header.
plant "$tmp/inc" "${base_ok[@]}" \
  'storage/base/up.c=#include "storage/store/s.h"\nint up_fn(void);\nint up_fn(void) { return 0; }'
expect "$tmp/inc" fail 'storage/base/up.c:1: #include "storage/store/s.h"'

# The same arrow without an include: a local declaration, defined above.
plant "$tmp/sym" "${base_ok[@]}" \
  'storage/base/up.c=int store_fn(int);\nint up_fn(void);\nint up_fn(void) { return store_fn(1); }'
expect "$tmp/sym" fail 'storage/base/up.o: uses store_fn, defined in storage/store/'

# The engine naming a job: a link-time edge from mapreduce/ to jobs/.
plant "$tmp/job" "${base_ok[@]}" \
  'jobs/j.c=void jobs_all(void);\nvoid jobs_all(void) {}' \
  'mapreduce/main.c=void jobs_all(void);\nint main(void) { jobs_all(); return 0; }'
expect "$tmp/job" fail 'mapreduce/main.o: uses jobs_all, defined in jobs/'

# hfile/ skipping sideways into mapreduce/.
plant "$tmp/side" "${base_ok[@]}" \
  'storage/hfile/h.c=int mr_fn(int);\nint h_fn(void);\nint h_fn(void) { return mr_fn(2); }'
expect "$tmp/side" fail 'storage/hfile/h.o: uses mr_fn, defined in mapreduce/'

# A banned system header, and another folder's private header.
plant "$tmp/mpi" "${base_ok[@]}" \
  'storage/store/net.c=#include <sys/socket.h>\nint net_fn(void);\nint net_fn(void) { return 0; }'
expect "$tmp/mpi" fail 'storage/store/net.c:1: #include <sys/socket.h>'
plant "$tmp/int" "${base_ok[@]}" \
  'storage/base/b_int.h=int base_secret(void);' \
  'storage/store/peek.c=#include "storage/base/b_int.h"\nint peek_fn(void);\nint peek_fn(void) { return 0; }'
expect "$tmp/int" fail 'private header of storage/base/'

# Two modules of one folder calling each other.
plant "$tmp/cyc" "${base_ok[@]}" \
  'storage/store/p.c=int q_fn(int);\nint p_fn(int);\nint p_fn(int x) { return x ? q_fn(x - 1) : 0; }' \
  'storage/store/q.c=int p_fn(int);\nint q_fn(int);\nint q_fn(int x) { return p_fn(x); }'
expect "$tmp/cyc" fail 'storage/store: cycle:'

# storage/query sits above storage/store: jobs/ may use it, store/ may not.
query=(
  'storage/query/q.h=int query_fn(int);'
  'storage/query/q.c=#include "storage/query/q.h"\n#include "storage/store/s.h"\nint query_fn(int x) { return store_fn(x); }'
)
plant "$tmp/query" "${base_ok[@]}" "${query[@]}" \
  'jobs/f.c=#include "storage/query/q.h"\nint f_fn(void);\nint f_fn(void) { return query_fn(3); }'
expect "$tmp/query" pass
plant "$tmp/qup" "${base_ok[@]}" "${query[@]}" \
  'storage/store/up.c=#include "storage/query/q.h"\nint up_fn(void);\nint up_fn(void) { return query_fn(1); }'
expect "$tmp/qup" fail 'storage/store/up.c:1: #include "storage/query/q.h"'

# Objects not built: the checker says so rather than passing.
rm -rf "$tmp/down/build"
out=$(scripts/check_deps.sh --root "$tmp/down" --build build 2>&1); rc=$?
if [ "$rc" -eq 2 ] && [[ $out == *"is missing (run make first)"* ]]; then ok; else fail "unbuilt tree gave rc=$rc: $out"; fi

echo "check_deps: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
