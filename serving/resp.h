/* resp.h -- the Redis serialization protocol (RESP2) as the server speaks
 * it: a zero-copy parser for commands (multibulk arrays of bulk strings, and
 * inline commands typed by hand) and writers for the replies.
 *
 * resp_parse works on the bytes received so far and reports a command only
 * when it is complete; its arguments borrow from the caller's buffer. Errors
 * are protocol errors after which the connection is closed, as Redis does.
 *
 * Thread-safety: stateless functions.
 */
#ifndef KILN_RESP_H
#define KILN_RESP_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"

#define RESP_ARGS_MAX_DEFAULT 4096

typedef enum resp_parse_result {
    RESP_INCOMPLETE = 0,
    RESP_COMMAND = 1,         /* *argc arguments in argv; *consumed bytes used */
    RESP_EMPTY = 2,           /* an empty line or "*0": *consumed bytes to skip */
    RESP_ERROR = -1           /* *why says what ("Protocol error: ...") */
} resp_parse_result;

/* Parse one command from p[0..n). argv has room for max_args entries; a
 * bulk string longer than max_bulk or a command with more arguments is an
 * error. */
resp_parse_result resp_parse(const uint8_t *p, size_t n, kslice *argv, size_t max_args,
                             size_t max_bulk, size_t *argc, size_t *consumed,
                             const char **why);

/* Case-insensitive: does the argument equal the command name `name`? */
int resp_arg_is(kslice arg, const char *name);

/* Replies appended to out. */
void resp_add_simple(kbuf *out, const char *s);           /* "+s\r\n" */
void resp_add_error(kbuf *out, const char *msg);          /* "-msg\r\n" (CR/LF dropped) */
void resp_add_int(kbuf *out, int64_t v);                  /* ":v\r\n" */
void resp_add_bulk(kbuf *out, const void *p, size_t n);   /* "$n\r\n...\r\n" */
void resp_add_nil(kbuf *out);                             /* "$-1\r\n" */
void resp_add_array(kbuf *out, size_t n);                 /* "*n\r\n" */

#endif
