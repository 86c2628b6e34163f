/* mr_reader.c -- the line reader over plain and gzip files.
 *
 * The reader keeps one buffer holding [buffer start, buffer end) of the
 * (uncompressed) file, refilled `chunk` bytes at a time; unconsumed bytes move
 * to the front before a refill, and the buffer only grows for a line longer
 * than it. `scan` remembers how far the current line was searched for '\n' so
 * a huge line is scanned once, not once per refill.
 */
#include "mapreduce/mr_reader.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "storage/base/env.h"

#define MR_READER_CHUNK (1024 * 1024)

struct mr_reader {
    env_file *f;
    const char *path;
    int gzip;
    uint64_t start;
    uint64_t end;
    uint64_t size;           /* on disk */
    size_t chunk;
    kbuf buf;
    size_t pos;              /* next line start in buf */
    size_t scan;             /* '\n' searched up to here for the line at pos */
    uint64_t base;           /* file offset of buf.data[0] (uncompressed for gzip) */
    uint64_t disk_off;       /* next byte to read from disk */
    uint64_t bytes_read;
    int eof;                 /* everything is in buf */
    int skip_first;
    int done;
    z_stream zs;
    int z_init;
    int z_member_done;
    kbuf zin;
    uint64_t records;
    uint64_t first_off;      /* offset of the split's first record */
    uint64_t base_lines;     /* lines before first_off, once counted */
    int base_known;
    size_t max_line;         /* longer lines are skipped (0: no limit) */
    uint64_t skipped;        /* lines skipped for their length */
    uint64_t skip_off;       /* offset of the first */
};

void
mr_reader_set_max_line(mr_reader *r, size_t max)
{
    r->max_line = max;
}

uint64_t
mr_reader_skipped(const mr_reader *r, uint64_t *first_offset)
{
    if (first_offset != NULL)
        *first_offset = r->skip_off;
    return r->skipped;
}

static void
mr_reader_note_skip(mr_reader *r, uint64_t at)
{
    if (r->skipped++ == 0)
        r->skip_off = at;
}

kiln_status
mr_reader_open(const mr_input_file *file, const mr_split *s, size_t chunk, mr_reader **out,
               kiln_err *err)
{
    return mr_reader_open_buf(file, s, chunk, NULL, out, err);
}

kiln_status
mr_reader_open_buf(const mr_input_file *file, const mr_split *s, size_t chunk, kbuf *buf,
                   mr_reader **out, kiln_err *err)
{
    *out = NULL;
    env_file *f;
    kiln_status st = env_open_read(file->path, &f, err);
    if (st != KILN_OK)
        return st;
    mr_reader *r = kiln_calloc(1, sizeof *r);
    r->f = f;
    r->path = env_file_path(f);
    r->gzip = file->gzip;
    r->size = env_file_size(f);
    r->chunk = chunk ? chunk : MR_READER_CHUNK;
    buf_init(&r->buf);
    if (buf != NULL) {
        r->buf = *buf;
        r->buf.len = 0;
        buf_init(buf);
    }
    buf_init(&r->zin);
    if (r->gzip) {
        r->start = 0;
        r->end = r->size;
        if (inflateInit2(&r->zs, 16 + MAX_WBITS) != Z_OK) {
            mr_reader_close(r);
            return status_set(err, KILN_NOMEM, "%s: gzip: cannot start inflate", file->path);
        }
        r->z_init = 1;
    } else {
        r->start = s->start;
        r->end = s->end < r->size ? s->end : r->size;
        r->disk_off = r->start;
        r->base = r->start;
        r->skip_first = r->start > 0;
    }
    *out = r;
    return KILN_OK;
}

void
mr_reader_close(mr_reader *r)
{
    mr_reader_close_buf(r, NULL);
}

void
mr_reader_close_buf(mr_reader *r, kbuf *buf)
{
    if (r == NULL)
        return;
    if (r->z_init)
        inflateEnd(&r->zs);
    env_close(r->f, NULL);
    if (buf != NULL) {
        buf_free(buf);
        *buf = r->buf;
        buf->len = 0;
    } else {
        buf_free(&r->buf);
    }
    buf_free(&r->zin);
    free(r);
}

/* Make room for at least `chunk` more bytes, moving the unconsumed tail of
 * the buffer to the front. */
static void
mr_reader_compact(mr_reader *r)
{
    if (r->pos > 0) {
        size_t keep = r->buf.len - r->pos;
        if (keep)
            memmove(r->buf.data, r->buf.data + r->pos, keep);
        r->buf.len = keep;
        r->base += r->pos;
        r->scan -= r->pos;
        r->pos = 0;
    }
    buf_reserve(&r->buf, r->chunk);
}

static int
mr_reader_fill_plain(mr_reader *r, kiln_err *err)
{
    uint64_t left = r->size - r->disk_off;
    if (left == 0) {
        r->eof = 1;
        return 0;
    }
    mr_reader_compact(r);
    size_t n = left < r->chunk ? (size_t)left : r->chunk;
    if (env_pread(r->f, r->disk_off, r->buf.data + r->buf.len, n, err) != KILN_OK)
        return -1;
    r->buf.len += n;
    r->disk_off += n;
    r->bytes_read += n;
    return 1;
}

static int
mr_reader_fill_gzip(mr_reader *r, kiln_err *err)
{
    mr_reader_compact(r);
    size_t produced = 0;
    while (produced == 0) {
        if (r->zs.avail_in == 0) {
            uint64_t left = r->size - r->disk_off;
            if (left == 0) {
                if (!r->z_member_done && r->size > 0) {
                    status_set(err, KILN_CORRUPTION, "%s: gzip stream truncated", r->path);
                    return -1;
                }
                r->eof = 1;
                return 0;
            }
            size_t n = left < r->chunk ? (size_t)left : r->chunk;
            buf_reset(&r->zin);
            buf_reserve(&r->zin, n);
            if (env_pread(r->f, r->disk_off, r->zin.data, n, err) != KILN_OK)
                return -1;
            r->disk_off += n;
            r->bytes_read += n;
            r->zs.next_in = r->zin.data;
            r->zs.avail_in = (uInt)n;
        }
        if (r->z_member_done) {
            /* More bytes after a complete member: the next member starts. */
            if (inflateReset(&r->zs) != Z_OK) {
                status_set(err, KILN_CORRUPTION, "%s: gzip: cannot restart inflate", r->path);
                return -1;
            }
            r->z_member_done = 0;
        }
        size_t room = r->buf.cap - r->buf.len;
        if (room > UINT32_MAX)
            room = UINT32_MAX;
        r->zs.next_out = r->buf.data + r->buf.len;
        r->zs.avail_out = (uInt)room;
        int z = inflate(&r->zs, Z_NO_FLUSH);
        size_t got = room - r->zs.avail_out;
        r->buf.len += got;
        produced += got;
        if (z == Z_STREAM_END) {
            r->z_member_done = 1;
        } else if (z != Z_OK && !(z == Z_BUF_ERROR && r->zs.avail_in == 0)) {
            status_set(err, KILN_CORRUPTION, "%s: gzip: %s at compressed offset %llu", r->path,
                       r->zs.msg ? r->zs.msg : "bad data",
                       (unsigned long long)(r->disk_off - r->zs.avail_in));
            return -1;
        }
    }
    return 1;
}

static int
mr_reader_fill(mr_reader *r, kiln_err *err)
{
    if (r->eof)
        return 0;
    return r->gzip ? mr_reader_fill_gzip(r, err) : mr_reader_fill_plain(r, err);
}

int
mr_reader_next(mr_reader *r, kslice *line, uint64_t *offset, kiln_err *err)
{
    if (r->done)
        return 0;
    while (r->skip_first) {
        /* The split's first line starts after the first '\n' at an offset
         * in [start, end): none there, and it has no line (a line that runs
         * past it, however long, is not read to its end). Only plain files
         * start past 0. */
        size_t lim = r->buf.len;
        if (r->base + lim > r->end)
            lim = r->end > r->base ? (size_t)(r->end - r->base) : 0;
        uint8_t *nl = lim > r->pos ? memchr(r->buf.data + r->pos, '\n', lim - r->pos) : NULL;
        if (nl != NULL) {
            r->pos = (size_t)(nl - r->buf.data) + 1;
            r->scan = r->pos;
            r->skip_first = 0;
            break;
        }
        if (r->base + lim >= r->end) {   /* searched up to the split's end */
            r->done = 1;
            return 0;
        }
        r->pos = r->buf.len;
        r->scan = r->pos;
        int f = mr_reader_fill(r, err);
        if (f < 0)
            return -1;
        if (f == 0) {
            r->done = 1;
            return 0;
        }
    }
    uint64_t at = r->base + r->pos;
    if (!r->gzip && (at > r->end || at >= r->size)) {
        r->done = 1;
        return 0;
    }
    if (r->scan < r->pos)
        r->scan = r->pos;
    for (;;) {
        uint8_t *nl = r->buf.len > r->scan
                          ? memchr(r->buf.data + r->scan, '\n', r->buf.len - r->scan)
                          : NULL;
        size_t stop, next;
        if (nl == NULL && r->max_line > 0 && r->buf.len - r->pos > r->max_line + 1) {
            /* Over the limit and still no end, even should the last byte be
             * a '\r' before it: drop what is buffered and read on to the
             * next '\n' without keeping it. */
            mr_reader_note_skip(r, r->base + r->pos);
            for (;;) {
                r->pos = r->scan = r->buf.len;
                int f = mr_reader_fill(r, err);
                if (f < 0)
                    return -1;
                if (f == 0) {
                    r->done = 1;
                    return 0;
                }
                nl = memchr(r->buf.data + r->pos, '\n', r->buf.len - r->pos);
                if (nl != NULL)
                    break;
            }
            r->pos = r->scan = (size_t)(nl - r->buf.data) + 1;
            return mr_reader_next(r, line, offset, err);
        }
        if (nl != NULL) {
            stop = (size_t)(nl - r->buf.data);
            next = stop + 1;
        } else {
            r->scan = r->buf.len;
            int f = mr_reader_fill(r, err);
            if (f < 0)
                return -1;
            if (f > 0)
                continue;
            if (r->pos == r->buf.len) {
                r->done = 1;
                return 0;
            }
            stop = next = r->buf.len;
        }
        size_t len = stop - r->pos;
        if (len > 0 && r->buf.data[stop - 1] == '\r')
            len--;
        if (r->max_line > 0 && len > r->max_line) {
            mr_reader_note_skip(r, r->base + r->pos);
            r->pos = r->scan = next;
            return mr_reader_next(r, line, offset, err);
        }
        *line = kslice_make(r->buf.data + r->pos, len);
        *offset = r->base + r->pos;
        if (r->records++ == 0)
            r->first_off = *offset;
        r->pos = next;
        r->scan = next;
        return 1;
    }
}

kiln_status
mr_reader_line_number(mr_reader *r, uint64_t *line, kiln_err *err)
{
    if (!r->base_known) {
        uint64_t lines = 0;
        if (!r->gzip && r->first_off > 0) {
            kbuf tmp = KBUF_INIT;
            buf_reserve(&tmp, MR_READER_CHUNK);
            for (uint64_t off = 0; off < r->first_off;) {
                uint64_t left = r->first_off - off;
                size_t n = left < MR_READER_CHUNK ? (size_t)left : MR_READER_CHUNK;
                kiln_status s = env_pread(r->f, off, tmp.data, n, err);
                if (s != KILN_OK) {
                    buf_free(&tmp);
                    return s;
                }
                for (const uint8_t *p = tmp.data, *e = tmp.data + n;
                     (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++)
                    lines++;
                off += n;
            }
            buf_free(&tmp);
        }
        r->base_lines = lines;
        r->base_known = 1;
    }
    *line = r->base_lines + r->records;
    return KILN_OK;
}

uint64_t
mr_reader_progress(const mr_reader *r)
{
    if (r->done)
        return r->end - r->start;
    if (r->gzip)
        return r->disk_off - r->zs.avail_in;
    uint64_t at = r->base + r->pos;
    if (at < r->start)
        return 0;
    return at > r->end ? r->end - r->start : at - r->start;
}

uint64_t
mr_reader_bytes_read(const mr_reader *r)
{
    return r->bytes_read;
}
