/* SPDX-License-Identifier: MIT */
/* test_agree.c - the dialect and the report's classes decide transaction control, multi-row INSERT
 * and DDL by one rule (wire/sqlkind.c): the class a statement is reported under is what the
 * driver did with it. Before, each had its own lexer and they disagreed on look-alikes. */
#include <criterion/criterion.h>

#include "classify.h"
#include "dialect.h"

#include <string.h>

Test(agree, dialect_and_classes)
{
    static const char *const sql[] = {
        "BEGIN", "begin work;", "START TRANSACTION", "BEGIN foo", "COMMIT", "COMMIT RETAIN",
        "commit work -- c", "ROLLBACK", "ROLLBACK TO SAVEPOINT s", "ROLLBACK RETAIN",
        "INSERT INTO t VALUES (1), (2)", "INSERT INTO t VALUES (1) (2)",
        "INSERT INTO t VALUES ('(1), (2)')", "INSERT INTO t SELECT * FROM u",
        "CREATE TABLE t (a INT)", "DECLARE EXTERNAL FUNCTION f", "SET GENERATOR g TO 1",
        "SET TRANSACTION", "TRUNCATE TABLE t", "SELECT 1 FROM t", "/* COMMIT */ SELECT 1 FROM t",
        "EXECUTE BLOCK AS BEGIN END", "(COMMIT)", "",
    };
    for (size_t i = 0; i < sizeof sql / sizeof sql[0]; i++) {
        sbdrv_sql_plan p;
        fbw_err e;
        fbw_err_clear(&e);
        cr_assert_eq(sbdrv_dialect_plan(sql[i], strlen(sql[i]), &p, &e), FBW_OK, "%s", sql[i]);
        sbdrv_sql_class c = sbdrv_classify(sql[i], strlen(sql[i]));
        cr_expect_eq(p.kind == SBDRV_SQL_BEGIN, c == SBDRV_CLS_BEGIN, "BEGIN? %s", sql[i]);
        cr_expect_eq(p.kind == SBDRV_SQL_COMMIT, c == SBDRV_CLS_COMMIT, "COMMIT? %s", sql[i]);
        cr_expect_eq(p.kind == SBDRV_SQL_ROLLBACK, c == SBDRV_CLS_ROLLBACK, "ROLLBACK? %s", sql[i]);
        cr_expect_eq(p.kind == SBDRV_SQL_BULK_INSERT, c == SBDRV_CLS_BULK_INSERT, "bulk? %s", sql[i]);
        cr_expect_eq(p.ddl, c == SBDRV_CLS_DDL, "DDL? %s", sql[i]);
        sbdrv_dialect_plan_free(&p);
    }
}
