/* env.h -- the file layer: every byte Kiln reads or writes goes through here.
 *
 * Writable files are append-only with a user-space buffer (flushed on
 * env_flush/env_sync/env_close); readable files are positional (pread) and
 * safe to share between threads, and hold a descriptor only while they are
 * among the most recently used (the file cache, env_set_max_open_files). Errors name the file and capture errno at the
 * failing call.
 *
 * Fault injection: tests arm env_fault_arm(op, k, errno) so that the k-th call
 * of that kind from now fails as if the system call had, which is how crash
 * points (a failed write, fsync or rename) are enumerated. The counters are
 * process-wide and atomic.
 *
 * Power loss: env_power.h records what each call made durable and can cut
 * the power at any changing call (tests only; off by default).
 */
#ifndef KILN_ENV_H
#define KILN_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"

typedef struct env_file env_file;

typedef enum env_op {
    ENV_OP_OPEN = 0,   /* env_open_read, env_create */
    ENV_OP_WRITE,      /* a write(2) of buffered bytes */
    ENV_OP_SYNC,       /* fdatasync of a file or fsync of a directory */
    ENV_OP_RENAME,
    ENV_OP_READ,       /* env_pread */
    ENV_OP_LINK,
    ENV_OP_UNLINK,     /* env_unlink, env_rmdir */
    ENV_OP_MKDIR,
    ENV_OP_LIST,       /* env_list_dir */
    ENV_OP_STAT,
    ENV_OP_LOCK,       /* env_lock */
    ENV_OP_COUNT
} env_op;

/* Make the k-th (1-based) call of op from now on fail with errnum. k = 0 disarms op. */
void env_fault_arm(env_op op, long k, int errnum);
/* Disarm every op and reset the call counters. */
void env_fault_clear(void);
/* Calls of op since the last env_fault_clear (to size a crash-point loop). */
long env_op_calls(env_op op);

/* Open an existing file for positional reads. KILN_NOT_FOUND if absent. */
kiln_status env_open_read(const char *path, env_file **out, kiln_err *err);
/* The file cache: readable files share a budget of open descriptors. Past
 * it, the least recently used idle descriptor is closed and its file reopens
 * by path on its next read (checked to be the same inode; KILN_NOT_FOUND if
 * it was removed meanwhile). n = 0: half the RLIMIT_NOFILE soft limit, at
 * least 8 (the default). Thread-safe. */
void env_set_max_open_files(long n);
long env_max_open_files(void);
/* Descriptors held by readable files now; reopens since the process started. */
long env_open_files(void);
long env_reopens(void);

/* Create (truncating) a file for appending. excl: fail with KILN_EXISTS if present. */
kiln_status env_create(const char *path, int excl, env_file **out, kiln_err *err);

/* Append n bytes (buffered). */
kiln_status env_append(env_file *f, const void *p, size_t n, kiln_err *err);
/* Push buffered bytes to the kernel. */
kiln_status env_flush(env_file *f, kiln_err *err);
/* Flush and fdatasync. */
kiln_status env_sync(env_file *f, kiln_err *err);

/* Append n bytes of in, from offset off, to out: in the kernel
 * (copy_file_range) where it can, else through a buffer. Counted and
 * faulted as writes (one per chunk of up to 8 MiB). KILN_CORRUPTION if in
 * ends early. */
kiln_status env_copy_range(env_file *in, uint64_t off, env_file *out, uint64_t n,
                           kiln_err *err);
/* Make out, empty and open for writing, share all of in's blocks
 * (copy-on-write: FICLONE) where the file system can. *cloned = 0 (and
 * KILN_OK, out untouched) where it cannot: another file system, or one
 * without reflinks. Counted and faulted as one write of in's size. */
kiln_status env_clone(env_file *in, env_file *out, int *cloned, kiln_err *err);
/* Read exactly n bytes at off. Reading past the end is KILN_CORRUPTION
 * ("PATH: truncated: wanted N bytes at offset O, file has S"). Thread-safe. */
kiln_status env_pread(env_file *f, uint64_t off, void *dst, size_t n, kiln_err *err);

/* Flush (writable files) and close. f may be NULL. */
kiln_status env_close(env_file *f, kiln_err *err);

/* Size at open for readable files; bytes appended so far for writable ones. */
uint64_t env_file_size(const env_file *f);
const char *env_file_path(const env_file *f);
int env_file_fd(const env_file *f);

kiln_status env_rename(const char *from, const char *to, kiln_err *err);
kiln_status env_link(const char *from, const char *to, kiln_err *err);
/* KILN_NOT_FOUND if absent. */
kiln_status env_unlink(const char *path, kiln_err *err);
/* fsync a directory so renames and creations in it are durable. */
kiln_status env_sync_dir(const char *dir, kiln_err *err);
/* mkdir -p. */
kiln_status env_mkdirs(const char *path, int mode, kiln_err *err);
/* 1 if path exists (any type), 0 if not. */
int env_exists(const char *path);

/* mkdir of one directory. KILN_EXISTS if present. */
kiln_status env_mkdir(const char *path, int mode, kiln_err *err);
/* rmdir of an empty directory. KILN_NOT_FOUND if absent. */
kiln_status env_rmdir(const char *path, kiln_err *err);
/* Rename that never replaces: KILN_EXISTS if `to` exists (renameat2
 * RENAME_NOREPLACE, else a check then rename, which suffices for directories). */
kiln_status env_rename_noreplace(const char *from, const char *to, kiln_err *err);
/* The names in dir (without . and ..), sorted; free with env_list_free.
 * KILN_NOT_FOUND if dir is absent. */
kiln_status env_list_dir(const char *dir, char ***names, size_t *count, kiln_err *err);
void env_list_free(char **names, size_t count);

typedef struct env_stat_info {
    uint64_t size;
    int is_dir;
    int is_reg;
    uint64_t dev, ino, nlink;
    int64_t mtime_ns, ctime_ns;
} env_stat_info;

/* stat(2), following links. KILN_NOT_FOUND if absent. */
kiln_status env_stat(const char *path, env_stat_info *out, kiln_err *err);

/* Open (creating) path and take an exclusive flock on it, writing our pid
 * into it (informational). wait_ms: 0 fails at once, > 0 waits that long,
 * < 0 forever. When held by another process: KILN_BUSY, with the holder's
 * pid as written into holder (may be ""). Release with env_unlock. */
kiln_status env_lock(const char *path, long wait_ms, env_file **out, char *holder,
                     size_t holder_cap, kiln_err *err);
void env_unlock(env_file *f);

/* The page cache. env_uncached_bytes: the bytes of path's pages that are
 * not in memory now (mincore of a read-only mapping; a file that cannot be
 * mapped counts whole). env_cache_file: read those pages, and only those,
 * into the page cache with blocking reads of up to 1 MiB, so that a caller
 * finding them later does not wait on the disk; stop (may be NULL) is asked
 * between reads and ends the work early when it returns nonzero. *read
 * (may be NULL) gets the bytes read. Neither changes the file. */
kiln_status env_uncached_bytes(const char *path, uint64_t *out, kiln_err *err);
kiln_status env_cache_file(const char *path, int (*stop)(void *), void *stop_arg,
                           uint64_t *read, kiln_err *err);
/* Memory the system could give without swapping (MemAvailable), in bytes;
 * 0 if unknown. */
uint64_t env_mem_available(void);

/* Read a whole (small) file into out (appends). */
kiln_status env_read_file(const char *path, kbuf *out, kiln_err *err);
/* Write a small file durably: PATH.tmp, fsync, rename over PATH, fsync the directory. */
kiln_status env_write_file_atomic(const char *path, const void *p, size_t n, kiln_err *err);

#endif
