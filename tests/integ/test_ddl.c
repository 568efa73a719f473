/* SPDX-License-Identifier: MIT */
/* test_ddl.c - DDL and statements with singleton output through the statement layer against real
 * FB3 and FB4: CREATE/ALTER/DROP TABLE, CREATE INDEX, a sequence with a trigger, a procedure run
 * with EXECUTE PROCEDURE (op_execute2, one output row), INSERT ... RETURNING, and EXECUTE BLOCK
 * with output rows. */
#include <criterion/criterion.h>

#include "sqlt.h"

#include <stdio.h>
#include <string.h>

static void exec_ddl(fbw_sqlt *q, const char *fmt, const char *a, const char *b)
{
    char sql[1024];
    snprintf(sql, sizeof sql, fmt, a, b, a, b);
    fbw_sqlt_ddl_ok(q, sql);
}

/* Run prepared-statement SQL in q->tx and return its rows as text. */
static const char *rows_of(fbw_sqlt *q, fbw_buf *b, const char *sql)
{
    fbw_buf_reset(b);
    fbw_sqlt_exec_ok(q, q->tx, sql, b);
    return fbw_sqlt_str(b);
}

static void ddl(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    char tab[40], seq[40], trg[40], idx[40], prc[40], sql[1024];
    fbw_sqlt_name(&q, "T_DDL", tab, sizeof tab);
    fbw_sqlt_name(&q, "S_DDL", seq, sizeof seq);
    fbw_sqlt_name(&q, "TR_DDL", trg, sizeof trg);
    fbw_sqlt_name(&q, "I_DDL", idx, sizeof idx);
    fbw_sqlt_name(&q, "P_DDL", prc, sizeof prc);
    fbw_buf b;
    fbw_buf_init(&b);

    exec_ddl(&q, "create table %s (id integer not null primary key, name varchar(20))", tab, NULL);
    exec_ddl(&q, "alter table %s add qty numeric(9,2) default 0 not null", tab, NULL);
    exec_ddl(&q, "create index %2$s on %1$s (name)", tab, idx);
    exec_ddl(&q, "create sequence %s", seq, NULL);
    snprintf(sql, sizeof sql,
             "create trigger %s for %s active before insert position 0 as begin "
             "if (new.id is null) then new.id = next value for %s; end",
             trg, tab, seq);
    fbw_sqlt_ddl_ok(&q, sql);
    snprintf(sql, sizeof sql,
             "create procedure %s (a integer, b varchar(10)) returns (s integer, t varchar(30)) as "
             "begin s = a * 2; t = b || '-' || a; end",
             prc);
    fbw_sqlt_ddl_ok(&q, sql);

    /* the index and the trigger are in the catalogue */
    snprintf(sql, sizeof sql,
             "select count(*) from rdb$indices where rdb$index_name = '%s' and rdb$relation_name = '%s'",
             idx, tab);
    cr_expect_eq(fbw_sqlt_int_ok(&q, q.tx, sql), 1);

    /* INSERT ... RETURNING: op_execute2, one output row; the trigger fills the id */
    snprintf(sql, sizeof sql, "insert into %s (name, qty) values (?, ?) returning id, name, qty", tab);
    fbw_stmt *ins = fbw_sqlt_prepare_ok(&q, q.tx, sql);
    cr_expect(!fbw_stmt_has_cursor(ins), "RETURNING has no cursor");
    cr_assert_eq(fbw_stmt_output(ins)->n, 3);
    fbw_err err;
    for (int i = 1; i <= 3; i++) {
        char name[16], qty[16];
        snprintf(name, sizeof name, "n%d", i);
        snprintf(qty, sizeof qty, "%d.25", i);
        fbw_value p[2];
        cr_assert_eq(fbw_value_from_text(&fbw_stmt_input(ins)->cols[0], name, strlen(name), &p[0], &err),
                     FBW_OK);
        cr_assert_eq(fbw_value_from_text(&fbw_stmt_input(ins)->cols[1], qty, strlen(qty), &p[1], &err),
                     FBW_OK);
        fbw_stats before = *fbw_conn_stats(q.c);
        cr_assert_eq(fbw_sqlt_run(&q, ins, q.tx, p, &err), FBW_OK, "%s", err.msg);
        fbw_stats d;
        fbw_stats_diff(&d, fbw_conn_stats(q.c), &before);
        /* op_execute2 + op_info_sql (count) in one write: one round trip */
        cr_expect_eq(d.round_trips, 1, "RETURNING took %llu round trips", (unsigned long long)d.round_trips);
        cr_expect_eq(d.op[FBW_OP_EXECUTE2].packets_sent, 1);
        cr_assert_eq(fbw_stmt_row_count(ins), 1);
        cr_expect_eq(fbw_stmt_affected(ins), 1);
        fbw_buf_reset(&b);
        fbw_sqlt_row_text(ins, 0, NULL, &b);
        char want[64];
        snprintf(want, sizeof want, "%d|n%d|%d.25\n", i, i, i);
        cr_expect_str_eq(fbw_sqlt_str(&b), want);
    }
    fbw_stmt_free(ins);

    /* EXECUTE PROCEDURE: singleton output through op_execute2 */
    snprintf(sql, sizeof sql, "execute procedure %s (?, ?)", prc);
    fbw_stmt *ep = fbw_sqlt_prepare_ok(&q, q.tx, sql);
    cr_expect_eq(fbw_stmt_type(ep), FBW_STMT_EXEC_PROCEDURE);
    cr_assert_eq(fbw_stmt_output(ep)->n, 2);
    fbw_value p[2];
    cr_assert_eq(fbw_value_from_text(&fbw_stmt_input(ep)->cols[0], "21", 2, &p[0], &err), FBW_OK);
    cr_assert_eq(fbw_value_from_text(&fbw_stmt_input(ep)->cols[1], "abc", 3, &p[1], &err), FBW_OK);
    fbw_stats before = *fbw_conn_stats(q.c);
    cr_assert_eq(fbw_sqlt_run(&q, ep, q.tx, p, &err), FBW_OK, "%s", err.msg);
    cr_expect_eq(fbw_conn_stats(q.c)->op[FBW_OP_EXECUTE2].packets_sent -
                 before.op[FBW_OP_EXECUTE2].packets_sent, 1);
    cr_assert_eq(fbw_stmt_row_count(ep), 1);
    fbw_buf_reset(&b);
    fbw_sqlt_row_text(ep, 0, NULL, &b);
    cr_expect_str_eq(fbw_sqlt_str(&b), "42|abc-21\n");
    fbw_stmt_free(ep);

    /* EXECUTE BLOCK with output rows (SUSPEND: a cursor) */
    snprintf(sql, sizeof sql,
             "execute block returns (id integer, twice numeric(9,2)) as begin "
             "for select id, qty * 2 from %s order by id into :id, :twice do suspend; end",
             tab);
    cr_expect_str_eq(rows_of(&q, &b, sql), "1|2.50\n2|4.50\n3|6.50\n");
    /* An EXECUTE BLOCK with outputs is a SELECT-type statement (a cursor) even without SUSPEND,
     * and then yields no row at all (as in isql). */
    fbw_stmt *nb = fbw_sqlt_prepare_ok(&q, q.tx, "execute block returns (x integer) as begin x = 7; end");
    cr_expect(fbw_stmt_has_cursor(nb));
    fbw_stmt_free(nb);
    cr_expect_str_eq(rows_of(&q, &b, "execute block returns (x integer) as begin x = 7; end"), "");
    cr_expect_str_eq(
        rows_of(&q, &b, "execute block returns (x integer) as begin x = 7; suspend; x = 8; suspend; end"),
        "7\n8\n");

    /* ALTER: drop a column, the rest stays */
    fbw_sqlt_commit_ok(&q, q.tx);
    exec_ddl(&q, "alter table %s drop qty", tab, NULL);
    fbw_sqlt_tx_start_ok(&q, &q.tx, NULL);
    snprintf(sql, sizeof sql, "select * from %s order by id", tab);
    cr_expect_str_eq(rows_of(&q, &b, sql), "1|n1\n2|n2\n3|n3\n");
    fbw_sqlt_commit_ok(&q, q.tx);

    exec_ddl(&q, "drop procedure %s", prc, NULL);
    exec_ddl(&q, "drop trigger %s", trg, NULL);
    exec_ddl(&q, "drop index %s", idx, NULL);
    exec_ddl(&q, "drop table %s", tab, NULL);
    exec_ddl(&q, "drop sequence %s", seq, NULL);
    /* gone: the table is unknown now */
    fbw_sqlt_tx_start_ok(&q, &q.tx, NULL);
    snprintf(sql, sizeof sql, "select * from %s", tab);
    fbw_stmt *gone = fbw_sqlt_prepare(&q, q.tx, sql);
    cr_expect(!fbw_stmt_prepared(gone));
    cr_expect_eq(fbw_err_classify(fbw_stmt_error(gone)), FBW_EC_UNKNOWN_OBJECT, "%s",
                 fbw_stmt_error(gone)->msg);
    fbw_stmt_free(gone);
    fbw_buf_free(&b);
    fbw_sqlt_close(&q);
}

Test(ddl, all_fb3, .timeout = 60) { ddl(FBW_SRV_FB3); }
Test(ddl, all_fb4, .timeout = 60) { ddl(FBW_SRV_FB4); }
