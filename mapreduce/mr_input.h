/* mr_input.h -- input files, byte-range splits and the line record reader.
 *
 * Listing: each input path is a file or a directory walked recursively; in a
 * directory, names starting with '_' or '.' are skipped (Hadoop's hidden-file
 * rule, so a job's own output with _SUCCESS can be read back), and files are
 * taken in byte order of their paths. A name ending in ".gz" is gzip.
 *
 * Splits: the files, end to end, form one byte space that is cut into one
 * contiguous range per rank; a rank's range becomes one split per file piece.
 * A gzip file cannot be split: it goes whole to the rank whose range holds its
 * middle byte.
 *
 * Records (Hadoop TextInputFormat): a line starts at offset 0 or after a '\n'.
 * A split [start, end) owns the lines whose first byte p satisfies
 * start < p <= end, plus the line at 0 when start is 0 -- so a line is read by
 * exactly one split whatever the cut, and it is read whole even when it runs
 * past `end`. The '\n' is not part of the record, nor one '\r' before it
 * (CRLF files); a last line without '\n' is a record (less one '\r' at its
 * end); an empty line is an empty record. Splits of a gzip file are always
 * the whole file.
 *
 * Thread-safety: a reader is single-threaded; the file table is immutable.
 */
#ifndef KILN_MR_INPUT_H
#define KILN_MR_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/base/status.h"

typedef struct mr_input_file {
    char *path;
    uint64_t size;           /* bytes on disk */
    int gzip;
} mr_input_file;

typedef struct mr_input {
    mr_input_file *files;
    size_t n;
    uint64_t total;          /* sum of sizes */
} mr_input;

/* List paths[0..n) into in (appends). KILN_NOT_FOUND for a missing path;
 * KILN_INVALID for something that is neither a file nor a directory. */
kiln_status mr_input_list(mr_input *in, const char *const *paths, size_t n, kiln_err *err);
void mr_input_free(mr_input *in);   /* frees the contents; in may be NULL */

/* Serialize the table (to send it to the other ranks) and read it back. */
void mr_input_encode(const mr_input *in, kbuf *out);
kiln_status mr_input_decode(mr_input *in, const uint8_t *p, size_t n, kiln_err *err);

typedef struct mr_split {
    uint32_t file;           /* index in the file table */
    uint64_t start;
    uint64_t end;
} mr_split;

/* The splits of `rank` out of `nranks`, in file order. *out is malloc'd
 * (free it); returns the count (may be 0). */
size_t mr_input_splits(const mr_input *in, int nranks, int rank, mr_split **out);

/* The same splits cut into pieces of about `grain` bytes each (a split
 * shorter than 1.5 grains stays whole, a gzip file always does), in file
 * order: the units ranks on one host share their map input in (mr_steal.h).
 * Together they cover exactly the rank's splits. grain 0 means no cutting. */
size_t mr_input_pieces(const mr_input *in, int nranks, int rank, uint64_t grain,
                       mr_split **out);

/* Sample positions: `points` positions spread evenly over the byte space of
 * in (independent of the rank count). For each, *file and *offset; a split
 * [offset, size) read from there yields the first whole line after it. */
void mr_input_sample_point(const mr_input *in, size_t i, size_t points, uint32_t *file,
                           uint64_t *offset);

#endif
