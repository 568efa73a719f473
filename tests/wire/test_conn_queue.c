/* SPDX-License-Identifier: MIT */
/* test_conn_queue.c - the connection's request queue at READY (wire/conn.h) against the scripted
 * server (tests/support/script.h), no socket: what the outstanding replies are (what a wait that
 * times out names), op_cancel queued without being counted as a reply, and a connection the
 * blocking layer gave up on (fbw_conn_fail) keeping the list of what it waited for. */
#include <criterion/criterion.h>

#include "script.h"

Test(conn_queue, pending_ops_cancel_and_fail)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    fbw_tx_opts o;
    fbw_tx_opts_init(&o);
    cr_assert_eq(fbw_tx_new(s.c, &t, NULL), FBW_OK);
    cr_assert_eq(fbw_conn_pending_op(s.c, 0), 0, "nothing outstanding yet");
    cr_assert_eq(fbw_tx_start(t, &o), FBW_OK);
    cr_assert_eq(fbw_conn_outstanding(s.c), 1);
    cr_assert_eq(fbw_conn_pending_op(s.c, 0), FBW_OP_TRANSACTION);
    cr_assert_eq(fbw_conn_pending_op(s.c, 1), 0, "no second reply");

    /* op_cancel: a bad kind is refused; a good one is queued but expects no reply */
    cr_assert_eq(fbw_conn_cancel(s.c, 0), FBW_E_USAGE);
    cr_assert_eq(fbw_conn_cancel(s.c, FBW_CANCEL_RAISE + 1), FBW_E_USAGE);
    const uint8_t *p;
    size_t before, after;
    cr_assert_eq(fbw_conn_pending(s.c, &p, &before), FBW_OK);
    cr_assert_eq(fbw_conn_cancel(s.c, FBW_CANCEL_RAISE), FBW_OK);
    cr_assert_eq(fbw_conn_pending(s.c, &p, &after), FBW_OK);
    cr_assert_gt(after, before, "op_cancel waits in the output");
    cr_assert_eq(fbw_conn_outstanding(s.c), 1, "op_cancel is not a reply to wait for");

    /* given up: FAILED with the reason, nothing more to write, the awaited reply still named */
    fbw_err why;
    fbw_err_set(&why, FBW_E_TIMEOUT, "no reply within 10 ms");
    cr_assert_eq(fbw_conn_fail(s.c, &why), FBW_E_TIMEOUT);
    cr_assert_eq(fbw_conn_get_state(s.c), FBW_CS_FAILED);
    cr_assert_eq(fbw_conn_error(s.c)->code, FBW_E_TIMEOUT);
    cr_assert_str_eq(fbw_conn_error(s.c)->msg, "no reply within 10 ms");
    cr_assert_eq(fbw_conn_pending_op(s.c, 0), FBW_OP_TRANSACTION);
    fbw_conn_pending(s.c, &p, &after);
    cr_assert_eq(after, 0, "a failed connection writes nothing, not even the queued op_cancel");
    cr_assert_eq(fbw_conn_cancel(s.c, FBW_CANCEL_RAISE), FBW_E_USAGE);
    /* a second failure keeps the first reason */
    fbw_err other;
    fbw_err_set(&other, FBW_E_IO, "later");
    cr_assert_eq(fbw_conn_fail(s.c, &other), FBW_E_TIMEOUT);
    fbw_tx_free(t);
    fbw_script_close(&s);
}
