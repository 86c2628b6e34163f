/* test_store_compact.c -- flush and compaction (store_compact.h) against a
 * plain visibility model and against row assembly.
 *
 * Random cells (few rows, every delete marker type, colliding timestamps on
 * both sides of a TTL, identical keys across and within inputs) go into 1..6
 * inputs, memstores or small HFiles; every kind of compaction writes them to
 * one HFile, and for every row and many reads (versions, columns, time
 * ranges, a later clock) the visible cells of the output must be those of
 * the inputs -- alone, and for FLUSH and MINOR also merged with an older and
 * a newer file left out of the compaction. Each read is answered twice, by
 * the model below (HBase's rules stated plainly, no code shared with the
 * engine) and by store_row_assemble over the real iterators. Also: exact
 * outputs for TTL, VERSIONS, DeleteFamilyVersion, DeleteColumn and Delete;
 * the size policy; the throttle; stop, input errors and bad options leave
 * no file. Seed printed (replay with KILN_TEST_SEED).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "storage/base/buf.h"
#include "storage/base/env.h"
#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_reader.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/hfile/iter_merge.h"
#include "storage/store/memstore.h"
#include "storage/store/schema.h"
#include "storage/store/store_compact.h"
#include "storage/store/store_view_int.h"
#include "tests/support/test_util.h"

static uint64_t rng_seed;
static uint64_t rng_state;
static char tmp_dir[512];

static uint64_t
rnd(void)
{
    return tu_splitmix64(&rng_state);
}

#define NOW_MS 1700000000000LL
/* timestamps TS(0..7); families b and c (TTL 1000 s) expire TS(0..3) at NOW_MS */
#define TS(k) (NOW_MS - 1004000 + (int64_t)(k) * 1000)
#define NTS 8

/* a: VERSIONS 3, no TTL; b: VERSIONS 2, TTL 1000 s; c: VERSIONS 1, TTL, gz, rowcol */
static const char *FAMS[] = {"a", "b", "c"};
#define NFAMS 3
static const char *FAM_SPECS[] = {"a:versions=3,compression=none",
                                  "b:versions=2,ttl=1000,blocksize=512",
                                  "c:versions=1,ttl=1000,compression=gz,bloom=rowcol,blocksize=512"};
static const uint32_t FAM_VERSIONS[NFAMS] = {3, 2, 1};
static const int64_t FAM_TTL_MS[NFAMS] = {0, 1000000, 1000000};

static void
make_schema(kiln_schema *s)
{
    kiln_err err;
    status_clear(&err);
    schema_init(s);
    snprintf(s->name, sizeof s->name, "default:compact");
    for (int i = 0; i < NFAMS; i++) {
        schema_family f;
        tu_must(schema_family_parse(FAM_SPECS[i], &f, &err), &err);
        tu_must(schema_add_family(s, &f, &err), &err);
    }
    tu_must(schema_validate(s, &err), &err);
}

/* ------------------------------------------------------------------ model */

typedef struct mcell {
    uint8_t row[2];
    uint32_t row_len;
    int fam;
    uint8_t qual[2];
    uint32_t qual_len;
    int64_t ts;
    uint8_t type;
    char value[32];
    uint32_t value_len;
    uint64_t prec;           /* larger wins on identical keys: seq, then add order */
} mcell;

typedef struct mset {
    mcell *c;
    size_t n, cap;
} mset;

static void
mset_add(mset *s, const mcell *c)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->c = realloc(s->c, s->cap * sizeof *s->c);
    }
    s->c[s->n++] = *c;
}

static void
mset_addall(mset *s, const mset *from)
{
    for (size_t i = 0; i < from->n; i++)
        mset_add(s, &from->c[i]);
}

static int mcell_cmp(const void *a, const void *b);

static void
mset_sort(mset *s)
{
    if (s->n > 1)
        qsort(s->c, s->n, sizeof *s->c, mcell_cmp);
}

/* memcpy that accepts a NULL source with length 0 */
static void
copy(void *dst, const void *src, size_t n)
{
    if (n > 0)
        memcpy(dst, src, n);
}

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

static mcell
from_kcell(const kiln_cell *c, uint64_t prec)
{
    mcell m;
    memset(&m, 0, sizeof m);
    assert_true(c->row_len <= 2 && c->qualifier_len <= 2 && c->value_len < sizeof m.value);
    copy(m.row, c->row, c->row_len);
    m.row_len = c->row_len;
    m.fam = -1;
    for (int f = 0; f < NFAMS; f++) {
        if (c->family_len == 1 && c->family[0] == FAMS[f][0])
            m.fam = f;
    }
    assert_true(m.fam >= 0);
    copy(m.qual, c->qualifier, c->qualifier_len);
    m.qual_len = c->qualifier_len;
    m.ts = c->ts;
    m.type = c->type;
    copy(m.value, c->value, c->value_len);
    m.value_len = c->value_len;
    m.prec = prec;
    return m;
}

/* cell order, then the winner of identical keys first */
static int
mcell_cmp(const void *a, const void *b)
{
    const mcell *x = a, *y = b;
    kiln_cell p = to_kcell(x), q = to_kcell(y);
    int c = cell_compare(&p, &q);
    if (c != 0)
        return c;
    return x->prec > y->prec ? -1 : x->prec < y->prec ? 1 : 0;
}

static const uint8_t ROWS[][2] = {{'a'}, {'a', 0x00}, {'b'}, {0x00}, {0xFF, 'a'}, {0xFF}};
static const uint32_t ROW_LENS[] = {1, 2, 1, 1, 2, 1};
#define NROWS 6
static const uint8_t QUALS[][2] = {{0}, {'q', '1'}, {'q', '2'}, {0x00, 'x'}};
static const uint32_t QUAL_LENS[] = {0, 2, 2, 2};
#define NQUALS 4

static uint64_t add_counter;

static mcell
random_cell(int fam, uint64_t seq)
{
    mcell m;
    memset(&m, 0, sizeof m);
    size_t r = rnd() % NROWS;
    memcpy(m.row, ROWS[r], ROW_LENS[r]);
    m.row_len = ROW_LENS[r];
    m.fam = fam;
    size_t q = rnd() % NQUALS;
    memcpy(m.qual, QUALS[q], QUAL_LENS[q]);
    m.qual_len = QUAL_LENS[q];
    m.ts = TS(rnd() % NTS);
    uint64_t t = rnd() % 50;
    m.type = t < 30 ? CELL_TYPE_PUT : t < 36 ? CELL_TYPE_DELETE
           : t < 42 ? CELL_TYPE_DELETE_COLUMN : t < 45 ? CELL_TYPE_DELETE_FAMILY
           : CELL_TYPE_DELETE_FAMILY_VERSION;
    if (m.type == CELL_TYPE_DELETE_FAMILY || m.type == CELL_TYPE_DELETE_FAMILY_VERSION)
        m.qual_len = 0;
    add_counter++;
    m.prec = seq * 1000000 + add_counter;
    if (m.type == CELL_TYPE_PUT || rnd() % 8 == 0)   /* markers with a value now and then */
        m.value_len = (uint32_t)snprintf(m.value, sizeof m.value, "s%llu.%llu",
                                         (unsigned long long)seq,
                                         (unsigned long long)add_counter);
    return m;
}

/* A read as the model sees it. */
typedef struct mreq {
    int all_quals;
    int qual_on[NQUALS];
    uint32_t versions;
    int64_t ts_min, ts_max;
    int64_t now_ms;
} mreq;

static int
qual_index(const mcell *m)
{
    for (int i = 0; i < NQUALS; i++) {
        if (m->qual_len == QUAL_LENS[i] && memcmp(m->qual, QUALS[i], m->qual_len) == 0)
            return i;
    }
    fail();
    return 0;
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

/* Is put p masked by a marker of the same row and family in s? */
static int
model_masked(const mcell *p, const mset *s)
{
    for (size_t i = 0; i < s->n; i++) {
        const mcell *d = &s->c[i];
        if (d->fam != p->fam || d->row_len != p->row_len ||
            memcmp(d->row, p->row, p->row_len) != 0)
            continue;
        if ((d->type == CELL_TYPE_DELETE_FAMILY && d->ts >= p->ts) ||
            (d->type == CELL_TYPE_DELETE_FAMILY_VERSION && d->ts == p->ts) ||
            (d->type == CELL_TYPE_DELETE_COLUMN && same_col(d, p) && d->ts >= p->ts) ||
            (d->type == CELL_TYPE_DELETE && same_col(d, p) && d->ts == p->ts))
            return 1;
    }
    return 0;
}

/* The visible cells of row in s (sorted with mcell_cmp) for q: out gets at
 * most cap pointers into s, in cell order. */
static size_t
model_read(const mset *s, const uint8_t *row, size_t rlen, const mreq *q, const mcell **out,
           size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const mcell *p = &s->c[i];
        if (!same_row(p, row, rlen) || p->type != CELL_TYPE_PUT)
            continue;
        if (!q->all_quals && !q->qual_on[qual_index(p)])
            continue;
        int shadowed = 0;
        for (size_t j = 0; j < s->n && !shadowed; j++) {
            const mcell *o = &s->c[j];
            shadowed = o->type == CELL_TYPE_PUT && o->prec > p->prec && o->ts == p->ts &&
                       same_col(o, p) && same_row(o, row, rlen);
        }
        if (shadowed || model_masked(p, s))
            continue;
        if (FAM_TTL_MS[p->fam] && p->ts < q->now_ms - FAM_TTL_MS[p->fam])
            continue;
        if (p->ts < q->ts_min || p->ts >= q->ts_max)
            continue;
        uint32_t maxv = q->versions < FAM_VERSIONS[p->fam] ? q->versions : FAM_VERSIONS[p->fam];
        uint32_t before = 0;
        for (size_t k = 0; k < n; k++)
            before += same_col(out[k], p);
        if (before >= maxv)
            continue;
        assert_true(n < cap);
        out[n++] = p;
    }
    return n;
}

/* ------------------------------------------------------------------ inputs */

typedef struct tinput {
    memstore *ms;
    hfile_reader *rd;
    kiln_iter *it;
    uint64_t seq;
    mset cells;              /* what it holds, as the model sees it */
    char path[600];
} tinput;

static void
tinput_close(tinput *t)
{
    kiln_iter_close(t->it);
    memstore_unref(t->ms);
    hfile_reader_close(t->rd);
    if (t->path[0] != '\0')
        unlink(t->path);
    free(t->cells.c);
    memset(t, 0, sizeof *t);
}

static int file_no;

/* An input of n random cells of family fam with sequence seq, in a
 * memstore (identical keys kept, the later add winning) or an HFile (one
 * copy of a key, the later add's). */
static void
tinput_make(tinput *t, int fam, uint64_t seq, size_t n, int as_file)
{
    kiln_err err;
    status_clear(&err);
    memset(t, 0, sizeof *t);
    t->seq = seq;
    for (size_t i = 0; i < n; i++) {
        mcell m = random_cell(fam, seq);
        mset_add(&t->cells, &m);
    }
    if (!as_file) {
        t->ms = memstore_new(0);
        for (size_t i = 0; i < t->cells.n; i++) {
            kiln_cell c = to_kcell(&t->cells.c[i]);
            tu_must(memstore_add(t->ms, &c, t->cells.c[i].prec, &err), &err);
        }
        t->it = memstore_iter(t->ms);
        return;
    }
    mset_sort(&t->cells);
    size_t w = 0;
    for (size_t i = 0; i < t->cells.n; i++) {
        kiln_cell a = to_kcell(&t->cells.c[i]);
        if (w > 0) {
            kiln_cell b = to_kcell(&t->cells.c[w - 1]);
            if (cell_compare(&a, &b) == 0)
                continue;
        }
        t->cells.c[w++] = t->cells.c[i];
    }
    t->cells.n = w;
    snprintf(t->path, sizeof t->path, "%s/in-%d.hfile", tmp_dir, file_no++);
    hfile_writer_options o;
    hfile_writer_options_init(&o);
    o.block_size = 64 + rnd() % 400;
    o.bloom = BLOOM_NONE;
    o.sync = 0;
    hfile_writer *wr;
    tu_must(hfile_writer_open(t->path, &o, &wr, &err), &err);
    for (size_t i = 0; i < t->cells.n; i++) {
        kiln_cell c = to_kcell(&t->cells.c[i]);
        tu_must(hfile_writer_add(wr, &c, &err), &err);
    }
    tu_must(hfile_writer_finish(wr, NULL, &err), &err);
    tu_must(hfile_reader_open(t->path, NULL, &t->rd, &err), &err);
    t->it = hfile_reader_iter(t->rd);
}

/* Read a compaction's output file into s (cells with precedence prec) and
 * check its form: HBase order, no identical keys, mvcc 0, one family, no
 * markers after a MAJOR, a clean hfile_reader_check. */
static void
read_output(const char *path, store_compact_kind kind, int fam, uint64_t prec, mset *s,
            hfile_reader **rd_out)
{
    kiln_err err;
    status_clear(&err);
    hfile_reader *rd;
    tu_must(hfile_reader_open(path, NULL, &rd, &err), &err);
    uint64_t checked;
    tu_must(hfile_reader_check(rd, &checked, &err), &err);
    kiln_iter *it = hfile_reader_iter(rd);
    kbuf prev;
    buf_init(&prev);
    int have_prev = 0;
    for (kiln_iter_seek_first(it); kiln_iter_valid(it); kiln_iter_next(it)) {
        const kiln_cell *c = kiln_iter_key(it);
        assert_int_equal(c->mvcc, 0);
        if (have_prev)
            assert_true(cell_compare_key(c, prev.data, prev.len) > 0);
        buf_reset(&prev);
        cell_key_append(c, &prev);
        have_prev = 1;
        mcell m = from_kcell(c, prec);
        assert_int_equal(m.fam, fam);
        if (kind == STORE_COMPACT_MAJOR)
            assert_int_equal(c->type, CELL_TYPE_PUT);
        mset_add(s, &m);
    }
    tu_must(kiln_iter_status(it, &err), &err);
    assert_int_equal(checked, s->n);
    kiln_iter_close(it);
    buf_free(&prev);
    *rd_out = rd;
}

/* ------------------------------------------------------------------ reads compared */

typedef struct got_cell {
    uint8_t qual[2];
    uint32_t qual_len;
    int64_t ts;
    char value[32];
    uint32_t value_len;
} got_cell;

/* Assemble row from it (any positioned kiln_iter) with the read q. */
static size_t
assemble_read(kiln_iter *it, const kiln_schema *s, int fam, const uint8_t *row, size_t rlen,
              const mreq *q, got_cell *out, size_t cap)
{
    kiln_err err;
    status_clear(&err);
    store_column cols[NQUALS];
    size_t ncols = 0;
    if (!q->all_quals) {
        for (int i = 0; i < NQUALS; i++) {
            if (q->qual_on[i]) {
                cols[ncols].family = FAMS[fam];
                cols[ncols].qualifier = QUALS[i];
                cols[ncols].qualifier_len = QUAL_LENS[i];
                ncols++;
            }
        }
        if (ncols == 0)
            return 0;    /* a read of no column: nothing, by the model too */
    }
    store_row_opts o;
    store_row_opts_init(&o);
    o.columns = ncols ? cols : NULL;
    o.column_count = ncols;
    o.max_versions = q->versions;
    o.ts_min = q->ts_min;
    o.ts_max = q->ts_max;
    o.now_ms = q->now_ms;
    store_sel sel;
    tu_must(store_row_sel_init(s, &o, &sel, &err), &err);
    kiln_cell key;
    cell_first_on_row(&key, row, (uint32_t)rlen);
    tu_must(kiln_iter_seek(it, &key), &err);
    size_t n = 0;
    if (kiln_iter_valid(it)) {
        const kiln_cell *c = kiln_iter_key(it);
        if (c->row_len == rlen && memcmp(c->row, row, rlen) == 0) {
            store_row_buf *buf = store_row_buf_new();
            store_row r;
            tu_must(store_row_assemble(it, s, &sel, buf, &r, &err), &err);
            for (size_t i = 0; i < r.count; i++) {
                assert_true(n < cap);
                const kiln_cell *rc = &r.cells[i];
                copy(out[n].qual, rc->qualifier, rc->qualifier_len);
                out[n].qual_len = rc->qualifier_len;
                out[n].ts = rc->ts;
                copy(out[n].value, rc->value, rc->value_len);
                out[n].value_len = rc->value_len;
                n++;
            }
            store_row_buf_free(buf);
        }
    }
    store_row_sel_free(&sel);
    return n;
}

static size_t
model_got(const mset *s, const uint8_t *row, size_t rlen, const mreq *q, got_cell *out,
          size_t cap)
{
    const mcell *vis[256];
    size_t n = model_read(s, row, rlen, q, vis, 256);
    assert_true(n <= cap);
    for (size_t i = 0; i < n; i++) {
        copy(out[i].qual, vis[i]->qual, vis[i]->qual_len);
        out[i].qual_len = vis[i]->qual_len;
        out[i].ts = vis[i]->ts;
        copy(out[i].value, vis[i]->value, vis[i]->value_len);
        out[i].value_len = vis[i]->value_len;
    }
    return n;
}

static void
same_got(const char *what, const got_cell *a, size_t na, const got_cell *b, size_t nb)
{
    if (na != nb)
        fail_msg("%s: %zu cells vs %zu (seed %llu)", what, na, nb,
                 (unsigned long long)rng_seed);
    for (size_t i = 0; i < na; i++) {
        if (a[i].qual_len != b[i].qual_len || memcmp(a[i].qual, b[i].qual, a[i].qual_len) != 0 ||
            a[i].ts != b[i].ts || a[i].value_len != b[i].value_len ||
            memcmp(a[i].value, b[i].value, a[i].value_len) != 0)
            fail_msg("%s: cell %zu differs: ts %lld '%.*s' vs ts %lld '%.*s' (seed %llu)", what,
                     i, (long long)a[i].ts, (int)a[i].value_len, a[i].value, (long long)b[i].ts,
                     (int)b[i].value_len, b[i].value, (unsigned long long)rng_seed);
    }
}

static void
random_req(mreq *q, store_compact_kind kind, int fam)
{
    memset(q, 0, sizeof *q);
    uint32_t maxv = kind == STORE_COMPACT_MAJOR ? FAM_VERSIONS[fam] : 5;
    q->versions = 1 + (uint32_t)(rnd() % maxv);
    q->all_quals = rnd() % 2;
    for (int i = 0; i < NQUALS; i++)
        q->qual_on[i] = rnd() % 2;
    q->ts_min = 0;
    q->ts_max = INT64_MAX;
    if (kind != STORE_COMPACT_MAJOR && rnd() % 3 == 0) {
        q->ts_min = TS(rnd() % NTS);
        q->ts_max = TS(rnd() % (NTS + 1));
    }
    q->now_ms = rnd() % 2 ? NOW_MS : NOW_MS + 2500;
}

/* For every row and reads: model(a) == assemble(ait) == assemble(bit) ==
 * model(b). */
static size_t
compare_reads(const kiln_schema *s, store_compact_kind kind, int fam, mset *a, kiln_iter *ait,
              mset *b, kiln_iter *bit, const char *what)
{
    mset_sort(a);
    mset_sort(b);
    size_t reads = 0;
    for (int r = 0; r < NROWS; r++) {
        for (int k = 0; k < 12; k++) {
            mreq q;
            random_req(&q, kind, fam);
            got_cell g1[256], g2[256], g3[256], g4[256];
            size_t n1 = model_got(a, ROWS[r], ROW_LENS[r], &q, g1, 256);
            size_t n2 = assemble_read(ait, s, fam, ROWS[r], ROW_LENS[r], &q, g2, 256);
            size_t n3 = assemble_read(bit, s, fam, ROWS[r], ROW_LENS[r], &q, g3, 256);
            size_t n4 = model_got(b, ROWS[r], ROW_LENS[r], &q, g4, 256);
            char msg[160];
            snprintf(msg, sizeof msg, "%s row %d: model(inputs) vs assemble(inputs)", what, r);
            same_got(msg, g1, n1, g2, n2);
            snprintf(msg, sizeof msg, "%s row %d: inputs vs output", what, r);
            same_got(msg, g1, n1, g4, n4);
            snprintf(msg, sizeof msg, "%s row %d: assemble(output)", what, r);
            same_got(msg, g4, n4, g3, n3);
            reads++;
        }
    }
    return reads;
}

static kiln_iter *
merge_of(tinput *in, size_t n, tinput *extra, size_t nextra, kiln_iter *out_it, uint64_t out_seq)
{
    iter_merge *m = iter_merge_new(0);
    for (size_t i = 0; i < n; i++)
        iter_merge_add(m, in[i].it, in[i].seq, 0);
    for (size_t i = 0; i < nextra; i++)
        iter_merge_add(m, extra[i].it, extra[i].seq, 0);
    if (out_it != NULL)
        iter_merge_add(m, out_it, out_seq, 0);
    return iter_merge_iter(m);
}

static void
random_round(const kiln_schema *s, store_compact_kind kind, size_t *reads, uint64_t *sum)
{
    kiln_err err;
    status_clear(&err);
    int fam = (int)(rnd() % NFAMS);
    size_t n = 1 + rnd() % 6;
    tinput in[6];
    for (size_t i = 0; i < n; i++)
        tinput_make(&in[i], fam, 10 + i, rnd() % 40, kind == STORE_COMPACT_FLUSH ? 0 : rnd() % 2);
    store_compact_input ci[6];
    for (size_t i = 0; i < n; i++) {
        ci[i].it = in[i].it;
        ci[i].seq = in[i].seq;
    }
    store_compact_opts o;
    store_compact_opts_init(&o);
    o.kind = kind;
    o.schema = s;
    o.family = (size_t)fam;
    o.now_ms = NOW_MS;
    char out_path[600];
    snprintf(out_path, sizeof out_path, "%s/out-%d.hfile", tmp_dir, file_no++);
    store_compact_stats st;
    tu_must(store_compact_write(ci, n, &o, out_path, &st, &err), &err);
    uint64_t out_seq = 10 + n - 1;

    mset ins = {0}, outs = {0};
    for (size_t i = 0; i < n; i++)
        mset_addall(&ins, &in[i].cells);
    hfile_reader *ord;
    read_output(out_path, kind, fam, out_seq * 1000000 + 999999, &outs, &ord);
    assert_int_equal(st.cells_in, ins.n);
    assert_int_equal(st.cells_out, outs.n);
    assert_int_equal(st.cells_in, st.cells_out + st.duplicates_dropped + st.deletes_dropped +
                                       st.versions_dropped + st.expired_dropped);
    if (kind == STORE_COMPACT_FLUSH)
        assert_int_equal(st.cells_out + st.duplicates_dropped, st.cells_in);
    if (kind != STORE_COMPACT_MAJOR)
        assert_int_equal(st.versions_dropped, 0);
    assert_int_equal(st.bytes_out, hfile_reader_file_size(ord));
    sum[0] += st.cells_in;
    sum[1] += st.cells_out;
    sum[2] += st.deletes_dropped + st.versions_dropped + st.expired_dropped;

    /* beyond reads: a MAJOR output is exactly what a full read at now_ms
     * returns; a MINOR one keeps one copy of every unexpired marker */
    mset_sort(&ins);
    if (kind == STORE_COMPACT_MAJOR) {
        mreq full;
        memset(&full, 0, sizeof full);
        full.all_quals = 1;
        full.versions = FAM_VERSIONS[fam];
        full.ts_max = INT64_MAX;
        full.now_ms = NOW_MS;
        size_t total = 0;
        for (int r = 0; r < NROWS; r++) {
            const mcell *vis[256];
            size_t nv = model_read(&ins, ROWS[r], ROW_LENS[r], &full, vis, 256);
            size_t k = 0;
            for (size_t i = 0; i < outs.n; i++) {
                if (!same_row(&outs.c[i], ROWS[r], ROW_LENS[r]))
                    continue;
                assert_true(k < nv);
                kiln_cell a = to_kcell(&outs.c[i]), b = to_kcell(vis[k]);
                assert_int_equal(cell_compare(&a, &b), 0);
                assert_memory_equal(outs.c[i].value, vis[k]->value, vis[k]->value_len);
                k++;
            }
            assert_int_equal(k, nv);
            total += nv;
        }
        assert_int_equal(total, outs.n);
    } else if (kind == STORE_COMPACT_MINOR) {
        size_t markers = 0, out_markers = 0;
        for (size_t i = 0; i < ins.n; i++) {
            const mcell *m = &ins.c[i];
            kiln_cell a = to_kcell(m);
            kiln_cell b = i > 0 ? to_kcell(&ins.c[i - 1]) : a;
            if (m->type != CELL_TYPE_PUT && (i == 0 || cell_compare(&a, &b) != 0) &&
                !(FAM_TTL_MS[fam] && m->ts < NOW_MS - FAM_TTL_MS[fam]))
                markers++;
        }
        for (size_t i = 0; i < outs.n; i++)
            out_markers += outs.c[i].type != CELL_TYPE_PUT;
        assert_int_equal(markers, out_markers);
    }

    kiln_iter *out_it = hfile_reader_iter(ord);
    kiln_iter *ait = merge_of(in, n, NULL, 0, NULL, 0);
    *reads += compare_reads(s, kind, fam, &ins, ait, &outs, out_it, "alone");
    kiln_iter_close(ait);

    if (kind != STORE_COMPACT_MAJOR) {
        /* with an older and a newer file left out of the compaction */
        tinput extra[2];
        tinput_make(&extra[0], fam, 1, rnd() % 30, 1);
        tinput_make(&extra[1], fam, 100, rnd() % 10, 1);
        mset_addall(&ins, &extra[0].cells);
        mset_addall(&ins, &extra[1].cells);
        mset_addall(&outs, &extra[0].cells);
        mset_addall(&outs, &extra[1].cells);
        ait = merge_of(in, n, extra, 2, NULL, 0);
        kiln_iter *bit = merge_of(NULL, 0, extra, 2, out_it, out_seq);
        *reads += compare_reads(s, kind, fam, &ins, ait, &outs, bit, "with others");
        kiln_iter_close(ait);
        kiln_iter_close(bit);
        tinput_close(&extra[0]);
        tinput_close(&extra[1]);
    }
    kiln_iter_close(out_it);
    hfile_reader_close(ord);
    unlink(out_path);
    free(ins.c);
    free(outs.c);
    for (size_t i = 0; i < n; i++)
        tinput_close(&in[i]);
}

static void
random_kind(store_compact_kind kind, const char *name)
{
    kiln_schema s;
    make_schema(&s);
    size_t reads = 0;
    uint64_t sum[3] = {0, 0, 0};
    for (int round = 0; round < 150; round++)
        random_round(&s, kind, &reads, sum);
    printf("  %s: %zu reads compared; cells in %llu, out %llu, dropped by kind %llu\n", name,
           reads, (unsigned long long)sum[0], (unsigned long long)sum[1],
           (unsigned long long)sum[2]);
    if (kind != STORE_COMPACT_FLUSH)
        assert_true(sum[2] > 0);   /* the rounds did exercise dropping */
    schema_free(&s);
}

static void
random_flush(void **state)
{
    (void)state;
    random_kind(STORE_COMPACT_FLUSH, "flush");
}

static void
random_minor(void **state)
{
    (void)state;
    random_kind(STORE_COMPACT_MINOR, "minor");
}

static void
random_major(void **state)
{
    (void)state;
    random_kind(STORE_COMPACT_MAJOR, "major");
}

/* ------------------------------------------------------------------ exact outputs */

typedef struct xcell {
    const char *qual;
    int64_t ts;
    uint8_t type;
} xcell;

static void
put_all(memstore *ms, const char *fam, const char *row, const xcell *x, size_t n, uint64_t seq)
{
    kiln_err err;
    status_clear(&err);
    for (size_t i = 0; i < n; i++) {
        kiln_cell c;
        memset(&c, 0, sizeof c);
        c.row = (const uint8_t *)row;
        c.row_len = (uint32_t)strlen(row);
        c.family = (const uint8_t *)fam;
        c.family_len = (uint32_t)strlen(fam);
        c.qualifier = (const uint8_t *)x[i].qual;
        c.qualifier_len = (uint32_t)strlen(x[i].qual);
        c.ts = x[i].ts;
        c.type = x[i].type;
        c.value = (const uint8_t *)"v";
        c.value_len = x[i].type == CELL_TYPE_PUT ? 1 : 0;
        tu_must(memstore_add(ms, &c, seq, &err), &err);
    }
}

/* Compact ms as kind and compare the output with want (in order). */
static void
expect_output(const kiln_schema *s, size_t fam, memstore *ms, store_compact_kind kind,
              const xcell *want, size_t nwant, store_compact_stats *st)
{
    kiln_err err;
    status_clear(&err);
    store_compact_input in = {memstore_iter(ms), 7};
    store_compact_opts o;
    store_compact_opts_init(&o);
    o.kind = kind;
    o.schema = s;
    o.family = fam;
    o.now_ms = NOW_MS;
    char path[600];
    snprintf(path, sizeof path, "%s/exact.hfile", tmp_dir);
    tu_must(store_compact_write(&in, 1, &o, path, st, &err), &err);
    kiln_iter_close(in.it);
    hfile_reader *rd;
    tu_must(hfile_reader_open(path, NULL, &rd, &err), &err);
    kiln_iter *it = hfile_reader_iter(rd);
    size_t i = 0;
    for (kiln_iter_seek_first(it); kiln_iter_valid(it); kiln_iter_next(it), i++) {
        const kiln_cell *c = kiln_iter_key(it);
        if (i >= nwant)
            fail_msg("kind %d: extra cell ts %lld type %u", (int)kind, (long long)c->ts, c->type);
        if (c->qualifier_len != strlen(want[i].qual) ||
            memcmp(c->qualifier, want[i].qual, c->qualifier_len) != 0 || c->ts != want[i].ts ||
            c->type != want[i].type)
            fail_msg("kind %d: cell %zu is '%.*s' ts %lld type %u, want '%s' ts %lld type %u",
                     (int)kind, i, (int)c->qualifier_len, (const char *)c->qualifier,
                     (long long)c->ts, c->type, want[i].qual, (long long)want[i].ts,
                     want[i].type);
    }
    assert_int_equal(i, nwant);
    /* the family's store file settings */
    const schema_family *f = &s->families[fam];
    assert_int_equal(hfile_reader_trailer(rd)->compression_codec, f->codec);
    if (nwant > 0)
        assert_int_equal(hfile_reader_bloom_type(rd), f->bloom);
    kslice v;
    assert_true(hfile_fileinfo_get(hfile_reader_fileinfo(rd), "MAJOR_COMPACTION_KEY", &v));
    assert_int_equal(v.n, 1);
    assert_int_equal(v.p[0], kind == STORE_COMPACT_MAJOR ? 0xFF : 0x00);
    int64_t seq;
    assert_true(hfile_fileinfo_get_i64(hfile_reader_fileinfo(rd), "MAX_SEQ_ID_KEY", &seq));
    assert_int_equal(seq, 7);
    assert_false(hfile_fileinfo_get(hfile_reader_fileinfo(rd), "BULKLOAD_TIMESTAMP", &v));
    kiln_iter_close(it);
    hfile_reader_close(rd);
    unlink(path);
}

#define P CELL_TYPE_PUT
#define D CELL_TYPE_DELETE
#define DC CELL_TYPE_DELETE_COLUMN
#define DF CELL_TYPE_DELETE_FAMILY
#define DFV CELL_TYPE_DELETE_FAMILY_VERSION

static void
exact_semantics(void **state)
{
    (void)state;
    kiln_schema s;
    make_schema(&s);
    /* family b: VERSIONS 2, TTL 1000 s; TS(3) is expired at NOW_MS, TS(4) is not */
    const xcell cells[] = {
        {"", TS(7), DFV},          /* masks TS(7) in every column */
        {"q1", TS(7), P}, {"q1", TS(6), P}, {"q1", TS(5), P}, {"q1", TS(4), P},
        {"q1", TS(3), P},          /* expired */
        {"q2", TS(5), DC},         /* masks TS(5) and older of q2 only */
        {"q2", TS(6), P}, {"q2", TS(5), P}, {"q2", TS(4), P},
        {"q3", TS(5), D},          /* masks exactly TS(5) of q3 */
        {"q3", TS(6), P}, {"q3", TS(5), P}, {"q3", TS(4), P},
        {"q4", TS(2), D},          /* an expired marker */
        {"q4", TS(1), P},          /* expired, not masked */
        {"q5", TS(7), P},          /* masked by the DeleteFamilyVersion */
    };
    memstore *ms = memstore_new(0);
    put_all(ms, "b", "r", cells, sizeof cells / sizeof cells[0], 1);
    /* an identical key added later wins; one copy goes out */
    put_all(ms, "b", "r", (const xcell[]){{"q1", TS(6), P}}, 1, 2);
    store_compact_stats st;

    const xcell flush[] = {
        {"", TS(7), DFV},
        {"q1", TS(7), P}, {"q1", TS(6), P}, {"q1", TS(5), P}, {"q1", TS(4), P}, {"q1", TS(3), P},
        {"q2", TS(6), P}, {"q2", TS(5), DC}, {"q2", TS(5), P}, {"q2", TS(4), P},
        {"q3", TS(6), P}, {"q3", TS(5), D}, {"q3", TS(5), P}, {"q3", TS(4), P},
        {"q4", TS(2), D}, {"q4", TS(1), P},
        {"q5", TS(7), P},
    };
    expect_output(&s, 1, ms, STORE_COMPACT_FLUSH, flush, sizeof flush / sizeof flush[0], &st);
    assert_int_equal(st.cells_in, 18);
    assert_int_equal(st.duplicates_dropped, 1);

    const xcell minor[] = {
        {"", TS(7), DFV},
        {"q1", TS(6), P}, {"q1", TS(5), P}, {"q1", TS(4), P},   /* every version kept */
        {"q2", TS(6), P}, {"q2", TS(5), DC},
        {"q3", TS(6), P}, {"q3", TS(5), D}, {"q3", TS(4), P},
    };
    expect_output(&s, 1, ms, STORE_COMPACT_MINOR, minor, sizeof minor / sizeof minor[0], &st);
    assert_int_equal(st.duplicates_dropped, 1);
    assert_int_equal(st.deletes_dropped, 5);    /* q1@7, q2@5, q2@4, q3@5, q5@7 */
    assert_int_equal(st.expired_dropped, 3);    /* q1@3, q4's marker and Put */
    assert_int_equal(st.versions_dropped, 0);

    const xcell major[] = {
        {"q1", TS(6), P}, {"q1", TS(5), P},     /* VERSIONS 2 */
        {"q2", TS(6), P},
        {"q3", TS(6), P}, {"q3", TS(4), P},
    };
    expect_output(&s, 1, ms, STORE_COMPACT_MAJOR, major, sizeof major / sizeof major[0], &st);
    assert_int_equal(st.versions_dropped, 1);   /* q1@4 */
    assert_int_equal(st.expired_dropped, 2);    /* q1@3, q4@1 (q4's marker counts as a delete) */
    assert_int_equal(st.deletes_dropped, 9);    /* 4 markers and 5 masked Puts */
    assert_int_equal(st.cells_out, 5);
    memstore_unref(ms);

    /* DeleteFamily masks every column at or below it; family a keeps 3 versions */
    ms = memstore_new(0);
    const xcell fam_a[] = {
        {"", TS(4), DF},
        {"x", TS(7), P}, {"x", TS(6), P}, {"x", TS(5), P}, {"x", TS(4), P}, {"x", TS(0), P},
        {"y", TS(5), P}, {"y", TS(3), P},
    };
    put_all(ms, "a", "r", fam_a, sizeof fam_a / sizeof fam_a[0], 1);
    const xcell major_a[] = {
        {"x", TS(7), P}, {"x", TS(6), P}, {"x", TS(5), P}, {"y", TS(5), P},
    };
    expect_output(&s, 0, ms, STORE_COMPACT_MAJOR, major_a, sizeof major_a / sizeof major_a[0],
                  &st);
    const xcell minor_a[] = {
        {"", TS(4), DF},
        {"x", TS(7), P}, {"x", TS(6), P}, {"x", TS(5), P}, {"y", TS(5), P},
    };
    expect_output(&s, 0, ms, STORE_COMPACT_MINOR, minor_a, sizeof minor_a / sizeof minor_a[0],
                  &st);
    memstore_unref(ms);

    /* nothing in: an empty but valid file */
    ms = memstore_new(0);
    expect_output(&s, 2, ms, STORE_COMPACT_MAJOR, NULL, 0, &st);
    assert_int_equal(st.cells_in, 0);
    memstore_unref(ms);
    schema_free(&s);
}

/* ------------------------------------------------------------------ policy */

static void
pick_policy(void **state)
{
    (void)state;
    store_compact_policy p;
    store_compact_policy_init(&p);
    assert_int_equal(p.min_files, 3);
    assert_int_equal(p.max_files, 10);
    static const struct {
        uint64_t sizes[20];
        size_t n;
        size_t want_first, want_count;
    } cases[] = {
        {{0}, 0, 0, 0},                                 /* no files */
        {{10, 10}, 2, 0, 0},                            /* fewer than min_files */
        {{10, 10, 10}, 3, 0, 3},                        /* equal sizes are in ratio */
        {{100, 10, 10}, 3, 0, 0},                       /* 100 > 1.2 * 20 */
        {{10, 10, 100}, 3, 0, 0},
        {{24, 10, 10}, 3, 0, 3},                        /* 24 <= 1.2 * 20 */
        {{25, 10, 10}, 3, 0, 0},                        /* 25 > 24 */
        {{5, 5, 5, 1000}, 4, 0, 3},                     /* the big old file stays out */
        {{1000, 5, 5, 5}, 4, 1, 3},                     /* a big new one too */
        {{1000000, 5, 5, 5, 1000, 6, 6, 6, 6}, 9, 5, 4},    /* the longer run wins */
        {{1000000, 6, 6, 6, 1000, 5, 5, 5}, 8, 5, 3},     /* equal count: the smaller total */
        {{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 12, 0, 10},   /* max_files, newest first */
        {{100, 60, 50}, 3, 0, 3},                       /* 100 <= 1.2 * 110 */
        {{1, 3, 12, 48, 192, 768}, 6, 0, 0},            /* each 3x the sum before: none */
        {{1, 1, 2, 4, 8, 16}, 6, 0, 6},                 /* 16 <= 1.2 * 16 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t first = 99;
        size_t count = store_compact_pick(cases[i].sizes, cases[i].n, &p, &first);
        if (count != cases[i].want_count || first != cases[i].want_first)
            fail_msg("case %zu: picked %zu at %zu, want %zu at %zu", i, count, first,
                     cases[i].want_count, cases[i].want_first);
    }

    /* min_size: a small run skips the ratio test */
    uint64_t skewed[] = {100, 10, 10};
    size_t first;
    assert_int_equal(store_compact_pick(skewed, 3, &p, &first), 0);
    p.min_size = 121;
    assert_int_equal(store_compact_pick(skewed, 3, &p, &first), 3);
    p.min_size = 120;
    assert_int_equal(store_compact_pick(skewed, 3, &p, &first), 0);
    p.min_size = 0;

    /* max_size: a run totalling more is never taken */
    uint64_t even[] = {10, 10, 10, 10};
    p.max_size = 35;
    assert_int_equal(store_compact_pick(even, 4, &p, &first), 3);
    assert_int_equal(first, 0);
    p.max_size = 29;
    assert_int_equal(store_compact_pick(even, 4, &p, &first), 0);
    p.max_size = 0;

    /* a stuck store (blocking_files reached, nothing in ratio) merges its
     * cheapest min_files run */
    uint64_t stuck[16];
    for (int i = 0; i < 16; i++)
        stuck[i] = (uint64_t)1 << (2 * (15 - i));   /* each 4x the next newer: none in ratio */
    p.blocking_files = 17;
    assert_int_equal(store_compact_pick(stuck, 16, &p, &first), 0);
    p.blocking_files = 16;
    assert_int_equal(store_compact_pick(stuck, 16, &p, &first), 3);
    assert_int_equal(first, 13);   /* 16 + 4 + 1, the smallest total of three */
    p.blocking_files = 0;
    assert_int_equal(store_compact_pick(stuck, 16, &p, &first), 0);

    /* max_files below min_files acts as min_files */
    store_compact_policy_init(&p);
    p.max_files = 1;
    uint64_t three[] = {1, 1, 1, 1};
    assert_int_equal(store_compact_pick(three, 4, &p, &first), 3);
}

/* ------------------------------------------------------------------ throttle, stop, errors */

/* A memstore of n Puts in family b, ~130 bytes each. */
static memstore *
big_memstore(size_t n)
{
    kiln_err err;
    status_clear(&err);
    memstore *ms = memstore_new(0);
    char row[32], val[100];
    uint64_t r = 42;
    for (size_t i = 0; i < n; i++) {
        snprintf(row, sizeof row, "row%06zu", i);
        for (size_t j = 0; j < sizeof val; j++)
            val[j] = (char)tu_splitmix64(&r);   /* incompressible */
        kiln_cell c;
        memset(&c, 0, sizeof c);
        c.row = (const uint8_t *)row;
        c.row_len = (uint32_t)strlen(row);
        c.family = (const uint8_t *)"b";
        c.family_len = 1;
        c.qualifier = (const uint8_t *)"q";
        c.qualifier_len = 1;
        c.ts = NOW_MS;
        c.type = CELL_TYPE_PUT;
        c.value = (const uint8_t *)val;
        c.value_len = sizeof val;
        tu_must(memstore_add(ms, &c, i + 1, &err), &err);
    }
    return ms;
}

static void
throttle(void **state)
{
    (void)state;
    kiln_err err;
    status_clear(&err);
    kiln_schema s;
    make_schema(&s);
    memstore *ms = big_memstore(200);
    char path[600];
    snprintf(path, sizeof path, "%s/throttled.hfile", tmp_dir);
    store_compact_opts o;
    store_compact_opts_init(&o);
    o.schema = &s;
    o.family = 1;       /* block size 512: many blocks */
    o.now_ms = NOW_MS;

    store_compact_input in = {memstore_iter(ms), 1};
    store_compact_stats fast;
    tu_must(store_compact_write(&in, 1, &o, path, &fast, &err), &err);
    assert_int_equal(fast.cells_out, 200);
    assert_true(fast.bytes_out > 20000);
    assert_true(fast.throttle_secs == 0);

    /* A rate that makes the file take two seconds, or four times what the
     * unthrottled write took if that is longer: the throttle must hold the
     * write back to it. */
    double want_secs = 4.0 * fast.secs > 2.0 ? 4.0 * fast.secs : 2.0;
    o.bytes_per_sec = (uint64_t)((double)fast.bytes_out / want_secs) + 1;
    double t0 = tu_now_s();
    store_compact_stats slow;
    tu_must(store_compact_write(&in, 1, &o, path, &slow, &err), &err);
    double took = tu_now_s() - t0;
    double min_secs = (double)slow.bytes_out / (double)o.bytes_per_sec;
    printf("  throttled: %llu bytes at %llu B/s took %.3f s (minimum %.3f, slept %.3f)\n",
           (unsigned long long)slow.bytes_out, (unsigned long long)o.bytes_per_sec, took,
           min_secs, slow.throttle_secs);
    /* the same cells; the file info's creation time may compress a few
     * bytes differently a second later */
    assert_true(slow.bytes_out + 64 >= fast.bytes_out && slow.bytes_out <= fast.bytes_out + 64);
    assert_true(took >= 0.8 * min_secs);
    assert_true(slow.secs >= 0.8 * min_secs);
    /* The throttle slept, unless the write itself (fsync included) ran past
     * the due time on a stalled machine: then there was nothing to hold back. */
    assert_true(slow.throttle_secs > 0 || slow.secs >= min_secs);
    assert_true(env_exists(path));
    kiln_iter_close(in.it);
    memstore_unref(ms);
    unlink(path);
    schema_free(&s);
}

typedef struct stop_after {
    int calls, after;
} stop_after;

static int
stop_cb(void *arg)
{
    stop_after *sa = arg;
    return ++sa->calls > sa->after;
}

static void
stop_removes_file(void **state)
{
    (void)state;
    kiln_schema s;
    make_schema(&s);
    memstore *ms = big_memstore(300);
    char path[600];
    snprintf(path, sizeof path, "%s/stopped.hfile", tmp_dir);
    int afters[] = {0, 1, 5, 1000};   /* at once, after some blocks, at the very end */
    for (size_t i = 0; i < sizeof afters / sizeof afters[0]; i++) {
        kiln_err err;
        status_clear(&err);
        stop_after sa = {0, afters[i]};
        store_compact_opts o;
        store_compact_opts_init(&o);
        o.kind = STORE_COMPACT_MAJOR;
        o.schema = &s;
        o.family = 1;
        o.now_ms = NOW_MS;
        o.stop = stop_cb;
        o.stop_arg = &sa;
        store_compact_input in = {memstore_iter(ms), 1};
        store_compact_stats st;
        kiln_status rc = store_compact_write(&in, 1, &o, path, &st, &err);
        kiln_iter_close(in.it);
        if (afters[i] == 1000) {
            tu_must(rc, &err);            /* never stopped */
            assert_true(env_exists(path));
            assert_true(sa.calls > 10);   /* asked at every block */
            unlink(path);
            continue;
        }
        assert_int_equal(rc, KILN_CANCELLED);
        assert_int_equal(err.code, KILN_CANCELLED);
        assert_non_null(strstr(err.msg, "stopped.hfile"));
        assert_false(env_exists(path));
        assert_true(st.cells_in < 300);
    }
    /* stopped during the throttle's last sleep, after the file was finished */
    {
        kiln_err err;
        status_clear(&err);
        memstore *small = big_memstore(3);
        store_compact_opts o;
        store_compact_opts_init(&o);
        o.schema = &s;
        o.family = 1;
        o.bytes_per_sec = 1;
        stop_after sa = {0, 2};
        o.stop = stop_cb;
        o.stop_arg = &sa;
        store_compact_input in = {memstore_iter(small), 1};
        assert_int_equal(store_compact_write(&in, 1, &o, path, NULL, &err), KILN_CANCELLED);
        assert_false(env_exists(path));
        kiln_iter_close(in.it);
        memstore_unref(small);
    }
    memstore_unref(ms);
    schema_free(&s);
}

/* An iterator over a memstore that fails after `after` cells. */
typedef struct fail_iter {
    kiln_iter base;
    kiln_iter *inner;
    int after, seen;
} fail_iter;

static void
fail_iter_sync(fail_iter *f)
{
    if (f->inner->cur != NULL && f->seen++ >= f->after) {
        kiln_err e;
        status_clear(&e);
        status_set(&e, KILN_CORRUPTION, "bad.hfile: block checksum mismatch at offset 4096");
        kiln_iter_fail(&f->base, &e);
        return;
    }
    f->base.cur = f->inner->cur;
}

static void
fail_iter_seek_first(kiln_iter *it)
{
    fail_iter *f = (fail_iter *)it;
    kiln_iter_restart(it);
    f->seen = 0;
    kiln_iter_seek_first(f->inner);
    fail_iter_sync(f);
}

static void
fail_iter_seek(kiln_iter *it, const kiln_cell *key)
{
    fail_iter *f = (fail_iter *)it;
    kiln_iter_restart(it);
    kiln_iter_seek(f->inner, key);
    fail_iter_sync(f);
}

static void
fail_iter_next(kiln_iter *it)
{
    fail_iter *f = (fail_iter *)it;
    kiln_iter_next(f->inner);
    f->base.cur = NULL;
    fail_iter_sync(f);
}

static void
fail_iter_close(kiln_iter *it)
{
    fail_iter *f = (fail_iter *)it;
    kiln_iter_close(f->inner);
    free(f);
}

static const kiln_iter_ops fail_iter_ops = {
    fail_iter_seek_first, fail_iter_seek_first, fail_iter_seek, fail_iter_seek,
    fail_iter_next, fail_iter_next, fail_iter_close,
};

static void
errors_leave_no_file(void **state)
{
    (void)state;
    kiln_schema s;
    make_schema(&s);
    char path[600];
    snprintf(path, sizeof path, "%s/failed.hfile", tmp_dir);
    store_compact_opts o;
    store_compact_opts_init(&o);
    o.kind = STORE_COMPACT_MINOR;
    o.schema = &s;
    o.family = 1;
    o.now_ms = NOW_MS;

    /* an input that fails midway */
    memstore *ms = big_memstore(100);
    fail_iter *f = calloc(1, sizeof *f);
    kiln_iter_init(&f->base, &fail_iter_ops);
    f->inner = memstore_iter(ms);
    f->after = 50;
    store_compact_input in[2] = {{&f->base, 2}, {memstore_iter(ms), 1}};
    kiln_err err;
    status_clear(&err);
    store_compact_stats st;
    assert_int_equal(store_compact_write(in, 2, &o, path, &st, &err), KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, "bad.hfile: block checksum mismatch"));
    assert_false(env_exists(path));
    kiln_iter_close(in[0].it);
    kiln_iter_close(in[1].it);

    /* a cell of another family */
    store_compact_input one = {memstore_iter(ms), 1};
    o.family = 0;
    status_clear(&err);
    assert_int_equal(store_compact_write(&one, 1, &o, path, NULL, &err), KILN_INVALID);
    assert_non_null(strstr(err.msg, "family 'b'"));
    assert_false(env_exists(path));

    /* bad options */
    o.family = 3;
    status_clear(&err);
    assert_int_equal(store_compact_write(&one, 1, &o, path, NULL, &err), KILN_INVALID);
    o.family = 1;
    o.schema = NULL;
    status_clear(&err);
    assert_int_equal(store_compact_write(&one, 1, &o, path, NULL, &err), KILN_INVALID);
    o.schema = &s;
    status_clear(&err);
    assert_int_equal(store_compact_write(NULL, 2, &o, path, NULL, &err), KILN_INVALID);
    assert_false(env_exists(path));

    /* an unwritable path */
    status_clear(&err);
    char bad[700];
    snprintf(bad, sizeof bad, "%s/no-such-dir/x.hfile", tmp_dir);
    assert_int_not_equal(store_compact_write(&one, 1, &o, bad, NULL, &err), KILN_OK);
    assert_int_not_equal(err.code, KILN_OK);

    /* n = 0 writes an empty file */
    status_clear(&err);
    tu_must(store_compact_write(NULL, 0, &o, path, &st, &err), &err);
    assert_int_equal(st.cells_out, 0);
    hfile_reader *rd;
    tu_must(hfile_reader_open(path, NULL, &rd, &err), &err);
    assert_int_equal(hfile_reader_entry_count(rd), 0);
    hfile_reader_close(rd);
    unlink(path);

    kiln_iter_close(one.it);
    memstore_unref(ms);
    schema_free(&s);
}

static int
setup(void **state)
{
    (void)state;
    tu_mkdtemp(tmp_dir, sizeof tmp_dir, "compact");
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    tu_rmrf(tmp_dir);
    return 0;
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_seed = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    rng_state = rng_seed;
    printf("test_store_compact: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_flush),
        cmocka_unit_test(random_minor),
        cmocka_unit_test(random_major),
        cmocka_unit_test(exact_semantics),
        cmocka_unit_test(pick_policy),
        cmocka_unit_test(throttle),
        cmocka_unit_test(stop_removes_file),
        cmocka_unit_test(errors_leave_no_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
