/* SPDX-License-Identifier: MIT */
/* test_dec.c - the session decoder's fbw_dec_message_format(): during the callback for an
 * op_execute the format its message was framed with (from its BLR, or the statement's previous
 * one when the BLR is empty), NULL for packets without an input message. The replay of
 * fbwire-pcap decodes captured parameters with it. The batch blob stream state the decoder keeps
 * per statement from op_batch_create and op_batch_set_bpb on. */
#include "dec.h"
#include "fbwire.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static fbw_dec *g_dec; /* the decoder under test, for its accessors inside the callback */

typedef struct seen {
    int calls;
    int with_format;
    uint16_t ncols;
    int64_t id;
    char name[16];
    int name_null;
} seen;

static void on_packet(void *arg, int from_client, const fbw_pkt *p, size_t bytes, uint64_t ts)
{
    (void)bytes;
    (void)ts;
    (void)from_client;
    seen *s = arg;
    s->calls++;
    const fbw_msgfmt *f = fbw_dec_message_format(g_dec);
    if (!f)
        return;
    s->with_format++;
    cr_assert_eq(p->op, FBW_OP_EXECUTE, "format reported for op %d", p->op);
    s->ncols = f->n;
    fbw_value v[2];
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_msg_decode(p->u.sqldata.msg, f, fbw_dec_protocol(g_dec), v, &err), FBW_OK,
                 "%s", err.msg);
    s->id = v[0].u.i64;
    s->name_null = v[1].is_null;
    if (!v[1].is_null)
        snprintf(s->name, sizeof s->name, "%.*s", (int)v[1].u.bytes.n,
                 (const char *)v[1].u.bytes.p);
}

static fbw_col cols[2] = {{.type = FBW_SQL_LONG, .length = 4},
                          {.type = FBW_SQL_VARYING, .charset = FBW_CS_UTF8, .length = 10}};

/* op_execute on statement 7 with (id, name); with_blr 0 sends an empty BLR. */
static void put_execute(fbw_buf *out, int with_blr, int32_t id, const char *name)
{
    fbw_msgfmt f = {cols, 2, 2};
    fbw_err err;
    fbw_buf blr, msg;
    fbw_buf_init(&blr);
    fbw_buf_init(&msg);
    cr_assert_eq(fbw_blr_build(&f, 0, 3, &blr, &err), FBW_OK, "%s", err.msg);
    fbw_value v[2];
    memset(v, 0, sizeof v);
    v[0].type = FBW_SQL_LONG;
    v[0].u.i64 = id;
    v[1].type = FBW_SQL_VARYING;
    v[1].is_null = name == NULL;
    if (name) {
        v[1].u.bytes.p = (const uint8_t *)name;
        v[1].u.bytes.n = strlen(name);
    }
    fbw_wr w;
    fbw_wr_init(&w, &msg);
    cr_assert_eq(fbw_msg_encode(&w, &f, 0, v, &err), FBW_OK, "%s", err.msg);
    fbw_pkt p = {.op = FBW_OP_EXECUTE};
    p.u.sqldata.stmt = 7;
    p.u.sqldata.tr = 1;
    p.u.sqldata.blr.p = with_blr ? blr.data : NULL;
    p.u.sqldata.blr.n = with_blr ? blr.len : 0;
    p.u.sqldata.messages = 1;
    p.u.sqldata.msg.p = msg.data;
    p.u.sqldata.msg.n = msg.len;
    fbw_pkt_ctx ctx = {0};
    fbw_wr_init(&w, out);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, &p), FBW_OK);
    fbw_buf_free(&blr);
    fbw_buf_free(&msg);
}

Test(dec, message_format_of_execute_with_and_without_blr)
{
    seen s;
    memset(&s, 0, sizeof s);
    cr_assert_eq(fbw_dec_new(on_packet, &s, &g_dec), FBW_OK);
    fbw_buf b;
    fbw_buf_init(&b);
    put_execute(&b, 1, 42, "abc");
    cr_assert_eq(fbw_dec_feed(g_dec, 1, b.data, b.len, 0), FBW_OK, "%s", fbw_dec_error(g_dec)->msg);
    cr_assert_eq(s.with_format, 1);
    cr_assert_eq(s.ncols, 2);
    cr_assert_eq(s.id, 42);
    cr_assert_str_eq(s.name, "abc");

    /* empty BLR: the statement's previous format still frames and decodes the message */
    fbw_buf_free(&b);
    fbw_buf_init(&b);
    put_execute(&b, 0, -7, NULL);
    cr_assert_eq(fbw_dec_feed(g_dec, 1, b.data, b.len, 0), FBW_OK, "%s", fbw_dec_error(g_dec)->msg);
    cr_assert_eq(s.with_format, 2);
    cr_assert_eq(s.id, -7);
    cr_assert(s.name_null);

    /* a packet without an input message: no format */
    fbw_buf_free(&b);
    fbw_buf_init(&b);
    fbw_pkt p = {.op = FBW_OP_COMMIT};
    p.u.rlse.object = 1;
    fbw_pkt_ctx ctx = {0};
    fbw_wr w;
    fbw_wr_init(&w, &b);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, &p), FBW_OK);
    cr_assert_eq(fbw_dec_feed(g_dec, 1, b.data, b.len, 0), FBW_OK);
    cr_assert_eq(s.calls, 3);
    cr_assert_eq(s.with_format, 2, "op_commit must not report a message format");
    fbw_buf_free(&b);
    fbw_dec_free(g_dec);
}

/* ---- BLR requests: formats per compiled request, replies to receives ---- */

typedef struct req_seen {
    int packets;
    int32_t answering[16];
    int32_t ops[16];
    fbw_bytes msgs[16]; /* sizes only: views die with the callback */
    uint8_t first_row[64];
} req_seen;

static void on_req_packet(void *arg, int from_client, const fbw_pkt *p, size_t bytes, uint64_t ts)
{
    (void)bytes, (void)ts;
    req_seen *s = arg;
    if (s->packets < 16) {
        s->ops[s->packets] = p->op;
        s->answering[s->packets] = from_client ? 0 : fbw_dec_answering(g_dec);
        s->msgs[s->packets] = p->op == FBW_OP_SEND ? p->u.data.msg : (fbw_bytes){NULL, 0};
        if (s->packets == 4 && p->u.data.msg.n <= sizeof s->first_row)
            memcpy(s->first_row, p->u.data.msg.p, p->u.data.msg.n);
    }
    s->packets++;
}

static void put(fbw_buf *b, const fbw_pkt *p)
{
    fbw_pkt_ctx ctx = {0};
    fbw_wr w;
    fbw_wr_init(&w, b);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, p), FBW_OK);
}

static void feed(int from_client, const fbw_pkt *p, int want)
{
    fbw_buf b;
    fbw_buf_init(&b);
    put(&b, p);
    int rc = fbw_dec_feed(g_dec, from_client, b.data, b.len, 0);
    cr_assert_eq(rc, want, "op %d: %s", p->op, fbw_dec_error(g_dec)->msg);
    fbw_buf_free(&b);
}

static const uint8_t ok_status[] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};

static void respond(int32_t op, uint16_t object)
{
    fbw_pkt r = {.op = op};
    r.u.resp.object = object;
    r.u.resp.status = (fbw_bytes){ok_status, sizeof ok_status};
    feed(0, &r, FBW_OK);
}

/* message 0: LONG, blr_cstring 6 (a VARCHAR of 5 on the wire); message 1: SHORT */
static const uint8_t req_blr[] = {4, 2, 4, 0, 2, 0, 8, 0, 40, 6, 0, 4, 1, 1, 0, 7, 0,
                                  3, 0, 2, 0xFF, 0x4C};
static const uint8_t row_a[] = {0, 0, 0, 1, 0, 0, 0, 3, 'a', 'b', 'c', 0};
static const uint8_t row_b[] = {0, 0, 0, 2, 0, 0, 0, 0};
static const uint8_t short_msg[] = {0xFF, 0xFF, 0xFF, 0xFE};

static void data_pkt(fbw_pkt *p, int32_t op, uint16_t request, uint16_t msg, uint16_t messages,
                     const uint8_t *bytes, size_t n)
{
    memset(p, 0, sizeof *p);
    p->op = op;
    p->u.data.request = request;
    p->u.data.tr = 1;
    p->u.data.msg_number = msg;
    p->u.data.messages = messages;
    p->u.data.msg = (fbw_bytes){bytes, n};
}

Test(dec, blr_request_messages_framed_with_the_compiled_formats)
{
    req_seen s;
    memset(&s, 0, sizeof s);
    cr_assert_eq(fbw_dec_new(on_req_packet, &s, &g_dec), FBW_OK);
    fbw_pkt p = {.op = FBW_OP_COMPILE};
    p.u.ddl.blr = (fbw_bytes){req_blr, sizeof req_blr};
    feed(1, &p, FBW_OK);
    respond(FBW_OP_RESPONSE, 5);
    data_pkt(&p, FBW_OP_START_AND_RECEIVE, 5, 0, 0, NULL, 0);
    feed(1, &p, FBW_OK);
    respond(FBW_OP_RESPONSE_PIGGYBACK, 0);
    data_pkt(&p, FBW_OP_SEND, 5, 0, 1, row_a, sizeof row_a); /* more follow */
    feed(0, &p, FBW_OK);
    data_pkt(&p, FBW_OP_SEND, 5, 0, 0, row_b, sizeof row_b); /* the last of the reply */
    feed(0, &p, FBW_OK);
    data_pkt(&p, FBW_OP_SEND, 5, 1, 1, short_msg, sizeof short_msg); /* client: message 1 */
    feed(1, &p, FBW_OK);
    respond(FBW_OP_RESPONSE, 0);
    cr_assert_eq(s.packets, 8);
    cr_assert_eq(s.answering[1], FBW_OP_COMPILE);
    cr_assert_eq(s.answering[3], FBW_OP_START_AND_RECEIVE);
    cr_assert_eq(s.answering[4], FBW_OP_START_AND_RECEIVE, "op_send answers the receive");
    cr_assert_eq(s.answering[5], FBW_OP_START_AND_RECEIVE);
    cr_assert_eq(s.answering[7], FBW_OP_SEND, "the receive's reply ended with messages = 0");
    cr_assert_eq(s.msgs[4].n, sizeof row_a);
    cr_assert_eq(s.msgs[5].n, sizeof row_b);
    cr_assert_eq(s.msgs[6].n, sizeof short_msg);

    /* the rows decode with message 0's format: a C string of 6 is a VARCHAR of 5 */
    fbw_col c[2];
    fbw_msgfmt f = {c, 0, 2};
    fbw_blr_msgdecl d[2];
    unsigned n;
    fbw_err err;
    cr_assert_eq(fbw_blr_request_scan(req_blr, sizeof req_blr, d, 2, &n, &err), FBW_OK);
    cr_assert_eq(fbw_blr_request_fields(req_blr, sizeof req_blr, &d[0], &f, &err), FBW_OK);
    fbw_value v[2];
    fbw_bytes row = {s.first_row, s.msgs[4].n};
    cr_assert_eq(fbw_msg_decode_plain(row, &f, v, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(v[0].u.i64, 1);
    cr_assert(v[1].u.bytes.n == 3 && !memcmp(v[1].u.bytes.p, "abc", 3));

    /* released: its messages have no format any more */
    fbw_pkt rel = {.op = FBW_OP_RELEASE};
    rel.u.rlse.object = 5;
    feed(1, &rel, FBW_OK);
    respond(FBW_OP_RESPONSE, 0);
    data_pkt(&p, FBW_OP_SEND, 5, 1, 1, short_msg, sizeof short_msg);
    feed(1, &p, FBW_E_UNSUPPORTED);
    cr_assert(strstr(fbw_dec_error(g_dec)->msg, "no message format known for request 5"), "%s",
              fbw_dec_error(g_dec)->msg);
    fbw_dec_free(g_dec);
}

Test(dec, a_request_blr_it_cannot_walk_says_why_at_its_messages)
{
    req_seen s;
    memset(&s, 0, sizeof s);
    cr_assert_eq(fbw_dec_new(on_req_packet, &s, &g_dec), FBW_OK);
    static const uint8_t bad[] = {4, 2, 4, 0, 1, 0, 99, 0};
    fbw_pkt p = {.op = FBW_OP_COMPILE};
    p.u.ddl.blr = (fbw_bytes){bad, sizeof bad};
    feed(1, &p, FBW_OK); /* the op_compile itself frames */
    respond(FBW_OP_RESPONSE, 6);
    data_pkt(&p, FBW_OP_RECEIVE, 6, 0, 10, NULL, 0);
    feed(1, &p, FBW_OK); /* so does a receive: it has no message */
    data_pkt(&p, FBW_OP_SEND, 6, 0, 0, short_msg, sizeof short_msg);
    feed(0, &p, FBW_E_UNSUPPORTED);
    cr_assert(strstr(fbw_dec_error(g_dec)->msg,
                     "request 6: request BLR not understood at offset 6: message field type byte 99"),
              "%s", fbw_dec_error(g_dec)->msg);
    cr_assert_eq(s.packets, 3);
    fbw_dec_free(g_dec);
}

/* op_slice is framed with the element of the SDL its op_get_slice sent */
Test(dec, op_slice_uses_the_sdl_of_its_get_slice)
{
    req_seen s;
    memset(&s, 0, sizeof s);
    cr_assert_eq(fbw_dec_new(on_req_packet, &s, &g_dec), FBW_OK);
    static const uint8_t sdl[] = {1, 6, 1, 8, 0, 36, 1, 8, 0, 255}; /* blr_long elements */
    fbw_pkt p = {.op = FBW_OP_GET_SLICE};
    p.u.slc.tr = 1;
    p.u.slc.length = 8;
    p.u.slc.sdl = (fbw_bytes){sdl, sizeof sdl};
    feed(1, &p, FBW_OK);
    static const uint8_t two[] = {0, 0, 0, 5, 0, 0, 0, 6};
    fbw_pkt r = {.op = FBW_OP_SLICE};
    r.u.slc.length = 8;
    r.u.slc.slice_length = 8; /* two LONG elements */
    r.u.slc.slice = (fbw_bytes){two, sizeof two};
    feed(0, &r, FBW_OK);
    cr_assert_eq(s.packets, 2);
    cr_assert_eq(s.answering[1], FBW_OP_GET_SLICE);
    /* a get_slice whose SDL does not parse: its op_slice says why */
    static const uint8_t bad[] = {1, 6, 1, 99};
    p.u.slc.sdl = (fbw_bytes){bad, sizeof bad};
    feed(1, &p, FBW_OK);
    feed(0, &r, FBW_E_UNSUPPORTED);
    cr_assert(strstr(fbw_dec_error(g_dec)->msg, "op_slice: no slice description known for op_slice: "
                                               "SDL not understood at offset 3"),
              "%s", fbw_dec_error(g_dec)->msg);
    fbw_dec_free(g_dec);
}

/* ---- op_batch_blob_stream: the stream state of each statement, carried from packet to packet ---- */

static void put_pkt(fbw_buf *out, const fbw_pkt *p)
{
    fbw_pkt_ctx ctx = {0};
    fbw_wr w;
    fbw_wr_init(&w, out);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, p), FBW_OK);
}

/* A blob stream packet of `length` stream bytes whose wire bytes are `wire` (built by hand from
 * the xdr_blob_stream layout, docs/protocol/statements.md §6.1). */
static void put_stream(fbw_buf *out, uint16_t stmt, uint32_t length, const uint8_t *wire, size_t n)
{
    fbw_pkt p = {.op = FBW_OP_BATCH_BLOB_STREAM};
    p.u.bstream.stmt = stmt;
    p.u.bstream.length = length;
    p.u.bstream.data.p = wire;
    p.u.bstream.data.n = n;
    put_pkt(out, &p);
}

static void count_packet(void *arg, int from_client, const fbw_pkt *p, size_t bytes, uint64_t ts)
{
    (void)from_client, (void)bytes, (void)ts;
    if (p->op == FBW_OP_BATCH_BLOB_STREAM)
        ++*(int *)arg;
}

Test(dec, batch_blob_stream_state_runs_on_per_statement)
{
    int streams = 0;
    cr_assert_eq(fbw_dec_new(count_packet, &streams, &g_dec), FBW_OK);
    fbw_msgfmt f = {cols, 2, 2};
    fbw_err err;
    fbw_buf blr, b;
    fbw_buf_init(&blr);
    fbw_buf_init(&b);
    cr_assert_eq(fbw_blr_build(&f, 0, 3, &blr, &err), FBW_OK, "%s", err.msg);
    fbw_pkt create = {.op = FBW_OP_BATCH_CREATE};
    create.u.batch_create.stmt = 3;
    create.u.batch_create.blr.p = blr.data;
    create.u.batch_create.blr.n = blr.len;
    create.u.batch_create.msglen = 20;
    put_pkt(&b, &create);
    /* a default BPB without isc_bpb_type: blobs without their own BPB are segmented */
    static const uint8_t bpb[] = {1};
    fbw_pkt setbpb = {.op = FBW_OP_BATCH_SET_BPB};
    setbpb.u.batch_bpb.stmt = 3;
    setbpb.u.batch_bpb.bpb.p = bpb;
    setbpb.u.batch_bpb.bpb.n = 1;
    put_pkt(&b, &setbpb);
    /* packet 1: header (blob of 7, no BPB), segment length 5, then 2 of its bytes: 20 stream bytes */
    static const uint8_t one[] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 5, 'a', 'b'};
    put_stream(&b, 3, 20, one, sizeof one);
    /* packet 2: the segment's other 3 bytes and a 1-byte gap: 4 stream bytes; only the state kept
     * from packet 1 says these are data and not the start of a header */
    static const uint8_t two[] = {'c', 'd', 'e'};
    put_stream(&b, 3, 4, two, sizeof two);
    fbw_xdr_put_u32(&(fbw_wr){&b, FBW_OK}, FBW_OP_PING);
    cr_assert_eq(fbw_dec_feed(g_dec, 1, b.data, b.len, 0), FBW_OK, "%s", fbw_dec_error(g_dec)->msg);
    cr_assert_eq(streams, 2);

    /* a statement whose op_batch_create the decoder never saw */
    fbw_buf_free(&b);
    fbw_buf_init(&b);
    put_stream(&b, 9, 20, one, sizeof one);
    cr_assert_eq(fbw_dec_feed(g_dec, 1, b.data, b.len, 0), FBW_E_UNSUPPORTED);
    cr_assert(strstr(fbw_dec_error(g_dec)->msg, "no batch known for statement 9"), "%s",
              fbw_dec_error(g_dec)->msg);
    fbw_buf_free(&b);
    fbw_buf_free(&blr);
    fbw_dec_free(g_dec);
}
