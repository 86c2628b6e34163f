/* resp_write.c -- the Redis write and hash commands of resp_write.h. Each
 * resolves its key like GET, builds one row mutation (or a write_ops
 * read-modify-write) and answers as Redis does: +OK, an integer, a bulk
 * string or nil.
 */
#include "serving/resp_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serving/resp.h"
#include "serving/slog.h"
#include "serving/write_ops.h"
#include "storage/hfile/cell.h"

static const char resp_write_not_int[] = "ERR value is not an integer or out of range";

/* A key's table, row and column (family NUL-terminated, qualifier). */
typedef struct resp_write_key {
    views_entry *e;
    kslice row;
    char family[CELL_FAMILY_MAX + 1];
    kslice qualifier;
    int configured;        /* the column is a --resp-column (else GET reads the first cell) */
} resp_write_key;

static void
resp_write_arity(kbuf *out, kslice cmd)
{
    char name[33];
    size_t n = cmd.n > 32 ? 32 : cmd.n;
    for (size_t i = 0; i < n; i++)   /* Redis names the command in lower case */
        name[i] = (char)(cmd.p[i] >= 'A' && cmd.p[i] <= 'Z' ? cmd.p[i] + 32 : cmd.p[i]);
    name[n] = '\0';
    char msg[128];
    snprintf(msg, sizeof msg, "ERR wrong number of arguments for '%s' command", name);
    resp_add_error(out, msg);
}

/* An error of the speed layer as a Redis error. */
static void
resp_write_fail(resp_write_ctx *c, const kiln_err *err, kbuf *out)
{
    if (err->code != KILN_INVALID && err->code != KILN_NOT_FOUND &&
        err->code != KILN_UNSUPPORTED && err->code != KILN_BUSY) {
        slog_error("%s", err->msg[0] ? err->msg : status_name(err->code));
        c->server_error = 1;
    }
    if (strcmp(err->msg, resp_write_not_int + 4) == 0) {
        resp_add_error(out, resp_write_not_int);
        return;
    }
    char msg[STATUS_MSG_MAX + 8];
    snprintf(msg, sizeof msg, "ERR %s", err->msg[0] ? err->msg : status_name(err->code));
    resp_add_error(out, msg);
}

/* Resolve key to its row and GET's column. 0, or -1 with the error added. */
static int
resp_write_key_of(resp_write_ctx *c, kslice key, int db, resp_write_key *k, kbuf *out)
{
    const char *why = NULL;
    if (resp_keys_resolve(c->reader, key, db, &k->e, &k->row, &why) != 0) {
        resp_add_error(out, why);
        return -1;
    }
    if (k->row.n == 0 || k->row.n > CELL_ROW_MAX) {
        resp_add_error(out, "ERR a key names a row of 1..32767 bytes");
        return -1;
    }
    const resp_api_column *col = resp_keys_column(c->columns, c->column_count, k->e);
    const kiln_schema *sc = views_entry_schema(k->e);
    k->configured = col != NULL;
    if (col != NULL) {
        snprintf(k->family, sizeof k->family, "%s", col->family);
        k->qualifier = kslice_make(col->qualifier, col->qualifier_len);
    } else if (sc->family_count > 0) {
        snprintf(k->family, sizeof k->family, "%s", sc->families[0].name);
        k->qualifier = kslice_make("", 0);
    } else {
        resp_add_error(out, "ERR the table has no column family");
        return -1;
    }
    return 0;
}

/* A hash field: "FAMILY:QUALIFIER" when FAMILY is the table's, else a
 * qualifier of the key's family. */
static void
resp_write_field(const resp_write_key *k, kslice field, char *family, kslice *qualifier)
{
    const uint8_t *colon = memchr(field.p, ':', field.n);
    if (colon != NULL && colon > field.p && (size_t)(colon - field.p) <= CELL_FAMILY_MAX &&
        schema_find_family(views_entry_schema(k->e), field.p, (size_t)(colon - field.p)) !=
            NULL) {
        size_t fl = (size_t)(colon - field.p);
        memcpy(family, field.p, fl);
        family[fl] = '\0';
        *qualifier = kslice_make(colon + 1, field.n - fl - 1);
        return;
    }
    snprintf(family, CELL_FAMILY_MAX + 1, "%s", k->family);
    *qualifier = field;
}

static int
resp_write_apply(resp_write_ctx *c, const resp_write_key *k, kiln_mutation *m, kbuf *out)
{
    kiln_err err;
    status_clear(&err);
    if (speed_mutate(c->speed, views_entry_name(k->e), m, 1, KILN_DUR_DEFAULT, &err) !=
        KILN_OK) {
        resp_write_fail(c, &err, out);
        return -1;
    }
    return 0;
}

/* Read one column through the speed layer: 1 found, 0 absent, -1 error added. */
static int
resp_write_read(resp_write_ctx *c, const resp_write_key *k, const char *family, kslice qual,
                kbuf *value, kbuf *out)
{
    kiln_err err;
    status_clear(&err);
    int found;
    if (write_ops_read(c->speed, views_entry_name(k->e), k->row, family, qual, value, NULL,
                       &found, &err) != KILN_OK) {
        resp_write_fail(c, &err, out);
        return -1;
    }
    return found;
}

/* Read the key's row with o: through the speed layer, or the served view
 * when the server is read-only. *held: a view reference to drop after. */
static kiln_status
resp_write_row(resp_write_ctx *c, const resp_write_key *k, const store_row_opts *o,
               store_row_buf *rb, store_view **held, store_row *r, kiln_err *err)
{
    *held = NULL;
    if (c->speed == NULL)
        return views_get(k->e, c->ctx, k->row.p, k->row.n, o, r, err);
    kiln_status st = speed_view(c->speed, views_entry_name(k->e), held, err);
    if (st != KILN_OK)
        return st;
    return store_view_get(*held, k->row.p, k->row.n, o, rb, r, err);
}

static void
resp_write_set(resp_write_ctx *c, const kslice *argv, size_t argc, int db, kbuf *out)
{
    if (argc < 3) {
        resp_write_arity(out, argv[0]);
        return;
    }
    if (argc > 3) {
        resp_add_error(out, "ERR kiln does not support SET options (EX, PX, EXAT, PXAT, NX, "
                            "XX, KEEPTTL, GET): a cell has no expiry of its own");
        return;
    }
    resp_write_key k;
    if (resp_write_key_of(c, argv[1], db, &k, out) != 0)
        return;
    kiln_mutation m;
    mutation_init(&m, k.row.p, k.row.n);
    mutation_put(&m, k.family, strlen(k.family), k.qualifier.p, k.qualifier.n,
                 CELL_LATEST_TIMESTAMP, argv[2].p, argv[2].n);
    if (resp_write_apply(c, &k, &m, out) == 0)
        resp_add_simple(out, "OK");
    mutation_free(&m);
}

/* 1 if GET of the key finds a value (its configured column, else any
 * cell of the row), 0 if not, -1 with the error added. */
static int
resp_write_exists(resp_write_ctx *c, const resp_write_key *k, kbuf *out)
{
    store_column col = {k->family, k->qualifier.p ? k->qualifier.p : (const uint8_t *)"",
                        k->qualifier.n};
    store_row_opts o;
    store_row_opts_init(&o);
    if (k->configured) {
        o.columns = &col;
        o.column_count = 1;
    }
    kiln_err err;
    status_clear(&err);
    store_row_buf *rb = store_row_buf_new();
    store_view *held;
    store_row r;
    int found = -1;
    if (resp_write_row(c, k, &o, rb, &held, &r, &err) != KILN_OK)
        resp_write_fail(c, &err, out);
    else
        found = r.count > 0;
    store_row_buf_free(rb);
    store_view_unref(held);
    return found;
}

static void
resp_write_del(resp_write_ctx *c, const kslice *argv, size_t argc, int db, kbuf *out)
{
    if (argc < 2) {
        resp_write_arity(out, argv[0]);
        return;
    }
    int64_t n = 0;
    for (size_t i = 1; i < argc; i++) {
        resp_write_key k;
        if (resp_write_key_of(c, argv[i], db, &k, out) != 0)
            return;
        int had = resp_write_exists(c, &k, out);
        if (had < 0)
            return;
        const kiln_schema *sc = views_entry_schema(k.e);
        kiln_mutation m;
        mutation_init(&m, k.row.p, k.row.n);
        for (size_t f = 0; f < sc->family_count; f++)
            mutation_delete(&m, CELL_TYPE_DELETE_FAMILY, sc->families[f].name,
                            strlen(sc->families[f].name), NULL, 0, CELL_LATEST_TIMESTAMP);
        int rc = resp_write_apply(c, &k, &m, out);
        mutation_free(&m);
        if (rc != 0)
            return;
        n += had;
    }
    resp_add_int(out, n);
}

static void
resp_write_incr(resp_write_ctx *c, const kslice *argv, size_t argc, int db, int sign, int by,
                kbuf *out)
{
    if (argc != (size_t)(by ? 3 : 2)) {
        resp_write_arity(out, argv[0]);
        return;
    }
    int64_t delta = 1;
    if (by && write_ops_parse_i64(argv[2].p, argv[2].n, &delta) != 0) {
        resp_add_error(out, resp_write_not_int);
        return;
    }
    if (sign < 0) {
        if (delta == INT64_MIN) {
            resp_add_error(out, "ERR decrement would overflow");
            return;
        }
        delta = -delta;
    }
    resp_write_key k;
    if (resp_write_key_of(c, argv[1], db, &k, out) != 0)
        return;
    kiln_err err;
    status_clear(&err);
    int64_t v;
    if (write_ops_incr_decimal(c->speed, views_entry_name(k.e), k.row, k.family, k.qualifier,
                               delta, KILN_DUR_DEFAULT, &v, &err) != KILN_OK) {
        resp_write_fail(c, &err, out);
        return;
    }
    resp_add_int(out, v);
}

static void
resp_write_append(resp_write_ctx *c, const kslice *argv, size_t argc, int db, kbuf *out)
{
    if (argc != 3) {
        resp_write_arity(out, argv[0]);
        return;
    }
    resp_write_key k;
    if (resp_write_key_of(c, argv[1], db, &k, out) != 0)
        return;
    kiln_err err;
    status_clear(&err);
    if (write_ops_append(c->speed, views_entry_name(k.e), k.row, k.family, k.qualifier, argv[2],
                         KILN_DUR_DEFAULT, c->tmp, &err) != KILN_OK) {
        resp_write_fail(c, &err, out);
        return;
    }
    resp_add_int(out, (int64_t)c->tmp->len);
}

static void
resp_write_hset(resp_write_ctx *c, const kslice *argv, size_t argc, int db, kbuf *out)
{
    if (argc < 4 || argc % 2 != 0) {
        resp_write_arity(out, argv[0]);
        return;
    }
    resp_write_key k;
    if (resp_write_key_of(c, argv[1], db, &k, out) != 0)
        return;
    kiln_mutation m;
    mutation_init(&m, k.row.p, k.row.n);
    int64_t added = 0;
    for (size_t i = 2; i < argc; i += 2) {
        char fam[CELL_FAMILY_MAX + 1];
        kslice q;
        resp_write_field(&k, argv[i], fam, &q);
        int had = resp_write_read(c, &k, fam, q, c->tmp, out);
        if (had < 0) {
            mutation_free(&m);
            return;
        }
        added += !had;
        mutation_put(&m, fam, strlen(fam), q.p, q.n, CELL_LATEST_TIMESTAMP, argv[i + 1].p,
                     argv[i + 1].n);
    }
    if (resp_write_apply(c, &k, &m, out) == 0)
        resp_add_int(out, added);
    mutation_free(&m);
}

static void
resp_write_hdel(resp_write_ctx *c, const kslice *argv, size_t argc, int db, kbuf *out)
{
    if (argc < 3) {
        resp_write_arity(out, argv[0]);
        return;
    }
    resp_write_key k;
    if (resp_write_key_of(c, argv[1], db, &k, out) != 0)
        return;
    kiln_mutation m;
    mutation_init(&m, k.row.p, k.row.n);
    int64_t gone = 0;
    for (size_t i = 2; i < argc; i++) {
        char fam[CELL_FAMILY_MAX + 1];
        kslice q;
        resp_write_field(&k, argv[i], fam, &q);
        int had = resp_write_read(c, &k, fam, q, c->tmp, out);
        if (had < 0) {
            mutation_free(&m);
            return;
        }
        gone += had;
        mutation_delete(&m, CELL_TYPE_DELETE_COLUMN, fam, strlen(fam), q.p, q.n,
                        CELL_LATEST_TIMESTAMP);
    }
    if (resp_write_apply(c, &k, &m, out) == 0)
        resp_add_int(out, gone);
    mutation_free(&m);
}

static void
resp_write_hget(resp_write_ctx *c, const kslice *argv, size_t argc, int db, kbuf *out)
{
    if (argc != 3) {
        resp_write_arity(out, argv[0]);
        return;
    }
    resp_write_key k;
    if (resp_write_key_of(c, argv[1], db, &k, out) != 0)
        return;
    char fam[CELL_FAMILY_MAX + 1];
    kslice q;
    resp_write_field(&k, argv[2], fam, &q);
    store_column col = {fam, q.p ? q.p : (const uint8_t *)"", q.n};
    store_row_opts o;
    store_row_opts_init(&o);
    o.columns = &col;
    o.column_count = 1;
    kiln_err err;
    status_clear(&err);
    store_row_buf *rb = store_row_buf_new();
    store_view *held;
    store_row r;
    if (resp_write_row(c, &k, &o, rb, &held, &r, &err) != KILN_OK)
        resp_write_fail(c, &err, out);
    else if (r.count > 0)
        resp_add_bulk(out, r.cells[0].value, r.cells[0].value_len);
    else
        resp_add_nil(out);
    store_row_buf_free(rb);
    store_view_unref(held);
}

static void
resp_write_hgetall(resp_write_ctx *c, const kslice *argv, size_t argc, int db, kbuf *out)
{
    if (argc != 2) {
        resp_write_arity(out, argv[0]);
        return;
    }
    resp_write_key k;
    if (resp_write_key_of(c, argv[1], db, &k, out) != 0)
        return;
    kiln_err err;
    status_clear(&err);
    store_row_buf *rb = store_row_buf_new();
    store_view *v;
    store_row r;
    if (resp_write_row(c, &k, NULL, rb, &v, &r, &err) != KILN_OK) {
        resp_write_fail(c, &err, out);
    } else {
        resp_add_array(out, 2 * r.count);
        for (size_t i = 0; i < r.count; i++) {
            const kiln_cell *cell = &r.cells[i];
            buf_reset(c->tmp);
            buf_append(c->tmp, cell->family, cell->family_len);
            buf_append_u8(c->tmp, ':');
            buf_append(c->tmp, cell->qualifier, cell->qualifier_len);
            resp_add_bulk(out, c->tmp->data, c->tmp->len);
            resp_add_bulk(out, cell->value, cell->value_len);
        }
    }
    store_row_buf_free(rb);
    store_view_unref(v);
}

int
resp_write_handle(resp_write_ctx *c, const kslice *argv, size_t argc, int db, kbuf *out)
{
    static const char *const cmds[] = {"SET",    "DEL",  "INCR", "INCRBY", "DECR",
                                       "DECRBY", "APPEND", "HSET", "HDEL",  "HGET",
                                       "HGETALL", NULL};
    size_t which = 0;
    while (cmds[which] != NULL && !resp_arg_is(argv[0], cmds[which]))
        which++;
    if (cmds[which] == NULL)
        return 0;
    if ((c->speed == NULL || c->read_only) && which < 9) {   /* HGET and HGETALL read */
        resp_add_error(out, "READONLY kiln serves read-only views; publish data with kiln load");
        return 1;
    }
    switch (which) {
    case 0: resp_write_set(c, argv, argc, db, out); break;
    case 1: resp_write_del(c, argv, argc, db, out); break;
    case 2: resp_write_incr(c, argv, argc, db, 1, 0, out); break;
    case 3: resp_write_incr(c, argv, argc, db, 1, 1, out); break;
    case 4: resp_write_incr(c, argv, argc, db, -1, 0, out); break;
    case 5: resp_write_incr(c, argv, argc, db, -1, 1, out); break;
    case 6: resp_write_append(c, argv, argc, db, out); break;
    case 7: resp_write_hset(c, argv, argc, db, out); break;
    case 8: resp_write_hdel(c, argv, argc, db, out); break;
    case 9: resp_write_hget(c, argv, argc, db, out); break;
    default: resp_write_hgetall(c, argv, argc, db, out); break;
    }
    return 1;
}
