#!/usr/bin/env python3
"""cellset_bodies.py OUTDIR [SEED] -- HBase REST CellSet bodies written by
stock encoders, for test_cellset_parse: json, xml.etree.ElementTree, and a
protobuf encoder written here from the field numbers of HBase's
CellSetMessage.proto / CellMessage.proto (CellSet.rows = 1; Row.key = 1,
Row.values = 2; Cell.row = 1, column = 2, timestamp = 3, data = 4). Nothing
of Kiln's code is used.

For each case NAME it writes NAME.json, NAME.xml, NAME.pb and NAME.expect,
the model the three must parse to, one line a row or a cell:
  R HAS_KEY KEYHEX
  C HAS_COLUMN COLHEX TS|L VALUEHEX
(hex "-" for empty; L: no timestamp given). The case list goes to
OUTDIR/cases."""
import base64
import json
import os
import random
import sys
import xml.etree.ElementTree as ET

out = sys.argv[1]
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
rng = random.Random(seed)
os.makedirs(out, exist_ok=True)


def b64(b):
    return base64.b64encode(b).decode()


# ---- protobuf, by the wire format (varint keys, length-delimited fields)
def varint(v):
    v &= (1 << 64) - 1
    o = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            o.append(b | 0x80)
        else:
            o.append(b)
            return bytes(o)


def field_bytes(n, b):
    return varint(n << 3 | 2) + varint(len(b)) + b


def field_varint(n, v):
    return varint(n << 3 | 0) + varint(v)


def pb_cellset(rows):
    msg = b""
    for key, cells in rows:
        r = b"" if key is None else field_bytes(1, key)
        for col, ts, val in cells:
            c = b""
            if col is not None:
                c += field_bytes(2, col)
            if ts is not None:
                c += field_varint(3, ts)
            c += field_bytes(4, val)
            r += field_bytes(2, c)
        msg += field_bytes(1, r)
    return msg


def json_cellset(rows):
    doc = {"Row": []}
    for key, cells in rows:
        r = {}
        if key is not None:
            r["key"] = b64(key)
        r["Cell"] = []
        for col, ts, val in cells:
            c = {}
            if col is not None:
                c["column"] = b64(col)
            if ts is not None:
                c["timestamp"] = ts
            c["$"] = b64(val)
            r["Cell"].append(c)
        doc["Row"].append(r)
    return json.dumps(doc).encode()


def xml_cellset(rows, pretty):
    root = ET.Element("CellSet")
    for key, cells in rows:
        r = ET.SubElement(root, "Row")
        if key is not None:
            r.set("key", b64(key))
        for col, ts, val in cells:
            c = ET.SubElement(r, "Cell")
            if col is not None:
                c.set("column", b64(col))
            if ts is not None:
                c.set("timestamp", str(ts))
            c.text = b64(val)
    if pretty:
        ET.indent(root)
    return ET.tostring(root, encoding="UTF-8", xml_declaration=True)


def expect(rows):
    hx = lambda b: b.hex() if b else "-"
    lines = []
    for key, cells in rows:
        lines.append(f"R {0 if key is None else 1} {hx(key or b'')}")
        for col, ts, val in cells:
            lines.append(f"C {0 if col is None else 1} {hx(col or b'')} "
                         f"{'L' if ts is None else ts} {hx(val)}")
    return "\n".join(lines) + "\n"


def rand_bytes(lo, hi):
    return bytes(rng.randrange(256) for _ in range(rng.randint(lo, hi)))


cases = {
    "one": [(b"row1", [(b"f:q", 1700000000000, b"value")])],
    "binary": [(b"\x00\xff<&>\"'", [(b"f:\x00q\xff", 5, b"\x00\x01\x02&<"),
                                    (b"f:", 7, b""),
                                    (b"cf:" + bytes(range(256)), 9, bytes(range(255, -1, -1)))])],
    "multirow": [(b"a", [(b"f:x", None, b"1"), (b"g:y", 3, b"2")]),
                 (b"b", [(b"f:x", 4, b"3")]),
                 (b"c" * 300, [(b"f:" + b"q" * 1000, 0, b"v" * 5000)])],
    "nokey": [(None, [(b"f:q", None, b"x")])],
    "nocolumn": [(b"r", [(None, 2, b"a"), (b"f:b", None, b"b"), (None, None, b"c")])],
    "family_only": [(b"r", [(b"f", 1, b"x")])],
    "empty_row": [(b"r", [])],
    "bigts": [(b"r", [(b"f:q", 2**63 - 2, b"x")])],
}
rand_rows = []
for _ in range(rng.randint(1, 40)):
    cells = [(b"f:" + rand_bytes(0, 20), rng.choice([None, rng.randrange(2**62)]),
              rand_bytes(0, 200)) for _ in range(rng.randint(1, 8))]
    rand_rows.append((rand_bytes(1, 60), cells))
cases["random"] = rand_rows

for name, rows in cases.items():
    with open(os.path.join(out, name + ".json"), "wb") as f:
        f.write(json_cellset(rows))
    with open(os.path.join(out, name + ".xml"), "wb") as f:
        f.write(xml_cellset(rows, pretty=(name == "multirow")))
    with open(os.path.join(out, name + ".pb"), "wb") as f:
        f.write(pb_cellset(rows))
    with open(os.path.join(out, name + ".expect"), "w") as f:
        f.write(expect(rows))
with open(os.path.join(out, "cases"), "w") as f:
    f.write("\n".join(cases) + "\n")
