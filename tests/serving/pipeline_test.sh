#!/usr/bin/env bash
# pipeline_test.sh -- pipelined requests whose answers overflow the output
# high-water mark are all answered: six 10,000-row HTTP scans sent in one
# write (more than 4 MiB of answers), and 4,000 pipelined RESP GETs (about
# 9 MB), read by a client that reads as fast as it can. Each answer is
# checked for completeness (Content-Length bodies, the RESP bulk count) by
# a client that shares no code with the server; and an MGET or HTTP
# multiget over --max-reply-bytes is refused. Under 500,000 pipelined GETs
# the first server busy-polls (--busy-poll-us) and counts it in /metrics;
# the second, with --busy-poll-us 0, does not. Prints
# "N passed, N failed".
set -u
NAME=pipeline_test
# shellcheck source=tests/serving/lib.sh
source "$(dirname "$0")/lib.sh"

"$KILN" create big --family f > /dev/null || { bad "kiln create"; finish; }
awk 'BEGIN { v = sprintf("%02000d", 7)
  for (i = 0; i < 30000; i++) printf "r%06d\tf:q\t5\tPut\t%s\n", i, v }' |
  load_rows big f p || { bad "kiln hfile write and load"; finish; }

if ! start_server --resp-listen 127.0.0.1:0 --threads 2 --cache-mb 64 --resp-column 'big=f:q' \
    --busy-poll-us 200; then
    bad "server did not start: $(cat "$T/server.log")"
    finish
fi

cat > "$T/client.py" <<'EOF'
import socket, sys, time

def http(port, n, path):
    s = socket.create_connection(("127.0.0.1", port))
    req = ("GET %s HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n" % path).encode()
    s.sendall(req * n)
    s.settimeout(20)
    buf = b""
    answers = []
    deadline = time.time() + 30
    while len(answers) < n and time.time() < deadline:
        head_end = buf.find(b"\r\n\r\n")
        if head_end >= 0:
            head = buf[:head_end].decode("latin-1").split("\r\n")
            length = next((int(h.split(":", 1)[1]) for h in head[1:]
                           if h.lower().startswith("content-length:")), 0)
            if len(buf) >= head_end + 4 + length:
                answers.append((head[0], length))
                buf = buf[head_end + 4 + length:]
                continue
        try:
            got = s.recv(1 << 20)
        except socket.timeout:
            break
        if not got:
            break
        buf += got
    return answers

def resp(port, n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"".join(b"GET r%06d\r\n" % i for i in range(n)))
    s.settimeout(20)
    buf = b""
    got_n = 0
    pos = 0
    deadline = time.time() + 30
    while got_n < n and time.time() < deadline:
        while got_n < n:
            nl = buf.find(b"\r\n", pos)
            if nl < 0 or buf[pos:pos + 1] != b"$":
                break
            size = int(buf[pos + 1:nl])
            if len(buf) < nl + 2 + size + 2:
                break
            pos = nl + 2 + size + 2
            got_n += 1
        if got_n == n:
            break
        try:
            more = s.recv(1 << 20)
        except socket.timeout:
            break
        if not more:
            break
        buf = buf[pos:] + more
        pos = 0
    return got_n

if sys.argv[1] == "http":
    a = http(int(sys.argv[2]), 6, "/big/*?limit=10000")
    print(len(a), sum(1 for st, _ in a if st.endswith(" 200 OK")), sum(l for _, l in a))
else:
    print(resp(int(sys.argv[2]), 4000))
EOF

read -r n okn bytes < <(python3 "$T/client.py" http "$HP")
if [ "${n:-0}" = 6 ] && [ "${okn:-0}" = 6 ] && [ "${bytes:-0}" -gt 4194304 ]; then
    ok "six pipelined 10,000-row scans: six 200 answers, $bytes bytes"
else
    bad "six pipelined 10,000-row scans: ${n:-0} answers, ${okn:-0} of them 200, ${bytes:-0} bytes"
fi
got=$(python3 "$T/client.py" resp "$RP")
if [ "$got" = 4000 ]; then
    ok "4,000 pipelined RESP GETs of 2,000-byte values: every answer"
else
    bad "4,000 pipelined RESP GETs of 2,000-byte values: ${got:-0} answers"
fi
kill -0 "$SPID" 2>/dev/null && ok "the server is still up" || bad "the server died"
# A worker polls only after a 100 ms tick in which it was busy over half
# the time: 500,000 GETs of absent rows down one connection keep one busy
# for several.
busy_load() {
    awk 'BEGIN { for (i = 0; i < 500000; i++) {
        k = sprintf("big/x%06d", i)
        printf "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", length(k), k } }' |
        redis-cli -p "$RP" --pipe 2>&1 | tail -1
}
# What the polling did: every turn with events is counted, found by polling
# or after sleeping, unless polling had backed off (then that is counted).
poll_metrics() {
    curl -s "http://127.0.0.1:$HP/metrics" | awk '
        $1 == "kiln_busy_poll_turns_total{found=\"poll\"}" { p = $2 }
        $1 == "kiln_busy_poll_turns_total{found=\"sleep\"}" { s = $2 }
        $1 == "kiln_busy_poll_backoffs_total" { b = $2 }
        END { print p + 0, s + 0, b + 0, (p != "" && s != "" && b != "") }'
}
load=$(busy_load)
case $load in *"errors: 0, replies: 500000"*) ;; *) bad "500,000 pipelined GETs: $load" ;; esac
read -r pp ps pb declared < <(poll_metrics)
if [ "$declared" = 1 ] && [ $((pp + ps + pb)) -gt 0 ]; then
    ok "/metrics counts the busy polling: $pp turns found by polling, $ps after sleeping, $pb back-offs"
else
    bad "/metrics busy polling: '$pp' '$ps' '$pb' (declared: $declared)"
fi

# An MGET whose answer is over --max-reply-bytes is an error, not 8 MB.
stop_server
start_server --resp-listen 127.0.0.1:0 --threads 2 --cache-mb 64 --resp-column 'big=f:q' \
    --max-reply-bytes 1000000 --busy-poll-us 0 || { bad "server did not start"; finish; }
busy_load > /dev/null
read -r pp ps pb declared < <(poll_metrics)
[ "$declared:$pp:$ps:$pb" = "1:0:0:0" ] && ok "with --busy-poll-us 0 nothing is counted as polling" \
    || bad "with --busy-poll-us 0: '$declared:$pp:$ps:$pb'"
keys=$(seq -f 'r%06g' 0 999 | tr '\n' ' ')
ans=$(redis-cli -p "$RP" MGET $keys 2>&1 | head -1)
case $ans in
    *"MGET answer larger than --max-reply-bytes (1000000)"*) ok "an MGET over --max-reply-bytes is refused" ;;
    *) bad "an MGET over --max-reply-bytes: got '${ans:0:80}'" ;;
esac
q=$(seq -f 'row=r%06g' 0 999 | tr '\n' '&')
code=$(curl -s -o "$T/mg" -w '%{http_code}' "http://127.0.0.1:$HP/big/multiget?${q%&}")
if [ "$code" = 413 ] && grep -q reply_too_large "$T/mg"; then
    ok "an HTTP multiget over --max-reply-bytes is a 413"
else
    bad "an HTTP multiget over --max-reply-bytes: $code $(head -c 120 "$T/mg")"
fi
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HP/big/multiget?row=r000001&row=r000002")
[ "$code" = 200 ] && ok "a small HTTP multiget still answers" || bad "a small HTTP multiget: $code"
check_small=$(redis-cli -p "$RP" MGET r000001 r000002 | wc -l)
[ "$check_small" = 2 ] && ok "a small MGET still answers" || bad "a small MGET: $check_small lines"
finish
