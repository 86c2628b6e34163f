#!/usr/bin/env bash
# check_deps.sh -- checks that Kiln's folders depend on one another one way only
# (ARCHITECTURE.md), both in what they include and in what they link.
#
#   scripts/check_deps.sh [--root DIR] [--build DIR]
#
# The rule, each folder and what it may use besides itself:
#   storage/base    nothing (no MPI, no sockets)
#   storage/hfile   storage/base
#   storage/store   storage/hfile storage/base
#   storage/query   storage/store storage/hfile storage/base
#   mapreduce       storage/base
#   jobs            mapreduce storage/*
#   bulkload        storage/*                  (no MPI)
#   serving         storage/*                  (no MPI)
#   cli             serving bulkload storage/*
#   bench           bulkload storage/*
# and no file includes another folder's private *_int.h; and inside each
# folder the modules (x.c, x.h, x_int.h) form no cycle, by includes or calls
# (scripts/module_cycles.sh).
#
# Includes are read from the sources under DIR (default: this checkout).
# Symbols are read with nm from the objects under BUILD/obj (default $BUILD or
# build; run `make` first): every symbol a folder's objects leave undefined
# and another folder's objects define must come from a folder it may use, so
# an arrow up that only the linker sees (a function declared in one folder and
# defined above it) fails too. Only objects of sources that exist are read;
# bench/'s programs are built apart (make bench), so only its includes count.
# Prints each violation as FILE:LINE: text or OBJECT: symbol, and exits 1 if
# there is any, 2 if the objects are missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${BUILD:-build}
while [ $# -gt 0 ]; do
  case $1 in
    --root) root=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check_deps.sh: unknown argument '$1' (try --help)" >&2; exit 64 ;;
  esac
done
cd "$root" || exit 2
case $build in /*) ;; *) build=$root/$build ;; esac

S='storage/base storage/hfile storage/store storage/query'
declare -A may=(
  [storage/base]=''
  [storage/hfile]='storage/base'
  [storage/store]='storage/hfile storage/base'
  [storage/query]='storage/store storage/hfile storage/base'
  [mapreduce]='storage/base'
  [jobs]="mapreduce $S"
  [bulkload]="$S"
  [serving]="$S"
  [cli]="serving bulkload $S"
  [bench]="bulkload $S"
)
declare -A banned=(
  [storage/base]='mpi[.]h|sys/socket[.]h|netinet/'
  [storage/hfile]='mpi[.]h|sys/socket[.]h|netinet/'
  [storage/store]='mpi[.]h|sys/socket[.]h|netinet/'
  [storage/query]='mpi[.]h|sys/socket[.]h|netinet/'
  [bulkload]='mpi[.]h'
  [serving]='mpi[.]h'
)
folders='storage/base storage/hfile storage/store storage/query mapreduce jobs bulkload serving cli bench'
bad=0

allowed() { # folder, used folder
  [ "$1" = "$2" ] && return 0
  case " ${may[$1]} " in *" $2 "*) return 0 ;; esac
  return 1
}
# The folder an include path names: storage/X/... -> storage/X, Y/... -> Y.
folder_of() {
  case $1 in
    storage/*/*) echo "${1%/*}" | cut -d/ -f1-2 ;;
    */*) echo "${1%%/*}" ;;
    *) echo "" ;;
  esac
}

# ---------------------------------------------------------------- includes
rules=$(for dir in $folders; do echo "$dir;${may[$dir]};${banned[$dir]:-}"; done)
files=$(for dir in $folders; do [ -d "$dir" ] && ls "$dir"/*.[ch] 2>/dev/null; done)
if [ -n "$files" ] && ! grep -nHE '^[[:space:]]*#[[:space:]]*include' $files | awk -v rules="$rules" '
  BEGIN { n = split(rules, lines, "\n")
          for (i = 1; i <= n; i++) { split(lines[i], p, ";"); k = split(p[2], w, " ")
            known[p[1]] = 1; ok[p[1], p[1]] = 1; list[p[1]] = p[2] == "" ? "nothing" : p[2]
            for (j = 1; j <= k; j++) ok[p[1], w[j]] = 1
            if (p[3] != "") banned[p[1]] = "^(" p[3] ")" } }
  { file = $0; sub(/:.*/, "", file); dir = file; sub(/\/[^\/]*$/, "", dir)
    text = $0; sub(/^[^:]*:[0-9]+:/, "", text); where = substr($0, 1, length($0) - length(text) - 1)
    if (match(text, /<[^>]+>/)) {
      sys = substr(text, RSTART + 1, RLENGTH - 2)
      if ((dir in banned) && sys ~ banned[dir]) { print where ": " text "   <- " dir "/ may not use <" sys ">"; bad = 1 }
      next }
    if (!match(text, /"[^"]+"/)) next
    inc = substr(text, RSTART + 1, RLENGTH - 2)
    k = split(inc, part, "/")
    to = (part[1] == "storage" && k > 2) ? part[1] "/" part[2] : part[1]
    if (k < 2 || !(to in known)) next
    if (!ok[dir, to]) { print where ": " text "   <- " dir "/ may use only: " list[dir]; bad = 1 }
    else if (to != dir && inc ~ /_int\.h$/) { print where ": " text "   <- private header of " to "/"; bad = 1 } }
  END { exit bad }'; then
  bad=1
fi

# ---------------------------------------------------------------- symbols
objs_of() { # folder -> the objects of its existing sources
  local c
  for c in "$1"/*.c; do
    [ -f "$c" ] && echo "$build/obj/${c%.c}.o"
  done
}
linked=${folders% bench}
defs=$(mktemp) uses=$(mktemp)
trap 'rm -f "$defs" "$uses"' EXIT
missing=0
for dir in $linked; do
  [ -d "$dir" ] || continue
  objs=()
  for o in $(objs_of "$dir"); do
    [ -f "$o" ] || { echo "check_deps.sh: $o is missing (run make first)" >&2; missing=1; continue; }
    objs+=("$o")
  done
  [ ${#objs[@]} -gt 0 ] || continue
  # One nm for the folder's objects (-A names the object on each line).
  nm -A -g --defined-only "${objs[@]}" | awk -v d="$dir" 'NF == 3 {print $3, d}' >> "$defs"
  nm -A -u "${objs[@]}" | awk -v d="$dir" -v b="$build/obj/" '
    { o = $1; sub(/:.*/, "", o); if (index(o, b) == 1) o = substr(o, length(b) + 1); print $NF, d, o }' >> "$uses"
done
[ "$missing" -eq 0 ] || exit 2
rules=$(for dir in $linked; do echo "$dir ${may[$dir]}"; done)
if ! awk -v rules="$rules" '
  BEGIN { n = split(rules, lines, "\n")
          for (i = 1; i <= n; i++) { k = split(lines[i], w, " ")
            for (j = 1; j <= k; j++) ok[w[1], w[j]] = 1; list[w[1]] = lines[i] } }
  FNR == NR { owner[$1] = $2; next }
  ($1 in owner) && !ok[$2, owner[$1]] {
    rest = list[$2]; sub(/^[^ ]+ ?/, "", rest)
    printf "%s: uses %s, defined in %s/   <- %s/ may use only: %s\n", $3, $1, owner[$1], $2,
           rest == "" ? "nothing" : rest; bad = 1 }
  END { exit bad }' "$defs" "$uses"; then
  bad=1
fi

# ---------------------------------------------------------------- cycles
for dir in $linked; do
  [ -d "$dir" ] || continue
  if ! out=$("$here/module_cycles.sh" --root "$root" "$dir" "$build/obj/$dir" 2>&1); then
    echo "$out" | sed "s|^|$dir: |"
    bad=1
  fi
done

if [ "$bad" -eq 0 ]; then echo "check-deps: layers OK (includes, symbols, no cycles)"; fi
exit $bad
