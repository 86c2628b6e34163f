/* compress.c -- NONE, GZ, SNAPPY, LZ4 and ZSTD blocks in HBase's framing. */
#include "storage/base/compress.h"

#include "storage/base/coding.h"

#include <lz4.h>
#include <pthread.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <strings.h>
#include <zlib.h>
#include <zstd.h>

static const char *const codec_names[CODEC_COUNT] = {
    "LZO", "GZ", "NONE", "SNAPPY", "LZ4", "BZIP2", "ZSTD", "LZMA", "BROTLI"};

const char *
compress_codec_name(kiln_codec codec)
{
    if ((unsigned)codec >= CODEC_COUNT)
        return "UNKNOWN";
    return codec_names[codec];
}

int
compress_codec_parse(const char *name, kiln_codec *out)
{
    if (strcasecmp(name, "gzip") == 0) {
        *out = CODEC_GZ;
        return 0;
    }
    for (int i = 0; i < CODEC_COUNT; i++) {
        if (strcasecmp(name, codec_names[i]) == 0) {
            *out = (kiln_codec)i;
            return 0;
        }
    }
    return -1;
}

int
compress_codec_readable(kiln_codec codec)
{
    return codec == CODEC_NONE || codec == CODEC_GZ || codec == CODEC_SNAPPY ||
           codec == CODEC_LZ4 || codec == CODEC_ZSTD;
}

int
compress_codec_writable(kiln_codec codec)
{
    return compress_codec_readable(codec);
}

/* ------------------------------------------------------------------ codec state */

/* Each thread keeps its zlib streams and zstd contexts from block to block:
 * setting one up costs more than compressing a small block (a zstd context
 * about 13 us, a deflate stream 256 KiB of tables), so a block only resets
 * them. They are freed when the thread exits. */
typedef struct codec_state {
    z_stream deflate, inflate;
    int deflate_ready, inflate_ready;
    gz_header gz;   /* deflate keeps a pointer to it until the stream ends */
    ZSTD_CCtx *zc;
    ZSTD_DCtx *zd;
} codec_state;

static pthread_key_t codec_key;
static pthread_once_t codec_once = PTHREAD_ONCE_INIT;
static int codec_key_made;

static void
codec_state_free(void *p)
{
    codec_state *c = p;
    if (c->deflate_ready)
        deflateEnd(&c->deflate);
    if (c->inflate_ready)
        inflateEnd(&c->inflate);
    ZSTD_freeCCtx(c->zc);
    ZSTD_freeDCtx(c->zd);
    free(c);
}

static void
codec_key_make(void)
{
    codec_key_made = pthread_key_create(&codec_key, codec_state_free) == 0;
}

/* This thread's codec state in *out, made on its first use. */
static kiln_status
codec_state_get(const char *codec, codec_state **out, kiln_err *err)
{
    pthread_once(&codec_once, codec_key_make);
    codec_state *c = codec_key_made ? pthread_getspecific(codec_key) : NULL;
    if (c == NULL && codec_key_made) {
        c = calloc(1, sizeof *c);
        if (c != NULL && pthread_setspecific(codec_key, c) != 0) {
            free(c);
            c = NULL;
        }
    }
    *out = c;
    return c != NULL ? KILN_OK
                     : status_set(err, KILN_NOMEM, "%s: no memory for the codec's state", codec);
}

/* ------------------------------------------------------------------ writing */

static kiln_status
gzip_compress(const uint8_t *in, size_t n, kbuf *out, kiln_err *err)
{
    codec_state *c;
    kiln_status st = codec_state_get("gz", &c, err);
    if (st != KILN_OK)
        return st;
    z_stream *zs = &c->deflate;
    if (!c->deflate_ready) {
        /* windowBits 15 + 16: a gzip wrapper, as java.util.zip.GZIPOutputStream writes. */
        if (deflateInit2(zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
            Z_OK)
            return status_set(err, KILN_NOMEM, "gz: deflateInit2 failed");
        c->deflate_ready = 1;
    } else if (deflateReset(zs) != Z_OK) {
        return status_set(err, KILN_INTERNAL, "gz: deflateReset failed");
    }
    memset(&c->gz, 0, sizeof c->gz);   /* Java writes OS 0 and mtime 0 */
    deflateSetHeader(zs, &c->gz);
    size_t bound = deflateBound(zs, n) + 32;
    buf_reserve(out, bound);
    zs->next_in = (Bytef *)in;
    zs->avail_in = (uInt)n;
    zs->next_out = out->data + out->len;
    zs->avail_out = (uInt)bound;
    int r = deflate(zs, Z_FINISH);
    if (r != Z_STREAM_END)
        return status_set(err, KILN_INTERNAL, "gz: deflate did not finish (%d)", r);
    out->len += zs->total_out;
    return KILN_OK;
}

static kiln_status
framed_compress(kiln_codec codec, const uint8_t *in, size_t n, kbuf *out, kiln_err *err)
{
    buf_append_be32(out, (uint32_t)n);
    size_t off = 0;
    while (off < n) {
        size_t chunk = n - off < COMPRESS_CHUNK_MAX ? n - off : COMPRESS_CHUNK_MAX;
        size_t bound;
        switch (codec) {
        case CODEC_SNAPPY: bound = snappy_max_compressed_length(chunk); break;
        case CODEC_LZ4:    bound = (size_t)LZ4_compressBound((int)chunk); break;
        default:           bound = ZSTD_compressBound(chunk); break;
        }
        size_t len_at = out->len;
        buf_reserve(out, 4 + bound);
        uint8_t *dst = out->data + len_at + 4;
        size_t clen = bound;
        if (codec == CODEC_SNAPPY) {
            if (snappy_compress((const char *)in + off, chunk, (char *)dst, &clen) != SNAPPY_OK)
                return status_set(err, KILN_INTERNAL, "snappy: compress failed");
        } else if (codec == CODEC_LZ4) {
            int c = LZ4_compress_default((const char *)in + off, (char *)dst, (int)chunk, (int)bound);
            if (c <= 0)
                return status_set(err, KILN_INTERNAL, "lz4: compress failed");
            clen = (size_t)c;
        } else {
            codec_state *c;
            kiln_status st = codec_state_get("zstd", &c, err);
            if (st != KILN_OK)
                return st;
            if (c->zc == NULL && (c->zc = ZSTD_createCCtx()) == NULL)
                return status_set(err, KILN_NOMEM, "zstd: no memory for a compression context");
            clen = ZSTD_compressCCtx(c->zc, dst, bound, in + off, chunk, 3);
            if (ZSTD_isError(clen))
                return status_set(err, KILN_INTERNAL, "zstd: %s", ZSTD_getErrorName(clen));
        }
        coding_put_be32(out->data + len_at, (uint32_t)clen);
        out->len = len_at + 4 + clen;
        off += chunk;
    }
    return KILN_OK;
}

kiln_status
compress_block(kiln_codec codec, const uint8_t *in, size_t n, kbuf *out, kiln_err *err)
{
    switch (codec) {
    case CODEC_NONE:
        buf_append(out, in, n);
        return KILN_OK;
    case CODEC_GZ:
        return gzip_compress(in, n, out, err);
    case CODEC_SNAPPY:
    case CODEC_LZ4:
    case CODEC_ZSTD:
        return framed_compress(codec, in, n, out, err);
    default:
        return status_set(err, KILN_UNSUPPORTED, "compression %s is not supported for writing",
                          compress_codec_name(codec));
    }
}

/* ------------------------------------------------------------------ reading */

static kiln_status
gzip_decompress(const uint8_t *in, size_t n, uint8_t *out, size_t raw_len, kiln_err *err)
{
    uint8_t dummy;
    if (raw_len == 0)
        out = &dummy; /* zlib wants a real pointer even for no output */
    codec_state *c;
    kiln_status st = codec_state_get("gz", &c, err);
    if (st != KILN_OK)
        return st;
    z_stream *zs = &c->inflate;
    if (!c->inflate_ready) {
        if (inflateInit2(zs, 15 + 16) != Z_OK)
            return status_set(err, KILN_NOMEM, "gz: inflateInit2 failed");
        c->inflate_ready = 1;
    } else if (inflateReset(zs) != Z_OK) {
        return status_set(err, KILN_INTERNAL, "gz: inflateReset failed");
    }
    zs->next_in = (Bytef *)in;
    zs->avail_in = (uInt)n;
    zs->next_out = out;
    zs->avail_out = (uInt)raw_len;
    int r = inflate(zs, Z_FINISH);
    size_t produced = zs->total_out;
    size_t consumed = zs->total_in;
    if (r != Z_STREAM_END)
        return status_set(err, KILN_CORRUPTION, "gz: bad stream after %zu input bytes (%s)",
                          consumed, r == Z_BUF_ERROR ? "longer than the block's size" : "inflate error");
    if (produced != raw_len)
        return status_set(err, KILN_CORRUPTION, "gz: produced %zu bytes, block says %zu",
                          produced, raw_len);
    return KILN_OK;
}

static kiln_status
framed_chunk(kiln_codec codec, const uint8_t *src, size_t clen, uint8_t *dst, size_t room,
             size_t *produced, size_t at, kiln_err *err)
{
    if (codec == CODEC_SNAPPY) {
        size_t ulen;
        if (snappy_uncompressed_length((const char *)src, clen, &ulen) != SNAPPY_OK || ulen > room)
            return status_set(err, KILN_CORRUPTION, "snappy: bad chunk header at payload offset %zu", at);
        if (snappy_uncompress((const char *)src, clen, (char *)dst, &ulen) != SNAPPY_OK)
            return status_set(err, KILN_CORRUPTION, "snappy: corrupt chunk at payload offset %zu", at);
        *produced = ulen;
    } else if (codec == CODEC_LZ4) {
        int r = LZ4_decompress_safe((const char *)src, (char *)dst, (int)clen, (int)room);
        if (r < 0)
            return status_set(err, KILN_CORRUPTION, "lz4: corrupt chunk at payload offset %zu", at);
        *produced = (size_t)r;
    } else {
        codec_state *c;
        kiln_status st = codec_state_get("zstd", &c, err);
        if (st != KILN_OK)
            return st;
        if (c->zd == NULL && (c->zd = ZSTD_createDCtx()) == NULL)
            return status_set(err, KILN_NOMEM, "zstd: no memory for a decompression context");
        size_t r = ZSTD_decompressDCtx(c->zd, dst, room, src, clen);
        if (ZSTD_isError(r))
            return status_set(err, KILN_CORRUPTION, "zstd: %s at payload offset %zu",
                              ZSTD_getErrorName(r), at);
        *produced = r;
    }
    return KILN_OK;
}

static kiln_status
framed_decompress(kiln_codec codec, const uint8_t *in, size_t n, uint8_t *out, size_t raw_len,
                  kiln_err *err)
{
    const char *name = compress_codec_name(codec);
    size_t ip = 0, op = 0;
    while (op < raw_len) {
        if (n - ip < 4)
            return status_set(err, KILN_CORRUPTION, "%s: truncated segment header at payload offset %zu",
                              name, ip);
        size_t seg_raw = coding_get_be32(in + ip);
        ip += 4;
        if (seg_raw > raw_len - op)
            return status_set(err, KILN_CORRUPTION,
                              "%s: segment of %zu bytes at payload offset %zu exceeds the block's size",
                              name, seg_raw, ip - 4);
        size_t seg_done = 0;
        while (seg_done < seg_raw) {
            if (n - ip < 4)
                return status_set(err, KILN_CORRUPTION,
                                  "%s: truncated chunk header at payload offset %zu", name, ip);
            size_t clen = coding_get_be32(in + ip);
            ip += 4;
            if (clen > n - ip)
                return status_set(err, KILN_CORRUPTION,
                                  "%s: chunk of %zu bytes at payload offset %zu overruns the block",
                                  name, clen, ip - 4);
            size_t produced = 0;
            kiln_status s = framed_chunk(codec, in + ip, clen, out + op + seg_done,
                                         seg_raw - seg_done, &produced, ip, err);
            if (s != KILN_OK)
                return s;
            if (produced == 0)
                return status_set(err, KILN_CORRUPTION, "%s: empty chunk at payload offset %zu",
                                  name, ip);
            ip += clen;
            seg_done += produced;
        }
        op += seg_raw;
        if (seg_raw == 0 && op < raw_len)
            return status_set(err, KILN_CORRUPTION, "%s: empty segment at payload offset %zu",
                              name, ip - 4);
    }
    /* An empty block is written as one segment header of rawLen 0. */
    while (n - ip >= 4 && coding_get_be32(in + ip) == 0)
        ip += 4;
    if (ip != n)
        return status_set(err, KILN_CORRUPTION, "%s: %zu trailing bytes after the last segment",
                          name, n - ip);
    return KILN_OK;
}

kiln_status
decompress_block(kiln_codec codec, const uint8_t *in, size_t n, uint8_t *out, size_t raw_len,
                 kiln_err *err)
{
    switch (codec) {
    case CODEC_NONE:
        if (n != raw_len)
            return status_set(err, KILN_CORRUPTION,
                              "uncompressed payload has %zu bytes, header says %zu", n, raw_len);
        if (n)
            memcpy(out, in, n);
        return KILN_OK;
    case CODEC_GZ:
        return gzip_decompress(in, n, out, raw_len, err);
    case CODEC_SNAPPY:
    case CODEC_LZ4:
    case CODEC_ZSTD:
        return framed_decompress(codec, in, n, out, raw_len, err);
    default:
        return status_set(err, KILN_UNSUPPORTED, "compression %s is not supported",
                          compress_codec_name(codec));
    }
}

uint64_t
decompress_bound(kiln_codec codec, size_t n)
{
    uint64_t m = (uint64_t)n;
    switch (codec) {
    case CODEC_NONE:
        return m;
    case CODEC_SNAPPY:
        /* a 3-byte copy tag yields at most 64 bytes */
        return m * 22 + 64;
    case CODEC_LZ4:
        /* each extra length byte adds at most 255 bytes of match */
        return m * 256 + 64;
    case CODEC_GZ:
        /* deflate's limit is 258 bytes per 2 bits of code */
        return m * 1032 + 1024;
    case CODEC_ZSTD:
        /* an RLE block: a 3-byte header and one byte make up to 128 KiB */
        return m * 32768 + 131072;
    default:
        return UINT64_MAX;
    }
}
