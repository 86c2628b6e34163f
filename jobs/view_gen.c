/* view_gen.c -- the random source, file writer and small helpers the view
 * generators share (view_gen.h).
 */
#include "jobs/view_gen.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/base/env.h"

/* ------------------------------------------------------------------ random */

static uint64_t
view_gen_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void
view_gen_seed(view_gen_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xD1342543DE82EF95ull);
    for (int i = 0; i < 4; i++)
        r->s[i] = view_gen_splitmix(&x);
}

static uint64_t
view_gen_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t
view_gen_next(view_gen_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = view_gen_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = view_gen_rotl(s[3], 45);
    return out;
}

uint64_t
view_gen_below(view_gen_rng *r, uint64_t n)
{
    /* rejection keeps the draw exactly uniform */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
        x = view_gen_next(r);
    } while (x >= limit);
    return x % n;
}

uint64_t
view_gen_skewed(view_gen_rng *r, uint64_t n, int k)
{
    uint64_t best = view_gen_below(r, n);
    for (int i = 1; i < k; i++) {
        uint64_t x = view_gen_below(r, n);
        if (x < best)
            best = x;
    }
    return best;
}

int
view_gen_chance(view_gen_rng *r, uint32_t per_mille)
{
    return view_gen_below(r, 1000) < per_mille;
}

const char *
view_gen_pick(view_gen_rng *r, const char *const *list, size_t n)
{
    return list[view_gen_below(r, n)];
}

/* ------------------------------------------------------------------ files */

struct view_gen_out {
    char *dir;
    char *base;
    uint32_t files;
    uint64_t rows;
    uint32_t cur;               /* index of the open file */
    FILE *f;
    char path[PATH_MAX];
};

static kiln_status
view_gen_out_next_file(view_gen_out *o, uint32_t k, kiln_err *err)
{
    if (o->f != NULL && fclose(o->f) != 0) {
        o->f = NULL;
        return status_set_errno(err, errno, "%s: close", o->path);
    }
    o->f = NULL;
    if (snprintf(o->path, sizeof o->path, "%s/%s-%05" PRIu32 ".tsv", o->dir, o->base, k) >=
        (int)sizeof o->path)
        return status_set(err, KILN_INVALID, "%s: path too long", o->dir);
    o->f = fopen(o->path, "wx");
    if (o->f == NULL)
        return status_set_errno(err, errno, "%s: create", o->path);
    o->cur = k;
    return KILN_OK;
}

kiln_status
view_gen_out_open(const char *dir, const char *base, uint32_t files, uint64_t rows,
                  view_gen_out **out, kiln_err *err)
{
    *out = NULL;
    kiln_status s = env_mkdirs(dir, 0755, err);
    if (s != KILN_OK)
        return s;
    view_gen_out *o = kiln_calloc(1, sizeof *o);
    o->dir = (char *)kiln_memdup(dir, strlen(dir) + 1);
    o->base = (char *)kiln_memdup(base, strlen(base) + 1);
    o->files = files > 0 ? files : 1;
    o->rows = rows;
    s = view_gen_out_next_file(o, 0, err);
    if (s != KILN_OK) {
        view_gen_out_free(o);
        return s;
    }
    *out = o;
    return KILN_OK;
}

/* Make a line malformed: drop its last field, add one, or empty the first. */
static void
view_gen_spoil(view_gen_rng *r, kbuf *line)
{
    uint64_t how = view_gen_below(r, 3);
    uint8_t *p = line->data;
    size_t n = line->len;
    if (how == 0) {
        uint8_t *tab = NULL;
        for (size_t i = 0; i < n; i++)
            if (p[i] == '\t')
                tab = p + i;
        if (tab != NULL)
            line->len = (size_t)(tab - p);
    } else if (how == 1) {
        buf_append(line, "\textra", 6);
    } else {
        uint8_t *tab = memchr(p, '\t', n);
        if (tab != NULL) {
            size_t skip = (size_t)(tab - p);
            memmove(p, tab, n - skip);
            line->len = n - skip;
        }
    }
}

kiln_status
view_gen_out_line(view_gen_out *o, uint64_t i, const view_gen_options *opt, view_gen_rng *r,
                  kbuf *line, kiln_err *err)
{
    /* rows <= VIEW_GEN_ROWS_MAX and files <= VIEW_GEN_FILES_MAX: no overflow */
    uint32_t k = (uint32_t)(i * o->files / (o->rows > 0 ? o->rows : 1));
    if (k >= o->files)
        k = o->files - 1;
    while (o->cur < k) {
        kiln_status s = view_gen_out_next_file(o, o->cur + 1, err);
        if (s != KILN_OK)
            return s;
    }
    if (opt->bad > 0 && view_gen_chance(r, opt->bad))
        view_gen_spoil(r, line);
    if (fwrite(line->data, 1, line->len, o->f) != line->len || fputc('\n', o->f) == EOF)
        return status_set_errno(err, errno, "%s: write", o->path);
    return KILN_OK;
}

kiln_status
view_gen_out_close(view_gen_out *o, kiln_err *err)
{
    /* every file exists, even those of an empty run */
    while (o->cur + 1 < o->files) {
        kiln_status s = view_gen_out_next_file(o, o->cur + 1, err);
        if (s != KILN_OK)
            return s;
    }
    FILE *f = o->f;
    o->f = NULL;
    if (f != NULL && fclose(f) != 0)
        return status_set_errno(err, errno, "%s: close", o->path);
    return KILN_OK;
}

void
view_gen_out_free(view_gen_out *o)
{
    if (o == NULL)
        return;
    if (o->f != NULL)
        fclose(o->f);
    free(o->dir);
    free(o->base);
    free(o);
}

/* ------------------------------------------------------------------ text */

void
view_gen_printf(kbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof tmp) {
        buf_append(b, tmp, (size_t)n);
        return;
    }
    buf_reserve(b, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void
view_gen_date(int64_t ms, char out[11])
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || strftime(out, 11, "%Y-%m-%d", &tm) == 0)
        memcpy(out, "0000-00-00", 11);
}

const char *const view_gen_words[] = {
    "amber", "anchor", "apple", "arrow", "autumn", "bamboo", "basil", "beacon", "birch",
    "blue", "bridge", "bright", "canyon", "cedar", "cinder", "clear", "clover", "cobalt",
    "copper", "coral", "crimson", "crystal", "dawn", "delta", "desert", "dune", "echo",
    "ember", "falcon", "fern", "field", "flint", "forest", "frost", "garden", "glacier",
    "golden", "granite", "harbor", "hazel", "hollow", "indigo", "iron", "island", "ivory",
    "jade", "juniper", "lantern", "lark", "lemon", "linen", "lunar", "maple", "marble",
    "meadow", "mellow", "mint", "mist", "moss", "north", "oak", "ocean", "olive", "onyx",
    "orchid", "pebble", "pine", "plum", "polar", "quiet", "rain", "raven", "reed", "ridge",
    "river", "rose", "ruby", "sage", "salt", "sand", "silver", "slate", "snow", "solar",
    "spring", "stone", "storm", "summer", "swift", "thistle", "thunder", "tide", "timber",
    "topaz", "velvet", "willow", "winter", "wren", "zephyr",
};
const size_t view_gen_nwords = sizeof view_gen_words / sizeof view_gen_words[0];
