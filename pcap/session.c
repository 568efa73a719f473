/* SPDX-License-Identifier: MIT */
/* session.c - the scripted fbwire session pcap/record.sh captures (fbwire-sql has no script mode
 * yet): create a table, insert 100 rows, select them, update half, drop the table. Prints the round
 * trips each step cost as the live client counted them, so the capture can be checked against it.
 *
 * usage: session DSN [--compress] [--protocol-max N] [--auth LIST] [--user U] [--crypt PLUGIN]
 *                    [--cleanup] [--blobs [--inline-blob-size N]]
 * --cleanup only drops the table a failed earlier run left behind (not part of any capture).
 * --blobs is the blob session instead: a first connection creates FBW_PCAP_BLOB and fills it (six
 * rows, blob N = "blob N: " and N * 300 bytes of "abcdefghij" repeated, row 6 NULL); a second one,
 * the one captured, starts a transaction, selects the six rows, reads their blobs as a batch
 * (blobset.h: inline ones need no request), commits, drops the table and detaches. With
 * --inline-blob-size N its executes ask for inline blobs of at most N bytes (default fbclient's
 * 65535; 0 asks for none, so every blob is read through the batch). tests/wire/test_captured.c
 * replays the captured replies of that second connection.
 * The password comes from $ISC_PASSWORD (never from the command line, never printed). Wire crypt is
 * disabled so the capture stays readable, unless --crypt requires that plugin: then the session's
 * key goes to the key log $FBWIRE_KEYLOGFILE names (wire/keylog.h), so fbwire-pcap --keylog can
 * read the capture. Built by record.sh against libfbwire_core.a. */
#include "fbwire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const create_sql = "CREATE TABLE FBW_PCAP (ID INTEGER NOT NULL PRIMARY KEY, "
                                      "NAME VARCHAR(20), AMOUNT NUMERIC(9,2))";
static const char *const insert_sql =
    "INSERT INTO FBW_PCAP (ID, NAME, AMOUNT) "
    "WITH RECURSIVE R (N) AS (SELECT 1 FROM RDB$DATABASE UNION ALL SELECT N + 1 FROM R WHERE N < "
    "100) "
    "SELECT N, CASE WHEN MOD(N, 10) = 0 THEN NULL ELSE 'row ' || N END, N * 1.5 FROM R";
static const char *const select_sql = "SELECT ID, NAME, AMOUNT FROM FBW_PCAP ORDER BY ID";
static const char *const update_sql = "UPDATE FBW_PCAP SET AMOUNT = AMOUNT + 1 WHERE ID <= 50";
static const char *const drop_sql = "DROP TABLE FBW_PCAP";
static const char *const blob_create_sql = "CREATE TABLE FBW_PCAP_BLOB (ID INTEGER NOT NULL "
                                           "PRIMARY KEY, B BLOB SUB_TYPE TEXT)";
static const char *const blob_insert_sql =
    "INSERT INTO FBW_PCAP_BLOB (ID, B) "
    "WITH RECURSIVE R (N) AS (SELECT 1 FROM RDB$DATABASE UNION ALL SELECT N + 1 FROM R WHERE N < 6) "
    "SELECT N, CASE WHEN N = 6 THEN NULL ELSE 'blob ' || N || ': ' || RPAD('', N * 300, "
    "'abcdefghij') END FROM R";
static const char *const blob_select_sql = "SELECT ID, B FROM FBW_PCAP_BLOB ORDER BY ID";
static const char *const blob_drop_sql = "DROP TABLE FBW_PCAP_BLOB";

typedef struct run {
    fbw_client *cl;
    fbw_conn *c;
    fbw_tx *tx;
    fbw_tx_opts to;
    fbw_stmt *s;
    const char *sql;
    fbw_exec_result res;
    uint64_t rt0;
} run;

static uint64_t trips(run *r)
{
    return fbw_conn_stats(r->c)->round_trips;
}

static void step(run *r, const char *what)
{
    uint64_t now = trips(r);
    printf("%-8s round_trips=%llu\n", what, (unsigned long long)(now - r->rt0));
    r->rt0 = now;
}

static int fail(run *r, const char *what, const fbw_err *e)
{
    fprintf(stderr, "session: %s failed: %s\n", what, e && e->msg[0] ? e->msg : "error");
    if (r->cl)
        fbw_client_abort(r->cl);
    return 1;
}

/* Execute immediate r->sql in r->tx and wait (its start, when queued, rides along). */
static int exec_immediate(run *r)
{
    int rc;
    do
        rc = fbw_client_complete(r->cl, fbw_exec_immediate(r->c, r->tx, r->sql, strlen(r->sql),
                                                           &r->res));
    while (rc == FBW_WAIT);
    return rc;
}

/* DDL in its own transaction: start, execute immediate, commit. */
static int ddl(run *r, const char *sql, const char *what)
{
    r->sql = sql;
    memset(&r->res, 0, sizeof r->res);
    if (fbw_tx_start(r->tx, &r->to) || exec_immediate(r) ||
        r->res.err.code)
        return fail(r, what, r->res.err.code ? &r->res.err : fbw_client_error(r->cl));
    if (fbw_client_commit(r->cl, r->tx) || fbw_tx_error(r->tx)->code)
        return fail(r, "commit", fbw_tx_error(r->tx)->code ? fbw_tx_error(r->tx)
                                                           : fbw_client_error(r->cl));
    step(r, what);
    return 0;
}

/* Prepare and execute one statement, fetching every row; prints rows and affected counts. */
static int dml(run *r, const char *sql, const char *what)
{
    fbw_err e;
    r->sql = sql;
    if (fbw_stmt_new(r->c, &r->s, &e))
        return fail(r, what, &e);
    int rc = fbw_client_prepare(r->cl, r->s, r->tx, r->sql, strlen(r->sql));
    if (rc == FBW_OK && !fbw_stmt_error(r->s)->code)
        rc = fbw_client_execute(r->cl, r->s, r->tx, NULL, FBW_EXEC_COUNT);
    size_t rows = fbw_stmt_row_count(r->s);
    while (rc == FBW_OK && !fbw_stmt_error(r->s)->code && !fbw_stmt_eof(r->s)) {
        fbw_stmt_clear_rows(r->s);
        rc = fbw_client_fetch(r->cl, r->s);
        rows += fbw_stmt_row_count(r->s);
    }
    if (rc || fbw_stmt_error(r->s)->code)
        return fail(r, what, rc ? fbw_client_error(r->cl) : fbw_stmt_error(r->s));
    printf("%-8s rows=%zu affected=%llu ", what, fbw_stmt_has_cursor(r->s) ? rows : 0,
           (unsigned long long)fbw_stmt_affected(r->s));
    fbw_stmt_free(r->s); /* drop is deferred: it rides along with the next request */
    r->s = NULL;
    step(r, "");
    return 0;
}

/* The rows session after its create: start, insert, select, update, commit, drop. */
static int run_rows(run *r)
{
    /* Wait for the start: fbw_stmt_prepare sends tr=0 while a transaction is still starting, and
     * the server refuses to prepare DML without one (seen in this very capture; reported). */
    if (fbw_client_complete(r->cl, fbw_tx_start(r->tx, &r->to)) || fbw_tx_error(r->tx)->code)
        return fail(r, "start", fbw_tx_error(r->tx)->code ? fbw_tx_error(r->tx)
                                                          : fbw_client_error(r->cl));
    step(r, "start");
    if (dml(r, insert_sql, "insert") || dml(r, select_sql, "select") ||
        dml(r, update_sql, "update"))
        return 1;
    if (fbw_client_commit(r->cl, r->tx) || fbw_tx_error(r->tx)->code)
        return fail(r, "commit", fbw_tx_error(r->tx)->code ? fbw_tx_error(r->tx)
                                                          : fbw_client_error(r->cl));
    step(r, "commit");
    if (ddl(r, drop_sql, "drop"))
        return 1;
    return 0;
}

/* The blob session's SELECT: every fetched batch's blobs read together (inline ones need no
 * request), each printed as its length and whether it came inline. */
static int blob_select(run *r)
{
    fbw_err e;
    fbw_blobset *bs = NULL;
    r->sql = blob_select_sql;
    if (fbw_stmt_new(r->c, &r->s, &e) || fbw_blobset_new(r->c, 0, &bs, &e))
        return fail(r, "select", &e);
    int rc = fbw_client_prepare(r->cl, r->s, r->tx, r->sql, strlen(r->sql));
    if (rc == FBW_OK && !fbw_stmt_error(r->s)->code)
        rc = fbw_client_execute(r->cl, r->s, r->tx, NULL, 0);
    step(r, "select");
    while (rc == FBW_OK && !fbw_stmt_error(r->s)->code) {
        size_t added = 0, n = fbw_stmt_row_count(r->s);
        if (fbw_blobset_add_rows(bs, r->s, r->tx, 0, &added, &e))
            return fail(r, "blobs", &e);
        if (added && (rc = fbw_client_read_blobs(r->cl, bs)) != FBW_OK)
            break;
        if (fbw_blobset_error(bs)->code)
            return fail(r, "blobs", fbw_blobset_error(bs));
        for (size_t i = 0; i < n; i++) {
            size_t len = 0;
            if (fbw_blobset_cell(bs, i, 1, &len))
                printf("row %zu   blob bytes=%zu\n", i + 1, len);
            else
                printf("row %zu   blob NULL\n", i + 1);
        }
        printf("blobs    count=%zu inline=%zu ", added, fbw_blobset_inline_count(bs));
        step(r, "");
        fbw_blobset_reset(bs); /* the closes ride along with the next request */
        if (fbw_stmt_eof(r->s))
            break;
        fbw_stmt_clear_rows(r->s);
        rc = fbw_client_fetch(r->cl, r->s);
        step(r, "fetch");
    }
    if (rc || fbw_stmt_error(r->s)->code)
        return fail(r, "select", rc ? fbw_client_error(r->cl) : fbw_stmt_error(r->s));
    fbw_blobset_free(bs);
    fbw_stmt_free(r->s);
    r->s = NULL;
    return 0;
}

/* --blobs: the table is made and filled by a first connection (not the captured one). */
static int blob_setup(const char *dsn, const fbw_client_opts *o)
{
    run r;
    memset(&r, 0, sizeof r);
    fbw_err e;
    if (fbw_client_connect(dsn, o, &r.cl, &e))
        return fail(&r, "connect", &e);
    r.c = fbw_client_conn(r.cl);
    if (fbw_tx_new(r.c, &r.tx, &e))
        return fail(&r, "transaction", &e);
    fbw_tx_opts_init(&r.to);
    printf("setup connection (not captured):\n");
    if (ddl(&r, blob_create_sql, "create") || ddl(&r, blob_insert_sql, "insert"))
        return 1;
    fbw_tx_free(r.tx);
    fbw_client_close(r.cl);
    return 0;
}

static int blob_session(run *r)
{
    if (fbw_client_complete(r->cl, fbw_tx_start(r->tx, &r->to)) || fbw_tx_error(r->tx)->code)
        return fail(r, "start", fbw_tx_error(r->tx)->code ? fbw_tx_error(r->tx)
                                                           : fbw_client_error(r->cl));
    step(r, "start");
    if (blob_select(r))
        return 1;
    if (fbw_client_commit(r->cl, r->tx) || fbw_tx_error(r->tx)->code)
        return fail(r, "commit", fbw_tx_error(r->tx)->code ? fbw_tx_error(r->tx)
                                                           : fbw_client_error(r->cl));
    step(r, "commit");
    return ddl(r, blob_drop_sql, "drop");
}

int main(int argc, char **argv)
{
    fbw_client_opts o;
    fbw_client_opts_init(&o);
    o.conn.user = "SYSDBA";
    o.conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED;
    const char *dsn = NULL;
    int cleanup = 0, blobs = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--compress"))
            o.conn.compress = 1;
        else if (!strcmp(argv[i], "--protocol-max") && i + 1 < argc)
            o.conn.protocol_max = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--auth") && i + 1 < argc)
            o.conn.auth_list = argv[++i];
        else if (!strcmp(argv[i], "--user") && i + 1 < argc)
            o.conn.user = argv[++i];
        else if (!strcmp(argv[i], "--crypt") && i + 1 < argc) {
            o.conn.wire_crypt = FBW_WIRE_CRYPT_REQUIRED;
            o.conn.crypt_list = argv[++i];
        } else if (!strcmp(argv[i], "--cleanup"))
            cleanup = 1;
        else if (!strcmp(argv[i], "--blobs"))
            blobs = 1;
        else if (!strcmp(argv[i], "--inline-blob-size") && i + 1 < argc)
            o.conn.inline_blob_size = atoi(argv[++i]);
        else if (!dsn && argv[i][0] != '-')
            dsn = argv[i];
        else {
            fprintf(stderr,
                    "usage: session DSN [--compress] [--protocol-max N] [--auth LIST] [--user U] "
                    "[--crypt PLUGIN] [--cleanup] [--blobs [--inline-blob-size N]]\n");
            return 2;
        }
    }
    if (!dsn)
        return 2;
    if (o.conn.protocol_min > o.conn.protocol_max)
        o.conn.protocol_min = o.conn.protocol_max;
    if (blobs && !cleanup && blob_setup(dsn, &o))
        return 1;
    run r;
    memset(&r, 0, sizeof r);
    fbw_err e;
    if (fbw_client_connect(dsn, &o, &r.cl, &e))
        return fail(&r, "connect", &e);
    r.c = fbw_client_conn(r.cl);
    printf("protocol=%d compression=%s\n", fbw_conn_get_info(r.c)->protocol,
           fbw_conn_get_info(r.c)->compressed ? "zlib" : "none");
    step(&r, "connect");
    if (fbw_tx_new(r.c, &r.tx, &e))
        return fail(&r, "transaction", &e);
    fbw_tx_opts_init(&r.to);
    if (cleanup) {
        r.sql = blobs ? blob_drop_sql : drop_sql;
        memset(&r.res, 0, sizeof r.res);
        if (fbw_tx_start(r.tx, &r.to) == FBW_OK && exec_immediate(&r) == FBW_OK)
            fbw_client_commit(r.cl, r.tx);
        printf("cleanup: %s\n", r.res.err.code ? r.res.err.msg : "table dropped");
        fbw_tx_free(r.tx);
        fbw_client_close(r.cl);
        return 0;
    }
    if (blobs) {
        if (blob_session(&r))
            return 1;
    } else if (ddl(&r, create_sql, "create") || run_rows(&r)) {
        return 1;
    }
    if (fbw_conn_detach(r.c) || fbw_client_wait(r.cl))
        return fail(&r, "detach", fbw_client_error(r.cl));
    step(&r, "detach");
    const fbw_stats *st = fbw_conn_stats(r.c);
    printf("total    round_trips=%llu packets_sent=%llu packets_received=%llu\n",
           (unsigned long long)st->round_trips, (unsigned long long)st->packets_sent,
           (unsigned long long)st->packets_received);
    fbw_tx_free(r.tx);
    fbw_client_close(r.cl);
    return 0;
}
