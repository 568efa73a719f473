/* SPDX-License-Identifier: MIT */
/* test_tx.c - transactions and server errors against real FB3 and FB4: update conflicts and
 * deadlocks between two connections (nowait, wait with a lock timeout, snapshot), the gds codes,
 * SQLSTATEs and fbw_err_classify classes they give; constraint, syntax and unknown-object errors;
 * isolation levels; read-only and autocommit transactions; COMMIT / ROLLBACK / SET TRANSACTION sent
 * as SQL keeping fbw_tx right; commit and rollback retaining. */
#include <criterion/criterion.h>

#include "sqlt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* iberror.h codes, written out here so a wrong table in msgs.c cannot hide behind its own names */
#define GDS_DEADLOCK 335544336u            /* deadlock */
#define GDS_LOCK_CONFLICT 335544345u       /* lock conflict on no wait transaction */
#define GDS_NO_DUP 335544349u              /* attempt to store duplicate value in unique index */
#define GDS_READ_ONLY_TRANS 335544361u     /* attempted update during read-only transaction */
#define GDS_UPDATE_CONFLICT 335544451u     /* update conflicts with concurrent update */
#define GDS_FOREIGN_KEY 335544466u         /* violation of FOREIGN KEY constraint */
#define GDS_LOCK_TIMEOUT 335544510u        /* lock time-out on wait transaction */
#define GDS_DSQL_FIELD_ERR 335544578u      /* Column unknown */
#define GDS_DSQL_RELATION_ERR 335544580u   /* Table unknown */
#define GDS_TOKEN_UNK 335544634u           /* Token unknown - line @1, column @2 */
#define GDS_UNIQUE_KEY_VIOLATION 335544665u /* violation of PRIMARY or UNIQUE KEY constraint */
#define GDS_CONCURRENT_TRANSACTION 335544878u /* concurrent transaction number is @1 */

static int has_code(const fbw_err *e, uint32_t code)
{
    for (int i = 0; i < e->ngds && i < FBW_ERR_GDS_MAX; i++)
        if (e->gds[i] == code)
            return 1;
    return 0;
}

static void print_err(const char *what, fbw_server_id id, const fbw_err *e)
{
    printf("%s %s: class %s, sqlstate %s, gds", fbw_server_name(id), what,
           fbw_errclass_name(fbw_err_classify(e)), e->sqlstate);
    for (int i = 0; i < e->ngds && i < FBW_ERR_GDS_MAX; i++)
        printf(" %u", e->gds[i]);
    printf("\n");
}

/* A table T (id primary key, v) with rows 1 and 2, committed. */
static void make_table(fbw_sqlt *q, char *tab, size_t size)
{
    char sql[256];
    fbw_sqlt_name(q, "T_TX", tab, size);
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

static void update_row(fbw_sqlt *q, fbw_tx *t, const char *tab, int id, fbw_err *err, int expect_ok)
{
    char sql[128];
    snprintf(sql, sizeof sql, "update %s set v = v + 1 where id = %d", tab, id);
    int rc = fbw_sqlt_exec(q, t, sql, NULL, err);
    if (expect_ok)
        cr_assert_eq(rc, FBW_OK, "%s: %s", sql, err->msg);
    else
        cr_assert_eq(rc, FBW_E_SERVER, "%s succeeded", sql);
}

static fbw_tx_opts opts(int isolation, int lock_timeout)
{
    fbw_tx_opts o;
    fbw_tx_opts_init(&o);
    o.isolation = isolation;
    o.lock_timeout = lock_timeout;
    return o;
}

/* Client options with a long timeout: the deadlock test waits for the server's deadlock scan
 * (DeadlockTimeout, 10 s by default). */
static void slow_opts(fbw_sqlt *probe, fbw_client_opts *o)
{
    fbw_servers_client_opts(&probe->srv, o);
    o->timeout_ms = 40000;
}

/* ---- update conflicts ---- */

/* Both transactions read committed. B updates a row A changed and has not committed:
 * nowait -> at once; wait + lock timeout 1 s -> after about a second. FB3 and FB4 send the same
 * vector for both: isc_deadlock, isc_update_conflict, isc_concurrent_transaction, SQLSTATE 40001
 * (a timed-out wait on a record is reported as a conflict, not as isc_lock_timeout). */
static void conflict(fbw_server_id id, int lock_timeout)
{
    fbw_sqlt a, b;
    fbw_sqlt_open(&a, id, NULL);
    fbw_sqlt_open(&b, id, NULL);
    char tab[40];
    make_table(&a, tab, sizeof tab);
    fbw_tx *ta, *tb;
    fbw_tx_opts oa = opts(FBW_ISO_READ_COMMITTED, 0), ob = opts(FBW_ISO_READ_COMMITTED, lock_timeout);
    fbw_sqlt_tx_start_ok(&a, &ta, &oa);
    fbw_sqlt_tx_start_ok(&b, &tb, &ob);
    fbw_err err;
    update_row(&a, ta, tab, 1, &err, 1);
    double t0 = fbw_servers_now();
    update_row(&b, tb, tab, 1, &err, 0);
    double waited = fbw_servers_now() - t0;
    print_err(lock_timeout ? "update conflict, wait 1 s" : "update conflict, nowait", id, &err);
    cr_expect(has_code(&err, GDS_UPDATE_CONFLICT), "%s", err.msg);
    cr_expect(has_code(&err, GDS_CONCURRENT_TRANSACTION), "%s", err.msg);
    cr_expect_str_eq(err.sqlstate, "40001");
    cr_expect_eq(err.gds[0], GDS_DEADLOCK, "%s", err.msg);
    if (lock_timeout) {
        /* the engine counts the timeout in whole seconds of the clock: 0..1 s, not exactly 1 */
        cr_expect_lt(waited, 3.0, "waited %.3f s", waited);
    } else {
        cr_expect_lt(waited, 1.0, "nowait waited %.3f s", waited);
    }
    /* update conflict outranks the primary code's class */
    cr_expect_eq(fbw_err_classify(&err), FBW_EC_UPDATE_CONFLICT, "class %s",
                 fbw_errclass_name(fbw_err_classify(&err)));
    /* B's transaction survives the error and can go on */
    update_row(&b, tb, tab, 2, &err, 1);
    fbw_sqlt_commit_ok(&a, ta);
    fbw_sqlt_commit_ok(&b, tb);
    fbw_sqlt_close(&b);
    drop_table(&a, tab);
    fbw_sqlt_close(&a);
}

Test(tx, conflict_nowait_fb3, .timeout = 60) { conflict(FBW_SRV_FB3, 0); }
Test(tx, conflict_nowait_fb4, .timeout = 60) { conflict(FBW_SRV_FB4, 0); }
Test(tx, conflict_wait_fb3, .timeout = 60) { conflict(FBW_SRV_FB3, 1); }
Test(tx, conflict_wait_fb4, .timeout = 60) { conflict(FBW_SRV_FB4, 1); }

/* Snapshot B started before A's committed change: B's update conflicts even in wait mode, with
 * the same vector as above (isc_deadlock first). */
static void snapshot_conflict(fbw_server_id id)
{
    fbw_sqlt a, b;
    fbw_sqlt_open(&a, id, NULL);
    fbw_sqlt_open(&b, id, NULL);
    char tab[40];
    make_table(&a, tab, sizeof tab);
    fbw_tx *ta, *tb;
    fbw_tx_opts ob = opts(FBW_ISO_SNAPSHOT, -1);
    fbw_sqlt_tx_start_ok(&b, &tb, &ob);
    fbw_sqlt_tx_start_ok(&a, &ta, NULL);
    fbw_err err;
    update_row(&a, ta, tab, 1, &err, 1);
    fbw_sqlt_commit_ok(&a, ta);
    update_row(&b, tb, tab, 1, &err, 0);
    print_err("snapshot update conflict", id, &err);
    cr_expect_eq(err.gds[0], GDS_DEADLOCK, "%s", err.msg);
    cr_expect(has_code(&err, GDS_UPDATE_CONFLICT), "%s", err.msg);
    cr_expect_str_eq(err.sqlstate, "40001");
    cr_expect_eq(fbw_err_classify(&err), FBW_EC_UPDATE_CONFLICT);
    cr_assert_eq(fbw_tx_rollback(tb), FBW_OK);
    fbw_sqlt_wait_ok(&b);
    cr_expect_eq(fbw_tx_state(tb), FBW_TX_ENDED);
    fbw_sqlt_close(&b);
    drop_table(&a, tab);
    fbw_sqlt_close(&a);
}

Test(tx, snapshot_conflict_fb3, .timeout = 60) { snapshot_conflict(FBW_SRV_FB3); }
Test(tx, snapshot_conflict_fb4, .timeout = 60) { snapshot_conflict(FBW_SRV_FB4); }

/* ---- a real deadlock: A holds row 1 and waits for row 2, B holds row 2 and asks for row 1.
 * A's waiting update runs in a thread (the client blocks); the lock manager's deadlock scan
 * breaks the cycle after DeadlockTimeout (10 s; FB4 took two scans here) for one of the two.
 * The victim gets the same vector as a nowait conflict (isc_deadlock, isc_update_conflict,
 * isc_concurrent_transaction), so it classifies as UPDATE_CONFLICT. ---- */

typedef struct waiter {
    fbw_client *cl;
    fbw_stmt *s;
    fbw_tx *t;
    int rc;
    fbw_err err;
} waiter;

static void *wait_thread(void *arg)
{
    waiter *w = arg;
    w->rc = fbw_client_execute(w->cl, w->s, w->t, NULL, 0);
    w->err = *fbw_stmt_error(w->s);
    /* A was the victim: its transaction still holds row 1, end it so B's wait ends */
    if (w->rc == FBW_OK && w->err.code != FBW_OK && fbw_tx_rollback(w->t) == FBW_OK)
        w->rc = fbw_client_wait(w->cl);
    return NULL;
}

static void deadlock(fbw_server_id id)
{
    fbw_sqlt a, b;
    fbw_client_opts o;
    fbw_sqlt_open(&a, id, NULL);
    slow_opts(&a, &o);
    fbw_sqlt_close(&a);
    fbw_sqlt_open(&a, id, &o);
    fbw_sqlt_open(&b, id, &o);
    char tab[40], sql[128];
    make_table(&a, tab, sizeof tab);
    fbw_tx *ta, *tb;
    fbw_tx_opts ow = opts(FBW_ISO_READ_COMMITTED, -1);
    fbw_sqlt_tx_start_ok(&a, &ta, &ow);
    fbw_sqlt_tx_start_ok(&b, &tb, &ow);
    fbw_err err;
    update_row(&a, ta, tab, 1, &err, 1);
    update_row(&b, tb, tab, 2, &err, 1);
    snprintf(sql, sizeof sql, "update %s set v = v + 1 where id = 2", tab);
    waiter w = {a.cl, fbw_sqlt_prepare_ok(&a, ta, sql), ta, 0, {0}};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, wait_thread, &w), 0);
    /* let A's request reach the server and block there before B closes the cycle */
    struct timespec pause = {0, 300000000};
    nanosleep(&pause, NULL);
    double t0 = fbw_servers_now();
    snprintf(sql, sizeof sql, "update %s set v = v + 1 where id = 1", tab);
    int rb = fbw_sqlt_exec(&b, tb, sql, NULL, &err);
    if (rb != FBW_OK) { /* B was the victim: end it so A's wait ends */
        cr_assert_eq(fbw_tx_rollback(tb), FBW_OK);
        fbw_sqlt_wait_ok(&b);
    }
    pthread_join(th, NULL);
    double waited = fbw_servers_now() - t0;
    cr_assert_eq(w.rc, FBW_OK, "A: %s", fbw_client_error(a.cl)->msg);
    const fbw_err *victim = rb != FBW_OK ? &err : &w.err;
    cr_assert((rb != FBW_OK) != (w.err.code != FBW_OK), "exactly one victim: B %d, A %d", rb,
              w.err.code);
    print_err("deadlock", id, victim);
    printf("%s deadlock: broken after %.1f s, victim %s\n", fbw_server_name(id), waited,
           rb != FBW_OK ? "B" : "A");
    cr_expect_eq(victim->gds[0], GDS_DEADLOCK, "%s", victim->msg);
    cr_expect_str_eq(victim->sqlstate, "40001");
    cr_expect(has_code(victim, GDS_UPDATE_CONFLICT), "%s", victim->msg);
    cr_expect_eq(fbw_err_classify(victim), FBW_EC_UPDATE_CONFLICT, "class %s",
                 fbw_errclass_name(fbw_err_classify(victim)));
    fbw_stmt_free(w.s);
    if (fbw_tx_state(ta) == FBW_TX_ACTIVE) {
        fbw_tx_rollback(ta);
        fbw_sqlt_wait_ok(&a);
    }
    if (fbw_tx_state(tb) == FBW_TX_ACTIVE) {
        fbw_tx_rollback(tb);
        fbw_sqlt_wait_ok(&b);
    }
    fbw_sqlt_close(&b);
    drop_table(&a, tab);
    fbw_sqlt_close(&a);
}

Test(tx, deadlock_fb3, .timeout = 90) { deadlock(FBW_SRV_FB3); }
Test(tx, deadlock_fb4, .timeout = 90) { deadlock(FBW_SRV_FB4); }

/* A lock that is not a record: the table's own lock. A (read committed) updates row 1, which
 * takes the table's lock in shared-write mode; B, a table-stability transaction (isc_tpb_consistency),
 * needs it exclusive to write, so its update of the other row (no record conflict) cannot get it.
 * Nowait gives isc_lock_conflict (LOCK_CONFLICT); wait with a lock timeout of 1 s gives
 * isc_lock_timeout (LOCK_TIMEOUT) after the second. The engine raises it where a transaction
 * reserves a table for writing (jrd/rlck.cpp RLCK_reserve_relation), the same in every version.
 * DROP TABLE of a table in use no longer serves: Firebird 6's versioned metadata cache lets the
 * drop commit while older transactions keep their version (jrd/dfw.epp delete_relation no longer
 * takes the table's existence lock exclusive), where FB3 to FB5 refused it with this conflict. */
static void lock_conflict(fbw_server_id id, int lock_timeout)
{
    fbw_sqlt a, b;
    fbw_sqlt_open(&a, id, NULL);
    fbw_sqlt_open(&b, id, NULL);
    char tab[40];
    make_table(&a, tab, sizeof tab);
    fbw_tx *ta, *tb;
    fbw_sqlt_tx_start_ok(&a, &ta, NULL);
    fbw_tx_opts ob = opts(FBW_ISO_SERIALIZABLE, lock_timeout);
    fbw_sqlt_tx_start_ok(&b, &tb, &ob);
    fbw_err err;
    update_row(&a, ta, tab, 1, &err, 1);
    double t0 = fbw_servers_now();
    update_row(&b, tb, tab, 2, &err, 0);
    double waited = fbw_servers_now() - t0;
    print_err(lock_timeout ? "table lock, wait 1 s" : "table lock, nowait", id, &err);
    cr_expect_eq(err.code, FBW_E_SERVER, "B got the table's lock");
    cr_expect(has_code(&err, lock_timeout ? GDS_LOCK_TIMEOUT : GDS_LOCK_CONFLICT), "%s", err.msg);
    cr_expect_eq(fbw_err_classify(&err), lock_timeout ? FBW_EC_LOCK_TIMEOUT : FBW_EC_LOCK_CONFLICT,
                 "class %s", fbw_errclass_name(fbw_err_classify(&err)));
    cr_expect_str_eq(err.sqlstate, "40001");
    cr_expect_lt(waited, 3.0, "waited %.3f s", waited); /* whole clock seconds: 0..1 s */
    if (fbw_tx_state(tb) == FBW_TX_ACTIVE) {
        fbw_tx_rollback(tb);
        fbw_sqlt_wait_ok(&b);
    }
    fbw_sqlt_commit_ok(&a, ta);
    fbw_sqlt_close(&b);
    drop_table(&a, tab);
    fbw_sqlt_close(&a);
}

Test(tx, lock_conflict_fb3, .timeout = 60) { lock_conflict(FBW_SRV_FB3, 0); }
Test(tx, lock_conflict_fb4, .timeout = 60) { lock_conflict(FBW_SRV_FB4, 0); }
Test(tx, lock_timeout_fb3, .timeout = 60) { lock_conflict(FBW_SRV_FB3, 1); }
Test(tx, lock_timeout_fb4, .timeout = 60) { lock_conflict(FBW_SRV_FB4, 1); }

/* ---- constraint and statement errors ---- */

typedef struct err_case {
    const char *sql;      /* %s = table, %s = child table */
    int at_prepare;       /* the error comes with prepare, not execute */
    uint32_t code;        /* must be in the chain */
    const char *sqlstate;
    fbw_errclass cls;
} err_case;

static void errors(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    char tab[40], child[40], sql[512];
    make_table(&q, tab, sizeof tab);
    fbw_sqlt_name(&q, "T_CHILD", child, sizeof child);
    snprintf(sql, sizeof sql, "create table %s (id integer not null primary key, "
             "pid integer references %s (id))", child, tab);
    fbw_sqlt_ddl_ok(&q, sql);
    const err_case cases[] = {
        {"insert into %s (id, v) values (1, 5)", 0, GDS_UNIQUE_KEY_VIOLATION, "23000", FBW_EC_UNIQUE},
        {"insert into %2$s (id, pid) values (1, 77)", 0, GDS_FOREIGN_KEY, "23000", FBW_EC_FOREIGN_KEY},
        {"selec id from %s", 1, GDS_TOKEN_UNK, "42000", FBW_EC_SYNTAX},
        {"select id from %s_NOPE", 1, GDS_DSQL_RELATION_ERR, "42S02", FBW_EC_UNKNOWN_OBJECT},
        {"select nope from %s", 1, GDS_DSQL_FIELD_ERR, "42S22", FBW_EC_UNKNOWN_OBJECT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const err_case *k = &cases[i];
        snprintf(sql, sizeof sql, k->sql, tab, child);
        fbw_stmt *s = fbw_sqlt_prepare(&q, q.tx, sql);
        fbw_err err;
        if (k->at_prepare) {
            cr_assert(!fbw_stmt_prepared(s), "%s: prepared", sql);
            err = *fbw_stmt_error(s);
        } else {
            cr_assert(fbw_stmt_prepared(s), "%s: %s", sql, fbw_stmt_error(s)->msg);
            cr_assert_eq(fbw_sqlt_run(&q, s, q.tx, NULL, &err), FBW_E_SERVER, "%s: ran", sql);
        }
        print_err(sql, id, &err);
        cr_expect_eq(err.code, FBW_E_SERVER);
        cr_expect(has_code(&err, k->code), "%s: %u missing in %s", sql, k->code, err.msg);
        cr_expect_str_eq(err.sqlstate, k->sqlstate, "%s: sqlstate %s", sql, err.sqlstate);
        cr_expect_eq(fbw_err_classify(&err), k->cls, "%s: class %s", sql,
                     fbw_errclass_name(fbw_err_classify(&err)));
        fbw_stmt_free(s);
    }
    /* an error leaves the transaction usable */
    snprintf(sql, sizeof sql, "select count(*) from %s", tab);
    cr_expect_eq(fbw_sqlt_int_ok(&q, q.tx, sql), 2);
    fbw_sqlt_commit_ok(&q, q.tx);
    snprintf(sql, sizeof sql, "drop table %s", child);
    fbw_sqlt_ddl_ok(&q, sql);
    drop_table(&q, tab);
    fbw_sqlt_close(&q);
}

Test(tx, errors_fb3, .timeout = 60) { errors(FBW_SRV_FB3); }
Test(tx, errors_fb4, .timeout = 60) { errors(FBW_SRV_FB4); }

/* ---- isolation, read only, autocommit ---- */

static int64_t count_rows(fbw_sqlt *q, fbw_tx *t, const char *tab)
{
    char sql[128];
    snprintf(sql, sizeof sql, "select count(*) from %s", tab);
    return fbw_sqlt_int_ok(q, t, sql);
}

static void isolation(fbw_server_id id)
{
    fbw_sqlt a, b;
    fbw_sqlt_open(&a, id, NULL);
    fbw_sqlt_open(&b, id, NULL);
    char tab[40], sql[128];
    make_table(&a, tab, sizeof tab);
    fbw_tx *rc, *snap, *ro;
    fbw_tx_opts orc = opts(FBW_ISO_READ_COMMITTED, -1), osn = opts(FBW_ISO_SNAPSHOT, -1);
    fbw_sqlt_tx_start_ok(&a, &rc, &orc);
    fbw_sqlt_tx_start_ok(&a, &snap, &osn);
    cr_assert_eq(count_rows(&a, rc, tab), 2);
    cr_assert_eq(count_rows(&a, snap, tab), 2);
    /* B inserts and commits */
    fbw_tx *tb;
    fbw_sqlt_tx_start_ok(&b, &tb, NULL);
    snprintf(sql, sizeof sql, "insert into %s (id, v) values (3, 0)", tab);
    fbw_sqlt_exec_ok(&b, tb, sql, NULL);
    cr_expect_eq(count_rows(&a, rc, tab), 2, "read committed sees an uncommitted insert");
    fbw_sqlt_commit_ok(&b, tb);
    cr_expect_eq(count_rows(&a, rc, tab), 3, "read committed misses a committed insert");
    cr_expect_eq(count_rows(&a, snap, tab), 2, "snapshot sees an insert committed after its start");
    fbw_sqlt_commit_ok(&a, rc);
    fbw_sqlt_commit_ok(&a, snap);

    /* read only rejects writes */
    fbw_tx_opts oro = opts(FBW_ISO_READ_COMMITTED, -1);
    oro.read_only = 1;
    fbw_sqlt_tx_start_ok(&a, &ro, &oro);
    snprintf(sql, sizeof sql, "insert into %s (id, v) values (4, 0)", tab);
    fbw_err err;
    cr_assert_eq(fbw_sqlt_exec(&a, ro, sql, NULL, &err), FBW_E_SERVER, "read-only insert went through");
    print_err("read-only insert", id, &err);
    cr_expect(has_code(&err, GDS_READ_ONLY_TRANS), "%s", err.msg);
    cr_expect_str_eq(err.sqlstate, "25006");
    cr_expect_eq(count_rows(&a, ro, tab), 3);
    fbw_sqlt_commit_ok(&a, ro);

    /* autocommit: each insert is committed by the engine, B sees it while A never commits */
    fbw_tx *ac;
    fbw_tx_opts oac = opts(FBW_ISO_READ_COMMITTED, -1);
    oac.autocommit = 1;
    fbw_sqlt_tx_start_ok(&a, &ac, &oac);
    snprintf(sql, sizeof sql, "insert into %s (id, v) values (5, 0)", tab);
    fbw_sqlt_exec_ok(&a, ac, sql, NULL);
    fbw_sqlt_tx_start_ok(&b, &tb, &orc);
    cr_expect_eq(count_rows(&b, tb, tab), 4, "autocommit insert not visible to another connection");
    snprintf(sql, sizeof sql, "insert into %s (id, v) values (6, 0)", tab);
    fbw_sqlt_exec_ok(&a, ac, sql, NULL);
    cr_expect_eq(count_rows(&b, tb, tab), 5, "second autocommit insert not visible");
    cr_expect_eq(fbw_tx_state(ac), FBW_TX_ACTIVE);
    fbw_sqlt_commit_ok(&b, tb);
    cr_assert_eq(fbw_tx_rollback(ac), FBW_OK);
    fbw_sqlt_wait_ok(&a);
    fbw_sqlt_tx_start_ok(&b, &tb, &orc);
    cr_expect_eq(count_rows(&b, tb, tab), 5, "rollback undid autocommitted inserts");
    fbw_sqlt_commit_ok(&b, tb);
    fbw_sqlt_close(&b);
    drop_table(&a, tab);
    fbw_sqlt_close(&a);
}

Test(tx, isolation_fb3, .timeout = 60) { isolation(FBW_SRV_FB3); }
Test(tx, isolation_fb4, .timeout = 60) { isolation(FBW_SRV_FB4); }

/* ---- transaction control as SQL, and retaining ---- */

static void run_control(fbw_sqlt *q, fbw_tx *t, const char *sql, int want_type)
{
    fbw_stmt *s = fbw_sqlt_prepare_ok(q, fbw_tx_state(t) == FBW_TX_ACTIVE ? t : NULL, sql);
    cr_expect_eq(fbw_stmt_type(s), want_type, "%s: type %d", sql, fbw_stmt_type(s));
    fbw_err err;
    cr_assert_eq(fbw_sqlt_run(q, s, t, NULL, &err), FBW_OK, "%s: %s", sql, err.msg);
    fbw_stmt_free(s);
    fbw_sqlt_wait_ok(q);
}

static void sql_control(fbw_server_id id)
{
    fbw_sqlt a, b;
    fbw_sqlt_open(&a, id, NULL);
    fbw_sqlt_open(&b, id, NULL);
    char tab[40], sql[128];
    make_table(&a, tab, sizeof tab);
    fbw_tx *t;
    fbw_sqlt_tx_start_ok(&a, &t, NULL);
    uint16_t first = fbw_tx_server_handle(t);
    snprintf(sql, sizeof sql, "insert into %s (id, v) values (10, 0)", tab);
    fbw_sqlt_exec_ok(&a, t, sql, NULL);
    run_control(&a, t, "COMMIT", FBW_STMT_COMMIT);
    cr_expect_eq(fbw_tx_state(t), FBW_TX_ENDED, "COMMIT as SQL: state %d", fbw_tx_state(t));
    cr_expect_eq(fbw_tx_server_handle(t), 0);
    uint16_t h;
    cr_expect_eq(fbw_tx_handle(t, &h), FBW_E_USAGE);
    cr_expect_eq(count_rows(&b, b.tx, tab), 3, "COMMIT as SQL did not commit");

    run_control(&a, t, "SET TRANSACTION READ WRITE WAIT ISOLATION LEVEL READ COMMITTED",
                FBW_STMT_START_TRANS);
    cr_expect_eq(fbw_tx_state(t), FBW_TX_ACTIVE, "SET TRANSACTION as SQL: state %d", fbw_tx_state(t));
    cr_expect_neq(fbw_tx_server_handle(t), 0);
    printf("%s: handles: fbw_tx_start %u, SET TRANSACTION %u\n", fbw_server_name(id), first, fbw_tx_server_handle(t));
    snprintf(sql, sizeof sql, "insert into %s (id, v) values (11, 0)", tab);
    fbw_sqlt_exec_ok(&a, t, sql, NULL);
    cr_expect_eq(count_rows(&a, t, tab), 4);
    run_control(&a, t, "ROLLBACK", FBW_STMT_ROLLBACK);
    cr_expect_eq(fbw_tx_state(t), FBW_TX_ENDED, "ROLLBACK as SQL: state %d", fbw_tx_state(t));
    cr_expect_eq(fbw_tx_server_handle(t), 0);
    cr_expect_eq(count_rows(&b, b.tx, tab), 3, "ROLLBACK as SQL did not roll back");

    /* the same through execute immediate */
    fbw_exec_result res;
    const char *set = "SET TRANSACTION";
    cr_assert_eq(fbw_exec_immediate(a.c, t, set, strlen(set), &res), FBW_OK);
    fbw_sqlt_wait_ok(&a);
    cr_assert(res.done && res.err.code == FBW_OK, "%s", res.err.msg);
    cr_expect_eq(fbw_tx_state(t), FBW_TX_ACTIVE);
    cr_expect_neq(fbw_tx_server_handle(t), 0);
    cr_assert_eq(fbw_exec_immediate(a.c, t, "COMMIT", 6, &res), FBW_OK);
    fbw_sqlt_wait_ok(&a);
    cr_expect_eq(fbw_tx_state(t), FBW_TX_ENDED);

    /* retaining: the transaction and its handle live on, the work is committed / undone */
    fbw_sqlt_tx_start_ok(&a, &t, NULL);
    uint16_t keep = fbw_tx_server_handle(t);
    snprintf(sql, sizeof sql, "insert into %s (id, v) values (12, 0)", tab);
    fbw_sqlt_exec_ok(&a, t, sql, NULL);
    cr_assert_eq(fbw_tx_commit_retaining(t), FBW_OK);
    fbw_sqlt_wait_ok(&a);
    cr_expect_eq(fbw_tx_state(t), FBW_TX_ACTIVE);
    cr_expect_eq(fbw_tx_server_handle(t), keep);
    cr_expect_eq(count_rows(&b, b.tx, tab), 4, "commit retaining did not commit");
    snprintf(sql, sizeof sql, "insert into %s (id, v) values (13, 0)", tab);
    fbw_sqlt_exec_ok(&a, t, sql, NULL);
    cr_expect_eq(count_rows(&a, t, tab), 5);
    cr_assert_eq(fbw_tx_rollback_retaining(t), FBW_OK);
    fbw_sqlt_wait_ok(&a);
    cr_expect_eq(fbw_tx_state(t), FBW_TX_ACTIVE);
    cr_expect_eq(fbw_tx_server_handle(t), keep);
    cr_expect_eq(count_rows(&a, t, tab), 4, "rollback retaining kept the insert");
    fbw_sqlt_commit_ok(&a, t);
    fbw_sqlt_close(&b);
    drop_table(&a, tab);
    fbw_sqlt_close(&a);
}

Test(tx, sql_control_fb3, .timeout = 60) { sql_control(FBW_SRV_FB3); }
Test(tx, sql_control_fb4, .timeout = 60) { sql_control(FBW_SRV_FB4); }
