#!/usr/bin/env bash
# write_test.sh -- online writes end to end: kiln-server's HBase REST writes
# checked by write_test.py (urllib, json, xml.etree and protoc's protobuf
# classes: nothing of Kiln's), the Redis writes through redis-cli, `kiln
# put|delete|incr` embedded and with --server, read back with `kiln get`
# (embedded and --server) and curl; a second writer refused while the server
# holds the log; writes surviving a restart (log replay); and a --read-only
# server refusing every write (403, -READONLY).
# Prints "write_test: N passed, N failed"; exits 1 on failure.
set -u
NAME=write_test
. "$(dirname "$0")/lib.sh"

for b in "$KILN" "$SERVER"; do
    [ -x "$b" ] || { bad "$b not built"; finish; }
done
if ! command -v protoc >/dev/null || ! command -v redis-cli >/dev/null ||
    ! python3 -c 'import google.protobuf' 2>/dev/null; then
    "$ROOT/scripts/deps.sh" >/dev/null 2>&1
fi
for tool in protoc redis-cli curl; do
    command -v $tool >/dev/null || { bad "$tool missing (scripts/deps.sh installs it)"; finish; }
done
protoc -I"$ROOT/tests/serving" --python_out="$T" "$ROOT/tests/serving/hbase_rest.proto" ||
    { bad "protoc"; finish; }

"$KILN" create t --family f:versions=3 --family g >/dev/null || { bad "create t"; finish; }
"$KILN" create kv --family v >/dev/null || { bad "create kv"; finish; }
printf 'loaded\tf:q\t5\tPut\tbatch\nredisrow\tf:q\t5\tPut\tr\n' | load_rows t f p || { bad "load t"; finish; }

start_server --resp-listen 127.0.0.1:0 --threads 2 --cache-mb 32 ||
    { bad "server did not start: $(cat "$T/server.log")"; finish; }

# ---- REST, through stock decoders
PY=python3; python3 -c "import google.protobuf" 2>/dev/null || PY=/usr/bin/python3
"$PY" "$ROOT/tests/serving/write_test.py" "$U" "$T" > "$T/py.out" 2>&1
sed -n 's/^FAIL: /FAIL write_test.py: /p' "$T/py.out"
read -r p f < <(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p' "$T/py.out" | tail -1)
if [ -z "${p:-}" ]; then bad "write_test.py did not finish: $(tail -5 "$T/py.out")"; else
    passed=$((passed + p)); failed=$((failed + f)); fi

# ---- `kiln get` sees REST writes, embedded (the log replayed) and --server
check "kiln get --server sees a REST write" \
    sh -c "'$KILN' --server '$U' get t w1 f:a | grep -q 'value=hello'"
curl -s -o /dev/null -X PUT -H 'Content-Type: application/octet-stream' --data-binary 'curl!' "$U/t/c9/f:z"
check "curl PUT then curl GET" test "$(curl -s -H 'Accept: application/octet-stream' "$U/t/c9/f:z")" = 'curl!'

# ---- Redis
R() { redis-cli -h 127.0.0.1 -p "$RP" "$@"; }
check "SET" test "$(R set kv/k1 hello)" = OK
check "GET after SET" test "$(R get kv/k1)" = hello
check "SET EX refused" sh -c "redis-cli -h 127.0.0.1 -p $RP set kv/k2 x EX 10 | grep -q '^ERR kiln does not support SET options'"
check "INCRBY from nothing" test "$(R incrby kv/n 5)" = 5
check "INCR" test "$(R incr kv/n)" = 6
check "DECRBY" test "$(R decrby kv/n 10)" = -4
check "GET a counter: a decimal string" test "$(R get kv/n)" = -4
check "INCR of a non-integer: Redis's error" test "$(R incr kv/k1)" = "ERR value is not an integer or out of range"
check "INCRBY by a non-integer" test "$(R incrby kv/n x)" = "ERR value is not an integer or out of range"
check "APPEND" test "$(R append kv/k1 ' world')" = 11
check "DEL counts existing keys" test "$(R del kv/k1 kv/n kv/none)" = 2
check "GET after DEL is nil" test -z "$(R get kv/k1)"
check "GET of a loaded row (its first cell)" test "$(R get t/redisrow)" = r
check "DEL of a loaded row counts it" test "$(R del t/redisrow)" = 1
check "GET after DEL of a loaded row is nil" test -z "$(R get t/redisrow)"
check "HSET" test "$(R hset t/h1 a 1 g:b 2)" = 2
check "HSET again counts new fields" test "$(R hset t/h1 a 3 c 4)" = 1
check "HGET family:qualifier" test "$(R hget t/h1 g:b)" = 2
check "HGET qualifier of the key's family" test "$(R hget t/h1 a)" = 3
check "HGETALL" test "$(R hgetall t/h1 | tr '\n' ' ')" = "f:a 3 f:c 4 g:b 2 "
check "HDEL" test "$(R hdel t/h1 a nope)" = 1
check "HGET after HDEL nil" test -z "$(R hget t/h1 a)"
check "REST sees a Redis SET" sh -c "redis-cli -h 127.0.0.1 -p $RP set kv/r1 fromredis >/dev/null &&
    test \"\$(curl -s -H 'Accept: application/octet-stream' '$U/kv/r1/v:')\" = fromredis"
check "HSET field of no family: a qualifier of the key's" sh -c "redis-cli -h 127.0.0.1 -p $RP hset t/h2 zz:a 1 >/dev/null &&
    test \"\$(redis-cli -h 127.0.0.1 -p $RP hget t/h2 f:zz:a)\" = 1"

# ---- kiln put / delete / incr through the server
check "kiln put --server" "$KILN" --server "$U" put t kp1 'f:q' 'v\x00x' --ts 42
check "kiln put --server reads back" sh -c "'$KILN' --server '$U' get t kp1 | grep -q 'timestamp=42, value=v\\\\x00x'"
check "kiln incr --server" test "$("$KILN" --server "$U" incr t kc f:n 7)" = 7
check "kiln incr --server again, negative" test "$("$KILN" --server "$U" incr t kc f:n -2)" = 5
check "kiln delete --server column" "$KILN" --server "$U" delete t kp1 f:q
check "kiln delete --server: gone" sh -c "'$KILN' --server '$U' get t kp1 | grep -q '^0 row'"
"$KILN" --server "$U" put t kp2 f:q x --durability ASYNC_WAL >/dev/null
check "kiln delete --server row" "$KILN" --server "$U" delete t kp2
check "kiln put --server to an unknown table fails (66)" sh -c "'$KILN' --server '$U' put nope r f:q x 2>/dev/null; test \$? -eq 66"
check "kiln put --server to an unknown family fails (64)" sh -c "'$KILN' --server '$U' put t r zz:q x 2>/dev/null; test \$? -eq 64"
check "kiln put embedded-style error names the family" sh -c "'$KILN' --server '$U' put t r zz:q x 2>&1 | grep -q zz"

# ---- a second writer while the server holds the log
"$KILN" put t local1 f:q x > "$T/out" 2> "$T/err"
rc=$?
check "kiln put embedded while a server runs: 75" test "$rc" -eq 75
check "the error suggests --server" grep -q -- '--server' "$T/err"
"$SERVER" --data "$KILN_DATA" --listen 127.0.0.1:0 >/dev/null 2>"$T/err2"
rc=$?
check "a second kiln-server on the same data directory exits 75, no abort" test "$rc" -eq 75

# ---- restart: the writes are replayed from the log
stop_server
start_server --resp-listen 127.0.0.1:0 --threads 2 || { bad "restart"; finish; }
check "a REST write survives a restart" test "$(curl -s -H 'Accept: application/octet-stream' "$U/t/w1/f:a")" = hello
check "a Redis write survives a restart" test "$(R get kv/r1)" = fromredis
stop_server

# ---- embedded writes and reads (no server)
check "kiln put embedded" "$KILN" put t e1 f:q embedded
check "kiln get embedded sees it" sh -c "'$KILN' get t e1 | grep -q 'value=embedded'"
check "kiln get embedded sees REST writes" sh -c "'$KILN' get t w1 f:a | grep -q 'value=hello'"
check "kiln incr embedded" test "$("$KILN" incr t ec f:n)" = 1
check "kiln incr embedded by 41" test "$("$KILN" incr t ec f:n 41)" = 42
check "kiln delete embedded family" "$KILN" delete t e1 f
check "kiln get embedded after delete" sh -c "'$KILN' get t e1 | grep -q '^0 row'"
check "kiln put --help" sh -c "'$KILN' put --help | grep -q 'Usage: kiln put TABLE ROW FAMILY:QUALIFIER VALUE'"
check "kiln delete --help" sh -c "'$KILN' delete --help | grep -q 'Usage: kiln delete'"
check "kiln incr --help" sh -c "'$KILN' incr --help | grep -q 'Usage: kiln incr'"
check "kiln put usage error (64)" sh -c "'$KILN' put t r 2>/dev/null; test \$? -eq 64"

# ---- a read-only server refuses writes, and serves the embedded ones
start_server --resp-listen 127.0.0.1:0 --read-only || { bad "read-only start"; finish; }
check "read-only: PUT 403" test "$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H 'Content-Type: application/octet-stream' --data x "$U/t/r/f:q")" = 403
check "read-only: DELETE 403" test "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$U/t/w1")" = 403
check "read-only: SET -READONLY" sh -c "redis-cli -h 127.0.0.1 -p $RP set kv/x y | grep -q '^READONLY'"
check "read-only: HGET still reads" test "$(R hget t/h1 c)" = 4
check "read-only: the log is not taken (kiln put works)" "$KILN" put t ro1 f:q y
stop_server
finish
