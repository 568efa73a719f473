/* SPDX-License-Identifier: MIT */
/* test_errclass.c - the library's error model (wire/errclass.c) on errors provoked on real FB3 and
 * FB4: a record conflict between two connections is in DEADLOCK and UPDATE_CONFLICT and classed as
 * the latter; an UPDATE that waited for a row another transaction deleted and committed (FB3:
 * isc_random "cannot update erased record", the one text case) is UPDATE_CONFLICT; a unique
 * violation found through fbw_client_call_error is UNIQUE; a no-wait lock conflict, a cancel and
 * FB4's statement timeout have their classes. (test_tx.c covers deadlocks and lock timeouts, with
 * the codes of each vector.) */
#include <criterion/criterion.h>

#include "sqlt.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* iberror.h, written out so a wrong table in msgs.c cannot hide behind its own names */
#define GDS_RANDOM 335544382u
#define GDS_CANCELLED 335544794u
#define GDS_ATT_STMT_TIMEOUT 335545128u

static void print_err(const char *what, fbw_server_id id, const fbw_err *e)
{
    printf("%s %s: class %s, sqlstate %s, gds", fbw_server_name(id), what,
           fbw_errclass_name(fbw_err_classify(e)), e->sqlstate);
    for (int i = 0; i < e->ngds && i < FBW_ERR_GDS_MAX; i++)
        printf(" %u", e->gds[i]);
    printf(": %s\n", e->msg);
}

/* A table (id primary key, v) with rows 1 and 2, committed. */
static void make_table(fbw_sqlt *q, char *tab, size_t size)
{
    char sql[256];
    fbw_sqlt_name(q, "T_EC", tab, size);
    snprintf(sql, sizeof sql, "create table %s (id integer not null primary key, v integer)", tab);
    fbw_sqlt_ddl_ok(q, sql);
    snprintf(sql, sizeof sql, "insert into %s (id, v) select 1, 0 from rdb$database union all "
             "select 2, 0 from rdb$database", tab);
    fbw_sqlt_ddl_ok(q, sql);
}

static void drop_table(fbw_sqlt *q, const char *tab)
{
    char sql[128];
    snprintf(sql, sizeof sql, "drop table %s", tab);
    fbw_sqlt_ddl_ok(q, sql);
}

static fbw_tx_opts read_committed(int lock_timeout)
{
    fbw_tx_opts o;
    fbw_tx_opts_init(&o);
    o.isolation = FBW_ISO_READ_COMMITTED;
    o.lock_timeout = lock_timeout;
    return o;
}

/* ---- record conflict: B updates the row A changed and has not committed (no wait) ---- */

static void record_conflict(fbw_server_id id)
{
    fbw_sqlt a, b;
    fbw_sqlt_open(&a, id, NULL);
    fbw_sqlt_open(&b, id, NULL);
    char tab[40], sql[128];
    make_table(&a, tab, sizeof tab);
    fbw_tx *ta, *tb;
    fbw_tx_opts o = read_committed(0);
    fbw_sqlt_tx_start_ok(&a, &ta, &o);
    fbw_sqlt_tx_start_ok(&b, &tb, &o);
    snprintf(sql, sizeof sql, "update %s set v = v + 1 where id = 1", tab);
    fbw_sqlt_exec_ok(&a, ta, sql, NULL);
    fbw_err err;
    cr_assert_eq(fbw_sqlt_exec(&b, tb, sql, NULL, &err), FBW_E_SERVER, "B's update went through");
    print_err("record conflict", id, &err);
    cr_expect_eq(fbw_err_classify(&err), FBW_EC_UPDATE_CONFLICT);
    cr_expect(fbw_err_in_class(&err, FBW_EC_DEADLOCK), "isc_deadlock leads the vector");
    cr_expect(fbw_err_in_class(&err, FBW_EC_UPDATE_CONFLICT));
    cr_expect(!fbw_err_in_class(&err, FBW_EC_CONNECTION_LOST));
    fbw_sqlt_commit_ok(&a, ta);
    fbw_sqlt_commit_ok(&b, tb);
    fbw_sqlt_close(&b);
    drop_table(&a, tab);
    fbw_sqlt_close(&a);
}

Test(errclass, record_conflict_fb3, .timeout = 60) { record_conflict(FBW_SRV_FB3); }
Test(errclass, record_conflict_fb4, .timeout = 60) { record_conflict(FBW_SRV_FB4); }

/* ---- the row an UPDATE waits for is deleted and committed ---- */

typedef struct waiter {
    fbw_sqlt *q;
    fbw_tx *t;
    const char *sql;
    int rc;
    fbw_err err;
} waiter;

static void *update_waits(void *arg)
{
    waiter *w = arg;
    w->rc = fbw_sqlt_exec(w->q, w->t, w->sql, NULL, &w->err);
    return NULL;
}

/* A deletes row 1; B's UPDATE of it waits for A (lock timeout 10 s); A commits. FB3 answers B with
 * isc_random "cannot update erased record" (vio.cpp prepare_update, IBERROR 188); FB4 as set up
 * here (read committed upgraded to read consistency) restarts the statement, which then finds no
 * row, and succeeds. Whatever the server says, an error must be UPDATE_CONFLICT. */
static void erased_row(fbw_server_id id)
{
    fbw_sqlt a, b;
    fbw_sqlt_open(&a, id, NULL);
    fbw_sqlt_open(&b, id, NULL);
    char tab[40], del[128], upd[128];
    make_table(&a, tab, sizeof tab);
    fbw_tx *ta, *tb;
    fbw_tx_opts o = read_committed(10);
    fbw_sqlt_tx_start_ok(&a, &ta, &o);
    fbw_sqlt_tx_start_ok(&b, &tb, &o);
    snprintf(del, sizeof del, "delete from %s where id = 1", tab);
    snprintf(upd, sizeof upd, "update %s set v = v + 1 where id = 1", tab);
    fbw_sqlt_exec_ok(&a, ta, del, NULL);
    waiter w = {&b, tb, upd, 0, {0}};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, update_waits, &w), 0);
    struct timespec pause = {0, 400000000}; /* let B's update reach the server and wait */
    nanosleep(&pause, NULL);
    fbw_sqlt_commit_ok(&a, ta);
    pthread_join(th, NULL);
    if (w.rc == FBW_OK)
        printf("%s erased row: the update succeeded (statement restarted)\n", fbw_server_name(id));
    else
        print_err("erased row", id, &w.err);
    if (id == FBW_SRV_FB3) {
        cr_assert_eq(w.rc, FBW_E_SERVER, "FB3: the update of an erased row succeeded");
        cr_expect(fbw_err_has_gds(&w.err, GDS_RANDOM), "FB3 sends isc_random: %s", w.err.msg);
    }
    if (w.rc != FBW_OK)
        cr_expect_eq(fbw_err_classify(&w.err), FBW_EC_UPDATE_CONFLICT, "class %s",
                     fbw_errclass_name(fbw_err_classify(&w.err)));
    if (fbw_tx_state(tb) == FBW_TX_ACTIVE) {
        cr_assert_eq(fbw_tx_rollback(tb), FBW_OK);
        fbw_sqlt_wait_ok(&b);
    }
    fbw_sqlt_close(&b);
    drop_table(&a, tab);
    fbw_sqlt_close(&a);
}

Test(errclass, erased_row_fb3, .timeout = 60) { erased_row(FBW_SRV_FB3); }
Test(errclass, erased_row_fb4, .timeout = 60) { erased_row(FBW_SRV_FB4); }

/* ---- where the error of a call is: fbw_client_call_error ---- */

/* A duplicate key: the run succeeds (every reply arrived), the error is the statement's. A commit
 * of an ended transaction: the request cannot be queued, the error is the transaction's. */
static void call_error(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    char tab[40], sql[128];
    make_table(&q, tab, sizeof tab);
    snprintf(sql, sizeof sql, "insert into %s (id, v) values (2, 9)", tab);
    fbw_stmt *st = fbw_sqlt_prepare_ok(&q, q.tx, sql);
    int rc = fbw_client_execute(q.cl, st, q.tx, NULL, 0);
    cr_assert_eq(rc, FBW_OK, "%s", fbw_client_error(q.cl)->msg);
    const fbw_err *e = fbw_client_call_error(q.cl, rc, st, q.tx);
    print_err("duplicate key", id, e);
    cr_expect_eq(e, fbw_stmt_error(st), "the statement holds the error");
    cr_expect_eq(fbw_err_classify(e), FBW_EC_UNIQUE);
    fbw_stmt_free(st);
    fbw_sqlt_commit_ok(&q, q.tx);
    rc = fbw_client_commit(q.cl, q.tx); /* q.tx has ended */
    cr_assert_eq(rc, FBW_E_USAGE);
    e = fbw_client_call_error(q.cl, rc, NULL, q.tx);
    cr_expect_eq(e, fbw_tx_error(q.tx), "the transaction holds the error: %s", e->msg);
    cr_expect_eq(e->code, FBW_E_USAGE);
    cr_expect_eq(fbw_err_classify(e), FBW_EC_OTHER);
    /* nothing failed: a clear record, never NULL */
    cr_expect_eq(fbw_client_call_error(q.cl, FBW_OK, NULL, NULL)->code, FBW_OK);
    fbw_sqlt_tx_start_ok(&q, &q.tx, NULL);
    drop_table(&q, tab);
    fbw_sqlt_close(&q);
}

Test(errclass, call_error_fb3, .timeout = 60) { call_error(FBW_SRV_FB3); }
Test(errclass, call_error_fb4, .timeout = 60) { call_error(FBW_SRV_FB4); }

/* ---- a table another transaction writes to cannot be locked by a no-wait one: LOCK_CONFLICT ----
 * A (read committed) updates row 1 and so holds the table's lock in shared-write mode; B, a no-wait
 * table-stability transaction, needs that lock exclusive to update row 2 and is refused at once
 * (jrd/rlck.cpp RLCK_reserve_relation, every version). Not DROP TABLE of a table in use: Firebird 6
 * lets that through (its versioned metadata cache keeps the old version for the transactions that use
 * it), so it is no conflict there. */

static void lock_conflict(fbw_server_id id)
{
    fbw_sqlt a, b;
    fbw_sqlt_open(&a, id, NULL);
    fbw_sqlt_open(&b, id, NULL);
    char tab[40], sql[128];
    make_table(&a, tab, sizeof tab);
    fbw_tx *ta, *tb;
    fbw_tx_opts o = read_committed(0);
    o.isolation = FBW_ISO_SERIALIZABLE;
    fbw_sqlt_tx_start_ok(&a, &ta, NULL);
    fbw_sqlt_tx_start_ok(&b, &tb, &o);
    snprintf(sql, sizeof sql, "update %s set v = 5 where id = 1", tab);
    fbw_sqlt_exec_ok(&a, ta, sql, NULL);
    snprintf(sql, sizeof sql, "update %s set v = 6 where id = 2", tab);
    fbw_err err;
    cr_assert_eq(fbw_sqlt_exec(&b, tb, sql, NULL, &err), FBW_E_SERVER, "B got the table's lock");
    print_err("table lock, no wait", id, &err);
    cr_expect_eq(fbw_err_classify(&err), FBW_EC_LOCK_CONFLICT);
    if (fbw_tx_state(tb) == FBW_TX_ACTIVE) {
        fbw_tx_rollback(tb);
        fbw_sqlt_wait_ok(&b);
    }
    fbw_sqlt_commit_ok(&a, ta);
    fbw_sqlt_close(&b);
    drop_table(&a, tab);
    fbw_sqlt_close(&a);
}

Test(errclass, lock_conflict_fb3, .timeout = 60) { lock_conflict(FBW_SRV_FB3); }
Test(errclass, lock_conflict_fb4, .timeout = 60) { lock_conflict(FBW_SRV_FB4); }

/* ---- cancel and FB4's statement timeout ---- */

/* Runs for minutes on both servers (test_cancel.c). */
static const char LONG_SQL[] = "select count(*) from rdb$fields a cross join rdb$fields b "
                               "cross join rdb$fields c cross join rdb$types d";

static void *cancel_soon(void *arg)
{
    struct timespec pause = {0, 300000000};
    nanosleep(&pause, NULL);
    (void)fbw_client_cancel(arg);
    return NULL;
}

static void cancelled(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, cancel_soon, q.cl), 0);
    fbw_err err;
    int rc = fbw_sqlt_exec(&q, q.tx, LONG_SQL, NULL, &err);
    pthread_join(th, NULL);
    cr_assert_eq(rc, FBW_E_SERVER, "not cancelled: %s", fbw_rc_name(rc));
    print_err("cancel", id, &err);
    cr_expect(fbw_err_has_gds(&err, GDS_CANCELLED), "%s", err.msg);
    cr_expect_eq(fbw_err_classify(&err), FBW_EC_CANCELLED);
    cr_expect(!fbw_err_in_class(&err, FBW_EC_STATEMENT_TIMEOUT));
    fbw_sqlt_close(&q);
}

Test(errclass, cancelled_fb3, .timeout = 60) { cancelled(FBW_SRV_FB3); }
Test(errclass, cancelled_fb4, .timeout = 60) { cancelled(FBW_SRV_FB4); }

/* FB4: SET STATEMENT TIMEOUT (attachment level) ends the long query with isc_cancelled and
 * isc_att_stmt_timeout: STATEMENT_TIMEOUT, and still a cancel. */
Test(errclass, statement_timeout_fb4, .timeout = 60)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, FBW_SRV_FB4, NULL);
    const char *set = "set statement timeout 300 millisecond";
    fbw_exec_result res;
    cr_assert_eq(fbw_exec_immediate(q.c, q.tx, set, strlen(set), &res), FBW_OK);
    fbw_sqlt_wait_ok(&q);
    cr_assert_eq(res.err.code, FBW_OK, "%s: %s", set, res.err.msg);
    fbw_err err;
    double t0 = fbw_servers_now();
    int rc = fbw_sqlt_exec(&q, q.tx, LONG_SQL, NULL, &err);
    cr_assert_eq(rc, FBW_E_SERVER, "no timeout: %s", fbw_rc_name(rc));
    print_err("statement timeout", FBW_SRV_FB4, &err);
    printf("FB4 statement timeout after %.2f s\n", fbw_servers_now() - t0);
    cr_expect(fbw_err_has_gds(&err, GDS_ATT_STMT_TIMEOUT), "%s", err.msg);
    cr_expect_eq(fbw_err_classify(&err), FBW_EC_STATEMENT_TIMEOUT);
    cr_expect(fbw_err_in_class(&err, FBW_EC_CANCELLED));
    fbw_sqlt_close(&q);
}
