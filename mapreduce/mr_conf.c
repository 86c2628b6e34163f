/* mr_conf.c -- a job's `-D key=value` settings.
 *
 * A small array of (key, value, used) triples searched linearly: a job has a
 * few dozen settings at most and reads them once at setup, so nothing faster
 * is worth its code.
 */
#include "mapreduce/mr_conf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "storage/base/buf.h"

typedef struct mr_conf_entry_rec {
    char *key;
    char *value;
    int used;
} mr_conf_entry_rec;

struct mr_conf {
    mr_conf_entry_rec *v;
    size_t n;
    size_t cap;
};

mr_conf *
mr_conf_new(void)
{
    return kiln_calloc(1, sizeof(mr_conf));
}

void
mr_conf_free(mr_conf *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].key);
        free(c->v[i].value);
    }
    free(c->v);
    free(c);
}

static mr_conf_entry_rec *
mr_conf_find(const mr_conf *c, const char *key)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i].key, key) == 0)
            return &c->v[i];
    return NULL;
}

void
mr_conf_set(mr_conf *c, const char *key, const char *value)
{
    mr_conf_entry_rec *e = mr_conf_find(c, key);
    if (e != NULL) {
        free(e->value);
        e->value = (char *)kiln_memdup(value, strlen(value) + 1);
        return;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->v = kiln_realloc(c->v, c->cap * sizeof *c->v);
    }
    e = &c->v[c->n++];
    e->key = (char *)kiln_memdup(key, strlen(key) + 1);
    e->value = (char *)kiln_memdup(value, strlen(value) + 1);
    e->used = 0;
}

kiln_status
mr_conf_parse(mr_conf *c, const char *kv, kiln_err *err)
{
    const char *eq = strchr(kv, '=');
    if (eq == NULL || eq == kv)
        return status_set(err, KILN_INVALID, "-D %s: expected key=value", kv);
    size_t klen = (size_t)(eq - kv);
    char *key = kiln_malloc(klen + 1);
    memcpy(key, kv, klen);
    key[klen] = '\0';
    mr_conf_set(c, key, eq + 1);
    free(key);
    return KILN_OK;
}

const char *
mr_conf_get(mr_conf *c, const char *key, const char *def)
{
    mr_conf_entry_rec *e = mr_conf_find(c, key);
    if (e == NULL)
        return def;
    e->used = 1;
    return e->value;
}

int
mr_conf_has(const mr_conf *c, const char *key)
{
    return mr_conf_find(c, key) != NULL;
}

kiln_status
mr_conf_get_long(mr_conf *c, const char *key, int64_t def, int64_t *out, kiln_err *err)
{
    const char *v = mr_conf_get(c, key, NULL);
    if (v == NULL) {
        *out = def;
        return KILN_OK;
    }
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno != 0)
        return status_set(err, KILN_INVALID, "%s: not an integer: '%s'", key, v);
    *out = x;
    return KILN_OK;
}

kiln_status
mr_conf_get_double(mr_conf *c, const char *key, double def, double *out, kiln_err *err)
{
    const char *v = mr_conf_get(c, key, NULL);
    if (v == NULL) {
        *out = def;
        return KILN_OK;
    }
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (*v == '\0' || *end != '\0' || errno != 0)
        return status_set(err, KILN_INVALID, "%s: not a number: '%s'", key, v);
    *out = x;
    return KILN_OK;
}

kiln_status
mr_conf_get_bool(mr_conf *c, const char *key, int def, int *out, kiln_err *err)
{
    const char *v = mr_conf_get(c, key, NULL);
    if (v == NULL) {
        *out = def;
        return KILN_OK;
    }
    static const char *const yes[] = {"true", "yes", "1", "on"};
    static const char *const no[] = {"false", "no", "0", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) {
            *out = 1;
            return KILN_OK;
        }
        if (strcasecmp(v, no[i]) == 0) {
            *out = 0;
            return KILN_OK;
        }
    }
    return status_set(err, KILN_INVALID, "%s: not a boolean: '%s'", key, v);
}

int
mr_conf_entry(const mr_conf *c, size_t i, const char **key, const char **value, int *used)
{
    if (i >= c->n)
        return 0;
    *key = c->v[i].key;
    *value = c->v[i].value;
    if (used != NULL)
        *used = c->v[i].used;
    return 1;
}
