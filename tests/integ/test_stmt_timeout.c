/* SPDX-License-Identifier: MIT */
/* test_stmt_timeout.c - statement timeouts (fbw_stmt_set_timeout, fbw_conn_opts.statement_timeout_ms,
 * fbw_conn_set_statement_timeout; docs/library.md "Statement timeouts") on real servers. FB4: a long
 * query with a statement's own timeout fails with Firebird's isc_cancelled + isc_req_stmt_timeout,
 * class STATEMENT_TIMEOUT, its message naming the limit; the same connection, transaction and
 * statement then run a query normally; the connection's timeout applies to every statement that
 * sets none and a statement's own wins over it; in pipeline mode the timed-out execution is the
 * pipeline's error, named by its place. FB3 (protocol 15): a timeout is refused before
 * anything is sent - on execute, on fbw_conn_set_statement_timeout, and at connect - and the
 * connection goes on. */
#include <criterion/criterion.h>

#include "sqlt.h"

#include <stdio.h>
#include <string.h>

/* iberror.h, written out so a wrong table in msgs.c cannot hide behind its own names */
#define GDS_CANCELLED 335544794u
#define GDS_REQ_STMT_TIMEOUT 335545129u

/* Runs for minutes on both servers (test_cancel.c): only a timeout ends it within the test's. */
static const char LONG_SQL[] = "select count(*) from rdb$fields a cross join rdb$fields b "
                               "cross join rdb$fields c cross join rdb$types d";

static void print_err(const char *what, const fbw_err *e)
{
    printf("%s: class %s, sqlstate %s, gds", what, fbw_errclass_name(fbw_err_classify(e)),
           e->sqlstate);
    for (int i = 0; i < e->ngds && i < FBW_ERR_GDS_MAX; i++)
        printf(" %u", e->gds[i]);
    printf(": %s\n", e->msg);
}

typedef struct job {
    fbw_stmt *st;
    fbw_tx *tx;
} job;

static int q_execute(void *arg)
{
    job *j = arg;
    return fbw_stmt_execute(j->st, j->tx, NULL, 0);
}

/* Execute j and wait for every reply; the call's error as the library reports it. */
static const fbw_err *run_error(fbw_sqlt *q, job *j, int *rc)
{
    *rc = fbw_client_run(q->cl, q_execute, j);
    return fbw_client_call_error(q->cl, *rc, j->st, j->tx);
}

/* The long query timed out at the statement level with a limit of ms. */
static void expect_timed_out(fbw_sqlt *q, job *j, unsigned ms)
{
    int rc;
    double t0 = fbw_servers_now();
    const fbw_err *e = run_error(q, j, &rc);
    double took = fbw_servers_now() - t0;
    print_err("statement timeout", e);
    printf("%s: timed out after %.2f s (limit %u ms)\n", fbw_server_name(q->id), took, ms);
    cr_assert_eq(rc, FBW_OK, "every reply arrived: %s", fbw_client_error(q->cl)->msg);
    cr_assert_eq(e, fbw_stmt_error(j->st), "the statement holds the error");
    cr_assert_eq(e->code, FBW_E_SERVER, "no timeout: %s", fbw_rc_name(e->code));
    cr_expect(fbw_err_has_gds(e, GDS_CANCELLED), "%s", e->msg);
    cr_expect(fbw_err_has_gds(e, GDS_REQ_STMT_TIMEOUT), "%s", e->msg);
    cr_expect_eq(fbw_err_classify(e), FBW_EC_STATEMENT_TIMEOUT);
    char limit[64];
    snprintf(limit, sizeof limit, "(statement timeout %u ms)", ms);
    cr_expect(strstr(e->msg, limit), "the message names the limit: %s", e->msg);
    cr_expect_eq(fbw_conn_get_state(q->c), FBW_CS_READY, "the connection goes on");
}

/* After a timeout: the transaction is alive and the connection answers a query. */
static void expect_usable(fbw_sqlt *q)
{
    cr_expect_eq(fbw_tx_state(q->tx), FBW_TX_ACTIVE, "the transaction goes on");
    cr_expect_eq(fbw_sqlt_int_ok(q, q->tx, "select 42 from rdb$database"), 42);
}

Test(stmt_timeout, statement_level_fb4, .timeout = 60)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, FBW_SRV_FB4, NULL);
    job j = {fbw_sqlt_prepare_ok(&q, q.tx, LONG_SQL), q.tx};
    fbw_stmt_set_timeout(j.st, 300);
    expect_timed_out(&q, &j, 300);
    expect_usable(&q);
    /* the same statement, a short query, with the same timeout: it runs normally */
    cr_assert_eq(fbw_stmt_prepare(j.st, q.tx, "select 7 from rdb$database", 26), FBW_OK);
    fbw_sqlt_wait_ok(&q);
    int rc;
    const fbw_err *e = run_error(&q, &j, &rc);
    cr_assert_eq(e->code, FBW_OK, "%s", e->msg);
    cr_assert_eq(fbw_stmt_row_count(j.st), 1);
    fbw_stmt_free(j.st);
    fbw_sqlt_commit_ok(&q, q.tx);
    fbw_sqlt_close(&q);
}

Test(stmt_timeout, connection_level_fb4, .timeout = 60)
{
    fbw_servers srv;
    fbw_servers_require(&srv);
    fbw_client_opts o;
    fbw_servers_client_opts(&srv, &o);
    o.conn.statement_timeout_ms = 400;
    fbw_sqlt q;
    fbw_sqlt_open(&q, FBW_SRV_FB4, &o);
    cr_assert_eq(fbw_conn_statement_timeout(q.c), 400);
    job j = {fbw_sqlt_prepare_ok(&q, q.tx, LONG_SQL), q.tx};
    expect_timed_out(&q, &j, 400);
    expect_usable(&q);
    /* a statement's own timeout wins over the connection's */
    fbw_err err;
    cr_assert_eq(fbw_conn_set_statement_timeout(q.c, 60000, &err), FBW_OK, "%s", err.msg);
    fbw_stmt_set_timeout(j.st, 200);
    expect_timed_out(&q, &j, 200);
    expect_usable(&q);
    fbw_stmt_free(j.st);
    fbw_sqlt_close(&q);
}

/* Pipeline mode: the timed-out execution is the pipeline's error, named by its place ("statement 2
 * of 3 of the pipelined transaction (long)"); the statements after it get no result of their own
 * and the transaction is rolled back, the connection going on. */
Test(stmt_timeout, pipelined_fb4, .timeout = 60)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, FBW_SRV_FB4, NULL);
    fbw_stmt *quick = fbw_sqlt_prepare_ok(&q, q.tx, "select 1 from rdb$database");
    fbw_stmt *slow = fbw_sqlt_prepare_ok(&q, q.tx, LONG_SQL);
    fbw_stmt_set_timeout(slow, 300);
    fbw_pipe_opts po;
    fbw_pipe_opts_init(&po);
    po.wait = fbw_client_pipe_wait;
    po.wait_arg = q.cl;
    fbw_pipe *p = NULL;
    fbw_err err;
    cr_assert_eq(fbw_pipe_new(q.c, &po, &p, &err), FBW_OK, "%s", err.msg);
    fbw_pipe_begin(p, q.tx);
    cr_assert_eq(fbw_pipe_execute(p, quick, NULL, 0, "quick", NULL, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_pipe_execute(p, slow, NULL, 0, "long", NULL, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_pipe_execute(p, quick, NULL, 0, "after", NULL, &err), FBW_OK, "%s", err.msg);
    int rc = fbw_pipe_commit(p, &err);
    print_err("pipelined statement timeout", &err);
    cr_assert_eq(rc, FBW_E_SERVER, "%s", fbw_rc_name(rc));
    cr_expect_eq(fbw_err_classify(&err), FBW_EC_STATEMENT_TIMEOUT);
    cr_expect(strstr(err.msg, "statement 2 of 3 of the pipelined transaction (long)") == err.msg,
              "named by its place: %s", err.msg);
    cr_expect(strstr(err.msg, "(statement timeout 300 ms)"), "%s", err.msg);
    cr_expect_neq(fbw_tx_state(q.tx), FBW_TX_ACTIVE, "rolled back, not committed");
    fbw_pipe_free(p);
    fbw_stmt_free(slow);
    fbw_stmt_free(quick);
    fbw_sqlt_tx_start_ok(&q, &q.tx, NULL);
    expect_usable(&q);
    fbw_sqlt_close(&q);
}

/* FB3: every way of asking for a timeout is refused before a byte is sent. */
Test(stmt_timeout, refused_on_fb3, .timeout = 60)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, FBW_SRV_FB3, NULL);
    cr_assert_lt(fbw_conn_get_info(q.c)->protocol, FBW_PROTOCOL_STMT_TIMEOUT);
    job j = {fbw_sqlt_prepare_ok(&q, q.tx, LONG_SQL), q.tx};
    fbw_stmt_set_timeout(j.st, 300);
    uint64_t sent = fbw_conn_stats(q.c)->packets_sent;
    int rc;
    const fbw_err *e = run_error(&q, &j, &rc);
    print_err("fb3 execute with a timeout", e);
    cr_assert_eq(rc, FBW_E_UNSUPPORTED, "%s", fbw_rc_name(rc));
    cr_expect_eq(e, fbw_stmt_error(j.st));
    cr_expect(strstr(e->msg, "protocol 15"), "names the protocol: %s", e->msg);
    cr_expect_eq(fbw_conn_stats(q.c)->packets_sent, sent, "nothing was sent");
    cr_expect_eq(fbw_conn_outstanding(q.c), 0);
    fbw_err err;
    cr_expect_eq(fbw_conn_set_statement_timeout(q.c, 300, &err), FBW_E_UNSUPPORTED);
    cr_expect(strstr(err.msg, "protocol 16"), "%s", err.msg);
    cr_expect_eq(fbw_conn_statement_timeout(q.c), 0, "left as it was");
    cr_expect_eq(fbw_conn_set_statement_timeout(q.c, 0, &err), FBW_OK, "no timeout is fine");
    fbw_stmt_free(j.st);
    expect_usable(&q);
    fbw_sqlt_close(&q);

    /* the connection's timeout: the connect fails after op_accept, before op_attach */
    fbw_client_opts o;
    fbw_servers_client_opts(&q.srv, &o);
    o.conn.statement_timeout_ms = 300;
    char dsn[1400];
    fbw_client *cl = NULL;
    rc = fbw_client_connect(fbw_servers_dsn(&q.srv, FBW_SRV_FB3, dsn, sizeof dsn), &o, &cl, &err);
    print_err("fb3 connect with a timeout", &err);
    cr_assert_eq(rc, FBW_E_UNSUPPORTED, "%s", fbw_rc_name(rc));
    cr_assert_null(cl);
    cr_expect(strstr(err.msg, "protocol 15"), "%s", err.msg);
}
