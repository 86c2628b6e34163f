#!/usr/bin/env bash
# Checks that the layers include one way only (see ARCHITECTURE.md):
#   storage/   includes nothing above it, no MPI, no sockets;
#   mapreduce/ includes storage/ only;  jobs/ includes mapreduce/ and storage/;
#   bulkload/ and serving/ include storage/ (serving may include bulkload/ no; neither MPI);
#   no folder includes another folder's private *_int.h;
#   mapreduce/'s modules include one another without a cycle (mr_modules.sh).
# Prints each violation as FILE:LINE: text and exits 1 if there is any.
set -u
cd "$(dirname "$0")/.."
bad=0
check() { # folder, regex of forbidden includes, reason
  local dir=$1 re=$2 why=$3 hits
  [ -d "$dir" ] || return 0
  hits=$(grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($re)" "$dir"/*.[ch] 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "$hits" | sed "s|\$|   <- $why|"
    bad=1
  fi
}
check storage   'mapreduce/|jobs/|bulkload/|serving/|cli/|mpi\.h|sys/socket\.h|netinet/' "storage/ is the bottom layer"
check mapreduce 'jobs/|bulkload/|serving/|cli/'                "mapreduce/ knows records, not jobs or the store"
check jobs      'bulkload/|serving/|cli/'                      "jobs/ sits on mapreduce/ and storage/"
check bulkload  'mapreduce/|jobs/|serving/|cli/|mpi\.h'        "bulkload/ links no MPI"
check serving   'mapreduce/|jobs/|cli/|mpi\.h'                 "serving/ links no MPI"
# private headers: a file may include only its own folder's *_int.h
for f in $(ls */*.[ch] 2>/dev/null); do
  dir=${f%%/*}
  grep -nE '#[[:space:]]*include[[:space:]]*"[a-z_]+/[a-z_]+_int\.h"' "$f" | while IFS= read -r line; do
    inc=$(echo "$line" | sed -E 's/.*"([a-z_]+)\/.*/\1/')
    if [ "$inc" != "$dir" ]; then echo "$f:$line   <- private header of $inc/"; exit 1; fi
  done || bad=1
done
# mapreduce/: calls go one way (runner -> phases -> collector/shuffle -> runs),
# so its modules' includes must not loop
scripts/mr_modules.sh >/dev/null || bad=1
if [ "$bad" -eq 0 ]; then echo "check-deps: layers OK"; fi
exit $bad
