/* words.h -- the words of a piece of text: the runs of bytes between
 * whitespace (space, \t, \n, \v, \f, \r), found 16 bytes at a time.
 *
 * A byte-at-a-time split mispredicts a branch at nearly every word edge.
 * Here each 16 bytes become a mask of their whitespace (with SSE2, two
 * compares: ' ', and \t..\r as one unsigned range), and the edges are read
 * off the mask with count-trailing-zeros. The last partial 16 bytes are
 * copied into a block padded with spaces, so nothing past the text is read.
 *
 *   words_iter it;
 *   const uint8_t *w;
 *   size_t wn;
 *   words_init(&it, text, n);
 *   while (words_next(&it, &w, &wn))
 *       ... the word [w, w + wn) ...
 */
#ifndef KILN_JOBS_WORDS_H
#define KILN_JOBS_WORDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Bit i set when p[i] is whitespace, for the 16 bytes at p: one byte at a
 * time (the mask without SSE2). */
static inline uint32_t
words_space_mask16_bytes(const uint8_t *p)
{
    uint32_t m = 0;
    for (int i = 0; i < 16; i++)
        m |= (uint32_t)(p[i] == ' ' || (p[i] >= '\t' && p[i] <= '\r')) << i;
    return m;
}

/* The same, with SSE2 where the target has it. */
static inline uint32_t
words_space_mask16(const uint8_t *p)
{
#if defined(__SSE2__)
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i sp = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
    __m128i t = _mm_sub_epi8(v, _mm_set1_epi8('\t'));
    /* t <= '\r' - '\t', unsigned: min(t, 4) == t */
    __m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8('\r' - '\t')), t);
    return (uint32_t)_mm_movemask_epi8(_mm_or_si128(sp, ctl));
#else
    return words_space_mask16_bytes(p);
#endif
}

typedef struct words_iter {
    const uint8_t *p, *end; /* the block being read starts at p */
    const uint8_t *start;   /* the word being read, or NULL between words */
    size_t len;             /* bytes of text in the block (16 but at the end) */
    uint32_t sp;            /* the block's whitespace, bit i for p[i] */
    uint32_t rem;           /* the positions of the block not yet passed */
} words_iter;

static inline void
words_init(words_iter *it, const uint8_t *p, size_t n)
{
    it->p = p;
    it->end = p + n;
    it->start = NULL;
    it->len = 0;
    it->sp = 0;
    it->rem = 0;
}

/* The next word: 1 with *w and *wn set, or 0 when the text is done. */
static inline int
words_next(words_iter *it, const uint8_t **w, size_t *wn)
{
    for (;;) {
        /* the next edge: a word's first byte, or the whitespace after it */
        uint32_t look = (it->start != NULL ? it->sp : ~it->sp) & it->rem;
        if (look != 0) {
            unsigned i = (unsigned)__builtin_ctz(look);
            it->rem = (0xFFFFu << (i + 1)) & 0xFFFFu;
            if (it->start == NULL) {
                it->start = it->p + i;
                continue;
            }
            *w = it->start;
            *wn = (size_t)(it->p + i - it->start);
            it->start = NULL;
            return 1;
        }
        /* the block is passed (a call after the end stays there) */
        it->p += it->len;
        it->len = 0;
        it->rem = 0;
        size_t left = (size_t)(it->end - it->p);
        if (left == 0) {
            if (it->start == NULL)
                return 0;
            /* a word that runs to the end of a whole last block */
            *w = it->start;
            *wn = (size_t)(it->end - it->start);
            it->start = NULL;
            return 1;
        }
        if (left >= 16) {
            it->len = 16;
            it->sp = words_space_mask16(it->p);
        } else {
            /* past the text, spaces: a word there ends where the text does */
            uint8_t pad[16];
            memset(pad, ' ', sizeof pad);
            memcpy(pad, it->p, left);
            it->len = left;
            it->sp = words_space_mask16(pad);
        }
        it->rem = 0xFFFFu;
    }
}

#endif
