/* test_iter.c -- one conformance suite for every implementation of the
 * internal cell iterator (storage/hfile/iter.h): an HFile data block, a
 * whole HFile, a merge of files with overlapping and equal keys, a view's
 * regions in a row range, a salted table's buckets merged by user key, a
 * memstore (alone and merged with files, its sequence above theirs), and
 * the visible cells of a view (store_view_cells_open, row assembly made an
 * iterator again). Row assembly, which consumes the interface, is checked
 * over each of them.
 *
 * The model is the cells as written, sorted with qsort by a comparator
 * written here from cell.h's description of HBase order (not the library's),
 * ties as iter_merge.h promises (newer sequence first, then the earlier
 * child, then file order). The suite: full forward and backward walks, seeks
 * and seeks-for-prev before the first key, after the last, on keys and
 * between them, changes of direction after each, a random walk, empty
 * inputs, and the sticky status after a corrupt block. The visible cells
 * have their own model (model_visible): newest load on equal keys, Delete /
 * DeleteColumn / DeleteFamily / DeleteFamilyVersion masking and max_versions,
 * worked out cell by cell here, and a forward scan must return them too.
 * Random data from a printed seed (KILN_TEST_SEED replays it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/base/env.h"
#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/hfile/iter.h"
#include "storage/hfile/iter_merge.h"
#include "storage/store/manifest.h"
#include "storage/store/memstore.h"
#include "storage/store/schema.h"
#include "storage/store/store_salt.h"
#include "storage/store/store_view.h"
#include "storage/store/store_view_int.h"
#include "storage/store/table.h"
#include "tests/support/test_util.h"

static uint64_t rng_state;
static char data_dir[512];

static uint64_t
rnd(void)
{
    return tu_splitmix64(&rng_state);
}

static uint64_t
rnd_below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

/* ------------------------------------------------------------------ model cells */

#define TS0 1700000000000LL
#define ROW_CAP 8

typedef struct tcell {
    uint8_t row[ROW_CAP];
    uint32_t row_len;
    uint8_t fam[2];
    uint32_t fam_len;
    uint8_t qual[4];
    uint32_t qual_len;
    int64_t ts;
    uint8_t type;
    char value[32];
    uint32_t value_len;
    uint64_t seq;            /* the child's (merge) or the load's (view) */
    int child;
    uint32_t ord;            /* position among the child's cells as written */
} tcell;

static kiln_cell
to_kcell(const tcell *t)
{
    kiln_cell c;
    memset(&c, 0, sizeof c);
    c.row = t->row;
    c.row_len = t->row_len;
    c.family = t->fam;
    c.family_len = t->fam_len;
    c.qualifier = t->qual;
    c.qualifier_len = t->qual_len;
    c.ts = t->ts;
    c.type = t->type;
    c.value = (const uint8_t *)t->value;
    c.value_len = t->value_len;
    return c;
}

static int
ref_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    for (size_t i = 0; i < an && i < bn; i++) {
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    }
    return an < bn ? -1 : an > bn ? 1 : 0;
}

/* HBase key order, from cell.h: rows (past their first `skip` bytes),
 * last-on-row keys after their row's others, family, qualifier, timestamp
 * and type descending. */
static int
ref_key_cmp(const tcell *a, const tcell *b, uint32_t skip)
{
    uint32_t sa = a->row_len < skip ? a->row_len : skip;
    uint32_t sb = b->row_len < skip ? b->row_len : skip;
    int c = ref_bytes(a->row + sa, a->row_len - sa, b->row + sb, b->row_len - sb);
    if (c != 0)
        return c;
    int alast = a->fam_len == 0 && a->qual_len == 0 && a->type == CELL_TYPE_MINIMUM;
    int blast = b->fam_len == 0 && b->qual_len == 0 && b->type == CELL_TYPE_MINIMUM;
    if (alast != blast)
        return alast ? 1 : -1;
    if (alast)
        return 0;
    if ((c = ref_bytes(a->fam, a->fam_len, b->fam, b->fam_len)) != 0)
        return c;
    if ((c = ref_bytes(a->qual, a->qual_len, b->qual, b->qual_len)) != 0)
        return c;
    if (a->ts != b->ts)
        return a->ts > b->ts ? -1 : 1;
    if (a->type != b->type)
        return a->type > b->type ? -1 : 1;
    return 0;
}

static uint32_t g_skip;   /* qsort has no context argument */

/* Merge order: key, then newer sequence, earlier child, file order. */
static int
model_cmp(const void *pa, const void *pb)
{
    const tcell *a = pa, *b = pb;
    int c = ref_key_cmp(a, b, g_skip);
    if (c != 0)
        return c;
    if (a->seq != b->seq)
        return a->seq > b->seq ? -1 : 1;
    if (a->child != b->child)
        return a->child < b->child ? -1 : 1;
    return a->ord < b->ord ? -1 : a->ord > b->ord;
}

static void
model_sort(tcell *m, size_t n, uint32_t skip)
{
    g_skip = skip;
    qsort(m, n, sizeof *m, model_cmp);
}

/* A pool of rows the cells draw from, so rows repeat across cells and
 * files; binary bytes and prefixes of each other included. For a salted
 * table the pool holds stored rows, [bucket(user)] + user (pool_skip 1). */
#define NPOOL 24
static uint8_t pool[NPOOL][5];
static uint32_t pool_len[NPOOL];
static uint32_t pool_skip;

static void
gen_pool(uint32_t salt)
{
    static const uint8_t alphabet[] = {0x00, 0x01, 'a', 'b', 'c', 'd', 0xFE, 0xFF};
    pool_skip = salt ? 1 : 0;
    for (int i = 0; i < NPOOL; i++) {
        uint8_t user[4];
        uint32_t n = 1 + (uint32_t)rnd_below(4);
        for (uint32_t j = 0; j < n; j++)
            user[j] = alphabet[rnd_below(sizeof alphabet)];
        pool_len[i] = n + pool_skip;
        if (salt)
            pool[i][0] = (uint8_t)store_salt_bucket(user, n, salt);
        memcpy(pool[i] + pool_skip, user, n);
    }
}

static const char *const FAMS[] = {"a", "b"};

/* n random cells of child `child` (seq, ord and value set), some with the
 * key of an earlier cell (of this child or from `shared`). puts: Puts only. */
static void
gen_cells(tcell *out, size_t n, int child, uint64_t seq, int puts, const tcell *shared,
          size_t nshared)
{
    static const uint8_t quals[][4] = {{0}, {'q', '1'}, {'q', '2'}, {0x00, 'x'}, {'q'}};
    static const uint32_t qlens[] = {0, 2, 2, 2, 1};
    for (size_t i = 0; i < n; i++) {
        tcell *t = &out[i];
        memset(t, 0, sizeof *t);
        uint64_t dice = rnd_below(10);
        if (dice == 0 && i > 0) {
            *t = out[rnd_below(i)];                 /* an equal key in this child */
        } else if (dice <= 2 && nshared > 0) {
            *t = shared[rnd_below(nshared)];        /* an equal key in another child */
        } else {
            size_t r = rnd_below(NPOOL);
            memcpy(t->row, pool[r], pool_len[r]);
            t->row_len = pool_len[r];
            t->fam[0] = (uint8_t)FAMS[rnd_below(2)][0];
            t->fam_len = 1;
            size_t q = rnd_below(5);
            memcpy(t->qual, quals[q], qlens[q]);
            t->qual_len = qlens[q];
            t->ts = TS0 + (int64_t)rnd_below(6);
            uint64_t k = puts ? 0 : rnd_below(10);
            t->type = k < 6 ? CELL_TYPE_PUT : k == 6 ? CELL_TYPE_DELETE
                    : k == 7 ? CELL_TYPE_DELETE_COLUMN : k == 8 ? CELL_TYPE_DELETE_FAMILY
                    : CELL_TYPE_DELETE_FAMILY_VERSION;
            if (t->type == CELL_TYPE_DELETE_FAMILY || t->type == CELL_TYPE_DELETE_FAMILY_VERSION)
                t->qual_len = 0;
        }
        t->seq = seq;
        t->child = child;
        t->ord = (uint32_t)i;
        t->value_len = (uint32_t)snprintf(t->value, sizeof t->value, "c%d.%zu", child, i);
    }
}

static size_t force_block;   /* write_file's block size when not 0 */

/* Write cells (sorted here by key, then file order) as an HFile at path
 * with random block and index sizes, so files have many blocks and levels. */
static void
write_file(const char *path, tcell *c, size_t n)
{
    model_sort(c, n, 0);
    hfile_writer_options o;
    hfile_writer_options_init(&o);
    static const size_t blocks[] = {64, 200, 1000, 8192};
    o.block_size = force_block ? force_block : blocks[rnd_below(4)];
    o.index_block_max = rnd_below(2) ? 128 : 131072;
    o.bloom = rnd_below(2) ? BLOOM_ROW : BLOOM_ROWCOL;
    o.codec = rnd_below(2) ? CODEC_NONE : CODEC_SNAPPY;
    o.include_tags = (int)rnd_below(2);
    o.sync = 0;
    kiln_err err;
    status_clear(&err);
    hfile_writer *w;
    tu_must(hfile_writer_open(path, &o, &w, &err), &err);
    for (size_t i = 0; i < n; i++) {
        kiln_cell k = to_kcell(&c[i]);
        tu_must(hfile_writer_add(w, &k, &err), &err);
    }
    tu_must(hfile_writer_finish(w, NULL, &err), &err);
}

static hfile_reader *
open_file(const char *path)
{
    kiln_err err;
    status_clear(&err);
    hfile_reader *r;
    tu_must(hfile_reader_open(path, NULL, &r, &err), &err);
    return r;
}

/* ------------------------------------------------------------------ the suite */

typedef struct suite {
    const char *name;
    kiln_iter *it;
    const tcell *m;          /* the model, in iterator order */
    size_t n;
    uint32_t skip;
    long steps;              /* checks made, for the report */
} suite;

static void
expect_cell(suite *s, long i, const char *what)
{
    s->steps++;
    kiln_iter *it = s->it;
    if (kiln_iter_status(it, NULL) != KILN_OK)
        fail_msg("%s: %s: unexpected error: %s", s->name, what, it->err.msg);
    if (i < 0 || (size_t)i >= s->n) {
        if (kiln_iter_valid(it))
            fail_msg("%s: %s: valid past the end (model position %ld of %zu)", s->name, what,
                     i, s->n);
        return;
    }
    if (!kiln_iter_valid(it))
        fail_msg("%s: %s: not valid, model has cell %ld of %zu (%s)", s->name, what, i, s->n,
                 s->m[i].value);
    const kiln_cell *c = kiln_iter_key(it);
    const tcell *t = &s->m[i];
    kslice v = kiln_iter_value(it);
    int same = c->row_len == t->row_len && memcmp(c->row, t->row, t->row_len) == 0 &&
               c->family_len == t->fam_len && memcmp(c->family, t->fam, t->fam_len) == 0 &&
               c->qualifier_len == t->qual_len &&
               (t->qual_len == 0 || memcmp(c->qualifier, t->qual, t->qual_len) == 0) &&
               c->ts == t->ts && c->type == t->type && v.n == t->value_len &&
               memcmp(v.p, t->value, t->value_len) == 0;
    if (!same)
        fail_msg("%s: %s: at model position %ld of %zu got value '%.*s' ts %lld type %u, "
                 "want '%s' ts %lld type %u", s->name, what, i, s->n, (int)v.n,
                 (const char *)v.p, (long long)c->ts, c->type, t->value, (long long)t->ts,
                 t->type);
}

/* First model position whose key is >= k (n if none). */
static long
model_lower(const suite *s, const tcell *k)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ref_key_cmp(&s->m[mid], k, s->skip) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long)lo;
}

/* Last model position whose key is <= k (-1 if none). */
static long
model_upper(const suite *s, const tcell *k)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ref_key_cmp(&s->m[mid], k, s->skip) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long)lo - 1;
}

static void
key_first_on_row(tcell *k, const uint8_t *row, uint32_t n)
{
    memset(k, 0, sizeof *k);
    if (n > 0)
        memcpy(k->row, row, n);
    k->row_len = n;
    k->ts = CELL_LATEST_TIMESTAMP;
    k->type = CELL_TYPE_MAXIMUM;
}

static void
key_last_on_row(tcell *k, const uint8_t *row, uint32_t n)
{
    memset(k, 0, sizeof *k);
    if (n > 0)
        memcpy(k->row, row, n);
    k->row_len = n;
    k->ts = CELL_LATEST_TIMESTAMP;
    k->type = CELL_TYPE_MINIMUM;
}

/* Probe keys: before the first key, after the last, every kind of key
 * between keys, and keys of the model itself. */
static size_t
make_probes(const suite *s, tcell *p, size_t cap)
{
    size_t n = 0;
    static const uint8_t ff[ROW_CAP] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    static const uint8_t zero[1] = {0};
    key_first_on_row(&p[n++], NULL, 0);
    key_last_on_row(&p[n++], NULL, 0);
    key_first_on_row(&p[n++], zero, 1);
    key_last_on_row(&p[n++], ff, ROW_CAP);
    key_first_on_row(&p[n++], ff, ROW_CAP);
    for (int i = 0; i < NPOOL && n + 2 <= cap; i++) {
        key_first_on_row(&p[n++], pool[i], pool_len[i]);
        key_last_on_row(&p[n++], pool[i], pool_len[i]);
    }
    while (n < cap && s->n > 0) {
        tcell k = s->m[rnd_below(s->n)];
        switch (rnd_below(8)) {
        case 0:
            k.ts++;                      /* just before the key */
            break;
        case 1:
            k.ts--;                      /* just after its row / column's versions */
            break;
        case 2:
            k.type = CELL_TYPE_MAXIMUM;  /* before every type of that timestamp */
            break;
        case 3:
            if (k.row_len < ROW_CAP)
                k.row[k.row_len++] = 0;  /* between rows */
            break;
        case 4:
            if (k.qual_len < 4)
                k.qual[k.qual_len++] = 0;   /* between qualifiers */
            break;
        case 5:
            k.qual_len = 0;             /* the family's first column */
            k.type = CELL_TYPE_MAXIMUM;
            k.ts = CELL_LATEST_TIMESTAMP;
            break;
        default:
            break;                      /* exactly on a key */
        }
        if (s->skip > 0 && k.row_len > 0 && rnd_below(2))
            k.row[0] = (uint8_t)rnd();  /* the merge reads past the bucket byte */
        p[n++] = k;
    }
    return n;
}

static void
seek_to(suite *s, const tcell *k, int for_prev, long *pos)
{
    kiln_cell kc = to_kcell(k);
    if (for_prev) {
        kiln_iter_seek_for_prev(s->it, &kc);
        *pos = model_upper(s, k);
    } else {
        kiln_iter_seek(s->it, &kc);
        *pos = model_lower(s, k);
    }
    expect_cell(s, *pos, for_prev ? "seek_for_prev" : "seek");
}

/* One step; past either end the iterator is invalid and stays so. */
static void
step(suite *s, int forward, long *pos)
{
    int was_valid = *pos >= 0 && (size_t)*pos < s->n;
    if (forward)
        kiln_iter_next(s->it);
    else
        kiln_iter_prev(s->it);
    if (was_valid)
        *pos += forward ? 1 : -1;
    expect_cell(s, *pos, forward ? "next" : "prev");
}

/* Run the suite; returns the checks made (printed unless quiet). */
static long
suite_run_q(const char *name, kiln_iter *it, const tcell *m, size_t n, uint32_t skip,
            int quiet)
{
    suite s = {name, it, m, n, skip, 0};
    long pos;

    /* full walks, and the ends stay ends */
    kiln_iter_seek_first(it);
    for (pos = 0; (size_t)pos < n; pos++) {
        expect_cell(&s, pos, "forward walk");
        kiln_iter_next(it);
    }
    expect_cell(&s, pos, "forward walk end");
    kiln_iter_next(it);
    expect_cell(&s, pos, "next at the end");
    kiln_iter_seek_last(it);
    for (pos = (long)n - 1; pos >= 0; pos--) {
        expect_cell(&s, pos, "backward walk");
        kiln_iter_prev(it);
    }
    expect_cell(&s, -1, "backward walk end");
    kiln_iter_prev(it);
    expect_cell(&s, -1, "prev at the start");
    kiln_iter_seek_first(it);
    step(&s, 0, (pos = 0, &pos));
    kiln_iter_seek_last(it);
    pos = (long)n - 1;
    step(&s, 1, &pos);

    /* seeks, each followed by steps that turn around */
    size_t cap = 64 + (n < 400 ? n : 400);
    tcell *probes = calloc(cap, sizeof *probes);
    size_t np = make_probes(&s, probes, cap);
    for (size_t i = 0; i < np; i++) {
        for (int for_prev = 0; for_prev < 2; for_prev++) {
            seek_to(&s, &probes[i], for_prev, &pos);
            int dir = !for_prev;
            for (int k = 0; k < 3; k++)
                step(&s, dir, &pos);
            for (int k = 0; k < 5; k++)
                step(&s, !dir, &pos);
            for (int k = 0; k < 2; k++)
                step(&s, dir, &pos);
        }
    }

    /* a random walk, re-aimed whenever it falls off an end */
    kiln_iter_seek_first(it);
    pos = 0;
    for (int k = 0; k < 2000; k++) {
        if (pos < 0 || (size_t)pos >= n || rnd_below(100) == 0) {
            switch (rnd_below(4)) {
            case 0:
                kiln_iter_seek_first(it);
                pos = 0;
                expect_cell(&s, n ? pos : -1, "seek_first");
                pos = n ? pos : -1;
                break;
            case 1:
                kiln_iter_seek_last(it);
                pos = (long)n - 1;
                expect_cell(&s, pos, "seek_last");
                break;
            default:
                seek_to(&s, &probes[rnd_below(np)], (int)rnd_below(2), &pos);
                break;
            }
            continue;
        }
        step(&s, (int)rnd_below(2), &pos);
    }
    free(probes);
    if (!quiet)
        printf("  %-44s %6zu cells, %7ld checks\n", name, n, s.steps);
    return s.steps;
}

static void
suite_run(const char *name, kiln_iter *it, const tcell *m, size_t n, uint32_t skip)
{
    suite_run_q(name, it, m, n, skip, 0);
}

/* ------------------------------------------------------------------ row assembly */

/* A schema with the test's families, many versions kept, no TTL. */
static void
test_schema(kiln_schema *s, const char *name, uint32_t salt)
{
    schema_init(s);
    snprintf(s->name, sizeof s->name, "default:%s", name);
    kiln_err err;
    status_clear(&err);
    for (int f = 0; f < 2; f++) {
        schema_family fam;
        schema_family_defaults(&fam, FAMS[f]);
        fam.max_versions = 1000;
        fam.bloom = rnd_below(2) ? BLOOM_ROW : BLOOM_NONE;
        tu_must(schema_add_family(s, &fam, &err), &err);
    }
    s->salt_buckets = salt;
}

/* Assemble every row from it and compare with the model (Puts only): a
 * row's visible cells are its distinct keys, each the first in merge order,
 * with the bucket byte dropped in a salted table. */
static void
rows_check(const char *name, kiln_iter *it, const tcell *m, size_t n, const kiln_schema *s)
{
    kiln_err err;
    status_clear(&err);
    store_row_opts o;
    store_row_opts_init(&o);
    o.max_versions = 1000;
    o.now_ms = TS0;
    store_sel sel;
    tu_must(store_row_sel_init(s, &o, &sel, &err), &err);
    store_row_buf *buf = store_row_buf_new();
    uint32_t skip = s->salt_buckets > 0 ? 1 : 0;
    size_t i = 0, rows = 0;
    kiln_iter_seek_first(it);
    while (kiln_iter_valid(it)) {
        store_row r;
        tu_must(store_row_assemble(it, s, &sel, buf, &r, &err), &err);
        assert_true(i < n);
        size_t j = i, got = 0;
        while (j < n && m[j].row_len == m[i].row_len &&
               memcmp(m[j].row, m[i].row, m[i].row_len) == 0) {
            if (j == i || ref_key_cmp(&m[j], &m[j - 1], 0) != 0) {
                if (got >= r.count)
                    fail_msg("%s: row %zu: %zu cells, the model has more", name, rows, r.count);
                const kiln_cell *c = &r.cells[got++];
                if (c->row_len != m[j].row_len - skip ||
                    memcmp(c->row, m[j].row + skip, c->row_len) != 0 || c->ts != m[j].ts ||
                    c->value_len != m[j].value_len ||
                    memcmp(c->value, m[j].value, c->value_len) != 0)
                    fail_msg("%s: row %zu cell %zu: got '%.*s', want '%s'", name, rows, got - 1,
                             (int)c->value_len, (const char *)c->value, m[j].value);
            }
            j++;
        }
        if (got != r.count)
            fail_msg("%s: row %zu: %zu cells, the model %zu", name, rows, r.count, got);
        assert_int_equal(r.row.n, m[i].row_len - skip);
        i = j;
        rows++;
    }
    tu_must(kiln_iter_status(it, &err), &err);
    assert_int_equal(i, n);
    store_row_buf_free(buf);
    store_row_sel_free(&sel);
    printf("  %-44s %6zu rows assembled\n", name, rows);
}

/* ------------------------------------------------------------------ files and blocks */

static void
tmp_path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", data_dir, name);
}

static void
file_and_blocks(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 17, 300, 3000};
    kiln_schema schema;
    test_schema(&schema, "rows", 0);
    for (size_t round = 0; round < 8; round++) {
        gen_pool(0);
        size_t n = round < 6 ? sizes[round] : 1 + rnd_below(2000);
        int puts = round % 2 == 0;
        tcell *m = calloc(n ? n : 1, sizeof *m);
        gen_cells(m, n, 0, 1, puts, NULL, 0);
        char path[600];
        tmp_path(path, sizeof path, "file.hfile");
        write_file(path, m, n);
        model_sort(m, n, 0);
        hfile_reader *r = open_file(path);
        char name[64];

        kiln_iter *it = hfile_reader_iter(r);
        snprintf(name, sizeof name, "hfile %zu (%s)", round, puts ? "puts" : "all types");
        suite_run(name, it, m, n, 0);
        if (puts) {
            snprintf(name, sizeof name, "rows of hfile %zu", round);
            rows_check(name, it, m, n, &schema);
        }
        kiln_iter_close(it);

        /* each data block against its stretch of the model */
        size_t at = 0;
        long checks = 0;
        size_t blocks = 0;
        kiln_err err;
        status_clear(&err);
        for (uint64_t b = 0;; b++) {
            kiln_iter *bi;
            kiln_status st = hfile_reader_block_iter(r, b, &bi, &err);
            if (st == KILN_NOT_FOUND) {
                assert_null(bi);
                break;
            }
            tu_must(st, &err);
            /* the block's extent: up to the next block's first cell */
            size_t end = n;
            kiln_iter *nb;
            kiln_err e2;
            status_clear(&e2);
            if (hfile_reader_block_iter(r, b + 1, &nb, &e2) == KILN_OK) {
                kiln_iter_seek_first(nb);
                assert_true(kiln_iter_valid(nb));
                kslice v = kiln_iter_value(nb);
                for (end = at; end < n; end++) {
                    if (v.n == m[end].value_len && memcmp(v.p, m[end].value, v.n) == 0)
                        break;
                }
                kiln_iter_close(nb);
            }
            assert_true(end > at);
            snprintf(name, sizeof name, "block %llu of hfile %zu", (unsigned long long)b, round);
            checks += suite_run_q(name, bi, m + at, end - at, 0, 1);
            kiln_iter_close(bi);
            at = end;
            blocks++;
        }
        assert_int_equal(at, n);
        snprintf(name, sizeof name, "%zu blocks of hfile %zu", blocks, round);
        printf("  %-44s %6zu cells, %7ld checks\n", name, n, checks);
        hfile_reader_close(r);
        free(m);
    }
    schema_free(&schema);
}

static void
merged_files(void **state)
{
    (void)state;
    kiln_schema schema;
    test_schema(&schema, "rows", 0);
    for (int round = 0; round < 10; round++) {
        gen_pool(0);
        int k = round == 0 ? 0 : 1 + (int)rnd_below(5);
        int puts = round % 2 == 1;
        tcell *all = calloc(6 * 2000 + 1, sizeof *all);
        size_t total = 0;
        hfile_reader *rd[6];
        iter_merge *mg = iter_merge_new(0);
        kiln_iter *borrowed[6] = {NULL};
        for (int c = 0; c < k; c++) {
            size_t n = rnd_below(4) == 0 ? 0 : 1 + rnd_below(1500);
            uint64_t seq = 1 + rnd_below(3);   /* equal sequences tie by child */
            gen_cells(all + total, n, c, seq, puts, all, total);
            char path[600], fname[32];
            snprintf(fname, sizeof fname, "m%d.hfile", c);
            tmp_path(path, sizeof path, fname);
            write_file(path, all + total, n);
            total += n;
            rd[c] = open_file(path);
            /* owned and borrowed children alike */
            if (c % 2 == 0) {
                iter_merge_add(mg, hfile_reader_iter(rd[c]), seq, 1);
            } else {
                borrowed[c] = hfile_reader_iter(rd[c]);
                iter_merge_add(mg, borrowed[c], seq, 0);
            }
        }
        assert_int_equal(iter_merge_children(mg), (size_t)k);
        model_sort(all, total, 0);
        char name[64];
        snprintf(name, sizeof name, "merge %d of %d file(s) (%s)", round, k,
                 puts ? "puts" : "all types");
        suite_run(name, iter_merge_iter(mg), all, total, 0);
        if (puts && k > 0) {
            snprintf(name, sizeof name, "rows of merge %d", round);
            rows_check(name, iter_merge_iter(mg), all, total, &schema);
        }
        /* the merge reports the sequence of the cell it is on */
        kiln_iter_seek_first(iter_merge_iter(mg));
        if (total > 0)
            assert_int_equal(iter_merge_seq(mg), all[0].seq);
        /* cleared and refilled, it reads the new children only */
        iter_merge_clear(mg);
        assert_false(kiln_iter_valid(iter_merge_iter(mg)));
        if (k > 0) {
            iter_merge_add(mg, hfile_reader_iter(rd[0]), 1, 1);
            kiln_iter_seek_first(iter_merge_iter(mg));
            assert_int_equal(iter_merge_single(mg) != NULL, 1);
        }
        iter_merge_free(mg);
        for (int c = 0; c < k; c++) {
            kiln_iter_close(borrowed[c]);
            hfile_reader_close(rd[c]);
        }
        free(all);
    }
    schema_free(&schema);
}

/* ------------------------------------------------------------------ memstores */

/* Give the memstore's cells their sequence numbers: mostly distinct, some
 * from a small range so equal keys meet equal sequences too (those keep the
 * order they were added in, the model's ord). */
static void
memstore_seqs(tcell *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        m[i].seq = rnd_below(3) == 0 ? 1 + rnd_below(4) : 100 + rnd_below(1000000);
}

/* A memstore holding cells m[0..n) added in that order, each with its seq. */
static memstore *
memstore_fill(const tcell *m, size_t n)
{
    memstore *ms = memstore_new(0);
    kiln_err err;
    status_clear(&err);
    for (size_t i = 0; i < n; i++) {
        kiln_cell k = to_kcell(&m[i]);
        k.mvcc = 7;   /* ignored: the memstore's sequence is the add's */
        tu_must(memstore_add(ms, &k, m[i].seq, &err), &err);
    }
    assert_int_equal(memstore_count(ms), n);
    return ms;
}

/* The memstore alone: random cells of every type with equal keys at
 * different (and equal) sequences, against the model (key, then higher
 * sequence, then add order); the cells' mvcc is their sequence. */
static void
memstores(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 17, 300, 3000};
    kiln_schema schema;
    test_schema(&schema, "rows", 0);
    for (size_t round = 0; round < 10; round++) {
        gen_pool(0);
        size_t n = round < 6 ? sizes[round] : 1 + rnd_below(4000);
        int puts = round % 2 == 0;
        tcell *m = calloc(n ? n : 1, sizeof *m);
        gen_cells(m, n, 0, 0, puts, NULL, 0);
        memstore_seqs(m, n);
        memstore *ms = memstore_fill(m, n);
        model_sort(m, n, 0);
        kiln_iter *it = memstore_iter(ms);
        /* the iterator's reference keeps the memstore alive */
        memstore_unref(ms);
        char name[64];
        snprintf(name, sizeof name, "memstore %zu (%s)", round, puts ? "puts" : "all types");
        suite_run(name, it, m, n, 0);
        size_t i = 0;
        for (kiln_iter_seek_first(it); kiln_iter_valid(it); kiln_iter_next(it), i++)
            assert_int_equal(kiln_iter_key(it)->mvcc, m[i].seq);
        assert_int_equal(i, n);
        if (puts) {
            snprintf(name, sizeof name, "rows of memstore %zu", round);
            rows_check(name, it, m, n, &schema);
        }
        kiln_iter_close(it);
        free(m);
    }
    schema_free(&schema);

    /* what the memstore refuses */
    memstore *ms = memstore_new(0);
    tcell t;
    memset(&t, 0, sizeof t);
    t.row_len = 1;
    t.type = CELL_TYPE_MAXIMUM;
    kiln_cell k = to_kcell(&t);
    kiln_err err;
    status_clear(&err);
    assert_int_equal(memstore_add(ms, &k, 1, &err), KILN_INVALID);
    k.type = CELL_TYPE_MINIMUM;
    status_clear(&err);
    assert_int_equal(memstore_add(ms, &k, 1, &err), KILN_INVALID);
    k.type = CELL_TYPE_PUT;
    k.row_len = CELL_ROW_MAX + 1;
    status_clear(&err);
    assert_int_equal(memstore_add(ms, &k, 1, &err), KILN_INVALID);
    assert_int_equal(memstore_count(ms), 0);
    memstore_unref(ms);
}

/* A memstore merged with HFiles (iter_merge.h), the memstore's sequence
 * above the files': the model is the files' cells and the memstore's, the
 * memstore's in their own order (its ord) and first on equal keys. */
static void
memstore_and_files(void **state)
{
    (void)state;
    kiln_schema schema;
    test_schema(&schema, "rows", 0);
    for (int round = 0; round < 8; round++) {
        gen_pool(0);
        int k = round == 0 ? 0 : 1 + (int)rnd_below(4);
        int puts = round % 2 == 1;
        tcell *all = calloc(5 * 1500 + 1, sizeof *all);
        size_t total = 0;
        hfile_reader *rd[4];
        iter_merge *mg = iter_merge_new(0);
        for (int c = 0; c < k; c++) {
            size_t n = rnd_below(4) == 0 ? 0 : 1 + rnd_below(1200);
            uint64_t seq = 1 + rnd_below(3);
            gen_cells(all + total, n, c, seq, puts, all, total);
            char path[600], fname[32];
            snprintf(fname, sizeof fname, "mf%d.hfile", c);
            tmp_path(path, sizeof path, fname);
            write_file(path, all + total, n);
            total += n;
            rd[c] = open_file(path);
            iter_merge_add(mg, hfile_reader_iter(rd[c]), seq, 1);
        }
        size_t n = round == 1 ? 0 : rnd_below(1500);
        tcell *mc = all + total;
        gen_cells(mc, n, k, 0, puts, all, total);
        memstore_seqs(mc, n);
        memstore *ms = memstore_fill(mc, n);
        /* the memstore is one child: its cells keep its own order */
        model_sort(mc, n, 0);
        for (size_t i = 0; i < n; i++) {
            mc[i].ord = (uint32_t)i;
            mc[i].seq = 10;
        }
        iter_merge_add(mg, memstore_iter(ms), 10, 1);
        memstore_unref(ms);
        total += n;
        model_sort(all, total, 0);
        char name[80];
        snprintf(name, sizeof name, "memstore + %d file(s), merged %d (%s)", k, round,
                 puts ? "puts" : "all types");
        suite_run(name, iter_merge_iter(mg), all, total, 0);
        if (puts) {
            snprintf(name, sizeof name, "rows of memstore + files %d", round);
            rows_check(name, iter_merge_iter(mg), all, total, &schema);
        }
        iter_merge_free(mg);
        for (int c = 0; c < k; c++)
            hfile_reader_close(rd[c]);
        free(all);
    }
    schema_free(&schema);
}

/* ------------------------------------------------------------------ views */

/* Publish cells (their seq set to the new version) as one load: a file per
 * region and family. */
static void
publish_load(const char *name, tcell *c, size_t n)
{
    kiln_err err;
    status_clear(&err);
    kiln_table *t;
    tu_must(table_open(data_dir, name, &t, &err), &err);
    tu_must(table_lock(t, 0, &err), &err);
    manifest cur, m;
    int have = table_read_current(t, &cur, &err) == KILN_OK;
    status_clear(&err);
    uint64_t version;
    tu_must(table_next_version(t, &version, &err), &err);
    if (have) {
        manifest_copy(&m, &cur);
        m.parent = cur.version;
        manifest_free(&cur);
    } else {
        manifest_init(&m);
        manifest_add_table(&m, table_schema(t));
    }
    m.version = version;
    m.kind = MANIFEST_KIND_APPEND;
    m.created_ms = table_now_ms();
    for (size_t i = 0; i < n; i++)
        c[i].seq = version;
    manifest_table *mt = &m.tables[0];
    tcell *part = calloc(n ? n : 1, sizeof *part);
    uint32_t fileno = 0;
    for (size_t reg = 0; reg < mt->region_count; reg++) {
        for (int f = 0; f < 2; f++) {
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                if (c[i].fam[0] == (uint8_t)FAMS[f][0] &&
                    manifest_region_for_row(mt, c[i].row, c[i].row_len) == reg)
                    part[k++] = c[i];
            }
            if (k == 0)
                continue;
            manifest_file mf;
            memset(&mf, 0, sizeof mf);
            snprintf(mf.family, sizeof mf.family, "%s", FAMS[f]);
            table_file_name(version, fileno++, mf.name);
            mf.seq = version;
            mf.entries = k;
            char p[4096];
            table_file_path(t, mf.name, p, sizeof p);
            write_file(p, part, k);
            env_stat_info si;
            tu_must(env_stat(p, &si, &err), &err);
            mf.size = si.size;
            manifest_region_add_file(&mt->regions[reg], &mf);
        }
    }
    free(part);
    int published;
    tu_must(table_publish(t, &m, &published, &err), &err);
    manifest_free(&m);
    table_close(t);
}

/* Row bounds a scan would use, on user rows. */
typedef struct tbounds {
    uint8_t start[4], stop[4], prefix[2];
    size_t start_n, stop_n, prefix_n;
    int reversed;
} tbounds;

static void
random_bounds(tbounds *b)
{
    memset(b, 0, sizeof *b);
    b->reversed = (int)rnd_below(2);
    uint64_t kind = rnd_below(6);
    /* user rows: the pool's past any bucket byte */
    if (kind == 1 || kind == 3) {
        size_t r = rnd_below(NPOOL);
        b->start_n = pool_len[r] - pool_skip;
        memcpy(b->start, pool[r] + pool_skip, b->start_n);
    }
    if (kind == 2 || kind == 3) {
        size_t r = rnd_below(NPOOL);
        b->stop_n = pool_len[r] - pool_skip;
        memcpy(b->stop, pool[r] + pool_skip, b->stop_n);
    }
    if (kind == 4 || (kind == 3 && rnd_below(2))) {
        size_t r = rnd_below(NPOOL);
        size_t un = pool_len[r] - pool_skip;
        b->prefix_n = 1 + rnd_below(un < 2 ? un : 2);
        memcpy(b->prefix, pool[r] + pool_skip, b->prefix_n);
    }
}

static int
in_bounds(const tbounds *b, const uint8_t *u, size_t n)
{
    if (b->prefix_n > 0 && (n < b->prefix_n || memcmp(u, b->prefix, b->prefix_n) != 0))
        return 0;
    int cs = b->start_n ? ref_bytes(u, n, b->start, b->start_n) : 0;
    int ce = b->stop_n ? ref_bytes(u, n, b->stop, b->stop_n) : 0;
    if (!b->reversed)
        return (!b->start_n || cs >= 0) && (!b->stop_n || ce < 0);
    return (!b->start_n || cs <= 0) && (!b->stop_n || ce > 0);
}

static void
view_case(const char *label, store_view *v, const tcell *all, size_t total, uint32_t skip,
          const tbounds *b, const kiln_schema *schema, int puts)
{
    store_scan_opts o;
    store_scan_opts_init(&o);
    if (b != NULL) {
        o.start = b->start;
        o.start_len = b->start_n;
        o.stop = b->stop;
        o.stop_len = b->stop_n;
        o.prefix = b->prefix;
        o.prefix_len = b->prefix_n;
        o.reversed = b->reversed;
    }
    tcell *m = calloc(total ? total : 1, sizeof *m);
    size_t n = 0;
    for (size_t i = 0; i < total; i++) {
        if (b == NULL || in_bounds(b, all[i].row + skip, all[i].row_len - skip))
            m[n++] = all[i];
    }
    kiln_err err;
    status_clear(&err);
    kiln_iter *it;
    tu_must(store_view_iter_open(v, &o, &it, &err), &err);
    char name[96];
    if (b == NULL)
        snprintf(name, sizeof name, "%s, all rows", label);
    else
        snprintf(name, sizeof name, "%s, %s [%zu,%zu) prefix %zu", label,
                 b->reversed ? "reversed" : "forward", b->start_n, b->stop_n, b->prefix_n);
    suite_run(name, it, m, n, skip);
    if (puts) {
        snprintf(name, sizeof name, "rows of %s", label);
        rows_check(name, it, m, n, schema);
    }
    kiln_iter_close(it);
    free(m);
}

/* ------------------------------------------------------------------ visible cells */

static int
same_family(const tcell *a, const tcell *b)
{
    return a->row_len == b->row_len && memcmp(a->row, b->row, a->row_len) == 0 &&
           a->fam_len == b->fam_len && memcmp(a->fam, b->fam, a->fam_len) == 0;
}

static int
same_column(const tcell *a, const tcell *b)
{
    return same_family(a, b) && a->qual_len == b->qual_len &&
           memcmp(a->qual, b->qual, a->qual_len) == 0;
}

/* The cells a read returns, worked out here from the cells as loaded (the
 * HBase way, not with the library): of equal keys only the first in merge
 * order counts (the newest load's); a Put is masked by a DeleteFamily of its
 * row and family with ts >= its own, a DeleteFamilyVersion there with its
 * ts, a DeleteColumn of its column with ts >= its own, a Delete of its
 * column with its ts; each column keeps its max_versions newest unmasked
 * Puts. Only rows in b (NULL: all) and the family fam (0: all). Rows lose
 * their first skip bytes; out is in key order. Returns the count. */
static size_t
model_visible(const tcell *all, size_t total, uint32_t skip, uint32_t max_versions, char fam,
              const tbounds *b, tcell *out)
{
    tcell *d = calloc(total ? total : 1, sizeof *d);
    if (total > 0)
        memcpy(d, all, total * sizeof *d);
    model_sort(d, total, 0);
    size_t k = 0;
    for (size_t i = 0; i < total; i++) {
        if (k == 0 || ref_key_cmp(&d[i], &d[k - 1], 0) != 0)
            d[k++] = d[i];
    }
    size_t n = 0;
    const tcell *last = NULL;   /* the column of the last unmasked Put */
    uint32_t versions = 0;
    for (size_t i = 0; i < k; i++) {
        const tcell *p = &d[i];
        if (p->type != CELL_TYPE_PUT)
            continue;
        int masked = 0;
        for (size_t j = 0; j < k && !masked; j++) {
            const tcell *x = &d[j];
            if (!same_family(p, x))
                continue;
            switch (x->type) {
            case CELL_TYPE_DELETE_FAMILY:
                masked = x->ts >= p->ts;
                break;
            case CELL_TYPE_DELETE_FAMILY_VERSION:
                masked = x->ts == p->ts;
                break;
            case CELL_TYPE_DELETE_COLUMN:
                masked = same_column(p, x) && x->ts >= p->ts;
                break;
            case CELL_TYPE_DELETE:
                masked = same_column(p, x) && x->ts == p->ts;
                break;
            default:
                break;
            }
        }
        if (masked)
            continue;
        versions = last != NULL && same_column(last, p) ? versions + 1 : 1;
        last = p;
        if (versions > max_versions)
            continue;
        if (fam != 0 && p->fam[0] != (uint8_t)fam)
            continue;
        if (b != NULL && !in_bounds(b, p->row + skip, p->row_len - skip))
            continue;
        tcell *o = &out[n++];
        *o = *p;
        memmove(o->row, p->row + skip, p->row_len - skip);
        o->row_len = p->row_len - skip;
    }
    free(d);
    model_sort(out, n, 0);
    return n;
}

static long cells_checks;
static size_t cells_suites, cells_seen, cells_deletes;

/* store_view_cells_open over v with bounds b (NULL: all rows), max_versions
 * and family fam (0: all) against model_visible, through the whole suite;
 * then a forward scan with the same options must return the same cells. */
static void
cells_case(const char *label, store_view *v, const tcell *all, size_t total, uint32_t skip,
           const tbounds *b, uint32_t max_versions, char fam)
{
    store_scan_opts o;
    store_scan_opts_init(&o);
    if (b != NULL) {
        o.start = b->start;
        o.start_len = b->start_n;
        o.stop = b->stop;
        o.stop_len = b->stop_n;
        o.prefix = b->prefix;
        o.prefix_len = b->prefix_n;
        o.reversed = b->reversed;
    }
    o.read.max_versions = max_versions;
    o.read.now_ms = TS0;
    char fname[2] = {fam, 0};
    store_column col = {fname, NULL, 0};
    if (fam != 0) {
        o.read.columns = &col;
        o.read.column_count = 1;
    }
    tcell *m = calloc(total ? total : 1, sizeof *m);
    size_t n = model_visible(all, total, skip, max_versions, fam, b, m);
    for (size_t i = 0; b == NULL && max_versions == 1 && i < total; i++)
        cells_deletes += all[i].type != CELL_TYPE_PUT;
    kiln_err err;
    status_clear(&err);
    kiln_iter *it;
    tu_must(store_view_cells_open(v, &o, &it, &err), &err);
    char name[128];
    snprintf(name, sizeof name, "cells of %s, %s, v%u%s%s", label,
             b == NULL ? "all rows" : b->reversed ? "reversed bounds" : "bounds",
             (unsigned)max_versions, fam ? " fam " : "", fname);
    cells_checks += suite_run_q(name, it, m, n, 0, 1);
    cells_suites++;
    cells_seen += n;
    kiln_iter_close(it);

    /* what a scan returns, row after row */
    if (b == NULL || !b->reversed) {
        store_scan *sc;
        tu_must(store_scan_open(v, &o, &sc, &err), &err);
        size_t at = 0;
        for (;;) {
            store_row r;
            int has;
            tu_must(store_scan_next(sc, &r, &has, &err), &err);
            if (!has)
                break;
            for (size_t i = 0; i < r.count; i++, at++) {
                assert_true(at < n);
                const kiln_cell *c = &r.cells[i];
                if (c->row_len != m[at].row_len || memcmp(c->row, m[at].row, c->row_len) != 0 ||
                    c->ts != m[at].ts || c->value_len != m[at].value_len ||
                    memcmp(c->value, m[at].value, c->value_len) != 0)
                    fail_msg("%s: scan cell %zu: got '%.*s', want '%s'", name, at,
                             (int)c->value_len, (const char *)c->value, m[at].value);
            }
        }
        assert_int_equal(at, n);
        store_scan_close(sc);
    }
    free(m);
}

/* The visible cells of a view for each bound kind: newest only, three
 * versions, and (whole table) two versions of family b alone. */
static void
cells_cases(const char *label, store_view *v, const tcell *all, size_t total, uint32_t skip,
            const tbounds *b)
{
    cells_case(label, v, all, total, skip, b, 1, 0);
    cells_case(label, v, all, total, skip, b, 3, 0);
    if (b == NULL)
        cells_case(label, v, all, total, skip, b, 2, 'b');
}

/* A table of `loads` loads over random regions (salted with `salt` buckets
 * when salt > 0), read through store_view_iter_open with and without bounds. */
static void
view_rounds(const char *prefix, uint32_t salt_max, int rounds)
{
    for (int round = 0; round < rounds; round++) {
        static const uint32_t bucket_counts[] = {1, 2, 3, 7, 16};
        uint32_t salt = salt_max ? bucket_counts[rnd_below(5)] : 0;
        gen_pool(salt);
        uint32_t skip = salt ? 1 : 0;
        int puts = round % 2 == 0;
        char name[32];
        snprintf(name, sizeof name, "%s%d", prefix, round);
        kiln_schema s;
        test_schema(&s, name, salt);
        kiln_err err;
        status_clear(&err);
        if (salt > 0 && round % 3 != 2) {
            schema_salt_default_splits(&s);
        } else {
            /* splits that cut between and inside the pool's rows (and buckets) */
            int nsplit = (int)rnd_below(4);
            for (int k = 0; k < nsplit; k++) {
                size_t r = rnd_below(NPOOL);
                uint8_t key[5];
                size_t kn = pool_len[r];
                memcpy(key, pool[r], kn);
                int dup = 0;
                for (size_t q = 0; q < s.split_count; q++)
                    dup |= kslice_eq(buf_slice(&s.splits[q]), kslice_make(key, kn));
                if (!dup)
                    schema_add_split(&s, key, kn, NULL);
            }
        }
        tu_must(schema_validate(&s, &err), &err);
        tu_must(table_create(data_dir, &s, &err), &err);

        store_view *v;
        /* nothing published yet: an empty view reads as an empty iterator */
        tu_must(store_view_open(data_dir, name, NULL, &v, &err), &err);
        char label[96];
        snprintf(label, sizeof label, "%s %s, empty", salt ? "salted" : "view", name);
        view_case(label, v, NULL, 0, skip, NULL, &s, 0);
        cells_cases(label, v, NULL, 0, skip, NULL);
        store_view_unref(v);

        int loads = 1 + (int)rnd_below(3);
        tcell *all = calloc((size_t)loads * 800 + 1, sizeof *all);
        size_t total = 0;
        for (int l = 0; l < loads; l++) {
            size_t n = rnd_below(800);
            tcell *c = all + total;
            gen_cells(c, n, l, 0, puts, all, total);
            publish_load(name, c, n);
            total += n;
        }
        tu_must(store_view_open(data_dir, name, NULL, &v, &err), &err);
        model_sort(all, total, skip);
        snprintf(label, sizeof label, "%s %s (%u regions, %d loads)", salt ? "salted" : "view",
                 name, (unsigned)store_view_region_count(v), loads);
        view_case(label, v, all, total, skip, NULL, &s, puts);
        cells_cases(label, v, all, total, skip, NULL);
        for (int k = 0; k < 3; k++) {
            tbounds b;
            random_bounds(&b);
            view_case(label, v, all, total, skip, &b, &s, puts);
            cells_cases(label, v, all, total, skip, &b);
        }
        store_view_unref(v);
        schema_free(&s);
        free(all);
    }
}

static void
cells_report(const char *what)
{
    printf("  visible cells of %-26s %4zu suites, %6zu cells (%zu markers loaded), %7ld checks\n",
           what, cells_suites, cells_seen, cells_deletes, cells_checks);
    cells_suites = cells_seen = cells_deletes = 0;
    cells_checks = 0;
}

static void
views(void **state)
{
    (void)state;
    view_rounds("v", 0, 8);
    cells_report("views");
}

static void
salted_buckets(void **state)
{
    (void)state;
    view_rounds("s", 1, 10);
    cells_report("salted tables");
}

/* ------------------------------------------------------------------ errors */

static void
expect_failed(kiln_iter *it, const char *what)
{
    kiln_err e;
    status_clear(&e);
    if (kiln_iter_status(it, &e) == KILN_OK)
        fail_msg("%s: no error", what);
    assert_false(kiln_iter_valid(it));
    assert_non_null(strstr(e.msg, "bad.hfile"));
    /* sticky: moves do nothing and report it again */
    assert_int_equal(kiln_iter_next(it), e.code);
    assert_int_equal(kiln_iter_prev(it), e.code);
    assert_false(kiln_iter_valid(it));
    kiln_err again;
    status_clear(&again);
    assert_int_equal(kiln_iter_status(it, &again), e.code);
    assert_string_equal(again.msg, e.msg);
}

/* Walk back from the last cell until the corrupt first block stops it; every
 * cell before that must be the model's. */
static void
walk_back_to_error(kiln_iter *it, const tcell *m, size_t n, uint32_t want_child)
{
    kiln_cell last = to_kcell(&m[n - 1]);
    tu_must(kiln_iter_seek_for_prev(it, &last), &it->err);
    long pos = (long)n - 1;
    size_t seen = 0;
    while (kiln_iter_valid(it)) {
        while (pos >= 0 && (uint32_t)m[pos].child != want_child)
            pos--;
        assert_true(pos >= 0);
        kslice v = kiln_iter_value(it);
        assert_int_equal(v.n, m[pos].value_len);
        assert_memory_equal(v.p, m[pos].value, v.n);
        pos--;
        seen++;
        kiln_iter_prev(it);
    }
    assert_true(seen > 0);
    expect_failed(it, "backward walk into the corrupt block");
}

static void
errors_sticky(void **state)
{
    (void)state;
    gen_pool(0);
    size_t n = 600;
    tcell *m = calloc(2 * n, sizeof *m);
    gen_cells(m, n, 0, 1, 0, NULL, 0);
    gen_cells(m + n, n, 1, 2, 0, NULL, 0);
    char bad[600], good[600];
    tmp_path(bad, sizeof bad, "bad.hfile");
    tmp_path(good, sizeof good, "good.hfile");
    force_block = 64;
    write_file(bad, m, n);
    write_file(good, m + n, n);
    force_block = 0;
    /* flip a byte inside the first data block */
    FILE *f = fopen(bad, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, 40, SEEK_SET), 0);
    int ch = fgetc(f);
    assert_int_equal(fseek(f, 40, SEEK_SET), 0);
    fputc(ch ^ 0x55, f);
    fclose(f);

    hfile_reader *r = open_file(bad);
    model_sort(m, n, 0);
    kiln_iter *it = hfile_reader_iter(r);
    kiln_iter_seek_first(it);
    expect_failed(it, "hfile seek_first");
    /* a seek clears it: the file's healthy blocks still read */
    kiln_cell last = to_kcell(&m[n - 1]);
    tu_must(kiln_iter_seek(it, &last), &it->err);
    assert_true(kiln_iter_valid(it));
    walk_back_to_error(it, m, n, 0);
    kiln_iter_close(it);

    kiln_err err;
    status_clear(&err);
    kiln_iter *bi;
    assert_int_not_equal(hfile_reader_block_iter(r, 0, &bi, &err), KILN_OK);
    assert_null(bi);
    assert_non_null(strstr(err.msg, "bad.hfile"));
    status_clear(&err);
    tu_must(hfile_reader_block_iter(r, 1, &bi, &err), &err);
    kiln_iter_close(bi);

    /* a merge fails with its child's error, and recovers on a seek too */
    hfile_reader *g = open_file(good);
    iter_merge *mg = iter_merge_new(0);
    iter_merge_add(mg, hfile_reader_iter(r), 1, 1);
    iter_merge_add(mg, hfile_reader_iter(g), 2, 1);
    kiln_iter *mi = iter_merge_iter(mg);
    kiln_iter_seek_first(mi);
    expect_failed(mi, "merge seek_first");
    kiln_iter_seek_last(mi);
    tu_must(kiln_iter_status(mi, &err), &err);
    assert_true(kiln_iter_valid(mi));
    /* forward from a healthy key, then backward into the bad block */
    model_sort(m, 2 * n, 0);
    tcell *only_bad = calloc(n, sizeof *only_bad);
    size_t k = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        if (m[i].child == 0)
            only_bad[k++] = m[i];
    }
    kiln_cell mid = to_kcell(&only_bad[n - 1]);
    tu_must(kiln_iter_seek(mi, &mid), &mi->err);
    while (kiln_iter_valid(mi))
        kiln_iter_prev(mi);
    expect_failed(mi, "merge backward walk into the corrupt block");
    free(only_bad);
    iter_merge_free(mg);
    hfile_reader_close(g);
    hfile_reader_close(r);
    free(m);
}

static int
setup(void **state)
{
    (void)state;
    tu_mkdtemp(data_dir, sizeof data_dir, "iter");
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
    printf("test_iter: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(file_and_blocks),
        cmocka_unit_test(merged_files),
        cmocka_unit_test(memstores),
        cmocka_unit_test(memstore_and_files),
        cmocka_unit_test(views),
        cmocka_unit_test(salted_buckets),
        cmocka_unit_test(errors_sticky),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
