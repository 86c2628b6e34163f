/* store_catalog.c -- current views of a data directory's tables with
 * rate-limited CURRENT checks and hot swaps (see store_catalog.h). The mutex
 * only guards the table list and the swap of a pointer; opening a new
 * version, which reads every file's trailer and indexes, runs outside it.
 */
#include "storage/store/store_catalog.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/store/schema.h"

typedef struct store_catalog_entry {
    char name[SCHEMA_NAME_MAX + 1];
    store_view *view;             /* the catalog's reference */
    int64_t checked_ms;
} store_catalog_entry;

struct store_catalog {
    pthread_mutex_t mu;
    char data_dir[PATH_MAX];
    block_cache *cache;
    long check_ms;
    store_catalog_entry *entries;
    size_t count, cap;
};

static int64_t
store_catalog_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

kiln_status
store_catalog_open(const char *data_dir, size_t cache_bytes, store_catalog **out, kiln_err *err)
{
    *out = NULL;
    if (strlen(data_dir) >= PATH_MAX)
        return status_set(err, KILN_INVALID, "%s: path too long", data_dir);
    store_catalog *c = kiln_calloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    strcpy(c->data_dir, data_dir);
    c->cache = block_cache_new(cache_bytes);
    c->check_ms = STORE_CATALOG_CHECK_MS;
    *out = c;
    return KILN_OK;
}

void
store_catalog_close(store_catalog *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->count; i++)
        store_view_unref(c->entries[i].view);
    free(c->entries);
    block_cache_free(c->cache);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

block_cache *
store_catalog_cache(store_catalog *c)
{
    return c->cache;
}

const char *
store_catalog_data_dir(const store_catalog *c)
{
    return c->data_dir;
}

void
store_catalog_set_check_interval(store_catalog *c, long ms)
{
    pthread_mutex_lock(&c->mu);
    c->check_ms = ms < 0 ? 0 : ms;
    pthread_mutex_unlock(&c->mu);
}

static store_catalog_entry *
store_catalog_find(store_catalog *c, const char *name)
{
    for (size_t i = 0; i < c->count; i++) {
        if (strcmp(c->entries[i].name, name) == 0)
            return &c->entries[i];
    }
    return NULL;
}

/* Install v (a reference the catalog takes over) as name's view unless a
 * newer one got there first. Returns the view now current, referenced for
 * the caller. REQUIRES: c->mu held. */
static store_view *
store_catalog_install(store_catalog *c, const char *name, store_view *v)
{
    store_catalog_entry *e = store_catalog_find(c, name);
    if (e == NULL) {
        if (c->count == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 8;
            c->entries = kiln_realloc(c->entries, c->cap * sizeof *c->entries);
        }
        e = &c->entries[c->count++];
        memset(e, 0, sizeof *e);
        strcpy(e->name, name);
    }
    if (e->view == NULL || store_view_version(v) >= store_view_version(e->view) ||
        !store_view_is_current(e->view)) {
        store_view_unref(e->view);
        e->view = v;
    } else {
        store_view_unref(v);
    }
    e->checked_ms = store_catalog_now_ms();
    store_view_ref(e->view);
    return e->view;
}

kiln_status
store_catalog_acquire(store_catalog *c, const char *table, store_view **out, kiln_err *err)
{
    *out = NULL;
    char name[SCHEMA_NAME_MAX + 1];
    kiln_status st = schema_name_canon(table, name, err);
    if (st != KILN_OK)
        return st;
    pthread_mutex_lock(&c->mu);
    store_catalog_entry *e = store_catalog_find(c, name);
    if (e != NULL && e->view != NULL) {
        int64_t now = store_catalog_now_ms();
        if (now - e->checked_ms < c->check_ms || store_view_is_current(e->view)) {
            if (now - e->checked_ms >= c->check_ms)
                e->checked_ms = now;
            store_view_ref(e->view);
            *out = e->view;
            pthread_mutex_unlock(&c->mu);
            return KILN_OK;
        }
        /* a new version: other callers keep the old view until the swap */
        e->checked_ms = now;
    }
    pthread_mutex_unlock(&c->mu);

    store_view *v;
    kiln_err e2;
    status_clear(&e2);
    st = store_view_open(c->data_dir, name, c->cache, &v, &e2);
    pthread_mutex_lock(&c->mu);
    if (st == KILN_OK) {
        *out = store_catalog_install(c, name, v);
    } else {
        e = store_catalog_find(c, name);
        if (e != NULL && e->view != NULL && st != KILN_NOT_FOUND) {
            /* keep serving the version we have; the next check retries */
            store_view_ref(e->view);
            *out = e->view;
            st = KILN_OK;
        } else {
            status_set(err, e2.code, "%s", e2.msg);
        }
    }
    pthread_mutex_unlock(&c->mu);
    return st;
}

kiln_status
store_catalog_refresh(store_catalog *c, size_t *swapped, kiln_err *err)
{
    size_t n = 0;
    kiln_status first = KILN_OK;
    pthread_mutex_lock(&c->mu);
    size_t count = c->count;
    char (*names)[SCHEMA_NAME_MAX + 1] = kiln_malloc((count ? count : 1) * sizeof *names);
    size_t stale = 0;
    for (size_t i = 0; i < count; i++) {
        if (c->entries[i].view != NULL && !store_view_is_current(c->entries[i].view))
            strcpy(names[stale++], c->entries[i].name);
    }
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < stale; i++) {
        store_view *v;
        kiln_err e2;
        status_clear(&e2);
        kiln_status st = store_view_open(c->data_dir, names[i], c->cache, &v, &e2);
        if (st != KILN_OK) {
            if (first == KILN_OK)
                first = status_set(err, e2.code, "%s", e2.msg);
            continue;
        }
        pthread_mutex_lock(&c->mu);
        store_view_unref(store_catalog_install(c, names[i], v));
        pthread_mutex_unlock(&c->mu);
        n++;
    }
    free(names);
    if (swapped)
        *swapped = n;
    return first;
}
