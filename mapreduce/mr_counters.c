/* mr_counters.c -- job counters: registration, merge, console and JSON forms.
 *
 * Display order is registration order, groups in order of first appearance,
 * which puts Hadoop's built-in groups first, as its job client does.
 */
#include "mapreduce/mr_counters.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *group;
    const char *name;
    mr_counter_kind kind;
} mr_builtin[MR_C_BUILTIN_COUNT] = {
    [MR_C_FILE_BYTES_READ] = {"File System Counters", "FILE: Number of bytes read", MR_COUNTER_SUM},
    [MR_C_FILE_BYTES_WRITTEN] = {"File System Counters", "FILE: Number of bytes written",
                                 MR_COUNTER_SUM},
    [MR_C_MAP_INPUT_RECORDS] = {"Map-Reduce Framework", "Map input records", MR_COUNTER_SUM},
    [MR_C_MAP_OUTPUT_RECORDS] = {"Map-Reduce Framework", "Map output records", MR_COUNTER_SUM},
    [MR_C_MAP_OUTPUT_BYTES] = {"Map-Reduce Framework", "Map output bytes", MR_COUNTER_SUM},
    [MR_C_MAP_OUTPUT_MATERIALIZED_BYTES] = {"Map-Reduce Framework",
                                            "Map output materialized bytes", MR_COUNTER_SUM},
    [MR_C_COMBINE_INPUT_RECORDS] = {"Map-Reduce Framework", "Combine input records",
                                    MR_COUNTER_SUM},
    [MR_C_COMBINE_OUTPUT_RECORDS] = {"Map-Reduce Framework", "Combine output records",
                                     MR_COUNTER_SUM},
    [MR_C_REDUCE_INPUT_GROUPS] = {"Map-Reduce Framework", "Reduce input groups", MR_COUNTER_SUM},
    [MR_C_REDUCE_SHUFFLE_BYTES] = {"Map-Reduce Framework", "Reduce shuffle bytes", MR_COUNTER_SUM},
    [MR_C_REDUCE_INPUT_RECORDS] = {"Map-Reduce Framework", "Reduce input records", MR_COUNTER_SUM},
    [MR_C_REDUCE_OUTPUT_RECORDS] = {"Map-Reduce Framework", "Reduce output records",
                                    MR_COUNTER_SUM},
    [MR_C_SPILLED_RECORDS] = {"Map-Reduce Framework", "Spilled Records", MR_COUNTER_SUM},
    [MR_C_CPU_MS] = {"Map-Reduce Framework", "CPU time spent (ms)", MR_COUNTER_SUM},
    [MR_C_PEAK_RSS] = {"Map-Reduce Framework", "Peak Physical memory (bytes)", MR_COUNTER_MAX},
    [MR_C_INPUT_BYTES_READ] = {"File Input Format Counters", "Bytes Read", MR_COUNTER_SUM},
    [MR_C_OUTPUT_BYTES_WRITTEN] = {"File Output Format Counters", "Bytes Written",
                                   MR_COUNTER_SUM},
    [MR_C_BAD_RECORDS] = {"Map-Reduce Framework", "Bad input records", MR_COUNTER_SUM},
    [MR_C_REDUCE_PREMERGES] = {"Map-Reduce Framework", "Reduce pre-merge passes", MR_COUNTER_SUM},
    [MR_C_MAP_PIECES_STOLEN] = {"Map-Reduce Framework", "Map input pieces taken from other ranks",
                                MR_COUNTER_SUM},
};

static int
mr_counters_push(mr_counters *c, const char *group, const char *name, mr_counter_kind kind)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 32;
        c->v = kiln_realloc(c->v, c->cap * sizeof *c->v);
        c->group = kiln_realloc(c->group, c->cap * sizeof *c->group);
        c->name = kiln_realloc(c->name, c->cap * sizeof *c->name);
        c->kind = kiln_realloc(c->kind, c->cap * sizeof *c->kind);
    }
    c->v[c->n] = 0;
    c->group[c->n] = (char *)kiln_memdup(group, strlen(group) + 1);
    c->name[c->n] = (char *)kiln_memdup(name, strlen(name) + 1);
    c->kind[c->n] = (uint8_t)kind;
    return (int)c->n++;
}

void
mr_counters_init(mr_counters *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < MR_C_BUILTIN_COUNT; i++)
        mr_counters_push(c, mr_builtin[i].group, mr_builtin[i].name, mr_builtin[i].kind);
}

void
mr_counters_free(mr_counters *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->group[i]);
        free(c->name[i]);
    }
    free(c->v);
    free(c->group);
    free(c->name);
    free(c->kind);
    memset(c, 0, sizeof *c);
}

int
mr_counters_find(const mr_counters *c, const char *group, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->group[i], group) == 0 && strcmp(c->name[i], name) == 0)
            return (int)i;
    return -1;
}

int
mr_counters_register(mr_counters *c, const char *group, const char *name, mr_counter_kind kind)
{
    int id = mr_counters_find(c, group, name);
    return id >= 0 ? id : mr_counters_push(c, group, name, kind);
}

void
mr_counters_merge(mr_counters *c, const uint64_t *other)
{
    for (size_t i = 0; i < c->n; i++) {
        if (c->kind[i] == MR_COUNTER_MAX)
            c->v[i] = other[i] > c->v[i] ? other[i] : c->v[i];
        else
            c->v[i] += other[i];
    }
}

/* Group names in order of first appearance; returns the count. */
static size_t
mr_counters_groups(const mr_counters *c, const char **out)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        size_t j = 0;
        while (j < k && strcmp(out[j], c->group[i]) != 0)
            j++;
        if (j == k)
            out[k++] = c->group[i];
    }
    return k;
}

void
mr_counters_print(const mr_counters *c, FILE *out)
{
    const char **groups = kiln_calloc(c->n ? c->n : 1, sizeof *groups);
    size_t ng = mr_counters_groups(c, groups);
    fprintf(out, "Counters: %zu\n", c->n);
    for (size_t g = 0; g < ng; g++) {
        fprintf(out, "\t%s\n", groups[g]);
        for (size_t i = 0; i < c->n; i++)
            if (strcmp(c->group[i], groups[g]) == 0)
                fprintf(out, "\t\t%s=%" PRIu64 "\n", c->name[i], c->v[i]);
    }
    free(groups);
}

void
mr_counters_json_string(kbuf *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    buf_append_u8(out, '"');
    for (size_t i = 0; i < n; i++) {
        uint8_t ch = (uint8_t)s[i];
        if (ch == '"' || ch == '\\') {
            buf_append_u8(out, '\\');
            buf_append_u8(out, ch);
        } else if (ch == '\n') {
            buf_append(out, "\\n", 2);
        } else if (ch == '\t') {
            buf_append(out, "\\t", 2);
        } else if (ch < 0x20 || ch >= 0x7f) {
            char u[6] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15]};
            buf_append(out, u, sizeof u);
        } else {
            buf_append_u8(out, ch);
        }
    }
    buf_append_u8(out, '"');
}

void
mr_counters_json(const mr_counters *c, kbuf *out)
{
    const char **groups = kiln_calloc(c->n ? c->n : 1, sizeof *groups);
    size_t ng = mr_counters_groups(c, groups);
    buf_append_u8(out, '{');
    for (size_t g = 0; g < ng; g++) {
        if (g > 0)
            buf_append_u8(out, ',');
        mr_counters_json_string(out, groups[g], strlen(groups[g]));
        buf_append(out, ":{", 2);
        int first = 1;
        for (size_t i = 0; i < c->n; i++) {
            if (strcmp(c->group[i], groups[g]) != 0)
                continue;
            if (!first)
                buf_append_u8(out, ',');
            first = 0;
            mr_counters_json_string(out, c->name[i], strlen(c->name[i]));
            char num[32];
            int len = snprintf(num, sizeof num, ":%" PRIu64, c->v[i]);
            buf_append(out, num, (size_t)len);
        }
        buf_append_u8(out, '}');
    }
    buf_append_u8(out, '}');
    free(groups);
}
