/* SPDX-License-Identifier: MIT */
/* test_cancel.c - fbw_client_cancel against real FB3 and FB4 over encrypted connections: a long
 * cross join cancelled from another thread fails with isc_cancelled within a second and leaves the
 * connection, its transaction and statements usable; cancels racing the end of short statements
 * never leak into the next statement; plain and compressed streams stay in step (the op_cancel
 * goes through the same cipher and zlib stream as the waiting thread's requests); a cancel with
 * nothing running sends nothing. */
#include <criterion/criterion.h>

#include "sqlt.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define GDS_CANCELLED 335544794u /* operation was cancelled (iberror.h) */

/* A cross join that runs for minutes on both servers (~170 fields cubed take 1.3 s; times ~300
 * types). */
static const char LONG_SQL[] = "select count(*) from rdb$fields a cross join rdb$fields b "
                               "cross join rdb$fields c cross join rdb$types d";

typedef struct canceller {
    fbw_client *cl;
    long delay_us;
    int rc;
    double at; /* when the cancel went out */
} canceller;

static void *cancel_later(void *arg)
{
    canceller *k = arg;
    struct timespec ts = {.tv_sec = k->delay_us / 1000000, .tv_nsec = (k->delay_us % 1000000) * 1000};
    nanosleep(&ts, NULL);
    k->at = fbw_servers_now();
    k->rc = fbw_client_cancel(k->cl);
    return NULL;
}

static int has_code(const fbw_err *e, uint32_t code)
{
    for (int i = 0; i < e->ngds && i < FBW_ERR_GDS_MAX; i++)
        if (e->gds[i] == code)
            return 1;
    return 0;
}

/* Run sql in q->tx while another thread cancels after delay_us; returns the run's result. */
static int run_cancelled(fbw_sqlt *q, const char *sql, long delay_us, fbw_err *err, canceller *k)
{
    fbw_stmt *s = fbw_sqlt_prepare_ok(q, q->tx, sql);
    pthread_t th;
    *k = (canceller){.cl = q->cl, .delay_us = delay_us};
    cr_assert_eq(pthread_create(&th, NULL, cancel_later, k), 0);
    int rc = fbw_sqlt_run(q, s, q->tx, NULL, err);
    pthread_join(th, NULL);
    fbw_stmt_free(s);
    return rc;
}

static void long_query_cancelled(fbw_server_id id, int compress)
{
    fbw_sqlt q;
    fbw_client_opts o;
    fbw_servers srv;
    fbw_servers_require(&srv);
    fbw_servers_client_opts(&srv, &o);
    o.conn.compress = compress;
    fbw_sqlt_open(&q, id, &o);
    cr_assert_str_neq(fbw_conn_get_info(q.c)->wire_crypt, "none", "%s: the test wants an encrypted stream",
                      fbw_server_name(id));
    fbw_err err;
    canceller k;
    double t0 = fbw_servers_now();
    int rc = run_cancelled(&q, LONG_SQL, 300000, &err, &k);
    double done = fbw_servers_now();
    cr_assert_eq(k.rc, FBW_OK, "%s: fbw_client_cancel: %s", fbw_server_name(id), fbw_rc_name(k.rc));
    cr_assert_eq(rc, FBW_E_SERVER, "%s: the cross join was not cancelled (%s after %.1f s)",
                 fbw_server_name(id), fbw_rc_name(rc), done - t0);
    cr_assert(has_code(&err, GDS_CANCELLED), "%s: error is not isc_cancelled: %s", fbw_server_name(id),
              err.msg);
    cr_assert(strstr(err.msg, "cancelled"), "%s: message: %s", fbw_server_name(id), err.msg);
    printf("%s%s: cancelled %.3f s after the cancel call: %s\n", fbw_server_name(id),
           compress ? " (zlib)" : "", done - k.at, err.msg);
    cr_assert_lt(done - k.at, 1.0, "%s: the cancel took %.3f s", fbw_server_name(id), done - k.at);
    /* The connection and its transaction go on. */
    cr_assert_eq(fbw_sqlt_int_ok(&q, q.tx, "select count(*) from rdb$database"), 1);
    fbw_sqlt_commit_ok(&q, q.tx);
    fbw_sqlt_tx_start_ok(&q, &q.tx, NULL);
    cr_assert_eq(fbw_sqlt_int_ok(&q, q.tx, "select 2 from rdb$database"), 2);
    fbw_sqlt_close(&q);
}

Test(cancel, long_query_fb3) { long_query_cancelled(FBW_SRV_FB3, 0); }
Test(cancel, long_query_fb4) { long_query_cancelled(FBW_SRV_FB4, 0); }
Test(cancel, long_query_fb4_compressed) { long_query_cancelled(FBW_SRV_FB4, 1); }

/* Cancels that race the end of a short statement: each one either cancels it or comes too late,
 * and in neither case does the next statement fail. */
static void racing(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    unsigned cancelled = 0, finished = 0, late = 0;
    for (int i = 0; i < 40; i++) {
        fbw_err err;
        canceller k;
        int rc = run_cancelled(&q, "select count(*) from rdb$fields a cross join rdb$fields b",
                               (long)(i % 10) * 2000, &err, &k);
        if (rc == FBW_OK) {
            finished++;
            late += k.rc == FBW_OK; /* sent, yet the statement had ended: cleared, must not leak */
        } else {
            cr_assert(has_code(&err, GDS_CANCELLED), "%s #%d: %s", fbw_server_name(id), i, err.msg);
            cancelled++;
        }
        int64_t v = fbw_sqlt_int_ok(&q, q.tx, "select 7 from rdb$database");
        cr_assert_eq(v, 7, "%s #%d: the next statement after a cancel", fbw_server_name(id), i);
    }
    printf("%s: 40 racing cancels: %u cancelled the statement, %u came after its end (%u of them "
           "sent while the reply was on its way)\n", fbw_server_name(id), cancelled, finished, late);
    fbw_sqlt_close(&q);
}

Test(cancel, racing_fb3) { racing(FBW_SRV_FB3); }
Test(cancel, racing_fb4) { racing(FBW_SRV_FB4); }

Test(cancel, nothing_running)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, FBW_SRV_FB4, NULL);
    uint64_t sent = fbw_conn_stats(q.c)->packets_sent;
    cr_assert_eq(fbw_client_cancel(q.cl), FBW_E_USAGE);
    cr_assert_eq(fbw_conn_stats(q.c)->packets_sent, sent, "a cancel with nothing running was sent");
    cr_assert_eq(fbw_sqlt_int_ok(&q, q.tx, "select 3 from rdb$database"), 3);
    fbw_sqlt_close(&q);
}
