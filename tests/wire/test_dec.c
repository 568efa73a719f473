/* SPDX-License-Identifier: MIT */
/* test_dec.c - the session decoder's fbw_dec_message_format(): during the callback for an
 * op_execute the format its message was framed with (from its BLR, or the statement's previous
 * one when the BLR is empty), NULL for packets without an input message. The replay of
 * fbwire-pcap decodes captured parameters with it. */
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
