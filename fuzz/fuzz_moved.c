/* fuzz_moved.c -- libFuzzer target for the JOB/_MOVED record's parser
 * (bulkload/moved.h).
 *
 * Each input is parsed as it is, and again with a valid checksum line put
 * after its first four lines (so mutations reach the field checks past the
 * CRC). A refusal must be a clean KILN_CORRUPTION naming the file. What is
 * accepted must be canonical: formatting the record gives back exactly the
 * bytes it was parsed from. Otherwise the target traps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bulkload/moved.h"
#include "storage/base/crc32c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define WHAT "fuzz-moved"

static void
trap(const char *why, const kiln_err *err)
{
    fprintf(stderr, "%s%s%s\n", why, err ? ": " : "", err ? err->msg : "");
    __builtin_trap();
}

static void
check(const uint8_t *p, size_t n)
{
    moved_record r;
    kiln_err err;
    status_clear(&err);
    kiln_status st = moved_record_parse(WHAT, p, n, &r, &err);
    if (st != KILN_OK) {
        if (st != KILN_CORRUPTION)
            trap("unexpected status", &err);
        if (strstr(err.msg, WHAT) == NULL)
            trap("error does not name the file", &err);
        return;
    }
    char text[MOVED_RECORD_MAX + 1];
    size_t tn = moved_record_format(&r, text, sizeof text);
    if (tn == 0)
        trap("an accepted record cannot be written", NULL);
    if (tn != n || memcmp(text, p, n) != 0)
        trap("an accepted record is not canonical", NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check(data, size);
    /* The first four lines with the checksum they should carry. */
    size_t body = 0;
    for (int lines = 0; body < size && lines < 4; body++)
        lines += data[body] == '\n';
    if (size > MOVED_RECORD_MAX)
        return 0;
    uint8_t buf[MOVED_RECORD_MAX + 32];
    memcpy(buf, data, body);
    int k = snprintf((char *)buf + body, sizeof buf - body, "crc32c %08x\n",
                     (unsigned)crc32c_value(data, body));
    check(buf, body + (size_t)k);
    return 0;
}
