/* cellkey.c -- the order-preserving byte encoding of HBase cell keys.
 *
 * Escaping copies runs between zero bytes with memcpy, so text keys (no
 * zeros) cost one copy.
 */
#include "jobs/cellkey.h"

#include <string.h>

#include "storage/base/coding.h"

#define CELLKEY_SIGN 0x8000000000000000ull

static void
cellkey_field(kbuf *out, const uint8_t *p, size_t n)
{
    buf_reserve(out, n + 2);
    const uint8_t *end = p + n;
    while (p < end) {
        const uint8_t *z = memchr(p, 0, (size_t)(end - p));
        if (z == NULL) {
            buf_append(out, p, (size_t)(end - p));
            break;
        }
        buf_append(out, p, (size_t)(z - p));
        buf_append_u8(out, 0x00);
        buf_append_u8(out, 0xFF);
        p = z + 1;
    }
    buf_append_u8(out, 0x00);
    buf_append_u8(out, 0x00);
}

void
cellkey_append(kbuf *out, const kiln_cell *c)
{
    cellkey_field(out, c->row, c->row_len);
    cellkey_field(out, c->family, c->family_len);
    cellkey_field(out, c->qualifier, c->qualifier_len);
    buf_append_be64(out, ~((uint64_t)c->ts ^ CELLKEY_SIGN));
    buf_append_u8(out, (uint8_t)(255 - c->type));
}

void
cellkey_append_row(kbuf *out, const uint8_t *row, size_t n)
{
    cellkey_field(out, row, n);
}

/* Unescape one field starting at *p; appends to scratch. Returns 0 or -1. */
static int
cellkey_unfield(const uint8_t **p, const uint8_t *end, kbuf *scratch)
{
    const uint8_t *q = *p;
    for (;;) {
        const uint8_t *z = memchr(q, 0, (size_t)(end - q));
        if (z == NULL || z + 1 >= end)
            return -1;
        buf_append(scratch, q, (size_t)(z - q));
        if (z[1] == 0x00) {
            *p = z + 2;
            return 0;
        }
        if (z[1] != 0xFF)
            return -1;
        buf_append_u8(scratch, 0x00);
        q = z + 2;
    }
}

kiln_status
cellkey_decode(kslice key, kbuf *scratch, kiln_cell *c, kiln_err *err)
{
    buf_reset(scratch);
    const uint8_t *p = key.p, *end = key.p + key.n;
    size_t len[3];
    for (int i = 0; i < 3; i++) {
        size_t before = scratch->len;
        if (key.n == 0 || cellkey_unfield(&p, end, scratch) != 0)
            return status_set(err, KILN_CORRUPTION, "cell key: malformed field %d", i);
        len[i] = scratch->len - before;
    }
    if (end - p != 9)
        return status_set(err, KILN_CORRUPTION, "cell key: %ld bytes after the qualifier, not 9",
                          (long)(end - p));
    c->row = scratch->data;
    c->row_len = (uint32_t)len[0];
    c->family = scratch->data + len[0];
    c->family_len = (uint32_t)len[1];
    c->qualifier = scratch->data + len[0] + len[1];
    c->qualifier_len = (uint32_t)len[2];
    c->ts = (int64_t)(~coding_get_be64(p) ^ CELLKEY_SIGN);
    c->type = (uint8_t)(255 - p[8]);
    return KILN_OK;
}
