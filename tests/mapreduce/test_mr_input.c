/* test_mr_input.c -- input listing, rank splits and the line reader (mr_input,
 * mr_reader): every
 * line read exactly once whatever the rank count and the cut points (CRLF,
 * empty lines, no final newline, empty files, lines longer than the read
 * buffer), gzip read whole (multi-member, truncated), line numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "mapreduce/mr_input.h"
#include "mapreduce/mr_reader.h"
#include "mapreduce/mr_state.h"
#include "storage/base/buf.h"

static uint64_t rng_state;
static char tmpdir[256];

static uint64_t
rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int
make_tmpdir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kiln-test-mr-input-XXXXXX");
    return mkdtemp(tmpdir) == NULL;
}

static int
remove_tmpdir(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd);
}

static void
write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (n)
        assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

static void
write_gzip(const char *path, const void *p, size_t n, int members)
{
    gzFile g = gzopen(path, "wb");
    assert_non_null(g);
    size_t cut = members > 1 ? n / 2 : n;
    if (cut)
        assert_int_equal(gzwrite(g, p, (unsigned)cut), (int)cut);
    gzclose(g);
    if (members > 1) {
        g = gzopen(path, "ab");
        assert_non_null(g);
        if (n - cut)
            assert_int_equal(gzwrite(g, (const char *)p + cut, (unsigned)(n - cut)), (int)(n - cut));
        gzclose(g);
    }
}

/* Expected records: split at '\n', strip one '\r' before it, no record after
 * a final '\n'. Appends "[len]bytes" for each record to out. */
static size_t
expected_records(const uint8_t *p, size_t n, kbuf *out)
{
    size_t count = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && p[i] != '\n')
            continue;
        if (i == n && start == n)
            break;
        size_t len = i - start;
        if (len > 0 && p[start + len - 1] == '\r')
            len--;
        buf_append_be32(out, (uint32_t)len);
        buf_append(out, p + start, len);
        count++;
        start = i + 1;
    }
    return count;
}

/* Read every rank's pieces of in (grain 0: its splits) in rank order;
 * append like expected_records. */
static size_t
read_all(const mr_input *in, int nranks, size_t chunk, uint64_t grain, kbuf *out)
{
    size_t count = 0;
    for (int r = 0; r < nranks; r++) {
        mr_split *sp;
        size_t n = mr_input_pieces(in, nranks, r, grain, &sp);
        for (size_t i = 0; i < n; i++) {
            mr_reader *rd;
            kiln_err err;
            status_clear(&err);
            assert_int_equal(mr_reader_open(&in->files[sp[i].file], &sp[i], chunk, &rd, &err),
                             KILN_OK);
            kslice line;
            uint64_t off;
            int got;
            while ((got = mr_reader_next(rd, &line, &off, &err)) > 0) {
                buf_append_be32(out, (uint32_t)line.n);
                buf_append(out, line.p, line.n);
                count++;
            }
            assert_int_equal(got, 0);
            assert_int_equal(mr_reader_progress(rd), sp[i].end - sp[i].start);
            mr_reader_close(rd);
        }
        free(sp);
    }
    return count;
}

/* Random text with CRLF, empty lines and long lines. */
static void
random_text(kbuf *b, size_t n, int long_lines)
{
    buf_reset(b);
    while (b->len < n) {
        uint64_t r = rnd() % 100;
        if (r < 8)
            buf_append(b, "\r\n", 2);
        else if (r < 20)
            buf_append_u8(b, '\n');
        else if (r < 22 && long_lines) {
            size_t len = 5000 + rnd() % 20000;
            for (size_t i = 0; i < len; i++)
                buf_append_u8(b, (uint8_t)('a' + rnd() % 26));
        } else {
            buf_append_u8(b, (uint8_t)(r < 30 ? ' ' : 'a' + rnd() % 26));
        }
    }
}

static void
every_line_once(void **state)
{
    (void)state;
    char dir[300];
    snprintf(dir, sizeof dir, "%s/in", tmpdir);
    mkdir(dir, 0755);
    kbuf text = KBUF_INIT, expect = KBUF_INIT, got = KBUF_INIT;
    /* Files: an empty one, one newline, no final newline, CRLF, long lines. */
    const size_t sizes[] = {0, 1, 7, 300, 4096, 70000, 150000};
    size_t expect_n = 0;
    for (size_t f = 0; f < sizeof sizes / sizeof sizes[0]; f++) {
        char path[400];
        snprintf(path, sizeof path, "%s/f%02zu.txt", dir, f);
        if (sizes[f] == 1) {
            buf_reset(&text);
            buf_append_u8(&text, '\n');
        } else {
            random_text(&text, sizes[f], f >= 5);
        }
        if (f == 3 && text.len > 0 && text.data[text.len - 1] == '\n')
            text.data[text.len - 1] = 'z';
        write_file(path, text.data, text.len);
        expect_n += expected_records(text.data, text.len, &expect);
    }
    mr_input in;
    memset(&in, 0, sizeof in);
    kiln_err err;
    status_clear(&err);
    const char *paths[] = {dir};
    assert_int_equal(mr_input_list(&in, paths, 1, &err), KILN_OK);
    assert_int_equal(in.n, sizeof sizes / sizeof sizes[0]);
    for (int nranks = 1; nranks <= 13; nranks++) {
        size_t chunks[] = {4096, 1 << 20};
        uint64_t grains[] = {0, 1000, 65536};
        for (size_t c = 0; c < 2; c++) {
            for (size_t g = 0; g < 3; g++) {
                buf_reset(&got);
                size_t n = read_all(&in, nranks, chunks[c], grains[g], &got);
                assert_int_equal(n, expect_n);
                assert_int_equal(got.len, expect.len);
                assert_memory_equal(got.data, expect.data, expect.len);
            }
        }
    }
    mr_input_free(&in);
    buf_free(&text);
    buf_free(&expect);
    buf_free(&got);
}

/* Cut points at every byte of a small file: each line read once. */
static void
every_cut_point(void **state)
{
    (void)state;
    const char *body = "ab\r\n\n\ncd e\nf\r\n\r\nlast";
    char path[300];
    snprintf(path, sizeof path, "%s/cuts.txt", tmpdir);
    size_t n = strlen(body);
    write_file(path, body, n);
    kbuf expect = KBUF_INIT, got = KBUF_INIT;
    size_t expect_n = expected_records((const uint8_t *)body, n, &expect);
    mr_input_file f = {path, n, 0};
    for (size_t a = 0; a <= n; a++) {
        for (size_t b = a; b <= n; b++) {
            mr_split s[3] = {{0, 0, a}, {0, a, b}, {0, b, n}};
            buf_reset(&got);
            size_t count = 0;
            for (int k = 0; k < 3; k++) {
                if (s[k].start == s[k].end)
                    continue;
                mr_reader *rd;
                kiln_err err;
                status_clear(&err);
                assert_int_equal(mr_reader_open(&f, &s[k], 4, &rd, &err), KILN_OK);
                kslice line;
                uint64_t off;
                while (mr_reader_next(rd, &line, &off, &err) > 0) {
                    assert_true(off == 0 || body[off - 1] == '\n');
                    buf_append_be32(&got, (uint32_t)line.n);
                    buf_append(&got, line.p, line.n);
                    count++;
                }
                mr_reader_close(rd);
            }
            assert_int_equal(count, expect_n);
            assert_memory_equal(got.data, expect.data, expect.len);
        }
    }
    buf_free(&expect);
    buf_free(&got);
}

static void
gzip_whole(void **state)
{
    (void)state;
    kbuf text = KBUF_INIT, expect = KBUF_INIT, got = KBUF_INIT;
    random_text(&text, 300000, 1);
    size_t expect_n = expected_records(text.data, text.len, &expect);
    char dir[300], path[400];
    snprintf(dir, sizeof dir, "%s/gz", tmpdir);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/a.gz", dir);
    write_gzip(path, text.data, text.len, 2);
    mr_input in;
    memset(&in, 0, sizeof in);
    kiln_err err;
    status_clear(&err);
    const char *paths[] = {path};
    assert_int_equal(mr_input_list(&in, paths, 1, &err), KILN_OK);
    assert_true(in.files[0].gzip);
    for (int nranks = 1; nranks <= 4; nranks++) {
        size_t owners = 0;
        for (int r = 0; r < nranks; r++) {
            mr_split *sp;
            owners += mr_input_splits(&in, nranks, r, &sp);
            free(sp);
        }
        assert_int_equal(owners, 1);
        buf_reset(&got);
        assert_int_equal(read_all(&in, nranks, 8192, 0, &got), expect_n);
        assert_memory_equal(got.data, expect.data, expect.len);
    }

    /* Truncated stream: a clean corruption error naming the file. */
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    uint8_t *whole = malloc(in.files[0].size);
    assert_int_equal(fread(whole, 1, in.files[0].size, fp), in.files[0].size);
    fclose(fp);
    char bad[400];
    snprintf(bad, sizeof bad, "%s/bad.gz", tmpdir);
    write_file(bad, whole, in.files[0].size / 3);
    mr_input_file bf = {bad, in.files[0].size / 3, 1};
    mr_split bs = {0, 0, bf.size};
    mr_reader *rd;
    assert_int_equal(mr_reader_open(&bf, &bs, 4096, &rd, &err), KILN_OK);
    kslice line;
    uint64_t off;
    int r;
    while ((r = mr_reader_next(rd, &line, &off, &err)) > 0)
        ;
    assert_int_equal(r, -1);
    assert_int_equal(err.code, KILN_CORRUPTION);
    assert_non_null(strstr(err.msg, "bad.gz"));
    mr_reader_close(rd);
    free(whole);
    mr_input_free(&in);
    buf_free(&text);
    buf_free(&expect);
    buf_free(&got);
}

static void
line_numbers(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/lines.txt", tmpdir);
    kbuf text = KBUF_INIT;
    for (int i = 1; i <= 5000; i++) {
        char l[32];
        int n = snprintf(l, sizeof l, "%d\n", i);
        buf_append(&text, l, (size_t)n);
    }
    write_file(path, text.data, text.len);
    mr_input_file f = {path, text.len, 0};
    for (int k = 0; k < 20; k++) {
        uint64_t start = rnd() % text.len;
        mr_split s = {0, start, text.len};
        mr_reader *rd;
        kiln_err err;
        status_clear(&err);
        assert_int_equal(mr_reader_open(&f, &s, 4096, &rd, &err), KILN_OK);
        kslice line;
        uint64_t off;
        for (int j = 0; j < 3 && mr_reader_next(rd, &line, &off, &err) > 0; j++) {
            uint64_t no;
            assert_int_equal(mr_reader_line_number(rd, &no, &err), KILN_OK);
            char want[32];
            snprintf(want, sizeof want, "%llu", (unsigned long long)no);
            assert_int_equal(line.n, strlen(want));
            assert_memory_equal(line.p, want, line.n);
        }
        mr_reader_close(rd);
    }
    buf_free(&text);
}

static void
listing(void **state)
{
    (void)state;
    char d[300], p[400];
    snprintf(d, sizeof d, "%s/list", tmpdir);
    mkdir(d, 0755);
    snprintf(p, sizeof p, "%s/sub", d);
    mkdir(p, 0755);
    const char *names[] = {"b.txt", "a.txt", "_SUCCESS", ".hidden", "sub/c.txt"};
    for (size_t i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s", d, names[i]);
        write_file(p, "x\n", 2);
    }
    mr_input in;
    memset(&in, 0, sizeof in);
    kiln_err err;
    status_clear(&err);
    const char *paths[] = {d};
    assert_int_equal(mr_input_list(&in, paths, 1, &err), KILN_OK);
    assert_int_equal(in.n, 3);
    assert_non_null(strstr(in.files[0].path, "/a.txt"));
    assert_non_null(strstr(in.files[1].path, "/b.txt"));
    assert_non_null(strstr(in.files[2].path, "/sub/c.txt"));
    assert_int_equal(in.total, 6);

    kbuf wire = KBUF_INIT;
    mr_input_encode(&in, &wire);
    mr_input back;
    memset(&back, 0, sizeof back);
    assert_int_equal(mr_input_decode(&back, wire.data, wire.len, &err), KILN_OK);
    assert_int_equal(back.n, in.n);
    for (size_t i = 0; i < in.n; i++)
        assert_string_equal(back.files[i].path, in.files[i].path);
    mr_input_free(&back);
    assert_int_equal(mr_input_decode(&back, wire.data, wire.len - 1, &err), KILN_CORRUPTION);
    mr_input_free(&back);
    buf_free(&wire);

    snprintf(p, sizeof p, "%s/missing", d);
    const char *missing[] = {p};
    status_clear(&err);
    assert_int_equal(mr_input_list(&in, missing, 1, &err), KILN_NOT_FOUND);
    assert_non_null(strstr(err.msg, "missing"));
    mr_input_free(&in);
}

static void
splits_balance(void **state)
{
    (void)state;
    mr_input in;
    memset(&in, 0, sizeof in);
    mr_input_file files[5] = {{"a", 1000, 0}, {"b", 0, 0}, {"c", 5000, 1}, {"d", 3, 0},
                              {"e", 4000, 0}};
    in.files = files;
    in.n = 5;
    in.total = 10003;
    for (int nranks = 1; nranks <= 9; nranks++) {
        uint64_t plain = 0;
        size_t gz = 0;
        for (int r = 0; r < nranks; r++) {
            mr_split *sp;
            size_t n = mr_input_splits(&in, nranks, r, &sp);
            for (size_t i = 0; i < n; i++) {
                assert_true(sp[i].start < sp[i].end);
                if (files[sp[i].file].gzip) {
                    gz++;
                    assert_int_equal(sp[i].end, 5000);
                } else {
                    plain += sp[i].end - sp[i].start;
                }
            }
            free(sp);
        }
        assert_int_equal(plain, 5003);
        assert_int_equal(gz, 1);
    }
    /* Sample points are spread over the byte space and land in files. */
    uint32_t file;
    uint64_t off;
    mr_input_sample_point(&in, 0, 2, &file, &off);
    assert_int_equal(file, 2);
    assert_int_equal(off, 0);
    mr_input_sample_point(&in, 1, 2, &file, &off);
    assert_int_equal(file, 4);
    assert_true(off > 0 && off < 4000);
}

/* A split that starts and ends inside one long line owns no line, and
 * its reader reads about its own bytes, not on to the line's end (pieces of
 * a long line would otherwise read the rest of it once each); the split
 * holding the line's start reads the line whole. One read buffer passed
 * from reader to reader (mr_reader_open_buf) gives the same lines. */
static void
long_line_pieces_read_their_own(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/longline.txt", tmpdir);
    size_t n = 3000000;
    uint8_t *body = malloc(n);
    memset(body, 'x', n);
    memcpy(body, "a b\n", 4);
    body[n - 1] = '\n';
    write_file(path, body, n);
    mr_input_file f = {path, n, 0};
    kbuf spare = KBUF_INIT;
    size_t lines = 0, longest = 0;
    for (uint64_t at = 0; at < n; at += 100000) {
        mr_split sp = {0, at, at + 100000 < n ? at + 100000 : n};
        mr_reader *rd;
        kiln_err err;
        status_clear(&err);
        assert_int_equal(mr_reader_open_buf(&f, &sp, 4096, &spare, &rd, &err), KILN_OK);
        kslice line;
        uint64_t off;
        int got;
        while ((got = mr_reader_next(rd, &line, &off, &err)) > 0) {
            lines++;
            longest = line.n > longest ? line.n : longest;
        }
        assert_int_equal(got, 0);
        if (at > 0)
            assert_true(mr_reader_bytes_read(rd) <= sp.end - sp.start + 4096);
        mr_reader_close_buf(rd, &spare);
    }
    assert_int_equal(lines, 2);
    assert_int_equal(longest, n - 5);
    assert_true(spare.cap > 0);   /* handed back */
    buf_free(&spare);
    free(body);
}

/* A line of exactly kiln.line.max bytes before its "\r\n" is kept at every
 * read size, also when a read ends between the '\r' and the '\n'; one a
 * byte longer is skipped. */
static void
crlf_line_at_the_limit(void **state)
{
    (void)state;
    const char *body = "ab\r\nabc\r\nabcd\r\nabc";
    char path[300];
    snprintf(path, sizeof path, "%s/crlf-limit.txt", tmpdir);
    write_file(path, body, strlen(body));
    mr_input_file f = {path, strlen(body), 0};
    mr_split sp = {0, 0, f.size};
    for (size_t chunk = 1; chunk <= 24; chunk++) {
        mr_reader *rd;
        kiln_err err;
        status_clear(&err);
        assert_int_equal(mr_reader_open(&f, &sp, chunk, &rd, &err), KILN_OK);
        mr_reader_set_max_line(rd, 3);
        kslice line;
        uint64_t off;
        char got[64] = "";
        while (mr_reader_next(rd, &line, &off, &err) > 0) {
            strncat(got, (const char *)line.p, line.n);
            strcat(got, "|");
        }
        assert_string_equal(got, "ab|abc|abc|");
        assert_int_equal(mr_reader_skipped(rd, NULL), 1);
        mr_reader_close(rd);
    }
}

/* A rank's pieces: its splits cut end to end, in order, each non-gzip piece
 * within half a grain of the grain (a split under 1.5 grains whole), a gzip
 * file one piece; grain 0 gives the splits themselves. */
static void
pieces_cover_splits(void **state)
{
    (void)state;
    rng_state = 77;
    for (int round = 0; round < 400; round++) {
        mr_input in;
        memset(&in, 0, sizeof in);
        mr_input_file files[6];
        in.n = 1 + rnd() % 6;
        for (size_t i = 0; i < in.n; i++) {
            files[i].path = "x";
            files[i].size = rnd() % 4 == 0 ? rnd() % 10 : rnd() % 200000;
            files[i].gzip = rnd() % 5 == 0;
            in.total += files[i].size;
        }
        in.files = files;
        int nranks = 1 + (int)(rnd() % 7);
        uint64_t grain = rnd() % 3 == 0 ? 0 : 1 + rnd() % 50000;
        for (int r = 0; r < nranks; r++) {
            mr_split *sp, *pc;
            size_t ns = mr_input_splits(&in, nranks, r, &sp);
            size_t np = mr_input_pieces(&in, nranks, r, grain, &pc);
            assert_true(np >= ns);
            size_t k = 0;
            for (size_t i = 0; i < ns; i++) {
                uint64_t at = sp[i].start, len = sp[i].end - sp[i].start;
                if (len == 0) {   /* an empty gzip file: one empty piece */
                    assert_true(k < np);
                    assert_int_equal(pc[k].file, sp[i].file);
                    assert_int_equal(pc[k].start, sp[i].start);
                    assert_int_equal(pc[k].end, sp[i].end);
                    k++;
                    continue;
                }
                while (k < np && pc[k].file == sp[i].file && pc[k].start == at && at < sp[i].end) {
                    uint64_t plen = pc[k].end - pc[k].start;
                    assert_true(plen > 0);
                    if (grain == 0 || files[sp[i].file].gzip || len * 2 < grain * 3)
                        assert_true(plen == len);
                    else
                        assert_true(plen * 2 >= grain && plen * 2 <= grain * 3 + 2);
                    at = pc[k].end;
                    k++;
                }
                assert_int_equal(at, sp[i].end);
            }
            assert_int_equal(k, np);
            free(sp);
            free(pc);
        }
    }
}

/* A formatted input's splits dealt to ranks (mr_input_src_range): every
 * split read by exactly one rank, each rank's splits one contiguous run in
 * rank order, and no rank more than one split's weight over its share;
 * zero weights deal by count. */
static void
format_splits_dealt(void **state)
{
    (void)state;
    for (int round = 0; round < 300; round++) {
        mr_input_src src;
        memset(&src, 0, sizeof src);
        size_t n = (size_t)(rnd() % 40);
        int zero = round % 5 == 0;
        uint64_t maxw = 0, total = 0;
        src.split_off = calloc(n ? n : 1, sizeof *src.split_off);
        for (size_t i = 0; i < n; i++) {
            uint64_t w = zero ? 0 : (rnd() % 4 == 0 ? rnd() % 1000000 : rnd() % 1000);
            src.split_off[i] = src.plan.splits.len;
            buf_append_be64(&src.plan.splits, w);
            buf_append_be32(&src.plan.splits, 1);
            buf_append_u8(&src.plan.splits, (uint8_t)i);
            maxw = w > maxw ? w : maxw;
            total += w;
        }
        src.plan.n = n;
        src.plan.total = total;
        int nranks = 1 + (int)(rnd() % 9);
        size_t next = 0;
        for (int r = 0; r < nranks; r++) {
            size_t first, end;
            mr_input_src_range(&src, nranks, r, &first, &end);
            if (first == end)
                continue;
            assert_int_equal(first, next);   /* contiguous, in rank order */
            uint64_t mine = 0;
            for (size_t i = first; i < end; i++) {
                uint64_t w;
                kslice b = mr_input_src_split(&src, i, &w);
                assert_int_equal(b.n, 1);
                assert_int_equal(b.p[0], (uint8_t)i);
                mine += w;
            }
            if (!zero)
                assert_true(mine <= total / (uint64_t)nranks + maxw + 1);
            else
                assert_true(end - first <= n / (size_t)nranks + 1);
            next = end;
        }
        assert_int_equal(next, n);   /* every split dealt */
        buf_free(&src.plan.splits);
        free(src.split_off);
    }
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_mr_input: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_line_once),
        cmocka_unit_test(every_cut_point),
        cmocka_unit_test(gzip_whole),
        cmocka_unit_test(line_numbers),
        cmocka_unit_test(listing),
        cmocka_unit_test(splits_balance),
        cmocka_unit_test(pieces_cover_splits),
        cmocka_unit_test(long_line_pieces_read_their_own),
        cmocka_unit_test(crlf_line_at_the_limit),
        cmocka_unit_test(format_splits_dealt),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
