/* mr_cluster.c -- one job on many hosts: every rank runs the job rank 0
 * describes, on files every host sees alike.
 *
 * Three steps make a job on N hosts the job on one:
 *   - every rank works in rank 0's working directory, so a relative path
 *     means the same file everywhere (mr_cluster_enter_cwd);
 *   - whatever setup reads from outside the arguments (a table's schema and
 *     regions) rank 0 reads and broadcasts (mr_job_shared, mr_desc.c); then every rank
 *     digests its description of the job, section by section, and rank 0
 *     names the first rank and host that differ (mr_cluster_check_description);
 *   - every rank looks at the files the job depends on, at rank 0's paths:
 *     the program, the inputs with their sizes, the temporary output
 *     directory (so the output's parent is shared) and the files setup read
 *     (mr_cluster_check_files); a host that lacks one, or sees other bytes,
 *     is named with the path.
 */
#include "mapreduce/mr_cluster.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/base/coding.h"
#include "storage/base/store_rec.h"

/* ------------------------------------------------------------------ digests */

#define mr_fnv64 store_rec_fnv64
#define MR_FNV_SEED STORE_REC_FNV64_INIT

/* Length-prefixed, so that ("ab", "c") and ("a", "bc") differ. */
static uint64_t
mr_fnv64_field(uint64_t h, const void *p, size_t n)
{
    uint8_t len[8];
    coding_put_be64(len, (uint64_t)n);
    return mr_fnv64(mr_fnv64(h, len, 8), p, n);
}

/* Digest of a file's bytes: 0 with *size and *digest, or an errno. */
static int
mr_file_digest(const char *path, uint64_t *size, uint64_t *digest)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    uint8_t buf[64 * 1024];
    uint64_t h = MR_FNV_SEED, n = 0;
    for (;;) {
        ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            close(fd);
            return e;
        }
        if (got == 0)
            break;
        h = mr_fnv64(h, buf, (size_t)got);
        n += (uint64_t)got;
    }
    close(fd);
    *size = n;
    *digest = h;
    return 0;
}

/* ------------------------------------------------------------------ working directory */

kiln_status
mr_cluster_enter_cwd(mr_job *job, kiln_err *err)
{
    kbuf wd = KBUF_INIT;
    kiln_status s = KILN_OK;
    if (job->rt.comm.rank == 0) {
        char here[PATH_MAX];
        if (getcwd(here, sizeof here) == NULL)
            s = status_set_errno(err, errno, "cannot name the working directory");
        else
            buf_append(&wd, here, strlen(here) + 1);
    }
    s = mr_comm_agree(&job->rt.comm, s, err);
    if (s != KILN_OK) {
        buf_free(&wd);
        return s;
    }
    mr_comm_bcast_buf(&job->rt.comm, &wd, 0);
    if (job->rt.comm.rank != 0 && chdir((const char *)wd.data) != 0)
        s = status_set_errno(err, errno,
                             "cannot enter rank 0's working directory %s (every host must see "
                             "it at the same path)", (const char *)wd.data);
    buf_free(&wd);
    return mr_comm_agree(&job->rt.comm, s, err);
}

/* ------------------------------------------------------------------ the description */

enum {
    MR_DESC_ARGS,
    MR_DESC_SETTINGS,
    MR_DESC_INPUTS,
    MR_DESC_OUTPUT,
    MR_DESC_PARTITIONS,
    MR_DESC_JOB,
    MR_DESC_N
};

static const char *const mr_desc_names[MR_DESC_N] = {
    "arguments", "settings (-D)", "input files", "output", "partitioning",
    "setup (tables, regions, indexes)",
};

static void
mr_cluster_digest(mr_job *job, uint64_t d[MR_DESC_N])
{
    uint64_t h = MR_FNV_SEED;
    const mr_job_desc *jd = &job->desc;
    h = mr_fnv64_field(h, jd->def->name, strlen(jd->def->name));
    for (int i = 0; i < jd->argc; i++)
        h = mr_fnv64_field(h, jd->argv[i], strlen(jd->argv[i]));
    d[MR_DESC_ARGS] = h;

    h = MR_FNV_SEED;
    const char *k, *v;
    for (size_t i = 0; mr_conf_entry(job->set.conf, i, &k, &v, NULL); i++) {
        /* Where spills go is each host's own business. */
        if (strcmp(k, "kiln.tmp.dir") == 0)
            continue;
        h = mr_fnv64_field(h, k, strlen(k));
        h = mr_fnv64_field(h, v, strlen(v));
    }
    d[MR_DESC_SETTINGS] = h;

    kbuf tmp = KBUF_INIT;
    mr_input_encode(&jd->input, &tmp);
    d[MR_DESC_INPUTS] = mr_fnv64_field(MR_FNV_SEED, tmp.data, tmp.len);
    buf_free(&tmp);

    h = mr_fnv64_field(MR_FNV_SEED, jd->output, strlen(jd->output));
    d[MR_DESC_OUTPUT] = mr_fnv64_field(h, jd->fmt->name, strlen(jd->fmt->name));

    uint8_t head[16];
    coding_put_be32(head, jd->partitions);
    head[4] = (uint8_t)mr_partitioner_is_total(jd->part);
    head[5] = jd->combine != NULL;
    head[6] = jd->fold != NULL;
    /* Which of the job's own key functions are set (their addresses mean
     * nothing on another host): a partitioner, a sort and a grouping
     * comparator. */
    head[7] = (uint8_t)((jd->part_fn != NULL) | (jd->sort.cmp != NULL) << 1 |
                        (jd->group.cmp != NULL) << 2);
    coding_put_be64(head + 8, (uint64_t)jd->time_ms);
    h = mr_fnv64_field(MR_FNV_SEED, head, sizeof head);
    const kslice *splits;
    size_t ns = mr_partitioner_splits(jd->part, &splits);
    for (size_t i = 0; i < ns; i++)
        h = mr_fnv64_field(h, splits[i].p, splits[i].n);
    d[MR_DESC_PARTITIONS] = h;

    h = mr_fnv64_field(MR_FNV_SEED, jd->desc_job.data, jd->desc_job.len);
    d[MR_DESC_JOB] = mr_fnv64_field(h, jd->report.data, jd->report.len);

    if (job->set.hooks.skew_rank == job->rt.comm.rank)
        d[MR_DESC_JOB] ^= 1;
}

kiln_status
mr_cluster_check_description(mr_job *job, kiln_err *err)
{
    mr_comm *c = &job->rt.comm;
    uint64_t mine[MR_DESC_N];
    mr_cluster_digest(job, mine);
    uint64_t *all = NULL;
    char *hosts = NULL;
    if (c->rank == 0) {
        all = kiln_calloc((size_t)c->size * MR_DESC_N, sizeof *all);
        hosts = kiln_calloc((size_t)c->size, MPI_MAX_PROCESSOR_NAME);
    }
    MPI_Gather(mine, MR_DESC_N, MPI_UINT64_T, all, MR_DESC_N, MPI_UINT64_T, 0, c->comm);
    MPI_Gather(c->host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
               0, c->comm);
    kiln_status s = KILN_OK;
    if (c->rank == 0) {
        for (int r = 1; r < c->size && s == KILN_OK; r++) {
            for (int k = 0; k < MR_DESC_N; k++) {
                if (all[(size_t)r * MR_DESC_N + k] == all[k])
                    continue;
                const char *h = hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME;
                s = status_set(err, KILN_INVALID,
                               "rank %d on host %.*s resolved a different job than rank 0 on "
                               "host %s: its %s differ; every host must see the same files, "
                               "data directory and environment", r, MPI_MAX_PROCESSOR_NAME, h,
                               c->host, mr_desc_names[k]);
                break;
            }
        }
    }
    free(all);
    free(hosts);
    return mr_comm_agree(c, s, err);
}

/* ------------------------------------------------------------------ files every host must see */

enum { MR_SEE_PROGRAM = 'P', MR_SEE_INPUT = 'I', MR_SEE_DIR = 'D', MR_SEE_FILE = 'F' };

static void
mr_see_add(kbuf *list, int kind, const char *path, uint64_t size, uint64_t digest)
{
    buf_append_u8(list, (uint8_t)kind);
    buf_append_be32(list, (uint32_t)strlen(path));
    buf_append(list, path, strlen(path));
    buf_append_be64(list, size);
    buf_append_be64(list, digest);
}

/* Rank 0: what every host must see as it does. */
static kiln_status
mr_see_list(mr_job *job, kbuf *list, kiln_err *err)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        uint64_t size, digest;
        int e = mr_file_digest(exe, &size, &digest);
        if (e != 0)
            return status_set_errno(err, e, "%s", exe);
        mr_see_add(list, MR_SEE_PROGRAM, exe, size, digest);
    }
    const mr_input *in = &job->desc.input;
    for (size_t i = 0; i < in->n; i++)
        mr_see_add(list, MR_SEE_INPUT, in->files[i].path, in->files[i].size, 0);
    mr_see_add(list, MR_SEE_DIR, job->out.tmp_out, 0, 0);
    const uint8_t *p = job->desc.require.data, *end = p + job->desc.require.len;
    while (p < end) {
        uint32_t len = coding_get_be32(p);
        char *path = kiln_malloc(len + 1);
        memcpy(path, p + 4, len);
        path[len] = '\0';
        p += 4 + len;
        uint64_t size, digest;
        int e = mr_file_digest(path, &size, &digest);
        if (e != 0) {
            kiln_status s = status_set_errno(err, e, "%s", path);
            free(path);
            return s;
        }
        mr_see_add(list, MR_SEE_FILE, path, size, digest);
        free(path);
    }
    return KILN_OK;
}

/* Any rank but 0: look at one entry. */
static kiln_status
mr_see_check(mr_job *job, int kind, const char *path, uint64_t size, uint64_t digest,
             kiln_err *err)
{
    const char *host = job->rt.comm.host;
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        switch (kind) {
        case MR_SEE_PROGRAM:
            return status_set(err, KILN_NOT_FOUND, "host %s lacks the program %s (%s)", host, path,
                              strerror(e));
        case MR_SEE_INPUT:
            return status_set(err, KILN_NOT_FOUND, "host %s lacks the input file %s (%s)", host,
                              path, strerror(e));
        case MR_SEE_DIR:
            return status_set(err, KILN_NOT_FOUND,
                              "host %s does not see the job's temporary output %s (%s): the "
                              "output's parent directory must be on a file system every host "
                              "shares, at the same path", host, path, strerror(e));
        default:
            return status_set(err, KILN_NOT_FOUND, "host %s lacks %s, which setup read on rank 0 "
                              "(%s)", host, path, strerror(e));
        }
    }
    if (kind == MR_SEE_DIR) {
        if (!S_ISDIR(st.st_mode))
            return status_set(err, KILN_INVALID, "host %s: %s is not a directory", host, path);
        return KILN_OK;
    }
    if (kind == MR_SEE_INPUT) {
        if ((uint64_t)st.st_size != size)
            return status_set(err, KILN_INVALID,
                              "host %s sees the input file %s with %" PRIu64 " bytes, rank 0 "
                              "with %" PRIu64, host, path, (uint64_t)st.st_size, size);
        return KILN_OK;
    }
    uint64_t got_size, got;
    int e = mr_file_digest(path, &got_size, &got);
    if (e != 0)
        return status_set_errno(err, e, "host %s: %s", host, path);
    if (got_size != size || got != digest) {
        if (kind == MR_SEE_PROGRAM)
            return status_set(err, KILN_INVALID,
                              "host %s has a different build of %s than rank 0 (%" PRIu64
                              " bytes here, %" PRIu64 " there)", host, path, got_size, size);
        return status_set(err, KILN_INVALID,
                          "host %s sees a different %s than rank 0, which setup read (a "
                          "different table or data directory on that host?)", host, path);
    }
    return KILN_OK;
}

kiln_status
mr_cluster_check_files(mr_job *job, kiln_err *err)
{
    kbuf list = KBUF_INIT;
    kiln_status s = KILN_OK;
    if (job->rt.comm.rank == 0)
        s = mr_see_list(job, &list, err);
    s = mr_comm_agree(&job->rt.comm, s, err);
    if (s != KILN_OK) {
        buf_free(&list);
        return s;
    }
    mr_comm_bcast_buf(&job->rt.comm, &list, 0);
    if (job->rt.comm.rank != 0) {
        const uint8_t *p = list.data, *end = p + list.len;
        kbuf path = KBUF_INIT;
        while (p < end && s == KILN_OK) {
            int kind = p[0];
            uint32_t len = coding_get_be32(p + 1);
            buf_reset(&path);
            buf_append(&path, p + 5, len);
            buf_append_u8(&path, 0);
            p += 5 + len;
            uint64_t size = coding_get_be64(p);
            uint64_t digest = coding_get_be64(p + 8);
            p += 16;
            s = mr_see_check(job, kind, (const char *)path.data, size, digest, err);
        }
        buf_free(&path);
    }
    buf_free(&list);
    return mr_comm_agree(&job->rt.comm, s, err);
}
