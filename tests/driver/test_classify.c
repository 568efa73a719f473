/* SPDX-License-Identifier: MIT */
/* Statement classes of the upstream sysbench templates and of tricky lexical cases. */
#include "classify.h"

#include <criterion/criterion.h>
#include <string.h>

static sbdrv_sql_class cls(const char *sql) { return sbdrv_classify(sql, strlen(sql)); }

/* Every run-phase template of the Debian 1.0.20 scripts (oltp_common.lua, select_random_*.lua,
 * oltp_insert.lua, bulk_insert.lua), as the scripts send them. */
Test(classify, sysbench_templates)
{
    cr_expect_eq(cls("SELECT c FROM sbtest1 WHERE id=?"), SBDRV_CLS_POINT_SELECT);
    cr_expect_eq(cls("SELECT c FROM sbtest3 WHERE id BETWEEN ? AND ?"), SBDRV_CLS_SIMPLE_RANGE);
    cr_expect_eq(cls("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?"), SBDRV_CLS_SUM_RANGE);
    cr_expect_eq(cls("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"), SBDRV_CLS_ORDER_RANGE);
    cr_expect_eq(cls("SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"),
                 SBDRV_CLS_DISTINCT_RANGE);
    cr_expect_eq(cls("UPDATE sbtest1 SET k=k+1 WHERE id=?"), SBDRV_CLS_UPDATE_INDEX);
    cr_expect_eq(cls("UPDATE sbtest1 SET c=? WHERE id=?"), SBDRV_CLS_UPDATE_NON_INDEX);
    cr_expect_eq(cls("DELETE FROM sbtest1 WHERE id=?"), SBDRV_CLS_DELETE);
    cr_expect_eq(cls("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)"), SBDRV_CLS_INSERT);
    cr_expect_eq(cls("INSERT INTO sbtest1 (k, c, pad) VALUES (1, '12-34', '56')"), SBDRV_CLS_INSERT);
    cr_expect_eq(cls("BEGIN"), SBDRV_CLS_BEGIN);
    cr_expect_eq(cls("COMMIT"), SBDRV_CLS_COMMIT);
    cr_expect_eq(cls("SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?, ?)"), SBDRV_CLS_POINT_SELECT);
    cr_expect_eq(cls("SELECT count(k) FROM sbtest1 WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ?"),
                 SBDRV_CLS_SIMPLE_RANGE);
    cr_expect_eq(cls("INSERT INTO sbtest1 VALUES(1,1),(2,2),(3,3)"), SBDRV_CLS_BULK_INSERT);
    cr_expect_eq(cls("INSERT INTO sbtest1(k, c, pad) VALUES(5,'a','b'),(6,'c','d')"), SBDRV_CLS_BULK_INSERT);
    cr_expect_eq(cls("CREATE TABLE sbtest1(id INTEGER NOT NULL, PRIMARY KEY (id))"), SBDRV_CLS_DDL);
    cr_expect_eq(cls("DROP TABLE IF EXISTS sbtest1"), SBDRV_CLS_DDL);
    cr_expect_eq(cls("CREATE INDEX k_1 ON sbtest1(k)"), SBDRV_CLS_DDL);
}

Test(classify, transaction_control)
{
    cr_expect_eq(cls("  begin work"), SBDRV_CLS_BEGIN);
    cr_expect_eq(cls("START TRANSACTION"), SBDRV_CLS_BEGIN);
    cr_expect_eq(cls("START something"), SBDRV_CLS_OTHER);
    cr_expect_eq(cls("commit work"), SBDRV_CLS_COMMIT);
    cr_expect_eq(cls("ROLLBACK"), SBDRV_CLS_ROLLBACK);
    cr_expect_eq(cls("rollback work"), SBDRV_CLS_ROLLBACK);
    cr_expect_eq(cls("ROLLBACK TO SAVEPOINT s1"), SBDRV_CLS_OTHER);
}

Test(classify, lexing)
{
    /* Keywords inside literals, comments and quoted names do not count. */
    cr_expect_eq(cls("SELECT c FROM t WHERE c = 'x BETWEEN y'"), SBDRV_CLS_POINT_SELECT);
    cr_expect_eq(cls("SELECT c FROM t /* BETWEEN */ WHERE id=?"), SBDRV_CLS_POINT_SELECT);
    cr_expect_eq(cls("-- comment BETWEEN\nSELECT c FROM t WHERE id=?"), SBDRV_CLS_POINT_SELECT);
    cr_expect_eq(cls("SELECT \"BETWEEN\" FROM t WHERE id=?"), SBDRV_CLS_POINT_SELECT);
    cr_expect_eq(cls("INSERT INTO t VALUES ('a),(b')"), SBDRV_CLS_INSERT);
    cr_expect_eq(cls("INSERT INTO t VALUES ('it''s', (1))"), SBDRV_CLS_INSERT);
    cr_expect_eq(cls("UPDATE t SET \"k\" = 1 WHERE id = 2"), SBDRV_CLS_UPDATE_INDEX);
    cr_expect_eq(cls("UPDATE t SET \"K\" = 1 WHERE id = 2"), SBDRV_CLS_UPDATE_NON_INDEX);
    cr_expect_eq(cls("UPDATE t SET c = (SELECT k FROM u WHERE k = 1) WHERE id = 2"),
                 SBDRV_CLS_UPDATE_NON_INDEX);
    cr_expect_eq(cls("UPDATE t SET c = 1 WHERE k = 2"), SBDRV_CLS_UPDATE_NON_INDEX);
    cr_expect_eq(cls("(SELECT c FROM t WHERE id=1)"), SBDRV_CLS_POINT_SELECT);
    cr_expect_eq(cls("SELECT COUNT(*) FROM t"), SBDRV_CLS_OTHER);
    cr_expect_eq(cls("EXECUTE BLOCK AS BEGIN END"), SBDRV_CLS_OTHER);
    cr_expect_eq(cls("SELECT 'unterminated"), SBDRV_CLS_OTHER);
    cr_expect_eq(cls("/* unterminated"), SBDRV_CLS_OTHER);
    cr_expect_eq(cls(""), SBDRV_CLS_OTHER);
    cr_expect_eq(sbdrv_classify(NULL, 5), SBDRV_CLS_OTHER);
    /* Length bounds the text: the rest of the buffer is never read. */
    cr_expect_eq(sbdrv_classify("COMMIT garbage", 3), SBDRV_CLS_OTHER);
    cr_expect_eq(sbdrv_classify("SELECT c FROM t WHERE id=1 AND k BETWEEN 1 AND 2", 26), SBDRV_CLS_POINT_SELECT);
}

Test(classify, names)
{
    for (int i = 0; i < SBDRV_CLS_COUNT; i++) {
        cr_expect_neq(strcmp(sbdrv_class_id(i), "?"), 0, "class %d has no id", i);
        cr_expect_eq(sbdrv_class_from_id(sbdrv_class_id(i)), i);
    }
    cr_expect_str_eq(sbdrv_class_id(SBDRV_CLS_UPDATE_NON_INDEX), "update_non_index");
    cr_expect_str_eq(sbdrv_class_label(SBDRV_CLS_POINT_SELECT), "point select");
    cr_expect_str_eq(sbdrv_class_id(SBDRV_CLS_COUNT), "?");
    cr_expect_str_eq(sbdrv_class_id(-1), "?");
    cr_expect_eq(sbdrv_class_from_id("nope"), -1);
    cr_expect_eq(sbdrv_class_from_id(NULL), -1);
}
