#!/usr/bin/env python3
"""graph_query.py -- walk a loaded `graph` view (jobs/graph.c): children,
parents, the subtree of a node to a depth, the path from a node to a root.

Usage: graph_query.py [--url URL | --kiln PATH [--data DIR]] [--table NAME]
                      QUERY
Queries:
  children ID        ID TAB TYPE per child, in id order (one Get of family c)
  parents ID         ID TAB TYPE per parent, in id order (one Get of family p)
  subtree ID DEPTH   DEPTH TAB ID TAB TYPE per node within DEPTH steps of ID
                     along c, breadth first: each node once, at its least
                     depth; depth 0 is ID itself; each level in id order
  path ID            ID TAB TYPE from ID up to a root (a node without
                     parents), following the smallest parent id at each step
Options:
  --url URL          read through kiln-server (or an HBase REST gateway) at
                     URL, e.g. http://127.0.0.1:8080: GET /TABLE/ROW/FAMILY,
                     and one GET /TABLE/multiget/c?row=... per level of a
                     subtree (at most 100 rows a request)
  --kiln PATH        read with `PATH [--data DIR] get TABLE ROW FAMILY --json`
                     (the default, with PATH = kiln beside this script in
                     ../build/bin, else kiln on $PATH)
  --table NAME       the table (default graph)
TYPE is the node's own type (the empty qualifier of its family), in printable
form (\\xNN for bytes outside printable ASCII and for the backslash).
Exit status: 0 ok; 1 ID is not a node; 2 the path meets a node already on it
(a cycle: the path so far is printed, then the node on stderr); 64 usage;
74 a read failed. Needs Python 3 and nothing outside its standard library.
"""
import base64
import json
import os
import struct
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

EX_NOTFOUND, EX_CYCLE, EX_USAGE, EX_IO = 1, 2, 64, 74
MULTIGET_ROWS = 100


class ReadError(Exception):
    pass


def row_key(node):
    return struct.pack('>I', node)


def escaped(b):
    """Printable form: bytes outside 0x20..0x7E and the backslash as \\xNN."""
    return ''.join(chr(c) if 0x20 <= c < 0x7F and c != 0x5C else '\\x%02X' % c for c in b)


def cellset_nodes(doc, fam):
    """{node: (own type, [(neighbour id, type)] in id order)} of family fam
    from a CellSet JSON document."""
    out = {}
    for r in doc.get('Row', []):
        key = base64.b64decode(r['key'])
        if len(key) != 4:
            raise ReadError('a row key of %d bytes in the answer' % len(key))
        own, nbrs = None, []
        for c in r.get('Cell', []):
            f, _, q = base64.b64decode(c['column']).partition(b':')
            if f != fam:
                continue
            val = base64.b64decode(c['$'])
            if q == b'':
                own = val
            elif len(q) == 4:
                nbrs.append((struct.unpack('>I', q)[0], val))
        if own is not None:
            out[struct.unpack('>I', key)[0]] = (own, sorted(nbrs))
    return out


class HttpSource:
    def __init__(self, url, table):
        self.base = url.rstrip('/') + '/' + urllib.parse.quote(table, safe='')

    def _get(self, path):
        req = urllib.request.Request(self.base + path, headers={'Accept': 'application/json'})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return json.loads(resp.read().decode('utf-8'))
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return {'Row': []}
            raise ReadError('%s%s: HTTP %d' % (self.base, path, e.code))
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise ReadError('%s%s: %s' % (self.base, path, e))

    def nodes(self, ids, fam):
        out = {}
        ids = list(ids)
        for i in range(0, len(ids), MULTIGET_ROWS):
            chunk = ids[i:i + MULTIGET_ROWS]
            if len(chunk) == 1:
                path = '/%s/%s' % (urllib.parse.quote(row_key(chunk[0]), safe=''), fam.decode())
            else:
                path = '/multiget/%s?%s' % (fam.decode(), '&'.join(
                    'row=' + urllib.parse.quote(row_key(n), safe='') for n in chunk))
            out.update(cellset_nodes(self._get(path), fam))
        return out


class KilnSource:
    def __init__(self, kiln, data, table):
        self.cmd = [kiln] + (['--data', data] if data else [])
        self.table = table

    def nodes(self, ids, fam):
        out = {}
        for n in ids:
            cmd = self.cmd + ['get', self.table, escaped(row_key(n)), fam.decode(), '--json']
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            except OSError as e:
                raise ReadError('%s: %s' % (cmd[0], e))
            if p.returncode != 0:
                raise ReadError('%s: exit %d: %s' % (' '.join(cmd), p.returncode,
                                                     p.stderr.decode(errors='replace').strip()))
            try:
                out.update(cellset_nodes(json.loads(p.stdout.decode('utf-8')), fam))
            except ValueError as e:
                raise ReadError('%s: %s' % (' '.join(cmd), e))
        return out


def node_of(src, node, fam):
    got = src.nodes([node], fam).get(node)
    if got is None:
        print('graph_query: %d is not a node' % node, file=sys.stderr)
        sys.exit(EX_NOTFOUND)
    return got


def neighbours(src, node, fam):
    for n, t in node_of(src, node, fam)[1]:
        print('%d\t%s' % (n, escaped(t)))
    return 0


def subtree(src, node, depth):
    level = {node: node_of(src, node, b'c')}
    seen = {node}
    for d in range(depth + 1):
        for n in sorted(level):
            print('%d\t%d\t%s' % (d, n, escaped(level[n][0])))
        if d == depth:
            break
        nxt = sorted({c for n in level for c, _ in level[n][1]} - seen)
        if not nxt:
            break
        seen.update(nxt)
        level = src.nodes(nxt, b'c')
        missing = [n for n in nxt if n not in level]
        if missing:
            raise ReadError('node %d has no row (named as a child)' % missing[0])
    return 0


def path(src, node):
    on = set()
    cur = node
    own, parents = node_of(src, cur, b'p')
    while True:
        print('%d\t%s' % (cur, escaped(own)))
        on.add(cur)
        if not parents:
            return 0
        cur = parents[0][0]
        if cur in on:
            print('graph_query: a cycle: %d is already on the path' % cur, file=sys.stderr)
            return EX_CYCLE
        got = src.nodes([cur], b'p').get(cur)
        if got is None:
            raise ReadError('node %d has no row (named as a parent)' % cur)
        own, parents = got


def usage(msg=None):
    if msg:
        print('graph_query: %s\nTry graph_query.py --help.' % msg, file=sys.stderr)
        sys.exit(EX_USAGE)
    print(__doc__, end='')
    sys.exit(0)


def number(s, what):
    if not s.isdigit() or int(s) > 0xFFFFFFFF:
        usage('%s: %r is not a number in [0, 4294967295]' % (what, s))
    return int(s)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    kiln = os.path.join(here, '..', 'build', 'bin', 'kiln')
    if not os.access(kiln, os.X_OK):
        kiln = 'kiln'
    url = data = None
    table = 'graph'
    args = []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ('-h', '--help'):
            usage()
        if a in ('--url', '--kiln', '--data', '--table'):
            if i + 1 >= len(argv):
                usage('%s needs a value' % a)
            v = argv[i + 1]
            if a == '--url':
                url = v
            elif a == '--kiln':
                kiln = v
            elif a == '--data':
                data = v
            else:
                table = v
            i += 2
            continue
        if a.startswith('--'):
            usage('unknown option %s' % a)
        args.append(a)
        i += 1
    shapes = {'children': 2, 'parents': 2, 'subtree': 3, 'path': 2}
    if not args or args[0] not in shapes or len(args) != shapes[args[0]]:
        usage('expected children ID, parents ID, subtree ID DEPTH or path ID')
    node = number(args[1], 'ID')
    src = HttpSource(url, table) if url else KilnSource(kiln, data, table)
    try:
        if args[0] == 'children':
            return neighbours(src, node, b'c')
        if args[0] == 'parents':
            return neighbours(src, node, b'p')
        if args[0] == 'subtree':
            return subtree(src, node, number(args[2], 'DEPTH'))
        return path(src, node)
    except ReadError as e:
        print('graph_query: %s' % e, file=sys.stderr)
        return EX_IO


if __name__ == '__main__':
    sys.exit(main(sys.argv))
