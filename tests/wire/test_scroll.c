/* SPDX-License-Identifier: MIT */
/* test_scroll.c - scrollable cursors (wire/stmt.h, protocol 18) against the scripted server
 * (tests/support/script.h), no socket: the cursor flag op_execute carries, what each scroll fetch
 * puts in op_fetch_scroll (op, position, one row, the row format on the first fetch only), its row
 * or end of cursor, the record count of op_info_cursor, and every refusal (protocol below 18, a
 * forward-only cursor, no cursor, an unknown op) made before anything is queued. The moves against
 * a real server are tests/integ/test_scroll.c. */
#include <criterion/criterion.h>

#include "script.h"

#include <stdio.h>
#include <string.h>

static fbw_value id(int64_t v)
{
    fbw_value x;
    memset(&x, 0, sizeof x);
    x.type = FBW_SQL_LONG;
    x.u.i64 = v;
    return x;
}

/* A SELECT prepared at protocol `protocol`, in transaction *t. */
static fbw_stmt *select_at(fbw_script *s, int protocol, fbw_tx **t)
{
    fbw_script_open_at(s, protocol, 0);
    fbw_script_start(s, t, 1);
    return fbw_script_prepare(s, *t, "SELECT c FROM t WHERE id=?");
}

/* The first character of buffered row i's VARCHAR column. */
static char row_letter(const fbw_stmt *st, size_t i)
{
    fbw_value v;
    fbw_err err;
    cr_assert_eq(fbw_stmt_row(st, i, &v, &err), FBW_OK, "%s", err.msg);
    cr_assert_geq(v.u.bytes.n, 1);
    return (char)v.u.bytes.p[0];
}

Test(scroll, execute_carries_the_cursor_flag)
{
    fbw_script s;
    fbw_tx *t;
    fbw_stmt *st = select_at(&s, 18, &t);
    fbw_value v = id(1);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_expect_eq(s.last_cursor_flags, 0, "forward-only by default");
    cr_assert_eq(fbw_stmt_scrollable(st), 0);
    cr_assert_eq(fbw_stmt_set_scrollable(st, 1), FBW_OK, "%s", fbw_stmt_error(st)->msg);
    cr_assert_eq(fbw_stmt_scrollable(st), 1);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_expect_eq(s.last_cursor_flags, 1, "CURSOR_TYPE_SCROLLABLE");
    cr_expect_eq(fbw_script_count(&s, FBW_OP_FETCH), 2, "the first forward batch as before");
    cr_assert_eq(fbw_stmt_set_scrollable(st, 0), FBW_OK);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_expect_eq(s.last_cursor_flags, 0, "forward-only again");
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

/* Every op travels as Firebird's P_FETCH value with its position (only ABSOLUTE and RELATIVE
 * carry one), asks for one row, and only the first fetch after execute carries the row format. */
Test(scroll, each_op_is_encoded_and_answered)
{
    fbw_script s;
    fbw_tx *t;
    fbw_stmt *st = select_at(&s, 18, &t);
    s.rows = 30;
    cr_assert_eq(fbw_stmt_set_scrollable(st, 1), FBW_OK);
    fbw_value v = id(1);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, FBW_EXEC_NO_FETCH), FBW_OK);
    fbw_script_wait_ok(&s);
    static const struct {
        int op;
        int32_t pos, sent;
    } moves[] = {{FBW_FETCH_ABSOLUTE, 7, 7}, {FBW_FETCH_NEXT, 99, 0},   {FBW_FETCH_PRIOR, 5, 0},
                 {FBW_FETCH_FIRST, 3, 0},    {FBW_FETCH_LAST, -2, 0},   {FBW_FETCH_RELATIVE, -3, -3},
                 {FBW_FETCH_ABSOLUTE, -1, -1}, {FBW_FETCH_RELATIVE, 25, 25}};
    for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++) {
        fbw_stmt_clear_rows(st);
        unsigned before = s.nlog;
        cr_assert_eq(fbw_stmt_fetch_scroll(st, moves[i].op, moves[i].pos), FBW_OK);
        fbw_script_wait_ok(&s);
        cr_assert_eq(s.nlog, before + 1, "move %zu: one packet", i);
        cr_expect_eq(s.log[before], FBW_OP_FETCH_SCROLL);
        cr_expect_eq(s.last_fetch_op, moves[i].op, "move %zu", i);
        cr_expect_eq(s.last_fetch_pos, moves[i].sent, "move %zu: position", i);
        cr_expect_eq(s.last_fetch_messages, 1, "move %zu: one row asked", i);
        if (i == 0)
            cr_expect_gt(s.last_fetch_blr, 0, "the first fetch names the row format");
        else
            cr_expect_eq(s.last_fetch_blr, 0, "move %zu: no row format after the first", i);
        cr_assert_eq(fbw_stmt_row_count(st), 1, "move %zu", i);
        cr_expect_eq(row_letter(st, 0), 'a' + (char)((uint32_t)moves[i].sent % 26), "move %zu", i);
        cr_expect_eq(fbw_stmt_eof(st), 0);
    }
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

/* A move past either end: no row, eof set; the cursor stays open and the next move finds rows. */
Test(scroll, move_past_the_end_keeps_the_cursor)
{
    fbw_script s;
    fbw_tx *t;
    fbw_stmt *st = select_at(&s, 18, &t);
    cr_assert_eq(fbw_stmt_set_scrollable(st, 1), FBW_OK);
    fbw_value v = id(1);
    s.rows = 3;
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_stmt_row_count(st), 3);
    cr_assert(fbw_stmt_eof(st), "the forward batch read to the end");
    s.rows = 0; /* the script answers the next move with end of cursor */
    fbw_stmt_clear_rows(st);
    cr_assert_eq(fbw_stmt_fetch_scroll(st, FBW_FETCH_ABSOLUTE, 10), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_stmt_row_count(st), 0);
    cr_assert(fbw_stmt_eof(st));
    s.rows = 3;
    cr_assert_eq(fbw_stmt_fetch_scroll(st, FBW_FETCH_PRIOR, 0), FBW_OK, "%s",
                 fbw_stmt_error(st)->msg);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_stmt_row_count(st), 1);
    cr_assert_eq(fbw_stmt_eof(st), 0, "a row again");
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

Test(scroll, record_count)
{
    fbw_script s;
    fbw_tx *t;
    fbw_stmt *st = select_at(&s, 18, &t);
    cr_assert_eq(fbw_stmt_set_scrollable(st, 1), FBW_OK);
    fbw_value v = id(1);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_stmt_cursor_count(st), -1, "not asked yet");
    s.cursor_count = 1234567;
    unsigned before = s.nlog;
    cr_assert_eq(fbw_stmt_count_cursor(st), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(s.nlog, before + 1);
    cr_expect_eq(s.log[before], FBW_OP_INFO_CURSOR);
    cr_assert_eq(fbw_stmt_cursor_count(st), 1234567, "%s", fbw_stmt_error(st)->msg);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    cr_assert_eq(fbw_stmt_cursor_count(st), -1, "a new cursor forgets the old count");
    fbw_script_wait_ok(&s);
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

/* Every scroll call below protocol 18 is refused with FBW_E_UNSUPPORTED naming the protocol, and
 * nothing is queued. */
Test(scroll, refused_below_protocol_18)
{
    for (int protocol = 16; protocol <= 17; protocol++) {
        fbw_script s;
        fbw_tx *t;
        fbw_stmt *st = select_at(&s, protocol, &t);
        fbw_value v = id(1);
        cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
        fbw_script_wait_ok(&s);
        unsigned before = s.nlog;
        cr_assert_eq(fbw_stmt_set_scrollable(st, 1), FBW_E_UNSUPPORTED);
        cr_expect_eq(fbw_stmt_scrollable(st), 0);
        char want[32];
        snprintf(want, sizeof want, "speaks protocol %d", protocol);
        cr_expect(strstr(fbw_stmt_error(st)->msg, "needs protocol 18") &&
                      strstr(fbw_stmt_error(st)->msg, want),
                  "%s", fbw_stmt_error(st)->msg);
        cr_assert_eq(fbw_stmt_fetch_scroll(st, FBW_FETCH_FIRST, 0), FBW_E_UNSUPPORTED);
        cr_expect(strstr(fbw_stmt_error(st)->msg, "FETCH FIRST needs protocol 18"), "%s",
                  fbw_stmt_error(st)->msg);
        cr_assert_eq(fbw_stmt_count_cursor(st), FBW_E_UNSUPPORTED);
        cr_assert_eq(fbw_stmt_set_scrollable(st, 0), FBW_OK, "forward-only is always fine");
        cr_expect_eq(fbw_conn_outstanding(s.c), 0, "nothing queued");
        fbw_script_wait_ok(&s);
        cr_expect_eq(s.nlog, before, "nothing sent");
        fbw_stmt_free(st);
        fbw_script_close(&s);
    }
}

/* At protocol 18: a forward-only cursor, no open cursor and an unknown op are refused too. */
Test(scroll, refused_without_a_scrollable_cursor)
{
    fbw_script s;
    fbw_tx *t;
    fbw_stmt *st = select_at(&s, 18, &t);
    unsigned before = s.nlog;
    cr_assert_eq(fbw_stmt_fetch_scroll(st, FBW_FETCH_NEXT, 0), FBW_E_USAGE);
    cr_expect(strstr(fbw_stmt_error(st)->msg, "no open cursor"), "%s", fbw_stmt_error(st)->msg);
    fbw_value v = id(1);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_script_wait_ok(&s);
    before = s.nlog;
    cr_assert_eq(fbw_stmt_fetch_scroll(st, FBW_FETCH_LAST, 0), FBW_E_USAGE);
    cr_expect(strstr(fbw_stmt_error(st)->msg, "FETCH LAST: the cursor is forward-only"), "%s",
              fbw_stmt_error(st)->msg);
    cr_assert_eq(fbw_stmt_count_cursor(st), FBW_E_USAGE);
    cr_assert_eq(fbw_stmt_set_scrollable(st, 1), FBW_OK);
    cr_assert_eq(fbw_stmt_fetch_scroll(st, FBW_FETCH_LAST, 0), FBW_E_USAGE,
                 "the open cursor was opened forward-only: the option counts at execute");
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_script_wait_ok(&s);
    before = s.nlog;
    cr_assert_eq(fbw_stmt_fetch_scroll(st, 6, 0), FBW_E_USAGE);
    cr_expect(strstr(fbw_stmt_error(st)->msg, "unknown scroll fetch op 6"), "%s",
              fbw_stmt_error(st)->msg);
    cr_assert_eq(fbw_stmt_fetch_scroll(st, -1, 0), FBW_E_USAGE);
    cr_expect_eq(fbw_conn_outstanding(s.c), 0, "nothing queued");
    fbw_script_wait_ok(&s);
    cr_expect_eq(s.nlog, before, "nothing sent");
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

/* The record count's reply codec: Firebird's 4-byte form, the -1 of a forward-only cursor, and
 * replies without the count. */
Test(scroll, cursor_info_decoded)
{
    int64_t n = 0;
    fbw_err err;
    const uint8_t ok[] = {FBW_INFO_CURSOR_RECORD_COUNT, 4, 0, 0x40, 0x42, 0x0F, 0, FBW_INFO_END};
    cr_assert_eq(fbw_info_cursor_count(ok, sizeof ok, &n, &err), FBW_OK, "%s", err.msg);
    cr_expect_eq(n, 1000000);
    const uint8_t minus[] = {FBW_INFO_CURSOR_RECORD_COUNT, 4, 0, 0xFF, 0xFF, 0xFF, 0xFF, 1};
    cr_assert_eq(fbw_info_cursor_count(minus, sizeof minus, &n, &err), FBW_OK);
    cr_expect_eq(n, -1);
    const uint8_t error[] = {FBW_INFO_ERROR, 4, 0, 0x05, 0x00, 0x00, 0x14, FBW_INFO_END};
    cr_expect_eq(fbw_info_cursor_count(error, sizeof error, &n, &err), FBW_E_BADVALUE);
    cr_expect(strstr(err.msg, "refused"), "%s", err.msg);
    const uint8_t cut[] = {FBW_INFO_CURSOR_RECORD_COUNT, 4, 0, 0x40, 0x42};
    cr_expect_eq(fbw_info_cursor_count(cut, sizeof cut, &n, &err), FBW_E_BADVALUE);
    cr_expect(strstr(err.msg, "truncated"), "%s", err.msg);
    const uint8_t none[] = {FBW_INFO_END};
    cr_expect_eq(fbw_info_cursor_count(none, sizeof none, &n, &err), FBW_E_BADVALUE);
    const uint8_t wide[] = {FBW_INFO_CURSOR_RECORD_COUNT, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    cr_expect_eq(fbw_info_cursor_count(wide, sizeof wide, &n, &err), FBW_E_BADVALUE);
}
