/* write_ops.c -- the compare-and-set loops of write_ops.h. A read takes the
 * table's view from the speed layer (its published version with the
 * memstores), so it sees every write acknowledged before it.
 */
#include "serving/write_ops.h"

#include <stdio.h>
#include <string.h>

#include "storage/store/store_view.h"

kiln_status
write_ops_read(kiln_speed *s, const char *table, kslice row, const char *family,
               kslice qualifier, kbuf *value, int64_t *ts, int *found, kiln_err *err)
{
    *found = 0;
    buf_reset(value);
    store_view *v;
    kiln_status st = speed_view(s, table, &v, err);
    if (st != KILN_OK)
        return st;
    store_column col = {family, qualifier.p ? qualifier.p : (const uint8_t *)"", qualifier.n};
    store_row_opts o;
    store_row_opts_init(&o);
    o.columns = &col;
    o.column_count = 1;
    store_row_buf *rb = store_row_buf_new();
    store_row r;
    st = store_view_get(v, row.p, row.n, &o, rb, &r, err);
    if (st == KILN_OK && r.count > 0) {
        buf_append(value, r.cells[0].value, r.cells[0].value_len);
        if (ts != NULL)
            *ts = r.cells[0].ts;
        *found = 1;
    }
    store_row_buf_free(rb);
    store_view_unref(v);
    return st;
}

/* One compare-and-set round: write next (computed from cur, or found 0)
 * if the column still holds cur. */
static kiln_status
write_ops_cas(kiln_speed *s, const char *table, kslice row, const char *family,
              kslice qualifier, const kbuf *cur, int found, kslice next, kiln_durability d,
              int *applied, kiln_err *err)
{
    kiln_mutation m;
    mutation_init(&m, row.p, row.n);
    mutation_put(&m, family, strlen(family), qualifier.p, qualifier.n, CELL_LATEST_TIMESTAMP,
                 next.p, next.n);
    speed_check chk = {family, qualifier.p, qualifier.n, found ? cur->data : NULL,
                       found ? cur->len : 0};
    if (found && chk.expected == NULL)
        chk.expected = (const uint8_t *)"";   /* an empty value, not an absent one */
    kiln_status st = speed_check_and_mutate(s, table, &chk, &m, d, applied, err);
    mutation_free(&m);
    return st;
}

kiln_status
write_ops_append(kiln_speed *s, const char *table, kslice row, const char *family,
                 kslice qualifier, kslice suffix, kiln_durability d, kbuf *out, kiln_err *err)
{
    kbuf cur = KBUF_INIT, next = KBUF_INIT;
    kiln_status st = KILN_OK;
    int applied = 0;
    for (int i = 0; i < WRITE_OPS_TRIES && st == KILN_OK && !applied; i++) {
        int found;
        if ((st = write_ops_read(s, table, row, family, qualifier, &cur, NULL, &found, err)) != KILN_OK)
            break;
        buf_reset(&next);
        buf_append(&next, cur.data, cur.len);
        buf_append(&next, suffix.p, suffix.n);
        st = write_ops_cas(s, table, row, family, qualifier, &cur, found,
                           kslice_make(next.data, next.len), d, &applied, err);
    }
    if (st == KILN_OK && !applied)
        st = status_set(err, KILN_BUSY, "append: the column kept changing (%d tries)",
                        WRITE_OPS_TRIES);
    if (st == KILN_OK && out != NULL) {
        buf_reset(out);
        buf_append(out, next.data, next.len);
    }
    buf_free(&cur);
    buf_free(&next);
    return st;
}

int
write_ops_parse_i64(const uint8_t *p, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (n > 0 && (p[0] == '-' || p[0] == '+')) {
        neg = p[0] == '-';
        i = 1;
    }
    if (i == n || n - i > 19)
        return -1;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    if (v > (uint64_t)INT64_MAX + (uint64_t)neg)
        return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

kiln_status
write_ops_incr_decimal(kiln_speed *s, const char *table, kslice row, const char *family,
                       kslice qualifier, int64_t delta, kiln_durability d, int64_t *out,
                       kiln_err *err)
{
    kbuf cur = KBUF_INIT;
    kiln_status st = KILN_OK;
    int applied = 0;
    int64_t sum = 0;
    for (int i = 0; i < WRITE_OPS_TRIES && st == KILN_OK && !applied; i++) {
        int found;
        int64_t v = 0;
        if ((st = write_ops_read(s, table, row, family, qualifier, &cur, NULL, &found, err)) != KILN_OK)
            break;
        if ((found && write_ops_parse_i64(cur.data, cur.len, &v) != 0) ||
            __builtin_add_overflow(v, delta, &sum)) {
            st = status_set(err, KILN_INVALID, "value is not an integer or out of range");
            break;
        }
        char text[24];
        int tn = snprintf(text, sizeof text, "%lld", (long long)sum);
        st = write_ops_cas(s, table, row, family, qualifier, &cur, found,
                           kslice_make(text, (size_t)tn), d, &applied, err);
    }
    if (st == KILN_OK && !applied)
        st = status_set(err, KILN_BUSY, "increment: the column kept changing (%d tries)",
                        WRITE_OPS_TRIES);
    *out = sum;
    buf_free(&cur);
    return st;
}
