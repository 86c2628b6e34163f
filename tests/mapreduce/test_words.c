/* test_words.c -- the word split of jobs/words.h against a byte-at-a-time
 * split written here: fixed texts at the 16-byte block edges, every byte
 * value as a one-byte text, and random texts of every length to 200 drawn
 * from the six whitespace bytes and their neighbours. The split must give
 * the same words, in order, at the same addresses, and read nothing past the
 * text (the texts sit at the end of a mapping whose next page is not). The
 * SSE2 and the byte-at-a-time masks agree on every byte at every position. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jobs/words.h"

#define MAX_WORDS 256

typedef struct word {
    size_t off, len;
} word;

static int
is_space(uint8_t c)
{
    return memchr(" \t\n\v\f\r", c, 6) != NULL;
}

/* The reference: one byte at a time. */
static size_t
split_bytes(const uint8_t *p, size_t n, word *out)
{
    size_t k = 0, i = 0;
    while (i < n) {
        while (i < n && is_space(p[i]))
            i++;
        size_t s = i;
        while (i < n && !is_space(p[i]))
            i++;
        if (i > s)
            out[k++] = (word){s, i - s};
    }
    return k;
}

static size_t
split_words(const uint8_t *p, size_t n, word *out)
{
    words_iter it;
    const uint8_t *w;
    size_t wn, k = 0;
    words_init(&it, p, n);
    while (words_next(&it, &w, &wn)) {
        assert_true(k < MAX_WORDS);
        assert_true(w >= p && wn > 0 && w + wn <= p + n);
        out[k++] = (word){(size_t)(w - p), wn};
    }
    assert_int_equal(words_next(&it, &w, &wn), 0);   /* and stays done */
    return k;
}

/* A page of text whose next page is unmapped: a text placed at its end
 * faults if the split reads a byte past it. */
static uint8_t *guard_page;
static size_t page_size;

static int
setup(void **state)
{
    (void)state;
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *m = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    if (m == MAP_FAILED || mprotect(m + page_size, page_size, PROT_NONE) != 0)
        return -1;
    guard_page = m;
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    munmap(guard_page, 2 * page_size);
    return 0;
}

static void
check_text(const uint8_t *text, size_t n)
{
    uint8_t *p = guard_page + page_size - n;   /* ends at the guard */
    memcpy(p, text, n);
    word want[MAX_WORDS], got[MAX_WORDS];
    size_t nw = split_bytes(p, n, want), ng = split_words(p, n, got);
    if (nw != ng)
        fail_msg("text of %zu bytes: %zu words, the byte split finds %zu", n, ng, nw);
    for (size_t i = 0; i < nw; i++)
        if (want[i].off != got[i].off || want[i].len != got[i].len)
            fail_msg("text of %zu bytes, word %zu: at %zu, %zu bytes; the byte split has %zu, %zu",
                     n, i, got[i].off, got[i].len, want[i].off, want[i].len);
}

static void
check_str(const char *s)
{
    check_text((const uint8_t *)s, strlen(s));
}

static void
fixed_texts(void **state)
{
    (void)state;
    check_text((const uint8_t *)"", 0);
    check_str(" ");
    check_str("a");
    check_str("a b");
    check_str("  leading and trailing  ");
    check_str("tab\tnewline\nvtab\vform\ffeed\rcr\r\nend");
    check_str("0123456789abcdef");                   /* one whole block, one word */
    check_str("0123456789abcde ");                   /* the block's last byte ends it */
    check_str(" 123456789abcdef");
    check_str("0123456789abcdefg");                  /* a word across the edge */
    check_str("0123456789abcdef 0123456789abcdef");
    check_str("0123456789abcdef0123456789abcdef");   /* a word of two whole blocks */
    check_str("a b c d e f g h i j k l m n o p q r s t u v w x y z");
    char long_word[100];
    memset(long_word, 'x', sizeof long_word - 1);
    long_word[sizeof long_word - 1] = '\0';
    check_str(long_word);
    /* bytes next to the whitespace range, and ones that wrap under \t - 9 */
    const uint8_t edge[] = {0x08, 0x0E, 0x1F, 0x21, 0x00, 0x80, 0xFF, 0x89, 0x8D, 0xA0};
    check_text(edge, sizeof edge);
}

static void
every_byte(void **state)
{
    (void)state;
    for (int c = 0; c < 256; c++) {
        uint8_t t[33];
        for (size_t n = 1; n <= sizeof t; n += 16) {
            memset(t, c, n);
            check_text(t, n);
        }
        uint8_t mix[3] = {'a', (uint8_t)c, 'b'};
        check_text(mix, sizeof mix);
    }
}

/* Both masks, with every byte value at every position of a block. */
static void
masks_agree(void **state)
{
    (void)state;
    uint8_t b[16];
    for (int c = 0; c < 256; c++)
        for (int at = 0; at < 16; at++) {
            memset(b, 'x', sizeof b);
            b[at] = (uint8_t)c;
            uint32_t want = is_space((uint8_t)c) ? 1u << at : 0;
            assert_int_equal(words_space_mask16_bytes(b), want);
            assert_int_equal(words_space_mask16(b), want);
        }
}

static void
random_texts(void **state)
{
    (void)state;
    static const uint8_t alphabet[] = {' ', '\t', '\n', '\v', '\f', '\r', 0x08, 0x0E, 0x1F,
                                       0x00, 0x80, 0xFF, 0x89, 'a', 'b', 'z'};
    uint64_t x = 0x9E3779B97F4A7C15ull;
    uint8_t t[200];
    for (int round = 0; round < 20000; round++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t n = (size_t)(x % (sizeof t + 1));
        /* a bias toward long words or long gaps in some texts */
        unsigned spaces = (unsigned)(x >> 40) % 8 + 1;
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            unsigned r = (unsigned)(x >> 32);
            t[i] = r % 16 < spaces ? alphabet[r % 6] : alphabet[6 + (r >> 8) % 10];
        }
        check_text(t, n);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixed_texts),
        cmocka_unit_test(every_byte),
        cmocka_unit_test(masks_agree),
        cmocka_unit_test(random_texts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
