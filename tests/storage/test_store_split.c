/* test_store_split.c -- splitting a region at its middle row. Tables of
 * random cells (binary rows, two families, every delete marker type, several
 * versions, 1-3 files per region and family with different seqs, plain and
 * salted) are published and split; the new version must read exactly as the
 * old one (every Get, full scans forward and reversed at several
 * max_versions, and the raw merged cells against a brute-force list of the
 * cells written), have one more region with the split key strictly inside
 * it, keep every other region's files and every file's family and seq, and
 * leave the old version's open view reading after the split and after
 * table_gc. Also: repeated splits down to single-row regions, refusals, and
 * a simulated power cut before every changing call of a split. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/base/env.h"
#include "storage/base/env_power.h"
#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/manifest.h"
#include "storage/store/store_salt.h"
#include "storage/store/store_split.h"
#include "storage/store/store_view.h"
#include "storage/store/table.h"
#include "tests/support/test_util.h"

static uint64_t rng_state;

static uint64_t
rnd(void)
{
    return tu_splitmix64(&rng_state);
}

#define TABLE "ns:split"
#define NOW_MS 1700000000000LL

/* ------------------------------------------------------------------ model */

typedef struct mcell {
    uint8_t row[8];          /* stored row (bucket byte first when salted) */
    uint32_t row_len;
    uint8_t urow[8];         /* user row */
    uint32_t urow_len;
    int fam;
    uint8_t qual[2];
    uint32_t qual_len;
    int64_t ts;
    uint8_t type;
    char value[24];
    uint32_t value_len;
    uint64_t seq;
} mcell;

static const char *FAMS[] = {"a", "b"};
static mcell *cells;
static size_t ncells;
static uint8_t urows[64][4];
static uint32_t urows_len[64];
static size_t nurows;
static uint32_t salt;

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

/* The merged order of a view's raw cells: cell order (on user rows when
 * salted), the newest load first on equal keys. */
static int
mcell_cmp(const void *a, const void *b)
{
    const mcell *x = a, *y = b;
    kiln_cell cx = to_kcell(x), cy = to_kcell(y);
    int c = salt ? cell_compare_skip(&cx, &cy, 1) : cell_compare(&cx, &cy);
    if (c != 0)
        return c;
    return x->seq > y->seq ? -1 : x->seq < y->seq;
}

static void
gen_rows(int one_row)
{
    nurows = one_row ? 1 : 20 + rnd() % 40;
    for (size_t i = 0; i < nurows; i++) {
        urows_len[i] = 1 + (uint32_t)(rnd() % 3);
        for (uint32_t j = 0; j < urows_len[i]; j++) {
            uint64_t r = rnd() % 8;
            urows[i][j] = r == 0 ? 0x00 : r == 1 ? 0xFF : (uint8_t)('a' + rnd() % 6);
        }
    }
}

static void
gen_cells(size_t n)
{
    static const uint8_t quals[][2] = {{0}, {'q', '1'}, {0x00, 'x'}};
    static const uint32_t qlens[] = {0, 2, 2};
    cells = calloc(n, sizeof *cells);
    ncells = n;
    for (size_t i = 0; i < n; i++) {
        mcell *m = &cells[i];
        size_t r = rnd() % nurows;
        memcpy(m->urow, urows[r], urows_len[r]);
        m->urow_len = urows_len[r];
        kbuf k = KBUF_INIT;
        if (salt)
            store_salt_key(&k, salt, m->urow, m->urow_len);
        else
            buf_append(&k, m->urow, m->urow_len);
        memcpy(m->row, k.data, k.len);
        m->row_len = (uint32_t)k.len;
        buf_free(&k);
        m->fam = (int)(rnd() % 2);
        size_t q = rnd() % 3;
        memcpy(m->qual, quals[q], qlens[q]);
        m->qual_len = qlens[q];
        m->ts = NOW_MS - 100000 + (int64_t)(rnd() % 8) * 1000;
        uint64_t t = rnd() % 20;
        m->type = t < 13 ? CELL_TYPE_PUT : t < 15 ? CELL_TYPE_DELETE
                : t < 17 ? CELL_TYPE_DELETE_COLUMN : t < 19 ? CELL_TYPE_DELETE_FAMILY
                : CELL_TYPE_DELETE_FAMILY_VERSION;
        if (m->type == CELL_TYPE_DELETE_FAMILY || m->type == CELL_TYPE_DELETE_FAMILY_VERSION)
            m->qual_len = 0;
        if (m->type == CELL_TYPE_PUT)
            m->value_len = (uint32_t)snprintf(m->value, sizeof m->value, "v%zu", i);
    }
}

/* Write the table: per region and family 1-3 files with distinct seqs, each
 * cell in one of them; one copy of a (key, seq) kept, as in the files. */
static void
build_table(const char *data, int nsplits, size_t n, int one_row)
{
    kiln_err err;
    status_clear(&err);
    gen_rows(one_row);
    gen_cells(n);
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "%s", TABLE);
    s.salt_buckets = salt;
    schema_family f;
    tu_must(schema_family_parse("a:versions=3", &f, &err), &err);
    tu_must(schema_add_family(&s, &f, &err), &err);
    tu_must(schema_family_parse("b:versions=1,bloom=rowcol,compression=gz,blocksize=1024", &f,
                                &err), &err);
    tu_must(schema_add_family(&s, &f, &err), &err);
    schema_set_prop(&s, STORE_SPLIT_PROP_MAX_BYTES, "4096");
    if (salt) {
        schema_salt_default_splits(&s);
    } else {
        for (int i = 0; i < nsplits; i++) {
            size_t r = rnd() % nurows;
            schema_add_split(&s, urows[r], urows_len[r], &err);
        }
        if (schema_validate(&s, &err) != KILN_OK) {
            for (size_t i = 0; i < s.split_count; i++)
                buf_free(&s.splits[i]);
            s.split_count = 0;
            status_clear(&err);
        }
    }
    tu_must(table_create(data, &s, &err), &err);
    schema_free(&s);

    kiln_table *t;
    tu_must(table_open(data, TABLE, &t, &err), &err);
    tu_must(table_lock(t, 0, &err), &err);
    uint64_t version;
    tu_must(table_next_version(t, &version, &err), &err);
    manifest m;
    manifest_init(&m);
    manifest_table *mt = manifest_add_table(&m, table_schema(t));
    m.version = version;
    m.kind = MANIFEST_KIND_APPEND;
    m.created_ms = table_now_ms();
    manifest_add_source(&m, 0x1234, version, m.created_ms, "/job/out");
    /* seqs per (region, family): base, base + 2, base + 4 */
    size_t nr = mt->region_count;
    int *nfiles = calloc(nr * 2, sizeof *nfiles);
    uint64_t *base = calloc(nr * 2, sizeof *base);
    for (size_t i = 0; i < nr * 2; i++) {
        nfiles[i] = 1 + (int)(rnd() % 3);
        base[i] = 1 + rnd() % 3;
    }
    for (size_t i = 0; i < ncells; i++) {
        size_t r = manifest_region_for_row(mt, cells[i].row, cells[i].row_len);
        size_t k = r * 2 + (size_t)cells[i].fam;
        cells[i].seq = base[k] + 2 * (rnd() % (uint64_t)nfiles[k]);
    }
    /* one copy per (key, seq) */
    qsort(cells, ncells, sizeof *cells, mcell_cmp);
    size_t w = 0;
    for (size_t i = 0; i < ncells; i++) {
        if (w > 0 && cells[w - 1].seq == cells[i].seq) {
            kiln_cell a = to_kcell(&cells[w - 1]), b = to_kcell(&cells[i]);
            if (cell_compare(&a, &b) == 0)
                continue;
        }
        cells[w++] = cells[i];
    }
    ncells = w;
    uint32_t fileno = 0;
    for (size_t r = 0; r < nr; r++) {
        for (int fam = 0; fam < 2; fam++) {
            size_t k = r * 2 + (size_t)fam;
            for (int fi = 0; fi < nfiles[k]; fi++) {
                uint64_t seq = base[k] + 2 * (uint64_t)fi;
                /* the file's cells in cell order */
                size_t cnt = 0;
                kiln_cell *fc = calloc(ncells + 1, sizeof *fc);
                for (size_t i = 0; i < ncells; i++) {
                    if (cells[i].seq == seq && cells[i].fam == fam &&
                        manifest_region_for_row(mt, cells[i].row, cells[i].row_len) == r)
                        fc[cnt++] = to_kcell(&cells[i]);
                }
                for (size_t i = 1; i < cnt; i++) {   /* insertion sort: salted order differs */
                    kiln_cell x = fc[i];
                    size_t j = i;
                    while (j > 0 && cell_compare(&fc[j - 1], &x) > 0) {
                        fc[j] = fc[j - 1];
                        j--;
                    }
                    fc[j] = x;
                }
                if (cnt == 0 && rnd() % 2 == 0) {
                    free(fc);
                    continue;   /* sometimes an empty file, mostly none */
                }
                manifest_file mf;
                memset(&mf, 0, sizeof mf);
                snprintf(mf.family, sizeof mf.family, "%s", FAMS[fam]);
                table_file_name(version, fileno++, mf.name);
                mf.seq = seq;
                hfile_writer_options o;
                hfile_writer_options_init(&o);
                o.block_size = 128 + (size_t)(rnd() % 300);
                o.bloom = fam == 1 ? BLOOM_ROWCOL : BLOOM_ROW;
                o.codec = fam == 1 ? CODEC_GZ : CODEC_SNAPPY;
                o.sync = 0;
                char p[4096];
                table_file_path(t, mf.name, p, sizeof p);
                hfile_writer *hw;
                tu_must(hfile_writer_open(p, &o, &hw, &err), &err);
                for (size_t i = 0; i < cnt; i++)
                    tu_must(hfile_writer_add(hw, &fc[i], &err), &err);
                hfile_writer_stats st;
                tu_must(hfile_writer_finish(hw, &st, &err), &err);
                mf.size = st.file_size;
                mf.entries = st.entries;
                manifest_region_add_file(&mt->regions[r], &mf);
                free(fc);
            }
        }
    }
    free(nfiles);
    free(base);
    int published;
    tu_must(table_publish(t, &m, &published, &err), &err);
    manifest_free(&m);
    table_close(t);
}

/* ------------------------------------------------------------------ reads as bytes */

static void
put_cell(kbuf *b, const kiln_cell *c)
{
    cell_key_append(c, b);
    buf_append_be32(b, c->value_len);
    buf_append(b, c->value, c->value_len);
}

static void
dump_raw(store_view *v, kbuf *out)
{
    kiln_err err;
    status_clear(&err);
    kiln_iter *it;
    tu_must(store_view_iter_open(v, NULL, &it, &err), &err);
    kiln_status st = kiln_iter_seek_first(it);
    while (st == KILN_OK && kiln_iter_valid(it)) {
        put_cell(out, kiln_iter_key(it));
        st = kiln_iter_next(it);
    }
    tu_must(st, &it->err);
    kiln_iter_close(it);
}

static void
model_raw(kbuf *out)
{
    mcell *s = malloc((ncells + 1) * sizeof *s);
    memcpy(s, cells, ncells * sizeof *s);
    qsort(s, ncells, sizeof *s, mcell_cmp);
    for (size_t i = 0; i < ncells; i++) {
        kiln_cell c = to_kcell(&s[i]);
        put_cell(out, &c);
    }
    free(s);
}

static void
put_row(kbuf *b, const store_row *r)
{
    buf_append_be32(b, (uint32_t)r->row.n);
    buf_append(b, r->row.p, r->row.n);
    buf_append_be32(b, (uint32_t)r->count);
    for (size_t i = 0; i < r->count; i++)
        put_cell(b, &r->cells[i]);
}

static void
dump_scan(store_view *v, uint32_t maxv, int reversed, kbuf *out)
{
    kiln_err err;
    status_clear(&err);
    store_scan_opts o;
    store_scan_opts_init(&o);
    o.read.max_versions = maxv;
    o.read.now_ms = NOW_MS;
    o.reversed = reversed;
    store_scan *s;
    tu_must(store_scan_open(v, &o, &s, &err), &err);
    for (;;) {
        store_row r;
        int has;
        tu_must(store_scan_next(s, &r, &has, &err), &err);
        if (!has)
            break;
        put_row(out, &r);
    }
    store_scan_close(s);
}

static void
dump_gets(store_view *v, uint32_t maxv, kbuf *out)
{
    kiln_err err;
    status_clear(&err);
    store_row_opts o;
    store_row_opts_init(&o);
    o.max_versions = maxv;
    o.now_ms = NOW_MS;
    store_row_buf *rb = store_row_buf_new();
    for (size_t i = 0; i <= nurows; i++) {
        static const uint8_t absent[] = {'z', 'z', 0x01};
        const uint8_t *row = i < nurows ? urows[i] : absent;
        size_t n = i < nurows ? urows_len[i] : sizeof absent;
        store_row r;
        tu_must(store_view_get(v, row, n, &o, rb, &r, &err), &err);
        put_row(out, &r);
    }
    store_row_buf_free(rb);
}

/* Everything a view reads, as one byte string. */
static void
dump_view(store_view *v, kbuf *out)
{
    dump_raw(v, out);
    static const uint32_t versions[] = {1, 2, 5};
    for (size_t i = 0; i < 3; i++) {
        dump_scan(v, versions[i], 0, out);
        dump_scan(v, versions[i], 1, out);
        dump_gets(v, versions[i], out);
    }
}

static void
check_view_equals(store_view *v, const kbuf *want, const char *what)
{
    kbuf got = KBUF_INIT;
    dump_view(v, &got);
    if (got.len != want->len || memcmp(got.data, want->data, got.len) != 0)
        fail_msg("%s: version %llu reads differently (%zu vs %zu bytes)", what,
                 (unsigned long long)store_view_version(v), got.len, want->len);
    buf_free(&got);
}

static void
check_raw_model(store_view *v)
{
    kbuf got = KBUF_INIT, want = KBUF_INIT;
    dump_raw(v, &got);
    model_raw(&want);
    if (got.len != want.len || memcmp(got.data, want.data, got.len) != 0)
        fail_msg("version %llu: raw cells differ from the cells written",
                 (unsigned long long)store_view_version(v));
    buf_free(&got);
    buf_free(&want);
}

static store_view *
open_view(const char *data)
{
    kiln_err err;
    status_clear(&err);
    store_view *v;
    tu_must(store_view_open(data, TABLE, NULL, &v, &err), &err);
    return v;
}

/* ------------------------------------------------------------------ checks */

static int
same_file(const manifest_file *a, const manifest_file *b)
{
    return strcmp(a->name, b->name) == 0 && strcmp(a->family, b->family) == 0 &&
           a->seq == b->seq && a->size == b->size && a->entries == b->entries;
}

static int
same_region(const manifest_region *a, const manifest_region *b)
{
    if (a->file_count != b->file_count || !kslice_eq(buf_slice(&a->start), buf_slice(&b->start)) ||
        !kslice_eq(buf_slice(&a->end), buf_slice(&b->end)))
        return 0;
    for (size_t i = 0; i < a->file_count; i++) {
        if (!same_file(&a->files[i], &b->files[i]))
            return 0;
    }
    return 1;
}

/* The new manifest is the old one with region r split at key. */
static void
check_split_manifest(const manifest *old, const manifest *nw, size_t r, kslice key)
{
    assert_int_equal(nw->parent, old->version);
    assert_int_equal(nw->kind, MANIFEST_KIND_MAINT);
    assert_int_equal(nw->table_count, old->table_count);
    assert_int_equal(nw->source_count, old->source_count);
    for (size_t i = 0; i < old->source_count; i++) {
        assert_int_equal(nw->sources[i].fingerprint, old->sources[i].fingerprint);
        assert_int_equal(nw->sources[i].version, old->sources[i].version);
        assert_string_equal(nw->sources[i].path, old->sources[i].path);
    }
    const manifest_table *a = &old->tables[0], *b = &nw->tables[0];
    assert_int_equal(b->region_count, a->region_count + 1);
    assert_int_equal(b->schema.split_count, a->schema.split_count + 1);
    assert_true(kslice_eq(buf_slice(&b->schema.splits[r]), key));
    assert_string_equal(schema_get_prop(&b->schema, STORE_SPLIT_PROP_MAX_BYTES), "4096");
    const manifest_region *old_r = &a->regions[r];
    assert_true(old_r->start.len == 0 || kslice_cmp(buf_slice(&old_r->start), key) < 0);
    assert_true(old_r->end.len == 0 || kslice_cmp(key, buf_slice(&old_r->end)) < 0);
    assert_true(key.n > 0);
    for (size_t i = 0; i < a->region_count; i++) {
        if (i < r)
            assert_true(same_region(&a->regions[i], &b->regions[i]));
        else if (i > r)
            assert_true(same_region(&a->regions[i], &b->regions[i + 1]));
    }
    const manifest_region *lo = &b->regions[r], *hi = &b->regions[r + 1];
    assert_true(kslice_eq(buf_slice(&lo->start), buf_slice(&old_r->start)));
    assert_true(kslice_eq(buf_slice(&lo->end), key));
    assert_true(kslice_eq(buf_slice(&hi->start), key));
    assert_true(kslice_eq(buf_slice(&hi->end), buf_slice(&old_r->end)));
    /* every half keeps a file's family and seq; every file has a half; no
     * cell lost */
    uint64_t cells_old = 0, cells_new = 0;
    for (size_t i = 0; i < old_r->file_count; i++) {
        const manifest_file *f = &old_r->files[i];
        cells_old += f->entries;
        int found = 0;
        for (int h = 0; h < 2; h++) {
            const manifest_region *half = h ? hi : lo;
            for (size_t j = 0; j < half->file_count; j++)
                found |= half->files[j].seq == f->seq &&
                         strcmp(half->files[j].family, f->family) == 0;
        }
        assert_true(found);
    }
    for (int h = 0; h < 2; h++) {
        const manifest_region *half = h ? hi : lo;
        for (size_t j = 0; j < half->file_count; j++) {
            const manifest_file *f = &half->files[j];
            cells_new += f->entries;
            int found = 0;
            for (size_t i = 0; i < old_r->file_count; i++)
                found |= old_r->files[i].seq == f->seq &&
                         strcmp(old_r->files[i].family, f->family) == 0;
            assert_true(found);
        }
    }
    assert_int_equal(cells_old, cells_new);
    for (size_t k = 1; k < old->table_count; k++) {
        assert_int_equal(nw->tables[k].region_count, old->tables[k].region_count);
        for (size_t i = 0; i < old->tables[k].region_count; i++)
            assert_true(same_region(&old->tables[k].regions[i], &nw->tables[k].regions[i]));
    }
}

/* The schema file names the current version's split keys. */
static void
check_schema_file(const char *data)
{
    kiln_err err;
    status_clear(&err);
    kiln_table *t;
    tu_must(table_open(data, TABLE, &t, &err), &err);
    manifest m;
    tu_must(table_read_current(t, &m, &err), &err);
    const kiln_schema *s = table_schema(t);
    assert_int_equal(s->split_count, m.tables[0].schema.split_count);
    for (size_t i = 0; i < s->split_count; i++)
        assert_true(kslice_eq(buf_slice(&s->splits[i]), buf_slice(&m.tables[0].schema.splits[i])));
    manifest_free(&m);
    table_close(t);
}

/* Split region r (under the lock), check the result against the old
 * manifest and the reads against `want`. Returns the status. */
static kiln_status
split_and_check(const char *data, size_t r, const kbuf *want, kiln_err *err)
{
    kiln_table *t;
    tu_must(table_open(data, TABLE, &t, err), err);
    tu_must(table_lock(t, 0, err), err);
    manifest old;
    tu_must(table_read_current(t, &old, err), err);
    store_split_result res;
    store_split_result_init(&res);
    kiln_status st = store_split_region(t, r, NULL, &res, err);
    if (st == KILN_OK) {
        assert_int_equal(res.parent, old.version);
        assert_true(res.version > old.version);
        assert_false(res.unconfirmed);
        manifest nw;
        tu_must(table_read_current(t, &nw, err), err);
        assert_int_equal(nw.version, res.version);
        check_split_manifest(&old, &nw, r, buf_slice(&res.split_key));
        assert_true(res.files_written + res.files_moved >=
                    old.tables[0].regions[r].file_count);
        manifest_free(&nw);
    } else {
        assert_int_equal(res.version, 0);
        manifest cur;
        tu_must(table_read_current(t, &cur, err), err);
        assert_int_equal(cur.version, old.version);
        manifest_free(&cur);
    }
    manifest_free(&old);
    store_split_result_free(&res);
    table_close(t);
    if (st == KILN_OK) {
        store_view *v = open_view(data);
        check_view_equals(v, want, "after split");
        store_view_unref(v);
        check_schema_file(data);
    }
    return st;
}

/* ------------------------------------------------------------------ tests */

static void
split_one(int salted)
{
    char data[512];
    tu_mkdtemp(data, sizeof data, "split");
    salt = salted ? 4 : 0;
    build_table(data, (int)(rnd() % 3), 300 + rnd() % 300, 0);
    store_view *old = open_view(data);
    check_raw_model(old);
    kbuf want = KBUF_INIT;
    dump_view(old, &want);

    kiln_err err;
    status_clear(&err);
    kiln_table *t;
    tu_must(table_open(data, TABLE, &t, &err), &err);
    size_t *cand, nc;
    tu_must(store_split_candidates(t, 1, &cand, &nc, &err), &err);
    assert_true(nc > 0);
    /* candidates by bytes, most first: a random table may make the biggest
     * region one row (all its versions), which refuses to split */
    for (size_t i = 1; i < nc; i++) {
        for (size_t j = i; j > 0 && store_view_region_bytes(old, cand[j], NULL) >
                                        store_view_region_bytes(old, cand[j - 1], NULL); j--) {
            size_t x = cand[j];
            cand[j] = cand[j - 1];
            cand[j - 1] = x;
        }
    }
    size_t *order = cand, norder = nc;
    size_t r = order[0];
    /* the schema property: regions above 4096 bytes */
    tu_must(store_split_candidates(t, 0, &cand, &nc, &err), &err);
    for (size_t i = 0; i < nc; i++)
        assert_true(store_view_region_bytes(old, cand[i], NULL) > 4096);
    free(cand);
    /* without the lock: refused */
    store_split_result res;
    store_split_result_init(&res);
    assert_int_equal(store_split_region(t, r, NULL, &res, &err), KILN_INVALID);
    store_split_result_free(&res);
    table_close(t);

    kiln_status sst = KILN_INVALID;
    for (size_t i = 0; i < norder && sst == KILN_INVALID; i++) {
        r = order[i];
        status_clear(&err);
        sst = split_and_check(data, r, &want, &err);
        if (sst == KILN_INVALID && strstr(err.msg, "too small") == NULL)
            break;
    }
    free(order);
    tu_must(sst, &err);
    store_view *nv = open_view(data);
    assert_int_equal(store_view_region_count(nv), store_view_region_count(old) + 1);
    check_raw_model(nv);
    store_view_unref(nv);

    /* the old view reads its version after the split and after gc */
    check_view_equals(old, &want, "old view after split");
    tu_must(table_open(data, TABLE, &t, &err), &err);
    tu_must(table_lock(t, 0, &err), &err);
    table_gc_stats gs;
    tu_must(table_gc(t, &gs, &err), &err);
    table_close(t);
    check_view_equals(old, &want, "old view after gc");
    store_view_unref(old);
    buf_free(&want);
    free(cells);
    tu_rmrf(data);
    salt = 0;
}

static void
split_plain(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++)
        split_one(0);
}

static void
split_salted(void **state)
{
    (void)state;
    for (int i = 0; i < 2; i++)
        split_one(1);
}

/* Split until every region is one row (or empty): each split reads as the
 * cells written; the last ones refuse as too small. */
static void
split_repeatedly(void **state)
{
    (void)state;
    char data[512];
    tu_mkdtemp(data, sizeof data, "splitrep");
    salt = 0;
    build_table(data, 0, 150, 0);
    store_view *old = open_view(data);
    kbuf want = KBUF_INIT;
    dump_view(old, &want);
    size_t splits = 0, refusals = 0;
    for (int progress = 1; progress;) {
        progress = 0;
        store_view *v = open_view(data);
        size_t n = store_view_region_count(v);
        store_view_unref(v);
        for (size_t r = n; r-- > 0;) {   /* from the top: lower indexes stay valid */
            kiln_err err;
            status_clear(&err);
            kiln_status st = split_and_check(data, r, &want, &err);
            if (st == KILN_OK) {
                splits++;
                progress = 1;
            } else {
                assert_int_equal(st, KILN_INVALID);
                assert_non_null(strstr(err.msg, "region too small to split"));
                refusals++;
            }
        }
    }
    store_view *v = open_view(data);
    check_raw_model(v);
    /* every region now holds at most one row */
    size_t rows_in_regions = 0;
    for (size_t r = 0; r < store_view_region_count(v); r++) {
        size_t seen = 0;
        for (size_t i = 0; i < nurows; i++) {
            int present = 0, dup = 0;
            for (size_t j = 0; j < i && !dup; j++)
                dup = urows_len[j] == urows_len[i] && memcmp(urows[j], urows[i], urows_len[i]) == 0;
            for (size_t c = 0; c < ncells && !present && !dup; c++)
                present = cells[c].row_len == urows_len[i] &&
                          memcmp(cells[c].row, urows[i], urows_len[i]) == 0;
            kslice row = kslice_make(urows[i], urows_len[i]);
            kslice s = store_view_region_start(v, r), e = store_view_region_end(v, r);
            if (present && (s.n == 0 || kslice_cmp(s, row) <= 0) &&
                (e.n == 0 || kslice_cmp(row, e) < 0))
                seen++;
        }
        assert_true(seen <= 1);
        rows_in_regions += seen;
    }
    printf("  %zu splits to %zu regions, %zu refusals\n", splits, store_view_region_count(v),
           refusals);
    assert_true(splits >= 5);
    store_view_unref(v);
    check_view_equals(old, &want, "old view after the splits");
    store_view_unref(old);
    buf_free(&want);
    free(cells);
    tu_rmrf(data);
    (void)rows_in_regions;
}

/* One row (many versions and markers) refuses; so does an empty region and
 * a region out of range. */
static void
split_refusals(void **state)
{
    (void)state;
    char data[512];
    tu_mkdtemp(data, sizeof data, "splitref");
    salt = 0;
    build_table(data, 0, 60, 1);
    kiln_err err;
    status_clear(&err);
    kiln_table *t;
    tu_must(table_open(data, TABLE, &t, &err), &err);
    tu_must(table_lock(t, 0, &err), &err);
    store_split_result res;
    store_split_result_init(&res);
    assert_int_equal(store_split_region(t, 0, NULL, &res, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "region too small to split"));
    assert_int_equal(res.version, 0);
    status_clear(&err);
    assert_int_equal(store_split_region(t, 1, NULL, &res, &err), KILN_INVALID);
    kbuf key = KBUF_INIT;
    status_clear(&err);
    assert_int_equal(store_split_key(t, 0, NULL, &key, &err), KILN_INVALID);
    buf_free(&key);
    store_split_result_free(&res);
    uint64_t *vs;
    size_t nv;
    tu_must(table_versions(t, &vs, &nv, &err), &err);
    assert_int_equal(nv, 1);
    free(vs);
    table_close(t);
    free(cells);
    tu_rmrf(data);

    /* nothing published: no candidates, no split */
    tu_mkdtemp(data, sizeof data, "splitempty");
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "%s", TABLE);
    schema_family f;
    schema_family_defaults(&f, "a");
    tu_must(schema_add_family(&s, &f, &err), &err);
    tu_must(table_create(data, &s, &err), &err);
    schema_free(&s);
    tu_must(table_open(data, TABLE, &t, &err), &err);
    tu_must(table_lock(t, 0, &err), &err);
    size_t *cand, nc;
    tu_must(store_split_candidates(t, 1, &cand, &nc, &err), &err);
    assert_int_equal(nc, 0);
    free(cand);
    store_split_result_init(&res);
    assert_int_equal(store_split_region(t, 0, NULL, &res, &err), KILN_NOT_FOUND);
    store_split_result_free(&res);
    table_close(t);
    tu_rmrf(data);
}

/* files/ holds exactly what the kept manifests name. */
static void
check_no_orphans(const char *data)
{
    kiln_err err;
    status_clear(&err);
    kiln_table *t;
    tu_must(table_open(data, TABLE, &t, &err), &err);
    uint64_t *vs;
    size_t nv;
    tu_must(table_versions(t, &vs, &nv, &err), &err);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", table_dir(t), TABLE_FILES_DIR);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        int known = 0;
        for (size_t i = 0; i < nv && !known; i++) {
            manifest m;
            tu_must(table_read_manifest(t, vs[i], &m, NULL, &err), &err);
            for (size_t r = 0; r < m.tables[0].region_count; r++)
                for (size_t f = 0; f < m.tables[0].regions[r].file_count; f++)
                    known |= strcmp(m.tables[0].regions[r].files[f].name, e->d_name) == 0;
            manifest_free(&m);
        }
        if (!known)
            fail_msg("orphaned file %s/%s", dir, e->d_name);
    }
    closedir(d);
    free(vs);
    table_close(t);
}

static void
copy_tree(const char *from, const char *to)
{
    char cmd[2048];
    tu_rmrf(to);
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", from, to);
    assert_int_equal(system(cmd), 0);
}

/* A power cut before every changing call of a split (strict model, then the
 * loose one): the table reopens to exactly the old or the new version, reads
 * as the cells written, and a later split and gc leave no orphan and a
 * schema file naming the current regions. */
/* The region of the current version with the most bytes that can split (a
 * random table may make a region one row), or -1. REQUIRES: the lock. */
static long
splittable_region(kiln_table *t)
{
    manifest m;
    kiln_err err;
    status_clear(&err);
    tu_must(table_read_current(t, &m, &err), &err);
    long best = -1;
    uint64_t best_bytes = 0;
    for (size_t r = 0; r < m.tables[0].region_count; r++) {
        uint64_t bytes = 0;
        for (size_t f = 0; f < m.tables[0].regions[r].file_count; f++)
            bytes += m.tables[0].regions[r].files[f].size;
        kbuf key = KBUF_INIT;
        status_clear(&err);
        if (store_split_key(t, r, NULL, &key, &err) == KILN_OK && (best < 0 || bytes > best_bytes)) {
            best = (long)r;
            best_bytes = bytes;
        }
        buf_free(&key);
    }
    manifest_free(&m);
    return best;
}

static void
split_power_cut(void **state)
{
    (void)state;
    char tmpl[512], data[600], stash[600];
    tu_mkdtemp(tmpl, sizeof tmpl, "splitpow");
    snprintf(data, sizeof data, "%s-data", tmpl);
    snprintf(stash, sizeof stash, "%s-stash", tmpl);
    salt = 0;
    build_table(tmpl, 1, 200, 0);
    store_view *v0 = open_view(tmpl);
    kbuf want = KBUF_INIT;
    dump_view(v0, &want);
    uint64_t old_version = store_view_version(v0);
    size_t old_regions = store_view_region_count(v0);
    store_view_unref(v0);
    /* split the region with the most bytes that can split */
    size_t r;
    {
        kiln_table *t0;
        kiln_err e0;
        status_clear(&e0);
        tu_must(table_open(tmpl, TABLE, &t0, &e0), &e0);
        tu_must(table_lock(t0, 0, &e0), &e0);
        long sr = splittable_region(t0);
        table_close(t0);
        assert_true(sr >= 0);
        r = (size_t)sr;
    }
    long calls = 0, points = 0, saw_new = 0;
    for (long kk = 0; kk == 0 || kk / 2 <= calls + 1; kk = kk == 0 ? 2 : kk + 1) {
        long k = kk / 2;
        int loose = kk % 2;
        copy_tree(tmpl, data);
        tu_rmrf(stash);
        assert_int_equal(mkdir(stash, 0755), 0);
        kiln_err err;
        status_clear(&err);
        kiln_table *t;
        tu_must(table_open(data, TABLE, &t, &err), &err);
        tu_must(table_lock(t, 0, &err), &err);
        store_split_result res;
        store_split_result_init(&res);
        env_power_begin(stash);
        env_power_cut_at(k);
        kiln_status st = store_split_region(t, r, NULL, &res, &err);
        store_split_result_free(&res);
        if (k == 0) {
            tu_must(st, &err);
            calls = env_power_calls();
            env_power_end();
            table_close(t);
            continue;
        }
        assert_true(k > calls || env_power_is_cut());
        if (loose)
            env_power_survive_some(0x5917000ULL + (uint64_t)kk);
        tu_must(env_power_restore(&err), &err);
        table_close(t);
        points++;
        store_view *v = open_view(data);
        uint64_t found = store_view_version(v);
        if (found != old_version && found != old_version + 1)
            fail_msg("cut %ld: version %llu", k, (unsigned long long)found);
        saw_new += found != old_version;
        assert_int_equal(store_view_region_count(v), old_regions + (found != old_version));
        check_view_equals(v, &want, "after a power cut");
        store_view_unref(v);
        /* a further split succeeds; gc leaves no orphan; the schema file is current */
        tu_must(table_open(data, TABLE, &t, &err), &err);
        tu_must(table_lock(t, 0, &err), &err);
        store_split_result_init(&res);
        long fr = splittable_region(t);
        assert_true(fr >= 0);
        tu_must(store_split_region(t, (size_t)fr, NULL, &res, &err), &err);
        store_split_result_free(&res);
        tu_must(table_gc(t, NULL, &err), &err);
        table_close(t);
        check_no_orphans(data);
        check_schema_file(data);
        v = open_view(data);
        check_view_equals(v, &want, "split after a power cut");
        store_view_unref(v);
    }
    printf("  split: %ld changing calls, %ld power cuts, new version after %ld\n", calls,
           points, saw_new);
    assert_true(calls > 10);
    assert_true(saw_new > 0 && saw_new < points);
    buf_free(&want);
    free(cells);
    tu_rmrf(data);
    tu_rmrf(stash);
    tu_rmrf(tmpl);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_store_split: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(split_plain),
        cmocka_unit_test(split_salted),
        cmocka_unit_test(split_repeatedly),
        cmocka_unit_test(split_refusals),
        cmocka_unit_test(split_power_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
