/* products.c -- several kinds of product in one table, the kind leading the
 * row key (inheritance mapping): the products view job and its generator.
 *
 *   products --input PATH... --output DIR [--data DIR] [--table NAME]
 *
 * Input lines: type TAB id TAB name TAB price TAB attributes, where type is
 * one of PRODUCTS_TYPES below, id a u32, name non-empty, price units.cents
 * (1-10 digits, '.', 2 digits) and attributes `attr=value;attr=value...`
 * (may be empty) naming each of the type's own columns at most once; an
 * attribute of another type, a repeated or empty one is a bad line.
 * Row key, one row per (type, id):
 *
 *   OFFSET | SIZE | FIELD
 *   0      | t    | type name ("album", "book", "film")
 *   t      | 1    | 0x00 (no type name is a prefix of another's key)
 *   t+1    | 4    | product id, u32 big-endian
 *
 * Cells, at the job's clock (kiln.job.time): family c (common to every
 * type) c:name, c:price; family t (the type's own columns) t:<attr> for each
 * attribute given. Two families so that a catalogue page reads c alone.
 * A line repeating (type, id) replaces the whole product: last line wins.
 *
 * Queries: one type's products, paged: prefix = type 0x00, limit N, resumed
 * from next_startrow (HTTP) or the last row + \x00 (--start); only their
 * common columns: the same with columns c. One product: Get type 0x00 id.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/index_output.h"
#include "jobs/jobs_args.h"
#include "jobs/view_common.h"
#include "jobs/view_gen.h"
#include "storage/base/coding.h"

#define PRODUCTS_FIELDS 5
#define PRODUCTS_ATTRS_MAX 4
#define PRODUCTS_PRICE_DIGITS 10

typedef enum {
    PRODUCTS_TEXT,     /* non-empty text */
    PRODUCTS_COUNT,    /* a u32 in decimal */
    PRODUCTS_ISBN,     /* 13 decimal digits */
} products_kind;

typedef struct products_attr {
    const char *name;
    products_kind kind;
} products_attr;

/* A type and its own columns, sorted by name (the order cells are written). */
typedef struct products_type {
    const char *name;
    products_attr attrs[PRODUCTS_ATTRS_MAX];
    size_t nattrs;
} products_type;

/* The types, sorted by name. A new type is one more line here. */
static const products_type products_types[] = {
    {"album", {{"artist", PRODUCTS_TEXT}, {"tracks", PRODUCTS_COUNT}}, 2},
    {"book", {{"author", PRODUCTS_TEXT}, {"isbn", PRODUCTS_ISBN}, {"pages", PRODUCTS_COUNT}}, 3},
    {"film", {{"director", PRODUCTS_TEXT}, {"minutes", PRODUCTS_COUNT}}, 2},
};
#define PRODUCTS_NTYPES (sizeof products_types / sizeof products_types[0])

typedef struct products_state {
    view *v;
    size_t table;
    int64_t ts;                        /* the job's clock: every cell's timestamp */
    int c_type[PRODUCTS_NTYPES];       /* products / Products: <type> */
    kbuf row;
    kbuf last;
    kbuf val;
} products_state;

static void
products_state_free(void *p)
{
    products_state *st = p;
    if (st == NULL)
        return;
    view_free(st->v);
    buf_free(&st->row);
    buf_free(&st->last);
    buf_free(&st->val);
    free(st);
}

static const products_type *
products_find_type(kslice name, size_t *index)
{
    for (size_t i = 0; i < PRODUCTS_NTYPES; i++)
        if (kslice_eq(name, kslice_str(products_types[i].name))) {
            *index = i;
            return &products_types[i];
        }
    return NULL;
}

/* 1 if s is units.cents: 1..PRODUCTS_PRICE_DIGITS digits, '.', 2 digits. */
static int
products_price_ok(kslice s)
{
    if (s.n < 4 || s.n > PRODUCTS_PRICE_DIGITS + 3 || s.p[s.n - 3] != '.')
        return 0;
    for (size_t i = 0; i < s.n; i++)
        if (i != s.n - 3 && (s.p[i] < '0' || s.p[i] > '9'))
            return 0;
    return 1;
}

static int
products_value_ok(products_kind kind, kslice v)
{
    uint32_t n;
    switch (kind) {
    case PRODUCTS_COUNT:
        return view_parse_u32(v, &n) == 0;
    case PRODUCTS_ISBN:
        if (v.n != 13)
            return 0;
        for (size_t i = 0; i < v.n; i++)
            if (v.p[i] < '0' || v.p[i] > '9')
                return 0;
        return 1;
    case PRODUCTS_TEXT:
        break;
    }
    return v.n > 0 && view_text_ok(v);
}

/* "author, isbn, pages": the attribute names of type ty, into out. */
static void
products_attr_list(const products_type *ty, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < ty->nattrs && n < cap; i++) {
        int k = snprintf(out + n, cap - n, "%s%s", i > 0 ? ", " : "", ty->attrs[i].name);
        if (k < 0)
            return;
        n += (size_t)k;
    }
}

/* Parse the attributes field of a line of type ty into vals[i] (the value of
 * ty->attrs[i], n = 0 when absent). NULL when good, else the reason in why. */
static const char *
products_parse_attrs(const products_type *ty, kslice attrs, kslice *vals, char *why, size_t cap)
{
    for (size_t i = 0; i < ty->nattrs; i++)
        vals[i] = kslice_make(NULL, 0);
    const uint8_t *p = attrs.p, *end = attrs.p + attrs.n;
    while (attrs.n > 0) {
        const uint8_t *semi = memchr(p, ';', (size_t)(end - p));
        const uint8_t *stop = semi != NULL ? semi : end;
        const uint8_t *eq = memchr(p, '=', (size_t)(stop - p));
        if (eq == NULL || eq == p || eq + 1 == stop) {
            int shown = stop - p > 40 ? 40 : (int)(stop - p);
            snprintf(why, cap, "attribute '%.*s' is not name=value", shown, (const char *)p);
            return why;
        }
        kslice name = kslice_make(p, (size_t)(eq - p));
        kslice value = kslice_make(eq + 1, (size_t)(stop - eq - 1));
        size_t a = 0;
        while (a < ty->nattrs && !kslice_eq(name, kslice_str(ty->attrs[a].name)))
            a++;
        if (a == ty->nattrs) {
            char list[128];
            products_attr_list(ty, list, sizeof list);
            snprintf(why, cap, "attribute '%.*s' is not one of %s's (%s)",
                     (int)(name.n > 40 ? 40 : name.n), (const char *)name.p, ty->name, list);
            return why;
        }
        if (vals[a].n > 0) {
            snprintf(why, cap, "attribute '%s' given twice", ty->attrs[a].name);
            return why;
        }
        if (!products_value_ok(ty->attrs[a].kind, value)) {
            snprintf(why, cap, "attribute '%s': '%.*s' is not %s", ty->attrs[a].name,
                     (int)(value.n > 40 ? 40 : value.n), (const char *)value.p,
                     ty->attrs[a].kind == PRODUCTS_COUNT  ? "a u32"
                     : ty->attrs[a].kind == PRODUCTS_ISBN ? "13 digits"
                                                          : "text without NUL, at most 4096 bytes");
            return why;
        }
        vals[a] = value;
        if (semi == NULL)
            break;
        p = semi + 1;
        if (p == end) {
            snprintf(why, cap, "an empty attribute after ';'");
            return why;
        }
    }
    return NULL;
}

/* The row key of (type, id) into b. */
static void
products_row(kbuf *b, const products_type *ty, uint32_t id)
{
    buf_reset(b);
    buf_append(b, ty->name, strlen(ty->name));
    buf_append_u8(b, 0x00);
    buf_append_be32(b, id);
}

static kiln_status
products_map(mr_task *t, kslice line, kiln_err *err)
{
    products_state *st = mr_task_state(t);
    kslice f[PRODUCTS_FIELDS];
    size_t nf = view_split(line, '\t', f, PRODUCTS_FIELDS);
    char why[256];
    if (nf != PRODUCTS_FIELDS) {
        snprintf(why, sizeof why, "%zu fields, expected %d", nf, PRODUCTS_FIELDS);
        return view_bad(st->v, t, why, err);
    }
    size_t ti;
    const products_type *ty = products_find_type(f[0], &ti);
    if (ty == NULL) {
        snprintf(why, sizeof why, "unknown type '%.*s' (album, book, film)",
                 (int)(f[0].n > 40 ? 40 : f[0].n), (const char *)f[0].p);
        return view_bad(st->v, t, why, err);
    }
    uint32_t id;
    if (view_parse_u32(f[1], &id) != 0)
        return view_bad(st->v, t, "product id is not a u32", err);
    if (f[2].n == 0 || !view_text_ok(f[2]))
        return view_bad(st->v, t, "empty name, NUL byte or over-long name", err);
    if (!products_price_ok(f[3]))
        return view_bad(st->v, t, "price is not units.cents (e.g. 12.99)", err);
    kslice vals[PRODUCTS_ATTRS_MAX];
    const char *bad = products_parse_attrs(ty, f[4], vals, why, sizeof why);
    if (bad != NULL)
        return view_bad(st->v, t, bad, err);

    /* value: position, then name TAB price (TAB attribute value) for each of
     * the type's attributes in order, empty when absent */
    products_row(&st->row, ty, id);
    kslice r = buf_slice(&st->row);
    buf_reset(&st->val);
    buf_append(&st->val, f[2].p, f[2].n);
    buf_append_u8(&st->val, '\t');
    buf_append(&st->val, f[3].p, f[3].n);
    for (size_t a = 0; a < ty->nattrs; a++) {
        buf_append_u8(&st->val, '\t');
        buf_append(&st->val, vals[a].p, vals[a].n);
    }
    kiln_status s = view_index_put(st->v, t, st->table, r, "c", kslice_str("name"), st->ts, f[2],
                                   err);
    if (s == KILN_OK)
        s = view_index_put(st->v, t, st->table, r, "c", kslice_str("price"), st->ts, f[3], err);
    for (size_t a = 0; a < ty->nattrs && s == KILN_OK; a++)
        if (vals[a].n > 0)
            s = view_index_put(st->v, t, st->table, r, "t", kslice_str(ty->attrs[a].name), st->ts,
                               vals[a], err);
    if (s != KILN_OK)
        return s;
    uint8_t pos[VIEW_POS];
    view_pos(t, pos);
    return view_emit(st->v, t, st->table, r, kslice_make(pos, VIEW_POS), buf_slice(&st->val), err);
}

static kiln_status
products_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    if (index_output_owns(key))
        return index_output_reduce(t, key, values, err);
    products_state *st = mr_task_state(t);
    size_t table;
    uint64_t n;
    kiln_status s = view_group(st->v, key, &table, &st->row, err);
    if (s == KILN_OK)
        s = view_last(st->v, t, values, &st->last, &n, err);
    if (s != KILN_OK)
        return s;
    kslice row = buf_slice(&st->row);
    const uint8_t *z = memchr(row.p, 0, row.n);
    size_t ti;
    const products_type *ty = z != NULL && row.p + row.n - z == 5
                                  ? products_find_type(kslice_make(row.p, (size_t)(z - row.p)), &ti)
                                  : NULL;
    if (ty == NULL)
        return status_set(err, KILN_CORRUPTION, "products: a row of %zu bytes of no type", row.n);
    kslice f[2 + PRODUCTS_ATTRS_MAX];
    if (view_split(buf_slice(&st->last), '\t', f, 2 + PRODUCTS_ATTRS_MAX) != 2 + ty->nattrs)
        return status_set(err, KILN_CORRUPTION, "products: a %s value of the wrong shape",
                          ty->name);
    mr_task_count(t, st->c_type[ti], 1);
    /* cell order: family c (name, price), then family t by attribute name */
    s = view_put(st->v, t, table, row, "c", kslice_str("name"), st->ts, f[0], err);
    if (s == KILN_OK)
        s = view_put(st->v, t, table, row, "c", kslice_str("price"), st->ts, f[1], err);
    for (size_t a = 0; a < ty->nattrs && s == KILN_OK; a++)
        if (f[2 + a].n > 0)
            s = view_put(st->v, t, table, row, "t", kslice_str(ty->attrs[a].name), st->ts, f[2 + a],
                         err);
    return s;
}

static kiln_status
products_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    products_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, products_state_free);
    for (size_t i = 0; i < PRODUCTS_NTYPES; i++) {
        const products_type *ty = &products_types[i];
        /* reduce writes the t cells in table order: it must be cell order */
        for (size_t a = 1; a < ty->nattrs; a++)
            if (strcmp(ty->attrs[a - 1].name, ty->attrs[a].name) >= 0)
                return status_set(err, KILN_INTERNAL, "products: %s's attributes are not sorted",
                                  ty->name);
    }
    st->v = view_new(job, "products");
    kiln_status s = view_setup_one_table(st->v, argc, argv, "products", "c,t", &st->table, err);
    if (s != KILN_OK)
        return s;
    st->ts = mr_job_time_ms(job);
    for (size_t i = 0; i < PRODUCTS_NTYPES; i++) {
        char name[64];
        snprintf(name, sizeof name, "Products: %s", products_types[i].name);
        st->c_type[i] = mr_job_counter(job, "products", name);
    }
    mr_job_set_map(job, products_map);
    mr_job_set_reduce(job, products_reduce);
    return KILN_OK;
}

const mr_job_def products_job = {
    "products",
    "several product types in one table, the type leading the row key",
    "Usage: kiln-mr products --input PATH... --output DIR [--data DIR] [--table NAME]\n"
    "\n"
    "Builds one table of several product types (inheritance mapping) from lines\n"
    "  type TAB id TAB name TAB price TAB attr=value;attr=value...\n"
    "as HFiles in DIR/c and DIR/t, for `kiln load NAME DIR` (NAME: products).\n"
    "Types and their own attributes (each optional, at most once):\n"
    "  album  artist, tracks (u32)\n"
    "  book   author, isbn (13 digits), pages (u32)\n"
    "  film   director, minutes (u32)\n"
    "Row key: the type name, 0x00, the id u32 BE, so one type's products are\n"
    "contiguous and in id order. Cells, at the job's clock (-D kiln.job.time):\n"
    "c:name, c:price (units.cents) and t:ATTR for each attribute given. An\n"
    "unknown type, an attribute of another type, a repeated or malformed one\n"
    "make a bad line. A repeated (type, id): the last line wins.\n"
    "\n"
    "  --table NAME   the table (default products). When it exists in the data\n"
    "                 directory (--data DIR, else $KILN_DATA, else ./kiln-data) its\n"
    "                 regions and family settings are used; else split keys are\n"
    "                 sampled from the input.\n"
    "\n"
    "Create the table first, e.g. one region per type:\n"
    "  kiln create products --family c --family t --split book --split film\n"
    "Queries: the books, 20 a page: kiln scan products --prefix 'book\\x00' --limit 20\n"
    "(--columns c for name and price only; next page from next_startrow or the\n"
    "last row + \\x00); one product: kiln get products 'book\\x00\\x00\\x00\\x00\\x07'.\n"
    "\n"
    "Settings: -D products.skip.bad.lines=false fails the job on the first bad\n"
    "line (default: count them under products / Bad Lines and skip them).\n"
    "Counters: products / Products: TYPE (rows written per type). A salted table\n"
    "(kiln create --salt-buckets N) gets each row's bucket byte;\n"
    "-D kiln.index=NAME:t:author[;...] builds secondary indexes beside it (the\n"
    "table must exist), loaded with it by `kiln load`.\n",
    products_setup,
};

/* ------------------------------------------------------------------ generator */

static const char *const products_first[] = {
    "Ada", "Alan", "Anna", "Ben", "Clara", "Dev", "Elena", "Farah", "Grace", "Hugo", "Ines",
    "Jonas", "Kenji", "Lena", "Marco", "Nadia", "Omar", "Priya", "Rosa", "Sam", "Tomas", "Uma",
    "Vera", "Yusuf",
};
static const char *const products_last[] = {
    "Abe", "Berg", "Costa", "Dahl", "Engel", "Fischer", "Garcia", "Holm", "Ito", "Jensen",
    "Kowal", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quinn", "Rossi", "Silva",
    "Tanaka", "Varga", "Weber",
};
#define PRODUCTS_NFIRST (sizeof products_first / sizeof products_first[0])
#define PRODUCTS_NLAST (sizeof products_last / sizeof products_last[0])

static void
products_word(view_gen_rng *r, kbuf *b)
{
    const char *w = view_gen_pick(r, view_gen_words, view_gen_nwords);
    view_gen_printf(b, "%c%s", w[0] - 'a' + 'A', w + 1);
}

static void
products_person(view_gen_rng *r, kbuf *b)
{
    /* two statements: the draws happen in this order on every compiler */
    const char *first = view_gen_pick(r, products_first, PRODUCTS_NFIRST);
    const char *last = view_gen_pick(r, products_last, PRODUCTS_NLAST);
    view_gen_printf(b, "%s %s", first, last);
}

/* An ISBN-13: 978, nine digits, the check digit. */
static void
products_isbn(view_gen_rng *r, kbuf *b)
{
    char d[14] = "978";
    for (int i = 3; i < 12; i++)
        d[i] = (char)('0' + view_gen_below(r, 10));
    int sum = 0;
    for (int i = 0; i < 12; i++)
        sum += (d[i] - '0') * (i % 2 ? 3 : 1);
    d[12] = (char)('0' + (10 - sum % 10) % 10);
    d[13] = '\0';
    view_gen_printf(b, "%s", d);
}

/* One attribute of type ty (index a) as name=value. */
static void
products_gen_attr(view_gen_rng *r, size_t ty, size_t a, kbuf *b)
{
    const products_attr *at = &products_types[ty].attrs[a];
    view_gen_printf(b, "%s=", at->name);
    if (at->kind == PRODUCTS_ISBN)
        products_isbn(r, b);
    else if (strcmp(at->name, "pages") == 0)
        view_gen_printf(b, "%u", 80 + (unsigned)view_gen_below(r, 1100));
    else if (strcmp(at->name, "minutes") == 0)
        view_gen_printf(b, "%u", 70 + (unsigned)view_gen_below(r, 130));
    else if (at->kind == PRODUCTS_COUNT)
        view_gen_printf(b, "%u", 6 + (unsigned)view_gen_below(r, 19));
    else if (strcmp(at->name, "artist") == 0 && view_gen_chance(r, 400)) {
        view_gen_printf(b, "The ");
        products_word(r, b);
        buf_append_u8(b, 's');
    } else
        products_person(r, b);
}

/* Products of the three types (books half of them), ids per type rising with
 * gaps; each of a type's attributes present 9 times in 10, in a random
 * order. About 3 lines in 1000 re-list an earlier id of the same type (the
 * later line wins). With --bad P, besides the malformed lines about P/2 in
 * 1000 carry an attribute of another type. */
static kiln_status
products_generate(const view_gen_options *o, kiln_err *err)
{
    view_gen_rng r;
    view_gen_seed(&r, o->seed, 6);
    view_gen_out *out;
    kiln_status s = view_gen_out_open(o->dir, "products", o->files, o->rows, &out, err);
    if (s != KILN_OK)
        return s;
    static const uint32_t cents_min[PRODUCTS_NTYPES] = {99, 499, 299};   /* album, book, film */
    static const uint32_t cents_span[PRODUCTS_NTYPES] = {1900, 5500, 2200};
    uint64_t next_id[PRODUCTS_NTYPES] = {0, 0, 0};
    kbuf line = KBUF_INIT;
    for (uint64_t i = 0; i < o->rows && s == KILN_OK; i++) {
        uint64_t pick = view_gen_below(&r, 4);
        size_t ty = pick < 2 ? 1 : pick == 2 ? 2 : 0;
        uint64_t id;
        if (next_id[ty] > 0 && view_gen_chance(&r, 3)) {
            id = 1 + view_gen_below(&r, next_id[ty]);
        } else {
            next_id[ty] += 1 + view_gen_below(&r, 3);
            id = next_id[ty] > UINT32_MAX ? next_id[ty] % UINT32_MAX : next_id[ty];
        }
        uint32_t cents = cents_min[ty] + (uint32_t)view_gen_below(&r, cents_span[ty]);
        buf_reset(&line);
        view_gen_printf(&line, "%s\t%" PRIu64 "\t", products_types[ty].name, id);
        if (ty == 1 && view_gen_chance(&r, 300))
            view_gen_printf(&line, "The ");
        products_word(&r, &line);
        buf_append_u8(&line, ' ');
        products_word(&r, &line);
        view_gen_printf(&line, "\t%u.%02u\t", cents / 100, cents % 100);
        /* the type's attributes in a random order (a rotation), some left out */
        size_t na = products_types[ty].nattrs, first = (size_t)view_gen_below(&r, na);
        int any = 0;
        for (size_t k = 0; k < na; k++) {
            if (view_gen_chance(&r, 100))
                continue;
            if (any++)
                buf_append_u8(&line, ';');
            products_gen_attr(&r, ty, (first + k) % na, &line);
        }
        if (o->bad > 0 && view_gen_chance(&r, (o->bad + 1) / 2)) {
            size_t other = (ty + 1 + (size_t)view_gen_below(&r, PRODUCTS_NTYPES - 1)) %
                           PRODUCTS_NTYPES;
            if (any)
                buf_append_u8(&line, ';');
            products_gen_attr(&r, other, (size_t)view_gen_below(&r, products_types[other].nattrs),
                              &line);
        }
        s = view_gen_out_line(out, i, o, &r, &line, err);
    }
    if (s == KILN_OK)
        s = view_gen_out_close(out, err);
    view_gen_out_free(out);
    buf_free(&line);
    return s;
}

const view_gen_def products_gen = {
    "products",
    "product lines",
    "DIR/products-NNNNN.tsv: type TAB id TAB name TAB price TAB attr=value;...\n"
    "(album, book, film; with --bad P also ~P/2 per mille carrying another\n"
    "type's attribute)",
    products_generate,
};
