#!/usr/bin/env python3
"""server_gen.py -- job output for kiln-server benchmarks with Redis's key form.

Writes JOBDIR/f/part-r-NNNNN HFiles (through `kiln hfile write`, snappy, 4 KiB
blocks, row bloom), JOBDIR/_splits and JOBDIR/_SUCCESS for N rows whose keys are
what redis-benchmark asks for with -r N ("key:%012d") and whose 100-byte values
are those of the Redis peer's redis_bench/gen_resp.py (see server_bench.sh
--peers), so that Kiln and redis-server hold the same keys and bytes. --data-version V (default 0) changes
every value (a 'v' field), so that a second load is a real new version.

  bench/server_gen.py KILN JOBDIR N [--regions R] [--data-version V]
"""
import os
import subprocess
import sys


def value(i, version):
    h = (i * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    if version == 0:
        v = b'{"uid":%d,"ts":%d,"clicks":%d,"tag":"%016x%016x"}' % (
            1000000 + 2 * (i // 10), 1700000000 - 60 * (i % 10), h % 1000, h, h ^ 0xDEADBEEF)
    else:
        v = b'{"uid":%d,"ts":%d,"v":%d,"tag":"%016x%016x"}' % (
            1000000 + 2 * (i // 10), 1700000000 - 60 * (i % 10), version, h, h ^ version)
    return v.ljust(100, b" ")[:100]


def main():
    args = sys.argv[1:]
    regions, version = 8, 0
    pos = []
    i = 0
    while i < len(args):
        if args[i] == "--regions":
            regions = int(args[i + 1])
            i += 2
        elif args[i] == "--data-version":
            version = int(args[i + 1])
            i += 2
        else:
            pos.append(args[i])
            i += 1
    if len(pos) != 3:
        sys.stderr.write(__doc__)
        sys.exit(64)
    kiln, job, n = pos[0], pos[1], int(pos[2])
    os.makedirs(os.path.join(job, "f"), exist_ok=True)
    splits = []
    for r in range(regions):
        lo, hi = n * r // regions, n * (r + 1) // regions
        if r > 0:
            splits.append(b"key:%012d" % lo)
        out = os.path.join(job, "f", "part-r-%05d" % r)
        p = subprocess.Popen([kiln, "hfile", "write", out, "--family", "f", "--compression",
                              "snappy", "--block-size", "4096", "--bloom", "row"],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        w = p.stdin
        for k in range(lo, hi):
            # dump form: ROW TAB F:Q TAB TS TAB TYPE TAB VALUE (values are printable, no '\')
            w.write(b"key:%012d\tf:v\t1700000000000\tPut\t%s\n" % (k, value(k, version)))
        w.close()
        if p.wait() != 0:
            sys.exit("server_gen.py: kiln hfile write failed for " + out)
    with open(os.path.join(job, "_splits"), "wb") as f:
        f.write(b"".join(s + b"\n" for s in splits))
    open(os.path.join(job, "_SUCCESS"), "wb").close()


if __name__ == "__main__":
    main()
