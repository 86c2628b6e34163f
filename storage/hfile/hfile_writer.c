/* hfile_writer.c -- streams sorted cells into one HFile v3, byte for byte as
 * HBase 2.x's HFileWriterImpl + StoreFileWriter lay it out: data blocks closed
 * at the block size (never between equal keys), each followed by the inline
 * blocks that became ready (index leaf, general bloom chunks, delete-family
 * bloom chunks); at finish the last data block and inline blocks, the
 * intermediate index levels, then the load-on-open section (data root, empty
 * meta root, FILEINF2, BLMFMET2, DFBLMET2) and the 4096-byte trailer.
 *
 * Blocks are built in the caller's batch, each behind 33 bytes reserved for
 * its header, so an uncompressed block is checksummed and appended without a
 * copy. Closed blocks are written in file order by block_out, on the
 * background thread (threads = 1) or the caller's; an index record is added
 * with offset 0 and patched when its block's batch comes back (batch_collect).
 * Per cell there is no allocation: the key is serialized straight into the
 * block, and the previous key's row is read back from there for the order
 * check.
 */
#include "storage/hfile/hfile_writer.h"

#include "storage/base/coding.h"
#include "storage/base/env.h"
#include "storage/hfile/hfile_format.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HDR HFILE_BLOCK_HEADER_SIZE
#define BPC HFILE_BYTES_PER_CHECKSUM
/* Index levels HBase stops adding intermediate levels at. */
#define INDEX_MAX_LEVELS 16
/* CompoundBloomFilterBase.VERSION */
#define BLOOM_META_VERSION 3
/* Written by HBase 2.x in ROWCOL bloom metadata (CellComparatorImpl's class). */
#define BLOOM_ROWCOL_COMPARATOR "org.apache.hadoop.hbase.CellComparatorImpl"
/* A cell larger than this could not fit a block whose sizes are Java ints. */
#define CELL_SERIALIZED_MAX (1u << 30)

/* ------------------------------------------------------------------ index chunks */

/* One child reference of an index block under construction. */
typedef struct index_rec {
    uint64_t offset;
    uint32_t size;          /* child's on-disk size, header and checksums included */
    uint32_t key_len;
    size_t key_off;         /* into the chunk's keys buffer */
    uint64_t sub_entries;   /* leaf entries up to and including this child (mid-key) */
} index_rec;

/* A block index chunk: a leaf, intermediate or root block, or a bloom chunk
 * index. Tracks its size in both serialized forms as entries are added. */
typedef struct index_chunk {
    kbuf keys;
    index_rec *recs;
    size_t n, cap;
    size_t root_size;       /* bytes in root format */
    size_t nonroot_bytes;   /* sum of 12 + key length (non-root entries area) */
} index_chunk;

static void
chunk_init(index_chunk *c)
{
    memset(c, 0, sizeof *c);
    buf_init(&c->keys);
}

static void
chunk_free(index_chunk *c)
{
    buf_free(&c->keys);
    free(c->recs);
    chunk_init(c);
}

static void
chunk_clear(index_chunk *c)
{
    buf_reset(&c->keys);
    c->n = 0;
    c->root_size = 0;
    c->nonroot_bytes = 0;
}

static void
chunk_add(index_chunk *c, const uint8_t *key, size_t klen, uint64_t offset, uint32_t size,
          uint64_t sub_entries)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->recs = kiln_realloc(c->recs, c->cap * sizeof c->recs[0]);
    }
    index_rec *r = &c->recs[c->n++];
    r->offset = offset;
    r->size = size;
    r->key_len = (uint32_t)klen;
    r->key_off = c->keys.len;
    r->sub_entries = sub_entries;
    buf_append(&c->keys, key, klen);
    c->root_size += hfile_root_entry_size(klen);
    c->nonroot_bytes += 12 + klen;
}

static kslice
chunk_key(const index_chunk *c, size_t i)
{
    return kslice_make(c->keys.data + c->recs[i].key_off, c->recs[i].key_len);
}

/* Serialized size in the non-root format (HBase BlockIndexChunk.getNonRootSize). */
static size_t
chunk_nonroot_size(const index_chunk *c)
{
    return 4 + 4 * (c->n + 1) + c->nonroot_bytes;
}

static void
chunk_write_root(const index_chunk *c, kbuf *out)
{
    buf_reserve(out, c->root_size);
    for (size_t i = 0; i < c->n; i++) {
        kslice k = chunk_key(c, i);
        hfile_root_entry_append(out, c->recs[i].offset, c->recs[i].size, k.p, k.n);
    }
}

/* ------------------------------------------------------------------ writer state */

/* A bloom chunk that filled up and waits for the end of the current data block. */
typedef struct ready_chunk {
    kbuf bits;
    kbuf key;
} ready_chunk;

typedef struct writer_bloom {
    kiln_bloom_type type;       /* ROW or ROWCOL (the delete-family bloom is ROW) */
    bloom_chunker *chunker;     /* NULL when this bloom is off */
    int chunk_open;             /* a chunk holds keys not yet handed out */
    kbuf first_key;             /* ROWCOL: index key of the open chunk */
    ready_chunk *ready;
    size_t nready, cap_ready;
    index_chunk index;          /* chunks written so far */
    uint64_t keys;              /* keys added */
    kbuf last_row;              /* delete-family bloom: row of the last key added */
} writer_bloom;

/* A closed block waiting in a batch: [33 reserved][payload] at start. */
typedef struct pipe_block {
    hfile_block_type type;
    size_t start, len;          /* in the batch's data, header reservation included */
    index_chunk *patch;         /* index record that receives offset and size, or NULL */
    size_t patch_i;
    uint64_t offset;            /* set when written */
    uint32_t size;
} pipe_block;

/* Closed blocks in file order, handed to the writing thread as one unit. */
typedef struct block_batch {
    kbuf data;
    pipe_block *blocks;
    size_t n, cap;
} block_batch;

/* Where framed blocks go: the file, the bytes appended so far and each
 * type's previous block. Owned by the background thread while it runs,
 * otherwise by the caller's thread. */
typedef struct block_out {
    env_file *f;
    const char *path;
    kiln_codec codec;
    uint64_t offset;
    int64_t prev_offset[HFILE_BLOCK_TYPE_COUNT];
    kbuf comp;                  /* compressed block: [33 reserved][payload] */
    kbuf sums;                  /* the block's CRC32C checksums */
    kiln_status status;         /* first failure; nothing is written after it */
    kiln_err err;
} block_out;

/* The background thread and its ring of batches. Batch k lives in slot
 * k % PIPE_SLOTS; submitted >= processed >= collected. The caller fills its
 * own batch, swaps it into the ring, and takes a written batch's offsets
 * back (collect) before the slot is reused, so memory is PIPE_SLOTS + 1
 * batches however long the file. */
#define PIPE_SLOTS 4
typedef struct writer_pipe {
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    pthread_t thread;
    block_batch slot[PIPE_SLOTS];
    uint64_t submitted, processed;  /* under mu */
    uint64_t collected;             /* the caller's alone */
    int stop, cancel;               /* under mu */
    int thread_idle, caller_idle;   /* waiting on work / done (under mu) */
    atomic_int failed;              /* the thread's block_out holds an error */
    block_out *out;
} writer_pipe;

struct hfile_writer {
    char *path;
    hfile_writer_options o;
    char *source_task;
    kiln_status status;         /* sticky: the first failure */
    kiln_err err;

    block_out out;
    writer_pipe *pipe;          /* NULL until the first batch goes to the thread */
    int threaded;               /* write on a background thread (o.threads) */
    uint64_t offset;            /* bytes known written (the caller's view) */
    uint64_t in_flight;         /* closed blocks not yet known written, as built */
    uint64_t total_uncompressed;  /* trailer field 4, trailer itself excluded */
    uint64_t index_uncompressed;  /* trailer field 3 */

    /* The caller's batch: closed blocks, then the open data block at
     * block_base ([33 reserved][cells]). Key offsets are into cur.data. */
    block_batch cur;
    size_t block_base;
    int block_has_cells;
    size_t first_key_off;       /* key of the block's first cell */
    uint32_t first_key_len;
    size_t last_key_off;        /* key of the last cell added */
    uint32_t last_key_len;
    kbuf prev_last_key;         /* last key of the previous data block */

    kbuf scratch;               /* index, bloom, meta and file info blocks */
    kbuf keybuf;                /* index and bloom keys under construction */
    hfile_index_entry *ents;    /* non-root encoding input */
    size_t ents_cap;

    index_chunk leaf;           /* pending leaf chunk; the root if never flushed */
    index_chunk root;           /* root over the leaves (levels > 1) */
    index_chunk level_next, level_chunk;  /* intermediate level construction */
    uint32_t levels;
    uint64_t index_entries;     /* data blocks indexed */

    writer_bloom gbloom, dfbloom;

    uint64_t entries, data_blocks, raw_bytes;
    uint64_t total_key_len, total_value_len;
    int64_t first_data_block_offset, last_data_block_offset;
    int64_t max_mvcc;
    uint32_t max_tags_len;
    uint64_t biggest_len;
    kbuf biggest_key;
    int64_t tr_min, tr_max, earliest_put;
    uint64_t delete_family_count;
    int64_t create_time;

    hfile_fileinfo fi;          /* user entries; completed at finish */
};

void
hfile_writer_options_init(hfile_writer_options *o)
{
    memset(o, 0, sizeof *o);
    o->codec = CODEC_NONE;
    o->block_size = 65536;
    o->bloom = BLOOM_ROW;
    o->include_tags = 1;
    o->include_mvcc = 1;
    o->index_block_max = HFILE_INDEX_BLOCK_MAX;
    o->bloom_chunk_bytes = BLOOM_CHUNK_BYTES_DEFAULT;
    o->bloom_error_rate = BLOOM_ERROR_RATE_DEFAULT;
    o->create_time_ms = 0;
    o->bulkload_info = 1;
    o->source_task = NULL;
    o->sync = 1;
    o->threads = 1;
    o->batch_bytes = 262144;
}

static int64_t
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Record the first failure (sticky) and return its code. */
static kiln_status
writer_fail(hfile_writer *w, kiln_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static kiln_status
writer_fail(hfile_writer *w, kiln_status code, const char *fmt, ...)
{
    if (w->status != KILN_OK)
        return w->status;
    char msg[STATUS_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    status_set(&w->err, code, "%s", msg);
    w->status = code;
    return code;
}

/* Adopt an error already recorded in w->err by a callee (env keeps errno). */
static kiln_status
writer_adopt(hfile_writer *w, kiln_status s)
{
    if (s != KILN_OK && w->status == KILN_OK)
        w->status = s;
    return w->status;
}

/* Copy the sticky error to the caller's err (first error wins there too). */
static kiln_status
writer_report(const hfile_writer *w, kiln_err *err)
{
    if (err != NULL && err->code == KILN_OK && w->status != KILN_OK)
        *err = w->err;
    return w->status;
}

/* ------------------------------------------------------------------ blocks */

/* Reset b to hold only the 33 reserved header bytes. */
static void
block_start(kbuf *b)
{
    buf_reset(b);
    buf_resize(b, HDR);
}

/* Record o's first failure. */
static kiln_status
out_fail(block_out *o, kiln_status code, int sys_errno, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static kiln_status
out_fail(block_out *o, kiln_status code, int sys_errno, const char *fmt, ...)
{
    if (o->status != KILN_OK)
        return o->status;
    char msg[STATUS_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    status_clear(&o->err);
    status_set(&o->err, code, "%s", msg);
    o->err.sys_errno = sys_errno;
    o->status = code;
    return code;
}

/* Compress, frame and append the block at b ([33 reserved][payload], len
 * bytes in all; the header is written into the reserved bytes). Returns its
 * offset and on-disk size (header and checksums included). */
static kiln_status
out_block(block_out *o, hfile_block_type type, uint8_t *b, size_t len, uint64_t *offset,
          uint32_t *size)
{
    if (o->status != KILN_OK)
        return o->status;
    size_t raw = len - HDR;
    uint8_t *d = b;
    size_t data = len;
    if (o->codec != CODEC_NONE) {
        block_start(&o->comp);
        kiln_err e;
        status_clear(&e);
        if (compress_block(o->codec, b + HDR, raw, &o->comp, &e) != KILN_OK)
            return out_fail(o, e.code, e.sys_errno, "%s: %s block at offset %llu: %s", o->path,
                            hfile_block_type_name(type), (unsigned long long)o->offset, e.msg);
        d = o->comp.data;
        data = o->comp.len;
    }
    size_t sums = hfile_checksum_size(data, BPC);
    if (data + sums > INT32_MAX || raw > INT32_MAX)
        return out_fail(o, KILN_INVALID, 0, "%s: %s block at offset %llu: %zu bytes is too large",
                        o->path, hfile_block_type_name(type), (unsigned long long)o->offset,
                        data + sums);
    hfile_block_header h;
    h.type = type;
    h.on_disk_size_without_header = (uint32_t)(data - HDR + sums);
    h.uncompressed_size_without_header = (uint32_t)raw;
    h.prev_block_offset = o->prev_offset[type];
    h.checksum_type = HFILE_CHECKSUM_CRC32C;
    h.bytes_per_checksum = BPC;
    h.on_disk_data_size_with_header = (uint32_t)data;
    hfile_block_header_encode(&h, d);
    buf_reset(&o->sums);
    buf_reserve(&o->sums, sums);
    hfile_checksum_compute(d, data, BPC, o->sums.data);
    kiln_err e;
    status_clear(&e);
    kiln_status s = env_append(o->f, d, data, &e);
    if (s == KILN_OK)
        s = env_append(o->f, o->sums.data, sums, &e);
    if (s != KILN_OK)
        return out_fail(o, s, e.sys_errno, "%s (%s block at offset %llu)", e.msg,
                        hfile_block_type_name(type), (unsigned long long)o->offset);
    *offset = o->offset;
    *size = (uint32_t)(data + sums);
    o->prev_offset[type] = (int64_t)o->offset;
    o->offset += data + sums;
    return KILN_OK;
}

/* Take o's failure as the writer's (sticky, first error wins). */
static kiln_status
writer_take_out(hfile_writer *w)
{
    if (w->out.status != KILN_OK && w->status == KILN_OK) {
        w->status = w->out.status;
        w->err = w->out.err;
    }
    return w->status;
}

/* Write the block in b now, on the caller's thread (finish only, once the
 * background thread is gone). */
static kiln_status
write_block(hfile_writer *w, hfile_block_type type, kbuf *b, uint64_t *offset, uint32_t *size)
{
    if (out_block(&w->out, type, b->data, b->len, offset, size) != KILN_OK)
        return writer_take_out(w);
    w->offset = w->out.offset;
    return KILN_OK;
}

/* Write a non-data block whose payload is in w->scratch and count it in the
 * trailer's total_uncompressed_bytes. */
static kiln_status
write_counted(hfile_writer *w, hfile_block_type type, uint64_t *offset, uint32_t *size)
{
    size_t raw = w->scratch.len - HDR;
    kiln_status s = write_block(w, type, &w->scratch, offset, size);
    if (s == KILN_OK)
        w->total_uncompressed += HDR + raw;
    return s;
}

/* ------------------------------------------------------------------ batches */

static void
batch_init(block_batch *b)
{
    memset(b, 0, sizeof *b);
    buf_init(&b->data);
}

static void
batch_free(block_batch *b)
{
    buf_free(&b->data);
    free(b->blocks);
    batch_init(b);
}

static void
batch_clear(block_batch *b)
{
    buf_reset(&b->data);
    b->n = 0;
}

/* Describe the block at [start, end of data) of the caller's batch; its index
 * record, if any, gets the offset and size once it is written. */
static void
batch_close_block(block_batch *b, hfile_block_type type, size_t start, index_chunk *patch,
                  size_t patch_i)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->blocks = kiln_realloc(b->blocks, b->cap * sizeof b->blocks[0]);
    }
    pipe_block *pb = &b->blocks[b->n++];
    pb->type = type;
    pb->start = start;
    pb->len = b->data.len - start;
    pb->patch = patch;
    pb->patch_i = patch_i;
    pb->offset = 0;
    pb->size = 0;
}

/* Write every block of b in order (either thread). */
static void
batch_write(block_out *o, block_batch *b)
{
    for (size_t i = 0; i < b->n && o->status == KILN_OK; i++) {
        pipe_block *pb = &b->blocks[i];
        out_block(o, pb->type, b->data.data + pb->start, pb->len, &pb->offset, &pb->size);
    }
}

/* Caller: a written batch's offsets go to the index records waiting for them. */
static void
batch_collect(hfile_writer *w, block_batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        const pipe_block *pb = &b->blocks[i];
        if (pb->patch != NULL) {
            pb->patch->recs[pb->patch_i].offset = pb->offset;
            pb->patch->recs[pb->patch_i].size = pb->size;
        }
        if (pb->type == HFILE_BLOCK_DATA) {
            if (w->first_data_block_offset < 0)
                w->first_data_block_offset = (int64_t)pb->offset;
            w->last_data_block_offset = (int64_t)pb->offset;
        }
        w->offset = pb->offset + pb->size;
        w->in_flight -= pb->len;
    }
    b->n = 0;
}

/* ------------------------------------------------------------------ the writing thread */

static void *
pipe_main(void *arg)
{
    writer_pipe *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->processed == p->submitted && !p->stop) {
            p->thread_idle = 1;
            pthread_cond_wait(&p->work, &p->mu);
            p->thread_idle = 0;
        }
        if (p->processed == p->submitted)
            break;
        block_batch *b = &p->slot[p->processed % PIPE_SLOTS];
        int cancel = p->cancel;
        pthread_mutex_unlock(&p->mu);
        /* After a failure or an abandon the batches are only counted. */
        if (!cancel && p->out->status == KILN_OK) {
            batch_write(p->out, b);
            if (p->out->status != KILN_OK)
                atomic_store_explicit(&p->failed, 1, memory_order_release);
        }
        pthread_mutex_lock(&p->mu);
        p->processed++;
        if (p->caller_idle)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Start the thread on the first batch. If it cannot start, the writer goes
 * on without it (same bytes, written on the caller's thread). */
static void
pipe_start(hfile_writer *w)
{
    writer_pipe *p = kiln_calloc(1, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 0; i < PIPE_SLOTS; i++)
        batch_init(&p->slot[i]);
    atomic_init(&p->failed, 0);
    p->out = &w->out;
    if (pthread_create(&p->thread, NULL, pipe_main, p) != 0) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->work);
        pthread_cond_destroy(&p->done);
        free(p);
        w->threaded = 0;
        return;
    }
    w->pipe = p;
}

/* Stop and join the thread (cancel: skip the batches not yet written) and
 * free the ring. The block_out is the caller's again afterwards. */
static void
pipe_stop(hfile_writer *w, int cancel)
{
    writer_pipe *p = w->pipe;
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    p->cancel |= cancel;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    for (int i = 0; i < PIPE_SLOTS; i++)
        batch_free(&p->slot[i]);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p);
    w->pipe = NULL;
}

/* A failure on the thread becomes the writer's. The release store in
 * pipe_main orders the thread's err before the flag. */
static kiln_status
pipe_check(hfile_writer *w)
{
    if (w->pipe != NULL && atomic_load_explicit(&w->pipe->failed, memory_order_acquire))
        return writer_take_out(w);
    return w->status;
}

/* Collect every batch the thread has written. REQUIRES: p->mu held. */
static void
pipe_collect_locked(hfile_writer *w)
{
    writer_pipe *p = w->pipe;
    while (p->collected < p->processed) {
        batch_collect(w, &p->slot[p->collected % PIPE_SLOTS]);
        p->collected++;
    }
}

/* Hand the closed blocks of the caller's batch on: to the thread (waiting
 * only while the ring is full) or, without one, write them now. The batch
 * must hold no open data block. */
static kiln_status
batch_submit(hfile_writer *w)
{
    if (w->cur.n == 0) {
        batch_clear(&w->cur);
        return w->status;
    }
    if (w->threaded && w->pipe == NULL)
        pipe_start(w);
    writer_pipe *p = w->pipe;
    if (p == NULL) {
        batch_write(&w->out, &w->cur);
        if (w->out.status != KILN_OK)
            return writer_take_out(w);
        batch_collect(w, &w->cur);
        batch_clear(&w->cur);
        return KILN_OK;
    }
    pthread_mutex_lock(&p->mu);
    pipe_collect_locked(w);
    while (p->submitted - p->collected >= PIPE_SLOTS) {
        p->caller_idle = 1;
        pthread_cond_wait(&p->done, &p->mu);
        p->caller_idle = 0;
        pipe_collect_locked(w);
    }
    block_batch *slot = &p->slot[p->submitted % PIPE_SLOTS];
    block_batch tmp = *slot;
    *slot = w->cur;
    w->cur = tmp;
    p->submitted++;
    if (p->thread_idle)
        pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    batch_clear(&w->cur);
    return pipe_check(w);
}

/* Submit the caller's batch and wait until everything is written and its
 * offsets collected (before a leaf index block, whose entries need them). */
static kiln_status
batch_drain(hfile_writer *w)
{
    if (batch_submit(w) != KILN_OK)
        return w->status;
    writer_pipe *p = w->pipe;
    if (p == NULL)
        return w->status;
    pthread_mutex_lock(&p->mu);
    pipe_collect_locked(w);
    while (p->collected < p->submitted) {
        p->caller_idle = 1;
        pthread_cond_wait(&p->done, &p->mu);
        p->caller_idle = 0;
        pipe_collect_locked(w);
    }
    pthread_mutex_unlock(&p->mu);
    return pipe_check(w);
}

/* Append a closed block with this payload to the caller's batch. */
static void
queue_block(hfile_writer *w, hfile_block_type type, const void *payload, size_t n,
            index_chunk *patch, size_t patch_i)
{
    size_t start = w->cur.data.len;
    buf_resize(&w->cur.data, start + HDR);
    buf_append(&w->cur.data, payload, n);
    batch_close_block(&w->cur, type, start, patch, patch_i);
    w->in_flight += HDR + n;
}

/* Open the next data block at the end of the caller's batch. */
static void
block_open(hfile_writer *w)
{
    w->block_base = w->cur.data.len;
    buf_resize(&w->cur.data, w->block_base + HDR);
    w->block_has_cells = 0;
}

/* Non-root payload of chunk c appended to w->scratch. */
static void
scratch_put_nonroot(hfile_writer *w, const index_chunk *c)
{
    if (c->n > w->ents_cap) {
        w->ents_cap = c->n * 2;
        w->ents = kiln_realloc(w->ents, w->ents_cap * sizeof w->ents[0]);
    }
    for (size_t i = 0; i < c->n; i++) {
        w->ents[i].offset = c->recs[i].offset;
        w->ents[i].on_disk_size = c->recs[i].size;
        w->ents[i].key = chunk_key(c, i);
    }
    hfile_nonroot_index_encode(&w->scratch, w->ents, (uint32_t)c->n);
}

/* ------------------------------------------------------------------ index keys */

static int
bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    if (c != 0)
        return c;
    return an < bn ? -1 : an > bn;
}

/* HBase 2.6 getMinimumMidpointArray: a short byte string s with a < s <= b.
 * When a is a prefix of b, s is a + 0x00; otherwise a up to the first
 * differing byte, that byte plus one. REQUIRES: a < b (unsigned order). */
static void
midpoint_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn, kbuf *out)
{
    size_t min = an < bn ? an : bn;
    size_t d = 0;
    while (d < min && a[d] == b[d])
        d++;
    buf_append(out, a, d);
    buf_append_u8(out, d == min ? 0x00 : (uint8_t)(a[d] + 1));
}

/* Append the key of a first-on-row/family/column cell (latest ts, Maximum). */
static void
key_first_on(kbuf *out, const uint8_t *row, size_t rlen, const uint8_t *fam, size_t flen,
             const uint8_t *qual, size_t qlen)
{
    kiln_cell k;
    memset(&k, 0, sizeof k);
    k.row = row;
    k.row_len = (uint32_t)rlen;
    k.family = fam;
    k.family_len = (uint32_t)flen;
    k.qualifier = qual;
    k.qualifier_len = (uint32_t)qlen;
    k.ts = CELL_LATEST_TIMESTAMP;
    k.type = CELL_TYPE_MAXIMUM;
    cell_key_append(&k, out);
}

/* The index key of a data block (HBase 2.6 getMidpoint): a short key k with
 * left < k <= right, left the previous block's last key, right this block's
 * first key. Written to out (reset first). */
static void
index_key_between(const uint8_t *lk, size_t lkl, const uint8_t *rk, size_t rkl, kbuf *out)
{
    buf_reset(out);
    kiln_cell l, r;
    if (cell_key_decode(lk, lkl, &l, NULL) != KILN_OK ||
        cell_key_decode(rk, rkl, &r, NULL) != KILN_OK) {
        buf_append(out, rk, rkl);
        return;
    }
    kbuf mid = KBUF_INIT;
    int c = bytes_cmp(l.row, l.row_len, r.row, r.row_len);
    if (c < 0) {
        midpoint_bytes(l.row, l.row_len, r.row, r.row_len, &mid);
        key_first_on(out, mid.data, mid.len, NULL, 0, NULL, 0);
    } else if (c == 0 &&
               (c = bytes_cmp(l.family, l.family_len, r.family, r.family_len)) < 0) {
        midpoint_bytes(l.family, l.family_len, r.family, r.family_len, &mid);
        key_first_on(out, r.row, r.row_len, mid.data, mid.len, NULL, 0);
    } else if (c == 0 &&
               bytes_cmp(l.qualifier, l.qualifier_len, r.qualifier, r.qualifier_len) < 0) {
        midpoint_bytes(l.qualifier, l.qualifier_len, r.qualifier, r.qualifier_len, &mid);
        key_first_on(out, r.row, r.row_len, r.family, r.family_len, mid.data, mid.len);
    } else {
        /* same column, or a family order only the last-on-row rule explains
         * (HBase refuses that case): the real key is always a valid entry */
        buf_append(out, rk, rkl);
    }
    buf_free(&mid);
}

/* ------------------------------------------------------------------ blooms */

static void
wbloom_init(writer_bloom *b, kiln_bloom_type type, size_t chunk_bytes, double error_rate)
{
    memset(b, 0, sizeof *b);
    b->type = type;
    chunk_init(&b->index);
    if (type != BLOOM_NONE)
        b->chunker = bloom_chunker_new(chunk_bytes, error_rate);
}

static void
wbloom_free(writer_bloom *b)
{
    bloom_chunker_free(b->chunker);
    buf_free(&b->first_key);
    for (size_t i = 0; i < b->cap_ready; i++) {
        buf_free(&b->ready[i].bits);
        buf_free(&b->ready[i].key);
    }
    free(b->ready);
    chunk_free(&b->index);
    buf_free(&b->last_row);
}

/* Queue a closed chunk to be written after the current data block. */
static void
wbloom_queue(writer_bloom *b, const bloom_chunk *ch)
{
    if (b->nready == b->cap_ready) {
        size_t cap = b->cap_ready ? b->cap_ready * 2 : 2;
        b->ready = kiln_realloc(b->ready, cap * sizeof b->ready[0]);
        for (size_t i = b->cap_ready; i < cap; i++) {
            buf_init(&b->ready[i].bits);
            buf_init(&b->ready[i].key);
        }
        b->cap_ready = cap;
    }
    ready_chunk *r = &b->ready[b->nready++];
    buf_reset(&r->bits);
    buf_append(&r->bits, ch->bits.data, ch->bits.len);
    buf_reset(&r->key);
    if (b->type == BLOOM_ROWCOL)
        buf_append(&r->key, b->first_key.data, b->first_key.len);
    else
        buf_append(&r->key, ch->first_key.data, ch->first_key.len);
    b->chunk_open = 0;
}

static void
wbloom_add(writer_bloom *b, const uint8_t *key, size_t n)
{
    const bloom_chunk *ch;
    b->chunk_open = 1;
    if (bloom_chunker_add(b->chunker, key, n, &ch))
        wbloom_queue(b, ch);
    b->keys++;
}

/* Write the queued chunks of b (closing: close the open chunk first). */
static kiln_status
wbloom_write_ready(hfile_writer *w, writer_bloom *b, int closing)
{
    if (b->chunker == NULL)
        return KILN_OK;
    if (closing && b->chunk_open) {
        const bloom_chunk *ch;
        if (bloom_chunker_finish(b->chunker, &ch))
            wbloom_queue(b, ch);
        b->chunk_open = 0;
    }
    for (size_t i = 0; i < b->nready; i++) {
        /* Offset and size arrive when the chunk is written. */
        chunk_add(&b->index, b->ready[i].key.data, b->ready[i].key.len, 0, 0, 0);
        queue_block(w, HFILE_BLOCK_BLOOM_CHUNK, b->ready[i].bits.data, b->ready[i].bits.len,
                    &b->index, b->index.n - 1);
        w->total_uncompressed += HDR + b->ready[i].bits.len;
    }
    b->nready = 0;
    return w->status;
}

/* BLMFMET2 / DFBLMET2 payload into w->scratch.
 *   SIZE | FIELD
 *   4    | version 3
 *   8    | total bytes of all chunks
 *   4    | hash count
 *   4    | hash type (1 = murmur)
 *   8    | total keys
 *   8    | total max keys
 *   4    | chunk count
 *   vint | comparator class name (empty unless ROWCOL)
 *   ...  | root-format index of the chunks
 */
static void
wbloom_meta_payload(hfile_writer *w, const writer_bloom *b)
{
    block_start(&w->scratch);
    kbuf *s = &w->scratch;
    buf_append_be32(s, BLOOM_META_VERSION);
    buf_append_be64(s, bloom_chunker_total_bytes(b->chunker));
    buf_append_be32(s, (uint32_t)bloom_chunker_hash_count(b->chunker));
    buf_append_be32(s, BLOOM_HASH_MURMUR);
    buf_append_be64(s, bloom_chunker_total_keys(b->chunker));
    buf_append_be64(s, bloom_chunker_total_max_keys(b->chunker));
    buf_append_be32(s, (uint32_t)bloom_chunker_num_chunks(b->chunker));
    const char *cmp = b->type == BLOOM_ROWCOL ? BLOOM_ROWCOL_COMPARATOR : "";
    buf_append_vlong(s, (int64_t)strlen(cmp));
    buf_append(s, cmp, strlen(cmp));
    chunk_write_root(&b->index, s);
}

/* ------------------------------------------------------------------ data blocks */

/* Flush the pending leaf chunk as an IDXLEAF2 block and index it in the root.
 * Its entries need the offsets of its data blocks: wait until they are all
 * written (once per leaf, every few thousand blocks). */
static kiln_status
write_leaf(hfile_writer *w)
{
    if (batch_drain(w) != KILN_OK)
        return w->status;
    block_start(&w->scratch);
    scratch_put_nonroot(w, &w->leaf);
    size_t raw = w->scratch.len - HDR;
    kslice first = chunk_key(&w->leaf, 0);
    chunk_add(&w->root, first.p, first.n, 0, 0, w->index_entries);
    queue_block(w, HFILE_BLOCK_LEAF_INDEX, w->scratch.data + HDR, raw, &w->root, w->root.n - 1);
    w->total_uncompressed += HDR + raw;
    w->index_uncompressed += raw;
    w->levels = 2;
    chunk_clear(&w->leaf);
    return KILN_OK;
}

/* After a data block: the leaf chunk if full, then the ready bloom chunks
 * (HBase's inline block writers, in registration order). */
static kiln_status
write_inline_blocks(hfile_writer *w, int closing)
{
    if (w->leaf.n > 0) {
        if (closing) {
            /* No leaf written yet: the pending chunk becomes the root. */
            if (w->root.n > 0 && write_leaf(w) != KILN_OK)
                return w->status;
        } else if (chunk_nonroot_size(&w->leaf) >= w->o.index_block_max) {
            if (write_leaf(w) != KILN_OK)
                return w->status;
        }
    }
    if (wbloom_write_ready(w, &w->gbloom, closing) != KILN_OK)
        return w->status;
    return wbloom_write_ready(w, &w->dfbloom, closing);
}

/* Close the open data block: index it (its offset and size follow when it is
 * written) and remember its last key. */
static kiln_status
finish_block(hfile_writer *w)
{
    if (!w->block_has_cells) {
        buf_resize(&w->cur.data, w->block_base);   /* drop the reservation */
        return w->status;
    }
    const uint8_t *first = w->cur.data.data + w->first_key_off;
    if (w->data_blocks == 0) {
        buf_reset(&w->keybuf);
        buf_append(&w->keybuf, first, w->first_key_len);
    } else {
        index_key_between(w->prev_last_key.data, w->prev_last_key.len, first, w->first_key_len,
                          &w->keybuf);
    }
    /* The last key outlives the block: next index key and order check. */
    buf_reset(&w->prev_last_key);
    buf_append(&w->prev_last_key, w->cur.data.data + w->last_key_off, w->last_key_len);

    size_t raw = w->cur.data.len - w->block_base - HDR;
    w->total_uncompressed += HDR + raw;
    chunk_add(&w->leaf, w->keybuf.data, w->keybuf.len, 0, 0, 0);
    batch_close_block(&w->cur, HFILE_BLOCK_DATA, w->block_base, &w->leaf, w->leaf.n - 1);
    w->in_flight += HDR + raw;
    w->index_entries++;
    w->data_blocks++;
    w->block_has_cells = 0;
    return w->status;
}

/* ------------------------------------------------------------------ open / add */

kiln_status
hfile_writer_open(const char *path, const hfile_writer_options *opts, hfile_writer **out,
                  kiln_err *err)
{
    *out = NULL;
    hfile_writer_options o;
    if (opts != NULL)
        o = *opts;
    else
        hfile_writer_options_init(&o);
    if (o.block_size == 0 || o.block_size > CELL_SERIALIZED_MAX)
        return status_set(err, KILN_INVALID, "%s: block size %zu out of range", path,
                          o.block_size);
    if (!compress_codec_writable(o.codec))
        return status_set(err, KILN_INVALID, "%s: compression %s cannot be written", path,
                          compress_codec_name(o.codec));
    if (o.bloom != BLOOM_NONE && o.bloom != BLOOM_ROW && o.bloom != BLOOM_ROWCOL)
        return status_set(err, KILN_INVALID, "%s: unknown bloom type %d", path, (int)o.bloom);
    if (o.index_block_max == 0 || o.index_block_max > INT32_MAX)
        return status_set(err, KILN_INVALID, "%s: index block size %zu out of range", path,
                          o.index_block_max);
    if (o.bloom_chunk_bytes == 0 || o.bloom_chunk_bytes > (1u << 28))
        return status_set(err, KILN_INVALID, "%s: bloom chunk size %zu out of range", path,
                          o.bloom_chunk_bytes);
    if (!(o.bloom_error_rate > 0 && o.bloom_error_rate < 1))
        return status_set(err, KILN_INVALID, "%s: bloom error rate %g not in (0, 1)", path,
                          o.bloom_error_rate);
    if (o.threads < 0 || o.threads > 1)
        return status_set(err, KILN_INVALID, "%s: threads %d is not 0 or 1", path, o.threads);

    env_file *f;
    kiln_status s = env_create(path, 0, &f, err);
    if (s != KILN_OK)
        return s;

    hfile_writer *w = kiln_calloc(1, sizeof *w);
    w->path = (char *)kiln_memdup(path, strlen(path) + 1);
    w->o = o;
    w->threaded = o.threads > 0;
    if (o.source_task != NULL) {
        w->source_task = (char *)kiln_memdup(o.source_task, strlen(o.source_task) + 1);
        w->o.source_task = w->source_task;
    }
    status_clear(&w->err);
    w->out.f = f;
    w->out.path = w->path;
    w->out.codec = o.codec;
    for (int i = 0; i < HFILE_BLOCK_TYPE_COUNT; i++)
        w->out.prev_offset[i] = -1;
    buf_init(&w->out.comp);
    buf_init(&w->out.sums);
    status_clear(&w->out.err);
    batch_init(&w->cur);
    buf_reserve(&w->cur.data, HDR + o.block_size + 1024);
    block_open(w);
    buf_init(&w->prev_last_key);
    buf_init(&w->scratch);
    buf_init(&w->keybuf);
    buf_init(&w->biggest_key);
    chunk_init(&w->leaf);
    chunk_init(&w->root);
    chunk_init(&w->level_next);
    chunk_init(&w->level_chunk);
    w->levels = 1;

    /* HBase keeps the error rate as a Java float; ROWCOL splits it over two
     * lookups: p = 1 - sqrt(1 - err). Same arithmetic for the same chunks. */
    float rate = (float)o.bloom_error_rate;
    float grate = rate;
    if (o.bloom == BLOOM_ROWCOL)
        grate = (float)(1.0 - sqrt((double)(1.0f - rate)));
    wbloom_init(&w->gbloom, o.bloom, o.bloom_chunk_bytes, (double)grate);
    /* StoreFileWriter keeps a delete-family bloom unless the general one is ROWCOL. */
    wbloom_init(&w->dfbloom, o.bloom == BLOOM_ROWCOL ? BLOOM_NONE : BLOOM_ROW,
               o.bloom_chunk_bytes, (double)rate);

    w->first_data_block_offset = -1;
    w->last_data_block_offset = -1;
    w->tr_min = INT64_MAX;      /* TimeRangeTracker's initial values */
    w->tr_max = -1;
    w->earliest_put = INT64_MAX;
    w->create_time = o.create_time_ms != 0 ? o.create_time_ms : now_ms();
    hfile_fileinfo_init(&w->fi);
    *out = w;
    return KILN_OK;
}

static void
timerange_include(hfile_writer *w, int64_t ts)
{
    if (ts < w->tr_min)
        w->tr_min = ts;
    if (ts > w->tr_max)
        w->tr_max = ts;
}

kiln_status
hfile_writer_add(hfile_writer *w, const kiln_cell *c, kiln_err *err)
{
    if (w->status != KILN_OK || pipe_check(w) != KILN_OK)
        return writer_report(w, err);
    unsigned long long n = (unsigned long long)w->entries;
    if (c->row_len > CELL_ROW_MAX || c->family_len > CELL_FAMILY_MAX || c->tags_len > 0xFFFF) {
        kiln_err e;
        status_clear(&e);
        cell_validate(c, &e);
        writer_fail(w, KILN_INVALID, "%s: cell %llu: %s", w->path, n, e.msg);
        return writer_report(w, err);
    }
    if (c->tags_len > 0 && !w->o.include_tags) {
        writer_fail(w, KILN_INVALID, "%s: cell %llu has tags but the file is written without tags",
                    w->path, n);
        return writer_report(w, err);
    }
    size_t klen = cell_key_len(c);
    size_t tail = (w->o.include_tags ? 2 + (size_t)c->tags_len : 0) +
                  (w->o.include_mvcc ? coding_vlong_size((int64_t)c->mvcc) : 0);
    uint64_t need = 8 + (uint64_t)klen + c->value_len + tail;
    if (need > CELL_SERIALIZED_MAX) {
        writer_fail(w, KILN_INVALID, "%s: cell %llu of %llu bytes is too large", w->path, n,
                    (unsigned long long)need);
        return writer_report(w, err);
    }

    /* Order against the previous cell; what changed drives the blooms. */
    int dup = 0, new_row = 1, new_col = 1;
    if (w->entries > 0) {
        const uint8_t *lk = w->block_has_cells ? w->cur.data.data + w->last_key_off
                                               : w->prev_last_key.data;
        size_t lkl = w->block_has_cells ? w->last_key_len : w->prev_last_key.len;
        /* The rows decide most cells: the previous key is decoded and the
         * whole cell compared only within a row. (The key was written here,
         * so its row length field is sound.) */
        int cmp = bytes_cmp(c->row, c->row_len, lk + 2, coding_get_be16(lk));
        if (cmp == 0) {
            kiln_cell prev;
            cell_key_decode(lk, lkl, &prev, NULL);
            cmp = cell_compare(c, &prev);
            new_row = 0;
            new_col = c->family_len != prev.family_len || c->qualifier_len != prev.qualifier_len ||
                      (c->family_len && memcmp(c->family, prev.family, c->family_len) != 0) ||
                      (c->qualifier_len &&
                       memcmp(c->qualifier, prev.qualifier, c->qualifier_len) != 0);
        }
        if (cmp < 0) {
            writer_fail(w, KILN_INVALID, "%s: key not lexically larger than previous at cell %llu",
                        w->path, n);
            return writer_report(w, err);
        }
        dup = cmp == 0;
    }

    /* Blooms see the cell before the block boundary check, as in HBase, so a
     * chunk filled by this cell is written after the block this cell closes. */
    writer_bloom *g = &w->gbloom;
    if (g->chunker != NULL) {
        if (g->type == BLOOM_ROW && new_row) {
            wbloom_add(g, c->row, c->row_len);
        } else if (g->type == BLOOM_ROWCOL && new_col) {
            if (!g->chunk_open) {
                buf_reset(&g->first_key);
                key_first_on(&g->first_key, c->row, c->row_len, c->family, c->family_len,
                             c->qualifier, c->qualifier_len);
            }
            buf_reset(&w->keybuf);
            bloom_rowcol_key(&w->keybuf, c->row, c->row_len, c->qualifier, c->qualifier_len);
            wbloom_add(g, w->keybuf.data, w->keybuf.len);
        }
    }
    if (c->type == CELL_TYPE_DELETE_FAMILY || c->type == CELL_TYPE_DELETE_FAMILY_VERSION) {
        w->delete_family_count++;
        writer_bloom *d = &w->dfbloom;
        if (d->chunker != NULL &&
            (d->keys == 0 || bytes_cmp(c->row, c->row_len, d->last_row.data, d->last_row.len) != 0)) {
            wbloom_add(d, c->row, c->row_len);
            buf_reset(&d->last_row);
            buf_append(&d->last_row, c->row, c->row_len);
        }
    }

    if (!dup && w->block_has_cells && w->cur.data.len - w->block_base - HDR >= w->o.block_size) {
        if (finish_block(w) != KILN_OK || write_inline_blocks(w, 0) != KILN_OK)
            return writer_report(w, err);
        /* Without the thread every block goes out at once, as it closes. */
        if ((!w->threaded || w->cur.data.len >= w->o.batch_bytes) && batch_submit(w) != KILN_OK)
            return writer_report(w, err);
        block_open(w);
    }

    /*   SIZE | FIELD
     *   4    | key length
     *   4    | value length
     *   K    | key
     *   V    | value
     *   2+T  | tags length and tags (include_tags)
     *   1..9 | mvcc vlong (include_mvcc)
     */
    buf_reserve(&w->cur.data, (size_t)need);
    uint8_t *p = w->cur.data.data + w->cur.data.len;
    coding_put_be32(p, (uint32_t)klen);
    coding_put_be32(p + 4, c->value_len);
    cell_key_write(c, p + 8);
    uint8_t *q = p + 8 + klen;
    if (c->value_len) {
        memcpy(q, c->value, c->value_len);
        q += c->value_len;
    }
    if (w->o.include_tags) {
        coding_put_be16(q, (uint16_t)c->tags_len);
        q += 2;
        if (c->tags_len) {
            memcpy(q, c->tags, c->tags_len);
            q += c->tags_len;
        }
    }
    if (w->o.include_mvcc)
        coding_put_vlong(q, (int64_t)c->mvcc);
    size_t key_off = w->cur.data.len + 8;
    if (!w->block_has_cells) {
        w->first_key_off = key_off;
        w->first_key_len = (uint32_t)klen;
        w->block_has_cells = 1;
    }
    w->last_key_off = key_off;
    w->last_key_len = (uint32_t)klen;
    w->cur.data.len += (size_t)need;

    /* Statistics for FileInfo. */
    w->entries++;
    w->total_key_len += klen;
    w->total_value_len += c->value_len;
    w->raw_bytes += klen + c->value_len;
    if ((int64_t)c->mvcc > w->max_mvcc)
        w->max_mvcc = (int64_t)c->mvcc;
    if (c->tags_len > w->max_tags_len)
        w->max_tags_len = c->tags_len;
    /* PrivateCellUtil.estimatedSerializedSizeOf: the KeyValue (tags only when
     * present) plus a 4-byte length; the first biggest cell wins. */
    uint64_t kv_len = 8 + (uint64_t)klen + c->value_len + (c->tags_len ? 2 + c->tags_len : 0) + 4;
    if (kv_len > w->biggest_len) {
        w->biggest_len = kv_len;
        buf_reset(&w->biggest_key);
        buf_append(&w->biggest_key, p + 8, klen);
    }
    if (c->type == CELL_TYPE_PUT && c->ts < w->earliest_put)
        w->earliest_put = c->ts;
    timerange_include(w, c->ts);
    if (c->type == CELL_TYPE_DELETE_COLUMN || c->type == CELL_TYPE_DELETE_FAMILY)
        timerange_include(w, 0);
    return KILN_OK;
}

kiln_status
hfile_writer_append_fileinfo(hfile_writer *w, const char *key, const void *value, size_t vlen,
                             kiln_err *err)
{
    if (w->status != KILN_OK)
        return writer_report(w, err);
    if (strncmp(key, "hfile.", 6) == 0)
        return status_set(err, KILN_INVALID, "%s: file info key %s is reserved", w->path, key);
    hfile_fileinfo_set(&w->fi, key, value, vlen);
    return KILN_OK;
}

uint64_t
hfile_writer_entries(const hfile_writer *w)
{
    return w->entries;
}

uint64_t
hfile_writer_bytes(const hfile_writer *w)
{
    /* Grows with every closed block, with the thread too (compaction paces
     * and polls by it); exact once the blocks are written. */
    return w->offset + w->in_flight;
}

/* ------------------------------------------------------------------ finish */

/* Write intermediate levels if the root is too big, then the data root. */
static kiln_status
write_intermediate_block(hfile_writer *w, index_chunk *chunk, index_chunk *parent)
{
    block_start(&w->scratch);
    scratch_put_nonroot(w, chunk);
    size_t raw = w->scratch.len - HDR;
    uint64_t off;
    uint32_t size;
    /* Not counted in total_uncompressed_bytes: HBase does not count them either. */
    if (write_block(w, HFILE_BLOCK_INTERMEDIATE_INDEX, &w->scratch, &off, &size) != KILN_OK)
        return w->status;
    w->index_uncompressed += raw;
    kslice first = chunk_key(chunk, 0);
    chunk_add(parent, first.p, first.n, off, size, 0);
    chunk_clear(chunk);
    return KILN_OK;
}

static kiln_status
write_intermediate_level(hfile_writer *w, const index_chunk *cur, index_chunk *parent)
{
    index_chunk *chunk = &w->level_chunk;
    chunk_clear(parent);
    chunk_clear(chunk);
    for (size_t i = 0; i < cur->n; i++) {
        kslice k = chunk_key(cur, i);
        chunk_add(chunk, k.p, k.n, cur->recs[i].offset, cur->recs[i].size, 0);
        if (i >= HFILE_INDEX_MIN_ENTRIES && chunk->root_size >= w->o.index_block_max &&
            write_intermediate_block(w, chunk, parent) != KILN_OK)
            return w->status;
    }
    if (chunk->n > 0)
        return write_intermediate_block(w, chunk, parent);
    return KILN_OK;
}

/* Mid-key metadata of a multi-level root: the leaf holding entry
 * (total - 1) / 2 and the entry's index within it.
 *   8 | leaf offset,  4 | leaf on-disk size,  4 | index within the leaf */
static void
midkey_metadata(const index_chunk *root, uint8_t out[HFILE_MID_KEY_METADATA_SIZE])
{
    uint64_t total = root->recs[root->n - 1].sub_entries;
    uint64_t k = total ? (total - 1) / 2 : 0;
    size_t j = 0;
    while (j + 1 < root->n && root->recs[j].sub_entries <= k)
        j++;
    uint64_t before = j > 0 ? root->recs[j - 1].sub_entries : 0;
    coding_put_be64(out, root->recs[j].offset);
    coding_put_be32(out + 8, root->recs[j].size);
    coding_put_be32(out + 12, (uint32_t)(k - before));
}

static kiln_status
write_data_index(hfile_writer *w, uint64_t *root_offset, uint32_t *root_entries)
{
    index_chunk *root = &w->leaf;
    uint8_t mid[HFILE_MID_KEY_METADATA_SIZE];
    int have_mid = 0;
    if (w->levels > 1) {
        midkey_metadata(&w->root, mid);
        have_mid = 1;
        root = &w->root;
        while (root->root_size > w->o.index_block_max && root->n > HFILE_INDEX_MIN_ENTRIES &&
               w->levels < INDEX_MAX_LEVELS) {
            index_chunk *next = root == &w->root ? &w->level_next : &w->root;
            if (write_intermediate_level(w, root, next) != KILN_OK)
                return w->status;
            root = next;
            w->levels++;
        }
    }
    block_start(&w->scratch);
    chunk_write_root(root, &w->scratch);
    if (have_mid)
        buf_append(&w->scratch, mid, sizeof mid);
    size_t raw = w->scratch.len - HDR;
    uint32_t size;
    /* The data root is not counted in total_uncompressed_bytes (HBase). */
    if (write_block(w, HFILE_BLOCK_ROOT_INDEX, &w->scratch, root_offset, &size) != KILN_OK)
        return w->status;
    w->index_uncompressed += raw;
    *root_entries = (uint32_t)root->n;
    return KILN_OK;
}

/* FileInfo as HFileWriterImpl.finishFileInfo + StoreFileWriter + HFileOutputFormat2. */
static void
fill_fileinfo(hfile_writer *w)
{
    hfile_fileinfo *fi = &w->fi;
    const kbuf *last = &w->prev_last_key;
    if (w->entries > 0) {
        hfile_fileinfo_set(fi, HFILE_FI_LASTKEY, last->data, last->len);
        hfile_fileinfo_set(fi, HFILE_FI_KEY_OF_BIGGEST_CELL, w->biggest_key.data,
                           w->biggest_key.len);
        hfile_fileinfo_set_i64(fi, HFILE_FI_LEN_OF_BIGGEST_CELL, (int64_t)w->biggest_len);
    }
    int32_t avg_key = w->entries ? (int32_t)(w->total_key_len / w->entries) : 0;
    int32_t avg_val = w->entries ? (int32_t)(w->total_value_len / w->entries) : 0;
    hfile_fileinfo_set_i32(fi, HFILE_FI_AVG_KEY_LEN, avg_key);
    hfile_fileinfo_set_i32(fi, HFILE_FI_AVG_VALUE_LEN, avg_val);
    hfile_fileinfo_set_i64(fi, HFILE_FI_CREATE_TIME, w->create_time);
    if (w->o.include_tags) {
        hfile_fileinfo_set_i32(fi, HFILE_FI_MAX_TAGS_LEN, (int32_t)w->max_tags_len);
        hfile_fileinfo_set_bool(fi, HFILE_FI_TAGS_COMPRESSED, 0);
    }
    if (w->o.include_mvcc) {
        hfile_fileinfo_set_i64(fi, HFILE_FI_MAX_MEMSTORE_TS, w->max_mvcc);
        hfile_fileinfo_set_i32(fi, HFILE_FI_KEY_VALUE_VERSION, 1);
    }
    if (w->gbloom.chunker != NULL && w->gbloom.keys > 0) {
        const char *name = bloom_type_name(w->gbloom.type);
        hfile_fileinfo_set(fi, HFILE_FI_BLOOM_FILTER_TYPE, name, strlen(name));
        kiln_cell lc;
        cell_key_decode(last->data, last->len, &lc, NULL);
        if (w->gbloom.type == BLOOM_ROW) {
            hfile_fileinfo_set(fi, HFILE_FI_LAST_BLOOM_KEY, lc.row, lc.row_len);
        } else {
            buf_reset(&w->keybuf);
            key_first_on(&w->keybuf, lc.row, lc.row_len, lc.family, lc.family_len, lc.qualifier,
                         lc.qualifier_len);
            hfile_fileinfo_set(fi, HFILE_FI_LAST_BLOOM_KEY, w->keybuf.data, w->keybuf.len);
        }
    }
    hfile_fileinfo_set_i64(fi, HFILE_FI_DELETE_FAMILY_COUNT, (int64_t)w->delete_family_count);
    uint8_t tr[16];
    coding_put_be64(tr, (uint64_t)w->tr_min);
    coding_put_be64(tr + 8, (uint64_t)w->tr_max);
    hfile_fileinfo_set(fi, HFILE_FI_TIMERANGE, tr, sizeof tr);
    hfile_fileinfo_set_i64(fi, HFILE_FI_EARLIEST_PUT_TS, w->earliest_put);
    if (w->o.bulkload_info) {
        hfile_fileinfo_set_i64(fi, HFILE_FI_BULKLOAD_TIMESTAMP, w->create_time);
        if (w->o.source_task != NULL)
            hfile_fileinfo_set(fi, HFILE_FI_BULKLOAD_SOURCE_TASK, w->o.source_task,
                               strlen(w->o.source_task));
        hfile_fileinfo_set_bool(fi, HFILE_FI_MAJOR_COMPACTION, 1);
        hfile_fileinfo_set_bool(fi, HFILE_FI_EXCLUDE_FROM_MINOR, 0);
    }
}

static kiln_status
writer_close_out(hfile_writer *w)
{
    if (finish_block(w) != KILN_OK || write_inline_blocks(w, 1) != KILN_OK ||
        batch_drain(w) != KILN_OK)
        return w->status;
    /* The rest is written here: the index roots need every offset. */
    pipe_stop(w, 0);
    if (writer_take_out(w) != KILN_OK)
        return w->status;

    hfile_trailer t;
    memset(&t, 0, sizeof t);
    if (write_data_index(w, &t.load_on_open_data_offset, &t.data_index_count) != KILN_OK)
        return w->status;

    /* Meta index root: always written, empty (Kiln writes no meta blocks). */
    uint64_t off;
    uint32_t size;
    block_start(&w->scratch);
    if (write_counted(w, HFILE_BLOCK_ROOT_INDEX, &off, &size) != KILN_OK)
        return w->status;

    fill_fileinfo(w);
    block_start(&w->scratch);
    hfile_fileinfo_encode(&w->fi, &w->scratch);
    if (write_counted(w, HFILE_BLOCK_FILE_INFO, &t.file_info_offset, &size) != KILN_OK)
        return w->status;

    if (w->gbloom.chunker != NULL && w->gbloom.keys > 0) {
        wbloom_meta_payload(w, &w->gbloom);
        if (write_counted(w, HFILE_BLOCK_GENERAL_BLOOM_META, &off, &size) != KILN_OK)
            return w->status;
    }
    if (w->dfbloom.chunker != NULL && w->dfbloom.keys > 0) {
        wbloom_meta_payload(w, &w->dfbloom);
        if (write_counted(w, HFILE_BLOCK_DELETE_FAMILY_BLOOM_META, &off, &size) != KILN_OK)
            return w->status;
    }

    t.uncompressed_data_index_size = w->index_uncompressed;
    t.total_uncompressed_bytes = w->total_uncompressed + HFILE_TRAILER_SIZE;
    t.meta_index_count = 0;
    t.entry_count = w->entries;
    t.num_data_index_levels = w->levels;
    t.first_data_block_offset = (uint64_t)w->first_data_block_offset;
    t.last_data_block_offset = (uint64_t)w->last_data_block_offset;
    snprintf(t.comparator_class_name, sizeof t.comparator_class_name, "%s", HFILE_COMPARATOR_KV);
    t.compression_codec = (uint32_t)w->o.codec;
    uint8_t trailer[HFILE_TRAILER_SIZE];
    hfile_trailer_encode(&t, trailer);
    kiln_status s = env_append(w->out.f, trailer, sizeof trailer, &w->err);
    if (s != KILN_OK)
        return writer_adopt(w, s);
    w->offset += sizeof trailer;

    if (w->o.sync && (s = env_sync(w->out.f, &w->err)) != KILN_OK)
        return writer_adopt(w, s);
    env_file *f = w->out.f;
    w->out.f = NULL;
    s = env_close(f, &w->err);
    return writer_adopt(w, s);
}

static void
writer_free(hfile_writer *w)
{
    free(w->path);
    free(w->source_task);
    batch_free(&w->cur);
    buf_free(&w->prev_last_key);
    buf_free(&w->out.comp);
    buf_free(&w->out.sums);
    buf_free(&w->scratch);
    buf_free(&w->keybuf);
    buf_free(&w->biggest_key);
    free(w->ents);
    chunk_free(&w->leaf);
    chunk_free(&w->root);
    chunk_free(&w->level_next);
    chunk_free(&w->level_chunk);
    wbloom_free(&w->gbloom);
    wbloom_free(&w->dfbloom);
    hfile_fileinfo_free(&w->fi);
    free(w);
}

void
hfile_writer_abandon(hfile_writer *w)
{
    if (w == NULL)
        return;
    pipe_stop(w, 1);
    if (w->out.f != NULL)
        env_close(w->out.f, NULL);
    env_unlink(w->path, NULL);
    writer_free(w);
}

kiln_status
hfile_writer_finish(hfile_writer *w, hfile_writer_stats *stats, kiln_err *err)
{
    if (w->status == KILN_OK)
        writer_close_out(w);
    kiln_status s = w->status;
    if (s != KILN_OK) {
        writer_report(w, err);
        hfile_writer_abandon(w);
        return s;
    }
    if (stats != NULL) {
        stats->entries = w->entries;
        stats->data_blocks = w->data_blocks;
        stats->file_size = w->offset;
        stats->raw_bytes = w->raw_bytes;
        stats->index_levels = w->levels;
    }
    writer_free(w);
    return KILN_OK;
}
