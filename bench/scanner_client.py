#!/usr/bin/env python3
"""scanner_client.py HOST PORT TABLE MODE [BATCH] -- one full-table scan of
kiln-server over one keep-alive connection; prints "ROWS SECONDS".

MODE scanner: HBase REST's scanner protocol (POST /TABLE/scanner with
{"batch":BATCH}, GET its Location until 204, DELETE). MODE paged: Kiln's
stateless scan, GET /TABLE/*?paged=true resumed from each page's
"next_startrow". Rows are counted in the JSON bodies without decoding them
(one "key" per row of a batch), so the client spends little per row; the
last key of each answer is decoded to check the order across answers.
"""
import base64
import http.client
import json
import re
import sys
import time
import urllib.parse

host, port, table, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
batch = int(sys.argv[5]) if len(sys.argv) > 5 else 1000
KEY = re.compile(rb'"key":"([^"]*)"')
conn = http.client.HTTPConnection(host, port, timeout=600)
rows, last = 0, b""


def count(body):
    """Add the rows of a CellSet body; the keys must keep rising across
    answers (a scanner batch may end inside a row: its key then opens the
    next batch and is not counted twice)."""
    global rows, last
    keys = KEY.findall(body)
    if not keys:
        return
    first = base64.b64decode(keys[0])
    if first < last or (first == last and mode != "scanner"):
        sys.exit(f"scanner_client.py: rows out of order at {first!r}")
    rows += len(keys) - (1 if first == last else 0)
    last = base64.b64decode(keys[-1])


t0 = time.perf_counter()
if mode == "scanner":
    conn.request("POST", f"/{table}/scanner", body=json.dumps({"batch": batch}),
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    r.read()
    if r.status != 201:
        sys.exit(f"scanner_client.py: scanner not created: {r.status}")
    path = urllib.parse.urlsplit(r.getheader("Location")).path
    while True:
        conn.request("GET", path, headers={"Accept": "application/json"})
        r = conn.getresponse()
        body = r.read()
        if r.status == 204:
            break
        if r.status != 200:
            sys.exit(f"scanner_client.py: GET {path}: {r.status} {body[:200]!r}")
        count(body)
    conn.request("DELETE", path)
    conn.getresponse().read()
elif mode == "paged":
    start = ""
    while True:
        conn.request("GET", f"/{table}/*?paged=true" + (f"&startrow={start}" if start else ""))
        r = conn.getresponse()
        body = r.read()
        if r.status != 200:
            sys.exit(f"scanner_client.py: scan page: {r.status} {body[:200]!r}")
        count(body)
        m = re.search(rb'"next_startrow":"([^"]*)"', body[-4096:])
        if m is None:
            break
        start = urllib.parse.quote(base64.b64decode(m.group(1)), safe="")
else:
    sys.exit("scanner_client.py: MODE is scanner or paged")
print(rows, f"{time.perf_counter() - t0:.3f}")
