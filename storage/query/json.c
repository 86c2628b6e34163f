/* json.c -- base64, JSON string writing, and a recursive-descent JSON parser
 * (json.h). The parser keeps nodes in one array and the decoded strings in
 * one byte arena, both addressed by offsets while parsing (the arrays grow)
 * and turned into pointers once the whole text has been accepted. The
 * children of each array or object are stored contiguously in a side array,
 * so json_at is O(1).
 */
#include "storage/query/json.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const char json_b64_tab[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Two output characters per 12 input bits: one 16-bit load from a table
 * that fits in L1 instead of two lookups and two stores. */
static uint16_t json_b64_pairs[4096];
static pthread_once_t json_b64_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__)
#include <immintrin.h>
static int json_b64_ssse3;

/* 12 input bytes (of the 16 at p, all readable) to 16 characters at o.
 * Each triple b0 b1 b2 is spread over a 32-bit lane as the bytes b1 b0 b2
 * b1, where its four 6-bit values sit at bits 10, 4, 22 and 16; a multiply
 * moves each into a byte of its own, and a table indexed by the value's
 * range gives what to add to make its character. */
__attribute__((target("ssse3"))) static void
json_b64_block16(const uint8_t *p, uint8_t *o)
{
    const __m128i spread = _mm_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    __m128i w = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), spread);
    /* bits 10-15 to byte 0 and 22-27 to byte 2 (high halves of 16-bit products) */
    __m128i a = _mm_mulhi_epu16(_mm_and_si128(w, _mm_set1_epi32(0x0FC0FC00)),
                                _mm_set1_epi32(0x04000040));
    /* bits 4-9 to byte 1 and 16-21 to byte 3 (low halves) */
    __m128i b = _mm_mullo_epi16(_mm_and_si128(w, _mm_set1_epi32(0x003F03F0)),
                                _mm_set1_epi32(0x01000010));
    __m128i v = _mm_or_si128(a, b);   /* sixteen values 0..63 */
    /* range index: 0 for 26..51, 1..12 for 52..63, 13 for 0..25 */
    __m128i idx = _mm_subs_epu8(v, _mm_set1_epi8(51));
    idx = _mm_or_si128(idx, _mm_and_si128(_mm_cmpgt_epi8(_mm_set1_epi8(26), v),
                                          _mm_set1_epi8(13)));
    const __m128i add = _mm_setr_epi8('a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                                      '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62,
                                      '/' - 63, 'A', 0, 0);
    _mm_storeu_si128((__m128i *)o, _mm_add_epi8(v, _mm_shuffle_epi8(add, idx)));
}
#endif

static void
json_b64_init(void)
{
    for (unsigned i = 0; i < 4096; i++) {
        uint8_t two[2] = {(uint8_t)json_b64_tab[i >> 6], (uint8_t)json_b64_tab[i & 63]};
        memcpy(&json_b64_pairs[i], two, 2);
    }
#if defined(__x86_64__)
    json_b64_ssse3 = __builtin_cpu_supports("ssse3");
#endif
}

void
json_b64_append(kbuf *out, const uint8_t *p, size_t n)
{
    pthread_once(&json_b64_once, json_b64_init);
    buf_reserve(out, json_b64_len(n));
    uint8_t *o = out->data + out->len;
    size_t i = 0;
#if defined(__x86_64__)
    if (json_b64_ssse3) {
        /* 12 bytes a step while 16 can be loaded; each step writes 16
         * characters, all of them the output's */
        for (; i + 16 <= n; i += 12, o += 16)
            json_b64_block16(p + i, o);
    }
#endif
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        memcpy(o, &json_b64_pairs[v >> 12], 2);
        memcpy(o + 2, &json_b64_pairs[v & 4095], 2);
        o += 4;
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        o[0] = (uint8_t)json_b64_tab[v >> 18];
        o[1] = (uint8_t)json_b64_tab[(v >> 12) & 63];
        o[2] = i + 1 < n ? (uint8_t)json_b64_tab[(v >> 6) & 63] : '=';
        o[3] = '=';
        o += 4;
    }
    out->len = (size_t)(o - out->data);
}

static int
json_b64_val(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

int
json_b64_decode(const char *s, size_t n, kbuf *out)
{
    while (n > 0 && s[n - 1] == '=')
        n--;
    if (n % 4 == 1)
        return -1;
    buf_reserve(out, n / 4 * 3 + 3);
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = json_b64_val(s[i]);
        if (v < 0)
            return -1;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out->data[out->len++] = (uint8_t)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    return 0;
}

/* Length of the well-formed UTF-8 sequence at p[0..n) (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF), or 0. */
static size_t
json_utf8_len(const uint8_t *p, size_t n)
{
    uint8_t c = p[0];
    size_t len;
    uint32_t min, cp;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2, min = 0x80, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, min = 0x800, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, min = 0x10000, cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t k = 1; k < len; k++) {
        if ((p[k] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (p[k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

void
json_str_append(kbuf *out, const void *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = s;
    buf_reserve(out, n + 2);
    out->data[out->len++] = '"';
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c >= 0x80) {
            /* A well-formed UTF-8 sequence is copied; any other byte is
             * written as the code point of the same number (\u00XX), so
             * the document stays valid UTF-8 whatever the input held. */
            size_t k = json_utf8_len(p + i, n - i);
            buf_reserve(out, k ? k : 6);
            if (k > 0) {
                memcpy(out->data + out->len, p + i, k);
                out->len += k;
                i += k - 1;
                continue;
            }
        } else if (c >= 0x20 && c != '"' && c != '\\') {
            if (out->len == out->cap)
                buf_reserve(out, n - i + 8);
            out->data[out->len++] = c;
            continue;
        }
        buf_reserve(out, 6 + (n - i));
        out->data[out->len++] = '\\';
        switch (c) {
        case '"': out->data[out->len++] = '"'; break;
        case '\\': out->data[out->len++] = '\\'; break;
        case '\n': out->data[out->len++] = 'n'; break;
        case '\r': out->data[out->len++] = 'r'; break;
        case '\t': out->data[out->len++] = 't'; break;
        default:
            out->data[out->len++] = 'u';
            out->data[out->len++] = '0';
            out->data[out->len++] = '0';
            out->data[out->len++] = (uint8_t)hex[c >> 4];
            out->data[out->len++] = (uint8_t)hex[c & 15];
            break;
        }
    }
    buf_append_u8(out, '"');
}

void
json_u64(kbuf *out, uint64_t v)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324"
                                "25262728293031323334353637383940414243444546474849"
                                "50515253545556575859606162636465666768697071727374"
                                "75767778798081828384858687888990919293949596979899";
    char tmp[24];
    size_t k = sizeof tmp;
    while (v >= 100) {
        k -= 2;
        memcpy(tmp + k, pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) {
        k -= 2;
        memcpy(tmp + k, pairs + 2 * v, 2);
    } else {
        tmp[--k] = (char)('0' + v);
    }
    buf_append(out, tmp + k, sizeof tmp - k);
}

void
json_i64(kbuf *out, int64_t v)
{
    if (v < 0) {
        buf_append_u8(out, '-');
        json_u64(out, (uint64_t)0 - (uint64_t)v);
    } else {
        json_u64(out, (uint64_t)v);
    }
}

/* ------------------------------------------------------------------ parser */

struct json_node {
    json_type type;
    size_t key_off, key_len;     /* member name in the arena (objects' members) */
    size_t str_off, str_len;     /* strings and the text of numbers */
    size_t kid_off, kid_count;   /* arrays and objects: slice of doc->kids */
    const char *key;             /* pointers set once parsing is over */
    const char *str;
    const json_node **kids;
    double num;
};

struct json_doc {
    json_node *nodes;
    size_t count, cap;
    size_t *kid_idx;             /* while parsing */
    size_t kid_count, kid_cap;
    const json_node **kids;      /* after parsing */
    kbuf arena;
};

typedef struct json_parser {
    const char *p;
    size_t n, pos;
    json_doc *d;
    size_t *stack;               /* child indices of open containers */
    size_t stack_len, stack_cap;
    kiln_err *err;
} json_parser;

static kiln_status
json_fail(json_parser *ps, const char *what)
{
    return status_set(ps->err, KILN_CORRUPTION, "json: %s at offset %zu", what, ps->pos);
}

static void
json_skip_ws(json_parser *ps)
{
    while (ps->pos < ps->n) {
        char c = ps->p[ps->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        ps->pos++;
    }
}

static size_t
json_new_node(json_doc *d, json_type t)
{
    if (d->count == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 64;
        d->nodes = kiln_realloc(d->nodes, d->cap * sizeof *d->nodes);
    }
    json_node *v = &d->nodes[d->count];
    memset(v, 0, sizeof *v);
    v->type = t;
    return d->count++;
}

static void
json_push(json_parser *ps, size_t idx)
{
    if (ps->stack_len == ps->stack_cap) {
        ps->stack_cap = ps->stack_cap ? ps->stack_cap * 2 : 64;
        ps->stack = kiln_realloc(ps->stack, ps->stack_cap * sizeof *ps->stack);
    }
    ps->stack[ps->stack_len++] = idx;
}

static int
json_hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static void
json_put_utf8(kbuf *b, unsigned cp)
{
    if (cp < 0x80) {
        buf_append_u8(b, (uint8_t)cp);
    } else if (cp < 0x800) {
        buf_append_u8(b, (uint8_t)(0xC0 | cp >> 6));
        buf_append_u8(b, (uint8_t)(0x80 | (cp & 63)));
    } else if (cp < 0x10000) {
        buf_append_u8(b, (uint8_t)(0xE0 | cp >> 12));
        buf_append_u8(b, (uint8_t)(0x80 | ((cp >> 6) & 63)));
        buf_append_u8(b, (uint8_t)(0x80 | (cp & 63)));
    } else {
        buf_append_u8(b, (uint8_t)(0xF0 | cp >> 18));
        buf_append_u8(b, (uint8_t)(0x80 | ((cp >> 12) & 63)));
        buf_append_u8(b, (uint8_t)(0x80 | ((cp >> 6) & 63)));
        buf_append_u8(b, (uint8_t)(0x80 | (cp & 63)));
    }
}

/* Parse a string at ps->pos (on the quote) into the arena. */
static kiln_status
json_parse_string(json_parser *ps, size_t *off, size_t *len)
{
    kbuf *a = &ps->d->arena;
    ps->pos++;
    *off = a->len;
    for (;;) {
        if (ps->pos >= ps->n)
            return json_fail(ps, "unterminated string");
        unsigned char c = (unsigned char)ps->p[ps->pos];
        if (c == '"') {
            ps->pos++;
            break;
        }
        if (c < 0x20)
            return json_fail(ps, "control character in string");
        if (c != '\\') {
            size_t run = ps->pos;
            while (run < ps->n && ps->p[run] != '"' && ps->p[run] != '\\' &&
                   (unsigned char)ps->p[run] >= 0x20)
                run++;
            buf_append(a, ps->p + ps->pos, run - ps->pos);
            ps->pos = run;
            continue;
        }
        if (ps->pos + 1 >= ps->n)
            return json_fail(ps, "unterminated escape");
        char e = ps->p[ps->pos + 1];
        ps->pos += 2;
        switch (e) {
        case '"': buf_append_u8(a, '"'); break;
        case '\\': buf_append_u8(a, '\\'); break;
        case '/': buf_append_u8(a, '/'); break;
        case 'b': buf_append_u8(a, '\b'); break;
        case 'f': buf_append_u8(a, '\f'); break;
        case 'n': buf_append_u8(a, '\n'); break;
        case 'r': buf_append_u8(a, '\r'); break;
        case 't': buf_append_u8(a, '\t'); break;
        case 'u': {
            unsigned cp, lo;
            if (ps->pos + 4 > ps->n || json_hex4(ps->p + ps->pos, &cp) != 0)
                return json_fail(ps, "bad \\u escape");
            ps->pos += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && ps->pos + 6 <= ps->n && ps->p[ps->pos] == '\\' &&
                ps->p[ps->pos + 1] == 'u' && json_hex4(ps->p + ps->pos + 2, &lo) == 0 &&
                lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                ps->pos += 6;
            }
            json_put_utf8(a, cp);
            break;
        }
        default:
            return json_fail(ps, "bad escape");
        }
    }
    *len = a->len - *off;
    buf_append_u8(a, '\0');
    return KILN_OK;
}

static kiln_status
json_parse_number(json_parser *ps, size_t idx)
{
    size_t s = ps->pos;
    const char *p = ps->p;
    size_t i = s;
    if (i < ps->n && p[i] == '-')
        i++;
    if (i >= ps->n || p[i] < '0' || p[i] > '9')
        return json_fail(ps, "bad number");
    if (p[i] == '0') {
        i++;
    } else {
        while (i < ps->n && p[i] >= '0' && p[i] <= '9')
            i++;
    }
    if (i < ps->n && p[i] == '.') {
        i++;
        if (i >= ps->n || p[i] < '0' || p[i] > '9')
            return json_fail(ps, "bad number");
        while (i < ps->n && p[i] >= '0' && p[i] <= '9')
            i++;
    }
    if (i < ps->n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < ps->n && (p[i] == '+' || p[i] == '-'))
            i++;
        if (i >= ps->n || p[i] < '0' || p[i] > '9')
            return json_fail(ps, "bad number");
        while (i < ps->n && p[i] >= '0' && p[i] <= '9')
            i++;
    }
    kbuf *a = &ps->d->arena;
    json_node *v = &ps->d->nodes[idx];
    v->str_off = a->len;
    v->str_len = i - s;
    buf_append(a, p + s, i - s);
    buf_append_u8(a, '\0');
    v->num = strtod((const char *)a->data + v->str_off, NULL);
    ps->pos = i;
    return KILN_OK;
}

static int
json_literal(json_parser *ps, const char *lit)
{
    size_t n = strlen(lit);
    if (ps->n - ps->pos < n || memcmp(ps->p + ps->pos, lit, n) != 0)
        return 0;
    ps->pos += n;
    return 1;
}

static kiln_status json_parse_value(json_parser *ps, size_t *idx, int depth);

/* Move the children collected on the stack since `base` into doc->kid_idx. */
static void
json_close_container(json_parser *ps, size_t idx, size_t base)
{
    json_doc *d = ps->d;
    size_t k = ps->stack_len - base;
    if (d->kid_count + k > d->kid_cap) {
        d->kid_cap = (d->kid_count + k) * 2 + 16;
        d->kid_idx = kiln_realloc(d->kid_idx, d->kid_cap * sizeof *d->kid_idx);
    }
    d->nodes[idx].kid_off = d->kid_count;
    d->nodes[idx].kid_count = k;
    if (k > 0)
        memcpy(d->kid_idx + d->kid_count, ps->stack + base, k * sizeof *ps->stack);
    d->kid_count += k;
    ps->stack_len = base;
}

static kiln_status
json_parse_container(json_parser *ps, size_t *idx, int depth, int object)
{
    if (depth >= JSON_DEPTH_MAX)
        return json_fail(ps, "nesting too deep");
    *idx = json_new_node(ps->d, object ? JSON_OBJECT : JSON_ARRAY);
    size_t base = ps->stack_len;
    char close = object ? '}' : ']';
    ps->pos++;
    json_skip_ws(ps);
    if (ps->pos < ps->n && ps->p[ps->pos] == close) {
        ps->pos++;
        json_close_container(ps, *idx, base);
        return KILN_OK;
    }
    for (;;) {
        size_t koff = 0, klen = 0, child;
        json_skip_ws(ps);
        if (object) {
            if (ps->pos >= ps->n || ps->p[ps->pos] != '"')
                return json_fail(ps, "expected a member name");
            kiln_status st = json_parse_string(ps, &koff, &klen);
            if (st != KILN_OK)
                return st;
            json_skip_ws(ps);
            if (ps->pos >= ps->n || ps->p[ps->pos] != ':')
                return json_fail(ps, "expected ':'");
            ps->pos++;
        }
        kiln_status st = json_parse_value(ps, &child, depth + 1);
        if (st != KILN_OK)
            return st;
        ps->d->nodes[child].key_off = koff;
        ps->d->nodes[child].key_len = klen;
        json_push(ps, child);
        json_skip_ws(ps);
        if (ps->pos < ps->n && ps->p[ps->pos] == ',') {
            ps->pos++;
            continue;
        }
        if (ps->pos < ps->n && ps->p[ps->pos] == close) {
            ps->pos++;
            break;
        }
        return json_fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    json_close_container(ps, *idx, base);
    return KILN_OK;
}

static kiln_status
json_parse_value(json_parser *ps, size_t *idx, int depth)
{
    json_skip_ws(ps);
    if (ps->pos >= ps->n)
        return json_fail(ps, "unexpected end");
    char c = ps->p[ps->pos];
    if (c == '{' || c == '[')
        return json_parse_container(ps, idx, depth, c == '{');
    if (c == '"') {
        size_t off, len;
        kiln_status st = json_parse_string(ps, &off, &len);
        if (st != KILN_OK)
            return st;
        *idx = json_new_node(ps->d, JSON_STRING);
        ps->d->nodes[*idx].str_off = off;
        ps->d->nodes[*idx].str_len = len;
        return KILN_OK;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        *idx = json_new_node(ps->d, JSON_NUMBER);
        return json_parse_number(ps, *idx);
    }
    if (json_literal(ps, "true")) {
        *idx = json_new_node(ps->d, JSON_TRUE);
        return KILN_OK;
    }
    if (json_literal(ps, "false")) {
        *idx = json_new_node(ps->d, JSON_FALSE);
        return KILN_OK;
    }
    if (json_literal(ps, "null")) {
        *idx = json_new_node(ps->d, JSON_NULL);
        return KILN_OK;
    }
    return json_fail(ps, "unexpected character");
}

kiln_status
json_parse(const char *text, size_t n, json_doc **out, kiln_err *err)
{
    *out = NULL;
    json_doc *d = kiln_calloc(1, sizeof *d);
    buf_append_u8(&d->arena, '\0');   /* offset 0: the empty key */
    json_parser ps;
    memset(&ps, 0, sizeof ps);
    ps.p = text;
    ps.n = n;
    ps.d = d;
    ps.err = err;
    size_t root;
    kiln_status st = json_parse_value(&ps, &root, 0);
    if (st == KILN_OK) {
        json_skip_ws(&ps);
        if (ps.pos != n)
            st = json_fail(&ps, "trailing bytes");
    }
    free(ps.stack);
    if (st != KILN_OK) {
        json_doc_free(d);
        return st;
    }
    /* Offsets become pointers now that nothing grows any more. The root is
     * node 0: a container is created before its children, a scalar alone. */
    (void)root;
    d->kids = kiln_malloc((d->kid_count ? d->kid_count : 1) * sizeof *d->kids);
    for (size_t i = 0; i < d->kid_count; i++)
        d->kids[i] = &d->nodes[d->kid_idx[i]];
    for (size_t i = 0; i < d->count; i++) {
        json_node *v = &d->nodes[i];
        v->key = (const char *)d->arena.data + v->key_off;
        v->str = (const char *)d->arena.data + v->str_off;
        v->kids = d->kids + v->kid_off;
    }
    *out = d;
    return KILN_OK;
}

void
json_doc_free(json_doc *d)
{
    if (d == NULL)
        return;
    free(d->nodes);
    free(d->kid_idx);
    free(d->kids);
    buf_free(&d->arena);
    free(d);
}

const json_node *
json_root(const json_doc *d)
{
    return &d->nodes[0];
}

json_type
json_node_type(const json_node *v)
{
    return v == NULL ? JSON_NULL : v->type;
}

const json_node *
json_get(const json_node *v, const char *key)
{
    if (v == NULL || v->type != JSON_OBJECT)
        return NULL;
    size_t kl = strlen(key);
    for (size_t i = 0; i < v->kid_count; i++) {
        const json_node *m = v->kids[i];
        if (m->key_len == kl && memcmp(m->key, key, kl) == 0)
            return m;
    }
    return NULL;
}

size_t
json_len(const json_node *v)
{
    if (v == NULL || (v->type != JSON_ARRAY && v->type != JSON_OBJECT))
        return 0;
    return v->kid_count;
}

const json_node *
json_at(const json_node *v, size_t i)
{
    if (i >= json_len(v))
        return NULL;
    return v->kids[i];
}

const char *
json_key(const json_node *v)
{
    return v == NULL ? "" : v->key;
}

const char *
json_str(const json_node *v, size_t *n)
{
    if (v == NULL || v->type != JSON_STRING)
        return NULL;
    if (n != NULL)
        *n = v->str_len;
    return v->str;
}

int
json_int(const json_node *v, int64_t *out)
{
    if (v == NULL || v->type != JSON_NUMBER)
        return -1;
    const char *s = v->str;
    int neg = s[0] == '-';
    uint64_t acc = 0;
    size_t i = (size_t)neg;
    if (s[i] == '\0')
        return -1;
    for (; s[i] != '\0'; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (acc > (UINT64_MAX - d) / 10)
            return -1;
        acc = acc * 10 + d;
    }
    if (neg ? acc > (uint64_t)INT64_MAX + 1 : acc > (uint64_t)INT64_MAX)
        return -1;
    *out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return 0;
}

int
json_num(const json_node *v, double *out)
{
    if (v == NULL || v->type != JSON_NUMBER || !isfinite(v->num))
        return -1;
    *out = v->num;
    return 0;
}
