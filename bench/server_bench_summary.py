#!/usr/bin/env python3
"""server_bench_summary.py -- the summary of a bench/server_bench.sh run, from its
log directory (medians over runs, Kiln/Redis ratios, swap traces, memory).

  bench/server_bench_summary.py build/bench-results/server-<time>
"""
import datetime
import glob
import os
import re
import statistics as st
import sys


def med(v):
    return st.median(v) if v else float("nan")


def trace(path):
    """(wall clock, ops/s) of each quarter-second line of a stamped trace."""
    out = []
    for line in open(path, errors="replace"):
        m = re.match(r"([\d.]+) .*?rps=([\d.]+)", line)
        if m:
            out.append((float(m.group(1)), float(m.group(2))))
    return out[1:]   # the first line is redis-benchmark's start, before any request


def swap_times(log):
    """Wall-clock times of the server's swaps, from its log lines."""
    out = []
    for line in open(os.path.join(log, "kiln-server.log"), errors="replace"):
        m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z .*version \d+ -> \d+", line)
        if m:
            t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f")
            out.append(t.replace(tzinfo=datetime.timezone.utc).timestamp())
    return out


def swap_report(path, swaps):
    """One trace: the rate without a swap for 6 s, then a load. From the load
    to the first swap the server logged after it (the new version warming
    up), and from that swap on: the lowest quarter second over both, the
    first second after the swap, and the seconds after the swap until the
    rate is back at 90% of the rate before the load. The lowest quarter
    second before the load is the same measure with no swap in the way: how
    far the rate falls on its own on this machine."""
    d = trace(path)
    load = float(open(path.replace(".txt", ".load")).read())
    swap = next((t for t in swaps if t > load), None)
    # a line at time t gives the rate of the quarter second ending at t
    before = [r for t, r in d if t <= load][2:]
    if len(before) < 8 or swap is None:
        return None
    base = med(before)
    warm = [r for t, r in d if load < t - 0.125 <= swap]
    after = [r for t, r in d if t - 0.125 > swap]
    if len(after) < 8:
        return None
    back = next((i for i, r in enumerate(after) if r >= 0.9 * base), len(after))
    return {"base": base, "warm_s": swap - load, "warm_low": min(warm) if warm else base,
            "warm_med": med(warm) if warm else base,
            "first": sum(after[:4]) / 4, "low": min(warm + after), "back": back / 4.0,
            "calm_low": min(before)}


def traces(log, prefix, ends, none, start, span, after, whole):
    """Print swap_report for each PREFIX-P-RUN.txt trace of the log, with the
    end of its disturbance (the swap, or the control's loop) from ends(path)."""
    for P in ("1", "16"):
        for path in sorted(glob.glob(os.path.join(log, "%s-%s-*.txt" % (prefix, P)))):
            run = path.rsplit("-", 1)[1][:-4]
            r = swap_report(path, ends(path))
            if r is None:
                print("  P%-3s run %s: %s" % (P, run, none))
                continue
            b = r["base"]
            print("  P%-3s run %s: %.0f ops/s before %s; %s %.1f s (median %.0f%%, lowest quarter "
                  "%.0f%%); %s: first second %.0f%%; lowest quarter %s %.0f%%; back to 90%% after "
                  "%.2f s; lowest quarter before %s (undisturbed) %.0f%%" %
                  (P, run, b, start, span, r["warm_s"], 100 * r["warm_med"] / b,
                   100 * r["warm_low"] / b, after, 100 * r["first"] / b, whole, 100 * r["low"] / b,
                   r["back"], start, 100 * r["calm_low"] / b))


def main():
    log = sys.argv[1]
    cache_mb, index_bytes = (int(x) for x in open(os.path.join(log, "budget.txt")).read().split())
    rows = [l.strip().split(",") for l in open(os.path.join(log, "resp.csv")) if l.strip()]
    runs = max(int(r[2]) for r in rows) if rows else 0
    probe = os.path.join(log, "core_probe.txt")
    if os.path.exists(probe):
        lines = [l.strip() for l in open(probe) if l.strip()]
        print("machine: %s (kiln-core-probe: a thread beside a SCHED_IDLE busy loop on the "
              "other CPU, against alone)" % "; ".join(lines))
        print()
    print("redis-benchmark GET, 50 clients, random existing keys (medians of %d runs)" % runs)
    print("  %-6s %-5s %12s %8s %8s" % ("P", "", "ops/s", "p50 ms", "p99 ms"))
    res = {}
    for P in ("1", "16") if rows else ():
        for name in ("kiln", "redis"):
            sel = [r for r in rows if r[0] == name and r[1] == P]
            res[(name, P)] = tuple(med([float(r[i].strip('"')) for r in sel]) for i in (4, 7, 9))
            print("  %-6s %-5s %12.0f %8.3f %8.3f" % ((P, name) + res[(name, P)]))
        k, r = res[("kiln", P)], res[("redis", P)]
        if r[0] != r[0]:   # nan: a run without the Redis peer
            print("  P%-5s no Redis runs (peer harness absent): no ratio" % P)
            continue
        goal = 1.5 if P == "16" else 1.0
        print("  P%-5s kiln/redis ops/s %.2fx (goal >= %.1fx: %s), p99 %.3f vs %.3f ms (%s)" %
              (P, k[0] / r[0], goal, "met" if k[0] / r[0] >= goal else "MISSED", k[2], r[2],
               "no worse" if k[2] <= r[2] else "WORSE"))
    http = [l.strip().split(",") for l in open(os.path.join(log, "http.csv")) if l.strip()]
    print("\nHTTP with wrk, 50 connections (medians)")
    for kind in ("get", "scan") if http else ():
        sel = [h for h in http if h[0] == kind]
        rps, p50, p99 = (med([float(h[i]) for h in sel]) for i in (2, 3, 4))
        errs = sum(int(h[5]) for h in sel)
        print("  %-5s %10.0f req/s  p50 %.3f ms  p99 %.3f ms  non-2xx %d" % (kind, rps, p50, p99, errs))
        cpu = [h for h in sel if len(h) >= 9 and int(h[6]) > 0]
        if cpu:
            # CPU per request of wrk and of the server, and what the two
            # together allow on this machine's cores (both run on them)
            wrk_us = med([1e6 * float(h[7]) / int(h[6]) for h in cpu])
            srv_us = med([1e6 * float(h[8]) / int(h[6]) for h in cpu])
            ncpu = os.cpu_count() or 1
            print("        CPU per request: wrk %.1f us, kiln-server %.1f us; on %d cores the two "
                  "together allow at most %.0f req/s" % (wrk_us, srv_us, ncpu, ncpu * 1e6 / (wrk_us + srv_us)))
        if kind == "get":
            red = res[("redis", "1")][0]
            print("        vs Redis GET P1 %.0f ops/s: %.2fx (goal >= 1.0x: %s)" %
                  (red, rps / red, "met" if rps / red >= 1.0 else "MISSED"))
        else:
            print("        100-row scan p99 %.3f ms (goal <= 1 ms: %s); 50 connections in a closed loop "
                  "wait 50 / rate on average (Little's law): %.3f ms at this rate, and a 1 ms mean "
                  "needs 50,000 scans/s" % (p99, "met" if p99 <= 1 else "MISSED", 50e3 / rps))
    print("\nSwap under load (kiln load of a new version 6 s into a run; quarter-second rates; "
          "goal: first second >= 90%, lowest quarter >= 80%)")
    swaps = swap_times(log)
    traces(log, "swap-during", lambda path: swaps, "no swap inside the trace",
           "the load", "load to swap", "from the swap", "from the load")
    print("\nControl: the same traces with no swap, and a SCHED_IDLE busy loop (not Kiln) "
          "running as long as the swap's load and warm-up did")
    traces(log, "control", lambda path: [float(open(path.replace(".txt", ".end")).read())],
           "trace too short", "the loop", "loop", "from its end", "from its start")
    for base in sorted(glob.glob(os.path.join(log, "swap-http-base-*.txt"))):
        b = open(base).read().split()
        d = open(base.replace("base", "during")).read().split()
        print("  HTTP Get run %s: %.0f req/s p99 %.3f ms without a swap; %.0f req/s (%.0f%%) "
              "p99 %.3f ms (%.2fx) over a run with one" %
              (base.rsplit("-", 1)[1][:-4], float(b[0]), float(b[2]), float(d[0]),
               100 * float(d[0]) / float(b[0]), float(d[2]), float(d[2]) / float(b[2])))
    sw = open(os.path.join(log, "swaps.log")).read().strip().splitlines()
    for l in sw[-6:]:
        print("   ", l.split("info: ", 1)[-1])
    rss = [int(m.group(1)) for m in
           re.finditer(r"kiln_rss_kb=(\d+)", open(os.path.join(log, "rss.log")).read())]
    if rss:
        budget = cache_mb * 1024 + index_bytes // 1024
        print("\nMemory: kiln-server peak RSS %.0f MiB over %d samples (every 5 s, %.0f min); "
              "budget (cache %d MiB + indexes and blooms %.0f MiB) %.0f MiB: %s" %
              (max(rss) / 1024, len(rss), len(rss) * 5 / 60, cache_mb, index_bytes / 2**20,
               budget / 1024, "within" if max(rss) <= budget else "OVER"))


if __name__ == "__main__":
    main()
