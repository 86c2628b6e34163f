/* env_power.h -- simulated power loss in the file layer, for crash tests.
 *
 * While recording, every change env.h makes is noted: per file, the bytes
 * handed to the kernel and the bytes made durable by env_sync; per
 * directory, the entries created, linked, renamed and unlinked, and whether
 * an env_sync_dir of that directory followed. env_power_cut_at(k) turns the
 * power off just before the k-th changing call (create, mkdir, write, sync,
 * directory sync, rename, link, unlink, rmdir): that call and every later
 * env call fail with EIO and do nothing, so the operation unwinds without
 * touching the disk. env_power_restore() then makes the disk look as after
 * a power cut and reboot: directory changes not followed by a directory
 * fsync are undone, newest first (creations removed, renames reverted,
 * links removed, unlinked entries put back), and every surviving file is
 * cut to the length it had at its last sync. The model is the strict one
 * (no ordering between files and directories is assumed); files that
 * existed before recording began count as durable.
 *
 * Entries renamed over or unlinked while recording are kept alive by a hard
 * link under the stash directory (same file system as the store), so that
 * undoing the change can put them back.
 *
 * Thread-safety: recording is process-wide and serialized by a mutex; it is
 * meant for single-operation tests, not for concurrent ones.
 */
#ifndef KILN_ENV_POWER_H
#define KILN_ENV_POWER_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/status.h"

/* Kinds of changing calls, as counted and traced. */
typedef enum env_power_kind {
    ENV_POWER_CREATE = 0,   /* a file created (env_create, env_lock_open) */
    ENV_POWER_MKDIR,
    ENV_POWER_WRITE,        /* bytes handed to the kernel */
    ENV_POWER_SYNC,         /* fdatasync of a file */
    ENV_POWER_SYNC_DIR,
    ENV_POWER_RENAME,
    ENV_POWER_LINK,
    ENV_POWER_UNLINK,
    ENV_POWER_RMDIR,
    ENV_POWER_KIND_COUNT
} env_power_kind;

/* Start recording (forgetting any earlier record). stash_dir must exist on
 * the store's file system and stay outside the store. */
void env_power_begin(const char *stash_dir);
/* Cut the power just before the k-th (1-based) changing call from the last
 * env_power_begin. k = 0: never (the cut happens at env_power_restore). */
void env_power_cut_at(long k);
/* Before env_power_restore: use the loose model instead of the strict one.
 * A point in the sequence of directory changes is drawn from seed, and every
 * change before it survives, fsynced or not (a file system may write any of
 * them back early); each file keeps its synced bytes and a drawn prefix of
 * the rest (a torn write). seed 0: the strict model (the default). */
void env_power_survive_some(uint64_t seed);
/* 1 once the power is off. */
int env_power_is_cut(void);
/* Changing calls made since env_power_begin (those refused after the cut
 * not counted). */
long env_power_calls(void);
/* The kind of the i-th (1-based) changing call, or -1 past the end. */
int env_power_kind_of(long i);
/* Cut the power now if it is on, then make the disk what would survive it,
 * and stop recording. KILN_IO if an undo step failed (the test's world is
 * then not the modelled one). */
kiln_status env_power_restore(kiln_err *err);
/* Stop recording without losing anything. */
void env_power_end(void);

#endif
