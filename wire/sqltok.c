/* SPDX-License-Identifier: MIT */
/* sqltok.c - the SQL tokenizer (sqltok.h). Character classes are ASCII on purpose: the driver
 * runs inside sysbench, whose locale is not ours to rely on. */
#include "sqltok.h"

#include <string.h>

int fbw_sql_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_alpha(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int fbw_sql_is_ident(char c)
{
    return is_alpha(c) || is_digit(c) || c == '_' || c == '$';
}

void fbw_sqltok_init(fbw_sqltok *t, const char *s, size_t n)
{
    t->s = s ? s : "";
    t->n = s ? n : 0;
    t->pos = 0;
    t->term = NULL;
    t->term_len = 0;
}

void fbw_sqltok_set_term(fbw_sqltok *t, const char *term, size_t len)
{
    t->term = len ? term : NULL;
    t->term_len = len;
}

static int term_at(const fbw_sqltok *t, size_t i)
{
    return t->term_len && t->n - i >= t->term_len && memcmp(t->s + i, t->term, t->term_len) == 0;
}

/* End of a comment starting at i ("--" or a block comment); *open when a block is not closed. */
static size_t comment_end(const char *s, size_t n, size_t i, int *open)
{
    if (s[i] == '-') {
        const char *nl = memchr(s + i, '\n', n - i);
        return nl ? (size_t)(nl - s) : n;
    }
    for (size_t j = i + 2; j + 1 < n; j++)
        if (s[j] == '*' && s[j + 1] == '/')
            return j + 2;
    *open = 1;
    return n;
}

static int comment_at(const char *s, size_t n, size_t i)
{
    return i + 1 < n && ((s[i] == '-' && s[i + 1] == '-') || (s[i] == '/' && s[i + 1] == '*'));
}

/* End of '...' or "..." opened at i (a doubled quote stays inside). */
static size_t quoted_end(const char *s, size_t n, size_t i, int *open)
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
    *open = 1;
    return n;
}

/* End of q'<x>...<x>' opened at i (s[i + 1] is the quote). */
static size_t qstring_end(const char *s, size_t n, size_t i, int *open)
{
    if (i + 2 < n) {
        char o = s[i + 2];
        char c = o == '(' ? ')' : o == '[' ? ']' : o == '{' ? '}' : o == '<' ? '>' : o;
        for (size_t j = i + 3; j + 1 < n; j++)
            if (s[j] == c && s[j + 1] == '\'')
                return j + 2;
    }
    *open = 1;
    return n;
}

/* A q-string starts only where a word could: q inside a word ("seq'x'") is part of the word. */
static int qstring_at(const char *s, size_t n, size_t i)
{
    return (s[i] == 'q' || s[i] == 'Q') && i + 1 < n && s[i + 1] == '\'' &&
           (i == 0 || !fbw_sql_is_ident(s[i - 1]));
}

/* End of a word or number starting at i: stops at the terminator even inside a word. */
static size_t run_end(const fbw_sqltok *t, size_t i, int number)
{
    for (i++; i < t->n && !term_at(t, i); i++) {
        char c = t->s[i];
        if (!(fbw_sql_is_ident(c) || (number && c == '.')))
            break;
    }
    return i;
}

fbw_tok fbw_sqltok_raw(fbw_sqltok *t)
{
    const char *s = t->s;
    size_t n = t->n, i = t->pos;
    fbw_tok k = {FBW_TOK_END, i, i, 0};
    if (i >= n)
        return k;
    char c = s[i];
    if (comment_at(s, n, i)) {
        k.kind = FBW_TOK_COMMENT;
        k.e = comment_end(s, n, i, &k.open);
    } else if (term_at(t, i)) {
        k.kind = FBW_TOK_TERM;
        k.e = i + t->term_len;
    } else if (fbw_sql_is_space(c)) {
        k.kind = FBW_TOK_SPACE;
        for (k.e = i + 1; k.e < n && fbw_sql_is_space(s[k.e]) && !term_at(t, k.e); k.e++)
            ;
    } else if (c == '\'' || c == '"') {
        k.kind = c == '\'' ? FBW_TOK_STRING : FBW_TOK_QNAME;
        k.e = quoted_end(s, n, i, &k.open);
    } else if (qstring_at(s, n, i)) {
        k.kind = FBW_TOK_STRING;
        k.e = qstring_end(s, n, i, &k.open);
    } else if (is_alpha(c) || c == '_' || c == '$') {
        k.kind = FBW_TOK_WORD;
        k.e = run_end(t, i, 0);
    } else if (is_digit(c)) {
        k.kind = FBW_TOK_NUMBER;
        k.e = run_end(t, i, 1);
    } else {
        k.kind = c == '?' ? FBW_TOK_PARAM : FBW_TOK_PUNCT;
        k.e = i + 1;
    }
    t->pos = k.e;
    return k;
}

fbw_tok fbw_sqltok_next(fbw_sqltok *t)
{
    for (;;) {
        fbw_tok k = fbw_sqltok_raw(t);
        if (k.kind != FBW_TOK_SPACE && k.kind != FBW_TOK_COMMENT)
            return k;
    }
}

fbw_tok fbw_sqltok_peek(const fbw_sqltok *t)
{
    fbw_sqltok copy = *t;
    return fbw_sqltok_next(&copy);
}

int fbw_sqltok_accept(fbw_sqltok *t, const char *kw)
{
    fbw_tok k = fbw_sqltok_peek(t);
    if (!fbw_tok_is(t, &k, kw))
        return 0;
    t->pos = k.e;
    return 1;
}

int fbw_sqltok_at_end(const fbw_sqltok *t)
{
    fbw_sqltok c = *t;
    fbw_tok k = fbw_sqltok_next(&c);
    if (fbw_tok_is_char(&c, &k, ';'))
        k = fbw_sqltok_next(&c);
    return k.kind == FBW_TOK_END;
}

int fbw_tok_is(const fbw_sqltok *t, const fbw_tok *tok, const char *kw)
{
    size_t len = strlen(kw);
    if (tok->kind != FBW_TOK_WORD || tok->e - tok->b != len)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = t->s[tok->b + i];
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        if (c != kw[i])
            return 0;
    }
    return 1;
}

int fbw_tok_is_char(const fbw_sqltok *t, const fbw_tok *tok, char c)
{
    return (tok->kind == FBW_TOK_PUNCT || tok->kind == FBW_TOK_PARAM) && t->s[tok->b] == c;
}

size_t fbw_sql_skip_blank(const char *s, size_t n, size_t i)
{
    fbw_sqltok t;
    fbw_sqltok_init(&t, s, n);
    t.pos = i;
    fbw_tok k = fbw_sqltok_peek(&t);
    return k.b;
}
