/* SPDX-License-Identifier: MIT */
/* test_row.c - framing, decoding and encoding of one message (wire/row.c). */
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

static int frame(const uint8_t *p, size_t n, const fbw_msgfmt *f, int protocol, fbw_bytes *raw)
{
    fbw_rd r;
    fbw_rd_init(&r, p, n, FBW_AGAIN);
    return fbw_msg_frame(&r, f, protocol, raw);
}

/* docs/protocol/messages.md §4.1: (INTEGER 42, VARCHAR(10) UTF8 "abc", DOUBLE NULL),
 * protocol 13. */
Test(row, reference_example_packed)
{
    fbw_col cols[3] = {col(FBW_SQL_LONG, 0, 0, 0), col(FBW_SQL_VARYING, 0, 4, 40),
                       col(FBW_SQL_DOUBLE, 0, 0, 0)};
    fbw_msgfmt f = {cols, 3, 3};
    static const uint8_t data[] = {0x04, 0, 0, 0, 0, 0, 0, 0x2A, 0, 0, 0, 3, 'a', 'b', 'c', 0};
    fbw_bytes raw;
    fbw_value v[3];
    fbw_err e;
    cr_assert_eq(frame(data, sizeof data, &f, 13, &raw), FBW_OK);
    cr_assert_eq(raw.n, sizeof data);
    for (size_t k = 0; k < sizeof data; k++)
        cr_assert_eq(frame(data, k, &f, 13, &raw), FBW_AGAIN, "prefix %zu", k);
    cr_assert_eq(fbw_msg_decode((fbw_bytes){data, sizeof data}, &f, 13, v, &e), FBW_OK, "%s",
                 e.msg);
    cr_assert(!v[0].is_null && v[0].u.i64 == 42);
    cr_assert(!v[1].is_null && v[1].u.bytes.n == 3 && memcmp(v[1].u.bytes.p, "abc", 3) == 0);
    cr_assert(v[2].is_null);

    /* and the encoder produces exactly those bytes */
    fbw_buf b;
    fbw_wr w;
    fbw_buf_init(&b);
    fbw_wr_init(&w, &b);
    cr_assert_eq(fbw_msg_encode(&w, &f, 13, v, &e), FBW_OK, "%s", e.msg);
    cr_assert_eq(fbw_buf_avail(&b), sizeof data);
    cr_assert_arr_eq(fbw_buf_head(&b), data, sizeof data);
    fbw_buf_free(&b);
}

/* The same row unpacked (protocol 12): every field then its xdr_short indicator. */
Test(row, reference_example_unpacked)
{
    fbw_col cols[3] = {col(FBW_SQL_LONG, 0, 0, 0), col(FBW_SQL_VARYING, 0, 4, 40),
                       col(FBW_SQL_DOUBLE, 0, 0, 0)};
    fbw_msgfmt f = {cols, 3, 3};
    static const uint8_t data[] = {0, 0, 0, 0x2A, 0, 0, 0, 0, 0, 0, 0, 3, 'a', 'b', 'c', 0,
                                   0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF};
    fbw_value v[3] = {{.type = FBW_SQL_LONG, .u.i64 = 42},
                      {.type = FBW_SQL_VARYING, .u.bytes = {(const uint8_t *)"abc", 3}},
                      {.type = FBW_SQL_DOUBLE, .is_null = 1}};
    fbw_buf b;
    fbw_wr w;
    fbw_err e;
    fbw_buf_init(&b);
    fbw_wr_init(&w, &b);
    cr_assert_eq(fbw_msg_encode(&w, &f, 12, v, &e), FBW_OK, "%s", e.msg);
    cr_assert_eq(fbw_buf_avail(&b), sizeof data);
    cr_assert_arr_eq(fbw_buf_head(&b), data, sizeof data);
    fbw_value d[3];
    fbw_bytes raw;
    cr_assert_eq(frame(data, sizeof data, &f, 12, &raw), FBW_OK);
    cr_assert_eq(fbw_msg_decode(raw, &f, 12, d, &e), FBW_OK);
    cr_assert(d[0].u.i64 == 42 && !d[1].is_null && d[2].is_null);
    fbw_buf_free(&b);
}

/* Byte-level XDR of the types whose encoding is easy to get wrong (src/common/xdr.cpp). */
Test(row, per_type_wire_bytes)
{
    fbw_col cols[6] = {col(FBW_SQL_SHORT, 0, 0, 0),   col(FBW_SQL_BOOLEAN, 0, 0, 0),
                       col(FBW_SQL_INT128, 0, 0, 0),  col(FBW_SQL_TIME_TZ_EX, 0, 0, 0),
                       col(FBW_SQL_TEXT, 0, 0, 3),    col(FBW_SQL_BLOB, 0, 0, 0)};
    fbw_msgfmt f = {cols, 6, 6};
    fbw_value v[6] = {{.type = FBW_SQL_SHORT, .u.i64 = -2},
                      {.type = FBW_SQL_BOOLEAN, .u.boolean = 1},
                      {.type = FBW_SQL_INT128, .u.i128 = {-1, UINT64_MAX - 1}},
                      {.type = FBW_SQL_TIME_TZ_EX},
                      {.type = FBW_SQL_TEXT, .u.bytes = {(const uint8_t *)"a", 1}},
                      {.type = FBW_SQL_BLOB, .u.quad = {0x81, 2}}};
    v[3].u.dt.time = 0x01020304;
    v[3].u.dt.zone = 65000;
    v[3].u.dt.offset = -60;
    static const uint8_t want[] = {
        0, 0, 0, 0,                                            /* bitmap */
        0xFF, 0xFF, 0xFF, 0xFE,                                /* short -2, sign-extended */
        1, 0, 0, 0,                                            /* boolean: opaque(1) */
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,        /* int128 -2: high half */
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE,        /* low half */
        1, 2, 3, 4, 0xFF, 0xFF, 0xFD, 0xE8, 0xFF, 0xFF, 0xFF, 0xC4, /* time, zone, offset */
        'a', ' ', ' ', 0,                                      /* CHAR(3) space padded */
        0, 0, 0, 0x81, 0, 0, 0, 2,                             /* quad high, low */
    };
    fbw_buf b;
    fbw_wr w;
    fbw_err e;
    fbw_buf_init(&b);
    fbw_wr_init(&w, &b);
    cr_assert_eq(fbw_msg_encode(&w, &f, 13, v, &e), FBW_OK, "%s", e.msg);
    cr_assert_eq(fbw_buf_avail(&b), sizeof want);
    cr_assert_arr_eq(fbw_buf_head(&b), want, sizeof want);
    fbw_value d[6];
    cr_assert_eq(fbw_msg_decode((fbw_bytes){want, sizeof want}, &f, 13, d, &e), FBW_OK);
    cr_assert_eq(d[0].u.i64, -2);
    cr_assert_eq(d[1].u.boolean, 1);
    cr_assert(d[2].u.i128.hi == -1 && d[2].u.i128.lo == UINT64_MAX - 1);
    cr_assert(d[3].u.dt.time == 0x01020304 && d[3].u.dt.zone == 65000 &&
              d[3].u.dt.offset == -60 && d[3].u.dt.has_offset);
    cr_assert(d[4].u.bytes.n == 3 && memcmp(d[4].u.bytes.p, "a  ", 3) == 0);
    cr_assert(d[5].u.quad.high == 0x81 && d[5].u.quad.low == 2);
    fbw_buf_free(&b);
}

/* A message with every type, in both framings, with a NULL in each position in turn. */
static fbw_col rt_cols[] = {
    {FBW_SQL_TEXT, 0, 0, 4, 5, 1},         {FBW_SQL_VARYING, 0, 0, 4, 20, 1},
    {FBW_SQL_SHORT, -1, 0, 0, 2, 1},       {FBW_SQL_LONG, -2, 0, 0, 4, 1},
    {FBW_SQL_INT64, 0, 0, 0, 8, 1},        {FBW_SQL_INT128, -5, 0, 0, 16, 1},
    {FBW_SQL_FLOAT, 0, 0, 0, 4, 1},        {FBW_SQL_DOUBLE, 0, 0, 0, 8, 1},
    {FBW_SQL_D_FLOAT, 0, 0, 0, 8, 1},      {FBW_SQL_DEC16, 0, 0, 0, 8, 1},
    {FBW_SQL_DEC34, 0, 0, 0, 16, 1},       {FBW_SQL_TYPE_DATE, 0, 0, 0, 4, 1},
    {FBW_SQL_TYPE_TIME, 0, 0, 0, 4, 1},    {FBW_SQL_TIMESTAMP, 0, 0, 0, 8, 1},
    {FBW_SQL_TIME_TZ, 0, 0, 0, 8, 1},      {FBW_SQL_TIME_TZ_EX, 0, 0, 0, 8, 1},
    {FBW_SQL_TIMESTAMP_TZ, 0, 0, 0, 12, 1}, {FBW_SQL_TIMESTAMP_TZ_EX, 0, 0, 0, 12, 1},
    {FBW_SQL_BOOLEAN, 0, 0, 0, 1, 1},      {FBW_SQL_BLOB, 0, 1, 4, 8, 1},
    {FBW_SQL_ARRAY, 0, 0, 0, 8, 1},        {FBW_SQL_QUAD, 0, 0, 0, 8, 1},
    {FBW_SQL_NULL, 0, 0, 0, 0, 1},
};
#define NRT (sizeof rt_cols / sizeof rt_cols[0])

static void rt_values(fbw_value *v)
{
    memset(v, 0, NRT * sizeof *v);
    for (size_t i = 0; i < NRT; i++)
        v[i].type = rt_cols[i].type;
    v[0].u.bytes = (fbw_bytes){(const uint8_t *)"abcde", 5};
    v[1].u.bytes = (fbw_bytes){(const uint8_t *)"\xc3\xa9t\xc3\xa9", 6};
    v[2].u.i64 = -32768;
    v[3].u.i64 = INT32_MAX;
    v[4].u.i64 = INT64_MIN;
    v[5].u.i128 = (fbw_i128){INT64_MIN, 0};
    v[6].u.f32 = -1.5f;
    v[7].u.f64 = 1e300;
    v[8].u.f64 = -0.25;
    for (int k = 0; k < 8; k++)
        v[9].u.dec[k] = (uint8_t)(0x22 + k);
    for (int k = 0; k < 16; k++)
        v[10].u.dec[k] = (uint8_t)(0xA0 + k);
    v[11].u.dt.date = -678575;
    v[12].u.dt.time = 863999999;
    v[13].u.dt.date = 2973483, v[13].u.dt.time = 1;
    v[14].u.dt.time = 5, v[14].u.dt.zone = 1439 + 60, v[14].u.dt.offset = 60;
    v[15].u.dt.time = 6, v[15].u.dt.zone = 65000, v[15].u.dt.offset = -300;
    v[16].u.dt.date = 7, v[16].u.dt.time = 8, v[16].u.dt.zone = 65535;
    v[17].u.dt.date = 9, v[17].u.dt.time = 10, v[17].u.dt.zone = 64000, v[17].u.dt.offset = 840;
    v[18].u.boolean = 1;
    v[19].u.quad.high = 0x12345678, v[19].u.quad.low = 0x9ABCDEF0;
    v[20].u.quad.high = 1, v[20].u.quad.low = 2;
    v[21].u.quad.high = 3, v[21].u.quad.low = 4;
    v[22].is_null = 1;
    for (size_t i = 14; i <= 17; i++)
        v[i].u.dt.has_offset = 1;
}

static void expect_same(const fbw_value *a, const fbw_value *b, size_t i)
{
    cr_assert_eq(a->is_null, b->is_null, "field %zu null flag", i);
    if (a->is_null)
        return;
    cr_assert_eq(a->type, b->type, "field %zu", i);
    switch (a->type) {
    case FBW_SQL_TEXT:
    case FBW_SQL_VARYING:
        cr_assert_eq(a->u.bytes.n, b->u.bytes.n, "field %zu", i);
        cr_assert(memcmp(a->u.bytes.p, b->u.bytes.p, a->u.bytes.n) == 0, "field %zu", i);
        break;
    case FBW_SQL_SHORT: case FBW_SQL_LONG: case FBW_SQL_INT64:
        cr_assert_eq(a->u.i64, b->u.i64, "field %zu", i);
        break;
    case FBW_SQL_INT128:
        cr_assert(a->u.i128.hi == b->u.i128.hi && a->u.i128.lo == b->u.i128.lo);
        break;
    case FBW_SQL_FLOAT: cr_assert_eq(a->u.f32, b->u.f32); break;
    case FBW_SQL_DOUBLE: case FBW_SQL_D_FLOAT: cr_assert_eq(a->u.f64, b->u.f64); break;
    case FBW_SQL_DEC16: cr_assert_arr_eq(a->u.dec, b->u.dec, 8); break;
    case FBW_SQL_DEC34: cr_assert_arr_eq(a->u.dec, b->u.dec, 16); break;
    case FBW_SQL_BOOLEAN: cr_assert_eq(a->u.boolean, b->u.boolean); break;
    case FBW_SQL_BLOB: case FBW_SQL_ARRAY: case FBW_SQL_QUAD:
        cr_assert(a->u.quad.high == b->u.quad.high && a->u.quad.low == b->u.quad.low);
        break;
    case FBW_SQL_NULL: break;
    default:
        cr_assert_eq(a->u.dt.date, b->u.dt.date, "field %zu", i);
        cr_assert_eq(a->u.dt.time, b->u.dt.time, "field %zu", i);
        cr_assert_eq(a->u.dt.zone, b->u.dt.zone, "field %zu", i);
        cr_assert_eq(a->u.dt.offset, b->u.dt.offset, "field %zu", i);
    }
}

static void round_trip(int protocol, size_t null_at /* NRT: none; NRT+1: all */)
{
    fbw_msgfmt f = {rt_cols, NRT, NRT};
    fbw_value v[NRT], d[NRT];
    fbw_buf b;
    fbw_wr w;
    fbw_err e;
    fbw_bytes raw;
    rt_values(v);
    for (size_t i = 0; i < NRT; i++)
        if (i == null_at || null_at == NRT + 1)
            v[i].is_null = 1;
    fbw_buf_init(&b);
    fbw_wr_init(&w, &b);
    cr_assert_eq(fbw_msg_encode(&w, &f, protocol, v, &e), FBW_OK, "%s", e.msg);
    /* a second message behind it must not be swallowed */
    fbw_xdr_put_u32(&w, 0xDEADBEEF);
    size_t n = fbw_buf_avail(&b) - 4;
    cr_assert_eq(frame(fbw_buf_head(&b), n + 4, &f, protocol, &raw), FBW_OK);
    cr_assert_eq(raw.n, n, "P%d null_at %zu", protocol, null_at);
    for (size_t k = 0; k < n; k++)
        cr_assert_eq(frame(fbw_buf_head(&b), k, &f, protocol, &raw), FBW_AGAIN,
                     "P%d prefix %zu", protocol, k);
    cr_assert_eq(fbw_msg_decode((fbw_bytes){fbw_buf_head(&b), n}, &f, protocol, d, &e), FBW_OK,
                 "%s", e.msg);
    for (size_t i = 0; i < NRT; i++)
        expect_same(&v[i], &d[i], i);
    fbw_buf_free(&b);
}

Test(row, round_trip_every_type_null_everywhere)
{
    for (int protocol = 12; protocol <= 13; protocol++)
        for (size_t at = 0; at <= NRT + 1; at++)
            round_trip(protocol, at);
}

Test(row, bitmap_spans_several_words)
{
    enum { N = 40 };
    fbw_col c[N];
    fbw_value v[N], d[N];
    for (int i = 0; i < N; i++) {
        c[i] = col(FBW_SQL_LONG, 0, 0, 0);
        memset(&v[i], 0, sizeof v[i]);
        v[i].type = FBW_SQL_LONG;
        v[i].u.i64 = i;
        v[i].is_null = (uint8_t)(i % 3 == 0 || i == 39);
    }
    fbw_msgfmt f = {c, N, N};
    fbw_buf b;
    fbw_wr w;
    fbw_err e;
    fbw_buf_init(&b);
    fbw_wr_init(&w, &b);
    cr_assert_eq(fbw_msg_encode(&w, &f, 13, v, &e), FBW_OK);
    const uint8_t *p = fbw_buf_head(&b);
    /* 5 bitmap bytes padded to 8: nulls at 0,3,6 -> 0x49; 9,12,15 -> 0x92; 39 -> bit 7 of byte 4 */
    cr_assert_eq(p[0], 0x49);
    cr_assert_eq(p[1], 0x92);
    cr_assert_eq(p[4] & 0x80, 0x80);
    cr_assert(p[5] == 0 && p[6] == 0 && p[7] == 0);
    size_t nonnull = 0;
    for (int i = 0; i < N; i++)
        nonnull += !v[i].is_null;
    cr_assert_eq(fbw_buf_avail(&b), 8 + 4 * nonnull);
    cr_assert_eq(fbw_msg_decode((fbw_bytes){p, fbw_buf_avail(&b)}, &f, 13, d, &e), FBW_OK);
    for (int i = 0; i < N; i++)
        expect_same(&v[i], &d[i], (size_t)i);
    fbw_buf_free(&b);
}

/* VARCHAR of the largest size Firebird allows: 8191 four-byte UTF-8 characters. */
Test(row, long_varchar_of_4_byte_utf8)
{
    enum { CH = 8191 };
    uint8_t *s = malloc(CH * 4);
    cr_assert(s);
    for (int i = 0; i < CH; i++)
        memcpy(s + 4 * i, "\xF0\x9F\x98\x80", 4); /* U+1F600 */
    fbw_col c = col(FBW_SQL_VARYING, 0, FBW_CS_UTF8, CH * 4);
    fbw_msgfmt f = {&c, 1, 1};
    fbw_value v = {.type = FBW_SQL_VARYING, .u.bytes = {s, CH * 4}}, d;
    for (int protocol = 12; protocol <= 13; protocol++) {
        fbw_buf b;
        fbw_wr w;
        fbw_err e;
        fbw_bytes raw;
        fbw_buf_init(&b);
        fbw_wr_init(&w, &b);
        cr_assert_eq(fbw_msg_encode(&w, &f, protocol, &v, &e), FBW_OK);
        cr_assert_eq(frame(fbw_buf_head(&b), fbw_buf_avail(&b), &f, protocol, &raw), FBW_OK);
        fbw_bytes part;
        cr_assert_eq(frame(fbw_buf_head(&b), fbw_buf_avail(&b) - 1, &f, protocol, &part),
                     FBW_AGAIN);
        cr_assert_eq(fbw_msg_decode(raw, &f, protocol, &d, &e), FBW_OK, "P%d %s", protocol, e.msg);
        cr_assert_eq(d.u.bytes.n, CH * 4);
        cr_assert(memcmp(d.u.bytes.p, s, CH * 4) == 0);
        fbw_buf_free(&b);
    }
    free(s);
}

Test(row, varying_longer_than_declared_is_proto)
{
    fbw_col c = col(FBW_SQL_VARYING, 0, 0, 4);
    fbw_msgfmt f = {&c, 1, 1};
    static const uint8_t p13[] = {0, 0, 0, 0, 0, 0, 0, 5, 'a', 'b', 'c', 'd', 'e', 0, 0, 0};
    fbw_bytes raw;
    cr_assert_eq(frame(p13, sizeof p13, &f, 13, &raw), FBW_E_PROTO);
    /* a sign-extended huge length too */
    static const uint8_t huge[] = {0, 0, 0, 0, 0xFF, 0xFF, 0x80, 0};
    cr_assert_eq(frame(huge, sizeof huge, &f, 13, &raw), FBW_E_PROTO);
    fbw_value v;
    fbw_err e;
    cr_assert_eq(fbw_msg_decode((fbw_bytes){p13, sizeof p13}, &f, 13, &v, &e), FBW_E_PROTO);
    cr_assert(strstr(e.msg, "longer than its declared"), "%s", e.msg);
}

Test(row, decode_rejects_leftover_and_short_input)
{
    fbw_col c = col(FBW_SQL_LONG, 0, 0, 0);
    fbw_msgfmt f = {&c, 1, 1};
    static const uint8_t extra[] = {0, 0, 0, 0, 0, 0, 0, 1, 9, 9, 9, 9};
    fbw_value v;
    fbw_err e;
    cr_assert_eq(fbw_msg_decode((fbw_bytes){extra, sizeof extra}, &f, 13, &v, &e), FBW_E_PROTO);
    cr_assert_eq(fbw_msg_decode((fbw_bytes){extra, 6}, &f, 13, &v, &e), FBW_E_PROTO);
    cr_assert_eq(fbw_msg_decode((fbw_bytes){extra, 8}, &f, 13, &v, &e), FBW_OK);
    cr_assert_eq(v.u.i64, 1);
}

Test(row, encode_checks_values)
{
    fbw_col c[2] = {col(FBW_SQL_SHORT, 0, 0, 0), col(FBW_SQL_VARYING, 0, 0, 2)};
    fbw_msgfmt f = {c, 2, 2};
    fbw_value v[2] = {{.type = FBW_SQL_SHORT, .u.i64 = 32768},
                      {.type = FBW_SQL_VARYING, .u.bytes = {(const uint8_t *)"ab", 2}}};
    fbw_buf b;
    fbw_wr w;
    fbw_err e;
    fbw_buf_init(&b);
    fbw_wr_init(&w, &b);
    cr_assert_eq(fbw_msg_encode(&w, &f, 13, v, &e), FBW_E_BADVALUE);
    v[0].u.i64 = -32768;
    v[1].u.bytes.n = 3;
    v[1].u.bytes.p = (const uint8_t *)"abc";
    cr_assert_eq(fbw_msg_encode(&w, &f, 13, v, &e), FBW_E_BADVALUE);
    v[1].type = FBW_SQL_TEXT;
    cr_assert_eq(fbw_msg_encode(&w, &f, 13, v, &e), FBW_E_USAGE);
    v[1].is_null = 1; /* a NULL needs no matching type */
    fbw_buf_reset(&b);
    cr_assert_eq(fbw_msg_encode(&w, &f, 13, v, &e), FBW_OK);
    fbw_buf_free(&b);
}

/* OCTETS CHAR is zero padded; hex views (from fbw_value_from_text) encode as bytes. */
Test(row, octets_padding_and_hex_values)
{
    fbw_col c = col(FBW_SQL_TEXT, 0, FBW_CS_OCTETS, 4);
    fbw_msgfmt f = {&c, 1, 1};
    fbw_value v = {.type = FBW_SQL_TEXT, .hex = 1, .u.bytes = {(const uint8_t *)"0aFf", 4}};
    static const uint8_t want[] = {0, 0, 0, 0, 0x0A, 0xFF, 0, 0};
    fbw_buf b;
    fbw_wr w;
    fbw_err e;
    fbw_buf_init(&b);
    fbw_wr_init(&w, &b);
    cr_assert_eq(fbw_msg_encode(&w, &f, 13, &v, &e), FBW_OK);
    cr_assert_eq(fbw_buf_avail(&b), sizeof want);
    cr_assert_arr_eq(fbw_buf_head(&b), want, sizeof want);
    fbw_buf_free(&b);
}
