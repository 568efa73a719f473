/* SPDX-License-Identifier: MIT */
/* test_pb.c - DPB building (version 1, upgrade to version 2 past 255 bytes, item cap), op_connect
 * clumplets and multipart CNCT_specific_data, checked against the layouts in
 * docs/protocol/packets.md §6.2 / §7.2 and reassembled the way the server does
 * (getMultiPartConnectParameter). */
#include <criterion/criterion.h>

#include "feed.h"
#include "pb.h"
#include "xdr.h"

#include <string.h>

static void expect(const fbw_buf *b, const char *hex)
{
    fbw_buf want;
    fbw_buf_init(&want);
    fbw_test_hex(&want, hex);
    cr_assert_eq(fbw_buf_avail(b), want.len, "%zu bytes, want %zu", fbw_buf_avail(b), want.len);
    cr_assert_eq(memcmp(fbw_buf_head(b), want.data, want.len), 0);
    fbw_buf_free(&want);
}

/* docs/protocol/packets.md §7.2: the minimal DPB captured live after connect-phase auth */
Test(pb, minimal_attach_dpb_matches_capture)
{
    fbw_dpb d;
    fbw_dpb_init(&d);
    fbw_dpb_add_flag(&d, FBW_DPB_UTF8_FILENAME);
    fbw_dpb_add_str(&d, FBW_DPB_LC_CTYPE, "UTF8");
    fbw_dpb_add_str(&d, FBW_DPB_USER_NAME, "tester");
    fbw_dpb_add_int(&d, FBW_DPB_SQL_DIALECT, 3);
    fbw_buf out;
    fbw_buf_init(&out);
    cr_assert_eq(fbw_dpb_build(&d, &out), FBW_OK);
    expect(&out, "01 | 4D 00 | 30 04 55544638 | 1C 06 746573746572 | 3F 04 03000000");
    fbw_buf_free(&out);
    fbw_dpb_free(&d);
}

Test(pb, int_is_little_endian_twos_complement)
{
    fbw_dpb d;
    fbw_dpb_init(&d);
    fbw_dpb_add_int(&d, FBW_DPB_PROCESS_ID, -2);
    fbw_dpb_add_int(&d, FBW_DPB_PAGE_SIZE, 0x12345678);
    fbw_buf out;
    fbw_buf_init(&out);
    cr_assert_eq(fbw_dpb_build(&d, &out), FBW_OK);
    expect(&out, "01 47 04 FEFFFFFF 04 04 78563412");
    fbw_buf_free(&out);
    fbw_dpb_free(&d);
}

static void build_with_value(size_t len, fbw_buf *out)
{
    static uint8_t big[300];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)('A' + i % 26);
    fbw_dpb d;
    fbw_dpb_init(&d);
    fbw_dpb_add_str(&d, FBW_DPB_LC_CTYPE, "UTF8");
    fbw_dpb_add_bytes(&d, FBW_DPB_SPECIFIC_AUTH_DATA, big, len);
    fbw_dpb_add_flag(&d, FBW_DPB_UTF8_FILENAME);
    cr_assert_eq(fbw_dpb_build(&d, out), FBW_OK);
    fbw_dpb_free(&d);
}

Test(pb, value_of_255_stays_version1)
{
    fbw_buf out;
    fbw_buf_init(&out);
    build_with_value(255, &out);
    cr_assert_eq(out.data[0], FBW_DPB_VERSION1);
    cr_assert_eq(out.len, 1 + 6 + 2 + 255 + 2);
    cr_assert_eq(out.data[7], FBW_DPB_SPECIFIC_AUTH_DATA);
    cr_assert_eq(out.data[8], 255);
    cr_assert_eq(out.data[9], 'A');
    fbw_buf_free(&out);
}

Test(pb, value_over_255_upgrades_every_item_to_version2)
{
    fbw_buf out;
    fbw_buf_init(&out);
    build_with_value(256, &out);
    cr_assert_eq(out.data[0], FBW_DPB_VERSION2);
    /* every clumplet: tag, 4-byte little-endian length, value */
    const uint8_t *p = out.data + 1;
    cr_assert_eq(p[0], FBW_DPB_LC_CTYPE);
    cr_assert_eq(fbw_le32(p + 1), 4);
    cr_assert_eq(memcmp(p + 5, "UTF8", 4), 0);
    p += 9;
    cr_assert_eq(p[0], FBW_DPB_SPECIFIC_AUTH_DATA);
    cr_assert_eq(fbw_le32(p + 1), 256);
    cr_assert_eq(p[5], 'A');
    cr_assert_eq(p[5 + 255], (uint8_t)('A' + 255 % 26));
    p += 5 + 256;
    cr_assert_eq(p[0], FBW_DPB_UTF8_FILENAME);
    cr_assert_eq(fbw_le32(p + 1), 0);
    p += 5;
    cr_assert_eq((size_t)(p - out.data), out.len);
    fbw_buf_free(&out);
}

Test(pb, build_appends_to_existing_buffer)
{
    fbw_dpb d;
    fbw_dpb_init(&d);
    fbw_dpb_add_flag(&d, FBW_DPB_UTF8_FILENAME);
    fbw_buf out;
    fbw_buf_init(&out);
    fbw_buf_append(&out, "xy", 2);
    cr_assert_eq(fbw_dpb_build(&d, &out), FBW_OK);
    expect(&out, "7879 01 4D00");
    fbw_buf_free(&out);
    fbw_dpb_free(&d);
}

Test(pb, empty_dpb_is_just_the_version)
{
    fbw_dpb d;
    fbw_dpb_init(&d);
    fbw_buf out;
    fbw_buf_init(&out);
    cr_assert_eq(fbw_dpb_build(&d, &out), FBW_OK);
    expect(&out, "01");
    fbw_buf_free(&out);
    fbw_dpb_free(&d);
}

Test(pb, too_many_items_is_sticky_usage)
{
    fbw_dpb d;
    fbw_dpb_init(&d);
    for (int i = 0; i < FBW_PB_MAX_ITEMS; i++)
        fbw_dpb_add_int(&d, FBW_DPB_CONNECT_TIMEOUT, i);
    cr_assert_eq(d.rc, FBW_OK);
    fbw_dpb_add_flag(&d, FBW_DPB_UTF8_FILENAME);
    cr_assert_eq(d.rc, FBW_E_USAGE);
    fbw_dpb_add_str(&d, FBW_DPB_LC_CTYPE, "x");
    cr_assert_eq(d.n, FBW_PB_MAX_ITEMS);
    fbw_buf out;
    fbw_buf_init(&out);
    cr_assert_eq(fbw_dpb_build(&d, &out), FBW_E_USAGE);
    cr_assert_eq(out.len, 0, "nothing written on error");
    fbw_buf_free(&out);
    fbw_dpb_free(&d);
}

Test(pb, clumplet_limits)
{
    uint8_t v[256];
    memset(v, 'v', sizeof v);
    fbw_buf out;
    fbw_buf_init(&out);
    cr_assert_eq(fbw_pb_put_clumplet(&out, FBW_CNCT_USER_VERIFICATION, "", 0), FBW_OK);
    expect(&out, "0600");
    fbw_buf_reset(&out);
    cr_assert_eq(fbw_pb_put_clumplet(&out, FBW_CNCT_LOGIN, v, 255), FBW_OK);
    cr_assert_eq(out.len, 257);
    cr_assert_eq(out.data[1], 255);
    fbw_buf_reset(&out);
    cr_assert_eq(fbw_pb_put_clumplet(&out, FBW_CNCT_LOGIN, v, 256), FBW_E_USAGE);
    cr_assert_eq(out.len, 0);
    fbw_buf_free(&out);
}

Test(pb, clumplets_for_captured_user_id)
{
    /* the untagged part of docs/protocol/packets.md §6.3 around the specific data */
    fbw_buf out;
    fbw_buf_init(&out);
    static const uint8_t crypt[4] = {1, 0, 0, 0};
    cr_assert_eq(fbw_pb_put_clumplet(&out, FBW_CNCT_LOGIN, "tester", 6), FBW_OK);
    cr_assert_eq(fbw_pb_put_clumplet(&out, FBW_CNCT_PLUGIN_NAME, "Srp256", 6), FBW_OK);
    cr_assert_eq(fbw_pb_put_clumplet(&out, FBW_CNCT_PLUGIN_LIST, "Srp256,Srp", 10), FBW_OK);
    cr_assert_eq(fbw_pb_put_clumplet(&out, FBW_CNCT_CLIENT_CRYPT, crypt, 4), FBW_OK);
    cr_assert_eq(fbw_pb_put_clumplet(&out, FBW_CNCT_USER, "joe", 3), FBW_OK);
    cr_assert_eq(fbw_pb_put_clumplet(&out, FBW_CNCT_HOST, "ws1", 3), FBW_OK);
    cr_assert_eq(fbw_pb_put_clumplet(&out, FBW_CNCT_USER_VERIFICATION, "", 0), FBW_OK);
    expect(&out, "09 06 746573746572 08 06 537270323536 0a 0a 5372703235362c537270"
                 "0b 04 01000000 01 03 6a6f65 04 03 777331 06 00");
    fbw_buf_free(&out);
}

/* The server's reassembly: for each tag-7 clumplet, offset = seq * 254, copy data[1..]. */
static size_t reassemble(const fbw_buf *b, uint8_t *out, size_t cap, int *parts)
{
    size_t total = 0;
    *parts = 0;
    for (size_t i = 0; i < b->len;) {
        cr_assert(i + 2 <= b->len);
        uint8_t tag = b->data[i], len = b->data[i + 1];
        cr_assert_eq(tag, FBW_CNCT_SPECIFIC_DATA);
        cr_assert(len > 1 && i + 2 + len <= b->len);
        uint8_t seq = b->data[i + 2];
        cr_assert_eq(seq, *parts, "parts are numbered 0, 1, 2, ...");
        size_t off = (size_t)seq * 254, n = (size_t)len - 1;
        cr_assert(off + n <= cap);
        memcpy(out + off, b->data + i + 3, n);
        if (off + n > total)
            total = off + n;
        (*parts)++;
        i += 2 + (size_t)len;
    }
    return total;
}

static void multipart_case(size_t n, int want_parts)
{
    static uint8_t in[254 * 256 + 1], back[254 * 256 + 1];
    for (size_t i = 0; i < n; i++)
        in[i] = (uint8_t)"0123456789ABCDEF"[(i * 7) % 16];
    fbw_buf out;
    fbw_buf_init(&out);
    cr_assert_eq(fbw_pb_put_multipart(&out, FBW_CNCT_SPECIFIC_DATA, in, n), FBW_OK);
    int parts;
    size_t got = reassemble(&out, back, sizeof back, &parts);
    cr_assert_eq(parts, want_parts, "n=%zu: %d parts, want %d", n, parts, want_parts);
    cr_assert_eq(got, n);
    cr_assert(n == 0 || memcmp(back, in, n) == 0);
    fbw_buf_free(&out);
}

Test(pb, multipart_sizes)
{
    multipart_case(0, 0);
    multipart_case(1, 1);
    multipart_case(254, 1);
    multipart_case(255, 2);
    multipart_case(256, 2);
    multipart_case(508, 2);
    multipart_case(509, 3);
    multipart_case(254 * 256, 256);
}

Test(pb, multipart_255_chars_matches_capture)
{
    /* "07 ff 00 <254 chars> 07 02 01 <1 char>" (docs/protocol/packets.md §6.2, captured for a
     * 255-char A) */
    char a[255];
    memset(a, 'F', sizeof a);
    fbw_buf out;
    fbw_buf_init(&out);
    cr_assert_eq(fbw_pb_put_multipart(&out, FBW_CNCT_SPECIFIC_DATA, a, sizeof a), FBW_OK);
    cr_assert_eq(out.len, 3 + 254 + 3 + 1);
    cr_assert_eq(memcmp(out.data, "\x07\xff\x00", 3), 0);
    cr_assert_eq(memcmp(out.data + 257, "\x07\x02\x01" "F", 4), 0);
    fbw_buf_free(&out);
}

Test(pb, multipart_over_256_parts_is_usage)
{
    static uint8_t in[254 * 256 + 1];
    fbw_buf out;
    fbw_buf_init(&out);
    cr_assert_eq(fbw_pb_put_multipart(&out, FBW_CNCT_SPECIFIC_DATA, in, sizeof in), FBW_E_USAGE);
    cr_assert_eq(out.len, 0);
    fbw_buf_free(&out);
}
