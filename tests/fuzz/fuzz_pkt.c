/* SPDX-License-Identifier: MIT */
/* fuzz_pkt.c - libFuzzer target: decode a stream of packets at protocols 10, 13, 16 and 19 with a
 * fixed message format for data-bearing packets and a fresh batch blob stream for every
 * op_batch_blob_stream (segmented by default at 16, stream at 19). Every decoded packet must re-encode, and its
 * re-encoding must decode to a packet that re-encodes to the same bytes (encoder and decoder agree
 * on every layout the decoder accepts). Crashes, over-reads (the input is copied to end at a guard
 * page) and sanitizer reports are the findings. */
#include "feed.h"
#include "msg.h"
#include "pkt.h"

#include <stdlib.h>
#include <string.h>

static fbw_col cols[5] = {
    {.type = FBW_SQL_LONG, .length = 4},
    {.type = FBW_SQL_VARYING, .length = 20, .charset = FBW_CS_UTF8},
    {.type = FBW_SQL_INT64, .length = 8},
    {.type = FBW_SQL_TEXT, .length = 3, .charset = FBW_CS_OCTETS},
    {.type = FBW_SQL_TIMESTAMP, .length = 8},
};
static const fbw_msgfmt fmt = {cols, 5, 5};
static const fbw_msgfmt elem = {cols, 1, 1}; /* op_slice: one element column */

static const fbw_msgfmt *fmt_cb(void *arg, enum fbw_fmt_kind kind, const fbw_pkt *p, fbw_err *err)
{
    (void)arg, (void)p, (void)err;
    return kind == FBW_FMT_SLICE ? &elem : &fmt;
}

static fbw_bstream streams[2];

static const fbw_bstream *stream_cb(void *arg, uint16_t stmt, fbw_err *err)
{
    (void)stmt, (void)err;
    return arg;
}

static void check_reencode(const fbw_pkt_ctx *ctx, const fbw_pkt *pk)
{
    fbw_buf a, b;
    fbw_buf_init(&a);
    fbw_buf_init(&b);
    fbw_wr w;
    fbw_wr_init(&w, &a);
    if (fbw_pkt_encode(ctx, &w, pk) != FBW_OK)
        abort(); /* every decodable op has an encoder */
    fbw_pkt again;
    size_t used = 0;
    fbw_err err;
    fbw_err_clear(&err);
    if (fbw_pkt_decode(ctx, a.data, a.len, &again, &used, &err) != FBW_OK || used != a.len)
        abort(); /* the encoder wrote something the decoder rejects */
    fbw_wr_init(&w, &b);
    if (fbw_pkt_encode(ctx, &w, &again) != FBW_OK || b.len != a.len || memcmp(a.data, b.data, a.len) != 0)
        abort(); /* not a fixed point */
    fbw_buf_free(&a);
    fbw_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int protocols[] = {10, 13, 16, 19};
    fbw_bstream_init(&streams[0], FBW_BSTREAM_ALIGN);
    streams[0].default_segmented = 1;
    fbw_bstream_init(&streams[1], FBW_BSTREAM_ALIGN);
    fbw_guard g;
    fbw_guard_init(&g, size);
    const uint8_t *p = fbw_guard_place(&g, data, size);
    for (size_t i = 0; i < sizeof protocols / sizeof *protocols; i++) {
        fbw_pkt_ctx ctx = {protocols[i], fmt_cb, NULL, stream_cb};
        ctx.arg = &streams[protocols[i] >= 19];
        size_t off = 0;
        while (off < size) {
            fbw_pkt pk;
            size_t used = 0;
            fbw_err err;
            fbw_err_clear(&err);
            int rc = fbw_pkt_decode(&ctx, p + off, size - off, &pk, &used, &err);
            if (rc != FBW_OK)
                break;
            if (used == 0 || used > size - off)
                abort();
            check_reencode(&ctx, &pk);
            off += used;
        }
    }
    fbw_guard_free(&g);
    return 0;
}
