/* mr_collector.c -- the map-side collector: sort buffer -> sorted spills ->
 * multi-pass merge into the rank's single map output run.
 *
 * Combining happens at three places, as in Hadoop: in the sort buffer itself
 * when the job has a fold (equal keys meet in the hash index), at each spill
 * (the combiner over each key group of the sorted buffer), and whenever runs
 * are merged (the combiner over each merged group). Under a sort comparator
 * a combiner's group is a run of keys it calls equal, a fold's a run of
 * equal bytes (as in the hash index).
 */
#include "mapreduce/mr_collector.h"

#include <stdlib.h>
#include <string.h>

#include "mapreduce/mr_sumkey.h"
#include "storage/base/coding.h"
#include "storage/base/slab.h"

/* Combine tasks' emits go to the run writer under the task's partition, and
 * must carry the key of the group. */
static kiln_status
mr_collector_combine_emit(mr_task *t, kslice key, kslice value, kiln_err *err)
{
    if (!kslice_eq(key, t->group_key))
        return status_set(err, KILN_INVALID, "%s: the combiner emitted a key it was not given",
                          t->env->name);
    mr_counters_add(t->env->counters, MR_C_COMBINE_OUTPUT_RECORDS, 1);
    return mr_run_writer_add(t->sink, t->part, key, value, err);
}

kiln_status
mr_collector_combine(const mr_combiner *cb, mr_merger *m, mr_run_writer *w, uint32_t part,
                     int combine, kiln_err *err)
{
    mr_counters *c = cb->env->counters;
    if (combine && cb->combine == NULL && cb->fold == NULL)
        combine = 0;
    mr_merger_set_order(m, &cb->sort, combine && cb->combine != NULL ? &cb->sort : NULL);
    kbuf acc = KBUF_INIT, out = KBUF_INIT;
    kiln_status s = KILN_OK;
    kslice key;
    int r = 0;
    while (s == KILN_OK && (r = mr_merger_next_key(m, &key, err)) > 0) {
        if (combine && cb->combine != NULL) {
            mr_values v;
            mr_values_of_merger(&v, m);
            mr_task t;
            mr_task_begin(&t, cb->env, MR_TASK_COMBINE, mr_collector_combine_emit, w);
            t.part = part;
            t.group_key = key;
            t.values = &v;
            s = cb->combine(&t, key, &v, err);
            kiln_status f = mr_task_values_finish(&v, err);
            if (s == KILN_OK)
                s = f;
            mr_counters_add(c, MR_C_COMBINE_INPUT_RECORDS, v.count);
        } else if (combine) {
            kslice val;
            uint64_t n = 0;
            buf_reset(&acc);
            while ((r = mr_merger_next_value(m, &val, err)) > 0) {
                if (n++ == 0) {
                    buf_append(&acc, val.p, val.n);
                    continue;
                }
                buf_reset(&out);
                cb->fold(cb->fold_arg, key, buf_slice(&acc), val, &out);
                kbuf t = acc;
                acc = out;
                out = t;
            }
            if (r < 0) {
                s = err->code != KILN_OK ? err->code : KILN_INTERNAL;
                break;
            }
            mr_counters_add(c, MR_C_COMBINE_INPUT_RECORDS, n);
            mr_counters_add(c, MR_C_COMBINE_OUTPUT_RECORDS, 1);
            s = mr_run_writer_add(w, part, key, buf_slice(&acc), err);
        } else {
            kslice val;
            while (s == KILN_OK && (r = mr_merger_next_value(m, &val, err)) > 0)
                s = mr_run_writer_add(w, part, key, val, err);
            if (s == KILN_OK && r < 0)
                s = err->code != KILN_OK ? err->code : KILN_INTERNAL;
        }
    }
    if (s == KILN_OK && r < 0)
        s = err->code != KILN_OK ? err->code : KILN_INTERNAL;
    buf_free(&acc);
    buf_free(&out);
    return s;
}

/* Hashed mode inserts emits through a pipeline over a ring of staged
 * emits: an emit's index slot is prefetched when it arrives, the record its
 * slot points to MR_COLLECT_SLOT_AHEAD emits later (the slot is in cache by
 * then), and it is inserted MR_COLLECT_AHEAD emits after it arrived (its
 * record too). The cache misses of the emits in flight overlap instead of
 * queueing one after another, and every emit gets the same head start. */
#define MR_COLLECT_RING 32                 /* a power of two, > MR_COLLECT_AHEAD */
#define MR_COLLECT_SLOT_AHEAD 8
#define MR_COLLECT_AHEAD 20
#define MR_COLLECT_INLINE 112     /* key + value bytes staged in place */

/* Word count's emits are mostly a few hot keys. With the built-in sum fold,
 * hash partitioning, a key of at most MR_SUMS_KEY bytes and an 8-byte
 * value, an emit first meets a two-way cache of running sums, a quarter of
 * the sort budget (16 MiB at most, on huge pages: a lookup's miss is not
 * also a page walk): a hit adds to the sum there, in one
 * cache line, and goes no further. A miss takes the set's first way, the
 * first moves to the second, and the sum the second held goes on to the
 * sort buffer as one emit (the fold adds it like any other). Emits wait
 * MR_SUMS_AHEAD emits in a ring of their own while their set is prefetched.
 * The cache is emptied into the buffer before the last spill; a key's emits
 * may take either path, which a sum does not mind. */
#define MR_SUMS_KEY MR_SUMKEY_MAX
#define MR_SUMS_MIN_SETS 64
#define MR_SUMS_MAX_SETS 262144   /* sets of two 32-byte ways: 16 MiB */
#define MR_SUMS_AHEAD 16          /* a power of two */

/* A way, or an emit waiting for its set. The key is two words: its bytes
 * zero-padded, little-endian, the length in the top byte of k1 (mr_sumkey.h). */
typedef struct mr_sum_way {
    uint64_t hash;
    uint64_t sum;                 /* host order */
    uint64_t k0, k1;              /* k1 = MR_SUM_EMPTY: an empty way */
} mr_sum_way;

#define MR_SUM_EMPTY UINT64_MAX   /* no key has this k1: its length byte would be 255 */

typedef struct mr_sum_set {
    mr_sum_way way[2];
} mr_sum_set;

typedef struct mr_pending {
    uint64_t hash;
    uint32_t part;
    uint32_t klen;
    uint32_t vlen;
    uint8_t bytes[MR_COLLECT_INLINE];   /* key, then value */
} mr_pending;

struct mr_collector {
    mr_collector_params p;
    mr_counters *counters;       /* p.comb->env->counters */
    mr_reduce_fn combine;        /* p.comb->combine */
    mr_fold_fn fold;             /* p.comb->fold, with its argument */
    void *fold_arg;
    mr_sortbuf *sb;
    int hashed;
    int hash_parts;              /* hash partitioning: done here, inline */
    const mr_key_order *group;   /* spill-time combiner groups: NULL, or the job's comparator */
    mr_run **runs;
    size_t n_runs;
    size_t cap_runs;
    mr_pending ring[MR_COLLECT_RING];
    size_t staged;               /* emits staged so far; ring index = count % RING */
    size_t inserted;             /* of them, inserted into the buffer */
    mr_sum_set *sums;            /* NULL unless the fold is the built-in sum */
    size_t sum_mask;             /* sets - 1 */
    mr_sum_way sum_wait[MR_SUMS_AHEAD];
    size_t sum_waiting;          /* emits that went to sum_wait */
};

kiln_status
mr_collector_open(const mr_collector_params *p, mr_collector **out, kiln_err *err)
{
    mr_collector *c = kiln_calloc(1, sizeof *c);
    c->p = *p;
    c->counters = p->comb->env->counters;
    c->combine = p->comb->combine;
    c->fold = p->comb->fold;
    c->fold_arg = p->comb->fold_arg;
    c->hashed = c->fold != NULL;
    c->hash_parts = mr_partitioner_needs_hash(p->part);
    c->group = p->comb->sort.cmp != NULL ? &p->comb->sort : NULL;
    size_t sort_bytes = p->sort_bytes;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (c->fold == mr_sortbuf_fold_sum_be64 && c->hash_parts) {
        size_t sets = MR_SUMS_MIN_SETS;
        while (sets < MR_SUMS_MAX_SETS && 2 * sets * sizeof(mr_sum_set) <= sort_bytes / 4)
            sets *= 2;
        c->sums = slab_table_alloc(sets * sizeof *c->sums);
        for (size_t i = 0; i < sets; i++)
            for (int w = 0; w < 2; w++)
                c->sums[i].way[w].k1 = MR_SUM_EMPTY;
        c->sum_mask = sets - 1;
        sort_bytes -= sort_bytes / 4 < sets * sizeof(mr_sum_set) ? sort_bytes / 4
                                                                 : sets * sizeof(mr_sum_set);
    }
#endif
    c->sb = mr_sortbuf_new(sort_bytes, c->hashed);
    mr_sortbuf_set_order(c->sb, p->comb->sort.cmp, p->comb->sort.arg);
    *out = c;
    return KILN_OK;
}

static void
mr_collector_free_sums(mr_collector *c)
{
    if (c->sums != NULL)
        slab_table_free(c->sums, (c->sum_mask + 1) * sizeof *c->sums);
    c->sums = NULL;
}

static void
mr_collector_push(mr_collector *c, mr_run *r)
{
    if (c->n_runs == c->cap_runs) {
        c->cap_runs = c->cap_runs ? c->cap_runs * 2 : 16;
        c->runs = kiln_realloc(c->runs, c->cap_runs * sizeof *c->runs);
    }
    c->runs[c->n_runs++] = r;
}

static void
mr_collector_count_run(mr_collector *c, const mr_run *r)
{
    mr_counters_add(c->counters, MR_C_SPILLED_RECORDS, r->records);
    mr_counters_add(c->counters, MR_C_FILE_BYTES_WRITTEN, r->bytes);
}

/* A new run writer over every partition, in the spill directory. */
static kiln_status
mr_collector_writer(mr_collector *c, const char *what, mr_run_writer **w, kiln_err *err)
{
    kbuf path = KBUF_INIT;
    mr_run_dir_path(c->p.spill, what, &path);
    kiln_status s = mr_run_writer_open((const char *)path.data, c->p.partitions, c->p.run_opt, w,
                                       err);
    buf_free(&path);
    return s;
}

/* The end of the key group that starts at entry i of the sorted buffer:
 * equal keys (group NULL), or keys group calls equal to the first. */
static size_t
mr_collector_group_end(const mr_sortbuf *sb, size_t i, size_t n, uint32_t part, kslice key,
                       const mr_key_order *group)
{
    uint32_t p2;
    kslice k2, v2;
    size_t j = i + 1;
    if (group == NULL) {
        for (; j < n; j++) {
            mr_sortbuf_get(sb, j, &p2, &k2, &v2);
            if (p2 != part || !kslice_eq(k2, key))
                break;
        }
        return j;
    }
    for (; j < n; j++) {
        mr_sortbuf_get(sb, j, &p2, &k2, &v2);
        if (p2 != part || !mr_order_same(group, k2, key))
            break;
    }
    return j;
}

/* Write the sorted buffer as one run; reset it unless it is the last. */
static kiln_status
mr_collector_spill(mr_collector *c, int last, kiln_err *err)
{
    mr_sortbuf *sb = c->sb;
    size_t n = mr_sortbuf_count(sb);
    if (n == 0)
        return KILN_OK;
    mr_sortbuf_sort(sb);
    mr_run_writer *w;
    kiln_status s = mr_collector_writer(c, "spill", &w, err);
    if (s != KILN_OK)
        return s;
    size_t i = 0;
    while (s == KILN_OK && i < n) {
        uint32_t part;
        kslice key, value;
        mr_sortbuf_prefetch_entry(sb, i + 8);
        mr_sortbuf_get(sb, i, &part, &key, &value);
        if (c->hashed || c->combine == NULL) {
            s = mr_run_writer_add(w, part, key, value, err);
            i++;
            continue;
        }
        size_t j = mr_collector_group_end(sb, i, n, part, key, c->group);
        mr_values v;
        mr_values_of_sortbuf(&v, sb, i, j);
        mr_task t;
        mr_task_begin(&t, c->p.comb->env, MR_TASK_COMBINE, mr_collector_combine_emit, w);
        t.part = part;
        t.group_key = key;
        t.values = &v;
        s = c->combine(&t, key, &v, err);
        mr_counters_add(c->counters, MR_C_COMBINE_INPUT_RECORDS, j - i);
        i = j;
    }
    if (c->hashed)
        mr_counters_add(c->counters, MR_C_COMBINE_OUTPUT_RECORDS, n);
    if (!last)
        mr_sortbuf_reset(sb);
    if (s != KILN_OK) {
        mr_run_writer_abandon(w);
        return s;
    }
    mr_run *r;
    s = mr_run_writer_finish(w, &r, err);
    if (s != KILN_OK)
        return s;
    mr_collector_count_run(c, r);
    mr_collector_push(c, r);
    return KILN_OK;
}

/* A record too large for the whole buffer becomes a run of its own. */
static kiln_status
mr_collector_single(mr_collector *c, uint32_t part, kslice key, kslice value, kiln_err *err)
{
    mr_run_writer *w;
    kiln_status s = mr_collector_writer(c, "spill", &w, err);
    if (s != KILN_OK)
        return s;
    s = mr_run_writer_add(w, part, key, value, err);
    if (s != KILN_OK) {
        mr_run_writer_abandon(w);
        return s;
    }
    mr_run *r;
    s = mr_run_writer_finish(w, &r, err);
    if (s != KILN_OK)
        return s;
    if (c->hashed) {
        mr_counters_add(c->counters, MR_C_COMBINE_INPUT_RECORDS, 1);
        mr_counters_add(c->counters, MR_C_COMBINE_OUTPUT_RECORDS, 1);
    }
    mr_collector_count_run(c, r);
    mr_collector_push(c, r);
    return KILN_OK;
}

static kiln_status
mr_collector_insert(mr_collector *c, uint32_t part, uint64_t h, kslice key, kslice value,
                    kiln_err *err)
{
    for (int attempt = 0;; attempt++) {
        mr_sortbuf_result r = mr_sortbuf_add(c->sb, part, h, key, value, c->fold, c->fold_arg);
        if (r == MR_SORTBUF_ADDED || r == MR_SORTBUF_FOLDED) {
            if (c->hashed)
                mr_counters_add(c->counters, MR_C_COMBINE_INPUT_RECORDS, 1);
            return KILN_OK;
        }
        if (r == MR_SORTBUF_TOO_BIG || attempt > 0)
            return mr_collector_single(c, part, key, value, err);
        kiln_status s = mr_collector_spill(c, 0, err);
        if (s != KILN_OK)
            return s;
    }
}

/* Insert the oldest staged emit. */
static kiln_status
mr_collector_insert_next(mr_collector *c, kiln_err *err)
{
    const mr_pending *p = &c->ring[c->inserted++ % MR_COLLECT_RING];
    return mr_collector_insert(c, p->part, p->hash, kslice_make(p->bytes, p->klen),
                               kslice_make(p->bytes + p->klen, p->vlen), err);
}

/* Stage an emit in the ring; insert the one MR_COLLECT_AHEAD emits older. */
static kiln_status
mr_collector_stage(mr_collector *c, uint32_t part, uint64_t h, kslice key, kslice value,
                   kiln_err *err)
{
    size_t n = c->staged++;
    mr_pending *p = &c->ring[n % MR_COLLECT_RING];
    p->hash = h;
    p->part = part;
    p->klen = (uint32_t)key.n;
    p->vlen = (uint32_t)value.n;
    if (key.n)
        memcpy(p->bytes, key.p, key.n);
    if (value.n)
        memcpy(p->bytes + key.n, value.p, value.n);
    mr_sortbuf_prefetch_slot(c->sb, h);
    if (n >= MR_COLLECT_SLOT_AHEAD)
        mr_sortbuf_prefetch_record(c->sb, c->ring[(n - MR_COLLECT_SLOT_AHEAD) % MR_COLLECT_RING].hash);
    if (n - c->inserted >= MR_COLLECT_AHEAD)
        return mr_collector_insert_next(c, err);
    return KILN_OK;
}

/* A way's running sum goes on to the sort buffer as one emit. */
static kiln_status
mr_collector_stage_way(mr_collector *c, const mr_sum_way *w, kiln_err *err)
{
    uint8_t key[16], be[8];
    memcpy(key, &w->k0, 8);
    memcpy(key + 8, &w->k1, 8);
    coding_put_be64(be, w->sum);
    return mr_collector_stage(c, mr_partition_of_hash(w->hash, c->p.partitions), w->hash,
                              kslice_make(key, (size_t)(w->k1 >> 56)), kslice_make(be, 8), err);
}

static inline int
mr_sum_way_is(const mr_sum_way *w, const mr_sum_way *e)
{
    return w->hash == e->hash && w->k0 == e->k0 && w->k1 == e->k1;
}

/* Add a waiting emit to its running sum. */
static kiln_status
mr_collector_sum(mr_collector *c, const mr_sum_way *e, kiln_err *err)
{
    mr_sum_set *set = &c->sums[e->hash & c->sum_mask];
    if (mr_sum_way_is(&set->way[0], e)) {
        set->way[0].sum += e->sum;
        mr_counters_add(c->counters, MR_C_COMBINE_INPUT_RECORDS, 1);
        return KILN_OK;
    }
    if (mr_sum_way_is(&set->way[1], e)) {
        /* The most recent first. */
        mr_sum_way t = set->way[1];
        t.sum += e->sum;
        set->way[1] = set->way[0];
        set->way[0] = t;
        mr_counters_add(c->counters, MR_C_COMBINE_INPUT_RECORDS, 1);
        return KILN_OK;
    }
    /* Not cached: the first way takes it, the second goes on. This emit is
     * counted as a combine input when the sum it starts reaches the buffer. */
    mr_sum_way out = set->way[1];
    set->way[1] = set->way[0];
    set->way[0] = *e;
    if (out.k1 == MR_SUM_EMPTY)
        return KILN_OK;
    return mr_collector_stage_way(c, &out, err);
}

/* An emit for the cache of sums: it waits while its set is prefetched, and
 * the one MR_SUMS_AHEAD emits older is added. */
static kiln_status
mr_collector_sum_emit(mr_collector *c, kslice key, uint64_t v, kiln_err *err)
{
    mr_sum_way *e = &c->sum_wait[c->sum_waiting++ % MR_SUMS_AHEAD];
    kiln_status s = KILN_OK;
    if (c->sum_waiting > MR_SUMS_AHEAD)
        s = mr_collector_sum(c, e, err);
    e->hash = mr_sumkey(key.p, key.n, &e->k0, &e->k1);
    e->sum = v;
    __builtin_prefetch(&c->sums[e->hash & c->sum_mask]);
    return s;
}

/* Every waiting emit and running sum goes on; the cache is left empty. */
static kiln_status
mr_collector_drain_sums(mr_collector *c, kiln_err *err)
{
    if (c->sums == NULL)
        return KILN_OK;
    kiln_status s = KILN_OK;
    size_t n = c->sum_waiting;
    for (size_t i = n > MR_SUMS_AHEAD ? n - MR_SUMS_AHEAD : 0; i < n && s == KILN_OK; i++)
        s = mr_collector_sum(c, &c->sum_wait[i % MR_SUMS_AHEAD], err);
    c->sum_waiting = 0;
    for (size_t i = 0; i <= c->sum_mask && s == KILN_OK; i++) {
        for (int w = 0; w < 2 && s == KILN_OK; w++) {
            mr_sum_way *way = &c->sums[i].way[w];
            if (way->k1 == MR_SUM_EMPTY)
                continue;
            s = mr_collector_stage_way(c, way, err);
            way->k1 = MR_SUM_EMPTY;
        }
    }
    return s;
}

/* Insert everything staged (before a final spill). */
static kiln_status
mr_collector_flush(mr_collector *c, kiln_err *err)
{
    kiln_status s = mr_collector_drain_sums(c, err);
    while (s == KILN_OK && c->inserted < c->staged)
        s = mr_collector_insert_next(c, err);
    c->inserted = c->staged;
    return s;
}

kiln_status
mr_collector_add(mr_collector *c, kslice key, kslice value, kiln_err *err)
{
    /* The cache of sums is there only with the sum fold and hash partitions;
     * its keys are hashed as their words are made. */
    if (c->sums != NULL && key.n <= MR_SUMS_KEY && value.n == 8)
        return mr_collector_sum_emit(c, key, coding_get_be64(value.p), err);
    uint64_t h = 0;
    uint32_t part;
    if (c->hash_parts) {
        h = mr_partition_hash(key.p, key.n);
        part = mr_partition_of_hash(h, c->p.partitions);
    } else {
        /* Total order, or the job's partitioner: only the job's can answer
         * out of range. */
        if (c->hashed)
            h = mr_partition_hash(key.p, key.n);
        part = mr_partitioner_get(c->p.part, key, h);
        if (part >= c->p.partitions)
            return mr_partition_bad(c->p.part, c->p.comb->env->name, key, value, part, err);
    }
    if (!c->hashed || key.n + value.n > MR_COLLECT_INLINE)
        return mr_collector_insert(c, part, h, key, value, err);
    return mr_collector_stage(c, part, h, key, value, err);
}

kiln_status
mr_collector_emit(mr_task *t, kslice key, kslice value, kiln_err *err)
{
    mr_counters *counters = t->env->counters;
    mr_counters_add(counters, MR_C_MAP_OUTPUT_RECORDS, 1);
    mr_counters_add(counters, MR_C_MAP_OUTPUT_BYTES, key.n + value.n);
    return mr_collector_add(t->sink, key, value, err);
}

/* Merge runs[from, from + n) into one run (every partition). */
static kiln_status
mr_collector_merge(mr_collector *c, size_t from, size_t n, int combine, mr_run **out,
                   kiln_err *err)
{
    *out = NULL;
    env_file **files = kiln_calloc(n, sizeof *files);
    mr_run_iter **its = kiln_calloc(n, sizeof *its);
    kiln_status s = KILN_OK;
    for (size_t i = 0; i < n && s == KILN_OK; i++)
        s = env_open_read(c->runs[from + i]->path, &files[i], err);
    mr_run_writer *w = NULL;
    if (s == KILN_OK)
        s = mr_collector_writer(c, "merge", &w, err);
    for (uint32_t p = 0; p < c->p.partitions && s == KILN_OK; p++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            const mr_run_section *sec = &c->runs[from + i]->sec[p];
            if (sec->len == 0)
                continue;
            mr_extent e = {sec->off, sec->len};
            its[k++] = mr_run_iter_new(files[i], &e, 1);
        }
        if (k == 0)
            continue;
        mr_merger *m = mr_merger_new(its, k);
        s = mr_collector_combine(c->p.comb, m, w, p, combine, err);
        mr_counters_add(c->counters, MR_C_FILE_BYTES_READ, mr_merger_bytes_read(m));
        mr_merger_free(m);
    }
    for (size_t i = 0; i < n; i++)
        env_close(files[i], NULL);
    free(files);
    free(its);
    if (s != KILN_OK) {
        mr_run_writer_abandon(w);
        return s;
    }
    s = mr_run_writer_finish(w, out, err);
    if (s != KILN_OK)
        return s;
    mr_collector_count_run(c, *out);
    for (size_t i = 0; i < n; i++)
        mr_run_remove(c->runs[from + i]);
    return KILN_OK;
}

kiln_status
mr_collector_finish(mr_collector *c, mr_run **out, kiln_err *err)
{
    *out = NULL;
    kiln_status s = mr_collector_flush(c, err);
    if (s == KILN_OK)
        s = mr_collector_spill(c, 1, err);
    mr_sortbuf_free(c->sb);
    c->sb = NULL;
    mr_collector_free_sums(c);
    if (s == KILN_OK && c->n_runs == 0) {
        /* No map output at all: an empty run keeps the rest uniform. */
        mr_run_writer *w;
        s = mr_collector_writer(c, "empty", &w, err);
        mr_run *r;
        if (s == KILN_OK)
            s = mr_run_writer_finish(w, &r, err);
        if (s == KILN_OK)
            mr_collector_push(c, r);
    }
    size_t factor = c->p.merge_factor < 2 ? 2 : c->p.merge_factor;
    /* Until one pass can take the rest, merge the oldest runs; a merged run
     * goes last, so it is merged again only once the spills are used up.
     * A pass merges no more runs than it takes to bring the count down to
     * the factor (at most factor): 68 runs with a factor of 32 merge 32,
     * then 6, then the final 32, so 38 spills are read twice, where 32, 32
     * and a final 6 would read 64 twice. */
    while (s == KILN_OK && c->n_runs > 1) {
        size_t n = c->n_runs;
        if (n > factor)
            n = n - factor + 1 < factor ? n - factor + 1 : factor;
        mr_run *merged;
        s = mr_collector_merge(c, 0, n, 1, &merged, err);
        if (s != KILN_OK)
            break;
        memmove(c->runs, c->runs + n, (c->n_runs - n) * sizeof *c->runs);
        c->n_runs -= n;
        mr_collector_push(c, merged);
    }
    if (s != KILN_OK) {
        mr_collector_abandon(c);
        return s;
    }
    *out = c->runs[0];
    free(c->runs);
    free(c);
    return KILN_OK;
}

void
mr_collector_abandon(mr_collector *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n_runs; i++)
        mr_run_remove(c->runs[i]);
    mr_sortbuf_free(c->sb);
    mr_collector_free_sums(c);
    free(c->runs);
    free(c);
}
