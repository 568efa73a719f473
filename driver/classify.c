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

static fbw_sql_class classify_select(fbw_sqltok *t)
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
        return distinct ? FBW_CLS_DISTINCT_RANGE
               : order  ? FBW_CLS_ORDER_RANGE
               : sum    ? FBW_CLS_SUM_RANGE
                        : FBW_CLS_SIMPLE_RANGE;
    return point ? FBW_CLS_POINT_SELECT : FBW_CLS_OTHER;
}

/* Column k, sysbench's secondary-indexed column: the word k in any case, or exactly "k". */
static int is_column_k(const fbw_sqltok *t, const fbw_tok *k)
{
    if (k->kind == FBW_TOK_QNAME)
        return k->e - k->b == 3 && t->s[k->b + 1] == 'k';
    return fbw_tok_is(t, k, "K");
}

/* An UPDATE assigning column k is an index update. */
static fbw_sql_class classify_update(fbw_sqltok *t)
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
            return FBW_CLS_UPDATE_INDEX;
    }
    return FBW_CLS_UPDATE_NON_INDEX;
}

fbw_sql_class fbw_classify(const char *sql, size_t len)
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
    case FBW_STMT_DELETE: return FBW_CLS_DELETE;
    case FBW_STMT_INSERT: return FBW_CLS_INSERT;
    case FBW_STMT_BULK_INSERT: return FBW_CLS_BULK_INSERT;
    case FBW_STMT_BEGIN: return FBW_CLS_BEGIN;
    case FBW_STMT_COMMIT: return FBW_CLS_COMMIT;
    case FBW_STMT_ROLLBACK: return FBW_CLS_ROLLBACK;
    case FBW_STMT_DDL: return FBW_CLS_DDL;
    default: return FBW_CLS_OTHER;
    }
}

static const struct {
    const char *id, *label;
} NAMES[FBW_CLS_COUNT] = {
    [FBW_CLS_POINT_SELECT] = {"point_select", "point select"},
    [FBW_CLS_SIMPLE_RANGE] = {"simple_range", "simple range"},
    [FBW_CLS_SUM_RANGE] = {"sum_range", "sum range"},
    [FBW_CLS_ORDER_RANGE] = {"order_range", "order range"},
    [FBW_CLS_DISTINCT_RANGE] = {"distinct_range", "distinct range"},
    [FBW_CLS_UPDATE_INDEX] = {"update_index", "update index"},
    [FBW_CLS_UPDATE_NON_INDEX] = {"update_non_index", "update non-index"},
    [FBW_CLS_DELETE] = {"delete", "delete"},
    [FBW_CLS_INSERT] = {"insert", "insert"},
    [FBW_CLS_BEGIN] = {"begin", "begin"},
    [FBW_CLS_COMMIT] = {"commit", "commit"},
    [FBW_CLS_ROLLBACK] = {"rollback", "rollback"},
    [FBW_CLS_BULK_INSERT] = {"bulk_insert", "bulk insert"},
    [FBW_CLS_DDL] = {"ddl", "DDL"},
    [FBW_CLS_OTHER] = {"other", "other"},
    [FBW_CLS_PREPARE] = {"prepare", "(prepare)"},
    [FBW_CLS_SESSION] = {"session", "(session)"},
};

const char *fbw_class_id(int cls)
{
    return cls >= 0 && cls < FBW_CLS_COUNT ? NAMES[cls].id : "?";
}

const char *fbw_class_label(int cls)
{
    return cls >= 0 && cls < FBW_CLS_COUNT ? NAMES[cls].label : "?";
}

int fbw_class_from_id(const char *id)
{
    for (int i = 0; id && i < FBW_CLS_COUNT; i++)
        if (!strcmp(NAMES[i].id, id))
            return i;
    return -1;
}
