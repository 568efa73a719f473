/* SPDX-License-Identifier: MIT */
/* batch.c - the batch API (docs/protocol/statements.md §6; server.cpp batch_*, protocol.cpp
 * op_batch_cs, FirebirdInterface.idl interface Batch). */
#include "batch.h"
#include "request.h"

#include "pending.h"
#include "status.h"

#include <stdlib.h>
#include <string.h>

/* IBatch parameter block (FirebirdInterface.idl) */
enum { PB_VERSION1 = 1, TAG_MULTIERROR = 1, TAG_RECORD_COUNTS = 2, TAG_BUFFER_BYTES_SIZE = 3,
       TAG_DETAILED_ERRORS = 5 };

#define MIN_VECTOR_BYTES 8 /* position + isc_arg_end */

/* ---- parameter block ---- */

void fbw_batch_opts_init(fbw_batch_opts *o)
{
    memset(o, 0, sizeof *o);
    o->record_counts = 1;
}

static void put_int(uint8_t *t, size_t *n, uint8_t tag, uint32_t v)
{
    t[(*n)++] = tag;
    t[(*n)++] = 4;
    t[(*n)++] = 0;
    t[(*n)++] = 0;
    t[(*n)++] = 0;
    for (int i = 0; i < 4; i++)
        t[(*n)++] = (uint8_t)(v >> (8 * i));
}

int fbw_batch_pb_build(const fbw_batch_opts *o, fbw_buf *out)
{
    uint8_t t[1 + 4 * 9];
    size_t n = 0;
    t[n++] = PB_VERSION1;
    if (o->multierror)
        put_int(t, &n, TAG_MULTIERROR, 1);
    if (o->record_counts)
        put_int(t, &n, TAG_RECORD_COUNTS, 1);
    if (o->buffer_bytes)
        put_int(t, &n, TAG_BUFFER_BYTES_SIZE, o->buffer_bytes);
    if (o->detailed_errors)
        put_int(t, &n, TAG_DETAILED_ERRORS, o->detailed_errors);
    return fbw_buf_append(out, t, n);
}

/* ---- completion state ---- */

void fbw_batch_cs_free(fbw_batch_cs *cs)
{
    free(cs->updates);
    free(cs->errors);
    free(cs->detail);
    memset(cs, 0, sizeof *cs);
}

static int cs_fail(fbw_batch_cs *cs, fbw_err *err, const fbw_rd *r, const char *what, uint32_t i)
{
    fbw_batch_cs_free(cs);
    return fbw_err_set(err, FBW_E_BADVALUE, "op_batch_cs: %s %u at detail offset %zu", what,
                       (unsigned)i, fbw_rd_offset(r));
}

static int cs_alloc(fbw_batch_cs *cs, const fbw_pkt *p, fbw_err *err)
{
    size_t n = p->u.batch_cs.detail.n;
    uint64_t need = (uint64_t)p->u.batch_cs.updates * 4 + (uint64_t)p->u.batch_cs.vectors * MIN_VECTOR_BYTES +
                    (uint64_t)p->u.batch_cs.errors * 4;
    if (need > n) /* counts the bytes cannot hold: refuse before allocating for them */
        return fbw_err_set(err, FBW_E_BADVALUE,
                           "op_batch_cs: counts need at least %llu bytes, detail has %zu",
                           (unsigned long long)need, n);
    size_t nerr = (size_t)p->u.batch_cs.vectors + p->u.batch_cs.errors;
    cs->updates = malloc(p->u.batch_cs.updates ? p->u.batch_cs.updates * sizeof *cs->updates : 1);
    cs->errors = malloc(nerr ? nerr * sizeof *cs->errors : 1);
    cs->detail = malloc(n ? n : 1);
    if (!cs->updates || !cs->errors || !cs->detail) {
        fbw_batch_cs_free(cs);
        return fbw_err_set(err, FBW_E_NOMEM, "out of memory");
    }
    if (n)
        memcpy(cs->detail, p->u.batch_cs.detail.p, n);
    cs->detail_len = n;
    return FBW_OK;
}

static uint32_t position(fbw_rd *r, const fbw_batch_cs *cs, int *bad)
{
    uint32_t pos = fbw_xdr_u32(r);
    *bad = r->rc == FBW_OK && pos >= cs->reccount;
    return pos;
}

int fbw_batch_cs_parse(const fbw_pkt *p, fbw_batch_cs *cs, fbw_err *err)
{
    memset(cs, 0, sizeof *cs);
    if (p->op != FBW_OP_BATCH_CS)
        return fbw_err_set(err, FBW_E_USAGE, "op %d is not op_batch_cs", (int)p->op);
    cs->reccount = p->u.batch_cs.reccount;
    if (p->u.batch_cs.updates > cs->reccount)
        return fbw_err_set(err, FBW_E_BADVALUE, "op_batch_cs: %u update counts for %u messages",
                           (unsigned)p->u.batch_cs.updates, (unsigned)cs->reccount);
    int rc = cs_alloc(cs, p, err);
    if (rc)
        return rc;
    fbw_rd r;
    fbw_rd_init(&r, cs->detail, cs->detail_len, FBW_E_BADVALUE);
    for (uint32_t i = 0; i < p->u.batch_cs.updates; i++)
        cs->updates[cs->nupdates++] = fbw_xdr_i32(&r);
    int bad = 0;
    for (uint32_t i = 0; i < p->u.batch_cs.vectors && r.rc == FBW_OK; i++) {
        fbw_batch_cs_error *e = &cs->errors[cs->nerrors];
        e->pos = position(&r, cs, &bad);
        if (bad)
            return cs_fail(cs, err, &r, "status position out of range for vector", i);
        fbw_bytes v = fbw_status_frame(&r);
        if (r.rc != FBW_OK)
            return cs_fail(cs, err, &r, "bad status vector", i);
        e->off = (size_t)(v.p - cs->detail);
        e->len = v.n;
        cs->nerrors++;
    }
    for (uint32_t i = 0; i < p->u.batch_cs.errors && r.rc == FBW_OK; i++) {
        fbw_batch_cs_error *e = &cs->errors[cs->nerrors];
        e->pos = position(&r, cs, &bad);
        if (bad)
            return cs_fail(cs, err, &r, "error position out of range for entry", i);
        e->off = e->len = 0;
        cs->nerrors++;
    }
    if (r.rc != FBW_OK)
        return cs_fail(cs, err, &r, "detail ends early; entries read", cs->nupdates + cs->nerrors);
    if (fbw_rd_left(&r) != 0)
        return cs_fail(cs, err, &r, "bytes left over after entries", cs->nupdates + cs->nerrors);
    return FBW_OK;
}

int32_t fbw_batch_cs_state(const fbw_batch_cs *cs, uint32_t i)
{
    if (i >= cs->reccount)
        return FBW_BATCH_NOT_EXECUTED;
    if (i < cs->nupdates)
        return cs->updates[i];
    for (uint32_t k = 0; k < cs->nerrors; k++)
        if (cs->errors[k].pos == i)
            return FBW_BATCH_EXECUTE_FAILED;
    return FBW_BATCH_SUCCESS_NO_INFO;
}

int fbw_batch_cs_error_at(const fbw_batch_cs *cs, uint32_t k, uint32_t *pos, fbw_err *err)
{
    if (k >= cs->nerrors)
        return fbw_err_set(err, FBW_E_USAGE, "batch error %u of %u", (unsigned)k, (unsigned)cs->nerrors);
    const fbw_batch_cs_error *e = &cs->errors[k];
    *pos = e->pos;
    if (e->len == 0)
        return fbw_err_set(err, FBW_E_SERVER,
                           "message %u failed; the server kept no detail (TAG_DETAILED_ERRORS)",
                           (unsigned)e->pos);
    fbw_bytes v = {cs->detail + e->off, e->len};
    return fbw_status_decode(v, err, NULL);
}

/* ---- the batch on a connection ---- */

struct fbw_batch {
    fbw_conn *conn;
    const fbw_msgfmt *fmt;  /* the format messages travel in: the statement's, compact or not */
    const fbw_msgfmt *described; /* the statement's described input, what values are given in */
    fbw_value *wire_vals;   /* values converted to fmt when it differs from described */
    uint16_t stmt;
    int protocol;
    fbw_buf blr, pb;
    uint32_t msglen;
    size_t packet;
    int created;            /* op_batch_create queued, no op_batch_rls since */
    fbw_buf msgs;           /* encoded messages of the pending op_batch_msg */
    uint32_t nmsgs;
    uint64_t added;
    fbw_pending pend;       /* replies outstanding; freed by the user before they came */
    int executed;
    fbw_batch_cs cs;
    fbw_err err;
};

static void destroy(void *arg)
{
    fbw_batch *b = arg;
    fbw_buf_free(&b->blr);
    fbw_buf_free(&b->pb);
    fbw_buf_free(&b->msgs);
    fbw_batch_cs_free(&b->cs);
    free(b->wire_vals);
    free(b);
}

/* Requests carry the batch to their reply handlers, which all end in settle: a batch freed while
 * replies were due is destroyed with the last of them (pending.h). */
static int request(fbw_batch *b, const fbw_pkt *p, fbw_reply_fn fn)
{
    return fbw_pending_track(&b->pend, fbw_conn_request(b->conn, p, fn, b));
}

static int settle(fbw_batch *b, int rc) { return fbw_pending_settle(&b->pend, rc, destroy, b); }

static void keep_error(fbw_batch *b, const fbw_err *e)
{
    if (b->err.code == FBW_OK && e->code != FBW_OK)
        b->err = *e;
}

static const char *op_name(int32_t op)
{
    const fbw_opinfo *oi = fbw_op_info(op);
    return oi && oi->name ? oi->name : "batch request";
}

/* Replies of create, msg, cancel, sync: a status only. */
static int on_status(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err, int32_t op)
{
    fbw_batch *b = arg;
    (void)c;
    if (r->op != FBW_OP_RESPONSE)
        return settle(b, fbw_err_set(err, FBW_E_PROTO, "unexpected op %d in answer to %s", (int)r->op,
                                     op_name(op)));
    fbw_err e;
    if (fbw_status_decode(r->u.resp.status, &e, NULL) != FBW_OK) {
        fbw_err_prefix(&e, "%s", op_name(op));
        keep_error(b, &e);
    }
    return settle(b, FBW_OK);
}

static int on_create(void *a, fbw_conn *c, const fbw_pkt *r, fbw_err *e)
{
    return on_status(a, c, r, e, FBW_OP_BATCH_CREATE);
}
static int on_msg(void *a, fbw_conn *c, const fbw_pkt *r, fbw_err *e)
{
    return on_status(a, c, r, e, FBW_OP_BATCH_MSG);
}
static int on_cancel(void *a, fbw_conn *c, const fbw_pkt *r, fbw_err *e)
{
    return on_status(a, c, r, e, FBW_OP_BATCH_CANCEL);
}
static int on_sync(void *a, fbw_conn *c, const fbw_pkt *r, fbw_err *e)
{
    return on_status(a, c, r, e, FBW_OP_BATCH_SYNC);
}

static int on_ignore(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    (void)c, (void)r, (void)err;
    return settle(arg, FBW_OK);
}

static int on_exec(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    fbw_batch *b = arg;
    (void)c;
    fbw_err e;
    fbw_err_clear(&e);
    if (r->op == FBW_OP_BATCH_CS) {
        fbw_batch_cs_free(&b->cs);
        int rc = fbw_batch_cs_parse(r, &b->cs, &e);
        if (rc == FBW_E_NOMEM)
            return settle(b, rc);
        if (rc)
            keep_error(b, &e);
        else
            b->executed = 1;
        return settle(b, FBW_OK);
    }
    if (r->op != FBW_OP_RESPONSE)
        return settle(b, fbw_err_set(err, FBW_E_PROTO, "unexpected op %d in answer to op_batch_exec",
                                     (int)r->op));
    /* An op_response instead of the completion state: the whole execute failed. */
    if (fbw_status_decode(r->u.resp.status, &e, NULL) == FBW_OK)
        fbw_err_set(&e, FBW_E_PROTO, "op_batch_exec answered without a completion state");
    fbw_err_prefix(&e, "op_batch_exec");
    keep_error(b, &e);
    return settle(b, FBW_OK);
}

int fbw_batch_new(fbw_conn *c, fbw_stmt *s, const fbw_batch_opts *o, fbw_batch **out, fbw_err *err)
{
    *out = NULL;
    int proto = fbw_conn_get_info(c)->protocol;
    if (proto < 16)
        return fbw_err_set(err, FBW_E_UNSUPPORTED, "the batch API needs protocol 16 (Firebird 4), "
                                                    "this connection has %d", proto);
    if (!fbw_stmt_prepared(s))
        return fbw_err_set(err, FBW_E_USAGE, "batch: the statement is not prepared");
    uint16_t h;
    if (fbw_stmt_handle(s, &h) != FBW_OK || h == FBW_INVALID_OBJECT)
        return fbw_err_set(err, FBW_E_USAGE, "batch: the statement has no server handle");
    fbw_batch_opts d;
    if (!o) {
        fbw_batch_opts_init(&d);
        o = &d;
    }
    fbw_batch *b = calloc(1, sizeof *b);
    if (!b)
        return fbw_err_set(err, FBW_E_NOMEM, "out of memory");
    b->conn = c;
    b->fmt = fbw_stmt_wire_input(s);
    b->described = fbw_stmt_input(s);
    if (b->fmt != b->described && !(b->wire_vals = calloc(b->fmt->n, sizeof *b->wire_vals))) {
        free(b);
        return fbw_err_set(err, FBW_E_NOMEM, "out of memory");
    }
    b->stmt = h;
    b->protocol = proto;
    b->packet = o->packet_bytes ? o->packet_bytes : FBW_BATCH_PACKET_DEFAULT;
    fbw_err_clear(&b->err);
    /* The server rebuilds the layout from the BLR and insists the length matches it (3.3). */
    size_t len = fbw_msg_length(b->fmt);
    int rc = fbw_blr_build(b->fmt, proto, 3, &b->blr, err);
    if (rc == FBW_OK && b->blr.len == 0)
        rc = fbw_err_set(err, FBW_E_USAGE, "batch: the statement has no input parameters");
    if (rc == FBW_OK && len > UINT32_MAX)
        rc = fbw_err_set(err, FBW_E_USAGE, "batch: message length %zu too large", len);
    if (rc == FBW_OK && fbw_batch_pb_build(o, &b->pb))
        rc = fbw_err_set(err, FBW_E_NOMEM, "out of memory");
    if (rc) {
        destroy(b);
        return rc;
    }
    b->msglen = (uint32_t)len;
    *out = b;
    return FBW_OK;
}

int fbw_batch_create(fbw_batch *b)
{
    if (b->created)
        return fbw_err_set(&b->err, FBW_E_USAGE, "batch already created");
    fbw_pkt p = {.op = FBW_OP_BATCH_CREATE};
    p.u.batch_create.stmt = b->stmt;
    p.u.batch_create.blr.p = b->blr.data;
    p.u.batch_create.blr.n = b->blr.len;
    p.u.batch_create.msglen = b->msglen;
    p.u.batch_create.pb.p = b->pb.data;
    p.u.batch_create.pb.n = b->pb.len;
    fbw_err_clear(&b->err);
    int rc = request(b, &p, on_create);
    if (rc == FBW_OK)
        b->created = 1;
    return rc;
}

int fbw_batch_flush(fbw_batch *b)
{
    if (b->nmsgs == 0)
        return FBW_OK;
    fbw_pkt p = {.op = FBW_OP_BATCH_MSG};
    p.u.batch_msg.stmt = b->stmt;
    p.u.batch_msg.count = b->nmsgs;
    p.u.batch_msg.data.p = fbw_buf_head(&b->msgs);
    p.u.batch_msg.data.n = fbw_buf_avail(&b->msgs);
    int rc = request(b, &p, on_msg);
    if (rc == FBW_OK) {
        fbw_buf_reset(&b->msgs);
        b->nmsgs = 0;
    }
    return rc;
}

int fbw_batch_add(fbw_batch *b, const fbw_value *params)
{
    if (!b->created)
        return fbw_err_set(&b->err, FBW_E_USAGE, "batch: create it before adding messages");
    size_t mark = b->msgs.len;
    fbw_wr w;
    fbw_wr_init(&w, &b->msgs);
    fbw_err e;
    fbw_err_clear(&e);
    if (b->wire_vals) {
        fbw_values_compact(b->described, b->fmt, params, b->wire_vals);
        params = b->wire_vals;
    }
    int rc = fbw_msg_encode(&w, b->fmt, b->protocol, params, &e);
    if (rc) {
        b->msgs.len = mark; /* a message that does not encode takes nothing */
        fbw_err_prefix(&e, "batch message %llu", (unsigned long long)b->added);
        keep_error(b, &e);
        return rc;
    }
    b->nmsgs++;
    b->added++;
    return fbw_buf_avail(&b->msgs) >= b->packet ? fbw_batch_flush(b) : FBW_OK;
}

int fbw_batch_execute(fbw_batch *b, fbw_tx *tx)
{
    if (!b->created)
        return fbw_err_set(&b->err, FBW_E_USAGE, "batch: create it before executing");
    uint16_t tr;
    int rc = fbw_tx_handle(tx, &tr);
    if (rc == FBW_E_USAGE)
        return fbw_err_set(&b->err, FBW_E_USAGE, "batch: transaction is not active");
    if (rc == FBW_OK)
        rc = fbw_batch_flush(b);
    if (rc)
        return rc;
    fbw_pkt p = {.op = FBW_OP_BATCH_EXEC};
    p.u.batch_exec.stmt = b->stmt;
    p.u.batch_exec.tr = tr;
    rc = request(b, &p, on_exec);
    if (rc == FBW_OK) {
        b->executed = 0;
        b->added = 0;
    }
    return rc;
}

int fbw_batch_sync(fbw_batch *b)
{
    if (b->protocol < 17)
        return fbw_err_set(&b->err, FBW_E_UNSUPPORTED, "op_batch_sync needs protocol 17, have %d",
                           b->protocol);
    fbw_pkt p = {.op = FBW_OP_BATCH_SYNC};
    return request(b, &p, on_sync);
}

static int simple(fbw_batch *b, int32_t op, fbw_reply_fn fn)
{
    if (!b->created)
        return FBW_OK;
    fbw_pkt p = {.op = op};
    p.u.rlse.object = b->stmt;
    return request(b, &p, fn);
}

int fbw_batch_cancel(fbw_batch *b)
{
    fbw_buf_reset(&b->msgs);
    b->nmsgs = 0;
    b->added = 0;
    return simple(b, FBW_OP_BATCH_CANCEL, on_cancel);
}

int fbw_batch_release(fbw_batch *b)
{
    fbw_buf_reset(&b->msgs);
    b->nmsgs = 0;
    int rc = simple(b, FBW_OP_BATCH_RLS, on_ignore);
    if (rc == FBW_OK)
        b->created = 0;
    return rc;
}

void fbw_batch_free(fbw_batch *b)
{
    if (!b)
        return;
    if (b->created && fbw_conn_get_state(b->conn) == FBW_CS_READY)
        fbw_batch_release(b);
    fbw_pending_release(&b->pend, b->conn, destroy, b);
}

uint64_t fbw_batch_pending(const fbw_batch *b) { return b->added; }
int fbw_batch_executed(const fbw_batch *b) { return b->executed; }
const fbw_batch_cs *fbw_batch_result(const fbw_batch *b) { return &b->cs; }
const fbw_err *fbw_batch_error(const fbw_batch *b) { return &b->err; }
