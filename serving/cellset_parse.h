/* cellset_parse.h -- HBase REST's CellSet as a request body (PUT or POST of
 * /TABLE/ROW, /TABLE/fakerow and the check= forms), in the three encodings
 * the server writes for GET (http_rep.h):
 *
 *   JSON  {"Row":[{"key":B64,"Cell":[{"column":B64,"timestamp":N,"$":B64}]}]}
 *   XML   <CellSet><Row key="B64"><Cell column="B64" timestamp="N">B64</Cell></Row></CellSet>
 *   PB    CellSet { repeated Row rows = 1 }  Row { bytes key = 1; repeated Cell values = 2 }
 *         Cell { bytes row = 1; bytes column = 2; int64 timestamp = 3; bytes data = 4 }
 *         (HBase's CellSetMessage.proto and CellMessage.proto)
 *
 * Parsing keeps the model as the client sent it: a row may lack its key and
 * a cell its column or timestamp (HBase then takes the path's row, the
 * path's columns in order, and the latest timestamp). cellset_puts turns the
 * model into one Put mutation per row by those rules; the check=, increment
 * and append forms read the model directly (http_write.c).
 *
 * A column is "family:qualifier"; without a ':' it is a family alone (HBase's
 * CellUtil.parseColumn), which a Put refuses. Every error is KILN_INVALID
 * with a message naming the encoding and what is wrong ("cellset: JSON: Row
 * 2: Cell 1: column is not valid base64").
 *
 * Ownership: a cellset owns the decoded bytes; slices it returns are valid
 * until the next parse into it or cellset_free. Single-threaded.
 */
#ifndef KILN_CELLSET_PARSE_H
#define KILN_CELLSET_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "serving/http_rep.h"
#include "storage/base/buf.h"
#include "storage/base/status.h"
#include "storage/store/mutation.h"

#define CELLSET_ROWS_MAX 100000
#define CELLSET_CELLS_MAX 1000000

typedef struct cellset_cell {
    int has_column;
    uint32_t column_off, column_len;
    int64_t ts;                    /* CELL_LATEST_TIMESTAMP when absent */
    uint32_t value_off, value_len;
} cellset_cell;

typedef struct cellset_row {
    int has_key;
    uint32_t key_off, key_len;
    size_t first, count;           /* its cells: cells[first, first + count) */
} cellset_row;

typedef struct cellset {
    kbuf bytes;                    /* every decoded key, column and value */
    cellset_row *rows;
    size_t nrows, rcap;
    cellset_cell *cells;
    size_t ncells, ccap;
} cellset;

void cellset_init(cellset *cs);
void cellset_free(cellset *cs);   /* cs may be NULL */

/* Parse body p[0..n) in representation rep (HTTP_REP_JSON, _XML or _PB)
 * into cs (emptied first). KILN_INVALID naming what is malformed. */
kiln_status cellset_parse(const uint8_t *p, size_t n, http_rep rep, cellset *cs, kiln_err *err);

static inline kslice
cellset_slice(const cellset *cs, uint32_t off, uint32_t len)
{
    return kslice_make(cs->bytes.data + off, len);
}

/* Split a column "family[:qualifier]" at its first ':'. Returns 1 with a
 * qualifier (possibly empty), 0 for a family alone. */
int cellset_split_column(kslice column, kslice *family, kslice *qualifier);

/* One Put mutation per row of cs (*out: a new array of *n, each freed with
 * mutation_free, then free(*out)). A row without a key takes row (NULL:
 * none, an error); a cell without a column takes columns[i] for its i-th
 * such cell (ncols of them). KILN_INVALID naming the row and the cell: no
 * rows, a row without cells, a missing key or column, a column without
 * ':', a bad family name. */
kiln_status cellset_puts(const cellset *cs, const kslice *row, const kslice *columns,
                         size_t ncols, kiln_mutation **out, size_t *n, kiln_err *err);

#endif
