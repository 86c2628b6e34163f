/* test_bulkload.c -- the bulk loader against real HFiles written by the
 * writer: mapping to regions, hard links that leave the job's files in place,
 * copies across file systems, straddling files split into one file per region
 * (every cell kept, each piece inside its region), refusals (_SUCCESS missing,
 * unknown family, corrupt file, --no-split), duplicate detection in both
 * modes, the lock, and dry runs that write nothing; index tables in a job
 * output (_index/NAME/_schema checks, loaded into the same manifest, appends
 * that must keep the index set, replaces that drop it) and salted tables
 * (rows without their bucket byte refused). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bulkload/bulkload.h"
#include "storage/hfile/cell.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/manifest.h"
#include "storage/store/store_index.h"
#include "storage/store/store_salt.h"
#include "storage/store/table.h"
#include "tests/support/job_fixture.h"
#include "tests/support/test_util.h"

static uint64_t rng_state;

static uint64_t
rnd(void)
{
    return tu_splitmix64(&rng_state);
}

static void
rm_rf(const char *dir)
{
    tu_rmrf(dir);
}

static char base[512];

static void
path_of(char *out, size_t cap, const char *rel)
{
    snprintf(out, cap, "%s/%s", base, rel);
}

static void
touch(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
}

static void
mkjob(const char *job, const char *const *fams, size_t nf, int success)
{
    char p[4096];
    mkdir(job, 0755);
    for (size_t i = 0; i < nf; i++) {
        snprintf(p, sizeof p, "%s/%s", job, fams[i]);
        mkdir(p, 0755);
    }
    if (success) {
        snprintf(p, sizeof p, "%s/_SUCCESS", job);
        touch(p);
    }
}

/* Table "t": families a and cf, splits row01000 and row02000 (3 regions). */
static void
make_table(const char *data, const char *name)
{
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "%s", name);
    kiln_err err;
    status_clear(&err);
    schema_family f;
    tu_must(schema_family_parse("cf:versions=3", &f, &err), &err);
    tu_must(schema_add_family(&s, &f, &err), &err);
    tu_must(schema_family_parse("a:compression=gz,bloom=rowcol", &f, &err), &err);
    tu_must(schema_add_family(&s, &f, &err), &err);
    tu_must(schema_add_split(&s, (const uint8_t *)"row01000", 8, &err), &err);
    tu_must(schema_add_split(&s, (const uint8_t *)"row02000", 8, &err), &err);
    tu_must(table_create(data, &s, &err), &err);
    schema_free(&s);
}

static int
setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/kiln-bl-XXXXXX", t ? t : "/tmp");
    assert_non_null(mkdtemp(base));
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    rm_rf(base);
    return 0;
}

static void
read_current(const char *data, const char *name, manifest *m)
{
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    tu_must(table_open(data, name, &t, &err), &err);
    tu_must(table_read_current(t, m, &err), &err);
    table_close(t);
}

/* Count the cells of every file of region r (family fam) and check each
 * cell's row lies inside the region. */
static uint64_t
region_cells(const char *data, const manifest *m, size_t r, const char *fam)
{
    const manifest_region *reg = &m->tables[0].regions[r];
    uint64_t n = 0;
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    tu_must(table_open(data, m->tables[0].schema.name, &t, &err), &err);
    for (size_t f = 0; f < reg->file_count; f++) {
        if (strcmp(reg->files[f].family, fam) != 0)
            continue;
        char p[4096];
        table_file_path(t, reg->files[f].name, p, sizeof p);
        hfile_reader *rd;
        tu_must(hfile_reader_open(p, NULL, &rd, &err), &err);
        hfile_iter *it = hfile_iter_new(rd);
        tu_must(hfile_iter_seek_first(it, &err), &err);
        uint64_t fn = 0;
        while (hfile_iter_valid(it)) {
            const kiln_cell *c = hfile_iter_cell(it);
            kslice row = kslice_make(c->row, c->row_len);
            assert_true(reg->start.len == 0 || kslice_cmp(buf_slice(&reg->start), row) <= 0);
            assert_true(reg->end.len == 0 || kslice_cmp(row, buf_slice(&reg->end)) < 0);
            assert_true(c->family_len == strlen(fam) && memcmp(c->family, fam, c->family_len) == 0);
            fn++;
            tu_must(hfile_iter_next(it, &err), &err);
        }
        assert_int_equal(fn, reg->files[f].entries);
        n += fn;
        hfile_iter_free(it);
        hfile_reader_close(rd);
    }
    table_close(t);
    return n;
}

static void
load_replace_links(void **state)
{
    (void)state;
    char data[1024], job[1024], p[4096];
    path_of(data, sizeof data, "d1");
    path_of(job, sizeof job, "job1");
    make_table(data, "t");
    const char *fams[] = {"cf", "a"};
    mkjob(job, fams, 2, 1);
    /* one file per region for cf, one file in region 1 for a, one empty file */
    snprintf(p, sizeof p, "%s/cf/part-r-00000", job);
    tjob_write_rows(p, "cf", 0, 1000, 1, 2, 100);
    snprintf(p, sizeof p, "%s/cf/part-r-00001", job);
    tjob_write_rows(p, "cf", 1000, 2000, 1, 2, 100);
    snprintf(p, sizeof p, "%s/cf/part-r-00002", job);
    tjob_write_rows(p, "cf", 2000, 3000, 1, 2, 100);
    snprintf(p, sizeof p, "%s/a/part-r-00001", job);
    tjob_write_rows(p, "a", 1200, 1300, 1, 1, 100);
    snprintf(p, sizeof p, "%s/a/part-r-00009", job);
    tjob_write_rows(p, "a", 0, 0, 1, 1, 100);
    /* skipped like HBase does: _ and . names, sub-directories */
    snprintf(p, sizeof p, "%s/cf/_partial", job);
    touch(p);
    snprintf(p, sizeof p, "%s/cf/.crc", job);
    touch(p);
    snprintf(p, sizeof p, "%s/_logs", job);
    mkdir(p, 0755);

    bulkload_options o;
    bulkload_options_init(&o);
    bulkload_result r;
    kiln_err err;
    status_clear(&err);
    tu_must(bulkload_run(data, "t", job, &o, &r, &err), &err);
    assert_int_equal(r.version, 1);
    assert_int_equal(r.parent, 0);
    assert_int_equal(r.file_count, 5);
    assert_int_equal(r.linked + r.copied, 4);
    assert_int_equal(r.skipped, 1);
    assert_int_equal(r.split, 0);
    assert_int_equal(r.regions_loaded, 3);
    assert_int_equal(r.cells, 6100);
    assert_int_equal(r.gc_err.code, KILN_OK);
    bulkload_result_free(&r);

    /* the job's files are still there, and not shared with the store */
    struct stat sb;
    snprintf(p, sizeof p, "%s/cf/part-r-00000", job);
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_nlink, 1);

    manifest m;
    read_current(data, "t", &m);
    assert_int_equal(m.kind, MANIFEST_KIND_REPLACE);
    assert_int_equal(manifest_file_count(&m), 4);
    assert_int_equal(region_cells(data, &m, 0, "cf"), 2000);
    assert_int_equal(region_cells(data, &m, 1, "cf"), 2000);
    assert_int_equal(region_cells(data, &m, 2, "cf"), 2000);
    assert_int_equal(region_cells(data, &m, 1, "a"), 100);
    assert_int_equal(region_cells(data, &m, 0, "a"), 0);
    assert_int_equal(m.source_count, 1);
    assert_non_null(strstr(m.sources[0].path, "job1"));
    manifest_free(&m);

    /* the same output again: detected, nothing done */
    status_clear(&err);
    tu_must(bulkload_run(data, "t", job, &o, &r, &err), &err);
    assert_true(r.already_loaded);
    assert_int_equal(r.loaded_in, 1);
    assert_int_equal(r.version, 0);
    bulkload_result_free(&r);
    o.mode = BULKLOAD_APPEND;
    tu_must(bulkload_run(data, "t", job, &o, &r, &err), &err);
    assert_true(r.already_loaded);
    bulkload_result_free(&r);
    read_current(data, "t", &m);
    assert_int_equal(m.version, 1);
    manifest_free(&m);

    /* rewriting a job file in place (O_TRUNC) leaves the loaded version as it was */
    FILE *jf = fopen(p, "w");
    assert_non_null(jf);
    fputs("rewritten by another tool", jf);
    fclose(jf);
    read_current(data, "t", &m);
    assert_int_equal(region_cells(data, &m, 0, "cf"), 2000);
    assert_int_equal(region_cells(data, &m, 1, "cf"), 2000);
    assert_int_equal(region_cells(data, &m, 2, "cf"), 2000);
    manifest_free(&m);
}

static void
load_append_and_replace(void **state)
{
    (void)state;
    char data[1024], j1[1024], j2[1024], j3[1024], p[4096];
    path_of(data, sizeof data, "d2");
    path_of(j1, sizeof j1, "ja1");
    path_of(j2, sizeof j2, "ja2");
    path_of(j3, sizeof j3, "ja3");
    make_table(data, "ns_x:t");
    const char *fams[] = {"cf"};
    mkjob(j1, fams, 1, 1);
    mkjob(j2, fams, 1, 1);
    mkjob(j3, fams, 1, 1);
    snprintf(p, sizeof p, "%s/cf/f0", j1);
    tjob_write_rows(p, "cf", 0, 500, 1, 1, 100);
    snprintf(p, sizeof p, "%s/cf/f0", j2);
    tjob_write_rows(p, "cf", 100, 600, 1, 1, 200);
    snprintf(p, sizeof p, "%s/cf/f0", j3);
    tjob_write_rows(p, "cf", 2500, 2600, 1, 1, 300);
    bulkload_options o;
    bulkload_options_init(&o);
    bulkload_result r;
    kiln_err err;
    status_clear(&err);
    tu_must(bulkload_run(data, "ns_x:t", j1, &o, &r, &err), &err);
    bulkload_result_free(&r);
    o.mode = BULKLOAD_APPEND;
    tu_must(bulkload_run(data, "ns_x:t", j2, &o, &r, &err), &err);
    assert_int_equal(r.version, 2);
    assert_int_equal(r.parent, 1);
    bulkload_result_free(&r);
    manifest m;
    read_current(data, "ns_x:t", &m);
    assert_int_equal(m.kind, MANIFEST_KIND_APPEND);
    assert_int_equal(m.source_count, 2);
    assert_int_equal(m.tables[0].regions[0].file_count, 2);
    /* newer load first */
    assert_int_equal(m.tables[0].regions[0].files[0].seq, 2);
    assert_int_equal(m.tables[0].regions[0].files[1].seq, 1);
    assert_int_equal(region_cells(data, &m, 0, "cf"), 1000);
    manifest_free(&m);
    /* appending j1 again: it is part of the current version */
    tu_must(bulkload_run(data, "ns_x:t", j1, &o, &r, &err), &err);
    assert_true(r.already_loaded);
    assert_int_equal(r.loaded_in, 1);
    bulkload_result_free(&r);
    /* replace with j3: the view is regenerated, only j3's file remains */
    o.mode = BULKLOAD_REPLACE;
    tu_must(bulkload_run(data, "ns_x:t", j3, &o, &r, &err), &err);
    assert_int_equal(r.version, 3);
    bulkload_result_free(&r);
    read_current(data, "ns_x:t", &m);
    assert_int_equal(manifest_file_count(&m), 1);
    assert_int_equal(m.source_count, 1);
    assert_int_equal(region_cells(data, &m, 2, "cf"), 100);
    manifest_free(&m);
    /* and now j1 is not in the current version: loading it again is a real load */
    tu_must(bulkload_run(data, "ns_x:t", j1, &o, &r, &err), &err);
    assert_false(r.already_loaded);
    assert_int_equal(r.version, 4);
    bulkload_result_free(&r);
}

static void
load_split_straddling(void **state)
{
    (void)state;
    char data[1024], job[1024], p[4096];
    path_of(data, sizeof data, "d3");
    path_of(job, sizeof job, "js");
    make_table(data, "t");
    const char *fams[] = {"cf", "a"};
    mkjob(job, fams, 2, 1);
    /* spans all three regions; another spans 0..1 only; rowcol-bloom family a */
    snprintf(p, sizeof p, "%s/cf/all", job);
    tjob_write_rows(p, "cf", 0, 3000, 3, 2, 100);
    snprintf(p, sizeof p, "%s/a/two", job);
    tjob_write_rows(p, "a", 990, 1010, 1, 3, 100);
    bulkload_options o;
    bulkload_options_init(&o);
    o.no_split = 1;
    bulkload_result r;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "t", job, &o, &r, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "straddle"));
    assert_non_null(strstr(err.msg, "row01000"));
    bulkload_result_free(&r);
    o.no_split = 0;
    status_clear(&err);
    tu_must(bulkload_run(data, "t", job, &o, &r, &err), &err);
    assert_int_equal(r.split, 2);
    assert_int_equal(r.pieces, 5);
    assert_int_equal(r.linked, 0);
    bulkload_result_free(&r);
    manifest m;
    read_current(data, "t", &m);
    assert_int_equal(manifest_file_count(&m), 5);
    uint64_t total = region_cells(data, &m, 0, "cf") + region_cells(data, &m, 1, "cf") +
                     region_cells(data, &m, 2, "cf");
    assert_int_equal(total, 2000); /* 1000 rows x 2 qualifiers */
    assert_int_equal(region_cells(data, &m, 0, "cf"), 2 * 334);
    assert_int_equal(region_cells(data, &m, 0, "a"), 30);
    assert_int_equal(region_cells(data, &m, 1, "a"), 30);
    /* the pieces use the family's settings: a is gz with a rowcol bloom */
    kiln_table *t;
    tu_must(table_open(data, "t", &t, &err), &err);
    for (size_t f = 0; f < m.tables[0].regions[1].file_count; f++) {
        const manifest_file *mf = &m.tables[0].regions[1].files[f];
        table_file_path(t, mf->name, p, sizeof p);
        hfile_reader *rd;
        tu_must(hfile_reader_open(p, NULL, &rd, &err), &err);
        if (strcmp(mf->family, "a") == 0) {
            assert_int_equal(hfile_reader_trailer(rd)->compression_codec, CODEC_GZ);
            assert_int_equal(hfile_reader_bloom_type(rd), BLOOM_ROWCOL);
        } else {
            assert_int_equal(hfile_reader_trailer(rd)->compression_codec, CODEC_SNAPPY);
        }
        kslice task;
        assert_true(hfile_fileinfo_get(hfile_reader_fileinfo(rd), "BULKLOAD_SOURCE_TASK", &task));
        assert_true(kslice_eq(task, kslice_str("attempt_test_r_000001_0")));
        tu_must(hfile_reader_check(rd, NULL, &err), &err);
        hfile_reader_close(rd);
    }
    table_close(t);
    manifest_free(&m);
}

static void
load_refusals(void **state)
{
    (void)state;
    char data[1024], job[1024], p[4096];
    path_of(data, sizeof data, "d4");
    path_of(job, sizeof job, "jr");
    make_table(data, "t");
    const char *fams[] = {"cf"};
    mkjob(job, fams, 1, 0);
    snprintf(p, sizeof p, "%s/cf/f", job);
    tjob_write_rows(p, "cf", 0, 100, 1, 1, 100);
    bulkload_options o;
    bulkload_options_init(&o);
    bulkload_result r;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "t", job, &o, &r, &err), KILN_NOT_FOUND);
    assert_non_null(strstr(err.msg, "_SUCCESS"));
    bulkload_result_free(&r);
    snprintf(p, sizeof p, "%s/_SUCCESS", job);
    touch(p);
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "nosuch", job, &o, &r, &err), KILN_NOT_FOUND);
    assert_non_null(strstr(err.msg, "default:nosuch"));
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "t", "/nonexistent/job", &o, &r, &err), KILN_NOT_FOUND);
    bulkload_result_free(&r);

    /* a family the table does not have */
    snprintf(p, sizeof p, "%s/zz", job);
    mkdir(p, 0755);
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "t", job, &o, &r, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "'zz'"));
    bulkload_result_free(&r);
    rmdir(p);

    /* cells of another family inside cf/ */
    snprintf(p, sizeof p, "%s/cf/g", job);
    tjob_write_rows(p, "a", 0, 10, 1, 1, 100);
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "t", job, &o, &r, &err), KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, "cf/g"));
    bulkload_result_free(&r);
    unlink(p);

    /* a corrupt file: every flipped byte in the trailer or load-on-open
     * section is a clean error naming the file (or harmless), never a load
     * of bad data into the store */
    snprintf(p, sizeof p, "%s/cf/f", job);
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
    int refused = 0;
    for (int i = 0; i < 40; i++) {
        off_t at = sb.st_size - 4096 - 200 + (off_t)(rnd() % 4296);
        FILE *f = fopen(p, "r+b");
        fseek(f, at, SEEK_SET);
        int ch = fgetc(f);
        fseek(f, at, SEEK_SET);
        fputc(ch ^ 0x40, f);
        fclose(f);
        status_clear(&err);
        o.dry_run = 1;
        kiln_status st = bulkload_run(data, "t", job, &o, &r, &err);
        bulkload_result_free(&r);
        if (st != KILN_OK) {
            refused++;
            assert_non_null(strstr(err.msg, "cf/f"));
        }
        f = fopen(p, "r+b");
        fseek(f, at, SEEK_SET);
        fputc(ch, f);
        fclose(f);
    }
    assert_true(refused > 0);
    /* a truncated file */
    assert_int_equal(truncate(p, sb.st_size - 1), 0);
    o.dry_run = 0;
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "t", job, &o, &r, &err), KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, "cf/f"));
    bulkload_result_free(&r);
    /* nothing reached the store */
    kiln_table *t;
    tu_must(table_open(data, "t", &t, &err), &err);
    manifest_pointer ptr;
    assert_int_equal(table_current(t, &ptr, &err), KILN_NOT_FOUND);
    table_close(t);
    snprintf(p, sizeof p, "%s/default/t/files", data);
    assert_int_equal(rmdir(p), 0); /* empty */
}

/* Write job/_index/NAME/_schema for index `spec` of table (schema from the
 * store), with its index table renamed to `rename` when not NULL. */
static void
write_index_schema(const char *data, const char *job, const char *dir_name, const char *spec,
                   const char *rename)
{
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    tu_must(table_open(data, "t", &t, &err), &err);
    store_index_def d;
    tu_must(store_index_def_parse(spec, &d, &err), &err);
    kiln_schema is;
    tu_must(store_index_schema(table_schema(t), &d, &is, &err), &err);
    if (rename != NULL)
        snprintf(is.name, sizeof is.name, "%s", rename);
    char p[4096];
    snprintf(p, sizeof p, "%s/_index", job);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/_index/%s", job, dir_name);
    mkdir(p, 0755);
    kbuf rec = KBUF_INIT;
    schema_encode(&is, &rec);
    snprintf(p, sizeof p, "%s/_index/%s/_schema", job, dir_name);
    tu_must(env_write_file_atomic(p, rec.data, rec.len, &err), &err);
    buf_free(&rec);
    schema_free(&is);
    store_index_def_free(&d);
    table_close(t);
}

/* Index directories in a job output: loaded with the table when well formed,
 * refused with a reason otherwise; appends must keep the index set. */
static void
load_indexes(void **state)
{
    (void)state;
    char data[1024], job[1024], p[4096];
    path_of(data, sizeof data, "didx");
    path_of(job, sizeof job, "jidx1");
    make_table(data, "t");
    const char *fams[] = {"cf"};
    mkjob(job, fams, 1, 1);
    snprintf(p, sizeof p, "%s/cf/f", job);
    tjob_write_rows(p, "cf", 0, 100, 1, 1, 100);
    bulkload_options o;
    bulkload_options_init(&o);
    bulkload_result r;
    kiln_err err;

    /* no _schema */
    snprintf(p, sizeof p, "%s/_index", job);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/_index/by_q", job);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/_index/by_q/i", job);
    mkdir(p, 0755);
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "t", job, &o, &r, &err), KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, "_index/by_q/_schema: missing"));
    bulkload_result_free(&r);
    /* a schema naming another index than its directory */
    write_index_schema(data, job, "by_q", "other:cf:q0", NULL);
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "t", job, &o, &r, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "defines index 'other'"));
    bulkload_result_free(&r);
    /* a column of a family the table lacks, an index of another table */
    write_index_schema(data, job, "by_q", "by_q:cf:q0", "default:u.idx.by_q");
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "t", job, &o, &r, &err), KILN_INVALID);
    bulkload_result_free(&r);
    /* a corrupt schema record */
    write_index_schema(data, job, "by_q", "by_q:cf:q0", NULL);
    snprintf(p, sizeof p, "%s/_index/by_q/_schema", job);
    FILE *f = fopen(p, "r+b");
    fseek(f, 20, SEEK_SET);
    fputc('#', f);
    fclose(f);
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "t", job, &o, &r, &err), KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, "_schema"));
    bulkload_result_free(&r);
    /* well formed, with no entries yet: loads, and the manifest lists it */
    write_index_schema(data, job, "by_q", "by_q:cf:q0", NULL);
    status_clear(&err);
    tu_must(bulkload_run(data, "t", job, &o, &r, &err), &err);
    assert_int_equal(r.index_count, 1);
    assert_string_equal(r.indexes[0], "by_q");
    bulkload_result_free(&r);
    manifest m;
    read_current(data, "t", &m);
    assert_int_equal(m.table_count, 2);
    assert_string_equal(m.tables[1].schema.name, "default:t.idx.by_q");
    manifest_free(&m);

    /* appends: a job without the index, or with another one, is refused */
    char job2[1024];
    path_of(job2, sizeof job2, "jidx2");
    mkjob(job2, fams, 1, 1);
    snprintf(p, sizeof p, "%s/cf/f", job2);
    tjob_write_rows(p, "cf", 100, 200, 1, 1, 200);
    o.mode = BULKLOAD_APPEND;
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "t", job2, &o, &r, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "must build the indexes of version 1 (by_q)"));
    bulkload_result_free(&r);
    write_index_schema(data, job2, "by_q", "by_q:cf:q1", NULL);
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "t", job2, &o, &r, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "differs from version 1"));
    bulkload_result_free(&r);
    write_index_schema(data, job2, "by_q", "by_q:cf:q0", NULL);
    status_clear(&err);
    tu_must(bulkload_run(data, "t", job2, &o, &r, &err), &err);
    assert_int_equal(r.version, 2);
    bulkload_result_free(&r);
    /* a replace without it drops it */
    char job3[1024];
    path_of(job3, sizeof job3, "jidx3");
    mkjob(job3, fams, 1, 1);
    snprintf(p, sizeof p, "%s/cf/f", job3);
    tjob_write_rows(p, "cf", 0, 10, 1, 1, 300);
    o.mode = BULKLOAD_REPLACE;
    status_clear(&err);
    tu_must(bulkload_run(data, "t", job3, &o, &r, &err), &err);
    bulkload_result_free(&r);
    read_current(data, "t", &m);
    assert_int_equal(m.table_count, 1);
    manifest_free(&m);
}

/* A salted table refuses rows without their bucket byte and takes rows
 * with it. */
static void
load_salted(void **state)
{
    (void)state;
    char data[1024], job[1024], p[4096];
    path_of(data, sizeof data, "dsalt");
    path_of(job, sizeof job, "jsalt");
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "salted");
    kiln_err err;
    status_clear(&err);
    schema_family f;
    schema_family_defaults(&f, "cf");
    tu_must(schema_add_family(&s, &f, &err), &err);
    s.salt_buckets = 4;
    schema_salt_default_splits(&s);
    tu_must(table_create(data, &s, &err), &err);
    schema_free(&s);
    const char *fams[] = {"cf"};
    mkjob(job, fams, 1, 1);
    snprintf(p, sizeof p, "%s/cf/f", job);
    tjob_write_rows(p, "cf", 0, 50, 1, 1, 100);
    bulkload_options o;
    bulkload_options_init(&o);
    bulkload_result r;
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "salted", job, &o, &r, &err), KILN_INVALID);
    if (strstr(err.msg, "no valid bucket byte") == NULL)
        fail_msg("%s", err.msg);
    bulkload_result_free(&r);
    /* the same rows salted, one file per bucket */
    unlink(p);
    for (uint32_t b = 0; b < 4; b++) {
        hfile_writer_options wo;
        hfile_writer_options_init(&wo);
        wo.sync = 0;
        hfile_writer *w;
        snprintf(p, sizeof p, "%s/cf/b%u", job, b);
        tu_must(hfile_writer_open(p, &wo, &w, &err), &err);
        for (int i = 0; i < 50; i++) {
            char row[16];
            int n = snprintf(row, sizeof row, "row%05d", i);
            if (store_salt_bucket((const uint8_t *)row, (size_t)n, 4) != b)
                continue;
            kbuf k = KBUF_INIT;
            store_salt_key(&k, 4, (const uint8_t *)row, (size_t)n);
            kiln_cell c;
            memset(&c, 0, sizeof c);
            c.row = k.data;
            c.row_len = (uint32_t)k.len;
            c.family = (const uint8_t *)"cf";
            c.family_len = 2;
            c.qualifier = (const uint8_t *)"q";
            c.qualifier_len = 1;
            c.ts = 1;
            c.type = CELL_TYPE_PUT;
            tu_must(hfile_writer_add(w, &c, &err), &err);
            buf_free(&k);
        }
        tu_must(hfile_writer_finish(w, NULL, &err), &err);
    }
    status_clear(&err);
    tu_must(bulkload_run(data, "salted", job, &o, &r, &err), &err);
    assert_int_equal(r.regions_loaded, 4);
    assert_int_equal(r.split, 0);
    bulkload_result_free(&r);
}

static void
load_lock_and_dry_run(void **state)
{
    (void)state;
    char data[1024], job[1024], p[4096];
    path_of(data, sizeof data, "d5");
    path_of(job, sizeof job, "jl");
    make_table(data, "t");
    const char *fams[] = {"cf"};
    mkjob(job, fams, 1, 1);
    snprintf(p, sizeof p, "%s/cf/f", job);
    tjob_write_rows(p, "cf", 0, 3000, 1, 1, 100);
    kiln_table *holder;
    kiln_err err;
    status_clear(&err);
    tu_must(table_open(data, "t", &holder, &err), &err);
    tu_must(table_lock(holder, 0, &err), &err);
    bulkload_options o;
    bulkload_options_init(&o);
    bulkload_result r;
    assert_int_equal(bulkload_run(data, "t", job, &o, &r, &err), KILN_BUSY);
    assert_non_null(strstr(err.msg, "--wait"));
    bulkload_result_free(&r);
    o.lock_wait_ms = 60;
    status_clear(&err);
    assert_int_equal(bulkload_run(data, "t", job, &o, &r, &err), KILN_BUSY);
    assert_non_null(strstr(err.msg, "gave up"));
    bulkload_result_free(&r);
    /* a dry run needs no lock and writes nothing */
    o.dry_run = 1;
    status_clear(&err);
    tu_must(bulkload_run(data, "t", job, &o, &r, &err), &err);
    assert_int_equal(r.version, 0);
    assert_int_equal(r.files[0].action, BULKLOAD_SPLIT);
    assert_int_equal(r.files[0].region_first, 0);
    assert_int_equal(r.files[0].region_last, 2);
    bulkload_result_free(&r);
    snprintf(p, sizeof p, "%s/default/t/files", data);
    assert_int_equal(rmdir(p), 0);
    assert_int_equal(mkdir(p, 0755), 0);
    table_close(holder);
    o.dry_run = 0;
    o.lock_wait_ms = 0;
    tu_must(bulkload_run(data, "t", job, &o, &r, &err), &err);
    assert_int_equal(r.version, 1);
    bulkload_result_free(&r);
}

/* Output on another file system is copied. The other file system is a
 * tmpfs this test mounts (as root), else /dev/shm when it is one; with
 * neither the test fails: it never passes without having run. */
static void
load_copy_across_fs(void **state)
{
    (void)state;
    struct stat a, b;
    char fs[1024];
    int mounted = 0;
    path_of(fs, sizeof fs, "otherfs");
    assert_int_equal(mkdir(fs, 0755), 0);
    if (mount("kiln-test", fs, "tmpfs", 0, "size=64m") == 0) {
        mounted = 1;
    } else {
        int e = errno;
        rmdir(fs);
        if (stat("/dev/shm", &b) != 0 || stat(base, &a) != 0 || a.st_dev == b.st_dev)
            fail_msg("no second file system: mounting a tmpfs failed (%s) and /dev/shm is "
                     "absent or on the same device; run as root",
                     strerror(e));
        snprintf(fs, sizeof fs, "/dev/shm");
    }
    assert_int_equal(stat(fs, &b), 0);
    assert_int_equal(stat(base, &a), 0);
    assert_int_not_equal(a.st_dev, b.st_dev);
    printf("  job output on %s (%s)\n", fs, mounted ? "tmpfs mounted by the test" : "tmpfs");
    char data[1024], job[1200], p[4096];
    path_of(data, sizeof data, "d6");
    snprintf(job, sizeof job, "%s/kiln-bl-job-%ld", fs, (long)getpid());
    make_table(data, "t");
    const char *fams[] = {"cf"};
    mkjob(job, fams, 1, 1);
    snprintf(p, sizeof p, "%s/cf/f", job);
    tjob_write_rows(p, "cf", 0, 900, 1, 1, 100);
    bulkload_options o;
    bulkload_options_init(&o);
    bulkload_result r;
    kiln_err err;
    status_clear(&err);
    tu_must(bulkload_run(data, "t", job, &o, &r, &err), &err);
    assert_int_equal(r.copied, 1);
    assert_int_equal(r.linked, 0);
    bulkload_result_free(&r);
    assert_int_equal(stat(p, &a), 0);
    assert_int_equal(a.st_nlink, 1);
    manifest m;
    read_current(data, "t", &m);
    assert_int_equal(region_cells(data, &m, 0, "cf"), 900);
    manifest_free(&m);
    rm_rf(job);
    if (mounted) {
        assert_int_equal(umount(fs), 0);
        rmdir(fs);
    }
}

/* A failed fsync after the CURRENT rename: the new version is current, and
 * the load says so (r.unconfirmed, the message names the version) instead of
 * a bare error that promises the old version. Every fsync of a load is
 * failed in turn; the one after the rename must be among them. */
static void
load_unconfirmed_durability(void **state)
{
    (void)state;
    char data[1024], job[1024], p[4096];
    path_of(data, sizeof data, "d9");
    path_of(job, sizeof job, "j9");
    make_table(data, "t");
    const char *fams[] = {"cf"};
    mkjob(job, fams, 1, 1);
    snprintf(p, sizeof p, "%s/cf/f", job);
    tjob_write_rows(p, "cf", 0, 900, 1, 1, 100);
    bulkload_options o;
    bulkload_options_init(&o);
    bulkload_result r;
    kiln_err err;
    status_clear(&err);
    env_fault_clear();
    tu_must(bulkload_run(data, "t", job, &o, &r, &err), &err);
    bulkload_result_free(&r);
    long syncs = env_op_calls(ENV_OP_SYNC);
    assert_true(syncs > 3);
    int unconfirmed = 0;
    for (long k = 1; k <= syncs; k++) {
        rm_rf(data);
        make_table(data, "t");
        env_fault_clear();
        env_fault_arm(ENV_OP_SYNC, k, EIO);
        status_clear(&err);
        kiln_status st = bulkload_run(data, "t", job, &o, &r, &err);
        env_fault_clear();
        manifest m;
        kiln_table *t;
        kiln_err e2;
        status_clear(&e2);
        tu_must(table_open(data, "t", &t, &e2), &e2);
        kiln_status cst = table_read_current(t, &m, &e2);
        table_close(t);
        if (st == KILN_OK) {
            assert_int_equal(cst, KILN_OK);
            manifest_free(&m);
        } else if (cst == KILN_OK) {
            /* published: only the confirmation may be missing */
            assert_int_equal(m.version, r.version);
            manifest_free(&m);
            if (!r.unconfirmed)
                fail_msg("fsync %ld failed, version %llu is current, but the load reported "
                         "only: %s", k, (unsigned long long)r.version, err.msg);
            assert_non_null(strstr(err.msg, "is current but may not be durable"));
            unconfirmed++;
        } else {
            assert_int_equal(cst, KILN_NOT_FOUND);
            assert_int_equal(r.unconfirmed, 0);
        }
        bulkload_result_free(&r);
    }
    printf("  %ld fsyncs failed in turn, %d left the new version current unconfirmed\n", syncs,
           unconfirmed);
    assert_int_equal(unconfirmed, 1);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_bulkload: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(load_replace_links),
        cmocka_unit_test(load_append_and_replace),
        cmocka_unit_test(load_split_straddling),
        cmocka_unit_test(load_refusals),
        cmocka_unit_test(load_lock_and_dry_run),
        cmocka_unit_test(load_copy_across_fs),
        cmocka_unit_test(load_indexes),
        cmocka_unit_test(load_salted),
        cmocka_unit_test(load_unconfirmed_durability),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
