/* SPDX-License-Identifier: MIT */
/* test_sdl.c - the element of an array slice from its SDL (wire/sdl.c): each element type, the
 * declarations before it skipped, strings as C strings, and every malformation an error naming its
 * offset, never a read past the end. */
#include <criterion/criterion.h>

#include "msg.h"

#include <stdlib.h>
#include <string.h>

static fbw_col elem_of(const uint8_t *sdl, size_t n)
{
    fbw_col c;
    fbw_err err;
    cr_assert_eq(fbw_sdl_element(sdl, n, &c, &err), FBW_OK, "%s", err.msg);
    return c;
}

Test(sdl, element_types_and_strides)
{
    /* relation, field, fid and rid before the struct; the program after it */
    static const uint8_t shorts[] = {1, 2, 2, 'T', '1', 4, 1, 'A', 5, 3, 0, 3, 9, 0,
                                     6, 1, 7, 254, 36, 1, 8, 0, 255};
    fbw_col c = elem_of(shorts, sizeof shorts);
    cr_assert_eq(c.type, FBW_SQL_SHORT);
    cr_assert_eq(c.scale, -2);
    cr_assert_eq(fbw_slice_stride(&c), 2);

    static const uint8_t text2[] = {1, 6, 1, 15, 4, 0, 10, 0};
    c = elem_of(text2, sizeof text2);
    cr_assert_eq(c.type, FBW_SQL_TEXT);
    cr_assert_eq(c.charset, 4);
    cr_assert_eq(c.length, 10);
    cr_assert_eq(fbw_slice_stride(&c), 10);

    /* blr_varying2 of 10: a C string of 12 bytes (sdl_desc): count + at most 11 bytes */
    static const uint8_t varying2[] = {1, 6, 1, 38, 0, 0, 10, 0};
    c = elem_of(varying2, sizeof varying2);
    cr_assert_eq(c.type, FBW_SQL_VARYING);
    cr_assert_eq(c.length, 11);
    cr_assert_eq(fbw_slice_stride(&c), 12);

    /* blr_cstring of 8: count + at most 7 bytes, 8 in the buffer */
    static const uint8_t cstring[] = {1, 6, 1, 40, 8, 0};
    c = elem_of(cstring, sizeof cstring);
    cr_assert_eq(c.type, FBW_SQL_VARYING);
    cr_assert_eq(c.length, 7);
    cr_assert_eq(fbw_slice_stride(&c), 8);

    static const uint8_t ts[] = {1, 6, 1, 35};
    c = elem_of(ts, sizeof ts);
    cr_assert_eq(c.type, FBW_SQL_TIMESTAMP);
    cr_assert_eq(fbw_slice_stride(&c), 8);
}

Test(sdl, malformations_name_the_offset)
{
    static const struct {
        uint8_t b[8];
        size_t n;
        const char *msg;
    } bad[] = {
        {{2}, 1, "at offset 0: version byte 2"},
        {{1, 6, 2, 7, 0}, 5, "at offset 2: struct of elements other than 1: 2"},
        {{1, 6, 1, 99}, 4, "at offset 3: element type byte 99"},
        {{1, 6, 1, 14, 0, 0}, 6, "zero-length text element"},
        {{1, 2, 5, 'T'}, 4, "truncated"},
        {{1, 36}, 2, "no element type"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fbw_col c;
        fbw_err err;
        cr_assert_eq(fbw_sdl_element(bad[i].b, bad[i].n, &c, &err), FBW_E_BADVALUE, "case %zu", i);
        cr_assert(strstr(err.msg, bad[i].msg), "case %zu: %s", i, err.msg);
    }
    /* every strict prefix of a good SDL: an error, on an exact-size copy */
    static const uint8_t good[] = {1, 2, 2, 'T', '1', 6, 1, 15, 4, 0, 10, 0};
    for (size_t len = 0; len < sizeof good; len++) {
        uint8_t *cut = malloc(len ? len : 1);
        memcpy(cut, good, len);
        fbw_col c;
        fbw_err err;
        cr_assert_eq(fbw_sdl_element(cut, len, &c, &err), FBW_E_BADVALUE, "prefix %zu", len);
        free(cut);
    }
}
