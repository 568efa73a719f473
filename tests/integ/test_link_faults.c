/* SPDX-License-Identifier: MIT */
/* test_link_faults.c - the library when the network breaks at an awkward moment: FB3 and FB4
 * through fbwire-link (tests/support/link.h), one scenario per connection:
 *   login; start + prepare of a 3 KB statement; prepare of a 100-row query; execute + fetch of the
 *   100 rows, 10 per op_fetch; a pipelined transaction (start + 2 inserts + commit in one write);
 *   an explicit transaction with a round trip per step (start, insert, then commit).
 * Each fault rule is placed by counts taken from a fault-free run through the relay up to the step
 * before (bytes for "in the middle of", the client's write count for "right after"), and the fault
 * log is checked to show that the fault hit there: a reset while the big request is written, while
 * the prepare's reply is read, in the middle of the fetch, in the middle of the pipelined
 * transaction's write, and between COMMIT and its reply; the COMMIT's reply held longer than the
 * timeout. Every case: the call fails with a fatal code within its bound, the error says the
 * connection was lost (or timed out) and names the request, the connection is closed, and the
 * outcome of a transaction is unknown (fbw_conn_outcome_unknown) exactly when a COMMIT was
 * unanswered; a transaction whose COMMIT never reached the server is not in the table. With 1-byte
 * slices both ways and at 1 Mbit/s the whole scenario works and its results are byte for byte the
 * direct run's; at 1 Mbit/s it takes at least the bytes' wire time. */
#include <criterion/criterion.h>

#include "link.h"
#include "sqlt.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ST_LOGIN, ST_BIG, ST_PREPARE, ST_FETCH, ST_PIPE, ST_EXPLICIT, ST_COMMIT, ST_COUNT };
static const char *const step_names[] = {"login", "big prepare",           "prepare",
                                         "fetch", "pipelined transaction", "explicit transaction",
                                         "commit"};

typedef struct run {
    int failed_step; /* ST_COUNT when every step passed */
    int rc;          /* the failing call's code */
    char msg[FBW_ERR_MSG_MAX + 32];
    int unknown;                                   /* fbw_conn_outcome_unknown after the failure */
    int fd_after;                                  /* fbw_client_fd after the failure */
    double seconds;                                /* the failing step's duration */
    uint64_t up[ST_COUNT + 1], down[ST_COUNT + 1]; /* wire bytes before each step (and at end) */
    size_t rows;                                   /* rows fetched */
    fbw_buf text; /* results as text: rows, then the transactions' outcomes */
} run;

typedef struct ctx {
    fbw_server_id id;
    fbw_sqlt q; /* direct connection: setup and checks */
    char table[32];
    char big_sql[3600];
    int serial; /* ids of inserted rows: 1000 + 10 * serial + k */
} ctx;

static void setup(ctx *x, fbw_server_id id)
{
    memset(x, 0, sizeof *x);
    x->id = id;
    fbw_sqlt_open(&x->q, id, NULL);
    fbw_sqlt_name(&x->q, "FBW_LFAULT", x->table, sizeof x->table);
    char sql[400];
    snprintf(sql, sizeof sql, "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY, S VARCHAR(40))",
             x->table);
    fbw_sqlt_ddl_ok(&x->q, sql);
    snprintf(sql, sizeof sql,
             "INSERT INTO %s (ID, S) WITH RECURSIVE R(N) AS (SELECT 1 FROM RDB$DATABASE UNION "
             "ALL SELECT N + 1 FROM R WHERE N < 100) SELECT N, 'row ' || N || ' of the fault "
             "test' FROM R",
             x->table);
    fbw_sqlt_ddl_ok(&x->q, sql);
    int k =
        snprintf(x->big_sql, sizeof x->big_sql, "SELECT COUNT(*) FROM %s WHERE S <> '", x->table);
    memset(x->big_sql + k, 'x', 3000);
    snprintf(x->big_sql + k + 3000, sizeof x->big_sql - (size_t)k - 3000, "'");
}

static void teardown(ctx *x)
{
    char sql[100];
    snprintf(sql, sizeof sql, "DROP TABLE %s", x->table);
    fbw_err err;
    fbw_sqlt_ddl(&x->q, sql, &err);
    fbw_sqlt_close(&x->q);
}

/* ---- the scenario ---- */

typedef struct sess {
    fbw_client *cl;
    fbw_conn *c;
    fbw_tx *tx;
    fbw_tx *first; /* the transaction left open when ST_EXPLICIT starts another */
    fbw_stmt *big, *sel, *ins;
} sess;

static int failed(run *r, sess *s, int step, int rc, double t0)
{
    r->failed_step = step;
    r->rc = rc;
    const fbw_err *e = fbw_client_error(s->cl);
    fbw_stmt *const sts[] = {s->big, s->sel, s->ins};
    for (int i = 0; i < 3 && !e->msg[0]; i++)
        if (sts[i] && fbw_stmt_error(sts[i])->msg[0])
            e = fbw_stmt_error(sts[i]);
    if (!e->msg[0] && s->tx && fbw_tx_error(s->tx)->msg[0])
        e = fbw_tx_error(s->tx);
    snprintf(r->msg, sizeof r->msg, "%s (%s)", e->msg, fbw_rc_name(rc));
    r->unknown = fbw_conn_outcome_unknown(s->c);
    r->fd_after = fbw_client_fd(s->cl);
    r->seconds = fbw_servers_now() - t0;
    return rc;
}

static void mark(run *r, sess *s, int step)
{
    const fbw_stats *st = fbw_conn_stats(s->c);
    r->up[step] = st->wire_bytes_sent;
    r->down[step] = st->wire_bytes_received;
}

static int wait_ok(sess *s)
{
    return fbw_client_wait(s->cl);
}

/* Queue an insert of (id, text) in t. */
static int insert(sess *s, fbw_tx *t, int id)
{
    char a[16], b[40];
    snprintf(a, sizeof a, "%d", id);
    snprintf(b, sizeof b, "inserted %d", id);
    const fbw_msgfmt *in = fbw_stmt_input(s->ins);
    fbw_value v[2];
    fbw_err err;
    cr_assert_eq(fbw_value_from_text(&in->cols[0], a, strlen(a), &v[0], &err), FBW_OK);
    cr_assert_eq(fbw_value_from_text(&in->cols[1], b, strlen(b), &v[1], &err), FBW_OK);
    return fbw_stmt_execute(s->ins, t, v, 0);
}

static void row_text(fbw_stmt *st, fbw_buf *out)
{
    for (size_t i = 0; i < fbw_stmt_row_count(st); i++)
        fbw_sqlt_row_text(st, i, NULL, out);
    fbw_stmt_clear_rows(st);
}

/* Run steps up to `last` (inclusive) on a connection to dsn; stop at the first failure. */
static void scenario(ctx *x, const char *dsn, int timeout_ms, int last, run *r)
{
    memset(r, 0, sizeof *r);
    fbw_buf_init(&r->text);
    r->failed_step = ST_COUNT;
    fbw_client_opts o;
    fbw_servers_client_opts(&x->q.srv, &o);
    o.timeout_ms = timeout_ms;
    sess s;
    memset(&s, 0, sizeof s);
    fbw_err err;
    double t0 = fbw_servers_now();
    int rc = fbw_client_connect(dsn, &o, &s.cl, &err);
    if (rc) {
        r->failed_step = ST_LOGIN;
        r->rc = rc;
        snprintf(r->msg, sizeof r->msg, "%s", err.msg);
        return;
    }
    s.c = fbw_client_conn(s.cl);
    int base = 1000 + 10 * x->serial++;
    char sql[200];
    for (int step = ST_BIG; step <= last && step < ST_COUNT; step++) {
        mark(r, &s, step);
        t0 = fbw_servers_now();
        rc = FBW_OK;
        switch (step) {
        case ST_BIG: {
            cr_assert_eq(fbw_tx_new(s.c, &s.tx, NULL), FBW_OK);
            fbw_tx_opts to;
            fbw_tx_opts_init(&to);
            rc = fbw_tx_start(s.tx, &to);
            if (rc == FBW_OK)
                rc = fbw_stmt_new(s.c, &s.big, &err);
            if (rc == FBW_OK)
                rc = fbw_stmt_new(s.c, &s.sel, &err);
            if (rc == FBW_OK)
                rc = fbw_stmt_new(s.c, &s.ins, &err);
            if (rc == FBW_OK)
                rc = wait_ok(&s); /* a statement is prepared in an answered transaction */
            if (rc == FBW_OK)
                rc = fbw_stmt_prepare(s.big, s.tx, x->big_sql, strlen(x->big_sql));
            if (rc == FBW_OK)
                rc = wait_ok(&s);
            if (rc == FBW_OK) {
                snprintf(sql, sizeof sql, "INSERT INTO %s (ID, S) VALUES (?, ?)", x->table);
                rc = fbw_stmt_prepare(s.ins, s.tx, sql, strlen(sql));
            }
            if (rc == FBW_OK)
                rc = wait_ok(&s);
            break;
        }
        case ST_PREPARE:
            snprintf(sql, sizeof sql, "SELECT ID, S FROM %s WHERE ID <= 100 ORDER BY ID", x->table);
            rc = fbw_stmt_prepare(s.sel, s.tx, sql, strlen(sql));
            if (rc == FBW_OK)
                rc = wait_ok(&s);
            break;
        case ST_FETCH:
            fbw_stmt_set_fetch_size(s.sel, 10);
            rc = fbw_stmt_execute(s.sel, s.tx, NULL, 0);
            while (rc == FBW_OK) {
                rc = wait_ok(&s);
                if (rc)
                    break;
                cr_assert_eq(fbw_stmt_error(s.sel)->code, FBW_OK, "%s", fbw_stmt_error(s.sel)->msg);
                r->rows += fbw_stmt_row_count(s.sel);
                row_text(s.sel, &r->text);
                if (fbw_stmt_eof(s.sel))
                    break;
                rc = fbw_stmt_fetch(s.sel);
            }
            break;
        case ST_PIPE: {
            fbw_tx *t;
            cr_assert_eq(fbw_tx_new(s.c, &t, NULL), FBW_OK);
            fbw_tx_opts to;
            fbw_tx_opts_init(&to);
            rc = fbw_tx_start(t, &to);
            if (rc == FBW_OK)
                rc = insert(&s, t, base + 1);
            if (rc == FBW_OK)
                rc = insert(&s, t, base + 2);
            if (rc == FBW_OK)
                rc = fbw_tx_commit(t);
            if (rc == FBW_OK)
                rc = wait_ok(&s);
            if (rc == FBW_OK)
                fbw_buf_printf(&r->text, "pipelined: state %d, error %d\n", fbw_tx_state(t),
                               fbw_tx_error(t)->code);
            fbw_tx_free(t);
            break;
        }
        case ST_EXPLICIT:
            s.first = s.tx; /* the first transaction stays open; a second one */
            cr_assert_eq(fbw_tx_new(s.c, &s.tx, NULL), FBW_OK);
            {
                fbw_tx_opts to;
                fbw_tx_opts_init(&to);
                rc = fbw_tx_start(s.tx, &to);
            }
            if (rc == FBW_OK)
                rc = wait_ok(&s);
            if (rc == FBW_OK)
                rc = insert(&s, s.tx, base + 3);
            if (rc == FBW_OK)
                rc = wait_ok(&s);
            break;
        case ST_COMMIT:
            rc = fbw_tx_commit(s.tx);
            if (rc == FBW_OK)
                rc = wait_ok(&s);
            if (rc == FBW_OK)
                fbw_buf_printf(&r->text, "explicit: state %d, error %d\n", fbw_tx_state(s.tx),
                               fbw_tx_error(s.tx)->code);
            break;
        }
        if (rc) {
            failed(r, &s, step, rc, t0);
            break;
        }
    }
    if (r->failed_step == ST_COUNT)
        mark(r, &s, ST_COUNT);
    fbw_stmt_free(s.big);
    fbw_stmt_free(s.sel);
    fbw_stmt_free(s.ins);
    fbw_tx_free(s.tx);
    fbw_tx_free(s.first);
    if (r->failed_step == ST_COUNT && last >= ST_COUNT - 1)
        fbw_client_close(s.cl);
    else
        fbw_client_abort(s.cl); /* a probe or a failed connection: no goodbye */
}

/* ---- helpers ---- */

static void dsn_of(const ctx *x, int port, char *dsn, size_t n)
{
    const fbw_server *S = &x->q.srv.srv[x->id];
    if (port)
        snprintf(dsn, n, "127.0.0.1/%d:%s", port, S->db);
    else
        snprintf(dsn, n, "%s/%d:%s", S->host, S->port, S->db);
}

static void link_start(ctx *x, fbw_link *l, const char *const *opts)
{
    fbw_err err;
    const fbw_server *S = &x->q.srv.srv[x->id];
    cr_assert_eq(fbw_link_start(l, S->host, S->port, opts, &err), FBW_OK, "%s", err.msg);
}

/* A fault-free run through the relay up to step `last`; the relay's counts for the connection. */
static fbw_link_conn probe(ctx *x, int last, run *r)
{
    fbw_link l;
    link_start(x, &l, NULL);
    char dsn[1400];
    dsn_of(x, l.port, dsn, sizeof dsn);
    scenario(x, dsn, FBW_TEST_TIMEOUT_MS, last, r);
    cr_assert_eq(r->failed_step, ST_COUNT, "%s: probe failed at %s: %s", fbw_server_name(x->id),
                 step_names[r->failed_step], r->msg);
    fbw_link_stop(&l);
    fbw_link_conn c;
    cr_assert_eq(fbw_link_first_conn(&l, &c), FBW_OK, "no relay summary");
    fbw_link_cleanup(&l);
    return c;
}

/* Run the scenario through a relay with one fault rule; expect it to fail at step `at`. Returns
 * the fault log's single entry in *f. */
static void faulted(ctx *x, const char *rule, int timeout_ms, int at, run *r, fbw_link_fault *f)
{
    fbw_link l;
    const char *opts[] = {"--fault", rule, NULL};
    link_start(x, &l, opts);
    char dsn[1400];
    dsn_of(x, l.port, dsn, sizeof dsn);
    scenario(x, dsn, timeout_ms, ST_COUNT - 1, r);
    fbw_link_release(&l);
    fbw_link_stop(&l);
    int n = fbw_link_faults(&l, f, 1);
    fbw_link_cleanup(&l);
    const char *srv = fbw_server_name(x->id);
    printf("%s: '%s': failed at %s after %.3f s, %s: %s (outcome unknown: %d)\n", srv, rule,
           step_names[r->failed_step < ST_COUNT ? r->failed_step : 0], r->seconds,
           fbw_rc_name(r->rc), r->msg, r->unknown);
    cr_assert_eq(n, 1, "%s: '%s': %d faults logged", srv, rule, n);
    cr_assert_eq(r->failed_step, at, "%s: '%s': failed at step %d (%s), not %s", srv, rule,
                 r->failed_step, r->failed_step < ST_COUNT ? step_names[r->failed_step] : "none",
                 step_names[at]);
    cr_expect(fbw_is_fatal(r->rc), "%s: %s is not fatal", srv, fbw_rc_name(r->rc));
    cr_expect_eq(r->fd_after, -1, "%s: the socket is still open after the failure", srv);
    cr_expect(r->seconds < timeout_ms / 1000.0 + 1.0, "%s: the failing step took %.3f s", srv,
              r->seconds);
}

static int64_t count_ids(ctx *x, int lo, int hi)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s WHERE ID BETWEEN %d AND %d", x->table, lo,
             hi);
    /* A fresh transaction: the test's read-committed one would also do, but be explicit. */
    fbw_tx *t;
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    fbw_sqlt_tx_start_ok(&x->q, &t, &to);
    int64_t n = fbw_sqlt_int_ok(&x->q, t, sql);
    fbw_sqlt_commit_ok(&x->q, t);
    return n;
}

static void expect_lost_msg(fbw_server_id id, const run *r, const char *op)
{
    cr_expect(strstr(r->msg, "connection") != NULL,
              "%s: \"%s\" does not say the connection "
              "was lost",
              fbw_server_name(id), r->msg);
    cr_expect(strstr(r->msg, op) != NULL, "%s: \"%s\" does not name %s", fbw_server_name(id),
              r->msg, op);
}

/* ---- the cases ---- */

/* The 3 KB prepare is cut in the middle: the server never gets all of it. */
static void reset_writing(fbw_server_id id)
{
    ctx x;
    setup(&x, id);
    run p, r;
    probe(&x, ST_BIG, &p);
    cr_assert_gt(p.up[ST_COUNT] - p.up[ST_BIG], 3000);
    uint64_t at = p.up[ST_BIG] + 1600; /* inside the 3 KB prepare, the step's first write */
    char rule[96];
    snprintf(rule, sizeof rule, "after=client-bytes:%llu reset", (unsigned long long)at);
    fbw_link_fault f;
    faulted(&x, rule, FBW_TEST_TIMEOUT_MS, ST_BIG, &r, &f);
    cr_expect(f.up == at && f.up > r.up[ST_BIG] && f.up < r.up[ST_BIG] + 3000,
              "the reset came after %llu bytes up, the request started at %llu",
              (unsigned long long)f.up, (unsigned long long)r.up[ST_BIG]);
    expect_lost_msg(id, &r, "op_prepare");
    cr_expect_eq(r.unknown, 0, "no COMMIT was sent, yet the outcome is called unknown");
    teardown(&x);
}

/* The reply to the prepare of the 100-row query is cut in the middle. */
static void reset_reading(fbw_server_id id)
{
    ctx x;
    setup(&x, id);
    run p1, r;
    probe(&x, ST_PREPARE, &p1);
    uint64_t d0 = p1.down[ST_PREPARE], d1 = p1.down[ST_COUNT];
    cr_assert_gt(d1, d0 + 40, "the prepare's reply is %llu bytes", (unsigned long long)(d1 - d0));
    uint64_t at = d0 + (d1 - d0) / 2;
    char rule[96];
    snprintf(rule, sizeof rule, "after=server-bytes:%llu reset", (unsigned long long)at);
    fbw_link_fault f;
    faulted(&x, rule, FBW_TEST_TIMEOUT_MS, ST_PREPARE, &r, &f);
    cr_expect(f.down == at && f.down > r.down[ST_PREPARE] &&
                  f.up == r.up[ST_PREPARE] + (p1.up[ST_COUNT] - p1.up[ST_PREPARE]),
              "reset at %llu bytes down / %llu up; the reply started at %llu",
              (unsigned long long)f.down, (unsigned long long)f.up,
              (unsigned long long)r.down[ST_PREPARE]);
    expect_lost_msg(id, &r, "op_prepare");
    cr_expect_eq(r.unknown, 0);
    teardown(&x);
}

/* The 100 rows come 10 per op_fetch; the reset falls in the middle of them. */
static void reset_fetching(fbw_server_id id)
{
    ctx x;
    setup(&x, id);
    run p1, r;
    probe(&x, ST_FETCH, &p1);
    cr_assert_eq(p1.rows, 100);
    uint64_t d0 = p1.down[ST_FETCH], d1 = p1.down[ST_COUNT];
    uint64_t at = d0 + (d1 - d0) / 2 + 7; /* inside a reply, not at its edge */
    char rule[96];
    snprintf(rule, sizeof rule, "after=server-bytes:%llu reset", (unsigned long long)at);
    fbw_link_fault f;
    faulted(&x, rule, FBW_TEST_TIMEOUT_MS, ST_FETCH, &r, &f);
    cr_expect(f.down == at, "reset after %llu bytes down, asked %llu", (unsigned long long)f.down,
              (unsigned long long)at);
    cr_expect(r.rows >= 10 && r.rows < 100, "%zu rows before the reset", r.rows);
    /* The rows that came are the direct run's first ones, exactly. */
    cr_expect_eq(
        memcmp(r.text.data + r.text.start, p1.text.data + p1.text.start, r.text.len - r.text.start),
        0, "the rows before the reset differ from the fault-free run's");
    expect_lost_msg(id, &r, "op_fetch");
    cr_expect_eq(r.unknown, 0);
    printf("%s: %zu of 100 rows arrived before the reset\n", fbw_server_name(id), r.rows);
    teardown(&x);
}

/* start + 2 inserts + commit in one write, cut in its middle: the COMMIT never reaches the server.
 * The library cannot know how far the server read, so the outcome is unknown; the table shows
 * neither row. */
static void reset_in_pipeline(fbw_server_id id)
{
    ctx x;
    setup(&x, id);
    run p1, r;
    probe(&x, ST_PIPE, &p1);
    uint64_t u0 = p1.up[ST_PIPE], u1 = p1.up[ST_COUNT];
    uint64_t at = u0 + (u1 - u0) / 2;
    char rule[96];
    snprintf(rule, sizeof rule, "after=client-bytes:%llu reset", (unsigned long long)at);
    int base = 1000 + 10 * x.serial; /* the faulted run's ids */
    fbw_link_fault f;
    faulted(&x, rule, FBW_TEST_TIMEOUT_MS, ST_PIPE, &r, &f);
    cr_expect(f.up == at && f.up < r.up[ST_PIPE] + (u1 - u0), "reset after %llu bytes up",
              (unsigned long long)f.up);
    expect_lost_msg(id, &r, "op_");
    cr_expect_eq(r.unknown, 1, "a COMMIT was queued and never answered: outcome must be unknown");
    cr_expect(strstr(r.msg, "outcome is unknown") != NULL, "\"%s\"", r.msg);
    cr_expect_eq(count_ids(&x, base + 1, base + 2), 0, "rows of a COMMIT the server never got");
    teardown(&x);
}

/* The COMMIT is delivered, then the connection is reset before its reply: outcome unknown. */
static void reset_after_commit(fbw_server_id id)
{
    ctx x;
    setup(&x, id);
    run p;
    fbw_link_conn c = probe(&x, ST_COMMIT - 1, &p);
    char rule[96];
    snprintf(rule, sizeof rule, "after=client-writes:%llu reset",
             (unsigned long long)c.up_chunks + 1);
    int base = 1000 + 10 * x.serial;
    run r;
    fbw_link_fault f;
    faulted(&x, rule, FBW_TEST_TIMEOUT_MS, ST_COMMIT, &r, &f);
    /* Exactly between: every byte the client sent (the COMMIT too) reached the server, none of
     * the reply reached the client. */
    cr_expect(f.up > r.up[ST_COMMIT], "the COMMIT was not delivered (%llu <= %llu)",
              (unsigned long long)f.up, (unsigned long long)r.up[ST_COMMIT]);
    cr_expect_eq(f.down, r.down[ST_COMMIT], "reply bytes were delivered before the reset");
    expect_lost_msg(id, &r, "op_commit");
    cr_expect_eq(r.unknown, 1, "the COMMIT's reply never came: outcome must be unknown");
    cr_expect(strstr(r.msg, "outcome is unknown") != NULL, "\"%s\"", r.msg);
    int64_t n = count_ids(&x, base + 3, base + 3);
    printf("%s: the COMMIT whose reply was lost %s\n", fbw_server_name(id),
           n ? "had committed" : "had not committed");
    teardown(&x);
}

/* The COMMIT's reply is held (stall=hold) longer than the 1.5 s timeout. */
static void stall_commit_reply(fbw_server_id id)
{
    ctx x;
    setup(&x, id);
    run p;
    fbw_link_conn c = probe(&x, ST_COMMIT - 1, &p);
    char rule[96];
    snprintf(rule, sizeof rule, "after=client-writes:%llu dir=down stall=hold",
             (unsigned long long)c.up_chunks + 1);
    run r;
    fbw_link_fault f;
    faulted(&x, rule, 1500, ST_COMMIT, &r, &f);
    cr_expect_str_eq(f.fault, "stall");
    cr_expect_eq(r.rc, FBW_E_TIMEOUT, "%s", fbw_rc_name(r.rc));
    cr_expect(r.seconds >= 1.4, "timed out after %.3f s", r.seconds);
    cr_expect(strstr(r.msg, "no reply from the server for 1500 ms") != NULL &&
                  strstr(r.msg, "op_commit") != NULL && strstr(r.msg, "outcome is unknown") != NULL,
              "\"%s\"", r.msg);
    cr_expect_eq(r.unknown, 1);
    teardown(&x);
}

/* The whole scenario through a shaped link: results byte for byte the direct run's. */
static void shaped(fbw_server_id id, const char *const *opts, double *wire_s, double *took)
{
    ctx x;
    setup(&x, id);
    char dsn[1400];
    run d, r;
    dsn_of(&x, 0, dsn, sizeof dsn);
    scenario(&x, dsn, FBW_TEST_TIMEOUT_MS, ST_COUNT - 1, &d);
    cr_assert_eq(d.failed_step, ST_COUNT, "direct: %s", d.msg);
    x.serial = 0; /* same ids again: first delete the direct run's rows */
    char sql[120];
    snprintf(sql, sizeof sql, "DELETE FROM %s WHERE ID > 100", x.table);
    fbw_sqlt_ddl_ok(&x.q, sql);
    fbw_link l;
    link_start(&x, &l, opts);
    dsn_of(&x, l.port, dsn, sizeof dsn);
    double t0 = fbw_servers_now();
    scenario(&x, dsn, FBW_TEST_TIMEOUT_MS * 3, ST_COUNT - 1, &r);
    *took = fbw_servers_now() - t0;
    fbw_link_stop(&l);
    fbw_link_conn c;
    cr_assert_eq(fbw_link_first_conn(&l, &c), FBW_OK);
    fbw_link_cleanup(&l);
    cr_assert_eq(r.failed_step, ST_COUNT, "%s: through the link: %s: %s", fbw_server_name(id),
                 step_names[r.failed_step < ST_COUNT ? r.failed_step : 0], r.msg);
    cr_expect_eq(r.rows, 100);
    size_t n = d.text.len - d.text.start;
    cr_expect(n == r.text.len - r.text.start &&
                  memcmp(d.text.data + d.text.start, r.text.data + r.text.start, n) == 0,
              "%s: results differ from the direct run's", fbw_server_name(id));
    *wire_s = (double)(c.up_bytes > c.down_bytes ? c.up_bytes : c.down_bytes) * 8 / 1e6;
    printf("%s: %llu chunks up, %llu down, %llu + %llu bytes, %.3f s (direct run: same %zu "
           "bytes of results)\n",
           fbw_server_name(id), (unsigned long long)c.up_chunks, (unsigned long long)c.down_chunks,
           (unsigned long long)c.up_bytes, (unsigned long long)c.down_bytes, *took, n);
    fbw_buf_free(&d.text);
    fbw_buf_free(&r.text);
    teardown(&x);
}

static void slices(fbw_server_id id)
{
    const char *opts[] = {"--slice", "1", NULL};
    double wire, took;
    shaped(id, opts, &wire, &took);
}

static void slow_link(fbw_server_id id)
{
    const char *opts[] = {"--rate", "1mbit", NULL};
    double wire, took;
    shaped(id, opts, &wire, &took);
    /* One direction's bytes at 1 Mbit/s is a lower bound on the time (the login included). */
    cr_expect(took >= wire * 0.95, "%s: %.3f s, but the bytes take %.3f s at 1 Mbit/s",
              fbw_server_name(id), took, wire);
}

Test(link_faults, reset_writing_fb3, .timeout = 40)
{
    reset_writing(FBW_SRV_FB3);
}
Test(link_faults, reset_writing_fb4, .timeout = 40)
{
    reset_writing(FBW_SRV_FB4);
}
Test(link_faults, reset_reading_fb3, .timeout = 40)
{
    reset_reading(FBW_SRV_FB3);
}
Test(link_faults, reset_reading_fb4, .timeout = 40)
{
    reset_reading(FBW_SRV_FB4);
}
Test(link_faults, reset_fetching_fb3, .timeout = 40)
{
    reset_fetching(FBW_SRV_FB3);
}
Test(link_faults, reset_fetching_fb4, .timeout = 40)
{
    reset_fetching(FBW_SRV_FB4);
}
Test(link_faults, reset_in_pipeline_fb3, .timeout = 40)
{
    reset_in_pipeline(FBW_SRV_FB3);
}
Test(link_faults, reset_in_pipeline_fb4, .timeout = 40)
{
    reset_in_pipeline(FBW_SRV_FB4);
}
Test(link_faults, reset_after_commit_fb3, .timeout = 40)
{
    reset_after_commit(FBW_SRV_FB3);
}
Test(link_faults, reset_after_commit_fb4, .timeout = 40)
{
    reset_after_commit(FBW_SRV_FB4);
}
Test(link_faults, stall_commit_reply_fb3, .timeout = 40)
{
    stall_commit_reply(FBW_SRV_FB3);
}
Test(link_faults, stall_commit_reply_fb4, .timeout = 40)
{
    stall_commit_reply(FBW_SRV_FB4);
}
Test(link_faults, slices_fb3, .timeout = 60)
{
    slices(FBW_SRV_FB3);
}
Test(link_faults, slices_fb4, .timeout = 60)
{
    slices(FBW_SRV_FB4);
}
Test(link_faults, slow_link_fb3, .timeout = 60)
{
    slow_link(FBW_SRV_FB3);
}
Test(link_faults, slow_link_fb4, .timeout = 60)
{
    slow_link(FBW_SRV_FB4);
}
