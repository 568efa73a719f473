/* SPDX-License-Identifier: MIT */
/* dialect_values.c - the values side of the dialect (see dialect.h): a multi-row INSERT split
 * into literal rows, and placeholders counted and replaced by literals. Tokens come from the one
 * tokenizer (wire/sqltok.h); the literals themselves are decoded here. */
#include "dialect.h"

#include "dialect_int.h"
#include "sqlkind.h"
#include "sqltok.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------
 * Multi-row INSERT parsing. */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

typedef struct bulkp {
    const char *s;
    size_t i, n;
    sbdrv_bulk_insert *out;
    size_t arena_used, vals_cap, nvals;
    fbw_err *err;
} bulkp;

static int push_val(bulkp *p, const sbdrv_val *v)
{
    if (p->nvals == p->vals_cap) {
        size_t cap = p->vals_cap ? p->vals_cap * 2 : 64;
        sbdrv_val *nv = realloc(p->out->values, cap * sizeof *nv);
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

static int parse_string(bulkp *p, sbdrv_val *v)
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
    v->type = SBDRV_VAL_TEXT;
    v->s = dst;
    v->len = k;
    p->arena_used += k;
    p->i = i + 1;
    return FBW_OK;
}

static int parse_number(bulkp *p, size_t start, sbdrv_val *v)
{
    const char *s = p->s;
    size_t i = p->i, digits = 0;
    int integral = 1;
    while (i < p->n && is_digit(s[i]))
        i++, digits++;
    if (i < p->n && s[i] == '.') {
        integral = 0;
        for (i++; i < p->n && is_digit(s[i]); i++)
            digits++;
    }
    if (digits == 0)
        return bad_literal(p, "malformed number");
    if (i < p->n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < p->n && (s[j] == '+' || s[j] == '-'))
            j++;
        if (j >= p->n || !is_digit(s[j]))
            return bad_literal(p, "malformed exponent");
        while (j < p->n && is_digit(s[j]))
            j++;
        i = j;
        integral = 0;
    }
    if (i < p->n && fbw_sql_is_ident(s[i]))
        return bad_literal(p, "malformed number");
    size_t len = i - start;
    char *dst = p->out->arena + p->arena_used;
    memcpy(dst, s + start, len);
    p->arena_used += len;
    p->i = i;
    v->s = dst;
    v->len = len;
    v->type = SBDRV_VAL_NUMTEXT;
    if (integral && len < 24) {
        char tmp[24];
        memcpy(tmp, dst, len);
        tmp[len] = '\0';
        errno = 0;
        char *endp;
        long long x = strtoll(tmp, &endp, 10);
        if (errno == 0 && *endp == '\0') {
            v->type = SBDRV_VAL_INT64;
            v->i = (int64_t)x;
        }
    }
    return FBW_OK;
}

static int parse_literal(bulkp *p, sbdrv_val *v)
{
    memset(v, 0, sizeof *v);
    p->i = fbw_sql_skip_blank(p->s, p->n, p->i);
    if (p->i >= p->n)
        return bad_literal(p, "missing value");
    size_t start = p->i;
    char ch = p->s[p->i];
    if (ch == '\'')
        return parse_string(p, v);
    if (ch == '+' || ch == '-') {
        p->i++;
        if (p->i >= p->n || !(is_digit(p->s[p->i]) || p->s[p->i] == '.'))
            return bad_literal(p, "sign without a number");
        return parse_number(p, start, v);
    }
    if (is_digit(ch) || ch == '.')
        return parse_number(p, start, v);
    fbw_sqltok t;
    fbw_sqltok_init(&t, p->s, p->n);
    t.pos = p->i;
    fbw_tok w = fbw_sqltok_raw(&t);
    if (fbw_tok_is(&t, &w, "NULL")) {
        v->type = SBDRV_VAL_NULL;
        p->i = w.e;
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
        sbdrv_val v;
        int rc = parse_literal(p, &v);
        if (rc == FBW_OK)
            rc = push_val(p, &v);
        if (rc != FBW_OK)
            return rc;
        if (++k > SBDRV_DIALECT_MAX_COLS)
            return bad_literal(p, "too many columns");
        p->i = fbw_sql_skip_blank(p->s, p->n, p->i);
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

static int build_single(sbdrv_bulk_insert *b, const char *s, size_t prefix_b, size_t prefix_e,
                        fbw_err *err)
{
    sbdrv_sbuf t = {0};
    sbdrv_sbuf_put(&t, s + prefix_b, prefix_e - prefix_b);
    sbdrv_sbuf_puts(&t, " VALUES (");
    for (unsigned k = 0; k < b->ncols; k++)
        sbdrv_sbuf_puts(&t, k ? ", ?" : "?");
    sbdrv_sbuf_puts(&t, ")");
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
        p->i = fbw_sql_skip_blank(p->s, p->n, p->i);
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
        p->i = fbw_sql_skip_blank(p->s, p->n, p->i);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        fbw_sqltok t;
        fbw_sqltok_init(&t, p->s, p->n);
        t.pos = p->i;
        return fbw_sqltok_at_end(&t) ? FBW_OK : bad_literal(p, "text after the last row");
    }
}

int sbdrv_dialect_parse_insert(const char *sql, size_t len, sbdrv_bulk_insert *out, fbw_err *err)
{
    memset(out, 0, sizeof *out);
    size_t vb, ve;
    if (len > SBDRV_DIALECT_MAX_SQL)
        return fbw_err_set(err, FBW_E_USAGE, "dialect: INSERT of %zu bytes exceeds %u", len,
                           SBDRV_DIALECT_MAX_SQL);
    if (!fbw_sql_find_values(sql, len, &vb, &ve))
        return fbw_err_set(err, FBW_E_UNSUPPORTED, "dialect: INSERT without VALUES");
    out->arena = malloc(len + 1); /* decoded text is never longer than its source */
    if (out->arena == NULL)
        return fbw_err_set(err, FBW_E_NOMEM, "dialect: out of memory for INSERT rows");
    bulkp p = {sql, ve, len, out, 0, 0, 0, err};
    int rc = parse_rows(&p);
    if (rc == FBW_OK) {
        size_t pb = fbw_sql_skip_blank(sql, vb, 0), pe = vb;
        while (pe > pb && fbw_sql_is_space(sql[pe - 1]))
            pe--;
        rc = build_single(out, sql, pb, pe, err);
    }
    if (rc != FBW_OK)
        sbdrv_dialect_bulk_free(out);
    return rc;
}

void sbdrv_dialect_bulk_free(sbdrv_bulk_insert *b)
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
    size_t count = 0;
    fbw_sqltok t;
    fbw_sqltok_init(&t, s, n);
    for (fbw_tok k = fbw_sqltok_next(&t); k.kind != FBW_TOK_END; k = fbw_sqltok_next(&t)) {
        if (k.kind != FBW_TOK_PARAM)
            continue;
        if (fn)
            fn(ctx, k.b);
        count++;
    }
    return count;
}

size_t sbdrv_dialect_count_params(const char *sql, size_t len)
{
    return scan_params(sql, len, NULL, NULL);
}

typedef struct inl {
    const char *s;
    const sbdrv_val *params;
    size_t next, done; /* next parameter; source bytes copied so far */
    sbdrv_sbuf out;
    int bad;
} inl;

static void put_literal(sbdrv_sbuf *b, const sbdrv_val *v, int *bad)
{
    char tmp[40];
    switch (v->type) {
    case SBDRV_VAL_INT64:
        snprintf(tmp, sizeof tmp, "%" PRId64, v->i);
        sbdrv_sbuf_puts(b, tmp);
        break;
    case SBDRV_VAL_DOUBLE:
        if (!isfinite(v->d)) {
            *bad = 1;
            break;
        }
        snprintf(tmp, sizeof tmp, "%.17g", v->d);
        sbdrv_sbuf_puts(b, tmp);
        break;
    case SBDRV_VAL_TEXT:
        sbdrv_sbuf_put(b, "'", 1);
        sbdrv_sbuf_put_quoted_body(b, v->s, v->len);
        sbdrv_sbuf_put(b, "'", 1);
        break;
    case SBDRV_VAL_NUMTEXT:
        sbdrv_sbuf_put(b, v->s, v->len);
        break;
    default:
        sbdrv_sbuf_puts(b, "NULL");
        break;
    }
}

static void inline_one(void *ctx, size_t at)
{
    inl *x = ctx;
    sbdrv_sbuf_put(&x->out, x->s + x->done, at - x->done);
    put_literal(&x->out, &x->params[x->next++], &x->bad);
    x->done = at + 1;
}

int sbdrv_dialect_inline(const char *sql, size_t len, const sbdrv_val *params, size_t n,
                       char **out, size_t *out_len, fbw_err *err)
{
    *out = NULL;
    *out_len = 0;
    size_t want = sbdrv_dialect_count_params(sql, len);
    if (want != n)
        return fbw_err_set(err, FBW_E_USAGE,
                           "dialect: statement has %zu placeholders but %zu values were bound",
                           want, n);
    inl x = {sql, params, 0, 0, {0}, 0};
    scan_params(sql, len, inline_one, &x);
    sbdrv_sbuf_put(&x.out, sql + x.done, len - x.done);
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
