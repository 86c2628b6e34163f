/* wal.c -- the write-ahead log: record framing, the file scanner shared by
 * replay and open, group commit, the background sync thread, rolling and
 * removal of flushed files. Format and contracts: wal.h and
 * docs/storage-format.md section 3.
 *
 * Locking: one mutex (mu) guards everything but the leader's I/O. The
 * leader (wal_lead) swaps the append buffer with a spare under mu, then
 * writes the spare and fsyncs with mu released; `leading` keeps a second
 * leader out, so the current file and the spare are the leader's alone
 * meanwhile. wal_mark_flushed calls are serialized by admin_mu, taken
 * before mu, so that only one of them unlinks at a time.
 */
#include "storage/store/wal.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/base/buf.h"
#include "storage/base/coding.h"
#include "storage/base/crc32c.h"
#include "storage/base/env.h"

/* Smallest body: a one-byte table name and the sequence number. */
#define WAL_BODY_MIN (1 + 1 + 8)
#define WAL_BODY_MAX (1 + WAL_TABLE_MAX + 8 + WAL_PAYLOAD_MAX)
/* Replay reads a file through a window of at least this many bytes. */
#define WAL_READ_CHUNK ((size_t)1 << 20)
/* Buffered bytes past which an append wakes the background thread early. */
#define WAL_KICK_BYTES ((size_t)1 << 20)
#define WAL_NAME_LEN 21   /* 16 hex digits, ".log" and the NUL */

void
wal_options_init(wal_options *o)
{
    o->roll_bytes = (uint64_t)64 << 20;
    o->async_sync_ms = 1000;
}

void
wal_file_name(uint64_t num, char *out)
{
    snprintf(out, WAL_NAME_LEN, "%016llx.log", (unsigned long long)num);
}

int
wal_parse_file_name(const char *name, uint64_t *num)
{
    if (strlen(name) != WAL_NAME_LEN - 1 || strcmp(name + 16, ".log") != 0)
        return 0;
    uint64_t v = 0;
    for (int i = 0; i < 16; i++) {
        char c = name[i];
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else
            return 0;
        v = v << 4 | (uint64_t)d;
    }
    *num = v;
    return 1;
}

static uint32_t
wal_crc_mask(uint32_t crc)
{
    return ((crc >> 15) | (crc << 17)) + WAL_CRC_MASK;
}

static uint32_t
wal_crc_unmask(uint32_t masked)
{
    uint32_t r = masked - WAL_CRC_MASK;
    return (r >> 17) | (r << 15);
}

/* ------------------------------------------------------------------ scanning */

/* A window over a readable file: bytes [off, off + buf.len). */
typedef struct wal_win {
    env_file *f;
    const char *path;
    uint64_t size;
    uint64_t off;
    kbuf buf;
} wal_win;

/* Point *p at bytes [off, off + n) of the file. REQUIRES: off + n <= size. */
static kiln_status
wal_win_get(wal_win *w, uint64_t off, size_t n, const uint8_t **p, kiln_err *err)
{
    if (off >= w->off && off + n <= w->off + w->buf.len) {
        *p = w->buf.data + (off - w->off);
        return KILN_OK;
    }
    size_t want = n > WAL_READ_CHUNK ? n : WAL_READ_CHUNK;
    if (want > w->size - off)
        want = (size_t)(w->size - off);
    buf_resize(&w->buf, want);
    kiln_status st = env_pread(w->f, off, w->buf.data, want, err);
    if (st != KILN_OK) {
        buf_reset(&w->buf);
        return st;
    }
    w->off = off;
    *p = w->buf.data;
    return KILN_OK;
}

/* What a valid record at some offset holds (borrowing from the window). */
typedef struct wal_rec {
    uint32_t body_len;
    char table[WAL_TABLE_MAX + 1];
    uint64_t seq;
    const uint8_t *payload;
    size_t n;
} wal_rec;

/* Is there a whole valid record at off? *why says what is wrong if not. */
static kiln_status
wal_read_record(wal_win *w, uint64_t off, int *valid, wal_rec *r, char *why, size_t why_cap,
                kiln_err *err)
{
    *valid = 0;
    uint64_t left = w->size - off;
    if (left < WAL_RECORD_HEADER) {
        snprintf(why, why_cap, "header cut short: %llu bytes", (unsigned long long)left);
        return KILN_OK;
    }
    const uint8_t *h;
    kiln_status st = wal_win_get(w, off, WAL_RECORD_HEADER, &h, err);
    if (st != KILN_OK)
        return st;
    uint32_t len = coding_get_be32(h);
    uint32_t crc = wal_crc_unmask(coding_get_be32(h + 4));
    if (len < WAL_BODY_MIN || len > WAL_BODY_MAX) {
        snprintf(why, why_cap, "bad length %u", len);
        return KILN_OK;
    }
    if (len > left - WAL_RECORD_HEADER) {
        snprintf(why, why_cap, "cut short: length %u, %llu bytes left", len,
                 (unsigned long long)(left - WAL_RECORD_HEADER));
        return KILN_OK;
    }
    const uint8_t *b;
    st = wal_win_get(w, off + WAL_RECORD_HEADER, len, &b, err);
    if (st != KILN_OK)
        return st;
    if (crc32c_value(b, len) != crc) {
        snprintf(why, why_cap, "checksum mismatch");
        return KILN_OK;
    }
    size_t t = b[0];
    if (t == 0 || 1 + t + 8 > len || memchr(b + 1, 0, t) != NULL) {
        snprintf(why, why_cap, "bad table name");
        return KILN_OK;
    }
    r->body_len = len;
    memcpy(r->table, b + 1, t);
    r->table[t] = '\0';
    r->seq = coding_get_be64(b + 1 + t);
    r->payload = b + 1 + t + 8;
    r->n = len - 1 - t - 8;
    *valid = 1;
    return KILN_OK;
}

/* The offset of the first valid record after `from`, or 0 if there is none. */
static kiln_status
wal_find_valid(wal_win *w, uint64_t from, uint64_t *found, kiln_err *err)
{
    *found = 0;
    char why[96];
    for (uint64_t p = from + 1; p + WAL_RECORD_HEADER + WAL_BODY_MIN <= w->size; p++) {
        int valid;
        wal_rec r;
        kiln_status st = wal_read_record(w, p, &valid, &r, why, sizeof why, err);
        if (st != KILN_OK)
            return st;
        if (valid) {
            *found = p;
            return KILN_OK;
        }
    }
    return KILN_OK;
}

static int
wal_all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != 0)
            return 0;
    }
    return 1;
}

/* A bad spot at `off` in a file: a torn tail if nothing valid follows it,
 * else damage (skipped under WAL_REPLAY_SKIP_CORRUPT). */
static kiln_status
wal_bad_spot(wal_win *w, uint64_t off, const char *why, unsigned flags, wal_replay_stats *st,
             kiln_err *err)
{
    uint64_t next;
    kiln_status s = wal_find_valid(w, off, &next, err);
    if (s != KILN_OK)
        return s;
    if (next == 0) {
        st->torn_tails++;
        st->torn_bytes += w->size - off;
        snprintf(st->last_torn, sizeof st->last_torn, "%s: torn record at offset %llu (%s)",
                 w->path, (unsigned long long)off, why);
        return KILN_OK;
    }
    if (flags & WAL_REPLAY_SKIP_CORRUPT) {
        st->corrupt_files++;
        st->corrupt_bytes += w->size - off;
        snprintf(st->last_corrupt, sizeof st->last_corrupt,
                 "%s: bad record at offset %llu (%s), followed by a valid record at offset %llu",
                 w->path, (unsigned long long)off, why, (unsigned long long)next);
        return KILN_OK;
    }
    return status_set(err, KILN_CORRUPTION,
                      "%s: bad record at offset %llu (%s), followed by a valid record at offset "
                      "%llu",
                      w->path, (unsigned long long)off, why, (unsigned long long)next);
}

/* Read log file number num at path, calling fn for each intact record. */
static kiln_status
wal_scan_file(const char *path, uint64_t num, unsigned flags, wal_replay_fn fn, void *arg,
              wal_replay_stats *st, kiln_err *err)
{
    wal_win w;
    memset(&w, 0, sizeof w);
    w.path = path;
    kiln_status s = env_open_read(path, &w.f, err);
    if (s == KILN_NOT_FOUND) {
        status_clear(err);   /* removed since the listing: it held only flushed records */
        return KILN_OK;
    }
    if (s != KILN_OK)
        return s;
    w.size = env_file_size(w.f);
    st->files++;
    if (w.size < WAL_FILE_HEADER) {
        if (w.size > 0) {
            st->torn_tails++;
            st->torn_bytes += w.size;
            snprintf(st->last_torn, sizeof st->last_torn,
                     "%s: torn file header (%llu bytes)", path, (unsigned long long)w.size);
        }
        env_close(w.f, NULL);
        return KILN_OK;
    }
    const uint8_t *h;
    s = wal_win_get(&w, 0, WAL_FILE_HEADER, &h, err);
    uint64_t off = WAL_FILE_HEADER;
    if (s == KILN_OK && memcmp(h, WAL_MAGIC, 8) != 0) {
        /* A header of zeros was never written (a file system that grew the
         * file before its data reached the disk): torn like any record,
         * unless a valid record follows. */
        if (wal_all_zero(h, WAL_FILE_HEADER)) {
            s = wal_bad_spot(&w, 0, "file header of zeros", flags, st, err);
            off = w.size;
        } else if (flags & WAL_REPLAY_SKIP_CORRUPT) {
            st->corrupt_files++;
            st->corrupt_bytes += w.size;
            snprintf(st->last_corrupt, sizeof st->last_corrupt,
                     "%s: not a write-ahead log file (bad magic)", path);
            off = w.size;
        } else {
            s = status_set(err, KILN_CORRUPTION, "%s: not a write-ahead log file (bad magic)",
                           path);
        }
    } else if (s == KILN_OK) {
        uint32_t version = coding_get_be32(h + 8);
        uint64_t fnum = coding_get_be64(h + 12);
        if (version > WAL_VERSION)
            s = status_set(err, KILN_UNSUPPORTED, "%s: log format version %u (newest known %u)",
                           path, version, WAL_VERSION);
        else if (version == 0 || fnum != num)
            s = status_set(err, KILN_CORRUPTION, "%s: bad file header (version %u, number %llu)",
                           path, version, (unsigned long long)fnum);
        if (s != KILN_OK && (flags & WAL_REPLAY_SKIP_CORRUPT) && s == KILN_CORRUPTION) {
            status_clear(err);
            s = KILN_OK;
            st->corrupt_files++;
            st->corrupt_bytes += w.size;
            snprintf(st->last_corrupt, sizeof st->last_corrupt, "%s: bad file header", path);
            off = w.size;
        }
    }
    char why[96];
    while (s == KILN_OK && off < w.size) {
        int valid;
        wal_rec r;
        s = wal_read_record(&w, off, &valid, &r, why, sizeof why, err);
        if (s != KILN_OK)
            break;
        if (!valid) {
            s = wal_bad_spot(&w, off, why, flags, st, err);
            break;
        }
        s = fn(arg, r.table, r.seq, r.payload, r.n);
        if (s != KILN_OK)
            break;
        st->records++;
        st->bytes += WAL_RECORD_HEADER + r.body_len;
        off += WAL_RECORD_HEADER + r.body_len;
    }
    buf_free(&w.buf);
    env_close(w.f, NULL);
    return s;
}

/* The log files in dir, ascending; *names owned by the caller (env_list_free). */
static kiln_status
wal_list(const char *dir, char ***names, size_t *count, kiln_err *err)
{
    kiln_status s = env_list_dir(dir, names, count, err);
    if (s != KILN_OK)
        return s;
    size_t k = 0;
    for (size_t i = 0; i < *count; i++) {
        uint64_t num;
        if (wal_parse_file_name((*names)[i], &num))
            (*names)[k++] = (*names)[i];
        else
            free((*names)[i]);
    }
    *count = k;
    return KILN_OK;
}

kiln_status
wal_replay(const char *dir, unsigned flags, wal_replay_fn fn, void *arg, wal_replay_stats *st,
           kiln_err *err)
{
    wal_replay_stats local;
    if (st == NULL)
        st = &local;
    memset(st, 0, sizeof *st);
    char **names;
    size_t count;
    kiln_status s = wal_list(dir, &names, &count, err);
    if (s == KILN_NOT_FOUND) {
        status_clear(err);
        return KILN_OK;
    }
    if (s != KILN_OK)
        return s;
    for (size_t i = 0; i < count && s == KILN_OK; i++) {
        char path[PATH_MAX];
        uint64_t num;
        wal_parse_file_name(names[i], &num);
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= sizeof path) {
            s = status_set(err, KILN_INVALID, "%s: path too long", dir);
            break;
        }
        s = wal_scan_file(path, num, flags, fn, arg, st, err);
    }
    env_list_free(names, count);
    return s;
}

/* ------------------------------------------------------------------ table sets */

/* Tables and a sequence number each: the largest in a file, or flushed. */
typedef struct wal_tseq {
    char *name;
    uint64_t seq;
} wal_tseq;

typedef struct wal_tset {
    wal_tseq *v;
    size_t n, cap;
} wal_tset;

static wal_tseq *
wal_tset_find(const wal_tset *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->v[i].name, name) == 0)
            return &s->v[i];
    }
    return NULL;
}

/* Raise name's entry to seq (adding it if absent). */
static void
wal_tset_note(wal_tset *s, const char *name, uint64_t seq)
{
    wal_tseq *e = wal_tset_find(s, name);
    if (e != NULL) {
        if (seq > e->seq)
            e->seq = seq;
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 4;
        s->v = kiln_realloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n].name = (char *)kiln_memdup(name, strlen(name) + 1);
    s->v[s->n].seq = seq;
    s->n++;
}

static void
wal_tset_merge(wal_tset *dst, const wal_tset *src)
{
    for (size_t i = 0; i < src->n; i++)
        wal_tset_note(dst, src->v[i].name, src->v[i].seq);
}

static void
wal_tset_clear(wal_tset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].name);
    s->n = 0;
}

static void
wal_tset_free(wal_tset *s)
{
    wal_tset_clear(s);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* 1 if every table in s is flushed up to its seq there. */
static int
wal_tset_flushed(const wal_tset *s, const wal_tset *flushed)
{
    for (size_t i = 0; i < s->n; i++) {
        const wal_tseq *f = wal_tset_find(flushed, s->v[i].name);
        if (f == NULL || f->seq < s->v[i].seq)
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ the log */

typedef struct wal_logfile {
    uint64_t num;
    wal_tset tables;   /* the largest seq of each table with records in the file */
    int keep;          /* of a newer format version: never removed */
} wal_logfile;

struct wal {
    char dir[PATH_MAX];
    wal_options opt;
    env_file *lock;
    pthread_mutex_t mu;
    pthread_mutex_t admin_mu;   /* serializes wal_mark_flushed; taken before mu */
    pthread_cond_t done_cv;     /* a group ended: durable_lsn moved, or a failure */
    pthread_cond_t bg_cv;       /* wakes the background thread */
    pthread_t bg;
    int bg_started;

    /* Everything below is guarded by mu. */
    int closing;
    int kicked;                 /* the buffer grew past WAL_KICK_BYTES */
    kbuf buf;                   /* records appended since the last leader took them */
    uint64_t buf_records;
    wal_tset pending;           /* their tables; moved to the current file by the leader */
    kbuf spare;                 /* the leader's, written outside the lock */
    uint64_t appended_lsn;      /* log position after the last append */
    uint64_t durable_lsn;       /* every record before it is fsynced */
    int leading;                /* a leader is writing, fsyncing or rolling */
    kiln_status failed;         /* sticky: a write or fsync failed */
    kiln_err fail_err;
    env_file *cur;              /* the current file; files[nfiles - 1] describes it */
    uint64_t cur_size;          /* its bytes written (header included) */
    uint64_t next_num;
    wal_logfile *files;         /* ascending by number */
    size_t nfiles, files_cap;
    wal_tset flushed;
    wal_counters c;
};

static kiln_status
wal_path(const wal *w, uint64_t num, char *out, size_t cap, kiln_err *err)
{
    char name[WAL_NAME_LEN];
    wal_file_name(num, name);
    if ((size_t)snprintf(out, cap, "%s/%s", w->dir, name) >= cap)
        return status_set(err, KILN_INVALID, "%s: path too long", w->dir);
    return KILN_OK;
}

static wal_logfile *
wal_add_file(wal *w, uint64_t num)
{
    if (w->nfiles == w->files_cap) {
        w->files_cap = w->files_cap ? 2 * w->files_cap : 8;
        w->files = kiln_realloc(w->files, w->files_cap * sizeof *w->files);
    }
    wal_logfile *f = &w->files[w->nfiles++];
    memset(f, 0, sizeof *f);
    f->num = num;
    return f;
}

/* Create log file num: header, fsync, directory fsync. On failure nothing
 * is left open and the file is removed if it can be. */
static kiln_status
wal_create_file(const wal *w, uint64_t num, env_file **out, kiln_err *err)
{
    *out = NULL;
    char path[PATH_MAX];
    kiln_status st = wal_path(w, num, path, sizeof path, err);
    if (st != KILN_OK)
        return st;
    env_file *f;
    st = env_create(path, 1, &f, err);
    if (st != KILN_OK)
        return st;
    uint8_t h[WAL_FILE_HEADER];
    memcpy(h, WAL_MAGIC, 8);
    coding_put_be32(h + 8, WAL_VERSION);
    coding_put_be64(h + 12, num);
    st = env_append(f, h, sizeof h, err);
    if (st == KILN_OK)
        st = env_sync(f, err);
    if (st == KILN_OK)
        st = env_sync_dir(w->dir, err);
    if (st != KILN_OK) {
        env_close(f, NULL);
        env_unlink(path, NULL);
        return st;
    }
    *out = f;
    return KILN_OK;
}

static void
wal_fail(wal *w, kiln_status st, const kiln_err *e)
{
    if (w->failed == KILN_OK) {
        w->failed = st;
        w->fail_err = *e;
    }
}

/* Pass an error recorded in e on to err (first error wins), errno included. */
static kiln_status
wal_pass_err(kiln_err *err, kiln_status st, const kiln_err *e)
{
    if (err != NULL && err->code == KILN_OK) {
        *err = *e;
        err->code = st;
    }
    return st;
}

/* The sticky failure, with its message and errno, into err. */
static kiln_status
wal_failed_status(const wal *w, kiln_err *err)
{
    return wal_pass_err(err, w->failed, &w->fail_err);
}

/* Start the next file. REQUIRES: mu held, w->leading set by the caller,
 * everything buffered written and fsynced to the current file. Releases mu
 * during the I/O. */
static kiln_status
wal_roll_locked(wal *w, kiln_err *err)
{
    uint64_t num = w->next_num++;
    pthread_mutex_unlock(&w->mu);
    env_file *nf;
    kiln_status st = wal_create_file(w, num, &nf, err);
    pthread_mutex_lock(&w->mu);
    if (st != KILN_OK)
        return st;
    env_file *old = w->cur;
    w->cur = nf;
    w->cur_size = WAL_FILE_HEADER;
    wal_add_file(w, num);
    w->c.rolls++;
    w->c.files_created++;
    pthread_mutex_unlock(&w->mu);
    env_close(old, NULL);   /* everything in it is fsynced: nothing left to flush */
    pthread_mutex_lock(&w->mu);
    return KILN_OK;
}

/* Lead one group: write and fsync everything buffered, then roll if `roll`
 * or the file is past roll_bytes. REQUIRES: mu held, no leader, no sticky
 * failure. Releases mu during the I/O and returns with it held. A failed
 * write or fsync becomes sticky; a failed automatic roll is counted and
 * tried again by the next group, an asked-for one returned. */
static kiln_status
wal_lead(wal *w, int roll, kiln_err *err)
{
    w->leading = 1;
    kbuf t = w->spare;
    w->spare = w->buf;
    w->buf = t;
    buf_reset(&w->buf);
    uint64_t end = w->appended_lsn;
    uint64_t records = w->buf_records;
    w->buf_records = 0;
    w->kicked = 0;
    wal_tset_merge(&w->files[w->nfiles - 1].tables, &w->pending);
    wal_tset_clear(&w->pending);
    env_file *f = w->cur;
    size_t n = w->spare.len;
    int need_sync = end > w->durable_lsn;
    pthread_mutex_unlock(&w->mu);

    kiln_err e;
    status_clear(&e);
    kiln_status st = KILN_OK;
    if (n > 0)
        st = env_append(f, w->spare.data, n, &e);
    if (st == KILN_OK && need_sync)
        st = env_sync(f, &e);
    buf_reset(&w->spare);

    pthread_mutex_lock(&w->mu);
    if (st != KILN_OK) {
        wal_fail(w, st, &e);
        w->leading = 0;
        pthread_cond_broadcast(&w->done_cv);
        return wal_failed_status(w, err);
    }
    w->cur_size += n;
    if (need_sync) {
        w->durable_lsn = end;
        w->c.syncs++;
        w->c.synced_records += records;
        if (records > w->c.max_group)
            w->c.max_group = records;
        int b = 0;
        while (b + 1 < WAL_GROUP_BUCKETS && (records >> (b + 1)) != 0)
            b++;
        w->c.group_hist[b]++;
        pthread_cond_broadcast(&w->done_cv);
    }
    if (roll || w->cur_size >= w->opt.roll_bytes) {
        status_clear(&e);
        st = wal_roll_locked(w, &e);
        if (st != KILN_OK && roll) {
            wal_pass_err(err, st, &e);
        } else if (st != KILN_OK) {
            w->c.roll_failures++;
            st = KILN_OK;
        }
    }
    w->leading = 0;
    pthread_cond_broadcast(&w->done_cv);
    return st;
}

/* wal_sync with mu held. */
static kiln_status
wal_sync_locked(wal *w, uint64_t lsn, kiln_err *err)
{
    for (;;) {
        if (lsn <= w->durable_lsn)
            return KILN_OK;
        if (w->failed != KILN_OK)
            return wal_failed_status(w, err);
        if (lsn > w->appended_lsn)
            return status_set(err, KILN_INVALID, "%s: sync to position %llu past the last append (%llu)",
                              w->dir, (unsigned long long)lsn,
                              (unsigned long long)w->appended_lsn);
        if (!w->leading) {
            kiln_status st = wal_lead(w, 0, err);
            if (st != KILN_OK)
                return st;
        } else {
            pthread_cond_wait(&w->done_cv, &w->mu);
        }
    }
}

kiln_status
wal_sync(wal *w, uint64_t lsn, kiln_err *err)
{
    pthread_mutex_lock(&w->mu);
    kiln_status st = wal_sync_locked(w, lsn, err);
    pthread_mutex_unlock(&w->mu);
    return st;
}

kiln_status
wal_append(wal *w, const char *table, uint64_t seq, const void *payload, size_t n,
           uint64_t *lsn, kiln_err *err)
{
    size_t t = table ? strnlen(table, WAL_TABLE_MAX + 1) : 0;
    if (t == 0 || t > WAL_TABLE_MAX)
        return status_set(err, KILN_INVALID, "%s: table name of %s bytes (1..%d)", w->dir,
                          t == 0 ? "0" : "more than 255", WAL_TABLE_MAX);
    if (n > WAL_PAYLOAD_MAX)
        return status_set(err, KILN_INVALID, "%s: record of %zu bytes for %s (at most %zu)",
                          w->dir, n, table, WAL_PAYLOAD_MAX);
    /* Frame everything but the payload, and checksum, outside the lock. */
    uint8_t head[WAL_RECORD_HEADER + 1 + WAL_TABLE_MAX + 8];
    size_t hn = WAL_RECORD_HEADER;
    head[hn++] = (uint8_t)t;
    memcpy(head + hn, table, t);
    hn += t;
    coding_put_be64(head + hn, seq);
    hn += 8;
    uint32_t body = (uint32_t)(hn - WAL_RECORD_HEADER + n);
    uint32_t crc = crc32c_value(head + WAL_RECORD_HEADER, hn - WAL_RECORD_HEADER);
    if (n > 0)
        crc = crc32c_extend(crc, payload, n);
    coding_put_be32(head, body);
    coding_put_be32(head + 4, wal_crc_mask(crc));

    pthread_mutex_lock(&w->mu);
    if (w->failed != KILN_OK) {
        kiln_status st = wal_failed_status(w, err);
        pthread_mutex_unlock(&w->mu);
        return st;
    }
    buf_reserve(&w->buf, hn + n);
    buf_append(&w->buf, head, hn);
    if (n > 0)
        buf_append(&w->buf, payload, n);
    w->buf_records++;
    wal_tset_note(&w->pending, table, seq);
    w->appended_lsn += hn + n;
    *lsn = w->appended_lsn;
    w->c.appends++;
    w->c.append_bytes += hn + n;
    if (w->buf.len >= WAL_KICK_BYTES && !w->kicked) {
        w->kicked = 1;
        pthread_cond_signal(&w->bg_cv);
    }
    pthread_mutex_unlock(&w->mu);
    return KILN_OK;
}

kiln_status
wal_roll(wal *w, kiln_err *err)
{
    pthread_mutex_lock(&w->mu);
    while (w->leading && w->failed == KILN_OK)
        pthread_cond_wait(&w->done_cv, &w->mu);
    kiln_status st;
    if (w->failed != KILN_OK)
        st = wal_failed_status(w, err);
    else
        st = wal_lead(w, 1, err);
    pthread_mutex_unlock(&w->mu);
    return st;
}

kiln_status
wal_mark_flushed(wal *w, const char *table, uint64_t flushed_seq, kiln_err *err)
{
    if (table == NULL || table[0] == '\0' || strnlen(table, WAL_TABLE_MAX + 1) > WAL_TABLE_MAX)
        return status_set(err, KILN_INVALID, "%s: bad table name", w->dir);
    pthread_mutex_lock(&w->admin_mu);
    pthread_mutex_lock(&w->mu);
    wal_tset_note(&w->flushed, table, flushed_seq);
    kiln_status st = KILN_OK;
    /* The current file can only go after a roll: do one if all it holds
     * (written or still buffered) is flushed and it is worth reclaiming. */
    const wal_logfile *cf = &w->files[w->nfiles - 1];
    if (w->failed == KILN_OK && w->cur_size + w->buf.len >= w->opt.roll_bytes / 2 &&
        wal_tset_flushed(&cf->tables, &w->flushed) && wal_tset_flushed(&w->pending, &w->flushed)) {
        while (w->leading && w->failed == KILN_OK)
            pthread_cond_wait(&w->done_cv, &w->mu);
        if (w->failed != KILN_OK)
            st = wal_failed_status(w, err);
        else
            st = wal_lead(w, 1, err);
    }
    size_t ndel = 0;
    uint64_t *del = NULL;
    if (st == KILN_OK) {
        del = kiln_malloc(w->nfiles * sizeof *del);
        for (size_t i = 0; i + 1 < w->nfiles; i++) {
            if (!w->files[i].keep && wal_tset_flushed(&w->files[i].tables, &w->flushed))
                del[ndel++] = w->files[i].num;
        }
    }
    pthread_mutex_unlock(&w->mu);
    size_t removed = 0;
    for (size_t i = 0; i < ndel && st == KILN_OK; i++) {
        char path[PATH_MAX];
        st = wal_path(w, del[i], path, sizeof path, err);
        if (st != KILN_OK)
            break;
        kiln_err e;
        status_clear(&e);
        st = env_unlink(path, &e);
        if (st == KILN_NOT_FOUND)
            st = KILN_OK;
        if (st != KILN_OK) {
            wal_pass_err(err, st, &e);
            break;
        }
        pthread_mutex_lock(&w->mu);
        for (size_t j = 0; j < w->nfiles; j++) {
            if (w->files[j].num == del[i]) {
                wal_tset_free(&w->files[j].tables);
                memmove(&w->files[j], &w->files[j + 1], (w->nfiles - j - 1) * sizeof *w->files);
                w->nfiles--;
                break;
            }
        }
        w->c.files_removed++;
        pthread_mutex_unlock(&w->mu);
        removed++;
    }
    if (removed > 0) {
        kiln_status s2 = env_sync_dir(w->dir, err);
        if (st == KILN_OK)
            st = s2;
    }
    free(del);
    pthread_mutex_unlock(&w->admin_mu);
    return st;
}

void
wal_stats(wal *w, wal_counters *out)
{
    pthread_mutex_lock(&w->mu);
    *out = w->c;
    out->appended_lsn = w->appended_lsn;
    out->durable_lsn = w->durable_lsn;
    out->files = w->nfiles;
    out->current_file = w->files[w->nfiles - 1].num;
    out->failed = w->failed != KILN_OK;
    pthread_mutex_unlock(&w->mu);
}

/* ------------------------------------------------------------------ background sync */

static void *
wal_bg_main(void *arg)
{
    wal *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->closing) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += w->opt.async_sync_ms / 1000;
        until.tv_nsec += (w->opt.async_sync_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!w->closing && !w->kicked) {
            if (pthread_cond_timedwait(&w->bg_cv, &w->mu, &until) == ETIMEDOUT)
                break;
        }
        if (w->closing)
            break;
        /* Everything appended by now, whoever leads it; a failure is
         * sticky and reported to the writers. */
        if (w->failed == KILN_OK && w->appended_lsn > w->durable_lsn)
            wal_sync_locked(w, w->appended_lsn, NULL);
        w->kicked = 0;
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* ------------------------------------------------------------------ open, close */

/* mkdir -p dir, then fsync the parent of every directory made, so the log's
 * directory survives a power cut with the files in it. */
static kiln_status
wal_make_dir(const char *dir, kiln_err *err)
{
    if (env_exists(dir))
        return KILN_OK;
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    size_t have = strlen(p);   /* length of the deepest existing ancestor */
    for (;;) {
        char *s = strrchr(p, '/');
        if (s == NULL) {
            have = 0;
            break;
        }
        *s = '\0';
        if (p[0] == '\0' || env_exists(p)) {
            have = strlen(p);
            break;
        }
    }
    kiln_status st = env_mkdirs(dir, 0755, err);
    if (st != KILN_OK)
        return st;
    snprintf(p, sizeof p, "%s", dir);
    for (;;) {
        char *s = strrchr(p, '/');
        if (s == NULL) {
            st = env_sync_dir(".", err);
            break;
        }
        *s = '\0';
        st = env_sync_dir(p[0] ? p : "/", err);
        if (st != KILN_OK || strlen(p) <= have)
            break;
    }
    return st;
}

static kiln_status
wal_note_record(void *arg, const char *table, uint64_t seq, const void *payload, size_t n)
{
    (void)payload;
    (void)n;
    wal_tset_note(arg, table, seq);
    return KILN_OK;
}

static void
wal_free(wal *w)
{
    for (size_t i = 0; i < w->nfiles; i++)
        wal_tset_free(&w->files[i].tables);
    free(w->files);
    wal_tset_free(&w->pending);
    wal_tset_free(&w->flushed);
    buf_free(&w->buf);
    buf_free(&w->spare);
    free(w);
}

kiln_status
wal_open(const char *dir, const wal_options *o, wal **out, kiln_err *err)
{
    *out = NULL;
    wal_options def;
    if (o == NULL) {
        wal_options_init(&def);
        o = &def;
    }
    if (o->roll_bytes == 0 || o->async_sync_ms < 1)
        return status_set(err, KILN_INVALID, "%s: roll_bytes and async_sync_ms must be positive",
                          dir);
    /* Room for "/<name>.log" after dir. */
    if (strlen(dir) + 1 + WAL_NAME_LEN > PATH_MAX)
        return status_set(err, KILN_INVALID, "%s: path too long", dir);
    wal *w = kiln_calloc(1, sizeof *w);
    snprintf(w->dir, sizeof w->dir, "%s", dir);
    w->opt = *o;
    kiln_status st = wal_make_dir(dir, err);
    if (st != KILN_OK) {
        wal_free(w);
        return st;
    }
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", dir, WAL_LOCK_FILE);
    char who[32];
    kiln_err e;
    status_clear(&e);
    st = env_lock(p, 0, &w->lock, who, sizeof who, &e);
    if (st == KILN_BUSY)
        st = status_set(err, KILN_BUSY, "%s: write-ahead log locked by another process (pid %s)",
                        dir, who[0] ? who : "unknown");
    else if (st != KILN_OK)
        wal_pass_err(err, st, &e);
    if (st != KILN_OK) {
        wal_free(w);
        return st;
    }
    /* What each existing file holds, for removal once it is flushed. */
    char **names = NULL;
    size_t count = 0;
    st = wal_list(dir, &names, &count, err);
    for (size_t i = 0; i < count && st == KILN_OK; i++) {
        uint64_t num;
        wal_parse_file_name(names[i], &num);
        wal_logfile *f = wal_add_file(w, num);
        wal_replay_stats rs;
        memset(&rs, 0, sizeof rs);
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        st = wal_scan_file(p, num, WAL_REPLAY_SKIP_CORRUPT, wal_note_record, &f->tables, &rs, err);
        if (st == KILN_UNSUPPORTED) {
            /* A newer format: keep it, forever, rather than guess. */
            status_clear(err);
            st = KILN_OK;
            f->keep = 1;
        }
        w->next_num = num + 1;
    }
    env_list_free(names, count);
    if (w->next_num == 0)
        w->next_num = 1;
    env_file *f = NULL;
    uint64_t num = w->next_num++;
    if (st == KILN_OK)
        st = wal_create_file(w, num, &f, err);
    if (st != KILN_OK) {
        env_unlock(w->lock);
        wal_free(w);
        return st;
    }
    w->cur = f;
    w->cur_size = WAL_FILE_HEADER;
    wal_add_file(w, num);
    w->c.files_created++;
    pthread_mutex_init(&w->mu, NULL);
    pthread_mutex_init(&w->admin_mu, NULL);
    pthread_cond_init(&w->done_cv, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->bg_cv, &ca);
    pthread_condattr_destroy(&ca);
    int rc = pthread_create(&w->bg, NULL, wal_bg_main, w);
    if (rc != 0) {
        st = status_set_errno(err, rc, "%s: starting the log's sync thread", dir);
        env_close(w->cur, NULL);
        env_unlock(w->lock);
        pthread_cond_destroy(&w->bg_cv);
        pthread_cond_destroy(&w->done_cv);
        pthread_mutex_destroy(&w->admin_mu);
        pthread_mutex_destroy(&w->mu);
        wal_free(w);
        return st;
    }
    w->bg_started = 1;
    *out = w;
    return KILN_OK;
}

kiln_status
wal_close(wal *w, kiln_err *err)
{
    if (w == NULL)
        return KILN_OK;
    pthread_mutex_lock(&w->mu);
    kiln_status st = wal_sync_locked(w, w->appended_lsn, err);
    if (st == KILN_OK && w->failed != KILN_OK)
        st = wal_failed_status(w, err);
    w->closing = 1;
    pthread_cond_signal(&w->bg_cv);
    pthread_mutex_unlock(&w->mu);
    if (w->bg_started)
        pthread_join(w->bg, NULL);
    env_close(w->cur, NULL);
    env_unlock(w->lock);
    pthread_cond_destroy(&w->bg_cv);
    pthread_cond_destroy(&w->done_cv);
    pthread_mutex_destroy(&w->admin_mu);
    pthread_mutex_destroy(&w->mu);
    wal_free(w);
    return st;
}
