#!/usr/bin/env bash
# kiln_gateway_test.sh -- `kiln --server` against a fake HBase REST gateway
# (tests/cli/fake_hbase_gateway.py: python3's http.server, HBase's JSON as
# HBase writes it, every body chunked, the scanner protocol with rows split
# across batches), so that nothing in the test is shared with kiln-server.
# The same cells are loaded into a data directory with `kiln hfile write` and
# `kiln load`; get, multiget, exists, scan and count through the gateway must
# print the same bytes and exit with the same status as embedded `kiln`.
# Then broken answers (invalid JSON, wrong base64, XML, a truncated chunked
# body, an absurd chunk size), unreachable and bad addresses, and HTTPS with a
# certificate made here. Prints "N passed, N failed"; exits 1 on failure.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
KILN=$BUILD/bin/kiln
FAKE=$ROOT/tests/cli/fake_hbase_gateway.py
T=$(mktemp -d)
D=$T/data
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do
        kill "$p" 2>/dev/null
    done
    rm -rf "$T"
}
trap cleanup EXIT
export KILN_DATA=$D
unset KILN_CA_FILE KILN_INSECURE_TLS

. "$(dirname "${BASH_SOURCE[0]}")/../support/checks.sh"
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}
if [ ! -x "$KILN" ]; then
    bad "$KILN not built"
    finish
fi
if ! command -v python3 >/dev/null; then
    bad "python3 is missing (scripts/deps.sh installs it)"
    finish
fi

# ---------------------------------------------------------------- the cells
# In key order per family file (what `kiln hfile write` takes).
F=$T/f.tsv
G=$T/g.tsv
{
    printf 'a/b,c:d\tf:name\t100\tPut\tslashes\n'
    printf 'alice\tf:city\t100\tPut\tParis\n'
    printf 'alice\tf:name\t100\tPut\tAlice\n'
    printf 'alice\tf:name\t90\tPut\tAl\n'
    printf 'alice\tf:name\t80\tPut\tA\n'
    printf 'bob\tf:name\t100\tPut\tBob\n'
    printf 'h\\x01\\xFF\tf:name\t100\tPut\tbin\\x00\\xFF\\x5C\n'
    for i in $(seq 0 99); do printf 'r%04d\tf:q\t5\tPut\tv-%d\n' "$i" "$i"; done
    printf 'sp ace\tf:name\t100\tPut\tspace\n'
    for i in $(seq 0 24); do printf 'wide\tf:c%02d\t7\tPut\tw%d\n' "$i" "$i"; done
} >"$F"
printf 'bob\tg:visits\t100\tPut\t7\n' >"$G"
cat "$F" "$G" >"$T/all.tsv"

"$KILN" create users --family f:versions=3 --family g --split m >/dev/null || bad "create users"
J=$T/job
mkdir -p "$J/f" "$J/g"
"$KILN" hfile write "$J/f/part-0" --family f --input "$F" >/dev/null || bad "hfile write f"
"$KILN" hfile write "$J/g/part-0" --family g --input "$G" >/dev/null || bad "hfile write g"
touch "$J/_SUCCESS"
expect_rc "load" 0 "$KILN" load users "$J"

for c in multiget exists; do
    expect_rc "$c --help" 0 "$KILN" "$c" --help
    expect_grep "$c --help text" "$T/out" "^Usage: kiln $c"
done
expect_rc "multiget without rows" 64 "$KILN" multiget users
expect_rc "exists without a table" 64 "$KILN" exists

# ---------------------------------------------------------------- the gateway
# start_fake NAME ARGS...: start a gateway, set PORT
start_fake() {
    local name=$1
    shift
    python3 "$FAKE" --data "$T/all.tsv" --table users --family f --family g \
        --port-file "$T/$name.port" --log "$T/$name.log" "$@" >"$T/$name.out" 2>&1 &
    PIDS+=($!)
    PORT=
    for _ in $(seq 200); do
        [ -s "$T/$name.port" ] && PORT=$(cat "$T/$name.port") && break
        sleep 0.05
    done
    if [ -z "$PORT" ]; then
        bad "fake gateway $name did not start: $(cat "$T/$name.out")"
        finish
    fi
}
# Four cells a batch at most: rows longer than that come split.
start_fake plain --max-batch 4
S=127.0.0.1:$PORT
LOG=$T/plain.log

same() {
    local name=$1
    shift
    "$KILN" "$@" >"$T/emb.out" 2>"$T/emb.err"
    local erc=$?
    "$KILN" --server "$S" "$@" >"$T/srv.out" 2>"$T/srv.err"
    local src=$?
    if [ "$erc" = "$src" ] && cmp -s "$T/emb.out" "$T/srv.out"; then
        ok
    else
        bad "gateway $name: exit $src vs $erc; $(diff "$T/emb.out" "$T/srv.out" | head -5) $(head -c 300 "$T/srv.err")"
    fi
}

# ---------------------------------------------------------------- get
same "get" get users alice
same "get versions" get users alice --versions 3
same "get column" get users alice f:name
same "get column json" get users alice f:name --versions 2 --json
same "get binary key and value" get users 'h\x01\xFF'
same "get reserved bytes" get users 'a/b,c:d'
same "get space" get users 'sp ace'
same "get family" get users bob g
same "get time range (in the path)" get users alice f:name --versions 3 --time-range 85,95
same "get wide row" get users wide
same "get absent" get users nobody
same "get missing table" get nope x
expect_grep "missing table message" "$T/srv.err" 'table nope: not found'

# ---------------------------------------------------------------- multiget
same "multiget" multiget users alice bob nobody 'h\x01\xFF' wide
same "multiget json" multiget users bob alice --json
same "multiget versions" multiget users alice bob --versions 3
same "multiget columns (one get each)" multiget users alice bob wide --columns f:name,g
same "multiget none" multiget users nobody nothing
same "multiget missing table" multiget nope a
run "$KILN" --server "$S" multiget users alice bob
expect_eq "multiget output" "$(cat "$T/out")" "$(printf '%s\n' \
    'ROW                             COLUMN+CELL' \
    ' alice                          column=f:city, timestamp=100, value=Paris' \
    ' alice                          column=f:name, timestamp=100, value=Alice' \
    ' bob                            column=f:name, timestamp=100, value=Bob' \
    ' bob                            column=g:visits, timestamp=100, value=7' \
    '2 row(s)')"
expect_grep "multiget route" "$LOG" '^GET /users/multiget\?row=alice&row=bob$'

# ---------------------------------------------------------------- exists
same "exists" exists users
same "exists not" exists nope
expect_eq "exists text" "$(cat "$T/srv.out")" "Table nope does not exist"
expect_rc "exists rc" 0 "$KILN" --server "$S" exists users
expect_eq "exists yes text" "$(cat "$T/out")" "Table users does exist"
expect_grep "exists route" "$LOG" '^GET /users/exists$'

# ---------------------------------------------------------------- scan
: >"$LOG"
curl -s "http://$S/_fake/connections" >/dev/null
"$KILN" --server "$S" scan users >/dev/null
run curl -s "http://$S/_fake/connections"
expect_eq "a scan of 30 batches keeps one connection alive" "$(cat "$T/out")" 1
same "scan" scan users
expect_grep "scanner created" "$LOG" '^POST /users/scanner$'
nget=$(grep -c '^GET /users/scanner/' "$LOG")
if [ "$nget" -gt 30 ]; then ok; else bad "full scan read $nget batches, want > 30 (4 cells each)"; fi
expect_grep "scanner deleted" "$LOG" '^DELETE /users/scanner/'
same "scan json" scan users --json
same "scan bounds" scan users --start b --stop r0050
same "scan prefix" scan users --prefix r00
same "scan binary prefix" scan users --prefix 'h\x01'
same "scan limit" scan users --limit 7
same "scan limit in a split row" scan users --start wide --limit 1
same "scan columns" scan users --columns g
same "scan column" scan users --columns f:name
same "scan versions" scan users --versions 3 --stop b
same "scan time range" scan users --versions 3 --time-range 85,101 --stop b
same "scan missing table" scan nope
run curl -s "http://$S/_fake/scanners"
expect_eq "every scanner deleted" "$(cat "$T/out")" 0

# ---------------------------------------------------------------- count, list, describe
same "count" count users
same "count prefix" count users --prefix r00
expect_grep "count by scanner" "$LOG" '^POST /users/scanner$'
expect_rc "list" 0 "$KILN" --server "$S" list
expect_grep "list names the table (default namespace)" "$T/out" '^default:users$'
expect_rc "describe" 0 "$KILN" --server "$S" describe users
expect_grep "describe families" "$T/out" "f"

# ---------------------------------------------------------------- broken answers
expect_rc "invalid JSON" 65 "$KILN" --server "$S" get bad-json r1
expect_grep "invalid JSON message" "$T/err" "127\.0\.0\.1:$PORT: bad JSON in answer"
expect_rc "wrong base64" 65 "$KILN" --server "$S" get bad-base64 r1
expect_grep "wrong base64 message" "$T/err" 'key is not base64'
expect_rc "XML answer" 65 "$KILN" --server "$S" get xml r1
expect_grep "XML answer message" "$T/err" 'answer is text/xml, not JSON'
expect_rc "truncated chunked body" 74 "$KILN" --server "$S" get truncated r1
expect_grep "truncated message names the server" "$T/err" "127\.0\.0\.1:$PORT: "
expect_rc "absurd chunk size" 74 "$KILN" --server "$S" get huge-chunk r1
expect_rc "unreachable" 74 "$KILN" --server 127.0.0.1:1 get users alice
expect_grep "unreachable message" "$T/err" '127\.0\.0\.1:1: '
expect_rc "bad address: scheme" 64 "$KILN" --server ftp://127.0.0.1:1 get users alice
expect_rc "bad address: no port" 64 "$KILN" --server 127.0.0.1 get users alice
expect_rc "bad address: port" 64 "$KILN" --server 127.0.0.1:99999 get users alice
expect_grep "bad address message" "$T/err" "bad server address '127\.0\.0\.1:99999'"
expect_rc "URL form" 0 "$KILN" --server "http://$S/" get users alice

# ---------------------------------------------------------------- HTTPS
if ! command -v openssl >/dev/null; then
    bad "openssl is missing (needed to make the test certificate)"
else
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
        -addext 'subjectAltName=IP:127.0.0.1' -keyout "$T/key.pem" -out "$T/cert.pem" \
        >/dev/null 2>&1 || bad "openssl could not make a certificate"
    start_fake tls --tls "$T/cert.pem" "$T/key.pem"
    S=https://127.0.0.1:$PORT
    export KILN_CA_FILE=$T/cert.pem
    same "https get" get users alice
    same "https scan" scan users --prefix r001
    unset KILN_CA_FILE
    expect_rc "https unknown certificate" 74 "$KILN" --server "$S" get users alice
    expect_grep "certificate message" "$T/err" "127\.0\.0\.1:$PORT: .*(certificate|SSL)"
    KILN_INSECURE_TLS=1 expect_rc "https without verification" 0 "$KILN" --server "$S" get users alice
fi
finish
