/* fuzz_cellset.c -- libFuzzer target for CellSet request bodies
 * (cellset_parse.c): the bodies of REST writes in JSON, XML and protobuf.
 *
 * The first byte picks the parser: 'j' JSON, 'x' XML, any other protobuf;
 * the rest is the body. A body is refused with KILN_INVALID and a message
 * naming the parser (and an empty model), or parses to a model whose every
 * slice lies inside its arena; the Puts made of an accepted model then
 * validate or are refused cleanly, and what validates encodes and decodes
 * to the same bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serving/cellset_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    http_rep rep = data[0] == 'j' ? HTTP_REP_JSON : data[0] == 'x' ? HTTP_REP_XML : HTTP_REP_PB;
    /* a copy of exactly the body, so a read past it is caught */
    uint8_t *body = malloc(size - 1 ? size - 1 : 1);
    memcpy(body, data + 1, size - 1);
    cellset cs;
    cellset_init(&cs);
    kiln_err err;
    status_clear(&err);
    kiln_status st = cellset_parse(body, size - 1, rep, &cs, &err);
    if (st != KILN_OK) {
        if (st != KILN_INVALID || strncmp(err.msg, "cellset: ", 9) != 0 || cs.nrows != 0)
            abort();
        goto out;
    }
    size_t cells = 0;
    for (size_t r = 0; r < cs.nrows; r++) {
        const cellset_row *row = &cs.rows[r];
        if (row->first != cells || (uint64_t)row->key_off + row->key_len > cs.bytes.len)
            abort();
        cells += row->count;
        for (size_t i = 0; i < row->count; i++) {
            const cellset_cell *c = &cs.cells[row->first + i];
            if ((uint64_t)c->column_off + c->column_len > cs.bytes.len ||
                (uint64_t)c->value_off + c->value_len > cs.bytes.len || c->ts < 0)
                abort();
        }
    }
    if (cells != cs.ncells)
        abort();
    kslice path_row = kslice_str("path-row");
    kslice cols[2] = {kslice_str("f:a"), kslice_str("g")};
    kiln_mutation *m;
    size_t n;
    status_clear(&err);
    if (cellset_puts(&cs, &path_row, cols, 2, &m, &n, &err) != KILN_OK) {
        if (err.code != KILN_INVALID || m != NULL)
            abort();
        goto out;
    }
    kbuf enc = KBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        status_clear(&err);
        if (mutation_validate(&m[i], &err) == KILN_OK) {
            buf_reset(&enc);
            mutation_encode(&m[i], &enc);
            kiln_mutation back;
            size_t used;
            status_clear(&err);
            if (mutation_decode(enc.data, enc.len, "fuzz", &back, &used, &err) != KILN_OK ||
                used != enc.len || back.count != m[i].count ||
                !kslice_eq(mutation_row(&back), mutation_row(&m[i])))
                abort();
            mutation_free(&back);
        }
        mutation_free(&m[i]);
    }
    buf_free(&enc);
    free(m);
out:
    cellset_free(&cs);
    free(body);
    return 0;
}
