#!/usr/bin/env python3
"""speed_load_test.py URL SECONDS -- HTTP load on a table that takes writes
while the server flushes, compacts and swaps in a bulk load.

Readers GET random rows (JSON, decoded by the standard library); a writer
PUTs CellSets whose two columns f:a and f:b always carry the same value.
Every answer must be 200 and whole: f:a equal to f:b (a mixed answer would
show two versions, or half a write). Prints counts and "N passed, N failed".
"""
import base64
import json
import random
import sys
import threading
import time
import urllib.request

URL, SECONDS = sys.argv[1], float(sys.argv[2])
ROWS = 200
stop = threading.Event()
lock = threading.Lock()
counts = {"gets": 0, "puts": 0, "errors": 0, "mixed": 0}
first_problem = []


def b64(s):
    return base64.b64encode(s.encode()).decode()


def problem(kind, text):
    with lock:
        counts[kind] += 1
        if not first_problem:
            first_problem.append(text)


def reader(seed):
    rnd = random.Random(seed)
    while not stop.is_set():
        row = "r%04d" % rnd.randrange(ROWS)
        req = urllib.request.Request(URL + "/t/" + row, headers={"Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                body = json.loads(r.read())
        except Exception as e:  # noqa: BLE001 - any failure counts
            problem("errors", "GET %s: %s" % (row, e))
            continue
        cells = {}
        for rw in body.get("Row", []):
            for c in rw.get("Cell", []):
                cells[base64.b64decode(c["column"]).decode()] = base64.b64decode(c["$"])
        if cells.get("f:a") is None or cells.get("f:a") != cells.get("f:b"):
            problem("mixed", "GET %s: f:a %r, f:b %r" % (row, cells.get("f:a"), cells.get("f:b")))
        with lock:
            counts["gets"] += 1


def writer():
    rnd = random.Random(7)
    n = 0
    while not stop.is_set():
        row = "r%04d" % rnd.randrange(ROWS)
        n += 1
        value = ("w%d-" % n) + "x" * 2000
        body = json.dumps({"Row": [{"key": b64(row), "Cell": [
            {"column": b64("f:a"), "$": b64(value)},
            {"column": b64("f:b"), "$": b64(value)}]}]}).encode()
        req = urllib.request.Request(URL + "/t/" + row + "?durability=ASYNC_WAL", data=body,
                                     method="PUT", headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                r.read()
        except Exception as e:  # noqa: BLE001
            problem("errors", "PUT %s: %s" % (row, e))
            continue
        with lock:
            counts["puts"] += 1


threads = [threading.Thread(target=reader, args=(i,)) for i in range(3)]
threads.append(threading.Thread(target=writer))
for t in threads:
    t.start()
time.sleep(SECONDS)
stop.set()
for t in threads:
    t.join()
print("gets %(gets)d puts %(puts)d errors %(errors)d mixed %(mixed)d" % counts)
if first_problem:
    print("first problem: " + first_problem[0])
ok = counts["errors"] == 0 and counts["mixed"] == 0 and counts["gets"] > 0 and counts["puts"] > 0
print("%d passed, %d failed" % (1 if ok else 0, 0 if ok else 1))
