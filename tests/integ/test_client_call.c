/* SPDX-License-Identifier: MIT */
/* test_client_call.c - the client's waiting helpers against real FB3 and FB4 (client.h):
 * fbw_client_complete and fbw_client_prepare/_execute/_fetch/_commit/_rollback run a request to its
 * answer, waiting first and calling again when the object answers FBW_WAIT; requests queued before
 * ride in the same write; a FBW_WAIT with nothing to wait for is a usage error, not a hang. */
#include <criterion/criterion.h>

#include "sqlt.h"

#include <stdio.h>
#include <string.h>

static uint64_t rts(const fbw_sqlt *q) { return fbw_conn_stats(q->c)->round_trips; }

static const char rows_sql[] = "with recursive r (n) as (select 1 from rdb$database union all "
                               "select n + 1 from r where n < 25) select n from r";

/* A new statement's prepare in a transaction whose start is still queued cannot name it (its
 * op_allocate_statement would take 0xFFFF): FBW_WAIT, and fbw_client_prepare waits for the start,
 * then prepares. */
static void prepare_waits_for_the_start(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    fbw_tx *t;
    fbw_err err;
    cr_assert_eq(fbw_tx_new(q.c, &t, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_tx_conn(t), q.c);
    fbw_stmt *s;
    cr_assert_eq(fbw_stmt_new(q.c, &s, &err), FBW_OK, "%s", err.msg);
    fbw_tx_opts o;
    fbw_tx_opts_init(&o);
    cr_assert_eq(fbw_tx_start(t, &o), FBW_OK);
    cr_assert(fbw_tx_live(t));
    cr_assert_eq(fbw_stmt_prepare(s, t, rows_sql, strlen(rows_sql)), FBW_WAIT,
                 "the statement cannot be allocated behind an unanswered start");
    uint64_t r0 = rts(&q);
    int rc = fbw_client_prepare(q.cl, s, t, rows_sql, strlen(rows_sql));
    cr_assert_eq(rc, FBW_OK, "%s", fbw_client_call_error(q.cl, rc, s, t)->msg);
    cr_assert(fbw_stmt_prepared(s), "%s", fbw_stmt_error(s)->msg);
    cr_expect_eq(rts(&q) - r0, 2, "start, then allocate + prepare: %llu round trips",
                 (unsigned long long)(rts(&q) - r0));
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ACTIVE);
    cr_assert_neq(fbw_tx_server_handle(t), 0);

    /* execute + first fetch in one round trip, then the rest fetch by fetch */
    fbw_stmt_set_fetch_size(s, 10);
    r0 = rts(&q);
    rc = fbw_client_execute(q.cl, s, t, NULL, 0);
    cr_assert_eq(rc, FBW_OK, "%s", fbw_client_call_error(q.cl, rc, s, t)->msg);
    cr_expect_eq(rts(&q) - r0, 1);
    size_t rows = fbw_stmt_row_count(s);
    while (rc == FBW_OK && !fbw_stmt_eof(s)) {
        fbw_stmt_clear_rows(s);
        rc = fbw_client_fetch(q.cl, s);
        rows += fbw_stmt_row_count(s);
    }
    cr_assert_eq(rc, FBW_OK, "%s", fbw_client_call_error(q.cl, rc, s, t)->msg);
    cr_expect_eq(rows, 25);
    fbw_stmt_free(s);
    cr_assert_eq(fbw_client_commit(q.cl, t), FBW_OK);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ENDED);
    cr_assert(!fbw_tx_live(t));
    cr_assert_eq(fbw_tx_server_handle(t), 0);
    fbw_tx_free(t);
    fbw_sqlt_close(&q);
}

Test(client_call, prepare_waits_for_the_start_fb3, .timeout = 60) { prepare_waits_for_the_start(FBW_SRV_FB3); }
Test(client_call, prepare_waits_for_the_start_fb4, .timeout = 60) { prepare_waits_for_the_start(FBW_SRV_FB4); }

/* A COMMIT behind a start that another allocation followed cannot use 0xFFFF: FBW_WAIT, and
 * fbw_client_commit waits, then commits. A rollback through fbw_client_rollback ends the next one;
 * a start queued before an execute rides in the execute's write. */
static void commit_and_rollback_wait(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    fbw_tx *t;
    fbw_err err;
    cr_assert_eq(fbw_tx_new(q.c, &t, &err), FBW_OK, "%s", err.msg);
    fbw_stmt *s;
    cr_assert_eq(fbw_stmt_new(q.c, &s, &err), FBW_OK, "%s", err.msg);
    fbw_tx_opts o;
    fbw_tx_opts_init(&o);
    cr_assert_eq(fbw_tx_start(t, &o), FBW_OK);
    static const char one[] = "select 1 from rdb$database";
    cr_assert_eq(fbw_stmt_prepare(s, q.tx, one, sizeof one - 1), FBW_OK); /* allocates */
    cr_assert_eq(fbw_tx_commit(t), FBW_WAIT, "0xFFFF names the statement now");
    int rc = fbw_client_commit(q.cl, t);
    cr_assert_eq(rc, FBW_OK, "%s", fbw_client_call_error(q.cl, rc, NULL, t)->msg);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ENDED, "%s", fbw_tx_error(t)->msg);
    cr_assert(fbw_stmt_prepared(s), "%s", fbw_stmt_error(s)->msg);

    /* the ended object starts again; its start rides with the execute: one round trip */
    cr_assert_eq(fbw_tx_start(t, &o), FBW_OK);
    uint64_t r0 = rts(&q);
    rc = fbw_client_execute(q.cl, s, t, NULL, 0);
    cr_assert_eq(rc, FBW_OK, "%s", fbw_client_call_error(q.cl, rc, s, t)->msg);
    cr_expect_eq(rts(&q) - r0, 1);
    cr_assert_eq(fbw_stmt_row_count(s), 1);
    cr_assert_eq(fbw_client_rollback(q.cl, t), FBW_OK);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ENDED);
    cr_assert_eq(fbw_tx_error(t)->code, FBW_OK);

    /* ended: nothing to commit, the transaction says why */
    rc = fbw_client_commit(q.cl, t);
    cr_assert_eq(rc, FBW_E_USAGE);
    cr_assert_eq(fbw_client_call_error(q.cl, rc, NULL, t), fbw_tx_error(t));
    fbw_stmt_free(s);
    fbw_tx_free(t);
    fbw_sqlt_close(&q);
}

Test(client_call, commit_and_rollback_wait_fb3, .timeout = 60) { commit_and_rollback_wait(FBW_SRV_FB3); }
Test(client_call, commit_and_rollback_wait_fb4, .timeout = 60) { commit_and_rollback_wait(FBW_SRV_FB4); }

/* fbw_client_complete on its own: an error passes through untouched and sends nothing; FBW_WAIT
 * with no reply outstanding would wait forever, so it is a usage error; FBW_OK sends and waits. */
Test(client_call, complete_passes_errors_and_refuses_a_wait_for_nothing, .timeout = 60)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, FBW_SRV_FB3, NULL);
    uint64_t r0 = rts(&q);
    cr_assert_eq(fbw_client_complete(q.cl, FBW_E_BADVALUE), FBW_E_BADVALUE);
    cr_assert_eq(fbw_client_complete(q.cl, FBW_OK), FBW_OK, "nothing queued: nothing to wait for");
    cr_assert_eq(rts(&q), r0, "neither sent anything");
    cr_assert_eq(fbw_client_complete(q.cl, FBW_WAIT), FBW_E_USAGE);
    cr_assert(strstr(fbw_client_error(q.cl)->msg, "nothing is pending") != NULL, "%s",
              fbw_client_error(q.cl)->msg);
    cr_assert_eq(fbw_conn_get_state(q.c), FBW_CS_READY, "a usage error leaves the connection usable");
    fbw_exec_result res;
    static const char sql[] = "execute block as begin end";
    int rc;
    do
        rc = fbw_client_complete(q.cl, fbw_exec_immediate(q.c, q.tx, sql, sizeof sql - 1, &res));
    while (rc == FBW_WAIT);
    cr_assert_eq(rc, FBW_OK, "%s", fbw_client_error(q.cl)->msg);
    cr_assert(res.done);
    cr_assert_eq(res.err.code, FBW_OK, "%s", res.err.msg);
    cr_expect_eq(rts(&q) - r0, 1);
    fbw_sqlt_close(&q);
}
