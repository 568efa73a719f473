/* SPDX-License-Identifier: MIT */
/* script.c - a scripted Firebird server for unit tests (see script.h). */
#include "script.h"

#include "status.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROTOCOL 17

static const fbw_msgfmt *exec_format(void *arg, enum fbw_fmt_kind kind, const fbw_pkt *p,
                                     fbw_err *err)
{
    (void)p;
    fbw_script *s = arg;
    if (kind == FBW_FMT_EXEC_IN)
        return &s->infmt;
    fbw_err_set(err, FBW_E_UNSUPPORTED, "script: no format for kind %d", (int)kind);
    return NULL;
}

/* Take everything the client has queued. */
static void take_sent(fbw_script *s)
{
    const uint8_t *p;
    size_t n;
    cr_assert_eq(fbw_conn_pending(s->c, &p, &n), FBW_OK);
    if (n) {
        fbw_buf_append(&s->sent, p, n);
        fbw_conn_sent(s->c, n);
    }
}

/* Decode the next client packet into *out (views into *hold); 0 when none is left. */
static int next_pkt(fbw_script *s, int protocol, fbw_pkt *out, fbw_buf *hold)
{
    if (fbw_buf_avail(&s->sent) == 0)
        return 0;
    fbw_buf_init(hold);
    fbw_buf_append(hold, fbw_buf_head(&s->sent), fbw_buf_avail(&s->sent));
    fbw_pkt_ctx ctx = {protocol, exec_format, s};
    size_t used = 0;
    fbw_err err;
    fbw_err_clear(&err);
    int rc = fbw_pkt_decode(&ctx, hold->data, hold->len, out, &used, &err);
    cr_assert_eq(rc, FBW_OK, "client packet: %s (%d)", err.msg, rc);
    fbw_buf_consume(&s->sent, used);
    return 1;
}

/* Feed server bytes to the client, in chunks of s->chunk. */
static void feed(fbw_script *s, const fbw_buf *b)
{
    size_t step = s->chunk ? s->chunk : b->len;
    for (size_t at = 0; at < b->len; at += step) {
        size_t n = b->len - at < step ? b->len - at : step;
        int rc = fbw_conn_recv(s->c, b->data + at, n);
        cr_assert_eq(rc, FBW_OK, "client refused the answer: %s", fbw_conn_error(s->c)->msg);
    }
}

static void put(fbw_buf *out, const fbw_pkt *p)
{
    fbw_pkt_ctx ctx = {PROTOCOL, NULL, NULL};
    fbw_wr w;
    fbw_wr_init(&w, out);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, p), FBW_OK);
}

/* op_response; gds != 0 makes it an error status with that code (and SQLSTATE 23000). */
static void response(fbw_buf *out, uint16_t object, const fbw_buf *data, uint32_t gds)
{
    fbw_buf sv;
    fbw_buf_init(&sv);
    fbw_wr w;
    fbw_wr_init(&w, &sv);
    const fbw_status_arg ok = {FBW_ARG_GDS, 0, NULL};
    const fbw_status_arg bad[] = {{FBW_ARG_GDS, gds, NULL}, {FBW_ARG_STRING, 0, "PK_SCRIPT"},
                                  {FBW_ARG_STRING, 0, "T"}, {FBW_ARG_SQL_STATE, 0, "23000"}};
    if (gds)
        fbw_status_encode(&w, bad, 4);
    else
        fbw_status_encode(&w, &ok, 1);
    fbw_pkt p = {.op = FBW_OP_RESPONSE};
    p.u.resp.object = object;
    if (data) {
        p.u.resp.data.p = data->data;
        p.u.resp.data.n = data->len;
    }
    p.u.resp.status.p = sv.data;
    p.u.resp.status.n = sv.len;
    put(out, &p);
    fbw_buf_free(&sv);
}

/* ---- info replies ---- */

static void item(fbw_buf *b, uint8_t it, uint64_t v, unsigned len)
{
    uint8_t x[11] = {it, (uint8_t)len, 0};
    for (unsigned i = 0; i < len; i++)
        x[3 + i] = (uint8_t)(v >> (8 * i));
    fbw_buf_append(b, x, 3 + len);
}

/* A text item: the field name of column i, "P<i>" for a parameter and "C<i>" for a select column
 * (a real server sends the column or the compared column's name), so names can be checked. */
static void name_item(fbw_buf *b, uint8_t section, uint16_t i)
{
    char name[8];
    int n = snprintf(name, sizeof name, "%c%u", section == FBW_INFO_SQL_BIND ? 'P' : 'C', i + 1u);
    uint8_t x[3] = {FBW_INFO_SQL_FIELD, (uint8_t)n, 0};
    fbw_buf_append(b, x, 3);
    fbw_buf_append(b, name, (size_t)n);
}

static void side(fbw_buf *b, uint8_t section, const fbw_col *cols, uint16_t n)
{
    fbw_buf_append(b, &section, 1);
    item(b, FBW_INFO_SQL_DESCRIBE_VARS, n, 4);
    for (uint16_t i = 0; i < n; i++) {
        const fbw_col *c = &cols[i];
        int text = c->type == FBW_SQL_VARYING || c->type == FBW_SQL_TEXT;
        item(b, FBW_INFO_SQL_SQLDA_SEQ, i + 1u, 4);
        item(b, FBW_INFO_SQL_TYPE, c->type | 1u, 4);
        item(b, FBW_INFO_SQL_SUB_TYPE, text ? c->charset : 0, 4);
        item(b, FBW_INFO_SQL_SCALE, (uint32_t)(int32_t)c->scale, 4);
        item(b, FBW_INFO_SQL_LENGTH, c->length, 4);
        name_item(b, section, i);
        uint8_t end = FBW_INFO_SQL_DESCRIBE_END;
        fbw_buf_append(b, &end, 1);
    }
}

static void describe(const fbw_script *s, fbw_buf *b)
{
    item(b, FBW_INFO_SQL_STMT_TYPE, (uint32_t)s->stmt_type, 4);
    int cursor = s->stmt_type == FBW_STMT_SELECT;
    item(b, FBW_INFO_SQL_STMT_FLAGS, cursor ? FBW_STMT_FLAG_HAS_CURSOR : 0, 4);
    side(b, FBW_INFO_SQL_BIND, s->in, s->nin);
    side(b, FBW_INFO_SQL_SELECT, s->out, s->nout);
    uint8_t end = FBW_INFO_END;
    fbw_buf_append(b, &end, 1);
}

static void records(const fbw_script *s, fbw_buf *b)
{
    fbw_buf inner;
    fbw_buf_init(&inner);
    int kind = s->stmt_type == FBW_STMT_INSERT   ? FBW_INFO_REQ_INSERT_COUNT
               : s->stmt_type == FBW_STMT_DELETE ? FBW_INFO_REQ_DELETE_COUNT
                                                 : FBW_INFO_REQ_UPDATE_COUNT;
    item(&inner, (uint8_t)kind, s->affected, 4);
    uint8_t end = FBW_INFO_END;
    fbw_buf_append(&inner, &end, 1);
    uint8_t head[3] = {FBW_INFO_SQL_RECORDS, (uint8_t)inner.len, (uint8_t)(inner.len >> 8)};
    fbw_buf_append(b, head, 3);
    fbw_buf_append(b, inner.data, inner.len);
    fbw_buf_append(b, &end, 1);
    fbw_buf_free(&inner);
}

/* Stored segment j of scripted blob k into b (with its 2-byte length when prefixed). */
static size_t blob_segments(const fbw_script *s, uint32_t k, fbw_buf *b)
{
    size_t nseg = 0;
    for (size_t at = 0; at < s->blob_len; at += s->blob_seg, nseg++) {
        size_t n = s->blob_len - at < s->blob_seg ? s->blob_len - at : s->blob_seg;
        uint8_t len[2] = {(uint8_t)n, (uint8_t)(n >> 8)};
        fbw_buf_append(b, len, 2);
        for (size_t i = 0; i < n; i++) {
            uint8_t c = FBW_SCRIPT_BLOB_BYTE(k, at + i);
            fbw_buf_append(b, &c, 1);
        }
    }
    return nseg;
}

/* Blob info items 4..7 and the end, as server.cpp's sendInlineBlob and info_blob give them. */
static void blob_info(const fbw_script *s, fbw_buf *b)
{
    size_t nseg = (s->blob_len + s->blob_seg - 1) / s->blob_seg;
    item(b, 4, nseg, 4);
    item(b, 5, s->blob_len < s->blob_seg ? s->blob_len : s->blob_seg, 4);
    item(b, 6, s->blob_len, 4);
    item(b, 7, 0, 4);
    uint8_t end = 1;
    fbw_buf_append(b, &end, 1);
}

/* op_inline_blob for blob k when the execute asked for blobs of its size (protocol 19). */
static void send_inline(fbw_script *s, uint32_t k, fbw_buf *out)
{
    fbw_buf segs, info;
    fbw_buf_init(&segs);
    fbw_buf_init(&info);
    blob_segments(s, k, &segs);
    if (s->protocol >= 19 && s->inline_size && segs.len <= s->inline_size) {
        blob_info(s, &info);
        fbw_pkt p = {.op = FBW_OP_INLINE_BLOB};
        p.u.inline_blob.tr = s->tx_handle;
        p.u.inline_blob.id_lo = k;
        p.u.inline_blob.info = (fbw_bytes){info.data, info.len};
        p.u.inline_blob.data = (fbw_bytes){segs.data, segs.len};
        put(out, &p);
        s->inline_sent++;
    }
    fbw_buf_free(&segs);
    fbw_buf_free(&info);
}

/* op_get_segment of buffer `want` on blob k from position *at: server.cpp get_segment's loop. */
static uint16_t read_segments(const fbw_script *s, uint32_t k, uint32_t *at, size_t want, fbw_buf *b)
{
    while (want > 2) {
        want -= 2;
        if (*at >= s->blob_len)
            return 2;
        size_t in_seg = s->blob_seg - *at % s->blob_seg, left = s->blob_len - *at;
        size_t seg_left = in_seg < left ? in_seg : left;
        size_t n = seg_left < want ? seg_left : want;
        uint8_t len[2] = {(uint8_t)n, (uint8_t)(n >> 8)};
        fbw_buf_append(b, len, 2);
        for (size_t i = 0; i < n; i++) {
            uint8_t c = FBW_SCRIPT_BLOB_BYTE(k, *at + i);
            fbw_buf_append(b, &c, 1);
        }
        *at += (uint32_t)n;
        want -= n;
        if (n < seg_left)
            return 1; /* a segment cut short by the buffer */
    }
    return 0;
}

/* Row r of a fetch: every column the VARCHAR of row_text bytes 'a' + r % 26 (a BLOB a new id). */
static void row(fbw_script *s, unsigned r, fbw_buf *out)
{
    fbw_msgfmt f = {s->out, s->nout, s->nout};
    char *text = malloc(s->row_text ? s->row_text : 1);
    cr_assert(text != NULL);
    memset(text, 'a' + (int)(r % 26), s->row_text);
    fbw_value v[FBW_SCRIPT_MAX_COLS];
    memset(v, 0, sizeof v);
    for (uint16_t i = 0; i < s->nout; i++) {
        v[i].type = s->out[i].type;
        v[i].u.bytes.p = (const uint8_t *)text;
        v[i].u.bytes.n = s->row_text;
        if (v[i].type == FBW_SQL_BLOB) {
            v[i].u.quad.high = 0;
            v[i].u.quad.low = ++s->blob_ids;
            send_inline(s, v[i].u.quad.low, out);
        }
    }
    fbw_buf msg;
    fbw_buf_init(&msg);
    fbw_wr w;
    fbw_wr_init(&w, &msg);
    fbw_err err;
    cr_assert_eq(fbw_msg_encode(&w, &f, PROTOCOL, v, &err), FBW_OK, "%s", err.msg);
    fbw_pkt p = {.op = FBW_OP_FETCH_RESPONSE};
    p.u.sqldata.status = 0;
    p.u.sqldata.messages = 1;
    p.u.sqldata.msg.p = msg.data;
    p.u.sqldata.msg.n = msg.len;
    put(out, &p);
    fbw_buf_free(&msg);
    free(text);
}

static void fetch_end(fbw_buf *out, int32_t status)
{
    fbw_pkt end = {.op = FBW_OP_FETCH_RESPONSE};
    end.u.sqldata.status = status;
    put(out, &end);
}

/* The rows of one fetch: s->rows rows then end of cursor. */
static void rows(fbw_script *s, fbw_buf *out)
{
    for (unsigned r = 0; r < s->rows; r++)
        row(s, r, out);
    fetch_end(out, 100);
}

/* op_info_cursor's answer: INF_RECORD_COUNT as Firebird's DsqlCursor writes it (4 bytes). */
static void cursor_count(const fbw_script *s, fbw_buf *b)
{
    item(b, FBW_INFO_CURSOR_RECORD_COUNT, (uint64_t)s->cursor_count, 4);
    uint8_t end = FBW_INFO_END;
    fbw_buf_append(b, &end, 1);
}

static int fails(unsigned n, unsigned first, unsigned every)
{
    if (!first || n < first)
        return 0;
    return n == first || (every && (n - first) % every == 0);
}

/* One client packet's answer. */
static void answer(fbw_script *s, const fbw_pkt *p, int *exec_failed, fbw_buf *out)
{
    if (p->op != FBW_OP_PING) {
        cr_assert(s->nlog < FBW_SCRIPT_MAX_LOG, "script log full");
        s->log[s->nlog++] = p->op;
    }
    fbw_buf data;
    fbw_buf_init(&data);
    switch (p->op) {
    case FBW_OP_ALLOCATE_STATEMENT:
        response(out, s->next_handle++, NULL, 0);
        break;
    case FBW_OP_TRANSACTION:
        s->starts++;
        cr_assert(p->u.sttr.tpb.n <= sizeof s->tpb);
        memcpy(s->tpb, p->u.sttr.tpb.p, p->u.sttr.tpb.n);
        s->tpb_len = p->u.sttr.tpb.n;
        if (fails(s->starts, s->fail_start, 0)) {
            response(out, 0, NULL, 335544343u); /* invalid request BLR: any error will do */
            break;
        }
        s->tx_handle = s->next_handle++;
        response(out, s->tx_handle, NULL, 0);
        break;
    case FBW_OP_PREPARE_STATEMENT:
        s->prepares++;
        s->last_prepare_flags = p->u.sqlst.flags; /* decoded from protocol 20 on, else 0 */
        if (fails(s->prepares, s->fail_prepare, 0)) {
            response(out, 0, NULL, 335544569u); /* dynamic SQL error */
            break;
        }
        describe(s, &data);
        response(out, 0, &data, 0);
        break;
    case FBW_OP_EXECUTE:
        s->execs++;
        s->inline_size = p->u.sqldata.inline_blob_size;
        s->last_timeout = p->u.sqldata.timeout;
        s->last_cursor_flags = p->u.sqldata.cursor_flags;
        *exec_failed = fails(s->execs, s->fail_exec, s->fail_exec_every);
        if (p->u.sqldata.msg.n >= 4 && s->nin) {
            fbw_value v[FBW_SCRIPT_MAX_COLS];
            fbw_err err;
            if (fbw_msg_decode(p->u.sqldata.msg, &s->infmt, PROTOCOL, v, &err) == FBW_OK)
                s->last_param = v[0].u.i64;
        }
        /* success names the transaction the statement ran in (it is still alive) */
        response(out, *exec_failed ? 0 : p->u.sqldata.tr == FBW_INVALID_OBJECT ? s->tx_handle
                                                                              : p->u.sqldata.tr,
                 NULL, *exec_failed ? FBW_SCRIPT_GDS_UNIQUE : 0);
        break;
    case FBW_OP_EXEC_IMMEDIATE: /* success names the transaction, which is still alive */
        response(out, p->u.sqlst.tr == FBW_INVALID_OBJECT ? s->tx_handle : p->u.sqlst.tr, NULL, 0);
        break;
    case FBW_OP_FETCH:
        s->fetches++;
        if (*exec_failed) /* the cursor of a failed execute is not open */
            response(out, 0, NULL, 335544577u);
        else
            rows(s, out);
        break;
    case FBW_OP_FETCH_SCROLL: /* one row (as server.cpp for a move), or none past the end */
        s->fetches++;
        s->last_fetch_op = p->u.sqldata.fetch_op;
        s->last_fetch_pos = p->u.sqldata.fetch_pos;
        s->last_fetch_messages = p->u.sqldata.messages;
        s->last_fetch_blr = p->u.sqldata.blr.n;
        if (*exec_failed) {
            response(out, 0, NULL, 335544577u);
            break;
        }
        if (s->rows)
            row(s, (unsigned)p->u.sqldata.fetch_pos, out);
        fetch_end(out, s->rows ? 0 : 100);
        break;
    case FBW_OP_INFO_CURSOR:
        cursor_count(s, &data);
        response(out, 0, &data, 0);
        break;
    case FBW_OP_INFO_SQL:
        if (!*exec_failed)
            records(s, &data);
        response(out, 0, &data, 0);
        break;
    case FBW_OP_COMMIT:
        s->commits++;
        s->end_object = p->u.rlse.object;
        response(out, 0, NULL, fails(s->commits, s->fail_commit, 0) ? FBW_SCRIPT_GDS_DEADLOCK : 0);
        break;
    case FBW_OP_ROLLBACK:
        s->rollbacks++;
        s->end_object = p->u.rlse.object;
        response(out, 0, NULL, 0);
        break;
    case FBW_OP_CREATE_BLOB2: {
        s->blobs++;
        int bad = fails(s->blobs, s->fail_blob, 0);
        response(out, bad ? 0 : s->next_handle++, NULL, bad ? 335544329u : 0);
        break;
    }
    case FBW_OP_OPEN_BLOB2:
        s->blob_opens++;
        if (fails(s->blob_opens, s->blob_fail_open, 0)) {
            response(out, 0, NULL, 335544329u); /* invalid blob id */
            break;
        }
        s->last_alloc = s->next_handle++;
        s->blob_of[s->last_alloc] = p->u.blob.id_lo;
        s->blob_at[s->last_alloc] = 0;
        response(out, s->last_alloc, NULL, 0);
        break;
    case FBW_OP_INFO_BLOB:
        blob_info(s, &data);
        response(out, 0, &data, 0);
        break;
    case FBW_OP_GET_SEGMENT: {
        s->blob_reads++;
        uint16_t h = p->u.sgmt.blob == FBW_INVALID_OBJECT ? s->last_alloc : p->u.sgmt.blob;
        uint16_t state = read_segments(s, s->blob_of[h], &s->blob_at[h], p->u.sgmt.length, &data);
        response(out, state, &data, 0);
        break;
    }
    case FBW_OP_CLOSE_BLOB:
        s->blob_closes++;
        response(out, 0, NULL, 0);
        break;
    default: /* free_statement, blob segments, ping: plain success */
        response(out, 0, NULL, 0);
        break;
    }
    fbw_buf_free(&data);
}

/* One round trip: take what the client queued and answer all of it. */
static void round_trip(fbw_script *s)
{
    take_sent(s);
    s->waits++;
    fbw_buf out;
    fbw_buf_init(&out);
    fbw_pkt p;
    fbw_buf hold;
    int exec_failed = 0;
    while (next_pkt(s, s->protocol, &p, &hold)) {
        answer(s, &p, &exec_failed, &out);
        fbw_buf_free(&hold);
    }
    feed(s, &out);
    fbw_buf_free(&out);
}

/* Like client.c's wait: until nothing is outstanding. Requests a reply handler queued (a blob
 * read continued) make another round trip; anything else still expected is a script fault. */
int fbw_script_wait(void *arg, fbw_err *err)
{
    fbw_script *s = arg;
    (void)err;
    if (!fbw_conn_before_wait(s->c))
        return FBW_OK;
    for (int k = 0; k < 64 && (k == 0 || fbw_conn_before_wait(s->c)); k++) {
        const uint8_t *p;
        size_t n;
        cr_assert_eq(fbw_conn_pending(s->c, &p, &n), FBW_OK);
        cr_assert(n > 0 || k == 0 || fbw_buf_avail(&s->sent) > 0,
                  "replies still expected after every answer");
        round_trip(s);
    }
    cr_assert_eq(fbw_conn_outstanding(s->c), 0, "replies still expected after every answer");
    return FBW_OK;
}

void fbw_script_wait_ok(fbw_script *s)
{
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_script_wait(s, &err), FBW_OK, "%s", err.msg);
}

/* ---- connection ---- */

static void set_select(fbw_script *s)
{
    s->stmt_type = FBW_STMT_SELECT;
    memset(s->in, 0, sizeof s->in);
    memset(s->out, 0, sizeof s->out);
    s->in[0].type = FBW_SQL_LONG;
    s->in[0].length = 4;
    s->nin = 1;
    s->out[0].type = FBW_SQL_VARYING;
    s->out[0].charset = FBW_CS_UTF8;
    s->out[0].length = 8000;
    s->nout = 1;
    s->infmt.cols = s->in;
    s->infmt.n = s->infmt.cap = s->nin;
}

void fbw_script_dml(fbw_script *s, int stmt_type)
{
    s->stmt_type = stmt_type;
    s->nout = 0;
}

void fbw_script_open(fbw_script *s) { fbw_script_open_at(s, PROTOCOL, FBW_INLINE_BLOB_SIZE_DEFAULT); }

void fbw_script_open_at(fbw_script *s, int protocol, int32_t inline_blob_size)
{
    memset(s, 0, sizeof *s);
    s->protocol = protocol;
    s->blob_seg = 1000;
    s->blob_of = calloc(65536, sizeof *s->blob_of);
    s->blob_at = calloc(65536, sizeof *s->blob_at);
    cr_assert(s->blob_of && s->blob_at);
    fbw_buf_init(&s->sent);
    set_select(s);
    s->rows = 1;
    s->row_text = 10;
    s->affected = 1;
    s->next_handle = 1;
    fbw_conn_opts o;
    fbw_conn_opts_init(&o);
    o.database = "/db/script.fdb";
    o.user = "SYSDBA";
    o.password = "scripted";
    o.auth_list = "Legacy_Auth";
    o.client_host = "ws1";
    o.client_user = "joe";
    o.inline_blob_size = inline_blob_size;
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_conn_new(&o, &s->c, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_conn_start(s->c), FBW_OK);
    take_sent(s);
    fbw_pkt p;
    fbw_buf hold;
    cr_assert(next_pkt(s, 0, &p, &hold));
    cr_assert_eq(p.op, FBW_OP_CONNECT);
    fbw_buf_free(&hold);
    /* op_accept_data: protocol 17, lazy send, authenticated (Legacy_Auth checked in op_attach) */
    fbw_pkt acc = {.op = FBW_OP_ACCEPT_DATA};
    acc.u.acpt.version = (uint16_t)(0x8000 | s->protocol);
    acc.u.acpt.arch = FBW_ARCH_GENERIC;
    acc.u.acpt.type = FBW_PTYPE_LAZY_SEND;
    acc.u.acpt.authenticated = 1;
    fbw_buf out;
    fbw_buf_init(&out);
    fbw_pkt_ctx ctx = {0, NULL, NULL};
    fbw_wr w;
    fbw_wr_init(&w, &out);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, &acc), FBW_OK);
    cr_assert_eq(fbw_conn_recv(s->c, out.data, out.len), FBW_OK, "%s", fbw_conn_error(s->c)->msg);
    fbw_buf_reset(&out);
    take_sent(s);
    cr_assert(next_pkt(s, s->protocol, &p, &hold));
    cr_assert_eq(p.op, FBW_OP_ATTACH);
    fbw_buf_free(&hold);
    response(&out, s->next_handle++, NULL, 0);
    feed(s, &out);
    fbw_buf_free(&out);
    cr_assert_eq(fbw_conn_get_state(s->c), FBW_CS_READY, "%s", fbw_conn_error(s->c)->msg);
}

void fbw_script_close(fbw_script *s)
{
    /* Answer what is still queued (a freed statement's drop, say): objects freed while replies
     * were due are released by those replies. */
    fbw_script_wait_ok(s);
    for (size_t i = 0; i < s->ntxs; i++)
        fbw_tx_free(s->txs[i]);
    free(s->txs);
    fbw_conn_free(s->c);
    fbw_buf_free(&s->sent);
    free(s->blob_of);
    free(s->blob_at);
}

fbw_stmt *fbw_script_prepare(fbw_script *s, fbw_tx *tx, const char *sql)
{
    fbw_stmt *st = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_stmt_new(s->c, &st, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_stmt_prepare(st, tx, sql, strlen(sql)), FBW_OK);
    fbw_script_wait_ok(s);
    cr_assert(fbw_stmt_prepared(st), "prepare: %s", fbw_stmt_error(st)->msg);
    return st;
}

void fbw_script_start(fbw_script *s, fbw_tx **out, int read_only)
{
    fbw_tx_opts o;
    fbw_tx_opts_init(&o);
    o.read_only = read_only;
    fbw_tx **a = realloc(s->txs, (s->ntxs + 1) * sizeof *a);
    cr_assert_not_null(a);
    s->txs = a;
    fbw_err err;
    cr_assert_eq(fbw_tx_new(s->c, &a[s->ntxs], &err), FBW_OK, "%s", err.msg);
    fbw_tx *tx = *out = a[s->ntxs++];
    cr_assert_eq(fbw_tx_start(tx, &o), FBW_OK);
    fbw_script_wait_ok(s);
    cr_assert_eq(fbw_tx_state(tx), FBW_TX_ACTIVE, "start: %s", fbw_tx_error(tx)->msg);
}

unsigned fbw_script_count(const fbw_script *s, int32_t op)
{
    unsigned n = 0;
    for (unsigned i = 0; i < s->nlog; i++)
        n += s->log[i] == op;
    return n;
}
