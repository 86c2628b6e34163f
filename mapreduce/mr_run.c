/* mr_run.c -- sorted run files: block writer and extent-stream iterator.
 *
 * The writer packs records into a raw block buffer, compresses it when the
 * block is full or the partition changes (keeping the raw bytes when snappy
 * does not shrink them), and appends header and payload through env. The
 * iterator reads one block at a time (two preads: header, payload), checks its
 * CRC, decodes it and walks its records; memory is one stored and one raw
 * block whatever the run's size.
 */
#include "mapreduce/mr_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/base/coding.h"
#include "storage/base/crc32c.h"

/* A block larger than this is not one we wrote: a record is limited to what
 * one varint-sized key and value can hold in memory, far below it. */
#define MR_RUN_BLOCK_MAX ((uint64_t)1 << 31)

void
mr_run_free(mr_run *r)
{
    if (r == NULL)
        return;
    free(r->path);
    free(r->sec);
    free(r);
}

void
mr_run_remove(mr_run *r)
{
    if (r == NULL)
        return;
    unlink(r->path);
    mr_run_free(r);
}

void
mr_run_dir_path(mr_run_dir *d, const char *what, kbuf *out)
{
    char name[64];
    snprintf(name, sizeof name, "/%s-%06u.run", what, d->seq++);
    buf_reset(out);
    buf_append(out, d->path, strlen(d->path));
    buf_append(out, name, strlen(name));
    buf_append_u8(out, '\0');
}

void
mr_run_options_init(mr_run_options *o)
{
    o->codec = CODEC_SNAPPY;
    o->block_size = MR_RUN_BLOCK_DEFAULT;
}

struct mr_run_writer {
    env_file *f;
    mr_run *run;
    mr_run_options opt;
    kbuf raw;
    kbuf stored;
    uint32_t cur_part;
    uint32_t block_records;
    kiln_status sticky;
};

kiln_status
mr_run_writer_open(const char *path, uint32_t partitions, const mr_run_options *o,
                   mr_run_writer **out, kiln_err *err)
{
    *out = NULL;
    mr_run_options opt;
    if (o != NULL)
        opt = *o;
    else
        mr_run_options_init(&opt);
    if (opt.codec != CODEC_NONE && opt.codec != CODEC_SNAPPY)
        return status_set(err, KILN_INVALID, "%s: run codec must be none or snappy, not %s", path,
                          compress_codec_name(opt.codec));
    if (opt.block_size == 0)
        opt.block_size = MR_RUN_BLOCK_DEFAULT;
    if (partitions == 0)
        return status_set(err, KILN_INVALID, "%s: a run needs at least one partition", path);
    env_file *f;
    kiln_status s = env_create(path, 1, &f, err);
    if (s != KILN_OK)
        return s;
    mr_run_writer *w = kiln_calloc(1, sizeof *w);
    w->f = f;
    w->opt = opt;
    w->run = kiln_calloc(1, sizeof *w->run);
    w->run->path = (char *)kiln_memdup(path, strlen(path) + 1);
    w->run->partitions = partitions;
    w->run->sec = kiln_calloc(partitions, sizeof *w->run->sec);
    buf_init(&w->raw);
    buf_init(&w->stored);
    buf_reserve(&w->raw, opt.block_size + 64);
    *out = w;
    return KILN_OK;
}

static kiln_status
mr_run_writer_flush(mr_run_writer *w, kiln_err *err)
{
    if (w->raw.len == 0)
        return KILN_OK;
    const uint8_t *payload = w->raw.data;
    size_t plen = w->raw.len;
    uint8_t codec = CODEC_NONE;
    if (w->opt.codec == CODEC_SNAPPY) {
        buf_reset(&w->stored);
        kiln_status s = compress_block(CODEC_SNAPPY, w->raw.data, w->raw.len, &w->stored, err);
        if (s != KILN_OK)
            return s;
        if (w->stored.len < w->raw.len) {
            payload = w->stored.data;
            plen = w->stored.len;
            codec = CODEC_SNAPPY;
        }
    }
    uint8_t h[MR_RUN_BLOCK_HEADER];
    coding_put_be32(h, (uint32_t)plen);
    coding_put_be32(h + 4, (uint32_t)w->raw.len);
    coding_put_be32(h + 8, w->block_records);
    h[12] = codec;
    h[13] = h[14] = h[15] = 0;
    coding_put_be32(h + 16, crc32c_value(payload, plen));
    mr_run_section *sec = &w->run->sec[w->cur_part];
    if (sec->len == 0)
        sec->off = env_file_size(w->f);
    kiln_status s = env_append(w->f, h, sizeof h, err);
    if (s == KILN_OK)
        s = env_append(w->f, payload, plen, err);
    if (s != KILN_OK)
        return s;
    sec->len += sizeof h + plen;
    sec->records += w->block_records;
    w->run->records += w->block_records;
    w->block_records = 0;
    buf_reset(&w->raw);
    return KILN_OK;
}

kiln_status
mr_run_writer_add(mr_run_writer *w, uint32_t part, kslice key, kslice value, kiln_err *err)
{
    if (w->sticky != KILN_OK)
        return w->sticky;
    if (part >= w->run->partitions || part < w->cur_part)
        return w->sticky = status_set(err, KILN_INVALID,
                                      "%s: record for partition %u after partition %u of %u",
                                      w->run->path, part, w->cur_part, w->run->partitions);
    if (key.n > UINT32_MAX || value.n > UINT32_MAX)
        return w->sticky = status_set(err, KILN_INVALID, "%s: record of %zu + %zu bytes too large",
                                      w->run->path, key.n, value.n);
    if (part != w->cur_part || w->block_records == UINT32_MAX) {
        kiln_status s = mr_run_writer_flush(w, err);
        if (s != KILN_OK)
            return w->sticky = s;
        w->cur_part = part;
    }
    buf_reserve(&w->raw, 2 * CODING_VARINT_MAX + key.n + value.n);
    uint8_t *p = w->raw.data + w->raw.len;
    p += coding_put_varint(p, key.n);
    p += coding_put_varint(p, value.n);
    if (key.n)
        memcpy(p, key.p, key.n);
    p += key.n;
    if (value.n)
        memcpy(p, value.p, value.n);
    p += value.n;
    w->raw.len = (size_t)(p - w->raw.data);
    w->block_records++;
    if (w->raw.len >= w->opt.block_size) {
        kiln_status s = mr_run_writer_flush(w, err);
        if (s != KILN_OK)
            return w->sticky = s;
    }
    return KILN_OK;
}

uint64_t
mr_run_writer_bytes(const mr_run_writer *w)
{
    return env_file_size(w->f);
}

static void
mr_run_writer_release(mr_run_writer *w)
{
    buf_free(&w->raw);
    buf_free(&w->stored);
    free(w);
}

kiln_status
mr_run_writer_finish(mr_run_writer *w, mr_run **out, kiln_err *err)
{
    *out = NULL;
    kiln_status s = w->sticky;
    if (s == KILN_OK)
        s = mr_run_writer_flush(w, err);
    w->run->bytes = env_file_size(w->f);
    kiln_status c = env_close(w->f, err);
    if (s == KILN_OK)
        s = c;
    if (s != KILN_OK) {
        mr_run_remove(w->run);
        mr_run_writer_release(w);
        return s;
    }
    *out = w->run;
    mr_run_writer_release(w);
    return KILN_OK;
}

void
mr_run_writer_abandon(mr_run_writer *w)
{
    if (w == NULL)
        return;
    env_close(w->f, NULL);
    mr_run_remove(w->run);
    mr_run_writer_release(w);
}

/* ------------------------------------------------------------------ reading */

struct mr_run_iter {
    env_file *f;
    mr_extent *ext;
    size_t n_ext;
    uint64_t ext_pos;        /* bytes of ext[cur] already consumed */
    size_t cur;
    uint64_t bytes_read;
    kbuf stored;
    kbuf raw;
    const uint8_t *rec;      /* next record in raw */
    const uint8_t *end;
    uint32_t left;           /* records left in the current block */
    uint64_t block_off;      /* file offset of the current block header */
    int failed;
};

mr_run_iter *
mr_run_iter_new(env_file *f, const mr_extent *ext, size_t n)
{
    mr_run_iter *it = kiln_calloc(1, sizeof *it);
    it->f = f;
    it->ext = kiln_malloc((n ? n : 1) * sizeof *ext);
    for (size_t i = 0; i < n; i++)
        if (ext[i].len > 0)
            it->ext[it->n_ext++] = ext[i];
    buf_init(&it->stored);
    buf_init(&it->raw);
    return it;
}

void
mr_run_iter_free(mr_run_iter *it)
{
    if (it == NULL)
        return;
    buf_free(&it->stored);
    buf_free(&it->raw);
    free(it->ext);
    free(it);
}

/* Read n bytes of the logical stream. Returns 1, 0 at a clean end (no byte
 * left at all), -1 on error (truncation included). */
static int
mr_run_iter_read(mr_run_iter *it, uint8_t *dst, size_t n, int allow_end, kiln_err *err)
{
    if (allow_end && it->cur >= it->n_ext)
        return 0;
    while (n > 0) {
        if (it->cur >= it->n_ext) {
            status_set(err, KILN_CORRUPTION, "%s: run block at offset %llu truncated",
                       env_file_path(it->f), (unsigned long long)it->block_off);
            return -1;
        }
        mr_extent *e = &it->ext[it->cur];
        uint64_t avail = e->len - it->ext_pos;
        size_t take = avail < n ? (size_t)avail : n;
        if (env_pread(it->f, e->off + it->ext_pos, dst, take, err) != KILN_OK)
            return -1;
        it->bytes_read += take;
        dst += take;
        n -= take;
        it->ext_pos += take;
        if (it->ext_pos == e->len) {
            it->cur++;
            it->ext_pos = 0;
        }
    }
    return 1;
}

static int
mr_run_iter_load(mr_run_iter *it, kiln_err *err)
{
    const char *path = env_file_path(it->f);
    if (it->cur < it->n_ext)
        it->block_off = it->ext[it->cur].off + it->ext_pos;
    uint8_t h[MR_RUN_BLOCK_HEADER];
    int r = mr_run_iter_read(it, h, sizeof h, 1, err);
    if (r <= 0)
        return r;
    uint32_t slen = coding_get_be32(h);
    uint32_t rlen = coding_get_be32(h + 4);
    uint32_t count = coding_get_be32(h + 8);
    uint8_t codec = h[12];
    uint32_t crc = coding_get_be32(h + 16);
    if (count == 0 || rlen == 0 || (uint64_t)rlen >= MR_RUN_BLOCK_MAX ||
        (codec != CODEC_NONE && codec != CODEC_SNAPPY) || (codec == CODEC_NONE && slen != rlen) ||
        h[13] != 0 || h[14] != 0 || h[15] != 0) {
        status_set(err, KILN_CORRUPTION, "%s: bad run block header at offset %llu", path,
                   (unsigned long long)it->block_off);
        return -1;
    }
    buf_reset(&it->stored);
    buf_reserve(&it->stored, slen);
    if (mr_run_iter_read(it, it->stored.data, slen, 0, err) < 0)
        return -1;
    it->stored.len = slen;
    if (crc32c_value(it->stored.data, slen) != crc) {
        status_set(err, KILN_CORRUPTION, "%s: run block checksum mismatch at offset %llu", path,
                   (unsigned long long)it->block_off);
        return -1;
    }
    if (codec == CODEC_NONE) {
        kbuf t = it->raw;
        it->raw = it->stored;
        it->stored = t;
    } else {
        buf_reset(&it->raw);
        buf_reserve(&it->raw, rlen);
        kiln_err derr;
        status_clear(&derr);
        if (decompress_block(CODEC_SNAPPY, it->stored.data, slen, it->raw.data, rlen, &derr) !=
            KILN_OK) {
            status_set(err, KILN_CORRUPTION, "%s: run block at offset %llu: %s", path,
                       (unsigned long long)it->block_off, derr.msg);
            return -1;
        }
        it->raw.len = rlen;
    }
    it->rec = it->raw.data;
    it->end = it->raw.data + it->raw.len;
    it->left = count;
    return 1;
}

int
mr_run_iter_next(mr_run_iter *it, kslice *key, kslice *value, kiln_err *err)
{
    if (it->failed)
        return -1;
    if (it->left == 0) {
        if (it->rec != it->end) {
            status_set(err, KILN_CORRUPTION, "%s: run block at offset %llu has trailing bytes",
                       env_file_path(it->f), (unsigned long long)it->block_off);
            it->failed = 1;
            return -1;
        }
        int r = mr_run_iter_load(it, err);
        if (r <= 0) {
            it->failed = r < 0;
            return r;
        }
    }
    uint64_t kl, vl;
    size_t a = coding_get_varint(it->rec, it->end, &kl);
    size_t b = a ? coding_get_varint(it->rec + a, it->end, &vl) : 0;
    if (a == 0 || b == 0 || kl > (uint64_t)(it->end - it->rec - a - b) ||
        vl > (uint64_t)(it->end - it->rec - a - b) - kl) {
        status_set(err, KILN_CORRUPTION, "%s: run block at offset %llu: record overruns the block",
                   env_file_path(it->f), (unsigned long long)it->block_off);
        it->failed = 1;
        return -1;
    }
    const uint8_t *p = it->rec + a + b;
    *key = kslice_make(p, (size_t)kl);
    *value = kslice_make(p + kl, (size_t)vl);
    it->rec = p + kl + vl;
    it->left--;
    return 1;
}

uint64_t
mr_run_iter_bytes_read(const mr_run_iter *it)
{
    return it->bytes_read;
}
