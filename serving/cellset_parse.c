/* cellset_parse.c -- the CellSet body parsers of cellset_parse.h and the
 * Put mutations HBase's RowResource builds from a CellSet.
 *
 * The XML reader knows the three elements a CellSet has (CellSet, Row,
 * Cell), reads their attributes (others, such as xmlns, are ignored) and a
 * Cell's text; it skips an XML declaration, comments and whitespace between
 * elements, decodes the five predefined entities and ASCII character
 * references, and refuses anything else (DTDs, CDATA, unknown elements).
 * Protobuf fields the messages do not define are skipped, as protobuf does.
 */
#include "serving/cellset_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/base/coding.h"
#include "storage/hfile/cell.h"
#include "storage/query/json.h"
#include "storage/store/schema.h"

void
cellset_init(cellset *cs)
{
    memset(cs, 0, sizeof *cs);
}

void
cellset_free(cellset *cs)
{
    if (cs == NULL)
        return;
    buf_free(&cs->bytes);
    free(cs->rows);
    free(cs->cells);
    memset(cs, 0, sizeof *cs);
}

static void
cellset_reset(cellset *cs)
{
    buf_reset(&cs->bytes);
    cs->nrows = cs->ncells = 0;
}

static kiln_status
cellset_row_add(cellset *cs, const char *enc, kiln_err *err)
{
    if (cs->nrows == CELLSET_ROWS_MAX)
        return status_set(err, KILN_INVALID, "cellset: %s: more than %d rows", enc,
                          CELLSET_ROWS_MAX);
    if (cs->nrows == cs->rcap) {
        cs->rcap = cs->rcap ? 2 * cs->rcap : 8;
        cs->rows = kiln_realloc(cs->rows, cs->rcap * sizeof *cs->rows);
    }
    cellset_row *r = &cs->rows[cs->nrows++];
    memset(r, 0, sizeof *r);
    r->first = cs->ncells;
    return KILN_OK;
}

static kiln_status
cellset_cell_add(cellset *cs, const char *enc, kiln_err *err)
{
    if (cs->ncells == CELLSET_CELLS_MAX)
        return status_set(err, KILN_INVALID, "cellset: %s: more than %d cells", enc,
                          CELLSET_CELLS_MAX);
    if (cs->ncells == cs->ccap) {
        cs->ccap = cs->ccap ? 2 * cs->ccap : 16;
        cs->cells = kiln_realloc(cs->cells, cs->ccap * sizeof *cs->cells);
    }
    cellset_cell *c = &cs->cells[cs->ncells++];
    memset(c, 0, sizeof *c);
    c->ts = CELL_LATEST_TIMESTAMP;
    c->value_off = c->column_off = (uint32_t)cs->bytes.len;
    cs->rows[cs->nrows - 1].count++;
    return KILN_OK;
}

/* Append raw bytes to the set's arena; their offset. */
static uint32_t
cellset_keep(cellset *cs, const void *p, size_t n)
{
    uint32_t off = (uint32_t)cs->bytes.len;
    buf_append(&cs->bytes, p, n);
    return off;
}

/* Decode base64 s[0..n) into the arena: 0, or -1 if malformed. */
static int
cellset_b64(cellset *cs, const char *s, size_t n, uint32_t *off, uint32_t *len)
{
    size_t at = cs->bytes.len;
    if (json_b64_decode(s, n, &cs->bytes) != 0) {
        cs->bytes.len = at;
        return -1;
    }
    *off = (uint32_t)at;
    *len = (uint32_t)(cs->bytes.len - at);
    return 0;
}

/* A decimal timestamp in s[0..n) (an optional '-' is refused: HBase cells
 * have non-negative times). 0, or -1. */
static int
cellset_ts(const char *s, size_t n, int64_t *out)
{
    if (n == 0 || n > 19)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > INT64_MAX)
        return -1;
    *out = (int64_t)v;
    return 0;
}

/* ------------------------------------------------------------------ JSON */

static kiln_status
cellset_json_cell(cellset *cs, const json_node *c, size_t ri, size_t ci, kiln_err *err)
{
    if (json_node_type(c) != JSON_OBJECT)
        return status_set(err, KILN_INVALID, "cellset: JSON: Row %zu: Cell %zu is not an object",
                          ri, ci);
    kiln_status st = cellset_cell_add(cs, "JSON", err);
    if (st != KILN_OK)
        return st;
    cellset_cell *cell = &cs->cells[cs->ncells - 1];
    const json_node *col = json_get(c, "column");
    const json_node *ts = json_get(c, "timestamp");
    const json_node *val = json_get(c, "$");
    size_t n;
    const char *s;
    if (col != NULL && json_node_type(col) != JSON_NULL) {
        if ((s = json_str(col, &n)) == NULL ||
            cellset_b64(cs, s, n, &cell->column_off, &cell->column_len) != 0)
            return status_set(err, KILN_INVALID,
                              "cellset: JSON: Row %zu: Cell %zu: column is not valid base64", ri,
                              ci);
        cell->has_column = 1;
    }
    if (ts != NULL && json_node_type(ts) != JSON_NULL) {
        int64_t v;
        int ok = json_node_type(ts) == JSON_NUMBER ? json_int(ts, &v) == 0 && v >= 0
                 : (s = json_str(ts, &n)) != NULL && cellset_ts(s, n, &v) == 0;
        if (!ok)
            return status_set(err, KILN_INVALID,
                              "cellset: JSON: Row %zu: Cell %zu: timestamp is not a "
                              "non-negative integer", ri, ci);
        cell->ts = v;
    }
    if (val != NULL && json_node_type(val) != JSON_NULL) {
        if ((s = json_str(val, &n)) == NULL ||
            cellset_b64(cs, s, n, &cell->value_off, &cell->value_len) != 0)
            return status_set(err, KILN_INVALID,
                              "cellset: JSON: Row %zu: Cell %zu: \"$\" (the value) is not valid "
                              "base64", ri, ci);
    } else {
        cell->value_off = (uint32_t)cs->bytes.len;
    }
    return KILN_OK;
}

/* A member that is an array or, as Jackson accepts, one element alone:
 * its count and the i-th element. */
static size_t
cellset_json_items(const json_node *v)
{
    if (v == NULL || json_node_type(v) == JSON_NULL)
        return 0;
    return json_node_type(v) == JSON_ARRAY ? json_len(v) : 1;
}

static const json_node *
cellset_json_item(const json_node *v, size_t i)
{
    return json_node_type(v) == JSON_ARRAY ? json_at(v, i) : v;
}

static kiln_status
cellset_json(const uint8_t *p, size_t n, cellset *cs, kiln_err *err)
{
    json_doc *d = NULL;
    kiln_err jerr;
    status_clear(&jerr);
    if (json_parse((const char *)p, n, &d, &jerr) != KILN_OK)
        return status_set(err, KILN_INVALID, "cellset: JSON: %s", jerr.msg);
    kiln_status st = KILN_OK;
    const json_node *root = json_root(d);
    if (json_node_type(root) != JSON_OBJECT) {
        st = status_set(err, KILN_INVALID, "cellset: JSON: expected an object {\"Row\":[...]}");
        goto out;
    }
    const json_node *rows = json_get(root, "Row");
    for (size_t ri = 0; ri < cellset_json_items(rows) && st == KILN_OK; ri++) {
        const json_node *r = cellset_json_item(rows, ri);
        if (json_node_type(r) != JSON_OBJECT) {
            st = status_set(err, KILN_INVALID, "cellset: JSON: Row %zu is not an object", ri + 1);
            break;
        }
        if ((st = cellset_row_add(cs, "JSON", err)) != KILN_OK)
            break;
        cellset_row *row = &cs->rows[cs->nrows - 1];
        const json_node *key = json_get(r, "key");
        if (key != NULL && json_node_type(key) != JSON_NULL) {
            size_t kn;
            const char *ks = json_str(key, &kn);
            if (ks == NULL || cellset_b64(cs, ks, kn, &row->key_off, &row->key_len) != 0) {
                st = status_set(err, KILN_INVALID, "cellset: JSON: Row %zu: key is not valid "
                                "base64", ri + 1);
                break;
            }
            row->has_key = 1;
        }
        const json_node *cells = json_get(r, "Cell");
        for (size_t ci = 0; ci < cellset_json_items(cells) && st == KILN_OK; ci++)
            st = cellset_json_cell(cs, cellset_json_item(cells, ci), ri + 1, ci + 1, err);
    }
out:
    json_doc_free(d);
    return st;
}

/* ------------------------------------------------------------------ XML */

typedef struct cellset_xml {
    const uint8_t *p, *end;
    kbuf text;                     /* the last attribute value or text read */
    kiln_err *err;
} cellset_xml;

static int
cellset_xml_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void
cellset_xml_ws(cellset_xml *x)
{
    while (x->p < x->end && cellset_xml_space(*x->p))
        x->p++;
}

static int
cellset_xml_eat(cellset_xml *x, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(x->end - x->p) < n || memcmp(x->p, lit, n) != 0)
        return 0;
    x->p += n;
    return 1;
}

/* Whitespace, <?...?> and <!--...--> between elements. */
static kiln_status
cellset_xml_skip(cellset_xml *x)
{
    for (;;) {
        cellset_xml_ws(x);
        const char *close = cellset_xml_eat(x, "<?")     ? "?>"
                            : cellset_xml_eat(x, "<!--") ? "-->"
                                                         : NULL;
        if (close == NULL)
            return KILN_OK;
        size_t cn = strlen(close);
        const uint8_t *q = x->p;
        while ((size_t)(x->end - q) >= cn && memcmp(q, close, cn) != 0)
            q++;
        if ((size_t)(x->end - q) < cn)
            return status_set(x->err, KILN_INVALID, "cellset: XML: unterminated %s", close);
        x->p = q + cn;
    }
}

static int
cellset_xml_namech(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.' || c == ':';
}

static kslice
cellset_xml_name(cellset_xml *x)
{
    const uint8_t *s = x->p;
    while (x->p < x->end && cellset_xml_namech(*x->p))
        x->p++;
    return kslice_make(s, (size_t)(x->p - s));
}

static int
cellset_is(kslice s, const char *lit)
{
    return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

/* One entity at x->p ('&'): append its character to x->text. */
static kiln_status
cellset_xml_entity(cellset_xml *x)
{
    const uint8_t *semi = memchr(x->p, ';', (size_t)(x->end - x->p));
    if (semi == NULL || semi - x->p > 10)
        return status_set(x->err, KILN_INVALID, "cellset: XML: bad entity");
    kslice e = kslice_make(x->p + 1, (size_t)(semi - x->p - 1));
    int c = cellset_is(e, "amp") ? '&' : cellset_is(e, "lt") ? '<' : cellset_is(e, "gt") ? '>'
            : cellset_is(e, "quot") ? '"' : cellset_is(e, "apos") ? '\'' : -1;
    if (c < 0 && e.n >= 2 && e.p[0] == '#') {
        int hex = e.p[1] == 'x';
        unsigned v = 0;
        size_t i = hex ? 2 : 1;
        if (i == e.n)
            return status_set(x->err, KILN_INVALID, "cellset: XML: bad character reference");
        for (; i < e.n && v < 0x110000; i++) {
            uint8_t d = e.p[i];
            int dv = d >= '0' && d <= '9'           ? d - '0'
                     : hex && d >= 'a' && d <= 'f' ? d - 'a' + 10
                     : hex && d >= 'A' && d <= 'F' ? d - 'A' + 10
                                                   : -1;
            if (dv < 0)
                return status_set(x->err, KILN_INVALID, "cellset: XML: bad character reference");
            v = v * (hex ? 16u : 10u) + (unsigned)dv;
        }
        /* base64 and numbers are ASCII: nothing else can be meant */
        if (v == 0 || v > 0x7F)
            return status_set(x->err, KILN_INVALID,
                              "cellset: XML: character reference outside ASCII");
        c = (int)v;
    }
    if (c < 0)
        return status_set(x->err, KILN_INVALID, "cellset: XML: unknown entity &%.*s;",
                          (int)e.n, (const char *)e.p);
    buf_append_u8(&x->text, (uint8_t)c);
    x->p = semi + 1;
    return KILN_OK;
}

/* Text up to `stop` (not consumed) into x->text, entities decoded. */
static kiln_status
cellset_xml_text(cellset_xml *x, uint8_t stop)
{
    buf_reset(&x->text);
    while (x->p < x->end && *x->p != stop) {
        if (*x->p == '&') {
            kiln_status st = cellset_xml_entity(x);
            if (st != KILN_OK)
                return st;
            continue;
        }
        if (*x->p == '<')
            return status_set(x->err, KILN_INVALID, "cellset: XML: '<' inside a value");
        buf_append_u8(&x->text, *x->p++);
    }
    if (x->p == x->end)
        return status_set(x->err, KILN_INVALID, "cellset: XML: truncated");
    return KILN_OK;
}

/* After "<NAME": the attributes, calling on_attr for each, then ">" (*empty
 * 0) or "/>" (*empty 1). */
typedef kiln_status (*cellset_xml_attr_fn)(cellset_xml *x, cellset *cs, kslice name);

static kiln_status
cellset_xml_attrs(cellset_xml *x, cellset *cs, cellset_xml_attr_fn on_attr, int *empty)
{
    for (;;) {
        int had_space = x->p < x->end && cellset_xml_space(*x->p);
        cellset_xml_ws(x);
        if (cellset_xml_eat(x, "/>")) {
            *empty = 1;
            return KILN_OK;
        }
        if (cellset_xml_eat(x, ">")) {
            *empty = 0;
            return KILN_OK;
        }
        kslice name = cellset_xml_name(x);
        if (name.n == 0 || !had_space)
            return status_set(x->err, KILN_INVALID, "cellset: XML: malformed tag");
        cellset_xml_ws(x);
        if (!cellset_xml_eat(x, "="))
            return status_set(x->err, KILN_INVALID, "cellset: XML: attribute without a value");
        cellset_xml_ws(x);
        if (x->p == x->end || (*x->p != '"' && *x->p != '\''))
            return status_set(x->err, KILN_INVALID, "cellset: XML: attribute without quotes");
        uint8_t q = *x->p++;
        kiln_status st = cellset_xml_text(x, q);
        if (st != KILN_OK)
            return st;
        x->p++;
        if (on_attr != NULL && (st = on_attr(x, cs, name)) != KILN_OK)
            return st;
    }
}

/* "</NAME>" */
static kiln_status
cellset_xml_close(cellset_xml *x, const char *name)
{
    if (!cellset_xml_eat(x, "</") || !cellset_xml_eat(x, name) ||
        (x->p < x->end && cellset_xml_namech(*x->p)))
        return status_set(x->err, KILN_INVALID, "cellset: XML: expected </%s>", name);
    cellset_xml_ws(x);
    if (!cellset_xml_eat(x, ">"))
        return status_set(x->err, KILN_INVALID, "cellset: XML: malformed </%s>", name);
    return KILN_OK;
}

/* "<NAME" followed by a non-name byte. */
static int
cellset_xml_open(cellset_xml *x, const char *name)
{
    const uint8_t *at = x->p;
    if (cellset_xml_eat(x, "<") && cellset_xml_eat(x, name) &&
        !(x->p < x->end && cellset_xml_namech(*x->p)))
        return 1;
    x->p = at;
    return 0;
}

static kiln_status
cellset_xml_row_attr(cellset_xml *x, cellset *cs, kslice name)
{
    if (!cellset_is(name, "key"))
        return KILN_OK;
    cellset_row *r = &cs->rows[cs->nrows - 1];
    if (cellset_b64(cs, (const char *)x->text.data, x->text.len, &r->key_off, &r->key_len) != 0)
        return status_set(x->err, KILN_INVALID, "cellset: XML: Row %zu: key is not valid base64",
                          cs->nrows);
    r->has_key = 1;
    return KILN_OK;
}

static kiln_status
cellset_xml_cell_attr(cellset_xml *x, cellset *cs, kslice name)
{
    cellset_cell *c = &cs->cells[cs->ncells - 1];
    if (cellset_is(name, "column")) {
        if (cellset_b64(cs, (const char *)x->text.data, x->text.len, &c->column_off,
                        &c->column_len) != 0)
            return status_set(x->err, KILN_INVALID,
                              "cellset: XML: Row %zu: Cell %zu: column is not valid base64",
                              cs->nrows, cs->rows[cs->nrows - 1].count);
        c->has_column = 1;
    } else if (cellset_is(name, "timestamp")) {
        if (cellset_ts((const char *)x->text.data, x->text.len, &c->ts) != 0)
            return status_set(x->err, KILN_INVALID,
                              "cellset: XML: Row %zu: Cell %zu: timestamp is not a "
                              "non-negative integer", cs->nrows, cs->rows[cs->nrows - 1].count);
    }
    return KILN_OK;
}

static kiln_status
cellset_xml_cell(cellset_xml *x, cellset *cs)
{
    kiln_status st;
    int empty;
    if ((st = cellset_cell_add(cs, "XML", x->err)) != KILN_OK ||
        (st = cellset_xml_attrs(x, cs, cellset_xml_cell_attr, &empty)) != KILN_OK)
        return st;
    cellset_cell *c = &cs->cells[cs->ncells - 1];
    c->value_off = (uint32_t)cs->bytes.len;
    c->value_len = 0;
    if (empty)
        return KILN_OK;
    if ((st = cellset_xml_text(x, '<')) != KILN_OK)
        return st;
    size_t s = 0, e = x->text.len;   /* a pretty-printer's indentation is not base64 */
    while (s < e && cellset_xml_space(x->text.data[s]))
        s++;
    while (e > s && cellset_xml_space(x->text.data[e - 1]))
        e--;
    if (cellset_b64(cs, (const char *)x->text.data + s, e - s, &c->value_off, &c->value_len) !=
        0)
        return status_set(x->err, KILN_INVALID,
                          "cellset: XML: Row %zu: Cell %zu: the value is not valid base64",
                          cs->nrows, cs->rows[cs->nrows - 1].count);
    return cellset_xml_close(x, "Cell");
}

static kiln_status
cellset_xml_row(cellset_xml *x, cellset *cs)
{
    kiln_status st;
    int empty;
    if ((st = cellset_row_add(cs, "XML", x->err)) != KILN_OK ||
        (st = cellset_xml_attrs(x, cs, cellset_xml_row_attr, &empty)) != KILN_OK)
        return st;
    if (empty)
        return KILN_OK;
    for (;;) {
        if ((st = cellset_xml_skip(x)) != KILN_OK)
            return st;
        if (cellset_xml_open(x, "Cell")) {
            if ((st = cellset_xml_cell(x, cs)) != KILN_OK)
                return st;
            continue;
        }
        return cellset_xml_close(x, "Row");
    }
}

static kiln_status
cellset_xml_doc(const uint8_t *p, size_t n, cellset *cs, kiln_err *err)
{
    cellset_xml x = {p, p + n, KBUF_INIT, err};
    kiln_status st;
    int empty;
    if ((st = cellset_xml_skip(&x)) != KILN_OK)
        goto out;
    if (!cellset_xml_open(&x, "CellSet")) {
        st = status_set(err, KILN_INVALID, "cellset: XML: expected <CellSet>");
        goto out;
    }
    if ((st = cellset_xml_attrs(&x, cs, NULL, &empty)) != KILN_OK)
        goto out;
    while (!empty) {
        if ((st = cellset_xml_skip(&x)) != KILN_OK)
            goto out;
        if (cellset_xml_open(&x, "Row")) {
            if ((st = cellset_xml_row(&x, cs)) != KILN_OK)
                goto out;
            continue;
        }
        if (x.p + 1 < x.end && x.p[0] == '<' && x.p[1] != '/') {
            x.p++;
            kslice name = cellset_xml_name(&x);
            st = status_set(err, KILN_INVALID, "cellset: XML: unknown element <%.*s> in CellSet",
                            (int)(name.n > 32 ? 32 : name.n), (const char *)name.p);
            goto out;
        }
        if ((st = cellset_xml_close(&x, "CellSet")) != KILN_OK)
            goto out;
        break;
    }
    if ((st = cellset_xml_skip(&x)) != KILN_OK)
        goto out;
    if (x.p != x.end)
        st = status_set(err, KILN_INVALID, "cellset: XML: bytes after </CellSet>");
out:
    buf_free(&x.text);
    return st;
}

/* ------------------------------------------------------------------ protobuf */

/* One field of a message at *p: its number, wire type, and a varint value
 * (wt 0) or a length-delimited value (wt 2, *val and *len). 1 on success,
 * 0 at the end, -1 malformed (err set). Fixed-width fields are skipped by
 * the callers through the same values (*len the width). */
static int
cellset_pb_field(const uint8_t **p, const uint8_t *end, uint32_t *field, uint32_t *wt,
                 uint64_t *v, const uint8_t **val, size_t *len, const char *msg, kiln_err *err)
{
    if (*p == end)
        return 0;
    uint64_t key;
    size_t used = coding_get_varint(*p, end, &key);
    if (used == 0 || (key >> 3) == 0 || (key >> 3) > UINT32_MAX) {
        status_set(err, KILN_INVALID, "cellset: protobuf: %s: bad field key", msg);
        return -1;
    }
    *p += used;
    *field = (uint32_t)(key >> 3);
    *wt = (uint32_t)(key & 7);
    *val = NULL;
    *len = 0;
    *v = 0;
    switch (*wt) {
    case 0:
        if ((used = coding_get_varint(*p, end, v)) == 0) {
            status_set(err, KILN_INVALID, "cellset: protobuf: %s: truncated varint", msg);
            return -1;
        }
        *p += used;
        return 1;
    case 1:
    case 5:
        *len = *wt == 1 ? 8 : 4;
        if ((size_t)(end - *p) < *len) {
            status_set(err, KILN_INVALID, "cellset: protobuf: %s: truncated field %u", msg,
                       *field);
            return -1;
        }
        *val = *p;
        *p += *len;
        return 1;
    case 2:
        if ((used = coding_get_varint(*p, end, v)) == 0 ||
            *v > (uint64_t)(end - *p) - used) {
            status_set(err, KILN_INVALID, "cellset: protobuf: %s: field %u: bad length", msg,
                       *field);
            return -1;
        }
        *p += used;
        *val = *p;
        *len = (size_t)*v;
        *p += *len;
        return 1;
    default:
        status_set(err, KILN_INVALID, "cellset: protobuf: %s: wire type %u", msg, *wt);
        return -1;
    }
}

static kiln_status
cellset_pb_cell(const uint8_t *p, size_t n, cellset *cs, kiln_err *err)
{
    kiln_status st = cellset_cell_add(cs, "protobuf", err);
    if (st != KILN_OK)
        return st;
    char msg[48];
    snprintf(msg, sizeof msg, "Row %zu: Cell %zu", cs->nrows, cs->rows[cs->nrows - 1].count);
    const uint8_t *end = p + n;
    uint32_t field, wt;
    uint64_t v;
    const uint8_t *val;
    size_t len;
    int r;
    while ((r = cellset_pb_field(&p, end, &field, &wt, &v, &val, &len, msg, err)) == 1) {
        cellset_cell *c = &cs->cells[cs->ncells - 1];
        int want = field == 3 ? 0 : field <= 4 ? 2 : -1;
        if (want >= 0 && (int)wt != want)
            return status_set(err, KILN_INVALID,
                              "cellset: protobuf: %s: field %u has the wrong wire type", msg,
                              field);
        if (field == 2) {
            c->column_off = cellset_keep(cs, val, len);
            c->column_len = (uint32_t)len;
            c->has_column = 1;
        } else if (field == 3) {
            if ((int64_t)v < 0)
                return status_set(err, KILN_INVALID, "cellset: protobuf: %s: negative timestamp",
                                  msg);
            c->ts = (int64_t)v;
        } else if (field == 4) {
            c->value_off = cellset_keep(cs, val, len);
            c->value_len = (uint32_t)len;
        }
        /* field 1 (the cell's row) is ignored, as HBase's CellSetModel does */
    }
    return r < 0 ? err->code : KILN_OK;
}

static kiln_status
cellset_pb_row(const uint8_t *p, size_t n, cellset *cs, kiln_err *err)
{
    kiln_status st = cellset_row_add(cs, "protobuf", err);
    if (st != KILN_OK)
        return st;
    char msg[32];
    snprintf(msg, sizeof msg, "Row %zu", cs->nrows);
    const uint8_t *end = p + n;
    uint32_t field, wt;
    uint64_t v;
    const uint8_t *val;
    size_t len;
    int r;
    while ((r = cellset_pb_field(&p, end, &field, &wt, &v, &val, &len, msg, err)) == 1) {
        if ((field == 1 || field == 2) && wt != 2)
            return status_set(err, KILN_INVALID,
                              "cellset: protobuf: %s: field %u has the wrong wire type", msg,
                              field);
        if (field == 1) {
            cellset_row *row = &cs->rows[cs->nrows - 1];
            row->key_off = cellset_keep(cs, val, len);
            row->key_len = (uint32_t)len;
            row->has_key = 1;
        } else if (field == 2) {
            if ((st = cellset_pb_cell(val, len, cs, err)) != KILN_OK)
                return st;
        }
    }
    return r < 0 ? err->code : KILN_OK;
}

static kiln_status
cellset_pb(const uint8_t *p, size_t n, cellset *cs, kiln_err *err)
{
    const uint8_t *end = p + n;
    uint32_t field, wt;
    uint64_t v;
    const uint8_t *val;
    size_t len;
    int r;
    while ((r = cellset_pb_field(&p, end, &field, &wt, &v, &val, &len, "CellSet", err)) == 1) {
        if (field != 1)
            continue;
        if (wt != 2)
            return status_set(err, KILN_INVALID,
                              "cellset: protobuf: CellSet: field 1 has the wrong wire type");
        kiln_status st = cellset_pb_row(val, len, cs, err);
        if (st != KILN_OK)
            return st;
    }
    return r < 0 ? err->code : KILN_OK;
}

/* ------------------------------------------------------------------ entry points */

kiln_status
cellset_parse(const uint8_t *p, size_t n, http_rep rep, cellset *cs, kiln_err *err)
{
    cellset_reset(cs);
    if (n > UINT32_MAX / 2)
        return status_set(err, KILN_INVALID, "cellset: body too large");
    kiln_status st;
    if (rep == HTTP_REP_PB)
        st = cellset_pb(p, n, cs, err);
    else if (rep == HTTP_REP_XML)
        st = cellset_xml_doc(p, n, cs, err);
    else
        st = cellset_json(p, n, cs, err);
    if (st != KILN_OK)
        cellset_reset(cs);
    return st;
}

int
cellset_split_column(kslice column, kslice *family, kslice *qualifier)
{
    const uint8_t *colon = column.n ? memchr(column.p, ':', column.n) : NULL;
    if (colon == NULL) {
        *family = column;
        *qualifier = kslice_make(NULL, 0);
        return 0;
    }
    *family = kslice_make(column.p, (size_t)(colon - column.p));
    *qualifier = kslice_make(colon + 1, column.n - family->n - 1);
    return 1;
}

kiln_status
cellset_puts(const cellset *cs, const kslice *row, const kslice *columns, size_t ncols,
             kiln_mutation **out, size_t *n, kiln_err *err)
{
    *out = NULL;
    *n = 0;
    if (cs->nrows == 0)
        return status_set(err, KILN_INVALID, "cellset: no rows");
    kiln_mutation *m = kiln_calloc(cs->nrows, sizeof *m);
    kiln_status st = KILN_OK;
    size_t made = 0;
    for (size_t ri = 0; ri < cs->nrows && st == KILN_OK; ri++) {
        const cellset_row *r = &cs->rows[ri];
        kslice key = r->has_key ? cellset_slice(cs, r->key_off, r->key_len)
                     : row != NULL ? *row
                                   : kslice_make(NULL, 0);
        if (!r->has_key && row == NULL) {
            st = status_set(err, KILN_INVALID, "cellset: Row %zu: row key not specified", ri + 1);
            break;
        }
        if (key.n == 0 || key.n > CELL_ROW_MAX) {
            st = status_set(err, KILN_INVALID, "cellset: Row %zu: the key must be 1..%d bytes",
                            ri + 1, CELL_ROW_MAX);
            break;
        }
        if (r->count == 0) {
            st = status_set(err, KILN_INVALID, "cellset: Row %zu: no cells", ri + 1);
            break;
        }
        mutation_init(&m[made++], key.p, key.n);
        size_t next_col = 0;
        for (size_t ci = 0; ci < r->count; ci++) {
            const cellset_cell *c = &cs->cells[r->first + ci];
            kslice col, fam, qual;
            if (c->has_column) {
                col = cellset_slice(cs, c->column_off, c->column_len);
            } else if (next_col < ncols) {
                col = columns[next_col++];
            } else {
                st = status_set(err, KILN_INVALID, "cellset: Row %zu: Cell %zu: column not "
                                "specified", ri + 1, ci + 1);
                break;
            }
            if (!cellset_split_column(col, &fam, &qual)) {
                st = status_set(err, KILN_INVALID, "cellset: Row %zu: Cell %zu: column must be "
                                "FAMILY:QUALIFIER", ri + 1, ci + 1);
                break;
            }
            if (fam.n == 0 || fam.n > CELL_FAMILY_MAX ||
                !schema_family_name_ok((const char *)fam.p, fam.n)) {
                st = status_set(err, KILN_INVALID, "cellset: Row %zu: Cell %zu: bad family name",
                                ri + 1, ci + 1);
                break;
            }
            mutation_put(&m[made - 1], fam.p, fam.n, qual.p, qual.n, c->ts,
                         cs->bytes.data + c->value_off, c->value_len);
        }
    }
    if (st != KILN_OK) {
        for (size_t i = 0; i < made; i++)
            mutation_free(&m[i]);
        free(m);
        return st;
    }
    *out = m;
    *n = made;
    return KILN_OK;
}
