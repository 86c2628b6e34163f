/* jobs_args.c -- the argument and table helpers the jobs share.
 */
#include "jobs/jobs_args.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "storage/store/table.h"

kiln_status
jobs_take_inputs(mr_job *job, int argc, char **argv, int *i, kiln_err *err)
{
    const char *opt = argv[*i];
    int n = 0;
    while (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0) {
        mr_job_add_input(job, argv[++*i]);
        n++;
    }
    if (n == 0)
        return status_set(err, KILN_INVALID, "%s needs at least one path", opt);
    return KILN_OK;
}

kiln_status
jobs_take_value(int argc, char **argv, int *i, const char **out, kiln_err *err)
{
    if (*i + 1 >= argc)
        return status_set(err, KILN_INVALID, "%s needs a value", argv[*i]);
    *out = argv[++*i];
    return KILN_OK;
}

/* ------------------------------------------------------------------ tables */

typedef struct jobs_table_req {
    mr_job *job;
    const char *data_dir;
    const char *canon;
} jobs_table_req;

/* Rank 0: "0" for no such table, else "1" and the schema record. */
static kiln_status
jobs_table_produce(void *arg, kbuf *out, kiln_err *err)
{
    jobs_table_req *r = arg;
    kiln_table *t = NULL;
    kiln_err terr;
    status_clear(&terr);
    kiln_status s = table_open(r->data_dir, r->canon, &t, &terr);
    if (s == KILN_NOT_FOUND) {
        buf_append_u8(out, '0');
        return KILN_OK;
    }
    if (s != KILN_OK)
        return status_set(err, s, "%s", terr.msg);
    buf_append_u8(out, '1');
    schema_encode(table_schema(t), out);
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", table_dir(t), TABLE_SCHEMA_FILE) < (int)sizeof path)
        mr_job_require_file(r->job, path);
    table_close(t);
    return KILN_OK;
}

kiln_status
jobs_table_read(mr_job *job, const char *data_dir, const char *canon, kiln_schema *out,
                int *exists, kiln_err *err)
{
    jobs_table_req req = {job, data_dir, canon};
    kbuf got = KBUF_INIT;
    char what[SCHEMA_NAME_MAX + 16];
    snprintf(what, sizeof what, "table %s", canon);
    schema_init(out);
    kiln_status s = mr_job_shared(job, what, jobs_table_produce, &req, &got, err);
    *exists = 0;
    if (s == KILN_OK && got.len > 1 && got.data[0] == '1') {
        s = schema_decode(got.data + 1, got.len - 1, what, out, NULL, err);
        *exists = s == KILN_OK;
    }
    buf_free(&got);
    return s;
}
