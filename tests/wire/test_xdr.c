/* SPDX-License-Identifier: MIT */
/* test_xdr.c - bounded XDR reader (sticky errors, short_rc, fixupLength, caps) and writer
 * (sign-extended shorts, padding), including reads that end exactly at a guard page. */
#include <criterion/criterion.h>

#include "feed.h"
#include "xdr.h"

#include <string.h>

static const uint8_t be[] = {0x01, 0x02, 0x03, 0x04, 0xFF, 0xFF, 0x80, 0x0D,
                             0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05};

Test(xdr, integers_big_endian)
{
    fbw_rd r;
    fbw_rd_init(&r, be, sizeof be, FBW_E_PROTO);
    cr_assert_eq(fbw_xdr_u32(&r), 0x01020304u);
    cr_assert_eq(fbw_xdr_u16(&r), 0x800D, "xdr_short keeps the low 16 bits of FF FF 80 0D");
    cr_assert_eq(fbw_xdr_i32(&r), INT32_MIN);
    cr_assert_eq(fbw_xdr_i32(&r), 5);
    cr_assert_eq(r.rc, FBW_OK);
    cr_assert_eq(fbw_rd_offset(&r), 16);
    cr_assert_eq(fbw_rd_left(&r), 0);
}

Test(xdr, hyper_high_word_first)
{
    static const uint8_t h[] = {0xFF, 0xFF, 0xFF, 0xFE, 0x00, 0x00, 0x00, 0x01};
    fbw_rd r;
    fbw_rd_init(&r, h, sizeof h, FBW_E_PROTO);
    cr_assert_eq(fbw_xdr_i64(&r), (int64_t)0xFFFFFFFE00000001ull);
    cr_assert_eq(r.rc, FBW_OK);
}

Test(xdr, shortfall_uses_short_rc)
{
    fbw_rd r;
    fbw_rd_init(&r, be, 3, FBW_AGAIN);
    cr_assert_eq(fbw_xdr_u32(&r), 0);
    cr_assert_eq(r.rc, FBW_AGAIN);
    fbw_rd_init(&r, be, 3, FBW_E_PROTO);
    cr_assert_eq(fbw_xdr_u32(&r), 0);
    cr_assert_eq(r.rc, FBW_E_PROTO);
    cr_assert_not_null(r.what);
}

Test(xdr, errors_are_sticky_and_first_wins)
{
    fbw_rd r;
    fbw_rd_init(&r, be, sizeof be, FBW_AGAIN);
    fbw_xdr_skip(&r, 17); /* one past the end */
    cr_assert_eq(r.rc, FBW_AGAIN);
    const char *first = r.what;
    /* every later getter yields zero/empty even though bytes would be there from the start */
    cr_assert_eq(fbw_xdr_u32(&r), 0);
    fbw_bytes b = fbw_xdr_raw(&r, 1);
    cr_assert_null(b.p);
    cr_assert_eq(b.n, 0);
    cr_assert_eq(fbw_rd_fail(&r, FBW_E_PROTO, "later"), FBW_AGAIN);
    cr_assert_eq(r.what, first);
    cr_assert_eq(fbw_rd_left(&r), 0, "a failed reader is positioned at its end");
}

Test(xdr, fail_on_fresh_reader_stops_reads)
{
    fbw_rd r;
    fbw_rd_init(&r, be, sizeof be, FBW_AGAIN);
    cr_assert_eq(fbw_rd_fail(&r, FBW_E_BADVALUE, "bad"), FBW_E_BADVALUE);
    cr_assert_str_eq(r.what, "bad");
    cr_assert_eq(fbw_xdr_u32(&r), 0);
    cr_assert_eq(r.rc, FBW_E_BADVALUE);
}

static void put_len(fbw_buf *b, uint32_t n)
{
    fbw_wr w;
    fbw_wr_init(&w, b);
    fbw_xdr_put_u32(&w, n);
}

Test(xdr, bytes_with_padding)
{
    static const uint8_t in[] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0, 0, 0, 0xAA};
    fbw_rd r;
    fbw_rd_init(&r, in, sizeof in, FBW_E_PROTO);
    fbw_bytes b = fbw_xdr_bytes(&r, 100);
    cr_assert_eq(r.rc, FBW_OK);
    cr_assert_eq(b.n, 5);
    cr_assert_eq(memcmp(b.p, "hello", 5), 0);
    cr_assert_eq(fbw_rd_offset(&r), 12, "padding to 4 consumed");
}

Test(xdr, bytes_missing_padding_is_a_shortfall)
{
    static const uint8_t in[] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0, 0};
    fbw_rd r;
    fbw_rd_init(&r, in, sizeof in, FBW_AGAIN);
    fbw_bytes b = fbw_xdr_bytes(&r, 100);
    cr_assert_eq(r.rc, FBW_AGAIN);
    cr_assert_null(b.p);
}

Test(xdr, bytes_empty)
{
    static const uint8_t in[] = {0, 0, 0, 0};
    fbw_rd r;
    fbw_rd_init(&r, in, sizeof in, FBW_E_PROTO);
    fbw_bytes b = fbw_xdr_bytes(&r, 0);
    cr_assert_eq(r.rc, FBW_OK);
    cr_assert_eq(b.n, 0);
    cr_assert_eq(fbw_rd_left(&r), 0);
}

Test(xdr, fixup_length_sign_extended_16bit)
{
    fbw_buf b;
    fbw_buf_init(&b);
    put_len(&b, 0xFFFF0010u);
    uint8_t body[16];
    for (int i = 0; i < 16; i++)
        body[i] = (uint8_t)i;
    fbw_buf_append(&b, body, sizeof body);
    fbw_rd r;
    fbw_rd_init(&r, b.data, b.len, FBW_E_PROTO);
    fbw_bytes v = fbw_xdr_bytes(&r, 16);
    cr_assert_eq(r.rc, FBW_OK, "%s", r.what ? r.what : "");
    cr_assert_eq(v.n, 16);
    cr_assert_eq(memcmp(v.p, body, 16), 0);
    fbw_buf_free(&b);
}

Test(xdr, fixup_length_32k)
{
    /* 0x8000 sent through xdr_short by an old peer arrives as FF FF 80 00 */
    fbw_buf b;
    fbw_buf_init(&b);
    put_len(&b, 0xFFFF8000u);
    fbw_rd r;
    fbw_rd_init(&r, b.data, b.len, FBW_AGAIN);
    (void)fbw_xdr_bytes(&r, 0x8000);
    cr_assert_eq(r.rc, FBW_AGAIN, "length 32768 within max: waits for the bytes");
    fbw_rd_init(&r, b.data, b.len, FBW_AGAIN);
    (void)fbw_xdr_bytes(&r, 0x7FFF);
    cr_assert_eq(r.rc, FBW_E_PROTO, "32768 over a max of 32767");
    fbw_buf_free(&b);
}

Test(xdr, length_without_fixup_pattern_is_capped)
{
    fbw_buf b;
    fbw_buf_init(&b);
    put_len(&b, 0xFFFE0010u); /* upper half not 0xFFFF: a real 4 GiB length */
    fbw_rd r;
    fbw_rd_init(&r, b.data, b.len, FBW_AGAIN);
    (void)fbw_xdr_bytes(&r, 1u << 20);
    cr_assert_eq(r.rc, FBW_E_PROTO, "over the cap fails at once, even on a growing stream");
    fbw_buf_free(&b);
}

Test(xdr, length_cap_boundary)
{
    fbw_buf b;
    fbw_buf_init(&b);
    put_len(&b, 8);
    fbw_buf_append(&b, "12345678", 8);
    fbw_rd r;
    fbw_rd_init(&r, b.data, b.len, FBW_E_PROTO);
    cr_assert_eq(fbw_xdr_bytes(&r, 8).n, 8);
    cr_assert_eq(r.rc, FBW_OK);
    fbw_rd_init(&r, b.data, b.len, FBW_E_PROTO);
    (void)fbw_xdr_bytes(&r, 7);
    cr_assert_eq(r.rc, FBW_E_PROTO);
    fbw_buf_free(&b);
}

Test(xdr, opaque_raw_skip)
{
    static const uint8_t in[] = {1, 2, 3, 0, 9, 8, 7, 6, 5};
    fbw_rd r;
    fbw_rd_init(&r, in, sizeof in, FBW_E_PROTO);
    fbw_bytes o = fbw_xdr_opaque(&r, 3);
    cr_assert_eq(o.n, 3);
    cr_assert_eq(o.p, in);
    cr_assert_eq(fbw_rd_offset(&r), 4);
    fbw_bytes w = fbw_xdr_raw(&r, 2);
    cr_assert_eq(w.n, 2);
    cr_assert_eq(w.p[0], 9);
    fbw_xdr_skip(&r, 3);
    cr_assert_eq(r.rc, FBW_OK);
    cr_assert_eq(fbw_rd_left(&r), 0);
    fbw_xdr_skip(&r, 1);
    cr_assert_eq(r.rc, FBW_E_PROTO);
}

Test(xdr, opaque_zero_length_takes_no_padding)
{
    fbw_rd r;
    fbw_rd_init(&r, be, 0, FBW_AGAIN);
    fbw_bytes o = fbw_xdr_opaque(&r, 0);
    cr_assert_eq(r.rc, FBW_OK);
    cr_assert_eq(o.n, 0);
}

Test(xdr, reads_end_at_guard_page)
{
    fbw_guard g;
    fbw_guard_init(&g, 64);
    /* a counted string claiming 8 bytes but with only 3 present, ending at the guard */
    static const uint8_t in[] = {0, 0, 0, 8, 'a', 'b', 'c'};
    for (size_t k = 0; k <= sizeof in; k++) {
        const uint8_t *p = fbw_guard_place(&g, in, k);
        fbw_rd r;
        fbw_rd_init(&r, p, k, FBW_AGAIN);
        (void)fbw_xdr_bytes(&r, 100);
        cr_assert_eq(r.rc, FBW_AGAIN);
        fbw_rd_init(&r, p, k, FBW_AGAIN);
        (void)fbw_xdr_i64(&r);
        cr_assert_eq(r.rc, k >= 8 ? FBW_OK : FBW_AGAIN);
    }
    fbw_guard_free(&g);
}

/* ---- writer ---- */

static void expect_bytes(const fbw_buf *b, const uint8_t *want, size_t n)
{
    cr_assert_eq(fbw_buf_avail(b), n, "wrote %zu bytes, want %zu", fbw_buf_avail(b), n);
    cr_assert_eq(memcmp(fbw_buf_head(b), want, n), 0);
}

Test(xdr, put_short_sign_extends)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_wr w;
    fbw_wr_init(&w, &b);
    fbw_xdr_put_short(&w, 0x800D);
    fbw_xdr_put_short(&w, 5);
    fbw_xdr_put_short(&w, 0xFFFF);
    fbw_xdr_put_short(&w, 0x7FFF);
    static const uint8_t want[] = {0xFF, 0xFF, 0x80, 0x0D, 0, 0, 0, 5, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0x7F, 0xFF};
    expect_bytes(&b, want, sizeof want);
    cr_assert_eq(w.rc, FBW_OK);
    /* and the reader keeps the low 16 bits again */
    fbw_rd r;
    fbw_rd_init(&r, b.data, b.len, FBW_E_PROTO);
    cr_assert_eq(fbw_xdr_u16(&r), 0x800D);
    cr_assert_eq(fbw_xdr_u16(&r), 5);
    cr_assert_eq(fbw_xdr_u16(&r), 0xFFFF);
    cr_assert_eq(fbw_xdr_u16(&r), 0x7FFF);
    fbw_buf_free(&b);
}

Test(xdr, put_integers_and_hyper)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_wr w;
    fbw_wr_init(&w, &b);
    fbw_xdr_put_u32(&w, 0xDEADBEEFu);
    fbw_xdr_put_i32(&w, -2);
    fbw_xdr_put_i64(&w, -3);
    static const uint8_t want[] = {0xDE, 0xAD, 0xBE, 0xEF, 0xFF, 0xFF, 0xFF, 0xFE,
                                   0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFD};
    expect_bytes(&b, want, sizeof want);
    fbw_buf_free(&b);
}

Test(xdr, put_bytes_str_opaque_pad)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_wr w;
    fbw_wr_init(&w, &b);
    fbw_xdr_put_bytes(&w, "abcde", 5);
    fbw_xdr_put_str(&w, NULL);
    fbw_xdr_put_str(&w, "xyzw");
    fbw_xdr_put_opaque(&w, "q", 1);
    fbw_xdr_put_raw(&w, "rs", 2);
    fbw_xdr_put_pad(&w, 2);
    static const uint8_t want[] = {0, 0, 0, 5, 'a', 'b', 'c', 'd', 'e', 0, 0, 0, 0, 0, 0, 0,
                                   0, 0, 0, 4, 'x', 'y', 'z', 'w', 'q', 0, 0, 0, 'r', 's', 0, 0};
    expect_bytes(&b, want, sizeof want);
    fbw_buf_free(&b);
}

Test(xdr, writer_error_is_sticky)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_wr w;
    fbw_wr_init(&w, &b);
    fbw_xdr_put_u32(&w, 1);
    w.rc = FBW_E_NOMEM; /* as if an append had failed */
    fbw_xdr_put_u32(&w, 2);
    fbw_xdr_put_bytes(&w, "abc", 3);
    cr_assert_eq(fbw_buf_avail(&b), 4, "nothing is written after an error");
    cr_assert_eq(w.rc, FBW_E_NOMEM);
    fbw_buf_free(&b);
}

Test(xdr, round_trip_many_values)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_wr w;
    fbw_wr_init(&w, &b);
    uint32_t seed = 12345;
    uint32_t vals[200];
    for (int i = 0; i < 200; i++) {
        seed = seed * 1103515245u + 12345u;
        vals[i] = seed;
        fbw_xdr_put_u32(&w, seed);
        fbw_xdr_put_short(&w, (uint16_t)seed);
        fbw_xdr_put_i64(&w, (int64_t)((uint64_t)seed << 31 | i));
        fbw_xdr_put_bytes(&w, &vals[i], (size_t)(i % 5));
    }
    fbw_rd r;
    fbw_rd_init(&r, b.data, b.len, FBW_E_PROTO);
    for (int i = 0; i < 200; i++) {
        cr_assert_eq(fbw_xdr_u32(&r), vals[i]);
        cr_assert_eq(fbw_xdr_u16(&r), (uint16_t)vals[i]);
        cr_assert_eq(fbw_xdr_i64(&r), (int64_t)((uint64_t)vals[i] << 31 | i));
        fbw_bytes v = fbw_xdr_bytes(&r, 4);
        cr_assert_eq(v.n, (size_t)(i % 5));
        cr_assert(v.n == 0 || memcmp(v.p, &vals[i], v.n) == 0);
    }
    cr_assert_eq(r.rc, FBW_OK);
    cr_assert_eq(fbw_rd_left(&r), 0);
    fbw_buf_free(&b);
}

Test(xdr, little_endian_helpers)
{
    static const uint8_t le[] = {0x78, 0x56, 0x34, 0x12};
    cr_assert_eq(fbw_le32(le), 0x12345678u);
    cr_assert_eq(fbw_le16(le), 0x5678);
}
