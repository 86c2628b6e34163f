#!/usr/bin/env bash
# Checks that storage/ has no include cycle, at two levels:
#   headers  storage/*/*.h -> the storage headers it includes;
#   modules  foo.c + foo.h (+ foo_int.h) -> the modules whose headers it
#            includes. A .c file with no header of its own belongs to the
#            module whose private foo_int.h it includes (hfile_iter.c ->
#            hfile_reader), else to the longest module name it starts with
#            (hfile_format_read.c -> hfile_format).
# Prints the graphs' sizes, or each loop found (tsort's report), and exits 1
# if there is one. Usage: scripts/check_cycles.sh [-v]   (-v: print the edges)
set -u
cd "$(dirname "$0")/.."
verbose=0
[ "${1:-}" = "-v" ] && verbose=1

files=$(ls storage/*/*.[ch])

# includes FILE: the storage headers FILE includes, one a line
includes() {
  sed -nE 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*"(storage/[^"]+)".*|\1|p' "$1"
}

# module FILE: its module, as dir/name
module() {
  local f=$1 dir base m inc
  dir=${f%/*}
  base=${f##*/}
  base=${base%.[ch]}
  case $base in *_int) echo "$dir/${base%_int}"; return ;; esac
  if [ -e "$dir/$base.h" ]; then echo "$dir/$base"; return; fi
  for inc in $(includes "$f"); do
    case $inc in "$dir"/*_int.h) m=${inc##*/}; echo "$dir/${m%_int.h}"; return ;; esac
  done
  m=$base
  while [ "${m%_*}" != "$m" ]; do
    m=${m%_*}
    if [ -e "$dir/$m.h" ]; then echo "$dir/$m"; return; fi
  done
  echo "$dir/$base"
}

header_edges=$(for f in $files; do
  case $f in *.h) for inc in $(includes "$f"); do echo "$f $inc"; done ;; esac
done)
module_edges=$(for f in $files; do
  from=$(module "$f")
  echo "$from $from"    # every module is a node, with or without edges
  for inc in $(includes "$f"); do
    to=$(module "$inc")
    [ "$to" != "$from" ] && echo "$from $to"
  done
done | sort -u)

bad=0
check() { # name, edges
  local name=$1 edges=$2 out nodes n
  if [ "$verbose" -eq 1 ]; then echo "$edges" | awk '$1 != $2' | sed "s|^|$name: |"; fi
  if ! out=$(echo "$edges" | tsort 2>&1 >/dev/null) || [ -n "$out" ]; then
    echo "check-cycles: $name: include cycle"
    echo "$out" | sed 's|^tsort: -: ||'
    bad=1
    return
  fi
  nodes=$(echo "$edges" | tr ' ' '\n' | sort -u | wc -l)
  n=$(echo "$edges" | awk '$1 != $2' | wc -l)
  echo "check-cycles: $name: $nodes nodes, $n edges, no cycle"
}
check headers "$header_edges"
check modules "$module_edges"
exit $bad
