#!/usr/bin/env bash
# cluster_test.sh -- every job on three hosts exactly as on one.
#
# Three simulated hosts (tests/cluster/lib.sh: network namespaces with their
# own addresses, hostnames and /tmp; the checkout and the data on the one
# shared file system), reached by mpirun through an ssh stand-in that starts
# remote commands in a clean environment. On them, through
# `run_job.sh --hostfile`: wordcount (fold, combiner, reduce-side
# pre-merge), importtsv into a pre-split table, salted importtsv with an
# index, every view job, and jobs over a loaded table (dailyactivity,
# rowcounter, export: each rank opens the version rank 0 pinned); each output is byte-identical to the same job
# on one host, then loaded and queried. Then failures: a remote rank killed
# mid-map and mid-shuffle, one calling MPI_Abort, one stalled until
# --timeout, a host that sees another table, a host that lacks an input or
# the program, an output whose parent is not shared, ranks that resolve
# different jobs: non-zero exit, no _SUCCESS, nothing left in any host's
# /tmp or beside the output, and an error naming the host.
#
# Needs root for the namespaces; without them the test fails, it never
# skips. Prints "N passed, N failed" last.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
export BUILD
. "$ROOT/tests/support/job_sanitizers.sh"
export OMPI_MCA_mca_component_disable_dlclose=1
KILN=$ROOT/$BUILD/bin/kiln
GEN=$ROOT/$BUILD/bin/kiln-gen
JOB_TIME=1717200000000

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
  fail=$((fail + 1)); echo "FAIL $1"
  if [ -n "${2:-}" ] && [ -s "$2" ]; then grep -v '^ *$' "$2" | tail -15 | sed 's/^/    /'; fi
}
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name" "$W/job.err"; fi; }
finish() {
  echo
  echo "cluster_test: $pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit $?
}

# shellcheck source=tests/cluster/lib.sh
source tests/cluster/lib.sh
mkdir -p "$BUILD/cluster-test"
if ! cluster_up 3 "$ROOT/$BUILD/cluster-test" 2>"$BUILD/cluster-test/up.err"; then
  bad "three simulated hosts (network namespaces) could not be made" "$BUILD/cluster-test/up.err"
  cluster_down
  finish
fi
trap cluster_down EXIT
ok "three simulated hosts: ${CLUSTER_HOSTS[*]}"

W=$CLUSTER/shared          # the shared file system: data, inputs, outputs
mkdir -p "$W"
: > "$W/job.err"
export KILN_DATA=$W/data
printf 'h1 slots=1\nh2 slots=1\nh3 slots=1\n' > "$W/hosts"

# A host sees only the hosts' addresses and its own /tmp.
check "h2 has its own hostname and /tmp" \
  bash -c "[ \"\$('$CLUSTER/enter' h2 hostname)\" = h2 ] && '$CLUSTER/enter' h2 touch /tmp/mark &&
           [ -e '$(cluster_tmp h2)/mark' ] && [ ! -e '$(cluster_tmp h3)/mark' ] && rm '$(cluster_tmp h2)/mark'"

# on3 OUT JOB ARGS...: the job on h1..h3 (one rank each), launched from h1
# as a user would, with only KILN_DATA exported. on1 OUT JOB ARGS...: the
# same on this host, three ranks. Exit status in rc, stderr in $W/job.err.
# PLACE replaces "--hostfile hosts" with other run_job.sh options; ENV3 adds
# NAME=VALUE words to the launching environment.
on3() {
  local out=$1 job=$2; shift 2
  local place=(--hostfile "$W/hosts")
  [ -z "${PLACE:-}" ] || read -r -a place <<< "$PLACE"
  # shellcheck disable=SC2086
  cluster_exec h1 env -i PATH="$PATH" HOME=/root KILN_DATA="$KILN_DATA" BUILD="$BUILD" \
    LSAN_OPTIONS="$LSAN_OPTIONS" ASAN_OPTIONS="$ASAN_OPTIONS" \
    OMPI_MCA_mca_component_disable_dlclose=1 ${ENV3:-} \
    "$ROOT/run_job.sh" "${place[@]}" --timeout "${TIMEOUT:-180}" --mca plm_rsh_agent "$CLUSTER/ssh" \
    "$job" --output "$out" -D kiln.progress=false -D kiln.job.time=$JOB_TIME "$@" \
    > "$W/job.out" 2> "$W/job.err"
  rc=$?
}
on1() {
  local out=$1 job=$2; shift 2
  "$ROOT/run_job.sh" -n 3 --timeout 180 "$job" --output "$out" -D kiln.progress=false \
    -D kiln.job.time=$JOB_TIME "$@" > "$W/job.out" 2> "$W/job.err"
  rc=$?
}

# same_output A B: the same files, byte for byte (the job report aside).
same_output() {
  local a=$1 b=$2
  [ -e "$a/_SUCCESS" ] && [ -e "$b/_SUCCESS" ] || { echo "no _SUCCESS" >> "$W/job.err"; return 1; }
  [ "$(cd "$a" && find . ! -name _job.json | sort)" = "$(cd "$b" && find . ! -name _job.json | sort)" ] ||
    { echo "different file lists" >> "$W/job.err"; return 1; }
  local f n=0
  for f in $(cd "$a" && find . -type f ! -name '_*'); do
    cmp -s "$a/$f" "$b/$f" || { echo "$f differs" >> "$W/job.err"; return 1; }
    n=$((n + 1))
  done
  [ "$n" -gt 0 ]
}

# Nothing of Kiln's in any host's /tmp, nothing beside the outputs.
clean_everywhere() {
  local h left
  for h in "${CLUSTER_HOSTS[@]}"; do
    left=$(cluster_tmp_left "$h" 'kiln*')
    [ -z "$left" ] || { echo "left on $h: $left" >> "$W/job.err"; return 1; }
  done
  left=$(find "$W" -maxdepth 2 -name '*._temporary.*')
  [ -z "$left" ] || { echo "left beside the output: $left" >> "$W/job.err"; return 1; }
}

# rows_match TABLE OUT: a full scan of TABLE returns as many rows as the
# HFiles under OUT hold distinct rows.
rows_match() {
  local table=$1 out=$2 want got
  want=$(for f in "$out"/*/*; do case $(basename "$f") in _*) continue ;; esac
           "$KILN" hfile dump "$f"; done | cut -f1 | LC_ALL=C sort -u | wc -l)
  got=$("$KILN" scan "$table" 2>>"$W/job.err" | sed -nE 's/^([0-9]+) row\(s\)$/\1/p')
  [ "$want" -gt 0 ] && [ "$want" = "$got" ] ||
    { echo "$table: $got rows scanned, $want in the HFiles" >> "$W/job.err"; return 1; }
}

# both NAME JOB ARGS...: the job on one host and on three; same bytes.
both() {
  local name=$1 job=$2; shift 2
  local t0 t1 t2
  t0=$(date +%s.%N)
  on1 "$W/$name.1" "$job" "$@"
  local rc1=$rc
  t1=$(date +%s.%N)
  [ "$rc1" = 0 ] || { bad "$name: one host: exit $rc1" "$W/job.err"; return 1; }
  on3 "$W/$name.3" "$job" "$@"
  t2=$(date +%s.%N)
  check "$name: three hosts exit 0" test "$rc" = 0 || return 1
  check "$name: three hosts write the same bytes as one" same_output "$W/$name.1" "$W/$name.3"
  printf 'time %-22s one host %6.2f s, three hosts %6.2f s\n' "$name" \
    "$(awk "BEGIN { print $t1 - $t0 }")" "$(awk "BEGIN { print $t2 - $t1 }")"
}

# ---------------------------------------------------------------- inputs
mkdir -p "$W/text" "$W/tsv"
awk 'BEGIN { srand(7); for (i = 0; i < 60000; i++) {
  n = 1 + int(rand() * 9); line = ""
  for (j = 0; j < n; j++) line = line (j ? " " : "") "w" int(rand() * rand() * 5000)
  print line } }' > "$W/text/a.txt"
awk 'BEGIN { srand(8); for (i = 0; i < 20000; i++) print "x" int(rand() * 300), "y" i % 17 }' \
  | gzip > "$W/text/b.txt.gz"
awk 'BEGIN { srand(3); for (i = 0; i < 40000; i++)
  printf "u%05d\t%d\tname%d\tcity%d\n", int(rand() * 60000), 1000 + i % 7, i, int(rand() * 40) }' \
  > "$W/tsv/users.tsv"

# ---------------------------------------------------------------- wordcount
both wordcount wordcount --input "$W/text"
check "wordcount: one partition per rank by default" \
  grep -q '"partitions":3' "$W/wordcount.3/_job.json"
check "wordcount: the job report gives each partition's records" \
  python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['partition_stats']; sys.exit(not (len(p)==3 and all(x['reduce_input_records']>0 for x in p)))" "$W/wordcount.3/_job.json"
both wordcount-combiner wordcount --combiner --input "$W/text"
check "wordcount --combiner: the combiner ran" \
  python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['counters']['Map-Reduce Framework']; sys.exit(not c['Combine input records']>c['Combine output records']>0)" "$W/wordcount-combiner.3/_job.json"
check "wordcount --combiner: the same counts as the fold" \
  bash -c "cmp -s <(cat '$W'/wordcount.1/part-* | sort) <(cat '$W'/wordcount-combiner.3/part-* | sort)"
# Three feeding ranks, two runs merged at once: reduce pre-merges.
both wordcount-premerge wordcount --input "$W/text" -D kiln.merge.factor=2 -D kiln.sort.mb=0.2
premerges() {
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['counters']['Map-Reduce Framework'].get('Reduce pre-merge passes', 0))" "$1/_job.json"
}
check "wordcount pre-merge: reduce merged runs before reducing (none by default)" \
  test "$(premerges "$W/wordcount-premerge.3")" -gt 0 -a "$(premerges "$W/wordcount.3")" = 0
check "wordcount pre-merge: the same counts" \
  bash -c "cmp -s <(cat '$W'/wordcount.1/part-* | sort) <(cat '$W'/wordcount-premerge.3/part-* | sort)"

# ---------------------------------------------------------------- launching
# -H instead of a hostfile, a mapping policy of the user's and the network
# named: the same bytes, and the spill directory swept on every host.
PLACE="-H h1,h2,h3 --map-by node --net eth0" on3 "$W/wordcount-H" wordcount --input "$W/text"
check "-H, --map-by node, --net eth0: exit 0" test "$rc" = 0
check "-H, --map-by node, --net eth0: the same bytes as one host" \
  same_output "$W/wordcount.1" "$W/wordcount-H"
check "-H, --map-by node, --net eth0: nothing left in any host's /tmp" clean_everywhere

# The line rank 0 prints as map starts; the failures below must come before it.
MAP_START='^kiln-mr: job [^ ]+ \([a-z]+\): [0-9]+ ranks?, '
check "rank 0 says when map starts" grep -qE "$MAP_START" "$W/job.err"

# What a job reads from its environment reaches the remote ranks, which
# start in a clean one (the ssh stand-in): KILN_DATA, made absolute, and
# any KILN_ variable.
ENV3="KILN_TEST_MARK=m42" on3 "$W/env" wordcount --input "$W/text" -D kiln.test.env=KILN_TEST_MARK
check "environment: a KILN_ variable reaches the ranks on h2 and h3" \
  bash -c "grep -q 'rank 1 (h2): test hook kiln.test.env: KILN_TEST_MARK=m42' '$W/job.err' &&
           grep -q 'rank 2 (h3): test hook kiln.test.env: KILN_TEST_MARK=m42' '$W/job.err'"
rm -rf "$W/env"
on3 "$W/env" wordcount --input "$W/text" -D kiln.test.env=KILN_DATA
check "environment: KILN_DATA reaches the rank on h3" \
  grep -q "rank 2 (h3): test hook kiln.test.env: KILN_DATA=$KILN_DATA\$" "$W/job.err"
rm -rf "$W/env"

# Rank 0 killed with the whole output written but not yet published: no
# output, nothing left, and the same command run again succeeds.
on3 "$W/killed-commit" wordcount --input "$W/text" -D kiln.test.kill.rank=0 \
  -D kiln.test.kill.phase=commit
check "killed-commit: non-zero exit" test "$rc" -ne 0
check "killed-commit: rank 0 on h1 was killed between writing and publishing the output" \
  grep -q "rank 0 (h1): test hook kiln.test.kill.rank: killed in the commit phase at step 0" "$W/job.err"
check "killed-commit: no output" test ! -e "$W/killed-commit"
check "killed-commit: nothing left in any host's /tmp or beside the output" clean_everywhere
on3 "$W/killed-commit" wordcount --input "$W/text"
check "killed-commit: run again, the job writes the same bytes as one host" \
  same_output "$W/wordcount.1" "$W/killed-commit"

# ---------------------------------------------------------------- importtsv
"$KILN" create users --family d --split u15000 --split u30000 --split u45000 > /dev/null
cols=HBASE_ROW_KEY,HBASE_TS_KEY,d:name,d:city
both importtsv importtsv -D importtsv.columns=$cols --table users --input "$W/tsv"
check "importtsv: one HFile per region" test "$(ls "$W/importtsv.3/d" | wc -l)" = 4
check "importtsv: kiln load of the three-host output" \
  bash -c "'$KILN' load users '$W/importtsv.3' > /dev/null 2>> '$W/job.err'"
check "importtsv: a full scan returns every row" rows_match users "$W/importtsv.3"
# The newest cell of each row (the timestamp column, then the last line).
awk -F'\t' '!($1 in ts) || $2 >= ts[$1] { ts[$1] = $2; name[$1] = $3; city[$1] = $4 }
  END { for (r in ts) print r "\t" name[r] "\t" city[r] }' "$W/tsv/users.tsv" | LC_ALL=C sort > "$W/newest"
row=$(awk -F'\t' 'NR == 777 { print $1 }' "$W/newest")
name=$(awk -F'\t' 'NR == 777 { print $2 }' "$W/newest")
check "importtsv: kiln get returns the row's newest cell" \
  bash -c "'$KILN' get users '$row' | grep -qE '^ d:name +timestamp=[0-9]+, value=$name\$'"

"$KILN" create events --family d --salt-buckets 4 > /dev/null
both importtsv-salted importtsv -D importtsv.columns=$cols -D kiln.index=bycity:d:city \
  --table events --input "$W/tsv"
check "salted importtsv: kiln load" \
  bash -c "'$KILN' load events '$W/importtsv-salted.3' > /dev/null 2>> '$W/job.err'"
check "salted importtsv: the index finds the rows of one city" \
  bash -c "[ \"\$('$KILN' scan events --index bycity --value city7 | sed -nE 's/^([0-9]+) row\\(s\\)\$/\\1/p')\" = \
            \"\$(awk -F'\t' '\$3 == \"city7\"' '$W/newest' | wc -l)\" ]"

# ---------------------------------------------------------------- view jobs
"$GEN" useractions --rows 20000 --seed 11 --files 3 --output "$W/ua" 2>> "$W/job.err"
"$KILN" create useractions --family content --split u0300 --split u0600 > /dev/null
both useractions useractions --input "$W/ua" --data "$KILN_DATA"
check "useractions: loaded and scanned" \
  bash -c "'$KILN' load useractions '$W/useractions.3' --no-split > /dev/null 2>> '$W/job.err'" &&
  check "useractions: every row" rows_match useractions "$W/useractions.3"

# Jobs over the loaded table (table input): every rank on every host opens the
# version rank 0 pinned, from the shared data directory.
"$KILN" create dailyactivity --family a --family s > /dev/null
both dailyactivity dailyactivity --input-table useractions --data "$KILN_DATA" -D kiln.table.split.mb=1
check "dailyactivity (from the useractions table): loaded" \
  bash -c "'$KILN' load dailyactivity '$W/dailyactivity.3' --no-split > /dev/null 2>> '$W/job.err'" &&
  check "dailyactivity: every row" rows_match dailyactivity "$W/dailyactivity.3"
both rowcounter rowcounter --input-table useractions --data "$KILN_DATA" -D kiln.table.split.mb=1
check "rowcounter on three hosts counts every useractions row" \
  test "$(cut -f2 "$W/rowcounter.3/part-r-00000")" = "$("$KILN" count useractions | grep -o '^[0-9]*')"
both export export --input-table useractions --data "$KILN_DATA"

"$GEN" tslog --rows 15000 --seed 5 --files 3 --output "$W/ts" 2>> "$W/job.err"
"$KILN" create tslog_bytime --family d --split $'\x02' --split $'\x05' > /dev/null
"$KILN" create tslog_byhost --family d --split cache --split queue > /dev/null
"$KILN" create tslog_stats --family s:bloom=rowcol > /dev/null
both tslog tslog --input "$W/ts" --data "$KILN_DATA"
check "tslog: each layout loaded and scanned" bash -c "
  for l in bytime byhost stats; do
    '$KILN' load tslog_\$l '$W/tslog.3/'\$l --no-split > /dev/null 2>> '$W/job.err' || exit 1
  done"
check "tslog: every row of byhost" rows_match tslog_byhost "$W/tslog.3/byhost"

"$GEN" orders --rows 3000 --seed 3 --files 3 --output "$W/ord" 2>> "$W/job.err"
"$KILN" create orders --family c --family o > /dev/null
both orders orders --customers "$W/ord/customers" --orders "$W/ord/orders" \
  --lines "$W/ord/lines" --data "$KILN_DATA"
check "orders: loaded, every row" bash -c "'$KILN' load orders '$W/orders.3' --no-split > /dev/null 2>> '$W/job.err'" &&
  check "orders: every row scanned" rows_match orders "$W/orders.3"

"$GEN" follows --rows 20000 --seed 4 --files 3 --output "$W/fol" 2>> "$W/job.err"
both follows follows --input "$W/fol" --data "$KILN_DATA"
check "follows: no table yet: sampled regions, loaded" \
  bash -c "'$KILN' create follows --family e > /dev/null && '$KILN' load follows '$W/follows.3' > /dev/null 2>> '$W/job.err'" &&
  check "follows: every row scanned" rows_match follows "$W/follows.3"

"$GEN" reviews --rows 8000 --seed 6 --files 3 --output "$W/rev" 2>> "$W/job.err"
"$KILN" create reviews --family r --split b --split u > /dev/null
both reviews reviews --input "$W/rev" --data "$KILN_DATA"
check "reviews: loaded" bash -c "'$KILN' load reviews '$W/reviews.3' --no-split > /dev/null 2>> '$W/job.err'" &&
  check "reviews: every row scanned" rows_match reviews "$W/reviews.3"

"$GEN" products --rows 8000 --seed 2 --files 3 --bad 3 --output "$W/prod" 2>> "$W/job.err"
"$KILN" create products --family c --family t --split book --split film > /dev/null
both products products --input "$W/prod" --data "$KILN_DATA"
check "products: loaded" bash -c "'$KILN' load products '$W/products.3' --no-split > /dev/null 2>> '$W/job.err'" &&
  check "products: every row scanned" rows_match products "$W/products.3"

# ("events" is the salted importtsv table above)
"$GEN" events --rows 12000 --seed 8 --files 3 --bad 3 --output "$W/evt" 2>> "$W/job.err"
"$KILN" create patient_events --family e --salt-buckets 3 > /dev/null
both events events --input "$W/evt" --table patient_events --data "$KILN_DATA"
check "events (salted table): loaded" \
  bash -c "'$KILN' load patient_events '$W/events.3' --no-split > /dev/null 2>> '$W/job.err'" &&
  check "events: every row scanned" rows_match patient_events "$W/events.3"

"$GEN" graph --rows 6000 --seed 8 --files 3 --output "$W/gr" 2>> "$W/job.err"
"$KILN" create graph --family p --family c --salt-buckets 3 > /dev/null
both graph graph --input "$W/gr" --data "$KILN_DATA"
check "graph: loaded into a salted table" bash -c "'$KILN' load graph '$W/graph.3' --no-split > /dev/null 2>> '$W/job.err'" &&
  check "graph: every row scanned" rows_match graph "$W/graph.3"

check "after every job: nothing left in any host's /tmp or beside the outputs" clean_everywhere

# ---------------------------------------------------------------- failures
# kill_test NAME PHASE: rank 2 (on h3) kills itself at a point inside PHASE
# of an importtsv; the line it prints just before proves it was alive there.
kill_test() {
  local name=$1 phase=$2; shift 2
  on3 "$W/$name" importtsv -D importtsv.columns=$cols --table users --input "$W/tsv" \
    -D kiln.test.kill.rank=2 -D kiln.test.kill.phase="$phase" "$@"
  check "$name: non-zero exit" test "$rc" -ne 0
  check "$name: rank 2 on h3 was killed inside the $phase phase" \
    grep -q "rank 2 (h3): test hook kiln.test.kill.rank: killed in the $phase phase" "$W/job.err"
  check "$name: mpirun saw rank 2 on h3 die by signal 9" \
    grep -qE "rank 2 with PID [0-9]+ on node h3 exited on signal 9" "$W/job.err"
  check "$name: no output, no _SUCCESS" test ! -e "$W/$name"
  check "$name: nothing left in any host's /tmp or beside the output" clean_everywhere
}
kill_test killed-map map -D kiln.test.kill.after=2000
# Shuffle rounds of 64 KiB per pair of ranks (the smallest): the kill falls
# after the first of several.
kill_test killed-shuffle shuffle -D kiln.test.kill.after=1 -D kiln.shuffle.mb=0.1
check "killed-shuffle: one shuffle round had moved data before the kill" \
  grep -q "killed in the shuffle phase at step 1" "$W/job.err"

# A rank that calls MPI_Abort mid-map.
on3 "$W/aborted" importtsv -D importtsv.columns=$cols --table users --input "$W/tsv" \
  -D kiln.test.kill.rank=1 -D kiln.test.kill.after=500 -D kiln.test.kill.signal=abort
check "MPI_Abort on a remote rank: non-zero exit, no output" test "$rc" -ne 0 -a ! -e "$W/aborted"
check "MPI_Abort on a remote rank: rank 1 on h2 aborted inside map" \
  grep -q "rank 1 (h2): test hook kiln.test.kill.rank: aborted in the map phase" "$W/job.err"
check "MPI_Abort on a remote rank: nothing left in any host's /tmp or beside the output" clean_everywhere

# A rank that stops answering (SIGSTOP mid-map): --timeout ends the job.
TIMEOUT=5 on3 "$W/stalled" importtsv -D importtsv.columns=$cols --table users --input "$W/tsv" \
  -D kiln.test.kill.rank=1 -D kiln.test.kill.after=100 -D kiln.test.kill.signal=stop
check "a stalled rank: --timeout ends the job with a non-zero exit" test "$rc" -ne 0
check "a stalled rank: rank 1 on h2 had stopped inside map" \
  grep -q "rank 1 (h2): test hook kiln.test.kill.rank: stopped in the map phase" "$W/job.err"
check "a stalled rank: mpirun reports the time-out" grep -qi "timeout\|time limit\|timed out" "$W/job.err"
check "a stalled rank: no output" test ! -e "$W/stalled"
check "a stalled rank: nothing left in any host's /tmp or beside the output" clean_everywhere

# A host that sees another table at the same path.
mkdir -p "$W/data-h3"
KILN_DATA=$W/data-h3 "$KILN" create users --family d --split u5 > /dev/null
cluster_bind h3 "$W/data-h3" "$W/data"
on3 "$W/skewed" importtsv -D importtsv.columns=$cols --table users --input "$W/tsv"
check "a host with another table: non-zero exit" test "$rc" -ne 0
check "a host with another table: the error names h3 and the table" \
  grep -q "host h3 sees a different .*/users/schema" "$W/job.err"
check "a host with another table: it failed before map" bash -c "! grep -qE \"$MAP_START\" '$W/job.err'"
sed -i "\\|$W/data-h3|d" "$CLUSTER/h3/binds"

# A host that lacks an input file (its view of the input directory is empty).
mkdir -p "$W/empty"
cluster_bind h2 "$W/empty" "$W/tsv"
on3 "$W/noinput" importtsv -D importtsv.columns=$cols --table users --input "$W/tsv"
check "a host without the input: the error names h2 and the file" \
  grep -q "host h2 lacks the input file $W/tsv/users.tsv" "$W/job.err"
sed -i "\\|$W/empty|d" "$CLUSTER/h2/binds"

# A host without the program (its view of build/bin is empty).
mkdir -p "$W/nobin"
cluster_bind h3 "$W/nobin" "$ROOT/$BUILD/bin"
on3 "$W/nobin-out" wordcount --input "$W/text"
check "a host without kiln-mr: non-zero exit, no output" test "$rc" -ne 0 -a ! -e "$W/nobin-out"
check "a host without kiln-mr: the error names h3 and the program" \
  grep -qE "(host|Node:) *h3|h3.*kiln-mr|kiln-mr.*h3" "$W/job.err"
sed -i "\\|$W/nobin|d" "$CLUSTER/h3/binds"

# An output in a host-local directory: other hosts cannot see it.
on3 /tmp/local-out wordcount --input "$W/text"
check "an output outside the shared file system: refused, naming a host" \
  grep -qE "host h[23] does not see the job's temporary output /tmp/local-out" "$W/job.err"
local_out_clean() { clean_everywhere && [ -z "$(cluster_tmp_left h1 'local-out*')" ]; }
check "an output outside the shared file system: nothing left on any host" local_out_clean

# Ranks that resolve different jobs (a test hook skews rank 1's description).
on3 "$W/skew" wordcount --input "$W/text" -D kiln.test.skew.rank=1
check "ranks that disagree: the error names rank 1 and h2" \
  grep -q "rank 1 on host h2 resolved a different job than rank 0 on host h1" "$W/job.err"
check "ranks that disagree: no output" test ! -e "$W/skew"

check "after every failure: nothing left in any host's /tmp or beside the outputs" clean_everywhere
finish
