/* iter.c -- the out-of-line parts of the internal iterator interface: the
 * sticky status handed to a caller's error record, and the helpers an
 * implementation uses to start and to fail.
 */
#include "storage/hfile/iter.h"

void
kiln_iter_init(kiln_iter *it, const kiln_iter_ops *ops)
{
    it->ops = ops;
    kiln_iter_restart(it);
}

kiln_status
kiln_iter_status(const kiln_iter *it, kiln_err *err)
{
    if (it->err.code == KILN_OK)
        return KILN_OK;
    if (err != NULL && err->code == KILN_OK) {
        if (it->err.msg[0] != '\0')
            *err = it->err;
        else
            status_set(err, it->err.code, "iterator: %s", status_name(it->err.code));
    }
    return it->err.code;
}

kiln_status
kiln_iter_fail(kiln_iter *it, const kiln_err *from)
{
    it->cur = NULL;
    if (it->err.code == KILN_OK) {
        it->err = *from;
        if (it->err.code == KILN_OK)
            it->err.code = KILN_INTERNAL;   /* a failure reported without a code */
    }
    return it->err.code;
}
