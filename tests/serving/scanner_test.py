#!/usr/bin/env python3
"""scanner_test.py URL KILN TMPDIR [URL2] -- HBase REST scanners of kiln-server over
many regions, a salted table and hot swaps, decoded with json and xml.etree
(no code shared with the server). scanner_test.sh builds the tables: `big`
(r00000..r01999, cells f:a and f:b valued vN-a-I / vN-b-I for version N,
14 regions; TMPDIR/vN holds version N's job output) and `salted` (k00000..
k02999, d:v = valI, 8 buckets), `wide` (24 rows of 64 KiB). URL2 is a
server started with --max-scanners 2 --scanner-idle 1 --scan-max-mb 1. Prints "N passed, N failed"."""
import base64, json, subprocess, sys, time, urllib.request, urllib.error
import xml.etree.ElementTree as ET

URL, KILN, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {name} {detail}"[:800])


def call(method, path, accept=None, body=None, ctype=None):
    req = urllib.request.Request(URL + path, method=method, data=body)
    if accept:
        req.add_header("Accept", accept)
    if ctype:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


b64 = lambda s: base64.b64encode(s if isinstance(s, bytes) else s.encode()).decode()
unb = base64.b64decode


def cells_json(b):
    """[(row, column, value)] of a JSON CellSet."""
    return [(unb(r["key"]), unb(c["column"]), unb(c["$"]))
            for r in json.loads(b)["Row"] for c in r["Cell"]]


def cells_xml(b):
    return [(unb(r.get("key")), unb(c.get("column")), unb(c.text or ""))
            for r in ET.fromstring(b).iter("Row") for c in r.iter("Cell")]


def open_scanner(table, spec, xml=False):
    if xml:
        st, h, body = call("PUT", f"/{table}/scanner", body=spec, ctype="text/xml")
    else:
        st, h, body = call("POST", f"/{table}/scanner", body=json.dumps(spec).encode(),
                           ctype="application/json")
    loc = h.get("Location", "")
    marker = f"/{table}/scanner/"
    if st != 201 or marker not in loc:
        return None, (st, body)
    return loc[loc.index(marker):], None


def next_batch(path, xml=False):
    """(status, cells, version header) of one GET."""
    st, h, b = call("GET", path, "text/xml" if xml else "application/json")
    if st != 200:
        return st, [], h.get("X-Kiln-Version")
    return st, (cells_xml if xml else cells_json)(b), h.get("X-Kiln-Version")


def drain(path, xml=False, most=100000):
    """Every batch until 204: a list of cell lists, or None on an error."""
    batches = []
    while len(batches) < most:
        st, cells, _ = next_batch(path, xml)
        if st == 204:
            call("DELETE", path)
            return batches
        if st != 200 or not cells:
            print(f"scanner GET {path}: {st}")
            return None
        batches.append(cells)
    return None


def model(v, lo=0, hi=2000, cols=(b"f:a", b"f:b")):
    return [(b"r%05d" % i, c, b"v%d-%s-%d" % (v, c[2:], i)) for i in range(lo, hi) for c in cols]


# ------------------------------------------------------------ regions
SPLITS = [b"r00100", b"r00333", b"r00500", b"r00500\x00", b"r00700", b"r00700a",
          b"r00800x", b"r00800y", b"r01000", b"r01500", b"r01999"]
for batch in (1, 7, 333, 4000):
    path, err = open_scanner("big", {"batch": batch})
    bs = drain(path) if path else None
    flat = [c for b in bs for c in b] if bs else None
    check(f"big batch={batch}: every cell once, in order", flat == model(1), (err, flat and len(flat)))
    if bs:
        check(f"big batch={batch}: full batches", all(len(b) == batch for b in bs[:-1])
              and 0 < len(bs[-1]) <= batch, [len(b) for b in bs][:8])
    if bs and 1 < batch < 4000:
        # each boundary whose first cell does not start a batch falls inside one
        idx = lambda k: 2 * sum(1 for i in range(2000) if b"r%05d" % i < k)
        want = {k for k in SPLITS if idx(k) % batch != 0}
        spans = {k for b in bs for k in SPLITS if b[0][0] < k <= b[-1][0]}
        check(f"big batch={batch}: batches span region boundaries", spans == want and len(want) >= 5,
              (sorted(spans), sorted(want)))
# batch=3 cuts rows (2 cells each) across batches: a row's second cell opens the next
path, _ = open_scanner("big", {"batch": 3, "startRow": b64("r00498"), "endRow": b64("r00503")})
bs = drain(path) if path else None
check("a row cut by a batch continues in the next", bs is not None and [len(b) for b in bs] == [3, 3, 3, 1]
      and [c for b in bs for c in b] == model(1, 498, 503) and bs[0][-1][0] == bs[1][0][0], bs)
# bounds falling in empty regions and on split keys, XML body and answers
xmlspec = b'<Scanner batch="100" startRow="%s" endRow="%s"><column>%s</column></Scanner>' % (
    b64("qa").encode(), b64("r00800x").encode(), b64("f:b").encode())
path, err = open_scanner("big", xmlspec, xml=True)
bs = drain(path, xml=True) if path else None
check("xml scanner from an empty region to an empty region", bs is not None and
      [c for b in bs for c in b] == model(1, 0, 801, (b"f:b",)), (err, bs and len(bs)))
path, _ = open_scanner("big", {"batch": 50, "startRow": b64("r00500"), "endRow": b64("r00701")})
bs = drain(path) if path else None
check("scanner over single-row regions", bs is not None and [c for b in bs for c in b] == model(1, 500, 701))
path, _ = open_scanner("big", {"batch": 10, "reversed": True, "startRow": b64("r01005"), "endRow": b64("r00995")})
bs = drain(path) if path else None
want = [c for i in range(1005, 995, -1) for c in model(1, i, i + 1)]
check("reversed scanner across a boundary", bs is not None and [c for b in bs for c in b] == want,
      bs and [c[0] for b in bs for c in b][:6])
path, _ = open_scanner("big", {"batch": 10, "limit": 25, "startRow": b64("r00090")})
bs = drain(path) if path else None
check("limit across a boundary", bs is not None and [c for b in bs for c in b] == model(1, 90, 115))
f = json.dumps({"type": "RowFilter", "op": "EQUAL",
                "comparator": {"type": "RegexStringComparator", "value": "r0..99$"}})
path, _ = open_scanner("big", {"batch": 6, "filter": f})
bs = drain(path) if path else None
check("filter across every region", bs is not None and [c for b in bs for c in b] ==
      [c for i in range(99, 2000, 100) for c in model(1, i, i + 1)], bs and len(bs))

# ------------------------------------------------------------ salted
salted = [(b"k%05d" % i, b"d:v", b"val%d" % i) for i in range(3000)]
for batch in (1, 64, 5000):
    path, err = open_scanner("salted", {"batch": batch})
    bs = drain(path) if path else None
    flat = [c for b in bs for c in b] if bs else None
    check(f"salted batch={batch}: user-key order, salt hidden", flat == salted,
          (err, flat and flat[:3]))
path, _ = open_scanner("salted", {"batch": 100, "startRow": b64("k01234"), "endRow": b64("k02000")})
bs = drain(path, xml=False) if path else None
check("salted with bounds", bs is not None and [c for b in bs for c in b] == salted[1234:2000])
path, _ = open_scanner("salted", {"batch": 7, "reversed": True, "startRow": b64("k00020"), "limit": 15})
bs = drain(path) if path else None
check("salted reversed with a limit", bs is not None and [c for b in bs for c in b] == salted[20:5:-1],
      bs and [c[0] for b in bs for c in b])
f = json.dumps({"type": "PrefixFilter", "value": b64("k029")})
xmlspec = b'<Scanner batch="40"><filter>%s</filter></Scanner>' % f.encode().replace(b'"', b"&quot;")
path, _ = open_scanner("salted", xmlspec, xml=True)
bs = drain(path, xml=True) if path else None
check("salted prefix filter (xml)", bs is not None and [c for b in bs for c in b] == salted[2900:], bs and len(bs))


# ------------------------------------------------------------ hot swap
def load(v):
    r = subprocess.run([KILN, "load", "big", f"{TMP}/v{v}"], capture_output=True, text=True)
    return r.returncode == 0


def served(v, secs=10):
    """Wait until a plain get answers version v's value."""
    end = time.time() + secs
    while time.time() < end:
        st, _, b = call("GET", "/big/r00000/f:a")
        if st == 200 and cells_json(b)[0][2] == b"v%d-a-0" % v:
            return True
        time.sleep(0.05)
    return False


path, _ = open_scanner("big", {"batch": 500})
first = next_batch(path) if path else (0, [], None)
check("scanner open before the swap", first[0] == 200 and first[1] == model(1)[:500], first[0])
pathx, _ = open_scanner("big", b'<Scanner batch="700"/>', xml=True)
firstx = next_batch(pathx, xml=True) if pathx else (0, [], None)
check("load v2 while scanners are open", load(2) and served(2))
# a scanner made now reads v2, while the old ones stay on v1
path2, _ = open_scanner("big", {"batch": 1000})
mid = next_batch(path) if path else (0, [], None)
check("load v3 while scanners are open", load(3) and served(3))
rest = drain(path) if path else None
got = first[1] + mid[1] + ([c for b in rest for c in b] if rest else [])
check("scanner across two swaps reads v1 start to end", rest is not None and got == model(1),
      (len(got), got[len(first[1]) + len(mid[1]):][:2]))
check("its version header never changes", first[2] is not None and mid[2] == first[2], (first[2], mid[2]))
restx = drain(pathx, xml=True) if pathx else None
gotx = firstx[1] + ([c for b in restx for c in b] if restx else [])
check("xml scanner across two swaps reads v1", gotx == model(1), len(gotx))
rest2 = drain(path2) if path2 else None
check("scanner made between the swaps reads v2", rest2 is not None and [c for b in rest2 for c in b] == model(2))
path3, _ = open_scanner("big", {"batch": 1000})
rest3 = drain(path3) if path3 else None
check("a new scanner reads v3", rest3 is not None and [c for b in rest3 for c in b] == model(3))
# every scanner above was drained and closed
check("no scanner left open", call("GET", path or "/big/scanner/x")[0] == 404)
# ------------------------------------------------------------ bounds (second server)
if len(sys.argv) > 4:
    URL = sys.argv[4]   # --max-scanners 2 --scanner-idle 1 --scan-max-mb 1
    a, _ = open_scanner("big", {"batch": 10})
    b, _ = open_scanner("salted", {"batch": 10})
    c, err = open_scanner("big", {"batch": 10})
    check("a third scanner past --max-scanners 2 is 503", a and b and c is None and err[0] == 503
          and b"too_many_scanners" in err[1], err)
    check("an open scanner still answers", next_batch(a)[0] == 200)
    check("DELETE frees a slot", call("DELETE", a)[0] == 200 and open_scanner("big", {})[0] is not None)
    time.sleep(2.5)   # both idle past --scanner-idle 1
    d, err = open_scanner("big", {"batch": 10})
    check("idle scanners expire and free their slots", d is not None and call("GET", b)[0] == 404, err)
    st, _, body = call("GET", "/wide/*")
    check("an unpaged scan past --scan-max-mb is 413", st == 413 and b"paged=true" in body, (st, body[:200]))
    st, _, body = call("GET", "/wide/*?paged=true&limit=8")
    check("a paged one of that table answers", st == 200 and len(json.loads(body)["Row"]) == 8, st)
    st, _, body = call("GET", "/big/*")
    check("an unpaged scan under --scan-max-mb is whole", st == 200 and len(json.loads(body)["Row"]) == 2000, st)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
