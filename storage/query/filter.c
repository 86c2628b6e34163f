/* filter.c -- the filter tree of filter.h: building it from HBase REST's
 * filter model and evaluating it over rows.
 *
 * Nodes live in one array owned by the filter (at most FILTER_NODES_MAX, so
 * a hostile model cannot make a large tree); a list refers to its members
 * by index. Byte strings are copied into the nodes, so the JSON document can
 * be freed once the tree is built.
 */
#include "storage/query/filter.h"

#include <ctype.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

typedef enum filter_kind {
    FK_PREFIX,
    FK_COLUMN_PREFIX,
    FK_MULTI_COLUMN_PREFIX,
    FK_QUALIFIER,
    FK_FAMILY,
    FK_ROW,
    FK_VALUE,
    FK_SINGLE_COLUMN_VALUE,
    FK_FIRST_KEY_ONLY,
    FK_KEY_ONLY,
    FK_PAGE,
    FK_COLUMN_COUNT,
    FK_TIMESTAMPS,
    FK_LIST
} filter_kind;

typedef enum filter_op {
    FOP_LESS,
    FOP_LESS_OR_EQUAL,
    FOP_EQUAL,
    FOP_NOT_EQUAL,
    FOP_GREATER_OR_EQUAL,
    FOP_GREATER,
    FOP_NO_OP
} filter_op;

typedef enum filter_cmp {
    FCMP_BINARY,
    FCMP_BINARY_PREFIX,
    FCMP_REGEX,
    FCMP_SUBSTRING
} filter_cmp;

typedef struct filter_node {
    filter_kind kind;
    filter_op op;
    int all;                     /* FK_LIST: MUST_PASS_ALL (else ONE) */
    filter_cmp cmp;
    kbuf value;                  /* comparator value, prefix */
    int has_re;
    regex_t re;
    kbuf *prefixes;              /* FK_MULTI_COLUMN_PREFIX */
    size_t nprefixes;
    int64_t *ts;                 /* FK_TIMESTAMPS */
    size_t nts;
    uint64_t limit;              /* FK_PAGE, FK_COLUMN_COUNT */
    kbuf family, qualifier;      /* FK_SINGLE_COLUMN_VALUE */
    int if_missing, latest;
    size_t *kids;                /* FK_LIST: node indexes */
    size_t nkids;
    uint64_t seen;               /* FK_PAGE: rows kept so far */
    int row_pass;                /* row filters: the current row's verdict */
} filter_node;

struct filter {
    filter_node *nodes;
    size_t count;
    size_t root;
    int key_only;
};

static const char *const filter_op_names[] = {
    "LESS", "LESS_OR_EQUAL", "EQUAL", "NOT_EQUAL", "GREATER_OR_EQUAL", "GREATER", "NO_OP",
};

void
filter_free(filter *f)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < f->count; i++) {
        filter_node *n = &f->nodes[i];
        buf_free(&n->value);
        buf_free(&n->family);
        buf_free(&n->qualifier);
        if (n->has_re)
            regfree(&n->re);
        for (size_t k = 0; k < n->nprefixes; k++)
            buf_free(&n->prefixes[k]);
        free(n->prefixes);
        free(n->ts);
        free(n->kids);
    }
    free(f->nodes);
    free(f);
}

/* ------------------------------------------------------------------ parsing */

static kiln_status
filter_b64(const json_node *v, const char *what, kbuf *out, kiln_err *err)
{
    size_t n;
    const char *s = json_str(v, &n);
    buf_reset(out);
    if (s == NULL)
        return status_set(err, KILN_INVALID, "filter: %s must be a base64 string", what);
    if (json_b64_decode(s, n, out) != 0)
        return status_set(err, KILN_INVALID, "filter: %s is not valid base64", what);
    return KILN_OK;
}

static kiln_status
filter_op_parse(const json_node *v, filter_op *op, kiln_err *err)
{
    const char *s = json_str(v, NULL);
    if (s == NULL)
        return status_set(err, KILN_INVALID, "filter: \"op\" is missing");
    for (size_t i = 0; i < sizeof filter_op_names / sizeof filter_op_names[0]; i++) {
        if (strcmp(s, filter_op_names[i]) == 0) {
            *op = (filter_op)i;
            return KILN_OK;
        }
    }
    return status_set(err, KILN_INVALID, "filter: unknown op '%.64s'", s);
}

/* The regex compiler copies a subexpression once per count of a bounded
 * repeat, so nested ones multiply: "((a{99}){99}){99}" is a million nodes;
 * "x+" is compiled as "xx*" and "x{m,}" as m copies and a star, so stacked
 * or nested pluses double each time ("a+++...+" is exponential). Every
 * {m,n} (n copies), {m,} (m + 1) and + (2) in s is taken as nested in the
 * others (an upper bound) and the product must stay at most
 * FILTER_REGEX_REPEAT_MAX.
 * Back-references (\1..\9) are refused: matching them backtracks without
 * bound over a long value, and a worker would hang on one request. */
static int
filter_regex_bounded(const char *s, size_t len)
{
    uint64_t product = 1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\') {
            if (i + 1 < len && s[i + 1] >= '1' && s[i + 1] <= '9')
                return 0;   /* back-references make matching exponential */
            i++;
            continue;
        }
        uint64_t copies = 0;
        if (s[i] == '+') {
            copies = 2;
        } else if (s[i] == '{') {
            uint64_t most = 0, x = 0;
            int open = 0;   /* "{m,}" */
            size_t j = i + 1;
            for (; j < len && (isdigit((unsigned char)s[j]) || s[j] == ','); j++) {
                x = s[j] == ',' ? 0 : x * 10 + (uint64_t)(s[j] - '0');
                if (x > FILTER_REGEX_REPEAT_MAX)
                    return 0;
                if (x > most)
                    most = x;
                open = s[j] == ',';
            }
            if (j < len && s[j] == '}')
                copies = open ? most + 1 : most;
        }
        if (copies > 1) {
            product *= copies;
            if (product > FILTER_REGEX_REPEAT_MAX)
                return 0;
        }
    }
    return 1;
}

static kiln_status
filter_comparator(filter_node *n, const json_node *c, kiln_err *err)
{
    const char *type = json_str(json_get(c, "type"), NULL);
    if (type == NULL)
        return status_set(err, KILN_INVALID, "filter: \"comparator\" needs a \"type\"");
    if (strcmp(type, "BinaryComparator") == 0 || strcmp(type, "BinaryPrefixComparator") == 0) {
        n->cmp = type[6] == 'P' ? FCMP_BINARY_PREFIX : FCMP_BINARY;
        return filter_b64(json_get(c, "value"), "comparator value", &n->value, err);
    }
    int regex = strcmp(type, "RegexStringComparator") == 0;
    if (!regex && strcmp(type, "SubstringComparator") != 0)
        return status_set(err, KILN_INVALID, "filter: unknown comparator type '%.64s'", type);
    size_t len;
    const char *s = json_str(json_get(c, "value"), &len);
    if (s == NULL)
        return status_set(err, KILN_INVALID, "filter: %s needs a string \"value\"", type);
    if (len > FILTER_REGEX_MAX || memchr(s, '\0', len) != NULL)
        return status_set(err, KILN_INVALID, "filter: %s value longer than %d bytes or with NUL",
                          type, FILTER_REGEX_MAX);
    buf_reset(&n->value);
    buf_append(&n->value, s, len);
    if (!regex) {
        n->cmp = FCMP_SUBSTRING;
        for (size_t i = 0; i < len; i++)
            n->value.data[i] = (uint8_t)tolower(n->value.data[i]);
        return KILN_OK;
    }
    n->cmp = FCMP_REGEX;
    if (!filter_regex_bounded(s, len))
        return status_set(err, KILN_INVALID,
                          "filter: regular expression '%.64s' repeats more than %d times or "
                          "uses a back-reference",
                          s, FILTER_REGEX_REPEAT_MAX);
    if (regcomp(&n->re, s, REG_EXTENDED | REG_NOSUB) != 0)
        return status_set(err, KILN_INVALID, "filter: bad regular expression '%.64s'", s);
    n->has_re = 1;
    return KILN_OK;
}

static kiln_status
filter_u64_field(const json_node *v, const char *what, uint64_t *out, kiln_err *err)
{
    int64_t x;
    const char *s = json_str(v, NULL);
    if (s != NULL) {   /* PageFilter's size is written as a string */
        char *end;
        long long y = strtoll(s, &end, 10);
        if (*s == '\0' || *end != '\0' || y < 0)
            return status_set(err, KILN_INVALID, "filter: %s must be a count", what);
        *out = (uint64_t)y;
        return KILN_OK;
    }
    if (json_int(v, &x) != 0 || x < 0)
        return status_set(err, KILN_INVALID, "filter: %s must be a count", what);
    *out = (uint64_t)x;
    return KILN_OK;
}

static int
filter_bool(const json_node *v, int dflt)
{
    if (json_node_type(v) == JSON_TRUE)
        return 1;
    if (json_node_type(v) == JSON_FALSE)
        return 0;
    return dflt;
}

static kiln_status filter_build(filter *f, const json_node *v, int depth, size_t *idx,
                                kiln_err *err);

static kiln_status
filter_build_fields(filter *f, size_t at, const json_node *v, const char *type, int depth,
                    kiln_err *err)
{
    filter_node *n = &f->nodes[at];
    kiln_status st;
    if (strcmp(type, "PrefixFilter") == 0 || strcmp(type, "ColumnPrefixFilter") == 0) {
        n->kind = type[0] == 'P' ? FK_PREFIX : FK_COLUMN_PREFIX;
        return filter_b64(json_get(v, "value"), "value", &n->value, err);
    }
    if (strcmp(type, "MultipleColumnPrefixFilter") == 0) {
        const json_node *list = json_get(v, "prefixes");
        if (json_node_type(list) != JSON_ARRAY)
            return status_set(err, KILN_INVALID, "filter: %s needs \"prefixes\"", type);
        n->kind = FK_MULTI_COLUMN_PREFIX;
        n->nprefixes = json_len(list);
        n->prefixes = kiln_calloc(n->nprefixes ? n->nprefixes : 1, sizeof *n->prefixes);
        for (size_t i = 0; i < n->nprefixes; i++) {
            if ((st = filter_b64(json_at(list, i), "prefix", &n->prefixes[i], err)) != KILN_OK)
                return st;
        }
        return KILN_OK;
    }
    static const struct {
        const char *name;
        filter_kind kind;
    } compare_filters[] = {
        {"QualifierFilter", FK_QUALIFIER},
        {"FamilyFilter", FK_FAMILY},
        {"RowFilter", FK_ROW},
        {"ValueFilter", FK_VALUE},
        {"SingleColumnValueFilter", FK_SINGLE_COLUMN_VALUE},
    };
    for (size_t i = 0; i < sizeof compare_filters / sizeof compare_filters[0]; i++) {
        if (strcmp(type, compare_filters[i].name) != 0)
            continue;
        n->kind = compare_filters[i].kind;
        if ((st = filter_op_parse(json_get(v, "op"), &n->op, err)) != KILN_OK)
            return st;
        const json_node *c = json_get(v, "comparator");
        if (json_node_type(c) != JSON_OBJECT)
            return status_set(err, KILN_INVALID, "filter: %s needs a \"comparator\"", type);
        if ((st = filter_comparator(n, c, err)) != KILN_OK)
            return st;
        if (n->kind != FK_SINGLE_COLUMN_VALUE)
            return KILN_OK;
        if ((st = filter_b64(json_get(v, "family"), "family", &n->family, err)) != KILN_OK ||
            (st = filter_b64(json_get(v, "qualifier"), "qualifier", &n->qualifier, err)) !=
                KILN_OK)
            return st;
        n->if_missing = filter_bool(json_get(v, "ifMissing"), 0);
        n->latest = filter_bool(json_get(v, "latestVersion"), 1);
        return KILN_OK;
    }
    if (strcmp(type, "FirstKeyOnlyFilter") == 0) {
        n->kind = FK_FIRST_KEY_ONLY;
        return KILN_OK;
    }
    if (strcmp(type, "KeyOnlyFilter") == 0) {
        n->kind = FK_KEY_ONLY;
        f->key_only = 1;
        return KILN_OK;
    }
    if (strcmp(type, "PageFilter") == 0) {
        n->kind = FK_PAGE;
        return filter_u64_field(json_get(v, "value"), "PageFilter value", &n->limit, err);
    }
    if (strcmp(type, "ColumnCountGetFilter") == 0) {
        n->kind = FK_COLUMN_COUNT;
        return filter_u64_field(json_get(v, "limit"), "ColumnCountGetFilter limit", &n->limit,
                                err);
    }
    if (strcmp(type, "TimestampsFilter") == 0) {
        const json_node *list = json_get(v, "timestamps");
        if (json_node_type(list) != JSON_ARRAY)
            return status_set(err, KILN_INVALID, "filter: %s needs \"timestamps\"", type);
        n->kind = FK_TIMESTAMPS;
        n->nts = json_len(list);
        n->ts = kiln_calloc(n->nts ? n->nts : 1, sizeof *n->ts);
        for (size_t i = 0; i < n->nts; i++) {
            if (json_int(json_at(list, i), &n->ts[i]) != 0)
                return status_set(err, KILN_INVALID, "filter: timestamps must be integers");
        }
        return KILN_OK;
    }
    if (strcmp(type, "FilterList") == 0) {
        const char *op = json_str(json_get(v, "op"), NULL);
        if (op == NULL || (strcmp(op, "MUST_PASS_ALL") != 0 && strcmp(op, "MUST_PASS_ONE") != 0))
            return status_set(err, KILN_INVALID,
                              "filter: FilterList op must be MUST_PASS_ALL or MUST_PASS_ONE");
        const json_node *list = json_get(v, "filters");
        if (json_node_type(list) != JSON_ARRAY)
            return status_set(err, KILN_INVALID, "filter: FilterList needs \"filters\"");
        size_t nk = json_len(list);
        size_t *kids = kiln_calloc(nk ? nk : 1, sizeof *kids);
        for (size_t i = 0; i < nk; i++) {
            if ((st = filter_build(f, json_at(list, i), depth + 1, &kids[i], err)) != KILN_OK) {
                free(kids);
                return st;
            }
        }
        n = &f->nodes[at];   /* the array may have moved */
        n->kind = FK_LIST;
        n->all = op[10] == 'A';
        n->kids = kids;
        n->nkids = nk;
        return KILN_OK;
    }
    return status_set(err, KILN_INVALID, "filter: unknown filter type '%.64s'", type);
}

static kiln_status
filter_build(filter *f, const json_node *v, int depth, size_t *idx, kiln_err *err)
{
    if (json_node_type(v) != JSON_OBJECT)
        return status_set(err, KILN_INVALID, "filter: a filter must be a JSON object");
    const char *type = json_str(json_get(v, "type"), NULL);
    if (type == NULL)
        return status_set(err, KILN_INVALID, "filter: a filter needs a \"type\"");
    if (depth > FILTER_DEPTH_MAX)
        return status_set(err, KILN_INVALID, "filter: FilterList nested deeper than %d",
                          FILTER_DEPTH_MAX);
    if (f->count == FILTER_NODES_MAX)
        return status_set(err, KILN_INVALID, "filter: more than %d filters", FILTER_NODES_MAX);
    if (f->count == 0)
        f->nodes = kiln_calloc(FILTER_NODES_MAX, sizeof *f->nodes);
    size_t at = f->count++;
    *idx = at;
    return filter_build_fields(f, at, v, type, depth, err);
}

kiln_status
filter_from_json(const json_node *v, filter **out, kiln_err *err)
{
    *out = NULL;
    filter *f = kiln_calloc(1, sizeof *f);
    kiln_status st = filter_build(f, v, 0, &f->root, err);
    if (st != KILN_OK) {
        filter_free(f);
        return st;
    }
    *out = f;
    return KILN_OK;
}

kiln_status
filter_parse(const char *text, size_t n, filter **out, kiln_err *err)
{
    json_doc *d;
    kiln_err jerr;
    status_clear(&jerr);
    *out = NULL;
    if (json_parse(text, n, &d, &jerr) != KILN_OK)
        return status_set(err, KILN_INVALID, "filter: not JSON (%s)", jerr.msg);
    kiln_status st = filter_from_json(json_root(d), out, err);
    json_doc_free(d);
    return st;
}

void
filter_reset(filter *f)
{
    for (size_t i = 0; f != NULL && i < f->count; i++)
        f->nodes[i].seen = 0;
}

/* ------------------------------------------------------------------ evaluation */

static int
filter_lexcmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c != 0)
        return c;
    return an < bn ? -1 : an > bn;
}

/* Does p[0..n) stand in relation n->op to the comparator's value? */
static int
filter_compare(const filter_node *n, const uint8_t *p, size_t len)
{
    int d;
    switch (n->cmp) {
    case FCMP_BINARY:
        d = filter_lexcmp(p, len, n->value.data, n->value.len);
        break;
    case FCMP_BINARY_PREFIX:
        d = filter_lexcmp(p, len < n->value.len ? len : n->value.len, n->value.data,
                          n->value.len);
        break;
    case FCMP_REGEX: {
        /* regexec needs a C string; a NUL inside the bytes ends the match there */
        char stack[256];
        char *s = len < sizeof stack ? stack : malloc(len + 1);
        if (s == NULL)
            return 0;
        memcpy(s, p, len);
        s[len] = '\0';
        d = regexec(&n->re, s, 0, NULL, 0) == 0 ? 0 : -1;
        if (s != stack)
            free(s);
        break;
    }
    default: {
        d = -1;
        size_t m = n->value.len;
        for (size_t i = 0; m <= len && i + m <= len && d != 0; i++) {
            size_t k = 0;
            while (k < m && (uint8_t)tolower(p[i + k]) == n->value.data[k])
                k++;
            if (k == m)
                d = 0;
        }
        break;
    }
    }
    switch (n->op) {
    case FOP_LESS: return d < 0;
    case FOP_LESS_OR_EQUAL: return d <= 0;
    case FOP_EQUAL: return d == 0;
    case FOP_NOT_EQUAL: return d != 0;
    case FOP_GREATER_OR_EQUAL: return d >= 0;
    case FOP_GREATER: return d > 0;
    default: return 0;
    }
}

static int
filter_starts(const uint8_t *p, size_t n, const kbuf *prefix)
{
    return n >= prefix->len && memcmp(p, prefix->data, prefix->len) == 0;
}

/* Row filters' verdicts for row r, before its cells are looked at. */
static void
filter_eval_row(filter *f, size_t idx, const store_row *r)
{
    filter_node *n = &f->nodes[idx];
    switch (n->kind) {
    case FK_PREFIX:
        n->row_pass = filter_starts(r->row.p, r->row.n, &n->value);
        break;
    case FK_ROW:
        n->row_pass = filter_compare(n, r->row.p, r->row.n);
        break;
    case FK_PAGE:
        n->row_pass = n->seen < n->limit;
        break;
    case FK_SINGLE_COLUMN_VALUE: {
        int found = 0, pass = 0;
        for (size_t i = 0; i < r->count; i++) {
            const kiln_cell *c = &r->cells[i];
            if (c->family_len != n->family.len || c->qualifier_len != n->qualifier.len ||
                memcmp(c->family, n->family.data, n->family.len) != 0 ||
                memcmp(c->qualifier, n->qualifier.data, n->qualifier.len) != 0)
                continue;
            if (found && n->latest)
                break;   /* the newest version decided */
            found = 1;
            pass |= filter_compare(n, c->value, c->value_len);
        }
        n->row_pass = found ? pass : !n->if_missing;
        break;
    }
    case FK_LIST:
        for (size_t i = 0; i < n->nkids; i++)
            filter_eval_row(f, n->kids[i], r);
        break;
    default:
        n->row_pass = 1;
        break;
    }
}

/* Does cell i (of column number col in the row) pass node idx? */
static int
filter_eval_cell(const filter *f, size_t idx, const kiln_cell *c, size_t i, size_t col)
{
    const filter_node *n = &f->nodes[idx];
    switch (n->kind) {
    case FK_COLUMN_PREFIX:
        return filter_starts(c->qualifier, c->qualifier_len, &n->value);
    case FK_MULTI_COLUMN_PREFIX:
        for (size_t k = 0; k < n->nprefixes; k++) {
            if (filter_starts(c->qualifier, c->qualifier_len, &n->prefixes[k]))
                return 1;
        }
        return 0;
    case FK_QUALIFIER:
        return filter_compare(n, c->qualifier, c->qualifier_len);
    case FK_FAMILY:
        return filter_compare(n, c->family, c->family_len);
    case FK_VALUE:
        return filter_compare(n, c->value, c->value_len);
    case FK_FIRST_KEY_ONLY:
        return i == 0;
    case FK_COLUMN_COUNT:
        return col < n->limit;
    case FK_TIMESTAMPS:
        for (size_t k = 0; k < n->nts; k++) {
            if (n->ts[k] == c->ts)
                return 1;
        }
        return 0;
    case FK_KEY_ONLY:
        return 1;
    case FK_LIST:
        for (size_t k = 0; k < n->nkids; k++) {
            int pass = filter_eval_cell(f, n->kids[k], c, i, col);
            if (n->all && !pass)
                return 0;
            if (!n->all && pass)
                return 1;
        }
        return n->all || n->nkids == 0;
    default:
        return n->row_pass;
    }
}

static void
filter_count_page(filter *f, size_t idx)
{
    filter_node *n = &f->nodes[idx];
    if (n->kind == FK_PAGE && n->row_pass)
        n->seen++;
    for (size_t k = 0; n->kind == FK_LIST && k < n->nkids; k++)
        filter_count_page(f, n->kids[k]);
}

/* 1 if no later row can pass node idx. */
static int
filter_exhausted(const filter *f, size_t idx)
{
    const filter_node *n = &f->nodes[idx];
    if (n->kind == FK_PAGE)
        return n->seen >= n->limit;
    if (n->kind != FK_LIST || n->nkids == 0)
        return 0;
    for (size_t k = 0; k < n->nkids; k++) {
        int ex = filter_exhausted(f, n->kids[k]);
        if (n->all && ex)
            return 1;
        if (!n->all && !ex)
            return 0;
    }
    return !n->all;
}

size_t
filter_row(filter *f, const store_row *r, kiln_cell *out, int *done)
{
    *done = 0;
    if (filter_exhausted(f, f->root)) {
        *done = 1;
        return 0;
    }
    filter_eval_row(f, f->root, r);
    size_t kept = 0, col = 0;
    for (size_t i = 0; i < r->count; i++) {
        const kiln_cell *c = &r->cells[i];
        if (i > 0) {
            const kiln_cell *p = &r->cells[i - 1];
            if (p->family_len != c->family_len || p->qualifier_len != c->qualifier_len ||
                memcmp(p->family, c->family, c->family_len) != 0 ||
                memcmp(p->qualifier, c->qualifier, c->qualifier_len) != 0)
                col++;
        }
        if (!filter_eval_cell(f, f->root, c, i, col))
            continue;
        out[kept] = *c;
        if (f->key_only) {
            out[kept].value = (const uint8_t *)"";
            out[kept].value_len = 0;
        }
        kept++;
    }
    if (kept > 0)
        filter_count_page(f, f->root);
    *done = filter_exhausted(f, f->root);
    return kept;
}
