/* SPDX-License-Identifier: MIT */
/* split.h - cut SQL script text into statements the way isql does: on the current terminator
 * (";" at first), outside '...' and "..." quotes (doubled quotes inside), q'<...>' literals and
 * -- / block comments; `SET TERM x` changes the terminator and is not returned.
 *
 * Pure: no I/O, no allocation; statements are views into the caller's text. It does not
 * understand SQL beyond that (no isql commands other than SET TERM, no nesting of PSQL blocks). */
#ifndef SQLTOOL_SPLIT_H
#define SQLTOOL_SPLIT_H

#include "err.h"

#include <stddef.h>

#define SQLTOOL_SPLIT_TERM_MAX 16 /* longest terminator SET TERM accepts, in bytes */

typedef struct sqltool_split {
    const char *text;
    size_t len, pos;
    unsigned line;                     /* line number at pos, 1-based */
    char term[SQLTOOL_SPLIT_TERM_MAX + 1]; /* current terminator */
    size_t term_len;
    /* Interactive input (sqltool_split_hold): a statement counts only once its terminator is there. */
    int hold;
    size_t rest; /* hold: where the unfinished text starts once next returned NULL (len: none) */
} sqltool_split;

/* One statement: sql[0..len) runs from its first to its last significant character (leading and
 * trailing blanks and comments dropped, inner ones kept), without the terminator. */
typedef struct sqltool_split_stmt {
    const char *sql; /* NULL at the end of the text */
    size_t len;
    unsigned line; /* line of its first character */
} sqltool_split_stmt;

/* Start with terminator ";" and no text. */
void sqltool_split_init(sqltool_split *sp);
/* Hold back the last statement of each text until its terminator comes (typed input): it is not
 * returned, nor is an unclosed quote or comment an error; sqltool_split_next returns NULL with
 * sp->rest at its start, and the caller feeds that text again with what comes next. */
void sqltool_split_hold(sqltool_split *sp, int on);
/* Continue with new text (the terminator set so far is kept; lines count from 1 again). The text
 * must stay valid while statements from it are used. */
void sqltool_split_feed(sqltool_split *sp, const char *text, size_t len);
/* The next statement, skipping empty ones (only blanks and comments); the text's last statement
 * needs no terminator. Returns FBW_OK (out->sql NULL when the text is used up) or
 * FBW_E_BADVALUE: an unterminated quote or comment (the rest of the text is dropped) or a SET TERM
 * without a usable terminator; err names the problem and its line. */
int sqltool_split_next(sqltool_split *sp, sqltool_split_stmt *out, fbw_err *err);

#endif
