/* speed_admin.c -- speed_admin.h: each operation is the speed layer's call
 * bracketed by two looks at the table's published version (its number,
 * regions and files), which is what the result reports.
 */
#include "serving/speed_admin.h"

#include <string.h>

#include "storage/query/json.h"
#include "storage/store/manifest.h"
#include "storage/store/store_view.h"

static const char *const speed_admin_names[] = {"flush", "compact", "split"};

int
speed_admin_op_parse(const char *word, size_t n, speed_admin_op *out)
{
    for (int i = 0; i < 3; i++) {
        if (strlen(speed_admin_names[i]) == n && memcmp(word, speed_admin_names[i], n) == 0) {
            *out = (speed_admin_op)i;
            return 0;
        }
    }
    return -1;
}

const char *
speed_admin_op_name(speed_admin_op op)
{
    return (unsigned)op < 3 ? speed_admin_names[op] : "?";
}

/* The published version's number, regions and files (speed-layer ones apart). */
static kiln_status
speed_admin_look(kiln_speed *s, const char *table, uint64_t *version, uint64_t *regions,
                 uint64_t *files, uint64_t *speed_files, kiln_err *err)
{
    store_view *v;
    kiln_status st = speed_view(s, table, &v, err);
    if (st != KILN_OK)
        return st;
    *version = store_view_version(v);
    *regions = store_view_region_count(v);
    *files = 0;
    if (speed_files != NULL)
        *speed_files = 0;
    const manifest *m = store_view_manifest(v);
    if (m != NULL && m->table_count > 0) {
        const manifest_table *mt = &m->tables[0];
        for (size_t i = 0; i < mt->region_count; i++) {
            *files += mt->regions[i].file_count;
            for (size_t k = 0; speed_files != NULL && k < mt->regions[i].file_count; k++)
                *speed_files += (mt->regions[i].files[k].flags & MANIFEST_FILE_SPEED) != 0;
        }
    }
    store_view_unref(v);
    return KILN_OK;
}

kiln_status
speed_admin_run(kiln_speed *s, const char *table, speed_admin_op op, int major,
                uint64_t max_bytes, speed_admin_result *r, kiln_err *err)
{
    memset(r, 0, sizeof *r);
    r->op = op;
    r->major = op == SPEED_ADMIN_COMPACT && major;
    r->max_bytes = op == SPEED_ADMIN_SPLIT ? max_bytes : 0;
    kiln_status st = speed_admin_look(s, table, &r->version_before, &r->regions_before,
                                      &r->files_before, NULL, err);
    if (st != KILN_OK)
        return st;
    switch (op) {
    case SPEED_ADMIN_FLUSH: {
        speed_table_stats ts;
        st = speed_table_stats_get(s, table, &ts, err);
        if (st == KILN_OK) {
            r->cells = ts.memstore_cells;
            r->bytes = ts.memstore_bytes;
            st = speed_flush(s, table, err);
        }
        break;
    }
    case SPEED_ADMIN_COMPACT:
        st = speed_compact(s, table, r->major, &r->compact, err);
        break;
    case SPEED_ADMIN_SPLIT: {
        size_t n = 0;
        st = speed_split(s, table, max_bytes, &n, err);
        r->splits = n;
        break;
    }
    default:
        return status_set(err, KILN_INVALID, "%s: unknown operation", table);
    }
    if (st != KILN_OK)
        return st;
    return speed_admin_look(s, table, &r->version, &r->regions, &r->files, &r->speed_files, err);
}

/* ------------------------------------------------------------------ JSON */

static void
speed_admin_kv(kbuf *out, const char *key, uint64_t v)
{
    json_raw(out, ",\"");
    json_raw(out, key);
    json_raw(out, "\":");
    json_u64(out, v);
}

void
speed_admin_json(const speed_admin_result *r, const char *table, kbuf *out)
{
    json_raw(out, "{\"table\":");
    json_str_append(out, table, strlen(table));
    json_raw(out, ",\"op\":\"");
    json_raw(out, speed_admin_op_name(r->op));
    json_raw(out, "\"");
    speed_admin_kv(out, "version", r->version);
    speed_admin_kv(out, "previous_version", r->version_before);
    speed_admin_kv(out, "regions", r->regions);
    speed_admin_kv(out, "previous_regions", r->regions_before);
    speed_admin_kv(out, "files", r->files);
    speed_admin_kv(out, "previous_files", r->files_before);
    speed_admin_kv(out, "speed_files", r->speed_files);
    if (r->op == SPEED_ADMIN_FLUSH) {
        speed_admin_kv(out, "cells", r->cells);
        speed_admin_kv(out, "bytes", r->bytes);
    } else if (r->op == SPEED_ADMIN_COMPACT) {
        json_raw(out, r->major ? ",\"major\":true" : ",\"major\":false");
        speed_admin_kv(out, "compactions", r->compact.compactions);
        speed_admin_kv(out, "files_in", r->compact.files_in);
        speed_admin_kv(out, "cells_in", r->compact.cells_in);
        speed_admin_kv(out, "cells_out", r->compact.cells_out);
        speed_admin_kv(out, "bytes_out", r->compact.bytes_out);
    } else {
        speed_admin_kv(out, "max_bytes", r->max_bytes);
        speed_admin_kv(out, "splits", r->splits);
    }
    json_raw(out, "}");
}

/* A member that must be a non-negative integer; absent members read 0. */
static int
speed_admin_u64(const json_node *root, const char *key, uint64_t *out)
{
    const json_node *v = json_get(root, key);
    int64_t x = 0;
    if (v == NULL) {
        *out = 0;
        return 0;
    }
    if (json_int(v, &x) != 0 || x < 0)
        return -1;
    *out = (uint64_t)x;
    return 0;
}

kiln_status
speed_admin_from_json(const char *text, size_t n, speed_admin_result *r, kiln_err *err)
{
    memset(r, 0, sizeof *r);
    json_doc *d = NULL;
    kiln_err jerr;
    status_clear(&jerr);
    if (json_parse(text, n, &d, &jerr) != KILN_OK)
        return status_set(err, KILN_CORRUPTION, "admin answer: %s", jerr.msg);
    const json_node *root = json_root(d);
    size_t wl = 0;
    const char *word = json_str(json_get(root, "op"), &wl);
    uint64_t splits = 0;
    int bad = word == NULL || speed_admin_op_parse(word, wl, &r->op) != 0;
    bad = bad || speed_admin_u64(root, "version", &r->version) != 0 ||
          speed_admin_u64(root, "previous_version", &r->version_before) != 0 ||
          speed_admin_u64(root, "regions", &r->regions) != 0 ||
          speed_admin_u64(root, "previous_regions", &r->regions_before) != 0 ||
          speed_admin_u64(root, "files", &r->files) != 0 ||
          speed_admin_u64(root, "previous_files", &r->files_before) != 0 ||
          speed_admin_u64(root, "speed_files", &r->speed_files) != 0 ||
          speed_admin_u64(root, "cells", &r->cells) != 0 ||
          speed_admin_u64(root, "bytes", &r->bytes) != 0 ||
          speed_admin_u64(root, "compactions", &r->compact.compactions) != 0 ||
          speed_admin_u64(root, "files_in", &r->compact.files_in) != 0 ||
          speed_admin_u64(root, "cells_in", &r->compact.cells_in) != 0 ||
          speed_admin_u64(root, "cells_out", &r->compact.cells_out) != 0 ||
          speed_admin_u64(root, "bytes_out", &r->compact.bytes_out) != 0 ||
          speed_admin_u64(root, "max_bytes", &r->max_bytes) != 0 ||
          speed_admin_u64(root, "splits", &splits) != 0;
    r->splits = splits;
    r->major = json_node_type(json_get(root, "major")) == JSON_TRUE;
    if (r->op == SPEED_ADMIN_COMPACT && r->version != r->version_before)
        r->compact.version = r->version;
    json_doc_free(d);
    if (bad)
        return status_set(err, KILN_CORRUPTION, "admin answer: not an operation's result");
    return KILN_OK;
}
