/* SPDX-License-Identifier: MIT */
/* Statement classes of the upstream sysbench templates and of tricky lexical cases. */
#include "classify.h"

#include <criterion/criterion.h>
#include <string.h>

static fbw_sql_class cls(const char *sql) { return fbw_classify(sql, strlen(sql)); }

/* Every run-phase template of the Debian 1.0.20 scripts (oltp_common.lua, select_random_*.lua,
 * oltp_insert.lua, bulk_insert.lua), as the scripts send them. */
Test(classify, sysbench_templates)
{
    cr_expect_eq(cls("SELECT c FROM sbtest1 WHERE id=?"), FBW_CLS_POINT_SELECT);
    cr_expect_eq(cls("SELECT c FROM sbtest3 WHERE id BETWEEN ? AND ?"), FBW_CLS_SIMPLE_RANGE);
    cr_expect_eq(cls("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?"), FBW_CLS_SUM_RANGE);
    cr_expect_eq(cls("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"), FBW_CLS_ORDER_RANGE);
    cr_expect_eq(cls("SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"),
                 FBW_CLS_DISTINCT_RANGE);
    cr_expect_eq(cls("UPDATE sbtest1 SET k=k+1 WHERE id=?"), FBW_CLS_UPDATE_INDEX);
    cr_expect_eq(cls("UPDATE sbtest1 SET c=? WHERE id=?"), FBW_CLS_UPDATE_NON_INDEX);
    cr_expect_eq(cls("DELETE FROM sbtest1 WHERE id=?"), FBW_CLS_DELETE);
    cr_expect_eq(cls("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)"), FBW_CLS_INSERT);
    cr_expect_eq(cls("INSERT INTO sbtest1 (k, c, pad) VALUES (1, '12-34', '56')"), FBW_CLS_INSERT);
    cr_expect_eq(cls("BEGIN"), FBW_CLS_BEGIN);
    cr_expect_eq(cls("COMMIT"), FBW_CLS_COMMIT);
    cr_expect_eq(cls("SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?, ?)"), FBW_CLS_POINT_SELECT);
    cr_expect_eq(cls("SELECT count(k) FROM sbtest1 WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ?"),
                 FBW_CLS_SIMPLE_RANGE);
    cr_expect_eq(cls("INSERT INTO sbtest1 VALUES(1,1),(2,2),(3,3)"), FBW_CLS_BULK_INSERT);
    cr_expect_eq(cls("INSERT INTO sbtest1(k, c, pad) VALUES(5,'a','b'),(6,'c','d')"), FBW_CLS_BULK_INSERT);
    cr_expect_eq(cls("CREATE TABLE sbtest1(id INTEGER NOT NULL, PRIMARY KEY (id))"), FBW_CLS_DDL);
    cr_expect_eq(cls("DROP TABLE IF EXISTS sbtest1"), FBW_CLS_DDL);
    cr_expect_eq(cls("CREATE INDEX k_1 ON sbtest1(k)"), FBW_CLS_DDL);
}

Test(classify, transaction_control)
{
    cr_expect_eq(cls("  begin work"), FBW_CLS_BEGIN);
    cr_expect_eq(cls("START TRANSACTION"), FBW_CLS_BEGIN);
    cr_expect_eq(cls("START something"), FBW_CLS_OTHER);
    cr_expect_eq(cls("commit work"), FBW_CLS_COMMIT);
    cr_expect_eq(cls("ROLLBACK"), FBW_CLS_ROLLBACK);
    cr_expect_eq(cls("rollback work"), FBW_CLS_ROLLBACK);
    cr_expect_eq(cls("ROLLBACK TO SAVEPOINT s1"), FBW_CLS_OTHER);
}

Test(classify, lexing)
{
    /* Keywords inside literals, comments and quoted names do not count. */
    cr_expect_eq(cls("SELECT c FROM t WHERE c = 'x BETWEEN y'"), FBW_CLS_POINT_SELECT);
    cr_expect_eq(cls("SELECT c FROM t /* BETWEEN */ WHERE id=?"), FBW_CLS_POINT_SELECT);
    cr_expect_eq(cls("-- comment BETWEEN\nSELECT c FROM t WHERE id=?"), FBW_CLS_POINT_SELECT);
    cr_expect_eq(cls("SELECT \"BETWEEN\" FROM t WHERE id=?"), FBW_CLS_POINT_SELECT);
    cr_expect_eq(cls("INSERT INTO t VALUES ('a),(b')"), FBW_CLS_INSERT);
    cr_expect_eq(cls("INSERT INTO t VALUES ('it''s', (1))"), FBW_CLS_INSERT);
    cr_expect_eq(cls("UPDATE t SET \"k\" = 1 WHERE id = 2"), FBW_CLS_UPDATE_INDEX);
    cr_expect_eq(cls("UPDATE t SET \"K\" = 1 WHERE id = 2"), FBW_CLS_UPDATE_NON_INDEX);
    cr_expect_eq(cls("UPDATE t SET c = (SELECT k FROM u WHERE k = 1) WHERE id = 2"),
                 FBW_CLS_UPDATE_NON_INDEX);
    cr_expect_eq(cls("UPDATE t SET c = 1 WHERE k = 2"), FBW_CLS_UPDATE_NON_INDEX);
    cr_expect_eq(cls("(SELECT c FROM t WHERE id=1)"), FBW_CLS_POINT_SELECT);
    cr_expect_eq(cls("SELECT COUNT(*) FROM t"), FBW_CLS_OTHER);
    cr_expect_eq(cls("EXECUTE BLOCK AS BEGIN END"), FBW_CLS_OTHER);
    cr_expect_eq(cls("SELECT 'unterminated"), FBW_CLS_OTHER);
    cr_expect_eq(cls("/* unterminated"), FBW_CLS_OTHER);
    cr_expect_eq(cls(""), FBW_CLS_OTHER);
    cr_expect_eq(fbw_classify(NULL, 5), FBW_CLS_OTHER);
    /* Length bounds the text: the rest of the buffer is never read. */
    cr_expect_eq(fbw_classify("COMMIT garbage", 3), FBW_CLS_OTHER);
    cr_expect_eq(fbw_classify("SELECT c FROM t WHERE id=1 AND k BETWEEN 1 AND 2", 26), FBW_CLS_POINT_SELECT);
}

Test(classify, names)
{
    for (int i = 0; i < FBW_CLS_COUNT; i++) {
        cr_expect_neq(strcmp(fbw_class_id(i), "?"), 0, "class %d has no id", i);
        cr_expect_eq(fbw_class_from_id(fbw_class_id(i)), i);
    }
    cr_expect_str_eq(fbw_class_id(FBW_CLS_UPDATE_NON_INDEX), "update_non_index");
    cr_expect_str_eq(fbw_class_label(FBW_CLS_POINT_SELECT), "point select");
    cr_expect_str_eq(fbw_class_id(FBW_CLS_COUNT), "?");
    cr_expect_str_eq(fbw_class_id(-1), "?");
    cr_expect_eq(fbw_class_from_id("nope"), -1);
    cr_expect_eq(fbw_class_from_id(NULL), -1);
}
