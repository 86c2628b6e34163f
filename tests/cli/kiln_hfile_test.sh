#!/usr/bin/env bash
# kiln_hfile_test.sh -- end-to-end tests of `kiln hfile dump|meta|check|write`
# and of the client's usage handling, against the HBase-written vectors in
# tests/data/hbase. Expected dumps of the NONE-encoded vectors are
# SHA-256 sums of dumps made by an independent decoder; the FAST_DIFF vectors
# are held to their cell counts, their FileInfo/index first and last keys and
# the round trip. Round trips shuffle their input with a seed that is printed
# (replay with SEED=N). Prints "N passed, N failed"; exits 1 on any failure.
set -u
shopt -s lastpipe   # `printf ... | { run ...; }` keeps $rc in this shell
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
KILN=$BUILD/bin/kiln
TD=${KILN_TESTDATA:-$ROOT/tests/data/hbase}
SEED=${SEED:-$RANDOM}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

. "$(dirname "${BASH_SOURCE[0]}")/../support/checks.sh"

echo "seed=$SEED kiln=$KILN testdata=$TD"
require_kiln
# The vectors are part of the checkout: a missing one is a failure, not a skip.
for v in hbase264_none_rowbloom_10cells hbase264_none_rowbloom_15blocks \
         rsflush_none_rowbloom_3cells rsflush_none_deletefamily_dfbloom \
         hbase264_snappy_tags_rowbloom hbase264_zstd_tags_39blocks \
         hbase264_gz_tags_rowbloom hbase264_gz_fastdiff_tags_rowbloom \
         hbase264_none_fastdiff_tags_rowbloom; do
    if [ ! -f "$TD/$v.hfile" ]; then
        echo "FAIL: test vector missing: $TD/$v.hfile"
        echo "0 passed, 1 failed"
        exit 1
    fi
done

# shuffle: reorder stdin lines deterministically from $SEED.
shuffle() {
    awk -v s="$SEED" 'BEGIN { srand(s) } { printf "%.12f\t%s\n", rand(), $0 }' |
        LC_ALL=C sort -k1,1 | cut -f2-
}

# ---------------------------------------------------------------- usage
expect_rc "kiln --help" 0 "$KILN" --help
expect_grep "kiln --help text" "$T/out" '^Usage: kiln '
expect_grep "kiln --help lists hfile" "$T/out" '^  hfile '
expect_rc "kiln --version" 0 "$KILN" --version
expect_eq "kiln --version text" "$(cat "$T/out")" "kiln $(cat "$ROOT/VERSION")"
expect_rc "kiln hfile --help" 0 "$KILN" hfile --help
expect_grep "kiln hfile --help text" "$T/out" 'kiln hfile write OUT'
expect_rc "kiln help hfile" 0 "$KILN" help hfile
expect_rc "kiln hfile dump --help" 0 "$KILN" hfile dump --help
expect_rc "kiln (no command)" 64 "$KILN"
expect_rc "kiln unknown command" 64 "$KILN" frobnicate
expect_grep "unknown command message" "$T/err" "unknown command 'frobnicate'"
expect_rc "kiln unknown option" 64 "$KILN" --frob hfile
expect_rc "kiln --data without value" 64 "$KILN" --data
expect_rc "kiln hfile (no subcommand)" 64 "$KILN" hfile
expect_rc "kiln hfile unknown subcommand" 64 "$KILN" hfile frob
expect_rc "dump without FILE" 64 "$KILN" hfile dump
expect_rc "dump with two files" 64 "$KILN" hfile dump a b
expect_rc "dump unknown option" 64 "$KILN" hfile dump --bogus "$TD/hbase264_none_rowbloom_10cells.hfile"
expect_rc "dump --limit not a number" 64 "$KILN" hfile dump --limit x "$TD/hbase264_none_rowbloom_10cells.hfile"
expect_rc "dump --row bad escape" 64 "$KILN" hfile dump --row 'a\xZZ' "$TD/hbase264_none_rowbloom_10cells.hfile"
expect_rc "meta without FILE" 64 "$KILN" hfile meta
expect_rc "check without FILE" 64 "$KILN" hfile check
expect_rc "write without OUT" 64 "$KILN" hfile write
expect_rc "write bad codec" 64 "$KILN" hfile write "$T/x.hfile" --compression lzo
expect_rc "write bad bloom" 64 "$KILN" hfile write "$T/x.hfile" --bloom huge
expect_rc "write bad block size" 64 "$KILN" hfile write "$T/x.hfile" --block-size 0
expect_rc "write empty --family" 64 "$KILN" hfile write "$T/x.hfile" --family ''
expect_rc "write --family bad escape" 64 "$KILN" hfile write "$T/x.hfile" --family 'a\xZZ'
expect_rc "dump missing file" 66 "$KILN" hfile dump "$T/nope.hfile"
expect_rc "meta missing file" 66 "$KILN" hfile meta "$T/nope.hfile"
expect_rc "check missing file" 66 "$KILN" hfile check "$T/nope.hfile"
expect_rc "write missing --input" 66 "$KILN" hfile write "$T/x.hfile" --input "$T/nope.txt"

# ---------------------------------------------------------------- vectors
# file | cells | sha256 of the expected dump (independent decoder) or "-"
VECTORS="
hbase264_none_rowbloom_10cells.hfile 10 81f80b2d0dc6e86905a10f541c4ca11968b4759ca20c44f5e079e60e69aa8eaa
hbase264_none_rowbloom_15blocks.hfile 100 ee93738916e0abcd3b4948caf87509b0eb0271c8cc1526ddbc91bb1a7381f9fe
rsflush_none_rowbloom_3cells.hfile 3 dbb4a7a5e3f9020cc040fbfa1253667298ef81f49020a14d16664e5f654ee631
rsflush_none_deletefamily_dfbloom.hfile 6 0fde90f3482bb9bde8a4d92cac601f04faed85788d1cba5d65a220e4916db496
hbase264_snappy_tags_rowbloom.hfile 48 abaf6f4039c27f32a9af5dc62c54ae6fbe9cac965a450a441df8ccfb29a67c3b
hbase264_zstd_tags_39blocks.hfile 39 9d91e9512764a846130dc241dcfd9a3f9d2deb43cc38f0726faa3480473ff5e8
hbase264_gz_tags_rowbloom.hfile 120 b74df6d08df7e78a4dfc6d4c0044be3a95888866f67cdcf99040b97b3aaa02ac
hbase264_gz_fastdiff_tags_rowbloom.hfile 528 -
hbase264_none_fastdiff_tags_rowbloom.hfile 30 -
"
CODECS=(none gz snappy zstd lz4)
BLOOMS=(none row rowcol)
i=0
while read -r name cells sum; do
    [ -n "$name" ] || continue
    f=$TD/$name
    expect_rc "dump $name" 0 "$KILN" hfile dump "$f"
    cp "$T/out" "$T/$name.dump"
    expect_eq "dump $name cell count" "$(wc -l <"$T/$name.dump" | tr -d ' ')" "$cells"
    if [ "$sum" != "-" ]; then
        expect_eq "dump $name matches the independent decoder" \
            "$(sha256sum <"$T/$name.dump" | cut -d' ' -f1)" "$sum"
    fi
    expect_rc "check $name" 0 "$KILN" hfile check "$f"
    expect_eq "check $name output" "$(cat "$T/out")" "$f: OK ($cells cells)"
    expect_rc "meta $name" 0 "$KILN" hfile meta "$f"
    expect_grep "meta $name entry count" "$T/out" "^  entry_count=$cells\$"
    # The index's first key and FileInfo's LASTKEY name the first and last cells dumped.
    first=$(head -1 "$T/$name.dump" | cut -f1-4 | tr '\t' '/')
    last=$(tail -1 "$T/$name.dump" | cut -f1-4 | tr '\t' '/')
    expect_eq "meta $name first_key" "$(grep '^  first_key=' "$T/out" | cut -d= -f2-)" "$first"
    expect_eq "meta $name last_key" "$(grep '^  last_key=' "$T/out" | cut -d= -f2-)" "$last"
    expect_eq "meta $name hfile.LASTKEY" "$(grep '^  hfile.LASTKEY = ' "$T/out" | cut -d' ' -f5-)" "$last"

    # Round trip with a codec and a bloom that rotate over the vectors.
    codec=${CODECS[$((i % 5))]}
    bloom=${BLOOMS[$((i % 3))]}
    shuffle <"$T/$name.dump" >"$T/shuf.txt"
    expect_rc "write $name ($codec, $bloom)" 0 "$KILN" hfile write "$T/rt.hfile" \
        --compression "$codec" --bloom "$bloom" --block-size 512 --input "$T/shuf.txt"
    expect_rc "dump rewritten $name" 0 "$KILN" hfile dump "$T/rt.hfile"
    if cmp -s "$T/out" "$T/$name.dump"; then ok; else bad "round trip $name ($codec, $bloom) differs"; fi
    expect_rc "check rewritten $name" 0 "$KILN" hfile check "$T/rt.hfile"
    i=$((i + 1))
done <<<"$VECTORS"

expect_eq "10-cell first line" "$(head -1 "$T/hbase264_none_rowbloom_10cells.hfile.dump")" \
    "$(printf 'row-00\tcf:q\t1700000000000\tPut\tval-00')"
expect_eq "10-cell last line" "$(tail -1 "$T/hbase264_none_rowbloom_10cells.hfile.dump")" \
    "$(printf 'row-09\tcf:q\t1700000000000\tPut\tval-09')"
expect_eq "15-block last line" "$(tail -1 "$T/hbase264_none_rowbloom_15blocks.hfile.dump")" \
    "$(printf 'row-099\tcf:q\t1700000000000\tPut\tval-099')"
expect_eq "delete-family marker" "$(grep -c "$(printf '^orange\tcf:\t[0-9]*\tDeleteFamily\t$')" \
    "$T/rsflush_none_deletefamily_dfbloom.hfile.dump")" "1"

# ---------------------------------------------------------------- every codec x bloom, with tags and mvcc
tagfile=$TD/hbase264_snappy_tags_rowbloom.hfile
"$KILN" hfile dump --tags --mvcc "$tagfile" >"$T/tags.dump"
expect_eq "dump --tags --mvcc line count" "$(wc -l <"$T/tags.dump" | tr -d ' ')" 48
expect_grep "dump --tags shows tags" "$T/tags.dump" $'\ttags=[^\t]+\tmvcc=[0-9]+$'
shuffle <"$T/tags.dump" >"$T/tags.shuf"
for codec in "${CODECS[@]}"; do
    for bloom in "${BLOOMS[@]}"; do
        expect_rc "write tags ($codec, $bloom)" 0 "$KILN" hfile write "$T/m.hfile" \
            --compression "$codec" --bloom "$bloom" --block-size 1K --input "$T/tags.shuf"
        expect_rc "check tags ($codec, $bloom)" 0 "$KILN" hfile check "$T/m.hfile"
        run "$KILN" hfile dump --tags --mvcc "$T/m.hfile"
        if cmp -s "$T/out" "$T/tags.dump"; then ok; else bad "tags round trip ($codec, $bloom) differs"; fi
        run "$KILN" hfile meta "$T/m.hfile"
        expect_grep "meta codec ($codec)" "$T/out" "^  codec=$(echo "$codec" | tr a-z A-Z) "
        expect_grep "meta bloom ($bloom)" "$T/out" "^Bloom filter: $(echo "$bloom" | tr a-z A-Z)\$"
    done
done

# ---------------------------------------------------------------- binary keys
# Written in HBase order here (rows by unsigned bytes; qualifiers ascending;
# timestamps descending; types descending), then shuffled before writing.
cat >"$T/bin.sorted" <<'EOF'
\x00	cf:	5	Put	empty qualifier
\x00	cf:q	9	Put	\x00\x01\x02
\x00	cf:q	3	DeleteColumn	
\x00	cf:q	3	Put	tab\x09newline\x0Aback\x5Cslash
\x00	cf:q:1	1	Put	colon in qualifier
\x00	cf:\xFF	1	Put	high qualifier
\x00\x00	cf:q	1	DeleteFamilyVersion	
\x09tab	cf:q	1	Put	row with a tab
\x0Anl	cf:q	1	Put	row with a newline
a\x5Cb	cf:q	1	Put	backslash row
a\x5Cc	cf:q	7	Put	another backslash row
\x7F	cf:q	1	Delete	
\x80	cf:q	0	Put	zero timestamp
\xFF\xFE	cf:q	9223372036854775806	Put	\xFF\xFF\xFF
\xFF\xFF	cf:q	1	DeleteFamily	
EOF
shuffle <"$T/bin.sorted" >"$T/bin.shuf"
expect_rc "write binary keys" 0 "$KILN" hfile write "$T/bin.hfile" --compression snappy --bloom rowcol <"$T/bin.shuf"
expect_rc "dump binary keys" 0 "$KILN" hfile dump "$T/bin.hfile"
if cmp -s "$T/out" "$T/bin.sorted"; then ok; else bad "binary keys round trip: $(diff "$T/out" "$T/bin.sorted" | head -5)"; fi
expect_rc "check binary keys" 0 "$KILN" hfile check "$T/bin.hfile"
expect_rc "dump --row binary" 0 "$KILN" hfile dump --row 'a\x5Cb' "$T/bin.hfile"
expect_eq "dump --row binary output" "$(cat "$T/out")" "$(printf 'a\\x5Cb\tcf:q\t1\tPut\tbackslash row')"

# ---------------------------------------------------------------- many blocks, multi-level index
# Rows start with two binary bytes (hi, lo of i), so byte order is i order;
# esc() writes each byte in the printable form dump uses.
LC_ALL=C awk 'function esc(b) { return (b >= 32 && b < 127 && b != 92) ? sprintf("%c", b) : sprintf("\\x%02X", b) }
    BEGIN { for (i = 0; i < 30000; i++)
        printf "%s%srow%06d\tf:c%d\t%d\tPut\tvalue-%d-%s\n", esc(int(i / 256) % 256), esc(i % 256), i, i % 3, 1000 + i, i * 7, esc(i % 256) }' \
    >"$T/big.sorted"
shuffle <"$T/big.sorted" >"$T/big.shuf"
expect_rc "write 30000 cells, 64-byte blocks" 0 "$KILN" hfile write "$T/big.hfile" --block-size 64 \
    --compression lz4 --input "$T/big.shuf"
expect_rc "dump 30000 cells" 0 "$KILN" hfile dump "$T/big.hfile"
if cmp -s "$T/out" "$T/big.sorted"; then ok; else bad "30000-cell round trip differs"; fi
expect_rc "check 30000 cells" 0 "$KILN" hfile check "$T/big.hfile"
expect_eq "check 30000 cells output" "$(cat "$T/out")" "$T/big.hfile: OK (30000 cells)"
run "$KILN" hfile meta "$T/big.hfile"
levels=$(grep -oE '^  levels=[0-9]+' "$T/out" | cut -d= -f2)
if [ "${levels:-0}" -ge 2 ]; then ok; else bad "30000 cells in 64-byte blocks: index levels ${levels:-?}, want >= 2"; fi
expect_grep "meta counts leaf index blocks" "$T/out" '^  IDXLEAF2 count=[1-9]'
run "$KILN" hfile dump --row '\x00\x07row000007' "$T/big.hfile"
expect_eq "dump --row in a multi-level file" "$(cat "$T/out")" "$(sed -n 8p "$T/big.sorted")"
run "$KILN" hfile dump --limit 5 "$T/big.hfile"
expect_eq "dump --limit 5" "$(cat "$T/out")" "$(head -5 "$T/big.sorted")"

# ---------------------------------------------------------------- dump options, meta decoding
run "$KILN" hfile dump --mvcc "$TD/rsflush_none_rowbloom_3cells.hfile"
expect_eq "dump --mvcc sequence ids" "$(grep -oE 'mvcc=[0-9]+$' "$T/out" | tr '\n' ' ')" "mvcc=4 mvcc=6 mvcc=7 "
expect_rc "dump --row absent" 0 "$KILN" hfile dump --row row-0505 "$TD/hbase264_none_rowbloom_15blocks.hfile"
expect_eq "dump --row absent prints nothing" "$(wc -c <"$T/out" | tr -d ' ')" 0
run "$KILN" hfile dump --limit 0 "$TD/hbase264_none_rowbloom_15blocks.hfile"
expect_eq "dump --limit 0" "$(wc -c <"$T/out" | tr -d ' ')" 0
run "$KILN" hfile meta "$TD/rsflush_none_rowbloom_3cells.hfile"
expect_grep "meta MAX_SEQ_ID_KEY long" "$T/out" '^  MAX_SEQ_ID_KEY = 8$'
expect_grep "meta TIMERANGE decoded" "$T/out" '^  TIMERANGE = min=17713882[0-9]{5} max=17713882[0-9]{5}$'
expect_grep "meta AVG_KEY_LEN int" "$T/out" '^  hfile.AVG_KEY_LEN = [0-9]+$'
expect_grep "meta bloom details" "$T/out" '^  version=3 hash=murmur hash_count=[0-9]+ chunks=1 keys=3 '
expect_grep "meta comparator" "$T/out" 'comparator_class_name=org.apache.hadoop.hbase.KeyValue\$KVComparator'
run "$KILN" hfile meta "$TD/rsflush_none_deletefamily_dfbloom.hfile"
expect_grep "meta DELETE_FAMILY_COUNT" "$T/out" '^  DELETE_FAMILY_COUNT = 1$'
expect_grep "meta delete-family bloom" "$T/out" '^Delete family bloom filter: present$'
run "$KILN" hfile meta "$TD/hbase264_gz_fastdiff_tags_rowbloom.hfile"
expect_grep "meta encoding" "$T/out" '^  codec=GZ encoding=FAST_DIFF entries=528$'
expect_grep "meta MAX_TAGS_LEN" "$T/out" '^  hfile.MAX_TAGS_LEN = [0-9]+$'

# ---------------------------------------------------------------- corruption
cp "$TD/hbase264_none_rowbloom_10cells.hfile" "$T/c1.hfile"
printf '\xAA' | dd of="$T/c1.hfile" bs=1 seek=100 conv=notrunc status=none
expect_rc "check flipped byte in block 0" 65 "$KILN" hfile check "$T/c1.hfile"
expect_grep "check names file and offset 0" "$T/out" "^$T/c1.hfile: FAILED: .*offset 0([^0-9]|\$)"
expect_rc "dump flipped byte" 65 "$KILN" hfile dump "$T/c1.hfile"
expect_grep "dump error names offset" "$T/err" "c1.hfile.*offset 0([^0-9]|\$)"

cp "$TD/hbase264_none_rowbloom_15blocks.hfile" "$T/c2.hfile"
run "$KILN" hfile meta --blocks "$T/c2.hfile"
off=$(grep -E '^  offset=[0-9]+ type=DATABLK\*' "$T/out" | sed -n 6p | sed -E 's/^  offset=([0-9]+) .*/\1/')
expect_eq "meta --blocks lists 15 data blocks" "$(grep -cE '^  offset=[0-9]+ type=DATABLK\*' "$T/out")" 15
if [ -n "$off" ]; then
    printf '\x00\xFF' | dd of="$T/c2.hfile" bs=1 seek=$((off + 50)) conv=notrunc status=none
    expect_rc "check flipped byte in block 6" 65 "$KILN" hfile check "$TD/hbase264_none_rowbloom_10cells.hfile" "$T/c2.hfile"
    expect_grep "check still reports the good file" "$T/out" "hbase264_none_rowbloom_10cells.hfile: OK \(10 cells\)$"
    expect_grep "check names block 6's offset" "$T/out" "^$T/c2.hfile: FAILED: .*offset $off([^0-9]|\$)"
else
    bad "no offset for block 6 in meta --blocks"
fi

head -c 3000 "$TD/hbase264_none_rowbloom_10cells.hfile" >"$T/short.hfile"
expect_rc "check truncated file" 65 "$KILN" hfile check "$T/short.hfile"

# ---------------------------------------------------------------- write input errors
printf 'r1\tcf:q\t1\tPut\tv\nr2\tcf:q\t2\tPut\tv\nr3\tcf:q\t3\tPut\n' >"$T/e.txt"
expect_rc "write short line" 65 "$KILN" hfile write "$T/e.hfile" --input "$T/e.txt"
expect_grep "short line names line 3" "$T/err" "$T/e.txt:3: expected 5 tab-separated fields"
printf 'r1\tcf:q\t1\tPut\tv\nr2\tcf:q\t1\tPut\tbad\\xZZ\n' | { run "$KILN" hfile write "$T/e.hfile"; }
expect_eq "write bad escape exit" "$rc" 65
expect_grep "bad escape names line 2" "$T/err" '^kiln: stdin:2: value: bad \\xNN escape'
printf 'r1\tcf:q\tsoon\tPut\tv\n' | { run "$KILN" hfile write "$T/e.hfile"; }
expect_grep "bad timestamp" "$T/err" 'stdin:1: timestamp .soon. is not an integer'
printf 'r1\tcf:q\t1\tUpsert\tv\n' | { run "$KILN" hfile write "$T/e.hfile"; }
expect_grep "bad type" "$T/err" "stdin:1: unknown type 'Upsert'"
printf 'r1\tcf:q\t1\tPut\tv\nr2\tother:q\t1\tPut\tv\n' | { run "$KILN" hfile write "$T/e.hfile"; }
expect_grep "mixed families" "$T/err" "stdin:2: family differs from line 1's"
printf 'r1\tq\t1\tPut\tv\n' | { run "$KILN" hfile write "$T/e.hfile"; }
expect_grep "bare qualifier needs --family" "$T/err" "stdin:1: column 'q' has no ':'"
printf 'r1\t:q\t1\tPut\tv\n' | { run "$KILN" hfile write "$T/e.hfile"; }
expect_grep "empty family" "$T/err" "stdin:1: empty family"
printf 'r1\tcf:q\t1\tPut\tv\tcolor=red\n' | { run "$KILN" hfile write "$T/e.hfile"; }
expect_grep "unknown trailing field" "$T/err" "stdin:1: unexpected field 6"
if [ -e "$T/e.hfile" ]; then bad "a failed write left $T/e.hfile behind"; else ok; fi

printf 'r2\tq2\t1\tPut\tv2\nr1\tcf:q1\t1\tPut\tv1\n' | { run "$KILN" hfile write "$T/fam.hfile" --family 'new\x2Dfam'; }
expect_eq "write --family exit" "$rc" 0
run "$KILN" hfile dump "$T/fam.hfile"
expect_eq "write --family sets every family" "$(cat "$T/out")" \
    "$(printf 'r1\tnew-fam:q1\t1\tPut\tv1\nr2\tnew-fam:q2\t1\tPut\tv2')"

: | { run "$KILN" hfile write "$T/empty.hfile"; }
expect_eq "write empty input" "$rc" 0
expect_rc "dump empty file" 0 "$KILN" hfile dump "$T/empty.hfile"
expect_eq "dump empty file prints nothing" "$(wc -c <"$T/out" | tr -d ' ')" 0
expect_rc "check empty file" 0 "$KILN" hfile check "$T/empty.hfile"
expect_eq "check empty file output" "$(cat "$T/out")" "$T/empty.hfile: OK (0 cells)"

# Duplicate keys keep input order (newest sequence id first, then line order).
printf 'r\tcf:q\t1\tPut\tsecond\tmvcc=1\nr\tcf:q\t1\tPut\tfirst\tmvcc=2\nr\tcf:q\t1\tPut\tthird\tmvcc=1\n' |
    { run "$KILN" hfile write "$T/dup.hfile"; }
run "$KILN" hfile dump "$T/dup.hfile"
expect_eq "duplicate keys ordered" "$(cut -f5 "$T/out" | tr '\n' ' ')" "first second third "

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
