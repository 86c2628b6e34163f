"""resp_pipeline.py PORT -- GETs, MGETs, SELECTs and other commands sent to
kiln-server's Redis port as one pipeline in one write (the server looks up
the rows of the commands buffered behind each one ahead of answering them)
must get exactly the answers the same commands get when each is sent alone
and answered before the next. Replies are read by the small RESP reader
below, which shares nothing with the server. Prints "ok N" or the first
difference; exits 1 on a difference."""
import socket
import sys


def command(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


class Reader:
    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def _line(self):
        while b"\r\n" not in self.buf:
            more = self.sock.recv(65536)
            if not more:
                raise EOFError("connection closed")
            self.buf += more
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            more = self.sock.recv(65536)
            if not more:
                raise EOFError("connection closed")
            self.buf += more
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b"-", b":"):
            return (kind, rest)
        if kind == b"$":
            n = int(rest)
            return (kind, None if n < 0 else self._exact(n))
        if kind == b"*":
            n = int(rest)
            return (kind, None if n < 0 else [self.reply() for _ in range(n)])
        raise ValueError("bad reply line %r" % line)


def commands():
    cmds = []
    for i in range(300):
        cmds.append(command("GET", "r%04d" % i))
        if i % 3 == 0:
            cmds.append(command("GET", "nobody%d" % i))
        if i % 7 == 0:
            cmds.append(command("MGET", "r%04d" % (299 - i), "nobody", "r%04d" % i))
        if i % 11 == 0:
            cmds.append(command("GET", "ns1:users/alice"))
            cmds.append(command("SELECT", "1"))
            cmds.append(command("GET", "bob"))
            cmds.append(command("GET", "r%04d" % i))
            cmds.append(command("SELECT", "0"))
        if i % 13 == 0:
            cmds.append(command("PING"))
            cmds.append(command("GET"))
            cmds.append(command("EXISTS", "r0001", "nobody"))
    return cmds


def main():
    port = int(sys.argv[1])
    cmds = commands()
    alone = []
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    r = Reader(s)
    for c in cmds:
        s.sendall(c)
        alone.append(r.reply())
    s.close()
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    r = Reader(s)
    s.sendall(b"".join(cmds))
    for i, want in enumerate(alone):
        got = r.reply()
        if got != want:
            print("command %d %r: pipelined %r, alone %r" % (i, cmds[i], got, want))
            return 1
    s.close()
    # the same pipeline on eight connections at once, read only once all
    # are sent: the server answers the reads of a turn together
    conns = [socket.create_connection(("127.0.0.1", port), timeout=20) for _ in range(8)]
    for s in conns:
        s.sendall(b"".join(cmds))
    for k, s in enumerate(conns):
        r = Reader(s)
        for i, want in enumerate(alone):
            got = r.reply()
            if got != want:
                print("connection %d, command %d %r: %r, alone %r" % (k, i, cmds[i], got, want))
                return 1
        s.close()
    hits = sum(1 for k, v in alone if k == b"$" and v is not None)
    print("ok %d %d" % (len(cmds), hits))
    return 0


if __name__ == "__main__":
    sys.exit(main())
