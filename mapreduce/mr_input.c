/* mr_input.c -- input listing, rank splits and sample points.
 *
 * (The line reader is mr_reader.c.)
 */
#include "mapreduce/mr_input.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "storage/base/coding.h"

static int
mr_input_is_gzip(const char *path)
{
    size_t n = strlen(path);
    return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

static void
mr_input_add(mr_input *in, const char *path, uint64_t size)
{
    if ((in->n & (in->n - 1)) == 0)   /* 0 or a power of two: the array is full */
        in->files = kiln_realloc(in->files, (in->n ? in->n * 2 : 1) * sizeof *in->files);
    mr_input_file *f = &in->files[in->n++];
    f->path = (char *)kiln_memdup(path, strlen(path) + 1);
    f->size = size;
    f->gzip = mr_input_is_gzip(path);
    in->total += size;
}

static int
mr_input_cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static kiln_status
mr_input_walk(mr_input *in, const char *path, int top, kiln_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return status_set_errno(err, errno, "%s", path);
    if (S_ISREG(st.st_mode)) {
        mr_input_add(in, path, (uint64_t)st.st_size);
        return KILN_OK;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (!top)
            return KILN_OK;
        return status_set(err, KILN_INVALID, "%s: not a file or directory", path);
    }
    DIR *d = opendir(path);
    if (d == NULL)
        return status_set_errno(err, errno, "%s: open directory", path);
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || de->d_name[0] == '_')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            names = kiln_realloc(names, cap * sizeof *names);
        }
        names[n++] = (char *)kiln_memdup(de->d_name, strlen(de->d_name) + 1);
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, mr_input_cmp_names);
    kiln_status s = KILN_OK;
    size_t plen = strlen(path);
    for (size_t i = 0; i < n; i++) {
        if (s == KILN_OK) {
            size_t len = plen + 1 + strlen(names[i]) + 1;
            char *child = kiln_malloc(len);
            if (plen > 0 && path[plen - 1] == '/')
                snprintf(child, len, "%s%s", path, names[i]);
            else
                snprintf(child, len, "%s/%s", path, names[i]);
            s = mr_input_walk(in, child, 0, err);
            free(child);
        }
        free(names[i]);
    }
    free(names);
    return s;
}

kiln_status
mr_input_list(mr_input *in, const char *const *paths, size_t n, kiln_err *err)
{
    for (size_t i = 0; i < n; i++) {
        kiln_status s = mr_input_walk(in, paths[i], 1, err);
        if (s != KILN_OK)
            return s;
    }
    return KILN_OK;
}

void
mr_input_free(mr_input *in)
{
    if (in == NULL)
        return;
    for (size_t i = 0; i < in->n; i++)
        free(in->files[i].path);
    free(in->files);
    in->files = NULL;
    in->n = 0;
    in->total = 0;
}

void
mr_input_encode(const mr_input *in, kbuf *out)
{
    buf_append_be64(out, in->n);
    for (size_t i = 0; i < in->n; i++) {
        size_t len = strlen(in->files[i].path);
        buf_append_be64(out, in->files[i].size);
        buf_append_be32(out, (uint32_t)len);
        buf_append(out, in->files[i].path, len);
    }
}

kiln_status
mr_input_decode(mr_input *in, const uint8_t *p, size_t n, kiln_err *err)
{
    const uint8_t *end = p + n;
    if (n < 8)
        return status_set(err, KILN_CORRUPTION, "input table: truncated");
    uint64_t count = coding_get_be64(p);
    p += 8;
    for (uint64_t i = 0; i < count; i++) {
        if (end - p < 12)
            return status_set(err, KILN_CORRUPTION, "input table: truncated");
        uint64_t size = coding_get_be64(p);
        uint32_t len = coding_get_be32(p + 8);
        p += 12;
        if ((size_t)(end - p) < len)
            return status_set(err, KILN_CORRUPTION, "input table: truncated");
        char *path = kiln_malloc((size_t)len + 1);
        memcpy(path, p, len);
        path[len] = '\0';
        mr_input_add(in, path, size);
        free(path);
        p += len;
    }
    return KILN_OK;
}

/* Start of rank r's range of the byte space: floor(total * r / nranks). */
static uint64_t
mr_input_rank_lo(uint64_t total, int nranks, int r)
{
    return (uint64_t)(((unsigned __int128)total * (unsigned)r) / (unsigned)nranks);
}

/* The rank whose range holds byte x (x < total), or the last rank. */
static int
mr_input_owner(uint64_t total, int nranks, uint64_t x)
{
    if (total == 0)
        return 0;
    int r = (int)(((unsigned __int128)x * (unsigned)nranks) / total);
    if (r >= nranks)
        r = nranks - 1;
    while (r > 0 && mr_input_rank_lo(total, nranks, r) > x)
        r--;
    while (r + 1 < nranks && mr_input_rank_lo(total, nranks, r + 1) <= x)
        r++;
    return r;
}

/* Pieces split s is cut into: its length over grain, rounded to the nearest,
 * at least one; one for a gzip file or grain 0. */
static uint64_t
mr_input_piece_count(const mr_input *in, const mr_split *s, uint64_t grain)
{
    if (grain == 0 || in->files[s->file].gzip)
        return 1;
    uint64_t m = (s->end - s->start + grain / 2) / grain;
    return m ? m : 1;
}

size_t
mr_input_splits(const mr_input *in, int nranks, int rank, mr_split **out)
{
    uint64_t lo = mr_input_rank_lo(in->total, nranks, rank);
    uint64_t hi = mr_input_rank_lo(in->total, nranks, rank + 1);
    mr_split *v = kiln_malloc((in->n ? in->n : 1) * sizeof *v);
    size_t k = 0;
    uint64_t g = 0;
    for (size_t i = 0; i < in->n; i++) {
        const mr_input_file *f = &in->files[i];
        if (f->gzip) {
            if (mr_input_owner(in->total, nranks, g + f->size / 2) == rank) {
                v[k].file = (uint32_t)i;
                v[k].start = 0;
                v[k].end = f->size;
                k++;
            }
        } else {
            uint64_t a = g > lo ? g : lo;
            uint64_t b = g + f->size < hi ? g + f->size : hi;
            if (a < b) {
                v[k].file = (uint32_t)i;
                v[k].start = a - g;
                v[k].end = b - g;
                k++;
            }
        }
        g += f->size;
    }
    *out = v;
    return k;
}

size_t
mr_input_pieces(const mr_input *in, int nranks, int rank, uint64_t grain, mr_split **out)
{
    mr_split *sp;
    size_t n = mr_input_splits(in, nranks, rank, &sp);
    size_t cap = 0;
    for (size_t i = 0; i < n; i++)
        cap += mr_input_piece_count(in, &sp[i], grain);
    mr_split *v = kiln_malloc((cap ? cap : 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t m = mr_input_piece_count(in, &sp[i], grain), len = sp[i].end - sp[i].start;
        for (uint64_t j = 0; j < m; j++) {
            v[k].file = sp[i].file;
            v[k].start = sp[i].start + (uint64_t)(((unsigned __int128)len * j) / m);
            v[k].end = sp[i].start + (uint64_t)(((unsigned __int128)len * (j + 1)) / m);
            k++;
        }
    }
    free(sp);
    *out = v;
    return k;
}

void
mr_input_sample_point(const mr_input *in, size_t i, size_t points, uint32_t *file,
                      uint64_t *offset)
{
    uint64_t x = (uint64_t)(((unsigned __int128)in->total * (2 * i + 1)) / (2 * (uint64_t)points));
    uint64_t g = 0;
    for (size_t k = 0; k < in->n; k++) {
        if (x < g + in->files[k].size || k + 1 == in->n) {
            *file = (uint32_t)k;
            *offset = in->files[k].gzip || x < g ? 0 : x - g;
            return;
        }
        g += in->files[k].size;
    }
    *file = 0;
    *offset = 0;
}
