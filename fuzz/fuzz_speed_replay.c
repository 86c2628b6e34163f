/* fuzz_speed_replay.c -- libFuzzer target for the speed layer's replay of
 * the write-ahead log: the input becomes log records (framed by the log
 * itself, so they pass its checksums) of two tables, and a read-only speed
 * layer replays them into memstores and reads every table back.
 *
 * Input: records, each a selector byte (bit 0: table t or u; bit 1: a
 * record of an unknown table), a big-endian u16 payload length and the
 * payload (the speed layer's record: 8 bytes of base version, then a
 * mutation, storage/store/mutation.h), with a sequence number that grows
 * by the selector's high bits + 1.
 *
 * A refusal must be KILN_CORRUPTION naming the record; a replay that
 * succeeds must leave each table readable from end to end. Otherwise the
 * target traps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/base/env.h"
#include "storage/store/speed.h"
#include "storage/store/table.h"
#include "storage/store/wal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256], data_dir[320], wal_dir[400];

static void
trap(const char *why, const kiln_err *err)
{
    fprintf(stderr, "%s%s%s\n", why, err ? ": " : "", err ? err->msg : "");
    __builtin_trap();
}

static void
make_table(const char *name)
{
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "%s", name);
    kiln_err err;
    status_clear(&err);
    schema_family f;
    schema_family_defaults(&f, "f");
    f.max_versions = 3;
    if (schema_add_family(&s, &f, &err) != KILN_OK)
        trap("family", &err);
    schema_family_defaults(&f, "g");
    if (schema_add_family(&s, &f, &err) != KILN_OK ||
        schema_add_split(&s, (const uint8_t *)"m", 1, &err) != KILN_OK ||
        table_create(data_dir, &s, &err) != KILN_OK)
        trap("table", &err);
    schema_free(&s);
}

static void
setup(void)
{
    if (dir[0])
        return;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/kiln-fuzz-replay-XXXXXX", base ? base : "/tmp");
    if (mkdtemp(dir) == NULL)
        trap("mkdtemp", NULL);
    snprintf(data_dir, sizeof data_dir, "%s/data", dir);
    snprintf(wal_dir, sizeof wal_dir, "%s/%s", data_dir, SPEED_WAL_DIR);
    make_table("t");
    make_table("u");
}

static void
clear_wal(void)
{
    char **names;
    size_t n;
    if (env_list_dir(wal_dir, &names, &n, NULL) != KILN_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        char p[700];
        snprintf(p, sizeof p, "%s/%s", wal_dir, names[i]);
        unlink(p);
    }
    env_list_free(names, n);
}

static void
read_all(kiln_speed *s, const char *table)
{
    store_view *v;
    kiln_err err;
    status_clear(&err);
    if (speed_view(s, table, &v, &err) != KILN_OK)
        trap("view", &err);
    store_scan_opts o;
    store_scan_opts_init(&o);
    o.read.max_versions = 5;
    store_scan *sc;
    if (store_scan_open(v, &o, &sc, &err) != KILN_OK)
        trap("scan open", &err);
    for (;;) {
        store_row r;
        int has;
        if (store_scan_next(sc, &r, &has, &err) != KILN_OK)
            trap("scan", &err);
        if (!has)
            break;
    }
    store_scan_close(sc);
    store_view_unref(v);
}

int
LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
    setup();
    clear_wal();
    kiln_err err;
    status_clear(&err);
    wal *w;
    if (wal_open(wal_dir, NULL, &w, &err) != KILN_OK)
        trap("wal_open", &err);
    uint64_t seq = 0;
    size_t at = 0;
    while (at + 3 <= size) {
        uint8_t sel = in[at];
        size_t len = ((size_t)in[at + 1] << 8) | in[at + 2];
        at += 3;
        if (len > size - at)
            len = size - at;
        seq += (uint64_t)(sel >> 2) + 1;
        const char *table = (sel & 2) ? "gone" : (sel & 1) ? "u" : "t";
        uint64_t lsn;
        if (wal_append(w, table, seq, in + at, len, &lsn, &err) != KILN_OK)
            trap("wal_append", &err);
        at += len;
    }
    if (wal_close(w, &err) != KILN_OK)
        trap("wal_close", &err);

    speed_options o;
    speed_options_init(&o);
    o.read_only = 1;
    o.flush_check_ms = 0;
    kiln_speed *s;
    status_clear(&err);
    kiln_status st = speed_open(data_dir, NULL, &o, &s, &err);
    if (st != KILN_OK) {
        if (st != KILN_CORRUPTION || strstr(err.msg, "log record") == NULL)
            trap("replay refused without naming the record", &err);
        return 0;
    }
    read_all(s, "t");
    read_all(s, "u");
    speed_close(s);
    return 0;
}
