/* SPDX-License-Identifier: MIT */
/* test_pipe.c - pipeline mode (wire/pipe.h) against a scripted server (tests/support/script.h):
 * no socket, no server. Ordering of per-request results, a failure at every position of n
 * requests (named k of n, never committed), COMMIT riding along only when nothing was written,
 * the caps on replies and bytes, replies fed one byte at a time, a reply larger than any socket
 * buffer, blob requests, and misuse. Round trips are the script's waits. */
#include <criterion/criterion.h>

#include "pipe.h"
#include "script.h"

#include <stdio.h>
#include <string.h>

typedef struct fixture {
    fbw_script s;
    fbw_tx *tx;
    fbw_stmt *st;
    fbw_pipe *p;
} fixture;

/* A pipeline on a started transaction and a prepared statement (SELECT unless dml is given). */
static void setup(fixture *f, int dml, int read_only, unsigned max_replies, size_t max_bytes,
                  size_t chunk)
{
    fbw_script_open(&f->s);
    if (dml)
        fbw_script_dml(&f->s, dml);
    fbw_script_start(&f->s, &f->tx, read_only);
    f->st = fbw_script_prepare(&f->s, f->tx, "SELECT c FROM t WHERE id=?");
    f->s.chunk = chunk;
    fbw_pipe_opts o;
    fbw_pipe_opts_init(&o);
    o.max_replies = max_replies;
    o.max_bytes = max_bytes;
    o.wait = fbw_script_wait;
    o.wait_arg = &f->s;
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_pipe_new(f->s.c, &o, &f->p, &err), FBW_OK, "%s", err.msg);
    fbw_pipe_begin(f->p, f->tx);
    f->s.waits = 0;
    f->s.nlog = 0;
}

static void teardown(fixture *f)
{
    fbw_pipe_free(f->p);
    fbw_stmt_free(f->st);
    fbw_script_close(&f->s);
}

static fbw_value id(int64_t v)
{
    fbw_value x;
    memset(&x, 0, sizeof x);
    x.type = FBW_SQL_LONG;
    x.u.i64 = v;
    return x;
}

/* Queue n executions with ids 1..n; returns the first error (FBW_OK when all queued). */
static int queue_n(fixture *f, unsigned n, unsigned *ks, fbw_err *err)
{
    for (unsigned i = 0; i < n; i++) {
        fbw_value v = id((int64_t)i + 1);
        char what[32];
        snprintf(what, sizeof what, "id %u", i + 1);
        int rc = fbw_pipe_execute(f->p, f->st, &v, 0, what, ks ? &ks[i] : NULL, err);
        if (rc)
            return rc;
    }
    return FBW_OK;
}

/* ---- ordering ---- */

static void ordering(size_t chunk)
{
    fixture f;
    setup(&f, 0, 1, 0, 0, chunk);
    f.s.rows = 3;
    unsigned ks[5];
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(queue_n(&f, 5, ks, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(f.s.waits, 0, "nothing waited for while queueing");
    cr_assert_eq(fbw_pipe_queued(f.p), 5);
    for (unsigned i = 0; i < 5; i++)
        cr_assert_eq(ks[i], i + 1, "requests are numbered in order");
    const char *what = NULL;
    cr_assert_eq(fbw_pipe_oldest_unanswered(f.p, &what), 1, "nothing answered yet: the first");
    cr_assert_str_eq(what, "id 1");
    cr_assert_eq(fbw_pipe_sync(f.p, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_pipe_oldest_unanswered(f.p, &what), 0, "every reply arrived");
    cr_assert_null(what);
    cr_assert_eq(f.s.waits, 1, "five executions, one round trip");
    cr_assert_eq(fbw_pipe_queued(f.p), 0);
    cr_assert_eq(fbw_pipe_count(f.p), 5);
    cr_assert_eq(fbw_pipe_error(f.p)->code, FBW_OK);
    for (unsigned i = 0; i < 5; i++) {
        const fbw_exec_out *o = fbw_pipe_result(f.p, ks[i]);
        cr_assert_not_null(o);
        cr_assert(o->done && o->eof, "execution %u answered to its end", i + 1);
        cr_assert_eq(o->rows, 3, "execution %u has its own rows", i + 1);
        cr_assert_eq(o->err.code, FBW_OK);
    }
    /* the server saw them in queue order: execute + fetch each (the previous cursor's close
     * rides along from the second on), the last parameter being the last id */
    cr_assert_eq(f.s.log[0], FBW_OP_EXECUTE);
    cr_assert_eq(f.s.log[1], FBW_OP_FETCH);
    cr_assert_eq(fbw_script_count(&f.s, FBW_OP_EXECUTE), 5);
    cr_assert_eq(fbw_script_count(&f.s, FBW_OP_FETCH), 5);
    cr_assert_eq(f.s.last_param, 5);
    cr_assert_eq(fbw_stmt_row_count(f.st), 3, "the statement keeps the latest execution's rows");
    cr_assert_null(fbw_pipe_result(f.p, 6));
    cr_assert_null(fbw_pipe_result(f.p, 0));
    /* only SELECTs: COMMIT is sent at once and the whole commit costs one round trip */
    cr_assert_eq(fbw_pipe_commit(f.p, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(f.s.waits, 2);
    cr_assert_eq(f.s.commits, 1);
    cr_assert_eq(fbw_tx_state(f.tx), FBW_TX_ENDED);
    teardown(&f);
}

Test(pipe, results_in_order) { ordering(0); }
Test(pipe, replies_fed_one_byte_at_a_time) { ordering(1); }
Test(pipe, replies_fed_in_odd_chunks) { ordering(7); }

Test(pipe, read_only_commit_rides_along)
{
    fixture f;
    setup(&f, 0, 1, 0, 0, 0);
    fbw_err err;
    cr_assert_eq(queue_n(&f, 4, NULL, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_pipe_writes(f.p), 0);
    cr_assert_eq(fbw_pipe_commit(f.p, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(f.s.waits, 1, "executions and COMMIT in one round trip");
    cr_assert_eq(f.s.log[f.s.nlog - 1], FBW_OP_COMMIT, "COMMIT goes out behind the executions");
    cr_assert_eq(fbw_pipe_count(f.p), 0, "the pipeline is ready for the next transaction");
    teardown(&f);
}

Test(pipe, writing_commit_waits_for_the_check)
{
    fixture f;
    setup(&f, FBW_STMT_UPDATE, 0, 0, 0, 0);
    fbw_err err;
    unsigned ks[3];
    cr_assert_eq(queue_n(&f, 3, ks, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_pipe_writes(f.p), 1);
    cr_assert_eq(fbw_pipe_commit(f.p, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(f.s.waits, 2, "the replies are checked, then COMMIT");
    cr_assert_eq(f.s.log[3], FBW_OP_COMMIT, "COMMIT is the first request of the second write");
    cr_assert_eq(f.s.commits, 1);
    cr_assert_eq(f.s.rollbacks, 0);
    teardown(&f);
}

/* ---- a failure at every position ---- */

static void fail_at(int dml, unsigned n, unsigned k)
{
    fixture f;
    setup(&f, dml, !dml, 0, 0, 0);
    f.s.fail_exec = k;
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(queue_n(&f, n, NULL, &err), FBW_OK, "queueing reports nothing yet: %s", err.msg);
    int rc = fbw_pipe_commit(f.p, &err);
    cr_assert_eq(rc, FBW_E_SERVER, "failure at %u of %u: rc %d", k, n, rc);
    char want[80];
    snprintf(want, sizeof want, "statement %u of %u of the pipelined transaction (id %u)", k, n, k);
    cr_assert(strstr(err.msg, want) != NULL, "message names the request: %s", err.msg);
    cr_assert_eq(err.gds[0], FBW_SCRIPT_GDS_UNIQUE, "the server's own code");
    cr_assert_str_eq(err.sqlstate, "23000");
    if (dml) {
        cr_assert_eq(f.s.commits, 0, "a writing transaction with a failed request: no commit");
        cr_assert_eq(f.s.rollbacks, 1);
        cr_assert_eq(f.s.waits, 2);
    } else {
        cr_assert_eq(f.s.waits, 1, "a read-only COMMIT rode along");
    }
    cr_assert(fbw_tx_state(f.tx) != FBW_TX_ACTIVE && fbw_tx_state(f.tx) != FBW_TX_STARTING, "nothing stays open");
    teardown(&f);
}

Test(pipe, write_failure_at_every_position)
{
    for (unsigned k = 1; k <= 7; k++)
        fail_at(FBW_STMT_INSERT, 7, k);
}

Test(pipe, select_failure_at_every_position)
{
    for (unsigned k = 1; k <= 7; k++)
        fail_at(0, 7, k);
}

Test(pipe, first_error_wins_and_stops_queueing)
{
    fixture f;
    setup(&f, FBW_STMT_DELETE, 0, 0, 0, 0);
    f.s.fail_exec = 2;
    f.s.fail_exec_every = 1; /* 2, 3, 4 ... all fail */
    fbw_err err;
    cr_assert_eq(queue_n(&f, 4, NULL, &err), FBW_OK);
    cr_assert_eq(fbw_pipe_sync(f.p, &err), FBW_OK, "a sync reports only a failed wait");
    cr_assert_eq(fbw_pipe_error(f.p)->code, FBW_E_SERVER);
    cr_assert(strstr(fbw_pipe_error(f.p)->msg, "statement 2 of 4") != NULL, "%s",
              fbw_pipe_error(f.p)->msg);
    cr_assert_eq(fbw_pipe_result(f.p, 3)->err.code, FBW_E_SERVER, "each keeps its own error");
    fbw_value v = id(9);
    unsigned execs = f.s.execs;
    cr_assert_eq(fbw_pipe_execute(f.p, f.st, &v, 0, "late", NULL, &err), FBW_E_SERVER);
    cr_assert(strstr(err.msg, "statement 2 of 4") != NULL, "%s", err.msg);
    cr_assert_eq(fbw_pipe_sync(f.p, &err), FBW_OK);
    cr_assert_eq(f.s.execs, execs, "nothing more was queued");
    cr_assert_eq(fbw_pipe_rollback(f.p, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(f.s.rollbacks, 1);
    cr_assert_eq(fbw_pipe_error(f.p)->code, FBW_OK, "a new transaction starts clean");
    teardown(&f);
}

Test(pipe, failed_commit_rolls_back)
{
    fixture f;
    setup(&f, FBW_STMT_INSERT, 0, 0, 0, 0);
    f.s.fail_commit = 1;
    fbw_err err;
    cr_assert_eq(queue_n(&f, 2, NULL, &err), FBW_OK);
    cr_assert_eq(fbw_pipe_commit(f.p, &err), FBW_E_SERVER);
    cr_assert_eq(err.gds[0], FBW_SCRIPT_GDS_DEADLOCK, "COMMIT's own error");
    cr_assert_eq(f.s.rollbacks, 1, "a failed COMMIT leaves nothing open");
    cr_assert_eq(f.s.waits, 3);
    teardown(&f);
}

/* ---- caps ---- */

Test(pipe, reply_cap_syncs)
{
    fixture f;
    setup(&f, FBW_STMT_UPDATE, 0, 10, 0, 0); /* one reply per DML execution */
    fbw_err err;
    cr_assert_eq(queue_n(&f, 25, NULL, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(f.s.waits, 2, "synced at 10 and 20 replies in flight");
    cr_assert_eq(fbw_pipe_queued(f.p), 5);
    cr_assert_eq(fbw_pipe_count(f.p), 25);
    cr_assert_eq(fbw_pipe_commit(f.p, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(f.s.waits, 4);
    cr_assert_eq(f.s.execs, 25);
    teardown(&f);
}

Test(pipe, byte_cap_syncs)
{
    fixture f;
    setup(&f, FBW_STMT_UPDATE, 0, 0, 1, 0); /* any queued byte reaches the cap */
    fbw_err err;
    cr_assert_eq(queue_n(&f, 6, NULL, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(f.s.waits, 6, "every execution went out alone");
    teardown(&f);
    setup(&f, FBW_STMT_UPDATE, 0, 0, 0, 0);
    cr_assert_eq(queue_n(&f, 300, NULL, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(f.s.waits, 0, "300 small executions stay under the default caps");
    cr_assert_eq(fbw_pipe_sync(f.p, &err), FBW_OK);
    cr_assert_eq(f.s.waits, 1);
    teardown(&f);
}

Test(pipe, failure_found_at_a_cap_is_returned_there)
{
    fixture f;
    setup(&f, FBW_STMT_INSERT, 0, 4, 0, 0);
    f.s.fail_exec = 3;
    fbw_err err;
    unsigned ks[8] = {0};
    int rc = queue_n(&f, 8, ks, &err);
    cr_assert_eq(rc, FBW_E_SERVER, "the 4th execution's cap sync reports the 3rd's failure");
    cr_assert_eq(ks[3], 4, "the 4th was queued");
    cr_assert_eq(ks[4], 0, "the 5th was not");
    cr_assert(strstr(err.msg, "statement 3 of 4") != NULL, "%s", err.msg);
    cr_assert_eq(fbw_pipe_commit(f.p, &err), FBW_E_SERVER);
    cr_assert_eq(f.s.commits, 0);
    teardown(&f);
}

/* ---- a reply larger than a socket buffer ---- */

Test(pipe, reply_larger_than_a_socket_buffer)
{
    fixture f;
    setup(&f, 0, 1, 0, 0, 4096);
    f.s.rows = 100;
    f.s.row_text = 8000; /* ~800 KB in one fetch reply, read 4 KiB at a time */
    fbw_err err;
    unsigned ks[2];
    cr_assert_eq(queue_n(&f, 2, ks, &err), FBW_OK);
    cr_assert_eq(fbw_pipe_sync(f.p, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(f.s.waits, 1);
    cr_assert_eq(fbw_pipe_result(f.p, ks[0])->rows, 100);
    cr_assert_eq(fbw_pipe_result(f.p, ks[1])->rows, 100);
    cr_assert_eq(fbw_stmt_row_count(f.st), 100);
    fbw_value v;
    cr_assert_eq(fbw_stmt_row(f.st, 99, &v, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(v.u.bytes.n, 8000);
    cr_assert_eq(v.u.bytes.p[0], 'a' + 99 % 26);
    cr_assert_eq(v.u.bytes.p[7999], 'a' + 99 % 26);
    teardown(&f);
}

Test(pipe, dropped_rows_are_counted_not_kept)
{
    fixture f;
    setup(&f, 0, 1, 0, 0, 0);
    f.s.rows = 5;
    fbw_err err;
    unsigned k;
    fbw_value v = id(1);
    cr_assert_eq(fbw_pipe_execute(f.p, f.st, &v, 0, NULL, &k, &err), FBW_OK);
    fbw_pipe_result(f.p, k)->drop_rows = 1;
    cr_assert_eq(fbw_pipe_sync(f.p, &err), FBW_OK);
    cr_assert_eq(fbw_pipe_result(f.p, k)->rows, 5);
    cr_assert_eq(fbw_stmt_row_count(f.st), 0);
    teardown(&f);
}

/* ---- blobs ---- */

static void blob_in_pipe(unsigned fail_blob)
{
    fixture f;
    setup(&f, FBW_STMT_INSERT, 0, 0, 0, 0);
    f.s.fail_blob = fail_blob;
    fbw_err err;
    cr_assert_eq(queue_n(&f, 1, NULL, &err), FBW_OK);
    fbw_blob *b = NULL;
    cr_assert_eq(fbw_blob_new(f.s.c, &b, &err), FBW_OK);
    cr_assert_eq(fbw_blob_create(b, f.tx, NULL, 0), FBW_OK);
    cr_assert_eq(fbw_blob_write(b, "pipelined blob", 14), FBW_OK);
    cr_assert_eq(fbw_blob_close(b), FBW_OK);
    unsigned k;
    cr_assert_eq(fbw_pipe_blob(f.p, b, "a blob", &k, &err), FBW_OK);
    cr_assert_eq(k, 2);
    cr_assert_null(fbw_pipe_result(f.p, k), "a blob has no execution result");
    cr_assert_eq(f.s.waits, 0);
    int rc = fbw_pipe_commit(f.p, &err);
    if (fail_blob) {
        cr_assert_eq(rc, FBW_E_SERVER);
        const char *want = "blob 2 of 2 of the pipelined transaction (a blob)";
        cr_assert(strstr(err.msg, want) != NULL, "%s", err.msg);
        cr_assert_eq(f.s.commits, 0);
    } else {
        cr_assert_eq(rc, FBW_OK, "%s", err.msg);
        cr_assert_eq(f.s.waits, 2);
        cr_assert_eq(fbw_script_count(&f.s, FBW_OP_CREATE_BLOB2), 1);
        cr_assert_eq(f.s.commits, 1);
    }
    fbw_blob_free(b);
    teardown(&f);
}

Test(pipe, blob_requests) { blob_in_pipe(0); }
Test(pipe, failed_blob_is_named) { blob_in_pipe(1); }

/* ---- misuse ---- */

Test(pipe, misuse)
{
    fbw_script s;
    fbw_script_open(&s);
    fbw_pipe_opts o;
    fbw_pipe_opts_init(&o);
    cr_assert_eq(o.max_replies, FBW_PIPE_MAX_REPLIES);
    cr_assert_eq(o.max_bytes, FBW_PIPE_MAX_BYTES);
    fbw_pipe *p = (fbw_pipe *)&o;
    fbw_err err;
    cr_assert_eq(fbw_pipe_new(s.c, &o, &p, &err), FBW_E_USAGE, "a wait callback is required");
    cr_assert_null(p);
    fbw_pipe_free(NULL);
    fbw_tx *tx;
    fbw_script_start(&s, &tx, 0);
    fbw_script_dml(&s, FBW_STMT_COMMIT);
    fbw_stmt *st = fbw_script_prepare(&s, tx, "COMMIT");
    o.wait = fbw_script_wait;
    o.wait_arg = &s;
    cr_assert_eq(fbw_pipe_new(s.c, &o, &p, &err), FBW_OK);
    fbw_pipe_begin(p, tx);
    cr_assert_eq(fbw_pipe_execute(p, st, NULL, 0, NULL, NULL, &err), FBW_E_USAGE);
    cr_assert_eq(fbw_pipe_count(p), 0);
    cr_assert_eq(fbw_pipe_rollback(p, &err), FBW_OK, "%s", err.msg);
    fbw_pipe_free(p);
    fbw_stmt_free(st);
    fbw_script_close(&s);
}
