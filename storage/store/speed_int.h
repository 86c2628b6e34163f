/* speed_int.h -- the inside of the speed layer (speed.h), shared by the
 * files that implement it: speed.c (tables, the read point, read views,
 * opening and replay, the background thread), speed_write.c (the write
 * path), speed_flush.c (flushes) and speed_compact.c (compactions and
 * splits). Private to storage/store/.
 *
 * Locks: a table's `mu` guards its sequence, memstores, views and pending
 * writes; `flush_mu` serializes what publishes versions of it (flush,
 * compaction, split, taking someone else's version). flush_mu is taken
 * before mu, never while holding it.
 */
#ifndef KILN_SPEED_INT_H
#define KILN_SPEED_INT_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/store/memstore.h"
#include "storage/store/speed.h"
#include "storage/store/store_view.h"
#include "storage/store/wal.h"

#define SPEED_FROZEN_MAX 8

typedef struct speed_pending {
    uint64_t seq;
    int done;
    struct speed_pending *next;
} speed_pending;

typedef struct speed_frozen {
    memstore **ms;            /* per family */
    uint64_t base;            /* the version its writes were made over */
    uint64_t max_seq;         /* every write in it is <= this */
} speed_frozen;

typedef struct speed_table {
    char name[SCHEMA_NAME_MAX + 1];   /* canonical */
    pthread_mutex_t mu;
    pthread_cond_t advanced;          /* the read point moved */
    uint64_t seq;                     /* last sequence number handed out */
    store_clock *clock;
    speed_pending *head, *tail;       /* writes not yet visible, in sequence order */
    size_t nfam;
    memstore **active;                /* per family of files' schema */
    uint64_t active_base;
    speed_frozen frozen[SPEED_FROZEN_MAX];
    size_t nfrozen;
    store_view *files;                /* the published version, plain */
    store_view *view;                 /* files + memstores */
    int writable;                     /* no indexes, not salted */
    pthread_mutex_t flush_mu;         /* one flush of the table at a time */
    uint64_t writes, flushes;
} speed_table;

struct kiln_speed {
    char data_dir[PATH_MAX];
    block_cache *cache;
    speed_options o;
    wal *log;                          /* NULL when read-only */
    pthread_mutex_t mu;                /* the table list */
    speed_table **tables;
    size_t ntables;
    pthread_t flusher;
    int flusher_running;
    pthread_mutex_t wake_mu;
    pthread_cond_t wake;
    int stopping, flush_due;
};

/* n empty memstores (one per family), and their release. */
memstore **speed_new_memstores(size_t n);
void speed_free_memstores(memstore **ms, size_t n);
/* Cells and arena bytes over n memstores. */
size_t speed_memstores_cells(memstore *const *ms, size_t n);
size_t speed_memstores_bytes(memstore *const *ms, size_t n);
/* Rebuild t->view from t->files and the memstores. REQUIRES: t->mu held. */
void speed_rebuild_view(speed_table *t);
/* The flushed write sequence of a plain view's manifest (0: none). */
uint64_t speed_flushed_seq(const store_view *files);
/* Freeze the active memstores (if they hold anything) and start new ones
 * over version `base`. REQUIRES: t->mu held. 0, or -1 when too many are
 * frozen already (the caller flushes first). */
int speed_freeze(speed_table *t, uint64_t base);
/* Take files as the table's published version: drop the frozen memstores
 * its flushed sequence covers; a version made by someone else freezes the
 * active ones (their writes were made over the older version). REQUIRES:
 * t->mu held. Consumes the reference on files. */
void speed_take_files(speed_table *t, store_view *files, int own);
/* After a flush, compaction or split of ours published `version` (over
 * `parent`; 0: not known): open the current version and take it if it is
 * not older than the one the table has -- as ours when it is `version` and,
 * if parent is known, we had its parent (else someone else's came in
 * between, and the memstores since are over theirs). Takes t->mu. */
void speed_take_published(kiln_speed *s, speed_table *t, uint64_t version, uint64_t parent);
/* The table called name (opened on first use). */
kiln_status speed_table_get(kiln_speed *s, const char *name, speed_table **out, kiln_err *err);
/* Queue a write's number. REQUIRES: t->mu held, seq the newest. */
void speed_pending_add(speed_table *t, speed_pending *p, uint64_t seq);
/* Mark p done, move the read point over every completed write at the head,
 * and wait until p's write is visible. */
void speed_complete(speed_table *t, speed_pending *p);
/* Wait until every write numbered <= seq is visible. */
void speed_wait_visible(speed_table *t, uint64_t seq);
/* Look at the table's CURRENT: a version published by someone else (a
 * load, a rollback) is taken. */
kiln_status speed_refresh(kiln_speed *s, speed_table *t, kiln_err *err);

#endif
