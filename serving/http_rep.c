/* http_rep.c -- content negotiation and the cell set writers of http_rep.h,
 * with the XML and protobuf helpers the other messages use.
 *
 * Protobuf wire format: a field is a varint key (field << 3 | wire type:
 * 0 varint, 1 fixed64, 2 length-delimited) then its value. A nested
 * message is written into scratch first, so its length is known.
 */
#include "serving/http_rep.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "storage/base/coding.h"
#include "storage/query/json.h"

http_rep
http_rep_from_accept(kslice accept)
{
    if (accept.n == 0 || http_accepts(accept, "application/json"))
        return HTTP_REP_JSON;
    if (http_accepts(accept, "application/x-protobuf") ||
        http_accepts(accept, "application/protobuf"))
        return HTTP_REP_PB;
    if (http_accepts(accept, "text/xml") || http_accepts(accept, "application/xml"))
        return HTTP_REP_XML;
    if (http_accepts(accept, "application/octet-stream"))
        return HTTP_REP_RAW;
    return HTTP_REP_JSON;
}

http_rep
http_rep_from_content_type(kslice type)
{
    return type.n == 0 ? HTTP_REP_JSON : http_rep_from_accept(type);
}

const char *
http_rep_mime(http_rep r)
{
    switch (r) {
    case HTTP_REP_XML: return "text/xml";
    case HTTP_REP_PB: return "application/x-protobuf";
    case HTTP_REP_RAW: return "application/octet-stream";
    default: return "application/json";
    }
}

/* ------------------------------------------------------------------ XML */

void
http_rep_xml_decl(kbuf *b)
{
    json_raw(b, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>");
}

void
http_rep_xml_text(kbuf *b, const void *s, size_t n)
{
    const uint8_t *p = s;
    for (size_t i = 0; i < n; i++) {
        switch (p[i]) {
        case '&': json_raw(b, "&amp;"); break;
        case '<': json_raw(b, "&lt;"); break;
        case '>': json_raw(b, "&gt;"); break;
        case '"': json_raw(b, "&quot;"); break;
        case '\'': json_raw(b, "&apos;"); break;
        default:
            /* XML 1.0 has no control characters but tab, CR and LF */
            if (p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
                buf_append_u8(b, '?');
            else
                buf_append_u8(b, p[i]);
        }
    }
}

void
http_rep_xml_attr(kbuf *b, const char *name, const char *value)
{
    buf_append_u8(b, ' ');
    json_raw(b, name);
    json_raw(b, "=\"");
    http_rep_xml_text(b, value, strlen(value));
    buf_append_u8(b, '"');
}

void
http_rep_xml_attr_b64(kbuf *b, const char *name, const uint8_t *p, size_t n)
{
    buf_append_u8(b, ' ');
    json_raw(b, name);
    json_raw(b, "=\"");
    json_b64_append(b, p, n);
    buf_append_u8(b, '"');
}

void
http_rep_xml_attr_i64(kbuf *b, const char *name, int64_t v)
{
    char num[32];
    snprintf(num, sizeof num, "%" PRId64, v);
    http_rep_xml_attr(b, name, num);
}

/* ------------------------------------------------------------------ protobuf */

void
http_rep_pb_varint(kbuf *b, uint32_t field, uint64_t v)
{
    buf_append_varint(b, (uint64_t)field << 3);
    buf_append_varint(b, v);
}

void
http_rep_pb_bytes(kbuf *b, uint32_t field, const void *p, size_t n)
{
    buf_append_varint(b, (uint64_t)field << 3 | 2);
    buf_append_varint(b, n);
    buf_append(b, p, n);
}

void
http_rep_pb_str(kbuf *b, uint32_t field, const char *s)
{
    http_rep_pb_bytes(b, field, s, strlen(s));
}

void
http_rep_pb_double(kbuf *b, uint32_t field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    buf_append_varint(b, (uint64_t)field << 3 | 1);
    for (int i = 0; i < 8; i++)
        buf_append_u8(b, (uint8_t)(bits >> (8 * i)));
}

/* ------------------------------------------------------------------ cell sets */

void
http_cellset_begin(http_cellset *cs, http_rep rep, kbuf *out)
{
    memset(cs, 0, sizeof *cs);
    cs->rep = rep;
    cs->out = out;
    if (rep == HTTP_REP_XML) {
        http_rep_xml_decl(out);
        json_raw(out, "<CellSet>");
    } else if (rep != HTTP_REP_PB) {
        json_raw(out, "{\"Row\":[");
    }
}

void
http_cellset_continue(http_cellset *cs, http_rep rep, kbuf *out, size_t rows)
{
    memset(cs, 0, sizeof *cs);
    cs->rep = rep;
    cs->out = out;
    cs->rows = rows;
}

static void
http_cellset_column(http_cellset *cs, const kiln_cell *c)
{
    buf_reset(&cs->col);
    buf_append(&cs->col, c->family, c->family_len);
    buf_append_u8(&cs->col, ':');
    buf_append(&cs->col, c->qualifier, c->qualifier_len);
}

void
http_cellset_row(http_cellset *cs, kslice key, const kiln_cell *cells, size_t n)
{
    kbuf *b = cs->out;
    if (cs->rep == HTTP_REP_PB) {
        buf_reset(&cs->row);
        http_rep_pb_bytes(&cs->row, 1, key.p, key.n);
        for (size_t i = 0; i < n; i++) {
            http_cellset_column(cs, &cells[i]);
            buf_reset(&cs->cell);
            http_rep_pb_bytes(&cs->cell, 2, cs->col.data, cs->col.len);
            http_rep_pb_varint(&cs->cell, 3, (uint64_t)cells[i].ts);
            http_rep_pb_bytes(&cs->cell, 4, cells[i].value, cells[i].value_len);
            http_rep_pb_bytes(&cs->row, 2, cs->cell.data, cs->cell.len);
        }
        http_rep_pb_bytes(b, 1, cs->row.data, cs->row.len);
        cs->rows++;
        return;
    }
    if (cs->rep == HTTP_REP_XML) {
        json_raw(b, "<Row");
        http_rep_xml_attr_b64(b, "key", key.p, key.n);
        buf_append_u8(b, '>');
        for (size_t i = 0; i < n; i++) {
            http_cellset_column(cs, &cells[i]);
            json_raw(b, "<Cell");
            http_rep_xml_attr_b64(b, "column", cs->col.data, cs->col.len);
            http_rep_xml_attr_i64(b, "timestamp", cells[i].ts);
            buf_append_u8(b, '>');
            json_b64_append(b, cells[i].value, cells[i].value_len);
            json_raw(b, "</Cell>");
        }
        json_raw(b, "</Row>");
        cs->rows++;
        return;
    }
    json_raw(b, cs->rows++ ? ",{\"key\":\"" : "{\"key\":\"");
    json_b64_append(b, key.p, key.n);
    json_raw(b, "\",\"Cell\":[");
    for (size_t i = 0; i < n; i++) {
        http_cellset_column(cs, &cells[i]);
        json_raw(b, i ? ",{\"column\":\"" : "{\"column\":\"");
        json_b64_append(b, cs->col.data, cs->col.len);
        json_raw(b, "\",\"timestamp\":");
        json_i64(b, cells[i].ts);
        json_raw(b, ",\"$\":\"");
        json_b64_append(b, cells[i].value, cells[i].value_len);
        json_raw(b, "\"}");
    }
    json_raw(b, "]}");
}

void
http_cellset_end(http_cellset *cs, const kslice *next)
{
    kbuf *b = cs->out;
    if (cs->rep == HTTP_REP_PB)
        return;
    if (cs->rep == HTTP_REP_XML) {
        if (next != NULL) {
            json_raw(b, "<next_startrow>");
            json_b64_append(b, next->p, next->n);
            json_raw(b, "</next_startrow>");
        }
        json_raw(b, "</CellSet>\n");
        return;
    }
    json_raw(b, "]");
    if (next != NULL) {
        json_raw(b, ",\"next_startrow\":\"");
        json_b64_append(b, next->p, next->n);
        json_raw(b, "\"");
    }
    json_raw(b, "}\n");
}

void
http_cellset_free(http_cellset *cs)
{
    buf_free(&cs->row);
    buf_free(&cs->cell);
    buf_free(&cs->col);
}
