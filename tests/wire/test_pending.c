/* SPDX-License-Identifier: MIT */
/* test_pending.c - replies pending on freed objects (wire/pending.h), no server: the rule itself
 * (what counts as a reply, destroy at once or by the last reply, exactly once, at once on a failed
 * connection), then the statement, blob and batch that use it, each freed while its replies are
 * due against a scripted server (tests/support/script.h): the replies are still taken in order,
 * the requests the free queues go out behind them, and nothing is left outstanding. Leaks and
 * use after free of the freed objects show in the ASan build (FBWIRE_SANITIZE). */
#include <criterion/criterion.h>

#include "batch.h"
#include "pending.h"
#include "script.h"

#include <string.h>

static int destroyed;
static void *destroyed_obj;

static void count_destroy(void *obj)
{
    destroyed++;
    destroyed_obj = obj;
}

/* A scripted connection (tests/support/script.h) at READY, and no destroy seen yet. */
static fbw_script sc;
static fbw_tx *tx; /* freed by fbw_script_close */

static void open_script(void)
{
    destroyed = 0;
    destroyed_obj = NULL;
    fbw_script_open(&sc);
}

/* The same with a transaction started read-write, for the objects. */
static void open_in_tx(void)
{
    open_script();
    fbw_script_start(&sc, &tx, 0);
}

static void close_script(void) { fbw_script_close(&sc); }

Test(pending, track_counts_only_queued_requests)
{
    fbw_pending p = {0, 0};
    cr_assert_eq(fbw_pending_track(&p, FBW_OK), FBW_OK);
    cr_assert_eq(fbw_pending_track(&p, FBW_E_USAGE), FBW_E_USAGE, "rc passed through");
    cr_assert_eq(fbw_pending_track(&p, FBW_E_NOMEM), FBW_E_NOMEM);
    cr_assert_eq(p.count, 1, "failed requests bring no reply");
    cr_assert(fbw_pending_busy(&p));
    cr_assert_eq(fbw_pending_settle(&p, FBW_OK, count_destroy, &p), FBW_OK);
    cr_assert_not(fbw_pending_busy(&p));
}

Test(pending, settle_accounts_complete_replies)
{
    fbw_pending p = {0, 0};
    fbw_pending_track(&p, FBW_OK);
    fbw_pending_track(&p, FBW_OK);
    cr_assert_eq(fbw_pending_settle(&p, FBW_AGAIN, count_destroy, &p), FBW_AGAIN);
    cr_assert_eq(p.count, 2, "an incomplete reply (more rows to come) is not the reply");
    cr_assert_eq(fbw_pending_settle(&p, FBW_E_PROTO, count_destroy, &p), FBW_E_PROTO);
    cr_assert_eq(p.count, 1, "a handler's error ends its reply too");
    cr_assert_eq(fbw_pending_settle(&p, FBW_OK, count_destroy, &p), FBW_OK);
    cr_assert_eq(p.count, 0);
    cr_assert_eq(destroyed, 0, "never released: its user still has it");
}

Test(pending, released_with_nothing_due_goes_at_once, .init = open_script, .fini = close_script)
{
    fbw_pending p = {0, 0};
    fbw_pending_release(&p, sc.c, count_destroy, &p);
    cr_assert_eq(destroyed, 1);
    cr_assert_eq(destroyed_obj, &p);
}

Test(pending, released_with_replies_due_goes_with_the_last, .init = open_script, .fini = close_script)
{
    fbw_pending p = {0, 0};
    for (int i = 0; i < 3; i++)
        fbw_pending_track(&p, FBW_OK);
    fbw_pending_release(&p, sc.c, count_destroy, &p);
    cr_assert_eq(destroyed, 0, "three replies still name it");
    cr_assert(p.released);
    fbw_pending_settle(&p, FBW_OK, count_destroy, &p);
    fbw_pending_settle(&p, FBW_AGAIN, count_destroy, &p);
    fbw_pending_settle(&p, FBW_E_SERVER, count_destroy, &p);
    cr_assert_eq(destroyed, 0, "one reply still due");
    cr_assert_eq(fbw_pending_settle(&p, FBW_OK, count_destroy, &p), FBW_OK);
    cr_assert_eq(destroyed, 1, "the last reply destroys it, once");
    cr_assert_eq(destroyed_obj, &p);
}

Test(pending, failed_connection_destroys_at_once, .init = open_script, .fini = close_script)
{
    fbw_pending p = {0, 0};
    fbw_pending_track(&p, FBW_OK);
    fbw_err why;
    fbw_err_set(&why, FBW_E_IO, "scripted: connection lost");
    fbw_conn_fail(sc.c, &why);
    fbw_pending_release(&p, sc.c, count_destroy, &p);
    cr_assert_eq(destroyed, 1, "no handler will ever run: nothing else would free it");
}

/* ---- the objects ---- */

/* Whether op a went out before op b in the script's log (both present). */
static int before(const fbw_script *s, int32_t a, int32_t b)
{
    int at_a = -1, at_b = -1;
    for (unsigned i = 0; i < s->nlog; i++) {
        if (s->log[i] == a && at_a < 0)
            at_a = (int)i;
        if (s->log[i] == b && at_b < 0)
            at_b = (int)i;
    }
    return at_a >= 0 && at_b >= 0 && at_a < at_b;
}

/* A blob created in t, its create reply not yet in (busy). */
static fbw_blob *created_blob(fbw_script *s, fbw_tx *t)
{
    fbw_blob *b = NULL;
    fbw_err err;
    cr_assert_eq(fbw_blob_new(s->c, &b, &err), FBW_OK);
    cr_assert_eq(fbw_blob_create(b, t, NULL, 0), FBW_OK);
    cr_assert(fbw_blob_busy(b));
    return b;
}

/* Free obj with free_fn while its replies are due, then answer: the replies are still taken,
 * `last` (what the free queued) went out behind `first`, nothing is left outstanding. */
static void free_then_answer(fbw_script *s, void (*free_fn)(void *), void *obj, int32_t first,
                             int32_t last)
{
    s->nlog = 0;
    free_fn(obj);
    cr_assert_gt(fbw_conn_outstanding(s->c), 0, "its replies are still expected");
    fbw_script_wait_ok(s); /* the handlers run on the freed object; the last one frees it */
    cr_assert(before(s, first, last), "op %d, then op %d", (int)first, (int)last);
    cr_assert_eq(fbw_script_count(s, last), 1);
    cr_assert_eq(fbw_conn_outstanding(s->c), 0);
}

static void free_stmt(void *o) { fbw_stmt_free(o); }
static void free_blob(void *o) { fbw_blob_free(o); }
static void free_batch(void *o) { fbw_batch_free(o); }

Test(pending, statement_freed_with_an_execution_due, .init = open_in_tx, .fini = close_script)
{
    fbw_stmt *st = fbw_script_prepare(&sc, tx, "SELECT c FROM t WHERE id=?");
    fbw_value v;
    memset(&v, 0, sizeof v);
    v.type = FBW_SQL_LONG;
    v.u.i64 = 9;
    cr_assert_eq(fbw_stmt_execute(st, tx, &v, 0), FBW_OK);
    cr_assert(fbw_stmt_busy(st));
    free_then_answer(&sc, free_stmt, st, FBW_OP_EXECUTE, FBW_OP_FREE_STATEMENT);
}

Test(pending, blob_freed_with_its_create_due, .init = open_in_tx, .fini = close_script)
{
    fbw_blob *b = created_blob(&sc, tx);
    cr_assert_eq(fbw_blob_write(b, "abc", 3), FBW_OK);
    cr_assert_eq(fbw_blob_flush(b), FBW_OK);
    /* a blob being written is cancelled on the way out */
    free_then_answer(&sc, free_blob, b, FBW_OP_CREATE_BLOB2, FBW_OP_CANCEL_BLOB);
}

Test(pending, blob_freed_on_a_failed_connection, .init = open_in_tx, .fini = close_script)
{
    fbw_blob *b = created_blob(&sc, tx);
    fbw_err err;
    fbw_err_set(&err, FBW_E_IO, "scripted: connection lost");
    fbw_conn_fail(sc.c, &err);
    fbw_blob_free(b); /* destroyed now: no reply will come (ASan: no leak) */
    const uint8_t *p;
    size_t n;
    fbw_conn_pending(sc.c, &p, &n);
    cr_assert_eq(n, 0, "a failed connection sends nothing, no cancel either");
}

Test(pending, batch_freed_with_its_create_due, .init = open_in_tx, .fini = close_script)
{
    fbw_script_dml(&sc, FBW_STMT_INSERT);
    fbw_stmt *st = fbw_script_prepare(&sc, tx, "INSERT INTO t VALUES (?)");
    fbw_batch_opts o;
    fbw_batch_opts_init(&o);
    fbw_batch *b = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_batch_new(sc.c, st, &o, &b, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_batch_create(b), FBW_OK);
    cr_assert_gt(fbw_conn_outstanding(sc.c), 0, "the create's reply is due");
    /* the server's batch is released on the way out */
    free_then_answer(&sc, free_batch, b, FBW_OP_BATCH_CREATE, FBW_OP_BATCH_RLS);
    fbw_stmt_free(st);
}
