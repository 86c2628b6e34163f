/* env.h -- the file layer: every byte Kiln reads or writes goes through here.
 *
 * Writable files are append-only with a user-space buffer (flushed on
 * env_flush/env_sync/env_close); readable files are positional (pread) and
 * safe to share between threads. Errors name the file and capture errno at the
 * failing call.
 *
 * Fault injection: tests arm env_fault_arm(op, k, errno) so that the k-th call
 * of that kind from now fails as if the system call had, which is how crash
 * points (a failed write, fsync or rename) are enumerated. The counters are
 * process-wide and atomic.
 */
#ifndef KILN_ENV_H
#define KILN_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "storage/buf.h"
#include "storage/status.h"

typedef struct env_file env_file;

typedef enum env_op {
    ENV_OP_OPEN = 0,   /* env_open_read, env_create */
    ENV_OP_WRITE,      /* a write(2) of buffered bytes */
    ENV_OP_SYNC,       /* fdatasync of a file or fsync of a directory */
    ENV_OP_RENAME,
    ENV_OP_READ,       /* env_pread */
    ENV_OP_LINK,
    ENV_OP_UNLINK,
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
/* Create (truncating) a file for appending. excl: fail with KILN_EXISTS if present. */
kiln_status env_create(const char *path, int excl, env_file **out, kiln_err *err);

/* Append n bytes (buffered). */
kiln_status env_append(env_file *f, const void *p, size_t n, kiln_err *err);
/* Push buffered bytes to the kernel. */
kiln_status env_flush(env_file *f, kiln_err *err);
/* Flush and fdatasync. */
kiln_status env_sync(env_file *f, kiln_err *err);

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
kiln_status env_unlink(const char *path, kiln_err *err);
/* fsync a directory so renames and creations in it are durable. */
kiln_status env_sync_dir(const char *dir, kiln_err *err);
/* mkdir -p. */
kiln_status env_mkdirs(const char *path, int mode, kiln_err *err);
/* 1 if path exists (any type), 0 if not. */
int env_exists(const char *path);

/* Read a whole (small) file into out (appends). */
kiln_status env_read_file(const char *path, kbuf *out, kiln_err *err);
/* Write a small file durably: PATH.tmp, fsync, rename over PATH, fsync the directory. */
kiln_status env_write_file_atomic(const char *path, const void *p, size_t n, kiln_err *err);

#endif
