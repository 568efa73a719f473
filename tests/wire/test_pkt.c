/* SPDX-License-Identifier: MIT */
/* test_pkt.c - packet codec: encode -> decode -> compare for every op family, protocol-dependent
 * fields (P13..P20), every strict prefix -> FBW_AGAIN, whole/byte-by-byte/split feeding on guard
 * pages, caps, fixupLength, unknown and unsupported ops, and three encodings checked byte for byte
 * against captures in docs/protocol/packets.md (§6.3 op_connect, §5.1 success op_response) and
 * docs/protocol/auth.md (§2 key data).
 * With FBW_CORPUS_DIR set, every encoded packet is also written as a fuzzing seed. */
#include <criterion/criterion.h>

#include "feed.h"
#include "msg.h"
#include "pb.h"
#include "pkt.h"
#include "status.h"

#include <stdio.h>
#include <string.h>

/* ---- message format used by data-bearing packets: LONG, VARCHAR(10) UTF8, INT64 ---- */

static fbw_col cols[3] = {
    {.type = FBW_SQL_LONG, .length = 4},
    {.type = FBW_SQL_VARYING, .length = 10, .charset = FBW_CS_UTF8},
    {.type = FBW_SQL_INT64, .length = 8},
};
static const fbw_msgfmt fmt = {cols, 3, 3};
static const fbw_msgfmt fmt_elem = {cols, 1, 1}; /* a slice element: LONG */

typedef struct fmt_arg {
    int calls;
    int fail;
    enum fbw_fmt_kind last_kind;
} fmt_arg;

static const fbw_msgfmt *fmt_cb(void *arg, enum fbw_fmt_kind kind, const fbw_pkt *p, fbw_err *err)
{
    (void)p;
    fmt_arg *a = arg;
    a->calls++;
    a->last_kind = kind;
    if (a->fail) {
        fbw_err_set(err, FBW_E_BADVALUE, "statement has no output format");
        return NULL;
    }
    return kind == FBW_FMT_SLICE ? &fmt_elem : &fmt;
}

static fmt_arg fa;

static fbw_pkt_ctx mkctx(int protocol)
{
    fbw_pkt_ctx c = {protocol, fmt_cb, &fa};
    return c;
}

/* n messages (i-th: i+40, "row<i>", NULL) appended to out */
static void messages(fbw_buf *out, int protocol, int n)
{
    fbw_wr w;
    fbw_wr_init(&w, out);
    for (int i = 0; i < n; i++) {
        char text[8];
        int len = snprintf(text, sizeof text, "row%d", i);
        fbw_value v[3];
        memset(v, 0, sizeof v);
        v[0].type = FBW_SQL_LONG;
        v[0].u.i64 = 40 + i;
        v[1].type = FBW_SQL_VARYING;
        v[1].u.bytes.p = (const uint8_t *)text;
        v[1].u.bytes.n = (size_t)len;
        v[2].type = FBW_SQL_INT64;
        v[2].is_null = 1;
        fbw_err err;
        cr_assert_eq(fbw_msg_encode(&w, &fmt, protocol, v, &err), FBW_OK, "%s", err.msg);
    }
}

static fbw_bytes B(const void *p, size_t n)
{
    fbw_bytes b = {p, n};
    return b;
}

/* a literal that may hold NUL bytes */
#define L(lit) B(lit, sizeof(lit) - 1)

static void eqb(fbw_bytes got, fbw_bytes want, const char *what)
{
    cr_assert_eq(got.n, want.n, "%s: %zu bytes, want %zu", what, got.n, want.n);
    cr_assert(want.n == 0 || memcmp(got.p, want.p, want.n) == 0, "%s differs", what);
}

/* ---- the decode function the feed helpers drive ---- */

static int decode_fn(void *arg, const uint8_t *p, size_t n, size_t *used, fbw_buf *transcript)
{
    const fbw_pkt_ctx *ctx = arg;
    fbw_pkt pk;
    fbw_err err;
    fbw_err_clear(&err);
    int rc = fbw_pkt_decode(ctx, p, n, &pk, used, &err);
    if (rc != FBW_OK)
        return rc;
    /* transcript: the canonical re-encoding of what was decoded */
    fbw_wr w;
    fbw_wr_init(&w, transcript);
    cr_assert_eq(fbw_pkt_encode(ctx, &w, &pk), FBW_OK);
    return FBW_OK;
}

/* ---- round trip ---- */

typedef struct rt {
    fbw_buf enc;
    fbw_pkt dec;
} rt;

static void save_seed(const fbw_buf *b, int32_t op, int protocol)
{
    char dir[512], name[64];
    const char *d = fbw_test_corpus_dir("fuzz_pkt", dir, sizeof dir);
    if (!d)
        return;
    static unsigned seq;
    snprintf(name, sizeof name, "op%d_p%d_%u", (int)op, protocol, seq++);
    fbw_test_save(d, name, b->data, b->len);
}

/* Encode p at `protocol`, decode it back (whole, every prefix, byte by byte, every split, on guard
 * pages), check the decoded packet re-encodes to the same bytes. The result views r->enc. */
static void roundtrip(int protocol, const fbw_pkt *p, rt *r)
{
    fbw_pkt_ctx ctx = mkctx(protocol);
    fbw_buf_init(&r->enc);
    fbw_wr w;
    fbw_wr_init(&w, &r->enc);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, p), FBW_OK, "encode op %d", p->op);
    save_seed(&r->enc, p->op, protocol);

    size_t used = 0;
    fbw_err err;
    fbw_err_clear(&err);
    int rc = fbw_pkt_decode(&ctx, r->enc.data, r->enc.len, &r->dec, &used, &err);
    cr_assert_eq(rc, FBW_OK, "decode op %d at P%d: %s", p->op, protocol, err.msg);
    cr_assert_eq(used, r->enc.len);
    cr_assert_eq(r->dec.op, p->op);

    fbw_buf again;
    fbw_buf_init(&again);
    fbw_wr_init(&w, &again);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, &r->dec), FBW_OK);
    cr_assert(again.len == r->enc.len && memcmp(again.data, r->enc.data, again.len) == 0,
              "op %d at P%d: decoded packet re-encodes differently", p->op, protocol);
    fbw_buf_free(&again);

    fbw_feed_check_prefixes(decode_fn, &ctx, r->enc.data, r->enc.len);
    fbw_feed_result whole;
    fbw_feed_check(decode_fn, &ctx, r->enc.data, r->enc.len, &whole);
    cr_assert_eq(whole.rc, FBW_OK);
    cr_assert_eq(whole.items, 1);
    fbw_feed_result_free(&whole);
}

static void rt_free(rt *r) { fbw_buf_free(&r->enc); }

static uint32_t word(const rt *r, size_t i)
{
    cr_assert(i * 4 + 4 <= r->enc.len);
    const uint8_t *q = r->enc.data + i * 4;
    return (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
}

/* Decode b on a guard page. The views in *out stay valid until the next call (each Criterion test
 * runs in its own process, so one mapping per process is enough). */
static fbw_guard dec_guard;

static int decode_bytes(int protocol, const fbw_buf *b, fbw_pkt *out, size_t *used, fbw_err *err)
{
    fbw_pkt_ctx ctx = mkctx(protocol);
    fbw_guard_free(&dec_guard);
    fbw_guard_init(&dec_guard, b->len);
    fbw_err_clear(err);
    return fbw_pkt_decode(&ctx, fbw_guard_place(&dec_guard, b->data, b->len), b->len, out, used, err);
}

/* ---- connect / accept ---- */

static void fill_connect(fbw_pkt *p, int n)
{
    memset(p, 0, sizeof *p);
    p->op = FBW_OP_CONNECT;
    p->u.cnct.operation = FBW_OP_ATTACH;
    p->u.cnct.cversion = 3;
    p->u.cnct.client_arch = FBW_ARCH_GENERIC;
    p->u.cnct.file = L("/db/test.fdb");
    p->u.cnct.user_id = L("\x09\x03joe\x06\x00");
    p->u.cnct.count = (uint16_t)n;
    for (int i = 0; i < n; i++) {
        p->u.cnct.ver[i].version = fbw_protocol_to_wire(10 + i);
        p->u.cnct.ver[i].arch = FBW_ARCH_GENERIC;
        p->u.cnct.ver[i].max_type = (uint16_t)(FBW_PTYPE_LAZY_SEND | (10 + i >= 13 ? FBW_PFLAG_COMPRESS : 0));
        p->u.cnct.ver[i].weight = (uint16_t)(2 * (i + 1));
    }
}

Test(pkt, connect_11_entries)
{
    fbw_pkt p;
    fill_connect(&p, FBW_CNCT_MAX_VERSIONS);
    rt r;
    roundtrip(0, &p, &r);
    const __typeof__(r.dec.u.cnct) *k = &r.dec.u.cnct;
    cr_assert_eq(k->operation, FBW_OP_ATTACH);
    cr_assert_eq(k->cversion, 3);
    cr_assert_eq(k->count, 11);
    cr_assert_eq(k->count_wire, 11);
    eqb(k->file, L("/db/test.fdb"), "file");
    eqb(k->user_id, L("\x09\x03joe\x06\x00"), "user_id");
    for (int i = 0; i < 11; i++) {
        cr_assert_eq(k->ver[i].version, fbw_protocol_to_wire(10 + i));
        cr_assert_eq(k->ver[i].arch, 1);
        cr_assert_eq(k->ver[i].max_type, p.u.cnct.ver[i].max_type);
        cr_assert_eq(k->ver[i].weight, 2 * (i + 1));
    }
    /* entry 3 is P13: version sign-extended on the wire */
    size_t hdr = 4 + 4 + 1 + 3; /* op..arch, file (4+12), count, user_id (4+7+1 pad) */
    cr_assert_eq(word(&r, hdr + 3 * 5), 0xFFFF800Du);
    rt_free(&r);
}

/* Build op_connect with n entries by hand (the struct only holds 11). */
static void connect_bytes(fbw_buf *b, uint32_t n)
{
    fbw_wr w;
    fbw_wr_init(&w, b);
    fbw_xdr_put_i32(&w, FBW_OP_CONNECT);
    fbw_xdr_put_i32(&w, FBW_OP_ATTACH);
    fbw_xdr_put_short(&w, 3);
    fbw_xdr_put_i32(&w, 1);
    fbw_xdr_put_str(&w, "db");
    fbw_xdr_put_short(&w, (uint16_t)n);
    fbw_xdr_put_str(&w, "");
    for (uint32_t i = 0; i < n; i++) {
        fbw_xdr_put_short(&w, (uint16_t)(0x8000 | (i + 11)));
        fbw_xdr_put_i32(&w, 1);
        fbw_xdr_put_short(&w, 0);
        fbw_xdr_put_short(&w, 5);
        fbw_xdr_put_short(&w, (uint16_t)i);
    }
}

Test(pkt, connect_64_entries_keeps_the_first_11)
{
    fbw_buf b;
    fbw_buf_init(&b);
    connect_bytes(&b, FBW_CNCT_MAX_WIRE);
    fbw_pkt p;
    size_t used = 0;
    fbw_err err;
    cr_assert_eq(decode_bytes(0, &b, &p, &used, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(used, b.len, "all 64 entries are read");
    cr_assert_eq(p.u.cnct.count_wire, 64);
    cr_assert_eq(p.u.cnct.count, FBW_CNCT_MAX_VERSIONS);
    cr_assert_eq(p.u.cnct.ver[10].version, 0x8000 | 21);
    cr_assert_eq(p.u.cnct.ver[10].weight, 10);
    fbw_pkt_ctx ctx = mkctx(0);
    fbw_feed_check_prefixes(decode_fn, &ctx, b.data, b.len);
    fbw_buf_free(&b);
}

Test(pkt, connect_over_the_cap_is_proto)
{
    fbw_buf b;
    fbw_buf_init(&b);
    connect_bytes(&b, FBW_CNCT_MAX_WIRE + 1);
    fbw_pkt p;
    size_t used = 0;
    fbw_err err;
    cr_assert_eq(decode_bytes(0, &b, &p, &used, &err), FBW_E_PROTO);
    cr_assert_not_null(strstr(err.msg, "op_connect"), "%s", err.msg);
    cr_assert_eq(err.op, FBW_OP_CONNECT);
    /* the count is known before the entries: 8 words of header are enough to fail */
    fbw_buf_free(&b);
    fbw_buf_init(&b);
    connect_bytes(&b, 0xFFFF);
    cr_assert_eq(decode_bytes(0, &b, &p, &used, &err), FBW_E_PROTO);
    fbw_buf_free(&b);
}

/* docs/protocol/packets.md §6.3: op_connect captured from fbclient (FB 3.0.11) */
Test(pkt, connect_matches_capture)
{
    char a[255];
    for (int i = 0; i < 255; i++)
        a[i] = "0123456789ABCDEF"[(i * 5) % 16];
    fbw_buf uid;
    fbw_buf_init(&uid);
    static const uint8_t crypt[4] = {1, 0, 0, 0};
    cr_assert_eq(fbw_pb_put_clumplet(&uid, FBW_CNCT_LOGIN, "tester", 6), FBW_OK);
    cr_assert_eq(fbw_pb_put_clumplet(&uid, FBW_CNCT_PLUGIN_NAME, "Srp256", 6), FBW_OK);
    cr_assert_eq(fbw_pb_put_clumplet(&uid, FBW_CNCT_PLUGIN_LIST, "Srp256,Srp", 10), FBW_OK);
    cr_assert_eq(fbw_pb_put_multipart(&uid, FBW_CNCT_SPECIFIC_DATA, a, sizeof a), FBW_OK);
    cr_assert_eq(fbw_pb_put_clumplet(&uid, FBW_CNCT_CLIENT_CRYPT, crypt, 4), FBW_OK);
    cr_assert_eq(fbw_pb_put_clumplet(&uid, FBW_CNCT_USER, "joe", 3), FBW_OK);
    cr_assert_eq(fbw_pb_put_clumplet(&uid, FBW_CNCT_HOST, "ws1", 3), FBW_OK);
    cr_assert_eq(fbw_pb_put_clumplet(&uid, FBW_CNCT_USER_VERIFICATION, "", 0), FBW_OK);

    fbw_pkt p;
    memset(&p, 0, sizeof p);
    p.op = FBW_OP_CONNECT;
    p.u.cnct.operation = 0;
    p.u.cnct.cversion = 3;
    p.u.cnct.client_arch = 1;
    p.u.cnct.file = L("/var/lib/fb/db/t1.fdb");
    p.u.cnct.user_id = B(uid.data, uid.len);
    p.u.cnct.count = 2;
    p.u.cnct.ver[0] = (fbw_cnct_version){0x800D, 1, 0, 5, 2};
    p.u.cnct.ver[1] = (fbw_cnct_version){0x800F, 1, 0, 5, 4};
    rt r;
    roundtrip(0, &p, &r);

    /* expected bytes, laid out as in the capture listing (file name of the same length) */
    fbw_buf want;
    fbw_buf_init(&want);
    fbw_test_hex(&want, "00000001 00000000 00000003 00000001"
                        "00000015 2f766172 2f6c6962 2f66622f 64622f74 312e6664 62000000"
                        "00000002");
    size_t uid_len = 8 + 8 + 12 + (3 + 254) + (3 + 1) + 6 + 5 + 5 + 2;
    cr_assert_eq(uid.len, uid_len);
    uint8_t lenb[4] = {0, 0, (uint8_t)(uid_len >> 8), (uint8_t)uid_len};
    fbw_buf_append(&want, lenb, 4);
    fbw_test_hex(&want, "09 06 746573746572 08 06 537270323536 0a 0a 5372703235362c537270 07 ff 00");
    fbw_buf_append(&want, a, 254);
    fbw_test_hex(&want, "07 02 01");
    fbw_buf_append(&want, a + 254, 1);
    fbw_test_hex(&want, "0b 04 01000000 01 03 6a6f65 04 03 777331 06 00");
    static const uint8_t pad[4] = {0};
    fbw_buf_append(&want, pad, (4 - uid_len % 4) % 4);
    fbw_test_hex(&want, "ffff800d 00000001 00000000 00000005 00000002"
                        "ffff800f 00000001 00000000 00000005 00000004");
    cr_assert_eq(r.enc.len, want.len, "%zu bytes, capture layout has %zu", r.enc.len, want.len);
    cr_assert_eq(memcmp(r.enc.data, want.data, want.len), 0);
    fbw_buf_free(&want);
    fbw_buf_free(&uid);
    rt_free(&r);
}

Test(pkt, accept)
{
    fbw_pkt p = {.op = FBW_OP_ACCEPT};
    p.u.acpt.version = 0x800F;
    p.u.acpt.arch = 1;
    p.u.acpt.type = FBW_PTYPE_LAZY_SEND;
    rt r;
    roundtrip(0, &p, &r);
    cr_assert_eq(r.enc.len, 16);
    cr_assert_eq(word(&r, 1), 0xFFFF800Fu, "accept version is sign-extended (captured FF FF 80 0F)");
    cr_assert_eq(r.dec.u.acpt.version, 0x800F);
    cr_assert_eq(r.dec.u.acpt.type, 5);
    rt_free(&r);
}

Test(pkt, accept_data_and_cond_accept)
{
    int ops[] = {FBW_OP_ACCEPT_DATA, FBW_OP_COND_ACCEPT};
    for (int i = 0; i < 2; i++) {
        fbw_pkt p = {.op = ops[i]};
        p.u.acpt.version = 0x8013;
        p.u.acpt.arch = 1;
        p.u.acpt.type = FBW_PTYPE_LAZY_SEND | FBW_PFLAG_COMPRESS;
        p.u.acpt.data = L("\x20\x00saltsaltsaltsaltsaltsaltsaltsaltBBBB");
        p.u.acpt.plugin = L("Srp256");
        p.u.acpt.authenticated = (uint16_t)i;
        p.u.acpt.keys = L("\x02\x06Srp256");
        rt r;
        roundtrip(19, &p, &r);
        cr_assert_eq(r.dec.u.acpt.version, 0x8013);
        cr_assert_eq(r.dec.u.acpt.type, 0x105);
        eqb(r.dec.u.acpt.data, p.u.acpt.data, "data");
        eqb(r.dec.u.acpt.plugin, L("Srp256"), "plugin");
        cr_assert_eq(r.dec.u.acpt.authenticated, i);
        eqb(r.dec.u.acpt.keys, p.u.acpt.keys, "keys");
        rt_free(&r);
    }
}

/* ---- response ---- */

static void status_vec(fbw_buf *b, const fbw_status_arg *a, int n)
{
    fbw_wr w;
    fbw_wr_init(&w, b);
    fbw_status_encode(&w, a, n);
}

Test(pkt, response_with_error_status)
{
    static const fbw_status_arg st[] = {
        {FBW_ARG_GDS, 335544344u, NULL}, {FBW_ARG_STRING, 0, "open"}, {FBW_ARG_STRING, 0, "/x.fdb"},
        {FBW_ARG_GDS, 335544734u, NULL}, {FBW_ARG_INTERPRETED, 0, "No such file or directory"},
    };
    fbw_buf sv;
    fbw_buf_init(&sv);
    status_vec(&sv, st, 5);
    int ops[] = {FBW_OP_RESPONSE, FBW_OP_RESPONSE_PIGGYBACK};
    for (int i = 0; i < 2; i++) {
        fbw_pkt p = {.op = ops[i]};
        p.u.resp.object = 7;
        p.u.resp.blob_hi = 0x11;
        p.u.resp.blob_lo = 0x22;
        p.u.resp.data = L("info");
        p.u.resp.status = B(sv.data, sv.len);
        rt r;
        roundtrip(15, &p, &r);
        cr_assert_eq(r.dec.u.resp.object, 7);
        cr_assert_eq(r.dec.u.resp.blob_hi, 0x11);
        cr_assert_eq(r.dec.u.resp.blob_lo, 0x22);
        eqb(r.dec.u.resp.data, L("info"), "data");
        eqb(r.dec.u.resp.status, B(sv.data, sv.len), "status vector");
        cr_assert_not(fbw_status_is_success(r.dec.u.resp.status));
        fbw_err err;
        cr_assert_eq(fbw_status_decode(r.dec.u.resp.status, &err, NULL), FBW_E_SERVER);
        cr_assert_eq(err.gds[0], 335544344u);
        cr_assert_eq(err.gds[1], 335544734u);
        rt_free(&r);
    }
    fbw_buf_free(&sv);
}

static void encode_response(fbw_buf *out, uint16_t object, fbw_bytes data, const fbw_status_arg *st, int n)
{
    fbw_buf sv;
    fbw_buf_init(&sv);
    status_vec(&sv, st, n);
    fbw_pkt p = {.op = FBW_OP_RESPONSE};
    p.u.resp.object = object;
    p.u.resp.data = data;
    p.u.resp.status = B(sv.data, sv.len);
    fbw_pkt_ctx ctx = mkctx(15);
    fbw_wr w;
    fbw_wr_init(&w, out);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, &p), FBW_OK);
    fbw_buf_free(&sv);
}

static const fbw_status_arg ok_status[] = {{FBW_ARG_GDS, 0, NULL}};

/* docs/protocol/packets.md §5.1: a success answer with no data is exactly these 32 bytes */
Test(pkt, success_response_matches_capture)
{
    fbw_buf b, want;
    fbw_buf_init(&b);
    fbw_buf_init(&want);
    encode_response(&b, 0, B(NULL, 0), ok_status, 1);
    fbw_test_hex(&want, "00000009 00000000 00000000 00000000 00000000 00000001 00000000 00000000");
    cr_assert_eq(b.len, 32);
    cr_assert_eq(memcmp(b.data, want.data, 32), 0);
    fbw_pkt p;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(13, &want, &p, &used, &err), FBW_OK);
    cr_assert_eq(used, 32);
    cr_assert(fbw_status_is_success(p.u.resp.status));
    fbw_buf_free(&b);
    fbw_buf_free(&want);
}

/* docs/protocol/auth.md §2: op_response to the final op_cont_auth, data = known server keys */
Test(pkt, keys_response_matches_capture)
{
    fbw_buf keys, b, want;
    fbw_buf_init(&keys);
    fbw_buf_init(&b);
    fbw_buf_init(&want);
    cr_assert_eq(fbw_pb_put_clumplet(&keys, 0, "Symmetric", 9), FBW_OK);
    cr_assert_eq(fbw_pb_put_clumplet(&keys, 1, "Arc4", 4), FBW_OK);
    encode_response(&b, 0, B(keys.data, keys.len), ok_status, 1);
    fbw_test_hex(&want, "00000009 00000000 00000000 00000000 00000011 00 09 53796d6d6574726963 01 04 41726334"
                        "000000 00000001 00000000 00000000");
    cr_assert_eq(b.len, want.len);
    cr_assert_eq(memcmp(b.data, want.data, want.len), 0);
    fbw_pkt p;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(13, &want, &p, &used, &err), FBW_OK);
    eqb(p.u.resp.data, B(keys.data, keys.len), "keys");
    fbw_buf_free(&keys);
    fbw_buf_free(&b);
    fbw_buf_free(&want);
}

Test(pkt, response_fixup_length)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, "00000009 00000003 00000000 00000000 FFFF0010"
                     "00112233 44556677 8899AABB CCDDEEFF 00000001 00000000 00000000");
    fbw_pkt p;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(13, &b, &p, &used, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(used, b.len);
    cr_assert_eq(p.u.resp.data.n, 16);
    cr_assert_eq(p.u.resp.data.p[15], 0xFF);
    cr_assert_eq(p.u.resp.object, 3);
    fbw_buf_free(&b);
}

Test(pkt, response_length_over_cap)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, "00000009 00000000 00000000 00000000");
    uint32_t n = FBW_BUF_MAX + 1;
    uint8_t lenb[4] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
    fbw_buf_append(&b, lenb, 4);
    fbw_pkt p;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(13, &b, &p, &used, &err), FBW_E_PROTO, "fails before the bytes arrive");
    cr_assert_not_null(strstr(err.msg, "op_response"), "%s", err.msg);
    cr_assert_eq(err.op, FBW_OP_RESPONSE);
    fbw_buf_free(&b);
}

/* Disabled: fbw_rd_fail moves the reader to the end of its buffer, so err.offset (and "at offset N"
 * in the message) is the buffer length, not where the bad field is. Reported with a suggested fix. */
Test(pkt, error_offset_names_the_bad_field)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, "00000009 00000000 00000000 00000000 7FFFFFFF 00000000 00000000 00000000");
    fbw_pkt p;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(13, &b, &p, &used, &err), FBW_E_PROTO);
    cr_assert(err.offset == 16 || err.offset == 20, "offset %zu", err.offset);
    fbw_buf_free(&b);
}

Test(pkt, response_bad_status_arg_type)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, "00000009 00000000 00000000 00000000 00000000 00000001 14000001 0000002A 00000000");
    fbw_pkt p;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(13, &b, &p, &used, &err), FBW_E_PROTO);
    cr_assert_not_null(strstr(err.msg, "op_response"), "%s", err.msg);
    fbw_buf_free(&b);
}

Test(pkt, response_truncated_status_waits)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, "00000009 00000000 00000000 00000000 00000000 00000001 14000001 00000002 00000010 6162");
    fbw_pkt p;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(13, &b, &p, &used, &err), FBW_AGAIN);
    fbw_buf_free(&b);
}

/* ---- attach, release family, transactions, blobs ---- */

Test(pkt, attach_create_service_attach)
{
    int ops[] = {FBW_OP_ATTACH, FBW_OP_CREATE, FBW_OP_SERVICE_ATTACH};
    for (int i = 0; i < 3; i++) {
        fbw_pkt p = {.op = ops[i]};
        p.u.atch.db = 0;
        p.u.atch.file = L("employee");
        p.u.atch.dpb = L("\x01\x4d\x00\x30\x04UTF8");
        rt r;
        roundtrip(16, &p, &r);
        eqb(r.dec.u.atch.file, L("employee"), "file");
        eqb(r.dec.u.atch.dpb, p.u.atch.dpb, "dpb");
        cr_assert_eq(r.enc.len, 4 + 4 + 12 + 16);
        rt_free(&r);
    }
}

Test(pkt, attach_file_over_cap)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, "00000013 00000000 00010000");
    fbw_pkt p;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(13, &b, &p, &used, &err), FBW_E_PROTO);
    cr_assert_not_null(strstr(err.msg, "op_attach"), "%s", err.msg);
    fbw_buf_free(&b);
}

Test(pkt, release_family)
{
    int ops[] = {FBW_OP_COMMIT, FBW_OP_PREPARE, FBW_OP_ROLLBACK, FBW_OP_UNWIND, FBW_OP_RELEASE,
                 FBW_OP_CLOSE_BLOB, FBW_OP_CANCEL_BLOB, FBW_OP_DETACH, FBW_OP_DROP_DATABASE,
                 FBW_OP_SERVICE_DETACH, FBW_OP_COMMIT_RETAINING, FBW_OP_ROLLBACK_RETAINING,
                 FBW_OP_ALLOCATE_STATEMENT, FBW_OP_BATCH_RLS, FBW_OP_BATCH_CANCEL};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        fbw_pkt p = {.op = ops[i]};
        p.u.rlse.object = (uint16_t)(0xFFFF - i); /* 0xFFFF: INVALID_OBJECT, sign-extended */
        rt r;
        roundtrip(17, &p, &r);
        cr_assert_eq(r.enc.len, 8);
        cr_assert_eq(r.dec.u.rlse.object, 0xFFFF - i);
        if (i == 0)
            cr_assert_eq(word(&r, 1), 0xFFFFFFFFu);
        rt_free(&r);
    }
}

Test(pkt, no_body_ops)
{
    int ops[] = {FBW_OP_REJECT, FBW_OP_DISCONNECT, FBW_OP_DUMMY, FBW_OP_PING, FBW_OP_ABORT_AUX_CONNECTION,
                 FBW_OP_EXIT, FBW_OP_BATCH_SYNC};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        fbw_pkt p = {.op = ops[i]};
        rt r;
        roundtrip(17, &p, &r);
        cr_assert_eq(r.enc.len, 4);
        rt_free(&r);
    }
}

Test(pkt, transaction_and_reconnect)
{
    int ops[] = {FBW_OP_TRANSACTION, FBW_OP_RECONNECT};
    for (int i = 0; i < 2; i++) {
        fbw_pkt p = {.op = ops[i]};
        p.u.sttr.db = 1;
        p.u.sttr.tpb = L("\x03\x09\x06\x0f");
        rt r;
        roundtrip(13, &p, &r);
        cr_assert_eq(r.dec.u.sttr.db, 1);
        eqb(r.dec.u.sttr.tpb, p.u.sttr.tpb, "tpb");
        rt_free(&r);
    }
}

Test(pkt, prepare2)
{
    fbw_pkt p = {.op = FBW_OP_PREPARE2};
    p.u.prep.tr = 4;
    p.u.prep.data = L("two-phase message");
    rt r;
    roundtrip(13, &p, &r);
    cr_assert_eq(r.dec.u.prep.tr, 4);
    eqb(r.dec.u.prep.data, p.u.prep.data, "data");
    rt_free(&r);
}

Test(pkt, blob_ops)
{
    int ops[] = {FBW_OP_OPEN_BLOB, FBW_OP_CREATE_BLOB, FBW_OP_OPEN_BLOB2, FBW_OP_CREATE_BLOB2};
    for (int i = 0; i < 4; i++) {
        fbw_pkt p = {.op = ops[i]};
        p.u.blob.bpb = i >= 2 ? L("\x01\x03\x01\x01") : B(NULL, 0);
        p.u.blob.tr = 9;
        p.u.blob.id_hi = 0x80000001u;
        p.u.blob.id_lo = 0x12345678u;
        rt r;
        roundtrip(13, &p, &r);
        cr_assert_eq(r.enc.len, i >= 2 ? 4 + 8 + 4 + 8 : 4 + 4 + 8, "bpb only in the *2 forms");
        cr_assert_eq(r.dec.u.blob.tr, 9);
        cr_assert_eq(r.dec.u.blob.id_hi, 0x80000001u);
        cr_assert_eq(r.dec.u.blob.id_lo, 0x12345678u);
        eqb(r.dec.u.blob.bpb, p.u.blob.bpb, "bpb");
        rt_free(&r);
    }
}

Test(pkt, segment_ops)
{
    int ops[] = {FBW_OP_GET_SEGMENT, FBW_OP_PUT_SEGMENT, FBW_OP_BATCH_SEGMENTS};
    static uint8_t seg[1001];
    for (size_t i = 0; i < sizeof seg; i++)
        seg[i] = (uint8_t)i;
    for (int i = 0; i < 3; i++) {
        fbw_pkt p = {.op = ops[i]};
        p.u.sgmt.blob = 2;
        p.u.sgmt.length = 0xFFFF;
        p.u.sgmt.segment = i == 0 ? B(NULL, 0) : B(seg, sizeof seg);
        rt r;
        roundtrip(13, &p, &r);
        cr_assert_eq(r.dec.u.sgmt.blob, 2);
        cr_assert_eq(r.dec.u.sgmt.length, 0xFFFF);
        eqb(r.dec.u.sgmt.segment, p.u.sgmt.segment, "segment");
        rt_free(&r);
    }
}

Test(pkt, seek_blob)
{
    fbw_pkt p = {.op = FBW_OP_SEEK_BLOB};
    p.u.seek.blob = 3;
    p.u.seek.mode = 1;
    p.u.seek.offset = -100;
    rt r;
    roundtrip(13, &p, &r);
    cr_assert_eq(r.enc.len, 16);
    cr_assert_eq(r.dec.u.seek.offset, -100);
    cr_assert_eq(r.dec.u.seek.mode, 1);
    rt_free(&r);
}

Test(pkt, info_ops)
{
    int ops[] = {FBW_OP_INFO_BLOB, FBW_OP_INFO_DATABASE, FBW_OP_INFO_REQUEST, FBW_OP_INFO_TRANSACTION,
                 FBW_OP_INFO_SQL, FBW_OP_INFO_BATCH, FBW_OP_INFO_CURSOR, FBW_OP_SERVICE_INFO,
                 FBW_OP_SERVICE_START};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        fbw_pkt p = {.op = ops[i]};
        p.u.info.object = 5;
        p.u.info.incarnation = 0;
        p.u.info.items = L("\x67\x01");
        p.u.info.recv_items = ops[i] == FBW_OP_SERVICE_INFO ? L("\x3e") : B(NULL, 0);
        p.u.info.buffer_length = ops[i] == FBW_OP_SERVICE_START ? 0 : 70000;
        rt r;
        roundtrip(18, &p, &r);
        size_t want = 4 + 4 + 4 + 8 + 4;
        if (ops[i] == FBW_OP_SERVICE_INFO)
            want += 8; /* recv_items */
        if (ops[i] == FBW_OP_SERVICE_START)
            want -= 4; /* no buffer length */
        cr_assert_eq(r.enc.len, want, "op %d: %zu bytes, want %zu", ops[i], r.enc.len, want);
        cr_assert_eq(r.dec.u.info.object, 5);
        eqb(r.dec.u.info.items, L("\x67\x01"), "items");
        eqb(r.dec.u.info.recv_items, p.u.info.recv_items, "recv_items");
        cr_assert_eq(r.dec.u.info.buffer_length, p.u.info.buffer_length);
        rt_free(&r);
    }
}

Test(pkt, info_buffer_length_fixup)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, "00000028 00000000 00000000 00000001 04000000 FFFF8000");
    fbw_pkt p;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(13, &b, &p, &used, &err), FBW_OK);
    cr_assert_eq(p.u.info.buffer_length, 0x8000);
    fbw_buf_free(&b);
}

/* ---- statements ---- */

static void fill_sqlst(fbw_pkt *p, int op, fbw_buf *msg, int protocol)
{
    memset(p, 0, sizeof *p);
    p->op = op;
    p->u.sqlst.tr = 2;
    p->u.sqlst.stmt = 0xFFFF;
    p->u.sqlst.dialect = 3;
    p->u.sqlst.sql = L("SELECT 1 FROM RDB$DATABASE");
    p->u.sqlst.items = L("\x15\x04\x07");
    p->u.sqlst.buffer_length = 65536;
    p->u.sqlst.flags = protocol >= 20 ? 1 : 0;
    if (op == FBW_OP_EXEC_IMMEDIATE2) {
        p->u.sqlst.blr = L("\x05\x02\x04\x00\x03\x00\x08\x00\x09\x00\x0a\x00\xff\x4c");
        p->u.sqlst.msg_number = 0;
        p->u.sqlst.messages = 1;
        messages(msg, protocol, 1);
        p->u.sqlst.msg = B(msg->data, msg->len);
        p->u.sqlst.out_blr = L("\x05\x02\x04\x00");
        p->u.sqlst.out_msg_number = 1;
        p->u.sqlst.inline_blob_size = protocol >= 19 ? 4096 : 0;
    }
}

Test(pkt, sql_statements_by_protocol)
{
    int ops[] = {FBW_OP_PREPARE_STATEMENT, FBW_OP_EXEC_IMMEDIATE, FBW_OP_EXEC_IMMEDIATE2};
    int protos[] = {13, 19, 20};
    for (int i = 0; i < 3; i++) {
        size_t len_at[3] = {0};
        for (int j = 0; j < 3; j++) {
            fbw_buf msg;
            fbw_buf_init(&msg);
            fbw_pkt p;
            fill_sqlst(&p, ops[i], &msg, protos[j]);
            fa.calls = 0;
            rt r;
            roundtrip(protos[j], &p, &r);
            len_at[j] = r.enc.len;
            const __typeof__(r.dec.u.sqlst) *s = &r.dec.u.sqlst;
            cr_assert_eq(s->tr, 2);
            cr_assert_eq(s->stmt, 0xFFFF);
            cr_assert_eq(s->dialect, 3);
            eqb(s->sql, p.u.sqlst.sql, "sql");
            eqb(s->items, p.u.sqlst.items, "items");
            cr_assert_eq(s->buffer_length, 65536);
            cr_assert_eq(s->flags, protos[j] >= 20 ? 1 : 0);
            if (ops[i] == FBW_OP_EXEC_IMMEDIATE2) {
                eqb(s->blr, p.u.sqlst.blr, "blr");
                cr_assert_eq(s->messages, 1);
                eqb(s->msg, B(msg.data, msg.len), "message");
                eqb(s->out_blr, p.u.sqlst.out_blr, "out_blr");
                cr_assert_eq(s->out_msg_number, 1);
                cr_assert_eq(s->inline_blob_size, protos[j] >= 19 ? 4096 : 0);
                cr_assert(fa.calls > 0);
                cr_assert_eq(fa.last_kind, FBW_FMT_IMMEDIATE_IN);
            }
            rt_free(&r);
            fbw_buf_free(&msg);
        }
        size_t p19_extra = ops[i] == FBW_OP_EXEC_IMMEDIATE2 ? 4 : 0;
        cr_assert_eq(len_at[1], len_at[0] + p19_extra, "op %d: P19 adds inline_blob_size to exec_immediate2 only", ops[i]);
        cr_assert_eq(len_at[2], len_at[1] + 4, "op %d: P20 adds the flags", ops[i]);
    }
}

static void fill_execute(fbw_pkt *p, int op, fbw_buf *msg, int protocol)
{
    memset(p, 0, sizeof *p);
    p->op = op;
    p->u.sqldata.stmt = 1;
    p->u.sqldata.tr = 2;
    p->u.sqldata.blr = L("\x05\x02\x04\x00\x03\x00");
    p->u.sqldata.msg_number = 0;
    p->u.sqldata.messages = 1;
    messages(msg, protocol, 1);
    p->u.sqldata.msg = B(msg->data, msg->len);
    if (op == FBW_OP_EXECUTE2) {
        p->u.sqldata.out_blr = L("\x05\x02\x04\x00\x01\x00");
        p->u.sqldata.out_msg_number = 1;
    }
    p->u.sqldata.timeout = protocol >= 16 ? 5000 : 0;
    p->u.sqldata.cursor_flags = protocol >= 18 ? 1 : 0;
    p->u.sqldata.inline_blob_size = protocol >= 19 ? 65535 : 0;
}

Test(pkt, execute_by_protocol)
{
    int ops[] = {FBW_OP_EXECUTE, FBW_OP_EXECUTE2};
    int protos[] = {13, 16, 18, 19};
    for (int i = 0; i < 2; i++) {
        size_t len_at[4];
        for (int j = 0; j < 4; j++) {
            fbw_buf msg;
            fbw_buf_init(&msg);
            fbw_pkt p;
            fill_execute(&p, ops[i], &msg, protos[j]);
            rt r;
            roundtrip(protos[j], &p, &r);
            len_at[j] = r.enc.len;
            const __typeof__(r.dec.u.sqldata) *d = &r.dec.u.sqldata;
            cr_assert_eq(d->stmt, 1);
            cr_assert_eq(d->tr, 2);
            eqb(d->blr, p.u.sqldata.blr, "blr");
            cr_assert_eq(d->messages, 1);
            eqb(d->msg, B(msg.data, msg.len), "message");
            cr_assert_eq(fa.last_kind, FBW_FMT_EXEC_IN);
            if (ops[i] == FBW_OP_EXECUTE2) {
                eqb(d->out_blr, p.u.sqldata.out_blr, "out_blr");
                cr_assert_eq(d->out_msg_number, 1);
            }
            cr_assert_eq(d->timeout, protos[j] >= 16 ? 5000u : 0u);
            cr_assert_eq(d->cursor_flags, protos[j] >= 18 ? 1u : 0u);
            cr_assert_eq(d->inline_blob_size, protos[j] >= 19 ? 65535u : 0u);
            rt_free(&r);
            fbw_buf_free(&msg);
        }
        cr_assert_eq(len_at[1], len_at[0] + 4, "P16 adds the timeout");
        cr_assert_eq(len_at[2], len_at[1] + 4, "P18 adds cursor flags");
        cr_assert_eq(len_at[3], len_at[2] + 4, "P19 adds inline blob size");
    }
}

Test(pkt, execute_read_at_a_lower_protocol_stops_early)
{
    fbw_buf msg;
    fbw_buf_init(&msg);
    fbw_pkt p;
    fill_execute(&p, FBW_OP_EXECUTE, &msg, 19);
    rt r;
    roundtrip(19, &p, &r);
    fbw_pkt q;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(13, &r.enc, &q, &used, &err), FBW_OK);
    cr_assert_eq(used, r.enc.len - 12, "P13 has none of the three trailing fields");
    rt_free(&r);
    fbw_buf_free(&msg);
}

Test(pkt, execute_without_messages_needs_no_format)
{
    fbw_pkt p = {.op = FBW_OP_EXECUTE};
    p.u.sqldata.stmt = 1;
    p.u.sqldata.tr = 2;
    fbw_pkt_ctx ctx = {13, NULL, NULL};
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_wr w;
    fbw_wr_init(&w, &b);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, &p), FBW_OK);
    fbw_pkt q;
    size_t used;
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_pkt_decode(&ctx, b.data, b.len, &q, &used, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(used, b.len);
    fbw_buf_free(&b);
}

Test(pkt, message_without_format_callback_is_unsupported)
{
    fbw_buf msg;
    fbw_buf_init(&msg);
    fbw_pkt p;
    fill_execute(&p, FBW_OP_EXECUTE, &msg, 13);
    fbw_pkt_ctx ctx = {13, NULL, NULL};
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_wr w;
    fbw_wr_init(&w, &b);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, &p), FBW_OK);
    fbw_pkt q;
    size_t used;
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_pkt_decode(&ctx, b.data, b.len, &q, &used, &err), FBW_E_UNSUPPORTED);
    cr_assert_not_null(strstr(err.msg, "op_execute"), "%s", err.msg);
    fbw_buf_free(&b);
    fbw_buf_free(&msg);
}

Test(pkt, format_callback_error_is_passed_on)
{
    fbw_buf msg;
    fbw_buf_init(&msg);
    fbw_pkt p;
    fill_execute(&p, FBW_OP_EXECUTE, &msg, 13);
    rt r;
    roundtrip(13, &p, &r);
    fa.fail = 1;
    fbw_pkt q;
    size_t used;
    fbw_err err;
    int rc = decode_bytes(13, &r.enc, &q, &used, &err);
    fa.fail = 0;
    cr_assert_eq(rc, FBW_E_BADVALUE);
    cr_assert_not_null(strstr(err.msg, "no output format"), "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "op_execute"), "%s", err.msg);
    rt_free(&r);
    fbw_buf_free(&msg);
}

Test(pkt, fetch_and_fetch_scroll)
{
    int ops[] = {FBW_OP_FETCH, FBW_OP_FETCH_SCROLL};
    for (int i = 0; i < 2; i++) {
        fbw_pkt p = {.op = ops[i]};
        p.u.sqldata.stmt = 4;
        p.u.sqldata.blr = L("\x05\x02\x04\x00\x03\x00");
        p.u.sqldata.msg_number = 0;
        p.u.sqldata.messages = 200;
        p.u.sqldata.fetch_op = 5;
        p.u.sqldata.fetch_pos = -3;
        rt r;
        roundtrip(18, &p, &r);
        cr_assert_eq(r.dec.u.sqldata.stmt, 4);
        cr_assert_eq(r.dec.u.sqldata.messages, 200);
        eqb(r.dec.u.sqldata.blr, p.u.sqldata.blr, "blr");
        if (ops[i] == FBW_OP_FETCH_SCROLL) {
            cr_assert_eq(r.dec.u.sqldata.fetch_op, 5);
            cr_assert_eq(r.dec.u.sqldata.fetch_pos, -3);
        } else {
            cr_assert_eq(r.dec.u.sqldata.fetch_op, 0, "op_fetch has no scroll fields");
        }
        rt_free(&r);
    }
}

static void fetch_response_case(int protocol)
{
    fbw_buf msg;
    fbw_buf_init(&msg);
    messages(&msg, protocol, 1);
    fbw_pkt p = {.op = FBW_OP_FETCH_RESPONSE};
    p.u.sqldata.status = 0;
    p.u.sqldata.messages = 1;
    p.u.sqldata.msg = B(msg.data, msg.len);
    rt r;
    roundtrip(protocol, &p, &r);
    cr_assert_eq(r.dec.u.sqldata.status, 0);
    cr_assert_eq(r.dec.u.sqldata.messages, 1);
    eqb(r.dec.u.sqldata.msg, B(msg.data, msg.len), "row");
    cr_assert_eq(fa.last_kind, FBW_FMT_FETCH);
    /* the row decodes back to the values */
    fbw_value v[3];
    fbw_err err;
    cr_assert_eq(fbw_msg_decode(r.dec.u.sqldata.msg, &fmt, protocol, v, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(v[0].u.i64, 40);
    eqb(v[1].u.bytes, L("row0"), "varchar");
    cr_assert(v[2].is_null);
    rt_free(&r);
    fbw_buf_free(&msg);
}

Test(pkt, fetch_response_row_p13) { fetch_response_case(13); }
Test(pkt, fetch_response_row_p10_unpacked) { fetch_response_case(10); }

Test(pkt, fetch_response_end_of_cursor)
{
    fbw_pkt p = {.op = FBW_OP_FETCH_RESPONSE};
    p.u.sqldata.status = 100;
    p.u.sqldata.messages = 0;
    fa.calls = 0;
    rt r;
    roundtrip(13, &p, &r);
    cr_assert_eq(r.enc.len, 12);
    cr_assert_eq(r.dec.u.sqldata.status, 100);
    cr_assert_eq(fa.calls, 0, "no format needed without a message");
    rt_free(&r);
}

Test(pkt, fetch_response_varchar_longer_than_declared_is_proto)
{
    fbw_buf b;
    fbw_buf_init(&b);
    /* op 66, status 0, 1 message: bitmap 0x04 (INT64 null), LONG 1, VARCHAR len 11 > 10 */
    fbw_test_hex(&b, "00000042 00000000 00000001 04000000 00000001 0000000B 41414141 41414141 41414100");
    fbw_pkt p;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(13, &b, &p, &used, &err), FBW_E_PROTO);
    cr_assert_not_null(strstr(err.msg, "op_fetch_response"), "%s", err.msg);
    fbw_buf_free(&b);
}

Test(pkt, sql_response)
{
    fbw_buf msg;
    fbw_buf_init(&msg);
    messages(&msg, 16, 1);
    fbw_pkt p = {.op = FBW_OP_SQL_RESPONSE};
    p.u.sqldata.messages = 1;
    p.u.sqldata.msg = B(msg.data, msg.len);
    rt r;
    roundtrip(16, &p, &r);
    eqb(r.dec.u.sqldata.msg, B(msg.data, msg.len), "row");
    cr_assert_eq(fa.last_kind, FBW_FMT_SQL_RESPONSE);
    rt_free(&r);
    p.u.sqldata.messages = 0;
    p.u.sqldata.msg = B(NULL, 0);
    roundtrip(16, &p, &r);
    cr_assert_eq(r.enc.len, 8);
    rt_free(&r);
    fbw_buf_free(&msg);
}

Test(pkt, free_statement_and_set_cursor)
{
    fbw_pkt p = {.op = FBW_OP_FREE_STATEMENT};
    p.u.sqlfree.stmt = 3;
    p.u.sqlfree.option = 2;
    rt r;
    roundtrip(13, &p, &r);
    cr_assert_eq(r.enc.len, 12);
    cr_assert_eq(r.dec.u.sqlfree.option, 2);
    rt_free(&r);

    fbw_pkt c = {.op = FBW_OP_SET_CURSOR};
    c.u.sqlcur.stmt = 0xFFFF;
    c.u.sqlcur.name = L("C1");
    c.u.sqlcur.type = 0;
    roundtrip(13, &c, &r);
    eqb(r.dec.u.sqlcur.name, L("C1"), "cursor name");
    cr_assert_eq(r.dec.u.sqlcur.stmt, 0xFFFF);
    rt_free(&r);
}

/* ---- authentication, crypt, cancel ---- */

Test(pkt, cont_auth_and_trusted_auth)
{
    fbw_pkt p = {.op = FBW_OP_CONT_AUTH};
    p.u.auth.data = L("ABCDEF0123");
    p.u.auth.name = L("Srp");
    p.u.auth.list = L("Srp256, Srp");
    p.u.auth.keys = B(NULL, 0);
    rt r;
    roundtrip(15, &p, &r);
    eqb(r.dec.u.auth.data, p.u.auth.data, "data");
    eqb(r.dec.u.auth.name, L("Srp"), "name");
    eqb(r.dec.u.auth.list, p.u.auth.list, "list");
    cr_assert_eq(r.dec.u.auth.keys.n, 0);
    rt_free(&r);

    fbw_pkt t = {.op = FBW_OP_TRUSTED_AUTH};
    t.u.trau.data = L("sspi");
    roundtrip(12, &t, &r);
    eqb(r.dec.u.trau.data, L("sspi"), "trusted data");
    rt_free(&r);
}

Test(pkt, cont_auth_data_over_cap)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, "0000005C 00010000");
    fbw_pkt p;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(13, &b, &p, &used, &err), FBW_E_PROTO);
    cr_assert_not_null(strstr(err.msg, "op_cont_auth"), "%s", err.msg);
    fbw_buf_free(&b);
}

Test(pkt, crypt)
{
    fbw_pkt p = {.op = FBW_OP_CRYPT};
    p.u.crypt.plugin = L("ChaCha64");
    p.u.crypt.key = L("Symmetric");
    rt r;
    roundtrip(16, &p, &r);
    eqb(r.dec.u.crypt.plugin, L("ChaCha64"), "plugin");
    eqb(r.dec.u.crypt.key, L("Symmetric"), "key");
    rt_free(&r);
}

Test(pkt, crypt_key_callback_reply_field_by_protocol)
{
    int protos[] = {0, 13, 14};
    int has[] = {1, 0, 1};
    for (int i = 0; i < 3; i++) {
        fbw_pkt p = {.op = FBW_OP_CRYPT_KEY_CALLBACK};
        p.u.cc.data = L("key?");
        p.u.cc.reply = 32;
        rt r;
        roundtrip(protos[i], &p, &r);
        cr_assert_eq(r.dec.u.cc.has_reply, has[i], "P%d", protos[i]);
        cr_assert_eq(r.enc.len, 4 + 8 + (has[i] ? 4u : 0u), "P%d", protos[i]);
        cr_assert_eq(r.dec.u.cc.reply, has[i] ? 32 : 0);
        eqb(r.dec.u.cc.data, L("key?"), "data");
        rt_free(&r);
    }
}

Test(pkt, cancel)
{
    fbw_pkt p = {.op = FBW_OP_CANCEL};
    p.u.cancel.kind = 3;
    rt r;
    roundtrip(12, &p, &r);
    cr_assert_eq(r.enc.len, 8);
    cr_assert_eq(r.dec.u.cancel.kind, 3);
    rt_free(&r);
}

/* ---- the remaining legacy layouts ---- */

Test(pkt, connect_request_and_aux_connect)
{
    int ops[] = {FBW_OP_CONNECT_REQUEST, FBW_OP_AUX_CONNECT};
    for (int i = 0; i < 2; i++) {
        fbw_pkt p = {.op = ops[i]};
        p.u.req.type = 1;
        p.u.req.object = 0;
        p.u.req.partner = -5;
        rt r;
        roundtrip(13, &p, &r);
        cr_assert_eq(r.dec.u.req.partner, -5);
        rt_free(&r);
    }
}

Test(pkt, events)
{
    int ops[] = {FBW_OP_QUE_EVENTS, FBW_OP_EVENT, FBW_OP_CANCEL_EVENTS};
    for (int i = 0; i < 3; i++) {
        fbw_pkt p = {.op = ops[i]};
        p.u.event.db = 0;
        p.u.event.items = ops[i] == FBW_OP_CANCEL_EVENTS ? B(NULL, 0) : L("\x01\x03EVT\x00\x00\x00\x00");
        p.u.event.ast = ops[i] == FBW_OP_CANCEL_EVENTS ? 0 : 11;
        p.u.event.arg = ops[i] == FBW_OP_CANCEL_EVENTS ? 0 : 12;
        p.u.event.rid = 13;
        rt r;
        roundtrip(13, &p, &r);
        cr_assert_eq(r.dec.u.event.rid, 13);
        cr_assert_eq(r.dec.u.event.ast, p.u.event.ast);
        if (ops[i] == FBW_OP_CANCEL_EVENTS)
            cr_assert_eq(r.enc.len, 12);
        rt_free(&r);
    }
}

Test(pkt, ddl_compile_account_repl_authenticate)
{
    fbw_pkt d = {.op = FBW_OP_DDL};
    d.u.ddl.db = 1;
    d.u.ddl.tr = 2;
    d.u.ddl.blr = L("ddl");
    rt r;
    roundtrip(13, &d, &r);
    cr_assert_eq(r.dec.u.ddl.tr, 2);
    rt_free(&r);
    fbw_pkt c = {.op = FBW_OP_COMPILE};
    c.u.ddl.db = 1;
    c.u.ddl.blr = L("blr!");
    roundtrip(13, &c, &r);
    cr_assert_eq(r.enc.len, 4 + 4 + 8, "op_compile has no transaction");
    rt_free(&r);
    int ops[] = {FBW_OP_UPDATE_ACCOUNT_INFO, FBW_OP_REPL_DATA};
    for (int i = 0; i < 2; i++) {
        fbw_pkt a = {.op = ops[i]};
        a.u.account.db = 0;
        a.u.account.data = L("segment of data");
        roundtrip(16, &a, &r);
        eqb(r.dec.u.account.data, a.u.account.data, "data");
        rt_free(&r);
    }
    fbw_pkt u = {.op = FBW_OP_AUTHENTICATE_USER};
    u.u.authuser.db = 0;
    u.u.authuser.dpb = L("\x01\x1c\x01x");
    u.u.authuser.items = L("\x01");
    u.u.authuser.buffer_length = 100;
    roundtrip(13, &u, &r);
    cr_assert_eq(r.dec.u.authuser.buffer_length, 100);
    rt_free(&r);
}

/* ---- batch ---- */

Test(pkt, batch_create_msg_exec)
{
    fbw_pkt c = {.op = FBW_OP_BATCH_CREATE};
    c.u.batch_create.stmt = 6;
    c.u.batch_create.blr = L("\x05\x02\x04\x00\x03\x00");
    c.u.batch_create.msglen = 24;
    c.u.batch_create.pb = L("\x01\x01\x04\x01\x00\x00\x00");
    rt r;
    roundtrip(17, &c, &r);
    cr_assert_eq(r.dec.u.batch_create.msglen, 24);
    eqb(r.dec.u.batch_create.pb, c.u.batch_create.pb, "pb");
    rt_free(&r);

    fbw_buf msg;
    fbw_buf_init(&msg);
    messages(&msg, 17, 3);
    fbw_pkt m = {.op = FBW_OP_BATCH_MSG};
    m.u.batch_msg.stmt = 6;
    m.u.batch_msg.count = 3;
    m.u.batch_msg.data = B(msg.data, msg.len);
    roundtrip(17, &m, &r);
    cr_assert_eq(r.dec.u.batch_msg.count, 3);
    eqb(r.dec.u.batch_msg.data, B(msg.data, msg.len), "three messages");
    cr_assert_eq(fa.last_kind, FBW_FMT_BATCH);
    rt_free(&r);
    fbw_buf_free(&msg);

    fbw_pkt e = {.op = FBW_OP_BATCH_EXEC};
    e.u.batch_exec.stmt = 6;
    e.u.batch_exec.tr = 1;
    roundtrip(17, &e, &r);
    cr_assert_eq(r.enc.len, 12);
    cr_assert_eq(r.dec.u.batch_exec.tr, 1);
    rt_free(&r);
}

Test(pkt, batch_msg_count_over_cap)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, "00000064 00000006 01000001");
    fbw_pkt p;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(17, &b, &p, &used, &err), FBW_E_PROTO);
    cr_assert_not_null(strstr(err.msg, "op_batch_msg"), "%s", err.msg);
    fbw_buf_free(&b);
}

Test(pkt, batch_cs_with_counts_vectors_errors)
{
    /* update counts 1, 2, -1; record 2 failed with a status vector; record 5 failed without one */
    fbw_buf detail;
    fbw_buf_init(&detail);
    fbw_test_hex(&detail, "00000001 00000002 FFFFFFFF 00000002");
    static const fbw_status_arg st[] = {{FBW_ARG_GDS, 335544665u, NULL}, {FBW_ARG_STRING, 0, "PK_T"},
                                        {FBW_ARG_STRING, 0, "T"}, {FBW_ARG_SQL_STATE, 0, "23000"}};
    status_vec(&detail, st, 4);
    fbw_test_hex(&detail, "00000005");
    fbw_pkt p = {.op = FBW_OP_BATCH_CS};
    p.u.batch_cs.stmt = 6;
    p.u.batch_cs.reccount = 6;
    p.u.batch_cs.updates = 3;
    p.u.batch_cs.vectors = 1;
    p.u.batch_cs.errors = 1;
    p.u.batch_cs.detail = B(detail.data, detail.len);
    rt r;
    roundtrip(17, &p, &r);
    cr_assert_eq(r.dec.u.batch_cs.reccount, 6);
    cr_assert_eq(r.dec.u.batch_cs.updates, 3);
    cr_assert_eq(r.dec.u.batch_cs.vectors, 1);
    cr_assert_eq(r.dec.u.batch_cs.errors, 1);
    eqb(r.dec.u.batch_cs.detail, B(detail.data, detail.len), "detail");
    rt_free(&r);

    /* a corrupt vector inside is a framing error */
    size_t at = 3 * 4 + 4; /* update counts + position: the vector's first arg type */
    cr_assert_eq(detail.data[at + 3], FBW_ARG_GDS);
    detail.data[at + 3] = 42;
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, "00000067 00000006 00000006 00000003 00000001 00000001");
    fbw_buf_append(&b, detail.data, detail.len);
    fbw_pkt q;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(17, &b, &q, &used, &err), FBW_E_PROTO);
    cr_assert_not_null(strstr(err.msg, "op_batch_cs"), "%s", err.msg);
    fbw_buf_free(&b);
    fbw_buf_free(&detail);
}

Test(pkt, batch_cs_counts_over_cap)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, "00000067 00000006 00000000 01000001 00000000 00000000");
    fbw_pkt p;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(17, &b, &p, &used, &err), FBW_E_PROTO);
    fbw_buf_free(&b);
}

Test(pkt, batch_set_bpb_regblob)
{
    fbw_pkt s = {.op = FBW_OP_BATCH_SET_BPB};
    s.u.batch_bpb.stmt = 6;
    s.u.batch_bpb.bpb = L("\x01\x03\x01\x01");
    rt r;
    roundtrip(17, &s, &r);
    eqb(r.dec.u.batch_bpb.bpb, s.u.batch_bpb.bpb, "bpb");
    rt_free(&r);
    fbw_pkt g = {.op = FBW_OP_BATCH_REGBLOB};
    g.u.batch_regblob.stmt = 6;
    g.u.batch_regblob.exist_hi = 1;
    g.u.batch_regblob.exist_lo = 2;
    g.u.batch_regblob.id_hi = 3;
    g.u.batch_regblob.id_lo = 4;
    roundtrip(17, &g, &r);
    cr_assert_eq(r.enc.len, 4 + 4 + 16);
    cr_assert_eq(r.dec.u.batch_regblob.id_lo, 4);
    cr_assert_eq(r.dec.u.batch_regblob.exist_hi, 1);
    rt_free(&r);
}

Test(pkt, inline_blob)
{
    static uint8_t data[3000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 13);
    fbw_pkt p = {.op = FBW_OP_INLINE_BLOB};
    p.u.inline_blob.tr = 2;
    p.u.inline_blob.id_hi = 0x81;
    p.u.inline_blob.id_lo = 0x42;
    p.u.inline_blob.info = L("\x05\x04\x00\xb8\x0b\x00\x00\x01");
    p.u.inline_blob.data = B(data, sizeof data);
    rt r;
    roundtrip(19, &p, &r);
    cr_assert_eq(r.dec.u.inline_blob.tr, 2);
    cr_assert_eq(r.dec.u.inline_blob.id_hi, 0x81);
    cr_assert_eq(r.dec.u.inline_blob.id_lo, 0x42);
    eqb(r.dec.u.inline_blob.info, p.u.inline_blob.info, "info");
    eqb(r.dec.u.inline_blob.data, B(data, sizeof data), "data");
    rt_free(&r);
}

/* ---- bad op codes ---- */

static int decode_word(uint32_t op, fbw_err *err, fbw_pkt *p)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_wr w;
    fbw_wr_init(&w, &b);
    fbw_xdr_put_u32(&w, op);
    fbw_xdr_put_u32(&w, 0); /* some body bytes */
    size_t used = 0;
    int rc = decode_bytes(19, &b, p, &used, err);
    fbw_buf_free(&b);
    return rc;
}

Test(pkt, unknown_op_is_proto_naming_it)
{
    static const struct {
        uint32_t op;
        const char *name;
    } bad[] = {{5, "op_5"}, {7, "op_7"}, {46, "op_46"}, {115, "op_115"}, {0xFFFFFFFFu, "op_-1"},
               {0x7FFFFFFFu, "op_2147483647"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fbw_err err;
        fbw_pkt p;
        cr_assert_eq(decode_word(bad[i].op, &err, &p), FBW_E_PROTO, "op %u", bad[i].op);
        cr_assert_not_null(strstr(err.msg, bad[i].name), "'%s' does not name %s", err.msg, bad[i].name);
        cr_assert_eq(err.op, (int)bad[i].op);
    }
}

/* ---- BLR requests: op_start ... op_start_send_and_receive, op_transact ---- */

/* One plain request message of the test format (xdr_message: no NULL bitmap, no indicators):
 * LONG 7, VARCHAR "abcde", INT64 -2. */
static const uint8_t plain_msg[] = {0, 0, 0, 7, 0, 0, 0, 5, 'a', 'b', 'c', 'd', 'e', 0, 0, 0,
                                    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE};

Test(pkt, blr_request_ops_five_shorts_then_one_plain_message)
{
    static const int32_t bare[] = {FBW_OP_START, FBW_OP_START_AND_RECEIVE, FBW_OP_RECEIVE};
    static const int32_t with_msg[] = {FBW_OP_SEND, FBW_OP_START_AND_SEND,
                                       FBW_OP_START_SEND_AND_RECEIVE};
    for (int protocol = 10; protocol <= 19; protocol += 3) {
        for (size_t i = 0; i < 3; i++) {
            fbw_pkt p = {.op = bare[i]};
            p.u.data.request = 1;
            p.u.data.incarnation = 2;
            p.u.data.tr = 3;
            p.u.data.msg_number = 4;
            p.u.data.messages = 5;
            rt r;
            roundtrip(protocol, &p, &r);
            cr_assert_eq(r.enc.len, 24, "%d: op and five shorts", bare[i]);
            for (size_t k = 1; k <= 5; k++)
                cr_assert_eq(word(&r, k), k, "op %d word %zu", bare[i], k);
            rt_free(&r);
        }
        for (size_t i = 0; i < 3; i++) {
            fbw_pkt p = {.op = with_msg[i]};
            p.u.data.request = 9;
            p.u.data.msg_number = 1;
            p.u.data.messages = 0; /* the message is there whatever this says (xdr_request) */
            p.u.data.msg = B(plain_msg, sizeof plain_msg);
            fa.calls = 0;
            rt r;
            roundtrip(protocol, &p, &r);
            cr_assert_eq(fa.last_kind, FBW_FMT_REQUEST);
            cr_assert_eq(r.enc.len, 24 + sizeof plain_msg, "op %d at P%d", with_msg[i], protocol);
            eqb(r.dec.u.data.msg, B(plain_msg, sizeof plain_msg), "message");
            cr_assert_eq(r.dec.u.data.request, 9);
            fbw_value v[3];
            fbw_err err;
            cr_assert_eq(fbw_msg_decode_plain(r.dec.u.data.msg, &fmt, v, &err), FBW_OK, "%s", err.msg);
            cr_assert_eq(v[0].u.i64, 7);
            cr_assert_eq(v[1].u.bytes.n, 5);
            cr_assert_eq(v[2].u.i64, -2);
            cr_assert(!v[0].is_null && !v[1].is_null && !v[2].is_null);
            rt_free(&r);
        }
    }
    /* a message whose format is not known: unsupported, naming the op */
    fbw_pkt p = {.op = FBW_OP_SEND};
    p.u.data.msg = B(plain_msg, sizeof plain_msg);
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_wr w;
    fbw_wr_init(&w, &b);
    fbw_pkt_ctx ctx = mkctx(13);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, &p), FBW_OK);
    fa.fail = 1;
    fbw_pkt q;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(13, &b, &q, &used, &err), FBW_E_BADVALUE);
    cr_assert(strstr(err.msg, "op_send"), "%s", err.msg);
    fa.fail = 0;
    fbw_buf_free(&b);
}

Test(pkt, transact_sends_its_blr_twice_and_one_message_each_way)
{
    static const uint8_t blr[] = {4, 2, 4, 0, 1, 0, 8, 0, 4, 1, 1, 0, 8, 0, 0xFF, 0x4C};
    fbw_pkt p = {.op = FBW_OP_TRANSACT};
    p.u.trrq.db = 0;
    p.u.trrq.tr = 5;
    p.u.trrq.blr = B(blr, sizeof blr);
    p.u.trrq.messages = 1;
    p.u.trrq.msg = B(plain_msg, sizeof plain_msg);
    rt r;
    roundtrip(16, &p, &r);
    cr_assert_eq(fa.last_kind, FBW_FMT_TRANSACT_IN);
    /* op, db, tr, blr (4 + 16), the same blr again, messages, message */
    cr_assert_eq(r.enc.len, 4 * 3 + 20 + 20 + 4 + sizeof plain_msg);
    cr_assert(memcmp(r.enc.data + 12, r.enc.data + 32, 20) == 0, "the two BLR copies differ");
    eqb(r.dec.u.trrq.blr, B(blr, sizeof blr), "blr");
    /* copies that differ: the framing cannot be trusted */
    fbw_buf bad;
    fbw_buf_init(&bad);
    fbw_buf_append(&bad, r.enc.data, r.enc.len);
    bad.data[32 + 4 + 6] ^= 1;
    fbw_pkt q;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(16, &bad, &q, &used, &err), FBW_E_PROTO);
    cr_assert(strstr(err.msg, "two copies of the BLR differ"), "%s", err.msg);
    fbw_buf_free(&bad);
    rt_free(&r);

    fbw_pkt t = {.op = FBW_OP_TRANSACT_RESPONSE};
    t.u.trrq.messages = 1;
    t.u.trrq.msg = B(plain_msg, sizeof plain_msg);
    roundtrip(16, &t, &r);
    cr_assert_eq(fa.last_kind, FBW_FMT_TRANSACT_OUT);
    cr_assert_eq(r.enc.len, 8 + sizeof plain_msg);
    rt_free(&r);
    t.u.trrq.messages = 0; /* no message: nothing but the count */
    t.u.trrq.msg = B(NULL, 0);
    roundtrip(16, &t, &r);
    cr_assert_eq(r.enc.len, 8);
    rt_free(&r);
}

/* ---- array slices ---- */

/* SDL: version1, relation "T", field "A", struct of one blr_short element, then the subscript
 * program (not read) */
static const uint8_t sdl_short[] = {1, 2, 1, 'T', 4, 1, 'A', 6, 1, 7, 0, 36, 1, 8, 0, 255};

Test(pkt, slices_frame_their_elements_by_the_sdl)
{
    /* three SHORT elements: 6 bytes in the slice buffer, 3 x 4 on the wire */
    static const uint8_t elems[] = {0, 0, 0, 1, 0, 0, 0, 2, 0xFF, 0xFF, 0xFF, 0xFD};
    static const uint8_t params[] = {0, 0, 0, 1, 0, 0, 0, 3};
    fbw_pkt p = {.op = FBW_OP_PUT_SLICE};
    p.u.slc.tr = 4;
    p.u.slc.id_lo = 77;
    p.u.slc.length = 6;
    p.u.slc.sdl = B(sdl_short, sizeof sdl_short);
    p.u.slc.params = B(params, sizeof params);
    p.u.slc.slice_length = 6;
    p.u.slc.slice = B(elems, sizeof elems);
    rt r;
    roundtrip(16, &p, &r);
    /* op tr quad(2) length sdl(4+16) params(4+8) slice_length elements */
    cr_assert_eq(r.enc.len, 4 * 5 + 20 + 12 + 4 + sizeof elems);
    eqb(r.dec.u.slc.slice, B(elems, sizeof elems), "elements");
    eqb(r.dec.u.slc.params, B(params, sizeof params), "params");
    rt_free(&r);

    /* op_get_slice: an empty slice; op_slice: framed with the callback's element */
    p.op = FBW_OP_GET_SLICE;
    p.u.slc.slice_length = 0;
    p.u.slc.slice = B(NULL, 0);
    roundtrip(13, &p, &r);
    rt_free(&r);
    fbw_pkt s = {.op = FBW_OP_SLICE};
    s.u.slc.length = 3;
    s.u.slc.slice_length = 4; /* test format's first column is LONG: one element */
    s.u.slc.slice = B(elems, 4);
    roundtrip(13, &s, &r);
    cr_assert_eq(fa.last_kind, FBW_FMT_SLICE);
    rt_free(&r);

    /* a bad SDL with elements to frame: the SDL's error, naming the offset */
    static const uint8_t bad_sdl[] = {1, 6, 1, 99};
    p.op = FBW_OP_PUT_SLICE;
    p.u.slc.sdl = B(bad_sdl, sizeof bad_sdl);
    p.u.slc.slice_length = 6;
    p.u.slc.slice = B(elems, sizeof elems);
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_wr w;
    fbw_wr_init(&w, &b);
    fbw_pkt_ctx ctx = mkctx(16);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, &p), FBW_OK);
    fbw_pkt q;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(16, &b, &q, &used, &err), FBW_E_BADVALUE);
    cr_assert(strstr(err.msg, "op_put_slice: SDL not understood at offset 3: element type byte 99"),
              "%s", err.msg);
    fbw_buf_free(&b);
}

Test(pkt, known_op_without_decoder_is_unsupported)
{
    static const struct {
        int op;
        const char *name;
    } uns[] = {{FBW_OP_VOID, "op_void"}, {FBW_OP_INSERT, "op_insert"}, {FBW_OP_PARTIAL, "op_partial"},
               {FBW_OP_REPL_REQ, "op_repl_req"}};
    for (size_t i = 0; i < sizeof uns / sizeof *uns; i++) {
        fbw_err err;
        fbw_pkt p;
        cr_assert_eq(decode_word((uint32_t)uns[i].op, &err, &p), FBW_E_UNSUPPORTED, "%s", uns[i].name);
        cr_assert_not_null(strstr(err.msg, uns[i].name), "'%s'", err.msg);
        cr_assert_eq(err.op, uns[i].op);
        fbw_pkt q = {.op = uns[i].op};
        fbw_buf b;
        fbw_buf_init(&b);
        fbw_wr w;
        fbw_wr_init(&w, &b);
        fbw_pkt_ctx ctx = mkctx(19);
        cr_assert_eq(fbw_pkt_encode(&ctx, &w, &q), FBW_E_UNSUPPORTED);
        cr_assert_eq(b.len, 0, "nothing written for an op without encoder");
        fbw_buf_free(&b);
    }
}

Test(pkt, op_code_prefixes_wait)
{
    static const uint8_t op[] = {0, 0, 0, 5};
    fbw_pkt_ctx ctx = mkctx(13);
    for (size_t k = 0; k < 4; k++) {
        fbw_pkt p;
        size_t used;
        fbw_err err;
        fbw_err_clear(&err);
        cr_assert_eq(fbw_pkt_decode(&ctx, op, k, &p, &used, &err), FBW_AGAIN, "%zu bytes", k);
    }
}

/* ---- a stream of packets, cut every way ---- */

Test(pkt, stream_of_packets)
{
    fbw_buf s, msg;
    fbw_buf_init(&s);
    fbw_buf_init(&msg);
    fbw_pkt_ctx ctx = mkctx(16);
    fbw_wr w;
    fbw_wr_init(&w, &s);
    fbw_pkt a = {.op = FBW_OP_DUMMY};
    fbw_pkt_encode(&ctx, &w, &a);
    encode_response(&s, 1, L("abc"), ok_status, 1);
    messages(&msg, 16, 1);
    fbw_pkt f = {.op = FBW_OP_FETCH_RESPONSE};
    f.u.sqldata.messages = 1;
    f.u.sqldata.msg = B(msg.data, msg.len);
    fbw_pkt_encode(&ctx, &w, &f);
    fbw_pkt_encode(&ctx, &w, &f);
    fbw_pkt e = {.op = FBW_OP_FETCH_RESPONSE};
    e.u.sqldata.status = 100;
    fbw_pkt_encode(&ctx, &w, &e);
    cr_assert_eq(w.rc, FBW_OK);
    fbw_feed_result whole;
    fbw_feed_check(decode_fn, &ctx, s.data, s.len, &whole);
    cr_assert_eq(whole.rc, FBW_OK);
    cr_assert_eq(whole.items, 5);
    cr_assert_eq(whole.consumed, s.len);
    cr_assert_eq(whole.transcript.len, s.len, "canonical input re-encodes to itself");
    cr_assert_eq(memcmp(whole.transcript.data, s.data, s.len), 0);
    fbw_feed_result_free(&whole);

    /* with garbage at the end, every cutting stops at the same place with the same error */
    static const uint8_t junk[] = {0, 0, 0, 0x77, 1, 2, 3, 4};
    fbw_buf_append(&s, junk, sizeof junk);
    fbw_feed_check(decode_fn, &ctx, s.data, s.len, &whole);
    cr_assert_eq(whole.rc, FBW_E_PROTO);
    cr_assert_eq(whole.items, 5);
    fbw_feed_result_free(&whole);
    fbw_buf_free(&s);
    fbw_buf_free(&msg);
}

/* seeds for fuzz_status: status vectors of the shapes servers send */
Test(pkt, status_vector_seeds)
{
    char dir[512];
    const char *d = fbw_test_corpus_dir("fuzz_status", dir, sizeof dir);
    static const fbw_status_arg v1[] = {{FBW_ARG_GDS, 0, NULL}};
    static const fbw_status_arg v2[] = {{FBW_ARG_GDS, 0, NULL}, {FBW_ARG_WARNING, 335544807u, NULL},
                                        {FBW_ARG_STRING, 0, "x"}};
    static const fbw_status_arg v3[] = {{FBW_ARG_GDS, 335544344u, NULL}, {FBW_ARG_STRING, 0, "open"},
                                        {FBW_ARG_STRING, 0, "/x"}, {FBW_ARG_GDS, 335544734u, NULL},
                                        {FBW_ARG_INTERPRETED, 0, "No such file"}};
    static const fbw_status_arg v4[] = {{FBW_ARG_GDS, 335544569u, NULL}, {FBW_ARG_GDS, 335544436u, NULL},
                                        {FBW_ARG_NUMBER, (uint32_t)-104, NULL}, {FBW_ARG_GDS, 335544634u, NULL},
                                        {FBW_ARG_NUMBER, 1, NULL}, {FBW_ARG_NUMBER, 8, NULL},
                                        {FBW_ARG_SQL_STATE, 0, "42000"}};
    const struct {
        const fbw_status_arg *a;
        int n;
    } vs[] = {{v1, 1}, {v2, 3}, {v3, 5}, {v4, 7}};
    for (int i = 0; i < 4; i++) {
        fbw_buf b;
        fbw_buf_init(&b);
        status_vec(&b, vs[i].a, vs[i].n);
        fbw_rd r;
        fbw_rd_init(&r, b.data, b.len, FBW_E_PROTO);
        fbw_bytes f = fbw_status_frame(&r);
        cr_assert_eq(f.n, b.len);
        char name[16];
        snprintf(name, sizeof name, "vec%d", i);
        fbw_test_save(d, name, b.data, b.len);
        fbw_buf_free(&b);
    }
}

/* From fuzz_status: an empty or missing status vector. On a growing stream it is a shortfall
 * (FBW_AGAIN, no message); in a complete buffer a protocol error that says so. */
Test(pkt, response_without_status_waits)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, "00000009 00000000 00000000 00000000 00000000");
    fbw_pkt p;
    size_t used;
    fbw_err err;
    cr_assert_eq(decode_bytes(13, &b, &p, &used, &err), FBW_AGAIN);
    fbw_rd r;
    fbw_rd_init(&r, b.data, 0, FBW_E_PROTO);
    fbw_err_clear(&err);
    fbw_bytes v = fbw_status_frame_ex(&r, &err);
    cr_assert_eq(r.rc, FBW_E_PROTO);
    cr_assert_eq(v.n, 0);
    cr_assert_neq(err.msg[0], 0, "the error says why");
    fbw_buf_free(&b);
}

/* ---- op_batch_blob_stream: the batch blob stream (bstream.c) ---- */

typedef struct bs_arg {
    fbw_bstream st;
    int fail;
} bs_arg;

static const fbw_bstream *bs_cb(void *arg, uint16_t stmt, fbw_err *err)
{
    bs_arg *a = arg;
    if (a->fail) {
        fbw_err_set(err, FBW_E_UNSUPPORTED, "no batch known for statement %u", (unsigned)stmt);
        return NULL;
    }
    return &a->st;
}

static bs_arg bsa;

/* Decode on a guard page with bsa's state as the statement's stream so far. */
static int bs_decode(const uint8_t *p, size_t n, fbw_pkt *out, size_t *used, fbw_err *err)
{
    fbw_pkt_ctx c = {16, NULL, &bsa, bs_cb};
    fbw_err_clear(err);
    fbw_guard_free(&dec_guard);
    fbw_guard_init(&dec_guard, n);
    return fbw_pkt_decode(&c, fbw_guard_place(&dec_guard, p, n), n, out, used, err);
}

static int bs_decode_fn(void *arg, const uint8_t *p, size_t n, size_t *used, fbw_buf *transcript)
{
    (void)arg;
    fbw_pkt pk;
    fbw_err err;
    fbw_pkt_ctx c = {16, NULL, &bsa, bs_cb};
    int rc = fbw_pkt_decode(&c, p, n, &pk, used, &err);
    if (rc != FBW_OK)
        return rc;
    fbw_wr w;
    fbw_wr_init(&w, transcript);
    cr_assert_eq(fbw_pkt_encode(&c, &w, &pk), FBW_OK);
    return FBW_OK;
}

/* Firebird 4.0.5's gbak restoring T1's two text blobs ('first note', 'third') into a batch:
 * the client's op_batch_blob_stream, byte for byte from pcap/fb4_gbak_restore.pcap. 60 stream
 * bytes in 75 on the wire: two 16-byte headers, each blob's BPB (version 1, isc_bpb_type 0:
 * segmented), a segment length (4 bytes on the wire, 2 in the stream), the text, and a 1-byte
 * alignment gap at the end that is not sent. */
static const uint8_t gbak_stream[] = {
    0x00, 0x00, 0x00, 0x69, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x3c, /* op, stmt 10, 60 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x04,
    0x01, 0x03, 0x01, 0x00, 0x00, 0x00, 0x00, 0x0a, 'f', 'i', 'r', 's', 't', ' ', 'n', 'o', 't', 'e',
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x04,
    0x01, 0x03, 0x01, 0x00, 0x00, 0x00, 0x00, 0x05, 't', 'h', 'i', 'r', 'd'};

Test(pkt, batch_blob_stream_of_fb4_gbak)
{
    fbw_bstream_init(&bsa.st, FBW_BSTREAM_ALIGN);
    fbw_pkt p;
    size_t used = 0;
    fbw_err err;
    cr_assert_eq(bs_decode(gbak_stream, sizeof gbak_stream, &p, &used, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(sizeof gbak_stream, 75);
    cr_assert_eq(used, 75);
    cr_assert_eq(p.op, FBW_OP_BATCH_BLOB_STREAM);
    cr_assert_eq(p.u.bstream.stmt, 10);
    cr_assert_eq(p.u.bstream.length, 60);
    cr_assert_eq(p.u.bstream.blobs, 2);
    cr_assert_eq(p.u.bstream.data.n, 63);
    cr_assert_eq(p.u.bstream.st.blob_left, 0, "both blobs complete");
    cr_assert_eq(p.u.bstream.st.segmented, 1, "isc_bpb_type 0: segmented");
    /* every strict prefix waits, whole / byte by byte / split feeding re-encode to the same bytes */
    fbw_feed_check_prefixes(bs_decode_fn, NULL, gbak_stream, sizeof gbak_stream);
    fbw_feed_result whole;
    fbw_feed_check(bs_decode_fn, NULL, gbak_stream, sizeof gbak_stream, &whole);
    cr_assert_eq(whole.rc, FBW_OK);
    cr_assert_eq(whole.items, 1);
    fbw_feed_result_free(&whole);
}

/* From here on the packets are built from the xdr_blob_stream layout (protocol.cpp), not captured:
 * fbclient cuts a packet inside a blob only past its 32 KB-or-so buffer. */
static void bs_head(fbw_wr *w, uint32_t stmt, uint32_t length)
{
    fbw_xdr_put_u32(w, FBW_OP_BATCH_BLOB_STREAM);
    fbw_xdr_put_u32(w, stmt);
    fbw_xdr_put_u32(w, length);
}

static void bs_blob(fbw_wr *w, uint32_t id, uint32_t size, uint32_t bpb)
{
    fbw_xdr_put_u32(w, 0);
    fbw_xdr_put_u32(w, id);
    fbw_xdr_put_u32(w, size);
    fbw_xdr_put_u32(w, bpb);
}

static int bs_decode_buf(const fbw_buf *b, fbw_pkt *p, fbw_err *err)
{
    size_t used = 0;
    int rc = bs_decode(b->data, b->len, p, &used, err);
    if (rc == FBW_OK)
        cr_assert_eq(used, b->len, "the whole packet, no more");
    return rc;
}

Test(pkt, batch_blob_stream_runs_on_across_packets)
{
    static const uint8_t stream_bpb[] = {1, 3, 1, 1}; /* isc_bpb_type = isc_bpb_type_stream */
    fbw_bstream_init(&bsa.st, FBW_BSTREAM_ALIGN);
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_wr w;
    fbw_wr_init(&w, &b);
    /* packet 1: a stream blob of 4 BPB + 10 data bytes, cut after 4 data bytes (24 stream bytes) */
    bs_head(&w, 3, 24);
    bs_blob(&w, 1, 14, 4);
    fbw_xdr_put_raw(&w, stream_bpb, 4);
    fbw_xdr_put_raw(&w, "0123", 4);
    fbw_pkt p;
    fbw_err err;
    cr_assert_eq(bs_decode_buf(&b, &p, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(p.u.bstream.st.blob_left, 6);
    cr_assert_eq(p.u.bstream.st.segmented, 0);
    bsa.st = p.u.bstream.st;
    /* packet 2: the other 6 data bytes, then a 2-byte alignment gap (8 stream bytes, 6 sent) */
    b.len = 0;
    bs_head(&w, 3, 8);
    fbw_xdr_put_raw(&w, "456789", 6);
    cr_assert_eq(bs_decode_buf(&b, &p, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(p.u.bstream.blobs, 0, "no new blob in this packet");
    cr_assert_eq(p.u.bstream.st.blob_left, 0);
    cr_assert_eq(p.u.bstream.data.n, 6);
    bsa.st = p.u.bstream.st;
    /* packet 3: a blob without BPB takes op_batch_set_bpb's default, segmented here; its segment
     * of 5 is cut after 3 bytes, the next packet brings the rest */
    bsa.st.default_segmented = 1;
    b.len = 0;
    bs_head(&w, 3, 20);
    bs_blob(&w, 2, 7, 0);
    fbw_xdr_put_u32(&w, 5); /* segment length: 4 wire bytes, 2 stream bytes */
    fbw_xdr_put_raw(&w, "ab", 2);
    cr_assert_eq(bs_decode_buf(&b, &p, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(p.u.bstream.st.segmented, 1);
    cr_assert_eq(p.u.bstream.st.seg_left, 3);
    cr_assert_eq(p.u.bstream.st.blob_left, 3);
    bsa.st = p.u.bstream.st;
    b.len = 0;
    bs_head(&w, 3, 4); /* 3 bytes and a 1-byte gap */
    fbw_xdr_put_raw(&w, "cde", 3);
    cr_assert_eq(bs_decode_buf(&b, &p, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(p.u.bstream.st.blob_left, 0);
    cr_assert_eq(p.u.bstream.st.seg_left, 0);
    fbw_buf_free(&b);
}

/* A header the packet end would cut is not sent: the stream's last 12 bytes are not on the wire. */
Test(pkt, batch_blob_stream_cut_header_waits_for_the_next_packet)
{
    fbw_bstream_init(&bsa.st, FBW_BSTREAM_ALIGN);
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_wr w;
    fbw_wr_init(&w, &b);
    bs_head(&w, 3, 32);
    bs_blob(&w, 1, 4, 0);
    fbw_xdr_put_raw(&w, "wxyz", 4);
    fbw_xdr_put_u32(&w, FBW_OP_PING); /* the next packet follows at once */
    fbw_pkt p;
    size_t used = 0;
    fbw_err err;
    cr_assert_eq(bs_decode(b.data, b.len, &p, &used, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(used, 12 + 16 + 4);
    cr_assert_eq(p.u.bstream.blobs, 1);
    fbw_buf_free(&b);
}

Test(pkt, batch_blob_stream_bad_streams_are_refused)
{
    static const struct {
        uint32_t length, size, bpb, seg;
        const char *why;
    } bad[] = {
        {20, 4, 8, 0, "a BPB longer than its blob"},
        {30, 8, 0, 0, "not a multiple of the blob alignment"},
        {24, 6, 0, 9, "a segment longer than its blob"},
        {24, 8, 4, 0, "not a version 1 BPB"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fbw_bstream_init(&bsa.st, FBW_BSTREAM_ALIGN);
        bsa.st.default_segmented = 1;
        fbw_buf b;
        fbw_buf_init(&b);
        fbw_wr w;
        fbw_wr_init(&w, &b);
        bs_head(&w, 3, bad[i].length);
        bs_blob(&w, 1, bad[i].size, bad[i].bpb);
        if (bad[i].bpb)
            fbw_xdr_put_raw(&w, "\x02\x03\x01\x00\x00\x00\x00\x00", bad[i].bpb); /* version 2 */
        else
            fbw_xdr_put_u32(&w, bad[i].seg);
        fbw_xdr_put_raw(&w, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
        fbw_pkt p;
        fbw_err err;
        size_t used;
        cr_assert_eq(bs_decode(b.data, b.len, &p, &used, &err), FBW_E_PROTO, "case %zu", i);
        cr_assert(strstr(err.msg, bad[i].why) && strstr(err.msg, "op_batch_blob_stream"), "%s", err.msg);
        fbw_buf_free(&b);
    }
}

Test(pkt, batch_blob_stream_needs_its_batch)
{
    fbw_pkt p;
    size_t used;
    fbw_err err;
    bsa.fail = 1;
    cr_assert_eq(bs_decode(gbak_stream, sizeof gbak_stream, &p, &used, &err), FBW_E_UNSUPPORTED);
    cr_assert(strstr(err.msg, "op_batch_blob_stream: no batch known for statement 10"), "%s", err.msg);
    bsa.fail = 0;
    fbw_pkt_ctx none = mkctx(16); /* a context without the callback (sync.c's probes) */
    fbw_err_clear(&err);
    cr_assert_eq(fbw_pkt_decode(&none, gbak_stream, sizeof gbak_stream, &p, &used, &err), FBW_E_UNSUPPORTED);
    cr_assert(strstr(err.msg, "no batch blob stream state known"), "%s", err.msg);
}

Test(pkt, bpb_kind)
{
    cr_assert_eq(fbw_bpb_segmented((const uint8_t *)"\x01", 1), 1, "no isc_bpb_type: segmented");
    cr_assert_eq(fbw_bpb_segmented((const uint8_t *)"\x01\x03\x01\x01", 4), 0);
    cr_assert_eq(fbw_bpb_segmented((const uint8_t *)"\x01\x01\x02\x00\x00\x03\x01\x01", 8), 0,
                 "after another clumplet");
    cr_assert_eq(fbw_bpb_segmented((const uint8_t *)"\x01\x03\x01\x00", 4), 1);
    cr_assert_eq(fbw_bpb_segmented((const uint8_t *)"\x02\x03\x01\x01", 4), -1, "version 2");
    cr_assert_eq(fbw_bpb_segmented((const uint8_t *)"\x01\x03\x05\x01", 4), -1, "runs past the end");
    cr_assert_eq(fbw_bpb_segmented(NULL, 0), -1);
}
