/* SPDX-License-Identifier: MIT */
/* test_blobset.c - the blobs of a fetch read together (blobset.h) against real FB3 and FB4: 50 rows
 * with a text blob of 100..2000 bytes fetched in one batch, then every blob read in ONE round trip
 * (fbw_conn_stats round_trips), the contents checked; the closes ride along with the commit (no
 * round trip of their own). On Firebird 5.0.3+ (protocol 19) the same blobs come inline and cost 0
 * round trips: the fb5 case runs when servers.env names a Firebird 5 (FBW_FB5_HOST, _PORT, _DB),
 * and is skipped otherwise. */
#include <criterion/criterion.h>

#include "blobset.h"
#include "sqlt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t want_len(unsigned n) { return 100 + (n * 37u) % 1900u; }

static void fifty_rows_on(fbw_sqlt *qp, const char *name)
{
    fbw_sqlt q = *qp;
    char t[64], sql[512];
    fbw_sqlt_name(&q, "TBSET", t, sizeof t);
    snprintf(sql, sizeof sql, "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY, T BLOB SUB_TYPE TEXT)", t);
    fbw_sqlt_ddl_ok(&q, sql);
    snprintf(sql, sizeof sql,
             "INSERT INTO %s (ID, T) SELECT n, RPAD('r' || n || '-', 100 + MOD(n * 37, 1900), 'x') "
             "FROM (SELECT FIRST 50 ROW_NUMBER() OVER () AS n FROM RDB$TYPES)", t);
    fbw_sqlt_exec_ok(&q, q.tx, sql, NULL);
    fbw_sqlt_commit_ok(&q, q.tx);
    fbw_sqlt_tx_start_ok(&q, &q.tx, NULL);

    snprintf(sql, sizeof sql, "SELECT ID, T FROM %s ORDER BY ID", t);
    fbw_stmt *st = fbw_sqlt_prepare_ok(&q, q.tx, sql);
    fbw_stmt_set_fetch_size(st, 200);
    cr_assert_eq(fbw_stmt_execute(st, q.tx, NULL, 0), FBW_OK);
    fbw_sqlt_wait_ok(&q);
    cr_assert_eq(fbw_stmt_row_count(st), 50, "%s", fbw_stmt_error(st)->msg);

    fbw_blobset *bs;
    fbw_err err;
    size_t added;
    cr_assert_eq(fbw_blobset_new(q.c, 0, &bs, &err), FBW_OK);
    cr_assert_eq(fbw_blobset_add_rows(bs, st, q.tx, 0, &added, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(added, 50);
    int inl = fbw_conn_get_info(q.c)->protocol >= 19;
    uint64_t rt = fbw_conn_stats(q.c)->round_trips;
    cr_assert_eq(fbw_client_read_blobs(q.cl, bs), FBW_OK, "%s", fbw_blobset_error(bs)->msg);
    uint64_t used = fbw_conn_stats(q.c)->round_trips - rt;
    cr_assert_eq(used, inl ? 0u : 1u, "%s: blobs of 50 rows took %llu round trips", name,
                 (unsigned long long)used);
    cr_assert_eq(fbw_blobset_inline_count(bs), inl ? 50u : 0u);
    fbw_value v[2];
    for (size_t r = 0; r < 50; r++) {
        cr_assert_eq(fbw_stmt_row(st, r, v, &err), FBW_OK);
        unsigned n = (unsigned)v[0].u.i64;
        size_t len;
        const uint8_t *p = fbw_blobset_cell(bs, r, 1, &len);
        cr_assert_not_null(p);
        cr_assert_eq(len, want_len(n), "row %u: %zu bytes", n, len);
        char head[16];
        int k = snprintf(head, sizeof head, "r%u-", n);
        cr_assert(memcmp(p, head, (size_t)k) == 0 && p[len - 1] == 'x', "row %u: wrong text", n);
    }
    fbw_blobset_free(bs); /* queues the closes */
    fbw_stmt_free(st);
    rt = fbw_conn_stats(q.c)->round_trips;
    fbw_sqlt_commit_ok(&q, q.tx);
    cr_assert_eq(fbw_conn_stats(q.c)->round_trips - rt, 1, "the closes rode along with the commit");
    fbw_sqlt_tx_start_ok(&q, &q.tx, NULL);
    snprintf(sql, sizeof sql, "DROP TABLE %s", t);
    fbw_sqlt_ddl_ok(&q, sql);
    fbw_sqlt_close(&q);
}

static void fifty_rows(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    fifty_rows_on(&q, fbw_server_name(id));
}

Test(blobset, fifty_rows_fb3, .timeout = 60) { fifty_rows(FBW_SRV_FB3); }
Test(blobset, fifty_rows_fb4, .timeout = 60) { fifty_rows(FBW_SRV_FB4); }

/* Firebird 5 from servers.env when it is there: the blobs come inline, no round trip. */
Test(blobset, fifty_rows_fb5_inline, .timeout = 60)
{
    const char *host = getenv("FBW_FB5_HOST"), *port = getenv("FBW_FB5_PORT"), *db = getenv("FBW_FB5_DB");
    if (!host || !port || !db)
        cr_skip_test("no Firebird 5 in servers.env (FBW_FB5_HOST, _PORT, _DB)");
    fbw_sqlt q;
    memset(&q, 0, sizeof q);
    fbw_servers_require(&q.srv);
    q.id = FBW_SRV_FB4; /* for the helpers' messages only */
    fbw_client_opts o;
    fbw_servers_client_opts(&q.srv, &o);
    char dsn[1400];
    snprintf(dsn, sizeof dsn, "%s/%s:%s", host, port, db);
    fbw_err err;
    cr_assert_eq(fbw_client_connect(dsn, &o, &q.cl, &err), FBW_OK, "fb5: %s", err.msg);
    q.c = fbw_client_conn(q.cl);
    cr_assert_eq(fbw_conn_get_info(q.c)->protocol, 19, "Firebird 5 accepts protocol 19");
    fbw_sqlt_tx_start_ok(&q, &q.tx, NULL);
    fifty_rows_on(&q, "fb5");
}
