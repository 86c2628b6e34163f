#!/usr/bin/env python3
"""server_warm.py -- read every row of the bench tables once through
kiln-server's Redis protocol, so that its row cache holds them all.

    bench/server_warm.py PORT ROWS TABLE...     (TABLE: rkeys or bench)

GETs are pipelined on one connection: a thread writes them in batches of
whole commands while the main thread reads and counts the replies, with at
most WINDOW commands unanswered: the writer waits only for replies, between
whole batches, while the reader always drains. (redis-cli --pipe could stop
in the middle of a command for seconds, and once for long enough to meet
the server's --request-timeout.) Prints "errors: E, replies: R"; exits 1 if
a reply is missing or is an error.
"""
import socket
import struct
import sys
import threading

BATCH = 512         # commands a write
WINDOW = 65536      # commands sent and not yet answered, at most


def key(table, i):
    if table == "rkeys":
        return b"rkeys/key:%012d" % i
    return b"bench/" + struct.pack(">QQ", 1000000 + 2 * (i // 10),
                                   (1 << 64) - 1 - (1700000000 - 60 * (i % 10)))


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(sys.argv) < 4 or any(t not in ("rkeys", "bench") for t in sys.argv[3:]):
        print(__doc__.strip(), file=sys.stderr)
        return 64
    port, rows, tables = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    total = rows * len(tables)
    s = socket.create_connection(("127.0.0.1", port))
    credit = threading.Semaphore(WINDOW // BATCH)
    failed = []

    def writer():
        try:
            batch = []
            for t in tables:
                for i in range(rows):
                    k = key(t, i)
                    batch.append(b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(k), k))
                    if len(batch) == BATCH:
                        credit.acquire()
                        s.sendall(b"".join(batch))
                        batch = []
            if batch:
                credit.acquire()
                s.sendall(b"".join(batch))
        except OSError as e:
            failed.append(str(e))

    w = threading.Thread(target=writer, daemon=True)
    w.start()
    buf = bytearray()
    pos = 0
    replies = errors = 0
    while replies < total:
        # One reply: a bulk string ($N, then N bytes), a nil ($-1), an
        # error (-...) or any other one-line reply.
        nl = buf.find(b"\r\n", pos)
        if nl >= 0:
            head = bytes(buf[pos:nl])
            end = nl + 2
            if head[:1] == b"$" and int(head[1:]) >= 0:
                end += int(head[1:]) + 2
            if end <= len(buf):
                if head[:1] == b"-":
                    errors += 1
                    if errors <= 3:
                        print(head.decode("latin-1"), file=sys.stderr)
                replies += 1
                pos = end
                if replies % BATCH == 0:
                    credit.release()
                continue
        if pos > 0:
            del buf[:pos]
            pos = 0
        got = s.recv(1 << 20)
        if not got:
            break
        buf += got
    print("errors: %d, replies: %d" % (errors, replies))
    if failed:
        print("server_warm.py: writing failed: %s" % failed[0], file=sys.stderr)
    return 0 if replies == total and errors == 0 and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
