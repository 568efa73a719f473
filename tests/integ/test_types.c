/* SPDX-License-Identifier: MIT */
/* test_types.c - every SQL type through the statement layer against real FB3 and FB4: values at
 * their limits are bound as parameters (parsed from canonical text with the described input column,
 * and built as native values), inserted, read back and compared byte for byte as canonical text;
 * NULL of every type; the byte/char length rules of charsets; what the servers do with NaN; time
 * zones by offset and by region (names from RDB$TIME_ZONES); ARRAY columns. The corpus runs in
 * both row formats (compact, the default, and described). */
#include <criterion/criterion.h>

#include "sqlt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXV 8

typedef struct type_case {
    const char *decl;          /* column type as in CREATE TABLE */
    int fb4_only;
    uint16_t type;             /* described input type */
    int16_t scale;
    uint16_t length;           /* described byte length, 0 = do not check */
    const char *val[MAXV];     /* canonical text written */
    const char *expect[MAXV];  /* what reads back when not the same text */
} type_case;

static const type_case cases[] = {
    {"SMALLINT", 0, FBW_SQL_SHORT, 0, 2, {"-32768", "32767", "0"}, {0}},
    {"INTEGER", 0, FBW_SQL_LONG, 0, 4, {"-2147483648", "2147483647", "-1"}, {0}},
    {"BIGINT", 0, FBW_SQL_INT64, 0, 8, {"-9223372036854775808", "9223372036854775807"}, {0}},
    {"INT128", 1, FBW_SQL_INT128, 0, 16,
     {"99999999999999999999999999999999999999", "-99999999999999999999999999999999999999",
      "-170141183460469231731687303715884105728", "170141183460469231731687303715884105727"},
     {0}},
    {"NUMERIC(4,2)", 0, FBW_SQL_SHORT, -2, 2, {"-0.05", "0.00", "327.67", "-327.68", "99.99"}, {0}},
    {"DECIMAL(9,4)", 0, FBW_SQL_LONG, -4, 4, {"214748.3647", "-214748.3648", "-0.0500", "0.0001"}, {0}},
    {"NUMERIC(18,18)", 0, FBW_SQL_INT64, -18, 8,
     {"9.223372036854775807", "-9.223372036854775808", "-0.050000000000000000",
      "0.000000000000000001"},
     {0}},
    {"NUMERIC(18,0)", 0, FBW_SQL_INT64, 0, 8, {"9223372036854775807", "-9223372036854775808", "-5"},
     {0}},
    {"NUMERIC(38,38)", 1, FBW_SQL_INT128, -38, 16,
     {"0.99999999999999999999999999999999999999", "-0.05000000000000000000000000000000000000",
      "1.70141183460469231731687303715884105727", "-1.70141183460469231731687303715884105728"},
     {0}},
    {"NUMERIC(38,0)", 1, FBW_SQL_INT128, 0, 16,
     {"99999999999999999999999999999999999999", "-99999999999999999999999999999999999999", "-5"},
     {0}},
    {"FLOAT", 0, FBW_SQL_FLOAT, 0, 4,
     {"3.4028235e+38", "-1.1754944e-38", "1e-45", "0.1", "-0", "Infinity"},
     {0}},
    {"DOUBLE PRECISION", 0, FBW_SQL_DOUBLE, 0, 8,
     {"1.7976931348623157e+308", "-2.2250738585072014e-308", "5e-324", "0.1", "-2.5",
      "-Infinity"},
     {0}},
    {"DECFLOAT(16)", 1, FBW_SQL_DEC16, 0, 8,
     {"9.999999999999999E+384", "-9.999999999999999E+384", "1E-383", "1E-398", "Infinity",
      "-Infinity", "NaN", "-0.05"},
     {0}},
    {"DECFLOAT(34)", 1, FBW_SQL_DEC34, 0, 16,
     {"9.999999999999999999999999999999999E+6144", "1E-6143", "1E-6176", "-Infinity", "NaN",
      "1234567890123456789012345678901234", "-1E+6144"},
     /* clamped: 10^6144 needs the coefficient padded to 34 digits */
     {[6] = "-1.000000000000000000000000000000000E+6144"}},
    {"BOOLEAN", 0, FBW_SQL_BOOLEAN, 0, 1, {"TRUE", "FALSE"}, {0}},
    {"DATE", 0, FBW_SQL_TYPE_DATE, 0, 4, {"0001-01-01", "9999-12-31", "2024-02-29"}, {0}},
    {"TIME", 0, FBW_SQL_TYPE_TIME, 0, 4, {"23:59:59.9999", "00:00:00.0000", "12:34:56.0001"}, {0}},
    {"TIMESTAMP", 0, FBW_SQL_TIMESTAMP, 0, 8,
     {"0001-01-01 00:00:00.0000", "9999-12-31 23:59:59.9999", "2024-02-29 12:00:00.5000"},
     {0}},
    {"TIME WITH TIME ZONE", 1, FBW_SQL_TIME_TZ, 0, 8,
     {"23:59:59.9999 +05:30", "00:00:00.0000 -03:00", "10:11:12.1314 Europe/Berlin", "08:00:00.0000 GMT"},
     {0}},
    {"TIMESTAMP WITH TIME ZONE", 1, FBW_SQL_TIMESTAMP_TZ, 0, 12,
     {"2024-07-01 12:34:56.7890 Europe/Berlin", "2024-01-15 00:00:00.0000 Europe/Berlin",
      "2024-01-01 00:00:00.0000 +05:30", "0001-01-01 00:00:00.0000 -14:00",
      "9999-12-31 23:59:59.9999 +14:00", "2020-02-29 23:59:59.9999 GMT"},
     {0}},
    /* UTF8: 4 bytes per character described; CHAR pads with spaces up to the character count
     * (the server sends CHAR(5) UTF8 as 20 bytes: the text, then spaces up to 20 bytes). */
    {"VARCHAR(10) CHARACTER SET UTF8", 0, FBW_SQL_VARYING, 0, 40,
     {"h\xc3\xa9llo \xe2\x82\xac\xf0\x9d\x84\x9e", "", "0123456789"}, {0}},
    {"CHAR(5) CHARACTER SET UTF8", 0, FBW_SQL_TEXT, 0, 20,
     {"a\xc3\xa9\xe2\x82\xac", "abcde"},
     {"a\xc3\xa9\xe2\x82\xac              ", "abcde               "}},
    /* OCTETS: bytes as hex, CHAR padded with zero bytes. */
    {"VARCHAR(8) CHARACTER SET OCTETS", 0, FBW_SQL_VARYING, 0, 8, {"00FF7F80", "", "0102030405060708"},
     {0}},
    {"CHAR(4) CHARACTER SET OCTETS", 0, FBW_SQL_TEXT, 0, 4, {"0001", "DEADBEEF"}, {"00010000", 0}},
    /* NONE: no transliteration, bytes pass as they are (1 byte per character). */
    {"VARCHAR(10) CHARACTER SET NONE", 0, FBW_SQL_VARYING, 0, 10, {"abc", "\xe2\x82\xac\xff"}, {0}},
    /* WIN1252 through a UTF8 connection: described in the connection charset (4 bytes per
     * character), stored as WIN1252 (one byte each) and transliterated back to UTF-8. */
    {"VARCHAR(6) CHARACTER SET WIN1252", 0, FBW_SQL_VARYING, 0, 24,
     {"\xe2\x82\xac\xc3\xa9\xc3\x9f\xc5\x93", "plain"}, {0}},
};
#define NCASES (sizeof cases / sizeof cases[0])

static int is_region(const char *v)
{
    return strchr(v, '/') != NULL;
}

/* The expected read-back text of value j of case k. */
static const char *expected(const type_case *k, int j)
{
    return k->expect[j] ? k->expect[j] : k->val[j];
}

/* Create a table with this case's column, insert every value (plus a NULL) through parameters,
 * read the rows back and compare as text. */
static void check_case(fbw_sqlt *q, const type_case *k, fbw_sqlt_zones *z)
{
    char tab[40], sql[512];
    fbw_sqlt_name(q, "T_TYPES", tab, sizeof tab);
    snprintf(sql, sizeof sql, "create table %s (id integer not null primary key, v %s)", tab, k->decl);
    fbw_sqlt_ddl_ok(q, sql);
    snprintf(sql, sizeof sql, "insert into %s (id, v) values (?, ?)", tab);
    fbw_stmt *ins = fbw_sqlt_prepare_ok(q, q->tx, sql);
    /* Regions cannot be parsed locally (value.h): let the server convert a VARCHAR. */
    snprintf(sql, sizeof sql, "insert into %s (id, v) values (?, cast(? as varchar(80)))", tab);
    fbw_stmt *ins_text = fbw_sqlt_prepare_ok(q, q->tx, sql);
    const fbw_msgfmt *in = fbw_stmt_input(ins);
    cr_assert_eq(in->n, 2);
    const fbw_col *col = &in->cols[1];
    cr_expect_eq(col->type, k->type, "%s %s: described type %u", fbw_server_name(q->id), k->decl,
                 col->type);
    cr_expect_eq(col->scale, k->scale, "%s %s: scale %d", fbw_server_name(q->id), k->decl, col->scale);
    if (k->length)
        cr_expect_eq(col->length, k->length, "%s %s: length %u", fbw_server_name(q->id), k->decl,
                     col->length);
    int n = 0;
    fbw_err err;
    for (; n < MAXV && k->val[n]; n++) {
        char id[16];
        snprintf(id, sizeof id, "%d", n);
        fbw_value p[2];
        cr_assert_eq(fbw_value_from_text(&in->cols[0], id, strlen(id), &p[0], &err), FBW_OK);
        fbw_stmt *st = ins;
        int rc = fbw_value_from_text(col, k->val[n], strlen(k->val[n]), &p[1], &err);
        if (is_region(k->val[n])) {
            cr_assert_eq(rc, FBW_E_UNSUPPORTED, "%s: a region parses locally", k->val[n]);
            st = ins_text;
            rc = fbw_value_from_text(&fbw_stmt_input(st)->cols[1], k->val[n], strlen(k->val[n]), &p[1],
                                     &err);
        }
        cr_assert_eq(rc, FBW_OK, "%s %s from text \"%s\": %s", fbw_server_name(q->id), k->decl,
                     k->val[n], err.msg);
        rc = fbw_sqlt_run(q, st, q->tx, p, &err);
        cr_assert_eq(rc, FBW_OK, "%s %s insert \"%s\": %s", fbw_server_name(q->id), k->decl, k->val[n],
                     err.msg);
        cr_expect_eq(fbw_stmt_affected(st), 1);
    }
    /* NULL of this type */
    fbw_value p[2];
    memset(p, 0, sizeof p);
    p[0].type = FBW_SQL_LONG;
    p[0].u.i64 = 99;
    p[1].type = col->type;
    p[1].is_null = 1;
    cr_assert_eq(fbw_sqlt_run(q, ins, q->tx, p, &err), FBW_OK, "%s %s NULL: %s",
                 fbw_server_name(q->id), k->decl, err.msg);
    fbw_stmt_free(ins);
    fbw_stmt_free(ins_text);

    snprintf(sql, sizeof sql, "select v from %s order by id", tab);
    fbw_stmt *sel = fbw_sqlt_prepare_ok(q, q->tx, sql);
    cr_assert_eq(fbw_sqlt_run(q, sel, q->tx, NULL, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_stmt_row_count(sel), (size_t)n + 1, "%s %s: %zu rows", fbw_server_name(q->id),
                 k->decl, fbw_stmt_row_count(sel));
    fbw_tznames names = fbw_sqlt_zones_names(z);
    fbw_buf t;
    fbw_buf_init(&t);
    for (int j = 0; j <= n; j++) {
        fbw_buf_reset(&t);
        fbw_sqlt_row_text(sel, (size_t)j, z->name ? &names : NULL, &t);
        const char *want = j < n ? expected(k, j) : "NULL";
        const char *got = fbw_sqlt_str(&t);
        cr_expect(strlen(got) == strlen(want) + 1 && memcmp(got, want, strlen(want)) == 0,
                  "%s %s value %d: wrote \"%s\", read \"%s\"", fbw_server_name(q->id), k->decl, j,
                  want, got);
    }
    fbw_buf_free(&t);
    fbw_stmt_free(sel);
    fbw_sqlt_commit_ok(q, q->tx);
    snprintf(sql, sizeof sql, "drop table %s", tab);
    fbw_sqlt_ddl_ok(q, sql);
    fbw_sqlt_tx_start_ok(q, &q->tx, NULL);
}

/* The corpus in one row format (msg.h): every value must read back the same in both, CHAR padding
 * included (compact rows are expanded to the described bytes; test_compact.c compares them). */
static void all_types(fbw_server_id id, int row_format)
{
    fbw_sqlt q;
    fbw_servers srv;
    fbw_servers_require(&srv);
    fbw_client_opts o;
    fbw_servers_client_opts(&srv, &o);
    o.conn.row_format = row_format;
    fbw_sqlt_open(&q, id, &o);
    fbw_sqlt_zones z = {0};
    if (id == FBW_SRV_FB4)
        fbw_sqlt_zones_load_ok(&q, &z);
    int done = 0;
    for (size_t i = 0; i < NCASES; i++) {
        if (cases[i].fb4_only && id != FBW_SRV_FB4)
            continue;
        check_case(&q, &cases[i], &z);
        done++;
    }
    cr_expect_geq(done, id == FBW_SRV_FB4 ? 26 : 19);
    fbw_sqlt_zones_free(&z);
    fbw_sqlt_close(&q);
}

Test(types, all_fb4, .timeout = 300) { all_types(FBW_SRV_FB4, FBW_ROW_FORMAT_COMPACT); }
Test(types, all_fb3, .timeout = 300) { all_types(FBW_SRV_FB3, FBW_ROW_FORMAT_COMPACT); }
Test(types, all_fb4_described, .timeout = 300) { all_types(FBW_SRV_FB4, FBW_ROW_FORMAT_DESCRIBED); }
Test(types, all_fb3_described, .timeout = 300) { all_types(FBW_SRV_FB3, FBW_ROW_FORMAT_DESCRIBED); }


/* ---- NaN: both servers store a NaN/Infinity bound as a parameter (a move checks nothing), keep
 * it through arithmetic, but refuse the text 'NaN' in a cast (isc_convert_error, 22018). ---- */

#define GDS_CONVERT_ERROR 335544334u

static void nan_case(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    char tab[40], sql[512];
    fbw_sqlt_name(&q, "T_NAN", tab, sizeof tab);
    snprintf(sql, sizeof sql, "create table %s (id integer, d double precision, f float)", tab);
    fbw_sqlt_ddl_ok(&q, sql);
    snprintf(sql, sizeof sql, "insert into %s (id, d, f) values (?, ?, ?)", tab);
    fbw_stmt *ins = fbw_sqlt_prepare_ok(&q, q.tx, sql);
    fbw_value p[3];
    memset(p, 0, sizeof p);
    p[0].type = FBW_SQL_LONG;
    p[0].u.i64 = 1;
    p[1].type = FBW_SQL_DOUBLE;
    p[1].u.f64 = NAN;
    p[2].type = FBW_SQL_FLOAT;
    p[2].u.f32 = -NAN;
    fbw_err err;
    cr_assert_eq(fbw_sqlt_run(&q, ins, q.tx, p, &err), FBW_OK, "%s: NaN insert: %s",
                 fbw_server_name(id), err.msg);
    fbw_stmt_free(ins);
    snprintf(sql, sizeof sql, "select d, f, d + 1, d * 0 from %s", tab);
    fbw_stmt *sel = fbw_sqlt_prepare_ok(&q, q.tx, sql);
    cr_assert_eq(fbw_sqlt_run(&q, sel, q.tx, NULL, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_stmt_row_count(sel), 1);
    fbw_value v[4];
    cr_assert_eq(fbw_stmt_row(sel, 0, v, &err), FBW_OK, "%s", err.msg);
    cr_expect(isnan(v[0].u.f64) && isnan(v[1].u.f32) && isnan(v[2].u.f64) && isnan(v[3].u.f64),
              "%s: NaN came back as %g %g %g %g", fbw_server_name(id), v[0].u.f64, (double)v[1].u.f32,
              v[2].u.f64, v[3].u.f64);
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_sqlt_row_text(sel, 0, NULL, &b);
    cr_expect_str_eq(fbw_sqlt_str(&b), "NaN|NaN|NaN|NaN\n");
    fbw_stmt_free(sel);
    int rc = fbw_sqlt_exec(&q, q.tx, "select cast('NaN' as double precision) from rdb$database", NULL,
                           &err);
    cr_expect_eq(rc, FBW_E_SERVER, "%s: cast('NaN') accepted", fbw_server_name(id));
    cr_expect_eq(err.gds[0], GDS_CONVERT_ERROR, "%s: %s", fbw_server_name(id), err.msg);
    cr_expect_str_eq(err.sqlstate, "22018");
    fbw_buf_free(&b);
    fbw_sqlt_commit_ok(&q, q.tx);
    snprintf(sql, sizeof sql, "drop table %s", tab);
    fbw_sqlt_ddl_ok(&q, sql);
    fbw_sqlt_close(&q);
}

Test(types, nan_fb3, .timeout = 60) { nan_case(FBW_SRV_FB3); }
Test(types, nan_fb4, .timeout = 60) { nan_case(FBW_SRV_FB4); }

/* ---- native values: built by hand, not parsed ---- */

typedef struct native_case {
    const char *decl;
    int fb4_only;
    fbw_value v;
    const char *expect;
} native_case;

static void native_values(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    fbw_sqlt_zones z = {0};
    if (id == FBW_SRV_FB4)
        fbw_sqlt_zones_load_ok(&q, &z);
    uint16_t berlin = id == FBW_SRV_FB4 ? fbw_sqlt_zone_id(&z, "Europe/Berlin") : 0;
    cr_assert(id != FBW_SRV_FB4 || berlin > 2878, "Europe/Berlin not in RDB$TIME_ZONES");
    static const char text[] = "na\xc3\xafve \xe2\x82\xac";
    native_case k[] = {
        {"SMALLINT", 0, {.type = FBW_SQL_SHORT, .u.i64 = -32768}, "-32768"},
        {"NUMERIC(9,4)", 0, {.type = FBW_SQL_LONG, .u.i64 = -500}, "-0.0500"},
        {"BIGINT", 0, {.type = FBW_SQL_INT64, .u.i64 = INT64_MIN}, "-9223372036854775808"},
        {"INT128", 1, {.type = FBW_SQL_INT128, .u.i128 = {INT64_MIN, 0}},
         "-170141183460469231731687303715884105728"},
        {"NUMERIC(38,2)", 1, {.type = FBW_SQL_INT128, .u.i128 = {-1, UINT64_MAX - 4}}, "-0.05"},
        {"DOUBLE PRECISION", 0, {.type = FBW_SQL_DOUBLE, .u.f64 = -0.1}, "-0.1"},
        {"FLOAT", 0, {.type = FBW_SQL_FLOAT, .u.f32 = 0.25f}, "0.25"},
        {"BOOLEAN", 0, {.type = FBW_SQL_BOOLEAN, .u.boolean = 1}, "TRUE"},
        {"DATE", 0, {.type = FBW_SQL_TYPE_DATE, .u.dt.date = FBW_DATE_MIN}, "0001-01-01"},
        {"TIME", 0, {.type = FBW_SQL_TYPE_TIME, .u.dt.time = FBW_TIME_PER_DAY - 1}, "23:59:59.9999"},
        {"TIMESTAMP", 0, {.type = FBW_SQL_TIMESTAMP, .u.dt = {.date = FBW_DATE_MAX, .time = 0}},
         "9999-12-31 00:00:00.0000"},
        {"VARCHAR(10) CHARACTER SET UTF8", 0,
         {.type = FBW_SQL_VARYING, .u.bytes = {(const uint8_t *)text, sizeof text - 1}}, text},
        /* decimal64 +Infinity: combination field 11110 */
        {"DECFLOAT(16)", 1, {.type = FBW_SQL_DEC16, .u.dec = {0x78}}, "Infinity"},
        /* decimal128 quiet NaN: 11111 0 */
        {"DECFLOAT(34)", 1, {.type = FBW_SQL_DEC34, .u.dec = {0x7c}}, "NaN"},
        /* 2024-07-01 10:34:56.789 UTC is 12:34:56.789 in Berlin (CEST) */
        {"TIMESTAMP WITH TIME ZONE", 1,
         {.type = FBW_SQL_TIMESTAMP_TZ,
          .u.dt = {.date = fbw_date_from_ymd(2024, 7, 1), .time = 380967890, .zone = berlin}},
         "2024-07-01 12:34:56.7890 Europe/Berlin"},
        /* 04:30 UTC in zone +05:30 (offset zones are minutes + 1439) */
        {"TIME WITH TIME ZONE", 1,
         {.type = FBW_SQL_TIME_TZ, .u.dt = {.time = 162000000, .zone = 1439 + 330}},
         "10:00:00.0000 +05:30"},
    };
    char tab[40], sql[2048];
    fbw_sqlt_name(&q, "T_NATIVE", tab, sizeof tab);
    size_t n = 0, len = (size_t)snprintf(sql, sizeof sql, "create table %s (id integer", tab);
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (!k[i].fb4_only || id == FBW_SRV_FB4)
            len += (size_t)snprintf(sql + len, sizeof sql - len, ", c%zu %s", i, k[i].decl);
    snprintf(sql + len, sizeof sql - len, ")");
    fbw_sqlt_ddl_ok(&q, sql);
    fbw_value p[sizeof k / sizeof k[0] + 1];
    len = (size_t)snprintf(sql, sizeof sql, "insert into %s values (1", tab);
    p[n++] = (fbw_value){.type = FBW_SQL_LONG, .u.i64 = 1};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        if (k[i].fb4_only && id != FBW_SRV_FB4)
            continue;
        len += (size_t)snprintf(sql + len, sizeof sql - len, ", ?");
        p[n++] = k[i].v;
    }
    snprintf(sql + len, sizeof sql - len, ")");
    /* the first parameter is the literal 1 */
    memmove(p, p + 1, (n - 1) * sizeof p[0]);
    fbw_stmt *ins = fbw_sqlt_prepare_ok(&q, q.tx, sql);
    cr_assert_eq(fbw_stmt_input(ins)->n, n - 1);
    fbw_err err;
    cr_assert_eq(fbw_sqlt_run(&q, ins, q.tx, p, &err), FBW_OK, "%s: %s", fbw_server_name(id), err.msg);
    fbw_stmt_free(ins);
    snprintf(sql, sizeof sql, "select * from %s", tab);
    fbw_stmt *sel = fbw_sqlt_prepare_ok(&q, q.tx, sql);
    cr_assert_eq(fbw_sqlt_run(&q, sel, q.tx, NULL, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_stmt_row_count(sel), 1);
    fbw_buf got, want;
    fbw_buf_init(&got);
    fbw_buf_init(&want);
    fbw_tznames names = fbw_sqlt_zones_names(&z);
    fbw_sqlt_row_text(sel, 0, z.name ? &names : NULL, &got);
    fbw_buf_append(&want, "1", 1);
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        if (k[i].fb4_only && id != FBW_SRV_FB4)
            continue;
        fbw_buf_append(&want, "|", 1);
        fbw_buf_append(&want, k[i].expect, strlen(k[i].expect));
    }
    fbw_buf_append(&want, "\n", 1);
    cr_expect_str_eq(fbw_sqlt_str(&got), fbw_sqlt_str(&want), "%s native values", fbw_server_name(id));
    fbw_buf_free(&got);
    fbw_buf_free(&want);
    fbw_stmt_free(sel);
    fbw_sqlt_commit_ok(&q, q.tx);
    snprintf(sql, sizeof sql, "drop table %s", tab);
    fbw_sqlt_ddl_ok(&q, sql);
    fbw_sqlt_zones_free(&z);
    fbw_sqlt_close(&q);
}

Test(types, native_fb3, .timeout = 60) { native_values(FBW_SRV_FB3); }
Test(types, native_fb4, .timeout = 60) { native_values(FBW_SRV_FB4); }

/* ---- the longest VARCHARs: 32765 bytes is the limit of a VARCHAR's length word (with the
 * 2-byte prefix and the server's own cap); a UTF8 column holds at most 32765 / 4 = 8191 characters,
 * so 8191 four-byte characters (32764 bytes) are the most that fit. ---- */

static void long_text(fbw_sqlt *q, const char *decl, const char *unit, size_t reps, uint16_t len)
{
    char tab[40], sql[256];
    fbw_sqlt_name(q, "T_LONG", tab, sizeof tab);
    snprintf(sql, sizeof sql, "create table %s (v %s)", tab, decl);
    fbw_sqlt_ddl_ok(q, sql);
    size_t ul = strlen(unit), n = ul * reps;
    char *s = malloc(n + 1);
    cr_assert_not_null(s);
    for (size_t i = 0; i < reps; i++)
        memcpy(s + i * ul, unit, ul);
    s[n] = 0;
    snprintf(sql, sizeof sql, "insert into %s (v) values (?)", tab);
    fbw_stmt *ins = fbw_sqlt_prepare_ok(q, q->tx, sql);
    cr_assert_eq(fbw_stmt_input(ins)->cols[0].length, len, "%s: %s described as %u bytes",
                 fbw_server_name(q->id), decl, fbw_stmt_input(ins)->cols[0].length);
    fbw_value p;
    fbw_err err;
    cr_assert_eq(fbw_value_from_text(&fbw_stmt_input(ins)->cols[0], s, n, &p, &err), FBW_OK, "%s",
                 err.msg);
    cr_assert_eq(fbw_sqlt_run(q, ins, q->tx, &p, &err), FBW_OK, "%s: %s", decl, err.msg);
    fbw_stmt_free(ins);
    snprintf(sql, sizeof sql, "select v, char_length(v), octet_length(v) from %s", tab);
    fbw_stmt *sel = fbw_sqlt_prepare_ok(q, q->tx, sql);
    cr_assert_eq(fbw_sqlt_run(q, sel, q->tx, NULL, &err), FBW_OK, "%s", err.msg);
    fbw_value v[3];
    cr_assert_eq(fbw_stmt_row(sel, 0, v, &err), FBW_OK, "%s", err.msg);
    fbw_buf t;
    fbw_buf_init(&t);
    cr_assert_eq(fbw_value_to_text(&v[0], &fbw_stmt_output(sel)->cols[0], NULL, &t, &err), FBW_OK);
    cr_expect(t.len == n && memcmp(t.data, s, n) == 0, "%s: text differs (%zu bytes)", decl, t.len);
    fbw_buf_free(&t);
    cr_expect_eq(v[1].u.i64, (int64_t)reps, "%s: char_length %lld", decl, (long long)v[1].u.i64);
    cr_expect_eq(v[2].u.i64, (int64_t)len, "%s: octet_length %lld", decl, (long long)v[2].u.i64);
    fbw_stmt_free(sel);
    free(s);
    fbw_sqlt_commit_ok(q, q->tx);
    snprintf(sql, sizeof sql, "drop table %s", tab);
    fbw_sqlt_ddl_ok(q, sql);
    fbw_sqlt_tx_start_ok(q, &q->tx, NULL);
}

#define GDS_NO_META_UPDATE 335544351u /* unsuccessful metadata update */
#define GDS_IMP_EXC 335544381u        /* Implementation limit exceeded */

static void longest(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    long_text(&q, "VARCHAR(8191) CHARACTER SET UTF8", "\xf0\x9f\x98\x80", 8191, 32764);
    long_text(&q, "VARCHAR(32765) CHARACTER SET NONE", "x", 32765, 32765);
    long_text(&q, "VARCHAR(32765) CHARACTER SET OCTETS", "A5", 32765, 32765);
    /* one character more does not fit */
    char tab[40], sql[256];
    fbw_err err;
    snprintf(sql, sizeof sql, "create table %s (v varchar(8192) character set utf8)",
             fbw_sqlt_name(&q, "T_LONG", tab, sizeof tab));
    cr_expect_eq(fbw_sqlt_ddl(&q, sql, &err), FBW_E_SERVER, "%s: VARCHAR(8192) UTF8 accepted",
                 fbw_server_name(id));
    cr_expect_eq(err.gds[0], GDS_NO_META_UPDATE, "%s: %s", fbw_server_name(id), err.msg);
    int limit = 0;
    for (int i = 0; i < err.ngds; i++)
        limit |= err.gds[i] == GDS_IMP_EXC;
    cr_expect(limit, "%s: no isc_imp_exc in %s", fbw_server_name(id), err.msg);
    fbw_sqlt_close(&q);
}

Test(types, longest_fb3, .timeout = 60) { longest(FBW_SRV_FB3); }
Test(types, longest_fb4, .timeout = 60) { longest(FBW_SRV_FB4); }

/* ---- ARRAY ---- */

/* An ARRAY column is described as SQL_ARRAY and its value is the array id (a quad, NULL here:
 * DSQL cannot write array contents). fbwire has no slice operations, so the contents cannot be
 * read; the id decodes cleanly and formats as "high:low" like isql, it is not an error today. */
static void array_column(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    char tab[40], sql[256];
    fbw_sqlt_name(&q, "T_ARR", tab, sizeof tab);
    snprintf(sql, sizeof sql, "create table %s (id integer, a integer[3])", tab);
    fbw_sqlt_ddl_ok(&q, sql);
    snprintf(sql, sizeof sql, "insert into %s (id) values (1)", tab);
    fbw_sqlt_exec_ok(&q, q.tx, sql, NULL);
    snprintf(sql, sizeof sql, "select id, a from %s", tab);
    fbw_stmt *s = fbw_sqlt_prepare_ok(&q, q.tx, sql);
    cr_assert_eq(fbw_stmt_output(s)->n, 2);
    cr_expect_eq(fbw_stmt_output(s)->cols[1].type, FBW_SQL_ARRAY);
    fbw_err err;
    cr_assert_eq(fbw_sqlt_run(&q, s, q.tx, NULL, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_stmt_row_count(s), 1);
    fbw_value v[2];
    cr_assert_eq(fbw_stmt_row(s, 0, v, &err), FBW_OK, "%s", err.msg);
    cr_expect_eq(v[0].u.i64, 1);
    cr_expect(v[1].is_null, "%s: the NULL array came back as %x:%x", fbw_server_name(id),
              v[1].u.quad.high, v[1].u.quad.low);
    fbw_stmt_free(s);
    fbw_sqlt_commit_ok(&q, q.tx);
    snprintf(sql, sizeof sql, "drop table %s", tab);
    fbw_sqlt_ddl_ok(&q, sql);
    fbw_sqlt_close(&q);
}

Test(types, array_fb3, .timeout = 60) { array_column(FBW_SRV_FB3); }
Test(types, array_fb4, .timeout = 60) { array_column(FBW_SRV_FB4); }
