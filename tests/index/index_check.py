#!/usr/bin/env python3
"""index_check.py -- brute-force answers for index_test.sh.

It reads the same TSV lines importtsv read (row, city, age, name), applies
them as ImportTsv does (per column, the last line wins; an empty field writes
no cell), and answers index queries by looking at every row -- none of the
job's or the store's code is involved. Then it runs the same queries through
`kiln scan --index` (and through the HTTP API when a port is given) and
compares the rows returned, in order.

  index_check.py queries --kiln K --data D --table T [--http PORT] [--seed N]
                 --layer FILE [--layer FILE]...
      layers are loads in order (a replace, then appends); prints one line
      per mismatch and "queries: N passed, N failed".

  index_check.py atomic --port P --table T --value V --seconds S --expect VER=N,...
      asks the server again and again for the rows with city V and checks each
      answer comes from one version: every row's d:ver the same, and as many
      rows as that version has. Prints "atomic: N passed, N failed".
"""
import base64
import json
import random
import subprocess
import sys
import time
import urllib.parse
import urllib.request

COLS = ("city", "age", "name")


def load_rows(layers):
    rows = {}
    for path in layers:
        with open(path, "rb") as f:
            for line in f:
                fields = line.rstrip(b"\n").split(b"\t")
                row = rows.setdefault(fields[0], {})
                for col, val in zip(COLS, fields[1:]):
                    if val != b"":
                        row[col] = val
    return rows


def brute(rows, cols, values, start=None, stop=None):
    """Row keys whose columns match, in index order (values, then row)."""
    hits = []
    for key, row in rows.items():
        if any(c not in row for c in cols):
            continue
        vals = [row[c] for c in cols]
        if vals[: len(values)] != list(values):
            continue
        if start is not None or stop is not None:
            v = vals[len(values)]
            if start is not None and v < start:
                continue
            if stop is not None and v >= stop:
                continue
        hits.append((vals, key))
    hits.sort()
    return [k for _, k in hits]


def printable(b):
    """HBase's Bytes.toStringBinary, as kiln prints and parses keys."""
    out = []
    for c in b:
        if 0x20 <= c < 0x7F and c != 0x5C:
            out.append(chr(c))
        else:
            out.append("\\x%02X" % c)
    return "".join(out)


def kiln_rows(kiln, data, table, index, values, start, stop, limit):
    args = [kiln, "--data", data, "scan", table, "--index", index, "--json"]
    for v in values:
        args += ["--value", printable(v)]
    if start is not None:
        args += ["--value-start", printable(start)]
    if stop is not None:
        args += ["--value-stop", printable(stop)]
    if limit:
        args += ["--limit", str(limit)]
    p = subprocess.run(args, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError("kiln exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace")))
    d = json.loads(p.stdout)
    return [base64.b64decode(r["key"]) for r in d["Row"]]


def http_rows(port, table, index, values, start, stop, limit, page):
    """Every page of an index scan, following next_after."""
    out, after = [], None
    while True:
        q = [("index", index)] + [("value", v) for v in values]
        if start is not None:
            q.append(("value_start", start))
        if stop is not None:
            q.append(("value_stop", stop))
        want = page if not limit else min(page, limit - len(out))
        if want <= 0:
            break
        q.append(("limit", str(want)))
        if after is not None:
            q.append(("after", after))
        qs = "&".join("%s=%s" % (k, urllib.parse.quote(v if isinstance(v, bytes) else v.encode(), safe=""))
                      for k, v in q)
        d = json.load(urllib.request.urlopen("http://127.0.0.1:%s/%s/*?%s" % (port, table, qs)))
        out += [base64.b64decode(r["key"]) for r in d["Row"]]
        if "next_after" not in d:
            break
        after = base64.b64decode(d["next_after"])
    return out


def queries(argv):
    opts = {"--layer": []}
    i = 0
    while i < len(argv):
        k = argv[i]
        if k == "--layer":
            opts["--layer"].append(argv[i + 1])
        else:
            opts[k] = argv[i + 1]
        i += 2
    kiln, data, table = opts["--kiln"], opts["--data"], opts["--table"]
    port = opts.get("--http")
    rnd = random.Random(int(opts.get("--seed", "1")))
    rows = load_rows(opts["--layer"])
    cities = sorted({r["city"] for r in rows.values() if "city" in r})
    ages = sorted({r["age"] for r in rows.values() if "age" in r})
    qs = []
    for c in cities + [b"nowhere", b"", b"Ro"]:
        qs.append(("by_city", ("city",), [c], None, None, 0))
    for _ in range(25):
        c = rnd.choice(cities)
        qs.append(("by_city", ("city",), [c], None, None, rnd.randint(1, 7)))
        qs.append(("by_city_age", ("city", "age"), [c, rnd.choice(ages)], None, None, 0))
        lo, hi = sorted(rnd.sample(ages, 2))
        qs.append(("by_city_age", ("city", "age"), [c], lo, hi, rnd.choice([0, 3])))
        a, b = sorted(rnd.sample(cities, 2))
        qs.append(("by_city", ("city",), [], a, b, rnd.choice([0, 10])))
        qs.append(("by_city_age", ("city", "age"), [], a, None, 5))
    passed = failed = 0
    for n, (index, cols, values, start, stop, limit) in enumerate(qs):
        want = brute(rows, cols, values, start, stop)
        if limit:
            want = want[:limit]
        what = "%s values=%r start=%r stop=%r limit=%d" % (index, values, start, stop, limit)
        try:
            got = kiln_rows(kiln, data, table, index, values, start, stop, limit)
        except RuntimeError as e:
            print("FAIL %s: %s" % (what, e))
            failed += 1
            continue
        if got == want:
            passed += 1
        else:
            failed += 1
            print("FAIL kiln %s: %d rows, brute force %d; first difference at %d" % (
                what, len(got), len(want),
                next((j for j, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got), len(want)))))
        if port and n % 3 == 0:
            got = http_rows(port, table.split(":")[-1], index, values, start, stop, limit, rnd.randint(1, 9))
            if got == want:
                passed += 1
            else:
                failed += 1
                print("FAIL http %s: %d rows, brute force %d" % (what, len(got), len(want)))
    print("queries: %d passed, %d failed (%d rows in the model)" % (passed, failed, len(rows)))
    return 1 if failed else 0


def atomic(argv):
    opts = dict(zip(argv[::2], argv[1::2]))
    port, table, value = opts["--port"], opts["--table"], opts["--value"]
    expect = dict(x.split("=") for x in opts["--expect"].split(","))
    expect = {k.encode(): int(v) for k, v in expect.items()}
    deadline = time.time() + float(opts["--seconds"])
    passed = failed = 0
    seen = {}
    url = "http://127.0.0.1:%s/%s/*?index=by_city&value=%s&column=d:ver&limit=100000" % (
        port, table, urllib.parse.quote(value))
    while time.time() < deadline:
        d = json.load(urllib.request.urlopen(url))
        vers = {base64.b64decode(r["Cell"][0]["$"]) for r in d["Row"]}
        n = len(d["Row"])
        if len(vers) == 1 and expect.get(next(iter(vers))) == n:
            passed += 1
            v = next(iter(vers))
            seen[v] = seen.get(v, 0) + 1
        else:
            failed += 1
            print("FAIL an answer mixes versions: %d rows, d:ver %s" % (n, sorted(vers)))
    print("atomic: answers per version %s" % {k.decode(): v for k, v in sorted(seen.items())})
    if len(seen) < 2:
        failed += 1
        print("FAIL atomic: the answers saw %d version(s); the loads did not overlap the reads" % len(seen))
    print("atomic: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    mode = sys.argv[1]
    sys.exit(queries(sys.argv[2:]) if mode == "queries" else atomic(sys.argv[2:]))
