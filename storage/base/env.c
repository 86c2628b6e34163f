/* env.c -- POSIX file layer with fault injection (env_fault_arm) and the
 * hooks of the power-loss recorder (env_power.h). Every call that changes the
 * file system is gated by env_power_gate and noted once it succeeded. */
#include "storage/base/env.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/fs.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "storage/base/env_power_int.h"

#define ENV_WRITE_BUF (256 * 1024)
#define ENV_COPY_CHUNK (8 * 1024 * 1024)
#define ENV_CACHE_CHUNK (1024 * 1024)

struct env_file {
    int fd;            /* -1: a cached readable file whose descriptor was closed */
    int writable;
    uint64_t size;     /* readable: size at open; writable: bytes appended */
    kbuf wbuf;         /* pending appended bytes */
    char *path;
    /* Readable files from env_open_read share the descriptor budget (the
     * file cache): the fields below are guarded by fdc_mu. */
    int cached;
    long users;        /* calls using fd right now: it is not closed under them */
    dev_t dev;         /* identity checked when the file is reopened */
    ino_t ino;
    env_file *lru_prev, *lru_next;   /* open descriptors, most recently used first */
};

/* ------------------------------------------------------------------ file cache
 *
 * Like LevelDB's TableCache, but at the descriptor: every readable file keeps
 * its parsed state (the reader above it holds its index and blooms), while at
 * most fdc_max of them hold an open descriptor. The least recently used
 * descriptor not in use is closed when a file is opened or reopened past the
 * budget; a file reopens by path on its next read, checked to be the same
 * inode. Store files are never rewritten and their names never reused, so a
 * reopen finds the same bytes or, if garbage collection removed the file,
 * KILN_NOT_FOUND. */

static pthread_mutex_t fdc_mu = PTHREAD_MUTEX_INITIALIZER;
static env_file *fdc_first, *fdc_last;
static long fdc_open;       /* descriptors held by cached files */
static long fdc_max;        /* 0 until first needed */
static long fdc_reopens;

static long
fdc_limit_locked(void)
{
    if (fdc_max == 0) {
        struct rlimit rl;
        long n = 4096;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
            n = (long)rl.rlim_cur / 2;
        fdc_max = n < 8 ? 8 : n > 65536 ? 65536 : n;
    }
    return fdc_max;
}

static void
fdc_remove_locked(env_file *f)
{
    if (f->lru_prev)
        f->lru_prev->lru_next = f->lru_next;
    else
        fdc_first = f->lru_next;
    if (f->lru_next)
        f->lru_next->lru_prev = f->lru_prev;
    else
        fdc_last = f->lru_prev;
    f->lru_prev = f->lru_next = NULL;
}

static void
fdc_push_locked(env_file *f)
{
    f->lru_prev = NULL;
    f->lru_next = fdc_first;
    if (fdc_first)
        fdc_first->lru_prev = f;
    fdc_first = f;
    if (fdc_last == NULL)
        fdc_last = f;
}

/* Close least recently used idle descriptors until at most keep are open
 * (or none is idle). */
static void
fdc_evict_locked(long keep)
{
    env_file *v = fdc_last;
    while (fdc_open > keep && v != NULL) {
        env_file *prev = v->lru_prev;
        if (v->users == 0 && v->fd >= 0) {
            fdc_remove_locked(v);
            close(v->fd);
            v->fd = -1;
            fdc_open--;
        }
        v = prev;
    }
}

/* open(2) for reading; on EMFILE/ENFILE close an idle cached descriptor and
 * try again. */
static int
fdc_open_path_locked(const char *path)
{
    for (;;) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 || (errno != EMFILE && errno != ENFILE) || fdc_open == 0)
            return fd;
        long before = fdc_open;
        fdc_evict_locked(fdc_open - 1);
        if (fdc_open == before) {
            errno = EMFILE;
            return -1;
        }
    }
}

/* The descriptor of f, reopened if the cache closed it, pinned until
 * env_unpin. -1 with the error set in *st. */
static int
env_pin(env_file *f, kiln_status *st, kiln_err *err)
{
    if (!f->cached)
        return f->fd;
    pthread_mutex_lock(&fdc_mu);
    if (f->fd < 0) {
        int fd = fdc_open_path_locked(f->path);
        if (fd < 0) {
            int e = errno;
            pthread_mutex_unlock(&fdc_mu);
            *st = e == ENOENT ? status_set(err, KILN_NOT_FOUND,
                                           "%s: reopen: removed since it was opened", f->path)
                              : status_set_errno(err, e, "%s: reopen", f->path);
            return -1;
        }
        struct stat sb;
        if (fstat(fd, &sb) != 0 || sb.st_dev != f->dev || sb.st_ino != f->ino) {
            close(fd);
            pthread_mutex_unlock(&fdc_mu);
            *st = status_set(err, KILN_CORRUPTION, "%s: reopen: replaced since it was opened",
                             f->path);
            return -1;
        }
        f->fd = fd;
        fdc_open++;
        fdc_reopens++;
        fdc_push_locked(f);
        f->users++;
        fdc_evict_locked(fdc_limit_locked());
    } else {
        fdc_remove_locked(f);
        fdc_push_locked(f);
        f->users++;
    }
    int fd = f->fd;
    pthread_mutex_unlock(&fdc_mu);
    return fd;
}

static void
env_unpin(env_file *f)
{
    if (!f->cached)
        return;
    pthread_mutex_lock(&fdc_mu);
    f->users--;
    pthread_mutex_unlock(&fdc_mu);
}

void
env_set_max_open_files(long n)
{
    pthread_mutex_lock(&fdc_mu);
    fdc_max = n > 0 ? n : 0;
    fdc_evict_locked(fdc_limit_locked());
    pthread_mutex_unlock(&fdc_mu);
}

long
env_max_open_files(void)
{
    pthread_mutex_lock(&fdc_mu);
    long n = fdc_limit_locked();
    pthread_mutex_unlock(&fdc_mu);
    return n;
}

long
env_open_files(void)
{
    pthread_mutex_lock(&fdc_mu);
    long n = fdc_open;
    pthread_mutex_unlock(&fdc_mu);
    return n;
}

long
env_reopens(void)
{
    pthread_mutex_lock(&fdc_mu);
    long n = fdc_reopens;
    pthread_mutex_unlock(&fdc_mu);
    return n;
}

static _Atomic long fault_calls[ENV_OP_COUNT];
static _Atomic long fault_at[ENV_OP_COUNT];
static _Atomic int fault_errno[ENV_OP_COUNT];

void
env_fault_arm(env_op op, long k, int errnum)
{
    fault_at[op] = k == 0 ? 0 : fault_calls[op] + k;
    fault_errno[op] = errnum;
}

void
env_fault_clear(void)
{
    for (int i = 0; i < ENV_OP_COUNT; i++) {
        fault_at[i] = 0;
        fault_calls[i] = 0;
        fault_errno[i] = 0;
    }
}

long
env_op_calls(env_op op)
{
    return fault_calls[op];
}

/* Count a call of op; returns the errno to inject, or 0 to proceed. */
static int
env_fault_hit(env_op op)
{
    long n = ++fault_calls[op];
    long at = fault_at[op];
    if (at != 0 && n == at) {
        fault_at[op] = 0;
        return fault_errno[op] ? fault_errno[op] : EIO;
    }
    return 0;
}

static env_file *
env_file_new(int fd, int writable, uint64_t size, const char *path)
{
    env_file *f = kiln_calloc(1, sizeof *f);
    f->fd = fd;
    f->writable = writable;
    f->size = size;
    buf_init(&f->wbuf);
    f->path = (char *)kiln_memdup(path, strlen(path) + 1);
    return f;
}

kiln_status
env_open_read(const char *path, env_file **out, kiln_err *err)
{
    *out = NULL;
    int e = env_fault_hit(ENV_OP_OPEN);
    if (!e)
        e = env_power_down();
    if (e)
        return status_set_errno(err, e, "%s: open", path);
    pthread_mutex_lock(&fdc_mu);
    int fd = fdc_open_path_locked(path);
    if (fd < 0) {
        int se = errno;
        pthread_mutex_unlock(&fdc_mu);
        return status_set_errno(err, se, "%s: open", path);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int se = errno;
        close(fd);
        pthread_mutex_unlock(&fdc_mu);
        return status_set_errno(err, se, "%s: stat", path);
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        pthread_mutex_unlock(&fdc_mu);
        return status_set(err, KILN_INVALID, "%s: is a directory", path);
    }
    env_file *f = env_file_new(fd, 0, (uint64_t)st.st_size, path);
    f->cached = 1;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    fdc_open++;
    fdc_push_locked(f);
    fdc_evict_locked(fdc_limit_locked());
    pthread_mutex_unlock(&fdc_mu);
    *out = f;
    return KILN_OK;
}

kiln_status
env_create(const char *path, int excl, env_file **out, kiln_err *err)
{
    *out = NULL;
    int e = env_fault_hit(ENV_OP_OPEN);
    if (!e)
        e = env_power_gate(ENV_POWER_CREATE);
    if (e)
        return status_set_errno(err, e, "%s: create", path);
    int existed = !excl && env_exists(path);
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (excl ? O_EXCL : O_TRUNC);
    int fd = open(path, flags, 0644);
    if (fd < 0)
        return status_set_errno(err, errno, "%s: create", path);
    env_power_note_create(path, 0, existed);
    *out = env_file_new(fd, 1, 0, path);
    return KILN_OK;
}

static kiln_status
env_write_all(env_file *f, const uint8_t *p, size_t n, kiln_err *err)
{
    int e = env_fault_hit(ENV_OP_WRITE);
    if (!e)
        e = env_power_gate(ENV_POWER_WRITE);
    if (e)
        return status_set_errno(err, e, "%s: write", f->path);
    env_power_note_write(f->path, n);
    while (n > 0) {
        ssize_t w = write(f->fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return status_set_errno(err, errno, "%s: write", f->path);
        }
        p += w;
        n -= (size_t)w;
    }
    return KILN_OK;
}

kiln_status
env_flush(env_file *f, kiln_err *err)
{
    if (!f->writable || f->wbuf.len == 0)
        return KILN_OK;
    kiln_status s = env_write_all(f, f->wbuf.data, f->wbuf.len, err);
    f->wbuf.len = 0;
    return s;
}

kiln_status
env_append(env_file *f, const void *p, size_t n, kiln_err *err)
{
    if (!f->writable)
        return status_set(err, KILN_INVALID, "%s: not open for writing", f->path);
    f->size += n;
    if (f->wbuf.len + n <= ENV_WRITE_BUF) {
        buf_append(&f->wbuf, p, n);
        return KILN_OK;
    }
    kiln_status s = env_flush(f, err);
    if (s != KILN_OK)
        return s;
    if (n >= ENV_WRITE_BUF)
        return env_write_all(f, p, n, err);
    buf_append(&f->wbuf, p, n);
    return KILN_OK;
}

kiln_status
env_sync(env_file *f, kiln_err *err)
{
    kiln_status s = env_flush(f, err);
    if (s != KILN_OK)
        return s;
    int e = env_fault_hit(ENV_OP_SYNC);
    if (!e)
        e = env_power_gate(ENV_POWER_SYNC);
    if (e)
        return status_set_errno(err, e, "%s: fsync", f->path);
    int fd = env_pin(f, &s, err);
    if (fd < 0)
        return s;
    int r = fdatasync(fd);
    int se = errno;
    env_unpin(f);
    if (r != 0)
        return status_set_errno(err, se, "%s: fsync", f->path);
    env_power_note_sync(f->path);
    return KILN_OK;
}

kiln_status
env_pread(env_file *f, uint64_t off, void *dst, size_t n, kiln_err *err)
{
    int e = env_fault_hit(ENV_OP_READ);
    if (!e)
        e = env_power_down();
    if (e)
        return status_set_errno(err, e, "%s: read at offset %llu", f->path, (unsigned long long)off);
    if (!f->writable && (off > f->size || n > f->size - off))
        return status_set(err, KILN_CORRUPTION,
                          "%s: truncated: wanted %zu bytes at offset %llu, file has %llu",
                          f->path, n, (unsigned long long)off, (unsigned long long)f->size);
    kiln_status s = KILN_OK;
    int fd = env_pin(f, &s, err);
    if (fd < 0)
        return s;
    uint8_t *p = dst;
    while (n > 0) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            s = status_set_errno(err, errno, "%s: read at offset %llu", f->path,
                                 (unsigned long long)off);
            break;
        }
        if (r == 0) {
            s = status_set(err, KILN_CORRUPTION, "%s: truncated at offset %llu", f->path,
                           (unsigned long long)off);
            break;
        }
        p += r;
        off += (uint64_t)r;
        n -= (size_t)r;
    }
    env_unpin(f);
    return s;
}

kiln_status
env_close(env_file *f, kiln_err *err)
{
    if (f == NULL)
        return KILN_OK;
    /* After a power cut buffered bytes are simply lost. */
    kiln_status s = env_power_is_cut() ? KILN_OK : env_flush(f, err);
    if (f->cached) {
        pthread_mutex_lock(&fdc_mu);
        if (f->fd >= 0) {
            fdc_remove_locked(f);
            close(f->fd);
            fdc_open--;
        }
        pthread_mutex_unlock(&fdc_mu);
    } else if (close(f->fd) != 0 && s == KILN_OK && f->writable) {
        s = status_set_errno(err, errno, "%s: close", f->path);
    }
    buf_free(&f->wbuf);
    free(f->path);
    free(f);
    return s;
}

uint64_t
env_file_size(const env_file *f)
{
    return f->size;
}

const char *
env_file_path(const env_file *f)
{
    return f->path;
}

int
env_file_fd(const env_file *f)
{
    return f->fd;
}

kiln_status
env_rename(const char *from, const char *to, kiln_err *err)
{
    int e = env_fault_hit(ENV_OP_RENAME);
    if (!e)
        e = env_power_gate(ENV_POWER_RENAME);
    if (e)
        return status_set_errno(err, e, "rename %s -> %s", from, to);
    long tok = env_power_stash(to);
    if (rename(from, to) != 0) {
        int se = errno;
        env_power_unstash(tok);
        return status_set_errno(err, se, "rename %s -> %s", from, to);
    }
    env_power_note_rename(from, to, tok);
    return KILN_OK;
}

kiln_status
env_link(const char *from, const char *to, kiln_err *err)
{
    int e = env_fault_hit(ENV_OP_LINK);
    if (!e)
        e = env_power_gate(ENV_POWER_LINK);
    if (e)
        return status_set_errno(err, e, "link %s -> %s", from, to);
    if (link(from, to) != 0)
        return status_set_errno(err, errno, "link %s -> %s", from, to);
    env_power_note_link(from, to);
    return KILN_OK;
}

kiln_status
env_unlink(const char *path, kiln_err *err)
{
    int e = env_fault_hit(ENV_OP_UNLINK);
    if (!e)
        e = env_power_gate(ENV_POWER_UNLINK);
    if (e)
        return status_set_errno(err, e, "%s: unlink", path);
    long tok = env_power_stash(path);
    if (unlink(path) != 0) {
        int se = errno;
        env_power_unstash(tok);
        if (se == ENOENT)
            return status_set(err, KILN_NOT_FOUND, "%s: unlink: %s", path, strerror(se));
        return status_set_errno(err, se, "%s: unlink", path);
    }
    env_power_note_unlink(path, tok, 0);
    return KILN_OK;
}

kiln_status
env_sync_dir(const char *dir, kiln_err *err)
{
    int e = env_fault_hit(ENV_OP_SYNC);
    if (!e)
        e = env_power_gate(ENV_POWER_SYNC_DIR);
    if (e)
        return status_set_errno(err, e, "%s: fsync directory", dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return status_set_errno(err, errno, "%s: open directory", dir);
    int r = fsync(fd);
    int se = errno;
    close(fd);
    if (r != 0)
        return status_set_errno(err, se, "%s: fsync directory", dir);
    env_power_note_sync_dir(dir);
    return KILN_OK;
}

kiln_status
env_mkdirs(const char *path, int mode, kiln_err *err)
{
    char tmp[PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp)
        return status_set(err, KILN_INVALID, "%s: bad directory path", path);
    memcpy(tmp, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (tmp[i] != '/' && tmp[i] != '\0')
            continue;
        char c = tmp[i];
        tmp[i] = '\0';
        if (!env_exists(tmp)) {
            /* Another process may create it first: that is success here,
             * and must not leave an error in err. */
            kiln_err e2;
            status_clear(&e2);
            kiln_status s = env_mkdir(tmp, mode, &e2);
            if (s != KILN_OK && s != KILN_EXISTS)
                return status_set(err, s, "%s", e2.msg);
        }
        tmp[i] = c;
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return status_set(err, KILN_IO, "%s: not a directory", path);
    return KILN_OK;
}

int
env_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

kiln_status
env_read_file(const char *path, kbuf *out, kiln_err *err)
{
    env_file *f;
    kiln_status s = env_open_read(path, &f, err);
    if (s != KILN_OK)
        return s;
    size_t n = (size_t)env_file_size(f);
    buf_reserve(out, n);
    s = env_pread(f, 0, out->data + out->len, n, err);
    if (s == KILN_OK)
        out->len += n;
    env_close(f, NULL);
    return s;
}

kiln_status
env_write_file_atomic(const char *path, const void *p, size_t n, kiln_err *err)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return status_set(err, KILN_INVALID, "%s: path too long", path);
    env_file *f;
    kiln_status s = env_create(tmp, 0, &f, err);
    if (s != KILN_OK)
        return s;
    s = env_append(f, p, n, err);
    if (s == KILN_OK)
        s = env_sync(f, err);
    kiln_status c = env_close(f, err);
    if (s == KILN_OK)
        s = c;
    if (s == KILN_OK)
        s = env_rename(tmp, path, err);
    if (s != KILN_OK) {
        env_unlink(tmp, NULL);
        return s;
    }
    char dir[PATH_MAX];
    memcpy(dir, path, strlen(path) + 1);
    return env_sync_dir(dirname(dir), err);
}

kiln_status
env_mkdir(const char *path, int mode, kiln_err *err)
{
    int e = env_fault_hit(ENV_OP_MKDIR);
    if (!e)
        e = env_power_gate(ENV_POWER_MKDIR);
    if (e)
        return status_set_errno(err, e, "%s: mkdir", path);
    if (mkdir(path, (mode_t)mode) != 0) {
        if (errno == EEXIST)
            return status_set(err, KILN_EXISTS, "%s: mkdir: %s", path, strerror(errno));
        return status_set_errno(err, errno, "%s: mkdir", path);
    }
    env_power_note_create(path, 1, 0);
    return KILN_OK;
}

kiln_status
env_rmdir(const char *path, kiln_err *err)
{
    int e = env_fault_hit(ENV_OP_UNLINK);
    if (!e)
        e = env_power_gate(ENV_POWER_RMDIR);
    if (e)
        return status_set_errno(err, e, "%s: rmdir", path);
    if (rmdir(path) != 0) {
        if (errno == ENOENT)
            return status_set(err, KILN_NOT_FOUND, "%s: rmdir: %s", path, strerror(errno));
        return status_set_errno(err, errno, "%s: rmdir", path);
    }
    env_power_note_unlink(path, -1, 1);
    return KILN_OK;
}

kiln_status
env_rename_noreplace(const char *from, const char *to, kiln_err *err)
{
    int e = env_fault_hit(ENV_OP_RENAME);
    if (!e)
        e = env_power_gate(ENV_POWER_RENAME);
    if (e)
        return status_set_errno(err, e, "rename %s -> %s", from, to);
    int r = -1;
#ifdef SYS_renameat2
    r = (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 1 /* RENAME_NOREPLACE */);
    if (r != 0 && (errno == ENOSYS || errno == EINVAL))
        r = -2;
#else
    r = -2;
#endif
    if (r == -2) {
        /* Without renameat2, a directory rename still refuses a non-empty target. */
        struct stat st;
        if (lstat(to, &st) == 0) {
            errno = EEXIST;
            r = -1;
        } else {
            r = rename(from, to);
        }
    }
    if (r != 0) {
        if (errno == EEXIST || errno == ENOTEMPTY)
            return status_set(err, KILN_EXISTS, "rename %s -> %s: target exists", from, to);
        return status_set_errno(err, errno, "rename %s -> %s", from, to);
    }
    env_power_note_rename(from, to, -1);
    return KILN_OK;
}

static int
env_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

kiln_status
env_list_dir(const char *dir, char ***names, size_t *count, kiln_err *err)
{
    *names = NULL;
    *count = 0;
    int e = env_fault_hit(ENV_OP_LIST);
    if (!e)
        e = env_power_down();
    if (e)
        return status_set_errno(err, e, "%s: open directory", dir);
    DIR *d = opendir(dir);
    if (d == NULL) {
        if (errno == ENOENT)
            return status_set(err, KILN_NOT_FOUND, "%s: open directory: %s", dir,
                              strerror(errno));
        return status_set_errno(err, errno, "%s: open directory", dir);
    }
    size_t cap = 0;
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (*count == cap) {
            cap = cap ? cap * 2 : 16;
            *names = kiln_realloc(*names, cap * sizeof **names);
        }
        (*names)[(*count)++] = (char *)kiln_memdup(de->d_name, strlen(de->d_name) + 1);
        errno = 0;
    }
    int se = errno;
    closedir(d);
    if (se != 0) {
        env_list_free(*names, *count);
        *names = NULL;
        *count = 0;
        return status_set_errno(err, se, "%s: read directory", dir);
    }
    if (*count > 1)
        qsort(*names, *count, sizeof **names, env_name_cmp);
    return KILN_OK;
}

void
env_list_free(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

kiln_status
env_stat(const char *path, env_stat_info *out, kiln_err *err)
{
    memset(out, 0, sizeof *out);
    int e = env_fault_hit(ENV_OP_STAT);
    if (!e)
        e = env_power_down();
    if (e)
        return status_set_errno(err, e, "%s: stat", path);
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return status_set(err, KILN_NOT_FOUND, "%s: %s", path, strerror(errno));
        return status_set_errno(err, errno, "%s: stat", path);
    }
    out->size = (uint64_t)st.st_size;
    out->is_dir = S_ISDIR(st.st_mode);
    out->is_reg = S_ISREG(st.st_mode);
    out->dev = (uint64_t)st.st_dev;
    out->ino = (uint64_t)st.st_ino;
    out->nlink = (uint64_t)st.st_nlink;
    out->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    out->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
    return KILN_OK;
}

kiln_status
env_lock(const char *path, long wait_ms, env_file **out, char *holder, size_t holder_cap,
         kiln_err *err)
{
    *out = NULL;
    if (holder_cap > 0)
        holder[0] = '\0';
    int e = env_fault_hit(ENV_OP_LOCK);
    if (!e)
        e = env_power_gate(ENV_POWER_CREATE);
    if (e)
        return status_set_errno(err, e, "%s: open", path);
    int existed = env_exists(path);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return status_set_errno(err, errno, "%s: open", path);
    if (!existed)
        env_power_note_create(path, 0, 0);
    long waited = 0;
    for (;;) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            break;
        if (errno != EWOULDBLOCK && errno != EINTR) {
            int se = errno;
            close(fd);
            return status_set_errno(err, se, "%s: lock", path);
        }
        if (wait_ms == 0 || (wait_ms > 0 && waited >= wait_ms)) {
            char who[32] = "";
            ssize_t n = pread(fd, who, sizeof who - 1, 0);
            who[n > 0 ? n : 0] = '\0';
            who[strcspn(who, "\n")] = '\0';
            if (holder_cap > 0)
                snprintf(holder, holder_cap, "%s", who);
            close(fd);
            return status_set(err, KILN_BUSY, "%s: locked", path);
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        waited += 20;
    }
    /* The pid is only informational (never synced); the flock is what excludes. */
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) != n) {
        /* ignored: see above */
    }
    *out = env_file_new(fd, 0, 0, path);
    return KILN_OK;
}

void
env_unlock(env_file *f)
{
    if (f == NULL)
        return;
    flock(f->fd, LOCK_UN);
    env_close(f, NULL);
}

static kiln_status env_copy_pinned(env_file *in, int in_fd, uint64_t off, env_file *out,
                                   uint64_t n, kiln_err *err);

kiln_status
env_copy_range(env_file *in, uint64_t off, env_file *out, uint64_t n, kiln_err *err)
{
    if (!out->writable)
        return status_set(err, KILN_INVALID, "%s: not open for writing", out->path);
    kiln_status s = env_flush(out, err);
    if (s != KILN_OK)
        return s;
    int in_fd = env_pin(in, &s, err);
    if (in_fd < 0)
        return s;
    s = env_copy_pinned(in, in_fd, off, out, n, err);
    env_unpin(in);
    return s;
}

kiln_status
env_clone(env_file *in, env_file *out, int *cloned, kiln_err *err)
{
    *cloned = 0;
    if (!out->writable || out->size != 0)
        return status_set(err, KILN_INVALID, "%s: not an empty file open for writing", out->path);
    kiln_status s = env_flush(out, err);
    if (s != KILN_OK)
        return s;
#ifdef FICLONE
    int e = env_fault_hit(ENV_OP_WRITE);
    if (!e)
        e = env_power_gate(ENV_POWER_WRITE);
    if (e)
        return status_set_errno(err, e, "%s: clone of %s", out->path, in->path);
    int in_fd = env_pin(in, &s, err);
    if (in_fd < 0)
        return s;
    uint64_t n = env_file_size(in);
    int ok = ioctl(out->fd, FICLONE, in_fd) == 0;
    int saved = errno;
    env_unpin(in);
    if (!ok) {
        if (saved == EXDEV || saved == EOPNOTSUPP || saved == ENOTTY || saved == EINVAL ||
            saved == ENOSYS)
            return KILN_OK;   /* no reflinks here: the caller copies */
        return status_set_errno(err, saved, "%s: clone of %s", out->path, in->path);
    }
    env_power_note_write(out->path, n);
    out->size = n;
    *cloned = 1;
#endif
    return KILN_OK;
}

static kiln_status
env_copy_pinned(env_file *in, int in_fd, uint64_t off, env_file *out, uint64_t n, kiln_err *err)
{
    kiln_status s;
    int in_kernel = 1;
    uint8_t *buf = NULL;
    while (n > 0) {
        size_t chunk = n < ENV_COPY_CHUNK ? (size_t)n : ENV_COPY_CHUNK;
        int e = env_fault_hit(ENV_OP_WRITE);
        if (!e)
            e = env_power_gate(ENV_POWER_WRITE);
        if (e) {
            free(buf);
            return status_set_errno(err, e, "%s: write", out->path);
        }
        ssize_t w = -1;
        if (in_kernel) {
            loff_t ioff = (loff_t)off;
            w = copy_file_range(in_fd, &ioff, out->fd, NULL, chunk, 0);
            if (w < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
                          errno == EOPNOTSUPP || errno == EBADF)) {
                in_kernel = 0;   /* across file systems or unsupported: copy through us */
                buf = kiln_malloc(ENV_COPY_CHUNK);
            } else if (w < 0 && errno == EINTR) {
                continue;
            } else if (w < 0) {
                free(buf);
                return status_set_errno(err, errno, "%s: copy from %s", out->path, in->path);
            } else if (w == 0) {
                free(buf);
                return status_set(err, KILN_CORRUPTION, "%s: truncated at offset %llu",
                                  in->path, (unsigned long long)off);
            }
        }
        if (!in_kernel) {
            s = env_pread(in, off, buf, chunk, err);
            for (size_t done = 0; s == KILN_OK && done < chunk;) {
                ssize_t k = write(out->fd, buf + done, chunk - done);
                if (k < 0 && errno == EINTR)
                    continue;
                if (k < 0)
                    s = status_set_errno(err, errno, "%s: write", out->path);
                else
                    done += (size_t)k;
            }
            if (s != KILN_OK) {
                free(buf);
                return s;
            }
            w = (ssize_t)chunk;
        }
        env_power_note_write(out->path, (uint64_t)w);
        off += (uint64_t)w;
        n -= (uint64_t)w;
        out->size += (uint64_t)w;
    }
    free(buf);
    return KILN_OK;
}

/* ------------------------------------------------------------ page cache */

/* Open path and map its residency: (*vec)[i] & 1 when page i is in memory.
 * *vec is NULL for an empty file. The caller closes *fd and frees *vec. */
static kiln_status
env_residency(const char *path, int *fd, uint64_t *size, unsigned char **vec, size_t *pages,
              kiln_err *err)
{
    *vec = NULL;
    *pages = 0;
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0)
        return status_set_errno(err, errno, "%s: open", path);
    struct stat st;
    if (fstat(*fd, &st) != 0) {
        int e = errno;
        close(*fd);
        return status_set_errno(err, e, "%s: fstat", path);
    }
    *size = (uint64_t)st.st_size;
    if (*size == 0)
        return KILN_OK;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t np = (size_t)((*size + pg - 1) / pg);
    void *m = mmap(NULL, (size_t)*size, PROT_READ, MAP_SHARED, *fd, 0);
    unsigned char *v = m == MAP_FAILED ? NULL : malloc(np);
    if (v != NULL && mincore(m, (size_t)*size, v) != 0) {
        free(v);
        v = NULL;
    }
    if (m != MAP_FAILED)
        munmap(m, (size_t)*size);
    if (v == NULL) {
        /* Unknown residency: every page counts as absent. */
        v = calloc(np, 1);
        if (v == NULL) {
            close(*fd);
            return status_set(err, KILN_NOMEM, "%s: residency of %zu pages", path, np);
        }
    }
    *vec = v;
    *pages = np;
    return KILN_OK;
}

kiln_status
env_uncached_bytes(const char *path, uint64_t *out, kiln_err *err)
{
    *out = 0;
    int fd;
    uint64_t size;
    unsigned char *vec;
    size_t np;
    kiln_status s = env_residency(path, &fd, &size, &vec, &np, err);
    if (s != KILN_OK)
        return s;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), absent = 0;
    for (size_t i = 0; i < np; i++)
        absent += !(vec[i] & 1);
    uint64_t bytes = (uint64_t)absent * pg;
    *out = bytes < size ? bytes : size;
    free(vec);
    close(fd);
    return KILN_OK;
}

kiln_status
env_cache_file(const char *path, int (*stop)(void *), void *stop_arg, uint64_t *read,
               kiln_err *err)
{
    if (read != NULL)
        *read = 0;
    int fd;
    uint64_t size;
    unsigned char *vec;
    size_t np;
    kiln_status s = env_residency(path, &fd, &size, &vec, &np, err);
    if (s != KILN_OK)
        return s;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t per_chunk = ENV_CACHE_CHUNK / pg;
    char *scratch = np > 0 ? malloc(ENV_CACHE_CHUNK) : NULL;
    if (np > 0 && scratch == NULL)
        s = status_set(err, KILN_NOMEM, "%s: read buffer", path);
    uint64_t done = 0;
    for (size_t i = 0; s == KILN_OK && i < np;) {
        if (vec[i] & 1) {
            i++;
            continue;
        }
        /* A run of absent pages, one read at most a chunk long. */
        size_t j = i + 1;
        while (j < np && j - i < per_chunk && !(vec[j] & 1))
            j++;
        if (stop != NULL && stop(stop_arg))
            break;
        uint64_t off = (uint64_t)i * pg, end = (uint64_t)j * pg;
        if (end > size)
            end = size;
        ssize_t r = pread(fd, scratch, (size_t)(end - off), (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            s = status_set_errno(err, errno, "%s: read at offset %llu", path,
                                 (unsigned long long)off);
        else if (r == 0)
            break;   /* the file shrank since it was mapped */
        else
            done += (uint64_t)r;
        i = j;
    }
    free(scratch);
    free(vec);
    close(fd);
    if (read != NULL)
        *read = done;
    return s;
}

uint64_t
env_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "re");
    if (f == NULL)
        return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (uint64_t)kb * 1024;
}
