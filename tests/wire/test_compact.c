/* SPDX-License-Identifier: MIT */
/* test_compact.c - compact message formats (wire/compact.c): which columns change, parameters
 * without their padding, and rows expanded back to the described bytes, in both message layouts
 * (packed: protocol 13+, unpacked: 12), with NULLs, OCTETS, multi-byte UTF8 and bad input. */
#include <criterion/criterion.h>

#include "msg.h"

#include <string.h>

static fbw_col text_col(uint16_t type, uint16_t charset, uint16_t length)
{
    return (fbw_col){.type = type, .charset = charset, .length = length, .nullable = 1};
}

static fbw_col int_col(void) { return (fbw_col){.type = FBW_SQL_LONG, .length = 4, .nullable = 1}; }

static fbw_value bytes_val(uint16_t type, const char *p, size_t n)
{
    return (fbw_value){.type = type, .u.bytes = {(const uint8_t *)p, n}};
}

Test(compact, names_parse_both_ways)
{
    int f = -1;
    cr_assert_eq(fbw_row_format_parse("compact", &f), FBW_OK);
    cr_assert_eq(f, FBW_ROW_FORMAT_COMPACT);
    cr_assert_eq(fbw_row_format_parse("described", &f), FBW_OK);
    cr_assert_eq(f, FBW_ROW_FORMAT_DESCRIBED);
    cr_assert_eq(fbw_row_format_parse("Compact", &f), FBW_E_USAGE);
    cr_assert_eq(fbw_row_format_parse("", &f), FBW_E_USAGE);
    cr_assert_eq(fbw_row_format_parse(NULL, &f), FBW_E_USAGE);
    cr_assert_str_eq(fbw_row_format_name(FBW_ROW_FORMAT_COMPACT), "compact");
    cr_assert_str_eq(fbw_row_format_name(FBW_ROW_FORMAT_DESCRIBED), "described");
}

Test(compact, multibyte_chars_that_gain_change)
{
    fbw_col d[9] = {int_col(), text_col(FBW_SQL_TEXT, FBW_CS_UTF8, 480),
                    text_col(FBW_SQL_VARYING, FBW_CS_UTF8, 40),
                    text_col(FBW_SQL_TEXT, FBW_CS_OCTETS, 100), text_col(FBW_SQL_TEXT, FBW_CS_NONE, 60),
                    text_col(FBW_SQL_TEXT, FBW_CS_UTF8, 8), text_col(FBW_SQL_TEXT, FBW_CS_UTF8, 12),
                    text_col(FBW_SQL_TEXT, 3 /* UNICODE_FSS */, 9),
                    text_col(FBW_SQL_TEXT, 5 /* SJIS_0208 */, 16)};
    fbw_msgfmt described = {d, 9, 9};
    fbw_col w[9];
    fbw_msgfmt wire = {w, 0, 9};
    cr_assert_eq(fbw_msgfmt_compact(&described, &wire), 4);
    cr_assert_eq(wire.n, 9);
    cr_assert_eq(w[0].type, FBW_SQL_LONG);
    cr_assert_eq(w[1].type, FBW_SQL_VARYING, "UTF8 CHAR(120)");
    cr_assert_eq(w[1].length, 480);
    cr_assert_eq(w[1].charset, FBW_CS_UTF8);
    cr_assert_eq(w[2].type, FBW_SQL_VARYING);
    cr_assert_eq(w[3].type, FBW_SQL_TEXT, "single-byte sets stay: a full value would grow");
    cr_assert_eq(w[4].type, FBW_SQL_TEXT);
    cr_assert_eq(w[5].type, FBW_SQL_TEXT, "UTF8 CHAR(2): 8 bytes either way");
    cr_assert_eq(w[6].type, FBW_SQL_VARYING, "UTF8 CHAR(3): 8 bytes instead of 12");
    cr_assert_eq(w[7].type, FBW_SQL_VARYING, "UNICODE_FSS CHAR(3)");
    cr_assert_eq(w[8].type, FBW_SQL_VARYING, "SJIS CHAR(8)");
    /* no room: nothing is written */
    fbw_msgfmt small = {w, 0, 8};
    cr_assert_eq(fbw_msgfmt_compact(&described, &small), 0);
    cr_assert_eq(small.n, 0);
}

Test(compact, longer_than_a_varchar_stays)
{
    fbw_col d[2] = {text_col(FBW_SQL_TEXT, FBW_CS_UTF8, FBW_MSG_MAX_COMPACT + 3),
                    text_col(FBW_SQL_TEXT, FBW_CS_UTF8, FBW_MSG_MAX_COMPACT - 1)};
    fbw_msgfmt described = {d, 2, 2};
    fbw_col w[2];
    fbw_msgfmt wire = {w, 0, 2};
    cr_assert_eq(fbw_msgfmt_compact(&described, &wire), 1);
    cr_assert_eq(w[0].type, FBW_SQL_TEXT);
    cr_assert_eq(w[1].type, FBW_SQL_VARYING);
}

/* sysbench's row (INTEGER, INTEGER, CHAR(120), CHAR(60) in UTF8; values of 119 and 59 ASCII
 * characters): 724 bytes described, 196 compact. */
Test(compact, sysbench_row_shrinks)
{
    fbw_col d[4] = {int_col(), int_col(), text_col(FBW_SQL_TEXT, FBW_CS_UTF8, 480),
                    text_col(FBW_SQL_TEXT, FBW_CS_UTF8, 240)};
    fbw_msgfmt described = {d, 4, 4};
    fbw_col w[4];
    fbw_msgfmt wire = {w, 0, 4};
    cr_assert_eq(fbw_msgfmt_compact(&described, &wire), 2);
    char c[480], pad[240];
    memset(c, '7', 119);
    memset(c + 119, ' ', sizeof c - 119);
    memset(pad, '3', 59);
    memset(pad + 59, ' ', sizeof pad - 59);
    fbw_value v[4] = {{.type = FBW_SQL_LONG, .u.i64 = 1}, {.type = FBW_SQL_LONG, .u.i64 = 2},
                      bytes_val(FBW_SQL_TEXT, c, sizeof c), bytes_val(FBW_SQL_TEXT, pad, sizeof pad)};
    fbw_value cv[4];
    fbw_values_compact(&described, &wire, v, cv);
    fbw_buf a, b;
    fbw_buf_init(&a);
    fbw_buf_init(&b);
    fbw_wr wa, wb;
    fbw_err e;
    fbw_wr_init(&wa, &a);
    fbw_wr_init(&wb, &b);
    cr_assert_eq(fbw_msg_encode(&wa, &described, 13, v, &e), FBW_OK, "%s", e.msg);
    cr_assert_eq(fbw_msg_encode(&wb, &wire, 13, cv, &e), FBW_OK, "%s", e.msg);
    cr_assert_eq(a.len, 4 + 4 + 4 + 480 + 240);
    cr_assert_eq(b.len, 4 + 4 + 4 + (4 + 120) + (4 + 60), "%zu", b.len);
    fbw_buf_free(&a);
    fbw_buf_free(&b);
}

/* A compact form by hand: every CHAR as VARCHAR (what fbw_msgfmt_compact would do if each gained),
 * so the single-byte paddings are covered too. */
static void all_varying(const fbw_msgfmt *described, fbw_msgfmt *wire)
{
    wire->n = described->n;
    for (uint16_t i = 0; i < described->n; i++) {
        wire->cols[i] = described->cols[i];
        if (wire->cols[i].type == FBW_SQL_TEXT)
            wire->cols[i].type = FBW_SQL_VARYING;
    }
}

Test(compact, parameters_drop_their_padding_only)
{
    fbw_col d[5] = {text_col(FBW_SQL_TEXT, FBW_CS_UTF8, 20), text_col(FBW_SQL_TEXT, FBW_CS_OCTETS, 4),
                    text_col(FBW_SQL_TEXT, FBW_CS_OCTETS, 4), text_col(FBW_SQL_TEXT, FBW_CS_NONE, 8),
                    text_col(FBW_SQL_VARYING, FBW_CS_UTF8, 8)};
    fbw_msgfmt described = {d, 5, 5};
    fbw_col w[5];
    fbw_msgfmt wire = {w, 0, 5};
    all_varying(&described, &wire);
    fbw_value in[5] = {bytes_val(FBW_SQL_TEXT, "ab  ", 4), bytes_val(FBW_SQL_TEXT, "a\0 \0", 4),
                       bytes_val(FBW_SQL_TEXT, "0A00", 4), {.type = FBW_SQL_TEXT, .is_null = 1},
                       bytes_val(FBW_SQL_VARYING, "x  ", 3)};
    in[2].hex = 1;
    fbw_value out[5];
    fbw_values_compact(&described, &wire, in, out);
    cr_assert_eq(out[0].type, FBW_SQL_VARYING);
    cr_assert_eq(out[0].u.bytes.n, 2, "spaces of a UTF8 CHAR are padding");
    cr_assert_eq(out[1].u.bytes.n, 3, "zero bytes of an OCTETS CHAR are padding, a space is not");
    cr_assert_eq(out[2].u.bytes.n, 4, "hex digits keep their trailing zeros");
    cr_assert(out[2].hex);
    cr_assert(out[3].is_null);
    cr_assert_eq(out[4].type, FBW_SQL_VARYING);
    cr_assert_eq(out[4].u.bytes.n, 3, "a VARCHAR's own trailing spaces are data");
    /* in place works too */
    fbw_values_compact(&described, &wire, in, in);
    cr_assert_eq(in[0].u.bytes.n, 2);
}

/* Encode values in `f` with `protocol` into b (reset first). */
static void encode(fbw_buf *b, const fbw_msgfmt *f, int protocol, const fbw_value *v)
{
    fbw_wr w;
    fbw_err e;
    fbw_buf_reset(b);
    fbw_wr_init(&w, b);
    cr_assert_eq(fbw_msg_encode(&w, f, protocol, v, &e), FBW_OK, "%s", e.msg);
}

/* A row sent compact expands to exactly the bytes the described format carries. */
static void expand_matches(int protocol)
{
    static const char euro_e[] = "\xe2\x82\xac\xc3\xa9"; /* 2 characters, 5 bytes */
    fbw_col d[6] = {int_col(), text_col(FBW_SQL_TEXT, FBW_CS_UTF8, 12),
                    text_col(FBW_SQL_TEXT, FBW_CS_OCTETS, 4), text_col(FBW_SQL_TEXT, FBW_CS_NONE, 3),
                    text_col(FBW_SQL_VARYING, FBW_CS_UTF8, 8), text_col(FBW_SQL_TEXT, FBW_CS_UTF8, 4)};
    fbw_msgfmt described = {d, 6, 6};
    fbw_col w[6];
    fbw_msgfmt wire = {w, 0, 6};
    all_varying(&described, &wire);
    /* what the server sends compact: no padding (or some, as a CHAR of n characters keeps) */
    fbw_value sent[6] = {{.type = FBW_SQL_LONG, .u.i64 = 7}, bytes_val(FBW_SQL_VARYING, euro_e, 5),
                         bytes_val(FBW_SQL_VARYING, "\x01", 1), bytes_val(FBW_SQL_VARYING, "ab ", 3),
                         bytes_val(FBW_SQL_VARYING, "v ", 2), {.type = FBW_SQL_VARYING, .is_null = 1}};
    /* what it sends described: CHARs padded to their byte length */
    fbw_value full[6] = {sent[0], bytes_val(FBW_SQL_TEXT, "\xe2\x82\xac\xc3\xa9       ", 12),
                         bytes_val(FBW_SQL_TEXT, "\x01\0\0\0", 4), bytes_val(FBW_SQL_TEXT, "ab ", 3),
                         sent[4], {.type = FBW_SQL_TEXT, .is_null = 1}};
    fbw_buf raw, want, got;
    fbw_buf_init(&raw);
    fbw_buf_init(&want);
    fbw_buf_init(&got);
    encode(&raw, &wire, protocol, sent);
    encode(&want, &described, protocol, full);
    fbw_value scratch[6];
    fbw_err e;
    cr_assert_eq(fbw_buf_append(&got, "x", 1), FBW_OK); /* appends after what is there */
    cr_assert_eq(fbw_msg_expand((fbw_bytes){raw.data, raw.len}, &wire, &described, protocol,
                                scratch, &got, &e), FBW_OK, "%s", e.msg);
    cr_assert_eq(got.len, want.len + 1);
    cr_assert_arr_eq(got.data + 1, want.data, want.len);
    /* and decodes as the described row */
    fbw_value v[6];
    cr_assert_eq(fbw_msg_decode((fbw_bytes){got.data + 1, want.len}, &described, protocol, v, &e),
                 FBW_OK, "%s", e.msg);
    cr_assert_eq(v[1].type, FBW_SQL_TEXT);
    cr_assert_eq(v[1].u.bytes.n, 12);
    cr_assert(v[5].is_null);
    /* a truncated or overlong message is an error, never a crash */
    for (size_t k = 0; k < raw.len; k++)
        cr_assert_neq(fbw_msg_expand((fbw_bytes){raw.data, k}, &wire, &described, protocol, scratch,
                                     &got, &e), FBW_OK, "prefix %zu", k);
    cr_assert_eq(fbw_buf_append(&raw, "\0\0\0\0", 4), FBW_OK);
    cr_assert_neq(fbw_msg_expand((fbw_bytes){raw.data, raw.len}, &wire, &described, protocol,
                                 scratch, &got, &e), FBW_OK);
    fbw_buf_free(&raw);
    fbw_buf_free(&want);
    fbw_buf_free(&got);
}

Test(compact, expand_packed) { expand_matches(13); }
Test(compact, expand_unpacked) { expand_matches(12); }

Test(compact, expand_refuses_formats_that_are_not_a_compact_pair)
{
    fbw_col d[1] = {int_col()};
    fbw_col w[1] = {text_col(FBW_SQL_VARYING, FBW_CS_UTF8, 4)};
    fbw_msgfmt described = {d, 1, 1}, wire = {w, 1, 1};
    fbw_value sent = bytes_val(FBW_SQL_VARYING, "ab", 2), scratch[1];
    fbw_buf raw, out;
    fbw_buf_init(&raw);
    fbw_buf_init(&out);
    encode(&raw, &wire, 13, &sent);
    fbw_err e;
    cr_assert_eq(fbw_msg_expand((fbw_bytes){raw.data, raw.len}, &wire, &described, 13, scratch, &out,
                                &e), FBW_E_USAGE);
    cr_assert(strstr(e.msg, "not a compact form"), "%s", e.msg);
    fbw_msgfmt none = {d, 0, 1};
    cr_assert_eq(fbw_msg_expand((fbw_bytes){raw.data, raw.len}, &wire, &none, 13, scratch, &out, &e),
                 FBW_E_USAGE);
    cr_assert_eq(out.len, 0, "nothing appended on error");
    fbw_buf_free(&raw);
    fbw_buf_free(&out);
}
