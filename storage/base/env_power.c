/* env_power.c -- the power-loss recorder behind env_power.h: a log of the
 * directory changes made through env.c, each with the directories whose
 * fsync makes it durable, and a table of files with their written and synced
 * lengths. env_power_restore undoes the log's non-durable entries newest
 * first, then cuts every surviving file to its synced length.
 */
#include "storage/base/env_power.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/base/buf.h"
#include "storage/base/env_power_int.h"

typedef struct power_dir {
    dev_t dev;
    ino_t ino;
    int valid;
} power_dir;

typedef enum power_op_kind {
    POWER_OP_CREATE,     /* path appeared (file) */
    POWER_OP_MKDIR,      /* path appeared (directory) */
    POWER_OP_LINK,       /* path appeared (another name of an inode) */
    POWER_OP_RENAME,     /* path2 moved to path; stash holds what path was */
    POWER_OP_UNLINK,     /* path removed; stash holds it */
    POWER_OP_RMDIR       /* empty directory path removed */
} power_op_kind;

typedef struct power_op {
    power_op_kind kind;
    char *path;
    char *path2;
    long stash;          /* stash token, -1 if none */
    power_dir dir[2];    /* directories whose fsync makes the change durable */
    int synced[2];
} power_op;

typedef struct power_file {
    char *path;
    uint64_t size;       /* bytes written since created or truncated */
    uint64_t synced;     /* of those, made durable */
} power_file;

static pthread_mutex_t power_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int power_on_record;   /* fast check for the hooks */
static _Atomic int power_cut;
static long power_cut_k;
static uint64_t power_survive;        /* 0: the strict model; else the loose one's seed */
static long power_ncalls;
static unsigned char *power_trace;
static size_t power_trace_cap;
static power_op *power_ops;
static size_t power_nops, power_ops_cap;
static power_file *power_files;
static size_t power_nfiles, power_files_cap;
static char power_stash_dir[PATH_MAX - 64];   /* leaves room for /stash-N */
static long power_next_stash;

static char *
power_strdup(const char *s)
{
    return (char *)kiln_memdup(s, strlen(s) + 1);
}

static void
power_stash_path(long token, char *out, size_t cap)
{
    snprintf(out, cap, "%s/stash-%ld", power_stash_dir, token);
}

/* The directory holding path (its parent), by device and inode. */
static power_dir
power_parent(const char *path)
{
    power_dir d = {0, 0, 0};
    char p[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof p)
        return d;
    memcpy(p, path, n + 1);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
    char *slash = strrchr(p, '/');
    if (slash == NULL)
        snprintf(p, sizeof p, ".");
    else if (slash == p)
        p[1] = '\0';
    else
        *slash = '\0';
    struct stat st;
    if (stat(p, &st) == 0) {
        d.dev = st.st_dev;
        d.ino = st.st_ino;
        d.valid = 1;
    }
    return d;
}

static void
power_clear_locked(void)
{
    for (size_t i = 0; i < power_nops; i++) {
        free(power_ops[i].path);
        free(power_ops[i].path2);
    }
    free(power_ops);
    power_ops = NULL;
    power_nops = power_ops_cap = 0;
    for (size_t i = 0; i < power_nfiles; i++)
        free(power_files[i].path);
    free(power_files);
    power_files = NULL;
    power_nfiles = power_files_cap = 0;
    free(power_trace);
    power_trace = NULL;
    power_trace_cap = 0;
    power_ncalls = 0;
    power_cut_k = 0;
    power_survive = 0;
    power_cut = 0;
}

void
env_power_begin(const char *stash_dir)
{
    pthread_mutex_lock(&power_mu);
    power_clear_locked();
    snprintf(power_stash_dir, sizeof power_stash_dir, "%s", stash_dir);
    power_on_record = 1;
    pthread_mutex_unlock(&power_mu);
}

void
env_power_cut_at(long k)
{
    pthread_mutex_lock(&power_mu);
    power_cut_k = k;
    pthread_mutex_unlock(&power_mu);
}

void
env_power_survive_some(uint64_t seed)
{
    pthread_mutex_lock(&power_mu);
    power_survive = seed;
    pthread_mutex_unlock(&power_mu);
}

/* SplitMix64: the loose model's draws. */
static uint64_t
power_draw(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int
env_power_is_cut(void)
{
    return power_cut;
}

long
env_power_calls(void)
{
    pthread_mutex_lock(&power_mu);
    long n = power_ncalls;
    pthread_mutex_unlock(&power_mu);
    return n;
}

int
env_power_kind_of(long i)
{
    pthread_mutex_lock(&power_mu);
    int k = i >= 1 && i <= power_ncalls ? power_trace[i - 1] : -1;
    pthread_mutex_unlock(&power_mu);
    return k;
}

int
env_power_gate(env_power_kind k)
{
    if (power_cut)
        return EIO;
    if (!power_on_record)
        return 0;
    pthread_mutex_lock(&power_mu);
    int e = 0;
    if (power_cut) {
        e = EIO;
    } else if (power_cut_k != 0 && power_ncalls + 1 == power_cut_k) {
        power_cut = 1;
        e = EIO;
    } else {
        if ((size_t)power_ncalls == power_trace_cap) {
            power_trace_cap = power_trace_cap ? power_trace_cap * 2 : 256;
            power_trace = kiln_realloc(power_trace, power_trace_cap);
        }
        power_trace[power_ncalls++] = (unsigned char)k;
    }
    pthread_mutex_unlock(&power_mu);
    return e;
}

int
env_power_down(void)
{
    return power_cut ? EIO : 0;
}

static power_op *
power_add_op(power_op_kind kind, const char *path, const char *path2, long stash)
{
    if (power_nops == power_ops_cap) {
        power_ops_cap = power_ops_cap ? power_ops_cap * 2 : 64;
        power_ops = kiln_realloc(power_ops, power_ops_cap * sizeof *power_ops);
    }
    power_op *o = &power_ops[power_nops++];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->path = power_strdup(path);
    o->path2 = path2 ? power_strdup(path2) : NULL;
    o->stash = stash;
    o->dir[0] = power_parent(path);
    /* A rename is durable once both directories are synced. */
    o->dir[1] = path2 ? power_parent(path2) : o->dir[0];
    return o;
}

static power_file *
power_find_file(const char *path)
{
    for (size_t i = power_nfiles; i-- > 0;) {
        if (strcmp(power_files[i].path, path) == 0)
            return &power_files[i];
    }
    return NULL;
}

static power_file *
power_file_fresh(const char *path)
{
    power_file *f = power_find_file(path);
    if (f != NULL) {
        f->size = f->synced = 0;
        return f;
    }
    if (power_nfiles == power_files_cap) {
        power_files_cap = power_files_cap ? power_files_cap * 2 : 64;
        power_files = kiln_realloc(power_files, power_files_cap * sizeof *power_files);
    }
    f = &power_files[power_nfiles++];
    f->path = power_strdup(path);
    f->size = f->synced = 0;
    return f;
}

void
env_power_note_create(const char *path, int is_dir, int existed)
{
    if (!power_on_record)
        return;
    pthread_mutex_lock(&power_mu);
    if (!existed)
        power_add_op(is_dir ? POWER_OP_MKDIR : POWER_OP_CREATE, path, NULL, -1);
    if (!is_dir)
        power_file_fresh(path);
    pthread_mutex_unlock(&power_mu);
}

void
env_power_note_write(const char *path, uint64_t n)
{
    if (!power_on_record)
        return;
    pthread_mutex_lock(&power_mu);
    power_file *f = power_find_file(path);
    if (f != NULL)
        f->size += n;
    pthread_mutex_unlock(&power_mu);
}

void
env_power_note_sync(const char *path)
{
    if (!power_on_record)
        return;
    pthread_mutex_lock(&power_mu);
    power_file *f = power_find_file(path);
    if (f != NULL)
        f->synced = f->size;
    pthread_mutex_unlock(&power_mu);
}

void
env_power_note_sync_dir(const char *dir)
{
    if (!power_on_record)
        return;
    struct stat st;
    if (stat(dir, &st) != 0)
        return;
    pthread_mutex_lock(&power_mu);
    for (size_t i = 0; i < power_nops; i++) {
        for (int j = 0; j < 2; j++) {
            const power_dir *d = &power_ops[i].dir[j];
            if (d->valid && d->dev == st.st_dev && d->ino == st.st_ino)
                power_ops[i].synced[j] = 1;
        }
    }
    pthread_mutex_unlock(&power_mu);
}

void
env_power_note_link(const char *from, const char *to)
{
    (void)from;
    if (!power_on_record)
        return;
    pthread_mutex_lock(&power_mu);
    power_add_op(POWER_OP_LINK, to, NULL, -1);
    pthread_mutex_unlock(&power_mu);
}

long
env_power_stash(const char *path)
{
    if (!power_on_record)
        return -1;
    struct stat st;
    if (lstat(path, &st) != 0 || S_ISDIR(st.st_mode))
        return -1;
    pthread_mutex_lock(&power_mu);
    long token = power_next_stash++;
    pthread_mutex_unlock(&power_mu);
    char sp[PATH_MAX];
    power_stash_path(token, sp, sizeof sp);
    if (link(path, sp) != 0)
        return -1;
    return token;
}

void
env_power_unstash(long token)
{
    if (token < 0)
        return;
    char sp[PATH_MAX];
    power_stash_path(token, sp, sizeof sp);
    unlink(sp);
}

/* *path names from or something below it: make it name the same under to. */
static void
power_move_path(char **path, const char *from, const char *to)
{
    size_t n = strlen(from);
    if (*path == NULL || strncmp(*path, from, n) != 0 ||
        ((*path)[n] != '\0' && (*path)[n] != '/'))
        return;
    char p[PATH_MAX];
    if ((size_t)snprintf(p, sizeof p, "%s%s", to, *path + n) >= sizeof p)
        return;
    free(*path);
    *path = power_strdup(p);
}

/* What was under from is now under to: the recorded files, and the paths of
 * the first nops changes (a directory renamed later carries them along). */
static void
power_move_files(const char *from, const char *to, size_t nops)
{
    for (size_t i = 0; i < power_nfiles; i++)
        power_move_path(&power_files[i].path, from, to);
    for (size_t i = 0; i < nops; i++) {
        power_move_path(&power_ops[i].path, from, to);
        power_move_path(&power_ops[i].path2, from, to);
    }
}

void
env_power_note_rename(const char *from, const char *to, long token)
{
    if (!power_on_record) {
        env_power_unstash(token);
        return;
    }
    pthread_mutex_lock(&power_mu);
    power_move_files(from, to, power_nops);
    power_add_op(POWER_OP_RENAME, to, from, token);
    pthread_mutex_unlock(&power_mu);
}

void
env_power_note_unlink(const char *path, long token, int is_dir)
{
    if (!power_on_record) {
        env_power_unstash(token);
        return;
    }
    pthread_mutex_lock(&power_mu);
    power_add_op(is_dir ? POWER_OP_RMDIR : POWER_OP_UNLINK, path, NULL, token);
    pthread_mutex_unlock(&power_mu);
}

static int
power_rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static int
power_rmrf(const char *p)
{
    struct stat st;
    if (lstat(p, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode))
        return unlink(p);
    return nftw(p, power_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Undo one non-durable change; 0 or -1 with errno. */
static int
power_undo(const power_op *o, size_t index)
{
    char sp[PATH_MAX];
    switch (o->kind) {
    case POWER_OP_CREATE:
    case POWER_OP_LINK:
        if (unlink(o->path) != 0 && errno != ENOENT)
            return -1;
        return 0;
    case POWER_OP_MKDIR:
        return power_rmrf(o->path);
    case POWER_OP_RENAME:
        if (rename(o->path, o->path2) != 0)
            return -1;
        power_move_files(o->path, o->path2, index);
        if (o->stash >= 0) {
            power_stash_path(o->stash, sp, sizeof sp);
            if (rename(sp, o->path) != 0)
                return -1;
        }
        return 0;
    case POWER_OP_UNLINK:
        if (o->stash < 0)
            return 0;   /* nothing was kept to put back */
        power_stash_path(o->stash, sp, sizeof sp);
        return rename(sp, o->path);
    case POWER_OP_RMDIR:
        return mkdir(o->path, 0755) != 0 && errno != EEXIST ? -1 : 0;
    }
    return 0;
}

kiln_status
env_power_restore(kiln_err *err)
{
    pthread_mutex_lock(&power_mu);
    power_cut = 1;
    kiln_status st = KILN_OK;
    /* The loose model keeps the directory changes made before a point drawn
     * at random, synced or not, and a prefix of each file's unsynced bytes. */
    uint64_t rs = power_survive;
    size_t kept_ops = rs != 0 ? (size_t)(power_draw(&rs) % (power_nops + 1)) : 0;
    for (size_t i = power_nops; i-- > kept_ops;) {
        const power_op *o = &power_ops[i];
        int durable = o->synced[0] && o->synced[1];
        if (!durable && power_undo(o, i) != 0 && st == KILN_OK)
            st = status_set_errno(err, errno, "power loss: undo %d of %s", (int)o->kind,
                                  o->path);
    }
    for (size_t i = 0; i < power_nfiles; i++) {
        const power_file *f = &power_files[i];
        if (f->synced >= f->size)
            continue;
        struct stat sb;
        if (lstat(f->path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        uint64_t keep = f->synced;
        if (rs != 0)
            keep += power_draw(&rs) % (f->size - f->synced + 1);
        if ((uint64_t)sb.st_size > keep && truncate(f->path, (off_t)keep) != 0 &&
            st == KILN_OK)
            st = status_set_errno(err, errno, "power loss: truncate %s", f->path);
    }
    /* Stashed entries of durable changes are gone for good. */
    for (long t = 0; t < power_next_stash; t++)
        env_power_unstash(t);
    power_next_stash = 0;
    power_on_record = 0;
    power_clear_locked();
    pthread_mutex_unlock(&power_mu);
    return st;
}

void
env_power_end(void)
{
    pthread_mutex_lock(&power_mu);
    for (long t = 0; t < power_next_stash; t++)
        env_power_unstash(t);
    power_next_stash = 0;
    power_on_record = 0;
    power_clear_locked();
    pthread_mutex_unlock(&power_mu);
}
