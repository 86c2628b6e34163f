/* test_store_table.c -- the region store's metadata: table names and family
 * settings, schema and manifest records (round trips with random binary keys,
 * every flipped byte and every truncation is a clean error), and the table
 * directory: create, list, lock, publish, versions, rollback, GC. */
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
#include <sys/stat.h>
#include <unistd.h>

#include "storage/base/env.h"
#include "storage/store/manifest.h"
#include "storage/store/schema.h"
#include "storage/base/store_rec.h"
#include "storage/store/table.h"
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

static char *
make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/kiln-store-XXXXXX", base ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return strdup(d);
}

/* ------------------------------------------------------------------ names, families */

static void
table_names(void **state)
{
    (void)state;
    char out[SCHEMA_NAME_MAX + 1];
    kiln_err err;
    status_clear(&err);
    tu_must(schema_name_canon("t1", out, &err), &err);
    assert_string_equal(out, "default:t1");
    tu_must(schema_name_canon("ns_1:user.actions-v2", out, &err), &err);
    assert_string_equal(out, "ns_1:user.actions-v2");
    static const char *bad[] = {"", ":t", "ns:", "../x", "a/b", ".hidden", "ns:.x", "n-s:t",
                                "t t", "ns:a:b", "-x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        status_clear(&err);
        assert_int_equal(schema_name_canon(bad[i], out, &err), KILN_INVALID);
        assert_non_null(strstr(err.msg, "table"));
    }
    char ns[SCHEMA_NAME_MAX + 1], tb[SCHEMA_NAME_MAX + 1];
    schema_name_split("ns_1:t", ns, tb);
    assert_string_equal(ns, "ns_1");
    assert_string_equal(tb, "t");
}

static void
family_specs(void **state)
{
    (void)state;
    schema_family f;
    kiln_err err;
    status_clear(&err);
    tu_must(schema_family_parse("cf", &f, &err), &err);
    assert_string_equal(f.name, "cf");
    assert_int_equal(f.max_versions, 1);
    assert_true(f.ttl_s == SCHEMA_TTL_FOREVER);
    assert_int_equal(f.codec, CODEC_SNAPPY);
    assert_int_equal(f.bloom, BLOOM_ROW);
    assert_int_equal(f.block_size, 65536);
    tu_must(schema_family_parse("d:versions=5,ttl=86400,compression=zstd,bloom=rowcol,blocksize=16K",
                             &f, &err),
         &err);
    assert_int_equal(f.max_versions, 5);
    assert_true(f.ttl_s == 86400);
    assert_int_equal(f.codec, CODEC_ZSTD);
    assert_int_equal(f.bloom, BLOOM_ROWCOL);
    assert_int_equal(f.block_size, 16384);
    tu_must(schema_family_parse("e:compression=none,bloom=none,ttl=forever", &f, &err), &err);
    assert_int_equal(f.codec, CODEC_NONE);
    assert_int_equal(f.bloom, BLOOM_NONE);
    tu_must(schema_family_parse("g:compression=gz,compression=lz4", &f, &err), &err);
    assert_int_equal(f.codec, CODEC_LZ4);
    static const char *bad[] = {"", ":versions=1", "cf:versions=0", "cf:versions=x",
                                "cf:ttl=-1", "cf:ttl=0", "cf:compression=lzo",
                                "cf:bloom=prefix", "cf:blocksize=1", "cf:blocksize=1T",
                                "cf:color=red", "cf:versions", "cf:=3", "c/f", "cf:ttl=99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        status_clear(&err);
        assert_int_equal(schema_family_parse(bad[i], &f, &err), KILN_INVALID);
        assert_non_null(strstr(err.msg, "family"));
    }
}

/* ------------------------------------------------------------------ records */

static void
random_schema(kiln_schema *s, const char *name)
{
    kiln_err err;
    status_clear(&err);
    schema_init(s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->created_ms = (int64_t)(rnd() >> 20);
    int nf = 1 + (int)(rnd() % 4);
    for (int i = 0; i < nf; i++) {
        schema_family f;
        char fn[16];
        snprintf(fn, sizeof fn, "f%d", (int)(rnd() % 100));
        schema_family_defaults(&f, fn);
        f.max_versions = 1 + (uint32_t)(rnd() % 10);
        f.codec = (rnd() & 1) ? CODEC_SNAPPY : CODEC_GZ;
        schema_add_family(s, &f, NULL); /* duplicates refused, fine */
    }
    int ns = (int)(rnd() % 6);
    for (int i = 0; i < ns; i++) {
        uint8_t k[40];
        size_t n = 1 + rnd() % sizeof k;
        for (size_t j = 0; j < n; j++)
            k[j] = (uint8_t)rnd();
        schema_add_split(s, k, n, &err);
    }
    if (rnd() & 1)
        schema_set_prop(s, "owner", "batch");
    if (schema_validate(s, &err) != KILN_OK) {
        /* a duplicate random split: drop splits */
        for (size_t i = 0; i < s->split_count; i++)
            buf_free(&s->splits[i]);
        s->split_count = 0;
        tu_must(schema_validate(s, &err), &err);
    }
}

static void
schema_round_trip(void **state)
{
    (void)state;
    for (int iter = 0; iter < 200; iter++) {
        kiln_schema s, d;
        random_schema(&s, "ns:t");
        kbuf b = KBUF_INIT;
        uint32_t crc = schema_encode(&s, &b);
        kiln_err err;
        status_clear(&err);
        uint32_t crc2;
        tu_must(schema_decode(b.data, b.len, "schema", &d, &crc2, &err), &err);
        assert_int_equal(crc, crc2);
        assert_string_equal(d.name, s.name);
        assert_int_equal(d.family_count, s.family_count);
        assert_int_equal(d.split_count, s.split_count);
        for (size_t i = 0; i < s.split_count; i++)
            assert_true(kslice_eq(buf_slice(&s.splits[i]), buf_slice(&d.splits[i])));
        for (size_t i = 0; i < s.family_count; i++) {
            assert_string_equal(d.families[i].name, s.families[i].name);
            assert_int_equal(d.families[i].max_versions, s.families[i].max_versions);
            assert_int_equal(d.families[i].codec, s.families[i].codec);
        }
        assert_int_equal(d.prop_count, s.prop_count);
        kbuf b2 = KBUF_INIT;
        schema_encode(&d, &b2);
        assert_true(kslice_eq(buf_slice(&b), buf_slice(&b2)));
        buf_free(&b2);
        schema_free(&d);
        /* Every single flipped byte is caught (CRC32C catches all 1-bit errors). */
        for (size_t i = 0; i < b.len; i++) {
            uint8_t bit = (uint8_t)(1u << (rnd() % 8));
            b.data[i] ^= bit;
            status_clear(&err);
            assert_int_not_equal(schema_decode(b.data, b.len, "schema", &d, NULL, &err),
                                 KILN_OK);
            assert_non_null(strstr(err.msg, "schema"));
            b.data[i] ^= bit;
        }
        for (size_t n = 0; n < b.len; n += 1 + n / 4) {
            status_clear(&err);
            assert_int_equal(schema_decode(b.data, n, "schema", &d, NULL, &err),
                             KILN_CORRUPTION);
        }
        buf_free(&b);
        schema_free(&s);
    }
}

static void
random_manifest(manifest *m, uint64_t version)
{
    kiln_schema s;
    random_schema(&s, "default:t");
    manifest_init(m);
    m->version = version;
    m->parent = version - 1;
    m->created_ms = (int64_t)(rnd() >> 24);
    m->kind = (rnd() & 1) ? MANIFEST_KIND_APPEND : MANIFEST_KIND_REPLACE;
    manifest_add_source(m, rnd(), version, 12345, "/jobs/out-1");
    manifest_table *t = manifest_add_table(m, &s);
    for (size_t r = 0; r < t->region_count; r++) {
        int nf = (int)(rnd() % 4);
        for (int i = 0; i < nf; i++) {
            manifest_file f;
            memset(&f, 0, sizeof f);
            snprintf(f.family, sizeof f.family, "%s", s.families[rnd() % s.family_count].name);
            table_file_name(version, (uint32_t)(r * 10 + (size_t)i), f.name);
            f.size = rnd() >> 30;
            f.seq = 1 + rnd() % version;
            f.entries = rnd() >> 40;
            manifest_region_add_file(&t->regions[r], &f);
        }
    }
    schema_free(&s);
}

static void
manifest_round_trip(void **state)
{
    (void)state;
    for (int iter = 0; iter < 200; iter++) {
        manifest m, d;
        random_manifest(&m, 2 + rnd() % 1000);
        kbuf b = KBUF_INIT;
        uint32_t crc = manifest_encode(&m, &b);
        kiln_err err;
        status_clear(&err);
        uint32_t crc2;
        tu_must(manifest_decode(b.data, b.len, "manifests/7", &d, &crc2, &err), &err);
        assert_int_equal(crc, crc2);
        assert_true(d.version == m.version && d.parent == m.parent && d.kind == m.kind);
        assert_int_equal(manifest_file_count(&d), manifest_file_count(&m));
        assert_true(manifest_total_bytes(&d) == manifest_total_bytes(&m));
        kbuf b2 = KBUF_INIT;
        manifest copy;
        manifest_copy(&copy, &d);
        manifest_encode(&copy, &b2);
        assert_true(kslice_eq(buf_slice(&b), buf_slice(&b2)));
        manifest_free(&copy);
        buf_free(&b2);
        /* files sorted by family then seq descending */
        const manifest_table *t = &d.tables[0];
        for (size_t r = 0; r < t->region_count; r++) {
            for (size_t f = 1; f < t->regions[r].file_count; f++) {
                const manifest_file *a = &t->regions[r].files[f - 1], *c = &t->regions[r].files[f];
                int fc = strcmp(a->family, c->family);
                assert_true(fc < 0 || (fc == 0 && a->seq >= c->seq));
            }
        }
        /* routing: every region's start routes to it */
        for (size_t r = 0; r < t->region_count; r++)
            assert_int_equal(manifest_region_for_row(t, t->regions[r].start.data,
                                                     t->regions[r].start.len),
                             r);
        manifest_free(&d);
        for (size_t i = 0; i < b.len; i++) {
            uint8_t bit = (uint8_t)(1u << (rnd() % 8));
            b.data[i] ^= bit;
            status_clear(&err);
            assert_int_not_equal(manifest_decode(b.data, b.len, "manifests/7", &d, NULL, &err),
                                 KILN_OK);
            assert_non_null(strstr(err.msg, "manifests/7"));
            b.data[i] ^= bit;
        }
        for (size_t n = 0; n < b.len; n += 1 + n / 3) {
            status_clear(&err);
            assert_int_equal(manifest_decode(b.data, n, "m", &d, NULL, &err), KILN_CORRUPTION);
        }
        buf_free(&b);
        manifest_free(&m);
    }
}

/* A structurally bad manifest with a valid CRC is refused (path traversal in a
 * file name, an unknown family). */
static void
manifest_semantic_checks(void **state)
{
    (void)state;
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "default:t");
    schema_family f;
    schema_family_defaults(&f, "cf");
    tu_must(schema_add_family(&s, &f, NULL), NULL);
    manifest m;
    manifest_init(&m);
    m.version = 3;
    m.kind = MANIFEST_KIND_REPLACE;
    manifest_table *t = manifest_add_table(&m, &s);
    manifest_file mf;
    memset(&mf, 0, sizeof mf);
    snprintf(mf.family, sizeof mf.family, "cf");
    snprintf(mf.name, sizeof mf.name, "../../etc");
    manifest_region_add_file(&t->regions[0], &mf);
    kbuf b = KBUF_INIT;
    manifest_encode(&m, &b);
    manifest d;
    kiln_err err;
    status_clear(&err);
    assert_int_equal(manifest_decode(b.data, b.len, "m", &d, NULL, &err), KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, "bad store file name"));
    snprintf(t->regions[0].files[0].name, sizeof mf.name, "00ab");
    snprintf(t->regions[0].files[0].family, sizeof mf.family, "zz");
    buf_reset(&b);
    manifest_encode(&m, &b);
    status_clear(&err);
    assert_int_equal(manifest_decode(b.data, b.len, "m", &d, NULL, &err), KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, "family 'zz'"));
    /* parent must be below version */
    snprintf(t->regions[0].files[0].family, sizeof mf.family, "cf");
    m.parent = 3;
    buf_reset(&b);
    manifest_encode(&m, &b);
    status_clear(&err);
    assert_int_equal(manifest_decode(b.data, b.len, "m", &d, NULL, &err), KILN_CORRUPTION);
    buf_free(&b);
    manifest_free(&m);
    schema_free(&s);

    manifest_pointer p = {42, 0xdeadbeef}, q;
    kbuf pb = KBUF_INIT;
    manifest_pointer_encode(&p, &pb);
    status_clear(&err);
    tu_must(manifest_pointer_decode(pb.data, pb.len, "CURRENT", &q, &err), &err);
    assert_true(q.version == 42 && q.manifest_crc == 0xdeadbeef);
    pb.data[17] ^= 1;
    assert_int_equal(manifest_pointer_decode(pb.data, pb.len, "CURRENT", &q, &err),
                     KILN_CORRUPTION);
    buf_free(&pb);
}

/* ------------------------------------------------------------------ table directory */

static void
make_schema(kiln_schema *s, const char *name, int nsplits, unsigned keep)
{
    kiln_err err;
    status_clear(&err);
    schema_init(s);
    snprintf(s->name, sizeof s->name, "%s", name);
    schema_family f;
    tu_must(schema_family_parse("cf:versions=3", &f, &err), &err);
    tu_must(schema_add_family(s, &f, &err), &err);
    tu_must(schema_family_parse("a:compression=none", &f, &err), &err);
    tu_must(schema_add_family(s, &f, &err), &err);
    for (int i = 0; i < nsplits; i++) {
        char k[8];
        snprintf(k, sizeof k, "r%02d", (i + 1) * 10);
        tu_must(schema_add_split(s, (const uint8_t *)k, strlen(k), &err), &err);
    }
    s->keep_versions = keep;
}

/* Write a store file of `size` random bytes, synced. */
static void
write_store_file(kiln_table *t, const char *name, size_t size)
{
    char p[4096];
    table_file_path(t, name, p, sizeof p);
    env_file *f;
    kiln_err err;
    status_clear(&err);
    tu_must(env_create(p, 1, &f, &err), &err);
    uint8_t buf[256];
    for (size_t i = 0; i < size; i += sizeof buf) {
        for (size_t j = 0; j < sizeof buf; j++)
            buf[j] = (uint8_t)rnd();
        size_t n = size - i < sizeof buf ? size - i : sizeof buf;
        tu_must(env_append(f, buf, n, &err), &err);
    }
    tu_must(env_sync(f, &err), &err);
    tu_must(env_close(f, &err), &err);
}

/* A version with one new file per region in family cf (replace) or added to
 * the parent's files (append). */
static kiln_status
fake_load(kiln_table *t, int append, uint64_t *version, kiln_err *err)
{
    kiln_status st = table_next_version(t, version, err);
    if (st != KILN_OK)
        return st;
    manifest m;
    manifest_init(&m);
    manifest parent;
    int have_parent = table_read_current(t, &parent, NULL) == KILN_OK;
    if (append && have_parent) {
        manifest_copy(&m, &parent);
        m.kind = MANIFEST_KIND_APPEND;
    } else {
        manifest_add_table(&m, table_schema(t));
        m.kind = MANIFEST_KIND_REPLACE;
    }
    m.version = *version;
    m.parent = have_parent ? parent.version : 0;
    m.created_ms = table_now_ms();
    if (have_parent)
        manifest_free(&parent);
    manifest_add_source(&m, *version * 7, *version, m.created_ms, "/jobs/x");
    manifest_table *mt = &m.tables[0];
    for (size_t r = 0; r < mt->region_count; r++) {
        manifest_file f;
        memset(&f, 0, sizeof f);
        snprintf(f.family, sizeof f.family, "cf");
        table_file_name(*version, (uint32_t)r, f.name);
        f.size = 100 + r;
        f.seq = *version;
        write_store_file(t, f.name, f.size);
        manifest_region_add_file(&mt->regions[r], &f);
    }
    int published;
    st = table_publish(t, &m, &published, err);
    manifest_free(&m);
    return st;
}

static size_t
count_dir(const char *dir)
{
    size_t n = 0;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "ls -1 '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_int_equal(fscanf(p, "%zu", &n), 1);
    pclose(p);
    return n;
}

static void
table_create_list_open(void **state)
{
    (void)state;
    char *data = make_tmpdir();
    kiln_err err;
    status_clear(&err);
    kiln_schema s;
    make_schema(&s, "t2", 3, 2);
    tu_must(table_create(data, &s, &err), &err);
    assert_string_equal(s.name, "default:t2");
    schema_free(&s);
    make_schema(&s, "ns1:t1", 0, 2);
    tu_must(table_create(data, &s, &err), &err);
    schema_free(&s);
    make_schema(&s, "t2", 0, 2);
    assert_int_equal(table_create(data, &s, &err), KILN_EXISTS);
    assert_non_null(strstr(err.msg, "default:t2"));
    schema_free(&s);
    status_clear(&err);
    make_schema(&s, "t3", 0, 2);
    s.family_count = 0;
    assert_int_equal(table_create(data, &s, &err), KILN_INVALID);
    schema_free(&s);

    char **names;
    size_t n;
    status_clear(&err);
    tu_must(table_list(data, &names, &n, &err), &err);
    assert_int_equal(n, 2);
    assert_string_equal(names[0], "default:t2");
    assert_string_equal(names[1], "ns1:t1");
    table_list_free(names, n);

    kiln_table *t;
    tu_must(table_open(data, "t2", &t, &err), &err);
    assert_string_equal(table_name(t), "default:t2");
    assert_int_equal(table_schema(t)->split_count, 3);
    assert_int_equal(table_schema(t)->family_count, 2);
    assert_string_equal(table_schema(t)->families[0].name, "a");
    manifest_pointer ptr;
    status_clear(&err);
    assert_int_equal(table_current(t, &ptr, &err), KILN_NOT_FOUND);
    table_close(t);
    status_clear(&err);
    assert_int_equal(table_open(data, "nope", &t, &err), KILN_NOT_FOUND);
    assert_non_null(strstr(err.msg, "default:nope"));

    /* a corrupt schema file is named in the error */
    char p[4096];
    snprintf(p, sizeof p, "%s/ns1/t1/schema", data);
    FILE *fp = fopen(p, "r+b");
    fseek(fp, 20, SEEK_SET);
    fputc(0x5a, fp);
    fclose(fp);
    status_clear(&err);
    assert_int_equal(table_open(data, "ns1:t1", &t, &err), KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, "ns1/t1/schema"));

    /* empty / absent data dir lists nothing */
    char absent[4200];
    snprintf(absent, sizeof absent, "%s/none", data);
    tu_must(table_list(absent, &names, &n, &err), &err);
    assert_int_equal(n, 0);
    rm_rf(data);
    free(data);
}

static void
table_versions_rollback_gc(void **state)
{
    (void)state;
    char *data = make_tmpdir();
    kiln_err err;
    status_clear(&err);
    kiln_schema s;
    make_schema(&s, "t", 2, 2);
    tu_must(table_create(data, &s, &err), &err);
    schema_free(&s);
    kiln_table *t, *t2;
    tu_must(table_open(data, "t", &t, &err), &err);
    tu_must(table_open(data, "t", &t2, &err), &err);
    uint64_t v;
    int published;
    manifest m;
    manifest_init(&m);
    assert_int_equal(table_publish(t, &m, &published, &err), KILN_INTERNAL); /* no lock */
    status_clear(&err);
    tu_must(table_lock(t, 0, &err), &err);
    assert_int_equal(table_lock(t2, 0, &err), KILN_BUSY);
    assert_non_null(strstr(err.msg, "pid"));
    status_clear(&err);
    assert_int_equal(table_rollback(t, 0, &v, &err), KILN_NOT_FOUND);
    status_clear(&err);

    tu_must(fake_load(t, 0, &v, &err), &err);
    assert_int_equal(v, 1);
    tu_must(fake_load(t, 0, &v, &err), &err);
    assert_int_equal(v, 2);
    tu_must(fake_load(t, 1, &v, &err), &err);
    assert_int_equal(v, 3);
    manifest cur;
    tu_must(table_read_current(t, &cur, &err), &err);
    assert_int_equal(cur.version, 3);
    assert_int_equal(cur.parent, 2);
    assert_int_equal(manifest_file_count(&cur), 6); /* 3 from v2 + 3 appended */
    assert_int_equal(cur.tables[0].regions[0].files[0].seq, 3);
    manifest_free(&cur);

    table_gc_stats gs;
    tu_must(table_gc(t, &gs, &err), &err);
    assert_int_equal(gs.versions_kept, 2);
    assert_int_equal(gs.manifests_removed, 1); /* version 1 */
    assert_int_equal(gs.files_removed, 3);     /* version 1's files */
    uint64_t *vs;
    size_t nv;
    tu_must(table_versions(t, &vs, &nv, &err), &err);
    assert_int_equal(nv, 2);
    assert_true(vs[0] == 2 && vs[1] == 3);
    free(vs);

    /* rollback to the parent, then forward again explicitly */
    tu_must(table_rollback(t, 0, &v, &err), &err);
    assert_int_equal(v, 2);
    tu_must(table_read_current(t, &cur, &err), &err);
    assert_int_equal(cur.version, 2);
    assert_int_equal(manifest_file_count(&cur), 3);
    manifest_free(&cur);
    assert_int_equal(table_rollback(t, 2, &v, &err), KILN_INVALID);
    status_clear(&err);
    assert_int_equal(table_rollback(t, 1, &v, &err), KILN_NOT_FOUND);
    assert_non_null(strstr(err.msg, "not kept"));
    status_clear(&err);
    tu_must(table_rollback(t, 3, &v, &err), &err);
    tu_must(table_rollback(t, 2, &v, &err), &err);
    /* rollback never deletes: 3 is still there; a new load from 2 drops it */
    tu_must(fake_load(t, 0, &v, &err), &err);
    assert_int_equal(v, 4);
    tu_must(table_gc(t, &gs, &err), &err);
    tu_must(table_versions(t, &vs, &nv, &err), &err);
    assert_int_equal(nv, 2);
    assert_true(vs[0] == 2 && vs[1] == 4);
    free(vs);
    char fdir[4200];
    snprintf(fdir, sizeof fdir, "%s/default/t/files", data);
    assert_int_equal(count_dir(fdir), 6); /* v2's 3 + v4's 3 */

    /* orphans of a crashed load: a number is never reused, GC removes them */
    char name[MANIFEST_FILE_NAME_MAX + 1];
    table_file_name(5, 0, name);
    write_store_file(t, name, 10);
    tu_must(table_next_version(t, &v, &err), &err);
    assert_int_equal(v, 6);
    tu_must(table_gc(t, &gs, &err), &err);
    assert_int_equal(gs.files_removed, 1);
    assert_int_equal(count_dir(fdir), 6);

    /* a missing file makes a rollback target unusable */
    tu_must(table_read_manifest(t, 2, &m, NULL, &err), &err);
    char p[4096];
    table_file_path(t, m.tables[0].regions[1].files[0].name, p, sizeof p);
    manifest_free(&m);
    assert_int_equal(unlink(p), 0);
    assert_int_equal(table_rollback(t, 2, &v, &err), KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, "version 2"));
    status_clear(&err);

    table_unlock(t);
    tu_must(table_lock(t2, 0, &err), &err);
    table_close(t2);
    table_close(t);
    rm_rf(data);
    free(data);
}

/* A CURRENT that disagrees with its manifest is refused. */
static void
table_current_mismatch(void **state)
{
    (void)state;
    char *data = make_tmpdir();
    kiln_err err;
    status_clear(&err);
    kiln_schema s;
    make_schema(&s, "t", 0, 2);
    tu_must(table_create(data, &s, &err), &err);
    schema_free(&s);
    kiln_table *t;
    tu_must(table_open(data, "t", &t, &err), &err);
    tu_must(table_lock(t, 0, &err), &err);
    uint64_t v;
    tu_must(fake_load(t, 0, &v, &err), &err);
    char p[4200];
    snprintf(p, sizeof p, "%s/default/t/CURRENT", data);
    manifest_pointer bad = {1, 1234};
    kbuf b = KBUF_INIT;
    manifest_pointer_encode(&bad, &b);
    tu_must(env_write_file_atomic(p, b.data, b.len, &err), &err);
    buf_free(&b);
    manifest m;
    assert_int_equal(table_read_current(t, &m, &err), KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, "CURRENT"));
    status_clear(&err);
    /* GC refuses to guess when CURRENT is unreadable */
    assert_int_not_equal(table_gc(t, NULL, &err), KILN_OK);
    table_close(t);
    rm_rf(data);
    free(data);
}

/* Table creation and the LOCK go through the file layer: every mkdir,
 * create, write, fsync, rename, listing and stat of a create is failed in
 * turn. After each failure the table is absent or whole, no staging
 * directory stays behind once a create succeeds, and a failing lock is an
 * I/O error, not a silent success. */
static void
table_create_faults(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    static const env_op ops[] = {ENV_OP_MKDIR, ENV_OP_OPEN, ENV_OP_WRITE, ENV_OP_SYNC,
                                 ENV_OP_RENAME, ENV_OP_LIST};
    static const char *const names[] = {"mkdir", "open", "write", "fsync", "rename", "list"};
    long points = 0;
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
        long calls = 0;
        for (long k = 0; k == 0 || k <= calls; k++) {
            rm_rf(dir);
            kiln_schema s;
            schema_init(&s);
            snprintf(s.name, sizeof s.name, "ns:t");
            schema_family f;
            schema_family_defaults(&f, "cf");
            tu_must(schema_add_family(&s, &f, NULL), NULL);
            env_fault_clear();
            if (k > 0)
                env_fault_arm(ops[oi], k, EIO);
            kiln_err err;
            status_clear(&err);
            kiln_status st = table_create(dir, &s, &err);
            if (k == 0) {
                tu_must(st, &err);
                calls = env_op_calls(ops[oi]);
                if (calls == 0)
                    fail_msg("table_create made no %s call through the file layer", names[oi]);
                env_fault_clear();
                schema_free(&s);
                continue;
            }
            env_fault_clear();
            points++;
            kiln_table *t;
            kiln_err e2;
            status_clear(&e2);
            kiln_status ost = table_open(dir, "ns:t", &t, &e2);
            if (st == KILN_OK || ost == KILN_OK) {
                tu_must(ost, &e2);   /* whole: the schema reads back */
                table_close(t);
            } else {
                assert_int_equal(ost, KILN_NOT_FOUND);
                status_clear(&err);
                tu_must(table_create(dir, &s, &err), &err);
            }
            schema_free(&s);
            char ns[4200];
            snprintf(ns, sizeof ns, "%s/ns", dir);
            char **list;
            size_t n;
            tu_must(env_list_dir(ns, &list, &n, &err), &err);
            for (size_t i = 0; i < n; i++) {
                if (strncmp(list[i], ".creating-", 10) == 0)
                    fail_msg("%s failed at call %ld: staging directory %s left", names[oi], k,
                             list[i]);
            }
            env_list_free(list, n);
        }
    }
    printf("  table create: %ld failed calls\n", points);
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    tu_must(table_open(dir, "ns:t", &t, &err), &err);
    env_fault_arm(ENV_OP_LOCK, 1, EIO);
    assert_int_equal(table_lock(t, 0, &err), KILN_IO);
    env_fault_clear();
    assert_false(table_locked(t));
    status_clear(&err);
    tu_must(table_lock(t, 0, &err), &err);
    table_close(t);
    rm_rf(dir);
    free(dir);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_store_table: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_names),
        cmocka_unit_test(family_specs),
        cmocka_unit_test(schema_round_trip),
        cmocka_unit_test(manifest_round_trip),
        cmocka_unit_test(manifest_semantic_checks),
        cmocka_unit_test(table_create_list_open),
        cmocka_unit_test(table_versions_rollback_gc),
        cmocka_unit_test(table_current_mismatch),
        cmocka_unit_test(table_create_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
