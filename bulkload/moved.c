/* moved.c -- the JOB/_MOVED record's text (moved.h). */
#include "bulkload/moved.h"

#include <stdio.h>
#include <string.h>

#include "storage/base/crc32c.h"

#define MOVED_MAGIC "kiln-moved 1\n"

static int
moved_name_ok(const char *s, size_t n)
{
    if (n == 0 || n > SCHEMA_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
            return 0;
    return 1;
}

size_t
moved_record_format(const moved_record *r, char *out, size_t cap)
{
    size_t tn = strnlen(r->table, sizeof r->table);
    if (!moved_name_ok(r->table, tn) || r->version == 0 || cap < MOVED_RECORD_MAX + 1)
        return 0;
    int n = snprintf(out, cap, MOVED_MAGIC "table %s\nversion %llu\nfingerprint %016llx\n",
                     r->table, (unsigned long long)r->version,
                     (unsigned long long)r->fingerprint);
    if (n < 0 || (size_t)n + 16 > cap)
        return 0;
    uint32_t crc = crc32c_value(out, (size_t)n);
    n += snprintf(out + n, cap - (size_t)n, "crc32c %08x\n", (unsigned)crc);
    return (size_t)n;
}

/* The cursor over a record's text: one line at a time. */
typedef struct moved_cursor {
    const char *p, *end;
    int line;
} moved_cursor;

/* The next line's body after `key` (without its '\n') in *v, *vn; 0 if the
 * line is missing, unterminated or does not start with key. */
static int
moved_line(moved_cursor *c, const char *key, const char **v, size_t *vn)
{
    c->line++;
    size_t kn = strlen(key), left = (size_t)(c->end - c->p);
    const char *nl = memchr(c->p, '\n', left);
    if (nl == NULL || (size_t)(nl - c->p) < kn || memcmp(c->p, key, kn) != 0)
        return 0;
    *v = c->p + kn;
    *vn = (size_t)(nl - *v);
    c->p = nl + 1;
    return 1;
}

/* Exactly `digits` lower-case hex digits (0: any count from 1 to 16). */
static int
moved_hex(const char *s, size_t n, size_t digits, uint64_t *out)
{
    if (n == 0 || n > 16 || (digits != 0 && n != digits))
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
        if (d < 0)
            return 0;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return 1;
}

/* A decimal without sign or leading zeros that fits 64 bits. */
static int
moved_dec(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 20 || (n > 1 && s[0] == '0'))
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

kiln_status
moved_record_parse(const char *path, const uint8_t *p, size_t n, moved_record *out,
                   kiln_err *err)
{
    static const char *const what[] = {"kiln-moved 1", "table NAME", "version V",
                                       "fingerprint HEX16", "crc32c HEX8"};
    moved_cursor c = {(const char *)p, (const char *)p + n, 0};
    const char *v;
    size_t vn;
    uint64_t crc = 0;
    int ok = moved_line(&c, "kiln-moved 1", &v, &vn) && vn == 0;
    ok = ok && moved_line(&c, "table ", &v, &vn) && moved_name_ok(v, vn);
    if (ok) {
        memcpy(out->table, v, vn);
        out->table[vn] = '\0';
    }
    ok = ok && moved_line(&c, "version ", &v, &vn) && moved_dec(v, vn, &out->version) &&
         out->version > 0;
    ok = ok && moved_line(&c, "fingerprint ", &v, &vn) && moved_hex(v, vn, 16, &out->fingerprint);
    size_t body = (size_t)(c.p - (const char *)p);
    ok = ok && moved_line(&c, "crc32c ", &v, &vn) && moved_hex(v, vn, 8, &crc);
    if (!ok)
        return status_set(err, KILN_CORRUPTION, "%s: line %d: not a move record (want \"%s\")",
                          path, c.line, what[c.line - 1]);
    if (c.p != c.end)
        return status_set(err, KILN_CORRUPTION, "%s: %zu bytes after the record's last line",
                          path, (size_t)(c.end - c.p));
    uint32_t want = crc32c_value(p, body);
    if ((uint32_t)crc != want)
        return status_set(err, KILN_CORRUPTION,
                          "%s: checksum mismatch (crc32c %08x recorded, %08x computed): the "
                          "record was changed or damaged", path, (unsigned)crc, (unsigned)want);
    return KILN_OK;
}
