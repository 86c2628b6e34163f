/* schema.h -- a table's definition: its name, column families and their
 * settings, the split keys that cut it into regions, and table properties.
 *
 * Names: a table is "namespace:table" ("default" when no namespace is given).
 * A namespace is [A-Za-z0-9_]+; a table qualifier is [A-Za-z0-9_][A-Za-z0-9_.-]*;
 * a family is [A-Za-z0-9_][A-Za-z0-9_.-]* (HBase's rules, narrowed so every
 * name is a safe directory name). Families are kept sorted by name, which is
 * the order their cells take inside a row.
 *
 * The schema is stored as one record file (store_rec.h) named `schema` in the
 * table directory; its layout is in docs/storage-format.md §2.3.
 *
 * Ownership: a kiln_schema owns everything it points to; schema_free releases
 * it. Not thread-safe while being built; read-only use is safe to share.
 */
#ifndef KILN_SCHEMA_H
#define KILN_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "storage/hfile/bloom.h"
#include "storage/base/buf.h"
#include "storage/base/compress.h"
#include "storage/base/status.h"

#define SCHEMA_NAME_MAX 200              /* "namespace:table" */
#define SCHEMA_FAMILY_NAME_MAX 200
#define SCHEMA_DEFAULT_NAMESPACE "default"
#define SCHEMA_TTL_FOREVER 2147483647LL  /* HBase HConstants.FOREVER, seconds */
#define SCHEMA_KEEP_DEFAULT 2            /* view versions kept for rollback */
#define SCHEMA_KEEP_MAX 1000
#define SCHEMA_BLOCK_SIZE_MIN 512
#define SCHEMA_BLOCK_SIZE_MAX (64u * 1024 * 1024)
#define SCHEMA_FAMILIES_MAX 256
#define SCHEMA_FORMAT_VERSION 1
#define SCHEMA_MAGIC "KILNSCHM"

typedef struct schema_family {
    char name[SCHEMA_FAMILY_NAME_MAX + 1];
    uint32_t max_versions;      /* >= 1; default 1 */
    int64_t ttl_s;              /* seconds, 1..SCHEMA_TTL_FOREVER; default forever */
    kiln_codec codec;           /* default CODEC_SNAPPY */
    kiln_bloom_type bloom;      /* default BLOOM_ROW */
    uint32_t block_size;        /* default 65536 */
} schema_family;

typedef struct schema_prop {
    char *key;
    char *value;
} schema_prop;

typedef struct kiln_schema {
    char name[SCHEMA_NAME_MAX + 1];  /* canonical "namespace:table" */
    int64_t created_ms;
    uint32_t keep_versions;          /* versions kept for rollback, >= 1; default 2 */
    uint32_t salt_buckets;           /* 0 = not salted; else rows are stored under a
                                        hidden bucket byte (store_salt.h) */
    schema_family *families;         /* sorted by name */
    size_t family_count;
    kbuf *splits;                    /* strictly ascending, non-empty */
    size_t split_count;
    schema_prop *props;              /* sorted by key; free-form table properties */
    size_t prop_count;
} kiln_schema;

void schema_init(kiln_schema *s);
void schema_free(kiln_schema *s);   /* s may be NULL */

/* Canonicalize a table name ("t" -> "default:t") into out (SCHEMA_NAME_MAX+1
 * bytes). KILN_INVALID naming the offending name otherwise. */
kiln_status schema_name_canon(const char *name, char *out, kiln_err *err);
/* Split a canonical name into namespace and table (each SCHEMA_NAME_MAX+1 bytes). */
void schema_name_split(const char *canon, char *ns, char *table);
/* 1 if name is a valid family name. */
int schema_family_name_ok(const char *name, size_t n);

/* Fill f with the defaults for family `name` (not validated). */
void schema_family_defaults(schema_family *f, const char *name);
/* Parse "NAME[:key=value,...]" (keys versions, ttl, compression, bloom,
 * blocksize). KILN_INVALID naming the family and the bad setting. */
kiln_status schema_family_parse(const char *spec, schema_family *out, kiln_err *err);

/* Add a family (kept sorted). KILN_EXISTS for a duplicate name, KILN_INVALID
 * for bad settings. */
kiln_status schema_add_family(kiln_schema *s, const schema_family *f, kiln_err *err);
/* Add a split key (any order; schema_validate sorts and checks them). */
kiln_status schema_add_split(kiln_schema *s, const uint8_t *key, size_t n, kiln_err *err);
/* Set a property (insert or replace). */
void schema_set_prop(kiln_schema *s, const char *key, const char *value);
/* The property's value or NULL. */
const char *schema_get_prop(const kiln_schema *s, const char *key);

/* A salted table (salt_buckets > 1) without split keys gets one region per
 * bucket: split keys are the single bytes 0x01 .. N-1. Nothing otherwise. */
void schema_salt_default_splits(kiln_schema *s);

/* Sort the split keys and check the whole schema: name, at least one family,
 * split keys non-empty, at most CELL_ROW_MAX bytes and distinct, salt_buckets
 * 0..256. */
kiln_status schema_validate(kiln_schema *s, kiln_err *err);

/* The family named name[0..n) or NULL. */
const schema_family *schema_find_family(const kiln_schema *s, const uint8_t *name, size_t n);

/* Regions: split_count + 1. Region i covers [start_i, end_i) where start_0 and
 * the last end are empty (unbounded). */
static inline size_t
schema_region_count(const kiln_schema *s)
{
    return s->split_count + 1;
}

/* Append the schema record (store_rec frame) to out; returns its CRC32C. */
uint32_t schema_encode(const kiln_schema *s, kbuf *out);
/* Decode a schema record. `what` names the file in errors. *crc may be NULL.
 * KILN_CORRUPTION for a bad frame or body. */
kiln_status schema_decode(const uint8_t *p, size_t n, const char *what, kiln_schema *out,
                          uint32_t *crc, kiln_err *err);

/* Deep copy. */
void schema_copy(kiln_schema *dst, const kiln_schema *src);

#endif
