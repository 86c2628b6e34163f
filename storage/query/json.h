/* json.h -- the JSON the HTTP API writes and its client reads: base64 (HBase
 * REST carries every byte string as base64), escaped JSON strings, and a
 * small parser into a read-only tree for responses.
 *
 * The parser accepts RFC 8259 JSON (any nesting up to JSON_DEPTH_MAX) and
 * builds a json_doc: a flat array of nodes that owns copies of the decoded
 * strings. Nodes are valid until json_doc_free. Writers append to a kbuf.
 *
 * Thread-safety: a json_doc may be read by many threads; functions are
 * otherwise stateless.
 */
#ifndef KILN_JSON_H
#define KILN_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"

#define JSON_DEPTH_MAX 64

/* ------------------------------------------------------------------ writing */

/* Append the base64 (RFC 4648, padded) of p[0..n). */
void json_b64_append(kbuf *out, const uint8_t *p, size_t n);
/* Bytes json_b64_append writes for n input bytes. */
static inline size_t
json_b64_len(size_t n)
{
    return (n + 2) / 3 * 4;
}
/* Decode base64 (padded or not) and append to out. 0, or -1 if malformed. */
int json_b64_decode(const char *s, size_t n, kbuf *out);

/* Append s as a quoted JSON string (control bytes, '"' and '\\' escaped;
 * other bytes as they are). */
void json_str_append(kbuf *out, const void *s, size_t n);
/* Append a C string literally (no quoting). */
static inline void
json_raw(kbuf *out, const char *s)
{
    buf_append(out, s, strlen(s));   /* inline: a literal's length is known */
}
/* Append a signed / unsigned decimal. */
void json_i64(kbuf *out, int64_t v);
void json_u64(kbuf *out, uint64_t v);

/* ------------------------------------------------------------------ reading */

typedef enum json_type {
    JSON_NULL = 0,
    JSON_FALSE,
    JSON_TRUE,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT
} json_type;

typedef struct json_doc json_doc;
typedef struct json_node json_node;

/* Parse text (one JSON value with optional whitespace around it).
 * KILN_CORRUPTION naming the byte offset for malformed input. */
kiln_status json_parse(const char *text, size_t n, json_doc **out, kiln_err *err);
void json_doc_free(json_doc *d);   /* d may be NULL */

const json_node *json_root(const json_doc *d);
json_type json_node_type(const json_node *v);
/* Member `key` of an object, or NULL (also when v is NULL or not an object). */
const json_node *json_get(const json_node *v, const char *key);
/* Elements of an array (members of an object): the count, and the i-th. */
size_t json_len(const json_node *v);
const json_node *json_at(const json_node *v, size_t i);
/* The member name of an object's member ("" for other nodes). */
const char *json_key(const json_node *v);
/* A string's bytes (NUL-terminated copy; *n may be NULL). NULL if not a string. */
const char *json_str(const json_node *v, size_t *n);
/* A number as int64 (integral values only). 0, or -1 if not one. */
int json_int(const json_node *v, int64_t *out);
/* A number as a double. 0, or -1. */
int json_num(const json_node *v, double *out);

#endif
