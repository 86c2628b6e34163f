#!/usr/bin/env bash
# scanner_test.sh -- HBase REST scanners of kiln-server where the store is
# hardest on them: a table cut into many regions (empty ones included), a
# salted table (rows in user-key order, the bucket byte hidden), and `kiln
# load` swapping in new versions while a scanner is open (the scanner keeps
# reading the version it started on; a new scanner reads the new one); and
# the bounds --max-scanners, --scanner-idle and --scan-max-mb.
# Checked by scanner_test.py with stock decoders. Prints "N passed, N failed".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
export BUILD                       # run_job.sh takes it relative to the tree
case $BUILD in /*) B=$BUILD ;; *) B=$ROOT/$BUILD ;; esac
KILN=$B/bin/kiln
export LSAN_OPTIONS="fast_unwind_on_malloc=0:suppressions=$ROOT/tests/mapreduce/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export OMPI_MCA_mca_component_disable_dlclose=1
T=$(mktemp -d "${TMPDIR:-/tmp}/kiln-scanner-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
export KILN_DATA=$T/data
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }
for b in "$KILN" "$B/bin/kiln-server" "$B/bin/kiln-mr"; do [ -x "$b" ] || fail "$b not built"; done
command -v python3 >/dev/null || fail "python3 missing"

# big: 2000 rows r00000..r01999, two cells each (f:a, f:b), in 14 regions:
# two empty ones before the first row, two holding a single row, two empty
# regions in the middle, the rest a few hundred rows each.
"$KILN" create big --family f --split q --split qz --split r00100 --split r00333 \
    --split r00500 --split 'r00500\x00' --split r00700 --split r00700a --split r00800x --split r00800y --split r01000 \
    --split r01500 --split r01999 >/dev/null || fail "create big"
mkdir -p "$T/v1/f" "$T/v2/f" "$T/v3/f"
for v in 1 2 3; do
    awk -v v=$v 'BEGIN { for (i = 0; i < 2000; i++) {
        printf "r%05d\tf:a\t%d\tPut\tv%d-a-%d\n", i, v, v, i
        printf "r%05d\tf:b\t%d\tPut\tv%d-b-%d\n", i, v, v, i } }' |
        "$KILN" hfile write "$T/v$v/f/p" --family f >/dev/null || fail "hfile v$v"
    touch "$T/v$v/_SUCCESS"
done
"$KILN" load big "$T/v1" >/dev/null || fail "load big v1"

# salted: 3000 sequential keys through importtsv into 8 buckets
"$KILN" create salted --family d --salt-buckets 8 >/dev/null || fail "create salted"
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "k%05d\tval%d\n", i, i }' >"$T/in.tsv"
"$ROOT/run_job.sh" -n 1 importtsv -D importtsv.columns=HBASE_ROW_KEY,d:v \
    -D importtsv.timestamp=1000 -D kiln.progress=false --table salted --data "$KILN_DATA" \
    --input "$T/in.tsv" --output "$T/salted" >"$T/job.log" 2>&1 || fail "importtsv: $(tail -3 "$T/job.log")"
"$KILN" load salted "$T/salted" >/dev/null || fail "load salted"

# wide: 24 rows of 64 KiB values (2 MiB of answer in all), for --scan-max-mb 1
"$KILN" create wide --family w >/dev/null || fail "create wide"
mkdir -p "$T/w/w"
python3 -c 'import sys; [sys.stdout.write("w%02d\tw:q\t1\tPut\t%s\n" % (i, "v" * 65536)) for i in range(24)]' |
    "$KILN" hfile write "$T/w/w/p" --family w >/dev/null || fail "hfile wide"
touch "$T/w/_SUCCESS"
"$KILN" load wide "$T/w" >/dev/null || fail "load wide"

# kiln-server LOG ARGS...: start one, print its HTTP port. It runs in a
# command substitution's subshell, so its pid goes to a file the exit trap
# reads (a variable set there would be lost, and the server left running).
serve() {
    local log=$1
    shift
    "$B/bin/kiln-server" --data "$KILN_DATA" --listen 127.0.0.1:0 --threads 2 --cache-mb 32 \
        --poll-ms 50 --read-only "$@" >"$log" 2>&1 &
    echo "$!" >>"$T/server.pids"
    for _ in $(seq 100); do grep -q 'over HTTP on' "$log" && break; sleep 0.05; done
    sed -nE 's/.*over HTTP on .* \(port ([0-9]+)\).*/\1/p' "$log" | head -1
}
stop_servers() {
    local p
    [ -f "$T/server.pids" ] || return 0
    for p in $(cat "$T/server.pids"); do
        kill -TERM "$p" 2>/dev/null
    done
    for p in $(cat "$T/server.pids"); do
        for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
        kill -KILL "$p" 2>/dev/null
    done
}
trap 'stop_servers; rm -rf "$T"' EXIT
for bad in "--max-scanners 0" "--scanner-idle 0" "--scan-max-mb 0" "--max-scanners x"; do
    # shellcheck disable=SC2086
    "$B/bin/kiln-server" --data "$KILN_DATA" $bad >/dev/null 2>&1
    rc=$?
    [ "$rc" -eq 64 ] || fail "kiln-server $bad: exit $rc, want 64"
done
HP=$(serve "$T/log")
[ -n "$HP" ] || fail "server did not start: $(cat "$T/log")"
HP2=$(serve "$T/log2" --max-scanners 2 --scanner-idle 1 --scan-max-mb 1)
[ -n "$HP2" ] || fail "second server did not start: $(cat "$T/log2")"
python3 "$ROOT/tests/serving/scanner_test.py" "http://127.0.0.1:$HP" "$KILN" "$T" "http://127.0.0.1:$HP2"
