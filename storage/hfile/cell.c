/* cell.c -- the HBase cell: key serialization and comparator. */
#include "storage/hfile/cell.h"

#include "storage/base/coding.h"

#include <stdio.h>
#include <string.h>

static int
bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    if (c != 0)
        return c < 0 ? -1 : 1;
    return an < bn ? -1 : an > bn;
}

/* The order of two keys of equal rows. */
static inline int
cell_compare_in_row(const kiln_cell *a, const kiln_cell *b)
{
    int c;
    /* last-on-row: empty family and qualifier with type Minimum sorts last */
    int alast = a->family_len == 0 && a->qualifier_len == 0 && a->type == CELL_TYPE_MINIMUM;
    int blast = b->family_len == 0 && b->qualifier_len == 0 && b->type == CELL_TYPE_MINIMUM;
    if (alast || blast) {
        if (alast && blast)
            return 0;
        return alast ? 1 : -1;
    }
    c = bytes_cmp(a->family, a->family_len, b->family, b->family_len);
    if (c != 0)
        return c;
    c = bytes_cmp(a->qualifier, a->qualifier_len, b->qualifier, b->qualifier_len);
    if (c != 0)
        return c;
    if (a->ts != b->ts)
        return a->ts > b->ts ? -1 : 1;
    if (a->type != b->type)
        return a->type > b->type ? -1 : 1;
    return 0;
}

int
cell_compare(const kiln_cell *a, const kiln_cell *b)
{
    int c = bytes_cmp(a->row, a->row_len, b->row, b->row_len);
    if (c != 0)
        return c;
    return cell_compare_in_row(a, b);
}

int
cell_compare_skip(const kiln_cell *a, const kiln_cell *b, uint32_t skip)
{
    uint32_t sa = a->row_len < skip ? a->row_len : skip;
    uint32_t sb = b->row_len < skip ? b->row_len : skip;
    /* (no arithmetic on a NULL row of length 0) */
    const uint8_t *ra = sa ? a->row + sa : a->row, *rb = sb ? b->row + sb : b->row;
    int c = bytes_cmp(ra, a->row_len - sa, rb, b->row_len - sb);
    if (c != 0)
        return c;
    return cell_compare_in_row(a, b);
}

kiln_status
cell_key_decode(const uint8_t *key, size_t klen, kiln_cell *c, kiln_err *err)
{
    if (klen < CELL_KEY_INFRASTRUCTURE)
        return status_set(err, KILN_CORRUPTION, "key of %zu bytes is shorter than %d", klen,
                          CELL_KEY_INFRASTRUCTURE);
    size_t rlen = coding_get_be16(key);
    if (rlen + CELL_KEY_INFRASTRUCTURE > klen)
        return status_set(err, KILN_CORRUPTION, "key row length %zu overruns key of %zu bytes",
                          rlen, klen);
    size_t flen = key[2 + rlen];
    if (rlen + flen + CELL_KEY_INFRASTRUCTURE > klen)
        return status_set(err, KILN_CORRUPTION,
                          "key family length %zu overruns key of %zu bytes", flen, klen);
    size_t qlen = klen - rlen - flen - CELL_KEY_INFRASTRUCTURE;
    c->row = key + 2;
    c->row_len = (uint32_t)rlen;
    c->family = key + 3 + rlen;
    c->family_len = (uint32_t)flen;
    c->qualifier = key + 3 + rlen + flen;
    c->qualifier_len = (uint32_t)qlen;
    c->ts = (int64_t)coding_get_be64(key + klen - 9);
    c->type = key[klen - 1];
    return KILN_OK;
}

int
cell_key_compare(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    kiln_cell ca, cb;
    if (cell_key_decode(a, alen, &ca, NULL) != KILN_OK ||
        cell_key_decode(b, blen, &cb, NULL) != KILN_OK)
        return bytes_cmp(a, alen, b, blen);
    return cell_compare(&ca, &cb);
}

int
cell_compare_key(const kiln_cell *a, const uint8_t *key, size_t klen)
{
    kiln_cell cb;
    if (cell_key_decode(key, klen, &cb, NULL) != KILN_OK)
        return 1;
    return cell_compare(a, &cb);
}

size_t
cell_key_len(const kiln_cell *c)
{
    return (size_t)c->row_len + c->family_len + c->qualifier_len + CELL_KEY_INFRASTRUCTURE;
}

void
cell_key_write(const kiln_cell *c, uint8_t *out)
{
    coding_put_be16(out, (uint16_t)c->row_len);
    out += 2;
    if (c->row_len)
        memcpy(out, c->row, c->row_len);
    out += c->row_len;
    *out++ = (uint8_t)c->family_len;
    if (c->family_len)
        memcpy(out, c->family, c->family_len);
    out += c->family_len;
    if (c->qualifier_len)
        memcpy(out, c->qualifier, c->qualifier_len);
    out += c->qualifier_len;
    coding_put_be64(out, (uint64_t)c->ts);
    out[8] = c->type;
}

void
cell_key_append(const kiln_cell *c, kbuf *b)
{
    size_t n = cell_key_len(c);
    buf_reserve(b, n);
    cell_key_write(c, b->data + b->len);
    b->len += n;
}

kiln_status
cell_validate(const kiln_cell *c, kiln_err *err)
{
    if (c->row_len > CELL_ROW_MAX)
        return status_set(err, KILN_INVALID, "row of %u bytes exceeds the limit of %d",
                          c->row_len, CELL_ROW_MAX);
    if (c->family_len > CELL_FAMILY_MAX)
        return status_set(err, KILN_INVALID, "family of %u bytes exceeds the limit of %d",
                          c->family_len, CELL_FAMILY_MAX);
    if (c->tags_len > 0xFFFF)
        return status_set(err, KILN_INVALID, "tags of %u bytes exceed the limit of 65535",
                          c->tags_len);
    return KILN_OK;
}

const char *
cell_type_name(uint8_t type)
{
    switch (type) {
    case CELL_TYPE_MINIMUM:               return "Minimum";
    case CELL_TYPE_PUT:                   return "Put";
    case CELL_TYPE_DELETE:                return "Delete";
    case CELL_TYPE_DELETE_FAMILY_VERSION: return "DeleteFamilyVersion";
    case CELL_TYPE_DELETE_COLUMN:         return "DeleteColumn";
    case CELL_TYPE_DELETE_FAMILY:         return "DeleteFamily";
    case CELL_TYPE_MAXIMUM:               return "Maximum";
    }
    return NULL;
}

int
cell_type_parse(const char *name, uint8_t *type)
{
    static const uint8_t codes[] = {CELL_TYPE_PUT, CELL_TYPE_DELETE,
                                    CELL_TYPE_DELETE_FAMILY_VERSION, CELL_TYPE_DELETE_COLUMN,
                                    CELL_TYPE_DELETE_FAMILY, CELL_TYPE_MAXIMUM, CELL_TYPE_MINIMUM};
    for (size_t i = 0; i < sizeof codes; i++) {
        if (strcmp(name, cell_type_name(codes[i])) == 0) {
            *type = codes[i];
            return 0;
        }
    }
    return -1;
}

void
cell_first_on_row(kiln_cell *c, const uint8_t *row, uint32_t row_len)
{
    memset(c, 0, sizeof *c);
    c->row = row;
    c->row_len = row_len;
    c->ts = CELL_LATEST_TIMESTAMP;
    c->type = CELL_TYPE_MAXIMUM;
}

void
cell_to_string_binary(kbuf *b, const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    buf_reserve(b, n);
    for (size_t i = 0; i < n; i++) {
        uint8_t ch = p[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
            buf_append_u8(b, ch);
        } else {
            char esc[4] = {'\\', 'x', hex[ch >> 4], hex[ch & 15]};
            buf_append(b, esc, 4);
        }
    }
}

static int
hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int
cell_from_string_binary(kbuf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            buf_append_u8(out, (uint8_t)s[i]);
            continue;
        }
        if (i + 3 >= n || s[i + 1] != 'x')
            return -1;
        int hi = hexval(s[i + 2]), lo = hexval(s[i + 3]);
        if (hi < 0 || lo < 0)
            return -1;
        buf_append_u8(out, (uint8_t)(hi * 16 + lo));
        i += 3;
    }
    return 0;
}
