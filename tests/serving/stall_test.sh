#!/usr/bin/env bash
# stall_test.sh -- clients that used to hold kiln-server: a header trickled
# one line every half second (slowloris) is cut off by --request-timeout
# with a 408, and a Redis-protocol command trickled a byte every half
# second is cut off by it too, with an -ERR saying so; one client address cannot hold more
# than --max-conns-per-client connections, over HTTP (503) or the Redis
# protocol (-ERR); out of file descriptors, the accept
# loop refuses instead of spinning (CPU and log lines measured); SIGHUP
# reloads instead of killing the server. Each time a well-behaved client
# is still answered. Prints "N passed, N failed".
set -u
NAME=stall_test
# shellcheck source=tests/serving/lib.sh
source "$(dirname "$0")/lib.sh"

"$KILN" create t --family f > /dev/null || { bad "kiln create"; finish; }
printf 'r1\tf:q\t5\tPut\tv1\n' | load_rows t f p || { bad "kiln load"; finish; }
SRV=(--resp-listen 127.0.0.1:0 --threads 2 --cache-mb 16)
well_behaved() { curl -sf -m 5 "http://127.0.0.1:$HP/t/r1" | grep -q '"Row"'; }

cat > "$T/client.py" <<'EOF'
import os, socket, sys, time

port = int(sys.argv[2])

def trickle():
    # One header line every 0.5 s for up to 12 s; report when the server ended it.
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(0.5)
    t0 = time.time()
    s.sendall(b"GET /t/r1 HTTP/1.1\r\nHost: x\r\n")
    got = b""
    while time.time() - t0 < 12:
        try:
            s.sendall(b"X-Slow: 1\r\n")
        except OSError:
            break
        try:
            data = s.recv(4096)
            if not data:
                break
            got += data
        except socket.timeout:
            pass
        except OSError:
            break
    print("%.1f %s" % (time.time() - t0, got.split(b"\r\n")[0].decode() or "-"))

def resp_trickle():
    # A GET one byte every 0.5 s for up to 12 s; report when and how it ended.
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(0.5)
    t0 = time.time()
    got = b""
    for b in b"*2\r\n$3\r\nGET\r\n$2\r\nr1\r\n" * 4:
        if time.time() - t0 > 12:
            break
        try:
            s.sendall(bytes([b]))
        except OSError:
            got = got or b"reset"
            break
        try:
            data = s.recv(4096)
            if not data:
                got = got or b"closed"
                break
            got += data
        except socket.timeout:
            pass
        except OSError:
            got = got or b"reset"
            break
    print("%.1f %s" % (time.time() - t0, got.split(b"\r\n")[0].decode() or "-"))

def hold(n, request):
    # Open n connections, then one more; print the first line it answers to request.
    keep = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
    time.sleep(0.3)
    extra = socket.create_connection(("127.0.0.1", port))
    extra.settimeout(3)
    extra.sendall(request)
    try:
        line = extra.recv(4096).split(b"\r\n")[0].decode() or "closed"
    except OSError as e:
        line = "error " + str(e)
    print(line)
    for s in keep:
        s.close()

def flood(n, pid, seconds):
    # Open n connections (more than the server has descriptors for) and
    # hold them; report the server's CPU seconds over the hold.
    def cpu():
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    keep = []
    for _ in range(n):
        try:
            keep.append(socket.create_connection(("127.0.0.1", port), timeout=2))
        except OSError:
            pass
    c0 = cpu()
    time.sleep(seconds)
    print("%.2f" % (cpu() - c0))
    for s in keep:
        s.close()

{"trickle": lambda: trickle(),
 "resp_trickle": lambda: resp_trickle(),
 "hold": lambda: hold(int(sys.argv[3]), b"GET /t/r1 HTTP/1.1\r\nHost: x\r\n\r\n"),
 "resp_hold": lambda: hold(int(sys.argv[3]), b"PING\r\n"),
 "flood": lambda: flood(int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))}[sys.argv[1]]()
EOF

# ---------------------------------------------------------------- slowloris
start_server "${SRV[@]}" --request-timeout 2 --idle-timeout 60 || { bad "server did not start"; finish; }
read -r secs line < <(python3 "$T/client.py" trickle "$HP")
check "a trickled header is cut off by --request-timeout 2 (after ${secs:-?} s: ${line:-?})" \
    awk -v s="${secs:-99}" 'BEGIN { exit !(s < 5) }'
check "a trickled header gets a 408" test "${line:-}" = "HTTP/1.1 408 Request Timeout"
check "a well-behaved client is answered beside it" well_behaved
read -r secs line < <(python3 "$T/client.py" resp_trickle "$RP")
check "a Redis-protocol command trickled a byte at a time is cut off by --request-timeout 2 (after ${secs:-?} s: ${line:-?})" \
    bash -c "awk -v s='${secs:-99}' 'BEGIN { exit !(s < 5) }' && [ '${line:-}' = '-ERR Protocol error: command not completed within the request timeout' ]"
check "a well-behaved Redis client is answered beside it" test "$(redis-cli -p "$RP" GET r1)" = v1

# ---------------------------------------------------------------- per-client limit
stop_server
start_server "${SRV[@]}" --max-conns-per-client 4 || { bad "server did not start"; finish; }
check "a fifth connection from one address gets a 503" \
    test "$(python3 "$T/client.py" hold "$HP" 4)" = "HTTP/1.1 503 Service Unavailable"
check "three open beside it leave room for a fourth" \
    test "$(python3 "$T/client.py" hold "$HP" 3)" = "HTTP/1.1 200 OK"
sleep 0.3
check "after the others close, the client is served" well_behaved
check "a fifth Redis-protocol connection from one address gets -ERR" \
    test "$(python3 "$T/client.py" resp_hold "$RP" 4)" = "-ERR max number of clients reached"
check "three Redis-protocol connections open beside it leave room for a fourth" \
    test "$(python3 "$T/client.py" resp_hold "$RP" 3)" = "+PONG"
sleep 0.3
check "after the others close, a Redis client is served" test "$(redis-cli -p "$RP" GET r1)" = v1

# ---------------------------------------------------------------- out of descriptors
stop_server
start_server --nofile 48 "${SRV[@]}" || { bad "server did not start under ulimit -n 48"; finish; }
cpu=$(python3 "$T/client.py" flood "$HP" 120 "$SPID" 3)
warns=$(grep -c 'accept: ' "$T/server.log")
check "out of descriptors: ${cpu:-?} s of CPU over 3 s held (no spin)" \
    awk -v c="${cpu:-99}" 'BEGIN { exit !(c < 0.6) }'
check "out of descriptors: $warns warning lines, at most one a second" test "$warns" -ge 1 -a "$warns" -le 5
sleep 0.5
check "out of descriptors: served again once the flood closed" well_behaved

# ---------------------------------------------------------------- SIGHUP
kill -HUP "$SPID"
sleep 0.5
check "SIGHUP: the server is still running" kill -0 "$SPID"
check "SIGHUP: logged as a reload" grep -q 'SIGHUP: checking the data directory' "$T/server.log"
check "SIGHUP: still answering" well_behaved
finish
