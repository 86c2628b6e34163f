#!/usr/bin/env bash
# kiln_store_test.sh -- end-to-end tests of the region store through the kiln
# client: create / list / describe / regions, load (refusals, splits, dry run,
# duplicates, append, the lock), views and rollback, get / scan / count in
# text and JSON; then a kill -9 loop: `kiln load` is stopped at each step
# it announces (checked, locked, each file staging and staged, files synced,
# manifest and CURRENT written, CURRENT renamed, published, collected) and
# while writing each file, and killed there; the store must then read as
# exactly the old version before the rename of CURRENT and the new one from
# it on, and the next successful load must leave no orphaned file.
# SEED (printed; replay with SEED=N) shuffles the order of the kill points.
# Prints "N passed, N failed"; exits 1 on failure.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
KILN=$BUILD/bin/kiln
SEED=${SEED:-$RANDOM}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
D=$T/data
export KILN_DATA=$D

. "$(dirname "${BASH_SOURCE[0]}")/../support/checks.sh"

echo "seed=$SEED kiln=$KILN"
require_kiln
RANDOM=$SEED

# mkhfile FILE FAMILY < dump-form lines
mkhfile() {
    "$KILN" hfile write "$1" --family "$2" >/dev/null || bad "hfile write $1"
}

# ---------------------------------------------------------------- help and usage
for c in create list describe regions load views rollback get scan count; do
    expect_rc "$c --help" 0 "$KILN" "$c" --help
    expect_grep "$c --help text" "$T/out" "^Usage: kiln $c"
done
expect_rc "kiln --help lists load" 0 "$KILN" --help
expect_grep "kiln --help load row" "$T/out" '^  load '
expect_rc "create without family" 64 "$KILN" create t
expect_rc "create bad family setting" 64 "$KILN" create t --family cf:color=red
expect_grep "create bad setting message" "$T/err" "family cf: unknown setting 'color'"
expect_rc "create bad table name" 64 "$KILN" create ../x --family cf
expect_rc "create bad split escape" 64 "$KILN" create t --family cf --split 'a\xZZ'
expect_rc "create duplicate split" 64 "$KILN" create t --family cf --split a --split a
expect_rc "describe missing table" 66 "$KILN" describe nope
expect_grep "missing table message" "$T/err" 'table default:nope: not found'
expect_rc "get missing table" 66 "$KILN" get nope r
expect_rc "scan bad limit" 64 "$KILN" scan t --limit x
expect_rc "--server unreachable" 74 "$KILN" --server 127.0.0.1:1 scan t

# ---------------------------------------------------------------- create, list, describe
printf 'g\nm\\x00\n\ns\n' >"$T/splits"
expect_rc "create" 0 "$KILN" create ns1:users --family info:versions=3 --family 'stats:ttl=forever,compression=zstd,bloom=rowcol,blocksize=16K' --splits-file "$T/splits"
expect_grep "create output" "$T/out" '^Created table ns1:users \(2 families, 4 regions\)'
expect_rc "create again" 73 "$KILN" create ns1:users --family info
expect_rc "create t" 0 "$KILN" create t --family cf --keep-versions 3
expect_rc "list" 0 "$KILN" list
expect_eq "list output" "$(cat "$T/out")" "$(printf 'TABLE\ndefault:t\nns1:users\n2 row(s)')"
expect_rc "describe" 0 "$KILN" describe ns1:users
expect_grep "describe info" "$T/out" "^\{NAME => 'info', VERSIONS => '3', TTL => 'FOREVER', COMPRESSION => 'SNAPPY', BLOOMFILTER => 'ROW', BLOCKSIZE => '65536'\}"
expect_grep "describe stats" "$T/out" "^\{NAME => 'stats', VERSIONS => '1', TTL => 'FOREVER', COMPRESSION => 'ZSTD', BLOOMFILTER => 'ROWCOL', BLOCKSIZE => '16384'\}"
expect_grep "describe regions" "$T/out" '^REGIONS => 4, KEEP_VERSIONS => 2'
expect_grep "describe no version" "$T/out" '^CURRENT VERSION => none'
expect_rc "regions" 0 "$KILN" regions ns1:users
expect_grep "regions binary split" "$T/out" $'^2\tm\\\\x00\ts\t0\t0\t0$'
expect_rc "scan empty table" 0 "$KILN" scan ns1:users
expect_grep "scan empty" "$T/out" '^0 row\(s\)'

# ---------------------------------------------------------------- load refusals
J1=$T/job1
mkdir -p "$J1/info" "$J1/stats"
{
    printf 'alice\tinfo:name\t100\tPut\tAlice\n'
    printf 'alice\tinfo:name\t90\tPut\tAl\n'
    printf 'bob\tinfo:name\t100\tPut\tBob\n'
    printf 'h\\x01\tinfo:name\t100\tPut\tbin\\xFF\n'
    printf 'mallory\tinfo:name\t100\tPut\tM\n'
    printf 'zed\tinfo:name\t100\tPut\tZed\n'
} | mkhfile "$J1/info/part-r-00000" info
printf 'bob\tstats:visits\t100\tPut\t7\n' | mkhfile "$J1/stats/part-r-00000" stats
expect_rc "load without _SUCCESS" 66 "$KILN" load ns1:users "$J1"
expect_grep "no _SUCCESS message" "$T/err" '_SUCCESS'
touch "$J1/_SUCCESS"
expect_rc "load --no-split straddling" 64 "$KILN" load ns1:users "$J1" --no-split
expect_grep "straddle message" "$T/err" "part-r-00000: rows straddle the boundary 'g'"
mkdir "$J1/other"
expect_rc "load unknown family" 64 "$KILN" load ns1:users "$J1"
expect_grep "unknown family message" "$T/err" "family directory 'other' is not a family of table ns1:users"
rmdir "$J1/other"
cp "$J1/stats/part-r-00000" "$T/saved.hfile"
printf '\x00\x00\x00\x00\x00\x00\x00\x00' | dd of="$J1/stats/part-r-00000" bs=1 seek=$(( $(stat -c %s "$J1/stats/part-r-00000") - 4096 )) conv=notrunc 2>/dev/null
expect_rc "load corrupt trailer" 65 "$KILN" load ns1:users "$J1"
expect_grep "corrupt message names the file" "$T/err" 'stats/part-r-00000'
cp "$T/saved.hfile" "$J1/stats/part-r-00000"
expect_rc "nothing published by refusals" 0 "$KILN" views ns1:users
expect_grep "no views" "$T/out" '^0 row\(s\)'

# ---------------------------------------------------------------- load, read
expect_rc "load --dry-run" 0 "$KILN" load ns1:users "$J1" --dry-run
expect_grep "dry run plan" "$T/out" $'info/part-r-00000\ttable\tinfo\t0-3\tsplit\t6\t'
expect_grep "dry run summary" "$T/out" '^Dry run: .*nothing was changed'
expect_rc "still nothing published" 0 "$KILN" views ns1:users
expect_grep "still no views" "$T/out" '^0 row\(s\)'
expect_rc "load" 0 "$KILN" load ns1:users "$J1"
expect_grep "load prints version 1" "$T/out" '^Loaded .* into ns1:users as version 1 \(replace, parent 0\)'
expect_grep "load split counts" "$T/out" '2 HFile\(s\): [01] reflinked, [01] copied, 0 moved, 1 split into 4'
expect_eq "job file left in place, not linked" "$(stat -c %h "$J1/stats/part-r-00000")" "1"
expect_rc "load same output again" 0 "$KILN" load ns1:users "$J1"
expect_grep "duplicate detected" "$T/out" '^Already loaded: .* version 1 .*nothing was done'
expect_rc "views after duplicate" 0 "$KILN" views ns1:users
expect_grep "one view" "$T/out" '^1 row\(s\)'

expect_rc "scan" 0 "$KILN" scan ns1:users
expect_eq "scan output" "$(cat "$T/out")" "$(printf '%s\n' \
    'ROW                             COLUMN+CELL' \
    ' alice                          column=info:name, timestamp=100, value=Alice' \
    ' bob                            column=info:name, timestamp=100, value=Bob' \
    ' bob                            column=stats:visits, timestamp=100, value=7' \
    ' h\x01                          column=info:name, timestamp=100, value=bin\xFF' \
    ' mallory                        column=info:name, timestamp=100, value=M' \
    ' zed                            column=info:name, timestamp=100, value=Zed' \
    '5 row(s)')"
expect_rc "get" 0 "$KILN" get ns1:users alice --versions 5
expect_eq "get output" "$(cat "$T/out")" "$(printf '%s\n' \
    'COLUMN                          CELL' \
    ' info:name                      timestamp=100, value=Alice' \
    ' info:name                      timestamp=90, value=Al' \
    '2 row(s)')"
expect_rc "get column" 0 "$KILN" get ns1:users bob stats:visits
expect_grep "get column output" "$T/out" '^ stats:visits +timestamp=100, value=7$'
expect_grep "get column only" "$T/out" '^1 row\(s\)'
expect_rc "get binary row" 0 "$KILN" get ns1:users 'h\x01'
expect_grep "get binary value" "$T/out" 'value=bin\\xFF$'
expect_rc "get absent row" 0 "$KILN" get ns1:users nobody
expect_grep "get absent" "$T/out" '^0 row\(s\)'
expect_rc "get unknown family" 64 "$KILN" get ns1:users bob nofam
expect_rc "get --json" 0 "$KILN" get ns1:users bob --json
expect_eq "get json" "$(cat "$T/out")" '{"Row":[{"key":"Ym9i","Cell":[{"column":"aW5mbzpuYW1l","timestamp":100,"$":"Qm9i"},{"column":"c3RhdHM6dmlzaXRz","timestamp":100,"$":"Nw=="}]}]}'
expect_rc "scan --json" 0 "$KILN" scan ns1:users --json --limit 2
if command -v python3 >/dev/null; then
    if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["Row"])==2' "$T/out"; then ok; else bad "scan json parses"; fi
fi
expect_rc "scan range" 0 "$KILN" scan ns1:users --start b --stop mallory
expect_grep "scan range rows" "$T/out" '^2 row\(s\)'
expect_rc "scan prefix" 0 "$KILN" scan ns1:users --prefix 'h'
expect_grep "scan prefix rows" "$T/out" '^1 row\(s\)'
expect_rc "scan reversed" 0 "$KILN" scan ns1:users --reversed --limit 2
expect_eq "scan reversed rows" "$(grep -o '^ [a-z]*' "$T/out" | tr -d ' ' | tr '\n' ,)" "zed,mallory,"
expect_rc "scan reversed start/stop" 0 "$KILN" scan ns1:users --reversed --start mallory --stop alice
expect_eq "scan reversed range" "$(grep -o '^ [a-z]*' "$T/out" | tr -d ' ' | uniq | tr '\n' ,)" "mallory,h,bob,"
expect_rc "scan columns" 0 "$KILN" scan ns1:users --columns stats
expect_grep "scan columns rows" "$T/out" '^1 row\(s\)'
expect_rc "count" 0 "$KILN" count ns1:users
expect_eq "count output" "$(cat "$T/out")" "5 row(s)"
expect_rc "regions after load" 0 "$KILN" regions ns1:users
expect_grep "regions version" "$T/out" '^# table ns1:users, version 1'

# ---------------------------------------------------------------- append, views, rollback
J2=$T/job2
mkdir -p "$J2/info"
printf 'alice\tinfo:name\t100\tPut\tAlice2\nalice\tinfo:name\t200\tDeleteColumn\t\nbob\tinfo:name\t150\tPut\tBobby\n' | mkhfile "$J2/info/a" info
touch "$J2/_SUCCESS"
expect_rc "load --append" 0 "$KILN" load ns1:users "$J2" --append
expect_grep "append version" "$T/out" 'as version 2 \(append, parent 1\)'
expect_rc "get after append: deleted" 0 "$KILN" get ns1:users alice
expect_grep "alice deleted" "$T/out" '^0 row\(s\)'
expect_rc "get after append: newer" 0 "$KILN" get ns1:users bob info:name
expect_grep "bob newer" "$T/out" 'timestamp=150, value=Bobby'
expect_rc "append same again" 0 "$KILN" load ns1:users "$J2" --append
expect_grep "append duplicate" "$T/out" '^Already loaded'
expect_rc "append first job again" 0 "$KILN" load ns1:users "$J1" --append
expect_grep "first job is in the appended version" "$T/out" 'loaded in version 1'
expect_rc "replace and append together" 64 "$KILN" load ns1:users "$J2" --append --replace
expect_rc "views" 0 "$KILN" views ns1:users
expect_grep "views current" "$T/out" $'^2\t\\*\t[0-9T:.-]+Z\tappend\t1\t6\t'
expect_grep "views older" "$T/out" $'^1\t\t.*\treplace\t0\t5\t[0-9]+\t.*/job1$'
expect_rc "rollback" 0 "$KILN" rollback ns1:users
expect_grep "rollback message" "$T/out" '^Rolled back ns1:users from version 2 to version 1'
expect_rc "get after rollback" 0 "$KILN" get ns1:users alice
expect_grep "alice back" "$T/out" 'value=Alice$'
expect_rc "rollback below the oldest" 66 "$KILN" rollback ns1:users
expect_rc "rollback forward" 0 "$KILN" rollback ns1:users 2
expect_rc "rollback to current" 64 "$KILN" rollback ns1:users 2
expect_rc "rollback unknown" 66 "$KILN" rollback ns1:users 9
expect_grep "rollback unknown message" "$T/err" 'version 9 is not kept'
expect_rc "rollback bad version" 64 "$KILN" rollback ns1:users x

# ---------------------------------------------------------------- the lock
J3=$T/job3
mkdir -p "$J3/info"
printf 'carol\tinfo:name\t100\tPut\tCarol\n' | mkhfile "$J3/info/a" info
touch "$J3/_SUCCESS"
flock "$D/ns1/users/LOCK" sleep 2 &
lockpid=$!
sleep 0.3
expect_rc "load while locked" 75 "$KILN" load ns1:users "$J3"
expect_grep "lock message" "$T/err" 'locked by another load'
expect_rc "rollback while locked" 75 "$KILN" rollback ns1:users
expect_rc "load --wait" 0 "$KILN" load ns1:users "$J3" --wait=10
expect_grep "waited and loaded" "$T/out" 'as version 3'
wait "$lockpid"

# ---------------------------------------------------------------- job files rewritten, fsync failure
# The store has its own copy: truncating and rewriting the job's file after
# the load leaves the loaded version readable and unchanged.
expect_rc "create imm" 0 "$KILN" create imm --family info
JI=$T/jobimm
mkdir -p "$JI/info"
printf 'a\tinfo:x\t1\tPut\tone\nb\tinfo:x\t1\tPut\ttwo\n' | mkhfile "$JI/info/p" info
touch "$JI/_SUCCESS"
expect_rc "load imm" 0 "$KILN" load imm "$JI"
expect_rc "scan imm" 0 "$KILN" scan imm
cp "$T/out" "$T/imm.before"
printf 'rewritten in place' >"$JI/info/p"
expect_rc "scan imm after the job file was rewritten" 0 "$KILN" scan imm
expect_eq "loaded version unchanged" "$(cat "$T/out")" "$(cat "$T/imm.before")"

# A failed fsync of the table directory after the CURRENT rename (an
# LD_PRELOAD shim fails it): the new version is current, and load says so
# with exit status 3.
expect_rc "load --help documents exit 3" 0 "$KILN" load --help
expect_grep "exit 3 in help" "$T/out" '3 the new version is published'
if command -v cc >/dev/null; then
    cat >"$T/failfsync.c" <<'CEOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* fsync fails with EIO on the directory named by $FAIL_FSYNC_DIR. */
int fsync(int fd)
{
    static int (*real)(int);
    if (real == NULL)
        real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    const char *want = getenv("FAIL_FSYNC_DIR");
    char link[64], path[4096];
    struct stat st;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (want != NULL && n > 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        path[n] = '\0';
        if (strcmp(path, want) == 0) {
            errno = EIO;
            return -1;
        }
    }
    return real(fd);
}
CEOF
    if cc -shared -fPIC -o "$T/failfsync.so" "$T/failfsync.c" -ldl; then
        expect_rc "create dur" 0 "$KILN" create dur --family info
        JD=$T/jobdur
        mkdir -p "$JD/info"
        printf 'a\tinfo:x\t1\tPut\tone\n' | mkhfile "$JD/info/p" info
        touch "$JD/_SUCCESS"
        expect_rc "load with the table directory fsync failing" 3 \
            env LD_PRELOAD="$T/failfsync.so" FAIL_FSYNC_DIR="$(cd "$D/default/dur" && pwd -P)" \
            ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
            "$KILN" load dur "$JD"
        expect_grep "unconfirmed message" "$T/err" 'version 1 of dur is published and current, but its durability could not be confirmed'
        expect_rc "views after unconfirmed load" 0 "$KILN" views dur
        expect_grep "version 1 is current" "$T/out" $'^1\t\\*\t'
    else
        bad "cannot build the fsync shim (cc)"
    fi
else
    bad "no C compiler for the fsync shim"
fi

# ---------------------------------------------------------------- many files, few descriptors
# 200 HFiles loaded and counted under ulimit -n 24 (the file cache reopens).
expect_rc "create many" 0 "$KILN" create many --family cf
JM=$T/jobmany
mkdir -p "$JM/cf"
for i in $(seq 0 199); do
    printf 'r%05d\tcf:q\t1\tPut\tv%d\n' "$i" "$i" | mkhfile "$JM/cf/p$i" cf
done
touch "$JM/_SUCCESS"
expect_rc "load 200 files under ulimit -n 24" 0 bash -c "ulimit -n 24 && exec \"\$0\" load many \"\$1\" --max-open-files 8" "$KILN" "$JM"
expect_rc "count 200 files under ulimit -n 24" 0 bash -c "ulimit -n 24 && exec \"\$0\" count many" "$KILN"
expect_eq "200 rows" "$(cat "$T/out")" "200 row(s)"
expect_rc "--max-open-files bounds" 64 "$KILN" load many "$JM" --max-open-files 2

# ---------------------------------------------------------------- kill -9 at every step of a load
# Table big: 4 regions; jobs A and B hold the same rows with values "A-i" /
# "B-i": four files straddling every region (split) and one inside the last
# region (copied). kiln load announces each step on KILN_TEST_STEP_FD and
# stops itself (SIGSTOP) after KILN_TEST_STEP_STOP, so every kill lands at a
# known point of a live load: the loop waits for the load to stop there,
# checks the step it announced last, kills it with SIGKILL and wants exit
# status 137. "inside N" points resume the load stopped at "staging N" and
# kill it at once, while file N is being written (proven by "staging N"
# still being its last step). Before the rename of CURRENT the table must
# read exactly as the old version, from it on as the new one: every cell,
# compared by a digest of a full scan. A point never reached fails.
N=80000
expect_rc "create big" 0 "$KILN" create big --family cf --split r0020000 --split r0040000 --split r0060000
for j in A B; do
    mkdir -p "$T/job$j/cf"
    for k in 0 1 2 3; do
        awk -v k=$k -v n=$N -v j=$j 'BEGIN { for (i = k; i < n; i += 4) printf "r%07d\tcf:q\t1000\tPut\t%s-%d-padding-padding\n", i, j, i }' |
            mkhfile "$T/job$j/cf/part-$k" cf
    done
    awk -v j=$j 'BEGIN { for (i = 0; i < 1000; i++) printf "s%07d\tcf:q\t1000\tPut\t%s-s%d\n", i, j, i }' |
        mkhfile "$T/job$j/cf/part-4" cf
    touch "$T/job$j/_SUCCESS"
done
scan_digest() { "$KILN" scan big 2>&1 | md5sum | cut -d' ' -f1; }
expect_rc "big load A" 0 "$KILN" load big "$T/jobA"
digest_A=$(scan_digest)
run "$KILN" count big
expect_eq "big A count" "$(cat "$T/out")" "$((N + 1000)) row(s)"
expect_rc "big load B, steps announced" 0 env KILN_TEST_STEP_FD=3 "$KILN" load big "$T/jobB" 3>"$T/steps.all"
digest_B=$(scan_digest)
if [ "$digest_A" != "$digest_B" ] && [ "$("$KILN" get big s0000999 | grep -o 'value=B-s999')" = value=B-s999 ]; then ok; else bad "scans of versions A and B are not told apart"; fi
nfiles=$(grep -c '^staging ' "$T/steps.all")
expect_eq "steps of a load" "$(grep -vE '^(staging|staged) ' "$T/steps.all" | tr '\n' ,)" \
    "checked,locked,files synced,manifest written,current written,current renamed,published,gc manifests removed,collected,"
expect_eq "files staged" "$nfiles" 5
points=()
while IFS= read -r step; do
    points+=("$step")
    case $step in staging\ *) points+=("inside ${step#staging }") ;; esac
done <"$T/steps.all"
for ((i = ${#points[@]} - 1; i > 0; i--)); do   # shuffle (SEED)
    k=$((RANDOM % (i + 1)))
    p=${points[i]}; points[i]=${points[k]}; points[k]=$p
done

# load_stopped_at NEXT STEP: start a load of job NEXT that stops after STEP;
# sets lpid, or returns 1 (with lpid reaped) when it ended without stopping.
load_stopped_at() {
    KILN_TEST_STEP_FD=3 KILN_TEST_STEP_STOP=$2 "$KILN" load big "$T/job$1" >/dev/null 2>"$T/load.err" 3>"$T/steps" &
    lpid=$!
    local waited=0 st
    while :; do
        st=$(proc_state "$lpid")
        [ "$st" = T ] && return 0
        if [ -z "$st" ] || [ "$waited" -ge 1000 ]; then
            kill -9 "$lpid" 2>/dev/null
            wait "$lpid" 2>/dev/null
            return 1
        fi
        sleep 0.01
        waited=$((waited + 1))
    done
}
cur=B
covered=0
kills=0
missed=()
start=$(date +%s%N)
for point in "${points[@]}"; do
    next=A
    [ "$cur" = A ] && next=B
    case $point in inside\ *) stop="staging ${point#inside }" ;; *) stop=$point ;; esac
    reached=0
    rc=0
    for try in 1 2 3 4 5; do
        if ! load_stopped_at "$next" "$stop"; then
            bad "kill at '$point': the load never stopped at '$stop' (last step '$(tail -n 1 "$T/steps")'; $(head -c 200 "$T/load.err"))"
            break
        fi
        last=$(tail -n 1 "$T/steps")
        if [ "$last" != "$stop" ]; then
            bad "kill at '$point': the stopped load announced '$last' last"
            kill -9 "$lpid"; wait "$lpid" 2>/dev/null
            break
        fi
        if [ "$stop" != checked ] && [ "$(cat "$D/default/big/LOCK" 2>/dev/null)" != "$lpid" ]; then
            bad "kill at '$point': the stopped load (pid $lpid) does not hold the table LOCK"
        fi
        if [ "$stop" != "$point" ]; then kill -CONT "$lpid"; fi
        kill -9 "$lpid"
        wait "$lpid" 2>/dev/null
        rc=$?
        if [ "$rc" -ne 137 ]; then
            bad "kill at '$point': exit status $rc, want 137 (killed by SIGKILL)"
            break
        fi
        kills=$((kills + 1))
        last=$(tail -n 1 "$T/steps")
        # "inside N" counts only if file N was still being written.
        if [ "$last" = "$stop" ]; then reached=1; break; fi
    done
    # The old version up to the rename of CURRENT, the new one from it on.
    want=$cur
    case $point in "current renamed" | published | "gc manifests removed" | collected) want=$next ;; esac
    [ "$rc" -eq 137 ] && case $(scan_digest) in
        "$(eval echo "\$digest_$want")") ok; cur=$want ;;
        "$digest_A") bad "kill at '$point': table reads as version A, want $want"; cur=A ;;
        "$digest_B") bad "kill at '$point': table reads as version B, want $want"; cur=B ;;
        *) bad "kill at '$point': table reads as neither A nor B: $("$KILN" scan big 2>&1 | tail -n 2)"; cur=unknown ;;
    esac
    if [ "$reached" -eq 1 ]; then covered=$((covered + 1)); else missed+=("$point"); fi
done
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "kill loop: $covered of ${#points[@]} points covered, $kills loads killed (exit 137) in ${elapsed_ms} ms"
if [ "${#missed[@]}" -eq 0 ]; then ok; else bad "kill points never reached: ${missed[*]}"; fi
expect_eq "points of a load" "${#points[@]}" $((9 + 3 * nfiles))
# The next successful load removes what the killed ones left behind.
next=B
[ "$cur" = B ] && next=A
expect_rc "load after kills" 0 "$KILN" load big "$T/job$next"
expect_eq "view after kills" "$(scan_digest)" "$(eval echo "\$digest_$next")"
run "$KILN" views big
listed=$(awk -F'\t' 'NR > 1 && $6 ~ /^[0-9]+$/ { s += $6 } END { print s + 0 }' "$T/out")
present=$(ls "$D/default/big/files" | wc -l | tr -d ' ')
expect_eq "no orphaned files after kills" "$present" "$listed"
expect_eq "no temporary manifests" "$(ls "$D/default/big/manifests" | grep -c '\.' )" "0"
if [ -e "$D/default/big/CURRENT.tmp" ]; then bad "CURRENT.tmp left behind"; else ok; fi
expect_eq "kept versions" "$(ls "$D/default/big/manifests" | wc -l | tr -d ' ')" "2"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
