/* SPDX-License-Identifier: MIT */
/* report.c - one session decoder (wire/dec.h) per reassembled connection; prints each decoded
 * packet (dump) or the round-trip accounting the live client keeps (stats). Problems (encryption,
 * gaps, truncation, undecodable bytes) end the decoding of that connection only. */
#include "pcaptool.h"

#include "jsonout.h"
#include "workload.h"

#include "dec.h"
#include "info.h"
#include "status.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TEXT 4096 /* longest string field printed (SQL text is cut with "...") */

typedef struct pconn {
    pcaptool_report *r;
    int id;
    char client[64], server[64];
    int saw_syn;
    int on_port;      /* on a port given with --port (or 3050): listed even when not recognised */
    uint64_t open_frame;
    uint64_t last_ts;
    fbw_dec *dec;
    fbw_dec_sync sync; /* how the decoder found the session; copied when it ends */
    uint64_t relocks_noted;
    fbw_stats stats; /* copied when the connection ends */
    int protocol, compressed;
    uint64_t packets; /* decoded packets */
    uint64_t frame;   /* frame whose bytes are being fed */
    char crypt[32];
    uint64_t crypt_packet, crypt_frame;
    unsigned key_line; /* key log line given to the decoder, 0 none */
    int key_failed;    /* ... and it did not decrypt */
    int decrypting;    /* at close: the decoder had decrypted with it */
    int stopped; /* no more decoding (problem recorded) */
    int problem;
    char why[700];
    enum pcaptool_tcp_end end;
    int ended;
    uint64_t rows; /* rows in the fetch batch being received */
    fbw_buf trips; /* --trips text, one line per round trip */
    uint64_t trip; /* trip of the line being built */
    int trip_dir;  /* -1 none yet, 1 client ops, 0 server ops */
    int32_t run_op;
    uint64_t run_n;
} pconn;

struct pcaptool_report {
    pcaptool_report_opts o;
    pconn **c;        /* every connection followed, in the order it opened */
    size_t n, cap;
    pconn **list;     /* the ones reported (Firebird, or on a listed port), numbered in order */
    size_t nlist;
    uint64_t t0;
    int have_t0;
    int failed; /* out of memory somewhere: the report is incomplete */
};

/* ---- text helpers ---- */

/* Text output goes into fbw_bufs (base/buf.h); an append that runs out of memory loses its text. */
#define put(b, s) ((void)fbw_buf_puts((b), (s)))
#define putf(b, ...) ((void)fbw_buf_printf((b), __VA_ARGS__))

/* Write a finished buffer (an empty one has no data pointer at all). */
static void emit_buf(const fbw_buf *b, FILE *out)
{
    if (fbw_buf_avail(b))
        fwrite(fbw_buf_head(b), 1, fbw_buf_avail(b), out);
}

void pcaptool_quote(fbw_buf *b, const uint8_t *p, size_t n, size_t limit)
{
    size_t max = limit && n > limit ? limit : n;
    put(b, "\"");
    for (size_t i = 0; i < max;) {
        uint8_t ch = p[i];
        size_t u = ch >= 0x80 ? pcaptool_utf8_len(p + i, max - i) : 0;
        if (u) {
            fbw_buf_append(b, p + i, u);
            i += u;
            continue;
        }
        if (ch == '"' || ch == '\\')
            putf(b, "\\%c", ch);
        else if (ch == '\n')
            put(b, "\\n");
        else if (ch == '\t')
            put(b, "\\t");
        else if (ch < 0x20 || ch >= 0x7F)
            putf(b, "\\u%04x", ch);
        else
            fbw_buf_append(b, &ch, 1);
        i++;
    }
    if (max < n)
        put(b, "...");
    put(b, "\"");
}

static void put_str(fbw_buf *b, const uint8_t *p, size_t n)
{
    pcaptool_quote(b, p, n, MAX_TEXT);
}

/* Fields of one dump line: key=value in text (b), keys of a JSON object (obj, when not NULL;
 * NULL again once a value could not be made: the line is lost for want of memory). */
typedef struct emit {
    fbw_buf *b;
    json_t *obj;
} emit;

static void e_json(emit *e, const char *k, json_t *v)
{
    if (e->obj && v && json_object_set_new(e->obj, k, v) == 0)
        return;
    json_decref(v);
    json_decref(e->obj);
    e->obj = NULL;
}

static void e_num(emit *e, const char *k, uint64_t v)
{
    if (e->b)
        putf(e->b, " %s=%" PRIu64, k, v);
    else
        e_json(e, k, json_integer((json_int_t)v));
}

static void e_int(emit *e, const char *k, int64_t v)
{
    if (e->b)
        putf(e->b, " %s=%" PRId64, k, v);
    else
        e_json(e, k, json_integer((json_int_t)v));
}

static void e_str(emit *e, const char *k, const void *p, size_t n)
{
    if (e->b) {
        putf(e->b, " %s=", k);
        put_str(e->b, p, n);
    } else {
        e_json(e, k, pcaptool_json_bytes(p, n, MAX_TEXT));
    }
}

static void e_cstr(emit *e, const char *k, const char *s)
{
    e_str(e, k, s, strlen(s));
}

static const char *op_name(int32_t op, char *buf, unsigned size)
{
    return fbw_op_name(op, buf, size);
}

/* ---- what a dump line says about each packet ---- */

static void describe_status(emit *e, fbw_bytes vec)
{
    fbw_err err;
    fbw_warnings w;
    fbw_err_clear(&err);
    memset(&w, 0, sizeof w);
    int rc = fbw_status_decode(vec, &err, &w);
    if (rc == FBW_OK) {
        e_cstr(e, "status", "ok");
    } else if (rc == FBW_E_SERVER) {
        e_cstr(e, "status", "error");
        if (err.ngds > 0)
            e_num(e, "gds", err.gds[0]);
        if (err.sqlstate[0])
            e_cstr(e, "sqlstate", err.sqlstate);
        e_cstr(e, "message", err.msg);
    } else {
        e_cstr(e, "status", "malformed");
        e_cstr(e, "message", err.msg);
    }
    if (w.n > 0)
        e_cstr(e, "warning", w.msg);
}

static void describe_response(pconn *pc, emit *e, const fbw_pkt *p)
{
    char nb[24];
    int32_t to = fbw_dec_answering(pc->dec);
    if (to)
        e_cstr(e, "reply_to", op_name(to, nb, sizeof nb));
    if (p->u.resp.object)
        e_num(e, "object", p->u.resp.object);
    if (p->u.resp.blob_hi || p->u.resp.blob_lo) {
        e_num(e, "blob_hi", p->u.resp.blob_hi);
        e_num(e, "blob_lo", p->u.resp.blob_lo);
    }
    if (p->u.resp.data.n)
        e_num(e, "data_bytes", p->u.resp.data.n);
    /* isc_info_sql_records (23) first: an affected-rows answer */
    if (to == FBW_OP_INFO_SQL && p->u.resp.data.n && p->u.resp.data.p[0] == 23) {
        uint64_t affected = 0, selected = 0;
        fbw_err err;
        if (fbw_info_records(p->u.resp.data.p, p->u.resp.data.n, &affected, &selected, &err) ==
            FBW_OK) {
            e_num(e, "affected", affected);
            e_num(e, "selected", selected);
        }
    }
    describe_status(e, p->u.resp.status);
}

/* A request's BLR: its size and the messages it declares (or why they cannot be known). */
static void describe_compile(emit *e, fbw_bytes blr)
{
    fbw_blr_msgdecl decl[FBW_BLR_MAX_MESSAGES];
    unsigned n = 0;
    fbw_err err;
    e_num(e, "blr_bytes", blr.n);
    if (fbw_blr_request_scan(blr.p, blr.n, decl, FBW_BLR_MAX_MESSAGES, &n, &err) != FBW_OK) {
        e_cstr(e, "blr", err.msg);
        return;
    }
    char list[FBW_BLR_MAX_MESSAGES * 12] = "";
    size_t at = 0;
    for (unsigned i = 0; i < n && at < sizeof list; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%u:%u", i ? "," : "",
                               decl[i].number, decl[i].fields);
    e_cstr(e, "messages", n ? list : "none"); /* number:fields */
}

/* An op_fetch_scroll's move (Firebird's P_FETCH) and, for absolute and relative, its position. */
static void describe_scroll(emit *e, uint16_t op, int32_t pos)
{
    const char *name = pcaptool_fetch_op_name(op);
    if (name)
        e_cstr(e, "fetch", name);
    else
        e_num(e, "fetch_op", op); /* unknown to fbwire: shown as it is */
    if (op == 4 || op == 5)
        e_int(e, "pos", pos);
}

static void describe(pconn *pc, emit *e, int from_client, const fbw_pkt *p)
{
    char nb[24];
    switch (p->op) {
    case FBW_OP_CONNECT:
        e_str(e, "file", p->u.cnct.file.p, p->u.cnct.file.n);
        e_num(e, "versions", p->u.cnct.count_wire);
        if (p->u.cnct.count) {
            e_int(e, "max_protocol",
                  fbw_protocol_from_wire(p->u.cnct.ver[p->u.cnct.count - 1].version));
        }
        break;
    case FBW_OP_ACCEPT:
    case FBW_OP_ACCEPT_DATA:
    case FBW_OP_COND_ACCEPT:
        e_int(e, "protocol", fbw_protocol_from_wire(p->u.acpt.version));
        e_num(e, "ptype", p->u.acpt.type & FBW_PTYPE_MASK);
        e_num(e, "compress", (p->u.acpt.type & FBW_PFLAG_COMPRESS) ? 1 : 0);
        if (p->op != FBW_OP_ACCEPT) {
            e_str(e, "plugin", p->u.acpt.plugin.p, p->u.acpt.plugin.n);
            e_num(e, "authenticated", p->u.acpt.authenticated);
        }
        break;
    case FBW_OP_RESPONSE:
    case FBW_OP_RESPONSE_PIGGYBACK:
        describe_response(pc, e, p);
        break;
    case FBW_OP_ATTACH:
    case FBW_OP_CREATE:
    case FBW_OP_SERVICE_ATTACH:
        e_str(e, "database", p->u.atch.file.p, p->u.atch.file.n);
        e_num(e, "dpb_bytes", p->u.atch.dpb.n);
        break;
    case FBW_OP_CONT_AUTH:
        e_str(e, "plugin", p->u.auth.name.p, p->u.auth.name.n);
        e_num(e, "data_bytes", p->u.auth.data.n);
        break;
    case FBW_OP_CRYPT:
        e_str(e, "plugin", p->u.crypt.plugin.p, p->u.crypt.plugin.n);
        break;
    case FBW_OP_TRANSACTION:
    case FBW_OP_RECONNECT:
        e_num(e, "db", p->u.sttr.db);
        e_num(e, "tpb_bytes", p->u.sttr.tpb.n);
        break;
    case FBW_OP_COMMIT:
    case FBW_OP_ROLLBACK:
    case FBW_OP_COMMIT_RETAINING:
    case FBW_OP_ROLLBACK_RETAINING:
    case FBW_OP_DETACH:
    case FBW_OP_ALLOCATE_STATEMENT:
    case FBW_OP_CLOSE_BLOB:
    case FBW_OP_CANCEL_BLOB:
    case FBW_OP_RELEASE:
    case FBW_OP_DROP_DATABASE:
    case FBW_OP_UNWIND:
        e_num(e, "object", p->u.rlse.object);
        break;
    case FBW_OP_COMPILE:
        describe_compile(e, p->u.ddl.blr);
        break;
    case FBW_OP_START:
    case FBW_OP_START_AND_RECEIVE:
    case FBW_OP_RECEIVE:
    case FBW_OP_START_AND_SEND:
    case FBW_OP_START_SEND_AND_RECEIVE:
    case FBW_OP_SEND:
        e_num(e, "request", p->u.data.request);
        if (p->u.data.incarnation)
            e_num(e, "level", p->u.data.incarnation);
        if (from_client && p->op != FBW_OP_RECEIVE && p->op != FBW_OP_SEND)
            e_num(e, "tr", p->u.data.tr);
        e_num(e, "msg", p->u.data.msg_number);
        e_num(e, "messages", p->u.data.messages);
        if (!from_client && p->u.data.messages == 0)
            e_num(e, "rows", pc->rows + 1); /* this reply's messages, the last one included */
        break;
    case FBW_OP_TRANSACT:
        e_num(e, "tr", p->u.trrq.tr);
        describe_compile(e, p->u.trrq.blr);
        e_num(e, "messages", p->u.trrq.messages);
        break;
    case FBW_OP_TRANSACT_RESPONSE:
        e_num(e, "messages", p->u.trrq.messages);
        break;
    case FBW_OP_GET_SLICE:
    case FBW_OP_PUT_SLICE:
        e_num(e, "tr", p->u.slc.tr);
        e_num(e, "sdl_bytes", p->u.slc.sdl.n);
        /* fall through */
    case FBW_OP_SLICE:
        e_num(e, "length", p->u.slc.length);
        e_num(e, "slice_bytes", p->u.slc.slice_length);
        break;
    case FBW_OP_PREPARE_STATEMENT:
    case FBW_OP_EXEC_IMMEDIATE:
    case FBW_OP_EXEC_IMMEDIATE2:
        e_num(e, "tr", p->u.sqlst.tr);
        e_num(e, "stmt", p->u.sqlst.stmt);
        e_num(e, "dialect", p->u.sqlst.dialect);
        e_str(e, "sql", p->u.sqlst.sql.p, p->u.sqlst.sql.n);
        if (pc->protocol >= 20) /* the field exists from protocol 20 on */
            e_num(e, "prepare_flags", p->u.sqlst.flags);
        if (p->op == FBW_OP_EXEC_IMMEDIATE2 && pc->protocol >= 19) /* the inline blobs it asks for */
            e_num(e, "inline_blob_size", p->u.sqlst.inline_blob_size);
        break;
    case FBW_OP_EXECUTE:
    case FBW_OP_EXECUTE2:
        e_num(e, "stmt", p->u.sqldata.stmt);
        e_num(e, "tr", p->u.sqldata.tr);
        e_num(e, "messages", p->u.sqldata.messages);
        if (fbw_dec_protocol(pc->dec) >= 19) /* the inline blobs it asks for (0: none) */
            e_num(e, "inline_blob_size", p->u.sqldata.inline_blob_size);
        if (p->u.sqldata.cursor_flags == 1) /* protocol 18+: CURSOR_TYPE_SCROLLABLE */
            e_cstr(e, "cursor", "scrollable");
        else if (p->u.sqldata.cursor_flags)
            e_num(e, "cursor_flags", p->u.sqldata.cursor_flags);
        break;
    case FBW_OP_FETCH:
        e_num(e, "stmt", p->u.sqldata.stmt);
        e_num(e, "batch", p->u.sqldata.messages);
        break;
    case FBW_OP_FETCH_SCROLL:
        e_num(e, "stmt", p->u.sqldata.stmt);
        describe_scroll(e, p->u.sqldata.fetch_op, p->u.sqldata.fetch_pos);
        e_num(e, "batch", p->u.sqldata.messages);
        break;
    case FBW_OP_FETCH_RESPONSE:
        e_int(e, "status", p->u.sqldata.status);
        e_num(e, "messages", p->u.sqldata.messages);
        if (p->u.sqldata.messages == 0)
            e_num(e, "rows", pc->rows);
        break;
    case FBW_OP_SQL_RESPONSE:
        e_num(e, "messages", p->u.sqldata.messages);
        break;
    case FBW_OP_FREE_STATEMENT:
        e_num(e, "stmt", p->u.sqlfree.stmt);
        e_cstr(e, "option",
               p->u.sqlfree.option == 1   ? "close"
               : p->u.sqlfree.option == 2 ? "drop"
               : p->u.sqlfree.option == 4 ? "unprepare"
                                          : "other");
        break;
    case FBW_OP_INFO_DATABASE:
    case FBW_OP_INFO_SQL:
    case FBW_OP_INFO_TRANSACTION:
    case FBW_OP_INFO_REQUEST:
    case FBW_OP_INFO_BLOB:
    case FBW_OP_INFO_BATCH:
    case FBW_OP_INFO_CURSOR:
        e_num(e, "object", p->u.info.object);
        e_num(e, "items_bytes", p->u.info.items.n);
        e_num(e, "buffer", p->u.info.buffer_length);
        break;
    case FBW_OP_BATCH_CREATE:
    case FBW_OP_BATCH_MSG:
    case FBW_OP_BATCH_EXEC:
        e_num(e, "stmt",
              p->op == FBW_OP_BATCH_CREATE ? p->u.batch_create.stmt
              : p->op == FBW_OP_BATCH_MSG  ? p->u.batch_msg.stmt
                                           : p->u.batch_exec.stmt);
        if (p->op == FBW_OP_BATCH_MSG)
            e_num(e, "messages", p->u.batch_msg.count);
        break;
    case FBW_OP_BATCH_BLOB_STREAM: /* stream bytes as the client counted them; blob headers in it */
        e_num(e, "stmt", p->u.bstream.stmt);
        e_num(e, "stream_bytes", p->u.bstream.length);
        e_num(e, "blobs", p->u.bstream.blobs);
        break;
    default:
        break;
    }
    (void)from_client;
    (void)nb;
}

/* ---- round-trip lines (--trips) ---- */

static void trip_flush_run(pconn *pc)
{
    char nb[24];
    if (pc->run_n == 0)
        return;
    putf(&pc->trips, " %s", op_name(pc->run_op, nb, sizeof nb));
    if (pc->run_n > 1)
        putf(&pc->trips, "*%" PRIu64, pc->run_n);
    pc->run_n = 0;
}

static void trip_note(pconn *pc, int from_client, int32_t op)
{
    const fbw_stats *st = fbw_dec_stats(pc->dec);
    uint64_t trip = from_client ? st->round_trips + 1 : st->round_trips;
    if (pc->trip_dir < 0 || trip != pc->trip || from_client != pc->trip_dir) {
        trip_flush_run(pc);
        if (pc->trip_dir < 0 || trip != pc->trip) {
            if (pc->trip_dir >= 0)
                put(&pc->trips, "\n");
            putf(&pc->trips, "%4" PRIu64 ":", trip);
        }
        put(&pc->trips, from_client ? " >" : " <");
        pc->trip = trip;
        pc->trip_dir = from_client;
    }
    if (pc->run_n && pc->run_op != op)
        trip_flush_run(pc);
    pc->run_op = op;
    pc->run_n++;
}

/* ---- decoder callback ---- */

static void list_conn(pconn *pc);
static void sync_notes(pconn *pc);

/* Time since the capture's first packet, to the microsecond. */
static uint64_t rel_us(const pcaptool_report *r, uint64_t ts)
{
    return (ts >= r->t0 ? ts - r->t0 : 0) / 1000u;
}

static void print_time(pcaptool_report *r, fbw_buf *b, uint64_t ts)
{
    uint64_t us = rel_us(r, ts);
    putf(b, "%" PRIu64 ".%06" PRIu64, us / 1000000u, us % 1000000u);
}

/* One dump line: time, connection, direction, op and size, then what describe() finds. */
static void dump_line(pconn *pc, int from_client, const fbw_pkt *p, size_t bytes, uint64_t ts_ns)
{
    pcaptool_report *r = pc->r;
    fbw_buf line;
    fbw_buf_init(&line);
    emit e = {NULL, NULL};
    char nb[24];
    const char *dir = from_client ? "C>S" : "S>C";
    if (r->o.json) {
        e.obj = json_pack("{s:o,s:i,s:I,s:s,s:s,s:I}", "time",
                          pcaptool_json_fixed((double)rel_us(r, ts_ns) / 1e6, 6), "conn", pc->id,
                          "frame", (json_int_t)pc->frame, "dir", dir, "op",
                          op_name(p->op, nb, sizeof nb), "bytes", (json_int_t)bytes);
    } else {
        e.b = &line;
        print_time(r, &line, ts_ns);
        putf(&line, " c%d %s %s %zu", pc->id, dir, op_name(p->op, nb, sizeof nb), bytes);
    }
    if (fbw_dec_format_unknown(pc->dec))
        e_cstr(&e, "format", "unknown (prepared before the capture)");
    else
        describe(pc, &e, from_client, p);
    if (r->o.json) {
        (void)pcaptool_json_print(e.obj, r->o.out);
    } else {
        put(&line, "\n");
        emit_buf(&line, r->o.out);
    }
    fbw_buf_free(&line);
}

static void on_packet(void *arg, int from_client, const fbw_pkt *p, size_t bytes, uint64_t ts_ns)
{
    pconn *pc = arg;
    pcaptool_report *r = pc->r;
    list_conn(pc);
    if (pc->sync.how != fbw_dec_sync_info(pc->dec)->how ||
        pc->relocks_noted != fbw_dec_sync_info(pc->dec)->relocks)
        sync_notes(pc);
    pc->packets++;
    if (p->op == FBW_OP_CRYPT && from_client && !pc->crypt[0]) {
        snprintf(pc->crypt, sizeof pc->crypt, "%.*s",
                 (int)(p->u.crypt.plugin.n < 31 ? p->u.crypt.plugin.n : 31),
                 (const char *)p->u.crypt.plugin.p);
        for (char *ch = pc->crypt; *ch; ch++) /* capture bytes: keep them printable */
            if (*ch < 0x21 || *ch > 0x7E)
                *ch = '?';
        if (!pc->crypt[0])
            snprintf(pc->crypt, sizeof pc->crypt, "?");
        pc->crypt_packet = pc->packets + 1;
        pc->crypt_frame = pc->frame;
    }
    if (!from_client &&
        (p->op == FBW_OP_ACCEPT || p->op == FBW_OP_ACCEPT_DATA || p->op == FBW_OP_COND_ACCEPT)) {
        pc->protocol = fbw_protocol_from_wire(p->u.acpt.version);
        if ((p->u.acpt.type & FBW_PFLAG_COMPRESS) && pc->protocol >= 13)
            pc->compressed = 1;
    }
    if (r->o.trips)
        trip_note(pc, from_client, p->op);
    if (r->o.tap)
        r->o.tap(r->o.tap_arg, pc->id, pc->dec, from_client, p, ts_ns);
    if (r->o.mode == PCAPTOOL_REPORT_DUMP)
        dump_line(pc, from_client, p, bytes, ts_ns);
    if (p->op == FBW_OP_FETCH_RESPONSE)
        pc->rows = p->u.sqldata.messages ? pc->rows + 1 : 0;
    if (p->op == FBW_OP_SEND && !from_client) /* a receive's answer: 1 = more follow */
        pc->rows = p->u.data.messages ? pc->rows + 1 : 0;
}

/* ---- reassembly callbacks ---- */

static void note(pconn *pc, const char *what)
{
    pcaptool_report *r = pc->r;
    if (r->o.mode != PCAPTOOL_REPORT_DUMP)
        return;
    if (r->o.json) {
        (void)pcaptool_json_print(json_pack("{s:i,s:o}", "conn", pc->id, "event",
                                            pcaptool_json_bytes(what, strlen(what), MAX_TEXT)),
                                  r->o.out);
        return;
    }
    fbw_buf line;
    fbw_buf_init(&line);
    putf(&line, "c%d ", pc->id);
    put(&line, what);
    put(&line, "\n");
    emit_buf(&line, r->o.out);
    fbw_buf_free(&line);
}

/* The connection is reported from now on: it gets the next number. NULL (already listed, or no
 * memory) needs nothing more. */
static void list_conn(pconn *pc)
{
    pcaptool_report *r = pc->r;
    if (pc->id)
        return;
    pconn **n = realloc(r->list, (r->nlist + 1) * sizeof *n);
    if (!n) {
        r->failed = 1;
        return;
    }
    r->list = n;
    r->list[r->nlist++] = pc;
    pc->id = (int)r->nlist;
    char what[256];
    snprintf(what, sizeof what, "open %s -> %s (frame %" PRIu64 "%s)", pc->client, pc->server,
             pc->open_frame, pc->saw_syn ? "" : ", started before the capture");
    note(pc, what);
}

static void stop(pconn *pc, const char *why)
{
    if (pc->stopped)
        return;
    pc->stopped = 1;
    if (!pc->id && !pc->on_port)
        return; /* not Firebird (nothing recognised) and on no listed port: ignored */
    list_conn(pc);
    pc->problem = 1;
    snprintf(pc->why, sizeof pc->why, "%s", why);
    note(pc, why);
}

/* After each decoded packet: say when the decoder locked on (again). */
static void sync_notes(pconn *pc)
{
    const fbw_dec_sync *s = fbw_dec_sync_info(pc->dec);
    char what[300];
    if (s->how == FBW_DEC_LOCKED_ON && !pc->sync.how) {
        snprintf(what, sizeof what,
                 "locked on mid-session after skipping %" PRIu64 " client and %" PRIu64
                 " server bytes (protocol %d-%d by packet shapes)",
                 s->lock_offset[1], s->lock_offset[0], s->protocol_lo, s->protocol_hi);
        note(pc, what);
    } else if (s->relocks > pc->relocks_noted) {
        snprintf(what, sizeof what,
                 "framing lost and found again (%" PRIu64 " client and %" PRIu64
                 " server bytes skipped so far)",
                 s->skipped[1], s->skipped[0]);
        note(pc, what);
        pc->relocks_noted = s->relocks;
    }
    pc->sync = *s;
}

static void *on_open(void *arg, const char *client, const char *server, int saw_syn, uint64_t frame)
{
    pcaptool_report *r = arg;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        pconn **n = realloc(r->c, cap * sizeof *n);
        if (!n) {
            r->failed = 1;
            return NULL;
        }
        r->c = n;
        r->cap = cap;
    }
    pconn *pc = calloc(1, sizeof *pc);
    if (!pc || fbw_dec_new(on_packet, pc, &pc->dec) != FBW_OK) {
        free(pc);
        r->failed = 1;
        return NULL;
    }
    pc->r = r;
    fbw_dec_start_anywhere(pc->dec);
    snprintf(pc->client, sizeof pc->client, "%s", client);
    snprintf(pc->server, sizeof pc->server, "%s", server);
    pc->saw_syn = saw_syn;
    pc->open_frame = frame;
    pc->trip_dir = -1;
    fbw_buf_init(&pc->trips);
    r->c[r->n++] = pc;
    const char *colon = strrchr(server, ':');
    long port = colon ? strtol(colon + 1, NULL, 10) : 0;
    for (size_t i = 0; i < r->o.nports; i++)
        if (r->o.ports[i] == port)
            pc->on_port = 1;
    unsigned line = 0;
    const fbw_keylog_entry *k = pcaptool_keys_find(r->o.keys, client, server, &line);
    if (k && fbw_dec_set_key(pc->dec, k->plugin, k->key, k->key_len, k->iv, k->iv_len) == FBW_OK)
        pc->key_line = line;
    if (pc->on_port)
        list_conn(pc); /* numbered in the order they open, as before content recognition */
    return pc;
}

static void on_data(void *conn, int from_client, const uint8_t *p, size_t n, uint64_t ts_ns,
                    uint64_t frame)
{
    pconn *pc = conn;
    if (!pc->r->have_t0) {
        pc->r->t0 = ts_ns;
        pc->r->have_t0 = 1;
    }
    if (pc->stopped)
        return;
    pc->frame = frame;
    pc->last_ts = ts_ns;
    int rc = fbw_dec_feed(pc->dec, from_client, p, n, ts_ns);
    if (rc == FBW_OK)
        return;
    char why[700];
    if (rc == FBW_E_CRYPT && pc->key_line)
        pc->key_failed = 1;
    if (rc == FBW_E_CRYPT && pc->key_line)
        snprintf(why, sizeof why,
                 "key log line %u for %s -> %s: %s", pc->key_line,
                 pc->client, pc->server, fbw_dec_error(pc->dec)->msg);
    else if (rc == FBW_E_CRYPT && pc->crypt[0])
        snprintf(why, sizeof why,
                 "encrypted with %s from packet %" PRIu64 " on (after op_crypt in frame %" PRIu64
                 "); no key",
                 pc->crypt, pc->crypt_packet, pc->crypt_frame);
    else if (fbw_dec_sync_info(pc->dec)->how == FBW_DEC_NOT_YET)
        snprintf(why, sizeof why, "not recognised as Firebird: %s", fbw_dec_error(pc->dec)->msg);
    else
        snprintf(why, sizeof why, "cannot decode after packet %" PRIu64 " (frame %" PRIu64 "): %s",
                 pc->packets, frame, fbw_dec_error(pc->dec)->msg);
    stop(pc, why);
}

static void on_broken(void *conn, const char *why)
{
    stop(conn, why);
}

static void on_close(void *conn, enum pcaptool_tcp_end how)
{
    pconn *pc = conn;
    pc->end = how;
    pc->ended = 1;
    if (pc->stopped)
        fbw_dec_end(pc->dec, pc->last_ts); /* only counts round trips still held */
    else {
        /* Frame what is left of the last bursts (whole unless the capture cut them) and count
         * the round trips of bytes held while hunting. */
        fbw_dec_end(pc->dec, pc->last_ts);
        if (!pc->id && fbw_dec_sync_info(pc->dec)->how != FBW_DEC_NOT_YET)
            list_conn(pc);
    }
    if (!pc->stopped && !pc->id && fbw_dec_sync_info(pc->dec)->how == FBW_DEC_NOT_YET) {
        char why[200];
        const fbw_dec_sync *s = fbw_dec_sync_info(pc->dec);
        snprintf(why, sizeof why,
                 "not recognised as Firebird: no packet boundary found in %" PRIu64
                 " client and %" PRIu64 " server bytes",
                 s->skipped[1], s->skipped[0]);
        stop(pc, why);
    }
    if (!pc->id) { /* ignored: free it now, report nothing */
        fbw_dec_free(pc->dec);
        pc->dec = NULL;
        return;
    }
    if (!pc->stopped && pc->crypt[0] && !fbw_dec_decrypting(pc->dec)) {
        char why[200];
        snprintf(why, sizeof why,
                 "encrypted with %s from packet %" PRIu64 " on (after op_crypt in frame %" PRIu64
                 "); no key",
                 pc->crypt, pc->crypt_packet, pc->crypt_frame);
        stop(pc, why);
    }
    size_t pc_c = fbw_dec_pending(pc->dec, 1), pc_s = fbw_dec_pending(pc->dec, 0);
    if (!pc->stopped && (pc_c || pc_s)) {
        char why[300];
        snprintf(
            why, sizeof why,
            "session ends inside a packet: %zu client and %zu server bytes of incomplete packets "
            "(truncated capture?)",
            pc_c, pc_s);
        stop(pc, why);
    }
    if (how == PCAPTOOL_TCP_END_CAPTURE)
        note(pc, "still open when the capture ended");
    else
        note(pc, how == PCAPTOOL_TCP_END_RST ? "closed (RST)" : "closed (FIN)");
    pc->stats = *fbw_dec_stats(pc->dec);
    pc->stats.sent_since_wait = 0;
    pc->sync = *fbw_dec_sync_info(pc->dec);
    if (pc->sync.how == FBW_DEC_LOCKED_ON && !pc->protocol)
        pc->protocol = pc->sync.protocol_hi;
    pc->decrypting = fbw_dec_decrypting(pc->dec) && !pc->key_failed;
    trip_flush_run(pc);
    fbw_dec_free(
        pc->dec); /* keep memory flat over long captures: only the numbers are needed now */
    pc->dec = NULL;
}

void pcaptool_report_sink(pcaptool_report *r, pcaptool_tcp_sink *sink)
{
    sink->open = on_open;
    sink->data = on_data;
    sink->broken = on_broken;
    sink->close = on_close;
    sink->arg = r;
}

/* ---- statistics ---- */

static const char *end_name(const pconn *pc)
{
    return pc->end == PCAPTOOL_TCP_END_FIN ? "fin" : pc->end == PCAPTOOL_TCP_END_RST ? "rst" : "capture";
}

/* The key: value lines of fbwire-sql --info, then the one-line form of fbwire-sql --stats, then the
 * per-op table. */
static void stats_text(fbw_buf *b, const fbw_stats *s, const char *label)
{
    putf(b, "round_trips: %" PRIu64 "\n", s->round_trips);
    putf(b, "packets_sent: %" PRIu64 "\n", s->packets_sent);
    putf(b, "packets_received: %" PRIu64 "\n", s->packets_received);
    putf(b, "bytes_sent: %" PRIu64 "\n", s->bytes_sent);
    putf(b, "bytes_received: %" PRIu64 "\n", s->bytes_received);
    putf(b, "wire_bytes_sent: %" PRIu64 "\n", s->wire_bytes_sent);
    putf(b, "wire_bytes_received: %" PRIu64 "\n", s->wire_bytes_received);
    putf(b, "wait_ms: %.3f\n", (double)s->wait_ns / 1e6);
    putf(b,
         "-- stats %s: round_trips=%" PRIu64 " packets_sent=%" PRIu64 " packets_received=%" PRIu64
         " bytes_sent=%" PRIu64 " bytes_received=%" PRIu64 " wait_ms=%.3f\n",
         label, s->round_trips, s->packets_sent, s->packets_received, s->bytes_sent,
         s->bytes_received, (double)s->wait_ns / 1e6);
    putf(b, "%-28s %8s %10s %8s %10s\n", "op", "sent", "bytes", "received", "bytes");
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        const fbw_op_stats *o = &s->op[op];
        char nb[24];
        if (o->packets_sent || o->packets_received)
            putf(b, "%-28s %8" PRIu64 " %10" PRIu64 " %8" PRIu64 " %10" PRIu64 "\n",
                 op_name(op, nb, sizeof nb), o->packets_sent, o->bytes_sent, o->packets_received,
                 o->bytes_received);
    }
}

/* The figures of fbw_stats (wire/stats.h) added as keys of o; NULL (o released) when out of
 * memory or o is NULL. */
static json_t *stats_json(json_t *o, const fbw_stats *s)
{
    json_t *ops = json_object();
    for (int op = 0; ops && op <= FBW_OP_MAX; op++) {
        const fbw_op_stats *x = &s->op[op];
        char nb[24];
        if (!x->packets_sent && !x->packets_received)
            continue;
        json_t *v = json_pack("{s:I,s:I,s:I,s:I}", "packets_sent", (json_int_t)x->packets_sent,
                              "bytes_sent", (json_int_t)x->bytes_sent, "packets_received",
                              (json_int_t)x->packets_received, "bytes_received",
                              (json_int_t)x->bytes_received);
        if (!v || json_object_set_new(ops, op_name(op, nb, sizeof nb), v)) {
            json_decref(ops);
            ops = NULL;
        }
    }
    json_t *f = json_pack(
        "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o}", "round_trips", (json_int_t)s->round_trips,
        "packets_sent", (json_int_t)s->packets_sent, "packets_received",
        (json_int_t)s->packets_received, "bytes_sent", (json_int_t)s->bytes_sent, "bytes_received",
        (json_int_t)s->bytes_received, "wire_bytes_sent", (json_int_t)s->wire_bytes_sent,
        "wire_bytes_received", (json_int_t)s->wire_bytes_received, "wait_ms",
        pcaptool_json_fixed((double)s->wait_ns / 1e6, 3), "ops", ops);
    if (!o || !f || json_object_update(o, f)) {
        json_decref(o);
        o = NULL;
    }
    json_decref(f);
    return o;
}

/* The key log line decrypted the connection: it decoded past op_crypt with no key problem. */
static int decrypted(const pconn *pc)
{
    return pc->key_line && pc->crypt[0] && pc->decrypting;
}

/* How the session was found, one line; "none" when nothing in it decoded. */
static void recognition_text(fbw_buf *b, const pconn *pc)
{
    const fbw_dec_sync *s = &pc->sync;
    if (s->how == FBW_DEC_CONNECT) {
        put(b, "recognised: op_connect\n");
        return;
    }
    if (s->how != FBW_DEC_LOCKED_ON) {
        put(b, "recognised: none\n");
        return;
    }
    putf(b,
         "recognised: mid-session, locked on after %" PRIu64 " client and %" PRIu64
         " server bytes (protocol %d-%d by packet shapes)\n",
         s->lock_offset[1], s->lock_offset[0], s->protocol_lo, s->protocol_hi);
    putf(b, "skipped_bytes: client %" PRIu64 ", server %" PRIu64 " (framing lost again %" PRIu64
            " times)\n",
         s->skipped[1], s->skipped[0], s->relocks);
    if (s->unknown_rows || s->unknown_msgs)
        putf(b, "format_unknown: %" PRIu64 " rows, %" PRIu64
                " parameter messages (prepared before the capture)\n",
             s->unknown_rows, s->unknown_msgs);
}

/* How the session was found, as keys added to o (NULL when out of memory). */
static json_t *recognition_json(json_t *o, const pconn *pc)
{
    const fbw_dec_sync *s = &pc->sync;
    const char *how = s->how == FBW_DEC_CONNECT     ? "op_connect"
                      : s->how == FBW_DEC_LOCKED_ON ? "mid-session"
                                                    : "none";
    json_t *r = json_pack("{s:s}", "recognised", how);
    if (r && s->how == FBW_DEC_LOCKED_ON &&
        json_object_update_new(
            r,
            json_pack("{s:{s:I,s:I},s:{s:I,s:I},s:I,s:[i,i],s:{s:I,s:I}}", "lock_offset", "client",
                      (json_int_t)s->lock_offset[1], "server", (json_int_t)s->lock_offset[0],
                      "skipped_bytes", "client", (json_int_t)s->skipped[1], "server",
                      (json_int_t)s->skipped[0], "relocks", (json_int_t)s->relocks,
                      "protocol_range", s->protocol_lo, s->protocol_hi, "format_unknown", "rows",
                      (json_int_t)s->unknown_rows, "messages", (json_int_t)s->unknown_msgs))) {
        json_decref(r);
        r = NULL;
    }
    if (!o || !r || json_object_update(o, r)) {
        json_decref(o);
        o = NULL;
    }
    json_decref(r);
    return o;
}

static void conn_text(fbw_buf *b, const pconn *pc, int trips)
{
    putf(b, "connection %d: %s -> %s%s\n", pc->id, pc->client, pc->server,
         pc->saw_syn ? "" : " (started before the capture)");
    recognition_text(b, pc);
    putf(b, "protocol: %d\n", pc->protocol);
    putf(b, "compression: %s\n", pc->compressed ? "zlib" : "none");
    putf(b, "wire_crypt: %s\n", pc->crypt[0] ? pc->crypt : "none");
    if (pc->key_line)
        putf(b, "key_log: line %u%s\n", pc->key_line, decrypted(pc) ? "" : " (not decrypted)");
    putf(b, "end: %s\n", end_name(pc));
    if (pc->problem)
        putf(b, "problem: %s\n", pc->why);
    char label[32];
    snprintf(label, sizeof label, "connection %d", pc->id);
    stats_text(b, &pc->stats, label);
    if (trips && fbw_buf_avail(&pc->trips)) {
        put(b, "trips:\n");
        fbw_buf_append(b, fbw_buf_head(&pc->trips), fbw_buf_avail(&pc->trips));
        put(b, "\n");
    }
}

/* The --trips lines of a connection, one string each. */
static json_t *trips_json(const pconn *pc)
{
    json_t *a = json_array();
    const uint8_t *t = fbw_buf_head(&pc->trips), *end = t + fbw_buf_avail(&pc->trips);
    while (a && t < end) {
        const uint8_t *nl = memchr(t, '\n', (size_t)(end - t));
        size_t n = nl ? (size_t)(nl - t) : (size_t)(end - t);
        json_t *line = pcaptool_json_bytes(t, n, MAX_TEXT);
        if (!line || json_array_append_new(a, line)) {
            json_decref(a);
            a = NULL;
        }
        t += n + (nl ? 1 : 0);
    }
    return a;
}

static json_t *conn_json(const pconn *pc, int trips)
{
    const char *crypt = pc->crypt[0] ? pc->crypt : "none"; /* from the capture */
    json_t *o =
        json_pack("{s:i,s:s,s:s,s:b,s:i,s:s,s:o,s:b}", "id", pc->id, "client", pc->client, "server",
                  pc->server, "saw_syn", pc->saw_syn, "protocol", pc->protocol, "compression",
                  pc->compressed ? "zlib" : "none", "wire_crypt",
                  pcaptool_json_bytes(crypt, strlen(crypt), MAX_TEXT), "decrypted", decrypted(pc));
    o = recognition_json(o, pc);
    if (o && json_object_update_new(
                 o, json_pack("{s:s,s:o}", "end", end_name(pc), "problem",
                              pc->problem ? pcaptool_json_bytes(pc->why, strlen(pc->why), MAX_TEXT)
                                          : json_null()))) {
        json_decref(o);
        o = NULL;
    }
    o = stats_json(o, &pc->stats);
    if (o && trips && json_object_set_new(o, "trips", trips_json(pc))) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

/* `stats --json`: the whole report as one document (NULL when out of memory). */
static json_t *stats_doc(const pcaptool_report *r, const pcaptool_cap_summary *sum,
                         const fbw_stats *total, int problems)
{
    json_t *conns = json_array();
    for (size_t i = 0; conns && i < r->nlist; i++) {
        json_t *c = conn_json(r->list[i], r->o.trips);
        if (!c || json_array_append_new(conns, c)) {
            json_decref(conns);
            conns = NULL;
        }
    }
    json_t *t =
        stats_json(json_pack("{s:I,s:I,s:i}", "connections", (json_int_t)r->nlist, "ignored",
                             (json_int_t)(r->n - r->nlist), "problems", problems),
                   total);
    return json_pack("{s:I,s:I,s:o,s:o,s:o}", "frames", (json_int_t)sum->frames, "tcp_segments",
                     (json_int_t)sum->tcp, "truncated",
                     sum->truncated[0] ? pcaptool_json_str(sum->truncated) : json_null(),
                     "connections", conns, "total", t);
}

int pcaptool_report_finish(pcaptool_report *r, const char *file, const pcaptool_cap_summary *sum)
{
    int problems = 0;
    fbw_stats total;
    fbw_stats_reset(&total);
    for (size_t i = 0; i < r->nlist; i++) {
        problems += r->list[i]->problem;
        fbw_stats_add(&total, &r->list[i]->stats);
    }
    fbw_buf b;
    fbw_buf_init(&b);
    (void)file;
    if (r->o.mode == PCAPTOOL_REPORT_STATS && r->o.json) {
        (void)pcaptool_json_print(stats_doc(r, sum, &total, problems), r->o.out);
    } else if (r->o.mode == PCAPTOOL_REPORT_STATS) {
        putf(&b, "capture: %" PRIu64 " frames, %" PRIu64 " TCP segments, %zu connections",
             sum->frames, sum->tcp, r->nlist);
        if (r->n > r->nlist)
            putf(&b, " (%zu other TCP connections not recognised as Firebird: ignored)",
                 r->n - r->nlist);
        put(&b, "\n");
        if (sum->truncated[0])
            putf(&b, "capture truncated after frame %" PRIu64 ": %s\n", sum->frames,
                 sum->truncated);
        for (size_t i = 0; i < r->nlist; i++) {
            put(&b, "\n");
            conn_text(&b, r->list[i], r->o.trips);
        }
        putf(&b, "\ntotal: %zu connections, %d not decoded to the end\n", r->nlist, problems);
        stats_text(&b, &total, "total");
    } else if (r->o.mode == PCAPTOOL_REPORT_DUMP && sum->truncated[0]) {
        if (r->o.json) {
            (void)pcaptool_json_print(json_pack("{s:s,s:I,s:o}", "event", "truncated", "frame",
                                                (json_int_t)sum->frames, "message",
                                                pcaptool_json_str(sum->truncated)),
                                      r->o.out);
        } else {
            putf(&b, "capture truncated after frame %" PRIu64 ": %s\n", sum->frames,
                 sum->truncated);
        }
    }
    emit_buf(&b, r->o.out);
    fbw_buf_free(&b);
    return problems + (r->failed ? 1 : 0);
}

size_t pcaptool_report_count(const pcaptool_report *r)
{
    return r->nlist;
}

void pcaptool_report_conn_info(const pcaptool_report *r, size_t i, pcaptool_report_conn *out)
{
    const pconn *pc = r->list[i];
    out->id = pc->id;
    out->client = pc->client;
    out->server = pc->server;
    out->stats = &pc->stats;
    out->problem = pc->problem ? pc->why : NULL;
    /* With a key log line the problem (if any) says why it did not decrypt. */
    out->encrypted = pc->crypt[0] && !pc->key_line ? pc->crypt : NULL;
    out->open_at_end = pc->end == PCAPTOOL_TCP_END_CAPTURE;
}

int pcaptool_report_new(const pcaptool_report_opts *o, pcaptool_report **out)
{
    pcaptool_report *r = calloc(1, sizeof *r);
    if (!r)
        return FBW_E_NOMEM;
    r->o = *o;
    *out = r;
    return FBW_OK;
}

void pcaptool_report_free(pcaptool_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        fbw_dec_free(r->c[i]->dec);
        fbw_buf_free(&r->c[i]->trips);
        free(r->c[i]);
    }
    free(r->c);
    free(r->list);
    free(r);
}

static void on_segment(void *arg, const pcaptool_seg *s)
{
    pcaptool_tcp_segment(arg, s);
}

int pcaptool_report_read(pcaptool_report *r, const char *file, const uint16_t *ports, size_t nports,
                         int explicit_ports, pcaptool_cap_summary *sum, fbw_err *err)
{
    pcaptool_tcp_sink sink;
    pcaptool_tcp *t = NULL;
    pcaptool_report_sink(r, &sink);
    if (pcaptool_tcp_new(&sink, ports, explicit_ports ? nports : 0, &t) != FBW_OK)
        return FBW_E_NOMEM;
    int rc = pcaptool_cap_read(file, on_segment, t, sum, err);
    if (rc == FBW_OK)
        pcaptool_tcp_finish(t);
    pcaptool_tcp_free(t);
    return rc;
}
