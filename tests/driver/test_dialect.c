/* SPDX-License-Identifier: MIT */
/* test_dialect.c - SQL classification, rewrites, multi-row INSERT parsing and inlining. */
#include <criterion/criterion.h>

#include "dialect.h"

#include <stdlib.h>
#include <string.h>

static sbdrv_sql_kind kind_of(const char *sql)
{
    sbdrv_sql_plan p;
    fbw_err e;
    fbw_err_clear(&e);
    cr_assert_eq(sbdrv_dialect_plan(sql, strlen(sql), &p, &e), FBW_OK, "%s: %s", sql, e.msg);
    sbdrv_sql_kind k = p.kind;
    sbdrv_dialect_plan_free(&p);
    return k;
}

/* Rewrite sql and return the new text (caller frees). */
static char *rewrite(const char *sql)
{
    sbdrv_sql_plan p;
    fbw_err e;
    fbw_err_clear(&e);
    cr_assert_eq(sbdrv_dialect_plan(sql, strlen(sql), &p, &e), FBW_OK, "%s: %s", sql, e.msg);
    cr_assert_eq(p.kind, SBDRV_SQL_REWRITTEN, "%s", sql);
    cr_assert_eq(strlen(p.text), p.len);
    return p.text;
}

Test(dialect, transaction_statements)
{
    cr_expect_eq(kind_of("BEGIN"), SBDRV_SQL_BEGIN);
    cr_expect_eq(kind_of("  begin work ;  "), SBDRV_SQL_BEGIN);
    cr_expect_eq(kind_of("BEGIN TRANSACTION"), SBDRV_SQL_BEGIN);
    cr_expect_eq(kind_of("/* c */ START TRANSACTION"), SBDRV_SQL_BEGIN);
    cr_expect_eq(kind_of("COMMIT"), SBDRV_SQL_COMMIT);
    cr_expect_eq(kind_of("commit WORK"), SBDRV_SQL_COMMIT);
    cr_expect_eq(kind_of("-- x\nROLLBACK;"), SBDRV_SQL_ROLLBACK);
}

Test(dialect, look_alikes_stay_plain)
{
    cr_expect_eq(kind_of("ROLLBACK TO SAVEPOINT s1"), SBDRV_SQL_PLAIN);
    cr_expect_eq(kind_of("COMMIT RETAIN"), SBDRV_SQL_PLAIN);
    cr_expect_eq(kind_of("BEGINNING"), SBDRV_SQL_PLAIN);
    cr_expect_eq(kind_of("START"), SBDRV_SQL_PLAIN);
    cr_expect_eq(kind_of("SELECT c FROM sbtest1 WHERE id=?"), SBDRV_SQL_PLAIN);
    cr_expect_eq(kind_of("DROP TABLE sbtest1"), SBDRV_SQL_PLAIN);
    cr_expect_eq(kind_of("CREATE TABLE t (id INTEGER)"), SBDRV_SQL_PLAIN);
    cr_expect_eq(kind_of(""), SBDRV_SQL_PLAIN);
    cr_expect_eq(kind_of("   "), SBDRV_SQL_PLAIN);
}

Test(dialect, single_row_insert_is_plain)
{
    cr_expect_eq(kind_of("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)"),
                 SBDRV_SQL_PLAIN);
    cr_expect_eq(kind_of("INSERT INTO t (a) VALUES ('x,(y)')"), SBDRV_SQL_PLAIN);
    cr_expect_eq(kind_of("INSERT INTO t (a) SELECT a FROM u"), SBDRV_SQL_PLAIN);
}

Test(dialect, multi_row_insert_detected)
{
    cr_expect_eq(kind_of("INSERT INTO sbtest2 VALUES(1,1),(2,2)"), SBDRV_SQL_BULK_INSERT);
    cr_expect_eq(kind_of("insert into t(k, c) values (1, 'a'), (2, 'b')"), SBDRV_SQL_BULK_INSERT);
    /* a "values" inside a column list or a literal is not the keyword */
    cr_expect_eq(kind_of("INSERT INTO t(\"VALUES\") VALUES (1)"), SBDRV_SQL_PLAIN);
}

Test(dialect, drop_table_if_exists)
{
    char *t = rewrite("DROP TABLE IF EXISTS sbtest1");
    cr_expect_str_eq(t, "EXECUTE BLOCK AS BEGIN\n"
                        "IF (EXISTS(SELECT 1 FROM RDB$RELATIONS WHERE RDB$RELATION_NAME = "
                        "'SBTEST1')) THEN EXECUTE STATEMENT 'DROP TABLE sbtest1';\n"
                        "END");
    free(t);
}

Test(dialect, drop_quoted_and_list)
{
    char *t = rewrite("drop table if exists \"Mixed\"\"Q'\", b;");
    cr_expect(strstr(t, "RDB$RELATION_NAME = 'Mixed\"Q'''") != NULL, "%s", t);
    cr_expect(strstr(t, "EXECUTE STATEMENT 'DROP TABLE \"Mixed\"\"Q''\"'") != NULL, "%s", t);
    cr_expect(strstr(t, "RDB$RELATION_NAME = 'B'") != NULL, "%s", t);
    free(t);
}

Test(dialect, drop_other_objects)
{
    char *t = rewrite("DROP SEQUENCE IF EXISTS sbtest1_seq");
    cr_expect(strstr(t, "FROM RDB$GENERATORS WHERE RDB$GENERATOR_NAME = 'SBTEST1_SEQ'"), "%s", t);
    free(t);
    t = rewrite("DROP INDEX IF EXISTS k_1");
    cr_expect(strstr(t, "FROM RDB$INDICES WHERE RDB$INDEX_NAME = 'K_1'"), "%s", t);
    free(t);
}

Test(dialect, drop_if_exists_errors)
{
    sbdrv_sql_plan p;
    fbw_err e;
    const char *bad[] = {"DROP TABLE IF sbtest1", "DROP TABLE IF EXISTS a b",
                         "DROP TABLE IF EXISTS", "DROP TABLE IF EXISTS a CASCADE"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fbw_err_clear(&e);
        cr_expect_eq(sbdrv_dialect_plan(bad[i], strlen(bad[i]), &p, &e), FBW_E_UNSUPPORTED, "%s",
                     bad[i]);
        cr_expect(e.msg[0] != '\0');
        cr_expect_null(p.text);
    }
}

Test(dialect, create_table_if_not_exists)
{
    const char *sql = "\n        CREATE TABLE IF NOT EXISTS sbtest1 (\n"
                      "          id INTEGER NOT NULL,\n"
                      "          k INTEGER DEFAULT '0' NOT NULL,\n"
                      "          PRIMARY KEY (id))";
    char *t = rewrite(sql);
    cr_expect_str_eq(t, "EXECUTE BLOCK AS BEGIN\n"
                        "IF (NOT EXISTS(SELECT 1 FROM RDB$RELATIONS WHERE RDB$RELATION_NAME = "
                        "'SBTEST1')) THEN EXECUTE STATEMENT 'CREATE TABLE sbtest1 (\n"
                        "          id INTEGER NOT NULL,\n"
                        "          k INTEGER DEFAULT ''0'' NOT NULL,\n"
                        "          PRIMARY KEY (id))';\n"
                        "END");
    free(t);
}

Test(dialect, create_unsupported_if_not_exists)
{
    sbdrv_sql_plan p;
    fbw_err e;
    fbw_err_clear(&e);
    const char *sql = "CREATE INDEX IF NOT EXISTS k ON t(k)";
    cr_expect_eq(sbdrv_dialect_plan(sql, strlen(sql), &p, &e), FBW_E_UNSUPPORTED);
    cr_expect(strstr(e.msg, "INDEX") != NULL, "%s", e.msg);
}

Test(dialect, parse_bulk_insert_oltp)
{
    const char *sql = "INSERT INTO sbtest1(k, c, pad) VALUES(2, '40-55', 'p''q'),"
                      "(-7, '', NULL),(9223372036854775807, 'x', '?')";
    sbdrv_bulk_insert b;
    fbw_err e;
    fbw_err_clear(&e);
    cr_assert_eq(sbdrv_dialect_parse_insert(sql, strlen(sql), &b, &e), FBW_OK, "%s", e.msg);
    cr_expect_eq(b.ncols, 3);
    cr_expect_eq(b.nrows, 3);
    cr_expect_str_eq(b.single, "INSERT INTO sbtest1(k, c, pad) VALUES (?, ?, ?)");
    cr_expect_eq(b.prefix_len, strlen("INSERT INTO sbtest1(k, c, pad)"));
    cr_expect_eq(b.values[0].type, SBDRV_VAL_INT64);
    cr_expect_eq(b.values[0].i, 2);
    cr_expect_eq(b.values[1].type, SBDRV_VAL_TEXT);
    cr_expect(b.values[1].len == 5 && memcmp(b.values[1].s, "40-55", 5) == 0);
    cr_expect(b.values[2].len == 3 && memcmp(b.values[2].s, "p'q", 3) == 0);
    cr_expect_eq(b.values[3].i, -7);
    cr_expect_eq(b.values[4].type, SBDRV_VAL_TEXT);
    cr_expect_eq(b.values[4].len, 0);
    cr_expect_eq(b.values[5].type, SBDRV_VAL_NULL);
    cr_expect_eq(b.values[6].type, SBDRV_VAL_INT64);
    cr_expect_eq(b.values[6].i, INT64_MAX);
    cr_expect(b.values[8].len == 1 && b.values[8].s[0] == '?');
    sbdrv_dialect_bulk_free(&b);
}

Test(dialect, parse_bulk_insert_numbers)
{
    const char *sql = "INSERT INTO sbtest2 VALUES(1.5,99999999999999999999),(+3,-2e-3)";
    sbdrv_bulk_insert b;
    fbw_err e;
    cr_assert_eq(sbdrv_dialect_parse_insert(sql, strlen(sql), &b, &e), FBW_OK, "%s", e.msg);
    cr_expect_str_eq(b.single, "INSERT INTO sbtest2 VALUES (?, ?)");
    cr_expect_eq(b.values[0].type, SBDRV_VAL_NUMTEXT);
    cr_expect(b.values[0].len == 3 && memcmp(b.values[0].s, "1.5", 3) == 0);
    cr_expect_eq(b.values[1].type, SBDRV_VAL_NUMTEXT); /* too big for int64 */
    cr_expect_eq(b.values[2].type, SBDRV_VAL_INT64);
    cr_expect_eq(b.values[2].i, 3);
    cr_expect_eq(b.values[3].type, SBDRV_VAL_NUMTEXT);
    cr_expect(b.values[3].len == 5 && memcmp(b.values[3].s, "-2e-3", 5) == 0);
    sbdrv_dialect_bulk_free(&b);
}

Test(dialect, parse_bulk_insert_rejects)
{
    const char *bad[] = {
        "INSERT INTO t VALUES (1,2),(3)",           /* arity */
        "INSERT INTO t VALUES (1),(f(2))",          /* expression */
        "INSERT INTO t VALUES (1),(2) RETURNING id", /* trailing text */
        "INSERT INTO t VALUES (1),('open",          /* unterminated string */
        "INSERT INTO t VALUES (1),(1e)",            /* bad exponent */
        "INSERT INTO t VALUES (1),(12abc)",         /* bad number */
        "INSERT INTO t VALUES (1),(-)",             /* lone sign */
        "INSERT INTO t VALUES (1),(2",              /* missing ) */
        "INSERT INTO t SELECT 1",                   /* no VALUES */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sbdrv_bulk_insert b;
        fbw_err e;
        fbw_err_clear(&e);
        int rc = sbdrv_dialect_parse_insert(bad[i], strlen(bad[i]), &b, &e);
        cr_expect_eq(rc, FBW_E_UNSUPPORTED, "%s -> %d", bad[i], rc);
        cr_expect(e.msg[0] != '\0', "%s", bad[i]);
        cr_expect_null(b.values);
        cr_expect_null(b.single);
    }
}

/* Every strict prefix of a valid statement must fail cleanly, never read past its end. */
Test(dialect, parse_bulk_insert_prefixes)
{
    const char *sql = "INSERT INTO t(a, b) VALUES (1, 'x''y'), (2, NULL)";
    size_t n = strlen(sql);
    size_t one_row = strlen("INSERT INTO t(a, b) VALUES (1, 'x''y')"); /* complete by itself */
    for (size_t len = 0; len < n; len++) {
        char *copy = malloc(len ? len : 1); /* exact size: ASan sees any over-read */
        memcpy(copy, sql, len);
        sbdrv_bulk_insert b;
        fbw_err e;
        int rc = sbdrv_dialect_parse_insert(copy, len, &b, &e);
        if (len == one_row) {
            cr_expect_eq(rc, FBW_OK, "%s", e.msg);
            cr_expect_eq(b.nrows, 1);
            sbdrv_dialect_bulk_free(&b);
        } else {
            cr_expect_neq(rc, FBW_OK, "prefix %zu accepted", len);
        }
        sbdrv_sql_plan p;
        cr_expect_eq(sbdrv_dialect_plan(copy, len, &p, &e), FBW_OK);
        sbdrv_dialect_plan_free(&p);
        (void)sbdrv_dialect_count_params(copy, len);
        free(copy);
    }
}

Test(dialect, count_params)
{
    const char *sql = "SELECT '?' , \"?\" FROM t /* ? */ WHERE a=? -- ?\n AND b IN (?, ?)";
    cr_expect_eq(sbdrv_dialect_count_params(sql, strlen(sql)), 3);
    cr_expect_eq(sbdrv_dialect_count_params("", 0), 0);
}

Test(dialect, inline_values)
{
    const char *sql = "UPDATE t SET c=?, d=? WHERE id=? AND x=? AND s='?' AND n=?";
    sbdrv_val v[5] = {
        {.type = SBDRV_VAL_TEXT, .s = "it's", .len = 4},
        {.type = SBDRV_VAL_DOUBLE, .d = 0.5},
        {.type = SBDRV_VAL_INT64, .i = -42},
        {.type = SBDRV_VAL_NULL},
        {.type = SBDRV_VAL_NUMTEXT, .s = "1.25", .len = 4},
    };
    char *out;
    size_t len;
    fbw_err e;
    cr_assert_eq(sbdrv_dialect_inline(sql, strlen(sql), v, 5, &out, &len, &e), FBW_OK, "%s",
                 e.msg);
    cr_expect_str_eq(out,
                     "UPDATE t SET c='it''s', d=0.5 WHERE id=-42 AND x=NULL AND s='?' AND n=1.25");
    cr_expect_eq(len, strlen(out));
    free(out);
}

Test(dialect, inline_binary_text_uses_length)
{
    const char raw[] = {'a', '\'', 'b', 'X'}; /* only 3 bytes bound, no terminator */
    sbdrv_val v = {.type = SBDRV_VAL_TEXT, .s = raw, .len = 3};
    char *out;
    size_t len;
    fbw_err e;
    cr_assert_eq(sbdrv_dialect_inline("SELECT ?", 8, &v, 1, &out, &len, &e), FBW_OK);
    cr_expect_str_eq(out, "SELECT 'a''b'");
    free(out);
}

Test(dialect, inline_errors)
{
    char *out;
    size_t len;
    fbw_err e;
    sbdrv_val v = {.type = SBDRV_VAL_INT64, .i = 1};
    cr_expect_eq(sbdrv_dialect_inline("SELECT ?, ?", 11, &v, 1, &out, &len, &e), FBW_E_USAGE);
    cr_expect_null(out);
    sbdrv_val inf = {.type = SBDRV_VAL_DOUBLE, .d = 1.0 / 0.0};
    cr_expect_eq(sbdrv_dialect_inline("SELECT ?", 8, &inf, 1, &out, &len, &e), FBW_E_USAGE);
    cr_expect_null(out);
}
