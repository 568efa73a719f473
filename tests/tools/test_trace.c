/* SPDX-License-Identifier: MIT */
/* Unit tests of the trace parser (tools/fbwire-pcap/trace.c) and its workload
 * (trace_workload.c) on real trace output: fbtracemgr sessions on FB3 and FB4 while isql ran
 * DDL, DML, a SELECT, a commit and a rollback (tests/tools/trace/, database paths replaced by
 * /srv/fb/). Also: the same text fed in pieces, cut short, with garbage or an unknown event. */
#include <criterion/criterion.h>
#include "trace.h"
#include "trace_record.h"
#include "trace_workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *load(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", TRACE_DIR, name);
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    cr_assert(b && fread(b, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    b[n] = 0;
    *len = (size_t)n;
    return b;
}

/* Header lines counted the plain way: a line starting with a year and " (" at column 24. */
static size_t headers(const char *t)
{
    size_t n = 0;
    for (const char *l = t; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        n += strncmp(l, "20", 2) == 0 && strlen(l) > 26 && l[24] == ' ' && l[25] == '(';
    return n;
}

static const pcaptool_trace_event *find_sql(const pcaptool_trace *t, int kind, const char *sql)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].kind == kind && t->ev[i].sql && strstr(t->ev[i].sql, sql))
            return &t->ev[i];
    return NULL;
}

Test(trace, fb3_isql_session)
{
    size_t len, used;
    char *text = load("fb3-isql.trace", &len);
    pcaptool_trace t;
    pcaptool_trace_init(&t);
    cr_assert_eq(pcaptool_trace_feed(&t, text, len, 1, &used), FBW_OK, "%s", t.err);
    cr_assert_eq(used, len);
    cr_assert_eq(t.n, headers(text));
    /* the security database's login query, with its parameter */
    const pcaptool_trace_event *e = find_sql(&t, PCAPTOOL_TRACE_EXEC_FINISH, "PLG$SRP");
    cr_assert(e);
    cr_assert_str_eq(e->remote, "<internal>");
    cr_assert_eq(e->nparams, 1);
    cr_assert_str_eq(e->params[0].type, "varchar(93)");
    cr_assert_str_eq(e->params[0].text, "SYSDBA");
    cr_assert_eq(e->records, 0);
    cr_assert_eq(e->ms, 0);
    cr_assert_eq(e->stmt, 25);
    /* the SELECT of isql's attachment: its statement, transaction and rows */
    e = find_sql(&t, PCAPTOOL_TRACE_EXEC_FINISH, "select * from tr27 where id = 1");
    cr_assert(e);
    cr_assert_str_eq(e->db, "/srv/fb/fbwire_test.fdb");
    cr_assert_str_eq(e->user, "SYSDBA:NONE");
    cr_assert(e->process && strstr(e->process, "isql"));
    cr_assert_gt(e->att, 0);
    cr_assert_gt(e->tra, 0);
    cr_assert_str_eq(e->tra_opts, "CONCURRENCY | WAIT | READ_WRITE");
    cr_assert_eq(e->records, 1);
    cr_assert_str_eq(e->sql, "select * from tr27 where id = 1");
    /* DDL has no statement id on FB3 */
    e = find_sql(&t, PCAPTOOL_TRACE_EXEC_START, "create table tr27");
    cr_assert(e);
    cr_assert_eq(e->stmt, 0);
    cr_assert_eq(e->ts_ns % 100000u, 0); /* 0.1 ms resolution */
    cr_assert_gt(e->ts_ns, 1600000000ull * 1000000000u);
    pcaptool_trace_free(&t);
    free(text);
}

/* Fed a few bytes at a time (a live session), the same events; nothing taken before it is whole. */
Test(trace, fed_in_pieces)
{
    size_t len, used;
    char *text = load("fb4-isql.trace", &len);
    pcaptool_trace whole, parts;
    pcaptool_trace_init(&whole);
    pcaptool_trace_init(&parts);
    cr_assert_eq(pcaptool_trace_feed(&whole, text, len, 1, &used), FBW_OK, "%s", whole.err);
    size_t at = 0, end = 0;
    while (end < len) {
        end = end + 97 < len ? end + 97 : len;
        cr_assert_eq(pcaptool_trace_feed(&parts, text + at, end - at, end == len, &used), FBW_OK,
                     "%s", parts.err);
        at += used;
    }
    cr_assert_eq(at, len);
    cr_assert_eq(parts.n, whole.n);
    cr_assert_gt(whole.n, 50);
    for (size_t i = 0; i < whole.n; i++) {
        cr_assert_eq(parts.ev[i].kind, whole.ev[i].kind);
        cr_assert_eq(parts.ev[i].ts_ns, whole.ev[i].ts_ns);
        cr_assert_eq(parts.ev[i].line, whole.ev[i].line);
        cr_assert_eq(parts.ev[i].nparams, whole.ev[i].nparams);
        cr_assert_eq(!parts.ev[i].sql, !whole.ev[i].sql);
        if (whole.ev[i].sql)
            cr_assert_str_eq(parts.ev[i].sql, whole.ev[i].sql);
    }
    pcaptool_trace_free(&whole);
    pcaptool_trace_free(&parts);
    free(text);
}

/* Cut inside a record: an error naming the record's line; the records before it kept. */
Test(trace, truncated_keeps_what_was_read)
{
    size_t len, used;
    char *text = load("fb3-isql.trace", &len);
    const char *cut = strstr(text, "update tr27 set k");
    cr_assert(cut);
    pcaptool_trace t;
    pcaptool_trace_init(&t);
    cr_assert_eq(pcaptool_trace_feed(&t, text, (size_t)(cut - text) + 8, 1, &used), FBW_E_PROTO);
    cr_assert(strstr(t.err, "the input ends inside this event record"), "%s", t.err);
    cr_assert_gt(t.n, 10);
    cr_assert(find_sql(&t, PCAPTOOL_TRACE_EXEC_FINISH, "select * from tr27"));
    cr_assert_lt(used, (size_t)(cut - text)); /* the cut record is not taken */
    pcaptool_trace_free(&t);
    free(text);
}

static void expect_error(const char *text, const char *what, size_t kept)
{
    pcaptool_trace t;
    pcaptool_trace_init(&t);
    size_t used;
    cr_assert_eq(pcaptool_trace_feed(&t, text, strlen(text), 1, &used), FBW_E_PROTO);
    cr_assert(strstr(t.err, what), "\"%s\" lacks \"%s\"", t.err, what);
    cr_assert_eq(t.n, kept);
    pcaptool_trace_free(&t);
}

#define HDR(name) "2026-12-06T02:11:47.2980 (3208:0x7f4034a03940) " name "\n"
#define ATT "\t/srv/fb/x.fdb (ATT_7, SYSDBA:NONE, NONE, TCPv4:127.0.0.1/4000)\n"

Test(trace, garbage_unknown_event_and_bad_lines)
{
    expect_error("hello\n", "trace line 1: not a trace event header", 0);
    expect_error(HDR("ATTACH_DATABASE") ATT "\n" HDR("MAKE_COFFEE") ATT "\n",
                 "trace line 4: an event Firebird's trace does not write: MAKE_COFFEE", 1);
    expect_error(HDR("START_TRANSACTION") ATT "\t\t(TRA_x, WAIT)\n\n",
                 "a transaction line without TRA_n", 0);
    expect_error(HDR("EXECUTE_STATEMENT_START") ATT "\t\t(TRA_9, WAIT)\n\nStatement 5:\n"
                 "-------------------------------------------------------------------------------\n"
                 "select 1 from rdb$database where 1 = ?\n\nparam0 = integer, 5\n\n",
                 "a parameter value neither quoted nor <NULL>", 0);
    expect_error(HDR("COMMIT_TRANSACTION") ATT "\t\t(TRA_9, WAIT)\n\t\t(TRA_9, WAIT)\n\n",
                 "a second transaction line in one record", 0);
    expect_error("2026-13-06T02:11:47.2980 (3208:0x7f4034a03940) ATTACH_DATABASE\n\n",
                 "not a trace event header", 0);
}

/* A parameter value on several lines, a NULL, a quote inside, an error event. */
Test(trace, params_nulls_and_errors)
{
    const char *text =
        "Trace session ID 3 started\n"
        HDR("EXECUTE_STATEMENT_START") ATT "\t/usr/bin/app:1\n\t\t(TRA_9, READ_COMMITTED | "
        "READ_CONSISTENCY | WAIT | READ_WRITE)\n\nStatement 5:\n"
        "-------------------------------------------------------------------------------\n"
        "insert into t values (?, ?, ?)\n\nparam0 = varchar(20), \"two\nlines\"\n"
        "param1 = integer, <NULL>\nparam2 = char(4), \"a\"b\"\n\n"
        HDR("ERROR AT JStatement::execute") ATT "\t/usr/bin/app:1\n335544665 : violation\n\n";
    pcaptool_trace t;
    pcaptool_trace_init(&t);
    size_t used;
    cr_assert_eq(pcaptool_trace_feed(&t, text, strlen(text), 1, &used), FBW_OK, "%s", t.err);
    cr_assert_eq(t.n, 2);
    const pcaptool_trace_event *e = &t.ev[0];
    cr_assert_eq(e->nparams, 3);
    cr_assert_str_eq(e->params[0].text, "two\nlines");
    cr_assert(e->params[1].is_null && !e->params[1].text);
    cr_assert_str_eq(e->params[2].text, "a\"b");
    cr_assert_eq(t.ev[1].kind, PCAPTOOL_TRACE_OTHER);
    pcaptool_trace_free(&t);
}

static const char *kinds_of(const pcaptool_trace_conn *c, char *buf, size_t n)
{
    buf[0] = 0;
    for (size_t i = 0; i < c->n; i++) {
        size_t k = strlen(buf);
        snprintf(buf + k, n - k, "%s%s", i ? " " : "", pcaptool_step_name(c->steps[i].kind));
    }
    return buf;
}

/* isql's attachment as steps: internal attachments and the system transaction left out, the
 * SELECT fetched with its row count, DDL as execute immediate, the rollback kept. */
Test(trace, fb3_workload)
{
    size_t len, used;
    char *text = load("fb3-isql.trace", &len);
    pcaptool_trace t;
    pcaptool_trace_init(&t);
    cr_assert_eq(pcaptool_trace_feed(&t, text, len, 1, &used), FBW_OK, "%s", t.err);
    pcaptool_trace_workload w;
    cr_assert_eq(pcaptool_trace_workload_build(&t, "fbwire_test.fdb", &w), FBW_OK, "%s", w.err);
    cr_assert_eq(w.n, 1);
    cr_assert_gt(w.skipped.internal, 0);
    cr_assert_gt(w.skipped.system_tx, 0);
    const pcaptool_trace_conn *c = &w.c[0];
    cr_assert(c->attached && c->t_detach >= c->t_first);
    char k[4096];
    cr_assert_str_eq(kinds_of(c, k, sizeof k),
                     "start start immediate commit start commit commit start start prepare "
                     "execute drop prepare execute drop prepare execute drop commit commit start "
                     "start prepare execute fetch close drop prepare execute drop prepare execute "
                     "drop rollback commit start start immediate commit start commit commit");
    const pcaptool_step *sel = NULL;
    for (size_t i = 0; i < c->n; i++)
        if (c->steps[i].kind == PCAPTOOL_STEP_FETCH)
            sel = &c->steps[c->steps[i].owner - 1];
    cr_assert(sel && sel->kind == PCAPTOOL_STEP_EXECUTE);
    cr_assert_eq(sel->result.rows, 1);
    cr_assert(sel->result.unknown);
    cr_assert_geq(sel->t_end, sel->t_req);
    /* CONCURRENCY | WAIT | READ_WRITE */
    cr_assert_eq(c->steps[0].len, 4);
    cr_assert_eq(memcmp(c->steps[0].data, "\x03\x02\x09\x06", 4) == 0 ||
                     memcmp(c->steps[0].data, "\x03\x02\x06\x09", 4) == 0,
                 1);
    pcaptool_trace_workload_free(&w);
    cr_assert_eq(pcaptool_trace_workload_build(&t, "other.fdb", &w), FBW_OK);
    cr_assert_eq(w.n, 0);
    cr_assert_gt(w.skipped.other_db, 0);
    pcaptool_trace_workload_free(&w);
    pcaptool_trace_free(&t);
    free(text);
}

Test(trace, tpb_options)
{
    fbw_buf b;
    fbw_err e;
    fbw_buf_init(&b);
    fbw_err_clear(&e);
    cr_assert_eq(pcaptool_trace_tpb("READ_COMMITTED | READ_CONSISTENCY | NOWAIT | READ_ONLY", &b, &e),
                 FBW_OK);
    cr_assert(memchr(fbw_buf_head(&b), 22, fbw_buf_avail(&b))); /* isc_tpb_read_consistency */
    cr_assert(memchr(fbw_buf_head(&b), 7, fbw_buf_avail(&b)));  /* isc_tpb_nowait */
    fbw_buf_reset(&b);
    cr_assert_eq(pcaptool_trace_tpb("CONCURRENCY | SOMETHING_NEW", &b, &e), FBW_E_BADVALUE);
    cr_assert(strstr(e.msg, "SOMETHING_NEW"));
    fbw_buf_free(&b);
}

/* trace-record's configuration: the file name matched in any directory, every statement event
 * on with no time threshold; names its pattern would misread refused. */
Test(trace, record_config)
{
    char cfg[1200];
    cr_assert_eq(pcaptool_trace_config("/data/sales_2024.fdb", cfg, sizeof cfg), 0);
    cr_assert(strstr(cfg, "database = %[\\\\/]sales_2024.fdb\n"), "%s", cfg);
    const char *on[] = {"log_connections", "log_transactions", "log_statement_prepare",
                        "log_statement_free", "log_statement_start", "log_statement_finish"};
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        char want[80];
        snprintf(want, sizeof want, "\t%s = true\n", on[i]);
        cr_assert(strstr(cfg, want), "%s missing", on[i]);
    }
    cr_assert(strstr(cfg, "\ttime_threshold = 0\n"));
    cr_assert_eq(pcaptool_trace_config("sales.fdb", cfg, sizeof cfg), 0);
    cr_assert(strstr(cfg, "]sales.fdb\n"));
    cr_assert_eq(pcaptool_trace_config("/data/a%b.fdb", cfg, sizeof cfg), -1);
    cr_assert_eq(pcaptool_trace_config("/data/", cfg, sizeof cfg), -1);
    cr_assert_eq(pcaptool_trace_config("sales.fdb", cfg, 40), -1);
}
