/* SPDX-License-Identifier: MIT */
/* split.c - statement splitter (split.h). The rules follow isql's: a terminator counts only outside
 * quotes and comments, and SET TERM is a client command that the server never sees. Quotes,
 * comments and the terminator are found by the tokenizer the driver uses too (wire/sqltok.h). */
#include "split.h"

#include "sqltok.h"

#include <string.h>

enum { SCAN_END, SCAN_TERM };

void sqltool_split_init(sqltool_split *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->term[0] = ';';
    sp->term_len = 1;
    sp->line = 1;
}

void sqltool_split_hold(sqltool_split *sp, int on)
{
    sp->hold = on;
}

void sqltool_split_feed(sqltool_split *sp, const char *text, size_t len)
{
    sp->text = text;
    sp->len = len;
    sp->pos = 0;
    sp->line = 1;
    sp->rest = len;
}

/* Hold mode: the text from `pos` on is an unfinished statement; keep it for the next feed. */
static int held(sqltool_split *sp, size_t pos, unsigned line, sqltool_split_stmt *out)
{
    sp->rest = pos;
    sp->pos = sp->len;
    sp->line = line;
    memset(out, 0, sizeof *out);
    return FBW_OK;
}

/* Move pos to `to`, counting the newlines passed. */
static void advance(sqltool_split *sp, size_t to)
{
    for (; sp->pos < to; sp->pos++)
        if (sp->text[sp->pos] == '\n')
            sp->line++;
}

/* Drop the rest of the text after an error. */
static int fail(sqltool_split *sp, fbw_err *err, const char *what, unsigned line)
{
    advance(sp, sp->len);
    return fbw_err_set(err, FBW_E_BADVALUE, "%s starting at line %u", what, line);
}

static const char *unclosed(const char *text, const fbw_tok *k)
{
    if (k->kind == FBW_TOK_COMMENT)
        return "unterminated comment";
    if (k->kind == FBW_TOK_QNAME)
        return "unterminated quoted identifier";
    return text[k->b] == '\'' ? "unterminated string" : "unterminated q'' string";
}

/* Scan one statement from pos to its terminator or the end of the text. Sets [*first, *last) to the
 * significant part (*first == *last when there is none). Returns SCAN_TERM, SCAN_END or an error.
 */
static int scan(sqltool_split *sp, size_t *first, size_t *last, unsigned *line, fbw_err *err)
{
    fbw_sqltok t;
    fbw_sqltok_init(&t, sp->text, sp->len);
    fbw_sqltok_set_term(&t, sp->term, sp->term_len);
    t.pos = sp->pos;
    *first = *last = sp->pos;
    int seen = 0;
    for (fbw_tok k = fbw_sqltok_raw(&t); k.kind != FBW_TOK_END; k = fbw_sqltok_raw(&t)) {
        unsigned at = sp->line;
        if (k.open)
            return fail(sp, err, unclosed(t.s, &k), at);
        advance(sp, k.e);
        if (k.kind == FBW_TOK_TERM)
            return SCAN_TERM;
        if (k.kind == FBW_TOK_SPACE || k.kind == FBW_TOK_COMMENT)
            continue;
        if (!seen) {
            seen = 1;
            *first = k.b;
            *line = at;
        }
        *last = k.e;
    }
    if (!seen)
        *first = *last;
    return SCAN_END;
}

/* The word w (any case) at t, followed by a blank or the end; moves past the blanks. */
static int word(fbw_sqltok *t, const char *w)
{
    fbw_sqltok at = *t;
    fbw_tok k = fbw_sqltok_raw(&at), after = fbw_sqltok_raw(&at);
    if (!fbw_tok_is(t, &k, w) || (after.kind != FBW_TOK_SPACE && after.kind != FBW_TOK_END))
        return 0;
    t->pos = after.e;
    return 1;
}

/* 1 when s[0..n) is SET TERM[INATOR] <x> (then the terminator is changed), 0 when it is not a
 * SET TERM, or an error when x is missing, too long or not one word. */
static int set_term(sqltool_split *sp, const char *s, size_t n, unsigned line, fbw_err *err)
{
    fbw_sqltok t;
    fbw_sqltok_init(&t, s, n);
    if (!word(&t, "SET") || !(word(&t, "TERM") || word(&t, "TERMINATOR")))
        return 0;
    size_t i = t.pos, start = i; /* the terminator: any bytes up to a blank */
    while (i < n && !fbw_sql_is_space(s[i]))
        i++;
    size_t len = i - start;
    while (i < n && fbw_sql_is_space(s[i]))
        i++;
    if (len == 0 || i != n)
        return fbw_err_set(err, FBW_E_BADVALUE, "SET TERM at line %u needs one terminator", line);
    if (len > SQLTOOL_SPLIT_TERM_MAX)
        return fbw_err_set(err, FBW_E_BADVALUE,
                           "SET TERM at line %u: terminator longer than %d bytes", line,
                           SQLTOOL_SPLIT_TERM_MAX);
    memcpy(sp->term, s + start, len);
    sp->term[len] = 0;
    sp->term_len = len;
    return 1;
}

int sqltool_split_next(sqltool_split *sp, sqltool_split_stmt *out, fbw_err *err)
{
    memset(out, 0, sizeof *out);
    for (;;) {
        size_t first, last, start = sp->pos;
        unsigned line = sp->line, start_line = sp->line;
        int rc = scan(sp, &first, &last, &line, err);
        if (rc < 0 && sp->hold)
            return held(sp, start, start_line, out); /* a quote or comment still open */
        if (rc < 0)
            return rc;
        if (first == last) {
            if (rc == SCAN_END)
                return FBW_OK;
            continue; /* empty statement */
        }
        if (rc == SCAN_END && sp->hold)
            return held(sp, start, start_line, out);
        int st = set_term(sp, sp->text + first, last - first, line, err);
        if (st < 0)
            return st;
        if (st == 0) {
            out->sql = sp->text + first;
            out->len = last - first;
            out->line = line;
            return FBW_OK;
        }
    }
}
