/* gen_corpus.c -- the wordcount benchmark corpus, as the peer word-count
 * measurements (MR-MPI, Phoenix++; mapreduce/ in the peer benchmark directory)
 * generated it: a data generator copied unchanged below this note, so that
 * bench/wordcount_bench.sh reads the same 200 MiB (seed 42) the peer figures
 * were measured on. Its output is checked by SHA-256 in wordcount_bench.sh.
 */
/*
 * gen_corpus.c - deterministic Zipf-distributed text corpus generator.
 *
 * Purpose: benchmark input for word-count style MapReduce / ETL runs.
 * Output is byte-identical for the same (seed, vocab, exponent, bytes,
 * min/max words per line) on any little- or big-endian 64-bit platform:
 * it uses its own PRNG (splitmix64 -> xoshiro256**) and no libc rand().
 *
 * Build:  cc -O2 -o gen_corpus gen_corpus.c -lm
 * Usage:  gen_corpus [-s seed] [-v vocab] [-z exponent] [-b bytes]
 *                    [-w minwords] [-W maxwords] [-o outfile]
 * Defaults: -s 42 -v 1000000 -z 1.0 -b 209715200 (200 MiB)
 *           -w 8 -W 16, output to stdout.
 *
 * Model:
 *  - Vocabulary: `vocab` distinct lowercase ASCII words. Each word's length
 *    is 2 + (sum of two uniform draws in 0..6), i.e. 2..14 chars (mean 8);
 *    letters uniform a-z; duplicates are rejected and redrawn. The words
 *    are then stable-sorted by length, so rank 1 (most frequent) gets the
 *    shortest word, as in natural language.
 *  - Tokens: rank r (1-based) is drawn with probability proportional to
 *    1 / r^exponent (Zipf), by binary search over the cumulative table.
 *  - Lines: each line holds U[minwords, maxwords] tokens separated by one
 *    space and ends with '\n'. Generation stops after the first line end
 *    at or beyond `bytes`, so the file is slightly longer than `bytes`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

static uint64_t s[4];

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t next64(void) {
    uint64_t r = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = rotl(s[3], 45);
    return r;
}

/* uniform integer in [0, n) without modulo bias (rejection sampling) */
static inline uint64_t below(uint64_t n) {
    uint64_t lim = UINT64_MAX - (UINT64_MAX % n);
    uint64_t x;
    do { x = next64(); } while (x >= lim);
    return x % n;
}

static inline double unif01(void) { return (double)(next64() >> 11) * (1.0 / 9007199254740992.0); }

/* open-addressing hash set of words, used only to reject duplicates */
typedef struct { char **slot; uint64_t mask; } set_t;

static uint64_t fnv1a(const char *p) {
    uint64_t h = 0xcbf29ce484222325ULL;
    while (*p) { h ^= (unsigned char)*p++; h *= 0x100000001b3ULL; }
    return h;
}

static int set_insert(set_t *st, char *w) {
    uint64_t i = fnv1a(w) & st->mask;
    while (st->slot[i]) {
        if (strcmp(st->slot[i], w) == 0) return 0;
        i = (i + 1) & st->mask;
    }
    st->slot[i] = w;
    return 1;
}

typedef struct { char *w; int len; uint32_t idx; } word_t;

static int cmp_len(const void *a, const void *b) {
    const word_t *x = a, *y = b;
    if (x->len != y->len) return x->len - y->len;
    return (x->idx > y->idx) - (x->idx < y->idx); /* stable */
}

static void usage(void) {
    fprintf(stderr, "usage: gen_corpus [-s seed] [-v vocab] [-z exponent] [-b bytes] "
                    "[-w minwords] [-W maxwords] [-o outfile]\n");
    exit(2);
}

int main(int argc, char **argv) {
    uint64_t seed = 42, vocab = 1000000, bytes = 209715200ULL;
    double zexp = 1.0;
    int minw = 8, maxw = 16;
    const char *out = NULL;

    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) usage();
        const char *a = argv[i], *v = argv[++i];
        if (!strcmp(a, "-s")) seed = strtoull(v, NULL, 0);
        else if (!strcmp(a, "-v")) vocab = strtoull(v, NULL, 0);
        else if (!strcmp(a, "-z")) zexp = strtod(v, NULL);
        else if (!strcmp(a, "-b")) bytes = strtoull(v, NULL, 0);
        else if (!strcmp(a, "-w")) minw = atoi(v);
        else if (!strcmp(a, "-W")) maxw = atoi(v);
        else if (!strcmp(a, "-o")) out = v;
        else usage();
    }
    if (vocab < 1 || vocab > 100000000ULL || minw < 1 || maxw < minw) usage();

    uint64_t sm = seed;
    for (int i = 0; i < 4; i++) s[i] = splitmix64(&sm);

    /* 1. vocabulary */
    word_t *words = malloc(vocab * sizeof *words);
    char *pool = malloc(vocab * 15);
    set_t st;
    uint64_t cap = 1;
    while (cap < vocab * 2) cap <<= 1;
    st.mask = cap - 1;
    st.slot = calloc(cap, sizeof(char *));
    if (!words || !pool || !st.slot) { perror("malloc"); return 1; }
    for (uint64_t i = 0; i < vocab; i++) {
        char *w = pool + i * 15;
        for (;;) {
            int len = 2 + (int)below(7) + (int)below(7);
            for (int k = 0; k < len; k++) w[k] = (char)('a' + below(26));
            w[len] = 0;
            if (set_insert(&st, w)) { words[i].w = w; words[i].len = len; words[i].idx = (uint32_t)i; break; }
        }
    }
    free(st.slot);
    qsort(words, vocab, sizeof *words, cmp_len);

    /* 2. Zipf cumulative table */
    double *cdf = malloc(vocab * sizeof *cdf);
    if (!cdf) { perror("malloc"); return 1; }
    double acc = 0;
    for (uint64_t r = 0; r < vocab; r++) { acc += pow((double)(r + 1), -zexp); cdf[r] = acc; }
    for (uint64_t r = 0; r < vocab; r++) cdf[r] /= acc;
    cdf[vocab - 1] = 1.0;

    /* 3. emit */
    FILE *fo = out ? fopen(out, "wb") : stdout;
    if (!fo) { perror(out); return 1; }
    static char buf[1 << 16];
    setvbuf(fo, NULL, _IOFBF, 1 << 22);
    uint64_t written = 0, ntok = 0, nlines = 0;
    while (written < bytes) {
        int nw = minw + (int)below((uint64_t)(maxw - minw + 1));
        size_t n = 0;
        for (int k = 0; k < nw; k++) {
            double u = unif01();
            uint64_t lo = 0, hi = vocab - 1;
            while (lo < hi) { uint64_t mid = (lo + hi) >> 1; if (cdf[mid] < u) lo = mid + 1; else hi = mid; }
            if (k) buf[n++] = ' ';
            memcpy(buf + n, words[lo].w, (size_t)words[lo].len);
            n += (size_t)words[lo].len;
        }
        buf[n++] = '\n';
        if (fwrite(buf, 1, n, fo) != n) { perror("write"); return 1; }
        written += n; ntok += (uint64_t)nw; nlines++;
    }
    if (fo == stdout ? fflush(fo) : fclose(fo)) { perror("close"); return 1; }
    fprintf(stderr, "gen_corpus: seed=%llu vocab=%llu z=%g bytes=%llu lines=%llu tokens=%llu\n",
            (unsigned long long)seed, (unsigned long long)vocab, zexp,
            (unsigned long long)written, (unsigned long long)nlines, (unsigned long long)ntok);
    return 0;
}
