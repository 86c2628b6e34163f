/* manifest.h -- the full description of one view version of a table, and the
 * CURRENT pointer that names the published version.
 *
 * A manifest lists, for each table of a publish group, its schema, its regions
 * [start, end) and, per region, the HFiles of each family with their sizes and
 * load sequence numbers; plus the version number, its parent, the creation
 * time, the kind of load that made it and the source jobs whose output it
 * holds. tables[0] is the table itself; further entries are index tables that
 * are published with it in the same atomic step (issue #6), so one CURRENT
 * swap covers a table and all its indexes.
 *
 * Files are named by lower-case hex names that are never reused, relative to
 * the table directory's files/ folder. A file's seq is the version that first
 * loaded it: when two files hold the same cell key, the larger seq wins.
 *
 * Encoded as one record (store_rec.h); layouts in docs/storage-format.md §2.4
 * and §2.5. Ownership: a manifest owns everything it points to.
 */
#ifndef KILN_MANIFEST_H
#define KILN_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/store/schema.h"
#include "storage/base/status.h"

#define MANIFEST_MAGIC "KILNMANI"
#define MANIFEST_POINTER_MAGIC "KILNCURR"
#define MANIFEST_FORMAT_VERSION 2   /* 1: no speed-layer fields; still read */
#define MANIFEST_POINTER_VERSION 1
#define MANIFEST_COVERS_MAX 64
#define MANIFEST_FILE_NAME_MAX 32
#define MANIFEST_PATH_MAX 4096

typedef enum manifest_kind {
    MANIFEST_KIND_REPLACE = 1,   /* the load's files are the whole view */
    MANIFEST_KIND_APPEND = 2,    /* the load's files joined the parent version's */
    MANIFEST_KIND_MAINT = 3      /* a flush, compaction or split: the parent's batch
                                    view in other files (format 2) */
} manifest_kind;

typedef struct manifest_file {
    char family[SCHEMA_FAMILY_NAME_MAX + 1];
    char name[MANIFEST_FILE_NAME_MAX + 1];   /* [0-9a-f]+ under files/ */
    uint64_t size;                           /* bytes */
    uint64_t seq;                            /* load sequence (version that loaded it) */
    uint64_t entries;                        /* cells */
    uint8_t flags;                           /* MANIFEST_FILE_* */
    uint64_t wseq;                           /* a speed-layer file: the highest write
                                                sequence in it (orders files of equal
                                                rank); 0 for a bulk-loaded file */
} manifest_file;

/* A file written by the speed layer (a flush of online writes, or a
 * compaction of such files): its seq is the version that was current when
 * its writes were made, and on equal keys it wins over a bulk-loaded file
 * of that same version (the writes came after that load). */
#define MANIFEST_FILE_SPEED 1

/* The merge order of a file on equal cell keys: bulk loads by version,
 * online writes just above the version they were made over (speed.h). */
static inline uint64_t
manifest_file_rank(const manifest_file *f)
{
    return f->seq * 4 + ((f->flags & MANIFEST_FILE_SPEED) ? 1 : 0);
}

/* A covering load (kiln load --covers-until TS) retired the online writes
 * made before it (over a version < version) with timestamps <= ts. */
typedef struct manifest_cover {
    uint64_t version;
    int64_t ts;
} manifest_cover;

typedef struct manifest_region {
    kbuf start;                  /* inclusive; empty = unbounded */
    kbuf end;                    /* exclusive; empty = unbounded */
    manifest_file *files;        /* sorted by family, then seq descending */
    size_t file_count;
} manifest_region;

typedef struct manifest_table {
    kiln_schema schema;          /* the table's definition as of this version */
    manifest_region *regions;    /* split_count + 1, in key order */
    size_t region_count;
} manifest_table;

typedef struct manifest_source {
    uint64_t fingerprint;        /* of the job output (bulkload computes it) */
    uint64_t version;            /* version that loaded it */
    int64_t loaded_ms;
    char *path;                  /* job output directory as given */
} manifest_source;

typedef struct manifest {
    uint64_t version;            /* >= 1 */
    uint64_t parent;             /* version current when this one was made; 0 = none */
    int64_t created_ms;
    manifest_kind kind;
    manifest_source *sources;
    size_t source_count;
    manifest_table *tables;      /* tables[0] = the table; then its index tables */
    size_t table_count;
    /* The speed layer (speed.h): the highest write sequence number whose
     * write is in this version's files (replay skips those at or below),
     * and the covering loads still in effect, oldest first. */
    uint64_t flushed_seq;
    manifest_cover *covers;
    size_t cover_count;
} manifest;

/* The CURRENT pointer's content. */
typedef struct manifest_pointer {
    uint64_t version;
    uint32_t manifest_crc;       /* CRC32C of the manifest record it names */
} manifest_pointer;

void manifest_init(manifest *m);
void manifest_free(manifest *m);   /* m may be NULL */
/* Deep copy into dst (initialized by the call). */
void manifest_copy(manifest *dst, const manifest *src);

/* Add a table with the schema's regions and no files. Returns it. */
manifest_table *manifest_add_table(manifest *m, const kiln_schema *schema);
/* Append a file to a region (keeps files sorted by family, then seq descending). */
void manifest_region_add_file(manifest_region *r, const manifest_file *f);
/* Add a covering load's rule (dropping those it makes redundant: an
 * older rule whose ts is <= ts). At most MANIFEST_COVERS_MAX are kept: the
 * oldest go first, so the newest loads' rules always hold. */
void manifest_add_cover(manifest *m, uint64_t version, int64_t ts);
/* 1 if an online write made over version `base` with timestamp ts is
 * retired by a covering load of m. */
int manifest_covered(const manifest *m, uint64_t base, int64_t ts);
/* Add the speed-layer files of from's table (tables[0]) to to's, each to
 * every region of to that its region overlaps. */
void manifest_keep_speed(const manifest *from, manifest *to);
/* 1 if m's table has a speed-layer file. */
int manifest_has_speed(const manifest *m);
/* Remove the speed-layer files of m's table. */
void manifest_drop_speed(manifest *m);
/* Append a source (path copied). */
void manifest_add_source(manifest *m, uint64_t fingerprint, uint64_t version, int64_t loaded_ms,
                         const char *path);
/* The table named name (canonical) or NULL. */
manifest_table *manifest_find_table(const manifest *m, const char *name);

/* Index of the region holding row (binary search over starts). */
size_t manifest_region_for_row(const manifest_table *t, const uint8_t *row, size_t n);

/* Totals over all tables and regions. */
uint64_t manifest_file_count(const manifest *m);
uint64_t manifest_total_bytes(const manifest *m);

/* 1 if name is a valid store file name ([0-9a-f]{1,32}). */
int manifest_file_name_ok(const char *name);

/* Check the publish group: tables[0] is a table (not an index table), at
 * most STORE_INDEX_MAX more follow, each a well-formed index of tables[0]
 * (store_index_def.h), no two alike. KILN_INVALID saying what is wrong. */
kiln_status manifest_check_tables(const manifest *m, kiln_err *err);

/* Append the manifest record to out; returns its CRC32C (what CURRENT holds). */
uint32_t manifest_encode(const manifest *m, kbuf *out);
/* Decode and check a manifest record: frame, body, regions contiguous and equal
 * to the schema's splits, file names well formed, families known. `what`
 * names the file in errors; *crc may be NULL. The tables are checked with
 * manifest_check_tables. KILN_CORRUPTION otherwise. */
kiln_status manifest_decode(const uint8_t *p, size_t n, const char *what, manifest *out,
                            uint32_t *crc, kiln_err *err);

void manifest_pointer_encode(const manifest_pointer *ptr, kbuf *out);
kiln_status manifest_pointer_decode(const uint8_t *p, size_t n, const char *what,
                                    manifest_pointer *out, kiln_err *err);

#endif
