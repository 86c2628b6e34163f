/* mutation.c -- building, checking and encoding one row's online changes
 * (mutation.h).
 */
#include "storage/store/mutation.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "storage/base/store_rec.h"

int
mutation_durability_parse(const char *name, kiln_durability *out)
{
    static const struct {
        const char *name;
        kiln_durability d;
    } names[] = {
        {"USE_DEFAULT", KILN_DUR_DEFAULT}, {"SKIP_WAL", KILN_DUR_SKIP_WAL},
        {"ASYNC_WAL", KILN_DUR_ASYNC_WAL}, {"SYNC_WAL", KILN_DUR_SYNC_WAL},
        {"FSYNC_WAL", KILN_DUR_SYNC_WAL},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcasecmp(name, names[i].name) == 0) {
            *out = names[i].d;
            return 0;
        }
    }
    return -1;
}

const char *
mutation_durability_name(kiln_durability d)
{
    switch (d) {
    case KILN_DUR_SKIP_WAL:
        return "SKIP_WAL";
    case KILN_DUR_ASYNC_WAL:
        return "ASYNC_WAL";
    case KILN_DUR_SYNC_WAL:
        return "SYNC_WAL";
    default:
        return "USE_DEFAULT";
    }
}

void
mutation_init(kiln_mutation *m, const uint8_t *row, size_t n)
{
    memset(m, 0, sizeof *m);
    buf_init(&m->bytes);
    buf_append(&m->bytes, row, n);
    m->row_len = (uint32_t)n;
}

void
mutation_free(kiln_mutation *m)
{
    if (m == NULL)
        return;
    buf_free(&m->bytes);
    free(m->cells);
    memset(m, 0, sizeof *m);
}

void
mutation_clear_cells(kiln_mutation *m)
{
    buf_resize(&m->bytes, m->row_len);
    m->count = 0;
}

static uint32_t
mutation_add_bytes(kiln_mutation *m, const void *p, size_t n)
{
    uint32_t off = (uint32_t)m->bytes.len;
    if (n > 0)
        buf_append(&m->bytes, p, n);
    return off;
}

static void
mutation_add(kiln_mutation *m, uint8_t type, const void *family, size_t flen,
             const void *qualifier, size_t qlen, int64_t ts, const void *value, size_t vlen)
{
    if (m->count == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 4;
        m->cells = kiln_realloc(m->cells, m->cap * sizeof *m->cells);
    }
    kiln_mut_cell *c = &m->cells[m->count++];
    c->type = type;
    c->ts = ts;
    c->family_len = (uint32_t)flen;
    c->family_off = mutation_add_bytes(m, family, flen);
    c->qualifier_len = (uint32_t)qlen;
    c->qualifier_off = mutation_add_bytes(m, qualifier, qlen);
    c->value_len = (uint32_t)vlen;
    c->value_off = mutation_add_bytes(m, value, vlen);
}

void
mutation_put(kiln_mutation *m, const void *family, size_t flen, const void *qualifier,
             size_t qlen, int64_t ts, const void *value, size_t vlen)
{
    mutation_add(m, CELL_TYPE_PUT, family, flen, qualifier, qlen, ts, value, vlen);
}

void
mutation_delete(kiln_mutation *m, uint8_t type, const void *family, size_t flen,
                const void *qualifier, size_t qlen, int64_t ts)
{
    mutation_add(m, type, family, flen, qualifier, qlen, ts, NULL, 0);
}

kiln_cell
mutation_cell(const kiln_mutation *m, size_t i)
{
    const kiln_mut_cell *mc = &m->cells[i];
    const uint8_t *b = m->bytes.data != NULL ? m->bytes.data : (const uint8_t *)"";
    kiln_cell c;
    memset(&c, 0, sizeof c);
    c.row = b;
    c.row_len = m->row_len;
    c.family = b + mc->family_off;
    c.family_len = mc->family_len;
    c.qualifier = b + mc->qualifier_off;
    c.qualifier_len = mc->qualifier_len;
    c.ts = mc->ts;
    c.type = mc->type;
    c.value = b + mc->value_off;
    c.value_len = mc->value_len;
    return c;
}

static int
mutation_type_ok(uint8_t t)
{
    return t == CELL_TYPE_PUT || t == CELL_TYPE_DELETE || t == CELL_TYPE_DELETE_COLUMN ||
           t == CELL_TYPE_DELETE_FAMILY || t == CELL_TYPE_DELETE_FAMILY_VERSION;
}

/* The row as errors show it (at most 64 bytes, escaped), into b. */
static const char *
mutation_shown(const kiln_mutation *m, kbuf *b)
{
    cell_to_string_binary(b, m->bytes.data, m->row_len < 64 ? m->row_len : 64);
    buf_append_u8(b, 0);
    return (const char *)b->data;
}

kiln_status
mutation_validate(const kiln_mutation *m, kiln_err *err)
{
    kbuf shown = KBUF_INIT;
    kiln_status st = KILN_OK;
    if (m->row_len == 0)
        st = status_set(err, KILN_INVALID, "a mutation needs a row");
    else if (m->row_len > CELL_ROW_MAX)
        st = status_set(err, KILN_INVALID, "row %s...: %u bytes, at most %d",
                        mutation_shown(m, &shown), m->row_len, CELL_ROW_MAX);
    else if (m->count == 0)
        st = status_set(err, KILN_INVALID, "row %s: no cell to write", mutation_shown(m, &shown));
    for (size_t i = 0; st == KILN_OK && i < m->count; i++) {
        kiln_cell c = mutation_cell(m, i);
        kiln_err e2;
        status_clear(&e2);
        if (!mutation_type_ok(c.type))
            st = status_set(err, KILN_INVALID, "row %s cell %zu: type %u is not Put or a delete",
                            mutation_shown(m, &shown), i, c.type);
        else if (c.family_len == 0)
            st = status_set(err, KILN_INVALID, "row %s cell %zu: no family",
                            mutation_shown(m, &shown), i);
        else if (c.ts < 0)
            st = status_set(err, KILN_INVALID, "row %s cell %zu: negative timestamp %lld",
                            mutation_shown(m, &shown), i, (long long)c.ts);
        else if (cell_validate(&c, &e2) != KILN_OK)
            st = status_set(err, KILN_INVALID, "row %s cell %zu: %s", mutation_shown(m, &shown),
                            i, e2.msg);
    }
    buf_free(&shown);
    return st;
}

void
mutation_encode(const kiln_mutation *m, kbuf *out)
{
    buf_append_be16(out, (uint16_t)m->row_len);
    buf_append(out, m->bytes.data, m->row_len);
    buf_append_be32(out, (uint32_t)m->count);
    for (size_t i = 0; i < m->count; i++) {
        kiln_cell c = mutation_cell(m, i);
        buf_append_u8(out, c.type);
        buf_append_be64(out, (uint64_t)c.ts);
        buf_append_u8(out, (uint8_t)c.family_len);
        buf_append(out, c.family, c.family_len);
        buf_append_be32(out, c.qualifier_len);
        buf_append(out, c.qualifier, c.qualifier_len);
        buf_append_be32(out, c.value_len);
        buf_append(out, c.value, c.value_len);
    }
}

kiln_status
mutation_decode(const uint8_t *p, size_t n, const char *what, kiln_mutation *m, size_t *used,
                kiln_err *err)
{
    store_cur c;
    store_cur_init(&c, p, n);
    uint16_t rlen = store_cur_u16(&c);
    kslice row = store_cur_bytes(&c, rlen);
    mutation_init(m, row.p, row.n);
    uint32_t count = store_cur_u32(&c);
    /* every cell takes at least 18 bytes: a count beyond that is a lie */
    if (!c.failed && count > (size_t)(c.end - c.p) / 18)
        c.failed = 1;
    for (uint32_t i = 0; i < count && !c.failed; i++) {
        uint8_t type = store_cur_u8(&c);
        int64_t ts = (int64_t)store_cur_u64(&c);
        uint8_t flen = store_cur_u8(&c);
        kslice fam = store_cur_bytes(&c, flen);
        uint32_t qlen = store_cur_u32(&c);
        kslice qual = store_cur_bytes(&c, qlen);
        uint32_t vlen = store_cur_u32(&c);
        kslice val = store_cur_bytes(&c, vlen);
        if (c.failed)
            break;
        mutation_add(m, type, fam.p, fam.n, qual.p, qual.n, ts, val.p, val.n);
    }
    if (c.failed) {
        mutation_free(m);
        mutation_init(m, NULL, 0);
        return status_set(err, KILN_CORRUPTION, "%s: malformed mutation at byte %zu of %zu",
                          what, (size_t)(c.p - p), n);
    }
    *used = (size_t)(c.p - p);
    return KILN_OK;
}
