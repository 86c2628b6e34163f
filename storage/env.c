/* env.c -- POSIX file layer with fault injection. */
#include "storage/env.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENV_WRITE_BUF (256 * 1024)

struct env_file {
    int fd;
    int writable;
    uint64_t size;     /* readable: size at open; writable: bytes appended */
    kbuf wbuf;         /* pending appended bytes */
    char *path;
};

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
    if (e)
        return status_set_errno(err, e, "%s: open", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return status_set_errno(err, errno, "%s: open", path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int se = errno;
        close(fd);
        return status_set_errno(err, se, "%s: stat", path);
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return status_set(err, KILN_INVALID, "%s: is a directory", path);
    }
    *out = env_file_new(fd, 0, (uint64_t)st.st_size, path);
    return KILN_OK;
}

kiln_status
env_create(const char *path, int excl, env_file **out, kiln_err *err)
{
    *out = NULL;
    int e = env_fault_hit(ENV_OP_OPEN);
    if (e)
        return status_set_errno(err, e, "%s: create", path);
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (excl ? O_EXCL : O_TRUNC);
    int fd = open(path, flags, 0644);
    if (fd < 0)
        return status_set_errno(err, errno, "%s: create", path);
    *out = env_file_new(fd, 1, 0, path);
    return KILN_OK;
}

static kiln_status
env_write_all(env_file *f, const uint8_t *p, size_t n, kiln_err *err)
{
    int e = env_fault_hit(ENV_OP_WRITE);
    if (e)
        return status_set_errno(err, e, "%s: write", f->path);
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
    if (e)
        return status_set_errno(err, e, "%s: fsync", f->path);
    if (fdatasync(f->fd) != 0)
        return status_set_errno(err, errno, "%s: fsync", f->path);
    return KILN_OK;
}

kiln_status
env_pread(env_file *f, uint64_t off, void *dst, size_t n, kiln_err *err)
{
    int e = env_fault_hit(ENV_OP_READ);
    if (e)
        return status_set_errno(err, e, "%s: read at offset %llu", f->path, (unsigned long long)off);
    if (!f->writable && (off > f->size || n > f->size - off))
        return status_set(err, KILN_CORRUPTION,
                          "%s: truncated: wanted %zu bytes at offset %llu, file has %llu",
                          f->path, n, (unsigned long long)off, (unsigned long long)f->size);
    uint8_t *p = dst;
    while (n > 0) {
        ssize_t r = pread(f->fd, p, n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return status_set_errno(err, errno, "%s: read at offset %llu", f->path,
                                    (unsigned long long)off);
        }
        if (r == 0)
            return status_set(err, KILN_CORRUPTION, "%s: truncated at offset %llu", f->path,
                              (unsigned long long)off);
        p += r;
        off += (uint64_t)r;
        n -= (size_t)r;
    }
    return KILN_OK;
}

kiln_status
env_close(env_file *f, kiln_err *err)
{
    if (f == NULL)
        return KILN_OK;
    kiln_status s = env_flush(f, err);
    if (close(f->fd) != 0 && s == KILN_OK && f->writable)
        s = status_set_errno(err, errno, "%s: close", f->path);
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
    if (e)
        return status_set_errno(err, e, "rename %s -> %s", from, to);
    if (rename(from, to) != 0)
        return status_set_errno(err, errno, "rename %s -> %s", from, to);
    return KILN_OK;
}

kiln_status
env_link(const char *from, const char *to, kiln_err *err)
{
    int e = env_fault_hit(ENV_OP_LINK);
    if (e)
        return status_set_errno(err, e, "link %s -> %s", from, to);
    if (link(from, to) != 0)
        return status_set_errno(err, errno, "link %s -> %s", from, to);
    return KILN_OK;
}

kiln_status
env_unlink(const char *path, kiln_err *err)
{
    int e = env_fault_hit(ENV_OP_UNLINK);
    if (e)
        return status_set_errno(err, e, "%s: unlink", path);
    if (unlink(path) != 0)
        return status_set_errno(err, errno, "%s: unlink", path);
    return KILN_OK;
}

kiln_status
env_sync_dir(const char *dir, kiln_err *err)
{
    int e = env_fault_hit(ENV_OP_SYNC);
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
        if (mkdir(tmp, (mode_t)mode) != 0 && errno != EEXIST)
            return status_set_errno(err, errno, "%s: mkdir", tmp);
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
        unlink(tmp);
        return s;
    }
    char dir[PATH_MAX];
    memcpy(dir, path, strlen(path) + 1);
    return env_sync_dir(dirname(dir), err);
}
