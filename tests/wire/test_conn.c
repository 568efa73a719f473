/* SPDX-License-Identifier: MIT */
/* test_conn.c - the connection state machine driven by bytes only: server packets are built with
 * fbw_pkt_encode/fbw_status_encode and fed through fbw_conn_recv; what the client wants to send is
 * taken from fbw_conn_pending and decoded with fbw_pkt_decode (inflated with zlib first when the
 * connection is compressed). No sockets, no servers. Also: a reply handler that queues requests
 * while its entry heads the reply queue (the queue grows under it).
 * With FBW_CORPUS_DIR set, the server side of the deterministic conversations is written as seeds
 * for fuzz_conn (first byte: the option set, second byte: chunk size; see fuzz_conn.c). */
#include <criterion/criterion.h>

#include "conn.h"
#include "feed.h"
#include "pb.h"
#include "request.h"
#include "status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define ISC_CONNECT_REJECT 335544421u
#define ISC_WIRECRYPT_INCOMPATIBLE 335545064u
#define ISC_LOGIN 335544472u

static fbw_bytes B(const void *p, size_t n)
{
    fbw_bytes b = {p, n};
    return b;
}

static fbw_bytes S(const char *s) { return B(s, s ? strlen(s) : 0); }

static int contains(fbw_bytes hay, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= hay.n; i++)
        if (memcmp(hay.p + i, needle, n) == 0)
            return 1;
    return 0;
}

/* ---- the fake server's side of the stream ---- */

typedef struct srv {
    fbw_buf in;       /* plain bytes the client sent, not yet decoded */
    fbw_buf out;      /* server bytes fed so far (for seeds) */
    int compressed;
    z_stream inf, def;
} srv;

static void srv_init(srv *s)
{
    memset(s, 0, sizeof *s);
    fbw_buf_init(&s->in);
    fbw_buf_init(&s->out);
}

static void srv_compress(srv *s)
{
    s->compressed = 1;
    cr_assert_eq(inflateInit(&s->inf), Z_OK);
    cr_assert_eq(deflateInit(&s->def, Z_DEFAULT_COMPRESSION), Z_OK);
}

static void srv_free(srv *s)
{
    if (s->compressed) {
        inflateEnd(&s->inf);
        deflateEnd(&s->def);
    }
    fbw_buf_free(&s->in);
    fbw_buf_free(&s->out);
}

/* Take everything the client has to send. */
static void drain(fbw_conn *c, srv *s)
{
    const uint8_t *p;
    size_t n;
    cr_assert_eq(fbw_conn_pending(c, &p, &n), FBW_OK);
    if (n == 0)
        return;
    if (!s->compressed) {
        fbw_buf_append(&s->in, p, n);
    } else {
        s->inf.next_in = (Bytef *)p;
        s->inf.avail_in = (uInt)n;
        do {
            uint8_t tmp[4096];
            s->inf.next_out = tmp;
            s->inf.avail_out = sizeof tmp;
            int zr = inflate(&s->inf, Z_NO_FLUSH);
            cr_assert(zr == Z_OK || zr == Z_BUF_ERROR, "client sent a bad zlib stream (%d)", zr);
            fbw_buf_append(&s->in, tmp, sizeof tmp - s->inf.avail_out);
        } while (s->inf.avail_in > 0 || s->inf.avail_out == 0);
    }
    fbw_conn_sent(c, n);
}

/* Decode the next packet the client sent; its bytes are copied to *hold (views point there). */
static void client_pkt(srv *s, int protocol, fbw_pkt *out, fbw_buf *hold)
{
    fbw_pkt_ctx ctx = {protocol, NULL, NULL};
    fbw_buf_init(hold);
    fbw_buf_append(hold, fbw_buf_head(&s->in), fbw_buf_avail(&s->in));
    size_t used = 0;
    fbw_err err;
    fbw_err_clear(&err);
    int rc = fbw_pkt_decode(&ctx, hold->data, hold->len, out, &used, &err);
    cr_assert_eq(rc, FBW_OK, "client packet: %s (%d), %zu bytes pending", err.msg, rc, hold->len);
    fbw_buf_consume(&s->in, used);
}

static void expect_nothing_sent(srv *s)
{
    cr_assert_eq(fbw_buf_avail(&s->in), 0, "client sent %zu unexpected bytes", fbw_buf_avail(&s->in));
}

/* Encode a server packet into raw (plain XDR). */
static void encode(const fbw_pkt *p, int protocol, fbw_buf *raw)
{
    fbw_pkt_ctx ctx = {protocol, NULL, NULL};
    fbw_wr w;
    fbw_wr_init(&w, raw);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, p), FBW_OK);
}

/* Feed plain XDR bytes to the client (deflated first when compressed). Returns fbw_conn_recv's rc. */
static int feed(fbw_conn *c, srv *s, const uint8_t *p, size_t n)
{
    fbw_buf wire;
    fbw_buf_init(&wire);
    if (!s->compressed) {
        fbw_buf_append(&wire, p, n);
    } else {
        s->def.next_in = (Bytef *)p;
        s->def.avail_in = (uInt)n;
        do {
            uint8_t tmp[4096];
            s->def.next_out = tmp;
            s->def.avail_out = sizeof tmp;
            cr_assert_eq(deflate(&s->def, Z_SYNC_FLUSH), Z_OK);
            fbw_buf_append(&wire, tmp, sizeof tmp - s->def.avail_out);
        } while (s->def.avail_out == 0);
    }
    fbw_buf_append(&s->out, wire.data, wire.len);
    int rc = fbw_conn_recv(c, wire.data, wire.len);
    fbw_buf_free(&wire);
    return rc;
}

static int send_pkt(fbw_conn *c, srv *s, const fbw_pkt *p, int protocol)
{
    fbw_buf raw;
    fbw_buf_init(&raw);
    encode(p, protocol, &raw);
    int rc = feed(c, s, raw.data, raw.len);
    fbw_buf_free(&raw);
    return rc;
}

static void accept_pkt(fbw_pkt *p, int op, uint16_t version, uint16_t type, fbw_bytes data, const char *plugin,
                       uint16_t authenticated)
{
    memset(p, 0, sizeof *p);
    p->op = op;
    p->u.acpt.version = version;
    p->u.acpt.arch = FBW_ARCH_GENERIC;
    p->u.acpt.type = type;
    p->u.acpt.data = data;
    p->u.acpt.plugin = S(plugin);
    p->u.acpt.authenticated = authenticated;
}

/* op_response with the status args given (nargs 0: success) */
static int send_response(fbw_conn *c, srv *s, uint16_t object, fbw_bytes data, const fbw_status_arg *st,
                         int nargs, int protocol)
{
    static const fbw_status_arg ok = {FBW_ARG_GDS, 0, NULL};
    fbw_buf sv;
    fbw_buf_init(&sv);
    fbw_wr w;
    fbw_wr_init(&w, &sv);
    fbw_status_encode(&w, nargs ? st : &ok, nargs ? nargs : 1);
    fbw_pkt p = {.op = FBW_OP_RESPONSE};
    p.u.resp.object = object;
    p.u.resp.data = data;
    p.u.resp.status = B(sv.data, sv.len);
    int rc = send_pkt(c, s, &p, protocol);
    fbw_buf_free(&sv);
    return rc;
}

/* ---- clumplet and DPB readers ---- */

static int uid_find(fbw_bytes uid, uint8_t tag, fbw_bytes *val)
{
    for (size_t i = 0; i + 2 <= uid.n;) {
        uint8_t t = uid.p[i], len = uid.p[i + 1];
        cr_assert(i + 2 + len <= uid.n, "user id block overruns");
        if (t == tag) {
            *val = B(uid.p + i + 2, len);
            return 1;
        }
        i += 2 + (size_t)len;
    }
    return 0;
}

/* Concatenated multipart CNCT_specific_data (parts in order). */
static size_t uid_specific(fbw_bytes uid, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i + 2 <= uid.n;) {
        uint8_t t = uid.p[i], len = uid.p[i + 1];
        if (t == FBW_CNCT_SPECIFIC_DATA && len > 1) {
            cr_assert(n + len - 1 <= cap);
            memcpy(out + n, uid.p + i + 3, (size_t)len - 1);
            n += (size_t)len - 1;
        }
        i += 2 + (size_t)len;
    }
    return n;
}

static int dpb_find(fbw_bytes dpb, uint8_t tag, fbw_bytes *val)
{
    cr_assert(dpb.n >= 1);
    int wide = dpb.p[0] == FBW_DPB_VERSION2;
    cr_assert(wide || dpb.p[0] == FBW_DPB_VERSION1);
    size_t hl = wide ? 5 : 2;
    for (size_t i = 1; i + hl <= dpb.n;) {
        size_t len = wide ? fbw_le32(dpb.p + i + 1) : dpb.p[i + 1];
        cr_assert(i + hl + len <= dpb.n, "DPB overruns");
        if (dpb.p[i] == tag) {
            *val = B(dpb.p + i + hl, len);
            return 1;
        }
        i += hl + len;
    }
    return 0;
}

static void eqs(fbw_bytes got, const char *want, const char *what)
{
    cr_assert(got.n == strlen(want) && memcmp(got.p, want, got.n) == 0, "%s: '%.*s', want '%s'", what,
              (int)got.n, (const char *)got.p, want);
}

/* ---- connections ---- */

static fbw_conn *mk(const char *auth_list, int compress, int pmin, int pmax)
{
    fbw_conn_opts o;
    fbw_conn_opts_init(&o);
    o.database = "/db/t.fdb";
    o.user = "SYSDBA";
    o.password = "masterkey";
    o.auth_list = auth_list;
    o.compress = compress;
    if (pmin)
        o.protocol_min = pmin;
    if (pmax)
        o.protocol_max = pmax;
    o.client_host = "ws1";
    o.client_user = "joe";
    fbw_conn *c = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_conn_new(&o, &c, &err), FBW_OK, "%s", err.msg);
    return c;
}

/* New connection, started, op_connect taken (and checked to be one). */
static fbw_conn *started(srv *s, const char *auth_list, int compress, fbw_pkt *cnct, fbw_buf *hold)
{
    fbw_conn *c = mk(auth_list, compress, 0, 0);
    cr_assert_eq(fbw_conn_start(c), FBW_OK, "%s", fbw_conn_error(c)->msg);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_CONNECTING);
    drain(c, s);
    fbw_pkt tmp;
    fbw_buf h;
    client_pkt(s, 0, cnct ? cnct : &tmp, hold ? hold : &h);
    cr_assert_eq((cnct ? cnct : &tmp)->op, FBW_OP_CONNECT);
    if (!hold)
        fbw_buf_free(&h);
    expect_nothing_sent(s);
    return c;
}

static void save_seed(const char *name, uint8_t optset, const srv *s)
{
    char dir[512];
    const char *d = fbw_test_corpus_dir("fuzz_conn", dir, sizeof dir);
    if (!d)
        return;
    fbw_buf b;
    fbw_buf_init(&b);
    uint8_t hdr[2] = {optset, 0};
    fbw_buf_append(&b, hdr, 2);
    fbw_buf_append(&b, s->out.data, s->out.len);
    fbw_test_save(d, name, b.data, b.len);
    fbw_buf_free(&b);
}

/* ---- (1) op_reject ---- */

Test(conn, reject)
{
    srv s;
    srv_init(&s);
    fbw_conn *c = started(&s, "Legacy_Auth", 0, NULL, NULL);
    fbw_pkt r = {.op = FBW_OP_REJECT};
    cr_assert_eq(send_pkt(c, &s, &r, 0), FBW_E_SERVER);
    const fbw_err *e = fbw_conn_error(c);
    cr_assert_eq(e->code, FBW_E_SERVER);
    cr_assert_eq(e->gds[0], ISC_CONNECT_REJECT);
    cr_assert_eq(e->ngds, 1);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_FAILED);
    save_seed("reject", 0, &s);
    fbw_conn_free(c);
    srv_free(&s);
}

/* ---- (2) error status in answer to op_connect ---- */

Test(conn, connect_answered_with_error_status)
{
    srv s;
    srv_init(&s);
    fbw_conn *c = started(&s, "Srp256,Srp", 0, NULL, NULL);
    static const fbw_status_arg st[] = {{FBW_ARG_GDS, ISC_WIRECRYPT_INCOMPATIBLE, NULL}};
    cr_assert_eq(send_response(c, &s, 0, B(NULL, 0), st, 1, 0), FBW_E_SERVER);
    const fbw_err *e = fbw_conn_error(c);
    cr_assert_eq(e->gds[0], ISC_WIRECRYPT_INCOMPATIBLE);
    cr_assert_not_null(strstr(e->msg, "Incompatible wire encryption levels"), "%s", e->msg);
    cr_assert_str_eq(e->sqlstate, "28000");
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_FAILED);
    fbw_conn_free(c);
    srv_free(&s);
}

/* ---- (3) Legacy_Auth done in the connect phase, then attach ---- */

static void check_attach(srv *s, int protocol)
{
    fbw_pkt a;
    fbw_buf hold;
    client_pkt(s, protocol, &a, &hold);
    cr_assert_eq(a.op, FBW_OP_ATTACH);
    eqs(a.u.atch.file, "/db/t.fdb", "attach file");
    fbw_bytes v;
    cr_assert(dpb_find(a.u.atch.dpb, FBW_DPB_LC_CTYPE, &v));
    eqs(v, "UTF8", "lc_ctype");
    cr_assert(dpb_find(a.u.atch.dpb, FBW_DPB_SQL_DIALECT, &v));
    cr_assert(v.n == 4 && fbw_le32(v.p) == 3, "dialect 3");
    cr_assert(dpb_find(a.u.atch.dpb, FBW_DPB_UTF8_FILENAME, &v));
    cr_assert_eq(v.n, 0);
    cr_assert(dpb_find(a.u.atch.dpb, FBW_DPB_USER_NAME, &v));
    eqs(v, "SYSDBA", "user name");
    cr_assert_not(dpb_find(a.u.atch.dpb, FBW_DPB_SPECIFIC_AUTH_DATA, &v), "no auth data after connect-phase auth");
    cr_assert_not(dpb_find(a.u.atch.dpb, FBW_DPB_AUTH_PLUGIN_NAME, &v));
    cr_assert_not(dpb_find(a.u.atch.dpb, FBW_DPB_AUTH_PLUGIN_LIST, &v));
    cr_assert_not(dpb_find(a.u.atch.dpb, FBW_DPB_PASSWORD_ENC, &v));
    cr_assert_not(dpb_find(a.u.atch.dpb, 29 /* isc_dpb_password */, &v), "the password never goes out");
    cr_assert_not(contains(a.u.atch.dpb, "masterkey"));
    fbw_buf_free(&hold);
}

Test(conn, legacy_auth_then_attach)
{
    srv s;
    srv_init(&s);
    fbw_pkt cn;
    fbw_buf hold;
    fbw_conn *c = started(&s, "Legacy_Auth", 0, &cn, &hold);
    fbw_bytes v;
    cr_assert(uid_find(cn.u.cnct.user_id, FBW_CNCT_PLUGIN_NAME, &v));
    eqs(v, "Legacy_Auth", "plugin name");
    cr_assert(uid_find(cn.u.cnct.user_id, FBW_CNCT_LOGIN, &v));
    eqs(v, "SYSDBA", "login");
    char spec[512];
    size_t n = uid_specific(cn.u.cnct.user_id, spec, sizeof spec);
    cr_assert_eq(n, 11, "Legacy_Auth sends its 11-char hash");
    cr_assert_not(contains(cn.u.cnct.user_id, "masterkey"));
    cr_assert_eq(cn.u.cnct.count, 11, "offers P10..P20 by default");
    fbw_buf_free(&hold);

    fbw_pkt acc;
    accept_pkt(&acc, FBW_OP_ACCEPT_DATA, 0x800F, FBW_PTYPE_LAZY_SEND, B(NULL, 0), "", 1);
    cr_assert_eq(send_pkt(c, &s, &acc, 0), FBW_OK, "%s", fbw_conn_error(c)->msg);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_ATTACHING);
    cr_assert_eq(fbw_conn_get_info(c)->protocol, 15);
    cr_assert(fbw_conn_get_info(c)->lazy);
    drain(c, &s);
    check_attach(&s, 15);
    expect_nothing_sent(&s);

    cr_assert_eq(send_response(c, &s, 5, B(NULL, 0), NULL, 0, 15), FBW_OK, "%s", fbw_conn_error(c)->msg);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_READY);
    cr_assert_eq(fbw_conn_get_info(c)->db_handle, 5);
    cr_assert_str_eq(fbw_conn_get_info(c)->wire_crypt, "none");

    /* stats saw every packet: 2 sent (connect, attach), 2 received */
    const fbw_stats *st = fbw_conn_stats(c);
    cr_assert_eq(st->op[FBW_OP_CONNECT].packets_sent, 1);
    cr_assert_eq(st->op[FBW_OP_ATTACH].packets_sent, 1);
    cr_assert_eq(st->op[FBW_OP_ACCEPT_DATA].packets_received, 1);
    cr_assert_eq(st->op[FBW_OP_RESPONSE].packets_received, 1);
    cr_assert_eq(st->op[FBW_OP_RESPONSE].bytes_received, 32);
    cr_assert_eq(st->wire_bytes_received, s.out.len);
    save_seed("legacy", 0, &s);
    fbw_conn_free(c);
    srv_free(&s);
}

/* ---- (4) plugin switch: Srp256 offered, server continues with Srp ---- */

static int is_upper_hex(fbw_bytes b)
{
    for (size_t i = 0; i < b.n; i++)
        if (!((b.p[i] >= '0' && b.p[i] <= '9') || (b.p[i] >= 'A' && b.p[i] <= 'F')))
            return 0;
    return b.n > 0;
}

Test(conn, plugin_switch_restarts_phase_one)
{
    srv s;
    srv_init(&s);
    fbw_pkt cn;
    fbw_buf hold;
    fbw_conn *c = started(&s, "Srp256,Srp", 0, &cn, &hold);
    fbw_bytes v;
    cr_assert(uid_find(cn.u.cnct.user_id, FBW_CNCT_PLUGIN_NAME, &v));
    eqs(v, "Srp256", "first plugin");
    char a1[600];
    size_t a1n = uid_specific(cn.u.cnct.user_id, a1, sizeof a1);
    cr_assert(a1n > 200 && is_upper_hex(B(a1, a1n)), "op_connect carries hex(A)");

    /* salt and B of the previous plugin: must be ignored by the new one */
    uint8_t salt_b[2 + 32 + 2 + 64];
    salt_b[0] = 32;
    salt_b[1] = 0;
    memset(salt_b + 2, 'S', 32);
    salt_b[34] = 64;
    salt_b[35] = 0;
    memset(salt_b + 36, '7', 64);
    fbw_pkt acc;
    accept_pkt(&acc, FBW_OP_COND_ACCEPT, 0x8010, FBW_PTYPE_LAZY_SEND, B(salt_b, sizeof salt_b), "Srp", 0);
    cr_assert_eq(send_pkt(c, &s, &acc, 0), FBW_OK, "%s", fbw_conn_error(c)->msg);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_AUTH);
    cr_assert_str_eq(fbw_conn_get_info(c)->auth_plugin, "Srp");
    drain(c, &s);
    fbw_pkt ca;
    fbw_buf h2;
    client_pkt(&s, 16, &ca, &h2);
    cr_assert_eq(ca.op, FBW_OP_CONT_AUTH);
    eqs(ca.u.auth.name, "Srp", "plugin named in op_cont_auth");
    cr_assert(ca.u.auth.data.n > 200 && is_upper_hex(ca.u.auth.data),
              "phase 1 of Srp (hex A, %zu chars), not a proof", ca.u.auth.data.n);
    cr_assert(ca.u.auth.data.n != a1n || memcmp(ca.u.auth.data.p, a1, a1n) != 0, "a new key pair");
    cr_assert_eq(ca.u.auth.list.n, 0, "the plugin list went out with op_connect already");
    cr_assert_eq(ca.u.auth.keys.n, 0);
    expect_nothing_sent(&s);
    fbw_buf_free(&h2);
    fbw_buf_free(&hold);
    fbw_conn_free(c);
    srv_free(&s);
}

Test(conn, same_plugin_without_data_restarts_too)
{
    srv s;
    srv_init(&s);
    fbw_conn *c = started(&s, "Srp256,Srp", 0, NULL, NULL);
    fbw_pkt acc;
    accept_pkt(&acc, FBW_OP_COND_ACCEPT, 0x8010, FBW_PTYPE_LAZY_SEND, B(NULL, 0), "Srp256", 0);
    cr_assert_eq(send_pkt(c, &s, &acc, 0), FBW_OK, "%s", fbw_conn_error(c)->msg);
    drain(c, &s);
    fbw_pkt ca;
    fbw_buf h;
    client_pkt(&s, 16, &ca, &h);
    cr_assert_eq(ca.op, FBW_OP_CONT_AUTH);
    eqs(ca.u.auth.name, "Srp256", "name");
    cr_assert(ca.u.auth.data.n > 200 && is_upper_hex(ca.u.auth.data));
    fbw_buf_free(&h);
    fbw_conn_free(c);
    srv_free(&s);
}

/* ---- (5) the server names a plugin the client did not list ---- */

Test(conn, unlisted_plugin_gets_empty_answer)
{
    srv s;
    srv_init(&s);
    fbw_conn *c = started(&s, "Srp256,Srp", 0, NULL, NULL);
    fbw_pkt acc;
    accept_pkt(&acc, FBW_OP_COND_ACCEPT, 0x800F, FBW_PTYPE_LAZY_SEND, B("xx", 2), "Legacy_Auth", 0);
    cr_assert_eq(send_pkt(c, &s, &acc, 0), FBW_OK, "%s", fbw_conn_error(c)->msg);
    drain(c, &s);
    fbw_pkt ca;
    fbw_buf h;
    client_pkt(&s, 15, &ca, &h);
    cr_assert_eq(ca.op, FBW_OP_CONT_AUTH);
    cr_assert_eq(ca.u.auth.data.n, 0, "no data for a plugin fbwire was not allowed to use");
    eqs(ca.u.auth.name, "Legacy_Auth", "name");
    fbw_buf_free(&h);
    /* the server then ends the login */
    static const fbw_status_arg st[] = {{FBW_ARG_GDS, ISC_LOGIN, NULL}};
    cr_assert_eq(send_response(c, &s, 0, B(NULL, 0), st, 1, 15), FBW_E_SERVER);
    cr_assert_eq(fbw_conn_error(c)->gds[0], ISC_LOGIN);
    cr_assert_not_null(strstr(fbw_conn_error(c)->msg, "authentication"), "%s", fbw_conn_error(c)->msg);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_FAILED);
    fbw_conn_free(c);
    srv_free(&s);
}

/* ---- (6) garbage after the accept ---- */

static int ignore_reply(void *arg, fbw_conn *c, const fbw_pkt *reply, fbw_err *err)
{
    (void)arg, (void)c, (void)reply, (void)err;
    return FBW_OK;
}

Test(conn, garbage_after_accept_fails_for_good)
{
    srv s;
    srv_init(&s);
    fbw_conn *c = started(&s, "Legacy_Auth", 0, NULL, NULL);
    fbw_pkt acc;
    accept_pkt(&acc, FBW_OP_ACCEPT_DATA, 0x800F, FBW_PTYPE_LAZY_SEND, B(NULL, 0), "", 1);
    cr_assert_eq(send_pkt(c, &s, &acc, 0), FBW_OK);
    static const uint8_t junk[] = {0, 0, 0, 5, 0xde, 0xad, 0xbe, 0xef};
    cr_assert_eq(feed(c, &s, junk, sizeof junk), FBW_E_PROTO);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_FAILED);
    char msg[FBW_ERR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", fbw_conn_error(c)->msg);
    cr_assert_not_null(strstr(msg, "op_5"), "%s", msg);
    save_seed("garbage", 0, &s);

    /* every later call gives the same error and leaves the message alone */
    static const uint8_t ok_resp[32] = {0, 0, 0, 9, [23] = 1};
    cr_assert_eq(fbw_conn_recv(c, ok_resp, sizeof ok_resp), FBW_E_PROTO);
    fbw_pkt ping = {.op = FBW_OP_PING};
    cr_assert_eq(fbw_conn_request(c, &ping, ignore_reply, NULL), FBW_E_PROTO);
    cr_assert_eq(fbw_conn_detach(c), FBW_E_PROTO);
    cr_assert_eq(fbw_conn_query_version(c), FBW_E_PROTO);
    cr_assert_eq(fbw_conn_start(c), FBW_E_PROTO);
    cr_assert_eq(fbw_conn_before_wait(c), 0, "nothing to wait for");
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_FAILED);
    cr_assert_str_eq(fbw_conn_error(c)->msg, msg);
    fbw_conn_free(c);
    srv_free(&s);
}

/* ---- (7) op_dummy between packets ---- */

Test(conn, dummy_packets_are_skipped)
{
    srv s;
    srv_init(&s);
    fbw_conn *c = started(&s, "Legacy_Auth", 0, NULL, NULL);
    fbw_buf raw;
    fbw_buf_init(&raw);
    fbw_pkt d = {.op = FBW_OP_DUMMY}, acc;
    accept_pkt(&acc, FBW_OP_ACCEPT_DATA, 0x800F, FBW_PTYPE_LAZY_SEND, B(NULL, 0), "", 1);
    encode(&d, 0, &raw);
    encode(&d, 0, &raw);
    encode(&acc, 0, &raw);
    cr_assert_eq(feed(c, &s, raw.data, raw.len), FBW_OK, "%s", fbw_conn_error(c)->msg);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_ATTACHING);
    drain(c, &s);
    check_attach(&s, 15);
    fbw_buf_reset(&raw);
    encode(&d, 15, &raw);
    cr_assert_eq(feed(c, &s, raw.data, raw.len), FBW_OK);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_ATTACHING, "a dummy is no answer");
    cr_assert_eq(send_response(c, &s, 0, B(NULL, 0), NULL, 0, 15), FBW_OK);
    cr_assert_eq(feed(c, &s, raw.data, raw.len), FBW_OK);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_READY);
    cr_assert_eq(fbw_conn_outstanding(c), 0);
    cr_assert_eq(fbw_conn_stats(c)->op[FBW_OP_DUMMY].packets_received, 4);
    expect_nothing_sent(&s);
    save_seed("dummy", 0, &s);
    fbw_buf_free(&raw);
    fbw_conn_free(c);
    srv_free(&s);
}

/* ---- (8) compression ---- */

Test(conn, compression_after_accept)
{
    srv s;
    srv_init(&s);
    fbw_pkt cn;
    fbw_buf hold;
    fbw_conn *c = started(&s, "Legacy_Auth", 1, &cn, &hold);
    for (int i = 0; i < cn.u.cnct.count; i++) {
        int v = fbw_protocol_from_wire(cn.u.cnct.ver[i].version);
        cr_assert_eq(cn.u.cnct.ver[i].max_type, v >= 13 ? 0x105 : 5, "P%d", v);
    }
    fbw_buf_free(&hold);
    fbw_pkt acc;
    accept_pkt(&acc, FBW_OP_ACCEPT_DATA, 0x800F, FBW_PTYPE_LAZY_SEND | FBW_PFLAG_COMPRESS, B(NULL, 0), "", 1);
    cr_assert_eq(send_pkt(c, &s, &acc, 0), FBW_OK, "%s", fbw_conn_error(c)->msg);
    cr_assert(fbw_conn_get_info(c)->compressed);
    srv_compress(&s); /* everything after the accept is zlib, both ways */
    const uint8_t *p;
    size_t n;
    cr_assert_eq(fbw_conn_pending(c, &p, &n), FBW_OK);
    cr_assert(n >= 2 && p[0] == 0x78, "zlib header, got %02x", n ? p[0] : 0);
    drain(c, &s);
    check_attach(&s, 15);
    cr_assert_eq(send_response(c, &s, 0, B(NULL, 0), NULL, 0, 15), FBW_OK, "%s", fbw_conn_error(c)->msg);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_READY);

    /* a request after attach goes out compressed too, and its answer comes back compressed */
    cr_assert_eq(fbw_conn_query_version(c), FBW_OK);
    drain(c, &s);
    fbw_pkt q;
    fbw_buf h;
    client_pkt(&s, 15, &q, &h);
    cr_assert_eq(q.op, FBW_OP_INFO_DATABASE);
    fbw_buf_free(&h);
    static const char ver[] = "LI-V3.0.11.33703 Firebird 3.0";
    uint8_t info[64];
    size_t k = 0;
    info[k++] = 103;
    info[k++] = (uint8_t)(2 + sizeof ver - 1);
    info[k++] = 0;
    info[k++] = 1;
    info[k++] = (uint8_t)(sizeof ver - 1);
    memcpy(info + k, ver, sizeof ver - 1);
    k += sizeof ver - 1;
    info[k++] = 1;
    cr_assert_eq(send_response(c, &s, 0, B(info, k), NULL, 0, 15), FBW_OK, "%s", fbw_conn_error(c)->msg);
    cr_assert_str_eq(fbw_conn_get_info(c)->server_version, ver);
    cr_assert_eq(fbw_conn_outstanding(c), 0);
    save_seed("compressed", 1, &s);
    fbw_conn_free(c);
    srv_free(&s);
}

/* ---- (9) protocol outside the offered range ---- */

Test(conn, protocol_outside_offered_range)
{
    static const struct {
        int op;
        uint16_t version;
    } bad[] = {{FBW_OP_ACCEPT, 0x8010}, {FBW_OP_ACCEPT, 10}, {FBW_OP_ACCEPT_DATA, 0x800C},
               {FBW_OP_COND_ACCEPT, 0x8011}, {FBW_OP_ACCEPT, 0x0005}, {FBW_OP_ACCEPT, 0xFFFF}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        srv s;
        srv_init(&s);
        fbw_conn *c = mk("Legacy_Auth", 0, 13, 15);
        cr_assert_eq(fbw_conn_start(c), FBW_OK);
        drain(c, &s);
        fbw_pkt cn;
        fbw_buf h;
        client_pkt(&s, 0, &cn, &h);
        cr_assert_eq(cn.u.cnct.count, 3);
        fbw_buf_free(&h);
        fbw_pkt acc;
        accept_pkt(&acc, bad[i].op, bad[i].version, FBW_PTYPE_LAZY_SEND, B(NULL, 0), "", 1);
        cr_assert_eq(send_pkt(c, &s, &acc, 0), FBW_E_PROTO, "version 0x%04x", bad[i].version);
        cr_assert_eq(fbw_conn_get_state(c), FBW_CS_FAILED);
        drain(c, &s);
        expect_nothing_sent(&s);
        fbw_conn_free(c);
        srv_free(&s);
    }
}

/* ---- (10) the same conversation fed whole, byte by byte and split everywhere ---- */

typedef struct sink_state {
    fbw_conn *c;
    srv s;
} sink_state;

static void *sink_open(void *arg)
{
    (void)arg;
    sink_state *st = calloc(1, sizeof *st);
    srv_init(&st->s);
    st->c = started(&st->s, "Legacy_Auth", 0, NULL, NULL);
    return st;
}

static int sink_push(void *state, const uint8_t *p, size_t n)
{
    sink_state *st = state;
    return fbw_conn_recv(st->c, p, n);
}

static void sink_summary(void *state, fbw_buf *out)
{
    sink_state *st = state;
    drain(st->c, &st->s);
    const fbw_conn_info *in = fbw_conn_get_info(st->c);
    char line[256];
    int n = snprintf(line, sizeof line, "state=%d err=%d proto=%d lazy=%d db=%u sent=%zu|",
                     (int)fbw_conn_get_state(st->c), fbw_conn_error(st->c)->code, in->protocol, in->lazy,
                     in->db_handle, fbw_buf_avail(&st->s.in));
    fbw_buf_append(out, line, (size_t)n);
    fbw_buf_append(out, fbw_buf_head(&st->s.in), fbw_buf_avail(&st->s.in));
}

static void sink_close(void *state)
{
    sink_state *st = state;
    fbw_conn_free(st->c);
    srv_free(&st->s);
    free(st);
}

Test(conn, accept_fed_byte_by_byte_works_the_same)
{
    fbw_buf raw;
    fbw_buf_init(&raw);
    fbw_pkt d = {.op = FBW_OP_DUMMY}, acc;
    accept_pkt(&acc, FBW_OP_ACCEPT_DATA, 0x800F, FBW_PTYPE_LAZY_SEND, B(NULL, 0), "", 1);
    encode(&d, 0, &raw);
    encode(&acc, 0, &raw);
    fbw_feed_sink sink = {sink_open, sink_push, sink_summary, sink_close, NULL};
    fbw_buf sum;
    cr_assert_eq(fbw_feed_check_sink(&sink, raw.data, raw.len, &sum), FBW_OK);
    char want[64];
    snprintf(want, sizeof want, "state=%d err=0 proto=15 lazy=1", FBW_CS_ATTACHING);
    cr_assert(sum.len > strlen(want) && memcmp(sum.data, want, strlen(want)) == 0, "%.*s", (int)sum.len,
              (const char *)sum.data);
    fbw_buf_free(&sum);

    /* the attach answer too, and then a failure */
    fbw_buf_reset(&raw);
    encode(&acc, 0, &raw);
    static const uint8_t resp[] = {0, 0, 0, 9, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0,
                                   0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    fbw_buf_append(&raw, resp, sizeof resp);
    cr_assert_eq(fbw_feed_check_sink(&sink, raw.data, raw.len, &sum), FBW_OK);
    snprintf(want, sizeof want, "state=%d err=0 proto=15 lazy=1 db=7", FBW_CS_READY);
    cr_assert(memcmp(sum.data, want, strlen(want)) == 0, "%.*s", (int)sum.len, (const char *)sum.data);
    fbw_buf_free(&sum);
    static const uint8_t junk[] = {0, 0, 0, 0x77, 0, 0, 0, 0};
    fbw_buf_append(&raw, junk, sizeof junk);
    cr_assert_eq(fbw_feed_check_sink(&sink, raw.data, raw.len, NULL), FBW_E_PROTO);
    fbw_buf_free(&raw);
}

/* ---- after attach: ordered replies, deferred ops, detach ---- */

static fbw_conn *ready(srv *s, uint16_t type)
{
    fbw_conn *c = started(s, "Legacy_Auth", 0, NULL, NULL);
    fbw_pkt acc;
    accept_pkt(&acc, FBW_OP_ACCEPT_DATA, 0x8011, type, B(NULL, 0), "", 1);
    cr_assert_eq(send_pkt(c, s, &acc, 0), FBW_OK);
    drain(c, s);
    fbw_pkt a;
    fbw_buf h;
    client_pkt(s, 17, &a, &h);
    fbw_buf_free(&h);
    cr_assert_eq(send_response(c, s, 0, B(NULL, 0), NULL, 0, 17), FBW_OK);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_READY);
    return c;
}

typedef struct seen {
    int calls;
    uint16_t object[4];
} seen;

static int record_reply(void *arg, fbw_conn *c, const fbw_pkt *reply, fbw_err *err)
{
    (void)c, (void)err;
    seen *s = arg;
    cr_assert_eq(reply->op, FBW_OP_RESPONSE);
    if (s->calls < 4)
        s->object[s->calls] = reply->u.resp.object;
    s->calls++;
    return FBW_OK;
}

Test(conn, deferred_reply_is_flushed_with_ping)
{
    srv s;
    srv_init(&s);
    fbw_conn *c = ready(&s, FBW_PTYPE_LAZY_SEND);
    seen a = {0}, b = {0};
    fbw_pkt alloc = {.op = FBW_OP_ALLOCATE_STATEMENT};
    cr_assert_eq(fbw_conn_request(c, &alloc, record_reply, &a), FBW_OK);
    cr_assert_eq(fbw_conn_outstanding(c), 1);
    cr_assert_eq(fbw_conn_before_wait(c), 1);
    cr_assert_eq(fbw_conn_outstanding(c), 2, "op_ping queued to flush the deferred reply");
    drain(c, &s);
    fbw_pkt p;
    fbw_buf h;
    client_pkt(&s, 17, &p, &h);
    cr_assert_eq(p.op, FBW_OP_ALLOCATE_STATEMENT);
    fbw_buf_free(&h);
    client_pkt(&s, 17, &p, &h);
    cr_assert_eq(p.op, FBW_OP_PING);
    fbw_buf_free(&h);
    /* a second request: the server answers in order */
    fbw_pkt tr = {.op = FBW_OP_TRANSACTION};
    cr_assert_eq(fbw_conn_request(c, &tr, record_reply, &b), FBW_OK);
    cr_assert_eq(fbw_conn_before_wait(c), 1);
    cr_assert_eq(fbw_conn_outstanding(c), 3, "no second ping when a flushed reply is due");
    cr_assert_eq(send_response(c, &s, 3, B(NULL, 0), NULL, 0, 17), FBW_OK);
    cr_assert_eq(send_response(c, &s, 0, B(NULL, 0), NULL, 0, 17), FBW_OK);
    cr_assert_eq(send_response(c, &s, 9, B(NULL, 0), NULL, 0, 17), FBW_OK);
    cr_assert_eq(a.calls, 1);
    cr_assert_eq(a.object[0], 3);
    cr_assert_eq(b.calls, 1);
    cr_assert_eq(b.object[0], 9);
    cr_assert_eq(fbw_conn_outstanding(c), 0);
    cr_assert_eq(fbw_conn_before_wait(c), 0);
    /* one more reply than asked for is a protocol error */
    cr_assert_eq(send_response(c, &s, 0, B(NULL, 0), NULL, 0, 17), FBW_E_PROTO);
    fbw_conn_free(c);
    srv_free(&s);
}

/* A handler that queues requests while its own entry heads the reply queue: 40 more than the
 * queue's first 16 slots make the ring grow under it, which moves every entry. The connection
 * must look its entry up again (the ASan build catches a write to the old slots), and the replies
 * still pair in order. The first request's argument is heap memory the handler takes over. */
static seen requeued;

static int queue_more(void *arg, fbw_conn *c, const fbw_pkt *reply, fbw_err *err)
{
    (void)reply, (void)err;
    for (int i = 0; i < 40; i++) {
        fbw_pkt tr = {.op = FBW_OP_TRANSACTION};
        cr_assert_eq(fbw_conn_request(c, &tr, record_reply, &requeued), FBW_OK);
    }
    free(arg);
    return FBW_OK;
}

Test(conn, handler_queueing_requests_grows_the_queue)
{
    srv s;
    srv_init(&s);
    fbw_conn *c = ready(&s, FBW_PTYPE_LAZY_SEND);
    fbw_pkt tr = {.op = FBW_OP_TRANSACTION};
    cr_assert_eq(fbw_conn_request_owned(c, &tr, queue_more, malloc(16)), FBW_OK);
    cr_assert_eq(send_response(c, &s, 1, B(NULL, 0), NULL, 0, 17), FBW_OK);
    cr_assert_eq(fbw_conn_outstanding(c), 40);
    cr_assert_eq(fbw_conn_pending_op(c, 39), FBW_OP_TRANSACTION);
    for (uint16_t i = 0; i < 40; i++)
        cr_assert_eq(send_response(c, &s, (uint16_t)(100 + i), B(NULL, 0), NULL, 0, 17), FBW_OK);
    cr_assert_eq(requeued.calls, 40);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(requeued.object[i], 100 + i, "reply %d paired with request %d", requeued.object[i], i);
    cr_assert_eq(fbw_conn_outstanding(c), 0);
    fbw_conn_free(c);
    srv_free(&s);
}

Test(conn, batch_send_type_never_pings)
{
    srv s;
    srv_init(&s);
    fbw_conn *c = ready(&s, FBW_PTYPE_BATCH_SEND);
    cr_assert_not(fbw_conn_get_info(c)->lazy);
    seen a = {0};
    fbw_pkt alloc = {.op = FBW_OP_ALLOCATE_STATEMENT};
    cr_assert_eq(fbw_conn_request(c, &alloc, record_reply, &a), FBW_OK);
    cr_assert_eq(fbw_conn_before_wait(c), 1);
    cr_assert_eq(fbw_conn_outstanding(c), 1);
    fbw_conn_free(c);
    srv_free(&s);
}

Test(conn, detach_then_disconnect)
{
    srv s;
    srv_init(&s);
    fbw_conn *c = ready(&s, FBW_PTYPE_LAZY_SEND);
    drain(c, &s);
    cr_assert_eq(fbw_conn_detach(c), FBW_OK);
    drain(c, &s);
    fbw_pkt p;
    fbw_buf h;
    client_pkt(&s, 17, &p, &h);
    cr_assert_eq(p.op, FBW_OP_DETACH);
    fbw_buf_free(&h);
    cr_assert_eq(send_response(c, &s, 0, B(NULL, 0), NULL, 0, 17), FBW_OK);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_DETACHED);
    drain(c, &s);
    client_pkt(&s, 17, &p, &h);
    cr_assert_eq(p.op, FBW_OP_DISCONNECT);
    fbw_buf_free(&h);
    fbw_conn_free(c);
    srv_free(&s);
}

Test(conn, request_before_attach_is_usage)
{
    srv s;
    srv_init(&s);
    fbw_conn *c = started(&s, "Legacy_Auth", 0, NULL, NULL);
    fbw_pkt ping = {.op = FBW_OP_PING};
    cr_assert_eq(fbw_conn_request(c, &ping, ignore_reply, NULL), FBW_E_USAGE);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_CONNECTING, "misuse does not kill the connection");
    fbw_conn_free(c);
    srv_free(&s);
}

Test(conn, key_callback_before_accept_is_answered)
{
    srv s;
    srv_init(&s);
    fbw_conn *c = started(&s, "Legacy_Auth", 0, NULL, NULL);
    fbw_pkt cb = {.op = FBW_OP_CRYPT_KEY_CALLBACK};
    cb.u.cc.data = B("?", 1);
    cb.u.cc.reply = 32;
    cr_assert_eq(send_pkt(c, &s, &cb, 0), FBW_OK, "%s", fbw_conn_error(c)->msg);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_CONNECTING);
    drain(c, &s);
    fbw_pkt p;
    fbw_buf h;
    client_pkt(&s, 0, &p, &h);
    cr_assert_eq(p.op, FBW_OP_CRYPT_KEY_CALLBACK);
    cr_assert_eq(p.u.cc.data.n, 0, "fbwire has no database key to give");
    fbw_buf_free(&h);
    fbw_conn_free(c);
    srv_free(&s);
}

Test(conn, bad_options)
{
    fbw_conn_opts o;
    fbw_conn_opts_init(&o);
    fbw_conn *c = NULL;
    fbw_err err;
    cr_assert_eq(fbw_conn_new(&o, &c, &err), FBW_E_USAGE, "no database");
    cr_assert_null(c);
    o.database = "x";
    o.protocol_min = 9;
    cr_assert_eq(fbw_conn_new(&o, &c, &err), FBW_E_USAGE);
    o.protocol_min = 16;
    o.protocol_max = 15;
    cr_assert_eq(fbw_conn_new(&o, &c, &err), FBW_E_USAGE);
    o.protocol_min = 10;
    o.protocol_max = 21;
    cr_assert_eq(fbw_conn_new(&o, &c, &err), FBW_E_USAGE);
    o.protocol_max = 20;
    o.auth_list = "NoSuchPlugin";
    cr_assert_eq(fbw_conn_new(&o, &c, &err), FBW_E_USAGE);
    cr_assert_null(c);
}

/* A protocol 19 server's op_inline_blob is kept for a reader (inline.c), never taken for the reply
 * to whatever request is waiting. */
Test(conn, inline_blob_is_not_a_reply)
{
    srv s;
    srv_init(&s);
    fbw_conn *c = ready(&s, FBW_PTYPE_LAZY_SEND);
    seen a = {0};
    fbw_pkt tr = {.op = FBW_OP_TRANSACTION};
    cr_assert_eq(fbw_conn_request(c, &tr, record_reply, &a), FBW_OK);
    drain(c, &s);
    fbw_pkt ib = {.op = FBW_OP_INLINE_BLOB};
    ib.u.inline_blob.tr = 7;
    ib.u.inline_blob.data = B("\x0a\x00small blob", 12);
    cr_assert_eq(send_pkt(c, &s, &ib, 19), FBW_OK);
    cr_assert_eq(a.calls, 0, "the inline blob was handed to the transaction's reply handler");
    cr_assert_eq(fbw_conn_outstanding(c), 1);
    cr_assert_eq(send_response(c, &s, 7, B(NULL, 0), NULL, 0, 19), FBW_OK);
    cr_assert_eq(a.calls, 1);
    cr_assert_eq(a.object[0], 7);
    fbw_conn_free(c);
    srv_free(&s);
}

/* ---- a statement timeout on a server below protocol 16 is refused, never dropped ---- */

static void timeout_after_accept(uint16_t version, int refused)
{
    fbw_conn_opts o;
    fbw_conn_opts_init(&o);
    o.database = "/db/t.fdb";
    o.user = "SYSDBA";
    o.password = "masterkey";
    o.auth_list = "Legacy_Auth";
    o.statement_timeout_ms = 500;
    fbw_conn *c = NULL;
    fbw_err err;
    cr_assert_eq(fbw_conn_new(&o, &c, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_conn_statement_timeout(c), 500);
    srv s;
    srv_init(&s);
    cr_assert_eq(fbw_conn_start(c), FBW_OK);
    drain(c, &s);
    fbw_pkt cn;
    fbw_buf h;
    client_pkt(&s, 0, &cn, &h);
    fbw_buf_free(&h);
    fbw_pkt acc;
    accept_pkt(&acc, FBW_OP_ACCEPT_DATA, version, FBW_PTYPE_LAZY_SEND, B(NULL, 0), "", 1);
    int rc = send_pkt(c, &s, &acc, 0);
    drain(c, &s);
    if (refused) {
        cr_assert_eq(rc, FBW_E_UNSUPPORTED, "%s", fbw_rc_name(rc));
        cr_assert_eq(fbw_conn_get_state(c), FBW_CS_FAILED);
        cr_expect(strstr(fbw_conn_error(c)->msg, "protocol 15"), "%s", fbw_conn_error(c)->msg);
        expect_nothing_sent(&s); /* no op_attach */
    } else {
        cr_assert_eq(rc, FBW_OK, "%s", fbw_conn_error(c)->msg);
        cr_assert_eq(fbw_conn_get_state(c), FBW_CS_ATTACHING);
        check_attach(&s, 16);
    }
    fbw_conn_free(c);
    srv_free(&s);
}

Test(conn, statement_timeout_refused_below_protocol_16) { timeout_after_accept(0x800F, 1); }
Test(conn, statement_timeout_accepted_from_protocol_16) { timeout_after_accept(0x8010, 0); }
