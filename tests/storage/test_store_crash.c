/* test_store_crash.c -- crash safety of publishing a view version, by fault
 * injection through the file layer: every write, fsync, rename, open and
 * unlink of a load (stage files, write the manifest, swap CURRENT, collect
 * garbage) is failed in turn. After each, a fresh open of the table must find
 * exactly the old version or exactly the new one, with every file intact, and
 * the next successful load must leave no orphaned file or manifest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/base/crc32c.h"
#include "storage/base/env.h"
#include "storage/base/env_power.h"
#include "storage/store/manifest.h"
#include "storage/store/schema.h"
#include "storage/store/table.h"
#include "tests/support/test_util.h"

static uint64_t rng_state;

static uint64_t
rnd(void)
{
    return tu_splitmix64(&rng_state);
}

/* Content CRC of every file written, by name, to check files survive intact. */
#define MAX_FILES 256
static char file_names[MAX_FILES][MANIFEST_FILE_NAME_MAX + 1];
static uint32_t file_crcs[MAX_FILES];
static size_t file_count;

static void
remember(const char *name, uint32_t crc)
{
    for (size_t i = 0; i < file_count; i++) {
        if (strcmp(file_names[i], name) == 0) {
            file_crcs[i] = crc;
            return;
        }
    }
    assert_true(file_count < MAX_FILES);
    snprintf(file_names[file_count], sizeof file_names[0], "%s", name);
    file_crcs[file_count++] = crc;
}

static uint32_t
remembered(const char *name)
{
    for (size_t i = 0; i < file_count; i++) {
        if (strcmp(file_names[i], name) == 0)
            return file_crcs[i];
    }
    fail_msg("file %s was never written", name);
    return 0;
}

static kiln_status
write_store_file(kiln_table *t, const char *name, size_t size, kiln_err *err)
{
    char p[4096];
    table_file_path(t, name, p, sizeof p);
    env_file *f;
    kiln_status st = env_create(p, 0, &f, err);
    if (st != KILN_OK)
        return st;
    uint8_t buf[4096];
    uint32_t crc = 0;
    for (size_t i = 0; i < size && st == KILN_OK; i += sizeof buf) {
        size_t n = size - i < sizeof buf ? size - i : sizeof buf;
        for (size_t j = 0; j < n; j++)
            buf[j] = (uint8_t)rnd();
        crc = crc32c_extend(crc, buf, n);
        st = env_append(f, buf, n, err);
    }
    if (st == KILN_OK)
        st = env_sync(f, err);
    kiln_status c = env_close(f, err);
    if (st == KILN_OK)
        st = c;
    remember(name, crc);
    return st;
}

/* What a bulk load does to the store: stage files, sync the directory,
 * publish, collect garbage. Returns the first failure. */
static kiln_status
load(kiln_table *t, int append, uint64_t *version, int *published, kiln_err *err)
{
    *published = 0;
    kiln_status st = table_next_version(t, version, err);
    if (st != KILN_OK)
        return st;
    manifest m, parent;
    int have_parent = table_read_current(t, &parent, NULL) == KILN_OK;
    if (append && have_parent) {
        manifest_copy(&m, &parent);
        m.kind = MANIFEST_KIND_APPEND;
    } else {
        manifest_init(&m);
        manifest_add_table(&m, table_schema(t));
        m.kind = MANIFEST_KIND_REPLACE;
    }
    m.version = *version;
    m.parent = have_parent ? parent.version : 0;
    m.created_ms = table_now_ms();
    if (have_parent)
        manifest_free(&parent);
    manifest_table *mt = &m.tables[0];
    for (size_t r = 0; r < mt->region_count && st == KILN_OK; r++) {
        manifest_file f;
        memset(&f, 0, sizeof f);
        snprintf(f.family, sizeof f.family, "cf");
        table_file_name(*version, (uint32_t)r, f.name);
        f.size = 5000 + rnd() % 20000;
        f.seq = *version;
        st = write_store_file(t, f.name, f.size, err);
        manifest_region_add_file(&mt->regions[r], &f);
    }
    char fdir[4200];
    snprintf(fdir, sizeof fdir, "%s/%s", table_dir(t), TABLE_FILES_DIR);
    if (st == KILN_OK)
        st = env_sync_dir(fdir, err);
    if (st == KILN_OK)
        st = table_publish(t, &m, published, err);
    manifest_free(&m);
    if (st == KILN_OK)
        st = table_gc(t, NULL, err);
    return st;
}

static void
fresh_store(const char *data, int regions)
{
    tu_rmrf(data);
    kiln_err err;
    status_clear(&err);
    kiln_schema s;
    schema_init(&s);
    snprintf(s.name, sizeof s.name, "ns:crash");
    schema_family f;
    schema_family_defaults(&f, "cf");
    tu_must(schema_add_family(&s, &f, &err), &err);
    for (int i = 1; i < regions; i++) {
        uint8_t k[2] = {(uint8_t)(i * 40), 0x01};
        tu_must(schema_add_split(&s, k, 2, &err), &err);
    }
    tu_must(table_create(data, &s, &err), &err);
    schema_free(&s);
}

/* Check the table holds exactly version want_a or want_b, with intact files.
 * Returns the version found. */
static uint64_t
check_consistent(const char *data, uint64_t want_a, uint64_t want_b)
{
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    tu_must(table_open(data, "ns:crash", &t, &err), &err);
    manifest m;
    tu_must(table_read_current(t, &m, &err), &err);
    if (m.version != want_a && m.version != want_b)
        fail_msg("current version %llu, expected %llu or %llu", (unsigned long long)m.version,
                 (unsigned long long)want_a, (unsigned long long)want_b);
    for (size_t r = 0; r < m.tables[0].region_count; r++) {
        const manifest_region *reg = &m.tables[0].regions[r];
        for (size_t f = 0; f < reg->file_count; f++) {
            char p[4096];
            table_file_path(t, reg->files[f].name, p, sizeof p);
            kbuf b = KBUF_INIT;
            tu_must(env_read_file(p, &b, &err), &err);
            assert_int_equal(b.len, reg->files[f].size);
            assert_int_equal(crc32c_value(b.data, b.len), remembered(reg->files[f].name));
            buf_free(&b);
        }
    }
    uint64_t v = m.version;
    manifest_free(&m);
    table_close(t);
    return v;
}

/* After a successful load + GC: files/ holds exactly the kept manifests' files,
 * manifests/ exactly the kept versions, and no temporary file is left. */
static void
check_no_orphans(const char *data)
{
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    tu_must(table_open(data, "ns:crash", &t, &err), &err);
    uint64_t *vs;
    size_t nv;
    tu_must(table_versions(t, &vs, &nv, &err), &err);
    assert_true(nv >= 1 && nv <= 2);
    size_t referenced = 0;
    char names[64][MANIFEST_FILE_NAME_MAX + 1];
    for (size_t i = 0; i < nv; i++) {
        manifest m;
        tu_must(table_read_manifest(t, vs[i], &m, NULL, &err), &err);
        for (size_t r = 0; r < m.tables[0].region_count; r++) {
            for (size_t f = 0; f < m.tables[0].regions[r].file_count; f++) {
                const char *n = m.tables[0].regions[r].files[f].name;
                int dup = 0;
                for (size_t j = 0; j < referenced; j++)
                    dup |= strcmp(names[j], n) == 0;
                if (!dup) {
                    assert_true(referenced < 64);
                    snprintf(names[referenced++], sizeof names[0], "%s", n);
                }
            }
        }
        manifest_free(&m);
    }
    free(vs);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", table_dir(t), TABLE_FILES_DIR);
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t present = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        int known = 0;
        for (size_t j = 0; j < referenced; j++)
            known |= strcmp(names[j], e->d_name) == 0;
        if (!known)
            fail_msg("orphaned file %s/%s", dir, e->d_name);
        present++;
    }
    closedir(d);
    assert_int_equal(present, referenced);
    snprintf(dir, sizeof dir, "%s/%s", table_dir(t), TABLE_MANIFEST_DIR);
    d = opendir(dir);
    assert_non_null(d);
    size_t nman = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        assert_null(strchr(e->d_name, '.'));
        nman++;
    }
    closedir(d);
    assert_int_equal(nman, nv);
    snprintf(dir, sizeof dir, "%s/CURRENT.tmp", table_dir(t));
    assert_false(env_exists(dir));
    table_close(t);
}

static void
crash_points(int append)
{
    const char *base = getenv("TMPDIR");
    char data[512];
    snprintf(data, sizeof data, "%s/kiln-crash-%ld", base ? base : "/tmp", (long)getpid());
    static const env_op ops[] = {ENV_OP_WRITE, ENV_OP_SYNC, ENV_OP_RENAME, ENV_OP_OPEN,
                                 ENV_OP_UNLINK};
    static const char *op_names[] = {"write", "fsync", "rename", "open", "unlink"};
    kiln_err err;
    size_t total_points = 0;
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
        /* Count the calls of this kind a clean load (v3 over v2) makes. */
        long calls = 0;
        for (long k = 0; k == 0 || k <= calls; k++) {
            fresh_store(data, 3);
            file_count = 0;
            kiln_table *t;
            status_clear(&err);
            tu_must(table_open(data, "ns:crash", &t, &err), &err);
            tu_must(table_lock(t, 0, &err), &err);
            uint64_t v;
            int published;
            tu_must(load(t, 0, &v, &published, &err), &err);
            tu_must(load(t, 0, &v, &published, &err), &err);
            assert_int_equal(v, 2);
            env_fault_clear();
            if (k > 0)
                env_fault_arm(ops[oi], k, EIO);
            status_clear(&err);
            kiln_status st = load(t, append, &v, &published, &err);
            if (k == 0) {
                tu_must(st, &err);
                calls = env_op_calls(ops[oi]);
                env_fault_clear();
                table_close(t);
                continue;
            }
            env_fault_clear();
            /* the process "dies" here: no cleanup, the handle is dropped */
            table_close(t);
            total_points++;
            uint64_t found = check_consistent(data, 2, 3);
            if (published)
                assert_int_equal(found, 3);
            else
                assert_int_equal(found, 2);
            if (st == KILN_OK)
                assert_int_equal(found, 3);
            else
                assert_non_null(strstr(err.msg, data));
            /* the next load succeeds and leaves no orphan */
            tu_must(table_open(data, "ns:crash", &t, &err), &err);
            tu_must(table_lock(t, 0, &err), &err);
            tu_must(load(t, append, &v, &published, &err), &err);
            assert_true(v > found && v <= 4);
            table_close(t);
            assert_int_equal(check_consistent(data, v, v), v);
            check_no_orphans(data);
        }
        printf("  %s %s: %ld crash points\n", append ? "append" : "replace", op_names[oi],
               calls);
        assert_true(oi == 4 || calls > 0);
    }
    assert_true(total_points > 20);
    tu_rmrf(data);
}

static void
crash_replace(void **state)
{
    (void)state;
    crash_points(0);
}

static void
crash_append(void **state)
{
    (void)state;
    crash_points(1);
}

/* Publishing (stage, sync, manifest, CURRENT, gc) under simulated power
 * loss, cut before every changing call in turn and after the last: the
 * table reopens to version 2 or 3 with every file intact, and the next load
 * leaves no orphan. */
static void
power_publish(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    char data[512], stash[600];
    snprintf(data, sizeof data, "%s/kiln-power-%ld", base ? base : "/tmp", (long)getpid());
    snprintf(stash, sizeof stash, "%s-stash", data);
    tu_rmrf(stash);
    assert_int_equal(mkdir(stash, 0755), 0);
    long calls = 0, points = 0, saw_new = 0;
    /* Each cut twice: the strict model, then the loose one (some unsynced
     * directory changes and a prefix of unsynced bytes survive). */
    for (long kk = 0; kk == 0 || kk / 2 <= calls + 1; kk = kk == 0 ? 2 : kk + 1) {
        long k = kk / 2;
        int loose = kk % 2;
        fresh_store(data, 3);
        file_count = 0;
        kiln_table *t;
        kiln_err err;
        status_clear(&err);
        tu_must(table_open(data, "ns:crash", &t, &err), &err);
        tu_must(table_lock(t, 0, &err), &err);
        uint64_t v;
        int published;
        tu_must(load(t, 0, &v, &published, &err), &err);
        tu_must(load(t, 0, &v, &published, &err), &err);
        env_power_begin(stash);
        env_power_cut_at(k);
        status_clear(&err);
        kiln_status st = load(t, 0, &v, &published, &err);
        if (k == 0) {
            tu_must(st, &err);
            calls = env_power_calls();
            env_power_end();
            table_close(t);
            continue;
        }
        assert_true(k > calls || env_power_is_cut());
        if (loose)
            env_power_survive_some(0x5eed0000ULL + (uint64_t)kk);
        tu_must(env_power_restore(&err), &err);
        table_close(t);
        points++;
        uint64_t found = check_consistent(data, 2, 3);
        saw_new += found == 3;
        tu_must(table_open(data, "ns:crash", &t, &err), &err);
        tu_must(table_lock(t, 0, &err), &err);
        tu_must(load(t, 0, &v, &published, &err), &err);
        table_close(t);
        assert_int_equal(check_consistent(data, v, v), v);
        check_no_orphans(data);
    }
    printf("  publish: %ld changing calls, %ld power cuts (strict and loose), new version after %ld\n", calls,
           points, saw_new);
    assert_true(saw_new > 0 && saw_new < points);
    tu_rmrf(data);
    tu_rmrf(stash);
}

/* Garbage collection when opening or reading a manifest fails (EIO,
 * EMFILE, ENOMEM) at each call in turn: the current version's parent -- the
 * rollback target -- and its files are never removed, and a failure that
 * stopped the collection is reported. */
static void
gc_read_errors(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    char data[512];
    snprintf(data, sizeof data, "%s/kiln-gcerr-%ld", base ? base : "/tmp", (long)getpid());
    fresh_store(data, 2);
    file_count = 0;
    kiln_table *t;
    kiln_err err;
    status_clear(&err);
    tu_must(table_open(data, "ns:crash", &t, &err), &err);
    tu_must(table_lock(t, 0, &err), &err);
    uint64_t v;
    int published;
    tu_must(load(t, 0, &v, &published, &err), &err);
    tu_must(load(t, 0, &v, &published, &err), &err);
    assert_int_equal(v, 2);
    manifest m1;
    tu_must(table_read_manifest(t, 1, &m1, NULL, &err), &err);
    static const env_op ops[] = {ENV_OP_OPEN, ENV_OP_READ};
    static const int errs[] = {EIO, EMFILE, ENOMEM};
    long points = 0;
    for (size_t oi = 0; oi < 2; oi++) {
        for (size_t ei = 0; ei < 3; ei++) {
            env_fault_clear();
            tu_must(table_gc(t, NULL, &err), &err);
            long calls = env_op_calls(ops[oi]);
            assert_true(calls >= 3);
            for (long k = 1; k <= calls; k++) {
                env_fault_clear();
                env_fault_arm(ops[oi], k, errs[ei]);
                kiln_err e2;
                status_clear(&e2);
                kiln_status st = table_gc(t, NULL, &e2);
                env_fault_clear();
                points++;
                manifest m;
                status_clear(&err);
                tu_must(table_read_manifest(t, 1, &m, NULL, &err), &err);
                manifest_free(&m);
                for (size_t r = 0; r < m1.tables[0].region_count; r++) {
                    const manifest_region *reg = &m1.tables[0].regions[r];
                    for (size_t f = 0; f < reg->file_count; f++) {
                        char p[4096];
                        table_file_path(t, reg->files[f].name, p, sizeof p);
                        if (!env_exists(p))
                            fail_msg("gc removed %s of the parent version after: %s", p,
                                     e2.msg);
                    }
                }
                assert_int_not_equal(st, KILN_OK);
            }
        }
    }
    printf("  gc: %ld failed opens and reads, the parent version kept each time\n", points);
    manifest_free(&m1);
    uint64_t want = 2;
    table_close(t);
    assert_int_equal(check_consistent(data, want, want), want);
    tu_rmrf(data);
}

int
main(void)
{
    const char *seed = getenv("KILN_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)getpid() * 2654435761u;
    printf("test_store_crash: seed %llu (replay with KILN_TEST_SEED)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(crash_replace),
        cmocka_unit_test(crash_append),
        cmocka_unit_test(gc_read_errors),
        cmocka_unit_test(power_publish),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
