/* SPDX-License-Identifier: MIT */
/* test_leaks.c - server-side statement handles against real FB3 and FB4, watched from a second
 * connection through MON$STATEMENTS: statements left prepared with open cursors disappear when
 * their attachment detaches, and fbw_stmt_free of 1000 statements in a row leaves the count of a
 * live attachment flat (the deferred DSQL_drop packets do reach the server). */
#include <criterion/criterion.h>

#include "sqlt.h"

#include <stdio.h>

/* Statements of attachment att as a fresh monitoring snapshot (new transaction) sees them. */
static int64_t statements_of(fbw_sqlt *mon, int64_t att)
{
    char sql[160];
    fbw_tx *t;
    fbw_sqlt_tx_start_ok(mon, &t, NULL);
    snprintf(sql, sizeof sql, "select count(*) from mon$statements where mon$attachment_id = %lld",
             (long long)att);
    int64_t n = fbw_sqlt_int_ok(mon, t, sql);
    fbw_sqlt_commit_ok(mon, t);
    return n;
}

static int64_t attachments(fbw_sqlt *mon, int64_t att)
{
    char sql[160];
    fbw_tx *t;
    fbw_sqlt_tx_start_ok(mon, &t, NULL);
    snprintf(sql, sizeof sql, "select count(*) from mon$attachments where mon$attachment_id = %lld",
             (long long)att);
    int64_t n = fbw_sqlt_int_ok(mon, t, sql);
    fbw_sqlt_commit_ok(mon, t);
    return n;
}

#define LEFT_OPEN 5

static void left_open(fbw_server_id id)
{
    fbw_sqlt a, mon;
    fbw_sqlt_open(&a, id, NULL);
    fbw_sqlt_open(&mon, id, NULL);
    int64_t att = fbw_sqlt_int_ok(&a, a.tx, "select current_connection from rdb$database");
    fbw_sqlt_wait_ok(&a); /* that statement's deferred drop goes out with a ping */
    int64_t base = statements_of(&mon, att);
    cr_expect_eq(base, 0);
    /* statements with open cursors (5 rows fetched of 200 each), never closed or freed: the
     * fbw_stmt objects are deliberately not freed either, as a careless caller would */
    fbw_stmt *s[LEFT_OPEN];
    for (int i = 0; i < LEFT_OPEN; i++) {
        s[i] = fbw_sqlt_prepare_ok(&a, a.tx,
                                   "with recursive r (n) as (select 1 from rdb$database union all "
                                   "select n + 1 from r where n < 200) select n from r");
        fbw_stmt_set_fetch_size(s[i], 5);
        cr_assert_eq(fbw_stmt_execute(s[i], a.tx, NULL, 0), FBW_OK);
        fbw_sqlt_wait_ok(&a);
        cr_assert_eq(fbw_stmt_row_count(s[i]), 5);
        cr_assert(!fbw_stmt_eof(s[i]));
    }
    int64_t during = statements_of(&mon, att);
    printf("%s: MON$STATEMENTS of the attachment: %lld before, %lld with %d left open\n",
           fbw_server_name(id), (long long)base, (long long)during, LEFT_OPEN);
    cr_expect_geq(during, base + LEFT_OPEN, "%lld statements with %d open", (long long)during, LEFT_OPEN);
    cr_assert_eq(attachments(&mon, att), 1);
    fbw_sqlt_close(&a); /* rolls back the transaction and detaches */
    cr_expect_eq(statements_of(&mon, att), 0, "statements survived the detach");
    cr_expect_eq(attachments(&mon, att), 0, "attachment survived the detach");
    fbw_sqlt_close(&mon);
    /* s[] belonged to the freed connection: their memory is lost by design of this test */
    (void)s;
}

Test(leaks, left_open_fb3, .timeout = 60) { left_open(FBW_SRV_FB3); }
Test(leaks, left_open_fb4, .timeout = 60) { left_open(FBW_SRV_FB4); }

#define LOOPS 1000

static void free_loop(fbw_server_id id)
{
    fbw_sqlt a, mon;
    fbw_sqlt_open(&a, id, NULL);
    fbw_sqlt_open(&mon, id, NULL);
    int64_t att = fbw_sqlt_int_ok(&a, a.tx, "select current_connection from rdb$database");
    /* one statement kept prepared and idle, so the count shows that idle statements are seen */
    fbw_stmt *keep = fbw_sqlt_prepare_ok(&a, a.tx, "select 1 from rdb$database");
    fbw_sqlt_wait_ok(&a);
    int64_t base = statements_of(&mon, att), mid = -1;
    cr_expect_eq(base, 1, "an idle prepared statement is not in MON$STATEMENTS");
    fbw_err err;
    for (int i = 0; i < LOOPS; i++) {
        fbw_stmt *s = fbw_sqlt_prepare_ok(&a, a.tx,
                                          i % 2 ? "select rdb$relation_id from rdb$database"
                                                : "select count(*) from rdb$relations");
        if (i % 3 == 0) {
            /* half-read cursor, then freed with the cursor open */
            cr_assert_eq(fbw_stmt_execute(s, a.tx, NULL, FBW_EXEC_NO_FETCH), FBW_OK);
            fbw_sqlt_wait_ok(&a);
        } else {
            cr_assert_eq(fbw_sqlt_run(&a, s, a.tx, NULL, &err), FBW_OK, "%s", err.msg);
        }
        fbw_stmt_free(s);
        if (i == LOOPS / 2) {
            fbw_sqlt_wait_ok(&a); /* the deferred drops go out with the ping before_wait adds */
            mid = statements_of(&mon, att);
        }
    }
    fbw_sqlt_wait_ok(&a);
    int64_t after = statements_of(&mon, att);
    printf("%s: MON$STATEMENTS of the attachment: %lld before, %lld midway, %lld after %d frees\n",
           fbw_server_name(id), (long long)base, (long long)mid, (long long)after, LOOPS);
    cr_expect_eq(mid, base, "statements pile up: %lld -> %lld", (long long)base, (long long)mid);
    cr_expect_eq(after, base, "statements pile up: %lld -> %lld", (long long)base, (long long)after);
    fbw_stmt_free(keep);
    fbw_sqlt_wait_ok(&a);
    cr_expect_eq(statements_of(&mon, att), 0);
    fbw_sqlt_close(&mon);
    fbw_sqlt_close(&a);
}

Test(leaks, free_loop_fb3, .timeout = 120) { free_loop(FBW_SRV_FB3); }
Test(leaks, free_loop_fb4, .timeout = 120) { free_loop(FBW_SRV_FB4); }
