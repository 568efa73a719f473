/* SPDX-License-Identifier: MIT */
/* test_tx.c - transactions (wire/tx.h) without a server: the TPB bytes for every option against
 * Firebird's tag values (consts_pub.h isc_tpb_*), and start, commit, rollback and their failures
 * against a scripted server (tests/support/script.h), including the 0xFFFF handle a lazy port
 * allows while the start is unanswered. */
#include <criterion/criterion.h>

#include "script.h"

#include <string.h>

/* isc_tpb_* of Firebird's consts_pub.h */
enum {
    V3 = 3, CONSISTENCY = 1, CONCURRENCY = 2, WAIT = 6, NOWAIT = 7, READ = 8, WRITE = 9,
    READ_COMMITTED = 15, AUTOCOMMIT = 16, REC_VERSION = 17, NO_REC_VERSION = 18, LOCK_TIMEOUT = 21,
    READ_CONSISTENCY = 22,
};

static void tpb_is(const fbw_tx_opts *o, const uint8_t *want, size_t n)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_err err;
    cr_assert_eq(fbw_tpb_build(o, &b, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(b.len, n, "TPB of %zu bytes, want %zu", b.len, n);
    cr_assert_arr_eq(b.data, want, n);
    fbw_buf_free(&b);
}

Test(tx, tpb_for_every_option)
{
    fbw_tx_opts o;
    fbw_tx_opts_init(&o);
    const uint8_t dflt[] = {V3, READ_COMMITTED, REC_VERSION, WRITE, WAIT};
    tpb_is(&o, dflt, sizeof dflt);
    o.isolation = FBW_ISO_READ_COMMITTED_NO_REC;
    const uint8_t norec[] = {V3, READ_COMMITTED, NO_REC_VERSION, WRITE, WAIT};
    tpb_is(&o, norec, sizeof norec);
    o.isolation = FBW_ISO_READ_CONSISTENCY;
    o.read_only = 1;
    const uint8_t cons[] = {V3, READ_COMMITTED, READ_CONSISTENCY, READ, WAIT};
    tpb_is(&o, cons, sizeof cons);
    o.isolation = FBW_ISO_SNAPSHOT;
    o.read_only = 0;
    o.lock_timeout = 0;
    const uint8_t snap[] = {V3, CONCURRENCY, WRITE, NOWAIT};
    tpb_is(&o, snap, sizeof snap);
    o.isolation = FBW_ISO_SERIALIZABLE;
    o.lock_timeout = 300; /* 0x012C, little-endian in a 2-byte clumplet */
    o.autocommit = 1;
    const uint8_t ser[] = {V3, CONSISTENCY, WRITE, WAIT, LOCK_TIMEOUT, 2, 0x2C, 0x01, AUTOCOMMIT};
    tpb_is(&o, ser, sizeof ser);
}

Test(tx, tpb_bad_options)
{
    fbw_tx_opts o;
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_err err;
    fbw_tx_opts_init(&o);
    o.isolation = 42;
    cr_assert_eq(fbw_tpb_build(&o, &b, &err), FBW_E_USAGE);
    cr_assert(strstr(err.msg, "isolation") != NULL, "%s", err.msg);
    fbw_tx_opts_init(&o);
    o.lock_timeout = 32768;
    cr_assert_eq(fbw_tpb_build(&o, &b, &err), FBW_E_USAGE);
    o.lock_timeout = -2;
    cr_assert_eq(fbw_tpb_build(&o, &b, &err), FBW_E_USAGE);
    fbw_buf_free(&b);
}

Test(tx, start_sends_the_tpb_and_takes_the_handle)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    cr_assert_eq(fbw_tx_new(s.c, &t, NULL), FBW_OK);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_NONE);
    fbw_tx_opts o;
    fbw_tx_opts_init(&o);
    o.read_only = 1;
    cr_assert_eq(fbw_tx_start(t, &o), FBW_OK);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_STARTING);
    uint16_t h = 0;
    cr_assert_eq(fbw_tx_handle(t, &h), FBW_OK);
    cr_assert_eq(h, FBW_INVALID_OBJECT, "unanswered start on a lazy port: 0xFFFF");
    cr_assert_eq(fbw_tx_start(t, &o), FBW_E_USAGE, "already starting");
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ACTIVE);
    cr_assert_eq(fbw_tx_server_handle(t), s.tx_handle);
    const uint8_t want[] = {V3, READ_COMMITTED, REC_VERSION, READ, WAIT};
    cr_assert_eq(s.tpb_len, sizeof want);
    cr_assert_arr_eq(s.tpb, want, sizeof want);
    cr_assert_eq(fbw_tx_handle(t, &h), FBW_OK);
    cr_assert_eq(h, s.tx_handle);
    fbw_tx_free(t);
    fbw_script_close(&s);
}

Test(tx, shortcut_lost_after_another_allocation)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    fbw_tx_opts o;
    fbw_tx_opts_init(&o);
    cr_assert_eq(fbw_tx_new(s.c, &t, NULL), FBW_OK);
    cr_assert_eq(fbw_tx_start(t, &o), FBW_OK);
    fbw_conn_note_allocation(s.c); /* e.g. a statement allocated behind the start */
    uint16_t h;
    cr_assert_eq(fbw_tx_handle(t, &h), FBW_WAIT, "0xFFFF would name the newer object");
    cr_assert_eq(fbw_tx_commit(t), FBW_WAIT);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_tx_commit(t), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(s.end_object, s.tx_handle, "COMMIT names the real handle once known");
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ENDED);
    fbw_tx_free(t);
    fbw_script_close(&s);
}

Test(tx, start_and_commit_in_one_round_trip)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    fbw_tx_opts o;
    fbw_tx_opts_init(&o);
    cr_assert_eq(fbw_tx_new(s.c, &t, NULL), FBW_OK);
    cr_assert_eq(fbw_tx_start(t, &o), FBW_OK);
    cr_assert_eq(fbw_tx_commit(t), FBW_OK);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ENDING);
    s.waits = 0;
    fbw_script_wait_ok(&s);
    cr_assert_eq(s.waits, 1);
    cr_assert_eq(s.end_object, FBW_INVALID_OBJECT, "the commit rode along as 0xFFFF");
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ENDED);
    cr_assert_eq(fbw_tx_error(t)->code, FBW_OK);
    cr_assert_eq(fbw_tx_commit(t), FBW_E_USAGE, "ended: nothing to commit");
    fbw_tx_free(t);
    fbw_script_close(&s);
}

Test(tx, failed_commit_leaves_it_open_for_rollback)
{
    fbw_script s;
    fbw_script_open(&s);
    s.fail_commit = 1;
    fbw_tx *t;
    fbw_script_start(&s, &t, 0);
    cr_assert_eq(fbw_tx_commit(t), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ACTIVE, "a failed commit leaves the transaction alive");
    cr_assert_eq(fbw_tx_error(t)->code, FBW_E_SERVER);
    cr_assert_eq(fbw_tx_error(t)->gds[0], FBW_SCRIPT_GDS_DEADLOCK);
    cr_assert_eq(fbw_tx_rollback(t), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ENDED);
    cr_assert_eq(s.rollbacks, 1);
    fbw_script_close(&s);
}

Test(tx, failed_start)
{
    fbw_script s;
    fbw_script_open(&s);
    s.fail_start = 1;
    fbw_tx *t;
    fbw_tx_opts o;
    fbw_tx_opts_init(&o);
    cr_assert_eq(fbw_tx_new(s.c, &t, NULL), FBW_OK);
    cr_assert_eq(fbw_tx_start(t, &o), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_FAILED);
    cr_assert_eq(fbw_tx_error(t)->code, FBW_E_SERVER);
    cr_assert_eq(fbw_tx_commit(t), FBW_E_USAGE, "nothing to commit");
    cr_assert_eq(fbw_tx_start(t, &o), FBW_OK, "a failed transaction can be started again");
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ACTIVE);
    fbw_tx_free(t);
    fbw_script_close(&s);
}

Test(tx, retaining_keeps_it_active)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    fbw_script_start(&s, &t, 0);
    uint64_t gen = fbw_tx_generation(t);
    cr_assert_eq(fbw_tx_commit_retaining(t), FBW_OK);
    cr_assert_eq(fbw_tx_rollback_retaining(t), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ACTIVE);
    cr_assert_eq(fbw_tx_generation(t), gen);
    cr_assert_eq(fbw_script_count(&s, FBW_OP_COMMIT_RETAINING), 1);
    cr_assert_eq(fbw_script_count(&s, FBW_OP_ROLLBACK_RETAINING), 1);
    fbw_script_close(&s);
}

Test(tx, sql_commit_and_set_transaction_replies)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    cr_assert_eq(fbw_tx_new(s.c, &t, NULL), FBW_OK);
    fbw_tx_note_exec_reply(t, 0, 7); /* started by a statement */
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ACTIVE);
    cr_assert_eq(fbw_tx_server_handle(t), 7);
    fbw_tx_note_exec_reply(t, 7, 0); /* COMMIT as SQL: the reply names no transaction */
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ENDED);
    cr_assert_eq(fbw_tx_server_handle(t), 0);
    fbw_tx_note_exec_reply(t, 0, 9); /* SET TRANSACTION as SQL: a new one */
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ACTIVE);
    cr_assert_eq(fbw_tx_server_handle(t), 9);
    fbw_tx_note_exec_reply(t, 9, 9); /* an ordinary statement */
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ACTIVE);
    fbw_tx_free(t);
    fbw_script_close(&s);
}

/* A TPB given as bytes (as fbwire-pcap replay takes one from a capture) goes out unchanged. */
Test(tx, start_with_a_tpb_as_given)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    cr_assert_eq(fbw_tx_new(s.c, &t, NULL), FBW_OK);
    static const uint8_t tpb[] = {3 /* isc_tpb_version3 */, 9 /* write */, 15 /* read_committed */,
                                  17 /* rec_version */, 7 /* nowait */};
    cr_assert_eq(fbw_tx_start_tpb(t, tpb, sizeof tpb), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(s.starts, 1);
    cr_assert_eq(s.tpb_len, sizeof tpb);
    cr_assert_eq(memcmp(s.tpb, tpb, sizeof tpb), 0);
    uint16_t h;
    cr_assert_eq(fbw_tx_handle(t, &h), FBW_OK);
    cr_assert_eq(h, s.tx_handle);
    cr_assert_eq(fbw_tx_commit(t), FBW_OK);
    fbw_script_wait_ok(&s);
    fbw_tx_free(t);
    fbw_script_close(&s);
}

/* The accessors follow the object through its life: new, starting, active, ending, ended. */
Test(tx, accessors_follow_the_state)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    fbw_err err;
    cr_assert_eq(fbw_tx_new(s.c, &t, &err), FBW_OK);
    cr_assert_eq(fbw_tx_conn(t), s.c);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_NONE);
    cr_assert(!fbw_tx_live(t));
    cr_assert_eq(fbw_tx_error(t)->code, FBW_OK);
    cr_assert_eq(fbw_tx_server_handle(t), 0);
    uint16_t h;
    cr_assert_eq(fbw_tx_handle(t, &h), FBW_E_USAGE, "not started");
    fbw_tx_opts o;
    fbw_tx_opts_init(&o);
    cr_assert_eq(fbw_tx_start(t, &o), FBW_OK);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_STARTING);
    cr_assert(fbw_tx_live(t));
    cr_assert_eq(fbw_tx_server_handle(t), 0, "not answered yet");
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ACTIVE);
    cr_assert_eq(fbw_tx_server_handle(t), s.tx_handle);
    cr_assert_eq(fbw_tx_commit(t), FBW_OK);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ENDING);
    cr_assert(!fbw_tx_live(t), "no request may be queued in a transaction being ended");
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ENDED);
    cr_assert_eq(fbw_tx_server_handle(t), 0);
    fbw_tx_free(t);
    fbw_tx_free(NULL); /* fine */
    fbw_script_close(&s);
}

/* The error is of the latest request: a refused commit's error stays until the rollback that
 * follows is queued. */
Test(tx, error_is_the_latest_requests)
{
    fbw_script s;
    fbw_script_open(&s);
    s.fail_commit = 1;
    fbw_tx *t;
    fbw_script_start(&s, &t, 0);
    cr_assert_eq(fbw_tx_commit(t), FBW_OK);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_tx_error(t)->code, FBW_E_SERVER);
    cr_assert_eq(fbw_tx_rollback(t), FBW_OK);
    cr_assert_eq(fbw_tx_error(t)->code, FBW_OK, "cleared when the rollback was queued");
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ENDED);
    cr_assert_eq(fbw_tx_error(t)->code, FBW_OK);
    fbw_script_close(&s);
}

/* Freed while its start and commit are due: the replies still find it (the last one frees it), so
 * they are accounted and the connection stays in step. ASan (FBWIRE_SANITIZE) would report a
 * reply handler writing to freed memory, and a leak if the last reply did not free it. */
Test(tx, freed_with_replies_due)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_tx *t;
    cr_assert_eq(fbw_tx_new(s.c, &t, NULL), FBW_OK);
    fbw_tx_opts o;
    fbw_tx_opts_init(&o);
    cr_assert_eq(fbw_tx_start(t, &o), FBW_OK);
    cr_assert_eq(fbw_tx_commit(t), FBW_OK);
    fbw_tx_free(t);
    cr_assert_eq(fbw_conn_outstanding(s.c), 2);
    fbw_script_wait_ok(&s);
    cr_assert_eq(fbw_conn_outstanding(s.c), 0);
    cr_assert_eq(s.commits, 1);
    cr_assert_eq(fbw_conn_get_state(s.c), FBW_CS_READY);
    fbw_script_close(&s);
}

/* FBW_WAIT is its own code: named, not an error, not FBW_AGAIN. */
Test(tx, wait_is_a_code_of_its_own)
{
    cr_assert_str_eq(fbw_rc_name(FBW_WAIT), "FBW_WAIT");
    cr_assert_str_eq(fbw_rc_name(FBW_AGAIN), "FBW_AGAIN");
    cr_assert_neq(FBW_WAIT, FBW_AGAIN);
    cr_assert_gt(FBW_WAIT, 0, "not an error");
    cr_assert(!fbw_is_fatal(FBW_WAIT));
}
