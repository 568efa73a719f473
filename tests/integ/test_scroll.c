/* SPDX-License-Identifier: MIT */
/* test_scroll.c - scrollable cursors (fbw_stmt_set_scrollable, fbw_stmt_fetch_scroll,
 * fbw_stmt_count_cursor; docs/library.md "Scrollable cursors") on real servers. A table of NROWS
 * rows (id i, text 'r<7i>'), read ordered by id through a scrollable cursor: every move (next,
 * prior, first, last, absolute and relative both ways, past either end and back) gives the row a
 * model of the cursor's position predicts, or none past the ends; forward batches mix in (the
 * position is the last row the server sent); the record count is NROWS and does not move the
 * cursor. This runs where the fb4 slot speaks protocol 18 (the @fb5 twin); on Firebird 3 and 4 every
 * scroll call is refused before anything is sent, with an error naming the protocol, and the
 * cursor goes on forward. Under tcpdump, fbwire-pcap dump shows each scroll fetch with its move and
 * position, its one-row answer and the op_info_cursor; on FB4 the capture holds none of them. */
#include <criterion/criterion.h>

#include "capture.h"
#include "run_tool.h"
#include "sqlt.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NROWS 37

typedef struct scroll {
    fbw_sqlt q;
    char tab[40];
    fbw_stmt *st;
    int pos; /* the model: 0 before the first row, NROWS + 1 after the last */
    int moves;
} scroll;

static void make_table(scroll *t, fbw_server_id id)
{
    char sql[512];
    fbw_sqlt_open(&t->q, id, NULL);
    fbw_sqlt_name(&t->q, "T_SCROLL", t->tab, sizeof t->tab);
    snprintf(sql, sizeof sql, "create table %s (id integer not null, txt varchar(20))", t->tab);
    fbw_sqlt_ddl_ok(&t->q, sql);
    snprintf(sql, sizeof sql,
             "execute block as declare i integer = %d; begin while (i >= 1) do begin "
             "insert into %s (id, txt) values (:i, 'r' || (:i * 7)); i = i - 1; end end",
             NROWS, t->tab);
    fbw_sqlt_exec_ok(&t->q, t->q.tx, sql, NULL);
    fbw_sqlt_commit_ok(&t->q, t->q.tx);
    fbw_sqlt_tx_start_ok(&t->q, &t->q.tx, NULL);
    snprintf(sql, sizeof sql, "select id, txt from %s order by id", t->tab);
    t->st = fbw_sqlt_prepare_ok(&t->q, t->q.tx, sql);
}

static void drop_table(scroll *t)
{
    char sql[128];
    fbw_stmt_free(t->st);
    fbw_sqlt_commit_ok(&t->q, t->q.tx);
    snprintf(sql, sizeof sql, "drop table %s", t->tab);
    fbw_sqlt_ddl_ok(&t->q, sql);
    fbw_sqlt_close(&t->q);
}

/* Buffered row i is the table's row at position pos: "pos|r<7 pos>". */
static void expect_row(const scroll *t, size_t i, int pos, const char *what)
{
    char want[40];
    snprintf(want, sizeof want, "%d|r%d\n", pos, pos * 7);
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_sqlt_row_text(t->st, i, NULL, &b);
    cr_expect_str_eq(fbw_sqlt_str(&b), want, "%s", what);
    fbw_buf_free(&b);
}

static int clamp(long p) { return p < 0 ? 0 : p > NROWS ? NROWS + 1 : (int)p; }

/* Where Firebird's cursor goes (DsqlCursor: BOF and EOF are positions 0 and NROWS + 1). */
static int model(int pos, int op, int32_t n)
{
    switch (op) {
    case FBW_FETCH_NEXT: return clamp(pos + 1L);
    case FBW_FETCH_PRIOR: return clamp(pos - 1L);
    case FBW_FETCH_FIRST: return 1;
    case FBW_FETCH_LAST: return NROWS;
    case FBW_FETCH_ABSOLUTE: return n >= 0 ? clamp(n) : clamp(NROWS + 1L + n);
    default: return clamp((long)pos + n);
    }
}

static void move(scroll *t, int op, int32_t n)
{
    static const char *const names[] = {"next", "prior", "first", "last", "absolute", "relative"};
    char what[64];
    snprintf(what, sizeof what, "%s(%ld) from %d", names[op], (long)n, t->pos);
    int rc = fbw_client_fetch_scroll(t->q.cl, t->st, op, n);
    cr_assert_eq(rc, FBW_OK, "%s: %s", what, fbw_client_call_error(t->q.cl, rc, t->st, NULL)->msg);
    cr_assert_eq(fbw_stmt_error(t->st)->code, FBW_OK, "%s: %s", what, fbw_stmt_error(t->st)->msg);
    t->pos = model(t->pos, op, n);
    t->moves++;
    if (t->pos >= 1 && t->pos <= NROWS) {
        cr_assert_eq(fbw_stmt_row_count(t->st), 1, "%s: a row", what);
        cr_expect_eq(fbw_stmt_eof(t->st), 0, "%s", what);
        expect_row(t, 0, t->pos, what);
    } else {
        cr_expect_eq(fbw_stmt_row_count(t->st), 0, "%s: past the end, no row", what);
        cr_expect(fbw_stmt_eof(t->st), "%s: eof", what);
    }
}

/* A forward batch of up to `size` rows from the position: the rows after it. (Not one that ends
 * exactly on the last row: Firebird 5's server then reads ahead to the end without counting it, and
 * PRIOR gives the last row.) */
static void batch(scroll *t, uint32_t size)
{
    fbw_stmt_set_fetch_size(t->st, size);
    fbw_stmt_clear_rows(t->st);
    cr_assert_eq(fbw_client_fetch(t->q.cl, t->st), FBW_OK);
    int from = t->pos + 1, n = NROWS - t->pos < (int)size ? NROWS - t->pos : (int)size;
    cr_assert_eq(fbw_stmt_row_count(t->st), (size_t)n, "batch of %u after %d", size, t->pos);
    for (int i = 0; i < n; i++)
        expect_row(t, (size_t)i, from + i, "forward batch");
    /* The last row sent (the server's read-ahead is its own business), or after the last when
     * the batch found the end. */
    t->pos = n < (int)size ? NROWS + 1 : t->pos + n;
}

static void every_move(scroll *t)
{
    cr_assert_eq(fbw_stmt_set_scrollable(t->st, 1), FBW_OK, "%s", fbw_stmt_error(t->st)->msg);
    /* the execute's first fetch: a forward batch of 10 in the same round trip */
    fbw_stmt_set_fetch_size(t->st, 10);
    cr_assert_eq(fbw_client_execute(t->q.cl, t->st, t->q.tx, NULL, 0), FBW_OK);
    cr_assert_eq(fbw_stmt_row_count(t->st), 10);
    for (int i = 0; i < 10; i++)
        expect_row(t, (size_t)i, i + 1, "first batch");
    t->pos = 10;
    move(t, FBW_FETCH_PRIOR, 0);     /* 9: behind the server's read-ahead */
    move(t, FBW_FETCH_NEXT, 0);      /* 10 */
    move(t, FBW_FETCH_NEXT, 0);      /* 11 */
    move(t, FBW_FETCH_FIRST, 0);     /* 1 */
    move(t, FBW_FETCH_PRIOR, 0);     /* before the first: none */
    move(t, FBW_FETCH_PRIOR, 0);     /* still none */
    move(t, FBW_FETCH_NEXT, 0);      /* 1 again */
    move(t, FBW_FETCH_LAST, 0);      /* NROWS */
    move(t, FBW_FETCH_NEXT, 0);      /* after the last: none */
    move(t, FBW_FETCH_PRIOR, 0);     /* NROWS */
    move(t, FBW_FETCH_ABSOLUTE, 20); /* 20 */
    batch(t, 5);                     /* 21..25 */
    move(t, FBW_FETCH_PRIOR, 0);     /* 24 */
    move(t, FBW_FETCH_RELATIVE, -10);
    move(t, FBW_FETCH_RELATIVE, 7);
    move(t, FBW_FETCH_RELATIVE, 0); /* the same row again */
    move(t, FBW_FETCH_ABSOLUTE, -1);
    move(t, FBW_FETCH_ABSOLUTE, -NROWS);
    move(t, FBW_FETCH_ABSOLUTE, -NROWS - 1); /* before the first */
    move(t, FBW_FETCH_RELATIVE, 3);          /* from before the first: 3 */
    move(t, FBW_FETCH_ABSOLUTE, NROWS + 5);  /* after the last */
    move(t, FBW_FETCH_RELATIVE, -2);         /* from after the last: NROWS - 1 */
    move(t, FBW_FETCH_RELATIVE, 100);        /* after the last */
    move(t, FBW_FETCH_RELATIVE, -100);       /* before the first */
    move(t, FBW_FETCH_ABSOLUTE, 0);          /* before the first */
    move(t, FBW_FETCH_NEXT, 0);              /* 1 */
    batch(t, 1000);                          /* 2..NROWS, then the end */
    cr_expect(fbw_stmt_eof(t->st), "the batch read to the end");
    move(t, FBW_FETCH_PRIOR, 0);             /* NROWS: the batch ended after the last row */
    move(t, FBW_FETCH_ABSOLUTE, 17);

    int64_t count = -2;
    int rc = fbw_client_count_cursor(t->q.cl, t->st, &count);
    cr_assert_eq(rc, FBW_OK, "%s", fbw_client_call_error(t->q.cl, rc, t->st, NULL)->msg);
    cr_assert_eq(count, NROWS, "record count: %s", fbw_stmt_error(t->st)->msg);
    cr_expect_eq(fbw_stmt_cursor_count(t->st), NROWS);
    move(t, FBW_FETCH_NEXT, 0); /* 18: counting did not move the cursor */
    move(t, FBW_FETCH_RELATIVE, -2);
    printf("%s: %d scroll moves and the record count (%lld) as the model says\n",
           fbw_server_name(t->q.id), t->moves, (long long)count);
}

/* Below protocol 18 every scroll call is refused with the protocol named; nothing is queued and
 * the same cursor reads on forward. */
static void refused(scroll *t, int protocol)
{
    cr_assert_eq(fbw_conn_get_info(t->q.c)->protocol, protocol);
    cr_assert_eq(fbw_stmt_set_scrollable(t->st, 1), FBW_E_UNSUPPORTED);
    char want[128];
    snprintf(want, sizeof want, "needs protocol 18 (Firebird 5 or later); this connection speaks "
                                "protocol %d", protocol);
    cr_expect(strstr(fbw_stmt_error(t->st)->msg, want), "%s", fbw_stmt_error(t->st)->msg);
    fbw_stmt_set_fetch_size(t->st, 5);
    cr_assert_eq(fbw_client_execute(t->q.cl, t->st, t->q.tx, NULL, 0), FBW_OK);
    cr_assert_eq(fbw_stmt_row_count(t->st), 5);
    static const int ops[] = {FBW_FETCH_NEXT,  FBW_FETCH_PRIOR,    FBW_FETCH_FIRST,
                              FBW_FETCH_LAST,  FBW_FETCH_ABSOLUTE, FBW_FETCH_RELATIVE};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        cr_assert_eq(fbw_client_fetch_scroll(t->q.cl, t->st, ops[i], 2), FBW_E_UNSUPPORTED);
        cr_expect(strstr(fbw_stmt_error(t->st)->msg, "needs protocol 18"), "%s",
                  fbw_stmt_error(t->st)->msg);
        cr_expect_eq(fbw_conn_outstanding(t->q.c), 0, "nothing queued");
    }
    int64_t count = 0;
    cr_assert_eq(fbw_client_count_cursor(t->q.cl, t->st, &count), FBW_E_UNSUPPORTED);
    cr_expect_eq(count, -1);
    cr_expect_eq(fbw_conn_outstanding(t->q.c), 0, "nothing queued");
    t->pos = 5;
    batch(t, 10); /* 6..15: the cursor is where it was */
    printf("%s: protocol %d, every scroll call refused before sending: %s\n",
           fbw_server_name(t->q.id), protocol, fbw_stmt_error(t->st)->msg);
}

/* On protocol 18 a forward-only cursor refuses scroll moves too, before sending. */
static void forward_only_refused(scroll *t)
{
    cr_assert_eq(fbw_stmt_set_scrollable(t->st, 0), FBW_OK);
    cr_assert_eq(fbw_client_execute(t->q.cl, t->st, t->q.tx, NULL, 0), FBW_OK);
    cr_assert_eq(fbw_client_fetch_scroll(t->q.cl, t->st, FBW_FETCH_FIRST, 0), FBW_E_USAGE);
    cr_expect(strstr(fbw_stmt_error(t->st)->msg, "forward-only"), "%s", fbw_stmt_error(t->st)->msg);
    cr_expect_eq(fbw_conn_outstanding(t->q.c), 0);
}

Test(scroll, fb4_slot, .timeout = 120)
{
    scroll t;
    memset(&t, 0, sizeof t);
    make_table(&t, FBW_SRV_FB4);
    int pmax = fbw_servers_protocol_max(&t.q.srv, FBW_SRV_FB4);
    if (pmax >= FBW_PROTOCOL_FETCH_SCROLL) {
        every_move(&t);
        forward_only_refused(&t);
    } else {
        refused(&t, pmax);
    }
    drop_table(&t);
}

Test(scroll, refused_on_fb3, .timeout = 60)
{
    scroll t;
    memset(&t, 0, sizeof t);
    make_table(&t, FBW_SRV_FB3);
    refused(&t, fbw_servers_protocol_max(&t.q.srv, FBW_SRV_FB3));
    drop_table(&t);
}

/* The same session under tcpdump (root), read back with fbwire-pcap dump: on protocol 18 every
 * move is an op_fetch_scroll line naming it, answered with one row; on FB4 the refused calls left
 * no trace on the wire. */
Test(scroll, fbwire_pcap_dump_shows_the_moves, .timeout = 120)
{
    if (geteuid() != 0)
        cr_skip_test("tcpdump on lo needs root");
    scroll t;
    memset(&t, 0, sizeof t);
    fbw_servers_require(&t.q.srv);
    const fbw_server *v = &t.q.srv.srv[FBW_SRV_FB4];
    char dir[256], file[400], filter[128], errlog[400], port[16];
    cr_assert_eq(fbw_capture_dir("scroll", dir, sizeof dir), 0);
    snprintf(file, sizeof file, "%s/scroll.pcap", dir);
    snprintf(errlog, sizeof errlog, "%s/tcpdump.err", dir);
    /* 127.0.0.2 keeps other tests' traffic out of the capture */
    snprintf(filter, sizeof filter, "host 127.0.0.2 and tcp port %d", v->port);
    snprintf(port, sizeof port, "%d", v->port);
    pid_t td = fbw_tcpdump_start(file, filter, errlog);
    cr_assert_neq(td, -1, "cannot start tcpdump");

    fbw_client_opts o;
    fbw_servers_client_opts(&t.q.srv, &o);
    o.conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED; /* the dump reads the packets */
    char dsn[1400];
    snprintf(dsn, sizeof dsn, "127.0.0.2/%d:%s", v->port, v->db);
    fbw_err err;
    cr_assert_eq(fbw_client_connect(dsn, &o, &t.q.cl, &err), FBW_OK, "%s: %s", dsn, err.msg);
    t.q.c = fbw_client_conn(t.q.cl);
    t.q.id = FBW_SRV_FB4;
    fbw_sqlt_tx_start_ok(&t.q, &t.q.tx, NULL);
    t.st = fbw_sqlt_prepare_ok(&t.q, t.q.tx, "select rdb$relation_id from rdb$relations "
                                              "order by rdb$relation_id");
    int scrolls = fbw_servers_protocol_max(&t.q.srv, FBW_SRV_FB4) >= FBW_PROTOCOL_FETCH_SCROLL;
    int64_t count = -1;
    if (scrolls) {
        cr_assert_eq(fbw_stmt_set_scrollable(t.st, 1), FBW_OK);
        cr_assert_eq(fbw_client_execute(t.q.cl, t.st, t.q.tx, NULL, FBW_EXEC_NO_FETCH), FBW_OK);
        cr_assert_eq(fbw_client_fetch_scroll(t.q.cl, t.st, FBW_FETCH_LAST, 0), FBW_OK);
        cr_assert_eq(fbw_client_fetch_scroll(t.q.cl, t.st, FBW_FETCH_ABSOLUTE, -3), FBW_OK);
        cr_assert_eq(fbw_client_fetch_scroll(t.q.cl, t.st, FBW_FETCH_RELATIVE, 2), FBW_OK);
        cr_assert_eq(fbw_client_fetch_scroll(t.q.cl, t.st, FBW_FETCH_PRIOR, 0), FBW_OK);
        cr_assert_eq(fbw_client_count_cursor(t.q.cl, t.st, &count), FBW_OK);
        cr_assert_gt(count, 3);
    } else {
        cr_assert_eq(fbw_client_execute(t.q.cl, t.st, t.q.tx, NULL, 0), FBW_OK);
        cr_assert_eq(fbw_stmt_set_scrollable(t.st, 1), FBW_E_UNSUPPORTED);
        cr_assert_eq(fbw_client_fetch_scroll(t.q.cl, t.st, FBW_FETCH_LAST, 0), FBW_E_UNSUPPORTED);
        cr_assert_eq(fbw_client_count_cursor(t.q.cl, t.st, &count), FBW_E_UNSUPPORTED);
    }
    fbw_stmt_free(t.st);
    fbw_sqlt_close(&t.q);
    fbw_tcpdump_stop(td);

    const char *argv[] = {"dump", "--port", port, file, NULL};
    fbw_run r = fbw_run_tool(FBWIRE_BINARY_DIR "/tools/fbwire-pcap", argv, NULL, 1 << 20);
    cr_assert_eq(r.status, 0, "dump failed: %s", r.err);
    static const char *const moves[] = {"fetch=\"last\" batch=1", "fetch=\"absolute\" pos=-3 batch=1",
                                        "fetch=\"relative\" pos=2 batch=1",
                                        "fetch=\"prior\" batch=1"};
    if (scrolls) {
        cr_expect(strstr(r.out, "op_execute") && strstr(r.out, "cursor=\"scrollable\""),
                  "the execute names its scrollable cursor:\n%s", r.out);
        const char *at = r.out;
        for (size_t i = 0; i < sizeof moves / sizeof moves[0] && at; i++) {
            at = strstr(at, "C>S op_fetch_scroll");
            const char *eol = at ? strchr(at, '\n') : NULL;
            cr_assert(at && eol, "move %zu missing:\n%s", i, r.out);
            cr_expect(strstr(at, moves[i]) && strstr(at, moves[i]) < eol, "move %zu: %.*s", i,
                      (int)(eol - at), at);
            const char *reply = strstr(eol, "S>C op_fetch_response");
            cr_assert(reply, "move %zu: no answer", i);
            const char *end = strstr(reply, "rows=");
            cr_expect(end && strncmp(end, "rows=1\n", 7) == 0, "move %zu: one row per move", i);
            at = eol;
        }
        cr_expect(strstr(r.out, "C>S op_info_cursor"), "the record count request:\n%s", r.out);
    } else {
        cr_expect(strstr(r.out, "op_execute"), "the capture holds the session:\n%s", r.out);
        cr_expect(!strstr(r.out, "op_fetch_scroll") && !strstr(r.out, "op_info_cursor") &&
                      !strstr(r.out, "scrollable"),
                  "a refused call sent nothing:\n%s", r.out);
    }
    printf("%s: fbwire-pcap dump: %s\n", fbw_server_name(FBW_SRV_FB4),
           scrolls ? "4 op_fetch_scroll with their moves, one row each, op_info_cursor"
                   : "no scroll packet after the refused calls");
    fbw_run_free(&r);
    unlink(file);
    unlink(errlog);
    rmdir(dir);
}
