#!/usr/bin/env bash
# Prints the module graph of one folder and any cycle in it. A module is x.c
# with x.h, its private x_int.h, and the files x_*.c that have no header of
# their own (one module's implementation split by concern); A -> B when a
# file of A includes "DIR/B.h" (or B_int.h) or A's object calls or uses a
# symbol that B's object defines (nm -u against nm --defined-only).
#   scripts/module_cycles.sh [--root ROOT] [-v] [DIR [OBJDIR]]
#   (default: this checkout, serving, ROOT/build/obj/DIR)
# Prints each strongly connected set of modules with more than one member
# ("cycle: A B ..." and the edges inside it), or "no cycle"; exits 1 if there
# is a cycle. -v prints every edge first. Build the objects before.
set -u
root=$(dirname "$0")/..
if [ "${1:-}" = --root ]; then root=$2; shift 2; fi
cd "$root" || exit 2
verbose=0
if [ "${1:-}" = -v ]; then verbose=1; shift; fi
dir=${1:-serving}
obj=${2:-build/obj/$dir}
# The module of file base name b (in $mod, without a subshell: a process per
# file made this script take a minute): b less _int; for a source without a
# header of its own, the longest x with x.h such that b is x_...
module_of() {
  local b=${1%_int} p
  mod=$b
  if [ "$2" = c ] && [ ! -f "$dir/$b.h" ]; then
    p=$b
    while [[ $p == *_* ]]; do
      p=${p%_*}
      if [ -f "$dir/$p.h" ]; then mod=$p; return; fi
    done
  fi
}
# "path module" lines: each source and header, and each object of a source
# that still exists (an object left over from a removed source is skipped).
map=
for f in "$dir"/*.[ch]; do
  [ -f "$f" ] || continue
  b=${f##*/}
  module_of "${b%.*}" "${f##*.}"
  map+="$f $mod"$'\n'
done
objs=()
for o in "$obj"/*.o; do
  b=${o##*/}; b=${b%.o}
  [ -f "$dir/$b.c" ] || continue
  module_of "$b" c
  map+="$o $mod"$'\n'
  objs+=("$o")
done
{
  srcs=("$dir"/*.[ch])
  [ -f "${srcs[0]}" ] && grep -HE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "${srcs[@]}"
  if [ ${#objs[@]} -gt 0 ]; then
    nm -A --defined-only "${objs[@]}" | sed 's/^/def /'
    nm -A -u "${objs[@]}" | sed 's/^/use /'
  fi
} | awk -v map="$map" -v dir="$dir" '
  BEGIN { n = split(map, lines, "\n")
          for (i = 1; i <= n; i++) if (split(lines[i], w, " ") == 2) mod[w[1]] = w[2]
          inc = "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"" dir "/[a-z0-9_]+[.]h\"" }
  /^(def|use) / { kind = $1; sub(/^(def|use) /, "")
    path = $0; sub(/:.*/, "", path); rest = substr($0, length(path) + 2)
    if (!(path in mod)) next
    k = split(rest, f, " ")
    if (kind == "def" && k == 3 && f[2] ~ /^[A-Z]$/ && f[2] != "U") print "def", mod[path], f[3]
    if (kind == "use" && k >= 1) print "use", mod[path], f[k]
    next }
  { path = $0; sub(/:.*/, "", path)
    text = substr($0, length(path) + 2)
    if (!(path in mod) || !match(text, inc)) next
    h = substr(text, 1, RSTART + RLENGTH - 4); sub(/.*\//, "", h)
    sub(/_int$/, "", h)
    print "inc", mod[path], h }
' | awk -v verbose="$verbose" '
  $1 == "inc" { if ($2 != $3) { edge[$2 " " $3] = edge[$2 " " $3] " include"; node[$2]; node[$3] } next }
  $1 == "def" { owner[$3] = $2; node[$2]; next }
  $1 == "use" { uses[++nu] = $2 " " $3; next }
  END {
    for (i = 1; i <= nu; i++) {
      split(uses[i], u, " ")
      if ((u[2] in owner) && owner[u[2]] != u[1]) {
        k = u[1] " " owner[u[2]]
        if (index(edge[k], "call") == 0) edge[k] = edge[k] " call"
        sym[k] = sym[k] " " u[2]
      }
    }
    n = 0
    for (v in node) name[++n] = v
    for (k in edge) { split(k, e, " "); r[e[1], e[2]] = 1 }
    for (x = 1; x <= n; x++) for (a = 1; a <= n; a++) if (r[name[a], name[x]])
      for (b = 1; b <= n; b++) if (r[name[x], name[b]]) r[name[a], name[b]] = 1
    if (verbose) {
      print "edges:"
      cmd = "sort"
      for (k in edge) print "  " k " (" substr(edge[k], 2) ")" | cmd
      close(cmd)
    }
    bad = 0
    for (a = 1; a <= n; a++) {
      if (done[name[a]] || !r[name[a], name[a]]) continue
      set = ""
      for (b = 1; b <= n; b++)
        if (r[name[a], name[b]] && r[name[b], name[a]]) { set = set " " name[b]; done[name[b]] = 1 }
      print "cycle:" set
      for (k in edge) { split(k, e, " ")
        if (r[name[a], e[1]] && r[e[1], name[a]] && r[name[a], e[2]] && r[e[2], name[a]])
          print "    " k " (" substr(edge[k], 2) ")" (sym[k] != "" ? ":" sym[k] : "")
      }
      bad = 1
    }
    if (!bad) print "no cycle"
    exit bad
  }'
