/* export.c -- HBase's Export: the cells of one version of a loaded table
 * written out as HFiles, for `import` (or any HFile reader) to take back.
 *
 *   export TABLE OUTPUT [versions [starttime [endtime]]]          (HBase's form)
 *   export --input-table NAME[@VERSION] --output DIR [selection options] [--raw]
 *
 *   OUTPUT/part-r-NNNNN   one HFile v3 per reduce partition holding the cells
 *                         of every family, user row keys (no salt byte), in
 *                         HBase order
 *   OUTPUT/_export.json   the manifest: source table and version, its families
 *                         with their settings, the selection, row and cell counts
 *
 * Map reads each row through table input (one pinned version, table_input.h)
 * and emits one record per cell: the cellkey encoding (cellkey.h) and the
 * value. A raw row may hold identical keys from several files, newest first:
 * only the first is kept, as a read keeps it. Partitions are in total order
 * by row: while the engine samples split keys, map emits a row's lower bound
 * alone, so every split key is a row boundary, a row never spans two files
 * and the files in name order hold the rows in order. By default there are
 * as many partitions as the table has regions (HBase's Export writes one
 * file per region), whatever the rank count, so the files are the same bytes
 * at any -np for a fixed -D kiln.job.time.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobs/cellkey.h"
#include "jobs/jobs_args.h"
#include "jobs/table_input.h"
#include "mapreduce/mr_counters.h"
#include "storage/base/coding.h"
#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/schema.h"

#define EXPORT_GROUP "Export"
#define EXPORT_MANIFEST "_export.json"
#define EXPORT_FILE_PREFIX "part-r-"
#define EXPORT_FORMAT_VERSION 1
#define EXPORT_RAW_CONF "hbase.mapreduce.include.deleted.rows"   /* HBase Export's */

typedef struct export_state {
    table_input_spec spec;        /* as given (kept for the manifest) */
    char table[SCHEMA_NAME_MAX + 1];
    kiln_schema schema;           /* the pinned version's (from prepare), else setup's */
    kbuf regions;                 /* the pinned version's region starts after the first:
                                     [be32 length][row]... (stored keys) */
    uint64_t version;
    hfile_writer_options opt;
    int c_rows;
    int c_cells;
    int c_markers;
    int c_dups;
    kbuf key;
} export_state;

static void
export_state_free(void *p)
{
    export_state *st = p;
    if (st == NULL)
        return;
    table_input_spec_free(&st->spec);
    schema_free(&st->schema);
    buf_free(&st->regions);
    buf_free(&st->key);
    free(st);
}

/* ------------------------------------------------------------------ map, reduce */

static int
export_same_key(const kiln_cell *a, const kiln_cell *b)
{
    return a->ts == b->ts && a->type == b->type && a->family_len == b->family_len &&
           a->qualifier_len == b->qualifier_len &&
           memcmp(a->family, b->family, a->family_len) == 0 &&
           memcmp(a->qualifier, b->qualifier, a->qualifier_len) == 0;
}

static kiln_status
export_map(mr_task *t, kslice record, kiln_err *err)
{
    (void)record;
    export_state *st = mr_task_state(t);
    const store_row *row = table_input_row(t);
    if (row == NULL)
        return status_set(err, KILN_INTERNAL, "export: a record that is not a table row");
    if (row->count == 0)
        return KILN_OK;
    if (mr_task_sampling(t)) {
        /* the row's lower bound: split keys fall between rows */
        buf_reset(&st->key);
        cellkey_append_row(&st->key, row->row.p, row->row.n);
        return mr_task_emit(t, buf_slice(&st->key), kslice_make("", 0), err);
    }
    uint64_t cells = 0, markers = 0, dups = 0;
    const kiln_cell *prev = NULL;
    for (size_t i = 0; i < row->count; i++) {
        kiln_cell c = row->cells[i];
        c.row = row->row.p;
        c.row_len = (uint32_t)row->row.n;
        /* identical keys come newest first (raw rows): the first wins */
        if (prev != NULL && export_same_key(prev, &c)) {
            dups++;
            continue;
        }
        prev = &row->cells[i];
        buf_reset(&st->key);
        cellkey_append(&st->key, &c);
        kiln_status s = mr_task_emit(t, buf_slice(&st->key), kslice_make(c.value, c.value_len),
                                     err);
        if (s != KILN_OK)
            return s;
        cells++;
        markers += c.type != CELL_TYPE_PUT;
    }
    mr_task_count(t, st->c_rows, 1);
    mr_task_count(t, st->c_cells, cells);
    mr_task_count(t, st->c_markers, markers);
    mr_task_count(t, st->c_dups, dups);
    return KILN_OK;
}

/* Every key is one cell of one row, which one map call gives: one value. */
static kiln_status
export_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    export_state *st = mr_task_state(t);
    kslice v;
    uint64_t n = 0;
    kiln_status s = KILN_OK;
    while (mr_task_next_value(values, &v)) {
        if (n++ == 0)
            s = mr_task_emit(t, key, v, err);
        if (s != KILN_OK)
            return s;
    }
    if (n > 1)
        mr_task_count(t, st->c_dups, n - 1);
    return KILN_OK;
}

/* ------------------------------------------------------------------ output format */

typedef struct export_part {
    export_state *st;
    char path[PATH_MAX];
    hfile_writer *w;             /* NULL until the partition's first cell */
    kbuf scratch;
} export_part;

static kiln_status
export_out_open(void *arg, const char *dir, uint32_t partition, void **writer, kiln_err *err)
{
    export_part *p = kiln_calloc(1, sizeof *p);
    p->st = arg;
    buf_init(&p->scratch);
    if (snprintf(p->path, sizeof p->path, "%s/" EXPORT_FILE_PREFIX "%05u", dir, partition) >=
        (int)sizeof p->path) {
        free(p);
        return status_set(err, KILN_INVALID, "%s: path too long", dir);
    }
    *writer = p;
    return KILN_OK;
}

static kiln_status
export_out_write(void *writer, kslice key, kslice value, kiln_err *err)
{
    export_part *p = writer;
    kiln_cell c;
    memset(&c, 0, sizeof c);
    kiln_status s = cellkey_decode(key, &p->scratch, &c, err);
    if (s != KILN_OK)
        return s;
    if (value.n > UINT32_MAX)
        return status_set(err, KILN_INVALID, "%s: a cell value of %zu bytes", p->path, value.n);
    c.value = value.p;
    c.value_len = (uint32_t)value.n;
    if (p->w == NULL) {
        s = hfile_writer_open(p->path, &p->st->opt, &p->w, err);
        if (s != KILN_OK)
            return s;
    }
    return hfile_writer_add(p->w, &c, err);
}

static void
export_part_free(export_part *p)
{
    buf_free(&p->scratch);
    free(p);
}

static kiln_status
export_out_close(void *writer, uint64_t *bytes, kiln_err *err)
{
    export_part *p = writer;
    kiln_status s = KILN_OK;
    if (p->w != NULL) {
        hfile_writer_stats hs;
        s = hfile_writer_finish(p->w, &hs, err);
        if (s == KILN_OK)
            *bytes += hs.file_size;
    }
    export_part_free(p);
    return s;
}

static void
export_out_abort(void *writer)
{
    export_part *p = writer;
    if (p == NULL)
        return;
    hfile_writer_abandon(p->w);
    export_part_free(p);
}

/* ------------------------------------------------------------------ the manifest */

static void
export_json_key(kbuf *j, const char *key)
{
    if (j->len > 1)
        buf_append_u8(j, ',');
    mr_counters_json_string(j, key, strlen(key));
    buf_append_u8(j, ':');
}

static void
export_json_str(kbuf *j, const char *key, const char *s, size_t n)
{
    export_json_key(j, key);
    mr_counters_json_string(j, s, n);
}

/* A row or qualifier in printable form, as a JSON string. */
static void
export_json_bytes(kbuf *j, const char *key, kslice b)
{
    kbuf tmp = KBUF_INIT;
    cell_to_string_binary(&tmp, b.p, b.n);
    export_json_str(j, key, (const char *)tmp.data, tmp.len);
    buf_free(&tmp);
}

static void
export_json_num(kbuf *j, const char *key, int64_t v)
{
    char num[32];
    int n = snprintf(num, sizeof num, "%" PRId64, v);
    export_json_key(j, key);
    buf_append(j, num, (size_t)n);
}

static void
export_json_lit(kbuf *j, const char *key, const char *lit)
{
    export_json_key(j, key);
    buf_append(j, lit, strlen(lit));
}

static void
export_lower(char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z')
            *s = (char)(*s - 'A' + 'a');
}

static void
export_json_families(kbuf *j, const kiln_schema *sc)
{
    export_json_key(j, "families");
    buf_append_u8(j, '[');
    for (size_t i = 0; i < sc->family_count; i++) {
        const schema_family *f = &sc->families[i];
        char codec[32], bloom[32], ttl[32], spec[SCHEMA_FAMILY_NAME_MAX + 160];
        snprintf(codec, sizeof codec, "%s", compress_codec_name(f->codec));
        snprintf(bloom, sizeof bloom, "%s", bloom_type_name(f->bloom));
        export_lower(codec);
        export_lower(bloom);
        if (f->ttl_s == SCHEMA_TTL_FOREVER)
            snprintf(ttl, sizeof ttl, "forever");
        else
            snprintf(ttl, sizeof ttl, "%" PRId64, f->ttl_s);
        /* what `kiln create --family` takes */
        snprintf(spec, sizeof spec, "%s:versions=%u,ttl=%s,compression=%s,bloom=%s,blocksize=%u",
                 f->name, f->max_versions, ttl, codec, bloom, f->block_size);
        kbuf o = KBUF_INIT;
        buf_append_u8(&o, '{');
        export_json_str(&o, "name", f->name, strlen(f->name));
        export_json_num(&o, "versions", f->max_versions);
        export_json_num(&o, "ttl", f->ttl_s);
        export_json_str(&o, "compression", codec, strlen(codec));
        export_json_str(&o, "bloom", bloom, strlen(bloom));
        export_json_num(&o, "blocksize", f->block_size);
        export_json_str(&o, "spec", spec, strlen(spec));
        buf_append_u8(&o, '}');
        if (i > 0)
            buf_append_u8(j, ',');
        buf_append(j, o.data, o.len);
        buf_free(&o);
    }
    buf_append_u8(j, ']');
}

/* The part files of dir, in name order, as a JSON array. */
static kiln_status
export_json_files(kbuf *j, const char *dir, kiln_err *err)
{
    struct dirent **ents;
    int k = scandir(dir, &ents, NULL, alphasort);
    if (k < 0)
        return status_set(err, KILN_IO, "%s: cannot list: %s", dir, strerror(errno));
    export_json_key(j, "files");
    buf_append_u8(j, '[');
    int first = 1;
    for (int i = 0; i < k; i++) {
        const char *n = ents[i]->d_name;
        if (strncmp(n, EXPORT_FILE_PREFIX, strlen(EXPORT_FILE_PREFIX)) == 0) {
            if (!first)
                buf_append_u8(j, ',');
            mr_counters_json_string(j, n, strlen(n));
            first = 0;
        }
        free(ents[i]);
    }
    free(ents);
    buf_append_u8(j, ']');
    return KILN_OK;
}

static kiln_status
export_out_commit(void *arg, mr_job *job, const char *dir, kiln_err *err)
{
    export_state *st = arg;
    const table_input_spec *sp = &st->spec;
    kbuf j = KBUF_INIT;
    buf_append_u8(&j, '{');
    export_json_str(&j, "format", "kiln-export", strlen("kiln-export"));
    export_json_num(&j, "format_version", EXPORT_FORMAT_VERSION);
    export_json_str(&j, "table", st->schema.name, strlen(st->schema.name));
    export_json_num(&j, "version", (int64_t)st->version);
    export_json_num(&j, "salt_buckets", st->schema.salt_buckets);
    export_json_families(&j, &st->schema);
    export_json_key(&j, "split_keys");
    buf_append_u8(&j, '[');
    for (size_t off = 0, i = 0; off < st->regions.len; i++) {
        uint32_t n = coding_get_be32(st->regions.data + off);
        kbuf tmp = KBUF_INIT;
        cell_to_string_binary(&tmp, st->regions.data + off + 4, n);
        if (i > 0)
            buf_append_u8(&j, ',');
        mr_counters_json_string(&j, (const char *)tmp.data, tmp.len);
        buf_free(&tmp);
        off += 4 + n;
    }
    buf_append_u8(&j, ']');
    export_json_lit(&j, "raw", sp->raw ? "true" : "false");
    export_json_num(&j, "versions", sp->versions ? sp->versions : 1);
    if (sp->ts_min != INT64_MIN)
        export_json_num(&j, "starttime", sp->ts_min);
    else
        export_json_lit(&j, "starttime", "null");
    if (sp->ts_max != INT64_MAX)
        export_json_num(&j, "endtime", sp->ts_max);
    else
        export_json_lit(&j, "endtime", "null");
    export_json_bytes(&j, "start_row", buf_slice(&sp->start));
    export_json_bytes(&j, "stop_row", buf_slice(&sp->stop));
    export_json_bytes(&j, "prefix", buf_slice(&sp->prefix));
    if (sp->columns != NULL)
        export_json_str(&j, "columns", sp->columns, strlen(sp->columns));
    else
        export_json_lit(&j, "columns", "null");
    kiln_status s = export_json_files(&j, dir, err);
    export_json_num(&j, "rows", (int64_t)mr_job_counter_value(job, st->c_rows));
    export_json_num(&j, "cells", (int64_t)mr_job_counter_value(job, st->c_cells));
    export_json_num(&j, "delete_markers", (int64_t)mr_job_counter_value(job, st->c_markers));
    buf_append(&j, "}\n", 2);
    if (s == KILN_OK)
        s = mr_output_write_file(dir, EXPORT_MANIFEST, j.data, j.len, err);
    buf_free(&j);
    return s;
}

static const mr_output_format export_output_format = {
    .name = "export",
    .open = export_out_open,
    .write = export_out_write,
    .close = export_out_close,
    .abort = export_out_abort,
    .commit = export_out_commit,
};

/* ------------------------------------------------------------------ setup */

/* Every rank, once the version is pinned: remember it, its schema and its
 * regions for the manifest (rank 0 writes it). */
static void
export_pinned(void *arg, store_view *v, uint64_t version)
{
    export_state *st = arg;
    st->version = version;
    if (v == NULL)
        return;
    schema_free(&st->schema);
    schema_init(&st->schema);
    schema_copy(&st->schema, store_view_schema(v));
    buf_reset(&st->regions);
    for (size_t i = 1; i < store_view_region_count(v); i++) {
        kslice r = store_view_region_start(v, i);
        buf_append_be32(&st->regions, (uint32_t)r.n);
        buf_append(&st->regions, r.p, r.n);
    }
}

static kiln_status
export_i64(const char *what, const char *v, int64_t lo, int64_t *out, kiln_err *err)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno != 0 || x < lo)
        return status_set(err, KILN_INVALID, "export: %s '%s' is not a number%s", what, v,
                          lo > 0 ? " >= 1" : "");
    *out = x;
    return KILN_OK;
}

/* The HFiles' settings: -D kiln.hfile.compression|bloom|blocksize, else
 * snappy, row, 64 KiB. */
static kiln_status
export_writer_options(mr_job *job, hfile_writer_options *o, kiln_err *err)
{
    mr_conf *conf = mr_job_conf(job);
    hfile_writer_options_init(o);
    o->codec = CODEC_SNAPPY;
    o->create_time_ms = mr_job_time_ms(job);
    const char *codec = mr_conf_get(conf, "kiln.hfile.compression", NULL);
    const char *bloom = mr_conf_get(conf, "kiln.hfile.bloom", NULL);
    if (codec != NULL && (compress_codec_parse(codec, &o->codec) != 0 ||
                          !compress_codec_writable(o->codec)))
        return status_set(err, KILN_INVALID, "kiln.hfile.compression: '%s' cannot be written", codec);
    if (bloom != NULL && bloom_type_parse(bloom, &o->bloom) != 0)
        return status_set(err, KILN_INVALID, "kiln.hfile.bloom: '%s' is not row, rowcol or none",
                          bloom);
    int64_t block;
    kiln_status s = mr_conf_get_long(conf, "kiln.hfile.blocksize", 65536, &block, err);
    if (s != KILN_OK)
        return s;
    if (block < SCHEMA_BLOCK_SIZE_MIN || block > (int64_t)SCHEMA_BLOCK_SIZE_MAX)
        return status_set(err, KILN_INVALID, "kiln.hfile.blocksize: %" PRId64 " is out of range",
                          block);
    o->block_size = (size_t)block;
    return KILN_OK;
}

static kiln_status
export_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    export_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, export_state_free);
    table_input_spec_init(&st->spec);
    schema_init(&st->schema);
    buf_init(&st->regions);
    buf_init(&st->key);
    table_input_spec *spec = &st->spec;
    const char *output = NULL, *data_dir = NULL;
    const char *pos[5];
    int npos = 0, versions_opt = 0, time_opt = 0;
    kiln_status s = KILN_OK;
    for (int i = 1; i < argc && s == KILN_OK; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--versions") == 0 || strncmp(a, "--versions=", 11) == 0)
            versions_opt = 1;
        if (strncmp(a, "--starttime", 11) == 0 || strncmp(a, "--endtime", 9) == 0)
            time_opt = 1;
        if (table_input_arg(spec, argc, argv, &i, &s, err))
            continue;
        if (strcmp(a, "--output") == 0) {
            s = jobs_take_value(argc, argv, &i, &output, err);
        } else if (strcmp(a, "--data") == 0) {
            s = jobs_take_value(argc, argv, &i, &data_dir, err);
        } else if (a[0] == '-' && a[1] != '\0') {
            s = status_set(err, KILN_INVALID, "export: unknown argument '%s'", a);
        } else if (npos == 5) {
            s = status_set(err, KILN_INVALID, "export: too many arguments from '%s' (TABLE OUTPUT "
                           "[versions [starttime [endtime]]])", a);
        } else {
            pos[npos++] = a;
        }
    }
    /* HBase's form: TABLE OUTPUT [versions [starttime [endtime]]] */
    int k = 0;
    if (s == KILN_OK && npos > k && !spec->given)
        s = table_input_set_table(spec, pos[k++], err);
    if (s == KILN_OK && npos > k && output == NULL)
        output = pos[k++];
    if (s == KILN_OK && npos > k) {
        int64_t v;
        if (versions_opt)
            s = status_set(err, KILN_INVALID, "export: versions given twice (--versions and '%s')",
                           pos[k]);
        else if ((s = export_i64("versions", pos[k], 1, &v, err)) == KILN_OK && v > 1000000)
            s = status_set(err, KILN_INVALID, "export: versions %s is not in [1, 1000000]", pos[k]);
        else
            spec->versions = (uint32_t)v;
        k++;
    }
    if (s == KILN_OK && npos > k && time_opt)
        s = status_set(err, KILN_INVALID, "export: the time range given twice (--starttime/"
                       "--endtime and '%s')", pos[k]);
    if (s == KILN_OK && npos > k)
        s = export_i64("starttime", pos[k++], INT64_MIN, &spec->ts_min, err);
    if (s == KILN_OK && npos > k)
        s = export_i64("endtime", pos[k++], INT64_MIN, &spec->ts_max, err);
    if (s == KILN_OK && k < npos)
        s = status_set(err, KILN_INVALID, "export: unexpected argument '%s' (the table and the "
                       "output are given as options)", pos[k]);
    if (s == KILN_OK && !spec->given)
        s = status_set(err, KILN_INVALID, "export: no table given (TABLE OUTPUT, or "
                       "--input-table NAME)");
    if (s == KILN_OK && output == NULL)
        s = status_set(err, KILN_INVALID, "export: no output directory given (TABLE OUTPUT, or "
                       "--output DIR)");
    if (s != KILN_OK)
        return s;
    /* HBase's switch for a raw scan */
    int deleted = 0;
    s = mr_conf_get_bool(mr_job_conf(job), EXPORT_RAW_CONF, 0, &deleted, err);
    if (s != KILN_OK)
        return s;
    if (deleted)
        spec->raw = 1;
    mr_job_set_output(job, output);
    if (data_dir == NULL) {
        const char *e = getenv("KILN_DATA");
        data_dir = e != NULL && *e != '\0' ? e : "kiln-data";
    }
    spec->data_dir = data_dir;
    s = schema_name_canon(spec->table, st->table, err);
    int exists = 0;
    if (s == KILN_OK)
        s = jobs_table_read(job, data_dir, st->table, &st->schema, &exists, err);
    if (s == KILN_OK && !exists)
        s = status_set(err, KILN_NOT_FOUND, "export: table %s does not exist in %s", st->table,
                       data_dir);
    if (s != KILN_OK)
        return s;
    /* Total order by row, one partition per region unless told otherwise. */
    mr_conf *conf = mr_job_conf(job);
    const char *part = mr_conf_get(conf, "kiln.partitioner", "total");
    if (strcmp(part, "total") != 0)
        return status_set(err, KILN_INVALID, "export: kiln.partitioner=%s: export partitions in "
                          "total order by row (leave kiln.partitioner unset)", part);
    mr_conf_set(conf, "kiln.partitioner", "total");
    mr_job_set_reduces(job, (uint32_t)schema_region_count(&st->schema));
    s = export_writer_options(job, &st->opt, err);
    if (s != KILN_OK)
        return s;
    spec->on_pin = export_pinned;
    spec->on_pin_arg = st;
    s = table_input_add(job, spec, NULL, err);
    spec->data_dir = NULL;
    if (s != KILN_OK)
        return s;
    st->c_rows = mr_job_counter(job, EXPORT_GROUP, "Rows");
    st->c_cells = mr_job_counter(job, EXPORT_GROUP, "Cells");
    st->c_markers = mr_job_counter(job, EXPORT_GROUP, "Delete markers");
    st->c_dups = mr_job_counter(job, EXPORT_GROUP, "Identical keys (newest kept)");
    mr_job_set_map(job, export_map);
    mr_job_set_reduce(job, export_reduce);
    mr_job_set_output_format(job, &export_output_format, st);
    return KILN_OK;
}

const mr_job_def export_job = {
    "export",
    "write a loaded table's cells as HFiles with a manifest (HBase Export)",
    "Usage: kiln-mr export TABLE OUTPUT [versions [starttime [endtime]]] [options]\n"
    "       kiln-mr export --input-table NAME[@VERSION] --output DIR [options]\n"
    "\n"
    "Writes the cells of one version of a table (whatever is loaded meanwhile)\n"
    "as HFile v3 files with user row keys (no salt byte), every family in each\n"
    "file, for `kiln-mr import` to write into any table:\n"
    "\n"
    "  OUTPUT/part-r-NNNNN   one HFile per reduce partition; partitions are in\n"
    "                        total order by row, so the files in name order hold\n"
    "                        the rows in order, and a row is in one file\n"
    "  OUTPUT/_export.json   source table and version, its families and their\n"
    "                        settings (each as `kiln create --family` takes it),\n"
    "                        the selection, and the row, cell and delete-marker\n"
    "                        counts\n"
    "\n"
    "By default the cells a read returns: the newest version of each column\n"
    "(versions: up to that many), delete markers applied. --raw writes every\n"
    "stored cell: all versions and the delete markers themselves (identical keys\n"
    "kept once, the newest load's). starttime and endtime (ms) bound the\n"
    "timestamps, [starttime, endtime). Partitions: one per region of the table\n"
    "(HBase writes one file per region), or -D mapreduce.job.reduces=N; the\n"
    "split rows are sampled from the table (-D kiln.sampler.points).\n"
    "\n"
    "Options:\n"
    "  --data DIR          the data directory (default $KILN_DATA, else ./kiln-data)\n"
    "  --output DIR        where the files go (must not exist)\n"
    TABLE_INPUT_USAGE
    "  -D hbase.mapreduce.include.deleted.rows=true  the same as --raw (HBase's)\n"
    "  -D kiln.hfile.compression=C  the files' codec (default snappy)\n"
    "  -D kiln.hfile.bloom=B        row (default), rowcol or none\n"
    "  -D kiln.hfile.blocksize=N    data block size (default 65536)\n"
    "\n"
    "Counters (group Export): Rows, Cells, Delete markers, Identical keys\n"
    "(newest kept).\n",
    export_setup,
};
