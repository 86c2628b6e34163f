#!/usr/bin/env python3
"""abuse_load.py -- the load generator of abuse_test.sh (stdlib only).

  abuse_load.py good HTTP_PORT RESP_PORT SECONDS CONNS ROWS
      CONNS well-behaved clients (every fourth over the Redis protocol, the
      others HTTP/1.1 keep-alive), from 127.0.0.2, each sending a point Get
      of a random row r0000000..ROWS-1 every 25 ms for SECONDS (open loop:
      latency counts from when a request was due) and checking each answer
      (status and the row's value). Prints one JSON object: requests,
      failures (and the first few), latency p50 / p99 / max in ms.

  abuse_load.py bad HTTP_PORT RESP_PORT SECONDS CAP
      The bad clients, each kind from its own loopback address so that the
      per-client connection cap (CAP) of one kind does not touch the others:
      slowloris (a request head trickled a byte every 100 ms), pipelined
      large scans never read, garbage HTTP, garbage RESP, connections up to
      and past CAP (HTTP and RESP), and a scan that passes over every row
      without answering one (a ValueFilter nothing passes), over and over.
      Runs SECONDS, then prints what the server answered each kind (JSON).

Every connection goes to 127.0.0.1.
"""
import base64
import json
import os
import random
import socket
import sys
import threading
import time

HOST = "127.0.0.1"
INTERVAL = 0.025   # a well-behaved client sends a Get every 25 ms (40 a second)
NOPE = ("%7B%22type%22%3A%22ValueFilter%22%2C%22op%22%3A%22EQUAL%22%2C%22comparator%22"
        "%3A%7B%22type%22%3A%22BinaryComparator%22%2C%22value%22%3A%22bm9wZQ%3D%3D%22%7D%7D")


def connect(port, src, timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((src, 0))
    s.connect((HOST, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


class Reader:
    """Buffered reads of HTTP/1.1 answers and RESP replies on one socket."""

    def __init__(self, s):
        self.s = s
        self.buf = b""

    def fill(self):
        data = self.s.recv(65536)
        if not data:
            raise ConnectionError("closed by the server")
        self.buf += data

    def line(self):
        while b"\r\n" not in self.buf:
            self.fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exactly(self, n):
        while len(self.buf) < n:
            self.fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def http_answer(self):
        status = self.line()
        length = None
        chunked = False
        while True:
            h = self.line()
            if not h:
                break
            k, _, v = h.partition(b":")
            k = k.strip().lower()
            if k == b"content-length":
                length = int(v)
            elif k == b"transfer-encoding" and b"chunked" in v.lower():
                chunked = True
        if chunked:
            body = b""
            while True:
                n = int(self.line().split(b";")[0], 16)
                body += self.exactly(n)
                self.line()
                if n == 0:
                    break
        else:
            body = self.exactly(length or 0)
        return status, body


# ---------------------------------------------------------------- well-behaved

def good(http_port, resp_port, seconds, conns, rows):
    lat = []
    failures = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(i):
        resp = i % 4 == 3
        rng = random.Random(i)
        mine = []
        bad = []
        try:
            s = connect(resp_port if resp else http_port, "127.0.0.2", timeout=10)
        except OSError as e:
            bad.append("connect: %s" % e)
            s = None
        r = Reader(s) if s else None
        # Open loop: request n is due at start + n * INTERVAL and its latency
        # counts from then, so a request held up also counts the ones that
        # should have been sent meanwhile (a closed loop would send one
        # request per stall and see nothing).
        due = time.monotonic()
        while s is not None and due < deadline:
            now = time.monotonic()
            if now < due:
                time.sleep(due - now)
            t0 = due
            due += INTERVAL
            k = rng.randrange(rows)
            key = "r%07d" % k
            want = ("v%d" % k).encode()
            try:
                if resp:
                    cmd = "big/" + key
                    s.sendall(b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(cmd), cmd.encode()))
                    head = r.line()
                    ok = head == b"$%d" % len(want) and r.exactly(len(want) + 2) == want + b"\r\n"
                    what = head[:80]
                else:
                    s.sendall(b"GET /big/%s HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n"
                              % key.encode())
                    status, body = r.http_answer()
                    ok = status.startswith(b"HTTP/1.1 200 ") and base64.b64encode(want) in body
                    what = status[:80]
            except (OSError, ConnectionError, ValueError) as e:
                ok = False
                what = str(e)
                s.close()
                s = None
            mine.append((time.monotonic() - t0) * 1000.0)
            if not ok:
                bad.append("%s %s: %r" % ("GET" if resp else "HTTP GET", key, what))
        if s is not None:
            s.close()
        with lock:
            lat.extend(mine)
            failures.extend(bad)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lat.sort()

    def pct(p):
        return round(lat[min(len(lat) - 1, int(len(lat) * p))], 3) if lat else None

    print(json.dumps({"requests": len(lat), "failures": len(failures),
                      "first_failures": failures[:5], "p50_ms": pct(0.50),
                      "p99_ms": pct(0.99), "max_ms": round(lat[-1], 3) if lat else None}))


# ---------------------------------------------------------------- bad clients

def bad(http_port, resp_port, seconds, cap):
    stop = threading.Event()
    counts = {}
    lock = threading.Lock()

    def count(kind, what):
        what = what.split("'")[0].strip()   # "-ERR unknown command '...'": one key
        with lock:
            d = counts.setdefault(kind, {})
            d[what] = d.get(what, 0) + 1

    def first_line(s):
        try:
            data = s.recv(4096)
        except socket.timeout:
            return "timeout"
        except OSError as e:
            return "error %s" % e.__class__.__name__
        return data.split(b"\r\n")[0].decode("latin-1")[:40] or "closed"

    def slowloris(i):
        head = b"GET /big/r0000001 HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200 + b"\r\n\r\n"
        while not stop.is_set():
            try:
                s = connect(http_port, "127.0.0.3")
            except OSError:
                count("slowloris", "connect failed")
                stop.wait(0.2)
                continue
            s.settimeout(0.1)
            ended = None
            for b in head:
                if stop.is_set():
                    break
                try:
                    s.sendall(bytes([b]))
                    data = s.recv(4096)
                    ended = data.split(b"\r\n")[0].decode("latin-1")[:40] or "closed"
                    break
                except socket.timeout:
                    continue
                except OSError:
                    ended = "reset"
                    break
            s.close()
            if ended:
                count("slowloris", ended)

    def pipeliner(i):
        # Many large scans in one write; never read an answer.
        held = []
        while not stop.is_set() and len(held) < 4:
            try:
                s = connect(http_port, "127.0.0.4")
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.setblocking(False)
                reqs = b"".join(b"GET /big/*?startrow=r%07d&limit=3000 HTTP/1.1\r\nHost: x\r\n\r\n"
                                % random.randrange(1000000) for _ in range(200))
                try:
                    sent = s.send(reqs)
                except OSError:
                    sent = 0
                held.append(s)
                count("pipeliner", "sent %s" % ("all" if sent == len(reqs) else "part"))
            except OSError:
                count("pipeliner", "connect failed")
            stop.wait(0.3)
        stop.wait()
        for s in held:
            s.close()

    garbage_http = [
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(64)) + b"\r\n\r\n",
        b"GET /big/r1 HTTP/9.9\r\nHost: x\r\n\r\n",
        b"GET /big/r1 HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
        b"BREW /pot HTTP/1.1\r\nContent-Length: -5\r\nHost: x\r\n\r\n",
        b"GET /big/r1 HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 70000 + b"\r\n\r\n",
        b"\r\n\r\n\x00\x00\x00",
    ]

    def garbage(port, src, kind, payloads):
        rng = random.Random(kind)
        while not stop.is_set():
            p = payloads[rng.randrange(len(payloads))] if rng.random() < 0.8 else \
                bytes(rng.randrange(256) for _ in range(300)) + b"\r\n\r\n"
            try:
                s = connect(port, src, timeout=2)
                try:
                    s.sendall(p)
                except OSError:
                    pass
                count(kind, first_line(s))
                s.close()
            except OSError:
                count(kind, "connect failed")
            stop.wait(0.01)

    garbage_resp = [
        b"*2\r\n$3\r\nGET\r\n$-7\r\n",
        b"*99999999999\r\n",
        b"*1\r\n$99999999\r\nxx\r\n",
        b"$5\r\nhello\r\n",
        b"*2\r\n:3\r\nGET\r\n",
        b"\x00\x01\x02\xff\r\n",
        b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
    ]

    def capper(port, src, kind, hello):
        # Open cap connections, then more; each says hello and reads one line.
        while not stop.is_set():
            held = []
            for _ in range(cap + 6):
                try:
                    s = connect(port, src, timeout=2)
                    s.sendall(hello)
                    line = first_line(s)
                    count(kind, line)
                    held.append(s)
                except OSError:
                    count(kind, "connect failed")
            stop.wait(1.0)
            for s in held:
                s.close()
            stop.wait(0.2)

    def slow_scan(i):
        s = None
        r = None
        while not stop.is_set():
            try:
                if s is None:
                    s = connect(http_port, "127.0.0.8", timeout=30)
                    r = Reader(s)
                s.sendall(b"GET /big/*?filter=%s HTTP/1.1\r\nHost: x\r\n\r\n" % NOPE.encode())
                status, _ = r.http_answer()
                count("slow_scan", status.decode("latin-1")[:40])
            except (OSError, ConnectionError, ValueError) as e:
                count("slow_scan", "error %s" % e.__class__.__name__)
                if s is not None:
                    s.close()
                s = None

    def th(kind, target, *args):
        return threading.Thread(target=target, args=args, name="%s:%d" % (kind, len(args)))

    threads = [th("slowloris", slowloris, i) for i in range(12)]
    threads += [th("pipeliner", pipeliner, i) for i in range(2)]
    threads += [th("garbage_http", garbage, http_port, "127.0.0.5", "garbage_http", garbage_http),
                th("garbage_resp", garbage, resp_port, "127.0.0.6", "garbage_resp", garbage_resp),
                th("cap_http", capper, http_port, "127.0.0.7", "cap_http",
                   b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
                th("cap_resp", capper, resp_port, "127.0.0.9", "cap_resp", b"PING\r\n"),
                th("slow_scan", slow_scan, 0)]
    only = os.environ.get("ABUSE_KINDS")   # a comma list of kinds, to find a culprit
    if only:
        threads = [t for t in threads if t.name.split(":")[0] in only.split(",")]
    for t in threads:
        t.daemon = True
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(timeout=5)
    print(json.dumps(counts, sort_keys=True))


if __name__ == "__main__":
    a = sys.argv
    if len(a) == 7 and a[1] == "good":
        good(int(a[2]), int(a[3]), float(a[4]), int(a[5]), int(a[6]))
    elif len(a) == 6 and a[1] == "bad":
        bad(int(a[2]), int(a[3]), float(a[4]), int(a[5]))
    else:
        sys.stderr.write(__doc__)
        sys.exit(64)
