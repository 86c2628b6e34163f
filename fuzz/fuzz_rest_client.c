/* fuzz_rest_client.c -- libFuzzer target for what `kiln --server` parses
 * of outside bytes: a server's CellSet answer (cli/remote.c, on jansson and
 * its own strict base64) and an HBase shell filter string
 * (storage/query/shell_filter.c).
 *
 * The first byte picks the parser (odd: the answer, even: the filter); the
 * rest is its input. A decoded answer must count no more cells than its
 * bytes could hold; a translated filter must be JSON that parses back.
 */
#include <assert.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/remote.h"
#include "storage/query/shell_filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    kiln_err err;
    status_clear(&err);
    if (data[0] & 1) {
        size_t rows, cells;
        if (remote_decode_cellset(data + 1, size - 1, &rows, &cells, &err) == KILN_OK)
            assert(rows <= size && cells <= size);
        else
            assert(err.code == KILN_CORRUPTION && err.msg[0] != '\0');
        return 0;
    }
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    kbuf out = KBUF_INIT;
    if (shell_filter_to_json(text, &out, &err) == KILN_OK) {
        json_t *j = json_loadb((const char *)out.data, out.len, 0, NULL);
        assert(j != NULL && json_is_object(j));
        json_decref(j);
    } else {
        assert(err.code == KILN_INVALID && err.msg[0] != '\0');
    }
    buf_free(&out);
    free(text);
    return 0;
}
