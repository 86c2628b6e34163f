/* fuzz_resp.c -- libFuzzer target for the Redis protocol of kiln-server.
 *
 * The input is a byte stream a client sent on one connection. Every
 * complete command in it is parsed (resp.c) and answered by the command
 * layer (resp_api.c) over a small real table (fuzz_http_fixture.h), the
 * connection's database number carried from command to command as SELECT
 * sets it. Each reply must be exactly one well-formed RESP value; a parse
 * error must say why and ends the stream, as it closes the connection.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_http_fixture.h"
#include "serving/metrics.h"
#include "serving/resp.h"
#include "serving/resp_api.h"
#include "serving/slog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static resp_api_env fuzz_renv;
static resp_api *fuzz_rapi;
static kslice fuzz_argv[RESP_ARGS_MAX_DEFAULT];

static void
fuzz_resp_setup(void)
{
    if (fuzz_rapi != NULL)
        return;
    slog_set_quiet(1);
    fuzz_fixture_open();
    fuzz_renv.views = fuzz_views;
    fuzz_renv.metrics = metrics_new();
    kiln_err err;
    status_clear(&err);
    if (resp_api_add_column(&fuzz_renv, "t=g:q", &err) != KILN_OK)
        abort();
    fuzz_rapi = resp_api_new(&fuzz_renv, fuzz_reader, fuzz_ctx);
}

/* Length of the RESP value at p[0..n), or 0 if it is not one. */
static size_t
fuzz_resp_value(const uint8_t *p, size_t n, int depth)
{
    if (n < 3 || depth > 8)
        return 0;
    const uint8_t *nl = memchr(p, '\n', n);
    if (nl == NULL || nl == p + 1 || nl[-1] != '\r')
        return 0;
    size_t line = (size_t)(nl - p) + 1;
    if (p[0] == '+' || p[0] == '-') {
        for (size_t i = 1; i + 2 < line; i++) {
            if (p[i] == '\r' || p[i] == '\n')
                return 0;
        }
        return line;
    }
    char num[32];
    size_t dl = line - 3;
    if (dl == 0 || dl >= sizeof num)
        return 0;
    memcpy(num, p + 1, dl);
    num[dl] = '\0';
    char *end;
    long long v = strtoll(num, &end, 10);
    if (*end != '\0')
        return 0;
    if (p[0] == ':')
        return line;
    if (p[0] == '$') {
        if (v == -1)
            return line;
        if (v < 0 || (size_t)v > n - line || n - line - (size_t)v < 2 ||
            p[line + (size_t)v] != '\r' || p[line + (size_t)v + 1] != '\n')
            return 0;
        return line + (size_t)v + 2;
    }
    if (p[0] == '*') {
        size_t pos = line;
        for (long long i = 0; i < v; i++) {
            size_t k = fuzz_resp_value(p + pos, n - pos, depth + 1);
            if (k == 0)
                return 0;
            pos += k;
        }
        return pos;
    }
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_resp_setup();
    kbuf out = KBUF_INIT;
    int db = 0;
    size_t pos = 0;
    while (pos < size) {
        size_t argc, used;
        const char *why;
        resp_parse_result pr = resp_parse(data + pos, size - pos, fuzz_argv,
                                          RESP_ARGS_MAX_DEFAULT, 4096, &argc, &used, &why);
        if (pr == RESP_INCOMPLETE)
            break;
        if (pr == RESP_ERROR) {
            if (why == NULL)
                abort();
            break;
        }
        if (used == 0 || used > size - pos)
            abort();
        pos += used;
        if (pr == RESP_EMPTY)
            continue;
        buf_reset(&out);
        int close = 0, status = 200;
        resp_api_handle(fuzz_rapi, fuzz_argv, argc, &db, &out, &close, &status);
        if (fuzz_resp_value(out.data, out.len, 0) != out.len)
            abort();
        if ((status != 200) != (out.data[0] == '-'))
            abort();
        if (close)
            break;
    }
    buf_free(&out);
    return 0;
}
