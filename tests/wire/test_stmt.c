/* SPDX-License-Identifier: MIT */
/* test_stmt.c - statements (wire/stmt.h) against a scripted server (tests/support/script.h), no
 * socket: allocate + prepare + describe in one round trip, a failed prepare, execute + first fetch
 * with rows decoded, affected-row counts, a failed execution keeping its own error (not the
 * fetch's), several executions in flight each with its own result, replies fed one byte at a
 * time, a cursor fetched later, execute immediate, and a statement freed while replies are due. */
#include <criterion/criterion.h>

#include "script.h"

#include <string.h>

static fbw_value id(int64_t v)
{
    fbw_value x;
    memset(&x, 0, sizeof x);
    x.type = FBW_SQL_LONG;
    x.u.i64 = v;
    return x;
}

Test(stmt, prepare_describes_in_one_round_trip)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    fbw_script_start(&s, &t, 1);
    s.waits = 0;
    s.nlog = 0;
    fbw_stmt *st = fbw_script_prepare(&s, t, "SELECT c FROM t WHERE id=?");
    cr_assert_eq(s.waits, 1);
    cr_assert_eq(s.nlog, 2);
    cr_assert_eq(s.log[0], FBW_OP_ALLOCATE_STATEMENT);
    cr_assert_eq(s.log[1], FBW_OP_PREPARE_STATEMENT);
    cr_assert_eq(fbw_stmt_type(st), FBW_STMT_SELECT);
    cr_assert(fbw_stmt_has_cursor(st));
    const fbw_msgfmt *in = fbw_stmt_input(st), *out = fbw_stmt_output(st);
    cr_assert_eq(in->n, 1);
    cr_assert_eq(in->cols[0].type, FBW_SQL_LONG);
    cr_assert_eq(in->cols[0].nullable, 1);
    cr_assert_eq(out->n, 1);
    cr_assert_eq(out->cols[0].type, FBW_SQL_VARYING);
    cr_assert_eq(out->cols[0].charset, FBW_CS_UTF8, "a text column's sub-type is its charset");
    cr_assert_eq(out->cols[0].length, 8000);
    /* the names the describe carried, per side */
    cr_assert_not_null(fbw_stmt_input_names(st));
    cr_expect_str_eq(fbw_stmt_input_names(st)[0].field, "P1");
    cr_assert_not_null(fbw_stmt_output_names(st));
    cr_expect_str_eq(fbw_stmt_output_names(st)[0].field, "C1");
    uint16_t h;
    cr_assert_eq(fbw_stmt_handle(st, &h), FBW_OK);
    cr_assert_neq(h, FBW_INVALID_OBJECT);
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

/* Protocol 20 carries prepare flags: the prefetch bits of the describe items always, the caller's
 * on top. Below 20 the field does not exist: no flags is fine, a caller's flag is refused before
 * anything is queued (the server would parse the text by its old rule). */
Test(stmt, prepare_flags_by_protocol)
{
    const int protocols[] = {17, 19, 20};
    for (size_t i = 0; i < sizeof protocols / sizeof protocols[0]; i++) {
        const int pv = protocols[i];
        fbw_script s;
        fbw_script_open_at(&s, pv, FBW_INLINE_BLOB_SIZE_DEFAULT);
        fbw_tx *t;
        fbw_script_start(&s, &t, 1);
        fbw_stmt *st = fbw_script_prepare(&s, t, "SELECT c FROM t WHERE id=?");
        cr_assert_eq(s.last_prepare_flags, pv >= 20 ? FBW_PREPARE_PREFETCH_METADATA : 0u, "P%d: 0x%x",
                     pv, s.last_prepare_flags);
        fbw_stmt_set_prepare_flags(st, FBW_PREPARE_REQUIRE_SEMICOLON);
        const unsigned before = s.prepares;
        const int queued = fbw_conn_outstanding(s.c);
        int rc = fbw_stmt_prepare(st, t, "SELECT c FROM t WHERE id=?;", 27);
        if (pv < 20) {
            cr_assert_eq(rc, FBW_E_UNSUPPORTED, "P%d: %s", pv, fbw_rc_name(rc));
            cr_assert_eq(fbw_stmt_error(st)->code, FBW_E_UNSUPPORTED);
            cr_assert(strstr(fbw_stmt_error(st)->msg, "protocol 20"), "%s", fbw_stmt_error(st)->msg);
            cr_assert_eq(fbw_conn_outstanding(s.c), queued, "nothing queued");
            cr_assert(fbw_stmt_prepared(st), "the earlier prepare stands");
        } else {
            cr_assert_eq(rc, FBW_OK);
            fbw_script_wait_ok(&s);
            cr_assert_eq(s.prepares, before + 1);
            cr_assert_eq(s.last_prepare_flags, FBW_PREPARE_PREFETCH_METADATA | FBW_PREPARE_REQUIRE_SEMICOLON);
            cr_assert(fbw_stmt_prepared(st));
        }
        fbw_stmt_free(st);
        fbw_script_close(&s);
    }
}

Test(stmt, failed_prepare)
{
    fbw_script s;
    fbw_script_open(&s);
    s.fail_prepare = 1;
    fbw_tx *t;
    fbw_script_start(&s, &t, 1);
    fbw_stmt *st = NULL;
    fbw_err err;
    cr_assert_eq(fbw_stmt_new(s.c, &st, &err), FBW_OK);
    cr_assert_eq(fbw_stmt_prepare(st, t, "SELEKT", 6), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_stmt_prepared(st), 0);
    cr_assert_eq(fbw_stmt_error(st)->code, FBW_E_SERVER);
    cr_assert_eq(fbw_stmt_error(st)->gds[0], 335544569u);
    /* a second prepare of the same statement works (its handle is kept) */
    cr_assert_eq(fbw_stmt_prepare(st, t, "SELECT 1", 8), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert(fbw_stmt_prepared(st));
    cr_assert_eq(fbw_stmt_error(st)->code, FBW_OK);
    cr_assert_eq(fbw_script_count(&s, FBW_OP_ALLOCATE_STATEMENT), 1);
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

static void rows_decoded(size_t chunk)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    fbw_script_start(&s, &t, 1);
    fbw_stmt *st = fbw_script_prepare(&s, t, "SELECT c FROM t WHERE id=?");
    s.rows = 3;
    s.row_text = 300;
    s.chunk = chunk;
    s.waits = 0;
    fbw_value v = id(42);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(s.waits, 1, "execute and first fetch in one round trip");
    cr_assert_eq(s.last_param, 42, "the parameter travelled");
    cr_assert_eq(fbw_stmt_error(st)->code, FBW_OK);
    cr_assert(fbw_stmt_eof(st));
    cr_assert_eq(fbw_stmt_row_count(st), 3);
    for (size_t r = 0; r < 3; r++) {
        fbw_value out;
        fbw_err err;
        cr_assert_eq(fbw_stmt_row(st, r, &out, &err), FBW_OK, "%s", err.msg);
        cr_assert_eq(out.is_null, 0);
        cr_assert_eq(out.u.bytes.n, 300);
        cr_assert_eq(out.u.bytes.p[0], 'a' + (int)r);
    }
    fbw_value out;
    fbw_err err;
    cr_assert_neq(fbw_stmt_row(st, 3, &out, &err), FBW_OK, "no row 4");
    fbw_stmt_clear_rows(st);
    cr_assert_eq(fbw_stmt_row_count(st), 0);
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

Test(stmt, rows_decoded) { rows_decoded(0); }
Test(stmt, rows_fed_one_byte_at_a_time) { rows_decoded(1); }

Test(stmt, affected_rows_counted)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_script_dml(&s, FBW_STMT_UPDATE);
    fbw_tx *t;
    fbw_script_start(&s, &t, 0);
    fbw_stmt *st = fbw_script_prepare(&s, t, "UPDATE t SET k=k+1 WHERE id=?");
    cr_assert_eq(fbw_stmt_has_cursor(st), 0);
    s.affected = 7;
    s.nlog = 0;
    fbw_value v = id(1);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, FBW_EXEC_COUNT), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_stmt_affected(st), 7);
    cr_assert_eq(s.log[0], FBW_OP_EXECUTE);
    cr_assert_eq(s.log[1], FBW_OP_INFO_SQL, "the count rides along with the execute");
    cr_assert_eq(s.nlog, 2, "no fetch without a cursor");
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

Test(stmt, failed_execute_keeps_its_own_error)
{
    fbw_script s;
    fbw_script_open(&s);
    s.fail_exec = 1;
    fbw_tx *t;
    fbw_script_start(&s, &t, 1);
    fbw_stmt *st = fbw_script_prepare(&s, t, "SELECT c FROM t WHERE id=?");
    fbw_value v = id(1);
    fbw_exec_out o;
    cr_assert_eq(fbw_stmt_execute_out(st, t, &v, 0, &o), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_script_count(&s, FBW_OP_FETCH), 1, "the fetch went out with the execute");
    cr_assert_eq(fbw_stmt_error(st)->gds[0], FBW_SCRIPT_GDS_UNIQUE,
                 "the execute's error, not the fetch's");
    cr_assert_str_eq(fbw_stmt_error(st)->sqlstate, "23000");
    cr_assert_eq(o.err.gds[0], FBW_SCRIPT_GDS_UNIQUE);
    cr_assert(o.done && o.eof);
    cr_assert_eq(o.rows, 0);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ACTIVE, "an error reply says nothing about the transaction");
    /* the next execution starts clean */
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_stmt_error(st)->code, FBW_OK);
    cr_assert_eq(fbw_stmt_row_count(st), 1);
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

Test(stmt, executions_in_flight_keep_their_own_results)
{
    fbw_script s;
    fbw_script_open(&s);
    s.fail_exec = 2;
    fbw_tx *t;
    fbw_script_start(&s, &t, 1);
    fbw_stmt *st = fbw_script_prepare(&s, t, "SELECT c FROM t WHERE id=?");
    s.rows = 4;
    s.waits = 0;
    fbw_exec_out o[3];
    for (int i = 0; i < 3; i++) {
        fbw_value v = id(i + 1);
        cr_assert_eq(fbw_stmt_execute_out(st, t, &v, 0, &o[i]), FBW_OK);
    }
    cr_assert(fbw_stmt_busy(st));
    fbw_script_wait_ok(&s);
    cr_assert_eq(s.waits, 1);
    cr_assert_eq(fbw_stmt_busy(st), 0);
    cr_assert_eq(o[0].rows, 4);
    cr_assert_eq(o[0].err.code, FBW_OK);
    cr_assert_eq(o[1].err.gds[0], FBW_SCRIPT_GDS_UNIQUE, "the second failed alone");
    cr_assert_eq(o[2].rows, 4);
    cr_assert_eq(o[2].err.code, FBW_OK);
    cr_assert_eq(fbw_stmt_row_count(st), 4, "only the latest execution's rows are kept");
    cr_assert_eq(fbw_stmt_error(st)->code, FBW_OK, "the statement follows the latest execution");
    cr_assert_eq(fbw_script_count(&s, FBW_OP_FREE_STATEMENT), 2,
                 "each new execution closes the previous cursor in the same write");
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

Test(stmt, cursor_fetched_later)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    fbw_script_start(&s, &t, 1);
    fbw_stmt *st = fbw_script_prepare(&s, t, "SELECT c FROM t WHERE id=?");
    s.rows = 2;
    fbw_value v = id(5);
    s.nlog = 0;
    cr_assert_eq(fbw_stmt_execute(st, t, &v, FBW_EXEC_NO_FETCH), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(s.nlog, 1);
    cr_assert_eq(fbw_stmt_row_count(st), 0);
    cr_assert_eq(fbw_stmt_eof(st), 0);
    cr_assert_eq(fbw_stmt_fetch(st), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(s.log[1], FBW_OP_FETCH);
    cr_assert_eq(fbw_stmt_row_count(st), 2);
    cr_assert(fbw_stmt_eof(st));
    s.nlog = 0;
    cr_assert_eq(fbw_stmt_fetch(st), FBW_OK, "at the end: nothing queued");
    cr_assert_eq(fbw_conn_outstanding(s.c), 0);
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

Test(stmt, execute_immediate)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    fbw_script_start(&s, &t, 0);
    fbw_exec_result r;
    const char *sql = "DELETE FROM t";
    cr_assert_eq(fbw_exec_immediate(s.c, t, sql, strlen(sql), &r), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert(r.done);
    cr_assert_eq(r.err.code, FBW_OK);
    cr_assert_eq(fbw_script_count(&s, FBW_OP_EXEC_IMMEDIATE), 1);
    fbw_script_close(&s);
}

Test(stmt, freed_while_replies_are_due)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    fbw_script_start(&s, &t, 1);
    fbw_stmt *st = fbw_script_prepare(&s, t, "SELECT c FROM t WHERE id=?");
    fbw_value v = id(3);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_stmt_free(st); /* the replies still arrive and are handled; then it is gone */
    s.nlog = 0;
    fbw_script_wait_ok(&s);
    cr_assert_eq(s.log[s.nlog - 1], FBW_OP_FREE_STATEMENT, "the drop went out behind the execute");
    cr_assert_eq(fbw_conn_outstanding(s.c), 0);
    fbw_script_close(&s);
}

/* DSQL_close of an open cursor: queued as op_free_statement, its reply deferred (nothing waits for
 * it alone); the statement executes again afterwards. */
Test(stmt, cursor_closed_and_executed_again)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    fbw_script_start(&s, &t, 1);
    fbw_stmt *st = fbw_script_prepare(&s, t, "SELECT c FROM t WHERE id=?");
    s.rows = 2;
    fbw_value v = id(5);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, FBW_EXEC_NO_FETCH), FBW_OK);
    fbw_script_wait_ok(&s);
    s.nlog = 0;
    cr_assert_eq(fbw_stmt_close(st), FBW_OK);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_script_count(&s, FBW_OP_FREE_STATEMENT), 1, "the close went out");
    cr_assert_eq(s.log[0], FBW_OP_FREE_STATEMENT, "before the next execute");
    cr_assert_eq(fbw_stmt_error(st)->code, FBW_OK, "%s", fbw_stmt_error(st)->msg);
    cr_assert_eq(fbw_stmt_row_count(st), 2);
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

/* Prepare and execute in one round trip (the driver's unprepared path): a statement with its
 * server handle is prepared again and executed behind the prepare without waiting. */
Test(stmt, execute_unprepared_rides_behind_the_prepare)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_script_dml(&s, FBW_STMT_DELETE);
    s.nin = 0; /* no parameters: the SQL carries its values */
    fbw_tx *t;
    fbw_script_start(&s, &t, 0);
    fbw_stmt *st = fbw_script_prepare(&s, t, "DELETE FROM t WHERE id=1");
    s.nlog = 0;
    s.waits = 0;
    const char *sql = "DELETE FROM t WHERE id=2";
    cr_assert_eq(fbw_stmt_prepare(st, t, sql, strlen(sql)), FBW_OK);
    cr_assert_eq(fbw_stmt_execute_unprepared(st, t, FBW_EXEC_COUNT), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(s.waits, 1, "one round trip");
    cr_assert_eq(s.log[0], FBW_OP_PREPARE_STATEMENT);
    cr_assert_eq(s.log[1], FBW_OP_EXECUTE);
    cr_assert_eq(fbw_stmt_error(st)->code, FBW_OK, "%s", fbw_stmt_error(st)->msg);
    cr_assert_eq(fbw_stmt_affected(st), 1);
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

/* The statement timeout travels in op_execute: the statement's own, else the connection's, and a
 * change of the connection's applies to the next execution. */
Test(stmt, timeout_travels_in_op_execute)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    fbw_script_start(&s, &t, 1);
    fbw_stmt *st = fbw_script_prepare(&s, t, "SELECT c FROM t WHERE id=?");
    fbw_value v = id(1);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_expect_eq(s.last_timeout, 0, "no timeout by default");
    fbw_err err;
    cr_assert_eq(fbw_conn_set_statement_timeout(s.c, 1500, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_conn_statement_timeout(s.c), 1500);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_expect_eq(s.last_timeout, 1500, "the connection's");
    fbw_stmt_set_timeout(st, 250);
    cr_assert_eq(fbw_stmt_timeout(st), 250);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_expect_eq(s.last_timeout, 250, "the statement's own wins");
    fbw_stmt_set_timeout(st, 0);
    cr_assert_eq(fbw_conn_set_statement_timeout(s.c, 0, &err), FBW_OK);
    cr_assert_eq(fbw_stmt_execute(st, t, &v, 0), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_expect_eq(s.last_timeout, 0, "removed again");
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

/* The inline blob size op_execute asks for: the statement's own (fbw_stmt_set_inline_blob_size)
 * over the connection's, capped at 65535, negative back to the connection's; none below 19. */
static uint32_t asked(fbw_script *s, fbw_stmt *st, fbw_tx *tx, int32_t size)
{
    fbw_stmt_set_inline_blob_size(st, size);
    fbw_value p = {.type = FBW_SQL_LONG};
    cr_assert_eq(fbw_stmt_execute(st, tx, &p, 0), FBW_OK);
    fbw_script_wait_ok(s);
    fbw_stmt_close(st);
    return s->inline_size;
}

Test(stmt, inline_blob_size_per_statement)
{
    fbw_script s;
    fbw_script_open_at(&s, 19, 4000);
    fbw_tx *tx;
    fbw_script_start(&s, &tx, 0);
    fbw_stmt *st = fbw_script_prepare(&s, tx, "select v from t where id = ?");
    cr_assert_eq(fbw_stmt_inline_blob_size(st), -1);
    cr_assert_eq(asked(&s, st, tx, -1), 4000, "the connection's");
    cr_assert_eq(asked(&s, st, tx, 0), 0);
    cr_assert_eq(asked(&s, st, tx, 1000), 1000);
    cr_assert_eq(asked(&s, st, tx, 70000), 65535);
    cr_assert_eq(asked(&s, st, tx, -7), 4000);
    cr_assert_eq(fbw_stmt_inline_blob_size(st), -1);
    fbw_stmt_free(st);
    fbw_script_close(&s);

    fbw_script_open_at(&s, 18, 4000);
    fbw_script_start(&s, &tx, 0);
    st = fbw_script_prepare(&s, tx, "select v from t where id = ?");
    cr_assert_eq(asked(&s, st, tx, 1000), 0, "protocol 18 has no inline blobs");
    fbw_stmt_free(st);
    fbw_script_close(&s);
}

/* fbw_conn_set_inline_blob_size changes what every later execute of a statement without its own
 * size asks for (and op_exec_immediate2, which has no statement: the replay's use); nothing is
 * sent by the call itself, and a statement's own size still wins. */
Test(stmt, inline_blob_size_per_connection)
{
    fbw_script s;
    fbw_script_open_at(&s, 19, 4000);
    fbw_tx *tx;
    fbw_script_start(&s, &tx, 0);
    fbw_stmt *st = fbw_script_prepare(&s, tx, "select v from t where id = ?");
    cr_assert_eq(asked(&s, st, tx, -1), 4000, "the size the connection was opened with");
    const uint8_t *out;
    size_t before = 0, after = 0;
    fbw_conn_pending(s.c, &out, &before);
    fbw_conn_set_inline_blob_size(s.c, 1234);
    fbw_conn_pending(s.c, &out, &after);
    cr_assert_eq(after, before, "setting the size queues nothing");
    cr_assert_eq(asked(&s, st, tx, -1), 1234, "the connection's new size");
    cr_assert_eq(asked(&s, st, tx, 500), 500, "the statement's own wins");
    fbw_conn_set_inline_blob_size(s.c, 0);
    cr_assert_eq(asked(&s, st, tx, -1), 0, "0 asks for none");
    fbw_conn_set_inline_blob_size(s.c, 100000);
    cr_assert_eq(asked(&s, st, tx, -1), 65535, "capped at 65535");
    fbw_stmt_free(st);
    fbw_script_close(&s);
}
