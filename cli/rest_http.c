/* rest_http.c -- libcurl transport of `kiln --server` (rest_http.h). The
 * response head is read through a header callback that keeps only the few
 * fields the client needs, bounded by their buffers; the body through a
 * write callback that refuses to grow past REST_HTTP_BODY_MAX. libcurl does
 * the framing (Content-Length, chunked, connection reuse) and TLS.
 */
#include "cli/rest_http.h"

#include <ctype.h>
#include <curl/curl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rest_http {
    CURL *curl;
    char origin[REST_HTTP_URL_MAX];   /* "http://host:port" */
    char base_path[REST_HTTP_URL_MAX];   /* "" or "/prefix" (no trailing '/') */
    char name[300];                   /* "host:port" */
    long timeout_ms;
    int too_big;                      /* the write callback refused the body */
    rest_http_response resp;
    char errbuf[CURL_ERROR_SIZE];
    kbuf url;
};

static int rest_http_curl_ready;

/* ------------------------------------------------------------------ address */

/* Split "scheme://authority/path" (or "host:port") into h's origin, base
 * path and name. -1 if the address is not usable. */
static int
rest_http_parse_addr(rest_http *h, const char *server)
{
    const char *scheme = "http";
    const char *rest = server;
    int has_scheme = 0;
    if (strncmp(server, "http://", 7) == 0) {
        rest = server + 7;
        has_scheme = 1;
    } else if (strncmp(server, "https://", 8) == 0) {
        scheme = "https";
        rest = server + 8;
        has_scheme = 1;
    } else if (strstr(server, "://") != NULL) {
        return -1;
    }
    for (const char *p = server; *p != '\0'; p++) {
        if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
            return -1;
    }
    size_t alen = strcspn(rest, "/?#");
    if (alen == 0 || alen >= 256 || memchr(rest, '@', alen) != NULL)
        return -1;
    const char *path = rest + alen;
    if (*path == '?' || *path == '#')
        return -1;
    /* the port: after the last ':' unless that is inside [IPv6] brackets */
    const char *colon = NULL;
    for (const char *p = rest; p < rest + alen; p++) {
        if (*p == ':')
            colon = p;
        else if (*p == ']')
            colon = NULL;
    }
    char hostport[300];
    if (colon != NULL) {
        size_t plen = (size_t)(rest + alen - colon - 1);
        if (plen == 0 || plen > 5 || colon == rest)
            return -1;
        unsigned long port = 0;
        for (const char *p = colon + 1; p < rest + alen; p++) {
            if (!isdigit((unsigned char)*p))
                return -1;
            port = port * 10 + (unsigned long)(*p - '0');
        }
        if (port == 0 || port > 65535)
            return -1;
        snprintf(hostport, sizeof hostport, "%.*s", (int)alen, rest);
    } else {
        if (!has_scheme)
            return -1;   /* a bare HOST needs its port */
        snprintf(hostport, sizeof hostport, "%.*s:%s", (int)alen, rest,
                 strcmp(scheme, "https") == 0 ? "443" : "80");
    }
    size_t plen = strlen(path);
    while (plen > 0 && path[plen - 1] == '/')
        plen--;
    if (plen >= sizeof h->base_path)
        return -1;
    snprintf(h->origin, sizeof h->origin, "%s://%.*s", scheme, (int)alen, rest);
    snprintf(h->base_path, sizeof h->base_path, "%.*s", (int)plen, path);
    snprintf(h->name, sizeof h->name, "%s", hostport);
    return 0;
}

/* ------------------------------------------------------------------ callbacks */

static size_t
rest_http_on_body(char *p, size_t size, size_t n, void *arg)
{
    rest_http *h = arg;
    size_t len = size * n;
    if (len > REST_HTTP_BODY_MAX - h->resp.body.len) {
        h->too_big = 1;
        return 0;   /* libcurl stops the transfer with CURLE_WRITE_ERROR */
    }
    buf_append(&h->resp.body, p, len);
    return len;
}

/* Copy a header's value (trimmed) into out (cap bytes). 0 if line is header
 * name, else -1. */
static int
rest_http_header(const char *line, size_t n, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    if (n <= nl || line[nl] != ':' || strncasecmp(line, name, nl) != 0)
        return -1;
    const char *v = line + nl + 1;
    const char *end = line + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    size_t vl = (size_t)(end - v);
    if (vl >= cap)
        vl = cap - 1;
    memcpy(out, v, vl);
    out[vl] = '\0';
    return 0;
}

static size_t
rest_http_on_header(char *p, size_t size, size_t n, void *arg)
{
    rest_http *h = arg;
    size_t len = size * n;
    rest_http_response *r = &h->resp;
    if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
        /* a new response head (after a 100 Continue, say): forget the last */
        r->content_type[0] = '\0';
        r->has_location = 0;
        r->has_version = 0;
        return len;
    }
    char v[64];
    if (rest_http_header(p, len, "Content-Type", r->content_type, sizeof r->content_type) == 0) {
        char *semi = strchr(r->content_type, ';');
        if (semi != NULL)
            *semi = '\0';
        for (char *c = r->content_type; *c != '\0'; c++)
            *c = (char)tolower((unsigned char)*c);
        size_t cl = strlen(r->content_type);
        while (cl > 0 && r->content_type[cl - 1] == ' ')
            r->content_type[--cl] = '\0';
    } else if (rest_http_header(p, len, "Location", r->location, sizeof r->location) == 0) {
        r->has_location = 1;
    } else if (rest_http_header(p, len, "X-Kiln-Version", v, sizeof v) == 0) {
        char *end;
        unsigned long long x = strtoull(v, &end, 10);
        if (v[0] != '\0' && *end == '\0') {
            r->has_version = 1;
            r->version = x;
        }
    }
    return len;
}

/* ------------------------------------------------------------------ client */

kiln_status
rest_http_open(const char *server, int timeout_ms, rest_http **out, kiln_err *err)
{
    *out = NULL;
    rest_http *h = kiln_calloc(1, sizeof *h);
    if (rest_http_parse_addr(h, server) != 0) {
        free(h);
        return status_set(err, KILN_INVALID,
                          "bad server address '%s' (HOST:PORT or http[s]://HOST[:PORT][/PATH])",
                          server);
    }
    if (!rest_http_curl_ready) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
            free(h);
            return status_set(err, KILN_INTERNAL, "libcurl: global initialization failed");
        }
        rest_http_curl_ready = 1;
    }
    h->curl = curl_easy_init();
    if (h->curl == NULL) {
        free(h);
        return status_set(err, KILN_INTERNAL, "libcurl: cannot create a handle");
    }
    h->timeout_ms = timeout_ms;
    buf_init(&h->resp.body);
    buf_init(&h->url);
    CURL *c = h->curl;
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
    /* a transfer may be long (a large page); one that stalls is not */
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)(timeout_ms + 999) / 1000);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");   /* gzip/deflate if the server likes */
    curl_easy_setopt(c, CURLOPT_USERAGENT, "kiln/" KILN_VERSION);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, rest_http_on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, rest_http_on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
    const char *ca = getenv("KILN_CA_FILE");
    if (ca != NULL && ca[0] != '\0')
        curl_easy_setopt(c, CURLOPT_CAINFO, ca);
    const char *insecure = getenv("KILN_INSECURE_TLS");
    if (insecure != NULL && strcmp(insecure, "1") == 0) {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    *out = h;
    return KILN_OK;
}

void
rest_http_close(rest_http *h)
{
    if (h == NULL)
        return;
    curl_easy_cleanup(h->curl);
    buf_free(&h->resp.body);
    buf_free(&h->url);
    free(h);
}

const char *
rest_http_name(const rest_http *h)
{
    return h->name;
}

/* The URL of target: a path below the base, or the path of an absolute URL
 * (a Location) sent to this server. A gateway reports its own idea of its
 * address in Location, which a proxy in between may not share, so only the
 * path is kept; it gets the base path if it does not start with it. */
static void
rest_http_url(rest_http *h, const char *target)
{
    kbuf *u = &h->url;
    buf_reset(u);
    buf_append(u, h->origin, strlen(h->origin));
    const char *path = target;
    int absolute = 0;
    if (strncmp(target, "http://", 7) == 0 || strncmp(target, "https://", 8) == 0) {
        const char *auth = strstr(target, "://") + 3;
        path = auth + strcspn(auth, "/");
        absolute = 1;
    }
    size_t bl = strlen(h->base_path);
    if (!absolute || bl == 0 || strncmp(path, h->base_path, bl) != 0 ||
        (path[bl] != '/' && path[bl] != '\0' && path[bl] != '?'))
        buf_append(u, h->base_path, bl);
    if (*path != '/')
        buf_append_u8(u, '/');
    buf_append(u, path, strlen(path));
    buf_append_u8(u, '\0');
}

kiln_status
rest_http_request(rest_http *h, const char *method, const char *target, const char *accept,
                  const char *content_type, const char *body, size_t body_len,
                  const rest_http_response **out, kiln_err *err)
{
    *out = NULL;
    CURL *c = h->curl;
    rest_http_url(h, target);
    if (h->url.len > 64 * 1024)
        return status_set(err, KILN_INVALID, "%s: request URL longer than 64 KiB", h->name);
    buf_reset(&h->resp.body);
    h->resp.status = 0;
    h->resp.content_type[0] = '\0';
    h->resp.has_location = 0;
    h->resp.has_version = 0;
    h->too_big = 0;
    h->errbuf[0] = '\0';

    struct curl_slist *hdrs = NULL;
    char line[200];
    if (accept != NULL) {
        snprintf(line, sizeof line, "Accept: %s", accept);
        hdrs = curl_slist_append(hdrs, line);
    }
    if (content_type != NULL) {
        snprintf(line, sizeof line, "Content-Type: %s", content_type);
        hdrs = curl_slist_append(hdrs, line);
    }
    hdrs = curl_slist_append(hdrs, "Expect:");   /* no 100-continue round trip */
    curl_easy_setopt(c, CURLOPT_URL, (const char *)h->url.data);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    if (strcmp(method, "GET") == 0) {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, NULL);
    } else if (body != NULL) {
        curl_easy_setopt(c, CURLOPT_POST, 1L);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, strcmp(method, "POST") == 0 ? NULL : method);
    } else {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    }
    CURLcode rc = curl_easy_perform(c);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, NULL);
    curl_slist_free_all(hdrs);
    if (rc != CURLE_OK) {
        if (h->too_big)
            return status_set(err, KILN_IO, "%s: response body larger than %zu bytes", h->name,
                              (size_t)REST_HTTP_BODY_MAX);
        return status_set(err, KILN_IO, "%s: %s", h->name,
                          h->errbuf[0] != '\0' ? h->errbuf : curl_easy_strerror(rc));
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &h->resp.status);
    *out = &h->resp;
    return KILN_OK;
}
