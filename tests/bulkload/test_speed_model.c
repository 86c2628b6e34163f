/* test_speed_model.c -- the speed layer against a model: random interleavings
 * of Puts, the four delete types, flushes, reopens (log replay), bulk loads
 * (replace, append, covering) and reads, every read compared with what a
 * plain list of every cell ever written says HBase would return.
 *
 * The model shares no code with the store: it keeps each cell with the order
 * it was written or loaded in, and computes a row's visible cells directly
 * from HBase's rules (newest write of an identical key wins; a DeleteFamily
 * or DeleteColumn masks versions at or before its timestamp, a Delete or
 * DeleteFamilyVersion the one version at its timestamp; masked cells do not
 * count as versions; a family returns at most its VERSIONS).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bulkload/bulkload.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/speed.h"
#include "storage/store/table.h"
#include "tests/support/test_util.h"

#define NROWS 12
#define NQUALS 3
#define MAX_CELLS 20000

static const char *FAMS[2] = {"f", "g"};
static const uint32_t FAM_VERSIONS[2] = {3, 1};

typedef struct mcell {
    int row, fam, qual;       /* qual -1: a family marker's empty qualifier */
    int64_t ts;
    uint8_t type;
    char value[24];
    uint64_t order;           /* when written or loaded */
    int batch;                /* 1: from a bulk load (replaced by the next replace load) */
    int live;
} mcell;

typedef struct model {
    mcell cells[MAX_CELLS];
    size_t n;
    uint64_t order;
} model;

static void
row_name(int r, char *out)
{
    snprintf(out, 16, "row%02d", r);
}

static void
qual_name(int q, char *out)
{
    if (q < 0)
        out[0] = '\0';
    else
        snprintf(out, 8, "q%d", q & 7);
}

static void
model_add(model *m, int row, int fam, int qual, int64_t ts, uint8_t type, const char *value,
          int batch)
{
    assert_true(m->n < MAX_CELLS);
    mcell *c = &m->cells[m->n++];
    memset(c, 0, sizeof *c);
    c->row = row;
    c->fam = fam;
    c->qual = qual;
    c->ts = ts;
    c->type = type;
    if (value != NULL)
        snprintf(c->value, sizeof c->value, "%s", value);
    c->order = ++m->order;
    c->batch = batch;
    c->live = 1;
}

/* Is live cell c the newest of its identical key? */
static int
model_newest(const model *m, const mcell *c)
{
    for (size_t i = 0; i < m->n; i++) {
        const mcell *o = &m->cells[i];
        if (o->live && o != c && o->row == c->row && o->fam == c->fam && o->qual == c->qual &&
            o->ts == c->ts && o->type == c->type && o->order > c->order)
            return 0;
    }
    return 1;
}

static int
model_masked(const model *m, const mcell *p)
{
    for (size_t i = 0; i < m->n; i++) {
        const mcell *d = &m->cells[i];
        if (!d->live || d->row != p->row || d->fam != p->fam || d->type == CELL_TYPE_PUT)
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
            if (d->qual == p->qual && d->ts >= p->ts)
                return 1;
            break;
        case CELL_TYPE_DELETE:
            if (d->qual == p->qual && d->ts == p->ts)
                return 1;
            break;
        }
    }
    return 0;
}

typedef struct vis {
    int fam, qual;
    int64_t ts;
    char value[24];
} vis;

static int
vis_cmp(const void *a, const void *b)
{
    const vis *x = a, *y = b;
    if (x->fam != y->fam)
        return x->fam - y->fam;
    if (x->qual != y->qual)
        return x->qual - y->qual;
    return x->ts > y->ts ? -1 : x->ts < y->ts;
}

/* The visible cells of row, HBase order, at most maxv per column. */
static size_t
model_row(const model *m, int row, uint32_t maxv, vis *out)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++) {
        const mcell *c = &m->cells[i];
        if (!c->live || c->row != row || c->type != CELL_TYPE_PUT || !model_newest(m, c) ||
            model_masked(m, c))
            continue;
        out[n].fam = c->fam;
        out[n].qual = c->qual;
        out[n].ts = c->ts;
        snprintf(out[n].value, sizeof out[n].value, "%s", c->value);
        n++;
    }
    qsort(out, n, sizeof *out, vis_cmp);
    size_t keep = 0, run = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && out[i].fam == out[i - 1].fam && out[i].qual == out[i - 1].qual)
            run++;
        else
            run = 0;
        uint32_t lim = maxv < FAM_VERSIONS[out[i].fam] ? maxv : FAM_VERSIONS[out[i].fam];
        if (run < lim)
            out[keep++] = out[i];
    }
    return keep;
}

/* ------------------------------------------------------------------ the store side */

typedef struct world {
    char dir[256], data[300], job[300];
    kiln_speed *s;
    model m;
    uint64_t rnd;
    int loads;
    int64_t clock;            /* timestamps handed out */
} world;

static void
world_open(world *w)
{
    speed_options o;
    speed_options_init(&o);
    o.flush_check_ms = 0;              /* flushes only when asked: deterministic */
    o.memstore_flush_bytes = 0;
    kiln_err err;
    status_clear(&err);
    tu_must(speed_open(w->data, NULL, &o, &w->s, &err), &err);
}

static void
world_init(world *w, uint64_t seed)
{
    memset(w, 0, sizeof *w);
    w->rnd = seed;
    tu_mkdtemp(w->dir, sizeof w->dir, "speed_model");
    snprintf(w->data, sizeof w->data, "%s/data", w->dir);
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "default:t");
    kiln_err err;
    status_clear(&err);
    for (int f = 0; f < 2; f++) {
        schema_family sf;
        schema_family_defaults(&sf, FAMS[f]);
        sf.max_versions = FAM_VERSIONS[f];
        tu_must(schema_add_family(&s, &sf, &err), &err);
    }
    tu_must(schema_add_split(&s, (const uint8_t *)"row06", 5, &err), &err);
    s.keep_versions = 3;
    tu_must(table_create(w->data, &s, &err), &err);
    schema_free(&s);
    world_open(w);
}

static void
world_free(world *w)
{
    speed_close(w->s);
    tu_rmrf(w->dir);
}

static uint64_t
rnd(world *w, uint64_t n)
{
    return tu_splitmix64(&w->rnd) % n;
}

static void
do_write(world *w)
{
    int row = (int)rnd(w, NROWS), fam = (int)rnd(w, 2), qual = (int)rnd(w, NQUALS);
    int64_t ts = 1 + (int64_t)rnd(w, 40);
    char r[16], q[8], v[24];
    row_name(row, r);
    uint64_t kind = rnd(w, 10);
    uint8_t type = CELL_TYPE_PUT;
    if (kind == 6)
        type = CELL_TYPE_DELETE;
    else if (kind == 7)
        type = CELL_TYPE_DELETE_COLUMN;
    else if (kind == 8)
        type = CELL_TYPE_DELETE_FAMILY;
    else if (kind == 9)
        type = CELL_TYPE_DELETE_FAMILY_VERSION;
    if (type == CELL_TYPE_DELETE_FAMILY || type == CELL_TYPE_DELETE_FAMILY_VERSION)
        qual = -1;
    qual_name(qual, q);
    snprintf(v, sizeof v, "w%llu", (unsigned long long)w->m.order + 1);
    kiln_mutation mu;
    mutation_init(&mu, (const uint8_t *)r, strlen(r));
    if (type == CELL_TYPE_PUT)
        mutation_put(&mu, FAMS[fam], 1, q, strlen(q), ts, v, strlen(v));
    else
        mutation_delete(&mu, type, FAMS[fam], 1, q, strlen(q), ts);
    kiln_durability d = (kiln_durability)(1 + rnd(w, 3));
    kiln_err err;
    status_clear(&err);
    tu_must(speed_mutate(w->s, "t", &mu, 1, d, &err), &err);
    mutation_free(&mu);
    model_add(&w->m, row, fam, qual, ts, type, type == CELL_TYPE_PUT ? v : NULL, 0);
    if (d == KILN_DUR_SKIP_WAL) {
        /* not logged: a reopen would lose it, so flush it now (as a user
         * of SKIP_WAL must expect, and as the model cannot follow) */
        tu_must(speed_flush(w->s, "t", &err), &err);
    }
}

/* A bulk load of random Puts: replace (mode 0), append (1), covering (2). */
static void
do_load(world *w, int mode)
{
    char job[400], p[500];
    snprintf(job, sizeof job, "%s/job%d", w->dir, w->loads++);
    mkdir(job, 0755);
    if (mode == 0 || mode == 2) {
        for (size_t i = 0; i < w->m.n; i++) {
            if (w->m.cells[i].batch)
                w->m.cells[i].live = 0;
        }
    }
    int64_t covers_until = 1 + (int64_t)rnd(w, 40);
    if (mode == 2) {
        for (size_t i = 0; i < w->m.n; i++) {
            mcell *c = &w->m.cells[i];
            if (!c->batch && c->ts <= covers_until)
                c->live = 0;
        }
    }
    for (int f = 0; f < 2; f++) {
        snprintf(p, sizeof p, "%s/%s", job, FAMS[f]);
        mkdir(p, 0755);
        snprintf(p, sizeof p, "%s/%s/part-0", job, FAMS[f]);
        hfile_writer_options o;
        hfile_writer_options_init(&o);
        o.sync = 0;
        hfile_writer *hw;
        kiln_err err;
        status_clear(&err);
        tu_must(hfile_writer_open(p, &o, &hw, &err), &err);
        for (int row = 0; row < NROWS; row++) {
            if (rnd(w, 3) == 0)
                continue;
            for (int q = 0; q < NQUALS; q++) {
                if (rnd(w, 2) == 0)
                    continue;
                char r[16], qn[8], v[24];
                row_name(row, r);
                qual_name(q, qn);
                int64_t ts = 1 + (int64_t)rnd(w, 40);
                snprintf(v, sizeof v, "b%d.%d", w->loads, row);
                kiln_cell c;
                memset(&c, 0, sizeof c);
                c.row = (const uint8_t *)r;
                c.row_len = (uint32_t)strlen(r);
                c.family = (const uint8_t *)FAMS[f];
                c.family_len = 1;
                c.qualifier = (const uint8_t *)qn;
                c.qualifier_len = (uint32_t)strlen(qn);
                c.ts = ts;
                c.type = CELL_TYPE_PUT;
                c.value = (const uint8_t *)v;
                c.value_len = (uint32_t)strlen(v);
                tu_must(hfile_writer_add(hw, &c, &err), &err);
                model_add(&w->m, row, f, q, ts, CELL_TYPE_PUT, v, 1);
            }
        }
        tu_must(hfile_writer_finish(hw, NULL, &err), &err);
    }
    snprintf(p, sizeof p, "%s/_SUCCESS", job);
    FILE *ok = fopen(p, "w");
    assert_non_null(ok);
    fclose(ok);
    bulkload_options bo;
    bulkload_options_init(&bo);
    bo.mode = mode == 1 ? BULKLOAD_APPEND : BULKLOAD_REPLACE;
    if (mode == 2) {
        bo.covers = 1;
        bo.covers_until = covers_until;
    }
    bulkload_result br;
    kiln_err err;
    status_clear(&err);
    tu_must(bulkload_run(w->data, "t", job, &bo, &br, &err), &err);
    bulkload_result_free(&br);
}

static void
check_reads(world *w, const char *after)
{
    store_view *v;
    kiln_err err;
    status_clear(&err);
    tu_must(speed_view(w->s, "t", &v, &err), &err);
    store_row_buf *rb = store_row_buf_new();
    vis want[256];
    for (int row = 0; row < NROWS; row++) {
        for (uint32_t maxv = 1; maxv <= 3; maxv += 2) {
            size_t nw = model_row(&w->m, row, maxv, want);
            char r[16];
            row_name(row, r);
            store_row_opts o;
            store_row_opts_init(&o);
            o.max_versions = maxv;
            store_row got;
            tu_must(store_view_get(v, (const uint8_t *)r, strlen(r), &o, rb, &got, &err), &err);
            int same = got.count == nw;
            for (size_t i = 0; same && i < nw; i++) {
                const kiln_cell *c = &got.cells[i];
                char q[8];
                qual_name(want[i].qual, q);
                same = c->family_len == 1 && c->family[0] == FAMS[want[i].fam][0] &&
                       c->qualifier_len == strlen(q) && memcmp(c->qualifier, q, strlen(q)) == 0 &&
                       c->ts == want[i].ts && c->value_len == strlen(want[i].value) &&
                       memcmp(c->value, want[i].value, c->value_len) == 0;
            }
            if (!same) {
                fprintf(stderr, "after %s: row %s versions %u: store %zu cells, model %zu\n",
                        after, r, maxv, got.count, nw);
                for (size_t i = 0; i < got.count; i++)
                    fprintf(stderr, "  store %.*s:%.*s ts %lld = %.*s\n",
                            (int)got.cells[i].family_len, (const char *)got.cells[i].family,
                            (int)got.cells[i].qualifier_len,
                            (const char *)got.cells[i].qualifier, (long long)got.cells[i].ts,
                            (int)got.cells[i].value_len, (const char *)got.cells[i].value);
                for (size_t i = 0; i < nw; i++)
                    fprintf(stderr, "  model %s:q%d ts %lld = %s\n", FAMS[want[i].fam],
                            want[i].qual, (long long)want[i].ts, want[i].value);
                fail();
            }
        }
    }
    /* a full scan returns the same rows */
    store_scan_opts so;
    store_scan_opts_init(&so);
    store_scan *sc;
    tu_must(store_scan_open(v, &so, &sc, &err), &err);
    size_t rows = 0;
    int has;
    store_row got;
    for (;;) {
        tu_must(store_scan_next(sc, &got, &has, &err), &err);
        if (!has)
            break;
        rows++;
    }
    store_scan_close(sc);
    size_t want_rows = 0;
    for (int row = 0; row < NROWS; row++)
        want_rows += model_row(&w->m, row, 1, want) > 0;
    assert_int_equal(rows, want_rows);
    store_row_buf_free(rb);
    store_view_unref(v);
}

static void
run_model(uint64_t seed, int steps)
{
    world *w = malloc(sizeof *w);
    world_init(w, seed);
    const char *last = "start";
    for (int i = 0; i < steps; i++) {
        uint64_t op = rnd(w, 100);
        kiln_err err;
        status_clear(&err);
        if (op < 70) {
            do_write(w);
            last = "write";
        } else if (op < 78) {
            tu_must(speed_flush(w->s, "t", &err), &err);
            last = "flush";
        } else if (op < 85) {
            speed_close(w->s);
            world_open(w);
            last = "reopen";
        } else if (op < 90) {
            do_load(w, 0);
            last = "replace load";
        } else if (op < 95) {
            do_load(w, 1);
            last = "append load";
        } else {
            do_load(w, 2);
            last = "covering load";
        }
        if (i % 5 == 4 || op >= 70)
            check_reads(w, last);
    }
    check_reads(w, "the end");
    world_free(w);
    free(w);
}

static void
test_model_seeds(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 12; seed++)
        run_model(seed * 7919, 250);
}

/* Writes, reopen: replayed from the log with nothing flushed. */
static void
test_replay(void **state)
{
    (void)state;
    world *w = malloc(sizeof *w);
    world_init(w, 42);
    for (int i = 0; i < 300; i++)
        do_write(w);
    check_reads(w, "writes");
    speed_close(w->s);
    world_open(w);
    check_reads(w, "replay");
    speed_table_stats st;
    kiln_err err;
    status_clear(&err);
    tu_must(speed_table_stats_get(w->s, "t", &st, &err), &err);
    assert_true(st.memstore_cells > 0);
    world_free(w);
    free(w);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_model_seeds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
