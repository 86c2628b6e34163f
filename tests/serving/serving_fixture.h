/* serving_fixture.h -- shared helpers of the serving tests (included by each
 * test program; every function is static): a temporary data directory,
 * tables created and versions published in-process through the storage API
 * (as `kiln create` and `kiln load` do), rollbacks, and a raw loopback HTTP
 * client that sends exactly the bytes a test gives it.
 */
#ifndef KILN_TESTS_SERVING_FIXTURE_H
#define KILN_TESTS_SERVING_FIXTURE_H

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "serving/http.h"
#include "serving/http_client.h"
#include "storage/hfile/cell.h"
#include "storage/hfile/hfile_writer.h"
#include "storage/store/manifest.h"
#include "storage/store/schema.h"
#include "storage/store/table.h"
#include "tests/support/test_util.h"

#define FX_IO_TIMEOUT_MS 10000
/* not every test program uses every helper */
#define FX_FN static __attribute__((unused))

FX_FN void
fx_must(kiln_status st, const kiln_err *err, const char *what)
{
    if (st != KILN_OK)
        fail_msg("%s: %s (%d)", what, err->msg, (int)st);
}

FX_FN void
fx_tmpdir(char *out, size_t cap, const char *tag)
{
    const char *base = getenv("TMPDIR");
    snprintf(out, cap, "%s/kiln-%s-XXXXXX", base && *base ? base : "/tmp", tag);
    if (mkdtemp(out) == NULL)
        fail_msg("mkdtemp: %s", strerror(errno));
}

FX_FN double
fx_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ tables */

/* Create table name with families (specs as for `kiln create --family`,
 * NULL-terminated) and split keys. */
FX_FN void
fx_create(const char *data, const char *name, const char *const *families, const kslice *splits,
          size_t nsplits)
{
    kiln_schema s;
    schema_init(&s);
    kiln_err err;
    status_clear(&err);
    snprintf(s.name, sizeof s.name, "%s", name);
    for (size_t i = 0; families[i] != NULL; i++) {
        schema_family f;
        fx_must(schema_family_parse(families[i], &f, &err), &err, "family");
        fx_must(schema_add_family(&s, &f, &err), &err, "add family");
    }
    for (size_t i = 0; i < nsplits; i++)
        fx_must(schema_add_split(&s, splits[i].p, splits[i].n, &err), &err, "split");
    fx_must(table_create(data, &s, &err), &err, "table_create");
    schema_free(&s);
}

typedef struct fx_cell {
    kbuf row;
    char family[32];
    kbuf qual;
    int64_t ts;
    uint8_t type;
    kbuf value;
} fx_cell;

typedef struct fx_cells {
    fx_cell *v;
    size_t n, cap;
} fx_cells;

FX_FN void
fx_add(fx_cells *cs, const void *row, size_t rn, const char *family, const void *q, size_t qn,
       int64_t ts, const void *val, size_t vn)
{
    if (cs->n == cs->cap) {
        cs->cap = cs->cap ? cs->cap * 2 : 64;
        cs->v = kiln_realloc(cs->v, cs->cap * sizeof *cs->v);
    }
    fx_cell *c = &cs->v[cs->n++];
    memset(c, 0, sizeof *c);
    buf_append(&c->row, row, rn);
    snprintf(c->family, sizeof c->family, "%s", family);
    buf_append(&c->qual, q, qn);
    c->ts = ts;
    c->type = CELL_TYPE_PUT;
    buf_append(&c->value, val, vn);
}

FX_FN void
fx_cells_free(fx_cells *cs)
{
    for (size_t i = 0; i < cs->n; i++) {
        buf_free(&cs->v[i].row);
        buf_free(&cs->v[i].qual);
        buf_free(&cs->v[i].value);
    }
    free(cs->v);
    memset(cs, 0, sizeof *cs);
}

FX_FN void
fx_to_cell(const fx_cell *f, kiln_cell *c)
{
    memset(c, 0, sizeof *c);
    c->row = f->row.data ? f->row.data : (const uint8_t *)"";
    c->row_len = (uint32_t)f->row.len;
    c->family = (const uint8_t *)f->family;
    c->family_len = (uint32_t)strlen(f->family);
    c->qualifier = f->qual.data ? f->qual.data : (const uint8_t *)"";
    c->qualifier_len = (uint32_t)f->qual.len;
    c->ts = f->ts;
    c->type = f->type;
    c->value = f->value.data ? f->value.data : (const uint8_t *)"";
    c->value_len = (uint32_t)f->value.len;
}

FX_FN int
fx_cell_cmp(const void *a, const void *b)
{
    kiln_cell x, y;
    fx_to_cell(a, &x);
    fx_to_cell(b, &y);
    return cell_compare(&x, &y);
}

/* Publish the cells as a new replace version of table (one HFile per region
 * and family), as `kiln load` does; with cut >= 0, each file is cut to that
 * many bytes before the version is published, so that no reader ever sees it
 * whole. Returns the version. */
FX_FN uint64_t
fx_publish_cut(const char *data, const char *name, fx_cells *cs, off_t cut)
{
    kiln_err err;
    status_clear(&err);
    qsort(cs->v, cs->n, sizeof *cs->v, fx_cell_cmp);
    kiln_table *t;
    fx_must(table_open(data, name, &t, &err), &err, "table_open");
    fx_must(table_lock(t, -1, &err), &err, "table_lock");
    uint64_t version;
    fx_must(table_next_version(t, &version, &err), &err, "next_version");
    manifest m, cur;
    int have = table_read_current(t, &cur, NULL) == KILN_OK;
    manifest_init(&m);
    manifest_table *mt = manifest_add_table(&m, table_schema(t));
    m.version = version;
    m.parent = have ? cur.version : 0;
    m.kind = MANIFEST_KIND_REPLACE;
    if (have)
        manifest_free(&cur);
    const kiln_schema *s = table_schema(t);
    uint32_t seq = 0;
    for (size_t r = 0; r < mt->region_count; r++) {
        for (size_t fi = 0; fi < s->family_count; fi++) {
            const char *fam = s->families[fi].name;
            manifest_file mf;
            memset(&mf, 0, sizeof mf);
            snprintf(mf.family, sizeof mf.family, "%s", fam);
            table_file_name(version, seq++, mf.name);
            mf.seq = version;
            char p[4096];
            table_file_path(t, mf.name, p, sizeof p);
            hfile_writer_options o;
            hfile_writer_options_init(&o);
            o.block_size = 1024;
            o.codec = s->families[fi].codec;
            o.bloom = s->families[fi].bloom;
            o.sync = 0;
            hfile_writer *w;
            fx_must(hfile_writer_open(p, &o, &w, &err), &err, "hfile_writer_open");
            for (size_t i = 0; i < cs->n; i++) {
                const fx_cell *fc = &cs->v[i];
                if (strcmp(fc->family, fam) != 0 ||
                    manifest_region_for_row(mt, fc->row.data, fc->row.len) != r)
                    continue;
                kiln_cell c;
                fx_to_cell(fc, &c);
                fx_must(hfile_writer_add(w, &c, &err), &err, "hfile_writer_add");
                mf.entries++;
            }
            hfile_writer_stats stats;
            fx_must(hfile_writer_finish(w, &stats, &err), &err, "hfile_writer_finish");
            mf.size = stats.file_size;
            if (cut >= 0) {
                if (truncate(p, cut) != 0)
                    fail_msg("truncate %s: %s", p, strerror(errno));
                mf.size = (uint64_t)cut;
            }
            manifest_region_add_file(&mt->regions[r], &mf);
        }
    }
    int published;
    fx_must(table_publish(t, &m, &published, &err), &err, "table_publish");
    manifest_free(&m);
    fx_must(table_gc(t, NULL, &err), &err, "table_gc");
    table_close(t);
    return version;
}

FX_FN uint64_t
fx_publish(const char *data, const char *name, fx_cells *cs)
{
    return fx_publish_cut(data, name, cs, -1);
}

/* Roll table back to version (0: the parent). Returns the version now current. */
FX_FN uint64_t
fx_rollback(const char *data, const char *name, uint64_t version)
{
    kiln_err err;
    status_clear(&err);
    kiln_table *t;
    fx_must(table_open(data, name, &t, &err), &err, "table_open");
    fx_must(table_lock(t, -1, &err), &err, "table_lock");
    uint64_t now;
    fx_must(table_rollback(t, version, &now, &err), &err, "table_rollback");
    table_close(t);
    return now;
}

/* ------------------------------------------------------------------ raw client */

FX_FN int
fx_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        fail_msg("socket: %s", strerror(errno));
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(0x7F000001);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        fail_msg("connect 127.0.0.1:%d: %s", port, strerror(errno));
    struct timeval tv = {FX_IO_TIMEOUT_MS / 1000, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

FX_FN void
fx_send(int fd, const void *p, size_t n)
{
    size_t off = 0;
    while (off < n) {
        ssize_t w = send(fd, (const char *)p + off, n - off, MSG_NOSIGNAL);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            fail_msg("send: %s", w < 0 ? strerror(errno) : "closed");
        }
        off += (size_t)w;
    }
}

/* A connection's received bytes (responses are cut from its front). */
typedef struct fx_conn {
    int fd;
    kbuf in;
} fx_conn;

typedef struct fx_resp {
    http_client_response h;
    kbuf body;
    kbuf head;
} fx_resp;

FX_FN void
fx_resp_free(fx_resp *r)
{
    buf_free(&r->body);
    buf_free(&r->head);
}

/* Read one response. Returns 0, or -1 if the connection closed first. */
FX_FN int
fx_read_response(fx_conn *c, fx_resp *r, int head_only)
{
    buf_reset(&r->body);
    buf_reset(&r->head);
    size_t scan = 0, head;
    while ((head = http_head_end(c->in.data, c->in.len, &scan)) == 0) {
        buf_reserve(&c->in, 65536);
        ssize_t n = recv(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len, 0);
        if (n <= 0)
            return -1;
        c->in.len += (size_t)n;
    }
    kiln_err err;
    status_clear(&err);
    fx_must(http_client_parse_head(c->in.data, head, &r->h, &err), &err, "response head");
    buf_append(&r->head, c->in.data, head);
    size_t need = head + (head_only ? 0 : (size_t)r->h.content_length);
    while (c->in.len < need) {
        buf_reserve(&c->in, need - c->in.len);
        ssize_t n = recv(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len, 0);
        if (n <= 0)
            fail_msg("connection closed inside a body");
        c->in.len += (size_t)n;
    }
    buf_append(&r->body, c->in.data + head, need - head);
    memmove(c->in.data, c->in.data + need, c->in.len - need);
    c->in.len -= need;
    return 0;
}

/* 1 if the server closed the connection (EOF with nothing more to read). */
FX_FN int
fx_closed(fx_conn *c)
{
    if (c->in.len > 0)
        return 0;
    char b[256];
    ssize_t n = recv(c->fd, b, sizeof b, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
}

/* One GET on a fresh connection with extra header lines (may be NULL). */
FX_FN void
fx_get(int port, const char *target, const char *extra, fx_resp *r)
{
    fx_conn c = {fx_connect(port), KBUF_INIT};
    char req[8192];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: t\r\n%sConnection: close\r\n\r\n", target,
             extra ? extra : "");
    fx_send(c.fd, req, strlen(req));
    if (fx_read_response(&c, r, 0) != 0)
        fail_msg("GET %s: no response", target);
    close(c.fd);
    buf_free(&c.in);
}

/* Send raw bytes on a fresh connection and read one response. */
FX_FN void
fx_raw(int port, const void *bytes, size_t n, fx_resp *r, int *closed_after)
{
    fx_conn c = {fx_connect(port), KBUF_INIT};
    fx_send(c.fd, bytes, n);
    if (fx_read_response(&c, r, 0) != 0)
        fail_msg("raw request: no response");
    if (closed_after != NULL)
        *closed_after = fx_closed(&c);
    close(c.fd);
    buf_free(&c.in);
}

#endif
