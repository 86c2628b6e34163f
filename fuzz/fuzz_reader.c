/* fuzz_reader.c -- libFuzzer target for the map side's line reader
 * (mapreduce/mr_reader.c) over the pieces ranks share their input in
 * (mr_input_pieces). The input is three bytes of settings and a file body:
 *   byte 0: bit 0 gzip (the body is compressed and read whole), bits 1-3
 *           the rank count - 1, bits 4-7 the piece grain (0: no pieces);
 *   byte 1: the longest line kept / 3 (0: no limit);
 *   byte 2: the read size - 4.
 * Every rank's pieces are read in order, one buffer passed from reader to
 * reader; together they must give exactly the records (bytes, offsets) and
 * the skipped long lines of a plain split of the body on '\n' (one '\r'
 * before it dropped, a last line without '\n' a record, less one '\r' at its
 * end). Otherwise the target traps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "mapreduce/mr_input.h"
#include "mapreduce/mr_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The body gzip-compressed into *out (malloc'd); its length. */
static size_t
gzip_body(const uint8_t *p, size_t n, uint8_t **out)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        __builtin_trap();
    size_t cap = deflateBound(&zs, n) + 32;
    *out = malloc(cap);
    zs.next_in = (Bytef *)p;
    zs.avail_in = (uInt)n;
    zs.next_out = *out;
    zs.avail_out = (uInt)cap;
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
        __builtin_trap();
    size_t len = cap - zs.avail_out;
    deflateEnd(&zs);
    return len;
}

/* The next record of a plain split of body[*at..n): 1 with its bytes and
 * offset (*at moves past it), 0 at the end. */
static int
oracle_next(const uint8_t *body, size_t n, size_t *at, size_t *off, size_t *len)
{
    if (*at >= n)
        return 0;
    const uint8_t *nl = memchr(body + *at, '\n', n - *at);
    size_t stop = nl != NULL ? (size_t)(nl - body) : n;
    *off = *at;
    *len = stop - *at;
    if (*len > 0 && body[stop - 1] == '\r')   /* before a '\n' or at the end */
        (*len)--;
    *at = nl != NULL ? stop + 1 : n;
    return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    int gzip = data[0] & 1;
    int nranks = 1 + ((data[0] >> 1) & 7);
    uint64_t grain = (uint64_t)(data[0] >> 4) * 7;
    size_t max_line = (size_t)data[1] * 3;
    size_t chunk = 4 + data[2];
    const uint8_t *body = data + 3;
    size_t n = size - 3;

    uint8_t *zbody = NULL;
    const uint8_t *file_bytes = body;
    size_t file_len = n;
    if (gzip) {
        file_len = gzip_body(body, n, &zbody);
        file_bytes = zbody;
    }
    int fd = memfd_create("fuzz_reader", 0);
    if (fd < 0 || write(fd, file_bytes, file_len) != (ssize_t)file_len)
        __builtin_trap();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    mr_input_file f = {path, file_len, gzip};
    mr_input in = {&f, 1, file_len};

    size_t at = 0, skipped = 0, reader_skipped = 0;
    kbuf spare = KBUF_INIT;
    for (int r = 0; r < nranks; r++) {
        mr_split *pc;
        size_t np = mr_input_pieces(&in, nranks, r, grain, &pc);
        for (size_t i = 0; i < np; i++) {
            mr_reader *rd;
            kiln_err err;
            status_clear(&err);
            if (mr_reader_open_buf(&f, &pc[i], chunk, &spare, &rd, &err) != KILN_OK)
                __builtin_trap();
            mr_reader_set_max_line(rd, max_line);
            kslice line;
            uint64_t off;
            int got;
            while ((got = mr_reader_next(rd, &line, &off, &err)) > 0) {
                size_t wo, wl;
                for (;;) {   /* the oracle's next record that is not too long */
                    if (!oracle_next(body, n, &at, &wo, &wl))
                        __builtin_trap();   /* a record the body has not */
                    if (max_line == 0 || wl <= max_line)
                        break;
                    skipped++;
                }
                if (off != wo || line.n != wl || memcmp(line.p, body + wo, wl) != 0)
                    __builtin_trap();
            }
            if (got < 0)
                __builtin_trap();
            reader_skipped += mr_reader_skipped(rd, NULL);
            mr_reader_close_buf(rd, &spare);
        }
        free(pc);
    }
    size_t wo, wl;
    while (oracle_next(body, n, &at, &wo, &wl)) {
        if (max_line == 0 || wl <= max_line)
            __builtin_trap();   /* a record the reader missed */
        skipped++;
    }
    if (reader_skipped != skipped)
        __builtin_trap();   /* long lines skipped that the body has not, or not skipped */
    buf_free(&spare);
    close(fd);
    free(zbody);
    return 0;
}
