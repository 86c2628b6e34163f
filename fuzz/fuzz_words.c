/* fuzz_words.c -- libFuzzer target for word count's line split
 * (jobs/words.h): the input is one text. The split must give exactly the
 * words a byte-at-a-time split finds, in order, each inside the text, and
 * read nothing past it (the input buffer ends where the text does, so
 * AddressSanitizer catches a read beyond). Otherwise the target traps.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "jobs/words.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
byte_is_space(uint8_t c)
{
    return memchr(" \t\n\v\f\r", c, 6) != NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    words_iter it;
    const uint8_t *w;
    size_t wn, i = 0;
    words_init(&it, data, size);
    while (words_next(&it, &w, &wn)) {
        while (i < size && byte_is_space(data[i]))
            i++;
        size_t s = i;
        while (i < size && !byte_is_space(data[i]))
            i++;
        if (i == s || w != data + s || wn != i - s)
            __builtin_trap();   /* a word the byte split has not, or another one */
    }
    while (i < size && byte_is_space(data[i]))
        i++;
    if (i != size || words_next(&it, &w, &wn))
        __builtin_trap();       /* a word missed at the end, or one after it */
    return 0;
}
