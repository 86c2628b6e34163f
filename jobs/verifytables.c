/* verifytables.c -- two loaded tables compared row by row: HBase's
 * VerifyReplication with both tables in the local data directory.
 *
 *   verifytables --source A[@VERSION] --peer B[@VERSION] --output DIR
 *                [--families A1:B1,F] [--compare hash|cells] [selection options]
 *
 * The job has two table inputs, each with its own map. Both read the same
 * selection (rows, time range, versions, --raw); each map emits the row key
 * with a value tagged by its side:
 *
 *   FIELD   | SIZE | WHAT
 *   side    | 1    | 0 source, 1 peer
 *   body    | var  | hash: a 128-bit digest of the row's encoding, then the
 *           |      | cell count (be32); cells: the encoding itself
 *
 * The encoding of a row: its cell count (be32), then per cell in HBase
 * order: family length (1) and bytes, qualifier length (be32) and bytes,
 * timestamp (be64), type (1), value length (be32) and bytes. With
 * --families A1:B1 the source's family A1 is encoded as B1 (and the cells
 * re-sorted by the new names), so a copy made with `copytable --families
 * A1:B1` compares equal.
 *
 * Reduce gets a row's values in byte order, source first: one value is a row
 * only one table has; two that differ are a row whose content differs.
 * Counters with VerifyReplication's names (GOODROWS, BADROWS,
 * ONLY_IN_SOURCE_TABLE_ROWS, ONLY_IN_PEER_TABLE_ROWS,
 * CONTENT_DIFFERENT_ROWS); each bad row is a line of the text output:
 * `ROW<TAB>REASON<TAB>source N cells, peer M cells[; first difference]`.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/jobs_args.h"
#include "jobs/table_input.h"
#include "storage/base/coding.h"
#include "storage/hfile/cell.h"
#include "storage/store/schema.h"

#define VERIFY_GROUP "org.apache.hadoop.hbase.mapreduce.replication.VerifyReplication$Verifier$Counters"
#define VERIFY_FAMILIES_MAX 64
#define VERIFY_DIGEST 16

enum { VERIFY_SOURCE = 0, VERIFY_PEER = 1 };

typedef struct verify_pair {
    char src[SCHEMA_FAMILY_NAME_MAX + 1];
    char dst[SCHEMA_FAMILY_NAME_MAX + 1];
} verify_pair;

/* One family's run of cells in a row, and the name it is compared under. */
typedef struct verify_block {
    size_t start, end;
    const char *name;
    size_t name_len;
} verify_block;

typedef struct verify_state {
    verify_pair pair[VERIFY_FAMILIES_MAX];
    size_t npair;
    int cells;                    /* --compare cells */
    int c_good, c_bad, c_only_source, c_only_peer, c_content;
    int c_source_rows, c_peer_rows;
    verify_block *blocks;
    size_t cap;
    kbuf enc, value, key, line;
    kbuf side[2];                 /* reduce: each side's value */
} verify_state;

static void
verify_state_free(void *p)
{
    verify_state *st = p;
    if (st == NULL)
        return;
    free(st->blocks);
    buf_free(&st->enc);
    buf_free(&st->value);
    buf_free(&st->key);
    buf_free(&st->line);
    buf_free(&st->side[0]);
    buf_free(&st->side[1]);
    free(st);
}

/* ------------------------------------------------------------------ digest */

static uint64_t
verify_fmix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static uint64_t
verify_rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

/* A 128-bit digest of p[0..n): two lanes over 8-byte words, each word
 * mixed by a 64-bit finalizer before it joins a lane, the length folded in
 * at the end. Not cryptographic: it tells rows apart, it does not resist a
 * forger. */
static void
verify_digest(const uint8_t *p, size_t n, uint8_t out[VERIFY_DIGEST])
{
    uint64_t a = 0x6a09e667f3bcc908ull, b = 0xbb67ae8584caa73bull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = coding_get_be64(p + i);
        a = verify_rotl(a ^ verify_fmix(w ^ 0x9e3779b97f4a7c15ull), 27) * 5 + 0x52dce729;
        b = verify_rotl(b ^ verify_fmix(w + 0x3c6ef372fe94f82bull), 31) * 7 + 0x38495ab5;
    }
    uint8_t tail[8] = {0};
    memcpy(tail, p + i, n - i);
    uint64_t w = coding_get_be64(tail) ^ ((uint64_t)(n - i) << 56);
    a ^= verify_fmix(w ^ 0x9e3779b97f4a7c15ull);
    b ^= verify_fmix(w + 0x3c6ef372fe94f82bull);
    a ^= (uint64_t)n;
    b ^= verify_rotl((uint64_t)n, 32);
    a += b;
    b += a;
    a = verify_fmix(a);
    b = verify_fmix(b);
    a += b;
    b += a;
    coding_put_be64(out, a);
    coding_put_be64(out + 8, b);
}

/* ------------------------------------------------------------------ map */

static void
verify_encode_cell(kbuf *b, const kiln_cell *c, const char *family, size_t family_len)
{
    buf_append_u8(b, (uint8_t)family_len);
    buf_append(b, family, family_len);
    buf_append_be32(b, c->qualifier_len);
    buf_append(b, c->qualifier, c->qualifier_len);
    buf_append_be64(b, (uint64_t)c->ts);
    buf_append_u8(b, c->type);
    buf_append_be32(b, c->value_len);
    buf_append(b, c->value, c->value_len);
}

static int
verify_same_key(const kiln_cell *a, const kiln_cell *b)
{
    return a->ts == b->ts && a->type == b->type && a->family_len == b->family_len &&
           a->qualifier_len == b->qualifier_len &&
           memcmp(a->family, b->family, a->family_len) == 0 &&
           memcmp(a->qualifier, b->qualifier, a->qualifier_len) == 0;
}

static int
verify_block_cmp(const verify_block *x, const verify_block *y)
{
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, n);
    if (c != 0)
        return c;
    return x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

/* The name family f[0..n) is compared under on this side. */
static void
verify_rename(const verify_state *st, int side, const uint8_t *f, size_t n, const char **name,
              size_t *len)
{
    *name = (const char *)f;
    *len = n;
    if (side != VERIFY_SOURCE)
        return;
    for (size_t i = 0; i < st->npair; i++)
        if (strlen(st->pair[i].src) == n && memcmp(st->pair[i].src, f, n) == 0) {
            *name = st->pair[i].dst;
            *len = strlen(st->pair[i].dst);
            return;
        }
}

static kiln_status
verify_map_side(mr_task *t, kslice row, int side, kiln_err *err)
{
    verify_state *st = mr_task_state(t);
    const store_row *r = table_input_row(t);
    if (r == NULL)
        return status_set(err, KILN_INVALID, "verifytables: a record that is not a table row");
    /* the row's family runs, under the names they are compared by */
    size_t nb = 0;
    for (size_t i = 0; i < r->count; i++) {
        const kiln_cell *c = &r->cells[i];
        if (nb > 0) {
            const kiln_cell *p = &r->cells[st->blocks[nb - 1].start];
            if (p->family_len == c->family_len && memcmp(p->family, c->family, c->family_len) == 0) {
                st->blocks[nb - 1].end = i + 1;
                continue;
            }
        }
        if (nb == st->cap) {
            st->cap = st->cap ? 2 * st->cap : 8;
            st->blocks = kiln_realloc(st->blocks, st->cap * sizeof *st->blocks);
        }
        verify_block *b = &st->blocks[nb++];
        b->start = i;
        b->end = i + 1;
        verify_rename(st, side, c->family, c->family_len, &b->name, &b->name_len);
    }
    /* renamed families may sort otherwise: insertion sort of the runs */
    for (size_t i = 1; i < nb; i++) {
        verify_block x = st->blocks[i];
        size_t j = i;
        while (j > 0 && verify_block_cmp(&st->blocks[j - 1], &x) > 0) {
            st->blocks[j] = st->blocks[j - 1];
            j--;
        }
        st->blocks[j] = x;
    }
    buf_reset(&st->enc);
    buf_append_be32(&st->enc, 0);
    uint32_t count = 0;
    for (size_t k = 0; k < nb; k++) {
        const verify_block *b = &st->blocks[k];
        const kiln_cell *prev = NULL;
        for (size_t i = b->start; i < b->end; i++) {
            const kiln_cell *c = &r->cells[i];
            /* a raw read gives a cell stored in two loads twice; a read
             * returns the first */
            if (prev != NULL && verify_same_key(prev, c))
                continue;
            prev = c;
            verify_encode_cell(&st->enc, c, b->name, b->name_len);
            count++;
        }
    }
    coding_put_be32(st->enc.data, count);
    buf_reset(&st->value);
    buf_append_u8(&st->value, (uint8_t)side);
    if (st->cells) {
        buf_append(&st->value, st->enc.data, st->enc.len);
    } else {
        uint8_t d[VERIFY_DIGEST];
        verify_digest(st->enc.data, st->enc.len, d);
        buf_append(&st->value, d, sizeof d);
        buf_append_be32(&st->value, count);
    }
    if (!mr_task_sampling(t))
        mr_task_count(t, side == VERIFY_SOURCE ? st->c_source_rows : st->c_peer_rows, 1);
    return mr_task_emit(t, row, buf_slice(&st->value), err);
}

static kiln_status
verify_map_source(mr_task *t, kslice row, kiln_err *err)
{
    return verify_map_side(t, row, VERIFY_SOURCE, err);
}

static kiln_status
verify_map_peer(mr_task *t, kslice row, kiln_err *err)
{
    return verify_map_side(t, row, VERIFY_PEER, err);
}

/* ------------------------------------------------------------------ reduce */

/* The cell count of a value body. */
static uint32_t
verify_count(const verify_state *st, kslice body)
{
    return st->cells ? coding_get_be32(body.p) : coding_get_be32(body.p + VERIFY_DIGEST);
}

/* Read the next encoded cell at *p (below end) into c (its family borrowed);
 * 0 when the bytes end or are short. */
static int
verify_decode_cell(const uint8_t **p, const uint8_t *end, kiln_cell *c)
{
    const uint8_t *q = *p;
    if (q >= end || (size_t)(end - q) < 1u + q[0] + 4)
        return 0;
    memset(c, 0, sizeof *c);
    c->family_len = q[0];
    c->family = q + 1;
    q += 1 + c->family_len;
    c->qualifier_len = coding_get_be32(q);
    q += 4;
    if ((size_t)(end - q) < (size_t)c->qualifier_len + 8 + 1 + 4)
        return 0;
    c->qualifier = q;
    q += c->qualifier_len;
    c->ts = (int64_t)coding_get_be64(q);
    c->type = q[8];
    c->value_len = coding_get_be32(q + 9);
    q += 13;
    if ((size_t)(end - q) < c->value_len)
        return 0;
    c->value = q;
    *p = q + c->value_len;
    return 1;
}

static void
verify_describe_cell(kbuf *b, const kiln_cell *c)
{
    cell_to_string_binary(b, c->family, c->family_len);
    buf_append_u8(b, ':');
    cell_to_string_binary(b, c->qualifier, c->qualifier_len);
    const char *type = cell_type_name(c->type);
    char tail[64];
    int n = snprintf(tail, sizeof tail, "/%" PRId64 "/%s", c->ts, type ? type : "?");
    buf_append(b, tail, (size_t)n);
}

/* --compare cells: append where the two encodings first differ. */
static void
verify_first_difference(kbuf *out, kslice a, kslice b)
{
    const uint8_t *p = a.p + 4, *pe = a.p + a.n, *q = b.p + 4, *qe = b.p + b.n;
    kiln_cell x, y;
    for (;;) {
        int hx = verify_decode_cell(&p, pe, &x), hy = verify_decode_cell(&q, qe, &y);
        if (!hx && !hy)
            return;
        int key = hx && hy && x.family_len == y.family_len &&
                  x.qualifier_len == y.qualifier_len && x.ts == y.ts && x.type == y.type &&
                  memcmp(x.family, y.family, x.family_len) == 0 &&
                  memcmp(x.qualifier, y.qualifier, x.qualifier_len) == 0;
        if (key && x.value_len == y.value_len && memcmp(x.value, y.value, x.value_len) == 0)
            continue;
        buf_append(out, "; first difference: ", 20);
        if (key) {
            verify_describe_cell(out, &x);
            buf_append(out, " has another value", 18);
        } else if (hx && hy) {
            buf_append(out, "source ", 7);
            verify_describe_cell(out, &x);
            buf_append(out, ", peer ", 7);
            verify_describe_cell(out, &y);
        } else {
            buf_append(out, hx ? "only the source has " : "only the peer has ", hx ? 20 : 18);
            verify_describe_cell(out, hx ? &x : &y);
        }
        return;
    }
}

static kiln_status
verify_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    verify_state *st = mr_task_state(t);
    /* values in byte order: the source's (side 0) first; a value lives
     * until the next call (the last one too), so each is copied */
    kslice v[2] = {{NULL, 0}, {NULL, 0}};
    int have[2] = {0, 0};
    kslice x;
    size_t min = st->cells ? 5 : 1 + VERIFY_DIGEST + 4;
    while (mr_task_next_value(values, &x)) {
        if (x.n < min || x.p[0] > VERIFY_PEER || have[x.p[0]])
            return status_set(err, KILN_CORRUPTION, "verifytables: a bad or repeated value of "
                              "%zu bytes for one row", x.n);
        int side = x.p[0];
        have[side] = 1;
        buf_reset(&st->side[side]);
        buf_append(&st->side[side], x.p + 1, x.n - 1);
        v[side] = buf_slice(&st->side[side]);
    }
    const char *reason;
    int counter;
    if (have[0] && have[1]) {
        if (kslice_eq(v[0], v[1])) {
            mr_task_count(t, st->c_good, 1);
            return KILN_OK;
        }
        reason = "CONTENT_DIFFERENT_ROWS";
        counter = st->c_content;
    } else if (have[0]) {
        reason = "ONLY_IN_SOURCE_TABLE_ROWS";
        counter = st->c_only_source;
    } else if (have[1]) {
        reason = "ONLY_IN_PEER_TABLE_ROWS";
        counter = st->c_only_peer;
    } else {
        return KILN_OK;
    }
    mr_task_count(t, counter, 1);
    mr_task_count(t, st->c_bad, 1);
    buf_reset(&st->key);
    cell_to_string_binary(&st->key, key.p, key.n);
    buf_reset(&st->line);
    char counts[96];
    int n = snprintf(counts, sizeof counts, "%s\tsource %" PRIu32 " cells, peer %" PRIu32 " cells",
                     reason, have[0] ? verify_count(st, v[0]) : 0,
                     have[1] ? verify_count(st, v[1]) : 0);
    buf_append(&st->line, counts, (size_t)n);
    if (st->cells && have[0] && have[1])
        verify_first_difference(&st->line, v[0], v[1]);
    return mr_task_emit(t, buf_slice(&st->key), buf_slice(&st->line), err);
}

/* ------------------------------------------------------------------ setup */

static int
verify_opt(const char *name, int argc, char **argv, int *i, const char **v, kiln_status *s,
           kiln_err *err)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *v = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] != '\0')
        return 0;
    *s = jobs_take_value(argc, argv, i, v, err);
    return 1;
}

/* --families "A:X,B": the source's A compared as the peer's X, B as B. */
static kiln_status
verify_parse_families(verify_state *st, const char *spec, kbuf *src_cols, kbuf *peer_cols,
                      kiln_err *err)
{
    const char *p = spec;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *colon = memchr(p, ':', n);
        size_t sl = colon ? (size_t)(colon - p) : n;
        const char *d = colon ? colon + 1 : p;
        size_t dl = colon ? n - sl - 1 : n;
        if (sl == 0 || dl == 0 || !schema_family_name_ok(p, sl) || !schema_family_name_ok(d, dl))
            return status_set(err, KILN_INVALID, "--families: '%.*s' is not FAMILY or "
                              "SOURCEFAMILY:PEERFAMILY", (int)n, p);
        if (st->npair == VERIFY_FAMILIES_MAX)
            return status_set(err, KILN_INVALID, "--families: more than %d families",
                              VERIFY_FAMILIES_MAX);
        verify_pair *q = &st->pair[st->npair];
        memcpy(q->src, p, sl);
        q->src[sl] = '\0';
        memcpy(q->dst, d, dl);
        q->dst[dl] = '\0';
        for (size_t i = 0; i < st->npair; i++)
            if (strcmp(st->pair[i].src, q->src) == 0 || strcmp(st->pair[i].dst, q->dst) == 0)
                return status_set(err, KILN_INVALID, "--families: '%.*s' repeats a family",
                                  (int)n, p);
        if (st->npair > 0) {
            buf_append_u8(src_cols, ',');
            buf_append_u8(peer_cols, ',');
        }
        buf_append(src_cols, q->src, sl);
        buf_append(peer_cols, q->dst, dl);
        st->npair++;
        p += n;
        if (*p == ',')
            p++;
    }
    if (st->npair == 0)
        return status_set(err, KILN_INVALID, "--families: no family given");
    buf_append_u8(src_cols, 0);
    buf_append_u8(peer_cols, 0);
    return KILN_OK;
}

static kiln_status
verify_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    verify_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, verify_state_free);
    buf_init(&st->enc);
    buf_init(&st->value);
    buf_init(&st->key);
    buf_init(&st->line);
    buf_init(&st->side[0]);
    buf_init(&st->side[1]);
    table_input_spec spec;
    table_input_spec_init(&spec);
    const char *output = NULL, *source = NULL, *peer = NULL, *families = NULL;
    const char *compare = "hash";
    kiln_status s = KILN_OK;
    for (int i = 1; i < argc && s == KILN_OK; i++) {
        const char *v = NULL;
        if (strncmp(argv[i], "--input-table", 13) == 0) {
            s = status_set(err, KILN_INVALID, "verifytables: name the tables with --source and "
                           "--peer, not --input-table");
        } else if (table_input_arg(&spec, argc, argv, &i, &s, err)) {
            continue;
        } else if (verify_opt("--output", argc, argv, &i, &v, &s, err)) {
            output = v;
        } else if (verify_opt("--source", argc, argv, &i, &v, &s, err)) {
            source = v;
        } else if (verify_opt("--peer", argc, argv, &i, &v, &s, err)) {
            peer = v;
        } else if (verify_opt("--families", argc, argv, &i, &v, &s, err)) {
            families = v;
        } else if (verify_opt("--compare", argc, argv, &i, &v, &s, err)) {
            compare = v;
        } else if (verify_opt("--data", argc, argv, &i, &v, &s, err)) {
            spec.data_dir = v;
        } else {
            s = status_set(err, KILN_INVALID, "verifytables: unknown argument '%s'", argv[i]);
        }
    }
    if (s == KILN_OK && (source == NULL || peer == NULL))
        s = status_set(err, KILN_INVALID, "verifytables: --source A[@VERSION] and --peer "
                       "B[@VERSION] are required");
    if (s == KILN_OK && output == NULL)
        s = status_set(err, KILN_INVALID, "verifytables: --output DIR is required");
    if (s == KILN_OK && strcmp(compare, "cells") == 0)
        st->cells = 1;
    else if (s == KILN_OK && strcmp(compare, "hash") != 0)
        s = status_set(err, KILN_INVALID, "verifytables: --compare must be hash or cells, not "
                       "'%s'", compare);
    if (s == KILN_OK && families != NULL && spec.columns != NULL)
        s = status_set(err, KILN_INVALID, "verifytables: give --families or --columns, not both");
    kbuf src_cols = KBUF_INIT, peer_cols = KBUF_INIT;
    if (s == KILN_OK && families != NULL)
        s = verify_parse_families(st, families, &src_cols, &peer_cols, err);
    if (s == KILN_OK) {
        mr_job_set_output(job, output);
        mr_job_describe(job, "compare", kslice_str(compare));
        mr_job_describe(job, "families", kslice_str(families ? families : ""));
    }
    /* the source, then the peer: one selection, two tables */
    if (s == KILN_OK)
        s = table_input_set_table(&spec, source, err);
    if (s == KILN_OK && families != NULL) {
        free(spec.columns);
        spec.columns = (char *)kiln_memdup(src_cols.data, src_cols.len);
    }
    if (s == KILN_OK)
        s = table_input_add(job, &spec, NULL, err);   /* the job's map */
    if (s == KILN_OK)
        s = table_input_set_table(&spec, peer, err);
    if (s == KILN_OK && families != NULL) {
        free(spec.columns);
        spec.columns = (char *)kiln_memdup(peer_cols.data, peer_cols.len);
    }
    if (s == KILN_OK)
        s = table_input_add(job, &spec, verify_map_peer, err);
    buf_free(&src_cols);
    buf_free(&peer_cols);
    table_input_spec_free(&spec);
    if (s != KILN_OK)
        return s;
    st->c_good = mr_job_counter(job, VERIFY_GROUP, "GOODROWS");
    st->c_bad = mr_job_counter(job, VERIFY_GROUP, "BADROWS");
    st->c_only_source = mr_job_counter(job, VERIFY_GROUP, "ONLY_IN_SOURCE_TABLE_ROWS");
    st->c_only_peer = mr_job_counter(job, VERIFY_GROUP, "ONLY_IN_PEER_TABLE_ROWS");
    st->c_content = mr_job_counter(job, VERIFY_GROUP, "CONTENT_DIFFERENT_ROWS");
    st->c_source_rows = mr_job_counter(job, "VerifyTables", "Source rows");
    st->c_peer_rows = mr_job_counter(job, "VerifyTables", "Peer rows");
    mr_job_set_map(job, verify_map_source);
    mr_job_set_reduce(job, verify_reduce);
    /* one sorted list of bad rows unless -D mapreduce.job.reduces says more */
    mr_job_set_reduces(job, 1);
    return KILN_OK;
}

const mr_job_def verifytables_job = {
    "verifytables",
    "compare two loaded tables row by row (HBase VerifyReplication, both tables local)",
    "Usage: kiln-mr verifytables --source A[@VERSION] --peer B[@VERSION] --output DIR\n"
    "                            [--families A1:B1,F] [--compare hash|cells] [options]\n"
    "\n"
    "Reads one version of each table with the same selection and compares them\n"
    "row by row: every cell's family, qualifier, timestamp, type and value.\n"
    "Counters (group org.apache.hadoop.hbase.mapreduce.replication.\n"
    "VerifyReplication$Verifier$Counters): GOODROWS, BADROWS and, of the bad\n"
    "rows, ONLY_IN_SOURCE_TABLE_ROWS, ONLY_IN_PEER_TABLE_ROWS and\n"
    "CONTENT_DIFFERENT_ROWS; group VerifyTables: Source rows, Peer rows. Each bad\n"
    "row is a line of DIR/part-r-00000, in row order:\n"
    "  ROW<TAB>REASON<TAB>source N cells, peer M cells[; first difference: ...]\n"
    "\n"
    "Options:\n"
    "  --source A[@VERSION]  the source table (VERSION as `kiln views` lists it)\n"
    "  --peer B[@VERSION]    the table compared with it (may be A itself)\n"
    "  --output DIR          where the bad rows are listed (must not exist)\n"
    "  --data DIR            the data directory (default $KILN_DATA, else ./kiln-data)\n"
    "  --families A1:B1,F    compare only these families: the source's A1 with the\n"
    "                        peer's B1 (as `copytable --families A1:B1` renames), F\n"
    "                        with F; default every family of each, names as they are\n"
    "  --compare hash        map sends a 128-bit digest of each row (default)\n"
    "  --compare cells       map sends every cell, and each content difference\n"
    "                        names the first cell that differs\n"
    "  --raw                 compare every stored cell: versions, deleted cells and\n"
    "                        delete markers (HBase's --includeDeletedCells)\n"
    "  --start-row, --stop-row, --prefix, --columns, --starttime, --endtime,\n"
    "  --versions            as below, the same for both tables\n"
    TABLE_INPUT_USAGE,
    verify_setup,
};
