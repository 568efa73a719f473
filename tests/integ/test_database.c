/* SPDX-License-Identifier: MIT */
/* test_database.c - whole-database operations and describe continuation against FB3 and FB4:
 * op_create with a page size, op_drop_database, and a describe larger than the 64 KiB reply buffer
 * (the server truncates it; fbwire continues with isc_info_sql_sqlda_start from the first
 * incomplete column, docs/protocol/statements.md §2.5). */
#include <criterion/criterion.h>

#include "fbwire.h"
#include "sqlt.h"

#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ISC_IO_ERROR 335544344u

static int connected_until_state(void *arg) { return fbw_conn_outstanding(arg) == 0; }

/* A database next to the server's test database (the server can write that directory). */
static void scratch_db(const fbw_servers *s, fbw_server_id id, const char *tag, char *dsn, size_t n)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", s->srv[id].db);
    snprintf(dsn, n, "%s/%d:%s/fbwire_%s_%d.fdb", s->srv[id].host, s->srv[id].port, dirname(dir), tag,
             (int)getpid());
}

static void create_then_drop(fbw_server_id id)
{
    fbw_servers s;
    fbw_servers_require(&s);
    char dsn[1300];
    scratch_db(&s, id, "drop", dsn, sizeof dsn);
    fbw_client_opts o;
    fbw_servers_client_opts(&s, &o);
    o.conn.create = 1;
    o.conn.page_size = 8192;
    fbw_client *cl;
    fbw_err err;
    cr_assert_eq(fbw_client_connect(dsn, &o, &cl, &err), FBW_OK, "%s: create %s: %s",
                 fbw_server_name(id), dsn, err.msg);
    fbw_conn *c = fbw_client_conn(cl);
    uint64_t rt0 = fbw_conn_stats(c)->round_trips;
    cr_assert_eq(fbw_conn_drop_database(c), FBW_OK);
    cr_assert_eq(fbw_client_wait_until(cl, connected_until_state, c), FBW_OK, "%s",
                 fbw_client_error(cl)->msg);
    cr_assert_eq(fbw_conn_get_state(c), FBW_CS_DETACHED, "%s: drop: %s", fbw_server_name(id),
                 fbw_conn_error(c)->msg);
    /* op_drop_database is one request and one reply; op_disconnect has no reply. */
    cr_assert_eq(fbw_conn_stats(c)->round_trips - rt0, 1);
    fbw_client_close(cl);

    /* The file is gone: attaching to it now is an I/O error naming the path. */
    o.conn.create = 0;
    cr_assert_neq(fbw_client_connect(dsn, &o, &cl, &err), FBW_OK, "%s: database still there",
                  fbw_server_name(id));
    cr_assert_eq(err.code, FBW_E_SERVER, "%s", err.msg);
    cr_assert_eq(err.gds[0], ISC_IO_ERROR, "%s: %u %s", fbw_server_name(id), err.gds[0], err.msg);
}

Test(database, create_then_drop_fb3, .timeout = 60) { create_then_drop(FBW_SRV_FB3); }
Test(database, create_then_drop_fb4, .timeout = 60) { create_then_drop(FBW_SRV_FB4); }

#define WIDE 1000

/* 1000 columns with 31-character aliases (FB3 allows no longer) describe in more than 64 KiB,
 * so the prepare reply is truncated and the statement layer must ask for the rest with
 * op_info_sql. */
static void wide_describe(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    fbw_buf sql;
    fbw_buf_init(&sql);
    cr_assert_eq(fbw_buf_append(&sql, "SELECT ", 7), FBW_OK);
    char item[128];
    for (int i = 0; i < WIDE; i++) {
        int n = snprintf(item, sizeof item, "%s%d AS \"C%04d_%025d\"", i ? ", " : "", i, i, i);
        cr_assert_eq(fbw_buf_append(&sql, item, (size_t)n), FBW_OK);
    }
    const char *tail = " FROM RDB$DATABASE";
    cr_assert_eq(fbw_buf_append(&sql, tail, strlen(tail) + 1), FBW_OK);
    uint64_t info0 = fbw_conn_stats(q.c)->op[FBW_OP_INFO_SQL].packets_sent;
    fbw_stmt *s = fbw_sqlt_prepare_ok(&q, q.tx, (const char *)sql.data);
    uint64_t continued = fbw_conn_stats(q.c)->op[FBW_OP_INFO_SQL].packets_sent - info0;
    cr_assert_gt(continued, 0, "%s: the describe was not truncated, the test proves nothing",
                 fbw_server_name(id));
    const fbw_msgfmt *out = fbw_stmt_output(s);
    cr_assert_eq(out->n, WIDE);
    const fbw_colname *names = fbw_stmt_output_names(s);
    for (int i = 0; i < WIDE; i++) {
        snprintf(item, sizeof item, "C%04d_%025d", i, i);
        cr_assert_str_eq(names[i].alias, item, "%s: column %d", fbw_server_name(id), i);
    }
    fbw_err err;
    cr_assert_eq(fbw_sqlt_run(&q, s, q.tx, NULL, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_stmt_row_count(s), 1);
    fbw_value v[WIDE];
    cr_assert_eq(fbw_stmt_row(s, 0, v, &err), FBW_OK, "%s", err.msg);
    for (int i = 0; i < WIDE; i++)
        cr_assert_eq(v[i].u.i64, i, "%s: column %d holds %lld", fbw_server_name(id), i,
                     (long long)v[i].u.i64);
    fbw_stmt_free(s);
    fbw_buf_free(&sql);
    fbw_sqlt_close(&q);
}

Test(database, wide_describe_fb3, .timeout = 60) { wide_describe(FBW_SRV_FB3); }
Test(database, wide_describe_fb4, .timeout = 60) { wide_describe(FBW_SRV_FB4); }
