/* SPDX-License-Identifier: MIT */
/* dec.c - session decoder over pkt.c: context learned from the stream itself. */
#include "dec.h"

#include "compress.h"
#include "crypt.h"
#include "msg.h"
#include "status.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FORMATS 4096 /* statements tracked at once; more is not a real client */

/* Formats a statement handle has announced. An entry exists from the op_allocate_statement on:
 * until its reply names the handle it is `pending` and only reachable as 0xFFFF. */
typedef struct stmt_fmt {
    uint16_t handle;
    uint8_t pending, unused;
    fbw_msgfmt bind, select, out, batch; /* out: execute2 singleton output */
} stmt_fmt;

/* A request waiting for its reply; fmt is the statement entry it concerns (index + 1, 0 none),
 * fixed when the request is seen, because 0xFFFF means "allocated last" at that moment. */
typedef struct waiting {
    int32_t op;
    size_t fmt;
} waiting;

typedef struct direction {
    fbw_buf raw;      /* after capture, before decrypt and inflate */
    fbw_buf plain;    /* XDR bytes waiting to be decoded */
    fbw_cipher *ci;   /* from op_crypt on, when the key is known */
    int verified;     /* a packet decrypted with ci decoded: the key is right */
    fbw_inflater *zi;
    uint64_t offset;  /* stream offset of plain's head, for messages */
} direction;

struct fbw_dec {
    fbw_dec_packet_fn fn;
    void *arg;
    fbw_err err;
    fbw_stats stats;
    fbw_pkt_ctx ctx;
    direction dir[2];         /* [1] client->server, [0] server->client */
    int crypt_started;
    int crypt_pending;        /* op_crypt decoded and the key is known: start both ciphers */
    char crypt_plugin[32];
    int have_key;             /* fbw_dec_set_key: the session's key material */
    char key_plugin[16];
    uint8_t key[256], iv[64];
    size_t key_len, iv_len;
    int compress_pending;     /* accept said compress: switch both directions after it */
    stmt_fmt *fmts;
    size_t nfmts;
    size_t alloc_fmt;         /* entry 0xFFFF names (index + 1): the last allocation the client
                               * asked for, if that was a statement; 0 otherwise */
    waiting *q;
    size_t q_head, q_len, q_cap;
    fbw_msgfmt imm_in, imm_out; /* op_exec_immediate2 formats */
    fbw_turn turn;
    int32_t answering;        /* request op the server packet being reported answers */
    size_t msg_fmt;           /* format the packet being decoded framed its input message with:
                               * statement entry (index + 1) or ... */
    int msg_imm;              /* ... imm_in (op_exec_immediate2); both 0: none */
};

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

static const waiting *head(const fbw_dec *d) { return d->q_len ? &d->q[d->q_head] : NULL; }

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
    }
    return NULL;
}

/* ---- what client packets teach ---- */

static int push(fbw_dec *d, int32_t op, size_t fmt)
{
    if (d->q_len == d->q_cap) {
        size_t cap = d->q_cap ? d->q_cap * 2 : 32;
        if (cap > (1u << 20))
            return fbw_err_set(&d->err, FBW_E_PROTO, "more than a million requests without replies");
        waiting *q = malloc(cap * sizeof *q);
        if (!q)
            return fbw_err_set(&d->err, FBW_E_NOMEM, "out of memory");
        for (size_t i = 0; i < d->q_len; i++)
            q[i] = d->q[(d->q_head + i) % d->q_cap];
        free(d->q);
        d->q = q;
        d->q_cap = cap;
        d->q_head = 0;
    }
    d->q[(d->q_head + d->q_len) % d->q_cap] = (waiting){op, fmt};
    d->q_len++;
    return FBW_OK;
}

static void pop(fbw_dec *d)
{
    if (d->q_len) {
        d->q_head = (d->q_head + 1) % d->q_cap;
        d->q_len--;
    }
}

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
        rc = s ? learn(d, &s->batch, p->u.batch_create.blr) : FBW_OK;
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

static int server_packet(fbw_dec *d, const fbw_pkt *p)
{
    const waiting *w = head(d);
    d->answering = w && p->op != FBW_OP_DUMMY && p->op != FBW_OP_CRYPT_KEY_CALLBACK ? w->op : 0;
    switch (p->op) {
    case FBW_OP_DUMMY: case FBW_OP_CRYPT_KEY_CALLBACK: case FBW_OP_INLINE_BLOB: case FBW_OP_SQL_RESPONSE:
        return FBW_OK;
    case FBW_OP_FETCH_RESPONSE:
        if (p->u.sqldata.messages == 0)
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

static int decode_direction(fbw_dec *d, int from_client, uint64_t ts)
{
    direction *x = &d->dir[from_client];
    while (fbw_buf_avail(&x->plain) > 0) {
        fbw_pkt p;
        size_t used = 0;
        d->msg_fmt = 0; /* set again by format_cb if this packet carries an input message */
        d->msg_imm = 0;
        int rc = fbw_pkt_decode(&d->ctx, fbw_buf_head(&x->plain), fbw_buf_avail(&x->plain), &p, &used,
                                &d->err);
        if (rc == FBW_AGAIN)
            return FBW_OK;
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
        fbw_stats_packet(&d->stats, p.op, from_client, used);
        rc = from_client ? client_packet(d, &p) : server_packet(d, &p);
        if (rc == FBW_OK && d->fn)
            d->fn(d->arg, from_client, &p, used, ts);
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
    fbw_stats_turn(&d->stats, &d->turn, from_client, n, ts_ns);
    direction *x = &d->dir[from_client];
    int rc = fbw_buf_append(&x->raw, p, n);
    if (rc == FBW_OK)
        rc = unfilter(d, x);
    if (rc == FBW_OK)
        rc = decode_direction(d, from_client, ts_ns);
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

int fbw_dec_new(fbw_dec_packet_fn fn, void *arg, fbw_dec **out)
{
    fbw_dec *d = calloc(1, sizeof *d);
    if (!d)
        return FBW_E_NOMEM;
    d->fn = fn;
    d->arg = arg;
    fbw_err_clear(&d->err);
    d->ctx.format = format_cb;
    d->ctx.arg = d;
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
    for (int i = 0; i < 2; i++) {
        fbw_buf_free(&d->dir[i].raw);
        fbw_buf_free(&d->dir[i].plain);
        fbw_inflater_free(d->dir[i].zi);
        fbw_cipher_free(d->dir[i].ci);
    }
    OPENSSL_cleanse(d->key, sizeof d->key);
    free(d->q);
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
