/* importtsv.c -- HBase ImportTsv: separated-value lines to bulk-load HFiles.
 *
 *   importtsv -D importtsv.columns=HBASE_ROW_KEY,cf:a,cf:b[,HBASE_TS_KEY]
 *             --table NAME --input PATH... --output DIR
 *             [--data DIR] [--split KEY]... [--splits-file FILE] [--format hfile|text]
 *
 * Families and region boundaries come from table NAME in the data directory
 * when it exists (its family settings choose compression, bloom and block
 * size), else from --split/--splits-file with default family settings. Map
 * parses a line into fields and emits one cell per data column; its key is
 * the cellkey encoding (so the engine's byte sort is HBase's cell order) and
 * its value is the line's input position (file index, offset: 12 bytes
 * big-endian) followed by the cell value. The total-order partitioner over
 * the region boundaries sends each region's rows to one partition, so each
 * HFile lies inside one region. When several lines give the same cell (row,
 * column, timestamp), the values arrive in position order and reduce keeps
 * the last line's, as a sequence of Puts would -- whatever the rank count.
 *
 * Bad lines (wrong field count, empty or oversized row key, bad timestamp)
 * are counted under ImportTsv / Bad Lines, the first few logged with file and
 * line, and with -D importtsv.skip.bad.lines=false the first one fails the job.
 *
 * A salted table's rows are stored under their bucket byte (store_salt.h):
 * map emits the salted row, so the partitioner cuts at the table's (bucket)
 * region boundaries. -D kiln.index=NAME:cf:q[,...] also builds secondary-
 * index tables from each line's columns (jobs/index_output.h); their records
 * pass reduce unchanged and land under OUTPUT/_index/NAME/.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/cellkey.h"
#include "jobs/hfile_output.h"
#include "jobs/index_output.h"
#include "jobs/jobs_args.h"
#include "mapreduce/mr_counters.h"
#include "storage/hfile/cell.h"
#include "storage/base/coding.h"
#include "storage/base/env.h"
#include "storage/store/schema.h"
#include "storage/store/store_salt.h"
#include "storage/store/table.h"

#define IMPORTTSV_ROW_KEY "HBASE_ROW_KEY"
#define IMPORTTSV_TS_KEY "HBASE_TS_KEY"
#define IMPORTTSV_POS 12          /* file index (4) + offset (8) before each value */
#define IMPORTTSV_LOG_MAX 10      /* bad lines logged per rank */

typedef struct importtsv_column {
    char *family;                 /* NULL for the row key and timestamp columns */
    char *qualifier;
} importtsv_column;

typedef struct importtsv_state {
    importtsv_column *cols;
    size_t ncols;
    size_t row_col;
    long ts_col;                  /* -1: no HBASE_TS_KEY */
    uint8_t sep;
    int skip_bad;
    int skip_empty;
    int64_t ts;
    int text;
    int c_bad;
    int c_dups;
    uint64_t logged;
    uint32_t salt;                /* the table's salt_buckets */
    index_output *ix;             /* HFile output: salting, indexes, the table's files */
    kslice *field;                /* [ncols + 1] */
    kbuf key;
    kbuf value;
    kbuf srow;                    /* the stored (salted) row */
    kbuf last;
    kbuf scratch;
    kbuf text_key;
    kbuf text_value;
} importtsv_state;

static void
importtsv_state_free(void *p)
{
    importtsv_state *st = p;
    if (st == NULL)
        return;
    for (size_t i = 0; i < st->ncols; i++) {
        free(st->cols[i].family);
        free(st->cols[i].qualifier);
    }
    free(st->cols);
    free(st->field);
    index_output_free(st->ix);
    buf_free(&st->key);
    buf_free(&st->value);
    buf_free(&st->srow);
    buf_free(&st->last);
    buf_free(&st->scratch);
    buf_free(&st->text_key);
    buf_free(&st->text_value);
    free(st);
}

/* ------------------------------------------------------------------ settings */

static char *
importtsv_strndup(const char *p, size_t n)
{
    char *s = kiln_malloc(n + 1);
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

/* importtsv.columns: HBASE_ROW_KEY exactly once, HBASE_TS_KEY at most once,
 * the rest family or family:qualifier, at least one of them. */
static kiln_status
importtsv_parse_columns(importtsv_state *st, const char *spec, kiln_err *err)
{
    const char *key = "importtsv.columns";
    if (spec == NULL || *spec == '\0')
        return status_set(err, KILN_INVALID,
                          "%s is required, e.g. -D %s=HBASE_ROW_KEY,cf:a,cf:b", key, key);
    size_t n = 1;
    for (const char *p = spec; *p; p++)
        n += *p == ',';
    st->cols = kiln_calloc(n, sizeof *st->cols);
    st->ts_col = -1;
    int rows = 0;
    size_t data = 0;
    const char *p = spec;
    for (size_t i = 0; i < n; i++) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        st->ncols++;
        if (len == strlen(IMPORTTSV_ROW_KEY) && memcmp(p, IMPORTTSV_ROW_KEY, len) == 0) {
            if (rows++)
                return status_set(err, KILN_INVALID, "%s: %s appears twice", key, IMPORTTSV_ROW_KEY);
            st->row_col = i;
        } else if (len == strlen(IMPORTTSV_TS_KEY) && memcmp(p, IMPORTTSV_TS_KEY, len) == 0) {
            if (st->ts_col >= 0)
                return status_set(err, KILN_INVALID, "%s: %s appears twice", key, IMPORTTSV_TS_KEY);
            st->ts_col = (long)i;
        } else if (len > 5 && memcmp(p, "HBASE_", 6) == 0 && memchr(p, ':', len) == NULL) {
            return status_set(err, KILN_UNSUPPORTED, "%s: %.*s is not supported", key, (int)len, p);
        } else {
            const char *colon = memchr(p, ':', len);
            size_t flen = colon ? (size_t)(colon - p) : len;
            if (flen == 0 || !schema_family_name_ok(p, flen))
                return status_set(err, KILN_INVALID, "%s: '%.*s' is not family or family:qualifier",
                                  key, (int)len, p);
            st->cols[i].family = importtsv_strndup(p, flen);
            st->cols[i].qualifier = colon ? importtsv_strndup(colon + 1, len - flen - 1)
                                          : importtsv_strndup("", 0);
            data++;
        }
        p = end ? end + 1 : p + len;
    }
    if (rows == 0)
        return status_set(err, KILN_INVALID, "%s: %s is missing", key, IMPORTTSV_ROW_KEY);
    if (data == 0)
        return status_set(err, KILN_INVALID,
                          "%s: one or more columns besides %s (and %s) are required", key,
                          IMPORTTSV_ROW_KEY, IMPORTTSV_TS_KEY);
    return KILN_OK;
}

/* One byte, or the escapes \t and \xNN. */
static kiln_status
importtsv_parse_separator(const char *s, uint8_t *out, kiln_err *err)
{
    if (strlen(s) == 1) {
        *out = (uint8_t)s[0];
        return KILN_OK;
    }
    if (strcmp(s, "\\t") == 0) {
        *out = '\t';
        return KILN_OK;
    }
    unsigned v;
    char extra;
    if (strlen(s) == 4 && sscanf(s, "\\x%2x%c", &v, &extra) == 1) {
        *out = (uint8_t)v;
        return KILN_OK;
    }
    return status_set(err, KILN_INVALID,
                      "importtsv.separator: '%s' is not a single byte (TsvParser only supports "
                      "single-byte separators; \\t and \\xNN are accepted)", s);
}

static kiln_status
importtsv_parse_i64(const char *s, size_t n, int64_t *out)
{
    char tmp[32];
    if (n == 0 || n >= sizeof tmp)
        return KILN_INVALID;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(tmp, &end, 10);
    if (*end != '\0' || errno != 0 || tmp[0] == ' ' || tmp[0] == '+')
        return KILN_INVALID;
    *out = v;
    return KILN_OK;
}

/* Split keys from --split and --splits-file, in printable form (\xNN). */
static kiln_status
importtsv_add_split(kbuf **keys, size_t *n, const char *s, size_t len, const char *where,
                    kiln_err *err)
{
    kbuf k = KBUF_INIT;
    if (cell_from_string_binary(&k, s, len) != 0 || k.len == 0 || k.len > CELL_ROW_MAX) {
        buf_free(&k);
        return status_set(err, KILN_INVALID, "%s: bad split key '%.*s'", where, (int)len, s);
    }
    *keys = kiln_realloc(*keys, (*n + 1) * sizeof **keys);
    (*keys)[(*n)++] = k;
    return KILN_OK;
}

static kiln_status
importtsv_read_splits_file(kbuf **keys, size_t *n, const char *path, kiln_err *err)
{
    kbuf text = KBUF_INIT;
    kiln_status s = env_read_file(path, &text, err);
    const char *p = (const char *)text.data, *end = p + text.len;
    for (unsigned line = 1; s == KILN_OK && p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl : end;
        size_t len = (size_t)(stop - p);
        if (len > 0 && p[len - 1] == '\r')
            len--;
        if (len > 0) {
            char where[PATH_MAX + 32];
            snprintf(where, sizeof where, "%s:%u", path, line);
            s = importtsv_add_split(keys, n, p, len, where, err);
        }
        p = nl ? nl + 1 : end;
    }
    buf_free(&text);
    return s;
}

static int
importtsv_cmp_kbuf(const void *a, const void *b)
{
    return kslice_cmp(buf_slice(a), buf_slice(b));
}

/* ------------------------------------------------------------------ map, reduce */

static kiln_status
importtsv_bad(mr_task *t, importtsv_state *st, const char *reason, kiln_err *err)
{
    if (mr_task_sampling(t))
        return KILN_INVALID;
    mr_task_count(t, st->c_bad, 1);
    mr_task_bad_record(t);
    if (st->skip_bad && st->logged >= IMPORTTSV_LOG_MAX)
        return KILN_OK;
    uint64_t line = 0;
    kiln_err lerr;
    status_clear(&lerr);
    mr_task_input_line(t, &line, &lerr);
    if (!st->skip_bad)
        return status_set(err, KILN_CORRUPTION,
                          "%s:%" PRIu64 ": bad line: %s (importtsv.skip.bad.lines=false)",
                          mr_task_input_path(t), line, reason);
    if (++st->logged == IMPORTTSV_LOG_MAX)
        mr_task_warn(t, "bad line %s:%" PRIu64 ": %s (no more bad lines logged on this rank)",
                     mr_task_input_path(t), line, reason);
    else
        mr_task_warn(t, "bad line %s:%" PRIu64 ": %s", mr_task_input_path(t), line, reason);
    return KILN_OK;
}

static kiln_status
importtsv_map(mr_task *t, kslice line, kiln_err *err)
{
    importtsv_state *st = mr_task_state(t);
    size_t nf = 0;
    const uint8_t *p = line.p, *end = line.p + line.n;
    for (;;) {
        const uint8_t *s = memchr(p, st->sep, (size_t)(end - p));
        const uint8_t *stop = s ? s : end;
        if (nf <= st->ncols)
            st->field[nf] = kslice_make(p, (size_t)(stop - p));
        nf++;
        if (s == NULL)
            break;
        p = s + 1;
    }
    char reason[128];
    if (nf != st->ncols) {
        snprintf(reason, sizeof reason, "wrong column count: %zu fields, expected %zu", nf,
                 st->ncols);
        return importtsv_bad(t, st, reason, err);
    }
    kslice row = st->field[st->row_col];
    size_t row_max = st->salt > 0 ? CELL_ROW_MAX - 1 : CELL_ROW_MAX;
    if (row.n == 0)
        return importtsv_bad(t, st, "empty row key", err);
    if (row.n > row_max) {
        snprintf(reason, sizeof reason, "row key of %zu bytes (at most %zu)", row.n, row_max);
        return importtsv_bad(t, st, reason, err);
    }
    int64_t ts = st->ts;
    if (st->ts_col >= 0) {
        kslice f = st->field[st->ts_col];
        if (importtsv_parse_i64((const char *)f.p, f.n, &ts) != KILN_OK) {
            snprintf(reason, sizeof reason, "bad timestamp '%.*s'", f.n > 40 ? 40 : (int)f.n,
                     (const char *)f.p);
            return importtsv_bad(t, st, reason, err);
        }
    }
    uint8_t pos[IMPORTTSV_POS];
    coding_put_be32(pos, mr_task_input_file(t));
    coding_put_be64(pos + 4, mr_task_input_offset(t));
    kiln_cell c;
    memset(&c, 0, sizeof c);
    c.row = row.p;
    c.row_len = (uint32_t)row.n;
    if (st->salt > 0) {
        buf_reset(&st->srow);
        store_salt_key(&st->srow, st->salt, row.p, row.n);
        c.row = st->srow.data;
        c.row_len = (uint32_t)st->srow.len;
    }
    c.ts = ts;
    c.type = CELL_TYPE_PUT;
    for (size_t i = 0; i < st->ncols; i++) {
        const importtsv_column *col = &st->cols[i];
        if (col->family == NULL)
            continue;
        kslice v = st->field[i];
        if (v.n == 0 && st->skip_empty)
            continue;
        c.family = (const uint8_t *)col->family;
        c.family_len = (uint32_t)strlen(col->family);
        c.qualifier = (const uint8_t *)col->qualifier;
        c.qualifier_len = (uint32_t)strlen(col->qualifier);
        buf_reset(&st->key);
        cellkey_append(&st->key, &c);
        buf_reset(&st->value);
        buf_append(&st->value, pos, sizeof pos);
        buf_append(&st->value, v.p, v.n);
        kiln_status s = mr_task_emit(t, buf_slice(&st->key), buf_slice(&st->value), err);
        if (s == KILN_OK)
            s = index_output_put(t, st->ix, row, kslice_make(c.family, c.family_len),
                                 kslice_make(c.qualifier, c.qualifier_len), ts, v, err);
        if (s != KILN_OK)
            return s;
    }
    return KILN_OK;
}

static kiln_status
importtsv_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    importtsv_state *st = mr_task_state(t);
    if (index_output_owns(key))
        return index_output_reduce(t, key, values, err);
    kslice v;
    uint64_t n = 0;
    buf_reset(&st->last);
    while (mr_task_next_value(values, &v)) {
        if (v.n < IMPORTTSV_POS)
            return status_set(err, KILN_CORRUPTION, "importtsv: a map value of %zu bytes", v.n);
        buf_reset(&st->last);
        buf_append(&st->last, v.p + IMPORTTSV_POS, v.n - IMPORTTSV_POS);
        n++;
    }
    if (n > 1)
        mr_task_count(t, st->c_dups, n - 1);
    if (!st->text)
        return mr_task_emit(t, key, buf_slice(&st->last), err);
    /* Text: the `kiln hfile dump` line, ROW<TAB>FAMILY:QUALIFIER<TAB>TS<TAB>Put<TAB>VALUE. */
    kiln_cell c;
    memset(&c, 0, sizeof c);
    kiln_status s = cellkey_decode(key, &st->scratch, &c, err);
    if (s != KILN_OK)
        return s;
    buf_reset(&st->text_key);
    cell_to_string_binary(&st->text_key, c.row, c.row_len);
    buf_reset(&st->text_value);
    cell_to_string_binary(&st->text_value, c.family, c.family_len);
    buf_append_u8(&st->text_value, ':');
    cell_to_string_binary(&st->text_value, c.qualifier, c.qualifier_len);
    char mid[64];
    int len = snprintf(mid, sizeof mid, "\t%" PRId64 "\t%s\t", c.ts, cell_type_name(c.type));
    buf_append(&st->text_value, mid, (size_t)len);
    cell_to_string_binary(&st->text_value, st->last.data, st->last.len);
    return mr_task_emit(t, buf_slice(&st->text_key), buf_slice(&st->text_value), err);
}

/* ------------------------------------------------------------------ setup */

/* Families and split keys: from the table when it exists, else from the
 * columns and --split/--splits-file. */
static kiln_status
importtsv_layout(mr_job *job, importtsv_state *st, const char *data_dir, const char *table,
                 kbuf *splits, size_t n_splits, int splits_given, kiln_err *err)
{
    char canon[SCHEMA_NAME_MAX + 1];
    kiln_status s = schema_name_canon(table, canon, err);
    if (s != KILN_OK)
        return s;
    /* No such table yet: --split/--splits-file give the regions. */
    kiln_schema found;
    int exists;
    s = jobs_table_read(job, data_dir, canon, &found, &exists, err);
    if (s != KILN_OK)
        return s;

    schema_family *fams = kiln_calloc(st->ncols, sizeof *fams);
    size_t nf = 0;
    kslice *keys = NULL;
    size_t nk = 0;
    kbuf names = KBUF_INIT;
    if (exists) {
        const kiln_schema *sc = &found;
        if (splits_given) {
            s = status_set(err, KILN_INVALID,
                           "table %s exists in %s: its regions decide the split keys; drop "
                           "--split/--splits-file", canon, data_dir);
            goto out;
        }
        for (size_t i = 0; i < st->ncols && s == KILN_OK; i++) {
            const char *f = st->cols[i].family;
            if (f == NULL)
                continue;
            const schema_family *sf = schema_find_family(sc, (const uint8_t *)f, strlen(f));
            if (sf == NULL) {
                for (size_t j = 0; j < sc->family_count; j++) {
                    if (j > 0)
                        buf_append(&names, ", ", 2);
                    buf_append(&names, sc->families[j].name, strlen(sc->families[j].name));
                }
                buf_append_u8(&names, 0);
                s = status_set(err, KILN_INVALID,
                               "importtsv.columns: '%s' is not a family of table %s (families: %s)",
                               f, canon, (const char *)names.data);
                break;
            }
            size_t j = 0;
            while (j < nf && strcmp(fams[j].name, f) != 0)
                j++;
            if (j == nf)
                fams[nf++] = *sf;
        }
        nk = sc->split_count;
        keys = kiln_calloc(nk ? nk : 1, sizeof *keys);
        for (size_t i = 0; i < nk; i++)
            keys[i] = buf_slice(&sc->splits[i]);
    } else {
        for (size_t i = 0; i < st->ncols; i++) {
            const char *f = st->cols[i].family;
            if (f == NULL)
                continue;
            size_t j = 0;
            while (j < nf && strcmp(fams[j].name, f) != 0)
                j++;
            if (j == nf)
                schema_family_defaults(&fams[nf++], f);
        }
        if (n_splits > 1)
            qsort(splits, n_splits, sizeof *splits, importtsv_cmp_kbuf);
        keys = kiln_calloc(n_splits ? n_splits : 1, sizeof *keys);
        for (size_t i = 0; i < n_splits; i++) {
            if (nk > 0 && kslice_eq(keys[nk - 1], buf_slice(&splits[i])))
                continue;
            keys[nk++] = buf_slice(&splits[i]);
        }
    }
    if (s != KILN_OK)
        goto out;

    /* The target as a schema (the table's, or its families and split keys
     * when it does not exist yet) for the salt and the indexes. */
    kiln_schema target;
    schema_init(&target);
    if (exists) {
        schema_copy(&target, &found);
    } else {
        memcpy(target.name, canon, sizeof canon);
        for (size_t i = 0; i < nf && s == KILN_OK; i++)
            s = schema_add_family(&target, &fams[i], err);
        for (size_t i = 0; i < nk && s == KILN_OK; i++)
            s = schema_add_split(&target, keys[i].p, keys[i].n, err);
        if (s == KILN_OK)
            s = schema_validate(&target, err);
    }
    st->salt = target.salt_buckets;
    if (s == KILN_OK && !st->text) {
        s = index_output_setup(job, &target, fams, nf, &st->ix, err);
    } else if (s == KILN_OK) {
        const char *ix = mr_conf_get(mr_job_conf(job), INDEX_OUTPUT_CONF, NULL);
        if (ix != NULL && *ix != '\0')
            s = status_set(err, KILN_INVALID, "%s needs --format hfile", INDEX_OUTPUT_CONF);
        /* Region boundaries as the encoded lower bounds of their first rows. */
        kbuf *enc = kiln_calloc(nk ? nk : 1, sizeof *enc);
        kslice *encs = kiln_calloc(nk ? nk : 1, sizeof *encs);
        for (size_t i = 0; i < nk; i++) {
            cellkey_append_row(&enc[i], keys[i].p, keys[i].n);
            encs[i] = buf_slice(&enc[i]);
        }
        if (s == KILN_OK)
            s = mr_job_set_split_keys(job, encs, nk, err);
        for (size_t i = 0; i < nk; i++)
            buf_free(&enc[i]);
        free(enc);
        free(encs);
    }
    schema_free(&target);
    if (s == KILN_OK) {
        kbuf j = KBUF_INIT;
        mr_counters_json_string(&j, canon, strlen(canon));
        buf_append_u8(&j, 0);
        mr_job_report(job, "table", (const char *)j.data);
        buf_free(&j);
        mr_job_report(job, "regions_from", exists ? "\"table schema\"" : "\"split keys\"");
    }
out:
    buf_free(&names);
    free(keys);
    free(fams);
    schema_free(&found);
    return s;
}

static kiln_status
importtsv_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    importtsv_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, importtsv_state_free);
    mr_conf *conf = mr_job_conf(job);
    const char *table = NULL, *format = "hfile", *splits_file = NULL, *output = NULL;
    const char *data_dir = getenv("KILN_DATA");
    if (data_dir == NULL || *data_dir == '\0')
        data_dir = "./kiln-data";
    kbuf *splits = NULL;
    size_t n_splits = 0;
    int splits_given = 0;
    kiln_status s = KILN_OK;
    for (int i = 1; i < argc && s == KILN_OK; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        if (strcmp(a, "--input") == 0) {
            s = jobs_take_inputs(job, argc, argv, &i, err);
        } else if (strcmp(a, "--output") == 0) {
            s = jobs_take_value(argc, argv, &i, &output, err);
        } else if (strcmp(a, "--table") == 0) {
            s = jobs_take_value(argc, argv, &i, &table, err);
        } else if (strcmp(a, "--data") == 0) {
            s = jobs_take_value(argc, argv, &i, &data_dir, err);
        } else if (strcmp(a, "--format") == 0) {
            s = jobs_take_value(argc, argv, &i, &format, err);
        } else if (strcmp(a, "--split") == 0) {
            s = jobs_take_value(argc, argv, &i, &v, err);
            if (s == KILN_OK)
                s = importtsv_add_split(&splits, &n_splits, v, strlen(v), "--split", err);
            splits_given = 1;
        } else if (strcmp(a, "--splits-file") == 0) {
            s = jobs_take_value(argc, argv, &i, &splits_file, err);
            splits_given = 1;
        } else {
            s = status_set(err, KILN_INVALID, "importtsv: unknown argument '%s'", a);
        }
    }
    if (s == KILN_OK && output == NULL)
        output = mr_conf_get(conf, "importtsv.bulk.output", NULL);
    if (s == KILN_OK && output != NULL)
        mr_job_set_output(job, output);
    if (s == KILN_OK && table == NULL)
        s = status_set(err, KILN_INVALID, "importtsv: --table NAME is required");
    if (s == KILN_OK && splits_file != NULL)
        s = importtsv_read_splits_file(&splits, &n_splits, splits_file, err);
    if (s == KILN_OK)
        s = importtsv_parse_columns(st, mr_conf_get(conf, "importtsv.columns", NULL), err);
    if (s == KILN_OK)
        s = importtsv_parse_separator(mr_conf_get(conf, "importtsv.separator", "\t"), &st->sep,
                                      err);
    if (s == KILN_OK)
        s = mr_conf_get_bool(conf, "importtsv.skip.bad.lines", 1, &st->skip_bad, err);
    if (s == KILN_OK)
        s = mr_conf_get_bool(conf, "importtsv.skip.empty.columns", 0, &st->skip_empty, err);
    if (s == KILN_OK) {
        const char *ts = mr_conf_get(conf, "importtsv.timestamp", NULL);
        st->ts = mr_job_time_ms(job);
        if (ts != NULL && importtsv_parse_i64(ts, strlen(ts), &st->ts) != KILN_OK)
            s = status_set(err, KILN_INVALID, "importtsv.timestamp: '%s' is not a number of ms", ts);
    }
    if (s == KILN_OK) {
        if (strcmp(format, "text") == 0)
            st->text = 1;
        else if (strcmp(format, "hfile") != 0)
            s = status_set(err, KILN_INVALID, "importtsv: --format must be hfile or text, not '%s'",
                           format);
    }
    if (s == KILN_OK)
        s = importtsv_layout(job, st, data_dir, table, splits, n_splits, splits_given, err);
    for (size_t i = 0; i < n_splits; i++)
        buf_free(&splits[i]);
    free(splits);
    if (s != KILN_OK)
        return s;
    st->field = kiln_calloc(st->ncols + 1, sizeof *st->field);
    st->c_bad = mr_job_counter(job, "ImportTsv", "Bad Lines");
    st->c_dups = mr_job_counter(job, "ImportTsv", "Duplicate cells (last line kept)");
    mr_job_set_map(job, importtsv_map);
    mr_job_set_reduce(job, importtsv_reduce);
    return KILN_OK;
}

const mr_job_def importtsv_job = {
    "importtsv",
    "load separated-value files as HFiles for a table's regions (HBase ImportTsv)",
    "Usage: kiln-mr importtsv -D importtsv.columns=HBASE_ROW_KEY,cf:a,... --table NAME\n"
    "                         --input PATH... --output DIR [--data DIR]\n"
    "                         [--split KEY]... [--splits-file FILE] [--format hfile|text]\n"
    "\n"
    "Reads lines of separated fields and writes HBase's bulk-output layout,\n"
    "DIR/<family>/<one HFile per region>, ready for `kiln load NAME DIR`.\n"
    "\n"
    "  --table NAME        the target table. If it exists in the data directory\n"
    "                      (--data DIR, else $KILN_DATA, else ./kiln-data), its\n"
    "                      families (with their compression, bloom and block\n"
    "                      size) and its region boundaries are used.\n"
    "  --split KEY         a region boundary when the table does not exist yet\n"
    "                      (repeatable; HBase printable form, \\xNN escapes)\n"
    "  --splits-file FILE  one boundary per line, same form\n"
    "  --format text       write `kiln hfile dump` lines (ROW, FAMILY:QUALIFIER,\n"
    "                      TIMESTAMP, TYPE, VALUE) instead of HFiles\n"
    "\n"
    "Settings (-D key=value), as HBase's ImportTsv:\n"
    "  importtsv.columns=HBASE_ROW_KEY,cf:a,cf:b[,HBASE_TS_KEY]   (required)\n"
    "      one entry per field; `cf` alone is family cf with an empty qualifier\n"
    "  importtsv.separator=C          one byte (default TAB; \\t and \\xNN accepted)\n"
    "  importtsv.skip.bad.lines=BOOL  count and skip bad lines (default true);\n"
    "                                 false: the first bad line fails the job\n"
    "  importtsv.skip.empty.columns=BOOL  write no cell for an empty field (false)\n"
    "  importtsv.timestamp=MS         cell timestamp (default: the job's start time)\n"
    "  importtsv.bulk.output=DIR      same as --output\n"
    "  kiln.hfile.compression=C, kiln.hfile.bloom=B, kiln.hfile.blocksize=N\n"
    "                                 override the families' settings\n"
    "  kiln.index=NAME:cf:q[,cf:q2][;NAME2:...]\n"
    "                                 also build secondary indexes: index rows\n"
    "                                 <value(s)><row> under DIR/_index/NAME/, loaded\n"
    "                                 with the table by `kiln load` (qualifiers in\n"
    "                                 printable form; a row is indexed when it has\n"
    "                                 every column of the index)\n"
    "\n"
    "A bad line has the wrong number of fields, an empty (or over 32767-byte) row\n"
    "key, or an HBASE_TS_KEY field that is not an integer; bad lines are counted\n"
    "(ImportTsv / Bad Lines) and the first few logged with file and line. When\n"
    "several lines give the same cell, the last line (in input order) wins.\n"
    "A salted table (kiln create --salt-buckets N) gets each row's bucket byte.\n",
    importtsv_setup,
};
