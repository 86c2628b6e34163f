/* mr_conf.h -- a job's `-D key=value` settings.
 *
 * Keys and values are strings; typed getters parse on read and report a bad
 * value as KILN_INVALID naming the key ("kiln.sort.mb: not a number: 'x'").
 * A later set of the same key replaces the earlier one (the last -D wins, as
 * in Hadoop). Every get marks the key used, so the engine can warn about keys
 * nobody read (usually a typo).
 *
 * Ownership: the conf copies every string it is given. Thread-safety: one
 * thread at a time.
 */
#ifndef KILN_MR_CONF_H
#define KILN_MR_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/status.h"

typedef struct mr_conf mr_conf;

mr_conf *mr_conf_new(void);
void mr_conf_free(mr_conf *c);   /* c may be NULL */

/* Set key to value (copies both). */
void mr_conf_set(mr_conf *c, const char *key, const char *value);

/* Parse "key=value" and set it. KILN_INVALID without '=' or with an empty key. */
kiln_status mr_conf_parse(mr_conf *c, const char *kv, kiln_err *err);

/* The value of key, or def when unset. The string lives as long as the conf
 * or until key is set again. */
const char *mr_conf_get(mr_conf *c, const char *key, const char *def);

/* 1 if key is set. Does not mark it used. */
int mr_conf_has(const mr_conf *c, const char *key);

/* Integer (decimal, optional sign). KILN_INVALID if not an integer. */
kiln_status mr_conf_get_long(mr_conf *c, const char *key, int64_t def, int64_t *out,
                             kiln_err *err);
/* Floating point. KILN_INVALID if not a number. */
kiln_status mr_conf_get_double(mr_conf *c, const char *key, double def, double *out,
                               kiln_err *err);
/* true/false, yes/no, 1/0, on/off (case-insensitive). KILN_INVALID otherwise. */
kiln_status mr_conf_get_bool(mr_conf *c, const char *key, int def, int *out, kiln_err *err);

/* Iterate the entries in insertion order: i from 0 while it returns 1. */
int mr_conf_entry(const mr_conf *c, size_t i, const char **key, const char **value, int *used);

#endif
