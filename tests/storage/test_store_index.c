/* test_store_index.c -- secondary indexes in the region store.
 *
 * The index row key: for random tuples of binary values (0x00, 0xFF, empty
 * values, composites) the encoded keys sort exactly as the tuples do, decode
 * back to them, and never collide; malformed keys are refused. Definitions:
 * the kiln.index spec, the index table's schema and its checks, and the
 * manifest's publish-group checks. Then index scans against brute force: a
 * table (salted or not) and two indexes (one column, two columns) written
 * with stale entries (old values, deleted rows, rows missing a column) and
 * published in one manifest; every exact, composite, range and limited query,
 * with column selection and paging by position, must return exactly the rows
 * a scan of the model finds, in index order. A view opened before a new
 * version keeps answering from its own version's table and index. Seed
 * printed; replay with KILN_TEST_SEED. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/manifest.h"
#include "storage/store/store_index.h"
#include "storage/store/store_salt.h"
#include "storage/store/store_view.h"
#include "storage/store/table.h"
#include "tests/support/test_util.h"

static uint64_t rng_state;

static uint64_t
rnd(void)
{
    return tu_splitmix64(&rng_state);
}

static char data_dir[512];

/* A short random byte string over {00, FF, 'a', 'b'}. */
static size_t
small_bytes(uint8_t *p, size_t max)
{
    size_t n = rnd() % (max + 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = rnd() % 4;
        p[i] = x == 0 ? 0x00 : x == 1 ? 0xFF : (uint8_t)('a' + x - 2);
    }
    return n;
}

/* ------------------------------------------------------------------ keys */

typedef struct tuple {
    uint8_t v[3][4];
    size_t vn[3];
    uint8_t row[4];
    size_t rn;
} tuple;

static int
tuple_cmp(const tuple *a, const tuple *b, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        int c = kslice_cmp(kslice_make(a->v[i], a->vn[i]), kslice_make(b->v[i], b->vn[i]));
        if (c != 0)
            return c;
    }
    return kslice_cmp(kslice_make(a->row, a->rn), kslice_make(b->row, b->rn));
}

static void
encode_tuple(const tuple *t, size_t k, kbuf *out)
{
    kslice vals[3];
    for (size_t i = 0; i < k; i++)
        vals[i] = kslice_make(t->v[i], t->vn[i]);
    buf_reset(out);
    store_index_key(out, vals, k, t->row, t->rn);
}

static int
sign(int c)
{
    return (c > 0) - (c < 0);
}

static void
key_encoding(void **state)
{
    (void)state;
    kbuf a = KBUF_INIT, b = KBUF_INIT, scratch = KBUF_INIT;
    for (int i = 0; i < 20000; i++) {
        size_t k = 1 + rnd() % 3;
        tuple x, y;
        for (size_t j = 0; j < k; j++) {
            x.vn[j] = small_bytes(x.v[j], 3);
            y.vn[j] = rnd() % 3 == 0 ? x.vn[j] : small_bytes(y.v[j], 3);
            if (y.vn[j] == x.vn[j])
                memcpy(y.v[j], x.v[j], x.vn[j]);
        }
        do {
            x.rn = small_bytes(x.row, 3);
        } while (x.rn == 0);
        do {
            y.rn = small_bytes(y.row, 3);
        } while (y.rn == 0);
        encode_tuple(&x, k, &a);
        encode_tuple(&y, k, &b);
        int want = sign(tuple_cmp(&x, &y, k));
        if (sign(kslice_cmp(buf_slice(&a), buf_slice(&b))) != want)
            fail_msg("encoded order differs from tuple order (k=%zu)", k);
        /* decode gives the tuple back */
        kslice vals[3], row;
        assert_int_equal(store_index_key_decode(buf_slice(&a), k, &scratch, vals, &row), 0);
        for (size_t j = 0; j < k; j++)
            assert_true(kslice_eq(vals[j], kslice_make(x.v[j], x.vn[j])));
        assert_true(kslice_eq(row, kslice_make(x.row, x.rn)));
        /* a value prefix is a key prefix exactly for the rows with those values */
        kbuf p = KBUF_INIT;
        store_index_value_append(&p, y.v[0], y.vn[0]);
        int starts = a.len >= p.len && memcmp(a.data, p.data, p.len) == 0;
        assert_int_equal(starts, kslice_eq(kslice_make(x.v[0], x.vn[0]),
                                           kslice_make(y.v[0], y.vn[0])));
        buf_free(&p);
        /* cut anywhere inside the values: never a valid k-value key */
        size_t vals_len = a.len - x.rn;
        size_t cut = rnd() % (vals_len + 1);
        int r = store_index_key_decode(kslice_make(a.data, cut), k, &scratch, vals, &row);
        assert_int_equal(r, -1);
    }
    /* a zero byte followed by anything but 00 or FF */
    static const uint8_t bad[] = {'a', 0x00, 0x01, 'r'};
    kslice vals[1], row;
    assert_int_equal(store_index_key_decode(kslice_make(bad, sizeof bad), 1, &scratch, vals, &row),
                     -1);
    buf_free(&a);
    buf_free(&b);
    buf_free(&scratch);
}

/* ------------------------------------------------------------------ definitions */

static void
make_base(kiln_schema *s, const char *name, uint32_t salt)
{
    schema_init(s);
    snprintf(s->name, sizeof s->name, "%s", name);
    kiln_err err;
    status_clear(&err);
    schema_family f;
    schema_family_defaults(&f, "d");
    tu_must(schema_add_family(s, &f, &err), &err);
    schema_family_defaults(&f, "e");
    tu_must(schema_add_family(s, &f, &err), &err);
    s->salt_buckets = salt;
    schema_salt_default_splits(s);
    tu_must(schema_validate(s, &err), &err);
}

static void
definitions(void **state)
{
    (void)state;
    kiln_err err;
    store_index_def d;
    status_clear(&err);
    tu_must(store_index_def_parse("by_x:d:a\\x2Cb:c,e:,d:\\x00", &d, &err), &err);
    assert_string_equal(d.name, "by_x");
    assert_int_equal(d.ncols, 3);
    assert_string_equal(d.cols[0].family, "d");
    assert_true(kslice_eq(buf_slice(&d.cols[0].qualifier), kslice_str("a,b:c")));
    assert_string_equal(d.cols[1].family, "e");
    assert_int_equal(d.cols[1].qualifier.len, 0);
    assert_true(kslice_eq(buf_slice(&d.cols[2].qualifier), kslice_make("\0", 1)));

    static const char *bad[] = {"", ":d:a", "n", "n:", "n:d", "bad name:d:a", "n:d:a,d:a",
                                "n:d:a\\xZZ", "-n:d:a", "n:d:a,:b",
                                "n:d:1,d:2,d:3,d:4,d:5,d:6,d:7,d:8,d:9,d:10,d:11,d:12,d:13,d:14,"
                                "d:15,d:16,d:17"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        store_index_def x;
        status_clear(&err);
        if (store_index_def_parse(bad[i], &x, &err) != KILN_INVALID)
            fail_msg("spec '%s' was accepted", bad[i]);
        assert_non_null(strstr(err.msg, "index"));
    }

    /* the index table's schema, and back */
    kiln_schema base, is;
    make_base(&base, "default:people", 4);
    status_clear(&err);
    tu_must(store_index_schema(&base, &d, &is, &err), &err);
    assert_string_equal(is.name, "default:people.idx.by_x");
    assert_int_equal(is.salt_buckets, 4);
    assert_int_equal(is.split_count, 3);
    assert_int_equal(is.family_count, 1);
    assert_string_equal(is.families[0].name, STORE_INDEX_FAMILY);
    assert_int_equal(is.families[0].bloom, BLOOM_NONE);
    assert_true(store_index_schema_is_index(&is));
    assert_false(store_index_schema_is_index(&base));
    store_index_def back;
    tu_must(store_index_def_from_schema(&base, &is, &back, &err), &err);
    assert_true(store_index_def_equal(&d, &back));
    store_index_def_free(&back);
    /* it survives the schema record */
    kbuf rec = KBUF_INIT;
    schema_encode(&is, &rec);
    kiln_schema dec;
    tu_must(schema_decode(rec.data, rec.len, "rec", &dec, NULL, &err), &err);
    tu_must(store_index_def_from_schema(&base, &dec, &back, &err), &err);
    assert_true(store_index_def_equal(&d, &back));
    store_index_def_free(&back);
    schema_free(&dec);
    buf_free(&rec);

    /* a column of a family the table lacks */
    store_index_def nf;
    tu_must(store_index_def_parse("n:zz:q", &nf, &err), &err);
    kiln_schema tmp;
    status_clear(&err);
    assert_int_equal(store_index_schema(&base, &nf, &tmp, &err), KILN_INVALID);
    store_index_def_free(&nf);

    /* broken index schemas are refused with a reason */
    kiln_schema other;
    make_base(&other, "default:other", 0);
    status_clear(&err);
    assert_int_equal(store_index_def_from_schema(&other, &is, &back, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "not of"));
    kiln_schema w;
    schema_copy(&w, &is);
    snprintf(w.name, sizeof w.name, "default:people.idx.other");
    status_clear(&err);
    assert_int_equal(store_index_def_from_schema(&base, &w, &back, &err), KILN_INVALID);
    schema_free(&w);
    schema_copy(&w, &is);
    schema_set_prop(&w, STORE_INDEX_PROP_COLUMNS, "d:a,zz:b");
    status_clear(&err);
    assert_int_equal(store_index_def_from_schema(&base, &w, &back, &err), KILN_INVALID);
    schema_free(&w);
    schema_copy(&w, &is);
    schema_set_prop(&w, STORE_INDEX_PROP_COLUMNS, "");
    status_clear(&err);
    assert_int_equal(store_index_def_from_schema(&base, &w, &back, &err), KILN_INVALID);
    schema_free(&w);
    status_clear(&err);
    assert_int_equal(store_index_def_from_schema(&base, &base, &back, &err), KILN_INVALID);

    /* publish groups */
    manifest m;
    manifest_init(&m);
    m.version = 1;
    m.kind = MANIFEST_KIND_REPLACE;
    manifest_add_table(&m, &base);
    manifest_add_table(&m, &is);
    status_clear(&err);
    tu_must(manifest_check_tables(&m, &err), &err);
    kbuf mrec = KBUF_INIT;
    manifest_encode(&m, &mrec);
    manifest md;
    tu_must(manifest_decode(mrec.data, mrec.len, "m", &md, NULL, &err), &err);
    assert_int_equal(md.table_count, 2);
    manifest_free(&md);
    buf_free(&mrec);
    manifest_add_table(&m, &is);
    status_clear(&err);
    assert_int_equal(manifest_check_tables(&m, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "twice"));
    manifest_encode(&m, &mrec);
    status_clear(&err);
    assert_int_equal(manifest_decode(mrec.data, mrec.len, "m", &md, NULL, &err),
                     KILN_CORRUPTION);
    buf_free(&mrec);
    manifest_free(&m);
    manifest_init(&m);
    m.version = 1;
    m.kind = MANIFEST_KIND_REPLACE;
    manifest_add_table(&m, &is);
    status_clear(&err);
    assert_int_equal(manifest_check_tables(&m, &err), KILN_INVALID);
    manifest_free(&m);

    schema_free(&other);
    schema_free(&is);
    schema_free(&base);
    store_index_def_free(&d);
}

/* ------------------------------------------------------------------ scans */

#define NROWS 300
#define NSTALE 120

typedef struct prow {
    uint8_t key[4];
    size_t n;
    uint8_t city[3];
    size_t cn;
    int has_city;
    uint8_t age[2];
    size_t an;
    int has_age;
} prow;

static prow people[NROWS];
static size_t npeople;

/* A cell to write, owning its bytes. */
typedef struct wcell {
    kbuf row;                   /* stored */
    char family[2];
    kbuf qual;
    kbuf value;
    int64_t ts;
} wcell;

static int
wcell_cmp(const void *a, const void *b)
{
    const wcell *x = a, *y = b;
    kiln_cell c1, c2;
    memset(&c1, 0, sizeof c1);
    memset(&c2, 0, sizeof c2);
    c1.row = x->row.data;
    c1.row_len = (uint32_t)x->row.len;
    c1.family = (const uint8_t *)x->family;
    c1.family_len = 1;
    c1.qualifier = x->qual.data;
    c1.qualifier_len = (uint32_t)x->qual.len;
    c1.ts = x->ts;
    c1.type = CELL_TYPE_PUT;
    c2.row = y->row.data;
    c2.row_len = (uint32_t)y->row.len;
    c2.family = (const uint8_t *)y->family;
    c2.family_len = 1;
    c2.qualifier = y->qual.data;
    c2.qualifier_len = (uint32_t)y->qual.len;
    c2.ts = y->ts;
    c2.type = CELL_TYPE_PUT;
    return cell_compare(&c1, &c2);
}

typedef struct wlist {
    wcell *c;
    size_t n, cap;
} wlist;

static wcell *
wlist_add(wlist *l, uint32_t salt, const uint8_t *row, size_t rn, const char *fam,
          const uint8_t *q, size_t qn, const uint8_t *v, size_t vn, int64_t ts)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->c = realloc(l->c, l->cap * sizeof *l->c);
    }
    wcell *c = &l->c[l->n++];
    memset(c, 0, sizeof *c);
    if (salt)
        store_salt_key(&c->row, salt, row, rn);
    else
        buf_append(&c->row, row, rn);
    c->family[0] = fam[0];
    buf_append(&c->qual, q, qn);
    buf_append(&c->value, v, vn);
    c->ts = ts;
    return c;
}

static void
wlist_free(wlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        buf_free(&l->c[i].row);
        buf_free(&l->c[i].qual);
        buf_free(&l->c[i].value);
    }
    free(l->c);
    memset(l, 0, sizeof *l);
}

/* Write l's cells as the files of mt (one per region and family). */
static void
write_table(kiln_table *t, manifest_table *mt, uint64_t version, uint32_t *fileno, wlist *l)
{
    kiln_err err;
    status_clear(&err);
    qsort(l->c, l->n, sizeof *l->c, wcell_cmp);
    for (size_t r = 0; r < mt->region_count; r++) {
        for (size_t f = 0; f < mt->schema.family_count; f++) {
            const char *fam = mt->schema.families[f].name;
            hfile_writer *w = NULL;
            manifest_file mf;
            memset(&mf, 0, sizeof mf);
            snprintf(mf.family, sizeof mf.family, "%s", fam);
            table_file_name(version, (*fileno)++, mf.name);
            mf.seq = version;
            for (size_t i = 0; i < l->n; i++) {
                const wcell *c = &l->c[i];
                if (c->family[0] != fam[0] ||
                    manifest_region_for_row(mt, c->row.data, c->row.len) != r)
                    continue;
                if (w == NULL) {
                    hfile_writer_options o;
                    hfile_writer_options_init(&o);
                    o.block_size = 512;
                    o.sync = 0;
                    char p[4096];
                    table_file_path(t, mf.name, p, sizeof p);
                    tu_must(hfile_writer_open(p, &o, &w, &err), &err);
                }
                kiln_cell k;
                memset(&k, 0, sizeof k);
                k.row = c->row.data;
                k.row_len = (uint32_t)c->row.len;
                k.family = (const uint8_t *)c->family;
                k.family_len = 1;
                k.qualifier = c->qual.data;
                k.qualifier_len = (uint32_t)c->qual.len;
                k.ts = c->ts;
                k.type = CELL_TYPE_PUT;
                k.value = c->value.data;
                k.value_len = (uint32_t)c->value.len;
                tu_must(hfile_writer_add(w, &k, &err), &err);
                mf.entries++;
            }
            if (w != NULL) {
                hfile_writer_stats st;
                tu_must(hfile_writer_finish(w, &st, &err), &err);
                mf.size = st.file_size;
                manifest_region_add_file(&mt->regions[r], &mf);
            }
        }
    }
}

static void
gen_people(void)
{
    npeople = 0;
    while (npeople < NROWS) {
        prow *p = &people[npeople];
        do {
            p->n = small_bytes(p->key, 4);
        } while (p->n == 0);
        int dup = 0;
        for (size_t i = 0; i < npeople && !dup; i++)
            dup = people[i].n == p->n && memcmp(people[i].key, p->key, p->n) == 0;
        if (dup)
            continue;
        p->has_city = rnd() % 10 != 0;
        p->cn = small_bytes(p->city, 2);
        p->has_age = rnd() % 8 != 0;
        p->an = small_bytes(p->age, 2);
        npeople++;
    }
}

/* Index entry rows for person p with the given values (stale when they are
 * not p's), and the entries of both indexes for the model. */
static void
add_entry(wlist *idx, uint32_t salt, const uint8_t *row, size_t rn, const kslice *vals,
          size_t k)
{
    kbuf key = KBUF_INIT;
    store_index_key(&key, vals, k, row, rn);
    wlist_add(idx, salt, key.data, key.len, "i", NULL, 0, NULL, 0, 5);
    buf_free(&key);
}

/* Publish version `version` of table `name`: the people rows and both
 * indexes, with stale entries mixed in. */
static void
publish_people(const char *name, uint32_t salt)
{
    kiln_err err;
    status_clear(&err);
    kiln_table *t;
    tu_must(table_open(data_dir, name, &t, &err), &err);
    tu_must(table_lock(t, 0, &err), &err);
    uint64_t version;
    tu_must(table_next_version(t, &version, &err), &err);
    const kiln_schema *base = table_schema(t);
    store_index_def d1, d2;
    tu_must(store_index_def_parse("by_city:d:city", &d1, &err), &err);
    tu_must(store_index_def_parse("by_city_age:d:city,d:age", &d2, &err), &err);
    kiln_schema s1, s2;
    tu_must(store_index_schema(base, &d1, &s1, &err), &err);
    tu_must(store_index_schema(base, &d2, &s2, &err), &err);
    manifest m;
    manifest_init(&m);
    m.version = version;
    m.kind = MANIFEST_KIND_REPLACE;
    m.created_ms = table_now_ms();
    manifest_table *mt = manifest_add_table(&m, base);
    manifest_table *it1 = manifest_add_table(&m, &s1);
    manifest_table *it2 = manifest_add_table(&m, &s2);
    mt = &m.tables[0];
    it1 = &m.tables[1];
    it2 = &m.tables[2];
    wlist rows = {0}, i1 = {0}, i2 = {0};
    for (size_t i = 0; i < npeople; i++) {
        const prow *p = &people[i];
        char v[16];
        int vn = snprintf(v, sizeof v, "x%zu", i);
        wlist_add(&rows, salt, p->key, p->n, "e", (const uint8_t *)"x", 1, (const uint8_t *)v,
                  (size_t)vn, 7);
        if (p->has_city)
            wlist_add(&rows, salt, p->key, p->n, "d", (const uint8_t *)"city", 4, p->city, p->cn,
                      7);
        if (p->has_age)
            wlist_add(&rows, salt, p->key, p->n, "d", (const uint8_t *)"age", 3, p->age, p->an,
                      7);
        kslice vals[2] = {kslice_make(p->city, p->cn), kslice_make(p->age, p->an)};
        if (p->has_city)
            add_entry(&i1, s1.salt_buckets, p->key, p->n, vals, 1);
        if (p->has_city && p->has_age)
            add_entry(&i2, s2.salt_buckets, p->key, p->n, vals, 2);
    }
    /* stale entries: values the row does not hold, rows that do not exist */
    for (int i = 0; i < NSTALE; i++) {
        uint8_t row[4], c[3], a[2];
        size_t rn;
        if (rnd() % 2) {
            const prow *p = &people[rnd() % npeople];
            memcpy(row, p->key, p->n);
            rn = p->n;
        } else {
            do {
                rn = small_bytes(row, 4);
            } while (rn == 0);
        }
        kslice vals[2];
        vals[0] = kslice_make(c, small_bytes(c, 2));
        vals[1] = kslice_make(a, small_bytes(a, 2));
        wlist *into = rnd() % 2 ? &i1 : &i2;
        add_entry(into, salt, row, rn, vals, into == &i1 ? 1 : 2);
    }
    uint32_t fileno = 0;
    write_table(t, mt, version, &fileno, &rows);
    write_table(t, it1, version, &fileno, &i1);
    write_table(t, it2, version, &fileno, &i2);
    int published;
    tu_must(table_publish(t, &m, &published, &err), &err);
    assert_true(published);
    manifest_free(&m);
    wlist_free(&rows);
    wlist_free(&i1);
    wlist_free(&i2);
    schema_free(&s1);
    schema_free(&s2);
    store_index_def_free(&d1);
    store_index_def_free(&d2);
    table_close(t);
}

/* The model's answer: indexes of people matching, in index order. */
typedef struct hit {
    size_t i;
} hit;

static int want_k;

static int
hit_cmp(const void *a, const void *b)
{
    const prow *x = &people[((const hit *)a)->i], *y = &people[((const hit *)b)->i];
    int c = kslice_cmp(kslice_make(x->city, x->cn), kslice_make(y->city, y->cn));
    if (c == 0 && want_k == 2)
        c = kslice_cmp(kslice_make(x->age, x->an), kslice_make(y->age, y->an));
    if (c == 0)
        c = kslice_cmp(kslice_make(x->key, x->n), kslice_make(y->key, y->n));
    return c;
}

static size_t
brute_force(size_t k, const store_index_opts *o, hit *out)
{
    size_t n = 0;
    for (size_t i = 0; i < npeople; i++) {
        const prow *p = &people[i];
        if (!p->has_city || (k == 2 && !p->has_age))
            continue;
        kslice v[2] = {kslice_make(p->city, p->cn), kslice_make(p->age, p->an)};
        int ok = 1;
        for (size_t j = 0; j < o->nvalues && ok; j++)
            ok = kslice_eq(v[j], o->values[j]);
        if (ok && o->has_value_start)
            ok = kslice_cmp(v[o->nvalues], o->value_start) >= 0;
        if (ok && o->has_value_stop)
            ok = kslice_cmp(v[o->nvalues], o->value_stop) < 0;
        if (ok)
            out[n++].i = i;
    }
    want_k = (int)k;
    qsort(out, n, sizeof *out, hit_cmp);
    return n;
}

static void
check_hit(const store_row *r, const prow *p, size_t i, int only_city)
{
    if (!kslice_eq(r->row, kslice_make(p->key, p->n)))
        fail_msg("index scan returned another row than the model's");
    size_t want = only_city ? 1 : 1 + (size_t)p->has_age + 1;
    if (r->count != want)
        fail_msg("row has %zu cells, model %zu", r->count, want);
    for (size_t c = 0; c < r->count; c++) {
        const kiln_cell *cl = &r->cells[c];
        if (cl->family[0] == 'e') {
            char v[16];
            int vn = snprintf(v, sizeof v, "x%zu", i);
            assert_true(kslice_eq(kslice_make(cl->value, cl->value_len),
                                  kslice_make(v, (size_t)vn)));
        } else if (cl->qualifier_len == 4) {
            assert_true(kslice_eq(kslice_make(cl->value, cl->value_len),
                                  kslice_make(p->city, p->cn)));
        } else {
            assert_false(only_city);
            assert_true(kslice_eq(kslice_make(cl->value, cl->value_len),
                                  kslice_make(p->age, p->an)));
        }
    }
}

static void
run_query(store_view *v, const char *index, size_t k, store_index_opts *o, hit *want)
{
    kiln_err err;
    status_clear(&err);
    size_t n = brute_force(k, o, want);
    size_t lim = o->limit && o->limit < n ? (size_t)o->limit : n;
    store_column city = {"d", (const uint8_t *)"city", 4};
    int only_city = rnd() % 4 == 0;
    if (only_city) {
        o->read.columns = &city;
        o->read.column_count = 1;
    }
    /* in pages of `page` rows, each resumed from the last position */
    uint64_t page = rnd() % 3 == 0 ? 1 + rnd() % 5 : 0;
    uint64_t limit = o->limit;
    size_t got = 0;
    kbuf after = KBUF_INIT;
    for (;;) {
        o->after = buf_slice(&after);
        o->limit = page ? (limit && limit - got < page ? limit - got : page) : limit;
        if (limit && got >= limit)
            break;
        store_index_scan *s;
        tu_must(store_index_scan_open(v, index, o, &s, &err), &err);
        size_t in_page = 0;
        for (;;) {
            store_row r;
            int has;
            tu_must(store_index_scan_next(s, &r, &has, &err), &err);
            if (!has)
                break;
            if (got >= lim)
                fail_msg("index %s returned more than the model's %zu rows", index, lim);
            check_hit(&r, &people[want[got].i], want[got].i, only_city);
            got++;
            in_page++;
        }
        kslice pos = store_index_scan_position(s);
        buf_reset(&after);
        buf_append(&after, pos.p, pos.n);
        store_index_scan_close(s);
        if (!page || in_page < page)
            break;
    }
    buf_free(&after);
    assert_int_equal(got, lim);
}

static void
index_scans(void **state)
{
    (void)state;
    hit *want = calloc(NROWS, sizeof *want);
    static const uint32_t salts[] = {0, 1, 3, 16};
    for (int round = 0; round < 4; round++) {
        char name[40];
        snprintf(name, sizeof name, "default:people%d", round);
        kiln_schema base;
        make_base(&base, name, salts[round]);
        kiln_err err;
        status_clear(&err);
        tu_must(table_create(data_dir, &base, &err), &err);
        schema_free(&base);
        gen_people();
        publish_people(name, salts[round]);
        store_view *v;
        tu_must(store_view_open(data_dir, name, NULL, &v, &err), &err);
        assert_int_equal(store_view_index_count(v), 2);
        assert_int_equal(store_view_find_index(v, "by_city_age"), 1);
        assert_int_equal(store_view_find_index(v, "nope"), -1);
        uint64_t stale = 0;
        for (int q = 0; q < 300; q++) {
            store_index_opts o;
            store_index_opts_init(&o);
            int two = (int)(rnd() % 2);
            const prow *p = &people[rnd() % npeople];
            kslice vals[2];
            uint8_t other[3], lo[2], hi[2];
            vals[0] = rnd() % 5 ? kslice_make(p->city, p->cn)
                                : kslice_make(other, small_bytes(other, 2));
            vals[1] = kslice_make(p->age, p->an);
            o.values = vals;
            uint64_t shape = rnd() % 4;
            if (!two) {
                o.nvalues = shape == 0 ? 0 : 1;
                if (shape == 0) {
                    o.has_value_start = (int)(rnd() % 2);
                    o.value_start = kslice_make(lo, small_bytes(lo, 2));
                    o.has_value_stop = (int)(rnd() % 2);
                    o.value_stop = kslice_make(hi, small_bytes(hi, 2));
                }
            } else {
                o.nvalues = shape == 0 ? 1 : shape == 1 ? 2 : 1;
                if (shape >= 2) {
                    o.has_value_start = (int)(rnd() % 2);
                    o.value_start = kslice_make(lo, small_bytes(lo, 2));
                    o.has_value_stop = (int)(rnd() % 2);
                    o.value_stop = kslice_make(hi, small_bytes(hi, 2));
                }
            }
            if (rnd() % 3 == 0)
                o.limit = 1 + rnd() % 10;
            run_query(v, two ? "by_city_age" : "by_city", two ? 2 : 1, &o, want);
        }
        /* bad requests */
        store_index_opts o;
        store_index_opts_init(&o);
        kslice three[3] = {kslice_str("a"), kslice_str("b"), kslice_str("c")};
        o.values = three;
        o.nvalues = 2;
        store_index_scan *s;
        status_clear(&err);
        assert_int_equal(store_index_scan_open(v, "by_city", &o, &s, &err), KILN_INVALID);
        o.nvalues = 1;
        o.has_value_start = 1;
        status_clear(&err);
        assert_int_equal(store_index_scan_open(v, "by_city", &o, &s, &err), KILN_INVALID);
        status_clear(&err);
        assert_int_equal(store_index_scan_open(v, "nope", &o, &s, &err), KILN_NOT_FOUND);
        assert_non_null(strstr(err.msg, "by_city, by_city_age"));
        /* the whole index: every stale entry is skipped and counted */
        store_index_opts_init(&o);
        tu_must(store_index_scan_open(v, "by_city", &o, &s, &err), &err);
        size_t rows = 0;
        for (;;) {
            store_row r;
            int has;
            tu_must(store_index_scan_next(s, &r, &has, &err), &err);
            if (!has)
                break;
            rows++;
        }
        stale = store_index_scan_stale(s);
        store_index_scan_close(s);
        assert_int_equal(rows, brute_force(1, &o, want));
        assert_true(stale > 0);

        /* version 2 with other values; the open view still answers from version 1 */
        size_t v1_rows = rows;
        prow saved[NROWS];
        memcpy(saved, people, sizeof saved);
        for (size_t i = 0; i < npeople; i++) {
            people[i].cn = small_bytes(people[i].city, 2);
            people[i].has_city = rnd() % 2;
        }
        publish_people(name, salts[round]);
        prow v2[NROWS];
        memcpy(v2, people, sizeof v2);
        memcpy(people, saved, sizeof saved);
        for (int q = 0; q < 30; q++) {
            const prow *p = &people[rnd() % npeople];
            kslice val = kslice_make(p->city, p->cn);
            store_index_opts_init(&o);
            o.values = &val;
            o.nvalues = 1;
            run_query(v, "by_city", 1, &o, want);
        }
        store_view *v2view;
        tu_must(store_view_open(data_dir, name, NULL, &v2view, &err), &err);
        memcpy(people, v2, sizeof v2);
        for (int q = 0; q < 30; q++) {
            const prow *p = &people[rnd() % npeople];
            kslice val = kslice_make(p->city, p->cn);
            store_index_opts_init(&o);
            o.values = &val;
            o.nvalues = 1;
            run_query(v2view, "by_city", 1, &o, want);
        }
        printf("  round %d: salt %u, %zu rows, %zu indexed by city (v1), %llu stale entries "
               "skipped\n", round, salts[round], npeople, v1_rows, (unsigned long long)stale);
        store_view_unref(v2view);
        store_view_unref(v);
    }
    free(want);
}

static int
setup(void **state)
{
    (void)state;
    tu_mkdtemp(data_dir, sizeof data_dir, "index");
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    tu_rmrf(data_dir);
    return 0;
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_store_index: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(key_encoding),
        cmocka_unit_test(definitions),
        cmocka_unit_test(index_scans),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
