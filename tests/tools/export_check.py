#!/usr/bin/env python3
"""export_check.py -- the brute force of export_test.sh: a table's history
(loads of cells, online puts and deletes) made up from a seed, and HBase's
read semantics over it, computed here from that history alone.

  gen SEED DIR            write DIR/journal.json (the history), and
                          DIR/online.txt (the online writes, one a line:
                          put ROW COLUMN VALUE TS | delete ROW [COLUMN...] TS,
                          tab-separated, printable form, no field empty)
  loadfiles DIR K BUCKETS OUT
                          the cells event K (1-based: a load, or the online
                          writes as the cells they store) adds, as `kiln hfile
                          write` input, one file per family: OUT/<family>.txt
                          (stored rows: the bucket byte first when BUCKETS > 0)
  expect DIR [--versions N] [--raw] [--start-ts MS] [--end-ts MS]
         [--rename F:T] [--counts FILE]
                          the cells an export gives, as `kiln hfile dump` lines
                          in HBase order; --counts writes "rows cells markers"
  scan DIR --versions N   the cells `kiln scan --versions N` shows, as
                          ROW TAB COLUMN TAB TS TAB VALUE lines
  scanjson                `kiln scan --json` on stdin, as the lines above
  families EXPORT         the --family arguments of EXPORT/_export.json, one a line
  manifest EXPORT KEY     one member of EXPORT/_export.json

Semantics (HBase's, without KEEP_DELETED_CELLS): identical keys (row,
family, qualifier, timestamp, type) keep the latest write's value; a
DeleteFamily masks the family's Puts at or below its timestamp, a
DeleteFamilyVersion the family's Puts at exactly its timestamp, a
DeleteColumn the column's Puts at or below, a Delete the column's Put at
exactly; masking ignores the order of writes. A read returns per column the
newest min(versions, family VERSIONS) unmasked Puts inside [start, end); a
raw read every stored cell inside [start, end).
"""
import base64
import json
import os
import random
import sys

TYPES = {4: 'Put', 8: 'Delete', 10: 'DeleteFamilyVersion', 12: 'DeleteColumn', 14: 'DeleteFamily'}
PUT, DELETE, DELETE_FAMILY_VERSION, DELETE_COLUMN, DELETE_FAMILY = 4, 8, 10, 12, 14
FAMILIES = {'a': 3, 'b': 2}
QUALS = {'a': [b'x', b'y', b'', b'q\x00\x01'], 'b': [b'z', b'w']}


def printable(b):
    return ''.join(chr(c) if 0x20 <= c < 0x7f and c != 0x5c else '\\x%02X' % c for c in b)


# ---------------------------------------------------------------- salt

def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC_TABLE = _crc32c_table()


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = CRC_TABLE[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def fmix32(h):
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h


def salted(row, buckets):
    return bytes([fmix32(crc32c(row)) % buckets]) + row if buckets else row


# ---------------------------------------------------------------- the history

def gen(seed, d):
    rnd = random.Random(seed)
    rows = [b'r%04d' % i for i in range(0, 600, 2)]
    rows += [b'r0100\x00z', b'\x00start', b'\xff\xfeend', b'back\\slash', b'sp ace', b'r0301:x']
    rows.sort()

    def value():
        n = rnd.randint(0, 12)
        return bytes(rnd.choice(b'abcdefghij\x00\t\\\xff ') for _ in range(n))

    def cell(row, fam, qual, ts, typ, val=b''):
        return [row.hex(), fam, qual.hex(), ts, typ, val.hex()]

    marker_types = [DELETE, DELETE_COLUMN, DELETE_FAMILY, DELETE_FAMILY_VERSION]

    def markers(row, lo, hi, p):
        out = []
        if rnd.random() < p:
            fam = rnd.choice(sorted(FAMILIES))
            typ = rnd.choice(marker_types)
            qual = b'' if typ in (DELETE_FAMILY, DELETE_FAMILY_VERSION) else rnd.choice(QUALS[fam])
            out.append(cell(row, fam, qual, rnd.randint(lo, hi), typ))
        return out

    events = []
    # load 1 (replace): up to four versions per column, a few markers
    cells = []
    for row in rows:
        for fam in sorted(FAMILIES):
            for qual in QUALS[fam]:
                if rnd.random() < 0.45:
                    continue
                for ts in rnd.sample(range(1000, 1031), rnd.randint(1, 4)):
                    cells.append(cell(row, fam, qual, ts, PUT, value()))
        cells += markers(row, 1000, 1030, 0.15)
    events.append({'kind': 'load', 'mode': 'replace', 'cells': cells})
    # load 2 (append): new versions, the same key with a new value, markers
    first = cells
    cells = []
    for row in rows:
        if rnd.random() < 0.4:
            fam = rnd.choice(sorted(FAMILIES))
            qual = rnd.choice(QUALS[fam])
            for ts in rnd.sample(range(1031, 1061), rnd.randint(1, 3)):
                cells.append(cell(row, fam, qual, ts, PUT, value()))
        cells += markers(row, 1000, 1060, 0.1)
    for c in rnd.sample([c for c in first if c[4] == PUT], 25):
        cells.append(c[:5] + [(b'new-' + value()).hex()])
    events.append({'kind': 'load', 'mode': 'append', 'cells': cells})
    # online writes, then a flush
    ops = []
    for _ in range(14):
        row = rnd.choice(rows)
        fam = rnd.choice(sorted(FAMILIES))
        qual = rnd.choice(QUALS[fam])
        ops.append(['put', row.hex(), fam, qual.hex(), rnd.randint(1040, 1080),
                    (b'o' + value()).hex()])
    for c in rnd.sample([c for c in first if c[4] == PUT], 3):   # the same key: the flush wins
        ops.append(['put', c[0], c[1], c[2], c[3], (b'online-' + value()).hex()])
    for _ in range(10):
        row = rnd.choice(rows)
        k = rnd.randint(0, 2)
        ts = rnd.randint(1000, 1080)
        if k == 0:
            ops.append(['delete_row', row.hex(), ts])
        elif k == 1:
            ops.append(['delete_family', row.hex(), rnd.choice(sorted(FAMILIES)), ts])
        else:
            fam = rnd.choice(sorted(FAMILIES))
            qual = rnd.choice([q for q in QUALS[fam] if q])
            ops.append(['delete_column', row.hex(), fam, qual.hex(), ts])
    events.append({'kind': 'online', 'ops': ops})
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'journal.json'), 'w') as f:
        json.dump({'families': FAMILIES, 'events': events}, f)
    with open(os.path.join(d, 'online.txt'), 'w') as f:
        for op in ops:
            row = printable(bytes.fromhex(op[1]))
            if op[0] == 'put':
                col = op[2] + ':' + printable(bytes.fromhex(op[3]))
                f.write('put\t%s\t%s\t%s\t%d\n' % (row, col, printable(bytes.fromhex(op[5])), op[4]))
            elif op[0] == 'delete_row':
                f.write('delete\t%s\t%d\n' % (row, op[2]))
            elif op[0] == 'delete_family':
                f.write('delete\t%s\t%s\t%d\n' % (row, op[2], op[3]))
            else:
                f.write('delete\t%s\t%s\t%d\n' % (row, op[2] + ':' + printable(bytes.fromhex(op[3])),
                                                  op[4]))


def load_journal(d):
    with open(os.path.join(d, 'journal.json')) as f:
        return json.load(f)


def stored_cells(j):
    """Every stored cell: key (row, fam, qual, ts, type) -> value, the latest write's."""
    st = {}

    def put(row, fam, qual, ts, typ, val):
        st[(row, fam.encode(), qual, ts, typ)] = val

    for ev in j['events']:
        if ev['kind'] == 'load':
            if ev['mode'] == 'replace':
                st.clear()
            for r, fam, q, ts, typ, v in ev['cells']:
                put(bytes.fromhex(r), fam, bytes.fromhex(q), ts, typ, bytes.fromhex(v))
        else:
            for op in ev['ops']:
                row = bytes.fromhex(op[1])
                if op[0] == 'put':
                    put(row, op[2], bytes.fromhex(op[3]), op[4], PUT, bytes.fromhex(op[5]))
                elif op[0] == 'delete_row':
                    for fam in sorted(j['families']):
                        put(row, fam, b'', op[2], DELETE_FAMILY, b'')
                elif op[0] == 'delete_family':
                    put(row, op[2], b'', op[3], DELETE_FAMILY, b'')
                else:
                    put(row, op[2], bytes.fromhex(op[3]), op[4], DELETE_COLUMN, b'')
    return st


def order_key(k):
    row, fam, qual, ts, typ = k
    return (row, fam, qual, -ts, -typ)


def visible(j, versions, lo, hi):
    st = stored_cells(j)
    fams = {f.encode(): n for f, n in j['families'].items()}
    by_rf = {}
    for k, v in st.items():
        by_rf.setdefault((k[0], k[1]), []).append((k, v))
    out = {}
    for (row, fam), cells in by_rf.items():
        df = [k[3] for k, _ in cells if k[4] == DELETE_FAMILY]
        dfv = {k[3] for k, _ in cells if k[4] == DELETE_FAMILY_VERSION}
        dc, dv, puts = {}, {}, {}
        for k, v in cells:
            q = k[2]
            if k[4] == DELETE_COLUMN:
                dc.setdefault(q, []).append(k[3])
            elif k[4] == DELETE:
                dv.setdefault(q, set()).add(k[3])
            elif k[4] == PUT:
                puts.setdefault(q, []).append((k, v))
        limit = min(versions, fams[fam])
        for q, ps in puts.items():
            kept = 0
            for k, v in sorted(ps, key=lambda kv: -kv[0][3]):
                ts = k[3]
                if (df and ts <= max(df)) or ts in dfv or (q in dc and ts <= max(dc[q])) or \
                        ts in dv.get(q, ()):
                    continue
                if not lo <= ts < hi:
                    continue
                if kept == limit:
                    break
                out[k] = v
                kept += 1
    return out


def raw(j, lo, hi):
    return {k: v for k, v in stored_cells(j).items() if lo <= k[3] < hi}


def dump_line(k, v):
    row, fam, qual, ts, typ = k
    return '%s\t%s:%s\t%d\t%s\t%s' % (printable(row), printable(fam), printable(qual), ts,
                                       TYPES[typ], printable(v))


def expect(d, args):
    versions, is_raw, lo, hi, rename, counts = 1, False, -(1 << 63), (1 << 63) - 1, {}, None
    i = 0
    while i < len(args):
        a = args[i]
        if a == '--raw':
            is_raw = True
            i += 1
            continue
        v = args[i + 1]
        if a == '--versions':
            versions = int(v)
        elif a == '--start-ts':
            lo = int(v)
        elif a == '--end-ts':
            hi = int(v)
        elif a == '--rename':
            f, t = v.split(':')
            rename[f.encode()] = t.encode()
        elif a == '--counts':
            counts = v
        else:
            raise SystemExit('export_check expect: unknown argument %s' % a)
        i += 2
    j = load_journal(d)
    cells = raw(j, lo, hi) if is_raw else visible(j, versions, lo, hi)
    cells = {(k[0], rename.get(k[1], k[1])) + k[2:]: v for k, v in cells.items()}
    keys = sorted(cells, key=order_key)
    for k in keys:
        print(dump_line(k, cells[k]))
    if counts:
        with open(counts, 'w') as f:
            f.write('%d %d %d\n' % (len({k[0] for k in keys}), len(keys),
                                    sum(1 for k in keys if k[4] != PUT)))


def online_cells(j, ev):
    """The cells an event of online writes stores, the later write of a key winning."""
    st = {}
    for op in ev['ops']:
        row = op[1]
        if op[0] == 'put':
            st[(row, op[2], op[3], op[4], PUT)] = op[5]
        elif op[0] == 'delete_row':
            for fam in sorted(j['families']):
                st[(row, fam, '', op[2], DELETE_FAMILY)] = ''
        elif op[0] == 'delete_family':
            st[(row, op[2], '', op[3], DELETE_FAMILY)] = ''
        else:
            st[(row, op[2], op[3], op[4], DELETE_COLUMN)] = ''
    return [list(k) + [v] for k, v in st.items()]


def loadfiles(d, k, buckets, out):
    j = load_journal(d)
    ev = j['events'][k - 1]
    cells = ev['cells'] if ev['kind'] == 'load' else online_cells(j, ev)
    os.makedirs(out, exist_ok=True)
    files = {}
    for r, fam, q, ts, typ, v in cells:
        if fam not in files:
            files[fam] = open(os.path.join(out, fam + '.txt'), 'w')
        row = salted(bytes.fromhex(r), buckets)
        files[fam].write(dump_line((row, fam.encode(), bytes.fromhex(q), ts, typ),
                                   bytes.fromhex(v)) + '\n')
    for f in files.values():
        f.close()


def scanjson(text):
    dec = json.JSONDecoder()
    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return
        doc, i = dec.raw_decode(text, i)
        for r in doc.get('Row', []):
            row = base64.b64decode(r['key'])
            for c in r['Cell']:
                col = base64.b64decode(c['column'])
                fam, _, qual = col.partition(b':')
                print('%s\t%s:%s\t%d\t%s' % (printable(row), printable(fam), printable(qual),
                                             c['timestamp'], printable(base64.b64decode(c['$']))))


def main(argv):
    if len(argv) < 2 or argv[1] in ('-h', '--help'):
        print(__doc__)
        return 0
    cmd = argv[1]
    if cmd == 'gen':
        gen(int(argv[2]), argv[3])
    elif cmd == 'loadfiles':
        loadfiles(argv[2], int(argv[3]), int(argv[4]), argv[5])
    elif cmd == 'expect':
        expect(argv[2], argv[3:])
    elif cmd == 'scan':
        j = load_journal(argv[2])
        cells = visible(j, int(argv[4]), -(1 << 63), (1 << 63) - 1)
        # kiln scan shows a row's cells in HBase order too
        for k in sorted(cells, key=order_key):
            print('\t'.join(dump_line(k, cells[k]).split('\t')[:3] + [printable(cells[k])]))
    elif cmd == 'scanjson':
        scanjson(sys.stdin.read())
    elif cmd == 'families':
        with open(os.path.join(argv[2], '_export.json')) as f:
            for fam in json.load(f)['families']:
                print(fam['spec'])
    elif cmd == 'manifest':
        with open(os.path.join(argv[2], '_export.json')) as f:
            v = json.load(f)[argv[3]]
        print(json.dumps(v) if isinstance(v, (list, dict, bool)) or v is None else v)
    else:
        raise SystemExit('export_check: unknown command %s' % cmd)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
