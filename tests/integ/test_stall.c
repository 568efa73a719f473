/* SPDX-License-Identifier: MIT */
/* test_stall.c - every wait of the blocking client ends at its timeout when the server stops
 * answering: the stock servers fb3s and fb4s are stopped (SIGSTOP, tests/support/stall.h: never the
 * shared fb3/fb4, always resumed) while a call waits. Checked per server: a call returns
 * FBW_E_TIMEOUT within the timeout + 1 s with an error naming the request waited for; the
 * connection is then closed (fd -1, later calls fail at once, close does not wait again); an
 * unanswered COMMIT is reported with an unknown outcome; a connect to the stopped server (TCP
 * accepted by the kernel, op_connect never answered) ends at the connect timeout naming op_connect;
 * 32 MiB of pipelined requests to the stopped server end at the timeout while sending.
 * About 4 x 3 s per server. */
#include <criterion/criterion.h>

#include "servers.h"
#include "stall.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TIMEOUT_MS 2000
#define STALL_MAX_MS 9000 /* the watchdog's bound: resumed by then even if this test dies */

static void stock_dsn(const char *name, fbw_server *srv, char *dsn, size_t size)
{
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_servers_stock(name, srv, &err), FBW_OK, "%s", err.msg);
    snprintf(dsn, size, "%s/%d:%s", srv->host, srv->port, srv->db);
}

static fbw_client *open_stock(const char *name, fbw_server *srv)
{
    fbw_servers s;
    fbw_servers_require(&s);
    char dsn[1400];
    stock_dsn(name, srv, dsn, sizeof dsn);
    fbw_client_opts o;
    fbw_servers_client_opts(&s, &o);
    o.timeout_ms = TIMEOUT_MS;
    fbw_client *cl = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    int rc = fbw_client_connect(dsn, &o, &cl, &err);
    cr_assert_eq(rc, FBW_OK, "%s: connect: %s", name, err.msg);
    return cl;
}

static void stall_or_fail(fbw_stall *st, const fbw_server *srv)
{
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_stall_begin(st, (unsigned)srv->port, STALL_MAX_MS, &err), FBW_OK, "%s",
                 err.msg);
}

/* After a timeout: the connection is closed and stays so, without waiting again. */
static void expect_closed(fbw_client *cl, const char *name)
{
    cr_expect_eq(fbw_client_fd(cl), -1, "%s: socket still open after the timeout", name);
    cr_expect_eq(fbw_conn_get_state(fbw_client_conn(cl)), FBW_CS_FAILED);
    double t0 = fbw_servers_now();
    int rc = fbw_client_wait(cl);
    cr_expect(fbw_is_fatal(rc), "%s: a later wait gave %s", name, fbw_rc_name(rc));
    fbw_client_close(cl);
    double dt = fbw_servers_now() - t0;
    cr_expect_lt(dt, 0.5, "%s: wait + close after the timeout took %.3f s", name, dt);
}

static void call_times_out(const char *name)
{
    fbw_server srv;
    fbw_client *cl = open_stock(name, &srv);
    fbw_conn *c = fbw_client_conn(cl);
    fbw_tx *tx;
    cr_assert_eq(fbw_tx_new(c, &tx, NULL), FBW_OK);
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    cr_assert_eq(fbw_tx_start(tx, &to), FBW_OK);
    cr_assert_eq(fbw_client_wait(cl), FBW_OK, "%s", fbw_client_error(cl)->msg);
    fbw_stall st;
    stall_or_fail(&st, &srv);
    static const char sql[] = "execute block as begin end";
    fbw_exec_result res;
    memset(&res, 0, sizeof res);
    cr_assert_eq(fbw_exec_immediate(c, tx, sql, sizeof sql - 1, &res), FBW_OK);
    double t0 = fbw_servers_now();
    int rc = fbw_client_wait(cl);
    double dt = fbw_servers_now() - t0;
    fbw_stall_end(&st);
    const char *msg = fbw_client_error(cl)->msg;
    printf("%s: call on a stopped server ended after %.3f s (timeout %d ms): %s\n", name, dt,
           TIMEOUT_MS, msg);
    cr_expect_eq(rc, FBW_E_TIMEOUT, "%s: %s: %s", name, fbw_rc_name(rc), msg);
    cr_expect_geq(dt, TIMEOUT_MS / 1000.0 - 0.05, "%s: gave up after %.3f s", name, dt);
    cr_expect_lt(dt, TIMEOUT_MS / 1000.0 + 1.0, "%s: took %.3f s", name, dt);
    cr_expect(strstr(msg, "no reply from the server for 2 s while waiting for the reply to "
                          "op_exec_immediate") != NULL, "%s: message \"%s\"", name, msg);
    cr_expect(strstr(msg, "outcome") == NULL, "%s: no COMMIT was pending: \"%s\"", name, msg);
    fbw_tx_free(tx);
    expect_closed(cl, name);
}

/* A prepared SELECT executed while the server is stopped: the wait names op_execute, and the
 * statement (replies still outstanding) is freed at once on the failed connection (an ASan build
 * would report it leaked otherwise). */
static void statement_times_out(const char *name)
{
    fbw_server srv;
    fbw_client *cl = open_stock(name, &srv);
    fbw_conn *c = fbw_client_conn(cl);
    fbw_tx *tx;
    cr_assert_eq(fbw_tx_new(c, &tx, NULL), FBW_OK);
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    cr_assert_eq(fbw_tx_start(tx, &to), FBW_OK);
    cr_assert_eq(fbw_client_wait(cl), FBW_OK, "%s", fbw_client_error(cl)->msg);
    fbw_stmt *st = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_stmt_new(c, &st, &err), FBW_OK, "%s", err.msg);
    static const char sql[] = "select rdb$relation_id from rdb$database";
    cr_assert_eq(fbw_stmt_prepare(st, tx, sql, sizeof sql - 1), FBW_OK);
    cr_assert_eq(fbw_client_wait(cl), FBW_OK, "%s", fbw_client_error(cl)->msg);
    fbw_stall stall;
    stall_or_fail(&stall, &srv);
    cr_assert_eq(fbw_stmt_execute(st, tx, NULL, 0), FBW_OK);
    double t0 = fbw_servers_now();
    int rc = fbw_client_wait(cl);
    double dt = fbw_servers_now() - t0;
    fbw_stall_end(&stall);
    const char *msg = fbw_client_error(cl)->msg;
    printf("%s: prepared SELECT on a stopped server ended after %.3f s: %s\n", name, dt, msg);
    cr_expect_eq(rc, FBW_E_TIMEOUT, "%s: %s: %s", name, fbw_rc_name(rc), msg);
    cr_expect_lt(dt, TIMEOUT_MS / 1000.0 + 1.0, "%s: took %.3f s", name, dt);
    cr_expect(strstr(msg, "while waiting for the reply to op_execute") != NULL, "%s: \"%s\"",
              name, msg);
    cr_expect(fbw_stmt_busy(st), "%s: the execute's replies should still be outstanding", name);
    fbw_stmt_free(st);
    fbw_tx_free(tx);
    expect_closed(cl, name);
}

/* Requests pipelined while the server is stopped fill the socket buffers of both ends: the
 * send itself must end at the timeout (fbw_sock_send_or_read), naming the wait too. */
static void send_times_out(const char *name)
{
    fbw_server srv;
    fbw_client *cl = open_stock(name, &srv);
    fbw_conn *c = fbw_client_conn(cl);
    fbw_tx *tx;
    cr_assert_eq(fbw_tx_new(c, &tx, NULL), FBW_OK);
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    cr_assert_eq(fbw_tx_start(tx, &to), FBW_OK);
    cr_assert_eq(fbw_client_wait(cl), FBW_OK, "%s", fbw_client_error(cl)->msg);
    fbw_stall st;
    stall_or_fail(&st, &srv);
    /* 32 MiB of requests: far more than loopback socket buffers hold (a few MiB each way). */
    static char sql[1024];
    memset(sql, ' ', sizeof sql);
    memcpy(sql, "execute block as begin end", 26);
    static fbw_exec_result res; /* shared: no reply ever arrives to write it */
    int rc = FBW_OK;
    for (int i = 0; i < 32 * 1024 && rc == FBW_OK; i++)
        rc = fbw_exec_immediate(c, tx, sql, sizeof sql, &res);
    cr_assert_eq(rc, FBW_OK, "%s: queueing: %s", name, fbw_rc_name(rc));
    double t0 = fbw_servers_now();
    rc = fbw_client_wait(cl);
    double dt = fbw_servers_now() - t0;
    fbw_stall_end(&st);
    const char *msg = fbw_client_error(cl)->msg;
    printf("%s: 32 MiB of requests to a stopped server ended after %.3f s: %.200s\n", name, dt,
           msg);
    cr_expect_eq(rc, FBW_E_TIMEOUT, "%s: %s: %s", name, fbw_rc_name(rc), msg);
    cr_expect_lt(dt, TIMEOUT_MS / 1000.0 + 1.0, "%s: took %.3f s", name, dt);
    cr_expect(strstr(msg, "the server took no data for 2 s while requests were sent, waiting for "
                          "the reply to op_exec_immediate") != NULL, "%s: \"%s\"", name, msg);
    fbw_tx_free(tx);
    expect_closed(cl, name);
}

static void commit_outcome_unknown(const char *name)
{
    fbw_server srv;
    fbw_client *cl = open_stock(name, &srv);
    fbw_conn *c = fbw_client_conn(cl);
    fbw_tx *tx;
    cr_assert_eq(fbw_tx_new(c, &tx, NULL), FBW_OK);
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    cr_assert_eq(fbw_tx_start(tx, &to), FBW_OK);
    cr_assert_eq(fbw_client_wait(cl), FBW_OK, "%s", fbw_client_error(cl)->msg);
    fbw_stall st;
    stall_or_fail(&st, &srv);
    cr_assert_eq(fbw_tx_commit(tx), FBW_OK);
    double t0 = fbw_servers_now();
    int rc = fbw_client_wait(cl);
    double dt = fbw_servers_now() - t0;
    fbw_stall_end(&st);
    const char *msg = fbw_client_error(cl)->msg;
    printf("%s: COMMIT on a stopped server ended after %.3f s: %s\n", name, dt, msg);
    cr_expect_eq(rc, FBW_E_TIMEOUT, "%s: %s: %s", name, fbw_rc_name(rc), msg);
    cr_expect_lt(dt, TIMEOUT_MS / 1000.0 + 1.0, "%s: took %.3f s", name, dt);
    cr_expect(strstr(msg, "waiting for the reply to op_commit") != NULL, "%s: \"%s\"", name, msg);
    cr_expect(strstr(msg, "outcome is unknown") != NULL, "%s: \"%s\"", name, msg);
    cr_expect(strstr(msg, "failed") == NULL, "%s: a COMMIT that may have committed is reported "
              "failed: \"%s\"", name, msg);
    fbw_tx_free(tx);
    expect_closed(cl, name);
}

static void connect_times_out(const char *name)
{
    fbw_servers s;
    fbw_servers_require(&s);
    fbw_server srv;
    char dsn[1400];
    stock_dsn(name, &srv, dsn, sizeof dsn);
    fbw_client_opts o;
    fbw_servers_client_opts(&s, &o);
    o.connect_timeout_ms = TIMEOUT_MS;
    fbw_stall st;
    stall_or_fail(&st, &srv);
    fbw_client *cl = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    double t0 = fbw_servers_now();
    int rc = fbw_client_connect(dsn, &o, &cl, &err);
    double dt = fbw_servers_now() - t0;
    fbw_stall_end(&st);
    printf("%s: connect to a stopped server ended after %.3f s: %s\n", name, dt, err.msg);
    cr_expect_eq(rc, FBW_E_TIMEOUT, "%s: %s: %s", name, fbw_rc_name(rc), err.msg);
    cr_expect_null(cl);
    cr_expect_geq(dt, TIMEOUT_MS / 1000.0 - 0.05, "%s: gave up after %.3f s", name, dt);
    cr_expect_lt(dt, TIMEOUT_MS / 1000.0 + 1.0, "%s: took %.3f s", name, dt);
    cr_expect(strstr(err.msg, "within the connect timeout of 2 s, waiting for the reply "
                                      "to op_connect") != NULL, "%s: \"%s\"", name, err.msg);
}

/* A listener that accepts (kernel backlog) and never answers: the connect timeout names the wait. */
Test(stall, silent_listener_connect_names_the_wait, .timeout = 20)
{
    fbw_servers s;
    fbw_servers_require(&s);
    int port;
    int lfd = fbw_servers_silent_listener(&port);
    char dsn[256];
    snprintf(dsn, sizeof dsn, "127.0.0.1/%d:fbwire_stall.fdb", port);
    fbw_client_opts o;
    fbw_servers_client_opts(&s, &o);
    o.connect_timeout_ms = 1500;
    fbw_client *cl = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    double t0 = fbw_servers_now();
    int rc = fbw_client_connect(dsn, &o, &cl, &err);
    double dt = fbw_servers_now() - t0;
    close(lfd);
    printf("silent listener: connect ended after %.3f s: %s\n", dt, err.msg);
    cr_expect_eq(rc, FBW_E_TIMEOUT, "%s: %s", fbw_rc_name(rc), err.msg);
    cr_expect_lt(dt, 1.5 + 1.0, "took %.3f s", dt);
    cr_expect(strstr(err.msg, "connect timeout of 1500 ms, waiting for the reply to op_connect"),
              "\"%s\"", err.msg);
}

Test(stall, fb3s_call_times_out, .timeout = 30) { call_times_out("fb3s"); }
Test(stall, fb4s_call_times_out, .timeout = 30) { call_times_out("fb4s"); }
Test(stall, fb3s_statement_times_out, .timeout = 30) { statement_times_out("fb3s"); }
Test(stall, fb4s_statement_times_out, .timeout = 30) { statement_times_out("fb4s"); }
Test(stall, fb3s_send_times_out, .timeout = 30) { send_times_out("fb3s"); }
Test(stall, fb4s_send_times_out, .timeout = 30) { send_times_out("fb4s"); }
Test(stall, fb3s_commit_outcome_unknown, .timeout = 30) { commit_outcome_unknown("fb3s"); }
Test(stall, fb4s_commit_outcome_unknown, .timeout = 30) { commit_outcome_unknown("fb4s"); }
Test(stall, fb3s_connect_times_out, .timeout = 30) { connect_times_out("fb3s"); }
Test(stall, fb4s_connect_times_out, .timeout = 30) { connect_times_out("fb4s"); }
