/* resp_api.c -- Redis-protocol commands over the served views (resp_api.h).
 * A GET resolves the key to (table, row), reads the row through the views
 * (row cache first) restricted to the configured column when there is one,
 * and writes the value as a bulk string: one hash lookup and one copy on a
 * row-cache hit.
 */
#include "serving/resp_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "serving/resp.h"
#include "serving/resp_write.h"
#include "serving/slog.h"
#include "storage/hfile/cell.h"

struct resp_api {
    const resp_api_env *env;
    views_reader *reader;
    views_ctx *ctx;
    kbuf tmp;
    int server_error;   /* the command met an error of the server's (corruption, I/O) */
    kslice *ahead;      /* resp_api_look_ahead's parse, RESP_ARGS_MAX_DEFAULT arguments */
    views_entry *ahead_entry[RESP_API_AHEAD_KEYS];   /* the rows looked ahead at */
    kslice ahead_row[RESP_API_AHEAD_KEYS];
    size_t ahead_keys;
};

kiln_status
resp_api_add_column(resp_api_env *env, const char *spec, kiln_err *err)
{
    if (env->column_count == RESP_API_COLUMNS_MAX)
        return status_set(err, KILN_INVALID, "--resp-column: more than %d columns",
                          RESP_API_COLUMNS_MAX);
    resp_api_column *c = &env->columns[env->column_count];
    memset(c, 0, sizeof *c);
    const char *eq = strchr(spec, '=');
    const char *col = spec;
    if (eq != NULL) {
        char raw[SCHEMA_NAME_MAX + 1];
        size_t tl = (size_t)(eq - spec);
        if (tl == 0 || tl > SCHEMA_NAME_MAX)
            return status_set(err, KILN_INVALID, "--resp-column '%s': bad table name", spec);
        memcpy(raw, spec, tl);
        raw[tl] = '\0';
        kiln_err e2;
        status_clear(&e2);
        if (schema_name_canon(raw, c->table, &e2) != KILN_OK)
            return status_set(err, KILN_INVALID, "--resp-column '%s': %s", spec, e2.msg);
        col = eq + 1;
    }
    const char *colon = strchr(col, ':');
    size_t fl = colon ? (size_t)(colon - col) : 0;
    if (colon == NULL || fl == 0 || fl > SCHEMA_FAMILY_NAME_MAX || !schema_family_name_ok(col, fl))
        return status_set(err, KILN_INVALID,
                          "--resp-column '%s': expected [TABLE=]FAMILY:QUALIFIER", spec);
    memcpy(c->family, col, fl);
    c->family[fl] = '\0';
    kbuf q = KBUF_INIT;
    if (cell_from_string_binary(&q, colon + 1, strlen(colon + 1)) != 0) {
        buf_free(&q);
        return status_set(err, KILN_INVALID, "--resp-column '%s': bad \\xNN escape", spec);
    }
    c->qualifier = kiln_memdup(q.data, q.len);
    c->qualifier_len = q.len;
    buf_free(&q);
    env->column_count++;
    return KILN_OK;
}

void
resp_api_env_free(resp_api_env *env)
{
    for (size_t i = 0; i < env->column_count; i++)
        free(env->columns[i].qualifier);
    env->column_count = 0;
}

resp_api *
resp_api_new(const resp_api_env *env, views_reader *reader, views_ctx *ctx)
{
    resp_api *a = kiln_calloc(1, sizeof *a);
    a->env = env;
    a->reader = reader;
    a->ctx = ctx;
    a->ahead = kiln_calloc(RESP_ARGS_MAX_DEFAULT, sizeof *a->ahead);
    return a;
}

void
resp_api_free(resp_api *a)
{
    if (a == NULL)
        return;
    buf_free(&a->tmp);
    free(a->ahead);
    free(a);
}

/* The column configured for table e, or NULL for "the first cell". */
static const resp_api_column *
resp_api_column_for(const resp_api *a, views_entry *e)
{
    return resp_keys_column(a->env->columns, a->env->column_count, e);
}

static int
resp_api_resolve(resp_api *a, kslice key, int db, views_entry **e, kslice *row, const char **why)
{
    return resp_keys_resolve(a->reader, key, db, e, row, why);
}

/* Look the key up. *found = 1 with *value set when the column exists. */
static int
resp_api_lookup(resp_api *a, kslice key, int db, kslice *value, int *found, const char **why)
{
    views_entry *e;
    kslice row;
    *found = 0;
    if (resp_api_resolve(a, key, db, &e, &row, why) != 0)
        return -1;
    if (row.n == 0 || row.n > CELL_ROW_MAX)
        return 0;   /* no such row can exist */
    const resp_api_column *col = resp_api_column_for(a, e);
    store_row_opts o;
    store_row_opts_init(&o);
    store_column sc;
    if (col != NULL) {
        sc.family = col->family;
        sc.qualifier = col->qualifier ? col->qualifier : (const uint8_t *)"";
        sc.qualifier_len = col->qualifier_len;
        o.columns = &sc;
        o.column_count = 1;
    }
    store_row r;
    kiln_err err;
    status_clear(&err);
    if (views_get(e, a->ctx, row.p, row.n, &o, &r, &err) != KILN_OK) {
        /* As over HTTP: the log has the full text, the client paths
         * relative to the data directory. */
        char text[STATUS_MSG_MAX];
        const char *msg = err.msg;
        if (err.code != KILN_INVALID && err.code != KILN_NOT_FOUND) {
            slog_error("%s", err.msg[0] ? err.msg : status_name(err.code));
            views_client_text(a->env->views, err.msg, text, sizeof text);
            msg = text;
            a->server_error = 1;
            if (err.code == KILN_CORRUPTION)
                metrics_corruption(a->env->metrics, 1, views_entry_name(e));
        }
        buf_reset(&a->tmp);
        buf_append(&a->tmp, "ERR ", 4);
        buf_append(&a->tmp, msg, strlen(msg));
        buf_append_u8(&a->tmp, '\0');
        *why = (const char *)a->tmp.data;
        return -1;
    }
    if (r.count > 0) {
        *value = kslice_make(r.cells[0].value, r.cells[0].value_len);
        *found = 1;
    }
    return 0;
}

static void
resp_api_arity(kbuf *out, kslice cmd)
{
    char msg[128];
    snprintf(msg, sizeof msg, "ERR wrong number of arguments for '%.*s' command",
             (int)(cmd.n > 32 ? 32 : cmd.n), (const char *)cmd.p);
    for (char *p = strchr(msg, '\'') + 1; *p != '\0' && *p != '\''; p++) {
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p + 32);
    }
    resp_add_error(out, msg);
}

static void
resp_api_info(resp_api *a, const kslice *argv, size_t argc, kbuf *out)
{
    kbuf *b = &a->tmp;
    buf_reset(b);
    char line[512];
    int all = argc < 2 || resp_arg_is(argv[1], "all") || resp_arg_is(argv[1], "everything") ||
              resp_arg_is(argv[1], "default");
#define RESP_API_SECTION(name) (all || resp_arg_is(argv[1], name))
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    if (RESP_API_SECTION("server")) {
        struct utsname u;
        char os[200] = "unknown";
        if (uname(&u) == 0)
            snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
        int n = snprintf(line, sizeof line,
                         "# Server\r\nredis_version:7.0.0\r\nkiln_version:%s\r\n"
                         "redis_mode:standalone\r\nos:%s\r\nprocess_id:%d\r\n"
                         "tcp_listen:%s\r\nio_threads:%d\r\nuptime_in_seconds:%lld\r\n\r\n",
                         KILN_VERSION, os, (int)getpid(), a->env->listen, a->env->threads,
                         (long long)((now_ms - a->env->started_ms) / 1000));
        buf_append(b, line, (size_t)n);
    }
    if (RESP_API_SECTION("clients")) {
        int n = snprintf(line, sizeof line, "# Clients\r\nconnected_clients:%lld\r\n\r\n",
                         (long long)metrics_connections(a->env->metrics));
        buf_append(b, line, (size_t)n);
    }
    if (RESP_API_SECTION("stats")) {
        uint64_t total = 0;
        for (int r = METRICS_FIRST_RESP; r < ROUTE_COUNT_ALL; r++)
            total += metrics_requests(a->env->metrics, (metrics_route)r);
        int n = snprintf(line, sizeof line,
                         "# Stats\r\ntotal_commands_processed:%llu\r\nget_commands:%llu\r\n"
                         "mget_commands:%llu\r\n\r\n",
                         (unsigned long long)total,
                         (unsigned long long)metrics_requests(a->env->metrics, ROUTE_RESP_GET),
                         (unsigned long long)metrics_requests(a->env->metrics, ROUTE_RESP_MGET));
        buf_append(b, line, (size_t)n);
    }
    if (RESP_API_SECTION("keyspace")) {
        buf_append(b, "# Keyspace\r\n", 12);
        for (size_t i = 0; i < views_reader_count(a->reader); i++) {
            views_entry *e = views_reader_at(a->reader, i);
            const resp_api_column *c = resp_api_column_for(a, e);
            kbuf q = KBUF_INIT;
            if (c != NULL)
                cell_to_string_binary(&q, c->qualifier, c->qualifier_len);
            int n = snprintf(line, sizeof line, "db%zu:table=%s,version=%llu,column=%s%s%.*s\r\n",
                             i, views_entry_name(e), (unsigned long long)views_entry_version(e),
                             c ? c->family : "(first cell)", c ? ":" : "",
                             (int)(q.len > 200 ? 200 : q.len), q.data ? (char *)q.data : "");
            buf_free(&q);
            buf_append(b, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        }
        buf_append(b, "\r\n", 2);
    }
#undef RESP_API_SECTION
    resp_add_bulk(out, b->data, b->len);
}

static int
resp_api_is_write(kslice cmd)
{
    static const char *const writes[] = {
        "SET", "SETEX", "PSETEX", "SETNX", "MSET", "MSETNX", "DEL", "UNLINK", "INCR", "INCRBY",
        "DECR", "DECRBY", "APPEND", "EXPIRE", "PEXPIRE", "PERSIST", "GETSET", "GETDEL",
        "HSET", "HDEL", "LPUSH", "RPUSH", "SADD", "ZADD", "FLUSHALL", "FLUSHDB", "RENAME", NULL};
    for (size_t i = 0; writes[i] != NULL; i++) {
        if (resp_arg_is(cmd, writes[i]))
            return 1;
    }
    return 0;
}

/* The write and hash commands (resp_write.h). 1 if cmd was one. */
static int
resp_api_write(resp_api *a, const kslice *argv, size_t argc, int db, kbuf *out)
{
    resp_write_ctx c = {a->env->speed, a->env->read_only, a->env->columns, a->env->column_count,
                        a->reader, a->ctx, &a->tmp, 0};
    int done = resp_write_handle(&c, argv, argc, db, out);
    a->server_error |= c.server_error;
    return done;
}

static int
resp_api_db_number(kslice s, int *out)
{
    if (s.n == 0 || s.n > 6)
        return -1;
    int v = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (s.p[i] < '0' || s.p[i] > '9')
            return -1;
        v = v * 10 + (s.p[i] - '0');
    }
    *out = v;
    return 0;
}

metrics_route
resp_api_handle(resp_api *a, const kslice *argv, size_t argc, int *db, kbuf *out, int *close,
                int *status)
{
    kslice cmd = argv[0];
    size_t before = out->len;
    metrics_route route = ROUTE_RESP_OTHER;
    const char *why = NULL;
    a->server_error = 0;
    if (resp_arg_is(cmd, "GET")) {
        route = ROUTE_RESP_GET;
        if (argc != 2) {
            resp_api_arity(out, cmd);
        } else {
            kslice v;
            int found;
            if (resp_api_lookup(a, argv[1], *db, &v, &found, &why) != 0)
                resp_add_error(out, why);
            else if (found)
                resp_add_bulk(out, v.p, v.n);
            else
                resp_add_nil(out);
        }
    } else if (resp_arg_is(cmd, "MGET")) {
        route = ROUTE_RESP_MGET;
        if (argc < 2) {
            resp_api_arity(out, cmd);
        } else {
            resp_add_array(out, argc - 1);
            for (size_t i = 1; i < argc; i++) {
                kslice v;
                int found;
                if (resp_api_lookup(a, argv[i], *db, &v, &found, &why) != 0) {
                    out->len = before;
                    resp_add_error(out, why);
                    break;
                }
                if (found)
                    resp_add_bulk(out, v.p, v.n);
                else
                    resp_add_nil(out);
                size_t cap = a->env->max_reply_bytes;
                if (cap > 0 && out->len - before > cap) {
                    out->len = before;
                    char msg[160];
                    snprintf(msg, sizeof msg,
                             "ERR MGET answer larger than --max-reply-bytes (%zu): ask for fewer "
                             "keys at a time", cap);
                    resp_add_error(out, msg);
                    break;
                }
            }
        }
    } else if (resp_arg_is(cmd, "EXISTS")) {
        route = ROUTE_RESP_EXISTS;
        if (argc < 2) {
            resp_api_arity(out, cmd);
        } else {
            int64_t n = 0;
            for (size_t i = 1; i < argc && why == NULL; i++) {
                kslice v;
                int found;
                if (resp_api_lookup(a, argv[i], *db, &v, &found, &why) == 0)
                    n += found;
            }
            if (why != NULL)
                resp_add_error(out, why);
            else
                resp_add_int(out, n);
        }
    } else if (resp_arg_is(cmd, "PING")) {
        route = ROUTE_RESP_PING;
        if (argc == 1)
            resp_add_simple(out, "PONG");
        else if (argc == 2)
            resp_add_bulk(out, argv[1].p, argv[1].n);
        else
            resp_api_arity(out, cmd);
    } else if (resp_arg_is(cmd, "INFO")) {
        route = ROUTE_RESP_INFO;
        resp_api_info(a, argv, argc, out);
    } else if (resp_arg_is(cmd, "ECHO")) {
        if (argc != 2)
            resp_api_arity(out, cmd);
        else
            resp_add_bulk(out, argv[1].p, argv[1].n);
    } else if (resp_arg_is(cmd, "SELECT")) {
        int n;
        if (argc != 2)
            resp_api_arity(out, cmd);
        else if (resp_api_db_number(argv[1], &n) != 0)
            resp_add_error(out, "ERR value is not an integer or out of range");
        else if ((size_t)n >= views_reader_count(a->reader))
            resp_add_error(out, "ERR DB index is out of range (one database per table)");
        else {
            *db = n;
            resp_add_simple(out, "OK");
        }
    } else if (resp_arg_is(cmd, "QUIT")) {
        resp_add_simple(out, "OK");
        *close = 1;
    } else if (resp_arg_is(cmd, "CONFIG") && argc == 3 && resp_arg_is(argv[1], "GET")) {
        /* what redis-benchmark and other tools probe on connect */
        if (resp_arg_is(argv[2], "save") || resp_arg_is(argv[2], "appendonly")) {
            resp_add_array(out, 2);
            resp_add_bulk(out, argv[2].p, argv[2].n);
            if (resp_arg_is(argv[2], "save"))
                resp_add_bulk(out, "", 0);
            else
                resp_add_bulk(out, "no", 2);
        } else {
            resp_add_array(out, 0);
        }
    } else if (resp_arg_is(cmd, "COMMAND")) {
        resp_add_array(out, 0);
    } else if (resp_arg_is(cmd, "CLIENT")) {
        if (argc >= 2 && resp_arg_is(argv[1], "SETNAME"))
            resp_add_simple(out, "OK");
        else
            resp_add_error(out, "ERR unsupported CLIENT subcommand");
    } else if (resp_api_write(a, argv, argc, *db, out)) {
        route = ROUTE_RESP_WRITE;
    } else if (resp_api_is_write(cmd) && (a->env->speed == NULL || a->env->read_only)) {
        resp_add_error(out, "READONLY kiln serves read-only views; publish data with kiln load");
    } else if (resp_api_is_write(cmd)) {
        char msg[200];
        snprintf(msg, sizeof msg, "ERR kiln does not support '%.*s' (its writes: SET, DEL, INCR, "
                 "INCRBY, DECR, DECRBY, APPEND, HSET, HDEL)", (int)(cmd.n > 32 ? 32 : cmd.n),
                 (const char *)cmd.p);
        resp_add_error(out, msg);
    } else {
        char msg[160];
        snprintf(msg, sizeof msg, "ERR unknown command '%.*s'",
                 (int)(cmd.n > 64 ? 64 : cmd.n), (const char *)cmd.p);
        resp_add_error(out, msg);
    }
    *status = !(out->len > before && out->data[before] == '-') ? 200
              : a->server_error                               ? 500
                                                              : 400;
    return route;
}

size_t
resp_api_look_ahead(resp_api *a, const uint8_t *p, size_t n, int db, size_t max_bulk)
{
    size_t pos = 0;
    while (a->ahead_keys < RESP_API_AHEAD_KEYS && pos < n) {
        size_t argc, used;
        const char *why;
        resp_parse_result pr = resp_parse(p + pos, n - pos, a->ahead, RESP_ARGS_MAX_DEFAULT,
                                          max_bulk, &argc, &used, &why);
        if (pr != RESP_COMMAND && pr != RESP_EMPTY)
            break;
        pos += used;
        if (pr == RESP_EMPTY)
            continue;
        int get = resp_arg_is(a->ahead[0], "GET");
        if ((get && argc != 2) || (!get && !resp_arg_is(a->ahead[0], "MGET")))
            continue;
        for (size_t i = 1; i < argc && a->ahead_keys < RESP_API_AHEAD_KEYS; i++) {
            const char *unused;
            size_t k = a->ahead_keys;
            if (resp_api_resolve(a, a->ahead[i], db, &a->ahead_entry[k], &a->ahead_row[k],
                                 &unused) == 0)
                a->ahead_keys++;
        }
    }
    return pos;
}

int
resp_api_ahead_full(const resp_api *a)
{
    return a->ahead_keys == RESP_API_AHEAD_KEYS;
}

void
resp_api_prefetch(resp_api *a)
{
    for (int step = 0; step < 2; step++) {
        for (size_t i = 0; i < a->ahead_keys; i++)
            views_prefetch_row(a->ahead_entry[i], a->ahead_row[i].p, a->ahead_row[i].n, step);
    }
    a->ahead_keys = 0;
}
