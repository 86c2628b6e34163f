/* job_fixture.c -- see job_fixture.h. */
#include "tests/support/job_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "storage/hfile/cell.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/store_index.h"
#include "storage/base/store_rec.h"
#include "tests/support/test_util.h"

void
tjob_schema_t(kiln_schema *s)
{
    schema_init(s);
    snprintf(s->name, sizeof s->name, "default:t");
    kiln_err err;
    status_clear(&err);
    schema_family f;
    schema_family_defaults(&f, "cf");
    tu_must(schema_add_family(s, &f, &err), &err);
    tu_must(schema_add_split(s, (const uint8_t *)"r01000", 6, &err), &err);
    tu_must(schema_add_split(s, (const uint8_t *)"r02000", 6, &err), &err);
    tu_must(schema_validate(s, &err), &err);
}

void
tjob_write_hfile(const char *path, int lo, int hi, int64_t ts)
{
    hfile_writer_options o;
    hfile_writer_options_init(&o);
    o.block_size = 1024;
    o.sync = 0;
    hfile_writer *w;
    kiln_err err;
    status_clear(&err);
    tu_must(hfile_writer_open(path, &o, &w, &err), &err);
    for (int i = lo; i < hi; i++) {
        char row[16], val[32];
        snprintf(row, sizeof row, "r%05d", i);
        int vn = snprintf(val, sizeof val, "v%lld.%d", (long long)ts, i);
        kiln_cell c;
        memset(&c, 0, sizeof c);
        c.row = (const uint8_t *)row;
        c.row_len = (uint32_t)strlen(row);
        c.family = (const uint8_t *)"cf";
        c.family_len = 2;
        c.qualifier = (const uint8_t *)"q";
        c.qualifier_len = 1;
        c.ts = ts;
        c.type = CELL_TYPE_PUT;
        c.value = (const uint8_t *)val;
        c.value_len = (uint32_t)vn;
        tu_must(hfile_writer_add(w, &c, &err), &err);
    }
    tu_must(hfile_writer_finish(w, NULL, &err), &err);
}

static int
tjob_kbuf_cmp(const void *a, const void *b)
{
    return kslice_cmp(buf_slice(a), buf_slice(b));
}

/* The index by_v (cf:q) of rows [lo, hi) written by write_hfile: its schema
 * record and one HFile of index rows under job/_index/by_v/, published with
 * the table in the same CURRENT swap. */
void
tjob_write_index(const char *job, int lo, int hi, int64_t ts)
{
    kiln_schema t, is;
    tjob_schema_t(&t);
    store_index_def d;
    kiln_err err;
    status_clear(&err);
    tu_must(store_index_def_parse("by_v:cf:q", &d, &err), &err);
    tu_must(store_index_schema(&t, &d, &is, &err), &err);
    char p[4096];
    snprintf(p, sizeof p, "%s/_index", job);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/_index/by_v", job);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/_index/by_v/i", job);
    mkdir(p, 0755);
    kbuf rec = KBUF_INIT;
    schema_encode(&is, &rec);
    snprintf(p, sizeof p, "%s/_index/by_v/_schema", job);
    tu_must(env_write_file_atomic(p, rec.data, rec.len, &err), &err);
    buf_free(&rec);
    kbuf *keys = calloc((size_t)(hi - lo), sizeof *keys);
    for (int i = lo; i < hi; i++) {
        char row[16], val[32];
        int rn = snprintf(row, sizeof row, "r%05d", i);
        int vn = snprintf(val, sizeof val, "v%lld.%d", (long long)ts, i);
        kslice v = kslice_make(val, (size_t)vn);
        store_index_key(&keys[i - lo], &v, 1, (const uint8_t *)row, (size_t)rn);
    }
    qsort(keys, (size_t)(hi - lo), sizeof *keys, tjob_kbuf_cmp);
    hfile_writer_options o;
    hfile_writer_options_init(&o);
    o.block_size = 1024;
    o.sync = 0;
    hfile_writer *w;
    snprintf(p, sizeof p, "%s/_index/by_v/i/p0", job);
    tu_must(hfile_writer_open(p, &o, &w, &err), &err);
    for (int i = 0; i < hi - lo; i++) {
        kiln_cell c;
        memset(&c, 0, sizeof c);
        c.row = keys[i].data;
        c.row_len = (uint32_t)keys[i].len;
        c.family = (const uint8_t *)STORE_INDEX_FAMILY;
        c.family_len = 1;
        c.qualifier = (const uint8_t *)"";
        c.ts = ts;
        c.type = CELL_TYPE_PUT;
        tu_must(hfile_writer_add(w, &c, &err), &err);
        buf_free(&keys[i]);
    }
    tu_must(hfile_writer_finish(w, NULL, &err), &err);
    free(keys);
    store_index_def_free(&d);
    schema_free(&is);
    schema_free(&t);
}

/* Order-independent digest of a file's cells; fails the test on any error. */
uint64_t
tjob_file_digest(const char *path, uint64_t *cells)
{
    hfile_reader *rd;
    kiln_err err;
    status_clear(&err);
    tu_must(hfile_reader_open(path, NULL, &rd, &err), &err);
    hfile_iter *it = hfile_iter_new(rd);
    uint64_t d = 0;
    tu_must(hfile_iter_seek_first(it, &err), &err);
    while (hfile_iter_valid(it)) {
        const kiln_cell *c = hfile_iter_cell(it);
        uint64_t h = store_rec_fnv64(STORE_REC_FNV64_INIT, c->row, c->row_len);
        h = store_rec_fnv64(h, c->value, c->value_len);
        h = store_rec_fnv64(h, &c->ts, sizeof c->ts);
        d += h;
        (*cells)++;
        tu_must(hfile_iter_next(it, &err), &err);
    }
    hfile_iter_free(it);
    hfile_reader_close(rd);
    return d;
}

void
tjob_write_rows(const char *path, const char *fam, int lo, int hi, int step, int nq, int64_t ts)
{
    hfile_writer_options o;
    hfile_writer_options_init(&o);
    o.codec = CODEC_SNAPPY;
    o.block_size = 512;
    o.sync = 0;
    o.source_task = "attempt_test_r_000001_0";
    hfile_writer *w;
    kiln_err err;
    status_clear(&err);
    tu_must(hfile_writer_open(path, &o, &w, &err), &err);
    for (int i = lo; i < hi; i += step) {
        for (int q = 0; q < nq; q++) {
            char row[16], qual[16], val[64];
            snprintf(row, sizeof row, "row%05d", i);
            snprintf(qual, sizeof qual, "q%d", q);
            int vn = snprintf(val, sizeof val, "v%lld-%d-%d", (long long)ts, i, q);
            kiln_cell c;
            memset(&c, 0, sizeof c);
            c.row = (const uint8_t *)row;
            c.row_len = (uint32_t)strlen(row);
            c.family = (const uint8_t *)fam;
            c.family_len = (uint32_t)strlen(fam);
            c.qualifier = (const uint8_t *)qual;
            c.qualifier_len = (uint32_t)strlen(qual);
            c.ts = ts;
            c.type = CELL_TYPE_PUT;
            c.value = (const uint8_t *)val;
            c.value_len = (uint32_t)vn;
            tu_must(hfile_writer_add(w, &c, &err), &err);
        }
    }
    tu_must(hfile_writer_finish(w, NULL, &err), &err);
}
