/* resp_keys.c -- the key and column mapping of resp_keys.h. */
#include "serving/resp_keys.h"

#include <string.h>

const resp_api_column *
resp_keys_column(const resp_api_column *cols, size_t n, views_entry *e)
{
    const resp_api_column *global = NULL;
    const char *name = views_entry_name(e);
    for (size_t i = 0; i < n; i++) {
        const resp_api_column *c = &cols[i];
        if (c->table[0] != '\0') {
            if (strcmp(c->table, name) == 0)
                return c;
        } else if (global == NULL &&
                   schema_find_family(views_entry_schema(e), (const uint8_t *)c->family,
                                      strlen(c->family)) != NULL) {
            global = c;
        }
    }
    return global;
}

int
resp_keys_resolve(views_reader *r, kslice key, int db, views_entry **e, kslice *row,
                  const char **why)
{
    const uint8_t *slash = memchr(key.p, '/', key.n);
    if (slash != NULL && slash > key.p) {
        views_entry *t = views_reader_find(r, (const char *)key.p, (size_t)(slash - key.p));
        if (t != NULL) {
            *e = t;
            *row = kslice_make(slash + 1, key.n - (size_t)(slash - key.p) - 1);
            return 0;
        }
    }
    *e = views_reader_at(r, (size_t)db);
    if (*e == NULL) {
        *why = "ERR no table for the selected database (SELECT n picks the n-th table "
               "in name order)";
        return -1;
    }
    *row = key;
    return 0;
}
