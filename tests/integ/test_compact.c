/* SPDX-License-Identifier: MIT */
/* test_compact.c - compact row and parameter formats against real FB3 and FB4: the same rows read
 * through a compact and a described statement are identical value for value (CHAR padding of UTF8,
 * UNICODE_FSS, NONE and OCTETS columns, NULLs, multi-byte characters), in a cursor, in a singleton
 * (op_execute2: INSERT ... RETURNING) and after a compact batch insert; sysbench's table travels in
 * far fewer bytes; parameters sent compact store what described ones store (padded, unpadded,
 * trailing blanks); fbw_stmt_set_output lets the caller pick another format, which the server
 * converts to. The type corpus runs in both formats in test_types.c. */
#include <criterion/criterion.h>

#include "batch.h"
#include "sqlt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCOLS 7

/* The test table: a column per kind of CHAR, a VARCHAR and an INTEGER around them. */
static const char *const table_cols =
    "id integer not null primary key, c char(120) character set utf8, "
    "pad char(60) character set utf8, m char(5) character set utf8, "
    "f char(4) character set unicode_fss, n char(6) character set none, o char(4) character set octets, "
    "v varchar(10) character set utf8";

static const char *const insert_values[] = {
    /* id, c, pad, m, f, n, o, v */
    "(1, '83868641912-67406148760-3', '67847967377-48000963322', 'a\xc3\xa9\xe2\x82\xac', 'xy', "
    "'abc', x'0100', 'v')",
    "(2, '', '', '', '', '', x'00000000', '')",
    "(3, null, null, null, null, null, null, null)",
    "(4, 'trailing   ', ' lead', '\xf0\x9d\x84\x9e\xf0\x9d\x84\x9e\xf0\x9d\x84\x9e\xf0\x9d\x84\x9e"
    "\xf0\x9d\x84\x9e', 'abcd', 'full!!', x'DEADBEEF', 'ten chars!')",
};

typedef struct fixture {
    fbw_sqlt q;
    char tab[40];
} fixture;

static void make_table(fixture *x, fbw_server_id id)
{
    fbw_sqlt_open(&x->q, id, NULL);
    char sql[1024];
    fbw_sqlt_name(&x->q, "T_COMPACT", x->tab, sizeof x->tab);
    snprintf(sql, sizeof sql, "create table %s (%s)", x->tab, table_cols);
    fbw_sqlt_ddl_ok(&x->q, sql);
    for (size_t i = 0; i < sizeof insert_values / sizeof *insert_values; i++) {
        snprintf(sql, sizeof sql, "insert into %s values %s", x->tab, insert_values[i]);
        fbw_sqlt_exec_ok(&x->q, x->q.tx, sql, NULL);
    }
}

static void drop_table(fixture *x)
{
    char sql[128];
    fbw_sqlt_commit_ok(&x->q, x->q.tx);
    snprintf(sql, sizeof sql, "drop table %s", x->tab);
    fbw_sqlt_ddl_ok(&x->q, sql);
    fbw_sqlt_close(&x->q);
}

/* Prepare sql in the given row format. */
static fbw_stmt *prepare_as(fbw_sqlt *q, int format, const char *sql)
{
    fbw_stmt *s;
    fbw_err err;
    cr_assert_eq(fbw_stmt_new(q->c, &s, &err), FBW_OK);
    fbw_stmt_set_row_format(s, format);
    cr_assert_eq(fbw_stmt_prepare(s, q->tx, sql, strlen(sql)), FBW_OK);
    fbw_sqlt_wait_ok(q);
    cr_assert(fbw_stmt_prepared(s), "%s: prepare: %s", fbw_server_name(q->id), fbw_stmt_error(s)->msg);
    return s;
}

/* Two values are the same: NULL-ness, type, and the bytes of text (CHAR padding included). */
static void expect_same_value(const fbw_value *a, const fbw_value *b, const char *where)
{
    cr_expect_eq(a->is_null, b->is_null, "%s: NULL differs", where);
    cr_expect_eq(a->type, b->type, "%s: type %u vs %u", where, a->type, b->type);
    if (a->is_null || b->is_null)
        return;
    if (a->type == FBW_SQL_TEXT || a->type == FBW_SQL_VARYING)
        cr_expect(a->u.bytes.n == b->u.bytes.n && memcmp(a->u.bytes.p, b->u.bytes.p, a->u.bytes.n) == 0,
                  "%s: %zu bytes \"%.*s\" vs %zu bytes \"%.*s\"", where, a->u.bytes.n,
                  (int)a->u.bytes.n, (const char *)a->u.bytes.p, b->u.bytes.n, (int)b->u.bytes.n,
                  (const char *)b->u.bytes.p);
    else if (a->type == FBW_SQL_LONG || a->type == FBW_SQL_SHORT || a->type == FBW_SQL_INT64)
        cr_expect_eq(a->u.i64, b->u.i64, "%s: %lld vs %lld", where, (long long)a->u.i64,
                     (long long)b->u.i64);
}

/* Every buffered row of a and b is the same, value for value. */
static void expect_same_rows(const fbw_stmt *a, const fbw_stmt *b, size_t want_rows, const char *what)
{
    cr_assert_eq(fbw_stmt_row_count(a), want_rows, "%s: %zu rows", what, fbw_stmt_row_count(a));
    cr_assert_eq(fbw_stmt_row_count(b), want_rows, "%s: %zu rows", what, fbw_stmt_row_count(b));
    const fbw_msgfmt *fa = fbw_stmt_output(a), *fb = fbw_stmt_output(b);
    cr_assert_eq(fa->n, fb->n);
    cr_assert_eq(memcmp(fa->cols, fb->cols, fa->n * sizeof *fa->cols), 0,
                 "%s: the program sees the same described format", what);
    fbw_value va[16], vb[16];
    cr_assert_leq(fa->n, 16);
    fbw_err err;
    for (size_t i = 0; i < want_rows; i++) {
        cr_assert_eq(fbw_stmt_row(a, i, va, &err), FBW_OK, "%s", err.msg);
        cr_assert_eq(fbw_stmt_row(b, i, vb, &err), FBW_OK, "%s", err.msg);
        for (uint16_t k = 0; k < fa->n; k++) {
            char where[96];
            snprintf(where, sizeof where, "%s row %zu column %u", what, i, k + 1);
            expect_same_value(&va[k], &vb[k], where);
        }
    }
}

static void rows_identical(fbw_server_id id)
{
    fixture x;
    make_table(&x, id);
    char sql[256];
    snprintf(sql, sizeof sql, "select * from %s order by id", x.tab);
    fbw_stmt *c = prepare_as(&x.q, FBW_ROW_FORMAT_COMPACT, sql);
    fbw_stmt *d = prepare_as(&x.q, FBW_ROW_FORMAT_DESCRIBED, sql);
    cr_expect_eq(fbw_conn_row_format(x.q.c), FBW_ROW_FORMAT_COMPACT, "compact is the default");
    cr_expect(fbw_stmt_compact(c), "the CHAR columns of multi-byte sets travel compact");
    cr_expect(!fbw_stmt_compact(d));
    fbw_err err;
    cr_assert_eq(fbw_sqlt_run(&x.q, c, x.q.tx, NULL, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_sqlt_run(&x.q, d, x.q.tx, NULL, &err), FBW_OK, "%s", err.msg);
    expect_same_rows(c, d, 4, fbw_server_name(id));
    /* the padding is Firebird's: a UTF8 CHAR(5) is 20 bytes, spaces after the text */
    fbw_value v[8];
    cr_assert_eq(fbw_stmt_row(c, 0, v, &err), FBW_OK);
    cr_expect_eq(v[3].u.bytes.n, 20);
    cr_expect(memcmp(v[3].u.bytes.p, "a\xc3\xa9\xe2\x82\xac              ", 20) == 0);
    cr_expect_eq(v[6].u.bytes.n, 4);
    cr_expect(memcmp(v[6].u.bytes.p, "\x01\0\0\0", 4) == 0, "OCTETS pad with zero bytes");
    fbw_stmt_free(c);
    fbw_stmt_free(d);
    drop_table(&x);
}

Test(compact, rows_identical_fb3, .timeout = 120) { rows_identical(FBW_SRV_FB3); }
Test(compact, rows_identical_fb4, .timeout = 120) { rows_identical(FBW_SRV_FB4); }

/* sysbench's table and its range query (100 rows of id, k, c, pad): compact rows are read in a
 * fraction of the bytes, and are the same rows. */
static void sysbench_bytes(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    char tab[40], sql[512];
    fbw_sqlt_name(&q, "T_SBCOMPACT", tab, sizeof tab);
    snprintf(sql, sizeof sql,
             "create table %s (id integer not null primary key, k integer default 0 not null, "
             "c char(120) default '' not null, pad char(60) default '' not null)", tab);
    fbw_sqlt_ddl_ok(&q, sql);
    /* sysbench's values: 11-digit groups joined by '-' (119 and 59 characters) */
    snprintf(sql, sizeof sql,
             "execute block as declare i integer = 1; begin while (i <= 100) do begin "
             "insert into %s values (:i, :i * 7, rpad('', 119, '83868641912-'), "
             "rpad('', 59, '67847967377-')); i = i + 1; end end", tab);
    fbw_sqlt_exec_ok(&q, q.tx, sql, NULL);
    snprintf(sql, sizeof sql, "select id, k, c, pad from %s where id between 1 and 100", tab);
    fbw_stmt *c = prepare_as(&q, FBW_ROW_FORMAT_COMPACT, sql);
    fbw_stmt *d = prepare_as(&q, FBW_ROW_FORMAT_DESCRIBED, sql);
    fbw_stats *st = fbw_conn_stats(q.c);
    fbw_err err;
    uint64_t before = st->bytes_received;
    cr_assert_eq(fbw_sqlt_run(&q, c, q.tx, NULL, &err), FBW_OK, "%s", err.msg);
    uint64_t compact = st->bytes_received - before;
    before = st->bytes_received;
    cr_assert_eq(fbw_sqlt_run(&q, d, q.tx, NULL, &err), FBW_OK, "%s", err.msg);
    uint64_t described = st->bytes_received - before;
    expect_same_rows(c, d, 100, "sysbench rows");
    /* per row: 12 bytes of bitmap and integers, then 480 + 240 described, 124 + 64 compact */
    cr_expect_gt(described, 100 * 720, "%s: described %llu bytes", fbw_server_name(id),
                 (unsigned long long)described);
    cr_expect_lt(compact, 100 * 220, "%s: compact %llu bytes", fbw_server_name(id),
                 (unsigned long long)compact);
    cr_log_info("%s: 100 sysbench rows: %llu bytes compact, %llu described\n", fbw_server_name(id),
                (unsigned long long)compact, (unsigned long long)described);
    fbw_stmt_free(c);
    fbw_stmt_free(d);
    fbw_sqlt_commit_ok(&q, q.tx);
    snprintf(sql, sizeof sql, "drop table %s", tab);
    fbw_sqlt_ddl_ok(&q, sql);
    fbw_sqlt_close(&q);
}

Test(compact, sysbench_bytes_fb3, .timeout = 120) { sysbench_bytes(FBW_SRV_FB3); }
Test(compact, sysbench_bytes_fb4, .timeout = 120) { sysbench_bytes(FBW_SRV_FB4); }

/* Parameters: the same values inserted through a compact and a described statement, with and
 * without their padding and with trailing blanks, store the same; INSERT ... RETURNING (a singleton,
 * op_execute2) returns the same row in both formats. */
static void params_identical(fbw_server_id id)
{
    fixture x;
    make_table(&x, id);
    char sql[512];
    snprintf(sql, sizeof sql, "insert into %s (id, c, m, n, o) values (?, ?, ?, ?, ?) "
             "returning id, c, m, n, o", x.tab);
    fbw_stmt *ic = prepare_as(&x.q, FBW_ROW_FORMAT_COMPACT, sql);
    fbw_stmt *id_ = prepare_as(&x.q, FBW_ROW_FORMAT_DESCRIBED, sql);
    cr_assert(fbw_stmt_compact(ic));
    const fbw_msgfmt *in = fbw_stmt_input(ic);
    cr_assert_eq(in->n, 5);
    cr_assert_eq(in->cols[1].type, FBW_SQL_TEXT, "described as CHAR to the program");
    static const char *const texts[][4] = {
        {"short", "m", "n", "01"},
        {"with trailing blanks   ", "\xc3\xa9  ", "ab  ", "0100"},
        {"", "", "", ""},
    };
    fbw_err err;
    for (int t = 0; t < 3; t++) {
        for (int f = 0; f < 2; f++) {
            fbw_stmt *s = f ? id_ : ic;
            fbw_value p[5];
            char idtext[8];
            snprintf(idtext, sizeof idtext, "%d", 100 + t * 2 + f);
            cr_assert_eq(fbw_value_from_text(&in->cols[0], idtext, strlen(idtext), &p[0], &err), FBW_OK);
            for (int k = 0; k < 4; k++)
                cr_assert_eq(fbw_value_from_text(&in->cols[k + 1], texts[t][k], strlen(texts[t][k]),
                                                 &p[k + 1], &err), FBW_OK, "%s", err.msg);
            cr_assert_eq(fbw_sqlt_run(&x.q, s, x.q.tx, p, &err), FBW_OK, "%s: insert %d/%d: %s",
                         fbw_server_name(id), t, f, err.msg);
            cr_assert_eq(fbw_stmt_row_count(s), 1, "RETURNING gives one row");
        }
        /* the RETURNING rows of both formats agree, but for the id */
        fbw_value a[5], b[5];
        cr_assert_eq(fbw_stmt_row(ic, 0, a, &err), FBW_OK);
        cr_assert_eq(fbw_stmt_row(id_, 0, b, &err), FBW_OK);
        for (int k = 1; k < 5; k++) {
            char where[64];
            snprintf(where, sizeof where, "%s RETURNING case %d column %d", fbw_server_name(id), t, k + 1);
            expect_same_value(&a[k], &b[k], where);
        }
    }
    fbw_stmt_free(ic);
    fbw_stmt_free(id_);
    /* what was stored agrees too, read through the described format */
    snprintf(sql, sizeof sql, "select c, m, n, o, octet_length(c), char_length(m) from %s "
             "where id = ?", x.tab);
    fbw_stmt *sel[2] = {prepare_as(&x.q, FBW_ROW_FORMAT_DESCRIBED, sql),
                        prepare_as(&x.q, FBW_ROW_FORMAT_DESCRIBED, sql)};
    for (int t = 0; t < 3; t++) {
        fbw_value rows[2][6];
        for (int f = 0; f < 2; f++) { /* a statement each: the rows of both stay */
            fbw_value p = {.type = FBW_SQL_LONG, .u.i64 = 100 + t * 2 + f};
            cr_assert_eq(fbw_sqlt_run(&x.q, sel[f], x.q.tx, &p, &err), FBW_OK, "%s", err.msg);
            cr_assert_eq(fbw_stmt_row_count(sel[f]), 1);
            cr_assert_eq(fbw_stmt_row(sel[f], 0, rows[f], &err), FBW_OK);
        }
        for (int k = 0; k < 6; k++) {
            char where[64];
            snprintf(where, sizeof where, "%s stored case %d column %d", fbw_server_name(id), t, k + 1);
            expect_same_value(&rows[0][k], &rows[1][k], where);
        }
    }
    fbw_stmt_free(sel[0]);
    fbw_stmt_free(sel[1]);
    drop_table(&x);
}

Test(compact, params_identical_fb3, .timeout = 120) { params_identical(FBW_SRV_FB3); }
Test(compact, params_identical_fb4, .timeout = 120) { params_identical(FBW_SRV_FB4); }

/* fbw_stmt_set_output: rows in the caller's format, converted by the server (a CHAR asked for as
 * VARCHAR comes back unpadded, as the caller then sees it), refused with a wrong column count. */
static void set_output(fbw_server_id id)
{
    fixture x;
    make_table(&x, id);
    char sql[256];
    snprintf(sql, sizeof sql, "select id, m from %s where id = 1", x.tab);
    fbw_stmt *s = prepare_as(&x.q, FBW_ROW_FORMAT_COMPACT, sql);
    fbw_col cols[2];
    memcpy(cols, fbw_stmt_output(s)->cols, sizeof cols);
    cols[1].type = FBW_SQL_VARYING;
    fbw_msgfmt one = {cols, 1, 2}, mine = {cols, 2, 2};
    cr_assert_eq(fbw_stmt_set_output(s, &one), FBW_E_USAGE);
    cr_assert(strstr(fbw_stmt_error(s)->msg, "1 columns given"), "%s", fbw_stmt_error(s)->msg);
    cr_assert_eq(fbw_stmt_set_output(s, &mine), FBW_OK, "%s", fbw_stmt_error(s)->msg);
    cr_assert(!fbw_stmt_compact(s), "the caller's format travels as given");
    cr_assert_eq(fbw_stmt_output(s)->cols[1].type, FBW_SQL_VARYING);
    fbw_err err;
    cr_assert_eq(fbw_sqlt_run(&x.q, s, x.q.tx, NULL, &err), FBW_OK, "%s", err.msg);
    fbw_value v[2];
    cr_assert_eq(fbw_stmt_row(s, 0, v, &err), FBW_OK);
    cr_assert_eq(v[1].type, FBW_SQL_VARYING);
    /* CHAR(5) keeps its padding to 5 characters when it is converted: 2 + 1 + ... bytes */
    cr_expect(v[1].u.bytes.n >= 6 && v[1].u.bytes.n < 20, "%s: %zu bytes", fbw_server_name(id),
              v[1].u.bytes.n);
    cr_expect(memcmp(v[1].u.bytes.p, "a\xc3\xa9\xe2\x82\xac", 6) == 0);
    fbw_stmt_free(s);
    drop_table(&x);
}

Test(compact, set_output_fb3, .timeout = 120) { set_output(FBW_SRV_FB3); }
Test(compact, set_output_fb4, .timeout = 120) { set_output(FBW_SRV_FB4); }

/* A batch (FB4) sends compact messages: 200 rows of sysbench values go in and read back equal. */
Test(compact, batch_fb4, .timeout = 120)
{
    fixture x;
    make_table(&x, FBW_SRV_FB4);
    char sql[256];
    snprintf(sql, sizeof sql, "insert into %s (id, c, m) values (?, ?, ?)", x.tab);
    fbw_stmt *ins = prepare_as(&x.q, FBW_ROW_FORMAT_COMPACT, sql);
    cr_assert(fbw_stmt_wire_input(ins) != fbw_stmt_input(ins), "the batch's format is compact");
    cr_assert_eq(fbw_stmt_wire_input(ins)->cols[1].type, FBW_SQL_VARYING);
    fbw_batch *b;
    fbw_err err;
    cr_assert_eq(fbw_batch_new(x.q.c, ins, NULL, &b, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_batch_create(b), FBW_OK);
    const fbw_msgfmt *in = fbw_stmt_input(ins);
    for (int i = 0; i < 200; i++) {
        char idt[16], ct[64];
        snprintf(idt, sizeof idt, "%d", 1000 + i);
        snprintf(ct, sizeof ct, "%011d-%011d   ", i * 7, i * 13);
        fbw_value p[3];
        cr_assert_eq(fbw_value_from_text(&in->cols[0], idt, strlen(idt), &p[0], &err), FBW_OK);
        cr_assert_eq(fbw_value_from_text(&in->cols[1], ct, strlen(ct), &p[1], &err), FBW_OK);
        cr_assert_eq(fbw_value_from_text(&in->cols[2], "\xc3\xa9t\xc3\xa9", 5, &p[2], &err), FBW_OK);
        cr_assert_eq(fbw_batch_add(b, p), FBW_OK, "%s", fbw_batch_error(b)->msg);
    }
    cr_assert_eq(fbw_batch_execute(b, x.q.tx), FBW_OK);
    fbw_sqlt_wait_ok(&x.q);
    cr_assert_eq(fbw_batch_error(b)->code, FBW_OK, "%s", fbw_batch_error(b)->msg);
    fbw_batch_free(b);
    fbw_stmt_free(ins);
    snprintf(sql, sizeof sql, "select * from %s where id >= 1000 order by id", x.tab);
    fbw_stmt *c = prepare_as(&x.q, FBW_ROW_FORMAT_COMPACT, sql);
    fbw_stmt *d = prepare_as(&x.q, FBW_ROW_FORMAT_DESCRIBED, sql);
    cr_assert_eq(fbw_sqlt_run(&x.q, c, x.q.tx, NULL, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_sqlt_run(&x.q, d, x.q.tx, NULL, &err), FBW_OK, "%s", err.msg);
    expect_same_rows(c, d, 200, "batch rows");
    fbw_value v[8];
    cr_assert_eq(fbw_stmt_row(d, 5, v, &err), FBW_OK);
    char want[64];
    int n = snprintf(want, sizeof want, "%011d-%011d", 35, 65);
    cr_expect(memcmp(v[1].u.bytes.p, want, (size_t)n) == 0 && v[1].u.bytes.p[n] == ' ');
    fbw_stmt_free(c);
    fbw_stmt_free(d);
    drop_table(&x);
}
