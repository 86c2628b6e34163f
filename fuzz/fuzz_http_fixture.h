/* fuzz_http_fixture.h -- a small served table for the serving fuzz targets
 * (fuzz_http.c, fuzz_resp.c): at the first input, a temporary data
 * directory gets table default:t (families f and g, two regions, rows with
 * binary keys and several versions) published through the storage API, and
 * views, a reader and a read context are opened on it, with no background
 * thread, so every route and command has real data to answer from. The
 * directory is removed at exit.
 */
#ifndef KILN_FUZZ_HTTP_FIXTURE_H
#define KILN_FUZZ_HTTP_FIXTURE_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serving/views.h"
#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/manifest.h"
#include "storage/store/schema.h"
#include "storage/store/table.h"

static char fuzz_data_dir[256];
static views *fuzz_views;
static views_reader *fuzz_reader;
static views_ctx *fuzz_ctx;

static void
fuzz_fixture_must(kiln_status st, const kiln_err *err)
{
    if (st != KILN_OK) {
        fprintf(stderr, "fuzz fixture: %s\n", err->msg);
        abort();
    }
}

static int
fuzz_fixture_rm(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void
fuzz_fixture_cleanup(void)
{
    views_reader_free(fuzz_reader);
    views_ctx_free(fuzz_ctx);
    views_close(fuzz_views);
    nftw(fuzz_data_dir, fuzz_fixture_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* Cells of the fixture, in HBase order within each family. */
static void
fuzz_fixture_write(kiln_table *t, manifest_table *mt, uint64_t version)
{
    kiln_err err;
    status_clear(&err);
    static const char *const rows[] = {"", "a/b", "bin\x01", "k1", "k2", "multi", "z\xff"};
    uint32_t seq = 0;
    for (size_t r = 0; r < mt->region_count; r++) {
        for (int fam = 0; fam < 2; fam++) {
            manifest_file mf;
            memset(&mf, 0, sizeof mf);
            snprintf(mf.family, sizeof mf.family, "%s", fam ? "g" : "f");
            table_file_name(version, seq++, mf.name);
            mf.seq = version;
            char p[4096];
            table_file_path(t, mf.name, p, sizeof p);
            hfile_writer_options o;
            hfile_writer_options_init(&o);
            o.block_size = 256;
            o.sync = 0;
            o.bloom = fam ? BLOOM_ROWCOL : BLOOM_ROW;
            hfile_writer *w;
            fuzz_fixture_must(hfile_writer_open(p, &o, &w, &err), &err);
            for (size_t i = 1; i < sizeof rows / sizeof rows[0]; i++) {
                size_t rn = strlen(rows[i]);
                if (manifest_region_for_row(mt, (const uint8_t *)rows[i], rn) != r)
                    continue;
                for (int ts = 3; ts >= 1; ts--) {
                    kiln_cell c;
                    memset(&c, 0, sizeof c);
                    c.row = (const uint8_t *)rows[i];
                    c.row_len = (uint32_t)rn;
                    c.family = (const uint8_t *)(fam ? "g" : "f");
                    c.family_len = 1;
                    c.qualifier = (const uint8_t *)"q";
                    c.qualifier_len = 1;
                    c.ts = ts;
                    c.type = CELL_TYPE_PUT;
                    c.value = (const uint8_t *)rows[i];
                    c.value_len = (uint32_t)rn;
                    fuzz_fixture_must(hfile_writer_add(w, &c, &err), &err);
                    mf.entries++;
                }
            }
            hfile_writer_stats stats;
            fuzz_fixture_must(hfile_writer_finish(w, &stats, &err), &err);
            mf.size = stats.file_size;
            manifest_region_add_file(&mt->regions[r], &mf);
        }
    }
}

static void
fuzz_fixture_open(void)
{
    if (fuzz_views != NULL)
        return;
    const char *base = getenv("TMPDIR");
    snprintf(fuzz_data_dir, sizeof fuzz_data_dir, "%s/kiln-fuzz-http-XXXXXX",
             base && *base ? base : "/tmp");
    if (mkdtemp(fuzz_data_dir) == NULL)
        abort();
    kiln_err err;
    status_clear(&err);
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "t");
    schema_family f;
    fuzz_fixture_must(schema_family_parse("f:versions=3", &f, &err), &err);
    fuzz_fixture_must(schema_add_family(&s, &f, &err), &err);
    fuzz_fixture_must(schema_family_parse("g:versions=2,bloom=rowcol", &f, &err), &err);
    fuzz_fixture_must(schema_add_family(&s, &f, &err), &err);
    fuzz_fixture_must(schema_add_split(&s, (const uint8_t *)"k2", 2, &err), &err);
    fuzz_fixture_must(table_create(fuzz_data_dir, &s, &err), &err);
    schema_free(&s);
    kiln_table *t;
    fuzz_fixture_must(table_open(fuzz_data_dir, "t", &t, &err), &err);
    fuzz_fixture_must(table_lock(t, -1, &err), &err);
    uint64_t version;
    fuzz_fixture_must(table_next_version(t, &version, &err), &err);
    manifest m;
    manifest_init(&m);
    manifest_table *mt = manifest_add_table(&m, table_schema(t));
    m.version = version;
    m.kind = MANIFEST_KIND_REPLACE;
    fuzz_fixture_write(t, mt, version);
    int published;
    fuzz_fixture_must(table_publish(t, &m, &published, &err), &err);
    manifest_free(&m);
    table_close(t);
    views_options o;
    views_options_init(&o);
    o.block_cache_bytes = 1u << 20;
    o.row_cache_bytes = 256u << 10;
    fuzz_fixture_must(views_open(fuzz_data_dir, &o, &fuzz_views, &err), &err);
    fuzz_reader = views_reader_new(fuzz_views);
    fuzz_ctx = views_ctx_new();
    views_reader_attach(fuzz_reader, fuzz_ctx);
    atexit(fuzz_fixture_cleanup);
}

#endif
