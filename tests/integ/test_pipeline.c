/* SPDX-License-Identifier: MIT */
/* test_pipeline.c - several executions of one prepared statement in flight (stmt.h
 * fbw_stmt_execute_out) against FB3 and FB4: each execution gets its own result (rows counted,
 * only the latest's buffered, an error in the middle reported by its own execution alone), all
 * in one round trip; and 16 MB of requests and of replies in flight through small socket buffers
 * complete with every row (client.c reads while a write would block; the mechanism itself is
 * checked in tests/wire/test_sock.c). */
#include <criterion/criterion.h>

#include "sqlt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Rows 1..n of ~200 bytes each (n the second parameter), each divided by the first (0: error);
 * the third parameter only makes the request as large as the caller wants. */
static const char *GEN = "with recursive r (n) as (select 1 from rdb$database union all "
                         "select n + 1 from r where n < 100) "
                         "select n, cast(rpad('x', 200, 'y') as varchar(200)), 1 / cast(? as integer) "
                         "from r where n <= ? and cast(? as varchar(16000) character set octets) <> ''";

typedef struct many {
    fbw_stmt *s;
    fbw_tx *tx;
    fbw_exec_out *out;
    const int *limits;
    size_t n, next;
    const char *pad;
} many;

static int queue_many(void *arg)
{
    many *m = arg;
    for (; m->next < m->n; m->next++) {
        fbw_value v[3];
        memset(v, 0, sizeof v);
        v[0].type = v[1].type = FBW_SQL_LONG;
        v[2].type = FBW_SQL_VARYING;
        v[2].u.bytes.p = (const uint8_t *)m->pad;
        v[2].u.bytes.n = strlen(m->pad);
        int lim = m->limits[m->next];
        v[0].u.i64 = lim == 0 ? 0 : 1; /* 0: every row divides by zero */
        v[1].u.i64 = lim == 0 ? 5 : lim;
        int rc = fbw_stmt_execute_out(m->s, m->tx, v, 0, &m->out[m->next]);
        if (rc)
            return rc;
    }
    return FBW_OK;
}

static void own_results(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    fbw_stmt *s = fbw_sqlt_prepare_ok(&q, q.tx, GEN);
    int limits[] = {3, 100, 0, 7, 1, 42};
    size_t n = sizeof limits / sizeof *limits;
    fbw_exec_out out[6];
    many m = {s, q.tx, out, limits, n, 0, "p"};
    fbw_stats before = *fbw_conn_stats(q.c);
    cr_assert_eq(fbw_client_run(q.cl, queue_many, &m), FBW_OK, "%s", fbw_client_error(q.cl)->msg);
    cr_expect_eq(fbw_conn_stats(q.c)->round_trips - before.round_trips, 1,
                 "six executions with their fetches in one round trip");
    for (size_t i = 0; i < n; i++) {
        cr_expect(out[i].done, "execution %zu answered", i);
        cr_expect(out[i].eof, "execution %zu at end", i);
        if (limits[i] == 0) {
            cr_expect_neq(out[i].err.code, FBW_OK, "execution %zu (division by zero) failed", i);
            cr_expect_eq(out[i].rows, 0);
        } else {
            cr_expect_eq(out[i].err.code, FBW_OK, "execution %zu: %s", i, out[i].err.msg);
            cr_expect_eq(out[i].rows, (size_t)limits[i], "execution %zu: its own rows", i);
        }
    }
    /* Only the latest execution's rows are buffered, and they are its own. */
    cr_assert_eq(fbw_stmt_row_count(s), 42);
    fbw_value v[3];
    fbw_err err;
    cr_assert_eq(fbw_stmt_row(s, 41, v, &err), FBW_OK, "%s", err.msg);
    cr_expect_eq(v[0].u.i64, 42);
    cr_expect_eq(fbw_stmt_error(s)->code, FBW_OK, "the statement shows the latest execution");
    fbw_stmt_free(s);
    fbw_sqlt_close(&q);
}

Test(pipeline, own_results_fb3, .timeout = 60) { own_results(FBW_SRV_FB3); }
Test(pipeline, own_results_fb4, .timeout = 60) { own_results(FBW_SRV_FB4); }

/* 1000 executions of 16 KB requests and 100 rows of ~200 bytes each (16 MB each way) queued at
 * once, the client's socket buffers shrunk to 64 KB: a server that stops reading while it cannot
 * write its replies would deadlock with a client that only wrote; the client reads replies
 * whenever a write would block (tests/wire/test_sock.c checks that mechanism), and every result
 * must still be complete. Firebird's SuperServer queues what it reads in memory, so against it
 * this checks volume and completeness, not the deadlock itself. */
static void large_in_flight(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL); /* a deadlock would end in the client's 60 s timeout */
    int small = 65536, fd = fbw_client_fd(q.cl);
    cr_assert(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small) == 0);
    cr_assert(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small) == 0);
    fbw_stmt *s = fbw_sqlt_prepare_ok(&q, q.tx, GEN);
    enum { N = 1000 };
    static char pad[16001];
    memset(pad, 'p', sizeof pad - 1);
    static int limits[N];
    static fbw_exec_out out[N];
    for (int i = 0; i < N; i++)
        limits[i] = 100;
    many m = {s, q.tx, out, limits, N, 0, pad};
    cr_assert_eq(fbw_client_run(q.cl, queue_many, &m), FBW_OK, "%s", fbw_client_error(q.cl)->msg);
    size_t rows = 0;
    for (int i = 0; i < N; i++) {
        cr_expect_eq(out[i].err.code, FBW_OK, "execution %d: %s", i, out[i].err.msg);
        rows += out[i].rows;
    }
    cr_expect_eq(rows, (size_t)N * 100, "every row arrived");
    cr_expect_eq(fbw_stmt_row_count(s), 100, "only the last execution's rows are buffered");
    fbw_stmt_free(s);
    fbw_sqlt_close(&q);
}

Test(pipeline, large_in_flight_fb3, .timeout = 120) { large_in_flight(FBW_SRV_FB3); }
Test(pipeline, large_in_flight_fb4, .timeout = 120) { large_in_flight(FBW_SRV_FB4); }
