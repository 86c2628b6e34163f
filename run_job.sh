#!/usr/bin/env bash
# run_job.sh -- run a Kiln MapReduce job under mpirun, on this machine or on
# a cluster.
#
#   ./run_job.sh [options] JOB [-D key=value]... [job args]
#
# Installs missing packages (scripts/deps.sh) and builds (make) when the
# binary is missing, sets what Open MPI needs to run as root and to start more
# ranks than slots, forwards the job's environment to remote ranks, prints
# the mpirun line, removes every host's spill files and any temporary output
# afterwards, and exits with the job's status (0 only when the output is
# complete). docs/cluster.md is the guide to running on several machines.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-build}
bin="$here/$build/bin/kiln-mr"

cores() { nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1; }

die() { # status, message
  echo "run_job.sh: $2" >&2
  exit "$1"
}

ensure_built() {
  if [ ! -x "$bin" ]; then
    "$here/scripts/deps.sh"
    echo "run_job.sh: building kiln-mr (make)" >&2
    make -C "$here" -j"$(cores)" >&2
  fi
}

usage() {
  cat <<EOF
Usage: ./run_job.sh [options] JOB [-D key=value]... [job args]
       ./run_job.sh JOB --help

Runs the MapReduce job JOB on MPI ranks (kiln-mr under mpirun), on this
machine or on the hosts of a hostfile.

Options:
  -n, --np NP          number of ranks (default: the slots of --hostfile or
                       --host, else SLURM_NTASKS in a Slurm allocation, else
                       the number of cores, $(cores) here); more ranks than
                       slots are oversubscribed
  --hostfile FILE      Open MPI hostfile ("host slots=N" lines) to run on
                       several machines; the checkout, the inputs and the
                       output's parent must be on a file system every host
                       sees at the same path (docs/cluster.md)
  -H, --host LIST      hosts as mpirun takes them: h1,h2:2 (":N" slots, else 1)
  --timeout S          stop the whole job if it runs longer than S seconds
  --mca KEY VALUE      an Open MPI MCA parameter (repeatable), e.g.
                       --mca btl_tcp_if_include eth1; where this host has no
                       RDMA device (/sys/class/infiniband) the default is
                       --mca pml ob1 unless --mca pml or OMPI_MCA_pml says
  --net IFACES         the network interfaces (or CIDRs) for MPI traffic,
                       comma-separated: --mca btl_tcp_if_include and
                       oob_tcp_if_include in one
  --map-by SPEC        mpirun's --map-by (e.g. node, ppr:1:node)
  --bind-to SPEC       mpirun's --bind-to (e.g. core, none)
  -x NAME[=VALUE]      forward one more environment variable to every rank
  --mpi-arg ARG        pass ARG to mpirun as it is (repeatable)
  -h, --help           this text

Every rank gets KILN_DATA (made absolute), TMPDIR, LD_LIBRARY_PATH and
every exported KILN_* variable; rank 0 reads the target table and inputs
and hands every rank the same job description, and the job fails before
map, naming the host, if a host cannot see the program, an input or the
output's parent as rank 0 does.

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
counters; the output directory appears whole, with _job.json and _SUCCESS.
The exit status is 0 only when the output is complete. On failure no host
keeps spill files and no temporary output is left beside the output.
EOF
}

# Slots of a hostfile: "host slots=N" (1 when not given); comments and
# blank lines skipped.
hostfile_slots() {
  awk '{ sub(/#.*/, "") } NF == 0 { next }
       { n = 1; for (i = 2; i <= NF; i++) if ($i ~ /^slots=/) { split($i, a, "="); n = a[2] }
         total += n }
       END { print total + 0 }' "$1"
}

host_list_slots() {
  local total=0 h
  IFS=',' read -r -a hs <<< "$1"
  for h in "${hs[@]}"; do
    [ -n "$h" ] || continue
    case $h in
      *:*) total=$((total + ${h##*:})) ;;
      *) total=$((total + 1)) ;;
    esac
  done
  echo "$total"
}

need() { # option, count left
  [ "$2" -ge 2 ] || die 64 "$1 needs a value"
}

np=""
hostfile=""
hosts=""
timeout=""
mpi_extra=()
mpi_map=()      # the ranks' mapping and binding: not for the sweep, which maps its own
forward=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n|--np|-np) need "$1" $#; np=$2; shift 2 ;;
    --hostfile|--machinefile) need "$1" $#; hostfile=$2; shift 2 ;;
    -H|--host) need "$1" $#; hosts=$2; shift 2 ;;
    --timeout|-t) need "$1" $#; timeout=$2; shift 2 ;;
    --mca)
      [ $# -ge 3 ] || die 64 "--mca needs KEY VALUE"
      mpi_extra+=(--mca "$2" "$3"); shift 3 ;;
    --net)
      need "$1" $#
      mpi_extra+=(--mca btl_tcp_if_include "$2" --mca oob_tcp_if_include "$2"); shift 2 ;;
    --map-by|--bind-to|--rank-by)
      need "$1" $#; mpi_map+=("$1" "$2"); shift 2 ;;
    -x) need "$1" $#; forward+=("$2"); shift 2 ;;
    --mpi-arg) need "$1" $#; mpi_extra+=("$2"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*)
      echo "run_job.sh: unknown option '$1'" >&2
      echo "Try './run_job.sh --help'." >&2
      exit 64 ;;
    *) break ;;
  esac
done

if [ $# -eq 0 ]; then
  echo "run_job.sh: no job given" >&2
  echo "Try './run_job.sh --help'." >&2
  exit 64
fi
[ -z "$hostfile" ] || [ -z "$hosts" ] || die 64 "give --hostfile or --host, not both"

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

slots=$(cores)
remote=0
if [ -n "$hostfile" ]; then
  [ -r "$hostfile" ] || die 66 "$hostfile: cannot read hostfile"
  slots=$(hostfile_slots "$hostfile")
  [ "$slots" -gt 0 ] || die 65 "$hostfile: no hosts in the hostfile"
  remote=1
elif [ -n "$hosts" ]; then
  slots=$(host_list_slots "$hosts")
  [ "$slots" -gt 0 ] || die 64 "--host '$hosts' names no host"
  remote=1
elif [ -n "${SLURM_JOB_ID:-}" ] && [ -n "${SLURM_NTASKS:-}" ]; then
  # Inside a Slurm allocation mpirun takes its hosts from Slurm.
  slots=$SLURM_NTASKS
  remote=1
fi
if [ -z "$np" ]; then
  np=$slots
fi
case "$np" in
  ''|*[!0-9]*|0) die 64 "-n needs a positive number, not '$np'" ;;
esac
if [ -n "$timeout" ]; then
  case "$timeout" in
    ''|*[!0-9]*|0) die 64 "--timeout needs a positive number of seconds" ;;
  esac
fi

placement=()
if [ -n "$hostfile" ]; then
  placement+=(--hostfile "$hostfile")
elif [ -n "$hosts" ]; then
  placement+=(--host "$hosts")
fi

# Open MPI probes every point-to-point layer it was built with (UCX,
# libfabric, PSM) as the ranks start: a fifth of a second per job even where
# none of them finds a device. Where this host has no RDMA device and the
# caller chose no layer (OMPI_MCA_pml, --mca pml), the ranks take ob1 (shared
# memory and TCP) straight away.
if [ -z "${OMPI_MCA_pml:-}" ] && [ -z "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
  case " ${mpi_extra[*]} " in
    *" pml "*) ;;
    *) mpi_extra=(--mca pml ob1 "${mpi_extra[@]}") ;;
  esac
fi

args=(mpirun -np "$np" "${placement[@]}")
if [ "$np" -gt "$slots" ] || [ "${KILN_OVERSUBSCRIBE:-0}" = 1 ]; then
  args+=(--oversubscribe)
fi
if [ -n "$timeout" ]; then
  args+=(--timeout "$timeout")
fi
# Open MPI refuses to run as root unless both variables are set.
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Remote ranks start in a clean environment (ssh): forward what jobs read.
# A relative KILN_DATA would name another directory on a host whose rank
# starts elsewhere: make it absolute first.
if [ -n "${KILN_DATA:-}" ]; then
  case $KILN_DATA in
    /*) ;;
    *) KILN_DATA="$PWD/$KILN_DATA" ;;
  esac
  export KILN_DATA
fi
for v in TMPDIR LD_LIBRARY_PATH ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS \
         $(compgen -e | grep '^KILN_' || true); do
  if [ -n "${!v:-}" ]; then
    args+=(-x "$v")
  fi
done
for v in "${forward[@]}"; do
  args+=(-x "$v")
done
args+=("${mpi_extra[@]}" "${mpi_map[@]}")

# Spill files go to a directory of this run on every host; afterwards,
# whatever happened to the ranks (a killed rank cannot clean up after
# itself), `kiln-mr --sweep` removes it on every host, with the temporary
# output a failed rank 0 noted there. A directory chosen with
# -D kiln.tmp.dir=... is the caller's to clean.
spill=""
case " $* " in
  *" kiln.tmp.dir="*|*" -Dkiln.tmp.dir="*) ;;
  *)
    run_id="$(date +%Y%m%d%H%M%S)-$$-$RANDOM"
    spill="${TMPDIR:-/tmp}/kiln-run.$run_id"
    set -- "$@" -D "kiln.tmp.dir=$spill" ;;
esac
args+=("$bin" "$@")

sweep() {
  [ -n "$spill" ] || return 0
  if [ "$remote" = 1 ]; then
    # One sweeper per host of the job, each removing its own host's files.
    local sargs=(mpirun "${placement[@]}" --map-by ppr:1:node)
    for v in TMPDIR LD_LIBRARY_PATH; do
      if [ -n "${!v:-}" ]; then sargs+=(-x "$v"); fi
    done
    sargs+=("${mpi_extra[@]}" "$bin" --sweep "$spill")
    if ! "${sargs[@]}" >/dev/null 2>"$spill.sweep.err"; then
      echo "run_job.sh: could not remove $spill on every host:" >&2
      grep -v '^ *$' "$spill.sweep.err" | head -5 >&2
      echo "run_job.sh: remove it by hand: ${sargs[*]}" >&2
    fi
    rm -f "$spill.sweep.err"
  fi
  "$bin" --sweep "$spill" || true
}
trap sweep EXIT

echo "+ ${args[*]}" >&2
set +e
"${args[@]}"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
  echo "run_job.sh: $1 failed (exit status $rc)" >&2
fi
exit "$rc"
