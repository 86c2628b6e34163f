/* fuzz_scanner.c -- libFuzzer target for the bodies a scanner is created
 * from: scanner_spec.c (JSON, XML, protobuf) and storage/query/filter.c (the
 * filter model).
 *
 * The first byte picks the parser: 'j' JSON, 'x' XML, 'p' protobuf, any
 * other byte the filter model alone; the rest is the body. A body must be
 * refused with KILN_INVALID and a message naming the parser, or give a spec
 * within its bounds. A filter that parses (from a spec or alone) is run over
 * a few rows, and what it keeps must be a subsequence of each row's cells.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serving/scanner_spec.h"
#include "storage/query/filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CELLS 6

/* Rows with binary and empty parts, several versions of one column. */
static const struct {
    const char *row;
    const char *cells[FUZZ_CELLS][4];   /* family, qualifier, ts, value */
} fuzz_rows[] = {
    {"a", {{"f", "", "1", ""}, {"f", "q", "9", "apple"}, {"f", "q", "3", "apricot"},
           {"g", "a\x01" "b", "5", "Banana"}, {"g", "c", "7", "cherry"}, {"h", "z", "0", "\x00\xff"}}},
    {"row-17", {{"f", "q", "2", "x"}, {NULL, NULL, NULL, NULL}}},
    {"\xff\xfe", {{"g", "c", "100", "over"}, {"g", "d", "100", "under"}, {NULL, NULL, NULL, NULL}}},
};

static void
fuzz_run_filter(filter *f)
{
    kiln_cell cells[FUZZ_CELLS], out[FUZZ_CELLS];
    for (int pass = 0; pass < 2; pass++) {
        for (size_t r = 0; r < sizeof fuzz_rows / sizeof fuzz_rows[0]; r++) {
            size_t n = 0;
            const char *row = fuzz_rows[r].row;
            for (; n < FUZZ_CELLS && fuzz_rows[r].cells[n][0] != NULL; n++) {
                kiln_cell *c = &cells[n];
                memset(c, 0, sizeof *c);
                c->row = (const uint8_t *)row;
                c->row_len = (uint32_t)strlen(row);
                c->family = (const uint8_t *)fuzz_rows[r].cells[n][0];
                c->family_len = (uint32_t)strlen(fuzz_rows[r].cells[n][0]);
                c->qualifier = (const uint8_t *)fuzz_rows[r].cells[n][1];
                c->qualifier_len = (uint32_t)strlen(fuzz_rows[r].cells[n][1]);
                c->ts = atoll(fuzz_rows[r].cells[n][2]);
                c->type = CELL_TYPE_PUT;
                c->value = (const uint8_t *)fuzz_rows[r].cells[n][3];
                c->value_len = (uint32_t)strlen(fuzz_rows[r].cells[n][3]) + (r == 0 && n == 5 ? 2 : 0);
            }
            store_row sr = {kslice_make(row, strlen(row)), cells, n};
            int done = 0;
            size_t kept = filter_row(f, &sr, out, &done);
            if (kept > n)
                abort();
            size_t j = 0;   /* every kept cell is one of the row's, in order */
            for (size_t i = 0; i < kept; i++) {
                while (j < n && (out[i].qualifier != cells[j].qualifier || out[i].ts != cells[j].ts))
                    j++;
                if (j == n)
                    abort();
                j++;
            }
            if (done && filter_row(f, &sr, out, &done) != 0)
                abort();   /* once done, nothing more passes */
        }
        filter_reset(f);
    }
}

static void
fuzz_filter_text(const uint8_t *p, size_t n)
{
    filter *f = NULL;
    kiln_err err;
    status_clear(&err);
    kiln_status st = filter_parse((const char *)p, n, &f, &err);
    if (st != KILN_OK) {
        if (st != KILN_INVALID || f != NULL || strncmp(err.msg, "filter: ", 8) != 0)
            abort();
        return;
    }
    if (f == NULL)
        abort();
    fuzz_run_filter(f);
    filter_free(f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    /* an exact-size copy, so a read past the body is caught */
    size_t n = size - 1;
    uint8_t *body = malloc(n ? n : 1);
    if (body == NULL)
        return 0;
    memcpy(body, data + 1, n);
    http_rep rep = data[0] == 'j'   ? HTTP_REP_JSON
                   : data[0] == 'x' ? HTTP_REP_XML
                   : data[0] == 'p' ? HTTP_REP_PB
                                    : HTTP_REP_RAW;
    if (rep == HTTP_REP_RAW) {
        fuzz_filter_text(body, n);
        free(body);
        return 0;
    }
    scanner_spec s;
    scanner_spec_init(&s);
    kiln_err err;
    status_clear(&err);
    kiln_status st = scanner_spec_parse(body, n, rep, &s, &err);
    if (st != KILN_OK) {
        if (st != KILN_INVALID || strncmp(err.msg, "scanner: ", 9) != 0)
            abort();
    } else {
        if (s.ncols > SCANNER_SPEC_COLUMNS_MAX || s.batch < 0 || s.batch > INT32_MAX ||
            s.limit < 0 || s.max_versions < 0 || s.start_time < 0 ||
            (s.end_time > 0 && s.start_time >= s.end_time) || s.start.len > CELL_ROW_MAX ||
            s.end.len > CELL_ROW_MAX)
            abort();
        for (size_t i = 0; i < s.ncols; i++) {
            if (s.cols[i].family == NULL || s.cols[i].family[0] == '\0')
                abort();
        }
        if (s.has_filter)
            fuzz_filter_text(s.filter.data, s.filter.len);
    }
    scanner_spec_free(&s);
    free(body);
    return 0;
}
