/* fuzz_wal.c -- libFuzzer target for the write-ahead log's reader: the input
 * becomes one to four log files in a scratch directory, replayed strictly
 * and with WAL_REPLAY_SKIP_CORRUPT, and (on request) opened for writing,
 * which scans every file to learn its tables.
 *
 * Input: byte 0 holds flags -- bits 0-1: file count - 1; bit 2: give each
 * file a valid header; bit 3: rewrite the checksum of every record whose
 * length fits, so mutations reach past the CRC into the resync scan and
 * the body; bit 4: wal_open and wal_close the directory. Then, for each file
 * but the last, a big-endian u16 length; then the files' bytes in order
 * (the last takes the rest).
 *
 * A refusal must be KILN_CORRUPTION or KILN_UNSUPPORTED naming a file; each
 * record handed to the callback must have a name of 1..255 bytes; a strict
 * replay that succeeds must agree with the skipping one; the skipping one
 * never fails on damage. Otherwise the target traps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/base/coding.h"
#include "storage/base/crc32c.h"
#include "storage/store/wal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256];

static void
trap(const char *why, const kiln_err *err)
{
    fprintf(stderr, "%s%s%s\n", why, err ? ": " : "", err ? err->msg : "");
    __builtin_trap();
}

static void clear_dir(void);

static void
cleanup(void)
{
    clear_dir();
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, WAL_LOCK_FILE);
    unlink(p);
    rmdir(dir);
}

static void
setup(void)
{
    if (dir[0])
        return;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/kiln-fuzz-wal-XXXXXX", base ? base : "/tmp");
    if (mkdtemp(dir) == NULL)
        trap("mkdtemp", NULL);
    atexit(cleanup);
}

static void
clear_dir(void)
{
    char p[512];
    for (uint64_t i = 0; i <= 6; i++) {
        char name[32];
        wal_file_name(i, name);
        snprintf(p, sizeof p, "%s/%s", dir, name);
        unlink(p);
    }
}

static void
write_file(uint64_t num, const uint8_t *p, size_t n, int header, int fix_crc)
{
    uint8_t *b = malloc(n + WAL_FILE_HEADER + 1);
    size_t len = 0;
    if (header) {
        memcpy(b, WAL_MAGIC, 8);
        coding_put_be32(b + 8, WAL_VERSION);
        coding_put_be64(b + 12, num);
        len = WAL_FILE_HEADER;
    }
    if (n > 0)
        memcpy(b + len, p, n);
    len += n;
    if (fix_crc) {
        size_t off = WAL_FILE_HEADER;
        while (off + 8 <= len) {
            uint32_t l = coding_get_be32(b + off);
            if (l > len - off - 8)
                break;
            uint32_t c = crc32c_value(b + off + 8, l);
            c = ((c >> 15) | (c << 17)) + WAL_CRC_MASK;
            coding_put_be32(b + off + 4, c);
            off += 8 + l;
        }
    }
    char name[32], path[512];
    wal_file_name(num, name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        trap("fopen", NULL);
    if (len > 0 && fwrite(b, 1, len, f) != len)
        trap("fwrite", NULL);
    fclose(f);
    free(b);
}

typedef struct tally {
    uint64_t records;
    uint64_t bytes;
    uint64_t sum;   /* of seqs and payload bytes, to compare two replays */
} tally;

static kiln_status
count(void *arg, const char *table, uint64_t seq, const void *payload, size_t n)
{
    tally *t = arg;
    size_t len = strlen(table);
    if (len == 0 || len > WAL_TABLE_MAX)
        trap("a record with a bad table name", NULL);
    t->records++;
    t->bytes += n;
    t->sum += seq + len;
    const uint8_t *p = payload;
    for (size_t i = 0; i < n; i++)
        t->sum += p[i];
    return KILN_OK;
}

static void
expect_clean(kiln_status st, const kiln_err *err)
{
    if (st != KILN_CORRUPTION && st != KILN_UNSUPPORTED)
        trap("unexpected status", err);
    if (strstr(err->msg, dir) == NULL)
        trap("error does not name the file", err);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    setup();
    clear_dir();
    unsigned flags = data[0];
    size_t files = (flags & 3) + 1;
    size_t off = 1;
    size_t lens[4];
    for (size_t i = 0; i + 1 < files; i++) {
        size_t l = 0;
        if (off + 2 <= size) {
            l = coding_get_be16(data + off);
            off += 2;
        }
        lens[i] = l;
    }
    for (size_t i = 0; i < files; i++) {
        size_t left = size - off;
        size_t l = i + 1 < files && lens[i] < left ? lens[i] : left;
        write_file(i + 1, data + off, l, (flags >> 2) & 1, (flags >> 3) & 1);
        off += l;
    }

    tally strict, skip;
    memset(&strict, 0, sizeof strict);
    memset(&skip, 0, sizeof skip);
    wal_replay_stats st1, st2;
    kiln_err err;
    status_clear(&err);
    kiln_status s1 = wal_replay(dir, 0, count, &strict, &st1, &err);
    if (s1 != KILN_OK)
        expect_clean(s1, &err);
    status_clear(&err);
    kiln_status s2 = wal_replay(dir, WAL_REPLAY_SKIP_CORRUPT, count, &skip, &st2, &err);
    if (s2 != KILN_OK) {
        if (s2 != KILN_UNSUPPORTED)
            trap("a skipping replay failed", &err);
        expect_clean(s2, &err);
    }
    if (s1 == KILN_OK &&
        (s2 != KILN_OK || strict.records != skip.records || strict.sum != skip.sum ||
         st2.corrupt_files != 0 || st1.torn_tails != st2.torn_tails))
        trap("strict and skipping replays disagree", NULL);
    if (skip.records != st2.records)
        trap("records counted twice or not at all", NULL);

    if (flags & 0x10) {
        wal_options o;
        wal_options_init(&o);
        wal *w;
        status_clear(&err);
        if (wal_open(dir, &o, &w, &err) != KILN_OK)
            trap("wal_open of a damaged log failed", &err);
        wal_counters c;
        wal_stats(w, &c);
        if (c.files != files + 1)
            trap("wal_open lost track of a file", NULL);
        /* everything flushed: every old file goes */
        status_clear(&err);
        if (wal_mark_flushed(w, "t", UINT64_MAX, &err) != KILN_OK)
            trap("wal_mark_flushed failed", &err);
        status_clear(&err);
        if (wal_close(w, &err) != KILN_OK)
            trap("wal_close failed", &err);
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, WAL_LOCK_FILE);
        unlink(p);
    }
    return 0;
}
