/* mutation.h -- one row's online changes, applied atomically: the unit the
 * write path (the write-ahead log, the memstores) and every write API
 * (REST, Redis, the kiln client) share.
 *
 * A mutation is a row and a list of cells to add to it: Puts and delete
 * markers of HBase's four kinds (cell.h), each with a family, a qualifier, a
 * timestamp and (Puts) a value. A timestamp of CELL_LATEST_TIMESTAMP means
 * "now": the write path replaces it with the server's clock when it applies
 * the mutation, except for a Delete (one version) at LATEST, which HBase
 * resolves to the newest version's timestamp (the write path reads it).
 * An Increment is a list of (family, qualifier, delta): the write path reads
 * the current 8-byte big-endian values, adds, and applies Puts.
 *
 * Encoding (the write-ahead log's payload and nothing else), big-endian:
 *
 *   u16 row length R | R row | u32 cell count N |
 *   N x ( u8 type | i64 ts | u8 family length F | F family |
 *         u32 qualifier length Q | Q qualifier | u32 value length V | V value )
 *
 * Ownership: a kiln_mutation owns copies of every byte given to it; the
 * cells mutation_cell returns borrow from it until the next change or free.
 * Single-threaded.
 */
#ifndef KILN_MUTATION_H
#define KILN_MUTATION_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"
#include "storage/hfile/cell.h"

/* Durability of a write, as HBase names it. DEFAULT takes the table's
 * (schema property "durability", SYNC_WAL when unset). */
typedef enum kiln_durability {
    KILN_DUR_DEFAULT = 0,
    KILN_DUR_SKIP_WAL = 1,    /* memstore only: lost on a crash until flushed */
    KILN_DUR_ASYNC_WAL = 2,   /* logged, synced in the background */
    KILN_DUR_SYNC_WAL = 3     /* logged and fsynced before the write is acknowledged */
} kiln_durability;

/* "SKIP_WAL", "ASYNC_WAL", "SYNC_WAL" ("FSYNC_WAL" parses as SYNC_WAL),
 * "USE_DEFAULT"; 0 on success, -1 if unknown. */
int mutation_durability_parse(const char *name, kiln_durability *out);
const char *mutation_durability_name(kiln_durability d);

typedef struct kiln_mut_cell {
    uint8_t type;             /* CELL_TYPE_PUT or one of the four delete types */
    int64_t ts;               /* CELL_LATEST_TIMESTAMP: now (see above) */
    uint32_t family_off, family_len;
    uint32_t qualifier_off, qualifier_len;
    uint32_t value_off, value_len;
} kiln_mut_cell;

typedef struct kiln_mutation {
    kbuf bytes;               /* row, then the cells' families, qualifiers and values */
    uint32_t row_len;         /* the row is bytes[0, row_len) */
    kiln_mut_cell *cells;
    size_t count, cap;
} kiln_mutation;

/* An empty mutation of row[0..n) (n <= CELL_ROW_MAX; checked by
 * mutation_validate, not here). */
void mutation_init(kiln_mutation *m, const uint8_t *row, size_t n);
void mutation_free(kiln_mutation *m);   /* m may be NULL */
/* Drop the cells, keep the row. */
void mutation_clear_cells(kiln_mutation *m);

void mutation_put(kiln_mutation *m, const void *family, size_t flen, const void *qualifier,
                  size_t qlen, int64_t ts, const void *value, size_t vlen);
/* A delete marker of `type` (CELL_TYPE_DELETE, _DELETE_COLUMN,
 * _DELETE_FAMILY, _DELETE_FAMILY_VERSION). A family delete's qualifier is
 * empty. */
void mutation_delete(kiln_mutation *m, uint8_t type, const void *family, size_t flen,
                     const void *qualifier, size_t qlen, int64_t ts);

static inline kslice
mutation_row(const kiln_mutation *m)
{
    return kslice_make(m->bytes.data, m->row_len);
}

/* Cell i as a kiln_cell borrowing from m (mvcc 0, no tags). */
kiln_cell mutation_cell(const kiln_mutation *m, size_t i);

/* Check the row and every cell fit the format (cell_validate), the types
 * are Put or a delete type, and there is at least one cell. KILN_INVALID
 * naming the row and the cell otherwise. */
kiln_status mutation_validate(const kiln_mutation *m, kiln_err *err);

/* Append m's encoding to out. */
void mutation_encode(const kiln_mutation *m, kbuf *out);
/* Decode one mutation from p[0..n) into m (initialized by the call) and
 * set *used to the bytes it took. KILN_CORRUPTION naming `what` and the
 * offset if the bytes are short or malformed (m is then empty). */
kiln_status mutation_decode(const uint8_t *p, size_t n, const char *what, kiln_mutation *m,
                            size_t *used, kiln_err *err);

#endif
