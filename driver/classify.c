/* SPDX-License-Identifier: MIT */
/* classify.c - statement classes from SQL text (see classify.h).
 *
 * The statement's kind (transaction control, DDL, single or multi-row INSERT, ...) is the shared
 * rule of wire/sqlkind.h, the same the dialect uses; only SELECT and UPDATE are looked at further
 * here, token by token (wire/sqltok.h). */
#include "classify.h"

#include "sqlkind.h"
#include "sqltok.h"

#include <string.h>

static sbdrv_sql_class classify_select(fbw_sqltok *t)
{
    int between = 0, sum = 0, order = 0, distinct = 0, where = 0, point = 0;
    fbw_tok prev = {FBW_TOK_END, 0, 0, 0};
    for (fbw_tok k = fbw_sqltok_next(t); k.kind != FBW_TOK_END; prev = k, k = fbw_sqltok_next(t)) {
        if (fbw_tok_is(t, &k, "BETWEEN"))
            between = 1;
        else if (fbw_tok_is(t, &k, "DISTINCT"))
            distinct = 1;
        else if (fbw_tok_is(t, &k, "WHERE"))
            where = 1;
        else if (fbw_tok_is(t, &k, "BY") && fbw_tok_is(t, &prev, "ORDER"))
            order = 1;
        else if (fbw_tok_is_char(t, &k, '(') && fbw_tok_is(t, &prev, "SUM"))
            sum = 1;
        else if (where && (fbw_tok_is_char(t, &k, '=') || fbw_tok_is(t, &k, "IN")))
            point = 1;
    }
    if (between)
        return distinct ? SBDRV_CLS_DISTINCT_RANGE
               : order  ? SBDRV_CLS_ORDER_RANGE
               : sum    ? SBDRV_CLS_SUM_RANGE
                        : SBDRV_CLS_SIMPLE_RANGE;
    return point ? SBDRV_CLS_POINT_SELECT : SBDRV_CLS_OTHER;
}

/* Column k, sysbench's secondary-indexed column: the word k in any case, or exactly "k". */
static int is_column_k(const fbw_sqltok *t, const fbw_tok *k)
{
    if (k->kind == FBW_TOK_QNAME)
        return k->e - k->b == 3 && t->s[k->b + 1] == 'k';
    return fbw_tok_is(t, k, "K");
}

/* An UPDATE assigning column k is an index update. */
static sbdrv_sql_class classify_update(fbw_sqltok *t)
{
    int in_set = 0, depth = 0;
    fbw_tok prev = {FBW_TOK_END, 0, 0, 0};
    for (fbw_tok k = fbw_sqltok_next(t); k.kind != FBW_TOK_END; prev = k, k = fbw_sqltok_next(t)) {
        if (fbw_tok_is_char(t, &k, '('))
            depth++;
        else if (fbw_tok_is_char(t, &k, ')') && depth > 0)
            depth--;
        else if (depth == 0 && fbw_tok_is(t, &k, "SET"))
            in_set = 1;
        else if (depth == 0 && fbw_tok_is(t, &k, "WHERE"))
            break;
        else if (in_set && depth == 0 && fbw_tok_is_char(t, &k, '=') && is_column_k(t, &prev))
            return SBDRV_CLS_UPDATE_INDEX;
    }
    return SBDRV_CLS_UPDATE_NON_INDEX;
}

sbdrv_sql_class sbdrv_classify(const char *sql, size_t len)
{
    size_t body = 0;
    fbw_sqltok t;
    fbw_sqltok_init(&t, sql, len);
    switch (fbw_sql_stmt_kind(t.s, t.n, &body)) {
    case FBW_STMT_SELECT:
        t.pos = body;
        return classify_select(&t);
    case FBW_STMT_UPDATE:
        t.pos = body;
        return classify_update(&t);
    case FBW_STMT_DELETE: return SBDRV_CLS_DELETE;
    case FBW_STMT_INSERT: return SBDRV_CLS_INSERT;
    case FBW_STMT_BULK_INSERT: return SBDRV_CLS_BULK_INSERT;
    case FBW_STMT_BEGIN: return SBDRV_CLS_BEGIN;
    case FBW_STMT_COMMIT: return SBDRV_CLS_COMMIT;
    case FBW_STMT_ROLLBACK: return SBDRV_CLS_ROLLBACK;
    case FBW_STMT_DDL: return SBDRV_CLS_DDL;
    default: return SBDRV_CLS_OTHER;
    }
}

static const struct {
    const char *id, *label;
} NAMES[SBDRV_CLS_COUNT] = {
    [SBDRV_CLS_POINT_SELECT] = {"point_select", "point select"},
    [SBDRV_CLS_SIMPLE_RANGE] = {"simple_range", "simple range"},
    [SBDRV_CLS_SUM_RANGE] = {"sum_range", "sum range"},
    [SBDRV_CLS_ORDER_RANGE] = {"order_range", "order range"},
    [SBDRV_CLS_DISTINCT_RANGE] = {"distinct_range", "distinct range"},
    [SBDRV_CLS_UPDATE_INDEX] = {"update_index", "update index"},
    [SBDRV_CLS_UPDATE_NON_INDEX] = {"update_non_index", "update non-index"},
    [SBDRV_CLS_DELETE] = {"delete", "delete"},
    [SBDRV_CLS_INSERT] = {"insert", "insert"},
    [SBDRV_CLS_BEGIN] = {"begin", "begin"},
    [SBDRV_CLS_COMMIT] = {"commit", "commit"},
    [SBDRV_CLS_ROLLBACK] = {"rollback", "rollback"},
    [SBDRV_CLS_BULK_INSERT] = {"bulk_insert", "bulk insert"},
    [SBDRV_CLS_DDL] = {"ddl", "DDL"},
    [SBDRV_CLS_OTHER] = {"other", "other"},
    [SBDRV_CLS_PREPARE] = {"prepare", "(prepare)"},
    [SBDRV_CLS_SESSION] = {"session", "(session)"},
};

const char *sbdrv_class_id(int cls)
{
    return cls >= 0 && cls < SBDRV_CLS_COUNT ? NAMES[cls].id : "?";
}

const char *sbdrv_class_label(int cls)
{
    return cls >= 0 && cls < SBDRV_CLS_COUNT ? NAMES[cls].label : "?";
}

int sbdrv_class_from_id(const char *id)
{
    for (int i = 0; id && i < SBDRV_CLS_COUNT; i++)
        if (!strcmp(NAMES[i].id, id))
            return i;
    return -1;
}
