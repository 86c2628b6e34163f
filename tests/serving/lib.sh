# lib.sh -- what the kiln-server end-to-end scripts share (sourced, bash):
# the programs, a scratch directory with KILN_DATA in it, the pass/fail
# count and its closing line, and one server on free loopback ports.
#
# The caller sets NAME (for "NAME: N passed, N failed") before sourcing.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
KILN=$BUILD/bin/kiln
SERVER=$BUILD/bin/kiln-server
T=$(mktemp -d)
SPID=
HP=
RP=
U=
export KILN_DATA=$T/data

stop_server() {
    if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then
        kill -TERM "$SPID" 2>/dev/null
        wait "$SPID" 2>/dev/null
    fi
    SPID=
}
trap 'stop_server; rm -rf "$T"' EXIT

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
finish() { echo "$NAME: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

# start_server [--nofile N] ARGS...: kiln-server on KILN_DATA listening on
# 127.0.0.1:0 (and the Redis protocol too when ARGS has --resp-listen),
# under `ulimit -n N` when given; sets SPID, HP, U and RP. Fails if it did
# not start (its log is $T/server.log).
start_server() {
    local nofile=
    if [ "${1:-}" = --nofile ]; then
        nofile=$2
        shift 2
    fi
    local want='over HTTP on'
    case " $* " in *" --resp-listen "*) want='Redis protocol on' ;; esac
    : > "$T/server.log"
    (if [ -n "$nofile" ]; then ulimit -n "$nofile" || exit 1; fi
     exec "$SERVER" --data "$KILN_DATA" --listen 127.0.0.1:0 "$@") > "$T/server.log" 2>&1 &
    SPID=$!
    for _ in $(seq 200); do
        grep -q "$want" "$T/server.log" && break
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.05
    done
    HP=$(sed -nE 's/.*over HTTP on .* \(port ([0-9]+)\).*/\1/p' "$T/server.log" | head -1)
    RP=$(sed -nE 's/.*Redis protocol on .* \(port ([0-9]+)\).*/\1/p' "$T/server.log" | head -1)
    U=http://127.0.0.1:$HP
    [ -n "$HP" ] && { [ "$want" = 'over HTTP on' ] || [ -n "$RP" ]; }
}

# load_rows TABLE FAMILY FILE: an HFile from `kiln hfile dump` lines on
# stdin, loaded as TABLE's new version.
load_rows() {
    local job=$T/job-$1
    mkdir -p "$job/$2"
    "$KILN" hfile write "$job/$2/$3" --family "$2" > /dev/null &&
        touch "$job/_SUCCESS" && "$KILN" load "$1" "$job" > /dev/null
}
