#!/usr/bin/env bash
# mr_modules.sh -- the include graph of mapreduce/'s modules, checked for
# cycles. A module is mr_x.c with mr_x.h (and mr_x_int.h, its private half);
# an edge "A B" means a file of A includes a header of B.
#
#   scripts/mr_modules.sh          exit 1 and print the loop if there is one
#   scripts/mr_modules.sh --edges  print the edges first
#   scripts/mr_modules.sh --order  print the modules first, includers before
#                                  what they include (the runner on top)
set -uo pipefail
cd "$(dirname "$0")/.."
edges() {
  local f from to
  for f in mapreduce/*.[ch]; do
    from=$(basename "$f"); from=${from%.[ch]}; from=${from%_int}
    echo "$from $from"     # every module is a node, even one with no edges
    { grep -oE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"mapreduce/[a-z0-9_]+\.h"' "$f" || true; } |
      sed -E 's|.*"mapreduce/([a-z0-9_]+)\.h"|\1|; s/_int$//' |
      while read -r to; do
        if [ "$to" != "$from" ]; then echo "$from $to"; fi
      done
  done | sort -u
}
all=$(edges)
if [ "${1:-}" = --edges ]; then echo "$all" | awk '$1 != $2'; fi
loops=$(echo "$all" | tsort 2>&1 >/dev/null)
if [ -n "$loops" ]; then
  echo "mr_modules: include cycle among mapreduce/ modules:" >&2
  echo "$loops" >&2
  exit 1
fi
order=$(echo "$all" | tsort)
if [ "${1:-}" = --order ]; then echo "$order"; fi
echo "mr_modules: $(echo "$order" | wc -l) modules, $(echo "$all" | awk '$1 != $2' | wc -l) edges, no include cycle"
