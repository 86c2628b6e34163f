#!/usr/bin/env python3
"""A stand-in for HBase's REST gateway, for testing `kiln --server` against
answers shaped as HBase writes them, with no code shared with kiln-server.

It serves the cells of dump-form lines (ROW TAB FAMILY:QUALIFIER TAB TS TAB
Put TAB VALUE, bytes as \\xNN) read from --data, as table --table:

  GET /                         TableList   {"table":[{"name":T}]}
  GET /T/exists                 200, or 404 for another table
  GET /T/schema                 TableSchema (HBase's attribute names)
  GET /T/ROW[/COLS[/START,END]][?v=N]  CellSet, 404 "Not found" when empty
  GET /T/multiget?row=..&v=N    CellSet of the rows found, 404 if none
  PUT|POST /T/scanner           Scanner JSON body -> 201 + Location
  GET /T/scanner/ID             next batch of at most `batch` cells
                                (capped by --max-batch; rows split across
                                batches as HBase splits them), 204 at the end
  DELETE /T/scanner/ID          close
  GET /_fake/scanners           open scanners (a number; for the test)
  GET /_fake/connections        connections since the last such request

Every body goes out chunked. Tables named bad-json, bad-base64, truncated,
xml and huge-chunk answer row reads with broken responses. Requests are
logged one a line to --log. With --tls CERT KEY it serves HTTPS.
"""
import argparse
import base64
import json
import os
import socket
import ssl
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BROKEN = {"bad-json", "bad-base64", "truncated", "xml", "huge-chunk"}


def unescape(text):
    out = bytearray()
    i = 0
    while i < len(text):
        if text.startswith("\\x", i) and i + 4 <= len(text):
            out.append(int(text[i + 2:i + 4], 16))
            i += 4
        else:
            out += text[i].encode()
            i += 1
    return bytes(out)


def load(path):
    """{row: [(family, qualifier, ts, value)]}, cells sorted as HBase sorts."""
    rows = {}
    with open(path, encoding="latin-1") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            row, col, ts, _typ, value = line.split("\t")
            fam, qual = col.split(":", 1)
            rows.setdefault(unescape(row), []).append(
                (unescape(fam), unescape(qual), int(ts), unescape(value)))
    for cells in rows.values():
        cells.sort(key=lambda c: (c[0], c[1], -c[2]))
    return rows


def b64(b):
    return base64.b64encode(b).decode()


def select(cells, columns, max_versions, start_time=0, end_time=None):
    """The visible cells of a row: columns (fam or fam:qual byte strings),
    at most max_versions per column, timestamps in [start_time, end_time)."""
    out = []
    seen = {}
    for fam, qual, ts, value in cells:
        if columns and not any(c == fam or c == fam + b":" + qual for c in columns):
            continue
        if ts < start_time or (end_time is not None and ts >= end_time):
            continue
        k = (fam, qual)
        seen[k] = seen.get(k, 0) + 1
        if seen[k] > max_versions:
            continue
        out.append((fam, qual, ts, value))
    return out


def cellset(rows):
    """HBase's CellSet JSON, field for field as its JSON provider writes it."""
    return {"Row": [{"key": b64(key), "Cell": [
        {"column": b64(f + b":" + q), "timestamp": ts, "$": b64(v)} for f, q, ts, v in cells]}
        for key, cells in rows]}


class Scanner:
    def __init__(self, cells, batch):
        self.cells = cells   # [(row, fam, qual, ts, value)] in scan order
        self.pos = 0
        self.batch = batch


class Gateway(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, args):
        super().__init__(addr, Handler)
        self.args = args
        self.rows = load(args.data)
        self.keys = sorted(self.rows)
        self.scanners = {}
        self.conns = set()       # client (address, port) pairs seen: connections
        self.next_id = 1
        self.lock = threading.Lock()
        self.log = open(args.log, "a") if args.log else None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "Jetty(9.4.fake)"

    def log_message(self, fmt, *a):
        pass

    def note(self):
        with self.server.lock:
            self.server.conns.add(self.client_address)
        if self.server.log:
            self.server.log.write("%s %s\n" % (self.command, self.path))
            self.server.log.flush()

    def send_chunked(self, status, body, ctype="application/json", headers=()):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        # uneven chunks, so that a chunk boundary falls inside a token
        i, step = 0, 7
        while i < len(body):
            piece = body[i:i + step]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            i += len(piece)
            step = step * 3 % 61 + 1
        self.wfile.write(b"0\r\n\r\n")

    def send_json(self, status, obj, headers=()):
        ctype = "application/json; charset=UTF-8" if status == 200 else "application/json"
        self.send_chunked(status, json.dumps(obj, separators=(",", ":")), ctype, headers)

    def not_found(self):
        self.send_chunked(404, "Not found\r\n", "text/plain")

    def send_empty(self, status, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if status != 204:
            self.send_header("Content-Length", "0")
        self.end_headers()

    # ------------------------------------------------------------ routing
    def split(self):
        url = urllib.parse.urlsplit(self.path)
        segs = [urllib.parse.unquote_to_bytes(s) for s in url.path.split("/")[1:]]
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        return segs, query

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > 1 << 20:
            raise ValueError("body too large")
        return self.rfile.read(n)

    def do_GET(self):
        self.note()
        segs, query = self.split()
        srv = self.server
        table = srv.args.table.encode()
        if segs == [b""]:
            return self.send_json(200, {"table": [{"name": srv.args.table}]})
        if segs == [b"_fake", b"scanners"]:
            return self.send_chunked(200, str(len(srv.scanners)), "text/plain")
        if segs == [b"_fake", b"connections"]:   # connections since the last ask
            with srv.lock:
                n = len(srv.conns) - 1   # not this one
                srv.conns = set()
            return self.send_chunked(200, str(n), "text/plain")
        if segs[0].decode("latin-1") in BROKEN:
            return self.broken(segs[0].decode())
        if segs[0] != table:
            return self.not_found()
        if len(segs) == 2 and segs[1] == b"exists":
            return self.send_empty(200)
        if len(segs) == 2 and segs[1] == b"schema":
            return self.send_json(200, {
                "name": srv.args.table,
                "ColumnSchema": [{"name": fam, "BLOOMFILTER": "ROW", "VERSIONS": "3",
                                  "IN_MEMORY": "false", "KEEP_DELETED_CELLS": "FALSE",
                                  "DATA_BLOCK_ENCODING": "NONE", "TTL": "2147483647",
                                  "COMPRESSION": "NONE", "MIN_VERSIONS": "0",
                                  "BLOCKCACHE": "true", "BLOCKSIZE": "65536",
                                  "REPLICATION_SCOPE": "0"} for fam in srv.args.families],
                "IS_META": "false"})
        if len(segs) == 3 and segs[1] == b"scanner":
            return self.scanner_next(segs[2].decode("latin-1"))
        versions = int(query.get("v", ["1"])[0])
        if len(segs) == 2 and segs[1] == b"multiget":
            found = []
            for key in self.split_query_bytes().get("row", []):
                key = key.encode("latin-1")
                cells = select(srv.rows.get(key, []), [], versions)
                if cells:
                    found.append((key, cells))
            return self.send_json(200, cellset(found)) if found else self.not_found()
        if len(segs) in (2, 3, 4):
            cols = [c for c in segs[2].split(b",")] if len(segs) >= 3 else []
            lo, hi = 0, None
            if len(segs) == 4:   # /T/ROW/COLS/START,END or /T/ROW/COLS/TS
                times = [int(x) for x in segs[3].split(b",")]
                lo, hi = (times[0], times[1]) if len(times) == 2 else (times[0], times[0] + 1)
            cells = select(srv.rows.get(segs[1], []), cols, versions, lo, hi)
            return self.send_json(200, cellset([(segs[1], cells)])) if cells else self.not_found()
        return self.not_found()

    def split_query_bytes(self):
        # parse_qs decodes as UTF-8; rows are bytes, so decode as latin-1
        url = urllib.parse.urlsplit(self.path)
        return urllib.parse.parse_qs(url.query, keep_blank_values=True, encoding="latin-1")

    def broken(self, name):
        if name == "bad-json":
            return self.send_chunked(200, '{"Row":[{"key":"cjE=","Cell":[{"column":',
                                     "application/json")
        if name == "bad-base64":
            return self.send_json(200, {"Row": [{"key": "r!1=", "Cell": [
                {"column": b64(b"f:q"), "timestamp": 1, "$": b64(b"v")}]}]})
        if name == "xml":
            return self.send_chunked(200, '<?xml version="1.0"?><CellSet/>', "text/xml")
        if name == "huge-chunk":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"ffffffffffffffffff\r\n{")
            self.wfile.flush()
            self.close_connection = True
            return
        # truncated: a chunk promises more than is sent, then the connection closes
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"40\r\n{\"Row\":[{\"key\":\"cjE=\"")
        self.wfile.flush()
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    # ------------------------------------------------------------ scanners
    def do_PUT(self):
        self.note()
        segs, _ = self.split()
        if len(segs) == 2 and segs[0] == self.server.args.table.encode() and segs[1] == b"scanner":
            return self.scanner_open(segs)
        self.body()
        self.send_chunked(405, "Method Not Allowed\r\n", "text/plain")

    do_POST = do_PUT

    def scanner_open(self, segs):
        srv = self.server
        try:
            spec = json.loads(self.body())
        except ValueError:
            return self.send_chunked(400, "Bad request\r\n", "text/plain")
        start = base64.b64decode(spec.get("startRow", ""))
        end = base64.b64decode(spec.get("endRow", ""))
        cols = [base64.b64decode(c) for c in spec.get("column", [])]
        versions = int(spec.get("maxVersions", 1))
        batch = min(int(spec.get("batch", 100)), srv.args.max_batch)
        first_key_only = "FirstKeyOnlyFilter" in spec.get("filter", "")
        cells = []
        for key in srv.keys:
            if key < start or (end and key >= end):
                continue
            sel = select(srv.rows[key], cols, versions, int(spec.get("startTime", 0)),
                         int(spec["endTime"]) if "endTime" in spec else None)
            if first_key_only:
                sel = sel[:1]
            cells += [(key,) + c for c in sel]
        with srv.lock:
            sid = "%d%s" % (srv.next_id, "a1b2c3")
            srv.next_id += 1
            srv.scanners[sid] = Scanner(cells, max(batch, 1))
        host = "%s:%d" % self.server.server_address[:2]
        scheme = "https" if srv.args.tls else "http"
        self.send_empty(201, [("Location", "%s://%s/%s/scanner/%s" %
                                (scheme, host, srv.args.table, sid))])

    def scanner_next(self, sid):
        sc = self.server.scanners.get(sid)
        if sc is None:
            return self.not_found()
        if sc.pos >= len(sc.cells):
            return self.send_empty(204)
        part = sc.cells[sc.pos:sc.pos + sc.batch]
        sc.pos += len(part)
        rows = []
        for key, fam, qual, ts, value in part:
            if rows and rows[-1][0] == key:
                rows[-1][1].append((fam, qual, ts, value))
            else:
                rows.append((key, [(fam, qual, ts, value)]))
        self.send_json(200, cellset(rows))

    def do_DELETE(self):
        self.note()
        segs, _ = self.split()
        if len(segs) == 3 and segs[1] == b"scanner":
            with self.server.lock:
                gone = self.server.scanners.pop(segs[2].decode("latin-1"), None)
            return self.send_empty(200) if gone else self.not_found()
        self.send_chunked(405, "Method Not Allowed\r\n", "text/plain")


def main():
    ap = argparse.ArgumentParser(description="A fake HBase REST gateway for tests.")
    ap.add_argument("--data", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--family", dest="families", action="append", default=[])
    ap.add_argument("--max-batch", type=int, default=1 << 30)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    args = ap.parse_args()
    srv = Gateway(("127.0.0.1", 0), args)
    if args.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls[0], args.tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
