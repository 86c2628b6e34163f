#!/usr/bin/env bash
# kiln_load_move_test.sh -- `kiln load --move` end to end: a moved output
# scans the same as a copied one, its unsplit HFiles are the store's files
# (same inode, one link), the job output keeps _SUCCESS and _job.json but
# no HFile; --dry-run --move changes nothing; a load killed (kill -9) before
# publishing leaves the output whole and the next move removes the orphaned
# store names; one killed after publishing (both names present) or after
# removing some names is reported already loaded and finished by the next
# move; _MOVED refuses another table; a job output on another file system
# (a tmpfs mounted here, else /dev/shm; neither fails the test) is copied,
# then removed.
# Prints "N passed, N failed"; exits 1 on failure.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
KILN=$BUILD/bin/kiln
T=$(mktemp -d)
MNT=
cleanup() {
    if [ -n "$MNT" ]; then umount "$MNT" 2>/dev/null; fi
    rm -rf "$T"
}
trap cleanup EXIT
D=$T/data
export KILN_DATA=$D

. "$(dirname "${BASH_SOURCE[0]}")/../support/checks.sh"

require_kiln

# make_job DIR TS: cf/p0 in region 0, cf/p1 in region 1, cf/p2 across the
# boundary m (split), _SUCCESS and _job.json.
make_job() {
    rm -rf "$1"
    mkdir -p "$1/cf"
    printf 'a\tcf:q\t%s\tPut\tva\nb\tcf:q\t%s\tPut\tvb\n' "$2" "$2" |
        "$KILN" hfile write "$1/cf/p0" --family cf >/dev/null || bad "hfile write p0"
    printf 'n\tcf:q\t%s\tPut\tvn\nz\tcf:q\t%s\tPut\tvz\n' "$2" "$2" |
        "$KILN" hfile write "$1/cf/p1" --family cf >/dev/null || bad "hfile write p1"
    printf 'c\tcf:q\t%s\tPut\tvc\nx\tcf:q\t%s\tPut\tvx\n' "$2" "$2" |
        "$KILN" hfile write "$1/cf/p2" --family cf >/dev/null || bad "hfile write p2"
    : >"$1/_SUCCESS"
    printf '{"job": "move-test", "ts": %s}\n' "$2" >"$1/_job.json"
}
hfiles_left() { # the job output's HFiles (names not starting with _ or .)
    find "$1" -mindepth 2 -type f ! -name '_*' ! -name '.*' | wc -l | tr -d ' '
}
# orphans TABLE: store files no kept version lists
orphans() {
    run "$KILN" views "$1"
    local listed present
    listed=$(awk -F'\t' 'NR > 1 && $6 ~ /^[0-9]+$/ { s += $6 } END { print s + 0 }' "$T/out")
    present=$(ls "$D/default/$1/files" | wc -l | tr -d ' ')
    echo $((present - listed))
}

# ---------------------------------------------------------------- help
expect_rc "load --help" 0 "$KILN" load --help
expect_grep "--help names --move" "$T/out" '^  --move '
expect_grep "--help: constant time" "$T/out" 'does not grow with the data'
expect_grep "--help: what the output keeps" "$T/out" '_SUCCESS and _job.json'
expect_grep "--help: other file system" "$T/out" 'copied \(or reflinked\), then removed'

# ---------------------------------------------------------------- move vs copy
expect_rc "create c" 0 "$KILN" create c --family cf --split m
expect_rc "create m" 0 "$KILN" create m --family cf --split m
make_job "$T/jc" 100
make_job "$T/jm" 100
ino0=$(stat -c %i "$T/jm/cf/p0")
ino1=$(stat -c %i "$T/jm/cf/p1")
expect_rc "copy load" 0 "$KILN" load c "$T/jc"
expect_rc "move load" 0 "$KILN" load m "$T/jm" --move
expect_grep "move summary counts" "$T/out" '^  3 HFile\(s\): 0 reflinked, 0 copied, 2 moved, 1 split into 2, 0 empty skipped'
expect_grep "move line" "$T/out" '^  move: 2 hard-linked, 0 copied or reflinked .*; 3 HFile name\(s\) removed from the job output'
expect_eq "job output has no HFiles" "$(hfiles_left "$T/jm")" 0
if [ -f "$T/jm/_SUCCESS" ] && [ -f "$T/jm/_job.json" ] && [ -f "$T/jm/_MOVED" ]; then ok; else bad "_SUCCESS, _job.json or _MOVED missing: $(ls -a "$T/jm")"; fi
expect_eq "p0 is a store file" "$(find "$D/default/m/files" -inum "$ino0" | wc -l | tr -d ' ')" 1
expect_eq "p1 is a store file" "$(find "$D/default/m/files" -inum "$ino1" | wc -l | tr -d ' ')" 1
expect_eq "store files linked once" "$(find "$D/default/m/files" -type f -links +1 | wc -l | tr -d ' ')" 0
run "$KILN" scan c; cp "$T/out" "$T/scan.c"
run "$KILN" scan m; cp "$T/out" "$T/scan.m"
expect_grep "scan has the rows" "$T/scan.m" '^6 row\(s\)'
if cmp -s "$T/scan.c" "$T/scan.m"; then ok; else bad "moved and copied tables scan differently: $(diff "$T/scan.c" "$T/scan.m" | head -5)"; fi
expect_rc "move again" 0 "$KILN" load m "$T/jm" --move
expect_grep "move again: already loaded" "$T/out" '^Already loaded: .* version 1 .*move finished: 0 HFile name\(s\) removed'
expect_rc "moved output into another table" 64 "$KILN" load c "$T/jm" --move
expect_grep "refusal names the table" "$T/err" 'moved into table default:m \(version 1\)'

# ---------------------------------------------------------------- dry run
make_job "$T/jd" 200
expect_rc "dry run --move" 0 "$KILN" load m "$T/jd" --move --dry-run
expect_grep "dry run plans a move" "$T/out" $'jd/cf/p0\ttable\tcf\t0\tmove\t2\t'
expect_grep "dry run plans a split" "$T/out" $'jd/cf/p2\ttable\tcf\t0-1\tsplit\t2\t'
expect_grep "dry run changed nothing" "$T/out" 'nothing was changed'
expect_eq "dry run: HFiles kept" "$(hfiles_left "$T/jd")" 3
expect_eq "dry run: not linked" "$(find "$T/jd" -type f -links +1 | wc -l | tr -d ' ')" 0
if [ -e "$T/jd/_MOVED" ]; then bad "dry run wrote _MOVED"; else ok; fi
run "$KILN" views m
expect_eq "dry run: still one version" "$(awk -F'\t' 'NR > 1 && NF >= 6' "$T/out" | wc -l | tr -d ' ')" 1

# ---------------------------------------------------------------- kill -9
# kill_at STEP JOB: a move load of JOB into m stopped after STEP, then killed.
kill_at() {
    KILN_TEST_STEP_FD=3 KILN_TEST_STEP_STOP=$1 "$KILN" load m "$2" --move >/dev/null 2>"$T/load.err" 3>"$T/steps" &
    local lpid=$! waited=0 st
    while :; do
        st=$(proc_state "$lpid")
        [ "$st" = T ] && break
        if [ -z "$st" ] || [ "$waited" -ge 1000 ]; then
            kill -9 "$lpid" 2>/dev/null
            wait "$lpid" 2>/dev/null
            bad "the load never stopped at '$1' (last step '$(tail -n 1 "$T/steps")'; $(head -c 200 "$T/load.err"))"
            return 1
        fi
        sleep 0.01
        waited=$((waited + 1))
    done
    kill -9 "$lpid"
    wait "$lpid" 2>/dev/null
    expect_eq "killed at '$1'" "$?" 137
}
version_of() { "$KILN" describe m | sed -n 's/^CURRENT VERSION => \([0-9]*\).*/\1/p'; }

# Before publishing: the output is whole, its files linked into the store.
make_job "$T/jk" 300
v0=$(version_of)
kill_at "files synced" "$T/jk"
expect_eq "killed before publish: version unchanged" "$(version_of)" "$v0"
expect_eq "killed before publish: HFiles kept" "$(hfiles_left "$T/jk")" 3
expect_eq "killed before publish: orphaned store names" "$(orphans m)" 4
expect_rc "move after the kill" 0 "$KILN" load m "$T/jk" --move
expect_grep "move after the kill loads" "$T/out" '^Loaded .* into default:m as version'
expect_eq "move after the kill: HFiles gone" "$(hfiles_left "$T/jk")" 0
expect_eq "orphans collected" "$(orphans m)" 0
expect_eq "no store file linked twice" "$(find "$D/default/m/files" -type f -links +1 | wc -l | tr -d ' ')" 0
expect_grep "cells of the killed job" <("$KILN" scan m --limit 1) 'timestamp=300'

# After publishing, before _MOVED: both names.
make_job "$T/jp" 400
kill_at published "$T/jp"
v1=$(version_of)
expect_eq "killed after publish: HFiles kept" "$(hfiles_left "$T/jp")" 3
expect_eq "killed after publish: both names" "$(find "$T/jp" -type f -links 2 | wc -l | tr -d ' ')" 2
expect_rc "plain load after the kill" 0 "$KILN" load m "$T/jp"
expect_grep "plain load: already loaded" "$T/out" '^Already loaded: .*nothing was done$'
expect_rc "move after the kill" 0 "$KILN" load m "$T/jp" --move
expect_grep "move finishes" "$T/out" "^Already loaded: .* version $v1 .*move finished: 3 HFile name\\(s\\) removed"
expect_eq "finished: HFiles gone" "$(hfiles_left "$T/jp")" 0
expect_eq "finished: version unchanged" "$(version_of)" "$v1"
expect_eq "finished: store files linked once" "$(find "$D/default/m/files" -type f -links +1 | wc -l | tr -d ' ')" 0

# After removing the first name: _MOVED knows the output.
make_job "$T/jr" 500
kill_at "source removed 0" "$T/jr"
v2=$(version_of)
expect_eq "killed while removing: two HFiles left" "$(hfiles_left "$T/jr")" 2
if [ -f "$T/jr/_MOVED" ]; then ok; else bad "_MOVED not written before the removals"; fi
expect_rc "plain load of a part-moved output" 0 "$KILN" load m "$T/jr"
expect_grep "plain load: cut-short move noted" "$T/out" 'a move of it was cut short: load again with --move'
expect_rc "move finishes the removals" 0 "$KILN" load m "$T/jr" --move
expect_grep "move finishes the rest" "$T/out" "move finished: 2 HFile name\\(s\\) removed"
expect_eq "all removed" "$(hfiles_left "$T/jr")" 0
expect_eq "version unchanged" "$(version_of)" "$v2"
expect_grep "cells of the last job" <("$KILN" scan m --limit 1) 'timestamp=500'

# ---------------------------------------------------------------- another file system
fs=$T/otherfs
mkdir -p "$fs"
if mount -t tmpfs -o size=16m kiln-move-test "$fs" 2>"$T/mount.err"; then
    MNT=$fs
elif [ -d /dev/shm ] && [ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$T")" ]; then
    fs=$(mktemp -d /dev/shm/kiln-move-XXXXXX)
else
    bad "no second file system: mount -t tmpfs failed ($(cat "$T/mount.err")) and /dev/shm is absent or on the same device; run as root"
    fs=
fi
if [ -n "$fs" ]; then
    if [ "$(stat -c %d "$fs")" != "$(stat -c %d "$D")" ]; then ok; else bad "$fs is on the store's device"; fi
    make_job "$fs/jx" 600
    expect_rc "move across file systems" 0 "$KILN" load m "$fs/jx" --move
    expect_grep "across: nothing hard-linked" "$T/out" '^  3 HFile\(s\): [0-9]+ reflinked, [0-9]+ copied, 0 moved, 1 split'
    expect_grep "across: copied, then removed" "$T/out" '^  move: 0 hard-linked, 2 copied or reflinked .*; 3 HFile name\(s\) removed'
    expect_eq "across: HFiles gone" "$(hfiles_left "$fs/jx")" 0
    expect_grep "across: cells loaded" <("$KILN" scan m) '^ x .*timestamp=600, value=vx'
    [ -z "$MNT" ] && rm -rf "$fs"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
