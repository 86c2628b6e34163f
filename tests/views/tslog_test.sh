#!/usr/bin/env bash
# tslog_test.sh -- the tslog view end to end: kiln-gen log events, one job
# writing three tables (salted by time, by host, per-minute statistics) at
# -np 2 and 3 (byte-identical, one HFile per region of each table), every
# cell of each table and the counters equal to views_check.py's brute force,
# another bucket count, `kiln load` of each layout directory, and the
# queries -- one host's events in a time range (one event, every event), all
# hosts in a time range (one scan per bucket), a minute's statistics --
# through kiln and kiln-server equal to the brute force. Prints "N passed,
# N failed".
set -u
VIEW=tslog
. "$(dirname "$0")/lib.sh"
views_begin

raw=$work/raw
"$GEN" tslog --rows 24000 --seed 5 --files 3 --bad 3 --output "$raw" 2>>"$work/last.err"
check "kiln-gen tslog: exits 0" test $? = 0
BASE=1709251200000               # 2024-03-01, the generator's first event
MIN=60000

# ---------------------------------------------------------------- tables
# bytime: one region per bucket; byhost: split at hosts; stats: at minutes.
splits=()
for b in 1 2 3 4 5 6 7; do splits+=(--split "$(printf '\\x%02X' "$b")"); done
"$KILN" create tslog_bytime --family d "${splits[@]}" >/dev/null 2>>"$work/last.err" &&
    "$KILN" create tslog_byhost --family d --split cache --split queue >/dev/null 2>>"$work/last.err" &&
    "$KILN" create tslog_stats --family s:bloom=rowcol --split "$(be_key 8 $((BASE + 30 * MIN)))" \
        --split "$(be_key 8 $((BASE + 60 * MIN)))" >/dev/null 2>>"$work/last.err"
check "kiln create the three tables" test $? = 0

run_view 2 "$work/out2" --input "$raw"
check "job np=2: exits 0" test "$rc" = 0 -a -f "$work/out2/_SUCCESS"
run_view 3 "$work/out3" --input "$raw"
check "job np=3: exits 0" test "$rc" = 0 -a -f "$work/out3/_SUCCESS"
check "np=2 and np=3 write the same HFiles byte for byte" same_output "$work/out2" "$work/out3"
check "one HFile per region: 8 bytime, 3 byhost, 3 stats" \
    test "$(ls "$work/out2/bytime/d" | wc -l) $(ls "$work/out2/byhost/d" | wc -l) $(ls "$work/out2/stats/s" | wc -l)" = "8 3 3"
check "each layout directory carries the job's _SUCCESS" \
    bash -c "for l in bytime byhost stats; do [ -e '$work/out2/'\$l/_SUCCESS ] || exit 1; done"

T1=$((BASE + 30 * MIN))
T2=$((BASE + 45 * MIN))
M=$((BASE + 17 * MIN))
$CHECK expect tslog --buckets 8 --out "$work" "$raw" -- \
    "byhost host web-01.iad http.latency_ms $T1 $T2" \
    "byhost host db-01.fra cpu.pct $T1 $T2" \
    "byhost hostall web-01.iad $T1 $T2" \
    "bytime range $T1 $((T1 + 2 * MIN))" \
    "stats minute $M" \
    "stats minute $((BASE + 100000 * MIN))" 2>>"$work/last.err"
check "brute force ran" test $? = 0
for l in bytime byhost stats; do
    dump_cells "$work/out2/$l" >"$work/got_cells.$l.txt"
    same "$l: every cell equals the brute force" "$work/cells.$l.txt" "$work/got_cells.$l.txt"
done
counters_of "$work/out2" tslog >"$work/got_counters.txt"
same "Bad Lines and Duplicate rows counters equal the brute force" "$work/counters.txt" "$work/got_counters.txt"
check "repeated events were generated and counted" grep -q '^Duplicate rows (last line kept)=[1-9]' "$work/counters.txt"

run_view 2 "$work/out4" --input "$raw" --table other -D tslog.buckets=4
mkdir -p "$work/b4"
$CHECK expect tslog --buckets 4 --out "$work/b4" "$raw" 2>>"$work/last.err"
dump_cells "$work/out4/bytime" >"$work/got4.txt"
same "tslog.buckets=4 (tables absent: sampled partitions): bytime cells" "$work/b4/cells.bytime.txt" "$work/got4.txt"
check "_job.json names the tables and where their regions came from" \
    grep -q '"tables":\[{"layout":"bytime","table":"default:other_bytime","regions_from":"sampled"}' "$work/out4/_job.json"
run_view 2 "$work/out5" --input "$raw" -D tslog.buckets=0
check "tslog.buckets=0: exit 64" test "$rc" = 64

for l in bytime byhost stats; do
    "$KILN" load tslog_$l "$work/out2/$l" --no-split >/dev/null 2>>"$work/last.err"
    check "kiln load tslog_$l out/$l --no-split" test $? = 0
    check "tslog_$l: kiln count equals the brute force's rows" \
        test "$("$KILN" count tslog_$l 2>/dev/null | grep -o '^[0-9]*')" = "$(cat "$work/rows.$l.txt")"
done

# ---------------------------------------------------------------- queries
# [host]\0[event]\0[ts]: one (host, event) in [T1, T2) is one range scan
hkey() { echo "$1\\x00$2\\x00$(be_key 8 "$3")"; }
kiln_lines scan tslog_byhost --start "$(hkey web-01.iad http.latency_ms $T1)" \
    --stop "$(hkey web-01.iad http.latency_ms $T2)" >"$work/k1.txt"
same "kiln: web-01.iad http.latency_ms in 15 minutes" "$work/q1.txt" "$work/k1.txt"
kiln_lines scan tslog_byhost --start "$(hkey db-01.fra cpu.pct $T1)" \
    --stop "$(hkey db-01.fra cpu.pct $T2)" >"$work/k2.txt"
same "kiln: db-01.fra cpu.pct in 15 minutes" "$work/q2.txt" "$work/k2.txt"
# every event of a host: one range scan per event name, in name order
web_events="cpu.pct http.bytes_out http.errors_5xx http.latency_ms http.requests mem.used_mb"
for e in $web_events; do
    "$KILN" scan tslog_byhost --start "$(hkey web-01.iad $e $T1)" --stop "$(hkey web-01.iad $e $T2)" --json
done | $CHECK json >"$work/k3.txt"
same "kiln: every event of web-01.iad in 15 minutes" "$work/q3.txt" "$work/k3.txt"
# [bucket][ts]...: all hosts in [T1, T1 + 2 min) is one scan per bucket
for b in 0 1 2 3 4 5 6 7; do
    x=$(printf '\\x%02X' "$b")
    "$KILN" scan tslog_bytime --start "$x$(be_key 8 $T1)" --stop "$x$(be_key 8 $((T1 + 2 * MIN)))" --json
done | $CHECK json | LC_ALL=C sort >"$work/k4.txt"
LC_ALL=C sort "$work/q4.txt" >"$work/q4s.txt"
same "kiln: all hosts in 2 minutes (8 bucket scans)" "$work/q4s.txt" "$work/k4.txt"
kiln_lines scan tslog_stats --prefix "$(be_key 8 $M)" >"$work/k5.txt"
same "kiln: the statistics of one minute" "$work/q5.txt" "$work/k5.txt"
kiln_lines scan tslog_stats --prefix "$(be_key 8 $((BASE + 100000 * MIN)))" >"$work/k6.txt"
ALLOW_EMPTY=1 same "kiln: a minute without events: no rows" "$work/q6.txt" "$work/k6.txt"

start_server || views_finish
http_lines "tslog_byhost/*?startrow=$(pct "$(hkey web-01.iad http.latency_ms $T1)")&endrow=$(pct "$(hkey web-01.iad http.latency_ms $T2)")" >"$work/h1.txt"
same "HTTP: web-01.iad http.latency_ms in 15 minutes" "$work/q1.txt" "$work/h1.txt"
for e in $web_events; do
    curl -sf "$U/tslog_byhost/*?startrow=$(pct "$(hkey web-01.iad $e $T1)")&endrow=$(pct "$(hkey web-01.iad $e $T2)")"
done | $CHECK json >"$work/h3.txt"
same "HTTP: every event of web-01.iad in 15 minutes" "$work/q3.txt" "$work/h3.txt"
for b in 0 1 2 3 4 5 6 7; do
    x=$(printf '%%%02X' "$b")
    curl -sf "$U/tslog_bytime/*?startrow=$x$(pct "$(be_key 8 $T1)")&endrow=$x$(pct "$(be_key 8 $((T1 + 2 * MIN)))")"
done | $CHECK json | LC_ALL=C sort >"$work/h4.txt"
same "HTTP: all hosts in 2 minutes (8 bucket scans)" "$work/q4s.txt" "$work/h4.txt"
http_lines "tslog_stats/*?prefix=$(pct "$(be_key 8 $M)")" >"$work/h5.txt"
same "HTTP: the statistics of one minute" "$work/q5.txt" "$work/h5.txt"
row=$(head -1 "$work/q5.txt" | cut -f1)
http_lines "tslog_stats/$(pct "$row")/s:count" >"$work/h7.txt"
head -1 "$work/q5.txt" >"$work/q7.txt"
same "HTTP: Get of one statistic (s:count)" "$work/q7.txt" "$work/h7.txt"
check "kiln-server stops cleanly on SIGTERM" stop_server

views_finish
