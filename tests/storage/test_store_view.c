/* test_store_view.c -- the region store's read path against a naive model.
 * Random cells (binary rows, four families with different VERSIONS / TTL /
 * bloom settings, every delete marker type, colliding timestamps) are written
 * as several loads of HFiles into random regions and published; every Get and
 * Scan (forward and reversed, start / stop / prefix / limit, columns,
 * versions, time range) must return exactly what the model computes from the
 * plain list of cells. Also: a view keeps reading its version while newer
 * versions are published and its files deleted; is_current; empty tables. */
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
#include <sys/wait.h>
#include <unistd.h>

#include "storage/base/block_cache.h"
#include "storage/hfile/cell.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/manifest.h"
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

/* ------------------------------------------------------------------ model */

#define NOW_MS 1700000000000LL
#define TS_BASE (NOW_MS - 1010000)   /* family b's TTL (1000 s) cuts at TS_BASE + 10000 */

typedef struct mcell {
    uint8_t row[4];
    uint32_t row_len;
    int fam;                 /* index into FAMS */
    uint8_t qual[3];
    uint32_t qual_len;
    int64_t ts;
    uint8_t type;
    char value[24];
    uint32_t value_len;
    uint64_t seq;            /* load */
} mcell;

static const char *FAMS[] = {"a", "b", "c", "d"};
#define NFAMS 4
/* a: versions 3; b: versions 1, ttl 1000 s; c: versions 5, rowcol bloom; d: no bloom, versions 2 */
static const uint32_t FAM_VERSIONS[NFAMS] = {3, 1, 5, 2};
static const int64_t FAM_TTL_MS[NFAMS] = {0, 1000000, 0, 0};

static mcell *cells;
static size_t ncells;
static uint8_t rows_u[80][4];
static uint32_t rows_len[80];
static size_t nrows_u;

static kiln_cell
to_kcell(const mcell *m)
{
    kiln_cell c;
    memset(&c, 0, sizeof c);
    c.row = m->row;
    c.row_len = m->row_len;
    c.family = (const uint8_t *)FAMS[m->fam];
    c.family_len = 1;
    c.qualifier = m->qual;
    c.qualifier_len = m->qual_len;
    c.ts = m->ts;
    c.type = m->type;
    c.value = (const uint8_t *)m->value;
    c.value_len = m->value_len;
    return c;
}

static int
mcell_cmp(const void *a, const void *b)
{
    kiln_cell x = to_kcell(a), y = to_kcell(b);
    return cell_compare(&x, &y);
}

static void
gen_cells(size_t n)
{
    nrows_u = 40 + rnd() % 40;
    for (size_t i = 0; i < nrows_u; i++) {
        rows_len[i] = 1 + (uint32_t)(rnd() % 3);
        for (uint32_t j = 0; j < rows_len[i]; j++) {
            uint64_t r = rnd() % 8;
            rows_u[i][j] = r == 0 ? 0x00 : r == 1 ? 0xFF : (uint8_t)('a' + rnd() % 6);
        }
    }
    static const uint8_t quals[][3] = {{0}, {'q', '1'}, {'q', '2'}, {0x00, 'x'}};
    static const uint32_t qlens[] = {0, 2, 2, 2};
    cells = calloc(n, sizeof *cells);
    ncells = n;
    for (size_t i = 0; i < n; i++) {
        mcell *m = &cells[i];
        size_t r = rnd() % nrows_u;
        memcpy(m->row, rows_u[r], rows_len[r]);
        m->row_len = rows_len[r];
        m->fam = (int)(rnd() % NFAMS);
        size_t q = rnd() % 4;
        memcpy(m->qual, quals[q], qlens[q]);
        m->qual_len = qlens[q];
        m->ts = TS_BASE + (int64_t)(rnd() % 21) * 1000;
        uint64_t t = rnd() % 20;
        m->type = t < 14 ? CELL_TYPE_PUT : t < 16 ? CELL_TYPE_DELETE
                : t < 18 ? CELL_TYPE_DELETE_COLUMN : t < 19 ? CELL_TYPE_DELETE_FAMILY
                : CELL_TYPE_DELETE_FAMILY_VERSION;
        if (m->type == CELL_TYPE_DELETE_FAMILY || m->type == CELL_TYPE_DELETE_FAMILY_VERSION)
            m->qual_len = 0;
        m->seq = 1 + rnd() % 3;
        if (m->type == CELL_TYPE_PUT)
            m->value_len = (uint32_t)snprintf(m->value, sizeof m->value, "v%zu.s%llu", i,
                                              (unsigned long long)m->seq);
    }
}

/* Request as the model sees it. */
typedef struct mreq {
    int fam_on[NFAMS];
    int all_quals[NFAMS];
    int qual_on[NFAMS][4];   /* by qualifier index as in gen_cells */
    uint32_t versions;
    int64_t ts_min, ts_max;
} mreq;

static int
qual_index(const mcell *m)
{
    if (m->qual_len == 0)
        return 0;
    if (m->qual[0] == 0x00)
        return 3;
    return m->qual[1] == '1' ? 1 : 2;
}

static int
same_row(const mcell *m, const uint8_t *row, size_t n)
{
    return m->row_len == n && memcmp(m->row, row, n) == 0;
}

static int
same_col(const mcell *a, const mcell *b)
{
    return a->fam == b->fam && a->qual_len == b->qual_len &&
           memcmp(a->qual, b->qual, a->qual_len) == 0;
}

/* Is put p masked by a marker of the same row? (HBase rules, stated plainly.) */
static int
masked(const mcell *p, const mcell *rowcells, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const mcell *d = &rowcells[i];
        if (d->fam != p->fam)
            continue;
        switch (d->type) {
        case CELL_TYPE_DELETE_FAMILY:
            if (d->ts >= p->ts)
                return 1;
            break;
        case CELL_TYPE_DELETE_FAMILY_VERSION:
            if (d->ts == p->ts)
                return 1;
            break;
        case CELL_TYPE_DELETE_COLUMN:
            if (same_col(d, p) && d->ts >= p->ts)
                return 1;
            break;
        case CELL_TYPE_DELETE:
            if (same_col(d, p) && d->ts == p->ts)
                return 1;
            break;
        default:
            break;
        }
    }
    return 0;
}

/* The expected visible cells of a row, in HBase order, into out (max cap). */
static size_t
model_row(const uint8_t *row, size_t rlen, const mreq *q, const mcell **out, size_t cap)
{
    /* gather the row's cells (cells[] is sorted) */
    size_t lo = 0;
    while (lo < ncells && !same_row(&cells[lo], row, rlen))
        lo++;
    size_t hi = lo;
    while (hi < ncells && same_row(&cells[hi], row, rlen))
        hi++;
    size_t n = 0;
    for (size_t i = lo; i < hi; i++) {
        const mcell *p = &cells[i];
        if (p->type != CELL_TYPE_PUT || !q->fam_on[p->fam])
            continue;
        if (!q->all_quals[p->fam] && !q->qual_on[p->fam][qual_index(p)])
            continue;
        /* the newest load's copy of an equal key wins: skip p if another put
         * with the same column and ts has a larger seq (or equal seq, earlier) */
        int shadowed = 0;
        for (size_t j = lo; j < hi && !shadowed; j++) {
            const mcell *o = &cells[j];
            if (j != i && o->type == CELL_TYPE_PUT && same_col(o, p) && o->ts == p->ts &&
                (o->seq > p->seq || (o->seq == p->seq && j < i)))
                shadowed = 1;
        }
        if (shadowed || masked(p, &cells[lo], hi - lo))
            continue;
        if (FAM_TTL_MS[p->fam] && p->ts < NOW_MS - FAM_TTL_MS[p->fam])
            continue;
        if (p->ts < q->ts_min || p->ts >= q->ts_max)
            continue;
        /* versions: count visible puts of the column with larger ts before p */
        uint32_t maxv = q->versions < FAM_VERSIONS[p->fam] ? q->versions : FAM_VERSIONS[p->fam];
        uint32_t before = 0;
        for (size_t k = 0; k < n; k++) {
            if (same_col(out[k], p))
                before++;
        }
        if (before >= maxv)
            continue;
        assert_true(n < cap);
        out[n++] = p;
    }
    return n;
}

/* ------------------------------------------------------------------ store */

static void
build_store(const char *table, int nsplits)
{
    kiln_err err;
    status_clear(&err);
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "%s", table);
    schema_family f;
    tu_must(schema_family_parse("a:versions=3", &f, &err), &err);
    tu_must(schema_add_family(&s, &f, &err), &err);
    tu_must(schema_family_parse("b:ttl=1000", &f, &err), &err);
    tu_must(schema_add_family(&s, &f, &err), &err);
    tu_must(schema_family_parse("c:versions=5,bloom=rowcol,compression=gz", &f, &err), &err);
    tu_must(schema_add_family(&s, &f, &err), &err);
    tu_must(schema_family_parse("d:versions=2,bloom=none,compression=none", &f, &err), &err);
    tu_must(schema_add_family(&s, &f, &err), &err);
    for (int i = 0; i < nsplits; i++) {
        size_t r = rnd() % nrows_u;
        schema_add_split(&s, rows_u[r], rows_len[r], &err);
    }
    if (schema_validate(&s, &err) != KILN_OK) {
        for (size_t i = 0; i < s.split_count; i++)
            buf_free(&s.splits[i]);
        s.split_count = 0;
        status_clear(&err);
    }
    tu_must(table_create(data_dir, &s, &err), &err);
    schema_free(&s);

    kiln_table *t;
    tu_must(table_open(data_dir, table, &t, &err), &err);
    tu_must(table_lock(t, 0, &err), &err);
    uint64_t version;
    tu_must(table_next_version(t, &version, &err), &err);
    manifest m;
    manifest_init(&m);
    manifest_table *mt = manifest_add_table(&m, table_schema(t));
    m.version = version;
    m.kind = MANIFEST_KIND_APPEND;
    m.created_ms = table_now_ms();
    uint32_t fileno = 0;
    /* one file per (load, region, family) */
    for (uint64_t seq = 1; seq <= 3; seq++) {
        for (size_t r = 0; r < mt->region_count; r++) {
            for (int fam = 0; fam < NFAMS; fam++) {
                hfile_writer *w = NULL;
                manifest_file mf;
                memset(&mf, 0, sizeof mf);
                snprintf(mf.family, sizeof mf.family, "%s", FAMS[fam]);
                table_file_name(version, fileno++, mf.name);
                mf.seq = seq;
                const kiln_cell *prev = NULL;
                kiln_cell prevc;
                for (size_t i = 0; i < ncells; i++) {
                    const mcell *c = &cells[i];
                    if (c->seq != seq || c->fam != fam ||
                        manifest_region_for_row(mt, c->row, c->row_len) != r)
                        continue;
                    kiln_cell kc = to_kcell(c);
                    if (prev != NULL && cell_compare(prev, &kc) == 0)
                        continue; /* one copy of a key per file */
                    if (w == NULL) {
                        hfile_writer_options o;
                        hfile_writer_options_init(&o);
                        o.block_size = 200 + (size_t)(rnd() % 400);
                        o.bloom = fam == 2 ? BLOOM_ROWCOL : fam == 3 ? BLOOM_NONE : BLOOM_ROW;
                        o.codec = fam == 2 ? CODEC_GZ : CODEC_SNAPPY;
                        o.sync = 0;
                        char p[4096];
                        table_file_path(t, mf.name, p, sizeof p);
                        tu_must(hfile_writer_open(p, &o, &w, &err), &err);
                    }
                    tu_must(hfile_writer_add(w, &kc, &err), &err);
                    mf.entries++;
                    prevc = kc;
                    prev = &prevc;
                }
                if (w != NULL) {
                    hfile_writer_stats stats;
                    tu_must(hfile_writer_finish(w, &stats, &err), &err);
                    mf.size = stats.file_size;
                    manifest_region_add_file(&mt->regions[r], &mf);
                }
            }
        }
    }
    int published;
    tu_must(table_publish(t, &m, &published, &err), &err);
    manifest_free(&m);
    table_close(t);
    /* the model holds one copy per (key, seq) as the files do */
    size_t w = 0;
    for (size_t i = 0; i < ncells; i++) {
        int dup = 0;
        for (size_t j = 0; j < w && !dup; j++) {
            kiln_cell a = to_kcell(&cells[i]), b = to_kcell(&cells[j]);
            dup = cells[j].seq == cells[i].seq && cell_compare(&a, &b) == 0;
        }
        if (!dup)
            cells[w++] = cells[i];
    }
    ncells = w;
}

static void
random_request(mreq *q, store_row_opts *o, store_column *cols, char names[][2])
{
    store_row_opts_init(o);
    o->now_ms = NOW_MS;
    memset(q, 0, sizeof *q);
    q->versions = 1;
    q->ts_min = 0;
    q->ts_max = INT64_MAX;
    if (rnd() % 3 == 0) {
        q->versions = 1 + (uint32_t)(rnd() % 6);
        o->max_versions = q->versions;
    }
    if (rnd() % 4 == 0) {
        q->ts_min = TS_BASE + (int64_t)(rnd() % 21) * 1000;
        q->ts_max = q->ts_min + (int64_t)(rnd() % 10) * 1000;
        o->ts_min = q->ts_min;
        o->ts_max = q->ts_max;
    }
    static const uint8_t quals[][3] = {{0}, {'q', '1'}, {'q', '2'}, {0x00, 'x'}};
    static const uint32_t qlens[] = {0, 2, 2, 2};
    size_t nc = 0;
    if (rnd() % 2 == 0) {
        for (int f = 0; f < NFAMS; f++) {
            q->fam_on[f] = 1;
            q->all_quals[f] = 1;
        }
    } else {
        int k = 1 + (int)(rnd() % 3);
        for (int i = 0; i < k; i++) {
            int f = (int)(rnd() % NFAMS);
            names[nc][0] = FAMS[f][0];
            names[nc][1] = 0;
            cols[nc].family = names[nc];
            q->fam_on[f] = 1;
            if (rnd() % 2 == 0) {
                cols[nc].qualifier = NULL;
                cols[nc].qualifier_len = 0;
                q->all_quals[f] = 1;
            } else {
                int qi = (int)(rnd() % 4);
                cols[nc].qualifier = quals[qi];
                cols[nc].qualifier_len = qlens[qi];
                q->qual_on[f][qi] = 1;
            }
            nc++;
        }
        o->columns = cols;
        o->column_count = nc;
    }
}

static void
compare_row(const store_row *got, const mcell *const *want, size_t n)
{
    if (got->count != n) {
        for (size_t i = 0; i < got->count; i++)
            printf("  got  %s q%u ts %lld type %d %.*s\n", (const char *)"", got->cells[i].qualifier_len,
                   (long long)got->cells[i].ts, got->cells[i].type, (int)got->cells[i].value_len,
                   (const char *)got->cells[i].value);
        for (size_t i = 0; i < n; i++)
            printf("  want fam %d q%u ts %lld %.*s\n", want[i]->fam, want[i]->qual_len, (long long)want[i]->ts,
                   (int)want[i]->value_len, want[i]->value);
        for (size_t i = 0; i < ncells; i++) {
            if (same_row(&cells[i], got->row.p, got->row.n))
                printf("  cell fam %d q[%u]=%02x%02x ts %lld type %d seq %llu %.*s\n", cells[i].fam,
                       cells[i].qual_len, cells[i].qual[0], cells[i].qual[1], (long long)cells[i].ts,
                       cells[i].type, (unsigned long long)cells[i].seq, (int)cells[i].value_len,
                       cells[i].value);
        }
        fail_msg("row has %zu cells, model %zu", got->count, n);
    }
    for (size_t i = 0; i < n; i++) {
        const kiln_cell *g = &got->cells[i];
        kiln_cell w = to_kcell(want[i]);
        assert_int_equal(cell_compare(g, &w), 0);
        assert_int_equal(g->value_len, w.value_len);
        assert_memory_equal(g->value, w.value, w.value_len);
        assert_true(kslice_eq(got->row, kslice_make(w.row, w.row_len)));
    }
}

static int
row_cmp(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    return kslice_cmp(kslice_make(rows_u[i], rows_len[i]), kslice_make(rows_u[j], rows_len[j]));
}

static void
model_vs_store(void **state)
{
    (void)state;
    for (int round = 0; round < 6; round++) {
        char table[32];
        snprintf(table, sizeof table, "m%d", round);
        gen_cells(300 + rnd() % 1500);
        qsort(cells, ncells, sizeof *cells, mcell_cmp);
        build_store(table, (int)(rnd() % 5));
        qsort(cells, ncells, sizeof *cells, mcell_cmp);
        /* unique sorted rows */
        size_t order[80], nu = 0;
        for (size_t i = 0; i < nrows_u; i++) {
            int dup = 0;
            for (size_t j = 0; j < nu && !dup; j++)
                dup = kslice_eq(kslice_make(rows_u[order[j]], rows_len[order[j]]),
                                kslice_make(rows_u[i], rows_len[i]));
            if (!dup)
                order[nu++] = i;
        }
        qsort(order, nu, sizeof *order, row_cmp);

        block_cache *cache = block_cache_new(1 << 20);
        store_view *v;
        kiln_err err;
        status_clear(&err);
        tu_must(store_view_open(data_dir, table, cache, &v, &err), &err);
        assert_int_equal(store_view_version(v), 1);
        store_row_buf *buf = store_row_buf_new();
        const mcell *want[4096];
        /* Gets */
        for (int g = 0; g < 400; g++) {
            mreq q;
            store_row_opts o;
            store_column cols[4];
            char names[4][2];
            random_request(&q, &o, cols, names);
            uint8_t row[4];
            size_t rl;
            size_t r = rnd() % (nrows_u + 5);
            if (r < nrows_u) {
                rl = rows_len[r];
                memcpy(row, rows_u[r], rl);
            } else {
                rl = 4;
                memcpy(row, "zzzz", 4);
                row[3] = (uint8_t)r;
            }
            size_t n = model_row(row, rl, &q, want, 4096);
            store_row got;
            tu_must(store_view_get(v, row, rl, &o, buf, &got, &err), &err);
            compare_row(&got, want, n);
        }
        /* Scans */
        for (int sc = 0; sc < 150; sc++) {
            mreq q;
            store_scan_opts so;
            store_scan_opts_init(&so);
            store_column cols[4];
            char names[4][2];
            random_request(&q, &so.read, cols, names);
            so.reversed = (int)(rnd() % 2);
            uint8_t start[4], stop[4], prefix[2];
            if (rnd() % 2) {
                size_t r = rnd() % nrows_u;
                memcpy(start, rows_u[r], rows_len[r]);
                so.start = start;
                so.start_len = rows_len[r];
            }
            if (rnd() % 2) {
                size_t r = rnd() % nrows_u;
                memcpy(stop, rows_u[r], rows_len[r]);
                so.stop = stop;
                so.stop_len = rows_len[r];
            }
            if (rnd() % 3 == 0) {
                size_t r = rnd() % nrows_u;
                prefix[0] = rows_u[r][0];
                so.prefix = prefix;
                so.prefix_len = 1;
            }
            if (rnd() % 2)
                so.limit = 1 + rnd() % 10;
            /* expected rows */
            size_t exp_rows[80], ne = 0;
            for (size_t k = 0; k < nu; k++) {
                size_t i = so.reversed ? order[nu - 1 - k] : order[k];
                kslice row = kslice_make(rows_u[i], rows_len[i]);
                kslice st = kslice_make(so.start, so.start_len);
                kslice sp = kslice_make(so.stop, so.stop_len);
                if (!so.reversed) {
                    if (so.start_len && kslice_cmp(row, st) < 0)
                        continue;
                    if (so.stop_len && kslice_cmp(row, sp) >= 0)
                        continue;
                } else {
                    if (so.start_len && kslice_cmp(row, st) > 0)
                        continue;
                    if (so.stop_len && kslice_cmp(row, sp) <= 0)
                        continue;
                }
                if (so.prefix_len && (row.n < 1 || row.p[0] != so.prefix[0]))
                    continue;
                if (model_row(row.p, row.n, &q, want, 4096) == 0)
                    continue;
                if (so.limit && ne >= so.limit)
                    break;
                exp_rows[ne++] = i;
            }
            store_scan *s;
            tu_must(store_scan_open(v, &so, &s, &err), &err);
            size_t got_rows = 0;
            for (;;) {
                store_row row;
                int has;
                tu_must(store_scan_next(s, &row, &has, &err), &err);
                if (!has)
                    break;
                if (got_rows >= ne)
                    fail_msg("scan returned more rows than the model's %zu (reversed %d)", ne,
                             so.reversed);
                size_t i = exp_rows[got_rows++];
                size_t n = model_row(rows_u[i], rows_len[i], &q, want, 4096);
                compare_row(&row, want, n);
            }
            assert_int_equal(got_rows, ne);
            store_scan_close(s);
            if (!so.reversed && so.limit == 0) {
                uint64_t cnt;
                tu_must(store_view_count(v, &so, &cnt, &err), &err);
                assert_int_equal(cnt, ne);
            }
        }
        /* a column of an unknown family is a clean error */
        store_row_opts o;
        store_row_opts_init(&o);
        store_column bad = {"zz", NULL, 0};
        o.columns = &bad;
        o.column_count = 1;
        store_row got;
        status_clear(&err);
        assert_int_equal(store_view_get(v, (const uint8_t *)"a", 1, &o, buf, &got, &err),
                         KILN_INVALID);
        assert_non_null(strstr(err.msg, "'zz'"));
        store_row_buf_free(buf);
        store_view_unref(v);
        block_cache_free(cache);
        free(cells);
    }
}

/* ------------------------------------------------------------------ versions and readers */

static uint64_t
publish_rows(const char *table, int lo, int hi, const char *tag, int replace)
{
    kiln_err err;
    status_clear(&err);
    kiln_table *t;
    tu_must(table_open(data_dir, table, &t, &err), &err);
    tu_must(table_lock(t, 0, &err), &err);
    uint64_t version;
    tu_must(table_next_version(t, &version, &err), &err);
    manifest m, cur;
    int have = table_read_current(t, &cur, NULL) == KILN_OK;
    if (!replace && have) {
        manifest_copy(&m, &cur);
    } else {
        manifest_init(&m);
        manifest_add_table(&m, table_schema(t));
    }
    m.version = version;
    m.parent = have ? cur.version : 0;
    m.kind = replace ? MANIFEST_KIND_REPLACE : MANIFEST_KIND_APPEND;
    if (have)
        manifest_free(&cur);
    manifest_table *mt = &m.tables[0];
    for (size_t r = 0; r < mt->region_count; r++) {
        manifest_file mf;
        memset(&mf, 0, sizeof mf);
        snprintf(mf.family, sizeof mf.family, "a");
        table_file_name(version, (uint32_t)r, mf.name);
        mf.seq = version;
        char p[4096];
        table_file_path(t, mf.name, p, sizeof p);
        hfile_writer_options o;
        hfile_writer_options_init(&o);
        o.block_size = 256;
        hfile_writer *w;
        tu_must(hfile_writer_open(p, &o, &w, &err), &err);
        for (int i = lo; i < hi; i++) {
            char row[16], val[32];
            snprintf(row, sizeof row, "row%04d", i);
            if (manifest_region_for_row(mt, (const uint8_t *)row, strlen(row)) != r)
                continue;
            kiln_cell c;
            memset(&c, 0, sizeof c);
            c.row = (const uint8_t *)row;
            c.row_len = (uint32_t)strlen(row);
            c.family = (const uint8_t *)"a";
            c.family_len = 1;
            c.qualifier = (const uint8_t *)"q";
            c.qualifier_len = 1;
            c.ts = 1000;
            c.type = CELL_TYPE_PUT;
            c.value = (const uint8_t *)val;
            c.value_len = (uint32_t)snprintf(val, sizeof val, "%s-%d", tag, i);
            tu_must(hfile_writer_add(w, &c, &err), &err);
            mf.entries++;
        }
        hfile_writer_stats stats;
        tu_must(hfile_writer_finish(w, &stats, &err), &err);
        mf.size = stats.file_size;
        manifest_region_add_file(&mt->regions[r], &mf);
    }
    int published;
    tu_must(table_publish(t, &m, &published, &err), &err);
    manifest_free(&m);
    tu_must(table_gc(t, NULL, &err), &err);
    table_close(t);
    return version;
}

static void
check_value(store_view *v, int i, const char *tag)
{
    char row[16], want[32];
    snprintf(row, sizeof row, "row%04d", i);
    snprintf(want, sizeof want, "%s-%d", tag, i);
    store_row_buf *buf = store_row_buf_new();
    store_row got;
    kiln_err err;
    status_clear(&err);
    tu_must(store_view_get(v, (const uint8_t *)row, strlen(row), NULL, buf, &got, &err), &err);
    assert_int_equal(got.count, 1);
    assert_int_equal(got.cells[0].value_len, strlen(want));
    assert_memory_equal(got.cells[0].value, want, strlen(want));
    store_row_buf_free(buf);
}

/* Create table name with one family "a" (defaults) and the given 7-byte
 * split rows (NULL-terminated). */
static void
create_table_a(const char *name, const char *const *splits)
{
    kiln_err err;
    status_clear(&err);
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "%s", name);
    schema_family f;
    schema_family_defaults(&f, "a");
    tu_must(schema_add_family(&s, &f, &err), &err);
    for (size_t i = 0; splits[i] != NULL; i++)
        tu_must(schema_add_split(&s, (const uint8_t *)splits[i], strlen(splits[i]), &err), &err);
    tu_must(table_create(data_dir, &s, &err), &err);
    schema_free(&s);
}

static void
reader_survives_publish_and_gc(void **state)
{
    (void)state;
    kiln_err err;
    status_clear(&err);
    create_table_a("live", (const char *const[]){"row0300", "row0600", NULL});

    /* before anything is published: an empty view with the schema's regions */
    store_view *v0;
    tu_must(store_view_open(data_dir, "live", NULL, &v0, &err), &err);
    assert_int_equal(store_view_version(v0), 0);
    assert_int_equal(store_view_region_count(v0), 3);
    uint64_t cnt;
    tu_must(store_view_count(v0, NULL, &cnt, &err), &err);
    assert_int_equal(cnt, 0);
    assert_true(store_view_is_current(v0));

    uint64_t v1 = publish_rows("live", 0, 900, "one", 1);
    assert_false(store_view_is_current(v0));
    store_view_unref(v0);
    block_cache *cache = block_cache_new(64 << 10);
    store_view *view1;
    /* Opening reads no data: per file the trailer and the load-on-open
     * section (two reads), plus schema, CURRENT and manifest; the files hold
     * dozens of 256-byte data blocks each. */
    env_fault_clear();
    tu_must(store_view_open(data_dir, "live", cache, &view1, &err), &err);
    size_t nfiles = 0;
    for (size_t r = 0; r < store_view_region_count(view1); r++) {
        size_t nf;
        store_view_region_bytes(view1, r, &nf);
        nfiles += nf;
    }
    assert_int_equal(nfiles, 3);
    printf("  open: %ld reads for %zu files\n", env_op_calls(ENV_OP_READ), nfiles);
    assert_true(env_op_calls(ENV_OP_READ) <= (long)(2 * nfiles + 3));
    assert_int_equal(store_view_version(view1), v1);
    assert_true(store_view_is_current(view1));
    /* a scan in flight across the publish of N+1 and the deletion of N */
    store_scan_opts so;
    store_scan_opts_init(&so);
    store_scan *s1;
    tu_must(store_scan_open(view1, &so, &s1, &err), &err);
    store_row row;
    int has;
    for (int i = 0; i < 100; i++) {
        tu_must(store_scan_next(s1, &row, &has, &err), &err);
        assert_true(has);
    }
    publish_rows("live", 0, 900, "two", 1);
    publish_rows("live", 0, 900, "three", 1); /* keep 2: version 1's files are deleted */
    char p[4096];
    snprintf(p, sizeof p, "%s/default/live/manifests/%llu", data_dir, (unsigned long long)v1);
    assert_false(env_exists(p));
    assert_false(store_view_is_current(view1));
    int n = 100;
    for (;;) {
        tu_must(store_scan_next(s1, &row, &has, &err), &err);
        if (!has)
            break;
        char want[32];
        int wl = snprintf(want, sizeof want, "one-%d", n);
        assert_int_equal(row.cells[0].value_len, wl);
        assert_memory_equal(row.cells[0].value, want, (size_t)wl);
        n++;
    }
    assert_int_equal(n, 900);
    store_scan_close(s1);
    for (int i = 0; i < 900; i += 37)
        check_value(view1, i, "one");
    store_view *view3;
    tu_must(store_view_open(data_dir, "live", cache, &view3, &err), &err);
    for (int i = 0; i < 900; i += 37)
        check_value(view3, i, "three");
    /* append: rows 850..1000 from a newer load win */
    publish_rows("live", 850, 1000, "four", 0);
    store_view *view4;
    tu_must(store_view_open(data_dir, "live", cache, &view4, &err), &err);
    check_value(view4, 849, "three");
    check_value(view4, 850, "four");
    check_value(view4, 999, "four");
    tu_must(store_view_count(view4, NULL, &cnt, &err), &err);
    assert_int_equal(cnt, 1000);
    store_view_unref(view1);
    store_view_unref(view3);
    store_view_unref(view4);
    block_cache_free(cache);
    status_clear(&err);
    assert_int_equal(store_view_open(data_dir, "nope", NULL, &view1, &err), KILN_NOT_FOUND);
}

/* Dropping a view's cached blocks frees its data blocks but never those of
 * files another view reads: a view with memstores shares its base's open
 * files, so a swap to it must keep every block. */
static void
drop_cached_keeps_shared_files(void **state)
{
    (void)state;
    kiln_err err;
    status_clear(&err);
    create_table_a("drop", (const char *const[]){"row0500", NULL});
    publish_rows("drop", 0, 1000, "one", 1);
    block_cache *cache = block_cache_new(16 << 20);
    store_view *v;
    tu_must(store_view_open(data_dir, "drop", cache, &v, &err), &err);
    for (int i = 0; i < 1000; i++)
        check_value(v, i, "one");
    uint64_t cached = store_view_cached_bytes(v);
    assert_true(cached > 0);

    store_clock *clock = store_clock_new(0);
    store_view *vm = store_view_with_memstores(v, NULL, 0, clock);
    assert_int_equal(store_view_drop_cached(v, vm, UINT64_MAX), 0);
    assert_int_equal(store_view_cached_bytes(v), cached);
    assert_int_equal(store_view_drop_cached(v, v, UINT64_MAX), 0);

    /* a newer version's view opens files of its own: v's blocks may go */
    publish_rows("drop", 0, 1000, "two", 1);
    store_view *v2;
    tu_must(store_view_open(data_dir, "drop", cache, &v2, &err), &err);
    uint64_t dropped = store_view_drop_cached(v, v2, UINT64_MAX);
    printf("  %llu bytes cached, %llu dropped\n", (unsigned long long)cached,
           (unsigned long long)dropped);
    assert_true(dropped > 0);
    assert_int_equal(store_view_cached_bytes(v), cached - dropped);
    /* what stays is the pinned index and bloom: reading goes on unharmed */
    for (int i = 0; i < 1000; i += 7)
        check_value(vm, i, "one");
    for (int i = 0; i < 1000; i += 7)
        check_value(v2, i, "two");
    store_view_unref(vm);
    store_clock_unref(clock);
    store_view_unref(v2);
    store_view_unref(v);
    block_cache_free(cache);
}

/* Opening while a writer publishes and collects versions in a loop: every
 * open succeeds (retrying when its version vanished) and reads a whole
 * version. */
static void
open_races_publish(void **state)
{
    (void)state;
    kiln_err err;
    status_clear(&err);
    create_table_a("race", (const char *const[]){"row0100", NULL});
    publish_rows("race", 0, 200, "t0", 1);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (int i = 1; i <= 40; i++) {
            char tag[16];
            snprintf(tag, sizeof tag, "t%d", i);
            publish_rows("race", 0, 200, tag, 1);
        }
        _exit(0);
    }
    int opens = 0;
    for (;;) {
        int status;
        pid_t done = waitpid(pid, &status, WNOHANG);
        store_view *v;
        status_clear(&err);
        tu_must(store_view_open(data_dir, "race", NULL, &v, &err), &err);
        uint64_t cnt;
        tu_must(store_view_count(v, NULL, &cnt, &err), &err);
        assert_int_equal(cnt, 200);
        /* every row of the view is from the same load */
        store_row_buf *buf = store_row_buf_new();
        store_row a, b;
        tu_must(store_view_get(v, (const uint8_t *)"row0000", 7, NULL, buf, &a, &err), &err);
        char tag[16];
        int tl = (int)(memchr(a.cells[0].value, '-', a.cells[0].value_len) -
                       (const void *)a.cells[0].value);
        memcpy(tag, a.cells[0].value, (size_t)tl);
        tag[tl] = 0;
        tu_must(store_view_get(v, (const uint8_t *)"row0199", 7, NULL, buf, &b, &err), &err);
        char want[32];
        int wl = snprintf(want, sizeof want, "%s-199", tag);
        assert_int_equal(b.cells[0].value_len, wl);
        assert_memory_equal(b.cells[0].value, want, (size_t)wl);
        store_row_buf_free(buf);
        store_view_unref(v);
        opens++;
        if (done == pid) {
            assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
            break;
        }
    }
    printf("  %d opens while 40 versions were published\n", opens);
}

static int
setup(void **state)
{
    (void)state;
    tu_mkdtemp(data_dir, sizeof data_dir, "view");
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
    printf("test_store_view: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(model_vs_store),
        cmocka_unit_test(reader_survives_publish_and_gc),
        cmocka_unit_test(drop_cached_keeps_shared_files),
        cmocka_unit_test(open_races_publish),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
