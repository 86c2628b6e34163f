/* http_client.c -- a strict parser of HTTP/1.x response heads
 * (http_client.h), for the serving tests' loopback client and the fuzzer.
 */
#include "serving/http_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serving/http.h"

static int
http_client_digits(kslice s, uint64_t *out)
{
    if (s.n == 0 || s.n > 19)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (s.p[i] < '0' || s.p[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s.p[i] - '0');
    }
    *out = v;
    return 0;
}

static kslice
http_client_trim(kslice s)
{
    while (s.n > 0 && (s.p[0] == ' ' || s.p[0] == '\t')) {
        s.p++;
        s.n--;
    }
    while (s.n > 0 && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t'))
        s.n--;
    return s;
}

kiln_status
http_client_parse_head(const uint8_t *p, size_t head_len, http_client_response *out,
                       kiln_err *err)
{
    memset(out, 0, sizeof *out);
    if (head_len < 16 || memcmp(p, "HTTP/1.", 7) != 0 || p[7] < '0' || p[7] > '9' ||
        p[8] != ' ')
        return status_set(err, KILN_CORRUPTION, "response: not an HTTP/1.x status line");
    uint64_t status;
    if (http_client_digits(kslice_make(p + 9, 3), &status) != 0 || status < 100 ||
        (p[12] != ' ' && p[12] != '\r'))
        return status_set(err, KILN_CORRUPTION, "response: bad status code");
    out->status = (int)status;
    out->close = p[7] == '0';
    int have_length = 0;
    const uint8_t *end = p + head_len;
    const uint8_t *cur = memchr(p, '\n', head_len);
    if (cur == NULL)
        return status_set(err, KILN_CORRUPTION, "response: no line end");
    cur++;
    while (cur < end) {
        const uint8_t *nl = memchr(cur, '\n', (size_t)(end - cur));
        if (nl == NULL)
            return status_set(err, KILN_CORRUPTION, "response: unterminated header");
        kslice line = kslice_make(cur, (size_t)(nl - cur));
        cur = nl + 1;
        if (line.n > 0 && line.p[line.n - 1] == '\r')
            line.n--;
        if (line.n == 0)
            break;
        const uint8_t *colon = memchr(line.p, ':', line.n);
        if (colon == NULL || colon == line.p)
            return status_set(err, KILN_CORRUPTION, "response: malformed header");
        kslice name = kslice_make(line.p, (size_t)(colon - line.p));
        kslice value = http_client_trim(kslice_make(colon + 1, line.n - name.n - 1));
        uint64_t v;
        if (http_slice_ieq(name, "content-length")) {
            if (http_client_digits(value, &v) != 0 || (have_length && v != out->content_length))
                return status_set(err, KILN_CORRUPTION, "response: bad Content-Length");
            out->content_length = v;
            have_length = 1;
        } else if (http_slice_ieq(name, "transfer-encoding")) {
            return status_set(err, KILN_UNSUPPORTED, "response: chunked bodies are not read");
        } else if (http_slice_ieq(name, "connection")) {
            if (http_slice_ieq(value, "close"))
                out->close = 1;
            else if (http_slice_ieq(value, "keep-alive"))
                out->close = 0;
        } else if (http_slice_ieq(name, "x-kiln-version")) {
            if (http_client_digits(value, &v) != 0)
                return status_set(err, KILN_CORRUPTION, "response: bad X-Kiln-Version");
            out->has_version = 1;
            out->version = v;
        } else if (http_slice_ieq(name, "x-timestamp")) {
            int neg = value.n > 0 && value.p[0] == '-';
            if (http_client_digits(kslice_make(value.p + neg, value.n - (size_t)neg), &v) != 0 ||
                v > (uint64_t)INT64_MAX)
                return status_set(err, KILN_CORRUPTION, "response: bad X-Timestamp");
            out->has_timestamp = 1;
            out->timestamp = neg ? -(int64_t)v : (int64_t)v;
        } else if (http_slice_ieq(name, "content-type")) {
            size_t n = value.n < sizeof out->content_type - 1 ? value.n
                                                               : sizeof out->content_type - 1;
            memcpy(out->content_type, value.p, n);
            out->content_type[n] = '\0';
        }
    }
    if (!have_length)
        return status_set(err, KILN_CORRUPTION, "response: no Content-Length");
    if (out->content_length > HTTP_CLIENT_BODY_MAX)
        return status_set(err, KILN_CORRUPTION, "response: body of %llu bytes is too large",
                          (unsigned long long)out->content_length);
    return KILN_OK;
}
