/* SPDX-License-Identifier: MIT */
/* dialect.c - what a statement is and the DDL rewrites (see dialect.h). The statement's kind is
 * the shared rule of wire/sqlkind.h (the report's classes use it too); the words are read with the
 * one tokenizer, wire/sqltok.h. Multi-row INSERT parsing and inlining are in dialect_values.c. */
#include "dialect.h"

#include "dialect_int.h"
#include "sqlkind.h"
#include "sqltok.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------
 * A small growable string for building SQL text (dialect_int.h). */

void sbdrv_sbuf_put(sbdrv_sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (n >= SIZE_MAX / 4 - b->len) { /* the growth below must not wrap */
        b->oom = 1;
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (np == NULL) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void sbdrv_sbuf_puts(sbdrv_sbuf *b, const char *s)
{
    sbdrv_sbuf_put(b, s, strlen(s));
}

void sbdrv_sbuf_put_quoted_body(sbdrv_sbuf *b, const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\'') {
            sbdrv_sbuf_put(b, s + run, i + 1 - run);
            sbdrv_sbuf_put(b, "'", 1);
            run = i + 1;
        }
    }
    sbdrv_sbuf_put(b, s + run, n - run);
}

/* ------------------------------------------------------------------------------------------
 * DROP <object> IF EXISTS and CREATE TABLE|SEQUENCE IF NOT EXISTS. */

typedef struct objkind {
    const char *word;      /* keyword after DROP/CREATE */
    const char *relation;  /* system table holding the names */
    const char *column;    /* its name column */
} objkind;

static const objkind OBJKINDS[] = {
    {"TABLE", "RDB$RELATIONS", "RDB$RELATION_NAME"},
    {"VIEW", "RDB$RELATIONS", "RDB$RELATION_NAME"},
    {"INDEX", "RDB$INDICES", "RDB$INDEX_NAME"},
    {"SEQUENCE", "RDB$GENERATORS", "RDB$GENERATOR_NAME"},
    {"GENERATOR", "RDB$GENERATORS", "RDB$GENERATOR_NAME"},
    {"TRIGGER", "RDB$TRIGGERS", "RDB$TRIGGER_NAME"},
    {"PROCEDURE", "RDB$PROCEDURES", "RDB$PROCEDURE_NAME"},
    {"EXCEPTION", "RDB$EXCEPTIONS", "RDB$EXCEPTION_NAME"},
    {"DOMAIN", "RDB$FIELDS", "RDB$FIELD_NAME"},
};

static const objkind *read_objkind(fbw_sqltok *t)
{
    fbw_tok w = fbw_sqltok_peek(t);
    for (size_t k = 0; k < sizeof OBJKINDS / sizeof OBJKINDS[0]; k++) {
        if (fbw_tok_is(t, &w, OBJKINDS[k].word)) {
            t->pos = w.e;
            return &OBJKINDS[k];
        }
    }
    return NULL;
}

/* An object name: a bare word (stored upper case by Firebird) or a "quoted" identifier (kept
 * as written, "" meaning "). Reports the source span and the name as stored in RDB$ tables. */
typedef struct objname {
    size_t b, e;       /* source span, quotes included */
    char norm[256];
    size_t norm_len;
} objname;

static int read_objname(fbw_sqltok *t, objname *o)
{
    fbw_tok k = fbw_sqltok_peek(t);
    const char *s = t->s;
    o->norm_len = 0;
    if (k.kind == FBW_TOK_QNAME && !k.open) {
        for (size_t i = k.b + 1; i + 1 < k.e; i++) {
            if (s[i] == '"')
                i++; /* first of a doubled quote */
            if (o->norm_len + 1 >= sizeof o->norm)
                return 0;
            o->norm[o->norm_len++] = s[i];
        }
    } else if (k.kind == FBW_TOK_WORD && k.e - k.b < sizeof o->norm) {
        for (size_t i = k.b; i < k.e; i++)
            o->norm[o->norm_len++] = s[i] >= 'a' && s[i] <= 'z' ? (char)(s[i] - 'a' + 'A') : s[i];
    } else {
        return 0;
    }
    o->norm[o->norm_len] = '\0';
    o->b = k.b;
    o->e = k.e;
    t->pos = k.e;
    return o->norm_len > 0;
}

/* IF [NOT] EXISTS(SELECT 1 FROM <rel> WHERE <col> = '<name>') THEN EXECUTE STATEMENT '<stmt>'; */
static void put_guarded(sbdrv_sbuf *b, const objkind *k, const objname *o, int negate,
                        const char *stmt, size_t stmt_len)
{
    sbdrv_sbuf_puts(b, negate ? "IF (NOT EXISTS(SELECT 1 FROM " : "IF (EXISTS(SELECT 1 FROM ");
    sbdrv_sbuf_puts(b, k->relation);
    sbdrv_sbuf_puts(b, " WHERE ");
    sbdrv_sbuf_puts(b, k->column);
    sbdrv_sbuf_puts(b, " = '");
    sbdrv_sbuf_put_quoted_body(b, o->norm, o->norm_len);
    sbdrv_sbuf_puts(b, "')) THEN EXECUTE STATEMENT '");
    sbdrv_sbuf_put_quoted_body(b, stmt, stmt_len);
    sbdrv_sbuf_puts(b, "';\n");
}

static int finish_rewrite(sbdrv_sbuf *b, sbdrv_sql_plan *plan, fbw_err *err)
{
    if (b->oom) {
        free(b->p);
        return fbw_err_set(err, FBW_E_NOMEM, "dialect: out of memory building a rewrite");
    }
    plan->kind = SBDRV_SQL_REWRITTEN;
    plan->text = b->p;
    plan->len = b->len;
    return FBW_OK;
}

/* t is just after DROP. DROP <kind> IF EXISTS name [, name ...] */
static int rewrite_drop(fbw_sqltok *t, sbdrv_sql_plan *plan, fbw_err *err)
{
    const objkind *k = read_objkind(t);
    if (k == NULL || !fbw_sqltok_accept(t, "IF"))
        return FBW_OK; /* an ordinary DROP: send as is */
    if (!fbw_sqltok_accept(t, "EXISTS"))
        return fbw_err_set(err, FBW_E_UNSUPPORTED, "dialect: expected EXISTS after DROP %s IF",
                           k->word);
    sbdrv_sbuf b = {0};
    sbdrv_sbuf_puts(&b, "EXECUTE BLOCK AS BEGIN\n");
    for (;;) {
        objname o;
        if (!read_objname(t, &o)) {
            free(b.p);
            return fbw_err_set(err, FBW_E_UNSUPPORTED,
                               "dialect: bad object name in DROP %s IF EXISTS at byte %zu",
                               k->word, t->pos);
        }
        char stmt[300];
        int n = snprintf(stmt, sizeof stmt, "DROP %s %.*s", k->word, (int)(o.e - o.b), t->s + o.b);
        put_guarded(&b, k, &o, 0, stmt, (size_t)n < sizeof stmt ? (size_t)n : sizeof stmt - 1);
        fbw_tok sep = fbw_sqltok_peek(t);
        if (!fbw_tok_is_char(t, &sep, ','))
            break;
        t->pos = sep.e;
    }
    if (!fbw_sqltok_at_end(t)) {
        free(b.p);
        return fbw_err_set(err, FBW_E_UNSUPPORTED,
                           "dialect: unexpected text after DROP %s IF EXISTS at byte %zu", k->word,
                           fbw_sqltok_peek(t).b);
    }
    sbdrv_sbuf_puts(&b, "END");
    return finish_rewrite(&b, plan, err);
}

/* Length of the text without trailing blanks and one trailing ';'. */
static size_t trimmed_end(const char *s, size_t n)
{
    while (n > 0 && fbw_sql_is_space(s[n - 1]))
        n--;
    if (n > 0 && s[n - 1] == ';')
        n--;
    while (n > 0 && fbw_sql_is_space(s[n - 1]))
        n--;
    return n;
}

/* t is just after CREATE. CREATE TABLE|SEQUENCE|GENERATOR IF NOT EXISTS name <rest> */
static int rewrite_create(fbw_sqltok *t, sbdrv_sql_plan *plan, fbw_err *err)
{
    const objkind *k = read_objkind(t);
    if (k == NULL || !fbw_sqltok_accept(t, "IF"))
        return FBW_OK;
    if (!fbw_sqltok_accept(t, "NOT") || !fbw_sqltok_accept(t, "EXISTS"))
        return fbw_err_set(err, FBW_E_UNSUPPORTED,
                           "dialect: expected NOT EXISTS after CREATE %s IF", k->word);
    if (strcmp(k->word, "TABLE") != 0 && strcmp(k->word, "SEQUENCE") != 0 &&
        strcmp(k->word, "GENERATOR") != 0)
        return fbw_err_set(err, FBW_E_UNSUPPORTED,
                           "dialect: CREATE %s IF NOT EXISTS is not supported", k->word);
    objname o;
    if (!read_objname(t, &o))
        return fbw_err_set(err, FBW_E_UNSUPPORTED,
                           "dialect: bad object name in CREATE %s IF NOT EXISTS at byte %zu",
                           k->word, t->pos);
    size_t end = trimmed_end(t->s, t->n);
    size_t rest = o.e < end ? end - o.e : 0;
    sbdrv_sbuf stmt = {0};
    sbdrv_sbuf_puts(&stmt, "CREATE ");
    sbdrv_sbuf_puts(&stmt, k->word);
    sbdrv_sbuf_puts(&stmt, " ");
    sbdrv_sbuf_put(&stmt, t->s + o.b, o.e - o.b);
    sbdrv_sbuf_put(&stmt, t->s + o.e, rest);
    sbdrv_sbuf b = {0};
    sbdrv_sbuf_puts(&b, "EXECUTE BLOCK AS BEGIN\n");
    if (!stmt.oom)
        put_guarded(&b, k, &o, 1, stmt.p, stmt.len);
    else
        b.oom = 1;
    sbdrv_sbuf_puts(&b, "END");
    free(stmt.p);
    return finish_rewrite(&b, plan, err);
}

/* ------------------------------------------------------------------------------------------
 * Classification. */

int sbdrv_dialect_plan(const char *sql, size_t len, sbdrv_sql_plan *plan, fbw_err *err)
{
    plan->kind = SBDRV_SQL_PLAIN;
    plan->ddl = 0;
    plan->text = NULL;
    plan->len = 0;
    if (len > SBDRV_DIALECT_MAX_SQL)
        return fbw_err_set(err, FBW_E_USAGE, "dialect: statement of %zu bytes exceeds %u", len,
                           SBDRV_DIALECT_MAX_SQL);
    size_t body = 0;
    switch (fbw_sql_stmt_kind(sql, len, &body)) {
    case FBW_STMT_BEGIN:
        plan->kind = SBDRV_SQL_BEGIN;
        return FBW_OK;
    case FBW_STMT_COMMIT:
        plan->kind = SBDRV_SQL_COMMIT;
        return FBW_OK;
    case FBW_STMT_ROLLBACK:
        plan->kind = SBDRV_SQL_ROLLBACK;
        return FBW_OK;
    case FBW_STMT_BULK_INSERT:
        plan->kind = SBDRV_SQL_BULK_INSERT;
        return FBW_OK;
    case FBW_STMT_DDL:
        break;
    default:
        return FBW_OK;
    }
    plan->ddl = 1; /* a metadata change: the driver may retry it after a conflict */
    fbw_sqltok t;
    fbw_sqltok_init(&t, sql, len);
    fbw_tok w = fbw_sqltok_next(&t); /* the keyword that ends at body */
    if (fbw_tok_is(&t, &w, "DROP"))
        return rewrite_drop(&t, plan, err);
    if (fbw_tok_is(&t, &w, "CREATE"))
        return rewrite_create(&t, plan, err);
    return FBW_OK;
}

void sbdrv_dialect_plan_free(sbdrv_sql_plan *plan)
{
    free(plan->text);
    plan->text = NULL;
    plan->len = 0;
}
