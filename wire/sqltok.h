/* SPDX-License-Identifier: MIT */
/* sqltok.h - the one SQL tokenizer of fbwire (internal: not installed).
 *
 * Used by the sysbench driver's dialect (driver/dialect.c), the statement classes of its report
 * (driver/classify.c), fbwire-sql's statement splitter (tools/fbwire-sql/split.c) and the
 * statement kinds of sqlkind.h. It knows what all of them must agree on:
 *   - blanks (ASCII space, tab, newline, CR, FF, VT) and comments: -- to the end of the line, and
 *     block comments (not nested);
 *   - '...' strings ('' inside stands for '), Firebird's q'<x>...<x>' strings (q or Q at a word
 *     boundary; ( [ { < close with ) ] } >), "..." identifiers ("" inside stands for ");
 *   - words (a letter, _ or $, then letters, digits, _ and $), numbers (a digit, then letters,
 *     digits and dots: 1, 1.5, 1e3; not validated), the ? placeholder, single other bytes;
 *   - optionally a statement terminator (isql's SET TERM): outside quotes and comments it ends a
 *     statement wherever it starts, even inside a word or number.
 * Pure and bounds-checked: never reads outside [0, n), never allocates, never fails. Any byte,
 * NUL included, is some token. An unclosed quote or block comment runs to the end of the text and
 * is flagged `open`: the splitter reports it, the others leave it to the server. */
#ifndef FBW_SQLTOK_H
#define FBW_SQLTOK_H

#include <stddef.h>

typedef enum fbw_tok_kind {
    FBW_TOK_END = 0, /* no more text */
    FBW_TOK_SPACE,   /* a run of blanks */
    FBW_TOK_COMMENT, /* -- comment (without its newline) or block comment */
    FBW_TOK_WORD,    /* keyword or unquoted identifier */
    FBW_TOK_NUMBER,
    FBW_TOK_STRING,  /* '...' or q'...' */
    FBW_TOK_QNAME,   /* "..." */
    FBW_TOK_PARAM,   /* ? */
    FBW_TOK_TERM,    /* the terminator given to fbw_sqltok_set_term */
    FBW_TOK_PUNCT    /* any other single byte */
} fbw_tok_kind;

typedef struct fbw_tok {
    fbw_tok_kind kind;
    size_t b, e; /* the token is text[b, e) */
    int open;    /* STRING, QNAME, COMMENT: not closed before the end of the text */
} fbw_tok;

typedef struct fbw_sqltok {
    const char *s;
    size_t n, pos;     /* next token starts at pos */
    const char *term;  /* terminator, not NUL-terminated; NULL: none */
    size_t term_len;
} fbw_sqltok;

/* Start at the beginning of s[0, n) with no terminator (s may be NULL when n is 0). */
void fbw_sqltok_init(fbw_sqltok *t, const char *s, size_t n);
/* Recognise term[0, len) as FBW_TOK_TERM from now on (len 0: none). term must outlive t. */
void fbw_sqltok_set_term(fbw_sqltok *t, const char *term, size_t len);
/* The token at t->pos, blanks and comments included; moves past it. */
fbw_tok fbw_sqltok_raw(fbw_sqltok *t);
/* The next token that is not a blank or a comment; moves past it. */
fbw_tok fbw_sqltok_next(fbw_sqltok *t);
/* The next token as fbw_sqltok_next would return it, without moving. */
fbw_tok fbw_sqltok_peek(const fbw_sqltok *t);

/* Move past the next token when it is the word kw (upper case); 1 when it was. */
int fbw_sqltok_accept(fbw_sqltok *t, const char *kw);
/* 1 when only blanks, comments and at most one ';' remain after t->pos (t does not move). */
int fbw_sqltok_at_end(const fbw_sqltok *t);

/* 1 when tok is the word kw (kw upper case; the text's case does not matter). */
int fbw_tok_is(const fbw_sqltok *t, const fbw_tok *tok, const char *kw);
/* 1 when tok is the single byte c (punctuation or placeholder). */
int fbw_tok_is_char(const fbw_sqltok *t, const fbw_tok *tok, char c);

/* Index of the first byte at or after i that is not a blank or in a comment (n at the end). */
size_t fbw_sql_skip_blank(const char *s, size_t n, size_t i);
/* SQL's blank characters (ASCII, whatever the locale). */
int fbw_sql_is_space(char c);
/* A byte that may continue an unquoted identifier: ASCII letter, digit, _ or $. */
int fbw_sql_is_ident(char c);

#endif
