/* hfile_output.c -- one HFile per partition per family, under OUTPUT/<family>/.
 *
 * A partition's records come in cell order, which interleaves families
 * (row 1 f1, row 1 f2, row 2 f1, ...), so a partition writer keeps one
 * hfile_writer per family open, created when the family's first cell
 * arrives. Families are kept sorted so a lookup is a binary search; the last
 * family found is tried first, since rows often repeat it.
 */
#include "jobs/hfile_output.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobs/cellkey.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_writer.h"

struct hfile_output {
    mr_job *job;
    schema_family *fam;          /* sorted by name */
    size_t n;
    hfile_writer_options *opt;   /* [n] */
    int c_files;
    int c_cells;
};

static int
hfile_output_cmp_family(const void *a, const void *b)
{
    return strcmp(((const schema_family *)a)->name, ((const schema_family *)b)->name);
}

kiln_status
hfile_output_new(mr_job *job, const schema_family *families, size_t n, hfile_output **out,
                 kiln_err *err)
{
    *out = NULL;
    if (n == 0)
        return status_set(err, KILN_INVALID, "HFile output needs at least one family");
    mr_conf *conf = mr_job_conf(job);
    const char *codec_s = mr_conf_get(conf, "kiln.hfile.compression", NULL);
    const char *bloom_s = mr_conf_get(conf, "kiln.hfile.bloom", NULL);
    int64_t block = 0;
    kiln_status s = mr_conf_get_long(conf, "kiln.hfile.blocksize", 0, &block, err);
    if (s != KILN_OK)
        return s;
    kiln_codec codec = CODEC_NONE;
    if (codec_s != NULL && (compress_codec_parse(codec_s, &codec) != 0 ||
                            !compress_codec_writable(codec)))
        return status_set(err, KILN_INVALID, "kiln.hfile.compression: '%s' cannot be written",
                          codec_s);
    kiln_bloom_type bloom = BLOOM_ROW;
    if (bloom_s != NULL) {
        if (strcasecmp(bloom_s, "row") == 0)
            bloom = BLOOM_ROW;
        else if (strcasecmp(bloom_s, "rowcol") == 0)
            bloom = BLOOM_ROWCOL;
        else if (strcasecmp(bloom_s, "none") == 0)
            bloom = BLOOM_NONE;
        else
            return status_set(err, KILN_INVALID, "kiln.hfile.bloom: '%s' is not row, rowcol or none",
                              bloom_s);
    }
    if (block < 0 || block > (int64_t)SCHEMA_BLOCK_SIZE_MAX || (block > 0 && block < SCHEMA_BLOCK_SIZE_MIN))
        return status_set(err, KILN_INVALID, "kiln.hfile.blocksize: %" PRId64 " is out of range",
                          block);

    hfile_output *o = kiln_calloc(1, sizeof *o);
    o->job = job;
    o->n = n;
    o->fam = kiln_calloc(n, sizeof *o->fam);
    memcpy(o->fam, families, n * sizeof *o->fam);
    qsort(o->fam, n, sizeof *o->fam, hfile_output_cmp_family);
    for (size_t i = 1; i < n; i++) {
        if (strcmp(o->fam[i - 1].name, o->fam[i].name) == 0) {
            status_set(err, KILN_INVALID, "family '%s' given twice", o->fam[i].name);
            hfile_output_free(o);
            return KILN_INVALID;
        }
    }
    o->opt = kiln_calloc(n, sizeof *o->opt);
    for (size_t i = 0; i < n; i++) {
        hfile_writer_options *w = &o->opt[i];
        hfile_writer_options_init(w);
        w->codec = codec_s != NULL ? codec : o->fam[i].codec;
        w->bloom = bloom_s != NULL ? bloom : o->fam[i].bloom;
        w->block_size = block > 0 ? (size_t)block : o->fam[i].block_size;
        w->create_time_ms = mr_job_time_ms(job);
    }
    o->c_files = mr_job_counter(job, "HFile Output", "HFiles written");
    o->c_cells = mr_job_counter(job, "HFile Output", "Cells written");
    *out = o;
    return KILN_OK;
}

void
hfile_output_free(hfile_output *o)
{
    if (o == NULL)
        return;
    free(o->fam);
    free(o->opt);
    free(o);
}

static kiln_status
hfile_output_prepare(void *arg, const char *dir, kiln_err *err)
{
    hfile_output *o = arg;
    for (size_t i = 0; i < o->n; i++) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, o->fam[i].name) >= (int)sizeof path)
            return status_set(err, KILN_INVALID, "%s: path too long", dir);
        kiln_status s = env_mkdirs(path, 0755, err);
        if (s != KILN_OK)
            return s;
    }
    return KILN_OK;
}

typedef struct hfile_output_part {
    hfile_output *o;
    char *dir;
    uint32_t part;
    hfile_writer **w;            /* [o->n], NULL until the family's first cell */
    size_t last;
    kbuf scratch;
    uint64_t cells;
} hfile_output_part;

static kiln_status
hfile_output_open(void *arg, const char *dir, uint32_t partition, void **writer, kiln_err *err)
{
    hfile_output *o = arg;
    hfile_output_part *p = kiln_calloc(1, sizeof *p);
    p->o = o;
    p->dir = (char *)kiln_memdup(dir, strlen(dir) + 1);
    p->part = partition;
    p->w = kiln_calloc(o->n, sizeof *p->w);
    buf_init(&p->scratch);
    *writer = p;
    return KILN_OK;
}

/* Index of the family named f[0..n), or o->n. */
static size_t
hfile_output_family(hfile_output_part *p, const uint8_t *f, size_t n)
{
    hfile_output *o = p->o;
    const char *last = o->fam[p->last].name;
    if (strlen(last) == n && memcmp(last, f, n) == 0)
        return p->last;
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *name = o->fam[mid].name;
        size_t len = strlen(name);
        int c = memcmp(name, f, len < n ? len : n);
        if (c == 0)
            c = len < n ? -1 : len > n;
        if (c == 0) {
            p->last = mid;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return o->n;
}

static kiln_status
hfile_output_write(void *writer, kslice key, kslice value, kiln_err *err)
{
    hfile_output_part *p = writer;
    hfile_output *o = p->o;
    kiln_cell c;
    memset(&c, 0, sizeof c);
    kiln_status s = cellkey_decode(key, &p->scratch, &c, err);
    if (s != KILN_OK)
        return s;
    if (value.n > UINT32_MAX)
        return status_set(err, KILN_INVALID, "cell value of %zu bytes too large", value.n);
    c.value = value.p;
    c.value_len = (uint32_t)value.n;
    size_t f = hfile_output_family(p, c.family, c.family_len);
    if (f == o->n)
        return status_set(err, KILN_INVALID, "family '%.*s' is not one of the output's families",
                          (int)c.family_len, (const char *)c.family);
    if (p->w[f] == NULL) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s/%032x", p->dir, o->fam[f].name, p->part) >=
            (int)sizeof path)
            return status_set(err, KILN_INVALID, "%s: path too long", p->dir);
        s = hfile_writer_open(path, &o->opt[f], &p->w[f], err);
        if (s != KILN_OK)
            return s;
    }
    s = hfile_writer_add(p->w[f], &c, err);
    if (s == KILN_OK)
        p->cells++;
    return s;
}

static void
hfile_output_part_free(hfile_output_part *p)
{
    buf_free(&p->scratch);
    free(p->w);
    free(p->dir);
    free(p);
}

static kiln_status
hfile_output_close(void *writer, uint64_t *bytes, kiln_err *err)
{
    hfile_output_part *p = writer;
    hfile_output *o = p->o;
    kiln_status s = KILN_OK;
    uint64_t files = 0;
    for (size_t i = 0; i < o->n; i++) {
        if (p->w[i] == NULL)
            continue;
        if (s != KILN_OK) {
            hfile_writer_abandon(p->w[i]);
            continue;
        }
        hfile_writer_stats st;
        s = hfile_writer_finish(p->w[i], &st, err);
        if (s == KILN_OK) {
            *bytes += st.file_size;
            files++;
        }
    }
    if (s == KILN_OK) {
        mr_job_count(o->job, o->c_files, files);
        mr_job_count(o->job, o->c_cells, p->cells);
    }
    hfile_output_part_free(p);
    return s;
}

static void
hfile_output_abort(void *writer)
{
    hfile_output_part *p = writer;
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->o->n; i++)
        hfile_writer_abandon(p->w[i]);
    hfile_output_part_free(p);
}

const mr_output_format hfile_output_format = {
    "hfile", hfile_output_prepare, hfile_output_open, hfile_output_write, hfile_output_close,
    hfile_output_abort, NULL,
};
