/* schema.c -- table names, column family settings and split keys: parsing the
 * command-line spec ("cf:versions=3,ttl=86400"), validation, and the schema
 * record's encoding (layout below and in docs/storage-format.md §2.3).
 *
 * Body of the `schema` record (frame: store_rec.h, magic KILNSCHM, version 1):
 *   SIZE     | FIELD
 *   2 + N    | table name "namespace:table"
 *   8        | creation time, ms since the epoch
 *   4        | keep_versions
 *   4        | salt_buckets (0 = not salted)
 *   2        | family count F, then F times:
 *     1 + N  |   name
 *     4      |   max versions
 *     8      |   ttl, seconds (2147483647 = forever)
 *     1      |   codec (HBase Compression.Algorithm ordinal)
 *     1      |   bloom (0 none, 1 row, 2 rowcol)
 *     4      |   block size
 *   4        | split key count S, then S times: 2 + N key bytes
 *   4        | property count P, then P times: 2 + N key, 4 + N value
 */
#include "storage/store/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "storage/hfile/cell.h"
#include "storage/base/store_rec.h"

void
schema_init(kiln_schema *s)
{
    memset(s, 0, sizeof *s);
    s->keep_versions = SCHEMA_KEEP_DEFAULT;
}

void
schema_free(kiln_schema *s)
{
    if (s == NULL)
        return;
    free(s->families);
    for (size_t i = 0; i < s->split_count; i++)
        buf_free(&s->splits[i]);
    free(s->splits);
    for (size_t i = 0; i < s->prop_count; i++) {
        free(s->props[i].key);
        free(s->props[i].value);
    }
    free(s->props);
    schema_init(s);
}

static int
schema_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int
schema_qualifier_ok(const char *p, size_t n)
{
    if (n == 0 || !schema_word_char(p[0]))
        return 0;
    for (size_t i = 1; i < n; i++) {
        if (!schema_word_char(p[i]) && p[i] != '.' && p[i] != '-')
            return 0;
    }
    return 1;
}

int
schema_family_name_ok(const char *name, size_t n)
{
    return n <= SCHEMA_FAMILY_NAME_MAX && schema_qualifier_ok(name, n);
}

kiln_status
schema_name_canon(const char *name, char *out, kiln_err *err)
{
    const char *colon = strchr(name, ':');
    const char *ns = SCHEMA_DEFAULT_NAMESPACE;
    size_t ns_len = strlen(ns);
    const char *tbl = name;
    if (colon != NULL) {
        ns = name;
        ns_len = (size_t)(colon - name);
        tbl = colon + 1;
        if (ns_len == 0)
            return status_set(err, KILN_INVALID, "table '%s': empty namespace", name);
        for (size_t i = 0; i < ns_len; i++) {
            if (!schema_word_char(ns[i]))
                return status_set(err, KILN_INVALID,
                                  "table '%s': namespace may hold only letters, digits and '_'",
                                  name);
        }
    }
    size_t tl = strlen(tbl);
    if (!schema_qualifier_ok(tbl, tl))
        return status_set(err, KILN_INVALID,
                          "table '%s': name must start with a letter, digit or '_' and hold "
                          "only letters, digits, '_', '-' and '.'",
                          name);
    if (ns_len + 1 + tl > SCHEMA_NAME_MAX)
        return status_set(err, KILN_INVALID, "table '%s': name longer than %d bytes", name,
                          SCHEMA_NAME_MAX);
    memcpy(out, ns, ns_len);
    out[ns_len] = ':';
    memcpy(out + ns_len + 1, tbl, tl + 1);
    return KILN_OK;
}

void
schema_name_split(const char *canon, char *ns, char *table)
{
    const char *colon = strchr(canon, ':');
    size_t n = colon ? (size_t)(colon - canon) : 0;
    memcpy(ns, canon, n);
    ns[n] = '\0';
    strcpy(table, colon ? colon + 1 : canon);
}

void
schema_family_defaults(schema_family *f, const char *name)
{
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->max_versions = 1;
    f->ttl_s = SCHEMA_TTL_FOREVER;
    f->codec = CODEC_SNAPPY;
    f->bloom = BLOOM_ROW;
    f->block_size = 65536;
}

/* Strict decimal with an optional K/M/G suffix (binary units when mult). */
static int
schema_parse_num(const char *s, size_t n, int allow_suffix, uint64_t *out)
{
    uint64_t v = 0, mult = 1;
    if (n == 0)
        return -1;
    if (allow_suffix) {
        char c = s[n - 1];
        if (c == 'k' || c == 'K')
            mult = 1024;
        else if (c == 'm' || c == 'M')
            mult = 1024 * 1024;
        else if (c == 'g' || c == 'G')
            mult = 1024ULL * 1024 * 1024;
        if (mult != 1)
            n--;
        if (n == 0)
            return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > UINT64_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

static int
schema_keyeq(const char *k, size_t kn, const char *lit)
{
    return strlen(lit) == kn && memcmp(k, lit, kn) == 0;
}

static kiln_status
schema_family_setting(schema_family *f, const char *k, size_t kn, const char *v, size_t vn,
                      kiln_err *err)
{
    char val[64];
    if (vn >= sizeof val)
        return status_set(err, KILN_INVALID, "family %s: value of %.*s too long", f->name,
                          (int)kn, k);
    memcpy(val, v, vn);
    val[vn] = '\0';
    uint64_t num;
    if (schema_keyeq(k, kn, "versions")) {
        if (schema_parse_num(v, vn, 0, &num) != 0 || num < 1 || num > INT32_MAX)
            return status_set(err, KILN_INVALID,
                              "family %s: versions must be an integer 1..2147483647, got '%s'",
                              f->name, val);
        f->max_versions = (uint32_t)num;
    } else if (schema_keyeq(k, kn, "ttl")) {
        if (strcasecmp(val, "forever") == 0) {
            f->ttl_s = SCHEMA_TTL_FOREVER;
        } else if (schema_parse_num(v, vn, 0, &num) != 0 || num < 1 ||
                   num > (uint64_t)SCHEMA_TTL_FOREVER) {
            return status_set(err, KILN_INVALID,
                              "family %s: ttl must be seconds 1..2147483647 or 'forever', got '%s'",
                              f->name, val);
        } else {
            f->ttl_s = (int64_t)num;
        }
    } else if (schema_keyeq(k, kn, "compression")) {
        kiln_codec c;
        if (compress_codec_parse(val, &c) != 0 ||
            (c != CODEC_SNAPPY && c != CODEC_NONE && c != CODEC_GZ && c != CODEC_ZSTD &&
             c != CODEC_LZ4))
            return status_set(err, KILN_INVALID,
                              "family %s: compression must be snappy, none, gz, zstd or lz4, got "
                              "'%s'",
                              f->name, val);
        f->codec = c;
    } else if (schema_keyeq(k, kn, "bloom")) {
        kiln_bloom_type b;
        if (bloom_type_parse(val, &b) != 0)
            return status_set(err, KILN_INVALID,
                              "family %s: bloom must be row, rowcol or none, got '%s'", f->name,
                              val);
        f->bloom = b;
    } else if (schema_keyeq(k, kn, "blocksize")) {
        if (schema_parse_num(v, vn, 1, &num) != 0 || num < SCHEMA_BLOCK_SIZE_MIN ||
            num > SCHEMA_BLOCK_SIZE_MAX)
            return status_set(err, KILN_INVALID,
                              "family %s: blocksize must be %d..%u bytes (K/M suffix allowed), "
                              "got '%s'",
                              f->name, SCHEMA_BLOCK_SIZE_MIN, SCHEMA_BLOCK_SIZE_MAX, val);
        f->block_size = (uint32_t)num;
    } else {
        return status_set(err, KILN_INVALID,
                          "family %s: unknown setting '%.*s' (known: versions, ttl, compression, "
                          "bloom, blocksize)",
                          f->name, (int)kn, k);
    }
    return KILN_OK;
}

kiln_status
schema_family_parse(const char *spec, schema_family *out, kiln_err *err)
{
    const char *colon = strchr(spec, ':');
    size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
    if (!schema_family_name_ok(spec, nl))
        return status_set(err, KILN_INVALID,
                          "family '%.*s': name must start with a letter, digit or '_' and hold "
                          "only letters, digits, '_', '-' and '.'",
                          (int)nl, spec);
    char name[SCHEMA_FAMILY_NAME_MAX + 1];
    memcpy(name, spec, nl);
    name[nl] = '\0';
    schema_family_defaults(out, name);
    if (colon == NULL)
        return KILN_OK;
    const char *p = colon + 1;
    while (*p != '\0') {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (eq == NULL || eq == p)
            return status_set(err, KILN_INVALID, "family %s: expected key=value, got '%.*s'",
                              name, (int)len, p);
        kiln_status st = schema_family_setting(out, p, (size_t)(eq - p), eq + 1,
                                               len - (size_t)(eq - p) - 1, err);
        if (st != KILN_OK)
            return st;
        p += len;
        if (*p == ',')
            p++;
    }
    return KILN_OK;
}

static kiln_status
schema_family_check(const schema_family *f, kiln_err *err)
{
    if (!schema_family_name_ok(f->name, strlen(f->name)))
        return status_set(err, KILN_INVALID, "family '%s': bad name", f->name);
    if (f->max_versions < 1 || f->max_versions > INT32_MAX)
        return status_set(err, KILN_INVALID, "family %s: bad versions %u", f->name,
                          f->max_versions);
    if (f->ttl_s < 1 || f->ttl_s > SCHEMA_TTL_FOREVER)
        return status_set(err, KILN_INVALID, "family %s: bad ttl %lld", f->name,
                          (long long)f->ttl_s);
    if (!compress_codec_writable(f->codec))
        return status_set(err, KILN_INVALID, "family %s: compression %s cannot be written",
                          f->name, compress_codec_name(f->codec));
    if (f->bloom != BLOOM_NONE && f->bloom != BLOOM_ROW && f->bloom != BLOOM_ROWCOL)
        return status_set(err, KILN_INVALID, "family %s: bad bloom type %d", f->name,
                          (int)f->bloom);
    if (f->block_size < SCHEMA_BLOCK_SIZE_MIN || f->block_size > SCHEMA_BLOCK_SIZE_MAX)
        return status_set(err, KILN_INVALID, "family %s: bad block size %u", f->name,
                          f->block_size);
    return KILN_OK;
}

kiln_status
schema_add_family(kiln_schema *s, const schema_family *f, kiln_err *err)
{
    kiln_status st = schema_family_check(f, err);
    if (st != KILN_OK)
        return st;
    if (s->family_count >= SCHEMA_FAMILIES_MAX)
        return status_set(err, KILN_INVALID, "table %s: more than %d families", s->name,
                          SCHEMA_FAMILIES_MAX);
    size_t at = 0;
    while (at < s->family_count) {
        int c = strcmp(s->families[at].name, f->name);
        if (c == 0)
            return status_set(err, KILN_EXISTS, "family %s: given twice", f->name);
        if (c > 0)
            break;
        at++;
    }
    s->families = kiln_realloc(s->families, (s->family_count + 1) * sizeof *s->families);
    memmove(&s->families[at + 1], &s->families[at],
            (s->family_count - at) * sizeof *s->families);
    s->families[at] = *f;
    s->family_count++;
    return KILN_OK;
}

kiln_status
schema_add_split(kiln_schema *s, const uint8_t *key, size_t n, kiln_err *err)
{
    if (n == 0)
        return status_set(err, KILN_INVALID, "table %s: empty split key", s->name);
    if (n > CELL_ROW_MAX)
        return status_set(err, KILN_INVALID, "table %s: split key longer than %d bytes",
                          s->name, CELL_ROW_MAX);
    s->splits = kiln_realloc(s->splits, (s->split_count + 1) * sizeof *s->splits);
    buf_init(&s->splits[s->split_count]);
    buf_append(&s->splits[s->split_count], key, n);
    s->split_count++;
    return KILN_OK;
}

static int
schema_split_cmp(const void *a, const void *b)
{
    return kslice_cmp(buf_slice(a), buf_slice(b));
}

void
schema_set_prop(kiln_schema *s, const char *key, const char *value)
{
    size_t at = 0;
    while (at < s->prop_count) {
        int c = strcmp(s->props[at].key, key);
        if (c == 0) {
            free(s->props[at].value);
            s->props[at].value = (char *)kiln_memdup(value, strlen(value) + 1);
            return;
        }
        if (c > 0)
            break;
        at++;
    }
    s->props = kiln_realloc(s->props, (s->prop_count + 1) * sizeof *s->props);
    memmove(&s->props[at + 1], &s->props[at], (s->prop_count - at) * sizeof *s->props);
    s->props[at].key = (char *)kiln_memdup(key, strlen(key) + 1);
    s->props[at].value = (char *)kiln_memdup(value, strlen(value) + 1);
    s->prop_count++;
}

const char *
schema_get_prop(const kiln_schema *s, const char *key)
{
    for (size_t i = 0; i < s->prop_count; i++) {
        if (strcmp(s->props[i].key, key) == 0)
            return s->props[i].value;
    }
    return NULL;
}

void
schema_salt_default_splits(kiln_schema *s)
{
    if (s->salt_buckets < 2 || s->split_count > 0)
        return;
    for (uint32_t b = 1; b < s->salt_buckets && b < 256; b++) {
        uint8_t k = (uint8_t)b;
        schema_add_split(s, &k, 1, NULL);
    }
}

kiln_status
schema_validate(kiln_schema *s, kiln_err *err)
{
    char canon[SCHEMA_NAME_MAX + 1];
    kiln_status st = schema_name_canon(s->name, canon, err);
    if (st != KILN_OK)
        return st;
    if (strcmp(canon, s->name) != 0)
        return status_set(err, KILN_INVALID, "table %s: name is not canonical (%s)", s->name,
                          canon);
    if (s->family_count == 0)
        return status_set(err, KILN_INVALID, "table %s: at least one column family is needed",
                          s->name);
    for (size_t i = 0; i < s->family_count; i++) {
        st = schema_family_check(&s->families[i], err);
        if (st != KILN_OK)
            return st;
        if (i > 0 && strcmp(s->families[i - 1].name, s->families[i].name) >= 0)
            return status_set(err, KILN_INVALID, "table %s: families not sorted or repeated",
                              s->name);
    }
    if (s->keep_versions < 1 || s->keep_versions > SCHEMA_KEEP_MAX)
        return status_set(err, KILN_INVALID, "table %s: keep_versions must be 1..%d", s->name,
                          SCHEMA_KEEP_MAX);
    if (s->salt_buckets > 256)
        return status_set(err, KILN_INVALID, "table %s: salt_buckets must be 0..256", s->name);
    if (s->split_count > 1)
        qsort(s->splits, s->split_count, sizeof *s->splits, schema_split_cmp);
    for (size_t i = 0; i < s->split_count; i++) {
        if (s->splits[i].len == 0 || s->splits[i].len > CELL_ROW_MAX)
            return status_set(err, KILN_INVALID, "table %s: bad split key length %zu", s->name,
                              s->splits[i].len);
        if (i > 0 && kslice_eq(buf_slice(&s->splits[i - 1]), buf_slice(&s->splits[i]))) {
            kbuf pr = KBUF_INIT;
            cell_to_string_binary(&pr, s->splits[i].data, s->splits[i].len);
            buf_append_u8(&pr, 0);
            status_set(err, KILN_INVALID, "table %s: split key '%s' given twice", s->name,
                       (char *)pr.data);
            buf_free(&pr);
            return KILN_INVALID;
        }
    }
    return KILN_OK;
}

const schema_family *
schema_find_family(const kiln_schema *s, const uint8_t *name, size_t n)
{
    size_t lo = 0, hi = s->family_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *fn = s->families[mid].name;
        int c = kslice_cmp(kslice_str(fn), kslice_make(name, n));
        if (c == 0)
            return &s->families[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

uint32_t
schema_encode(const kiln_schema *s, kbuf *out)
{
    kbuf b = KBUF_INIT;
    store_rec_put_str16(&b, s->name, strlen(s->name));
    buf_append_be64(&b, (uint64_t)s->created_ms);
    buf_append_be32(&b, s->keep_versions);
    buf_append_be32(&b, s->salt_buckets);
    buf_append_be16(&b, (uint16_t)s->family_count);
    for (size_t i = 0; i < s->family_count; i++) {
        const schema_family *f = &s->families[i];
        size_t nl = strlen(f->name);
        buf_append_u8(&b, (uint8_t)nl);
        buf_append(&b, f->name, nl);
        buf_append_be32(&b, f->max_versions);
        buf_append_be64(&b, (uint64_t)f->ttl_s);
        buf_append_u8(&b, (uint8_t)f->codec);
        buf_append_u8(&b, (uint8_t)f->bloom);
        buf_append_be32(&b, f->block_size);
    }
    buf_append_be32(&b, (uint32_t)s->split_count);
    for (size_t i = 0; i < s->split_count; i++)
        store_rec_put_str16(&b, s->splits[i].data, s->splits[i].len);
    buf_append_be32(&b, (uint32_t)s->prop_count);
    for (size_t i = 0; i < s->prop_count; i++) {
        size_t vl = strlen(s->props[i].value);
        store_rec_put_str16(&b, s->props[i].key, strlen(s->props[i].key));
        buf_append_be32(&b, (uint32_t)vl);
        buf_append(&b, s->props[i].value, vl);
    }
    uint32_t crc = store_rec_frame(out, SCHEMA_MAGIC, SCHEMA_FORMAT_VERSION, b.data, b.len);
    buf_free(&b);
    return crc;
}

static char *
schema_cstr(kslice s)
{
    char *p = kiln_malloc(s.n + 1);
    memcpy(p, s.p, s.n);
    p[s.n] = '\0';
    return p;
}

kiln_status
schema_decode(const uint8_t *p, size_t n, const char *what, kiln_schema *out, uint32_t *crc,
              kiln_err *err)
{
    const uint8_t *body;
    size_t blen;
    schema_init(out);
    kiln_status st = store_rec_unframe(p, n, SCHEMA_MAGIC, SCHEMA_FORMAT_VERSION, what, &body,
                                       &blen, NULL, crc, err);
    if (st != KILN_OK)
        return st;
    store_cur c;
    store_cur_init(&c, body, blen);
    kslice name = store_cur_str16(&c);
    if (name.n > SCHEMA_NAME_MAX || memchr(name.p, 0, name.n) != NULL)
        goto bad;
    memcpy(out->name, name.p, name.n);
    out->name[name.n] = '\0';
    out->created_ms = (int64_t)store_cur_u64(&c);
    out->keep_versions = store_cur_u32(&c);
    out->salt_buckets = store_cur_u32(&c);
    uint16_t nf = store_cur_u16(&c);
    for (uint16_t i = 0; i < nf && store_cur_ok(&c); i++) {
        schema_family f;
        memset(&f, 0, sizeof f);
        uint8_t nl = store_cur_u8(&c);
        kslice fn = store_cur_bytes(&c, nl);
        if (fn.n > SCHEMA_FAMILY_NAME_MAX || memchr(fn.p, 0, fn.n) != NULL)
            goto bad;
        memcpy(f.name, fn.p, fn.n);
        f.name[fn.n] = '\0';
        f.max_versions = store_cur_u32(&c);
        f.ttl_s = (int64_t)store_cur_u64(&c);
        f.codec = (kiln_codec)store_cur_u8(&c);
        f.bloom = (kiln_bloom_type)store_cur_u8(&c);
        f.block_size = store_cur_u32(&c);
        if (!store_cur_ok(&c))
            goto bad;
        out->families = kiln_realloc(out->families, (out->family_count + 1) * sizeof f);
        out->families[out->family_count++] = f;
    }
    uint32_t ns = store_cur_u32(&c);
    for (uint32_t i = 0; i < ns && store_cur_ok(&c); i++) {
        kslice k = store_cur_str16(&c);
        if (!store_cur_ok(&c) || k.n == 0)
            goto bad;
        out->splits = kiln_realloc(out->splits, (out->split_count + 1) * sizeof *out->splits);
        buf_init(&out->splits[out->split_count]);
        buf_append(&out->splits[out->split_count], k.p, k.n);
        out->split_count++;
    }
    uint32_t np = store_cur_u32(&c);
    for (uint32_t i = 0; i < np && store_cur_ok(&c); i++) {
        kslice k = store_cur_str16(&c);
        uint32_t vl = store_cur_u32(&c);
        kslice v = store_cur_bytes(&c, vl);
        /* properties are C strings, kept sorted by key without repeats */
        if (!store_cur_ok(&c) || memchr(k.p, 0, k.n) != NULL || memchr(v.p, 0, v.n) != NULL)
            goto bad;
        if (out->prop_count > 0) {
            const char *prev = out->props[out->prop_count - 1].key;
            if (kslice_cmp(kslice_str(prev), k) >= 0)
                goto bad;
        }
        out->props = kiln_realloc(out->props, (out->prop_count + 1) * sizeof *out->props);
        out->props[out->prop_count].key = schema_cstr(k);
        out->props[out->prop_count].value = schema_cstr(v);
        out->prop_count++;
    }
    if (!store_cur_ok(&c) || store_cur_left(&c) != 0)
        goto bad;
    kiln_err verr;
    status_clear(&verr);
    if (schema_validate(out, &verr) != KILN_OK) {
        status_set(err, KILN_CORRUPTION, "%s: %s", what, verr.msg);
        schema_free(out);
        return KILN_CORRUPTION;
    }
    return KILN_OK;
bad:
    schema_free(out);
    return status_set(err, KILN_CORRUPTION, "%s: malformed schema record", what);
}

void
schema_copy(kiln_schema *dst, const kiln_schema *src)
{
    schema_init(dst);
    memcpy(dst->name, src->name, sizeof dst->name);
    dst->created_ms = src->created_ms;
    dst->keep_versions = src->keep_versions;
    dst->salt_buckets = src->salt_buckets;
    if (src->family_count > 0) {
        dst->families = kiln_malloc(src->family_count * sizeof *dst->families);
        memcpy(dst->families, src->families, src->family_count * sizeof *dst->families);
        dst->family_count = src->family_count;
    }
    for (size_t i = 0; i < src->split_count; i++)
        schema_add_split(dst, src->splits[i].data, src->splits[i].len, NULL);
    for (size_t i = 0; i < src->prop_count; i++)
        schema_set_prop(dst, src->props[i].key, src->props[i].value);
}
