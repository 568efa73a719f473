/* SPDX-License-Identifier: MIT */
/* classify.h - the statement class of a SQL text, for the per-class round-trip report.
 *
 * Classes follow the statement templates of sysbench's upstream OLTP scripts (point select, the
 * four range selects, index / non-index update, delete, insert, transaction control, multi-row
 * insert, DDL). Classification is lexical only: keywords outside '...' literals, "..." names and
 * comments, case-insensitive. Transaction control, DDL and INSERT follow the dialect's rule
 * (wire/sqlkind.h): COMMIT RETAIN or BEGIN followed by other words is "other", as the driver
 * sends it to the server unchanged. It never changes the SQL and keeps no state. Two pseudo-classes
 * take the traffic that is not a statement execution: prepares and the session (attach, detach,
 * closing statements). */
#ifndef SBDRV_CLASSIFY_H
#define SBDRV_CLASSIFY_H

#include <stddef.h>

typedef enum sbdrv_sql_class {
    SBDRV_CLS_POINT_SELECT = 0, /* SELECT ... WHERE id = ?  (also k IN (...) point lists) */
    SBDRV_CLS_SIMPLE_RANGE,     /* SELECT ... BETWEEN, no SUM/ORDER BY/DISTINCT */
    SBDRV_CLS_SUM_RANGE,        /* SELECT SUM(...) ... BETWEEN */
    SBDRV_CLS_ORDER_RANGE,      /* SELECT ... BETWEEN ... ORDER BY */
    SBDRV_CLS_DISTINCT_RANGE,   /* SELECT DISTINCT ... BETWEEN */
    SBDRV_CLS_UPDATE_INDEX,     /* UPDATE that assigns the indexed column k */
    SBDRV_CLS_UPDATE_NON_INDEX, /* any other UPDATE */
    SBDRV_CLS_DELETE,
    SBDRV_CLS_INSERT,           /* INSERT with one row (or INSERT ... SELECT) */
    SBDRV_CLS_BEGIN,            /* BEGIN, START TRANSACTION */
    SBDRV_CLS_COMMIT,
    SBDRV_CLS_ROLLBACK,         /* ROLLBACK [WORK], not ROLLBACK TO SAVEPOINT */
    SBDRV_CLS_BULK_INSERT,      /* INSERT ... VALUES (...), (...) */
    SBDRV_CLS_DDL,              /* CREATE, ALTER, DROP, RECREATE, GRANT, REVOKE, ... */
    SBDRV_CLS_OTHER,
    SBDRV_CLS_PREPARE,          /* pseudo: preparing a statement (any class) */
    SBDRV_CLS_SESSION,          /* pseudo: attach, detach, reconnect, statement close, facts query */
    SBDRV_CLS_COUNT
} sbdrv_sql_class;

/* The class of a statement text. Never fails: unknown text is SBDRV_CLS_OTHER. */
sbdrv_sql_class sbdrv_classify(const char *sql, size_t len);
/* Stable identifier used in JSON ("point_select"); "?" for an out-of-range value. */
const char *sbdrv_class_id(int cls);
/* Human label used in the text report ("point select"). */
const char *sbdrv_class_label(int cls);
/* The class whose sbdrv_class_id is `id`, or -1. */
int sbdrv_class_from_id(const char *id);

#endif
