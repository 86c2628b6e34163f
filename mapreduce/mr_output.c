/* mr_output.c -- the text output format and the output commit steps.
 *
 * The commit rename uses renameat2(RENAME_NOREPLACE) so that an output
 * directory created by someone else while the job ran is never replaced;
 * filesystems without it fall back to a check followed by rename(2).
 */
#include "mapreduce/mr_output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/base/env.h"

typedef struct mr_output_text_writer {
    env_file *f;
    char *path;
} mr_output_text_writer;

static kiln_status
mr_output_text_open(void *arg, const char *dir, uint32_t partition, void **writer, kiln_err *err)
{
    *writer = NULL;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/part-r-%05u", dir, partition) >= (int)sizeof path)
        return status_set(err, KILN_INVALID, "%s: path too long", dir);
    env_file *f;
    kiln_status s = env_create(path, 1, &f, err);
    if (s != KILN_OK)
        return s;
    mr_output_text_writer *w = kiln_calloc(1, sizeof *w);
    w->f = f;
    w->path = (char *)kiln_memdup(path, strlen(path) + 1);
    *writer = w;
    return KILN_OK;
}

static kiln_status
mr_output_text_write(void *writer, kslice key, kslice value, kiln_err *err)
{
    mr_output_text_writer *w = writer;
    kiln_status s = env_append(w->f, key.p, key.n, err);
    if (s == KILN_OK)
        s = env_append(w->f, "\t", 1, err);
    if (s == KILN_OK)
        s = env_append(w->f, value.p, value.n, err);
    if (s == KILN_OK)
        s = env_append(w->f, "\n", 1, err);
    return s;
}

static void
mr_output_text_free(mr_output_text_writer *w)
{
    free(w->path);
    free(w);
}

static kiln_status
mr_output_text_close(void *writer, uint64_t *bytes, kiln_err *err)
{
    mr_output_text_writer *w = writer;
    kiln_status s = env_sync(w->f, err);
    uint64_t n = env_file_size(w->f);
    kiln_status c = env_close(w->f, err);
    if (s == KILN_OK)
        s = c;
    if (s == KILN_OK)
        *bytes += n;
    else
        unlink(w->path);
    mr_output_text_free(w);
    return s;
}

static void
mr_output_text_abort(void *writer)
{
    mr_output_text_writer *w = writer;
    if (w == NULL)
        return;
    env_close(w->f, NULL);
    unlink(w->path);
    mr_output_text_free(w);
}

const mr_output_format mr_output_text = {
    "text", NULL, mr_output_text_open, mr_output_text_write, mr_output_text_close, mr_output_text_abort,
    NULL,
};

kiln_status
mr_output_check(const char *dir, kiln_err *err)
{
    if (dir == NULL || dir[0] == '\0')
        return status_set(err, KILN_INVALID, "no output directory given");
    if (env_exists(dir))
        return status_set(err, KILN_EXISTS, "%s: output directory already exists", dir);
    return KILN_OK;
}

void
mr_output_tmp_path(const char *dir, const char *job_id, kbuf *out)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    buf_reset(out);
    buf_append(out, dir, n);
    buf_append(out, "._temporary.", 12);
    buf_append(out, job_id, strlen(job_id));
    buf_append_u8(out, '\0');
}

kiln_status
mr_output_commit(const char *tmp, const char *dir, kiln_err *err)
{
    int e = 0;
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_NOREPLACE) != 0) {
        e = errno;
        if (e == EINVAL || e == ENOSYS) {
            if (env_exists(dir))
                return status_set(err, KILN_EXISTS, "%s: output directory appeared while the job ran",
                                  dir);
            e = rename(tmp, dir) == 0 ? 0 : errno;
        }
    }
    if (e == EEXIST || e == ENOTEMPTY)
        return status_set(err, KILN_EXISTS, "%s: output directory appeared while the job ran", dir);
    if (e != 0)
        return status_set_errno(err, e, "%s: rename to %s", tmp, dir);
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", dir);
    return env_sync_dir(dirname(parent), err);
}

kiln_status
mr_output_write_file(const char *dir, const char *name, const void *p, size_t n, kiln_err *err)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return status_set(err, KILN_INVALID, "%s: path too long", dir);
    return env_write_file_atomic(path, p, n, err);
}

void
mr_output_remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d != NULL) {
            struct dirent *de;
            while ((de = readdir(d)) != NULL) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                    continue;
                char child[PATH_MAX];
                if (snprintf(child, sizeof child, "%s/%s", path, de->d_name) < (int)sizeof child)
                    mr_output_remove_tree(child);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* ------------------------------------------------------------------ sweeping after a failure */

static int
mr_output_note_path(const char *base, const char *job_id, char *out, size_t cap)
{
    return snprintf(out, cap, "%s/%s.output", base, job_id) < (int)cap;
}

kiln_status
mr_output_note_tmp(const char *base, const char *job_id, const char *tmp, kiln_err *err)
{
    char path[PATH_MAX];
    if (!mr_output_note_path(base, job_id, path, sizeof path))
        return status_set(err, KILN_INVALID, "%s: path too long", base);
    kiln_status s = env_mkdirs(base, 0700, err);
    if (s != KILN_OK)
        return s;
    return env_write_file_atomic(path, tmp, strlen(tmp), err);
}

void
mr_output_forget_tmp(const char *base, const char *job_id)
{
    char path[PATH_MAX];
    if (mr_output_note_path(base, job_id, path, sizeof path))
        unlink(path);
}

/* A noted path is removed only if it names a job's temporary output. */
static int
mr_output_is_tmp(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash != NULL ? slash + 1 : path;
    return strstr(name, "._temporary.job_") != NULL && strstr(path, "/../") == NULL;
}

int
mr_output_sweep(const char *base, FILE *out)
{
    int left = 0;
    DIR *d = opendir(base);
    if (d == NULL)
        return errno == ENOENT ? 0 : 1;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n < 8 || strcmp(de->d_name + n - 7, ".output") != 0)
            continue;
        char note[PATH_MAX], tmp[PATH_MAX];
        if (snprintf(note, sizeof note, "%s/%s", base, de->d_name) >= (int)sizeof note)
            continue;
        int fd = open(note, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t got = read(fd, tmp, sizeof tmp - 1);
        close(fd);
        if (got <= 0)
            continue;
        tmp[got] = '\0';
        if (!mr_output_is_tmp(tmp))
            continue;
        struct stat st;
        if (lstat(tmp, &st) == 0) {
            mr_output_remove_tree(tmp);
            if (lstat(tmp, &st) == 0)
                left++;
            else if (out != NULL)
                fprintf(out, "removed %s\n", tmp);
        }
    }
    closedir(d);
    mr_output_remove_tree(base);
    struct stat st;
    if (lstat(base, &st) == 0)
        left++;
    else if (out != NULL)
        fprintf(out, "removed %s\n", base);
    return left;
}
