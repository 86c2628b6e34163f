# lib.sh -- what the view jobs' end-to-end tests share (sourced, not run):
# counting checks, running a view job under run_job.sh, comparing two outputs
# file by file, dumping an output's cells, a kiln-server on a free port, and
# reading scans through `kiln` and HTTP as `ROW TAB COLUMN TAB TS TAB VALUE`
# lines (views_check.py json) to compare with the brute-force answers.
#
# The caller sets VIEW and calls views_begin; views_finish prints the
# "N passed, N failed" line and exits.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
export BUILD
. "$ROOT/tests/support/job_sanitizers.sh"
export OMPI_MCA_mca_component_disable_dlclose=1
KILN=$ROOT/$BUILD/bin/kiln
GEN=$ROOT/$BUILD/bin/kiln-gen
SERVER=$ROOT/$BUILD/bin/kiln-server
CHECK="python3 $ROOT/tests/views/views_check.py"
# The job's clock, fixed so that outputs compare byte for byte.
JOB_TIME=1717200000000

pass=0
fail=0
SPID=
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
    fail=$((fail + 1))
    echo "FAIL $1"
    if [ -n "${2:-}" ] && [ -s "$2" ]; then sed 's/^/    /' "$2" | tail -20; fi
}
# check NAME CMD...: CMD's exit status decides; its stderr (and $work/last.err) shown on failure
check() {
    local name=$1
    shift
    if "$@" 2>>"$work/last.err"; then ok "$name"; else bad "$name" "$work/last.err"; fi
    : >"$work/last.err"
}
# same NAME EXPECTED_FILE GOT_FILE: equal and (unless ALLOW_EMPTY=1) not empty
same() {
    if [ "${ALLOW_EMPTY:-0}" != 1 ] && [ ! -s "$2" ]; then
        bad "$1 (the expected answer is empty: a useless check)"
    elif cmp -s "$2" "$3"; then
        ok "$1 ($(wc -l <"$2") lines)"
    else
        bad "$1"
        diff "$2" "$3" | head -10 | sed 's/^/    /'
    fi
}

views_cleanup() {
    if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then
        kill -TERM "$SPID" 2>/dev/null
        wait "$SPID" 2>/dev/null
    fi
    rm -rf "$work"
}

views_begin() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-$VIEW-test.XXXXXX")
    trap views_cleanup EXIT
    : >"$work/last.err"
    export KILN_DATA=$work/data
    for b in "$KILN" "$GEN" "$SERVER" "$ROOT/$BUILD/bin/kiln-mr"; do
        [ -x "$b" ] || { bad "$b is not built (make)"; views_finish; }
    done
    for tool in python3 curl; do
        command -v $tool >/dev/null || { bad "$tool is missing"; views_finish; }
    done
}

views_finish() {
    echo
    echo "${VIEW}_test: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit $?
}

# run_view NP OUT ARGS...: the view job on NP ranks; exit status in $rc,
# stderr in $work/job.err
run_view() {
    local np=$1 out=$2
    shift 2
    ./run_job.sh -n "$np" --timeout 120 "$VIEW" --output "$out" --data "$KILN_DATA" \
        -D kiln.progress=false -D kiln.job.time=$JOB_TIME "$@" >"$work/job.out" 2>"$work/job.err"
    rc=$?
    cat "$work/job.err" >>"$work/last.err"
}

# The files (relative paths, links included) of an output, and whether two
# outputs hold the same HFiles byte for byte.
same_output() {
    local a=$1 b=$2
    [ "$(cd "$a" && find . ! -name _job.json | sort)" = "$(cd "$b" && find . ! -name _job.json | sort)" ] || return 1
    local f
    for f in $(cd "$a" && find . -type f ! -name '_*'); do
        cmp -s "$a/$f" "$b/$f" || { echo "$f differs" >&2; return 1; }
    done
}

# dump_cells DIR: every cell of the HFiles under DIR/<family>/, sorted
dump_cells() {
    local f
    for f in "$1"/*/*; do
        case $(basename "$f") in _*) continue ;; esac
        "$KILN" hfile dump "$f" || echo "DUMP FAILED: $f"
    done | LC_ALL=C sort
}

# counters_of OUTPUT GROUP: the group's counters as NAME=VALUE lines, sorted
counters_of() {
    python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["counters"].get(sys.argv[2], {})
for k in sorted(c): print("%s=%d" % (k, c[k]))' "$1/_job.json" "$2"
}

# start_server: kiln-server on the data directory, on a free port; sets U
start_server() {
    local log=$work/server.log
    "$SERVER" --data "$KILN_DATA" --listen 127.0.0.1:0 --threads 2 --cache-mb 32 \
        >"$log" 2>&1 &
    SPID=$!
    local port=
    for _ in $(seq 200); do
        port=$(sed -nE 's/.*over HTTP on .* \(port ([0-9]+)\).*/\1/p' "$log" | head -1)
        [ -n "$port" ] && break
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$port" ]; then
        bad "kiln-server did not start" "$log"
        return 1
    fi
    U=http://127.0.0.1:$port
    HOSTPORT=127.0.0.1:$port
}

stop_server() {
    kill -TERM "$SPID" 2>/dev/null
    wait "$SPID"
    local src=$?
    SPID=
    return $src
}

# kiln_lines ARGS...: `kiln ARGS... --json` as cell lines
kiln_lines() {
    "$KILN" "$@" --json | $CHECK json
}

# http_lines PATH: one GET as cell lines
http_lines() {
    curl -sf "$U/$1" | $CHECK json
}

# http_page TABLE QUERY LIMIT K: the K-th page of LIMIT rows of a scan, each
# page started from the previous one's next_startrow (Kiln's paged=true)
http_page() {
    local table=$1 q=$2 limit=$3 k=$4 start= p
    for ((p = 1; p <= k; p++)); do
        curl -sf "$U/$table/*?$q&paged=true&limit=$limit${start:+&startrow=$start}" >"$work/page.json" || return 1
        [ "$p" = "$k" ] && break
        local nxt
        nxt=$($CHECK next <"$work/page.json")
        [ -n "$nxt" ] || { : >"$work/page.json"; break; }
        start=$($CHECK pct64 "$nxt")
    done
    $CHECK json <"$work/page.json"
}

# kiln_page TABLE PREFIX LIMIT K [ARGS...]: the same through `kiln scan`
# (with ARGS, e.g. --columns c), each page started at the last row seen + \x00
kiln_page() {
    local table=$1 prefix=$2 limit=$3 k=$4 start=$2 p
    shift 4
    for ((p = 1; p <= k; p++)); do
        "$KILN" scan "$table" --prefix "$prefix" --start "$start" --limit "$limit" "$@" --json \
            >"$work/kpage.json" || return 1
        [ "$p" = "$k" ] && break
        start=$($CHECK lastrow <"$work/kpage.json")
        [ -n "$start" ] || { echo '{"Row":[]}' >"$work/kpage.json"; break; }
    done
    $CHECK json <"$work/kpage.json"
}

# be_key WIDTH N...: the numbers as WIDTH-byte big-endian integers, joined,
# in printable form (\xNN outside printable ASCII and for the backslash)
be_key() {
    local w=$1 out= n hex i b
    shift
    for n in "$@"; do
        printf -v hex "%0$((w * 2))X" "$n"
        for ((i = 0; i < ${#hex}; i += 2)); do
            b=$((16#${hex:i:2}))
            if ((b >= 32 && b < 127 && b != 92)); then
                printf -v b "\\x${hex:i:2}"
                out+=$b
            else
                out+="\\x${hex:i:2}"
            fi
        done
    done
    printf '%s\n' "$out"
}

# pct KEY: a printable-form key percent-encoded for a URL
pct() {
    local s=$1 out= c i=0
    while ((i < ${#s})); do
        c=${s:i:1}
        if [ "$c" = '\' ] && [ "${s:i+1:1}" = x ]; then
            out+="%${s:i+2:2}"
            i=$((i + 4))
            continue
        fi
        case $c in
        [A-Za-z0-9._~-]) out+=$c ;;
        *) printf -v c '%%%02X' "'$c"; out+=$c ;;
        esac
        i=$((i + 1))
    done
    printf '%s\n' "$out"
}
