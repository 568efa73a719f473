/* SPDX-License-Identifier: MIT */
/* classify.c - statement classes from SQL text (see classify.h).
 *
 * A tiny lexer yields words (upper-cased, truncated), single punctuation characters and opaque
 * literals; the classifier looks at the first word and then at a few keywords. */
#include "classify.h"

#include <ctype.h>
#include <string.h>

#define WORD_MAX 24

typedef enum { TOK_END = 0, TOK_WORD, TOK_NAME, TOK_PUNCT, TOK_LITERAL } tok_kind;

typedef struct tok {
    tok_kind kind;
    char word[WORD_MAX]; /* TOK_WORD: upper-cased; TOK_NAME: as written (quoted identifier) */
    char punct;
} tok;

typedef struct lexer {
    const char *s;
    size_t n, i;
} lexer;

/* Skip blanks and comments. */
static void skip_space(lexer *x)
{
    while (x->i < x->n) {
        char c = x->s[x->i];
        if (isspace((unsigned char)c)) {
            x->i++;
        } else if (c == '-' && x->i + 1 < x->n && x->s[x->i + 1] == '-') {
            while (x->i < x->n && x->s[x->i] != '\n')
                x->i++;
        } else if (c == '/' && x->i + 1 < x->n && x->s[x->i + 1] == '*') {
            x->i += 2;
            while (x->i + 1 < x->n && !(x->s[x->i] == '*' && x->s[x->i + 1] == '/'))
                x->i++;
            x->i = x->i + 2 <= x->n ? x->i + 2 : x->n;
        } else {
            return;
        }
    }
}

/* A quoted run ending at the next unescaped `q` ('' and "" escape); copies up to WORD_MAX-1. */
static void quoted(lexer *x, char q, char *out)
{
    size_t k = 0;
    x->i++;
    while (x->i < x->n) {
        char c = x->s[x->i++];
        if (c == q) {
            if (x->i < x->n && x->s[x->i] == q) {
                x->i++;
            } else {
                break;
            }
        }
        if (out && k + 1 < WORD_MAX)
            out[k++] = c;
    }
    if (out)
        out[k] = '\0';
}

static tok next(lexer *x)
{
    tok t;
    memset(&t, 0, sizeof t);
    skip_space(x);
    if (x->i >= x->n)
        return t;
    char c = x->s[x->i];
    if (c == '\'') {
        quoted(x, '\'', NULL);
        t.kind = TOK_LITERAL;
    } else if (c == '"') {
        quoted(x, '"', t.word);
        t.kind = TOK_NAME;
    } else if (isalpha((unsigned char)c) || c == '_' || c == '$') {
        size_t k = 0;
        while (x->i < x->n && (isalnum((unsigned char)x->s[x->i]) || x->s[x->i] == '_' ||
                               x->s[x->i] == '$')) {
            if (k + 1 < WORD_MAX)
                t.word[k++] = (char)toupper((unsigned char)x->s[x->i]);
            x->i++;
        }
        t.kind = TOK_WORD;
    } else if (isdigit((unsigned char)c)) {
        while (x->i < x->n && (isalnum((unsigned char)x->s[x->i]) || x->s[x->i] == '.'))
            x->i++;
        t.kind = TOK_LITERAL;
    } else {
        t.kind = TOK_PUNCT;
        t.punct = c;
        x->i++;
    }
    return t;
}

static int is_word(const tok *t, const char *w) { return t->kind == TOK_WORD && !strcmp(t->word, w); }
static int is_punct(const tok *t, char c) { return t->kind == TOK_PUNCT && t->punct == c; }

static fbw_sql_class classify_select(lexer *x)
{
    int between = 0, sum = 0, order = 0, distinct = 0, where = 0, point = 0;
    tok prev, t = next(x);
    memset(&prev, 0, sizeof prev);
    for (; t.kind != TOK_END; prev = t, t = next(x)) {
        if (is_word(&t, "BETWEEN"))
            between = 1;
        else if (is_word(&t, "DISTINCT"))
            distinct = 1;
        else if (is_word(&t, "WHERE"))
            where = 1;
        else if (is_word(&t, "BY") && is_word(&prev, "ORDER"))
            order = 1;
        else if (is_punct(&t, '(') && is_word(&prev, "SUM"))
            sum = 1;
        else if (where && (is_punct(&t, '=') || is_word(&t, "IN")))
            point = 1;
    }
    if (between)
        return distinct ? FBW_CLS_DISTINCT_RANGE
               : order  ? FBW_CLS_ORDER_RANGE
               : sum    ? FBW_CLS_SUM_RANGE
                        : FBW_CLS_SIMPLE_RANGE;
    return point ? FBW_CLS_POINT_SELECT : FBW_CLS_OTHER;
}

/* An UPDATE assigning column k (sysbench's secondary-indexed column) is an index update. */
static fbw_sql_class classify_update(lexer *x)
{
    int in_set = 0, depth = 0;
    tok prev, t = next(x);
    memset(&prev, 0, sizeof prev);
    for (; t.kind != TOK_END; prev = t, t = next(x)) {
        if (is_punct(&t, '('))
            depth++;
        else if (is_punct(&t, ')') && depth > 0)
            depth--;
        else if (depth == 0 && is_word(&t, "SET"))
            in_set = 1;
        else if (depth == 0 && is_word(&t, "WHERE"))
            break;
        else if (in_set && depth == 0 && is_punct(&t, '=') &&
                 ((prev.kind == TOK_WORD && !strcmp(prev.word, "K")) ||
                  (prev.kind == TOK_NAME && !strcmp(prev.word, "k"))))
            return FBW_CLS_UPDATE_INDEX;
    }
    return FBW_CLS_UPDATE_NON_INDEX;
}

/* INSERT ... VALUES (...) , (...) is a multi-row (bulk) insert. */
static fbw_sql_class classify_insert(lexer *x)
{
    tok t = next(x);
    while (t.kind != TOK_END && !is_word(&t, "VALUES"))
        t = next(x);
    if (t.kind == TOK_END)
        return FBW_CLS_INSERT;
    int depth = 0, rows = 0;
    for (t = next(x); t.kind != TOK_END; t = next(x)) {
        if (is_punct(&t, '(')) {
            if (depth++ == 0)
                rows++;
        } else if (is_punct(&t, ')') && depth > 0) {
            depth--;
        }
    }
    return rows > 1 ? FBW_CLS_BULK_INSERT : FBW_CLS_INSERT;
}

fbw_sql_class fbw_classify(const char *sql, size_t len)
{
    static const char *const ddl[] = {"CREATE", "ALTER", "DROP", "RECREATE", "GRANT", "REVOKE",
                                      "COMMENT", "TRUNCATE", "RENAME"};
    lexer x = {sql ? sql : "", sql ? len : 0, 0};
    tok t = next(&x);
    while (is_punct(&t, '('))
        t = next(&x); /* (SELECT ...) */
    if (t.kind != TOK_WORD)
        return FBW_CLS_OTHER;
    if (!strcmp(t.word, "SELECT") || !strcmp(t.word, "WITH"))
        return classify_select(&x);
    if (!strcmp(t.word, "UPDATE"))
        return classify_update(&x);
    if (!strcmp(t.word, "DELETE"))
        return FBW_CLS_DELETE;
    if (!strcmp(t.word, "INSERT"))
        return classify_insert(&x);
    if (!strcmp(t.word, "BEGIN"))
        return FBW_CLS_BEGIN;
    if (!strcmp(t.word, "START")) {
        tok u = next(&x);
        return is_word(&u, "TRANSACTION") ? FBW_CLS_BEGIN : FBW_CLS_OTHER;
    }
    if (!strcmp(t.word, "COMMIT"))
        return FBW_CLS_COMMIT;
    if (!strcmp(t.word, "ROLLBACK")) {
        for (tok u = next(&x); u.kind != TOK_END; u = next(&x))
            if (is_word(&u, "TO"))
                return FBW_CLS_OTHER; /* ROLLBACK TO SAVEPOINT ends no transaction */
        return FBW_CLS_ROLLBACK;
    }
    for (size_t i = 0; i < sizeof ddl / sizeof ddl[0]; i++)
        if (!strcmp(t.word, ddl[i]))
            return FBW_CLS_DDL;
    return FBW_CLS_OTHER;
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
