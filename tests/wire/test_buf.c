/* SPDX-License-Identifier: MIT */
/* test_buf.c - the growable buffer: appends, consumption, text output. */
#include "buf.h"

#include <criterion/criterion.h>
#include <string.h>

Test(buf, append_and_consume)
{
    fbw_buf b;
    fbw_buf_init(&b);
    cr_assert_eq(fbw_buf_append(&b, "abcdef", 6), FBW_OK);
    fbw_buf_consume(&b, 2);
    cr_assert_eq(fbw_buf_avail(&b), 4);
    cr_expect_eq(memcmp(fbw_buf_head(&b), "cdef", 4), 0);
    fbw_buf_consume(&b, 4);
    cr_expect_eq(fbw_buf_avail(&b), 0);
    fbw_buf_free(&b);
}

/* printf output of any length lands whole, without the terminating NUL, after what was there. */
Test(buf, printf_is_never_cut)
{
    fbw_buf b;
    fbw_buf_init(&b);
    cr_assert_eq(fbw_buf_puts(&b, "x="), FBW_OK);
    char big[5000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    cr_assert_eq(fbw_buf_printf(&b, "%d:%s;", 42, big), FBW_OK);
    cr_assert_eq(fbw_buf_printf(&b, "%s", ""), FBW_OK);
    size_t want = 2 + 3 + (sizeof big - 1) + 1;
    cr_assert_eq(fbw_buf_avail(&b), want, "%zu bytes", fbw_buf_avail(&b));
    const char *h = (const char *)fbw_buf_head(&b);
    cr_expect_eq(memcmp(h, "x=42:qqq", 8), 0);
    cr_expect_eq(h[want - 1], ';');
    cr_expect_eq(h[want - 2], 'q');
    fbw_buf_free(&b);
}

/* The wiping free (passwords, session keys) zeroes the bytes before it releases them, and leaves
 * the buffer empty and reusable like fbw_buf_free. */
Test(buf, wipe_free_leaves_it_empty_and_reusable)
{
    fbw_buf b;
    fbw_buf_init(&b);
    cr_assert_eq(fbw_buf_puts(&b, "secret"), FBW_OK);
    fbw_buf_wipe_free(&b);
    cr_expect_eq(fbw_buf_avail(&b), 0);
    cr_expect_null(b.data);
    cr_assert_eq(fbw_buf_puts(&b, "again"), FBW_OK);
    cr_expect_eq(memcmp(fbw_buf_head(&b), "again", 5), 0);
    fbw_buf_wipe_free(&b);
    fbw_buf_wipe_free(&b); /* twice is harmless, as free is */
}
