/* SPDX-License-Identifier: MIT */
/* test_blr.c - message BLR build/parse (wire/blr.c). */
#include <criterion/criterion.h>

#include "msg.h"

#include <stdlib.h>
#include <string.h>

static fbw_col col(uint16_t type, int16_t scale, uint16_t charset, uint16_t length)
{
    fbw_col c = {.type = type, .scale = scale, .charset = charset, .length = length, .nullable = 1};
    if (type != FBW_SQL_TEXT && type != FBW_SQL_VARYING && type != FBW_SQL_NULL)
        c.length = (uint16_t)fbw_msg_native_size(&c);
    return c;
}

/* The worked example of docs/protocol/messages.md §4.1: INTEGER, VARCHAR(10) UTF8 (40 bytes),
 * DOUBLE. */
Test(blr, build_matches_reference_example)
{
    fbw_col cols[3] = {col(FBW_SQL_LONG, 0, 0, 0), col(FBW_SQL_VARYING, 0, 4, 40),
                       col(FBW_SQL_DOUBLE, 0, 0, 0)};
    fbw_msgfmt f = {cols, 3, 3};
    static const uint8_t want[] = {0x05, 0x02, 0x04, 0x00, 0x06, 0x00, 0x08, 0x00, 0x07, 0x00, 0x26,
                                   0x04, 0x00, 0x28, 0x00, 0x07, 0x00, 0x1B, 0x07, 0x00, 0xFF, 0x4C};
    fbw_buf b;
    fbw_err e;
    fbw_buf_init(&b);
    cr_assert_eq(fbw_blr_build(&f, 16, 3, &b, &e), FBW_OK);
    cr_assert_eq(fbw_buf_avail(&b), sizeof want);
    cr_assert_arr_eq(fbw_buf_head(&b), want, sizeof want);
    /* §3.3 layout: long 0..4, ind 4..6, varying at 6 (align 2) 42 bytes, ind 48..50,
     * double at 56 (align 8), ind 64..66. */
    cr_assert_eq(fbw_msg_length(&f), 66);
    fbw_buf_free(&b);
}

static fbw_col all_cols[] = {
    {FBW_SQL_TEXT, 0, 0, 4, 10, 1},       {FBW_SQL_VARYING, 0, 0, 1, 300, 1},
    {FBW_SQL_SHORT, -2, 1, 0, 2, 1},      {FBW_SQL_LONG, -4, 2, 0, 4, 1},
    {FBW_SQL_INT64, -18, 1, 0, 8, 1},     {FBW_SQL_INT128, -38, 1, 0, 16, 1},
    {FBW_SQL_FLOAT, 0, 0, 0, 4, 1},       {FBW_SQL_DOUBLE, 0, 0, 0, 8, 1},
    {FBW_SQL_D_FLOAT, 0, 0, 0, 8, 1},     {FBW_SQL_DEC16, 0, 0, 0, 8, 1},
    {FBW_SQL_DEC34, 0, 0, 0, 16, 1},      {FBW_SQL_TYPE_DATE, 0, 0, 0, 4, 1},
    {FBW_SQL_TYPE_TIME, 0, 0, 0, 4, 1},   {FBW_SQL_TIMESTAMP, 0, 0, 0, 8, 1},
    {FBW_SQL_TIME_TZ, 0, 0, 0, 8, 1},     {FBW_SQL_TIME_TZ_EX, 0, 0, 0, 8, 1},
    {FBW_SQL_TIMESTAMP_TZ, 0, 0, 0, 12, 1}, {FBW_SQL_TIMESTAMP_TZ_EX, 0, 0, 0, 12, 1},
    {FBW_SQL_BOOLEAN, 0, 0, 0, 1, 1},     {FBW_SQL_BLOB, 0, 1, 4, 8, 1},
    {FBW_SQL_QUAD, -3, 0, 0, 8, 1},
};
#define NALL (sizeof all_cols / sizeof all_cols[0])

Test(blr, every_type_round_trips)
{
    fbw_msgfmt f = {all_cols, NALL, NALL};
    fbw_col back[NALL];
    fbw_msgfmt g = {back, 0, NALL};
    fbw_buf b;
    fbw_err e;
    fbw_buf_init(&b);
    cr_assert_eq(fbw_blr_build(&f, 16, 3, &b, &e), FBW_OK, "%s", e.msg);
    uint16_t count;
    cr_assert_eq(fbw_blr_count(fbw_buf_head(&b), fbw_buf_avail(&b), &count, &e), FBW_OK);
    cr_assert_eq(count, NALL);
    cr_assert_eq(fbw_blr_parse(fbw_buf_head(&b), fbw_buf_avail(&b), &g, &e), FBW_OK, "%s", e.msg);
    cr_assert_eq(g.n, NALL);
    for (size_t i = 0; i < NALL; i++) {
        cr_expect_eq(back[i].type, all_cols[i].type, "col %zu", i);
        cr_expect_eq(back[i].length, all_cols[i].length, "col %zu", i);
        cr_expect_eq(back[i].charset, all_cols[i].charset, "col %zu", i);
        /* BLR carries scale for exact numerics/quad, subtype only for blobs */
        cr_expect_eq(back[i].scale, all_cols[i].scale, "col %zu", i);
        if (all_cols[i].type == FBW_SQL_BLOB)
            cr_expect_eq(back[i].subtype, all_cols[i].subtype);
    }
    fbw_buf_free(&b);
}

Test(blr, blob_as_quad_before_protocol_12_and_version4_for_dialect_1)
{
    fbw_col c[2] = {col(FBW_SQL_BLOB, 0, 0, 0), col(FBW_SQL_ARRAY, 0, 0, 0)};
    c[0].subtype = 1;
    fbw_msgfmt f = {c, 2, 2};
    static const uint8_t want[] = {4, 2, 4, 0, 4, 0, 9, 0, 7, 0, 9, 0, 7, 0, 255, 76};
    fbw_buf b;
    fbw_err e;
    fbw_buf_init(&b);
    cr_assert_eq(fbw_blr_build(&f, 11, 1, &b, &e), FBW_OK);
    cr_assert_eq(fbw_buf_avail(&b), sizeof want);
    cr_assert_arr_eq(fbw_buf_head(&b), want, sizeof want);
    fbw_buf_reset(&b);
    cr_assert_eq(fbw_blr_build(&f, 12, 3, &b, &e), FBW_OK);
    static const uint8_t want12[] = {5, 2, 4, 0, 4, 0, 17, 1, 0, 0, 0, 7, 0, 9, 0, 7, 0, 255, 76};
    cr_assert_eq(fbw_buf_avail(&b), sizeof want12);
    cr_assert_arr_eq(fbw_buf_head(&b), want12, sizeof want12);
    fbw_buf_free(&b);
}

Test(blr, sql_null_is_text_zero)
{
    fbw_col c = col(FBW_SQL_NULL, 0, 0, 0);
    fbw_msgfmt f = {&c, 1, 1};
    static const uint8_t want[] = {5, 2, 4, 0, 2, 0, 14, 0, 0, 7, 0, 255, 76};
    fbw_buf b;
    fbw_err e;
    fbw_buf_init(&b);
    cr_assert_eq(fbw_blr_build(&f, 16, 3, &b, &e), FBW_OK);
    cr_assert_arr_eq(fbw_buf_head(&b), want, sizeof want);
    fbw_buf_free(&b);
}

Test(blr, empty_format_is_empty_blr)
{
    fbw_msgfmt f = {NULL, 0, 0};
    fbw_buf b;
    fbw_err e;
    fbw_buf_init(&b);
    cr_assert_eq(fbw_blr_build(&f, 16, 3, &b, &e), FBW_OK);
    cr_assert_eq(fbw_buf_avail(&b), 0);
    fbw_col c[1];
    fbw_msgfmt g = {c, 5, 1};
    cr_assert_eq(fbw_blr_parse(NULL, 0, &g, &e), FBW_OK);
    cr_assert_eq(g.n, 0);
    fbw_buf_free(&b);
}

Test(blr, unknown_type_rejected_in_build)
{
    fbw_col c = {.type = 999};
    fbw_msgfmt f = {&c, 1, 1};
    fbw_buf b;
    fbw_err e;
    fbw_buf_init(&b);
    cr_assert_eq(fbw_blr_build(&f, 16, 3, &b, &e), FBW_E_USAGE);
    cr_assert_eq(fbw_buf_avail(&b), 0, "nothing half-built left behind");
    fbw_buf_free(&b);
}

/* Jaybird writes blr_text / blr_varying (no charset: the attachment's) and blr_quad for blobs. */
Test(blr, parse_jaybird_forms)
{
    static const uint8_t blr[] = {5, 2, 4, 0, 6, 0, 37, 0x10, 0, 7, 0, 14, 3, 0, 7, 0,
                                  9, 0, 7, 0, 255, 76};
    fbw_col c[3];
    fbw_msgfmt f = {c, 0, 3};
    fbw_err e;
    cr_assert_eq(fbw_blr_parse(blr, sizeof blr, &f, &e), FBW_OK, "%s", e.msg);
    cr_assert_eq(f.n, 3);
    cr_assert_eq(c[0].type, FBW_SQL_VARYING);
    cr_assert_eq(c[0].length, 16);
    cr_assert_eq(c[0].charset, FBW_CS_DYNAMIC);
    cr_assert_eq(c[1].type, FBW_SQL_TEXT);
    cr_assert_eq(c[1].length, 3);
    cr_assert_eq(c[2].type, FBW_SQL_QUAD);
    cr_assert_eq(c[2].length, 8);
}

Test(blr, every_strict_prefix_is_rejected)
{
    fbw_msgfmt f = {all_cols, NALL, NALL};
    fbw_col back[NALL];
    fbw_buf b;
    fbw_err e;
    fbw_buf_init(&b);
    cr_assert_eq(fbw_blr_build(&f, 16, 3, &b, &e), FBW_OK);
    size_t n = fbw_buf_avail(&b);
    for (size_t k = 1; k < n; k++) {
        fbw_msgfmt g = {back, 0, NALL};
        int rc = fbw_blr_parse(fbw_buf_head(&b), k, &g, &e);
        /* a prefix ending right after blr_end (before blr_eoc) is a complete message */
        if (k == n - 1)
            cr_expect_eq(rc, FBW_OK, "prefix %zu", k);
        else
            cr_expect_eq(rc, FBW_E_BADVALUE, "prefix %zu gave %d", k, rc);
        if (k != n - 1)
            cr_expect_eq(g.n, 0);
    }
    fbw_buf_free(&b);
}

static int parse_rc(const uint8_t *blr, size_t n, uint16_t cap, fbw_err *e)
{
    fbw_col c[4];
    fbw_msgfmt f = {c, 0, cap};
    return fbw_blr_parse(blr, n, &f, e);
}

Test(blr, named_corruptions)
{
    fbw_err e;
    static const uint8_t unknown[] = {5, 2, 4, 0, 2, 0, 99, 7, 0, 255, 76};
    cr_assert_eq(parse_rc(unknown, sizeof unknown, 4, &e), FBW_E_BADVALUE);
    cr_assert(strstr(e.msg, "byte 99") && strstr(e.msg, "offset 6"), "%s", e.msg);

    static const uint8_t cstring[] = {5, 2, 4, 0, 2, 0, 40, 5, 0, 7, 0, 255, 76};
    cr_assert_eq(parse_rc(cstring, sizeof cstring, 4, &e), FBW_E_BADVALUE);
    cr_assert(strstr(e.msg, "cstring"), "%s", e.msg);

    static const uint8_t version[] = {6, 2, 4, 0, 2, 0, 8, 0, 7, 0, 255, 76};
    cr_assert_eq(parse_rc(version, sizeof version, 4, &e), FBW_E_BADVALUE);

    static const uint8_t no_ind[] = {5, 2, 4, 0, 2, 0, 8, 0, 8, 0, 255, 76};
    cr_assert_eq(parse_rc(no_ind, sizeof no_ind, 4, &e), FBW_E_BADVALUE);
    cr_assert(strstr(e.msg, "NULL indicator"), "%s", e.msg);

    static const uint8_t odd[] = {5, 2, 4, 0, 1, 0, 8, 0, 255, 76};
    cr_assert_eq(parse_rc(odd, sizeof odd, 4, &e), FBW_E_BADVALUE);

    static const uint8_t trailing[] = {5, 2, 4, 0, 2, 0, 8, 0, 7, 0, 255, 76, 0};
    cr_assert_eq(parse_rc(trailing, sizeof trailing, 4, &e), FBW_E_BADVALUE);

    static const uint8_t no_end[] = {5, 2, 4, 0, 2, 0, 8, 0, 7, 0, 76};
    cr_assert_eq(parse_rc(no_end, sizeof no_end, 4, &e), FBW_E_BADVALUE);

    static const uint8_t long_varying[] = {5, 2, 4, 0, 2, 0, 38, 4, 0, 0xFE, 0xFF, 7, 0, 255, 76};
    cr_assert_eq(parse_rc(long_varying, sizeof long_varying, 4, &e), FBW_E_BADVALUE);

    static const uint8_t two[] = {5, 2, 4, 0, 4, 0, 8, 0, 7, 0, 8, 0, 7, 0, 255, 76};
    cr_assert_eq(parse_rc(two, sizeof two, 1, &e), FBW_E_USAGE, "more fields than room");
    cr_assert_eq(parse_rc(two, sizeof two, 2, &e), FBW_OK);
}

Test(blr, message_length_alignment)
{
    /* SHORT(0..2) ind(2..4) INT64 at 8..16 ind 16..18 BOOLEAN 18 ind at 20..22 TS_TZ at 24..36
     * ind 36..38 */
    fbw_col c[4] = {col(FBW_SQL_SHORT, 0, 0, 0), col(FBW_SQL_INT64, 0, 0, 0),
                    col(FBW_SQL_BOOLEAN, 0, 0, 0), col(FBW_SQL_TIMESTAMP_TZ, 0, 0, 0)};
    fbw_msgfmt f = {c, 4, 4};
    cr_assert_eq(fbw_msg_length(&f), 38);
}

/* ---- request BLR (op_compile, op_transact): the leading blr_message declarations ---- */

/* As gbak sends them: blr_version4, blr_begin, message 1 (cstring2 charset 3 length 32, short,
 * quad), message 0 (long), then the statements (blr_receive 0 ...), which are not read. */
static const uint8_t gbak_like[] = {
    4, 2,                         /* blr_version4 blr_begin */
    4, 1, 3, 0,                   /* blr_message 1, 3 fields */
    41, 3, 0, 32, 0,              /* blr_cstring2 charset 3, length 32 */
    7, 0,                         /* blr_short 0 */
    9, 0,                         /* blr_quad 0 */
    4, 0, 1, 0,                   /* blr_message 0, 1 field */
    8, 0,                         /* blr_long 0 */
    3, 0, 2, 0xFF, 0xFF, 0x4C,    /* blr_receive 0 ... (never read: bytes that are no message) */
};

Test(blr, request_scan_finds_the_leading_messages)
{
    fbw_blr_msgdecl d[4];
    unsigned n = 0;
    fbw_err err;
    cr_assert_eq(fbw_blr_request_scan(gbak_like, sizeof gbak_like, d, 4, &n, &err), FBW_OK, "%s",
                 err.msg);
    cr_assert_eq(n, 2);
    cr_assert_eq(d[0].number, 1);
    cr_assert_eq(d[0].fields, 3);
    cr_assert_eq(d[1].number, 0);
    cr_assert_eq(d[1].fields, 1);
    fbw_col c[3];
    fbw_msgfmt f = {c, 0, 3};
    cr_assert_eq(fbw_blr_request_fields(gbak_like, sizeof gbak_like, &d[0], &f, &err), FBW_OK);
    cr_assert_eq(f.n, 3);
    /* a C string of 32 bytes (NUL included) travels as a VARCHAR of 31 */
    cr_assert_eq(c[0].type, FBW_SQL_VARYING);
    cr_assert_eq(c[0].length, 31);
    cr_assert_eq(c[0].charset, 3);
    cr_assert_eq(c[1].type, FBW_SQL_SHORT);
    cr_assert_eq(c[2].type, FBW_SQL_QUAD);
    /* no room: usage error, nothing parsed */
    fbw_msgfmt small = {c, 0, 2};
    cr_assert_eq(fbw_blr_request_fields(gbak_like, sizeof gbak_like, &d[0], &small, &err),
                 FBW_E_USAGE);
    cr_assert_eq(small.n, 0);
    /* message BLR (DSQL) keeps refusing blr_cstring */
    static const uint8_t dsql[] = {5, 2, 4, 0, 2, 0, 40, 8, 0, 7, 0, 255, 76};
    fbw_msgfmt g = {c, 0, 3};
    cr_assert_eq(fbw_blr_parse(dsql, sizeof dsql, &g, &err), FBW_E_BADVALUE);
    cr_assert(strstr(err.msg, "blr_cstring"), "%s", err.msg);
}

Test(blr, request_scan_without_messages_and_errors_name_the_offset)
{
    fbw_blr_msgdecl d[2];
    unsigned n = 9;
    fbw_err err;
    static const uint8_t none[] = {5, 2, 3, 0, 0xFF, 0x4C}; /* statements only */
    cr_assert_eq(fbw_blr_request_scan(none, sizeof none, d, 2, &n, &err), FBW_OK);
    cr_assert_eq(n, 0);

    static const uint8_t version[] = {6, 2};
    cr_assert_eq(fbw_blr_request_scan(version, sizeof version, d, 2, &n, &err), FBW_E_BADVALUE);
    cr_assert(strstr(err.msg, "request BLR not understood at offset 0"), "%s", err.msg);

    static const uint8_t nobegin[] = {4, 4};
    cr_assert_eq(fbw_blr_request_scan(nobegin, sizeof nobegin, d, 2, &n, &err), FBW_E_BADVALUE);
    cr_assert(strstr(err.msg, "at offset 1: expected blr_begin"), "%s", err.msg);

    static const uint8_t badtype[] = {4, 2, 4, 0, 1, 0, 99};
    cr_assert_eq(fbw_blr_request_scan(badtype, sizeof badtype, d, 2, &n, &err), FBW_E_BADVALUE);
    cr_assert(strstr(err.msg, "request BLR not understood at offset 6: message field type byte 99"),
              "%s", err.msg);

    static const uint8_t twice[] = {4, 2, 4, 0, 1, 0, 8, 0, 4, 0, 1, 0, 8, 0};
    cr_assert_eq(fbw_blr_request_scan(twice, sizeof twice, d, 2, &n, &err), FBW_E_BADVALUE);
    cr_assert(strstr(err.msg, "message 0 declared twice"), "%s", err.msg);

    static const uint8_t three[] = {4, 2, 4, 0, 0, 0, 4, 1, 0, 0, 4, 2, 0, 0};
    cr_assert_eq(fbw_blr_request_scan(three, sizeof three, d, 2, &n, &err), FBW_E_USAGE);

    /* every prefix that cuts the head or a declaration is an error, never a read past the end;
     * one that ends between declarations lists those before it */
    for (size_t len = 0; len < 19; len++) {
        uint8_t *cut = malloc(len ? len : 1);
        memcpy(cut, gbak_like, len);
        int rc = fbw_blr_request_scan(cut, len, d, 2, &n, &err);
        if (len == 2 || len == 15)
            cr_assert(rc == FBW_OK && n == (len == 15), "prefix %zu: rc %d n %u", len, rc, n);
        else
            cr_assert_eq(rc, FBW_E_BADVALUE, "prefix %zu: rc %d", len, rc);
        free(cut);
    }
}
