/* resp_keys.h -- how Redis keys map to rows and columns (resp_api.h states
 * the rules): the configured columns, the column a table's key reads, and
 * the resolution of a key to (table, row). Shared by the read commands
 * (resp_api.c) and the write commands (resp_write.c).
 *
 * Thread-safety: stateless; the reader belongs to the calling worker.
 */
#ifndef KILN_RESP_KEYS_H
#define KILN_RESP_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "serving/views.h"
#include "storage/base/buf.h"
#include "storage/store/schema.h"

typedef struct resp_api_column {
    char table[SCHEMA_NAME_MAX + 1];        /* canonical; "" = every table */
    char family[SCHEMA_FAMILY_NAME_MAX + 1];
    uint8_t *qualifier;                     /* owned */
    size_t qualifier_len;
} resp_api_column;

/* The column configured for table e among cols[0..n): the table's own,
 * else the first global one whose family the table has; NULL for none
 * ("the row's first cell"). */
const resp_api_column *resp_keys_column(const resp_api_column *cols, size_t n, views_entry *e);

/* Resolve key to a table entry and a row ("TABLE/ROW" when TABLE names a
 * table, else a row of database db). 0, or -1 with a Redis error in *why. */
int resp_keys_resolve(views_reader *r, kslice key, int db, views_entry **e, kslice *row,
                      const char **why);

#endif
