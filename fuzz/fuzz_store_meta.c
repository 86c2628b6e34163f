/* fuzz_store_meta.c -- libFuzzer target for the region store's metadata
 * decoders: the schema record, the manifest record (with its tables' schemas
 * and its index tables' definitions) and the CURRENT pointer.
 *
 * Each input is decoded twice per kind: as it is, and with its first byte
 * choosing a kind and the rest wrapped in a valid frame (magic, version,
 * length, CRC32C), so mutations also reach the body decoders past the frame
 * check. A refusal must be a clean KILN_CORRUPTION or KILN_UNSUPPORTED naming
 * the file. What is accepted must be canonical: encoding it and decoding the
 * result succeeds and encodes to the same bytes, a manifest's publish group
 * passes manifest_check_tables, and each index table's definition parses
 * back from its own column list. Otherwise the target traps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/base/buf.h"
#include "storage/store/manifest.h"
#include "storage/store/schema.h"
#include "storage/store/store_index_def.h"
#include "storage/base/store_rec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define WHAT "fuzz-meta"

static void
trap(const char *why, const kiln_err *err)
{
    fprintf(stderr, "%s%s%s\n", why, err ? ": " : "", err ? err->msg : "");
    __builtin_trap();
}

static void
expect_clean(kiln_status st, const kiln_err *err)
{
    if (st != KILN_CORRUPTION && st != KILN_UNSUPPORTED)
        trap("unexpected status", err);
    if (strstr(err->msg, WHAT) == NULL)
        trap("error does not name the file", err);
}

static void
check_schema(const uint8_t *p, size_t n)
{
    kiln_schema s;
    kiln_err err;
    status_clear(&err);
    kiln_status st = schema_decode(p, n, WHAT, &s, NULL, &err);
    if (st != KILN_OK) {
        expect_clean(st, &err);
        return;
    }
    kbuf a = KBUF_INIT, b = KBUF_INIT;
    schema_encode(&s, &a);
    kiln_schema s2;
    status_clear(&err);
    if (schema_decode(a.data, a.len, WHAT, &s2, NULL, &err) != KILN_OK)
        trap("an accepted schema does not decode after encoding", &err);
    schema_encode(&s2, &b);
    if (!kslice_eq(buf_slice(&a), buf_slice(&b)))
        trap("schema encoding is not stable", NULL);
    const char *cols = schema_get_prop(&s, STORE_INDEX_PROP_COLUMNS);
    if (store_index_schema_is_index(&s) && cols != NULL && strlen(cols) < 60000) {
        /* an index table's column list parses back to itself */
        kbuf spec = KBUF_INIT;
        buf_append(&spec, "x:", 2);
        buf_append(&spec, cols, strlen(cols));
        buf_append_u8(&spec, 0);
        store_index_def d;
        status_clear(&err);
        if (store_index_def_parse((const char *)spec.data, &d, &err) == KILN_OK) {
            buf_reset(&spec);
            buf_append(&spec, "x:", 2);
            store_index_columns_format(&d, &spec);
            buf_append_u8(&spec, 0);
            store_index_def d2;
            status_clear(&err);
            if (store_index_def_parse((const char *)spec.data, &d2, &err) != KILN_OK ||
                !store_index_def_equal(&d, &d2))
                trap("index columns do not survive their own format", &err);
            store_index_def_free(&d2);
            store_index_def_free(&d);
        }
        buf_free(&spec);
    }
    schema_free(&s2);
    schema_free(&s);
    buf_free(&a);
    buf_free(&b);
}

static void
check_manifest(const uint8_t *p, size_t n)
{
    manifest m;
    kiln_err err;
    status_clear(&err);
    uint32_t crc;
    kiln_status st = manifest_decode(p, n, WHAT, &m, &crc, &err);
    if (st != KILN_OK) {
        expect_clean(st, &err);
        return;
    }
    status_clear(&err);
    if (manifest_check_tables(&m, &err) != KILN_OK)
        trap("an accepted manifest fails its table checks", &err);
    for (size_t i = 1; i < m.table_count; i++) {
        store_index_def d;
        status_clear(&err);
        if (store_index_def_from_schema(&m.tables[0].schema, &m.tables[i].schema, &d, &err) !=
            KILN_OK)
            trap("an accepted manifest holds a bad index table", &err);
        store_index_def_free(&d);
    }
    kbuf a = KBUF_INIT, b = KBUF_INIT;
    manifest_encode(&m, &a);
    manifest m2;
    status_clear(&err);
    if (manifest_decode(a.data, a.len, WHAT, &m2, NULL, &err) != KILN_OK)
        trap("an accepted manifest does not decode after encoding", &err);
    manifest_encode(&m2, &b);
    if (!kslice_eq(buf_slice(&a), buf_slice(&b)))
        trap("manifest encoding is not stable", NULL);
    /* a deep copy encodes the same */
    manifest m3;
    manifest_copy(&m3, &m2);
    buf_reset(&b);
    manifest_encode(&m3, &b);
    if (!kslice_eq(buf_slice(&a), buf_slice(&b)))
        trap("a copied manifest encodes differently", NULL);
    manifest_free(&m3);
    manifest_free(&m2);
    manifest_free(&m);
    buf_free(&a);
    buf_free(&b);
}

static void
check_pointer(const uint8_t *p, size_t n)
{
    manifest_pointer ptr;
    kiln_err err;
    status_clear(&err);
    kiln_status st = manifest_pointer_decode(p, n, WHAT, &ptr, &err);
    if (st != KILN_OK) {
        expect_clean(st, &err);
        return;
    }
    kbuf a = KBUF_INIT;
    manifest_pointer_encode(&ptr, &a);
    if (!kslice_eq(buf_slice(&a), kslice_make(p, n)))
        trap("an accepted pointer is not canonical", NULL);
    buf_free(&a);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_schema(data, size);
    check_manifest(data, size);
    check_pointer(data, size);
    if (size == 0)
        return 0;
    /* the rest of the input as the body of a well-framed record */
    static const char *magics[3] = {SCHEMA_MAGIC, MANIFEST_MAGIC, MANIFEST_POINTER_MAGIC};
    int kind = data[0] % 3;
    kbuf rec = KBUF_INIT;
    store_rec_frame(&rec, magics[kind], 1, data + 1, size - 1);
    if (kind == 0)
        check_schema(rec.data, rec.len);
    else if (kind == 1)
        check_manifest(rec.data, rec.len);
    else
        check_pointer(rec.data, rec.len);
    buf_free(&rec);
    return 0;
}
