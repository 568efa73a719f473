/* SPDX-License-Identifier: MIT */
/* test_svc.c - the services API's encoding and decoding (wire/svc.h), against bytes fbclient and a
 * Firebird 3 server exchanged (pcap/fb3_svc_stats.pcap): start SPBs, the attach SPB's two versions,
 * the timeout send items inside an op_service_info packet, reply items, the meaning of an output
 * reply (DATA, TIMEOUT, EOF); truncated and unknown items are clear errors, never reads past the end. */
#include <criterion/criterion.h>

#include "feed.h"
#include "pb.h"
#include "pkt.h"
#include "svc.h"

#include <stdlib.h>
#include <string.h>

static void expect(const uint8_t *p, size_t n, const char *hex)
{
    fbw_buf want;
    fbw_buf_init(&want);
    fbw_test_hex(&want, hex);
    cr_assert_eq(n, want.len, "%zu bytes, want %zu", n, want.len);
    cr_assert_eq(memcmp(p, want.data, want.len), 0);
    fbw_buf_free(&want);
}

/* fbsvcmgr's db_stats start: action 11, isc_spb_dbname with a 2-byte length, isc_spb_options as
 * 4 bytes (the capture's, with another path) */
Test(svc, db_stats_spb_layout)
{
    fbw_spb s;
    fbw_spb_init(&s, FBW_SVC_ACTION_DB_STATS);
    fbw_spb_add_str(&s, FBW_SPB_DBNAME, "/db/x.fdb");
    fbw_spb_add_int(&s, FBW_SPB_OPTIONS, FBW_SPB_STS_HDR_PAGES);
    cr_assert_eq(s.rc, FBW_OK);
    expect(s.buf.data, s.buf.len, "0b | 6a 0900 2f64622f782e666462 | 6c 04000000");
    fbw_spb_free(&s);
}

Test(svc, trace_spbs_and_small_values)
{
    fbw_spb s;
    fbw_spb_init(&s, FBW_SVC_ACTION_TRACE_START);
    fbw_spb_add_str(&s, FBW_SPB_TRC_NAME, "t");
    fbw_spb_add_str(&s, FBW_SPB_TRC_CFG, "ab");
    fbw_spb_add_byte(&s, 9, 0x7f);
    fbw_spb_add_flag(&s, 0x20);
    fbw_spb_add_bytes(&s, 0x21, "", 0);
    expect(s.buf.data, s.buf.len, "16 | 02 0100 74 | 03 0200 6162 | 09 7f | 20 | 21 0000");
    fbw_spb_free(&s);
    fbw_spb_init(&s, FBW_SVC_ACTION_TRACE_STOP);
    fbw_spb_add_int(&s, FBW_SPB_TRC_ID, 0x01020304);
    expect(s.buf.data, s.buf.len, "17 | 01 04030201");
    fbw_spb_free(&s);
}

/* A value past the 2-byte length makes the SPB unusable (sticky), and nothing more is added. */
Test(svc, spb_overlong_value_is_sticky)
{
    static char big[70000];
    memset(big, 'a', sizeof big - 1);
    fbw_spb s;
    fbw_spb_init(&s, FBW_SVC_ACTION_DB_STATS);
    fbw_spb_add_str(&s, FBW_SPB_DBNAME, big);
    cr_assert_eq(s.rc, FBW_E_USAGE);
    size_t n = s.buf.len;
    fbw_spb_add_int(&s, FBW_SPB_OPTIONS, 1);
    fbw_spb_add_flag(&s, 1);
    cr_assert_eq(s.buf.len, n);
    cr_assert_eq(s.rc, FBW_E_USAGE);
    fbw_spb_free(&s);
}

/* The attach SPB: version 2 (2, 2 and 1-byte lengths) as in the capture, version 3 with 4-byte
 * lengths once a value passes 255 bytes. */
Test(svc, attach_spb_versions)
{
    fbw_dpb d;
    fbw_dpb_init(&d);
    fbw_dpb_add_str(&d, FBW_SPB_USER_NAME, "SYSDBA");
    fbw_dpb_add_flag(&d, FBW_SPB_UTF8_FILENAME);
    fbw_buf out;
    fbw_buf_init(&out);
    cr_assert_eq(fbw_spb_attach_build(&d, &out), FBW_OK);
    expect(out.data, out.len, "02 02 | 1c 06 535953444241 | 76 00");
    uint8_t key[300];
    memset(key, 0x41, sizeof key);
    fbw_dpb_add_bytes(&d, FBW_SPB_SPECIFIC_AUTH_DATA, key, sizeof key);
    fbw_buf_reset(&out);
    cr_assert_eq(fbw_spb_attach_build(&d, &out), FBW_OK);
    cr_assert_eq(out.len, 1 + 5 + 6 + 5 + 5 + 300);
    expect(out.data, 18, "03 | 1c 06000000 535953444241 | 76 00000000 | 6f");
    expect(out.data + 18, 4, "2c010000");
    fbw_buf_free(&out);
    fbw_dpb_free(&d);
}

/* fbsvcmgr's read of the output, byte for byte: op_service_info with "wait 1 s" and
 * isc_info_end as send items, line + stdin as receive items, a 16 KiB buffer. */
Test(svc, query_packet_matches_capture)
{
    uint8_t send[FBW_SVC_TIMEOUT_ITEMS_LEN];
    cr_assert_eq(fbw_svc_timeout_items(send, 1), sizeof send);
    static const uint8_t recv[] = {FBW_INFO_SVC_LINE, FBW_INFO_SVC_STDIN};
    fbw_pkt p = {.op = FBW_OP_SERVICE_INFO};
    p.u.info.items.p = send;
    p.u.info.items.n = sizeof send;
    p.u.info.recv_items.p = recv;
    p.u.info.recv_items.n = sizeof recv;
    p.u.info.buffer_length = 16384;
    fbw_buf mem;
    fbw_buf_init(&mem);
    fbw_wr w;
    fbw_wr_init(&w, &mem);
    fbw_pkt_ctx ctx = {.protocol = 15};
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, &p), FBW_OK);
    expect(mem.data, mem.len,
           "00000054 00000000 00000000 00000008 4004000100000001 00000002 3e4e0000 00004000");
    fbw_buf_free(&mem);
}

/* The capture's replies: a line of one blank, stdin 0, end; then the server's timeout marker. */
Test(svc, reply_items_from_capture)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, "3e 0100 20 | 4e 00000000 | 01");
    fbw_svc_reader r;
    fbw_svc_item it;
    fbw_err err;
    fbw_svc_reader_init(&r, b.data, b.len);
    cr_assert_eq(fbw_svc_next(&r, &it, &err), FBW_OK);
    cr_assert_eq(it.tag, FBW_INFO_SVC_LINE);
    cr_assert_eq(it.kind, FBW_SVC_ITEM_BYTES);
    cr_assert_eq(it.len, 1);
    cr_assert_eq(it.data[0], ' ');
    cr_assert_eq(fbw_svc_next(&r, &it, &err), FBW_OK);
    cr_assert_eq(it.tag, FBW_INFO_SVC_STDIN);
    cr_assert_eq(it.kind, FBW_SVC_ITEM_INT);
    cr_assert_eq(it.value, 0);
    cr_assert_eq(fbw_svc_next(&r, &it, &err), FBW_AGAIN);
    cr_assert_eq(fbw_svc_next(&r, &it, &err), FBW_AGAIN, "the end stays the end");

    fbw_svc_output o;
    const uint8_t *t;
    size_t n;
    cr_assert_eq(fbw_svc_output_parse(b.data, b.len, FBW_INFO_SVC_LINE, &o, &t, &n, &err), FBW_OK,
                 "%s", err.msg);
    cr_assert_eq(o, FBW_SVC_OUT_DATA);
    cr_assert_eq(n, 1);
    fbw_buf_free(&b);
}

static fbw_svc_output output_of(const char *hex, uint8_t item)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, hex);
    fbw_svc_output o = FBW_SVC_OUT_DATA;
    const uint8_t *t;
    size_t n;
    fbw_err err;
    cr_assert_eq(fbw_svc_output_parse(b.data, b.len, item, &o, &t, &n, &err), FBW_OK, "%s: %s", hex,
                 err.msg);
    cr_assert_eq(n, 0, "%s", hex);
    fbw_buf_free(&b);
    return o;
}

/* The server's rule (Service::query2): an empty text with the timeout or not-ready marker means
 * none yet, an empty to_eof chunk marked truncated means more will come, an empty text alone
 * means the service has finished. */
Test(svc, output_meaning)
{
    cr_assert_eq(output_of("3e 0000 | 40 | 01", FBW_INFO_SVC_LINE), FBW_SVC_OUT_TIMEOUT);
    cr_assert_eq(output_of("3e 0000 | 04 | 01", FBW_INFO_SVC_LINE), FBW_SVC_OUT_TIMEOUT);
    cr_assert_eq(output_of("3f 0000 | 02 | 01", FBW_INFO_SVC_TO_EOF), FBW_SVC_OUT_TIMEOUT);
    cr_assert_eq(output_of("3e 0000 | 01", FBW_INFO_SVC_LINE), FBW_SVC_OUT_EOF);
    cr_assert_eq(output_of("3e 0000", FBW_INFO_SVC_LINE), FBW_SVC_OUT_EOF);
    cr_assert_eq(output_of("3f 0000 | 4e 00000000 | 01", FBW_INFO_SVC_TO_EOF), FBW_SVC_OUT_EOF);
}

static void bad(const char *hex, uint8_t item, const char *says)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_test_hex(&b, hex);
    /* a copy of exactly the reply's length, so a read past it is a read past a heap block */
    uint8_t *p = b.len ? malloc(b.len) : NULL;
    if (b.len)
        memcpy(p, b.data, b.len);
    fbw_svc_output o;
    const uint8_t *t;
    size_t n;
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_svc_output_parse(p, b.len, item, &o, &t, &n, &err), FBW_E_BADVALUE, "%s", hex);
    cr_assert(strstr(err.msg, says) != NULL, "%s: \"%s\" lacks \"%s\"", hex, err.msg, says);
    free(p);
    fbw_buf_free(&b);
}

Test(svc, bad_replies_are_clear_errors)
{
    bad("3e 0500 6162", FBW_INFO_SVC_LINE, "item 62 at byte 0 is truncated");
    bad("3e 01", FBW_INFO_SVC_LINE, "truncated");
    bad("3e 0000 | 4e 0000", FBW_INFO_SVC_LINE, "item 78 at byte 3 is truncated");
    bad("99 0000 01", FBW_INFO_SVC_LINE, "item 153 at byte 0 has no layout known here");
    bad("37 0200 6869 | 01", FBW_INFO_SVC_LINE, "unexpected item 55");
    bad("01", FBW_INFO_SVC_LINE, "lacks item 62");
    bad("", FBW_INFO_SVC_LINE, "lacks item 62");
    bad("3f 0000 | 01", FBW_INFO_SVC_LINE, "unexpected item 63");
}
