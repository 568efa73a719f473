/* SPDX-License-Identifier: MIT */
/* test_blob.c - the blob codecs without a server: op_get_segment segment lists (whole, every
 * prefix, named corruptions, reads placed against a guard page), reply state and size checks, and
 * op_info_blob replies. */
#include <criterion/criterion.h>

#include "blob.h"
#include "feed.h"

#include <string.h>

/* Build a segment list from lengths; data bytes are i*7+segment so order mistakes show. */
static size_t build(uint8_t *out, const size_t *lens, size_t nseg, size_t *boundaries)
{
    size_t n = 0;
    for (size_t s = 0; s < nseg; s++) {
        out[n++] = (uint8_t)lens[s];
        out[n++] = (uint8_t)(lens[s] >> 8);
        for (size_t i = 0; i < lens[s]; i++)
            out[n++] = (uint8_t)(i * 7 + s);
        if (boundaries)
            boundaries[s] = n;
    }
    return n;
}

static uint8_t list[3 * 2 + 1 + 300 + 65535];

Test(blob, segments_whole)
{
    const size_t lens[] = {1, 0, 300};
    size_t n = build(list, lens, 3, NULL);
    fbw_buf out;
    fbw_buf_init(&out);
    size_t segs = 5; /* added to, not replaced */
    fbw_err err;
    cr_assert_eq(fbw_blob_segments_parse(list, n, &out, &segs, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(segs, 8);
    cr_assert_eq(out.len, 301);
    cr_assert_eq(out.data[0], 0);               /* segment 0, byte 0 */
    cr_assert_eq(out.data[1], 2);               /* segment 2, byte 0 */
    cr_assert_eq(out.data[300], (uint8_t)(299 * 7 + 2));
    fbw_buf_free(&out);
}

Test(blob, segments_empty_list)
{
    size_t segs = 0;
    fbw_err err;
    cr_assert_eq(fbw_blob_segments_parse(NULL, 0, NULL, &segs, &err), FBW_OK);
    cr_assert_eq(segs, 0);
}

Test(blob, segments_largest)
{
    const size_t lens[] = {65535};
    size_t n = build(list, lens, 1, NULL);
    cr_assert_eq(list[0], 0xFF);
    cr_assert_eq(list[1], 0xFF);
    fbw_buf out;
    fbw_buf_init(&out);
    fbw_err err;
    cr_assert_eq(fbw_blob_segments_parse(list, n, &out, NULL, &err), FBW_OK);
    cr_assert_eq(out.len, 65535);
    cr_assert_eq(out.data[65534], (uint8_t)(65534 * 7));
    fbw_buf_free(&out);
}

/* A segment list is a complete buffer (it sits inside a counted p_resp_data): a prefix that ends
 * inside an entry is malformed, never "wait for more". */
Test(blob, segments_every_prefix)
{
    const size_t lens[] = {3, 0, 5, 1};
    size_t bounds[4];
    size_t n = build(list, lens, 4, bounds);
    fbw_guard g;
    fbw_guard_init(&g, n);
    for (size_t k = 0; k <= n; k++) {
        const uint8_t *p = fbw_guard_place(&g, list, k);
        fbw_buf out;
        fbw_buf_init(&out);
        size_t segs = 0, want_segs = 0, want_bytes = 0;
        int boundary = k == 0;
        for (size_t s = 0; s < 4; s++) {
            if (bounds[s] <= k) {
                want_segs++;
                want_bytes += lens[s];
            }
            boundary |= bounds[s] == k;
        }
        fbw_err err;
        fbw_err_clear(&err);
        int rc = fbw_blob_segments_parse(p, k, &out, &segs, &err);
        if (boundary) {
            cr_assert_eq(rc, FBW_OK, "prefix %zu: %s", k, err.msg);
            cr_assert_eq(segs, want_segs, "prefix %zu", k);
            cr_assert_eq(out.len, want_bytes, "prefix %zu", k);
        } else {
            cr_assert_eq(rc, FBW_E_BADVALUE, "prefix %zu gave %s", k, fbw_rc_name(rc));
            cr_assert_eq(out.len, 0, "prefix %zu: a bad list appended data", k);
            cr_assert_eq(segs, 0);
            cr_assert(strstr(err.msg, "runs past"), "prefix %zu: %s", k, err.msg);
        }
        fbw_buf_free(&out);
    }
    fbw_guard_free(&g);
}

Test(blob, segments_corrupt_length)
{
    const size_t lens[] = {4, 10};
    size_t n = build(list, lens, 2, NULL);
    list[6] = 11; /* second entry claims one byte more than there is */
    fbw_err err;
    size_t segs = 0;
    cr_assert_eq(fbw_blob_segments_parse(list, n, NULL, &segs, &err), FBW_E_BADVALUE);
    cr_assert(strstr(err.msg, "entry 1 at offset 6"), "%s", err.msg);
    cr_assert_eq(segs, 0);
}

Test(blob, segments_corrupt_huge_length)
{
    const uint8_t bad[] = {0xFF, 0xFF, 'a', 'b'};
    fbw_guard g;
    fbw_guard_init(&g, sizeof bad);
    fbw_err err;
    cr_assert_eq(fbw_blob_segments_parse(fbw_guard_place(&g, bad, sizeof bad), sizeof bad, NULL, NULL,
                                         &err),
                 FBW_E_BADVALUE);
    fbw_guard_free(&g);
}

Test(blob, segments_corrupt_lone_byte)
{
    const uint8_t bad[] = {1, 0, 'x', 0};
    fbw_err err;
    cr_assert_eq(fbw_blob_segments_parse(bad, sizeof bad, NULL, NULL, &err), FBW_E_BADVALUE);
    cr_assert(strstr(err.msg, "entry 1 at offset 3"), "%s", err.msg);
}

Test(blob, segments_length_is_little_endian)
{
    /* 0x0102 = 258 bytes little-endian; read big-endian it would be 513 and run past the end */
    static uint8_t buf[2 + 258];
    buf[0] = 0x02;
    buf[1] = 0x01;
    fbw_err err;
    size_t segs = 0;
    cr_assert_eq(fbw_blob_segments_parse(buf, sizeof buf, NULL, &segs, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(segs, 1);
}

Test(blob, reply_check)
{
    fbw_err err;
    cr_assert_eq(fbw_blob_segment_reply_check(FBW_SEG_OK, 100, 100, &err), FBW_OK);
    cr_assert_eq(fbw_blob_segment_reply_check(FBW_SEG_INCOMPLETE, 0, 3, &err), FBW_OK);
    cr_assert_eq(fbw_blob_segment_reply_check(FBW_SEG_EOF, 65535, 65535, &err), FBW_OK);
    cr_assert_eq(fbw_blob_segment_reply_check(3, 0, 100, &err), FBW_E_BADVALUE);
    cr_assert(strstr(err.msg, "state 3"), "%s", err.msg);
    cr_assert_eq(fbw_blob_segment_reply_check(0xFFFF, 0, 100, &err), FBW_E_BADVALUE);
    cr_assert_eq(fbw_blob_segment_reply_check(FBW_SEG_OK, 101, 100, &err), FBW_E_BADVALUE);
    cr_assert(strstr(err.msg, "101 bytes"), "%s", err.msg);
}

/* ---- op_info_blob replies ---- */

static const uint8_t info_reply[] = {
    4, 4, 0, 0x11, 0, 0, 0,           /* num_segments 17 */
    5, 2, 0, 0xFD, 0xFF,              /* max_segment in 2 bytes: sign-extended, see info_whole */
    6, 4, 0, 0x00, 0x00, 0x10, 0x00,  /* total_length 1 MiB */
    7, 1, 0, 0,                       /* type segmented */
    1,                                /* end */
};

Test(blob, info_whole)
{
    fbw_blob_info in;
    fbw_err err;
    cr_assert_eq(fbw_blob_info_parse(info_reply, sizeof info_reply, &in, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(in.num_segments, 17);
    /* isc_portable_integer sign-extends: the engine sends max_segment in 4 bytes for that reason;
     * a 2-byte 0xFFFD is -3 by the same rule fbclient applies */
    cr_assert_eq(in.max_segment, -3);
    cr_assert_eq(in.total_length, 1 << 20);
    cr_assert_eq(in.type, 0);
}

Test(blob, info_unknown_items_skipped)
{
    const uint8_t r[] = {99, 3, 0, 1, 2, 3, 6, 2, 0, 0x34, 0x12, 1};
    fbw_blob_info in;
    fbw_err err;
    cr_assert_eq(fbw_blob_info_parse(r, sizeof r, &in, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(in.total_length, 0x1234);
    cr_assert_eq(in.num_segments, -1);
    cr_assert_eq(in.type, -1);
}

Test(blob, info_every_prefix)
{
    const size_t ends[] = {0, 7, 12, 19, 23, 24}; /* item boundaries */
    fbw_guard g;
    fbw_guard_init(&g, sizeof info_reply);
    for (size_t k = 0; k <= sizeof info_reply; k++) {
        int boundary = 0;
        for (size_t i = 0; i < sizeof ends / sizeof *ends; i++)
            boundary |= ends[i] == k;
        fbw_blob_info in;
        fbw_err err;
        int rc = fbw_blob_info_parse(fbw_guard_place(&g, info_reply, k), k, &in, &err);
        cr_assert_eq(rc, boundary ? FBW_OK : FBW_E_BADVALUE, "prefix %zu: %s", k, fbw_rc_name(rc));
        if (k >= 19)
            cr_assert_eq(in.total_length, 1 << 20, "prefix %zu", k);
        else if (boundary)
            cr_assert_eq(in.total_length, -1, "prefix %zu", k);
    }
    fbw_guard_free(&g);
}

Test(blob, info_corruptions)
{
    fbw_blob_info in;
    fbw_err err;
    const uint8_t truncated[] = {4, 4, 0, 1, 0, 0, 0, 2};
    cr_assert_eq(fbw_blob_info_parse(truncated, sizeof truncated, &in, &err), FBW_E_BADVALUE);
    cr_assert(strstr(err.msg, "truncated at offset 7"), "%s", err.msg);
    const uint8_t error_item[] = {3, 0, 0};
    cr_assert_eq(fbw_blob_info_parse(error_item, sizeof error_item, &in, &err), FBW_E_BADVALUE);
    const uint8_t zero_len[] = {6, 0, 0, 1};
    cr_assert_eq(fbw_blob_info_parse(zero_len, sizeof zero_len, &in, &err), FBW_E_BADVALUE);
    cr_assert(strstr(err.msg, "length 0"), "%s", err.msg);
    const uint8_t nine[] = {6, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1};
    cr_assert_eq(fbw_blob_info_parse(nine, sizeof nine, &in, &err), FBW_E_BADVALUE);
    const uint8_t past[] = {6, 4, 0, 1, 2};
    cr_assert_eq(fbw_blob_info_parse(past, sizeof past, &in, &err), FBW_E_BADVALUE);
    cr_assert(strstr(err.msg, "runs past"), "%s", err.msg);
}

Test(blob, info_eight_byte_value)
{
    const uint8_t r[] = {6, 8, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1};
    fbw_blob_info in;
    fbw_err err;
    cr_assert_eq(fbw_blob_info_parse(r, sizeof r, &in, &err), FBW_OK);
    cr_assert_eq(in.total_length, (int64_t)0x0000000200000001LL);
}
