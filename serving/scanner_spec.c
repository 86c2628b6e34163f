/* scanner_spec.c -- the three parsers of scanner_spec.h.
 *
 * The XML parser reads the one element HBase's Scanner has, its attributes
 * and its <column> and <filter> children; it decodes the five predefined
 * entities and numeric character references, skips an XML declaration and
 * comments, and refuses anything else (DTDs, CDATA) as malformed.
 */
#include "serving/scanner_spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "storage/base/coding.h"
#include "storage/query/json.h"
#include "storage/store/schema.h"

void
scanner_spec_init(scanner_spec *s)
{
    memset(s, 0, sizeof *s);
}

void
scanner_spec_free(scanner_spec *s)
{
    buf_free(&s->start);
    buf_free(&s->end);
    buf_free(&s->filter);
    for (size_t i = 0; i < SCANNER_SPEC_COLUMNS_MAX; i++)
        buf_free(&s->colbuf[i]);
}

/* Add column "f[:q]" (raw bytes). */
static kiln_status
scanner_spec_column(scanner_spec *s, const uint8_t *p, size_t n, kiln_err *err)
{
    if (s->ncols == SCANNER_SPEC_COLUMNS_MAX)
        return status_set(err, KILN_INVALID, "scanner: more than %d columns",
                          SCANNER_SPEC_COLUMNS_MAX);
    const uint8_t *colon = memchr(p, ':', n);
    size_t flen = colon ? (size_t)(colon - p) : n;
    if (flen == 0 || memchr(p, '\0', flen) != NULL || !schema_family_name_ok((const char *)p, flen))
        return status_set(err, KILN_INVALID, "scanner: bad column (FAMILY[:QUALIFIER])");
    kbuf *b = &s->colbuf[s->ncols];
    buf_reset(b);
    buf_append(b, p, flen);
    buf_append_u8(b, '\0');
    if (colon != NULL)
        buf_append(b, colon + 1, n - flen - 1);
    store_column *c = &s->cols[s->ncols++];
    c->family = (const char *)b->data;
    c->qualifier = colon ? b->data + flen + 1 : NULL;
    c->qualifier_len = colon ? n - flen - 1 : 0;
    return KILN_OK;
}

static kiln_status
scanner_spec_b64(const char *s, size_t n, const char *what, kbuf *out, kiln_err *err)
{
    buf_reset(out);
    if (json_b64_decode(s, n, out) != 0)
        return status_set(err, KILN_INVALID, "scanner: %s is not valid base64", what);
    if (out->len > CELL_ROW_MAX)
        return status_set(err, KILN_INVALID, "scanner: %s longer than %d bytes", what,
                          CELL_ROW_MAX);
    return KILN_OK;
}

static kiln_status
scanner_spec_check(scanner_spec *s, kiln_err *err)
{
    if (s->batch < 0 || s->batch > INT32_MAX || s->caching < 0 || s->max_versions < 0 ||
        s->max_versions > INT32_MAX || s->limit < 0 || s->start_time < 0 || s->end_time < 0)
        return status_set(err, KILN_INVALID, "scanner: a negative or too large number");
    if (s->end_time > 0 && s->start_time >= s->end_time)
        return status_set(err, KILN_INVALID, "scanner: startTime must be below endTime");
    if (s->has_filter && s->filter.len == 0)
        s->has_filter = 0;
    return KILN_OK;
}

/* ------------------------------------------------------------------ JSON */

static kiln_status
scanner_spec_json_int(const json_node *v, const char *what, int64_t *out, kiln_err *err)
{
    if (v == NULL)
        return KILN_OK;
    const char *s = json_str(v, NULL);
    if (s != NULL) {   /* some clients send numbers as strings */
        char *end;
        errno = 0;
        long long x = strtoll(s, &end, 10);
        if (*s == '\0' || *end != '\0' || errno == ERANGE)
            return status_set(err, KILN_INVALID, "scanner: %s must be a number", what);
        *out = x;
        return KILN_OK;
    }
    if (json_int(v, out) != 0)
        return status_set(err, KILN_INVALID, "scanner: %s must be an integer", what);
    return KILN_OK;
}

static kiln_status
scanner_spec_json(const uint8_t *p, size_t n, scanner_spec *s, kiln_err *err)
{
    json_doc *d;
    kiln_err jerr;
    status_clear(&jerr);
    if (json_parse((const char *)p, n, &d, &jerr) != KILN_OK)
        return status_set(err, KILN_INVALID, "scanner: body is not JSON (%s)", jerr.msg);
    const json_node *root = json_root(d);
    kiln_status st = KILN_OK;
    size_t len;
    const char *str;
    if (json_node_type(root) != JSON_OBJECT) {
        st = status_set(err, KILN_INVALID, "scanner: body must be a JSON object");
        goto out;
    }
    if ((str = json_str(json_get(root, "startRow"), &len)) != NULL &&
        (st = scanner_spec_b64(str, len, "startRow", &s->start, err)) != KILN_OK)
        goto out;
    if ((str = json_str(json_get(root, "endRow"), &len)) != NULL &&
        (st = scanner_spec_b64(str, len, "endRow", &s->end, err)) != KILN_OK)
        goto out;
    const json_node *cols = json_get(root, "column");
    if (cols != NULL && json_node_type(cols) != JSON_ARRAY) {
        st = status_set(err, KILN_INVALID, "scanner: column must be a list");
        goto out;
    }
    kbuf tmp = KBUF_INIT;
    for (size_t i = 0; i < json_len(cols) && st == KILN_OK; i++) {
        if ((str = json_str(json_at(cols, i), &len)) == NULL) {
            st = status_set(err, KILN_INVALID, "scanner: a column must be a base64 string");
            break;
        }
        if ((st = scanner_spec_b64(str, len, "column", &tmp, err)) == KILN_OK)
            st = scanner_spec_column(s, tmp.data, tmp.len, err);
    }
    buf_free(&tmp);
    if (st != KILN_OK)
        goto out;
    static const struct {
        const char *name;
        size_t off;
    } ints[] = {
        {"batch", offsetof(scanner_spec, batch)},
        {"caching", offsetof(scanner_spec, caching)},
        {"maxVersions", offsetof(scanner_spec, max_versions)},
        {"startTime", offsetof(scanner_spec, start_time)},
        {"endTime", offsetof(scanner_spec, end_time)},
        {"limit", offsetof(scanner_spec, limit)},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        if ((st = scanner_spec_json_int(json_get(root, ints[i].name), ints[i].name,
                                        (int64_t *)((char *)s + ints[i].off), err)) != KILN_OK)
            goto out;
    }
    const json_node *rev = json_get(root, "reversed");
    if (rev != NULL) {
        if (json_node_type(rev) != JSON_TRUE && json_node_type(rev) != JSON_FALSE) {
            st = status_set(err, KILN_INVALID, "scanner: reversed must be true or false");
            goto out;
        }
        s->reversed = json_node_type(rev) == JSON_TRUE;
    }
    const json_node *f = json_get(root, "filter");
    if (f != NULL && json_node_type(f) != JSON_NULL) {
        if ((str = json_str(f, &len)) == NULL) {
            st = status_set(err, KILN_INVALID, "scanner: filter must be a string");
            goto out;
        }
        s->has_filter = 1;
        buf_reset(&s->filter);
        buf_append(&s->filter, str, len);
    }
out:
    json_doc_free(d);
    return st;
}

/* ------------------------------------------------------------------ XML */

typedef struct scanner_xml {
    const uint8_t *p, *end;
    kiln_err *err;
} scanner_xml;

static void
scanner_xml_ws(scanner_xml *x)
{
    while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' || *x->p == '\r' || *x->p == '\n'))
        x->p++;
}

static int
scanner_xml_lit(scanner_xml *x, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(x->end - x->p) < n || memcmp(x->p, lit, n) != 0)
        return 0;
    x->p += n;
    return 1;
}

/* Skip <?...?> and <!--...--> before or between elements. */
static kiln_status
scanner_xml_misc(scanner_xml *x)
{
    for (;;) {
        scanner_xml_ws(x);
        const char *close = NULL;
        if (scanner_xml_lit(x, "<?"))
            close = "?>";
        else if (scanner_xml_lit(x, "<!--"))
            close = "-->";
        else
            return KILN_OK;
        size_t cn = strlen(close);
        while (x->p + cn <= x->end && memcmp(x->p, close, cn) != 0)
            x->p++;
        if (x->p + cn > x->end)
            return status_set(x->err, KILN_INVALID, "scanner: XML: unterminated %s", close);
        x->p += cn;
    }
}

static int
scanner_xml_namech(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.' || c == ':';
}

static kslice
scanner_xml_name(scanner_xml *x)
{
    const uint8_t *s = x->p;
    while (x->p < x->end && scanner_xml_namech(*x->p))
        x->p++;
    return kslice_make(s, (size_t)(x->p - s));
}

/* Decode text up to `stop` (exclusive) with entities into out. */
static kiln_status
scanner_xml_text(scanner_xml *x, uint8_t stop, kbuf *out)
{
    buf_reset(out);
    while (x->p < x->end && *x->p != stop) {
        uint8_t c = *x->p;
        if (c == '<')
            return status_set(x->err, KILN_INVALID, "scanner: XML: '<' in text");
        if (c != '&') {
            buf_append_u8(out, c);
            x->p++;
            continue;
        }
        const uint8_t *semi = memchr(x->p, ';', (size_t)(x->end - x->p));
        if (semi == NULL || semi - x->p > 12)
            return status_set(x->err, KILN_INVALID, "scanner: XML: bad entity");
        kslice ent = kslice_make(x->p + 1, (size_t)(semi - x->p - 1));
        static const struct {
            const char *name;
            char ch;
        } ents[] = {{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
        int done = 0;
        for (size_t i = 0; i < 5 && !done; i++) {
            if (ent.n == strlen(ents[i].name) && memcmp(ent.p, ents[i].name, ent.n) == 0) {
                buf_append_u8(out, (uint8_t)ents[i].ch);
                done = 1;
            }
        }
        if (!done && ent.n >= 2 && ent.p[0] == '#') {
            int hex = ent.p[1] == 'x';
            unsigned long v = 0;
            size_t i = hex ? 2 : 1;
            if (i == ent.n)
                return status_set(x->err, KILN_INVALID, "scanner: XML: bad entity");
            for (; i < ent.n; i++) {
                int d = ent.p[i] >= '0' && ent.p[i] <= '9' ? ent.p[i] - '0'
                        : hex && ent.p[i] >= 'a' && ent.p[i] <= 'f' ? ent.p[i] - 'a' + 10
                        : hex && ent.p[i] >= 'A' && ent.p[i] <= 'F' ? ent.p[i] - 'A' + 10
                                                                     : -1;
                if (d < 0 || v > 0x10FFFF)
                    return status_set(x->err, KILN_INVALID, "scanner: XML: bad entity");
                v = v * (hex ? 16 : 10) + (unsigned long)d;
            }
            if (v > 0x7F)   /* only ASCII matters in a Scanner (base64, numbers, JSON) */
                return status_set(x->err, KILN_INVALID, "scanner: XML: non-ASCII reference");
            buf_append_u8(out, (uint8_t)v);
            done = 1;
        }
        if (!done)
            return status_set(x->err, KILN_INVALID, "scanner: XML: unknown entity");
        x->p = semi + 1;
    }
    if (x->p == x->end)
        return status_set(x->err, KILN_INVALID, "scanner: XML: truncated");
    return KILN_OK;
}

static kiln_status
scanner_xml_number(scanner_xml *x, const kbuf *v, kslice name, int64_t *out)
{
    char num[32];
    if (v->len == 0 || v->len >= sizeof num)
        return status_set(x->err, KILN_INVALID, "scanner: %.*s must be a number", (int)name.n,
                          (const char *)name.p);
    memcpy(num, v->data, v->len);
    num[v->len] = '\0';
    char *end;
    errno = 0;
    long long n = strtoll(num, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return status_set(x->err, KILN_INVALID, "scanner: %.*s must be a number", (int)name.n,
                          (const char *)name.p);
    *out = n;
    return KILN_OK;
}

static int
scanner_xml_is(kslice s, const char *lit)
{
    return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

static kiln_status
scanner_xml_attr(scanner_xml *x, scanner_spec *s, kslice name, const kbuf *v)
{
    static const struct {
        const char *name;
        size_t off;
    } ints[] = {
        {"batch", offsetof(scanner_spec, batch)},
        {"caching", offsetof(scanner_spec, caching)},
        {"maxVersions", offsetof(scanner_spec, max_versions)},
        {"startTime", offsetof(scanner_spec, start_time)},
        {"endTime", offsetof(scanner_spec, end_time)},
        {"limit", offsetof(scanner_spec, limit)},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        if (scanner_xml_is(name, ints[i].name))
            return scanner_xml_number(x, v, name, (int64_t *)((char *)s + ints[i].off));
    }
    if (scanner_xml_is(name, "startRow"))
        return scanner_spec_b64((const char *)v->data, v->len, "startRow", &s->start, x->err);
    if (scanner_xml_is(name, "endRow"))
        return scanner_spec_b64((const char *)v->data, v->len, "endRow", &s->end, x->err);
    if (scanner_xml_is(name, "reversed")) {
        s->reversed = v->len == 4 && memcmp(v->data, "true", 4) == 0;
        return KILN_OK;
    }
    return KILN_OK;   /* others (cacheBlocks, ...) are accepted and ignored */
}

static kiln_status
scanner_spec_xml(const uint8_t *p, size_t n, scanner_spec *s, kiln_err *err)
{
    scanner_xml x = {p, p + n, err};
    kiln_status st;
    kbuf v = KBUF_INIT, b = KBUF_INIT;
    if ((st = scanner_xml_misc(&x)) != KILN_OK)
        goto out;
    if (!scanner_xml_lit(&x, "<Scanner") ||
        (x.p < x.end && scanner_xml_namech(*x.p))) {   /* <ScannerX> is another element */
        st = status_set(err, KILN_INVALID, "scanner: XML: expected <Scanner>");
        goto out;
    }
    int empty = 0;
    for (;;) {   /* attributes */
        scanner_xml_ws(&x);
        if (scanner_xml_lit(&x, "/>")) {
            empty = 1;
            break;
        }
        if (scanner_xml_lit(&x, ">"))
            break;
        kslice name = scanner_xml_name(&x);
        scanner_xml_ws(&x);
        if (name.n == 0 || !scanner_xml_lit(&x, "=")) {
            st = status_set(err, KILN_INVALID, "scanner: XML: malformed attribute");
            goto out;
        }
        scanner_xml_ws(&x);
        if (x.p == x.end || (*x.p != '"' && *x.p != '\'')) {
            st = status_set(err, KILN_INVALID, "scanner: XML: attribute without quotes");
            goto out;
        }
        uint8_t q = *x.p++;
        if ((st = scanner_xml_text(&x, q, &v)) != KILN_OK)
            goto out;
        x.p++;
        if ((st = scanner_xml_attr(&x, s, name, &v)) != KILN_OK)
            goto out;
    }
    while (!empty) {   /* children */
        if ((st = scanner_xml_misc(&x)) != KILN_OK)
            goto out;
        if (scanner_xml_lit(&x, "</Scanner")) {
            scanner_xml_ws(&x);
            if (!scanner_xml_lit(&x, ">")) {
                st = status_set(err, KILN_INVALID, "scanner: XML: malformed end tag");
                goto out;
            }
            break;
        }
        if (!scanner_xml_lit(&x, "<")) {
            st = status_set(err, KILN_INVALID, "scanner: XML: expected an element");
            goto out;
        }
        kslice name = scanner_xml_name(&x);
        scanner_xml_ws(&x);
        if (scanner_xml_lit(&x, "/>")) {
            if (scanner_xml_is(name, "column") || scanner_xml_is(name, "filter") ||
                scanner_xml_is(name, "label"))
                continue;
            st = status_set(err, KILN_INVALID, "scanner: XML: unknown element <%.*s>",
                            (int)(name.n > 32 ? 32 : name.n), (const char *)name.p);
            goto out;
        }
        if (!scanner_xml_lit(&x, ">")) {
            st = status_set(err, KILN_INVALID, "scanner: XML: attributes on <%.*s>",
                            (int)(name.n > 32 ? 32 : name.n), (const char *)name.p);
            goto out;
        }
        if ((st = scanner_xml_text(&x, '<', &v)) != KILN_OK)
            goto out;
        if (!scanner_xml_lit(&x, "</") || !scanner_xml_lit(&x, "") ||
            (size_t)(x.end - x.p) < name.n || memcmp(x.p, name.p, name.n) != 0) {
            st = status_set(err, KILN_INVALID, "scanner: XML: mismatched end tag");
            goto out;
        }
        x.p += name.n;
        scanner_xml_ws(&x);
        if (!scanner_xml_lit(&x, ">")) {
            st = status_set(err, KILN_INVALID, "scanner: XML: malformed end tag");
            goto out;
        }
        if (scanner_xml_is(name, "column")) {
            if ((st = scanner_spec_b64((const char *)v.data, v.len, "column", &b, err)) !=
                    KILN_OK ||
                (st = scanner_spec_column(s, b.data, b.len, err)) != KILN_OK)
                goto out;
        } else if (scanner_xml_is(name, "filter")) {
            s->has_filter = 1;
            buf_reset(&s->filter);
            buf_append(&s->filter, v.data, v.len);
        } else if (scanner_xml_is(name, "label")) {
            /* visibility labels: Kiln keeps none */
        } else {
            st = status_set(err, KILN_INVALID, "scanner: XML: unknown element <%.*s>",
                            (int)(name.n > 32 ? 32 : name.n), (const char *)name.p);
            goto out;
        }
    }
    if ((st = scanner_xml_misc(&x)) != KILN_OK)
        goto out;
    if (x.p != x.end)
        st = status_set(err, KILN_INVALID, "scanner: XML: bytes after </Scanner>");
out:
    buf_free(&v);
    buf_free(&b);
    return st;
}

/* ------------------------------------------------------------------ protobuf */

static kiln_status
scanner_spec_pb(const uint8_t *p, size_t n, scanner_spec *s, kiln_err *err)
{
    const uint8_t *end = p + n;
    kiln_status st = KILN_OK;
    while (p < end && st == KILN_OK) {
        uint64_t key, v = 0;
        size_t used = coding_get_varint(p, end, &key);
        if (used == 0)
            return status_set(err, KILN_INVALID, "scanner: protobuf: bad field key");
        p += used;
        uint32_t field = (uint32_t)(key >> 3), wt = (uint32_t)(key & 7);
        if (field == 0)
            return status_set(err, KILN_INVALID, "scanner: protobuf: field number 0");
        const uint8_t *val = NULL;
        if (wt == 0) {
            if ((used = coding_get_varint(p, end, &v)) == 0)
                return status_set(err, KILN_INVALID, "scanner: protobuf: truncated varint");
            p += used;
        } else if (wt == 1 || wt == 5) {
            size_t w = wt == 1 ? 8 : 4;
            if ((size_t)(end - p) < w)
                return status_set(err, KILN_INVALID, "scanner: protobuf: truncated field");
            p += w;
            if (field <= 12)   /* every field Scanner defines is a varint or bytes */
                return status_set(err, KILN_INVALID,
                                  "scanner: protobuf: field %u has the wrong type", field);
            continue;
        } else if (wt == 2) {
            if ((used = coding_get_varint(p, end, &v)) == 0 || v > (uint64_t)(end - p - used))
                return status_set(err, KILN_INVALID, "scanner: protobuf: bad length");
            p += used;
            val = p;
            p += v;
        } else {
            return status_set(err, KILN_INVALID, "scanner: protobuf: wire type %u", wt);
        }
        int want_bytes = field == 1 || field == 2 || field == 3 || field == 8 || field == 10;
        if ((val != NULL) != want_bytes && field <= 12)
            return status_set(err, KILN_INVALID, "scanner: protobuf: field %u has the wrong type",
                              field);
        switch (field) {
        case 1:
        case 2:
            if (v > CELL_ROW_MAX)
                return status_set(err, KILN_INVALID, "scanner: row longer than %d bytes",
                                  CELL_ROW_MAX);
            buf_reset(field == 1 ? &s->start : &s->end);
            buf_append(field == 1 ? &s->start : &s->end, val, (size_t)v);
            break;
        case 3: st = scanner_spec_column(s, val, (size_t)v, err); break;
        case 4: s->batch = (int32_t)v; break;
        case 5: s->start_time = (int64_t)v; break;
        case 6: s->end_time = (int64_t)v; break;
        case 7: s->max_versions = (int32_t)v; break;
        case 8:
            s->has_filter = 1;
            buf_reset(&s->filter);
            buf_append(&s->filter, val, (size_t)v);
            break;
        case 9: s->caching = (int32_t)v; break;
        case 12: s->limit = (int32_t)v; break;
        default: break;   /* labels, cacheBlocks and unknown fields */
        }
    }
    return st;
}

kiln_status
scanner_spec_parse(const uint8_t *p, size_t n, http_rep rep, scanner_spec *s, kiln_err *err)
{
    kiln_status st;
    if (rep == HTTP_REP_PB)
        st = scanner_spec_pb(p, n, s, err);
    else if (rep == HTTP_REP_XML)
        st = scanner_spec_xml(p, n, s, err);
    else
        st = scanner_spec_json(p, n, s, err);
    return st != KILN_OK ? st : scanner_spec_check(s, err);
}
