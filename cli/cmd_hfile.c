/* cmd_hfile.c -- `kiln hfile dump|meta|check|write`, Kiln's counterpart of
 * HBase's `hbase hfile` (HFilePrettyPrinter).
 *
 * dump prints one cell a line, ROW<TAB>FAMILY:QUALIFIER<TAB>TS<TAB>TYPE<TAB>VALUE,
 * in HBase's printable form (Bytes.toStringBinary); write reads the same form
 * back in any order, sorts it and writes a conformant HFile, so that
 * `dump X | write Y` reproduces X's cells. meta prints the trailer, FileInfo
 * decoded by key, block counts from a walk over every block header, and the
 * bloom summary; check runs the reader's full verification on each file.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "cli/cli.h"
#include "storage/base/block_cache.h"
#include "storage/hfile/bloom.h"
#include "storage/hfile/cell.h"
#include "storage/base/coding.h"
#include "storage/base/compress.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_format.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/hfile/hfile_writer.h"

#define CMD_HFILE_CTX "hfile"
/* Block cache for dump/meta/check: index and bloom blocks stay hot, data
 * blocks pass through. */
#define CMD_HFILE_CACHE_BYTES (32u << 20)
#define CMD_HFILE_MAX_FIELDS 8

static const char cmd_hfile_usage_text[] =
    "Usage: kiln hfile dump FILE [--limit N] [--row ROW] [--tags] [--mvcc]\n"
    "       kiln hfile meta FILE [--blocks]\n"
    "       kiln hfile check FILE...\n"
    "       kiln hfile write OUT [--compression C] [--bloom B] [--block-size N]\n"
    "                            [--family F] [--input FILE]\n"
    "\n"
    "Inspect, verify and write HBase HFile v3 files (like `hbase hfile`).\n"
    "\n"
    "dump   print every cell, one a line:\n"
    "         ROW<TAB>FAMILY:QUALIFIER<TAB>TIMESTAMP<TAB>TYPE<TAB>VALUE\n"
    "       in HBase's printable form (Bytes.toStringBinary): bytes outside\n"
    "       printable ASCII, and the backslash, as \\xNN (upper-case hex). A ':'\n"
    "       inside a family prints as \\x3A so that the column splits one way.\n"
    "       TYPE is Put, Delete, DeleteColumn, DeleteFamily or DeleteFamilyVersion\n"
    "       (Maximum, Minimum; any other code prints as its number).\n"
    "         --limit N    stop after N cells\n"
    "         --row ROW    only the cells of row ROW (printable form)\n"
    "         --tags       append a field tags=TAGS: the raw tag bytes\n"
    "                      ([u16 len][u8 type][value]...) in printable form\n"
    "         --mvcc       append a field mvcc=N: the cell's sequence id\n"
    "\n"
    "meta   print the trailer fields, FileInfo (ints, longs, booleans, TIMERANGE\n"
    "       and keys decoded; other values in printable form), block counts by\n"
    "       type, the block index and bloom summaries, codec, encoding and the\n"
    "       entry count.\n"
    "         --blocks     also list every block: offset, type, sizes\n"
    "\n"
    "check  read and verify each FILE: every block's checksums, decompression\n"
    "       and decoding, cell order, index and bloom. Prints 'FILE: OK (N cells)'\n"
    "       or 'FILE: FAILED: ...' naming the first problem and its offset.\n"
    "       Exit 0 only when every file is clean; 65 for a corrupt file, 66 for\n"
    "       a missing one.\n"
    "\n"
    "write  read cells in the dump form from stdin (or --input FILE), in any\n"
    "       order, sort them in HBase order and write the HFile OUT (replaced if\n"
    "       it exists). Trailing fields tags=TAGS and mvcc=N, as dump --tags\n"
    "       --mvcc prints them, are kept. Empty lines are skipped. All cells are\n"
    "       held in memory until the file is written.\n"
    "         --compression none|gz|snappy|zstd|lz4   block codec (default none)\n"
    "         --bloom none|row|rowcol                 bloom filter (default row)\n"
    "         --block-size N[K|M]                     data block size (default 64K)\n"
    "         --family F   give every cell family F (printable form). Without it\n"
    "                      every line must name the same non-empty family, as an\n"
    "                      HFile holds one column family. With it, the column\n"
    "                      may also be a bare QUALIFIER with no ':'.\n"
    "         --input FILE read cells from FILE instead of stdin\n"
    "       A malformed line is an error naming its line number (exit 65).\n"
    "\n"
    "Exit status: 0 success, 64 usage error, 65 bad or corrupt data, 66 missing\n"
    "file, 74 I/O error.\n";

static int
cmd_hfile_help(void)
{
    fputs(cmd_hfile_usage_text, stdout);
    return 0;
}

/* Parse options common to every subcommand: getopt_long from a clean state,
 * usage errors for unknown options. Returns the option, -1 at the end, or
 * '?' after printing a usage error. */
static int
cmd_hfile_getopt(int argc, char **argv, const struct option *opts, const char *sub)
{
    opterr = 0;
    int c = getopt_long(argc, argv, ":h", opts, NULL);
    if (c == ':') {
        cli_usage_error(CMD_HFILE_CTX, "%s: option '%s' needs an argument", sub,
                        argv[optind - 1]);
        return '?';
    }
    if (c == '?') {
        cli_usage_error(CMD_HFILE_CTX, "%s: unknown option '%s'", sub, argv[optind - 1]);
        return '?';
    }
    return c;
}

/* ------------------------------------------------------------------ printing */

static void
cmd_hfile_put_u64(kbuf *b, uint64_t v)
{
    char tmp[20];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    buf_append(b, tmp + i, sizeof tmp - i);
}

static void
cmd_hfile_put_i64(kbuf *b, int64_t v)
{
    if (v < 0) {
        buf_append_u8(b, '-');
        cmd_hfile_put_u64(b, 0 - (uint64_t)v);
    } else {
        cmd_hfile_put_u64(b, (uint64_t)v);
    }
}

/* A family in printable form, with ':' escaped so FAMILY:QUALIFIER splits at
 * the first literal colon. */
static void
cmd_hfile_put_family(kbuf *b, const uint8_t *p, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == ':') {
            cell_to_string_binary(b, p + start, i - start);
            buf_append(b, "\\x3A", 4);
            start = i + 1;
        }
    }
    cell_to_string_binary(b, p + start, n - start);
}

static void
cmd_hfile_put_type(kbuf *b, uint8_t type)
{
    const char *name = cell_type_name(type);
    if (name != NULL)
        buf_append(b, name, strlen(name));
    else
        cmd_hfile_put_u64(b, type);
}

static void
cmd_hfile_put_cell(kbuf *b, const kiln_cell *c, int with_tags, int with_mvcc)
{
    cell_to_string_binary(b, c->row, c->row_len);
    buf_append_u8(b, '\t');
    cmd_hfile_put_family(b, c->family, c->family_len);
    buf_append_u8(b, ':');
    cell_to_string_binary(b, c->qualifier, c->qualifier_len);
    buf_append_u8(b, '\t');
    cmd_hfile_put_i64(b, c->ts);
    buf_append_u8(b, '\t');
    cmd_hfile_put_type(b, c->type);
    buf_append_u8(b, '\t');
    cell_to_string_binary(b, c->value, c->value_len);
    if (with_tags) {
        buf_append(b, "\ttags=", 6);
        cell_to_string_binary(b, c->tags, c->tags_len);
    }
    if (with_mvcc) {
        buf_append(b, "\tmvcc=", 6);
        cmd_hfile_put_u64(b, c->mvcc);
    }
    buf_append_u8(b, '\n');
}

/* A serialized KeyValue key as HBase prints it: row/family:qualifier/ts/type. */
static void
cmd_hfile_put_key(kbuf *b, const uint8_t *key, size_t klen)
{
    kiln_cell c;
    if (klen == 0) {
        buf_append(b, "(none)", 6);
        return;
    }
    if (cell_key_decode(key, klen, &c, NULL) != KILN_OK) {
        cell_to_string_binary(b, key, klen);
        return;
    }
    cell_to_string_binary(b, c.row, c.row_len);
    buf_append_u8(b, '/');
    cmd_hfile_put_family(b, c.family, c.family_len);
    buf_append_u8(b, ':');
    cell_to_string_binary(b, c.qualifier, c.qualifier_len);
    buf_append_u8(b, '/');
    if (c.ts == CELL_LATEST_TIMESTAMP)
        buf_append(b, "LATEST_TIMESTAMP", 16);
    else
        cmd_hfile_put_i64(b, c.ts);
    buf_append_u8(b, '/');
    cmd_hfile_put_type(b, c.type);
}

/* Decode a printable-form argument (--row, --family) into out. */
static int
cmd_hfile_decode_arg(const char *sub, const char *opt, const char *s, kbuf *out)
{
    buf_reset(out);
    if (cell_from_string_binary(out, s, strlen(s)) != 0) {
        cli_usage_error(CMD_HFILE_CTX, "%s: %s '%s': bad \\xNN escape", sub, opt, s);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ dump */

static int
cmd_hfile_dump(int argc, char **argv)
{
    static const struct option opts[] = {
        {"limit", required_argument, NULL, 'l'},
        {"row", required_argument, NULL, 'r'},
        {"tags", no_argument, NULL, 't'},
        {"mvcc", no_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    uint64_t limit = 0;
    int has_limit = 0, with_tags = 0, with_mvcc = 0;
    const char *row_arg = NULL;
    int c;
    while ((c = cmd_hfile_getopt(argc, argv, opts, "dump")) != -1) {
        switch (c) {
        case 'l':
            if (cli_parse_u64(optarg, &limit) != 0)
                return cli_usage_error(CMD_HFILE_CTX, "dump: --limit '%s' is not a count", optarg);
            has_limit = 1;
            break;
        case 'r':
            row_arg = optarg;
            break;
        case 't':
            with_tags = 1;
            break;
        case 'm':
            with_mvcc = 1;
            break;
        case 'h':
            return cmd_hfile_help();
        default:
            return EX_USAGE;
        }
    }
    if (argc - optind != 1)
        return cli_usage_error(CMD_HFILE_CTX, "dump: expected one FILE");
    const char *path = argv[optind];

    kbuf row = KBUF_INIT;
    if (row_arg != NULL && cmd_hfile_decode_arg("dump", "--row", row_arg, &row) != 0) {
        buf_free(&row);
        return EX_USAGE;
    }

    kiln_err err;
    status_clear(&err);
    block_cache *cache = block_cache_new(CMD_HFILE_CACHE_BYTES);
    hfile_reader *r = NULL;
    hfile_iter *it = NULL;
    cli_out out;
    cli_out_init(&out, STDOUT_FILENO);

    if (hfile_reader_open(path, cache, &r, &err) != KILN_OK)
        goto done;
    it = hfile_iter_new(r);
    if (row_arg != NULL) {
        kiln_cell first;
        cell_first_on_row(&first, row.data, (uint32_t)row.len);
        hfile_iter_seek(it, &first, &err);
    } else {
        hfile_iter_seek_first(it, &err);
    }
    for (uint64_t n = 0; err.code == KILN_OK && hfile_iter_valid(it); n++) {
        if (has_limit && n >= limit)
            break;
        const kiln_cell *cell = hfile_iter_cell(it);
        if (row_arg != NULL && !kslice_eq(kslice_make(cell->row, cell->row_len), buf_slice(&row)))
            break;
        cmd_hfile_put_cell(&out.buf, cell, with_tags, with_mvcc);
        cli_out_maybe_flush(&out);
        hfile_iter_next(it, &err);
    }

done:
    cli_out_close(&out, &err);
    hfile_iter_free(it);
    hfile_reader_close(r);
    block_cache_free(cache);
    buf_free(&row);
    return err.code == KILN_OK ? 0 : cli_report(&err);
}

/* ------------------------------------------------------------------ meta */

typedef enum cmd_hfile_fi_kind {
    CMD_HFILE_FI_BYTES = 0,
    CMD_HFILE_FI_INT,
    CMD_HFILE_FI_LONG,
    CMD_HFILE_FI_BOOL,
    CMD_HFILE_FI_KEY,
    CMD_HFILE_FI_TIMERANGE
} cmd_hfile_fi_kind;

/* FileInfo keys whose value type is known (hfile-v3.md §3.1). */
static const struct {
    const char *key;
    cmd_hfile_fi_kind kind;
} cmd_hfile_fi_kinds[] = {
    {HFILE_FI_LASTKEY, CMD_HFILE_FI_KEY},
    {HFILE_FI_AVG_KEY_LEN, CMD_HFILE_FI_INT},
    {HFILE_FI_AVG_VALUE_LEN, CMD_HFILE_FI_INT},
    {HFILE_FI_CREATE_TIME, CMD_HFILE_FI_LONG},
    {HFILE_FI_MAX_TAGS_LEN, CMD_HFILE_FI_INT},
    {HFILE_FI_TAGS_COMPRESSED, CMD_HFILE_FI_BOOL},
    {HFILE_FI_KEY_OF_BIGGEST_CELL, CMD_HFILE_FI_KEY},
    {HFILE_FI_LEN_OF_BIGGEST_CELL, CMD_HFILE_FI_LONG},
    {HFILE_FI_KEY_VALUE_VERSION, CMD_HFILE_FI_INT},
    {HFILE_FI_MAX_MEMSTORE_TS, CMD_HFILE_FI_LONG},
    {"BLOOM_FILTER_PARAM", CMD_HFILE_FI_INT},
    {HFILE_FI_DELETE_FAMILY_COUNT, CMD_HFILE_FI_LONG},
    {HFILE_FI_TIMERANGE, CMD_HFILE_FI_TIMERANGE},
    {HFILE_FI_EARLIEST_PUT_TS, CMD_HFILE_FI_LONG},
    {HFILE_FI_MAX_SEQ_ID, CMD_HFILE_FI_LONG},
    {HFILE_FI_MAJOR_COMPACTION, CMD_HFILE_FI_BOOL},
    {HFILE_FI_EXCLUDE_FROM_MINOR, CMD_HFILE_FI_BOOL},
    {HFILE_FI_BULKLOAD_TIMESTAMP, CMD_HFILE_FI_LONG},
    {"HISTORICAL", CMD_HFILE_FI_BOOL},
    {"SKIP_RESET_SEQ_ID", CMD_HFILE_FI_BOOL},
    {"MOB_CELLS_COUNT", CMD_HFILE_FI_LONG},
};

static cmd_hfile_fi_kind
cmd_hfile_fi_kind_of(kslice key)
{
    for (size_t i = 0; i < sizeof cmd_hfile_fi_kinds / sizeof cmd_hfile_fi_kinds[0]; i++) {
        if (kslice_eq(key, kslice_str(cmd_hfile_fi_kinds[i].key)))
            return cmd_hfile_fi_kinds[i].kind;
    }
    return CMD_HFILE_FI_BYTES;
}

/* TIMERANGE: 16 bytes (i64 min, i64 max), or "PBUF" + TimeRangeTracker
 * {uint64 from = 1; uint64 to = 2}. Returns 0 if decoded. */
static int
cmd_hfile_timerange(kslice v, int64_t *min, int64_t *max)
{
    if (v.n == 16) {
        *min = (int64_t)coding_get_be64(v.p);
        *max = (int64_t)coding_get_be64(v.p + 8);
        return 0;
    }
    if (v.n < 4 || memcmp(v.p, "PBUF", 4) != 0)
        return -1;
    const uint8_t *p = v.p + 4, *end = v.p + v.n;
    *min = 0;
    *max = INT64_MAX;
    while (p < end) {
        uint64_t tag, val;
        size_t k = coding_get_varint(p, end, &tag);
        if (k == 0 || (tag & 7) != 0)
            return -1;
        p += k;
        k = coding_get_varint(p, end, &val);
        if (k == 0)
            return -1;
        p += k;
        if (tag >> 3 == 1)
            *min = (int64_t)val;
        else if (tag >> 3 == 2)
            *max = (int64_t)val;
    }
    return 0;
}

static void
cmd_hfile_put_fileinfo_value(kbuf *b, kslice key, kslice v)
{
    int64_t lo, hi;
    switch (cmd_hfile_fi_kind_of(key)) {
    case CMD_HFILE_FI_INT:
        if (v.n == 4) {
            cmd_hfile_put_i64(b, (int32_t)coding_get_be32(v.p));
            return;
        }
        break;
    case CMD_HFILE_FI_LONG:
        if (v.n == 8) {
            cmd_hfile_put_i64(b, (int64_t)coding_get_be64(v.p));
            return;
        }
        break;
    case CMD_HFILE_FI_BOOL:
        if (v.n == 1) {
            buf_append(b, v.p[0] ? "true" : "false", v.p[0] ? 4 : 5);
            return;
        }
        break;
    case CMD_HFILE_FI_KEY:
        cmd_hfile_put_key(b, v.p, v.n);
        return;
    case CMD_HFILE_FI_TIMERANGE:
        if (cmd_hfile_timerange(v, &lo, &hi) == 0) {
            buf_append(b, "min=", 4);
            cmd_hfile_put_i64(b, lo);
            buf_append(b, " max=", 5);
            cmd_hfile_put_i64(b, hi);
            return;
        }
        break;
    case CMD_HFILE_FI_BYTES:
        break;
    }
    cell_to_string_binary(b, v.p, v.n);
}

/* What a walk over every block header from offset 0 to the trailer found. */
typedef struct cmd_hfile_walk {
    uint64_t count[HFILE_BLOCK_TYPE_COUNT];
    uint64_t on_disk[HFILE_BLOCK_TYPE_COUNT];     /* header + payload + checksums */
    uint64_t raw[HFILE_BLOCK_TYPE_COUNT];         /* uncompressed payload */
    int has_bloom_meta, has_df_bloom_meta;
    uint64_t bloom_meta_off, df_bloom_meta_off;
} cmd_hfile_walk;

/* Walk the block headers in [0, end). When list is not NULL, print one line
 * per block into it. */
static kiln_status
cmd_hfile_walk_blocks(env_file *f, uint64_t end, cmd_hfile_walk *w, kbuf *list, kiln_err *err)
{
    const char *path = env_file_path(f);
    uint8_t hdr[HFILE_BLOCK_HEADER_SIZE];
    uint64_t off = 0;
    memset(w, 0, sizeof *w);
    while (off < end) {
        if (end - off < HFILE_BLOCK_HEADER_SIZE) {
            return status_set(err, KILN_CORRUPTION,
                              "%s: %" PRIu64 " stray bytes at offset %" PRIu64
                              " before the trailer", path, end - off, off);
        }
        if (env_pread(f, off, hdr, sizeof hdr, err) != KILN_OK)
            return err->code;
        hfile_block_header h;
        kiln_err herr;
        status_clear(&herr);
        if (hfile_block_header_decode(hdr, &h, &herr) != KILN_OK) {
            return status_set(err, herr.code, "%s: block header at offset %" PRIu64 ": %s",
                              path, off, herr.msg);
        }
        uint64_t next = off + HFILE_BLOCK_HEADER_SIZE + h.on_disk_size_without_header;
        if (next > end) {
            return status_set(err, KILN_CORRUPTION,
                              "%s: block at offset %" PRIu64 " (%s) runs to %" PRIu64
                              ", past the trailer at %" PRIu64,
                              path, off, hfile_block_type_name(h.type), next, end);
        }
        if (list != NULL) {
            char line[160];
            int n = snprintf(line, sizeof line,
                             "  offset=%" PRIu64 " type=%s on_disk_size=%" PRIu64
                             " uncompressed_size=%u prev_offset=%" PRId64 "\n",
                             off, hfile_block_type_name(h.type), next - off,
                             h.uncompressed_size_without_header, h.prev_block_offset);
            buf_append(list, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        }
        w->count[h.type]++;
        w->on_disk[h.type] += next - off;
        w->raw[h.type] += h.uncompressed_size_without_header;
        if (h.type == HFILE_BLOCK_GENERAL_BLOOM_META && !w->has_bloom_meta) {
            w->has_bloom_meta = 1;
            w->bloom_meta_off = off;
        } else if (h.type == HFILE_BLOCK_DELETE_FAMILY_BLOOM_META && !w->has_df_bloom_meta) {
            w->has_df_bloom_meta = 1;
            w->df_bloom_meta_off = off;
        }
        off = next;
    }
    return KILN_OK;
}

/* Read one block at off, verify its checksums and return its uncompressed
 * payload in out. */
static kiln_status
cmd_hfile_read_block(env_file *f, uint64_t off, kiln_codec codec, kbuf *out, kiln_err *err)
{
    const char *path = env_file_path(f);
    uint8_t hdr[HFILE_BLOCK_HEADER_SIZE];
    hfile_block_header h;
    kiln_err herr;
    status_clear(&herr);
    if (env_pread(f, off, hdr, sizeof hdr, err) != KILN_OK)
        return err->code;
    if (hfile_block_header_decode(hdr, &h, &herr) != KILN_OK) {
        return status_set(err, herr.code, "%s: block header at offset %" PRIu64 ": %s", path,
                          off, herr.msg);
    }
    size_t total = HFILE_BLOCK_HEADER_SIZE + (size_t)h.on_disk_size_without_header;
    size_t data = h.on_disk_data_size_with_header;
    kbuf raw = KBUF_INIT;
    buf_resize(&raw, total);
    kiln_status st = env_pread(f, off, raw.data, total, err);
    if (st == KILN_OK && h.checksum_type != HFILE_CHECKSUM_NULL) {
        long bad = hfile_checksum_verify(h.checksum_type, raw.data, data, h.bytes_per_checksum,
                                         raw.data + data);
        if (bad >= 0) {
            st = status_set(err, KILN_CORRUPTION,
                            "%s: checksum mismatch in chunk %ld of the %s block at offset %" PRIu64,
                            path, bad, hfile_block_type_name(h.type), off);
        }
    }
    if (st == KILN_OK) {
        const uint8_t *payload = raw.data + HFILE_BLOCK_HEADER_SIZE;
        size_t n = data - HFILE_BLOCK_HEADER_SIZE;
        buf_reset(out);
        if (codec == CODEC_NONE) {
            buf_append(out, payload, n);
        } else {
            buf_resize(out, h.uncompressed_size_without_header);
            status_clear(&herr);
            if (decompress_block(codec, payload, n, out->data, out->len, &herr) != KILN_OK) {
                st = status_set(err, herr.code, "%s: %s block at offset %" PRIu64 ": %s", path,
                                hfile_block_type_name(h.type), off, herr.msg);
            }
        }
    }
    buf_free(&raw);
    return st;
}

static const char *
cmd_hfile_hash_name(int32_t t)
{
    switch (t) {
    case 0: return "jenkins";
    case 1: return "murmur";
    case 2: return "murmur3";
    default: return "unknown";
    }
}

/* Print the summary of a bloom meta block (BLMFMET2 / DFBLMET2 payload). */
static kiln_status
cmd_hfile_put_bloom_meta(kbuf *b, const char *path, uint64_t off, kslice p, kiln_err *err)
{
    const size_t fixed = 4 + 8 + 4 + 4 + 8 + 8 + 4;
    if (p.n < fixed) {
        return status_set(err, KILN_CORRUPTION,
                          "%s: bloom meta block at offset %" PRIu64 ": %zu bytes, need %zu", path,
                          off, p.n, fixed);
    }
    int32_t version = (int32_t)coding_get_be32(p.p);
    int64_t byte_size = (int64_t)coding_get_be64(p.p + 4);
    int32_t hash_count = (int32_t)coding_get_be32(p.p + 12);
    int32_t hash_type = (int32_t)coding_get_be32(p.p + 16);
    int64_t keys = (int64_t)coding_get_be64(p.p + 20);
    int64_t max_keys = (int64_t)coding_get_be64(p.p + 28);
    int32_t chunks = (int32_t)coding_get_be32(p.p + 36);
    int64_t cmp_len = 0;
    size_t k = coding_get_vlong(p.p + fixed, p.p + p.n, &cmp_len);
    if (k == 0 || cmp_len < 0 || (uint64_t)cmp_len > p.n - fixed - k) {
        return status_set(err, KILN_CORRUPTION,
                          "%s: bloom meta block at offset %" PRIu64 ": bad comparator name length",
                          path, off);
    }
    char line[256];
    int n = snprintf(line, sizeof line,
                     "  version=%d hash=%s hash_count=%d chunks=%d keys=%" PRId64
                     " max_keys=%" PRId64 " byte_size=%" PRId64 " filled=%.1f%%\n"
                     "  comparator=",
                     version, cmd_hfile_hash_name(hash_type), hash_count, chunks, keys, max_keys,
                     byte_size, max_keys > 0 ? 100.0 * (double)keys / (double)max_keys : 0.0);
    buf_append(b, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    if (cmp_len == 0)
        buf_append(b, "(none)", 6);
    else
        cell_to_string_binary(b, p.p + fixed + k, (size_t)cmp_len);
    buf_append_u8(b, '\n');
    return KILN_OK;
}

static int
cmd_hfile_meta(int argc, char **argv)
{
    static const struct option opts[] = {
        {"blocks", no_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c, list_blocks = 0;
    while ((c = cmd_hfile_getopt(argc, argv, opts, "meta")) != -1) {
        if (c == 'b')
            list_blocks = 1;
        else if (c == 'h')
            return cmd_hfile_help();
        else
            return EX_USAGE;
    }
    if (argc - optind != 1)
        return cli_usage_error(CMD_HFILE_CTX, "meta: expected one FILE");
    const char *path = argv[optind];

    kiln_err err;
    status_clear(&err);
    hfile_reader *r = NULL;
    env_file *f = NULL;
    kbuf block = KBUF_INIT, list = KBUF_INIT;
    cli_out out;
    cli_out_init(&out, STDOUT_FILENO);
    kbuf *b = &out.buf;

    if (hfile_reader_open(path, NULL, &r, &err) != KILN_OK)
        goto done;
    const hfile_trailer *t = hfile_reader_trailer(r);
    uint64_t size = hfile_reader_file_size(r);
    kiln_codec codec = (kiln_codec)t->compression_codec;

    cli_out_printf(&out, "%s\n  size=%" PRIu64 " version=%u.%u\n", path, size, t->major_version,
                   t->minor_version);
    cli_out_printf(&out,
                   "Trailer:\n"
                   "  file_info_offset=%" PRIu64 "\n"
                   "  load_on_open_data_offset=%" PRIu64 "\n"
                   "  uncompressed_data_index_size=%" PRIu64 "\n"
                   "  total_uncompressed_bytes=%" PRIu64 "\n"
                   "  data_index_count=%u\n"
                   "  meta_index_count=%u\n"
                   "  entry_count=%" PRIu64 "\n"
                   "  num_data_index_levels=%u\n"
                   "  first_data_block_offset=%" PRId64 "\n"
                   "  last_data_block_offset=%" PRIu64 "\n"
                   "  comparator_class_name=%s\n"
                   "  compression_codec=%u (%s)\n"
                   "  encrypted=%s\n",
                   t->file_info_offset, t->load_on_open_data_offset,
                   t->uncompressed_data_index_size, t->total_uncompressed_bytes,
                   t->data_index_count, t->meta_index_count, t->entry_count,
                   t->num_data_index_levels, (int64_t)t->first_data_block_offset,
                   t->last_data_block_offset, t->comparator_class_name, t->compression_codec,
                   compress_codec_name(codec), t->encrypted ? "true" : "false");

    const hfile_fileinfo *fi = hfile_reader_fileinfo(r);
    cli_out_str(&out, "FileInfo:\n");
    for (size_t i = 0; i < fi->count; i++) {
        cli_out_str(&out, "  ");
        cell_to_string_binary(b, fi->entries[i].key.p, fi->entries[i].key.n);
        cli_out_str(&out, " = ");
        cmd_hfile_put_fileinfo_value(b, fi->entries[i].key, fi->entries[i].value);
        cli_out_str(&out, "\n");
    }

    /* Block counts come from the headers themselves, not from the index. */
    cmd_hfile_walk w;
    if (size < HFILE_TRAILER_SIZE) {
        status_set(&err, KILN_CORRUPTION, "%s: %" PRIu64 " bytes is shorter than the trailer",
                   path, size);
        goto done;
    }
    if (env_open_read(path, &f, &err) != KILN_OK ||
        cmd_hfile_walk_blocks(f, size - HFILE_TRAILER_SIZE, &w, list_blocks ? &list : NULL,
                              &err) != KILN_OK)
        goto done;
    cli_out_str(&out, "Blocks:\n");
    cli_out_write(&out, list.data, list.len);
    for (int i = 0; i < HFILE_BLOCK_TYPE_COUNT; i++) {
        if (w.count[i] == 0)
            continue;
        cli_out_printf(&out,
                       "  %-8s count=%" PRIu64 " on_disk_bytes=%" PRIu64
                       " uncompressed_bytes=%" PRIu64 "\n",
                       hfile_block_type_name((hfile_block_type)i), w.count[i], w.on_disk[i],
                       w.raw[i]);
    }

    kslice first = hfile_reader_first_key(r), last = hfile_reader_last_key(r);
    cli_out_printf(&out,
                   "Index:\n  levels=%u root_entries=%u leaf_blocks=%" PRIu64
                   " intermediate_blocks=%" PRIu64 " uncompressed_size=%" PRIu64 "\n",
                   t->num_data_index_levels, t->data_index_count,
                   w.count[HFILE_BLOCK_LEAF_INDEX], w.count[HFILE_BLOCK_INTERMEDIATE_INDEX],
                   t->uncompressed_data_index_size);
    cli_out_str(&out, "  first_key=");
    cmd_hfile_put_key(b, first.p, first.n);
    cli_out_str(&out, "\n  last_key=");
    cmd_hfile_put_key(b, last.p, last.n);
    cli_out_str(&out, "\n");

    cli_out_printf(&out, "Bloom filter: %s\n", bloom_type_name(hfile_reader_bloom_type(r)));
    if (w.has_bloom_meta) {
        if (cmd_hfile_read_block(f, w.bloom_meta_off, codec, &block, &err) != KILN_OK ||
            cmd_hfile_put_bloom_meta(b, path, w.bloom_meta_off, buf_slice(&block), &err) !=
                KILN_OK)
            goto done;
    }
    cli_out_printf(&out, "Delete family bloom filter: %s\n",
                   hfile_reader_has_delete_family_bloom(r) ? "present" : "none");
    if (w.has_df_bloom_meta) {
        if (cmd_hfile_read_block(f, w.df_bloom_meta_off, codec, &block, &err) != KILN_OK ||
            cmd_hfile_put_bloom_meta(b, path, w.df_bloom_meta_off, buf_slice(&block), &err) !=
                KILN_OK)
            goto done;
    }
    cli_out_printf(&out, "Summary:\n  codec=%s encoding=%s entries=%" PRIu64 "\n",
                   compress_codec_name(codec), hfile_encoding_name(hfile_reader_encoding(r)),
                   hfile_reader_entry_count(r));

done:
    cli_out_close(&out, &err);
    env_close(f, NULL);
    hfile_reader_close(r);
    buf_free(&block);
    buf_free(&list);
    return err.code == KILN_OK ? 0 : cli_report(&err);
}

/* ------------------------------------------------------------------ check */

static int
cmd_hfile_check(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = cmd_hfile_getopt(argc, argv, opts, "check")) != -1) {
        if (c == 'h')
            return cmd_hfile_help();
        return EX_USAGE;
    }
    if (argc - optind < 1)
        return cli_usage_error(CMD_HFILE_CTX, "check: expected at least one FILE");

    int rc = 0;
    block_cache *cache = block_cache_new(CMD_HFILE_CACHE_BYTES);
    for (int i = optind; i < argc; i++) {
        const char *path = argv[i];
        kiln_err err;
        status_clear(&err);
        hfile_reader *r = NULL;
        uint64_t cells = 0;
        if (hfile_reader_open(path, cache, &r, &err) == KILN_OK)
            hfile_reader_check(r, &cells, &err);
        hfile_reader_close(r);
        if (err.code == KILN_OK) {
            printf("%s: OK (%" PRIu64 " cells)\n", path, cells);
            continue;
        }
        /* Most messages already start with the path; do not print it twice. */
        const char *msg = err.msg[0] != '\0' ? err.msg : status_name(err.code);
        size_t pn = strlen(path);
        if (strncmp(msg, path, pn) == 0 && msg[pn] == ':' && msg[pn + 1] == ' ')
            msg += pn + 2;
        printf("%s: FAILED: %s\n", path, msg);
        if (rc == 0)
            rc = status_exit_code(err.code);
    }
    block_cache_free(cache);
    if (fflush(stdout) != 0 && rc == 0)
        rc = EX_IOERR;
    return rc;
}

/* ------------------------------------------------------------------ write */

typedef struct cmd_hfile_entry {
    kiln_cell cell;
    uint64_t line;          /* input line, the last tie-breaker so sorting is stable */
} cmd_hfile_entry;

typedef struct cmd_hfile_input {
    const char *name;       /* "stdin" or the --input path, for messages */
    cli_arena arena;
    cmd_hfile_entry *cells;
    size_t count, cap;
    kbuf scratch;           /* decoded fields of the current line */
    kbuf fixed_family;      /* --family, decoded */
    int has_fixed_family;
    const uint8_t *family;  /* family of every cell so far (arena or fixed_family) */
    uint32_t family_len;
    uint64_t first_family_line;
} cmd_hfile_input;

/* Decode printable field s[0..n) onto the end of in->scratch. */
static kiln_status
cmd_hfile_field(cmd_hfile_input *in, uint64_t line, const char *what, const char *s, size_t n,
                size_t *off, size_t *len, kiln_err *err)
{
    *off = in->scratch.len;
    if (cell_from_string_binary(&in->scratch, s, n) != 0) {
        return status_set(err, KILN_INVALID, "%s:%" PRIu64 ": %s: bad \\xNN escape in '%.*s'",
                          in->name, line, what, (int)(n > 64 ? 64 : n), s);
    }
    *len = in->scratch.len - *off;
    return KILN_OK;
}

/* Parse one line (NUL separators may be written into it) into a cell. */
static kiln_status
cmd_hfile_parse_line(cmd_hfile_input *in, char *s, size_t n, uint64_t line, kiln_err *err)
{
    char *field[CMD_HFILE_MAX_FIELDS];
    size_t flen[CMD_HFILE_MAX_FIELDS];
    size_t nf = 0;
    char *p = s, *end = s + n;
    for (;;) {
        char *tab = memchr(p, '\t', (size_t)(end - p));
        char *stop = tab != NULL ? tab : end;
        if (nf == CMD_HFILE_MAX_FIELDS) {
            return status_set(err, KILN_INVALID, "%s:%" PRIu64 ": more than %d fields", in->name,
                              line, CMD_HFILE_MAX_FIELDS);
        }
        field[nf] = p;
        flen[nf] = (size_t)(stop - p);
        nf++;
        if (tab == NULL)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    if (nf < 5) {
        return status_set(err, KILN_INVALID,
                          "%s:%" PRIu64 ": expected 5 tab-separated fields (ROW, "
                          "FAMILY:QUALIFIER, TIMESTAMP, TYPE, VALUE), found %zu",
                          in->name, line, nf);
    }

    kiln_cell cell;
    memset(&cell, 0, sizeof cell);
    buf_reset(&in->scratch);
    size_t row_off = 0, row_len = 0, fam_off = 0, fam_len = 0, q_off = 0, q_len = 0;
    size_t v_off = 0, v_len = 0;
    size_t t_off = 0, t_len = 0;
    int has_tags = 0, has_mvcc = 0;
    if (cmd_hfile_field(in, line, "row", field[0], flen[0], &row_off, &row_len, err) != KILN_OK)
        return err->code;

    const char *colon = memchr(field[1], ':', flen[1]);
    const char *qual = field[1];
    size_t qual_n = flen[1];
    if (colon != NULL) {
        size_t fn = (size_t)(colon - field[1]);
        if (!in->has_fixed_family &&
            cmd_hfile_field(in, line, "family", field[1], fn, &fam_off, &fam_len, err) != KILN_OK)
            return err->code;
        qual = colon + 1;
        qual_n = flen[1] - fn - 1;
    } else if (!in->has_fixed_family) {
        return status_set(err, KILN_INVALID,
                          "%s:%" PRIu64 ": column '%.*s' has no ':' (FAMILY:QUALIFIER); "
                          "give the family with --family",
                          in->name, line, (int)(flen[1] > 64 ? 64 : flen[1]), field[1]);
    }
    if (cmd_hfile_field(in, line, "qualifier", qual, qual_n, &q_off, &q_len, err) != KILN_OK)
        return err->code;

    if (cli_parse_i64(field[2], flen[2], &cell.ts) != 0) {
        return status_set(err, KILN_INVALID, "%s:%" PRIu64 ": timestamp '%.*s' is not an integer",
                          in->name, line, (int)(flen[2] > 32 ? 32 : flen[2]), field[2]);
    }
    uint64_t code;
    if (cell_type_parse(field[3], &cell.type) != 0) {
        if (cli_parse_u64(field[3], &code) != 0 || code > 255) {
            return status_set(err, KILN_INVALID,
                              "%s:%" PRIu64 ": unknown type '%.*s' (Put, Delete, DeleteColumn, "
                              "DeleteFamily, DeleteFamilyVersion or a code 0-255)",
                              in->name, line, (int)(flen[3] > 32 ? 32 : flen[3]), field[3]);
        }
        cell.type = (uint8_t)code;
    }
    if (cmd_hfile_field(in, line, "value", field[4], flen[4], &v_off, &v_len, err) != KILN_OK)
        return err->code;

    for (size_t i = 5; i < nf; i++) {
        if (flen[i] >= 5 && memcmp(field[i], "tags=", 5) == 0 && !has_tags) {
            if (cmd_hfile_field(in, line, "tags", field[i] + 5, flen[i] - 5, &t_off, &t_len,
                                err) != KILN_OK)
                return err->code;
            has_tags = 1;
        } else if (flen[i] >= 5 && memcmp(field[i], "mvcc=", 5) == 0 && !has_mvcc) {
            if (cli_parse_u64(field[i] + 5, &cell.mvcc) != 0) {
                return status_set(err, KILN_INVALID, "%s:%" PRIu64 ": bad mvcc '%.*s'",
                                  in->name, line, (int)(flen[i] > 32 ? 32 : flen[i]), field[i]);
            }
            has_mvcc = 1;
        } else {
            return status_set(err, KILN_INVALID,
                              "%s:%" PRIu64 ": unexpected field %zu '%.*s' (only tags=... and "
                              "mvcc=N may follow VALUE, once each)",
                              in->name, line, i + 1, (int)(flen[i] > 32 ? 32 : flen[i]),
                              field[i]);
        }
    }

    /* One family per file: the first line's (or --family) sets it. */
    if (in->has_fixed_family) {
        cell.family = in->fixed_family.data;
        cell.family_len = (uint32_t)in->fixed_family.len;
    } else if (fam_len == 0) {
        return status_set(err, KILN_INVALID,
                          "%s:%" PRIu64 ": empty family (an HFile needs one; use --family)",
                          in->name, line);
    } else if (in->family == NULL) {
        uint8_t *copy = cli_arena_alloc(&in->arena, fam_len);
        memcpy(copy, in->scratch.data + fam_off, fam_len);
        in->family = copy;
        in->family_len = (uint32_t)fam_len;
        in->first_family_line = line;
        cell.family = in->family;
        cell.family_len = in->family_len;
    } else if (fam_len != in->family_len ||
               memcmp(in->scratch.data + fam_off, in->family, fam_len) != 0) {
        return status_set(err, KILN_INVALID,
                          "%s:%" PRIu64 ": family differs from line %" PRIu64
                          "'s (an HFile holds one column family; use --family to set one)",
                          in->name, line, in->first_family_line);
    } else {
        cell.family = in->family;
        cell.family_len = in->family_len;
    }

    if (v_len > UINT32_MAX - 1 || t_len > 65535) {
        return status_set(err, KILN_INVALID, "%s:%" PRIu64 ": value or tags too long", in->name,
                          line);
    }
    /* Row, qualifier, value and tags go to the arena in one piece. */
    uint8_t *bytes = cli_arena_alloc(&in->arena, in->scratch.len);
    if (in->scratch.len > 0)
        memcpy(bytes, in->scratch.data, in->scratch.len);
    cell.row = bytes + row_off;
    cell.row_len = (uint32_t)row_len;
    cell.qualifier = bytes + q_off;
    cell.qualifier_len = (uint32_t)q_len;
    cell.value = bytes + v_off;
    cell.value_len = (uint32_t)v_len;
    cell.tags = has_tags ? bytes + t_off : NULL;
    cell.tags_len = (uint32_t)t_len;
    kiln_err verr;
    status_clear(&verr);
    if (cell_validate(&cell, &verr) != KILN_OK)
        return status_set(err, KILN_INVALID, "%s:%" PRIu64 ": %s", in->name, line, verr.msg);

    if (in->count == in->cap) {
        in->cap = in->cap ? in->cap * 2 : 4096;
        in->cells = kiln_realloc(in->cells, in->cap * sizeof *in->cells);
    }
    in->cells[in->count].cell = cell;
    in->cells[in->count].line = line;
    in->count++;
    return KILN_OK;
}

/* HBase order; equal keys by sequence id, newest first (as HBase orders
 * them), then by input line so the result does not depend on qsort. */
static int
cmd_hfile_entry_cmp(const void *pa, const void *pb)
{
    const cmd_hfile_entry *a = pa, *b = pb;
    int c = cell_compare(&a->cell, &b->cell);
    if (c != 0)
        return c;
    if (a->cell.mvcc != b->cell.mvcc)
        return a->cell.mvcc > b->cell.mvcc ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

static kiln_status
cmd_hfile_read_input(FILE *f, cmd_hfile_input *in, kiln_err *err)
{
    char *line = NULL;
    size_t cap = 0;
    uint64_t lineno = 0;
    ssize_t n;
    kiln_status st = KILN_OK;
    while ((n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        size_t len = (size_t)n;
        if (len > 0 && line[len - 1] == '\n')
            len--;
        if (len > 0 && line[len - 1] == '\r')
            len--;
        if (len == 0)
            continue;
        line[len] = '\0';
        st = cmd_hfile_parse_line(in, line, len, lineno, err);
        if (st != KILN_OK)
            break;
    }
    if (st == KILN_OK && ferror(f))
        st = status_set_errno(err, errno, "%s: read failed", in->name);
    free(line);
    return st;
}

static int
cmd_hfile_write(int argc, char **argv)
{
    static const struct option opts[] = {
        {"compression", required_argument, NULL, 'c'},
        {"bloom", required_argument, NULL, 'b'},
        {"block-size", required_argument, NULL, 's'},
        {"family", required_argument, NULL, 'f'},
        {"input", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    hfile_writer_options wo;
    hfile_writer_options_init(&wo);
    wo.codec = CODEC_NONE;
    wo.bloom = BLOOM_ROW;
    wo.block_size = 65536;
    const char *family_arg = NULL, *input_path = NULL;
    uint64_t v;
    int c;
    while ((c = cmd_hfile_getopt(argc, argv, opts, "write")) != -1) {
        switch (c) {
        case 'c':
            if (compress_codec_parse(optarg, &wo.codec) != 0 ||
                !compress_codec_writable(wo.codec))
                return cli_usage_error(CMD_HFILE_CTX,
                                       "write: --compression '%s': expected none, gz, snappy, "
                                       "zstd or lz4", optarg);
            break;
        case 'b':
            if (bloom_type_parse(optarg, &wo.bloom) != 0)
                return cli_usage_error(CMD_HFILE_CTX,
                                       "write: --bloom '%s': expected none, row or rowcol",
                                       optarg);
            break;
        case 's':
            if (cli_parse_size(optarg, &v) != 0 || v == 0 || v > (1u << 30))
                return cli_usage_error(CMD_HFILE_CTX,
                                       "write: --block-size '%s': expected 1 to 1G bytes",
                                       optarg);
            wo.block_size = (size_t)v;
            break;
        case 'f':
            family_arg = optarg;
            break;
        case 'i':
            input_path = optarg;
            break;
        case 'h':
            return cmd_hfile_help();
        default:
            return EX_USAGE;
        }
    }
    if (argc - optind != 1)
        return cli_usage_error(CMD_HFILE_CTX, "write: expected one OUT file");
    const char *out_path = argv[optind];

    cmd_hfile_input in;
    memset(&in, 0, sizeof in);
    in.name = input_path != NULL ? input_path : "stdin";
    cli_arena_init(&in.arena, 1u << 20);
    buf_init(&in.scratch);
    buf_init(&in.fixed_family);
    kiln_err err;
    status_clear(&err);
    int rc = 0;
    hfile_writer *w = NULL;
    hfile_writer_stats stats;
    memset(&stats, 0, sizeof stats);
    FILE *f = stdin;
    if (family_arg != NULL) {
        if (cmd_hfile_decode_arg("write", "--family", family_arg, &in.fixed_family) != 0) {
            rc = EX_USAGE;
            goto done;
        }
        if (in.fixed_family.len == 0 || in.fixed_family.len > CELL_FAMILY_MAX) {
            rc = cli_usage_error(CMD_HFILE_CTX, "write: --family must be 1 to %d bytes",
                                 CELL_FAMILY_MAX);
            goto done;
        }
        in.has_fixed_family = 1;
    }
    if (input_path != NULL) {
        f = fopen(input_path, "r");
        if (f == NULL) {
            status_set_errno(&err, errno, "%s: cannot open", input_path);
            rc = cli_report(&err);
            goto done;
        }
    }
    if (cmd_hfile_read_input(f, &in, &err) != KILN_OK) {
        rc = cli_report(&err);
        /* A malformed line is bad data, not a bad command line. */
        if (err.code == KILN_INVALID)
            rc = EX_DATAERR;
        goto done;
    }
    if (in.count > 1)
        qsort(in.cells, in.count, sizeof *in.cells, cmd_hfile_entry_cmp);

    if (hfile_writer_open(out_path, &wo, &w, &err) != KILN_OK) {
        rc = cli_report(&err);
        goto done;
    }
    for (size_t i = 0; i < in.count; i++) {
        if (hfile_writer_add(w, &in.cells[i].cell, &err) != KILN_OK)
            break;
    }
    if (err.code != KILN_OK) {
        hfile_writer_abandon(w);
        rc = cli_report(&err);
        goto done;
    }
    if (hfile_writer_finish(w, &stats, &err) != KILN_OK) {
        rc = cli_report(&err);
        goto done;
    }
    printf("%s: wrote %" PRIu64 " cells, %" PRIu64 " bytes (%s, %s bloom, block size %zu)\n",
           out_path, stats.entries, stats.file_size, compress_codec_name(wo.codec),
           bloom_type_name(wo.bloom), wo.block_size);
    if (fflush(stdout) != 0)
        rc = EX_IOERR;

done:
    if (f != NULL && f != stdin)
        fclose(f);
    free(in.cells);
    cli_arena_free(&in.arena);
    buf_free(&in.scratch);
    buf_free(&in.fixed_family);
    return rc;
}

/* ------------------------------------------------------------------ dispatch */

int
cmd_hfile(const cli_globals *g, int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int argc, char **argv);
    } subs[] = {
        {"dump", cmd_hfile_dump},
        {"meta", cmd_hfile_meta},
        {"check", cmd_hfile_check},
        {"write", cmd_hfile_write},
    };
    (void)g;
    if (argc < 2)
        return cli_usage_error(CMD_HFILE_CTX, "expected dump, meta, check or write");
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0)
        return cmd_hfile_help();
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        if (strcmp(subs[i].name, name) == 0) {
            optind = 0;
            return subs[i].fn(argc - 1, argv + 1);
        }
    }
    return cli_usage_error(CMD_HFILE_CTX, "unknown subcommand '%s' (dump, meta, check, write)",
                           name);
}
