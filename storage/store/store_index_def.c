/* store_index_def.c -- secondary index definitions: the -D kiln.index spec,
 * the index table's schema and properties, checking an index table against
 * its base table, and the escaped index row key. Formats in
 * store_index_def.h and docs/storage-format.md §2.7.
 */
#include "storage/store/store_index_def.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/hfile/cell.h"

/* ------------------------------------------------------------------ definitions */

void
store_index_def_init(store_index_def *d)
{
    memset(d, 0, sizeof *d);
}

void
store_index_def_free(store_index_def *d)
{
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->ncols; i++)
        buf_free(&d->cols[i].qualifier);
    free(d->cols);
    store_index_def_init(d);
}

static void
store_index_add_col(store_index_def *d, const char *family, size_t fl, const uint8_t *q,
                    size_t ql)
{
    d->cols = kiln_realloc(d->cols, (d->ncols + 1) * sizeof *d->cols);
    store_index_column *c = &d->cols[d->ncols++];
    memcpy(c->family, family, fl);
    c->family[fl] = '\0';
    buf_init(&c->qualifier);
    buf_append(&c->qualifier, q, ql);
}

void
store_index_def_copy(store_index_def *dst, const store_index_def *src)
{
    store_index_def_init(dst);
    memcpy(dst->name, src->name, sizeof dst->name);
    for (size_t i = 0; i < src->ncols; i++)
        store_index_add_col(dst, src->cols[i].family, strlen(src->cols[i].family),
                            src->cols[i].qualifier.data, src->cols[i].qualifier.len);
}

int
store_index_def_equal(const store_index_def *a, const store_index_def *b)
{
    if (strcmp(a->name, b->name) != 0 || a->ncols != b->ncols)
        return 0;
    for (size_t i = 0; i < a->ncols; i++) {
        if (strcmp(a->cols[i].family, b->cols[i].family) != 0 ||
            !kslice_eq(buf_slice(&a->cols[i].qualifier), buf_slice(&b->cols[i].qualifier)))
            return 0;
    }
    return 1;
}

static int
store_index_name_ok(const char *p, size_t n)
{
    if (n == 0 || n > STORE_INDEX_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        int word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '_';
        if (!word && !(i > 0 && c == '-'))
            return 0;
    }
    return 1;
}

/* Columns "cf:q[,cf:q2...]" into d. */
static kiln_status
store_index_parse_columns(store_index_def *d, const char *p, size_t n, const char *what,
                          kiln_err *err)
{
    const char *end = p + n;
    kbuf q = KBUF_INIT;
    kiln_status st = KILN_OK;
    while (st == KILN_OK) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        const char *colon = memchr(p, ':', (size_t)(stop - p));
        buf_reset(&q);
        if (colon == NULL || !schema_family_name_ok(p, (size_t)(colon - p)))
            st = status_set(err, KILN_INVALID, "%s: '%.*s' is not FAMILY:QUALIFIER", what,
                            (int)(stop - p), p);
        else if (cell_from_string_binary(&q, colon + 1, (size_t)(stop - colon - 1)) != 0)
            st = status_set(err, KILN_INVALID, "%s: bad \\xNN escape in '%.*s'", what,
                            (int)(stop - p), p);
        else if (d->ncols >= STORE_INDEX_COLUMNS_MAX)
            st = status_set(err, KILN_INVALID, "%s: more than %d columns", what,
                            STORE_INDEX_COLUMNS_MAX);
        if (st != KILN_OK)
            break;
        for (size_t i = 0; i < d->ncols; i++) {
            if (strlen(d->cols[i].family) == (size_t)(colon - p) &&
                memcmp(d->cols[i].family, p, (size_t)(colon - p)) == 0 &&
                kslice_eq(buf_slice(&d->cols[i].qualifier), buf_slice(&q)))
                st = status_set(err, KILN_INVALID, "%s: column '%.*s' given twice", what,
                                (int)(stop - p), p);
        }
        if (st != KILN_OK)
            break;
        store_index_add_col(d, p, (size_t)(colon - p), q.data, q.len);
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    buf_free(&q);
    return st;
}

kiln_status
store_index_def_parse(const char *spec, store_index_def *out, kiln_err *err)
{
    store_index_def_init(out);
    const char *colon = strchr(spec, ':');
    size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
    if (!store_index_name_ok(spec, nl))
        return status_set(err, KILN_INVALID,
                          "index '%s': NAME must be 1..%d letters, digits, '_' or '-' (not "
                          "first), then :FAMILY:QUALIFIER[,FAMILY:QUALIFIER...]",
                          spec, STORE_INDEX_NAME_MAX);
    if (colon == NULL || colon[1] == '\0')
        return status_set(err, KILN_INVALID, "index '%s': no columns (NAME:FAMILY:QUALIFIER,...)",
                          spec);
    memcpy(out->name, spec, nl);
    out->name[nl] = '\0';
    char what[STORE_INDEX_NAME_MAX + 16];
    snprintf(what, sizeof what, "index %s", out->name);
    kiln_status st = store_index_parse_columns(out, colon + 1, strlen(colon + 1), what, err);
    if (st != KILN_OK)
        store_index_def_free(out);
    return st;
}

static void
store_index_qual_format(kbuf *out, const kbuf *q)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < q->len; i++) {
        uint8_t c = q->data[i];
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
        if (plain) {
            buf_append_u8(out, c);
        } else {
            char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            buf_append(out, e, 4);
        }
    }
}

void
store_index_columns_format(const store_index_def *d, kbuf *out)
{
    for (size_t i = 0; i < d->ncols; i++) {
        if (i > 0)
            buf_append_u8(out, ',');
        buf_append(out, d->cols[i].family, strlen(d->cols[i].family));
        buf_append_u8(out, ':');
        store_index_qual_format(out, &d->cols[i].qualifier);
    }
}

/* "<base>.idx.<name>" into out (SCHEMA_NAME_MAX + 1); -1 if too long. */
static int
store_index_table_name(const char *base, const char *name, char *out)
{
    size_t bl = strlen(base), il = strlen(STORE_INDEX_TABLE_INFIX), nl = strlen(name);
    if (bl + il + nl > SCHEMA_NAME_MAX)
        return -1;
    memcpy(out, base, bl);
    memcpy(out + bl, STORE_INDEX_TABLE_INFIX, il);
    memcpy(out + bl + il, name, nl + 1);
    return 0;
}

kiln_status
store_index_schema(const kiln_schema *base, const store_index_def *d, kiln_schema *out,
                   kiln_err *err)
{
    schema_init(out);
    for (size_t i = 0; i < d->ncols; i++) {
        const char *f = d->cols[i].family;
        if (schema_find_family(base, (const uint8_t *)f, strlen(f)) == NULL)
            return status_set(err, KILN_INVALID, "index %s: '%s' is not a family of table %s",
                              d->name, f, base->name);
    }
    if (d->ncols == 0)
        return status_set(err, KILN_INVALID, "index %s: no columns", d->name);
    if (store_index_table_name(base->name, d->name, out->name) != 0)
        return status_set(err, KILN_INVALID, "index %s of table %s: name longer than %d bytes",
                          d->name, base->name, SCHEMA_NAME_MAX);
    out->created_ms = base->created_ms;
    out->keep_versions = base->keep_versions;
    out->salt_buckets = base->salt_buckets;
    schema_family f;
    schema_family_defaults(&f, STORE_INDEX_FAMILY);
    f.bloom = BLOOM_NONE;
    kiln_status st = schema_add_family(out, &f, err);
    for (uint32_t b = 1; st == KILN_OK && b < out->salt_buckets; b++) {
        uint8_t k = (uint8_t)b;
        st = schema_add_split(out, &k, 1, err);
    }
    if (st != KILN_OK) {
        schema_free(out);
        return st;
    }
    kbuf cols = KBUF_INIT;
    store_index_columns_format(d, &cols);
    buf_append_u8(&cols, 0);
    schema_set_prop(out, STORE_INDEX_PROP_NAME, d->name);
    schema_set_prop(out, STORE_INDEX_PROP_OF, base->name);
    schema_set_prop(out, STORE_INDEX_PROP_COLUMNS, (const char *)cols.data);
    buf_free(&cols);
    return schema_validate(out, err);
}

int
store_index_schema_is_index(const kiln_schema *s)
{
    return schema_get_prop(s, STORE_INDEX_PROP_OF) != NULL;
}

kiln_status
store_index_def_from_schema(const kiln_schema *base, const kiln_schema *idx, store_index_def *out,
                            kiln_err *err)
{
    store_index_def_init(out);
    const char *name = schema_get_prop(idx, STORE_INDEX_PROP_NAME);
    const char *of = schema_get_prop(idx, STORE_INDEX_PROP_OF);
    const char *cols = schema_get_prop(idx, STORE_INDEX_PROP_COLUMNS);
    if (name == NULL || of == NULL || cols == NULL)
        return status_set(err, KILN_INVALID, "table %s: not an index table (no %s, %s or %s)",
                          idx->name, STORE_INDEX_PROP_NAME, STORE_INDEX_PROP_OF,
                          STORE_INDEX_PROP_COLUMNS);
    if (strcmp(of, base->name) != 0)
        return status_set(err, KILN_INVALID, "index table %s: an index of %s, not of %s",
                          idx->name, of, base->name);
    if (store_index_schema_is_index(base))
        return status_set(err, KILN_INVALID, "table %s: an index table cannot have indexes",
                          base->name);
    if (!store_index_name_ok(name, strlen(name)))
        return status_set(err, KILN_INVALID, "index table %s: bad index name '%s'", idx->name,
                          name);
    char want[SCHEMA_NAME_MAX + 1];
    if (store_index_table_name(base->name, name, want) != 0 || strcmp(want, idx->name) != 0)
        return status_set(err, KILN_INVALID, "index table %s: index %s of %s must be named %s%s%s",
                          idx->name, name, base->name, base->name, STORE_INDEX_TABLE_INFIX, name);
    if (idx->family_count != 1 || strcmp(idx->families[0].name, STORE_INDEX_FAMILY) != 0)
        return status_set(err, KILN_INVALID, "index table %s: must have the one family '%s'",
                          idx->name, STORE_INDEX_FAMILY);
    snprintf(out->name, sizeof out->name, "%s", name);
    char what[SCHEMA_NAME_MAX + 32];
    snprintf(what, sizeof what, "index table %s", idx->name);
    kiln_status st = KILN_OK;
    if (*cols == '\0')
        st = status_set(err, KILN_INVALID, "%s: no columns", what);
    else
        st = store_index_parse_columns(out, cols, strlen(cols), what, err);
    for (size_t i = 0; st == KILN_OK && i < out->ncols; i++) {
        const char *f = out->cols[i].family;
        if (schema_find_family(base, (const uint8_t *)f, strlen(f)) == NULL)
            st = status_set(err, KILN_INVALID, "%s: column family '%s' is not one of %s's", what,
                            f, base->name);
    }
    if (st != KILN_OK)
        store_index_def_free(out);
    return st;
}

/* ------------------------------------------------------------------ keys */

void
store_index_value_append(kbuf *out, const uint8_t *v, size_t n)
{
    buf_reserve(out, n + 2);
    const uint8_t *end = v + n;
    while (v < end) {
        const uint8_t *z = memchr(v, 0, (size_t)(end - v));
        if (z == NULL) {
            buf_append(out, v, (size_t)(end - v));
            break;
        }
        buf_append(out, v, (size_t)(z - v));
        buf_append_u8(out, 0x00);
        buf_append_u8(out, 0xFF);
        v = z + 1;
    }
    buf_append_u8(out, 0x00);
    buf_append_u8(out, 0x00);
}

void
store_index_key(kbuf *out, const kslice *vals, size_t k, const uint8_t *row, size_t n)
{
    for (size_t i = 0; i < k; i++)
        store_index_value_append(out, vals[i].p, vals[i].n);
    buf_append(out, row, n);
}

int
store_index_key_decode(kslice key, size_t k, kbuf *scratch, kslice *vals, kslice *row)
{
    buf_reset(scratch);
    const uint8_t *p = key.p, *end = key.p + key.n;
    size_t off[STORE_INDEX_COLUMNS_MAX + 1];
    if (k > STORE_INDEX_COLUMNS_MAX)
        return -1;
    off[0] = 0;
    for (size_t i = 0; i < k; i++) {
        for (;;) {
            const uint8_t *z = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
            if (z == NULL || z + 1 >= end)
                return -1;
            buf_append(scratch, p, (size_t)(z - p));
            p = z + 2;
            if (z[1] == 0x00)
                break;
            if (z[1] != 0xFF)
                return -1;
            buf_append_u8(scratch, 0x00);
        }
        off[i + 1] = scratch->len;
    }
    if (p >= end)
        return -1;
    for (size_t i = 0; i < k; i++)
        vals[i] = kslice_make(scratch->data + off[i], off[i + 1] - off[i]);
    *row = kslice_make(p, (size_t)(end - p));
    return 0;
}
