/* http_admin.c -- the routes about tables rather than their rows: the table
 * list, /version, /version/cluster, /status/cluster, namespaces, schema,
 * regions and /healthz, each in HBase REST's JSON, XML and protobuf.
 *
 * Protobuf messages written here (field numbers of HBase REST's .proto):
 *   TableList     { repeated string name = 1 }
 *   Version       { string restVersion = 1; jvmVersion = 2; osVersion = 3;
 *                   serverVersion = 4; jerseyVersion = 5 }
 *   Namespaces    { repeated string namespace = 1 }
 *   TableSchema   { string name = 1; repeated Attribute attrs = 2;
 *                   repeated ColumnSchema columns = 3; bool inMemory = 4;
 *                   bool readOnly = 5 }  Attribute { name = 1; value = 2 }
 *   ColumnSchema  { string name = 1; repeated Attribute attrs = 2;
 *                   int32 ttl = 3; int32 maxVersions = 4; string compression = 5 }
 *   TableInfo     { string name = 1; repeated Region regions = 2 }
 *                 Region { string name = 1; bytes startKey = 2; bytes endKey = 3;
 *                          int64 id = 4; string location = 5 }
 *   StorageClusterStatus { repeated Node liveNodes = 1; repeated string deadNodes = 2;
 *                   int32 regions = 3; int64 requests = 4; double averageLoad = 5 }
 *                 Node { string name = 1; int64 startCode = 2; int64 requests = 3;
 *                        int32 heapSizeMB = 4; int32 maxHeapSizeMB = 5;
 *                        repeated Region regions = 6 }
 *                 Region { bytes name = 1; int32 stores = 2; int32 storefiles = 3;
 *                          int32 storefileSizeMB = 4 }
 */
#include "serving/http_admin.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "storage/query/json.h"
#include "storage/store/schema.h"

/* The name a client sees: "t" for "default:t" (HBase's convention). */
static const char *
http_admin_display(const char *canon)
{
    return strncmp(canon, "default:", 8) == 0 ? canon + 8 : canon;
}

/* HBase's region name, "table,startKey,id" (the table as listed, the start
 * key printed as HBase's Bytes.toStringBinary), into out. */
static void
http_admin_region_name(kbuf *out, const char *tname, kslice start, size_t id)
{
    buf_reset(out);
    buf_append(out, tname, strlen(tname));
    buf_append_u8(out, ',');
    cell_to_string_binary(out, start.p, start.n);
    char idt[32];
    int n = snprintf(idt, sizeof idt, ",%zu", id);
    buf_append(out, idt, (size_t)n);
}

static void
http_admin_table_list(http_api *a, http_api_reply *out, const char *ns, size_t nslen)
{
    kbuf *b = &a->body;
    out->content_type = http_rep_mime(a->rq.rep);
    if (a->rq.rep == HTTP_REP_XML) {
        http_rep_xml_decl(b);
        json_raw(b, "<TableList>");
    } else if (a->rq.rep != HTTP_REP_PB) {
        json_raw(b, "{\"table\":[");
    }
    size_t shown = 0;
    for (size_t i = 0; i < views_reader_count(a->reader); i++) {
        const char *canon = views_entry_name(views_reader_at(a->reader, i));
        if (ns != NULL && (strncmp(canon, ns, nslen) != 0 || canon[nslen] != ':'))
            continue;
        const char *name = http_admin_display(canon);
        if (a->rq.rep == HTTP_REP_PB) {
            http_rep_pb_str(b, 1, name);
        } else if (a->rq.rep == HTTP_REP_XML) {
            json_raw(b, "<table");
            http_rep_xml_attr(b, "name", name);
            json_raw(b, "/>");
        } else {
            json_raw(b, shown ? ",{\"name\":" : "{\"name\":");
            json_str_append(b, name, strlen(name));
            json_raw(b, "}");
        }
        shown++;
    }
    if (a->rq.rep == HTTP_REP_XML)
        json_raw(b, "</TableList>\n");
    else if (a->rq.rep != HTTP_REP_PB)
        json_raw(b, "]}\n");
}

void
http_admin_tables(http_api *a, http_api_reply *out)
{
    http_admin_table_list(a, out, NULL, 0);
}

void
http_admin_version(http_api *a, http_api_reply *out)
{
    struct utsname u;
    char os[256] = "unknown";
    if (uname(&u) == 0)
        snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
    const char *server = "kiln-server/" KILN_VERSION;
    kbuf *b = &a->body;
    out->content_type = http_rep_mime(a->rq.rep);
    if (a->rq.rep == HTTP_REP_PB) {
        http_rep_pb_str(b, 1, "0.0.3");
        http_rep_pb_str(b, 3, os);
        http_rep_pb_str(b, 4, server);
    } else if (a->rq.rep == HTTP_REP_XML) {
        http_rep_xml_decl(b);
        json_raw(b, "<Version");
        http_rep_xml_attr(b, "REST", "0.0.3");
        http_rep_xml_attr(b, "OS", os);
        http_rep_xml_attr(b, "Server", server);
        json_raw(b, "/>\n");
    } else {
        json_raw(b, "{\"REST\":\"0.0.3\",\"Server\":\"kiln-server/" KILN_VERSION
                    "\",\"Kiln\":\"" KILN_VERSION "\",\"OS\":");
        json_str_append(b, os, strlen(os));
        json_raw(b, "}\n");
    }
}

void
http_admin_version_cluster(http_api *a, http_api_reply *out)
{
    kbuf *b = &a->body;
    if (a->rq.rep == HTTP_REP_XML) {
        out->content_type = "text/xml";
        http_rep_xml_decl(b);
        json_raw(b, "<ClusterVersion Version=\"" KILN_VERSION "\"/>\n");
    } else if (a->rq.rep == HTTP_REP_JSON) {
        json_raw(b, "{\"Version\":\"" KILN_VERSION "\"}\n");
    } else {   /* HBase answers other types with the bare text */
        out->content_type = "text/plain";
        json_raw(b, KILN_VERSION);
    }
}

void
http_admin_status_cluster(http_api *a, http_api_reply *out)
{
    kbuf *b = &a->body;
    http_rep rep = a->rq.rep == HTTP_REP_RAW ? HTTP_REP_JSON : a->rq.rep;
    out->content_type = http_rep_mime(rep);
    size_t regions = 0;
    for (size_t i = 0; i < views_reader_count(a->reader); i++)
        regions += store_view_region_count(views_entry_view(views_reader_at(a->reader, i)));
    int64_t requests = 0;
    if (rep == HTTP_REP_PB) {
        kbuf *node = &a->tmp, *reg = &a->tmp2, name = KBUF_INIT;
        buf_reset(node);
        http_rep_pb_str(node, 1, a->env->listen);
        http_rep_pb_varint(node, 2, (uint64_t)a->env->started_ms);
        for (size_t i = 0; i < views_reader_count(a->reader); i++) {
            views_entry *e = views_reader_at(a->reader, i);
            store_view *v = views_entry_view(e);
            for (size_t r = 0; r < store_view_region_count(v); r++) {
                size_t files;
                uint64_t bytes = store_view_region_bytes(v, r, &files);
                http_admin_region_name(&name, http_admin_display(views_entry_name(e)),
                                       store_view_region_start(v, r), r);
                buf_reset(reg);
                http_rep_pb_bytes(reg, 1, name.data, name.len);
                http_rep_pb_varint(reg, 2, views_entry_schema(e)->family_count);
                http_rep_pb_varint(reg, 3, files);
                http_rep_pb_varint(reg, 4, bytes >> 20);
                http_rep_pb_bytes(node, 6, reg->data, reg->len);
            }
        }
        http_rep_pb_bytes(b, 1, node->data, node->len);
        buf_free(&name);
        http_rep_pb_varint(b, 3, regions);
        http_rep_pb_varint(b, 4, (uint64_t)requests);
        http_rep_pb_double(b, 5, (double)regions);
        return;
    }
    int xml = rep == HTTP_REP_XML;
    char num[64];
    if (xml) {
        http_rep_xml_decl(b);
        json_raw(b, "<ClusterStatus");
        http_rep_xml_attr_i64(b, "regions", (int64_t)regions);
        http_rep_xml_attr_i64(b, "requests", requests);
        snprintf(num, sizeof num, "%zu.0", regions);
        http_rep_xml_attr(b, "averageLoad", num);
        json_raw(b, "><LiveNodes><Node");
        http_rep_xml_attr(b, "name", a->env->listen);
        http_rep_xml_attr_i64(b, "startCode", a->env->started_ms);
        json_raw(b, ">");
    } else {
        json_raw(b, "{\"regions\":");
        json_u64(b, regions);
        json_raw(b, ",\"requests\":0,\"averageLoad\":");
        json_u64(b, regions);
        json_raw(b, ",\"LiveNodes\":[{\"name\":");
        json_str_append(b, a->env->listen, strlen(a->env->listen));
        json_raw(b, ",\"startCode\":");
        json_i64(b, a->env->started_ms);
        json_raw(b, ",\"Region\":[");
    }
    size_t shown = 0;
    for (size_t i = 0; i < views_reader_count(a->reader); i++) {
        views_entry *e = views_reader_at(a->reader, i);
        store_view *v = views_entry_view(e);
        for (size_t r = 0; r < store_view_region_count(v); r++) {
            size_t files;
            uint64_t bytes = store_view_region_bytes(v, r, &files);
            http_admin_region_name(&a->tmp, http_admin_display(views_entry_name(e)),
                                   store_view_region_start(v, r), r);
            const uint8_t *name = a->tmp.data;
            size_t n = a->tmp.len;
            if (xml) {
                json_raw(b, "<Region");
                http_rep_xml_attr_b64(b, "name", name, n);
                http_rep_xml_attr_i64(b, "stores", (int64_t)views_entry_schema(e)->family_count);
                http_rep_xml_attr_i64(b, "storefiles", (int64_t)files);
                http_rep_xml_attr_i64(b, "storefileSizeMB", (int64_t)(bytes >> 20));
                json_raw(b, "/>");
            } else {
                json_raw(b, shown ? ",{\"name\":\"" : "{\"name\":\"");
                json_b64_append(b, name, n);
                json_raw(b, "\",\"stores\":");
                json_u64(b, views_entry_schema(e)->family_count);
                json_raw(b, ",\"storefiles\":");
                json_u64(b, files);
                json_raw(b, ",\"storefileSizeMB\":");
                json_u64(b, bytes >> 20);
                json_raw(b, "}");
            }
            shown++;
        }
    }
    json_raw(b, xml ? "</Node></LiveNodes><DeadNodes/></ClusterStatus>\n"
                    : "]}],\"DeadNodes\":[]}\n");
}

/* The namespaces of the tables served, sorted (entries are in name order). */
void
http_admin_namespaces(http_api *a, http_api_reply *out)
{
    kbuf *b = &a->body;
    http_req *q = &a->rq;
    if (q->route != HR_NAMESPACES) {
        int found = 0;
        for (size_t i = 0; i < views_reader_count(a->reader) && !found; i++) {
            const char *canon = views_entry_name(views_reader_at(a->reader, i));
            found = strncmp(canon, (const char *)q->name.p, q->name.n) == 0 &&
                    canon[q->name.n] == ':';
        }
        if (!found) {
            http_handler_fail(a, out, 404, "no_namespace", "namespace %.*s: not found",
                              (int)(q->name.n > 200 ? 200 : q->name.n), (const char *)q->name.p);
            return;
        }
        if (q->route == HR_NAMESPACE_TABLES) {
            http_admin_table_list(a, out, (const char *)q->name.p, q->name.n);
            return;
        }
        /* NamespacesInstance: the namespace's properties (Kiln keeps none) */
        out->content_type = http_rep_mime(q->rep == HTTP_REP_XML ? HTTP_REP_XML
                                          : q->rep == HTTP_REP_PB ? HTTP_REP_PB
                                                                   : HTTP_REP_JSON);
        if (q->rep == HTTP_REP_XML) {
            http_rep_xml_decl(b);
            json_raw(b, "<NamespaceProperties/>\n");
        } else if (q->rep != HTTP_REP_PB) {
            json_raw(b, "{}\n");
        }
        return;
    }
    http_rep rep = q->rep == HTTP_REP_RAW ? HTTP_REP_JSON : q->rep;
    out->content_type = http_rep_mime(rep);
    if (rep == HTTP_REP_XML) {
        http_rep_xml_decl(b);
        json_raw(b, "<Namespaces>");
    } else if (rep == HTTP_REP_JSON) {
        json_raw(b, "{\"Namespace\":[");
    }
    char last[SCHEMA_NAME_MAX + 1] = "";
    size_t shown = 0;
    for (size_t i = 0; i < views_reader_count(a->reader); i++) {
        char ns[SCHEMA_NAME_MAX + 1], t[SCHEMA_NAME_MAX + 1];
        schema_name_split(views_entry_name(views_reader_at(a->reader, i)), ns, t);
        if (shown > 0 && strcmp(ns, last) == 0)
            continue;
        snprintf(last, sizeof last, "%s", ns);
        if (rep == HTTP_REP_PB) {
            http_rep_pb_str(b, 1, ns);
        } else if (rep == HTTP_REP_XML) {
            json_raw(b, "<Namespace>");
            http_rep_xml_text(b, ns, strlen(ns));
            json_raw(b, "</Namespace>");
        } else {
            if (shown)
                buf_append_u8(b, ',');
            json_str_append(b, ns, strlen(ns));
        }
        shown++;
    }
    if (rep == HTTP_REP_XML)
        json_raw(b, "</Namespaces>\n");
    else if (rep == HTTP_REP_JSON)
        json_raw(b, "]}\n");
}

void
http_admin_healthz(http_api *a, http_api_reply *out)
{
    if (atomic_load(&((http_api_env *)a->env)->draining)) {
        out->status = 503;
        json_raw(&a->body, "{\"status\":\"draining\"}\n");
        return;
    }
    json_raw(&a->body, "{\"status\":\"ok\",\"tables\":");
    json_u64(&a->body, views_reader_count(a->reader));
    json_raw(&a->body, "}\n");
}

/* ------------------------------------------------------------------ schema */

typedef struct http_admin_attr {
    const char *name;
    char value[64];
} http_admin_attr;

static void
http_admin_schema_json_member(kbuf *b, const char *name, const char *value, int comma)
{
    if (comma)
        buf_append_u8(b, ',');
    json_str_append(b, name, strlen(name));
    buf_append_u8(b, ':');
    json_str_append(b, value, strlen(value));
}

void
http_admin_schema(http_api *a, views_entry *e, http_api_reply *out)
{
    const kiln_schema *s = views_entry_schema(e);
    kbuf *b = &a->body;
    http_rep rep = a->rq.rep == HTTP_REP_RAW ? HTTP_REP_JSON : a->rq.rep;
    out->content_type = http_rep_mime(rep);
    const char *name = http_admin_display(s->name);
    http_admin_attr ta[6] = {{"IS_META", "false"}, {"KEEP_VERSIONS", ""}, {"SALT_BUCKETS", ""},
                             {"CREATED", ""},      {"REGIONS", ""},       {"VERSION", ""}};
    snprintf(ta[1].value, sizeof ta[1].value, "%u", s->keep_versions);
    snprintf(ta[2].value, sizeof ta[2].value, "%u", s->salt_buckets);
    snprintf(ta[3].value, sizeof ta[3].value, "%lld", (long long)s->created_ms);
    snprintf(ta[4].value, sizeof ta[4].value, "%zu", schema_region_count(s));
    snprintf(ta[5].value, sizeof ta[5].value, "%" PRIu64, views_entry_version(e));
    if (rep == HTTP_REP_PB) {
        http_rep_pb_str(b, 1, name);
        for (size_t i = 0; i < 6; i++) {
            buf_reset(&a->tmp);
            http_rep_pb_str(&a->tmp, 1, ta[i].name);
            http_rep_pb_str(&a->tmp, 2, ta[i].value);
            http_rep_pb_bytes(b, 2, a->tmp.data, a->tmp.len);
        }
        for (size_t i = 0; i < s->family_count; i++) {
            const schema_family *f = &s->families[i];
            buf_reset(&a->tmp);
            http_rep_pb_str(&a->tmp, 1, f->name);
            buf_reset(&a->tmp2);
            http_rep_pb_str(&a->tmp2, 1, "BLOOMFILTER");
            http_rep_pb_str(&a->tmp2, 2, bloom_type_name(f->bloom));
            http_rep_pb_bytes(&a->tmp, 2, a->tmp2.data, a->tmp2.len);
            http_rep_pb_varint(&a->tmp, 3, (uint64_t)(f->ttl_s > INT32_MAX ? INT32_MAX
                                                                            : f->ttl_s));
            http_rep_pb_varint(&a->tmp, 4, f->max_versions);
            http_rep_pb_str(&a->tmp, 5, compress_codec_name(f->codec));
            http_rep_pb_bytes(b, 3, a->tmp.data, a->tmp.len);
        }
        http_rep_pb_varint(b, 4, 0);
        http_rep_pb_varint(b, 5, 1);   /* the gateway is read-only */
        return;
    }
    if (rep == HTTP_REP_XML) {
        http_rep_xml_decl(b);
        json_raw(b, "<TableSchema");
        http_rep_xml_attr(b, "name", name);
        for (size_t i = 0; i < 6; i++)
            http_rep_xml_attr(b, ta[i].name, ta[i].value);
        json_raw(b, ">");
        for (size_t i = 0; i < s->family_count; i++) {
            const schema_family *f = &s->families[i];
            char num[32];
            json_raw(b, "<ColumnSchema");
            http_rep_xml_attr(b, "name", f->name);
            snprintf(num, sizeof num, "%u", f->max_versions);
            http_rep_xml_attr(b, "VERSIONS", num);
            snprintf(num, sizeof num, "%lld", (long long)f->ttl_s);
            http_rep_xml_attr(b, "TTL", num);
            http_rep_xml_attr(b, "COMPRESSION", compress_codec_name(f->codec));
            http_rep_xml_attr(b, "BLOOMFILTER", bloom_type_name(f->bloom));
            snprintf(num, sizeof num, "%u", f->block_size);
            http_rep_xml_attr(b, "BLOCKSIZE", num);
            json_raw(b, "/>");
        }
        json_raw(b, "</TableSchema>\n");
        return;
    }
    char num[32];
    json_raw(b, "{");
    http_admin_schema_json_member(b, "name", name, 0);
    for (size_t i = 0; i < 6; i++)
        http_admin_schema_json_member(b, ta[i].name, ta[i].value, 1);
    json_raw(b, ",\"ColumnSchema\":[");
    for (size_t i = 0; i < s->family_count; i++) {
        const schema_family *f = &s->families[i];
        json_raw(b, i ? ",{" : "{");
        http_admin_schema_json_member(b, "name", f->name, 0);
        snprintf(num, sizeof num, "%u", f->max_versions);
        http_admin_schema_json_member(b, "VERSIONS", num, 1);
        snprintf(num, sizeof num, "%lld", (long long)f->ttl_s);
        http_admin_schema_json_member(b, "TTL", num, 1);
        http_admin_schema_json_member(b, "COMPRESSION", compress_codec_name(f->codec), 1);
        http_admin_schema_json_member(b, "BLOOMFILTER", bloom_type_name(f->bloom), 1);
        snprintf(num, sizeof num, "%u", f->block_size);
        http_admin_schema_json_member(b, "BLOCKSIZE", num, 1);
        json_raw(b, "}");
    }
    json_raw(b, "],\"Properties\":{");
    for (size_t i = 0; i < s->prop_count; i++)
        http_admin_schema_json_member(b, s->props[i].key, s->props[i].value, i > 0);
    json_raw(b, "}}\n");
}

/* ------------------------------------------------------------------ regions */

void
http_admin_regions(http_api *a, views_entry *e, http_api_reply *out)
{
    store_view *v = views_entry_view(e);
    kbuf *b = &a->body;
    http_rep rep = a->rq.rep == HTTP_REP_RAW ? HTTP_REP_JSON : a->rq.rep;
    out->content_type = http_rep_mime(rep);
    const char *tname = http_admin_display(views_entry_name(e));
    if (rep == HTTP_REP_PB)
        http_rep_pb_str(b, 1, tname);
    else if (rep == HTTP_REP_XML) {
        http_rep_xml_decl(b);
        json_raw(b, "<TableInfo");
        http_rep_xml_attr(b, "name", tname);
        json_raw(b, ">");
    } else {
        json_raw(b, "{\"name\":");
        json_str_append(b, tname, strlen(tname));
        json_raw(b, ",\"version\":");
        json_u64(b, views_entry_version(e));
        json_raw(b, ",\"Region\":[");
    }
    for (size_t i = 0; i < store_view_region_count(v); i++) {
        kslice s = store_view_region_start(v, i), en = store_view_region_end(v, i);
        size_t files;
        uint64_t bytes = store_view_region_bytes(v, i, &files);
        http_admin_region_name(&a->tmp, tname, s, i);
        if (rep == HTTP_REP_PB) {
            buf_reset(&a->tmp2);
            http_rep_pb_bytes(&a->tmp2, 1, a->tmp.data, a->tmp.len);
            http_rep_pb_bytes(&a->tmp2, 2, s.p, s.n);
            http_rep_pb_bytes(&a->tmp2, 3, en.p, en.n);
            http_rep_pb_varint(&a->tmp2, 4, i);
            http_rep_pb_str(&a->tmp2, 5, a->env->listen);
            http_rep_pb_bytes(b, 2, a->tmp2.data, a->tmp2.len);
            continue;
        }
        if (rep == HTTP_REP_XML) {
            buf_append_u8(&a->tmp, '\0');
            json_raw(b, "<Region");
            http_rep_xml_attr_i64(b, "id", (int64_t)i);
            http_rep_xml_attr(b, "name", (const char *)a->tmp.data);
            http_rep_xml_attr_b64(b, "startKey", s.p, s.n);
            http_rep_xml_attr_b64(b, "endKey", en.p, en.n);
            http_rep_xml_attr(b, "location", a->env->listen);
            json_raw(b, "/>");
            continue;
        }
        json_raw(b, i ? ",{\"id\":" : "{\"id\":");
        json_u64(b, i);
        json_raw(b, ",\"name\":");
        json_str_append(b, a->tmp.data, a->tmp.len);
        json_raw(b, ",\"startKey\":\"");
        json_b64_append(b, s.p, s.n);
        json_raw(b, "\",\"endKey\":\"");
        json_b64_append(b, en.p, en.n);
        json_raw(b, "\",\"location\":");
        json_str_append(b, a->env->listen, strlen(a->env->listen));
        json_raw(b, ",\"files\":");
        json_u64(b, files);
        json_raw(b, ",\"bytes\":");
        json_u64(b, bytes);
        json_raw(b, "}");
    }
    if (rep == HTTP_REP_XML)
        json_raw(b, "</TableInfo>\n");
    else if (rep == HTTP_REP_JSON)
        json_raw(b, "]}\n");
}
