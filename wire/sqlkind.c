/* SPDX-License-Identifier: MIT */
/* sqlkind.c - statement kinds (sqlkind.h) over the tokenizer. */
#include "sqlkind.h"

#include "sqltok.h"

/* t just past BEGIN, COMMIT or ROLLBACK: the optional noise words, then the end. */
static fbw_stmt_kind txn(fbw_sqltok *t, fbw_stmt_kind kind)
{
    if (!fbw_sqltok_accept(t, "WORK") && kind == FBW_STMT_BEGIN)
        (void)fbw_sqltok_accept(t, "TRANSACTION");
    return fbw_sqltok_at_end(t) ? kind : FBW_STMT_OTHER;
}

/* t just past '(' of a tuple: just past its matching ')' (or at the end). */
static void skip_tuple(fbw_sqltok *t)
{
    for (int depth = 1; depth > 0;) {
        fbw_tok k = fbw_sqltok_next(t);
        if (k.kind == FBW_TOK_END)
            return;
        if (fbw_tok_is_char(t, &k, '('))
            depth++;
        else if (fbw_tok_is_char(t, &k, ')'))
            depth--;
    }
}

int fbw_sql_find_values(const char *sql, size_t len, size_t *b, size_t *e)
{
    fbw_sqltok t;
    fbw_sqltok_init(&t, sql, len);
    int depth = 0;
    for (fbw_tok k = fbw_sqltok_next(&t); k.kind != FBW_TOK_END; k = fbw_sqltok_next(&t)) {
        if (fbw_tok_is_char(&t, &k, '('))
            depth++;
        else if (fbw_tok_is_char(&t, &k, ')'))
            depth--;
        else if (depth == 0 && fbw_tok_is(&t, &k, "VALUES")) {
            *b = k.b;
            *e = k.e;
            return 1;
        }
    }
    return 0;
}

/* An INSERT whose VALUES (...) is followed by , ( is multi-row. */
static fbw_stmt_kind insert(const fbw_sqltok *whole)
{
    size_t vb, ve;
    if (!fbw_sql_find_values(whole->s, whole->n, &vb, &ve))
        return FBW_STMT_INSERT;
    fbw_sqltok tt = *whole, *t = &tt;
    t->pos = ve;
    fbw_tok k = fbw_sqltok_next(t);
    if (!fbw_tok_is_char(t, &k, '('))
        return FBW_STMT_INSERT;
    skip_tuple(t);
    k = fbw_sqltok_next(t);
    if (!fbw_tok_is_char(t, &k, ','))
        return FBW_STMT_INSERT;
    k = fbw_sqltok_next(t);
    return fbw_tok_is_char(t, &k, '(') ? FBW_STMT_BULK_INSERT : FBW_STMT_INSERT;
}

static const char *const DDL_WORDS[] = {"CREATE", "ALTER",  "DROP",     "RECREATE", "COMMENT",
                                        "DECLARE", "GRANT", "REVOKE", "TRUNCATE", "RENAME"};

static fbw_stmt_kind by_first_word(fbw_sqltok *t, const fbw_tok *w)
{
    if (fbw_tok_is(t, w, "SELECT") || fbw_tok_is(t, w, "WITH"))
        return FBW_STMT_SELECT;
    if (fbw_tok_is(t, w, "INSERT"))
        return insert(t);
    if (fbw_tok_is(t, w, "UPDATE"))
        return FBW_STMT_UPDATE;
    if (fbw_tok_is(t, w, "DELETE"))
        return FBW_STMT_DELETE;
    if (fbw_tok_is(t, w, "BEGIN"))
        return txn(t, FBW_STMT_BEGIN);
    if (fbw_tok_is(t, w, "START"))
        return fbw_sqltok_accept(t, "TRANSACTION") ? txn(t, FBW_STMT_BEGIN) : FBW_STMT_OTHER;
    if (fbw_tok_is(t, w, "COMMIT"))
        return txn(t, FBW_STMT_COMMIT);
    if (fbw_tok_is(t, w, "ROLLBACK"))
        return txn(t, FBW_STMT_ROLLBACK);
    /* SET GENERATOR and SET STATISTICS change metadata; SET TRANSACTION does not */
    if (fbw_tok_is(t, w, "SET"))
        return fbw_sqltok_accept(t, "TRANSACTION") ? FBW_STMT_OTHER : FBW_STMT_DDL;
    for (size_t i = 0; i < sizeof DDL_WORDS / sizeof DDL_WORDS[0]; i++)
        if (fbw_tok_is(t, w, DDL_WORDS[i]))
            return FBW_STMT_DDL;
    return FBW_STMT_OTHER;
}

fbw_stmt_kind fbw_sql_stmt_kind(const char *sql, size_t len, size_t *body)
{
    fbw_sqltok t;
    fbw_sqltok_init(&t, sql, len);
    fbw_tok w = fbw_sqltok_next(&t);
    int parens = 0;
    for (; fbw_tok_is_char(&t, &w, '('); w = fbw_sqltok_next(&t))
        parens = 1; /* (SELECT ...) */
    fbw_stmt_kind kind = FBW_STMT_OTHER;
    if (w.kind == FBW_TOK_WORD) {
        size_t after = w.e;
        kind = by_first_word(&t, &w);
        if (parens && kind != FBW_STMT_SELECT)
            kind = FBW_STMT_OTHER;
        if (body)
            *body = kind == FBW_STMT_OTHER ? 0 : after;
    } else if (body) {
        *body = 0;
    }
    return kind;
}
