/* compress.h -- block codecs in the framing HBase uses inside HFile blocks.
 *
 * SNAPPY, LZ4 and ZSTD go through Hadoop's BlockCompressorStream framing:
 *
 *   SIZE | FIELD
 *   4    | rawLen: uncompressed bytes in this segment (big-endian)
 *   then, until rawLen bytes are produced:
 *   4    | compLen (big-endian)
 *   N    | one codec block (raw snappy block, raw LZ4 block, one zstd frame)
 *
 * and segments repeat until the block's uncompressed size is reached. GZ is a
 * single RFC 1952 gzip member with no framing. NONE is the raw payload.
 *
 * Codec numbers are HBase's Compression.Algorithm ordinals, as stored in the
 * trailer. Stateless and thread-safe.
 */
#ifndef KILN_COMPRESS_H
#define KILN_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"

typedef enum kiln_codec {
    CODEC_LZO = 0,
    CODEC_GZ = 1,
    CODEC_NONE = 2,
    CODEC_SNAPPY = 3,
    CODEC_LZ4 = 4,
    CODEC_BZIP2 = 5,
    CODEC_ZSTD = 6,
    CODEC_LZMA = 7,
    CODEC_BROTLI = 8
} kiln_codec;

#define CODEC_COUNT 9

/* Largest input one BlockCompressorStream chunk holds with Hadoop's default
 * 256 KiB buffer (bufferSize - (bufferSize / 6 + 32)). */
#define COMPRESS_CHUNK_MAX 218422

/* Append the framed compressed form of in[0..n) to out.
 * KILN_UNSUPPORTED for codecs Kiln cannot write (LZO, BZIP2, LZMA, BROTLI). */
kiln_status compress_block(kiln_codec codec, const uint8_t *in, size_t n, kbuf *out,
                           kiln_err *err);

/* Decode in[0..n) into exactly raw_len bytes at out. Any framing error, codec
 * error or size mismatch is KILN_CORRUPTION; the message says what and where
 * within the payload (the caller adds the file and block offset). */
kiln_status decompress_block(kiln_codec codec, const uint8_t *in, size_t n, uint8_t *out,
                             size_t raw_len, kiln_err *err);

/* The most bytes n stored bytes of this codec can decode to (the format's
 * largest expansion, framing included), so that a declared size can be
 * refused before it is allocated. UINT64_MAX for codecs Kiln cannot read. */
uint64_t decompress_bound(kiln_codec codec, size_t n);
/* HBase's name: "NONE", "GZ", "SNAPPY", "LZ4", "ZSTD", "LZO", ... or "UNKNOWN". */
const char *compress_codec_name(kiln_codec codec);
/* Parse a codec name, case-insensitive ("gzip" is GZ). 0 on success, -1 if unknown. */
int compress_codec_parse(const char *name, kiln_codec *out);
/* 1 if Kiln can read (decompress) blocks of this codec. */
int compress_codec_readable(kiln_codec codec);
/* 1 if Kiln can write blocks of this codec. */
int compress_codec_writable(kiln_codec codec);

#endif
