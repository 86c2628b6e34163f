#!/usr/bin/env python3
"""tools_model.py -- the brute force behind the tests of HBase's MapReduce
tools (rowcounter, cellcounter, copytable, verifytables).

It generates a table's writes -- bulk lines for importtsv (several versions
per row, several families, rows with odd bytes) and online writes for
`kiln put` / `kiln delete` (row, family and column deletes, newer versions,
overwrites of a stored cell) -- and answers, from those writes alone and by
HBase's rules, what the tools must report. It shares no code with Kiln.

  gen --seed S --rows N --out DIR     input.tsv, ops.tsv, model.json
  rowcount MODEL [selection]          the rows with a visible cell
  rows MODEL [selection]              those rows, one a line, in order
  cellcounter MODEL [selection] [--sep S] [--regex RE] --out F --counters F
  cells MODEL [selection] [--rename A:X,...]   visible cells as lines
  raw MODEL [selection]               counts of the stored cells a raw read gives
  dump MODEL --part bulk|ops --family F [--salt N]   stored cells as dump lines
  scanjson [--rename A:X,...]         `kiln scan --json` on stdin as lines

selection: --phase 1|2 (1: the bulk load only; 2: with the online writes),
--versions N, --ts-min MS, --ts-max MS, --columns cf[:q],..., --start ROW,
--stop ROW, --prefix P (rows in printable form).

Lines are ROW<TAB>FAMILY:QUALIFIER<TAB>TS<TAB>VALUE in HBase's printable
form, rows ascending, columns ascending, newest version first.
"""
import argparse
import base64
import json
import os
import random
import re
import sys

FAMILIES = {"a": 3, "b": 2, "c": 1}       # family -> VERSIONS
COLUMNS = [("a", b"x"), ("a", b"y"), ("a", b"q:1"), ("b", b"z"), ("b", b"w"), ("c", b"v")]
T0 = 1700000000000
SPECIAL_ROWS = [b"bin\x00\x01key", b"hi\xff\xfe", b"sp ace", b"back\\slash", b"q:colon"]
PUT, DELETE_COLUMN, DELETE_FAMILY = 4, 12, 14


def printable(b):
    """HBase's Bytes.toStringBinary: printable ASCII but the backslash as is."""
    return "".join(chr(c) if 0x20 <= c < 0x7F and c != 0x5C else "\\x%02X" % c for c in b)


def unprintable(s):
    out = bytearray()
    i = 0
    while i < len(s):
        if s[i] == "\\" and s[i + 1:i + 2] == "x":
            out.append(int(s[i + 2:i + 4], 16))
            i += 4
        else:
            out += s[i].encode("latin-1")
            i += 1
    return bytes(out)


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC32C = _crc32c_table()


def salt_bucket(row, buckets):
    """The salt byte of a user row (docs/storage-format.md: salted keys):
    MurmurHash3's fmix32 of the row's CRC-32C, modulo the bucket count."""
    c = 0xFFFFFFFF
    for b in row:
        c = CRC32C[(c ^ b) & 0xFF] ^ (c >> 8)
    h = c ^ 0xFFFFFFFF
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h % buckets


TYPE_NAMES = {PUT: "Put", DELETE_COLUMN: "DeleteColumn", DELETE_FAMILY: "DeleteFamily"}


# ---------------------------------------------------------------- generation

def gen(args):
    rnd = random.Random(args.seed)
    rows = [b"row%05d" % i for i in range(args.rows)] + SPECIAL_ROWS
    alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .-"

    def value(lo, hi):
        v = bytes(rnd.choice(alphabet) for _ in range(rnd.randint(lo, hi)))
        if rnd.random() < 0.05:
            v += rnd.choice([b"\xe9", b"\\", b"\x01"])
        return v

    puts = []      # [row, family, qualifier, ts, value, seq]
    deletes = []   # [row, family or None, qualifier or None, ts, seq]
    lines = []
    seq = 0
    for r in rows:
        stamps = sorted(rnd.sample(range(31), rnd.randint(1, 4)))
        for k in stamps:
            ts = T0 + k * 1000
            fields = []
            for fam, q in COLUMNS:
                if rnd.random() < 0.55:
                    v = value(3, args.value_max)
                    fields.append(v)
                    puts.append([r, fam, q, ts, v, seq])
                    seq += 1
                else:
                    fields.append(b"")
            if not any(fields):
                v = value(3, args.value_max)
                fields[0] = v
                puts.append([r, COLUMNS[0][0], COLUMNS[0][1], ts, v, seq])
                seq += 1
            lines.append(b"\t".join([r] + fields + [str(ts).encode()]))
    rnd.shuffle(lines)      # importtsv: distinct (row, ts) per line, so order is free
    bulk_end = seq          # writes numbered below this are the bulk load's
    # online writes, applied in this order after the load
    ops = []
    victims = rnd.sample(rows, 16)
    for r in victims[:4]:
        ts = T0 + rnd.randint(5, 25) * 1000
        ops.append(("delete", r, None, None, ts))
    for r in victims[4:8]:
        ops.append(("delete", r, rnd.choice(sorted(FAMILIES)), None, T0 + rnd.randint(5, 25) * 1000))
    for r in victims[8:12]:
        fam, q = rnd.choice(COLUMNS)
        ops.append(("delete", r, fam, q, T0 + rnd.randint(5, 25) * 1000))
    for j, r in enumerate(victims[12:]):
        fam, q = rnd.choice(COLUMNS)
        ops.append(("put", r, fam, q, T0 + 40000 + j, value(2, 12)))
    # overwrites: the same key as a stored cell, later (so it wins)
    for p in rnd.sample(puts, 3):
        ops.append(("put", p[0], p[1], p[2], p[3], b"over-" + value(2, 6)))
    for j in range(2):
        ops.append(("put", b"zz-online-%d" % j, "b", b"z", T0 + 50000 + j, value(2, 12)))
    with open(os.path.join(args.out, "ops.tsv"), "w") as f:
        for op in ops:
            if op[0] == "delete":
                _, r, fam, q, ts = op
                col = "-" if fam is None else fam if q is None else fam + ":" + printable(q)
                f.write("delete\t%s\t%s\t%d\n" % (printable(r), col, ts))
                deletes.append([r, fam, q, ts, seq])
            else:
                _, r, fam, q, ts, v = op
                f.write("put\t%s\t%s:%s\t%s\t%d\n" % (printable(r), fam, printable(q), printable(v), ts))
                puts.append([r, fam, q, ts, v, seq])
            seq += 1
    with open(os.path.join(args.out, "input.tsv"), "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
    model = {
        "bulk_seq_end": bulk_end,
        "puts": [[p[0].hex(), p[1], p[2].hex(), p[3], p[4].hex(), p[5]] for p in puts],
        "deletes": [[d[0].hex(), d[1], d[2].hex() if d[2] is not None else None, d[3], d[4]]
                    for d in deletes],
    }
    with open(os.path.join(args.out, "model.json"), "w") as f:
        json.dump(model, f)
    columns = ",".join("%s:%s" % (fam, q.decode()) for fam, q in COLUMNS)
    print("HBASE_ROW_KEY,%s,HBASE_TS_KEY" % columns)


# ---------------------------------------------------------------- the model

class Model:
    def __init__(self, path, phase):
        m = json.load(open(path))
        end = m["bulk_seq_end"] if phase == 1 else 1 << 62
        self.puts = [(bytes.fromhex(r), f, bytes.fromhex(q), ts, bytes.fromhex(v), s)
                     for r, f, q, ts, v, s in m["puts"] if s < end]
        self.deletes = [(bytes.fromhex(r), f, bytes.fromhex(q) if q is not None else None, ts, s)
                        for r, f, q, ts, s in m["deletes"] if s < end]

    def stored(self):
        """(row, family, qualifier, ts, type) -> value of the stored cells,
        an equal key kept once (the later write's value), as a raw read
        returns them after its first-wins merge."""
        cells = {}
        for r, f, q, ts, v, s in sorted(self.puts, key=lambda p: p[5]):
            cells[(r, f, q, ts, PUT)] = v
        for r, f, q, ts, s in self.deletes:
            fams = sorted(FAMILIES) if f is None else [f]
            for fam in fams:
                if q is None:
                    cells[(r, fam, b"", ts, DELETE_FAMILY)] = b""
                else:
                    cells[(r, fam, q, ts, DELETE_COLUMN)] = b""
        return cells

    def visible(self, sel):
        """row -> [(family, qualifier, ts, value)] in HBase order."""
        latest = {}
        for r, f, q, ts, v, s in self.puts:
            k = (r, f, q, ts)
            if k not in latest or latest[k][1] < s:
                latest[k] = (v, s)
        fam_del, col_del = {}, {}
        for r, f, q, ts, s in self.deletes:
            for fam in (sorted(FAMILIES) if f is None else [f]):
                if q is None:
                    fam_del[(r, fam)] = max(fam_del.get((r, fam), -1 << 63), ts)
                else:
                    col_del[(r, fam, q)] = max(col_del.get((r, fam, q), -1 << 63), ts)
        cols = {}
        for (r, f, q, ts), (v, s) in latest.items():
            if not sel.row_ok(r) or not sel.column_ok(f, q):
                continue
            if ts <= fam_del.get((r, f), -1 << 63) or ts <= col_del.get((r, f, q), -1 << 63):
                continue
            if not (sel.ts_min <= ts < sel.ts_max):
                continue
            cols.setdefault((r, f, q), []).append((ts, v))
        out = {}
        for (r, f, q) in sorted(cols):
            vs = sorted(cols[(r, f, q)], reverse=True)[:min(sel.versions, FAMILIES[f])]
            out.setdefault(r, []).extend((f, q, ts, v) for ts, v in vs)
        return out

    def raw(self, sel):
        """The stored cells of the selected rows and families in the time
        range, in HBase order: (row, family, qualifier, ts, type, value)."""
        fams = sel.families()
        out = []
        for (r, f, q, ts, t), v in self.stored().items():
            if sel.row_ok(r) and (fams is None or f in fams) and sel.ts_min <= ts < sel.ts_max:
                out.append((r, f, q, ts, t, v))
        out.sort(key=lambda c: (c[0], c[1].encode(), c[2], -c[3], -c[4]))
        return out


class Selection:
    def __init__(self, a):
        self.versions = a.versions
        self.ts_min = a.ts_min
        self.ts_max = a.ts_max
        self.start = unprintable(a.start) if a.start else None
        self.stop = unprintable(a.stop) if a.stop else None
        self.prefix = unprintable(a.prefix) if a.prefix else None
        self.columns = None
        if a.columns:
            self.columns = []
            for c in a.columns.split(","):
                f, _, q = c.partition(":")
                self.columns.append((f, unprintable(q) if ":" in c else None))

    def row_ok(self, r):
        if self.start is not None and r < self.start:
            return False
        if self.stop is not None and r >= self.stop:
            return False
        return self.prefix is None or r.startswith(self.prefix)

    def column_ok(self, f, q):
        if self.columns is None:
            return True
        return any(f == cf and (cq is None or cq == q) for cf, cq in self.columns)

    def families(self):
        return None if self.columns is None else {f for f, _ in self.columns}


def add_selection(p):
    p.add_argument("model")
    p.add_argument("--phase", type=int, default=2)
    p.add_argument("--versions", type=int, default=1)
    p.add_argument("--ts-min", type=int, default=-(1 << 63))
    p.add_argument("--ts-max", type=int, default=(1 << 63) - 1)
    p.add_argument("--columns")
    p.add_argument("--start")
    p.add_argument("--stop")
    p.add_argument("--prefix")


def renames(spec):
    m = {}
    for part in (spec or "").split(","):
        if ":" in part:
            a, b = part.split(":", 1)
            m[a] = b
    return m


def cell_lines(cells_by_row, rename):
    """Lines in HBase order after renaming families (which may reorder them)."""
    out = []
    for r in sorted(cells_by_row):
        cells = [(rename.get(f, f), q, ts, v) for f, q, ts, v in cells_by_row[r]]
        cells.sort(key=lambda c: (c[0].encode(), c[1], -c[2]))
        out += ["%s\t%s:%s\t%d\t%s" % (printable(r), f, printable(q), ts, printable(v))
                for f, q, ts, v in cells]
    return out


# ---------------------------------------------------------------- answers

def cmd_rowcount(a):
    print(len(Model(a.model, a.phase).visible(Selection(a))))


def cmd_rows(a):
    for r in sorted(Model(a.model, a.phase).visible(Selection(a))):
        print(printable(r))


def cmd_cells(a):
    for line in cell_lines(Model(a.model, a.phase).visible(Selection(a)), renames(a.rename)):
        print(line)


def cmd_raw(a):
    sel = Selection(a)
    cells = Model(a.model, a.phase).raw(sel)
    markers = sum(1 for c in cells if c[4] != PUT)
    # stored twice: the bulk load's key written again online
    m = Model(a.model, a.phase)
    keys = {}
    for r, f, q, ts, v, s in m.puts:
        if sel.row_ok(r) and sel.ts_min <= ts < sel.ts_max and \
                (sel.families() is None or f in sel.families()):
            keys[(r, f, q, ts)] = keys.get((r, f, q, ts), 0) + 1
    repeated = sum(n - 1 for n in keys.values())
    print("cells=%d markers=%d repeated=%d rows=%d" % (len(cells), markers, repeated,
                                                        len({c[0] for c in cells})))


def cmd_dump(a):
    """One family's stored cells as `kiln hfile dump` lines, for `kiln hfile
    write`: the bulk load's (--part bulk) or the online writes' (--part ops),
    rows salted for a table of --salt buckets."""
    m = Model(a.model, 2)
    end = json.load(open(a.model))["bulk_seq_end"]
    part = Model.__new__(Model)
    if a.part == "bulk":
        part.puts = [p for p in m.puts if p[5] < end]
        part.deletes = [d for d in m.deletes if d[4] < end]
    else:
        part.puts = [p for p in m.puts if p[5] >= end]
        part.deletes = [d for d in m.deletes if d[4] >= end]
    for (r, f, q, ts, t), v in sorted(part.stored().items()):
        if f != a.family:
            continue
        if a.salt:
            r = bytes([salt_bucket(r, a.salt)]) + r
        print("%s\t%s:%s\t%d\t%s\t%s" % (printable(r), f, printable(q), ts, TYPE_NAMES[t],
                                          printable(v)))


def cmd_cellcounter(a):
    sel = Selection(a)
    vis = Model(a.model, a.phase).visible(sel)
    if a.regex:
        rx = re.compile(a.regex.encode("latin-1"))
        vis = {r: c for r, c in vis.items() if rx.search(r)}
    sep = a.sep
    report = {}
    fam_rows = {}
    total_cells = 0
    for r, cells in vis.items():
        report["Total ROWS"] = report.get("Total ROWS", 0) + 1
        total_cells += len(cells)
        seen = set()
        cols = {}
        for f, q, ts, v in cells:
            if f not in seen:
                seen.add(f)
                fam_rows[f] = fam_rows.get(f, 0) + 1
            cols[(f, q)] = cols.get((f, q), 0) + 1
        for (f, q), n in cols.items():
            report["Total Qualifiers across all Rows"] = report.get("Total Qualifiers across all Rows", 0) + 1
            fq = f + sep + printable(q)
            report[fq] = report.get(fq, 0) + 1
            report[printable(r) + sep + fq + "_Versions"] = n
    for f in fam_rows:
        report[f] = 1
    if fam_rows:
        report["Total Families Across all Rows"] = len(fam_rows)
    with open(a.out, "wb") as out:
        for k in sorted(report, key=lambda s: s.encode("latin-1")):
            out.write(("%s\t%d\n" % (k, report[k])).encode("latin-1"))
    with open(a.counters, "w") as out:
        g = "org.apache.hadoop.hbase.mapreduce.CellCounter$CellCounterMapper$Counters"
        lines = ["%s/ROWS=%d" % (g, len(vis)), "%s/CELLS=%d" % (g, total_cells)]
        lines += ["CF/%s=%d" % (f, fam_rows.get(f, 0)) for f in FAMILIES]
        out.write("\n".join(sorted(lines)) + "\n")


def cmd_scanjson(a):
    """`kiln scan --json` (HBase REST CellSet) on stdin as cell lines."""
    doc = json.load(sys.stdin)
    rename = renames(a.rename)
    by_row = {}
    for row in doc.get("Row", []):
        r = base64.b64decode(row["key"])
        for c in row.get("Cell", []):
            col = base64.b64decode(c["column"])
            f, _, q = col.partition(b":")
            by_row.setdefault(r, []).append((f.decode(), q, int(c["timestamp"]),
                                             base64.b64decode(c["$"])))
    for line in cell_lines(by_row, rename):
        print(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--rows", type=int, default=1000)
    g.add_argument("--value-max", type=int, default=40)
    g.add_argument("--out", required=True)
    g.set_defaults(fn=gen)
    for name, fn in (("rowcount", cmd_rowcount), ("rows", cmd_rows), ("cells", cmd_cells),
                     ("raw", cmd_raw),
                     ("cellcounter", cmd_cellcounter)):
        p = sub.add_parser(name)
        add_selection(p)
        p.set_defaults(fn=fn)
        if name == "cells":
            p.add_argument("--rename")
        if name == "cellcounter":
            p.add_argument("--sep", default=":")
            p.add_argument("--regex")
            p.add_argument("--out", required=True)
            p.add_argument("--counters", required=True)
    d = sub.add_parser("dump")
    d.add_argument("model")
    d.add_argument("--part", choices=["bulk", "ops"], required=True)
    d.add_argument("--family", required=True)
    d.add_argument("--salt", type=int, default=0)
    d.set_defaults(fn=cmd_dump)
    s = sub.add_parser("scanjson")
    s.add_argument("--rename")
    s.set_defaults(fn=cmd_scanjson)
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
