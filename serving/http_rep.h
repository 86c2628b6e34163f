/* http_rep.h -- the representations of HBase REST's messages: JSON, XML and
 * protobuf (application/x-protobuf, HBase's .proto messages written by hand
 * with storage/coding.h's varints), and raw bytes for one cell.
 *
 * A cell set is written row by row (http_cellset_*). The field names and
 * nesting are HBase's:
 *   JSON  {"Row":[{"key":B64,"Cell":[{"column":B64,"timestamp":N,"$":B64}]}]}
 *   XML   <CellSet><Row key="B64"><Cell column="B64" timestamp="N">B64</Cell></Row></CellSet>
 *   PB    CellSet { repeated Row rows = 1 }  Row { bytes key = 1; repeated Cell values = 2 }
 *         Cell { bytes row = 1; bytes column = 2; int64 timestamp = 3; bytes data = 4 }
 * Protobuf fields used by the other messages are listed beside their writers
 * in http_rep.c and in tests/serving/hbase_rest.proto.
 *
 * Thread-safety: stateless; a writer belongs to one request.
 */
#ifndef KILN_HTTP_REP_H
#define KILN_HTTP_REP_H

#include <stddef.h>
#include <stdint.h>

#include "storage/base/buf.h"
#include "storage/hfile/cell.h"
#include "storage/store/store_view.h"
#include "serving/http.h"

typedef enum http_rep {
    HTTP_REP_JSON,
    HTTP_REP_XML,
    HTTP_REP_PB,
    HTTP_REP_RAW
} http_rep;

/* The representation an Accept header asks for (JSON when none matches). */
http_rep http_rep_from_accept(kslice accept);
/* The representation of a request body's Content-Type (JSON when absent). */
http_rep http_rep_from_content_type(kslice type);
const char *http_rep_mime(http_rep r);

/* ------------------------------------------------------------------ cell sets */
typedef struct http_cellset {
    http_rep rep;
    kbuf *out;
    kbuf row, cell, col;      /* protobuf scratch: a row and a cell message */
    size_t rows;
} http_cellset;

void http_cellset_begin(http_cellset *cs, http_rep rep, kbuf *out);
/* Go on with a set begun earlier whose first `rows` rows are in out. */
void http_cellset_continue(http_cellset *cs, http_rep rep, kbuf *out, size_t rows);
/* One row with the cells given (key: the row's key). */
void http_cellset_row(http_cellset *cs, kslice key, const kiln_cell *cells, size_t n);
/* Close the set; next (Kiln's paging extension, JSON and XML only) may be NULL. */
void http_cellset_end(http_cellset *cs, const kslice *next);
void http_cellset_free(http_cellset *cs);

/* ------------------------------------------------------------------ helpers */
/* XML: the declaration HBase writes before every document. */
void http_rep_xml_decl(kbuf *b);
/* XML: s escaped for an attribute value or text (&, <, >, ", '). */
void http_rep_xml_text(kbuf *b, const void *s, size_t n);
/* XML: ` name="value"` with value escaped. */
void http_rep_xml_attr(kbuf *b, const char *name, const char *value);
void http_rep_xml_attr_b64(kbuf *b, const char *name, const uint8_t *p, size_t n);
void http_rep_xml_attr_i64(kbuf *b, const char *name, int64_t v);

/* Protobuf: a varint field, a length-delimited field, a string field, a
 * double (fixed64) field. */
void http_rep_pb_varint(kbuf *b, uint32_t field, uint64_t v);
void http_rep_pb_bytes(kbuf *b, uint32_t field, const void *p, size_t n);
void http_rep_pb_str(kbuf *b, uint32_t field, const char *s);
void http_rep_pb_double(kbuf *b, uint32_t field, double v);

#endif
