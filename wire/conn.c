/* SPDX-License-Identifier: MIT */
/* conn.c - connection state machine: connect, authenticate, start crypt/compression, attach, then
 * ordered replies. Flows follow docs/protocol/packets.md §6-7, auth.md and crypt.md (fbclient:
 * inet.cpp INET_analyze, interface.cpp authReceiveResponse; server: server.cpp accept_connection,
 * ServerAuth). */
#include "conn.h"
#include "request.h"

#include "auth.h"
#include "compress.h"
#include "inline.h"
#include "crypt.h"
#include "keys.h"
#include "pb.h"
#include "ring.h"
#include "status.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#define ISC_INFO_END 1
#define ISC_INFO_FIREBIRD_VERSION 103

typedef struct pending_reply {
    int32_t op;
    uint8_t deferred;
    uint8_t commits;       /* the server may commit a transaction when it runs this request */
    const fbw_msgfmt *fmt; /* rows in the reply, for the decoder */
    fbw_reply_fn fn;
    void *arg;
    uint8_t owned;         /* arg is heap memory to free if the handler never runs */
} pending_reply;

struct fbw_conn {
    fbw_conn_opts o;
    char *strings;           /* one allocation holding copies of the option strings */
    size_t strings_len;
    fbw_conn_state state;
    fbw_err err;
    fbw_conn_info info;
    fbw_pkt_ctx ctx;
    fbw_stats stats;

    fbw_auth_list auth_list;
    char auth_list_text[128];
    fbw_auth *auth;
    int auth_list_sent;      /* the plugin list goes out once per connection */
    fbw_server_keys keys;
    const uint8_t *crypt_iv; /* into keys: the IV the running cipher was made with */
    size_t crypt_iv_len;

    fbw_cipher *enc, *dec;
    fbw_deflater *zd;
    fbw_inflater *zi;

    fbw_buf out_plain;       /* encoded packets not yet filtered */
    fbw_buf out_wire;        /* filtered bytes to write */
    fbw_buf in_scratch;      /* decrypted bytes waiting for inflate */
    fbw_buf in_plain;        /* plain XDR waiting to be decoded */

    uint64_t allocations;    /* requests queued that allocate a server object id */
    int blob_writers;        /* blobs open for writing */
    fbw_ring q;              /* outstanding replies (pending_reply), oldest first */
    fbw_inline *inl;         /* inline blobs received, not yet read (inline.h) */
};

void fbw_conn_opts_init(fbw_conn_opts *o)
{
    memset(o, 0, sizeof *o);
    o->wire_crypt = FBW_WIRE_CRYPT_ENABLED;
    o->protocol_min = 10;
    o->protocol_max = 20;
    o->lazy = 1;
    o->dialect = 3;
    o->inline_blob_size = FBW_INLINE_BLOB_SIZE_DEFAULT;
}

/* ---- option copies ---- */

static size_t str_size(const char *s) { return s ? strlen(s) + 1 : 0; }

static const char *copy_str(char **at, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    memcpy(*at, s, n);
    const char *r = *at;
    *at += n;
    return r;
}

static int copy_opts(fbw_conn *c, const fbw_conn_opts *o)
{
    c->o = *o;
    const char *const *fields[] = {&o->database, &o->user, &o->password, &o->role, &o->auth_list,
                                   &o->crypt_list, &o->charset, &o->session_time_zone,
                                   &o->client_host, &o->client_user, &o->process_name};
    const char **dst[] = {&c->o.database, &c->o.user, &c->o.password, &c->o.role, &c->o.auth_list,
                          &c->o.crypt_list, &c->o.charset, &c->o.session_time_zone,
                          &c->o.client_host, &c->o.client_user, &c->o.process_name};
    size_t total = 1;
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        total += str_size(*fields[i]);
    c->strings = malloc(total);
    if (!c->strings)
        return FBW_E_NOMEM;
    c->strings_len = total;
    char *at = c->strings;
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        *dst[i] = copy_str(&at, *fields[i]);
    return FBW_OK;
}

static const char *opt(const char *s, const char *dflt) { return s && *s ? s : dflt; }

/* ---- errors ---- */

static int fail(fbw_conn *c, int rc)
{
    c->state = FBW_CS_FAILED;
    if (c->err.code == FBW_OK)
        fbw_err_set(&c->err, rc, "%s", fbw_rc_name(rc));
    return rc;
}

static int failf(fbw_conn *c, int rc, const char *what)
{
    fbw_err_set(&c->err, rc, "%s", what);
    return fail(c, rc);
}

/* A server status in a reply during connect/attach ends the connection attempt. */
static int fail_status(fbw_conn *c, const fbw_pkt *p, const char *stage)
{
    int rc = fbw_status_decode(p->u.resp.status, &c->err, NULL);
    if (rc == FBW_OK)
        rc = fbw_err_set(&c->err, FBW_E_PROTO, "unexpected success status");
    fbw_err_prefix(&c->err, "%s", stage);
    c->state = FBW_CS_FAILED;
    return rc;
}

/* ---- sending ---- */

static int send_pkt(fbw_conn *c, const fbw_pkt *p)
{
    fbw_wr w;
    fbw_wr_init(&w, &c->out_plain);
    size_t before = c->out_plain.len;
    int rc = fbw_pkt_encode(&c->ctx, &w, p);
    if (rc) {
        c->out_plain.len = before;
        return fail(c, rc);
    }
    fbw_stats_packet(&c->stats, p->op, 1, c->out_plain.len - before);
    return FBW_OK;
}

/* Move queued packets through compression and encryption into the wire buffer. */
static int filter_out(fbw_conn *c)
{
    size_t n = fbw_buf_avail(&c->out_plain);
    if (n == 0)
        return FBW_OK;
    /* Appending may compact the buffer, so the new bytes are located from its end. */
    size_t before = fbw_buf_avail(&c->out_wire);
    int rc = c->zd ? fbw_deflater_flush(c->zd, fbw_buf_head(&c->out_plain), n, &c->out_wire, &c->err)
                   : fbw_buf_append(&c->out_wire, fbw_buf_head(&c->out_plain), n);
    fbw_buf_reset(&c->out_plain);
    size_t added = fbw_buf_avail(&c->out_wire) - before;
    if (rc == FBW_OK && c->enc)
        rc = fbw_cipher_apply(c->enc, c->out_wire.data + c->out_wire.len - added, added, &c->err);
    return rc ? fail(c, rc) : FBW_OK;
}

int fbw_conn_pending(fbw_conn *c, const uint8_t **p, size_t *n)
{
    int rc = filter_out(c);
    *p = fbw_buf_head(&c->out_wire);
    *n = fbw_buf_avail(&c->out_wire);
    return rc;
}

void fbw_conn_sent(fbw_conn *c, size_t n)
{
    fbw_stats_wire(&c->stats, 1, n);
    fbw_buf_consume(&c->out_wire, n);
}

/* ---- reply queue ---- */

static int push_reply(fbw_conn *c, int32_t op, const fbw_msgfmt *fmt, fbw_reply_fn fn, void *arg)
{
    const fbw_opinfo *oi = fbw_op_info(op);
    pending_reply e = {.op = op, .fmt = fmt, .fn = fn, .arg = arg};
    e.deferred = c->info.lazy && oi && (oi->flags & FBW_OPF_DEFERRED);
    e.commits = op == FBW_OP_COMMIT || op == FBW_OP_COMMIT_RETAINING;
    return fbw_ring_push(&c->q, &e) == FBW_OK ? FBW_OK : fail(c, FBW_E_NOMEM);
}

/* The reply i places from the oldest outstanding one, NULL past the end. */
static pending_reply *reply_at(const fbw_conn *c, size_t i) { return fbw_ring_at(&c->q, i); }

int fbw_conn_outstanding(const fbw_conn *c) { return (int)fbw_ring_len(&c->q); }

int32_t fbw_conn_pending_op(const fbw_conn *c, size_t i)
{
    const pending_reply *e = reply_at(c, i);
    return e ? e->op : 0;
}

int fbw_conn_pending_deferred(const fbw_conn *c, size_t i)
{
    const pending_reply *e = reply_at(c, i);
    return e ? e->deferred : 0;
}

int fbw_conn_pending_commits(const fbw_conn *c, size_t i)
{
    const pending_reply *e = reply_at(c, i);
    return e ? e->commits : 0;
}

void fbw_conn_mark_commits(fbw_conn *c)
{
    pending_reply *e = reply_at(c, fbw_ring_len(&c->q) - 1); /* NULL when empty: len - 1 wraps */
    if (e)
        e->commits = 1;
}

int fbw_conn_outcome_unknown(const fbw_conn *c)
{
    if (c->state != FBW_CS_FAILED)
        return 0;
    const pending_reply *e;
    for (size_t i = 0; (e = reply_at(c, i)) != NULL; i++)
        if (e->commits)
            return 1;
    return 0;
}

int fbw_conn_fail(fbw_conn *c, const fbw_err *why)
{
    if (c->state != FBW_CS_FAILED) {
        c->err = *why;
        if (c->err.code == FBW_OK)
            c->err.code = FBW_E_IO;
    }
    fbw_buf_reset(&c->out_plain); /* a dead connection writes nothing more */
    fbw_buf_reset(&c->out_wire);
    return fail(c, c->err.code);
}

static int ignore_reply(void *arg, fbw_conn *c, const fbw_pkt *reply, fbw_err *err)
{
    (void)arg, (void)c, (void)reply, (void)err;
    return FBW_OK;
}

int fbw_conn_before_wait(fbw_conn *c)
{
    if (c->state != FBW_CS_READY)
        return c->state != FBW_CS_FAILED && c->state != FBW_CS_DETACHED && c->state != FBW_CS_INIT;
    if (fbw_ring_len(&c->q) == 0)
        return 0;
    const pending_reply *e;
    for (size_t i = 0; (e = reply_at(c, i)) != NULL; i++)
        if (!e->deferred)
            return 1;
    /* Every outstanding reply would sit in the server's buffer: ping to flush them. */
    fbw_pkt ping = {.op = FBW_OP_PING};
    int rc = c->info.protocol >= 13 ? send_pkt(c, &ping) : FBW_E_UNSUPPORTED;
    if (rc == FBW_E_UNSUPPORTED)
        return failf(c, FBW_E_PROTO, "deferred replies cannot be flushed below protocol 13"), 0;
    if (rc == FBW_OK)
        rc = push_reply(c, FBW_OP_PING, NULL, ignore_reply, NULL);
    return rc == FBW_OK;
}

int fbw_conn_request(fbw_conn *c, const fbw_pkt *req, fbw_reply_fn fn, void *arg)
{
    return fbw_conn_request_rows(c, req, NULL, fn, arg);
}

/* The live decoder's format source: rows in a reply belong to the request at the head of the queue. */
static const fbw_msgfmt *head_format(void *arg, enum fbw_fmt_kind kind, const fbw_pkt *p, fbw_err *err)
{
    fbw_conn *c = arg;
    (void)p;
    const pending_reply *e = reply_at(c, 0);
    if ((kind == FBW_FMT_FETCH || kind == FBW_FMT_SQL_RESPONSE) && e && e->fmt)
        return e->fmt;
    fbw_err_set(err, FBW_E_PROTO, "server sent rows nobody asked for");
    return NULL;
}

int fbw_conn_request_rows(fbw_conn *c, const fbw_pkt *req, const fbw_msgfmt *fmt, fbw_reply_fn fn,
                          void *arg)
{
    if (c->state == FBW_CS_FAILED)
        return c->err.code;
    if (c->state != FBW_CS_READY)
        return fbw_err_set(&c->err, FBW_E_USAGE, "connection is not attached");
    int rc = send_pkt(c, req);
    if (rc == FBW_OK && fn)
        rc = push_reply(c, req->op, fmt, fn, arg);
    return rc;
}

int fbw_conn_request_owned(fbw_conn *c, const fbw_pkt *req, fbw_reply_fn fn, void *arg)
{
    return fbw_conn_request_rows_owned(c, req, NULL, fn, arg);
}

int fbw_conn_request_rows_owned(fbw_conn *c, const fbw_pkt *req, const fbw_msgfmt *fmt,
                                fbw_reply_fn fn, void *arg)
{
    int rc = fbw_conn_request_rows(c, req, fmt, fn, arg);
    if (rc == FBW_OK)
        reply_at(c, fbw_ring_len(&c->q) - 1)->owned = 1;
    return rc;
}

uint64_t fbw_conn_note_allocation(fbw_conn *c) { return ++c->allocations; }
uint64_t fbw_conn_allocations(const fbw_conn *c) { return c->allocations; }
int fbw_conn_blob_writers(fbw_conn *c, int delta) { return c->blob_writers += delta; }

/* ---- the op_connect packet ---- */

static fbw_bytes view(const void *p, size_t n)
{
    fbw_bytes b = {p, n};
    return b;
}

static fbw_bytes view_str(const char *s) { return view(s, s ? strlen(s) : 0); }

static int start_plugin(fbw_conn *c, const char *name)
{
    fbw_auth_free(c->auth);
    c->auth = NULL;
    int rc = fbw_auth_new(name, opt(c->o.user, ""), opt(c->o.password, ""), &c->auth, &c->err);
    if (rc == FBW_OK)
        snprintf(c->info.auth_plugin, sizeof c->info.auth_plugin, "%s", fbw_auth_name(c->auth));
    return rc;
}

static int user_id_block(fbw_conn *c, fbw_buf *uid)
{
    const uint8_t *data = NULL;
    size_t len = 0;
    int rc = fbw_auth_step(c->auth, NULL, 0, &data, &len, &c->err);
    if (rc)
        return rc;
    uint8_t crypt_le[4] = {(uint8_t)c->o.wire_crypt, 0, 0, 0};
    const char *login = opt(c->o.user, "");
    if (strlen(login) > 255)
        return fbw_err_set(&c->err, FBW_E_USAGE, "user name longer than 255 bytes");
    rc = fbw_pb_put_clumplet(uid, FBW_CNCT_LOGIN, login, strlen(login));
    if (!rc)
        rc = fbw_pb_put_clumplet(uid, FBW_CNCT_PLUGIN_NAME, c->info.auth_plugin, strlen(c->info.auth_plugin));
    if (!rc)
        rc = fbw_pb_put_clumplet(uid, FBW_CNCT_PLUGIN_LIST, c->auth_list_text, strlen(c->auth_list_text));
    if (!rc && len)
        rc = fbw_pb_put_multipart(uid, FBW_CNCT_SPECIFIC_DATA, data, len);
    if (!rc)
        rc = fbw_pb_put_clumplet(uid, FBW_CNCT_CLIENT_CRYPT, crypt_le, 4);
    const char *user = opt(c->o.client_user, "unknown"), *host = opt(c->o.client_host, "unknown");
    if (!rc)
        rc = fbw_pb_put_clumplet(uid, FBW_CNCT_USER, user, strlen(user) > 255 ? 255 : strlen(user));
    if (!rc)
        rc = fbw_pb_put_clumplet(uid, FBW_CNCT_HOST, host, strlen(host) > 255 ? 255 : strlen(host));
    if (!rc)
        rc = fbw_pb_put_clumplet(uid, FBW_CNCT_USER_VERIFICATION, "", 0);
    c->auth_list_sent = 1;
    return rc;
}

int fbw_conn_start(fbw_conn *c)
{
    if (c->state == FBW_CS_FAILED) /* keep the error that ended the connection */
        return c->err.code;
    if (c->state != FBW_CS_INIT)
        return fbw_err_set(&c->err, FBW_E_USAGE, "connection already started");
    fbw_buf uid;
    fbw_buf_init(&uid);
    int rc = start_plugin(c, c->auth_list.name[0]);
    if (rc == FBW_OK)
        rc = user_id_block(c, &uid);
    if (rc) {
        fbw_buf_wipe_free(&uid);
        return fail(c, rc);
    }
    fbw_pkt p = {.op = FBW_OP_CONNECT};
    p.u.cnct.operation = FBW_OP_ATTACH;
    p.u.cnct.cversion = 3; /* CONNECT_VERSION3: strings are UTF-8 */
    p.u.cnct.client_arch = FBW_ARCH_GENERIC;
    p.u.cnct.file = view_str(c->o.database);
    p.u.cnct.user_id = view(uid.data, uid.len);
    int n = 0;
    for (int v = c->o.protocol_min; v <= c->o.protocol_max && n < FBW_CNCT_MAX_VERSIONS; v++, n++) {
        fbw_cnct_version *e = &p.u.cnct.ver[n];
        e->version = fbw_protocol_to_wire(v);
        e->arch = FBW_ARCH_GENERIC;
        e->min_type = 0;
        e->max_type = (uint16_t)((c->o.lazy ? FBW_PTYPE_LAZY_SEND : FBW_PTYPE_BATCH_SEND) |
                                 (c->o.compress && v >= 13 ? FBW_PFLAG_COMPRESS : 0));
        e->weight = (uint16_t)(2 * (n + 1));
    }
    p.u.cnct.count = (uint16_t)n;
    rc = send_pkt(c, &p);
    fbw_buf_wipe_free(&uid);
    if (rc)
        return rc;
    c->state = FBW_CS_CONNECTING;
    return FBW_OK;
}

/* ---- authentication ---- */

/* The server names the plugin to continue with. A different one restarts from phase 1 and the data
 * that came with the switch is ignored (it can be the previous plugin's, docs/protocol/auth.md
 * §4); the same one with no data also means "start again". A plugin the client did not list is
 * answered with empty data, so the server ends the login with its own error (isc_login) instead of
 * fbwire guessing. */
static int auth_continue(fbw_conn *c, fbw_bytes plugin, fbw_bytes data, const uint8_t **out, size_t *len)
{
    char name[32];
    snprintf(name, sizeof name, "%s", c->info.auth_plugin);
    if (plugin.n > 0) {
        if (plugin.n >= sizeof name)
            return fbw_err_set(&c->err, FBW_E_PROTO, "server named an overlong auth plugin");
        memcpy(name, plugin.p, plugin.n);
        name[plugin.n] = 0;
    }
    int restart = data.n == 0 || strcmp(name, c->info.auth_plugin) != 0;
    if (!restart)
        return fbw_auth_step(c->auth, data.p, data.n, out, len, &c->err);
    if (!fbw_auth_list_contains(&c->auth_list, name)) {
        snprintf(c->info.auth_plugin, sizeof c->info.auth_plugin, "%s", name);
        *out = NULL;
        *len = 0;
        return FBW_OK;
    }
    int rc = start_plugin(c, name);
    return rc ? rc : fbw_auth_step(c->auth, NULL, 0, out, len, &c->err);
}

static int send_cont_auth(fbw_conn *c, const uint8_t *data, size_t len)
{
    fbw_pkt p = {.op = FBW_OP_CONT_AUTH};
    p.u.auth.data = view(data, len);
    p.u.auth.name = view_str(c->info.auth_plugin);
    p.u.auth.list = c->auth_list_sent ? view(NULL, 0) : view_str(c->auth_list_text);
    c->auth_list_sent = 1;
    return send_pkt(c, &p);
}

static int add_keys(fbw_conn *c, fbw_bytes k)
{
    return k.n ? fbw_keys_add(&c->keys, k.p, k.n, &c->err) : FBW_OK;
}

/* Compression starts right after the accept packet, both ways (docs/protocol/compression.md §2). */
static int start_compression(fbw_conn *c)
{
    if (fbw_buf_avail(&c->in_plain) > 0 || fbw_buf_avail(&c->out_plain) > 0)
        return fbw_err_set(&c->err, FBW_E_PROTO, "server sent data after the accept packet, before "
                                                 "compression could start");
    int rc = fbw_deflater_new(&c->zd, &c->err);
    if (rc == FBW_OK)
        rc = fbw_inflater_new(&c->zi, &c->err);
    c->info.compressed = rc == FBW_OK;
    return rc;
}

/* ---- attach ---- */

/* A service attach (fbw_conn_opts.service) ends the same handshake with op_service_attach: an SPB
 * carrying the login and the authentication clumplets under the SPB's own tag numbers, nothing of a
 * database's (charset, dialect, time zone). The file name is the service's, "service_mgr". */
static int build_spb(fbw_conn *c, const uint8_t *auth_data, size_t auth_len, int with_plugin,
                     fbw_buf *out)
{
    fbw_dpb d;
    fbw_dpb_init(&d);
    fbw_dpb_add_flag(&d, FBW_SPB_UTF8_FILENAME);
    if (c->o.user && *c->o.user)
        fbw_dpb_add_str(&d, FBW_SPB_USER_NAME, c->o.user);
    fbw_dpb_add_int(&d, FBW_SPB_PROCESS_ID, c->o.process_id);
    fbw_dpb_add_str(&d, FBW_SPB_PROCESS_NAME, opt(c->o.process_name, "fbwire"));
    fbw_dpb_add_str(&d, FBW_SPB_CLIENT_VERSION, "fbwire 0.1");
    if (c->o.role && *c->o.role)
        fbw_dpb_add_str(&d, FBW_SPB_SQL_ROLE_NAME, c->o.role);
    if (auth_len && c->info.protocol < 13) {
        fbw_dpb_add_bytes(&d, FBW_SPB_PASSWORD_ENC, auth_data, auth_len);
    } else if (auth_len || with_plugin) {
        fbw_dpb_add_str(&d, FBW_SPB_AUTH_PLUGIN_NAME, c->info.auth_plugin);
        if (!c->auth_list_sent)
            fbw_dpb_add_str(&d, FBW_SPB_AUTH_PLUGIN_LIST, c->auth_list_text);
        fbw_dpb_add_bytes(&d, FBW_SPB_SPECIFIC_AUTH_DATA, auth_data, auth_len);
    }
    int rc = fbw_spb_attach_build(&d, out);
    fbw_dpb_free(&d);
    return rc;
}

static int build_dpb(fbw_conn *c, const uint8_t *auth_data, size_t auth_len, int with_plugin,
                     fbw_buf *out)
{
    fbw_dpb d;
    fbw_dpb_init(&d);
    fbw_dpb_add_flag(&d, FBW_DPB_UTF8_FILENAME);
    fbw_dpb_add_str(&d, FBW_DPB_LC_CTYPE, opt(c->o.charset, "UTF8"));
    if (c->o.user && *c->o.user)
        fbw_dpb_add_str(&d, FBW_DPB_USER_NAME, c->o.user);
    fbw_dpb_add_int(&d, FBW_DPB_SQL_DIALECT, c->o.dialect);
    fbw_dpb_add_int(&d, FBW_DPB_PROCESS_ID, c->o.process_id);
    fbw_dpb_add_str(&d, FBW_DPB_PROCESS_NAME, opt(c->o.process_name, "fbwire"));
    fbw_dpb_add_str(&d, FBW_DPB_CLIENT_VERSION, "fbwire 0.1");
    if (c->o.role && *c->o.role)
        fbw_dpb_add_str(&d, FBW_DPB_SQL_ROLE_NAME, c->o.role);
    if (c->o.session_time_zone && *c->o.session_time_zone)
        fbw_dpb_add_str(&d, FBW_DPB_SESSION_TIME_ZONE, c->o.session_time_zone);
    if (c->o.create) {
        if (c->o.page_size)
            fbw_dpb_add_int(&d, FBW_DPB_PAGE_SIZE, c->o.page_size);
        fbw_dpb_add_str(&d, FBW_DPB_SET_DB_CHARSET, opt(c->o.charset, "UTF8"));
    }
    if (auth_len && c->info.protocol < 13) {
        /* Before protocol 13 only Legacy_Auth exists: its hash travels as isc_dpb_password_enc. */
        fbw_dpb_add_bytes(&d, FBW_DPB_PASSWORD_ENC, auth_data, auth_len);
    } else if (auth_len || with_plugin) {
        fbw_dpb_add_str(&d, FBW_DPB_AUTH_PLUGIN_NAME, c->info.auth_plugin);
        if (!c->auth_list_sent)
            fbw_dpb_add_str(&d, FBW_DPB_AUTH_PLUGIN_LIST, c->auth_list_text);
        fbw_dpb_add_bytes(&d, FBW_DPB_SPECIFIC_AUTH_DATA, auth_data, auth_len);
    }
    int rc = fbw_dpb_build(&d, out);
    fbw_dpb_free(&d);
    return rc;
}

static int send_attach(fbw_conn *c, const uint8_t *auth_data, size_t auth_len, int with_plugin)
{
    fbw_buf dpb;
    fbw_buf_init(&dpb);
    int rc = c->o.service ? build_spb(c, auth_data, auth_len, with_plugin, &dpb)
                          : build_dpb(c, auth_data, auth_len, with_plugin, &dpb);
    if (rc == FBW_OK) {
        fbw_pkt p = {.op = c->o.service  ? FBW_OP_SERVICE_ATTACH
                           : c->o.create ? FBW_OP_CREATE
                                         : FBW_OP_ATTACH};
        p.u.atch.file = view_str(c->o.service ? opt(c->o.database, "service_mgr") : c->o.database);
        p.u.atch.dpb = view(dpb.data, dpb.len);
        rc = send_pkt(c, &p);
    }
    fbw_buf_wipe_free(&dpb);
    if (rc)
        return fail(c, rc);
    c->state = FBW_CS_ATTACHING;
    return FBW_OK;
}

/* After authentication in the connect phase: choose and start wire encryption, or refuse. */
static int start_crypt_or_attach(fbw_conn *c)
{
    const char *plugin = NULL;
    const uint8_t *iv = NULL, *key = NULL;
    size_t iv_len = 0, key_len = 0;
    fbw_err why;
    fbw_err_clear(&why);
    int rc = FBW_E_UNSUPPORTED;
    if (c->o.wire_crypt != FBW_WIRE_CRYPT_DISABLED) {
        rc = fbw_auth_session_key(c->auth, &key, &key_len, &why);
        if (rc == FBW_OK)
            rc = fbw_keys_choose(&c->keys, opt(c->o.crypt_list, FBW_CRYPT_DEFAULT_LIST), &plugin, &iv,
                                 &iv_len, &why);
    }
    if (rc != FBW_OK) {
        if (c->o.wire_crypt == FBW_WIRE_CRYPT_REQUIRED) {
            fbw_err_set(&c->err, FBW_E_CRYPT, "wire encryption required but not possible: %s", why.msg);
            return fail(c, FBW_E_CRYPT);
        }
        return send_attach(c, NULL, 0, 0);
    }
    fbw_pkt p = {.op = FBW_OP_CRYPT};
    p.u.crypt.plugin = view_str(plugin);
    p.u.crypt.key = view_str("Symmetric");
    rc = send_pkt(c, &p);
    if (rc == FBW_OK)
        rc = filter_out(c); /* op_crypt itself goes out in clear */
    if (rc == FBW_OK)
        rc = fbw_cipher_new(plugin, key, key_len, iv, iv_len, &c->enc, &c->err);
    if (rc == FBW_OK)
        rc = fbw_cipher_new(plugin, key, key_len, iv, iv_len, &c->dec, &c->err);
    if (rc)
        return fail(c, rc);
    snprintf(c->info.wire_crypt, sizeof c->info.wire_crypt, "%s", plugin);
    c->crypt_iv = iv;
    c->crypt_iv_len = iv_len;
    c->state = FBW_CS_CRYPT;
    return FBW_OK;
}

static int on_accept(fbw_conn *c, const fbw_pkt *p)
{
    if (p->op == FBW_OP_REJECT) {
        fbw_err_set(&c->err, FBW_E_SERVER,
                    "connection rejected by remote interface (no protocol in %d..%d accepted)",
                    c->o.protocol_min, c->o.protocol_max);
        c->err.gds[0] = 335544421u; /* isc_connect_reject */
        c->err.ngds = 1;
        memcpy(c->err.sqlstate, "08004", 6);
        return fail(c, FBW_E_SERVER);
    }
    if (p->op == FBW_OP_RESPONSE)
        return fail_status(c, p, "connect");
    if (p->op != FBW_OP_ACCEPT && p->op != FBW_OP_ACCEPT_DATA && p->op != FBW_OP_COND_ACCEPT)
        return failf(c, FBW_E_PROTO, "unexpected packet in answer to op_connect");
    const __typeof__(p->u.acpt) *a = &p->u.acpt;
    c->info.protocol = fbw_protocol_from_wire(a->version);
    if (c->info.protocol < c->o.protocol_min || c->info.protocol > c->o.protocol_max)
        return failf(c, FBW_E_PROTO, "server accepted a protocol version that was not offered");
    c->ctx.protocol = c->info.protocol;
    if (fbw_conn_check_timeout(c, c->o.statement_timeout_ms, &c->err) != FBW_OK)
        return fail(c, FBW_E_UNSUPPORTED); /* before op_attach: a timeout is never ignored */
    c->info.lazy = (a->type & FBW_PTYPE_MASK) == FBW_PTYPE_LAZY_SEND;
    int rc = FBW_OK;
    if (a->type & FBW_PFLAG_COMPRESS)
        rc = start_compression(c);
    if (rc == FBW_OK && p->op != FBW_OP_ACCEPT)
        rc = add_keys(c, a->keys);
    if (rc)
        return fail(c, rc);
    const uint8_t *out = NULL;
    size_t len = 0;
    if (p->op == FBW_OP_COND_ACCEPT) { /* flow A: authenticate now */
        rc = auth_continue(c, a->plugin, a->data, &out, &len);
        if (rc == FBW_OK)
            rc = send_cont_auth(c, out, len);
        if (rc)
            return fail(c, rc);
        c->state = FBW_CS_AUTH;
        return FBW_OK;
    }
    /* The plugin finished on the op_connect data alone (Legacy_Auth listed first): the login is done,
     * so the same crypt policy as after op_cont_auth applies; `required` must not attach in clear. */
    if (p->op == FBW_OP_ACCEPT_DATA && a->authenticated)
        return start_crypt_or_attach(c);
    /* Flow B: authentication rides in op_attach, so no key can exist before that packet goes out in
     * clear (and the server would refuse it with isc_miss_wirecrypt anyway). */
    if (c->o.wire_crypt == FBW_WIRE_CRYPT_REQUIRED) {
        fbw_err_set(&c->err, FBW_E_CRYPT, "wire encryption required but not possible: the server "
                    "skipped connect-phase authentication (protocol %d%s), so no key exists before "
                    "op_attach", c->info.protocol,
                    c->info.protocol < 13 ? ": below 13 only Legacy_Auth exists, which yields no key" : "");
        return fail(c, FBW_E_CRYPT);
    }
    if (p->op == FBW_OP_ACCEPT_DATA) { /* flow B with the server's first data */
        rc = auth_continue(c, a->plugin, a->data, &out, &len);
        return rc ? fail(c, rc) : send_attach(c, out, len, 1);
    }
    /* op_accept: the server ignored the op_connect data; authentication travels in the DPB, with a
     * fresh plugin instance. Below protocol 13 only Legacy_Auth exists. */
    const char *name = c->info.auth_plugin;
    if (c->info.protocol < 13) {
        if (!fbw_auth_list_contains(&c->auth_list, "Legacy_Auth"))
            return failf(c, FBW_E_AUTH, "protocols below 13 only support Legacy_Auth, which sends a "
                                        "crackable hash: add it to the auth plugin list to use them");
        name = "Legacy_Auth";
    }
    rc = start_plugin(c, name);
    if (rc == FBW_OK)
        rc = fbw_auth_step(c->auth, NULL, 0, &out, &len, &c->err);
    c->auth_list_sent = 0; /* nothing reached the server yet in this flow */
    return rc ? fail(c, rc) : send_attach(c, out, len, 1);
}

static int on_auth(fbw_conn *c, const fbw_pkt *p)
{
    if (p->op == FBW_OP_RESPONSE) {
        if (!fbw_status_is_success(p->u.resp.status))
            return fail_status(c, p, "authentication");
        int rc = add_keys(c, p->u.resp.data);
        return rc ? fail(c, rc) : start_crypt_or_attach(c);
    }
    if (p->op != FBW_OP_CONT_AUTH)
        return failf(c, FBW_E_PROTO, "unexpected packet during authentication");
    const uint8_t *out = NULL;
    size_t len = 0;
    int rc = add_keys(c, p->u.auth.keys);
    if (rc == FBW_OK)
        rc = auth_continue(c, p->u.auth.name, p->u.auth.data, &out, &len);
    if (rc == FBW_OK)
        rc = send_cont_auth(c, out, len);
    return rc ? fail(c, rc) : FBW_OK;
}

static int on_crypt(fbw_conn *c, const fbw_pkt *p)
{
    if (p->op != FBW_OP_RESPONSE)
        return failf(c, FBW_E_PROTO, "unexpected packet in answer to op_crypt");
    if (!fbw_status_is_success(p->u.resp.status))
        return fail_status(c, p, "wire crypt");
    return send_attach(c, NULL, 0, 0);
}

static int on_attach(fbw_conn *c, const fbw_pkt *p)
{
    if (p->op == FBW_OP_CONT_AUTH) /* authentication carried on inside op_attach (flow B) */
        return on_auth(c, p);
    if (p->op != FBW_OP_RESPONSE)
        return failf(c, FBW_E_PROTO, "unexpected packet in answer to op_attach");
    if (!fbw_status_is_success(p->u.resp.status))
        return fail_status(c, p, c->o.create ? "create database" : "attach");
    c->info.db_handle = p->u.resp.object;
    c->state = FBW_CS_READY;
    return FBW_OK;
}

/* Encrypted security databases may ask for a key before answering; fbwire has no key to give. */
static int on_key_callback(fbw_conn *c)
{
    fbw_pkt r = {.op = FBW_OP_CRYPT_KEY_CALLBACK};
    return send_pkt(c, &r);
}

static int on_ready(fbw_conn *c, const fbw_pkt *p)
{
    /* Protocol 19 servers put small blobs ahead of the rows that name them: not a reply to
     * anything, kept until a reader asks for the blob. */
    if (p->op == FBW_OP_INLINE_BLOB) {
        int rc = fbw_inline_put(c, p);
        return rc ? failf(c, rc, "op_inline_blob: bad segment list") : FBW_OK;
    }
    pending_reply *e = reply_at(c, 0);
    if (!e)
        return failf(c, FBW_E_PROTO, "server sent a packet nobody asked for");
    int rc = e->fn ? e->fn(e->arg, c, p, &c->err) : FBW_OK;
    if (rc == FBW_AGAIN)
        return FBW_OK;
    /* The handler ran to its end: arg is its business now. It may have queued requests, and a
     * ring that grew moved its elements, so the entry is looked up again. */
    reply_at(c, 0)->owned = 0;
    if (rc)
        return fail(c, rc);
    fbw_ring_pop(&c->q, NULL);
    return FBW_OK;
}

static int dispatch(fbw_conn *c, const fbw_pkt *p)
{
    if (p->op == FBW_OP_CRYPT_KEY_CALLBACK && c->state != FBW_CS_READY)
        return on_key_callback(c);
    switch (c->state) {
    case FBW_CS_CONNECTING: return on_accept(c, p);
    case FBW_CS_AUTH: return on_auth(c, p);
    case FBW_CS_CRYPT: return on_crypt(c, p);
    case FBW_CS_ATTACHING: return on_attach(c, p);
    case FBW_CS_READY:
    case FBW_CS_DETACHED: return on_ready(c, p);
    default: return failf(c, FBW_E_PROTO, "packet received in an impossible state");
    }
}

/* ---- receiving ---- */

static int filter_in(fbw_conn *c, const uint8_t *p, size_t n)
{
    if (!c->dec && !c->zi)
        return fbw_buf_append(&c->in_plain, p, n);
    fbw_buf *dst = c->zi ? &c->in_scratch : &c->in_plain;
    int rc = fbw_buf_append(dst, p, n); /* may compact: the new bytes are the last n */
    if (rc == FBW_OK && c->dec)
        rc = fbw_cipher_apply(c->dec, dst->data + dst->len - n, n, &c->err);
    if (rc == FBW_OK && c->zi) {
        rc = fbw_inflater_feed(c->zi, fbw_buf_head(&c->in_scratch), fbw_buf_avail(&c->in_scratch),
                               &c->in_plain, &c->err);
        fbw_buf_reset(&c->in_scratch);
    }
    return rc;
}

int fbw_conn_recv(fbw_conn *c, const uint8_t *p, size_t n)
{
    if (c->state == FBW_CS_FAILED)
        return c->err.code;
    fbw_stats_wire(&c->stats, 0, n);
    int rc = filter_in(c, p, n);
    if (rc)
        return fail(c, rc);
    while (fbw_buf_avail(&c->in_plain) > 0) {
        fbw_pkt pkt;
        size_t used = 0;
        rc = fbw_pkt_decode(&c->ctx, fbw_buf_head(&c->in_plain), fbw_buf_avail(&c->in_plain), &pkt,
                            &used, &c->err);
        if (rc == FBW_AGAIN)
            return FBW_OK;
        if (rc)
            return fail(c, rc);
        fbw_stats_packet(&c->stats, pkt.op, 0, used);
        /* Consuming only moves the start offset: the packet's views stay valid until the next append,
         * and a filter switch during dispatch can see whether bytes follow the switch point. */
        fbw_buf_consume(&c->in_plain, used);
        if (pkt.op != FBW_OP_DUMMY)
            rc = dispatch(c, &pkt);
        if (rc)
            return rc;
    }
    return FBW_OK;
}

/* ---- after attach ---- */

static int on_detach_reply(void *arg, fbw_conn *c, const fbw_pkt *reply, fbw_err *err)
{
    (void)arg;
    (void)err;
    if (reply->op != FBW_OP_RESPONSE)
        return fbw_err_set(&c->err, FBW_E_PROTO, "unexpected answer to op_detach");
    if (!fbw_status_is_success(reply->u.resp.status)) {
        fbw_status_decode(reply->u.resp.status, &c->err, NULL);
        fbw_err_prefix(&c->err, "detach");
    }
    c->state = FBW_CS_DETACHED;
    fbw_pkt bye = {.op = FBW_OP_DISCONNECT};
    return send_pkt(c, &bye);
}

#define ISC_DRDB_COMPLETED_WITH_ERRS 335544667u

static int on_drop_reply(void *arg, fbw_conn *c, const fbw_pkt *reply, fbw_err *err)
{
    (void)arg;
    (void)err;
    if (reply->op != FBW_OP_RESPONSE)
        return fbw_err_set(&c->err, FBW_E_PROTO, "unexpected answer to op_drop_database");
    if (!fbw_status_is_success(reply->u.resp.status)) {
        fbw_status_decode(reply->u.resp.status, &c->err, NULL);
        fbw_err_prefix(&c->err, "drop database");
        if (c->err.ngds == 0 || c->err.gds[0] != ISC_DRDB_COMPLETED_WITH_ERRS)
            return FBW_OK; /* not dropped: still attached */
    }
    c->state = FBW_CS_DETACHED;
    fbw_pkt bye = {.op = FBW_OP_DISCONNECT};
    return send_pkt(c, &bye);
}

int fbw_conn_drop_database(fbw_conn *c)
{
    fbw_pkt p = {.op = FBW_OP_DROP_DATABASE};
    p.u.rlse.object = c->info.db_handle;
    return fbw_conn_request(c, &p, on_drop_reply, NULL);
}

int fbw_conn_detach(fbw_conn *c)
{
    fbw_pkt p = {.op = c->o.service ? FBW_OP_SERVICE_DETACH : FBW_OP_DETACH};
    p.u.rlse.object = c->info.db_handle;
    return fbw_conn_request(c, &p, on_detach_reply, NULL);
}

/* isc_info_firebird_version: count byte, then length-prefixed version lines; keep the first line. */
static int on_version_reply(void *arg, fbw_conn *c, const fbw_pkt *reply, fbw_err *err)
{
    (void)arg;
    if (reply->op != FBW_OP_RESPONSE)
        return fbw_err_set(err, FBW_E_PROTO, "unexpected answer to op_info_database");
    if (!fbw_status_is_success(reply->u.resp.status)) {
        fbw_status_decode(reply->u.resp.status, &c->err, NULL);
        return FBW_OK;
    }
    fbw_rd r;
    fbw_rd_init(&r, reply->u.resp.data.p, reply->u.resp.data.n, FBW_E_PROTO);
    fbw_bytes item = fbw_xdr_raw(&r, 1);
    fbw_bytes lenb = fbw_xdr_raw(&r, 2);
    if (r.rc || item.p[0] != ISC_INFO_FIREBIRD_VERSION)
        return fbw_err_set(err, FBW_E_PROTO, "op_info_database: no firebird_version item in reply");
    fbw_bytes body = fbw_xdr_raw(&r, fbw_le16(lenb.p));
    fbw_rd b;
    fbw_rd_init(&b, body.p, body.n, FBW_E_PROTO);
    fbw_bytes count = fbw_xdr_raw(&b, 1);
    fbw_bytes l1 = fbw_xdr_raw(&b, 1);
    fbw_bytes line = fbw_xdr_raw(&b, b.rc == FBW_OK && l1.p ? l1.p[0] : 0);
    if (r.rc || b.rc || !count.p || count.p[0] == 0)
        return fbw_err_set(err, FBW_E_PROTO, "op_info_database: malformed firebird_version item");
    size_t n = line.n < sizeof c->info.server_version ? line.n : sizeof c->info.server_version - 1;
    memcpy(c->info.server_version, line.p, n);
    c->info.server_version[n] = 0;
    return FBW_OK;
}

static int on_info_reply(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    fbw_info_result *res = arg;
    (void)c;
    res->done = 1;
    if (r->op != FBW_OP_RESPONSE)
        return fbw_err_set(err, FBW_E_PROTO, "unexpected op %d in answer to an info request",
                           (int)r->op);
    if (fbw_status_decode(r->u.resp.status, &res->err, NULL) == FBW_OK &&
        fbw_buf_append(&res->data, r->u.resp.data.p, r->u.resp.data.n) != FBW_OK)
        fbw_err_set(&res->err, FBW_E_NOMEM, "out of memory for the info reply");
    return FBW_OK;
}

int fbw_conn_info_request(fbw_conn *c, int32_t op, uint16_t object, const uint8_t *items,
                          size_t n, uint32_t buffer_length, fbw_info_result *res)
{
    if (op != FBW_OP_INFO_DATABASE && op != FBW_OP_INFO_TRANSACTION && op != FBW_OP_INFO_SQL &&
        op != FBW_OP_INFO_BLOB)
        return fbw_err_set(&c->err, FBW_E_USAGE, "op %d is not an info request", (int)op);
    if (buffer_length == 0 || buffer_length > FBW_BUF_MAX || n > FBW_STR_MAX)
        return fbw_err_set(&c->err, FBW_E_USAGE, "info buffer length %u or %zu items out of range",
                           (unsigned)buffer_length, n);
    fbw_pkt p = {.op = op};
    p.u.info.object = op == FBW_OP_INFO_DATABASE ? c->info.db_handle : object;
    p.u.info.items = view(items, n);
    p.u.info.buffer_length = buffer_length;
    return fbw_conn_info_packet(c, &p, res);
}

int fbw_conn_info_packet(fbw_conn *c, const fbw_pkt *p, fbw_info_result *res)
{
    res->done = 0;
    fbw_buf_reset(&res->data);
    fbw_err_clear(&res->err);
    return fbw_conn_request(c, p, on_info_reply, res);
}

int fbw_conn_is_service(const fbw_conn *c) { return c->o.service; }

int fbw_conn_cancel(fbw_conn *c, int kind)
{
    if (kind < FBW_CANCEL_DISABLE || kind > FBW_CANCEL_RAISE || c->state != FBW_CS_READY)
        return FBW_E_USAGE; /* the connection's own error stays as it is: nothing failed */
    if (c->info.protocol < 12)
        return FBW_E_UNSUPPORTED;
    fbw_pkt p = {.op = FBW_OP_CANCEL};
    p.u.cancel.kind = (uint16_t)kind;
    return send_pkt(c, &p);
}

int fbw_conn_query_version(fbw_conn *c)
{
    static const uint8_t items[] = {ISC_INFO_FIREBIRD_VERSION, ISC_INFO_END};
    fbw_pkt p = {.op = FBW_OP_INFO_DATABASE};
    p.u.info.object = c->info.db_handle;
    p.u.info.items = view(items, sizeof items);
    p.u.info.buffer_length = 1024;
    return fbw_conn_request(c, &p, on_version_reply, NULL);
}

/* ---- lifecycle ---- */

int fbw_conn_new(const fbw_conn_opts *o, fbw_conn **out, fbw_err *err)
{
    *out = NULL;
    if (o->protocol_min < FBW_PROTOCOL_MIN || o->protocol_max > FBW_PROTOCOL_MAX ||
        o->protocol_min > o->protocol_max)
        return fbw_err_set(err, FBW_E_USAGE, "protocol range %d..%d invalid (allowed %d..%d)",
                           o->protocol_min, o->protocol_max, FBW_PROTOCOL_MIN, FBW_PROTOCOL_MAX);
    if (!o->service && (!o->database || !*o->database)) /* a service attach defaults it */
        return fbw_err_set(err, FBW_E_USAGE, "no database given");
    fbw_conn *c = calloc(1, sizeof *c);
    if (!c)
        return fbw_err_set(err, FBW_E_NOMEM, "out of memory");
    fbw_ring_init(&c->q, sizeof(pending_reply), 0);
    fbw_err_clear(&c->err);
    c->ctx.protocol = 0;
    c->ctx.format = head_format;
    c->ctx.arg = c;
    snprintf(c->info.wire_crypt, sizeof c->info.wire_crypt, "none");
    fbw_keys_init(&c->keys);
    int rc = copy_opts(c, o);
    if (rc == FBW_OK)
        rc = fbw_auth_list_parse(opt(c->o.auth_list, FBW_AUTH_DEFAULT_LIST), &c->auth_list, err);
    if (rc == FBW_OK && c->auth_list.n == 0)
        rc = fbw_err_set(err, FBW_E_USAGE, "empty auth plugin list");
    if (rc == FBW_OK)
        fbw_auth_list_format(&c->auth_list, c->auth_list_text, sizeof c->auth_list_text);
    if (rc) {
        if (rc == FBW_E_NOMEM)
            fbw_err_set(err, rc, "out of memory");
        fbw_conn_free(c);
        return rc;
    }
    *out = c;
    return FBW_OK;
}

void fbw_conn_free(fbw_conn *c)
{
    if (!c)
        return;
    fbw_auth_free(c->auth);
    fbw_cipher_free(c->enc);
    fbw_cipher_free(c->dec);
    fbw_deflater_free(c->zd);
    fbw_inflater_free(c->zi);
    fbw_buf_free(&c->out_plain);
    fbw_buf_free(&c->out_wire);
    fbw_buf_free(&c->in_scratch);
    fbw_buf_free(&c->in_plain);
    for (pending_reply e; fbw_ring_pop(&c->q, &e);) /* replies that never came */
        if (e.owned)
            free(e.arg);
    fbw_ring_free(&c->q);
    fbw_inline_free(c->inl);
    if (c->strings)
        OPENSSL_cleanse(c->strings, c->strings_len);
    free(c->strings);
    OPENSSL_cleanse(c, sizeof *c);
    free(c);
}

fbw_conn_state fbw_conn_get_state(const fbw_conn *c) { return c->state; }
const fbw_err *fbw_conn_error(const fbw_conn *c) { return &c->err; }
fbw_stats *fbw_conn_stats(fbw_conn *c) { return &c->stats; }
const fbw_conn_info *fbw_conn_get_info(const fbw_conn *c) { return &c->info; }
int fbw_conn_row_format(const fbw_conn *c) { return c->o.row_format; }
uint32_t fbw_conn_statement_timeout(const fbw_conn *c) { return c->o.statement_timeout_ms; }

int fbw_conn_check_timeout(const fbw_conn *c, uint32_t ms, fbw_err *err)
{
    if (ms == 0 || c->info.protocol == 0 || c->info.protocol >= FBW_PROTOCOL_STMT_TIMEOUT)
        return FBW_OK;
    return fbw_err_set(err, FBW_E_UNSUPPORTED,
                       "statement timeouts need protocol %d (Firebird 4 or later); this connection "
                       "speaks protocol %d: the timeout of %lu ms was not sent",
                       FBW_PROTOCOL_STMT_TIMEOUT, c->info.protocol, (unsigned long)ms);
}

int fbw_conn_set_statement_timeout(fbw_conn *c, uint32_t ms, fbw_err *err)
{
    int rc = fbw_conn_check_timeout(c, ms, err);
    if (rc == FBW_OK)
        c->o.statement_timeout_ms = ms;
    return rc;
}

void fbw_conn_set_inline_blob_size(fbw_conn *c, int32_t size) { c->o.inline_blob_size = size; }

uint32_t fbw_conn_inline_size(const fbw_conn *c)
{
    if (c->info.protocol < 19 || c->o.inline_blob_size <= 0)
        return 0;
    return c->o.inline_blob_size > 65535 ? 65535u : (uint32_t)c->o.inline_blob_size;
}

size_t fbw_conn_inline_cache(const fbw_conn *c)
{
    return c->o.inline_blob_cache ? c->o.inline_blob_cache : FBW_INLINE_BLOB_CACHE_DEFAULT;
}

fbw_inline **fbw_conn_inline_slot(fbw_conn *c) { return &c->inl; }

int fbw_conn_crypt_keys(const fbw_conn *c, fbw_crypt_keys *out, fbw_err *err)
{
    memset(out, 0, sizeof *out);
    if (!c->enc)
        return fbw_err_set(err, FBW_E_UNSUPPORTED, "the connection is not encrypted");
    const uint8_t *key = NULL;
    size_t key_len = 0;
    int rc = fbw_auth_session_key(c->auth, &key, &key_len, err);
    if (rc)
        return rc;
    out->plugin = c->info.wire_crypt;
    out->key = (fbw_bytes){key, key_len};
    out->iv = (fbw_bytes){c->crypt_iv, c->crypt_iv_len};
    return FBW_OK;
}
