/* test_swap.c -- hot swaps under load through the server: client threads
 * hammer Gets, scans across a region boundary, multigets (HTTP) and MGETs
 * (Redis protocol) over keep-alive connections while the main thread
 * publishes new versions of the table and rolls back in a loop, as `kiln
 * load` and `kiln rollback` in another process would. Every version's rows
 * hold one tag; a response must come from exactly one version (one tag, the
 * tag of the version its X-Kiln-Version names), no request may fail, each
 * new version must be served within a bounded time, and old versions must
 * be released (their files closed) once no request uses them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "serving/server.h"
#include "serving/slog.h"
#include "serving/views.h"
#include "storage/base/env.h"
#include "storage/store/table.h"
#include "storage/query/json.h"
#include "tests/serving/serving_fixture.h"

#define ROWS 2000
#define CLIENTS 4
#define ITERATIONS 14
#define MAX_VERSION 256
#define VISIBLE_LIMIT_S 5.0

static char data_dir[512];
static server *srv;
static int http_port, resp_port;
static atomic_int stop_flag;
static _Atomic int version_tag[MAX_VERSION];   /* recorded by the publisher */

typedef struct client_stats {
    long requests, errors, mixed;
    int seen_tag[MAX_VERSION];                 /* tag seen per version, 0 = none */
    char first_error[256];
} client_stats;

static void
note_error(client_stats *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
note_error(client_stats *st, const char *fmt, ...)
{
    if (st->errors++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(st->first_error, sizeof st->first_error, fmt, ap);
        va_end(ap);
    }
}

static void
publish(int tag)
{
    fx_cells cs = {0};
    char row[16], val[32];
    for (int i = 0; i < ROWS; i++) {
        int rn = snprintf(row, sizeof row, "r%04d", i);
        int vn = snprintf(val, sizeof val, "%d-%d", tag, i);
        fx_add(&cs, row, (size_t)rn, "f", "q", 1, 1, val, (size_t)vn);
    }
    uint64_t v = fx_publish(data_dir, "hot", &cs);
    fx_cells_free(&cs);
    assert_true(v < MAX_VERSION);
    atomic_store(&version_tag[v], tag);
}

/* Tag of a value "<tag>-<i>". */
static int
tag_of(const uint8_t *p, size_t n)
{
    int t = 0;
    for (size_t i = 0; i < n && p[i] != '-'; i++)
        t = t * 10 + (p[i] - '0');
    return t;
}

/* Tags of every cell of a CellSet body; -1 if they differ, -2 if malformed.
 * *rows gets the row count. */
static int
body_tag(const fx_resp *r, size_t *rows)
{
    json_doc *d;
    kiln_err err;
    status_clear(&err);
    if (json_parse((const char *)r->body.data, r->body.len, &d, &err) != KILN_OK)
        return -2;
    const json_node *rs = json_get(json_root(d), "Row");
    *rows = json_len(rs);
    int tag = 0;
    kbuf v = KBUF_INIT;
    for (size_t i = 0; i < json_len(rs) && tag >= 0; i++) {
        const json_node *cells = json_get(json_at(rs, i), "Cell");
        for (size_t k = 0; k < json_len(cells); k++) {
            size_t n;
            const char *s = json_str(json_get(json_at(cells, k), "$"), &n);
            buf_reset(&v);
            if (s == NULL || json_b64_decode(s, n, &v) != 0) {
                tag = -2;
                break;
            }
            int t = tag_of(v.data, v.len);
            if (tag == 0)
                tag = t;
            else if (t != tag)
                tag = -1;
        }
    }
    buf_free(&v);
    json_doc_free(d);
    return tag;
}

static void
check_version(client_stats *st, const fx_resp *r, int tag, const char *what)
{
    if (!r->h.has_version || r->h.version >= MAX_VERSION) {
        note_error(st, "%s: no usable X-Kiln-Version", what);
        return;
    }
    int *seen = &st->seen_tag[r->h.version];
    if (*seen == 0)
        *seen = tag;
    else if (*seen != tag)
        st->mixed++;
}

/* One request on the client's keep-alive connection (reopened if the
 * server closed it). Returns 0 with the response, -1 on a transport error. */
static int
roundtrip(fx_conn *c, int port, const char *target, fx_resp *r)
{
    char req[512];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: swap\r\n\r\n", target);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (c->fd < 0) {
            c->fd = fx_connect(port);
            buf_reset(&c->in);
        }
        fx_send(c->fd, req, strlen(req));
        if (fx_read_response(c, r, 0) == 0) {
            if (r->h.close) {
                close(c->fd);
                c->fd = -1;
            }
            return 0;
        }
        close(c->fd);
        c->fd = -1;
    }
    return -1;
}

static void *
http_reader(void *arg)
{
    client_stats *st = arg;
    unsigned seed = (unsigned)(uintptr_t)arg;
    fx_conn c = {-1, KBUF_INIT};
    fx_resp r = {0};
    char target[256];
    while (!atomic_load(&stop_flag)) {
        int kind = (int)(rand_r(&seed) % 3);
        int i = (int)(rand_r(&seed) % ROWS);
        size_t want_rows = 1;
        if (kind == 0) {
            snprintf(target, sizeof target, "/hot/r%04d", i);
        } else if (kind == 1) {
            /* 30 rows across the boundary at r0500 or r1500 */
            snprintf(target, sizeof target, "/hot/*?startrow=r%04d&limit=30",
                     rand_r(&seed) % 2 ? 480 : 1480);
            want_rows = 30;
        } else {
            snprintf(target, sizeof target,
                     "/hot/multiget?row=r%04d&row=r%04d&row=r%04d", i % 500, 500 + i % 500,
                     1500 + i % 500);
            want_rows = 3;
        }
        st->requests++;
        if (roundtrip(&c, http_port, target, &r) != 0) {
            note_error(st, "%s: connection failed", target);
            continue;
        }
        if (r.h.status != 200) {
            note_error(st, "%s: status %d: %.*s", target, r.h.status, (int)r.body.len,
                       r.body.data);
            continue;
        }
        size_t rows = 0;
        int tag = body_tag(&r, &rows);
        if (tag == -2 || rows != want_rows) {
            note_error(st, "%s: %zu rows (want %zu), tag %d", target, rows, want_rows, tag);
            continue;
        }
        if (tag == -1) {
            st->mixed++;
            continue;
        }
        check_version(st, &r, tag, target);
    }
    if (c.fd >= 0)
        close(c.fd);
    buf_free(&c.in);
    fx_resp_free(&r);
    return NULL;
}

/* MGET of three keys in three regions: one tag in all three values. */
static void *
resp_reader(void *arg)
{
    client_stats *st = arg;
    unsigned seed = (unsigned)(uintptr_t)arg;
    int fd = fx_connect(resp_port);
    kbuf in = KBUF_INIT;
    while (!atomic_load(&stop_flag)) {
        int i = (int)(rand_r(&seed) % 500);
        char cmd[160];
        int n = snprintf(cmd, sizeof cmd,
                         "*4\r\n$4\r\nMGET\r\n$5\r\nr%04d\r\n$5\r\nr%04d\r\n$5\r\nr%04d\r\n", i,
                         i + 500, i + 1500);
        fx_send(fd, cmd, (size_t)n);
        st->requests++;
        /* "*3" then three bulk strings */
        int tags[3], got = 0;
        size_t pos = 0;
        while (got < 4) {
            const uint8_t *nl = in.len > pos ? memchr(in.data + pos, '\n', in.len - pos) : NULL;
            if (nl == NULL) {
                buf_reserve(&in, 4096);
                ssize_t k = recv(fd, in.data + in.len, in.cap - in.len, 0);
                if (k <= 0) {
                    note_error(st, "MGET: connection closed");
                    goto out;
                }
                in.len += (size_t)k;
                continue;
            }
            if (got == 0) {
                if (in.data[pos] != '*') {
                    note_error(st, "MGET: reply %.*s", (int)(nl - in.data - pos),
                               in.data + pos);
                    goto out;
                }
                pos = (size_t)(nl - in.data) + 1;
                got++;
                continue;
            }
            long len = strtol((const char *)in.data + pos + 1, NULL, 10);
            size_t body = (size_t)(nl - in.data) + 1;
            if (in.data[pos] != '$' || len <= 0) {
                note_error(st, "MGET: value %d missing", got);
                goto out;
            }
            if (in.len < body + (size_t)len + 2) {
                buf_reserve(&in, 4096);
                ssize_t k = recv(fd, in.data + in.len, in.cap - in.len, 0);
                if (k <= 0) {
                    note_error(st, "MGET: connection closed");
                    goto out;
                }
                in.len += (size_t)k;
                continue;
            }
            tags[got - 1] = tag_of(in.data + body, (size_t)len);
            pos = body + (size_t)len + 2;
            got++;
        }
        memmove(in.data, in.data + pos, in.len - pos);
        in.len -= pos;
        if (tags[0] != tags[1] || tags[1] != tags[2])
            st->mixed++;
    }
out:
    close(fd);
    buf_free(&in);
    return NULL;
}

/* Wait until the server answers with version v; seconds it took. */
static double
wait_visible(uint64_t v)
{
    double t0 = fx_now();
    fx_resp r = {0};
    for (;;) {
        fx_get(http_port, "/hot/r0000", NULL, &r);
        if (r.h.status == 200 && r.h.version == v)
            break;
        if (fx_now() - t0 > 3 * VISIBLE_LIMIT_S)
            fail_msg("version %llu not served after %.1f s", (unsigned long long)v,
                     fx_now() - t0);
        usleep(2000);
    }
    fx_resp_free(&r);
    return fx_now() - t0;
}

static int
open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    if (d != NULL)
        closedir(d);
    return n;
}

static void
swap_under_load(void **state)
{
    (void)state;
    slog_set_quiet(1);
    fx_tmpdir(data_dir, sizeof data_dir, "swap-test");
    static const char *const fams[] = {"f", NULL};
    kslice splits[] = {kslice_str("r0500"), kslice_str("r1000"), kslice_str("r1500")};
    fx_create(data_dir, "hot", fams, splits, 3);
    publish(1);
    server_config cfg;
    server_config_init(&cfg);
    cfg.data_dir = data_dir;
    cfg.listen = "127.0.0.1:0";
    cfg.resp_listen = "127.0.0.1:0";
    cfg.threads = 2;
    cfg.cache_bytes = 16u << 20;
    cfg.poll_ms = 20;
    cfg.warm_ms = 200;
    kiln_err err;
    status_clear(&err);
    fx_must(server_start(&cfg, &srv, &err), &err, "server_start");
    http_port = server_http_port(srv);
    resp_port = server_resp_port(srv);
    int fds_before = open_fds();

    client_stats st[CLIENTS + 1];
    memset(st, 0, sizeof st);
    pthread_t th[CLIENTS + 1];
    atomic_store(&stop_flag, 0);
    for (int i = 0; i < CLIENTS; i++)
        pthread_create(&th[i], NULL, http_reader, &st[i]);
    pthread_create(&th[CLIENTS], NULL, resp_reader, &st[CLIENTS]);

    double worst = 0;
    int tag = 1;
    uint64_t current = 1;
    for (int it = 0; it < ITERATIONS; it++) {
        usleep(40000);
        if (it % 3 == 2) {
            current = fx_rollback(data_dir, "hot", 0);
        } else {
            publish(++tag);
            current = 0;
            for (uint64_t v = 1; v < MAX_VERSION; v++) {
                if (atomic_load(&version_tag[v]) == tag)
                    current = v;
            }
        }
        double t = wait_visible(current);
        if (t > worst)
            worst = t;
    }
    usleep(100000);
    atomic_store(&stop_flag, 1);
    for (int i = 0; i <= CLIENTS; i++)
        pthread_join(th[i], NULL);

    long requests = 0, errors = 0, mixed = 0;
    for (int i = 0; i <= CLIENTS; i++) {
        requests += st[i].requests;
        errors += st[i].errors;
        mixed += st[i].mixed;
        if (st[i].errors)
            print_message("client %d: %s\n", i, st[i].first_error);
        for (int v = 0; v < MAX_VERSION; v++) {
            if (st[i].seen_tag[v] != 0 && st[i].seen_tag[v] != atomic_load(&version_tag[v]))
                fail_msg("version %d answered with tag %d, published with %d", v,
                         st[i].seen_tag[v], atomic_load(&version_tag[v]));
        }
    }
    print_message("%ld requests, %ld errors, %ld mixed; %d versions published; slowest swap "
                  "served after %.0f ms\n", requests, errors, mixed, tag, worst * 1e3);
    assert_int_equal(errors, 0);
    assert_int_equal(mixed, 0);
    assert_true(requests > CLIENTS * ITERATIONS);
    assert_true(worst < VISIBLE_LIMIT_S);

    /* the table fits the cache twice over: each swap read the new version's
     * blocks into the cache before serving it */
    views_table_info *infos;
    size_t ninfos = views_table_infos(server_views(srv), &infos);
    assert_int_equal(ninfos, 1);
    print_message("last swap prefetched %llu bytes of blocks\n",
                  (unsigned long long)infos[0].last_prefetch_bytes);
    assert_true(infos[0].last_prefetch_bytes > 0);
    free(infos);

    /* old versions are released once readers moved on: their files close */
    usleep(300000);
    int fds_after = open_fds();
    print_message("open descriptors: %d before the swaps, %d after\n", fds_before, fds_after);
    assert_true(fds_after <= fds_before + 4);

    server_shutdown(srv);
    server_wait(srv);
    server_free(srv);
    tu_rmrf(data_dir);
}

/* The names in the files directory of data_dir's table "hot" (in *dir). */
static void
list_files(char *dir, size_t cap, char names[][64], size_t *n, size_t max)
{
    kiln_err err;
    status_clear(&err);
    char d[512];
    fx_must(table_dir_path(data_dir, "default:hot", d, sizeof d, &err), &err, "table_dir_path");
    snprintf(dir, cap, "%s/%s", d, TABLE_FILES_DIR);
    *n = 0;
    DIR *dp = opendir(dir);
    assert_non_null(dp);
    struct dirent *e;
    while ((e = readdir(dp)) != NULL && *n < max)
        if (e->d_name[0] != '.')
            snprintf(names[(*n)++], 64, "%.63s", e->d_name);
    closedir(dp);
}

/* A version whose files are out of the page cache (loaded with --move from
 * a job output the kernel no longer holds, or read back after a restart)
 * is read into it before the swap: a worker turning to it finds every page
 * in memory instead of waiting on the disk. */
static void
swap_reads_file_pages_first(void **state)
{
    (void)state;
    slog_set_quiet(1);
    fx_tmpdir(data_dir, sizeof data_dir, "swap-pages");
    static const char *const fams[] = {"f", NULL};
    fx_create(data_dir, "hot", fams, NULL, 0);
    publish(1);
    views_options o;
    views_options_init(&o);
    o.block_cache_bytes = 4u << 20;
    o.warm_ms = 0;
    views *v;
    kiln_err err;
    status_clear(&err);
    fx_must(views_open(data_dir, &o, &v, &err), &err, "views_open");
    views_poll(v);

    char dir[600], before[16][64], after[16][64], fresh_names[16][64];
    size_t nb, na;
    list_files(dir, sizeof dir, before, &nb, 16);
    publish(2);
    list_files(dir, sizeof dir, after, &na, 16);
    /* The new version's files: written without a sync, so synced here for
     * the kernel to be able to drop their clean pages. */
    uint64_t absent = 0;
    size_t fresh = 0;
    char path[700];
    for (size_t i = 0; i < na; i++) {
        int old = 0;
        for (size_t k = 0; k < nb; k++)
            old |= strcmp(after[i], before[k]) == 0;
        if (old)
            continue;
        snprintf(path, sizeof path, "%.599s/%.63s", dir, after[i]);
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(fsync(fd), 0);
        assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        close(fd);
        uint64_t n;
        fx_must(env_uncached_bytes(path, &n, &err), &err, "env_uncached_bytes");
        absent += n;
        memcpy(fresh_names[fresh++], after[i], 64);
    }
    assert_true(fresh > 0);
    if (absent == 0)
        fail_msg("%s: the file system kept every page after POSIX_FADV_DONTNEED (tmpfs?); "
                 "set TMPDIR to a disk-backed directory", dir);

    assert_int_equal(views_poll(v), 1);
    views_table_info *infos;
    assert_int_equal(views_table_infos(v, &infos), 1);
    print_message("%llu bytes out of the page cache; the swap read %llu\n",
                  (unsigned long long)absent, (unsigned long long)infos[0].last_page_bytes);
    assert_int_equal(infos[0].swaps, 1);
    assert_true(infos[0].last_page_bytes > 0);
    assert_true(infos[0].last_page_bytes <= absent);
    free(infos);
    for (size_t i = 0; i < fresh; i++) {
        snprintf(path, sizeof path, "%.599s/%.63s", dir, fresh_names[i]);
        uint64_t n;
        fx_must(env_uncached_bytes(path, &n, &err), &err, "env_uncached_bytes");
        if (n != 0)
            fail_msg("%s: %llu bytes still out of the page cache after the swap", path,
                     (unsigned long long)n);
    }
    views_close(v);
    tu_rmrf(data_dir);
}

/* Cells of table name: BIG_ROWS rows of BIG_VAL bytes tagged with tag. */
#define BIG_ROWS 4000
#define BIG_VAL 100

static void
publish_big(const char *name, int tag)
{
    fx_cells cs = {0};
    char row[16], val[BIG_VAL];
    for (int i = 0; i < BIG_ROWS; i++) {
        int rn = snprintf(row, sizeof row, "r%05d", i);
        memset(val, 'a' + (i + tag) % 26, sizeof val);
        snprintf(val, sizeof val, "%d-%d", tag, i);
        fx_add(&cs, row, (size_t)rn, "f", "q", 1, 1, val, sizeof val);
    }
    fx_publish(data_dir, name, &cs);
    fx_cells_free(&cs);
}

/* Open views over data_dir with o, poll once, and a reader with a context. */
static void
open_reader(const views_options *o, views **v, views_reader **r, views_ctx **c)
{
    kiln_err err;
    status_clear(&err);
    fx_must(views_open(data_dir, o, v, &err), &err, "views_open");
    views_poll(*v);
    *r = views_reader_new(*v);
    *c = views_ctx_new();
    views_reader_attach(*r, *c);
}

/* Undo open_reader, and remove data_dir. */
static void
close_reader(views *v, views_reader *r, views_ctx *c)
{
    views_ctx_free(c);
    views_reader_free(r);
    views_close(v);
    tu_rmrf(data_dir);
}

/* Read every row of table name through the views (reader r, context c),
 * checking that each holds version tag's value. */
static void
read_rows(views_reader *r, views_ctx *c, const char *name, int tag, int rows)
{
    views_reader_refresh(r);
    views_entry *e = views_reader_find(r, name, strlen(name));
    assert_non_null(e);
    char row[16];
    kiln_err err;
    for (int i = 0; i < rows; i++) {
        int rn = snprintf(row, sizeof row, "r%05d", i);
        store_row out;
        status_clear(&err);
        fx_must(views_get(e, c, (const uint8_t *)row, (size_t)rn, NULL, &out, &err), &err,
                "views_get");
        assert_int_equal(out.count, 1);
        char want[BIG_VAL];
        int wn = snprintf(want, sizeof want, "%d-%d", tag, i);
        assert_int_equal(out.cells[0].value_len, BIG_VAL);
        assert_memory_equal(out.cells[0].value, want, (size_t)wn + 1);
    }
}

static void
read_all(views_reader *r, views_ctx *c, const char *name, int tag)
{
    read_rows(r, c, name, tag, BIG_ROWS);
}

static uint64_t
cached_of(views_reader *r, const char *name)
{
    views_reader_refresh(r);
    views_entry *e = views_reader_find(r, name, strlen(name));
    assert_non_null(e);
    return store_view_cached_bytes(views_entry_view(e));
}

/* A full block cache holds the blocks of two tables. Swapping "hot", whose
 * requests its row cache answered (cold_old), drops the old version's blocks
 * to make room and prefetches the new version's into it; swapping it while
 * its requests went to its blocks prefetches nothing. Either way nothing is
 * evicted and the other table keeps every cached block. */
static void
swap_prefetch_room(int cold_old)
{
    slog_set_quiet(1);
    fx_tmpdir(data_dir, sizeof data_dir, "swap-room");
    static const char *const fams[] = {"f", NULL};
    fx_create(data_dir, "hot", fams, NULL, 0);
    fx_create(data_dir, "other", fams, NULL, 0);
    publish_big("hot", 1);
    publish_big("other", 1);
    views_options o;
    views_options_init(&o);
    o.block_cache_bytes = 512u << 10;
    o.row_cache_bytes = 64u << 20;
    o.warm_ms = 0;   /* no hot-row replay: the prefetch alone fills the cache */
    views *v;
    views_reader *r;
    views_ctx *c;
    open_reader(&o, &v, &r, &c);
    read_all(r, c, "hot", 1);
    read_rows(r, c, "other", 1, BIG_ROWS / 3);
    if (cold_old) {
        views_poll(v);   /* what the server's poller does between requests */
        read_all(r, c, "hot", 1);   /* now from the row cache */
    }

    block_cache *bc = views_block_cache(v);
    block_cache_stats before, after;
    block_cache_get_stats(bc, &before);
    uint64_t other_before = cached_of(r, "other"), hot_before = cached_of(r, "hot");
    print_message("cache %llu of %llu bytes used; hot %llu, other %llu\n",
                  (unsigned long long)before.bytes_used, (unsigned long long)before.capacity,
                  (unsigned long long)hot_before, (unsigned long long)other_before);
    /* full: the free room alone is too little for the prefetch to start */
    assert_true(before.bytes_used + before.capacity / 16 > before.capacity);
    assert_true(hot_before > before.capacity / 8);
    assert_true(other_before > before.capacity / 8);

    publish_big("hot", 2);
    assert_int_equal(views_poll(v), 1);
    block_cache_get_stats(bc, &after);
    views_table_info *infos;
    assert_int_equal(views_table_infos(v, &infos), 2);
    assert_string_equal(infos[0].name, "default:hot");
    uint64_t prefetched = infos[0].last_prefetch_bytes;
    free(infos);
    uint64_t other_after = cached_of(r, "other"), hot_after = cached_of(r, "hot");
    print_message("swap prefetched %llu bytes; new hot %llu cached; other %llu; %llu evictions\n",
                  (unsigned long long)prefetched, (unsigned long long)hot_after,
                  (unsigned long long)other_after,
                  (unsigned long long)(after.evictions - before.evictions));
    assert_int_equal(after.evictions, before.evictions);
    assert_int_equal(other_after, other_before);
    if (cold_old) {
        assert_true(prefetched > before.capacity / 8);
        assert_true(hot_after >= prefetched);
    } else {
        assert_int_equal(prefetched, 0);
    }
    /* the new version's rows are read right */
    read_all(r, c, "hot", 2);
    close_reader(v, r, c);
}

static void
swap_drops_cold_blocks_for_new(void **state)
{
    (void)state;
    swap_prefetch_room(1);
}

static void
swap_keeps_blocks_in_use(void **state)
{
    (void)state;
    swap_prefetch_room(0);
}

/* Row cache totals of the versions r now serves (after a refresh). */
static rowcache_stats
row_totals(views_reader *r)
{
    views_reader_refresh(r);
    rowcache_stats st;
    views_rowcache_totals(r, &st);
    return st;
}

/* Swapping "hot" while its row cache answers its requests and holds more
 * rows than a replay takes (warm_keys) fills the new version's row cache by
 * reading the version in key order: the rows the old cache held (rows [0,
 * cached)), with the new version's values, so that reading them after the
 * swap hits every time, and the other rows miss but for fewer than
 * VIEWS_FILL_SAMPLE (the fill's sampling). With a row-cache
 * budget too small for both versions' rows at once (tight), the block
 * cache lends its free room for the fill and gets it back after the swap. */
static void
swap_fill_rows(int cached, int tight)
{
    slog_set_quiet(1);
    fx_tmpdir(data_dir, sizeof data_dir, "swap-fill");
    static const char *const fams[] = {"f", NULL};
    fx_create(data_dir, "hot", fams, NULL, 0);
    publish_big("hot", 1);
    views_options o;
    views_options_init(&o);
    o.block_cache_bytes = 64u << 20;
    o.row_cache_bytes = tight ? 1200u << 10 : 16u << 20;
    o.warm_keys = 100;
    o.warm_ms = 0;   /* no hot-row replay: the fill alone fills the cache */
    views *v;
    views_reader *r;
    views_ctx *c;
    open_reader(&o, &v, &r, &c);
    read_rows(r, c, "hot", 1, cached);
    views_poll(v);   /* what the server's poller does between requests */
    read_rows(r, c, "hot", 1, cached);   /* now from the row cache */
    rowcache_stats old = row_totals(r);
    assert_int_equal(old.entries, (uint64_t)cached);
    rowcache_pool *pool = views_rowcache_pool(v);
    print_message("old version: %llu rows, %llu bytes of a %zu-byte budget\n",
                  (unsigned long long)old.entries, (unsigned long long)old.bytes,
                  rowcache_pool_capacity(pool));
    if (tight)   /* the new version's rows do not fit beside the old ones */
        assert_true(rowcache_pool_used(pool) + old.bytes > rowcache_pool_capacity(pool));

    publish_big("hot", 2);
    assert_int_equal(views_poll(v), 1);
    views_table_info *infos;
    assert_int_equal(views_table_infos(v, &infos), 1);
    uint64_t filled = infos[0].last_warm_rows, prefetched = infos[0].last_prefetch_bytes;
    free(infos);
    rowcache_stats now = row_totals(r);
    print_message("swap filled %llu rows (%llu bytes), prefetched %llu bytes of blocks\n",
                  (unsigned long long)filled, (unsigned long long)now.bytes,
                  (unsigned long long)prefetched);
    assert_true(filled >= (uint64_t)cached && filled < (uint64_t)cached + VIEWS_FILL_SAMPLE);
    assert_int_equal(now.entries, filled);
    assert_int_equal(prefetched, 0);
    /* the loan is repaid once the old version is retired */
    assert_int_equal(rowcache_pool_limit(pool), rowcache_pool_capacity(pool));
    assert_true(rowcache_pool_used(pool) <= rowcache_pool_capacity(pool));

    /* the cached rows hold the new values and hit; the others miss */
    read_rows(r, c, "hot", 2, cached);
    rowcache_stats hit = row_totals(r);
    assert_int_equal(hit.hits - now.hits, (uint64_t)cached);
    assert_int_equal(hit.misses, now.misses);
    read_all(r, c, "hot", 2);
    rowcache_stats all = row_totals(r);
    assert_int_equal(all.misses - hit.misses, (uint64_t)BIG_ROWS - filled);
    close_reader(v, r, c);
}

static void
swap_fills_row_cache(void **state)
{
    (void)state;
    swap_fill_rows(BIG_ROWS, 0);
}

static void
swap_fills_only_cached_rows(void **state)
{
    (void)state;
    swap_fill_rows(BIG_ROWS * 3 / 4, 0);
}

static void
swap_fill_borrows_block_room(void **state)
{
    (void)state;
    swap_fill_rows(BIG_ROWS, 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(swap_under_load),
        cmocka_unit_test(swap_reads_file_pages_first),
        cmocka_unit_test(swap_drops_cold_blocks_for_new),
        cmocka_unit_test(swap_keeps_blocks_in_use),
        cmocka_unit_test(swap_fills_row_cache),
        cmocka_unit_test(swap_fills_only_cached_rows),
        cmocka_unit_test(swap_fill_borrows_block_room),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
