/* test_wal.c -- the write-ahead log: round trips across tables and rolls,
 * removal of flushed files (also after a restart), torn tails and damage,
 * group commit from many threads, the background sync, the lock, sticky
 * failures, and power cuts at every changing call of a workload under the
 * strict and the loose model. Payloads are a function of (table, seq), so
 * every replayed record is checked byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "storage/base/coding.h"
#include "storage/base/env.h"
#include "storage/base/env_power.h"
#include "storage/store/wal.h"
#include "tests/support/test_util.h"

static uint64_t seed;

#define MAX_TABLES 8
#define BIG_PAYLOAD 200000

static void
table_name(int t, char *out)
{
    snprintf(out, 32, "ns:table%d", t);
}

static int
table_index(const char *name)
{
    int t;
    if (sscanf(name, "ns:table%d", &t) != 1 || t < 0 || t >= MAX_TABLES)
        return -1;
    return t;
}

/* The payload of table t's record seq: its length (at most maxlen) and bytes. */
static size_t
gen_payload(int t, uint64_t s, size_t maxlen, uint8_t *out)
{
    uint64_t st = seed ^ ((uint64_t)t << 56) ^ s * 0x9E3779B97F4A7C15ULL;
    uint64_t h = tu_splitmix64(&st);
    size_t len = (size_t)(h % (maxlen + 1));
    if (maxlen > 1000 && h % 16 != 0)
        len %= 400;   /* mostly small records, now and then a big one */
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = tu_splitmix64(&st);
        size_t k = len - i < 8 ? len - i : 8;
        memcpy(out + i, &v, k);
    }
    return len;
}

/* What a replay returned, in order. */
typedef struct seen {
    int t[20000];
    uint64_t seq[20000];
    size_t n;
    size_t maxlen;
    uint8_t *want;
} seen;

static kiln_status
collect(void *arg, const char *table, uint64_t s, const void *payload, size_t n)
{
    seen *sn = arg;
    int t = table_index(table);
    if (t < 0 && strlen(table) == 255 && strspn(table, "x") == 255 && n == 0) {
        t = MAX_TABLES;   /* the long name of the round trip, with no payload */
        goto keep;
    }
    if (t < 0)
        fail_msg("replay returned table '%s'", table);
    size_t len = gen_payload(t, s, sn->maxlen, sn->want);
    if (len != n || memcmp(sn->want, payload, n) != 0)
        fail_msg("%s seq %llu: payload of %zu bytes differs (want %zu)", table,
                 (unsigned long long)s, n, len);
keep:
    assert_true(sn->n < 20000);
    sn->t[sn->n] = t;
    sn->seq[sn->n] = s;
    sn->n++;
    return KILN_OK;
}

static seen *
seen_new(size_t maxlen)
{
    seen *sn = calloc(1, sizeof *sn);
    sn->maxlen = maxlen;
    sn->want = malloc(maxlen + 8);
    return sn;
}

static void
seen_free(seen *sn)
{
    free(sn->want);
    free(sn);
}

static kiln_status
replay(const char *dir, unsigned flags, seen *sn, wal_replay_stats *st, kiln_err *err)
{
    sn->n = 0;
    return wal_replay(dir, flags, collect, sn, st, err);
}

static void
append_one(wal *w, int t, uint64_t s, size_t maxlen, uint8_t *buf, uint64_t *lsn)
{
    char name[32];
    table_name(t, name);
    size_t n = gen_payload(t, s, maxlen, buf);
    kiln_err err;
    status_clear(&err);
    tu_must(wal_append(w, name, s, buf, n, lsn, &err), &err);
}

static size_t
count_logs(const char *dir)
{
    char **names;
    size_t count, logs = 0;
    kiln_err err;
    status_clear(&err);
    tu_must(env_list_dir(dir, &names, &count, &err), &err);
    for (size_t i = 0; i < count; i++) {
        uint64_t num;
        logs += wal_parse_file_name(names[i], &num);
    }
    env_list_free(names, count);
    return logs;
}

/* ------------------------------------------------------------------ round trip */

static void
roundtrip(void **state)
{
    (void)state;
    char base[512], dir[600];
    tu_mkdtemp(base, sizeof base, "wal");
    snprintf(dir, sizeof dir, "%s/data/wal", base);
    wal_options o;
    wal_options_init(&o);
    o.roll_bytes = 256 << 10;
    wal *w;
    kiln_err err;
    status_clear(&err);
    tu_must(wal_open(dir, &o, &w, &err), &err);
    uint8_t *buf = malloc(BIG_PAYLOAD + 8);
    uint64_t next[MAX_TABLES] = {0};
    int order_t[3000];
    uint64_t order_s[3000];
    uint64_t rs = seed, lsn = 0, prev = 0;
    for (int i = 0; i < 3000; i++) {
        int t = (int)(tu_splitmix64(&rs) % 5);
        order_t[i] = t;
        order_s[i] = ++next[t];
        append_one(w, t, order_s[i], BIG_PAYLOAD, buf, &lsn);
        assert_true(lsn > prev);
        prev = lsn;
        if (i % 97 == 0)
            tu_must(wal_sync(w, lsn, &err), &err);
    }
    /* an empty payload, and a name of 255 bytes */
    char longname[256];
    memset(longname, 'x', 255);
    longname[255] = '\0';
    tu_must(wal_append(w, longname, 7, NULL, 0, &lsn, &err), &err);
    assert_int_equal(wal_append(w, "", 1, "x", 1, &lsn, &err), KILN_INVALID);
    char toolong[257];
    memset(toolong, 'y', 256);
    toolong[256] = '\0';
    status_clear(&err);
    assert_int_equal(wal_append(w, toolong, 1, "x", 1, &lsn, &err), KILN_INVALID);
    status_clear(&err);
    assert_int_equal(wal_sync(w, lsn + 1000, &err), KILN_INVALID);
    status_clear(&err);
    wal_counters c;
    wal_stats(w, &c);
    assert_int_equal(c.appends, 3001);
    assert_true(c.rolls >= 2);
    tu_must(wal_close(w, &err), &err);
    assert_true(count_logs(dir) >= 3);

    seen *sn = seen_new(BIG_PAYLOAD);
    wal_replay_stats st;
    tu_must(replay(dir, 0, sn, &st, &err), &err);
    assert_int_equal(sn->n, 3001);
    for (int i = 0; i < 3000; i++) {
        assert_int_equal(sn->t[i], order_t[i]);
        assert_int_equal(sn->seq[i], order_s[i]);
    }
    assert_int_equal(sn->t[3000], MAX_TABLES);
    assert_int_equal(sn->seq[3000], 7);
    assert_int_equal(st.torn_tails, 0);
    assert_int_equal(st.records, 3001);
    assert_int_equal(st.bytes, c.append_bytes);
    printf("  round trip: 3001 records, %llu bytes, %llu files\n", (unsigned long long)st.bytes,
           (unsigned long long)st.files);
    seen_free(sn);
    free(buf);
    tu_rmrf(base);
}

/* ------------------------------------------------------------------ roll and removal */

/* The largest seq of each table in log file path (parsed here, apart from
 * the log's own scanner); -1 for a table without records. */
static void
file_max_seqs(const char *path, long long *maxs)
{
    for (int t = 0; t < MAX_TABLES; t++)
        maxs[t] = -1;
    kbuf b = KBUF_INIT;
    kiln_err err;
    status_clear(&err);
    tu_must(env_read_file(path, &b, &err), &err);
    assert_true(b.len >= WAL_FILE_HEADER);
    assert_memory_equal(b.data, WAL_MAGIC, 8);
    size_t off = WAL_FILE_HEADER;
    while (off < b.len) {
        assert_true(off + 8 <= b.len);
        uint32_t len = coding_get_be32(b.data + off);
        assert_true(off + 8 + len <= b.len);
        const uint8_t *body = b.data + off + 8;
        char name[256];
        memcpy(name, body + 1, body[0]);
        name[body[0]] = '\0';
        int t = table_index(name);
        assert_true(t >= 0);
        long long s = (long long)coding_get_be64(body + 1 + body[0]);
        if (s > maxs[t])
            maxs[t] = s;
        off += 8 + len;
    }
    buf_free(&b);
}

/* Check the log files in dir are exactly those that must stay: the current
 * one (the largest number) and every one with a table not flushed past it. */
static void
check_removal(const char *dir, const long long *flushed, int ntables)
{
    char **names;
    size_t count;
    kiln_err err;
    status_clear(&err);
    tu_must(env_list_dir(dir, &names, &count, &err), &err);
    size_t logs = 0;
    for (size_t i = 0; i < count; i++) {
        uint64_t num;
        if (!wal_parse_file_name(names[i], &num))
            continue;
        logs++;
        int last = 1;
        for (size_t j = i + 1; j < count; j++)
            last &= !wal_parse_file_name(names[j], &num);
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        long long maxs[MAX_TABLES];
        file_max_seqs(path, maxs);
        int needed = 0;
        for (int t = 0; t < ntables; t++)
            needed |= maxs[t] > flushed[t];
        if (!needed && !last)
            fail_msg("%s holds only flushed records but was kept", names[i]);
    }
    env_list_free(names, count);
    assert_true(logs >= 1);
}

/* Every record above its table's flushed seq is still in the log. */
static void
check_needed(const char *dir, const long long *flushed, const uint64_t *next, int ntables)
{
    seen *sn = seen_new(300);
    kiln_err err;
    status_clear(&err);
    tu_must(replay(dir, 0, sn, NULL, &err), &err);
    long long expect[MAX_TABLES];
    for (int t = 0; t < ntables; t++)
        expect[t] = flushed[t] + 1;
    for (size_t i = 0; i < sn->n; i++) {
        int t = sn->t[i];
        if ((long long)sn->seq[i] > flushed[t]) {
            assert_int_equal(sn->seq[i], expect[t]);
            expect[t]++;
        }
    }
    for (int t = 0; t < ntables; t++)
        assert_int_equal(expect[t] - 1, next[t]);
    seen_free(sn);
}

static void
roll_removal(void **state)
{
    (void)state;
    char base[512], dir[600];
    tu_mkdtemp(base, sizeof base, "walroll");
    snprintf(dir, sizeof dir, "%s/wal", base);
    wal_options o;
    wal_options_init(&o);
    o.roll_bytes = 4096;
    wal *w;
    kiln_err err;
    status_clear(&err);
    tu_must(wal_open(dir, &o, &w, &err), &err);
    uint8_t buf[512];
    uint64_t lsn, next[3] = {0};
    /* tables 0, 1, 2 interleaved, then 0 and 1 only */
    for (int i = 0; i < 600; i++) {
        int t = i < 300 ? i % 3 : i % 2;
        append_one(w, t, ++next[t], 300, buf, &lsn);
        if (i % 10 == 9)
            tu_must(wal_sync(w, lsn, &err), &err);
    }
    tu_must(wal_sync(w, lsn, &err), &err);
    size_t before = count_logs(dir);
    assert_true(before >= 10);
    long long flushed[3] = {0, 0, 0};
    /* table 0 alone flushed: every file holds table 1 too, nothing goes */
    flushed[0] = 150;
    tu_must(wal_mark_flushed(w, "ns:table0", 150, &err), &err);
    assert_int_equal(count_logs(dir), before);
    flushed[1] = 120;
    tu_must(wal_mark_flushed(w, "ns:table1", 120, &err), &err);
    check_removal(dir, flushed, 3);   /* only files of tables 0 and 1 from seq 101 */
    check_needed(dir, flushed, next, 3);
    flushed[2] = 100;
    tu_must(wal_mark_flushed(w, "ns:table2", 100, &err), &err);
    size_t after = count_logs(dir);
    assert_true(after < before);
    check_removal(dir, flushed, 3);
    check_needed(dir, flushed, next, 3);
    /* a smaller flushed seq is ignored */
    tu_must(wal_mark_flushed(w, "ns:table0", 3, &err), &err);
    assert_int_equal(count_logs(dir), after);
    wal_counters c;
    wal_stats(w, &c);
    assert_int_equal(c.files_removed, before - after);
    assert_int_equal(c.files, after);
    tu_must(wal_close(w, &err), &err);

    /* after a restart, the caller marks every table again */
    tu_must(wal_open(dir, &o, &w, &err), &err);
    size_t reopened = count_logs(dir);
    assert_int_equal(reopened, after + 1);
    flushed[0] = 250;
    flushed[1] = 200;
    tu_must(wal_mark_flushed(w, "ns:table0", 250, &err), &err);
    tu_must(wal_mark_flushed(w, "ns:table1", 200, &err), &err);
    /* table 2 not marked yet since the restart: its files stay */
    check_needed(dir, flushed, next, 3);
    tu_must(wal_mark_flushed(w, "ns:table2", 100, &err), &err);
    size_t after2 = count_logs(dir);
    assert_true(after2 < reopened);
    check_removal(dir, flushed, 3);
    check_needed(dir, flushed, next, 3);
    /* everything flushed: all but the current file go */
    tu_must(wal_mark_flushed(w, "ns:table0", next[0], &err), &err);
    tu_must(wal_mark_flushed(w, "ns:table1", next[1], &err), &err);
    assert_int_equal(count_logs(dir), 1);
    /* a current file of flushed records past half of roll_bytes is rolled
     * and removed */
    uint64_t first = 0;
    for (int i = 0; i < 12; i++)
        append_one(w, 0, ++next[0], 300, buf, &lsn);
    tu_must(wal_sync(w, lsn, &err), &err);
    wal_stats(w, &c);
    first = c.current_file;
    assert_true(c.files == 1 || c.files == 2);
    tu_must(wal_mark_flushed(w, "ns:table0", next[0], &err), &err);
    wal_stats(w, &c);
    assert_int_equal(c.files, 1);
    assert_true(c.current_file > first || c.files_created > 1);
    assert_int_equal(count_logs(dir), 1);
    tu_must(wal_close(w, &err), &err);
    /* the replay of what is left: only table 0's tail, none of it needed */
    seen *sn = seen_new(300);
    tu_must(replay(dir, 0, sn, NULL, &err), &err);
    seen_free(sn);
    tu_rmrf(base);
}

/* ------------------------------------------------------------------ torn tails and damage */

static void
write_bytes(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* One log file of 20 records of table 0 (a second file of 5 follows if two):
 * returns the path of the first and the offsets of its records. */
static void
make_log(const char *dir, int two, char *path, size_t cap, uint64_t *offs)
{
    wal *w;
    kiln_err err;
    status_clear(&err);
    tu_must(wal_open(dir, NULL, &w, &err), &err);
    uint8_t buf[512];
    uint64_t lsn;
    offs[0] = WAL_FILE_HEADER;
    for (int i = 1; i <= 20; i++) {
        append_one(w, 0, (uint64_t)i, 300, buf, &lsn);
        offs[i] = WAL_FILE_HEADER + lsn;
    }
    wal_counters c;
    tu_must(wal_sync(w, lsn, &err), &err);
    wal_stats(w, &c);
    char name[32];
    wal_file_name(c.current_file, name);
    snprintf(path, cap, "%s/%s", dir, name);
    if (two) {
        tu_must(wal_roll(w, &err), &err);
        for (int i = 21; i <= 25; i++)
            append_one(w, 0, (uint64_t)i, 300, buf, &lsn);
    }
    tu_must(wal_close(w, &err), &err);
}

static void
torn_tail(void **state)
{
    (void)state;
    char base[512], dir[600], path[700];
    tu_mkdtemp(base, sizeof base, "waltorn");
    snprintf(dir, sizeof dir, "%s/wal", base);
    uint64_t offs[21];
    make_log(dir, 0, path, sizeof path, offs);
    kbuf orig = KBUF_INIT;
    kiln_err err;
    status_clear(&err);
    tu_must(env_read_file(path, &orig, &err), &err);
    assert_int_equal(orig.len, offs[20]);
    seen *sn = seen_new(300);
    wal_replay_stats st;
    long cases = 0;
    /* cut at every offset inside the last record */
    for (uint64_t cut = offs[19]; cut < offs[20]; cut++) {
        write_bytes(path, orig.data, cut);
        status_clear(&err);
        tu_must(replay(dir, 0, sn, &st, &err), &err);
        assert_int_equal(sn->n, 19);
        assert_int_equal(st.torn_tails, cut > offs[19]);
        if (cut > offs[19]) {
            assert_int_equal(st.torn_bytes, cut - offs[19]);
            char want[64];
            snprintf(want, sizeof want, "at offset %llu", (unsigned long long)offs[19]);
            assert_non_null(strstr(st.last_torn, want));
            assert_non_null(strstr(st.last_torn, path));
        }
        cases++;
    }
    /* flip each byte of the last record */
    kbuf b = KBUF_INIT;
    for (uint64_t at = offs[19]; at < offs[20]; at++) {
        buf_reset(&b);
        buf_append(&b, orig.data, orig.len);
        b.data[at] ^= 0x5a;
        write_bytes(path, b.data, b.len);
        status_clear(&err);
        tu_must(replay(dir, 0, sn, &st, &err), &err);
        assert_int_equal(sn->n, 19);
        assert_int_equal(st.torn_tails, 1);
        cases++;
    }
    /* a file cut inside its header, and one whose header is zeros */
    write_bytes(path, orig.data, 11);
    tu_must(replay(dir, 0, sn, &st, &err), &err);
    assert_int_equal(sn->n, 0);
    assert_int_equal(st.torn_tails, 1);
    buf_reset(&b);
    buf_resize(&b, 300);
    write_bytes(path, b.data, b.len);
    tu_must(replay(dir, 0, sn, &st, &err), &err);
    assert_int_equal(sn->n, 0);
    assert_int_equal(st.torn_tails, 1);
    /* the whole file back */
    write_bytes(path, orig.data, orig.len);
    tu_must(replay(dir, 0, sn, &st, &err), &err);
    assert_int_equal(sn->n, 20);
    assert_int_equal(st.torn_tails, 0);
    printf("  torn tail: %ld cuts and flips of the last record\n", cases);
    buf_free(&b);
    buf_free(&orig);
    seen_free(sn);
    tu_rmrf(base);
}

static void
mid_corruption(void **state)
{
    (void)state;
    char base[512], dir[600], path[700];
    tu_mkdtemp(base, sizeof base, "walbad");
    snprintf(dir, sizeof dir, "%s/wal", base);
    uint64_t offs[21];
    make_log(dir, 1, path, sizeof path, offs);
    kbuf orig = KBUF_INIT, b = KBUF_INIT;
    kiln_err err;
    status_clear(&err);
    tu_must(env_read_file(path, &orig, &err), &err);
    seen *sn = seen_new(300);
    wal_replay_stats st;
    long cases = 0;
    /* any byte of records 5..19 (not the last) flipped: corruption naming
     * the file and the record's offset; skipped under the flag, and the
     * next file still replays */
    for (int r = 4; r < 19; r++) {
        for (uint64_t at = offs[r]; at < offs[r + 1]; at += 7) {
            buf_reset(&b);
            buf_append(&b, orig.data, orig.len);
            b.data[at] ^= 0x01;
            write_bytes(path, b.data, b.len);
            status_clear(&err);
            assert_int_equal(replay(dir, 0, sn, &st, &err), KILN_CORRUPTION);
            char want[64];
            snprintf(want, sizeof want, "bad record at offset %llu", (unsigned long long)offs[r]);
            if (strstr(err.msg, want) == NULL || strstr(err.msg, path) == NULL)
                fail_msg("flip at %llu: %s", (unsigned long long)at, err.msg);
            assert_int_equal(sn->n, (size_t)r);
            status_clear(&err);
            tu_must(replay(dir, WAL_REPLAY_SKIP_CORRUPT, sn, &st, &err), &err);
            assert_int_equal(sn->n, (size_t)r + 5);
            assert_int_equal(sn->seq[r], 21);
            assert_int_equal(st.corrupt_files, 1);
            assert_int_equal(st.corrupt_bytes, orig.len - offs[r]);
            assert_non_null(strstr(st.last_corrupt, want));
            cases++;
        }
    }
    /* a header that is not a log's; a number that differs from the name */
    buf_reset(&b);
    buf_append(&b, orig.data, orig.len);
    b.data[0] = 'X';
    write_bytes(path, b.data, b.len);
    status_clear(&err);
    assert_int_equal(replay(dir, 0, sn, &st, &err), KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, "not a write-ahead log"));
    status_clear(&err);
    tu_must(replay(dir, WAL_REPLAY_SKIP_CORRUPT, sn, &st, &err), &err);
    assert_int_equal(sn->n, 5);
    b.data[0] = 'K';
    b.data[19] ^= 1;
    write_bytes(path, b.data, b.len);
    status_clear(&err);
    assert_int_equal(replay(dir, 0, sn, &st, &err), KILN_CORRUPTION);
    b.data[19] ^= 1;
    b.data[11] = 9;   /* format version 9 */
    write_bytes(path, b.data, b.len);
    status_clear(&err);
    assert_int_equal(replay(dir, 0, sn, &st, &err), KILN_UNSUPPORTED);
    /* open tolerates damage (replay reports it) */
    b.data[11] = 1;
    b.data[offs[6] + 10] ^= 1;
    write_bytes(path, b.data, b.len);
    wal *w;
    status_clear(&err);
    tu_must(wal_open(dir, NULL, &w, &err), &err);
    tu_must(wal_close(w, &err), &err);
    printf("  corruption: %ld flips before valid records\n", cases);
    buf_free(&b);
    buf_free(&orig);
    seen_free(sn);
    tu_rmrf(base);
}

/* ------------------------------------------------------------------ group commit */

#define GC_THREADS 8
#define GC_RECORDS 500

typedef struct gc_arg {
    wal *w;
    int t;
    kiln_status st;
    char msg[STATUS_MSG_MAX];
} gc_arg;

static void *
gc_writer(void *p)
{
    gc_arg *a = p;
    uint8_t buf[512];
    char name[32];
    table_name(a->t, name);
    a->st = KILN_OK;
    for (uint64_t s = 1; s <= GC_RECORDS && a->st == KILN_OK; s++) {
        size_t n = gen_payload(a->t, s, 300, buf);
        uint64_t lsn;
        kiln_err err;
        status_clear(&err);
        a->st = wal_append(a->w, name, s, buf, n, &lsn, &err);
        if (a->st == KILN_OK)
            a->st = wal_sync(a->w, lsn, &err);
        if (a->st != KILN_OK)
            snprintf(a->msg, sizeof a->msg, "%s", err.msg);
    }
    return NULL;
}

static void
group_commit(void **state)
{
    (void)state;
    char base[512], dir[600];
    tu_mkdtemp(base, sizeof base, "walgc");
    snprintf(dir, sizeof dir, "%s/wal", base);
    wal_options o;
    wal_options_init(&o);
    o.roll_bytes = 200 << 10;   /* some rolls while the writers run */
    wal *w;
    kiln_err err;
    status_clear(&err);
    tu_must(wal_open(dir, &o, &w, &err), &err);
    pthread_t th[GC_THREADS];
    gc_arg args[GC_THREADS];
    for (int i = 0; i < GC_THREADS; i++) {
        args[i].w = w;
        args[i].t = i;
        assert_int_equal(pthread_create(&th[i], NULL, gc_writer, &args[i]), 0);
    }
    for (int i = 0; i < GC_THREADS; i++) {
        pthread_join(th[i], NULL);
        if (args[i].st != KILN_OK)
            fail_msg("writer %d: %s", i, args[i].msg);
    }
    wal_counters c;
    wal_stats(w, &c);
    assert_int_equal(c.appends, GC_THREADS * GC_RECORDS);
    assert_int_equal(c.synced_records, GC_THREADS * GC_RECORDS);
    assert_int_equal(c.durable_lsn, c.appended_lsn);
    uint64_t hist = 0, groups = 0;
    for (int b = 0; b < WAL_GROUP_BUCKETS; b++)
        groups += c.group_hist[b];
    hist = groups;
    assert_int_equal(hist, c.syncs);
    printf("  group commit: %d records in %llu fsyncs (largest group %llu), %llu rolls\n",
           GC_THREADS * GC_RECORDS, (unsigned long long)c.syncs,
           (unsigned long long)c.max_group, (unsigned long long)c.rolls);
    assert_true(c.syncs < (uint64_t)GC_THREADS * GC_RECORDS);
    tu_must(wal_close(w, &err), &err);
    seen *sn = seen_new(300);
    tu_must(replay(dir, 0, sn, NULL, &err), &err);
    assert_int_equal(sn->n, GC_THREADS * GC_RECORDS);
    uint64_t last[GC_THREADS] = {0};
    for (size_t i = 0; i < sn->n; i++) {
        int t = sn->t[i];
        assert_true(t >= 0 && t < GC_THREADS);
        assert_int_equal(sn->seq[i], last[t] + 1);
        last[t] = sn->seq[i];
    }
    seen_free(sn);
    tu_rmrf(base);
}

/* ASYNC_WAL: records nobody syncs are written and fsynced by the thread. */
static void
background_sync(void **state)
{
    (void)state;
    char base[512], dir[600];
    tu_mkdtemp(base, sizeof base, "walbg");
    snprintf(dir, sizeof dir, "%s/wal", base);
    wal_options o;
    wal_options_init(&o);
    o.async_sync_ms = 20;
    wal *w;
    kiln_err err;
    status_clear(&err);
    tu_must(wal_open(dir, &o, &w, &err), &err);
    uint8_t buf[512];
    uint64_t lsn;
    for (int i = 1; i <= 100; i++)
        append_one(w, 1, (uint64_t)i, 300, buf, &lsn);
    wal_counters c;
    for (int tries = 0; tries < 1000; tries++) {
        wal_stats(w, &c);
        if (c.durable_lsn == lsn)
            break;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(c.durable_lsn, lsn);
    assert_true(c.syncs >= 1);
    /* readable by a replay while the log is open */
    seen *sn = seen_new(300);
    tu_must(replay(dir, 0, sn, NULL, &err), &err);
    assert_int_equal(sn->n, 100);
    tu_must(wal_close(w, &err), &err);
    seen_free(sn);
    tu_rmrf(base);
}

/* ------------------------------------------------------------------ lock and errors */

static void
lock_busy(void **state)
{
    (void)state;
    char base[512], dir[600];
    tu_mkdtemp(base, sizeof base, "wallock");
    snprintf(dir, sizeof dir, "%s/wal", base);
    wal *w, *w2 = NULL;
    kiln_err err;
    status_clear(&err);
    tu_must(wal_open(dir, NULL, &w, &err), &err);
    assert_int_equal(wal_open(dir, NULL, &w2, &err), KILN_BUSY);
    assert_null(w2);
    char pid[32];
    snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
    if (strstr(err.msg, pid) == NULL || strstr(err.msg, dir) == NULL)
        fail_msg("lock message: %s", err.msg);
    size_t logs = count_logs(dir);
    status_clear(&err);
    tu_must(wal_close(w, &err), &err);
    tu_must(wal_open(dir, NULL, &w, &err), &err);
    assert_int_equal(count_logs(dir), logs + 1);   /* a new file, never an old one reopened */
    tu_must(wal_close(w, &err), &err);
    assert_int_equal(wal_close(NULL, NULL), KILN_OK);
    tu_rmrf(base);
}

static void
sticky_errors(void **state)
{
    (void)state;
    static const env_op ops[] = {ENV_OP_SYNC, ENV_OP_WRITE};
    for (int oi = 0; oi < 2; oi++) {
        char base[512], dir[600];
        tu_mkdtemp(base, sizeof base, "walerr");
        snprintf(dir, sizeof dir, "%s/wal", base);
        wal *w;
        kiln_err err;
        status_clear(&err);
        tu_must(wal_open(dir, NULL, &w, &err), &err);
        uint8_t buf[512];
        uint64_t lsn1, lsn2;
        append_one(w, 0, 1, 300, buf, &lsn1);
        tu_must(wal_sync(w, lsn1, &err), &err);
        env_fault_clear();
        env_fault_arm(ops[oi], 1, EIO);
        append_one(w, 0, 2, 300, buf, &lsn2);
        assert_int_equal(wal_sync(w, lsn2, &err), KILN_IO);
        assert_int_equal(err.sys_errno, EIO);
        env_fault_clear();
        /* sticky: appends and syncs fail from now on */
        status_clear(&err);
        uint64_t lsn3;
        assert_int_equal(wal_append(w, "ns:table0", 3, "x", 1, &lsn3, &err), KILN_IO);
        status_clear(&err);
        assert_int_equal(wal_sync(w, lsn2, &err), KILN_IO);
        /* what was durable before stays so */
        status_clear(&err);
        tu_must(wal_sync(w, lsn1, &err), &err);
        wal_counters c;
        wal_stats(w, &c);
        assert_int_equal(c.failed, 1);
        status_clear(&err);
        assert_int_equal(wal_roll(w, &err), KILN_IO);
        status_clear(&err);
        assert_int_equal(wal_close(w, &err), KILN_IO);
        seen *sn = seen_new(300);
        status_clear(&err);
        tu_must(replay(dir, 0, sn, NULL, &err), &err);
        assert_true(sn->n >= 1);
        seen_free(sn);
        tu_rmrf(base);
    }
    /* a roll whose new file cannot be created leaves the log usable */
    char base[512], dir[600];
    tu_mkdtemp(base, sizeof base, "walroll");
    snprintf(dir, sizeof dir, "%s/wal", base);
    wal *w;
    kiln_err err;
    status_clear(&err);
    tu_must(wal_open(dir, NULL, &w, &err), &err);
    uint8_t buf[512];
    uint64_t lsn;
    append_one(w, 0, 1, 300, buf, &lsn);
    env_fault_clear();
    env_fault_arm(ENV_OP_OPEN, 1, ENOSPC);
    assert_int_equal(wal_roll(w, &err), KILN_IO);
    env_fault_clear();
    status_clear(&err);
    append_one(w, 0, 2, 300, buf, &lsn);
    tu_must(wal_sync(w, lsn, &err), &err);
    tu_must(wal_roll(w, &err), &err);
    tu_must(wal_close(w, &err), &err);
    seen *sn = seen_new(300);
    tu_must(replay(dir, 0, sn, NULL, &err), &err);
    assert_int_equal(sn->n, 2);
    seen_free(sn);
    tu_rmrf(base);
}

/* ------------------------------------------------------------------ power cuts */

#define PW_TABLES 3
#define PW_RECORDS 36

typedef struct pw_state {
    uint64_t appended[PW_TABLES];   /* appends that returned OK */
    uint64_t acked[PW_TABLES];      /* covered by a wal_sync that returned OK */
    uint64_t flushed[PW_TABLES];    /* passed to wal_mark_flushed (0: never) */
} pw_state;

static kiln_status
pw_mark(wal *w, pw_state *ps, int t, uint64_t s, kiln_err *err)
{
    char name[32];
    table_name(t, name);
    ps->flushed[t] = s;
    return wal_mark_flushed(w, name, s, err);
}

/* Open, appends each synced, an explicit roll, automatic rolls (small
 * roll_bytes) and removals; stops at the first failure. */
static kiln_status
pw_workload(const char *dir, pw_state *ps, kiln_err *err)
{
    memset(ps, 0, sizeof *ps);
    wal_options o;
    wal_options_init(&o);
    o.roll_bytes = 1024;
    o.async_sync_ms = 3600 * 1000;   /* the thread stays out of the count of calls */
    wal *w;
    kiln_status st = wal_open(dir, &o, &w, err);
    if (st != KILN_OK)
        return st;
    uint8_t buf[512];
    for (int i = 0; i < PW_RECORDS && st == KILN_OK; i++) {
        int t = (i * 5 / 3) % PW_TABLES;
        char name[32];
        table_name(t, name);
        uint64_t s = ps->appended[t] + 1, lsn;
        size_t n = gen_payload(t, s, 300, buf);
        st = wal_append(w, name, s, buf, n, &lsn, err);
        if (st != KILN_OK)
            break;
        ps->appended[t] = s;
        st = wal_sync(w, lsn, err);
        if (st != KILN_OK)
            break;
        memcpy(ps->acked, ps->appended, sizeof ps->acked);
        if (i == 12)
            st = wal_roll(w, err);
        else if (i == 18)
            st = pw_mark(w, ps, 0, ps->appended[0] - 1, err);
        else if (i == 27) {
            st = pw_mark(w, ps, 1, ps->appended[1], err);
            if (st == KILN_OK)
                st = pw_mark(w, ps, 2, ps->appended[2] - 2, err);
        }
    }
    kiln_err e2;
    status_clear(&e2);
    kiln_status c = wal_close(w, &e2);
    if (st == KILN_OK && c != KILN_OK)
        st = status_set(err, c, "%s", e2.msg);
    return st;
}

/* The replay holds every acknowledged record, each table's records in
 * order, and past the table's flushed seq no hole: a prefix of what was
 * appended. */
static void
pw_check(const char *dir, const pw_state *ps, long k, int loose)
{
    seen *sn = seen_new(300);
    kiln_err err;
    status_clear(&err);
    wal_replay_stats st;
    kiln_status s = replay(dir, 0, sn, &st, &err);
    if (s != KILN_OK)
        fail_msg("cut at %ld (%s): replay: %s", k, loose ? "loose" : "strict", err.msg);
    uint64_t last[PW_TABLES] = {0}, expect[PW_TABLES];
    for (int t = 0; t < PW_TABLES; t++)
        expect[t] = ps->flushed[t] + 1;
    for (size_t i = 0; i < sn->n; i++) {
        int t = sn->t[i];
        uint64_t q = sn->seq[i];
        assert_true(t >= 0 && t < PW_TABLES);
        if (q <= last[t] || q > ps->appended[t])
            fail_msg("cut at %ld: table %d seq %llu after %llu (appended %llu)", k, t,
                     (unsigned long long)q, (unsigned long long)last[t],
                     (unsigned long long)ps->appended[t]);
        last[t] = q;
        if (q > ps->flushed[t]) {
            if (q != expect[t])
                fail_msg("cut at %ld (%s): table %d: seq %llu where %llu was due", k,
                         loose ? "loose" : "strict", t, (unsigned long long)q,
                         (unsigned long long)expect[t]);
            expect[t]++;
        }
    }
    for (int t = 0; t < PW_TABLES; t++) {
        if (expect[t] - 1 < ps->acked[t])
            fail_msg("cut at %ld (%s): table %d: acknowledged up to %llu, replayed up to %llu",
                     k, loose ? "loose" : "strict", t, (unsigned long long)ps->acked[t],
                     (unsigned long long)(expect[t] - 1));
    }
    seen_free(sn);
}

static void
power_cut(void **state)
{
    (void)state;
    char base[512], data[600], dir[700], stash[600];
    tu_mkdtemp(base, sizeof base, "walpower");
    snprintf(data, sizeof data, "%s/data", base);
    snprintf(dir, sizeof dir, "%s/wal", data);
    snprintf(stash, sizeof stash, "%s/stash", base);
    assert_int_equal(mkdir(data, 0755), 0);
    assert_int_equal(mkdir(stash, 0755), 0);
    long calls = 0, points = 0, kinds[ENV_POWER_KIND_COUNT] = {0};
    uint64_t acked_total = 0;
    for (long kk = 0; kk == 0 || kk / 2 <= calls + 1; kk = kk == 0 ? 2 : kk + 1) {
        long k = kk / 2;
        int loose = kk % 2;
        tu_rmrf(dir);
        pw_state ps;
        kiln_err err;
        status_clear(&err);
        env_power_begin(stash);
        env_power_cut_at(k);
        kiln_status st = pw_workload(dir, &ps, &err);
        if (k == 0) {
            tu_must(st, &err);
            calls = env_power_calls();
            for (long i = 1; i <= calls; i++)
                kinds[env_power_kind_of(i)]++;
            env_power_end();
            continue;
        }
        assert_true(k > calls || env_power_is_cut());
        if (loose)
            env_power_survive_some(0x3a11ULL * (uint64_t)kk + seed);
        tu_must(env_power_restore(&err), &err);
        points++;
        for (int t = 0; t < PW_TABLES; t++)
            acked_total += ps.acked[t];
        pw_check(dir, &ps, k, loose);
        /* a restart: open (tracking what the files hold), mark what the
         * caller's manifests say is flushed, close; still the same */
        wal *w;
        status_clear(&err);
        tu_must(wal_open(dir, NULL, &w, &err), &err);
        for (int t = 0; t < PW_TABLES; t++) {
            if (ps.flushed[t] > 0)
                tu_must(pw_mark(w, &ps, t, ps.flushed[t], &err), &err);
        }
        tu_must(wal_close(w, &err), &err);
        pw_check(dir, &ps, k, loose);
    }
    printf("  power cut: %ld changing calls (%ld creates, %ld writes, %ld syncs, %ld dir syncs, "
           "%ld unlinks), %ld cuts (strict and loose), %llu acknowledged records checked\n",
           calls, kinds[ENV_POWER_CREATE], kinds[ENV_POWER_WRITE], kinds[ENV_POWER_SYNC],
           kinds[ENV_POWER_SYNC_DIR], kinds[ENV_POWER_UNLINK], points,
           (unsigned long long)acked_total);
    assert_true(kinds[ENV_POWER_UNLINK] > 0);
    tu_rmrf(base);
}

int
main(void)
{
    const char *s = getenv("KILN_TEST_SEED");
    seed = s ? strtoull(s, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_wal: seed %llu (replay with KILN_TEST_SEED)\n", (unsigned long long)seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(roundtrip),
        cmocka_unit_test(roll_removal),
        cmocka_unit_test(torn_tail),
        cmocka_unit_test(mid_corruption),
        cmocka_unit_test(group_commit),
        cmocka_unit_test(background_sync),
        cmocka_unit_test(lock_busy),
        cmocka_unit_test(sticky_errors),
        cmocka_unit_test(power_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
