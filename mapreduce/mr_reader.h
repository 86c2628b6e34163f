/* mr_reader.h -- the line record reader (Hadoop TextInputFormat semantics).
 *
 * A split [start, end) of a file owns the lines whose first byte p satisfies
 * start < p <= end, plus the line at 0 when start is 0 (see mr_input.h); the
 * '\n' is not part of a record, nor one '\r' before it; a last line without
 * '\n' is a record; a gzip file is read whole, decompressed as it goes
 * (concatenated members included).
 *
 * Memory: one buffer of `chunk` bytes (plus the longest line), one input
 * chunk for gzip. Thread-safety: a reader is single-threaded.
 */
#ifndef KILN_MR_READER_H
#define KILN_MR_READER_H

#include <stddef.h>
#include <stdint.h>

#include "mapreduce/mr_input.h"
#include "storage/base/buf.h"
#include "storage/base/status.h"

typedef struct mr_reader mr_reader;

/* Open a reader of split s of file f, reading `chunk` bytes at a time
 * (0 = 1 MiB). KILN_NOT_FOUND / KILN_IO naming the file. */
kiln_status mr_reader_open(const mr_input_file *f, const mr_split *s, size_t chunk,
                           mr_reader **out, kiln_err *err);
void mr_reader_close(mr_reader *r);   /* r may be NULL */

/* The same, passing the read buffer from one reader to the next: open takes
 * *buf's memory (leaving it empty) and close gives the reader's back to it,
 * so a rank mapping many pieces allocates one buffer. buf is freed by its
 * owner. */
kiln_status mr_reader_open_buf(const mr_input_file *f, const mr_split *s, size_t chunk, kbuf *buf,
                               mr_reader **out, kiln_err *err);
void mr_reader_close_buf(mr_reader *r, kbuf *buf);

/* Next record: 1 with *line (valid until the next call) and *offset (of the
 * line's first byte in the file, uncompressed for gzip), 0 at the end of the
 * split, -1 on error (KILN_IO; KILN_CORRUPTION for a bad or truncated gzip
 * stream, naming the file). */
int mr_reader_next(mr_reader *r, kslice *line, uint64_t *offset, kiln_err *err);

/* Lines longer than max bytes (default: unbounded) are not records: the
 * reader skips them without holding them in memory, counts them and notes
 * the offset of the first. */
void mr_reader_set_max_line(mr_reader *r, size_t max);
/* Lines skipped for their length so far; *first_offset (may be NULL) the
 * offset of the first. */
uint64_t mr_reader_skipped(const mr_reader *r, uint64_t *first_offset);

/* 1-based line number in the file of the record last returned. Counts the
 * lines before the split on first use (reads the file up to it), so it is
 * meant for error reports. */
kiln_status mr_reader_line_number(mr_reader *r, uint64_t *line, kiln_err *err);

/* Bytes of the split consumed so far (compressed bytes for gzip), for
 * progress; equals end - start once the split is done. */
uint64_t mr_reader_progress(const mr_reader *r);
/* Bytes read from disk so far. */
uint64_t mr_reader_bytes_read(const mr_reader *r);

#endif
