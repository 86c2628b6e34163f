/* hfile_format.h -- HFile v3 building blocks shared by the writer and the reader:
 * block header, per-chunk checksums, index entries, FileInfo and the trailer.
 * The long form of the format is docs/storage-format.md.
 *
 * Block header (33 bytes, all integers big-endian):
 *
 *   OFFSET | SIZE | FIELD
 *   0      | 8    | magic ("DATABLK*", "IDXROOT2", ...)
 *   8      | 4    | onDiskSizeWithoutHeader: payload on disk + checksum bytes
 *   12     | 4    | uncompressedSizeWithoutHeader: payload after decompression
 *   16     | 8    | prevBlockOffset: previous block of the same type, -1 if none
 *   24     | 1    | checksumType (2 = CRC32C)
 *   25     | 4    | bytesPerChecksum (16384)
 *   29     | 4    | onDiskDataSizeWithHeader: 33 + payload on disk
 *
 * then the (compressed) payload, then one big-endian CRC32C per
 * bytesPerChecksum chunk of header+payload.
 *
 * Trailer: the last 4096 bytes: "TRABLK\"$", a varint-delimited
 * FileTrailerProto, zero padding, and the int 0x03000003 (minor 3, major 3).
 *
 * Encoders append to a kbuf; decoders validate every length against the input
 * and return KILN_CORRUPTION with a message naming what is wrong (callers
 * prefix file and offset). All functions are pure and thread-safe.
 */
#ifndef KILN_HFILE_FORMAT_H
#define KILN_HFILE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"

#define HFILE_BLOCK_HEADER_SIZE 33
#define HFILE_TRAILER_SIZE 4096
#define HFILE_MAJOR_VERSION 3
#define HFILE_MINOR_VERSION 3
#define HFILE_BYTES_PER_CHECKSUM 16384
#define HFILE_CHECKSUM_NULL 0
#define HFILE_CHECKSUM_CRC32 1
#define HFILE_CHECKSUM_CRC32C 2
#define HFILE_COMPARATOR_KV "org.apache.hadoop.hbase.KeyValue$KVComparator"
#define HFILE_INDEX_BLOCK_MAX 131072   /* hfile.index.block.max.size */
#define HFILE_INDEX_MIN_ENTRIES 16     /* hfile.index.block.min.entries */
#define HFILE_MID_KEY_METADATA_SIZE 16

typedef enum hfile_block_type {
    HFILE_BLOCK_DATA = 0,           /* DATABLK* */
    HFILE_BLOCK_ENCODED_DATA,       /* DATABLKE */
    HFILE_BLOCK_LEAF_INDEX,         /* IDXLEAF2 */
    HFILE_BLOCK_BLOOM_CHUNK,        /* BLMFBLK2 */
    HFILE_BLOCK_META,               /* METABLKc */
    HFILE_BLOCK_INTERMEDIATE_INDEX, /* IDXINTE2 */
    HFILE_BLOCK_ROOT_INDEX,         /* IDXROOT2 */
    HFILE_BLOCK_FILE_INFO,          /* FILEINF2 */
    HFILE_BLOCK_GENERAL_BLOOM_META, /* BLMFMET2 */
    HFILE_BLOCK_DELETE_FAMILY_BLOOM_META, /* DFBLMET2 */
    HFILE_BLOCK_TRAILER,            /* TRABLK"$ */
    HFILE_BLOCK_INDEX_V1,           /* IDXBLK)+ */
    HFILE_BLOCK_TYPE_COUNT
} hfile_block_type;

/* The 8 magic bytes of a block type (not NUL-terminated). */
const uint8_t *hfile_block_magic(hfile_block_type t);
/* Printable name of a type: the magic as a string ("DATABLK*"). */
const char *hfile_block_type_name(hfile_block_type t);
/* Type for 8 magic bytes, or -1 if unknown. */
int hfile_block_type_from_magic(const uint8_t *magic);

typedef struct hfile_block_header {
    hfile_block_type type;
    uint32_t on_disk_size_without_header;
    uint32_t uncompressed_size_without_header;
    int64_t prev_block_offset;
    uint8_t checksum_type;
    uint32_t bytes_per_checksum;
    uint32_t on_disk_data_size_with_header;
} hfile_block_header;

/* Write the 33-byte header. */
void hfile_block_header_encode(const hfile_block_header *h, uint8_t *out);
/* Parse and sanity-check a header: known magic, checksum type 0..2,
 * bytesPerChecksum >= 33 (when checksummed), onDiskDataSizeWithHeader >= 33,
 * and the checksum area size consistent with the data size. */
kiln_status hfile_block_header_decode(const uint8_t *in, hfile_block_header *h, kiln_err *err);

/* Bytes of checksums for data_size_with_header bytes: 4 * ceil(n / bpc). */
size_t hfile_checksum_size(size_t data_size_with_header, uint32_t bytes_per_checksum);
/* Compute CRC32C sums of data[0..n) per bpc chunk into out (big-endian). */
void hfile_checksum_compute(const uint8_t *data, size_t n, uint32_t bytes_per_checksum,
                            uint8_t *out);
/* Verify sums (type CRC32C or CRC32; NULL always passes). Returns -1 if all
 * match, else the index of the first bad chunk. */
long hfile_checksum_verify(uint8_t checksum_type, const uint8_t *data, size_t n,
                           uint32_t bytes_per_checksum, const uint8_t *sums);

/* ------------------------------------------------------------------ index */

typedef struct hfile_index_entry {
    uint64_t offset;
    uint32_t on_disk_size;   /* of the referenced block, header and checksums included */
    kslice key;              /* borrowed from the decoded payload */
} hfile_index_entry;

/* Root-format entry: i64 offset, i32 size, vint key length, key. */
void hfile_root_entry_append(kbuf *out, uint64_t offset, uint32_t size, const uint8_t *key,
                             size_t klen);
/* Size of a root-format entry. */
size_t hfile_root_entry_size(size_t klen);
/* Parse `count` root-format entries from p[0..n); *consumed gets the bytes used
 * (the rest may be mid-key metadata). entries must have room for count. */
kiln_status hfile_root_index_decode(const uint8_t *p, size_t n, uint32_t count,
                                    hfile_index_entry *entries, size_t *consumed, kiln_err *err);

/* Non-root format (IDXLEAF2, IDXINTE2): i32 count, i32 secondary[count+1]
 * (entry offsets relative to the end of that array), entries of
 * i64 offset, i32 size, key (length implied). */
void hfile_nonroot_index_encode(kbuf *out, const hfile_index_entry *entries, uint32_t count);
/* Validate a non-root block payload; *count gets the entry count. */
kiln_status hfile_nonroot_index_check(const uint8_t *p, size_t n, uint32_t *count, kiln_err *err);
/* Entry i of a validated non-root payload. */
void hfile_nonroot_index_entry(const uint8_t *p, uint32_t i, hfile_index_entry *e);

/* ------------------------------------------------------------------ FileInfo */

typedef struct hfile_fileinfo_entry {
    kslice key;     /* owned by the fileinfo */
    kslice value;
} hfile_fileinfo_entry;

/* An ordered (ascending unsigned key bytes) map of FileInfo entries. Owns copies. */
typedef struct hfile_fileinfo {
    hfile_fileinfo_entry *entries;
    size_t count, cap;
} hfile_fileinfo;

void hfile_fileinfo_init(hfile_fileinfo *fi);
void hfile_fileinfo_free(hfile_fileinfo *fi);
/* Insert or replace. */
void hfile_fileinfo_set(hfile_fileinfo *fi, const char *key, const void *value, size_t vlen);
void hfile_fileinfo_set_i32(hfile_fileinfo *fi, const char *key, int32_t v);
void hfile_fileinfo_set_i64(hfile_fileinfo *fi, const char *key, int64_t v);
void hfile_fileinfo_set_bool(hfile_fileinfo *fi, const char *key, int v);
/* 1 and *value if present, else 0. value borrows from fi. */
int hfile_fileinfo_get(const hfile_fileinfo *fi, const char *key, kslice *value);
/* Typed getters: 1 if present with the right size, else 0. */
int hfile_fileinfo_get_i32(const hfile_fileinfo *fi, const char *key, int32_t *v);
int hfile_fileinfo_get_i64(const hfile_fileinfo *fi, const char *key, int64_t *v);

/* Insert or replace with arbitrary key bytes (used by the decoder). */
void hfile_fileinfo_set_raw(hfile_fileinfo *fi, kslice key, kslice value);

/* Payload of a FILEINF2 block: "PBUF", varint length, FileInfoProto. */
void hfile_fileinfo_encode(const hfile_fileinfo *fi, kbuf *out);
/* Parse a FILEINF2 payload (PBUF form, or the legacy Writable form). */
kiln_status hfile_fileinfo_decode(const uint8_t *p, size_t n, hfile_fileinfo *fi, kiln_err *err);

/* ------------------------------------------------------------------ trailer */

typedef struct hfile_trailer {
    uint64_t file_info_offset;              /* 1 */
    uint64_t load_on_open_data_offset;      /* 2 */
    uint64_t uncompressed_data_index_size;  /* 3 */
    uint64_t total_uncompressed_bytes;      /* 4 */
    uint32_t data_index_count;              /* 5 */
    uint32_t meta_index_count;              /* 6 */
    uint64_t entry_count;                   /* 7 */
    uint32_t num_data_index_levels;         /* 8 */
    uint64_t first_data_block_offset;       /* 9  (UINT64_MAX, i.e. -1, when empty) */
    uint64_t last_data_block_offset;        /* 10 */
    char comparator_class_name[256];        /* 11 */
    uint32_t compression_codec;             /* 12: kiln_codec ordinal */
    int encrypted;                          /* 13 present */
    uint32_t major_version;
    uint32_t minor_version;
} hfile_trailer;

/* Fill the 4096-byte trailer (major 3, minor 3). */
void hfile_trailer_encode(const hfile_trailer *t, uint8_t *out);
/* Parse the last min(4096, file size) bytes of a file. Accepts major 3, and
 * major 2 with minor >= 3. KILN_CORRUPTION for a bad magic, protobuf or padding. */
kiln_status hfile_trailer_decode(const uint8_t *in, size_t n, hfile_trailer *t, kiln_err *err);

/* FileInfo keys (exact bytes). */
#define HFILE_FI_LASTKEY "hfile.LASTKEY"
#define HFILE_FI_AVG_KEY_LEN "hfile.AVG_KEY_LEN"
#define HFILE_FI_AVG_VALUE_LEN "hfile.AVG_VALUE_LEN"
#define HFILE_FI_CREATE_TIME "hfile.CREATE_TIME_TS"
#define HFILE_FI_MAX_TAGS_LEN "hfile.MAX_TAGS_LEN"
#define HFILE_FI_TAGS_COMPRESSED "hfile.TAGS_COMPRESSED"
#define HFILE_FI_KEY_OF_BIGGEST_CELL "hfile.KEY_OF_BIGGEST_CELL"
#define HFILE_FI_LEN_OF_BIGGEST_CELL "hfile.LEN_OF_BIGGEST_CELL"
#define HFILE_FI_DATA_BLOCK_ENCODING "DATA_BLOCK_ENCODING"
#define HFILE_FI_KEY_VALUE_VERSION "KEY_VALUE_VERSION"
#define HFILE_FI_MAX_MEMSTORE_TS "MAX_MEMSTORE_TS_KEY"
#define HFILE_FI_BLOOM_FILTER_TYPE "BLOOM_FILTER_TYPE"
#define HFILE_FI_LAST_BLOOM_KEY "LAST_BLOOM_KEY"
#define HFILE_FI_DELETE_FAMILY_COUNT "DELETE_FAMILY_COUNT"
#define HFILE_FI_TIMERANGE "TIMERANGE"
#define HFILE_FI_EARLIEST_PUT_TS "EARLIEST_PUT_TS"
#define HFILE_FI_MAX_SEQ_ID "MAX_SEQ_ID_KEY"
#define HFILE_FI_MAJOR_COMPACTION "MAJOR_COMPACTION_KEY"
#define HFILE_FI_EXCLUDE_FROM_MINOR "EXCLUDE_FROM_MINOR_COMPACTION"
#define HFILE_FI_BULKLOAD_TIMESTAMP "BULKLOAD_TIMESTAMP"
#define HFILE_FI_BULKLOAD_SOURCE_TASK "BULKLOAD_SOURCE_TASK"

/* Data block encodings (id stored as the u16 prefix of DATABLKE payloads). */
typedef enum hfile_encoding {
    HFILE_ENCODING_NONE = 0,
    HFILE_ENCODING_PREFIX = 2,
    HFILE_ENCODING_DIFF = 3,
    HFILE_ENCODING_FAST_DIFF = 4,
    HFILE_ENCODING_ROW_INDEX_V1 = 7
} hfile_encoding;

/* "NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1"; parse returns 0 or -1. */
const char *hfile_encoding_name(hfile_encoding e);
int hfile_encoding_parse(const char *name, size_t n, hfile_encoding *out);

#endif
