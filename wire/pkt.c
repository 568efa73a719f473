/* SPDX-License-Identifier: MIT */
/* pkt.c - XDR layouts of every packet, one static codec per layout family
 * (src/remote/protocol.cpp xdr_protocol; docs/protocol/packets.md §4, statements.md). */
#include "pkt.h"

#include "msg.h"
#include "status.h"

#include <string.h>

/* ---- field helpers: the same calls read or write, so each layout is written once ---- */

typedef struct codec {
    fbw_rd *r; /* decoding when non-NULL */
    fbw_wr *w; /* encoding when non-NULL */
    const fbw_pkt_ctx *ctx;
    fbw_err *err;
} codec;

static void c_u32(codec *c, uint32_t *v)
{
    if (c->r)
        *v = fbw_xdr_u32(c->r);
    else
        fbw_xdr_put_u32(c->w, *v);
}

static void c_i32(codec *c, int32_t *v)
{
    if (c->r)
        *v = fbw_xdr_i32(c->r);
    else
        fbw_xdr_put_i32(c->w, *v);
}

/* xdr_short / xdr_u_short: 4 bytes, sign-extended on the way out, low 16 bits kept on the way in */
static void c_short(codec *c, uint16_t *v)
{
    if (c->r)
        *v = fbw_xdr_u16(c->r);
    else
        fbw_xdr_put_short(c->w, *v);
}

static void c_quad(codec *c, uint32_t *hi, uint32_t *lo)
{
    c_u32(c, hi);
    c_u32(c, lo);
}

static void c_bytes(codec *c, fbw_bytes *b, size_t max)
{
    if (c->r)
        *b = fbw_xdr_bytes(c->r, max);
    else
        fbw_xdr_put_bytes(c->w, b->p, b->n);
}

static void c_raw(codec *c, fbw_bytes *b) /* already-encoded bytes (messages) when encoding */
{
    if (!c->r)
        fbw_xdr_put_raw(c->w, b->p, b->n);
}

static int decoding(const codec *c) { return c->r != NULL; }
static int ok(const codec *c) { return c->r ? c->r->rc == FBW_OK : c->w->rc == FBW_OK; }

/* Frame `count` messages of the format the context names; result is one view over all of them.
 * BLR-request messages (op_send, op_transact) are plain: no NULL bitmap or indicators. */
static int c_messages(codec *c, const fbw_pkt *p, enum fbw_fmt_kind kind, uint32_t count, fbw_bytes *msg)
{
    int plain = kind == FBW_FMT_REQUEST || kind == FBW_FMT_TRANSACT_IN || kind == FBW_FMT_TRANSACT_OUT;
    if (!decoding(c)) {
        c_raw(c, msg);
        return FBW_OK;
    }
    if (!ok(c) || count == 0) {
        msg->p = NULL;
        msg->n = 0;
        return FBW_OK;
    }
    if (!c->ctx || !c->ctx->format)
        return fbw_err_set(c->err, FBW_E_UNSUPPORTED, "no message format known for this stream");
    const fbw_msgfmt *f = c->ctx->format(c->ctx->arg, kind, p, c->err);
    if (!f) /* a callback that forgot to say why must still not let decoding go on */
        return c->err && c->err->code != FBW_OK ? c->err->code : FBW_E_UNSUPPORTED;
    const uint8_t *start = c->r->p;
    for (uint32_t i = 0; i < count && c->r->rc == FBW_OK; i++) {
        fbw_bytes one;
        int rc = plain ? fbw_msg_frame_plain(c->r, f, &one)
                       : fbw_msg_frame(c->r, f, c->ctx->protocol, &one);
        if (rc != FBW_OK && c->r->rc == FBW_OK)
            fbw_rd_fail(c->r, rc, "bad message data");
    }
    msg->p = start;
    msg->n = (size_t)(c->r->p - start);
    return FBW_OK;
}

static int proto(const codec *c) { return c->ctx ? c->ctx->protocol : 0; }

/* ---- layout families ---- */

static int lay_connect(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.cnct) *k = &p->u.cnct;
    c_i32(c, &k->operation);
    c_short(c, &k->cversion);
    c_i32(c, &k->client_arch);
    c_bytes(c, &k->file, FBW_STR_MAX);
    uint16_t count = decoding(c) ? 0 : k->count;
    c_short(c, &count);
    c_bytes(c, &k->user_id, FBW_STR_MAX);
    if (decoding(c)) {
        if (count > FBW_CNCT_MAX_WIRE)
            return fbw_rd_fail(c->r, FBW_E_PROTO, "op_connect offers too many protocol versions");
        k->count_wire = count;
        k->count = count > FBW_CNCT_MAX_VERSIONS ? FBW_CNCT_MAX_VERSIONS : count;
    }
    for (uint16_t i = 0; i < count; i++) {
        fbw_cnct_version dummy = {0}, *v = i < FBW_CNCT_MAX_VERSIONS ? &k->ver[i] : &dummy;
        uint32_t arch = (uint32_t)v->arch;
        c_short(c, &v->version);
        c_u32(c, &arch);
        v->arch = (int32_t)arch;
        c_short(c, &v->min_type);
        c_short(c, &v->max_type);
        c_short(c, &v->weight);
    }
    return FBW_OK;
}

static int lay_accept(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.acpt) *a = &p->u.acpt;
    c_short(c, &a->version);
    c_i32(c, &a->arch);
    c_short(c, &a->type);
    if (p->op == FBW_OP_ACCEPT)
        return FBW_OK;
    c_bytes(c, &a->data, FBW_STR_MAX);
    c_bytes(c, &a->plugin, FBW_STR_MAX);
    c_short(c, &a->authenticated);
    c_bytes(c, &a->keys, FBW_STR_MAX);
    return FBW_OK;
}

static int lay_response(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.resp) *r = &p->u.resp;
    c_short(c, &r->object);
    c_quad(c, &r->blob_hi, &r->blob_lo);
    c_bytes(c, &r->data, FBW_BUF_MAX);
    if (decoding(c))
        r->status = fbw_status_frame(c->r);
    else
        c_raw(c, &r->status);
    return FBW_OK;
}

static int lay_attach(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.atch.db);
    c_bytes(c, &p->u.atch.file, FBW_STR_MAX);
    c_bytes(c, &p->u.atch.dpb, FBW_BUF_MAX);
    return FBW_OK;
}

static int lay_release(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.rlse.object);
    return FBW_OK;
}

static int lay_transaction(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.sttr.db);
    c_bytes(c, &p->u.sttr.tpb, FBW_STR_MAX);
    return FBW_OK;
}

static int lay_prepare2(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.prep.tr);
    c_bytes(c, &p->u.prep.data, FBW_STR_MAX);
    return FBW_OK;
}

static int lay_blob(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.blob) *b = &p->u.blob;
    if (p->op == FBW_OP_OPEN_BLOB2 || p->op == FBW_OP_CREATE_BLOB2)
        c_bytes(c, &b->bpb, FBW_STR_MAX);
    c_short(c, &b->tr);
    c_quad(c, &b->id_hi, &b->id_lo);
    return FBW_OK;
}

static int lay_segment(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.sgmt.blob);
    c_short(c, &p->u.sgmt.length);
    c_bytes(c, &p->u.sgmt.segment, FBW_BUF_MAX);
    return FBW_OK;
}

static int lay_seek(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.seek.blob);
    c_short(c, &p->u.seek.mode);
    c_i32(c, &p->u.seek.offset);
    return FBW_OK;
}

static int lay_info(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.info) *i = &p->u.info;
    c_short(c, &i->object);
    c_short(c, &i->incarnation);
    c_bytes(c, &i->items, FBW_STR_MAX);
    if (p->op == FBW_OP_SERVICE_START)
        return FBW_OK;
    if (p->op == FBW_OP_SERVICE_INFO)
        c_bytes(c, &i->recv_items, FBW_STR_MAX);
    c_u32(c, &i->buffer_length);
    if (decoding(c) && (i->buffer_length >> 16) == 0xFFFF) /* fixupLength */
        i->buffer_length &= 0xFFFF;
    return FBW_OK;
}

static int lay_sqlst(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.sqlst) *s = &p->u.sqlst;
    if (p->op == FBW_OP_EXEC_IMMEDIATE2) {
        c_bytes(c, &s->blr, FBW_BUF_MAX);
        c_short(c, &s->msg_number);
        c_short(c, &s->messages);
        int rc = c_messages(c, p, FBW_FMT_IMMEDIATE_IN, s->messages ? 1 : 0, &s->msg);
        if (rc)
            return rc;
        c_bytes(c, &s->out_blr, FBW_BUF_MAX);
        c_short(c, &s->out_msg_number);
        if (proto(c) >= 19)
            c_u32(c, &s->inline_blob_size);
    }
    c_short(c, &s->tr);
    c_short(c, &s->stmt);
    c_short(c, &s->dialect);
    c_bytes(c, &s->sql, FBW_BUF_MAX);
    c_bytes(c, &s->items, FBW_STR_MAX);
    c_u32(c, &s->buffer_length);
    if (decoding(c) && (s->buffer_length >> 16) == 0xFFFF)
        s->buffer_length &= 0xFFFF;
    if (proto(c) >= 20)
        c_short(c, &s->flags);
    return FBW_OK;
}

static int lay_execute(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.sqldata) *d = &p->u.sqldata;
    c_short(c, &d->stmt);
    c_short(c, &d->tr);
    c_bytes(c, &d->blr, FBW_BUF_MAX);
    c_short(c, &d->msg_number);
    c_short(c, &d->messages);
    int rc = c_messages(c, p, FBW_FMT_EXEC_IN, d->messages ? 1 : 0, &d->msg);
    if (rc)
        return rc;
    if (p->op == FBW_OP_EXECUTE2) {
        c_bytes(c, &d->out_blr, FBW_BUF_MAX);
        c_short(c, &d->out_msg_number);
    }
    if (proto(c) >= 16)
        c_u32(c, &d->timeout);
    if (proto(c) >= 18)
        c_u32(c, &d->cursor_flags);
    if (proto(c) >= 19)
        c_u32(c, &d->inline_blob_size);
    return FBW_OK;
}

static int lay_fetch(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.sqldata) *d = &p->u.sqldata;
    c_short(c, &d->stmt);
    c_bytes(c, &d->blr, FBW_BUF_MAX);
    c_short(c, &d->msg_number);
    c_short(c, &d->messages);
    if (p->op == FBW_OP_FETCH_SCROLL) {
        c_short(c, &d->fetch_op);
        c_i32(c, &d->fetch_pos);
    }
    return FBW_OK;
}

static int lay_fetch_response(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.sqldata) *d = &p->u.sqldata;
    c_i32(c, &d->status);
    c_short(c, &d->messages);
    return c_messages(c, p, FBW_FMT_FETCH, d->messages ? 1 : 0, &d->msg);
}

static int lay_sql_response(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.sqldata) *d = &p->u.sqldata;
    c_short(c, &d->messages);
    return c_messages(c, p, FBW_FMT_SQL_RESPONSE, d->messages ? 1 : 0, &d->msg);
}

static int lay_free(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.sqlfree.stmt);
    c_short(c, &p->u.sqlfree.option);
    return FBW_OK;
}

static int lay_set_cursor(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.sqlcur.stmt);
    c_bytes(c, &p->u.sqlcur.name, FBW_STR_MAX);
    c_short(c, &p->u.sqlcur.type);
    return FBW_OK;
}

static int lay_cont_auth(codec *c, fbw_pkt *p)
{
    c_bytes(c, &p->u.auth.data, FBW_STR_MAX);
    c_bytes(c, &p->u.auth.name, FBW_STR_MAX);
    c_bytes(c, &p->u.auth.list, FBW_STR_MAX);
    c_bytes(c, &p->u.auth.keys, FBW_STR_MAX);
    return FBW_OK;
}

static int lay_trusted(codec *c, fbw_pkt *p)
{
    c_bytes(c, &p->u.trau.data, FBW_STR_MAX);
    return FBW_OK;
}

static int lay_cancel(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.cancel.kind);
    return FBW_OK;
}

static int lay_crypt(codec *c, fbw_pkt *p)
{
    c_bytes(c, &p->u.crypt.plugin, FBW_STR_MAX);
    c_bytes(c, &p->u.crypt.key, FBW_STR_MAX);
    return FBW_OK;
}

/* The reply-size field exists from P14 on, and while still connecting (the server then is >= P15). */
static int lay_crypt_callback(codec *c, fbw_pkt *p)
{
    c_bytes(c, &p->u.cc.data, FBW_STR_MAX);
    p->u.cc.has_reply = proto(c) >= 14 || proto(c) == 0;
    if (p->u.cc.has_reply)
        c_short(c, &p->u.cc.reply);
    return FBW_OK;
}

static int lay_request(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.req.type);
    c_short(c, &p->u.req.object);
    c_i32(c, &p->u.req.partner);
    return FBW_OK;
}

static int lay_event(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.event) *e = &p->u.event;
    c_short(c, &e->db);
    if (p->op != FBW_OP_CANCEL_EVENTS) {
        c_bytes(c, &e->items, FBW_STR_MAX);
        c_i32(c, &e->ast);
        c_i32(c, &e->arg);
    }
    c_i32(c, &e->rid);
    return FBW_OK;
}

static int lay_ddl(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.ddl.db);
    if (p->op == FBW_OP_DDL)
        c_short(c, &p->u.ddl.tr);
    c_bytes(c, &p->u.ddl.blr, FBW_BUF_MAX);
    return FBW_OK;
}

static int lay_account(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.account.db);
    c_bytes(c, &p->u.account.data, FBW_BUF_MAX);
    return FBW_OK;
}

static int lay_authenticate_user(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.authuser.db);
    c_bytes(c, &p->u.authuser.dpb, FBW_STR_MAX);
    c_bytes(c, &p->u.authuser.items, FBW_STR_MAX);
    c_short(c, &p->u.authuser.buffer_length);
    return FBW_OK;
}

static int lay_batch_create(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.batch_create.stmt);
    c_bytes(c, &p->u.batch_create.blr, FBW_BUF_MAX);
    c_u32(c, &p->u.batch_create.msglen);
    c_bytes(c, &p->u.batch_create.pb, FBW_STR_MAX);
    return FBW_OK;
}

static int lay_batch_msg(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.batch_msg.stmt);
    c_u32(c, &p->u.batch_msg.count);
    if (decoding(c) && p->u.batch_msg.count > (1u << 24))
        return fbw_rd_fail(c->r, FBW_E_PROTO, "op_batch_msg message count too large");
    return c_messages(c, p, FBW_FMT_BATCH, p->u.batch_msg.count, &p->u.batch_msg.data);
}

static int lay_batch_exec(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.batch_exec.stmt);
    c_short(c, &p->u.batch_exec.tr);
    return FBW_OK;
}

/* Completion state: update counts, then (position, status vector) pairs, then bare error positions. */
static int lay_batch_cs(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.batch_cs) *b = &p->u.batch_cs;
    c_short(c, &b->stmt);
    c_u32(c, &b->reccount);
    c_u32(c, &b->updates);
    c_u32(c, &b->vectors);
    c_u32(c, &b->errors);
    if (!decoding(c)) {
        c_raw(c, &b->detail);
        return FBW_OK;
    }
    if (b->updates > (1u << 24) || b->vectors > (1u << 24) || b->errors > (1u << 24))
        return fbw_rd_fail(c->r, FBW_E_PROTO, "op_batch_cs counts too large");
    const uint8_t *start = c->r->p;
    fbw_xdr_skip(c->r, (size_t)b->updates * 4);
    for (uint32_t i = 0; i < b->vectors && c->r->rc == FBW_OK; i++) {
        (void)fbw_xdr_u32(c->r);
        (void)fbw_status_frame(c->r);
    }
    fbw_xdr_skip(c->r, (size_t)b->errors * 4);
    b->detail.p = start;
    b->detail.n = (size_t)(c->r->p - start);
    return FBW_OK;
}

static int lay_batch_bpb(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.batch_bpb.stmt);
    c_bytes(c, &p->u.batch_bpb.bpb, FBW_STR_MAX);
    return FBW_OK;
}

static int lay_batch_regblob(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.batch_regblob.stmt);
    c_quad(c, &p->u.batch_regblob.exist_hi, &p->u.batch_regblob.exist_lo);
    c_quad(c, &p->u.batch_regblob.id_hi, &p->u.batch_regblob.id_lo);
    return FBW_OK;
}

/* The stream's length, then its blobs in wire form (bstream.c); decoding needs the state the
 * statement's previous op_batch_blob_stream left, from the context. */
static int lay_batch_blob_stream(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.bstream) *b = &p->u.bstream;
    c_short(c, &b->stmt);
    c_u32(c, &b->length);
    if (!decoding(c)) {
        c_raw(c, &b->data);
        return FBW_OK;
    }
    if (!ok(c))
        return FBW_OK;
    if (b->length > FBW_BUF_MAX)
        return fbw_rd_fail(c->r, FBW_E_PROTO, "batch blob stream too long");
    if (!c->ctx || !c->ctx->blob_stream)
        return fbw_err_set(c->err, FBW_E_UNSUPPORTED, "no batch blob stream state known for this stream");
    const fbw_bstream *st = c->ctx->blob_stream(c->ctx->arg, b->stmt, c->err);
    if (!st)
        return c->err && c->err->code != FBW_OK ? c->err->code : FBW_E_UNSUPPORTED;
    b->st = *st;
    const uint8_t *start = c->r->p;
    (void)fbw_bstream_walk(c->r, b->length, &b->st, &b->blobs);
    b->data.p = start;
    b->data.n = (size_t)(c->r->p - start);
    return FBW_OK;
}

static int lay_inline_blob(codec *c, fbw_pkt *p)
{
    c_short(c, &p->u.inline_blob.tr);
    c_quad(c, &p->u.inline_blob.id_hi, &p->u.inline_blob.id_lo);
    c_bytes(c, &p->u.inline_blob.info, FBW_STR_MAX);
    c_bytes(c, &p->u.inline_blob.data, FBW_BUF_MAX);
    return FBW_OK;
}

/* BLR requests (xdr_protocol: op_start ... op_start_send_and_receive): five shorts; the op_send
 * family then always carries one message, whatever `messages` says (xdr_request). */
static int lay_data(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.data) *d = &p->u.data;
    c_short(c, &d->request);
    c_short(c, &d->incarnation);
    c_short(c, &d->tr);
    c_short(c, &d->msg_number);
    c_short(c, &d->messages);
    if (p->op == FBW_OP_START || p->op == FBW_OP_RECEIVE || p->op == FBW_OP_START_AND_RECEIVE)
        return FBW_OK;
    return c_messages(c, p, FBW_FMT_REQUEST, 1, &d->msg);
}

static int lay_transact(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.trrq) *t = &p->u.trrq;
    c_short(c, &t->db);
    c_short(c, &t->tr);
    /* The BLR goes twice: xdr_trrq_blr maps it, then xdr_protocol maps the same string again. */
    c_bytes(c, &t->blr, FBW_BUF_MAX);
    fbw_bytes again = t->blr;
    c_bytes(c, &again, FBW_BUF_MAX);
    if (decoding(c) && ok(c) &&
        (again.n != t->blr.n || (again.n && memcmp(again.p, t->blr.p, again.n) != 0)))
        return fbw_rd_fail(c->r, FBW_E_PROTO, "op_transact: the two copies of the BLR differ");
    c_short(c, &t->messages);
    return c_messages(c, p, FBW_FMT_TRANSACT_IN, t->messages ? 1 : 0, &t->msg);
}

static int lay_transact_response(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.trrq) *t = &p->u.trrq;
    c_short(c, &t->messages);
    return c_messages(c, p, FBW_FMT_TRANSACT_OUT, t->messages ? 1 : 0, &t->msg);
}

/* xdr_longs: a byte count, then count / 4 longs (the remainder is not sent) */
static void c_longs(codec *c, fbw_bytes *b)
{
    uint32_t n = (uint32_t)b->n;
    c_u32(c, &n);
    if (decoding(c) && (n >> 16) == 0xFFFF) /* fixupLength */
        n &= 0xFFFF;
    if (!decoding(c)) {
        fbw_xdr_put_raw(c->w, b->p, b->n / 4 * 4);
        return;
    }
    if (n > FBW_BUF_MAX) {
        fbw_rd_fail(c->r, FBW_E_PROTO, "parameter vector too long");
        return;
    }
    b->p = c->r->p;
    fbw_xdr_skip(c->r, n / 4 * 4);
    b->n = ok(c) ? n / 4 * 4 : 0;
}

/* xdr_slice: the buffer length, then length / stride elements of the SDL's element type */
static int c_slice(codec *c, const fbw_pkt *p, const fbw_col *elem, uint32_t *len, fbw_bytes *data)
{
    c_u32(c, len);
    if (!decoding(c)) {
        c_raw(c, data);
        return FBW_OK;
    }
    data->p = NULL;
    data->n = 0;
    if (!ok(c) || *len == 0)
        return FBW_OK;
    if (*len > FBW_BUF_MAX)
        return fbw_rd_fail(c->r, FBW_E_PROTO, "slice too long");
    fbw_col from_cb;
    if (!elem) {
        if (!c->ctx || !c->ctx->format)
            return fbw_err_set(c->err, FBW_E_UNSUPPORTED, "no slice description known for this stream");
        const fbw_msgfmt *f = c->ctx->format(c->ctx->arg, FBW_FMT_SLICE, p, c->err);
        if (!f)
            return c->err && c->err->code != FBW_OK ? c->err->code : FBW_E_UNSUPPORTED;
        if (f->n != 1)
            return fbw_err_set(c->err, FBW_E_USAGE, "a slice element format has one column");
        from_cb = f->cols[0];
        elem = &from_cb;
    }
    size_t stride = fbw_slice_stride(elem);
    if (stride == 0)
        return fbw_rd_fail(c->r, FBW_E_PROTO, "slice element of no size");
    fbw_msgfmt one = {(fbw_col *)elem, 1, 1};
    const uint8_t *start = c->r->p;
    for (uint32_t i = 0; i < *len / stride && ok(c); i++) {
        fbw_bytes e;
        (void)fbw_msg_frame_plain(c->r, &one, &e);
    }
    data->p = start;
    data->n = (size_t)(c->r->p - start);
    return FBW_OK;
}

static int lay_get_slice(codec *c, fbw_pkt *p)
{
    __typeof__(p->u.slc) *s = &p->u.slc;
    c_short(c, &s->tr);
    c_quad(c, &s->id_hi, &s->id_lo);
    c_u32(c, &s->length);
    c_bytes(c, &s->sdl, FBW_BUF_MAX);
    c_longs(c, &s->params);
    fbw_col elem;
    int have = 0;
    if (decoding(c) && ok(c)) {
        /* the slice (usually empty in op_get_slice) needs the SDL only when it has bytes */
        fbw_err e;
        have = fbw_sdl_element(s->sdl.p, s->sdl.n, &elem, &e) == FBW_OK;
        const uint8_t *q = c->r->p;
        if (!have && c->r->end - q >= 4 && (q[0] | q[1] | q[2] | q[3]) != 0)
            return fbw_err_set(c->err, FBW_E_BADVALUE, "%s", e.msg);
    }
    return c_slice(c, p, have ? &elem : NULL, &s->slice_length, &s->slice);
}

static int lay_slice(codec *c, fbw_pkt *p)
{
    c_u32(c, &p->u.slc.length);
    return c_slice(c, p, NULL, &p->u.slc.slice_length, &p->u.slc.slice);
}

static int lay_none(codec *c, fbw_pkt *p)
{
    (void)c;
    (void)p;
    return FBW_OK;
}

typedef int (*layout_fn)(codec *, fbw_pkt *);

static layout_fn layout_of(int32_t op)
{
    switch (op) {
    case FBW_OP_REJECT: case FBW_OP_DISCONNECT: case FBW_OP_DUMMY: case FBW_OP_PING:
    case FBW_OP_ABORT_AUX_CONNECTION: case FBW_OP_EXIT: case FBW_OP_BATCH_SYNC:
        return lay_none;
    case FBW_OP_CONNECT: return lay_connect;
    case FBW_OP_ACCEPT: case FBW_OP_ACCEPT_DATA: case FBW_OP_COND_ACCEPT: return lay_accept;
    case FBW_OP_RESPONSE: case FBW_OP_RESPONSE_PIGGYBACK: return lay_response;
    case FBW_OP_ATTACH: case FBW_OP_CREATE: case FBW_OP_SERVICE_ATTACH: return lay_attach;
    case FBW_OP_COMMIT: case FBW_OP_PREPARE: case FBW_OP_ROLLBACK: case FBW_OP_UNWIND:
    case FBW_OP_RELEASE: case FBW_OP_CLOSE_BLOB: case FBW_OP_CANCEL_BLOB: case FBW_OP_DETACH:
    case FBW_OP_DROP_DATABASE: case FBW_OP_SERVICE_DETACH: case FBW_OP_COMMIT_RETAINING:
    case FBW_OP_ROLLBACK_RETAINING: case FBW_OP_ALLOCATE_STATEMENT: case FBW_OP_BATCH_RLS:
    case FBW_OP_BATCH_CANCEL:
        return lay_release;
    case FBW_OP_TRANSACTION: case FBW_OP_RECONNECT: return lay_transaction;
    case FBW_OP_PREPARE2: return lay_prepare2;
    case FBW_OP_OPEN_BLOB: case FBW_OP_CREATE_BLOB: case FBW_OP_OPEN_BLOB2: case FBW_OP_CREATE_BLOB2:
        return lay_blob;
    case FBW_OP_GET_SEGMENT: case FBW_OP_PUT_SEGMENT: case FBW_OP_BATCH_SEGMENTS: return lay_segment;
    case FBW_OP_SEEK_BLOB: return lay_seek;
    case FBW_OP_INFO_BLOB: case FBW_OP_INFO_DATABASE: case FBW_OP_INFO_REQUEST:
    case FBW_OP_INFO_TRANSACTION: case FBW_OP_SERVICE_INFO: case FBW_OP_INFO_SQL:
    case FBW_OP_INFO_BATCH: case FBW_OP_INFO_CURSOR: case FBW_OP_SERVICE_START:
        return lay_info;
    case FBW_OP_PREPARE_STATEMENT: case FBW_OP_EXEC_IMMEDIATE: case FBW_OP_EXEC_IMMEDIATE2:
        return lay_sqlst;
    case FBW_OP_EXECUTE: case FBW_OP_EXECUTE2: return lay_execute;
    case FBW_OP_FETCH: case FBW_OP_FETCH_SCROLL: return lay_fetch;
    case FBW_OP_FETCH_RESPONSE: return lay_fetch_response;
    case FBW_OP_SQL_RESPONSE: return lay_sql_response;
    case FBW_OP_FREE_STATEMENT: return lay_free;
    case FBW_OP_SET_CURSOR: return lay_set_cursor;
    case FBW_OP_CONT_AUTH: return lay_cont_auth;
    case FBW_OP_TRUSTED_AUTH: return lay_trusted;
    case FBW_OP_CANCEL: return lay_cancel;
    case FBW_OP_CRYPT: return lay_crypt;
    case FBW_OP_CRYPT_KEY_CALLBACK: return lay_crypt_callback;
    case FBW_OP_CONNECT_REQUEST: case FBW_OP_AUX_CONNECT: return lay_request;
    case FBW_OP_QUE_EVENTS: case FBW_OP_EVENT: case FBW_OP_CANCEL_EVENTS: return lay_event;
    case FBW_OP_DDL: case FBW_OP_COMPILE: return lay_ddl;
    case FBW_OP_UPDATE_ACCOUNT_INFO: case FBW_OP_REPL_DATA: return lay_account;
    case FBW_OP_AUTHENTICATE_USER: return lay_authenticate_user;
    case FBW_OP_BATCH_CREATE: return lay_batch_create;
    case FBW_OP_BATCH_MSG: return lay_batch_msg;
    case FBW_OP_BATCH_EXEC: return lay_batch_exec;
    case FBW_OP_BATCH_CS: return lay_batch_cs;
    case FBW_OP_BATCH_SET_BPB: return lay_batch_bpb;
    case FBW_OP_BATCH_REGBLOB: return lay_batch_regblob;
    case FBW_OP_BATCH_BLOB_STREAM: return lay_batch_blob_stream;
    case FBW_OP_INLINE_BLOB: return lay_inline_blob;
    case FBW_OP_START: case FBW_OP_START_AND_RECEIVE: case FBW_OP_RECEIVE: case FBW_OP_SEND:
    case FBW_OP_START_AND_SEND: case FBW_OP_START_SEND_AND_RECEIVE:
        return lay_data;
    case FBW_OP_TRANSACT: return lay_transact;
    case FBW_OP_TRANSACT_RESPONSE: return lay_transact_response;
    case FBW_OP_GET_SLICE: case FBW_OP_PUT_SLICE: return lay_get_slice;
    case FBW_OP_SLICE: return lay_slice;
    default: return NULL;
    }
}

int fbw_pkt_has_layout(int32_t op) { return layout_of(op) != NULL; }

int fbw_pkt_decode(const fbw_pkt_ctx *ctx, const uint8_t *p, size_t n, fbw_pkt *out, size_t *used,
                   fbw_err *err)
{
    fbw_rd r;
    fbw_rd_init(&r, p, n, FBW_AGAIN);
    memset(out, 0, sizeof *out);
    out->op = fbw_xdr_i32(&r);
    if (r.rc != FBW_OK)
        return r.rc;
    char nb[16];
    const char *name = fbw_op_name(out->op, nb, sizeof nb);
    layout_fn lay = layout_of(out->op);
    if (!lay) {
        int known = fbw_op_info(out->op) != NULL;
        int rc = fbw_err_set(err, known ? FBW_E_UNSUPPORTED : FBW_E_PROTO,
                             known ? "%s: decoding this op is not supported by fbwire"
                                   : "unknown op code %s at offset 0: framing lost",
                             name);
        if (err)
            err->op = out->op;
        return rc;
    }
    codec c = {&r, NULL, ctx, err};
    int rc = lay(&c, out);
    if (rc == FBW_OK)
        rc = r.rc;
    if (rc == FBW_OK) {
        *used = fbw_rd_offset(&r);
        return FBW_OK;
    }
    if (rc == FBW_AGAIN)
        return FBW_AGAIN;
    if (err) {
        if (r.rc == rc && r.what)
            fbw_err_set(err, rc, "%s: %s at offset %zu", name, r.what, fbw_rd_offset(&r));
        else if (err->code == rc) /* the format callback or message framing said why */
            fbw_err_prefix(err, "%s", name);
        else
            fbw_err_set(err, rc, "%s: %s", name, fbw_rc_name(rc));
        err->op = out->op;
        err->offset = fbw_rd_offset(&r);
    }
    return rc;
}

int fbw_pkt_encode(const fbw_pkt_ctx *ctx, fbw_wr *w, const fbw_pkt *p)
{
    layout_fn lay = layout_of(p->op);
    if (!lay)
        return FBW_E_UNSUPPORTED;
    fbw_xdr_put_i32(w, p->op);
    codec c = {NULL, w, ctx, NULL};
    fbw_pkt copy = *p; /* layouts take non-const pointers because they also decode */
    int rc = lay(&c, &copy);
    return rc ? rc : w->rc;
}
