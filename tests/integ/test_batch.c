/* SPDX-License-Identifier: MIT */
/* test_batch.c - the batch API against real servers: FB3 (protocol 15) refuses it with
 * FBW_E_UNSUPPORTED; on FB4 10,000 rows go in one transaction and SELECT COUNT(*) sees them; a
 * failing row (unique violation) with multi-error reports that row's error and the other rows'
 * counts, and without multi-error the batch stops there; a 1000-row batch costs one round trip;
 * a batch is reusable after execute and the statement executes normally after release.
 *
 * Why one round trip for create + messages + execute: all of them go out in one write; a lazy
 * server holds back the replies to op_batch_create and op_batch_msg (send_response(..., defer))
 * and flushes them together with the op_batch_cs that answers op_batch_exec, in request order.
 * fbclient 4.0.1+ takes two: it sends op_batch_sync and waits before op_batch_exec. */
#include <criterion/criterion.h>

#include "batch.h"
#include "sqlt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GDS_UNIQUE_KEY_VIOLATION 335544665u /* isc_unique_key_violation */
#define GDS_NO_DUP 335544349u               /* isc_no_dup */

typedef struct batch_fixture {
    fbw_sqlt q;
    char table[64];
    fbw_stmt *ins;
} batch_fixture;

/* DDL in the shared test database can collide with other suites' DDL running at the same time
 * ("update conflicts with concurrent update" on the system tables): retry those a few times. */
static void ddl_retry(fbw_sqlt *q, const char *sql)
{
    fbw_err err;
    int rc = FBW_OK;
    for (int attempt = 0; attempt < 20; attempt++) {
        rc = fbw_sqlt_ddl(q, sql, &err);
        fbw_errclass ec = fbw_err_classify(&err);
        if (rc == FBW_OK || (ec != FBW_EC_UPDATE_CONFLICT && ec != FBW_EC_DEADLOCK &&
                             ec != FBW_EC_LOCK_CONFLICT))
            break;
        usleep(50000u * (unsigned)(attempt + 1));
    }
    cr_assert_eq(rc, FBW_OK, "%s: %s: %s", fbw_server_name(q->id), sql, err.msg);
}

static void setup(batch_fixture *f, fbw_server_id id)
{
    char sql[256];
    fbw_sqlt_open(&f->q, id, NULL);
    fbw_sqlt_name(&f->q, "TBATCH", f->table, sizeof f->table);
    snprintf(sql, sizeof sql, "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY, NAME VARCHAR(40))",
             f->table);
    ddl_retry(&f->q, sql);
    snprintf(sql, sizeof sql, "INSERT INTO %s (ID, NAME) VALUES (?, ?)", f->table);
    f->ins = fbw_sqlt_prepare_ok(&f->q, f->q.tx, sql);
}

static void teardown(batch_fixture *f)
{
    char sql[128];
    fbw_stmt_free(f->ins);
    if (fbw_tx_state(f->q.tx) == FBW_TX_ACTIVE)
        fbw_sqlt_commit_ok(&f->q, f->q.tx);
    snprintf(sql, sizeof sql, "DROP TABLE %s", f->table);
    ddl_retry(&f->q, sql);
    fbw_sqlt_close(&f->q);
}

/* Row i: (id, "row <i>" with some UTF-8) */
typedef struct row {
    fbw_value v[2];
    char name[40];
} row;

static void make_row(row *r, int id, int i)
{
    int n = snprintf(r->name, sizeof r->name, "row %d \xE2\x82\xAC", i);
    r->v[0] = (fbw_value){.type = FBW_SQL_LONG};
    r->v[0].u.i64 = id;
    r->v[1] = (fbw_value){.type = FBW_SQL_VARYING};
    r->v[1].u.bytes.p = (const uint8_t *)r->name;
    r->v[1].u.bytes.n = (size_t)n;
}

static fbw_batch *new_batch_packet(batch_fixture *f, int multierror, size_t packet_bytes)
{
    fbw_batch_opts o;
    fbw_batch_opts_init(&o);
    o.multierror = multierror;
    o.packet_bytes = packet_bytes;
    fbw_batch *b = NULL;
    fbw_err err;
    int rc = fbw_batch_new(f->q.c, f->ins, &o, &b, &err);
    cr_assert_eq(rc, FBW_OK, "%s: batch: %s", fbw_server_name(f->q.id), err.msg);
    cr_assert_eq(fbw_batch_create(b), FBW_OK);
    return b;
}

static fbw_batch *new_batch(batch_fixture *f, int multierror) { return new_batch_packet(f, multierror, 0); }

static void add_rows(fbw_batch *b, int first_id, int count)
{
    row r;
    for (int i = 0; i < count; i++) {
        make_row(&r, first_id + i, i);
        int rc = fbw_batch_add(b, r.v);
        cr_assert_eq(rc, FBW_OK, "add %d: %s %s", i, fbw_rc_name(rc), fbw_batch_error(b)->msg);
    }
}

static int64_t count_rows(batch_fixture *f)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s", f->table);
    return fbw_sqlt_int_ok(&f->q, f->q.tx, sql);
}

Test(batch, unsupported_on_fb3, .timeout = 60)
{
    batch_fixture f;
    setup(&f, FBW_SRV_FB3);
    cr_assert_lt(fbw_conn_get_info(f.q.c)->protocol, 16);
    fbw_batch *b = (fbw_batch *)1;
    fbw_err err;
    cr_assert_eq(fbw_batch_new(f.q.c, f.ins, NULL, &b, &err), FBW_E_UNSUPPORTED);
    cr_assert_null(b);
    cr_assert(strstr(err.msg, "protocol 16"), "%s", err.msg);
    teardown(&f);
}

Test(batch, ten_thousand_rows_fb4, .timeout = 120)
{
    batch_fixture f;
    setup(&f, FBW_SRV_FB4);
    fbw_batch *b = new_batch(&f, 0);
    add_rows(b, 1, 10000);
    cr_assert_eq(fbw_batch_pending(b), 10000);
    cr_assert_eq(fbw_batch_execute(b, f.q.tx), FBW_OK);
    fbw_sqlt_wait_ok(&f.q);
    cr_assert_eq(fbw_batch_error(b)->code, FBW_OK, "%s", fbw_batch_error(b)->msg);
    cr_assert(fbw_batch_executed(b));
    const fbw_batch_cs *cs = fbw_batch_result(b);
    cr_assert_eq(cs->reccount, 10000);
    cr_assert_eq(cs->nupdates, 10000);
    cr_assert_eq(cs->nerrors, 0);
    for (uint32_t i = 0; i < 10000; i++)
        cr_assert_eq(fbw_batch_cs_state(cs, i), 1, "message %u: %d", i, fbw_batch_cs_state(cs, i));
    cr_assert_eq(fbw_batch_cs_state(cs, 10000), FBW_BATCH_NOT_EXECUTED);
    fbw_batch_free(b);
    fbw_sqlt_commit_ok(&f.q, f.q.tx);
    fbw_sqlt_tx_start_ok(&f.q, &f.q.tx, NULL);
    cr_assert_eq(count_rows(&f), 10000);
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s WHERE NAME = 'row 4321 \xE2\x82\xAC' AND ID = 4322",
             f.table);
    cr_assert_eq(fbw_sqlt_int_ok(&f.q, f.q.tx, sql), 1);
    teardown(&f);
}

/* 20 rows, row 7 repeats row 3's id. */
static void failing_row(batch_fixture *f, fbw_batch *b)
{
    row r;
    for (int i = 0; i < 20; i++) {
        make_row(&r, i == 7 ? 103 : 100 + i, i);
        cr_assert_eq(fbw_batch_add(b, r.v), FBW_OK);
    }
    cr_assert_eq(fbw_batch_execute(b, f->q.tx), FBW_OK);
    fbw_sqlt_wait_ok(&f->q);
    cr_assert_eq(fbw_batch_error(b)->code, FBW_OK, "%s", fbw_batch_error(b)->msg);
}

static void assert_unique_error(const fbw_batch_cs *cs, uint32_t k, uint32_t want_pos)
{
    uint32_t pos = 99;
    fbw_err err;
    cr_assert_eq(fbw_batch_cs_error_at(cs, k, &pos, &err), FBW_E_SERVER);
    cr_assert_eq(pos, want_pos);
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_UNIQUE, "class of: %s", err.msg);
    int found = 0;
    for (int i = 0; i < err.ngds; i++)
        found |= err.gds[i] == GDS_UNIQUE_KEY_VIOLATION || err.gds[i] == GDS_NO_DUP;
    cr_assert(found, "no unique-violation code in: %s", err.msg);
    cr_assert_str_eq(err.sqlstate, "23000", "%s", err.msg);
}

Test(batch, failing_row_multierror_fb4, .timeout = 60)
{
    batch_fixture f;
    setup(&f, FBW_SRV_FB4);
    fbw_batch *b = new_batch(&f, 1);
    failing_row(&f, b);
    const fbw_batch_cs *cs = fbw_batch_result(b);
    cr_assert_eq(cs->reccount, 20);
    cr_assert_eq(cs->nerrors, 1);
    for (uint32_t i = 0; i < 20; i++)
        cr_assert_eq(fbw_batch_cs_state(cs, i), i == 7 ? FBW_BATCH_EXECUTE_FAILED : 1, "message %u: %d",
                     i, fbw_batch_cs_state(cs, i));
    assert_unique_error(cs, 0, 7);
    fbw_batch_free(b);
    cr_assert_eq(count_rows(&f), 19);
    teardown(&f);
}

Test(batch, failing_row_stops_without_multierror_fb4, .timeout = 60)
{
    batch_fixture f;
    setup(&f, FBW_SRV_FB4);
    fbw_batch *b = new_batch(&f, 0);
    failing_row(&f, b);
    const fbw_batch_cs *cs = fbw_batch_result(b);
    cr_assert_eq(cs->reccount, 8, "processed %u messages", cs->reccount);
    cr_assert_eq(fbw_batch_cs_state(cs, 6), 1);
    cr_assert_eq(fbw_batch_cs_state(cs, 7), FBW_BATCH_EXECUTE_FAILED);
    cr_assert_eq(fbw_batch_cs_state(cs, 8), FBW_BATCH_NOT_EXECUTED);
    cr_assert_eq(cs->nerrors, 1);
    assert_unique_error(cs, 0, 7);
    fbw_batch_free(b);
    cr_assert_eq(count_rows(&f), 7);
    teardown(&f);
}

Test(batch, one_round_trip_fb4, .timeout = 60)
{
    batch_fixture f;
    setup(&f, FBW_SRV_FB4);
    const fbw_stats *st = fbw_conn_stats(f.q.c);
    fbw_stats before = *st;
    fbw_batch *b = new_batch(&f, 1);
    add_rows(b, 1, 1000);
    cr_assert_eq(fbw_batch_execute(b, f.q.tx), FBW_OK);
    fbw_sqlt_wait_ok(&f.q);
    cr_assert_eq(fbw_batch_error(b)->code, FBW_OK, "%s", fbw_batch_error(b)->msg);
    cr_assert_eq(fbw_batch_result(b)->reccount, 1000);
    cr_assert_eq(st->round_trips - before.round_trips, 1, "1000-row batch took %llu round trips",
                 (unsigned long long)(st->round_trips - before.round_trips));
    uint64_t msgs = st->op[FBW_OP_BATCH_MSG].packets_sent - before.op[FBW_OP_BATCH_MSG].packets_sent;
    uint64_t bytes = st->op[FBW_OP_BATCH_MSG].bytes_sent - before.op[FBW_OP_BATCH_MSG].bytes_sent;
    cr_log_info("1000-row batch: %llu round trip(s), %llu op_batch_msg, %llu bytes of messages",
                (unsigned long long)(st->round_trips - before.round_trips), (unsigned long long)msgs,
                (unsigned long long)bytes);
    cr_assert_geq(msgs, 1);
    cr_assert_eq(msgs, (bytes + FBW_BATCH_PACKET_DEFAULT - 1) / FBW_BATCH_PACKET_DEFAULT,
                 "%llu op_batch_msg for %llu bytes", (unsigned long long)msgs, (unsigned long long)bytes);
    cr_assert_eq(st->op[FBW_OP_PING].packets_sent, before.op[FBW_OP_PING].packets_sent);
    cr_assert_eq(st->op[FBW_OP_BATCH_SYNC].packets_sent, before.op[FBW_OP_BATCH_SYNC].packets_sent);
    /* create + msgs answered by op_response, exec by op_batch_cs */
    cr_assert_eq(st->op[FBW_OP_RESPONSE].packets_received - before.op[FBW_OP_RESPONSE].packets_received,
                 1 + msgs);
    cr_assert_eq(st->op[FBW_OP_BATCH_CS].packets_received - before.op[FBW_OP_BATCH_CS].packets_received, 1);

    /* reusable after execute; sync flushes on P17 */
    add_rows(b, 5001, 5);
    cr_assert_eq(fbw_batch_execute(b, f.q.tx), FBW_OK);
    cr_assert_eq(fbw_batch_sync(b), FBW_OK);
    fbw_sqlt_wait_ok(&f.q);
    cr_assert_eq(fbw_batch_result(b)->reccount, 5);
    cr_assert_eq(fbw_batch_error(b)->code, FBW_OK, "%s", fbw_batch_error(b)->msg);

    /* cancel drops what the server holds */
    add_rows(b, 6001, 3);
    cr_assert_eq(fbw_batch_flush(b), FBW_OK);
    cr_assert_eq(fbw_batch_cancel(b), FBW_OK);
    cr_assert_eq(fbw_batch_execute(b, f.q.tx), FBW_OK);
    fbw_sqlt_wait_ok(&f.q);
    cr_assert_eq(fbw_batch_result(b)->reccount, 0, "cancelled messages were executed");

    /* after release the statement runs normally again */
    cr_assert_eq(fbw_batch_release(b), FBW_OK);
    row r;
    make_row(&r, 7001, 0);
    fbw_err err;
    cr_assert_eq(fbw_sqlt_run(&f.q, f.ins, f.q.tx, r.v, &err), FBW_OK, "%s", err.msg);
    fbw_batch_free(b);
    cr_assert_eq(count_rows(&f), 1006);
    teardown(&f);
}

/* The same with op_batch_msg packets of ~4 KiB: many packets, still one write and one round trip. */
Test(batch, many_packets_one_round_trip_fb4, .timeout = 60)
{
    batch_fixture f;
    setup(&f, FBW_SRV_FB4);
    const fbw_stats *st = fbw_conn_stats(f.q.c);
    fbw_stats before = *st;
    fbw_batch *b = new_batch_packet(&f, 0, 4096);
    add_rows(b, 1, 1000);
    cr_assert_eq(fbw_batch_execute(b, f.q.tx), FBW_OK);
    fbw_sqlt_wait_ok(&f.q);
    cr_assert_eq(fbw_batch_error(b)->code, FBW_OK, "%s", fbw_batch_error(b)->msg);
    cr_assert_eq(fbw_batch_result(b)->reccount, 1000);
    uint64_t msgs = st->op[FBW_OP_BATCH_MSG].packets_sent - before.op[FBW_OP_BATCH_MSG].packets_sent;
    uint64_t bytes = st->op[FBW_OP_BATCH_MSG].bytes_sent - before.op[FBW_OP_BATCH_MSG].bytes_sent;
    cr_log_info("1000-row batch in 4 KiB packets: %llu round trip(s), %llu op_batch_msg",
                (unsigned long long)(st->round_trips - before.round_trips), (unsigned long long)msgs);
    /* a packet goes out once it holds >= 4096 bytes of messages (one row is < 64 bytes) */
    cr_assert_geq(msgs, bytes / (4096 + 64 + 12));
    cr_assert_leq(msgs, bytes / 4096 + 1);
    cr_assert_gt(msgs, 4);
    cr_assert_eq(st->round_trips - before.round_trips, 1);
    fbw_batch_free(b);
    cr_assert_eq(count_rows(&f), 1000);
    teardown(&f);
}

Test(batch, bad_use_fb4, .timeout = 60)
{
    batch_fixture f;
    setup(&f, FBW_SRV_FB4);
    fbw_batch *b = NULL;
    fbw_err err;
    cr_assert_eq(fbw_batch_new(f.q.c, f.ins, NULL, &b, &err), FBW_OK);
    row r;
    make_row(&r, 1, 0);
    cr_assert_eq(fbw_batch_add(b, r.v), FBW_E_USAGE); /* not created */
    cr_assert_eq(fbw_batch_create(b), FBW_OK);
    fbw_value wrong[2] = {r.v[1], r.v[0]};
    cr_assert_eq(fbw_batch_add(b, wrong), FBW_E_USAGE);
    cr_assert_eq(fbw_batch_pending(b), 0);
    cr_assert_eq(fbw_batch_add(b, r.v), FBW_OK);
    cr_assert_eq(fbw_batch_execute(b, f.q.tx), FBW_OK);
    fbw_sqlt_wait_ok(&f.q);
    cr_assert_eq(fbw_batch_result(b)->reccount, 1, "the refused message went out");
    fbw_batch_free(b);

    /* a second batch on a statement that already has one: the server says isc_batch_open */
    fbw_batch *b1 = new_batch(&f, 0), *b2 = new_batch(&f, 0);
    fbw_sqlt_wait_ok(&f.q);
    cr_assert_eq(fbw_batch_error(b1)->code, FBW_OK, "%s", fbw_batch_error(b1)->msg);
    cr_assert_eq(fbw_batch_error(b2)->code, FBW_E_SERVER);
    fbw_batch_free(b2); /* its op_batch_rls releases b1's server batch, fine: b1 goes next */
    fbw_batch_free(b1);
    fbw_sqlt_wait_ok(&f.q);
    teardown(&f);
}
