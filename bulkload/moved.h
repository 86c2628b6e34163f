/* moved.h -- JOB/_MOVED, the record a `kiln load --move` writes into a job
 * output before it removes the output's HFile names: which table and version
 * took the files, and the fingerprint the output had whole. Text, so that it
 * reads like the output's other markers (_SUCCESS, _job.json), and checked:
 *
 *   kiln-moved 1
 *   table NAME              canonical "namespace:table", printable, no spaces
 *   version V               decimal, > 0
 *   fingerprint HEX16       16 lower-case hex digits
 *   crc32c HEX8             CRC32C of the four lines above, newlines included
 *
 * Every line ends with '\n' and nothing follows the last. Exactly one text
 * encodes a record, so moved_record_format of a parsed record gives back the
 * bytes it was parsed from.
 */
#ifndef KILN_BULKLOAD_MOVED_H
#define KILN_BULKLOAD_MOVED_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/status.h"
#include "storage/store/schema.h"

#define MOVED_RECORD_MAX (SCHEMA_NAME_MAX + 96)   /* longest text */

typedef struct moved_record {
    char table[SCHEMA_NAME_MAX + 1];
    uint64_t version;
    uint64_t fingerprint;
} moved_record;

/* The record's text into out (cap >= MOVED_RECORD_MAX + 1, NUL-terminated).
 * Returns its length, 0 if the record cannot be written (an empty or too
 * long table name, one with spaces or control bytes, version 0). */
size_t moved_record_format(const moved_record *r, char *out, size_t cap);

/* Parse the n bytes read from path. KILN_CORRUPTION naming path and the line
 * (or the checksum) when they are not exactly one record. */
kiln_status moved_record_parse(const char *path, const uint8_t *p, size_t n, moved_record *out,
                               kiln_err *err);

#endif
