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
# The module of file base name b: b less _int; for a source without a header
# of its own, the longest x with x.h such that b is x_...
module_of() {
  local b=${1%_int} p
  if [ "$2" = c ] && [ ! -f "$dir/$b.h" ]; then
    p=$b
    while [[ $p == *_* ]]; do
      p=${p%_*}
      if [ -f "$dir/$p.h" ]; then echo "$p"; return; fi
    done
  fi
  echo "$b"
}
{
  for f in "$dir"/*.[ch]; do
    m=$(module_of "$(basename "${f%.*}")" "${f##*.}")
    sed -nE "s|^[[:space:]]*#[[:space:]]*include[[:space:]]*\"$dir/([a-z0-9_]+)\.h\".*|\1|p" "$f" |
      while read -r h; do echo "inc $m ${h%_int}"; done
  done
  for o in "$obj"/*.o; do
    m=$(basename "${o%.o}")
    [ -f "$dir/$m.c" ] || continue   # left over from a removed source
    m=$(module_of "$m" c)
    nm --defined-only "$o" | awk -v m="$m" '$2 ~ /^[A-Z]$/ && $2 != "U" { print "def", m, $3 }'
    nm -u "$o" | awk -v m="$m" '{ print "use", m, $NF }'
  done
} | awk -v verbose="$verbose" '
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
