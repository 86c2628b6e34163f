/* orders.c -- customers, their orders and the orders' lines joined on the
 * reduce side into one row per customer: the orders view job and its input
 * generator.
 *
 *   orders --customers PATH... --orders PATH... --lines PATH... --output DIR
 *          [--data DIR] [--table NAME]
 *
 * Inputs (tab-separated):
 *   customers  cust_id, name, email, city, since
 *   orders     order_id, cust_id, date, status
 *   lines      order_id, line_no, sku, qty, price_cents
 * (ids, line_no, qty and price u32; text fields without NUL.)
 *
 * Row key: the customer id, u32 big-endian (4 bytes). Cells, at the job's
 * time: c:city, c:email, c:name, c:since; and one o cell per order line,
 *
 *   QUALIFIER OFFSET | SIZE | FIELD
 *   0                | 4    | order id, u32 big-endian
 *   4                | 4    | line number, u32 big-endian
 *
 * valued date|status|sku|qty|price_cents, so one Get returns a customer with
 * every order, in order id and line order.
 *
 * The join: map keys every record by its customer; reduce sees the customer,
 * then each order followed by its lines (the value bytes order them: 00 for
 * the customer; 01 order 00 for an order; 01 order 01 line for a line) and
 * writes the row. A line names only its order, so setup reads the orders
 * input (on rank 0, broadcast to every rank) into a sorted order -> customer
 * table (24 bytes per order) that map uses to route lines. The last line in input order wins for
 * a repeated customer, order or order line. Counted and dropped: lines of an
 * unknown order, orders (and their lines) of an unknown customer; counted:
 * orders without lines (they get no cell).
 *
 * Queries: a customer with all orders: Get ROW (kiln get orders ROW;
 * GET /orders/ROW); one family: Get ROW o.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/index_output.h"
#include "jobs/jobs_args.h"
#include "jobs/view_common.h"
#include "jobs/view_gen.h"
#include "mapreduce/mr_input.h"
#include "mapreduce/mr_reader.h"
#include "storage/base/coding.h"

enum { ORDERS_CUSTOMERS, ORDERS_ORDERS, ORDERS_LINES, ORDERS_ROLES };

static const char *const orders_role_opt[ORDERS_ROLES] = {"--customers", "--orders", "--lines"};
static const size_t orders_role_fields[ORDERS_ROLES] = {5, 4, 5};

#define ORDERS_FIELDS_MAX 5
#define ORDERS_TAG_CUSTOMER 0x00
#define ORDERS_TAG_ORDER 0x01
#define ORDERS_KIND_ORDER 0x00
#define ORDERS_KIND_LINE 0x01

typedef struct orders_route {
    uint32_t order;
    uint32_t cust;
    uint32_t file;                /* the order line's position */
    uint64_t offset;
} orders_route;

typedef struct orders_state {
    view *v;
    size_t table;
    char **paths;                 /* given paths, in order, with their roles */
    int *path_role;
    size_t npaths;
    int *file_role;               /* by the job's input file index */
    size_t nfiles;
    orders_route *routes;         /* sorted by order id, one per order */
    size_t nroutes;
    int64_t ts;
    int c_lost_lines;
    int c_lost_orders;
    int c_empty_orders;
    kbuf row;
    kbuf cust;
    kbuf order;
    kbuf line;
    kbuf value;
} orders_state;

static void
orders_state_free(void *p)
{
    orders_state *st = p;
    if (st == NULL)
        return;
    view_free(st->v);
    for (size_t i = 0; i < st->npaths; i++)
        free(st->paths[i]);
    free(st->paths);
    free(st->path_role);
    free(st->file_role);
    free(st->routes);
    buf_free(&st->row);
    buf_free(&st->cust);
    buf_free(&st->order);
    buf_free(&st->line);
    buf_free(&st->value);
    free(st);
}

/* ------------------------------------------------------------------ parsing */

/* Split and check a line of role r: NULL when good, else the reason. ids[0]
 * and ids[1] get the first two numeric fields (customer: ids[0] only). */
static const char *
orders_parse(int r, kslice line, kslice *f, uint32_t ids[2], char *why, size_t cap)
{
    size_t nf = view_split(line, '\t', f, ORDERS_FIELDS_MAX);
    if (nf != orders_role_fields[r]) {
        snprintf(why, cap, "%zu fields, expected %zu", nf, orders_role_fields[r]);
        return why;
    }
    if (view_parse_u32(f[0], &ids[0]) != 0)
        return r == ORDERS_CUSTOMERS ? "customer id is not a u32" : "order id is not a u32";
    for (size_t i = 1; i < nf; i++)
        if (!view_text_ok(f[i]))
            return "NUL byte or over-long field";
    uint32_t x;
    switch (r) {
    case ORDERS_CUSTOMERS:
        if (f[1].n == 0)
            return "empty name";
        return NULL;
    case ORDERS_ORDERS:
        if (view_parse_u32(f[1], &ids[1]) != 0)
            return "customer id is not a u32";
        if (f[2].n == 0 || f[3].n == 0)
            return "empty date or status";
        return NULL;
    default:
        if (view_parse_u32(f[1], &ids[1]) != 0)
            return "line number is not a u32";
        if (f[2].n == 0)
            return "empty sku";
        if (view_parse_u32(f[3], &x) != 0 || view_parse_u32(f[4], &x) != 0)
            return "quantity or price is not a u32";
        return NULL;
    }
}

/* ------------------------------------------------------------------ routing */

static int
orders_cmp_route(const void *a, const void *b)
{
    const orders_route *x = a, *y = b;
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* List the inputs as the engine will (same paths, same order), note each
 * file's role, and read the orders files into the routing table. */
static kiln_status
orders_read_routes(orders_state *st, kiln_err *err)
{
    mr_input in;
    memset(&in, 0, sizeof in);
    kiln_status s = KILN_OK;
    for (size_t i = 0; i < st->npaths && s == KILN_OK; i++) {
        size_t before = in.n;
        const char *p = st->paths[i];
        s = mr_input_list(&in, &p, 1, err);
        if (s != KILN_OK)
            break;
        st->file_role = kiln_realloc(st->file_role, (in.n ? in.n : 1) * sizeof *st->file_role);
        for (size_t k = before; k < in.n; k++) {
            for (size_t j = 0; j < before; j++)
                if (strcmp(in.files[j].path, in.files[k].path) == 0 && s == KILN_OK)
                    s = status_set(err, KILN_INVALID, "orders: %s is given twice",
                                   in.files[k].path);
            st->file_role[k] = st->path_role[i];
        }
    }
    st->nfiles = in.n;
    size_t cap = 0;
    kslice f[ORDERS_FIELDS_MAX];
    char why[64];
    for (size_t k = 0; k < in.n && s == KILN_OK; k++) {
        if (st->file_role[k] != ORDERS_ORDERS)
            continue;
        mr_split sp = {(uint32_t)k, 0, in.files[k].size};
        mr_reader *r;
        s = mr_reader_open(&in.files[k], &sp, 0, &r, err);
        if (s != KILN_OK)
            break;
        kslice line;
        uint64_t off;
        int got;
        while ((got = mr_reader_next(r, &line, &off, err)) == 1) {
            uint32_t ids[2];
            if (orders_parse(ORDERS_ORDERS, line, f, ids, why, sizeof why) != NULL)
                continue;
            if (st->nroutes == cap) {
                cap = cap ? cap * 2 : 1024;
                st->routes = kiln_realloc(st->routes, cap * sizeof *st->routes);
            }
            st->routes[st->nroutes++] = (orders_route){ids[0], ids[1], (uint32_t)k, off};
        }
        mr_reader_close(r);
        if (got < 0)
            s = err->code != KILN_OK ? err->code : KILN_IO;
    }
    mr_input_free(&in);
    if (s != KILN_OK)
        return s;
    if (st->nroutes > 1)
        qsort(st->routes, st->nroutes, sizeof *st->routes, orders_cmp_route);
    /* keep the last line of each order id */
    size_t n = 0;
    for (size_t i = 0; i < st->nroutes; i++) {
        if (n > 0 && st->routes[n - 1].order == st->routes[i].order)
            n--;
        st->routes[n++] = st->routes[i];
    }
    st->nroutes = n;
    return KILN_OK;
}

/* Rank 0 reads the routes; every rank gets them (mr_job_shared) as the
 * file roles then the routes, in this program's own layout (every host
 * runs the same build: mr_cluster.c checks it). */
static kiln_status
orders_produce_routes(void *arg, kbuf *out, kiln_err *err)
{
    orders_state *st = arg;
    kiln_status s = orders_read_routes(st, err);
    if (s != KILN_OK)
        return s;
    buf_append_be64(out, st->nfiles);
    buf_append(out, st->file_role, st->nfiles * sizeof *st->file_role);
    buf_append_be64(out, st->nroutes);
    buf_append(out, st->routes, st->nroutes * sizeof *st->routes);
    return KILN_OK;
}

static kiln_status
orders_share_routes(orders_state *st, mr_job *job, kiln_err *err)
{
    kbuf got = KBUF_INIT;
    kiln_status s = mr_job_shared(job, "orders routes", orders_produce_routes, st, &got, err);
    if (s == KILN_OK && mr_job_rank(job) != 0) {
        const uint8_t *p = got.data;
        st->nfiles = (size_t)coding_get_be64(p);
        p += 8;
        st->file_role = kiln_realloc(st->file_role, (st->nfiles ? st->nfiles : 1) *
                                                        sizeof *st->file_role);
        memcpy(st->file_role, p, st->nfiles * sizeof *st->file_role);
        p += st->nfiles * sizeof *st->file_role;
        st->nroutes = (size_t)coding_get_be64(p);
        p += 8;
        st->routes = kiln_realloc(st->routes, (st->nroutes ? st->nroutes : 1) * sizeof *st->routes);
        memcpy(st->routes, p, st->nroutes * sizeof *st->routes);
    }
    buf_free(&got);
    return s;
}

static const orders_route *
orders_route_find(const orders_state *st, uint32_t order)
{
    size_t lo = 0, hi = st->nroutes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->routes[mid].order < order)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < st->nroutes && st->routes[lo].order == order ? &st->routes[lo] : NULL;
}

/* ------------------------------------------------------------------ map */

static kiln_status
orders_map(mr_task *t, kslice line, kiln_err *err)
{
    orders_state *st = mr_task_state(t);
    uint32_t fi = mr_task_input_file(t);
    if (fi >= st->nfiles)
        return status_set(err, KILN_INTERNAL, "orders: input file %" PRIu32 " was not listed", fi);
    int role = st->file_role[fi];
    kslice f[ORDERS_FIELDS_MAX];
    uint32_t ids[2];
    char why[64];
    const char *bad = orders_parse(role, line, f, ids, why, sizeof why);
    if (bad != NULL)
        return view_bad(st->v, t, bad, err);
    uint8_t pos[VIEW_POS];
    view_pos(t, pos);
    uint8_t head[10 + VIEW_POS];
    size_t hn;
    uint32_t cust;
    kslice rest = kslice_make(f[1].p, line.n - (size_t)(f[1].p - line.p));
    if (role == ORDERS_CUSTOMERS) {
        cust = ids[0];
        head[0] = ORDERS_TAG_CUSTOMER;
        memcpy(head + 1, pos, VIEW_POS);
        hn = 1 + VIEW_POS;
    } else {
        const orders_route *r = orders_route_find(st, ids[0]);
        if (r == NULL) {
            if (role == ORDERS_LINES)
                mr_task_count(t, st->c_lost_lines, 1);
            return KILN_OK;
        }
        if (role == ORDERS_ORDERS && (r->file != fi || r->offset != mr_task_input_offset(t))) {
            view_count_dups(st->v, t, 1);   /* a later line of this order wins */
            return KILN_OK;
        }
        cust = r->cust;
        head[0] = ORDERS_TAG_ORDER;
        coding_put_be32(head + 1, ids[0]);
        if (role == ORDERS_ORDERS) {
            head[5] = ORDERS_KIND_ORDER;
            memcpy(head + 6, pos, VIEW_POS);
            hn = 6 + VIEW_POS;
            rest = kslice_make(f[2].p, line.n - (size_t)(f[2].p - line.p));
        } else {
            head[5] = ORDERS_KIND_LINE;
            coding_put_be32(head + 6, ids[1]);
            memcpy(head + 10, pos, VIEW_POS);
            hn = 10 + VIEW_POS;
            rest = kslice_make(f[2].p, line.n - (size_t)(f[2].p - line.p));
        }
    }
    uint8_t row[4];
    coding_put_be32(row, cust);
    return view_emit(st->v, t, st->table, kslice_make(row, 4), kslice_make(head, hn), rest, err);
}

/* ------------------------------------------------------------------ reduce */

/* Append text with its tabs written '|'. */
static void
orders_append_piped(kbuf *b, const uint8_t *p, size_t n)
{
    size_t from = b->len;
    buf_append(b, p, n);
    for (size_t i = from; i < b->len; i++)
        if (b->data[i] == '\t')
            b->data[i] = '|';
}

static kiln_status
orders_put_customer(orders_state *st, mr_task *t, kslice row, kiln_err *err)
{
    kslice f[4];
    if (view_split(buf_slice(&st->cust), '\t', f, 4) != 4)
        return status_set(err, KILN_CORRUPTION, "orders: a customer value without 4 fields");
    /* name, email, city, since -> qualifiers in order: city, email, name, since */
    static const int order[4] = {2, 1, 0, 3};
    static const char *const names[4] = {"city", "email", "name", "since"};
    for (int i = 0; i < 4; i++) {
        kiln_status s = view_put(st->v, t, st->table, row, "c", kslice_str(names[i]), st->ts,
                                 f[order[i]], err);
        if (s != KILN_OK)
            return s;
    }
    return KILN_OK;
}

/* The pending order line: one o cell. */
static kiln_status
orders_put_line(orders_state *st, mr_task *t, kslice row, uint32_t order, uint32_t line_no,
                kiln_err *err)
{
    uint8_t q[8];
    coding_put_be32(q, order);
    coding_put_be32(q + 4, line_no);
    buf_reset(&st->value);
    orders_append_piped(&st->value, st->order.data, st->order.len);
    buf_append_u8(&st->value, '|');
    orders_append_piped(&st->value, st->line.data, st->line.len);
    return view_put(st->v, t, st->table, row, "o", kslice_make(q, 8), st->ts,
                    buf_slice(&st->value), err);
}

static kiln_status
orders_reduce(mr_task *t, kslice key, mr_values *values, kiln_err *err)
{
    orders_state *st = mr_task_state(t);
    size_t table;
    kiln_status s = view_group(st->v, key, &table, &st->row, err);
    if (s != KILN_OK)
        return s;
    if (st->row.len != 4)
        return status_set(err, KILN_CORRUPTION, "orders: a row of %zu bytes", st->row.len);
    kslice row = buf_slice(&st->row);
    uint64_t ncust = 0, lines_of_order = 0;
    int started = 0, orphan = 0, have_order = 0, have_line = 0;
    uint32_t order = 0, line_no = 0;
    kslice v;
    while (s == KILN_OK && mr_task_next_value(values, &v)) {
        if (v.n >= 1 + VIEW_POS && v.p[0] == ORDERS_TAG_CUSTOMER) {
            buf_reset(&st->cust);
            buf_append(&st->cust, v.p + 1 + VIEW_POS, v.n - 1 - VIEW_POS);
            ncust++;
            continue;
        }
        if (v.n < 6 + VIEW_POS || v.p[0] != ORDERS_TAG_ORDER)
            return status_set(err, KILN_CORRUPTION, "orders: a map value of %zu bytes", v.n);
        if (!started) {
            started = 1;
            orphan = ncust == 0;
            if (!orphan)
                s = orders_put_customer(st, t, row, err);
        }
        uint32_t id = coding_get_be32(v.p + 1);
        if (v.p[5] == ORDERS_KIND_ORDER) {
            if (orphan) {
                mr_task_count(t, st->c_lost_orders, 1);
                continue;
            }
            if (have_line)
                s = orders_put_line(st, t, row, order, line_no, err);
            if (have_order && lines_of_order == 0)
                mr_task_count(t, st->c_empty_orders, 1);
            have_line = 0;
            have_order = 1;
            order = id;
            lines_of_order = 0;
            buf_reset(&st->order);
            buf_append(&st->order, v.p + 6 + VIEW_POS, v.n - 6 - VIEW_POS);
            continue;
        }
        if (v.p[5] != ORDERS_KIND_LINE || v.n < 10 + VIEW_POS)
            return status_set(err, KILN_CORRUPTION, "orders: a line value of %zu bytes", v.n);
        if (orphan)
            continue;
        if (!have_order || id != order)
            return status_set(err, KILN_CORRUPTION, "orders: order %" PRIu32 "'s lines came "
                              "without the order", id);
        uint32_t no = coding_get_be32(v.p + 6);
        if (have_line && no == line_no) {
            view_count_dups(st->v, t, 1);
        } else {
            if (have_line)
                s = orders_put_line(st, t, row, order, line_no, err);
            have_line = 1;
            line_no = no;
            lines_of_order++;
        }
        buf_reset(&st->line);
        buf_append(&st->line, v.p + 10 + VIEW_POS, v.n - 10 - VIEW_POS);
    }
    if (s != KILN_OK)
        return s;
    if (ncust > 1)
        view_count_dups(st->v, t, ncust - 1);
    if (!started)
        return orders_put_customer(st, t, row, err);   /* a customer without orders */
    if (have_line)
        s = orders_put_line(st, t, row, order, line_no, err);
    if (have_order && lines_of_order == 0)
        mr_task_count(t, st->c_empty_orders, 1);
    return s;
}

/* ------------------------------------------------------------------ setup */

static kiln_status
orders_setup(mr_job *job, int argc, char **argv, kiln_err *err)
{
    orders_state *st = kiln_calloc(1, sizeof *st);
    mr_job_set_state(job, st, orders_state_free);
    st->v = view_new(job, "orders");
    const char *table = "orders";
    int given[ORDERS_ROLES] = {0, 0, 0};
    kiln_status s = KILN_OK;
    for (int i = 1; i < argc && s == KILN_OK; i++) {
        int role = -1;
        for (int r = 0; r < ORDERS_ROLES; r++)
            if (strcmp(argv[i], orders_role_opt[r]) == 0)
                role = r;
        if (role >= 0) {
            const char *opt = argv[i];
            while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
                const char *p = argv[++i];
                st->paths = kiln_realloc(st->paths, (st->npaths + 1) * sizeof *st->paths);
                st->path_role = kiln_realloc(st->path_role, (st->npaths + 1) * sizeof *st->path_role);
                st->paths[st->npaths] = (char *)kiln_memdup(p, strlen(p) + 1);
                st->path_role[st->npaths++] = role;
                view_add_input(st->v, p);
                given[role]++;
            }
            if (given[role] == 0)
                s = status_set(err, KILN_INVALID, "%s needs at least one path", opt);
            continue;
        }
        if (strcmp(argv[i], "--input") == 0)
            s = status_set(err, KILN_INVALID, "orders: give the inputs as --customers, --orders "
                           "and --lines, not --input");
        else if (view_common_arg(st->v, argc, argv, &i, &s, err))
            continue;
        else if (strcmp(argv[i], "--table") == 0)
            s = jobs_take_value(argc, argv, &i, &table, err);
        else
            s = status_set(err, KILN_INVALID, "orders: unknown argument '%s'", argv[i]);
    }
    for (int r = 0; r < ORDERS_ROLES && s == KILN_OK; r++)
        if (given[r] == 0)
            s = status_set(err, KILN_INVALID, "orders: %s PATH... is required", orders_role_opt[r]);
    /* The o cells are joined in reduce, where no index row can be made (an
     * index would miss them), so the job takes no indexes; salting it does. */
    const char *ix = mr_conf_get(mr_job_conf(job), INDEX_OUTPUT_CONF, NULL);
    if (s == KILN_OK && ix != NULL && *ix != '\0')
        s = status_set(err, KILN_INVALID, "orders: %s is not supported (rows are joined in "
                       "reduce)", INDEX_OUTPUT_CONF);
    if (s == KILN_OK)
        s = view_add_table(st->v, NULL, table, "c,o", &st->table, err);
    if (s == KILN_OK)
        s = view_setup(st->v, err);
    if (s == KILN_OK)
        s = orders_share_routes(st, job, err);
    if (s != KILN_OK)
        return s;
    st->ts = mr_job_time_ms(job);
    st->c_lost_lines = mr_job_counter(job, "orders", "Lines without an order (dropped)");
    st->c_lost_orders = mr_job_counter(job, "orders", "Orders without a customer (dropped)");
    st->c_empty_orders = mr_job_counter(job, "orders", "Orders without lines");
    mr_job_set_map(job, orders_map);
    mr_job_set_reduce(job, orders_reduce);
    return KILN_OK;
}

const mr_job_def orders_job = {
    "orders",
    "customers, orders and order lines joined into one row per customer",
    "Usage: kiln-mr orders --customers PATH... --orders PATH... --lines PATH...\n"
    "                      --output DIR [--data DIR] [--table NAME]\n"
    "\n"
    "Joins three tab-separated inputs on the reduce side,\n"
    "  customers  cust_id, name, email, city, since\n"
    "  orders     order_id, cust_id, date, status\n"
    "  lines      order_id, line_no, sku, qty, price_cents\n"
    "into one row per customer (row key: cust_id u32 BE) with c:city, c:email,\n"
    "c:name, c:since and one o cell per order line: qualifier order_id u32 BE\n"
    "then line_no u32 BE, value date|status|sku|qty|price_cents. HFiles go to\n"
    "DIR/c and DIR/o for `kiln load NAME DIR`.\n"
    "\n"
    "  --table NAME   the table (default orders). When it exists in the data\n"
    "                 directory (--data DIR, else $KILN_DATA, else ./kiln-data)\n"
    "                 its regions and family settings are used.\n"
    "\n"
    "Every rank reads the orders input once more to route lines to customers\n"
    "(24 bytes of memory per order). The last line wins for a repeated\n"
    "customer, order or line; lines of unknown orders and orders of unknown\n"
    "customers are counted and dropped.\n"
    "Settings: -D orders.skip.bad.lines=false fails on the first bad line.\n",
    orders_setup,
};

/* ------------------------------------------------------------------ generator */

static const char *const orders_first[] = {
    "Ada", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kira",
    "Liam", "Maya", "Noah", "Olga", "Pablo", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera",
    "Wen", "Ximena", "Yuki", "Zoe",
};
static const char *const orders_last[] = {
    "Abbott", "Berg", "Castro", "Dubois", "Engel", "Fischer", "Garcia", "Haddad", "Ivanova",
    "Jensen", "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quist",
    "Rossi", "Schmidt", "Tanaka", "Umarov", "Varga", "Weber", "Xu", "Yilmaz", "Zimmer",
};
static const char *const orders_cities[] = {
    "Lisbon", "Oslo", "Austin", "Osaka", "Lyon", "Leeds", "Porto", "Denver", "Krakow",
    "Seattle", "Gdansk", "Bergen", "Toronto", "Malmo", "Zurich", "Valencia",
};
static const char *const orders_status[] = {
    "delivered", "delivered", "delivered", "delivered", "shipped", "shipped", "processing",
    "cancelled", "returned",
};

static void
orders_lower(kbuf *b, const char *s)
{
    for (; *s; s++)
        buf_append_u8(b, (uint8_t)(*s >= 'A' && *s <= 'Z' ? *s + 32 : *s));
}

static kiln_status
orders_gen_customers(const view_gen_options *o, const char *dir, kiln_err *err)
{
    view_gen_rng r;
    view_gen_seed(&r, o->seed, 31);
    view_gen_out *out;
    kiln_status s = view_gen_out_open(dir, "customers", o->files, o->rows, &out, err);
    kbuf line = KBUF_INIT;
    for (uint64_t i = 0; i < o->rows && s == KILN_OK; i++) {
        int copies = view_gen_chance(&r, 2) ? 2 : 1;   /* a moved customer: the later line wins */
        const char *first = view_gen_pick(&r, orders_first, sizeof orders_first / sizeof *orders_first);
        const char *last = view_gen_pick(&r, orders_last, sizeof orders_last / sizeof *orders_last);
        char since[11];
        view_gen_date(1420070400000LL + (int64_t)view_gen_below(&r, 3400) * 86400000, since);
        for (int c = 0; c < copies && s == KILN_OK; c++) {
            buf_reset(&line);
            view_gen_printf(&line, "%" PRIu64 "\t%s %s\t", i + 1, first, last);
            orders_lower(&line, first);
            buf_append_u8(&line, '.');
            orders_lower(&line, last);
            view_gen_printf(&line, "%" PRIu64 "@example.com\t%s\t%s", i + 1,
                            view_gen_pick(&r, orders_cities, sizeof orders_cities / sizeof *orders_cities),
                            since);
            s = view_gen_out_line(out, i, o, &r, &line, err);
        }
    }
    if (s == KILN_OK)
        s = view_gen_out_close(out, err);
    view_gen_out_free(out);
    buf_free(&line);
    return s;
}

/* Orders 1..3*rows in date order, each of a customer drawn with skew (some
 * have many orders, some none); 3 in 1000 name a customer that does not
 * exist, 2 in 1000 are followed by a correction of their status; lines: 1-5
 * per order (5 in 1000 orders none), 2 in 1000 lines name an order that
 * does not exist. */
static kiln_status
orders_gen_orders(const view_gen_options *o, const char *odir, const char *ldir, kiln_err *err)
{
    uint64_t norders = o->rows * 3;
    view_gen_rng r, rl;
    view_gen_seed(&r, o->seed, 32);
    view_gen_seed(&rl, o->seed, 33);
    view_gen_out *out = NULL, *lout = NULL;
    kiln_status s = view_gen_out_open(odir, "orders", o->files, norders, &out, err);
    if (s == KILN_OK)
        s = view_gen_out_open(ldir, "lines", o->files, norders, &lout, err);
    kbuf line = KBUF_INIT;
    const int64_t base = 1672531200000LL, span = 2LL * 365 * 86400000;
    for (uint64_t i = 0; i < norders && s == KILN_OK; i++) {
        uint64_t cust = view_gen_chance(&r, 3) ? o->rows + 1 + view_gen_below(&r, 1000)
                                               : 1 + view_gen_skewed(&r, o->rows, 2);
        char date[11];
        view_gen_date(base + (int64_t)(i * (uint64_t)span / norders), date);
        int copies = view_gen_chance(&r, 2) ? 2 : 1;
        for (int c = 0; c < copies && s == KILN_OK; c++) {
            buf_reset(&line);
            view_gen_printf(&line, "%" PRIu64 "\t%" PRIu64 "\t%s\t%s", i + 1, cust, date,
                            view_gen_pick(&r, orders_status,
                                          sizeof orders_status / sizeof *orders_status));
            s = view_gen_out_line(out, i, o, &r, &line, err);
        }
        uint64_t nlines = view_gen_chance(&rl, 5) ? 0 : 1 + view_gen_skewed(&rl, 5, 2);
        for (uint64_t k = 1; k <= nlines && s == KILN_OK; k++) {
            uint64_t id = view_gen_chance(&rl, 2) ? norders + 1 + view_gen_below(&rl, 1000) : i + 1;
            buf_reset(&line);
            view_gen_printf(&line, "%" PRIu64 "\t%" PRIu64 "\tSKU-%05" PRIu64 "\t%u\t%" PRIu64, id,
                            k, 1 + view_gen_skewed(&rl, 20000, 2),
                            1 + (unsigned)view_gen_skewed(&rl, 4, 2), 99 + view_gen_below(&rl, 20000));
            s = view_gen_out_line(lout, i, o, &rl, &line, err);
        }
    }
    if (s == KILN_OK)
        s = view_gen_out_close(out, err);
    if (s == KILN_OK)
        s = view_gen_out_close(lout, err);
    view_gen_out_free(out);
    view_gen_out_free(lout);
    buf_free(&line);
    return s;
}

static kiln_status
orders_generate(const view_gen_options *o, kiln_err *err)
{
    char c[4096], od[4096], l[4096];
    if (snprintf(c, sizeof c, "%s/customers", o->dir) >= (int)sizeof c ||
        snprintf(od, sizeof od, "%s/orders", o->dir) >= (int)sizeof od ||
        snprintf(l, sizeof l, "%s/lines", o->dir) >= (int)sizeof l)
        return status_set(err, KILN_INVALID, "%s: path too long", o->dir);
    kiln_status s = orders_gen_customers(o, c, err);
    if (s == KILN_OK)
        s = orders_gen_orders(o, od, l, err);
    return s;
}

const view_gen_def orders_gen = {
    "orders",
    "customers",
    "DIR/customers/customers-NNNNN.tsv: cust_id TAB name TAB email TAB city TAB since\n"
    "DIR/orders/orders-NNNNN.tsv:       order_id TAB cust_id TAB date TAB status\n"
    "DIR/lines/lines-NNNNN.tsv:         order_id TAB line_no TAB sku TAB qty TAB price_cents",
    orders_generate,
};
