/* env_power_int.h -- the power-loss recorder's hooks (env_power.c), through
 * which env.c reports changes to it. Private to storage/base/env*.c.
 *
 * Every changing call first asks env_power_gate (which counts it and may cut
 * the power), then, once it succeeded, notes what it changed. Calls that only
 * look (open for reading, read, list, stat) ask env_power_down. Entries about
 * to be renamed over or unlinked are first stashed (a hard link kept by the
 * recorder) so the change can be undone.
 */
#ifndef KILN_ENV_POWER_INT_H
#define KILN_ENV_POWER_INT_H

#include <stdint.h>

#include "storage/base/env_power.h"

/* errno to fail a changing call of kind k with (EIO once the power is off),
 * or 0 to go on. */
int env_power_gate(env_power_kind k);
/* EIO once the power is off, else 0. */
int env_power_down(void);

void env_power_note_create(const char *path, int is_dir, int existed);
void env_power_note_write(const char *path, uint64_t n);
void env_power_note_sync(const char *path);
void env_power_note_sync_dir(const char *dir);
void env_power_note_link(const char *from, const char *to);
/* Stash path if it exists (before it is renamed over or unlinked); returns
 * a token for the note, or -1. */
long env_power_stash(const char *path);
/* The change the stash was for failed: drop it. */
void env_power_unstash(long token);
void env_power_note_rename(const char *from, const char *to, long token);
void env_power_note_unlink(const char *path, long token, int is_dir);

#endif
