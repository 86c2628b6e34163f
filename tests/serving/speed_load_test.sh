#!/usr/bin/env bash
# speed_load_test.sh -- online writes and reads over HTTP while the speed
# layer flushes (a 1 MiB memstore budget), compacts after its flushes, a
# bulk load swaps a new batch version in, and a major compaction and a split
# are asked for through the admin routes: speed_load_test.py counts every
# answer, which must be 200 and whole (no mixed versions, no half writes).
# Then the table's version must show the flushes and the load happened
# under the load, and every written row must read back after a restart.
# Prints "speed_load_test: N passed, N failed"; exits 1 on failure.
set -u
NAME=speed_load_test
. "$(dirname "$0")/lib.sh"

for b in "$KILN" "$SERVER"; do
    [ -x "$b" ] || { bad "$b not built"; finish; }
done
"$KILN" create t --family f:versions=1 >/dev/null || { bad "create t"; finish; }
for i in $(seq 0 199); do
    r=$(printf 'r%04d' "$i")
    printf '%s\tf:a\t5\tPut\tbatch\n%s\tf:b\t5\tPut\tbatch\n' "$r" "$r"
done | load_rows t f p1 || { bad "first load"; finish; }
v0=$("$KILN" describe t | sed -nE 's/^CURRENT VERSION => ([0-9]+).*/\1/p' | head -1)

start_server --threads 2 --cache-mb 32 --memstore-flush-mb 1 ||
    { bad "server did not start: $(cat "$T/server.log")"; finish; }

python3 "$ROOT/tests/serving/speed_load_test.py" "$U" 12 > "$T/py.out" 2>&1 &
PY=$!
sleep 5
# a second batch version swapped in under the load (rows the writer never
# touches, so every row still reads whole)
for i in $(seq 500 599); do
    r=$(printf 'r%04d' "$i")
    printf '%s\tf:a\t6\tPut\tbatch2\n%s\tf:b\t6\tPut\tbatch2\n' "$r" "$r"
done > "$T/rows2"
mkdir -p "$T/job2/f"
"$KILN" hfile write "$T/job2/f/p2" --family f < "$T/rows2" >/dev/null && touch "$T/job2/_SUCCESS"
check "a bulk load under the load" sh -c "'$KILN' load t '$T/job2' --append --wait=60 >/dev/null"
sleep 1
check "a major compaction under the load" sh -c "curl -sf -X POST '$U/t/_admin/compact?major=true' | grep -q version"
check "a split under the load" sh -c "curl -sf -X POST '$U/t/_admin/split?max_bytes=200000' >/dev/null"
wait $PY
cat "$T/py.out" | sed 's/^/    /'
check "every answer 200 and whole" grep -q '^1 passed, 0 failed' "$T/py.out"
v1=$("$KILN" describe t | sed -nE 's/^CURRENT VERSION => ([0-9]+).*/\1/p' | head -1)
check "flushes published versions beside the load ($v0 -> $v1)" test "${v1:-0}" -ge $((v0 + 3))
curl -sf "$U/metrics" > "$T/metrics" || bad "GET /metrics"
metric() { sed -nE "s/^$1 ([0-9.]+)\$/\1/p" "$T/metrics" | head -1; }
check "metrics: online writes counted" test "$(metric 'kiln_online_writes_total\{table="default:t"\}')" -gt 1000
check "metrics: flushes counted" test "$(metric 'kiln_flushes_total\{table="default:t"\}')" -gt 0
check "metrics: the log's group syncs" test "$(metric kiln_wal_syncs_total)" -gt 0
check "metrics: read point at the last write" test "$(metric 'kiln_read_point\{table="default:t"\}')" = "$(metric 'kiln_write_sequence\{table="default:t"\}')"
check "the loaded rows serve" sh -c "curl -sf -H 'Accept: application/octet-stream' '$U/t/r0550/f:a' | grep -qx batch2"
stop_server
start_server --threads 2 --cache-mb 32 || { bad "restart: $(cat "$T/server.log")"; finish; }
check "rows read whole after a restart" sh -c "python3 '$ROOT/tests/serving/speed_load_test.py' '$U' 1 | grep -q '^1 passed, 0 failed'"
stop_server
finish
