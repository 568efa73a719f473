/* SPDX-License-Identifier: MIT */
/* sqlkind.h - what kind of statement a SQL text is (internal: not installed).
 *
 * The one rule for transaction control, DDL and multi-row INSERT, shared by the sysbench driver's
 * dialect (what it runs itself: BEGIN, COMMIT, ROLLBACK, a bulk INSERT; what it may retry: DDL)
 * and the statement classes of its report (which refine SELECT and UPDATE further), so the report
 * names a statement by what the driver did with it. Lexical only, through sqltok.h: keywords
 * outside literals, quoted names and comments, in any case. Pure; never fails. */
#ifndef FBW_SQLKIND_H
#define FBW_SQLKIND_H

#include <stddef.h>

typedef enum fbw_stmt_kind {
    FBW_STMT_OTHER = 0,
    FBW_STMT_SELECT,      /* SELECT or WITH, also in parentheses: (SELECT ...) */
    FBW_STMT_INSERT,      /* INSERT with one VALUES row, INSERT ... SELECT */
    FBW_STMT_BULK_INSERT, /* INSERT ... VALUES (...), (...): two or more rows */
    FBW_STMT_UPDATE,
    FBW_STMT_DELETE,
    FBW_STMT_BEGIN,       /* BEGIN [WORK | TRANSACTION], START TRANSACTION */
    FBW_STMT_COMMIT,      /* COMMIT [WORK] (not COMMIT RETAIN) */
    FBW_STMT_ROLLBACK,    /* ROLLBACK [WORK] (not ROLLBACK TO SAVEPOINT, ROLLBACK RETAIN) */
    FBW_STMT_DDL          /* CREATE, ALTER, DROP, RECREATE, COMMENT, DECLARE, GRANT, REVOKE,
                           * TRUNCATE, RENAME, SET (but SET TRANSACTION): metadata changes */
} fbw_stmt_kind;

/* The kind of sql[0, len) (sql may be NULL when len is 0). Transaction control counts only when
 * nothing but blanks, comments and one ';' follows. When body is not NULL it gets the offset just
 * past the statement's first keyword (0 for FBW_STMT_OTHER), where a caller's own look starts. */
fbw_stmt_kind fbw_sql_stmt_kind(const char *sql, size_t len, size_t *body);

/* The VALUES keyword of an INSERT: the first at parenthesis depth 0 (not in a column list, a
 * literal or a quoted name). Sets [*b, *e) to its span and returns 1, or returns 0. */
int fbw_sql_find_values(const char *sql, size_t len, size_t *b, size_t *e);

#endif
