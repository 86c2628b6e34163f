/* bulkload.c -- `kiln load`: check a job's HFile output, map its files to the
 * table's regions (splitting straddlers), stage them into the store by
 * reflink or copy (or, for a move, by hard link), and publish the whole
 * table -- with the index tables the job built -- as one new view version;
 * a move then removes the job's names. The steps and their guarantees are
 * described in bulkload.h; the publish protocol in storage/table.h.
 */
#include "bulkload/bulkload.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bulkload/bulkload_int.h"
#include "bulkload/moved.h"
#include "storage/hfile/cell.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_format.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/store/store_index_def.h"
#include "storage/base/store_rec.h"
#include "storage/store/store_salt.h"

void
bulkload_options_init(bulkload_options *o)
{
    memset(o, 0, sizeof *o);
    o->mode = BULKLOAD_REPLACE;
}

void
bulkload_result_free(bulkload_result *r)
{
    if (r == NULL)
        return;
    free(r->files);
    free(r->indexes);
    r->files = NULL;
    r->file_count = 0;
    r->indexes = NULL;
    r->index_count = 0;
}

const char *
bulkload_action_name(bulkload_action a)
{
    switch (a) {
    case BULKLOAD_LINK:       return "reflink";
    case BULKLOAD_COPY:       return "copy";
    case BULKLOAD_SPLIT:      return "split";
    case BULKLOAD_SKIP_EMPTY: return "skip (empty)";
    case BULKLOAD_MOVE:       return "move";
    }
    return "?";
}

static double
bulkload_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------------ discovery */

static int
bulkload_file_cmp(const void *a, const void *b)
{
    return strcmp(((const bulkload_file *)a)->path, ((const bulkload_file *)b)->path);
}

static void
bulkload_add_file(bulkload_result *r, size_t *cap, const char *path, const char *family,
                  size_t table, uint64_t size)
{
    if (r->file_count == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        r->files = kiln_realloc(r->files, *cap * sizeof *r->files);
    }
    bulkload_file *f = &r->files[r->file_count++];
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", path);
    size_t fl = strlen(family);   /* a schema family: shorter than the field */
    if (fl >= sizeof f->family)
        fl = sizeof f->family - 1;
    memcpy(f->family, family, fl);
    f->family[fl] = '\0';
    f->table = table;
    f->size = size;
}

/* Families are the sub-directories of dir (the job output, or an index's
 * directory in it); HFiles the regular files in them, added as files of
 * `table`. Names starting with '_' or '.' are skipped, as HBase does. */
static kiln_status
bulkload_discover_dir(const kiln_schema *s, const char *job, size_t table, bulkload_result *r,
                      size_t *capp, kiln_err *err)
{
    char **names;
    size_t n;
    kiln_err e2;
    status_clear(&e2);
    kiln_status st = env_list_dir(job, &names, &n, &e2);
    if (st != KILN_OK)
        return status_set(err, st, "job output directory: %s", e2.msg);
    size_t cap = *capp;
    for (size_t i = 0; i < n && st == KILN_OK; i++) {
        const char *fam = names[i];
        if (fam[0] == '_' || fam[0] == '.')
            continue;
        char fdir[PATH_MAX];
        env_stat_info sb;
        if ((size_t)snprintf(fdir, sizeof fdir, "%s/%s", job, fam) >= sizeof fdir) {
            st = status_set(err, KILN_INVALID, "%s/%s: path too long", job, fam);
            break;
        }
        status_clear(&e2);
        kiln_status s2 = env_stat(fdir, &sb, &e2);
        if (s2 == KILN_NOT_FOUND || (s2 == KILN_OK && !sb.is_dir))
            continue;
        if (s2 != KILN_OK) {
            st = status_set(err, s2, "%s", e2.msg);
            break;
        }
        if (schema_find_family(s, (const uint8_t *)fam, strlen(fam)) == NULL) {
            kbuf fams = KBUF_INIT;
            for (size_t k = 0; k < s->family_count; k++) {
                if (k > 0)
                    buf_append(&fams, ", ", 2);
                buf_append(&fams, s->families[k].name, strlen(s->families[k].name));
            }
            buf_append_u8(&fams, 0);
            st = status_set(err, KILN_INVALID,
                            "%s: family directory '%s' is not a family of table %s (families: %s)",
                            job, fam, s->name, (char *)fams.data);
            buf_free(&fams);
            break;
        }
        char **files;
        size_t nf;
        status_clear(&e2);
        if ((s2 = env_list_dir(fdir, &files, &nf, &e2)) != KILN_OK) {
            st = status_set(err, s2, "family directory: %s", e2.msg);
            break;
        }
        for (size_t j = 0; j < nf; j++) {
            if (files[j][0] == '_' || files[j][0] == '.')
                continue;
            char path[PATH_MAX];
            if ((size_t)snprintf(path, sizeof path, "%s/%s", fdir, files[j]) >= sizeof path) {
                st = status_set(err, KILN_INVALID, "%s/%s: path too long", fdir, files[j]);
                break;
            }
            status_clear(&e2);
            s2 = env_stat(path, &sb, &e2);
            if (s2 == KILN_NOT_FOUND || (s2 == KILN_OK && !sb.is_reg))
                continue;
            if (s2 != KILN_OK) {
                st = status_set(err, s2, "%s", e2.msg);
                break;
            }
            bulkload_add_file(r, &cap, path, fam, table, sb.size);
        }
        env_list_free(files, nf);
    }
    env_list_free(names, n);
    *capp = cap;
    return st;
}

static int
bulkload_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read and check JOB/_index/NAME/_schema into *out. */
static kiln_status
bulkload_index_schema(const kiln_schema *s, const char *dir, const char *name, kiln_schema *out,
                      kiln_err *err)
{
    char p[PATH_MAX];
    schema_init(out);
    if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, BULKLOAD_INDEX_SCHEMA) >= sizeof p)
        return status_set(err, KILN_INVALID, "%s: path too long", dir);
    kbuf rec = KBUF_INIT;
    kiln_err e2;
    status_clear(&e2);
    kiln_status st = env_read_file(p, &rec, &e2);
    if (st == KILN_NOT_FOUND)
        st = status_set(err, KILN_CORRUPTION, "%s: missing: index %s has no schema", p, name);
    else if (st != KILN_OK)
        st = status_set(err, e2.code, "%s", e2.msg);
    else
        st = schema_decode(rec.data, rec.len, p, out, NULL, err);
    buf_free(&rec);
    if (st != KILN_OK)
        return st;
    store_index_def d;
    status_clear(&e2);
    st = store_index_def_from_schema(s, out, &d, &e2);
    if (st == KILN_OK && strcmp(d.name, name) != 0)
        st = status_set(&e2, KILN_INVALID, "it defines index '%s'", d.name);
    store_index_def_free(&d);
    if (st != KILN_OK) {
        schema_free(out);
        return status_set(err, KILN_INVALID, "%s: %s", p, e2.msg);
    }
    return KILN_OK;
}

/* The table's HFiles, then each index's (JOB/_index/NAME/), in name order;
 * *ischemas gets the index tables' schemas. */
static kiln_status
bulkload_discover(const kiln_schema *s, const char *job, int allow_empty, bulkload_result *r,
                  kiln_schema **ischemas, kiln_err *err)
{
    size_t cap = 0;
    kiln_status st = bulkload_discover_dir(s, job, 0, r, &cap, err);
    if (st != KILN_OK)
        return st;
    if (r->file_count == 0 && !allow_empty)
        return status_set(err, KILN_NOT_FOUND,
                          "%s: no HFiles found (expected FAMILY/HFILE under the job output)", job);
    char idir[PATH_MAX];
    if ((size_t)snprintf(idir, sizeof idir, "%s/%s", job, BULKLOAD_INDEX_DIR) >= sizeof idir)
        return status_set(err, KILN_INVALID, "%s: path too long", job);
    char **all = NULL, **names = NULL;
    size_t nall = 0, n = 0;
    kiln_err e2;
    status_clear(&e2);
    st = env_list_dir(idir, &all, &nall, &e2);
    if (st == KILN_NOT_FOUND)
        st = KILN_OK;   /* no indexes */
    else if (st != KILN_OK)
        return status_set(err, st, "%s", e2.msg);
    for (size_t i = 0; i < nall; i++) {
        if (all[i][0] == '.')
            continue;
        names = kiln_realloc(names, (n + 1) * sizeof *names);
        names[n++] = (char *)kiln_memdup(all[i], strlen(all[i]) + 1);
    }
    env_list_free(all, nall);
    if (n > STORE_INDEX_MAX)
        st = status_set(err, KILN_INVALID, "%s: %zu indexes (at most %d)", idir, n,
                        STORE_INDEX_MAX);
    if (n > 1)
        qsort(names, n, sizeof *names, bulkload_name_cmp);
    if (st == KILN_OK && n > 0) {
        *ischemas = kiln_calloc(n, sizeof **ischemas);
        r->indexes = kiln_calloc(n, sizeof *r->indexes);
    }
    for (size_t i = 0; i < n && st == KILN_OK; i++) {
        char dir[PATH_MAX];
        if ((size_t)snprintf(dir, sizeof dir, "%s/%s", idir, names[i]) >= sizeof dir) {
            st = status_set(err, KILN_INVALID, "%s/%s: path too long", idir, names[i]);
            break;
        }
        st = bulkload_index_schema(s, dir, names[i], &(*ischemas)[i], err);
        if (st != KILN_OK)
            break;
        snprintf(r->indexes[i], sizeof r->indexes[i], "%s", names[i]);
        r->index_count++;
        st = bulkload_discover_dir(&(*ischemas)[i], dir, i + 1, r, &cap, err);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (st != KILN_OK)
        return st;
    if (r->file_count > 1)
        qsort(r->files, r->file_count, sizeof *r->files, bulkload_file_cmp);
    return KILN_OK;
}

/* A salted table's rows carry their bucket byte: refuse a first or last row
 * without it (output of a job that did not salt). */
static kiln_status
bulkload_check_salt(const kiln_schema *s, const bulkload_file *f, const kiln_cell *c,
                    kiln_err *err)
{
    if (s->salt_buckets == 0 || store_salt_key_ok(c->row, c->row_len, s->salt_buckets))
        return KILN_OK;
    kbuf pr = KBUF_INIT;
    cell_to_string_binary(&pr, c->row, c->row_len < 64 ? c->row_len : 64);
    buf_append_u8(&pr, 0);
    kiln_status st = status_set(err, KILN_INVALID,
                                "%s: row '%s' has no valid bucket byte, but table %s is salted "
                                "(salt_buckets=%u): run the job against the salted table",
                                f->path, (char *)pr.data, s->name, s->salt_buckets);
    buf_free(&pr);
    return st;
}

/* ------------------------------------------------------------------ checks */

/* Open, check and map one file. */
static kiln_status
bulkload_check_file(const kiln_schema *s, bulkload_file *f, const bulkload_options *o,
                    hfile_reader **out, uint64_t *fp, kiln_err *err)
{
    hfile_reader *rd;
    kiln_status st = hfile_reader_open(f->path, NULL, &rd, err);
    if (st != KILN_OK)
        return st;
    *out = rd;
    f->entries = hfile_reader_entry_count(rd);
    const hfile_trailer *tr = hfile_reader_trailer(rd);
    kslice fk = hfile_reader_first_key(rd), lk = hfile_reader_last_key(rd);
    /* The fingerprint covers what identifies this output: names, sizes, the
     * trailer's layout fields, the key range and the creation time. */
    const char *rel = f->path + strlen(f->path);
    int slashes = 0;
    /* FAMILY/FILE, or _index/NAME/FAMILY/FILE for an index's file */
    while (rel > f->path && slashes < (f->table > 0 ? 4 : 2)) {
        rel--;
        if (*rel == '/')
            slashes++;
    }
    *fp = store_rec_fnv64(*fp, rel, strlen(rel) + 1);
    uint64_t nums[5] = {f->size, f->entries, tr->load_on_open_data_offset, tr->file_info_offset,
                        tr->total_uncompressed_bytes};
    *fp = store_rec_fnv64(*fp, nums, sizeof nums);
    *fp = store_rec_fnv64(*fp, fk.p, fk.n);
    *fp = store_rec_fnv64(*fp, lk.p, lk.n);
    kslice ct;
    if (hfile_fileinfo_get(hfile_reader_fileinfo(rd), HFILE_FI_CREATE_TIME, &ct))
        *fp = store_rec_fnv64(*fp, ct.p, ct.n);

    if (o->verify && (st = hfile_reader_check(rd, NULL, err)) != KILN_OK)
        return st;
    if (f->entries == 0 || fk.n == 0) {
        f->action = BULKLOAD_SKIP_EMPTY;
        return KILN_OK;
    }
    kiln_cell first, last;
    if ((st = cell_key_decode(fk.p, fk.n, &first, err)) != KILN_OK ||
        (st = cell_key_decode(lk.p, lk.n, &last, err)) != KILN_OK)
        return status_set(err, KILN_CORRUPTION, "%s: bad first or last key", f->path);
    if (cell_key_compare(fk.p, fk.n, lk.p, lk.n) > 0)
        return status_set(err, KILN_CORRUPTION,
                          "%s: keys out of order: the first key sorts after the last", f->path);
    kslice fam = kslice_str(f->family);
    if (!kslice_eq(kslice_make(first.family, first.family_len), fam) ||
        !kslice_eq(kslice_make(last.family, last.family_len), fam)) {
        const kiln_cell *bad =
            kslice_eq(kslice_make(first.family, first.family_len), fam) ? &last : &first;
        return status_set(err, KILN_CORRUPTION,
                          "%s: holds cells of family '%.*s' but sits in directory '%s'", f->path,
                          (int)bad->family_len, (const char *)bad->family, f->family);
    }
    if ((st = bulkload_check_salt(s, f, &first, err)) != KILN_OK ||
        (st = bulkload_check_salt(s, f, &last, err)) != KILN_OK)
        return st;
    f->region_first = bulkload_region_of(s, first.row, first.row_len);
    f->region_last = bulkload_region_of(s, last.row, last.row_len);
    if (f->region_first != f->region_last) {
        if (o->no_split) {
            const kbuf *b = &s->splits[f->region_first];
            kbuf pr = KBUF_INIT;
            cell_to_string_binary(&pr, b->data, b->len);
            buf_append_u8(&pr, 0);
            st = status_set(err, KILN_INVALID,
                            "%s: rows straddle the boundary '%s' of table %s (regions %zu..%zu); "
                            "rerun the job with the table's split keys, or load without "
                            "--no-split",
                            f->path, (char *)pr.data, s->name, f->region_first, f->region_last);
            buf_free(&pr);
            return st;
        }
        f->action = BULKLOAD_SPLIT;
    } else {
        f->action = o->move ? BULKLOAD_MOVE : BULKLOAD_COPY;
    }
    return KILN_OK;
}

/* ------------------------------------------------------------------ staging */

static kiln_status
bulkload_copy(const char *src, const char *dst, kiln_err *err)
{
    env_file *in, *out;
    kiln_status st = env_open_read(src, &in, err);
    if (st != KILN_OK)
        return st;
    if ((st = env_create(dst, 1, &out, err)) != KILN_OK) {
        env_close(in, NULL);
        return st;
    }
    st = env_copy_range(in, 0, out, env_file_size(in), err);
    if (st == KILN_OK)
        st = env_sync(out, err);
    kiln_status c = env_close(out, err);
    if (st == KILN_OK)
        st = c;
    env_close(in, NULL);
    return st;
}

/* Give the store its own copy of src at dst: a reflink (the file system
 * shares the blocks copy-on-write) where the file system can, else a copy.
 * Never a hard link here: a job file rewritten in place (O_TRUNC) would
 * change a published version under its readers. A move (bulkload_move_one)
 * links, and is safe because it removes the job's name after publishing. */
static kiln_status
bulkload_stage_one(const char *src, const char *dst, bulkload_action *action, kiln_err *err)
{
    env_file *in, *out;
    kiln_status st = env_open_read(src, &in, err);
    if (st != KILN_OK)
        return st;
    if ((st = env_create(dst, 1, &out, err)) != KILN_OK) {
        env_close(in, NULL);
        return st;
    }
    int cloned;
    st = env_clone(in, out, &cloned, err);
    env_close(in, NULL);
    if (st == KILN_OK && cloned) {
        *action = BULKLOAD_LINK;
        st = env_sync(out, err);
        kiln_status c = env_close(out, err);
        return st != KILN_OK ? st : c;
    }
    env_close(out, NULL);
    if (st != KILN_OK)
        return st;
    if ((st = env_unlink(dst, err)) != KILN_OK)
        return st;
    *action = BULKLOAD_COPY;
    return bulkload_copy(src, dst, err);
}

/* Errors of link(2) that say this file system pair cannot share an inode
 * (not that something is wrong): the move copies instead. */
static int
bulkload_link_unsupported(int e)
{
    return e == EXDEV || e == EPERM || e == EOPNOTSUPP || e == ENOTSUP || e == EMLINK ||
           e == ENOSYS;
}

/* Hard-link src at dst and make its data durable: open the new name and
 * fsync it (cheap when the job already synced it; the directory entry is
 * synced with files/ by the caller). *linked = 0, KILN_OK and nothing
 * changed when the link is not possible here (bulkload_link_unsupported). */
static kiln_status
bulkload_move_one(const char *src, const char *dst, int *linked, kiln_err *err)
{
    kiln_err e2;
    status_clear(&e2);
    *linked = 0;
    kiln_status st = env_link(src, dst, &e2);
    if (st != KILN_OK) {
        if (bulkload_link_unsupported(e2.sys_errno))
            return KILN_OK;
        if (err != NULL && err->code == KILN_OK)
            *err = e2;
        return st;
    }
    *linked = 1;
    env_file *f;
    if ((st = env_open_read(dst, &f, err)) != KILN_OK)
        return st;
    st = env_sync(f, err);
    env_close(f, NULL);
    return st;
}

/* ------------------------------------------------------------------ move record */

/* Write JOB/_MOVED (moved.h) atomically. */
static kiln_status
bulkload_write_moved(const char *job, const char *table, uint64_t version, uint64_t fp,
                     kiln_err *err)
{
    char p[PATH_MAX], text[MOVED_RECORD_MAX + 1];
    if ((size_t)snprintf(p, sizeof p, "%s/%s", job, BULKLOAD_MOVED_FILE) >= sizeof p)
        return status_set(err, KILN_INVALID, "%s: path too long", job);
    moved_record r = {.version = version, .fingerprint = fp};
    snprintf(r.table, sizeof r.table, "%s", table);
    size_t n = moved_record_format(&r, text, sizeof text);
    if (n == 0)
        return status_set(err, KILN_INVALID, "%s: cannot record table name '%s'", p, table);
    return env_write_file_atomic(p, text, n, err);
}

/* Read JOB/_MOVED: *found = 0 when absent. KILN_CORRUPTION (naming the file
 * and line) when it is not a record. */
static kiln_status
bulkload_read_moved(const char *job, int *found, char *table, size_t table_cap,
                    uint64_t *version, uint64_t *fp, kiln_err *err)
{
    char p[PATH_MAX];
    *found = 0;
    if ((size_t)snprintf(p, sizeof p, "%s/%s", job, BULKLOAD_MOVED_FILE) >= sizeof p)
        return status_set(err, KILN_INVALID, "%s: path too long", job);
    env_stat_info si;
    kiln_err e2;
    status_clear(&e2);
    kiln_status st = env_stat(p, &si, &e2);
    if (st == KILN_NOT_FOUND)
        return KILN_OK;
    if (st == KILN_OK && si.size > MOVED_RECORD_MAX)
        return status_set(err, KILN_CORRUPTION, "%s: %llu bytes, longer than any move record",
                          p, (unsigned long long)si.size);
    kbuf b = KBUF_INIT;
    if (st == KILN_OK)
        st = env_read_file(p, &b, &e2);
    if (st != KILN_OK) {
        buf_free(&b);
        return status_set(err, st, "%s", e2.msg);
    }
    moved_record r;
    st = moved_record_parse(p, b.data, b.len, &r, err);
    buf_free(&b);
    if (st != KILN_OK)
        return st;
    if (strlen(r.table) >= table_cap)
        return status_set(err, KILN_CORRUPTION, "%s: table name too long", p);
    memcpy(table, r.table, strlen(r.table) + 1);
    *version = r.version;
    *fp = r.fingerprint;
    *found = 1;
    return KILN_OK;
}

/* The move's last step: remove every HFile name of the job output (names
 * already gone are fine), then fsync the directories that held them. */
static kiln_status
bulkload_remove_sources(kiln_table *t, bulkload_result *r, kiln_err *err)
{
    kiln_status st = KILN_OK;
    char dir[PATH_MAX] = "";
    for (size_t i = 0; i < r->file_count; i++) {
        const char *path = r->files[i].path;
        kiln_err e2;
        status_clear(&e2);
        kiln_status s2 = env_unlink(path, &e2);
        if (s2 == KILN_OK)
            r->sources_removed++;
        else if (s2 != KILN_NOT_FOUND)
            return status_set(err, s2, "%s", e2.msg);
        table_step(t, "source removed %zu", i);
        const char *slash = strrchr(path, '/');
        size_t dl = slash != NULL ? (size_t)(slash - path) : 0;
        /* Files are in path order: each directory's names are consecutive. */
        if (dl > 0 && dl < sizeof dir && (strncmp(dir, path, dl) != 0 || dir[dl] != '\0')) {
            if (dir[0] != '\0' && (st = env_sync_dir(dir, err)) != KILN_OK)
                return st;
            memcpy(dir, path, dl);
            dir[dl] = '\0';
        }
    }
    if (dir[0] != '\0')
        st = env_sync_dir(dir, err);
    return st;
}

/* Finish a move of output already loaded as `version`: record it (unless
 * the record is there), then remove the job's names. */
static kiln_status
bulkload_finish_move(kiln_table *t, const char *job, int recorded, uint64_t version,
                     uint64_t fp, bulkload_result *r, kiln_err *err)
{
    kiln_status st = KILN_OK;
    if (!recorded) {
        if ((st = bulkload_write_moved(job, table_schema(t)->name, version, fp, err)) != KILN_OK)
            return st;
        table_step(t, "move marked");
    }
    r->moved_in = version;
    return bulkload_remove_sources(t, r, err);
}

/* ------------------------------------------------------------------ run */

typedef struct bulkload_ctx {
    kiln_table *t;
    hfile_reader **readers;
    size_t nreaders;
    kiln_schema *ischemas;   /* the job's index tables (result indexes[]) */
    size_t nischemas;
    uint64_t version;        /* assigned under the lock; 0 before */
    int published;
} bulkload_ctx;

static void
bulkload_ctx_free(bulkload_ctx *c)
{
    for (size_t i = 0; i < c->nreaders; i++)
        hfile_reader_close(c->readers[i]);
    free(c->readers);
    for (size_t i = 0; i < c->nischemas; i++)
        schema_free(&c->ischemas[i]);
    free(c->ischemas);
    table_close(c->t);
}

/* The schema a file of the output is checked and mapped against. */
static const kiln_schema *
bulkload_file_schema(const bulkload_ctx *c, const bulkload_file *f)
{
    return f->table == 0 ? table_schema(c->t) : &c->ischemas[f->table - 1];
}

/* Stage every file of r into version c->version of the store and add them to
 * their table in m (the table, or the index table of the same name). */
static kiln_status
bulkload_stage(bulkload_ctx *c, bulkload_result *r, manifest *m, kiln_err *err)
{
    uint32_t seq = 0;
    kiln_status st = KILN_OK;
    char *touched = kiln_calloc(m->tables[0].region_count, 1);
    for (size_t i = 0; i < r->file_count && st == KILN_OK; i++) {
        bulkload_file *f = &r->files[i];
        if (f->action == BULKLOAD_SKIP_EMPTY) {
            r->skipped++;
            continue;
        }
        r->bytes += f->size;
        r->cells += f->entries;
        const kiln_schema *s = bulkload_file_schema(c, f);
        manifest_table *mt = manifest_find_table(m, s->name);
        if (mt == NULL) {
            st = status_set(err, KILN_INTERNAL, "table %s: no manifest entry for %s",
                            table_name(c->t), s->name);
            break;
        }
        const schema_family *fam =
            schema_find_family(s, (const uint8_t *)f->family, strlen(f->family));
        table_step(c->t, "staging %zu", i);
        if (f->action == BULKLOAD_SPLIT) {
            st = bulkload_split_file(c->t, c->readers[i], fam, f->region_first, f->region_last,
                                     c->version, &seq, mt, &f->pieces, err);
            if (st == KILN_OK)
                table_step(c->t, "staged %zu", i);
            r->split++;
            r->pieces += f->pieces;
            for (size_t g = f->region_first; g <= f->region_last && f->table == 0; g++)
                touched[g] = 1;
            continue;
        }
        manifest_file mf;
        memset(&mf, 0, sizeof mf);
        snprintf(mf.family, sizeof mf.family, "%s", f->family);
        table_file_name(c->version, seq++, mf.name);
        mf.size = f->size;
        mf.seq = c->version;
        mf.entries = f->entries;
        char dst[PATH_MAX];
        table_file_path(c->t, mf.name, dst, sizeof dst);
        if (f->action == BULKLOAD_MOVE) {
            int linked;
            if ((st = bulkload_move_one(f->path, dst, &linked, err)) != KILN_OK)
                break;
            if (!linked) {
                f->move_fallback = 1;
                r->move_fallbacks++;
                st = bulkload_stage_one(f->path, dst, &f->action, err);
            }
        } else {
            st = bulkload_stage_one(f->path, dst, &f->action, err);
        }
        if (st != KILN_OK)
            break;
        env_stat_info sb;
        if ((st = env_stat(dst, &sb, err)) != KILN_OK)
            break;
        if (sb.size != f->size) {
            st = status_set(err, KILN_IO, "%s: changed while being loaded (size %llu, was %llu)",
                            f->path, (unsigned long long)sb.size,
                            (unsigned long long)f->size);
            break;
        }
        if (f->action == BULKLOAD_MOVE)
            r->moved++;
        else if (f->action == BULKLOAD_LINK)
            r->linked++;
        else
            r->copied++;
        manifest_region_add_file(&mt->regions[f->region_first], &mf);
        if (f->table == 0)
            touched[f->region_first] = 1;
        table_step(c->t, "staged %zu", i);
    }
    for (size_t g = 0; g < m->tables[0].region_count; g++)
        r->regions_loaded += touched[g];
    free(touched);
    if (st != KILN_OK)
        return st;
    char fdir[PATH_MAX];
    if ((size_t)snprintf(fdir, sizeof fdir, "%s/%s", table_dir(c->t), TABLE_FILES_DIR) >=
        sizeof fdir)
        return status_set(err, KILN_INVALID, "%s: path too long", table_dir(c->t));
    kiln_status st2 = env_sync_dir(fdir, err);
    if (st2 == KILN_OK)
        table_step(c->t, "files synced");
    return st2;
}

/* An append must bring the indexes the current version has, no more and no
 * fewer, over the same columns: otherwise an index would miss rows. */
static kiln_status
bulkload_check_append_indexes(const bulkload_ctx *c, const manifest *cur, kiln_err *err)
{
    const kiln_schema *s = table_schema(c->t);
    kiln_status st = KILN_OK;
    if (cur->table_count - 1 != c->nischemas) {
        kbuf have = KBUF_INIT;
        for (size_t i = 1; i < cur->table_count; i++) {
            const char *n = schema_get_prop(&cur->tables[i].schema, STORE_INDEX_PROP_NAME);
            if (i > 1)
                buf_append(&have, ", ", 2);
            buf_append(&have, n ? n : "?", strlen(n ? n : "?"));
        }
        if (have.len == 0)
            buf_append(&have, "none", 4);
        buf_append_u8(&have, 0);
        st = status_set(err, KILN_INVALID,
                        "table %s: an append must build the indexes of version %llu (%s); the "
                        "job output has %zu index(es)",
                        s->name, (unsigned long long)cur->version, (const char *)have.data,
                        c->nischemas);
        buf_free(&have);
        return st;
    }
    for (size_t i = 0; i < c->nischemas && st == KILN_OK; i++) {
        const kiln_schema *js = &c->ischemas[i];
        manifest_table *mt = manifest_find_table(cur, js->name);
        store_index_def a, b;
        store_index_def_init(&a);
        store_index_def_init(&b);
        int same = mt != NULL &&
                   store_index_def_from_schema(s, &mt->schema, &a, NULL) == KILN_OK &&
                   store_index_def_from_schema(s, js, &b, NULL) == KILN_OK &&
                   store_index_def_equal(&a, &b) &&
                   mt->schema.salt_buckets == js->salt_buckets &&
                   mt->schema.split_count == js->split_count;
        for (size_t k = 0; same && k < js->split_count; k++)
            same = kslice_eq(buf_slice(&mt->schema.splits[k]), buf_slice(&js->splits[k]));
        if (!same)
            st = status_set(err, KILN_INVALID,
                            "table %s: index table %s of the job output differs from version "
                            "%llu's (columns, salt or regions); reload with --replace",
                            s->name, js->name, (unsigned long long)cur->version);
        store_index_def_free(&a);
        store_index_def_free(&b);
    }
    return st;
}

/* A replace keeps what the speed layer flushed (speed.h): online writes
 * are not the batch view's to replace. Its files, flushed sequence and
 * covering rules carry over (a covering load then retires the writes it
 * covers, bulkload_options.covers). */
static void
bulkload_keep_speed(const manifest *cur, manifest *m)
{
    m->flushed_seq = cur->flushed_seq;
    for (size_t i = 0; i < cur->cover_count; i++)
        manifest_add_cover(m, cur->covers[i].version, cur->covers[i].ts);
    manifest_keep_speed(cur, m);
}

/* Files were routed to regions by the schema file's split keys; an append
 * adds them to the current version's regions by index, so both must agree.
 * They differ after a rollback across a split, or a crash between a split's
 * publish and its schema file rewrite (store_split.h). */
static kiln_status
bulkload_check_append_regions(const bulkload_ctx *c, const manifest *cur, kiln_err *err)
{
    const kiln_schema *s = table_schema(c->t);
    const kiln_schema *ms = &cur->tables[0].schema;
    int same = s->split_count == ms->split_count;
    for (size_t k = 0; same && k < s->split_count; k++)
        same = kslice_eq(buf_slice(&s->splits[k]), buf_slice(&ms->splits[k]));
    if (same)
        return KILN_OK;
    return status_set(err, KILN_INVALID,
                      "table %s: its schema file has %zu region(s), version %llu has %zu (a "
                      "split or a rollback since); split again or reload with --replace",
                      s->name, s->split_count + 1, (unsigned long long)cur->version,
                      ms->split_count + 1);
}

/* The manifest of the new version: the staged files alone (replace) or added
 * to the current version's (append). */
static void
bulkload_start_manifest(const bulkload_ctx *c, const bulkload_options *o, const manifest *cur,
                        int have_cur, const char *job, uint64_t fingerprint, manifest *m)
{
    if (o->mode == BULKLOAD_APPEND && have_cur) {
        manifest_copy(m, cur);
        m->kind = MANIFEST_KIND_APPEND;
    } else {
        manifest_init(m);
        manifest_add_table(m, table_schema(c->t));
        for (size_t i = 0; i < c->nischemas; i++)
            manifest_add_table(m, &c->ischemas[i]);
        m->kind = o->mode == BULKLOAD_APPEND ? MANIFEST_KIND_APPEND : MANIFEST_KIND_REPLACE;
        if (have_cur)
            bulkload_keep_speed(cur, m);
    }
    m->version = c->version;
    if (o->covers)
        manifest_add_cover(m, c->version, o->covers_until);
    m->parent = have_cur ? cur->version : 0;
    m->created_ms = table_now_ms();
    manifest_add_source(m, fingerprint, c->version, m->created_ms, job);
}

kiln_status
bulkload_run(const char *data_dir, const char *table, const char *job_dir,
             const bulkload_options *o, bulkload_result *r, kiln_err *err)
{
    double t0 = bulkload_now_ms();
    memset(r, 0, sizeof *r);
    status_clear(&r->gc_err);
    bulkload_ctx c;
    memset(&c, 0, sizeof c);
    kiln_status st = table_open(data_dir, table, &c.t, err);
    if (st != KILN_OK)
        return st;
    table_set_step_hook(c.t, o->step, o->step_arg);
    const kiln_schema *s = table_schema(c.t);

    char job[PATH_MAX], p[PATH_MAX];
    if (realpath(job_dir, job) == NULL) {
        st = status_set_errno(err, errno, "%s: job output directory", job_dir);
        goto out;
    }
    if ((size_t)snprintf(p, sizeof p, "%s/%s", job, BULKLOAD_SUCCESS_FILE) >= sizeof p ||
        !env_exists(p)) {
        st = status_set(err, KILN_NOT_FOUND,
                        "%s: no %s marker: the job did not finish (or is still running); "
                        "refusing to load it into table %s",
                        job_dir, BULKLOAD_SUCCESS_FILE, s->name);
        goto out;
    }
    /* Output an earlier load moved: its HFiles are (partly) gone, so it is
     * known by the record, not by what is left of it. */
    int moved = 0;
    uint64_t moved_fp = 0;
    char moved_table[SCHEMA_NAME_MAX + 1];
    st = bulkload_read_moved(job, &moved, moved_table, sizeof moved_table, &r->moved_in,
                             &moved_fp, err);
    if (st != KILN_OK)
        goto out;
    if (moved && strcmp(moved_table, s->name) != 0) {
        st = status_set(err, KILN_INVALID,
                        "%s: its HFiles were moved into table %s (version %llu) by an earlier "
                        "load --move (%s/%s); it cannot be loaded into %s",
                        job_dir, moved_table, (unsigned long long)r->moved_in, job_dir,
                        BULKLOAD_MOVED_FILE, s->name);
        goto out;
    }
    st = bulkload_discover(s, job, moved, r, &c.ischemas, err);
    c.nischemas = r->index_count;
    if (st != KILN_OK)
        goto out;

    /* Check every file before anything is locked or written. */
    uint64_t fp = STORE_REC_FNV64_INIT;
    c.readers = kiln_calloc(r->file_count, sizeof *c.readers);
    c.nreaders = r->file_count;
    for (size_t i = 0; i < r->file_count; i++) {
        st = bulkload_check_file(bulkload_file_schema(&c, &r->files[i]), &r->files[i], o,
                                 &c.readers[i], &fp, err);
        if (st != KILN_OK)
            goto out;
    }
    if ((size_t)snprintf(p, sizeof p, "%s/%s", job, BULKLOAD_JOB_REPORT) < sizeof p &&
        env_exists(p)) {
        kbuf rep = KBUF_INIT;
        if (env_read_file(p, &rep, NULL) == KILN_OK)
            fp = store_rec_fnv64(fp, rep.data, rep.len);
        buf_free(&rep);
    }
    if (moved)
        fp = moved_fp;
    r->fingerprint = fp;
    r->check_ms = bulkload_now_ms() - t0;
    table_step(c.t, "checked");

    if (!o->dry_run && (st = table_lock(c.t, o->lock_wait_ms, err)) != KILN_OK)
        goto out;
    if (!o->dry_run)
        table_step(c.t, "locked");
    manifest cur;
    kiln_err e2;
    status_clear(&e2);
    manifest_pointer ptr;
    int have_cur = 0;
    st = table_current(c.t, &ptr, &e2);
    if (st == KILN_OK) {
        if ((st = table_read_current(c.t, &cur, &e2)) != KILN_OK) {
            st = status_set(err, e2.code, "%s", e2.msg);
            goto out;
        }
        have_cur = 1;
        r->parent = cur.version;
    } else if (st != KILN_NOT_FOUND) {
        st = status_set(err, e2.code, "%s", e2.msg);
        goto out;
    }
    st = KILN_OK;
    if (have_cur && o->mode == BULKLOAD_APPEND &&
        ((st = bulkload_check_append_regions(&c, &cur, err)) != KILN_OK ||
         (st = bulkload_check_append_indexes(&c, &cur, err)) != KILN_OK)) {
        manifest_free(&cur);
        goto out;
    }
    for (size_t i = 0; have_cur && i < cur.source_count; i++) {
        if (cur.sources[i].fingerprint == fp) {
            r->already_loaded = 1;
            r->loaded_in = cur.sources[i].version;
        }
    }
    if (moved && !r->already_loaded) {
        st = status_set(err, KILN_INVALID,
                        "%s: its HFiles were moved into %s as version %llu by an earlier "
                        "load --move (%s/%s), and that load is not part of the current "
                        "version %llu (rolled back or replaced since); the output's HFiles are "
                        "gone: roll back with kiln rollback, or rerun the job",
                        job_dir, s->name, (unsigned long long)r->moved_in, job_dir,
                        BULKLOAD_MOVED_FILE, (unsigned long long)r->parent);
        if (have_cur)
            manifest_free(&cur);
        goto out;
    }
    if (o->dry_run || r->already_loaded) {
        for (size_t i = 0; i < r->file_count; i++) {
            const bulkload_file *f = &r->files[i];
            if (f->action == BULKLOAD_SKIP_EMPTY) {
                r->skipped++;
                continue;
            }
            r->bytes += f->size;
            r->cells += f->entries;
        }
        if (have_cur)
            manifest_free(&cur);
        /* A move that published but was cut short before or while removing
         * the job's names: finish it. */
        if (!o->dry_run && o->move)
            st = bulkload_finish_move(c.t, job, moved, r->loaded_in, fp, r, err);
        goto out;
    }

    double t1 = bulkload_now_ms();
    if ((st = table_next_version(c.t, &c.version, err)) != KILN_OK) {
        if (have_cur)
            manifest_free(&cur);
        goto out;
    }
    manifest m;
    bulkload_start_manifest(&c, o, &cur, have_cur, job, fp, &m);
    if (have_cur)
        manifest_free(&cur);
    st = bulkload_stage(&c, r, &m, err);
    r->stage_ms = bulkload_now_ms() - t1;
    if (st == KILN_OK) {
        double t2 = bulkload_now_ms();
        st = table_publish(c.t, &m, &c.published, err);
        r->publish_ms = bulkload_now_ms() - t2;
    }
    manifest_free(&m);
    if (!c.published) {
        table_abort_version(c.t, c.version);
        goto out;
    }
    r->version = c.version;
    if (st != KILN_OK) {
        r->unconfirmed = 1;   /* published, durability not confirmed: no GC either */
        goto out;
    }
    table_step(c.t, "published");
    if (o->move)
        bulkload_finish_move(c.t, job, 0, c.version, fp, r, &r->move_err);
    double t3 = bulkload_now_ms();
    table_gc(c.t, &r->gc, &r->gc_err);
    r->gc_ms = bulkload_now_ms() - t3;
    table_step(c.t, "collected");
out:
    bulkload_ctx_free(&c);
    r->total_ms = bulkload_now_ms() - t0;
    return st;
}
