/* test_store_salt.c -- salted tables through the region store.
 *
 * The bucket function against a bit-by-bit CRC-32C and MurmurHash3 finalizer
 * written here from their definitions, and its spread of sequential keys.
 * Then random tables (binary user keys with 0x00 and 0xFF, bucket counts 1 to
 * 256, default bucket regions or random stored split keys, two loads with
 * overwrites) against a sorted model of the user rows: every Get, forward and
 * reversed scans with random start / stop / prefix / limit, count, and the
 * HTTP paging loop (limit L + 1, the extra row starts the next page) in both
 * directions must give the rows in user key order with the salt hidden.
 * Seed printed; replay with KILN_TEST_SEED. */
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

/* ------------------------------------------------------------------ bucket function */

/* CRC-32C one bit at a time from the reflected polynomial. */
static uint32_t
ref_crc32c(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static uint32_t
ref_bucket(const uint8_t *p, size_t n, uint32_t buckets)
{
    uint32_t h = ref_crc32c(p, n);
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h % buckets;
}

static void
bucket_function(void **state)
{
    (void)state;
    /* the published check value of CRC-32C */
    assert_int_equal(ref_crc32c((const uint8_t *)"123456789", 9), 0xE3069283u);
    for (int i = 0; i < 5000; i++) {
        uint8_t k[40];
        size_t n = rnd() % sizeof k;
        for (size_t j = 0; j < n; j++)
            k[j] = (uint8_t)rnd();
        uint32_t buckets = 1 + (uint32_t)(rnd() % 256);
        uint32_t b = store_salt_bucket(k, n, buckets);
        assert_int_equal(b, ref_bucket(k, n, buckets));
        assert_true(b < buckets);
        kbuf s = KBUF_INIT;
        store_salt_key(&s, buckets, k, n);
        assert_int_equal(s.len, n + 1);
        assert_int_equal(s.data[0], b);
        assert_memory_equal(s.data + 1, k, n);
        assert_int_equal(store_salt_key_ok(s.data, s.len, buckets), n > 0);
        if (buckets > 1 && n > 0) {
            s.data[0] = (uint8_t)((b + 1) % buckets);
            assert_false(store_salt_key_ok(s.data, s.len, buckets));
        }
        buf_free(&s);
    }
    /* sequential keys spread evenly: every bucket within 15% of the mean
     * (1000 keys a bucket: 15% is over four standard deviations) */
    static const uint32_t ns[] = {2, 7, 16, 64, 256};
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        uint32_t counts[256] = {0};
        const int keys = 1000 * (int)ns[t];
        for (int i = 0; i < keys; i++) {
            char k[32];
            int n = snprintf(k, sizeof k, "user%08d", i);
            counts[store_salt_bucket((const uint8_t *)k, (size_t)n, ns[t])]++;
        }
        for (uint32_t b = 0; b < ns[t]; b++) {
            if (counts[b] < 850 || counts[b] > 1150)
                fail_msg("%u buckets: bucket %u got %u of %d sequential keys", ns[t], b,
                         counts[b], keys);
        }
    }
}

/* ------------------------------------------------------------------ model */

#define MAXROWS 600
#define ROWMAX 6

typedef struct mrow {
    uint8_t key[ROWMAX];
    size_t n;
    char value[32];          /* newest value of f:q */
    size_t vn;
} mrow;

static mrow rows[MAXROWS];
static size_t nrows;

static int
mrow_cmp(const void *a, const void *b)
{
    const mrow *x = a, *y = b;
    return kslice_cmp(kslice_make(x->key, x->n), kslice_make(y->key, y->n));
}

static void
gen_rows(void)
{
    nrows = 0;
    size_t want = 50 + rnd() % (MAXROWS - 50);
    while (nrows < want) {
        mrow *r = &rows[nrows];
        r->n = 1 + rnd() % ROWMAX;
        for (size_t j = 0; j < r->n; j++) {
            uint64_t x = rnd() % 6;
            r->key[j] = x == 0 ? 0x00 : x == 1 ? 0xFF : (uint8_t)('a' + rnd() % 4);
        }
        int dup = 0;
        for (size_t i = 0; i < nrows && !dup; i++)
            dup = rows[i].n == r->n && memcmp(rows[i].key, r->key, r->n) == 0;
        if (!dup)
            nrows++;
    }
    qsort(rows, nrows, sizeof *rows, mrow_cmp);
}

/* A stored cell, for sorting by stored key. */
typedef struct scell {
    kbuf row;                /* stored key */
    char value[32];
    size_t vn;
    int64_t ts;
} scell;

static int
scell_cmp(const void *a, const void *b)
{
    const scell *x = a, *y = b;
    int c = kslice_cmp(buf_slice(&x->row), buf_slice(&y->row));
    return c != 0 ? c : (x->ts > y->ts ? -1 : x->ts < y->ts);
}

/* Write `load` of the table: every row (load 1) or a random half with new
 * values (load 2), one file per region, and publish it. */
static void
load(const char *name, int which)
{
    kiln_err err;
    status_clear(&err);
    kiln_table *t;
    tu_must(table_open(data_dir, name, &t, &err), &err);
    const kiln_schema *s = table_schema(t);
    tu_must(table_lock(t, 0, &err), &err);
    manifest cur;
    int have = table_read_current(t, &cur, &err) == KILN_OK;
    status_clear(&err);
    uint64_t version;
    tu_must(table_next_version(t, &version, &err), &err);
    manifest m;
    if (have) {
        manifest_copy(&m, &cur);
        m.parent = cur.version;
        manifest_free(&cur);
    } else {
        manifest_init(&m);
        manifest_add_table(&m, s);
    }
    m.version = version;
    m.kind = MANIFEST_KIND_APPEND;
    m.created_ms = table_now_ms();
    scell *sc = calloc(nrows, sizeof *sc);
    size_t n = 0;
    for (size_t i = 0; i < nrows; i++) {
        if (which == 2 && rnd() % 2)
            continue;
        mrow *r = &rows[i];
        r->vn = (size_t)snprintf(r->value, sizeof r->value, "v%d-%zu", which, i);
        buf_init(&sc[n].row);
        store_salt_key(&sc[n].row, s->salt_buckets, r->key, r->n);
        memcpy(sc[n].value, r->value, r->vn);
        sc[n].vn = r->vn;
        sc[n].ts = 1000 + which;
        n++;
    }
    qsort(sc, n, sizeof *sc, scell_cmp);
    manifest_table *mt = &m.tables[0];
    uint32_t fileno = 0;
    for (size_t reg = 0; reg < mt->region_count; reg++) {
        hfile_writer *w = NULL;
        manifest_file mf;
        memset(&mf, 0, sizeof mf);
        snprintf(mf.family, sizeof mf.family, "f");
        table_file_name(version, fileno++, mf.name);
        mf.seq = version;
        for (size_t i = 0; i < n; i++) {
            if (manifest_region_for_row(mt, sc[i].row.data, sc[i].row.len) != reg)
                continue;
            if (w == NULL) {
                hfile_writer_options o;
                hfile_writer_options_init(&o);
                o.block_size = 256;
                o.sync = 0;
                char p[4096];
                table_file_path(t, mf.name, p, sizeof p);
                tu_must(hfile_writer_open(p, &o, &w, &err), &err);
            }
            kiln_cell c;
            memset(&c, 0, sizeof c);
            c.row = sc[i].row.data;
            c.row_len = (uint32_t)sc[i].row.len;
            c.family = (const uint8_t *)"f";
            c.family_len = 1;
            c.qualifier = (const uint8_t *)"q";
            c.qualifier_len = 1;
            c.ts = sc[i].ts;
            c.type = CELL_TYPE_PUT;
            c.value = (const uint8_t *)sc[i].value;
            c.value_len = (uint32_t)sc[i].vn;
            tu_must(hfile_writer_add(w, &c, &err), &err);
            mf.entries++;
        }
        if (w != NULL) {
            hfile_writer_stats st;
            tu_must(hfile_writer_finish(w, &st, &err), &err);
            mf.size = st.file_size;
            manifest_region_add_file(&mt->regions[reg], &mf);
        }
    }
    int published;
    tu_must(table_publish(t, &m, &published, &err), &err);
    manifest_free(&m);
    table_close(t);
    for (size_t i = 0; i < n; i++)
        buf_free(&sc[i].row);
    free(sc);
}

static void
expect_row(const store_row *got, const mrow *want)
{
    if (!kslice_eq(got->row, kslice_make(want->key, want->n)))
        fail_msg("row of %zu bytes where the model has %zu", got->row.n, want->n);
    assert_int_equal(got->count, 1);
    const kiln_cell *c = &got->cells[0];
    assert_true(kslice_eq(kslice_make(c->row, c->row_len), got->row));
    assert_int_equal(c->value_len, want->vn);
    assert_memory_equal(c->value, want->value, want->vn);
}

static void
random_key(uint8_t *k, size_t *n)
{
    *n = rnd() % 4;
    for (size_t j = 0; j < *n; j++) {
        uint64_t x = rnd() % 6;
        k[j] = x == 0 ? 0x00 : x == 1 ? 0xFF : (uint8_t)('a' + rnd() % 4);
    }
}

/* Model rows of a scan, in scan order, into idx; returns the count. */
static size_t
model_scan(const store_scan_opts *o, size_t *idx)
{
    size_t n = 0;
    kslice start = kslice_make(o->start, o->start_len), stop = kslice_make(o->stop, o->stop_len);
    for (size_t k = 0; k < nrows; k++) {
        size_t i = o->reversed ? nrows - 1 - k : k;
        kslice r = kslice_make(rows[i].key, rows[i].n);
        if (o->prefix_len > 0 && (r.n < o->prefix_len || memcmp(r.p, o->prefix, o->prefix_len)))
            continue;
        if (!o->reversed) {
            if (start.n > 0 && kslice_cmp(r, start) < 0)
                continue;
            if (stop.n > 0 && kslice_cmp(r, stop) >= 0)
                continue;
        } else {
            if (start.n > 0 && kslice_cmp(r, start) > 0)
                continue;
            if (stop.n > 0 && kslice_cmp(r, stop) <= 0)
                continue;
        }
        if (o->limit > 0 && n == o->limit)
            break;
        idx[n++] = i;
    }
    return n;
}

/* Every page of a scan the way the HTTP API pages it. */
static void
check_paging(store_view *v, int reversed, uint64_t page)
{
    kiln_err err;
    status_clear(&err);
    size_t got = 0;
    kbuf start = KBUF_INIT;
    int more = 1;
    while (more) {
        store_scan_opts o;
        store_scan_opts_init(&o);
        o.reversed = reversed;
        o.start = start.data;
        o.start_len = start.len;
        o.limit = page + 1;
        store_scan *s;
        tu_must(store_scan_open(v, &o, &s, &err), &err);
        uint64_t n = 0;
        more = 0;
        for (;;) {
            store_row r;
            int has;
            tu_must(store_scan_next(s, &r, &has, &err), &err);
            if (!has)
                break;
            if (n == page) {
                buf_reset(&start);
                buf_append(&start, r.row.p, r.row.n);
                more = 1;
                break;
            }
            size_t want = reversed ? nrows - 1 - got : got;
            assert_true(got < nrows);
            expect_row(&r, &rows[want]);
            got++;
            n++;
        }
        store_scan_close(s);
    }
    buf_free(&start);
    assert_int_equal(got, nrows);
}

/* A job reads a salted table one bucket at a time (one_bucket): each
 * bucket's scan returns exactly the model rows of that bucket, in user key
 * order within [start, stop), and a bucket past the count is refused. */
static void
check_one_bucket(store_view *v, uint32_t buckets, size_t *idx)
{
    kiln_err err;
    status_clear(&err);
    uint8_t a[4];
    size_t an;
    random_key(a, &an);
    store_scan_opts all;
    store_scan_opts_init(&all);
    if (rnd() % 2) {
        all.start = a;
        all.start_len = an;
    }
    size_t want_all = model_scan(&all, idx);
    size_t seen = 0;
    for (uint32_t b = 0; b < buckets; b++) {
        store_scan_opts o = all;
        o.one_bucket = 1;
        o.bucket = b;
        store_scan *sc;
        tu_must(store_scan_open(v, &o, &sc, &err), &err);
        size_t k = 0;   /* next model row to look at, in order */
        for (;;) {
            store_row r;
            int has;
            tu_must(store_scan_next(sc, &r, &has, &err), &err);
            if (!has)
                break;
            while (k < want_all && store_salt_bucket(rows[idx[k]].key, rows[idx[k]].n, buckets) != b)
                k++;
            if (k == want_all)
                fail_msg("bucket %u returned a row the model does not have there", b);
            expect_row(&r, &rows[idx[k]]);
            k++;
            seen++;
        }
        while (k < want_all && store_salt_bucket(rows[idx[k]].key, rows[idx[k]].n, buckets) != b)
            k++;
        assert_int_equal(k, want_all);   /* no row of the bucket left unread */
        store_scan_close(sc);
    }
    assert_int_equal(seen, want_all);
    store_scan_opts o = all;
    o.one_bucket = 1;
    o.bucket = buckets;
    store_scan *sc = NULL;
    status_clear(&err);
    assert_int_equal(store_scan_open(v, &o, &sc, &err), KILN_INVALID);
    store_scan_close(sc);
}

/* What a job's planner uses: a kept older version opens by number, a
 * version that was never made is refused naming it, and a region's cut rows
 * are strictly inside the region, increasing. */
static void
check_versions_and_cuts(const char *name, store_view *cur)
{
    kiln_err err;
    status_clear(&err);
    store_view *v1;
    tu_must(store_view_open_version(data_dir, name, 1, NULL, &v1, &err), &err);
    assert_int_equal(store_view_version(v1), 1);
    assert_int_equal(store_view_version(cur), 2);
    store_view_unref(v1);
    store_view *v0;
    tu_must(store_view_open_version(data_dir, name, 0, NULL, &v0, &err), &err);
    assert_int_equal(store_view_version(v0), 2);
    store_view_unref(v0);
    store_view *none = NULL;
    status_clear(&err);
    assert_int_equal(store_view_open_version(data_dir, name, 99, NULL, &none, &err), KILN_NOT_FOUND);
    assert_non_null(strstr(err.msg, "version 99"));
    assert_null(none);
    for (size_t r = 0; r < store_view_region_count(cur); r++) {
        kbuf cuts = KBUF_INIT;
        size_t n;
        size_t max = 1 + rnd() % 8;
        tu_must(store_view_region_cut_rows(cur, r, max, &cuts, &n, &err), &err);
        assert_true(n <= max);
        kslice lo = store_view_region_start(cur, r), hi = store_view_region_end(cur, r);
        kslice prev = lo;
        for (size_t i = 0, off = 0; i < n; i++) {
            uint32_t len = (uint32_t)cuts.data[off] << 24 | (uint32_t)cuts.data[off + 1] << 16 |
                           (uint32_t)cuts.data[off + 2] << 8 | cuts.data[off + 3];
            kslice row = kslice_make(cuts.data + off + 4, len);
            off += 4 + len;
            assert_true(kslice_cmp(row, prev) > 0);
            if (hi.n > 0)
                assert_true(kslice_cmp(row, hi) < 0);
            prev = row;
        }
        buf_free(&cuts);
    }
}

static void
salted_model(void **state)
{
    (void)state;
    static const uint32_t bucket_counts[] = {1, 2, 3, 7, 16, 256};
    size_t *idx = calloc(MAXROWS, sizeof *idx);
    for (int round = 0; round < 12; round++) {
        uint32_t buckets = bucket_counts[rnd() % (sizeof bucket_counts / sizeof bucket_counts[0])];
        char name[32];
        snprintf(name, sizeof name, "salt%d", round);
        kiln_schema s;
        schema_init(&s);
        snprintf(s.name, sizeof s.name, "default:%s", name);
        schema_family f;
        schema_family_defaults(&f, "f");
        f.bloom = round % 2 ? BLOOM_ROW : BLOOM_NONE;
        kiln_err err;
        status_clear(&err);
        tu_must(schema_add_family(&s, &f, &err), &err);
        s.salt_buckets = buckets;
        if (round % 3 == 2) {
            /* stored-key splits that cut inside buckets */
            for (int k = 0; k < 3; k++) {
                uint8_t key[2] = {(uint8_t)(rnd() % buckets), (uint8_t)('a' + k)};
                schema_add_split(&s, key, 2, NULL);
            }
            /* drop repeats (random buckets may coincide) */
            kiln_schema clean;
            schema_init(&clean);
            snprintf(clean.name, sizeof clean.name, "default:%s", name);
            tu_must(schema_add_family(&clean, &f, &err), &err);
            clean.salt_buckets = buckets;
            tu_must(schema_validate(&s, &err), &err);
            for (size_t k = 0; k < s.split_count; k++) {
                if (k > 0 && kslice_eq(buf_slice(&s.splits[k]), buf_slice(&s.splits[k - 1])))
                    continue;
                schema_add_split(&clean, s.splits[k].data, s.splits[k].len, NULL);
            }
            schema_free(&s);
            s = clean;
        } else {
            schema_salt_default_splits(&s);
            assert_int_equal(schema_region_count(&s), buckets);
        }
        tu_must(table_create(data_dir, &s, &err), &err);
        schema_free(&s);
        gen_rows();
        load(name, 1);
        load(name, 2);

        store_view *v;
        tu_must(store_view_open(data_dir, name, NULL, &v, &err), &err);
        store_row_buf *buf = store_row_buf_new();
        for (size_t i = 0; i < nrows; i++) {
            store_row r;
            tu_must(store_view_get(v, rows[i].key, rows[i].n, NULL, buf, &r, &err), &err);
            expect_row(&r, &rows[i]);
        }
        for (int i = 0; i < 100; i++) {
            uint8_t k[4];
            size_t n;
            random_key(k, &n);
            if (n == 0)
                continue;
            mrow key;
            memcpy(key.key, k, n);
            key.n = n;
            int present = bsearch(&key, rows, nrows, sizeof *rows, mrow_cmp) != NULL;
            store_row r;
            tu_must(store_view_get(v, k, n, NULL, buf, &r, &err), &err);
            assert_int_equal(r.count > 0, present);
            assert_true(kslice_eq(r.row, kslice_make(k, n)));
        }
        for (int q = 0; q < 60; q++) {
            uint8_t a[4], b[4], p[4];
            size_t an, bn, pn;
            random_key(a, &an);
            random_key(b, &bn);
            random_key(p, &pn);
            store_scan_opts o;
            store_scan_opts_init(&o);
            o.reversed = (int)(rnd() % 2);
            if (rnd() % 2) {
                o.start = a;
                o.start_len = an;
            }
            if (rnd() % 2) {
                o.stop = b;
                o.stop_len = bn;
            }
            if (rnd() % 3 == 0) {
                o.prefix = p;
                o.prefix_len = pn;
            }
            if (rnd() % 2)
                o.limit = 1 + rnd() % 20;
            size_t want = model_scan(&o, idx);
            store_scan *sc;
            tu_must(store_scan_open(v, &o, &sc, &err), &err);
            size_t got = 0;
            for (;;) {
                store_row r;
                int has;
                tu_must(store_scan_next(sc, &r, &has, &err), &err);
                if (!has)
                    break;
                if (got >= want)
                    fail_msg("scan returned more than the model's %zu rows", want);
                expect_row(&r, &rows[idx[got]]);
                got++;
            }
            store_scan_close(sc);
            assert_int_equal(got, want);
            uint64_t count;
            o.limit = 0;
            o.reversed = 0;
            tu_must(store_view_count(v, &o, &count, &err), &err);
            assert_int_equal(count, model_scan(&o, idx));
        }
        check_paging(v, 0, 1 + rnd() % 30);
        check_paging(v, 1, 1 + rnd() % 30);
        check_one_bucket(v, buckets, idx);
        check_versions_and_cuts(name, v);
        /* a row too long once salted */
        uint8_t *longrow = calloc(CELL_ROW_MAX, 1);
        memset(longrow, 'x', CELL_ROW_MAX);
        store_row r;
        status_clear(&err);
        assert_int_equal(store_view_get(v, longrow, CELL_ROW_MAX, NULL, buf, &r, &err),
                         KILN_INVALID);
        free(longrow);
        printf("  round %d: %u bucket(s), %zu regions, %zu rows\n", round, buckets,
               store_view_region_count(v), nrows);
        store_row_buf_free(buf);
        store_view_unref(v);
    }
    free(idx);
}

static int
setup(void **state)
{
    (void)state;
    tu_mkdtemp(data_dir, sizeof data_dir, "salt");
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
    printf("test_store_salt: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bucket_function),
        cmocka_unit_test(salted_model),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
