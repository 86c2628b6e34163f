/* graph.c -- trees and graphs (a forest, with nodes of several parents) as
 * adjacency lists: one row per node holding its parents and its children.
 * The graph view job and its input generator.
 *
 *   graph --input PATH... --output DIR [--data DIR] [--table NAME]
 *
 * Input lines, tab-separated, of two shapes told apart by their field count:
 *
 *   edge (5)  parent_id TAB parent_type TAB child_id TAB child_type TAB ts_ms
 *   node (3)  node_id TAB node_type TAB ts_ms
 *
 * Ids are u32, a parent differs from its child; a type is 1..255 bytes of
 * text without NUL ("dept", "team", "person"); ts >= 0. A node line makes a
 * node exist without any edge (a lone root) or restates its type. Row key
 * and cells:
 *
 *   OFFSET | SIZE | FIELD
 *   0      | 4    | node id, u32 big-endian (rows in id order)
 *
 *   COLUMN          | VALUE               | TIMESTAMP
 *   c:              | the node's own type | ts of the last line naming the node
 *   c:<child id>    | the child's type    | the edge's ts
 *   p:              | the node's own type | as c:
 *   p:<parent id>   | the parent's type   | the edge's ts
 *
 * where <id> is a 4-byte qualifier, the id as a u32 big-endian, so a family
 * lists its neighbours in id order after the empty qualifier. An edge line
 * writes c:<child> in the parent's row and p:<parent> in the child's row; a
 * repeated edge is one pair of cells, the last line's in input order (each
 * repeat counted twice under Duplicate rows, once per row, as follows does).
 * A node's own type is the one the last line naming it gives (edge or node
 * line); the types in its neighbours' cells are those of the edges' last
 * lines. Cycles are stored as given.
 *
 * Queries (docs/views.md; scripts/graph_query.py runs the walks):
 *   children of X   one Get of family c:  kiln get graph ROW c
 *   parents of X    one Get of family p:  kiln get graph ROW p
 *   subtree of X to depth N: breadth first, one Get of family c per node
 *                   reached, each node once at its least depth
 *   path from X to a root: Gets of family p, following the smallest parent
 *                   id at each step, stopping at a node without parents or
 *                   before a node already on the path (a cycle)
 *
 * Map output value (one record per row a line names):
 *
 *   OFFSET | SIZE | FIELD
 *   0      | 12   | input position (VIEW_POS)
 *   12     | 1    | 'c' (the other node is a child), 'p' (a parent), 'n' (a node line)
 *   13     | 4    | the other node's id, u32 BE (0 for 'n')
 *   17     | 8    | ts, i64 BE
 *   25     | 1    | L, the length of this node's type
 *   26     | L    | this node's type
 *   26+L   | rest | the other node's type (none for 'n')
 *
 * Reduce holds one node's values in memory, sorts them by (kind, other id,
 * input order) and keeps the last of each edge.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/index_output.h"
#include "jobs/jobs_args.h"
#include "jobs/view_common.h"
#include "jobs/view_gen.h"
#include "storage/base/coding.h"

#define GRAPH_EDGE_FIELDS 5
#define GRAPH_NODE_FIELDS 3
#define GRAPH_TYPE_MAX 255
#define GRAPH_HEAD (VIEW_POS + 1 + 4 + 8 + 1)   /* the value up to this node's type */

/* One map value of a node, held while its row is reduced. */
typedef struct graph_ent {
    uint8_t kind;               /* 'c', 'p' or 'n' */
    uint32_t other;
    int64_t ts;
    uint64_t seq;               /* arrival (input) order */
    size_t off;                 /* this node's type in graph_state.arena */
    size_t own_len;
    size_t other_len;           /* the other node's type follows this node's */
} graph_ent;

typedef struct graph_state {
    view *v;
    size_t table;
    kbuf val;                   /* map: the value being built */
    kbuf row;                   /* reduce: the node's row key */
    kbuf arena;                 /* reduce: the types of the node's values */
    graph_ent *ents;
    size_t nents, cap;
    int c_nodes;
    int c_edges;
    int c_roots;
    int c_leaves;
    int c_multi;
} graph_state;

static void
graph_state_free(void *p)
{
    graph_state *st = p;
    if (st == NULL)
        return;
    view_free(st->v);
    buf_free(&st->val);
    buf_free(&st->row);
    buf_free(&st->arena);
    free(st->ents);
    free(st);
}

static int
graph_type_ok(kslice s)
{
    return s.n > 0 && s.n <= GRAPH_TYPE_MAX && view_text_ok(s);
}

/* Emit one record to the row of node `self`. */
static kiln_status
graph_emit(graph_state *st, mr_task *t, const uint8_t pos[VIEW_POS], uint32_t self, uint8_t kind,
           uint32_t other, int64_t ts, kslice own, kslice other_type, kiln_err *err)
{
    uint8_t key[4];
    coding_put_be32(key, self);
    buf_reset(&st->val);
    buf_append(&st->val, pos, VIEW_POS);
    buf_append_u8(&st->val, kind);
    buf_append_be32(&st->val, other);
    buf_append_be64(&st->val, (uint64_t)ts);
    buf_append_u8(&st->val, (uint8_t)own.n);
    buf_append(&st->val, own.p, own.n);
    buf_append(&st->val, other_type.p, other_type.n);
    return view_emit(st->v, t, st->table, kslice_make(key, sizeof key), buf_slice(&st->val),
                     kslice_make(NULL, 0), err);
}

static kiln_status
graph_map(mr_task *t, kslice line, kiln_err *err)
{
    graph_state *st = mr_task_state(t);
    kslice f[GRAPH_EDGE_FIELDS];
    size_t nf = view_split(line, '\t', f, GRAPH_EDGE_FIELDS);
    if (nf != GRAPH_EDGE_FIELDS && nf != GRAPH_NODE_FIELDS) {
        char reason[80];
        snprintf(reason, sizeof reason, "%zu fields, expected %d (an edge) or %d (a node)", nf,
                 GRAPH_EDGE_FIELDS, GRAPH_NODE_FIELDS);
        return view_bad(st->v, t, reason, err);
    }
    uint32_t a, b = 0;
    int64_t ts;
    kslice tsf = f[nf - 1];
    if (view_parse_u32(f[0], &a) != 0 || (nf == GRAPH_EDGE_FIELDS && view_parse_u32(f[2], &b) != 0))
        return view_bad(st->v, t, "node id is not a u32", err);
    if (!graph_type_ok(f[1]) || (nf == GRAPH_EDGE_FIELDS && !graph_type_ok(f[3])))
        return view_bad(st->v, t, "node type is empty, over 255 bytes or holds a NUL", err);
    if (view_parse_i64(tsf, &ts) != 0 || ts < 0)
        return view_bad(st->v, t, "timestamp is not a number of ms >= 0", err);
    if (nf == GRAPH_EDGE_FIELDS && a == b)
        return view_bad(st->v, t, "a node its own parent", err);
    uint8_t pos[VIEW_POS];
    view_pos(t, pos);
    if (nf == GRAPH_NODE_FIELDS)
        return graph_emit(st, t, pos, a, 'n', 0, ts, f[1], kslice_make(NULL, 0), err);
    kiln_status s = graph_emit(st, t, pos, a, 'c', b, ts, f[1], f[3], err);
    if (s == KILN_OK)
        s = graph_emit(st, t, pos, b, 'p', a, ts, f[3], f[1], err);
    return s;
}

static int
graph_ent_cmp(const void *x, const void *y)
{
    const graph_ent *a = x, *b = y;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->other != b->other)
        return a->other < b->other ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Read a node's values into st->ents (in input order) and st->arena. */
static kiln_status
graph_collect(graph_state *st, mr_values *values, kiln_err *err)
{
    kslice val;
    st->nents = 0;
    buf_reset(&st->arena);
    while (mr_task_next_value(values, &val)) {
        if (val.n < GRAPH_HEAD || val.n < GRAPH_HEAD + (size_t)val.p[GRAPH_HEAD - 1])
            return status_set(err, KILN_CORRUPTION, "graph: a map value of %zu bytes", val.n);
        if (st->nents == st->cap) {
            st->cap = st->cap ? 2 * st->cap : 64;
            st->ents = kiln_realloc(st->ents, st->cap * sizeof *st->ents);
        }
        graph_ent *e = &st->ents[st->nents];
        const uint8_t *p = val.p + VIEW_POS;
        e->kind = p[0];
        e->other = coding_get_be32(p + 1);
        e->ts = (int64_t)coding_get_be64(p + 5);
        e->own_len = p[13];
        e->other_len = val.n - GRAPH_HEAD - e->own_len;
        e->off = st->arena.len;
        e->seq = st->nents++;
        buf_append(&st->arena, val.p + GRAPH_HEAD, val.n - GRAPH_HEAD);
    }
    if (st->nents == 0)
        return status_set(err, KILN_CORRUPTION, "graph: a row without values");
    return KILN_OK;
}

/* Put one cell of family fam: the empty qualifier (the node's own type)
 * when e is NULL, else the neighbour e names. */
static kiln_status
graph_put(graph_state *st, mr_task *t, size_t table, const char *fam, const graph_ent *self,
          const graph_ent *e, kiln_err *err)
{
    kslice row = buf_slice(&st->row);
    if (e == NULL)
        return view_put(st->v, t, table, row, fam, kslice_make(NULL, 0), self->ts,
                        kslice_make(st->arena.data + self->off, self->own_len), err);
    uint8_t q[4];
    coding_put_be32(q, e->other);
    return view_put(st->v, t, table, row, fam, kslice_make(q, sizeof q), e->ts,
                    kslice_make(st->arena.data + e->off + e->own_len, e->other_len), err);
}

/* The cells of family fam ('c' or 'p'): the node's own type, then the last
 * value of each neighbour among ents[from, to) (sorted, all of kind fam). */
static kiln_status
graph_family(graph_state *st, mr_task *t, size_t table, const char *fam, const graph_ent *self,
             size_t from, size_t to, uint64_t *distinct, kiln_err *err)
{
    kiln_status s = graph_put(st, t, table, fam, self, NULL, err);
    uint64_t dups = 0;
    *distinct = 0;
    for (size_t i = from; i < to && s == KILN_OK; i++) {
        if (i + 1 < to && st->ents[i + 1].other == st->ents[i].other) {
            dups++;
            continue;
        }
        (*distinct)++;
        s = graph_put(st, t, table, fam, self, &st->ents[i], err);
    }
    view_count_dups(st->v, t, dups);
    return s;
}

static kiln_status
graph_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    graph_state *st = mr_task_state(t);
    size_t table;
    kiln_status s = view_group(st->v, key, &table, &st->row, err);
    if (s == KILN_OK)
        s = graph_collect(st, values, err);
    if (s != KILN_OK)
        return s;
    /* the node's own type: the last line naming it */
    graph_ent self = st->ents[st->nents - 1];
    qsort(st->ents, st->nents, sizeof *st->ents, graph_ent_cmp);
    size_t c0 = 0, c1 = 0;
    while (c1 < st->nents && st->ents[c1].kind == 'c')
        c1++;
    size_t p0 = c1;
    while (p0 < st->nents && st->ents[p0].kind == 'n')
        p0++;   /* 'n' sorts between 'c' and 'p' */
    size_t p1 = p0;
    while (p1 < st->nents && st->ents[p1].kind == 'p')
        p1++;
    if (p1 != st->nents)
        return status_set(err, KILN_CORRUPTION, "graph: a map value of kind 0x%02X",
                          st->ents[p1].kind);
    uint64_t children, parents;
    s = graph_family(st, t, table, "c", &self, c0, c1, &children, err);
    if (s == KILN_OK)
        s = graph_family(st, t, table, "p", &self, p0, p1, &parents, err);
    if (s != KILN_OK)
        return s;
    mr_task_count(t, st->c_nodes, 1);
    mr_task_count(t, st->c_edges, children);
    mr_task_count(t, st->c_roots, parents == 0);
    mr_task_count(t, st->c_leaves, children == 0);
    mr_task_count(t, st->c_multi, parents > 1);
    return KILN_OK;
}

static kiln_status
graph_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    graph_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, graph_state_free);
    st->v = view_new(job, "graph");
    /* A node's own type is merged from many lines in reduce, where no index
     * row can be made, so the job takes no indexes; salting it does. */
    const char *ix = mr_conf_get(mr_job_conf(job), INDEX_OUTPUT_CONF, NULL);
    if (ix != NULL && *ix != '\0')
        return status_set(err, KILN_INVALID, "graph: %s is not supported (a node's cells are "
                          "merged in reduce)", INDEX_OUTPUT_CONF);
    kiln_status s = view_setup_one_table(st->v, argc, argv, "graph", "c,p", &st->table, err);
    if (s != KILN_OK)
        return s;
    st->c_nodes = mr_job_counter(job, "graph", "Nodes");
    st->c_edges = mr_job_counter(job, "graph", "Edges");
    st->c_roots = mr_job_counter(job, "graph", "Roots (no parent)");
    st->c_leaves = mr_job_counter(job, "graph", "Leaves (no child)");
    st->c_multi = mr_job_counter(job, "graph", "Nodes with several parents");
    mr_job_set_map(job, graph_map);
    mr_job_set_reduce(job, graph_reduce);
    return KILN_OK;
}

const mr_job_def graph_job = {
    "graph",
    "trees and graphs as adjacency lists: one row per node, its parents and children",
    "Usage: kiln-mr graph --input PATH... --output DIR [--data DIR] [--table NAME]\n"
    "\n"
    "Turns edge lines  parent_id TAB parent_type TAB child_id TAB child_type TAB ts_ms\n"
    "and node lines    node_id TAB node_type TAB ts_ms  (a node without edges)\n"
    "into one row per node (row key: the id, u32 BE) with c:<child id> = the\n"
    "child's type and p:<parent id> = the parent's type (qualifiers u32 BE), at\n"
    "the edge's ts, and c: = p: = the node's own type (the empty qualifier). A\n"
    "repeated edge: the last line wins. HFiles go to DIR/c and DIR/p for\n"
    "`kiln load NAME DIR`.\n"
    "\n"
    "  --table NAME   the table (default graph). When it exists in the data\n"
    "                 directory (--data DIR, else $KILN_DATA, else ./kiln-data)\n"
    "                 its regions, family settings and salt buckets are used:\n"
    "                 kiln create graph --family p --family c [--salt-buckets N]\n"
    "\n"
    "Queries: node 42's children, its parents (the first cell is its own type):\n"
    "  kiln get graph '\\x00\\x00\\x00*' c        GET /graph/%00%00%00%2A/c\n"
    "  kiln get graph '\\x00\\x00\\x00*' p        GET /graph/%00%00%00%2A/p\n"
    "the subtree to depth N and the path to a root (smallest parent id first):\n"
    "  scripts/graph_query.py subtree 42 3     scripts/graph_query.py path 42\n"
    "Counters: graph / Nodes, Edges, Roots, Leaves, Nodes with several parents.\n"
    "Malformed lines and self-edges are bad lines; -D graph.skip.bad.lines=false\n"
    "fails on one.\n",
    graph_setup,
};

/* ------------------------------------------------------------------ generator */

/* The kinds of tree the generator grows: the type of a node at each depth
 * below the root, and the leaf type (nodes of it have no children). Every
 * node at max_depth is a leaf; above it, from leaf_from on, a node is a leaf
 * with probability leaf_pm / 1000. */
typedef struct graph_kind {
    const char *types[8];
    const char *leaf;
    int max_depth;
    int leaf_from;
    uint32_t leaf_pm;
} graph_kind;

static const graph_kind graph_kinds[] = {
    {{"company", "division", "dept", "team"}, "person", 4, 2, 450},
    {{"catalog", "category", "subcategory"}, "product", 3, 1, 550},
    {{"volume", "folder", "folder", "folder", "folder", "folder", "folder"}, "file", 7, 1, 500},
};
#define GRAPH_KINDS (sizeof graph_kinds / sizeof graph_kinds[0])
#define GRAPH_TREE_MAX 400

/* One tree being grown: its nodes by index (id = first + index). */
typedef struct graph_tree {
    const graph_kind *kind;
    uint32_t first;
    uint32_t n;
    uint8_t depth[GRAPH_TREE_MAX];
    const char *type[GRAPH_TREE_MAX];
    uint32_t parent[GRAPH_TREE_MAX];      /* index of the first parent (roots: 0) */
    uint32_t cand[GRAPH_TREE_MAX];        /* nodes that may take children */
    uint32_t ncand;
} graph_tree;

typedef struct graph_grow {
    const view_gen_options *o;
    view_gen_rng r;
    view_gen_out *out;
    kbuf line;
    uint64_t i;                           /* nodes written so far */
} graph_grow;

static int64_t
graph_gen_ts(const graph_grow *g)
{
    const int64_t base = 1704067200000LL, span = 365LL * 86400000;   /* 2024 */
    uint64_t rows = g->o->rows ? g->o->rows : 1;
    return base + (int64_t)(g->i * (uint64_t)span / rows);
}

static kiln_status
graph_gen_node_line(graph_grow *g, const graph_tree *tr, uint32_t k, int64_t ts, kiln_err *err)
{
    buf_reset(&g->line);
    view_gen_printf(&g->line, "%" PRIu32 "\t%s\t%" PRId64, tr->first + k, tr->type[k], ts);
    return view_gen_out_line(g->out, g->i, g->o, &g->r, &g->line, err);
}

static kiln_status
graph_gen_edge_line(graph_grow *g, const graph_tree *tr, uint32_t par, uint32_t k, int64_t ts,
                    kiln_err *err)
{
    buf_reset(&g->line);
    view_gen_printf(&g->line, "%" PRIu32 "\t%s\t%" PRIu32 "\t%s\t%" PRId64, tr->first + par,
                    tr->type[par], tr->first + k, tr->type[k], ts);
    return view_gen_out_line(g->out, g->i, g->o, &g->r, &g->line, err);
}

/* Grow one tree of n nodes, ids from first on, writing its lines. */
static kiln_status
graph_gen_tree(graph_grow *g, graph_tree *tr, uint32_t first, uint32_t n, kiln_err *err)
{
    tr->kind = &graph_kinds[view_gen_below(&g->r, GRAPH_KINDS)];
    tr->first = first;
    tr->n = 0;
    tr->ncand = 0;
    const graph_kind *kd = tr->kind;
    kiln_status s = KILN_OK;
    for (uint32_t k = 0; k < n && s == KILN_OK; k++, g->i++) {
        int64_t ts = graph_gen_ts(g) + (int64_t)view_gen_below(&g->r, 1000);
        tr->n = k + 1;
        if (k == 0) {
            tr->depth[0] = 0;
            tr->type[0] = kd->types[0];
            tr->parent[0] = 0;
            tr->cand[tr->ncand++] = 0;
            s = graph_gen_node_line(g, tr, 0, ts, err);
            continue;
        }
        /* half the time one of the latest parents: chains grow deep */
        uint32_t recent = tr->ncand < 4 ? tr->ncand : 4;
        uint32_t par = view_gen_chance(&g->r, 500)
                           ? tr->cand[tr->ncand - 1 - view_gen_below(&g->r, recent)]
                           : tr->cand[view_gen_below(&g->r, tr->ncand)];
        int d = tr->depth[par] + 1;
        int leaf = d >= kd->max_depth || (d >= kd->leaf_from && view_gen_chance(&g->r, kd->leaf_pm));
        tr->depth[k] = (uint8_t)d;
        tr->type[k] = leaf ? kd->leaf : kd->types[d];
        tr->parent[k] = par;
        if (!leaf)
            tr->cand[tr->ncand++] = k;
        s = graph_gen_edge_line(g, tr, par, k, ts, err);
        /* a second parent at the first one's depth: the graph is a DAG */
        if (s == KILN_OK && d >= 2 && view_gen_chance(&g->r, 60)) {
            for (int tries = 0; tries < 8; tries++) {
                uint32_t q = tr->cand[view_gen_below(&g->r, tr->ncand)];
                if (q != par && q != k && tr->depth[q] == d - 1) {
                    s = graph_gen_edge_line(g, tr, q, k, ts + 1, err);
                    break;
                }
            }
        }
        /* an edge stated again later (last line wins), a node restated */
        if (s == KILN_OK && k >= 2 && view_gen_chance(&g->r, 4)) {
            uint32_t j = 1 + (uint32_t)view_gen_below(&g->r, k - 1);
            s = graph_gen_edge_line(g, tr, tr->parent[j], j, ts + 2, err);
        }
        if (s == KILN_OK && view_gen_chance(&g->r, 3))
            s = graph_gen_node_line(g, tr, (uint32_t)view_gen_below(&g->r, k + 1), ts + 3, err);
    }
    return s;
}

/* A forest of `rows` nodes, ids 1..rows in order: trees of 1 to
 * min(400, max(8, rows/10)) nodes (one in ten a lone node), each an org
 * chart, a product catalog or a folder tree; about 6% of the nodes at depth
 * >= 2 get a second parent; a few edges and node lines are stated again. */
static kiln_status
graph_generate(const view_gen_options *o, kiln_err *err)
{
    if (o->rows > UINT32_MAX)
        return status_set(err, KILN_INVALID, "graph: --rows at most %" PRIu32 " (u32 node ids)",
                          UINT32_MAX);
    uint64_t cap = o->rows / 10;
    cap = cap < 8 ? 8 : cap > GRAPH_TREE_MAX ? GRAPH_TREE_MAX : cap;
    graph_grow g;
    memset(&g, 0, sizeof g);
    g.o = o;
    view_gen_seed(&g.r, o->seed, 6);
    buf_init(&g.line);
    kiln_status s = view_gen_out_open(o->dir, "graph", o->files, o->rows, &g.out, err);
    if (s != KILN_OK) {
        buf_free(&g.line);
        return s;
    }
    graph_tree *tr = kiln_malloc(sizeof *tr);
    while (g.i < o->rows && s == KILN_OK) {
        uint64_t n = view_gen_chance(&g.r, 100) ? 1 : 2 + view_gen_below(&g.r, cap - 1);
        if (n > o->rows - g.i)
            n = o->rows - g.i;
        s = graph_gen_tree(&g, tr, (uint32_t)(g.i + 1), (uint32_t)n, err);
    }
    if (s == KILN_OK)
        s = view_gen_out_close(g.out, err);
    view_gen_out_free(g.out);
    buf_free(&g.line);
    free(tr);
    return s;
}

const view_gen_def graph_gen = {
    "graph",
    "nodes",
    "DIR/graph-NNNNN.tsv: parent_id TAB parent_type TAB child_id TAB child_type\n"
    "TAB ts_ms (edges) and node_id TAB node_type TAB ts_ms (roots, restated nodes)",
    graph_generate,
};
