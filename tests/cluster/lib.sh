# lib.sh -- simulated hosts for multi-host tests (sourced, bash).
#
# cluster_up N builds N "hosts" h1..hN on this machine, each a Linux network
# namespace with its own address on a private bridge (no route to the root
# namespace), its own hostname, and its own /tmp; everything else (the
# checkout, the data) is the one shared file system, as on a cluster with a
# shared home. A process runs "on" a host through cluster_exec, or through
# the ssh stand-in $CLUSTER/ssh that Open MPI's rsh launcher calls
# (--mca plm_rsh_agent): like ssh it starts the command in a clean
# environment, so only what mpirun forwards reaches the remote ranks.
#
# Needs root (ip netns, mount). Where a namespace cannot be made, cluster_up
# fails and says why: the tests that need hosts fail, never skip.
#
#   CLUSTER            the harness directory (hosts' /tmp, config, the ssh)
#   cluster_up N       make the hosts; sets CLUSTER and CLUSTER_HOSTS
#   cluster_exec H CMD run CMD on host H (with this shell's environment)
#   cluster_bind H SRC DST   on host H, DST shows SRC (later commands)
#   cluster_tmp H      the directory that is host H's /tmp
#   cluster_tmp_left H PATTERN   what matches PATTERN at the top of host H's
#                      /tmp, less the mount points of shared paths (below)
#   cluster_down       remove the hosts and the harness directory
#
# The shared file system is everything but /tmp. When the checkout or the
# harness directory itself lives under /tmp (a clone in /tmp/x), each host
# keeps seeing it at the same path: its directory is bound back over the
# host's private /tmp, on a mount point made when the hosts are.

CLUSTER=
CLUSTER_HOSTS=()
_cluster_tag=
_cluster_sw=

_cluster_ns() { echo "kiln${_cluster_tag}-$1"; }

cluster_up() {
  local n=$1 base=${2:-$PWD}
  if [ "$(id -u)" -ne 0 ]; then
    echo "cluster: simulated hosts need root (ip netns, mount): cannot run" >&2
    return 1
  fi
  for t in ip unshare nsenter mount; do
    command -v "$t" >/dev/null || { echo "cluster: $t is missing" >&2; return 1; }
  done
  _cluster_tag=$$
  CLUSTER=$(mktemp -d "$base/cluster.XXXXXX") || return 1
  _cluster_sw=$(_cluster_ns sw)
  if ! ip netns add "$_cluster_sw" 2>"$CLUSTER/err"; then
    echo "cluster: cannot make a network namespace: $(cat "$CLUSTER/err")" >&2
    return 1
  fi
  ip -n "$_cluster_sw" link add br0 type bridge || return 1
  ip -n "$_cluster_sw" link set br0 up || return 1
  : > "$CLUSTER/hosts"
  printf '127.0.0.1\tlocalhost\n' >> "$CLUSTER/hosts"
  local i
  for i in $(seq 1 "$n"); do
    local h=h$i ns
    ns=$(_cluster_ns "$h")
    ip netns add "$ns" || return 1
    ip link add "v$_cluster_tag$i" type veth peer name "p$_cluster_tag$i" || return 1
    ip link set "v$_cluster_tag$i" netns "$ns" || return 1
    ip link set "p$_cluster_tag$i" netns "$_cluster_sw" || return 1
    ip -n "$_cluster_sw" link set "p$_cluster_tag$i" master br0 up || return 1
    ip -n "$ns" link set "v$_cluster_tag$i" name eth0 || return 1
    ip -n "$ns" addr add "10.213.0.$i/24" dev eth0 || return 1
    ip -n "$ns" link set eth0 up || return 1
    ip -n "$ns" link set lo up || return 1
    mkdir -p "$CLUSTER/$h/tmp" "$CLUSTER/$h/etc"
    chmod 1777 "$CLUSTER/$h/tmp"
    printf '10.213.0.%d\t%s\n' "$i" "$h" >> "$CLUSTER/hosts"
    printf '/tmp %s/%s/tmp\n' "$CLUSTER" "$h" > "$CLUSTER/$h/binds"
    CLUSTER_HOSTS+=("$h")
  done
  for h in "${CLUSTER_HOSTS[@]}"; do
    printf '/etc/hosts %s/hosts\n' "$CLUSTER" >> "$CLUSTER/$h/binds"
    echo "$h" > "$CLUSTER/$h/etc/hostname"
  done
  # Shared paths under /tmp that a host's private /tmp would hide.
  : > "$CLUSTER/keep"
  : > "$CLUSTER/keep-tops"
  local p real
  for p in "$PWD" "$base"; do
    real=$(realpath -m "$p")
    case $real in
      /tmp/?*)
        grep -qxF "$real" "$CLUSTER/keep" && continue
        echo "$real" >> "$CLUSTER/keep"
        real=${real#/tmp/}
        echo "${real%%/*}" >> "$CLUSTER/keep-tops"
        for h in "${CLUSTER_HOSTS[@]}"; do mkdir -p "$CLUSTER/$h/tmp/$real"; done ;;
    esac
  done
  echo "$_cluster_tag" > "$CLUSTER/tag"
  _cluster_write_ssh
}

# The command that enters host H: its network namespace, then a fresh mount
# and UTS namespace with the host's binds and hostname.
_cluster_write_ssh() {
  cat > "$CLUSTER/enter" <<'EOS'
#!/bin/bash
# enter HOST CMD...: run CMD on a simulated host (see tests/cluster/lib.sh).
dir=$(cd "$(dirname "$0")" && pwd)
h=$1; shift
[ -f "$dir/$h/binds" ] || { echo "ssh: Could not resolve hostname $h" >&2; exit 255; }
ns="kiln$(cat "$dir/tag")-$h"
exec ip netns exec "$ns" unshare --mount --uts --propagation private /bin/bash -c '
  # Shared directories under /tmp are opened before /tmp is covered, then
  # bound back through those descriptors.
  keep=()
  while read -r p; do exec {fd}<"$p" || exit 255; keep+=("$fd:$p"); done < "$0/keep"
  while read -r dst src; do
    mount --bind "$src" "$dst" || exit 255
    if [ "$dst" = /tmp ]; then
      for k in "${keep[@]}"; do
        mount --no-canonicalize --bind "/proc/self/fd/${k%%:*}" "${k#*:}" || exit 255
      done
    fi
  done < "$0/$1/binds"
  for k in "${keep[@]}"; do eval "exec ${k%%:*}<&-"; done
  hostname "$1"
  shift
  exec "$@"' "$dir" "$h" "$@"
EOS
  # ssh stand-in: options are ignored, the command runs in a clean
  # environment in the user's shell, as sshd would start it.
  cat > "$CLUSTER/ssh" <<'EOS'
#!/bin/bash
dir=$(cd "$(dirname "$0")" && pwd)
while [ $# -gt 0 ]; do
  case $1 in
    -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
h=$1; shift
echo "$h $*" >> "$dir/ssh.log"
exec "$dir/enter" "$h" env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c "$*"
EOS
  chmod +x "$CLUSTER/enter" "$CLUSTER/ssh"
}

cluster_exec() { local h=$1; shift; "$CLUSTER/enter" "$h" "$@"; }

cluster_bind() { printf '%s %s\n' "$3" "$2" >> "$CLUSTER/$1/binds"; }

cluster_tmp() { echo "$CLUSTER/$1/tmp"; }

cluster_tmp_left() {
  find "$CLUSTER/$1/tmp" -mindepth 1 -maxdepth 1 -name "$2" 2>/dev/null |
    grep -vxF -f <(sed "s|^|$CLUSTER/$1/tmp/|" "$CLUSTER/keep-tops")
}

cluster_down() {
  [ -n "$_cluster_tag" ] || return 0
  local h
  for h in "${CLUSTER_HOSTS[@]}"; do
    local ns
    ns=$(_cluster_ns "$h")
    # Anything still running on the host goes with it.
    local pids
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
  ip netns del "$_cluster_sw" 2>/dev/null
  rm -rf "$CLUSTER"
  _cluster_tag=
}
