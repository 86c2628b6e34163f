#!/usr/bin/env python3
"""write_test.py URL PROTO_DIR -- HBase REST writes of kiln-server, issued and
read back with code that shares nothing with it: urllib, json, xml.etree and
protobuf classes protoc generated from hbase_rest.proto into PROTO_DIR. The
table `t` (families f and g, f keeping 3 versions) holds the loaded row
`loaded` (f:q = batch, ts 5). Prints "N passed, N failed"."""
import base64, json, sys, urllib.request, urllib.error, urllib.parse
import xml.etree.ElementTree as ET

URL, PROTO = sys.argv[1], sys.argv[2]
sys.path.insert(0, PROTO)
import hbase_rest_pb2 as pb  # noqa: E402

passed = failed = 0
JSON, XML, PB, RAW = "application/json", "text/xml", "application/x-protobuf", "application/octet-stream"


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {name} {detail}"[:700])


def call(method, path, body=None, ctype=None, accept=JSON, headers=None):
    req = urllib.request.Request(URL + path, method=method, data=body)
    req.add_header("Accept", accept)
    if ctype:
        req.add_header("Content-Type", ctype)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


b64 = lambda b: base64.b64encode(b).decode()
q = lambda b: urllib.parse.quote(b, safe="")


def cellset_json(rows):
    return json.dumps({"Row": [{"key": b64(k), "Cell": [
        dict({"column": b64(c), "$": b64(v)}, **({"timestamp": ts} if ts is not None else {}))
        for c, ts, v in cells]} for k, cells in rows]}).encode()


def cellset_xml(rows):
    root = ET.Element("CellSet")
    for k, cells in rows:
        r = ET.SubElement(root, "Row", key=b64(k))
        for c, ts, v in cells:
            e = ET.SubElement(r, "Cell", column=b64(c))
            if ts is not None:
                e.set("timestamp", str(ts))
            e.text = b64(v)
    return ET.tostring(root)


def cellset_pb(rows):
    cs = pb.CellSet()
    for k, cells in rows:
        r = cs.rows.add()
        r.key = k
        for c, ts, v in cells:
            cell = r.values.add()
            cell.column = c
            cell.data = v
            if ts is not None:
                cell.timestamp = ts
    return cs.SerializeToString()


def get_cells(row, column="", v=None):
    """(column, ts, value) of a row through GET in JSON, or None on 404."""
    path = "/t/" + q(row) + ("/" + q(column) if column else "") + (f"?v={v}" if v else "")
    st, body = call("GET", path)
    if st == 404:
        return None
    d = json.loads(body)
    return [(base64.b64decode(c["column"]), c["timestamp"], base64.b64decode(c["$"]))
            for r in d["Row"] for c in r["Cell"]]


def value(row, column):
    st, body = call("GET", "/t/" + q(row) + "/" + q(column), accept=RAW)
    return body if st == 200 else None


# ---- a raw value: PUT /TABLE/ROW/COLUMN with application/octet-stream
st, _ = call("PUT", "/t/w1/f:a", b"hello", RAW)
check("raw PUT 200", st == 200, st)
check("raw PUT reads back (octet-stream)", value(b"w1", b"f:a") == b"hello")
st, _ = call("POST", "/t/w1/f:b/1234", b"\x00\xffbin", RAW)
check("raw POST with a path timestamp", st == 200 and get_cells(b"w1", b"f:b") == [(b"f:b", 1234, b"\x00\xffbin")],
      get_cells(b"w1", b"f:b"))
st, _ = call("PUT", "/t/w1/f:c", b"x", RAW, headers={"X-Timestamp": "77"})
check("X-Timestamp header", get_cells(b"w1", b"f:c") == [(b"f:c", 77, b"x")], get_cells(b"w1", b"f:c"))

# ---- CellSet bodies in the three encodings, several rows at /TABLE/fakerow
rows = [(b"m\x00bin", [(b"f:x", 10, b"one"), (b"g:y", 11, b"\x01\x02")]), (b"m2", [(b"f:x", None, b"two")])]
st, _ = call("PUT", "/t/fakerow", cellset_json(rows), JSON)
check("JSON CellSet of two rows 200", st == 200, st)
check("JSON row 1 reads back", get_cells(b"m\x00bin") == [(b"f:x", 10, b"one"), (b"g:y", 11, b"\x01\x02")],
      get_cells(b"m\x00bin"))
check("JSON row 2 reads back, server time", (get_cells(b"m2") or [(0, 0, 0)])[0][2] == b"two"
      and get_cells(b"m2")[0][1] > 1600000000000, get_cells(b"m2"))
st, _ = call("POST", "/t/fakerow", cellset_xml([(b"x1", [(b"f:q", 20, b"<&xml>")])]), XML)
st2, body = call("GET", "/t/x1", accept=XML)
cells = [(base64.b64decode(c.get("column")), int(c.get("timestamp")), base64.b64decode(c.text or ""))
         for c in ET.fromstring(body).iter("Cell")] if st2 == 200 else None
check("XML CellSet POST, read back as XML", st == 200 and cells == [(b"f:q", 20, b"<&xml>")], (st, body))
st, _ = call("PUT", "/t/p1", cellset_pb([(b"p1", [(b"f:q", 30, b"proto"), (b"f:r", 31, b"")])]), PB)
st2, body = call("GET", "/t/p1", accept=PB)
cs = pb.CellSet()
cs.ParseFromString(body)
got = [(c.column, c.timestamp, c.data) for r in cs.rows for c in r.values]
check("protobuf CellSet PUT, read back as protobuf", st == 200 and got == [(b"f:q", 30, b"proto"), (b"f:r", 31, b"")],
      (st, got))
# a row without a key takes the path's, a cell without a column the path's
body = json.dumps({"Row": [{"Cell": [{"$": b64(b"pathed")}]}]}).encode()
st, _ = call("PUT", "/t/k1/f:pc", body, JSON)
check("key and column from the path", st == 200 and value(b"k1", b"f:pc") == b"pathed", st)

# ---- versions, deletes
for ts in (1000, 2000, 3000):
    call("PUT", f"/t/d1/f:v/{ts}", b"v%d" % ts, RAW)
check("three versions kept", [c[1] for c in get_cells(b"d1", b"f:v", 3) or []] == [3000, 2000, 1000],
      get_cells(b"d1", b"f:v", 3))
st, _ = call("DELETE", "/t/d1/f:v/2000")
check("DELETE column at TS: versions at or before it go", st == 200 and
      [c[1] for c in get_cells(b"d1", b"f:v", 3) or []] == [3000], get_cells(b"d1", b"f:v", 3))
st, _ = call("DELETE", "/t/d1/f:v")
check("DELETE column: every version", st == 200 and get_cells(b"d1", b"f:v", 3) is None, st)
call("PUT", "/t/d2", cellset_json([(b"d2", [(b"f:a", None, b"1"), (b"g:b", None, b"2")])]), JSON)
st, _ = call("DELETE", "/t/d2/g")
check("DELETE family", st == 200 and [c[0] for c in get_cells(b"d2") or []] == [b"f:a"], get_cells(b"d2"))
st, _ = call("DELETE", "/t/d2")
check("DELETE row", st == 200 and get_cells(b"d2") is None, st)
call("PUT", "/t/d3/f:a/500", b"old", RAW)
st, _ = call("DELETE", "/t/d3//400")
check("DELETE row at an older TS keeps newer cells", st == 200 and value(b"d3", b"f:a") == b"old", st)
st, _ = call("DELETE", "/t/d3//500")
check("DELETE row at TS", st == 200 and get_cells(b"d3") is None, st)
# the loaded (batch) row: a write overrides it, a delete masks it
check("loaded row before", value(b"loaded", b"f:q") == b"batch")
call("PUT", "/t/loaded/f:q", b"online", RAW)
check("write over a loaded row wins", value(b"loaded", b"f:q") == b"online")
call("DELETE", "/t/loaded")
check("delete masks the loaded row", get_cells(b"loaded") is None)

# ---- check-and-put, check-and-delete (HBase: last cell is the check; 304 on failure)
call("PUT", "/t/c1/f:s", b"old", RAW)
body = cellset_json([(b"c1", [(b"f:s", None, b"new"), (b"f:s", None, b"old")])])
st, _ = call("PUT", "/t/c1?check=put", body, JSON)
check("check=put matching: 200", st == 200 and value(b"c1", b"f:s") == b"new", (st, value(b"c1", b"f:s")))
st, _ = call("PUT", "/t/c1?check=put", body, JSON)
check("check=put stale: 304, unchanged", st == 304 and value(b"c1", b"f:s") == b"new", (st, value(b"c1", b"f:s")))
body = cellset_xml([(b"c1", [(b"f:other", None, b"o"), (b"f:s", None, b"new")])])
st, _ = call("PUT", "/t/c1?check=put", body, XML)
check("check=put whose check column is not put: 400", st == 400, st)
st, _ = call("PUT", "/t/c1?check=delete", cellset_json([(b"c1", [(b"f:s", None, b"nope")])]), JSON)
check("check=delete stale: 304", st == 304 and value(b"c1", b"f:s") == b"new", st)
st, _ = call("PUT", "/t/c1?check=delete", cellset_pb([(b"c1", [(b"f:s", None, b"new")])]), PB)
check("check=delete matching: 200, column gone", st == 200 and value(b"c1", b"f:s") is None, st)
call("PUT", "/t/c2/f:s", b"v", RAW)
st, _ = call("DELETE", "/t/c2?check=delete", cellset_json([(b"c2", [(b"f:s", None, b"v")])]), JSON)
check("DELETE ?check=delete", st == 200 and value(b"c2", b"f:s") is None, st)

# ---- increment (8-byte counters) and append, rr=true answers the new values
st, body = call("POST", "/t/n1?check=increment&rr=true", cellset_json([(b"n1", [(b"f:ctr", None, b"5")])]), JSON)
cell = json.loads(body)["Row"][0]["Cell"][0] if st == 200 else {}
check("increment rr=true answers 8 bytes", st == 200 and base64.b64decode(cell.get("$", "")) == (5).to_bytes(8, "big"),
      (st, body))
check("increment rr=true answers the cell's timestamp", 1600000000000 < cell.get("timestamp", 0) < 2**62
      and get_cells(b"n1", b"f:ctr")[0][1] == cell.get("timestamp"), (cell, get_cells(b"n1", b"f:ctr")))
st, _ = call("POST", "/t/n1?check=increment", cellset_json([(b"n1", [(b"f:ctr", None, b"-2")])]), JSON)
check("increment again", st == 200 and value(b"n1", b"f:ctr") == (3).to_bytes(8, "big"), value(b"n1", b"f:ctr"))
st, _ = call("POST", "/t/n1?check=increment", cellset_json([(b"n1", [(b"f:ctr", None, b"x")])]), JSON)
check("increment by a non-number: 400", st == 400, st)
call("PUT", "/t/a1/f:s", b"ab", RAW)
st, body = call("POST", "/t/a1?check=append&rr=true", cellset_json([(b"a1", [(b"f:s", None, b"cd")])]), JSON)
check("append", st == 200 and value(b"a1", b"f:s") == b"abcd", (st, body))

# ---- errors
st, _ = call("PUT", "/nosuchtable/r/f:q", b"x", RAW)
check("unknown table 404", st == 404, st)
st, body = call("PUT", "/t/r/zz:q", b"x", RAW)
check("unknown family 400", st == 400, (st, body))
st, body = call("PUT", "/t/r", b"{not json", JSON)
check("malformed JSON 400 names it", st == 400 and b"JSON" in body, (st, body))
st, body = call("PUT", "/t/r", b"<CellSet><Row key='cg=='><Cell column='@@'>eA==</Cell></Row></CellSet>", XML)
check("bad base64 column 400 names it", st == 400 and b"column is not valid base64" in body, (st, body))
st, body = call("PUT", "/t/r", cellset_json([(b"r", [(b"f", None, b"x")])]), JSON)
check("a family without ':' 400", st == 400, (st, body))
st, _ = call("PUT", "/t/r?check=bogus", cellset_json([(b"r", [(b"f:q", None, b"x")])]), JSON)
check("invalid check value 400", st == 400, st)
st, _ = call("PUT", "/t/r/f:q?durability=NOPE", b"x", RAW)
check("bad durability 400", st == 400, st)
for d in ("ASYNC_WAL", "SKIP_WAL", "SYNC_WAL"):
    st, _ = call("PUT", f"/t/dur/f:{d}?durability={d}", d.encode(), RAW)
    check(f"durability={d}", st == 200 and value(b"dur", b"f:" + d.encode()) == d.encode(), st)
st, _ = call("PUT", "/t/r*", cellset_json([(b"r", [(b"f:q", None, b"x")])]), JSON)
check("a glob is no write target: 400", st == 400, st)

# ---- the stateful scanner protocol sees the writes
req = urllib.request.Request(URL + "/t/scanner", method="PUT",
                             data=json.dumps({"startRow": b64(b"m"), "endRow": b64(b"n"), "batch": 100}).encode())
req.add_header("Content-Type", JSON)
with urllib.request.urlopen(req) as r:
    loc = r.headers.get("Location")
st, body = call("GET", urllib.parse.urlparse(loc).path) if loc else (0, b"")
keys = [base64.b64decode(r["key"]) for r in json.loads(body)["Row"]] if st == 200 else []
check("scanner reads the written rows", keys == [b"m\x00bin", b"m2"], (st, keys))

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
