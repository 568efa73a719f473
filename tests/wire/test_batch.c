/* SPDX-License-Identifier: MIT */
/* test_batch.c - the batch codecs without a server: the batch parameter block bytes, and the
 * op_batch_cs completion state (through the real packet encoder and decoder, every strict prefix of
 * its detail, named corruptions, per-message states, error lookup). */
#include <criterion/criterion.h>

#include "batch.h"
#include "feed.h"
#include "request.h"
#include "status.h"

#include <string.h>

#define GDS_UNIQUE 335544665u

/* ---- parameter block ---- */

Test(batch, pb_defaults)
{
    fbw_batch_opts o;
    fbw_batch_opts_init(&o);
    fbw_buf b;
    fbw_buf_init(&b);
    cr_assert_eq(fbw_batch_pb_build(&o, &b), FBW_OK);
    /* IBatch::VERSION1, TAG_RECORD_COUNTS (2) with a 4-byte LE length and value 1 */
    const uint8_t want[] = {1, 2, 4, 0, 0, 0, 1, 0, 0, 0};
    cr_assert_eq(b.len, sizeof want);
    cr_assert_arr_eq(b.data, want, sizeof want);
    fbw_buf_free(&b);
}

Test(batch, pb_all_tags)
{
    fbw_batch_opts o;
    fbw_batch_opts_init(&o);
    o.multierror = 1;
    o.buffer_bytes = 0x01020304;
    o.detailed_errors = 200;
    fbw_buf b;
    fbw_buf_init(&b);
    cr_assert_eq(fbw_batch_pb_build(&o, &b), FBW_OK);
    const uint8_t want[] = {1,
                            1, 4, 0, 0, 0, 1, 0, 0, 0,
                            2, 4, 0, 0, 0, 1, 0, 0, 0,
                            3, 4, 0, 0, 0, 4, 3, 2, 1,
                            5, 4, 0, 0, 0, 200, 0, 0, 0};
    cr_assert_eq(b.len, sizeof want);
    cr_assert_arr_eq(b.data, want, sizeof want);
    o.record_counts = 0;
    o.multierror = 0;
    o.buffer_bytes = o.detailed_errors = 0;
    fbw_buf_reset(&b);
    cr_assert_eq(fbw_batch_pb_build(&o, &b), FBW_OK);
    cr_assert_eq(b.len, 1); /* version only: every tag at the server's default */
    fbw_buf_free(&b);
}

/* ---- completion state ---- */

/* reccount 6: counts 1,1,-1,1,-1,1; message 2 with a full vector, message 4 bare */
typedef struct cs_bytes {
    fbw_buf detail;
    fbw_pkt p;
} cs_bytes;

static void make_cs(cs_bytes *c, uint32_t reccount, int with_counts)
{
    fbw_buf_init(&c->detail);
    fbw_wr w;
    fbw_wr_init(&w, &c->detail);
    static const int32_t counts[] = {1, 1, -1, 1, -1, 1};
    if (with_counts)
        for (int i = 0; i < 6; i++)
            fbw_xdr_put_i32(&w, counts[i]);
    fbw_xdr_put_u32(&w, 2);
    const fbw_status_arg a[] = {{FBW_ARG_GDS, GDS_UNIQUE, NULL}, {FBW_ARG_STRING, 0, "PK_T"},
                                {FBW_ARG_STRING, 0, "T"}, {FBW_ARG_SQL_STATE, 0, "23000"}};
    fbw_status_encode(&w, a, 4);
    fbw_xdr_put_u32(&w, 4);
    cr_assert_eq(w.rc, FBW_OK);
    memset(&c->p, 0, sizeof c->p);
    c->p.op = FBW_OP_BATCH_CS;
    c->p.u.batch_cs.stmt = 3;
    c->p.u.batch_cs.reccount = reccount;
    c->p.u.batch_cs.updates = with_counts ? 6 : 0;
    c->p.u.batch_cs.vectors = 1;
    c->p.u.batch_cs.errors = 1;
    c->p.u.batch_cs.detail.p = c->detail.data;
    c->p.u.batch_cs.detail.n = c->detail.len;
}

static void check_cs(const fbw_batch_cs *cs)
{
    cr_assert_eq(cs->reccount, 6);
    cr_assert_eq(cs->nupdates, 6);
    cr_assert_eq(cs->nerrors, 2);
    static const int32_t want[] = {1, 1, -1, 1, -1, 1};
    for (uint32_t i = 0; i < 6; i++)
        cr_assert_eq(fbw_batch_cs_state(cs, i), want[i], "message %u", i);
    cr_assert_eq(fbw_batch_cs_state(cs, 6), FBW_BATCH_NOT_EXECUTED);
    uint32_t pos;
    fbw_err err;
    cr_assert_eq(fbw_batch_cs_error_at(cs, 0, &pos, &err), FBW_E_SERVER);
    cr_assert_eq(pos, 2);
    cr_assert_eq(err.gds[0], GDS_UNIQUE);
    cr_assert_str_eq(err.sqlstate, "23000");
    cr_assert(strstr(err.msg, "PK_T"), "%s", err.msg);
    cr_assert_eq(fbw_batch_cs_error_at(cs, 1, &pos, &err), FBW_E_SERVER);
    cr_assert_eq(pos, 4);
    cr_assert(strstr(err.msg, "no detail"), "%s", err.msg);
    cr_assert_eq(fbw_batch_cs_error_at(cs, 2, &pos, &err), FBW_E_USAGE);
}

Test(batch, cs_parse)
{
    cs_bytes c;
    make_cs(&c, 6, 1);
    fbw_batch_cs cs;
    fbw_err err;
    cr_assert_eq(fbw_batch_cs_parse(&c.p, &cs, &err), FBW_OK, "%s", err.msg);
    check_cs(&cs);
    fbw_buf_free(&c.detail); /* the completion state owns a copy */
    check_cs(&cs);
    fbw_batch_cs_free(&cs);
    cr_assert_null(cs.updates);
}

/* The live path: bytes from the packet encoder, framed by the packet decoder, then parsed. */
Test(batch, cs_through_packet_codec)
{
    cs_bytes c;
    make_cs(&c, 6, 1);
    fbw_pkt_ctx ctx = {.protocol = 17};
    fbw_buf wire;
    fbw_buf_init(&wire);
    fbw_wr w;
    fbw_wr_init(&w, &wire);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, &c.p), FBW_OK);
    fbw_guard g;
    fbw_guard_init(&g, wire.len);
    for (size_t k = 0; k < wire.len; k++) { /* a growing stream: every prefix waits */
        fbw_pkt d;
        size_t used = 0;
        fbw_err err;
        cr_assert_eq(fbw_pkt_decode(&ctx, fbw_guard_place(&g, wire.data, k), k, &d, &used, &err),
                     FBW_AGAIN, "prefix %zu", k);
    }
    fbw_pkt d;
    size_t used = 0;
    fbw_err err;
    cr_assert_eq(fbw_pkt_decode(&ctx, fbw_guard_place(&g, wire.data, wire.len), wire.len, &d, &used, &err),
                 FBW_OK, "%s", err.msg);
    cr_assert_eq(used, wire.len);
    cr_assert_eq(d.u.batch_cs.detail.n, c.detail.len);
    fbw_batch_cs cs;
    cr_assert_eq(fbw_batch_cs_parse(&d, &cs, &err), FBW_OK, "%s", err.msg);
    check_cs(&cs);
    fbw_batch_cs_free(&cs);
    fbw_guard_free(&g);
    fbw_buf_free(&wire);
    fbw_buf_free(&c.detail);
}

Test(batch, cs_without_record_counts)
{
    cs_bytes c;
    make_cs(&c, 6, 0);
    fbw_batch_cs cs;
    fbw_err err;
    cr_assert_eq(fbw_batch_cs_parse(&c.p, &cs, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(cs.nupdates, 0);
    cr_assert_eq(fbw_batch_cs_state(&cs, 0), FBW_BATCH_SUCCESS_NO_INFO);
    cr_assert_eq(fbw_batch_cs_state(&cs, 2), FBW_BATCH_EXECUTE_FAILED);
    cr_assert_eq(fbw_batch_cs_state(&cs, 4), FBW_BATCH_EXECUTE_FAILED);
    cr_assert_eq(fbw_batch_cs_state(&cs, 5), FBW_BATCH_SUCCESS_NO_INFO);
    fbw_batch_cs_free(&cs);
    fbw_buf_free(&c.detail);
}

Test(batch, cs_empty)
{
    fbw_pkt p = {.op = FBW_OP_BATCH_CS};
    fbw_batch_cs cs;
    fbw_err err;
    cr_assert_eq(fbw_batch_cs_parse(&p, &cs, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(cs.reccount, 0);
    cr_assert_eq(fbw_batch_cs_state(&cs, 0), FBW_BATCH_NOT_EXECUTED);
    fbw_batch_cs_free(&cs);
}

/* The detail is a complete buffer: with the counts unchanged, every strict prefix is malformed. */
Test(batch, cs_every_prefix)
{
    cs_bytes c;
    make_cs(&c, 6, 1);
    fbw_guard g;
    fbw_guard_init(&g, c.detail.len);
    for (size_t k = 0; k < c.detail.len; k++) {
        fbw_pkt p = c.p;
        p.u.batch_cs.detail.p = fbw_guard_place(&g, c.detail.data, k);
        p.u.batch_cs.detail.n = k;
        fbw_batch_cs cs;
        fbw_err err;
        cr_assert_eq(fbw_batch_cs_parse(&p, &cs, &err), FBW_E_BADVALUE, "prefix %zu", k);
        cr_assert_null(cs.updates, "prefix %zu left memory behind", k);
    }
    fbw_guard_free(&g);
    fbw_buf_free(&c.detail);
}

static void expect_bad(const fbw_pkt *p, const char *needle)
{
    fbw_batch_cs cs;
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_batch_cs_parse(p, &cs, &err), FBW_E_BADVALUE, "expected failure: %s", needle);
    cr_assert(strstr(err.msg, needle), "\"%s\" not in \"%s\"", needle, err.msg);
    cr_assert_null(cs.errors);
}

Test(batch, cs_corruptions)
{
    cs_bytes c;
    make_cs(&c, 6, 1);
    fbw_pkt p = c.p;
    p.u.batch_cs.reccount = 5; /* 6 counts for 5 messages */
    expect_bad(&p, "6 update counts for 5 messages");

    p = c.p;
    p.u.batch_cs.updates = 0; /* the counts are read as a vector at position 1, of 1 message */
    p.u.batch_cs.reccount = 1;
    expect_bad(&p, "status position out of range for vector 0 at detail offset 4");

    p = c.p;
    p.u.batch_cs.vectors = 1u << 20; /* more vectors than bytes could hold: refused before allocating */
    expect_bad(&p, "counts need at least");

    p = c.p;
    p.u.batch_cs.errors = 0; /* the bare position is left over */
    expect_bad(&p, "left over");

    fbw_buf bad;
    fbw_buf_init(&bad);
    fbw_buf_append(&bad, c.detail.data, c.detail.len);
    p = c.p;
    p.u.batch_cs.detail.p = bad.data;
    p.u.batch_cs.detail.n = bad.len;
    bad.data[bad.len - 1] = 6; /* bare position 6 of 6 messages */
    expect_bad(&p, "error position out of range");
    bad.data[bad.len - 1] = 4;
    bad.data[6 * 4 + 3] = 9; /* vector position 9 */
    expect_bad(&p, "status position out of range");
    bad.data[6 * 4 + 3] = 2;
    bad.data[6 * 4 + 4 + 3] = 42; /* first status arg type */
    expect_bad(&p, "bad status vector");
    fbw_buf_free(&bad);

    fbw_pkt q = {.op = FBW_OP_RESPONSE};
    fbw_batch_cs cs;
    fbw_err err;
    cr_assert_eq(fbw_batch_cs_parse(&q, &cs, &err), FBW_E_USAGE);
    fbw_buf_free(&c.detail);
}
