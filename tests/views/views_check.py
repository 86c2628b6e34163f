#!/usr/bin/env python3
"""views_check.py -- brute-force reference for the view jobs' end-to-end tests.

Reads the same raw input the jobs read and computes, from the written-down
rules (docs/views.md, the jobs' header comments) and nothing of the jobs'
code, every cell each view must hold and the answers to its queries. Output
is text the test scripts compare with `cmp`:

  expect VIEW [--buckets B] [--job-time MS] [--salt N] --out DIR INPUT... [-- QUERY...]
      DIR/cells[.LAYOUT].txt  every expected cell in `kiln hfile dump` form
                              (ROW TAB FAMILY:QUALIFIER TAB TS TAB Put TAB
                              VALUE, printable form), sorted bytewise; with
                              --salt N (or --salt-buckets N) each row under its bucket byte, as a
                              table of N salt buckets stores it
      DIR/rows[.LAYOUT].txt   the number of rows
      DIR/counters.txt        NAME=VALUE lines of the job's own counters
      DIR/qN.txt              the cells the N-th QUERY returns, in order, one
                              `ROW TAB FAMILY:QUALIFIER TAB TS TAB VALUE` line
                              each (queries: see query() below; tslog's start
                              with the layout: "byhost host web-01.iad ...";
                              graph's are lines of their own: graph_query())
  json             the same lines from HBase REST CellSet JSON (kiln --json,
                   kiln-server) on stdin; several documents may follow
  pct64 B          percent-encode a key given in base64 (next_startrow)
  next / lastrow   from one CellSet on stdin: its next_startrow (base64), or
                   its last row + \x00 in printable form (the next --start)
  graphpick INPUT...  graph nodes worth asking about, NAME=ID lines (graph_pick)

Inputs are given as the jobs take them: files or directories (walked in name
order, names starting with '.' or '_' skipped); orders takes
customers=PATH orders=PATH lines=PATH.
"""
import base64
import json
import os
import re
import struct
import sys

I64_MAX = (1 << 63) - 1
U32_MAX = (1 << 32) - 1
TEXT_MAX = 4096


# ---------------------------------------------------------------- input

def walk(path):
    if os.path.isfile(path):
        return [path]
    out = []
    for name in sorted(os.listdir(path)):
        if name.startswith('.') or name.startswith('_'):
            continue
        out.extend(walk(os.path.join(path, name)))
    return out


def lines_of(path):
    with open(path, 'rb') as f:
        data = f.read()
    parts = data.split(b'\n')
    if parts and parts[-1] == b'':
        parts.pop()
    for p in parts:
        yield p[:-1] if p.endswith(b'\r') else p


def records(paths):
    """Every input line in the order the job numbers them (file, offset)."""
    for p in paths:
        for f in walk(p):
            for line in lines_of(f):
                yield line


def u32(b):
    if not re.fullmatch(rb'[0-9]{1,10}', b):
        return None
    v = int(b)
    return v if v <= U32_MAX else None


def i64(b):
    if not re.fullmatch(rb'-?[0-9]{1,19}', b):
        return None
    v = int(b)
    return v if -I64_MAX - 1 <= v <= I64_MAX else None


def text_ok(b):
    return len(b) <= TEXT_MAX and b'\0' not in b


def printable(b):
    return ''.join(chr(c) if 0x20 <= c < 0x7f and c != 0x5c else '\\x%02X' % c for c in b)


class View:
    """rows: row key -> list of (family, qualifier, ts, value), in cell order."""

    def __init__(self):
        self.rows = {}
        self.counters = {}

    def count(self, name, n=1):
        self.counters[name] = self.counters.get(name, 0) + n

    def put(self, row, cells):
        self.rows[row] = sorted(cells, key=lambda c: (c[0], c[1]))

    def sorted_rows(self):
        return sorted(self.rows)


def cell_line(row, c, dump=False):
    fam, qual, ts, val = c
    col = printable(fam) + ':' + printable(qual)
    if dump:
        return '%s\t%s\t%d\tPut\t%s' % (printable(row), col, ts, printable(val))
    return '%s\t%s\t%d\t%s' % (printable(row), col, ts, printable(val))


# ---------------------------------------------------------------- views

def build_useractions(opts, inputs):
    v = View()
    latest = {}
    bad = 0
    for line in records(inputs):
        f = line.split(b'\t')
        if len(f) != 5:
            bad += 1
            continue
        user, ts, aid = u32(f[0]), i64(f[1]), u32(f[2])
        if user is None or ts is None or ts < 0 or aid is None or not f[3] \
                or not text_ok(f[3]) or not text_ok(f[4]):
            bad += 1
            continue
        row = struct.pack('>IqI', user, I64_MAX - ts, aid)
        if row in latest:
            v.count('Duplicate rows (last line kept)')
        latest[row] = (ts, f[3], f[4])
    for row, (ts, name, detail) in latest.items():
        cells = [(b'content', b'name', ts, name)]
        if detail:
            cells.append((b'content', b'detail', ts, detail))
        v.put(row, cells)
    v.count('Bad Lines', bad)
    return v


def fnv1a32(b):
    h = 2166136261
    for c in b:
        h ^= c
        h = (h * 16777619) & 0xFFFFFFFF
    return h


def build_tslog(opts, inputs):
    """Three views: tables['bytime'|'byhost'|'stats']."""
    buckets = int(opts.get('buckets', 8))
    events = {}
    bad = 0
    dups = 0
    for line in records(inputs):
        f = line.split(b'\t')
        if len(f) != 4:
            bad += 1
            continue
        host, ts, event, value = f[0], i64(f[1]), f[2], i64(f[3])
        if not host or len(host) > 255 or b'\0' in host or ts is None or ts < 0 \
                or not event or len(event) > 255 or b'\0' in event or value is None:
            bad += 1
            continue
        k = (host, event, ts)
        if k in events:
            dups += 1
        events[k] = value
    bytime, byhost, stats = View(), View(), View()
    minutes = {}
    for (host, event, ts), value in events.items():
        val = str(value).encode()
        rest = struct.pack('>Q', ts) + host + b'\0' + event
        bytime.put(bytes([fnv1a32(rest) % buckets]) + rest, [(b'd', b'v', ts, val)])
        byhost.put(host + b'\0' + event + b'\0' + struct.pack('>Q', ts), [(b'd', b'v', ts, val)])
        minute = ts - ts % 60000
        minutes.setdefault((minute, host, event), []).append(value)
    for (minute, host, event), vals in minutes.items():
        stats.put(struct.pack('>Q', minute) + host + b'\0' + event,
                  [(b's', b'count', minute, str(len(vals)).encode()),
                   (b's', b'max', minute, str(max(vals)).encode()),
                   (b's', b'min', minute, str(min(vals)).encode()),
                   (b's', b'sum', minute, str(sum(vals)).encode())])
    # each repeated event is one replaced row in bytime and one in byhost
    bytime.count('Bad Lines', bad)
    bytime.count('Duplicate rows (last line kept)', 2 * dups)
    return {'bytime': bytime, 'byhost': byhost, 'stats': stats}


def build_orders(opts, inputs):
    ts = int(opts['job-time'])
    v = View()
    roles = {}
    for spec in inputs:
        role, _, path = spec.partition('=')
        roles.setdefault(role, []).append(path)
    bad = 0
    customers = {}
    for line in records(roles.get('customers', [])):
        f = line.split(b'\t')
        cid = u32(f[0]) if len(f) == 5 else None
        if cid is None or not f[1] or not all(text_ok(x) for x in f[1:]):
            bad += 1
            continue
        if cid in customers:
            v.count('Duplicate rows (last line kept)')
        customers[cid] = f[1:]
    orders = {}
    for line in records(roles.get('orders', [])):
        f = line.split(b'\t')
        oid = u32(f[0]) if len(f) == 4 else None
        cid = u32(f[1]) if len(f) == 4 else None
        if oid is None or cid is None or not all(text_ok(x) for x in f[1:]) \
                or not f[2] or not f[3]:
            bad += 1
            continue
        if oid in orders:
            v.count('Duplicate rows (last line kept)')
        orders[oid] = (cid, f[2], f[3])
    lines = {}
    for line in records(roles.get('lines', [])):
        f = line.split(b'\t')
        ok = len(f) == 5
        oid = u32(f[0]) if ok else None
        no = u32(f[1]) if ok else None
        if oid is None or no is None or not all(text_ok(x) for x in f[1:]) or not f[2] \
                or u32(f[3]) is None or u32(f[4]) is None:
            bad += 1
            continue
        if oid not in orders:
            v.count('Lines without an order (dropped)')
            continue
        if (oid, no) in lines and orders[oid][0] in customers:
            v.count('Duplicate rows (last line kept)')   # lines of dropped orders are not
        lines[(oid, no)] = f[2:]
    by_order = {}
    for (oid, no), f in lines.items():
        by_order.setdefault(oid, []).append((no, f))
    cells = {cid: [] for cid in customers}
    for oid, (cid, date, status) in orders.items():
        if cid not in customers:
            v.count('Orders without a customer (dropped)')
            continue
        if oid not in by_order:
            v.count('Orders without lines')
            continue
        for no, f in by_order[oid]:
            val = b'|'.join([date, status] + list(f))
            cells[cid].append((b'o', struct.pack('>II', oid, no), ts, val))
    for cid, c in customers.items():
        name, email, city, since = c
        v.put(struct.pack('>I', cid), cells[cid] + [
            (b'c', b'name', ts, name), (b'c', b'email', ts, email),
            (b'c', b'city', ts, city), (b'c', b'since', ts, since)])
    v.count('Bad Lines', bad)
    return v


def build_follows(opts, inputs):
    v = View()
    edges = {}
    bad = 0
    for line in records(inputs):
        f = line.split(b'\t')
        if len(f) != 3:
            bad += 1
            continue
        a, x, ts = u32(f[0]), u32(f[1]), i64(f[2])
        if a is None or x is None or a == x or ts is None or ts < 0:
            bad += 1
            continue
        if (a, x) in edges:
            v.count('Duplicate rows (last line kept)', 2)
        edges[(a, x)] = ts
    for (a, x), ts in edges.items():
        cell = [(b'e', b'since', ts, str(ts).encode())]
        v.put(struct.pack('>I', a) + b'follows' + struct.pack('>I', x), cell)
        v.put(struct.pack('>I', x) + b'followedby' + struct.pack('>I', a), cell)
    v.count('Bad Lines', bad)
    return v


def build_reviews(opts, inputs):
    v = View()
    latest = {}
    bad = 0
    for line in records(inputs):
        f = line.split(b'\t')
        if len(f) != 7:
            bad += 1
            continue
        user, book, stars, ts = u32(f[0]), u32(f[2]), u32(f[4]), i64(f[5])
        if user is None or book is None or not f[1] or not f[3] \
                or not text_ok(f[1]) or not text_ok(f[3]) or not text_ok(f[6]) \
                or stars is None or not 1 <= stars <= 5 or ts is None or ts < 0:
            bad += 1
            continue
        if (user, book) in latest:
            v.count('Duplicate rows (last line kept)', 2)
        latest[(user, book)] = (f, ts)
    for (user, book), (f, ts) in latest.items():
        text = [(b'r', b'text', ts, f[6])] if f[6] else []
        v.put(b'u' + struct.pack('>II', user, book),
              [(b'r', b'book', ts, f[3]), (b'r', b'stars', ts, f[4])] + text)
        v.put(b'b' + struct.pack('>II', book, user),
              [(b'r', b'user', ts, f[1]), (b'r', b'stars', ts, f[4])] + text)
    v.count('Bad Lines', bad)
    return v


def build_dailyactivity(opts, inputs):
    """dailyactivity over the useractions table loaded from the same input:
    the useractions rows (last line wins), then per user and UTC day the
    count of each action, the total, and the first and last ts."""
    ua = build_useractions(opts, inputs)
    days = {}
    for row, cells in ua.rows.items():
        user = row[:4]
        ts = I64_MAX - struct.unpack('>q', row[4:12])[0]
        name = [c[3] for c in cells if c[:2] == (b'content', b'name')][0]
        d = days.setdefault(user + struct.pack('>I', ts // 86400000), {'acts': {}, 'ts': []})
        d['acts'][name] = d['acts'].get(name, 0) + 1
        d['ts'].append(ts)
    v = View()
    for row, d in days.items():
        day_ts = struct.unpack('>I', row[4:])[0] * 86400000
        cells = [(b'a', a, day_ts, b'%d' % n) for a, n in d['acts'].items()]
        cells += [(b's', b'first', day_ts, b'%d' % min(d['ts'])),
                  (b's', b'last', day_ts, b'%d' % max(d['ts'])),
                  (b's', b'total', day_ts, b'%d' % len(d['ts']))]
        v.put(row, cells)
    # the view's own counters (view_common), zero for a table input
    for name in ('Bad rows', 'Bad Lines', 'Duplicate rows (last line kept)'):
        v.count(name, 0)
    return v


# products: the types and their own attributes, with what each value must be
PRODUCT_TYPES = {
    b'album': {b'artist': 'text', b'tracks': 'u32'},
    b'book': {b'author': 'text', b'isbn': 'isbn', b'pages': 'u32'},
    b'film': {b'director': 'text', b'minutes': 'u32'},
}


def product_attrs(ptype, field):
    """The attributes of a products line as a dict, or None for a bad field."""
    own = PRODUCT_TYPES[ptype]
    out = {}
    if field == b'':
        return out
    for item in field.split(b';'):
        name, eq, value = item.partition(b'=')
        if not eq or not name or not value or name not in own or name in out:
            return None
        kind = own[name]
        if kind == 'u32' and u32(value) is None:
            return None
        if kind == 'isbn' and not re.fullmatch(rb'[0-9]{13}', value):
            return None
        if kind == 'text' and not text_ok(value):
            return None
        out[name] = value
    return out


def build_products(opts, inputs):
    ts = int(opts['job-time'])
    v = View()
    latest = {}
    bad = 0
    for line in records(inputs):
        f = line.split(b'\t')
        if len(f) != 5 or f[0] not in PRODUCT_TYPES:
            bad += 1
            continue
        pid = u32(f[1])
        attrs = product_attrs(f[0], f[4])
        if pid is None or not f[2] or not text_ok(f[2]) \
                or not re.fullmatch(rb'[0-9]{1,10}\.[0-9]{2}', f[3]) or attrs is None:
            bad += 1
            continue
        row = f[0] + b'\0' + struct.pack('>I', pid)
        if row in latest:
            v.count('Duplicate rows (last line kept)')
        latest[row] = (f[2], f[3], attrs)
    for ptype in PRODUCT_TYPES:
        v.count('Products: ' + ptype.decode(), 0)
    for row, (name, price, attrs) in latest.items():
        v.count('Products: ' + row.split(b'\0')[0].decode())
        v.put(row, [(b'c', b'name', ts, name), (b'c', b'price', ts, price)] +
              [(b't', k, ts, x) for k, x in attrs.items()])
    v.count('Bad Lines', bad)
    return v


def build_events(opts, inputs):
    v = View()
    cells = {}
    bad = 0
    dups = 0
    for line in records(inputs):
        f = line.split(b'\t')
        if len(f) != 4:
            bad += 1
            continue
        patient, ts = u32(f[0]), i64(f[1])
        if patient is None or ts is None or ts < 0 \
                or not re.fullmatch(rb'[A-Za-z0-9_.-]{1,64}', f[2]) \
                or not re.fullmatch(rb'-?[0-9]{1,19}(\.[0-9]{1,9})?', f[3]):
            bad += 1
            continue
        row = struct.pack('>Iq', patient, I64_MAX - ts)
        per_row = cells.setdefault(row, {})
        if f[2] in per_row:
            dups += 1
        per_row[f[2]] = (ts, f[3])
    for row, per_row in cells.items():
        v.put(row, [(b'e', k, ts, x) for k, (ts, x) in per_row.items()])
    v.count('Bad Lines', bad)
    v.count('Duplicate rows (last line kept)', 0)     # a row is merged, never replaced
    v.count('Duplicate events (last line kept)', dups)
    v.count('Events stored', sum(len(c) for c in cells.values()))
    return v


GRAPH_TYPE_MAX = 255


def graph_type_ok(b):
    return 0 < len(b) <= GRAPH_TYPE_MAX and b'\0' not in b


def build_graph(opts, inputs):
    """graph: edge lines `parent TAB ptype TAB child TAB ctype TAB ts` and
    node lines `node TAB type TAB ts`; one row per node (u32 BE) with
    c:<child u32 BE> = the child's type and p:<parent u32 BE> = the parent's
    type at the edge's ts (a repeated edge: the last line), and c: and p: =
    the type the last line naming the node gives, at that line's ts."""
    v = View()
    edges = {}
    own = {}
    bad = 0
    for line in records(inputs):
        f = line.split(b'\t')
        if len(f) == 3:
            node, ts = u32(f[0]), i64(f[2])
            if node is None or not graph_type_ok(f[1]) or ts is None or ts < 0:
                bad += 1
                continue
            own[node] = (f[1], ts)
        elif len(f) == 5:
            par, child, ts = u32(f[0]), u32(f[2]), i64(f[4])
            if par is None or child is None or par == child or not graph_type_ok(f[1]) \
                    or not graph_type_ok(f[3]) or ts is None or ts < 0:
                bad += 1
                continue
            if (par, child) in edges:
                v.count('Duplicate rows (last line kept)', 2)   # a cell in each row
            edges[(par, child)] = (f[1], f[3], ts)
            own[par] = (f[1], ts)
            own[child] = (f[3], ts)
        else:
            bad += 1
    cells = {n: [(b'c', b'', ts, t), (b'p', b'', ts, t)] for n, (t, ts) in own.items()}
    for (par, child), (ptype, ctype, ts) in edges.items():
        cells[par].append((b'c', struct.pack('>I', child), ts, ctype))
        cells[child].append((b'p', struct.pack('>I', par), ts, ptype))
    for n, c in cells.items():
        v.put(struct.pack('>I', n), c)
    v.count('Bad Lines', bad)
    v.count('Duplicate rows (last line kept)', 0)
    v.count('Nodes', len(own))
    v.count('Edges', len(edges))
    nparents = {}
    nchildren = {}
    for par, child in edges:
        nparents[child] = nparents.get(child, 0) + 1
        nchildren[par] = nchildren.get(par, 0) + 1
    v.count('Roots (no parent)', sum(1 for n in own if n not in nparents))
    v.count('Leaves (no child)', sum(1 for n in own if n not in nchildren))
    v.count('Nodes with several parents', sum(1 for n in nparents if nparents[n] > 1))
    return v


BUILDERS = {'dailyactivity': build_dailyactivity, 'useractions': build_useractions, 'tslog': build_tslog, 'orders': build_orders,
            'follows': build_follows, 'reviews': build_reviews,
            'products': build_products, 'events': build_events}


# ---------------------------------------------------------------- salt

def crc32c(b):
    """CRC-32C (Castagnoli, reflected, init and final xor 0xFFFFFFFF), bit by bit."""
    crc = 0xFFFFFFFF
    for c in b:
        crc ^= c
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def salt_bucket(row, buckets):
    """docs/storage-format.md 2.6: fmix32(CRC32C(row)) mod buckets."""
    h = crc32c(row)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h % buckets


def salted(row, buckets):
    """The stored key of row in a table of salt_buckets = buckets."""
    return bytes([salt_bucket(row, buckets)]) + row


BUILDERS['graph'] = build_graph


# ---------------------------------------------------------------- queries

def scan(v, start=b'', stop=None, prefix=b'', limit=None):
    out = []
    for row in v.sorted_rows():
        if row < start or (stop is not None and row >= stop) or not row.startswith(prefix):
            continue
        out.append(row)
        if limit is not None and len(out) == limit:
            break
    return out


def query(name, v, q):
    """The rows a named query returns, in order (see the usage above)."""
    kind = q[0]
    n = lambda i: int(q[i])
    if kind == 'all':                             # all: every row, in row order
        return scan(v)
    if kind == 'has':                             # has FAM:QUAL VALUE: rows holding it
        fam, _, qual = q[1].encode().partition(b':')
        return [r for r in scan(v)
                if any(c[:2] == (fam, qual) and c[3] == q[2].encode() for c in v.rows[r])]
    if name == 'useractions' and kind in ('latest', 'page', 'window'):
        user = struct.pack('>I', n(1))
        if kind == 'latest':                      # latest USER N
            return scan(v, prefix=user, limit=n(2))
        if kind == 'page':                        # page USER N K
            rows = scan(v, prefix=user)
            return rows[(n(3) - 1) * n(2):n(3) * n(2)]
        if kind == 'window':                      # window USER T1 T2: T1 <= ts < T2
            return [r for r in scan(v, prefix=user)
                    if n(2) <= I64_MAX - struct.unpack('>q', r[4:12])[0] < n(3)]
    if name == 'dailyactivity' and kind == 'day':  # day USER DAY: one row
        row = struct.pack('>II', n(1), n(2))
        return [row] if row in v.rows else []
    if name == 'dailyactivity' and kind == 'days':  # days USER D1 D2: D1 <= day < D2
        return scan(v, start=struct.pack('>II', n(1), n(2)), stop=struct.pack('>II', n(1), n(3)))
    if name == 'tslog/byhost' and kind == 'host':  # host HOST EVENT T1 T2
        key = q[1].encode() + b'\0' + q[2].encode() + b'\0'
        return [r for r in scan(v, prefix=key)
                if n(3) <= struct.unpack('>Q', r[-8:])[0] < n(4)]
    if name == 'tslog/byhost' and kind == 'hostall':  # hostall HOST T1 T2: every event
        return [r for r in scan(v, prefix=q[1].encode() + b'\0')
                if n(2) <= struct.unpack('>Q', r[-8:])[0] < n(3)]
    if name == 'tslog/bytime' and kind == 'range':  # range T1 T2: rows in unsalted order
        rows = [r for r in v.rows if n(1) <= struct.unpack('>Q', r[1:9])[0] < n(2)]
        return sorted(rows, key=lambda r: r[1:])
    if name == 'tslog/stats' and kind == 'minute':  # minute MS
        return scan(v, prefix=struct.pack('>Q', n(1)))
    if name == 'orders' and kind == 'get':          # get CUST
        row = struct.pack('>I', n(1))
        return [row] if row in v.rows else []
    if name == 'follows' and kind in ('follows', 'followedby'):  # follows USER N K
        rows = scan(v, prefix=struct.pack('>I', n(1)) + kind.encode())
        return rows[(n(3) - 1) * n(2):n(3) * n(2)]
    if name == 'reviews' and kind in ('user', 'book'):          # user ID
        return scan(v, prefix=kind[0].encode() + struct.pack('>I', n(1)))
    if name == 'products' and kind in ('type', 'typec'):       # type TYPE N K: page K of N
        rows = scan(v, prefix=q[1].encode() + b'\0')[(n(3) - 1) * n(2):n(3) * n(2)]
        if kind == 'type':
            return rows
        return [(r, [c for c in v.rows[r] if c[0] == b'c']) for r in rows]  # typec: family c
    if name == 'products' and kind == 'get':                    # get TYPE ID [FAMILY]
        row = q[1].encode() + b'\0' + struct.pack('>I', n(2))
        if row not in v.rows:
            return []
        fam = q[3].encode() if len(q) > 3 else None
        return [(row, [c for c in v.rows[row] if fam is None or c[0] == fam])]
    if name == 'events' and kind in ('latest', 'page'):         # latest P N / page P N K
        rows = scan(v, prefix=struct.pack('>I', n(1)))
        if kind == 'latest':
            return rows[:n(2)]
        return rows[(n(3) - 1) * n(2):n(3) * n(2)]
    if name == 'events' and kind == 'window':                   # window P TYPE T1 T2
        out = []
        for r in scan(v, prefix=struct.pack('>I', n(1))):
            ts = I64_MAX - struct.unpack('>q', r[4:12])[0]
            cells = [c for c in v.rows[r] if c[1] == q[2].encode()]
            if n(3) <= ts < n(4) and cells:
                out.append((r, cells))
        return out
    if name == 'events' and kind == 'get':                      # get P TS
        row = struct.pack('>Iq', n(1), I64_MAX - n(2))
        return [row] if row in v.rows else []
    raise SystemExit('views_check: unknown query %s for %s' % (' '.join(q), name))


# ---------------------------------------------------------------- graph queries

def graph_family(v, node, fam):
    """Node's own type and its (id, type) neighbours in family fam (b'c' or
    b'p'), in id order; None when the node has no row."""
    cells = v.rows.get(struct.pack('>I', node))
    if cells is None:
        return None
    own = [c[3] for c in cells if c[0] == fam and c[1] == b'']
    return own[0], sorted((struct.unpack('>I', c[1])[0], c[3]) for c in cells
                          if c[0] == fam and c[1] != b'')


def graph_subtree(v, node, depth):
    """[(depth, id, type)]: breadth first from node along c, each node once at
    its least depth, levels in id order."""
    if graph_family(v, node, b'c') is None:
        return []
    seen = {node}
    level = [node]
    out = []
    for d in range(depth + 1):
        for n in level:
            out.append((d, n, graph_family(v, n, b'c')[0]))
        if d == depth:
            break
        nxt = set()
        for n in level:
            for child, _ in graph_family(v, n, b'c')[1]:
                if child not in seen:
                    nxt.add(child)
        seen |= nxt
        level = sorted(nxt)
    return out


def graph_path(v, node):
    """([(id, type)] from node to a root along the smallest parent id, cycle):
    cycle is the node met again, or None."""
    out = []
    on = set()
    cur = node
    while True:
        fam = graph_family(v, cur, b'p')
        if fam is None:
            return out, None
        out.append((cur, fam[0]))
        on.add(cur)
        if not fam[1]:
            return out, None
        cur = fam[1][0][0]
        if cur in on:
            return out, cur


def graph_query(v, q):
    """The lines of a graph query: children X / parents X (the Get's cells),
    childids X / parentids X (ID TAB TYPE), subtree X N (DEPTH TAB ID TAB
    TYPE), path X (ID TAB TYPE, from X to its root)."""
    kind, node = q[0], int(q[1])
    if kind in ('children', 'parents'):
        row = struct.pack('>I', node)
        fam = kind[0].encode()
        return [cell_line(row, c) for c in v.rows.get(row, []) if c[0] == fam]
    if kind in ('childids', 'parentids'):
        fam = graph_family(v, node, kind[0].encode())
        return ['%d\t%s' % (n, printable(t)) for n, t in (fam[1] if fam else [])]
    if kind == 'subtree':
        return ['%d\t%d\t%s' % (d, n, printable(t)) for d, n, t in graph_subtree(v, node, int(q[2]))]
    if kind == 'path':
        return ['%d\t%s' % (n, printable(t)) for n, t in graph_path(v, node)[0]]
    raise SystemExit('views_check: unknown query %s for graph' % ' '.join(q))


def graph_pick(inputs):
    """Nodes worth asking about, as NAME=ID lines: root (the root with the
    most nodes within depth 3), dag (the smallest node with several parents
    at most 3 steps below its root) and dagroot (that root), deep (the node
    with the longest path), hub (the most children), lone (no edges, if any)."""
    v = build_graph({}, inputs)
    nodes = sorted(struct.unpack('>I', r)[0] for r in v.rows)
    fam = {n: (graph_family(v, n, b'p')[1], graph_family(v, n, b'c')[1]) for n in nodes}
    paths = {n: graph_path(v, n) for n in nodes}
    roots = [n for n in nodes if not fam[n][0]]
    pick = {}
    pick['root'] = max(roots, key=lambda n: (len(graph_subtree(v, n, 3)), -n))
    dag = [n for n in nodes if len(fam[n][0]) > 1 and paths[n][1] is None and len(paths[n][0]) <= 4]
    pick['dag'] = dag[0]
    pick['dagroot'] = paths[dag[0]][0][-1][0]
    pick['deep'] = max(nodes, key=lambda n: (len(paths[n][0]), -n))
    pick['hub'] = max(nodes, key=lambda n: (len(fam[n][1]), -n))
    lone = [n for n in nodes if not fam[n][0] and not fam[n][1]]
    if lone:
        pick['lone'] = lone[0]
    return ['%s=%d' % kv for kv in sorted(pick.items())]


# ---------------------------------------------------------------- json

def json_lines(text):
    dec = json.JSONDecoder()
    i = 0
    out = []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        doc, i = dec.raw_decode(text, i)
        for r in doc.get('Row', []):
            row = base64.b64decode(r['key'])
            for c in r['Cell']:
                fam, _, qual = base64.b64decode(c['column']).partition(b':')
                out.append(cell_line(row, (fam, qual, c['timestamp'], base64.b64decode(c['$']))))


# ---------------------------------------------------------------- main

def pct(b):
    return ''.join(chr(c) if chr(c).isalnum() and c < 0x80 or chr(c) in '-._~' else '%%%02X' % c
                   for c in b)


def expect(view, args):
    """expect VIEW [--buckets B] [--job-time MS] --out DIR INPUT... [-- QUERY...]"""
    opts = {}
    queries = []
    if '--' in args:
        queries = args[args.index('--') + 1:]
        args = args[:args.index('--')]
    inputs = []
    i = 0
    while i < len(args):
        if args[i].startswith('--'):
            opts[args[i][2:]] = args[i + 1]
            i += 2
        else:
            inputs.append(args[i])
            i += 1
    out = opts['out']
    built = BUILDERS[view](opts, inputs)
    tables = built if isinstance(built, dict) else {'': built}
    salt = int(opts.get('salt', opts.get('salt-buckets', 0)))
    stored = (lambda r: bytes([salt_bucket(r, salt)]) + r) if salt else (lambda r: r)
    for layout, v in tables.items():
        lines = [cell_line(stored(r), c, dump=True) for r in v.rows for c in v.rows[r]]
        with open(os.path.join(out, 'cells%s.txt' % ('.' + layout if layout else '')), 'w') as f:
            for line in sorted(lines, key=lambda s: s.encode()):
                f.write(line + '\n')
        with open(os.path.join(out, 'rows%s.txt' % ('.' + layout if layout else '')), 'w') as f:
            f.write('%d\n' % len(v.rows))
    first = tables.get('bytime', tables.get(''))
    with open(os.path.join(out, 'counters.txt'), 'w') as f:
        for k in sorted(first.counters):
            f.write('%s=%d\n' % (k, first.counters[k]))
    for n, q in enumerate(queries, 1):
        words = q.split()
        name = view
        if isinstance(built, dict):
            name = view + '/' + words[0]
            words = words[1:]
        v = tables[name.partition('/')[2]] if isinstance(built, dict) else built
        if view == 'graph':
            with open(os.path.join(out, 'q%d.txt' % n), 'w') as f:
                f.writelines(line + '\n' for line in graph_query(v, words))
            continue
        with open(os.path.join(out, 'q%d.txt' % n), 'w') as f:
            for r in query(name, v, words):
                # a query restricted to some columns gives (row, its cells)
                row, cells = r if isinstance(r, tuple) else (r, v.rows[r])
                for c in cells:
                    f.write(cell_line(row, c) + '\n')


def main(argv):
    if len(argv) < 2 or argv[1] in ('-h', '--help'):
        print(__doc__)
        return 0
    cmd = argv[1]
    if cmd == 'json':
        for line in json_lines(sys.stdin.read()):
            print(line)
        return 0
    if cmd == 'pct64':
        print(pct(base64.b64decode(argv[2])))
        return 0
    if cmd == 'next':
        doc = json.loads(sys.stdin.read())
        if 'next_startrow' in doc:
            print(doc['next_startrow'])
        return 0
    if cmd == 'lastrow':
        doc = json.loads(sys.stdin.read())
        if doc.get('Row'):
            print(printable(base64.b64decode(doc['Row'][-1]['key']) + b'\0'))
        return 0
    if cmd == 'expect':
        expect(argv[2], argv[3:])
        return 0
    if cmd == 'graphpick':
        for line in graph_pick(argv[2:]):
            print(line)
        return 0
    raise SystemExit('views_check: unknown command %s' % cmd)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
