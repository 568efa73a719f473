/* SPDX-License-Identifier: MIT */
/* tx.c - transactions (docs/protocol/statements.md §1). */
#include "tx.h"
#include "inline.h"
#include "pending.h"
#include "request.h"

#include "status.h"

#include <stdlib.h>
#include <string.h>

/* TPB tags (consts_pub.h) */
enum {
    TPB_VERSION3 = 3, TPB_CONSISTENCY = 1, TPB_CONCURRENCY = 2, TPB_WAIT = 6, TPB_NOWAIT = 7,
    TPB_READ = 8, TPB_WRITE = 9, TPB_READ_COMMITTED = 15, TPB_AUTOCOMMIT = 16, TPB_REC_VERSION = 17,
    TPB_NO_REC_VERSION = 18, TPB_LOCK_TIMEOUT = 21, TPB_READ_CONSISTENCY = 22,
};

void fbw_tx_opts_init(fbw_tx_opts *o)
{
    memset(o, 0, sizeof *o);
    o->isolation = FBW_ISO_READ_COMMITTED;
    o->lock_timeout = -1;
}

int fbw_tpb_build(const fbw_tx_opts *o, fbw_buf *out, fbw_err *err)
{
    uint8_t t[16];
    size_t n = 0;
    t[n++] = TPB_VERSION3;
    switch (o->isolation) {
    case FBW_ISO_READ_COMMITTED: t[n++] = TPB_READ_COMMITTED; t[n++] = TPB_REC_VERSION; break;
    case FBW_ISO_READ_COMMITTED_NO_REC: t[n++] = TPB_READ_COMMITTED; t[n++] = TPB_NO_REC_VERSION; break;
    case FBW_ISO_READ_CONSISTENCY: t[n++] = TPB_READ_COMMITTED; t[n++] = TPB_READ_CONSISTENCY; break;
    case FBW_ISO_SNAPSHOT: t[n++] = TPB_CONCURRENCY; break;
    case FBW_ISO_SERIALIZABLE: t[n++] = TPB_CONSISTENCY; break;
    default: return fbw_err_set(err, FBW_E_USAGE, "unknown isolation level %d", o->isolation);
    }
    t[n++] = o->read_only ? TPB_READ : TPB_WRITE;
    if (o->lock_timeout == 0) {
        t[n++] = TPB_NOWAIT;
    } else {
        t[n++] = TPB_WAIT;
        if (o->lock_timeout > 0) {
            if (o->lock_timeout > 32767)
                return fbw_err_set(err, FBW_E_USAGE, "lock timeout %d s out of range 1..32767",
                                   o->lock_timeout);
            t[n++] = TPB_LOCK_TIMEOUT;
            t[n++] = 2;
            t[n++] = (uint8_t)o->lock_timeout;
            t[n++] = (uint8_t)(o->lock_timeout >> 8);
        } else if (o->lock_timeout < -1) {
            return fbw_err_set(err, FBW_E_USAGE, "lock timeout %d invalid", o->lock_timeout);
        }
    }
    if (o->autocommit)
        t[n++] = TPB_AUTOCOMMIT;
    return fbw_buf_append(out, t, n);
}

struct fbw_tx {
    fbw_conn *conn;
    int state;             /* enum fbw_tx_state */
    uint16_t handle;       /* valid once ACTIVE */
    int autocommit;        /* started with isc_tpb_autocommit: its executes commit */
    uint64_t alloc_token;  /* conn allocation counter at start, for the 0xFFFF shortcut */
    uint64_t generation;   /* bumped at every start: cursors opened under an older one are gone */
    fbw_pending pend;      /* replies outstanding; freed before they came */
    fbw_err err;           /* last server error for this transaction's own requests */
};

int fbw_tx_new(fbw_conn *c, fbw_tx **out, fbw_err *err)
{
    fbw_tx *t = calloc(1, sizeof *t);
    *out = t;
    if (!t)
        return fbw_err_set(err, FBW_E_NOMEM, "out of memory for a transaction");
    t->conn = c;
    fbw_err_clear(&t->err);
    return FBW_OK;
}

static void destroy(void *obj) { free(obj); }

void fbw_tx_free(fbw_tx *t)
{
    if (t)
        fbw_pending_release(&t->pend, t->conn, destroy, t);
}

int fbw_tx_state(const fbw_tx *t) { return t->state; }
int fbw_tx_live(const fbw_tx *t) { return t->state == FBW_TX_STARTING || t->state == FBW_TX_ACTIVE; }
const fbw_err *fbw_tx_error(const fbw_tx *t) { return &t->err; }
fbw_conn *fbw_tx_conn(const fbw_tx *t) { return t->conn; }
uint16_t fbw_tx_server_handle(const fbw_tx *t) { return t->handle; }
int fbw_tx_autocommit(const fbw_tx *t) { return t->autocommit; }
uint64_t fbw_tx_generation(const fbw_tx *t) { return t->generation; }

/* Every reply handler returns through here: the last reply of a freed transaction frees it. */
static int settle(fbw_tx *t, int rc) { return fbw_pending_settle(&t->pend, rc, destroy, t); }
static int request(fbw_tx *t, const fbw_pkt *p, fbw_reply_fn fn)
{
    return fbw_pending_track(&t->pend, fbw_conn_request(t->conn, p, fn, t));
}

static int start_reply(fbw_tx *t, const fbw_pkt *r, fbw_err *err)
{
    if (r->op != FBW_OP_RESPONSE)
        return fbw_err_set(err, FBW_E_PROTO, "unexpected answer to op_transaction");
    if (fbw_status_decode(r->u.resp.status, &t->err, NULL) != FBW_OK) {
        t->state = FBW_TX_FAILED;
        return FBW_OK;
    }
    t->handle = r->u.resp.object;
    /* A commit or rollback pipelined behind the start (handle 0xFFFF) already moved the state on. */
    if (t->state == FBW_TX_STARTING)
        t->state = FBW_TX_ACTIVE;
    return FBW_OK;
}

static int on_start_reply(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    (void)c;
    return settle(arg, start_reply(arg, r, err));
}

/* Queue op_transaction with TPB bytes tpb[0..n). */
static int queue_start(fbw_tx *t, const uint8_t *tpb, size_t n)
{
    fbw_pkt p = {.op = FBW_OP_TRANSACTION};
    p.u.sttr.db = fbw_conn_get_info(t->conn)->db_handle;
    p.u.sttr.tpb.p = tpb;
    p.u.sttr.tpb.n = n;
    fbw_err_clear(&t->err);
    int rc = request(t, &p, on_start_reply);
    if (rc == FBW_OK) {
        t->state = FBW_TX_STARTING;
        t->autocommit = 0; /* fbw_tx_start sets it; a TPB given as bytes is not parsed for it */
        t->generation++;
        t->alloc_token = fbw_conn_note_allocation(t->conn);
    }
    return rc;
}

static int can_start(fbw_tx *t)
{
    if (t->state == FBW_TX_STARTING || t->state == FBW_TX_ACTIVE || t->state == FBW_TX_ENDING)
        return fbw_err_set(&t->err, FBW_E_USAGE, "transaction already started");
    return FBW_OK;
}

int fbw_tx_start(fbw_tx *t, const fbw_tx_opts *o)
{
    int rc = can_start(t);
    if (rc)
        return rc;
    fbw_buf tpb;
    fbw_buf_init(&tpb);
    rc = fbw_tpb_build(o, &tpb, &t->err);
    if (rc == FBW_OK)
        rc = queue_start(t, tpb.data, tpb.len);
    if (rc == FBW_OK)
        t->autocommit = o->autocommit != 0;
    fbw_buf_free(&tpb);
    return rc;
}

int fbw_tx_start_tpb(fbw_tx *t, const uint8_t *tpb, size_t n)
{
    int rc = can_start(t);
    if (rc)
        return rc;
    if (n > FBW_BUF_MAX)
        return fbw_err_set(&t->err, FBW_E_USAGE, "TPB of %zu bytes is too long", n);
    return queue_start(t, tpb, n);
}

int fbw_tx_handle(const fbw_tx *t, uint16_t *h)
{
    if (t->state == FBW_TX_ACTIVE) {
        *h = t->handle;
        return FBW_OK;
    }
    if (t->state == FBW_TX_STARTING) {
        if (fbw_conn_get_info(t->conn)->lazy && fbw_conn_allocations(t->conn) == t->alloc_token) {
            *h = FBW_INVALID_OBJECT;
            return FBW_OK;
        }
        return FBW_WAIT;
    }
    return FBW_E_USAGE;
}

static int end_reply(fbw_tx *t, const fbw_pkt *r, fbw_err *err)
{
    if (r->op != FBW_OP_RESPONSE)
        return fbw_err_set(err, FBW_E_PROTO, "unexpected answer to a transaction end");
    if (fbw_status_decode(r->u.resp.status, &t->err, NULL) != FBW_OK) {
        /* A failed commit leaves the transaction alive (the client may roll back); a transaction
         * that never started has nothing left to end. */
        t->state = t->handle || t->state == FBW_TX_ENDING ? FBW_TX_ACTIVE : FBW_TX_FAILED;
        return FBW_OK;
    }
    return FBW_OK;
}

static int on_end_reply(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    (void)c;
    return settle(arg, end_reply(arg, r, err));
}

static int on_final_reply(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    fbw_tx *t = arg;
    (void)c;
    int rc = end_reply(t, r, err);
    if (rc == FBW_OK && t->state == FBW_TX_ENDING) {
        t->state = FBW_TX_ENDED;
        t->handle = 0;
    }
    return settle(t, rc);
}

static int end(fbw_tx *t, int32_t op)
{
    uint16_t h;
    int rc = fbw_tx_handle(t, &h);
    if (rc == FBW_E_USAGE)
        return fbw_err_set(&t->err, FBW_E_USAGE, "transaction is not active");
    if (rc)
        return rc;
    fbw_pkt p = {.op = op};
    p.u.rlse.object = h;
    int retaining = op == FBW_OP_COMMIT_RETAINING || op == FBW_OP_ROLLBACK_RETAINING;
    rc = request(t, &p, retaining ? on_end_reply : on_final_reply);
    if (rc == FBW_OK)
        fbw_err_clear(&t->err); /* the error is of the latest request */
    if (rc == FBW_OK && !retaining) {
        t->state = FBW_TX_ENDING;
        fbw_inline_forget_tx(t->conn, h); /* its blob ids mean nothing once it ends */
    }
    return rc;
}

int fbw_tx_commit(fbw_tx *t) { return end(t, FBW_OP_COMMIT); }
int fbw_tx_rollback(fbw_tx *t) { return end(t, FBW_OP_ROLLBACK); }
int fbw_tx_commit_retaining(fbw_tx *t) { return end(t, FBW_OP_COMMIT_RETAINING); }
int fbw_tx_rollback_retaining(fbw_tx *t) { return end(t, FBW_OP_ROLLBACK_RETAINING); }

void fbw_tx_note_exec_reply(fbw_tx *t, uint16_t sent, uint16_t reply_object)
{
    if (sent != 0 && reply_object == 0) {
        t->state = FBW_TX_ENDED;
        t->handle = 0;
    } else if (sent == 0 && reply_object != 0) {
        t->state = FBW_TX_ACTIVE;
        t->generation++;
        t->handle = reply_object;
    } else if (t->state == FBW_TX_STARTING && reply_object != 0) {
        t->state = FBW_TX_ACTIVE; /* sent as 0xFFFF: the reply names the real handle */
        t->handle = reply_object;
    }
}
