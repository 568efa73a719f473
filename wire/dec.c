/* SPDX-License-Identifier: MIT */
/* dec.c - session decoder over pkt.c: context learned from the stream itself. */
#include "dec.h"
#include "dec_int.h"

#include "compress.h"
#include "crypt.h"
#include "msg.h"
#include "status.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- formats ---- */

static void fmt_free(fbw_msgfmt *f)
{
    free(f->cols);
    memset(f, 0, sizeof *f);
}

static void fmt_drop(stmt_fmt *s)
{
    fmt_free(&s->bind);
    fmt_free(&s->select);
    fmt_free(&s->out);
    fmt_free(&s->batch);
    s->unused = 1;
}

/* A fresh entry (reusing a freed slot); returns its index + 1, 0 when full or out of memory. */
static size_t fmt_new(fbw_dec *d, uint16_t handle, int pending)
{
    size_t i = 0;
    while (i < d->nfmts && !d->fmts[i].unused)
        i++;
    if (i == d->nfmts) {
        if (d->nfmts == MAX_FORMATS)
            return 0;
        if (d->nfmts % 16 == 0) {
            stmt_fmt *n = realloc(d->fmts, (d->nfmts + 16) * sizeof *n);
            if (!n)
                return 0;
            d->fmts = n;
        }
        d->nfmts++;
    } else {
        fmt_drop(&d->fmts[i]); /* a reused slot: nothing of the old statement survives */
    }
    memset(&d->fmts[i], 0, sizeof d->fmts[i]);
    d->fmts[i].handle = handle;
    d->fmts[i].pending = (uint8_t)pending;
    return i + 1;
}

/* The entry a handle in a client packet names (index + 1), 0 when unknown and not created. */
static size_t fmt_index(fbw_dec *d, uint16_t handle, int create)
{
    if (handle == FBW_INVALID_OBJECT)
        return d->alloc_fmt;
    for (size_t i = 0; i < d->nfmts; i++)
        if (!d->fmts[i].unused && !d->fmts[i].pending && d->fmts[i].handle == handle)
            return i + 1;
    return create ? fmt_new(d, handle, 0) : 0;
}

static stmt_fmt *fmt_at(fbw_dec *d, size_t idx)
{
    return idx && idx <= d->nfmts && !d->fmts[idx - 1].unused ? &d->fmts[idx - 1] : NULL;
}

static stmt_fmt *fmt_for(fbw_dec *d, uint16_t handle, int create)
{
    return fmt_at(d, fmt_index(d, handle, create));
}

/* The server named the handle of a pending allocation: an older entry with that handle is gone. */
static void fmt_resolve(fbw_dec *d, size_t idx, uint16_t handle)
{
    stmt_fmt *s = fmt_at(d, idx);
    if (!s || s->unused || !s->pending)
        return;
    for (size_t i = 0; i < d->nfmts; i++)
        if (i + 1 != idx && !d->fmts[i].unused && !d->fmts[i].pending &&
            d->fmts[i].handle == handle)
            fmt_drop(&d->fmts[i]);
    s->handle = handle;
    s->pending = 0;
}

/* Replace *f with the format the BLR describes; an empty BLR keeps the previous format (the server
 * does the same for op_fetch after the first one). */
static int learn(fbw_dec *d, fbw_msgfmt *f, fbw_bytes blr)
{
    if (blr.n == 0)
        return FBW_OK;
    uint16_t count = 0;
    int rc = fbw_blr_count(blr.p, blr.n, &count, &d->err);
    if (rc)
        return rc;
    fmt_free(f);
    f->cols = calloc(count ? count : 1, sizeof *f->cols);
    if (!f->cols)
        return fbw_err_set(&d->err, FBW_E_NOMEM, "out of memory");
    f->cap = count;
    return fbw_blr_parse(blr.p, blr.n, f, &d->err);
}

static const fbw_msgfmt *need(const fbw_msgfmt *f, fbw_err *err, const char *what)
{
    if (f && f->cols)
        return f;
    fbw_err_set(err, FBW_E_UNSUPPORTED, "no row format known for %s (the capture started mid-session?)", what);
    return NULL;
}

static const waiting *head(const fbw_dec *d) { return fbw_ring_at(&d->q, 0); }

static const fbw_msgfmt *format_cb(void *arg, enum fbw_fmt_kind kind, const fbw_pkt *p, fbw_err *err)
{
    fbw_dec *d = arg;
    stmt_fmt *s;
    const waiting *w = head(d);
    switch (kind) {
    case FBW_FMT_EXEC_IN:
        d->msg_fmt = fmt_index(d, p->u.sqldata.stmt, 1);
        s = fmt_at(d, d->msg_fmt);
        if (s && learn(d, &s->bind, p->u.sqldata.blr))
            return NULL;
        return need(s ? &s->bind : NULL, err, "execute parameters");
    case FBW_FMT_IMMEDIATE_IN:
        d->msg_imm = 1;
        if (learn(d, &d->imm_in, p->u.sqlst.blr))
            return NULL;
        return need(&d->imm_in, err, "execute immediate parameters");
    case FBW_FMT_FETCH:
        s = w && (w->op == FBW_OP_FETCH || w->op == FBW_OP_FETCH_SCROLL) ? fmt_at(d, w->fmt) : NULL;
        return need(s ? &s->select : NULL, err, "fetched rows");
    case FBW_FMT_SQL_RESPONSE:
        if (w && w->op == FBW_OP_EXEC_IMMEDIATE2)
            return need(&d->imm_out, err, "execute immediate output");
        s = w && w->op == FBW_OP_EXECUTE2 ? fmt_at(d, w->fmt) : NULL;
        return need(s ? &s->out : NULL, err, "execute output");
    case FBW_FMT_BATCH:
        s = fmt_for(d, p->u.batch_msg.stmt, 0);
        return need(s ? &s->batch : NULL, err, "batch messages");
    case FBW_FMT_REQUEST:
        return fbw_req_format(d, p->u.data.request, p->u.data.msg_number, err);
    case FBW_FMT_TRANSACT_IN:
        if (fbw_req_transact(d, p->u.trrq.blr))
            return NULL;
        return fbw_req_transact_format(d, 0, err);
    case FBW_FMT_TRANSACT_OUT:
        return fbw_req_transact_format(d, 1, err);
    case FBW_FMT_SLICE:
        if (d->slice_fmt.n == 1)
            return &d->slice_fmt;
        fbw_err_set(err, FBW_E_UNSUPPORTED, "no slice description known for op_slice%s%s",
                    d->slice_why[0] ? ": " : " (its op_get_slice is not in the capture)",
                    d->slice_why);
        return NULL;
    }
    return NULL;
}

static const fbw_bstream *blob_stream_cb(void *arg, uint16_t stmt, fbw_err *err)
{
    stmt_fmt *s = fmt_for(arg, stmt, 0);
    if (s && s->has_batch)
        return &s->blobs;
    fbw_err_set(err, FBW_E_UNSUPPORTED,
                "no batch known for statement %u's blob stream (its op_batch_create is not in the capture)",
                (unsigned)stmt);
    return NULL;
}

/* ---- what client packets teach ---- */

static int push(fbw_dec *d, int32_t op, size_t fmt)
{
    int rc = fbw_ring_push(&d->q, &(waiting){op, fmt});
    if (rc == FBW_E_USAGE)
        return fbw_err_set(&d->err, FBW_E_PROTO, "more than a million requests without replies");
    return rc ? fbw_err_set(&d->err, FBW_E_NOMEM, "out of memory") : FBW_OK;
}

static void pop(fbw_dec *d) { fbw_ring_pop(&d->q, NULL); }

static int expects_reply(int32_t op)
{
    switch (op) {
    case FBW_OP_DISCONNECT: case FBW_OP_EXIT: case FBW_OP_DUMMY: case FBW_OP_CANCEL:
    case FBW_OP_CRYPT_KEY_CALLBACK: case FBW_OP_ABORT_AUX_CONNECTION:
        return 0;
    default:
        return 1;
    }
}

static int client_packet(fbw_dec *d, const fbw_pkt *p)
{
    stmt_fmt *s;
    size_t fmt = 0;
    int rc = FBW_OK;
    switch (p->op) {
    case FBW_OP_ALLOCATE_STATEMENT:
        fmt = fmt_new(d, FBW_INVALID_OBJECT, 1);
        d->alloc_fmt = fmt;
        break;
    case FBW_OP_TRANSACTION: case FBW_OP_OPEN_BLOB: case FBW_OP_OPEN_BLOB2: case FBW_OP_CREATE_BLOB:
    case FBW_OP_CREATE_BLOB2:
        d->alloc_fmt = 0; /* 0xFFFF now names that object, not a statement */
        break;
    case FBW_OP_EXECUTE2:
        fmt = fmt_index(d, p->u.sqldata.stmt, 1);
        s = fmt_at(d, fmt);
        rc = s ? learn(d, &s->out, p->u.sqldata.out_blr) : FBW_OK;
        break;
    case FBW_OP_FETCH: case FBW_OP_FETCH_SCROLL:
        fmt = fmt_index(d, p->u.sqldata.stmt, 1);
        s = fmt_at(d, fmt);
        rc = s ? learn(d, &s->select, p->u.sqldata.blr) : FBW_OK;
        break;
    case FBW_OP_EXEC_IMMEDIATE2:
        fmt_free(&d->imm_out);
        rc = learn(d, &d->imm_out, p->u.sqlst.out_blr);
        break;
    case FBW_OP_BATCH_CREATE:
        s = fmt_for(d, p->u.batch_create.stmt, 1);
        if (s) {
            s->has_batch = 1;
            fbw_bstream_init(&s->blobs, FBW_BSTREAM_ALIGN);
        }
        rc = s ? learn(d, &s->batch, p->u.batch_create.blr) : FBW_OK;
        break;
    case FBW_OP_BATCH_SET_BPB: /* blobs without a BPB of their own follow this one */
        s = fmt_for(d, p->u.batch_bpb.stmt, 0);
        if (s)
            s->blobs.default_segmented = fbw_bpb_segmented(p->u.batch_bpb.bpb.p, p->u.batch_bpb.bpb.n) == 1;
        break;
    case FBW_OP_BATCH_BLOB_STREAM: /* the next packet of this stream goes on from here */
        s = fmt_for(d, p->u.bstream.stmt, 0);
        if (s)
            s->blobs = p->u.bstream.st;
        break;
    case FBW_OP_COMPILE:
        fmt = fbw_req_compiled(d, p->u.ddl.blr); /* the waiting entry names the request */
        if (!fmt && d->err.code == FBW_E_NOMEM)
            rc = FBW_E_NOMEM;
        break;
    case FBW_OP_RELEASE:
        fbw_req_release(d, p->u.rlse.object);
        break;
    case FBW_OP_GET_SLICE: { /* its op_slice reply is framed with this SDL's element */
        fbw_err e;
        d->slice_fmt.cols = &d->slice_elem;
        d->slice_fmt.cap = 1;
        d->slice_fmt.n = fbw_sdl_element(p->u.slc.sdl.p, p->u.slc.sdl.n, &d->slice_elem, &e) == FBW_OK;
        snprintf(d->slice_why, sizeof d->slice_why, "%.159s", d->slice_fmt.n ? "" : e.msg);
        break;
    }
    case FBW_OP_TRANSACT: /* its messages were learned while framing it; without one, here */
        if (p->u.trrq.messages == 0)
            rc = fbw_req_transact(d, p->u.trrq.blr);
        break;
    case FBW_OP_CRYPT:
        d->crypt_started = 1;
        d->crypt_pending = d->have_key;
        snprintf(d->crypt_plugin, sizeof d->crypt_plugin, "%.*s", (int)p->u.crypt.plugin.n,
                 (const char *)p->u.crypt.plugin.p);
        break;
    default:
        break;
    }
    if (rc == FBW_OK && expects_reply(p->op))
        rc = push(d, p->op, fmt);
    return rc;
}

/* ---- what server packets teach ---- */

static int start_compression(fbw_dec *d)
{
    for (int i = 0; i < 2; i++) {
        int rc = fbw_inflater_new(&d->dir[i].zi, &d->err);
        if (rc)
            return rc;
        /* Server bytes already fed after the accept were compressed: move them back to raw. Client
         * bytes fed before it were sent before the client saw it: those stay plain. */
        if (i == 0 && fbw_buf_avail(&d->dir[i].plain)) {
            fbw_buf tmp = d->dir[i].raw;
            d->dir[i].raw = d->dir[i].plain;
            fbw_buf_init(&d->dir[i].plain);
            rc = fbw_buf_append(&d->dir[i].raw, fbw_buf_head(&tmp), fbw_buf_avail(&tmp));
            fbw_buf_free(&tmp);
            if (rc)
                return fbw_err_set(&d->err, rc, "out of memory");
        }
    }
    return FBW_OK;
}

/* A request whose reply is a run of op_send packets (and, after a start, an op_response_piggyback). */
static int receiving(const waiting *w)
{
    return w && (w->op == FBW_OP_RECEIVE || w->op == FBW_OP_START_AND_RECEIVE ||
                 w->op == FBW_OP_START_SEND_AND_RECEIVE);
}

static int server_packet(fbw_dec *d, const fbw_pkt *p)
{
    const waiting *w = head(d);
    d->answering = w && p->op != FBW_OP_DUMMY && p->op != FBW_OP_CRYPT_KEY_CALLBACK ? w->op : 0;
    int reply = p->op != FBW_OP_DUMMY && p->op != FBW_OP_CRYPT_KEY_CALLBACK &&
                p->op != FBW_OP_EVENT && p->op != FBW_OP_INLINE_BLOB;
    if (!w && reply && d->lenient) /* joined late: a reply without its request means a wrong lock */
        return fbw_err_set(&d->err, FBW_E_PROTO, "a reply with no request waiting: framing lost");
    switch (p->op) {
    case FBW_OP_DUMMY: case FBW_OP_CRYPT_KEY_CALLBACK: case FBW_OP_INLINE_BLOB: case FBW_OP_SQL_RESPONSE:
        return FBW_OK;
    case FBW_OP_FETCH_RESPONSE:
        if (p->u.sqldata.messages == 0)
            pop(d);
        return FBW_OK;
    case FBW_OP_RESPONSE_PIGGYBACK:
        /* op_start_and_receive: the start's status, then the messages as for op_receive */
        if (!receiving(w))
            pop(d);
        return FBW_OK;
    case FBW_OP_SEND:
        /* The answer to a receive: messages = 1 while more op_send follow, 0 on the last. */
        if (p->u.data.messages == 0 || !receiving(w))
            pop(d);
        return FBW_OK;
    case FBW_OP_ACCEPT: case FBW_OP_ACCEPT_DATA: case FBW_OP_COND_ACCEPT:
        d->ctx.protocol = fbw_protocol_from_wire(p->u.acpt.version);
        pop(d);
        /* Like the server (rem_port::initCompression): from P13 on, and only once per connection
         * (op_cond_accept and a later op_accept_data may both carry the flag). */
        if ((p->u.acpt.type & FBW_PFLAG_COMPRESS) && d->ctx.protocol >= 13 && !d->dir[0].zi)
            d->compress_pending = 1;
        return FBW_OK;
    case FBW_OP_RESPONSE:
        /* The reply to op_allocate_statement (and other allocations) names the new object. */
        if (w && w->op == FBW_OP_COMPILE)
            fbw_req_resolve(d, w->fmt, fbw_status_is_success(p->u.resp.status), p->u.resp.object);
        if (w && w->op == FBW_OP_ALLOCATE_STATEMENT) {
            if (fbw_status_is_success(p->u.resp.status)) {
                fmt_resolve(d, w->fmt, p->u.resp.object);
            } else if (fmt_at(d, w->fmt) && fmt_at(d, w->fmt)->pending) {
                fmt_drop(fmt_at(d, w->fmt)); /* no statement was allocated */
                if (d->alloc_fmt == w->fmt)
                    d->alloc_fmt = 0;
            }
        }
        pop(d);
        return FBW_OK;
    default:
        pop(d); /* op_cont_auth, op_reject, op_batch_cs, op_slice ... each answers one request */
        return FBW_OK;
    }
}

/* ---- decryption ---- */

/* op_crypt was decoded and the key is known: from here on both streams go through a cipher made
 * from the key (one per direction, like the peers). Bytes already moved to plain after op_crypt
 * are ciphertext: they go back in front of raw to be decrypted. Behind an inflater that cannot be
 * undone, but no peer sends anything after op_crypt before the reply, so it does not happen. */
static int start_crypt(fbw_dec *d)
{
    if (strcmp(d->key_plugin, d->crypt_plugin) != 0)
        return fbw_err_set(&d->err, FBW_E_CRYPT,
                           "the key does not decrypt this session: it is for %s, but the session "
                           "is encrypted with %.31s",
                           d->key_plugin, d->crypt_plugin);
    for (int i = 0; i < 2; i++) {
        direction *x = &d->dir[i];
        int rc = fbw_cipher_new(d->key_plugin, d->key, d->key_len, d->iv_len ? d->iv : NULL,
                                d->iv_len, &x->ci, &d->err);
        if (rc)
            return fbw_err_prefix(&d->err, "the key does not decrypt this session: no %s cipher",
                                  d->key_plugin);
        if (!fbw_buf_avail(&x->plain))
            continue;
        if (x->zi)
            return fbw_err_set(&d->err, FBW_E_CRYPT, "%s bytes after op_crypt arrived together "
                               "with compressed clear bytes: cannot split them",
                               i ? "client" : "server");
        fbw_buf tmp = x->raw;
        x->raw = x->plain;
        fbw_buf_init(&x->plain);
        rc = fbw_buf_append(&x->raw, fbw_buf_head(&tmp), fbw_buf_avail(&tmp));
        fbw_buf_free(&tmp);
        if (rc)
            return fbw_err_set(&d->err, rc, "out of memory");
    }
    return FBW_OK;
}

/* A decode error before any packet decrypted in that direction decoded means the key is wrong
 * (garbage decodes as an unknown op at once), not that the session is damaged. */
static int wrong_key(fbw_dec *d, int from_client, const char *what)
{
    char why[200];
    snprintf(why, sizeof why, "%.199s", d->err.msg);
    return fbw_err_set(&d->err, FBW_E_CRYPT,
                       "the key does not decrypt this session: the first %s bytes after op_crypt "
                       "do not %s (%s)",
                       from_client ? "client" : "server", what, why);
}

/* ---- feeding ---- */

/* Account for one framed packet and learn from it. */
int fbw_dec_deliver(fbw_dec *d, int from_client, const fbw_pkt *p, size_t used, uint64_t ts)
{
    fbw_stats_packet(&d->stats, p->op, from_client, used);
    d->pair_pkts[from_client]++;
    int rc = from_client ? client_packet(d, p) : server_packet(d, p);
    if (rc == FBW_OK && d->fn)
        d->fn(d->arg, from_client, p, used, ts);
    return rc;
}

void fbw_dec_clear_queue(fbw_dec *d) { fbw_ring_clear(&d->q); }

static int decode_direction(fbw_dec *d, int from_client, uint64_t ts)
{
    direction *x = &d->dir[from_client];
    while (fbw_buf_avail(&x->plain) > 0 && !x->blind) {
        fbw_pkt p;
        size_t used = 0;
        d->msg_fmt = 0; /* set again by format_cb if this packet carries an input message */
        d->msg_imm = 0;
        int rc = fbw_pkt_decode(&d->ctx, fbw_buf_head(&x->plain), fbw_buf_avail(&x->plain), &p, &used,
                                &d->err);
        if (rc == FBW_AGAIN)
            return FBW_OK;
        if (rc && d->lenient && rc != FBW_E_NOMEM && fbw_sync_recoverable(from_client, &p)) {
            /* A message of unknown format: its end shows when the burst does (sync.c). */
            fbw_err_clear(&d->err);
            x->blind = 1;
            return FBW_OK;
        }
        if (rc == FBW_OK && d->lenient && !fbw_sync_session_op(from_client, (uint32_t)p.op))
            rc = fbw_err_set(&d->err, FBW_E_PROTO, "op %d does not belong in this direction of an "
                             "open session: framing lost", p.op);
        if (rc == FBW_OK && x->ci && !x->verified && !from_client && p.op != FBW_OP_RESPONSE) {
            fbw_err_set(&d->err, FBW_E_PROTO, "op %d where the reply to op_crypt belongs", p.op);
            rc = FBW_E_PROTO;
        }
        if (rc) {
            fbw_err_prefix(&d->err, "%s stream at offset %llu", from_client ? "client" : "server",
                           (unsigned long long)x->offset);
            return x->ci && !x->verified ? wrong_key(d, from_client, "decode") : rc;
        }
        if (x->ci)
            x->verified = 1;
        rc = fbw_dec_deliver(d, from_client, &p, used, ts);
        fbw_buf_consume(&x->plain, used);
        x->offset += used;
        if (rc)
            return rc;
        if (d->compress_pending) {
            d->compress_pending = 0;
            rc = start_compression(d);
            if (rc)
                return rc;
        }
        if (d->crypt_pending) {
            d->crypt_pending = 0;
            return start_crypt(d); /* fbw_dec_feed decodes what was moved back to raw */
        }
        if (d->crypt_started && !x->ci && (from_client || fbw_buf_avail(&x->plain)))
            break; /* what follows op_crypt (client) is ciphertext */
    }
    return FBW_OK;
}

/* Move raw bytes to plain through the cipher and the inflater, each if on (the peer compressed,
 * then encrypted). */
static int unfilter(fbw_dec *d, direction *x)
{
    size_t n = fbw_buf_avail(&x->raw);
    if (n == 0)
        return FBW_OK;
    if (x->ci) {
        int rc = fbw_cipher_apply(x->ci, x->raw.data + x->raw.start, n, &d->err);
        if (rc)
            return rc;
    }
    int rc = x->zi ? fbw_inflater_feed(x->zi, fbw_buf_head(&x->raw), n, &x->plain, &d->err)
                   : fbw_buf_append(&x->plain, fbw_buf_head(&x->raw), n);
    fbw_buf_reset(&x->raw);
    if (rc && rc != FBW_E_NOMEM && x->ci && !x->verified) /* garbage does not inflate either */
        return wrong_key(d, x == &d->dir[1], "inflate");
    return rc;
}

/* The other direction's burst ended: its packets end here too (lenient: frame what waited for
 * that end). Done before the turn is counted, so those packets belong to the round trip they
 * were sent in. */
int fbw_dec_resolve_other(fbw_dec *d, int from_client, uint64_t ts_ns)
{
    int prev = d->last_dir;
    if (!d->lenient || prev < 0 || prev == from_client)
        return FBW_OK;
    if (d->dir[prev].blind || fbw_buf_avail(&d->dir[prev].plain))
        return fbw_sync_resolve(d, prev, ts_ns);
    return FBW_OK;
}

/* Bytes of one direction through the filters and the packet decoder. */
int fbw_dec_feed_bytes(fbw_dec *d, int from_client, const uint8_t *p, size_t n, uint64_t ts_ns)
{
    direction *x = &d->dir[from_client];
    int rc = FBW_OK;
    if (d->lenient && d->last_dir >= 0 && d->last_dir != from_client) {
        int prev = d->last_dir;
        rc = fbw_dec_resolve_other(d, from_client, ts_ns);
        if (rc == FBW_OK && prev == 0) {
            if (fbw_ring_len(&d->q) == 0 && d->pair_pkts[0] && d->pair_pkts[1])
                d->pairs++;
            d->pair_pkts[0] = d->pair_pkts[1] = 0;
        }
    }
    d->last_dir = from_client;
    if (rc == FBW_OK) {
        rc = fbw_buf_append(&x->raw, p, n);
        d->took = 1;
    }
    if (rc == FBW_OK)
        rc = unfilter(d, x);
    if (rc == FBW_OK)
        rc = decode_direction(d, from_client, ts_ns);
    if (rc == FBW_OK && x->blind && fbw_buf_avail(&x->plain) > BLIND_MAX)
        /* Memory stays bounded: give the burst up and hunt from the next one. */
        rc = fbw_err_set(&d->err, FBW_E_PROTO, "more than %u MB of packets of unknown format in "
                         "one burst", BLIND_MAX >> 20);
    /* A compression switch inside this call may have moved bytes back to raw. */
    for (int i = 0; rc == FBW_OK && i < 2; i++)
        if (fbw_buf_avail(&d->dir[i].raw)) {
            rc = unfilter(d, &d->dir[i]);
            if (rc == FBW_OK)
                rc = decode_direction(d, i, ts_ns);
        }
    if (rc && d->err.code == FBW_OK)
        fbw_err_set(&d->err, rc, "%s", fbw_rc_name(rc));
    return rc;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int fbw_dec_feed(fbw_dec *d, int from_client, const uint8_t *p, size_t n, uint64_t ts_ns)
{
    if (d->err.code)
        return d->err.code;
    from_client = from_client ? 1 : 0;
    if (d->crypt_started && !d->dir[0].ci) {
        /* Without the key, the server's reply to op_crypt and everything after it in both directions is ciphertext. */
        return fbw_err_set(&d->err, FBW_E_CRYPT,
                           "the session is encrypted with %s from here on; decoding needs the session key",
                           d->crypt_plugin[0] ? d->crypt_plugin : "a wire crypt plugin");
    }
    d->fed[from_client] += n;
    if (d->mode == DEC_START && n) {
        int opens = from_client && n >= 4 && be32(p) == FBW_OP_CONNECT;
        if (opens && d->anywhere) {
            /* A word 1 where a capture begins is common: only a whole op_connect counts. */
            fbw_pkt c;
            size_t used;
            fbw_pkt_ctx ctx = {0};
            opens = fbw_pkt_decode(&ctx, p, n, &c, &used, NULL) == FBW_OK;
        }
        d->mode = opens || !d->anywhere ? DEC_STRICT : DEC_HUNT;
        if (opens)
            d->sync.how = FBW_DEC_CONNECT;
    }
    if (d->mode == DEC_HUNT) /* counts the round trip when it has decided about the bytes */
        return fbw_sync_hunt(d, from_client, p, n, ts_ns, 0);
    int prev = d->last_dir;
    d->took = 0;
    int rc = fbw_dec_resolve_other(d, from_client, ts_ns);
    fbw_stats_turn(&d->stats, &d->turn, from_client, n, ts_ns);
    if (rc == FBW_OK)
        rc = fbw_dec_feed_bytes(d, from_client, p, n, ts_ns);
    if (rc && d->anywhere && d->mode == DEC_STRICT && d->ctx.protocol == 0 &&
        d->sync.how == FBW_DEC_CONNECT && !d->crypt_started && rc != FBW_E_NOMEM) {
        /* It only looked like op_connect (a word 1 where the capture began): hunt instead. */
        d->sync.how = FBW_DEC_NOT_YET;
        d->mode = DEC_LOCKED; /* fbw_sync_lose below turns it into hunting */
        d->lenient = 1;
        rc = FBW_E_PROTO;
    }
    if (rc && d->lenient && !d->is_trial && rc != FBW_E_NOMEM) {
        /* Framing lost: hunt for it again, from this chunk when it was not taken yet. */
        fbw_sync_lose(d);
        if (d->took)
            return FBW_OK;
        d->last_dir = prev;
        return fbw_sync_hunt(d, from_client, p, n, ts_ns, 1);
    }
    return rc;
}

int fbw_dec_new(fbw_dec_packet_fn fn, void *arg, fbw_dec **out)
{
    fbw_dec *d = calloc(1, sizeof *d);
    if (!d)
        return FBW_E_NOMEM;
    d->fn = fn;
    d->arg = arg;
    fbw_ring_init(&d->q, sizeof(waiting), MAX_WAITING);
    fbw_err_clear(&d->err);
    d->ctx.format = format_cb;
    d->ctx.blob_stream = blob_stream_cb;
    d->ctx.arg = d;
    d->last_dir = -1;
    *out = d;
    return FBW_OK;
}

void fbw_dec_free(fbw_dec *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nfmts; i++)
        fmt_drop(&d->fmts[i]);
    free(d->fmts);
    fmt_free(&d->imm_in);
    fmt_free(&d->imm_out);
    fbw_req_free_all(d);
    for (int i = 0; i < 2; i++) {
        fbw_buf_free(&d->dir[i].raw);
        fbw_buf_free(&d->dir[i].plain);
        fbw_inflater_free(d->dir[i].zi);
        fbw_cipher_free(d->dir[i].ci);
    }
    OPENSSL_cleanse(d->key, sizeof d->key);
    fbw_sync_free(d);
    fbw_ring_free(&d->q);
    free(d);
}

const fbw_err *fbw_dec_error(const fbw_dec *d) { return &d->err; }
const fbw_stats *fbw_dec_stats(const fbw_dec *d) { return &d->stats; }
int fbw_dec_protocol(const fbw_dec *d) { return d->ctx.protocol; }
int32_t fbw_dec_answering(const fbw_dec *d) { return d->answering; }
const fbw_msgfmt *fbw_dec_message_format(const fbw_dec *d)
{
    if (d->msg_imm)
        return &d->imm_in;
    size_t i = d->msg_fmt;
    return i && i <= d->nfmts && !d->fmts[i - 1].unused ? &d->fmts[i - 1].bind : NULL;
}
size_t fbw_dec_pending(const fbw_dec *d, int from_client)
{
    return fbw_buf_avail(&d->dir[from_client ? 1 : 0].plain) + fbw_buf_avail(&d->dir[from_client ? 1 : 0].raw);
}

int fbw_dec_set_key(fbw_dec *d, const char *plugin, const uint8_t *key, size_t key_len,
                    const uint8_t *iv, size_t iv_len)
{
    if (!plugin || strlen(plugin) >= sizeof d->key_plugin || key_len == 0 ||
        key_len > sizeof d->key || iv_len > sizeof d->iv || d->crypt_started)
        return fbw_err_set(NULL, FBW_E_USAGE, "bad key");
    snprintf(d->key_plugin, sizeof d->key_plugin, "%s", plugin);
    memcpy(d->key, key, key_len);
    d->key_len = key_len;
    if (iv_len)
        memcpy(d->iv, iv, iv_len);
    d->iv_len = iv_len;
    d->have_key = 1;
    return FBW_OK;
}

int fbw_dec_decrypting(const fbw_dec *d) { return d->dir[0].ci != NULL; }

void fbw_dec_start_anywhere(fbw_dec *d)
{
    if (d->mode == DEC_START)
        d->anywhere = 1;
}

const fbw_dec_sync *fbw_dec_sync_info(const fbw_dec *d) { return &d->sync; }
int fbw_dec_format_unknown(const fbw_dec *d) { return d->unknown; }

void fbw_dec_end(fbw_dec *d, uint64_t ts_ns)
{
    if (fbw_sync_finish(d) != FBW_OK)
        return;
    for (int i = 0; i < 2 && d->err.code == FBW_OK && d->lenient; i++)
        if (d->dir[i].blind || fbw_buf_avail(&d->dir[i].plain))
            if (fbw_sync_resolve(d, i, ts_ns) != FBW_OK)
                fbw_sync_lose(d);
}
