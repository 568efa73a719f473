/* SPDX-License-Identifier: MIT */
/* split.c - statement splitter (split.h). The rules follow isql's: a terminator counts only outside
 * quotes and comments, and SET TERM is a client command that the server never sees. */
#include "split.h"

#include <string.h>

enum { SCAN_END, SCAN_TERM };

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_ident(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$';
}

void fbw_split_init(fbw_split *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->term[0] = ';';
    sp->term_len = 1;
    sp->line = 1;
}

void fbw_split_hold(fbw_split *sp, int on)
{
    sp->hold = on;
}

void fbw_split_feed(fbw_split *sp, const char *text, size_t len)
{
    sp->text = text;
    sp->len = len;
    sp->pos = 0;
    sp->line = 1;
    sp->rest = len;
}

/* Hold mode: the text from `pos` on is an unfinished statement; keep it for the next feed. */
static int held(fbw_split *sp, size_t pos, unsigned line, fbw_split_stmt *out)
{
    sp->rest = pos;
    sp->pos = sp->len;
    sp->line = line;
    memset(out, 0, sizeof *out);
    return FBW_OK;
}

/* Move pos to `to`, counting the newlines passed. */
static void advance(fbw_split *sp, size_t to)
{
    for (; sp->pos < to; sp->pos++)
        if (sp->text[sp->pos] == '\n')
            sp->line++;
}

/* Drop the rest of the text after an error. */
static int fail(fbw_split *sp, fbw_err *err, const char *what, unsigned line)
{
    advance(sp, sp->len);
    return fbw_err_set(err, FBW_E_BADVALUE, "%s starting at line %u", what, line);
}

/* End of a quoted string or identifier opened at pos (quote q; a doubled q stands for itself), or
 * 0 when it is not closed. */
static size_t quoted_end(const char *t, size_t n, size_t pos, char q)
{
    for (size_t i = pos + 1; i < n; i++) {
        if (t[i] != q)
            continue;
        if (i + 1 < n && t[i + 1] == q) {
            i++;
            continue;
        }
        return i + 1;
    }
    return 0;
}

/* End of q'<open>...<close>' opened at pos (t[pos+1] is the quote), or 0 when not closed. */
static size_t qstring_end(const char *t, size_t n, size_t pos)
{
    if (pos + 2 >= n)
        return 0;
    char open = t[pos + 2], close = open;
    switch (open) {
    case '(':
        close = ')';
        break;
    case '[':
        close = ']';
        break;
    case '{':
        close = '}';
        break;
    case '<':
        close = '>';
        break;
    default:
        break;
    }
    for (size_t i = pos + 3; i + 1 < n; i++)
        if (t[i] == close && t[i + 1] == '\'')
            return i + 2;
    return 0;
}

static int is_qstring(const char *t, size_t n, size_t i)
{
    return (t[i] == 'q' || t[i] == 'Q') && i + 1 < n && t[i + 1] == '\'' &&
           (i == 0 || !is_ident(t[i - 1]));
}

/* Scan one statement from pos to its terminator or the end of the text. Sets [*first, *last) to the
 * significant part (*first == *last when there is none). Returns SCAN_TERM, SCAN_END or an error.
 */
static int scan(fbw_split *sp, size_t *first, size_t *last, unsigned *line, fbw_err *err)
{
    const char *t = sp->text;
    size_t n = sp->len;
    *first = *last = sp->pos;
    int seen = 0;
    while (sp->pos < n) {
        size_t i = sp->pos;
        char c = t[i];
        if (c == '-' && i + 1 < n && t[i + 1] == '-') {
            const char *nl = memchr(t + i, '\n', n - i);
            advance(sp, nl ? (size_t)(nl - t) : n);
            continue;
        }
        if (c == '/' && i + 1 < n && t[i + 1] == '*') {
            unsigned at = sp->line;
            size_t j = i + 2;
            while (j + 1 < n && !(t[j] == '*' && t[j + 1] == '/'))
                j++;
            if (j + 1 >= n)
                return fail(sp, err, "unterminated comment", at);
            advance(sp, j + 2);
            continue;
        }
        if (n - i >= sp->term_len && memcmp(t + i, sp->term, sp->term_len) == 0) {
            advance(sp, i + sp->term_len);
            return SCAN_TERM;
        }
        if (is_space(c)) {
            advance(sp, i + 1);
            continue;
        }
        if (!seen) {
            seen = 1;
            *first = i;
            *line = sp->line;
        }
        size_t end = i + 1;
        if (c == '\'' || c == '"') {
            end = quoted_end(t, n, i, c);
            if (!end)
                return fail(sp, err,
                            c == '\'' ? "unterminated string" : "unterminated quoted identifier",
                            sp->line);
        } else if (is_qstring(t, n, i)) {
            end = qstring_end(t, n, i);
            if (!end)
                return fail(sp, err, "unterminated q'' string", sp->line);
        }
        advance(sp, end);
        *last = end;
    }
    if (!seen)
        *first = *last;
    return SCAN_END;
}

/* Case-insensitive match of word w at s[*i..n) followed by a blank; moves *i past the blanks. */
static int word(const char *s, size_t n, size_t *i, const char *w)
{
    size_t k = strlen(w);
    if (n - *i < k)
        return 0;
    for (size_t j = 0; j < k; j++) {
        char c = s[*i + j];
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        if (c != w[j])
            return 0;
    }
    if (*i + k < n && !is_space(s[*i + k]))
        return 0;
    *i += k;
    while (*i < n && is_space(s[*i]))
        (*i)++;
    return 1;
}

/* 1 when s[0..n) is SET TERM[INATOR] <x> (then the terminator is changed), 0 when it is not a
 * SET TERM, or an error when x is missing, too long or not one word. */
static int set_term(fbw_split *sp, const char *s, size_t n, unsigned line, fbw_err *err)
{
    size_t i = 0;
    if (!word(s, n, &i, "SET") || !(word(s, n, &i, "TERM") || word(s, n, &i, "TERMINATOR")))
        return 0;
    size_t start = i;
    while (i < n && !is_space(s[i]))
        i++;
    size_t len = i - start;
    while (i < n && is_space(s[i]))
        i++;
    if (len == 0 || i != n)
        return fbw_err_set(err, FBW_E_BADVALUE, "SET TERM at line %u needs one terminator", line);
    if (len > FBW_SPLIT_TERM_MAX)
        return fbw_err_set(err, FBW_E_BADVALUE,
                           "SET TERM at line %u: terminator longer than %d bytes", line,
                           FBW_SPLIT_TERM_MAX);
    memcpy(sp->term, s + start, len);
    sp->term[len] = 0;
    sp->term_len = len;
    return 1;
}

int fbw_split_next(fbw_split *sp, fbw_split_stmt *out, fbw_err *err)
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
