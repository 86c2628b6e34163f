/* table.c -- table directories: atomic creation, listing, the LOCK, version
 * numbering, publishing a manifest by swapping CURRENT, rollback and garbage
 * collection. The directory layout and the publish protocol are described in
 * table.h and docs/storage-format.md §2.1.
 */
#include "storage/store/table.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "storage/base/env.h"

struct kiln_table {
    char data_dir[PATH_MAX];
    char dir[PATH_MAX];
    kiln_schema schema;
    env_file *lock;     /* NULL when the LOCK is not held */
    table_step_fn step; /* crash-test instrumentation (table_set_step_hook), usually NULL */
    void *step_arg;
};

void
table_set_step_hook(kiln_table *t, table_step_fn fn, void *arg)
{
    t->step = fn;
    t->step_arg = arg;
}

void
table_step(kiln_table *t, const char *fmt, ...)
{
    if (t->step == NULL)
        return;
    char name[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    t->step(t->step_arg, name);
}

int64_t
table_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static kiln_status
table_join(char *out, size_t cap, kiln_err *err, const char *a, const char *b)
{
    if ((size_t)snprintf(out, cap, "%s/%s", a, b) >= cap)
        return status_set(err, KILN_INVALID, "%s/%s: path too long", a, b);
    return KILN_OK;
}

kiln_status
table_dir_path(const char *data_dir, const char *canon, char *out, size_t cap, kiln_err *err)
{
    char ns[SCHEMA_NAME_MAX + 1], tbl[SCHEMA_NAME_MAX + 1];
    schema_name_split(canon, ns, tbl);
    /* Leave room for the longest child path (manifests/<20 digits>.tmp). */
    if (cap < 64 || (size_t)snprintf(out, cap, "%s/%s/%s", data_dir, ns, tbl) >= cap - 64)
        return status_set(err, KILN_INVALID, "table %s: data directory path too long", canon);
    return KILN_OK;
}

/* ------------------------------------------------------------------ create */

/* Remove a directory two levels deep (the staging directory of a create). */
static void
table_rmtree_shallow(const char *dir)
{
    char **names;
    size_t n;
    if (env_list_dir(dir, &names, &n, NULL) == KILN_OK) {
        for (size_t i = 0; i < n; i++) {
            char p[PATH_MAX];
            if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, names[i]) >= sizeof p)
                continue;
            env_stat_info si;
            if (env_stat(p, &si, NULL) == KILN_OK && si.is_dir) {
                char **sub;
                size_t m;
                if (env_list_dir(p, &sub, &m, NULL) == KILN_OK) {
                    for (size_t j = 0; j < m; j++) {
                        char q[PATH_MAX];
                        if ((size_t)snprintf(q, sizeof q, "%s/%s", p, sub[j]) < sizeof q)
                            env_unlink(q, NULL);
                    }
                    env_list_free(sub, m);
                }
                env_rmdir(p, NULL);
            } else {
                env_unlink(p, NULL);
            }
        }
        env_list_free(names, n);
    }
    env_rmdir(dir, NULL);
}

/* Staging directories (.creating-TABLE-PID) left in nsdir by creates whose
 * process is gone (a crash): nothing else would ever remove them. */
static void
table_sweep_stages(const char *nsdir)
{
    char **names;
    size_t n;
    if (env_list_dir(nsdir, &names, &n, NULL) != KILN_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(names[i], ".creating-", 10) != 0)
            continue;
        const char *dash = strrchr(names[i], '-');
        char *end;
        long pid = strtol(dash + 1, &end, 10);
        if (*end != '\0' || pid <= 0)
            continue;
        if (pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
            continue;   /* a live create (or one we may not signal) */
        char p[PATH_MAX];
        if ((size_t)snprintf(p, sizeof p, "%s/%s", nsdir, names[i]) < sizeof p)
            table_rmtree_shallow(p);
    }
    env_list_free(names, n);
}

kiln_status
table_create(const char *data_dir, kiln_schema *schema, kiln_err *err)
{
    char canon[SCHEMA_NAME_MAX + 1];
    kiln_status st = schema_name_canon(schema->name, canon, err);
    if (st != KILN_OK)
        return st;
    memcpy(schema->name, canon, sizeof canon);
    if (schema->created_ms == 0)
        schema->created_ms = table_now_ms();
    st = schema_validate(schema, err);
    if (st != KILN_OK)
        return st;

    char ns[SCHEMA_NAME_MAX + 1], tbl[SCHEMA_NAME_MAX + 1];
    schema_name_split(canon, ns, tbl);
    char nsdir[PATH_MAX], final[PATH_MAX], stage[PATH_MAX], p[PATH_MAX];
    if ((st = table_join(nsdir, sizeof nsdir, err, data_dir, ns)) != KILN_OK ||
        (st = table_join(final, sizeof final, err, nsdir, tbl)) != KILN_OK)
        return st;
    if (env_exists(final))
        return status_set(err, KILN_EXISTS, "table %s: already exists in %s", canon, data_dir);
    if ((st = env_mkdirs(nsdir, 0755, err)) != KILN_OK)
        return st;
    if ((size_t)snprintf(stage, sizeof stage, "%s/.creating-%s-%ld", nsdir, tbl,
                         (long)getpid()) >= sizeof stage)
        return status_set(err, KILN_INVALID, "table %s: path too long", canon);
    table_sweep_stages(nsdir);
    if ((st = env_mkdir(stage, 0755, err)) != KILN_OK)
        return st;

    kbuf rec = KBUF_INIT;
    schema_encode(schema, &rec);
    if ((st = table_join(p, sizeof p, err, stage, TABLE_MANIFEST_DIR)) != KILN_OK)
        goto fail;
    if ((st = env_mkdir(p, 0755, err)) != KILN_OK)
        goto fail;
    if ((st = table_join(p, sizeof p, err, stage, TABLE_FILES_DIR)) != KILN_OK)
        goto fail;
    if ((st = env_mkdir(p, 0755, err)) != KILN_OK)
        goto fail;
    if ((st = table_join(p, sizeof p, err, stage, TABLE_SCHEMA_FILE)) != KILN_OK ||
        (st = env_write_file_atomic(p, rec.data, rec.len, err)) != KILN_OK)
        goto fail;
    kiln_err e2;
    status_clear(&e2);
    if ((st = env_rename_noreplace(stage, final, &e2)) != KILN_OK) {
        if (st == KILN_EXISTS)
            st = status_set(err, KILN_EXISTS, "table %s: already exists in %s", canon,
                            data_dir);
        else
            st = status_set(err, st, "%s", e2.msg);
        goto fail;
    }
    buf_free(&rec);
    if ((st = env_sync_dir(nsdir, err)) != KILN_OK)
        return st;
    return env_sync_dir(data_dir, err);
fail:
    buf_free(&rec);
    table_rmtree_shallow(stage);
    return st;
}

/* ------------------------------------------------------------------ open, list */

kiln_status
table_open(const char *data_dir, const char *name, kiln_table **out, kiln_err *err)
{
    *out = NULL;
    char canon[SCHEMA_NAME_MAX + 1];
    kiln_status st = schema_name_canon(name, canon, err);
    if (st != KILN_OK)
        return st;
    kiln_table *t = kiln_calloc(1, sizeof *t);
    t->lock = NULL;
    schema_init(&t->schema);
    char p[PATH_MAX];
    if ((size_t)snprintf(t->data_dir, sizeof t->data_dir, "%s", data_dir) >= sizeof t->data_dir ||
        (st = table_dir_path(data_dir, canon, t->dir, sizeof t->dir, err)) != KILN_OK ||
        (st = table_join(p, sizeof p, err, t->dir, TABLE_SCHEMA_FILE)) != KILN_OK) {
        if (st == KILN_OK)
            st = status_set(err, KILN_INVALID, "%s: path too long", data_dir);
        free(t);
        return st;
    }
    kbuf rec = KBUF_INIT;
    kiln_err e2;
    status_clear(&e2);
    st = env_read_file(p, &rec, &e2);
    if (st == KILN_NOT_FOUND) {
        buf_free(&rec);
        free(t);
        return status_set(err, KILN_NOT_FOUND, "table %s: not found in %s", canon, data_dir);
    }
    if (st != KILN_OK) {
        buf_free(&rec);
        free(t);
        return status_set(err, e2.code, "table %s: %s", canon, e2.msg);
    }
    st = schema_decode(rec.data, rec.len, p, &t->schema, NULL, err);
    buf_free(&rec);
    if (st == KILN_OK && strcmp(t->schema.name, canon) != 0)
        st = status_set(err, KILN_CORRUPTION, "%s: names table %s, expected %s", p,
                        t->schema.name, canon);
    if (st != KILN_OK) {
        schema_free(&t->schema);
        free(t);
        return st;
    }
    *out = t;
    return KILN_OK;
}

void
table_close(kiln_table *t)
{
    if (t == NULL)
        return;
    table_unlock(t);
    schema_free(&t->schema);
    free(t);
}

const kiln_schema *
table_schema(const kiln_table *t)
{
    return &t->schema;
}

const char *
table_name(const kiln_table *t)
{
    return t->schema.name;
}

const char *
table_dir(const kiln_table *t)
{
    return t->dir;
}

static int
table_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

kiln_status
table_list(const char *data_dir, char ***names, size_t *count, kiln_err *err)
{
    *names = NULL;
    *count = 0;
    char **nss;
    size_t nns;
    kiln_err e2;
    status_clear(&e2);
    kiln_status st = env_list_dir(data_dir, &nss, &nns, &e2);
    if (st == KILN_NOT_FOUND)
        return KILN_OK;
    if (st != KILN_OK)
        return status_set(err, st, "%s", e2.msg);
    size_t cap = 0;
    for (size_t i = 0; i < nns; i++) {
        if (nss[i][0] == '.')
            continue;
        char nsdir[PATH_MAX];
        if ((size_t)snprintf(nsdir, sizeof nsdir, "%s/%s", data_dir, nss[i]) >= sizeof nsdir)
            continue;
        char **tbls;
        size_t ntbls;
        if (env_list_dir(nsdir, &tbls, &ntbls, NULL) != KILN_OK)
            continue;   /* not a directory */
        for (size_t j = 0; j < ntbls; j++) {
            if (tbls[j][0] == '.')
                continue;
            char canon[SCHEMA_NAME_MAX + 1], probe[SCHEMA_NAME_MAX + 2], sp[PATH_MAX];
            if ((size_t)snprintf(probe, sizeof probe, "%s:%s", nss[i], tbls[j]) >=
                sizeof probe)
                continue;
            if (schema_name_canon(probe, canon, NULL) != KILN_OK)
                continue;
            if ((size_t)snprintf(sp, sizeof sp, "%s/%s/%s", nsdir, tbls[j],
                                 TABLE_SCHEMA_FILE) >= sizeof sp ||
                !env_exists(sp))
                continue;
            if (*count == cap) {
                cap = cap ? cap * 2 : 16;
                *names = kiln_realloc(*names, cap * sizeof **names);
            }
            (*names)[(*count)++] = (char *)kiln_memdup(canon, strlen(canon) + 1);
        }
        env_list_free(tbls, ntbls);
    }
    env_list_free(nss, nns);
    if (*count > 1)
        qsort(*names, *count, sizeof **names, table_name_cmp);
    return KILN_OK;
}

void
table_list_free(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

/* ------------------------------------------------------------------ lock */

kiln_status
table_lock(kiln_table *t, long wait_ms, kiln_err *err)
{
    if (t->lock != NULL)
        return KILN_OK;
    char p[PATH_MAX];
    kiln_status st = table_join(p, sizeof p, err, t->dir, TABLE_LOCK_FILE);
    if (st != KILN_OK)
        return st;
    char who[32];
    kiln_err e2;
    status_clear(&e2);
    st = env_lock(p, wait_ms, &t->lock, who, sizeof who, &e2);
    if (st == KILN_BUSY)
        return status_set(err, KILN_BUSY,
                          "table %s: locked by another load or rollback (pid %s)%s",
                          t->schema.name, who[0] ? who : "unknown",
                          wait_ms == 0 ? "; pass --wait to wait for it" : "; gave up waiting");
    if (st != KILN_OK)
        return status_set(err, st, "%s", e2.msg);
    return KILN_OK;
}

void
table_unlock(kiln_table *t)
{
    if (t->lock == NULL)
        return;
    env_unlock(t->lock);
    t->lock = NULL;
}

int
table_locked(const kiln_table *t)
{
    return t->lock != NULL;
}

/* ------------------------------------------------------------------ versions */

kiln_status
table_current(const kiln_table *t, manifest_pointer *out, kiln_err *err)
{
    char p[PATH_MAX];
    kiln_status st = table_join(p, sizeof p, err, t->dir, TABLE_CURRENT_FILE);
    if (st != KILN_OK)
        return st;
    kbuf b = KBUF_INIT;
    st = env_read_file(p, &b, err);
    if (st == KILN_OK)
        st = manifest_pointer_decode(b.data, b.len, p, out, err);
    buf_free(&b);
    return st;
}

static void
table_manifest_path(const kiln_table *t, uint64_t version, char *out, size_t cap)
{
    /* t->dir is bounded at open so that its children always fit. */
    if ((size_t)snprintf(out, cap, "%s/%s/%llu", t->dir, TABLE_MANIFEST_DIR,
                         (unsigned long long)version) >= cap)
        out[0] = '\0';
}

kiln_status
table_read_manifest(const kiln_table *t, uint64_t version, manifest *out, uint32_t *crc,
                    kiln_err *err)
{
    char p[PATH_MAX];
    table_manifest_path(t, version, p, sizeof p);
    manifest_init(out);
    kbuf b = KBUF_INIT;
    kiln_status st = env_read_file(p, &b, err);
    if (st == KILN_OK)
        st = manifest_decode(b.data, b.len, p, out, crc, err);
    buf_free(&b);
    if (st == KILN_OK && out->version != version) {
        manifest_free(out);
        st = status_set(err, KILN_CORRUPTION, "%s: holds version %llu", p,
                        (unsigned long long)out->version);
    }
    return st;
}

kiln_status
table_read_current(const kiln_table *t, manifest *out, kiln_err *err)
{
    manifest_pointer ptr;
    manifest_init(out);
    kiln_status st = table_current(t, &ptr, err);
    if (st != KILN_OK)
        return st;
    uint32_t crc;
    st = table_read_manifest(t, ptr.version, out, &crc, err);
    if (st != KILN_OK)
        return st;
    if (crc != ptr.manifest_crc) {
        manifest_free(out);
        return status_set(err, KILN_CORRUPTION,
                          "table %s: CURRENT names manifest %llu with CRC %08x, the file has %08x",
                          t->schema.name, (unsigned long long)ptr.version, ptr.manifest_crc, crc);
    }
    return KILN_OK;
}

/* Parse a decimal manifest name; 0 if not one. */
static uint64_t
table_parse_version(const char *s)
{
    uint64_t v = 0;
    if (*s == '\0' || *s == '0')
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > UINT64_MAX / 10 - 1)
            return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    return v;
}

static int
table_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

kiln_status
table_versions(const kiln_table *t, uint64_t **out, size_t *count, kiln_err *err)
{
    *out = NULL;
    *count = 0;
    char p[PATH_MAX];
    kiln_status st = table_join(p, sizeof p, err, t->dir, TABLE_MANIFEST_DIR);
    if (st != KILN_OK)
        return st;
    char **names;
    size_t n;
    if ((st = env_list_dir(p, &names, &n, err)) != KILN_OK)
        return st;
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = table_parse_version(names[i]);
        if (v == 0)
            continue;
        if (*count == cap) {
            cap = cap ? cap * 2 : 8;
            *out = kiln_realloc(*out, cap * sizeof **out);
        }
        (*out)[(*count)++] = v;
    }
    env_list_free(names, n);
    if (*count > 1)
        qsort(*out, *count, sizeof **out, table_u64_cmp);
    return KILN_OK;
}

uint64_t
table_file_version(const char *name)
{
    if (strlen(name) != 16 || !manifest_file_name_ok(name))
        return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        char c = name[i];
        v = v * 16 + (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    return v;
}

void
table_file_name(uint64_t version, uint32_t seq, char *out)
{
    snprintf(out, MANIFEST_FILE_NAME_MAX + 1, "%08llx%08x", (unsigned long long)version, seq);
}

void
table_file_path(const kiln_table *t, const char *name, char *out, size_t cap)
{
    if ((size_t)snprintf(out, cap, "%s/%s/%s", t->dir, TABLE_FILES_DIR, name) >= cap)
        out[0] = '\0';
}

kiln_status
table_next_version(const kiln_table *t, uint64_t *out, kiln_err *err)
{
    uint64_t max = 0;
    manifest_pointer ptr;
    kiln_err e2;
    status_clear(&e2);
    kiln_status st = table_current(t, &ptr, &e2);
    if (st == KILN_OK)
        max = ptr.version;
    else if (st != KILN_NOT_FOUND)
        return status_set(err, e2.code, "%s", e2.msg);
    uint64_t *vs;
    size_t n;
    if ((st = table_versions(t, &vs, &n, err)) != KILN_OK)
        return st;
    if (n > 0 && vs[n - 1] > max)
        max = vs[n - 1];
    free(vs);
    char p[PATH_MAX];
    if ((st = table_join(p, sizeof p, err, t->dir, TABLE_FILES_DIR)) != KILN_OK)
        return st;
    char **names;
    size_t nn;
    if ((st = env_list_dir(p, &names, &nn, err)) != KILN_OK)
        return st;
    for (size_t i = 0; i < nn; i++) {
        uint64_t v = table_file_version(names[i]);
        if (v > max)
            max = v;
    }
    env_list_free(names, nn);
    if (max >= 0xffffffffULL)
        return status_set(err, KILN_INVALID, "table %s: version numbers exhausted",
                          t->schema.name);
    *out = max + 1;
    return KILN_OK;
}

/* Check that every file of m is present with the recorded size. */
static kiln_status
table_check_files(const kiln_table *t, const manifest *m, kiln_status code, kiln_err *err)
{
    for (size_t i = 0; i < m->table_count; i++) {
        const manifest_table *mt = &m->tables[i];
        for (size_t r = 0; r < mt->region_count; r++) {
            for (size_t f = 0; f < mt->regions[r].file_count; f++) {
                const manifest_file *mf = &mt->regions[r].files[f];
                char p[PATH_MAX];
                table_file_path(t, mf->name, p, sizeof p);
                env_stat_info sb;
                kiln_err e2;
                status_clear(&e2);
                kiln_status s2 = env_stat(p, &sb, &e2);
                if (s2 != KILN_OK)
                    return status_set(err, s2 == KILN_NOT_FOUND ? code : s2,
                                      "table %s version %llu: %s", t->schema.name,
                                      (unsigned long long)m->version, e2.msg);
                if (sb.size != mf->size)
                    return status_set(err, code,
                                      "table %s version %llu: %s: size %llu, manifest says %llu",
                                      t->schema.name, (unsigned long long)m->version, p,
                                      (unsigned long long)sb.size,
                                      (unsigned long long)mf->size);
            }
        }
    }
    return KILN_OK;
}

/* Write CURRENT = ptr: tmp, fsync, rename (the commit point), fsync dir. */
static kiln_status
table_swap_current(kiln_table *t, const manifest_pointer *ptr, int *published, kiln_err *err)
{
    char cur[PATH_MAX], tmp[PATH_MAX];
    kiln_status st;
    *published = 0;
    if ((st = table_join(cur, sizeof cur, err, t->dir, TABLE_CURRENT_FILE)) != KILN_OK ||
        (st = table_join(tmp, sizeof tmp, err, t->dir, TABLE_CURRENT_FILE ".tmp")) != KILN_OK)
        return st;
    kbuf b = KBUF_INIT;
    manifest_pointer_encode(ptr, &b);
    env_file *f;
    st = env_create(tmp, 0, &f, err);
    if (st == KILN_OK) {
        st = env_append(f, b.data, b.len, err);
        if (st == KILN_OK)
            st = env_sync(f, err);
        kiln_status c = env_close(f, err);
        if (st == KILN_OK)
            st = c;
    }
    buf_free(&b);
    if (st == KILN_OK) {
        table_step(t, "current written");
        st = env_rename(tmp, cur, err);
    }
    if (st != KILN_OK) {
        env_unlink(tmp, NULL);
        return st;
    }
    *published = 1;
    table_step(t, "current renamed");
    /* The rename is done: readers see the new version. Only its durability
     * is in doubt if this fsync fails, and the message must say so. */
    kiln_err e2;
    status_clear(&e2);
    st = env_sync_dir(t->dir, &e2);
    if (st != KILN_OK)
        status_set(err, st, "table %s: version %llu is current but may not be durable: %s",
                   t->schema.name, (unsigned long long)ptr->version, e2.msg);
    return st;
}

kiln_status
table_publish(kiln_table *t, const manifest *m, int *published, kiln_err *err)
{
    *published = 0;
    if (t->lock == NULL)
        return status_set(err, KILN_INTERNAL, "table %s: publish without the lock",
                          t->schema.name);
    if (m->table_count == 0 || strcmp(m->tables[0].schema.name, t->schema.name) != 0)
        return status_set(err, KILN_INTERNAL, "table %s: manifest is for another table",
                          t->schema.name);
    kiln_err e2;
    status_clear(&e2);
    if (manifest_check_tables(m, &e2) != KILN_OK)
        return status_set(err, KILN_INTERNAL, "table %s: %s", t->schema.name, e2.msg);
    kiln_status st = table_check_files(t, m, KILN_INTERNAL, err);
    if (st != KILN_OK)
        return st;
    char p[PATH_MAX];
    table_manifest_path(t, m->version, p, sizeof p);
    if (env_exists(p))
        return status_set(err, KILN_INTERNAL, "%s: version %llu exists already", p,
                          (unsigned long long)m->version);
    kbuf b = KBUF_INIT;
    manifest_pointer ptr;
    ptr.version = m->version;
    ptr.manifest_crc = manifest_encode(m, &b);
    st = env_write_file_atomic(p, b.data, b.len, err);
    buf_free(&b);
    if (st != KILN_OK)
        return st;
    table_step(t, "manifest written");
    return table_swap_current(t, &ptr, published, err);
}

kiln_status
table_write_schema(kiln_table *t, const kiln_schema *s, kiln_err *err)
{
    if (t->lock == NULL)
        return status_set(err, KILN_INTERNAL, "table %s: schema rewrite without the lock",
                          t->schema.name);
    if (strcmp(s->name, t->schema.name) != 0)
        return status_set(err, KILN_INVALID, "table %s: schema names table %s",
                          t->schema.name, s->name);
    /* validate a copy: schema_validate sorts split keys in place */
    kiln_schema c;
    schema_copy(&c, s);
    kiln_status st = schema_validate(&c, err);
    char p[PATH_MAX];
    if (st == KILN_OK)
        st = table_join(p, sizeof p, err, t->dir, TABLE_SCHEMA_FILE);
    if (st == KILN_OK) {
        kbuf rec = KBUF_INIT;
        schema_encode(&c, &rec);
        st = env_write_file_atomic(p, rec.data, rec.len, err);
        buf_free(&rec);
    }
    if (st != KILN_OK) {
        schema_free(&c);
        return st;
    }
    schema_free(&t->schema);
    t->schema = c;
    return KILN_OK;
}

void
table_abort_version(kiln_table *t, uint64_t version)
{
    char p[PATH_MAX];
    table_manifest_path(t, version, p, sizeof p);
    env_unlink(p, NULL);
    if ((size_t)snprintf(p, sizeof p, "%s/%s", t->dir, TABLE_FILES_DIR) >= sizeof p)
        return;
    char **names;
    size_t n;
    if (env_list_dir(p, &names, &n, NULL) != KILN_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        if (table_file_version(names[i]) == version) {
            char fp[PATH_MAX];
            table_file_path(t, names[i], fp, sizeof fp);
            env_unlink(fp, NULL);
        }
    }
    env_list_free(names, n);
}

kiln_status
table_rollback(kiln_table *t, uint64_t version, uint64_t *out, kiln_err *err)
{
    if (t->lock == NULL)
        return status_set(err, KILN_INTERNAL, "table %s: rollback without the lock",
                          t->schema.name);
    manifest cur;
    manifest_pointer ptr0;
    kiln_err e2;
    status_clear(&e2);
    kiln_status st = table_current(t, &ptr0, &e2);
    if (st == KILN_NOT_FOUND)
        return status_set(err, KILN_NOT_FOUND, "table %s: no version has been published",
                          t->schema.name);
    if (st == KILN_OK)
        st = table_read_current(t, &cur, &e2);
    if (st != KILN_OK)
        return status_set(err, e2.code, "%s", e2.msg);
    /* The default target is the batch view before the current one: the
     * parent of the newest version a load (not a flush, compaction or
     * split: MANIFEST_KIND_MAINT) made. */
    uint64_t target = version ? version : cur.parent;
    manifest_kind child_kind = cur.kind;
    while (version == 0 && target != 0 && child_kind == MANIFEST_KIND_MAINT) {
        manifest a;
        status_clear(&e2);
        if (table_read_manifest(t, target, &a, NULL, &e2) != KILN_OK)
            break;   /* not kept: reported below */
        child_kind = a.kind;
        target = a.parent;
        manifest_free(&a);
    }
    uint64_t current = cur.version;
    if (target == 0) {
        manifest_free(&cur);
        return status_set(err, KILN_NOT_FOUND,
                          "table %s: version %llu has no earlier version to roll back to",
                          t->schema.name, (unsigned long long)current);
    }
    if (target == current) {
        manifest_free(&cur);
        return status_set(err, KILN_INVALID, "table %s: version %llu is already current",
                          t->schema.name, (unsigned long long)target);
    }
    manifest m;
    uint32_t crc;
    status_clear(&e2);
    st = table_read_manifest(t, target, &m, &crc, &e2);
    if (st == KILN_NOT_FOUND) {
        manifest_free(&cur);
        return status_set(err, KILN_NOT_FOUND,
                          "table %s: version %llu is not kept (see kiln views)", t->schema.name,
                          (unsigned long long)target);
    }
    if (st != KILN_OK) {
        manifest_free(&cur);
        return status_set(err, e2.code, "%s", e2.msg);
    }
    st = table_check_files(t, &m, KILN_CORRUPTION, err);
    if (st != KILN_OK) {
        manifest_free(&m);
        manifest_free(&cur);
        return st;
    }
    /* Online writes are not the batch view's: a rollback keeps the current
     * version's flushed writes, as a new version with the target's loads.
     * So it does when the current version retired writes (a covering load):
     * writes still in the log would come back under the target's rules. */
    if (cur.flushed_seq > m.flushed_seq || manifest_has_speed(&cur) || manifest_has_speed(&m) ||
        cur.cover_count > 0) {
        uint64_t nv;
        st = table_next_version(t, &nv, err);
        if (st == KILN_OK) {
            /* the target's loads and ancestry, the current writes: their
             * files, sequence and covering rules (retired writes stay so) */
            manifest_drop_speed(&m);
            manifest_keep_speed(&cur, &m);
            m.flushed_seq = cur.flushed_seq;
            free(m.covers);
            m.covers = NULL;
            m.cover_count = 0;
            for (size_t i = 0; i < cur.cover_count; i++)
                manifest_add_cover(&m, cur.covers[i].version, cur.covers[i].ts);
            m.version = nv;
            m.created_ms = table_now_ms();
            int published = 0;
            st = table_publish(t, &m, &published, err);
            if (published && out)
                *out = nv;
        }
        manifest_free(&m);
        manifest_free(&cur);
        return st;
    }
    manifest_free(&m);
    manifest_free(&cur);
    manifest_pointer ptr = {target, crc};
    int published;
    st = table_swap_current(t, &ptr, &published, err);
    if (published && out)
        *out = target;
    return st;
}

/* ------------------------------------------------------------------ gc */

typedef struct table_nameset {
    char (*names)[MANIFEST_FILE_NAME_MAX + 1];
    size_t count, cap;
} table_nameset;

static void
table_nameset_add(table_nameset *s, const char *name)
{
    if (s->count == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->names = kiln_realloc(s->names, s->cap * sizeof *s->names);
    }
    snprintf(s->names[s->count++], MANIFEST_FILE_NAME_MAX + 1, "%s", name);
}

static int
table_str_cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}

static int
table_nameset_has(const table_nameset *s, const char *name)
{
    return s->count > 0 &&
           bsearch(name, s->names, s->count, sizeof *s->names, table_str_cmp) != NULL;
}

kiln_status
table_gc(kiln_table *t, table_gc_stats *stats, kiln_err *err)
{
    table_gc_stats local;
    if (stats == NULL)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    if (t->lock == NULL)
        return status_set(err, KILN_INTERNAL, "table %s: gc without the lock", t->schema.name);

    /* Kept versions: the current one and its ancestors, keep_versions in all. */
    uint64_t kept[SCHEMA_KEEP_MAX];
    size_t nkept = 0;
    table_nameset refs = {NULL, 0, 0};
    manifest m;
    manifest_pointer ptr0;
    kiln_err e2;
    status_clear(&e2);
    kiln_status st = table_current(t, &ptr0, &e2);
    if (st == KILN_NOT_FOUND)
        return KILN_OK;   /* nothing published: never guess what is garbage */
    if (st == KILN_OK)
        st = table_read_current(t, &m, &e2);
    if (st != KILN_OK)
        return status_set(err, e2.code, "%s", e2.msg);
    int have = 1;
    manifest_kind child_kind = MANIFEST_KIND_REPLACE;   /* of the version visited last */
    while (have) {
        /* Kept: the current version, then the newest version of each
         * earlier batch view, keep_versions in all: a version whose child
         * a flush, compaction or split made holds the same batch view as
         * that child, so it is not kept. */
        int superseded = nkept > 0 && child_kind == MANIFEST_KIND_MAINT;
        child_kind = m.kind;
        if (superseded) {
            uint64_t parent = m.parent;
            manifest_free(&m);
            have = 0;
            if (parent != 0) {
                status_clear(&e2);
                st = table_read_manifest(t, parent, &m, NULL, &e2);
                if (st == KILN_OK) {
                    have = 1;
                } else if (st != KILN_NOT_FOUND) {
                    free(refs.names);
                    return status_set(err, st, "table %s: gc stopped: cannot read version %llu: %s",
                                      t->schema.name, (unsigned long long)parent, e2.msg);
                }
            }
            continue;
        }
        kept[nkept++] = m.version;
        for (size_t i = 0; i < m.table_count; i++) {
            for (size_t r = 0; r < m.tables[i].region_count; r++) {
                const manifest_region *reg = &m.tables[i].regions[r];
                for (size_t f = 0; f < reg->file_count; f++)
                    table_nameset_add(&refs, reg->files[f].name);
            }
        }
        uint64_t parent = m.parent;
        manifest_free(&m);
        have = 0;
        if (parent != 0 && nkept < t->schema.keep_versions) {
            /* Only a parent that is gone (collected before) ends the chain.
             * Any other failure -- EIO, EMFILE, ENOMEM, a damaged manifest --
             * says nothing about what is garbage, so nothing is removed. */
            status_clear(&e2);
            st = table_read_manifest(t, parent, &m, NULL, &e2);
            if (st == KILN_OK) {
                have = 1;
            } else if (st != KILN_NOT_FOUND) {
                free(refs.names);
                return status_set(err, st,
                                  "table %s: gc stopped: cannot read version %llu, the parent "
                                  "of version %llu: %s",
                                  t->schema.name, (unsigned long long)parent,
                                  (unsigned long long)kept[nkept - 1], e2.msg);
            }
        }
    }
    stats->versions_kept = nkept;
    if (refs.count > 1)
        qsort(refs.names, refs.count, sizeof *refs.names, table_str_cmp);

    char p[PATH_MAX];
    st = KILN_OK;
    /* A pointer a crashed publish left half-written. */
    if (table_join(p, sizeof p, NULL, t->dir, TABLE_CURRENT_FILE ".tmp") == KILN_OK &&
        env_exists(p))
        env_unlink(p, NULL);
    /* Manifests first: once a manifest is gone nobody can start opening its files. */
    char **names;
    size_t n;
    if (table_join(p, sizeof p, err, t->dir, TABLE_MANIFEST_DIR) == KILN_OK &&
        (st = env_list_dir(p, &names, &n, err)) == KILN_OK) {
        for (size_t i = 0; i < n; i++) {
            if (names[i][0] == '.')
                continue;
            uint64_t v = table_parse_version(names[i]);
            int keep = 0;
            for (size_t k = 0; k < nkept && v != 0; k++)
                keep |= kept[k] == v;
            if (keep)
                continue;
            char fp[PATH_MAX];
            if ((size_t)snprintf(fp, sizeof fp, "%s/%s", p, names[i]) >= sizeof fp)
                continue;
            kiln_status s2 = env_unlink(fp, err);
            if (s2 == KILN_OK)
                stats->manifests_removed++;
            else if (st == KILN_OK)
                st = s2;
        }
        env_list_free(names, n);
        /* The manifests' removal is made durable before any file goes, so
         * a crash never brings back a manifest whose files are gone. */
        if (st == KILN_OK && stats->manifests_removed > 0)
            st = env_sync_dir(p, err);
    }
    if (st != KILN_OK) {
        free(refs.names);
        return st;
    }
    table_step(t, "gc manifests removed");
    if (table_join(p, sizeof p, err, t->dir, TABLE_FILES_DIR) == KILN_OK) {
        kiln_status s2 = env_list_dir(p, &names, &n, err);
        if (s2 != KILN_OK) {
            if (st == KILN_OK)
                st = s2;
        } else {
            for (size_t i = 0; i < n; i++) {
                if (table_nameset_has(&refs, names[i]))
                    continue;
                char fp[PATH_MAX];
                table_file_path(t, names[i], fp, sizeof fp);
                env_stat_info sb;
                uint64_t size = env_stat(fp, &sb, NULL) == KILN_OK ? sb.size : 0;
                s2 = env_unlink(fp, err);
                if (s2 == KILN_OK) {
                    stats->files_removed++;
                    stats->bytes_removed += size;
                } else if (st == KILN_OK) {
                    st = s2;
                }
            }
            env_list_free(names, n);
            if (st == KILN_OK && stats->files_removed > 0)
                st = env_sync_dir(p, err);
        }
    }
    free(refs.names);
    return st;
}
