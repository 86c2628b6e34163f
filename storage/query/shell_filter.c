/* shell_filter.c -- HBase shell filter strings to the filter model's JSON
 * (shell_filter.h). A recursive-descent parser over the text: OR of ANDs of
 * filters or parenthesized expressions; each filter's arguments are read
 * into a small typed list first, then checked against what that filter
 * takes. The JSON is built with jansson.
 */
#include "storage/query/shell_filter.h"

#include <ctype.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHELL_FILTER_ARGS_MAX 64

typedef enum { ARG_STRING, ARG_NUMBER, ARG_BOOL, ARG_OP } shell_arg_kind;

typedef struct shell_arg {
    shell_arg_kind kind;
    kbuf str;                /* ARG_STRING: the bytes */
    int64_t num;             /* ARG_NUMBER */
    int flag;                /* ARG_BOOL */
    const char *op;          /* ARG_OP: the model's name */
} shell_arg;

typedef struct shell_parser {
    const char *s;
    size_t n, pos;
    int depth, nodes;
    kiln_err *err;
} shell_parser;

static kiln_status
shell_fail(shell_parser *p, const char *what)
{
    return status_set(p->err, KILN_INVALID, "filter: %s at offset %zu", what, p->pos);
}

static void
shell_skip_space(shell_parser *p)
{
    while (p->pos < p->n && isspace((unsigned char)p->s[p->pos]))
        p->pos++;
}

/* A keyword (AND, OR, SKIP, WHILE) at the cursor, followed by a non-word byte. */
static int
shell_keyword(shell_parser *p, const char *kw)
{
    size_t k = strlen(kw);
    if (p->n - p->pos < k || strncasecmp(p->s + p->pos, kw, k) != 0)
        return 0;
    if (p->pos + k < p->n && (isalnum((unsigned char)p->s[p->pos + k]) || p->s[p->pos + k] == '_'))
        return 0;
    p->pos += k;
    return 1;
}

static void
shell_b64(json_t *obj, const char *name, const uint8_t *b, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    kbuf o = KBUF_INIT;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)b[i + 1] << 8;
        if (i + 2 < n)
            v |= b[i + 2];
        buf_append_u8(&o, (uint8_t)tab[(v >> 18) & 63]);
        buf_append_u8(&o, (uint8_t)tab[(v >> 12) & 63]);
        buf_append_u8(&o, i + 1 < n ? (uint8_t)tab[(v >> 6) & 63] : '=');
        buf_append_u8(&o, i + 2 < n ? (uint8_t)tab[v & 63] : '=');
    }
    buf_append_u8(&o, '\0');
    json_t *s = json_string((const char *)o.data);
    buf_free(&o);
    if (json_is_array(obj))
        json_array_append_new(obj, s);
    else
        json_object_set_new(obj, name, s);
}

/* ------------------------------------------------------------------ arguments */

static kiln_status
shell_arg_read(shell_parser *p, shell_arg *a)
{
    memset(a, 0, sizeof *a);
    shell_skip_space(p);
    if (p->pos >= p->n)
        return shell_fail(p, "unexpected end in an argument list");
    char c = p->s[p->pos];
    if (c == '\'') {
        a->kind = ARG_STRING;
        buf_init(&a->str);
        p->pos++;
        for (;;) {
            if (p->pos >= p->n)
                return shell_fail(p, "unterminated string");
            char d = p->s[p->pos++];
            if (d == '\'') {
                if (p->pos < p->n && p->s[p->pos] == '\'') {
                    p->pos++;
                    buf_append_u8(&a->str, '\'');
                    continue;
                }
                return KILN_OK;
            }
            buf_append_u8(&a->str, (uint8_t)d);
        }
    }
    static const struct {
        const char *text;
        const char *name;
    } ops[] = {
        {"<=", "LESS_OR_EQUAL"}, {">=", "GREATER_OR_EQUAL"}, {"!=", "NOT_EQUAL"},
        {"<", "LESS"},           {">", "GREATER"},           {"=", "EQUAL"},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        size_t k = strlen(ops[i].text);
        if (p->n - p->pos >= k && strncmp(p->s + p->pos, ops[i].text, k) == 0) {
            p->pos += k;
            a->kind = ARG_OP;
            a->op = ops[i].name;
            return KILN_OK;
        }
    }
    if (c == '-' || isdigit((unsigned char)c)) {
        size_t start = p->pos;
        if (c == '-')
            p->pos++;
        size_t digits = p->pos;
        while (p->pos < p->n && isdigit((unsigned char)p->s[p->pos]))
            p->pos++;
        if (p->pos == digits || p->pos - digits > 18)
            return shell_fail(p, "bad number");
        char num[24];
        snprintf(num, sizeof num, "%.*s", (int)(p->pos - start), p->s + start);
        a->kind = ARG_NUMBER;
        a->num = strtoll(num, NULL, 10);
        return KILN_OK;
    }
    if (shell_keyword(p, "true") || shell_keyword(p, "false")) {
        a->kind = ARG_BOOL;
        a->flag = p->s[p->pos - 1] == 'e' && p->s[p->pos - 2] == 'u';
        return KILN_OK;
    }
    return shell_fail(p, "expected a 'string', a number, true/false or a comparison operator");
}

static void
shell_args_free(shell_arg *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].kind == ARG_STRING)
            buf_free(&a[i].str);
    }
}

/* "binary:abc" and its kin as a comparator object. */
static json_t *
shell_comparator(shell_parser *p, const shell_arg *a)
{
    static const struct {
        const char *prefix;
        const char *type;
        int b64;
    } kinds[] = {
        {"binaryprefix:", "BinaryPrefixComparator", 1},
        {"binary:", "BinaryComparator", 1},
        {"regexstring:", "RegexStringComparator", 0},
        {"substring:", "SubstringComparator", 0},
    };
    const char *s = (const char *)a->str.data;
    size_t n = a->str.len;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t k = strlen(kinds[i].prefix);
        if (n < k || strncasecmp(s, kinds[i].prefix, k) != 0)
            continue;
        json_t *c = json_object();
        json_object_set_new(c, "type", json_string(kinds[i].type));
        if (kinds[i].b64) {
            shell_b64(c, "value", (const uint8_t *)s + k, n - k);
        } else {
            if (memchr(s + k, '\0', n - k) != NULL) {
                json_decref(c);
                shell_fail(p, "a NUL byte in a regexstring or substring comparator");
                return NULL;
            }
            json_object_set_new(c, "value", json_stringn(s + k, n - k));
        }
        return c;
    }
    shell_fail(p, "a comparator is 'binary:V', 'binaryprefix:V', 'regexstring:V' or "
                  "'substring:V'");
    return NULL;
}

/* ------------------------------------------------------------------ filters */

static int
shell_kinds(const shell_arg *a, size_t n, const char *want)
{
    if (strlen(want) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        shell_arg_kind k = want[i] == 's' ? ARG_STRING : want[i] == 'n' ? ARG_NUMBER
                           : want[i] == 'b'                           ? ARG_BOOL
                                                                      : ARG_OP;
        if (a[i].kind != k)
            return 0;
    }
    return 1;
}

/* Build the filter name(args). NULL with p->err set on a mismatch. */
static json_t *
shell_filter_build(shell_parser *p, const char *name, const shell_arg *a, size_t n)
{
    json_t *f = json_object();
    json_object_set_new(f, "type", json_string(name));
    char msg[160];
    if (strcmp(name, "PrefixFilter") == 0 || strcmp(name, "ColumnPrefixFilter") == 0) {
        if (!shell_kinds(a, n, "s"))
            goto usage;
        shell_b64(f, "value", a[0].str.data, a[0].str.len);
        return f;
    }
    if (strcmp(name, "MultipleColumnPrefixFilter") == 0) {
        json_t *list = json_array();
        for (size_t i = 0; i < n; i++) {
            if (a[i].kind != ARG_STRING) {
                json_decref(list);
                goto usage;
            }
            shell_b64(list, NULL, a[i].str.data, a[i].str.len);
        }
        json_object_set_new(f, "prefixes", list);
        if (n == 0)
            goto usage;
        return f;
    }
    if (strcmp(name, "RowFilter") == 0 || strcmp(name, "FamilyFilter") == 0 ||
        strcmp(name, "QualifierFilter") == 0 || strcmp(name, "ValueFilter") == 0) {
        if (!shell_kinds(a, n, "os"))
            goto usage;
        json_t *c = shell_comparator(p, &a[1]);
        if (c == NULL) {
            json_decref(f);
            return NULL;
        }
        json_object_set_new(f, "op", json_string(a[0].op));
        json_object_set_new(f, "comparator", c);
        return f;
    }
    if (strcmp(name, "SingleColumnValueFilter") == 0) {
        if (!shell_kinds(a, n, "ssos") && !shell_kinds(a, n, "ssosbb"))
            goto usage;
        json_t *c = shell_comparator(p, &a[3]);
        if (c == NULL) {
            json_decref(f);
            return NULL;
        }
        shell_b64(f, "family", a[0].str.data, a[0].str.len);
        shell_b64(f, "qualifier", a[1].str.data, a[1].str.len);
        json_object_set_new(f, "op", json_string(a[2].op));
        json_object_set_new(f, "comparator", c);
        if (n == 6) {
            json_object_set_new(f, "ifMissing", json_boolean(a[4].flag));
            json_object_set_new(f, "latestVersion", json_boolean(a[5].flag));
        }
        return f;
    }
    if (strcmp(name, "FirstKeyOnlyFilter") == 0 || strcmp(name, "KeyOnlyFilter") == 0) {
        if (n != 0)
            goto usage;
        return f;
    }
    if (strcmp(name, "PageFilter") == 0 || strcmp(name, "ColumnCountGetFilter") == 0) {
        if (!shell_kinds(a, n, "n") || a[0].num < 0)
            goto usage;
        json_object_set_new(f, name[0] == 'P' ? "value" : "limit", json_integer(a[0].num));
        return f;
    }
    if (strcmp(name, "TimestampsFilter") == 0) {
        json_t *list = json_array();
        for (size_t i = 0; i < n; i++) {
            if (a[i].kind != ARG_NUMBER || a[i].num < 0) {
                json_decref(list);
                goto usage;
            }
            json_array_append_new(list, json_integer(a[i].num));
        }
        json_object_set_new(f, "timestamps", list);
        if (n == 0)
            goto usage;
        return f;
    }
    json_decref(f);
    snprintf(msg, sizeof msg, "unknown filter '%.64s'", name);
    shell_fail(p, msg);
    return NULL;
usage:
    json_decref(f);
    snprintf(msg, sizeof msg, "wrong arguments to %s", name);
    shell_fail(p, msg);
    return NULL;
}

static json_t *shell_expr(shell_parser *p);

/* NAME(args) or ( expr ). */
static json_t *
shell_primary(shell_parser *p)
{
    shell_skip_space(p);
    if (p->pos >= p->n) {
        shell_fail(p, "expected a filter");
        return NULL;
    }
    if (shell_keyword(p, "SKIP") || shell_keyword(p, "WHILE")) {
        p->pos -= 1;
        shell_fail(p, "SKIP and WHILE are not supported");
        return NULL;
    }
    if (p->s[p->pos] == '(') {
        if (++p->depth > SHELL_FILTER_DEPTH_MAX) {
            shell_fail(p, "parentheses nested too deep");
            return NULL;
        }
        p->pos++;
        json_t *e = shell_expr(p);
        if (e == NULL)
            return NULL;
        shell_skip_space(p);
        if (p->pos >= p->n || p->s[p->pos] != ')') {
            json_decref(e);
            shell_fail(p, "expected ')'");
            return NULL;
        }
        p->pos++;
        p->depth--;
        return e;
    }
    size_t start = p->pos;
    while (p->pos < p->n && (isalnum((unsigned char)p->s[p->pos]) || p->s[p->pos] == '_'))
        p->pos++;
    if (p->pos == start || p->pos - start > 64) {
        shell_fail(p, "expected a filter name");
        return NULL;
    }
    char name[65];
    snprintf(name, sizeof name, "%.*s", (int)(p->pos - start), p->s + start);
    shell_skip_space(p);
    if (p->pos >= p->n || p->s[p->pos] != '(') {
        shell_fail(p, "expected '(' after the filter name");
        return NULL;
    }
    p->pos++;
    if (++p->nodes > SHELL_FILTER_NODES_MAX) {
        shell_fail(p, "too many filters");
        return NULL;
    }
    shell_arg args[SHELL_FILTER_ARGS_MAX];
    size_t nargs = 0;
    shell_skip_space(p);
    if (p->pos < p->n && p->s[p->pos] == ')') {
        p->pos++;
    } else {
        for (;;) {
            if (nargs == SHELL_FILTER_ARGS_MAX) {
                shell_args_free(args, nargs);
                shell_fail(p, "too many arguments");
                return NULL;
            }
            if (shell_arg_read(p, &args[nargs]) != KILN_OK) {
                shell_args_free(args, nargs + 1);
                return NULL;
            }
            nargs++;
            shell_skip_space(p);
            if (p->pos < p->n && p->s[p->pos] == ',') {
                p->pos++;
                continue;
            }
            if (p->pos < p->n && p->s[p->pos] == ')') {
                p->pos++;
                break;
            }
            shell_args_free(args, nargs);
            shell_fail(p, "expected ',' or ')'");
            return NULL;
        }
    }
    json_t *f = shell_filter_build(p, name, args, nargs);
    shell_args_free(args, nargs);
    return f;
}

/* Members joined by the keyword kw (AND/OR) into a FilterList, flattened. */
static json_t *
shell_list(shell_parser *p, const char *kw, const char *op, json_t *(*member)(shell_parser *))
{
    json_t *first = member(p);
    if (first == NULL)
        return NULL;
    json_t *list = NULL;
    for (;;) {
        shell_skip_space(p);
        if (!shell_keyword(p, kw))
            break;
        json_t *next = member(p);
        if (next == NULL) {
            json_decref(first);
            json_decref(list);
            return NULL;
        }
        if (list == NULL) {
            list = json_array();
            json_array_append_new(list, first);
            first = NULL;
        }
        json_array_append_new(list, next);
    }
    if (list == NULL)
        return first;
    json_t *f = json_object();
    json_object_set_new(f, "type", json_string("FilterList"));
    json_object_set_new(f, "op", json_string(op));
    json_object_set_new(f, "filters", list);
    return f;
}

static json_t *
shell_and(shell_parser *p)
{
    return shell_list(p, "AND", "MUST_PASS_ALL", shell_primary);
}

static json_t *
shell_expr(shell_parser *p)
{
    return shell_list(p, "OR", "MUST_PASS_ONE", shell_and);
}

kiln_status
shell_filter_to_json(const char *text, kbuf *out, kiln_err *err)
{
    shell_parser p = {text, strlen(text), 0, 0, 0, err};
    if (p.n > SHELL_FILTER_TEXT_MAX)
        return status_set(err, KILN_INVALID, "filter: longer than %d bytes",
                          SHELL_FILTER_TEXT_MAX);
    json_t *f = shell_expr(&p);
    if (f == NULL)
        return err->code != KILN_OK ? err->code : status_set(err, KILN_INVALID, "filter: bad");
    shell_skip_space(&p);
    if (p.pos != p.n) {
        json_decref(f);
        return shell_fail(&p, "unexpected text after the filter");
    }
    char *js = json_dumps(f, JSON_COMPACT);
    json_decref(f);
    if (js == NULL)
        return status_set(err, KILN_INTERNAL, "filter: out of memory");
    buf_append(out, js, strlen(js));
    buf_append_u8(out, '\0');
    out->len--;
    free(js);
    return KILN_OK;
}
