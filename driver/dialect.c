/* SPDX-License-Identifier: MIT */
/* dialect.c - SQL classification and rewriting for sysbench on Firebird (see dialect.h). */
#include "dialect.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------
 * Lexing: a cursor over the text that skips blanks and comments and reads words. */

typedef struct cur {
    const char *s;
    size_t i, n;
} cur;

static int is_word_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_' || ch == '$';
}

/* Index just past a '...' or "..." token starting at i (doubled quotes stay inside). An
 * unterminated token runs to the end: the server reports it better than we could. */
static size_t skip_quoted(const char *s, size_t i, size_t n)
{
    char q = s[i];
    for (i++; i < n; i++) {
        if (s[i] != q)
            continue;
        if (i + 1 < n && s[i + 1] == q)
            i++;
        else
            return i + 1;
    }
    return n;
}

static size_t skip_space(const char *s, size_t i, size_t n)
{
    while (i < n) {
        if (isspace((unsigned char)s[i])) {
            i++;
        } else if (s[i] == '-' && i + 1 < n && s[i + 1] == '-') {
            while (i < n && s[i] != '\n')
                i++;
        } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
            const char *e = NULL;
            for (size_t j = i + 2; j + 1 < n; j++) {
                if (s[j] == '*' && s[j + 1] == '/') {
                    e = s + j;
                    break;
                }
            }
            i = e ? (size_t)(e - s) + 2 : n;
        } else {
            break;
        }
    }
    return i;
}

/* Skip blanks; if a word follows, report its span and advance past it. */
static int next_word(cur *c, size_t *b, size_t *e)
{
    size_t i = skip_space(c->s, c->i, c->n);
    size_t j = i;
    while (j < c->n && is_word_char(c->s[j]))
        j++;
    if (j == i)
        return 0;
    *b = i;
    *e = j;
    c->i = j;
    return 1;
}

static int span_is(const char *s, size_t b, size_t e, const char *kw)
{
    size_t k = strlen(kw);
    if (e - b != k)
        return 0;
    for (size_t i = 0; i < k; i++)
        if (toupper((unsigned char)s[b + i]) != kw[i])
            return 0;
    return 1;
}

/* Consume the keyword kw (upper case) if it is the next word. */
static int accept_kw(cur *c, const char *kw)
{
    cur save = *c;
    size_t b, e;
    if (next_word(c, &b, &e) && span_is(c->s, b, e, kw))
        return 1;
    *c = save;
    return 0;
}

/* True when only blanks, comments and at most one ';' remain. */
static int at_end(const cur *c)
{
    size_t i = skip_space(c->s, c->i, c->n);
    if (i < c->n && c->s[i] == ';')
        i = skip_space(c->s, i + 1, c->n);
    return i == c->n;
}

/* Length of the text without trailing blanks and one trailing ';'. */
static size_t trimmed_end(const char *s, size_t n)
{
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    if (n > 0 && s[n - 1] == ';')
        n--;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    return n;
}

/* ------------------------------------------------------------------------------------------
 * A small growable string for building rewrites. */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
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

static void sb_puts(sbuf *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

/* Append s with every ' doubled, for embedding inside a '...' literal. */
static void sb_put_quoted_body(sbuf *b, const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\'') {
            sb_put(b, s + run, i + 1 - run);
            sb_put(b, "'", 1);
            run = i + 1;
        }
    }
    sb_put(b, s + run, n - run);
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

static const objkind *read_objkind(cur *c)
{
    cur save = *c;
    size_t b, e;
    if (next_word(c, &b, &e)) {
        for (size_t k = 0; k < sizeof OBJKINDS / sizeof OBJKINDS[0]; k++)
            if (span_is(c->s, b, e, OBJKINDS[k].word))
                return &OBJKINDS[k];
    }
    *c = save;
    return NULL;
}

/* An object name: a bare word (stored upper case by Firebird) or a "quoted" identifier (kept
 * as written, "" meaning "). Reports the source span and the name as stored in RDB$ tables. */
typedef struct objname {
    size_t b, e;       /* source span, quotes included */
    char norm[256];
    size_t norm_len;
} objname;

static int read_objname(cur *c, objname *o)
{
    size_t i = skip_space(c->s, c->i, c->n);
    o->norm_len = 0;
    if (i < c->n && c->s[i] == '"') {
        size_t end = skip_quoted(c->s, i, c->n);
        if (end == c->n && (end - i < 2 || c->s[end - 1] != '"'))
            return 0;
        for (size_t k = i + 1; k + 1 < end; k++) {
            if (c->s[k] == '"')
                k++; /* first of a doubled quote */
            if (o->norm_len + 1 >= sizeof o->norm)
                return 0;
            o->norm[o->norm_len++] = c->s[k];
        }
        o->b = i;
        o->e = end;
    } else {
        size_t j = i;
        while (j < c->n && is_word_char(c->s[j]))
            j++;
        if (j == i || j - i >= sizeof o->norm)
            return 0;
        for (size_t k = i; k < j; k++)
            o->norm[o->norm_len++] = (char)toupper((unsigned char)c->s[k]);
        o->b = i;
        o->e = j;
    }
    o->norm[o->norm_len] = '\0';
    c->i = o->e;
    return o->norm_len > 0;
}

/* IF [NOT] EXISTS(SELECT 1 FROM <rel> WHERE <col> = '<name>') THEN EXECUTE STATEMENT '<stmt>'; */
static void put_guarded(sbuf *b, const objkind *k, const objname *o, int negate,
                        const char *stmt, size_t stmt_len)
{
    sb_puts(b, negate ? "IF (NOT EXISTS(SELECT 1 FROM " : "IF (EXISTS(SELECT 1 FROM ");
    sb_puts(b, k->relation);
    sb_puts(b, " WHERE ");
    sb_puts(b, k->column);
    sb_puts(b, " = '");
    sb_put_quoted_body(b, o->norm, o->norm_len);
    sb_puts(b, "')) THEN EXECUTE STATEMENT '");
    sb_put_quoted_body(b, stmt, stmt_len);
    sb_puts(b, "';\n");
}

static int finish_rewrite(sbuf *b, fbw_sql_plan *plan, fbw_err *err)
{
    if (b->oom) {
        free(b->p);
        return fbw_err_set(err, FBW_E_NOMEM, "dialect: out of memory building a rewrite");
    }
    plan->kind = FBW_SQL_REWRITTEN;
    plan->text = b->p;
    plan->len = b->len;
    return FBW_OK;
}

/* c is just after DROP. DROP <kind> IF EXISTS name [, name ...] */
static int rewrite_drop(cur *c, fbw_sql_plan *plan, fbw_err *err)
{
    const objkind *k = read_objkind(c);
    if (k == NULL || !accept_kw(c, "IF"))
        return FBW_OK; /* an ordinary DROP: send as is */
    if (!accept_kw(c, "EXISTS"))
        return fbw_err_set(err, FBW_E_UNSUPPORTED, "dialect: expected EXISTS after DROP %s IF",
                           k->word);
    sbuf b = {0};
    sb_puts(&b, "EXECUTE BLOCK AS BEGIN\n");
    for (;;) {
        objname o;
        if (!read_objname(c, &o)) {
            free(b.p);
            return fbw_err_set(err, FBW_E_UNSUPPORTED,
                               "dialect: bad object name in DROP %s IF EXISTS at byte %zu",
                               k->word, c->i);
        }
        char stmt[300];
        int n = snprintf(stmt, sizeof stmt, "DROP %s %.*s", k->word, (int)(o.e - o.b), c->s + o.b);
        put_guarded(&b, k, &o, 0, stmt, (size_t)n < sizeof stmt ? (size_t)n : sizeof stmt - 1);
        size_t i = skip_space(c->s, c->i, c->n);
        if (i < c->n && c->s[i] == ',') {
            c->i = i + 1;
            continue;
        }
        break;
    }
    if (!at_end(c)) {
        free(b.p);
        return fbw_err_set(err, FBW_E_UNSUPPORTED,
                           "dialect: unexpected text after DROP %s IF EXISTS at byte %zu", k->word,
                           skip_space(c->s, c->i, c->n));
    }
    sb_puts(&b, "END");
    return finish_rewrite(&b, plan, err);
}

/* c is just after CREATE. CREATE TABLE|SEQUENCE|GENERATOR IF NOT EXISTS name <rest> */
static int rewrite_create(cur *c, fbw_sql_plan *plan, fbw_err *err)
{
    const objkind *k = read_objkind(c);
    if (k == NULL || !accept_kw(c, "IF"))
        return FBW_OK;
    if (!accept_kw(c, "NOT") || !accept_kw(c, "EXISTS"))
        return fbw_err_set(err, FBW_E_UNSUPPORTED,
                           "dialect: expected NOT EXISTS after CREATE %s IF", k->word);
    if (strcmp(k->word, "TABLE") != 0 && strcmp(k->word, "SEQUENCE") != 0 &&
        strcmp(k->word, "GENERATOR") != 0)
        return fbw_err_set(err, FBW_E_UNSUPPORTED,
                           "dialect: CREATE %s IF NOT EXISTS is not supported", k->word);
    objname o;
    if (!read_objname(c, &o))
        return fbw_err_set(err, FBW_E_UNSUPPORTED,
                           "dialect: bad object name in CREATE %s IF NOT EXISTS at byte %zu",
                           k->word, c->i);
    size_t end = trimmed_end(c->s, c->n);
    size_t rest = o.e < end ? end - o.e : 0;
    sbuf stmt = {0};
    sb_puts(&stmt, "CREATE ");
    sb_puts(&stmt, k->word);
    sb_puts(&stmt, " ");
    sb_put(&stmt, c->s + o.b, o.e - o.b);
    sb_put(&stmt, c->s + o.e, rest);
    sbuf b = {0};
    sb_puts(&b, "EXECUTE BLOCK AS BEGIN\n");
    if (!stmt.oom)
        put_guarded(&b, k, &o, 1, stmt.p, stmt.len);
    else
        b.oom = 1;
    sb_puts(&b, "END");
    free(stmt.p);
    return finish_rewrite(&b, plan, err);
}

/* ------------------------------------------------------------------------------------------
 * INSERT ... VALUES: locating the keyword and walking the row tuples. */

/* Find VALUES at parenthesis depth 0; *vb and *ve get its span. */
static int find_values(const char *s, size_t n, size_t *vb, size_t *ve)
{
    int depth = 0;
    size_t i = 0;
    while (i < n) {
        size_t j = skip_space(s, i, n);
        if (j != i) {
            i = j;
            continue;
        }
        char ch = s[i];
        if (ch == '\'' || ch == '"') {
            i = skip_quoted(s, i, n);
        } else if (ch == '(') {
            depth++;
            i++;
        } else if (ch == ')') {
            depth--;
            i++;
        } else if (is_word_char(ch)) {
            size_t e = i;
            while (e < n && is_word_char(s[e]))
                e++;
            if (depth == 0 && span_is(s, i, e, "VALUES")) {
                *vb = i;
                *ve = e;
                return 1;
            }
            i = e;
        } else {
            i++;
        }
    }
    return 0;
}

/* i at '(' of a tuple: index just past its matching ')', or n. */
static size_t skip_tuple(const char *s, size_t i, size_t n)
{
    int depth = 0;
    while (i < n) {
        size_t j = skip_space(s, i, n);
        if (j != i) {
            i = j;
            continue;
        }
        if (s[i] == '\'' || s[i] == '"') {
            i = skip_quoted(s, i, n);
            continue;
        }
        if (s[i] == '(')
            depth++;
        else if (s[i] == ')' && --depth == 0)
            return i + 1;
        i++;
    }
    return n;
}

/* INSERT with two or more VALUES tuples? */
static int is_multi_row_insert(const char *s, size_t n)
{
    size_t vb, ve;
    if (!find_values(s, n, &vb, &ve))
        return 0;
    size_t i = skip_space(s, ve, n);
    if (i >= n || s[i] != '(')
        return 0;
    i = skip_space(s, skip_tuple(s, i, n), n);
    if (i >= n || s[i] != ',')
        return 0;
    i = skip_space(s, i + 1, n);
    return i < n && s[i] == '(';
}

/* ------------------------------------------------------------------------------------------
 * Classification. */

static int plan_txn(cur *c, fbw_sql_kind kind, fbw_sql_plan *plan)
{
    if (kind == FBW_SQL_BEGIN) {
        if (!accept_kw(c, "WORK"))
            (void)accept_kw(c, "TRANSACTION");
    } else {
        (void)accept_kw(c, "WORK");
    }
    if (at_end(c))
        plan->kind = kind;
    return FBW_OK;
}

int fbw_dialect_plan(const char *sql, size_t len, fbw_sql_plan *plan, fbw_err *err)
{
    plan->kind = FBW_SQL_PLAIN;
    plan->ddl = 0;
    plan->text = NULL;
    plan->len = 0;
    if (len > FBW_DIALECT_MAX_SQL)
        return fbw_err_set(err, FBW_E_USAGE, "dialect: statement of %zu bytes exceeds %u", len,
                           FBW_DIALECT_MAX_SQL);
    cur c = {sql, 0, len};
    size_t b, e;
    if (!next_word(&c, &b, &e))
        return FBW_OK;
    if (span_is(sql, b, e, "BEGIN"))
        return plan_txn(&c, FBW_SQL_BEGIN, plan);
    if (span_is(sql, b, e, "START"))
        return accept_kw(&c, "TRANSACTION") ? plan_txn(&c, FBW_SQL_BEGIN, plan) : FBW_OK;
    if (span_is(sql, b, e, "COMMIT"))
        return plan_txn(&c, FBW_SQL_COMMIT, plan);
    if (span_is(sql, b, e, "ROLLBACK"))
        return plan_txn(&c, FBW_SQL_ROLLBACK, plan);
    static const char *const ddl_words[] = {"CREATE", "DROP", "ALTER", "RECREATE", "COMMENT",
                                            "DECLARE", "GRANT", "REVOKE", "SET"};
    for (size_t k = 0; k < sizeof ddl_words / sizeof ddl_words[0]; k++)
        if (span_is(sql, b, e, ddl_words[k]))
            plan->ddl = 1;
    if (span_is(sql, b, e, "SET") && accept_kw(&c, "TRANSACTION"))
        plan->ddl = 0; /* SET GENERATOR, SET STATISTICS are metadata; SET TRANSACTION is not */
    if (span_is(sql, b, e, "DROP"))
        return rewrite_drop(&c, plan, err);
    if (span_is(sql, b, e, "CREATE"))
        return rewrite_create(&c, plan, err);
    if (span_is(sql, b, e, "INSERT") && is_multi_row_insert(sql, len))
        plan->kind = FBW_SQL_BULK_INSERT;
    return FBW_OK;
}

void fbw_dialect_plan_free(fbw_sql_plan *plan)
{
    free(plan->text);
    plan->text = NULL;
    plan->len = 0;
}

/* ------------------------------------------------------------------------------------------
 * Multi-row INSERT parsing. */

typedef struct bulkp {
    const char *s;
    size_t i, n;
    fbw_bulk_insert *out;
    size_t arena_used, vals_cap, nvals;
    fbw_err *err;
} bulkp;

static int push_val(bulkp *p, const fbw_val *v)
{
    if (p->nvals == p->vals_cap) {
        size_t cap = p->vals_cap ? p->vals_cap * 2 : 64;
        fbw_val *nv = realloc(p->out->values, cap * sizeof *nv);
        if (nv == NULL)
            return fbw_err_set(p->err, FBW_E_NOMEM, "dialect: out of memory for INSERT rows");
        p->out->values = nv;
        p->vals_cap = cap;
    }
    p->out->values[p->nvals++] = *v;
    return FBW_OK;
}

static int bad_literal(bulkp *p, const char *what)
{
    return fbw_err_set(p->err, FBW_E_UNSUPPORTED,
                       "dialect: multi-row INSERT: %s at byte %zu (only literal values are "
                       "supported)", what, p->i);
}

static int parse_string(bulkp *p, fbw_val *v)
{
    char *dst = p->out->arena + p->arena_used;
    size_t k = 0, i = p->i + 1;
    for (;;) {
        if (i >= p->n)
            return bad_literal(p, "unterminated string");
        if (p->s[i] == '\'') {
            if (i + 1 < p->n && p->s[i + 1] == '\'') {
                dst[k++] = '\'';
                i += 2;
                continue;
            }
            break;
        }
        dst[k++] = p->s[i++];
    }
    v->type = FBW_VAL_TEXT;
    v->s = dst;
    v->len = k;
    p->arena_used += k;
    p->i = i + 1;
    return FBW_OK;
}

static int parse_number(bulkp *p, size_t start, fbw_val *v)
{
    const char *s = p->s;
    size_t i = p->i, digits = 0;
    int integral = 1;
    while (i < p->n && isdigit((unsigned char)s[i]))
        i++, digits++;
    if (i < p->n && s[i] == '.') {
        integral = 0;
        for (i++; i < p->n && isdigit((unsigned char)s[i]); i++)
            digits++;
    }
    if (digits == 0)
        return bad_literal(p, "malformed number");
    if (i < p->n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < p->n && (s[j] == '+' || s[j] == '-'))
            j++;
        if (j >= p->n || !isdigit((unsigned char)s[j]))
            return bad_literal(p, "malformed exponent");
        while (j < p->n && isdigit((unsigned char)s[j]))
            j++;
        i = j;
        integral = 0;
    }
    if (i < p->n && is_word_char(s[i]))
        return bad_literal(p, "malformed number");
    size_t len = i - start;
    char *dst = p->out->arena + p->arena_used;
    memcpy(dst, s + start, len);
    p->arena_used += len;
    p->i = i;
    v->s = dst;
    v->len = len;
    v->type = FBW_VAL_NUMTEXT;
    if (integral && len < 24) {
        char tmp[24];
        memcpy(tmp, dst, len);
        tmp[len] = '\0';
        errno = 0;
        char *endp;
        long long x = strtoll(tmp, &endp, 10);
        if (errno == 0 && *endp == '\0') {
            v->type = FBW_VAL_INT64;
            v->i = (int64_t)x;
        }
    }
    return FBW_OK;
}

static int parse_literal(bulkp *p, fbw_val *v)
{
    memset(v, 0, sizeof *v);
    p->i = skip_space(p->s, p->i, p->n);
    if (p->i >= p->n)
        return bad_literal(p, "missing value");
    size_t start = p->i;
    char ch = p->s[p->i];
    if (ch == '\'')
        return parse_string(p, v);
    if (ch == '+' || ch == '-') {
        p->i++;
        if (p->i >= p->n || !(isdigit((unsigned char)p->s[p->i]) || p->s[p->i] == '.'))
            return bad_literal(p, "sign without a number");
        return parse_number(p, start, v);
    }
    if (isdigit((unsigned char)ch) || ch == '.')
        return parse_number(p, start, v);
    size_t e = p->i;
    while (e < p->n && is_word_char(p->s[e]))
        e++;
    if (span_is(p->s, p->i, e, "NULL")) {
        v->type = FBW_VAL_NULL;
        p->i = e;
        return FBW_OK;
    }
    return bad_literal(p, "not a literal");
}

/* p->i at '(': one row, appended to values. Returns its arity through *ncols. */
static int parse_row(bulkp *p, unsigned *ncols)
{
    unsigned k = 0;
    p->i++;
    for (;;) {
        fbw_val v;
        int rc = parse_literal(p, &v);
        if (rc == FBW_OK)
            rc = push_val(p, &v);
        if (rc != FBW_OK)
            return rc;
        if (++k > FBW_DIALECT_MAX_COLS)
            return bad_literal(p, "too many columns");
        p->i = skip_space(p->s, p->i, p->n);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->n && p->s[p->i] == ')') {
            p->i++;
            *ncols = k;
            return FBW_OK;
        }
        return bad_literal(p, "expected ',' or ')'");
    }
}

static int build_single(fbw_bulk_insert *b, const char *s, size_t prefix_b, size_t prefix_e,
                        fbw_err *err)
{
    sbuf t = {0};
    sb_put(&t, s + prefix_b, prefix_e - prefix_b);
    sb_puts(&t, " VALUES (");
    for (unsigned k = 0; k < b->ncols; k++)
        sb_puts(&t, k ? ", ?" : "?");
    sb_puts(&t, ")");
    if (t.oom) {
        free(t.p);
        return fbw_err_set(err, FBW_E_NOMEM, "dialect: out of memory for the INSERT template");
    }
    b->single = t.p;
    b->single_len = t.len;
    b->prefix_len = prefix_e - prefix_b;
    return FBW_OK;
}

static int parse_rows(bulkp *p)
{
    for (;;) {
        p->i = skip_space(p->s, p->i, p->n);
        if (p->i >= p->n || p->s[p->i] != '(')
            return bad_literal(p, "expected '('");
        unsigned k = 0;
        int rc = parse_row(p, &k);
        if (rc != FBW_OK)
            return rc;
        if (p->out->nrows == 0)
            p->out->ncols = k;
        else if (k != p->out->ncols)
            return bad_literal(p, "rows of different lengths");
        p->out->nrows++;
        p->i = skip_space(p->s, p->i, p->n);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        cur c = {p->s, p->i, p->n};
        return at_end(&c) ? FBW_OK : bad_literal(p, "text after the last row");
    }
}

int fbw_dialect_parse_insert(const char *sql, size_t len, fbw_bulk_insert *out, fbw_err *err)
{
    memset(out, 0, sizeof *out);
    size_t vb, ve;
    if (len > FBW_DIALECT_MAX_SQL)
        return fbw_err_set(err, FBW_E_USAGE, "dialect: INSERT of %zu bytes exceeds %u", len,
                           FBW_DIALECT_MAX_SQL);
    if (!find_values(sql, len, &vb, &ve))
        return fbw_err_set(err, FBW_E_UNSUPPORTED, "dialect: INSERT without VALUES");
    out->arena = malloc(len + 1); /* decoded text is never longer than its source */
    if (out->arena == NULL)
        return fbw_err_set(err, FBW_E_NOMEM, "dialect: out of memory for INSERT rows");
    bulkp p = {sql, ve, len, out, 0, 0, 0, err};
    int rc = parse_rows(&p);
    if (rc == FBW_OK) {
        size_t pb = skip_space(sql, 0, vb), pe = vb;
        while (pe > pb && isspace((unsigned char)sql[pe - 1]))
            pe--;
        rc = build_single(out, sql, pb, pe, err);
    }
    if (rc != FBW_OK)
        fbw_dialect_bulk_free(out);
    return rc;
}

void fbw_dialect_bulk_free(fbw_bulk_insert *b)
{
    free(b->single);
    free(b->values);
    free(b->arena);
    memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------------------------------------
 * Placeholders. */

/* Calls fn(ctx, i) for every placeholder at index i; returns how many there were. */
static size_t scan_params(const char *s, size_t n, void (*fn)(void *, size_t), void *ctx)
{
    size_t count = 0, i = 0;
    while (i < n) {
        size_t j = skip_space(s, i, n);
        if (j != i) {
            i = j;
            continue;
        }
        if (s[i] == '\'' || s[i] == '"') {
            i = skip_quoted(s, i, n);
            continue;
        }
        if (s[i] == '?') {
            if (fn)
                fn(ctx, i);
            count++;
        }
        i++;
    }
    return count;
}

size_t fbw_dialect_count_params(const char *sql, size_t len)
{
    return scan_params(sql, len, NULL, NULL);
}

typedef struct inl {
    const char *s;
    const fbw_val *params;
    size_t next, done; /* next parameter; source bytes copied so far */
    sbuf out;
    int bad;
} inl;

static void put_literal(sbuf *b, const fbw_val *v, int *bad)
{
    char tmp[40];
    switch (v->type) {
    case FBW_VAL_INT64:
        snprintf(tmp, sizeof tmp, "%" PRId64, v->i);
        sb_puts(b, tmp);
        break;
    case FBW_VAL_DOUBLE:
        if (!isfinite(v->d)) {
            *bad = 1;
            break;
        }
        snprintf(tmp, sizeof tmp, "%.17g", v->d);
        sb_puts(b, tmp);
        break;
    case FBW_VAL_TEXT:
        sb_put(b, "'", 1);
        sb_put_quoted_body(b, v->s, v->len);
        sb_put(b, "'", 1);
        break;
    case FBW_VAL_NUMTEXT:
        sb_put(b, v->s, v->len);
        break;
    default:
        sb_puts(b, "NULL");
        break;
    }
}

static void inline_one(void *ctx, size_t at)
{
    inl *x = ctx;
    sb_put(&x->out, x->s + x->done, at - x->done);
    put_literal(&x->out, &x->params[x->next++], &x->bad);
    x->done = at + 1;
}

int fbw_dialect_inline(const char *sql, size_t len, const fbw_val *params, size_t n,
                       char **out, size_t *out_len, fbw_err *err)
{
    *out = NULL;
    *out_len = 0;
    size_t want = fbw_dialect_count_params(sql, len);
    if (want != n)
        return fbw_err_set(err, FBW_E_USAGE,
                           "dialect: statement has %zu placeholders but %zu values were bound",
                           want, n);
    inl x = {sql, params, 0, 0, {0}, 0};
    scan_params(sql, len, inline_one, &x);
    sb_put(&x.out, sql + x.done, len - x.done);
    if (x.bad || x.out.oom) {
        free(x.out.p);
        return x.bad ? fbw_err_set(err, FBW_E_USAGE, "dialect: cannot inline a non-finite double")
                     : fbw_err_set(err, FBW_E_NOMEM, "dialect: out of memory inlining values");
    }
    if (x.out.p == NULL) { /* empty statement: still hand back a string */
        x.out.p = calloc(1, 1);
        if (x.out.p == NULL)
            return fbw_err_set(err, FBW_E_NOMEM, "dialect: out of memory inlining values");
    }
    *out = x.out.p;
    *out_len = x.out.len;
    return FBW_OK;
}
