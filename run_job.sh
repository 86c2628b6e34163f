#!/usr/bin/env bash
# run_job.sh -- run a Kiln MapReduce job under mpirun.
#
#   ./run_job.sh [-n NP] [--hostfile FILE] [--timeout S] JOB [-D key=value]... [job args]
#
# Installs missing packages (scripts/deps.sh) and builds (make) when the
# binary is missing, sets what Open MPI needs to run as root and to start more
# ranks than cores, prints the mpirun line, and exits with the job's status
# (0 only when the output is complete).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-build}
bin="$here/$build/bin/kiln-mr"

cores() { nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1; }

ensure_built() {
  if [ ! -x "$bin" ]; then
    "$here/scripts/deps.sh"
    echo "run_job.sh: building kiln-mr (make)" >&2
    make -C "$here" -j"$(cores)" >&2
  fi
}

usage() {
  cat <<EOF
Usage: ./run_job.sh [-n NP] [--hostfile FILE] [--timeout S] JOB [-D key=value]... [job args]
       ./run_job.sh JOB --help

Runs the MapReduce job JOB on NP MPI ranks (kiln-mr under mpirun).

Options:
  -n, --np NP        number of ranks (default: the number of cores, $(cores) here);
                     more ranks than cores are oversubscribed
  --hostfile FILE    Open MPI hostfile ("host slots=N" lines) to run on several
                     machines; the input and output must be on a filesystem
                     every host sees, under the same path
  --timeout S        stop the whole job if it runs longer than S seconds
  -h, --help         this text

Everything after JOB goes to the job: its own arguments (JOB --help lists
them) and -D key=value settings for the engine (kiln-mr --help lists them:
kiln.sort.mb, mapreduce.job.reduces, ...) and for the job (importtsv.*).

Jobs:
EOF
  ensure_built
  "$bin" --list | while IFS=$'\t' read -r name summary; do
    printf '  %-12s %s\n' "$name" "$summary"
  done
  cat <<EOF

Rank 0 prints progress (" map 40% reduce 0%") and, at the end, the job's
counters; the output directory gets _job.json and, last, _SUCCESS. The exit
status is 0 only when the output is complete.
EOF
}

np=""
hostfile=""
timeout=""
while [ $# -gt 0 ]; do
  case "$1" in
    -n|--np|-np)
      [ $# -ge 2 ] || { echo "run_job.sh: $1 needs a number" >&2; exit 64; }
      np=$2; shift 2 ;;
    --hostfile|-H)
      [ $# -ge 2 ] || { echo "run_job.sh: $1 needs a file" >&2; exit 64; }
      hostfile=$2; shift 2 ;;
    --timeout|-t)
      [ $# -ge 2 ] || { echo "run_job.sh: $1 needs seconds" >&2; exit 64; }
      timeout=$2; shift 2 ;;
    -h|--help)
      usage; exit 0 ;;
    --)
      shift; break ;;
    -*)
      echo "run_job.sh: unknown option '$1'" >&2
      echo "Try './run_job.sh --help'." >&2
      exit 64 ;;
    *)
      break ;;
  esac
done

if [ $# -eq 0 ]; then
  echo "run_job.sh: no job given" >&2
  echo "Try './run_job.sh --help'." >&2
  exit 64
fi

ensure_built

# JOB --help and unknown jobs answer without MPI.
for a in "$@"; do
  if [ "$a" = "--help" ] || [ "$a" = "-h" ]; then
    exec "$bin" "$@"
  fi
done
if ! "$bin" --list | cut -f1 | grep -qx -- "$1"; then
  exec "$bin" "$@"
fi

if [ -z "$np" ]; then
  np=$(cores)
fi
case "$np" in
  ''|*[!0-9]*|0) echo "run_job.sh: -n needs a positive number, not '$np'" >&2; exit 64 ;;
esac
if [ -n "$timeout" ]; then
  case "$timeout" in
    ''|*[!0-9]*|0) echo "run_job.sh: --timeout needs a positive number of seconds" >&2; exit 64 ;;
  esac
fi

args=(mpirun -np "$np")
if [ -n "$hostfile" ]; then
  [ -r "$hostfile" ] || { echo "run_job.sh: $hostfile: cannot read hostfile" >&2; exit 66; }
  args+=(--hostfile "$hostfile")
fi
if [ -z "$hostfile" ] && [ "$np" -gt "$(cores)" ]; then
  args+=(--oversubscribe)
elif [ "${KILN_OVERSUBSCRIBE:-0}" = 1 ]; then
  args+=(--oversubscribe)
fi
if [ -n "$timeout" ]; then
  args+=(--timeout "$timeout")
fi
# Open MPI refuses to run as root unless both variables are set.
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Remote ranks get these only when exported by name (one -x per variable).
for v in TMPDIR LD_LIBRARY_PATH; do
  if [ -n "${!v:-}" ]; then
    args+=(-x "$v")
  fi
done
# Spill files go to a directory of this run, removed whatever happens to the
# ranks (a killed rank cannot clean up after itself), unless the caller chose
# one with -D kiln.tmp.dir=...
case " $* " in
  *" kiln.tmp.dir="*|*" -Dkiln.tmp.dir="*) ;;
  *)
    spill=$(mktemp -d "${TMPDIR:-/tmp}/kiln-run.XXXXXX")
    trap 'rm -rf "$spill"' EXIT
    set -- "$@" -D "kiln.tmp.dir=$spill" ;;
esac
args+=("$bin" "$@")

echo "+ ${args[*]}" >&2
set +e
"${args[@]}"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
  echo "run_job.sh: $1 failed (exit status $rc)" >&2
fi
exit "$rc"
